// `xp bench launch`: the samples' medians and cells, the tables and ratios, and the JSON and
// Markdown outputs (bench_launch_parts.hpp).
#include "bench_launch_parts.hpp"

namespace xp_cli::launch {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

json run_child(const std::string& row, const std::string& command, std::size_t n,
               const std::function<void(std::size_t, std::size_t)>& on_progress) {
  std::fflush(stdout);
  FILE* pipe = popen(command.c_str(), "r");
  json fail = new_sample(row, n);
  if (pipe == nullptr) {
    fail["error"] = "popen failed: " + command;
    return fail;
  }
  std::string last, line;
  char buf[8192];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) {
    line += buf;
    if (line.empty() || line.back() != '\n') continue;  // a longer line: read on
    line.pop_back();
    std::size_t k = 0, m = 0;
    if (line.rfind("#progress ", 0) == 0) {
      if (on_progress && std::sscanf(line.c_str() + 10, "%zu/%zu", &k, &m) == 2) on_progress(k, m);
    } else if (!line.empty() && line.front() == '{') {
      last = line;
    }
    line.clear();
  }
  if (!line.empty() && line.front() == '{') last = line;
  const int status = pclose(pipe);
  if (!last.empty()) {
    try {
      json s = json::parse(last);
      if (s.is_object()) return s;
    } catch (const json::exception&) {
    }
  }
  const std::string how = WIFEXITED(status)     ? "exit status " + std::to_string(WEXITSTATUS(status))
                          : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                : "status " + std::to_string(status);
  fail["error"] = "the child printed no result line (" + how + "): " + command;
  return fail;
}

struct Stat {
  double median = 0, min = 0, max = 0;
  std::size_t count = 0;
};

std::optional<Stat> stat(const Samples& samples, const char* key) {
  std::vector<double> v;
  for (const auto& s : samples)
    if (flag(s, "ok") && s.contains(key) && s[key].is_number()) v.push_back(s[key].get<double>());
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return Stat{v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2, v.front(), v.back(), v.size()};
}

// What the first-call rows owe to xp's preload: the kernels the previous processes used are loaded
// on a thread of xp's own from the device's first use (the inputs' upload), before the clock.
std::string preload_note() {
  std::size_t n = 0;
  try {
    n = xp::config().preload_kernels;
  } catch (const xp::ConfigError&) {
  }
  return n > 0 ? "; XP_PRELOAD_KERNELS=" + std::to_string(n) +
                     ": xp's module of the previous process was loaded before the clock, on xp's own thread"
               : "; XP_PRELOAD_KERNELS=0: xp loads its module inside the clock too";
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x >= 1000 ? "%.0f" : "%.4g", x);
  return buf;
}

std::string cell(const Samples& samples, const char* key) {
  const auto st = stat(samples, key);
  if (!st) return "n/a";
  std::string c = number(st->median);
  if (st->count > 1) c += " (" + number(st->min) + ".." + number(st->max) + ")";
  return c;
}

json stat_json(const Samples& samples, const char* key) {
  const auto st = stat(samples, key);
  if (!st) return nullptr;
  return {{"median", st->median}, {"min", st->min}, {"max", st->max}, {"count", st->count}};
}

std::string first_line(const std::string& e, std::size_t limit = 160) {
  return e.substr(0, std::min({e.find('\n'), limit, e.size()}));
}

// Why a row did not run, when every sample says it was skipped (a module that does not import).
std::string skip_text(const Samples& samples) {
  if (samples.empty()) return "";
  for (const auto& s : samples)
    if (text_of(s, "skipped").empty()) return "";
  return text_of(samples.front(), "skipped");
}

std::string bits_cell(const Samples& samples) {
  if (const std::string skip = skip_text(samples); !skip.empty()) return "skipped: " + first_line(skip);
  std::size_t ok = 0, ran = 0;
  std::string rounding;
  for (const auto& s : samples) {
    if (!flag(s, "ok")) {
      const std::string e = text_of(s, "error").empty() ? "failed" : text_of(s, "error");
      return "error: " + first_line(e, 100);
    }
    ++ran;
    if (!flag(s, "bits_ok"))
      return "MISMATCH " + (text_of(s, "mismatch").empty() ? std::string("(not checked)") : text_of(s, "mismatch"));
    ++ok;
    if (const std::string r = text_of(s, "rounding"); !r.empty()) rounding = r;
  }
  if (ran == 0) return "n/a";
  std::string c = "OK (" + std::to_string(ok) + "/" + std::to_string(ran) + ")";
  if (rounding == "fma") c += ", FMA reference (contracted)";
  if (rounding == "separate") c += ", two roundings";
  return c;
}

bool passed(const json& s) {
  return s.contains("within_bound") && !s["within_bound"].is_null() ? flag(s, "within_bound") : flag(s, "bits_ok");
}

bool failed(const Samples& samples) {
  if (!skip_text(samples).empty()) return false;
  for (const auto& s : samples)
    if (!flag(s, "ok") || !passed(s)) return true;
  return false;
}

std::optional<double> largest(const Samples& samples, const char* key) {
  std::optional<double> m;
  for (const auto& s : samples)
    if (flag(s, "ok") && s.contains(key) && s[key].is_number()) m = std::max(m.value_or(0.0), s[key].get<double>());
  return m;
}

// The check column of the sum and matmul rows: within bound in how many samples, the largest error
// seen, and for matmul how many sampled entries equal xp's (`xp`: xp's samples of the same table).
std::string check_cell(const Samples& samples, const std::string& op, const Samples* xp) {
  if (const std::string skip = skip_text(samples); !skip.empty()) return "skipped: " + first_line(skip);
  std::size_t ran = 0;
  for (const auto& s : samples) {
    if (!flag(s, "ok")) {
      const std::string e = text_of(s, "error").empty() ? "failed" : text_of(s, "error");
      return "error: " + first_line(e, 100);
    }
    ++ran;
    if (!passed(s))
      return "OUT OF BOUND " + (text_of(s, "mismatch").empty() ? std::string("(not checked)") : text_of(s, "mismatch"));
  }
  if (ran == 0) return "n/a";
  std::string c = "within bound (" + std::to_string(ran) + "/" + std::to_string(ran) + ")";
  char buf[160];
  if (op == "sum") {
    if (const auto e = largest(samples, "rel_error")) {
      std::snprintf(buf, sizeof buf, ", rel. error <= %.2g (bound %g)", *e, bn::kSumRelBound);
      c += buf;
    }
  } else if (const auto e = largest(samples, "error_of_bound")) {
    std::snprintf(buf, sizeof buf, ", worst error %.0f%% of its bound", *e * 100);
    c += buf;
  }
  if (xp != nullptr && is_matmul_op(op)) {
    // The fewest sampled entries equal to xp's, over every pair of samples (all should be equal).
    std::optional<std::size_t> fewest;
    std::size_t total = 0;
    for (const auto& s : samples)
      for (const auto& x : *xp) {
        if (!flag(x, "ok") || !s.contains("values") || !x.contains("values")) continue;
        const json &v = s["values"], &w = x["values"];
        if (v.size() != w.size()) continue;
        std::size_t equal = 0;
        for (std::size_t i = 0; i < v.size(); ++i) equal += v[i] == w[i] ? 1 : 0;
        fewest = std::min(fewest.value_or(equal), equal);
        total = v.size();
      }
    if (fewest) c += ", = xp at " + std::to_string(*fewest) + "/" + std::to_string(total);
  }
  return c;
}

std::string version_text(int v) {
  return v <= 0 ? "unknown" : std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

void write_text(const std::string& requested, const std::string& text) {
  std::error_code ec;
  const fs::file_status st = fs::status(requested, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    if (fs::is_directory(st)) throw std::runtime_error("cannot write " + requested + ": it is a folder");
    std::ofstream f(requested, std::ios::binary);
    f << text;
    f.close();
    if (!f) throw std::runtime_error("cannot write " + requested);
    return;
  }
  std::string file = requested;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(file, ec)); ++hops) {
    const fs::path link = fs::read_symlink(file, ec);
    if (ec) break;
    file = (link.is_absolute() ? link : fs::path(file).parent_path() / link).string();
  }
  const std::string part = file + ".part";
  {
    std::ofstream f(part, std::ios::binary);
    f << text;
    f.close();
    if (!f) {
      std::remove(part.c_str());
      throw std::runtime_error("cannot write " + file);
    }
  }
  if (std::rename(part.c_str(), file.c_str()) != 0) {
    std::remove(part.c_str());
    throw std::runtime_error("cannot write " + file);
  }
}

void check_output(const char* option, const std::string& file) {
  if (file.empty()) return;
  const fs::path p(file);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw xp::ValueError(std::string(option) + " " + file + ": there is no folder " + dir.string());
  if (fs::is_directory(p, ec)) throw xp::ValueError(std::string(option) + " " + file + " is a folder");
  // A device or a FIFO (/dev/stdout) is written in place: its folder need not be writable.
  if (const auto st = fs::status(p, ec); fs::exists(st) && !fs::is_regular_file(st)) {
    if (::access(file.c_str(), W_OK) != 0) throw xp::ValueError(std::string(option) + " " + file + ": cannot write it");
    return;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw xp::ValueError(std::string(option) + " " + file + ": cannot write in " + dir.string());
}

void check_outputs(const BenchLaunchArgs& args) {
  check_output("--json", args.json_file);
  check_output("--md", args.md_file);
  check_output("--csv", args.csv_file);
  check_output("--svg", args.svg_file);
}

void write_json(const std::string& file, const json& doc) {
  write_text(file, doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

std::optional<double> divide(const std::optional<Stat>& a, const std::optional<Stat>& b) {
  if (!a || !b || b->median <= 0) return std::nullopt;
  return a->median / b->median;
}

std::optional<double> median_of(const std::optional<Stat>& a) {
  return a ? std::optional<double>(a->median) : std::nullopt;
}

std::string cache_env(const fs::path& root, const std::string& op) {
  std::string e = op == "matmul-tf32" ? "env -u NVIDIA_TF32_OVERRIDE CUPY_TF32=1"
                  : is_matmul_op(op)  ? "env -u CUPY_TF32 -u NVIDIA_TF32_OVERRIDE"
                                      : "env";
  for (const auto& [var, sub] :
       std::vector<std::pair<const char*, const char*>>{{"XP_CACHE_DIR", "xp"},
                                                        {"CUDA_CACHE_PATH", "cuda"},
                                                        {"CUPY_CACHE_DIR", "cupy"},
                                                        {"TORCHINDUCTOR_CACHE_DIR", "inductor"},
                                                        {"TRITON_CACHE_DIR", "triton"},
                                                        {"NUMBA_CACHE_DIR", "numba"}})
    e += std::string(" ") + var + "=" + shell_quote((root / sub).string());
  return e;
}

fs::path make_temp_dir(const char* prefix) {
  std::string tmpl = (fs::temp_directory_path() / (std::string(prefix) + "XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
  return tmpl;
}

fs::path find_python_rows(const std::string& given) {
  if (!given.empty()) {
    if (!is_file(given)) throw std::runtime_error("--python-rows " + given + ": no such file");
    return fs::absolute(given);
  }
  // As find_kernel_file: an installed xp's copy first, then the source tree's.
  std::vector<fs::path> tried;
  if (const fs::path exe = exe_path(); !exe.empty())
    tried.push_back(exe.parent_path() / "../share/xp/bench/python/launch_rows.py");
#ifdef XP_BENCH_PYTHON_ROWS
  tried.emplace_back(XP_BENCH_PYTHON_ROWS);
#endif
  for (const auto& p : tried)
    if (is_file(p)) return fs::weakly_canonical(p);
  return {};
}

std::string row_label(const Row& r, const Samples& s) {
  std::string label = r.label;
  if (r.id == "nvcc" && !s.empty() && !text_of(s.front(), "arch").empty())
    label = "nvcc -arch=" + text_of(s.front(), "arch") + " program";
  if (r.source == "Python") label += " [Python]";
  return label;
}

std::string build_cell(const Row& r, const Samples& s, bool gpu) {
  if (r.id == "nvcc") return "n/a (ahead of time)";
  const std::string build = cell(s, "build_ms");
  if (build != "n/a") return build;
  if (!skip_text(s).empty()) return "";
  for (const auto& x : s)
    if (flag(x, "build_in_first_call")) return "in first call";
  if ((r.id.rfind("xp-", 0) == 0 && gpu && !is_matmul_op(r.op)) || r.id == "torch-compile-fma") return "in first call";
  return "none";
}

void print_table(Report& out, const std::vector<Row>& rows, bool second, bool gpu, std::size_t n) {
  auto rows_of = [&](auto pred) {
    std::vector<const Row*> v;
    for (const Row& r : rows)
      if (!(r.in_process && second) && pred(r.op)) v.push_back(&r);
    return v;
  };
  const auto elementwise = rows_of([](const std::string& op) { return !is_checked_op(op); });
  const auto sums = rows_of([](const std::string& op) { return op == "sum"; });
  auto matmuls = rows_of([](const std::string& op) { return is_matmul_op(op); });
  // float32, then TF32, then float16; each library in row order within.
  auto rank = [](const std::string& op) { return op == "matmul-f32" ? 0 : op == "matmul-tf32" ? 1 : 2; };
  std::stable_sort(matmuls.begin(), matmuls.end(),
                   [&](const Row* a, const Row* b) { return rank(a->op) < rank(b->op); });
  if (!elementwise.empty() || (sums.empty() && matmuls.empty())) {
    out("| row | build ms | first ms | build+first ms | mean ms | GB/s | host us/call (n=%d) | bits |\n", bn::kHostN);
    out("|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (const Row* r : elementwise) {
      const Samples& s = second ? r->second : r->first;
      const std::string label = row_label(*r, s);
      if (!r->skipped.empty()) {
        out("| %s | | | | | | | skipped: %s |\n", label.c_str(), r->skipped.c_str());
        continue;
      }
      const bool skip = !skip_text(s).empty();
      auto c = [&](const char* key) { return skip ? std::string() : cell(s, key); };
      out("| %s | %s | %s | %s | %s | %s | %s | %s |\n", label.c_str(), build_cell(*r, s, gpu).c_str(),
          c("first_ms").c_str(), c("total_ms").c_str(), c("steady_ms").c_str(), c("gbps").c_str(), c("host_us").c_str(),
          bits_cell(s).c_str());
    }
  }
  if (!sums.empty()) {
    const std::size_t sn = size_for("sum", gpu, n);
    if (!elementwise.empty()) out("\n");
    out("sum(a) of n = %zu float32 (%.4g MiB read per call), checked against a float64 reference:\n\n", sn,
        static_cast<double>(sn) * 4 / (1 << 20));
    out("| row | build ms | first ms | build+first ms | mean ms | GB/s | host us/call (n=%d) | check |\n", bn::kHostN);
    out("|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (const Row* r : sums) {
      const Samples& s = second ? r->second : r->first;
      const std::string label = row_label(*r, s);
      if (!r->skipped.empty()) {
        out("| %s | | | | | | | skipped: %s |\n", label.c_str(), r->skipped.c_str());
        continue;
      }
      const bool skip = !skip_text(s).empty();
      auto c = [&](const char* key) { return skip ? std::string() : cell(s, key); };
      out("| %s | %s | %s | %s | %s | %s | %s | %s |\n", label.c_str(), build_cell(*r, s, gpu).c_str(),
          c("first_ms").c_str(), c("total_ms").c_str(), c("steady_ms").c_str(), c("gbps").c_str(), c("host_us").c_str(),
          check_cell(s, r->op, nullptr).c_str());
    }
  }
  if (!matmuls.empty()) {
    const std::size_t m = size_for("matmul-f32", gpu, n);
    if (!elementwise.empty() || !sums.empty()) out("\n");
    out("matmul C = A @ B, %zu x %zu times %zu x %zu (2 n^3 = %.3g flop per call), checked at %d entries against "
        "float64:\n\n",
        m, m, m, m, 2.0 * std::pow(static_cast<double>(m), 3), bn::kMatmulSamples);
    out("| row | compute type | first ms | mean ms | TFLOP/s | host us/call (%dx%d) | check |\n", bn::kHostMatmulN,
        bn::kHostMatmulN);
    out("|---|---|---:|---:|---:|---:|---|\n");
    for (const Row* r : matmuls) {
      const Samples& s = second ? r->second : r->first;
      const std::string label = row_label(*r, s);
      if (!r->skipped.empty()) {
        out("| %s | | | | | | skipped: %s |\n", label.c_str(), r->skipped.c_str());
        continue;
      }
      // xp's samples of the same dtype, to compare the sampled entries with.
      const Samples* xp = nullptr;
      for (const Row* x : matmuls)
        if (x != r && x->op == r->op && x->id.rfind("xp-", 0) == 0 && x->skipped.empty())
          xp = second ? &x->second : &x->first;
      std::string compute;
      for (const auto& x : s)
        if (compute.empty()) compute = text_of(x, "compute_type");
      const bool skip = !skip_text(s).empty();
      auto c = [&](const char* key) { return skip ? std::string() : cell(s, key); };
      out("| %s | %s | %s | %s | %s | %s | %s |\n", label.c_str(), compute.c_str(), c("first_ms").c_str(),
          c("steady_ms").c_str(), c("tflops").c_str(), c("host_us").c_str(), check_cell(s, r->op, xp).c_str());
    }
  }
}

void print_ratios(Report& out, const std::vector<Ratio>& ratios, int runs, json& ratio_json) {
  out("| figure | value | goal | verdict |\n|---|---:|---|---|\n");
  const bool judged = runs >= kRunsForAVerdict;
  for (const auto& r : ratios) {
    std::string verdict = "n/a";
    bool met = false;
    char goal[64] = "none (information)";
    switch (r.kind) {
      case Ratio::Kind::within:
        std::snprintf(goal, sizeof goal, "within %.0f%% of 1", r.goal * 100);
        break;
      case Ratio::Kind::at_most:
        std::snprintf(goal, sizeof goal, "<= %g", r.goal);
        break;
      case Ratio::Kind::at_least:
        std::snprintf(goal, sizeof goal, ">= %g", r.goal);
        break;
      case Ratio::Kind::info:
        break;
    }
    if (r.value && r.kind != Ratio::Kind::info && !judged) {
      verdict = "not judged: " + std::to_string(runs) + " run" + (runs == 1 ? "" : "s") +
                " (a goal needs the medians of " + std::to_string(kRunsForAVerdict) + ")";
    } else if (r.value && r.kind != Ratio::Kind::info) {
      met = r.kind == Ratio::Kind::within    ? std::abs(*r.value - 1.0) <= r.goal
            : r.kind == Ratio::Kind::at_most ? *r.value <= r.goal
                                             : *r.value >= r.goal;
      verdict = met ? "met" : "NOT met";
    } else if (r.value) {
      verdict = "";
    }
    const std::string name = r.note.empty() ? r.name : r.name + " (" + r.note + ")";
    out("| %s | %s | %s | %s |\n", name.c_str(), r.value ? number(*r.value).c_str() : "n/a", goal, verdict.c_str());
    ratio_json.push_back({{"name", r.name},
                          {"value", r.value ? json(*r.value) : json(nullptr)},
                          {"goal", goal},
                          {"met", r.value && r.kind != Ratio::Kind::info && judged ? json(met) : json(nullptr)},
                          {"note", r.note}});
  }
}

const Row* find_row(const std::vector<Row>& rows, const std::string& id) {
  for (const auto& r : rows)
    if (r.id == id && r.skipped.empty()) return &r;
  return nullptr;
}

std::vector<Ratio> ratios_of(const std::vector<Row>& rows, bool gpu, std::size_t n) {
  std::vector<Ratio> out;
  const Samples none;
  auto first = [&](const char* id) -> const Samples& {
    const Row* r = find_row(rows, id);
    return r ? r->first : none;
  };
  auto second = [&](const char* id) -> const Samples& {
    const Row* r = find_row(rows, id);
    return r ? r->second : none;
  };
  using K = Ratio::Kind;
  // speed of xp relative to a baseline: baseline ms / xp ms
  auto speed = [&](const Samples& x, const Samples& base) {
    return divide(stat(base, "steady_ms"), stat(x, "steady_ms"));
  };
  if (gpu) {
    out.push_back({"xp host us / raw host us (in this process, same buffers)",
                   divide(stat(first("xp-in-process"), "host_us"), stat(first("raw-in-process"), "host_us")), 1.1,
                   K::at_most, ""});
    out.push_back({"xp host us / raw host us (second processes)",
                   divide(stat(second("xp"), "host_us"), stat(second("raw"), "host_us")), 1.1, K::at_most, ""});
    out.push_back({"xp warm cache: Program() + kernel() + first launch call, ms",
                   median_of(stat(second("xp"), "to_launch_ms")), 0.3, K::at_most,
                   "not a ratio; second process, up to the launch call's return"});
    out.push_back({"xp warm cache, n = 2^22: Program() + kernel() + first launch to completion, ms",
                   median_of(stat(second("xp-4M"), "total_ms")), 0.3, K::at_most,
                   "not a ratio; second process, the kernel's run included"});
    {
      const auto nv = stat(first("raw"), "nvrtc_ms");
      const auto ld = stat(first("raw"), "load_ms");
      std::optional<Stat> base;
      if (nv && ld) base = Stat{nv->median + ld->median, 0, 0, 1};
      out.push_back({"xp cold build / (raw NVRTC compile + cuModuleLoadData), first processes",
                     divide(stat(first("xp"), "build_ms"), base), 1.1, K::at_most, ""});
    }
    out.push_back({"xp Program::kernel() on a new Program of the same source, us",
                   median_of(stat(first("xp-in-process"), "new_program_lookup_us")), 2.0, K::at_most,
                   "not a ratio; median of " + std::to_string(kLookups) + " new Programs"});
    out.push_back({"xp steady / nvcc steady (second processes) at n = " + std::to_string(n),
                   divide(stat(second("xp"), "steady_ms"), stat(second("nvcc"), "steady_ms")), 0.02, K::within, ""});
    out.push_back({"xp steady / raw steady (second processes)",
                   divide(stat(second("xp"), "steady_ms"), stat(second("raw"), "steady_ms")), 0.02, K::within, ""});
    out.push_back({"xp add(out=) speed / PyTorch add(out=) speed", speed(second("xp-add-out"), second("torch-add-out")),
                   0.98, K::at_least, "mean ms of the second processes"});
    out.push_back({"xp add(out=) speed / CuPy add(out=) speed", speed(second("xp-add-out"), second("cupy-add-out")), 0,
                   K::info, ""});
    out.push_back(
        {"xp c = a + b speed / PyTorch a + b speed", speed(second("xp-add"), second("torch-add")), 0, K::info, ""});
    out.push_back({"xp fused a*b+c speed / torch.compile a*b+c speed",
                   speed(second("xp-fma"), second("torch-compile-fma")), 0.98, K::at_least,
                   "xp rounds twice, torch.compile's Triton kernel contracts to an FMA: see the bits column"});
    out.push_back({"xp fused a*b+c speed / PyTorch eager a*b+c speed", speed(second("xp-fma"), second("torch-fma")), 0,
                   K::info, ""});
    out.push_back({"xp c = a + b host us / raw cuLaunchKernel host us",
                   divide(stat(second("xp-add"), "host_us"), stat(second("raw"), "host_us")), 2.0, K::at_most,
                   "n = 1024, evaluated each call, second processes"});
    out.push_back({"xp first c = a + b in a new process, warm disk cache, ms",
                   median_of(stat(second("xp-add"), "first_ms")), 1.0, K::at_most,
                   std::string("not a ratio; second process, its first kernel, to completion") + preload_note()});
    out.push_back({"xp first c = a + b / the bare driver's (second processes)",
                   divide(stat(second("xp-add"), "first_ms"), stat(second("raw-first"), "first_ms")), 0, K::info,
                   std::string("the driver alone: cubin file read, cuMemAlloc, cuModuleLoadData, launch, synchronize, "
                               "all inside the clock") +
                       preload_note()});
    {
      // The better of CuPy and PyTorch: the smaller median of the two.
      const auto cupy = stat(second("cupy-sum"), "steady_ms");
      const auto torch = stat(second("torch-sum"), "steady_ms");
      const bool use_cupy = cupy && (!torch || cupy->median <= torch->median);
      const auto best = use_cupy ? cupy : torch;
      out.push_back(
          {"xp sum speed / speed of the better of CuPy and PyTorch sum",
           divide(best, stat(second("xp-sum"), "steady_ms")), 0.98, K::at_least,
           !best ? std::string("mean ms of the second processes")
                 : std::string("mean ms of the second processes; the better: ") + (use_cupy ? "CuPy" : "PyTorch")});
    }
    out.push_back({"xp matmul float32 speed / CuPy A @ B float32 speed",
                   speed(second("xp-matmul-f32"), second("cupy-matmul-f32")), 0.98, K::at_least,
                   "both CUBLAS_COMPUTE_32F, no TF32; mean ms of the second processes"});
    out.push_back({"xp matmul float16 speed / CuPy A @ B float16 speed",
                   speed(second("xp-matmul-f16"), second("cupy-matmul-f16")), 0.98, K::at_least,
                   "both CUBLAS_COMPUTE_32F (float32 accumulation); mean ms of the second processes"});
    out.push_back({"xp matmul float32 TF32 speed / CuPy A @ B float32 TF32 speed",
                   speed(second("xp-matmul-tf32"), second("cupy-matmul-tf32")), 0.98, K::at_least,
                   "both CUBLAS_COMPUTE_32F_FAST_TF32 (MatmulPrecision::tf32, CUPY_TF32=1); mean ms of the second "
                   "processes"});
    out.push_back({"xp matmul float32 speed / PyTorch A @ B float32 speed",
                   speed(second("xp-matmul-f32"), second("torch-matmul-f32")), 0, K::info, "allow_tf32 = False"});
    out.push_back({"xp matmul float16 speed / PyTorch A @ B float16 speed",
                   speed(second("xp-matmul-f16"), second("torch-matmul-f16")), 0, K::info,
                   "allow_fp16_reduced_precision_reduction = False"});
    out.push_back({"xp matmul float32 TF32 speed / PyTorch A @ B float32 TF32 speed",
                   speed(second("xp-matmul-tf32"), second("torch-matmul-tf32")), 0, K::info, "allow_tf32 = True"});
  } else {
    out.push_back({"xp add(out=) speed / NumPy add(out=) speed", speed(second("xp-add-out"), second("numpy-add-out")),
                   0, K::info, ""});
    out.push_back({"xp a*b+c speed / NumPy a*b+c speed", speed(second("xp-fma"), second("numpy-fma")), 0, K::info, ""});
    out.push_back({"xp a*b+c speed / numexpr a*b+c speed", speed(second("xp-fma"), second("numexpr-fma")), 0, K::info,
                   "same thread count"});
    out.push_back({"xp c = a + b host us / NumPy a + b host us",
                   divide(stat(second("xp-add"), "host_us"), stat(second("numpy-add"), "host_us")), 0, K::info,
                   "n = 1024"});
    out.push_back({"xp sum speed / NumPy sum speed", speed(second("xp-sum"), second("numpy-sum")), 0, K::info, ""});
    out.push_back({"xp matmul float32 speed / NumPy A @ B float32 speed",
                   speed(second("xp-matmul-f32"), second("numpy-matmul-f32")), 0, K::info, ""});
  }
  return out;
}

json versions_of(const std::vector<Row>& rows) {
  json v = json::object();
  for (const auto& r : rows)
    for (const Samples* ss : {&r.first, &r.second})
      for (const auto& s : *ss)
        if (s.contains("versions") && s["versions"].is_object())
          for (auto it = s["versions"].begin(); it != s["versions"].end(); ++it)
            if (!it.value().is_null()) v[it.key()] = it.value();
  return v;
}

void print_header(Report& out, const Setup& st, const char* what, std::size_t n, int runs, json& doc) {
  doc["xp_version"] = std::string(xp::version());
  doc["xp_source"] = std::string(xp::source_hash());
  doc["threads"] = st.threads;
  if (!st.gpu) {
    out("xp bench %s: GPU rows skipped: %s\n", what, st.gpu_skip.c_str());
    out("CPU rows: xp on the CPU (%d thread%s) against NumPy and numexpr, n = %zu float32, %d run%s\n", st.threads,
        st.threads == 1 ? "" : "s", n, runs, runs == 1 ? "" : "s");
    doc["gpu_skipped"] = st.gpu_skip;
  } else {
    const xp::CudaStatus status = xp::cuda_status();
    const xp::SystemReport report = xp::system_report();
    const xp::CompilerInfo ci = xp::compiler_info();
    const xp::GpuInfo gpu = xp::gpu_info(*st.dev);
    out("xp bench %s: n = %zu float32 (%.1f MiB per buffer), %d run%s\n", what, n,
        static_cast<double>(n) * 4 / (1 << 20), runs, runs == 1 ? "" : "s");
    out("GPU:    %s (%s, %d SMs, L2 %.1f MiB)\n", gpu.name.c_str(), gpu.arch().c_str(), gpu.sm_count,
        gpu.l2_cache_bytes / double(1 << 20));
    std::error_code ec;
    const fs::path driver_file = fs::canonical(report.driver.path, ec);
    const std::string driver_text = ec || driver_file == report.driver.path
                                        ? report.driver.path
                                        : report.driver.path + " -> " + driver_file.string();
    out("driver: CUDA %s, %s\n", version_text(status.driver_version).c_str(), driver_text.c_str());
    out("NVRTC:  %s, %s\n", ci.nvrtc_version.c_str(), ci.nvrtc_path.c_str());
    out("kernel: %s (snippet of %zu bytes)\n", st.kernel_file.c_str(), st.source.size());
    out("nvcc:   %s\n",
        st.nvcc_exe.empty() ? "not built (bench/CMakeLists.txt builds it when nvcc is found)" : st.nvcc_exe.c_str());
    doc["gpu"] = {{"name", gpu.name},
                  {"arch", gpu.arch()},
                  {"sm_count", gpu.sm_count},
                  {"l2_cache_bytes", gpu.l2_cache_bytes},
                  {"memory_total_bytes", gpu.memory_total},
                  {"bandwidth_bytes_per_s", gpu.bandwidth_bytes_per_s},
                  {"pci_bus_id", gpu.pci_bus_id}};
    doc["driver"] = {{"cuda_version", version_text(status.driver_version)},
                     {"path", report.driver.path},
                     {"file", ec ? json(nullptr) : json(driver_file.string())}};
    doc["nvrtc"] = {{"version", ci.nvrtc_version}, {"path", ci.nvrtc_path}, {"include_dirs", ci.include_dirs}};
    doc["kernel_file"] = st.kernel_file.string();
    doc["kernel_source"] = st.source;
    doc["nvcc_exe"] = st.nvcc_exe.empty() ? json(nullptr) : json(st.nvcc_exe.string());
  }
  out("xp:     %s, source %s\n", std::string(xp::version()).c_str(), std::string(xp::source_hash()).c_str());
  if (!st.python_skip.empty()) {
    out("Python rows skipped: %s\n", st.python_skip.c_str());
    doc["python_skipped"] = st.python_skip;
  } else {
    out("Python: %s (%s, Python %s)\n", st.python_rows.c_str(), st.python.c_str(),
        st.python_list.value("python", "?").c_str());
    doc["python"] = {{"executable", st.python_list.value("executable", "")},
                     {"version", st.python_list.value("python", "")},
                     {"rows_file", st.python_rows.string()}};
  }
  out("\n");
}

void print_versions(Report& out, const json& versions) {
  if (versions.empty()) return;
  std::string line;
  for (auto it = versions.begin(); it != versions.end(); ++it)
    line += (line.empty() ? "" : ", ") + it.key() + " " +
            (it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
  out("Versions of the Python rows: %s\n", line.c_str());
}

json row_json(const Row& r) {
  json rj = {{"id", r.id}, {"label", r.label}, {"device", r.device}, {"op", r.op}, {"source", r.source}};
  rj["process"] = r.in_process ? "parent" : "fresh";
  rj["skipped"] =
      r.skipped.empty() ? (skip_text(r.first).empty() ? json(nullptr) : json(skip_text(r.first))) : json(r.skipped);
  for (const auto& [name, samples] : {std::pair<const char*, const Samples*>{"first_process", &r.first},
                                      std::pair<const char*, const Samples*>{"second_process", &r.second}}) {
    if (r.in_process && std::string(name) == "second_process") continue;
    json summary = json::object();
    for (const char* k : {"build_ms",    "first_ms",   "total_ms",  "launch_call_ms", "to_launch_ms",
                          "steady_ms",   "gbps",       "host_us",   "nvrtc_ms",       "load_ms",
                          "function_ms", "program_ms", "kernel_ms", "lookup_us",      "new_program_lookup_us",
                          "relookup_us", "import_ms",  "tflops",    "rel_error",      "error_of_bound"})
      if (auto sj = stat_json(*samples, k); !sj.is_null()) summary[k] = sj;
    if (is_checked_op(r.op))
      rj[name] = {{"summary", summary}, {"check", check_cell(*samples, r.op, nullptr)}, {"samples", *samples}};
    else
      rj[name] = {{"summary", summary}, {"bits", bits_cell(*samples)}, {"samples", *samples}};
  }
  return rj;
}

}  // namespace xp_cli::launch
