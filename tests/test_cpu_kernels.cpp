// CUDA C++ kernels run on the CPU (docs/cpu-kernels.md): Program::kernel(name, Device::cpu())
// compiles the source with the machine's C++ compiler and xp's prelude, and Kernel::launch runs it
// on xp's CPU threads. Real compiles with the machine's c++ (XP_TEST_REQUIRE_HOST_CXX=1 makes a
// missing compiler a failure rather than a skip). Each kernel's result is compared with one
// computed here another way, bit for bit where the operations are exact. Also: the kernels of
// xp's GPU kernel tests (test_kernels_gpu.cpp, test_kernel_arrays.cpp) run on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu_test_kernels.hpp"
#include "jit/cpu_source.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

// A kernel cache of this process's own (set before xp reads the environment), except in a child
// case that is to share its parent's (XP_TEST_KEEP_CACHE_DIR=1).
struct OwnCache {
  xp_test::TempDir dir;
  OwnCache() {
    if (!xp_test::env_flag("XP_TEST_KEEP_CACHE_DIR")) ::setenv("XP_CACHE_DIR", (dir / "kernels").c_str(), 1);
  }
} g_cache;

#define XP_REQUIRE_HOST_CXX()                                                                                  \
  do {                                                                                                         \
    const HostCompilerInfo info_ = host_compiler_info();                                                       \
    if (!info_.available) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_HOST_CXX", "no host C++ compiler: " + info_.error); \
  } while (0)

const Device kCpu = Device::cpu();

template <class T>
Array cpu_array(const std::vector<T>& v) {
  return asarray(v, std::nullopt, kCpu);
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-100.0f, 100.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// ---- the kernels ----

const char* kBasics = R"(
#include <cuda_runtime.h>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
// A sum per block: shared memory and __syncthreads, a tree the host repeats.
extern "C" __global__ void block_sum(const int* in, int* out, int n) {
  __shared__ int s[256];
  const unsigned t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
// A sum per warp with __shfl_down_sync, then across warps through shared memory.
extern "C" __global__ void warp_sum(const int* in, int* out) {
  __shared__ int partial[32];
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  int v = in[blockIdx.x * blockDim.x + t];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? partial[lane] : 0;
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) out[blockIdx.x] = v;
  }
}
// A histogram in shared memory with atomics, added to the global one with atomics.
extern "C" __global__ void histogram(const unsigned char* in, int n, unsigned* bins) {
  __shared__ unsigned local[16];
  for (unsigned b = threadIdx.x; b < 16; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&local[in[i] % 16], 1u);
  __syncthreads();
  for (unsigned b = threadIdx.x; b < 16; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
// Dynamic shared memory: the block's values reversed.
extern "C" __global__ void reverse_block(const float* in, float* out) {
  extern __shared__ __align__(16) float tile[];
  const unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
  tile[t] = in[base + t];
  __syncthreads();
  out[base + t] = tile[blockDim.x - 1 - t];
}
// A 5-point stencil on a 2-D grid of blocks and threads; the border copied.
extern "C" __global__ void stencil(const float* in, float* out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
    out[i] = in[i];
    return;
  }
  out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}
// A transpose through a shared tile: 2-D blocks that synchronise.
extern "C" __global__ void transpose(const float* in, float* out, int w, int h) {
  __shared__ float tile[16][17];
  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
  __syncthreads();
  x = blockIdx.y * 16 + threadIdx.x;
  y = blockIdx.x * 16 + threadIdx.y;
  if (x < h && y < w) out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}
template <class T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

Program& basics() {
  static Program p(kBasics, {.name = "cpu_basics.cu", .name_expressions = {"axpy<float>", "axpy<double>"}});
  return p;
}

TEST(CpuKernels, VectorAdd) {
  XP_REQUIRE_HOST_CXX();
  const int n = 100003;
  const auto a = random_floats(n, 1), b = random_floats(n, 2);
  Array A = cpu_array(a), B = cpu_array(b), C = zeros({n}, DType::float32, kCpu);
  Kernel k = basics().kernel("vector_add", kCpu);
  EXPECT_EQ(k.device(), kCpu);
  k.launch({.grid = (n + 255) / 256, .block = 256}, A, B, C, n);
  const auto c = C.to_vector<float>();
  for (int i = 0; i < n; ++i) ASSERT_EQ(bits(c[static_cast<std::size_t>(i)]), bits(a[i] + b[i])) << i;
  // Raw pointers pass as themselves.
  std::vector<float> out(n, -1.0f);
  k.launch({.grid = (n + 127) / 128, .block = 128}, a.data(), b.data(), out.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(bits(out[i]), bits(a[i] + b[i])) << i;
}

TEST(CpuKernels, BlockReductionWithSharedMemoryAndSyncthreads) {
  XP_REQUIRE_HOST_CXX();
  const int n = 256 * 37 + 11, blocks = (n + 255) / 256;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 1000 - 500;
  std::vector<int> out(blocks, 0);
  basics().kernel("block_sum", kCpu).launch({.grid = blocks, .block = 256}, in.data(), out.data(), n);
  for (int b = 0; b < blocks; ++b) {
    int s = 0;
    for (int i = b * 256; i < std::min(n, (b + 1) * 256); ++i) s += in[i];
    EXPECT_EQ(out[b], s) << b;
  }
}

TEST(CpuKernels, WarpShuffleReduction) {
  XP_REQUIRE_HOST_CXX();
  const int blocks = 13, threads = 256;
  std::vector<int> in(blocks * threads);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i * 31 % 97);
  std::vector<int> out(blocks, 0);
  basics().kernel("warp_sum", kCpu).launch({.grid = blocks, .block = threads}, in.data(), out.data());
  for (int b = 0; b < blocks; ++b) {
    int s = 0;
    for (int i = 0; i < threads; ++i) s += in[b * threads + i];
    EXPECT_EQ(out[b], s) << b;
  }
}

TEST(CpuKernels, HistogramWithSharedMemoryAtomics) {
  XP_REQUIRE_HOST_CXX();
  const int n = 1 << 18;
  std::vector<unsigned char> in(n);
  std::mt19937 gen(3);
  for (auto& c : in) c = static_cast<unsigned char>(gen());
  std::vector<unsigned> bins(16, 0), expected(16, 0);
  for (unsigned char c : in) ++expected[c % 16];
  basics().kernel("histogram", kCpu).launch({.grid = 64, .block = 128}, in.data(), n, bins.data());
  EXPECT_EQ(bins, expected);
}

TEST(CpuKernels, DynamicSharedMemory) {
  XP_REQUIRE_HOST_CXX();
  const int blocks = 9, threads = 96;
  const auto in = random_floats(blocks * threads, 4);
  std::vector<float> out(in.size(), 0.0f);
  basics()
      .kernel("reverse_block", kCpu)
      .launch({.grid = blocks, .block = threads, .shared_bytes = threads * sizeof(float)}, in.data(), out.data());
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t)
      ASSERT_EQ(bits(out[b * threads + t]), bits(in[b * threads + threads - 1 - t])) << b << " " << t;
}

TEST(CpuKernels, Stencil2D) {
  XP_REQUIRE_HOST_CXX();
  const int w = 67, h = 45;
  const auto in = random_floats(w * h, 5);
  std::vector<float> out(in.size(), 0.0f);
  basics()
      .kernel("stencil", kCpu)
      .launch({.grid = Dim3((w + 15) / 16, (h + 7) / 8), .block = Dim3(16, 8)}, in.data(), out.data(), w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int i = y * w + x;
      const float e = (x == 0 || y == 0 || x == w - 1 || y == h - 1)
                          ? in[i]
                          : 0.2f * ((((in[i] + in[i - 1]) + in[i + 1]) + in[i - w]) + in[i + w]);
      ASSERT_EQ(bits(out[i]), bits(e)) << x << ", " << y;
    }
}

TEST(CpuKernels, TransposeWithTwoDimensionalBlocksThatSynchronise) {
  XP_REQUIRE_HOST_CXX();
  const int w = 50, h = 37;
  const auto in = random_floats(w * h, 9);
  std::vector<float> out(in.size(), 0.0f);
  basics()
      .kernel("transpose", kCpu)
      .launch({.grid = Dim3((w + 15) / 16, (h + 15) / 16), .block = Dim3(16, 16)}, in.data(), out.data(), w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) ASSERT_EQ(bits(out[x * h + y]), bits(in[y * w + x])) << x << ", " << y;
}

TEST(CpuKernels, TemplateKernelThroughANameExpression) {
  XP_REQUIRE_HOST_CXX();
  const int n = 1000;
  const auto x = random_floats(n, 6);
  auto y = random_floats(n, 7);
  const auto y0 = y;
  basics().kernel("axpy<float>", kCpu).launch({.grid = 4, .block = 256}, 1.5f, x.data(), y.data(), n);
  for (int i = 0; i < n; ++i) {
    const float p = 1.5f * x[i];  // no fused multiply-add: the product is rounded first
    ASSERT_EQ(bits(y[i]), bits(p + y0[i])) << i;
  }
  std::vector<double> xd(n, 2.0), yd(n, 1.0);
  basics().kernel("axpy<double>", kCpu).launch({.grid = 4, .block = 256}, 0.25, xd.data(), yd.data(), n);
  for (double v : yd) ASSERT_EQ(v, 1.5);
  const auto names = basics().kernel_names(kCpu);
  for (const char* want : {"vector_add", "block_sum", "warp_sum", "axpy<float>", "axpy<double>"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  EXPECT_EQ(std::find(names.begin(), names.end(), "axpy"), names.end());  // a template has no kernel by itself
}

// ---- __half and __nv_bfloat16 ----

// The binary16 nearest to a double (ties to even), by search over every finite value.
std::uint16_t reference_half(double v) {
  if (std::isnan(v)) return 0x7fff;
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  auto value = [](int h) {  // h: 0..0x7bff
    const int e = h >> 10, m = h & 0x3ff;
    return e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  };
  if (a >= 65520.0) return static_cast<std::uint16_t>(sign | 0x7c00);  // halfway to 2^16 and beyond: infinity
  int lo = 0, hi = 0x7bff;
  while (lo < hi) {  // the largest h with value(h) <= a
    const int mid = (lo + hi + 1) / 2;
    if (value(mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  int best = lo;
  if (lo < 0x7bff) {
    const double below = a - value(lo), above = value(lo + 1) - a;
    if (above < below || (above == below && (lo & 1))) best = lo + 1;
  } else if (a - value(lo) > 0) {
    best = lo;  // between 65504 and 65520: 65504
  }
  return static_cast<std::uint16_t>(sign | best);
}

TEST(CpuKernels, HalfConversionsGiveTheGpusBits) {
  XP_REQUIRE_HOST_CXX();
  Program p(R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void to_half(const float* in, unsigned short* h, float* back, unsigned short* sum, unsigned short* bf, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __half x = __float2half(in[i]);
  h[i] = __half_as_ushort(x);
  back[i] = __half2float(x);
  sum[i] = __half_as_ushort(__hadd(x, __float2half(0.5f)));
  bf[i] = __bfloat16_as_ushort(__float2bfloat16(in[i]));
}
)",
            {.name = "half_bits.cu"});
  std::vector<float> in = {0.0f,
                           -0.0f,
                           1.0f,
                           -2.5f,
                           65504.0f,
                           65519.99f,
                           65520.0f,
                           1e-8f,
                           5.9604645e-08f,
                           2.9802322e-08f,
                           2.98023259e-08f,
                           6.1035156e-05f,
                           6.1035152e-05f,
                           3.14159265f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           1.00048828125f,
                           1.00146484375f};
  std::mt19937 gen(8);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  for (int i = 0; i < 4000; ++i) {  // random floats of every magnitude around the half range
    float f;
    std::uint32_t u = any_bits(gen);
    u = (u & 0x807fffffu) | ((100u + (u >> 23) % 60u) << 23);
    std::memcpy(&f, &u, 4);
    in.push_back(f);
  }
  const int n = static_cast<int>(in.size());
  std::vector<std::uint16_t> h(n), sum(n), bf(n);
  std::vector<float> back(n);
  p.kernel("to_half", kCpu)
      .launch({.grid = (n + 63) / 64, .block = 64}, in.data(), h.data(), back.data(), sum.data(), bf.data(), n);
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(in[i]);
    const std::uint16_t want = reference_half(in[i]);
    ASSERT_EQ(h[i], want);
    if (std::isnan(in[i])) continue;
    // back to float: exact
    const int e = (want >> 10) & 0x1f, m = want & 0x3ff;
    const double mag = e == 31 ? INFINITY : e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    ASSERT_EQ(static_cast<double>(back[i]), (want & 0x8000) ? -mag : mag);
    // a half sum is rounded once from the exact sum
    ASSERT_EQ(sum[i], reference_half(static_cast<double>(back[i]) + 0.5));
    // bfloat16: the float's top half, rounded to nearest even
    std::uint32_t u = bits(in[i]);
    const std::uint32_t r =
        (u >> 16) + (((u & 0xffffu) > 0x8000u || ((u & 0xffffu) == 0x8000u && ((u >> 16) & 1))) ? 1 : 0);
    ASSERT_EQ(bf[i], static_cast<std::uint16_t>(r));
  }
}

// ---- synchronisation and atomics beyond the basics ----

TEST(CpuKernels, VotesBarrierPredicatesAndAtomicsHaveCudasSemantics) {
  XP_REQUIRE_HOST_CXX();
  Program p(R"(
extern "C" __global__ void votes(const int* in, int* out) {
  const unsigned t = threadIdx.x;
  const int v = in[t];
  const unsigned ballot = __ballot_sync(0xffffffffu, v > 0);
  const int any = __any_sync(0xffffffffu, v > 5), all = __all_sync(0xffffffffu, v >= 0);
  const int count = __syncthreads_count(v > 0), both = __syncthreads_and(v >= 0), either = __syncthreads_or(v > 5);
  const int from = __shfl_sync(0xffffffffu, v, 3), up = __shfl_up_sync(0xffffffffu, v, 1), x = __shfl_xor_sync(0xffffffffu, v, 1, 8);
  out[t * 8 + 0] = (int)ballot; out[t * 8 + 1] = any; out[t * 8 + 2] = all; out[t * 8 + 3] = count;
  out[t * 8 + 4] = both; out[t * 8 + 5] = either; out[t * 8 + 6] = from; out[t * 8 + 7] = up * 1000 + x;
}
extern "C" __global__ void atomics(unsigned* u, int* i, float* f, unsigned long long* ull) {
  atomicInc(&u[0], 9u);         // wraps to 0 after 9
  atomicDec(&u[1], 9u);         // from 0 wraps to 9
  atomicMax(&i[0], (int)threadIdx.x - 20);
  atomicMin(&i[1], (int)threadIdx.x - 20);
  atomicSub(&i[2], 2);
  atomicCAS(&i[3], 0, 7);       // once
  atomicOr(&u[2], 1u << (threadIdx.x % 32));
  atomicXor(&u[3], 1u);
  atomicAnd(&u[4], ~(1u << (threadIdx.x % 16)));
  atomicAdd(f, 0.5f);
  atomicAdd(ull, 1ull << 33);
  atomicExch(&u[5], 42u);
}
)",
            {.name = "semantics.cu"});
  const int threads = 64;
  std::vector<int> in(threads), out(threads * 8, -1);
  for (int t = 0; t < threads; ++t) in[t] = (t * 5) % 11 - (t == 40 ? 20 : 0);
  p.kernel("votes", kCpu).launch({.grid = 1, .block = threads}, in.data(), out.data());
  int count = 0, both = 1, either = 0;
  for (int v : in) {
    count += v > 0;
    both &= v >= 0;
    either |= v > 5;
  }
  for (int t = 0; t < threads; ++t) {
    SCOPED_TRACE(t);
    const int base = t / 32 * 32, lane = t % 32;
    unsigned ballot = 0;
    int any = 0, all = 1;
    for (int l = 0; l < 32; ++l) {
      ballot |= (in[base + l] > 0 ? 1u : 0u) << l;
      any |= in[base + l] > 5;
      all &= in[base + l] >= 0;
    }
    EXPECT_EQ(static_cast<unsigned>(out[t * 8 + 0]), ballot);
    EXPECT_EQ(out[t * 8 + 1], any);
    EXPECT_EQ(out[t * 8 + 2], all);
    EXPECT_EQ(out[t * 8 + 3], count);
    EXPECT_EQ(out[t * 8 + 4], both);
    EXPECT_EQ(out[t * 8 + 5], either);
    EXPECT_EQ(out[t * 8 + 6], in[base + 3]);
    const int up = lane >= 1 ? in[t - 1] : in[t];
    const int x = in[base + ((lane ^ 1))];
    EXPECT_EQ(out[t * 8 + 7], up * 1000 + x);
  }

  std::vector<unsigned> u = {0, 0, 0, 0, 0xffffffffu, 0};
  std::vector<int> i = {-100, 100, 0, 0};
  float f = 0.0f;
  unsigned long long ull = 0;
  p.kernel("atomics", kCpu).launch({.grid = 3, .block = 50}, u.data(), i.data(), &f, &ull);
  const int total = 150;
  EXPECT_EQ(u[0], static_cast<unsigned>(total % 10));
  EXPECT_EQ(u[1], static_cast<unsigned>((10 - total % 10) % 10));
  EXPECT_EQ(i[0], 49 - 20);
  EXPECT_EQ(i[1], -20);
  EXPECT_EQ(i[2], -2 * total);
  EXPECT_EQ(i[3], 7);
  EXPECT_EQ(u[2], 0xffffffffu);
  EXPECT_EQ(u[3], 0u);  // 150 flips
  EXPECT_EQ(u[4], 0xffff0000u);
  EXPECT_EQ(f, 75.0f);
  EXPECT_EQ(ull, 150ull << 33);
  EXPECT_EQ(u[5], 42u);
}

// ---- failure paths ----

TEST(CpuKernels, AnUnknownKernelNamesTheOnesThereAre) {
  XP_REQUIRE_HOST_CXX();
  try {
    basics().kernel("vector_sub", kCpu);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("vector_sub"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vector_add"), std::string::npos) << e.what();
  }
}

TEST(CpuKernels, ArgumentCountAndSizesAreChecked) {
  XP_REQUIRE_HOST_CXX();
  Kernel k = basics().kernel("vector_add", kCpu);
  std::vector<float> a(4), b(4), c(4);
  EXPECT_THROW(k.launch({.grid = 1, .block = 4}, a.data(), b.data(), c.data()), ValueError);
  try {
    k.launch({.grid = 1, .block = 4}, a.data(), b.data(), c.data(), std::int64_t{4});
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("(8, 8, 8, 4)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(k.parameter_sizes(), (std::vector<std::size_t>{8, 8, 8, 4}));
}

TEST(CpuKernels, LaunchLimitsAreAGpusWithTypedErrors) {
  XP_REQUIRE_HOST_CXX();
  Kernel k = basics().kernel("vector_add", kCpu);
  std::vector<float> a(4);
  EXPECT_THROW(k.launch({.grid = 1, .block = 2048}, a.data(), a.data(), a.data(), 4), ValueError);
  EXPECT_THROW(k.launch({.grid = 1, .block = Dim3(32, 32, 2)}, a.data(), a.data(), a.data(), 4), ValueError);
  EXPECT_THROW(k.launch({.grid = Dim3(1, 70000), .block = 1}, a.data(), a.data(), a.data(), 4), ValueError);
  EXPECT_THROW(k.launch({.grid = 0, .block = 1}, a.data(), a.data(), a.data(), 4), ValueError);
  EXPECT_THROW(k.launch({.grid = 1, .block = 1, .shared_bytes = 1u << 20}, a.data(), a.data(), a.data(), 4),
               ValueError);
  EXPECT_EQ(a, std::vector<float>(4, 0.0f));  // nothing ran
}

TEST(CpuKernels, ACompileErrorNamesWhatIsMissing) {
  XP_REQUIRE_HOST_CXX();
  Program p("extern \"C\" __global__ void k(float* x) {\n  x[0] = __no_such_intrinsic(x[1]);\n}\n",
            {.name = "missing.cu"});
  try {
    p.kernel("k", kCpu);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("__no_such_intrinsic"), std::string::npos) << e.log();
    EXPECT_NE(std::string(e.what()).find("__no_such_intrinsic"), std::string::npos) << e.what();
    EXPECT_EQ(e.line(), 2) << e.log();
    EXPECT_EQ(e.program(), "missing.cu");
  }
}

TEST(CpuKernels, AnAssertThatFailsIsAnError) {
  XP_REQUIRE_HOST_CXX();
  Program p(R"(extern "C" __global__ void check(const int* x) { assert(x[threadIdx.x] >= 0); })",
            {.name = "assert.cu"});
  std::vector<int> x(64, 1);
  Kernel k = p.kernel("check", kCpu);
  k.launch({.grid = 1, .block = 64}, x.data());
  x[17] = -1;
  try {
    k.launch({.grid = 1, .block = 64}, x.data());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x[threadIdx.x] >= 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("thread (17, 0, 0)"), std::string::npos) << e.what();
  }
}

TEST(CpuKernels, ThreadsThatWaitForEachOtherForEverAreAnErrorNotAHang) {
  XP_REQUIRE_HOST_CXX();
  // Lane 0 waits at the block's barrier for lanes 1-31, which wait at a warp barrier for lane 0.
  Program p(R"(extern "C" __global__ void bad(int* x) {
  if (threadIdx.x == 0) __syncthreads(); else __syncwarp();
  x[threadIdx.x] = 1;
})",
            {.name = "deadlock.cu"});
  std::vector<int> x(64, 0);
  try {
    p.kernel("bad", kCpu).launch({.grid = 2, .block = 64}, x.data());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("for ever"), std::string::npos) << e.what();
  }
  // Threads that exited are not waited for (as on a GPU since Volta): no deadlock here.
  Program q(R"(extern "C" __global__ void early(int* x) {
  if (threadIdx.x % 3 == 0) return;
  __syncthreads();
  x[threadIdx.x] = __syncthreads_count(1);
})",
            {.name = "exited.cu"});
  q.kernel("early", kCpu).launch({.grid = 1, .block = 64}, x.data());
  EXPECT_EQ(x[1], 42);  // 64 - 22 threads that returned
}

TEST(CpuKernels, XpHostCxxPointingAtNothingIsACompileErrorSayingHowToFixIt) {
  XP_REQUIRE_HOST_CXX();
  EXPECT_CHILD_CASE_PASSED(
      xp_test::run_child_case("CpuKernels.DISABLED_NoCompilerChild", {{"XP_HOST_CXX", "/nonexistent/g++"}}));
}

TEST(CpuKernels, NoCompilerOnPathIsACompileErrorSayingHowToFixIt) {
  XP_REQUIRE_HOST_CXX();
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("CpuKernels.DISABLED_NoCompilerOnPathChild",
                                                   {{"PATH", "/nonexistent"}}, {"XP_HOST_CXX"}));
}

TEST(CpuKernels, DISABLED_NoCompilerOnPathChild) {
  const HostCompilerInfo info = host_compiler_info();
  EXPECT_FALSE(info.available);
  EXPECT_NE(info.error.find("install g++"), std::string::npos) << info.error;
  EXPECT_NE(info.error.find("XP_HOST_CXX"), std::string::npos) << info.error;
  try {
    Program(kBasics, {.name = "no_compiler.cu"}).compile(kCpu);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("install g++"), std::string::npos) << e.what();
  }
  // The rest of xp does not need it; the doctor says why there is none.
  Array a = asarray(std::vector<float>{1, 2}, std::nullopt, kCpu);
  EXPECT_EQ((a + a).to_vector<float>(), (std::vector<float>{2, 4}));
  const auto doctor = nlohmann::json::parse(doctor_json());
  EXPECT_FALSE(doctor["kernels"]["host_compiler"]["available"].get<bool>());
  EXPECT_NE(doctor["kernels"]["host_compiler"]["error"].get<std::string>().find("install g++"), std::string::npos);
}

TEST(CpuKernels, TheDoctorNamesTheHostCompiler) {
  XP_REQUIRE_HOST_CXX();
  const HostCompilerInfo info = host_compiler_info();
  const auto doctor = nlohmann::json::parse(doctor_json());
  const auto& h = doctor["kernels"]["host_compiler"];
  EXPECT_TRUE(h["available"].get<bool>());
  EXPECT_EQ(h["path"].get<std::string>(), info.path);
  EXPECT_EQ(h["version"].get<std::string>(), info.version);
  EXPECT_FALSE(info.version.empty());
  EXPECT_EQ(h["found_by"].get<std::string>(), info.found_by);
}

TEST(CpuKernels, DISABLED_NoCompilerChild) {
  const HostCompilerInfo info = host_compiler_info();
  EXPECT_FALSE(info.available);
  EXPECT_NE(info.error.find("XP_HOST_CXX"), std::string::npos) << info.error;
  Program p(kBasics, {.name = "no_compiler.cu"});
  try {
    p.kernel("vector_add", kCpu);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/g++"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("XP_HOST_CXX"), std::string::npos) << e.what();
  }
}

// ---- caches ----

const char* kCached = R"(extern "C" __global__ void twice(int* x) { x[threadIdx.x] *= 2; })";

TEST(CpuKernels, ASecondProgramHitsTheMemoryCacheAndAProcessTheDiskCache) {
  XP_REQUIRE_HOST_CXX();
  xp_test::TempDir tmp;
  const std::map<std::string, std::string> env = {{"XP_CACHE_DIR", tmp / "kernels"}, {"XP_TEST_KEEP_CACHE_DIR", "1"}};
  // A first process compiles, a second one loads what the first stored.
  auto first = xp_test::run_child_case("CpuKernels.DISABLED_CacheChild", env);
  EXPECT_CHILD_CASE_PASSED(first);
  EXPECT_NE(first.out.find("compiled"), std::string::npos) << first.out;
  auto second = xp_test::run_child_case("CpuKernels.DISABLED_CacheChild", env);
  EXPECT_CHILD_CASE_PASSED(second);
  EXPECT_NE(second.out.find("disk hit"), std::string::npos) << second.out;
}

TEST(CpuKernels, DISABLED_CacheChild) {
  Program p(kCached, {.name = "cached.cu"});
  const CompileStats s = p.compile(kCpu);
  EXPECT_FALSE(s.memory_hit);
  EXPECT_EQ(s.target, "cpu");
  EXPECT_FALSE(s.cache_file.empty());
  std::printf("%s\n", s.disk_hit ? "disk hit" : "compiled");
  if (!s.disk_hit) {
    EXPECT_GT(s.compile_ms, 0.0);
  }
  Program again(kCached, {.name = "cached.cu"});
  const CompileStats t = again.compile(kCpu);
  EXPECT_TRUE(t.memory_hit);
  std::vector<int> x = {1, 2, 3};
  again.kernel("twice", kCpu).launch({.grid = 1, .block = 3}, x.data());
  EXPECT_EQ(x, (std::vector<int>{2, 4, 6}));
}

// The compiler's --version runs once per compiler file: its output is remembered in the kernel
// cache under the file's identity, so that a process that loads cached kernels starts no process.
TEST(CpuKernels, TheCompilersVersionRunsOncePerCompilerFile) {
  XP_REQUIRE_HOST_CXX();
  xp_test::TempDir tmp;
  const std::string log = tmp / "calls.log", wrapper = tmp / "cxx";
  auto write_wrapper = [&](const std::string& comment) {
    std::ofstream w(wrapper, std::ios::trunc);
    w << "#!/bin/sh\n# " << comment << "\necho \"$*\" >> '" << log << "'\nexec '" << host_compiler_info().path
      << "' \"$@\"\n";
    w.close();
    ::chmod(wrapper.c_str(), 0755);
  };
  write_wrapper("first");
  const std::map<std::string, std::string> env = {
      {"XP_CACHE_DIR", tmp / "kernels"}, {"XP_TEST_KEEP_CACHE_DIR", "1"}, {"XP_HOST_CXX", wrapper}};
  auto version_runs = [&] {
    std::ifstream in(log);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) n += line == "--version";
    std::ofstream(log, std::ios::trunc).close();
    return n;
  };
  std::vector<std::pair<std::string, int>> runs;  // (compiled or disk hit, --version runs)
  for (int i = 0; i < 4; ++i) {
    if (i == 3) write_wrapper("changed");  // another compiler file: asked again
    auto child = xp_test::run_child_case("CpuKernels.DISABLED_CacheChild", env);
    EXPECT_CHILD_CASE_PASSED(child);
    runs.emplace_back(child.out.find("disk hit") != std::string::npos ? "disk hit" : "compiled", version_runs());
  }
  // 1: no cache folder yet, nothing remembered (finding a compiler creates no folder); 2: remembered;
  // 3: read back; 4: the wrapper changed, so its new identity is asked (and the kernel's key changes
  // with the compiler's identity only if --version's text does: here it does not).
  const std::vector<std::pair<std::string, int>> want = {
      {"compiled", 1}, {"disk hit", 1}, {"disk hit", 0}, {"disk hit", 1}};
  EXPECT_EQ(runs, want);
}

// A program none of whose functions synchronises runs each block as one loop over its threads
// without a check between them; one that synchronises anywhere keeps the check. Both give the same
// results, including a kernel that synchronises only inside a __device__ function it calls.
TEST(CpuKernels, ProgramsWithAndWithoutSynchronisationGiveTheSameResults) {
  XP_REQUIRE_HOST_CXX();
  const std::string add = R"(extern "C" __global__ void add3(const int* a, int* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] + 3;
}
)";
  const std::string sync = R"(__device__ void wait_all() { __syncthreads(); }
extern "C" __global__ void shift(const int* a, int* b, int n) {
  __shared__ int s[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? a[i] : 0;
  wait_all();
  if (i < n) b[i] = s[(threadIdx.x + 1) % blockDim.x];
}
)";
  const int n = 1000;
  std::vector<int> a(n);
  for (int i = 0; i < n; ++i) a[i] = i * 3 - 700;
  for (const std::string& src : {add, add + sync}) {
    Program p(src, {.name = "modes.cu"});
    std::vector<int> b(n, 0);
    p.kernel("add3", kCpu).launch({.grid = (n + 127) / 128, .block = 128}, a.data(), b.data(), n);
    for (int i = 0; i < n; ++i) ASSERT_EQ(b[i], a[i] + 3) << i;
    if (src == add) continue;
    p.kernel("shift", kCpu).launch({.grid = (n + 127) / 128, .block = 128}, a.data(), b.data(), n);
    for (int i = 0; i < n; ++i) {
      const int block = i / 128 * 128, j = block + (i - block + 1) % 128;
      ASSERT_EQ(b[i], j < n ? a[j] : 0) << i;
    }
  }
  // A program without the prelude's marker whose kernel reaches the engine's barrier by another
  // way is a clear error, not a block run wrongly.
  Program q(R"(extern "C" __global__ void sneaky(int* x) {
  xp_cpu::block->api->barrier(xp_cpu::block->engine, threadIdx.x, 0, 0);
  x[threadIdx.x] = 1;
})",
            {.name = "sneaky.cu"});
  std::vector<int> x(64, 0);
  try {
    q.kernel("sneaky", kCpu).launch({.grid = 1, .block = 64}, x.data());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("never does"), std::string::npos) << e.what();
  }
}

// Each kernel of a program is classified on its own: one whose code holds no synchronising call
// runs as a plain loop even beside one that synchronises, unless a synchronising call lies in a
// helper that was not inlined (then every kernel of the program is taken to synchronise).
TEST(CpuKernels, EachKernelIsClassifiedByTheCallsInItsOwnCode) {
  XP_REQUIRE_HOST_CXX();
  // `sneaky` reaches the engine's barrier without the prelude, so only a kernel classified as one
  // that synchronises gets through it; `shift` synchronises through the prelude, inlined.
  const std::string kernels = R"(extern "C" __global__ void sneaky(int* x) {
  const unsigned t = threadIdx.x;  // the prelude's calls restore the built-ins after a wait; this does
  xp_cpu::block->api->barrier(xp_cpu::block->engine, t, 0, 0);
  x[t] = 1;
}
extern "C" __global__ void shift(const int* a, int* b) {
  __shared__ int s[64];
  s[threadIdx.x] = a[threadIdx.x];
  __syncthreads();
  b[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}
template <class T>
__global__ void warp_sum(const T* a, T* out) {
  T v = a[threadIdx.x];
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}
)";
  std::vector<int> a(64), b(64, 0), x(64, 0);
  for (int i = 0; i < 64; ++i) a[i] = i * 7 - 100;
  auto check_shift = [&](Program& p) {
    std::fill(b.begin(), b.end(), 0);
    p.kernel("shift", kCpu).launch({.grid = 1, .block = 64}, a.data(), b.data());
    for (int i = 0; i < 64; ++i) ASSERT_EQ(b[i], a[(i + 1) % 64]) << i;
  };
  auto check_warp_sum = [&](Program& p) {
    std::vector<int> out(2, 0);
    p.kernel("warp_sum<int>", kCpu).launch({.grid = 1, .block = 64}, a.data(), out.data());
    int s0 = 0, s1 = 0;
    for (int i = 0; i < 32; ++i) s0 += a[i], s1 += a[32 + i];
    EXPECT_EQ(out[0], s0);
    EXPECT_EQ(out[1], s1);
  };
  {
    Program p(kernels, {.name = "each_kernel.cu", .name_expressions = {"warp_sum<int>"}});
    check_shift(p);
    check_warp_sum(p);
    try {
      p.kernel("sneaky", kCpu).launch({.grid = 1, .block = 64}, x.data());
      FAIL() << "sneaky ran as a kernel that synchronises beside shift";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the kernel was loaded as one that never does"), std::string::npos)
          << e.what();
    }
  }
  {
    // A helper that synchronises and is not inlined: its call lies outside every kernel, so every
    // kernel of the program is taken to synchronise, sneaky included (it runs, and waits as it asks).
    Program p(kernels + R"(__noinline__ __device__ void wait_all() { __syncthreads(); }
extern "C" __global__ void shift_out_of_line(const int* a, int* b) {
  __shared__ int s[64];
  s[threadIdx.x] = a[threadIdx.x];
  wait_all();
  b[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}
)",
              {.name = "helper.cu", .name_expressions = {"warp_sum<int>"}});
    check_shift(p);
    check_warp_sum(p);
    std::fill(b.begin(), b.end(), 0);
    p.kernel("shift_out_of_line", kCpu).launch({.grid = 1, .block = 64}, a.data(), b.data());
    for (int i = 0; i < 64; ++i) ASSERT_EQ(b[i], a[(i + 1) % 64]) << i;
    p.kernel("sneaky", kCpu).launch({.grid = 1, .block = 64}, x.data());
    for (int i = 0; i < 64; ++i) ASSERT_EQ(x[i], 1) << i;
  }
}

TEST(CpuKernels, NvrtcOptionsForTheGpuAreDroppedThePreprocessorsPass) {
  XP_REQUIRE_HOST_CXX();
  const std::string src = "extern \"C\" __global__ void put(long* x) { x[0] = VALUE; x[1] = __cplusplus; }\n";
  Program p(src, {.name = "options.cu",
                  .options = {"--fmad=false", "-arch=sm_90", "--use_fast_math", "-lineinfo", "-DVALUE=5", "-D",
                              "UNUSED=1", "--std=c++20"}});
  long x[2] = {0, 0};
  p.kernel("put", kCpu).launch({.grid = 1, .block = 1}, &x[0]);
  EXPECT_EQ(x[0], 5);
  EXPECT_GE(x[1], 202002L);
  // An option neither side knows reaches the compiler, which names it.
  Program bad(src, {.name = "bad_option.cu", .options = {"-DVALUE=1", "--no-such-option-here"}});
  try {
    bad.compile(kCpu);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("no-such-option-here"), std::string::npos) << e.log();
  }
}

TEST(CpuKernels, AnIncludedHeaderIsKeyMaterial) {
  XP_REQUIRE_HOST_CXX();
  xp_test::TempDir tmp;
  std::ofstream(tmp / "value.h") << "#define VALUE 3\n";
  const std::string src = "#include \"value.h\"\nextern \"C\" __global__ void put(int* x) { *x = VALUE; }\n";
  const ProgramOptions o{.name = "included.cu", .options = {"-I" + tmp.path()}};
  int x = 0;
  Program(src, o).kernel("put", kCpu).launch({.grid = 1, .block = 1}, &x);
  EXPECT_EQ(x, 3);
  std::ofstream(tmp / "value.h") << "#define VALUE 4\n";
  Program(src, o).kernel("put", kCpu).launch({.grid = 1, .block = 1}, &x);
  EXPECT_EQ(x, 4);
}

// ---- the source scan ----

TEST(CpuKernels, KernelNamesAreFoundInTheSource) {
  const auto names = detail::scan_kernel_names(R"src(
// __global__ void in_a_comment() {}
#define K __global__ void in_a_macro()
const char* s = "__global__ void in_a_string()";
extern "C" __global__ void __launch_bounds__(128, 2) plain(int* x) { x[0] = 1; }
template <int N> __global__ void templ(int* x) {}
namespace outer { namespace inner { __global__ void nested(float*); __global__ void nested(float* p) {} } }
extern "C" { __global__ void in_block(void) {} }
struct S { int a; };
__global__ void after_struct(S s) {}
)src");
  EXPECT_EQ(names, (std::vector<std::string>{"plain", "outer::inner::nested", "in_block", "after_struct"}));
}

// ---- the kernels of xp's GPU tests, on the CPU ----

// The kernels of test_kernels_gpu.cpp (gpu_test_kernels.hpp).
const char* const kGpuTestSource = xp_test::kGpuTestKernels;

TEST(CpuKernels, TheGpuTestsKernelsRunOnTheCpu) {
  XP_REQUIRE_HOST_CXX();
  Program p(kGpuTestSource, {.name = "gpu_test.cu", .options = {"--fmad=false"}, .name_expressions = {"fill<int>"}});
  const int n = 5000;
  const auto a = random_floats(n, 11), b = random_floats(n, 12);
  std::vector<float> c(n), y = b;
  p.kernel("vector_add", kCpu).launch({.grid = (n + 255) / 256, .block = 256}, a.data(), b.data(), c.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(bits(c[i]), bits(a[i] + b[i]));
  p.kernel("axpy_fma_free", kCpu).launch({.grid = (n + 255) / 256, .block = 256}, 0.75f, a.data(), y.data(), n);
  for (int i = 0; i < n; ++i) {
    const float prod = 0.75f * a[i];
    ASSERT_EQ(bits(y[i]), bits(prod + b[i]));
  }
  // __device__ and __constant__ variables: atomics across blocks, an address to write a constant.
  p.kernel("count_up", kCpu).launch({.grid = 40, .block = 64}, 25);
  unsigned long long counted = 0;
  p.kernel("read_counter", kCpu).launch({.grid = 1, .block = 1}, &counted);
  EXPECT_EQ(counted, 40ull * 64 * 25);
  std::size_t bytes = 0;
  auto* scale = reinterpret_cast<float*>(p.global_address("scale_by", kCpu, &bytes));
  EXPECT_EQ(bytes, sizeof(float));
  *scale = 3.0f;
  p.kernel("scaled_copy", kCpu).launch({.grid = (n + 255) / 256, .block = 256}, a.data(), c.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(bits(c[i]), bits(a[i] * 3.0f));
  EXPECT_THROW(p.global_address("no_such_variable", kCpu), ValueError);
  std::vector<int> filled(300, 0);
  p.kernel("fill<int>", kCpu).launch({.grid = 2, .block = 256}, filled.data(), 7, 300);
  EXPECT_EQ(filled, std::vector<int>(300, 7));
  std::vector<int> in(100);
  for (int i = 0; i < 100; ++i) in[i] = i * i;
  int sum = 0;
  p.kernel("shared_sum", kCpu).launch({.grid = 1, .block = 100, .shared_bytes = 400}, in.data(), &sum);
  EXPECT_EQ(sum, 328350);
  struct Pair {
    double a;
    char b;
  };
  int out = 0;
  p.kernel("mixed", kCpu).launch({.grid = 1, .block = 1}, char{1}, short{2}, Pair{4.0, 5}, 6.0, &out, 7.0f);
  EXPECT_EQ(out, 2 + 5 + 6 + 7 + 4);
}

TEST(CpuKernels, TheKernelArraysTestsKernelsRunOnTheCpuWithArrays) {
  XP_REQUIRE_HOST_CXX();
  Program p(R"(
extern "C" __global__ void affine(const float* x, float* y, int n, float a, float b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
extern "C" __global__ void slow_affine(const float* x, float* y, int n, float a, float b, long long spin) {
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
extern "C" __global__ void set(float* y, int n, float v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = v;
}
)",
            {.name = "kernel_arrays_test.cu", .options = {"--fmad=false"}});
  const int n = 1000;
  const auto xv = random_floats(n, 13);
  Array x = cpu_array(xv);
  Array y = empty({n}, DType::float32, kCpu);
  p.kernel("affine", kCpu).launch({.grid = (n + 127) / 128, .block = 128}, x, y, n, 2.0f, 1.0f);
  auto yv = y.to_vector<float>();
  for (int i = 0; i < n; ++i) ASSERT_EQ(bits(yv[i]), bits(2.0f * xv[i] + 1.0f));
  // A view passes its first element; a lazy argument is evaluated first.
  Array lazy = x + 1.0f;
  p.kernel("slow_affine", kCpu).launch({.grid = (n + 127) / 128, .block = 128}, lazy, y, n, 1.0f, 0.0f, 1000ll);
  yv = y.to_vector<float>();
  for (int i = 0; i < n; ++i) ASSERT_EQ(bits(yv[i]), bits(xv[i] + 1.0f));
  p.kernel("set", kCpu).launch({.grid = 1, .block = 256}, y.slice({Slice(10, 20)}), 10, 5.0f);
  yv = y.to_vector<float>();
  for (int i = 0; i < n; ++i) ASSERT_EQ(yv[i], (i >= 10 && i < 20) ? 5.0f : xv[i] + 1.0f) << i;
}

}  // namespace

// Each program's shared object binds its symbols to its own definitions: a kernel named like a C
// library function runs the kernel, and two programs whose kernels take a struct of one name and two
// layouts each check their own argument sizes.
// Each program's thread-local built-ins and __shared__ variables are its shared object's TLS. Once
// the loader's static TLS room is used up, a later module's TLS is made on each thread's first
// access, through the TLS descriptor's slow path, which in glibc before 2.40 does not preserve the
// vector registers that GCC's descriptor calls (-mtls-dialect=gnu2) may keep values in: an entry
// point that held the block's size in one ran no thread, and this program's EachProgramsSymbolsAre-
// ItsOwn, run after the others, saw a kernel that wrote nothing. The engine now makes a program's
// TLS on each worker before the program's code runs. Here: many programs with large __shared__
// arrays, each followed by one with a struct argument by value run on a new thread (a first access
// there): every kernel runs and gives its result.
TEST(CpuKernels, ManyProgramsLoadedInTurnEachRunEveryThread) {
  XP_REQUIRE_HOST_CXX();
  struct S {
    long long v[2];
  };
  for (int i = 0; i < 16; ++i) {
    // A program with 16 KiB of __shared__ memory, run once: the loader's static TLS room soon runs out.
    Program padded(
        "extern \"C\" __global__ void padded(int* out) {\n  __shared__ int pad[4096];\n"
        "  pad[threadIdx.x] = " +
            std::to_string(i) + ";\n  out[0] = pad[0];\n}\n",
        {.name = "padded" + std::to_string(i) + ".cu"});
    int one = -1;
    padded.kernel("padded", kCpu).launch({.grid = 1, .block = 1}, &one);
    EXPECT_EQ(one, i);
    // Then a program whose entry point GCC compiles to hold the block's size in a vector register
    // across its first TLS access, run on a new thread.
    Program p("// program " + std::to_string(i) +
                  "\nstruct S { long long v[2]; };\n"
                  "extern \"C\" __global__ void pick(S s, long long* out) { out[0] = s.v[1]; }\n",
              {.name = "pick" + std::to_string(i) + ".cu"});
    const Kernel k = p.kernel("pick", kCpu);
    long long out = -1;
    std::thread t([&] { k.launch({.grid = 1, .block = 1}, S{{5, 100 + i}}, &out); });
    t.join();
    EXPECT_EQ(out, 100 + i) << "program " << i;
  }
}

TEST(CpuKernels, EachProgramsSymbolsAreItsOwn) {
  XP_REQUIRE_HOST_CXX();
  Program libc_name(R"(
extern "C" __global__ void step(int* out) { out[threadIdx.x] = 7 * (int)threadIdx.x; }
)",
                    {.name = "cpu_step.cu"});
  std::vector<int> out(4, -1);
  libc_name.kernel("step", kCpu).launch({.grid = 1, .block = 4}, out.data());
  EXPECT_EQ(out, (std::vector<int>{0, 7, 14, 21}));

  const char* layout = R"(
struct S { long long v[N]; };
extern "C" __global__ void first(S s, long long* out) { out[0] = s.v[N - 1]; }
)";
  Program one(std::string("#define N 1\n") + layout, {.name = "cpu_layout1.cu"});
  Program two(std::string("#define N 2\n") + layout, {.name = "cpu_layout2.cu"});
  struct S1 {
    long long v[1];
  };
  struct S2 {
    long long v[2];
  };
  long long got = 0;
  one.kernel("first", kCpu).launch({.grid = 1, .block = 1}, S1{{5}}, &got);
  EXPECT_EQ(got, 5);
  EXPECT_EQ(two.kernel("first", kCpu).parameter_sizes(), (std::vector<std::size_t>{16, 8}));
  two.kernel("first", kCpu).launch({.grid = 1, .block = 1}, S2{{5, 9}}, &got);
  EXPECT_EQ(got, 9);
  EXPECT_THROW(two.kernel("first", kCpu).launch({.grid = 1, .block = 1}, S1{{5}}, &got), ValueError);
}
