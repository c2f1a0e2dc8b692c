// xp_bench_first_call on the CPU (XP_DEVICE=cpu): its line reports the checked result, the page
// faults and context switches of the first a + b, and the code it filled first; bad arguments exit 2.
// The GPU figures are in bench/results/ (2026-12-04-h200-alloc-beside-lookup).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "test_util.hpp"

namespace {

xp_test::ProcessResult run(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {XP_BENCH_FIRST_CALL_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return xp_test::run_process(argv, {{"XP_DEVICE", "cpu"}, {"XP_NUM_THREADS", "2"}});
}

const std::regex kLine(
    R"(plain n=4099 .*first a\+b ([0-9.]+) ms, then first a\*b ([0-9.]+) ms \(cpu, a \+ b checked\); first a\+b: )"
    R"((\d+) minor, (\d+) major faults, (\d+) voluntary, (\d+) involuntary switches; prefault (\w+) (\d+) KiB in )"
    R"(([0-9.]+) ms; XP_PRELOAD_KERNELS (\d+))");

}  // namespace

TEST(FirstCallBench, ReportsTheCheckedResultAndWhatTheFirstCallCost) {
  const auto r = run({"plain", "4099"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, kLine)) << r.out;
  EXPECT_GT(std::stod(m[1]), 0.0);
  EXPECT_EQ(m[7], "none");
  EXPECT_EQ(m[8], "0");
  EXPECT_EQ(m[10], "16") << "the default";
}

TEST(FirstCallBench, FillsTheCodeItIsAskedFor) {
  std::map<std::string, long> kib;
  for (const char* which : {"xp", "cuda", "all"}) {
    const auto r = run({"plain", "4099", which});
    ASSERT_EQ(r.exit_code, 0) << which << ": " << r.out << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, kLine)) << r.out;
    EXPECT_EQ(m[7], which);
    kib[which] = std::stol(m[8]);
  }
  // libxp's executable segment is in every xp process: more than a MiB of code. The driver's is
  // there when detection loaded it (a machine with a driver), else nothing of it is filled.
  EXPECT_GT(kib["xp"], 1024);
  EXPECT_EQ(kib["all"], kib["xp"] + kib["cuda"]);
}

TEST(FirstCallBench, BadArgumentsExitTwoAndSayWhy) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  for (const Case& c : {Case{{"loud"}, "mode loud: expected plain"}, Case{{"plain", "0"}, "N 0: expected a positive"},
                        Case{{"plain", "64", "text"}, "PREFAULT text: expected none, xp, cuda or all"},
                        Case{{"device-inputs", "64"}, "device-inputs needs a CUDA device"}}) {
    const auto r = run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "nothing measured is printed for bad arguments";
  }
}
