#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "runtime/cuda_abi.hpp"
#include "xp/device.hpp"
#include "xp/runtime.hpp"

namespace xp::detail {

// The driver entry points xp uses, resolved once through cuGetProcAddress_v2 at ABI 12000 with
// legacy default-stream semantics. Required ones are never null once the table loaded; an optional
// one is null when the driver lacks it (need() turns that into an Error naming it). The types and
// constants are cuda_abi.hpp's.
// X(name, required, ABI version asked for): 12000 for everything that existed in CUDA 12.0;
// newer optional entry points are asked at the version that introduced them.
#define XP_DRIVER_FUNCTIONS(X)                                 \
  X(cuDriverGetVersion, true, 12000)                           \
  X(cuInit, true, 12000)                                       \
  X(cuGetErrorName, true, 12000)                               \
  X(cuGetErrorString, true, 12000)                             \
  X(cuDeviceGetCount, true, 12000)                             \
  X(cuDeviceGet, true, 12000)                                  \
  X(cuDeviceGetName, true, 12000)                              \
  X(cuDeviceGetAttribute, true, 12000)                         \
  X(cuDeviceTotalMem, true, 12000)                             \
  X(cuDeviceGetUuid, false, 12000)                             \
  X(cuDeviceGetPCIBusId, false, 12000)                         \
  X(cuDevicePrimaryCtxRetain, true, 12000)                     \
  X(cuDevicePrimaryCtxRelease, true, 12000)                    \
  X(cuCtxGetCurrent, true, 12000)                              \
  X(cuCtxSetCurrent, true, 12000)                              \
  X(cuCtxSynchronize, true, 12000)                             \
  X(cuMemGetInfo, true, 12000)                                 \
  X(cuMemAlloc, false, 12000)                                  \
  X(cuMemFree, false, 12000)                                   \
  X(cuMemcpyHtoDAsync, false, 12000)                           \
  X(cuMemcpyDtoHAsync, false, 12000)                           \
  X(cuMemcpyDtoDAsync, false, 12000)                           \
  X(cuMemsetD8Async, false, 12000)                             \
  X(cuPointerGetAttribute, false, 12000)                       \
  X(cuMemHostAlloc, false, 12000)                              \
  X(cuMemFreeHost, false, 12000)                               \
  X(cuStreamCreate, false, 12000)                              \
  X(cuStreamDestroy, false, 12000)                             \
  X(cuStreamSynchronize, false, 12000)                         \
  X(cuStreamWaitEvent, false, 12000)                           \
  X(cuEventCreate, false, 12000)                               \
  X(cuEventDestroy, false, 12000)                              \
  X(cuEventRecord, false, 12000)                               \
  X(cuEventSynchronize, false, 12000)                          \
  X(cuEventQuery, false, 12000)                                \
  X(cuEventElapsedTime, false, 12000)                          \
  X(cuModuleLoadData, false, 12000)                            \
  X(cuModuleUnload, false, 12000)                              \
  X(cuModuleGetFunction, false, 12000)                         \
  X(cuModuleGetGlobal, false, 12000)                           \
  X(cuFuncGetAttribute, false, 12000)                          \
  X(cuFuncSetAttribute, false, 12000)                          \
  X(cuLaunchKernel, false, 12000)                              \
  X(cuOccupancyMaxPotentialBlockSize, false, 12000)            \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, false, 12000) \
  X(cuFuncGetParamInfo, false, 12040)

struct DriverApi {
#define XP_DECLARE_MEMBER(name, required, version) cu::PFN_##name name = nullptr;
  XP_DRIVER_FUNCTIONS(XP_DECLARE_MEMBER)
#undef XP_DECLARE_MEMBER
};

// What probing the driver found. Built once per process.
struct DriverProbe {
  LibraryInfo lib;
  CudaReason reason = CudaReason::driver_not_found;  // `available` when the driver has devices
  std::string detail;
  int driver_error = 0;
  std::string driver_error_name;
  int driver_version = 0;
  std::vector<GpuInfo> gpus;
  bool explicit_path = false;  // XP_CUDA_DRIVER was set
  bool device_nodes_present = false;
  LibraryInfo nvml;
};

const DriverProbe& driver_probe() noexcept;

// The compile-only GPU (runtime/compile_only.hpp, compile_only_driver.cpp): the probe claims the
// choice when it begins (none can be made after it) and gets the chosen architecture, 0 for none;
// the table answers for that GPU.
int claim_driver_probe() noexcept;
DriverApi compile_only_driver_table();

// Non-null once cuInit succeeded.
const DriverApi* driver_api() noexcept;

// True in a child of fork() whose parent had initialized CUDA.
bool forked_after_init() noexcept;

// "CUDA_ERROR_NO_DEVICE" for any code, from the driver when it can say, else xp's own table.
std::string driver_error_name(int code);
std::string driver_error_message(int code);
// For the launch and execution codes (700 to 720): what the code means, whether it left the context
// unusable (sticky) or not, and what to do, in parentheses; empty for other codes.
std::string driver_error_advice(int code);
bool driver_error_sticky(int code) noexcept;  // 700, 702, 710, 714 to 719

// Throws CudaError for a failed call, keeping the code, name, message and the call.
void check(cu::CUresult r, const char* call);

// Called after every successful Stream::synchronize and synchronize(device) (and so wherever xp
// waits for a stream: the allocator's out-of-memory paths, free_all): the kernel layer releases
// there the arrays of launches that have completed (jit/kernel.cpp), which the runtime below it
// cannot name. One hook; null: none.
void set_after_synchronize(void (*hook)()) noexcept;

// The driver table for using a device: throws DeviceUnavailable (or the fork error) when CUDA is
// not usable, and Error naming the entry point when the driver lacks one xp needs for this.
const DriverApi& api_for_use();
[[noreturn]] void throw_missing_entry_point(const char* name);
template <class F>
F need(F f, const char* name) {
  if (f == nullptr) throw_missing_entry_point(name);
  return f;
}

// The device's primary context, retained once per process, made current on this thread.
// Throws DeviceUnavailable or CudaError.
void make_current(int ordinal);

// Whether make_current already retained this device's primary context in this process.
bool context_retained(int ordinal) noexcept;

}  // namespace xp::detail
