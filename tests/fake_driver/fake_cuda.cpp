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
// Like the real driver it honours CUDA_VISIBLE_DEVICES: a list of ordinals read up to the first
// invalid entry; when nothing is visible (empty, "-1", ...) cuInit returns CUDA_ERROR_NO_DEVICE.
// Every device call before cuInit returns CUDA_ERROR_NOT_INITIALIZED, invalid ordinals
// CUDA_ERROR_INVALID_DEVICE, context calls without a current context CUDA_ERROR_INVALID_CONTEXT.
//
// Besides the driver API it exports xp_fake_cuda_primary_ctx_refcount(ordinal), so that tests can
// check how often xp retained a primary context.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

struct Settings {
  int devices = 1;
  CUresult init_result = kSuccess;
  std::vector<std::string> missing;
  int version = 13000;
  int cc_major = 9, cc_minor = 0;
  std::string name = "xp fake GPU";
  bool stub = false;
  // Physical ordinals visible through CUDA_VISIBLE_DEVICES, in visible order.
  std::vector<int> visible;
};

int to_int(const std::string& s, int fallback) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  return (s.empty() || *end != '\0') ? fallback : static_cast<int>(v);
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

std::size_t total_memory() {
  return std::size_t{141} << 30;
}
std::size_t free_memory() {
  return total_memory() - (std::size_t{3} << 29);
}  // 1.5 GiB in use

bool is_context(CUcontext c) {
  for (int i = 0; i < kMaxDevices; ++i)
    if (c == &g_contexts[i]) return true;
  return false;
}

}  // namespace

FAKE_API CUresult cuDriverGetVersion(int* version) {
  if (settings().stub) return kStubLibrary;
  if (version == nullptr) return kInvalidValue;
  *version = settings().version;
  return kSuccess;
}

FAKE_API CUresult cuInit(unsigned int flags) {
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
  if (count == nullptr) return kInvalidValue;
  if (!g_initialized.load()) return kNotInitialized;
  *count = visible_count();
  return kSuccess;
}

FAKE_API CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (device == nullptr) return kInvalidValue;
  if (const CUresult r = check_device(ordinal); r != kSuccess) return r;
  *device = ordinal;
  return kSuccess;
}

FAKE_API CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (name == nullptr || len <= 0) return kInvalidValue;
  std::snprintf(name, static_cast<size_t>(len), "%s", settings().name.c_str());
  return kSuccess;
}

FAKE_API CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice dev) {
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (value == nullptr) return kInvalidValue;
  const Settings& s = settings();
  switch (attribute) {
    case 1:
      *value = 1024;
      break;  // MAX_THREADS_PER_BLOCK
    case 10:
      *value = 32;
      break;  // WARP_SIZE
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
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (bytes == nullptr) return kInvalidValue;
  *bytes = total_memory();
  return kSuccess;
}

FAKE_API CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (uuid == nullptr) return kInvalidValue;
  // GPU-fa4ec0de-0000-4000-8000-0000000000NN, NN the physical ordinal.
  const unsigned char bytes[16] = {0xfa, 0x4e, 0xc0, 0xde, 0x00, 0x00, 0x40, 0x00,
                                   0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, static_cast<unsigned char>(physical(dev))};
  std::memcpy(uuid->bytes, bytes, sizeof bytes);
  return kSuccess;
}

FAKE_API CUresult cuDeviceGetPCIBusId(char* bus_id, int len, CUdevice dev) {
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (bus_id == nullptr || len < 13) return kInvalidValue;
  std::snprintf(bus_id, static_cast<size_t>(len), "0000:%02x:00.0", 0x19 + physical(dev));
  return kSuccess;
}

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  if (ctx == nullptr) return kInvalidValue;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_contexts[dev].ordinal = dev;
  ++g_refcount[dev];
  *ctx = &g_contexts[dev];
  return kSuccess;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  if (const CUresult r = check_device(dev); r != kSuccess) return r;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_refcount[dev] == 0) return kInvalidContext;
  --g_refcount[dev];
  return kSuccess;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext* ctx) {
  if (ctx == nullptr) return kInvalidValue;
  if (!g_initialized.load()) return kNotInitialized;
  *ctx = t_current;
  return kSuccess;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (!g_initialized.load()) return kNotInitialized;
  if (ctx != nullptr && !is_context(ctx)) return kInvalidContext;
  t_current = ctx;
  return kSuccess;
}

FAKE_API CUresult cuCtxSynchronize() {
  if (!g_initialized.load()) return kNotInitialized;
  return t_current == nullptr ? kInvalidContext : kSuccess;
}

FAKE_API CUresult cuMemGetInfo(std::size_t* free, std::size_t* total) {
  if (!g_initialized.load()) return kNotInitialized;
  if (t_current == nullptr) return kInvalidContext;
  if (free == nullptr || total == nullptr) return kInvalidValue;
  *free = free_memory();
  *total = total_memory();
  return kSuccess;
}

FAKE_API int xp_fake_cuda_primary_ctx_refcount(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxDevices) return -1;
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_refcount[ordinal];
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
  for (const Entry& e : kEntries) {
    if (std::strcmp(e.name, symbol) != 0) continue;
    if (cuda_version < 12000) {  // the fake has the CUDA 12.0 signatures only
      set_status(kProcVersionNotSufficient);
      return kNotFound;
    }
    *pfn = e.fn;
    set_status(kProcSuccess);
    return kSuccess;
  }
  set_status(kProcSymbolNotFound);
  return kNotFound;
}
