// The reduction sweep without a GPU: xp_bench_gpu_reductions --sweep-cases (one fixed list, every op
// and dtype, rows between the kernels' thresholds, the same ids with --quick), --sweep --cpu on a
// few of its cases (each checked against the CPU backend), bad case files, and the Python side
// (bench/python/test_sweep.py: sweep_ratio.py's join, ratio and report; gpu_reductions.py --sweep
// on NumPy, joined to xp's output of the same cases).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace fs = std::filesystem;

namespace {

xp_test::ProcessResult run(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {XP_BENCH_GPU_REDUCTIONS_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return xp_test::run_process(argv, {{"XP_DEVICE", "cpu"}, {"XP_NUM_THREADS", "1"}});
}

struct Listed {
  std::string id, op, dtype, shape, axis;
};

std::vector<Listed> parse(const std::string& text) {
  std::vector<Listed> cases;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    Listed c;
    std::string extra;
    EXPECT_TRUE((words >> c.id >> c.op >> c.dtype >> c.shape >> c.axis) && !(words >> extra)) << line;
    cases.push_back(c);
  }
  return cases;
}

std::vector<long long> dims(const std::string& shape) {
  std::vector<long long> d;
  std::istringstream parts(shape);
  std::string part;
  while (std::getline(parts, part, 'x')) d.push_back(std::stoll(part));
  return d;
}

const std::map<std::string, long long> kItem = {{"float32", 4},  {"float64", 8}, {"float16", 2},
                                                {"bfloat16", 2}, {"int8", 1},    {"uint8", 1},
                                                {"int32", 4},    {"int64", 8},   {"bool", 1}};

struct TempFile {
  fs::path path;
  explicit TempFile(const std::string& text) {
    path = fs::temp_directory_path() / ("xp_sweep_cases_" + std::to_string(::getpid()) + ".txt");
    std::ofstream(path) << text;
  }
  ~TempFile() { fs::remove(path); }
};

}  // namespace

TEST(ReductionSweep, OneFixedListOfEveryOpAndDtypeOverRowsBetweenTheThresholds) {
  const auto a = run({"--sweep-cases"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(run({"--sweep-cases"}).out, a.out) << "the list is deterministic";
  const std::vector<Listed> cases = parse(a.out);
  const std::vector<Listed> quick = parse(run({"--sweep-cases", "--quick"}).out);
  ASSERT_EQ(quick.size(), cases.size());

  std::set<std::string> ids, pairs, layouts, sizes;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Listed& c = cases[i];
    EXPECT_TRUE(ids.insert(c.id).second) << "repeated id " << c.id;
    EXPECT_EQ(quick[i].id, c.id) << "--quick keeps the ids";
    // <op>.<dtype>.<layout>.<size>, and the shape and axis the layout says
    std::vector<std::string> part;
    std::istringstream id(c.id);
    for (std::string p; std::getline(id, p, '.');) part.push_back(p);
    ASSERT_EQ(part.size(), 4u) << c.id;
    EXPECT_EQ(part[0], c.op);
    EXPECT_EQ(part[1], c.dtype);
    ASSERT_TRUE(kItem.count(c.dtype)) << c.id;
    pairs.insert(c.op + " " + c.dtype);
    layouts.insert(part[2]);
    sizes.insert(part[3]);
    const long long nominal = part[3] == "1G" ? 1LL << 30 : std::stoll(part[3]) << 20;
    const std::vector<long long> d = dims(c.shape);
    long long bytes = kItem.at(c.dtype);
    for (long long n : d) bytes *= n;
    EXPECT_LE(bytes, nominal) << c.id;
    EXPECT_GT(bytes, nominal - nominal / 10) << c.id << ": a whole number of rows, within 10%";
    if (part[2] == "all") {
      EXPECT_EQ(d.size(), 1u) << c.id;
      EXPECT_EQ(c.axis, "all") << c.id;
    } else {
      ASSERT_EQ(d.size(), 2u) << c.id;
      EXPECT_EQ(c.axis, part[2].rfind("rows", 0) == 0 ? "1" : "0") << c.id;
      EXPECT_EQ(std::to_string(d[1] * kItem.at(c.dtype) / 1024) + "K", part[2].substr(4)) << c.id << ": the row's KiB";
      const std::vector<long long> q = dims(quick[i].shape);
      EXPECT_EQ(q[1], d[1]) << c.id << ": --quick keeps the row length";
    }
  }
  // Every op of every dtype (any and all of bool), as both baselines have them.
  for (const char* op : {"sum", "mean", "max", "min", "argmax", "argmin", "var", "std", "prod"})
    for (const char* t : {"float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64"})
      EXPECT_TRUE(pairs.count(std::string(op) + " " + t)) << op << " " << t;
  EXPECT_TRUE(pairs.count("any bool") && pairs.count("all bool"));
  EXPECT_EQ(pairs.size(), 74u);
  // The whole array, and rows and columns of 1 to 256 KiB, between the 16 and 64 KiB thresholds too.
  std::set<std::string> want = {"all"};
  for (const char* k : {"1K", "4K", "16K", "24K", "40K", "64K", "96K", "256K"}) {
    want.insert(std::string("rows") + k);
    want.insert(std::string("cols") + k);
  }
  EXPECT_EQ(layouts, want);
  EXPECT_EQ(sizes, (std::set<std::string>{"1M", "16M", "128M", "1G"}));
  // float32 sum, max and argmax at every size over every layout.
  for (const std::string op : {"sum", "max", "argmax"})
    for (const std::string& layout : want)
      for (const std::string& size : sizes) EXPECT_TRUE(ids.count(op + ".float32." + layout + "." + size));
}

TEST(ReductionSweep, RunsCasesOfTheListOnTheCpuAndChecksEach) {
  const std::vector<Listed> all = parse(run({"--sweep-cases", "--quick"}).out);
  std::string text = "# a few cases\n";
  int n = 0;
  for (const Listed& c : all) {
    const bool pick = c.id.find(".1M") != std::string::npos ||
                      (c.id.find(".16M") != std::string::npos &&
                       (c.id.find("rows24K") != std::string::npos || c.id.find("cols96K") != std::string::npos));
    if (!pick || (c.dtype != "float32" && c.dtype != "int8" && c.dtype != "bool" && c.dtype != "bfloat16")) continue;
    text += c.id + " " + c.op + " " + c.dtype + " " + c.shape + " " + c.axis + "\n";
    ++n;
  }
  ASSERT_GT(n, 80);
  const TempFile file(text);
  const auto r = run({"--sweep", "--cpu", "--cases", file.path.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int ok = 0;
  std::set<std::string> ops;
  while (std::getline(lines, line)) {
    if (line.rfind("case ", 0) != 0) continue;
    std::istringstream words(line);
    std::string word, id, check;
    double median = 0, lo = 0, hi = 0;
    ASSERT_TRUE(words >> word >> id >> median >> lo >> hi >> check) << line;
    EXPECT_EQ(check, "ok") << line;
    EXPECT_TRUE(lo <= median && median <= hi && lo > 0) << line;
    ops.insert(id.substr(0, id.find('.')));
    ok += check == "ok" ? 1 : 0;
  }
  EXPECT_EQ(ok, n) << r.out;
  EXPECT_EQ(ops.size(), 11u) << "every op ran";
}

TEST(ReductionSweep, BadCaseFilesExitTwoAndNameTheLine) {
  struct Case {
    std::string text, message;
  };
  for (const Case& c : {Case{"a sum float32 4\n", ":1: expected 5 words"},
                        Case{"# c\na cumsum float32 4 all\n", ":2: unknown op 'cumsum'"},
                        Case{"a sum complex1 4 all\n", "unknown dtype 'complex1'"},
                        Case{"a sum float32 4x 1\n", "bad shape '4x'"}, Case{"a sum float32 4x4 2\n", "bad axis '2'"},
                        Case{"a sum float32 4 all\na max float32 4 all\n", ":2: id 'a' repeats line 1"}}) {
    const TempFile file(c.text);
    const auto r = run({"--sweep", "--cpu", "--cases", file.path.string()});
    EXPECT_EQ(r.exit_code, 2) << c.text;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "nothing runs";
  }
  const auto r = run({"--sweep", "--cpu", "--cases", "/nonexistent/cases.txt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot read /nonexistent/cases.txt"), std::string::npos) << r.err;
  const auto u = run({"--sweep", "--fast"});
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_NE(u.err.find("unknown argument '--fast'"), std::string::npos) << u.err;
}

TEST(ReductionSweep, PythonSideJoinsAndReports) {
  if (access(XP_TEST_PYTHON, X_OK) != 0)
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", std::string("no Python at ") + XP_TEST_PYTHON + " (.venv)");
  const auto r = xp_test::run_process(
      {XP_TEST_PYTHON, std::string(XP_SOURCE_DIR) + "/bench/python/test_sweep.py", XP_BENCH_GPU_REDUCTIONS_PATH},
      {{"XP_NUM_THREADS", "1"}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("\nOK\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("skipped"), std::string::npos) << "every Python test ran: " << r.err;
}

TEST(ReductionSweep, ScriptRunsEverySideOnOneListAndWritesTheReport) {
  if (access(XP_TEST_PYTHON, X_OK) != 0)
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", std::string("no Python at ") + XP_TEST_PYTHON + " (.venv)");
  const fs::path out = fs::temp_directory_path() / ("xp_sweep_out_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = xp_test::run_process(
      {std::string(XP_SOURCE_DIR) + "/bench/reduction_sweep.sh", out.string(), XP_BINARY_DIR, "--python",
       XP_TEST_PYTHON, "--cpu", "--quick", "--only", R"(^(sum|argmax)\.float32\.(rows24K|cols96K|all)\.1M )"},
      {{"XP_NUM_THREADS", "1"}});
  auto read = [&](const char* name) {
    std::ifstream in(out / name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string machine = read("machine.txt"), report = read("report.md"), cases = read("cases.txt");
  EXPECT_NE(machine.find("\nxp: "), std::string::npos) << machine;
  EXPECT_NE(machine.find("\ncases: 6\n"), std::string::npos) << machine;
  EXPECT_NE(machine.find("\nxp: exit 0 in "), std::string::npos) << machine;
  EXPECT_NE(cases.find("argmax.float32.cols96K.1M argmax float32 1x24576 0\n"), std::string::npos) << cases;
  for (const char* id : {"sum.float32.rows24K.1M", "argmax.float32.cols96K.1M", "sum.float32.all.1M"})
    EXPECT_NE(report.find(std::string("| ") + id + " | "), std::string::npos) << id << "\n" << report;
  EXPECT_NE(report.find("\nworst ratio: "), std::string::npos) << report;
  EXPECT_NE(report.find("\nfailed checks: 0\n"), std::string::npos) << report;
  EXPECT_NE(report.find("\nmissing cases: 0\n"), std::string::npos) << report;
  fs::remove_all(out);
}
