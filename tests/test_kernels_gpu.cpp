// Run-time kernels on a real GPU (label `gpu`): launches checked bit for bit against a CPU
// reference, buffers, streams, events, foreign streams, module symbols and the error paths.
// Without a GPU every case reports "skipped: no GPU"; with XP_TEST_REQUIRE_GPU=1 that fails.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <new>
#include <random>

#include "gpu_test_kernels.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

// Counts heap allocations, to show that a launch makes none. (g++ sees free() after inlining the
// replaced operator new into library code and warns of a mismatch that is not one.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
static std::atomic<long> g_allocations{0};
void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

const char* const kSource = xp_test::kGpuTestKernels;

xp::ProgramOptions options() {
  xp::ProgramOptions o;
  o.name = "gpu_test.cu";
  o.options = {"--fmad=false"};
  o.name_expressions = {"fill<int>"};
  return o;
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-100.0f, 100.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

size_t first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return i;
  return a.size();
}

}  // namespace

TEST(GpuKernels, VectorAddIsBitExact) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  xp::Program prog(kSource, options());
  const xp::CompileStats s = prog.compile(dev);
  EXPECT_EQ(s.target, xp::gpu_info(dev).arch());
  const xp::Kernel k = prog.kernel("vector_add", dev);
  const int n = 1 << 20 | 37;  // not a multiple of the block
  const auto a = random_floats(n, 1), b = random_floats(n, 2);
  std::vector<float> ref(n);
  for (int i = 0; i < n; ++i) ref[i] = a[i] + b[i];
  auto da = xp::Buffer::from(dev, a), db = xp::Buffer::from(dev, b);
  xp::Buffer dc(dev, n * sizeof(float));
  dc.fill_bytes(0xff);  // NaN everywhere: an unwritten element cannot pass
  k.launch({.grid = (n + 255) / 256, .block = 256}, da, db, dc, n);
  xp::Stream::default_for(dev).synchronize();
  const auto c = dc.to_vector<float>();
  EXPECT_EQ(first_difference(c, ref), static_cast<size_t>(n));
}

TEST(GpuKernels, LaunchAllocatesNothing) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  xp::Program prog(kSource, options());
  const xp::Kernel k = prog.kernel("vector_add", dev);
  xp::Buffer a(dev, 4096), b(dev, 4096), c(dev, 4096);
  const xp::Stream st(dev);
  k.launch({.grid = 4, .block = 256}, a, b, c, 1024);  // warm: first launch on the default stream
  const long before = g_allocations.load();
  for (int i = 0; i < 1000; ++i) k.launch({.grid = 4, .block = 256}, a, b, c, 1024);
  for (int i = 0; i < 1000; ++i) k.launch({.grid = 4, .block = 256, .stream = &st}, a, b, c, 1024);
  const long after = g_allocations.load();
  st.synchronize();
  EXPECT_EQ(after - before, 0) << "heap allocations in 2000 launches";
}

TEST(GpuKernels, NoImplicitFmaWithFmadFalse) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  xp::Program prog(kSource, options());
  const xp::Kernel k = prog.kernel("axpy_fma_free", dev);
  const int n = 4096;
  const auto x = random_floats(n, 3), y0 = random_floats(n, 4);
  const float alpha = 1.0f / 3.0f;
  std::vector<float> ref(n);
  for (int i = 0; i < n; ++i) {
    volatile float prod = alpha * x[i];  // rounded multiply, then rounded add
    ref[i] = prod + y0[i];
  }
  auto dx = xp::Buffer::from(dev, x), dy = xp::Buffer::from(dev, y0);
  k.launch({.grid = n / 256, .block = 256}, alpha, dx, dy, n);
  EXPECT_EQ(first_difference(dy.to_vector<float>(), ref), static_cast<size_t>(n));
}

TEST(GpuKernels, StreamsEventsAndAsyncCopies) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  xp::Program prog(kSource, options());
  const xp::Kernel k = prog.kernel("vector_add", dev);
  xp::Stream st(dev);
  EXPECT_TRUE(st.owned());
  const int n = 1 << 22;
  const auto a = random_floats(n, 5), b = random_floats(n, 6);
  xp::Buffer da(dev, n * 4), db(dev, n * 4), dc(dev, n * 4);
  da.copy_from_host_async(a.data(), n * 4, st);
  db.copy_from_host_async(b.data(), n * 4, st);
  xp::Event start(dev), stop(dev);
  start.record(st);
  for (int r = 0; r < 5; ++r) k.launch({.grid = n / 256, .block = 256, .stream = &st}, da, db, dc, n);
  stop.record(st);
  std::vector<float> c(n);
  dc.copy_to_host_async(c.data(), n * 4, st);
  st.synchronize();
  const float ms = xp::Event::elapsed_ms(start, stop);
  EXPECT_GT(ms, 0.0f);
  for (int i = 0; i < n; i += 4099) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  // Device-to-device copy.
  xp::Buffer dd(dev, n * 4);
  dd.copy_from(dc, n * 4);
  EXPECT_EQ(dd.to_vector<float>(), c);
}

TEST(GpuKernels, WrapsAStreamAnotherLibraryOwns) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  dev.activate();
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr);
  using Create = int (*)(void**, unsigned);
  using Destroy = int (*)(void*);
  auto create = reinterpret_cast<Create>(dlsym(lib, "cuStreamCreate"));
  auto destroy = reinterpret_cast<Destroy>(dlsym(lib, "cuStreamDestroy_v2"));
  void* raw = nullptr;
  ASSERT_EQ(create(&raw, 1), 0);
  {
    const xp::Stream foreign = xp::Stream::wrap(dev, raw);
    EXPECT_FALSE(foreign.owned());
    EXPECT_EQ(foreign.handle(), raw);
    xp::Program prog(kSource, options());
    const xp::Kernel k = prog.kernel("fill<int>", dev);
    xp::Buffer out(dev, 1000 * sizeof(int));
    k.launch({.grid = 4, .block = 256, .stream = foreign}, out, 7, 1000);  // by reference
    foreign.synchronize();
    EXPECT_EQ(out.to_vector<int>(), std::vector<int>(1000, 7));
  }
  EXPECT_EQ(destroy(raw), 0) << "xp must not have destroyed a stream it does not own";
}

TEST(GpuKernels, ModuleSymbolsAndSeveralKernels) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  xp::Program prog(kSource, options());
  std::size_t bytes = 0;
  EXPECT_NE(prog.global_address("counter", dev, &bytes), 0u);
  EXPECT_EQ(bytes, 8u);
  EXPECT_NE(prog.global_address("scale_by", dev, &bytes), 0u);
  EXPECT_EQ(bytes, 4u);
  EXPECT_THROW(prog.global_address("no_such_symbol", dev), xp::ValueError);
  prog.kernel("count_up", dev).launch({.grid = 3, .block = 128}, 2);
  xp::Buffer out(dev, 8);
  prog.kernel("read_counter", dev).launch({.grid = 1, .block = 1}, out);
  EXPECT_EQ(out.to_vector<unsigned long long>()[0], 3ull * 128 * 2);
}

TEST(GpuKernels, DynamicSharedMemoryAndOccupancy) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  xp::Program prog(kSource, options());
  const xp::Kernel k = prog.kernel("shared_sum", dev);
  std::vector<int> in(512);
  for (int i = 0; i < 512; ++i) in[i] = i * 3 - 100;
  auto din = xp::Buffer::from(dev, in);
  xp::Buffer out(dev, 4);
  k.launch({.grid = 1, .block = 512, .shared_bytes = 512 * 4}, din, out);
  long long ref = 0;
  for (int v : in) ref += v;
  EXPECT_EQ(out.to_vector<int>()[0], ref);
  int min_grid = 0;
  const int block = prog.kernel("vector_add", dev).max_potential_block_size(0, &min_grid);
  EXPECT_GE(block, 32);
  EXPECT_LE(block, 1024);
  EXPECT_GT(min_grid, 0);
  EXPECT_EQ(prog.kernel("vector_add", dev).parameter_sizes(), (std::vector<std::size_t>{8, 8, 8, 4}));
}

// xp reads parameter sizes from the cubin (no driver call); the driver must agree.
TEST(GpuKernels, ParameterSizesAgreeWithTheDriver) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  xp::Program prog(kSource, options());
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr);
  using ParamInfo = int (*)(void*, std::size_t, std::size_t*, std::size_t*);
  auto info = reinterpret_cast<ParamInfo>(dlsym(lib, "cuFuncGetParamInfo"));
  if (info == nullptr) GTEST_SKIP() << "this driver has no cuFuncGetParamInfo (CUDA 12.4+)";
  for (const char* name : {"vector_add", "mixed", "count_up", "read_counter", "fill<int>"}) {
    const xp::Kernel k = prog.kernel(name, dev);
    std::vector<std::size_t> driver;
    std::size_t offset = 0, size = 0;
    while (info(k.handle(), driver.size(), &offset, &size) == 0) driver.push_back(size);
    EXPECT_EQ(k.parameter_sizes(), driver) << name;
  }
  EXPECT_EQ(prog.kernel("mixed", dev).parameter_sizes(), (std::vector<std::size_t>{1, 2, 16, 8, 8, 4}));
}

TEST(GpuKernels, BadLaunchesAreRefusedBeforeTheDriver) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  xp::Program prog(kSource, options());
  const xp::Kernel k = prog.kernel("vector_add", dev);
  xp::Buffer a(dev, 1024), b(dev, 1024), c(dev, 1024);
  const int n = 256;
  auto expect_error = [&](auto&& f, const char* needle) {
    try {
      f();
      ADD_FAILURE() << "no error; expected one mentioning " << needle;
    } catch (const xp::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error([&] { k.launch({.grid = 0, .block = 256}, a, b, c, n); }, "zero dimension");
  expect_error([&] { k.launch({.grid = 1, .block = 2048}, a, b, c, n); }, "exceeds");
  expect_error(
      [&] {
        k.launch({.grid = 1, .block = {32, 32, 2}}, a, b, c, n);
      },
      "2048 threads per block; the device allows at most 1024");
  expect_error([&] { k.launch({.grid = 1, .block = 256, .shared_bytes = 1u << 30}, a, b, c, n); }, "shared memory");
  expect_error([&] { k.launch({.grid = 1, .block = 256}, a, b, c); }, "parameters");
  // The device's limits are asked of the driver once per device: a kernel of another module is held
  // to the same ones (1,024 threads, 65,535 blocks in y on every GPU xp supports).
  xp::ProgramOptions second = options();
  second.name = "second_module.cu";
  const xp::Kernel k2 = xp::Program(kSource, second).kernel("vector_add", dev);
  expect_error([&] { k2.launch({.grid = 1, .block = 2048}, a, b, c, n); }, "exceeds");
  expect_error([&] { k2.launch({.grid = {1, 65536, 1}, .block = 256}, a, b, c, n); }, "exceeds");
  expect_error([&] { k2.launch({.grid = 1, .block = 256, .shared_bytes = 1u << 30}, a, b, c, n); }, "shared memory");
  expect_error([&] { k.launch({.grid = 1, .block = 256}, a, b, c, std::size_t{256}); }, "parameters");
  try {
    prog.kernel("vectorAdd", dev);
    ADD_FAILURE() << "unknown kernel accepted";
  } catch (const xp::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("vector_add"), std::string::npos) << "the list of kernels: " << e.what();
  }
  EXPECT_THROW(prog.kernel("vector_add", xp::Device::cuda(xp::cuda_status().device_count)), xp::DeviceUnavailable);
  EXPECT_THROW(xp::Buffer(xp::Device::cpu(), 16), xp::ValueError);
  EXPECT_THROW(a.copy_from_host(std::vector<char>(2048).data(), 2048), xp::ValueError);
}

// A function's own limits (registers, __launch_bounds__) are asked of the driver only when needed:
// a launch beyond them is refused by the driver and explained with them; dynamic shared memory past
// the default allowance is raised once and never lowered by a smaller launch.
TEST(GpuKernels, TheFunctionsOwnLimitsExplainARefusal) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  xp::ProgramOptions o;
  o.name = "bounded.cu";
  xp::Program prog(R"(extern "C" __global__ void __launch_bounds__(64) bounded(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
})",
                   o);
  const xp::Kernel k = prog.kernel("bounded", dev);
  xp::Buffer out(dev, 256 * sizeof(int));
  try {
    k.launch({.grid = 1, .block = 128}, out);
    ADD_FAILURE() << "128 threads accepted by a kernel bounded to 64";
  } catch (const xp::ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("128 threads per block; this kernel allows at most 64 ("), std::string::npos) << what;
    EXPECT_NE(what.find("registers per thread"), std::string::npos) << what;
  }
  k.launch({.grid = 4, .block = 64}, out);  // the refusal left nothing behind
  const std::vector<int> got = out.to_vector<int>();
  for (int i = 0; i < 256; ++i) ASSERT_EQ(got[i], (i / 64) * 1000 + i % 64) << i;
  EXPECT_GT(k.registers(), 0);
  EXPECT_LE(k.registers(), 255);

  xp::Program shared(kSource, options());
  const xp::Kernel s = shared.kernel("shared_sum", dev);
  std::vector<int> in(512);
  for (int i = 0; i < 512; ++i) in[i] = 7 * i - 1000;
  long long ref = 0;
  for (int v : in) ref += v;
  auto din = xp::Buffer::from(dev, in);
  xp::Buffer sum(dev, 4);
  for (unsigned bytes : {50u << 10, 2048u, 60u << 10}) {
    sum.fill_bytes(0);
    s.launch({.grid = 1, .block = 512, .shared_bytes = bytes}, din, sum);  // 50 and 60 KiB: above the default 48
    EXPECT_EQ(sum.to_vector<int>()[0], ref) << bytes;
  }
  try {
    s.launch({.grid = 1, .block = 512, .shared_bytes = 1u << 30}, din, sum);
    ADD_FAILURE() << "1 GiB of shared memory accepted";
  } catch (const xp::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("exceed the device's"), std::string::npos) << e.what();
  }
}

TEST(GpuKernels, OutOfMemoryKeepsTheDriversCode) {
  XP_REQUIRE_GPU();
  try {
    xp::Buffer huge(xp::Device::cuda(0), std::size_t{1} << 50);
    FAIL() << "a 1 PiB allocation succeeded";
  } catch (const xp::CudaError& e) {
    EXPECT_EQ(e.code(), 2);
    EXPECT_EQ(e.name(), "CUDA_ERROR_OUT_OF_MEMORY");
    EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos);
  }
}

// A planted illegal address spoils the context for the rest of the process: it runs in a fresh
// process (this same program, on the disabled case below).
TEST(GpuKernelsFault, IllegalAddressSurfacesAtSynchronize) {
  XP_REQUIRE_GPU();
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("GpuKernelsFault.DISABLED_PlantedFaultChild"));
}

TEST(GpuKernelsFault, DISABLED_PlantedFaultChild) {
  const xp::Device dev = xp::Device::cuda(0);
  xp::Program prog(kSource, options());
  xp::Buffer p(dev, 16);
  prog.kernel("write_far", dev).launch({.grid = 1, .block = 1}, p);
  try {
    xp::Stream::default_for(dev).synchronize();
    FAIL() << "the fault did not surface";
  } catch (const xp::CudaError& e) {
    EXPECT_EQ(e.code(), 700);
    EXPECT_EQ(e.name(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_NE(std::string(e.what()).find("compute-sanitizer"), std::string::npos) << e.what();
  }
}
