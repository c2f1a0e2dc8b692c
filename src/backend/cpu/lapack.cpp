// LAPACK's dense factorizations for Backend::linalg on the CPU.
//
// Routines (s, d, c, z by dtype): cholesky ?potrf; lu ?getrf; solve ?getrf then ?getrs; qr ?geqrf then ?orgqr
// (real) or ?ungqr (complex); eigh ?syevd (real) or ?heevd (complex); svd ?gesdd. Work sizes are
// asked for with lwork = -1 once per run of batch entries, and every info is read.
//
// Layout: xp's views are C-contiguous (row-major) and LAPACK is column-major. Each matrix is copied
// transposed into a column-major scratch, factored there, and the results copied back transposed
// (O(mn) per matrix beside LAPACK's O(mn min(m, n)), as NumPy's own wrappers do). Two exceptions:
// solve factors A^T as it lies (below), and cholesky: a row-major Hermitian A read column-major is conj(A) = A^T, whose
// upper triangle is A's lower one; ?potrf with the other triangle named factors it in place, and its factor read back
// row-major is the factor of A asked for (upper U with conj(A) = U^H U gives lower L = U^T with
// A = L L^H), so it runs on the output buffer with no transposes.
//
// Threads: a batch of small matrices (both sides <= kParallelSide) runs its entries in parallel on
// xp's threads, where OpenBLAS keeps to one thread per call (its own thresholds: getrf below
// 10,000 elements, gemm below 64^3 operations); larger matrices run one after another on the
// calling thread and OpenBLAS spreads each over its threads, whose count blas.cpp keeps equal to
// xp's.

#include "backend/cpu/lapack.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/blas.hpp"
#include "runtime/dynlib.hpp"
#include "runtime/log.hpp"
#include "runtime/parallel.hpp"
#include "xp/error.hpp"

namespace xp::detail::cpu {

namespace {

// The Fortran prototypes (LP64). Matrices, vectors and work arrays travel as void*: the element type
// is the dtype's (s: float, d: double, c: complex float, z: complex double), and the real arrays of
// the complex routines (w, s, rwork) are of the component type.
using Potrf = void (*)(const char* uplo, const int* n, void* a, const int* lda, int* info, std::size_t uplo_len);
using Getrf = void (*)(const int* m, const int* n, void* a, const int* lda, int* ipiv, int* info);
using Getrs = void (*)(const char* trans, const int* n, const int* nrhs, const void* a, const int* lda, const int* ipiv,
                       void* b, const int* ldb, int* info, std::size_t trans_len);
using Geqrf = void (*)(const int* m, const int* n, void* a, const int* lda, void* tau, void* work, const int* lwork,
                       int* info);
using Orgqr = void (*)(const int* m, const int* n, const int* k, void* a, const int* lda, const void* tau, void* work,
                       const int* lwork, int* info);
using Syevd = void (*)(const char* jobz, const char* uplo, const int* n, void* a, const int* lda, void* w, void* work,
                       const int* lwork, int* iwork, const int* liwork, int* info, std::size_t jobz_len,
                       std::size_t uplo_len);
using Heevd = void (*)(const char* jobz, const char* uplo, const int* n, void* a, const int* lda, void* w, void* work,
                       const int* lwork, void* rwork, const int* lrwork, int* iwork, const int* liwork, int* info,
                       std::size_t jobz_len, std::size_t uplo_len);
using GesddReal = void (*)(const char* jobz, const int* m, const int* n, void* a, const int* lda, void* s, void* u,
                           const int* ldu, void* vt, const int* ldvt, void* work, const int* lwork, int* iwork,
                           int* info, std::size_t jobz_len);
using GesddComplex = void (*)(const char* jobz, const int* m, const int* n, void* a, const int* lda, void* s, void* u,
                              const int* ldu, void* vt, const int* ldvt, void* work, const int* lwork, void* rwork,
                              int* iwork, int* info, std::size_t jobz_len);

// One dtype's routines; the real ones fill syevd and gesdd_real, the complex ones heevd and gesdd_complex.
struct Routines {
  Potrf potrf = nullptr;
  Getrf getrf = nullptr;
  Getrs getrs = nullptr;
  Geqrf geqrf = nullptr;
  Orgqr orgqr = nullptr;  // ?orgqr or ?ungqr
  Syevd syevd = nullptr;
  Heevd heevd = nullptr;
  GesddReal gesdd_real = nullptr;
  GesddComplex gesdd_complex = nullptr;
};

struct LapackLibrary {
  bool loaded = false;
  std::string path, error;
  Routines r[4];  // float32, float64, complex64, complex128
};

constexpr const char* kInstall =
    "the factorizations of xp::linalg need LAPACK, which xp takes from OpenBLAS: install libopenblas0 "
    "(Debian, Ubuntu: apt install libopenblas0; Fedora: dnf install openblas)";

const LapackLibrary& lapack_library() {
  static const LapackLibrary* const lib = [] {
    auto* l = new LapackLibrary;
    const BlasLibrary& b = blas_library();
    if (!b.loaded) {
      l->error = std::string(kInstall) + " (" + b.error + ")";
      return l;
    }
    // The library blas.cpp opened, opened again for its symbols (the same handle, one more reference;
    // kept for the life of the process as blas.cpp keeps its own).
    DynLib dl = DynLib::open(b.path);
    if (!dl.ok()) {
      l->error = std::string(kInstall) + " (" + dl.error() + ")";
      return l;
    }
    std::string missing;
    const auto find = [&](char prefix, const char* rest) {
      const std::string name = std::string(1, prefix) + rest;
      void* p = dl.symbol(name.c_str());
      if (p == nullptr) missing += " " + name;
      return p;
    };
    const char prefixes[4] = {'s', 'd', 'c', 'z'};
    for (int t = 0; t < 4; ++t) {
      Routines& r = l->r[t];
      const char p = prefixes[t];
      const bool cplx = t >= 2;
      r.potrf = reinterpret_cast<Potrf>(find(p, "potrf_"));
      r.getrf = reinterpret_cast<Getrf>(find(p, "getrf_"));
      r.getrs = reinterpret_cast<Getrs>(find(p, "getrs_"));
      r.geqrf = reinterpret_cast<Geqrf>(find(p, "geqrf_"));
      r.orgqr = reinterpret_cast<Orgqr>(find(p, cplx ? "ungqr_" : "orgqr_"));
      if (cplx) {
        r.heevd = reinterpret_cast<Heevd>(find(p, "heevd_"));
        r.gesdd_complex = reinterpret_cast<GesddComplex>(find(p, "gesdd_"));
      } else {
        r.syevd = reinterpret_cast<Syevd>(find(p, "syevd_"));
        r.gesdd_real = reinterpret_cast<GesddReal>(find(p, "gesdd_"));
      }
    }
    l->path = dl.path();
    if (!missing.empty()) {
      l->error = "OpenBLAS " + dl.path() + " has no LAPACK (it lacks" + missing +
                 "): install a build with LAPACK (Debian, Ubuntu: libopenblas0)";
      log_once(LogLevel::info, l->error);
      return l;
    }
    dl.release();
    l->loaded = true;
    return l;
  }();
  return *lib;
}

std::atomic<bool> g_hidden{false};

constexpr std::int64_t kParallelSide = 64;

template <class T>
struct Real {
  using type = T;
};
template <class R>
struct Real<std::complex<R>> {
  using type = R;
};
template <class T>
constexpr bool kComplex = !std::is_same_v<T, typename Real<T>::type>;

// A work size LAPACK reported in work[0] (a float for the single-precision routines, whose large
// sizes may have rounded down: one more element is asked for).
template <class T>
int work_size(const T& w) {
  const double v = static_cast<double>(std::real(w));
  return std::max(1, static_cast<int>(std::min(v + 1, static_cast<double>(INT_MAX))));
}

[[noreturn]] void refused(const char* routine, char prefix, int info) {
  throw Error(std::string("LAPACK ") + prefix + routine + " refused its argument " + std::to_string(-info) + " (info " +
              std::to_string(info) + ")" +
              (std::string(routine) == "gesdd" && info == -4 ? ": the matrix has a NaN" : ": an xp bug"));
}

// dst (cols x rows, column-major: element (i, j) at j * rows + i) from the row-major src (rows x cols).
// In tiles of 32 x 32, so that both sides of a large matrix are read and written a cache line at a time.
constexpr std::int64_t kTile = 32;
template <class T>
void to_column_major(const T* src, T* dst, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (std::int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (std::int64_t j = j0; j < std::min(cols, j0 + kTile); ++j)
        for (std::int64_t i = i0; i < std::min(rows, i0 + kTile); ++i) dst[j * rows + i] = src[i * cols + j];
}
// The row-major dst (rows x cols) from the column-major src with leading dimension ld.
template <class T>
void from_column_major(const T* src, std::int64_t ld, T* dst, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (std::int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (std::int64_t i = i0; i < std::min(rows, i0 + kTile); ++i)
        for (std::int64_t j = j0; j < std::min(cols, j0 + kTile); ++j) dst[i * cols + j] = src[j * ld + i];
}

int as_int(std::int64_t v, const char* what) {
  if (v > INT_MAX) {
    throw ValueError(std::string("linalg: ") + what + " " + std::to_string(v) +
                     " is too large for LAPACK's 32-bit integers");
  }
  return static_cast<int>(v);
}

template <class T>
T* at(const View& v, std::int64_t entry, std::int64_t per_entry) {
  return reinterpret_cast<T*>(v.data) + entry * per_entry;
}

// Runs body(begin, end) over the batch: in parallel for small matrices (chunks of about 2^16
// side^3 operations at least, a few times a thread's start), else on this thread.
template <class F>
void over_batch(std::int64_t batch, std::int64_t side, F&& body) {
  if (batch > 1 && side <= kParallelSide && !in_parallel()) {
    const std::int64_t work = std::max<std::int64_t>(1, side * side * side);
    parallel_for(batch, std::max<std::int64_t>(1, (1 << 16) / work), body);
  } else {
    body(0, batch);
  }
}

template <class T>
class Runner {
 public:
  using R = typename Real<T>::type;
  Runner(const Routines& r, char prefix, const LinalgCall& call, std::span<const View> in, std::span<const View> out,
         std::span<std::int64_t> info)
      : r_(r), p_(prefix), call_(call), in_(in), out_(out), info_(info) {}

  void run() {
    const View& a = in_[0];
    const std::int64_t m = a.shape[a.ndim - 2], n = a.shape[a.ndim - 1];
    std::int64_t batch = 1;
    for (int d = 0; d < a.ndim - 2; ++d) batch *= a.shape[d];
    std::fill(info_.begin(), info_.end(), 0);
    if (batch == 0 || m == 0 || n == 0) return;
    as_int(m, "a matrix dimension");
    as_int(n, "a matrix dimension");
    as_int(m * n, "a matrix's element count");
    m_ = m;
    n_ = n;
    over_batch(batch, std::max(m, n), [&](std::int64_t b, std::int64_t e) {
      switch (call_.op) {
        case LinalgOp::cholesky:
          return cholesky(b, e);
        case LinalgOp::lu:
          return lu(b, e);
        case LinalgOp::solve:
          return solve(b, e);
        case LinalgOp::qr:
          return qr(b, e);
        case LinalgOp::eigh:
          return eigh(b, e);
        case LinalgOp::svd:
          return svd(b, e);
      }
    });
  }

 private:
  // OpenBLAS 0.3.21's gemv kernels (Haswell, SkylakeX) read past the end of the matrix they are
  // given, up to a few columns beyond its last one (OpenBLAS issues 4013 and 5000; here ?gesdd's
  // ?gebrd reads 67 elements past a 70 x 100 complex64 A, found by valgrind and AddressSanitizer):
  // where an array ends at the end of a mapped page, that read is a SEGV. So every array LAPACK
  // sees is scratch of xp's with four columns of the largest side and 64 elements more than it
  // needs, never the caller's memory; the work sizes given to LAPACK stay the sizes it asked for.
  template <class U>
  std::vector<U> scratch(std::int64_t n) const {
    return std::vector<U>(static_cast<std::size_t>(n + 4 * std::max(m_, n_) + 64));
  }

  void cholesky(std::int64_t b, std::int64_t e) {
    const int n = static_cast<int>(n_);
    const std::int64_t nn = n_ * n_;
    const char uplo = call_.upper ? 'L' : 'U';  // the other triangle: see the top of this file
    std::vector<T> s = scratch<T>(nn);
    for (std::int64_t k = b; k < e; ++k) {
      std::memcpy(s.data(), at<T>(in_[0], k, nn), static_cast<std::size_t>(nn) * sizeof(T));
      int inf = 0;
      r_.potrf(&uplo, &n, s.data(), &n, &inf, 1);
      if (inf < 0) refused("potrf", p_, inf);
      info_[static_cast<std::size_t>(k)] = inf;
      for (std::int64_t i = 0; i < n_; ++i)  // zero the triangle not asked for
        for (std::int64_t j = 0; j < n_; ++j)
          if (call_.upper ? j < i : j > i) s[static_cast<std::size_t>(i * n_ + j)] = T(0);
      std::memcpy(at<T>(out_[0], k, nn), s.data(), static_cast<std::size_t>(nn) * sizeof(T));
    }
  }

  void lu(std::int64_t b, std::int64_t e) {
    const int n = static_cast<int>(n_);
    const std::int64_t nn = n_ * n_;
    std::vector<T> s = scratch<T>(nn);
    std::vector<int> ipiv = scratch<int>(n_);
    for (std::int64_t k = b; k < e; ++k) {
      to_column_major(at<T>(in_[0], k, nn), s.data(), n_, n_);
      int inf = 0;
      r_.getrf(&n, &n, s.data(), &n, ipiv.data(), &inf);
      if (inf < 0) refused("getrf", p_, inf);
      info_[static_cast<std::size_t>(k)] = inf;
      from_column_major(s.data(), n_, at<T>(out_[0], k, nn), n_, n_);
      std::int64_t* piv = at<std::int64_t>(out_[1], k, n_);
      for (std::int64_t i = 0; i < n_; ++i) piv[i] = ipiv[static_cast<std::size_t>(i)] - 1;
    }
  }

  // A row-major A read column-major is A^T: ?getrf factors that as it lies (no transpose), and
  // ?getrs with trans = 'T' then solves (A^T)^T X = A X = B. Only B and X are transposed (not at
  // all for one right-hand side). A is singular exactly where A^T is, so info is the same kind of
  // answer as ?gesv's on A: a U(i, i) that is exactly zero.
  void solve(std::int64_t b, std::int64_t e) {
    const View& rhs = in_[1];
    const std::int64_t nrhs = rhs.shape[rhs.ndim - 1];
    if (nrhs == 0) return;
    const int n = static_cast<int>(n_), k_ = as_int(nrhs, "the number of right-hand sides");
    as_int(n_ * nrhs, "a right-hand side's element count");
    const std::int64_t nn = n_ * n_, nk = n_ * nrhs;
    const char trans = 'T';
    std::vector<T> s = scratch<T>(nn), x = scratch<T>(nk);
    std::vector<int> ipiv = scratch<int>(n_);
    for (std::int64_t k = b; k < e; ++k) {
      std::memcpy(s.data(), at<T>(in_[0], k, nn), static_cast<std::size_t>(nn) * sizeof(T));
      int inf = 0;
      r_.getrf(&n, &n, s.data(), &n, ipiv.data(), &inf);
      if (inf < 0) refused("getrf", p_, inf);
      info_[static_cast<std::size_t>(k)] = inf;
      if (inf > 0) continue;
      T* out = at<T>(out_[0], k, nk);
      T* xc = x.data();
      if (nrhs == 1) {
        std::memcpy(xc, at<T>(rhs, k, nk), static_cast<std::size_t>(n_) * sizeof(T));
      } else {
        to_column_major(at<T>(rhs, k, nk), xc, n_, nrhs);
      }
      r_.getrs(&trans, &n, &k_, s.data(), &n, ipiv.data(), xc, &n, &inf, 1);
      if (inf < 0) refused("getrs", p_, inf);
      if (nrhs == 1) {
        std::memcpy(out, xc, static_cast<std::size_t>(n_) * sizeof(T));
      } else {
        from_column_major(xc, n_, out, n_, nrhs);
      }
    }
  }

  void qr(std::int64_t b, std::int64_t e) {
    const std::int64_t kk = std::min(m_, n_);
    const std::int64_t qcols = call_.complete ? m_ : kk, rrows = call_.complete ? m_ : kk;
    const int m = static_cast<int>(m_), n = static_cast<int>(n_), k = static_cast<int>(kk);
    const int qc = static_cast<int>(qcols);
    // The scratch holds m x max(n, qcols): geqrf's result, then the columns orgqr makes Q of.
    const std::int64_t width = std::max(n_, qcols);
    as_int(m_ * width, "a matrix's element count");
    std::vector<T> s = scratch<T>(m_ * width), tau = scratch<T>(kk);
    int lwork = -1, inf = 0;
    T q1{}, q2{};
    r_.geqrf(&m, &n, s.data(), &m, tau.data(), &q1, &lwork, &inf);
    if (inf < 0) refused("geqrf", p_, inf);
    r_.orgqr(&m, &qc, &k, s.data(), &m, tau.data(), &q2, &lwork, &inf);
    if (inf < 0) refused(kComplex<T> ? "ungqr" : "orgqr", p_, inf);
    lwork = std::max(work_size(q1), work_size(q2));
    std::vector<T> work = scratch<T>(lwork);
    for (std::int64_t t = b; t < e; ++t) {
      to_column_major(at<T>(in_[0], t, m_ * n_), s.data(), m_, n_);
      r_.geqrf(&m, &n, s.data(), &m, tau.data(), work.data(), &lwork, &inf);
      if (inf < 0) refused("geqrf", p_, inf);
      T* rr = at<T>(out_[1], t, rrows * n_);  // R: the upper triangle of the first rrows rows
      for (std::int64_t i = 0; i < rrows; ++i)
        for (std::int64_t j = 0; j < n_; ++j) rr[i * n_ + j] = (j >= i && i < m_) ? s[j * m_ + i] : T(0);
      r_.orgqr(&m, &qc, &k, s.data(), &m, tau.data(), work.data(), &lwork, &inf);
      if (inf < 0) refused(kComplex<T> ? "ungqr" : "orgqr", p_, inf);
      from_column_major(s.data(), m_, at<T>(out_[0], t, m_ * qcols), m_, qcols);
      info_[static_cast<std::size_t>(t)] = 0;
    }
  }

  void eigh(std::int64_t b, std::int64_t e) {
    const int n = static_cast<int>(n_);
    const std::int64_t nn = n_ * n_;
    const char jobz = call_.vectors ? 'V' : 'N', uplo = 'L';
    std::vector<T> s = scratch<T>(nn);
    std::vector<R> w = scratch<R>(n_);
    int lwork = -1, lrwork = -1, liwork = -1, inf = 0;
    T qw{};
    R qr{}, qwv{};
    int qi = 0;
    if constexpr (kComplex<T>) {
      r_.heevd(&jobz, &uplo, &n, s.data(), &n, &qwv, &qw, &lwork, &qr, &lrwork, &qi, &liwork, &inf, 1, 1);
    } else {
      r_.syevd(&jobz, &uplo, &n, s.data(), &n, &qwv, &qw, &lwork, &qi, &liwork, &inf, 1, 1);
    }
    if (inf < 0) refused(kComplex<T> ? "heevd" : "syevd", p_, inf);
    lwork = work_size(qw);
    lrwork = kComplex<T> ? work_size(qr) : 1;
    liwork = std::max(1, qi);
    std::vector<T> work = scratch<T>(lwork);
    std::vector<R> rwork = scratch<R>(lrwork);
    std::vector<int> iwork = scratch<int>(liwork);
    for (std::int64_t k = b; k < e; ++k) {
      to_column_major(at<T>(in_[0], k, nn), s.data(), n_, n_);
      if constexpr (kComplex<T>) {
        r_.heevd(&jobz, &uplo, &n, s.data(), &n, w.data(), work.data(), &lwork, rwork.data(), &lrwork, iwork.data(),
                 &liwork, &inf, 1, 1);
      } else {
        r_.syevd(&jobz, &uplo, &n, s.data(), &n, w.data(), work.data(), &lwork, iwork.data(), &liwork, &inf, 1, 1);
      }
      std::memcpy(at<R>(out_[0], k, n_), w.data(), static_cast<std::size_t>(n_) * sizeof(R));
      if (inf < 0) refused(kComplex<T> ? "heevd" : "syevd", p_, inf);
      info_[static_cast<std::size_t>(k)] = inf;
      if (call_.vectors && inf == 0) from_column_major(s.data(), n_, at<T>(out_[1], k, nn), n_, n_);
    }
  }

  void svd(std::int64_t b, std::int64_t e) {
    const std::int64_t kk = std::min(m_, n_);
    const bool vec = call_.vectors;
    const char jobz = !vec ? 'N' : call_.complete ? 'A' : 'S';
    const std::int64_t ucols = call_.complete ? m_ : kk, vrows = call_.complete ? n_ : kk;
    const int m = static_cast<int>(m_), n = static_cast<int>(n_);
    const int ldu = m, ldvt = static_cast<int>(vec ? vrows : 1);
    as_int(m_ * ucols, "U's element count");
    as_int(vrows * n_, "Vh's element count");
    std::vector<T> s = scratch<T>(m_ * n_);
    std::vector<T> u = scratch<T>(vec ? m_ * ucols : 1), vt = scratch<T>(vec ? vrows * n_ : 1);
    std::vector<int> iwork = scratch<int>(8 * kk);
    // The complex routine's real work array (LAPACK 3.7 and later's sizes, which cover the older ones).
    const std::int64_t mx = std::max(m_, n_);
    const std::int64_t lrwork = !kComplex<T> ? 1
                                : vec        ? std::max(5 * kk * kk + 5 * kk, 2 * mx * kk + 2 * kk * kk + kk)
                                             : 7 * kk;
    std::vector<R> rwork = scratch<R>(lrwork);
    std::vector<R> sv = scratch<R>(kk);
    int lwork = -1, inf = 0;
    T qw{};
    const auto call = [&](T* work) {
      if constexpr (kComplex<T>) {
        r_.gesdd_complex(&jobz, &m, &n, s.data(), &m, sv.data(), u.data(), &ldu, vt.data(), &ldvt, work, &lwork,
                         rwork.data(), iwork.data(), &inf, 1);
      } else {
        r_.gesdd_real(&jobz, &m, &n, s.data(), &m, sv.data(), u.data(), &ldu, vt.data(), &ldvt, work, &lwork,
                      iwork.data(), &inf, 1);
      }
    };
    call(&qw);
    if (inf < 0) refused("gesdd", p_, inf);
    lwork = work_size(qw);
    std::vector<T> work = scratch<T>(lwork);
    for (std::int64_t k = b; k < e; ++k) {
      to_column_major(at<T>(in_[0], k, m_ * n_), s.data(), m_, n_);
      call(work.data());
      // gesdd refuses a matrix holding a NaN (its argument 4, A: info -4, LAPACK 3.10 and later):
      // no SVD exists there, which NumPy reports as a failure to converge, so it is one here (info
      // 1: the array layer raises LinAlgError naming the entry), not a refused argument.
      if (inf == -4) inf = 1;
      if (inf < 0) refused("gesdd", p_, inf);
      info_[static_cast<std::size_t>(k)] = inf;
      std::memcpy(at<R>(out_[0], k, kk), sv.data(), static_cast<std::size_t>(kk) * sizeof(R));
      if (vec) {
        from_column_major(u.data(), m_, at<T>(out_[1], k, m_ * ucols), m_, ucols);
        from_column_major(vt.data(), vrows, at<T>(out_[2], k, vrows * n_), vrows, n_);
      }
    }
  }

  const Routines& r_;
  char p_;
  const LinalgCall& call_;
  std::span<const View> in_, out_;
  std::span<std::int64_t> info_;
  std::int64_t m_ = 0, n_ = 0;
};

}  // namespace

LapackInfo lapack_info() {
  const LapackLibrary& l = lapack_library();
  return {l.loaded, l.path, l.error};
}

void set_lapack_hidden(bool hidden) noexcept {
  g_hidden.store(hidden, std::memory_order_relaxed);
}

void lapack_linalg(const LinalgCall& call, std::span<const View> in, std::span<const View> out,
                   std::span<std::int64_t> info) {
  if (in.empty() || in[0].ndim < 2) throw ValueError("linalg: the backend was given no matrix (an xp bug)");
  if (g_hidden.load(std::memory_order_relaxed))
    throw Error(std::string(kInstall) + " (hidden for a test: set_lapack_hidden)");
  const LapackLibrary& l = lapack_library();
  if (!l.loaded) throw Error(l.error);
  sync_blas_threads(blas_library());
  switch (in[0].dtype) {
    case DType::float32:
      return Runner<float>(l.r[0], 's', call, in, out, info).run();
    case DType::float64:
      return Runner<double>(l.r[1], 'd', call, in, out, info).run();
    case DType::complex64:
      return Runner<std::complex<float>>(l.r[2], 'c', call, in, out, info).run();
    case DType::complex128:
      return Runner<std::complex<double>>(l.r[3], 'z', call, in, out, info).run();
    default:
      throw TypeError(std::string("linalg: LAPACK has no routine for ") + std::string(name(in[0].dtype)));
  }
}

}  // namespace xp::detail::cpu
