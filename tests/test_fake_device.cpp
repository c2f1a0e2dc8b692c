// The public device API against the fake driver with two devices (ctest sets XP_CUDA_DRIVER and
// XP_FAKE_CUDA=devices=2). Detection is cached per process, and ctest runs every case in a process
// of its own, so each case starts from nothing.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fake_driver/fake_handle.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using CuContext = void*;
using CuCtxGetCurrent = int (*)(CuContext*);
using CuPrimaryCtxRetain = int (*)(CuContext*, int);
using CuPrimaryCtxRelease = int (*)(int);
using FakeRefcount = int (*)(int);

constexpr std::uint64_t kFakeTotal = std::uint64_t{141} << 30;
constexpr std::uint64_t kFakeFree = kFakeTotal - (std::uint64_t{3} << 29);

// The fake driver as xp loaded it: its thread-local current context is the one xp set.
class Fake : public xp_test::FakeDriverHandle {
 public:
  // The context current on the calling thread; "error" when the fake refuses (not initialized).
  CuContext current() const {
    CuContext c = nullptr;
    const auto get = fn<CuCtxGetCurrent>("cuCtxGetCurrent");
    return get != nullptr && get(&c) == 0 ? c : error_marker();
  }
  // The primary context of a device, without keeping the extra reference.
  CuContext primary(int ordinal) const {
    const auto retain = fn<CuPrimaryCtxRetain>("cuDevicePrimaryCtxRetain");
    const auto release = fn<CuPrimaryCtxRelease>("cuDevicePrimaryCtxRelease");
    CuContext c = nullptr;
    if (retain == nullptr || release == nullptr || retain(&c, ordinal) != 0) return error_marker();
    release(ordinal);
    return c;
  }
  int refcount(int ordinal) const {
    const auto count = fn<FakeRefcount>("xp_fake_cuda_primary_ctx_refcount");
    return count != nullptr ? count(ordinal) : -1;
  }
  static CuContext error_marker() { return reinterpret_cast<CuContext>(std::uintptr_t{1}); }
};

bool fake_already_loaded() {
  void* h = dlopen(XP_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return false;
  dlclose(h);
  return true;
}

class FakeDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* driver = std::getenv("XP_CUDA_DRIVER");
    const char* spec = std::getenv("XP_FAKE_CUDA");
    ASSERT_TRUE(driver != nullptr && std::string(driver) == XP_FAKE_DRIVER_PATH)
        << "run through ctest, which sets XP_CUDA_DRIVER=" << XP_FAKE_DRIVER_PATH;
    ASSERT_TRUE(spec != nullptr && std::string(spec) == "devices=2") << "ctest sets XP_FAKE_CUDA=devices=2";
  }
};

// CUDA is usable only with an NVRTC that suits the fake GPU; without one, skip or fail.
#define REQUIRE_CUDA()                                                                                     \
  do {                                                                                                     \
    const xp::CudaStatus s_ = xp::cuda_status();                                                           \
    if (s_.reason == xp::CudaReason::no_usable_nvrtc)                                                      \
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no usable NVRTC, so CUDA is not available: " + s_.detail); \
    ASSERT_TRUE(s_.available) << xp::to_string(s_.reason) << ": " << s_.detail;                            \
  } while (0)

TEST_F(FakeDevice, StatusSeesBothDevices) {
  const bool fresh = !fake_already_loaded();
  REQUIRE_CUDA();
  const xp::CudaStatus s = xp::cuda_status();
  EXPECT_EQ(s.reason, xp::CudaReason::available);
  EXPECT_EQ(s.device_count, 2);
  EXPECT_EQ(s.driver_version, 13000);
  EXPECT_GE(s.nvrtc_version, 12000);
  EXPECT_EQ(s.driver_error, 0);
  if (fresh) {
    // Detection is cheap: it creates no context.
    Fake fake;
    EXPECT_EQ(fake.refcount(0), 0);
    EXPECT_EQ(fake.refcount(1), 0);
    EXPECT_EQ(fake.current(), nullptr);
  }
}

TEST_F(FakeDevice, DevicesAreTheCpuThenEachGpu) {
  REQUIRE_CUDA();
  const std::vector<xp::Device> expected{xp::Device::cpu(), xp::Device("cuda:0"), xp::Device("cuda:1")};
  EXPECT_EQ(xp::devices(), expected);
}

TEST_F(FakeDevice, DefaultDeviceIsTheFirstGpu) {
  REQUIRE_CUDA();
  EXPECT_EQ(xp::default_device(), xp::Device::cuda(0));
  EXPECT_EQ(xp::default_device().str(), "cuda:0");
}

// xp::set_cuda_hidden: the process behaves as on a machine without a GPU until the GPUs are shown
// again, with no new detection.
TEST_F(FakeDevice, HiddenCudaLooksLikeNoGpuUntilShownAgain) {
  REQUIRE_CUDA();
  EXPECT_FALSE(xp::cuda_hidden());
  xp::set_cuda_hidden(true);
  EXPECT_TRUE(xp::cuda_hidden());
  const xp::CudaStatus hidden = xp::cuda_status();
  EXPECT_FALSE(hidden.available);
  EXPECT_EQ(hidden.reason, xp::CudaReason::no_device);
  EXPECT_NE(hidden.detail.find("set_cuda_hidden"), std::string::npos) << hidden.detail;
  EXPECT_EQ(xp::devices(), std::vector<xp::Device>{xp::Device::cpu()});
  EXPECT_EQ(xp::default_device(), xp::Device::cpu());
  EXPECT_THROW(xp::Device::cuda(0).activate(), xp::DeviceUnavailable);
  EXPECT_THROW(xp::zeros({4}, xp::DType::float32, xp::Device::cuda(0)), xp::DeviceUnavailable);
  Fake fake;
  EXPECT_EQ(fake.refcount(0), 0);  // no context was made for the refused uses
  xp::set_cuda_hidden(false);
  EXPECT_FALSE(xp::cuda_hidden());
  EXPECT_TRUE(xp::cuda_status().available);
  EXPECT_EQ(xp::default_device(), xp::Device::cuda(0));
  EXPECT_EQ(xp::devices().size(), 3u);
}

TEST_F(FakeDevice, GpuInfoReadsTheSecondDevice) {
  const bool fresh = !fake_already_loaded();
  REQUIRE_CUDA();
  const xp::GpuInfo g = xp::gpu_info(xp::Device("cuda:1"));
  EXPECT_EQ(g.index, 1);
  EXPECT_EQ(g.name, "xp fake GPU");
  EXPECT_EQ(g.cc_major, 9);
  EXPECT_EQ(g.cc_minor, 0);
  EXPECT_EQ(g.sm_count, 132);
  EXPECT_EQ(g.memory_total, kFakeTotal);
  EXPECT_EQ(g.pci_bus_id, "0000:1a:00.0");
  EXPECT_EQ(g.uuid, "GPU-fa4ec0de-0000-4000-8000-000000000001");
  EXPECT_TRUE(g.nvrtc_supports_arch);
  // No context yet, so free memory cannot come from the driver.
  if (fresh) {
    EXPECT_NE(g.memory_free_source, "driver");
  }
  EXPECT_THROW(xp::gpu_info(xp::Device::cpu()), xp::DeviceUnavailable);
  EXPECT_THROW(xp::gpu_info(xp::Device("cuda:2")), xp::DeviceUnavailable);
}

TEST_F(FakeDevice, ActivateMakesThePrimaryContextCurrent) {
  const bool fresh = !fake_already_loaded();
  REQUIRE_CUDA();
  Fake fake;
  ASSERT_TRUE(fake.ok()) << dlerror();
  if (fresh) {
    EXPECT_EQ(fake.current(), nullptr);  // initialized by detection, nothing current yet
    EXPECT_EQ(fake.refcount(1), 0);
  }

  xp::Device("cuda:1").activate();
  const CuContext ctx1 = fake.current();
  ASSERT_NE(ctx1, nullptr);
  EXPECT_EQ(ctx1, fake.primary(1));
  EXPECT_EQ(fake.refcount(1), 1);

  const xp::GpuInfo g = xp::gpu_info(xp::Device("cuda:1"));
  EXPECT_EQ(g.memory_free_source, "driver");
  ASSERT_TRUE(g.memory_free.has_value());
  EXPECT_EQ(*g.memory_free, kFakeFree);

  // Switching devices and back: each primary context retained once per process.
  xp::Device::cuda(0).activate();
  EXPECT_EQ(fake.current(), fake.primary(0));
  EXPECT_NE(fake.primary(0), ctx1);
  xp::Device("cuda:1").activate();
  EXPECT_EQ(fake.current(), ctx1);
  EXPECT_EQ(fake.refcount(0), 1);
  EXPECT_EQ(fake.refcount(1), 1);

  xp::Device::cpu().activate();  // the CPU becomes the current device; the CUDA context stays
  EXPECT_EQ(fake.current(), ctx1);
}

TEST_F(FakeDevice, ActivateOnOtherThreadsIsPerThread) {
  REQUIRE_CUDA();
  Fake fake;
  ASSERT_TRUE(fake.ok()) << dlerror();
  const CuContext before = fake.current();
  CuContext seen0 = Fake::error_marker(), seen1 = Fake::error_marker();
  std::string error0, error1;
  auto worker = [&fake](int ordinal, CuContext* seen, std::string* error) {
    try {
      xp::Device::cuda(ordinal).activate();
      *seen = fake.current();
    } catch (const std::exception& e) {
      *error = e.what();
    }
  };
  std::thread t0(worker, 0, &seen0, &error0);
  std::thread t1(worker, 1, &seen1, &error1);
  t0.join();
  t1.join();
  EXPECT_EQ(error0, "");
  EXPECT_EQ(error1, "");
  EXPECT_EQ(seen0, fake.primary(0));
  EXPECT_EQ(seen1, fake.primary(1));
  EXPECT_NE(seen0, nullptr);
  EXPECT_EQ(fake.current(), before);  // this thread's current context is its own
  EXPECT_EQ(fake.refcount(0), 1);
  EXPECT_EQ(fake.refcount(1), 1);
}

TEST_F(FakeDevice, ActivatingAMissingOrdinalThrows) {
  REQUIRE_CUDA();
  Fake fake;
  const CuContext before = fake.current();
  try {
    xp::Device("cuda:5").activate();
    FAIL() << "cuda:5 activated with two devices";
  } catch (const xp::DeviceUnavailable& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cuda:5"), std::string::npos) << what;
    EXPECT_NE(what.find("2 CUDA devices"), std::string::npos) << what;
  }
  EXPECT_EQ(fake.current(), before);  // nothing made current on the way
}

// Exit codes of the forked children, so the parent can say what went wrong.
enum ChildExit {
  kChildOk = 0,
  kChildWrongStatus = 10,
  kChildNoThrow = 11,
  kChildWrongText = 12,
  kChildOtherException = 13,
  kChildDevicesListGpus = 14,
  kChildNotCurrent = 15,
  kChildNoNvrtc = 20,
};

int wait_child(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  if (WIFSIGNALED(status)) return 1000 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(FakeDevice, ForkAfterInitIsRefusedInTheChild) {
  REQUIRE_CUDA();
  xp::Device::cuda(0).activate();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    int code = kChildOk;
    if (xp::cuda_status().reason != xp::CudaReason::forked_after_init) _exit(kChildWrongStatus);
    if (xp::devices() != std::vector<xp::Device>{xp::Device::cpu()}) _exit(kChildDevicesListGpus);
    try {
      xp::Device::cuda(0).activate();
      code = kChildNoThrow;
    } catch (const xp::DeviceUnavailable& e) {
      if (std::strstr(e.what(), "fork") == nullptr) code = kChildWrongText;
    } catch (...) {
      code = kChildOtherException;
    }
    _exit(code);
  }
  EXPECT_EQ(wait_child(pid), kChildOk) << "10 wrong status, 11 no exception, 12 text without 'fork', "
                                          "13 another exception, 14 devices() lists GPUs, 1000+N signal N";
  // The parent is untouched by its child's fate.
  EXPECT_EQ(xp::cuda_status().reason, xp::CudaReason::available);
  EXPECT_NO_THROW(xp::Device::cuda(1).activate());
}

TEST_F(FakeDevice, ForkBeforeAnyCudaUseLeavesTheChildFree) {
  // Only meaningful while this process has never probed the driver: true under ctest, which runs
  // each case alone, but not when every case shares one process.
  if (fake_already_loaded()) GTEST_SKIP() << "the driver was probed earlier in this process; run this case alone";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    const xp::CudaStatus s = xp::cuda_status();
    if (s.reason == xp::CudaReason::no_usable_nvrtc) _exit(kChildNoNvrtc);
    if (!s.available || s.device_count != 2) _exit(kChildWrongStatus);
    try {
      xp::Device::cuda(1).activate();
    } catch (...) {
      _exit(kChildOtherException);
    }
    Fake fake;
    _exit(fake.current() != nullptr && fake.current() == fake.primary(1) ? kChildOk : kChildNotCurrent);
  }
  const int code = wait_child(pid);
  if (code == kChildNoNvrtc) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no usable NVRTC, so CUDA is not available");
  EXPECT_EQ(code, kChildOk) << "10 wrong status, 13 activate threw, 15 context not current, 1000+N signal N";
  // The child's CUDA is its own; the parent still starts from nothing.
  EXPECT_FALSE(fake_already_loaded());
  EXPECT_EQ(xp::cuda_status().reason, xp::CudaReason::available);
}

}  // namespace
