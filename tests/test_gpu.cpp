// On a real GPU (label `gpu`): detection, device facts, the primary context, fork, and doctor.
// Without a GPU every case reports "skipped: no GPU"; with XP_TEST_REQUIRE_GPU=1 that is a failure.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

// The driver's own answer, asked directly, to check what xp did.
struct RawDriver {
  using CtxGetCurrent = int (*)(void**);
  using PrimaryRetain = int (*)(void**, int);
  using PrimaryRelease = int (*)(int);
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  CtxGetCurrent get_current = handle ? reinterpret_cast<CtxGetCurrent>(dlsym(handle, "cuCtxGetCurrent")) : nullptr;
  PrimaryRetain retain = handle ? reinterpret_cast<PrimaryRetain>(dlsym(handle, "cuDevicePrimaryCtxRetain")) : nullptr;
  PrimaryRelease release =
      handle ? reinterpret_cast<PrimaryRelease>(dlsym(handle, "cuDevicePrimaryCtxRelease_v2")) : nullptr;
};

}  // namespace

TEST(Gpu, DetectionSeesTheGpu) {
  XP_REQUIRE_GPU();
  const xp::CudaStatus s = xp::cuda_status();
  EXPECT_EQ(s.reason, xp::CudaReason::available);
  EXPECT_GE(s.device_count, 1);
  EXPECT_GE(s.driver_version, 12000);
  EXPECT_GE(s.nvrtc_version / 1000, 12);
  EXPECT_LE(s.nvrtc_version / 1000, s.driver_version / 1000);
  const auto devs = xp::devices();
  ASSERT_GE(devs.size(), 2u);
  EXPECT_EQ(devs[0], xp::Device::cpu());
  EXPECT_EQ(devs[1], xp::Device::cuda(0));
  EXPECT_EQ(xp::default_device(), xp::Device::cuda(0));
}

TEST(Gpu, DeviceFacts) {
  XP_REQUIRE_GPU();
  const xp::GpuInfo g = xp::gpu_info(xp::Device::cuda(0));
  EXPECT_FALSE(g.name.empty());
  EXPECT_GE(g.cc_major * 10 + g.cc_minor, 75);
  EXPECT_GT(g.sm_count, 0);
  EXPECT_GT(g.memory_total, std::uint64_t{1} << 30);
  EXPECT_EQ(g.uuid.rfind("GPU-", 0), 0u) << g.uuid;
  EXPECT_EQ(g.uuid.size(), 40u) << g.uuid;
  EXPECT_FALSE(g.pci_bus_id.empty());
  EXPECT_TRUE(g.nvrtc_supports_arch);
  if (g.memory_clock_khz > 0) {
    EXPECT_GT(g.bandwidth_bytes_per_s, 1e11);
  }
  if (g.memory_free) {
    EXPECT_LE(*g.memory_free, g.memory_total);
  }
}

TEST(Gpu, ActivateMakesThePrimaryContextCurrentOnEachThread) {
  XP_REQUIRE_GPU();
  RawDriver raw;
  ASSERT_TRUE(raw.get_current && raw.retain && raw.release);
  void* primary = nullptr;
  ASSERT_EQ(raw.retain(&primary, 0), 0);
  xp::Device::cuda(0).activate();
  void* current = nullptr;
  ASSERT_EQ(raw.get_current(&current), 0);
  EXPECT_EQ(current, primary) << "xp must use the primary context, shared with the runtime API";
  const xp::GpuInfo g = xp::gpu_info(xp::Device::cuda(0));
  EXPECT_EQ(g.memory_free_source, "driver");
  ASSERT_TRUE(g.memory_free.has_value());
  EXPECT_LE(*g.memory_free, g.memory_total);

  void* on_thread = nullptr;
  std::thread t([&] {
    xp::Device::cuda(0).activate();
    raw.get_current(&on_thread);
  });
  t.join();
  EXPECT_EQ(on_thread, primary);
  raw.release(0);
}

TEST(Gpu, MissingOrdinalIsAClearError) {
  XP_REQUIRE_GPU();
  const int n = xp::cuda_status().device_count;
  try {
    xp::Device::cuda(n).activate();
    FAIL() << "cuda:" << n << " should not exist";
  } catch (const xp::DeviceUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST(Gpu, ForkedChildIsRefused) {
  XP_REQUIRE_GPU();
  xp::Device::cuda(0).activate();
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 0;
    if (xp::cuda_status().reason != xp::CudaReason::forked_after_init) code |= 1;
    try {
      xp::Device::cuda(0).activate();
      code |= 2;
    } catch (const xp::DeviceUnavailable& e) {
      if (std::string(e.what()).find("fork") == std::string::npos) code |= 4;
    } catch (...) {
      code |= 8;
    }
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bits: 1 status, 2 no throw, 4 text, 8 wrong type";
}

TEST(Gpu, DoctorReportsTheGpu) {
  XP_REQUIRE_GPU();
  const auto r = xp_test::run_process({XP_CLI_PATH, "doctor", "--json"}, {}, {"XP_DEVICE", "FORCE_CPU"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cuda"]["reason"], "available");
  EXPECT_EQ(j["verdict"]["device"], "cuda:0");
  ASSERT_GE(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["name"], xp::gpu_info(xp::Device::cuda(0)).name);
  EXPECT_EQ(j["libraries"]["driver"]["found"], true);
}
