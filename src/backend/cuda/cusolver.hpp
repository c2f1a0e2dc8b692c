#pragma once

// cuSOLVER, opened at run time as cuBLAS is (library_search.hpp: XP_CUSOLVER first): the dense
// factorizations of Backend::linalg on a CUDA device. The types, constants and entry points xp
// calls are declared here (ABI facts of cusolverDn.h, cusolver_common.h and cublas_api.h; no CUDA
// header). The library is searched and opened on the first factorization (or `xp doctor`), never
// when xp starts. Each device gets one cusolverDn handle, created on first use and bound to xp's
// stream of the device; work areas come from the backend's allocator for each call (they count
// against XP_GPU_MEMORY_LIMIT and go back to its cache when the call's work is enqueued).
//
// Storage order. xp's matrices are row-major and cuSOLVER's column-major: a row-major buffer read
// as column-major is the transpose. Where the transposed problem gives the answer directly, xp
// solves it and moves nothing (solve: getrf of a^T and getrs with CUBLAS_OP_T; cholesky: potrf of
// a^T = conj(a) with the other triangle, whose factor read row-major is the one asked for; svd with
// m <= n: gesvd of a^T, whose U read row-major is vh and whose VT is u); elsewhere (lu, qr, eigh,
// svd with m > n, and a solve with several right-hand sides) the matrices are transposed on the
// device by a fused copy (xp's elementwise kernels) into column-major scratch and back.

#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "backend/backend.hpp"
#include "backend/cuda/library_search.hpp"
#include "xp/device.hpp"

namespace xp::detail::cusolver {

using cusolverStatus_t = int;
using cusolverDnHandle_t = struct cusolverDnContext*;
using cudaStream_t = struct CUstream_st*;

constexpr cusolverStatus_t CUSOLVER_STATUS_SUCCESS = 0;
constexpr int CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1;  // cublasFillMode_t
constexpr int CUBLAS_OP_N = 0, CUBLAS_OP_T = 1;                        // cublasOperation_t
constexpr int CUSOLVER_EIG_MODE_NOVECTOR = 0, CUSOLVER_EIG_MODE_VECTOR = 1;

using Handle = cusolverDnHandle_t;
// One signature per routine serves its four dtypes (S, D, C, Z): every matrix and vector is a
// pointer, and lwork counts elements of the routine's dtype.
using PFN_potrf_bufferSize = cusolverStatus_t (*)(Handle, int uplo, int n, void* A, int lda, int* lwork);
using PFN_potrf = cusolverStatus_t (*)(Handle, int uplo, int n, void* A, int lda, void* work, int lwork, int* info);
using PFN_potrfBatched = cusolverStatus_t (*)(Handle, int uplo, int n, void** A, int lda, int* info, int batch);
using PFN_getrf_bufferSize = cusolverStatus_t (*)(Handle, int m, int n, void* A, int lda, int* lwork);
using PFN_getrf = cusolverStatus_t (*)(Handle, int m, int n, void* A, int lda, void* work, int* ipiv, int* info);
using PFN_getrs = cusolverStatus_t (*)(Handle, int trans, int n, int nrhs, const void* A, int lda, const int* ipiv,
                                       void* B, int ldb, int* info);
using PFN_geqrf_bufferSize = cusolverStatus_t (*)(Handle, int m, int n, void* A, int lda, int* lwork);
using PFN_geqrf = cusolverStatus_t (*)(Handle, int m, int n, void* A, int lda, void* tau, void* work, int lwork,
                                       int* info);
using PFN_orgqr_bufferSize = cusolverStatus_t (*)(Handle, int m, int n, int k, const void* A, int lda, const void* tau,
                                                  int* lwork);
using PFN_orgqr = cusolverStatus_t (*)(Handle, int m, int n, int k, void* A, int lda, const void* tau, void* work,
                                       int lwork, int* info);
using PFN_syevd_bufferSize = cusolverStatus_t (*)(Handle, int jobz, int uplo, int n, const void* A, int lda,
                                                  const void* W, int* lwork);
using PFN_syevd = cusolverStatus_t (*)(Handle, int jobz, int uplo, int n, void* A, int lda, void* W, void* work,
                                       int lwork, int* info);
using syevjInfo_t = struct syevjInfo*;
using PFN_syevjBatched_bufferSize = cusolverStatus_t (*)(Handle, int jobz, int uplo, int n, const void* A, int lda,
                                                         const void* W, int* lwork, syevjInfo_t params, int batch);
using PFN_syevjBatched = cusolverStatus_t (*)(Handle, int jobz, int uplo, int n, void* A, int lda, void* W, void* work,
                                              int lwork, int* info, syevjInfo_t params, int batch);
using PFN_gesvd_bufferSize = cusolverStatus_t (*)(Handle, int m, int n, int* lwork);
using PFN_gesvd = cusolverStatus_t (*)(Handle, signed char jobu, signed char jobvt, int m, int n, void* A, int lda,
                                       void* S, void* U, int ldu, void* VT, int ldvt, void* work, int lwork,
                                       void* rwork, int* info);

// The entry points; all required but cusolverDnDestroy. Per routine, [0..3] = float32, float64,
// complex64, complex128 (orgqr and syevd are ungqr and heevd for the complex ones).
struct Api {
  cusolverStatus_t (*cusolverGetVersion)(int*) = nullptr;
  cusolverStatus_t (*cusolverDnCreate)(Handle*) = nullptr;
  cusolverStatus_t (*cusolverDnSetStream)(Handle, cudaStream_t) = nullptr;
  cusolverStatus_t (*cusolverDnDestroy)(Handle) = nullptr;  // optional: only a handle whose setup failed
  PFN_potrf_bufferSize potrf_bufferSize[4] = {};
  PFN_potrf potrf[4] = {};
  PFN_potrfBatched potrfBatched[4] = {};
  PFN_getrf_bufferSize getrf_bufferSize[4] = {};
  PFN_getrf getrf[4] = {};
  PFN_getrs getrs[4] = {};
  PFN_geqrf_bufferSize geqrf_bufferSize[4] = {};
  PFN_geqrf geqrf[4] = {};
  PFN_orgqr_bufferSize orgqr_bufferSize[4] = {};
  PFN_orgqr orgqr[4] = {};
  PFN_syevd_bufferSize syevd_bufferSize[4] = {};
  PFN_syevd syevd[4] = {};
  PFN_gesvd_bufferSize gesvd_bufferSize[4] = {};
  PFN_gesvd gesvd[4] = {};
  // Optional (all or none): Jacobi eigh of a batch of small matrices in one call, as CuPy's eigh
  // (syevjBatched / heevjBatched, its parameters' defaults: eigenvalues sorted ascending).
  cusolverStatus_t (*cusolverDnCreateSyevjInfo)(syevjInfo_t*) = nullptr;
  cusolverStatus_t (*cusolverDnDestroySyevjInfo)(syevjInfo_t) = nullptr;
  PFN_syevjBatched_bufferSize syevjBatched_bufferSize[4] = {};
  PFN_syevjBatched syevjBatched[4] = {};
};

// How cuSOLVER is searched: libcusolver.so.12 (CUDA 13), .11 (CUDA 12), the wheels nvidia/cu13/lib
// and nvidia/cusolver/lib, version from cusolverGetVersion.
const cuda::LibrarySpec& spec();

// The process's cuSOLVER: searched on first use, once. Never throws.
using Library = cuda::LoadedLibrary<Api>;  // api null when unavailable: search.reason says why
const Library& library() noexcept;

// "CUSOLVER_STATUS_INVALID_VALUE" for any status.
std::string status_name(cusolverStatus_t status);
// Throws xp::Error naming the call, the status and its number.
void check(cusolverStatus_t status, const char* call);

// Backend::linalg on `device` (backend: its allocator and run_fused, for scratch and the copies).
// False, having done nothing, when cuSOLVER is unavailable or a size is past its int arguments.
bool device_linalg(Backend& backend, const Device& device, const LinalgCall& call, std::span<const View> in,
                   std::span<const View> out, std::span<std::int64_t> info);

}  // namespace xp::detail::cusolver
