// `xp cache warm`: without a usable GPU it says why and fails; on a GPU it fills the kernel disk
// cache once, and a second run finds everything there.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <regex>
#include <string>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

namespace fs = std::filesystem;

TEST(CacheWarm, WithoutAGpuItSaysWhyAndFails) {
  const auto r = xp_test::run_process({XP_CLI_PATH, "cache", "warm"}, {{"FORCE_CPU", "1"}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("xp cache warm: no GPU to compile for: disabled_by_user"), std::string::npos) << r.err;
}

// The count in warm's "(N new)", or none when the line is missing.
std::optional<std::size_t> new_entries(const std::string& out) {
  std::smatch m;
  static const std::regex re(R"(\((\d+) new\))");
  if (!std::regex_search(out, m, re)) return std::nullopt;
  return std::stoul(m[1]);
}

TEST(CacheWarm, OnAGpuTheSecondRunFindsEverything) {
  XP_REQUIRE_GPU();
  std::string dir = (fs::temp_directory_path() / "xp-test-warm-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const auto first =
      xp_test::run_process({XP_CLI_PATH, "cache", "warm"}, {{"XP_CACHE_DIR", dir}}, {"FORCE_CPU", "XP_DEVICE"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  ASSERT_TRUE(new_entries(first.out).has_value()) << first.out;
  EXPECT_GE(*new_entries(first.out), 40u) << first.out;  // six dtypes, each a few dozen kernels
  const auto second =
      xp_test::run_process({XP_CLI_PATH, "cache", "warm"}, {{"XP_CACHE_DIR", dir}}, {"FORCE_CPU", "XP_DEVICE"});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(new_entries(second.out), std::optional<std::size_t>(0)) << second.out;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
