#pragma once

// What the files of `xp bench launch` and `xp bench sweep` share (bench_launch.hpp is the command's
// interface): the constants, the raw driver and NVRTC declarations (bench_driver.cpp), the types of
// the rows, samples and report, and every function one of them calls in another:
//   bench_launch.cpp       the parent: finding files, the rows, running the children, the entry points
//   bench_driver.cpp       the raw baseline's driver API and NVRTC, declared and resolved here
//   bench_kernel_rows.cpp  the kernel rows' launches (raw and xp) and the raw and xp child processes
//   bench_array_rows.cpp   the array rows (xp::Array a + b, a*b + c, sum, matmul) and their children,
//                          and the raw driver's first c = a + b of a process
//   bench_report.cpp       samples, medians, cells, tables, ratios and the JSON and Markdown outputs
//   bench_sweep.cpp        `xp bench sweep`
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

namespace xp_cli::launch {

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
using Samples = std::vector<json>;
constexpr const char* kCachesLine =
    "Caches emptied before each row's first process (a new empty folder per row and run; the second process finds "
    "what the first stored): xp's kernel cache (XP_CACHE_DIR), the driver's JIT cache (CUDA_CACHE_PATH), CuPy's "
    "kernel cache (CUPY_CACHE_DIR), TorchInductor's and Triton's (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR), "
    "Numba's (NUMBA_CACHE_DIR; @cuda.jit stores nothing without cache=True) and PyCUDA's compiler cache "
    "(SourceModule's cache_dir).";
// A goal is judged on the medians of one run of at least kRunsForAVerdict processes per row, never
// on fewer (nor on the best of several runs: when runs of one command disagree, each is reported).
constexpr int kRunsForAVerdict = 5;

// ---- The raw baseline: the driver API and NVRTC, declared here (bench_driver.cpp) ----------------

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

void check(const Driver& d, CUresult r, const char* call);
void* open_library(const std::string& path);

// Loaded once per process: opened, entry points resolved and cuInit called.
const Driver& driver(const std::string& path);

const Nvrtc& nvrtc(const std::string& path);

// The options xp gives NVRTC: the architecture, then -I for each toolkit include folder.
std::vector<std::string> options(int arch, const std::vector<std::string>& includes);

// Source -> cubin.
std::vector<char> compile(const Nvrtc& nv, const std::string& source, const std::vector<std::string>& opts);

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

struct HostData;
class RawOps;
class XpOps;
struct RawSetup;
struct ArrayHostData;
class DeviceTimer;
class ArrayOps;
struct Stat;
struct Report;
struct Ratio;
struct Row;
struct TempDir;
struct Setup;
class StopSignals;
class ProgressBar;

double ms_between(Clock::time_point a, Clock::time_point b);

// The text between the markers, exactly (bench/CMakeLists.txt cuts the same bytes for nvcc).
std::string read_snippet(const fs::path& path);

fs::path exe_path();

bool is_file(const fs::path& p);

fs::path find_kernel_file(const std::string& given);

unsigned grid_for(std::size_t n);

xp::Buffer upload(const xp::Device& dev, const float* host, std::size_t n);

bool flag(const json& s, const char* key);

std::string text_of(const json& s, const char* key);

json new_sample(const std::string& row, std::size_t n);

// Compares the output read back with the reference; the first mismatch of a row is kept.
void check_output(json& s, const HostData& h, const char* stage);

// A sweep: at each size, NaN-fill, 3 warm-ups, 10 launches between events, then the bit check of
// the first n elements. One "#progress K/M" line per size for the parent's progress bar.
std::vector<std::size_t> parse_sizes(const std::string& text);

std::size_t max_size(std::size_t n, const std::vector<std::size_t>& sizes);

json sweep_point(std::size_t n, double steady_ms, double bytes_per_element, long long mismatch,
                 const std::string& text);

void print_progress(std::size_t k, std::size_t m);

// Row "raw": NaN-fill, compile + load + get function (build), first launch to completion (first).
void raw_row(RawOps& ops, const raw::Nvrtc& nv, const std::string& source, const RawSetup& setup, HostData& h, json& s);

xp::ProgramOptions program_options();

// Rows "xp": NaN-fill, Program + kernel() (build), first launch to completion (first). In the
// parent (lookups > 0) also the time of kernel() again on the same Program, module loaded.
void xp_row(XpOps& ops, const xp::Device& dev, const std::string& source, const xp::Buffer& a, const xp::Buffer& b,
            const xp::Buffer& c, HostData& h, json& s, int lookups);

void print_sample(const json& s);

int raw_child(const BenchLaunchArgs& args);

int xp_child(const BenchLaunchArgs& args);

// Writes a, b, c and the three references, n floats each, as raw little-endian float32 files for
// the Python rows (bench/python/launch_rows.py reads them).
void write_data_files(const fs::path& dir, const ArrayHostData& h);

int raw_first_child(const BenchLaunchArgs& args);

int array_child(const BenchLaunchArgs& args);

// matmul-tf32: float32 with TF32 permitted (xp's MatmulPrecision::tf32, CUPY_TF32=1, allow_tf32), on
// the float32 rows' inputs.
bool is_matmul_op(const std::string& op);

bool is_checked_op(const std::string& op);

// The size a row of `op` runs at: the elementwise rows at n (--n), the sum rows at 2^28 on a GPU
// (n on the CPU), the matmul rows at 8192 x 8192 x 8192 on a GPU (512 on the CPU).
std::size_t size_for(const std::string& op, bool gpu, std::size_t n);

std::string shell_quote(const std::string& s);

// Runs a shell command line, returns the last JSON line it printed (or an error sample). Lines
// "#progress K/M" go to on_progress as they come.
json run_child(const std::string& row, const std::string& command, std::size_t n,
               const std::function<void(std::size_t, std::size_t)>& on_progress = {});

std::string number(double x);

std::string bits_cell(const Samples& samples);

// A sample's check passed: within its bound (sum and matmul rows) or bit for bit (the others).
bool passed(const json& s);

bool failed(const Samples& samples);

std::optional<double> largest(const Samples& samples, const char* key);

// Written whole or not at all: into a temporary file beside it, renamed over it. A symbolic link
// is followed to the file it ends at, which is renamed over (the link stays a link); a device or a
// FIFO (--json /dev/stdout) is written in place, never renamed over.
void write_text(const std::string& requested, const std::string& text);

// The output files are checked before the run, so that a mistyped path costs no benchmark.
void check_output(const char* option, const std::string& file);

void check_outputs(const BenchLaunchArgs& args);

void write_json(const std::string& file, const json& doc);

// The variables that point every cache a row may use into cache_root: a new empty folder before a
// row's first process, kept for its second. For the matmul rows also no CUPY_TF32 (CuPy would
// compute float32 in TF32), but CUPY_TF32=1 for the TF32 rows, and no NVIDIA_TF32_OVERRIDE: each
// library's own setting decides.
std::string cache_env(const fs::path& root, const std::string& op = "");

fs::path make_temp_dir(const char* prefix);

fs::path find_python_rows(const std::string& given);

Setup make_setup(const BenchLaunchArgs& args);

// Every process-level row of this machine's mode, in table order.
std::vector<Row> make_rows(const BenchLaunchArgs& args, const Setup& st, bool sweep);

// The command of a row, with the Python rows' data folder.
std::string command_for(const Row& r, std::size_t n, const std::string& sizes, const fs::path& root,
                        const fs::path& data);

bool any_python(const std::vector<Row>& rows);

// The inputs and references of the Python rows that will run, written once into dir.
void write_python_data(const fs::path& dir, const std::vector<Row>& rows, std::size_t n, bool gpu);

// The tables of one process (the first or the second of each row): the elementwise rows, then the
// sum rows and the matmul rows, each in a table of its own.
void print_table(Report& out, const std::vector<Row>& rows, bool second, bool gpu, std::size_t n);

void print_ratios(Report& out, const std::vector<Ratio>& ratios, int runs, json& ratio_json);

// The goals: from "Kernels" (the launch path) and "Arrays on the GPU" (the array rows), or the
// CPU rows' figures against NumPy and numexpr (information only: the CPU goals have their own
// benchmark, bench/run_cpu_arrays.sh).
std::vector<Ratio> ratios_of(const std::vector<Row>& rows, bool gpu, std::size_t n);

json versions_of(const std::vector<Row>& rows);

void print_header(Report& out, const Setup& st, const char* what, std::size_t n, int runs, json& doc);

void print_versions(Report& out, const json& versions);

json row_json(const Row& r);

void on_stop_signal(int sig);

int parent(const BenchLaunchArgs& args);

int sweep(const BenchLaunchArgs& args);

// Host copies of the inputs, the reference and the output read back.
struct HostData {
  std::size_t n;
  std::unique_ptr<float[]> a, b, ref, out;
  explicit HostData(std::size_t n_)
      : n(n_), a(new float[n_]), b(new float[n_]), ref(new float[n_]), out(new float[n_]) {
    bn::make_inputs(a.get(), b.get(), ref.get(), n);
  }
};

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

struct RawSetup {
  std::string driver_path, nvrtc_path;
  std::vector<std::string> includes;
  int arch = 0;
};

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

// SIGINT or SIGTERM during `xp bench launch` (Ctrl-C, `timeout`): the runs stop, and the report and
// its files cover the samples that finished, so that a run cut short still leaves its numbers.
inline volatile sig_atomic_t g_stop_signal = 0;

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

}  // namespace xp_cli::launch
