// Opens the CUDA driver, resolves its entry points, initializes it and enumerates devices.
#include "runtime/driver.hpp"

#include <pthread.h>

#include <array>
#include <cstdio>
#include <mutex>
#include <string>

#include "runtime/dynlib.hpp"
#include "runtime/environment.hpp"
#include "runtime/nvml.hpp"
#include "xp/config.hpp"
#include "xp/error.hpp"

namespace xp::detail {

namespace {

std::atomic<bool> g_forked{false};
std::atomic<const DriverApi*> g_api{nullptr};
DriverApi g_table;

void on_fork_child() {
  g_forked.store(true);
}

struct NamedCode {
  int code;
  const char* name;
};
// Names for codes xp reports when the driver cannot name them itself (no table loaded yet).
constexpr NamedCode kKnownCodes[] = {
    {0, "CUDA_SUCCESS"},
    {1, "CUDA_ERROR_INVALID_VALUE"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"},
    {4, "CUDA_ERROR_DEINITIALIZED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
    {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"},
    {200, "CUDA_ERROR_INVALID_IMAGE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {218, "CUDA_ERROR_INVALID_PTX"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM"},
    {400, "CUDA_ERROR_INVALID_HANDLE"},
    {500, "CUDA_ERROR_NOT_FOUND"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
    {999, "CUDA_ERROR_UNKNOWN"},
};

// The launch and execution codes, 700 to 720 (the CUresult enum of the CUDA driver API; 706 and 707
// are unassigned): what each means, whether it is sticky (the fault leaves the context unusable, so
// every later CUDA call of this process fails: only a new process recovers) and what to do.
struct LaunchCode {
  int code;
  const char* name;
  bool sticky;
  const char* advice;
};
constexpr const char* kStickyTail =
    " The error is sticky: the CUDA context stays unusable, and every later CUDA call of this process fails; "
    "only a new process can use the GPU again.";
constexpr LaunchCode kLaunchCodes[] = {
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", true,
     "a kernel read or wrote an invalid memory address (an index out of bounds, a freed or foreign pointer); run "
     "the program under compute-sanitizer to find the access."},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", false,
     "the launch did not run: it asks for more resources than the device has, usually too many threads per block "
     "for the kernel's registers per thread (or arguments of the wrong size); launch fewer threads per block, or "
     "limit the registers (__launch_bounds__, -maxrregcount). Not a fault: the context stays usable."},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", true,
     "a kernel ran past the watchdog limit of a GPU that also drives a display; split the work into shorter "
     "launches, or run on a GPU without a display (the watchdog is the device's kernel execution timeout)."},
    {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", false,
     "the launch uses an incompatible texturing mode and did not run. Not a fault: the context stays usable."},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", false,
     "peer access to that context is already enabled (cuCtxEnablePeerAccess called twice); harmless, nothing ran. "
     "Not a fault: the context stays usable."},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", false,
     "peer access was never enabled, so it cannot be disabled (cuCtxDisablePeerAccess). Not a fault: the context "
     "stays usable."},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", false,
     "the device's primary context is already initialized, so its flags cannot change now; set them before the "
     "first use of the device. Not a fault: the context stays usable."},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", false,
     "the context current to this thread was destroyed (or is a primary context not initialized yet); make a live "
     "context current. Not a kernel fault."},
    {710, "CUDA_ERROR_ASSERT", true,
     "a device-side assert() failed in a kernel; the kernel's own check found a bad value (its message is on the "
     "process's standard output)."},
    {711, "CUDA_ERROR_TOO_MANY_PEERS", false,
     "the hardware resources for peer access are exhausted for one of the devices (cuCtxEnablePeerAccess); "
     "enable peer access between fewer devices. Not a fault: the context stays usable."},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", false,
     "that host memory range is already registered (cuMemHostRegister). Not a fault: the context stays usable."},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", false,
     "that pointer is not the start of a registered host memory range (cuMemHostUnregister). Not a fault: the "
     "context stays usable."},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", true,
     "a kernel corrupted or overflowed its call stack (deep recursion, large local arrays); raise the stack limit "
     "(cuCtxSetLimit CU_LIMIT_STACK_SIZE) or use less stack, and run under compute-sanitizer."},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", true,
     "a kernel executed an illegal instruction (a trap, or code built for another architecture); run under "
     "compute-sanitizer."},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", true,
     "a kernel loaded or stored at an address not aligned to the access's size (a pointer cast to a wider type, "
     "an odd offset); run under compute-sanitizer to find the access."},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", true,
     "a kernel used an address of the wrong address space (global, shared or local) for the instruction; run "
     "under compute-sanitizer."},
    {718, "CUDA_ERROR_INVALID_PC", true,
     "a kernel's program counter left its code (a corrupt function pointer or return address); run under "
     "compute-sanitizer."},
    {719, "CUDA_ERROR_LAUNCH_FAILED", true,
     "an exception occurred on the device while a kernel ran (an invalid device pointer, shared memory accessed out "
     "of bounds); run the program under compute-sanitizer to find the access."},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", false,
     "a cooperative launch asks for more blocks than can be resident on the device at once; launch at most the "
     "occupancy (cuOccupancyMaxActiveBlocksPerMultiprocessor) times the multiprocessor count. Not a fault: the "
     "context stays usable."},
};

const LaunchCode* launch_code(int code) {
  for (const auto& k : kLaunchCodes)
    if (k.code == code) return &k;
  return nullptr;
}

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string format_uuid(const cu::CUuuid& u) {
  static const char* hex = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    const auto b = static_cast<unsigned char>(u.bytes[i]);
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

// Value of a path variable even when another variable is malformed (probing never throws).
std::string setting(const char* name) {
  for (const auto& row : config_variables())
    if (row.name == name && row.set) return row.value;
  return {};
}

bool visible_devices_hide_all(const ForeignEnvironment& env) {
  if (!env.cuda_visible_devices) return false;
  // The driver stops at the first entry it cannot parse; an empty list or a leading invalid
  // entry (-1 is the usual spelling) hides every device.
  const std::string& v = *env.cuda_visible_devices;
  size_t b = 0;
  while (b < v.size() && (v[b] == ' ' || v[b] == '\t')) ++b;
  if (b == v.size()) return true;
  return v[b] == '-' || v[b] == ',';
}

GpuInfo read_gpu(const DriverApi& api, int ordinal) {
  GpuInfo g;
  g.index = ordinal;
  cu::CUdevice dev = 0;
  check(api.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  std::array<char, 256> name{};
  check(api.cuDeviceGetName(name.data(), static_cast<int>(name.size()), dev), "cuDeviceGetName");
  g.name = name.data();
  auto attr = [&](int a) {
    int v = 0;
    return api.cuDeviceGetAttribute(&v, a, dev) == cu::CUDA_SUCCESS ? v : 0;
  };
  g.cc_major = attr(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  g.cc_minor = attr(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  g.sm_count = attr(cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  g.memory_clock_khz = attr(cu::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  g.memory_bus_width_bits = attr(cu::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  g.l2_cache_bytes = attr(cu::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  // Double data rate: two transfers per clock over the whole bus.
  g.bandwidth_bytes_per_s = 2.0 * g.memory_clock_khz * 1000.0 * (g.memory_bus_width_bits / 8.0);
  std::size_t total = 0;
  check(api.cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem");
  g.memory_total = total;
  if (api.cuDeviceGetUuid != nullptr) {
    cu::CUuuid u{};
    if (api.cuDeviceGetUuid(&u, dev) == cu::CUDA_SUCCESS) g.uuid = format_uuid(u);
  }
  if (api.cuDeviceGetPCIBusId != nullptr) {
    std::array<char, 64> bus{};
    if (api.cuDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), dev) == cu::CUDA_SUCCESS)
      g.pci_bus_id = bus.data();
  }
  return g;
}

void set_init_failure(DriverProbe& p, const char* call, cu::CUresult r) {
  p.reason = CudaReason::init_failed;
  p.driver_error = r;
  p.driver_error_name = driver_error_name(r);
  p.detail = std::string(call) + " failed: " + p.driver_error_name + " (" + std::to_string(r) +
             "): " + driver_error_message(r);
}

// The compile-only GPU of architecture `arch` (runtime/compile_only.hpp): no library is opened.
DriverProbe compile_only_probe(DriverProbe p, int arch) {
  const std::string sm = "sm_" + std::to_string(arch);
  p.lib.found_by = "xp's compile-only GPU (xp cache warm --arch " + sm + ")";
  p.lib.path = "none: compile-only " + sm;
  p.lib.found = true;
  p.nvml.error = "not looked for: a compile-only GPU";
  g_table = compile_only_driver_table();
  check(g_table.cuInit(0), "cuInit");
  p.gpus.push_back(read_gpu(g_table, 0));
  p.reason = CudaReason::available;
  p.detail = "a compile-only " + sm + " GPU: kernels are compiled and stored for it, none runs";
  g_api.store(&g_table);
  return p;
}

DriverProbe probe() {
  DriverProbe p;
  p.lib.name = "libcuda";
  p.nvml.name = "libnvidia-ml";
  p.nvml.error = "not looked for: the driver has no usable device";
  if (const int arch = claim_driver_probe(); arch > 0) return compile_only_probe(std::move(p), arch);
  p.device_nodes_present = file_exists("/dev/nvidiactl");
  const std::string explicit_path = setting("XP_CUDA_DRIVER");
  p.explicit_path = !explicit_path.empty();
  const std::string target = p.explicit_path ? explicit_path : "libcuda.so.1";
  p.lib.found_by = p.explicit_path ? "XP_CUDA_DRIVER" : "OS loader";

  DynLib lib = DynLib::open(target);
  if (!lib.ok()) {
    p.lib.tried.push_back(
        p.explicit_path ? target : target + " (OS loader search: LD_LIBRARY_PATH, ld.so.cache, system folders)");
    p.lib.error = lib.error();
    if (lib.failure() == DynLib::Failure::not_found) {
      p.reason = CudaReason::driver_not_found;
      p.detail = p.explicit_path ? "XP_CUDA_DRIVER points at " + target + ", which does not exist"
                                 : "the CUDA driver library libcuda.so.1 was not found (no NVIDIA driver installed?)";
    } else {
      p.reason = CudaReason::driver_unusable;
      p.detail = "the driver library " + target + " could not be loaded: " + lib.error();
    }
    return p;
  }
  p.lib.found = true;
  p.lib.path = lib.path();

  // cuDriverGetVersion is exported by every driver; ask it first so that a driver too old for
  // cuGetProcAddress_v2 still reports its version.
  auto get_version = reinterpret_cast<cu::PFN_cuDriverGetVersion>(lib.symbol("cuDriverGetVersion"));
  if (get_version != nullptr && get_version(&p.driver_version) == cu::CUDA_SUCCESS) {
    p.lib.version_number = p.driver_version;
    p.lib.version = version_text(p.driver_version);
  }
  auto get_proc = reinterpret_cast<cu::PFN_cuGetProcAddress_v2>(lib.symbol("cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    p.reason = CudaReason::driver_unusable;
    p.lib.error = "required symbol cuGetProcAddress_v2 missing";
    p.detail =
        p.lib.path + " lacks cuGetProcAddress_v2" +
        (p.driver_version > 0 ? " (driver CUDA " + p.lib.version + "; xp needs a CUDA 12.0 driver or newer)" : "");
    return p;
  }

  DriverApi api;
  struct Entry {
    const char* name;
    void** slot;
    bool required;
    int version;
  };
  const Entry entries[] = {
#define XP_ENTRY(name, required, version) {#name, reinterpret_cast<void**>(&api.name), required, version},
      XP_DRIVER_FUNCTIONS(XP_ENTRY)
#undef XP_ENTRY
  };
  for (const Entry& e : entries) {
    cu::CUdriverProcAddressQueryResult status = cu::CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    void* fn = nullptr;
    const cu::CUresult r = get_proc(e.name, &fn, e.version, cu::CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
    if (r == cu::CUDA_ERROR_STUB_LIBRARY) {
      // The toolkit's lib64/stubs/libcuda.so answers every call so: it exists for linking only.
      p.reason = CudaReason::driver_unusable;
      p.driver_error = r;
      p.driver_error_name = "CUDA_ERROR_STUB_LIBRARY";
      p.lib.error = "the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY (34))";
      p.detail = p.lib.path +
                 " is the CUDA toolkit's stub libcuda (CUDA_ERROR_STUB_LIBRARY (34)), made for linking, "
                 "not the driver";
      return p;
    }
    // An absent symbol can come back as success with a null pointer: the pointer decides.
    if (r != cu::CUDA_SUCCESS || status != cu::CU_GET_PROC_ADDRESS_SUCCESS) fn = nullptr;
    *e.slot = fn;
    if (fn == nullptr && e.required) {
      p.reason = CudaReason::driver_unusable;
      p.lib.error = std::string("required entry point ") + e.name + " missing";
      p.detail = p.lib.path + ": cuGetProcAddress_v2 has no " + e.name + " for CUDA ABI 12.0";
      return p;
    }
  }
  g_table = api;

  const ForeignEnvironment env = foreign_environment();
  const cu::CUresult r = api.cuInit(0);
  if (r != cu::CUDA_SUCCESS) {
    set_init_failure(p, "cuInit", r);
    if (r == cu::CUDA_ERROR_NO_DEVICE && visible_devices_hide_all(env)) {
      p.reason = CudaReason::all_devices_hidden;
      p.detail = "CUDA_VISIBLE_DEVICES='" + *env.cuda_visible_devices +
                 "' hides every device (cuInit: " + p.driver_error_name + ")";
    }
    lib.release();
    return p;
  }
  // A child of fork() cannot use the parent's CUDA state; mark it so every use says so.
  pthread_atfork(nullptr, nullptr, on_fork_child);

  int count = 0;
  const cu::CUresult rc = api.cuDeviceGetCount(&count);
  if (rc != cu::CUDA_SUCCESS) {
    set_init_failure(p, "cuDeviceGetCount", rc);
    lib.release();
    return p;
  }
  if (count == 0) {
    if (visible_devices_hide_all(env)) {
      p.reason = CudaReason::all_devices_hidden;
      p.detail = "CUDA_VISIBLE_DEVICES='" + *env.cuda_visible_devices + "' hides every device";
    } else {
      p.reason = CudaReason::no_device;
      p.detail = "the driver initialized but reports no CUDA device";
    }
    lib.release();
    return p;
  }
  try {
    for (int i = 0; i < count; ++i) p.gpus.push_back(read_gpu(api, i));
  } catch (const CudaError& e) {
    set_init_failure(p, e.call().c_str(), e.code());
    p.gpus.clear();
    lib.release();
    return p;
  }
  p.nvml = nvml_free_memory(p.gpus);
  p.reason = CudaReason::available;
  p.detail = std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s");
  lib.release();  // the driver stays loaded for the life of the process
  g_api.store(&g_table);
  return p;
}

}  // namespace

const DriverProbe& driver_probe() noexcept {
  static const DriverProbe p = [] {
    try {
      return probe();
    } catch (const std::exception& e) {
      DriverProbe failed;
      failed.lib.name = "libcuda";
      failed.reason = CudaReason::driver_unusable;
      failed.detail = std::string("driver probe failed: ") + e.what();
      return failed;
    }
  }();
  return p;
}

const DriverApi* driver_api() noexcept {
  driver_probe();
  return g_api.load();
}

bool forked_after_init() noexcept {
  return g_forked.load();
}

std::string driver_error_name(int code) {
  if (const DriverApi* api = &g_table; api->cuGetErrorName != nullptr) {
    const char* s = nullptr;
    if (api->cuGetErrorName(code, &s) == cu::CUDA_SUCCESS && s != nullptr) return s;
  }
  for (const auto& k : kKnownCodes)
    if (k.code == code) return k.name;
  if (const LaunchCode* k = launch_code(code)) return k->name;
  return "CUDA_ERROR_UNRECOGNIZED";
}

std::string driver_error_message(int code) {
  if (g_table.cuGetErrorString != nullptr) {
    const char* s = nullptr;
    if (g_table.cuGetErrorString(code, &s) == cu::CUDA_SUCCESS && s != nullptr) return s;
  }
  return {};
}

bool driver_error_sticky(int code) noexcept {
  const LaunchCode* k = launch_code(code);
  return k != nullptr && k->sticky;
}

std::string driver_error_advice(int code) {
  const LaunchCode* k = launch_code(code);
  if (k == nullptr) return {};
  // A sticky fault surfaces at whichever call came next, not at the launch of the kernel at fault.
  return std::string("(") + k->advice +
         (k->sticky ? std::string(kStickyTail) + " The kernel at fault is one that ran before this call." : "") + ")";
}

void check(cu::CUresult r, const char* call) {
  if (r == cu::CUDA_SUCCESS) return;
  std::string message = driver_error_message(r);
  if (const std::string advice = driver_error_advice(r); !advice.empty())
    message += (message.empty() ? "" : " ") + advice;
  throw CudaError(r, driver_error_name(r), message, call);
}

namespace {
constexpr int kMaxDevices = 128;
std::mutex g_ctx_mutex;                                   // serializes retaining
std::atomic<cu::CUcontext> g_contexts[kMaxDevices] = {};  // primary contexts retained, by ordinal

[[noreturn]] void throw_fork_error() {
  throw DeviceUnavailable(
      "CUDA was initialized in the parent process before fork(); a forked child cannot use it. "
      "Start worker processes with exec (posix_spawn, multiprocessing's 'spawn'), or initialize CUDA "
      "only after forking");
}
}  // namespace

void make_current(int ordinal) {
  if (forked_after_init()) throw_fork_error();
  const DriverApi* api = g_api.load(std::memory_order_acquire);
  cu::CUcontext ctx = (api != nullptr && ordinal >= 0 && ordinal < kMaxDevices)
                          ? g_contexts[ordinal].load(std::memory_order_acquire)
                          : nullptr;
  if (ctx == nullptr) {  // first use of this device in the process: check and retain
    const DriverProbe& p = driver_probe();
    api = driver_api();
    if (api == nullptr || p.reason != CudaReason::available)
      throw DeviceUnavailable("cuda:" + std::to_string(ordinal) + " is not usable: " + p.detail);
    if (ordinal < 0 || ordinal >= static_cast<int>(p.gpus.size()) || ordinal >= kMaxDevices)
      throw DeviceUnavailable("cuda:" + std::to_string(ordinal) + " does not exist: this process sees " +
                              std::to_string(p.gpus.size()) + " CUDA device" + (p.gpus.size() == 1 ? "" : "s"));
    std::lock_guard<std::mutex> lock(g_ctx_mutex);
    ctx = g_contexts[ordinal].load();
    if (ctx == nullptr) {
      cu::CUdevice dev = 0;
      check(api->cuDeviceGet(&dev, ordinal), "cuDeviceGet");
      check(api->cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
      g_contexts[ordinal].store(ctx, std::memory_order_release);
    }
  }
  cu::CUcontext current = nullptr;
  check(api->cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != ctx) check(api->cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

const DriverApi& api_for_use() {
  if (forked_after_init()) make_current(0);  // throws the fork error
  const DriverApi* api = driver_api();
  if (api == nullptr) throw DeviceUnavailable("CUDA is not usable: " + driver_probe().detail);
  return *api;
}

void throw_missing_entry_point(const char* name) {
  throw Error(std::string("the CUDA driver at ") + driver_probe().lib.path + " lacks " + name +
              ", which this operation needs");
}

bool context_retained(int ordinal) noexcept {
  if (forked_after_init()) return false;
  return ordinal >= 0 && ordinal < kMaxDevices && g_contexts[ordinal].load() != nullptr;
}

}  // namespace xp::detail
