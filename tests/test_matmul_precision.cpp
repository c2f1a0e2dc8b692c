// matmul's MatmulPrecision: tf32 permits TF32 for float32 on a GPU and changes nothing else.
// - CPU (no TF32 there): matmul(a, b, tf32) gives the bits of matmul(a, b) for every float dtype and
//   an integer one, on OpenBLAS's path and on xp's loop, and keeps the float32 answer of an input
//   that TF32 would round (so a CPU that rounded to TF32 fails here);
// - GPU (MatmulPrecisionGpu.*): an input whose float32 and TF32 answers are both exact and differ
//   gives the float32 answer by default and the TF32 one with tf32, also for lazy, transposed and
//   broadcast-batched operands; float16, bfloat16, float64 and int32 give the same bits either way.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/blas.hpp"
#include "backend/cpu/linalg.hpp"
#include "backend/cuda/cublas.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

namespace cpu = xp::detail::cpu;
namespace cb = xp::detail::cublas;
using xp::Array;
using xp::DType;
using xp::MatmulPrecision;

const xp_test::ProcessCache g_process_cache;  // this process's kernel cache

// The elements' bytes as stored (float16 and bfloat16 included), for bit-for-bit comparisons.
std::vector<std::uint8_t> raw_bytes(const Array& a) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(a.size()) * xp::itemsize(a.dtype()));
  a.copy_to_host(a.dtype(), out.data(), static_cast<std::size_t>(a.size()));
  return out;
}

// The input built so that TF32 changes the answer and float32 does not round at all: A all
// x = 1 + 2^-14, B all 1, k = 256. Every partial sum, in any order, with or without FMA, is
// j * x = j + j * 2^-14 for some j <= 256, which float32's 24 bits hold (2^8 down to 2^-14): a float32
// matmul gives 256 + 2^-6 exactly in every entry. TF32 keeps 10 bits after the point, so x becomes 1
// (2^-14 is below half a TF32 unit, 2^-11, whether TF32 rounds or truncates) and the answer is 256
// exactly. (1 + 2^-20 would not do: its float32 answer depends on the order of the sums.)
constexpr std::int64_t kK = 256;
const float kX = 1.0f + std::ldexp(1.0f, -14);
const float kFloat32Answer = 256.0f + std::ldexp(1.0f, -6);
const float kTf32Answer = 256.0f;

// The reference, computed another way: the exact sum in double of k copies of x.
TEST(MatmulPrecision, TheChosenInputIsExactInFloat32AndDiffersInTf32) {
  double sum = 0;
  for (std::int64_t i = 0; i < kK; ++i) sum += static_cast<double>(kX);
  EXPECT_EQ(sum, static_cast<double>(kFloat32Answer));
  EXPECT_EQ(static_cast<double>(static_cast<float>(sum)), sum) << "float32 holds the exact answer";
  EXPECT_NE(kFloat32Answer, kTf32Answer);
}

// Counts the entries of c that are not `want`; the first few are reported.
int count_not(const Array& c, float want, const std::string& what) {
  const std::vector<float> v = c.to_vector<float>();
  int bad = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == want) continue;
    if (++bad <= 3)
      ADD_FAILURE() << what << ": entry " << i << " is " << std::hexfloat << v[i] << ", expected " << want
                    << std::defaultfloat;
  }
  return bad;
}

TEST(MatmulPrecision, Names) {
  EXPECT_EQ(xp::to_string(MatmulPrecision::float32), "float32");
  EXPECT_EQ(xp::to_string(MatmulPrecision::tf32), "tf32");
}

TEST(MatmulPrecision, AnUnknownValueIsAValueError) {
  const Array a = xp::ones({2, 3}, DType::float32, xp::Device::cpu());
  const Array b = xp::ones({3, 2}, DType::float32, xp::Device::cpu());
  EXPECT_THROW((void)xp::matmul(a, b, static_cast<MatmulPrecision>(7)), xp::ValueError);
}

// Sets the CPU gemm path for one scope.
class PathScope {
 public:
  explicit PathScope(cpu::GemmPath p) { cpu::set_gemm_path(p); }
  ~PathScope() { cpu::set_gemm_path(cpu::GemmPath::automatic); }
};

const char* path_name(cpu::GemmPath p) {
  return p == cpu::GemmPath::blas ? "blas" : p == cpu::GemmPath::loop ? "loop" : "automatic";
}

TEST(MatmulPrecision, CpuTf32KeepsTheFloat32Answer) {
  const xp::Device cpu_dev = xp::Device::cpu();
  for (const auto path : {cpu::GemmPath::automatic, cpu::GemmPath::loop, cpu::GemmPath::blas}) {
    if (path == cpu::GemmPath::blas && !cpu::blas_info().loaded) {
      if (xp_test::env_flag("XP_TEST_REQUIRE_OPENBLAS")) ADD_FAILURE() << "no OpenBLAS: " << cpu::blas_info().error;
      continue;  // the other paths are still checked
    }
    PathScope scope(path);
    const Array a = xp::full({40, kK}, static_cast<double>(kX), DType::float32, cpu_dev);
    const Array b = xp::ones({kK, 24}, DType::float32, cpu_dev);
    const std::string where = std::string(" (") + path_name(path) + ")";
    EXPECT_EQ(count_not(xp::matmul(a, b), kFloat32Answer, "default" + where), 0);
    EXPECT_EQ(count_not(xp::matmul(a, b, MatmulPrecision::float32), kFloat32Answer, "float32" + where), 0);
    EXPECT_EQ(count_not(xp::matmul(a, b, MatmulPrecision::tf32), kFloat32Answer, "tf32" + where), 0);
    // A lazy operand, evaluated by matmul, keeps it too.
    EXPECT_EQ(count_not(xp::matmul(a * 1.0f, b, MatmulPrecision::tf32), kFloat32Answer, "tf32, lazy" + where), 0);
  }
}

// Random operands (matrices, a broadcast batch, a 1-D operand): tf32 gives the default's bits on the
// CPU for every float dtype and an integer one, on each gemm path.
TEST(MatmulPrecision, CpuTf32GivesTheSameBitsAsTheDefault) {
  const xp::Device cpu_dev = xp::Device::cpu();
  struct Shapes {
    xp::Shape a, b;
  };
  const Shapes shapes[] = {{{37, 300}, {300, 41}}, {{2, 1, 5, 70}, {3, 70, 4}}, {{90}, {90, 6}}, {{8, 33}, {33}}};
  for (const auto path : {cpu::GemmPath::automatic, cpu::GemmPath::loop, cpu::GemmPath::blas}) {
    if (path == cpu::GemmPath::blas && !cpu::blas_info().loaded) {
      if (xp_test::env_flag("XP_TEST_REQUIRE_OPENBLAS")) ADD_FAILURE() << "no OpenBLAS: " << cpu::blas_info().error;
      continue;  // the other paths are still checked
    }
    PathScope scope(path);
    for (const DType t : {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int32}) {
      xp::random::Generator g(41);
      for (const Shapes& s : shapes) {
        const bool f = xp::kind(t) == xp::DTypeKind::floating;
        const Array a = f ? g.normal(s.a, t, 0, 1, cpu_dev) : g.integers(-1000, 1000, s.a, t, cpu_dev);
        const Array b = f ? g.normal(s.b, t, 0, 1, cpu_dev) : g.integers(-1000, 1000, s.b, t, cpu_dev);
        const Array want = xp::matmul(a, b);
        const Array got = xp::matmul(a, b, MatmulPrecision::tf32);
        ASSERT_EQ(got.dtype(), want.dtype());
        ASSERT_EQ(xp::Shape(got.shape().begin(), got.shape().end()),
                  xp::Shape(want.shape().begin(), want.shape().end()));
        EXPECT_EQ(raw_bytes(got), raw_bytes(want))
            << xp::name(t) << " " << path_name(path) << ", a " << s.a.size() << "-d, b " << s.b.size() << "-d";
      }
    }
  }
}

// ---- On a GPU ---------------------------------------------------------------------------------------

// Skips (or fails under XP_TEST_REQUIRE_GPU=1) without cuBLAS: the CPU fallback computes float32.
#define REQUIRE_CUBLAS()                                                                                   \
  do {                                                                                                     \
    if (cb::library().api == nullptr)                                                                      \
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_GPU",                                                               \
                      "no cuBLAS (the CPU computes GPU matmul, in float32): " + cb::unavailable_reason()); \
  } while (0)

// What the environment says about TF32 (cuBLAS obeys NVIDIA_TF32_OVERRIDE=0 over any compute type).
std::string tf32_environment() {
  const char* v = std::getenv("NVIDIA_TF32_OVERRIDE");
  return v == nullptr ? std::string("NVIDIA_TF32_OVERRIDE unset") : "NVIDIA_TF32_OVERRIDE=" + std::string(v);
}

// The default stays in float32 and tf32 reaches cuBLAS as CUBLAS_COMPUTE_32F_FAST_TF32: a 256 x 256 x
// 256 gemm is what cuBLAS runs on TF32 tensor cores once permitted (H100/H200 and every GPU since
// Ampere), so every entry is the TF32 answer. Each expectation fails if the precision is lost on the
// way (the tf32 ones) or applied without being asked for (the default ones).
TEST(MatmulPrecisionGpu, Tf32RoundsTheInputsFloat32DoesNot) {
  XP_REQUIRE_GPU();
  REQUIRE_CUBLAS();
  const xp::Device gpu = xp::Device::cuda(0);
  const Array a = xp::full({kK, kK}, static_cast<double>(kX), DType::float32, gpu).copy().eval();
  const Array b = xp::ones({kK, kK}, DType::float32, gpu).copy().eval();
  EXPECT_EQ(count_not(xp::matmul(a, b), kFloat32Answer, "default"), 0);
  EXPECT_EQ(count_not(xp::matmul(a, b, MatmulPrecision::float32), kFloat32Answer, "float32"), 0);
  EXPECT_EQ(count_not(xp::matmul(a, b, MatmulPrecision::tf32), kTf32Answer, "tf32 (" + tf32_environment() + ")"), 0);
  // The default again after a tf32 call: nothing of tf32 stays on the cuBLAS handle.
  EXPECT_EQ(count_not(xp::matmul(a, b), kFloat32Answer, "default after tf32"), 0);
}

// Lazy operands (evaluated inside matmul), transposed ones (cuBLAS's transpose flags) and a batch
// broadcast with stride 0 (one strided-batched call) keep the precision.
TEST(MatmulPrecisionGpu, LazyTransposedAndBatchedOperandsKeepThePrecision) {
  XP_REQUIRE_GPU();
  REQUIRE_CUBLAS();
  const xp::Device gpu = xp::Device::cuda(0);
  const Array a = xp::full({kK, kK}, static_cast<double>(kX), DType::float32, gpu).copy().eval();
  const Array b = xp::ones({kK, kK}, DType::float32, gpu).copy().eval();
  const std::string env = " (" + tf32_environment() + ")";
  EXPECT_EQ(count_not(xp::matmul(a * 1.0f, b), kFloat32Answer, "default, lazy a"), 0);
  EXPECT_EQ(count_not(xp::matmul(a * 1.0f, b, MatmulPrecision::tf32), kTf32Answer, "tf32, lazy a" + env), 0);
  EXPECT_EQ(count_not(xp::matmul(a, b + 0.0f, MatmulPrecision::tf32), kTf32Answer, "tf32, lazy b" + env), 0);
  // b.T() @ a.T(): both column-major views of the same values, entries again sums of 256 x's.
  EXPECT_EQ(count_not(xp::matmul(b.T(), a.T()), kFloat32Answer, "default, transposed"), 0);
  EXPECT_EQ(count_not(xp::matmul(b.T(), a.T(), MatmulPrecision::tf32), kTf32Answer, "tf32, transposed" + env), 0);
  const Array batch = xp::broadcast_to(a, {3, kK, kK});
  EXPECT_EQ(count_not(xp::matmul(batch, b), kFloat32Answer, "default, batched"), 0);
  EXPECT_EQ(count_not(xp::matmul(batch, b, MatmulPrecision::tf32), kTf32Answer, "tf32, batched" + env), 0);
}

// tf32 concerns float32 only: float16, bfloat16 (computed in float32), float64 and int32 (xp's exact
// kernel) give the default's bits. A compute type that followed the precision here would change
// them, or be refused by cuBLAS (FAST_TF32 with 16-bit data), and fail the test.
TEST(MatmulPrecisionGpu, OtherDtypesIgnoreTf32) {
  XP_REQUIRE_GPU();
  REQUIRE_CUBLAS();
  const xp::Device gpu = xp::Device::cuda(0);
  for (const DType t : {DType::float16, DType::bfloat16, DType::float64, DType::int32}) {
    xp::random::Generator g(43);
    const bool f = xp::kind(t) == xp::DTypeKind::floating;
    const Array a = f ? g.normal({2, 64, 256}, t, 0, 1, gpu) : g.integers(-1000, 1000, {2, 64, 256}, t, gpu);
    const Array b = f ? g.normal({256, 80}, t, 0, 1, gpu) : g.integers(-1000, 1000, {256, 80}, t, gpu);
    EXPECT_EQ(raw_bytes(xp::matmul(a, b, MatmulPrecision::tf32)), raw_bytes(xp::matmul(a, b))) << xp::name(t);
  }
}

}  // namespace
