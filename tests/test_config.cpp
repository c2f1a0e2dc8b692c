// Parsing of every XP_* value, device names and error texts. Process-level behaviour of a bad
// variable (doctor's exit code, cuda_status's reason) is in test_fault_matrix.cpp.
#include <gtest/gtest.h>

#include "runtime/environment.hpp"
#include "xp/xp.hpp"

using xp::DeviceRequest;
using namespace xp::detail;

TEST(ConfigParse, Booleans) {
  for (const char* t : {"1", "true", "TRUE", "yes", "on", " On "}) EXPECT_EQ(parse_bool_setting(t), true) << t;
  for (const char* f : {"0", "false", "no", "OFF"}) EXPECT_EQ(parse_bool_setting(f), false) << f;
  for (const char* bad : {"", "2", "maybe", "01", "truee", "y"}) EXPECT_FALSE(parse_bool_setting(bad)) << bad;
}

TEST(ConfigParse, ByteCounts) {
  EXPECT_EQ(parse_byte_count("0"), 0u);
  EXPECT_EQ(parse_byte_count("1073741824"), 1073741824u);
  EXPECT_EQ(parse_byte_count("512M"), 512ull << 20);
  EXPECT_EQ(parse_byte_count("512MiB"), 512ull << 20);
  EXPECT_EQ(parse_byte_count("1g"), 1ull << 30);
  EXPECT_EQ(parse_byte_count("2GB"), 2000000000ull);
  EXPECT_EQ(parse_byte_count("3 kb"), 3000ull);
  EXPECT_EQ(parse_byte_count("4T"), 4ull << 40);
  for (const char* bad : {"", "G", "12Q", "-1", "1.5G", "0x10", "18446744073709551616", "17179869184G"})
    EXPECT_FALSE(parse_byte_count(bad)) << bad;
}

TEST(ConfigParse, DeviceSettings) {
  EXPECT_EQ(parse_device_setting("cpu")->kind, DeviceRequest::Kind::cpu);
  EXPECT_EQ(parse_device_setting("CUDA")->kind, DeviceRequest::Kind::cuda_default);
  auto d = parse_device_setting("cuda:3");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, DeviceRequest::Kind::cuda_index);
  EXPECT_EQ(d->index, 3);
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:x", "cuda:1:2", "cuda0", "cpu:0", "cuda:99999"})
    EXPECT_FALSE(parse_device_setting(bad)) << bad;
}

TEST(Device, ParsesAndPrints) {
  EXPECT_EQ(xp::Device("cpu").kind(), xp::DeviceKind::cpu);
  EXPECT_EQ(xp::Device("cuda").str(), "cuda:0");
  EXPECT_EQ(xp::Device("cuda:2").index(), 2);
  EXPECT_EQ(xp::Device("cuda:2"), xp::Device::cuda(2));
  EXPECT_NE(xp::Device::cpu(), xp::Device::cuda(0));
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "CUDA:0", "cuda:1x", ""})
    EXPECT_THROW(xp::Device{std::string_view(bad)}, xp::ValueError) << bad;
  EXPECT_THROW(xp::Device::cuda(-1), xp::ValueError);
}

TEST(Device, CpuActivateIsANoOp) {
  EXPECT_NO_THROW(xp::Device::cpu().activate());
}

TEST(Errors, KeepTheirEvidence) {
  const xp::CudaError e(100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected", "cuInit");
  EXPECT_EQ(e.code(), 100);
  EXPECT_EQ(e.name(), "CUDA_ERROR_NO_DEVICE");
  EXPECT_STREQ(e.what(), "cuInit failed: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected");
  const xp::ConfigError c("XP_DEVICE", "gpu", "cpu, cuda or cuda:N");
  EXPECT_EQ(c.variable(), "XP_DEVICE");
  EXPECT_EQ(c.value(), "gpu");
  EXPECT_STREQ(c.what(), "XP_DEVICE='gpu' is not valid; accepted: cpu, cuda or cuda:N");
  // One hierarchy: every xp error is an xp::Error.
  EXPECT_THROW(throw xp::DeviceUnavailable("x"), xp::Error);
  EXPECT_THROW(throw xp::ValueError("x"), xp::Error);
}

TEST(Version, MatchesTheHeader) {
  const std::string expected = std::to_string(XP_VERSION_MAJOR) + "." + std::to_string(XP_VERSION_MINOR) + "." +
                               std::to_string(XP_VERSION_PATCH);
  EXPECT_EQ(xp::version(), expected);
}

TEST(CudaReason, EveryReasonHasAStableName) {
  using R = xp::CudaReason;
  const std::pair<R, const char*> names[] = {
      {R::available, "available"},
      {R::disabled_by_user, "disabled_by_user"},
      {R::invalid_config, "invalid_config"},
      {R::driver_not_found, "driver_not_found"},
      {R::driver_unusable, "driver_unusable"},
      {R::init_failed, "init_failed"},
      {R::no_device, "no_device"},
      {R::all_devices_hidden, "all_devices_hidden"},
      {R::no_usable_nvrtc, "no_usable_nvrtc"},
      {R::forked_after_init, "forked_after_init"},
  };
  for (auto [r, n] : names) EXPECT_EQ(xp::to_string(r), n);
}
