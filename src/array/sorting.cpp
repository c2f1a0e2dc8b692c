// Sorting, searching and sets (xp/sorting.hpp), over the backends' sort, scatter, flatnonzero and
// searchsorted (backend/backend.hpp); the rest is composed from xp's own operations, so that both
// devices give the same results.
#include "xp/sorting.hpp"

#include <numeric>
#include <string>

#include "array/array_impl.hpp"
#include "xp/error.hpp"

namespace xp {

using detail::ImplPtr;

namespace {

// x evaluated and C-contiguous: x itself when it already is, else a copy.
ImplPtr contiguous(const Array& x) {
  const ImplPtr& a = detail::impl_of(x);
  detail::materialize(*a);
  if (detail::view_of(*a).is_c_contiguous()) return a;
  return x.copy().impl();
}

detail::View view_or_none(const ImplPtr& a) {
  return a ? detail::view_of(*a) : detail::View{};
}

struct Sorted {
  Array values, indices;  // each empty unless asked for
};

// x sorted along axis: the values and/or the positions, C-contiguous.
Sorted sort_along(const Array& x, int axis, bool descending, bool values, bool indices, const char* what) {
  if (kind(x.dtype()) == DTypeKind::complex_floating)
    throw TypeError(std::string(what) + " is not supported for " + std::string(name(x.dtype())) +
                    " (complex numbers have no order)");
  const int nd = x.ndim();
  if (nd == 0)
    throw ValueError(std::string(what) + ": axis " + std::to_string(axis) +
                     " is out of bounds for array of dimension 0");
  const int ax = detail::normalize_axis(axis, nd, what);
  std::vector<int> perm;
  Array moved = x;
  if (ax != nd - 1) {
    for (int d = 0; d < nd; ++d)
      if (d != ax) perm.push_back(d);
    perm.push_back(ax);
    moved = permute_dims(x, perm);
  }
  const ImplPtr k = contiguous(moved);
  ImplPtr v = values ? detail::new_array(k->dtype, k->shape, k->device) : nullptr;
  ImplPtr i = indices ? detail::new_array(DType::int64, k->shape, k->device) : nullptr;
  if (k->size() > 0) k->backend->sort(detail::view_of(*k), view_or_none(v), view_or_none(i), descending);
  Sorted out;
  auto back = [&](const ImplPtr& r) {
    if (!r) return Array();
    if (perm.empty()) return Array(r);
    std::vector<int> inverse(perm.size());
    for (std::size_t d = 0; d < perm.size(); ++d) inverse[static_cast<std::size_t>(perm[d])] = static_cast<int>(d);
    return permute_dims(Array(r), inverse).copy();
  };
  out.values = back(v);
  out.indices = back(i);
  return out;
}

Array as_mask(const Array& x) {
  return x.dtype() == DType::bool_ ? x : not_equal(x, 0);
}

// dst[..., indices[j], ...] = values[..., j, ...] along axis (Backend::scatter): the indices int64,
// checked and non-negative; values already of dst's dtype and of the right shape.
void scatter_into(const ImplPtr& dst, const Array& indices, int axis, const Array& values, bool unique) {
  if (kind(dst->dtype) == DTypeKind::complex_floating) {  // through the parts: a trailing axis of 2 on both
    const Array d = detail::as_parts(Array(dst));
    return scatter_into(d.impl(), indices, axis, detail::as_parts(values), unique);
  }
  if (dst->storage->read_only) throw ValueError("the array is read-only (it wraps memory given as read-only)");
  const ImplPtr ix = contiguous(indices);
  const ImplPtr& v = detail::impl_of(values);
  detail::materialize(*v);
  detail::prepare_write(*dst->storage);
  if (v->size() == 0) return;
  dst->backend->scatter(detail::view_of(*dst), detail::view_of(*ix), axis, detail::view_of(*v), unique);
}

}  // namespace

namespace detail {

Array flatnonzero(const Array& x) {
  const ImplPtr mask = contiguous(reshape(as_mask(x), {-1}));
  const std::int64_t count = mask->size() == 0 ? 0 : mask->backend->count_true(view_of(*mask));
  ImplPtr out = new_array(DType::int64, Shape{count}, mask->device);
  if (count > 0) mask->backend->flatnonzero(view_of(*mask), View{}, view_of(*out));
  return Array(out);
}

Array masked(const Array& x, const Array& m) {
  if (kind(x.dtype()) == DTypeKind::complex_floating) {
    const Array parts = as_parts(x);
    const Shape shape(x.shape().begin(), x.shape().end()), pshape(parts.shape().begin(), parts.shape().end());
    const Array m2 = broadcast_to(expand_dims(reshape(m, shape), -1), pshape);
    return from_parts(reshape(masked(parts, m2), {-1, 2}));
  }
  const ImplPtr mask = contiguous(reshape(m, {-1}));
  const ImplPtr values = contiguous(reshape(x, {-1}));
  const std::int64_t count = mask->size() == 0 ? 0 : mask->backend->count_true(view_of(*mask));
  ImplPtr out = new_array(values->dtype, Shape{count}, mask->device);
  if (count > 0) mask->backend->flatnonzero(view_of(*mask), view_of(*values), view_of(*out));
  return Array(out);
}

}  // namespace detail

Array sort(const Array& x, int axis, bool descending, bool /*stable*/) {
  return sort_along(x, axis, descending, true, false, "sort").values;
}

Array argsort(const Array& x, int axis, bool descending, bool /*stable*/) {
  return sort_along(x, axis, descending, false, true, "argsort").indices;
}

std::vector<Array> nonzero(const Array& x) {
  const int nd = x.ndim();
  if (nd == 0)
    throw ValueError(
        "nonzero: a 0-d array has no dimensions to index; use nonzero(reshape(x, {1})) (NumPy 2 refuses "
        "it too)");
  const Array flat = detail::flatnonzero(x);
  if (nd == 1) return {flat};
  std::vector<Array> out;
  std::int64_t stride = 1;
  std::vector<std::int64_t> strides(static_cast<std::size_t>(nd));
  for (int d = nd - 1; d >= 0; --d) {
    strides[static_cast<std::size_t>(d)] = stride;
    stride *= std::max<std::int64_t>(x.shape(d), 1);
  }
  for (int d = 0; d < nd; ++d) {
    Array c = floor_divide(flat, strides[static_cast<std::size_t>(d)]);
    if (d > 0) c = remainder(c, x.shape(d));
    out.push_back(c.eval());
  }
  return out;
}

std::vector<Array> where(const Array& condition) {
  return nonzero(condition);
}

Array count_nonzero(const Array& x, const Axes& axes, bool keepdims) {
  return sum(as_mask(x), axes, keepdims, DType::int64);
}

Array searchsorted(const Array& x1, const Operand& x2, Side side, const std::optional<Array>& sorter) {
  if (kind(x1.dtype()) == DTypeKind::complex_floating)
    throw TypeError("searchsorted is not supported for " + std::string(name(x1.dtype())) +
                    " (complex numbers have no order)");
  if (x1.ndim() != 1)
    throw ValueError("searchsorted: x1 must be 1-D, got an array of " + std::to_string(x1.ndim()) + " dimensions");
  Array sorted = x1;
  if (sorter) {
    const DTypeKind k = kind(sorter->dtype());
    if (k != DTypeKind::signed_integer && k != DTypeKind::unsigned_integer)
      throw TypeError("searchsorted: sorter must hold integers, got " + std::string(name(sorter->dtype())));
    if (sorter->ndim() != 1 || sorter->shape(0) != x1.shape(0))
      throw ValueError("searchsorted: sorter must be 1-D with x1's length " + std::to_string(x1.shape(0)) +
                       ", got shape " + detail::shape_str(Shape(sorter->shape().begin(), sorter->shape().end())));
    sorted = detail::take_unchecked(x1, detail::checked_indices(*sorter, x1.shape(0), 0, "searchsorted: sorter: "), 0);
  }
  const DType t =
      x2.is_array() ? result_type(x1.dtype(), x2.array().dtype()) : result_type(x1.dtype(), x2.scalar().kind());
  if (kind(t) == DTypeKind::complex_floating)  // complex values against real x1 (they were cast, wrongly)
    throw TypeError("searchsorted: complex values are not supported (complex numbers have no order)");
  if (!x2.is_array() && x2.scalar().kind() == ScalarKind::integer &&
      (kind(t) == DTypeKind::signed_integer || kind(t) == DTypeKind::unsigned_integer)) {
    // An integer beyond x1's dtype is below or above every element, as NumPy compares it exactly
    // (searchsorted(uint8_array, -1) is 0), instead of a value that does not fit.
    const Scalar& v = x2.scalar();
    const bool fits = v.is_large_unsigned() ? value_fits(t, v.as_uint()) : value_fits(t, v.as_int());
    if (!fits) {
      const bool below = !v.is_large_unsigned() && v.as_int() < 0;
      return full({}, below ? std::int64_t{0} : x1.shape(0), DType::int64, x1.device());
    }
  }
  Array q = x2.is_array() ? x2.array() : full({}, x2.scalar(), t, x1.device());
  if (!(q.device() == x1.device())) throw DeviceMismatch("searchsorted", x1.device().str(), q.device().str());
  if (sorted.dtype() != t) sorted = sorted.astype(t);
  if (q.dtype() != t) q = q.astype(t);
  const ImplPtr s = detail::impl_of(sorted), qi = contiguous(q);
  detail::materialize(*s);
  ImplPtr out = detail::new_array(DType::int64, qi->shape, qi->device);
  if (out->size() > 0)
    s->backend->searchsorted(detail::view_of(*s), detail::view_of(*qi), side == Side::right, detail::view_of(*out));
  return Array(out);
}

namespace {

// unique_all's four results; those not asked for stay empty.
UniqueAll unique_impl(const Array& x, bool indices, bool inverse, bool counts) {
  const Array flat = reshape(x, {-1});
  const std::int64_t n = flat.size();
  const Device dev = x.device();
  UniqueAll u;
  if (n == 0) {
    u.values = empty({0}, x.dtype(), dev);
    if (indices) u.indices = empty({0}, DType::int64, dev);
    if (counts) u.counts = empty({0}, DType::int64, dev);
    if (inverse) u.inverse_indices = empty(Shape(x.shape().begin(), x.shape().end()), DType::int64, dev);
    return u;
  }
  Sorted s;
  if (kind(flat.dtype()) == DTypeKind::complex_floating) {
    // Complex numbers have no order, but equal ones must meet: NumPy's order, R + Rj
    // lexicographically, then R + nanj by the real part, then nan + Rj by the imaginary part, then
    // nan + nanj. Three stable sorts: by the imaginary part, by the real part (NaNs last in both),
    // then by that class (0, 1, or 2 for a NaN real part).
    const Array by_imag = sort_along(imag(flat), 0, false, false, true, "unique").indices;
    const Sorted by_real = sort_along(detail::take_unchecked(real(flat), by_imag, 0), 0, false, false, true, "unique");
    const Array lex = detail::take_unchecked(by_imag, by_real.indices, 0);
    const Array v = detail::take_unchecked(flat, lex, 0);
    const Array nan_re = isnan(real(v)), nan_im = isnan(imag(v));
    const Array cls = where(nan_re, 2, where(nan_im, 1, 0)).astype(DType::int8);
    s.indices = detail::take_unchecked(lex, sort_along(cls, 0, false, false, true, "unique").indices, 0);
    s.values = detail::take_unchecked(flat, s.indices, 0);
  } else {
    s = sort_along(flat, 0, false, true, indices || inverse, "unique");
  }
  // first[i]: s[i] starts a run of equal elements (NaN != NaN: each NaN its own).
  Array first = empty({n}, DType::bool_, dev);
  first.slice({Slice(0, 1)}) = true;
  if (n > 1)
    first.slice({Slice(1, std::nullopt)}) =
        not_equal(s.values.slice({Slice(1, std::nullopt)}), s.values.slice({Slice(std::nullopt, n - 1)}));
  const Array starts = detail::flatnonzero(first);
  u.values = detail::take_unchecked(s.values, starts, 0);
  if (indices) u.indices = detail::take_unchecked(s.indices, starts, 0);
  if (counts) {
    const Array ends = concat({starts.slice({Slice(1, std::nullopt)}), full({1}, n, DType::int64, dev)}, 0);
    u.counts = (ends - starts).eval();
  }
  if (inverse) {
    const Array id = (cumulative_sum(first, 0, DType::int64) - 1).eval();
    Array inv = empty({n}, DType::int64, dev);
    scatter_into(inv.impl(), s.indices, 0, id, true);
    u.inverse_indices = reshape(inv, Shape(x.shape().begin(), x.shape().end()));
  }
  return u;
}

}  // namespace

UniqueAll unique_all(const Array& x) {
  return unique_impl(x, true, true, true);
}
UniqueCounts unique_counts(const Array& x) {
  UniqueAll u = unique_impl(x, false, false, true);
  return {u.values, u.counts};
}
UniqueInverse unique_inverse(const Array& x) {
  UniqueAll u = unique_impl(x, false, true, false);
  return {u.values, u.inverse_indices};
}
Array unique_values(const Array& x) {
  return unique_impl(x, false, false, false).values;
}

namespace detail {
// indices as int64 with every element in [0, n) (negative ones counted from the end): an IndexError
// naming the first index out of range, the axis and its size. `what` prefixes the message.
Array checked_indices(const Array& indices, std::int64_t n, int axis, const std::string& what) {
  const DTypeKind k = kind(indices.dtype());
  if (k != DTypeKind::signed_integer && k != DTypeKind::unsigned_integer)
    throw IndexError(what + "arrays used as indices must be of integer (or boolean) type, got " +
                     std::string(name(indices.dtype())));
  if (indices.size() == 0) return indices.astype(DType::int64);
  auto fail = [&](const Array& bad) {
    const Array flat = reshape(indices, {-1});
    const std::int64_t at = argmax(reshape(bad, {-1})).item<std::int64_t>();
    const Array v = flat.slice({Index(at)});
    const std::string value = indices.dtype() == DType::uint64 ? std::to_string(v.item<std::uint64_t>())
                                                               : std::to_string(v.item<std::int64_t>());
    throw IndexError(what + "index " + value + " is out of bounds for axis " + std::to_string(axis) + " with size " +
                     std::to_string(n));
  };
  if (indices.dtype() == DType::uint64) {
    const Array bad = greater_equal(indices, static_cast<std::uint64_t>(n));
    if (any(bad).item<bool>()) fail(bad);
    return indices.astype(DType::int64);
  }
  const Array i64 = indices.dtype() == DType::int64 ? indices : indices.astype(DType::int64);
  const Array bad = logical_or(less(i64, -n), greater_equal(i64, n));
  if (any(bad).item<bool>()) fail(bad);
  return where(less(i64, 0), i64 + n, i64).eval();
}
}  // namespace detail

Array take_along_axis(const Array& x, const Array& indices, int axis) {
  const int nd = x.ndim();
  if (nd == 0) throw ValueError("take_along_axis: x must have at least one dimension");
  if (indices.ndim() != nd)
    throw ValueError("take_along_axis: indices must have x's " + std::to_string(nd) + " dimensions, got " +
                     std::to_string(indices.ndim()));
  if (!(indices.device() == x.device()))
    throw DeviceMismatch("take_along_axis", x.device().str(), indices.device().str());
  const int ax = detail::normalize_axis(axis, nd, "take_along_axis");
  const Array ix = detail::checked_indices(indices, x.shape(ax), ax, "take_along_axis: ");
  // The broadcast shape, with the axis the indices' own.
  Shape xs(x.shape().begin(), x.shape().end()), is(indices.shape().begin(), indices.shape().end());
  Shape xs1 = xs, is1 = is;
  xs1[static_cast<std::size_t>(ax)] = 1;
  is1[static_cast<std::size_t>(ax)] = 1;
  Shape shape = detail::broadcast_shape(xs1, is1);
  shape[static_cast<std::size_t>(ax)] = is[static_cast<std::size_t>(ax)];
  // The position of each result element in x flattened (C order); an axis of x of length 1
  // broadcasts (position 0 along it).
  std::vector<std::int64_t> xstride(static_cast<std::size_t>(nd));
  std::int64_t stride = 1;
  for (int d = nd - 1; d >= 0; --d) {
    xstride[static_cast<std::size_t>(d)] = xs[static_cast<std::size_t>(d)] == 1 ? 0 : stride;
    stride *= xs[static_cast<std::size_t>(d)];
  }
  Array flat_index = broadcast_to(ix, shape) * xstride[static_cast<std::size_t>(ax)];
  for (int d = 0; d < nd; ++d) {
    const auto du = static_cast<std::size_t>(d);
    if (d == ax || shape[du] == 1 || xstride[du] == 0) continue;
    Shape s(static_cast<std::size_t>(nd), 1);
    s[du] = shape[du];
    flat_index = flat_index + reshape(arange(0, shape[du], 1, DType::int64, x.device()), s) * xstride[du];
  }
  if (detail::checked_size(shape) == 0) return empty(shape, x.dtype(), x.device());
  return detail::take_unchecked(reshape(x, {-1}), flat_index, 0);
}

namespace detail {

Array take_unchecked(const Array& x, const Array& indices, int axis) {
  if (kind(x.dtype()) == DTypeKind::complex_floating) return from_parts(take_unchecked(as_parts(x), indices, axis));
  const ImplPtr& a = impl_of(x);
  materialize(*a);
  const ImplPtr ix = contiguous(indices);
  Shape shape(a->shape.begin(), a->shape.begin() + axis);
  shape.insert(shape.end(), ix->shape.begin(), ix->shape.end());
  shape.insert(shape.end(), a->shape.begin() + axis + 1, a->shape.end());
  ImplPtr out = new_array(a->dtype, shape, a->device);
  if (out->size() > 0) a->backend->take(view_of(*a), view_of(*ix), axis, view_of(*out));
  return Array(out);
}

}  // namespace detail

}  // namespace xp
