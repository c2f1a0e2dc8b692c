// Reductions, scans and linear algebra: dtype and shape rules here, the loops in the backend.

#include <algorithm>
#include <cmath>

#include "array/array_impl.hpp"

namespace xp {

using detail::impl_of;
using detail::ImplPtr;
using detail::ReduceOp;

namespace {

std::vector<int> normalize_axes(const Axes& axes, int nd, const char* what) {
  std::vector<int> out;
  if (axes.all()) {
    for (int i = 0; i < nd; ++i) out.push_back(i);
    return out;
  }
  for (int a : axes.list()) {
    const int ax = detail::normalize_axis(a, nd, what);
    if (std::find(out.begin(), out.end(), ax) != out.end()) {
      throw ValueError(std::string(what) + ": duplicate value in 'axis'");
    }
    out.push_back(ax);
  }
  std::sort(out.begin(), out.end());
  return out;
}

DType sum_dtype(DType t) {
  return detail::reduce_result_dtype(ReduceOp::sum, t);
}

bool is_complex(DType t) {
  return kind(t) == DTypeKind::complex_floating;
}

using detail::as_parts;
using detail::from_parts;

Array run_reduce(ReduceOp op, const Array& a_, const Axes& axes_, bool keepdims, DType out_dtype, const char* what,
                 double correction = 0, std::optional<DType> input_dtype = std::nullopt);

// Complex operands of a reduction (docs/semantics.md, "Complex numbers"): sum and mean reduce the
// real and imaginary parts as two real arrays (the same summation as a real array's, the same on
// every backend); prod multiplies pairs of halves, log2(n) complex multiplications deep; any and
// all test z != 0. The orderings (min, max, argmin, argmax) and var/std are a TypeError.
Array complex_reduce(ReduceOp op, const Array& a, const Axes& axes_, bool keepdims, const char* what) {
  const int nd = a.ndim();
  const std::vector<int> axes = normalize_axes(axes_, nd, what);
  Shape kept(a.shape().begin(), a.shape().end());
  for (int ax : axes) kept[static_cast<std::size_t>(ax)] = 1;
  Array r;
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
      r = from_parts(run_reduce(op, as_parts(a), Axes(axes), false, real_dtype(a.dtype()), what));
      break;
    case ReduceOp::prod: {
      // The reduced axes last, flattened into one: (rest, n).
      std::vector<int> perm;
      for (int i = 0; i < nd; ++i)
        if (std::find(axes.begin(), axes.end(), i) == axes.end()) perm.push_back(i);
      Shape rest;
      for (int i : perm) rest.push_back(a.shape()[static_cast<std::size_t>(i)]);
      std::int64_t n = 1;
      for (int ax : axes) n *= a.shape()[static_cast<std::size_t>(ax)];
      perm.insert(perm.end(), axes.begin(), axes.end());
      std::int64_t outer = 1;
      for (auto d : rest) outer *= d;
      Array x = reshape(permute_dims(a, perm), {outer, n});
      if (n == 0) {
        x = ones({outer, 1}, a.dtype(), a.device());
        n = 1;
      }
      while (n > 1) {
        const std::int64_t half = n / 2;
        Array p = multiply(x.slice({Slice(), Slice(0, half)}), x.slice({Slice(), Slice(half, 2 * half)}));
        x = n % 2 == 0 ? p : concat({p, x.slice({Slice(), Slice(n - 1, n)})}, 1);
        x.eval();
        n = (n + 1) / 2;
      }
      r = reshape(x, rest);
      break;
    }
    case ReduceOp::any:
    case ReduceOp::all:
      return run_reduce(op, not_equal(a, 0), axes_, keepdims, DType::bool_, what);
    default:
      throw TypeError(std::string(what) + " is not supported for " + std::string(name(a.dtype())) +
                      " (complex numbers have no order)");
  }
  return keepdims ? reshape(r, kept) : r;
}

Array run_reduce(ReduceOp op, const Array& a_, const Axes& axes_, bool keepdims, DType out_dtype, const char* what,
                 double correction, std::optional<DType> input_dtype) {
  Array a = input_dtype && *input_dtype != a_.dtype() ? a_.astype(*input_dtype) : a_;
  if (is_complex(a.dtype())) return complex_reduce(op, a, axes_, keepdims, what);
  const ImplPtr& x = impl_of(a);
  const int nd = static_cast<int>(x->shape.size());
  const std::vector<int> axes = normalize_axes(axes_, nd, what);
  Shape shape, kept;
  for (int i = 0; i < nd; ++i) {
    const bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!reduced) shape.push_back(x->shape[i]);
    kept.push_back(reduced ? 1 : x->shape[i]);
  }
  ImplPtr out = detail::new_array(out_dtype, shape, x->device);
  // A lazy input is reduced in the same pass that computes it where the backend can (the CUDA
  // backend: one kernel, the value never stored); otherwise evaluated first.
  if (!detail::reduce_lazy(*x, op, axes, detail::view_of(*out), correction)) {
    detail::materialize(*x);
    x->backend->reduce(op, detail::view_of(*x), axes, detail::view_of(*out), correction);
  }
  Array r(out);
  return keepdims ? reshape(r, kept) : r;
}

DType mean_dtype(DType t) {
  return detail::reduce_result_dtype(ReduceOp::mean, t);
}

}  // namespace

// With a dtype, NumPy accumulates in it: the input is converted first; an integer total computed in
// 64 bits and then narrowed wraps exactly as accumulating in the narrow type would.
Array sum_like(ReduceOp op, const char* what, const Array& a, const Axes& axes, bool keepdims,
               std::optional<DType> dtype) {
  const DType in = dtype ? *dtype : a.dtype();
  Array r = run_reduce(op, a, axes, keepdims, sum_dtype(in), what, 0, dtype);
  return dtype && r.dtype() != *dtype ? r.astype(*dtype) : r;
}

Array sum(const Array& a, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  return sum_like(ReduceOp::sum, "sum", a, axes, keepdims, dtype);
}
Array prod(const Array& a, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  return sum_like(ReduceOp::prod, "prod", a, axes, keepdims, dtype);
}
Array mean(const Array& a, const Axes& axes, bool keepdims) {
  return run_reduce(ReduceOp::mean, a, axes, keepdims, mean_dtype(a.dtype()), "mean");
}
Array var(const Array& a, const Axes& axes, double correction, bool keepdims) {
  return run_reduce(ReduceOp::var, a, axes, keepdims, mean_dtype(a.dtype()), "var", correction);
}
Array std(const Array& a, const Axes& axes, double correction, bool keepdims) {
  return run_reduce(ReduceOp::std, a, axes, keepdims, mean_dtype(a.dtype()), "std", correction);
}
Array min(const Array& a, const Axes& axes, bool keepdims) {
  return run_reduce(ReduceOp::min, a, axes, keepdims, a.dtype(), "min");
}
Array max(const Array& a, const Axes& axes, bool keepdims) {
  return run_reduce(ReduceOp::max, a, axes, keepdims, a.dtype(), "max");
}
Array any(const Array& a, const Axes& axes, bool keepdims) {
  return run_reduce(ReduceOp::any, a, axes, keepdims, DType::bool_, "any");
}
Array all(const Array& a, const Axes& axes, bool keepdims) {
  return run_reduce(ReduceOp::all, a, axes, keepdims, DType::bool_, "all");
}
Array argmin(const Array& a, std::optional<int> axis, bool keepdims) {
  return run_reduce(ReduceOp::argmin, a, axis ? Axes(*axis) : Axes(), keepdims, DType::int64, "argmin");
}
Array argmax(const Array& a, std::optional<int> axis, bool keepdims) {
  return run_reduce(ReduceOp::argmax, a, axis ? Axes(*axis) : Axes(), keepdims, DType::int64, "argmax");
}

namespace {
// cumulative_sum and cumulative_prod: one backend scan, `op` sum or prod.
Array cumulative(detail::ReduceOp op, const char* fn, const Array& a_, std::optional<int> axis,
                 std::optional<DType> dtype, bool include_initial) {
  // A 0-d array is scanned as one element, as NumPy 2's cumulative_sum does (a 1-d result).
  if (a_.ndim() == 0) return cumulative(op, fn, reshape(a_, {1}), axis, dtype, include_initial);
  const int nd = a_.ndim();
  if (!axis && nd > 1) throw ValueError(std::string(fn) + ": axis is required for arrays of more than one dimension");
  const int ax = detail::normalize_axis(axis ? *axis : 0, nd, fn);
  Array a = dtype && *dtype != a_.dtype() ? a_.astype(*dtype) : a_;
  // An integer dtype is scanned into directly (the backends wrap in it), never through a 64-bit
  // temporary: 1 byte an element for int8, not 8.
  const DTypeKind k = kind(a.dtype());
  const bool integer = k == DTypeKind::signed_integer || k == DTypeKind::unsigned_integer;
  const DType t = dtype && integer ? *dtype : sum_dtype(a.dtype());
  if (is_complex(a.dtype())) {
    // A sum: the parts scanned as two real arrays. A product (which is not a product of the
    // parts): the doubling scan, log2(L) steps y[s:] = y[s:] * y[:L - s] of complex multiplication,
    // so each backend's elementwise multiply computes it (the same bits on every device). Its
    // products are grouped otherwise than NumPy's left-to-right loop: the results agree within
    // rounding, not bit for bit (docs/semantics.md).
    if (op == detail::ReduceOp::sum)
      return from_parts(cumulative(op, fn, as_parts(a), ax, std::nullopt, include_initial));
    const std::int64_t L = a.shape()[static_cast<std::size_t>(ax)];
    const auto part = [&](const Array& y, std::int64_t start, std::int64_t stop) {
      std::vector<Index> index(static_cast<std::size_t>(nd), Index(Slice()));
      index[static_cast<std::size_t>(ax)] = Index(Slice(start, stop));
      return y.slice(index);
    };
    Array y = a.copy();
    for (std::int64_t s = 1; s < L; s *= 2) y = concat({part(y, 0, s), multiply(part(y, s, L), part(y, 0, L - s))}, ax);
    if (include_initial) {
      Shape one(a.shape().begin(), a.shape().end());
      one[static_cast<std::size_t>(ax)] = 1;
      y = concat({ones(one, a.dtype(), a.device()), y}, ax);
    }
    y.eval();
    return y;
  }
  const ImplPtr& x = impl_of(a);
  detail::materialize(*x);
  Shape shape = x->shape;
  if (include_initial) shape[ax] += 1;
  ImplPtr out = detail::new_array(t, shape, x->device);
  x->backend->cumulative(op, detail::view_of(*x), ax, detail::view_of(*out), include_initial);
  return dtype && t != *dtype ? Array(out).astype(*dtype) : Array(out);
}
}  // namespace

Array cumulative_sum(const Array& a, std::optional<int> axis, std::optional<DType> dtype, bool include_initial) {
  return cumulative(detail::ReduceOp::sum, "cumulative_sum", a, axis, dtype, include_initial);
}
Array cumulative_prod(const Array& a, std::optional<int> axis, std::optional<DType> dtype, bool include_initial) {
  return cumulative(detail::ReduceOp::prod, "cumulative_prod", a, axis, dtype, include_initial);
}

std::string_view to_string(MatmulPrecision precision) noexcept {
  switch (precision) {
    case MatmulPrecision::float32:
      return "float32";
    case MatmulPrecision::tf32:
      return "tf32";
  }
  return "unknown";
}

Array matmul(const Array& a, const Array& b) {
  return matmul(a, b, MatmulPrecision::float32);
}

// Eager, as every non-elementwise operation: lazy operands are evaluated here (broadcast_to), and the
// precision goes to the backend with the call; no cache keys on it.
Array matmul(const Array& a_, const Array& b_, MatmulPrecision precision) {
  if (precision != MatmulPrecision::float32 && precision != MatmulPrecision::tf32)
    throw ValueError("matmul: unknown MatmulPrecision " + std::to_string(static_cast<int>(precision)));
  const ImplPtr& ai = impl_of(a_);
  const ImplPtr& bi = impl_of(b_);
  if (!(ai->device == bi->device)) throw DeviceMismatch("matmul", ai->device.str(), bi->device.str());
  if (ai->shape.empty() || bi->shape.empty()) throw ValueError("matmul: operands must not be 0-d (use multiply)");
  const bool a_vec = ai->shape.size() == 1, b_vec = bi->shape.size() == 1;
  Array a = a_vec ? expand_dims(a_, 0) : a_;
  Array b = b_vec ? expand_dims(b_, 1) : b_;
  const DType t = result_type(a.dtype(), b.dtype());
  const auto as = a.shape(), bs = b.shape();
  const std::int64_t m = as[as.size() - 2], k = as[as.size() - 1], k2 = bs[bs.size() - 2], n = bs[bs.size() - 1];
  if (k != k2) {
    throw ValueError("matmul: mismatch in the contracted dimension: " + detail::shape_str(a_.shape()) + " @ " +
                     detail::shape_str(b_.shape()) + " (size " + std::to_string(k) + " is different from " +
                     std::to_string(k2) + ")");
  }
  Shape batch = detail::broadcast_shape(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2));
  Shape ash = batch, bsh = batch, osh = batch;
  ash.insert(ash.end(), {m, k});
  bsh.insert(bsh.end(), {k, n});
  osh.insert(osh.end(), {m, n});
  if (a.dtype() != t) a = a.astype(t);
  if (b.dtype() != t) b = b.astype(t);
  Array ab = broadcast_to(a, ash), bb = broadcast_to(b, bsh);
  ImplPtr out = detail::new_array(t, osh, ai->device);
  ai->backend->matmul(detail::view_of(*ab.impl()), detail::view_of(*bb.impl()), detail::view_of(*out), precision);
  Array r(out);
  if (a_vec && b_vec) return squeeze(r, {-2, -1});
  if (a_vec) return squeeze(r, -2);
  if (b_vec) return squeeze(r, -1);
  return r;
}

Array vecdot(const Array& a_, const Array& b_, int axis) {
  const ImplPtr& ai = impl_of(a_);
  const ImplPtr& bi = impl_of(b_);
  if (!(ai->device == bi->device)) throw DeviceMismatch("vecdot", ai->device.str(), bi->device.str());
  const Shape shape = detail::broadcast_shape(ai->shape, bi->shape);
  const int nd = static_cast<int>(shape.size());
  if (nd == 0) throw ValueError("vecdot: operands must have at least one dimension");
  const int ax = detail::normalize_axis(axis, nd, "vecdot");
  // The contracted axis is not broadcast (the Array API; NumPy's core dimension): equal sizes.
  const auto size_along = [&](const Shape& s) {
    const int j = ax - (nd - static_cast<int>(s.size()));
    return j < 0 ? std::int64_t{1} : s[static_cast<std::size_t>(j)];
  };
  if (size_along(ai->shape) != size_along(bi->shape)) {
    throw ValueError("vecdot: the contracted axis " + std::to_string(axis) + " has " +
                     std::to_string(size_along(ai->shape)) + " elements in x1 (shape " + detail::shape_str(ai->shape) +
                     ") and " + std::to_string(size_along(bi->shape)) + " in x2 (shape " +
                     detail::shape_str(bi->shape) + ")");
  }
  const DType t = result_type(a_.dtype(), b_.dtype());
  Array a = broadcast_to(a_.dtype() == t ? a_ : a_.astype(t), shape);
  Array b = broadcast_to(b_.dtype() == t ? b_ : b_.astype(t), shape);
  std::vector<int> perm;
  for (int i = 0; i < nd; ++i) {
    if (i != ax) perm.push_back(i);
  }
  perm.push_back(ax);
  a = permute_dims(a, perm);
  b = permute_dims(b, perm);
  Shape osh(a.shape().begin(), a.shape().end() - 1);
  ImplPtr out = detail::new_array(t, osh, ai->device);
  ai->backend->vecdot(detail::view_of(*a.impl()), detail::view_of(*b.impl()), detail::view_of(*out));
  return Array(out);
}

void eval(std::initializer_list<Array> arrays) {
  std::vector<detail::ArrayImpl*> impls;
  for (const Array& a : arrays) impls.push_back(impl_of(a).get());
  detail::materialize_together(impls);
}

}  // namespace xp
