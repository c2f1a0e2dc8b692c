// Parsing of every XP_* value, device names and error texts. Process-level behaviour of a bad
// variable (doctor's exit code, cuda_status's reason) is in test_fault_matrix.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "memory/stats.hpp"
#include "runtime/environment.hpp"
#include "test_util.hpp"
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

// XP_GPU_MEMORY_LIMIT: a byte count, or a percentage of each device's memory (its arithmetic:
// MemoryLimit.BytesAndPercentages in test_cuda_linalg.cpp).
TEST(ConfigParse, MemoryLimits) {
  const std::pair<const char*, double> percents[] = {{"80%", 80.0},      {" 12.5 % ", 12.5}, {"100%", 100.0},
                                                     {"0.5%", 0.5},      {"33.3%", 33.3},    {"050%", 50.0},
                                                     {"99.999%", 99.999}};
  for (const auto& [text, want] : percents) {
    const auto lim = parse_memory_limit(text);
    ASSERT_TRUE(lim) << text;
    ASSERT_TRUE(lim->percent) << text;
    EXPECT_EQ(*lim->percent, want) << text;
    EXPECT_EQ(lim->bytes, 0u) << text;
  }
  const std::pair<const char*, std::uint64_t> bytes[] = {
      {"256M", 256ull << 20}, {"1GB", 1000000000ull}, {"4096", 4096ull}, {" 2 g ", 2ull << 30}};
  for (const auto& [text, want] : bytes) {
    const auto lim = parse_memory_limit(text);
    ASSERT_TRUE(lim) << text;
    EXPECT_FALSE(lim->percent) << text;
    EXPECT_EQ(lim->bytes, want) << text;
  }
  // 12.5% of a device is an eighth of it, rounded down.
  EXPECT_EQ(memory_limit_bytes(parse_memory_limit("12.5%"), 150'754'820'096ull), 150'754'820'096ull / 8);
  EXPECT_EQ(memory_limit_bytes(parse_memory_limit("80%"), 1001), 800u);
  for (const char* bad :
       {"",       "%",  " % ",   "0%",   "0.0%", "100.5%", "150%",       "-5%", "+5%", "abc%", "5 0%", "80%%",
        "1.2.3%", ".%", "0x50%", "1e1%", "inf%", "nan%",   "80 percent", "0",   "0M",  "12Q",  "1.5G", "-1"})
    EXPECT_FALSE(parse_memory_limit(bad)) << "'" << bad << "'";
}

// The variable as config() reads it from the environment, in a process of its own per value (the
// configuration is read once per process): the disabled case below, run with the value set.
TEST(ConfigEnvironment, MemoryLimitReachesConfig) {
  const std::pair<const char*, const char*> cases[] = {{"80%", "percent 80"},
                                                       {" 12.5 % ", "percent 12.5"},
                                                       {"256M", "bytes 268435456"},
                                                       {"150%", "error"},
                                                       {"0%", "error"},
                                                       {"1e1%", "error"},
                                                       {"-5%", "error"},
                                                       {"%", "error"}};
  for (const auto& [value, expect] : cases) {
    SCOPED_TRACE(std::string("XP_GPU_MEMORY_LIMIT='") + value + "'");
    EXPECT_CHILD_CASE_PASSED(
        xp_test::run_child_case("ConfigEnvironment.DISABLED_MemoryLimitChild",
                                {{"XP_GPU_MEMORY_LIMIT", value}, {"XP_TEST_EXPECT_LIMIT", expect}}));
  }
}

TEST(ConfigEnvironment, DISABLED_MemoryLimitChild) {
  const char* expect = std::getenv("XP_TEST_EXPECT_LIMIT");
  const char* value = std::getenv("XP_GPU_MEMORY_LIMIT");
  ASSERT_TRUE(expect != nullptr && value != nullptr) << "run by ConfigEnvironment.MemoryLimitReachesConfig";
  const std::string e = expect;
  if (e == "error") {
    try {
      (void)xp::config();
      FAIL() << "XP_GPU_MEMORY_LIMIT='" << value << "' was accepted";
    } catch (const xp::ConfigError& err) {
      EXPECT_EQ(err.variable(), "XP_GPU_MEMORY_LIMIT");
      EXPECT_EQ(err.value(), value);
      EXPECT_NE(err.accepted().find("80%"), std::string::npos) << err.accepted();
    }
    EXPECT_EQ(xp::cuda_status().reason, xp::CudaReason::invalid_config);  // detection says so, never throws
    return;
  }
  const std::optional<xp::MemoryLimit>& lim = xp::config().gpu_memory_limit;
  ASSERT_TRUE(lim.has_value()) << value;
  if (e.rfind("percent ", 0) == 0) {
    ASSERT_TRUE(lim->percent.has_value()) << value;
    EXPECT_EQ(*lim->percent, std::stod(e.substr(8))) << value;
  } else {
    ASSERT_EQ(e.rfind("bytes ", 0), 0u) << e;
    EXPECT_FALSE(lim->percent.has_value()) << value;
    EXPECT_EQ(lim->bytes, std::stoull(e.substr(6))) << value;
  }
}

// XP_CACHE_DIR: a relative folder is fixed against the current folder when the configuration is
// read (a later chdir does not move the cache); "~/..." reached xp unexpanded (quoted in a shell)
// and is refused rather than made into a folder named ~.
TEST(ConfigEnvironment, CacheDirIsAbsoluteAndTildeIsRefused) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  const std::pair<const char*, std::string> cases[] = {{"/abs/kernels", "/abs/kernels"},
                                                       {"rel/kernels", std::string(cwd) + "/rel/kernels"},
                                                       {"~/kernels", "error"},
                                                       {"~", "error"}};
  for (const auto& [value, expect] : cases) {
    SCOPED_TRACE(std::string("XP_CACHE_DIR='") + value + "'");
    EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("ConfigEnvironment.DISABLED_CacheDirChild",
                                                     {{"XP_CACHE_DIR", value}, {"XP_TEST_EXPECT_DIR", expect}}));
  }
}

TEST(ConfigEnvironment, DISABLED_CacheDirChild) {
  const char* expect = std::getenv("XP_TEST_EXPECT_DIR");
  const char* value = std::getenv("XP_CACHE_DIR");
  ASSERT_TRUE(expect != nullptr && value != nullptr) << "run by ConfigEnvironment.CacheDirIsAbsoluteAndTildeIsRefused";
  if (std::string(expect) == "error") {
    try {
      (void)xp::config();
      FAIL() << "XP_CACHE_DIR='" << value << "' was accepted";
    } catch (const xp::ConfigError& err) {
      EXPECT_EQ(err.variable(), "XP_CACHE_DIR");
      EXPECT_NE(err.accepted().find("$HOME"), std::string::npos) << err.accepted();
    }
    return;
  }
  EXPECT_EQ(xp::config().cache_dir, expect);
  ASSERT_EQ(::chdir("/"), 0);
  EXPECT_EQ(xp::config().cache_dir, expect) << "read once";
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
