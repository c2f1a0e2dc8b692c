// A build names the source tree it came from: xp::source_hash(), `xp --version` and
// `xp doctor --json` agree with scripts/source_hash.sh run on the tree the build was made from.
#include <gtest/gtest.h>

#include <string>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

std::string script_hash() {
  const auto r = xp_test::run_process({"/bin/bash", XP_SOURCE_DIR "/scripts/source_hash.sh", XP_SOURCE_DIR});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

bool is_hex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

TEST(SourceHash, TheLibraryKnowsItsTree) {
  const std::string lib(xp::source_hash());
  ASSERT_TRUE(is_hex64(lib)) << lib;
  // The build ran the same method on the same files (rebuild after editing a source to pass this).
  EXPECT_EQ(lib, script_hash());
  EXPECT_EQ(xp::system_report().xp_source, lib);
}

TEST(SourceHash, CliPrintsIt) {
  const std::string lib(xp::source_hash());
  auto r = xp_test::run_process({XP_CLI_PATH, "--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(xp::version()) + " (source " + lib + ")\n");
  r = xp_test::run_process({XP_CLI_PATH, "version"});
  EXPECT_EQ(r.out, std::string(xp::version()) + " (source " + lib + ")\n");
  r = xp_test::run_process({XP_CLI_PATH, "doctor", "--json"}, {{"FORCE_CPU", "1"}});
  EXPECT_NE(r.out.find("\"xp_source\": \"" + lib + "\""), std::string::npos) << r.out;
}

// The script's hash changes with a file's content and with a file's name.
TEST(SourceHash, ScriptFollowsContentAndNames) {
  xp_test::TempDir tmp;
  auto run = [&] {
    const auto r = xp_test::run_process({"/bin/bash", XP_SOURCE_DIR "/scripts/source_hash.sh", tmp.path()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  ASSERT_EQ(::system(("mkdir -p '" + tmp.path() + "/src' '" + tmp.path() + "/bench/results'").c_str()), 0);
  ASSERT_EQ(::system(("echo a > '" + tmp.path() + "/src/a.cpp'").c_str()), 0);
  const std::string first = run();
  ASSERT_EQ(::system(("echo result > '" + tmp.path() + "/bench/results/r.txt'").c_str()), 0);
  EXPECT_EQ(run(), first) << "bench/results is not source";
  ASSERT_EQ(::system(("echo b > '" + tmp.path() + "/src/a.cpp'").c_str()), 0);
  const std::string second = run();
  EXPECT_NE(second, first);
  ASSERT_EQ(::system(("mv '" + tmp.path() + "/src/a.cpp' '" + tmp.path() + "/src/b.cpp'").c_str()), 0);
  const std::string third = run();
  EXPECT_NE(third, second);
  // The Python package's sources are xp's code too; its tests are not.
  ASSERT_EQ(::system(("mkdir -p '" + tmp.path() + "/python/tests' '" + tmp.path() + "/python/src'").c_str()), 0);
  ASSERT_EQ(::system(("echo t > '" + tmp.path() + "/python/tests/test_t.py'").c_str()), 0);
  EXPECT_EQ(run(), third) << "python/tests is not source";
  ASSERT_EQ(::system(("echo p > '" + tmp.path() + "/python/src/p.cpp'").c_str()), 0);
  EXPECT_NE(run(), third);
}
