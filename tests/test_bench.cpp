// `xp bench`: the sweep's plot and CSV (tools/xp/bench_plot.cpp), the checks of the sum and matmul
// rows (tools/xp/bench_launch.hpp), and the CLI's CPU rows end to end (what `xp bench launch` and
// `xp bench sweep` run on a machine without a GPU, or with --cpu), with the Python rows of
// bench/python/launch_rows.py: a row that cannot import says why, a wrong output is reported with
// its index, a result out of its bound with its entry.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../tools/xp/bench_launch.hpp"
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

// ---- The checks of the sum and matmul rows ----------------------------------------------------------

namespace bn = xp_cli::bench;

TEST(BenchChecks, SumIsWithinOneMillionthOfTheSumOfMagnitudes) {
  const bn::SumReference ref{1000.0, 1000.0};  // bound: 1e-3
  EXPECT_TRUE(bn::check_sum(1000.0009, ref).ok);
  EXPECT_TRUE(bn::check_sum(999.9991, ref).ok);
  const bn::BoundCheck out = bn::check_sum(1000.0011, ref);
  EXPECT_FALSE(out.ok);
  EXPECT_NEAR(out.error, 0.0011, 1e-12);
  EXPECT_NEAR(out.bound, 1e-3, 1e-15);
  EXPECT_FALSE(bn::check_sum(std::nan(""), ref).ok);
  EXPECT_FALSE(bn::check_sum(HUGE_VAL, ref).ok);
  // Cancellation: the bound follows sum|a|, not the sum.
  EXPECT_TRUE(bn::check_sum(0.5, bn::SumReference{0.0, 1e6}).ok);
  EXPECT_FALSE(bn::check_sum(1.5, bn::SumReference{0.0, 1e6}).ok);
}

TEST(BenchChecks, SumInputIsInOneBinadeAndItsFloat64SumIsExact) {
  constexpr std::size_t n = 1 << 20;
  std::vector<float> a(n);
  std::uint64_t mantissas = 0;  // the exact sum is n + mantissas / 2^23
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = bn::sum_input(i);
    ASSERT_GE(a[i], 1.0f);
    ASSERT_LT(a[i], 2.0f);
    std::uint32_t bits;
    std::memcpy(&bits, &a[i], sizeof bits);
    mantissas += bits & 0x7fffffu;
  }
  EXPECT_NE(bn::sum_input(0), bn::sum_input(1));
  const bn::SumReference r = bn::reference_sum(a.data(), n);
  EXPECT_EQ(r.sum, static_cast<double>(n) + std::ldexp(static_cast<double>(mantissas), -23));
  EXPECT_EQ(r.abs_sum, r.sum);
  // A float32 sum that runs serially drifts out of bound; one in pairs stays within.
  float serial = 0;
  for (float x : a) serial += x;
  std::vector<float> tree(a);
  for (std::size_t w = n; w > 1; w /= 2)
    for (std::size_t i = 0; i < w / 2; ++i) tree[i] = tree[2 * i] + tree[2 * i + 1];
  EXPECT_TRUE(bn::check_sum(tree[0], r).ok) << tree[0] << " vs " << r.sum;
  EXPECT_FALSE(bn::check_sum(serial, r).ok) << serial << " vs " << r.sum;
  // A lost block of 1024 elements is out of bound too.
  EXPECT_FALSE(bn::check_sum(r.sum - bn::reference_sum(a.data(), 1024).sum, r).ok);
}

TEST(BenchChecks, MatmulBoundIsTheOutputRoundingWhenTheAccumulationIsExact) {
  const double u = std::ldexp(1.0, -24), u16 = std::ldexp(1.0, -11);
  // Integer terms with sum |a b| <= 2^24: only the output's rounding.
  EXPECT_EQ(bn::matmul_bound(1000, 5000, 8192, true, false), 1000 * u);
  EXPECT_EQ(bn::matmul_bound(-3000, 5000, 8192, true, true), 3000 * u16);
  EXPECT_EQ(bn::matmul_bound(0, 5000, 8192, true, false), 0);
  // Past 2^24, or non-integer terms: gamma_k * sum |a b| as well.
  const double ku = 8192 * u, gamma = ku / (1 - ku);
  EXPECT_DOUBLE_EQ(bn::matmul_bound(1000, std::ldexp(1.0, 25), 8192, true, false),
                   gamma * std::ldexp(1.0, 25) + 1000 * u);
  EXPECT_DOUBLE_EQ(bn::matmul_bound(1.5, 3, 8192, false, true), gamma * 3 + 1.5 * u16);
  // Verdicts: an exact entry that is off by one is out; float16's rounding of 2049 to 2048 is in.
  EXPECT_TRUE(bn::check_bound(1000, 1000, bn::matmul_bound(1000, 5000, 8192, true, false)).ok);
  EXPECT_FALSE(bn::check_bound(1001, 1000, bn::matmul_bound(1000, 5000, 8192, true, false)).ok);
  EXPECT_TRUE(bn::check_bound(2048, 2049, bn::matmul_bound(2049, 5000, 8192, true, true)).ok);
  EXPECT_FALSE(bn::check_bound(2044, 2049, bn::matmul_bound(2049, 5000, 8192, true, true)).ok);
  EXPECT_FALSE(bn::check_bound(std::nan(""), 0, 1e30).ok);
}

TEST(BenchChecks, MatmulInputsAreSmallIntegersAndFloat32NeedsMoreThanTf32) {
  bool beyond_tf32 = false;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const float a32 = bn::matmul_input(false, 0, i), b32 = bn::matmul_input(false, 1, i);
    const float a16 = bn::matmul_input(true, 0, i), b16 = bn::matmul_input(true, 1, i);
    for (float v : {a32, b32, a16, b16}) ASSERT_EQ(v, std::floor(v));
    ASSERT_LE(std::fabs(a32), 4095);
    ASSERT_LE(std::fabs(b32), 1);
    ASSERT_LE(std::fabs(a16), 8);
    ASSERT_LE(std::fabs(b16), 8);
    beyond_tf32 = beyond_tf32 || (std::fabs(a32) > 2048 && std::fmod(a32, 2) != 0);
  }
  EXPECT_TRUE(beyond_tf32);
}

// A with its mantissa rounded to TF32's 10 bits (nearest, ties away: either way the 12-bit
// integers change).
float to_tf32(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  b = (b + 0x1000u) & ~0x1fffu;
  std::memcpy(&x, &b, sizeof b);
  return x;
}

TEST(BenchChecks, MatmulSamplesAreExactAndATf32ProductIsOutOfBound) {
  constexpr std::int64_t m = 256;
  for (bool half : {false, true}) {
    std::vector<float> a(m * m), b(m * m);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = bn::matmul_input(half, 0, i);
      b[i] = bn::matmul_input(half, 1, i);
    }
    const auto samples = bn::matmul_samples(a.data(), b.data(), m, half, bn::kMatmulSamples);
    ASSERT_EQ(samples.size(), static_cast<std::size_t>(bn::kMatmulSamples));
    EXPECT_EQ(samples[0].i, 0);
    EXPECT_EQ(samples[0].j, 0);
    EXPECT_EQ(samples[3].i, m - 1);
    EXPECT_EQ(samples[3].j, m - 1);
    std::size_t distinct_rows = 0;
    for (std::size_t s = 0; s < samples.size(); ++s) {
      const auto& e = samples[s];
      ASSERT_GE(e.i, 0);
      ASSERT_LT(e.i, m);
      ASSERT_GE(e.j, 0);
      ASSERT_LT(e.j, m);
      distinct_rows += s > 4 && e.i != samples[s - 1].i ? 1 : 0;
      double want = 0;
      for (std::int64_t l = 0; l < m; ++l) want += double(a[e.i * m + l]) * double(b[l * m + e.j]);
      EXPECT_EQ(e.ref, want);
      // Exact accumulation: the bound is the output's rounding alone.
      EXPECT_EQ(e.bound, std::ldexp(std::fabs(e.ref), half ? -11 : -24));
      // C computed in float32 (the compute type of every row) in k order is within bound.
      float c = 0;
      for (std::int64_t l = 0; l < m; ++l) c += a[e.i * m + l] * b[l * m + e.j];
      EXPECT_TRUE(bn::check_bound(c, e.ref, e.bound).ok) << e.i << "," << e.j;
    }
    EXPECT_GT(distinct_rows, 200u);
    if (half) continue;
    // The same in TF32: products of A rounded to 11 significant bits.
    std::size_t out = 0;
    for (const auto& e : samples) {
      double c = 0;
      for (std::int64_t l = 0; l < m; ++l) c += double(to_tf32(a[e.i * m + l])) * double(b[l * m + e.j]);
      out += bn::check_bound(c, e.ref, e.bound).ok ? 0 : 1;
    }
    EXPECT_GT(out, samples.size() * 3 / 4) << "a TF32 matmul would pass the float32 check";
  }
}

// A with its mantissa truncated to TF32's 10 bits (what tensor cores do with raw float32 bits).
float to_tf32_truncated(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  b &= ~0x1fffu;
  std::memcpy(&x, &b, sizeof b);
  return x;
}

// The TF32 rows' bound, on the float32 rows' inputs: TF32 products, rounded or truncated, and the
// exact float32 answer are within it; an entry off by more than inputs rounded to 11 significant
// bits can explain is not.
TEST(BenchChecks, TheTf32BoundHoldsRoundedAndTruncatedInputsAndCatchesALostBlock) {
  const double t = std::ldexp(1.0, -10), u = std::ldexp(1.0, -24);
  // Integer inputs, (1 + t)^2 sum |a b| within 2^24: inputs' rounding plus the output's.
  EXPECT_DOUBLE_EQ(bn::matmul_tf32_bound(1000, 5000, 8192, true), (2 * t + t * t) * 5000 * (1 + u) + 1000 * u);
  const double ku = 8192 * u, gamma = ku / (1 - ku);
  EXPECT_DOUBLE_EQ(bn::matmul_tf32_bound(1.5, 3, 8192, false),
                   (2 * t + t * t) * 3 + gamma * 3 * (1 + t) * (1 + t) + (1.5 + (2 * t + t * t) * 3) * u);
  constexpr std::int64_t m = 256;
  std::vector<float> a(m * m), b(m * m);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = bn::matmul_input(false, 0, i);
    b[i] = bn::matmul_input(false, 1, i);
  }
  const auto f32 = bn::matmul_samples(a.data(), b.data(), m, false, bn::kMatmulSamples);
  const auto tf32 = bn::matmul_samples(a.data(), b.data(), m, false, bn::kMatmulSamples, true);
  ASSERT_EQ(tf32.size(), f32.size());
  std::size_t moved = 0;
  for (std::size_t s = 0; s < tf32.size(); ++s) {
    const auto& e = tf32[s];
    EXPECT_EQ(e.i, f32[s].i);
    EXPECT_EQ(e.j, f32[s].j);
    EXPECT_EQ(e.ref, f32[s].ref);
    EXPECT_GT(e.bound, f32[s].bound);
    double rounded = 0, truncated = 0;
    for (std::int64_t l = 0; l < m; ++l) {
      rounded += double(to_tf32(a[e.i * m + l])) * double(to_tf32(b[l * m + e.j]));
      truncated += double(to_tf32_truncated(a[e.i * m + l])) * double(to_tf32_truncated(b[l * m + e.j]));
    }
    moved += rounded != e.ref ? 1 : 0;
    EXPECT_TRUE(bn::check_bound(e.ref, e.ref, e.bound).ok) << "float32 is permitted too";
    EXPECT_TRUE(bn::check_bound(rounded, e.ref, e.bound).ok) << e.i << "," << e.j;
    EXPECT_TRUE(bn::check_bound(truncated, e.ref, e.bound).ok) << e.i << "," << e.j;
    EXPECT_FALSE(bn::check_bound(e.ref + 2 * e.bound + 1, e.ref, e.bound).ok);
  }
  EXPECT_GT(moved, tf32.size() * 3 / 4) << "the inputs do not tell TF32 from float32";
  // A lost block of 16 products (a tile skipped) is out of bound at most entries; rounding to TF32
  // moves an entry by far less than its bound, so a lower precision can pass (the bound is a worst
  // case, as the float32 rows' bound for non-integer terms).
  std::size_t out = 0;
  for (const auto& e : tf32) {
    double c = 0;
    for (std::int64_t l = 16; l < m; ++l) c += double(to_tf32(a[e.i * m + l])) * double(b[l * m + e.j]);
    out += bn::check_bound(c, e.ref, e.bound).ok ? 0 : 1;
  }
  EXPECT_GT(out, tf32.size() / 2) << "a matmul that loses a block of k would pass the TF32 check";
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
  ASSERT_GT(read_file(md).size(), 100u) << "the --md file is missing or empty";
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

TEST(BenchCli, SumAndMatmulRowsOnTheCpuAreCheckedWithinTheirBounds) {
  XP_REQUIRE_PYTHON();
  TempFolder tmp;
  const fs::path j = tmp.path / "launch.json";
  const auto r = xp_test::run_process(
      {XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "20000", "--runs", "1", "--python", XP_TEST_PYTHON, "--only",
       "xp-sum,numpy-sum,xp-matmul-f32,numpy-matmul-f32,xp-matmul-f16", "--json", j.string()},
      {{"XP_NUM_THREADS", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Their own tables, no table of the elementwise rows.
  EXPECT_EQ(r.out.find("| bits |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sum(a) of n = 20000 float32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("matmul C = A @ B, 512 x 512 times 512 x 512"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| row | compute type | first ms | mean ms | TFLOP/s | host us/call (32x32) | check |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| xp sum(a) on the CPU | none |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| NumPy A @ B float32 [Python] | float32 (NumPy's BLAS sgemm) |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("within bound (1/1), worst error 0% of its bound, = xp at 256/256 |"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| xp sum speed / NumPy sum speed |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| xp matmul float32 speed / NumPy A @ B float32 speed |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not bit for bit"), std::string::npos) << r.out;
  const json doc = json::parse(read_file(j));
  std::vector<std::string> ids;
  for (const auto& row : doc["rows"]) {
    const std::string id = row["id"];
    ids.push_back(id);
    for (const char* which : {"first_process", "second_process"}) {
      ASSERT_EQ(row[which]["samples"].size(), 1u) << id;
      const auto& s = row[which]["samples"][0];
      EXPECT_TRUE(s["ok"].get<bool>()) << s.dump();
      EXPECT_TRUE(s["within_bound"].get<bool>()) << s.dump();
      EXPECT_GT(s["steady_ms"].get<double>(), 0) << id;
      EXPECT_GT(s["host_us"].get<double>(), 0) << id;
      EXPECT_NE(row[which]["check"].get<std::string>().find("within bound (1/1)"), std::string::npos) << id;
      if (row["op"] == "sum") {
        EXPECT_EQ(s["n"], 20000) << id;
        EXPECT_LE(s["rel_error"].get<double>(), 1e-6) << id;
        EXPECT_GT(s["gbps"].get<double>(), 0) << id;
      } else {
        EXPECT_EQ(s["n"], 512) << id;
        EXPECT_EQ(s["values"].size(), 256u) << id;
        EXPECT_EQ(s["error_of_bound"].get<double>(), 0) << id;  // exact: small integers
        EXPECT_GT(s["tflops"].get<double>(), 0) << id;
        EXPECT_FALSE(s["compute_type"].get<std::string>().empty()) << id;
      }
    }
  }
  EXPECT_EQ(ids,
            (std::vector<std::string>{"xp-sum", "xp-matmul-f32", "xp-matmul-f16", "numpy-sum", "numpy-matmul-f32"}));
}

TEST(BenchCli, ARowNamedInOnlyThatCannotRunHereIsListedWithTheReason) {
  XP_REQUIRE_PYTHON();
  auto run = [](const std::string& python) {
    return xp_test::run_process({XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "2048", "--runs", "1", "--python",
                                 python, "--only",
                                 "xp-add,cupy-matmul-f16,torch-sum,xp,xp-matmul-tf32,torch-matmul-tf32"});
  };
  const auto r = run(XP_TEST_PYTHON);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("| xp c = a + b (arrays) on the CPU |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| xp | | | | | | | skipped: a GPU row: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| torch-sum | | | | | | | skipped: a GPU row: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| cupy-matmul-f16 | | | | | | skipped: a GPU row: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| xp-matmul-tf32 | | | | | | skipped: a GPU row: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| torch-matmul-tf32 | | | | | | skipped: a GPU row: "), std::string::npos) << r.out;
  const auto none = run("none");
  ASSERT_EQ(none.exit_code, 0) << none.out << none.err;
  EXPECT_NE(none.out.find("| torch-sum | | | | | | | skipped: not a C++ row, and the Python rows are skipped: "
                          "--python none |"),
            std::string::npos)
      << none.out;
}

// A mistyped row id (one neither C++ nor Python rows have) is a command-line error before anything
// runs (exit 2), and nothing is written. With --python none a Python id cannot be told from a typo:
// it is listed as skipped, as above.
TEST(BenchCli, AnUnknownRowStopsTheRunBeforeItStarts) {
  XP_REQUIRE_PYTHON();
  TempFolder tmp;
  const fs::path j = tmp.path / "r.json";
  const auto unknown =
      xp_test::run_process({XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "2048", "--runs", "1", "--python",
                            XP_TEST_PYTHON, "--only", "xp-add,no-such-row", "--json", j.string()});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out << unknown.err;
  EXPECT_NE(unknown.err.find("--only no-such-row: no such row"), std::string::npos) << unknown.err;
  EXPECT_EQ(unknown.out.find("xp c = a + b"), std::string::npos) << "no row ran:\n" << unknown.out;
  EXPECT_FALSE(fs::exists(j));
}

// An output file that cannot be written stops the run before it starts (exit 2); a good one is
// written whole, through a temporary file beside it.
TEST(BenchCli, AnUnwritableOutputStopsTheRunBeforeItStarts) {
  TempFolder tmp;
  const fs::path j = tmp.path / "r.json";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--json", (tmp.path / "no-folder" / "r.json").string()},
      {"--md", tmp.path.string()},
      {"--csv", (tmp.path / "no-folder" / "r.csv").string()},
  };
  for (const auto& [option, file] : bad) {
    std::vector<std::string> argv = {
        XP_CLI_PATH, "bench", option == "--csv" ? "sweep" : "launch", "--cpu", "--python", "none", "--only", "xp-add",
        option,      file};
    if (option != "--csv") argv.insert(argv.end(), {"--n", "2048", "--runs", "1"});
    const auto r = xp_test::run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << option << " " << file << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(option + " " + file), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("xp c = a + b"), std::string::npos) << "no row ran:\n" << r.out;
  }
  // A good path is written whole, with no temporary left beside it.
  const auto ok = xp_test::run_process({XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "2048", "--runs", "1",
                                        "--python", "none", "--only", "xp-add", "--json", j.string()});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_TRUE(fs::exists(j));
  EXPECT_FALSE(fs::exists(j.string() + ".part"));
  std::ifstream written(j);
  const nlohmann::json doc = nlohmann::json::parse(written, nullptr, false);
  EXPECT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc.value("schema", ""), "xp.bench.launch/3");
}

TEST(BenchCli, SweepLeavesOutTheSumAndMatmulRows) {
  TempFolder tmp;
  const fs::path j = tmp.path / "s.json";
  const auto r =
      xp_test::run_process({XP_CLI_PATH, "bench", "sweep", "--cpu", "--min-log2", "10", "--max-log2", "10", "--python",
                            "none", "--only", "xp-add-out,xp-sum,xp-matmul-f32", "--json", j.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json doc = json::parse(read_file(j));
  ASSERT_EQ(doc["rows"].size(), 3u) << doc.dump();
  EXPECT_EQ(doc["rows"][0]["id"], "xp-add-out");
  EXPECT_TRUE(doc["rows"][0]["sample"]["ok"].get<bool>());
  for (int i : {1, 2}) {
    EXPECT_NE(doc["rows"][i]["skipped"].get<std::string>().find("not in the sweep"), std::string::npos)
        << doc["rows"][i].dump();
  }
}

TEST(BenchCli, TheXpSumAndMatmulChildrenCheckTheirResults) {
  for (const char* label : {"xp-matmul-f32", "xp-matmul-f16", "xp-matmul-tf32"}) {
    const auto r = xp_test::run_process(
        {XP_CLI_PATH, "bench", "launch", "--row", "array-child", "--label", label, "--on", "cpu", "--n", "96"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const json s = json::parse(r.out);
    EXPECT_TRUE(s["within_bound"].get<bool>()) << s.dump();
    EXPECT_EQ(s["values"].size(), 256u);
    EXPECT_EQ(s["host_n"], 32);
    EXPECT_TRUE(s["mismatch"].is_null()) << s.dump();
  }
  const auto sum = xp_test::run_process(
      {XP_CLI_PATH, "bench", "launch", "--row", "array-child", "--label", "xp-sum", "--on", "cpu", "--n", "100000"});
  ASSERT_EQ(sum.exit_code, 0) << sum.out << sum.err;
  const json s = json::parse(sum.out);
  EXPECT_TRUE(s["within_bound"].get<bool>()) << s.dump();
  EXPECT_LE(std::fabs(s["result"].get<double>() - s["reference"].get<double>()), s["bound"].get<double>());
  EXPECT_EQ(s["bound_rel"], 1e-6);
  // One size only; a label it does not know is named with those it does.
  const auto sized = xp_test::run_process({XP_CLI_PATH, "bench", "launch", "--row", "array-child", "--label", "xp-sum",
                                           "--on", "cpu", "--n", "100", "--sizes", "10,20"});
  EXPECT_EQ(sized.exit_code, 1);
  EXPECT_NE(json::parse(sized.out)["error"].get<std::string>().find("one size"), std::string::npos) << sized.out;
  const auto bad = xp_test::run_process(
      {XP_CLI_PATH, "bench", "launch", "--row", "array-child", "--label", "xp-prod", "--on", "cpu", "--n", "100"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("xp-matmul-f16"), std::string::npos) << bad.out << bad.err;
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

// The bare driver's first c = a + b (the baseline of xp's first-call figure): a GPU row, never in
// the sweep; its child names what it lacks and prints a failed sample rather than a half one.
TEST(BenchCli, TheRawFirstRowIsAGpuRowAndItsChildSaysWhatItLacks) {
  const auto r = xp_test::run_process({XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "2048", "--runs", "1",
                                       "--python", "none", "--only", "xp-add,raw-first"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("| raw-first | | | | | | | skipped: a GPU row: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| xp c = a + b (arrays) on the CPU |"), std::string::npos) << r.out;
  const auto sweep = xp_test::run_process({XP_CLI_PATH, "bench", "sweep", "--cpu", "--min-log2", "10", "--max-log2",
                                           "10", "--python", "none", "--only", "raw-first"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  EXPECT_NE(sweep.out.find("raw-first"), std::string::npos) << sweep.out;

  TempFolder tmp;
  const std::string dir = (tmp.path / "raw").string();
  auto child = [&](std::vector<std::string> extra) {
    std::vector<std::string> cmd{XP_CLI_PATH, "bench", "launch", "--row", "raw-first-child", "--n", "100"};
    cmd.insert(cmd.end(), extra.begin(), extra.end());
    const auto c = xp_test::run_process(cmd);
    EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
    const json s = json::parse(c.out);
    EXPECT_EQ(s["row"], "raw-first");
    EXPECT_FALSE(s["ok"].get<bool>());
    EXPECT_TRUE(s["first_ms"].is_null()) << s.dump();
    return s["error"].get<std::string>();
  };
  EXPECT_NE(child({}).find("needs --cubin-dir"), std::string::npos);
  EXPECT_NE(child({"--cubin-dir", dir, "--sizes", "10,20"}).find("one size, not a sweep"), std::string::npos);
  const std::string no_driver = child({"--cubin-dir", dir, "--driver", (tmp.path / "no-libcuda.so").string()});
  EXPECT_NE(no_driver.find("dlopen"), std::string::npos) << no_driver;
  EXPECT_FALSE(fs::exists(dir)) << "nothing is written before the driver is found";
}

TEST(BenchCli, MissingPythonIsSaidAndTheCppRowsStillRun) {
  const auto r = xp_test::run_process({XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "2048", "--runs", "1",
                                       "--python", "/nonexistent/python3", "--only", "xp-add"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Python rows skipped: '/nonexistent/python3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| xp c = a + b (arrays) on the CPU |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OK (1/1)"), std::string::npos) << r.out;
}

// Starts argv with stdout and stderr in files; returns its pid.
pid_t spawn_to_files(std::vector<std::string> argv, const fs::path& out, const fs::path& err) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn failed");
  return pid;
}

// Waits up to a minute for `text` to appear in the file.
bool wait_for_text(const fs::path& file, const std::string& text) {
  for (int i = 0; i < 1200; ++i) {
    if (read_file(file).find(text) != std::string::npos) return true;
    usleep(50000);
  }
  return false;
}

// SIGTERM (as `timeout` sends it) or SIGINT in the middle of the runs: the runs stop, the report
// and its files cover what finished, the sample of the child in flight is dropped, and the exit
// status says which signal (128 + it).
TEST(BenchCli, ASignalEndsTheRunsAndTheReportCoversWhatFinished) {
  for (const int sig : {SIGTERM, SIGINT}) {
    TempFolder tmp;
    const fs::path out = tmp.path / "out.txt", err = tmp.path / "err.txt", j = tmp.path / "launch.json",
                   md = tmp.path / "launch.md";
    const pid_t pid =
        spawn_to_files({XP_CLI_PATH, "bench", "launch", "--cpu", "--n", "2048", "--runs", "1000", "--python", "none",
                        "--only", "xp-add,xp-fma", "--json", j.string(), "--md", md.string()},
                       out, err);
    const bool started = wait_for_text(err, "run 3/1000:");  // two runs complete
    kill(pid, sig);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(started) << read_file(err);
    ASSERT_TRUE(WIFEXITED(status)) << "the bench died of the signal instead of reporting";
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << read_file(err);
    const std::string name = sig == SIGTERM ? "SIGTERM" : "SIGINT";
    const std::string text = read_file(out);
    EXPECT_NE(text.find("INTERRUPTED by " + name + " during run "), std::string::npos) << text;
    EXPECT_NE(text.find("### Second process of each row"), std::string::npos) << text;
    EXPECT_NE(text.find("of the runs that finished ("), std::string::npos) << text;
    EXPECT_NE(read_file(err).find("xp bench launch: interrupted by " + name), std::string::npos) << read_file(err);
    ASSERT_GT(read_file(md).size(), 100u) << "the --md file is missing or empty";
    EXPECT_EQ(read_file(md), text.substr(0, read_file(md).size()));
    const json doc = json::parse(read_file(j));
    ASSERT_TRUE(doc.contains("interrupted")) << doc.dump();
    EXPECT_EQ(doc["interrupted"]["signal"], name);
    const int done = doc["interrupted"]["runs_completed"].get<int>();
    EXPECT_GE(done, 2);
    EXPECT_LT(done, 1000);
    EXPECT_EQ(doc["interrupted"]["during_run"].get<int>(), done + 1);
    ASSERT_EQ(doc["rows"].size(), 2u);
    for (const auto& row : doc["rows"])
      for (const char* which : {"first_process", "second_process"}) {
        const auto& samples = row[which]["samples"];
        EXPECT_GE(samples.size(), static_cast<std::size_t>(done)) << row["id"] << which;
        EXPECT_LE(samples.size(), static_cast<std::size_t>(done) + 1) << row["id"] << which;
        for (const auto& s : samples) EXPECT_TRUE(s["ok"].get<bool>()) << s.dump();  // none from a stopped child
      }
  }
}

// The same for the sweep: the rows that finished are reported, the one in flight and those after
// it are listed as skipped with the reason.
TEST(BenchCli, ASignalEndsTheSweepAndTheReportCoversTheRowsThatFinished) {
  TempFolder tmp;
  const fs::path out = tmp.path / "out.txt", err = tmp.path / "err.txt", j = tmp.path / "sweep.json";
  const pid_t pid = spawn_to_files({XP_CLI_PATH, "bench", "sweep", "--cpu", "--min-log2", "10", "--max-log2", "24",
                                    "--python", "none", "--json", j.string()},
                                   out, err);
  const bool started = wait_for_text(out, "sizes: 2^10");
  usleep(300000);  // into the first row
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(started) << read_file(out) << read_file(err);
  ASSERT_TRUE(WIFEXITED(status)) << "the sweep died of the signal instead of reporting";
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << read_file(err);
  EXPECT_NE(read_file(out).find("INTERRUPTED by SIGTERM"), std::string::npos) << read_file(out);
  const json doc = json::parse(read_file(j));
  EXPECT_EQ(doc["interrupted"]["signal"], "SIGTERM");
  ASSERT_EQ(doc["rows"].size(), 3u) << doc.dump();  // xp-add, xp-add-out, xp-fma
  bool stopped_one = false;
  for (const auto& row : doc["rows"]) {
    const std::string skipped = row["skipped"].is_string() ? row["skipped"].get<std::string>() : "";
    if (skipped.empty()) {
      ASSERT_TRUE(row.contains("sample")) << row.dump();
      EXPECT_TRUE(row["sample"]["ok"].get<bool>()) << row.dump();
      EXPECT_FALSE(stopped_one) << "a row ran after the signal: " << row.dump();
    } else {
      EXPECT_TRUE(skipped == "interrupted while it ran" || skipped == "not run: interrupted before it") << skipped;
      EXPECT_FALSE(row.contains("sample")) << row.dump();
      stopped_one = true;
    }
  }
  EXPECT_TRUE(stopped_one) << doc.dump();
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

TEST_F(PythonRows, TheListHasTheSumAndMatmulRows) {
  const auto r =
      xp_test::run_process({XP_TEST_PYTHON, std::string(XP_SOURCE_DIR) + "/bench/python/launch_rows.py", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json l = json::parse(r.out);
  std::map<std::string, std::pair<std::string, std::string>> rows;  // id -> device, op
  for (const auto& row : l["rows"]) rows[row["id"]] = {row["device"], row["op"]};
  const std::map<std::string, std::pair<std::string, std::string>> want = {
      {"cupy-sum", {"gpu", "sum"}},
      {"torch-sum", {"gpu", "sum"}},
      {"cupy-matmul-f32", {"gpu", "matmul-f32"}},
      {"torch-matmul-f32", {"gpu", "matmul-f32"}},
      {"cupy-matmul-f16", {"gpu", "matmul-f16"}},
      {"torch-matmul-f16", {"gpu", "matmul-f16"}},
      {"cupy-matmul-tf32", {"gpu", "matmul-tf32"}},
      {"torch-matmul-tf32", {"gpu", "matmul-tf32"}},
      {"numpy-sum", {"cpu", "sum"}},
      {"numpy-matmul-f32", {"cpu", "matmul-f32"}}};
  for (const auto& [id, device_op] : want) {
    ASSERT_EQ(rows.count(id), 1u) << id << " missing: " << r.out;
    EXPECT_EQ(rows[id], device_op) << id;
  }
  for (const auto& row : l["rows"]) {
    if (row["op"] == "sum") {
      EXPECT_EQ(row["bytes_per_element"], 4);
    }
  }
}

TEST_F(PythonRows, CheckWithinGivesTheVerdictAndTheFirstEntryOutOfBound) {
  // (ok, first index out of bound, worst error / bound) on hand-made values.
  const std::string code =
      "import sys, json; sys.path.insert(0, sys.argv[1]); import launch_rows as L\n"
      "cases = [([1.0, 2.0], [1.0, 2.5], [0.0, 0.5]),\n"
      "         ([1.0, 2.0], [1.0, 2.5], [0.0, 0.4]),\n"
      "         ([1.5, 2.0], [1.0, 2.0], [0.0, 1.0]),\n"
      "         ([float('nan')], [0.0], [1e30]),\n"
      "         ([float('inf')], [0.0], [1e30]),\n"
      "         ([1.0], [1.0, 2.0], [1.0, 1.0])]\n"
      "print(json.dumps([[ok, k, min(w, 1e300)] for ok, k, w in (L.check_within(*c) for c in cases)]))\n";
  const auto r = xp_test::run_process({XP_TEST_PYTHON, "-c", code, std::string(XP_SOURCE_DIR) + "/bench/python"});
  if (r.err.find("No module named 'numpy'") != std::string::npos)
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", "NumPy is missing in " XP_TEST_PYTHON);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json v = json::parse(r.out);
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0], json::parse("[true, null, 1.0]"));
  EXPECT_EQ(v[1][0], false);
  EXPECT_EQ(v[1][1], 1);
  EXPECT_DOUBLE_EQ(v[1][2].get<double>(), 1.25);
  EXPECT_EQ(v[2][0], false);  // an error where the bound is 0
  EXPECT_EQ(v[2][1], 0);
  EXPECT_EQ(v[2][2], 1e300);  // infinitely many bounds
  EXPECT_EQ(v[3][0], false);  // NaN
  EXPECT_EQ(v[4][0], false);  // infinity
  EXPECT_EQ(v[5][0], false);  // a result of the wrong size
}

TEST_F(PythonRows, SumAndMatmulRowsAreWithinBoundOrSayWhichEntryIsNot) {
  TempFolder tmp;
  // sum.f32 / sum.json and matmul-f32_{a,b}.f32 / matmul-f32.json as the parent writes them, the
  // references computed here; `bad` moves the sum's and one sampled entry's reference by 1.
  const std::string code =
      "import numpy as np, sys, os, json\n"
      "d = sys.argv[1]; bad = int(sys.argv[2]); r = np.random.default_rng(11)\n"
      "a = (1 + r.integers(0, 1 << 23, 5000) / 2.0**23).astype(np.float32); a.tofile(os.path.join(d, 'sum.f32'))\n"
      "s = float(a.astype(np.float64).sum())\n"
      "json.dump({'n': 5000, 'sum': s + bad, 'abs_sum': s, 'bound': 1e-6 * s, 'bound_rel': 1e-6},\n"
      "          open(os.path.join(d, 'sum.json'), 'w'))\n"
      "A = r.integers(-4095, 4096, (64, 64)).astype(np.float32); B = r.integers(-1, 2, (64, 64)).astype(np.float32)\n"
      "A.tofile(os.path.join(d, 'matmul-f32_a.f32')); B.tofile(os.path.join(d, 'matmul-f32_b.f32'))\n"
      "C = A.astype(np.float64) @ B\n"
      "smp = [[i, j, float(C[i, j]) + (bad if k == 7 else 0), 2.0**-24 * abs(C[i, j])]\n"
      "       for k, (i, j) in enumerate(zip(range(0, 64, 2), range(63, 0, -2)))]\n"
      "json.dump({'m': 64, 'dtype': 'float32', 'samples': smp}, open(os.path.join(d, 'matmul-f32.json'), 'w'))\n";
  const fs::path script = tmp.path / "make.py";
  write_file(script, code);
  for (int bad : {0, 1}) {
    const auto w = xp_test::run_process({XP_TEST_PYTHON, script.string(), tmp.path.string(), std::to_string(bad)});
    if (w.err.find("No module named 'numpy'") != std::string::npos)
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", "NumPy is missing in " XP_TEST_PYTHON);
    ASSERT_EQ(w.exit_code, 0) << w.err;
    for (const auto& [row, n] :
         std::vector<std::pair<std::string, std::string>>{{"numpy-sum", "5000"}, {"numpy-matmul-f32", "64"}}) {
      const auto r =
          xp_test::run_process({XP_TEST_PYTHON, std::string(XP_SOURCE_DIR) + "/bench/python/launch_rows.py", "run",
                                "--row", row, "--data", tmp.path.string(), "--n", n, "--host-launches", "10"});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
      const json s = json::parse(r.out);
      EXPECT_TRUE(s["ok"].get<bool>()) << r.out;
      EXPECT_EQ(s["within_bound"].get<bool>(), bad == 0) << row << ": " << r.out;
      EXPECT_TRUE(s["bits_ok"].is_null()) << r.out;  // not a bit-for-bit row
      if (bad == 0) {
        EXPECT_TRUE(s["mismatch"].is_null()) << r.out;
      } else if (row == "numpy-sum") {
        EXPECT_NE(s["mismatch"].get<std::string>().find("after the first call, the sum is "), std::string::npos)
            << r.out;
      } else {
        EXPECT_NE(s["mismatch"].get<std::string>().find("after the first call, C[14][49] is "), std::string::npos)
            << r.out;
        EXPECT_EQ(s["values"].size(), 32u);
      }
    }
  }
  // The size must be the one the references were written for.
  const auto r = xp_test::run_process({XP_TEST_PYTHON, std::string(XP_SOURCE_DIR) + "/bench/python/launch_rows.py",
                                       "run", "--row", "numpy-matmul-f32", "--data", tmp.path.string(), "--n", "32"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(json::parse(r.out)["error"].get<std::string>().find("not 32 x 32"), std::string::npos) << r.out;
}

TEST_F(PythonRows, AMatmulRowWhoseModuleDoesNotImportIsASkip) {
  TempFolder tmp;
  write_file(tmp.path / "cupy.py", "raise ImportError('planted: this cupy is broken')\n");
  for (const char* row : {"cupy-matmul-f16", "cupy-matmul-tf32"}) {
    const auto r = xp_test::run_process({XP_TEST_PYTHON, std::string(XP_SOURCE_DIR) + "/bench/python/launch_rows.py",
                                         "run", "--row", row, "--data", tmp.path.string(), "--n", "64"},
                                        {{"PYTHONPATH", tmp.path.string()}});
    EXPECT_EQ(r.exit_code, 1) << row;
    const json s = json::parse(r.out);
    EXPECT_NE(s["skipped"].get<std::string>().find("cupy does not import: ImportError: planted"), std::string::npos)
        << r.out;
  }
}

// The TF32 rows read the float32 rows' inputs (written once) and their own references and bounds.
TEST_F(PythonRows, TheTf32RowsReadTheFloat32InputsAndTheirOwnBounds) {
  TempFolder tmp;
  const std::string code =
      "import numpy as np, sys, os, json\n"
      "d = sys.argv[1]; sys.path.insert(0, sys.argv[2]); import launch_rows as L\n"
      "A = np.arange(64 * 64, dtype=np.float32).reshape(64, 64); B = np.ones((64, 64), np.float32)\n"
      "A.tofile(os.path.join(d, 'matmul-f32_a.f32')); B.tofile(os.path.join(d, 'matmul-f32_b.f32'))\n"
      "json.dump({'m': 64, 'dtype': 'float32', 'samples': [[1, 2, 3.0, 0.5], [4, 5, 6.0, 0.25]]},\n"
      "          open(os.path.join(d, 'matmul-tf32.json'), 'w'))\n"
      "x = L.load_checked(np, d, 64, 'matmul-tf32', 1024)\n"
      "print(json.dumps([float(x['A'][1, 2]), float(x['B'].sum()), list(map(float, x['ref'])),\n"
      "                  list(map(float, x['bound'])), L.is_matmul('matmul-tf32'), 'matmul-tf32' in L.CHECKED]))\n";
  const fs::path script = tmp.path / "read.py";
  write_file(script, code);
  const auto r = xp_test::run_process(
      {XP_TEST_PYTHON, script.string(), tmp.path.string(), std::string(XP_SOURCE_DIR) + "/bench/python"});
  if (r.err.find("No module named 'numpy'") != std::string::npos)
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", "NumPy is missing in " XP_TEST_PYTHON);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), json::parse("[66.0, 4096.0, [3.0, 6.0], [0.5, 0.25], true, true]")) << r.out;
}

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
