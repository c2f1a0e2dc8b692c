#pragma once

// The few CUDA driver, NVRTC and NVML types and constants xp uses, declared by xp itself: these
// are ABI facts (enum values, struct layouts, signatures), so no CUDA header is needed to build.
// Every cu:: constant and signature of the library is here (the CLI, which sees only the public
// API, declares the few its launch benchmark uses itself: tools/xp/bench_launch_parts.hpp, namespace raw).
// The driver signatures match CUDA 12.0, the ABI version xp asks cuGetProcAddress_v2 for.

#include <cstddef>
#include <cstdint>

namespace xp::detail::cu {

using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st*;
struct CUuuid {
  char bytes[16];
};

constexpr int kAbiVersion = 12000;  // the signatures below are those of CUDA 12.0

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// cuGetProcAddress_v2 flags and results
constexpr std::uint64_t CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1;
enum CUdriverProcAddressQueryResult : int {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};

// device attributes
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36;
constexpr int CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37;
constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

using PFN_cuGetProcAddress_v2 = CUresult (*)(const char* symbol, void** pfn, int cuda_version, std::uint64_t flags,
                                             CUdriverProcAddressQueryResult* symbol_status);
using PFN_cuDriverGetVersion = CUresult (*)(int*);
using PFN_cuInit = CUresult (*)(unsigned int);
using PFN_cuGetErrorName = CUresult (*)(CUresult, const char**);
using PFN_cuGetErrorString = CUresult (*)(CUresult, const char**);
using PFN_cuDeviceGetCount = CUresult (*)(int*);
using PFN_cuDeviceGet = CUresult (*)(CUdevice*, int);
using PFN_cuDeviceGetName = CUresult (*)(char*, int, CUdevice);
using PFN_cuDeviceGetAttribute = CUresult (*)(int*, int, CUdevice);
using PFN_cuDeviceTotalMem = CUresult (*)(std::size_t*, CUdevice);
using PFN_cuDeviceGetUuid = CUresult (*)(CUuuid*, CUdevice);
using PFN_cuDeviceGetPCIBusId = CUresult (*)(char*, int, CUdevice);
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext*, CUdevice);
using PFN_cuDevicePrimaryCtxRelease = CUresult (*)(CUdevice);
using PFN_cuCtxGetCurrent = CUresult (*)(CUcontext*);
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext);
using PFN_cuCtxSynchronize = CUresult (*)();
using PFN_cuMemGetInfo = CUresult (*)(std::size_t*, std::size_t*);

using CUdeviceptr = unsigned long long;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUoccupancyB2DSize = std::size_t (*)(int);

constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr unsigned CU_EVENT_BLOCKING_SYNC = 1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
// pointer attributes and memory types (cuPointerGetAttribute)
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
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

using PFN_cuMemAlloc = CUresult (*)(CUdeviceptr*, std::size_t);
using PFN_cuMemFree = CUresult (*)(CUdeviceptr);
using PFN_cuMemcpyHtoD = CUresult (*)(CUdeviceptr, const void*, std::size_t);
using PFN_cuMemcpyDtoH = CUresult (*)(void*, CUdeviceptr, std::size_t);
using PFN_cuMemcpyDtoD = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t);
using PFN_cuMemcpyHtoDAsync = CUresult (*)(CUdeviceptr, const void*, std::size_t, CUstream);
using PFN_cuMemcpyDtoHAsync = CUresult (*)(void*, CUdeviceptr, std::size_t, CUstream);
using PFN_cuMemcpyDtoDAsync = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);
using PFN_cuMemsetD8Async = CUresult (*)(CUdeviceptr, unsigned char, std::size_t, CUstream);
using PFN_cuMemHostAlloc = CUresult (*)(void**, std::size_t, unsigned);
using PFN_cuMemFreeHost = CUresult (*)(void*);
using PFN_cuPointerGetAttribute = CUresult (*)(void* data, int attribute, CUdeviceptr ptr);
using PFN_cuStreamCreate = CUresult (*)(CUstream*, unsigned);
using PFN_cuStreamDestroy = CUresult (*)(CUstream);
using PFN_cuStreamSynchronize = CUresult (*)(CUstream);
using PFN_cuStreamWaitEvent = CUresult (*)(CUstream, CUevent, unsigned flags);
using PFN_cuEventCreate = CUresult (*)(CUevent*, unsigned);
using PFN_cuEventQuery = CUresult (*)(CUevent);
using PFN_cuEventDestroy = CUresult (*)(CUevent);
using PFN_cuEventRecord = CUresult (*)(CUevent, CUstream);
using PFN_cuEventSynchronize = CUresult (*)(CUevent);
using PFN_cuEventElapsedTime = CUresult (*)(float*, CUevent, CUevent);
using PFN_cuModuleLoadData = CUresult (*)(CUmodule*, const void*);
using PFN_cuModuleUnload = CUresult (*)(CUmodule);
using PFN_cuModuleGetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using PFN_cuModuleGetGlobal = CUresult (*)(CUdeviceptr*, std::size_t*, CUmodule, const char*);
using PFN_cuFuncGetAttribute = CUresult (*)(int*, int, CUfunction);
using PFN_cuFuncSetAttribute = CUresult (*)(CUfunction, int, int);
using PFN_cuLaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, CUstream, void**, void**);
using PFN_cuOccupancyMaxPotentialBlockSize = CUresult (*)(int*, int*, CUfunction, CUoccupancyB2DSize, std::size_t, int);
using PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor = CUresult (*)(int*, CUfunction, int, std::size_t);
using PFN_cuFuncGetParamInfo = CUresult (*)(CUfunction, std::size_t, std::size_t*, std::size_t*);

}  // namespace xp::detail::cu

namespace xp::detail::nvrtc {
using nvrtcResult = int;
using PFN_nvrtcVersion = nvrtcResult (*)(int*, int*);
using PFN_nvrtcGetNumSupportedArchs = nvrtcResult (*)(int*);
using PFN_nvrtcGetSupportedArchs = nvrtcResult (*)(int*);
}  // namespace xp::detail::nvrtc

namespace xp::detail::nvml {
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
using PFN_nvmlInit_v2 = nvmlReturn_t (*)();
using PFN_nvmlShutdown = nvmlReturn_t (*)();
using PFN_nvmlSystemGetDriverVersion = nvmlReturn_t (*)(char*, unsigned int);
using PFN_nvmlDeviceGetHandleByPciBusId_v2 = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
using PFN_nvmlDeviceGetMemoryInfo = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
}  // namespace xp::detail::nvml
