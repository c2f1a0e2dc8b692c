// `xp bench launch`: the array rows (xp::Array on the GPU or the CPU; sum and matmul checked within a
// bound) and their child processes, and the bare driver's first c = a + b of a process
// (bench_launch_parts.hpp).
#include "bench_launch_parts.hpp"

namespace xp_cli::launch {

void write_data_files(const fs::path& dir, const ArrayHostData& h) {
  const std::pair<const char*, const std::vector<float>*> files[] = {{"a.f32", &h.a},
                                                                     {"b.f32", &h.b},
                                                                     {"c.f32", &h.c},
                                                                     {"add.f32", &h.add},
                                                                     {"fma_separate.f32", &h.fma_separate},
                                                                     {"fma_fused.f32", &h.fma_fused}};
  for (const auto& [name, v] : files) {
    std::ofstream f(dir / name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(v->data()), static_cast<std::streamsize>(v->size() * sizeof(float)));
    if (!f) throw std::runtime_error("cannot write " + (dir / name).string());
  }
}

unsigned first_add_grid(std::size_t n) {
  return static_cast<unsigned>(std::max<std::size_t>(1, (n / 4 + bn::kBlock - 1) / bn::kBlock));
}

// A cubin this benchmark wrote: a regular file of at most 64 MiB (the vector_add cubin is a few KiB);
// anything else is refused before its claimed size is allocated.
std::vector<char> read_bytes(const fs::path& path) {
  constexpr std::streamoff kMaxBytes = std::streamoff{64} << 20;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw std::runtime_error(path.string() + " is not a regular file");
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw std::runtime_error("cannot read " + path.string());
  const std::streamoff size = f.tellg();
  if (size < 0 || size > kMaxBytes)
    throw std::runtime_error(path.string() + " is " + std::to_string(size) +
                             " bytes, not a cubin of this benchmark (at most 64 MiB): delete it");
  std::vector<char> bytes(static_cast<std::size_t>(size));
  f.seekg(0);
  if (!f.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw std::runtime_error("cannot read " + path.string());
  return bytes;
}

// Written under a temporary name and renamed: a reader never sees half a file.
void write_bytes_atomically(const fs::path& path, const std::vector<char>& bytes) {
  fs::create_directories(path.parent_path());
  const fs::path tmp = path.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

int raw_first_child(const BenchLaunchArgs& args) {
  const auto n = static_cast<std::size_t>(args.n);
  json s = new_sample("raw-first", n);
  try {
    if (!args.sizes.empty()) throw xp::ValueError("the raw-first row runs at one size, not a sweep");
    if (args.cubin_dir.empty()) throw xp::ValueError("the raw-first row needs --cubin-dir");
    const raw::Driver& d = raw::driver(args.driver_path);
    raw::Context ctx(d, args.device);
    // As the xp-add child before its clock: the same host data, then a, b, c and a NaN-filled
    // buffer uploaded from it and one more buffer, all on the device.
    const ArrayHostData h(n);
    const std::size_t bytes = n * sizeof(float);
    raw::Buffers in(d, bytes, 5);  // a, b, c, the NaN fill, an output (add(out=)'s in the xp child)
    raw::check(d, d.cuMemcpyHtoD(in.p[0], h.a.data(), bytes), "cuMemcpyHtoD");
    raw::check(d, d.cuMemcpyHtoD(in.p[1], h.b.data(), bytes), "cuMemcpyHtoD");
    raw::check(d, d.cuMemcpyHtoD(in.p[2], h.c.data(), bytes), "cuMemcpyHtoD");
    {
      const std::vector<std::uint32_t> nan(n, 0xFFFFFFFFu);
      raw::check(d, d.cuMemcpyHtoD(in.p[3], nan.data(), bytes), "cuMemcpyHtoD");
    }
    raw::CUstream stream = nullptr;
    raw::check(d, d.cuStreamCreate(&stream, raw::kStreamNonBlocking), "cuStreamCreate");
    raw::check(d, d.cuCtxSynchronize(), "cuCtxSynchronize");
    const fs::path file =
        fs::path(args.cubin_dir) / (std::string(kFirstAddName) + "_sm" + std::to_string(args.arch) + ".cubin");
    const bool from_file = is_file(file);
    s["cubin_from_file"] = from_file;
    if (!from_file) (void)raw::nvrtc(args.nvrtc_path);  // loaded before the clock, as xp's is

    const auto t0 = Clock::now();
    raw::CUdeviceptr c = 0;
    raw::check(d, d.cuMemAlloc(&c, bytes), "cuMemAlloc");
    const auto t_alloc = Clock::now();
    std::vector<char> cubin;
    if (from_file) {
      cubin = read_bytes(file);
    } else {
      cubin = raw::compile(raw::nvrtc(args.nvrtc_path), kFirstAddSource, raw::options(args.arch, {}));
      write_bytes_atomically(file, cubin);
    }
    const auto t_cubin = Clock::now();
    raw::CUmodule module = nullptr;
    raw::check(d, d.cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
    raw::CUfunction function = nullptr;
    raw::check(d, d.cuModuleGetFunction(&function, module, kFirstAddName), "cuModuleGetFunction");
    const auto t_loaded = Clock::now();
    raw::CUdeviceptr pa = in.p[0], pb = in.p[1];
    unsigned long long count = n;
    void* params[] = {&pa, &pb, &c, &count};
    const unsigned grid = first_add_grid(n);
    auto launch = [&] {
      raw::check(d, d.cuLaunchKernel(function, grid, 1, 1, bn::kBlock, 1, 1, 0, stream, params, nullptr),
                 "cuLaunchKernel");
    };
    launch();
    const auto t_launched = Clock::now();
    raw::check(d, d.cuStreamSynchronize(stream), "cuStreamSynchronize");
    const auto t1 = Clock::now();
    s["first_ms"] = ms_between(t0, t1);
    s["total_ms"] = s["first_ms"];
    s["build_in_first_call"] = true;
    s["alloc_ms"] = ms_between(t0, t_alloc);
    s["cubin_ms"] = ms_between(t_alloc, t_cubin);
    s["load_ms"] = ms_between(t_cubin, t_loaded);
    s["launch_call_ms"] = ms_between(t_loaded, t_launched);
    s["run_and_sync_ms"] = ms_between(t_launched, t1);

    std::vector<float> out(n);
    auto check = [&](const char* stage) {
      raw::check(d, d.cuMemcpyDtoH(out.data(), c, bytes), "cuMemcpyDtoH");
      const long long bad = bn::first_difference(out.data(), h.add.data(), n);
      if (bad < 0) {
        if (s["bits_ok"].is_null()) s["bits_ok"] = true;
        return;
      }
      if (s["bits_ok"].is_boolean()) return;
      const auto i = static_cast<std::size_t>(bad);
      char text[200];
      std::snprintf(text, sizeof text, "after the %s, index %lld holds 0x%08x, the reference 0x%08x", stage, bad,
                    bn::float_bits(out[i]), bn::float_bits(h.add[i]));
      s["bits_ok"] = false;
      s["first_mismatch"] = bad;
      s["mismatch"] = text;
    };
    check("first call");
    // Steady state: NaN-filled, 3 warm-ups, 10 launches between two events on the stream.
    raw::check(d, d.cuMemsetD8(c, 0xFF, bytes), "cuMemsetD8");
    raw::check(d, d.cuCtxSynchronize(), "cuCtxSynchronize");
    raw::CUevent start = nullptr, stop = nullptr;
    raw::check(d, d.cuEventCreate(&start, raw::kEventDefault), "cuEventCreate");
    raw::check(d, d.cuEventCreate(&stop, raw::kEventDefault), "cuEventCreate");
    for (int i = 0; i < bn::kWarmups; ++i) launch();
    raw::check(d, d.cuEventRecord(start, stream), "cuEventRecord");
    for (int i = 0; i < bn::kTimed; ++i) launch();
    raw::check(d, d.cuEventRecord(stop, stream), "cuEventRecord");
    raw::check(d, d.cuEventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    raw::check(d, d.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    const double steady = ms / bn::kTimed;
    s["steady_ms"] = steady;
    s["gbps"] = bn::kBytesPerElement * static_cast<double>(n) / (steady * 1e-3) / 1e9;
    check("timed launches");
    d.cuEventDestroy(start);
    d.cuEventDestroy(stop);
    d.cuStreamDestroy(stream);
    d.cuModuleUnload(module);
    d.cuMemFree(c);
    s["ok"] = true;
  } catch (const std::exception& e) {
    s["error"] = e.what();
  }
  print_sample(s);
  return flag(s, "ok") ? 0 : 1;
}

// CUDA events on xp's stream of the device, or the host clock on the CPU.
class DeviceTimer {
 public:
  explicit DeviceTimer(const xp::Device& dev)
      : dev_(dev),
        start_(dev.is_cuda() ? std::optional<xp::Event>(xp::Event(dev)) : std::nullopt),
        stop_(dev.is_cuda() ? std::optional<xp::Event>(xp::Event(dev)) : std::nullopt) {}
  void sync() {
    if (dev_.is_cuda()) xp::Stream::default_for(dev_).synchronize();
  }
  void start() {
    if (start_) {
      start_->record(xp::Stream::default_for(dev_));
    } else {
      t0_ = Clock::now();
    }
  }
  double stop() {
    if (!stop_) return ms_between(t0_, Clock::now());
    stop_->record(xp::Stream::default_for(dev_));
    stop_->synchronize();
    return xp::Event::elapsed_ms(*start_, *stop_);
  }

 private:
  xp::Device dev_;
  std::optional<xp::Event> start_, stop_;
  Clock::time_point t0_;
};

// One array row in this process: "xp-add" (c = a + b, a new array each call), "xp-add-out"
// (add(a, b, out)) or "xp-fma" (d = a*b + c, fused into one pass, a new array each call).
class ArrayOps {
 public:
  ArrayOps(const std::string& kind, const xp::Device& dev, const ArrayHostData& h) : kind_(kind), h_(h), timer_(dev) {
    const xp::Shape shape{static_cast<std::int64_t>(h.n)};
    // The pointer form: g++ 13 warns (-Warray-bounds, a false positive) on the copy of a
    // one-element Shape into the vector form's std::optional<Shape>.
    a_ = xp::asarray(h.a.data(), xp::DType::float32, shape, dev);
    b_ = xp::asarray(h.b.data(), xp::DType::float32, shape, dev);
    c_ = xp::asarray(h.c.data(), xp::DType::float32, shape, dev);
    out_ = xp::empty(shape, xp::DType::float32, dev);
    std::vector<std::uint32_t> nan(h.n, 0xFFFFFFFFu);
    nan_ = xp::asarray(nan.data(), xp::DType::float32, shape, dev);
    sync();
  }
  bool fma() const { return kind_ == "xp-fma"; }
  double bytes_per_element() const { return fma() ? 16 : 12; }
  void prepare(std::size_t n) {
    if (views_.count(n) != 0) return;
    const auto head = [n](const xp::Array& x) { return x.slice({xp::Slice(0, static_cast<std::int64_t>(n))}); };
    views_[n] = {head(a_), head(b_), head(c_), head(out_), head(nan_)};
  }
  // Only add(out=) writes into out_; the other rows return a new array (last_, dropped here). So
  // their first call is the process's first kernel, with its module load inside the clock unless
  // xp's preload (XP_PRELOAD_KERNELS) loaded it while the inputs were made.
  void fill_nan(std::size_t n) {
    prepare(n);
    if (kind_ == "xp-add-out") xp::copyto(views_[n][3], views_[n][4]);
    last_ = xp::Array();
    sync();
  }
  void call(std::size_t n) {
    const auto& v = views_[n];
    if (kind_ == "xp-add-out") {
      xp::add(v[0], v[1], v[3]);
    } else if (kind_ == "xp-add") {
      last_ = v[0] + v[1];
      last_.eval();
    } else {
      last_ = v[0] * v[1] + v[2];
      last_.eval();
    }
  }
  void sync() { timer_.sync(); }
  void start() { timer_.start(); }
  double stop() { return timer_.stop(); }
  // The first mismatch against the reference (or -1) and the rounding it matched.
  long long check(std::size_t n, std::string& text, std::string& rounding) {
    const xp::Array& r = kind_ == "xp-add-out" ? views_[n][3] : last_;
    const std::vector<float> got = r.to_vector<float>();
    const std::vector<float>& ref = fma() ? h_.fma_separate : h_.add;
    rounding = fma() ? "separate" : "";
    if (got.size() != n) {
      text = "the result has " + std::to_string(got.size()) + " elements, not " + std::to_string(n);
      return 0;
    }
    long long bad = bn::first_difference(got.data(), ref.data(), n);
    if (bad >= 0 && fma() && bn::first_difference(got.data(), h_.fma_fused.data(), n) < 0) {
      rounding = "fma";
      return -1;
    }
    if (bad >= 0) {
      char buf[200];
      const auto i = static_cast<std::size_t>(bad);
      std::snprintf(buf, sizeof buf, "index %lld holds 0x%08x, the reference 0x%08x", bad, bn::float_bits(got[i]),
                    bn::float_bits(ref[i]));
      text = buf;
    }
    return bad;
  }

 private:
  std::string kind_;
  const ArrayHostData& h_;
  DeviceTimer timer_;
  xp::Array a_, b_, c_, out_, nan_, last_;
  std::map<std::size_t, std::array<xp::Array, 5>> views_;
};

// The device of an array child: --on cuda (xp's default device, which must be a GPU) or cpu.
xp::Device child_device(const BenchLaunchArgs& args) {
  if (args.on == "cpu") return xp::Device::cpu();
  if (args.on != "cuda") throw xp::ValueError("--on " + args.on + ": expected cuda or cpu");
  const xp::Device dev = xp::default_device();
  if (!dev.is_cuda()) throw std::runtime_error("xp's default device is " + dev.str() + ", not a GPU");
  dev.activate();
  return dev;
}

int checked_child(const BenchLaunchArgs& args);

int array_child(const BenchLaunchArgs& args) {
  if (args.label == "xp-sum" || args.label == "xp-matmul-f32" || args.label == "xp-matmul-f16" ||
      args.label == "xp-matmul-tf32")
    return checked_child(args);
  const std::vector<std::size_t> sizes = args.sizes.empty() ? std::vector<std::size_t>{} : parse_sizes(args.sizes);
  const auto n = max_size(static_cast<std::size_t>(args.n), sizes);
  json s = new_sample(args.label, n);
  try {
    if (args.label != "xp-add" && args.label != "xp-add-out" && args.label != "xp-fma")
      throw xp::ValueError("--label " + args.label +
                           ": expected xp-add, xp-add-out, xp-fma, xp-sum, xp-matmul-f32, xp-matmul-f16 or "
                           "xp-matmul-tf32");
    const xp::Device dev = child_device(args);
    s["device"] = dev.str();
    s["threads"] = xp::num_threads();
    ArrayHostData h(n);
    ArrayOps ops(args.label, dev, h);
    const double bpe = ops.bytes_per_element();
    s["build_note"] = dev.is_cuda()
                          ? "the fused kernel is generated and compiled, or found in a cache, inside the first call"
                          : "no build step";
    std::string text, rounding;
    if (!sizes.empty()) {
      json points = json::array();
      s["bits_ok"] = true;
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        const std::size_t m = sizes[k];
        ops.fill_nan(m);
        for (int i = 0; i < bn::kWarmups; ++i) ops.call(m);
        ops.start();
        for (int i = 0; i < bn::kTimed; ++i) ops.call(m);
        const double ms = ops.stop() / bn::kTimed;
        text.clear();
        const long long bad = ops.check(m, text, rounding);
        if (bad >= 0 && flag(s, "bits_ok")) {
          s["bits_ok"] = false;
          s["first_mismatch"] = bad;
          s["mismatch"] = "n = " + std::to_string(m) + ": " + text;
        }
        json p = sweep_point(m, ms, bpe, bad, text);
        p["rounding"] = rounding.empty() ? json(nullptr) : json(rounding);
        points.push_back(p);
        print_progress(k + 1, sizes.size());
      }
      s["sweep"] = points;
      s["rounding"] = rounding.empty() ? json(nullptr) : json(rounding);
    } else {
      const std::size_t host_n = std::min<std::size_t>(n, bn::kHostN);
      ops.prepare(n);
      ops.prepare(host_n);
      ops.fill_nan(n);
      const auto t0 = Clock::now();
      ops.call(n);
      ops.sync();
      s["first_ms"] = ms_between(t0, Clock::now());
      s["total_ms"] = s["first_ms"];
      long long bad = ops.check(n, text, rounding);
      s["bits_ok"] = bad < 0;
      if (bad >= 0) {
        s["first_mismatch"] = bad;
        s["mismatch"] = "after the first call, " + text;
      }
      ops.fill_nan(n);
      for (int i = 0; i < bn::kWarmups; ++i) ops.call(n);
      ops.start();
      for (int i = 0; i < bn::kTimed; ++i) ops.call(n);
      const double steady = ops.stop() / bn::kTimed;
      s["steady_ms"] = steady;
      s["gbps"] = bpe * static_cast<double>(n) / (steady * 1e-3) / 1e9;
      bad = ops.check(n, text, rounding);
      if (bad >= 0 && flag(s, "bits_ok")) {
        s["bits_ok"] = false;
        s["first_mismatch"] = bad;
        s["mismatch"] = "after the timed calls, " + text;
      }
      s["rounding"] = rounding.empty() ? json(nullptr) : json(rounding);
      for (int i = 0; i < bn::kHostWarmups; ++i) ops.call(host_n);
      ops.sync();
      const auto h0 = Clock::now();
      for (int i = 0; i < bn::kHostLaunches; ++i) ops.call(host_n);
      const auto h1 = Clock::now();
      ops.sync();
      s["host_us"] = ms_between(h0, h1) * 1e3 / bn::kHostLaunches;
    }
    if (dev.is_cuda()) {
      const xp::KernelCacheInfo cache = xp::kernel_cache_info();
      s["cache_folder"] = cache.folder;
      s["cache_usable"] = cache.usable;
    }
    s["ok"] = true;
  } catch (const std::exception& e) {
    s["error"] = e.what();
  }
  print_sample(s);
  return flag(s, "ok") ? 0 : 1;
}

bool is_matmul_op(const std::string& op) {
  return op == "matmul-f32" || op == "matmul-f16" || op == "matmul-tf32";
}

bool is_checked_op(const std::string& op) {
  return op == "sum" || is_matmul_op(op);
}

std::size_t size_for(const std::string& op, bool gpu, std::size_t n) {
  if (op == "sum") return gpu ? static_cast<std::size_t>(bn::kSumN) : n;
  if (is_matmul_op(op)) return static_cast<std::size_t>(gpu ? bn::kMatmulN : bn::kMatmulCpuN);
  return n;
}

// Records one checked result in the sample; the first failure of a row is kept.
void record_check(json& s, const bn::BoundCheck& c, const std::string& stage, const std::string& what) {
  if (c.ok) {
    if (s["within_bound"].is_null()) s["within_bound"] = true;
    return;
  }
  if (s["within_bound"].is_boolean() && !s["within_bound"].get<bool>()) return;
  s["within_bound"] = false;
  char text[300];
  std::snprintf(text, sizeof text, "after the %s, %s: |error| %.9g > bound %.9g", stage.c_str(), what.c_str(), c.error,
                c.bound);
  s["mismatch"] = text;
}

// What the check found, over every call checked: the largest error relative to its bound.
void record_worst(json& s, const char* key, double value) {
  if (!s.contains(key) || !s[key].is_number() || s[key].get<double>() < value) s[key] = value;
}

// Row "xp-sum": xp::sum(a) of n float32 from bn::sum_input, a 0-d array on the device each call.
// The value is read back (item) after the first call and after the timed calls, for the check;
// the timed calls are not read back: events around them measure the device's work.
void run_sum(const xp::Device& dev, std::size_t n, json& s) {
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = bn::sum_input(i);
  const bn::SumReference ref = bn::reference_sum(host.data(), n);
  s["reference"] = ref.sum;
  s["abs_sum"] = ref.abs_sum;
  s["bound"] = bn::kSumRelBound * ref.abs_sum;
  s["bound_rel"] = bn::kSumRelBound;
  const std::size_t host_n = std::min<std::size_t>(n, bn::kHostN);
  const xp::Array a = xp::asarray(host, xp::Shape{static_cast<std::int64_t>(n)}, dev);
  const xp::Array small = a.slice({xp::Slice(0, static_cast<std::int64_t>(host_n))});
  host = std::vector<float>();  // 1 GiB at 2^28: not kept
  DeviceTimer timer(dev);
  timer.sync();
  auto check = [&](const xp::Array& r, const char* stage) {
    const double got = static_cast<double>(r.item<float>());
    s["result"] = got;
    const bn::BoundCheck c = bn::check_sum(got, ref);
    record_worst(s, "rel_error", c.error / ref.abs_sum);
    char what[160];
    std::snprintf(what, sizeof what, "the sum is %.9g, the float64 reference %.17g", got, ref.sum);
    record_check(s, c, stage, what);
  };
  const auto t0 = Clock::now();
  xp::Array r = xp::sum(a);
  r.eval();
  timer.sync();
  s["first_ms"] = ms_between(t0, Clock::now());
  s["total_ms"] = s["first_ms"];
  check(r, "first call");
  for (int i = 0; i < bn::kWarmups; ++i) xp::sum(a).eval();
  timer.start();
  for (int i = 0; i < bn::kTimed; ++i) {
    r = xp::sum(a);
    r.eval();
  }
  const double steady = timer.stop() / bn::kTimed;
  s["steady_ms"] = steady;
  s["gbps"] = 4.0 * static_cast<double>(n) / (steady * 1e-3) / 1e9;
  check(r, "timed calls");
  for (int i = 0; i < bn::kHostWarmups; ++i) xp::sum(small).eval();
  timer.sync();
  const auto h0 = Clock::now();
  for (int i = 0; i < bn::kHostLaunches; ++i) xp::sum(small).eval();
  const auto h1 = Clock::now();
  timer.sync();
  s["host_us"] = ms_between(h0, h1) * 1e3 / bn::kHostLaunches;
  s["host_n"] = host_n;
}

// Rows "xp-matmul-f32", "xp-matmul-f16" and "xp-matmul-tf32": C = xp::matmul(A, B), m x m times m x m,
// a new array each call (tf32: xp::matmul(A, B, MatmulPrecision::tf32), float32). Checked after the
// first call and after the timed calls at the sampled entries, each read back alone.
void run_matmul(const xp::Device& dev, std::int64_t m, bool half, bool tf32, json& s) {
  const auto mm = static_cast<std::size_t>(m) * static_cast<std::size_t>(m);
  std::vector<float> ha(mm), hb(mm);
  for (std::size_t i = 0; i < mm; ++i) {
    ha[i] = bn::matmul_input(half, 0, i);
    hb[i] = bn::matmul_input(half, 1, i);
  }
  const std::vector<bn::MatmulSample> samples =
      bn::matmul_samples(ha.data(), hb.data(), m, half, bn::kMatmulSamples, tf32);
  const xp::DType dtype = half ? xp::DType::float16 : xp::DType::float32;
  const xp::MatmulPrecision precision = tf32 ? xp::MatmulPrecision::tf32 : xp::MatmulPrecision::float32;
  auto upload_matrix = [&](const std::vector<float>& h) {
    xp::Array x = xp::asarray(h, xp::Shape{m, m}, dev);
    if (half) x = x.astype(dtype);  // exact: small integers
    return x.eval();
  };
  const xp::Array a = upload_matrix(ha), b = upload_matrix(hb);
  ha = std::vector<float>();
  hb = std::vector<float>();
  const std::int64_t hm = std::min<std::int64_t>(m, bn::kHostMatmulN);
  const xp::Array a_small = a.slice({xp::Slice(0, hm), xp::Slice(0, hm)}).copy().eval();
  const xp::Array b_small = b.slice({xp::Slice(0, hm), xp::Slice(0, hm)}).copy().eval();
  s["compute_type"] = dev.is_cuda() ? (half   ? "CUBLAS_COMPUTE_32F, float32 split-k"
                                       : tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32"
                                              : "CUBLAS_COMPUTE_32F (no TF32)")
                                    : "float32 (xp's CPU matmul)";
  s["note"] = dev.is_cuda()
                  ? std::string("xp calls cublasGemmStridedBatchedEx with ") +
                        (tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32 (MatmulPrecision::tf32)" : "CUBLAS_COMPUTE_32F") +
                        " on a handle whose math mode is CUBLAS_DEFAULT_MATH | "
                        "CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (docs/semantics.md)"
                  : std::string(tf32 ? "MatmulPrecision::tf32 computed in float32 on the CPU, which has no TF32 "
                                       "(docs/semantics.md)"
                                     : "float16 and float32 computed in float32 on the CPU (docs/semantics.md)");
  DeviceTimer timer(dev);
  timer.sync();
  auto check = [&](const xp::Array& c, const char* stage) {
    json values = json::array();
    double worst = 0;
    for (const auto& e : samples) {
      const double got = static_cast<double>(c.slice({xp::Index(e.i), xp::Index(e.j)}).item<float>());
      values.push_back(got);
      const bn::BoundCheck k = bn::check_bound(got, e.ref, e.bound);
      worst = std::max(worst, k.error == 0 ? 0.0 : k.bound > 0 ? k.error / k.bound : 1e300);
      char what[160];
      std::snprintf(what, sizeof what, "C[%lld][%lld] is %.9g, the float64 reference %.17g",
                    static_cast<long long>(e.i), static_cast<long long>(e.j), got, e.ref);
      record_check(s, k, stage, what);
    }
    record_worst(s, "error_of_bound", worst);
    s["values"] = values;
  };
  const auto t0 = Clock::now();
  xp::Array c = xp::matmul(a, b, precision);
  c.eval();
  timer.sync();
  s["first_ms"] = ms_between(t0, Clock::now());
  s["total_ms"] = s["first_ms"];
  check(c, "first call");
  c = xp::Array();
  for (int i = 0; i < bn::kWarmups; ++i) xp::matmul(a, b, precision).eval();
  timer.start();
  for (int i = 0; i < bn::kTimed; ++i) {
    c = xp::matmul(a, b, precision);
    c.eval();
  }
  const double steady = timer.stop() / bn::kTimed;
  s["steady_ms"] = steady;
  s["tflops"] = 2.0 * std::pow(static_cast<double>(m), 3) / (steady * 1e-3) / 1e12;
  check(c, "timed calls");
  c = xp::Array();
  for (int i = 0; i < bn::kHostWarmups; ++i) xp::matmul(a_small, b_small, precision).eval();
  timer.sync();
  const auto h0 = Clock::now();
  for (int i = 0; i < bn::kHostLaunches; ++i) xp::matmul(a_small, b_small, precision).eval();
  const auto h1 = Clock::now();
  timer.sync();
  s["host_us"] = ms_between(h0, h1) * 1e3 / bn::kHostLaunches;
  s["host_n"] = hm;
}

// An array child for "xp-sum", "xp-matmul-f32", "xp-matmul-f16" or "xp-matmul-tf32" (--n: elements,
// or the matrices' size).
int checked_child(const BenchLaunchArgs& args) {
  const auto n = static_cast<std::size_t>(args.n);
  json s = new_sample(args.label, n);
  s["within_bound"] = nullptr;
  try {
    if (!args.sizes.empty()) throw xp::ValueError(args.label + " has one size: no --sizes");
    const xp::Device dev = child_device(args);
    s["device"] = dev.str();
    s["threads"] = xp::num_threads();
    if (args.label == "xp-sum") {
      s["build_in_first_call"] = dev.is_cuda();
      s["build_note"] = dev.is_cuda() ? "the reduction kernel is generated and compiled, or found in a cache, inside "
                                        "the first call"
                                      : "no build step";
      run_sum(dev, n, s);
    } else {
      if (n > static_cast<std::size_t>(INT_MAX)) throw xp::ValueError("--n: matrices too large");
      s["build_note"] = dev.is_cuda() ? "cuBLAS is opened inside the first call" : "no build step";
      run_matmul(dev, static_cast<std::int64_t>(n), args.label == "xp-matmul-f16", args.label == "xp-matmul-tf32", s);
    }
    s["ok"] = true;
  } catch (const std::exception& e) {
    s["error"] = e.what();
  }
  print_sample(s);
  return flag(s, "ok") ? 0 : 1;
}

}  // namespace xp_cli::launch
