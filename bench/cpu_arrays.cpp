// xp's CPU arrays, the xp side of the comparison with NumPy and numexpr (bench/python/cpu_arrays.py;
// bench/run_cpu_arrays.sh runs both and merges them). Public API only.
//
// Rows, on float32 unless noted (n = 2^24 elements; inputs drawn once from a fixed seed):
//   add_out         xp::add(a, b, out)                      (NumPy: np.add(a, b, out=o))
//   fma_new         (a * b + c).eval(), a new array         (NumPy: a * b + c, with a temporary)
//   fma_out         xp::add(a * b, c, out), fused           (NumPy: multiply then add into o)
//   sum             xp::sum(a)
//   exp, log, sin   xp::exp(x, out) ... (log on positive inputs)
//   matmul_*        xp::matmul(A, B), a new array; 1024^2 and 2048^2 float32, 2048^2 float64;
//                   baseline in this process: cblas_sgemm / cblas_dgemm of the OpenBLAS xp loads
//   small_add       (s + t).eval() on 1,024 elements: the host cost of one evaluated call
// Each row: a warm-up that also sizes a batch of calls to last >= --min-ms (50 ms), then 5 timed
// batches; the per-call time of each batch; median and min..max.
//
// With --data DIR it writes the inputs (in_*.npy) before timing and each row's result (out_*.npy)
// after it, so that the Python side computes on the same data and compares with NumPy.
//
//   xp_bench_cpu_arrays [--threads N] [--data DIR] [--json FILE] [--min-ms MS] [--only ID,...] [--quick]
//     --threads: xp's thread count (and so OpenBLAS's); default XP_NUM_THREADS or the cores
//     --only: these rows only (the inputs are all drawn and written still)
//     --quick: n = 2^20 and matmul 1024^2 only (a smoke test, not for results)
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "xp/xp.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  long reps = 0;             // calls per batch
  std::vector<double> runs;  // seconds per call, one per batch, in run order
  double median = 0, min = 0, max = 0;
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double batch(const std::function<void()>& fn, long reps) {
  const auto t0 = Clock::now();
  for (long r = 0; r < reps; ++r) fn();
  return seconds_since(t0);
}

// Warm-up and batch sizing (doubling until a batch lasts min_s), then `runs` timed batches.
Timing time_row(const std::function<void()>& fn, double min_s, int runs = 5) {
  fn();
  Timing t;
  t.reps = 1;
  for (;;) {
    const double s = batch(fn, t.reps);
    if (s >= min_s) break;
    const double want = min_s / std::max(s, 1e-9) * 1.2;
    t.reps =
        std::max(t.reps * 2, std::min(static_cast<long>(std::ceil(static_cast<double>(t.reps) * want)), t.reps * 64));
  }
  for (int r = 0; r < runs; ++r) t.runs.push_back(batch(fn, t.reps) / static_cast<double>(t.reps));
  std::vector<double> s = t.runs;
  std::sort(s.begin(), s.end());
  t.median = s[s.size() / 2];
  t.min = s.front();
  t.max = s.back();
  return t;
}

struct Row {
  std::string id, label;
  Timing xp;
  bool has_direct = false;  // matmul rows: OpenBLAS called directly
  Timing direct;
  std::string output;  // the result's file under --data, or empty
};

std::string fmt_timing(const Timing& t) {
  const double unit = t.median >= 1e-3 ? 1e3 : 1e6;
  char buf[128];
  std::snprintf(buf, sizeof buf, "%10.3f [%.3f..%.3f] %s", t.median * unit, t.min * unit, t.max * unit,
                unit == 1e3 ? "ms" : "us");
  return buf;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o;
}

std::string json_timing(const Timing& t) {
  std::string s = "{\"reps\": " + std::to_string(t.reps) + ", \"runs_s\": [";
  char buf[64];
  for (std::size_t i = 0; i < t.runs.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.9g", i ? ", " : "", t.runs[i]);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "], \"median_s\": %.9g", t.median);
  s += buf;
  std::snprintf(buf, sizeof buf, ", \"min_s\": %.9g", t.min);
  s += buf;
  std::snprintf(buf, sizeof buf, ", \"max_s\": %.9g}", t.max);
  return s + buf;
}

// OpenBLAS called directly: the library xp loads (dlopen of the same name gives the same instance).
struct OpenBlas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
  using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                         int);
  static constexpr int kRowMajor = 101, kNoTrans = 111;
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  void (*set_num_threads)(int) = nullptr;
  int (*get_num_threads)() = nullptr;
  std::string config, error;

  bool ok() const { return sgemm != nullptr && dgemm != nullptr && set_num_threads != nullptr; }

  static OpenBlas open() {
    OpenBlas b;
    void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) h = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      b.error = e != nullptr ? e : "libopenblas.so.0 not found";
      return b;
    }
    // Never closed: closing a pthreads OpenBLAS with its pool running can hang.
    b.sgemm = reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm"));
    b.dgemm = reinterpret_cast<Dgemm>(dlsym(h, "cblas_dgemm"));
    b.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads"));
    b.get_num_threads = reinterpret_cast<int (*)()>(dlsym(h, "openblas_get_num_threads"));
    if (auto get_config = reinterpret_cast<const char* (*)()>(dlsym(h, "openblas_get_config"))) {
      if (const char* c = get_config()) b.config = c;
    }
    if (!b.ok()) b.error = "the library lacks cblas_sgemm, cblas_dgemm or openblas_set_num_threads";
    return b;
  }
};

volatile float g_sink = 0;

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  std::string data_dir, json_path;
  double min_ms = 50;
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--data" && i + 1 < argc) {
      data_dir = argv[++i];
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (a == "--min-ms" && i + 1 < argc) {
      min_ms = std::atof(argv[++i]);
    } else if (a == "--only" && i + 1 < argc) {
      only = "," + std::string(argv[++i]) + ",";
    } else if (a == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--threads N] [--data DIR] [--json FILE] [--min-ms MS] [--only ID,...] [--quick]\n",
                   argv[0]);
      return 2;
    }
  }
  if (threads > 0) xp::set_num_threads(threads);
  threads = xp::num_threads();
  const double min_s = min_ms * 1e-3;

  using xp::DType;
  const xp::Device cpu = xp::Device::cpu();
  const std::int64_t n = quick ? (std::int64_t{1} << 20) : (std::int64_t{1} << 24);
  const std::int64_t small = 1024;

  // The inputs, drawn once from one seed, in this order.
  xp::random::Generator gen(20261202);
  xp::Array a = gen.uniform({n}, DType::float32, -1, 1, cpu);
  xp::Array b = gen.uniform({n}, DType::float32, -1, 1, cpu);
  xp::Array c = gen.uniform({n}, DType::float32, -1, 1, cpu);
  xp::Array x = gen.uniform({n}, DType::float32, -10, 10, cpu);    // exp, sin
  xp::Array p = gen.uniform({n}, DType::float32, 1e-3, 1e3, cpu);  // log: positive
  xp::Array s = gen.uniform({small}, DType::float32, -1, 1, cpu);  // the small a + b
  xp::Array t = gen.uniform({small}, DType::float32, -1, 1, cpu);
  struct Mat {
    std::string id;
    DType dtype;
    std::int64_t size;
    xp::Array A, B;
  };
  std::vector<Mat> mats = {{"matmul_f32_1024", DType::float32, 1024, {}, {}},
                           {"matmul_f32_2048", DType::float32, 2048, {}, {}},
                           {"matmul_f64_2048", DType::float64, 2048, {}, {}}};
  if (quick) mats.resize(1);
  for (Mat& m : mats) {
    m.A = gen.uniform({m.size, m.size}, m.dtype, -1, 1, cpu);
    m.B = gen.uniform({m.size, m.size}, m.dtype, -1, 1, cpu);
  }
  xp::eval({a, b, c, x, p, s, t});
  for (Mat& m : mats) xp::eval({m.A, m.B});

  auto save = [&](const std::string& name, const xp::Array& arr) -> std::string {
    if (data_dir.empty()) return {};
    xp::save(data_dir + "/" + name + ".npy", arr);
    return name + ".npy";
  };
  if (!data_dir.empty()) {
    save("in_a", a);
    save("in_b", b);
    save("in_c", c);
    save("in_x", x);
    save("in_p", p);
    save("in_s", s);
    save("in_t", t);
    for (const Mat& m : mats) {
      save("in_" + m.id + "_A", m.A);
      save("in_" + m.id + "_B", m.B);
    }
  }

  std::printf(
      "xp %s (source %s), CPU, %d threads; n = 2^%d float32; per call: median [min..max] of 5 batches of >= %.0f ms\n",
      std::string(xp::version()).c_str(), std::string(xp::source_hash()).c_str(), threads, quick ? 20 : 24, min_ms);
  std::fflush(stdout);

  std::vector<Row> rows;
  auto wanted = [&](const std::string& id) { return only.empty() || only.find("," + id + ",") != std::string::npos; };
  auto report = [&](const Row& r) {
    std::printf("%-18s %-38s xp %s", r.id.c_str(), r.label.c_str(), fmt_timing(r.xp).c_str());
    if (r.has_direct) {
      std::printf("   OpenBLAS direct %s   xp/OpenBLAS %.3f", fmt_timing(r.direct).c_str(),
                  r.xp.median / r.direct.median);
    }
    std::printf("\n");
    std::fflush(stdout);
  };
  auto add_row = [&](std::string id, std::string label, const std::function<void()>& fn,
                     const std::function<xp::Array()>& result) {
    if (!wanted(id)) return;
    Row r{std::move(id), std::move(label), time_row(fn, min_s), false, {}, {}};
    r.output = save("out_" + r.id, result());
    report(r);
    rows.push_back(std::move(r));
  };

  xp::Array out = xp::empty({n}, DType::float32, cpu);
  xp::Array kept;

  add_row(
      "add_out", "add(a, b, out=o)", [&] { xp::add(a, b, out); }, [&] { return out; });
  add_row(
      "fma_new", "a * b + c, a new array", [&] { kept = (a * b + c).eval(); }, [&] { return kept; });
  kept = xp::Array();
  add_row(
      "fma_out", "a * b + c, out=o", [&] { xp::add(a * b, c, out); }, [&] { return out; });
  add_row(
      "sum", "sum(a)", [&] { g_sink = xp::sum(a).item<float>(); }, [&] { return xp::sum(a); });
  add_row(
      "exp", "exp(x, out=o), x in [-10, 10)", [&] { xp::exp(x, out); }, [&] { return out; });
  add_row(
      "log", "log(p, out=o), p in [1e-3, 1e3)", [&] { xp::log(p, out); }, [&] { return out; });
  add_row(
      "sin", "sin(x, out=o), x in [-10, 10)", [&] { xp::sin(x, out); }, [&] { return out; });
  out = xp::Array();

  // Matmul: xp first (it loads OpenBLAS and gives it xp's thread count), then the direct call on
  // the same library, instance and buffers.
  const OpenBlas blas = OpenBlas::open();
  for (const Mat& m : mats) {
    if (!wanted(m.id)) continue;
    Row r;
    r.id = m.id;
    r.label = "matmul " + std::to_string(m.size) + "^2 " + std::string(xp::name(m.dtype));
    r.xp = time_row([&] { kept = xp::matmul(m.A, m.B); }, min_s);
    r.output = save("out_" + r.id, kept);
    kept = xp::Array();
    if (blas.ok()) {
      const int k = static_cast<int>(m.size);
      blas.set_num_threads(threads);
      if (m.dtype == DType::float32) {
        std::vector<float> C(static_cast<std::size_t>(k) * k);
        const auto* A = static_cast<const float*>(m.A.data());
        const auto* B = static_cast<const float*>(m.B.data());
        r.direct = time_row(
            [&] {
              blas.sgemm(OpenBlas::kRowMajor, OpenBlas::kNoTrans, OpenBlas::kNoTrans, k, k, k, 1.0f, A, k, B, k, 0.0f,
                         C.data(), k);
            },
            min_s);
      } else {
        std::vector<double> C(static_cast<std::size_t>(k) * k);
        const auto* A = static_cast<const double*>(m.A.data());
        const auto* B = static_cast<const double*>(m.B.data());
        r.direct = time_row(
            [&] {
              blas.dgemm(OpenBlas::kRowMajor, OpenBlas::kNoTrans, OpenBlas::kNoTrans, k, k, k, 1.0, A, k, B, k, 0.0,
                         C.data(), k);
            },
            min_s);
      }
      r.has_direct = true;
    }
    report(r);
    rows.push_back(std::move(r));
  }
  if (!blas.ok()) std::printf("no OpenBLAS to call directly: %s\n", blas.error.c_str());

  add_row(
      "small_add", "a + b, 1,024 elements, evaluated", [&] { kept = (s + t).eval(); }, [&] { return kept; });

  if (!json_path.empty()) {
    std::FILE* f = std::fopen(json_path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
      return 1;
    }
#if defined(__clang__)
    const std::string compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    const std::string compiler = std::string("g++ ") + __VERSION__;
#else
    const std::string compiler = "unknown";
#endif
    std::fprintf(f,
                 "{\n  \"xp_version\": \"%s\",\n  \"xp_source\": \"%s\",\n  \"compiler\": \"%s\",\n  \"threads\": "
                 "%d,\n  \"n\": %lld,\n  "
                 "\"min_ms\": %g,\n",
                 json_escape(std::string(xp::version())).c_str(), std::string(xp::source_hash()).c_str(),
                 json_escape(compiler).c_str(), threads, static_cast<long long>(n), min_ms);
    std::fprintf(f, "  \"openblas\": {\"loaded\": %s, \"config\": \"%s\", \"threads\": %d, \"error\": \"%s\"},\n",
                 blas.ok() ? "true" : "false", json_escape(blas.config).c_str(),
                 blas.get_num_threads != nullptr ? blas.get_num_threads() : 0, json_escape(blas.error).c_str());
    std::fprintf(f, "  \"rows\": [\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::fprintf(f, "    {\"id\": \"%s\", \"label\": \"%s\", \"output\": \"%s\", \"xp\": %s", r.id.c_str(),
                   json_escape(r.label).c_str(), r.output.c_str(), json_timing(r.xp).c_str());
      if (r.has_direct) std::fprintf(f, ", \"openblas_direct\": %s", json_timing(r.direct).c_str());
      std::fprintf(f, "}%s\n", i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
  }
  return 0;
}
