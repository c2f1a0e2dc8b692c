// xp::linalg::solve and xp::matmul on the CPU against NumPy 2 in the same run: a 1024x1024 float64
// system with one right-hand side (LAPACK's dgesv through xp, against numpy.linalg.solve), and
// float32 matmul of 512^3 and 2048^3. Medians of 5 timed calls (min..max) after a warm-up on each
// side; ratio = xp / NumPy (below 1: xp is faster). The NumPy side runs in a subprocess
// (bench/python/linalg_cpu.py, with the .venv's Python by default); NumPy brings its own OpenBLAS,
// xp opens the system's libopenblas.so.0, so the two sides need not run the same kernels: the
// header prints both. xp's solve result is checked by its residual ||A x - b|| / (||A|| ||x||).
//
//   xp_bench_linalg_cpu [--python PATH] [--threads N]
//     --python: the Python with NumPy 2 (default: <source>/.venv/bin/python)
//     --threads: xp's thread count (and so OpenBLAS's) and NumPy's BLAS threads
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xp/linalg.hpp"
#include "xp/runtime.hpp"
#include "xp/version.hpp"
#include "xp/xp.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median, min, max;  // milliseconds
};

Stats stats(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

std::vector<double> time_runs(const std::function<void()>& fn, int reps) {
  fn();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return t;
}

std::string run_numpy(const std::string& python, int threads) {
  std::string cmd = "'" + python + "' '" XP_BENCH_SOURCE_DIR "/bench/python/linalg_cpu.py'";
  if (threads > 0) cmd += " --threads " + std::to_string(threads);
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (::pclose(p) != 0) out.clear();
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string python = XP_BENCH_SOURCE_DIR "/.venv/bin/python";
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--python") == 0 && i + 1 < argc) {
      python = argv[++i];
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
      xp::set_num_threads(threads);
    } else {
      std::fprintf(stderr, "usage: %s [--python PATH] [--threads N]\n", argv[0]);
      return 2;
    }
  }
  const xp::Device cpu = xp::Device::cpu();
  const xp::CpuReport report = xp::cpu_report();
  std::printf("xp %s, source %s\n", std::string(xp::version()).c_str(), std::string(xp::source_hash()).c_str());
  std::printf("CPU: %s, %d logical CPUs, xp threads %d\n", report.model.c_str(), report.logical_cpus,
              xp::num_threads());
  if (!report.lapack_loaded) {
    std::printf("skipped: no LAPACK (%s)\n", report.lapack_error.c_str());
    return 0;
  }
  std::printf("xp's OpenBLAS: %s (%s; kernels %s, %d threads)\n", report.blas_path.c_str(), report.blas_config.c_str(),
              report.blas_core.c_str(), report.blas_threads);

  const int reps = 5;
  auto g = xp::random::Generator(1);
  const std::int64_t n = 1024;
  const xp::Array a = (g.uniform({n, n}, xp::DType::float64, 0, 1, cpu) +
                       xp::eye(n, std::nullopt, 0, xp::DType::float64, cpu) * static_cast<double>(n))
                          .eval();
  const xp::Array b = g.uniform({n}, xp::DType::float64, 0, 1, cpu).eval();
  const xp::Array m512a = g.uniform({512, 512}, xp::DType::float32, 0, 1, cpu).eval();
  const xp::Array m512b = g.uniform({512, 512}, xp::DType::float32, 0, 1, cpu).eval();
  const xp::Array m2048a = g.uniform({2048, 2048}, xp::DType::float32, 0, 1, cpu).eval();
  const xp::Array m2048b = g.uniform({2048, 2048}, xp::DType::float32, 0, 1, cpu).eval();

  struct Row {
    const char* id;
    const char* what;
    std::function<void()> fn;
  };
  const std::vector<Row> rows = {
      {"solve_f64_1024", "solve 1024x1024 float64, b (1024,)", [&] { xp::linalg::solve(a, b).eval(); }},
      {"matmul_f32_512", "matmul 512^3 float32", [&] { xp::matmul(m512a, m512b).eval(); }},
      {"matmul_f32_2048", "matmul 2048^3 float32", [&] { xp::matmul(m2048a, m2048b).eval(); }},
  };
  std::vector<std::vector<double>> xp_times;
  for (const Row& r : rows) xp_times.push_back(time_runs(r.fn, reps));

  // xp's answer, checked.
  const xp::Array x = xp::linalg::solve(a, b);
  const double residual = xp::linalg::vector_norm(xp::matmul(a, x) - b).item<double>() /
                          (xp::linalg::matrix_norm(a).item<double>() * xp::linalg::vector_norm(x).item<double>());
  std::printf("xp solve residual ||Ax - b|| / (||A|| ||x||) = %.3g\n", residual);

  const std::string out = run_numpy(python, threads);
  const nlohmann::json np = nlohmann::json::parse(out, nullptr, false);
  if (np.is_discarded()) {
    std::printf("NumPy side failed to run (%s): xp's times only\n", python.c_str());
  } else {
    std::printf("NumPy %s (%s), solve residual %.3g\n", np["numpy"].get<std::string>().c_str(),
                np["blas"].get<std::string>().c_str(), np["solve_residual"].get<double>());
  }
  std::printf("\ntimes in ms: median [min..max] of %d runs; ratio = xp / NumPy\n", reps);
  std::printf("%-36s %30s %30s %7s\n", "row", "NumPy", "xp", "ratio");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Stats sx = stats(xp_times[i]);
    if (np.is_discarded()) {
      std::printf("%-36s %30s %9.3f [%8.3f..%8.3f]\n", rows[i].what, "-", sx.median, sx.min, sx.max);
      continue;
    }
    const Stats sn = stats(np["rows"][rows[i].id].get<std::vector<double>>());
    std::printf("%-36s %9.3f [%8.3f..%8.3f] %9.3f [%8.3f..%8.3f] %7.2f\n", rows[i].what, sn.median, sn.min, sn.max,
                sx.median, sx.min, sx.max, sx.median / sn.median);
  }
  return residual < 1e-12 ? 0 : 1;
}
