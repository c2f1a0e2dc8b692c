// Random numbers on a CUDA device (white-box: src/backend/cuda/random_source).
//
// Without a GPU: the embedded philox.hpp is the file itself; philox.hpp compiles under NVRTC (every
// core function called from a kernel); the kernel of every (kind, dtype) compiles with NVRTC for
// sm_75 and sm_90; dtypes the CPU refuses are refused; the launch plan covers every element.
// With a GPU (CudaRandomGpu*): uniform floats and integers are the CPU's bit for bit for every dtype,
// for lengths that are not multiples of 4 and for large ones, and normals are within philox.hpp's
// bounds of the CPU's (kNormalUlpBoundCpu + kNormalUlpBoundGpu ulp; 16-bit floats within one ulp).
//
// Every test process gets its own empty kernel cache folder, as in test_compile.cpp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cuda/random_source.hpp"
#include "backend/philox.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::DType;
using xp::detail::RandomKind;
namespace cr = xp::detail::cuda;

const xp_test::ProcessCache g_process_cache;  // this process's kernel cache

constexpr DType kFloats[] = {DType::float16, DType::bfloat16, DType::float32, DType::float64};
constexpr DType kIntegers[] = {DType::int8,  DType::int16,  DType::int32,  DType::int64,
                               DType::uint8, DType::uint16, DType::uint32, DType::uint64};

struct Combo {
  RandomKind kind;
  DType dtype;
};
std::vector<Combo> every_combo() {
  std::vector<Combo> v;
  for (DType t : kFloats) v.push_back({RandomKind::uniform, t});
  for (DType t : kFloats) v.push_back({RandomKind::normal, t});
  for (DType t : kIntegers) v.push_back({RandomKind::integers, t});
  return v;
}

xp::ProgramOptions options() {
  xp::ProgramOptions o;
  o.name = "xp_random.cu";
  o.options = cr::random_nvrtc_options();
  o.headers = {cr::philox_header()};
  return o;
}

}  // namespace

TEST(CudaRandom, EmbeddedPhiloxIsTheSourceFile) {
  std::ifstream f(std::string(XP_SOURCE_DIR) + "/src/backend/philox.hpp", std::ios::binary);
  ASSERT_TRUE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const auto [name, text] = cr::philox_header();
  EXPECT_EQ(name, "xp_philox.hpp");
  EXPECT_EQ(text, ss.str()) << "the build embeds an outdated copy: reconfigure";
}

TEST(CudaRandom, PhiloxHeaderCompilesUnderNvrtc) {
  XP_REQUIRE_NVRTC();
  // Every core function of philox.hpp called from device code.
  const std::string source = R"(#include "xp_philox.hpp"
namespace px = xp::philox;
extern "C" __global__ void every_function(float* f, double* d, unsigned short* h, unsigned long long* u,
                                          unsigned long long seed, unsigned long long stream) {
  const unsigned long long i = threadIdx.x;
  f[i] = px::uniform_float32(seed, stream, i) + px::normal_float32(seed, stream, i);
  d[i] = px::uniform_float64(seed, stream, i) + px::normal_float64(seed, stream, i);
  h[i] = px::uniform_float16_bits(seed, stream, i) ^ px::uniform_bfloat16_bits(seed, stream, i);
  u[i] = px::integer_offset(seed, stream, i, 10) + px::integer_offset(seed, stream, i, 1ull << 40) +
         px::stream_word(seed, stream, i);
}
)";
  xp::Program p(source, options());
  const xp::CompileStats s = p.compile(xp::Arch::sm(90));
  EXPECT_EQ(s.target, "sm_90");
  const auto names = p.kernel_names(xp::Arch::sm(90));
  EXPECT_NE(std::find(names.begin(), names.end(), "every_function"), names.end());
}

TEST(CudaRandom, EveryKernelCompilesWithNvrtc) {
  XP_REQUIRE_NVRTC();
  for (const Combo& c : every_combo()) {
    const cr::RandomKernel k = cr::random_kernel(c.kind, c.dtype);
    for (int arch : {75, 90}) {
      xp::Program p(k.source, options());
      try {
        p.compile(xp::Arch::sm(arch));
      } catch (const xp::CompileError& e) {
        ADD_FAILURE() << k.kernel_name << " for sm_" << arch << ":\n" << e.log() << "\n" << k.source;
        continue;
      }
      const auto names = p.kernel_names(xp::Arch::sm(arch));
      EXPECT_NE(std::find(names.begin(), names.end(), k.kernel_name), names.end()) << k.kernel_name;
    }
  }
}

TEST(CudaRandom, KernelsAreDistinctPerKindAndDtype) {
  std::vector<std::string> names;
  for (const Combo& c : every_combo()) names.push_back(cr::random_kernel(c.kind, c.dtype).kernel_name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_EQ(cr::random_kernel(RandomKind::normal, DType::bfloat16).kernel_name, "xp_random_normal_bfloat16");
}

TEST(CudaRandom, RefusesWhatTheCpuRefuses) {
  EXPECT_THROW(cr::random_kernel(RandomKind::integers, DType::float32), xp::ValueError);
  EXPECT_THROW(cr::random_kernel(RandomKind::integers, DType::bool_), xp::ValueError);
  EXPECT_THROW(cr::random_kernel(RandomKind::uniform, DType::int32), xp::ValueError);
  EXPECT_THROW(cr::random_kernel(RandomKind::normal, DType::bool_), xp::ValueError);
  // fill_random checks before touching the device (the view is never read).
  std::int64_t shape[1] = {4}, strides[1] = {8};
  xp::detail::View v;
  v.dtype = DType::int64;
  v.ndim = 1;
  v.shape = shape;
  v.strides = strides;
  xp::detail::RandomRequest r;
  r.kind = RandomKind::integers;
  r.low = 5;
  r.high = 5;
  EXPECT_THROW(cr::fill_random(xp::Device::cuda(0), 0, r, v), xp::ValueError);
  r.high = 6;
  strides[0] = 16;  // not C-contiguous
  EXPECT_THROW(cr::fill_random(xp::Device::cuda(0), 0, r, v), xp::ValueError);
}

TEST(CudaRandom, LaunchPlan) {
  EXPECT_EQ(cr::elements_per_block(RandomKind::uniform, DType::float32, 0), 4u);
  EXPECT_EQ(cr::elements_per_block(RandomKind::normal, DType::float16, 0), 4u);
  EXPECT_EQ(cr::elements_per_block(RandomKind::uniform, DType::float64, 0), 2u);
  EXPECT_EQ(cr::elements_per_block(RandomKind::normal, DType::float64, 0), 2u);
  EXPECT_EQ(cr::elements_per_block(RandomKind::integers, DType::int8, 1), 2u);
  EXPECT_EQ(cr::elements_per_block(RandomKind::integers, DType::int64, 1ull << 32), 2u);
  EXPECT_EQ(cr::elements_per_block(RandomKind::integers, DType::int64, (1ull << 32) + 1), 1u);
  // One thread per Philox block, grid capped at 16 blocks per multiprocessor.
  EXPECT_EQ(cr::random_grid(0, 4, 132), 1u);
  EXPECT_EQ(cr::random_grid(1, 4, 132), 1u);
  EXPECT_EQ(cr::random_grid(4 * 256, 4, 132), 1u);
  EXPECT_EQ(cr::random_grid(4 * 256 + 1, 4, 132), 2u);
  EXPECT_EQ(cr::random_grid(2 * 256 * 10, 2, 132), 10u);
  EXPECT_EQ(cr::random_grid(std::int64_t{1} << 40, 1, 132), 132u * 16);
  EXPECT_EQ(cr::random_grid(std::int64_t{1} << 40, 1, 0), 16u);
}

// ---- on a GPU: against the CPU backend ----

namespace {

const xp::Device kCpu = xp::Device::cpu();

// The index of the first differing element, or -1.
std::int64_t first_difference(const xp::Array& gpu, const xp::Array& cpu) {
  const xp::Array g = gpu.to_device(kCpu);
  const std::size_t item = cpu.itemsize();
  const auto* a = static_cast<const unsigned char*>(g.data());
  const auto* b = static_cast<const unsigned char*>(cpu.data());
  for (std::int64_t i = 0; i < cpu.size(); ++i) {
    if (std::memcmp(a + i * item, b + i * item, item) != 0) return i;
  }
  return -1;
}

const std::int64_t kLengths[] = {1, 2, 3, 5, 7, 1001, 4099, (1 << 20) + 3};

}  // namespace

TEST(CudaRandomGpu, UniformFloatsAreTheCpusBitForBit) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  for (DType t : kFloats) {
    for (std::int64_t n : kLengths) {
      xp::random::Generator g(1234), c(1234);
      for (int draw = 0; draw < 2; ++draw) {  // successive draws take successive streams
        const xp::Array a = g.uniform({n}, t, 0, 1, gpu);
        const xp::Array b = c.uniform({n}, t, 0, 1, kCpu);
        EXPECT_EQ(a.device(), gpu);
        EXPECT_EQ(first_difference(a, b), -1) << xp::name(t) << " n=" << n << " draw " << draw;
      }
    }
  }
}

TEST(CudaRandomGpu, IntegersAreTheCpusBitForBit) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  struct Range {
    std::int64_t low, high;
  };
  const std::int64_t big = std::int64_t{1} << 62;
  for (DType t : kIntegers) {
    const bool is_signed = xp::kind(t) == xp::DTypeKind::signed_integer;
    const int bits = static_cast<int>(xp::itemsize(t)) * 8;
    std::vector<Range> ranges = {{0, 1}, {0, 10}, {3, 100}};
    if (is_signed) ranges.push_back({-5, 5});
    if (bits < 64) {
      const std::int64_t lo = is_signed ? -(std::int64_t{1} << (bits - 1)) : 0;
      const std::int64_t hi = is_signed ? (std::int64_t{1} << (bits - 1)) : (std::int64_t{1} << bits);
      ranges.push_back({lo, hi});  // the whole dtype: 2^32 for 32 bits, still two words
    } else {
      ranges.push_back({is_signed ? -big : 0, big});                               // four words
      ranges.push_back({0, (std::int64_t{1} << 32) + 1});                          // the first four-word range
      ranges.push_back({is_signed ? std::numeric_limits<std::int64_t>::min() : 0,  // widest
                        std::numeric_limits<std::int64_t>::max()});
    }
    for (const Range& r : ranges) {
      for (std::int64_t n : kLengths) {
        xp::random::Generator g(99), c(99);
        const xp::Array a = g.integers(r.low, r.high, {n}, t, gpu);
        const xp::Array b = c.integers(r.low, r.high, {n}, t, kCpu);
        EXPECT_EQ(first_difference(a, b), -1) << xp::name(t) << " [" << r.low << ", " << r.high << ") n=" << n;
      }
    }
  }
}

namespace {

// Distance in units of the last place of the larger magnitude (binade crossings counted fairly).
template <class T>
double ulps(T a, T b) {
  if (a == b) return 0;
  const T m = std::max(std::fabs(a), std::fabs(b));
  const T ulp = std::nextafter(m, std::numeric_limits<T>::infinity()) - m;
  return static_cast<double>(std::fabs(a - b) / ulp);
}

// Distance between two 16-bit floats' bit patterns as ordered integers.
int ordered_distance(std::uint16_t a, std::uint16_t b) {
  auto key = [](std::uint16_t x) { return (x & 0x8000) ? -static_cast<int>(x & 0x7FFF) : static_cast<int>(x); };
  return std::abs(key(a) - key(b));
}

}  // namespace

TEST(CudaRandomGpu, NormalsAreWithinTheBoundsOfTheCpus) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  const double bound = xp::philox::kNormalUlpBoundCpu + xp::philox::kNormalUlpBoundGpu;
  for (DType t : kFloats) {
    for (std::int64_t n : kLengths) {
      xp::random::Generator g(7), c(7);
      const xp::Array a = g.normal({n}, t, 0, 1, gpu).to_device(kCpu);
      const xp::Array b = c.normal({n}, t, 0, 1, kCpu);
      double worst = 0;
      std::int64_t at = -1;
      for (std::int64_t i = 0; i < n; ++i) {
        double e = 0;
        if (t == DType::float32) {
          e = ulps(static_cast<const float*>(a.data())[i], static_cast<const float*>(b.data())[i]);
        } else if (t == DType::float64) {
          e = ulps(static_cast<const double*>(a.data())[i], static_cast<const double*>(b.data())[i]);
        } else {
          e = ordered_distance(static_cast<const std::uint16_t*>(a.data())[i],
                               static_cast<const std::uint16_t*>(b.data())[i]);
        }
        if (e > worst) {
          worst = e;
          at = i;
        }
      }
      const double allowed = (t == DType::float32 || t == DType::float64) ? bound : 1.0;
      EXPECT_LE(worst, allowed) << xp::name(t) << " n=" << n << " at element " << at;
    }
  }
}

TEST(CudaRandomGpu, LargeDraws) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  const std::int64_t n = (std::int64_t{1} << 25) + 5;  // 128 MiB of float32
  xp::random::Generator g(2024), c(2024);
  EXPECT_EQ(first_difference(g.uniform({n}, DType::float32, 0, 1, gpu), c.uniform({n}, DType::float32, 0, 1, kCpu)),
            -1);
  EXPECT_EQ(first_difference(g.integers(-1000, 1000, {n}, DType::int32, gpu),
                             c.integers(-1000, 1000, {n}, DType::int32, kCpu)),
            -1);
  const xp::Array a = g.normal({n}, DType::float32, 0, 1, gpu).to_device(kCpu);
  const xp::Array b = c.normal({n}, DType::float32, 0, 1, kCpu);
  const double bound = xp::philox::kNormalUlpBoundCpu + xp::philox::kNormalUlpBoundGpu;
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    worst = std::max(worst, ulps(static_cast<const float*>(a.data())[i], static_cast<const float*>(b.data())[i]));
  }
  EXPECT_LE(worst, bound);
}
