// `xp bench sweep` (bench_launch.hpp, bench_launch_parts.hpp).
#include "bench_launch_parts.hpp"

namespace xp_cli::launch {

// ---- xp bench sweep --------------------------------------------------------------------------------
std::uint64_t host_memory_available() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

class ProgressBar {
 public:
  explicit ProgressBar(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) != 0) {}
  void update(std::size_t done, const std::string& what) {
    if (!tty_ || total_ == 0) return;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * done / total_);
    std::fprintf(stderr, "\r[%s%s] %3zu%% %-40.40s", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(), 100 * done / total_,
                 what.c_str());
    std::fflush(stderr);
  }
  void finish() {
    if (tty_) std::fprintf(stderr, "\r%80s\r", "");
  }

 private:
  std::size_t total_;
  bool tty_;
};

int sweep(const BenchLaunchArgs& args) {
  if (args.min_log2 < 0 || args.max_log2 > 30 || args.min_log2 > args.max_log2)
    throw xp::ValueError("--min-log2 and --max-log2: need 0 <= min <= max <= 30");
  check_outputs(args);
  Setup st = make_setup(args);
  // Memory: the largest row holds four buffers of n floats on the device (a, b, c and the result,
  // and a new result per call for the rows that allocate), and the host up to ten (the data files'
  // six arrays in the Python rows, or the C++ rows' inputs, references and read-back copy).
  const std::uint64_t host_free = host_memory_available();
  std::uint64_t cap = ~std::uint64_t{0};
  std::string cap_why;
  if (host_free > 0) cap = host_free / 2 / (10 * 4), cap_why = "half the available host memory";
  if (st.gpu) {
    const xp::GpuInfo g = xp::gpu_info(*st.dev);
    if (g.memory_free) {
      const std::uint64_t gcap = *g.memory_free * 8 / 10 / (6 * 4);
      if (gcap < cap) cap = gcap, cap_why = "80% of the GPU's free memory";
    }
  }
  std::vector<std::size_t> sizes;
  int capped_at = -1;
  for (int k = args.min_log2; k <= args.max_log2; ++k) {
    const std::size_t n = std::size_t{1} << k;
    if (n > cap || n > static_cast<std::size_t>(INT_MAX)) {
      capped_at = k;
      break;
    }
    sizes.push_back(n);
  }
  if (sizes.empty()) throw std::runtime_error("no size fits in memory (" + cap_why + ")");
  std::string size_list;
  for (std::size_t s : sizes) size_list += (size_list.empty() ? "" : ",") + std::to_string(s);
  const std::size_t n_max = sizes.back();

  json doc;
  doc["schema"] = "xp.bench.sweep/1";
  doc["mode"] = st.gpu ? "gpu" : "cpu";
  doc["sizes"] = sizes;
  Report out;
  print_header(out, st, "sweep", n_max, 1, doc);
  out("sizes: 2^%d .. 2^%d", args.min_log2, args.min_log2 + static_cast<int>(sizes.size()) - 1);
  if (capped_at >= 0) out(" (2^%d and up left out: more than %s)", capped_at, cap_why.c_str());
  out("; at each size 3 warm-ups, then %d calls timed %s; every output checked bit for bit.\n\n", bn::kTimed,
      st.gpu ? "with CUDA events on the launching stream" : "with the host clock");

  std::vector<Row> rows = make_rows(args, st, true);
  std::optional<TempDir> data;
  if (any_python(rows)) {
    data.emplace("xp-bench-data-");
    write_python_data(data->path, rows, n_max, st.gpu);
  }
  const StopSignals stop;  // from here on a signal ends the rows, not the process
  std::size_t runnable = 0;
  for (const Row& r : rows) runnable += r.skipped.empty() ? 1 : 0;
  ProgressBar bar(runnable * sizes.size());
  std::size_t done_rows = 0;
  std::vector<plot::Series> series;
  json rows_json = json::array();
  bool bad = false;
  for (Row& r : rows) {
    json rj = {{"id", r.id}, {"label", r.label}, {"device", r.device}, {"op", r.op}, {"source", r.source}};
    if (!r.skipped.empty()) {
      rj["skipped"] = r.skipped;
      rows_json.push_back(rj);
      continue;
    }
    if (StopSignals::stopped()) {
      r.skipped = "not run: interrupted before it";
      rj["skipped"] = r.skipped;
      rows_json.push_back(rj);
      continue;
    }
    const TempDir root("xp-bench-cache-");
    bar.update(done_rows * sizes.size(), r.id);
    json s = run_child(r.id, command_for(r, n_max, size_list, root.path, data ? data->path : fs::path()), n_max,
                       [&](std::size_t k, std::size_t) {
                         bar.update(done_rows * sizes.size() + k,
                                    r.id + " n=" + std::to_string(sizes[std::min(k, sizes.size()) - 1]));
                       });
    ++done_rows;
    if (StopSignals::stopped()) {  // the child was stopped too: its sample is dropped
      r.skipped = "interrupted while it ran";
      rj["skipped"] = r.skipped;
      rows_json.push_back(rj);
      continue;
    }
    r.first.push_back(s);
    rj["skipped"] = text_of(s, "skipped").empty() ? json(nullptr) : json(text_of(s, "skipped"));
    rj["sample"] = s;
    plot::Series ser{r.id, r.label + (r.source == "Python" ? " [Python]" : ""), {}};
    if (flag(s, "ok") && s.contains("sweep")) {
      for (const auto& p : s["sweep"])
        ser.points.push_back(
            {p.value("n", 0.0), p.value("steady_ms", 0.0), p.value("gbps", 0.0), p.value("bits_ok", false)});
      rj["overhead_threshold_n"] = plot::overhead_threshold(ser);
      series.push_back(ser);
    }
    if (failed(r.first)) bad = true;
    rows_json.push_back(rj);
  }
  bar.finish();
  const int stopped_by = StopSignals::stopped();
  const char* const stop_name = StopSignals::name();
  if (stopped_by != 0) {
    out("INTERRUPTED by %s: the rows that finished before it are below; the one it stopped and those after it "
        "are listed as skipped.\n\n",
        stop_name);
    doc["interrupted"] = {{"signal", stop_name}};
  }

  // The summary table: time per call at a few sizes, the best GB/s, the threshold.
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < sizes.size(); i += std::max<std::size_t>(1, sizes.size() / 5)) shown.push_back(i);
  if (shown.back() != sizes.size() - 1) shown.push_back(sizes.size() - 1);
  out("| row |");
  for (std::size_t i : shown) out(" ms at 2^%d |", args.min_log2 + static_cast<int>(i));
  out(" best GB/s | calls cost 2x the smallest from n = | bits |\n|---|");
  for (std::size_t i = 0; i < shown.size(); ++i) out("---:|");
  out("---:|---:|---|\n");
  for (const Row& r : rows) {
    std::string label = r.label + (r.source == "Python" ? " [Python]" : "");
    if (!r.skipped.empty() || r.first.empty()) {
      out("| %s |%s | | | skipped: %s |\n", label.c_str(), std::string(shown.size(), '|').c_str(), r.skipped.c_str());
      continue;
    }
    const json& s = r.first.front();
    out("| %s |", label.c_str());
    double best = 0;
    std::vector<double> ms(sizes.size(), -1);
    if (flag(s, "ok") && s.contains("sweep"))
      for (std::size_t i = 0; i < s["sweep"].size() && i < sizes.size(); ++i) {
        ms[i] = s["sweep"][i].value("steady_ms", -1.0);
        best = std::max(best, s["sweep"][i].value("gbps", 0.0));
      }
    for (std::size_t i : shown) out(" %s |", ms[i] > 0 ? number(ms[i]).c_str() : "");
    std::string threshold;
    for (const auto& ser : series)
      if (ser.id == r.id) {
        const double t = plot::overhead_threshold(ser);
        threshold = t > 0 ? "2^" + std::to_string(static_cast<int>(std::lround(std::log2(t)))) : "not reached";
      }
    out(" %s | %s | %s |\n", best > 0 ? number(best).c_str() : "", threshold.c_str(), bits_cell(r.first).c_str());
  }
  const json versions = versions_of(rows);
  doc["versions"] = versions;
  print_versions(out, versions);
  doc["rows"] = rows_json;
  const std::string title = std::string("xp bench sweep: ") + (st.gpu ? xp::gpu_info(*st.dev).name : "CPU rows") +
                            ", float32, time per call and GB/s against n";
  if (!args.json_file.empty()) {
    write_json(args.json_file, doc);
    std::printf("wrote %s\n", args.json_file.c_str());
  }
  if (!args.csv_file.empty()) {
    write_text(args.csv_file, plot::csv(series));
    std::printf("wrote %s\n", args.csv_file.c_str());
  }
  if (!args.svg_file.empty()) {
    write_text(args.svg_file, plot::svg(series, title));
    std::printf("wrote %s\n", args.svg_file.c_str());
  }
  if (!args.md_file.empty()) {
    write_text(args.md_file, out.text);
    std::printf("wrote %s\n", args.md_file.c_str());
  }
  if (stopped_by != 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "xp bench sweep: interrupted by %s\n", stop_name);
    return 128 + stopped_by;
  }
  return bad ? 1 : 0;
}

}  // namespace xp_cli::launch
