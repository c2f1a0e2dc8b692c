// The compile-only GPU (runtime/compile_only.hpp): the driver entry points of XP_DRIVER_FUNCTIONS
// answered in the process, for one device of a chosen architecture that runs nothing. Memory is
// host memory (a CUdeviceptr is its address), so copies and memsets move real bytes at once; every
// stream and event is complete when asked; a module accepts any image and any kernel name in it;
// a launch checks its dimensions and does nothing. cuModuleGetGlobal, cuFuncGetParamInfo, the UUID
// and the PCI bus are absent, as a driver may lack them (xp then says so, or does without).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "runtime/compile_only.hpp"
#include "runtime/driver.hpp"

namespace xp::detail {

namespace {

std::mutex g_choice_mutex;
bool g_probed = false;  // the driver probe has begun: no choice can be made any more
int g_arch = 0;

using namespace cu;

constexpr std::size_t kMemory = std::size_t{16} << 30;  // what the device says it has
constexpr int kMultiprocessors = 132;
constexpr int kMaxThreads = 1024;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kInvalidContext = 201;

struct Allocation {
  std::size_t bytes;
  bool device;
};
struct Function {
  int max_dynamic_shared = 48 << 10;
};
struct Module {
  std::map<std::string, Function> functions;
};

// Never destroyed: xp calls the driver while static objects are destroyed at exit.
struct State {
  std::mutex m;
  bool initialized = false;
  std::map<std::uintptr_t, Allocation> allocations;  // by address
  std::size_t device_bytes = 0;
  std::set<const void*> streams, events;
  std::set<const Module*> modules;
  std::set<const Function*> functions;
};
State& state() {
  static auto* s = new State;
  return *s;
}
int g_context_tag = 0;  // the primary context's handle is this address
thread_local bool t_current = false;

CUcontext the_context() {
  return reinterpret_cast<CUcontext>(&g_context_tag);
}
int optin_shared_bytes() {
  return g_arch >= 90 ? 227 << 10 : g_arch >= 80 ? 163 << 10 : 99 << 10;
}

CUresult ready() {
  std::lock_guard<std::mutex> lock(state().m);
  if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return t_current ? CUDA_SUCCESS : kInvalidContext;
}
bool known(const std::set<const void*>& s, const void* p) {
  std::lock_guard<std::mutex> lock(state().m);
  return s.count(p) != 0;
}
bool is_stream(CUstream s) {
  // The legacy and per-thread default streams, or one made by cuStreamCreate.
  return s == nullptr || s == stream_legacy() || s == stream_per_thread() || known(state().streams, s);
}
// The allocation holding [p, p + bytes), or null.
const Allocation* find_locked(std::uintptr_t p, std::size_t bytes) {
  auto& a = state().allocations;
  auto it = a.upper_bound(p);
  if (it == a.begin()) return nullptr;
  --it;
  if (p - it->first + bytes > it->second.bytes) return nullptr;
  return &it->second;
}
bool in_memory(CUdeviceptr p, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(state().m);
  return bytes == 0 || find_locked(static_cast<std::uintptr_t>(p), bytes) != nullptr;
}

CUresult allocate(void** out, std::size_t bytes, bool device) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(state().m);
  if (device && (bytes == 0 || bytes > kMemory - state().device_bytes)) {
    return bytes == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
  }
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  state().allocations[reinterpret_cast<std::uintptr_t>(p)] = {rounded, device};
  if (device) state().device_bytes += rounded;
  *out = p;
  return CUDA_SUCCESS;
}
CUresult release(void* p, bool device) {
  std::lock_guard<std::mutex> lock(state().m);
  auto it = state().allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == state().allocations.end() || it->second.device != device) return CUDA_ERROR_INVALID_VALUE;
  if (device) state().device_bytes -= it->second.bytes;
  state().allocations.erase(it);
  std::free(p);
  return CUDA_SUCCESS;
}
CUresult copy(void* dst, const void* src, std::size_t bytes, CUstream stream) {
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  if (!is_stream(stream)) return kInvalidHandle;
  if (bytes != 0) std::memmove(dst, src, bytes);
  return CUDA_SUCCESS;
}
template <class T>
CUresult make_handle(T** out, std::set<const void*>& in) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  auto* h = new int(0);
  std::lock_guard<std::mutex> lock(state().m);
  in.insert(h);
  *out = reinterpret_cast<T*>(h);
  return CUDA_SUCCESS;
}
CUresult drop_handle(const void* h, std::set<const void*>& in) {
  std::lock_guard<std::mutex> lock(state().m);
  if (in.erase(h) == 0) return kInvalidHandle;
  delete static_cast<const int*>(h);
  return CUDA_SUCCESS;
}
Function* function_of(CUfunction f) {
  auto* fn = reinterpret_cast<Function*>(f);
  std::lock_guard<std::mutex> lock(state().m);
  return state().functions.count(fn) != 0 ? fn : nullptr;
}

// ---- the entry points
CUresult driver_version(int* v) {
  if (v == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *v = 0;  // no driver: xp reports none
  return CUDA_SUCCESS;
}
CUresult init(unsigned flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().m);
  state().initialized = true;
  return CUDA_SUCCESS;
}
CUresult no_name(CUresult, const char**) {
  return CUDA_ERROR_INVALID_VALUE;  // xp's own table names the code
}
CUresult device_count(int* n) {
  if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult device_get(CUdevice* d, int ordinal) {
  if (d == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult device_name(char* name, int len, CUdevice d) {
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  const std::string n = "xp compile-only GPU (sm_" + std::to_string(g_arch) + ")";
  std::snprintf(name, static_cast<std::size_t>(len), "%s", n.c_str());
  return CUDA_SUCCESS;
}
CUresult device_attribute(int* v, int attribute, CUdevice d) {
  if (v == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      *v = kMaxThreads;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      *v = 64;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      *v = 2147483647;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      *v = 65535;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *v = 48 << 10;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *v = optin_shared_bytes();
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *v = kMultiprocessors;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *v = g_arch / 10;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *v = g_arch % 10;
      break;
    default:  // clocks, bus width, L2: none to report
      *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult total_memory(std::size_t* bytes, CUdevice d) {
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = kMemory;
  return CUDA_SUCCESS;
}
CUresult retain(CUcontext* ctx, CUdevice d) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  *ctx = the_context();
  return CUDA_SUCCESS;
}
CUresult release_context(CUdevice d) {
  return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
CUresult get_current(CUcontext* ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *ctx = t_current ? the_context() : nullptr;
  return CUDA_SUCCESS;
}
CUresult set_current(CUcontext ctx) {
  if (ctx != nullptr && ctx != the_context()) return kInvalidContext;
  t_current = ctx != nullptr;
  return CUDA_SUCCESS;
}
CUresult synchronize_context() {
  return ready();
}
CUresult memory_info(std::size_t* free, std::size_t* total) {
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().m);
  *free = kMemory - state().device_bytes;
  *total = kMemory;
  return CUDA_SUCCESS;
}
CUresult mem_alloc(CUdeviceptr* p, std::size_t bytes) {
  void* a = nullptr;
  const CUresult r = allocate(&a, bytes, true);
  if (r == CUDA_SUCCESS) *p = reinterpret_cast<std::uintptr_t>(a);
  return r;
}
CUresult mem_free(CUdeviceptr p) {
  return release(reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)), true);
}
CUresult host_alloc(void** p, std::size_t bytes, unsigned) {
  return allocate(p, bytes, false);
}
CUresult host_free(void* p) {
  return release(p, false);
}
void* at(CUdeviceptr p) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
}
CUresult copy_htod(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream s) {
  if (!in_memory(dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return copy(at(dst), src, bytes, s);
}
CUresult copy_dtoh(void* dst, CUdeviceptr src, std::size_t bytes, CUstream s) {
  if (!in_memory(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return copy(dst, at(src), bytes, s);
}
CUresult copy_dtod(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream s) {
  if (!in_memory(dst, bytes) || !in_memory(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return copy(at(dst), at(src), bytes, s);
}
CUresult memset8(CUdeviceptr dst, unsigned char value, std::size_t n, CUstream s) {
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  if (!is_stream(s)) return kInvalidHandle;
  if (!in_memory(dst, n)) return CUDA_ERROR_INVALID_VALUE;
  if (n != 0) std::memset(at(dst), value, n);
  return CUDA_SUCCESS;
}
CUresult pointer_attribute(void* data, int attribute, CUdeviceptr p) {
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().m);
  const Allocation* a = find_locked(static_cast<std::uintptr_t>(p), 1);
  if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;  // memory this driver did not hand out
  if (attribute == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
    *static_cast<unsigned*>(data) = a->device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  } else if (attribute == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
    *static_cast<int*>(data) = 0;
  } else {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult stream_create(CUstream* s, unsigned flags) {
  if (flags > CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
  return make_handle(s, state().streams);
}
CUresult stream_destroy(CUstream s) {
  return drop_handle(s, state().streams);
}
CUresult stream_synchronize(CUstream s) {
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  return is_stream(s) ? CUDA_SUCCESS : kInvalidHandle;
}
CUresult stream_wait(CUstream s, CUevent e, unsigned flags) {
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return is_stream(s) && known(state().events, e) ? CUDA_SUCCESS : kInvalidHandle;
}
CUresult event_create(CUevent* e, unsigned flags) {
  if (flags > 7) return CUDA_ERROR_INVALID_VALUE;
  return make_handle(e, state().events);
}
CUresult event_destroy(CUevent e) {
  return drop_handle(e, state().events);
}
CUresult event_record(CUevent e, CUstream s) {
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  return known(state().events, e) && is_stream(s) ? CUDA_SUCCESS : kInvalidHandle;
}
CUresult event_done(CUevent e) {
  return known(state().events, e) ? CUDA_SUCCESS : kInvalidHandle;  // every event is complete
}
CUresult event_elapsed(float* ms, CUevent a, CUevent b) {
  if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!known(state().events, a) || !known(state().events, b)) return kInvalidHandle;
  *ms = 0;  // nothing ran between them
  return CUDA_SUCCESS;
}
CUresult module_load(CUmodule* m, const void* image) {
  if (m == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  auto* mod = new Module;
  std::lock_guard<std::mutex> lock(state().m);
  state().modules.insert(mod);
  *m = reinterpret_cast<CUmodule>(mod);
  return CUDA_SUCCESS;
}
CUresult module_unload(CUmodule m) {
  auto* mod = reinterpret_cast<Module*>(m);
  std::lock_guard<std::mutex> lock(state().m);
  if (state().modules.erase(mod) == 0) return kInvalidHandle;
  for (auto& [name, f] : mod->functions) state().functions.erase(&f);
  delete mod;
  return CUDA_SUCCESS;
}
CUresult module_function(CUfunction* f, CUmodule m, const char* name) {
  if (f == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  auto* mod = reinterpret_cast<Module*>(m);
  std::lock_guard<std::mutex> lock(state().m);
  if (state().modules.count(mod) == 0) return kInvalidHandle;
  Function& fn = mod->functions[name];
  state().functions.insert(&fn);
  *f = reinterpret_cast<CUfunction>(&fn);
  return CUDA_SUCCESS;
}
CUresult function_attribute(int* v, int attribute, CUfunction f) {
  if (v == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const Function* fn = function_of(f);
  if (fn == nullptr) return kInvalidHandle;
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *v = kMaxThreads;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *v = 32;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *v = fn->max_dynamic_shared;
      return CUDA_SUCCESS;
    default:  // static shared, constant and local memory: none
      if (attribute < 0 || attribute > 10) return CUDA_ERROR_INVALID_VALUE;
      *v = 0;
      return CUDA_SUCCESS;
  }
}
CUresult function_set_attribute(CUfunction f, int attribute, int value) {
  Function* fn = function_of(f);
  if (fn == nullptr) return kInvalidHandle;
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 || value > optin_shared_bytes())
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().m);
  fn->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}
CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                unsigned shared, CUstream s, void** params, void** extra) {
  if (const CUresult r = ready(); r != CUDA_SUCCESS) return r;
  const Function* fn = function_of(f);
  if (fn == nullptr || !is_stream(s)) return kInvalidHandle;
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || gx > 2147483647u || gy > 65535u ||
      gz > 65535u || bx > 1024u || by > 1024u || bz > 64u || std::uint64_t{bx} * by * bz > kMaxThreads ||
      shared > static_cast<unsigned>(fn->max_dynamic_shared) || (params != nullptr && extra != nullptr))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;  // the kernel does not run
}
CUresult best_block(int* min_grid, int* block, CUfunction f, CUoccupancyB2DSize, std::size_t, int limit) {
  if (min_grid == nullptr || block == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (function_of(f) == nullptr) return kInvalidHandle;
  *block = limit > 0 && limit < kMaxThreads ? limit : kMaxThreads;
  *min_grid = kMultiprocessors * (2048 / *block);
  return CUDA_SUCCESS;
}
CUresult active_blocks(int* blocks, CUfunction f, int block, std::size_t) {
  if (blocks == nullptr || block <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (function_of(f) == nullptr) return kInvalidHandle;
  *blocks = block > kMaxThreads ? 0 : std::min(32, 2048 / block);
  return CUDA_SUCCESS;
}

}  // namespace

std::string use_compile_only_gpu(int arch) {
  if (arch < 10 || arch > 999)
    return "sm_" + std::to_string(arch) + " is not an architecture (sm_75, sm_90, sm_120, ...)";
  std::lock_guard<std::mutex> lock(g_choice_mutex);
  if (g_arch == arch) return {};
  if (g_arch != 0) return "this process already compiles for a compile-only sm_" + std::to_string(g_arch);
  if (g_probed)
    return "CUDA was already looked for in this process, which uses what it found; a compile-only GPU must be "
           "chosen before anything uses CUDA (`xp cache warm --arch` runs in a process of its own)";
  g_arch = arch;
  return {};
}

int compile_only_arch() noexcept {
  std::lock_guard<std::mutex> lock(g_choice_mutex);
  return g_arch;
}

int claim_driver_probe() noexcept {
  std::lock_guard<std::mutex> lock(g_choice_mutex);
  g_probed = true;
  return g_arch;
}

DriverApi compile_only_driver_table() {
  DriverApi t;
  t.cuDriverGetVersion = driver_version;
  t.cuInit = init;
  t.cuGetErrorName = no_name;
  t.cuGetErrorString = no_name;
  t.cuDeviceGetCount = device_count;
  t.cuDeviceGet = device_get;
  t.cuDeviceGetName = device_name;
  t.cuDeviceGetAttribute = device_attribute;
  t.cuDeviceTotalMem = total_memory;
  t.cuDevicePrimaryCtxRetain = retain;
  t.cuDevicePrimaryCtxRelease = release_context;
  t.cuCtxGetCurrent = get_current;
  t.cuCtxSetCurrent = set_current;
  t.cuCtxSynchronize = synchronize_context;
  t.cuMemGetInfo = memory_info;
  t.cuMemAlloc = mem_alloc;
  t.cuMemFree = mem_free;
  t.cuMemcpyHtoDAsync = copy_htod;
  t.cuMemcpyDtoHAsync = copy_dtoh;
  t.cuMemcpyDtoDAsync = copy_dtod;
  t.cuMemsetD8Async = memset8;
  t.cuPointerGetAttribute = pointer_attribute;
  t.cuMemHostAlloc = host_alloc;
  t.cuMemFreeHost = host_free;
  t.cuStreamCreate = stream_create;
  t.cuStreamDestroy = stream_destroy;
  t.cuStreamSynchronize = stream_synchronize;
  t.cuStreamWaitEvent = stream_wait;
  t.cuEventCreate = event_create;
  t.cuEventDestroy = event_destroy;
  t.cuEventRecord = event_record;
  t.cuEventSynchronize = event_done;
  t.cuEventQuery = event_done;
  t.cuEventElapsedTime = event_elapsed;
  t.cuModuleLoadData = module_load;
  t.cuModuleUnload = module_unload;
  t.cuModuleGetFunction = module_function;
  t.cuFuncGetAttribute = function_attribute;
  t.cuFuncSetAttribute = function_set_attribute;
  t.cuLaunchKernel = launch;
  t.cuOccupancyMaxPotentialBlockSize = best_block;
  t.cuOccupancyMaxActiveBlocksPerMultiprocessor = active_blocks;
  return t;
}

}  // namespace xp::detail
