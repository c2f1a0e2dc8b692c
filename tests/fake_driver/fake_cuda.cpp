// A fake CUDA driver (libxp_fake_cuda.so) for tests that run without a GPU. It exports
// cuGetProcAddress_v2, cuDriverGetVersion and every entry point of XP_DRIVER_FUNCTIONS
// (src/runtime/driver.hpp), with CUDA 12.0 ABI signatures declared here (no CUDA header).
//
// Its answers come from XP_FAKE_CUDA, a comma-separated list read once per process:
//   devices=N      devices the fake has (default 1). devices=0: cuInit succeeds and
//                  cuDeviceGetCount says 0 (the path xp reports as no_device).
//   init=N         cuInit returns the CUresult N (100 CUDA_ERROR_NO_DEVICE, 35 ..._INSUFFICIENT_DRIVER).
//   missing=SYM    cuGetProcAddress_v2 answers CUDA_SUCCESS, a null pointer and SYMBOL_NOT_FOUND for
//                  SYM, as a real driver does for an entry point it lacks; repeat for several.
//   version=N      cuDriverGetVersion (default 13000, CUDA 13.0).
//   cc=M.m         compute capability of every device (default 9.0).
//   name=TEXT      device name (default "xp fake GPU").
//   stub           behave as the toolkit's stubs/libcuda.so: every call returns CUDA_ERROR_STUB_LIBRARY.
//   hollow         also export the memory, stream, event, module and launch entry points (below), so
//                  that xp's CUDA backend runs end to end with nothing executed on a device.
//   memory=BYTES   with hollow: each device's memory (default 4 GiB); cuMemGetInfo's free is what
//                  the fake has not handed out, and cuMemAlloc beyond it is CUDA_ERROR_OUT_OF_MEMORY.
//   pending        with hollow: a recorded event stays CUDA_ERROR_NOT_READY until it, its stream or
//                  the context is synchronized, as if the device were slow (without it, every event
//                  is complete when recorded).
//   fail=CALL:CODE@N   the Nth call of the entry point CALL (counted from 1, every call of it in the
//                  process) returns the CUresult CODE and does nothing else; the other calls go on.
//                  Any entry point but cuGetProcAddress_v2, cuGetErrorName and cuGetErrorString.
//                  Repeat for several faults; the first that applies answers. Suffixes of N:
//     @N+          every call of CALL from the Nth on returns CODE (a resource that stays short).
//     @N!          sticky: the Nth call returns CODE and the context is broken (every device's, in
//                  this fake): from then on every call on a context (memory, copies, streams, events,
//                  modules, functions, launches, cuCtxSynchronize, cuMemGetInfo) returns CODE too,
//                  as after a kernel fault (700 CUDA_ERROR_ILLEGAL_ADDRESS, 719
//                  CUDA_ERROR_LAUNCH_FAILED) or a device gone (46 CUDA_ERROR_DEVICE_UNAVAILABLE).
//                  Device queries, cuInit, primary context retain/release and
//                  cuCtxGetCurrent/SetCurrent keep working.
//     @N~          the Nth call succeeds, and the context is broken from the next call on: a kernel
//                  launched fine that faults on the device, reported by whatever call comes next
//                  (cuStreamSynchronize, cuEventSynchronize, a copy...).
//                  Examples: fail=cuLaunchKernel:701@3 (the third launch is refused with
//                  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), fail=cuMemHostAlloc:2@1+ (no pinned memory),
//                  fail=cuModuleLoadData:222@1 (CUDA_ERROR_UNSUPPORTED_PTX_VERSION once),
//                  fail=cuLaunchKernel:700@2~ (the second kernel faults on the device).
//                  A malformed entry is reported on stderr and ignored.
// Like the real driver it honours CUDA_VISIBLE_DEVICES: a list of ordinals read up to the first
// invalid entry; when nothing is visible (empty, "-1", ...) cuInit returns CUDA_ERROR_NO_DEVICE.
// Every device call before cuInit returns CUDA_ERROR_NOT_INITIALIZED, invalid ordinals
// CUDA_ERROR_INVALID_DEVICE, context calls without a current context CUDA_ERROR_INVALID_CONTEXT.
//
// Besides the driver API it exports xp_fake_cuda_primary_ctx_refcount(ordinal), so that tests can
// check how often xp retained a primary context.
//
// The hollow device. Device memory is host memory (a CUdeviceptr is its address), so copies and
// memsets move real bytes, synchronously: every stream and event is complete at once. Modules load
// from a cubin (ELF) or PTX image and find a function when the image names it; cuLaunchKernel checks
// its arguments as the driver does and counts the launch, and the kernel does not run: what a kernel
// would write keeps whatever bytes were there. cuFuncGetParamInfo and cuModuleGetGlobal are not
// exported (xp reads the parameters from the cubin, or launches without checking them).
// xp_fake_cuda_modules_loaded(), xp_fake_cuda_launches(), xp_fake_cuda_stream_waits(),
// xp_fake_cuda_bytes_allocated(ordinal), xp_fake_cuda_calls(name) (the calls of one entry point, with
// or without hollow), xp_fake_cuda_sticky_error() (the code of a broken context, 0 while none) and
// xp_fake_cuda_trace() (which stream each launch, copy, event record and wait went to) let tests see
// what happened.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

using CUresult = int;
using CUdevice = int;
struct CUctx_st {
  int ordinal;
};
using CUcontext = CUctx_st*;
struct CUuuid {
  char bytes[16];
};

constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;
constexpr CUresult kNotInitialized = 3;
constexpr CUresult kStubLibrary = 34;
constexpr CUresult kNoDevice = 100;
constexpr CUresult kInvalidDevice = 101;
constexpr CUresult kInvalidContext = 201;
constexpr CUresult kNotFound = 500;

constexpr int kProcSuccess = 0;
constexpr int kProcSymbolNotFound = 1;
constexpr int kProcVersionNotSufficient = 2;

constexpr int kMaxDevices = 16;

struct NamedCode {
  CUresult code;
  const char* name;
  const char* text;
};
constexpr NamedCode kCodes[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER", "CUDA driver version is insufficient for CUDA runtime version"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

// An injected fault (XP_FAKE_CUDA=fail=CALL:CODE@N...): see the top of this file.
struct Fault {
  enum Kind { once, from, sticky, after };
  std::string call;
  CUresult code = 0;
  long at = 1;
  Kind kind = once;
};

struct Settings {
  int devices = 1;
  CUresult init_result = kSuccess;
  std::vector<std::string> missing;
  int version = 13000;
  int cc_major = 9, cc_minor = 0;
  std::string name = "xp fake GPU";
  bool stub = false;
  bool hollow = false;
  bool pending = false;
  std::size_t memory = std::size_t{4} << 30;
  std::vector<Fault> faults;
  // Physical ordinals visible through CUDA_VISIBLE_DEVICES, in visible order.
  std::vector<int> visible;
};

int to_int(const std::string& s, int fallback) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  return (s.empty() || *end != '\0') ? fallback : static_cast<int>(v);
}

// "CALL:CODE@N" with an optional suffix "+" (every call from the Nth on), "!" (sticky: the Nth call
// fails and so does every later call on a context) or "~" (the Nth call succeeds, every later call
// on a context fails, as after a kernel that faults on the device). False when malformed.
bool parse_fault(const std::string& v, Fault& f) {
  const size_t colon = v.find(':'), at = v.find('@');
  if (colon == std::string::npos || colon == 0 || at == std::string::npos || at < colon + 2) return false;
  f.call = v.substr(0, colon);
  f.code = to_int(v.substr(colon + 1, at - colon - 1), 0);
  std::string n = v.substr(at + 1);
  if (!n.empty() && (n.back() == '+' || n.back() == '!' || n.back() == '~')) {
    f.kind = n.back() == '+' ? Fault::from : n.back() == '!' ? Fault::sticky : Fault::after;
    n.pop_back();
  }
  f.at = to_int(n, 0);
  return f.code != 0 && f.at >= 1;
}

Settings read_settings() {
  Settings s;
  const char* spec = std::getenv("XP_FAKE_CUDA");
  std::string all = spec != nullptr ? spec : "";
  size_t b = 0;
  while (b < all.size()) {
    size_t e = all.find(',', b);
    if (e == std::string::npos) e = all.size();
    const std::string item = all.substr(b, e - b);
    b = e + 1;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "devices") {
      s.devices = to_int(value, 1);
      if (s.devices < 0) s.devices = 0;
      if (s.devices > kMaxDevices) s.devices = kMaxDevices;
    } else if (key == "init") {
      s.init_result = to_int(value, kSuccess);
    } else if (key == "missing") {
      s.missing.push_back(value);
    } else if (key == "version") {
      s.version = to_int(value, 13000);
    } else if (key == "cc") {
      const size_t dot = value.find('.');
      s.cc_major = to_int(value.substr(0, dot), 9);
      s.cc_minor = dot == std::string::npos ? 0 : to_int(value.substr(dot + 1), 0);
    } else if (key == "name") {
      s.name = value;
    } else if (key == "stub") {
      s.stub = true;
    } else if (key == "hollow") {
      s.hollow = true;
    } else if (key == "pending") {
      s.pending = true;
    } else if (key == "memory") {
      s.memory = static_cast<std::size_t>(std::strtoull(value.c_str(), nullptr, 10));
    } else if (key == "fail") {
      Fault f;
      if (parse_fault(value, f)) {
        s.faults.push_back(f);
      } else {
        std::fprintf(stderr, "fake_cuda: malformed XP_FAKE_CUDA entry '%s' (fail=CALL:CODE@N, N+, N! or N~)\n",
                     item.c_str());
      }
    } else if (!key.empty()) {
      std::fprintf(stderr, "fake_cuda: unknown XP_FAKE_CUDA entry '%s'\n", item.c_str());
    }
  }
  // The driver reads CUDA_VISIBLE_DEVICES up to the first entry it cannot use.
  if (const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES"); cvd != nullptr) {
    const std::string v = cvd;
    size_t p = 0;
    while (p <= v.size()) {
      size_t e = v.find(',', p);
      if (e == std::string::npos) e = v.size();
      std::string entry = v.substr(p, e - p);
      while (!entry.empty() && entry.front() == ' ') entry.erase(entry.begin());
      while (!entry.empty() && entry.back() == ' ') entry.pop_back();
      const int n = to_int(entry, -1);
      bool repeated = false;
      for (int seen : s.visible) repeated = repeated || seen == n;
      if (n < 0 || n >= s.devices || repeated) break;
      s.visible.push_back(n);
      p = e + 1;
    }
  } else {
    for (int i = 0; i < s.devices; ++i) s.visible.push_back(i);
  }
  return s;
}

const Settings& settings() {
  static const Settings s = read_settings();
  return s;
}

// Calls by entry point, and the sticky error of a broken context (0: none). Never destroyed, as
// the hollow device's lists: xp calls the driver while static objects are destroyed at exit.
std::mutex g_calls_mutex;
std::map<std::string, long>& g_calls = *new std::map<std::string, long>();
std::atomic<CUresult> g_sticky{0};

// Counts a call of `call` and answers the fault injected there, if any (0: none, go on). A call
// `on_context` (memory, streams, events, modules, launches, context synchronization) also fails with
// the sticky error of an earlier fault; device queries and context selection do not, as on a real
// driver whose context is broken.
CUresult injected(const char* call, bool on_context) {
  long n = 0;
  {
    std::lock_guard<std::mutex> lock(g_calls_mutex);
    n = ++g_calls[call];
  }
  if (on_context) {
    if (const CUresult sticky = g_sticky.load(); sticky != 0) return sticky;
  }
  for (const Fault& f : settings().faults) {
    if (f.call != call || n < f.at || (f.kind == Fault::once && n != f.at)) continue;
    if (f.kind == Fault::sticky || f.kind == Fault::after) {
      CUresult none = 0;
      g_sticky.compare_exchange_strong(none, f.code);
      if (f.kind == Fault::after) return kSuccess;  // this call goes on and succeeds
    }
    return f.code;
  }
  return kSuccess;
}

#define XP_FAKE_FAULT(call, on_context) \
  if (const CUresult fault_ = injected(call, on_context); fault_ != kSuccess) return fault_

std::atomic<bool> g_initialized{false};
CUctx_st g_contexts[kMaxDevices];
int g_refcount[kMaxDevices];
std::mutex g_mutex;
thread_local CUcontext t_current = nullptr;

int visible_count() {
  return static_cast<int>(settings().visible.size());
}

// Checks initialization and the ordinal; 0 when the call may go on.
CUresult check_device(CUdevice dev) {
  if (!g_initialized.load()) return kNotInitialized;
  if (dev < 0 || dev >= visible_count()) return kInvalidDevice;
  return kSuccess;
}

int physical(CUdevice dev) {
  return settings().visible[static_cast<size_t>(dev)];
}

// The hollow device's allocations, by address: device memory (ordinal >= 0) and pinned host memory
// (ordinal -1). Guarded by g_mutex.
struct Allocation {
  std::size_t bytes;
  int ordinal;
};
// Never destroyed, as the lists of the hollow device below: xp may free memory and destroy streams
// while static objects are destroyed at exit.
std::map<std::uintptr_t, Allocation>& g_allocations = *new std::map<std::uintptr_t, Allocation>();
std::size_t g_allocated[kMaxDevices];

std::size_t total_memory() {
  return settings().hollow ? settings().memory : std::size_t{141} << 30;
}
std::size_t free_memory(int ordinal) {
  if (!settings().hollow) return total_memory() - (std::size_t{3} << 29);  // 1.5 GiB in use
  std::lock_guard<std::mutex> lock(g_mutex);
  return total_memory() - g_allocated[ordinal];
}

bool is_context(CUcontext c) {
  for (int i = 0; i < kMaxDevices; ++i)
    if (c == &g_contexts[i]) return true;
  return false;
}

}  // namespace

FAKE_API CUresult cuDriverGetVersion(int* version) {
  XP_FAKE_FAULT("cuDriverGetVersion", false);
  if (settings().stub) return kStubLibrary;
  if (version == nullptr) return kInvalidValue;
  *version = settings().version;
  return kSuccess;
}

FAKE_API CUresult cuInit(unsigned int flags) {
  XP_FAKE_FAULT("cuInit", false);
  if (flags != 0) return kInvalidValue;
  const Settings& s = settings();
  if (s.stub) return kStubLibrary;
  if (s.init_result != kSuccess) return s.init_result;
  if (s.devices > 0 && s.visible.empty()) return kNoDevice;
  g_initialized.store(true);
  return kSuccess;
}

FAKE_API CUresult cuGetErrorName(CUresult error, const char** name) {
  if (name == nullptr) return kInvalidValue;
  for (const auto& c : kCodes) {
    if (c.code == error) {
      *name = c.name;
      return kSuccess;
    }
  }
  *name = nullptr;
  return kInvalidValue;
}

FAKE_API CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return kInvalidValue;
  for (const auto& c : kCodes) {
    if (c.code == error) {
      *text = c.text;
      return kSuccess;
    }
  }
  *text = nullptr;
  return kInvalidValue;
}

FAKE_API CUresult cuDeviceGetCount(int* count) {
  XP_FAKE_FAULT("cuDeviceGetCount", false);
  if (count == nullptr) return kInvalidValue;
  if (!g_initialized.load()) return kNotInitialized;
  *count = visible_count();
  return kSuccess;
}

FAKE_API CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  XP_FAKE_FAULT("cuDeviceGet", false);
  if (device == nullptr) return kInvalidValue;
  if (const CUresult r = check_device(ordinal); r != kSuccess) return r;
  *device = ordinal;
  return kSuccess;
}

FAKE_API CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  XP_FAKE_FAULT("cuDeviceGetName", false);
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (name == nullptr || len <= 0) return kInvalidValue;
  std::snprintf(name, static_cast<size_t>(len), "%s", settings().name.c_str());
  return kSuccess;
}

FAKE_API CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice dev) {
  XP_FAKE_FAULT("cuDeviceGetAttribute", false);
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (value == nullptr) return kInvalidValue;
  const Settings& s = settings();
  switch (attribute) {
    case 1:
      *value = 1024;
      break;  // MAX_THREADS_PER_BLOCK
    case 2:
    case 3:
      *value = 1024;
      break;  // MAX_BLOCK_DIM_X, _Y
    case 4:
      *value = 64;
      break;  // MAX_BLOCK_DIM_Z
    case 5:
      *value = 2147483647;
      break;  // MAX_GRID_DIM_X
    case 6:
    case 7:
      *value = 65535;
      break;  // MAX_GRID_DIM_Y, _Z
    case 8:
      *value = 48 * 1024;
      break;  // MAX_SHARED_MEMORY_PER_BLOCK
    case 10:
      *value = 32;
      break;  // WARP_SIZE
    case 39:
      *value = 2048;
      break;  // MAX_THREADS_PER_MULTIPROCESSOR
    case 97:
      *value = 227 * 1024;
      break;  // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    case 16:
      *value = 132;
      break;  // MULTIPROCESSOR_COUNT
    case 36:
      *value = 2619000;
      break;  // MEMORY_CLOCK_RATE, kHz
    case 37:
      *value = 5120;
      break;  // GLOBAL_MEMORY_BUS_WIDTH, bits
    case 38:
      *value = 50 * 1024 * 1024;
      break;  // L2_CACHE_SIZE, bytes
    case 75:
      *value = s.cc_major;
      break;  // COMPUTE_CAPABILITY_MAJOR
    case 76:
      *value = s.cc_minor;
      break;  // COMPUTE_CAPABILITY_MINOR
    default:
      return kInvalidValue;
  }
  return kSuccess;
}

FAKE_API CUresult cuDeviceTotalMem(std::size_t* bytes, CUdevice dev) {
  XP_FAKE_FAULT("cuDeviceTotalMem", false);
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (bytes == nullptr) return kInvalidValue;
  *bytes = total_memory();
  return kSuccess;
}

FAKE_API CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  XP_FAKE_FAULT("cuDeviceGetUuid", false);
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (uuid == nullptr) return kInvalidValue;
  // GPU-fa4ec0de-0000-4000-8000-0000000000NN, NN the physical ordinal.
  const unsigned char bytes[16] = {0xfa, 0x4e, 0xc0, 0xde, 0x00, 0x00, 0x40, 0x00,
                                   0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, static_cast<unsigned char>(physical(dev))};
  std::memcpy(uuid->bytes, bytes, sizeof bytes);
  return kSuccess;
}

FAKE_API CUresult cuDeviceGetPCIBusId(char* bus_id, int len, CUdevice dev) {
  XP_FAKE_FAULT("cuDeviceGetPCIBusId", false);
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (bus_id == nullptr || len < 13) return kInvalidValue;
  std::snprintf(bus_id, static_cast<size_t>(len), "0000:%02x:00.0", 0x19 + physical(dev));
  return kSuccess;
}

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  XP_FAKE_FAULT("cuDevicePrimaryCtxRetain", false);
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (ctx == nullptr) return kInvalidValue;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_contexts[dev].ordinal = dev;
  ++g_refcount[dev];
  *ctx = &g_contexts[dev];
  return kSuccess;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  XP_FAKE_FAULT("cuDevicePrimaryCtxRelease", false);
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_refcount[dev] == 0) return kInvalidContext;
  --g_refcount[dev];
  return kSuccess;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext* ctx) {
  XP_FAKE_FAULT("cuCtxGetCurrent", false);
  if (ctx == nullptr) return kInvalidValue;
  if (!g_initialized.load()) return kNotInitialized;
  *ctx = t_current;
  return kSuccess;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx) {
  XP_FAKE_FAULT("cuCtxSetCurrent", false);
  if (!g_initialized.load()) return kNotInitialized;
  if (ctx != nullptr && !is_context(ctx)) return kInvalidContext;
  t_current = ctx;
  return kSuccess;
}

namespace {
void complete_all_events();  // the hollow device's, below
}  // namespace

FAKE_API CUresult cuCtxSynchronize() {
  XP_FAKE_FAULT("cuCtxSynchronize", true);
  if (!g_initialized.load()) return kNotInitialized;
  if (t_current == nullptr) return kInvalidContext;
  complete_all_events();
  return kSuccess;
}

FAKE_API CUresult cuMemGetInfo(std::size_t* free, std::size_t* total) {
  XP_FAKE_FAULT("cuMemGetInfo", true);
  if (!g_initialized.load()) return kNotInitialized;
  if (t_current == nullptr) return kInvalidContext;
  if (free == nullptr || total == nullptr) return kInvalidValue;
  *free = free_memory(t_current->ordinal);
  *total = total_memory();
  return kSuccess;
}

FAKE_API int xp_fake_cuda_primary_ctx_refcount(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxDevices) return -1;
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_refcount[ordinal];
}

// ---- the hollow device (XP_FAKE_CUDA=hollow): see the top of this file

struct CUstream_st {
  int ordinal;
};
struct CUevent_st {
  unsigned flags;
  bool recorded;
  std::chrono::steady_clock::time_point when;
  bool done;                  // false while pending (XP_FAKE_CUDA=...,pending)
  const CUstream_st* stream;  // where it was last recorded
};
struct CUfunc_st;
struct CUmod_st {
  std::string image;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
};
struct CUfunc_st {
  CUmod_st* module;
  std::string name;
  int max_dynamic_shared;
};

namespace {

using CUdeviceptr = unsigned long long;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using B2DSize = std::size_t (*)(int);

constexpr CUresult kOutOfMemory = 2;
constexpr CUresult kInvalidImage = 200;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kNotReady = 600;

constexpr int kDefaultDynamicShared = 48 * 1024;
constexpr int kOptinShared = 227 * 1024;

// Guarded by g_mutex, never destroyed (as g_allocations).
auto& g_streams = *new std::vector<std::unique_ptr<CUstream_st>>();
auto& g_events = *new std::vector<std::unique_ptr<CUevent_st>>();
auto& g_modules = *new std::vector<std::unique_ptr<CUmod_st>>();
std::atomic<long> g_modules_loaded{0};
std::atomic<long> g_launches{0};
std::atomic<long> g_stream_waits{0};
// What went to which stream, one line per call (xp_fake_cuda_trace). Guarded by g_trace_mutex.
std::mutex g_trace_mutex;
auto& g_trace = *new std::string();
void trace(const char* what, int n, const void* a, const void* b = nullptr, const void* c = nullptr) {
  char line[160];
  if (n == 3)
    std::snprintf(line, sizeof line, "%s %p %p %p\n", what, a, b, c);
  else if (n == 2)
    std::snprintf(line, sizeof line, "%s %p %p\n", what, a, b);
  else
    std::snprintf(line, sizeof line, "%s %p\n", what, a);
  std::lock_guard<std::mutex> lock(g_trace_mutex);
  g_trace += line;
}

// Completes the events recorded on `stream` (every event when `all`). Called with g_mutex held.
void complete_events_locked(const CUstream_st* stream, bool all) {
  for (const auto& e : g_events)
    if (all || e->stream == stream) e->done = true;
}
void complete_all_events() {
  std::lock_guard<std::mutex> lock(g_mutex);
  complete_events_locked(nullptr, true);
}

// Checks that the call may use memory: initialized, a context current. 0 when it may.
CUresult check_context() {
  if (!g_initialized.load()) return kNotInitialized;
  return t_current == nullptr ? kInvalidContext : kSuccess;
}

// The allocation holding [p, p + bytes), of the kind asked (device: ordinal >= 0); null if none.
// Called with g_mutex held.
const Allocation* find_locked(std::uintptr_t p, std::size_t bytes, bool device) {
  auto it = g_allocations.upper_bound(p);
  if (it == g_allocations.begin()) return nullptr;
  --it;
  const Allocation& a = it->second;
  if ((a.ordinal >= 0) != device || p + bytes > it->first + a.bytes || p + bytes < p) return nullptr;
  return &a;
}
bool is_device_range(CUdeviceptr p, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return find_locked(static_cast<std::uintptr_t>(p), bytes, true) != nullptr;
}

// A stream the driver would accept: 0 (the legacy default), CU_STREAM_LEGACY (1), CU_STREAM_PER_THREAD
// (2) or one created and not destroyed.
// Whether `p` is one of the live objects of `list` (streams, events, modules).
template <class T>
bool is_live(const std::vector<std::unique_ptr<T>>& list, const T* p) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::any_of(list.begin(), list.end(), [p](const std::unique_ptr<T>& q) { return q.get() == p; });
}
// cuStreamDestroy, cuEventDestroy, cuModuleUnload: CUDA_ERROR_INVALID_HANDLE for what is not live.
template <class T>
CUresult destroy(std::vector<std::unique_ptr<T>>& list, const T* p) {
  if (!g_initialized.load()) return kNotInitialized;
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto it = std::find_if(list.begin(), list.end(), [p](const std::unique_ptr<T>& q) { return q.get() == p; });
  if (it == list.end()) return kInvalidHandle;
  list.erase(it);
  return kSuccess;
}

bool is_stream(CUstream s) {
  return reinterpret_cast<std::uintptr_t>(s) <= 2 || is_live(g_streams, s);
}
bool is_event(CUevent e) {
  return is_live(g_events, e);
}
bool is_function(CUfunction f) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& m : g_modules)
    for (const auto& [name, fn] : m->functions)
      if (fn.get() == f) return true;
  return false;
}

// The image's bytes: an ELF file (a cubin) up to the end of its section header table, or PTX text up
// to its terminating zero. Empty when it is neither.
std::string image_bytes(const void* image) {
  const auto* b = static_cast<const unsigned char*>(image);
  if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') {
    if (b[4] != 2) return {};  // ELFCLASS64 only, as every cubin
    std::uint64_t shoff = 0;
    std::uint16_t shentsize = 0, shnum = 0;
    std::memcpy(&shoff, b + 0x28, sizeof shoff);
    std::memcpy(&shentsize, b + 0x3a, sizeof shentsize);
    std::memcpy(&shnum, b + 0x3c, sizeof shnum);
    const std::uint64_t end = shoff + std::uint64_t{shentsize} * shnum;
    if (shnum == 0 || end > (std::uint64_t{1} << 30)) return {};
    return std::string(reinterpret_cast<const char*>(b), static_cast<std::size_t>(end));
  }
  const char* text = static_cast<const char*>(image);
  if (std::strstr(text, ".version") == nullptr || std::strstr(text, ".target") == nullptr) return {};
  return std::string(text);
}

// Whether the image defines an entry point of that name: a zero-terminated symbol name in a cubin,
// ".entry NAME(" in PTX.
bool image_names(const std::string& image, const std::string& name) {
  if (image.compare(0, 4,
                    "\x7f"
                    "ELF") == 0)
    return image.find('\0' + name + '\0') != std::string::npos;
  return image.find(".entry " + name + "(") != std::string::npos;
}

}  // namespace

FAKE_API CUresult cuMemAlloc(CUdeviceptr* dptr, std::size_t bytes) {
  XP_FAKE_FAULT("cuMemAlloc", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (dptr == nullptr || bytes == 0) return kInvalidValue;
  const int ordinal = t_current->ordinal;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (bytes > total_memory() - g_allocated[ordinal]) return kOutOfMemory;
  void* p = std::malloc(bytes);
  if (p == nullptr) return kOutOfMemory;
  g_allocations[reinterpret_cast<std::uintptr_t>(p)] = Allocation{bytes, ordinal};
  g_allocated[ordinal] += bytes;
  *dptr = reinterpret_cast<std::uintptr_t>(p);
  return kSuccess;
}

FAKE_API CUresult cuMemFree(CUdeviceptr dptr) {
  XP_FAKE_FAULT("cuMemFree", true);
  if (!g_initialized.load()) return kNotInitialized;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_allocations.find(static_cast<std::uintptr_t>(dptr));
  if (it == g_allocations.end() || it->second.ordinal < 0) return kInvalidValue;
  g_allocated[it->second.ordinal] -= it->second.bytes;
  std::free(reinterpret_cast<void*>(it->first));
  g_allocations.erase(it);
  return kSuccess;
}

FAKE_API CUresult cuMemHostAlloc(void** p, std::size_t bytes, unsigned flags) {
  XP_FAKE_FAULT("cuMemHostAlloc", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (p == nullptr || bytes == 0 || flags > 0xf) return kInvalidValue;
  *p = std::malloc(bytes);
  if (*p == nullptr) return kOutOfMemory;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_allocations[reinterpret_cast<std::uintptr_t>(*p)] = Allocation{bytes, -1};
  return kSuccess;
}

FAKE_API CUresult cuMemFreeHost(void* p) {
  XP_FAKE_FAULT("cuMemFreeHost", true);
  if (!g_initialized.load()) return kNotInitialized;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == g_allocations.end() || it->second.ordinal >= 0) return kInvalidValue;
  std::free(p);
  g_allocations.erase(it);
  return kSuccess;
}

FAKE_API CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream) {
  XP_FAKE_FAULT("cuMemcpyHtoDAsync", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (!is_stream(stream)) return kInvalidHandle;
  trace("copy", 1, stream);
  if (bytes == 0) return kSuccess;
  if (src == nullptr || !is_device_range(dst, bytes)) return kInvalidValue;
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return kSuccess;
}

FAKE_API CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  XP_FAKE_FAULT("cuMemcpyDtoHAsync", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (!is_stream(stream)) return kInvalidHandle;
  trace("copy", 1, stream);
  if (bytes == 0) return kSuccess;
  if (dst == nullptr || !is_device_range(src, bytes)) return kInvalidValue;
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return kSuccess;
}

FAKE_API CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  XP_FAKE_FAULT("cuMemcpyDtoDAsync", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (!is_stream(stream)) return kInvalidHandle;
  trace("copy", 1, stream);
  if (bytes == 0) return kSuccess;
  if (!is_device_range(dst, bytes) || !is_device_range(src, bytes)) return kInvalidValue;
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  return kSuccess;
}

FAKE_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, std::size_t n, CUstream stream) {
  XP_FAKE_FAULT("cuMemsetD8Async", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (!is_stream(stream)) return kInvalidHandle;
  trace("memset", 1, stream);
  if (n == 0) return kSuccess;
  if (!is_device_range(dst, n)) return kInvalidValue;
  std::memset(reinterpret_cast<void*>(dst), value, n);
  return kSuccess;
}

FAKE_API CUresult cuPointerGetAttribute(void* data, int attribute, CUdeviceptr ptr) {
  XP_FAKE_FAULT("cuPointerGetAttribute", true);
  if (!g_initialized.load()) return kNotInitialized;
  if (data == nullptr) return kInvalidValue;
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto p = static_cast<std::uintptr_t>(ptr);
  const Allocation* a = find_locked(p, 1, true);
  if (a == nullptr) a = find_locked(p, 1, false);
  if (a == nullptr) return kInvalidValue;  // memory the driver does not know
  if (attribute == 2) {                    // MEMORY_TYPE: CU_MEMORYTYPE_DEVICE 2, _HOST 1
    *static_cast<unsigned*>(data) = a->ordinal >= 0 ? 2u : 1u;
  } else if (attribute == 9) {  // DEVICE_ORDINAL
    *static_cast<int*>(data) = a->ordinal >= 0 ? a->ordinal : 0;
  } else {
    return kInvalidValue;
  }
  return kSuccess;
}

FAKE_API CUresult cuStreamCreate(CUstream* stream, unsigned flags) {
  XP_FAKE_FAULT("cuStreamCreate", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (stream == nullptr || flags > 1) return kInvalidValue;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_streams.push_back(std::make_unique<CUstream_st>(CUstream_st{t_current->ordinal}));
  *stream = g_streams.back().get();
  return kSuccess;
}

FAKE_API CUresult cuStreamDestroy(CUstream stream) {
  XP_FAKE_FAULT("cuStreamDestroy", true);
  return destroy(g_streams, stream);
}

FAKE_API CUresult cuStreamSynchronize(CUstream stream) {
  XP_FAKE_FAULT("cuStreamSynchronize", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (!is_stream(stream)) return kInvalidHandle;
  std::lock_guard<std::mutex> lock(g_mutex);
  complete_events_locked(stream, false);
  return kSuccess;
}

FAKE_API CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned flags) {
  XP_FAKE_FAULT("cuStreamWaitEvent", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (flags != 0) return kInvalidValue;
  if (!is_stream(stream) || !is_event(event)) return kInvalidHandle;
  ++g_stream_waits;
  trace("wait", 3, stream, event, event->stream);
  return kSuccess;
}

FAKE_API CUresult cuEventCreate(CUevent* event, unsigned flags) {
  XP_FAKE_FAULT("cuEventCreate", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (event == nullptr || flags > 7) return kInvalidValue;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_events.push_back(std::make_unique<CUevent_st>(CUevent_st{flags, false, {}, true, nullptr}));
  *event = g_events.back().get();
  return kSuccess;
}

FAKE_API CUresult cuEventDestroy(CUevent event) {
  XP_FAKE_FAULT("cuEventDestroy", true);
  return destroy(g_events, event);
}

FAKE_API CUresult cuEventRecord(CUevent event, CUstream stream) {
  XP_FAKE_FAULT("cuEventRecord", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (!is_event(event) || !is_stream(stream)) return kInvalidHandle;
  std::lock_guard<std::mutex> lock(g_mutex);
  event->recorded = true;
  event->when = std::chrono::steady_clock::now();
  event->done = !settings().pending;
  event->stream = stream;
  trace("record", 2, event, stream);
  return kSuccess;
}

FAKE_API CUresult cuEventQuery(CUevent event) {
  XP_FAKE_FAULT("cuEventQuery", true);
  if (!g_initialized.load()) return kNotInitialized;
  if (!is_event(event)) return kInvalidHandle;
  std::lock_guard<std::mutex> lock(g_mutex);
  return event->done ? kSuccess : kNotReady;  // never recorded: complete, as the driver says
}

FAKE_API CUresult cuEventSynchronize(CUevent event) {
  XP_FAKE_FAULT("cuEventSynchronize", true);
  if (!g_initialized.load()) return kNotInitialized;
  if (!is_event(event)) return kInvalidHandle;
  std::lock_guard<std::mutex> lock(g_mutex);
  event->done = true;
  return kSuccess;
}

FAKE_API CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  XP_FAKE_FAULT("cuEventElapsedTime", true);
  if (!g_initialized.load()) return kNotInitialized;
  if (ms == nullptr) return kInvalidValue;
  if (!is_event(start) || !is_event(end)) return kInvalidHandle;
  if (((start->flags | end->flags) & 2u) != 0) return kInvalidHandle;  // CU_EVENT_DISABLE_TIMING
  if (!start->recorded || !end->recorded) return kInvalidHandle;
  if (!start->done || !end->done) return kNotReady;
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return kSuccess;
}

FAKE_API CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  XP_FAKE_FAULT("cuModuleLoadData", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (module == nullptr || image == nullptr) return kInvalidValue;
  std::string bytes = image_bytes(image);
  if (bytes.empty()) return kInvalidImage;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_modules.push_back(std::make_unique<CUmod_st>());
  g_modules.back()->image = std::move(bytes);
  *module = g_modules.back().get();
  ++g_modules_loaded;
  return kSuccess;
}

FAKE_API CUresult cuModuleUnload(CUmodule module) {
  XP_FAKE_FAULT("cuModuleUnload", true);
  return destroy(g_modules, module);
}

FAKE_API CUresult cuModuleGetFunction(CUfunction* f, CUmodule module, const char* name) {
  XP_FAKE_FAULT("cuModuleGetFunction", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (f == nullptr || name == nullptr) return kInvalidValue;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& m : g_modules) {
    if (m.get() != module) continue;
    auto& slot = m->functions[name];
    if (slot == nullptr) {
      if (!image_names(m->image, name)) {
        m->functions.erase(name);
        return kNotFound;
      }
      slot = std::make_unique<CUfunc_st>(CUfunc_st{m.get(), name, kDefaultDynamicShared});
    }
    *f = slot.get();
    return kSuccess;
  }
  return kInvalidHandle;
}

FAKE_API CUresult cuFuncGetAttribute(int* value, int attribute, CUfunction f) {
  XP_FAKE_FAULT("cuFuncGetAttribute", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (value == nullptr) return kInvalidValue;
  if (!is_function(f)) return kInvalidHandle;
  switch (attribute) {
    case 0:  // MAX_THREADS_PER_BLOCK
      *value = 1024;
      return kSuccess;
    case 4:  // NUM_REGS
      *value = 32;
      return kSuccess;
    case 8:  // MAX_DYNAMIC_SHARED_SIZE_BYTES
      *value = f->max_dynamic_shared;
      return kSuccess;
    default:  // SHARED_SIZE_BYTES, CONST_SIZE_BYTES, LOCAL_SIZE_BYTES, ...: none
      if (attribute < 0 || attribute > 10) return kInvalidValue;
      *value = 0;
      return kSuccess;
  }
}

FAKE_API CUresult cuFuncSetAttribute(CUfunction f, int attribute, int value) {
  XP_FAKE_FAULT("cuFuncSetAttribute", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (!is_function(f)) return kInvalidHandle;
  if (attribute != 8) return kInvalidValue;  // only the dynamic shared memory allowance is settable here
  if (value < 0 || value > kOptinShared) return kInvalidValue;
  f->max_dynamic_shared = value;
  return kSuccess;
}

FAKE_API CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid, int* block, CUfunction f, B2DSize, std::size_t,
                                                   int block_limit) {
  XP_FAKE_FAULT("cuOccupancyMaxPotentialBlockSize", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (min_grid == nullptr || block == nullptr) return kInvalidValue;
  if (!is_function(f)) return kInvalidHandle;
  *block = block_limit > 0 && block_limit < 1024 ? block_limit : 1024;
  *min_grid = 132 * (2048 / *block);
  return kSuccess;
}

FAKE_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction f, int block, std::size_t) {
  XP_FAKE_FAULT("cuOccupancyMaxActiveBlocksPerMultiprocessor", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (blocks == nullptr || block <= 0) return kInvalidValue;
  if (!is_function(f)) return kInvalidHandle;
  *blocks = block > 1024 ? 0 : std::min(32, 2048 / block);
  return kSuccess;
}

FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shared, CUstream stream, void** params, void** extra) {
  XP_FAKE_FAULT("cuLaunchKernel", true);
  if (const CUresult r = check_context(); r != kSuccess) return r;
  if (!is_function(f) || !is_stream(stream)) return kInvalidHandle;
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0) return kInvalidValue;
  if (gx > 2147483647u || gy > 65535u || gz > 65535u || bx > 1024u || by > 1024u || bz > 64u ||
      std::uint64_t{bx} * by * bz > 1024u)
    return kInvalidValue;
  if (shared > static_cast<unsigned>(f->max_dynamic_shared)) return kInvalidValue;
  if (params != nullptr && extra != nullptr) return kInvalidValue;  // parameters one way or the other, not both
  ++g_launches;
  trace("launch", 1, stream);
  return kSuccess;
}

FAKE_API long xp_fake_cuda_modules_loaded() {
  return g_modules_loaded.load();
}

FAKE_API long xp_fake_cuda_launches() {
  return g_launches.load();
}

// The trace since the last clear: lines "launch S", "copy S", "memset S", "record E S" and
// "wait S E P" (stream S waits for event E, last recorded on stream P), pointers as %p writes
// them. Copies up to n - 1 bytes and a terminating zero into out; returns the trace's length.
FAKE_API long xp_fake_cuda_trace(char* out, long n) {
  std::lock_guard<std::mutex> lock(g_trace_mutex);
  if (out != nullptr && n > 0) {
    const std::size_t len = std::min(g_trace.size(), static_cast<std::size_t>(n - 1));
    std::memcpy(out, g_trace.data(), len);
    out[len] = '\0';
  }
  return static_cast<long>(g_trace.size());
}
FAKE_API void xp_fake_cuda_trace_clear() {
  std::lock_guard<std::mutex> lock(g_trace_mutex);
  g_trace.clear();
}

FAKE_API long xp_fake_cuda_stream_waits() {
  return g_stream_waits.load();
}

// How often xp called the entry point `name` (every call counts, failed or not).
FAKE_API long xp_fake_cuda_calls(const char* name) {
  if (name == nullptr) return -1;
  std::lock_guard<std::mutex> lock(g_calls_mutex);
  const auto it = g_calls.find(name);
  return it == g_calls.end() ? 0 : it->second;
}

// The sticky error of the broken context (0 while none).
FAKE_API int xp_fake_cuda_sticky_error() {
  return g_sticky.load();
}

FAKE_API long long xp_fake_cuda_bytes_allocated(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxDevices) return -1;
  std::lock_guard<std::mutex> lock(g_mutex);
  return static_cast<long long>(g_allocated[ordinal]);
}

namespace {

struct Entry {
  const char* name;
  void* fn;
};
const Entry kEntries[] = {
    {"cuDriverGetVersion", reinterpret_cast<void*>(&cuDriverGetVersion)},
    {"cuInit", reinterpret_cast<void*>(&cuInit)},
    {"cuGetErrorName", reinterpret_cast<void*>(&cuGetErrorName)},
    {"cuGetErrorString", reinterpret_cast<void*>(&cuGetErrorString)},
    {"cuDeviceGetCount", reinterpret_cast<void*>(&cuDeviceGetCount)},
    {"cuDeviceGet", reinterpret_cast<void*>(&cuDeviceGet)},
    {"cuDeviceGetName", reinterpret_cast<void*>(&cuDeviceGetName)},
    {"cuDeviceGetAttribute", reinterpret_cast<void*>(&cuDeviceGetAttribute)},
    {"cuDeviceTotalMem", reinterpret_cast<void*>(&cuDeviceTotalMem)},
    {"cuDeviceGetUuid", reinterpret_cast<void*>(&cuDeviceGetUuid)},
    {"cuDeviceGetPCIBusId", reinterpret_cast<void*>(&cuDeviceGetPCIBusId)},
    {"cuDevicePrimaryCtxRetain", reinterpret_cast<void*>(&cuDevicePrimaryCtxRetain)},
    {"cuDevicePrimaryCtxRelease", reinterpret_cast<void*>(&cuDevicePrimaryCtxRelease)},
    {"cuCtxGetCurrent", reinterpret_cast<void*>(&cuCtxGetCurrent)},
    {"cuCtxSetCurrent", reinterpret_cast<void*>(&cuCtxSetCurrent)},
    {"cuCtxSynchronize", reinterpret_cast<void*>(&cuCtxSynchronize)},
    {"cuMemGetInfo", reinterpret_cast<void*>(&cuMemGetInfo)},
};
#define XP_FAKE_ENTRY(name) \
  { #name, reinterpret_cast < void*>(&name) }
const Entry kHollowEntries[] = {
    XP_FAKE_ENTRY(cuMemAlloc),
    XP_FAKE_ENTRY(cuMemFree),
    XP_FAKE_ENTRY(cuMemHostAlloc),
    XP_FAKE_ENTRY(cuMemFreeHost),
    XP_FAKE_ENTRY(cuMemcpyHtoDAsync),
    XP_FAKE_ENTRY(cuMemcpyDtoHAsync),
    XP_FAKE_ENTRY(cuMemcpyDtoDAsync),
    XP_FAKE_ENTRY(cuMemsetD8Async),
    XP_FAKE_ENTRY(cuPointerGetAttribute),
    XP_FAKE_ENTRY(cuStreamCreate),
    XP_FAKE_ENTRY(cuStreamDestroy),
    XP_FAKE_ENTRY(cuStreamSynchronize),
    XP_FAKE_ENTRY(cuStreamWaitEvent),
    XP_FAKE_ENTRY(cuEventCreate),
    XP_FAKE_ENTRY(cuEventDestroy),
    XP_FAKE_ENTRY(cuEventRecord),
    XP_FAKE_ENTRY(cuEventQuery),
    XP_FAKE_ENTRY(cuEventSynchronize),
    XP_FAKE_ENTRY(cuEventElapsedTime),
    XP_FAKE_ENTRY(cuModuleLoadData),
    XP_FAKE_ENTRY(cuModuleUnload),
    XP_FAKE_ENTRY(cuModuleGetFunction),
    XP_FAKE_ENTRY(cuFuncGetAttribute),
    XP_FAKE_ENTRY(cuFuncSetAttribute),
    XP_FAKE_ENTRY(cuOccupancyMaxPotentialBlockSize),
    XP_FAKE_ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor),
    XP_FAKE_ENTRY(cuLaunchKernel),
};
#undef XP_FAKE_ENTRY

const Entry* find_entry(const char* symbol) {
  for (const Entry& e : kEntries)
    if (std::strcmp(e.name, symbol) == 0) return &e;
  if (settings().hollow)
    for (const Entry& e : kHollowEntries)
      if (std::strcmp(e.name, symbol) == 0) return &e;
  return nullptr;
}

}  // namespace

// symbol_status is an int-sized enum in the driver's header (CUdriverProcAddressQueryResult).
FAKE_API CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, std::uint64_t flags,
                                      int* symbol_status) {
  if (settings().stub) return kStubLibrary;
  if (symbol == nullptr || pfn == nullptr) return kInvalidValue;
  if (flags > 4) return kInvalidValue;  // DEFAULT 0, LEGACY_STREAM 1, PER_THREAD_DEFAULT_STREAM 2
  *pfn = nullptr;
  auto set_status = [&](int s) {
    if (symbol_status != nullptr) *symbol_status = s;
  };
  for (const std::string& m : settings().missing) {
    if (m == symbol) {
      // What a driver answers for an entry point it lacks: success, and a null pointer.
      set_status(kProcSymbolNotFound);
      return kSuccess;
    }
  }
  if (const Entry* e = find_entry(symbol); e != nullptr) {
    if (cuda_version < 12000) {  // the fake has the CUDA 12.0 signatures only
      set_status(kProcVersionNotSufficient);
      return kNotFound;
    }
    *pfn = e->fn;
    set_status(kProcSuccess);
    return kSuccess;
  }
  set_status(kProcSymbolNotFound);
  return kNotFound;
}
