// `xp bench launch` (bench_launch.hpp): the parent, which starts one child process per
// process-level row and run, reads the JSON line each prints, runs the two in-process rows itself,
// then prints medians, ratios against the raw row and, with --json, everything; and the entry
// points of both commands. The other files of the command are listed in bench_launch_parts.hpp.
//
// The raw rows are the baseline: the driver API and NVRTC called directly, through entry points
// bench_driver.cpp declares and resolves itself (cuGetProcAddress_v2 at CUDA 12.0, legacy-stream
// flavour), so they share nothing with xp but the kernel text, the buffers' contents and the clock.
#include "bench_launch_parts.hpp"

namespace xp_cli {

namespace launch {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string read_text(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path.string());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string read_snippet(const fs::path& path) {
  const std::string text = read_text(path);
  const std::size_t begin = text.find(kBeginMarker);
  const std::size_t end = text.find(kEndMarker);
  if (begin == std::string::npos || end == std::string::npos || end < begin)
    throw std::runtime_error(path.string() + " has no '" + kBeginMarker + "' ... '" + kEndMarker + "' region");
  const std::size_t start = begin + std::char_traits<char>::length(kBeginMarker);
  return text.substr(start, end - start);
}

fs::path exe_path() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return !p.empty() && fs::is_regular_file(p, ec);
}

fs::path find_kernel_file(const std::string& given) {
  if (!given.empty()) {
    if (!is_file(given)) throw std::runtime_error("--kernel-file " + given + ": no such file");
    return fs::absolute(given);
  }
  // Beside the program first (an installed xp: <prefix>/share/xp/bench; the build tree: its copy in
  // <build>/bench), then the source tree it was built from, which may be gone or newer.
  std::vector<fs::path> tried;
  if (const fs::path exe = exe_path(); !exe.empty()) {
    tried.push_back(exe.parent_path() / "../share/xp/bench/kernels/vector_add.cu");
    tried.push_back(exe.parent_path() / "../../bench/kernels/vector_add.cu");  // the build tree
  }
#ifdef XP_BENCH_KERNEL_FILE
  tried.emplace_back(XP_BENCH_KERNEL_FILE);
#endif
  std::string list;
  for (const auto& p : tried) {
    if (is_file(p)) return fs::weakly_canonical(p);
    list += "\n  " + p.string();
  }
  throw std::runtime_error("bench/kernels/vector_add.cu not found (give --kernel-file); looked at:" + list);
}

fs::path find_nvcc_exe(const std::string& given) {
  if (!given.empty()) {
    if (!is_file(given)) throw std::runtime_error("--nvcc-exe " + given + ": no such file");
    return fs::absolute(given);
  }
  if (const fs::path exe = exe_path(); !exe.empty()) {
    for (const fs::path& p : {exe.parent_path() / kNvccExeName, exe.parent_path() / "../../bench" / kNvccExeName})
      if (is_file(p) && access(p.c_str(), X_OK) == 0) return fs::weakly_canonical(p);
  }
  return {};
}

Setup make_setup(const BenchLaunchArgs& args) {
  Setup st;
  const xp::CudaStatus status = xp::cuda_status();
  if (!status.available) {
    st.gpu_skip = "CUDA is not usable (" + std::string(xp::to_string(status.reason)) + "): " + status.detail;
  } else if (const xp::Device d = xp::default_device(); !d.is_cuda()) {
    st.gpu_skip = "xp's default device is " + d.str() + " (XP_DEVICE or FORCE_CPU)";
  } else {
    st.dev = d;
    if (args.cpu) st.gpu_skip = "--cpu asks for the CPU rows";
  }
  st.gpu = st.dev && !args.cpu;
  st.threads = xp::num_threads();
  st.self = exe_path();
  if (st.self.empty()) throw std::runtime_error("cannot find this program (/proc/self/exe) to start the child rows");
  if (st.gpu) {
    st.kernel_file = find_kernel_file(args.kernel_file);
    st.source = read_snippet(st.kernel_file);
    st.nvcc_exe = find_nvcc_exe(args.nvcc_exe);
    const xp::SystemReport report = xp::system_report();
    const xp::CompilerInfo ci = xp::compiler_info();
    if (!ci.available) throw std::runtime_error("xp has no NVRTC: " + ci.error);
    const xp::GpuInfo gpu = xp::gpu_info(*st.dev);
    st.arch = gpu.cc_major * 10 + gpu.cc_minor;
    st.driver_path = report.driver.path;
    st.nvrtc_path = ci.nvrtc_path;
    st.includes = ci.include_dirs;
  } else if (!args.kernel_file.empty()) {
    st.kernel_file = find_kernel_file(args.kernel_file);
  }
  st.python = args.python;
  if (args.python == "none") {
    st.python_skip = "--python none";
  } else {
    st.python_rows = find_python_rows(args.python_rows);
    if (st.python_rows.empty()) {
      st.python_skip = "bench/python/launch_rows.py not found (give --python-rows)";
    } else {
      const json l =
          run_child("list", shell_quote(st.python) + " " + shell_quote(st.python_rows.string()) + " list 2>&1", 0);
      if (l.contains("rows") && l["rows"].is_array()) {
        st.python_list = l;
      } else {
        st.python_skip = "'" + st.python + " " + st.python_rows.string() + " list' failed: " + text_of(l, "error");
      }
    }
  }
  return st;
}

std::vector<std::string> split_ids(const std::string& list) {
  std::vector<std::string> ids;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = std::min(list.find(',', pos), list.size());
    if (comma > pos) ids.push_back(list.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return ids;
}

// Why a row named in --only is not among this mode's rows; sets op when the row is known.
std::string why_not_here(const Setup& st, const std::string& id, bool sweep, std::string& op) {
  static const std::map<std::string, std::pair<std::string, bool>> cpp_rows = {
      // id -> op, on the GPU only
      {"raw", {"add", true}},
      {"xp", {"add", true}},
      {"xp-4M", {"add", true}},
      {"nvcc", {"add", true}},
      {"raw-in-process", {"add", true}},
      {"xp-in-process", {"add", true}},
      {"raw-first", {"add", true}},
      {"xp-add", {"add", false}},
      {"xp-add-out", {"add", false}},
      {"xp-fma", {"fma", false}},
      {"xp-sum", {"sum", false}},
      {"xp-matmul-f32", {"matmul-f32", false}},
      {"xp-matmul-f16", {"matmul-f16", false}},
      {"xp-matmul-tf32", {"matmul-tf32", true}}};
  std::optional<std::string> device;  // the Python row's, when listed
  if (const auto it = cpp_rows.find(id); it != cpp_rows.end()) {
    op = it->second.first;
    device = it->second.second ? "gpu" : (st.gpu ? "gpu" : "cpu");
  } else if (st.python_list.is_object()) {
    for (const auto& pr : st.python_list["rows"])
      if (pr.value("id", "") == id) {
        op = pr.value("op", "add");
        device = pr.value("device", "");
      }
  }
  if (!device) {
    if (!st.python_skip.empty()) return "not a C++ row, and the Python rows are skipped: " + st.python_skip;
    return "no such row";
  }
  if (*device == "gpu" && !st.gpu) return "a GPU row: " + st.gpu_skip;
  if (*device == "cpu" && st.gpu) return "a CPU row: it runs with --cpu or where no GPU is usable";
  if (sweep &&
      (is_checked_op(op) || id == "xp-4M" || id == "raw-in-process" || id == "xp-in-process" || id == "raw-first"))
    return "not in the sweep: it runs at one size (xp bench launch)";
  return "not run here";
}

bool wanted(const BenchLaunchArgs& args, const std::string& id) {
  if (args.only.empty()) return true;
  std::size_t pos = 0;
  while (pos <= args.only.size()) {
    const std::size_t comma = std::min(args.only.find(',', pos), args.only.size());
    if (args.only.compare(pos, comma - pos, id) == 0 && comma - pos == id.size()) return true;
    pos = comma + 1;
  }
  return false;
}

std::vector<Row> make_rows(const BenchLaunchArgs& args, const Setup& st, bool sweep) {
  std::vector<Row> rows;
  const std::string self = shell_quote(st.self.string());
  auto child = [self](const std::string& what, std::size_t n, const std::string& sizes) {
    std::string c = self + " bench launch --row " + what + " --n " + std::to_string(n);
    if (!sizes.empty()) c += " --sizes " + sizes;
    return c;
  };
  if (st.gpu) {
    const std::string kernel = " --kernel-file " + shell_quote(st.kernel_file.string());
    std::string raw_extra = kernel + " --driver " + shell_quote(st.driver_path) + " --nvrtc " +
                            shell_quote(st.nvrtc_path) + " --arch " + std::to_string(st.arch) + " --device " +
                            std::to_string(st.dev->index());
    for (const auto& dir : st.includes) raw_extra += " --nvrtc-include " + shell_quote(dir);
    Row raw{"raw", "raw driver API + NVRTC", "gpu", "add", "C++", "", "", {}, 0, false, {}, {}};
    raw.command = [=](std::size_t n, const std::string& sizes, const fs::path& root) {
      return "exec " + cache_env(root) + " " + child("raw-child", n, sizes) + raw_extra;
    };
    rows.push_back(raw);
    Row x{"xp", "xp Program + Kernel::launch", "gpu", "add", "C++", "", "", {}, 0, false, {}, {}};
    x.command = [=](std::size_t n, const std::string& sizes, const fs::path& root) {
      return "exec " + cache_env(root) + " " + child("xp-child", n, sizes) + kernel + " --label xp";
    };
    rows.push_back(x);
    if (!sweep) {
      // The seed's size (2^22): there the kernel's own run is small, so the first launch measured
      // to its completion shows what xp adds (lookup, load, launch).
      Row small = x;
      small.id = "xp-4M";
      small.label = "xp Program + Kernel::launch, n = 2^22";
      small.n_override = std::size_t{1} << 22;
      small.command = [=](std::size_t n, const std::string& sizes, const fs::path& root) {
        return "exec " + cache_env(root) + " " + child("xp-child", n, sizes) + kernel + " --label xp-4M";
      };
      rows.push_back(small);
    }
    Row nvcc{"nvcc", "nvcc-built program", "gpu", "add", "C++", "", "", {}, 0, false, {}, {}};
    if (st.nvcc_exe.empty()) nvcc.skipped = "not built: no nvcc when CMake configured bench/";
    const std::string nvcc_exe = shell_quote(st.nvcc_exe.string());
    const int device = st.dev->index();
    nvcc.command = [=](std::size_t n, const std::string& sizes, const fs::path& root) {
      return "exec " + cache_env(root) + " " + nvcc_exe + " --n " + std::to_string(n) + " --device " +
             std::to_string(device) + (sizes.empty() ? "" : " --sizes " + sizes);
    };
    rows.push_back(nvcc);
    if (!sweep) {
      // The bare driver doing what xp's first c = a + b does: the baseline of that figure.
      Row first{"raw-first", "raw driver API c = a + b (cubin file, cuMemAlloc)",
                "gpu",       "add",
                "C++",       "",
                "",          {},
                0,           false,
                {},          {}};
      const std::string first_extra = " --driver " + shell_quote(st.driver_path) + " --nvrtc " +
                                      shell_quote(st.nvrtc_path) + " --arch " + std::to_string(st.arch) + " --device " +
                                      std::to_string(st.dev->index());
      first.command = [=](std::size_t n, const std::string& sizes, const fs::path& root) {
        return "exec " + cache_env(root) + " " + child("raw-first-child", n, sizes) + first_extra + " --cubin-dir " +
               shell_quote((root / "raw").string());
      };
      rows.push_back(first);
    }
  }
  const std::string on = st.gpu ? "cuda" : "cpu";
  for (const auto& [id, label, op] :
       std::vector<std::array<std::string, 3>>{{"xp-add", "xp c = a + b (arrays)", "add"},
                                               {"xp-add-out", "xp add(a, b, out)", "add"},
                                               {"xp-fma", "xp d = a*b + c (fused)", "fma"}}) {
    Row r{id, label + (st.gpu ? "" : " on the CPU"), st.gpu ? "gpu" : "cpu", op, "C++", "", "", {}, 0, false, {}, {}};
    const std::string name = id;
    r.command = [=](std::size_t n, const std::string& sizes, const fs::path& root) {
      return "exec " + cache_env(root) + " " + child("array-child", n, sizes) + " --label " + name + " --on " + on;
    };
    rows.push_back(r);
  }
  // sum and matmul: one size each (not in the sweep), checked within a bound. TF32 on the GPU only
  // (the CPU has none: the float32 row says it all).
  for (const auto& [id, label, op] :
       std::vector<std::array<std::string, 3>>{{"xp-sum", "xp sum(a)", "sum"},
                                               {"xp-matmul-f32", "xp matmul(A, B) float32", "matmul-f32"},
                                               {"xp-matmul-f16", "xp matmul(A, B) float16", "matmul-f16"},
                                               {"xp-matmul-tf32", "xp matmul(A, B, tf32) float32", "matmul-tf32"}}) {
    if (sweep) break;
    if (op == "matmul-tf32" && !st.gpu) continue;
    Row r{id, label + (st.gpu ? "" : " on the CPU"), st.gpu ? "gpu" : "cpu", op, "C++", "", "", {}, 0, false, {}, {}};
    r.n_override = size_for(op, st.gpu, 0);
    const std::string name = id, row_op = op;
    r.command = [=](std::size_t n, const std::string& sizes, const fs::path& root) {
      return "exec " + cache_env(root, row_op) + " " + child("array-child", n, sizes) + " --label " + name + " --on " +
             on;
    };
    rows.push_back(r);
  }
  if (st.python_list.is_object()) {
    for (const auto& pr : st.python_list["rows"]) {
      const std::string device = pr.value("device", "");
      if (device != (st.gpu ? "gpu" : "cpu")) continue;
      if (sweep && is_checked_op(pr.value("op", "add"))) continue;
      Row r{pr.value("id", ""),
            pr.value("label", ""),
            device,
            pr.value("op", "add"),
            "Python",
            "",
            "",
            {},
            0,
            false,
            {},
            {}};
      const std::string base = shell_quote(st.python) + " " + shell_quote(st.python_rows.string()) + " run --row " +
                               shell_quote(r.id) + " --threads " + std::to_string(st.threads) +
                               (st.kernel_file.empty() ? "" : " --kernel-file " + shell_quote(st.kernel_file.string()));
      r.n_override = size_for(r.op, st.gpu, 0);
      const std::string op = r.op;
      r.command = [=](std::size_t n, const std::string& sizes, const fs::path& root) {
        // --data is appended by the caller, which owns the data folder.
        return "exec " + cache_env(root, op) + " " + base + " --n " + std::to_string(n) +
               (sizes.empty() ? "" : " --sizes " + sizes) + " --cache-root " + shell_quote(root.string());
      };
      rows.push_back(r);
    }
  }
  std::vector<Row> kept;
  for (auto& r : rows)
    if (wanted(args, r.id)) kept.push_back(std::move(r));
  // A row named in --only that is not here is listed, skipped, with the reason.
  for (const std::string& id : split_ids(args.only)) {
    bool found = st.gpu && !sweep && (id == "raw-in-process" || id == "xp-in-process");
    for (const auto& r : kept) found = found || r.id == id;
    if (found) continue;
    Row r{id, id, st.gpu ? "gpu" : "cpu", "add", "C++", "", "", {}, 0, false, {}, {}};
    r.skipped = why_not_here(st, id, sweep, r.op);
    if (r.skipped == "no such row") throw xp::ValueError("--only " + id + ": no such row (the ids are the JSON's)");
    kept.push_back(r);
  }
  return kept;
}

std::string command_for(const Row& r, std::size_t n, const std::string& sizes, const fs::path& root,
                        const fs::path& data) {
  std::string c = r.command(n, sizes, root);
  if (r.source == "Python") c += " --data " + shell_quote(data.string());
  return c;
}

bool any_python(const std::vector<Row>& rows) {
  for (const auto& r : rows)
    if (r.source == "Python" && r.skipped.empty()) return true;
  return false;
}

void write_floats(const fs::path& file, const std::vector<float>& v) {
  std::ofstream f(file, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  if (!f) throw std::runtime_error("cannot write " + file.string());
}

// sum.f32 (n floats of bn::sum_input) and sum.json: the float64 reference and the bound.
void write_sum_data(const fs::path& dir, std::size_t n) {
  std::vector<float> a(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = bn::sum_input(i);
  const bn::SumReference ref = bn::reference_sum(a.data(), n);
  write_floats(dir / "sum.f32", a);
  write_json((dir / "sum.json").string(), json{{"n", n},
                                               {"sum", ref.sum},
                                               {"abs_sum", ref.abs_sum},
                                               {"bound", bn::kSumRelBound * ref.abs_sum},
                                               {"bound_rel", bn::kSumRelBound}});
}

// OP_a.f32 and OP_b.f32 (m x m float32, row-major, small integers: the float16 rows convert them,
// exactly) and OP.json: the sampled entries [i, j, reference, bound]. The TF32 rows read the float32
// rows' inputs (matmul-f32_a.f32, matmul-f32_b.f32, written once) and have their own bounds.
void write_matmul_data(const fs::path& dir, const std::string& op, std::size_t m) {
  const bool half = op == "matmul-f16", tf32 = op == "matmul-tf32";
  const std::string data_op = tf32 ? "matmul-f32" : op;
  std::vector<float> a(m * m), b(m * m);
  for (std::size_t i = 0; i < m * m; ++i) {
    a[i] = bn::matmul_input(half, 0, i);
    b[i] = bn::matmul_input(half, 1, i);
  }
  json samples = json::array();
  for (const auto& e :
       bn::matmul_samples(a.data(), b.data(), static_cast<std::int64_t>(m), half, bn::kMatmulSamples, tf32))
    samples.push_back({e.i, e.j, e.ref, e.bound});
  if (!fs::exists(dir / (data_op + "_a.f32")) || !fs::exists(dir / (data_op + "_b.f32"))) {
    write_floats(dir / (data_op + "_a.f32"), a);
    write_floats(dir / (data_op + "_b.f32"), b);
  }
  write_json((dir / (op + ".json")).string(),
             json{{"m", m}, {"dtype", half ? "float16" : "float32"}, {"samples", samples}});
}

void write_python_data(const fs::path& dir, const std::vector<Row>& rows, std::size_t n, bool gpu) {
  std::set<std::string> ops;
  for (const auto& r : rows)
    if (r.source == "Python" && r.skipped.empty()) ops.insert(r.op);
  bool elementwise = false;
  for (const auto& op : ops) elementwise = elementwise || !is_checked_op(op);
  if (elementwise) write_data_files(dir, ArrayHostData(std::max<std::size_t>(n, bn::kHostN)));
  if (ops.count("sum") != 0) write_sum_data(dir, size_for("sum", gpu, n));
  for (const char* op : {"matmul-f32", "matmul-f16", "matmul-tf32"})
    if (ops.count(op) != 0) write_matmul_data(dir, op, size_for(op, gpu, n));
}

void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

int parent(const BenchLaunchArgs& args) {
  check_outputs(args);
  Setup st = make_setup(args);
  const auto n = static_cast<std::size_t>(args.n != 0 ? args.n : (st.gpu ? 134217728LL : 16777216LL));
  json doc;
  doc["schema"] = "xp.bench.launch/3";  // 3: the sum and matmul rows, with "check" for "bits"
  doc["n"] = n;
  doc["sum_n"] = size_for("sum", st.gpu, n);
  doc["matmul_n"] = size_for("matmul-f32", st.gpu, n);
  doc["runs"] = args.runs;
  doc["mode"] = st.gpu ? "gpu" : "cpu";
  Report out;
  print_header(out, st, "launch", n, args.runs, doc);

  std::vector<Row> rows = make_rows(args, st, false);
  Row raw_parent{
      "raw-in-process", "raw driver API + NVRTC, in this process", "gpu", "add", "C++", "", "", {}, 0, true, {}, {}};
  Row xp_hit{"xp-in-process", "xp, in-process hit (2nd Program)", "gpu", "add", "C++", "", "", {}, 0, true, {}, {}};
  const bool in_process = st.gpu && wanted(args, "raw-in-process");
  const bool xp_in_process = st.gpu && wanted(args, "xp-in-process");

  // The Python rows' inputs and references, written once.
  std::optional<TempDir> data;
  if (any_python(rows)) {
    data.emplace("xp-bench-data-");
    write_python_data(data->path, rows, n, st.gpu);
  }

  std::optional<HostData> h;
  std::optional<xp::Buffer> a, b, c;
  std::optional<xp::Program> primer;
  if (st.gpu) {
    if (static_cast<double>(n) * sizeof(float) < 2.0 * xp::gpu_info(*st.dev).l2_cache_bytes)
      out("note: a buffer of %.1f MiB is not far past the L2: steady state is not DRAM bandwidth\n\n",
          static_cast<double>(n) * 4 / (1 << 20));
    // One set of buffers for the parent's rows; a primer Program fills xp's in-process cache and
    // takes the GPU out of its idle clocks before the first row.
    h.emplace(n);
    a = upload(*st.dev, h->a.get(), n);
    b = upload(*st.dev, h->b.get(), n);
    c.emplace(*st.dev, n * sizeof(float));
    xp::synchronize(*st.dev);
    primer.emplace(st.source, program_options());
    XpOps warm(*st.dev, *a, *b, *c, n);
    warm.set_kernel(primer->kernel(kKernelName, *st.dev));
    for (int i = 0; i < 20; ++i) warm.launch_big();
    warm.sync();
  }
  const RawSetup setup{st.driver_path, st.nvrtc_path, st.includes, st.arch};

  const StopSignals stop;  // from here on a signal ends the runs, not the process
  int runs_done = 0;
  for (int run = 0; run < args.runs && !StopSignals::stopped(); ++run) {
    std::fprintf(stderr, "run %d/%d:", run + 1, args.runs);
    for (Row& r : rows) {
      if (!r.skipped.empty() || StopSignals::stopped()) continue;
      std::fprintf(stderr, " %s", r.id.c_str());
      const std::size_t rn = r.n_override != 0 ? r.n_override : n;
      const TempDir root("xp-bench-cache-");
      for (Samples* ss : {&r.first, &r.second}) {
        if (StopSignals::stopped()) break;
        json s = run_child(r.id, command_for(r, rn, "", root.path, data ? data->path : fs::path()), rn);
        if (StopSignals::stopped()) break;  // the child in flight was stopped too: its sample is dropped
        if (r.id == "xp" || r.id == "xp-4M") {
          const std::string want = (root.path / "xp").string();
          if (flag(s, "ok") && text_of(s, "cache_folder") != want) {
            s["ok"] = false;
            s["error"] = "the child used the cache folder " + text_of(s, "cache_folder") + ", not " + want;
          } else if (flag(s, "ok") && !flag(s, "cache_usable")) {
            s["ok"] = false;
            s["error"] = "xp's disk cache is disabled in the child: " + text_of(s, "cache_problem");
          }
        }
        ss->push_back(s);
      }
    }
    if (in_process && !StopSignals::stopped()) {
      std::fprintf(stderr, " raw-in-process");
      json rs = new_sample("raw-in-process", n);
      try {
        const raw::Driver& d = raw::driver(setup.driver_path);
        const raw::Nvrtc& nv = raw::nvrtc(setup.nvrtc_path);
        raw::Context ctx(d, st.dev->index());
        RawOps ops(d, a->address(), b->address(), c->address(), n);
        raw_row(ops, nv, st.source, setup, *h, rs);
        rs["ok"] = true;
      } catch (const std::exception& e) {
        rs["error"] = e.what();
      }
      raw_parent.first.push_back(rs);
    }
    if (xp_in_process && !StopSignals::stopped()) {
      std::fprintf(stderr, " xp-in-process");
      json xs = new_sample("xp-in-process", n);
      try {
        XpOps ops(*st.dev, *a, *b, *c, n);
        xp_row(ops, *st.dev, st.source, *a, *b, *c, *h, xs, kLookups);
        xs["ok"] = true;
      } catch (const std::exception& e) {
        xs["error"] = e.what();
      }
      xp_hit.first.push_back(xs);
    }
    std::fprintf(stderr, "\n");
    if (!StopSignals::stopped()) ++runs_done;
  }
  if (in_process) rows.push_back(std::move(raw_parent));
  if (xp_in_process) rows.push_back(std::move(xp_hit));
  const int stopped_by = StopSignals::stopped();
  const char* const stop_name = StopSignals::name();

  // ---- Report ----
  if (stopped_by != 0) {
    out("INTERRUPTED by %s during run %d of %d: the tables hold the %d complete run%s and the processes of run %d "
        "that finished before the signal (the one in flight is dropped). Medians and verdicts come from fewer runs "
        "than asked.\n\n",
        stop_name, runs_done + 1, args.runs, runs_done, runs_done == 1 ? "" : "s", runs_done + 1);
    doc["interrupted"] = {{"signal", stop_name}, {"during_run", runs_done + 1}, {"runs_completed", runs_done}};
  }
  out("%s\n\n", kCachesLine);
  out("### First process of each row (caches emptied)\n\n");
  print_table(out, rows, false, st.gpu, n);
  out("\n### Second process of each row (caches as the first process left them)\n\n");
  print_table(out, rows, true, st.gpu, n);
  if (stopped_by != 0)
    out("\nMedian (min..max) of the runs that finished (%d of %d complete, see INTERRUPTED above), each in a new "
        "process (in this process: the parent's own run, same buffers).\n",
        runs_done, args.runs);
  else
    out("\nMedian (min..max) of %d run%s, each in a new process (in this process: the parent's own run, same "
        "buffers).\n",
        args.runs, args.runs == 1 ? "" : "s");
  if (st.gpu) {
    out("build: NVRTC + cuModuleLoadData + cuModuleGetFunction (raw), Program() + kernel() (xp), each library's "
        "compile-and-load call (CuPy RawKernel.compile, cuda.core Program.compile + get_kernel, Numba cuda.jit with a "
        "signature, PyCUDA SourceModule with nvcc); \"in first call\": the library compiles inside the first call "
        "(xp's arrays, torch.compile); none: the library ships compiled kernels.\n"
        "first: the first call to its completion. mean: CUDA events on the launching stream around %d calls after %d "
        "warm-ups, divided by %d. host: %d back-to-back calls at n = %d timed with the host clock, then one "
        "synchronize.\n",
        bn::kTimed, bn::kWarmups, bn::kTimed, bn::kHostLaunches, bn::kHostN);
  } else {
    out("first: the first call. mean: the host clock around %d calls after %d warm-ups, divided by %d. host: %d "
        "calls at n = %d. NumPy runs elementwise loops on one thread; numexpr and xp get %d.\n",
        bn::kTimed, bn::kWarmups, bn::kTimed, bn::kHostLaunches, bn::kHostN, st.threads);
  }
  bool any_elementwise = false;
  for (const Row& r : rows) any_elementwise = any_elementwise || !is_checked_op(r.op);
  if (any_elementwise)
    out("bits: every output NaN-filled before the row runs (rows that allocate their result return a new array) and "
        "compared bit for bit with the CPU reference after the first call and after the timed calls; a*b+c rows are "
        "compared with a*b+c rounded twice, and, when that differs, with fmaf(a, b, c): the column says which "
        "matched.\n");
  bool any_sum = false, any_matmul = false;
  for (const Row& r : rows) {
    any_sum = any_sum || (r.op == "sum" && r.skipped.empty());
    any_matmul = any_matmul || (is_matmul_op(r.op) && r.skipped.empty());
  }
  if (any_sum)
    out("sum: xp::sum(a), cupy.sum(a), torch.sum(a) (numpy.sum(a) on the CPU) of n float32 in [1, 2) from the seed; "
        "each call returns a 0-d array left on the device: the timed calls are not read back (the clock measures the "
        "work), the value is read back after the first call and after the timed calls for the check. GB/s: 4 n bytes "
        "read / mean. check: |s - ref| <= %g sum|a| against the float64 sum (exact for this input), not bit for bit: "
        "each library adds in its own order (the bound's reasons: tools/xp/bench_launch.hpp).\n",
        bn::kSumRelBound);
  if (any_matmul)
    out("matmul: xp::matmul(A, B), A @ B in CuPy and PyTorch (NumPy on the CPU), a new C each call. TFLOP/s: 2 n^3 / "
        "mean. The inputs are small integers (float32: A in [-4095, 4095], B in {-1, 0, 1}; float16: both in [-8, 8]) "
        "so that a float32 accumulation is exact in any order: at %d entries (the corners, then random (i, j)) C "
        "must equal the float64 reference up to the output's rounding (2^-24 |ref|, float16: 2^-11 |ref|), which a "
        "TF32 product (A needs 12 significant bits) or a float16 accumulation would not; the TF32 rows (float32 "
        "inputs, TF32 permitted) are held to that bound plus inputs rounded to 11 significant bits, (2^-9 + 2^-20) "
        "sum|a b| (rounded to nearest or truncated; a float32 result passes too); \"= xp\": sampled entries equal "
        "to xp's of the same precision. Such regular inputs toggle fewer bits than random data: where a GPU runs at "
        "its power limit, every row's TFLOP/s can be a little above what random inputs give.\n",
        bn::kMatmulSamples);
  if (any_matmul && st.gpu)
    out("compute types: xp CUBLAS_COMPUTE_32F, reduced-precision reductions disallowed (docs/semantics.md); CuPy its "
        "default, CUBLAS_COMPUTE_32F for float32 (CUPY_TF32 unset) and float16, with the handle's reduced-precision "
        "reductions disallowed for float16 as xp's; PyTorch allow_tf32 = False and "
        "allow_fp16_reduced_precision_reduction = False. The TF32 rows: xp MatmulPrecision::tf32, CuPy CUPY_TF32=1, "
        "PyTorch allow_tf32 = True, each CUBLAS_COMPUTE_32F_FAST_TF32. NVIDIA_TF32_OVERRIDE is unset in these rows' "
        "processes.\n");
  for (const Row& r : rows) {
    std::string note;
    for (const Samples* ss : {&r.first, &r.second})
      for (const auto& s : *ss)
        if (note.empty() && !text_of(s, "note").empty()) note = text_of(s, "note");
    if (!note.empty()) out("- %s: %s\n", r.label.c_str(), note.c_str());
  }
  const json versions = versions_of(rows);
  doc["versions"] = versions;
  print_versions(out, versions);
  out("\n");
  json ratio_json = json::array();
  print_ratios(out, ratios_of(rows, st.gpu, n), runs_done, ratio_json);

  bool bad = false;
  json rows_json = json::array();
  for (const Row& r : rows) {
    rows_json.push_back(row_json(r));
    if (!r.skipped.empty()) continue;
    for (const auto& [which, samples] : {std::pair<const char*, const Samples*>{"first process", &r.first},
                                         std::pair<const char*, const Samples*>{"second process", &r.second}}) {
      if (!failed(*samples)) continue;
      bad = true;
      for (std::size_t i = 0; i < samples->size(); ++i) {
        const json& s = (*samples)[i];
        if (!flag(s, "ok"))
          out("\n%s, %s, run %zu: error: %s", r.id.c_str(), which, i + 1, text_of(s, "error").c_str());
        else if (!passed(s))
          out("\n%s, %s, run %zu: %s: %s", r.id.c_str(), which, i + 1,
              is_checked_op(r.op) ? "out of bound" : "bits differ", text_of(s, "mismatch").c_str());
      }
    }
  }
  if (bad) out("\n");
  doc["caches"] = kCachesLine;
  doc["rows"] = rows_json;
  doc["ratios"] = ratio_json;
  if (!args.md_file.empty()) {
    write_text(args.md_file, out.text);
    std::printf("\nwrote %s\n", args.md_file.c_str());
  }
  if (!args.json_file.empty()) {
    write_json(args.json_file, doc);
    std::printf("wrote %s\n", args.json_file.c_str());
  }
  if (stopped_by != 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "xp bench launch: interrupted by %s; the report covers %d complete run%s\n", stop_name,
                 runs_done, runs_done == 1 ? "" : "s");
    return 128 + stopped_by;
  }
  return bad ? 1 : 0;
}

}  // namespace launch

using namespace launch;

int bench_launch(const BenchLaunchArgs& args) {
  if (args.n < 0 || args.n > INT_MAX) throw xp::ValueError("--n must be in [1, " + std::to_string(INT_MAX) + "]");
  if (args.runs < 1) throw xp::ValueError("--runs must be at least 1");
  try {
    if (!args.row.empty() && args.n == 0 && args.sizes.empty()) throw xp::ValueError("a child row needs --n");
    if (args.row == "raw-child") return raw_child(args);
    if (args.row == "xp-child") return xp_child(args);
    if (args.row == "array-child") return array_child(args);
    if (args.row == "raw-first-child") return raw_first_child(args);
    if (!args.row.empty())
      throw xp::ValueError("--row " + args.row + ": expected raw-child, xp-child, array-child or raw-first-child");
    return parent(args);
  } catch (const xp::Error&) {
    throw;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xp bench launch: %s\n", e.what());
    return 1;
  }
}

int bench_sweep(const BenchLaunchArgs& args) {
  try {
    return sweep(args);
  } catch (const xp::Error&) {
    throw;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xp bench sweep: %s\n", e.what());
    return 1;
  }
}

}  // namespace xp_cli
