// xp::linalg against NumPy 2 (tests/ref/linalg_reference.py) and against exact facts:
// - every function on float32, float64, complex64 and complex128 (and int64 inputs, promoted to
//   float64), single matrices, batches (rank-2 batches among them), 1x1, empty matrices and empty
//   batches; the result's shape and dtype are NumPy's;
// - the factorizations by their backward error and orthogonality, against c n u where u is the
//   unit roundoff of the dtype (2^-24, 2^-53) and n the matrix's larger side:
//     cholesky  ||A - L L^H|| <= 20 n u ||A||, the other triangle exactly zero
//     solve     ||A x - b|| <= 20 n u ||A|| ||x|| (each batch entry)
//     inv       ||A X - I|| <= 20 n u ||A|| ||X||
//     qr        ||A - Q R|| <= 20 n u ||A||, ||Q^H Q - I|| <= 20 n u sqrt(k), R exactly upper triangular
//     eigh      ||A V - V diag(w)|| <= 20 n u ||A||, ||V^H V - I|| <= 20 n u sqrt(n)
//     svd       ||A - U S Vh|| <= 20 n u ||A||, U and Vh orthonormal as Q
//   (Frobenius norms), and their values against NumPy's (computed in float64 from the same inputs):
//   eigenvalues and singular values within 20 n u ||A||, the rest as each check says;
// - det, slogdet (singular matrices: det 0, slogdet (0, -inf), exactly), inv, pinv, matrix_rank
//   (exactly), the norms, matrix_power, cross, outer, diagonal and trace against NumPy;
// - LinAlgError for singular solve and inv (the batch entry named: index 3 where only entry 3 is
//   singular, and the multi-index in a rank-2 batch) and for a cholesky that is not positive
//   definite; ValueError for bad shapes, ords and modes; TypeError for float16; the error a machine
//   without LAPACK gives;
// - the same NumPy cases and errors on a GPU (LinalgGpu.*, labelled gpu).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cpu/lapack.hpp"
#include "cpu_forwarding_backend.hpp"
#include "reference_cases.hpp"
#include "test_util.hpp"
#include "xp/linalg.hpp"
#include "xp/xp.hpp"

namespace {

namespace la = xp::linalg;
using xp::DType;
using i64 = std::int64_t;
using cd = std::complex<double>;

using Cases = xp_test::ReferenceCases;
using xp_test::count_of;
using xp_test::shape_of;

const Cases& cases() {
  static const Cases* c = xp_test::load_reference_cases("linalg_reference.py");
  return *c;
}

std::vector<cd> values_at(const Cases& c, const nlohmann::json& j) {
  std::vector<cd> v(static_cast<std::size_t>(count_of(shape_of(j["shape"]))));
  if (!v.empty()) std::memcpy(v.data(), c.data.data() + j["offset"].get<std::size_t>(), v.size() * sizeof(cd));
  return v;
}

DType dtype_named(const std::string& s) {
  const auto t = xp::parse_dtype(s);
  EXPECT_TRUE(t.has_value()) << s;
  return t.value_or(DType::float64);
}

// An input of the case on `device`, in the case's dtype (the values are exact in it).
xp::Array input(const Cases& c, const nlohmann::json& j, DType t, const xp::Device& device) {
  const xp::Shape shape = shape_of(j["shape"]);
  const std::vector<cd> v = values_at(c, j);
  if (xp::kind(t) == xp::DTypeKind::complex_floating)
    return xp::asarray(v.data(), v.size(), DType::complex128, shape, device).astype(t);
  std::vector<double> re;
  for (const cd& z : v) re.push_back(z.real());
  return xp::asarray(re.data(), re.size(), DType::float64, shape, device).astype(t);
}

std::vector<cd> host(const xp::Array& a) {
  return a.astype(DType::complex128).to_vector<cd>();
}

// ---- host matrices (complex double, C order), for the bounds: never xp's own arithmetic

struct Mat {
  i64 rows = 0, cols = 0;
  std::vector<cd> v;
  cd& operator()(i64 i, i64 j) { return v[static_cast<std::size_t>(i * cols + j)]; }
  cd operator()(i64 i, i64 j) const { return v[static_cast<std::size_t>(i * cols + j)]; }
};

Mat mat(i64 r, i64 c) {
  return {r, c, std::vector<cd>(static_cast<std::size_t>(r * c))};
}

// Batch entry e of a stack of (rows x cols) matrices in C order.
Mat entry(const std::vector<cd>& all, i64 e, i64 rows, i64 cols) {
  Mat m = mat(rows, cols);
  std::copy(all.begin() + e * rows * cols, all.begin() + (e + 1) * rows * cols, m.v.begin());
  return m;
}

Mat mul(const Mat& a, const Mat& b) {
  Mat c = mat(a.rows, b.cols);
  for (i64 i = 0; i < a.rows; ++i)
    for (i64 k = 0; k < a.cols; ++k)
      for (i64 j = 0; j < b.cols; ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

Mat adjoint(const Mat& a) {
  Mat c = mat(a.cols, a.rows);
  for (i64 i = 0; i < a.rows; ++i)
    for (i64 j = 0; j < a.cols; ++j) c(j, i) = std::conj(a(i, j));
  return c;
}

Mat minus(Mat a, const Mat& b) {
  for (std::size_t i = 0; i < a.v.size(); ++i) a.v[i] -= b.v[i];
  return a;
}

Mat identity(i64 n) {
  Mat c = mat(n, n);
  for (i64 i = 0; i < n; ++i) c(i, i) = 1;
  return c;
}

double fro(const Mat& a) {
  double s = 0;
  for (const cd& z : a.v) s += std::norm(z);
  return std::sqrt(s);
}

double unit_roundoff(DType t) {
  return xp::real_dtype(t) == DType::float32 ? 0x1p-24 : 0x1p-53;
}

double max_abs(const std::vector<cd>& v) {
  double m = 0;
  for (const cd& z : v) m = std::max(m, std::abs(z));
  return m;
}

// Every |got - want| within bound (infinities and NaNs must match exactly).
void expect_close(const std::vector<cd>& got, const std::vector<cd>& want, double bound, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i) {
    const cd g = got[i], w = want[i];
    const bool finite = std::isfinite(w.real()) && std::isfinite(w.imag());
    const bool ok = finite ? std::abs(g - w) <= bound : (g == w || (std::isnan(g.real()) && std::isnan(w.real())));
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", NumPy " << w << " (error " << std::abs(g - w)
                    << ", bound " << bound << ")";
    }
  }
}

void expect_below(double value, double bound, const std::string& what) {
  EXPECT_LE(value, bound) << what;
}

// Checks one result array against NumPy's: shape, dtype and (when bound >= 0) values.
void expect_matches(const xp::Array& got, const Cases& c, const nlohmann::json& want, double bound,
                    const std::string& what) {
  const xp::Shape ws = shape_of(want["shape"]);
  EXPECT_EQ(xp::Shape(got.shape().begin(), got.shape().end()), ws) << what;
  EXPECT_EQ(std::string(xp::name(got.dtype())), want["dtype"].get<std::string>()) << what;
  if (bound >= 0 && count_of(ws) == count_of(xp::Shape(got.shape().begin(), got.shape().end())))
    expect_close(host(got), values_at(c, want), bound, what);
}

double parse_ord(const std::string& s) {
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  return std::stod(s);
}

// The matrices of a stack: how many, rows, cols.
struct Stack {
  i64 batch, rows, cols;
};
Stack stack_of(const xp::Shape& s) {
  const std::size_t nd = s.size();
  return {count_of(xp::Shape(s.begin(), s.end() - 2)), s[nd - 2], s[nd - 1]};
}

void check_case(const Cases& c, const nlohmann::json& k, const xp::Device& device) {
  const std::string fn = k["fn"], what = k["name"].get<std::string>() + " on " + device.str();
  SCOPED_TRACE(what);
  const DType t = dtype_named(k["dtype"]);
  const auto& args = k["args"];
  const auto& outs = k["outputs"];
  std::vector<xp::Array> in;
  for (const auto& j : k["inputs"]) in.push_back(input(c, j, t, device));
  const DType ct = xp::kind(t) == xp::DTypeKind::signed_integer ? DType::float64 : t;
  const double n = k["n"].get<double>(), u = unit_roundoff(ct), tol = 20 * n * u;
  const std::vector<cd> a = in.empty() ? std::vector<cd>{} : host(in[0]);
  const xp::Shape ash(in[0].shape().begin(), in[0].shape().end());

  if (fn == "cholesky") {
    const bool upper = args["upper"].get<bool>();
    const xp::Array l = la::cholesky(in[0], upper);
    EXPECT_EQ(l.device(), device);
    expect_matches(l, c, outs[0], tol * std::max(1.0, max_abs(values_at(c, outs[0]))), "factor");
    if (ash.size() < 2 || count_of(ash) == 0) return;
    const Stack s = stack_of(ash);
    const std::vector<cd> lv = host(l);
    for (i64 e = 0; e < s.batch; ++e) {
      const Mat A = entry(a, e, s.rows, s.rows), L = entry(lv, e, s.rows, s.rows);
      for (i64 i = 0; i < s.rows; ++i)
        for (i64 j = 0; j < s.rows; ++j)
          if (upper ? j < i : j > i) {
            EXPECT_EQ(L(i, j), cd(0)) << "(" << i << ", " << j << ")";
          }
      const Mat back = upper ? mul(adjoint(L), L) : mul(L, adjoint(L));
      expect_below(fro(minus(A, back)), tol * fro(A), "backward error of entry " + std::to_string(e));
    }
  } else if (fn == "det") {
    const xp::Array d = la::det(in[0]);
    const std::vector<cd> want = values_at(c, outs[0]);
    expect_matches(d, c, outs[0], -1, "det");
    const std::vector<cd> got = host(d);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (want[i] == cd(0)) {
        EXPECT_EQ(got[i], cd(0)) << "entry " << i;  // singular: exactly 0
      } else {
        EXPECT_LE(std::abs(got[i] - want[i]), tol * std::abs(want[i]))
            << "entry " << i << ": " << got[i] << " vs " << want[i];
      }
    }
  } else if (fn == "slogdet") {
    const la::SlogdetResult r = la::slogdet(in[0]);
    expect_matches(r.sign, c, outs[0], tol, "sign");
    expect_matches(r.logabsdet, c, outs[1], tol * std::max(1.0, max_abs(values_at(c, outs[1]))), "logabsdet");
  } else if (fn == "inv") {
    const xp::Array x = la::inv(in[0]);
    expect_matches(x, c, outs[0], 5 * tol * std::max(1.0, max_abs(values_at(c, outs[0]))), "inv");
    if (count_of(ash) == 0) return;
    const Stack s = stack_of(ash);
    const std::vector<cd> xv = host(x);
    for (i64 e = 0; e < s.batch; ++e) {
      const Mat A = entry(a, e, s.rows, s.rows), X = entry(xv, e, s.rows, s.rows);
      expect_below(fro(minus(mul(A, X), identity(s.rows))), tol * fro(A) * fro(X),
                   "residual of entry " + std::to_string(e));
    }
  } else if (fn == "solve") {
    const xp::Array x = la::solve(in[0], in[1]);
    expect_matches(x, c, outs[0], 5 * tol * std::max(1.0, max_abs(values_at(c, outs[0]))), "solve");
    const xp::Shape xs(x.shape().begin(), x.shape().end());
    if (count_of(xs) == 0) return;
    // The residual of each entry, over the inputs broadcast as solve broadcasts them.
    const bool vector = in[1].ndim() == 1;
    const i64 nn = ash.back(), kk = vector ? 1 : xs.back();
    xp::Shape batch(xs.begin(), xs.end() - (vector ? 1 : 2));
    xp::Shape as = batch, bs = batch;
    as.insert(as.end(), {nn, nn});
    bs.insert(bs.end(), {nn, kk});
    const std::vector<cd> av = host(xp::broadcast_to(in[0], as));
    const std::vector<cd> bv = host(xp::broadcast_to(vector ? xp::reshape(in[1], {nn, 1}) : in[1], bs));
    const std::vector<cd> xv = host(x);
    for (i64 e = 0; e < count_of(batch); ++e) {
      const Mat A = entry(av, e, nn, nn), B = entry(bv, e, nn, kk), X = entry(xv, e, nn, kk);
      expect_below(fro(minus(mul(A, X), B)), tol * fro(A) * fro(X), "residual of entry " + std::to_string(e));
    }
  } else if (fn == "qr") {
    const la::QRResult r = la::qr(in[0], args["mode"].get<std::string>());
    expect_matches(r.Q, c, outs[0], -1, "Q");
    expect_matches(r.R, c, outs[1], -1, "R");
    const Stack s = stack_of(ash);
    const xp::Shape qs(r.Q.shape().begin(), r.Q.shape().end()), rs(r.R.shape().begin(), r.R.shape().end());
    const i64 qc = qs.back(), rr = rs[rs.size() - 2];
    const std::vector<cd> qv = host(r.Q), rv = host(r.R), want_r = values_at(c, outs[1]);
    for (i64 e = 0; e < s.batch; ++e) {
      const Mat A = entry(a, e, s.rows, s.cols), Q = entry(qv, e, s.rows, qc), R = entry(rv, e, rr, s.cols);
      const Mat WR = entry(want_r, e, rr, s.cols);
      for (i64 i = 0; i < rr; ++i) {
        for (i64 j = 0; j < std::min(i, s.cols); ++j) EXPECT_EQ(R(i, j), cd(0)) << "R(" << i << ", " << j << ")";
        if (i < s.cols) {
          EXPECT_NEAR(std::abs(R(i, i)), std::abs(WR(i, i)), tol * std::max(1.0, fro(A)))
              << "|R(" << i << ", " << i << ")|";
        }
      }
      expect_below(fro(minus(A, mul(Q, R))), tol * fro(A), "backward error of entry " + std::to_string(e));
      expect_below(fro(minus(mul(adjoint(Q), Q), identity(qc))), tol * std::sqrt(static_cast<double>(qc)),
                   "orthogonality of entry " + std::to_string(e));
    }
  } else if (fn == "eigh" || fn == "eigvalsh") {
    const Stack s = stack_of(ash);
    const bool vectors = fn == "eigh";
    la::EighResult r;
    if (vectors) {
      r = la::eigh(in[0]);
    } else {
      r.eigenvalues = la::eigvalsh(in[0]);
    }
    // The Hermitian matrix eigh reads: the lower triangle, reflected.
    std::vector<cd> h = a;
    for (i64 e = 0; e < s.batch; ++e)
      for (i64 i = 0; i < s.rows; ++i)
        for (i64 j = i + 1; j < s.rows; ++j) {
          const std::size_t base = static_cast<std::size_t>(e * s.rows * s.rows);
          h[base + static_cast<std::size_t>(i * s.rows + j)] =
              std::conj(h[base + static_cast<std::size_t>(j * s.rows + i)]);
        }
    double norm_a = 0;
    for (i64 e = 0; e < s.batch; ++e) norm_a = std::max(norm_a, fro(entry(h, e, s.rows, s.rows)));
    expect_matches(r.eigenvalues, c, outs[0], tol * std::max(1.0, norm_a), "eigenvalues");
    if (!vectors) return;
    expect_matches(r.eigenvectors, c, outs[1], -1, "eigenvectors");
    const std::vector<cd> wv = host(r.eigenvalues), vv = host(r.eigenvectors);
    for (i64 e = 0; e < s.batch; ++e) {
      const Mat A = entry(h, e, s.rows, s.rows), V = entry(vv, e, s.rows, s.rows);
      Mat VW = V;
      for (i64 i = 0; i < s.rows; ++i)
        for (i64 j = 0; j < s.rows; ++j) VW(i, j) *= wv[static_cast<std::size_t>(e * s.rows + j)];
      expect_below(fro(minus(mul(A, V), VW)), tol * fro(A), "backward error of entry " + std::to_string(e));
      expect_below(fro(minus(mul(adjoint(V), V), identity(s.rows))), tol * std::sqrt(static_cast<double>(s.rows)),
                   "orthogonality of entry " + std::to_string(e));
    }
  } else if (fn == "svd" || fn == "svdvals") {
    const Stack s = stack_of(ash);
    double norm_a = 0;
    for (i64 e = 0; e < s.batch; ++e) norm_a = std::max(norm_a, fro(entry(a, e, s.rows, s.cols)));
    if (fn == "svdvals") {
      expect_matches(la::svdvals(in[0]), c, outs[0], tol * std::max(1.0, norm_a), "S");
      return;
    }
    const la::SVDResult r = la::svd(in[0], args["full_matrices"].get<bool>());
    expect_matches(r.U, c, outs[0], -1, "U");
    expect_matches(r.S, c, outs[1], tol * std::max(1.0, norm_a), "S");
    expect_matches(r.Vh, c, outs[2], -1, "Vh");
    const i64 kk = std::min(s.rows, s.cols), uc = r.U.shape(-1), vr = r.Vh.shape(-2);
    const std::vector<cd> uv = host(r.U), sv = host(r.S), vhv = host(r.Vh);
    for (i64 e = 0; e < s.batch; ++e) {
      const Mat A = entry(a, e, s.rows, s.cols), U = entry(uv, e, s.rows, uc), Vh = entry(vhv, e, vr, s.cols);
      Mat USV = mat(s.rows, s.cols);
      for (i64 i = 0; i < s.rows; ++i)
        for (i64 j = 0; j < s.cols; ++j)
          for (i64 p = 0; p < kk; ++p) USV(i, j) += U(i, p) * sv[static_cast<std::size_t>(e * kk + p)] * Vh(p, j);
      expect_below(fro(minus(A, USV)), tol * fro(A), "backward error of entry " + std::to_string(e));
      expect_below(fro(minus(mul(adjoint(U), U), identity(uc))), tol * std::sqrt(static_cast<double>(uc)),
                   "orthogonality of U in entry " + std::to_string(e));
      expect_below(fro(minus(mul(Vh, adjoint(Vh)), identity(vr))), tol * std::sqrt(static_cast<double>(vr)),
                   "orthogonality of Vh in entry " + std::to_string(e));
    }
  } else if (fn == "pinv") {
    const std::optional<double> rtol =
        args.contains("rtol") ? std::optional<double>(args["rtol"].get<double>()) : std::nullopt;
    const double cond = args["cond"].get<double>();
    expect_matches(la::pinv(in[0], rtol), c, outs[0], 5 * tol * cond * std::max(1.0, max_abs(values_at(c, outs[0]))),
                   "pinv");
  } else if (fn == "matrix_rank") {
    const std::optional<double> rtol =
        args.contains("rtol") ? std::optional<double>(args["rtol"].get<double>()) : std::nullopt;
    expect_matches(la::matrix_rank(in[0], rtol), c, outs[0], 0, "rank");
  } else if (fn == "matrix_norm") {
    const std::string ord = args["ord"];
    const bool keep = args["keepdims"].get<bool>();
    const xp::Array r =
        ord == "fro" || ord == "nuc" ? la::matrix_norm(in[0], keep, ord) : la::matrix_norm(in[0], parse_ord(ord), keep);
    expect_matches(r, c, outs[0], tol * std::max(1.0, max_abs(values_at(c, outs[0]))), "norm");
  } else if (fn == "vector_norm") {
    xp::Axes axes;
    if (!args["axes"].is_null()) axes = xp::Axes(args["axes"].get<std::vector<int>>());
    const xp::Array r = la::vector_norm(in[0], axes, args["keepdims"].get<bool>(), parse_ord(args["ord"]));
    expect_matches(r, c, outs[0], tol * std::max(1.0, max_abs(values_at(c, outs[0]))), "norm");
  } else if (fn == "matrix_power") {
    const i64 p = args["n"].get<i64>();
    const double bound =
        xp::kind(t) == xp::DTypeKind::signed_integer ? 0 : 5 * tol * static_cast<double>(std::abs(p) + 1);
    expect_matches(la::matrix_power(in[0], p), c, outs[0], bound * std::max(1.0, max_abs(values_at(c, outs[0]))),
                   "power");
  } else if (fn == "cross") {
    const double bound = xp::kind(t) == xp::DTypeKind::signed_integer ? 0 : 8 * u;
    expect_matches(la::cross(in[0], in[1], args["axis"].get<int>()), c, outs[0], bound, "cross");
  } else if (fn == "outer") {
    expect_matches(la::outer(in[0], in[1]), c, outs[0], 4 * u, "outer");
  } else if (fn == "diagonal") {
    expect_matches(la::diagonal(in[0], args["offset"].get<i64>()), c, outs[0], 0, "diagonal");
  } else if (fn == "trace") {
    const double bound = xp::kind(t) == xp::DTypeKind::signed_integer ? 0 : tol * std::max(1.0, max_abs(a));
    expect_matches(la::trace(in[0], args["offset"].get<i64>()), c, outs[0], bound, "trace");
  } else {
    ADD_FAILURE() << "unknown function " << fn;
  }
}

int check_all(const xp::Device& device) {
  const Cases& c = cases();
  int ran = 0;
  for (const auto& k : c.json["cases"]) {
    try {
      check_case(c, k, device);
    } catch (const std::exception& e) {
      ADD_FAILURE() << k["name"].get<std::string>() << ": " << e.what();
    }
    ++ran;
  }
  return ran;
}

void require_lapack() {
  const auto info = xp::detail::cpu::lapack_info();
  if (!info.loaded) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", info.error);
}

TEST(Linalg, MatchesNumPy) {
  require_lapack();
  XP_REQUIRE_REFERENCE(cases().ref);
  EXPECT_GT(check_all(xp::Device::cpu()), 1000);
}

// ---- errors

xp::Array diag_matrices(const std::vector<std::vector<double>>& diagonals, const xp::Device& device) {
  // A stack of diagonal matrices.
  const i64 b = static_cast<i64>(diagonals.size()), n = static_cast<i64>(diagonals[0].size());
  std::vector<double> v(static_cast<std::size_t>(b * n * n), 0.0);
  for (i64 e = 0; e < b; ++e)
    for (i64 i = 0; i < n; ++i) v[static_cast<std::size_t>(e * n * n + i * n + i)] = diagonals[e][i];
  return xp::asarray(v.data(), v.size(), DType::float64, {b, n, n}, device);
}

template <class F>
xp::LinAlgError linalg_error(F&& f) {
  try {
    f();
  } catch (const xp::LinAlgError& e) {
    return e;
  }
  ADD_FAILURE() << "no LinAlgError";
  return xp::LinAlgError("none", -1, 0);
}

void check_errors(const xp::Device& device) {
  // Entry 3 of 5 is singular (its second diagonal element is 0): solve and inv name it.
  std::vector<std::vector<double>> d(5, {2.0, 3.0, 4.0});
  d[3][1] = 0;
  const xp::Array a = diag_matrices(d, device);
  const xp::Array b = xp::ones({5, 3, 1}, DType::float64, device);
  for (const char* fn : {"solve", "inv"}) {
    SCOPED_TRACE(fn);
    const xp::LinAlgError e = linalg_error([&] { std::string(fn) == "solve" ? la::solve(a, b) : la::inv(a); });
    EXPECT_EQ(e.batch_index(), 3);
    EXPECT_EQ(e.info(), 2);  // U(2, 2) is exactly zero (1-based, as LAPACK counts)
    EXPECT_NE(std::string(e.what()).find(std::string(fn) + ": the matrix is singular"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch entry 3"), std::string::npos) << e.what();
  }
  // In a rank-2 batch (2, 3), entry 4 is at (1, 1).
  std::vector<std::vector<double>> d2(6, {1.0, 1.0});
  d2[4][0] = 0;
  const xp::Array a2 = xp::reshape(diag_matrices(d2, device), {2, 3, 2, 2});
  const xp::LinAlgError e2 = linalg_error([&] { la::inv(a2); });
  EXPECT_EQ(e2.batch_index(), 4);
  EXPECT_EQ(e2.info(), 1);
  EXPECT_NE(std::string(e2.what()).find("batch entry 4, index (1, 1)"), std::string::npos) << e2.what();
  // A single matrix: entry 0.
  const xp::LinAlgError e3 = linalg_error([&] {
    la::solve(xp::zeros({2, 2}, DType::float32, device), xp::ones({2}, DType::float32, device));
  });
  EXPECT_EQ(e3.batch_index(), 0);
  EXPECT_EQ(e3.info(), 1);
  // Not positive definite: the leading minor of order 3 is not positive.
  std::vector<std::vector<double>> d3(2, {1.0, 2.0, 3.0});
  d3[1][2] = -1;
  const xp::LinAlgError e4 = linalg_error([&] { la::cholesky(diag_matrices(d3, device)); });
  EXPECT_EQ(e4.batch_index(), 1);
  EXPECT_EQ(e4.info(), 3);
  EXPECT_NE(std::string(e4.what()).find("cholesky: the matrix is not positive definite"), std::string::npos)
      << e4.what();
  // A NaN in entry 1: svd and svdvals fail to converge there, as NumPy's LAPACK says; an infinity
  // gives NaNs and no error (NumPy's answers), on every device.
  std::vector<std::vector<double>> d5(3, {1.0, 2.0});
  d5[1][0] = std::nan("");
  for (const char* fn : {"svd", "svdvals"}) {
    SCOPED_TRACE(fn);
    const xp::LinAlgError e5 = linalg_error([&] {
      const xp::Array m = diag_matrices(d5, device);
      std::string(fn) == "svd" ? la::svd(m).S : la::svdvals(m);
    });
    EXPECT_EQ(e5.batch_index(), 1);
    EXPECT_NE(std::string(e5.what()).find(std::string(fn) + ": the SVD did not converge"), std::string::npos)
        << e5.what();
  }
  d5[1][0] = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isnan(la::svdvals(diag_matrices(d5, device)).to_vector<double>()[2]));
  // Singular matrices are no error for det and slogdet.
  EXPECT_EQ(la::det(a).to_vector<double>(), (std::vector<double>{24, 24, 24, 0, 24}));
  const auto sl = la::slogdet(a);
  EXPECT_EQ(sl.sign.to_vector<double>(), (std::vector<double>{1, 1, 1, 0, 1}));
  EXPECT_EQ(sl.logabsdet.to_vector<double>()[3], -std::numeric_limits<double>::infinity());

  // Bad shapes, ords and modes: ValueError (and not LinAlgError).
  const xp::Array rect = xp::ones({2, 3}, DType::float64, device),
                  sq = xp::eye(3, std::nullopt, 0, DType::float64, device);
  const xp::Array vec = xp::ones({3}, DType::float64, device);
  const auto value_error = [](auto&& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what << ": no error";
    } catch (const xp::LinAlgError& e) {
      ADD_FAILURE() << what << ": a LinAlgError: " << e.what();
    } catch (const xp::ValueError&) {
    }
  };
  value_error([&] { la::det(rect); }, "det of 2x3");
  value_error([&] { la::inv(rect); }, "inv of 2x3");
  value_error([&] { la::cholesky(rect); }, "cholesky of 2x3");
  value_error([&] { la::eigh(rect); }, "eigh of 2x3");
  value_error([&] { la::slogdet(vec); }, "slogdet of a vector");
  value_error([&] { la::svd(vec); }, "svd of a vector");
  value_error([&] { la::qr(vec); }, "qr of a vector");
  value_error([&] { la::solve(rect, vec); }, "solve with a 2x3 matrix");
  value_error([&] { la::solve(sq, xp::ones({4}, DType::float64, device)); }, "solve with 4 elements for 3 rows");
  value_error([&] { la::solve(sq, xp::ones({2, 3}, DType::float64, device)); }, "solve with 2 rows for 3");
  value_error(
      [&] {
        la::solve(xp::ones({2, 3, 3}, DType::float64, device), xp::ones({4, 3, 1}, DType::float64, device));
      },
      "solve with batches that do not broadcast");
  value_error([&] { la::matrix_norm(sq, 3.0); }, "matrix_norm ord 3");
  value_error([&] { la::matrix_norm(sq, false, "max"); }, "matrix_norm ord 'max'");
  value_error([&] { la::matrix_norm(vec); }, "matrix_norm of a vector");
  value_error([&] { la::vector_norm(vec, {}, false, std::nan("")); }, "vector_norm ord NaN");
  value_error([&] { la::qr(sq, "r"); }, "qr mode 'r'");
  value_error([&] { la::cross(vec, xp::ones({2}, DType::float64, device)); }, "cross of 2 elements");
  value_error([&] { la::outer(sq, vec); }, "outer of a matrix");
  value_error([&] { la::matrix_power(rect, 2); }, "matrix_power of 2x3");
  // float16 is a TypeError, as in NumPy.
  EXPECT_THROW(la::inv(sq.astype(DType::float16)), xp::TypeError);
  EXPECT_THROW(la::svdvals(sq.astype(DType::bfloat16)), xp::TypeError);
}

TEST(Linalg, ErrorsNameTheFunctionAndTheBatchEntry) {
  require_lapack();
  check_errors(xp::Device::cpu());
}

// Norms of nothing: the largest of no values is 0, as NumPy answers (a norm is never negative); the
// smallest of none stays an error. Fuzzing against NumPy found these raising.
TEST(Linalg, NormsOfEmptyInputs) {
  require_lapack();
  const double inf = std::numeric_limits<double>::infinity();
  const xp::Device cpu = xp::Device::cpu();
  EXPECT_EQ(la::vector_norm(xp::zeros({0}, DType::float64, cpu), {}, false, inf).item<double>(), 0.0);
  EXPECT_EQ(la::vector_norm(xp::zeros({2, 0}, DType::float32, cpu), {1}, false, inf).to_vector<float>(),
            (std::vector<float>{0, 0}));
  EXPECT_THROW(la::vector_norm(xp::zeros({0}, DType::float64, cpu), {}, false, -inf), xp::ValueError);
  for (const xp::Shape& shape : {xp::Shape{0, 0}, xp::Shape{3, 0}, xp::Shape{0, 3}}) {
    const xp::Array z = xp::zeros(shape, DType::float64, cpu);
    for (double ord : {2.0, 1.0, inf}) EXPECT_EQ(la::matrix_norm(z, ord).item<double>(), 0.0) << ord;
    EXPECT_THROW(la::matrix_norm(z, -2.0), xp::ValueError);
  }
  const xp::Array b = la::matrix_norm(xp::zeros({2, 0, 0}, DType::float64, cpu), 2.0, true);
  EXPECT_EQ(b.shape(0), 2);
  EXPECT_EQ(b.shape(1), 1);
  EXPECT_EQ(b.shape(2), 1);
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{0, 0}));
}

// rtol as an array: one tolerance per matrix, broadcast with the batch shape; each result is the
// one the same tolerance as a number gives.
TEST(Linalg, RtolArrayIsATolerancePerMatrix) {
  require_lapack();
  const xp::Device cpu = xp::Device::cpu();
  auto shape_of = [](const xp::Array& x) { return xp::Shape(x.shape().begin(), x.shape().end()); };
  auto g = xp::random::Generator(5);
  const xp::Array a = g.uniform({3, 4, 4}, DType::float64, -1, 1, cpu);
  const std::vector<double> tols = {1e-12, 0.4, 0.95};
  const xp::Array rtol = xp::asarray(tols, xp::Shape{3}, cpu);
  const std::vector<std::int64_t> ranks = la::matrix_rank(a, rtol).to_vector<std::int64_t>();
  const xp::Array p = la::pinv(a, rtol);
  ASSERT_EQ(shape_of(p), (xp::Shape{3, 4, 4}));
  for (int i = 0; i < 3; ++i) {
    const xp::Array one = a.slice({xp::Slice(i, i + 1)});
    EXPECT_EQ(ranks[static_cast<std::size_t>(i)],
              la::matrix_rank(one, tols[static_cast<std::size_t>(i)]).to_vector<std::int64_t>()[0])
        << i;
    EXPECT_EQ(p.slice({xp::Slice(i, i + 1)}).to_vector<double>(),
              la::pinv(one, tols[static_cast<std::size_t>(i)]).to_vector<double>())
        << i;
  }
  EXPECT_LT(ranks[2], ranks[0]);  // the tolerances differ enough to matter
  // One matrix, two tolerances: the batch broadcasts up.
  const xp::Array two = la::pinv(a.slice({xp::Slice(0, 1)}).reshape({4, 4}),
                                 xp::asarray(std::vector<double>{1e-12, 0.95}, xp::Shape{2}, cpu));
  EXPECT_EQ(shape_of(two), (xp::Shape{2, 4, 4}));
  // Empty: a batch of none against a tolerance of shape (0,).
  EXPECT_EQ(shape_of(la::matrix_rank(a.slice({xp::Slice(0, 0)}), xp::zeros({0}, DType::float32, cpu))), (xp::Shape{0}));
  EXPECT_EQ(shape_of(la::pinv(a.slice({xp::Slice(0, 1)}).reshape({4, 4}), xp::zeros({0}, DType::float32, cpu))),
            (xp::Shape{0, 4, 4}));
  EXPECT_THROW(la::matrix_rank(a, xp::ones({2}, DType::float64, cpu)), xp::ValueError);
  EXPECT_THROW(la::pinv(a, xp::ones({3}, DType::bool_, cpu)), xp::TypeError);
  EXPECT_THROW(la::pinv(a, xp::ones({3}, DType::complex64, cpu)), xp::TypeError);
}

// Strided, reversed and lazy inputs give the same values as their C-contiguous copies, and no input
// is written to.
TEST(Linalg, AnyLayoutAndInputsUntouched) {
  require_lapack();
  auto g = xp::random::Generator(7);
  const xp::Device cpu = xp::Device::cpu();
  const xp::Array base =
      g.uniform({3, 6, 6}, DType::float64, 0, 1, cpu) + xp::eye(6, std::nullopt, 0, DType::float64, cpu) * 6;
  const std::vector<double> before = base.to_vector<double>();
  const xp::Array views[] = {xp::matrix_transpose(base), xp::flip(base, 1), base * 1.0,
                             base.slice({xp::Slice(), xp::Slice(std::nullopt, std::nullopt, 1)})};
  for (const xp::Array& v : views) {
    const xp::Array c = v.copy();
    EXPECT_EQ(la::det(v).to_vector<double>(), la::det(c).to_vector<double>());
    EXPECT_EQ(la::inv(v).to_vector<double>(), la::inv(c).to_vector<double>());
    EXPECT_EQ(la::cholesky(xp::matmul(v, xp::matrix_transpose(v))).to_vector<double>(),
              la::cholesky(xp::matmul(c, xp::matrix_transpose(c))).to_vector<double>());
    EXPECT_EQ(la::svdvals(v).to_vector<double>(), la::svdvals(c).to_vector<double>());
    EXPECT_EQ(la::eigvalsh(v).to_vector<double>(), la::eigvalsh(c).to_vector<double>());
    EXPECT_EQ(la::qr(v).R.to_vector<double>(), la::qr(c).R.to_vector<double>());
  }
  EXPECT_EQ(base.to_vector<double>(), before);
}

// A batch of small matrices runs its entries in parallel on xp's threads: each entry's answer is
// the one it gets alone, bit for bit (the same LAPACK calls, on one thread each).
TEST(Linalg, BatchesInParallelMatchEntryByEntry) {
  require_lapack();
  auto g = xp::random::Generator(11);
  const xp::Device cpu = xp::Device::cpu();
  const xp::Array a =
      g.uniform({96, 12, 12}, DType::float64, 0, 1, cpu) + xp::eye(12, std::nullopt, 0, DType::float64, cpu) * 12;
  const xp::Array spd = xp::matmul(a, xp::matrix_transpose(a));
  const xp::Array inv = la::inv(a), chol = la::cholesky(spd), s = la::svdvals(a);
  const xp::Array w = la::eigvalsh(spd), r = la::qr(a).R;
  for (std::int64_t i = 0; i < 96; i += 7) {
    SCOPED_TRACE(i);
    EXPECT_EQ(inv[i].to_vector<double>(), la::inv(a[i]).to_vector<double>());
    EXPECT_EQ(chol[i].to_vector<double>(), la::cholesky(spd[i]).to_vector<double>());
    EXPECT_EQ(s[i].to_vector<double>(), la::svdvals(a[i]).to_vector<double>());
    EXPECT_EQ(w[i].to_vector<double>(), la::eigvalsh(spd[i]).to_vector<double>());
    EXPECT_EQ(r[i].to_vector<double>(), la::qr(a[i]).R.to_vector<double>());
  }
}

// Without LAPACK (no OpenBLAS on the machine, simulated), the factorizations say what to install.
TEST(Linalg, WithoutLapackSaysWhatToInstall) {
  xp::detail::cpu::set_lapack_hidden(true);
  std::string what;
  bool value_error = false;
  try {
    la::inv(xp::eye(2, std::nullopt, 0, DType::float64, xp::Device::cpu()));
  } catch (const xp::ValueError& e) {
    value_error = true;
    what = e.what();
  } catch (const xp::Error& e) {
    what = e.what();
  }
  xp::detail::cpu::set_lapack_hidden(false);
  EXPECT_FALSE(value_error) << what;
  EXPECT_NE(what.find("install libopenblas0"), std::string::npos) << what;
  // The functions that need no LAPACK still work.
  EXPECT_EQ(la::trace(xp::eye(3, std::nullopt, 0, DType::float64, xp::Device::cpu())).item<double>(), 3.0);
}

TEST(Linalg, LapackInfo) {
  const auto info = xp::detail::cpu::lapack_info();
  if (!info.loaded) {
    EXPECT_NE(info.error.find("libopenblas0"), std::string::npos) << info.error;
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", info.error);
  }
  EXPECT_TRUE(info.error.empty()) << info.error;
  EXPECT_NE(info.path.find("openblas"), std::string::npos) << info.path;
}

// ---- a device whose backend cannot factor (Backend::linalg returns false): the array layer
// computes on the CPU over host copies and copies the results back, with the same answers and errors.

class NoLinalgBackend final : public xp_test::CpuForwardingBackend {
 public:
  const char* name() const noexcept override { return "no-linalg"; }
  bool linalg(const xp::detail::LinalgCall&, std::span<const xp::detail::View>, std::span<const xp::detail::View>,
              std::span<std::int64_t>) override {
    ++refused;
    return false;
  }
  int refused = 0;
};

TEST(Linalg, OnTheCpuWhereTheDevicesBackendCannot) {
  require_lapack();
  XP_REQUIRE_REFERENCE(cases().ref);
  NoLinalgBackend backend;
  const xp::Device other = xp::Device::cuda(0);
  xp::detail::register_backend(other, &backend);
  EXPECT_GT(check_all(other), 1000);
  check_errors(other);
  EXPECT_GT(backend.refused, 100);
  const xp::Array x = la::inv(xp::eye(3, std::nullopt, 0, DType::float64, other) * 2.0);
  EXPECT_EQ(x.device(), other);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0.5, 0, 0, 0, 0.5, 0, 0, 0, 0.5}));
  xp::detail::register_backend(other, nullptr);
}

// ---- the same on a GPU (cuSOLVER, or the CPU over copies where the backend cannot)

TEST(LinalgGpu, MatchesNumPy) {
  XP_REQUIRE_GPU();
  XP_REQUIRE_REFERENCE(cases().ref);
  EXPECT_GT(check_all(xp::Device::cuda(0)), 1000);
}

TEST(LinalgGpu, ErrorsNameTheFunctionAndTheBatchEntry) {
  XP_REQUIRE_GPU();
  check_errors(xp::Device::cuda(0));
}

TEST(LinalgGpu, ResultsStayOnTheDevice) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  const xp::Array a = xp::eye(4, std::nullopt, 0, DType::float32, gpu) * 2;
  EXPECT_EQ(la::inv(a).device(), gpu);
  EXPECT_EQ(la::det(a).device(), gpu);
  EXPECT_EQ(la::svd(a).U.device(), gpu);
  EXPECT_EQ(la::eigh(a).eigenvectors.device(), gpu);
  EXPECT_EQ(la::qr(a).Q.device(), gpu);
  EXPECT_EQ(la::cholesky(a).device(), gpu);
  EXPECT_FLOAT_EQ(la::det(a).item<float>(), 16.0f);
}

}  // namespace
