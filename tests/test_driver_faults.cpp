// Driver faults in the middle of a run, on the fake driver's hollow device (tests/fake_driver/
// fake_cuda.cpp: XP_FAKE_CUDA=...,fail=CALL:CODE@N): a launch refused, a kernel that faults (sticky,
// reported at the launch or at the next synchronize or copy), a device gone, a module that does not
// load, no pinned memory, a device too small. Each fault must come out of xp as a typed error that
// names the driver call and the code, and the process must go on: a later operation works (a fault
// that is not sticky) or fails the same clear way (a broken context), and the process exits
// normally (no exception out of a destructor, no abort, no hang). Each case runs in a child process
// of its own (the fault is counted from the process's first call), under `timeout` so that a hang is
// a failure rather than a stuck test. Kernels are compiled by the real NVRTC; the fake runs none.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fake_driver/fake_handle.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

// This process's kernel cache in a folder of its own (as xp_test::ProcessCache), unless the parent
// names one for a sweep of children (XP_TEST_FAULTS_CACHE): they then compile each kernel once.
struct FaultsCache {
  xp_test::TempDir dir;
  std::string folder = dir / "kernels";
  FaultsCache() {
    const char* shared = std::getenv("XP_TEST_FAULTS_CACHE");
    ::setenv("XP_CACHE_DIR", shared != nullptr ? shared : folder.c_str(), 1);
  }
};
const FaultsCache process_cache;

constexpr const char* kBase = "devices=1,hollow,memory=1073741824";

class Fake : public xp_test::FakeDriverHandle {
 public:
  long calls(const char* name) const {
    const auto f = fn<long (*)(const char*)>("xp_fake_cuda_calls");
    return f != nullptr ? f(name) : -1;
  }
  int sticky_error() const {
    const auto f = fn<int (*)()>("xp_fake_cuda_sticky_error");
    return f != nullptr ? f() : -1;
  }
};

// Runs the child case `test` with XP_FAKE_CUDA=kBase,<faults> (and `env`), killed after a generous
// while if it hangs (exit 124: a hang, reported as such).
xp_test::ProcessResult run_faulty(const std::string& test, const std::string& faults,
                                  std::map<std::string, std::string> env = {}) {
  env["XP_FAKE_CUDA"] = std::string(kBase) + (faults.empty() ? "" : "," + faults);
  env.emplace("XP_PRELOAD_KERNELS", "0");  // no background loads: every driver call is the test's
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   "--gtest_also_run_disabled_tests", "--gtest_filter=" + test};
  if (::access("/usr/bin/timeout", X_OK) == 0) argv.insert(argv.begin(), {"/usr/bin/timeout", "-k", "10", "300"});
  return xp_test::run_process(argv, env, {"XP_LOG"});
}

// The child ran its one case, passed, and the process ended normally: exit 0 (not killed by a
// signal, not stopped by `timeout`), and nothing escaped to std::terminate.
#define EXPECT_CLEAN_CHILD(r)                                                                               \
  do {                                                                                                      \
    const ::xp_test::ProcessResult& c_ = (r);                                                               \
    EXPECT_NE(c_.exit_code, 124) << "the child hung:\n" << c_.out << c_.err;                                \
    EXPECT_EQ(c_.signal, 0) << "the child was killed by signal " << c_.signal << ":\n" << c_.out << c_.err; \
    EXPECT_CHILD_CASE_PASSED(c_);                                                                           \
    EXPECT_EQ(c_.err.find("terminate called"), std::string::npos) << c_.err;                                \
  } while (0)

std::string code_text(int code, const std::string& name) {
  return name + " (" + std::to_string(code) + ")";
}

// `f` throws xp::CudaError with this code and name from the driver call `call` (any call when
// empty), and its text says "<call> failed: <NAME> (<code>)".
::testing::AssertionResult FailsWith(const std::function<void()>& f, int code, const std::string& name,
                                     const std::string& call = "") {
  try {
    f();
  } catch (const CudaError& e) {
    const std::string what = e.what();
    if (e.code() != code || e.name() != name)
      return ::testing::AssertionFailure()
             << "CudaError " << e.code() << " " << e.name() << ", not " << code_text(code, name) << ": " << what;
    if (e.call().empty() || (!call.empty() && e.call() != call))
      return ::testing::AssertionFailure() << "from '" << e.call() << "', not '" << call << "': " << what;
    const std::string want = e.call() + " failed: " + code_text(code, name);
    if (what.rfind(want, 0) != 0)
      return ::testing::AssertionFailure() << "the text does not begin '" << want << "': " << what;
    return ::testing::AssertionSuccess() << what;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something else than CudaError: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception; expected " << code_text(code, name) << " from "
                                       << (call.empty() ? std::string("a driver call") : call);
}

class DriverFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* driver = std::getenv("XP_CUDA_DRIVER");
    ASSERT_TRUE(driver != nullptr && std::string(driver) == XP_FAKE_DRIVER_PATH)
        << "run through ctest, which sets XP_CUDA_DRIVER=" << XP_FAKE_DRIVER_PATH;
    const CudaStatus s = cuda_status();
    if (s.reason == CudaReason::no_usable_nvrtc)
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no usable NVRTC, so CUDA is not available: " + s.detail);
    ASSERT_TRUE(s.available) << to_string(s.reason) << ": " << s.detail;
  }
  // In a child: the fault this case was written for is the one the fake was given.
  void expect_faults(const std::string& faults) {
    const char* spec = std::getenv("XP_FAKE_CUDA");
    ASSERT_TRUE(spec != nullptr && std::string(spec).find(faults) != std::string::npos)
        << "run by its parent test with fail=" << faults << ", not " << (spec ? spec : "(unset)");
  }
  const Device gpu = Device::cuda(0);
  Fake fake;
};

Array ramp(std::int64_t n, const Device& d) {
  return arange(0, n, 1, DType::float32, Device::cpu()).to_device(d);
}

std::vector<float> ramp_values(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  return v;
}

const char* kSetSource = R"(
extern "C" __global__ void set(float* y, int n, float v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = v;
}
)";

// The fake's own spelling of the codes (as a real driver's cuGetErrorName).
constexpr const char* kOutOfResources = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
constexpr const char* kIllegalAddress = "CUDA_ERROR_ILLEGAL_ADDRESS";
constexpr const char* kLaunchFailed = "CUDA_ERROR_LAUNCH_FAILED";
constexpr const char* kDeviceUnavailable = "CUDA_ERROR_DEVICE_UNAVAILABLE";

}  // namespace

// ---- the fake's fault syntax itself

TEST_F(DriverFaults, TheFakeCountsCallsAndFailsTheNthOne) {
  EXPECT_CLEAN_CHILD(
      run_faulty("DriverFaults.DISABLED_FakeSyntax", "fail=cuMemGetInfo:999@2,fail=cuDeviceGetName:1@3+"));
}

TEST_F(DriverFaults, DISABLED_FakeSyntax) {
  expect_faults("fail=cuMemGetInfo:999@2");
  const auto get_info = fake.fn<int (*)(std::size_t*, std::size_t*)>("cuMemGetInfo");
  const auto get_name = fake.fn<int (*)(char*, int, int)>("cuDeviceGetName");
  ASSERT_TRUE(get_info != nullptr && get_name != nullptr);
  gpu.activate();  // a current context on this thread, for cuMemGetInfo
  const long info0 = fake.calls("cuMemGetInfo"), name0 = fake.calls("cuDeviceGetName");
  ASSERT_LT(info0, 2) << "the test makes the second call itself";
  std::size_t free = 0, total = 0;
  char text[64];
  std::vector<int> info_results, name_results;
  for (long i = info0; i < 4; ++i) info_results.push_back(get_info(&free, &total));
  for (long i = name0; i < 5; ++i) name_results.push_back(get_name(text, sizeof text, 0));
  std::vector<int> want_info, want_name;
  for (long i = info0 + 1; i <= 4; ++i) want_info.push_back(i == 2 ? 999 : 0);
  for (long i = name0 + 1; i <= 5; ++i) want_name.push_back(i >= 3 ? 1 : 0);
  EXPECT_EQ(info_results, want_info) << "only the 2nd call fails";
  EXPECT_EQ(name_results, want_name) << "every call from the 3rd on fails";
  EXPECT_EQ(fake.calls("cuMemGetInfo"), 4);
  EXPECT_EQ(fake.sticky_error(), 0) << "nothing sticky";
}

TEST_F(DriverFaults, StickyFaultsBreakEveryLaterCallOnTheContext) {
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_FakeSticky", "fail=cuMemsetD8Async:700@1!"));
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_FakeSticky", "fail=cuMemsetD8Async:700@1~"));
}

TEST_F(DriverFaults, DISABLED_FakeSticky) {
  const std::string spec = std::getenv("XP_FAKE_CUDA");
  const bool after = spec.find("@1~") != std::string::npos;
  const auto memset = fake.fn<int (*)(unsigned long long, unsigned char, std::size_t, void*)>("cuMemsetD8Async");
  const auto alloc = fake.fn<int (*)(unsigned long long*, std::size_t)>("cuMemAlloc");
  const auto attr = fake.fn<int (*)(int*, int, int)>("cuDeviceGetAttribute");
  ASSERT_TRUE(memset != nullptr && alloc != nullptr && attr != nullptr);
  gpu.activate();
  unsigned long long p = 0;
  ASSERT_EQ(alloc(&p, 256), 0);
  EXPECT_EQ(memset(p, 0, 256, nullptr), after ? 0 : 700) << "@N~: the call itself succeeds";
  EXPECT_EQ(fake.sticky_error(), 700);
  unsigned long long q = 0;
  EXPECT_EQ(alloc(&q, 256), 700) << "every later call on the context";
  EXPECT_EQ(memset(p, 0, 256, nullptr), 700);
  int v = 0;
  EXPECT_EQ(attr(&v, 16, 0), 0) << "device queries still answer";
  EXPECT_EQ(v, 132);
}

// ---- through arrays

// A launch refused (not sticky): the fused kernel's launch is CudaError naming cuLaunchKernel and
// 701; the array stays lazy and intact, and evaluating it again launches and works.
TEST_F(DriverFaults, ArraysARefusedLaunchIsAnErrorAndTheNextWorks) {
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_ArraysRefusedLaunch", "fail=cuLaunchKernel:701@1"));
}

TEST_F(DriverFaults, DISABLED_ArraysRefusedLaunch) {
  expect_faults("fail=cuLaunchKernel:701@1");
  const Array a = ramp(1000, gpu), b = ramp(1000, gpu);
  ASSERT_EQ(fake.calls("cuLaunchKernel"), 0) << "uploads launch nothing";
  Array c = a + b;
  EXPECT_TRUE(FailsWith([&] { c.eval(); }, 701, kOutOfResources, "cuLaunchKernel"));
  EXPECT_EQ(fake.launches(), 0);
  const std::uint64_t in_use = memory_stats(gpu).bytes_in_use;
  c.eval();  // the second launch goes through
  EXPECT_EQ(fake.launches(), 1);
  EXPECT_EQ(c.device(), gpu);
  EXPECT_EQ(memory_stats(gpu).bytes_in_use, in_use + 4096u) << "one output block, nothing left of the failure";
  EXPECT_EQ(a.to_device(Device::cpu()).to_vector<float>(), ramp_values(1000)) << "copies still work";
  synchronize(gpu);
}

// A kernel fault (sticky), reported by the launch itself or, for a kernel that faults on the device,
// by whatever call comes next (a copy, a synchronize). Every later operation fails with the same
// code from the call it makes; nothing hangs, and the process exits normally with arrays alive on
// the broken device.
TEST_F(DriverFaults, ArraysAStickyKernelFaultIsReportedAndEveryLaterOperationFailsClearly) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fail=cuLaunchKernel:700@1!", "700"},       // reported at the launch
      {"fail=cuLaunchKernel:719@1~", "719"},       // reported at the next call
      {"fail=cuStreamSynchronize:700@3!", "700"},  // at a stream synchronize (the 3rd: after two uploads)
      {"fail=cuCtxSynchronize:719@1!", "719"},     // at synchronize(device)
      {"fail=cuMemcpyDtoHAsync:700@1!", "700"},    // at a copy back
      {"fail=cuLaunchKernel:46@1~", "46"},         // the device gone
  };
  for (const auto& [faults, code] : cases) {
    SCOPED_TRACE(faults);
    EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_ArraysStickyFault", faults, {{"XP_TEST_FAULT_CODE", code}}));
  }
}

TEST_F(DriverFaults, DISABLED_ArraysStickyFault) {
  const char* code_text = std::getenv("XP_TEST_FAULT_CODE");
  ASSERT_NE(code_text, nullptr);
  const int code = std::atoi(code_text);
  const std::string name = code == 700 ? kIllegalAddress : code == 719 ? kLaunchFailed : kDeviceUnavailable;
  const std::string spec = std::getenv("XP_FAKE_CUDA");
  const auto fails = [&](const std::function<void()>& f, const std::string& call = "") {
    return FailsWith(f, code, name, call);
  };
  // Two uploads, a launch, a copy back, synchronize(device): the first of them the fault reaches
  // fails with it, and so does each one after.
  std::vector<std::function<void()>> steps;
  Array a, b, c;
  steps.push_back([&] { a = ramp(1000, gpu); });
  steps.push_back([&] { b = ramp(1000, gpu); });
  steps.push_back([&] { c = (a + b).eval(); });
  steps.push_back([&] { (void)a.to_device(Device::cpu()); });
  steps.push_back([&] { synchronize(gpu); });
  std::size_t failed_at = steps.size();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (failed_at == steps.size()) {
      try {
        steps[i]();
        continue;
      } catch (const CudaError&) {
        failed_at = i;
      } catch (const std::exception& e) {
        FAIL() << "step " << i << " threw something else than CudaError: " << e.what();
      }
      EXPECT_TRUE(fails(steps[i])) << "step " << i << " once more";
    } else {
      EXPECT_TRUE(fails(steps[i])) << "step " << i << ", after the fault";
    }
  }
  ASSERT_LT(failed_at, steps.size()) << "the fault never surfaced";
  EXPECT_EQ(fake.sticky_error(), code);
  if (spec.find("cuLaunchKernel") != std::string::npos && spec.find("@1!") != std::string::npos) {
    EXPECT_EQ(failed_at, 2u) << "reported by the launch";
    EXPECT_TRUE(fails([&] { (void)(a + b).eval(); }, "cuLaunchKernel"));
  }
  if (spec.find("@1~") != std::string::npos) {
    EXPECT_EQ(failed_at, 3u) << "the launch went; the copy back reports it";
  }
  // Everything else that needs the device fails clearly as well.
  EXPECT_TRUE(fails([&] { Stream::default_for(gpu).synchronize(); }, "cuStreamSynchronize"));
  EXPECT_TRUE(fails([&] { synchronize(gpu); }, "cuCtxSynchronize"));
  EXPECT_TRUE(fails([&] { (void)ramp(1 << 20, gpu); }));  // a new block: cuMemAlloc
  EXPECT_TRUE(fails([&] { free_all(gpu); }, "cuStreamSynchronize"));
  EXPECT_TRUE(fails([&] { (void)Stream(gpu); }, "cuStreamCreate"));
  // CPU work is untouched.
  EXPECT_EQ((arange(0, 4, 1, DType::float32, Device::cpu()) * 2.0f).to_vector<float>(),
            (std::vector<float>{0, 2, 4, 6}));
  // a, b and c (if made) are destroyed with the broken context, at the end of this scope and at exit.
}

// A module that does not load (222 CUDA_ERROR_UNSUPPORTED_PTX_VERSION, once): the fused kernel's
// evaluation is CudaError naming cuModuleLoadData, and the next evaluation loads it and launches.
// Every time (218 CUDA_ERROR_INVALID_PTX, from the first call on): the same error each time, never a
// kernel half made.
TEST_F(DriverFaults, ArraysAModuleThatDoesNotLoadIsAnError) {
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_ArraysModuleLoad", "fail=cuModuleLoadData:222@1",
                                {{"XP_TEST_FAULT_CODE", "222"}}));
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_ArraysModuleLoad", "fail=cuModuleLoadData:218@1+",
                                {{"XP_TEST_FAULT_CODE", "218"}}));
}

TEST_F(DriverFaults, DISABLED_ArraysModuleLoad) {
  const int code = std::atoi(std::getenv("XP_TEST_FAULT_CODE"));
  const std::string name = code == 222 ? "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" : "CUDA_ERROR_INVALID_PTX";
  const Array a = ramp(1000, gpu), b = ramp(1000, gpu);
  Array c = a + b;
  EXPECT_TRUE(FailsWith([&] { c.eval(); }, code, name, "cuModuleLoadData"));
  EXPECT_EQ(fake.launches(), 0);
  if (code == 222) {
    c.eval();
    EXPECT_EQ(fake.modules_loaded(), 1);
    EXPECT_EQ(fake.launches(), 1);
  } else {
    EXPECT_TRUE(FailsWith([&] { c.eval(); }, code, name, "cuModuleLoadData"));
    EXPECT_TRUE(FailsWith([&] { (void)(a - b).eval(); }, code, name, "cuModuleLoadData"));
    EXPECT_EQ(fake.modules_loaded(), 0);
    EXPECT_EQ(fake.launches(), 0);
  }
  EXPECT_EQ(a.to_device(Device::cpu()).to_vector<float>(), ramp_values(1000)) << "copies still work";
}

// Pinned staging unavailable (cuMemHostAlloc out of memory, for the first buffer or the second, or
// no event for a buffer): large copies go to the driver directly and keep their values, the copy that
// found staging unavailable included; staging is not tried again.
TEST_F(DriverFaults, ArraysWithoutPinnedMemoryCopyDirectly) {
  for (const char* faults : {"fail=cuMemHostAlloc:2@1+", "fail=cuMemHostAlloc:2@2", "fail=cuEventCreate:2@1"}) {
    SCOPED_TRACE(faults);
    EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_ArraysNoPinnedMemory", faults, {{"XP_NUM_THREADS", "4"}}));
  }
}

TEST_F(DriverFaults, DISABLED_ArraysNoPinnedMemory) {
  const std::string spec = std::getenv("XP_FAKE_CUDA");
  ASSERT_TRUE(spec.find("fail=cuMemHostAlloc:2@") != std::string::npos ||
              spec.find("fail=cuEventCreate:2@1") != std::string::npos)
      << spec;
  constexpr std::int64_t n = std::int64_t{5} << 20;  // 20 MiB of float32: staged when pinned memory is had
  const std::vector<float> want = ramp_values(n);
  for (int i = 0; i < 3; ++i) {
    const Array a = asarray(want, std::nullopt, Device::cpu()).to_device(gpu);
    EXPECT_EQ(a.to_device(Device::cpu()).to_vector<float>(), want) << "round trip " << i;
  }
  const long tries = fake.calls("cuMemHostAlloc");
  EXPECT_GE(tries, 1);
  EXPECT_LE(tries, 2) << "staging is set up once; a failure is not retried at every copy";
  EXPECT_LE(fake.calls("cuEventCreate"), 2);
}

// Staging kept consistent across a failed chunk: the second chunk's copy of a staged transfer fails
// (not sticky), then the same transfers succeed and keep their values.
TEST_F(DriverFaults, ArraysAStagedCopyThatFailsMidwayLeavesTheStagingUsable) {
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_ArraysStagedCopyFails",
                                "fail=cuMemcpyHtoDAsync:999@2,fail=cuMemcpyDtoHAsync:999@2",
                                {{"XP_NUM_THREADS", "4"}}));
}

TEST_F(DriverFaults, DISABLED_ArraysStagedCopyFails) {
  expect_faults("fail=cuMemcpyHtoDAsync:999@2,fail=cuMemcpyDtoHAsync:999@2");
  constexpr std::int64_t n = std::int64_t{6} << 20;  // 24 MiB of float32: three chunks of 8 MiB
  const std::vector<float> want = ramp_values(n);
  const Array host = asarray(want, std::nullopt, Device::cpu());
  EXPECT_TRUE(FailsWith([&] { (void)host.to_device(gpu); }, 999, "CUDA_ERROR_UNKNOWN", "cuMemcpyHtoDAsync"));
  ASSERT_EQ(fake.calls("cuMemcpyHtoDAsync"), 2) << "staged: one call per chunk, the second failed";
  const Array a = host.to_device(gpu);
  EXPECT_TRUE(FailsWith([&] { (void)a.to_device(Device::cpu()); }, 999, "CUDA_ERROR_UNKNOWN", "cuMemcpyDtoHAsync"));
  EXPECT_EQ(a.to_device(Device::cpu()).to_vector<float>(), want);
  EXPECT_EQ(host.to_device(gpu).to_device(Device::cpu()).to_vector<float>(), want);
}

// A device too small for a fused expression's output: xp::OutOfMemory (not a driver error), the lazy
// value intact; once arrays are dropped, the same expression works (xp gives its cached blocks back to
// the driver and allocates again by itself).
TEST_F(DriverFaults, ArraysADeviceTooSmallIsOutOfMemoryAndRecovers) {
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_ArraysDeviceTooSmall", "memory=54525952"));
}

TEST_F(DriverFaults, DISABLED_ArraysDeviceTooSmall) {
  expect_faults("memory=54525952");                  // 52 MiB (the last memory= of XP_FAKE_CUDA counts)
  constexpr std::int64_t n = std::int64_t{4} << 20;  // 16 MiB of float32
  const Array a = ramp(n, gpu), b = ramp(n, gpu);
  Array ballast1 = ramp(n / 2, gpu), ballast2 = ramp(n / 2, gpu);  // 48 MiB in use: 4 MiB left
  Array c = a * b + a;
  try {
    c.eval();
    ADD_FAILURE() << "no OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.device(), "cuda:0");
    EXPECT_EQ(e.requested(), static_cast<std::uint64_t>(n) * 4u);
    EXPECT_LT(e.free(), e.requested()) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not OutOfMemory: " << e.what();
  }
  EXPECT_EQ(fake.launches(), 0);
  ballast1 = Array();
  ballast2 = Array();  // two 8 MiB blocks cached, not yet the driver's
  c.eval();
  EXPECT_EQ(fake.launches(), 1);
  EXPECT_EQ(memory_stats(gpu).bytes_in_use, static_cast<std::uint64_t>(3 * n) * 4u);
  EXPECT_EQ(b.to_device(Device::cpu()).to_vector<float>(), ramp_values(n));
}

// One fault (not sticky) at each call in turn of an entry point (launches, module loads, copies,
// stream synchronizes, allocations), across a run of array operations (elementwise, reductions
// plain and fused, var, a scan, take, argmax, random draws, copies both ways): the operation that
// meets it is CudaError with that call and code, leaves no memory in use and a random generator
// where it was, and the same operation tried again works. The sweep goes on until a run meets no
// fault (every call was faulted once).
TEST_F(DriverFaults, ArraysAFaultAtAnyCallLeavesNothingBehind) {
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"cuLaunchKernel", "701"},      {"cuModuleLoadData", "218"}, {"cuMemcpyHtoDAsync", "999"},
      {"cuStreamSynchronize", "999"}, {"cuMemAlloc", "999"},       {"cuMemcpyDtoHAsync", "999"}};
  const xp_test::TempDir shared;  // one kernel cache for the sweep's children
  for (const auto& [call, code] : calls) {
    int n = 1;
    for (; n <= 60; ++n) {
      SCOPED_TRACE(call + " @" + std::to_string(n));
      const xp_test::ProcessResult r = run_faulty(
          "DriverFaults.DISABLED_ArraysFaultSweep", "fail=" + call + ":" + code + "@" + std::to_string(n),
          {{"XP_TEST_FAULT_CALL", call}, {"XP_TEST_FAULT_CODE", code}, {"XP_TEST_FAULTS_CACHE", shared / "kernels"}});
      EXPECT_CLEAN_CHILD(r);
      if (HasFailure() || r.out.find("[faulted: 0]") != std::string::npos) break;
    }
    std::printf("%s: faulted at each of its %d calls in turn\n", call.c_str(), n - 1);
    EXPECT_GT(n, 1) << call << ": the run made no such call";
    EXPECT_LE(n, 60) << call << ": still faulting after 60 calls";
  }
}

TEST_F(DriverFaults, DISABLED_ArraysFaultSweep) {
  const std::string call = std::getenv("XP_TEST_FAULT_CALL");
  const int code = std::atoi(std::getenv("XP_TEST_FAULT_CODE"));
  expect_faults("fail=" + call + ":");
  constexpr std::int64_t n = 1 << 20;
  random::Generator g(7);
  Array x, idx;
  const std::vector<std::pair<const char*, std::function<Array()>>> ops = {
      {"upload", [&] { return x = ramp(n, gpu); }},
      {"upload indices",
       [&] {
         return idx = asarray(std::vector<std::int64_t>{3, 1, 4, 1, 5}, std::nullopt, gpu);
       }},
      {"elementwise", [&] { return (x * 2.0f + 1.0f).eval(); }},
      {"sum", [&] { return sum(x); }},
      {"fused sum", [&] { return sum(x * 3.0f); }},
      {"var", [&] { return var(x); }},
      {"cumulative_sum", [&] { return cumulative_sum(x); }},
      {"take", [&] { return take(x, idx); }},
      {"argmax", [&] { return argmax(x); }},
      {"normal", [&] { return g.normal({4096}, DType::float32, 0, 1, gpu); }},
      {"integers", [&] { return g.integers(0, 10, {4096}, DType::int64, gpu); }},
      {"download", [&] { return x.to_device(Device::cpu()); }},
      {"download a sum", [&] { return sum(x).to_device(Device::cpu()); }},
      {"download again",
       [&] {
         Array back = x.to_device(Device::cpu());
         EXPECT_EQ(back.to_vector<float>(), ramp_values(n)) << "the data is intact";
         return back;
       }},
  };
  int faulted = 0;
  for (const auto& [what, op] : ops) {
    SCOPED_TRACE(what);
    const std::uint64_t in_use = memory_stats(gpu).bytes_in_use;
    const std::uint64_t position = g.position();
    try {
      op();
      continue;
    } catch (const CudaError& e) {
      ++faulted;
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_EQ(e.call(), call) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not CudaError: " << e.what();
      continue;
    }
    EXPECT_EQ(memory_stats(gpu).bytes_in_use, in_use) << "nothing of the failed operation stays in use";
    EXPECT_EQ(g.position(), position) << "a failed draw takes no stream";
    try {
      op();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "tried again: " << e.what();
    }
  }
  EXPECT_LE(faulted, 1);
  EXPECT_EQ(g.position(), 2u);
  std::printf("[faulted: %d]\n", faulted);
}

// The device unavailable when xp first takes it (46 at cuDevicePrimaryCtxRetain, as for a device in
// exclusive-process mode held by another process): CudaError naming the call and code, nothing kept
// of the attempt; once the device answers, arrays and kernels use it.
TEST_F(DriverFaults, ADeviceUnavailableAtFirstUseIsAnErrorAndIsTriedAgain) {
  EXPECT_CLEAN_CHILD(
      run_faulty("DriverFaults.DISABLED_DeviceUnavailableAtFirstUse", "fail=cuDevicePrimaryCtxRetain:46@1"));
}

TEST_F(DriverFaults, DISABLED_DeviceUnavailableAtFirstUse) {
  expect_faults("fail=cuDevicePrimaryCtxRetain:46@1");
  ASSERT_EQ(fake.calls("cuDevicePrimaryCtxRetain"), 0) << "detection takes no context";
  EXPECT_TRUE(FailsWith([&] { (void)ramp(1000, gpu); }, 46, kDeviceUnavailable, "cuDevicePrimaryCtxRetain"));
  Program program(kSetSource, {.name = "faults_set.cu"});
  const Kernel k = program.kernel("set", gpu);  // the second retain works
  const Array a = ramp(1000, gpu);
  Array y = empty({1000}, DType::float32, gpu);
  k.launch({.grid = 4, .block = 256}, y, 1000, 1.0f);
  EXPECT_EQ((a + a).eval().device(), gpu);
  EXPECT_EQ(fake.launches(), 2);
  EXPECT_EQ(fake.calls("cuDevicePrimaryCtxRetain"), 2) << "retained once it worked, never again";
  EXPECT_EQ(a.to_device(Device::cpu()).to_vector<float>(), ramp_values(1000));
}

// ---- through kernels (xp::Program, Kernel::launch)

// A refused launch (701, not sticky): CudaError with the call and code; the launch's temporary is
// not kept; the next launch works.
TEST_F(DriverFaults, KernelsARefusedLaunchIsAnErrorAndTheNextWorks) {
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_KernelRefusedLaunch", "fail=cuLaunchKernel:701@2"));
}

TEST_F(DriverFaults, DISABLED_KernelRefusedLaunch) {
  expect_faults("fail=cuLaunchKernel:701@2");
  Program program(kSetSource, {.name = "faults_set.cu"});
  const Kernel k = program.kernel("set", gpu);
  Array y = empty({1024}, DType::float32, gpu);
  k.launch({.grid = 4, .block = 256}, y, 1024, 1.0f);
  EXPECT_EQ(fake.launches(), 1);
  const std::uint64_t in_use = memory_stats(gpu).bytes_in_use;
  try {
    k.launch({.grid = 4, .block = 256}, empty({1024}, DType::float32, gpu), 1024, 2.0f);
    FAIL() << "the second launch was not refused";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), 701);
    EXPECT_EQ(e.name(), kOutOfResources);
    EXPECT_EQ(e.call(), "cuLaunchKernel");
    EXPECT_EQ(std::string(e.what()).rfind("cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701)", 0), 0u)
        << e.what();
  }
  EXPECT_EQ(memory_stats(gpu).bytes_in_use, in_use) << "the refused launch's temporary is not held";
  k.launch({.grid = 4, .block = 256}, y, 1024, 3.0f);
  EXPECT_EQ(fake.launches(), 2);
  Stream::default_for(gpu).synchronize();
  y = Array();
  EXPECT_EQ(memory_stats(gpu).bytes_in_use, in_use - 4096u) << "y's block given back once the stream has run";
}

// A kernel fault, sticky: at the launch (700), on the device and reported by the next call (719,
// with the fake's slow device: the launch's event stays pending), at cuEventSynchronize, or the
// device gone (46). Each is CudaError with the code from the call that met it; later launches,
// synchronizes and lookups fail the same way; nothing waits for ever on the event of a launch that
// will never complete; the process exits normally with the kernel's arrays and module alive.
TEST_F(DriverFaults, KernelsAStickyFaultIsReportedAndEveryLaterCallFailsClearly) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fail=cuLaunchKernel:700@2!", "700"},
      {"fail=cuLaunchKernel:719@2~,pending", "719"},
      {"fail=cuEventSynchronize:700@1!", "700"},
      {"fail=cuLaunchKernel:46@2!", "46"},
  };
  for (const auto& [faults, code] : cases) {
    SCOPED_TRACE(faults);
    EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_KernelStickyFault", faults, {{"XP_TEST_FAULT_CODE", code}}));
  }
}

TEST_F(DriverFaults, DISABLED_KernelStickyFault) {
  const int code = std::atoi(std::getenv("XP_TEST_FAULT_CODE"));
  const std::string name = code == 700 ? kIllegalAddress : code == 719 ? kLaunchFailed : kDeviceUnavailable;
  const std::string spec = std::getenv("XP_FAKE_CUDA");
  const auto fails = [&](const std::function<void()>& f, const std::string& call = "") {
    return FailsWith(f, code, name, call);
  };
  Program program(kSetSource, {.name = "faults_set.cu"});
  const Kernel k = program.kernel("set", gpu);
  Array y = empty({1024}, DType::float32, gpu);
  k.launch({.grid = 4, .block = 256}, y, 1024, 1.0f);
  if (spec.find("cuEventSynchronize") != std::string::npos) {
    Event e(gpu);
    e.record(Stream::default_for(gpu));
    EXPECT_TRUE(fails([&] { e.synchronize(); }, "cuEventSynchronize"));
    EXPECT_TRUE(fails([&] { k.launch({.grid = 4, .block = 256}, y, 1024, 2.0f); }, "cuLaunchKernel"));
  } else if (spec.find("@2~") != std::string::npos) {
    // The launch is queued and returns (on xp's own stream a launch makes no event: y's memory is
    // reused in stream order); the fault shows at the next call, as the driver reports it.
    EXPECT_NO_THROW(k.launch({.grid = 4, .block = 256}, y, 1024, 2.0f));
    EXPECT_EQ(fake.launches(), 2);
  } else {
    EXPECT_TRUE(fails([&] { k.launch({.grid = 4, .block = 256}, y, 1024, 2.0f); }, "cuLaunchKernel"));
    EXPECT_EQ(fake.launches(), 1);
  }
  EXPECT_EQ(fake.sticky_error(), code);
  EXPECT_TRUE(fails([&] { k.launch({.grid = 4, .block = 256}, y, 1024, 3.0f); }, "cuLaunchKernel"));
  EXPECT_TRUE(fails([&] { k.launch({.grid = 4, .block = 256}, empty({64}, DType::float32, gpu), 64, 3.0f); }));
  EXPECT_TRUE(fails([&] { Stream::default_for(gpu).synchronize(); }, "cuStreamSynchronize"));
  EXPECT_TRUE(fails([&] { synchronize(gpu); }, "cuCtxSynchronize"));
  EXPECT_TRUE(fails([&] { (void)y.to_device(Device::cpu()); }));
  EXPECT_TRUE(fails([&] { (void)Event(gpu); }, "cuEventCreate"));
  // Another program's module cannot be loaded on the broken context either.
  Program other(R"(extern "C" __global__ void other(float* y) { y[0] = 1.0f; })", {.name = "faults_other.cu"});
  EXPECT_TRUE(fails([&] { (void)other.kernel("other", gpu); }, "cuModuleLoadData"));
  EXPECT_EQ(fake.sticky_error(), code);
}

// A module that does not load (218 CUDA_ERROR_INVALID_PTX, once): Program::kernel is CudaError
// naming cuModuleLoadData; asked again, it loads and the kernel launches.
TEST_F(DriverFaults, KernelsAModuleThatDoesNotLoadIsAnErrorAndLoadsWhenAskedAgain) {
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_KernelModuleLoad", "fail=cuModuleLoadData:218@1"));
}

TEST_F(DriverFaults, DISABLED_KernelModuleLoad) {
  expect_faults("fail=cuModuleLoadData:218@1");
  Program program(kSetSource, {.name = "faults_set.cu"});
  EXPECT_TRUE(FailsWith([&] { (void)program.kernel("set", gpu); }, 218, "CUDA_ERROR_INVALID_PTX", "cuModuleLoadData"));
  EXPECT_EQ(fake.modules_loaded(), 0);
  const Kernel k = program.kernel("set", gpu);
  EXPECT_EQ(fake.modules_loaded(), 1);
  Array y = empty({256}, DType::float32, gpu);
  k.launch({.grid = 1, .block = 256}, y, 256, 1.0f);
  EXPECT_EQ(fake.launches(), 1);
  synchronize(gpu);
}

// What xp destroys after a fault talks to a broken context: an imported array (whose owner waits for
// xp's stream before letting the memory go), an xp::Buffer, a Stream, an Event, a kernel's module.
// None of it may throw out of a destructor or stop the process; the foreign owner is still let go.
TEST_F(DriverFaults, DestructorsAfterAFaultNeitherThrowNorHang) {
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_DestructorsAfterAFault", "fail=cuLaunchKernel:700@1!"));
  EXPECT_CLEAN_CHILD(run_faulty("DriverFaults.DISABLED_DestructorsAfterAFault", "fail=cuLaunchKernel:46@1~"));
}

TEST_F(DriverFaults, DISABLED_DestructorsAfterAFault) {
  expect_faults("fail=cuLaunchKernel:");
  const auto retain = fake.fn<int (*)(void**, int)>("cuDevicePrimaryCtxRetain");
  const auto set = fake.fn<int (*)(void*)>("cuCtxSetCurrent");
  const auto alloc = fake.fn<int (*)(unsigned long long*, std::size_t)>("cuMemAlloc");
  ASSERT_TRUE(retain != nullptr && set != nullptr && alloc != nullptr);
  void* ctx = nullptr;
  unsigned long long foreign = 0;
  ASSERT_EQ(retain(&ctx, 0), 0);
  ASSERT_EQ(set(ctx), 0);
  ASSERT_EQ(alloc(&foreign, 1024 * sizeof(float)), 0);
  auto released = std::make_shared<bool>(false);
  {
    CudaArrayInterface cai;
    cai.shape = {1024};
    cai.typestr = "<f4";
    cai.data = foreign;
    std::shared_ptr<void> keep(reinterpret_cast<void*>(static_cast<std::uintptr_t>(foreign)),
                               [released](void*) { *released = true; });
    Array imported = from_cuda_array_interface(cai, keep);
    keep.reset();
    Buffer buffer(gpu, 4096);
    Stream stream(gpu);
    Event event(gpu);
    event.record(stream);
    Program program(kSetSource, {.name = "faults_set.cu"});
    const Kernel k = program.kernel("set", gpu);
    Array y = empty({1024}, DType::float32, gpu);
    try {
      k.launch({.grid = 4, .block = 256, .stream = stream}, y, 1024, 1.0f);
      (void)(imported * 2.0f).eval();
      ADD_FAILURE() << "no error after the fault";
    } catch (const CudaError& e) {
      EXPECT_TRUE(e.code() == 700 || e.code() == 46) << e.what();
    }
    EXPECT_NE(fake.sticky_error(), 0);
    EXPECT_FALSE(*released);
  }  // everything above destroyed here, on the broken context
  EXPECT_TRUE(*released) << "the imported memory's owner was let go";
}
