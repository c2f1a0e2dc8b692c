#pragma once

// Driver entry points used by interop with other CUDA libraries and by the launch keep-alive:
// resolved on first use through the same cuGetProcAddress_v2 as the main table (driver.hpp), at
// the CUDA 12.0 ABI with legacy default-stream semantics. Each is optional: a null pointer means
// the driver lacks it (need() turns that into an Error naming it).

#include <cstdint>

#include "runtime/cuda_abi.hpp"

namespace xp::detail {

namespace cu {
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
constexpr unsigned CU_MEMORYTYPE_HOST = 1;
constexpr unsigned CU_MEMORYTYPE_DEVICE = 2;
constexpr unsigned CU_MEMORYTYPE_UNIFIED = 4;
// The special stream handles every driver call accepts.
inline CUstream stream_legacy() noexcept {
  return reinterpret_cast<CUstream>(std::uintptr_t{1});
}
inline CUstream stream_per_thread() noexcept {
  return reinterpret_cast<CUstream>(std::uintptr_t{2});
}

using PFN_cuPointerGetAttribute = CUresult (*)(void* data, int attribute, CUdeviceptr ptr);
using PFN_cuStreamWaitEvent = CUresult (*)(CUstream, CUevent, unsigned flags);
using PFN_cuEventQuery = CUresult (*)(CUevent);
}  // namespace cu

struct DriverExtApi {
  cu::PFN_cuPointerGetAttribute cuPointerGetAttribute = nullptr;
  cu::PFN_cuStreamWaitEvent cuStreamWaitEvent = nullptr;
  cu::PFN_cuEventQuery cuEventQuery = nullptr;
};

// The table, resolved once. Throws DeviceUnavailable when CUDA is not usable (as api_for_use).
const DriverExtApi& driver_ext_api();

}  // namespace xp::detail
