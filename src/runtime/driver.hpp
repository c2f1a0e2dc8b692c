#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "runtime/cuda_abi.hpp"
#include "xp/device.hpp"
#include "xp/runtime.hpp"

namespace xp::detail {

// The driver entry points xp uses, resolved once through cuGetProcAddress_v2 at ABI 12000 with
// legacy default-stream semantics. Required ones are never null once the table loaded.
#define XP_DRIVER_FUNCTIONS(X)          \
  X(cuDriverGetVersion, true)           \
  X(cuInit, true)                       \
  X(cuGetErrorName, true)               \
  X(cuGetErrorString, true)             \
  X(cuDeviceGetCount, true)             \
  X(cuDeviceGet, true)                  \
  X(cuDeviceGetName, true)              \
  X(cuDeviceGetAttribute, true)         \
  X(cuDeviceTotalMem, true)             \
  X(cuDeviceGetUuid, false)             \
  X(cuDeviceGetPCIBusId, false)         \
  X(cuDevicePrimaryCtxRetain, true)     \
  X(cuDevicePrimaryCtxRelease, true)    \
  X(cuCtxGetCurrent, true)              \
  X(cuCtxSetCurrent, true)              \
  X(cuCtxSynchronize, true)             \
  X(cuMemGetInfo, true)

struct DriverApi {
#define XP_DECLARE_MEMBER(name, required) cu::PFN_##name name = nullptr;
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

// Non-null once cuInit succeeded.
const DriverApi* driver_api() noexcept;

// True in a child of fork() whose parent had initialized CUDA.
bool forked_after_init() noexcept;

// "CUDA_ERROR_NO_DEVICE" for any code, from the driver when it can say, else xp's own table.
std::string driver_error_name(int code);
std::string driver_error_message(int code);

// Throws CudaError for a failed call, keeping the code, name, message and the call.
void check(cu::CUresult r, const char* call);

// The device's primary context, retained once per process, made current on this thread.
// Throws DeviceUnavailable or CudaError.
void make_current(int ordinal);

// Whether make_current already retained this device's primary context in this process.
bool context_retained(int ordinal) noexcept;

}  // namespace xp::detail
