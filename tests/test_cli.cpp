// The xp command line's own messages: `xp` alone prints its help, an unknown command is named with
// the commands there are (not CLI11's "A subcommand is required"), and usage lines say `xp`, not the
// path the binary was started by.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

xp_test::ProcessResult xp_cli(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {XP_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return xp_test::run_process(argv, {{"FORCE_CPU", "1"}});
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(Cli, UnknownCommandIsNamedWithTheCommandsThereAre) {
  const auto r = xp_cli({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "unknown command 'frobnicate'")) << r.err;
  for (const char* command : {"doctor", "version", "compile", "cache", "bench"})
    EXPECT_TRUE(has(r.err, command)) << command << " missing from: " << r.err;
  EXPECT_FALSE(has(r.err, "A subcommand is required")) << r.err;
  EXPECT_EQ(r.out, "");

  // Options after it change nothing; an unknown option in its place is named as an option.
  const auto with_option = xp_cli({"frobnicate", "--json"});
  EXPECT_EQ(with_option.exit_code, 2);
  EXPECT_TRUE(has(with_option.err, "unknown command 'frobnicate'")) << with_option.err;
  const auto option = xp_cli({"--frob"});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_TRUE(has(option.err, "unknown option '--frob'")) << option.err;
}

TEST(Cli, UnknownBenchCommandIsNamedWithBenchsCommands) {
  const auto r = xp_cli({"bench", "frob"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "xp bench: unknown command 'frob'")) << r.err;
  EXPECT_TRUE(has(r.err, "launch") && has(r.err, "sweep")) << r.err;
  EXPECT_FALSE(has(r.err, "A subcommand is required")) << r.err;
}

TEST(Cli, NoCommandPrintsTheHelp) {
  const auto r = xp_cli({});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;  // nothing was asked for: a usage error, as before
  EXPECT_TRUE(has(r.out, "Usage: xp [OPTIONS] SUBCOMMAND")) << r.out;
  for (const char* command : {"doctor", "version", "compile", "cache", "bench"})
    EXPECT_TRUE(has(r.out, command)) << command << " missing from: " << r.out;
  EXPECT_FALSE(has(r.err, "A subcommand is required")) << r.err;

  const auto bench = xp_cli({"bench"});
  EXPECT_EQ(bench.exit_code, 2) << bench.out << bench.err;
  EXPECT_TRUE(has(bench.out, "Usage: xp bench")) << bench.out;
  EXPECT_TRUE(has(bench.out, "launch") && has(bench.out, "sweep")) << bench.out;
}

TEST(Cli, UsageLinesSayXpNotThePathOfTheBinary) {
  const auto help = xp_cli({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_TRUE(has(help.out, "Usage: xp [OPTIONS] SUBCOMMAND")) << help.out;
  EXPECT_FALSE(has(help.out, XP_CLI_PATH)) << help.out;
  const auto sub = xp_cli({"compile", "--help"});
  EXPECT_EQ(sub.exit_code, 0) << sub.err;
  EXPECT_TRUE(has(sub.out, "Usage: xp compile")) << sub.out;
  EXPECT_FALSE(has(sub.out, XP_CLI_PATH)) << sub.out;
}

TEST(Cli, OtherUsageErrorsAreCli11sAsBefore) {
  // A known command missing its argument keeps CLI11's message and exit code 2.
  const auto r = xp_cli({"cache"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "action is required")) << r.err;
  const auto version = xp_cli({"version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
}

// XP_LOG=info says what detection found (the driver, NVRTC and GPUs, or why CUDA is not usable)
// and which device became the default and why; nothing of it at the default level.
TEST(Cli, LogInfoSaysWhatDetectionFoundAndWhichDeviceIsTheDefault) {
  const std::map<std::string, std::string> fake = {
      {"XP_CUDA_DRIVER", XP_FAKE_DRIVER_PATH}, {"XP_FAKE_CUDA", "hollow"}, {"XP_LOG", "info"}};
  const auto r = xp_test::run_process({XP_CLI_PATH, "doctor"}, fake, {"FORCE_CPU", "XP_DEVICE"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  if (has(r.err, "xp: info: CUDA driver ")) {
    EXPECT_TRUE(has(r.err, std::string("CUDA driver ") + XP_FAKE_DRIVER_PATH + " (CUDA 13.0), NVRTC ")) << r.err;
    EXPECT_TRUE(has(r.err, "1 GPU: xp fake GPU (sm_90)")) << r.err;
    EXPECT_TRUE(has(r.err, "xp: info: default device cuda:0 (XP_DEVICE unset, CUDA usable)")) << r.err;
  } else {  // no NVRTC here
    EXPECT_TRUE(has(r.err, "xp: info: CUDA not usable (no_usable_nvrtc)")) << r.err;
    EXPECT_TRUE(has(r.err, "xp: info: default device cpu (XP_DEVICE unset, CUDA not usable: no_usable_nvrtc)"))
        << r.err;
  }
  const auto forced = xp_test::run_process({XP_CLI_PATH, "doctor"}, {{"FORCE_CPU", "1"}, {"XP_LOG", "info"}});
  EXPECT_TRUE(has(forced.err, "xp: info: default device cpu (FORCE_CPU is set)")) << forced.err;
  const auto quiet = xp_test::run_process({XP_CLI_PATH, "doctor"}, {{"FORCE_CPU", "1"}}, {"XP_LOG"});
  EXPECT_FALSE(has(quiet.err, "xp: info:")) << quiet.err;
}

// XP_LOG=debug names each compile and each disk cache hit, with the entry's file.
TEST(Cli, LogDebugNamesEachCompileAndDiskCacheHit) {
  XP_REQUIRE_NVRTC();
  xp_test::TempDir dir;
  const std::string source = dir / "scale.cu";
  {
    std::FILE* f = std::fopen(source.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("extern \"C\" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n", f);
    std::fclose(f);
  }
  const std::map<std::string, std::string> env = {{"XP_CACHE_DIR", dir / "cache"}, {"XP_LOG", "debug"}};
  const auto first = xp_test::run_process({XP_CLI_PATH, "compile", source, "--arch", "sm_90"}, env);
  EXPECT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_TRUE(has(first.err, "xp: debug: compiled (disk cache miss): " + source + " for sm_90 in ")) << first.err;
  EXPECT_TRUE(has(first.err, dir / "cache")) << first.err;
  const auto second = xp_test::run_process({XP_CLI_PATH, "compile", source, "--arch", "sm_90"}, env);
  EXPECT_TRUE(has(second.err, "xp: debug: disk cache hit: " + source + " for sm_90, " + dir.path() + "/cache/"))
      << second.err;
  EXPECT_FALSE(has(second.err, "compiled (disk cache miss)")) << second.err;
}
