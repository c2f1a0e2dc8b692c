// `xp bench launch` (bench_launch.hpp). The parent starts one child process per process-level row
// and run, reads the JSON line each prints, runs the two in-process rows itself, then prints medians,
// ratios against the raw row and, with --json, everything.
//
// The raw rows are the baseline: the driver API and NVRTC called directly, through entry points
// this file declares and resolves itself (cuGetProcAddress_v2 at CUDA 12.0, legacy-stream flavour),
// so they share nothing with xp but the kernel text, the buffers' contents and the clock.
#include "bench_launch.hpp"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "xp/xp.hpp"

namespace xp_cli {

namespace {

namespace fs = std::filesystem;
namespace bn = bench;
using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr const char* kBeginMarker = "// [xp-snippet vector_add begin]";
constexpr const char* kEndMarker = "// [xp-snippet vector_add end]";
constexpr const char* kKernelName = "vector_add";
constexpr const char* kProgramName = "vector_add.cu";  // the NVRTC program name, raw and xp alike
constexpr const char* kNvccExeName = "xp_bench_vector_add_nvcc";
constexpr int kLookups = 1000;  // repeated Program::kernel() calls timed in the in-process row

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

// The text between the markers, exactly (bench/CMakeLists.txt cuts the same bytes for nvcc).
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
  std::vector<fs::path> tried;
#ifdef XP_BENCH_KERNEL_FILE
  tried.emplace_back(XP_BENCH_KERNEL_FILE);
#endif
  if (const fs::path exe = exe_path(); !exe.empty()) {
    tried.push_back(exe.parent_path() / "../../bench/kernels/vector_add.cu");  // the build tree
    tried.push_back(exe.parent_path() / "../share/xp/bench/kernels/vector_add.cu");
  }
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

// ---- The raw baseline: the driver API and NVRTC, declared here --------------------------------

namespace raw {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING, as xp's own streams
constexpr unsigned kEventDefault = 0;       // CU_EVENT_DEFAULT: timing enabled

// The CUDA 12.0 signatures of the entry points the baseline uses (cuGetProcAddress_v2 resolves a
// base name to the version of that ABI).
struct Driver {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, std::size_t) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**) = nullptr;
};

struct Nvrtc {
  struct ProgramSt;
  using Program = ProgramSt*;
  int (*nvrtcVersion)(int*, int*) = nullptr;
  const char* (*nvrtcGetErrorString)(int) = nullptr;
  int (*nvrtcCreateProgram)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*nvrtcCompileProgram)(Program, int, const char* const*) = nullptr;
  int (*nvrtcGetCUBINSize)(Program, std::size_t*) = nullptr;
  int (*nvrtcGetCUBIN)(Program, char*) = nullptr;
  int (*nvrtcGetProgramLogSize)(Program, std::size_t*) = nullptr;
  int (*nvrtcGetProgramLog)(Program, char*) = nullptr;
  int (*nvrtcDestroyProgram)(Program*) = nullptr;
};

void check(const Driver& d, CUresult r, const char* call) {
  if (r == 0) return;
  const char* name = nullptr;
  if (d.cuGetErrorName == nullptr || d.cuGetErrorName(r, &name) != 0 || name == nullptr) name = "unknown CUresult";
  throw std::runtime_error(std::string(call) + " failed: " + name + " (" + std::to_string(r) + ")");
}

void* open_library(const std::string& path) {
  if (path.empty()) throw std::runtime_error("no library path given to the raw baseline");
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: lives as long as the process
  if (lib == nullptr) {
    const char* e = dlerror();
    throw std::runtime_error("dlopen " + path + ": " + (e != nullptr ? e : "failed"));
  }
  return lib;
}

// Loaded once per process: opened, entry points resolved and cuInit called.
const Driver& driver(const std::string& path) {
  static Driver d;
  static std::string loaded;
  if (!loaded.empty()) {
    if (loaded != path) throw std::runtime_error("raw driver already loaded from " + loaded);
    return d;
  }
  void* lib = open_library(path);
  using GetProc = CUresult (*)(const char*, void**, int, std::uint64_t, int*);
  const auto get = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get == nullptr)
    throw std::runtime_error(path + " has no cuGetProcAddress_v2 (a CUDA 12.0 driver or newer is needed)");
  auto resolve = [&](auto& slot, const char* name) {
    void* fn = nullptr;
    int status = -1;  // CUdriverProcAddressQueryResult: 0 = found
    const CUresult r = get(name, &fn, 12000, 1 /* CU_GET_PROC_ADDRESS_LEGACY_STREAM */, &status);
    if (r != 0 || fn == nullptr || status != 0)
      throw std::runtime_error("cuGetProcAddress_v2(" + std::string(name) + ", 12000) failed: CUresult " +
                               std::to_string(r) + ", status " + std::to_string(status));
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
  };
#define XP_BENCH_RESOLVE(name) resolve(d.name, #name)
  XP_BENCH_RESOLVE(cuGetErrorName);
  XP_BENCH_RESOLVE(cuInit);
  XP_BENCH_RESOLVE(cuDeviceGet);
  XP_BENCH_RESOLVE(cuDevicePrimaryCtxRetain);
  XP_BENCH_RESOLVE(cuDevicePrimaryCtxRelease);
  XP_BENCH_RESOLVE(cuCtxSetCurrent);
  XP_BENCH_RESOLVE(cuCtxSynchronize);
  XP_BENCH_RESOLVE(cuMemAlloc);
  XP_BENCH_RESOLVE(cuMemFree);
  XP_BENCH_RESOLVE(cuMemcpyHtoD);
  XP_BENCH_RESOLVE(cuMemcpyDtoH);
  XP_BENCH_RESOLVE(cuMemsetD8);
  XP_BENCH_RESOLVE(cuStreamCreate);
  XP_BENCH_RESOLVE(cuStreamDestroy);
  XP_BENCH_RESOLVE(cuStreamSynchronize);
  XP_BENCH_RESOLVE(cuEventCreate);
  XP_BENCH_RESOLVE(cuEventDestroy);
  XP_BENCH_RESOLVE(cuEventRecord);
  XP_BENCH_RESOLVE(cuEventSynchronize);
  XP_BENCH_RESOLVE(cuEventElapsedTime);
  XP_BENCH_RESOLVE(cuModuleLoadData);
  XP_BENCH_RESOLVE(cuModuleUnload);
  XP_BENCH_RESOLVE(cuModuleGetFunction);
  XP_BENCH_RESOLVE(cuLaunchKernel);
#undef XP_BENCH_RESOLVE
  check(d, d.cuInit(0), "cuInit");
  loaded = path;
  return d;
}

const Nvrtc& nvrtc(const std::string& path) {
  static Nvrtc n;
  static std::string loaded;
  if (!loaded.empty()) {
    if (loaded != path) throw std::runtime_error("raw NVRTC already loaded from " + loaded);
    return n;
  }
  void* lib = open_library(path);
  auto resolve = [&](auto& slot, const char* name) {
    void* fn = dlsym(lib, name);
    if (fn == nullptr) throw std::runtime_error(path + " lacks " + name);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
  };
#define XP_BENCH_RESOLVE(name) resolve(n.name, #name)
  XP_BENCH_RESOLVE(nvrtcVersion);
  XP_BENCH_RESOLVE(nvrtcGetErrorString);
  XP_BENCH_RESOLVE(nvrtcCreateProgram);
  XP_BENCH_RESOLVE(nvrtcCompileProgram);
  XP_BENCH_RESOLVE(nvrtcGetCUBINSize);
  XP_BENCH_RESOLVE(nvrtcGetCUBIN);
  XP_BENCH_RESOLVE(nvrtcGetProgramLogSize);
  XP_BENCH_RESOLVE(nvrtcGetProgramLog);
  XP_BENCH_RESOLVE(nvrtcDestroyProgram);
#undef XP_BENCH_RESOLVE
  loaded = path;
  return n;
}

// The options xp gives NVRTC: the architecture, then -I for each toolkit include folder.
std::vector<std::string> options(int arch, const std::vector<std::string>& includes) {
  std::vector<std::string> opts{"--gpu-architecture=sm_" + std::to_string(arch)};
  for (const auto& dir : includes) opts.push_back("-I" + dir);
  return opts;
}

// Source -> cubin.
std::vector<char> compile(const Nvrtc& nv, const std::string& source, const std::vector<std::string>& opts) {
  auto check_nvrtc = [&](int r, const char* call) {
    if (r != 0) throw std::runtime_error(std::string(call) + " failed: " + nv.nvrtcGetErrorString(r));
  };
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  Nvrtc::Program prog = nullptr;
  check_nvrtc(nv.nvrtcCreateProgram(&prog, source.c_str(), kProgramName, 0, nullptr, nullptr), "nvrtcCreateProgram");
  struct Guard {
    const Nvrtc& nv;
    Nvrtc::Program* p;
    ~Guard() { nv.nvrtcDestroyProgram(p); }
  } guard{nv, &prog};
  const int r = nv.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  if (r != 0) {
    std::size_t size = 0;
    std::string log;
    if (nv.nvrtcGetProgramLogSize(prog, &size) == 0 && size > 1) {
      log.resize(size);
      nv.nvrtcGetProgramLog(prog, log.data());
      log.resize(size - 1);
    }
    throw std::runtime_error(std::string("nvrtcCompileProgram failed: ") + nv.nvrtcGetErrorString(r) + "\n" + log);
  }
  std::size_t size = 0;
  check_nvrtc(nv.nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check_nvrtc(nv.nvrtcGetCUBIN(prog, cubin.data()), "nvrtcGetCUBIN");
  return cubin;
}

// The device's primary context (the one xp and the CUDA runtime use), current on this thread.
struct Context {
  const Driver& d;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  Context(const Driver& drv, int ordinal) : d(drv) {
    check(d, d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
    check(d, d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(d, d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  }
  ~Context() { d.cuDevicePrimaryCtxRelease(dev); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

// a, b and c, for the raw child (the parent's rows share xp::Buffers instead).
struct Buffers {
  const Driver& d;
  CUdeviceptr p[3] = {0, 0, 0};
  Buffers(const Driver& drv, std::size_t bytes) : d(drv) {
    for (auto& ptr : p) check(d, d.cuMemAlloc(&ptr, bytes), "cuMemAlloc");
  }
  ~Buffers() {
    for (auto ptr : p)
      if (ptr != 0) d.cuMemFree(ptr);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
};

}  // namespace raw

// ---- One row's launches, through either path ---------------------------------------------------

// Host copies of the inputs, the reference and the output read back.
struct HostData {
  std::size_t n;
  std::unique_ptr<float[]> a, b, ref, out;
  explicit HostData(std::size_t n_)
      : n(n_), a(new float[n_]), b(new float[n_]), ref(new float[n_]), out(new float[n_]) {
    bn::make_inputs(a.get(), b.get(), ref.get(), n);
  }
};

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>((n + bn::kBlock - 1) / bn::kBlock);
}

// The raw path's launches: one non-blocking stream, two events, cuLaunchKernel.
class RawOps {
 public:
  RawOps(const raw::Driver& d, raw::CUdeviceptr a, raw::CUdeviceptr b, raw::CUdeviceptr c, std::size_t n)
      : d_(d),
        a_(a),
        b_(b),
        c_(c),
        n_(n),
        n_big_(static_cast<int>(n)),
        n_small_(static_cast<int>(std::min<std::size_t>(n, bn::kHostN))),
        grid_big_(grid_for(n)),
        grid_small_(grid_for(static_cast<std::size_t>(n_small_))) {
    raw::check(d_, d_.cuStreamCreate(&stream_, raw::kStreamNonBlocking), "cuStreamCreate");
    raw::check(d_, d_.cuEventCreate(&start_, raw::kEventDefault), "cuEventCreate");
    raw::check(d_, d_.cuEventCreate(&stop_, raw::kEventDefault), "cuEventCreate");
  }
  ~RawOps() {
    if (module_ != nullptr) d_.cuModuleUnload(module_);
    if (start_ != nullptr) d_.cuEventDestroy(start_);
    if (stop_ != nullptr) d_.cuEventDestroy(stop_);
    if (stream_ != nullptr) d_.cuStreamDestroy(stream_);
  }
  RawOps(const RawOps&) = delete;
  RawOps& operator=(const RawOps&) = delete;

  // NVRTC, cuModuleLoadData, cuModuleGetFunction, timed apart.
  void build(const raw::Nvrtc& nv, const std::string& source, const std::vector<std::string>& options, json& s) {
    const auto t0 = Clock::now();
    const std::vector<char> cubin = raw::compile(nv, source, options);
    const auto t1 = Clock::now();
    raw::check(d_, d_.cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
    const auto t2 = Clock::now();
    raw::check(d_, d_.cuModuleGetFunction(&function_, module_, kKernelName), "cuModuleGetFunction");
    const auto t3 = Clock::now();
    s["nvrtc_ms"] = ms_between(t0, t1);
    s["load_ms"] = ms_between(t1, t2);
    s["function_ms"] = ms_between(t2, t3);
    s["build_ms"] = ms_between(t0, t3);
    s["cubin_bytes"] = cubin.size();
  }
  void launch_big() { launch(grid_big_, big_args_); }
  void launch_small() { launch(grid_small_, small_args_); }
  void sync() { raw::check(d_, d_.cuStreamSynchronize(stream_), "cuStreamSynchronize"); }
  void fill_nan() {
    raw::check(d_, d_.cuMemsetD8(c_, 0xFF, n_ * sizeof(float)), "cuMemsetD8");
    raw::check(d_, d_.cuCtxSynchronize(), "cuCtxSynchronize");  // the memset is on the legacy stream
  }
  void read_output(float* out) {
    raw::check(d_, d_.cuCtxSynchronize(), "cuCtxSynchronize");
    raw::check(d_, d_.cuMemcpyDtoH(out, c_, n_ * sizeof(float)), "cuMemcpyDtoH");
  }
  void record_start() { raw::check(d_, d_.cuEventRecord(start_, stream_), "cuEventRecord"); }
  void record_stop() { raw::check(d_, d_.cuEventRecord(stop_, stream_), "cuEventRecord"); }
  double elapsed_ms() {
    raw::check(d_, d_.cuEventSynchronize(stop_), "cuEventSynchronize");
    float ms = 0;
    raw::check(d_, d_.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
    return ms;
  }

 private:
  void launch(unsigned grid, void** args) {
    raw::check(d_, d_.cuLaunchKernel(function_, grid, 1, 1, bn::kBlock, 1, 1, 0, stream_, args, nullptr),
               "cuLaunchKernel");
  }
  const raw::Driver& d_;
  raw::CUdeviceptr a_, b_, c_;
  std::size_t n_;
  int n_big_, n_small_;
  unsigned grid_big_, grid_small_;
  void* big_args_[4] = {&a_, &b_, &c_, &n_big_};
  void* small_args_[4] = {&a_, &b_, &c_, &n_small_};
  raw::CUstream stream_ = nullptr;
  raw::CUevent start_ = nullptr, stop_ = nullptr;
  raw::CUmodule module_ = nullptr;
  raw::CUfunction function_ = nullptr;
};

// xp's launches: xp's default stream of the device, xp::Events on it, Kernel::launch.
class XpOps {
 public:
  XpOps(const xp::Device& dev, const xp::Buffer& a, const xp::Buffer& b, const xp::Buffer& c, std::size_t n)
      : dev_(dev),
        stream_(xp::Stream::default_for(dev)),
        start_(dev),
        stop_(dev),
        a_(a),
        b_(b),
        c_(c),
        n_(n),
        n_big_(static_cast<int>(n)),
        n_small_(static_cast<int>(std::min<std::size_t>(n, bn::kHostN))) {
    big_.grid = grid_for(n_);
    big_.block = bn::kBlock;
    big_.stream = &stream_;
    small_ = big_;
    small_.grid = grid_for(static_cast<std::size_t>(n_small_));
  }
  XpOps(const XpOps&) = delete;  // the launch configurations point at stream_
  XpOps& operator=(const XpOps&) = delete;
  void set_kernel(const xp::Kernel& k) { kernel_ = k; }
  void launch_big() { kernel_.launch(big_, a_, b_, c_, n_big_); }
  void launch_small() { kernel_.launch(small_, a_, b_, c_, n_small_); }
  void sync() { stream_.synchronize(); }
  void fill_nan() {
    c_.fill_bytes(0xFF);
    xp::synchronize(dev_);  // every stream of the context, whichever one the fill ran on
  }
  void read_output(float* out) {
    xp::synchronize(dev_);
    c_.copy_to_host(out, n_ * sizeof(float));
  }
  void record_start() { start_.record(stream_); }
  void record_stop() { stop_.record(stream_); }
  double elapsed_ms() {
    stop_.synchronize();
    return xp::Event::elapsed_ms(start_, stop_);
  }
  const xp::LaunchConfig& big_config() const { return big_; }
  int n_big() const { return n_big_; }

 private:
  xp::Device dev_;
  xp::Stream stream_;
  xp::Event start_, stop_;
  xp::Buffer a_, b_, c_;  // handles: copies share the allocation
  std::size_t n_;
  int n_big_, n_small_;
  xp::LaunchConfig big_, small_;
  xp::Kernel kernel_;
};

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

// Compares the output read back with the reference; the first mismatch of a row is kept.
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

struct RawSetup {
  std::string driver_path, nvrtc_path;
  std::vector<std::string> includes;
  int arch = 0;
};

// Row "raw": NaN-fill, compile + load + get function (build), first launch to completion (first).
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

// Rows "xp": NaN-fill, Program + kernel() (build), first launch to completion (first). In the
// parent (lookups > 0) also the time of kernel() again on the same Program, module loaded.
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

// ---- Child processes ----------------------------------------------------------------------------

int raw_child(const BenchLaunchArgs& args) {
  const auto n = static_cast<std::size_t>(args.n);
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
    raw_row(ops, nv, source, setup, h, s);
    s["ok"] = true;
  } catch (const std::exception& e) {
    s["error"] = e.what();
  }
  print_sample(s);
  return flag(s, "ok") ? 0 : 1;
}

int xp_child(const BenchLaunchArgs& args) {
  const auto n = static_cast<std::size_t>(args.n);
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
    xp_row(ops, dev, source, a, b, c, h, s, 0);
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

// ---- The parent ---------------------------------------------------------------------------------

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// Runs a shell command line, returns the last JSON line it printed (or an error sample).
json run_child(const std::string& row, const std::string& command, std::size_t n) {
  std::fflush(stdout);
  FILE* pipe = popen(command.c_str(), "r");
  json fail = new_sample(row, n);
  if (pipe == nullptr) {
    fail["error"] = "popen failed: " + command;
    return fail;
  }
  std::string out;
  char buf[4096];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, got);
  const int status = pclose(pipe);
  std::string last;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line.front() == '{') last = line;
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

struct Row {
  std::string id, label, process;
  std::vector<json> samples;
  std::string skipped;  // why, when the row did not run
};

struct Stat {
  double median = 0, min = 0, max = 0;
  std::size_t count = 0;
};

std::optional<Stat> stat(const Row& row, const char* key) {
  std::vector<double> v;
  for (const auto& s : row.samples)
    if (flag(s, "ok") && s.contains(key) && s[key].is_number()) v.push_back(s[key].get<double>());
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return Stat{v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2, v.front(), v.back(), v.size()};
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x >= 1000 ? "%.0f" : "%.4g", x);
  return buf;
}

std::string cell(const Row& row, const char* key) {
  const auto st = stat(row, key);
  if (!st) return "n/a";
  std::string c = number(st->median);
  if (st->count > 1) c += " (" + number(st->min) + ".." + number(st->max) + ")";
  return c;
}

json stat_json(const Row& row, const char* key) {
  const auto st = stat(row, key);
  if (!st) return nullptr;
  return {{"median", st->median}, {"min", st->min}, {"max", st->max}, {"count", st->count}};
}

std::string bits_cell(const Row& row) {
  std::size_t ok = 0, ran = 0;
  for (const auto& s : row.samples) {
    if (!flag(s, "ok")) {
      const std::string e = text_of(s, "error").empty() ? "failed" : text_of(s, "error");
      return "error: " + e.substr(0, std::min<std::size_t>(e.find('\n'), 100));
    }
    ++ran;
    if (!flag(s, "bits_ok"))
      return "MISMATCH " + (text_of(s, "mismatch").empty() ? std::string("(not checked)") : text_of(s, "mismatch"));
    ++ok;
  }
  return ran == 0 ? "n/a" : "OK (" + std::to_string(ok) + "/" + std::to_string(ran) + ")";
}

bool row_failed(const Row& row) {
  for (const auto& s : row.samples)
    if (!flag(s, "ok") || !flag(s, "bits_ok")) return true;
  return false;
}

std::string version_text(int v) {
  return v <= 0 ? "unknown" : std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

void write_json(const std::string& file, const json& doc) {
  std::ofstream f(file);
  f << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  if (!f) throw std::runtime_error("cannot write " + file);
}

// A figure with its goal: value <= goal, or |value - 1| <= goal when `within`.
struct Ratio {
  std::string name;
  std::optional<double> value;
  double goal;
  bool within;  // the goal is a band around 1
  std::string note;
};

std::optional<double> divide(const std::optional<Stat>& a, const std::optional<Stat>& b) {
  if (!a || !b || b->median <= 0) return std::nullopt;
  return a->median / b->median;
}

int parent(const BenchLaunchArgs& args) {
  const auto n = static_cast<std::size_t>(args.n);
  json doc;
  doc["schema"] = "xp.bench.launch/1";
  doc["xp_version"] = std::string(xp::version());
  doc["n"] = n;
  doc["runs"] = args.runs;

  const xp::CudaStatus status = xp::cuda_status();
  std::optional<xp::Device> dev;
  std::string skip;
  if (!status.available) {
    skip = "CUDA is not usable (" + std::string(xp::to_string(status.reason)) + "): " + status.detail;
  } else if (const xp::Device d = xp::default_device(); !d.is_cuda()) {
    skip = "xp's default device is " + d.str() + " (XP_DEVICE or FORCE_CPU)";
  } else {
    dev = d;
  }
  if (!dev) {
    std::printf("xp bench launch: GPU rows skipped: %s\n", skip.c_str());
    doc["skipped"] = true;
    doc["skip_reason"] = skip;
    doc["cuda_reason"] = std::string(xp::to_string(status.reason));
    doc["cuda_detail"] = status.detail;
    if (!args.json_file.empty()) write_json(args.json_file, doc);
    return 0;
  }
  doc["skipped"] = false;

  const fs::path kernel_file = find_kernel_file(args.kernel_file);
  const std::string source = read_snippet(kernel_file);
  const xp::SystemReport report = xp::system_report();
  const xp::CompilerInfo ci = xp::compiler_info();
  if (!ci.available) throw std::runtime_error("xp has no NVRTC: " + ci.error);
  const xp::GpuInfo gpu = xp::gpu_info(*dev);
  const int arch = gpu.cc_major * 10 + gpu.cc_minor;
  const fs::path self = exe_path();
  if (self.empty()) throw std::runtime_error("cannot find this program (/proc/self/exe) to start the child rows");
  const fs::path nvcc_exe = find_nvcc_exe(args.nvcc_exe);

  const double mib = static_cast<double>(n) * sizeof(float) / (1 << 20);
  std::printf("xp bench launch: vector_add, n = %zu (%.1f MiB per buffer), %d run%s\n", n, mib, args.runs,
              args.runs == 1 ? "" : "s");
  std::printf("GPU:    %s (%s, %d SMs, L2 %.1f MiB)\n", gpu.name.c_str(), gpu.arch().c_str(), gpu.sm_count,
              gpu.l2_cache_bytes / double(1 << 20));
  std::error_code ec;
  const fs::path driver_file = fs::canonical(report.driver.path, ec);  // libcuda.so.580.xx.yy names the release
  const std::string driver_text =
      ec || driver_file == report.driver.path ? report.driver.path : report.driver.path + " -> " + driver_file.string();
  std::printf("driver: CUDA %s, %s\n", version_text(status.driver_version).c_str(), driver_text.c_str());
  std::printf("NVRTC:  %s, %s\n", ci.nvrtc_version.c_str(), ci.nvrtc_path.c_str());
  std::printf("xp:     %s\n", std::string(xp::version()).c_str());
  std::printf("kernel: %s (snippet of %zu bytes)\n", kernel_file.c_str(), source.size());
  std::printf("nvcc:   %s\n\n",
              nvcc_exe.empty() ? "not built (bench/CMakeLists.txt builds it when nvcc is found)" : nvcc_exe.c_str());
  if (static_cast<double>(n) * sizeof(float) < 2.0 * gpu.l2_cache_bytes)
    std::printf("note: a buffer of %.1f MiB is not far past the L2 of %.1f MiB: steady state is not DRAM bandwidth\n\n",
                mib, gpu.l2_cache_bytes / double(1 << 20));

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
  doc["kernel_file"] = kernel_file.string();
  doc["kernel_source"] = source;
  doc["nvcc_exe"] = nvcc_exe.empty() ? json(nullptr) : json(nvcc_exe.string());
  doc["method"] = {{"block", bn::kBlock},
                   {"warmups", bn::kWarmups},
                   {"timed_launches", bn::kTimed},
                   {"host_n", bn::kHostN},
                   {"host_launches", bn::kHostLaunches},
                   {"bytes_per_element", bn::kBytesPerElement},
                   {"seed", bn::kSeed}};

  Row raw_fresh{"raw", "raw driver API + NVRTC", "fresh", {}, ""};
  Row xp_cold{"xp-cold", "xp, empty disk cache", "fresh", {}, ""};
  Row xp_warm{"xp-warm", "xp, warm disk cache", "fresh", {}, ""};
  // The seed's size (2^22): there the kernel's own run is small, so the first launch measured to
  // its completion shows what xp adds (lookup, load, launch).
  constexpr std::size_t kFirstN = std::size_t{1} << 22;
  Row xp_warm_small{"xp-warm-4M", "xp, warm disk cache, n = 2^22", "fresh", {}, ""};
  Row nvcc{"nvcc", "nvcc-built program", "fresh", {}, ""};
  Row raw_parent{"raw-in-process", "raw driver API + NVRTC", "parent", {}, ""};
  Row xp_hit{"xp-in-process", "xp, in-process hit (2nd Program)", "parent", {}, ""};
  if (nvcc_exe.empty()) nvcc.skipped = "not built: no nvcc when CMake configured bench/";

  // One set of buffers for the parent's rows; a primer Program fills xp's in-process cache.
  HostData h(n);
  const xp::Buffer a = upload(*dev, h.a.get(), n);
  const xp::Buffer b = upload(*dev, h.b.get(), n);
  const xp::Buffer c(*dev, n * sizeof(float));
  xp::synchronize(*dev);
  xp::Program primer(source, program_options());
  {
    // The GPU out of its idle clocks before the first row.
    XpOps warm(*dev, a, b, c, n);
    warm.set_kernel(primer.kernel(kKernelName, *dev));
    for (int i = 0; i < 20; ++i) warm.launch_big();
    warm.sync();
  }

  const RawSetup setup{report.driver.path, ci.nvrtc_path, ci.include_dirs, arch};
  const std::string common = " --n " + std::to_string(n) + " --kernel-file " + shell_quote(kernel_file.string());
  std::string raw_cmd = "exec " + shell_quote(self.string()) + " bench launch --row raw-child" + common + " --driver " +
                        shell_quote(setup.driver_path) + " --nvrtc " + shell_quote(setup.nvrtc_path) + " --arch " +
                        std::to_string(arch) + " --device " + std::to_string(dev->index());
  for (const auto& dir : setup.includes) raw_cmd += " --nvrtc-include " + shell_quote(dir);

  for (int run = 0; run < args.runs; ++run) {
    std::fprintf(stderr, "run %d/%d: raw", run + 1, args.runs);
    raw_fresh.samples.push_back(run_child("raw", raw_cmd, n));

    // An empty cache folder for the cold child; the warm child then finds what it stored.
    std::string tmpl = (fs::temp_directory_path() / "xp-bench-cache-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    const std::string xp_cmd = "XP_CACHE_DIR=" + shell_quote(tmpl) + "; export XP_CACHE_DIR; exec " +
                               shell_quote(self.string()) + " bench launch --row xp-child" + common + " --label ";
    for (Row* r : {&xp_cold, &xp_warm}) {
      std::fprintf(stderr, ", %s", r->id.c_str());
      json s = run_child(r->id, xp_cmd + r->id, n);
      if (flag(s, "ok") && text_of(s, "cache_folder") != tmpl) {
        s["ok"] = false;
        s["error"] = "the child used the cache folder " + text_of(s, "cache_folder") + ", not " + tmpl;
      } else if (flag(s, "ok") && !flag(s, "cache_usable")) {
        s["ok"] = false;
        s["error"] = "xp's disk cache is disabled in the child: " + text_of(s, "cache_problem");
      }
      r->samples.push_back(s);
    }
    {
      std::fprintf(stderr, ", %s", xp_warm_small.id.c_str());
      const std::string small_common =
          " --n " + std::to_string(kFirstN) + " --kernel-file " + shell_quote(kernel_file.string());
      const std::string cmd = "XP_CACHE_DIR=" + shell_quote(tmpl) + "; export XP_CACHE_DIR; exec " +
                              shell_quote(self.string()) + " bench launch --row xp-child" + small_common + " --label " +
                              xp_warm_small.id;
      xp_warm_small.samples.push_back(run_child(xp_warm_small.id, cmd, kFirstN));
    }
    std::error_code rm_ec;
    fs::remove_all(tmpl, rm_ec);

    if (!nvcc_exe.empty()) {
      std::fprintf(stderr, ", nvcc");
      nvcc.samples.push_back(run_child("nvcc",
                                       "exec " + shell_quote(nvcc_exe.string()) + " --n " + std::to_string(n) +
                                           " --device " + std::to_string(dev->index()),
                                       n));
    }

    std::fprintf(stderr, ", raw in-process");
    json rs = new_sample("raw-in-process", n);
    try {
      const raw::Driver& d = raw::driver(setup.driver_path);
      const raw::Nvrtc& nv = raw::nvrtc(setup.nvrtc_path);
      raw::Context ctx(d, dev->index());
      RawOps ops(d, a.address(), b.address(), c.address(), n);
      raw_row(ops, nv, source, setup, h, rs);
      rs["ok"] = true;
    } catch (const std::exception& e) {
      rs["error"] = e.what();
    }
    raw_parent.samples.push_back(rs);

    std::fprintf(stderr, ", xp in-process\n");
    json xs = new_sample("xp-in-process", n);
    try {
      XpOps ops(*dev, a, b, c, n);
      xp_row(ops, *dev, source, a, b, c, h, xs, kLookups);
      xs["ok"] = true;
    } catch (const std::exception& e) {
      xs["error"] = e.what();
    }
    xp_hit.samples.push_back(xs);
  }

  // ---- Report ----
  const std::vector<const Row*> rows{&raw_fresh, &xp_cold, &xp_warm, &xp_warm_small, &nvcc, &raw_parent, &xp_hit};
  std::printf(
      "| row | process | build ms | first ms | build+first ms | steady ms | GB/s | host us/launch (n=%d) | bits |\n",
      bn::kHostN);
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (const Row* r : rows) {
    std::string label = r->label;
    if (r->id == "nvcc" && !r->samples.empty() && !text_of(r->samples.front(), "arch").empty())
      label = "nvcc -arch=" + text_of(r->samples.front(), "arch") + " program";
    if (!r->skipped.empty()) {
      std::printf("| %s | - | skipped: %s | | | | | | |\n", label.c_str(), r->skipped.c_str());
      continue;
    }
    const std::string build = r->id == "nvcc" ? "n/a (ahead of time)" : cell(*r, "build_ms");
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label.c_str(), r->process.c_str(), build.c_str(),
                cell(*r, "first_ms").c_str(), cell(*r, "total_ms").c_str(), cell(*r, "steady_ms").c_str(),
                cell(*r, "gbps").c_str(), cell(*r, "host_us").c_str(), bits_cell(*r).c_str());
  }
  std::printf(
      "\nMedian (min..max) of %d run%s. fresh: a new process per run; parent: this process, same buffers.\n"
      "build: NVRTC + cuModuleLoadData + cuModuleGetFunction (raw), Program() + Program::kernel() (xp).\n"
      "first: the first launch call to its completion (synchronized); the nvcc program's includes the runtime's\n"
      "lazy module load. steady: CUDA events on the launching stream around %d launches after %d warm-ups.\n"
      "host: %d back-to-back launches at n = %d timed with the host clock, then one synchronize.\n\n",
      args.runs, args.runs == 1 ? "" : "s", bn::kTimed, bn::kWarmups, bn::kHostLaunches, bn::kHostN);

  std::vector<Ratio> ratios;
  ratios.push_back({"xp host us / raw host us (in-process, same buffers)",
                    divide(stat(xp_hit, "host_us"), stat(raw_parent, "host_us")), 1.1, false, ""});
  ratios.push_back({"xp host us / raw host us (fresh processes, warm-cache xp)",
                    divide(stat(xp_warm, "host_us"), stat(raw_fresh, "host_us")), 1.1, false, ""});
  {
    // Up to the launch call's return: to completion would add the kernel's own run, which at
    // n = 2^27 alone exceeds 0.3 ms (the table's build+first column has it).
    const auto warm = stat(xp_warm, "to_launch_ms");
    ratios.push_back({"xp warm cache: Program() + kernel() (disk lookup, module load) + first launch call, ms",
                      warm ? std::optional<double>(warm->median) : std::nullopt, 0.3, false,
                      "not a ratio; up to the launch call's return, the kernel's run excluded"});
    const auto small = stat(xp_warm_small, "total_ms");
    ratios.push_back({"xp warm cache, n = 2^22: Program() + kernel() + first launch to completion, ms",
                      small ? std::optional<double>(small->median) : std::nullopt, 0.3, false,
                      "not a ratio; the seed's first ms, lookup, load, launch and the kernel's run"});
  }
  {
    const auto nv = stat(raw_fresh, "nvrtc_ms");
    const auto ld = stat(raw_fresh, "load_ms");
    std::optional<Stat> base;
    if (nv && ld) base = Stat{nv->median + ld->median, 0, 0, 1};
    ratios.push_back({"xp cold build / (raw NVRTC compile + cuModuleLoadData), fresh processes",
                      divide(stat(xp_cold, "build_ms"), base), 1.1, false, ""});
  }
  {
    const auto lk = stat(xp_hit, "lookup_us");
    ratios.push_back({"xp in-process hit: Program::kernel() on a 2nd Program of the same source, us",
                      lk ? std::optional<double>(lk->median) : std::nullopt, 2.0, false,
                      "not a ratio; the first such call in the run, once"});
    const auto np = stat(xp_hit, "new_program_lookup_us");
    ratios.push_back({"xp Program::kernel() on a new Program of the same source, us",
                      np ? std::optional<double>(np->median) : std::nullopt, 2.0, false,
                      "not a ratio; median of " + std::to_string(kLookups) + " new Programs"});
    const auto re = stat(xp_hit, "relookup_us");
    ratios.push_back({"xp Program::kernel() again on the same Program (module loaded), us",
                      re ? std::optional<double>(re->median) : std::nullopt, 2.0, false,
                      "not a ratio; median of " + std::to_string(kLookups) + " calls"});
  }
  ratios.push_back({"xp steady / nvcc steady (warm-cache xp, fresh processes) at n = " + std::to_string(n),
                    divide(stat(xp_warm, "steady_ms"), stat(nvcc, "steady_ms")), 0.02, true,
                    nvcc_exe.empty() ? "no nvcc row" : ""});
  ratios.push_back({"xp steady / raw steady (fresh processes)",
                    divide(stat(xp_warm, "steady_ms"), stat(raw_fresh, "steady_ms")), 0.02, true, ""});

  std::printf("| against the baseline (ratio of medians) | value | goal | verdict |\n|---|---:|---|---|\n");
  json ratio_json = json::array();
  for (const auto& r : ratios) {
    std::string verdict = "n/a";
    bool met = false;
    if (r.value) {
      met = r.within ? std::abs(*r.value - 1.0) <= r.goal : *r.value <= r.goal;
      verdict = met ? "met" : "NOT met";
    }
    char goal[64];
    if (r.within)
      std::snprintf(goal, sizeof goal, "within %.0f%% of 1", r.goal * 100);
    else
      std::snprintf(goal, sizeof goal, "<= %g", r.goal);
    const std::string name = r.note.empty() ? r.name : r.name + " (" + r.note + ")";
    std::printf("| %s | %s | %s | %s |\n", name.c_str(), r.value ? number(*r.value).c_str() : "n/a", goal,
                verdict.c_str());
    ratio_json.push_back({{"name", r.name},
                          {"value", r.value ? json(*r.value) : json(nullptr)},
                          {"goal", goal},
                          {"met", r.value ? json(met) : json(nullptr)},
                          {"note", r.note}});
  }

  bool failed = false;
  json rows_json = json::array();
  for (const Row* r : rows) {
    json rj = {{"id", r->id}, {"label", r->label}, {"process", r->process}};
    rj["skipped"] = r->skipped.empty() ? json(nullptr) : json(r->skipped);
    json summary = json::object();
    for (const char* k : {"build_ms", "first_ms", "total_ms", "launch_call_ms", "to_launch_ms", "steady_ms", "gbps",
                          "host_us", "nvrtc_ms", "load_ms", "function_ms", "program_ms", "kernel_ms", "lookup_us",
                          "new_program_lookup_us", "relookup_us"})
      if (auto sj = stat_json(*r, k); !sj.is_null()) summary[k] = sj;
    rj["summary"] = summary;
    rj["bits"] = bits_cell(*r);
    rj["samples"] = r->samples;
    rows_json.push_back(rj);
    if (r->skipped.empty() && row_failed(*r)) {
      failed = true;
      for (std::size_t i = 0; i < r->samples.size(); ++i) {
        const json& s = r->samples[i];
        if (!flag(s, "ok"))
          std::printf("\n%s, run %zu: error: %s", r->id.c_str(), i + 1, text_of(s, "error").c_str());
        else if (!flag(s, "bits_ok"))
          std::printf("\n%s, run %zu: bits differ: %s", r->id.c_str(), i + 1, text_of(s, "mismatch").c_str());
      }
    }
  }
  if (failed) std::printf("\n");
  doc["rows"] = rows_json;
  doc["ratios"] = ratio_json;
  if (!args.json_file.empty()) {
    write_json(args.json_file, doc);
    std::printf("\nwrote %s\n", args.json_file.c_str());
  }
  return failed ? 1 : 0;
}

}  // namespace

int bench_launch(const BenchLaunchArgs& args) {
  if (args.n < 1 || args.n > INT_MAX) throw xp::ValueError("--n must be in [1, " + std::to_string(INT_MAX) + "]");
  if (args.runs < 1) throw xp::ValueError("--runs must be at least 1");
  try {
    if (args.row == "raw-child") return raw_child(args);
    if (args.row == "xp-child") return xp_child(args);
    if (!args.row.empty()) throw xp::ValueError("--row " + args.row + ": expected raw-child or xp-child");
    return parent(args);
  } catch (const xp::Error&) {
    throw;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xp bench launch: %s\n", e.what());
    return 1;
  }
}

}  // namespace xp_cli
