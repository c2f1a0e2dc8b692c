// `xp bench launch` (bench_launch.hpp). The parent starts one child process per process-level row
// and run, reads the JSON line each prints, runs the two in-process rows itself, then prints medians,
// ratios against the raw row and, with --json, everything.
//
// The raw rows are the baseline: the driver API and NVRTC called directly, through entry points
// this file declares and resolves itself (cuGetProcAddress_v2 at CUDA 12.0, legacy-stream flavour),
// so they share nothing with xp but the kernel text, the buffers' contents and the clock.
#include "bench_launch.hpp"

#include <stdarg.h>

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "bench_plot.hpp"
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

// Device buffers of one size (a, b and c for the raw child; the parent's rows share xp::Buffers
// instead), freed together.
struct Buffers {
  const Driver& d;
  std::vector<CUdeviceptr> p;
  Buffers(const Driver& drv, std::size_t bytes, std::size_t count = 3) : d(drv), p(count, 0) {
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
  void launch_n(std::size_t n) {  // a sweep's size, n <= the buffers' size
    int nn = static_cast<int>(n);
    void* args[4] = {&a_, &b_, &c_, &nn};
    launch(grid_for(n), args);
  }
  void sync() { raw::check(d_, d_.cuStreamSynchronize(stream_), "cuStreamSynchronize"); }
  void fill_nan() {
    raw::check(d_, d_.cuMemsetD8(c_, 0xFF, n_ * sizeof(float)), "cuMemsetD8");
    raw::check(d_, d_.cuCtxSynchronize(), "cuCtxSynchronize");  // the memset is on the legacy stream
  }
  void read_output(float* out, std::size_t n = 0) {
    raw::check(d_, d_.cuCtxSynchronize(), "cuCtxSynchronize");
    raw::check(d_, d_.cuMemcpyDtoH(out, c_, (n == 0 ? n_ : n) * sizeof(float)), "cuMemcpyDtoH");
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
  void launch_n(std::size_t n) {  // a sweep's size, n <= the buffers' size
    xp::LaunchConfig cfg = big_;
    cfg.grid = grid_for(n);
    kernel_.launch(cfg, a_, b_, c_, static_cast<int>(n));
  }
  void sync() { stream_.synchronize(); }
  void fill_nan() {
    c_.fill_bytes(0xFF);
    xp::synchronize(dev_);  // every stream of the context, whichever one the fill ran on
  }
  void read_output(float* out, std::size_t n = 0) {
    xp::synchronize(dev_);
    c_.copy_to_host(out, (n == 0 ? n_ : n) * sizeof(float));
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

// A sweep: at each size, NaN-fill, 3 warm-ups, 10 launches between events, then the bit check of
// the first n elements. One "#progress K/M" line per size for the parent's progress bar.
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

// ---- Array rows: xp::Array on the GPU or the CPU -------------------------------------------------

// The array rows' host data: a, b, c and the references of a + b, a*b+c rounded twice (as NumPy and
// xp compute it) and fmaf(a, b, c) (what a compiler that contracts gives).
struct ArrayHostData {
  std::size_t n;
  std::vector<float> a, b, c, add, fma_separate, fma_fused;
  explicit ArrayHostData(std::size_t n_) : n(n_), a(n_), b(n_), c(n_), add(n_), fma_separate(n_), fma_fused(n_) {
    bn::make_inputs(a.data(), b.data(), add.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      c[i] = bn::input_c(i);
      volatile float product = a[i] * b[i];  // rounded on its own (the build has -ffp-contract=off too)
      fma_separate[i] = product + c[i];
      fma_fused[i] = std::fma(a[i], b[i], c[i]);
    }
  }
};

// Writes a, b, c and the three references, n floats each, as raw little-endian float32 files for
// the Python rows (bench/python/launch_rows.py reads them).
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

// ---- Row "raw-first": the bare driver's first c = a + b of a process ------------------------------

// The steps of xp's first c = a + b with a warm disk cache, done with the driver alone: the cubin
// read from a file (compiled by NVRTC and written there by the row's first process), loaded, the
// result allocated, one launch, synchronize. Its kernel reads and writes 16 bytes per thread, as
// xp's contiguous kernels do, so that the kernel's run weighs the same in both rows.
constexpr const char* kFirstAddName = "xp_bench_first_add";
constexpr const char* kFirstAddSource = R"(extern "C" __global__ void xp_bench_first_add(
    const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, unsigned long long n) {
  const unsigned long long q = n / 4;
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < q) {
    const float4 x = reinterpret_cast<const float4*>(a)[i];
    const float4 y = reinterpret_cast<const float4*>(b)[i];
    reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  if (i < n - 4 * q) c[4 * q + i] = a[4 * q + i] + b[4 * q + i];
}
)";

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

// ---- sum and matmul rows: xp::Array on the GPU or the CPU, checked within a bound ---------------

// matmul-tf32: float32 with TF32 permitted (xp's MatmulPrecision::tf32, CUPY_TF32=1, allow_tf32), on
// the float32 rows' inputs.
bool is_matmul_op(const std::string& op) {
  return op == "matmul-f32" || op == "matmul-f16" || op == "matmul-tf32";
}

bool is_checked_op(const std::string& op) {
  return op == "sum" || is_matmul_op(op);
}

// The size a row of `op` runs at: the elementwise rows at n (--n), the sum rows at 2^28 on a GPU
// (n on the CPU), the matmul rows at 8192 x 8192 x 8192 on a GPU (512 on the CPU).
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

// ---- The parent ---------------------------------------------------------------------------------

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// Runs a shell command line, returns the last JSON line it printed (or an error sample). Lines
// "#progress K/M" go to on_progress as they come.
json run_child(const std::string& row, const std::string& command, std::size_t n,
               const std::function<void(std::size_t, std::size_t)>& on_progress = {}) {
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

using Samples = std::vector<json>;

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

// A sample's check passed: within its bound (sum and matmul rows) or bit for bit (the others).
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

// Written whole or not at all: into a temporary file beside it, renamed over it. A symbolic link
// is followed to the file it ends at, which is renamed over (the link stays a link); a device or a
// FIFO (--json /dev/stdout) is written in place, never renamed over.
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

// The output files are checked before the run, so that a mistyped path costs no benchmark.
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

// Output printed on the terminal and kept for --md.
struct Report {
  std::string text;
  void operator()(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    va_list ap;
    va_start(ap, fmt);
    char stack[4096];
    va_list copy;
    va_copy(copy, ap);
    const int len = std::vsnprintf(stack, sizeof stack, fmt, copy);
    va_end(copy);
    std::string s;
    if (len >= static_cast<int>(sizeof stack)) {
      s.resize(static_cast<std::size_t>(len) + 1);
      std::vsnprintf(s.data(), s.size(), fmt, ap);
      s.resize(static_cast<std::size_t>(len));
    } else if (len > 0) {
      s.assign(stack, static_cast<std::size_t>(len));
    }
    va_end(ap);
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
    text += s;
  }
};

// A figure with its goal: value <= goal (at_most), value >= goal (at_least), |value - 1| <= goal
// (within), or no goal (info).
struct Ratio {
  enum class Kind { at_most, at_least, within, info };
  std::string name;
  std::optional<double> value;
  double goal;
  Kind kind;
  std::string note;
};

std::optional<double> divide(const std::optional<Stat>& a, const std::optional<Stat>& b) {
  if (!a || !b || b->median <= 0) return std::nullopt;
  return a->median / b->median;
}

std::optional<double> median_of(const std::optional<Stat>& a) {
  return a ? std::optional<double>(a->median) : std::nullopt;
}

// One row of the benchmark: a command run in fresh processes (or, for the in-process rows, code
// of the parent).
struct Row {
  // device "gpu"/"cpu"; op "add", "fma", "sum", "matmul-f32", "matmul-f16" or "matmul-tf32"; source
  // "C++"/"Python"
  std::string id, label, device, op, source;
  std::string skipped;  // why the row does not run at all
  std::string note;
  // The command for size n (or the sweep's sizes), its caches under cache_root.
  std::function<std::string(std::size_t n, const std::string& sizes, const fs::path& cache_root)> command;
  std::size_t n_override = 0;  // the row's own n (xp at 2^22, sum and matmul: size_for)
  bool in_process = false;
  Samples first, second;  // samples of the first and the second fresh process (in-process: first only)
};

// The variables that point every cache a row may use into cache_root: a new empty folder before a
// row's first process, kept for its second. For the matmul rows also no CUPY_TF32 (CuPy would
// compute float32 in TF32), but CUPY_TF32=1 for the TF32 rows, and no NVIDIA_TF32_OVERRIDE: each
// library's own setting decides.
std::string cache_env(const fs::path& root, const std::string& op = "") {
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

constexpr const char* kCachesLine =
    "Caches emptied before each row's first process (a new empty folder per row and run; the second process finds "
    "what the first stored): xp's kernel cache (XP_CACHE_DIR), the driver's JIT cache (CUDA_CACHE_PATH), CuPy's "
    "kernel cache (CUPY_CACHE_DIR), TorchInductor's and Triton's (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR), "
    "Numba's (NUMBA_CACHE_DIR; @cuda.jit stores nothing without cache=True) and PyCUDA's compiler cache "
    "(SourceModule's cache_dir).";

fs::path make_temp_dir(const char* prefix) {
  std::string tmpl = (fs::temp_directory_path() / (std::string(prefix) + "XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
  return tmpl;
}

struct TempDir {
  fs::path path;
  explicit TempDir(const char* prefix) : path(make_temp_dir(prefix)) {}
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

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

// What the parent knows of the machine and how it starts each row.
struct Setup {
  bool gpu = false;               // GPU rows (else the CPU rows)
  std::string gpu_skip;           // why there are no GPU rows
  std::optional<xp::Device> dev;  // the GPU, when usable
  fs::path self, kernel_file, nvcc_exe, python_rows;
  std::string source;  // the kernel snippet
  std::string python;
  std::string python_skip;  // why there are no Python rows
  json python_list;         // launch_rows.py list
  std::string driver_path, nvrtc_path;
  std::vector<std::string> includes;
  int arch = 0;
  int threads = 1;
};

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

// Every process-level row of this machine's mode, in table order.
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

// The command of a row, with the Python rows' data folder.
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

// The inputs and references of the Python rows that will run, written once into dir.
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

// The tables of one process (the first or the second of each row): the elementwise rows, then the
// sum rows and the matmul rows, each in a table of its own.
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

// A goal is judged on the medians of one run of at least kRunsForAVerdict processes per row, never
// on fewer (nor on the best of several runs: when runs of one command disagree, each is reported).
constexpr int kRunsForAVerdict = 5;

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

// The goals: from "Kernels" (the launch path) and "Arrays on the GPU" (the array rows), or the
// CPU rows' figures against NumPy and numexpr (information only: the CPU goals have their own
// benchmark, bench/run_cpu_arrays.sh).
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

// SIGINT or SIGTERM during `xp bench launch` (Ctrl-C, `timeout`): the runs stop, and the report and
// its files cover the samples that finished, so that a run cut short still leaves its numbers.
volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

// The handlers while the parent's runs go on; the previous ones come back when it goes. The
// children (through popen and exec) start with the default actions.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  static int stopped() { return g_stop_signal; }
  static const char* name() { return g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM"; }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

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

}  // namespace

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
