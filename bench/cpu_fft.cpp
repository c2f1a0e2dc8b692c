// xp's CPU FFT against numpy.fft (NumPy 2's pocketfft) in the same run: for each case, a Python
// child process times numpy.fft on its own arrays (medians of 5 after a warm-up, its plan cache warm),
// then this process times xp::fft on arrays of the same shape and dtype (medians of 5 after a
// warm-up: the plan is cached), with xp's threads (XP_NUM_THREADS, default every core) and with one
// thread (NumPy's pocketfft uses one). Prints the times and the ratio numpy / xp (above 1: xp faster).
// White-box: links xp's objects (for the thread count and the kernels' instruction set).
//
//   xp_bench_cpu_fft [--python PATH] [--quick]
//     --python: the interpreter with NumPy 2 (default: the source tree's .venv/bin/python)
//     --quick: the 2^20 cases only
//   (irfft: the input is rfft of a real signal of that dtype and length n)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend/cpu/fft.hpp"
#include "runtime/parallel.hpp"
#include "xp/xp.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using i64 = std::int64_t;

double median_ms(const std::function<void()>& fn, int reps) {
  fn();  // warm-up: the plan, the buffers
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Case {
  const char* name;  // fft, rfft, ifft, irfft
  const char* dtype;
  i64 n;
};

// numpy.fft's median time (ms) of `c`, from a child process; negative when it could not run.
double numpy_ms(const std::string& python, const Case& c, int reps) {
  const std::string input = std::string(c.name) == "irfft" ? "np.fft.rfft(x)" : "x";
  const std::string script =
      "import numpy as np, time\n"
      "rng = np.random.default_rng(0)\n"
      "n = " +
      std::to_string(c.n) + "\nx = rng.standard_normal(n)\n" +
      (std::string(c.dtype).rfind("complex", 0) == 0 ? "x = x + 1j * rng.standard_normal(n)\n" : "") +
      "x = x.astype('" + c.dtype + "')\ny = " + input + "\nf = np.fft." + c.name +
      "\nf(y)\nts = []\n"
      "for _ in range(" +
      std::to_string(reps) +
      "):\n    t = time.perf_counter(); f(y); ts.append(time.perf_counter() - t)\n"
      "ts.sort(); print(ts[len(ts) // 2] * 1e3)\n";
  const std::string cmd = "'" + python + "' -c \"" + script + "\"";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[256] = {};
  const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
  const int rc = pclose(p);
  return got && rc == 0 ? std::atof(buf) : -1;
}

double xp_ms(const Case& c, int reps) {
  xp::random::Generator g(1);
  const bool complex_in = std::string(c.dtype).rfind("complex", 0) == 0;
  const xp::DType real = std::string(c.dtype) == "float32" || std::string(c.dtype) == "complex64" ? xp::DType::float32
                                                                                                  : xp::DType::float64;
  xp::Array x = g.normal({c.n}, real);
  if (complex_in)
    x = (x + g.normal({c.n}, real) * std::complex<double>(0, 1))
            .astype(x.dtype() == xp::DType::float32 ? xp::DType::complex64 : xp::DType::complex128);
  x.eval();
  const std::string f = c.name;
  if (f == "irfft") {
    xp::Array y = xp::fft::rfft(x);
    return median_ms([&] { (void)xp::fft::irfft(y, c.n).eval(); }, reps);
  }
  if (f == "rfft") return median_ms([&] { (void)xp::fft::rfft(x).eval(); }, reps);
  if (f == "ifft") return median_ms([&] { (void)xp::fft::ifft(x).eval(); }, reps);
  return median_ms([&] { (void)xp::fft::fft(x).eval(); }, reps);
}

}  // namespace

int main(int argc, char** argv) {
  std::string python = std::string(XP_BENCH_SOURCE_DIR) + "/.venv/bin/python";
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--python") == 0 && i + 1 < argc) {
      python = argv[++i];
    } else if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--python PATH] [--quick]\n", argv[0]);
      return 2;
    }
  }
  std::vector<Case> cases = {{"fft", "complex128", i64{1} << 20}, {"rfft", "float64", i64{1} << 20}};
  if (!quick) {
    cases.insert(cases.end(), {{"ifft", "complex128", i64{1} << 20},
                               {"irfft", "float64", i64{1} << 20},
                               {"fft", "complex64", i64{1} << 20},
                               {"rfft", "float32", i64{1} << 20},
                               {"fft", "complex128", 1000003},
                               {"rfft", "float64", 1000003},
                               {"fft", "complex128", (i64{1} << 20) + 7},
                               {"fft", "complex128", 1000},
                               {"fft", "complex128", 4096},
                               {"fft", "complex128", 2 * 10007}});
  }
  const int reps = 5, threads = xp::detail::num_threads();
  std::printf("xp CPU FFT (kernels: %s) against numpy.fft, medians of %d (ms); xp with %d thread(s) and 1\n",
              xp::detail::cpu::fft_isa(), reps, threads);
  std::printf("%-6s %-10s %9s | %9s %9s %9s | %7s %7s\n", "func", "dtype", "n", "numpy", "xp", "xp 1thr", "ratio",
              "ratio1");
  for (const Case& c : cases) {
    const double np_ms = numpy_ms(python, c, reps);
    xp::detail::set_num_threads(threads);
    const double xp_all = xp_ms(c, reps);
    xp::detail::set_num_threads(1);
    const double xp_one = xp_ms(c, reps);
    xp::detail::set_num_threads(threads);
    if (np_ms < 0) {
      std::printf("%-6s %-10s %9lld | %9s %9.3f %9.3f |  (numpy did not run: %s)\n", c.name, c.dtype,
                  static_cast<long long>(c.n), "-", xp_all, xp_one, python.c_str());
      continue;
    }
    std::printf("%-6s %-10s %9lld | %9.3f %9.3f %9.3f | %6.2fx %6.2fx\n", c.name, c.dtype, static_cast<long long>(c.n),
                np_ms, xp_all, xp_one, np_ms / xp_all, np_ms / xp_one);
    std::fflush(stdout);
  }
  return 0;
}
