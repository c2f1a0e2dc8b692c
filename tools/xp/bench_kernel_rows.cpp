// `xp bench launch`: one row's launches through the raw driver or xp, and the raw and xp child
// processes (bench_launch_parts.hpp).
#include "bench_launch_parts.hpp"

namespace xp_cli::launch {

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>((n + bn::kBlock - 1) / bn::kBlock);
}

xp::Buffer upload(const xp::Device& dev, const float* host, std::size_t n) {
  xp::Buffer buf(dev, n * sizeof(float));
  buf.copy_from_host(host, n * sizeof(float));
  return buf;
}

bool flag(const json& s, const char* key) {
  const auto it = s.find(key);
  return it != s.end() && it->is_boolean() && it->get<bool>();
}

std::string text_of(const json& s, const char* key) {
  const auto it = s.find(key);
  return it != s.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json new_sample(const std::string& row, std::size_t n) {
  json s;
  s["row"] = row;
  s["ok"] = false;
  s["error"] = nullptr;
  s["n"] = n;
  for (const char* k :
       {"build_ms", "first_ms", "total_ms", "steady_ms", "gbps", "host_us", "bits_ok", "first_mismatch", "mismatch"})
    s[k] = nullptr;
  return s;
}

void check_output(json& s, const HostData& h, const char* stage) {
  const long long i = bn::first_difference(h.out.get(), h.ref.get(), h.n);
  if (i < 0) {
    if (s["bits_ok"].is_null()) s["bits_ok"] = true;
    return;
  }
  if (s["bits_ok"].is_boolean()) return;  // a mismatch is already recorded
  const auto at = static_cast<std::size_t>(i);
  char text[200];
  std::snprintf(text, sizeof text, "after the %s, index %lld holds 0x%08x, the reference 0x%08x", stage, i,
                bn::float_bits(h.out[at]), bn::float_bits(h.ref[at]));
  s["bits_ok"] = false;
  s["first_mismatch"] = i;
  s["mismatch"] = text;
}

// After the first launch: NaN-fill, 3 warm-ups, 10 launches between events on the launching
// stream, then host cost per launch at n = 1024, then the bit check.
template <class Ops>
void steady_and_host(Ops& ops, HostData& h, json& s) {
  ops.fill_nan();
  for (int i = 0; i < bn::kWarmups; ++i) ops.launch_big();
  ops.record_start();
  for (int i = 0; i < bn::kTimed; ++i) ops.launch_big();
  ops.record_stop();
  const double steady = ops.elapsed_ms() / bn::kTimed;
  s["steady_ms"] = steady;
  s["gbps"] = bn::kBytesPerElement * static_cast<double>(h.n) / (steady * 1e-3) / 1e9;
  for (int i = 0; i < bn::kHostWarmups; ++i) ops.launch_small();
  ops.sync();
  const auto t0 = Clock::now();
  for (int i = 0; i < bn::kHostLaunches; ++i) ops.launch_small();
  const auto t1 = Clock::now();
  ops.sync();
  s["host_us"] = ms_between(t0, t1) * 1e3 / bn::kHostLaunches;
  ops.read_output(h.out.get());
  check_output(s, h, "timed launches");
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > INT_MAX)
      throw xp::ValueError("--sizes: '" + item + "' is not a size in [1, " + std::to_string(INT_MAX) + "]");
    sizes.push_back(static_cast<std::size_t>(v));
    pos = comma + 1;
  }
  return sizes;
}

std::size_t max_size(std::size_t n, const std::vector<std::size_t>& sizes) {
  for (std::size_t s : sizes) n = std::max(n, s);
  return n;
}

json sweep_point(std::size_t n, double steady_ms, double bytes_per_element, long long mismatch,
                 const std::string& text) {
  json p;
  p["n"] = n;
  p["steady_ms"] = steady_ms;
  p["gbps"] = bytes_per_element * static_cast<double>(n) / (steady_ms * 1e-3) / 1e9;
  p["bits_ok"] = mismatch < 0;
  p["first_mismatch"] = mismatch < 0 ? json(nullptr) : json(mismatch);
  p["mismatch"] = text.empty() ? json(nullptr) : json(text);
  return p;
}

void print_progress(std::size_t k, std::size_t m) {
  std::printf("#progress %zu/%zu\n", k, m);
  std::fflush(stdout);
}

// Fills s["sweep"] (and bits_ok, the first mismatch) for a kernel row.
template <class Ops>
void sweep_kernel(Ops& ops, HostData& h, const std::vector<std::size_t>& sizes, json& s) {
  json points = json::array();
  s["bits_ok"] = true;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::size_t n = sizes[k];
    ops.fill_nan();
    for (int i = 0; i < bn::kWarmups; ++i) ops.launch_n(n);
    ops.record_start();
    for (int i = 0; i < bn::kTimed; ++i) ops.launch_n(n);
    ops.record_stop();
    const double ms = ops.elapsed_ms() / bn::kTimed;
    ops.read_output(h.out.get(), n);
    const long long bad = bn::first_difference(h.out.get(), h.ref.get(), n);
    std::string text;
    if (bad >= 0) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "n = %zu: index %lld holds 0x%08x, the reference 0x%08x", n, bad,
                    bn::float_bits(h.out[static_cast<std::size_t>(bad)]),
                    bn::float_bits(h.ref[static_cast<std::size_t>(bad)]));
      text = buf;
      if (flag(s, "bits_ok")) {
        s["bits_ok"] = false;
        s["first_mismatch"] = bad;
        s["mismatch"] = text;
      }
    }
    points.push_back(sweep_point(n, ms, bn::kBytesPerElement, bad, text));
    print_progress(k + 1, sizes.size());
  }
  s["sweep"] = points;
}

void raw_row(RawOps& ops, const raw::Nvrtc& nv, const std::string& source, const RawSetup& setup, HostData& h,
             json& s) {
  const std::vector<std::string> options = raw::options(setup.arch, setup.includes);
  s["nvrtc_options"] = options;
  ops.fill_nan();
  ops.build(nv, source, options, s);
  const auto t0 = Clock::now();
  ops.launch_big();
  const auto launched = Clock::now();
  ops.sync();
  const auto t1 = Clock::now();
  s["first_ms"] = ms_between(t0, t1);
  s["launch_call_ms"] = ms_between(t0, launched);
  s["to_launch_ms"] = s["build_ms"].get<double>() + ms_between(t0, launched);
  s["total_ms"] = s["build_ms"].get<double>() + ms_between(t0, t1);
  ops.read_output(h.out.get());
  check_output(s, h, "first launch");
  steady_and_host(ops, h, s);
}

xp::ProgramOptions program_options() {
  xp::ProgramOptions o;
  o.name = kProgramName;
  return o;
}

void xp_row(XpOps& ops, const xp::Device& dev, const std::string& source, const xp::Buffer& a, const xp::Buffer& b,
            const xp::Buffer& c, HostData& h, json& s, int lookups) {
  ops.fill_nan();
  const auto t0 = Clock::now();
  xp::Program program(source, program_options());
  const auto t1 = Clock::now();
  const xp::Kernel kernel = program.kernel(kKernelName, dev);
  const auto t2 = Clock::now();
  kernel.launch(ops.big_config(), a, b, c, ops.n_big());
  const auto launched = Clock::now();
  ops.sync();
  const auto t3 = Clock::now();
  s["launch_call_ms"] = ms_between(t2, launched);
  s["to_launch_ms"] = ms_between(t0, launched);
  s["program_ms"] = ms_between(t0, t1);
  s["kernel_ms"] = ms_between(t1, t2);
  s["build_ms"] = ms_between(t0, t2);
  s["first_ms"] = ms_between(t2, t3);
  s["total_ms"] = ms_between(t0, t3);
  ops.read_output(h.out.get());
  check_output(s, h, "first launch");
  ops.set_kernel(kernel);
  steady_and_host(ops, h, s);
  if (lookups > 0) {
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    s["lookup_us"] = ms_between(t1, t2) * 1e3;  // once, caches as the first call finds them
    // The same lookup repeated: kernel() on yet another new Program each time (its construction
    // not timed), then on this Program again.
    std::vector<double> us(static_cast<std::size_t>(lookups));
    for (auto& u : us) {
      xp::Program another(source, program_options());
      const auto l0 = Clock::now();
      const xp::Kernel k = another.kernel(kKernelName, dev);
      u = ms_between(l0, Clock::now()) * 1e3;
    }
    s["new_program_lookup_us"] = median(us);
    for (auto& u : us) {
      const auto l0 = Clock::now();
      const xp::Kernel again = program.kernel(kKernelName, dev);
      u = ms_between(l0, Clock::now()) * 1e3;
    }
    s["relookup_us"] = median(us);
  }
}

void print_sample(const json& s) {
  std::printf("%s\n", s.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  std::fflush(stdout);
}

int raw_child(const BenchLaunchArgs& args) {
  const std::vector<std::size_t> sizes = args.sizes.empty() ? std::vector<std::size_t>{} : parse_sizes(args.sizes);
  const auto n = max_size(static_cast<std::size_t>(args.n), sizes);
  json s = new_sample("raw", n);
  try {
    const std::string source = read_snippet(args.kernel_file);
    RawSetup setup{args.driver_path, args.nvrtc_path, args.nvrtc_includes, args.arch};
    const raw::Driver& d = raw::driver(setup.driver_path);
    const raw::Nvrtc& nv = raw::nvrtc(setup.nvrtc_path);
    int major = 0, minor = 0;
    if (nv.nvrtcVersion(&major, &minor) == 0) s["nvrtc_version"] = std::to_string(major) + "." + std::to_string(minor);
    raw::Context ctx(d, args.device);
    HostData h(n);
    raw::Buffers buf(d, n * sizeof(float));
    raw::check(d, d.cuMemcpyHtoD(buf.p[0], h.a.get(), n * sizeof(float)), "cuMemcpyHtoD");
    raw::check(d, d.cuMemcpyHtoD(buf.p[1], h.b.get(), n * sizeof(float)), "cuMemcpyHtoD");
    raw::check(d, d.cuCtxSynchronize(), "cuCtxSynchronize");
    RawOps ops(d, buf.p[0], buf.p[1], buf.p[2], n);
    if (sizes.empty()) {
      raw_row(ops, nv, source, setup, h, s);
    } else {
      ops.build(nv, source, raw::options(setup.arch, setup.includes), s);
      sweep_kernel(ops, h, sizes, s);
    }
    s["ok"] = true;
  } catch (const std::exception& e) {
    s["error"] = e.what();
  }
  print_sample(s);
  return flag(s, "ok") ? 0 : 1;
}

int xp_child(const BenchLaunchArgs& args) {
  const std::vector<std::size_t> sizes = args.sizes.empty() ? std::vector<std::size_t>{} : parse_sizes(args.sizes);
  const auto n = max_size(static_cast<std::size_t>(args.n), sizes);
  json s = new_sample(args.label.empty() ? "xp" : args.label, n);
  try {
    const std::string source = read_snippet(args.kernel_file);
    const xp::Device dev = xp::default_device();
    if (!dev.is_cuda()) throw std::runtime_error("xp's default device is " + dev.str() + ", not a GPU");
    dev.activate();
    const xp::CompilerInfo ci = xp::compiler_info();  // NVRTC loaded before the clock starts, as in the raw child
    if (!ci.available) throw std::runtime_error("no NVRTC: " + ci.error);
    HostData h(n);
    const xp::Buffer a = upload(dev, h.a.get(), n);
    const xp::Buffer b = upload(dev, h.b.get(), n);
    const xp::Buffer c(dev, n * sizeof(float));
    xp::synchronize(dev);
    XpOps ops(dev, a, b, c, n);
    if (sizes.empty()) {
      xp_row(ops, dev, source, a, b, c, h, s, 0);
    } else {
      const auto t0 = Clock::now();
      xp::Program program(source, program_options());
      ops.set_kernel(program.kernel(kKernelName, dev));
      s["build_ms"] = ms_between(t0, Clock::now());
      sweep_kernel(ops, h, sizes, s);
    }
    const xp::KernelCacheInfo cache = xp::kernel_cache_info();  // after the clock: is the entry there?
    s["cache_folder"] = cache.folder;
    s["cache_usable"] = cache.usable;
    s["cache_entries"] = cache.entries;
    s["cache_problem"] = cache.problem;
    s["ok"] = true;
  } catch (const std::exception& e) {
    s["error"] = e.what();
  }
  print_sample(s);
  return flag(s, "ok") ? 0 : 1;
}

}  // namespace xp_cli::launch
