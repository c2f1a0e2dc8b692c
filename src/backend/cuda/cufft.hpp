#pragma once

// cuFFT, opened at run time as cuBLAS is (library_search.hpp: XP_CUFFT first): Backend::fft on a
// CUDA device. The types, constants and entry points xp calls are declared here (ABI facts of
// cufft.h; no CUDA header). The library is searched and opened on the first transform (or `xp
// doctor`), never when xp starts.
//
// Plans: one per (kind, n, batch, dtype, device), made with cufftMakePlanMany64 with cuFFT's own
// work area off, kept in a cache of at most kPlanCacheSize plans (least recently used destroyed
// first, after the device's stream is drained). A plan holds no device memory of xp's: each
// transform takes its work area from the backend's allocator (counted against
// XP_GPU_MEMORY_LIMIT, back to its cache once the transform is enqueued), sets it
// (cufftSetWorkArea) and the stream (cufftSetStream, xp's stream of the device), and runs under the
// plan's lock. A complex-to-real transform overwrites its input in cuFFT, so it reads a copy; the
// scale is one fused multiply over the output.

#include <cstddef>
#include <cstdint>
#include <string>

#include "backend/backend.hpp"
#include "backend/cuda/library_search.hpp"
#include "xp/device.hpp"

namespace xp::detail::cufft {

using cufftResult = int;
using cufftHandle = int;
using cudaStream_t = struct CUstream_st*;

constexpr cufftResult CUFFT_SUCCESS = 0;
// cufftType
constexpr int CUFFT_R2C = 0x2a, CUFFT_C2R = 0x2c, CUFFT_C2C = 0x29;
constexpr int CUFFT_D2Z = 0x6a, CUFFT_Z2D = 0x6c, CUFFT_Z2Z = 0x69;
constexpr int CUFFT_FORWARD = -1, CUFFT_INVERSE = 1;

constexpr std::size_t kPlanCacheSize = 16;

struct Api {
  cufftResult (*cufftGetVersion)(int*) = nullptr;
  cufftResult (*cufftCreate)(cufftHandle*) = nullptr;
  cufftResult (*cufftDestroy)(cufftHandle) = nullptr;
  cufftResult (*cufftSetAutoAllocation)(cufftHandle, int) = nullptr;
  cufftResult (*cufftMakePlanMany64)(cufftHandle, int rank, long long* n, long long* inembed, long long istride,
                                     long long idist, long long* onembed, long long ostride, long long odist, int type,
                                     long long batch, std::size_t* work_size) = nullptr;
  cufftResult (*cufftSetStream)(cufftHandle, cudaStream_t) = nullptr;
  cufftResult (*cufftSetWorkArea)(cufftHandle, void*) = nullptr;
  cufftResult (*cufftExecC2C)(cufftHandle, void* in, void* out, int direction) = nullptr;
  cufftResult (*cufftExecZ2Z)(cufftHandle, void* in, void* out, int direction) = nullptr;
  cufftResult (*cufftExecR2C)(cufftHandle, void* in, void* out) = nullptr;
  cufftResult (*cufftExecD2Z)(cufftHandle, void* in, void* out) = nullptr;
  cufftResult (*cufftExecC2R)(cufftHandle, void* in, void* out) = nullptr;
  cufftResult (*cufftExecZ2D)(cufftHandle, void* in, void* out) = nullptr;
};

// libcufft.so.12 (CUDA 13), .11 (CUDA 12), the wheels nvidia/cu13/lib and nvidia/cufft/lib, version
// from cufftGetVersion.
const cuda::LibrarySpec& spec();

using Library = cuda::LoadedLibrary<Api>;  // api null when unavailable: search.reason says why
const Library& library() noexcept;

std::string result_name(cufftResult r);
void check(cufftResult r, const char* call);

// The plans cached now (all devices), and the plans made since the process started: for tests.
std::size_t cached_plans() noexcept;
std::size_t plans_made() noexcept;

// Backend::fft on `device`. False, having done nothing, when cuFFT is unavailable.
bool device_fft(Backend& backend, const Device& device, const FftCall& call, const View& in, const View& out);

}  // namespace xp::detail::cufft
