// xp::linalg: the Array API's linalg extension. The factorizations (cholesky, LU, solve, QR, eigh,
// SVD) run in the device's backend (Backend::linalg: LAPACK on the CPU, cuSOLVER on CUDA), or on
// the CPU backend over host copies where a backend cannot; everything else is composed here of
// other array functions (det and slogdet from the LU, inv from solve, pinv, matrix_rank and the
// 2, -2 and nuclear norms from the SVD, the other norms from elementwise functions and reductions).
//
// Dtypes (docs/semantics.md, "Linear algebra"): the factorizations compute in float32, float64,
// complex64 or complex128; bool and integer inputs are converted to float64 first (as
// numpy.linalg); float16 and bfloat16 are a TypeError (as numpy.linalg: astype(float32) first).

#include "xp/linalg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "array/array_impl.hpp"

namespace xp::linalg {

using detail::impl_of;
using detail::ImplPtr;

namespace {

bool is_complex(DType t) {
  return kind(t) == DTypeKind::complex_floating;
}

// The dtype a factorization computes in for an input of dtype t.
DType compute_dtype(const char* fn, DType t) {
  switch (kind(t)) {
    case DTypeKind::boolean:
    case DTypeKind::signed_integer:
    case DTypeKind::unsigned_integer:
      return DType::float64;
    case DTypeKind::complex_floating:
      return t;
    case DTypeKind::floating:
      break;
  }
  if (t == DType::float32 || t == DType::float64) return t;
  throw TypeError(std::string(fn) + ": array type " + std::string(name(t)) +
                  " is unsupported in linalg (as NumPy's): convert it with astype(float32) first");
}

// The dtype the norms compute in: bool and integers as float64, floats and complex as they are.
DType norm_dtype(DType t) {
  const DTypeKind k = kind(t);
  return k == DTypeKind::floating || k == DTypeKind::complex_floating ? t : DType::float64;
}

double eps_of(DType real) {
  return real == DType::float32 ? static_cast<double>(std::numeric_limits<float>::epsilon())
                                : std::numeric_limits<double>::epsilon();
}

void require_matrices(const char* fn, const Array& x) {
  if (x.ndim() < 2) {
    throw ValueError(std::string(fn) + ": the input must have at least 2 dimensions (a matrix or a stack of them); " +
                     "its shape is " + detail::shape_str(x.shape()));
  }
}

void require_square(const char* fn, const Array& x) {
  require_matrices(fn, x);
  if (x.shape(-1) != x.shape(-2)) {
    throw ValueError(std::string(fn) + ": the last 2 dimensions of the array must be square; its shape is " +
                     detail::shape_str(x.shape()));
  }
}

Shape batch_of(const Array& x) {
  return Shape(x.shape().begin(), x.shape().end() - 2);
}

Shape join(Shape s, std::initializer_list<std::int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

std::int64_t count(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

// x in dtype t, C-contiguous and evaluated: what Backend::linalg reads.
Array contiguous(const Array& x, DType t) {
  Array a = x.dtype() == t ? x : x.astype(t);
  if (a.is_lazy() || !a.is_c_contiguous()) a = a.copy();
  a.eval();
  return a;
}

std::vector<detail::View> views_of(const std::vector<Array>& arrays) {
  std::vector<detail::View> v;
  v.reserve(arrays.size());
  for (const Array& a : arrays) v.push_back(detail::view_of(*a.impl()));
  return v;
}

struct OutSpec {
  DType dtype;
  Shape shape;
};

// Runs one backend factorization over the C-contiguous inputs (all on one device, one batch) into
// new outputs of the given dtypes and shapes; info gets one code per batch entry. Where the device's
// backend cannot (Backend::linalg returns false), the CPU backend computes over host copies and the
// results are copied back to the device. Inputs with no element are not passed to the backend:
// the outputs are then left as allocated, and the callers fill what must be filled.
std::vector<Array> factor(const char* fn, const detail::LinalgCall& call, const std::vector<Array>& ins,
                          const std::vector<OutSpec>& outs, std::int64_t batch, std::vector<std::int64_t>& info) {
  const Device device = ins[0].device();
  std::vector<Array> res;
  for (const OutSpec& o : outs) res.emplace_back(detail::new_array(o.dtype, o.shape, device));
  info.assign(static_cast<std::size_t>(batch), 0);
  for (const Array& a : ins) {
    if (a.size() == 0) return res;
  }
  const std::vector<detail::View> in_views = views_of(ins), out_views = views_of(res);
  if (impl_of(ins[0])->backend->linalg(call, in_views, out_views, info)) return res;
  if (device.kind() == DeviceKind::cpu)
    throw Error(std::string(fn) + ": the CPU backend could not compute it (an xp bug)");
  std::vector<Array> host_in, host_out;
  for (const Array& a : ins) host_in.push_back(a.to_device(Device::cpu()));
  for (const OutSpec& o : outs) host_out.emplace_back(detail::new_array(o.dtype, o.shape, Device::cpu()));
  const std::vector<detail::View> hi = views_of(host_in), ho = views_of(host_out);
  if (!detail::backend_for(Device::cpu()).linalg(call, hi, ho, info))
    throw Error(std::string(fn) + ": the CPU backend could not compute it (an xp bug)");
  for (std::size_t i = 0; i < res.size(); ++i) res[i] = host_out[i].to_device(device);
  return res;
}

// The first batch entry whose info is nonzero, as a LinAlgError naming fn, the entry (its index in C
// order over the batch, and its multi-index where the batch has more than one dimension) and info.
void check_info(const char* fn, const char* what, const std::vector<std::int64_t>& info, const Shape& batch) {
  for (std::size_t i = 0; i < info.size(); ++i) {
    if (info[i] == 0) continue;
    std::string where;
    if (!batch.empty()) {
      where = "batch entry " + std::to_string(i);
      if (batch.size() > 1) {
        Shape idx(batch.size());
        std::int64_t r = static_cast<std::int64_t>(i);
        for (std::size_t d = batch.size(); d-- > 0;) {
          idx[d] = r % batch[d];
          r /= batch[d];
        }
        where += ", index " + detail::shape_str(idx);
      }
      where += "; ";
    }
    throw LinAlgError(std::string(fn) + ": " + what + " (" + where + "info " + std::to_string(info[i]) + ")",
                      static_cast<std::int64_t>(i), info[i]);
  }
}

// LAPACK's gesdd refuses a matrix that holds a NaN (LAPACK 3.10 and later), which NumPy reports as
// an SVD that did not converge; cuSOLVER's gesvd has no such check. So the array layer looks for
// NaNs first (one reduction, small beside the SVD), and every device raises NumPy's error for the
// first such entry (info 1). An infinity is no error: its SVD is NaNs, on every device as in NumPy.
void refuse_nan(const char* fn, const Array& x, const Shape& batch) {
  const Array nan = isnan(x);
  if (!any(nan).item<bool>()) return;
  const std::vector<std::int8_t> per_entry =
      reshape(any(nan, Axes(std::vector<int>{-2, -1})), {-1}).astype(DType::int8).to_vector<std::int8_t>();
  std::vector<std::int64_t> info(per_entry.size(), 0);
  for (std::size_t i = 0; i < per_entry.size(); ++i) {
    if (per_entry[i] == 0) continue;
    info[i] = 1;
    break;
  }
  check_info(fn, "the SVD did not converge (the matrix holds a NaN)", info, batch);
}

// identity matrices (rows x cols) of dtype t, broadcast over batch (a new array).
Array identities(const Shape& batch, std::int64_t rows, std::int64_t cols, DType t, const Device& device) {
  return broadcast_to(eye(rows, cols, 0, t, device), join(batch, {rows, cols})).copy();
}

// LU factors (P A = L U as getrf: lu holds L below the diagonal and U on and above it) and the
// 0-based pivots; a singular matrix is no error here.
struct LU {
  Array lu, pivots;
};
LU lu_factor(const char* fn, const Array& x) {
  require_square(fn, x);
  const DType t = compute_dtype(fn, x.dtype());
  const Shape batch = batch_of(x);
  const std::int64_t n = x.shape(-1);
  detail::LinalgCall call;
  call.op = detail::LinalgOp::lu;
  std::vector<std::int64_t> info;
  auto r = factor(fn, call, {contiguous(x, t)}, {{t, join(batch, {n, n})}, {DType::int64, join(batch, {n})}},
                  count(batch), info);
  return {r[0], r[1]};
}

// True where the permutation of an LU's pivots is odd (its sign is -1), over the batch.
Array odd_permutation(const Array& pivots) {
  const std::int64_t n = pivots.shape(-1);
  const Array swaps = sum(not_equal(pivots, arange(0, n, 1, DType::int64, pivots.device())), Axes(-1));
  return equal(remainder(swaps, 2), 1);
}

Array solve_impl(const char* fn, const Array& a, const Array& b, const Shape& batch, DType t) {
  const std::int64_t n = a.shape(-1), k = b.shape(-1);
  detail::LinalgCall call;
  call.op = detail::LinalgOp::solve;
  std::vector<std::int64_t> info;
  auto r = factor(fn, call, {contiguous(broadcast_to(a, join(batch, {n, n})), t), contiguous(b, t)},
                  {{t, join(batch, {n, k})}}, count(batch), info);
  check_info(fn, "the matrix is singular", info, batch);
  return r[0];
}

Array keep_matrix_dims(const Array& r, bool keepdims) {
  return keepdims ? expand_dims(expand_dims(r, -1), -1) : r;
}

}  // namespace

Array cholesky(const Array& x, bool upper) {
  require_square("cholesky", x);
  const DType t = compute_dtype("cholesky", x.dtype());
  const Shape batch = batch_of(x);
  const std::int64_t n = x.shape(-1);
  detail::LinalgCall call;
  call.op = detail::LinalgOp::cholesky;
  call.upper = upper;
  std::vector<std::int64_t> info;
  auto r = factor("cholesky", call, {contiguous(x, t)}, {{t, join(batch, {n, n})}}, count(batch), info);
  check_info("cholesky", "the matrix is not positive definite", info, batch);
  return r[0];
}

Array det(const Array& x) {
  const LU f = lu_factor("det", x);
  const Array p = prod(diagonal(f.lu), Axes(-1));
  return where(odd_permutation(f.pivots), negative(p), p);
}

SlogdetResult slogdet(const Array& x) {
  const LU f = lu_factor("slogdet", x);
  const Array d = diagonal(f.lu);
  const Array mag = abs(d);
  // Each diagonal element's sign (d / |d|, 0 for 0); a zero makes the product 0 and log|det| -inf.
  const Array unit = is_complex(d.dtype()) ? where(equal(mag, 0), 0, divide(d, mag)) : sign(d);
  const Array s = prod(unit, Axes(-1));
  return {where(odd_permutation(f.pivots), negative(s), s), sum(log(mag), Axes(-1))};
}

Array diagonal(const Array& x_, std::int64_t offset) {
  require_matrices("diagonal", x_);
  Array x = x_;
  x.eval();
  const ImplPtr& xi = impl_of(x);
  const int nd = x.ndim();
  const std::int64_t m = xi->shape[nd - 2], n = xi->shape[nd - 1];
  const std::int64_t rows = offset >= 0 ? m : m + offset, cols = offset >= 0 ? n - offset : n;
  const std::int64_t k = std::max<std::int64_t>(0, std::min(rows, cols));
  Shape shape(xi->shape.begin(), xi->shape.end() - 2), strides(xi->strides.begin(), xi->strides.end() - 2);
  shape.push_back(k);
  strides.push_back(xi->strides[nd - 2] + xi->strides[nd - 1]);
  std::int64_t first = xi->offset;
  if (k > 0) first += offset >= 0 ? offset * xi->strides[nd - 1] : -offset * xi->strides[nd - 2];
  return Array(detail::make_view(xi, shape, strides, first)).copy();
}

EighResult eigh(const Array& x) {
  require_square("eigh", x);
  const DType t = compute_dtype("eigh", x.dtype());
  const Shape batch = batch_of(x);
  const std::int64_t n = x.shape(-1);
  detail::LinalgCall call;
  call.op = detail::LinalgOp::eigh;
  call.vectors = true;
  std::vector<std::int64_t> info;
  auto r = factor("eigh", call, {contiguous(x, t)}, {{real_dtype(t), join(batch, {n})}, {t, join(batch, {n, n})}},
                  count(batch), info);
  check_info("eigh", "the eigenvalues did not converge", info, batch);
  return {r[0], r[1]};
}

Array eigvalsh(const Array& x) {
  require_square("eigvalsh", x);
  const DType t = compute_dtype("eigvalsh", x.dtype());
  const Shape batch = batch_of(x);
  const std::int64_t n = x.shape(-1);
  detail::LinalgCall call;
  call.op = detail::LinalgOp::eigh;
  call.vectors = false;
  std::vector<std::int64_t> info;
  auto r = factor("eigvalsh", call, {contiguous(x, t)}, {{real_dtype(t), join(batch, {n})}}, count(batch), info);
  check_info("eigvalsh", "the eigenvalues did not converge", info, batch);
  return r[0];
}

Array inv(const Array& x) {
  require_square("inv", x);
  const DType t = compute_dtype("inv", x.dtype());
  const Shape batch = batch_of(x);
  const std::int64_t n = x.shape(-1);
  return solve_impl("inv", x, identities(batch, n, n, t, x.device()), batch, t);
}

Array matrix_norm(const Array& x_, bool keepdims, std::string_view ord) {
  require_matrices("matrix_norm", x_);
  if (ord == "fro") {
    const Array x = x_.astype(norm_dtype(x_.dtype()));
    return sqrt(sum(square(abs(x)), Axes({-2, -1}), keepdims));
  }
  if (ord == "nuc") return keep_matrix_dims(sum(svdvals(x_), Axes(-1)), keepdims);
  throw ValueError("matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf; got '" + std::string(ord) + "'");
}

Array matrix_norm(const Array& x_, double ord, bool keepdims) {
  require_matrices("matrix_norm", x_);
  const double inf = std::numeric_limits<double>::infinity();
  // The largest of no values is 0 (norms are not negative: NumPy's answer); the smallest of none
  // stays the reduction's error.
  const auto largest = [](const Array& v, const Axes& along, bool keep) {
    return v.size() == 0 ? sum(v, along, keep) : max(v, along, keep);
  };
  if (ord == 2 || ord == -2) {
    const Array s = svdvals(x_);
    return keep_matrix_dims(ord == 2 ? largest(s, Axes(-1), false) : min(s, Axes(-1)), keepdims);
  }
  if (ord == 1 || ord == -1 || ord == inf || ord == -inf) {
    const Array a = abs(x_.astype(norm_dtype(x_.dtype())));
    // 1: the largest column sum of |x|; inf: the largest row sum (-1, -inf: the smallest).
    const Array sums = sum(a, Axes(std::abs(ord) == 1 ? -2 : -1), keepdims);
    const Axes along(std::abs(ord) == 1 ? -1 : -2 + (keepdims ? 0 : 1));
    return ord > 0 ? largest(sums, along, keepdims) : min(sums, along, keepdims);
  }
  throw ValueError("matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf; got " + std::to_string(ord));
}

Array matrix_power(const Array& x, std::int64_t n) {
  require_square("matrix_power", x);
  if (n == 0) return identities(batch_of(x), x.shape(-1), x.shape(-1), x.dtype(), x.device());
  Array base = n < 0 ? inv(x) : x;
  // |n| without overflow for INT64_MIN.
  auto e = n < 0 ? static_cast<std::uint64_t>(-(n + 1)) + 1 : static_cast<std::uint64_t>(n);
  Array result;
  while (true) {
    if ((e & 1) != 0) result = result.valid() ? matmul(result, base) : base;
    e >>= 1;
    if (e == 0) break;
    base = matmul(base, base);
  }
  return result.impl() == x.impl() ? x.copy() : result;
}

Array matrix_rank(const Array& x, std::optional<double> rtol) {
  require_matrices("matrix_rank", x);
  const Array s = svdvals(x);
  if (s.shape(-1) == 0) return zeros(batch_of(x), DType::int64, x.device());
  const double tol = rtol ? *rtol : static_cast<double>(std::max(x.shape(-1), x.shape(-2))) * eps_of(s.dtype());
  const Array cutoff = multiply(max(s, Axes(-1), true), tol);
  return sum(greater(s, cutoff), Axes(-1));
}

namespace {
// The pseudo-inverse from x's SVD: V diag(1 / s) U^H over the singular values above the cutoff.
Array pinv_of(const SVDResult& f, const Array& cutoff, DType t) {
  const Array big = greater(f.S, cutoff);
  const Array s_inv = where(big, divide(1, where(big, f.S, 1)), 0);
  const Array u = is_complex(t) ? conj(f.U) : f.U, vh = is_complex(t) ? conj(f.Vh) : f.Vh;
  return matmul(multiply(matrix_transpose(vh), expand_dims(s_inv, -2)), matrix_transpose(u));
}

// A tolerance per matrix: real, and its shape broadcast with x's batch (the result's batch).
Shape tolerance_batch(const char* fn, const Array& x, const Array& rtol) {
  if (rtol.dtype() == DType::bool_ || is_complex(rtol.dtype()))
    throw TypeError(std::string(fn) + ": rtol must be a real number or an array of real numbers; its dtype is " +
                    std::string(name(rtol.dtype())));
  const Shape batch = batch_of(x);
  try {
    return broadcast_shapes(batch, Shape(rtol.shape().begin(), rtol.shape().end()));
  } catch (const ValueError&) {
    throw ValueError(std::string(fn) + ": rtol of shape " + detail::shape_str(rtol.shape()) +
                     " does not broadcast with the batch shape " + detail::shape_str(batch) + " of x");
  }
}
}  // namespace

Array matrix_rank(const Array& x, const Array& rtol) {
  require_matrices("matrix_rank", x);
  const Shape batch = tolerance_batch("matrix_rank", x, rtol);
  const Array s = svdvals(x);
  if (s.shape(-1) == 0) return zeros(batch, DType::int64, x.device());
  const Array cutoff = multiply(max(s, Axes(-1), true), expand_dims(rtol, -1));
  return sum(greater(s, cutoff), Axes(-1));
}

Array outer(const Array& x1, const Array& x2) {
  if (x1.ndim() != 1 || x2.ndim() != 1) {
    throw ValueError("outer: both inputs must be 1-D; their shapes are " + detail::shape_str(x1.shape()) + " and " +
                     detail::shape_str(x2.shape()));
  }
  return multiply(reshape(x1, {x1.shape(0), 1}), reshape(x2, {1, x2.shape(0)}));
}

Array pinv(const Array& x, std::optional<double> rtol) {
  require_matrices("pinv", x);
  const DType t = compute_dtype("pinv", x.dtype());
  const std::int64_t m = x.shape(-2), n = x.shape(-1);
  if (x.size() == 0) return zeros(join(batch_of(x), {n, m}), t, x.device());
  const SVDResult f = svd(x, false);
  const double tol = rtol ? *rtol : static_cast<double>(std::max(m, n)) * eps_of(real_dtype(t));
  return pinv_of(f, multiply(max(f.S, Axes(-1), true), tol), t);
}

Array pinv(const Array& x, const Array& rtol) {
  require_matrices("pinv", x);
  const DType t = compute_dtype("pinv", x.dtype());
  const Shape batch = tolerance_batch("pinv", x, rtol);
  const std::int64_t m = x.shape(-2), n = x.shape(-1);
  if (detail::checked_size(batch) == 0 || x.size() == 0) return zeros(join(batch, {n, m}), t, x.device());
  const SVDResult f = svd(x, false);
  return pinv_of(f, multiply(max(f.S, Axes(-1), true), expand_dims(rtol, -1)), t);
}

QRResult qr(const Array& x, std::string_view mode) {
  if (mode != "reduced" && mode != "complete")
    throw ValueError("qr: mode must be 'reduced' or 'complete'; got '" + std::string(mode) + "'");
  require_matrices("qr", x);
  const DType t = compute_dtype("qr", x.dtype());
  const Shape batch = batch_of(x);
  const std::int64_t m = x.shape(-2), n = x.shape(-1), k = std::min(m, n);
  const bool complete = mode == "complete";
  const std::int64_t qcols = complete ? m : k, rrows = complete ? m : k;
  if (x.size() == 0) {  // Q is the first columns of the identity, R zeros
    return {identities(batch, m, qcols, t, x.device()), zeros(join(batch, {rrows, n}), t, x.device())};
  }
  detail::LinalgCall call;
  call.op = detail::LinalgOp::qr;
  call.complete = complete;
  std::vector<std::int64_t> info;
  auto r = factor("qr", call, {contiguous(x, t)}, {{t, join(batch, {m, qcols})}, {t, join(batch, {rrows, n})}},
                  count(batch), info);
  check_info("qr", "the factorization failed", info, batch);
  return {r[0], r[1]};
}

Array solve(const Array& x1, const Array& x2) {
  if (!(x1.device() == x2.device())) throw DeviceMismatch("solve", x1.device().str(), x2.device().str());
  require_square("solve", x1);
  if (x2.ndim() == 0) throw ValueError("solve: x2 must have at least 1 dimension");
  const DType t = compute_dtype("solve", xp::result_type(x1.dtype(), x2.dtype()));
  const std::int64_t n = x1.shape(-1);
  const bool vector = x2.ndim() == 1;
  const std::int64_t rows = vector ? x2.shape(0) : x2.shape(-2);
  if (rows != n) {
    throw ValueError("solve: x1 " + detail::shape_str(x1.shape()) + " and x2 " + detail::shape_str(x2.shape()) +
                     " do not match: x2 needs " + std::to_string(n) + (vector ? " elements" : " rows"));
  }
  Shape batch = batch_of(x1);
  if (!vector) batch = broadcast_shapes(batch, batch_of(x2));
  const std::int64_t k = vector ? 1 : x2.shape(-1);
  const Array b = broadcast_to(vector ? reshape(x2, {n, 1}) : x2, join(batch, {n, k}));
  const Array x = solve_impl("solve", x1, b, batch, t);
  return vector ? squeeze(x, -1) : x;
}

SVDResult svd(const Array& x, bool full_matrices) {
  require_matrices("svd", x);
  const DType t = compute_dtype("svd", x.dtype());
  const Shape batch = batch_of(x);
  const std::int64_t m = x.shape(-2), n = x.shape(-1), k = std::min(m, n);
  const std::int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  if (x.size() == 0) {
    return {identities(batch, m, ucols, t, x.device()), zeros(join(batch, {k}), real_dtype(t), x.device()),
            identities(batch, vrows, n, t, x.device())};
  }
  refuse_nan("svd", x, batch);
  detail::LinalgCall call;
  call.op = detail::LinalgOp::svd;
  call.complete = full_matrices;
  call.vectors = true;
  std::vector<std::int64_t> info;
  auto r = factor("svd", call, {contiguous(x, t)},
                  {{real_dtype(t), join(batch, {k})}, {t, join(batch, {m, ucols})}, {t, join(batch, {vrows, n})}},
                  count(batch), info);
  check_info("svd", "the SVD did not converge", info, batch);
  return {r[1], r[0], r[2]};
}

Array svdvals(const Array& x) {
  require_matrices("svdvals", x);
  const DType t = compute_dtype("svdvals", x.dtype());
  const Shape batch = batch_of(x);
  const std::int64_t k = std::min(x.shape(-2), x.shape(-1));
  if (x.size() == 0) return zeros(join(batch, {k}), real_dtype(t), x.device());
  refuse_nan("svdvals", x, batch);
  detail::LinalgCall call;
  call.op = detail::LinalgOp::svd;
  call.vectors = false;
  std::vector<std::int64_t> info;
  auto r = factor("svdvals", call, {contiguous(x, t)}, {{real_dtype(t), join(batch, {k})}}, count(batch), info);
  check_info("svdvals", "the SVD did not converge", info, batch);
  return r[0];
}

Array trace(const Array& x, std::int64_t offset, std::optional<DType> dtype) {
  require_matrices("trace", x);
  return sum(diagonal(x, offset), Axes(-1), false, dtype);
}

Array cross(const Array& x1, const Array& x2, int axis) {
  if (!(x1.device() == x2.device())) throw DeviceMismatch("cross", x1.device().str(), x2.device().str());
  if (x1.ndim() == 0 || x2.ndim() == 0) throw ValueError("cross: the inputs must have at least 1 dimension");
  const Shape shape =
      broadcast_shapes(Shape(x1.shape().begin(), x1.shape().end()), Shape(x2.shape().begin(), x2.shape().end()));
  const int nd = static_cast<int>(shape.size());
  const int ax = detail::normalize_axis(axis, nd, "cross");
  // The vectors' axis is not broadcast (the Array API): 3 elements in each input.
  for (const Array* x : {&x1, &x2}) {
    const int j = ax - (nd - x->ndim());
    if (j < 0 || x->shape(j) != 3) {
      throw ValueError("cross: axis " + std::to_string(axis) +
                       " must have 3 elements in both inputs; their shapes are " + detail::shape_str(x1.shape()) +
                       " and " + detail::shape_str(x2.shape()));
    }
  }
  const Array a = broadcast_to(x1, shape), b = broadcast_to(x2, shape);
  const auto part = [&](const Array& v, std::int64_t i) {
    std::vector<Index> idx(static_cast<std::size_t>(nd), Index(Slice()));
    idx[static_cast<std::size_t>(ax)] = Index(i);
    return v.slice(std::span<const Index>(idx));
  };
  const Array a0 = part(a, 0), a1 = part(a, 1), a2 = part(a, 2), b0 = part(b, 0), b1 = part(b, 1), b2 = part(b, 2);
  return stack({subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0), multiply(a0, b2)),
                subtract(multiply(a0, b1), multiply(a1, b0))},
               ax);
}

Array vector_norm(const Array& x_, const Axes& axes, bool keepdims, double ord) {
  if (std::isnan(ord)) throw ValueError("vector_norm: ord must be a number, not NaN");
  const Array x = x_.astype(norm_dtype(x_.dtype()));
  const Array a = abs(x);
  const double inf = std::numeric_limits<double>::infinity();
  if (ord == inf) return a.size() == 0 ? sum(a, axes, keepdims) : max(a, axes, keepdims);  // none: 0, as NumPy
  if (ord == -inf) return min(a, axes, keepdims);
  if (ord == 0) return sum(not_equal(a, 0), axes, keepdims).astype(a.dtype());
  if (ord == 1) return sum(a, axes, keepdims);
  if (ord == 2) return sqrt(sum(square(a), axes, keepdims));
  return pow(sum(pow(a, ord), axes, keepdims), 1.0 / ord);
}

}  // namespace xp::linalg
