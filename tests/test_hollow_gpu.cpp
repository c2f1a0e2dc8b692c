// xp's CUDA backend end to end on the fake driver's hollow devices (tests/fake_driver/fake_cuda.cpp:
// ctest sets XP_CUDA_DRIVER and XP_FAKE_CUDA=devices=2,hollow,memory=...). Kernels are compiled by
// the real NVRTC and loaded and launched through the fake, which runs none of them: these tests check
// what the host side does (what is compiled, what is launched, where memory goes, which errors come
// out), never what a kernel computes. Copies are real, so transfers keep their values. Runs in CI,
// without a GPU; each case in a process of its own with an empty kernel cache.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fake_driver/fake_handle.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const xp_test::ProcessCache process_cache;

// The fake driver as xp loaded it, and what it counted.
class Fake : public xp_test::FakeDriverHandle {
 public:
  long stream_waits() const { return count("xp_fake_cuda_stream_waits"); }
  int primary_ctx_refcount(int ordinal) const {
    const auto f = fn<int (*)(int)>("xp_fake_cuda_primary_ctx_refcount");
    return f != nullptr ? f(ordinal) : -1;
  }
  long long bytes_allocated(int ordinal) const {
    const auto f = fn<long long (*)(int)>("xp_fake_cuda_bytes_allocated");
    return f != nullptr ? f(ordinal) : -1;
  }
  // Memory another library would own: allocated from the driver on `ordinal` in that device's
  // primary context, outside xp (the calling thread's current context is restored). On the hollow
  // device a CUdeviceptr is a host address, so the test fills and reads it directly.
  void* foreign_alloc(int ordinal, std::size_t bytes) const {
    const auto retain = fn<int (*)(void**, int)>("cuDevicePrimaryCtxRetain");
    const auto get = fn<int (*)(void**)>("cuCtxGetCurrent");
    const auto set = fn<int (*)(void*)>("cuCtxSetCurrent");
    const auto alloc = fn<int (*)(unsigned long long*, std::size_t)>("cuMemAlloc");
    void *ctx = nullptr, *before = nullptr;
    unsigned long long p = 0;
    if (retain == nullptr || get == nullptr || set == nullptr || alloc == nullptr) return nullptr;
    if (get(&before) != 0 || retain(&ctx, ordinal) != 0 || set(ctx) != 0) return nullptr;
    const int r = alloc(&p, bytes);
    set(before);
    return r == 0 ? reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)) : nullptr;
  }
  void foreign_free(void* p) const {
    const auto f = fn<int (*)(unsigned long long)>("cuMemFree");
    if (f != nullptr) f(reinterpret_cast<std::uintptr_t>(p));
  }
};

// What the process has compiled so far: the kernel cache's entries (each NVRTC compile stores one)
// and the modules the fake loaded (each kernel xp made, compiled or read from the cache).
struct Counts {
  std::size_t compiled;
  long loaded;
  long launched;
};
Counts counts(const Fake& fake) {
  return {kernel_cache_info().entries, fake.modules_loaded(), fake.launches()};
}

class HollowGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* driver = std::getenv("XP_CUDA_DRIVER");
    const char* spec = std::getenv("XP_FAKE_CUDA");
    ASSERT_TRUE(driver != nullptr && std::string(driver) == XP_FAKE_DRIVER_PATH)
        << "run through ctest, which sets XP_CUDA_DRIVER=" << XP_FAKE_DRIVER_PATH;
    ASSERT_TRUE(spec != nullptr && std::string(spec).find("hollow") != std::string::npos)
        << "ctest sets XP_FAKE_CUDA=devices=2,hollow,...";
    const CudaStatus s = cuda_status();
    if (s.reason == CudaReason::no_usable_nvrtc)
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no usable NVRTC, so CUDA is not available: " + s.detail);
    ASSERT_TRUE(s.available) << to_string(s.reason) << ": " << s.detail;
    ASSERT_TRUE(kernel_cache_info().usable) << kernel_cache_info().problem;
  }
  const Device gpu0 = Device::cuda(0);
  const Device gpu1 = Device::cuda(1);
  Fake fake;
};

Array ramp(std::int64_t n, DType t, const Device& d) {
  return arange(0, n, 1, t, Device::cpu()).to_device(d);
}

}  // namespace

TEST_F(HollowGpu, TransfersKeepTheirValuesOnEachDevice) {
  const std::vector<float> v = {1.5f, -2.0f, 3.25f, 1e30f, -0.0f};
  Array a = asarray(v, std::nullopt, Device::cpu());
  Array on1 = a.to_device(gpu1);
  EXPECT_EQ(on1.device(), gpu1);
  EXPECT_GT(fake.bytes_allocated(1), 0);
  Array on0 = on1.to_device(gpu0);
  EXPECT_EQ(on0.device(), gpu0);
  EXPECT_GT(fake.bytes_allocated(0), 0);
  EXPECT_EQ(on0.to_device(Device::cpu()).to_vector<float>(), v);
}

TEST_F(HollowGpu, ANewShapeCompilesNothing) {
  Array a = ramp(1000, DType::float32, gpu0), b = ramp(1000, DType::float32, gpu0);
  Array c = (a + b).eval();
  const Counts first = counts(fake);
  EXPECT_GE(first.compiled, 1u);
  EXPECT_GE(first.loaded, 1);
  EXPECT_GE(first.launched, 1);
  // Other sizes and ranks of the same contiguous layout class: launched, never compiled or loaded.
  long launched = first.launched;
  for (const Shape& s : std::vector<Shape>{{1001}, {1}, {1 << 20}, {37, 11}, {2, 3, 4, 5}}) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    Array x = ramp(n, DType::float32, gpu0).reshape(s), y = ramp(n, DType::float32, gpu0).reshape(s);
    (x + y).eval();
    const Counts now = counts(fake);
    EXPECT_EQ(now.compiled, first.compiled) << "shape of " << n << " elements";
    EXPECT_EQ(now.loaded, first.loaded) << "shape of " << n << " elements";
    EXPECT_GT(now.launched, launched) << "shape of " << n << " elements";
    launched = now.launched;
  }
}

TEST_F(HollowGpu, StridedAndBroadcastInputsCompileOncePerLayoutClass) {
  // A strided view: its first use may compile the strided variant; other sizes and strides of it do not.
  Array a = ramp(4000, DType::float32, gpu0);
  (a.slice({Slice(0, 2000, 2)}) * 2.0f).eval();
  const Counts strided = counts(fake);
  for (auto [stop, step] : {std::pair{3000, 3}, std::pair{4000, 5}, std::pair{999, 2}}) {
    (a.slice({Slice(0, stop, step)}) * 2.0f).eval();
    EXPECT_EQ(counts(fake).compiled, strided.compiled) << "step " << step;
    EXPECT_EQ(counts(fake).loaded, strided.loaded) << "step " << step;
  }
  // Broadcasting a column against a row, at several sizes.
  auto outer = [&](std::int64_t m, std::int64_t n) {
    Array col = ramp(m, DType::float32, gpu0).reshape({m, 1});
    Array row = ramp(n, DType::float32, gpu0).reshape({1, n});
    (col - row).eval();
  };
  outer(4, 5);
  const Counts broadcast = counts(fake);
  for (auto [m, n] : {std::pair{40, 50}, std::pair{1000, 3}, std::pair{3, 1000}}) {
    outer(m, n);
    EXPECT_EQ(counts(fake).compiled, broadcast.compiled) << m << " x " << n;
    EXPECT_EQ(counts(fake).loaded, broadcast.loaded) << m << " x " << n;
  }
}

TEST_F(HollowGpu, AFusedGraphCompilesOnceForEverySize) {
  auto fma_like = [&](std::int64_t n) {
    Array a = ramp(n, DType::float32, gpu0), b = ramp(n, DType::float32, gpu0), c = ramp(n, DType::float32, gpu0);
    Array d = a * b + c;
    EXPECT_TRUE(d.is_lazy());
    d.eval();
  };
  fma_like(100);
  const Counts first = counts(fake);
  for (std::int64_t n : {101, 4096, 1 << 22}) {
    fma_like(n);
    EXPECT_EQ(counts(fake).compiled, first.compiled) << n;
    EXPECT_EQ(counts(fake).loaded, first.loaded) << n;
  }
  // A different graph is a different kernel: the counter above can see a compile.
  Array a = ramp(100, DType::float32, gpu0);
  (a * a - a).eval();
  EXPECT_GT(counts(fake).compiled, first.compiled);
}

TEST_F(HollowGpu, MixingDevicesIsADeviceMismatch) {
  Array a0 = ramp(8, DType::float32, gpu0);
  Array a1 = ramp(8, DType::float32, gpu1);
  Array cpu = ramp(8, DType::float32, Device::cpu());
  const long launched = fake.launches();
  auto expect_mismatch = [](auto&& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << what << ": no error";
    } catch (const DeviceMismatch& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("cuda:"), std::string::npos) << what << ": " << m;
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  };
  expect_mismatch([&] { (a0 + a1).eval(); }, "cuda:0 + cuda:1");
  expect_mismatch([&] { (a1 * cpu).eval(); }, "cuda:1 * cpu");
  expect_mismatch([&] { matmul(a0.reshape({2, 4}), a1.reshape({4, 2})); }, "matmul cuda:0 @ cuda:1");
  expect_mismatch([&] { concat({a0, a1}); }, "concat of cuda:0 and cuda:1");
  Array out = empty({8}, DType::float32, gpu1);
  expect_mismatch([&] { add(a0, a0, out); }, "add(cuda:0, cuda:0, out on cuda:1)");
  EXPECT_EQ(fake.launches(), launched) << "nothing is launched for a refused operation";
  // Moving one operand first is the way: computed on cuda:1.
  Array sum = (a0.to_device(gpu1) + a1).eval();
  EXPECT_EQ(sum.device(), gpu1);
  EXPECT_GT(fake.launches(), launched);
}

TEST_F(HollowGpu, ReductionsCompileOncePerKindForEverySize) {
  struct Kind {
    const char* what;
    std::function<void(std::int64_t)> run;
  };
  const std::vector<Kind> kinds = {
      {"sum", [&](std::int64_t n) { sum(empty({n}, DType::float32, gpu0)).eval(); }},
      {"argmax", [&](std::int64_t n) { argmax(empty({n}, DType::float32, gpu0)).eval(); }},
      {"cumulative_sum", [&](std::int64_t n) { cumulative_sum(empty({n}, DType::float32, gpu0)).eval(); }},
      {"sum of a fused a*a+1",
       [&](std::int64_t n) {
         Array a = empty({n}, DType::float32, gpu0);
         sum(a * a + 1.0f).eval();
       }},
      {"sum over either axis",
       [&](std::int64_t n) {
         Array m = empty({n / 8, 8}, DType::float32, gpu0);
         sum(m, {0}).eval();
         sum(m, {1}).eval();
         sum(m.T(), {1}).eval();
       }},
  };
  for (const Kind& k : kinds) {
    k.run(1024);
    const Counts first = counts(fake);
    for (std::int64_t n : {1032, 100000, 1 << 22}) {
      k.run(n);
      const Counts now = counts(fake);
      EXPECT_EQ(now.compiled, first.compiled) << k.what << " of " << n;
      EXPECT_EQ(now.loaded, first.loaded) << k.what << " of " << n;
      EXPECT_GT(now.launched, first.launched) << k.what << " of " << n;
    }
  }
}

// A running sum in an integer dtype narrower than 64 bits is written in that dtype by one kernel: the
// only memory it takes is its output (it used to scan into an int64 temporary, 8 bytes an element).
TEST_F(HollowGpu, ARunningSumInANarrowIntegerDtypeTakesOnlyItsOutput) {
  constexpr std::int64_t n = std::int64_t{32} << 20;
  const Array a = empty({n}, DType::uint8, gpu0);
  const auto peak_of = [&](const std::function<Array()>& f, DType want, long launches) {
    reset_peak(gpu0);
    const std::uint64_t before = memory_stats(gpu0).bytes_in_use;
    const long launched = fake.launches();
    const Array s = f();
    EXPECT_EQ(s.dtype(), want);
    EXPECT_EQ(fake.launches() - launched, launches) << name(want);
    return memory_stats(gpu0).peak_bytes_in_use - before;
  };
  EXPECT_EQ(peak_of([&] { return cumulative_sum(a, 0, DType::uint8); }, DType::uint8, 1), std::uint64_t(n));
  // A wider integer dtype: the input converted (one launch, 2 bytes an element), then scanned into it.
  EXPECT_EQ(peak_of([&] { return cumulative_sum(a, 0, DType::int16); }, DType::int16, 2), std::uint64_t(4 * n));
  // With an initial 0 the output has one element more.
  const Array init = cumulative_sum(a.slice({Slice(0, 1000)}), 0, DType::uint8, true);
  EXPECT_EQ(init.shape()[0], 1001);
  // No dtype: the sum's (uint64), as before.
  EXPECT_EQ(peak_of([&] { return cumulative_sum(a); }, DType::uint64, 1), std::uint64_t(8 * n));
}

// A fused elementwise graph feeding a reduction is read inside the reduction's own passes: as many
// launches as reducing a stored array, at every size and for a reduction over an axis too.
TEST_F(HollowGpu, AGraphFeedingAReductionAddsNoLaunch) {
  for (std::int64_t n : {1024, 100032, 1 << 22}) {  // multiples of 64
    const Array a = empty({n}, DType::float32, gpu0), b = empty({n}, DType::float32, gpu0);
    auto launches_of = [&](const std::function<Array()>& f) {
      const long before = fake.launches();
      f().eval();
      return fake.launches() - before;
    };
    const Array stored = (a * b + 1.0f).eval();
    const long plain = launches_of([&] { return sum(stored); });
    EXPECT_GE(plain, 1) << n;
    EXPECT_EQ(launches_of([&] { return sum(a * b + 1.0f); }), plain) << n;
    EXPECT_EQ(launches_of([&] { return max(stored); }), launches_of([&] { return max(exp(a) - b); })) << n;
    // Over an axis: the graph is made of views of the inputs (a view of a lazy array evaluates it).
    const Array m = stored.reshape({n / 64, 64});
    const Array am = a.reshape({n / 64, 64}), bm = b.reshape({n / 64, 64});
    EXPECT_EQ(launches_of([&] { return sum(m, {0}); }), launches_of([&] { return sum(am * bm + 1.0f, {0}); })) << n;
    EXPECT_EQ(launches_of([&] { return sum(m, {1}); }), launches_of([&] { return sum(am * bm + 1.0f, {1}); })) << n;
  }
}

// `xp cache warm` runs each common operation once on small arrays; a later process meets those
// kernels at other sizes and finds every one in the disk cache. Here the cache is warmed without any
// driver (`--arch sm_90`, a compile-only GPU), then `xp cache warm` on the fake sm_90 device finds
// every kernel (the same keys), and so does this process at other sizes.
TEST_F(HollowGpu, AfterCacheWarmTheCommonOperationsCompileNothingAtAnySize) {
  const xp_test::ProcessResult warm = xp_test::run_process(
      {XP_CLI_PATH, "cache", "warm", "--arch", "sm_90"},
      {{"XP_CACHE_DIR", process_cache.folder}, {"XP_CUDA_DRIVER", "/nonexistent/libcuda.so.1"}, {"FORCE_CPU", "1"}});
  ASSERT_EQ(warm.exit_code, 0) << warm.out << warm.err;
  EXPECT_NE(warm.out.find("(xp compile-only GPU (sm_90), sm_90, compiled only: no GPU used)"), std::string::npos)
      << warm.out;
  const std::size_t warmed = kernel_cache_info().entries;
  ASSERT_GE(warmed, 40u) << warm.out;
  EXPECT_NE(warm.out.find("(" + std::to_string(warmed) + " new)"), std::string::npos) << warm.out;
  const xp_test::ProcessResult on_gpu = xp_test::run_process(
      {XP_CLI_PATH, "cache", "warm"}, {{"XP_CACHE_DIR", process_cache.folder}}, {"FORCE_CPU", "XP_DEVICE"});
  ASSERT_EQ(on_gpu.exit_code, 0) << on_gpu.out << on_gpu.err;
  EXPECT_NE(on_gpu.out.find("(xp fake GPU, sm_90)"), std::string::npos) << on_gpu.out;
  EXPECT_NE(on_gpu.out.find("(0 new)"), std::string::npos) << on_gpu.out;
  EXPECT_EQ(kernel_cache_info().entries, warmed);
  ASSERT_EQ(fake.modules_loaded(), 0) << "this process has loaded nothing yet";
  // Operations of the warm list (tools/xp/kernels.cpp), each its own graph; the values do not matter.
  for (DType t : {DType::float32, DType::float64, DType::float16, DType::int32}) {
    for (std::int64_t n : {5056, 1 << 20}) {  // multiples of 64, unlike warm's 1024 not a power of two
      const Array a = empty({n}, t, gpu0), b = empty({n}, t, gpu0), c = empty({n}, t, gpu0);
      Array o = empty({n}, t, gpu0);
      (a + b).eval();
      (a * b + c).eval();
      (-a).eval();
      (a < b).eval();
      maximum(a, b).eval();
      add(a, b, o);
      a.astype(DType::float32).eval();
      sum(a).eval();
      sum(a.reshape({n / 64, 64}), {1}).eval();
      EXPECT_EQ(kernel_cache_info().entries, warmed) << name(t) << ", " << n << " elements";
    }
  }
  // A graph warm does not run compiles: the count above would see a kernel missing from the cache.
  Array a = empty({5056}, DType::float32, gpu0);
  (a * a + a).eval();
  EXPECT_GT(kernel_cache_info().entries, warmed);
  EXPECT_GT(fake.modules_loaded(), 0) << "the kernels were loaded from the disk cache";
}

TEST_F(HollowGpu, TheDriversOutOfMemoryFreesTheCacheAndRetriesOnce) {
  constexpr std::int64_t kMiB = 1 << 20;
  ASSERT_EQ(memory_stats(gpu0).limit, 0u) << "without XP_GPU_MEMORY_LIMIT: the refusal is the driver's";
  free_all(gpu0);
  const MemoryStats s0 = memory_stats(gpu0);
  const long long driver0 = fake.bytes_allocated(0);
  // Three blocks of 256 MiB of the device's 1 GiB, dropped: cached by xp, still held from the driver.
  {
    std::vector<Array> held;
    for (int i = 0; i < 3; ++i) held.push_back(empty({256 * kMiB}, DType::uint8, gpu0));
  }
  const MemoryStats s1 = memory_stats(gpu0);
  ASSERT_EQ(s1.bytes_cached, std::uint64_t{768} * kMiB);
  ASSERT_EQ(fake.bytes_allocated(0), driver0 + 768 * kMiB);
  // 512 MiB fits only once the cached blocks are returned: the driver refuses, xp frees them, retries.
  Array big = empty({512 * kMiB}, DType::uint8, gpu0);
  const MemoryStats s2 = memory_stats(gpu0);
  EXPECT_EQ(s2.bytes_cached, 0u);
  EXPECT_EQ(s2.bytes_in_use, s0.bytes_in_use + 512 * kMiB);
  EXPECT_EQ(fake.bytes_allocated(0), driver0 + 512 * kMiB);
  // More than the device has: OutOfMemory with the numbers, and nothing changed.
  try {
    Array too_big = empty({2048 * kMiB}, DType::uint8, gpu0);
    ADD_FAILURE() << "2 GiB on a device of 1 GiB was allocated";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.device(), "cuda:0");
    EXPECT_EQ(e.requested(), std::uint64_t{2048} * kMiB);
    EXPECT_EQ(e.free(), static_cast<std::uint64_t>((1024 - 512) * kMiB - driver0));
    EXPECT_EQ(e.limit(), 0u);
  }
  const MemoryStats s3 = memory_stats(gpu0);
  EXPECT_EQ(s3.bytes_in_use, s2.bytes_in_use);
  EXPECT_EQ(s3.bytes_cached, s2.bytes_cached);
  EXPECT_EQ(s3.allocations, s2.allocations);
  EXPECT_EQ(fake.bytes_allocated(0), driver0 + 512 * kMiB);
  // The other device was never touched.
  EXPECT_EQ(fake.bytes_allocated(1), 0);
  // free_all returns the cached blocks to the driver; blocks in use stay.
  big = Array();
  EXPECT_EQ(memory_stats(gpu0).bytes_cached, std::uint64_t{512} * kMiB);
  EXPECT_EQ(fake.bytes_allocated(0), driver0 + 512 * kMiB) << "a dropped block stays cached, held from the driver";
  free_all(gpu0);
  EXPECT_EQ(memory_stats(gpu0).bytes_cached, 0u);
  EXPECT_EQ(fake.bytes_allocated(0), driver0);
}

// XP_GPU_MEMORY_LIMIT is read once per process: the case runs in a child with the variable set.
// xp::Buffer takes plain driver memory: when the driver refuses, the blocks xp's arrays left cached
// go back to it first (free_all), then the allocation is tried once more.
TEST_F(HollowGpu, ABufferTheDriverRefusesFirstGetsTheCachedBlocksBack) {
  constexpr std::int64_t kMiB = 1 << 20;
  free_all(gpu0);
  const long long driver0 = fake.bytes_allocated(0);
  {
    std::vector<Array> held;
    for (int i = 0; i < 3; ++i) held.push_back(empty({256 * kMiB}, DType::uint8, gpu0));
  }
  ASSERT_EQ(memory_stats(gpu0).bytes_cached, std::uint64_t{768} * kMiB);
  const Buffer buf(gpu0, 512 * kMiB);
  EXPECT_EQ(buf.size(), std::size_t{512} * kMiB);
  EXPECT_EQ(memory_stats(gpu0).bytes_cached, 0u);
  EXPECT_EQ(fake.bytes_allocated(0), driver0 + 512 * kMiB);
  try {
    const Buffer too_big(gpu0, std::size_t{2048} * kMiB);
    ADD_FAILURE() << "2 GiB on a device of 1 GiB";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), 2) << e.what();  // CUDA_ERROR_OUT_OF_MEMORY
  }
}

TEST_F(HollowGpu, AMemoryLimitInPercentIsAShareOfEachDevicesMemory) {
  EXPECT_CHILD_CASE_PASSED(
      xp_test::run_child_case("HollowGpu.DISABLED_QuarterOfTheMemory", {{"XP_GPU_MEMORY_LIMIT", "25%"}}));
}

TEST_F(HollowGpu, DISABLED_QuarterOfTheMemory) {
  constexpr std::int64_t kMiB = 1 << 20;
  ASSERT_EQ(memory_stats(gpu0).limit, std::uint64_t{256} * kMiB) << "25% of the fake's 1 GiB";
  ASSERT_EQ(memory_stats(gpu1).limit, std::uint64_t{256} * kMiB);
  Array a = empty({128 * kMiB}, DType::uint8, gpu0);
  const long long driver = fake.bytes_allocated(0);
  const MemoryStats before = memory_stats(gpu0);
  try {
    Array b = empty({256 * kMiB}, DType::uint8, gpu0);
    ADD_FAILURE() << "256 MiB beside 128 MiB passed a limit of 256 MiB";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.requested(), std::uint64_t{256} * kMiB);
    EXPECT_EQ(e.free(), std::uint64_t{256} * kMiB - before.bytes_in_use);
    EXPECT_EQ(e.limit(), std::uint64_t{256} * kMiB);
  }
  EXPECT_EQ(fake.bytes_allocated(0), driver) << "the driver was not asked";
  EXPECT_EQ(memory_stats(gpu0).bytes_in_use, before.bytes_in_use);
  // 129 MiB rounds up to a block of 256 MiB, more than is left under the limit: the message names
  // the block, so that its numbers explain the refusal.
  try {
    Array b = empty({129 * kMiB}, DType::uint8, gpu0);
    ADD_FAILURE() << "a block of 256 MiB beside 128 MiB passed a limit of 256 MiB";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.requested(), std::uint64_t{129} * kMiB);
    EXPECT_EQ(e.block(), std::uint64_t{256} * kMiB);
    EXPECT_EQ(e.free(), std::uint64_t{256} * kMiB - before.bytes_in_use);
    EXPECT_NE(std::string(e.what()).find("135266304 bytes requested (a block of 268435456), " +
                                         std::to_string(e.free()) + " free"),
              std::string::npos)
        << e.what();
  }
  // The other device has a limit of its own, which a block rounded up to it fills exactly.
  Array c = empty({200 * kMiB}, DType::uint8, gpu1);
  EXPECT_EQ(memory_stats(gpu1).bytes_in_use, std::uint64_t{256} * kMiB);
  EXPECT_THROW(empty({1}, DType::uint8, gpu1), OutOfMemory);
}

// Foreign memory on the second device, wrapped and exported: the device comes from the driver's
// record of the pointer, never from xp's default device, and each convention says cuda:1.
TEST_F(HollowGpu, ForeignMemoryOnTheSecondDeviceStaysThere) {
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  void* p = fake.foreign_alloc(1, v.size() * sizeof(float));
  ASSERT_NE(p, nullptr);
  std::memcpy(p, v.data(), v.size() * sizeof(float));
  auto released = std::make_shared<bool>(false);
  {
    CudaArrayInterface cai;
    cai.shape = {2, 3};
    cai.typestr = "<f4";
    cai.data = reinterpret_cast<std::uintptr_t>(p);
    std::shared_ptr<void> keep(p, [&, released](void* q) {
      *released = true;
      fake.foreign_free(q);
    });
    // A device that disagrees with the driver is refused before anything is wrapped.
    EXPECT_THROW(from_cuda_array_interface(cai, keep, gpu0), ValueError);
    Array a = from_cuda_array_interface(cai, keep);
    keep.reset();
    EXPECT_EQ(a.device(), gpu1);
    EXPECT_EQ(a.to_device(Device::cpu()).to_vector<float>(), v);
    EXPECT_FALSE(*released);

    // Exported again: the same memory, on device 1, in both conventions.
    const CudaArrayInterface back = to_cuda_array_interface(a, /*synchronize=*/true);
    EXPECT_EQ(back.data, reinterpret_cast<std::uintptr_t>(p));
    EXPECT_EQ(back.stream, 0u);
    // Without synchronize the consumer is told xp's stream of device 1 to wait on.
    EXPECT_EQ(to_cuda_array_interface(a).stream, reinterpret_cast<std::uintptr_t>(Stream::default_for(gpu1).handle()));
    // Streams named on either side are ordered on the device, one wait each, never on the host.
    Stream consumer(gpu1);
    const auto consumer_handle = reinterpret_cast<std::uintptr_t>(consumer.handle());
    long waits = fake.stream_waits();
    DLManagedTensorVersioned* with_stream = to_dlpack(a, consumer_handle);
    EXPECT_EQ(fake.stream_waits(), waits + 1) << "the consumer's stream waits for xp's";
    with_stream->deleter(with_stream);
    waits = fake.stream_waits();
    CudaArrayInterface produced = cai;
    produced.stream = consumer_handle;
    Array c = from_cuda_array_interface(produced, std::shared_ptr<void>());
    EXPECT_EQ(fake.stream_waits(), waits + 1) << "xp's stream waits for the producer's";
    EXPECT_EQ(c.device(), gpu1);
    DLManagedTensorVersioned* t = to_dlpack(a);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
    EXPECT_EQ(t->dl_tensor.device.device_id, 1);
    EXPECT_EQ(t->dl_tensor.data, p);
    Array b = from_dlpack(t);  // takes the tensor: its deleter runs when b goes
    EXPECT_EQ(b.device(), gpu1);
    // Mixed with an array of the first device: refused.
    EXPECT_THROW((b + ramp(6, DType::float32, gpu0).reshape({2, 3})).eval(), DeviceMismatch);
    // A kDLCUDA tensor claiming device 0 for memory the driver places on device 1: refused, and
    // its deleter called once.
    DLManagedTensorVersioned* wrong = to_dlpack(a);
    wrong->dl_tensor.device.device_id = 0;
    EXPECT_THROW(from_dlpack(wrong), ValueError);
  }
  EXPECT_TRUE(*released) << "the keep-alive is dropped with the last array over the memory";
}

// Memory of the second device, imported without naming a device, is asked of the driver before any
// device is made current: the first device gets no context (on a GPU: no memory, no failure when it
// cannot be used).
TEST_F(HollowGpu, ImportingMemoryOfTheSecondDeviceLeavesTheFirstAlone) {
  ASSERT_EQ(fake.primary_ctx_refcount(0), 0) << "nothing in this process has used cuda:0 yet";
  void* p = fake.foreign_alloc(1, 4096);
  ASSERT_NE(p, nullptr);
  {
    CudaArrayInterface c;
    c.shape = {1024};
    c.typestr = "<f4";
    c.data = reinterpret_cast<std::uintptr_t>(p);
    const Array a = from_cuda_array_interface(c, nullptr);
    EXPECT_EQ(a.device(), gpu1);
    EXPECT_EQ(sum(a).device(), gpu1);
  }
  EXPECT_EQ(fake.primary_ctx_refcount(0), 0);
  EXPECT_GE(fake.primary_ctx_refcount(1), 1);
  fake.foreign_free(p);
}

// Where cuBLAS cannot be used (here XP_CUBLAS names no file), float matmul of GPU arrays is computed
// by the CPU backend: the data goes there and back (real copies on the hollow device), so the values
// are the CPU's, bit for bit, and the result is on the operands' device. A child case, since the
// library search runs once per process; the parent never calls cuBLAS (it would bring its own driver).
TEST_F(HollowGpu, FloatMatmulWithoutCublasIsTheCpusOnTheSameDevice) {
  const xp_test::ProcessResult r = xp_test::run_child_case("HollowGpu.DISABLED_MatmulWithoutCublas",
                                                           {{"XP_CUBLAS", "/nonexistent/libcublas.so.13"}}, {"XP_LOG"});
  EXPECT_CHILD_CASE_PASSED(r);
  // The slow path is said once (XP_LOG's default level, warn), with the reason, for all eight matmuls.
  const std::string warning = "xp: warning: float matmul and vecdot of GPU arrays run on the CPU";
  const std::size_t first = r.err.find(warning);
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(warning, first + 1), std::string::npos) << "said more than once: " << r.err;
  EXPECT_NE(r.err.find("/nonexistent/libcublas.so.13"), std::string::npos) << r.err;
}

TEST_F(HollowGpu, DISABLED_MatmulWithoutCublas) {
  ASSERT_FALSE(blas_report().unavailable.empty()) << "XP_CUBLAS names no file: cuBLAS is unavailable";
  random::Generator g(7);
  for (DType t : {DType::float32, DType::float64, DType::float16, DType::bfloat16}) {
    const Array a = g.normal({3, 17, 9}, DType::float64, 0, 1, Device::cpu()).astype(t);
    const Array b = g.normal({9, 5}, DType::float64, 0, 1, Device::cpu()).astype(t);
    const Array want = matmul(a, b);
    for (MatmulPrecision p : {MatmulPrecision::float32, MatmulPrecision::tf32}) {
      const Array got = matmul(a.to_device(gpu1), b.to_device(gpu1), p);
      EXPECT_EQ(got.device(), gpu1) << name(t);
      ASSERT_EQ(got.size(), want.size()) << name(t);
      ASSERT_EQ(got.ndim(), want.ndim()) << name(t);
      const Array back = got.to_device(Device::cpu());
      EXPECT_EQ(std::memcmp(back.data(), want.data(), static_cast<std::size_t>(want.size()) * want.itemsize()), 0)
          << name(t) << ", " << to_string(p);
    }
  }
}

// cuBLAS's handle, against a fake cuBLAS (tests/fake_driver/fake_cublas.cpp: no GEMM runs). Set up
// once per device, its 32 MiB workspace counted in use for the life of the process; when a step of
// the setup fails the matmul is an error, and the handle is destroyed and its workspace given back,
// so retries leak nothing. Child cases: the library search runs once per process.
TEST_F(HollowGpu, ACublasHandleIsSetUpOnceAndAFailedSetupLeavesNothing) {
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("HollowGpu.DISABLED_CublasHandle",
                                                   {{"XP_CUBLAS", XP_FAKE_CUBLAS_PATH}}, {"XP_FAKE_CUBLAS_FAIL"}));
  for (const char* step : {"stream", "workspace", "math"}) {
    SCOPED_TRACE(std::string("XP_FAKE_CUBLAS_FAIL=") + step);
    EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case(
        "HollowGpu.DISABLED_CublasHandle", {{"XP_CUBLAS", XP_FAKE_CUBLAS_PATH}, {"XP_FAKE_CUBLAS_FAIL", step}}));
  }
}

TEST_F(HollowGpu, DISABLED_CublasHandle) {
  ASSERT_TRUE(blas_report().unavailable.empty())
      << "run by ACublasHandleIsSetUpOnceAndAFailedSetupLeavesNothing: " << blas_report().unavailable;
  void* lib = ::dlopen(XP_FAKE_CUBLAS_PATH, RTLD_NOW | RTLD_NOLOAD);  // loaded by xp's search
  ASSERT_NE(lib, nullptr);
  const auto creates = reinterpret_cast<long (*)()>(::dlsym(lib, "xp_fake_cublas_creates"));
  const auto destroys = reinterpret_cast<long (*)()>(::dlsym(lib, "xp_fake_cublas_destroys"));
  const auto gemms = reinterpret_cast<long (*)()>(::dlsym(lib, "xp_fake_cublas_gemms"));
  ASSERT_TRUE(creates != nullptr && destroys != nullptr && gemms != nullptr);
  const char* fail = std::getenv("XP_FAKE_CUBLAS_FAIL");
  const Array a = empty({64, 64}, DType::float32, gpu1), b = empty({64, 64}, DType::float32, gpu1);
  const std::uint64_t before = memory_stats(gpu1).bytes_in_use;
  constexpr std::uint64_t kWorkspace = std::uint64_t{32} << 20;  // Hopper's (the fake is sm_90)
  for (int i = 1; i <= 4; ++i) {
    if (fail == nullptr) {
      const Array c = matmul(a, b);
      EXPECT_EQ(gemms(), i);
      EXPECT_EQ(creates(), 1) << "one handle per device";
      EXPECT_EQ(memory_stats(gpu1).bytes_in_use, before + kWorkspace + static_cast<std::uint64_t>(c.nbytes()))
          << "the workspace stays";
    } else {
      EXPECT_THROW(matmul(a, b).eval(), Error);
      EXPECT_EQ(gemms(), 0);
      EXPECT_EQ(creates(), i) << "each attempt sets a new handle up";
      EXPECT_EQ(destroys(), i) << "and destroys it when the setup fails";
      EXPECT_EQ(memory_stats(gpu1).bytes_in_use, before) << "nothing kept from the failed setups";
    }
  }
  if (fail == nullptr) {
    // Complex matmul and vecdot reach cuBLAS too, one call each: CUDA_C_32F in CUBLAS_COMPUTE_32F
    // (4, 68), CUDA_C_64F in CUBLAS_COMPUTE_64F (5, 70), vecdot's first operand as CUBLAS_OP_C (2).
    const auto last = reinterpret_cast<int (*)(int)>(::dlsym(lib, "xp_fake_cublas_last_gemm"));
    ASSERT_NE(last, nullptr);
    const long g = gemms();
    (void)matmul(empty({8, 8}, DType::complex64, gpu1), empty({8, 8}, DType::complex64, gpu1));
    EXPECT_EQ(gemms(), g + 1);
    EXPECT_EQ(last(2), 4);
    EXPECT_EQ(last(3), 68);
    (void)vecdot(empty({4, 8}, DType::complex128, gpu1), empty({4, 8}, DType::complex128, gpu1));
    EXPECT_EQ(gemms(), g + 2);
    EXPECT_EQ(last(2), 5);
    EXPECT_EQ(last(3), 70);
    EXPECT_TRUE(last(0) == 2 || last(1) == 2) << "transa " << last(0) << ", transb " << last(1);
    // A reversed complex operand is packed first (copied as its real parts: a compiled copy kernel).
    const long launched = fake.launches();
    (void)vecdot(flip(empty({4, 8}, DType::complex64, gpu1), -1), empty({4, 8}, DType::complex64, gpu1));
    EXPECT_EQ(gemms(), g + 3);
    EXPECT_GT(fake.launches(), launched) << "the packing copy ran";
  }
  EXPECT_EQ(memory_stats(gpu0).bytes_in_use, 0u) << "cuda:0 untouched";
}

namespace {
const char* kSetSource = R"(
extern "C" __global__ void set(float* y, int n, float v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = v;
}
)";
}  // namespace

// Kernel::launch with arrays on a device slower than the host: the fake's events stay pending until
// synchronized (XP_FAKE_CUDA=...,pending), so each step shows: no hold on any stream (xp's pool
// reuses a block only ordered after the stream that last used it), and waits on the device.
TEST_F(HollowGpu, ArraysOfALaunchStayInUseUntilTheDeviceHasRunIt) {
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("HollowGpu.DISABLED_LaunchesOnASlowDevice",
                                                   {{"XP_FAKE_CUDA", "devices=2,hollow,memory=1073741824,pending"}}));
}

TEST_F(HollowGpu, DISABLED_LaunchesOnASlowDevice) {
  ASSERT_NE(std::string(std::getenv("XP_FAKE_CUDA")).find("pending"), std::string::npos);
  constexpr std::uint64_t kBlock = std::uint64_t{4} << 20;  // 2^20 float32
  Program program(kSetSource, {.name = "hollow_set.cu"});
  const Kernel k = program.kernel("set", gpu0);
  const MemoryStats s0 = memory_stats(gpu0);
  const long long driver0 = fake.bytes_allocated(0);
  const long launched0 = fake.launches();
  const long long K = static_cast<long long>(kBlock);
  // On xp's own stream a temporary passed to a launch and dropped at once goes back to the cache at
  // once: whatever uses its block next is xp's work on that stream, ordered after the kernel.
  k.launch({.grid = 1, .block = 256}, empty({1 << 20}, DType::float32, gpu0), 256, 1.0f);
  EXPECT_EQ(fake.launches(), launched0 + 1);
  EXPECT_EQ(memory_stats(gpu0).bytes_in_use, s0.bytes_in_use) << "nothing held";
  EXPECT_EQ(memory_stats(gpu0).bytes_cached, s0.bytes_cached + kBlock);
  Array u = empty({1 << 20}, DType::float32, gpu0);
  EXPECT_EQ(fake.bytes_allocated(0), driver0 + K) << "u has the temporary's block, in stream order";
  EXPECT_EQ(memory_stats(gpu0).bytes_cached, s0.bytes_cached);

  // On another stream of the device: the stream first waits for xp's (where the temporary was
  // made), and the temporary goes back to the cache at once as well, as last used on that stream
  // (an event recorded there). A new array of its size on xp's stream gets the block only after
  // xp's stream waits, on the device, for that event: the host never waits.
  Stream other(gpu0);
  const long waits_before = fake.stream_waits();
  k.launch({.grid = 1, .block = 256, .stream = other}, empty({1 << 20}, DType::float32, gpu0), 256, 1.5f);
  EXPECT_EQ(memory_stats(gpu0).bytes_in_use, s0.bytes_in_use + kBlock) << "u only: nothing held";
  EXPECT_EQ(fake.stream_waits(), waits_before + 1) << "the other stream waited for xp's";
  {
    const Array w = empty({1 << 20}, DType::float32, gpu0);
    EXPECT_EQ(fake.bytes_allocated(0), driver0 + 2 * K) << "the temporary's block, reused after a wait";
    EXPECT_EQ(fake.stream_waits(), waits_before + 2) << "xp's stream waited for the other's use of the block";
  }
  EXPECT_EQ(memory_stats(gpu0).bytes_cached, s0.bytes_cached + kBlock) << "w's block";
  k.launch({.grid = 1, .block = 256, .stream = other}, u, 256, 2.0f);
  EXPECT_EQ(memory_stats(gpu0).bytes_in_use, s0.bytes_in_use + kBlock) << "u only";
  k.launch({.grid = 1, .block = 256, .stream = other}, empty({1 << 20}, DType::float32, gpu0), 256, 2.5f);
  EXPECT_EQ(memory_stats(gpu0).bytes_in_use, s0.bytes_in_use + kBlock) << "u only";
  // free_all returns the cached blocks to the driver, after waiting for the streams that last used
  // them.
  k.launch({.grid = 1, .block = 256}, empty({1 << 20}, DType::float32, gpu0), 256, 2.75f);
  free_all(gpu0);
  EXPECT_EQ(memory_stats(gpu0).bytes_in_use, s0.bytes_in_use + kBlock) << "u only, after free_all";
  EXPECT_EQ(memory_stats(gpu0).bytes_cached, 0u);
  EXPECT_EQ(fake.bytes_allocated(0), driver0 + K) << "the rest went back to the driver";

  // u was last used on the other stream: another launch there waits for nothing, and u's next use
  // on xp's stream waits for the other stream, on the device.
  const long waits0 = fake.stream_waits();
  k.launch({.grid = 1, .block = 256, .stream = other}, u, 256, 3.0f);
  EXPECT_EQ(fake.stream_waits(), waits0);
  k.launch({.grid = 1, .block = 256}, u, 256, 3.5f);
  EXPECT_EQ(fake.stream_waits(), waits0 + 1);

  // A lazy argument is computed first (one more launch), a CPU array is refused before any launch.
  const long launched1 = fake.launches();
  k.launch({.grid = 1, .block = 256}, u * 2.0f, 256, 4.0f);
  EXPECT_EQ(fake.launches(), launched1 + 2);
  EXPECT_THROW(k.launch({.grid = 1, .block = 256}, zeros({256}, DType::float32, Device::cpu()), 256, 5.0f),
               DeviceMismatch);
  EXPECT_EQ(fake.launches(), launched1 + 2);
  // A kernel of one device with an array of the other: refused too.
  EXPECT_THROW(k.launch({.grid = 1, .block = 256}, empty({256}, DType::float32, gpu1), 256, 6.0f), DeviceMismatch);
  EXPECT_EQ(fake.launches(), launched1 + 2);
}

// Arrays of 2^31 elements and more (uint8: 2 GiB each, host memory the fake never touches): the
// contiguous kernels switch to 64-bit indices once, for every such size, and every launch's grid
// is within the device's limits (the fake checks them as the driver does). In a child with 24 GiB
// devices.
TEST_F(HollowGpu, ArraysPastTwoToThe31stElementsLaunchWithinTheLimits) {
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("HollowGpu.DISABLED_HugeArrays",
                                                   {{"XP_FAKE_CUDA", "devices=2,hollow,memory=25769803776"}}));
}

TEST_F(HollowGpu, DISABLED_HugeArrays) {
  constexpr std::int64_t kBig = (std::int64_t{1} << 31) + 64;
  (empty({4096}, DType::uint8, gpu0) + empty({4096}, DType::uint8, gpu0)).eval();
  const Counts small = counts(fake);
  {
    const Array a = empty({kBig}, DType::uint8, gpu0), b = empty({kBig}, DType::uint8, gpu0);
    (a + b).eval();
    const Counts big = counts(fake);
    EXPECT_EQ(big.loaded, small.loaded + 1) << "the 64-bit index variant, once";
    EXPECT_EQ(big.launched, small.launched + 1);
  }
  {
    const Array a = empty({kBig + 4032}, DType::uint8, gpu0), b = empty({kBig + 4032}, DType::uint8, gpu0);
    const Counts before = counts(fake);
    (a + b).eval();
    EXPECT_EQ(counts(fake).loaded, before.loaded) << "another size past 2^31: the same kernel";
    EXPECT_EQ(counts(fake).launched, before.launched + 1);
  }
  // Reductions of all of it, over rows and over columns (2^21 rows), and running sums.
  const Array m = empty({std::int64_t{1} << 21, 1024}, DType::uint8, gpu0);
  for (const auto& [what, f] : std::vector<std::pair<const char*, std::function<Array()>>>{
           {"sum", [&] { return sum(m); }},
           {"max", [&] { return max(m); }},
           {"sum over rows", [&] { return sum(m, {1}); }},
           {"sum over columns", [&] { return sum(m, {0}); }},
           {"argmax", [&] { return argmax(m.reshape({-1})); }},
           // Running sums of 2^21 rows of 8 (the output is in uint64: 8 bytes an element).
           {"cumulative_sum over rows",
            [&] {
              return cumulative_sum(m.slice({Slice(), Slice(0, 8)}), 1);
            }},
           {"cumulative_sum over columns", [&] {
              return cumulative_sum(m.slice({Slice(), Slice(0, 8)}), 0);
            }}}) {
    const long before = fake.launches();
    try {
      f().eval();
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
    EXPECT_GT(fake.launches(), before) << what;
  }
}
