// `xp bench`: the sweep's plot and CSV (tools/xp/bench_plot.cpp), and the CLI's CPU rows end to end
// (what `xp bench launch` and `xp bench sweep` run on a machine without a GPU, or with --cpu), with
// the Python rows of bench/python/launch_rows.py: a row that cannot import says why, and a wrong
// output is reported with its index.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../tools/xp/bench_plot.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using xp_cli::plot::Point;
using xp_cli::plot::Series;

struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string t = (fs::temp_directory_path() / "xp-test-bench-XXXXXX").string();
    if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = t;
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

// A series whose calls cost `overhead` ms plus n elements at `gbps`.
Series model(const std::string& id, const std::string& label, double overhead_ms, double gbps) {
  Series s{id, label, {}};
  for (int k = 10; k <= 26; ++k) {
    const double n = std::ldexp(1.0, k);
    const double ms = overhead_ms + 12 * n / (gbps * 1e9) * 1e3;
    s.points.push_back({n, ms, 12 * n / (ms * 1e-3) / 1e9, true});
  }
  return s;
}

TEST(BenchPlot, OverheadThresholdIsWhereACallCostsTwiceTheSmallest) {
  // 5 us of overhead, 1000 GB/s: the time doubles once 12 n / 1e12 s >= 5 us, n >= 416,667: 2^19.
  const Series s = model("a", "a", 0.005, 1000);
  EXPECT_EQ(xp_cli::plot::overhead_threshold(s), std::ldexp(1.0, 19));
  // Pure overhead never gets there; one point says nothing.
  Series flat{"f", "f", {{1024, 1, 1, true}, {2048, 1, 2, true}}};
  EXPECT_EQ(xp_cli::plot::overhead_threshold(flat), 0);
  EXPECT_EQ(xp_cli::plot::overhead_threshold(Series{"o", "o", {{1024, 1, 1, true}}}), 0);
}

TEST(BenchPlot, CsvHasOneLinePerPointAndQuotesLabels) {
  const std::vector<Series> series{model("xp", "xp, \"fused\"", 0.004, 3000), model("torch", "PyTorch", 0.008, 3000)};
  const std::string csv = xp_cli::plot::csv(series);
  std::istringstream in(csv);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 1 + 2 * 17u);
  EXPECT_EQ(lines[0], "row,label,n,ms_per_call,gbps,bits_ok");
  EXPECT_EQ(lines[1].rfind("xp,\"xp, \"\"fused\"\"\",1024,", 0), 0u) << lines[1];
  EXPECT_NE(lines.back().find("torch,\"PyTorch\",67108864,"), std::string::npos) << lines.back();
  EXPECT_EQ(lines.back().substr(lines.back().size() - 4), "true");
}

TEST(BenchPlot, SvgIsValidWithLabelledAxesAndOneSeriesPerRow) {
  std::vector<Series> series{model("raw", "raw <driver> & NVRTC", 0.003, 3400), model("xp", "xp", 0.004, 3400),
                             model("cupy-add", "CuPy a + b", 0.010, 3300)};
  series[2].points[3].bits_ok = false;  // a mismatch is marked on the plot
  TempFolder tmp;
  const fs::path file = tmp.path / "plot.svg";
  write_file(file, xp_cli::plot::svg(series, "sweep & test"));
  const auto ref = xp_test::run_python_reference("check_svg.py", {file.string()});
  XP_REQUIRE_REFERENCE(ref);
  const json got = json::parse(ref.out);
  EXPECT_EQ(got["root"], "{http://www.w3.org/2000/svg}svg");
  EXPECT_EQ(got["title"], "sweep & test");
  ASSERT_EQ(got["axis_labels"].size(), 4u);  // x and y of both panels
  const std::string labels = got["axis_labels"].dump();
  EXPECT_NE(labels.find("elements n"), std::string::npos) << labels;
  EXPECT_NE(labels.find("time per call (ms)"), std::string::npos) << labels;
  EXPECT_NE(labels.find("GB/s"), std::string::npos) << labels;
  for (const char* panel : {"time", "bandwidth"}) {
    ASSERT_TRUE(got["panels"].contains(panel)) << got.dump();
    const auto& s = got["panels"][panel];
    ASSERT_EQ(s.size(), 3u) << panel;
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(s[i]["row"], series[i].id);
      EXPECT_EQ(s[i]["points"], 17);
      EXPECT_TRUE(s[i]["x_increasing"].get<bool>());
    }
  }
  ASSERT_EQ(got["legend"].size(), 3u);
  EXPECT_EQ(got["legend"][0]["text"], "raw <driver> & NVRTC");
  EXPECT_EQ(got["thresholds"].size(), 6u);  // every series crosses 2x, marked in both panels
  const std::string svg = read_file(file);
  EXPECT_NE(svg.find("class=\"mismatch\""), std::string::npos);
}

// ---- The CLI's CPU rows --------------------------------------------------------------------------

bool have_python() {
  return access(XP_TEST_PYTHON, X_OK) == 0;
}

#define XP_REQUIRE_PYTHON()                                                                                 \
  do {                                                                                                      \
    if (!have_python())                                                                                     \
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", std::string("no Python at ") + XP_TEST_PYTHON + " (.venv)"); \
  } while (0)

TEST(BenchCli, LaunchCpuRowsRunInTwoProcessesAndMatchBitForBit) {
  XP_REQUIRE_PYTHON();
  TempFolder tmp;
  const fs::path j = tmp.path / "launch.json", md = tmp.path / "launch.md";
  const auto r = xp_test::run_process(
      {XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "5000", "--runs", "1", "--python", XP_TEST_PYTHON, "--only",
       "xp-add,xp-add-out,xp-fma,numpy-add-out,numpy-fma", "--json", j.string(), "--md", md.string()},
      {{"XP_NUM_THREADS", "2"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU rows skipped:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("### First process of each row (caches emptied)"), std::string::npos);
  EXPECT_NE(r.out.find("### Second process of each row"), std::string::npos);
  EXPECT_NE(r.out.find("Caches emptied before each row's first process"), std::string::npos);
  EXPECT_EQ(read_file(md), r.out.substr(0, read_file(md).size()));
  const json doc = json::parse(read_file(j));
  EXPECT_EQ(doc["mode"], "cpu");
  EXPECT_EQ(doc["n"], 5000);
  std::vector<std::string> ids;
  for (const auto& row : doc["rows"]) {
    ids.push_back(row["id"]);
    for (const char* which : {"first_process", "second_process"}) {
      const auto& samples = row[which]["samples"];
      ASSERT_EQ(samples.size(), 1u) << row["id"] << which;
      const auto& s = samples[0];
      EXPECT_TRUE(s["ok"].get<bool>()) << s.dump();
      EXPECT_TRUE(s["bits_ok"].get<bool>()) << s.dump();
      EXPECT_GT(s["steady_ms"].get<double>(), 0);
      EXPECT_GT(s["host_us"].get<double>(), 0);
      if (row["op"] == "fma") {
        EXPECT_EQ(s["rounding"], "separate") << s.dump();  // NumPy and xp round twice
      }
    }
    EXPECT_NE(row["first_process"]["bits"].get<std::string>().find("OK (1/1)"), std::string::npos);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"xp-add", "xp-add-out", "xp-fma", "numpy-add-out", "numpy-fma"}));
  EXPECT_TRUE(doc["versions"].contains("numpy")) << doc["versions"].dump();
}

TEST(BenchCli, SweepWritesJsonCsvAndSvg) {
  XP_REQUIRE_PYTHON();
  TempFolder tmp;
  const fs::path j = tmp.path / "s.json", csv = tmp.path / "s.csv", svg = tmp.path / "s.svg";
  const auto r = xp_test::run_process({XP_CLI_PATH, "bench", "sweep", "--cpu", "--min-log2", "10", "--max-log2", "12",
                                       "--python", XP_TEST_PYTHON, "--only", "xp-add-out,xp-fma,numpy-add-out",
                                       "--json", j.string(), "--csv", csv.string(), "--svg", svg.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json doc = json::parse(read_file(j));
  EXPECT_EQ(doc["sizes"], (std::vector<int>{1024, 2048, 4096}));
  ASSERT_EQ(doc["rows"].size(), 3u);
  for (const auto& row : doc["rows"]) {
    const auto& pts = row["sample"]["sweep"];
    ASSERT_EQ(pts.size(), 3u) << row.dump();
    for (const auto& p : pts) {
      EXPECT_TRUE(p["bits_ok"].get<bool>()) << p.dump();
      EXPECT_GT(p["steady_ms"].get<double>(), 0);
    }
  }
  std::istringstream in(read_file(csv));
  int lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  EXPECT_EQ(lines, 1 + 3 * 3);
  const auto ref = xp_test::run_python_reference("check_svg.py", {svg.string()});
  XP_REQUIRE_REFERENCE(ref);
  const json got = json::parse(ref.out);
  ASSERT_EQ(got["panels"]["time"].size(), 3u);
  ASSERT_EQ(got["panels"]["bandwidth"].size(), 3u);
  EXPECT_EQ(got["panels"]["time"][2]["row"], "numpy-add-out");
  EXPECT_EQ(got["legend"].size(), 3u);
}

TEST(BenchCli, BadSweepRangeIsAnError) {
  const auto r = xp_test::run_process(
      {XP_CLI_PATH, "bench", "sweep", "--cpu", "--min-log2", "12", "--max-log2", "10", "--python", "none"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--min-log2"), std::string::npos) << r.err;
}

TEST(BenchCli, MissingPythonIsSaidAndTheCppRowsStillRun) {
  const auto r = xp_test::run_process({XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "2048", "--runs", "1",
                                       "--python", "/nonexistent/python3", "--only", "xp-add"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Python rows skipped: '/nonexistent/python3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| xp c = a + b (arrays) on the CPU |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OK (1/1)"), std::string::npos) << r.out;
}

// The Python rows directly: inputs written here with a planted wrong reference element, and a
// module that does not import.
class PythonRows : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_python()) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", std::string("no Python at ") + XP_TEST_PYTHON);
  }
  xp_test::ProcessResult run_row(const std::string& row, const fs::path& data,
                                 std::map<std::string, std::string> env = {}) {
    return xp_test::run_process({XP_TEST_PYTHON, std::string(XP_SOURCE_DIR) + "/bench/python/launch_rows.py", "run",
                                 "--row", row, "--data", data.string(), "--n", "3000", "--host-launches", "10"},
                                env);
  }
  // Writes the six files with NumPy; `corrupt` changes add.f32[corrupt] when >= 0.
  void write_data(const fs::path& dir, int corrupt) {
    const std::string code =
        "import numpy as np, sys, os\n"
        "d = sys.argv[1]; k = int(sys.argv[2]); r = np.random.default_rng(7)\n"
        "a, b, c = (r.uniform(-4, 4, 3000).astype(np.float32) for _ in range(3))\n"
        "add = a + b\n"
        "if k >= 0: add[k] = np.float32(12345)\n"
        "sep = a * b + c\n"
        "fused = (a.astype(np.float64) * b + c).astype(np.float32)\n"
        "for name, v in (('a', a), ('b', b), ('c', c), ('add', add), ('fma_separate', sep), ('fma_fused', fused)):\n"
        "    v.astype('<f4').tofile(os.path.join(d, name + '.f32'))\n";
    const fs::path script = dir / "make.py";
    write_file(script, code);
    const auto r = xp_test::run_process({XP_TEST_PYTHON, script.string(), dir.string(), std::to_string(corrupt)});
    if (r.exit_code != 0) {
      if (r.err.find("No module named 'numpy'") != std::string::npos)
        XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", "NumPy is missing in " XP_TEST_PYTHON);
      FAIL() << r.err;
    }
  }
};

TEST_F(PythonRows, AWrongElementIsReportedWithItsIndex) {
  TempFolder tmp;
  write_data(tmp.path, 1234);
  if (IsSkipped() || HasFailure()) return;
  const auto r = run_row("numpy-add-out", tmp.path);
  const json s = json::parse(r.out);
  EXPECT_TRUE(s["ok"].get<bool>()) << r.out << r.err;
  EXPECT_FALSE(s["bits_ok"].get<bool>()) << r.out;
  EXPECT_EQ(s["first_mismatch"], 1234);
  EXPECT_NE(s["mismatch"].get<std::string>().find("index 1234 holds 0x"), std::string::npos) << s["mismatch"];
  EXPECT_EQ(r.exit_code, 0);  // the row ran; the parent shows the mismatch
}

TEST_F(PythonRows, TheRightOutputMatchesAndFmaRowsSayWhichReference) {
  TempFolder tmp;
  write_data(tmp.path, -1);
  if (IsSkipped() || HasFailure()) return;
  for (const char* row : {"numpy-add", "numpy-add-out", "numpy-fma"}) {
    const auto r = run_row(row, tmp.path);
    const json s = json::parse(r.out);
    EXPECT_TRUE(s["ok"].get<bool>() && s["bits_ok"].get<bool>()) << row << ": " << r.out << r.err;
    if (std::string(row) == "numpy-fma") {
      EXPECT_EQ(s["rounding"], "separate");
    }
  }
}

TEST_F(PythonRows, AModuleThatDoesNotImportIsASkipWithItsError) {
  TempFolder tmp;
  write_data(tmp.path, -1);
  if (IsSkipped() || HasFailure()) return;
  write_file(tmp.path / "torch.py", "raise ImportError('planted: this torch is broken')\n");
  const auto r = run_row("torch-add", tmp.path, {{"PYTHONPATH", tmp.path.string()}});
  EXPECT_EQ(r.exit_code, 1);
  const json s = json::parse(r.out);
  EXPECT_FALSE(s["ok"].get<bool>());
  EXPECT_NE(s["skipped"].get<std::string>().find("torch does not import: ImportError: planted"), std::string::npos)
      << r.out;
}

}  // namespace
