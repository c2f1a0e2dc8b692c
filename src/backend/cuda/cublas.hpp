#pragma once

// cuBLAS, opened at run time like NVRTC: the few types, constants and entry points xp uses are
// declared here (ABI facts of cublas_api.h and library_types.h, no CUDA header), the library is
// found along the search order of docs/design.md ("Finding libraries"), and each device gets one
// handle, created on first use, bound to xp's stream of the device and to a workspace from the
// backend's own allocator (so it counts against XP_GPU_MEMORY_LIMIT). Handles are never destroyed:
// arrays and streams may outlive static destruction.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "xp/device.hpp"
#include "xp/runtime.hpp"
#include "xp/stream.hpp"

namespace xp::detail::cublas {

using cublasStatus_t = int;
using cublasHandle_t = struct cublasContext*;
using cudaStream_t = struct CUstream_st*;  // the runtime's stream is the driver's CUstream

constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
constexpr int CUBLAS_OP_N = 0;
constexpr int CUBLAS_OP_T = 1;
constexpr int CUBLAS_OP_C = 2;  // conjugate transpose (cuBLAS has no conjugate without the transpose)
constexpr int CUBLAS_GEMM_DEFAULT = -1;
// The handle's math mode: CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION.
// CUBLAS_DEFAULT_MATH lets cuBLAS use "at least the same number of mantissa and exponent bits as
// requested", and for an Ex call with a cublasComputeType_t the request is that compute type: the
// math mode's precision values (TENSOR_OP, PEDANTIC, TF32_TENSOR_OP) concern the calls that name no
// compute type (cublas<t>gemm, or a cudaDataType as compute type; cublas_api.h's own comments).
// So CUBLAS_COMPUTE_32F never uses TF32 on this handle, and CUBLAS_COMPUTE_32F_FAST_TF32 may.
// Complex matmul goes through the same call (CUDA_C_32F with CUBLAS_COMPUTE_32F, CUDA_C_64F with
// CUBLAS_COMPUTE_64F: what cublasCgemm / cublasZgemm compute, with the compute type explicit), so
// cuBLAS needs no further entry point for it.
constexpr int CUBLAS_DEFAULT_MATH = 0;
// Reductions inside a mixed-precision gemm (float16 in and out, float32 compute) stay in the
// compute type: "computed in float32, rounded once at the end" holds for split-k too. A flag on the
// reductions only, for outputs narrower than the compute type: it neither forbids nor forces TF32
// inputs (float32 output with FAST_TF32 has float32 reductions either way).
constexpr int CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16;
// cudaDataType
constexpr int CUDA_R_32F = 0;
constexpr int CUDA_R_64F = 1;
constexpr int CUDA_R_16F = 2;
constexpr int CUDA_R_16BF = 14;
constexpr int CUDA_C_32F = 4;  // complex64: {re, im} of float32
constexpr int CUDA_C_64F = 5;  // complex128
// cublasComputeType_t: float32 in CUBLAS_COMPUTE_32F unless MatmulPrecision::tf32 asks for
// CUBLAS_COMPUTE_32F_FAST_TF32 (float32 inputs rounded to TF32, sums in float32); never the other
// _FAST_ kinds (16-bit inputs).
constexpr int CUBLAS_COMPUTE_32F = 68;
constexpr int CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
constexpr int CUBLAS_COMPUTE_64F = 70;
// libraryPropertyType
constexpr int MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2;

using PFN_cublasGetProperty = cublasStatus_t (*)(int type, int* value);
using PFN_cublasCreate_v2 = cublasStatus_t (*)(cublasHandle_t*);
using PFN_cublasDestroy_v2 = cublasStatus_t (*)(cublasHandle_t);
using PFN_cublasSetStream_v2 = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
using PFN_cublasSetWorkspace_v2 = cublasStatus_t (*)(cublasHandle_t, void*, std::size_t);
using PFN_cublasSetMathMode = cublasStatus_t (*)(cublasHandle_t, int);
using PFN_cublasGetStatusName = const char* (*)(cublasStatus_t);
using PFN_cublasGemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, int transa, int transb, int m, int n, int k,
                                                          const void* alpha, const void* A, int Atype, int lda,
                                                          long long strideA, const void* B, int Btype, int ldb,
                                                          long long strideB, const void* beta, void* C, int Ctype,
                                                          int ldc, long long strideC, int batchCount, int computeType,
                                                          int algo);

// The batched LU of cuBLAS (linalg's solve and lu of a batch of small matrices, cusolver.cpp), per
// dtype S, D, C, Z; matrices by device arrays of pointers.
using PFN_getrfBatched = cublasStatus_t (*)(cublasHandle_t, int n, void** A, int lda, int* pivots, int* info,
                                            int batch);
using PFN_getrsBatched = cublasStatus_t (*)(cublasHandle_t, int trans, int n, int nrhs, void** A, int lda,
                                            const int* pivots, void** B, int ldb, int* info, int batch);

// The entry points xp calls; all required but the last four.
struct Api {
  PFN_cublasGetProperty cublasGetProperty = nullptr;
  PFN_cublasCreate_v2 cublasCreate_v2 = nullptr;
  PFN_cublasSetStream_v2 cublasSetStream_v2 = nullptr;
  PFN_cublasSetWorkspace_v2 cublasSetWorkspace_v2 = nullptr;
  PFN_cublasSetMathMode cublasSetMathMode = nullptr;
  PFN_cublasGemmStridedBatchedEx cublasGemmStridedBatchedEx = nullptr;
  PFN_cublasGetStatusName cublasGetStatusName = nullptr;  // optional (names come from xp's table otherwise)
  PFN_cublasDestroy_v2 cublasDestroy_v2 = nullptr;        // optional: only a handle whose setup failed is destroyed
  PFN_getrfBatched getrfBatched[4] = {};  // optional: cublasSgetrfBatched .. Z (without: cuSOLVER's getrf per matrix)
  PFN_getrsBatched getrsBatched[4] = {};  // optional: cublasSgetrsBatched .. Z
};

// Where to look: the explicit path (XP_CUBLAS) and the foreign variables, as read from config().
struct SearchInputs {
  std::string explicit_path;  // XP_CUBLAS; when set nothing else is considered
  std::string cuda_path, cuda_home, virtual_env, conda_prefix;
  std::vector<std::string> site_packages;  // extra site-packages folders (PYTHONPATH entries, ~/.local ...)
  bool system_locations = true;            // the OS loader and /usr/local/cuda/lib64
  int driver_version = 0;                  // 0: no driver, every major acceptable
};

// What a search found: every cuBLAS seen (one LibraryInfo each, the one used with chosen = true),
// the places tried, and why none is used (empty when one is).
struct SearchResult {
  std::vector<LibraryInfo> found;
  std::vector<LibraryInfo> lt;  // parallel to found: the libcublasLt each one loaded (its dependency)
  std::vector<std::string> tried;
  int chosen = -1;     // index in found
  std::string reason;  // why cuBLAS is unavailable: "XP_CUBLAS points at ..., which does not exist", ...
};

// Looks for cuBLAS as docs/design.md ("Finding libraries") says: XP_CUBLAS; CUDA_PATH and
// CUDA_HOME (lib64, lib, targets/x86_64-linux/lib); the wheels (nvidia/cu13/lib, nvidia/cublas/lib) in site-packages;
// CONDA_PREFIX/lib; the OS loader (libcublas.so.13, .so.12); /usr/local/cuda/lib64. Among those
// found, the newest whose CUDA major is at most the driver's. Each candidate is loaded to read its
// version (cublasGetProperty, no GPU needed); the chosen one stays loaded. Never throws.
SearchResult search(const SearchInputs& inputs);

// The inputs of this process (config() and the foreign environment).
SearchInputs process_inputs();

// The process's cuBLAS: searched once, on first use. Never throws.
struct Library {
  SearchResult search;
  const Api* api = nullptr;  // null when unavailable: search.reason says why
};
const Library& library() noexcept;

// Why matmul on a GPU does not use cuBLAS in this process ("" when it does): for `xp doctor`.
std::string unavailable_reason() noexcept;

// "CUBLAS_STATUS_INVALID_VALUE" for any status.
std::string status_name(cublasStatus_t status);
// Throws xp::Error naming the call, the status and its number.
void check(cublasStatus_t status, const char* call);

// The workspace xp gives a handle: 32 MiB on Hopper and newer, 4 MiB before (cuBLAS's own advice).
std::size_t workspace_bytes(int cc_major) noexcept;

// A device's handle, created on first use with its stream set to xp's default stream of the device, the
// math mode set (the compute type of each call decides TF32; no reduced-precision reductions) and
// the workspace from `allocate` (its owner: kept with the handle for the life of the process;
// null: none). Throws DeviceUnavailable when cuBLAS is unavailable, CudaError / Error when creating
// or setting up the handle fails: that handle is destroyed and its workspace given back, so a
// retry leaks nothing. The mutex serialises calls on the handle.
struct Handle {
  cublasHandle_t handle = nullptr;
  std::shared_ptr<void> workspace;
  std::size_t workspace_bytes = 0;
  void* stream = nullptr;  // the CUstream the handle's calls go to now
  std::mutex mutex;
};
Handle& handle_for(const Device& device, const std::function<std::shared_ptr<void>(std::size_t)>& allocate);
// Points the handle's calls (h.mutex held, the device current) at `stream`, the caller's current
// stream. When it changes, the new stream first waits on the device for the work queued on the old
// one (the workspace is one per handle: two streams never use it at once), and the workspace is set
// again (setting a stream resets it).
void bind_stream(Handle& h, const Stream& stream);

}  // namespace xp::detail::cublas
