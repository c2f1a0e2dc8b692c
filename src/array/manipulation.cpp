// The Array API functions composed of other array functions (views, concat, take, where, matmul,
// elementwise operations): no backend code of their own, so they run on every device. Each checks
// its arguments before it computes anything.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "array/array_impl.hpp"

namespace xp {

using detail::impl_of;
using detail::normalize_axis;
using detail::shape_str;

namespace {

// The index list x[:, ..., :, s] with `s` at `axis`.
std::vector<Index> at_axis(int ndim, int axis, const Index& s) {
  std::vector<Index> idx(static_cast<std::size_t>(ndim), Index(Slice()));
  idx[static_cast<std::size_t>(axis)] = s;
  return idx;
}

Array slice_axis(const Array& x, int axis, std::optional<std::int64_t> start, std::optional<std::int64_t> stop) {
  const std::vector<Index> idx = at_axis(x.ndim(), axis, Slice(start, stop));
  return x.slice(std::span<const Index>(idx));
}

// Distinct axes, each normalized; `what` and `which` name the function and the argument.
std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* what, const char* which) {
  std::vector<int> r;
  r.reserve(axes.size());
  for (int a : axes) {
    const int n = normalize_axis(a, ndim, what);
    if (std::find(r.begin(), r.end(), n) != r.end())
      throw ValueError(std::string(what) + ": repeated axis " + std::to_string(a) + " in " + which);
    r.push_back(n);
  }
  return r;
}

Shape shape_of(const Array& x) {
  return Shape(x.shape().begin(), x.shape().end());
}

// `r`, made from x by views and copies, as a new array: copied only where it still shares x's memory
// (a view), never twice.
Array fresh(const Array& r, const Array& x) {
  const detail::ImplPtr &ri = impl_of(r), &xi = impl_of(x);
  if (ri->storage == nullptr || xi->storage == nullptr || ri->storage != xi->storage) return r;
  return r.copy();
}

void same_device(const char* what, const Array& a, const Array& b) {
  if (!(a.device() == b.device())) throw DeviceMismatch(what, a.device().str(), b.device().str());
}

}  // namespace

// ---- dtypes ----

DType result_type(const std::vector<TypeArg>& args) {
  std::vector<DType> dtypes;
  for (const TypeArg& a : args) {
    if (a.array() != nullptr) dtypes.push_back(a.array()->dtype());
    if (a.dtype()) dtypes.push_back(*a.dtype());
  }
  if (args.empty()) throw ValueError("result_type: needs at least one array or dtype");
  if (dtypes.empty()) throw TypeError("result_type: needs at least one array or dtype beside the C++ numbers");
  DType r = detail::result_type_all(dtypes);
  for (const TypeArg& a : args)
    if (a.scalar()) r = result_type(r, a.scalar()->kind());
  return r;
}
DType result_type(std::initializer_list<TypeArg> args) {
  return result_type(std::vector<TypeArg>(args));
}
bool can_cast(const Array& x, DType to) {
  return can_cast(x.dtype(), to);
}

// ---- creation ----

std::vector<Array> meshgrid(const std::vector<Array>& arrays, const std::string& indexing) {
  if (indexing != "xy" && indexing != "ij")
    throw ValueError("meshgrid: indexing must be 'xy' or 'ij', not '" + indexing + "'");
  const std::size_t n = arrays.size();
  for (std::size_t i = 1; i < n; ++i) same_device("meshgrid", arrays[0], arrays[i]);
  Shape shape(n);
  for (std::size_t i = 0; i < n; ++i) shape[i] = arrays[i].size();
  const bool xy = indexing == "xy" && n >= 2;
  if (xy) std::swap(shape[0], shape[1]);
  std::vector<Array> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Input i runs along axis i (in "xy", inputs 0 and 1 along axes 1 and 0).
    const std::size_t along = xy && i < 2 ? 1 - i : i;
    Shape s(n, 1);
    s[along] = shape[along];
    out.push_back(broadcast_to(arrays[i].reshape({-1}).reshape(s), shape).copy());
  }
  return out;
}

namespace {
Array triangle(const Array& x, std::int64_t k, bool lower, const char* what) {
  if (x.ndim() < 2)
    throw ValueError(std::string(what) + ": x must have at least 2 dimensions, not " + std::to_string(x.ndim()));
  const std::int64_t n = x.shape(-2), m = x.shape(-1);
  const Array rows = arange(0, n, 1, DType::int64, x.device()).reshape({n, 1});
  const Array cols = arange(0, m, 1, DType::int64, x.device()).reshape({1, m});
  // Element (i, j) is on or below the k-th diagonal when j - i <= k: compared as j - i against k,
  // which cannot overflow (|j - i| < 2^59), whatever k is.
  const Array offset = cols - rows;
  const Array keep = lower ? (offset <= k) : (offset >= k);
  const Scalar zero = x.dtype() == DType::bool_ ? Scalar(false) : Scalar(0);
  return where(keep, x, zero).eval();
}
}  // namespace

Array tril(const Array& x, std::int64_t k) {
  return triangle(x, k, true, "tril");
}
Array triu(const Array& x, std::int64_t k) {
  return triangle(x, k, false, "triu");
}

// ---- manipulation ----

std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays) {
  if (arrays.empty()) return {};
  Shape shape = shape_of(arrays[0]);
  for (std::size_t i = 1; i < arrays.size(); ++i) {
    same_device("broadcast_arrays", arrays[0], arrays[i]);
    shape = broadcast_shapes(shape, shape_of(arrays[i]));
  }
  std::vector<Array> out;
  out.reserve(arrays.size());
  for (const Array& a : arrays) out.push_back(broadcast_to(a, shape));
  return out;
}

Array moveaxis(const Array& x, int source, int destination) {
  return moveaxis(x, std::vector<int>{source}, std::vector<int>{destination});
}

Array moveaxis(const Array& x, const std::vector<int>& source, const std::vector<int>& destination) {
  if (source.size() != destination.size()) {
    throw ValueError("moveaxis: source and destination must have the same number of elements (" +
                     std::to_string(source.size()) + " and " + std::to_string(destination.size()) + ")");
  }
  const int nd = x.ndim();
  const std::vector<int> src = normalize_axes(source, nd, "moveaxis", "source");
  const std::vector<int> dst = normalize_axes(destination, nd, "moveaxis", "destination");
  std::vector<int> order;
  for (int a = 0; a < nd; ++a)
    if (std::find(src.begin(), src.end(), a) == src.end()) order.push_back(a);
  std::vector<std::pair<int, int>> moves;
  for (std::size_t i = 0; i < src.size(); ++i) moves.emplace_back(dst[i], src[i]);
  std::sort(moves.begin(), moves.end());
  for (const auto& [d, s] : moves) order.insert(order.begin() + d, s);
  return permute_dims(x, order);
}

Array repeat(const Array& x_, std::int64_t repeats, std::optional<int> axis) {
  if (repeats < 0) throw ValueError("repeat: repeats may not be negative, got " + std::to_string(repeats));
  // Without an axis, flat; a 0-d x along axis 0 or -1 too, as NumPy takes it.
  const Array x = axis && x_.ndim() > 0 ? x_ : x_.reshape({-1});
  const int ax = normalize_axis(axis ? *axis : 0, x.ndim(), "repeat");
  if (x.ndim() >= detail::kMaxDims) {  // no room for the extra axis below: take of i // repeats
    const std::int64_t n = x.shape(ax);
    if (n > 0 && repeats > (std::int64_t(1) << 59) / n)
      throw ValueError("repeat: the result would have more than 2^59 elements along the axis");
    return take(x, floor_divide(arange(0, n * repeats, 1, DType::int64, x.device()), repeats == 0 ? 1 : repeats), ax);
  }
  // Each element's copies side by side: a new axis after `ax` broadcast to `repeats`, then merged.
  Shape wide = shape_of(x);
  wide.insert(wide.begin() + ax + 1, repeats);
  detail::checked_size(wide);  // first: then the merged extent below cannot overflow
  Shape merged = shape_of(x);
  merged[static_cast<std::size_t>(ax)] *= repeats;
  return fresh(broadcast_to(expand_dims(x, ax + 1), wide).reshape(merged), x);
}

Array repeat(const Array& x_, const Array& repeats, std::optional<int> axis) {
  const DTypeKind k = kind(repeats.dtype());
  if (k != DTypeKind::signed_integer && k != DTypeKind::unsigned_integer)
    throw TypeError("repeat: repeats must be an integer array, not " + std::string(name(repeats.dtype())));
  if (repeats.ndim() > 1)
    throw ValueError("repeat: repeats must be 0-d or 1-d, not of shape " + shape_str(shape_of(repeats)));
  const Array x = axis && x_.ndim() > 0 ? x_ : x_.reshape({-1});
  const int ax = normalize_axis(axis ? *axis : 0, x.ndim(), "repeat");
  const std::int64_t n = x.shape(ax);
  if (repeats.size() == 1) {
    const std::int64_t r = repeats.item<std::int64_t>();
    if (kind(repeats.dtype()) == DTypeKind::unsigned_integer && repeats.item<std::uint64_t>() > (1ull << 62))
      throw ValueError("repeat: a repeat count is too large");
    return repeat(x, r, ax);
  }
  if (repeats.size() != n) {
    throw ValueError("repeat: repeats has " + std::to_string(repeats.size()) + " elements for an axis of length " +
                     std::to_string(n) + " (give one count, or one per element)");
  }
  const std::vector<std::uint64_t> counts = repeats.to_vector<std::uint64_t>();
  const bool is_signed = kind(repeats.dtype()) == DTypeKind::signed_integer;
  std::vector<std::int64_t> index;
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t c = counts[static_cast<std::size_t>(i)];
    if (is_signed && static_cast<std::int64_t>(c) < 0)
      throw ValueError("repeat: repeats may not be negative, got " + std::to_string(static_cast<std::int64_t>(c)) +
                       " at index " + std::to_string(i));
    if (c > (1ull << 59) || total + static_cast<std::int64_t>(c) > (std::int64_t(1) << 59))
      throw ValueError("repeat: the result would have more than 2^59 elements along the axis");
    total += static_cast<std::int64_t>(c);
  }
  index.reserve(static_cast<std::size_t>(total));
  for (std::int64_t i = 0; i < n; ++i)
    index.insert(index.end(), static_cast<std::size_t>(counts[static_cast<std::size_t>(i)]), i);
  return take(x, asarray(index, std::nullopt, x.device()), ax);
}

namespace {
// One axis rolled by s (0 <= s < n): the last s elements first.
Array roll_axis(const Array& x, std::int64_t shift, int ax) {
  const std::int64_t n = x.shape(ax);
  if (n == 0) return x;
  const std::int64_t s = ((shift % n) + n) % n;
  if (s == 0) return x;
  return concat({slice_axis(x, ax, n - s, std::nullopt), slice_axis(x, ax, std::nullopt, n - s)}, ax);
}
}  // namespace

Array roll(const Array& x, std::int64_t shift, std::optional<int> axis) {
  if (!axis) {
    const Shape shape = shape_of(x);
    return fresh(roll_axis(x.reshape({-1}), shift, 0).reshape(shape), x);
  }
  return roll(x, std::vector<std::int64_t>{shift}, std::vector<int>{*axis});
}

Array roll(const Array& x, const std::vector<std::int64_t>& shift, const std::vector<int>& axis) {
  if (shift.empty() || axis.empty()) throw ValueError("roll: shift and axis may not be empty");
  if (shift.size() != axis.size() && shift.size() != 1 && axis.size() != 1) {
    throw ValueError("roll: shift and axis must have the same length, or one of them one element (" +
                     std::to_string(shift.size()) + " and " + std::to_string(axis.size()) + ")");
  }
  const std::size_t k = std::max(shift.size(), axis.size());
  std::vector<std::int64_t> total(static_cast<std::size_t>(x.ndim()), 0);
  for (std::size_t i = 0; i < k; ++i) {
    const int a = normalize_axis(axis[axis.size() == 1 ? 0 : i], x.ndim(), "roll");
    const std::int64_t s = shift[shift.size() == 1 ? 0 : i];
    const std::int64_t n = x.shape(a);
    // Summed modulo the extent (repeated axes add up, as NumPy), never overflowing.
    if (n > 0) total[static_cast<std::size_t>(a)] = (total[static_cast<std::size_t>(a)] + ((s % n) + n) % n) % n;
  }
  Array r = x;
  for (int a = 0; a < x.ndim(); ++a) r = roll_axis(r, total[static_cast<std::size_t>(a)], a);
  return fresh(r, x);
}

Array tile(const Array& x, const std::vector<std::int64_t>& repetitions) {
  for (std::int64_t r : repetitions)
    if (r < 0) throw ValueError("tile: repetitions may not be negative, got " + std::to_string(r));
  const std::size_t d = std::max(static_cast<std::size_t>(x.ndim()), repetitions.size());
  Shape s(d, 1), reps(d, 1);
  std::copy(x.shape().begin(), x.shape().end(), s.end() - x.ndim());
  std::copy(repetitions.begin(), repetitions.end(), reps.end() - static_cast<std::ptrdiff_t>(repetitions.size()));
  if (2 * d > static_cast<std::size_t>(detail::kMaxDims)) {
    // Too many axes to split each in two: axis by axis, a take of the indices j % s_i.
    std::int64_t total = 1;  // of the nonzero factors, as checked_size counts: no product below overflows
    for (std::size_t i = 0; i < d; ++i) {
      for (const std::int64_t v : {reps[i], s[i]}) {
        if (v == 0) continue;
        if (total > (std::int64_t(1) << 59) / v) throw ValueError("tile: the result would have too many elements");
        total *= v;
      }
    }
    Array r = x.reshape(s);
    for (std::size_t i = 0; i < d; ++i) {
      if (reps[i] == 1) continue;
      const Array j = arange(0, reps[i] * s[i], 1, DType::int64, x.device());
      r = take(r, s[i] == 0 ? j : remainder(j, s[i]), static_cast<int>(i));
    }
    return fresh(r, x);
  }
  // x as (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...), then merged pairwise.
  Shape split, wide, out;
  for (std::size_t i = 0; i < d; ++i) {
    split.push_back(1), split.push_back(s[i]);
    wide.push_back(reps[i]), wide.push_back(s[i]);
  }
  detail::checked_size(wide);  // first: then no product below overflows
  for (std::size_t i = 0; i < d; ++i) out.push_back(reps[i] * s[i]);
  return fresh(broadcast_to(x.reshape(split), wide).reshape(out), x);
}

std::vector<Array> unstack(const Array& x, int axis) {
  const int ax = normalize_axis(axis, x.ndim(), "unstack");
  std::vector<Array> out;
  const std::int64_t n = x.shape(ax);
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::vector<Index> idx = at_axis(x.ndim(), ax, Index(i));
    out.push_back(x.slice(std::span<const Index>(idx)));
  }
  return out;
}

// ---- statistics ----

Array diff(const Array& x_, int axis, int n, const std::optional<Operand>& prepend,
           const std::optional<Operand>& append) {
  if (n < 0) throw ValueError("diff: n must be non-negative, got " + std::to_string(n));
  if (x_.ndim() == 0) throw ValueError("diff: x must have at least one dimension");
  const int ax = normalize_axis(axis, x_.ndim(), "diff");
  // prepend and append: arrays joined along axis; a 0-d one or a number is one slice of x's shape
  // (a number as np.asarray makes it: bool, int64 or float64), promoted with x as concat promotes.
  auto part = [&](const Operand& p) -> Array {
    Shape one = shape_of(x_);
    one[static_cast<std::size_t>(ax)] = 1;
    if (!p.is_array()) return full(one, p.scalar(), p.scalar().default_dtype(), x_.device());
    same_device("diff", x_, p.array());
    if (p.array().ndim() == 0) return broadcast_to(p.array(), one);
    return p.array();
  };
  Array x = x_;
  if (n == 0) return x;  // as NumPy: x itself, prepend and append not joined
  if (prepend || append) {
    std::vector<Array> parts;
    if (prepend) parts.push_back(part(*prepend));
    parts.push_back(x_);
    if (append) parts.push_back(part(*append));
    x = concat(parts, ax);
  }
  for (int i = 0; i < n && x.shape(ax) > 0; ++i) {
    const Array hi = slice_axis(x, ax, 1, std::nullopt), lo = slice_axis(x, ax, std::nullopt, -1);
    x = (x.dtype() == DType::bool_ ? not_equal(hi, lo) : subtract(hi, lo)).eval();
  }
  return x;
}

// ---- linear algebra ----

Array tensordot(const Array& a, const Array& b, int axes) {
  if (axes < 0) throw ValueError("tensordot: axes must be non-negative, got " + std::to_string(axes));
  if (axes > a.ndim() || axes > b.ndim()) {
    throw ValueError("tensordot: axes = " + std::to_string(axes) + " is more than the dimensions of x1 (" +
                     std::to_string(a.ndim()) + ") or x2 (" + std::to_string(b.ndim()) + ")");
  }
  std::vector<int> aa, ba;
  for (int i = 0; i < axes; ++i) aa.push_back(a.ndim() - axes + i), ba.push_back(i);
  return tensordot(a, b, aa, ba);
}

Array tensordot(const Array& a, const Array& b, const std::vector<int>& axes_a, const std::vector<int>& axes_b) {
  if (axes_a.size() != axes_b.size()) {
    throw ValueError("tensordot: the two lists of axes differ in length (" + std::to_string(axes_a.size()) + " and " +
                     std::to_string(axes_b.size()) + ")");
  }
  same_device("tensordot", a, b);
  const std::vector<int> ca = normalize_axes(axes_a, a.ndim(), "tensordot", "the axes of x1");
  const std::vector<int> cb = normalize_axes(axes_b, b.ndim(), "tensordot", "the axes of x2");
  std::int64_t k = 1;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    if (a.shape(ca[i]) != b.shape(cb[i])) {
      throw ValueError("tensordot: shape mismatch: axis " + std::to_string(ca[i]) + " of x1 has length " +
                       std::to_string(a.shape(ca[i])) + ", axis " + std::to_string(cb[i]) + " of x2 has length " +
                       std::to_string(b.shape(cb[i])));
    }
    k *= a.shape(ca[i]);
  }
  std::vector<int> pa, pb;
  Shape out;
  std::int64_t m = 1, n = 1;
  for (int i = 0; i < a.ndim(); ++i) {
    if (std::find(ca.begin(), ca.end(), i) != ca.end()) continue;
    pa.push_back(i), out.push_back(a.shape(i)), m *= a.shape(i);
  }
  pa.insert(pa.end(), ca.begin(), ca.end());
  pb = cb;
  for (int i = 0; i < b.ndim(); ++i) {
    if (std::find(cb.begin(), cb.end(), i) != cb.end()) continue;
    pb.push_back(i), out.push_back(b.shape(i)), n *= b.shape(i);
  }
  const Array a2 = permute_dims(a, pa).reshape({m, k});
  const Array b2 = permute_dims(b, pb).reshape({k, n});
  return matmul(a2, b2).reshape(out);
}

}  // namespace xp
