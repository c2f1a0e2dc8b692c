// cuSOLVER and cuFFT through the CUDA backend's hooks on a real GPU (white box: Backend::linalg and
// Backend::fft called with device copies of host data), every result checked on the host against
// what defines it, in double precision: solve (A x = b), cholesky (L L^H = A, the other triangle
// zero), lu (P A = L U from the 0-based pivots), qr (Q R = A, Q^H Q = I, R upper), eigh (A v = w v
// from the lower triangle alone, ascending), svd (U S Vh = A, orthonormal factors, descending) for
// the four dtypes, both shapes and batches; the info words of singular and not positive definite
// entries; and the transforms against a direct DFT (c2c both ways, r2c, c2r ignoring the imaginary
// parts the contract ignores, and leaving its input as it was). Skipped without a GPU ("skipped:
// no GPU"); the public API's comparisons with the CPU are test_linalg_fft_gpu.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/cufft.hpp"
#include "backend/cuda/cusolver.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::Device;
using xp::DType;
using xp::detail::Allocation;
using xp::detail::Backend;
using xp::detail::FftCall;
using xp::detail::FftKind;
using xp::detail::LinalgCall;
using xp::detail::LinalgOp;
using xp::detail::View;
using i64 = std::int64_t;
using cd = std::complex<double>;

const xp_test::ProcessCache g_process_cache;

// Values of one dtype held as complex<double> on the host, stored in the dtype on the device.
struct Dev {
  Allocation mem;
  std::vector<i64> shape, strides;
  DType dtype;
  Dev(Backend& be, std::vector<i64> s, DType t) : shape(std::move(s)), dtype(t) {
    strides.resize(shape.size());
    i64 n = static_cast<i64>(xp::itemsize(t));
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      strides[static_cast<std::size_t>(d)] = n;
      n *= shape[static_cast<std::size_t>(d)];
    }
    mem = be.allocate(static_cast<std::size_t>(std::max<i64>(n, 1)));
  }
  i64 size() const {
    i64 n = 1;
    for (i64 s : shape) n *= s;
    return n;
  }
  View view() const { return View{mem.data, dtype, static_cast<int>(shape.size()), shape.data(), strides.data()}; }
  void put(Backend& be, const std::vector<cd>& v) {
    std::vector<std::byte> bytes(static_cast<std::size_t>(size()) * xp::itemsize(dtype));
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::byte* p = bytes.data() + i * xp::itemsize(dtype);
      switch (dtype) {
        case DType::float32: {
          const float f = static_cast<float>(v[i].real());
          std::memcpy(p, &f, 4);
          break;
        }
        case DType::float64:
          std::memcpy(p, &v[i], 8);
          break;
        case DType::complex64: {
          const float f[2] = {static_cast<float>(v[i].real()), static_cast<float>(v[i].imag())};
          std::memcpy(p, f, 8);
          break;
        }
        default:
          std::memcpy(p, &v[i], 16);
          break;
      }
    }
    be.copy_from_host(bytes.data(), mem.data, bytes.size());
  }
  std::vector<cd> get(Backend& be) const {
    std::vector<std::byte> bytes(static_cast<std::size_t>(size()) * xp::itemsize(dtype));
    be.copy_to_host(mem.data, bytes.data(), bytes.size());
    std::vector<cd> v(static_cast<std::size_t>(size()));
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::byte* p = bytes.data() + i * xp::itemsize(dtype);
      float f[2] = {0, 0};
      double d[2] = {0, 0};
      switch (dtype) {
        case DType::float32:
          std::memcpy(f, p, 4);
          v[i] = f[0];
          break;
        case DType::float64:
          std::memcpy(d, p, 8);
          v[i] = d[0];
          break;
        case DType::complex64:
          std::memcpy(f, p, 8);
          v[i] = {f[0], f[1]};
          break;
        case DType::int64: {
          i64 x = 0;
          std::memcpy(&x, p, 8);
          v[i] = static_cast<double>(x);
          break;
        }
        default:
          std::memcpy(d, p, 16);
          v[i] = {d[0], d[1]};
          break;
      }
    }
    return v;
  }
};

constexpr DType kDtypes[] = {DType::float32, DType::float64, DType::complex64, DType::complex128};
bool cplx(DType t) {
  return t == DType::complex64 || t == DType::complex128;
}
DType real_of(DType t) {
  return t == DType::complex64 ? DType::float32 : t == DType::complex128 ? DType::float64 : t;
}
double tol(DType t) {
  return t == DType::float32 || t == DType::complex64 ? 2e-4 : 1e-10;
}

std::vector<cd> random_values(i64 n, DType t, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<cd> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = cplx(t) ? cd(u(g), u(g)) : cd(u(g), 0);
  return v;
}

// Row-major matrices: element (b, i, j) of rows x cols.
cd at(const std::vector<cd>& v, i64 b, i64 i, i64 j, i64 rows, i64 cols) {
  return v[static_cast<std::size_t>((b * rows + i) * cols + j)];
}
// max |(X Y)(i, j) - Z(i, j)| over a batch, with X rows x inner, Y inner x cols; f conjugates X's
// transpose first (X^H Y) when set.
double product_error(const std::vector<cd>& X, const std::vector<cd>& Y, const std::vector<cd>& Z, i64 batch, i64 rows,
                     i64 inner, i64 cols, bool xh = false) {
  double e = 0;
  for (i64 b = 0; b < batch; ++b)
    for (i64 i = 0; i < rows; ++i)
      for (i64 j = 0; j < cols; ++j) {
        cd s = 0;
        for (i64 k = 0; k < inner; ++k)
          s +=
              (xh ? std::conj(at(X, b, k, i, inner, rows)) : at(X, b, i, k, rows, inner)) * at(Y, b, k, j, inner, cols);
        e = std::max(e, std::abs(s - at(Z, b, i, j, rows, cols)));
      }
  return e;
}
std::vector<cd> identity(i64 batch, i64 n) {
  std::vector<cd> v(static_cast<std::size_t>(batch * n * n));
  for (i64 b = 0; b < batch; ++b)
    for (i64 i = 0; i < n; ++i) v[static_cast<std::size_t>((b * n + i) * n + i)] = 1;
  return v;
}

std::vector<std::int64_t> run(Backend& be, const LinalgCall& c, const std::vector<View>& in,
                              const std::vector<View>& out, i64 batch) {
  std::vector<std::int64_t> info(static_cast<std::size_t>(batch), -1);
  EXPECT_TRUE(be.linalg(c, in, out, info)) << xp::blas_report().cusolver.unavailable;
  return info;
}

class CudaSolverGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    XP_REQUIRE_GPU();
    if (xp::detail::cusolver::library().api == nullptr)
      GTEST_SKIP() << "skipped: no cuSOLVER (" << xp::blas_report().cusolver.unavailable << ")";
    backend_ = &xp::detail::backend_for(Device::cuda(0));
  }
  Backend* backend_ = nullptr;  // set once a GPU is known
};
class CudaFftGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    XP_REQUIRE_GPU();
    if (xp::detail::cufft::library().api == nullptr)
      GTEST_SKIP() << "skipped: no cuFFT (" << xp::blas_report().cufft.unavailable << ")";
    backend_ = &xp::detail::backend_for(Device::cuda(0));
  }
  Backend* backend_ = nullptr;
};

TEST_F(CudaSolverGpu, SolveSatisfiesTheSystems) {
  Backend& be = *backend_;
  // One matrix, a batch on cuSOLVER's path (n > 128) and batches of small ones (cuBLAS's batched
  // LU), one and several right-hand sides.
  struct Case {
    i64 batch, n, k;
  };
  for (DType t : kDtypes)
    for (const Case cs : {Case{1, 7, 1}, Case{1, 9, 3}, Case{3, 130, 2}, Case{64, 16, 1}, Case{5, 6, 4}}) {
      SCOPED_TRACE(std::string(xp::name(t)) + " batch " + std::to_string(cs.batch) + " n " + std::to_string(cs.n) +
                   " k " + std::to_string(cs.k));
      std::vector<cd> a = random_values(cs.batch * cs.n * cs.n, t, 1);
      for (i64 b = 0; b < cs.batch; ++b)
        for (i64 i = 0; i < cs.n; ++i) a[static_cast<std::size_t>((b * cs.n + i) * cs.n + i)] += 2.0 * cs.n;
      const std::vector<cd> rhs = random_values(cs.batch * cs.n * cs.k, t, 2);
      Dev A(be, {cs.batch, cs.n, cs.n}, t), B(be, {cs.batch, cs.n, cs.k}, t), X(be, {cs.batch, cs.n, cs.k}, t);
      A.put(be, a);
      B.put(be, rhs);
      LinalgCall c;
      c.op = LinalgOp::solve;
      const auto info = run(be, c, {A.view(), B.view()}, {X.view()}, cs.batch);
      EXPECT_EQ(info, std::vector<std::int64_t>(static_cast<std::size_t>(cs.batch), 0));
      EXPECT_LT(product_error(a, X.get(be), rhs, cs.batch, cs.n, cs.n, cs.k), tol(t) * cs.n);
      EXPECT_EQ(A.get(be), [&] {
        Dev tmp(be, {cs.batch, cs.n, cs.n}, t);
        tmp.put(be, a);
        return tmp.get(be);
      }()) << "the input is not modified";
    }
}

TEST_F(CudaSolverGpu, ASingularMatrixIsReportedForItsEntry) {
  Backend& be = *backend_;
  for (i64 n : {4, 200}) {
    std::vector<cd> a = random_values(3 * n * n, DType::float64, 3);
    for (i64 j = 0; j < n; ++j) a[static_cast<std::size_t>((1 * n + 2) * n + j)] = 0;  // entry 1, row 2 zero
    Dev A(be, {3, n, n}, DType::float64), B(be, {3, n, 1}, DType::float64), X(be, {3, n, 1}, DType::float64);
    A.put(be, a);
    B.put(be, random_values(3 * n, DType::float64, 4));
    LinalgCall c;
    c.op = LinalgOp::solve;
    const auto info = run(be, c, {A.view(), B.view()}, {X.view()}, 3);
    EXPECT_EQ(info[0], 0);
    EXPECT_GT(info[1], 0) << "n " << n;
    EXPECT_EQ(info[2], 0);
  }
}

TEST_F(CudaSolverGpu, CholeskyFactorsBothTriangles) {
  Backend& be = *backend_;
  for (DType t : kDtypes)
    for (i64 batch : {1, 4})
      for (bool upper : {false, true}) {
        SCOPED_TRACE(std::string(xp::name(t)) + (upper ? " upper" : " lower") + " batch " + std::to_string(batch));
        const i64 n = 9;
        const std::vector<cd> m = random_values(batch * n * n, t, 5);
        std::vector<cd> a(m.size());
        for (i64 b = 0; b < batch; ++b)
          for (i64 i = 0; i < n; ++i)
            for (i64 j = 0; j < n; ++j) {
              cd s = i == j ? cd(n) : cd(0);
              for (i64 k = 0; k < n; ++k) s += at(m, b, i, k, n, n) * std::conj(at(m, b, j, k, n, n));
              a[static_cast<std::size_t>((b * n + i) * n + j)] = s;
            }
        // The triangle not named holds garbage: it is not read.
        std::vector<cd> given = a;
        for (i64 b = 0; b < batch; ++b)
          for (i64 i = 0; i < n; ++i)
            for (i64 j = 0; j < n; ++j)
              if (upper ? i > j : i < j) given[static_cast<std::size_t>((b * n + i) * n + j)] = 1e3;
        Dev A(be, {batch, n, n}, t), L(be, {batch, n, n}, t);
        A.put(be, given);
        LinalgCall c;
        c.upper = upper;
        EXPECT_EQ(run(be, c, {A.view()}, {L.view()}, batch),
                  std::vector<std::int64_t>(static_cast<std::size_t>(batch), 0));
        const std::vector<cd> l = L.get(be);
        for (i64 b = 0; b < batch; ++b)
          for (i64 i = 0; i < n; ++i)
            for (i64 j = 0; j < n; ++j)
              if (upper ? i > j : i < j) {
                ASSERT_EQ(at(l, b, i, j, n, n), cd(0)) << i << ", " << j;
              }
        // lower: L L^H = A; upper: U^H U = A.
        std::vector<cd> lh(l.size());
        for (i64 b = 0; b < batch; ++b)
          for (i64 i = 0; i < n; ++i)
            for (i64 j = 0; j < n; ++j)
              lh[static_cast<std::size_t>((b * n + i) * n + j)] = std::conj(at(l, b, j, i, n, n));
        const double err = upper ? product_error(lh, l, a, batch, n, n, n) : product_error(l, lh, a, batch, n, n, n);
        EXPECT_LT(err, tol(t) * n * n);
      }
}

TEST_F(CudaSolverGpu, NotPositiveDefiniteIsReportedForItsEntry) {
  Backend& be = *backend_;
  for (i64 batch : {1, 3}) {
    const i64 n = 5;
    std::vector<cd> a = identity(batch, n);
    const i64 bad = batch - 1;
    a[static_cast<std::size_t>((bad * n + 3) * n + 3)] = -1;
    Dev A(be, {batch, n, n}, DType::float32), L(be, {batch, n, n}, DType::float32);
    A.put(be, a);
    const auto info = run(be, LinalgCall{}, {A.view()}, {L.view()}, batch);
    for (i64 b = 0; b < batch; ++b) EXPECT_EQ(info[static_cast<std::size_t>(b)] > 0, b == bad) << b;
    EXPECT_EQ(info[static_cast<std::size_t>(bad)], 4) << "the order of the first minor that is not positive";
  }
}

TEST_F(CudaSolverGpu, LuPivotsAndFactorsRebuildTheMatrix) {
  Backend& be = *backend_;
  for (DType t : kDtypes) {
    SCOPED_TRACE(xp::name(t));
    const i64 batch = 2, n = 8;
    const std::vector<cd> a = random_values(batch * n * n, t, 6);
    Dev A(be, {batch, n, n}, t), LU(be, {batch, n, n}, t), P(be, {batch, n}, DType::int64);
    A.put(be, a);
    LinalgCall c;
    c.op = LinalgOp::lu;
    EXPECT_EQ(run(be, c, {A.view()}, {LU.view(), P.view()}, batch), (std::vector<std::int64_t>{0, 0}));
    const std::vector<cd> lu = LU.get(be), piv = P.get(be);
    for (i64 b = 0; b < batch; ++b) {
      // P A: A's rows swapped in order, row i with row piv[i].
      std::vector<cd> pa(a.begin() + b * n * n, a.begin() + (b + 1) * n * n);
      for (i64 i = 0; i < n; ++i) {
        const auto p = static_cast<i64>(piv[static_cast<std::size_t>(b * n + i)].real());
        ASSERT_TRUE(p >= i && p < n) << "0-based pivot " << p << " for row " << i;
        for (i64 j = 0; j < n; ++j)
          std::swap(pa[static_cast<std::size_t>(i * n + j)], pa[static_cast<std::size_t>(p * n + j)]);
      }
      std::vector<cd> L(static_cast<std::size_t>(n * n)), U(static_cast<std::size_t>(n * n));
      for (i64 i = 0; i < n; ++i)
        for (i64 j = 0; j < n; ++j) {
          const cd v = at(lu, b, i, j, n, n);
          L[static_cast<std::size_t>(i * n + j)] = i > j ? v : i == j ? cd(1) : cd(0);
          U[static_cast<std::size_t>(i * n + j)] = i <= j ? v : cd(0);
        }
      EXPECT_LT(product_error(L, U, pa, 1, n, n, n), tol(t) * n);
    }
  }
}

TEST_F(CudaSolverGpu, QrReducedAndComplete) {
  Backend& be = *backend_;
  for (DType t : kDtypes)
    for (auto [m, n] : {std::pair<i64, i64>{7, 4}, {4, 7}, {5, 5}})
      for (bool complete : {false, true}) {
        SCOPED_TRACE(std::string(xp::name(t)) + " " + std::to_string(m) + "x" + std::to_string(n) +
                     (complete ? " complete" : " reduced"));
        const i64 batch = 2, k = std::min(m, n), qc = complete ? m : k;
        const std::vector<cd> a = random_values(batch * m * n, t, 7);
        Dev A(be, {batch, m, n}, t), Q(be, {batch, m, qc}, t), R(be, {batch, qc, n}, t);
        A.put(be, a);
        LinalgCall c;
        c.op = LinalgOp::qr;
        c.complete = complete;
        (void)run(be, c, {A.view()}, {Q.view(), R.view()}, batch);
        const std::vector<cd> q = Q.get(be), r = R.get(be);
        for (i64 b = 0; b < batch; ++b)
          for (i64 i = 0; i < qc; ++i)
            for (i64 j = 0; j < std::min(i, n); ++j) ASSERT_EQ(at(r, b, i, j, qc, n), cd(0));
        EXPECT_LT(product_error(q, r, a, batch, m, qc, n), tol(t) * m);
        EXPECT_LT(product_error(q, q, identity(batch, qc), batch, qc, m, qc, true), tol(t) * m) << "Q^H Q = I";
      }
}

TEST_F(CudaSolverGpu, EighReadsTheLowerTriangleAndSortsAscending) {
  Backend& be = *backend_;
  for (DType t : kDtypes)
    for (bool vectors : {true, false}) {
      SCOPED_TRACE(std::string(xp::name(t)) + (vectors ? " vectors" : " values"));
      const i64 batch = 3, n = 10;
      const std::vector<cd> m = random_values(batch * n * n, t, 8);
      std::vector<cd> a(m.size()), given(m.size());
      for (i64 b = 0; b < batch; ++b)
        for (i64 i = 0; i < n; ++i)
          for (i64 j = 0; j < n; ++j) {
            const cd v = i >= j ? at(m, b, i, j, n, n) : std::conj(at(m, b, j, i, n, n));
            a[static_cast<std::size_t>((b * n + i) * n + j)] = i == j ? cd(v.real()) : v;
            given[static_cast<std::size_t>((b * n + i) * n + j)] =
                i >= j ? a[static_cast<std::size_t>((b * n + i) * n + j)] : cd(7);
          }
      const DType rt = real_of(t);
      Dev A(be, {batch, n, n}, t), W(be, {batch, n}, rt), V(be, {batch, n, n}, t);
      A.put(be, given);
      LinalgCall c;
      c.op = LinalgOp::eigh;
      c.vectors = vectors;
      std::vector<View> out{W.view()};
      if (vectors) out.push_back(V.view());
      EXPECT_EQ(run(be, c, {A.view()}, out, batch), (std::vector<std::int64_t>{0, 0, 0}));
      const std::vector<cd> w = W.get(be);
      for (i64 b = 0; b < batch; ++b)
        for (i64 i = 1; i < n; ++i)
          EXPECT_LE(w[static_cast<std::size_t>(b * n + i - 1)].real(), w[static_cast<std::size_t>(b * n + i)].real());
      if (!vectors) continue;
      const std::vector<cd> v = V.get(be);
      std::vector<cd> vw(v.size());
      for (i64 b = 0; b < batch; ++b)
        for (i64 i = 0; i < n; ++i)
          for (i64 j = 0; j < n; ++j)
            vw[static_cast<std::size_t>((b * n + i) * n + j)] =
                at(v, b, i, j, n, n) * w[static_cast<std::size_t>(b * n + j)];
      EXPECT_LT(product_error(a, v, vw, batch, n, n, n), tol(t) * n * 10) << "A V = V diag(w)";
      EXPECT_LT(product_error(v, v, identity(batch, n), batch, n, n, n, true), tol(t) * n);
    }
}

TEST_F(CudaSolverGpu, SvdOfBothShapes) {
  Backend& be = *backend_;
  for (DType t : kDtypes)
    for (auto [m, n] : {std::pair<i64, i64>{8, 5}, {5, 8}, {6, 6}})
      for (int mode = 0; mode < 3; ++mode) {  // reduced, complete, values only
        SCOPED_TRACE(std::string(xp::name(t)) + " " + std::to_string(m) + "x" + std::to_string(n) + " mode " +
                     std::to_string(mode));
        const i64 batch = 2, k = std::min(m, n);
        const bool complete = mode == 1, vectors = mode != 2;
        const i64 uc = complete ? m : k, vr = complete ? n : k;
        const std::vector<cd> a = random_values(batch * m * n, t, 9);
        Dev A(be, {batch, m, n}, t), S(be, {batch, k}, real_of(t)), U(be, {batch, m, uc}, t), VH(be, {batch, vr, n}, t);
        A.put(be, a);
        LinalgCall c;
        c.op = LinalgOp::svd;
        c.complete = complete;
        c.vectors = vectors;
        std::vector<View> out{S.view()};
        if (vectors) out.insert(out.end(), {U.view(), VH.view()});
        EXPECT_EQ(run(be, c, {A.view()}, out, batch), (std::vector<std::int64_t>{0, 0}));
        const std::vector<cd> s = S.get(be);
        for (i64 b = 0; b < batch; ++b)
          for (i64 i = 1; i < k; ++i)
            EXPECT_GE(s[static_cast<std::size_t>(b * k + i - 1)].real(), s[static_cast<std::size_t>(b * k + i)].real());
        if (!vectors) continue;
        const std::vector<cd> u = U.get(be), vh = VH.get(be);
        std::vector<cd> us(static_cast<std::size_t>(batch * m * vr));  // U[:, :k] diag(s) padded to vr columns
        for (i64 b = 0; b < batch; ++b)
          for (i64 i = 0; i < m; ++i)
            for (i64 j = 0; j < std::min(k, vr); ++j)
              us[static_cast<std::size_t>((b * m + i) * vr + j)] =
                  at(u, b, i, j, m, uc) * s[static_cast<std::size_t>(b * k + j)];
        EXPECT_LT(product_error(us, vh, a, batch, m, vr, n), tol(t) * m * 10) << "U S Vh = A";
        EXPECT_LT(product_error(u, u, identity(batch, uc), batch, uc, m, uc, true), tol(t) * m) << "U^H U = I";
      }
}

// ---- cuFFT

// The direct DFT of each row: sum_j x_j exp(sign 2 pi i jk / n).
std::vector<cd> dft(const std::vector<cd>& x, i64 batch, i64 n, int sign, i64 out_len) {
  std::vector<cd> y(static_cast<std::size_t>(batch * out_len));
  for (i64 b = 0; b < batch; ++b)
    for (i64 k = 0; k < out_len; ++k) {
      cd s = 0;
      for (i64 j = 0; j < n; ++j)
        s += x[static_cast<std::size_t>(b * n + j)] *
             std::polar(1.0, sign * 2 * M_PI * static_cast<double>((j * k) % n) / n);
      y[static_cast<std::size_t>(b * out_len + k)] = s;
    }
  return y;
}
double max_error(const std::vector<cd>& a, const std::vector<cd>& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

TEST_F(CudaFftGpu, ComplexTransformsBothWaysWithTheScale) {
  Backend& be = *backend_;
  for (DType t : {DType::complex64, DType::complex128})
    for (i64 n : {1, 12, 64, 97})
      for (bool inverse : {false, true}) {
        SCOPED_TRACE(std::string(xp::name(t)) + " n " + std::to_string(n) + (inverse ? " inverse" : ""));
        const i64 batch = 3;
        const std::vector<cd> x = random_values(batch * n, t, 10);
        Dev X(be, {batch, n}, t), Y(be, {batch, n}, t);
        X.put(be, x);
        FftCall c;
        c.n = n;
        c.inverse = inverse;
        c.scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
        ASSERT_TRUE(be.fft(c, X.view(), Y.view()));
        std::vector<cd> want = dft(x, batch, n, inverse ? 1 : -1, n);
        for (auto& v : want) v *= c.scale;
        EXPECT_LT(max_error(Y.get(be), want), tol(t) * 10 * std::max<double>(1, std::sqrt(static_cast<double>(n))));
      }
}

TEST_F(CudaFftGpu, RealTransformsAndTheirInverse) {
  Backend& be = *backend_;
  for (DType t : {DType::float32, DType::float64})
    for (i64 n : {2, 9, 10, 64}) {
      SCOPED_TRACE(std::string(xp::name(t)) + " n " + std::to_string(n));
      const DType ct = t == DType::float32 ? DType::complex64 : DType::complex128;
      const i64 batch = 2, h = n / 2 + 1;
      const std::vector<cd> x = random_values(batch * n, t, 11);
      Dev X(be, {batch, n}, t), Z(be, {batch, h}, ct);
      X.put(be, x);
      FftCall c;
      c.kind = FftKind::r2c;
      c.n = n;
      ASSERT_TRUE(be.fft(c, X.view(), Z.view()));
      const std::vector<cd> z = Z.get(be);
      EXPECT_LT(max_error(z, dft(x, batch, n, -1, h)), tol(t) * 10 * n);
      // c2r: the imaginary parts of the first and (n even) last elements are ignored; the input stays.
      std::vector<cd> zin = z;
      for (i64 b = 0; b < batch; ++b) {
        zin[static_cast<std::size_t>(b * h)] += cd(0, 5);
        if (n % 2 == 0) zin[static_cast<std::size_t>(b * h + h - 1)] += cd(0, -3);
      }
      Dev ZI(be, {batch, h}, ct), XO(be, {batch, n}, t);
      ZI.put(be, zin);
      const std::vector<cd> zin_stored = ZI.get(be);
      c.kind = FftKind::c2r;
      c.scale = 1.0 / static_cast<double>(n);
      ASSERT_TRUE(be.fft(c, ZI.view(), XO.view()));
      EXPECT_LT(max_error(XO.get(be), x), tol(t) * 10) << "irfft(rfft(x)) = x";
      EXPECT_EQ(ZI.get(be), zin_stored) << "the input is not modified";
    }
}

}  // namespace
