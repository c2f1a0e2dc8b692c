// NVTX ranges around xp's operations (XP_NVTX), on the fake driver's hollow device with a fake
// NVTX tool (tests/fake_driver/fake_nvtx.cpp) named by NVTX_INJECTION64_PATH, as a profiler names
// its own. Each case sets the variables before xp reads its configuration: one process per case.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const xp_test::ProcessCache process_cache;

// The fake tool as xp loaded it (RTLD_NOLOAD: null when xp never opened it).
struct Tool {
  void* handle = dlopen(XP_FAKE_NVTX_PATH, RTLD_NOW | RTLD_NOLOAD);
  ~Tool() {
    if (handle != nullptr) dlclose(handle);
  }
  long count(const char* name) const {
    const auto f = reinterpret_cast<long (*)()>(dlsym(handle, name));
    return f != nullptr ? f() : -1;
  }
  std::string names() const {
    const auto f = reinterpret_cast<long (*)(char*, long)>(dlsym(handle, "xp_fake_nvtx_names"));
    if (f == nullptr) return {};
    std::string s(static_cast<std::size_t>(f(nullptr, 0)) + 1, '\0');
    f(s.data(), static_cast<long>(s.size()));
    s.resize(s.size() - 1);
    return s;
  }
};

void require_cuda() {
  const CudaStatus s = cuda_status();
  if (s.reason == CudaReason::no_usable_nvrtc)
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no usable NVRTC, so CUDA is not available: " + s.detail);
  ASSERT_TRUE(s.available) << to_string(s.reason) << ": " << s.detail;
}

}  // namespace

TEST(Nvtx, OffOpensNothingAndPushesNothing) {
  ::setenv("NVTX_INJECTION64_PATH", XP_FAKE_NVTX_PATH, 1);
  ::unsetenv("XP_NVTX");
  require_cuda();
  Array a = arange(0, 1000, 1, DType::float32, Device::cpu()).to_device(Device::cuda(0));
  (void)sum(a * 2).eval();
  Tool tool;
  EXPECT_EQ(tool.handle, nullptr) << "the tool is opened only when XP_NVTX is on";
}

TEST(Nvtx, OnPushesAndPopsARangePerOperationAndLaunch) {
  ::setenv("NVTX_INJECTION64_PATH", XP_FAKE_NVTX_PATH, 1);
  ::setenv("XP_NVTX", "1", 1);
  require_cuda();
  EXPECT_TRUE(config().nvtx);
  Array a = arange(0, 1000, 1, DType::float32, Device::cpu()).to_device(Device::cuda(0));
  Array b = (a * 2 + 1).eval();
  (void)sum(b).eval();
  Tool tool;
  ASSERT_NE(tool.handle, nullptr) << "XP_NVTX=1 opens NVTX_INJECTION64_PATH's library";
  const long pushes = tool.count("xp_fake_nvtx_pushes");
  EXPECT_GE(pushes, 4);  // the copy in, the elementwise program and its kernel, the sum
  EXPECT_EQ(tool.count("xp_fake_nvtx_pops"), pushes) << "every range is closed";
  const std::string names = tool.names();
  EXPECT_NE(names.find("xp.copy_from_host\n"), std::string::npos) << names;
  EXPECT_NE(names.find("xp.elementwise\n"), std::string::npos) << names;
  EXPECT_NE(names.find("xp.sum\n"), std::string::npos) << names;
  EXPECT_NE(names.find("xp_ew"), std::string::npos) << "a kernel launch's range names the kernel: " << names;
  // A user's kernel launch gets its own range.
  Program prog("extern \"C\" __global__ void nvtx_probe(float* x) { x[threadIdx.x] = 1; }\n");
  prog.kernel("nvtx_probe", Device::cuda(0)).launch({.grid = 1, .block = 32}, b);
  EXPECT_NE(tool.names().find("nvtx_probe\n"), std::string::npos);
  EXPECT_EQ(tool.count("xp_fake_nvtx_pops"), tool.count("xp_fake_nvtx_pushes"));
}

TEST(Nvtx, OnWithoutAToolStillWorks) {
  ::setenv("NVTX_INJECTION64_PATH", "/nonexistent/libtool.so", 1);
  ::setenv("XP_NVTX", "1", 1);
  ::setenv("XP_LOG", "error", 1);
  require_cuda();
  Array a = arange(0, 100, 1, DType::float32, Device::cpu()).to_device(Device::cuda(0));
  EXPECT_NO_THROW((void)sum(a * 2).eval());
  EXPECT_TRUE(config().nvtx);
}
