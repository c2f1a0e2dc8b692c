// xp::Array arguments of Kernel::launch on a GPU (label gpu): the kernel gets the first element's
// device address (views included), lazy arguments are evaluated and pending readers computed before
// the kernel writes, a CPU array is a DeviceMismatch before anything runs, temporaries passed and
// destroyed at once stay alive until the kernel has run (also on another stream), and the
// references held are released as launches complete. White-box only to read how many launches
// still hold references, and whether an array's memory is still held. Without a GPU every case reports "skipped: no
// GPU".
#include <gtest/gtest.h>

#include <vector>

#include "array/array_impl.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace xp::detail {
std::size_t launches_holding_references();  // src/jit/kernel.cpp
}

using namespace xp;

namespace {

const char* kSource = R"(
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
)";

Kernel kernel(const char* name, const Device& d) {
  static Program p(kSource, {.name = "kernel_arrays_test.cu", .options = {"--fmad=false"}});
  return p.kernel(name, d);
}

unsigned blocks(int n) {
  return static_cast<unsigned>((n + 255) / 256);
}

std::vector<float> affine_ref(const std::vector<float>& x, float a, float b) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = a * x[i] + b;
  return y;
}

}  // namespace

TEST(KernelArraysGpu, KernelWritesIntoAnArray) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const int n = 10007;
  random::Generator g(5);
  Array x = g.uniform({n}, DType::float32, -1, 1, gpu);
  Array y = empty({n}, DType::float32, gpu);
  kernel("affine", gpu).launch({.grid = blocks(n), .block = 256}, x, y, n, 3.0f, 0.5f);
  EXPECT_EQ(y.to_vector<float>(), affine_ref(x.to_vector<float>(), 3.0f, 0.5f));
}

TEST(KernelArraysGpu, ViewsPassTheirFirstElement) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Array base = zeros({4, 8}, DType::float32, gpu);
  Array row2_tail = base.slice({2, Slice(3, std::nullopt)});  // 5 elements from offset 19
  kernel("set", gpu).launch({.grid = 1, .block = 32}, row2_tail, 5, 9.0f);
  std::vector<float> expect(32, 0.0f);
  for (int j = 3; j < 8; ++j) expect[2 * 8 + j] = 9.0f;
  EXPECT_EQ(base.to_vector<float>(), expect);
}

TEST(KernelArraysGpu, LazyArgumentsAndPendingReaders) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const int n = 1000;
  Array a = ones({n}, DType::float32, gpu);
  Array reader = a + 1.0f;  // lazy, reads a: must see the ones, not what the kernel writes
  Array x = arange(0, n, 1, DType::float32, gpu) * 2.0f;  // lazy argument
  ASSERT_TRUE(reader.is_lazy());
  kernel("affine", gpu).launch({.grid = blocks(n), .block = 256}, x, a, n, 1.0f, 0.0f);  // a = x
  EXPECT_EQ(reader.to_vector<float>(), std::vector<float>(n, 2.0f));
  std::vector<float> expect(n);
  for (int i = 0; i < n; ++i) expect[i] = 2.0f * i;
  EXPECT_EQ(a.to_vector<float>(), expect);
}

TEST(KernelArraysGpu, ACpuArrayIsADeviceMismatch) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Array y = zeros({4}, DType::float32, gpu);
  Array host = ones({4}, DType::float32, Device::cpu());
  EXPECT_THROW(kernel("affine", gpu).launch({.grid = 1, .block = 32}, host, y, 4, 1.0f, 0.0f), DeviceMismatch);
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(4, 0.0f));  // nothing ran
}

TEST(KernelArraysGpu, TemporariesStayAliveUntilTheKernelHasRun) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const int n = 1 << 16;
  Stream other(gpu);
  for (bool on_other : {false, true}) {
    std::vector<Array> outs;
    for (int r = 0; r < 20; ++r) {
      Array y = empty({n}, DType::float32, gpu);
      LaunchConfig cfg{.grid = blocks(n), .block = 256};
      if (on_other) cfg.stream = other;
      // The input is a temporary, gone when launch returns; the kernel spins before reading it.
      kernel("slow_affine", gpu)
          .launch(cfg, full({n}, static_cast<float>(r), DType::float32, gpu), y, n, 1.0f, 0.0f, 1'000'000LL);
      // New arrays that could reuse the temporary's memory, written at once.
      for (int k = 0; k < 3; ++k) outs.push_back(full({n}, -1.0f, DType::float32, gpu));
      outs.push_back(y);
    }
    if (on_other) other.synchronize();
    for (int r = 0; r < 20; ++r) {
      const std::vector<float> v = outs[r * 4 + 3].to_vector<float>();
      EXPECT_EQ(v.front(), static_cast<float>(r)) << (on_other ? "other stream" : "xp's stream") << " round " << r;
      EXPECT_EQ(v.back(), static_cast<float>(r)) << (on_other ? "other stream" : "xp's stream") << " round " << r;
    }
  }
}

TEST(KernelArraysGpu, AnotherStreamIsOrderedWithXpsStream) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const int n = 1 << 16;
  Stream other(gpu);
  // x is produced on xp's stream; the kernel on `other` must see it, and xp's later work on y must
  // see the kernel's result, with no synchronize in between.
  Array x = full({n}, 4.0f, DType::float32, gpu) + 1.0f;
  Array y = zeros({n}, DType::float32, gpu);
  kernel("slow_affine", gpu)
      .launch({.grid = blocks(n), .block = 256, .stream = other}, x, y, n, 2.0f, 1.0f, 50'000'000LL);
  const std::vector<float> v = (y + 0.0f).to_vector<float>();
  EXPECT_EQ(v.front(), 11.0f);
  EXPECT_EQ(v.back(), 11.0f);
}

TEST(KernelArraysGpu, HeldReferencesAreReleasedAsLaunchesComplete) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const int n = 256;
  Array y = zeros({n}, DType::float32, gpu);
  Kernel k = kernel("set", gpu);
  for (int i = 0; i < 6000; ++i) k.launch({.grid = 1, .block = 256}, y, n, static_cast<float>(i));
  EXPECT_LE(detail::launches_holding_references(), 4097u);  // bounded
  synchronize(gpu);
  k.launch({.grid = 1, .block = 256}, y, n, 1.0f);  // collects every completed launch
  EXPECT_LE(detail::launches_holding_references(), 1u);
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(n, 1.0f));
  // A temporary's memory is released once its launch completed and was collected.
  std::weak_ptr<detail::Storage> probe;
  {
    Array t = zeros({n}, DType::float32, gpu);
    probe = t.impl()->storage;
    k.launch({.grid = 1, .block = 256}, t, n, 2.0f);
  }
  synchronize(gpu);
  k.launch({.grid = 1, .block = 256}, y, n, 3.0f);
  EXPECT_TRUE(probe.expired());
}
