// cuSOLVER: found and opened on first use, one handle per device, and Backend::linalg's six
// factorizations over it (cusolver.hpp).
#include "backend/cuda/cusolver.hpp"

#include <climits>
#include <initializer_list>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "backend/cuda/cublas.hpp"
#include "backend/cuda/matrix_copy.hpp"
#include "runtime/current.hpp"
#include "runtime/driver.hpp"
#include "runtime/foreign.hpp"
#include "xp/error.hpp"
#include "xp/stream.hpp"

namespace xp::detail::cusolver {

namespace {

using i64 = std::int64_t;

int cuda_major_of(int library_major) {
  return library_major + 1;  // cuSOLVER 12 comes with CUDA 13, 11 with CUDA 12 (and 11)
}

template <class F>
void resolve(const DynLib& lib, const std::string& name, F& slot, std::string& missing) {
  slot = reinterpret_cast<F>(lib.symbol(name.c_str()));
  if (slot == nullptr && missing.empty()) missing = name;
}

// cusolverDn<X><routine>, X = S, D, C, Z; `complex_name` for C and Z where it differs (ungqr, heevd).
template <class F>
void resolve4(const DynLib& lib, const std::string& routine, const std::string& complex_name, F (&slots)[4],
              std::string& missing) {
  static const char kLetters[] = "SDCZ";
  for (int i = 0; i < 4; ++i)
    resolve(lib, std::string("cusolverDn") + kLetters[i] + (i < 2 ? routine : complex_name), slots[i], missing);
}

Api table_of(const DynLib& lib, std::string& missing) {
  Api a;
  resolve(lib, "cusolverGetVersion", a.cusolverGetVersion, missing);
  resolve(lib, "cusolverDnCreate", a.cusolverDnCreate, missing);
  resolve(lib, "cusolverDnSetStream", a.cusolverDnSetStream, missing);
  resolve4(lib, "potrf_bufferSize", "potrf_bufferSize", a.potrf_bufferSize, missing);
  resolve4(lib, "potrf", "potrf", a.potrf, missing);
  resolve4(lib, "potrfBatched", "potrfBatched", a.potrfBatched, missing);
  resolve4(lib, "getrf_bufferSize", "getrf_bufferSize", a.getrf_bufferSize, missing);
  resolve4(lib, "getrf", "getrf", a.getrf, missing);
  resolve4(lib, "getrs", "getrs", a.getrs, missing);
  resolve4(lib, "geqrf_bufferSize", "geqrf_bufferSize", a.geqrf_bufferSize, missing);
  resolve4(lib, "geqrf", "geqrf", a.geqrf, missing);
  resolve4(lib, "orgqr_bufferSize", "ungqr_bufferSize", a.orgqr_bufferSize, missing);
  resolve4(lib, "orgqr", "ungqr", a.orgqr, missing);
  resolve4(lib, "syevd_bufferSize", "heevd_bufferSize", a.syevd_bufferSize, missing);
  resolve4(lib, "syevd", "heevd", a.syevd, missing);
  resolve4(lib, "gesvd_bufferSize", "gesvd_bufferSize", a.gesvd_bufferSize, missing);
  resolve4(lib, "gesvd", "gesvd", a.gesvd, missing);
  std::string optional;
  resolve(lib, "cusolverDnDestroy", a.cusolverDnDestroy, optional);
  std::string jacobi;  // the batched Jacobi eigh: all of it, or none
  resolve(lib, "cusolverDnCreateSyevjInfo", a.cusolverDnCreateSyevjInfo, jacobi);
  resolve(lib, "cusolverDnDestroySyevjInfo", a.cusolverDnDestroySyevjInfo, jacobi);
  resolve4(lib, "syevjBatched_bufferSize", "heevjBatched_bufferSize", a.syevjBatched_bufferSize, jacobi);
  resolve4(lib, "syevjBatched", "heevjBatched", a.syevjBatched, jacobi);
  if (!jacobi.empty()) {
    a.cusolverDnCreateSyevjInfo = nullptr;
    for (auto& f : a.syevjBatched) f = nullptr;
  }
  return a;
}

const char* const kStatusNames[] = {
    "CUSOLVER_STATUS_SUCCESS",          "CUSOLVER_STATUS_NOT_INITIALIZED", "CUSOLVER_STATUS_ALLOC_FAILED",
    "CUSOLVER_STATUS_INVALID_VALUE",    "CUSOLVER_STATUS_ARCH_MISMATCH",   "CUSOLVER_STATUS_MAPPING_ERROR",
    "CUSOLVER_STATUS_EXECUTION_FAILED", "CUSOLVER_STATUS_INTERNAL_ERROR",  "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED",
    "CUSOLVER_STATUS_NOT_SUPPORTED"};

// One handle per device, bound to the stream of the call (xp's default stream outside a
// StreamScope); the mutex serialises the calls on it.
struct DeviceHandle {
  Handle handle = nullptr;
  void* stream = nullptr;  // the CUstream it is bound to now (the caller's current stream)
  std::mutex mutex;
};

DeviceHandle& handle_for(const Device& device, const Api& api) {
  static std::mutex m;
  static auto* handles = new std::map<int, DeviceHandle*>();  // never destroyed: arrays may outlive statics
  std::lock_guard<std::mutex> lock(m);
  if (auto it = handles->find(device.index()); it != handles->end()) return *it->second;
  detail::activate_context(device);
  Handle h = nullptr;
  check(api.cusolverDnCreate(&h), "cusolverDnCreate");
  try {
    check(api.cusolverDnSetStream(h, static_cast<cudaStream_t>(default_stream(device).handle())),
          "cusolverDnSetStream");
  } catch (...) {
    if (api.cusolverDnDestroy != nullptr) api.cusolverDnDestroy(h);
    throw;
  }
  auto* d = new DeviceHandle;
  d->handle = h;
  d->stream = default_stream(device).handle();
  handles->emplace(device.index(), d);
  return *d;
}

int dtype_index(DType t) {
  switch (t) {
    case DType::float32:
      return 0;
    case DType::float64:
      return 1;
    case DType::complex64:
      return 2;
    case DType::complex128:
      return 3;
    default:
      throw ValueError(std::string("linalg: cuSOLVER takes float32, float64, complex64 or complex128, not ") +
                       std::string(name(t)));
  }
}

// cuBLAS's handle of the device (shared with matmul), its workspace from the backend's allocator
// when this call creates it (null under a tight memory limit: cuBLAS then does without).
cublas::Handle& blas_handle(Backend& backend, const Device& device) {
  return cublas::handle_for(device, [&backend](std::size_t bytes) -> std::shared_ptr<void> {
    try {
      Allocation a = backend.allocate(bytes);
      std::byte* data = a.data;
      if (a.owner) return std::shared_ptr<void>(a.owner, data);
      return std::shared_ptr<void>(data, [release = a.release, n = a.bytes](void* p) {
        if (release != nullptr) release(static_cast<std::byte*>(p), n);
      });
    } catch (const OutOfMemory&) {
      return nullptr;
    }
  });
}

bool fits_int(i64 v) {
  return v >= 0 && v <= INT_MAX;
}

// One call's state: the backend (scratch, copies), the routine's dtype, the batch and the device
// info words, read back and checked at the end.
class Call {
 public:
  Call(Backend& backend, const Device& device, const Api& api, DType t, i64 batch)
      : be(backend), dev(device), api(api), t(t), ti(dtype_index(t)), e(static_cast<i64>(itemsize(t))), batch(batch) {
    dinfo = scratch(static_cast<std::size_t>(batch) * sizeof(int));
  }
  Allocation scratch(std::size_t bytes) { return be.allocate(bytes == 0 ? 1 : bytes); }
  int* info_at(i64 b) const { return reinterpret_cast<int*>(dinfo.data) + b; }
  // Device arrays of batch pointers, base + b * stride elements, one after the other for each
  // (base, stride) given (batched routines take them), uploaded at once.
  Allocation pointers(std::initializer_list<std::pair<std::byte*, i64>> arrays) {
    std::vector<std::uint64_t> host;
    host.reserve(static_cast<std::size_t>(batch) * arrays.size());
    for (const auto& [base, stride] : arrays)
      for (i64 b = 0; b < batch; ++b) host.push_back(reinterpret_cast<std::uintptr_t>(base + b * stride * e));
    Allocation a = scratch(host.size() * 8);
    be.copy_from_host(host.data(), a.data, host.size() * 8);
    return a;
  }
  void** pointer_array(const Allocation& a, int i) const {
    return reinterpret_cast<void**>(a.data + static_cast<std::size_t>(i * batch) * 8);
  }
  // A contiguous copy of n elements (a fused copy of the bytes' parts).
  void copy(const std::byte* src, std::byte* dst, i64 n) {
    copy_matrices(be, t, 1, 1, n, cuda::row_major(const_cast<std::byte*>(src), 1, n), cuda::row_major(dst, 1, n));
  }
  // The info words: out[b] = the positive code, 0 where fine; a negative one (an argument refused)
  // is an Error naming the routine.
  void read_info(std::span<std::int64_t> out, const char* routine) {
    std::vector<int> host(static_cast<std::size_t>(batch));
    be.copy_to_host(dinfo.data, host.data(), host.size() * sizeof(int));
    for (i64 b = 0; b < batch; ++b) {
      const int v = host[static_cast<std::size_t>(b)];
      if (v < 0)
        throw Error(std::string(routine) + " refused its argument " + std::to_string(-v) + " (info " +
                    std::to_string(v) + ") for batch entry " + std::to_string(b));
      if (static_cast<std::size_t>(b) < out.size()) out[static_cast<std::size_t>(b)] = v;
    }
  }

  Backend& be;
  const Device& dev;
  const Api& api;
  DType t;
  int ti;
  i64 e;
  i64 batch;
  Allocation dinfo;
};

// cholesky: potrf of the row-major buffer read column-major (a^T = conj(a), a Hermitian) with the
// other triangle: conj(a) = U'^H U' gives a = (U'^T)(U'^T)^H, and U' read row-major is U'^T, the
// lower factor asked for (and the same for the upper one). Computed in place in out, whose other
// triangle (still the input's) is then written 0.
void cholesky(Call& c, Handle h, const LinalgCall& call, const View& a, const View& out, i64 n) {
  const int uplo = call.upper ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  c.copy(a.data, out.data, c.batch * n * n);
  const int ni = static_cast<int>(n);
  if (c.batch > 1 && n <= 128) {
    Allocation ptrs = c.pointers({{out.data, n * n}});
    check(c.api.potrfBatched[c.ti](h, uplo, ni, c.pointer_array(ptrs, 0), ni, c.info_at(0), static_cast<int>(c.batch)),
          "cusolverDnXpotrfBatched");
  } else {
    int lwork = 0;
    check(c.api.potrf_bufferSize[c.ti](h, uplo, ni, out.data, ni, &lwork), "cusolverDnXpotrf_bufferSize");
    Allocation work = c.scratch(static_cast<std::size_t>(lwork) * static_cast<std::size_t>(c.e));
    for (i64 b = 0; b < c.batch; ++b)
      check(c.api.potrf[c.ti](h, uplo, ni, out.data + b * n * n * c.e, ni, work.data, lwork, c.info_at(b)),
            "cusolverDnXpotrf");
  }
  const cuda::MatrixLayout o = cuda::row_major(out.data, n, n);
  cuda::copy_matrices(c.be, c.t, c.batch, n, n, o, o, call.upper ? cuda::Triangle::upper : cuda::Triangle::lower);
}

// Whether a batch of n x n matrices goes to cuBLAS's batched LU (small matrices, as CuPy), with
// both of its entry points there.
bool batched_lu(const Call& c, i64 n) {
  const cublas::Library& blas = cublas::library();
  return c.batch > 1 && n <= 128 && blas.api != nullptr && blas.api->getrfBatched[c.ti] != nullptr &&
         blas.api->getrsBatched[c.ti] != nullptr;
}

// getrf of every matrix of `A` (column-major, lda = n) with its pivots in ipiv (n int32 each):
// cuBLAS's batched getrf over the matrices' device pointers where given (batched_lu), else
// cuSOLVER's per matrix.
void getrf_all(Call& c, Handle h, std::byte* A, i64 n, int* ipiv, void** pointers) {
  const int ni = static_cast<int>(n);
  if (pointers != nullptr) {
    cublas::Handle& bh = blas_handle(c.be, c.dev);
    std::lock_guard<std::mutex> lock(bh.mutex);
    cublas::bind_stream(bh, work_stream(c.dev));
    cublas::check(cublas::library().api->getrfBatched[c.ti](bh.handle, ni, pointers, ni, ipiv, c.info_at(0),
                                                            static_cast<int>(c.batch)),
                  "cublasXgetrfBatched");
    return;
  }
  int lwork = 0;
  check(c.api.getrf_bufferSize[c.ti](h, ni, ni, A, ni, &lwork), "cusolverDnXgetrf_bufferSize");
  Allocation work = c.scratch(static_cast<std::size_t>(lwork) * static_cast<std::size_t>(c.e));
  for (i64 b = 0; b < c.batch; ++b)
    check(c.api.getrf[c.ti](h, ni, ni, A + b * n * n * c.e, ni, work.data, ipiv + b * n, c.info_at(b)),
          "cusolverDnXgetrf");
}

// lu: getrf of a itself (moved to column-major first), the factors moved back, the pivots made
// 0-based int64.
void lu(Call& c, Handle h, const View& a, const View& lu_out, const View& piv, i64 n) {
  Allocation A = c.scratch(static_cast<std::size_t>(c.batch * n * n * c.e));
  cuda::copy_matrices(c.be, c.t, c.batch, n, n, cuda::row_major(a.data, n, n), cuda::column_major(A.data, n, n));
  Allocation ipiv = c.scratch(static_cast<std::size_t>(c.batch * n) * sizeof(int));
  Allocation ptrs;
  if (batched_lu(c, n)) ptrs = c.pointers({{A.data, n * n}});
  getrf_all(c, h, A.data, n, reinterpret_cast<int*>(ipiv.data),
            ptrs.data != nullptr ? c.pointer_array(ptrs, 0) : nullptr);
  cuda::copy_matrices(c.be, c.t, c.batch, n, n, cuda::column_major(A.data, n, n), cuda::row_major(lu_out.data, n, n));
  cuda::pivots_to_int64(c.be, ipiv.data, piv.data, c.batch * n);
}

// solve: a's row-major buffer is a^T column-major; its getrf and getrs with CUBLAS_OP_T solve
// (a^T)^T x = b, so a is only copied (getrf overwrites). One right-hand side (k = 1) is the same
// in both orders and is solved in place in out; several are moved to column-major and back.
void solve(Call& c, Handle h, const View& a, const View& rhs, const View& x, i64 n, i64 k) {
  Allocation A = c.scratch(static_cast<std::size_t>(c.batch * n * n * c.e));
  c.copy(a.data, A.data, c.batch * n * n);
  Allocation ipiv_mem = c.scratch(static_cast<std::size_t>(c.batch * n) * sizeof(int));
  int* ipiv = reinterpret_cast<int*>(ipiv_mem.data);
  Allocation Bmem;
  std::byte* B = x.data;
  if (k == 1) {
    c.copy(rhs.data, x.data, c.batch * n);
  } else {
    Bmem = c.scratch(static_cast<std::size_t>(c.batch * n * k * c.e));
    B = Bmem.data;
    cuda::copy_matrices(c.be, c.t, c.batch, n, k, cuda::row_major(rhs.data, n, k), cuda::column_major(B, n, k));
  }
  const int ni = static_cast<int>(n), ki = static_cast<int>(k);
  if (batched_lu(c, n)) {
    // cuBLAS's batched LU, as CuPy's solve: both pointer arrays in one upload.
    Allocation ptrs = c.pointers({{A.data, n * n}, {B, n * k}});
    getrf_all(c, h, A.data, n, ipiv, c.pointer_array(ptrs, 0));
    cublas::Handle& bh = blas_handle(c.be, c.dev);
    int host_info = 0;  // getrsBatched's own: an argument refused
    std::lock_guard<std::mutex> lock(bh.mutex);
    cublas::bind_stream(bh, work_stream(c.dev));
    cublas::check(cublas::library().api->getrsBatched[c.ti](
                      bh.handle, cublas::CUBLAS_OP_T, ni, ki, c.pointer_array(ptrs, 0), ni, ipiv,
                      c.pointer_array(ptrs, 1), ni, &host_info, static_cast<int>(c.batch)),
                  "cublasXgetrsBatched");
    if (host_info < 0) throw Error("cublasXgetrsBatched refused its argument " + std::to_string(-host_info));
  } else {
    getrf_all(c, h, A.data, n, ipiv, nullptr);
    // getrs writes its own info (0: it checks arguments only): into scratch, so that getrf's stay.
    Allocation rs_info = c.scratch(sizeof(int));
    for (i64 b = 0; b < c.batch; ++b)
      check(c.api.getrs[c.ti](h, CUBLAS_OP_T, ni, ki, A.data + b * n * n * c.e, ni, ipiv + b * n, B + b * n * k * c.e,
                              ni, reinterpret_cast<int*>(rs_info.data)),
            "cusolverDnXgetrs");
  }
  if (k != 1) cuda::copy_matrices(c.be, c.t, c.batch, n, k, cuda::column_major(B, n, k), cuda::row_major(x.data, n, k));
}

// qr: geqrf of a moved to column-major (m x n, lda = m); R is its upper triangle (k or m rows),
// moved back with the rest zero; Q is orgqr / ungqr's first k (or m) columns, formed in place, or
// in an m x m copy when "complete" asks for more columns than a has.
void qr(Call& c, Handle h, const LinalgCall& call, const View& a, const View& q, const View& r, i64 m, i64 n) {
  const i64 k = std::min(m, n);
  const i64 qcols = call.complete ? m : k, rrows = call.complete ? m : k;
  Allocation A = c.scratch(static_cast<std::size_t>(c.batch * m * n * c.e));
  cuda::copy_matrices(c.be, c.t, c.batch, m, n, cuda::row_major(a.data, m, n), cuda::column_major(A.data, m, n));
  Allocation tau = c.scratch(static_cast<std::size_t>(c.batch * k * c.e));
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  int lwork = 0;
  check(c.api.geqrf_bufferSize[c.ti](h, mi, ni, A.data, mi, &lwork), "cusolverDnXgeqrf_bufferSize");
  Allocation Q;
  std::byte* qdata = A.data;
  if (qcols > n) {
    Q = c.scratch(static_cast<std::size_t>(c.batch * m * m * c.e));
    qdata = Q.data;
  }
  const int qi = static_cast<int>(qcols);
  int lwork_q = 0;
  check(c.api.orgqr_bufferSize[c.ti](h, mi, qi, ki, qdata, mi, tau.data, &lwork_q), "cusolverDnXorgqr_bufferSize");
  Allocation work = c.scratch(static_cast<std::size_t>(std::max(lwork, lwork_q)) * static_cast<std::size_t>(c.e));
  for (i64 b = 0; b < c.batch; ++b)
    check(c.api.geqrf[c.ti](h, mi, ni, A.data + b * m * n * c.e, mi, tau.data + b * k * c.e, work.data, lwork,
                            c.info_at(b)),
          "cusolverDnXgeqrf");
  cuda::copy_matrices(c.be, c.t, c.batch, rrows, n, cuda::column_major(A.data, m, n), cuda::row_major(r.data, rrows, n),
                      cuda::Triangle::upper);
  if (qcols > n)
    cuda::copy_matrices(c.be, c.t, c.batch, m, n, cuda::column_major(A.data, m, n), cuda::column_major(Q.data, m, m));
  const i64 qstride = qcols > n ? m * m : m * n;
  for (i64 b = 0; b < c.batch; ++b)
    check(c.api.orgqr[c.ti](h, mi, qi, ki, qdata + b * qstride * c.e, mi, tau.data + b * k * c.e, work.data,
                            std::max(lwork, lwork_q), c.info_at(b)),
          "cusolverDnXorgqr");
  cuda::MatrixLayout src{qdata, qstride, 1, m};
  cuda::copy_matrices(c.be, c.t, c.batch, m, qcols, src, cuda::row_major(q.data, m, qcols));
}

// syevd / heevd of each matrix of A (column-major, lower triangle), eigenvalues into W.
void syevd_all(Call& c, Handle h, int jobz, std::byte* A, std::byte* W, i64 n) {
  const int ni = static_cast<int>(n);
  const i64 we = static_cast<i64>(itemsize(component_dtype(c.t)));
  int lwork = 0;
  check(c.api.syevd_bufferSize[c.ti](h, jobz, CUBLAS_FILL_MODE_LOWER, ni, A, ni, W, &lwork),
        "cusolverDnXsyevd_bufferSize");
  Allocation work = c.scratch(static_cast<std::size_t>(lwork) * static_cast<std::size_t>(c.e));
  for (i64 b = 0; b < c.batch; ++b)
    check(c.api.syevd[c.ti](h, jobz, CUBLAS_FILL_MODE_LOWER, ni, A + b * n * n * c.e, ni, W + b * n * we, work.data,
                            lwork, c.info_at(b)),
          "cusolverDnXsyevd");
}

// eigh: syevd / heevd of a moved to column-major with the lower triangle (the one the contract
// reads), or for a batch of matrices of at most 32 rows syevjBatched / heevjBatched (as CuPy); the
// eigenvalues are written in place in w, the eigenvectors (columns) moved back.
void eigh(Call& c, Handle h, const LinalgCall& call, const View& a, const View& w, const View* v, i64 n) {
  Allocation A = c.scratch(static_cast<std::size_t>(c.batch * n * n * c.e));
  cuda::copy_matrices(c.be, c.t, c.batch, n, n, cuda::row_major(a.data, n, n), cuda::column_major(A.data, n, n));
  const int jobz = call.vectors && v != nullptr ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int ni = static_cast<int>(n);
  if (c.batch > 1 && n <= 32 && c.api.syevjBatched[c.ti] != nullptr && c.api.cusolverDnCreateSyevjInfo != nullptr) {
    // A batch of small matrices: one Jacobi call over all of them, eigenvalues ascending (the
    // parameters' default), the info word of each matrix set (> 0: no convergence).
    syevjInfo_t params = nullptr;
    check(c.api.cusolverDnCreateSyevjInfo(&params), "cusolverDnCreateSyevjInfo");
    try {
      const int bi = static_cast<int>(c.batch);
      int lwork = 0;
      check(c.api.syevjBatched_bufferSize[c.ti](h, jobz, CUBLAS_FILL_MODE_LOWER, ni, A.data, ni, w.data, &lwork, params,
                                                bi),
            "cusolverDnXsyevjBatched_bufferSize");
      Allocation work = c.scratch(static_cast<std::size_t>(lwork) * static_cast<std::size_t>(c.e));
      check(c.api.syevjBatched[c.ti](h, jobz, CUBLAS_FILL_MODE_LOWER, ni, A.data, ni, w.data, work.data, lwork,
                                     c.info_at(0), params, bi),
            "cusolverDnXsyevjBatched");
    } catch (...) {
      c.api.cusolverDnDestroySyevjInfo(params);
      throw;
    }
    // The parameters are read when the call is made; the work runs on the stream.
    c.api.cusolverDnDestroySyevjInfo(params);
  } else {
    syevd_all(c, h, jobz, A.data, w.data, n);
  }
  if (jobz == CUSOLVER_EIG_MODE_VECTOR)
    cuda::copy_matrices(c.be, c.t, c.batch, n, n, cuda::column_major(A.data, n, n), cuda::row_major(v->data, n, n));
}

// svd: gesvd needs rows >= columns. With m <= n it factors a's buffer as it is, a^T (n x m) =
// U' S V'^H, so a = (V'^H)^T S U'^T: U' read row-major is vh and V'^H (VT) read row-major is u,
// written straight into the outputs. With m > n, a is moved to column-major, factored, and U and
// VT moved back.
void svd(Call& c, Handle h, const LinalgCall& call, const View& a, const View& s, const View* u, const View* vh, i64 m,
         i64 n) {
  const i64 k = std::min(m, n);
  const bool vectors = call.vectors && u != nullptr && vh != nullptr;
  const bool flipped = m <= n;
  const i64 rows = flipped ? n : m, cols = flipped ? m : n;  // what gesvd factors, column-major
  // U: rows x ucols, VT: vrows x cols.
  const i64 ucols = call.complete ? rows : k, vrows = call.complete ? cols : k;
  const signed char job = vectors ? (call.complete ? 'A' : 'S') : 'N';
  Allocation A = c.scratch(static_cast<std::size_t>(c.batch * m * n * c.e));
  if (flipped)
    c.copy(a.data, A.data, c.batch * m * n);
  else
    cuda::copy_matrices(c.be, c.t, c.batch, m, n, cuda::row_major(a.data, m, n), cuda::column_major(A.data, m, n));
  Allocation Umem, VTmem;
  std::byte *U = nullptr, *VT = nullptr;
  if (vectors) {
    if (flipped) {
      U = vh->data;  // (vrows of a's vh = ucols here) x n, row-major
      VT = u->data;  // m x m
    } else {
      Umem = c.scratch(static_cast<std::size_t>(c.batch * rows * ucols * c.e));
      VTmem = c.scratch(static_cast<std::size_t>(c.batch * vrows * cols * c.e));
      U = Umem.data;
      VT = VTmem.data;
    }
  }
  const int ri = static_cast<int>(rows), ci = static_cast<int>(cols);
  int lwork = 0;
  check(c.api.gesvd_bufferSize[c.ti](h, ri, ci, &lwork), "cusolverDnXgesvd_bufferSize");
  Allocation work = c.scratch(static_cast<std::size_t>(lwork) * static_cast<std::size_t>(c.e));
  const i64 se = static_cast<i64>(itemsize(component_dtype(c.t)));
  Allocation rwork = c.scratch(static_cast<std::size_t>(std::max<i64>(k - 1, 1) * se));
  for (i64 b = 0; b < c.batch; ++b)
    check(c.api.gesvd[c.ti](h, job, job, ri, ci, A.data + b * m * n * c.e, ri, s.data + b * k * se,
                            vectors ? U + b * rows * ucols * c.e : nullptr, ri,
                            vectors ? VT + b * vrows * cols * c.e : nullptr, static_cast<int>(vrows), work.data, lwork,
                            rwork.data, c.info_at(b)),
          "cusolverDnXgesvd");
  if (vectors && !flipped) {
    cuda::copy_matrices(c.be, c.t, c.batch, m, ucols, cuda::column_major(U, m, ucols),
                        cuda::row_major(u->data, m, ucols));
    cuda::copy_matrices(c.be, c.t, c.batch, vrows, n, cuda::column_major(VT, vrows, n),
                        cuda::row_major(vh->data, vrows, n));
  }
}

}  // namespace

const cuda::LibrarySpec& spec() {
  static const cuda::LibrarySpec s{"libcusolver",
                                   "cuSOLVER",
                                   "XP_CUSOLVER",
                                   {"libcusolver.so.12", "libcusolver.so.11"},
                                   {"nvidia/cu13/lib", "nvidia/cusolver/lib"},
                                   "nvidia-cusolver",
                                   "cusolverGetVersion",
                                   &cuda_major_of};
  return s;
}

const Library& library() noexcept {
  static Api api;
  static const Library lib = cuda::load_library(spec(), api, table_of);
  return lib;
}

std::string status_name(cusolverStatus_t status) {
  if (status >= 0 && status < static_cast<int>(std::size(kStatusNames))) return kStatusNames[status];
  return "CUSOLVER_STATUS_UNKNOWN";
}

void check(cusolverStatus_t status, const char* call) {
  if (status == CUSOLVER_STATUS_SUCCESS) return;
  throw Error(std::string(call) + " failed: " + status_name(status) + " (" + std::to_string(status) + ")");
}

bool device_linalg(Backend& backend, const Device& device, const LinalgCall& call, std::span<const View> in,
                   std::span<const View> out, std::span<std::int64_t> info) {
  const Library& lib = library();
  if (lib.api == nullptr || in.empty() || out.empty()) return false;
  const View& a = in[0];
  if (a.ndim < 2) throw ValueError("linalg: the input has fewer than two dimensions");
  const i64 m = a.shape[a.ndim - 2], n = a.shape[a.ndim - 1];
  i64 batch = 1;
  for (int d = 0; d < a.ndim - 2; ++d) batch *= a.shape[d];
  i64 k_rhs = 1;
  if (call.op == LinalgOp::solve) {
    if (in.size() < 2) throw ValueError("linalg solve: no right-hand side");
    k_rhs = in[1].shape[in[1].ndim - 1];
  }
  for (auto& v : info) v = 0;
  if (batch == 0 || m == 0 || n == 0 || k_rhs == 0) return true;
  // cuSOLVER's 32-bit interface: larger matrices (and batches of the batched routines) go to the CPU.
  if (!fits_int(m) || !fits_int(n) || !fits_int(k_rhs) || !fits_int(batch) || !fits_int(m * n) || !fits_int(n * k_rhs))
    return false;
  const Api& api = *lib.api;
  Call c(backend, device, api, a.dtype, batch);
  DeviceHandle& dh = handle_for(device, api);
  detail::activate_context(device);
  std::lock_guard<std::mutex> lock(dh.mutex);
  if (const Stream& st = work_stream(device); st.handle() != dh.stream) {
    // The new stream first waits for the old one's work: the handle's state is one per device.
    stream_wait_stream(reinterpret_cast<std::uintptr_t>(st.handle()), reinterpret_cast<std::uintptr_t>(dh.stream));
    check(api.cusolverDnSetStream(dh.handle, static_cast<cudaStream_t>(st.handle())), "cusolverDnSetStream");
    dh.stream = st.handle();
  }
  const char* routine = "";
  switch (call.op) {
    case LinalgOp::cholesky:
      cholesky(c, dh.handle, call, a, out[0], n);
      routine = "cusolverDnXpotrf";
      break;
    case LinalgOp::lu:
      lu(c, dh.handle, a, out[0], out[1], n);
      routine = "getrf";
      break;
    case LinalgOp::solve:
      solve(c, dh.handle, a, in[1], out[0], n, k_rhs);
      routine = "getrf";
      break;
    case LinalgOp::qr:
      qr(c, dh.handle, call, a, out[0], out[1], m, n);
      routine = "cusolverDnXgeqrf";
      break;
    case LinalgOp::eigh:
      eigh(c, dh.handle, call, a, out[0], out.size() >= 2 ? &out[1] : nullptr, n);
      routine = "cusolverDnXsyevd";
      break;
    case LinalgOp::svd:
      svd(c, dh.handle, call, a, out[0], out.size() >= 3 ? &out[1] : nullptr, out.size() >= 3 ? &out[2] : nullptr, m,
          n);
      routine = "cusolverDnXgesvd";
      break;
  }
  c.read_info(info, routine);
  return true;
}

}  // namespace xp::detail::cusolver

namespace xp::detail::cuda {
// For blas_report (cublas.cpp): the search, run on first use.
CudaLibraryReport cusolver_report() noexcept {
  try {
    return library_report(cusolver::library().search);
  } catch (const std::exception& e) {
    CudaLibraryReport r;
    r.unavailable = std::string("cuSOLVER report failed: ") + e.what();
    return r;
  }
}
}  // namespace xp::detail::cuda
