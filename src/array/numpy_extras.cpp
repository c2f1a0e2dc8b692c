// NumPy functions beyond the Array API (xp/numpy.hpp), composed of xp's own operations: elementwise
// functions, reductions, sort, take, concat and Array::set. They need no backend code, and give the
// same results on every device wherever those operations do.
#include "xp/numpy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "array/array_impl.hpp"
#include "xp/error.hpp"
#include "xp/sorting.hpp"

namespace xp {

namespace {

using i64 = std::int64_t;

bool is_float(DType t) {
  return kind(t) == DTypeKind::floating;
}
// Real or complex floating point: the dtypes that hold NaN.
bool has_nan(DType t) {
  return kind(t) == DTypeKind::floating || kind(t) == DTypeKind::complex_floating;
}

Shape shape_of(const Array& a) {
  return Shape(a.shape().begin(), a.shape().end());
}

std::string shape_text(const Array& a) {
  return detail::shape_str(shape_of(a));
}

Array index_array(const std::vector<i64>& v, const Device& d) {
  return asarray(v.data(), v.size(), DType::int64, Shape{static_cast<i64>(v.size())}, d);
}

// a with the axes of a reduction merged into its last axis, the others first in order.
struct Folded {
  Array x;        // shape kept + (n,)
  Shape kept;     // the extents of the axes not reduced
  Shape keepdim;  // a's shape with each reduced axis 1 (keepdims)
  i64 n = 1;      // the reduced extent
};

Folded fold(const Array& a, const Axes& axes, const char* what) {
  const int nd = a.ndim();
  std::vector<bool> reduced(static_cast<std::size_t>(nd), axes.all());
  if (!axes.all()) {
    for (int ax : axes.list()) {
      const auto d = static_cast<std::size_t>(detail::normalize_axis(ax, nd, what));
      if (reduced[d]) throw ValueError(std::string(what) + ": duplicate value in 'axis'");
      reduced[d] = true;
    }
  }
  Folded f;
  std::vector<int> perm;
  for (int d = 0; d < nd; ++d) {
    if (reduced[static_cast<std::size_t>(d)]) {
      f.keepdim.push_back(1);
      continue;
    }
    perm.push_back(d);
    f.kept.push_back(a.shape(d));
    f.keepdim.push_back(a.shape(d));
  }
  for (int d = 0; d < nd; ++d)
    if (reduced[static_cast<std::size_t>(d)]) {
      perm.push_back(d);
      f.n *= a.shape(d);
    }
  Shape s = f.kept;
  s.push_back(f.n);
  f.x = reshape(nd == 0 ? a : permute_dims(a, perm), s);
  return f;
}

// The last element along the last axis: x[..., -1].
Array last_of(const Array& x) {
  return x.slice({ellipsis, Index(-1)});
}

}  // namespace

// ---- comparison ----------------------------------------------------------------------------------

Array isclose(const Operand& a, const Operand& b, double rtol, double atol, bool equal_nan) {
  // As np.isclose: y made a float of its own kind (an integer array float64, an int number a float);
  // rtol and atol weak, so the tolerance is computed in y's dtype.
  Array xa, ya;
  if (a.is_array())
    xa = a.array();
  else if (!b.is_array())
    xa = full({}, a.scalar());
  if (b.is_array()) {
    const DType t = result_type(b.array().dtype(), ScalarKind::floating);
    ya = b.array().dtype() == t ? b.array() : b.array().astype(t);
  }
  const Operand x = xa.valid() ? Operand(xa) : a;
  if (ya.valid()) {
    const Array close = logical_and(less_equal(abs(subtract(x, ya)), atol + rtol * abs(ya)), isfinite(ya));
    Array r = logical_or(close, equal(x, ya));
    if (equal_nan) {
      // A number x is tested here, so that no array of the default device meets b's.
      if (xa.valid())
        r = logical_or(r, logical_and(isnan(xa), isnan(ya)));
      else if (std::isnan(a.scalar().as_double()))
        r = logical_or(r, isnan(ya));
    }
    return r.eval();
  }
  const double y = b.scalar().as_double();
  Array r;
  if (std::isfinite(y))
    r = logical_or(less_equal(abs(subtract(x, y)), atol + rtol * std::fabs(y)), equal(x, y));
  else
    r = equal(x, y);
  if (equal_nan && std::isnan(y)) r = logical_or(r, isnan(x));
  return r.eval();
}

bool allclose(const Operand& a, const Operand& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan)).item<bool>();
}

bool array_equal(const Array& a1, const Array& a2, bool equal_nan) {
  if (!std::equal(a1.shape().begin(), a1.shape().end(), a2.shape().begin(), a2.shape().end())) return false;
  Array same = equal(a1, a2);
  if (equal_nan && (has_nan(a1.dtype()) || has_nan(a2.dtype())))
    same = logical_or(same, logical_and(isnan(a1), isnan(a2)));
  return all(same).item<bool>();
}

// ---- reductions that ignore NaN ------------------------------------------------------------------

// A complex number with a NaN part is NaN (isnan), as NumPy's nan functions take it.
Array nansum(const Array& a, const Axes& axes, bool keepdims) {
  if (!has_nan(a.dtype())) return sum(a, axes, keepdims);
  return sum(where(isnan(a), 0, a), axes, keepdims);
}

Array nanmean(const Array& a, const Axes& axes, bool keepdims) {
  if (!has_nan(a.dtype())) return mean(a, axes, keepdims);
  // NumPy's: the sum of the numbers over their count, divided in float64 (complex128) and rounded
  // to the dtype.
  const Array nans = isnan(a);
  const Array total = sum(where(nans, 0, a), axes, keepdims);
  const Array count = sum(logical_not(nans), axes, keepdims, DType::int64);
  const DType wide = kind(total.dtype()) == DTypeKind::complex_floating ? DType::complex128 : DType::float64;
  return divide(total.astype(wide), count.astype(DType::float64)).astype(total.dtype());
}

namespace {

Array nan_extreme(const Array& a, const Axes& axes, bool keepdims, bool is_max) {
  if (!is_float(a.dtype())) return is_max ? max(a, axes, keepdims) : min(a, axes, keepdims);
  const double fill = is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  const Array nans = isnan(a);
  const Array filled = where(nans, fill, a);
  const Array r = is_max ? max(filled, axes, keepdims) : min(filled, axes, keepdims);
  return where(all(nans, axes, keepdims), std::numeric_limits<double>::quiet_NaN(), r).eval();
}

Array nan_arg(const Array& a, std::optional<int> axis, bool keepdims, bool is_max) {
  if (!is_float(a.dtype())) return is_max ? argmax(a, axis, keepdims) : argmin(a, axis, keepdims);
  const char* what = is_max ? "nanargmax" : "nanargmin";
  if (a.size() == 0) {
    // An empty reduced axis has no answer; an empty result along a non-empty one is just empty.
    if (!axis || a.ndim() == 0 || a.shape(*axis) == 0)
      throw ValueError(std::string(what) + ": attempt to get " + (is_max ? "argmax" : "argmin") +
                       " of an empty sequence");
    return is_max ? argmax(a, axis, keepdims) : argmin(a, axis, keepdims);
  }
  const Array nans = isnan(a);
  const Axes axes = axis ? Axes(*axis) : Axes();
  if (any(all(nans, axes)).item<bool>()) throw ValueError(std::string(what) + ": All-NaN slice encountered");
  const double fill = is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  const Array filled = where(nans, fill, a);
  return is_max ? argmax(filled, axis, keepdims) : argmin(filled, axis, keepdims);
}

}  // namespace

Array nanmax(const Array& a, const Axes& axes, bool keepdims) {
  return nan_extreme(a, axes, keepdims, true);
}
Array nanmin(const Array& a, const Axes& axes, bool keepdims) {
  return nan_extreme(a, axes, keepdims, false);
}
Array nanargmax(const Array& a, std::optional<int> axis, bool keepdims) {
  return nan_arg(a, axis, keepdims, true);
}
Array nanargmin(const Array& a, std::optional<int> axis, bool keepdims) {
  return nan_arg(a, axis, keepdims, false);
}

// ---- shapes --------------------------------------------------------------------------------------

Array diag(const Array& v, std::int64_t k) {
  const Device dev = v.device();
  if (v.ndim() == 1) {
    const i64 n = v.shape(0);
    // |k| and n + |k| without overflow (k may be INT64_MIN).
    const auto ak = static_cast<std::uint64_t>(k < 0 ? -(k + 1) : k) + (k < 0 ? 1u : 0u);
    if (ak > static_cast<std::uint64_t>(std::numeric_limits<i64>::max() - n))
      throw ValueError("diag: a matrix of " + std::to_string(n) + " + |" + std::to_string(k) +
                       "| rows does not fit int64");
    const i64 side = n + static_cast<i64>(ak);
    Array out = zeros({side, side}, v.dtype(), dev);
    if (n == 0) return out;
    const Array i = arange(0, n, 1, DType::int64, dev);
    const Array shifted = (i + static_cast<i64>(ak)).eval();
    out.set({Index(k >= 0 ? i : shifted), Index(k >= 0 ? shifted : i)}, v);
    return out;
  }
  if (v.ndim() == 2) {
    const i64 n = v.shape(0), m = v.shape(1);
    const i64 len = k >= 0 ? std::max<i64>(0, std::min(n, m - k)) : std::max<i64>(0, std::min(n + k, m));
    if (len == 0) return empty({0}, v.dtype(), dev);
    const i64 r0 = k >= 0 ? 0 : -k, c0 = k >= 0 ? k : 0;
    const Array i = arange(0, len, 1, DType::int64, dev);
    return take(v, ((i + r0) * m + (i + c0)).eval());
  }
  throw ValueError("diag: v must be 1-D or 2-D, got an array of " + std::to_string(v.ndim()) + " dimensions");
}

Array ravel(const Array& a) {
  return reshape(a, {-1});
}

// ---- order statistics ----------------------------------------------------------------------------

Array median(const Array& a, const Axes& axes, bool keepdims) {
  const Folded f = fold(a, axes, "median");
  Array r;
  if (f.n == 0) {
    r = mean(f.x, -1);  // NaN (NumPy warns: "Mean of empty slice")
  } else {
    // NumPy's: the mean of the middle element or two of the sorted slice; a slice holding a NaN
    // (sorted last) gives NaN.
    const Array s = sort(f.x, -1);
    const i64 h = f.n / 2;
    const Array middle = index_array(f.n % 2 ? std::vector<i64>{h} : std::vector<i64>{h - 1, h}, a.device());
    r = mean(take(s, middle, s.ndim() - 1), -1);
    if (is_float(a.dtype())) {
      const Array last = last_of(s);
      r = where(isnan(last), last, r).astype(r.dtype());
    }
  }
  return keepdims ? reshape(r, f.keepdim) : r;
}

namespace {

enum class QuantileMethod { linear, lower, higher, nearest, midpoint };

QuantileMethod quantile_method(std::string_view m, const char* what) {
  if (m == "linear") return QuantileMethod::linear;
  if (m == "lower") return QuantileMethod::lower;
  if (m == "higher") return QuantileMethod::higher;
  if (m == "nearest") return QuantileMethod::nearest;
  if (m == "midpoint") return QuantileMethod::midpoint;
  throw ValueError(std::string(what) + ": method '" + std::string(m) +
                   "' is not one xp has; it has 'linear' (the default), 'lower', 'higher', 'nearest' and 'midpoint'");
}

Array quantile_impl(const Array& a, const Operand& q_in, bool percent, const Axes& axes, bool keepdims,
                    std::string_view method_name) {
  // NumPy 2.4's "linear" method (numpy/lib/_function_base_impl.py: quantile, _quantile,
  // _get_indexes, _get_gamma, _lerp), step by step, so that the roundings are NumPy's.
  const char* what = percent ? "percentile" : "quantile";
  const char* range_error = percent ? "percentile: Percentiles must be in the range [0, 100]"
                                    : "quantile: Quantiles must be in the range [0, 1]";
  const QuantileMethod method = quantile_method(method_name, what);
  const DType t = a.dtype();
  if (t == DType::bool_) throw TypeError(std::string(what) + ": a must hold numbers, got bool");
  // A number q is "weak" (NumPy's weak_q): q and the interpolation weight are float64 numbers, and
  // the weight meets the array's values as a weak scalar (a float32 array stays float32).
  const bool weak = !q_in.is_array();
  Array q;
  double qd = 0;
  bool q_integer = false;
  if (weak) {
    const Scalar& sc = q_in.scalar();
    if (sc.kind() == ScalarKind::boolean) throw TypeError(std::string(what) + ": q must be a number, not a bool");
    q_integer = sc.kind() == ScalarKind::integer && !percent;  // percentile divides: a float
    qd = percent ? sc.as_double() / 100 : sc.as_double();
    if (!(qd >= 0 && qd <= 1)) throw ValueError(range_error);
  } else {
    q = q_in.array();
    if (!(q.device() == a.device())) throw DeviceMismatch(what, a.device().str(), q.device().str());
    if (q.ndim() > 1)
      throw ValueError(std::string(what) + ": q must be a number or a 0-d or 1-D array, got shape " + shape_text(q));
    if (q.dtype() == DType::bool_) throw TypeError(std::string(what) + ": q must hold numbers, got bool");
    if (percent) q = divide(q, 100);
    if (q.size() > 0 && !all(logical_and(greater_equal(q, 0), less_equal(q, 1))).item<bool>())
      throw ValueError(range_error);
    q_integer = !is_float(q.dtype());
  }
  const Folded f = fold(a, axes, what);
  if (f.n == 0)
    throw IndexError(std::string(what) +
                     ": the reduced axes are empty (index -1 is out of bounds for axis 0 "
                     "with size 0, as NumPy says)");
  const Array s = sort(f.x, -1);
  const int last_axis = s.ndim() - 1;
  const Device dev = a.device();
  Array r;
  const bool discrete =
      method == QuantileMethod::lower || method == QuantileMethod::higher || method == QuantileMethod::nearest;
  if (method == QuantileMethod::midpoint && q_integer) {  // NumPy interpolates: a float result
    q_integer = false;
    if (!weak) q = q.astype(DType::float64);
  }
  if (discrete) {
    // The element at (n - 1) q rounded down, up, or to the nearest (half to even), in a's dtype.
    const auto pick = [method](const Array& v) {
      return method == QuantileMethod::lower ? floor(v) : method == QuantileMethod::higher ? ceil(v) : round(v);
    };
    if (weak) {
      const double vi = static_cast<double>(f.n - 1) * qd;
      const double k = method == QuantileMethod::lower    ? std::floor(vi)
                       : method == QuantileMethod::higher ? std::ceil(vi)
                                                          : std::nearbyint(vi);
      r = take(s, full({}, std::min<i64>(static_cast<i64>(k), f.n - 1), DType::int64, dev), last_axis);
    } else {
      const Array vi = q_integer ? q.astype(DType::int64) * (f.n - 1) : pick(q * (f.n - 1));
      r = take(s, minimum(vi.astype(DType::int64), f.n - 1), last_axis);
    }
  } else if (q_integer) {
    // Integer virtual indices: the elements themselves, in a's dtype (NumPy takes them).
    const Array vi = weak ? full({}, static_cast<i64>(qd) * (f.n - 1), DType::int64, dev)
                          : (q.astype(DType::int64) * (f.n - 1)).eval();
    r = take(s, vi, last_axis);
  } else if (weak) {
    const double vi = static_cast<double>(f.n - 1) * qd;
    i64 below = 0, above = 0;
    if (vi >= static_cast<double>(f.n - 1)) {
      below = above = -1;
    } else if (vi >= 0) {
      below = static_cast<i64>(std::floor(vi));
      above = below + 1;
    }
    double gamma = vi - static_cast<double>(below);
    if (method == QuantileMethod::midpoint) gamma = vi == std::floor(vi) ? 0.0 : 0.5;
    const Array lo = take(s, full({}, below, DType::int64, dev), last_axis);
    const Array hi = take(s, full({}, above, DType::int64, dev), last_axis);
    const Array diff = hi - lo;
    r = gamma >= 0.5 ? hi - diff * (1 - gamma) : lo + diff * gamma;
  } else {
    const Array vi = (q * (f.n - 1)).eval();
    const Array prev = floor(vi);
    const Array top = logical_or(greater_equal(vi, f.n - 1), isnan(vi)), bottom = less(vi, 0);
    const Array below = where(top, -1, where(bottom, 0, prev)).astype(DType::int64);
    const Array above = where(top, -1, where(bottom, 0, prev + 1)).astype(DType::int64);
    Array gamma = (vi.astype(DType::float64) - below.astype(DType::float64)).astype(vi.dtype());
    if (method == QuantileMethod::midpoint) gamma = where(equal(vi, prev), 0.0, 0.5).astype(vi.dtype());
    const Array lo = take(s, below, last_axis), hi = take(s, above, last_axis);
    const Array diff = hi - lo;
    const Array lerp = lo + diff * gamma;
    r = where(greater_equal(gamma, 0.5), hi - diff * (1 - gamma), lerp).astype(lerp.dtype());
  }
  const bool one_d = !weak && q.ndim() == 1;
  if (is_float(t)) {
    Array last = last_of(s);
    if (one_d) last = expand_dims(last, -1);
    r = where(isnan(last), last, r).astype(r.dtype());
  }
  if (one_d) r = moveaxis(r, -1, 0);
  if (!keepdims) return r.eval();
  Shape ks = f.keepdim;
  if (one_d) ks.insert(ks.begin(), q.shape(0));
  return reshape(r, ks);
}

}  // namespace

Array quantile(const Array& a, const Operand& q, const Axes& axes, bool keepdims, std::string_view method) {
  return quantile_impl(a, q, false, axes, keepdims, method);
}
Array percentile(const Array& a, const Operand& q, const Axes& axes, bool keepdims, std::string_view method) {
  return quantile_impl(a, q, true, axes, keepdims, method);
}

// ---- partial sorts, counts and histograms --------------------------------------------------------

namespace {

void check_kth(const Array& a, const std::vector<i64>& kth, int axis, const char* what) {
  if (a.ndim() == 0)
    throw ValueError(std::string(what) + ": axis " + std::to_string(axis) +
                     " is out of bounds for array of dimension 0");
  const i64 n = a.shape(detail::normalize_axis(axis, a.ndim(), what));
  for (i64 k : kth)
    if (k < -n || k >= n)
      throw ValueError(std::string(what) + ": kth(=" + std::to_string(k) + ") out of bounds (" + std::to_string(n) +
                       ")");
}

}  // namespace

Array partition(const Array& a, const std::vector<std::int64_t>& kth, int axis) {
  check_kth(a, kth, axis, "partition");
  return sort(a, axis);
}

Array argpartition(const Array& a, const std::vector<std::int64_t>& kth, int axis) {
  check_kth(a, kth, axis, "argpartition");
  return argsort(a, axis);
}

Array bincount(const Array& x, const std::optional<Array>& weights, std::int64_t minlength) {
  if (x.ndim() != 1) throw ValueError("bincount: x must be 1-D, got shape " + shape_text(x));
  const DTypeKind k = kind(x.dtype());
  if (k == DTypeKind::floating || x.dtype() == DType::uint64)
    throw TypeError("bincount: x must hold integers that fit int64, got " + std::string(name(x.dtype())));
  if (minlength < 0) throw ValueError("bincount: minlength must be non-negative, got " + std::to_string(minlength));
  const Device dev = x.device();
  if (weights) {
    if (!(weights->device() == dev)) throw DeviceMismatch("bincount", dev.str(), weights->device().str());
    if (kind(weights->dtype()) == DTypeKind::complex_floating)  // NumPy casts them to float64 'safe'
      throw TypeError("bincount: weights must be real, got " + std::string(name(weights->dtype())));
    if (!std::equal(x.shape().begin(), x.shape().end(), weights->shape().begin(), weights->shape().end()))
      throw ValueError("bincount: weights must have x's shape " + shape_text(x) + ", got " + shape_text(*weights));
  }
  const i64 n = x.size();
  const Array xi = x.astype(DType::int64);
  i64 len = minlength;
  if (n > 0) {
    if (any(less(xi, 0)).item<bool>()) throw ValueError("bincount: x must not hold negative values");
    len = std::max(len, max(xi).item<i64>() + 1);
  }
  if (!weights) {
    Array out = zeros({len}, DType::int64, dev);
    if (n > 0) {
      const UniqueCounts u = unique_counts(xi);
      out.set({Index(u.values)}, u.counts);
    }
    return out;
  }
  Array out = zeros({len}, DType::float64, dev);
  if (n == 0) return out;
  // The weights of each value summed by a segmented scan over the values sorted: log2(n) passes of
  // exact elementwise steps (each element adds the one d before it when both hold the same value),
  // so the sums are the same on every device.
  const Array order = argsort(xi);
  const Array keys = take(xi, order);
  Array w = take(weights->astype(DType::float64), order);
  for (i64 d = 1; d < n; d *= 2) {
    const Array head = w.slice({Slice(std::nullopt, d)});
    const Array tail = w.slice({Slice(d, std::nullopt)}), before = w.slice({Slice(std::nullopt, n - d)});
    const Array same = equal(keys.slice({Slice(d, std::nullopt)}), keys.slice({Slice(std::nullopt, n - d)}));
    w = concat({head, where(same, tail + before, tail)});
  }
  // The last element of each run holds its value's sum.
  const Array run_end =
      concat({not_equal(keys.slice({Slice(std::nullopt, n - 1)}), keys.slice({Slice(1, std::nullopt)})),
              full({1}, true, DType::bool_, dev)});
  const Array ends = nonzero(run_end)[0];
  out.set({Index(take(keys, ends))}, take(w, ends));
  return out;
}

namespace {

// np.linspace(start, stop, num) computed in start's dtype as NumPy computes it (num >= 2).
Array linspace_like_numpy(const Array& start, const Array& stop, i64 num) {
  const i64 div = num - 1;
  const Array delta = stop - start;
  const Array step = delta / div;
  Array y = arange(0, num, 1, start.dtype(), start.device());
  y = equal(step, 0).item<bool>() ? (y / div) * delta : y * step;
  y = (y + start).eval();
  y.set({Index(num - 1)}, stop);
  return y;
}

}  // namespace

namespace {

// np.histogram's equal bins: the edges, and what counting into them needs.
struct EqualBins {
  Array edges;
  Array flat;  // a as 1-D
  DType bin_type = DType::float64;
  double first = 0, last = 1, denom = 1;
};

EqualBins equal_bins(const Array& a, std::int64_t bins, const std::optional<std::pair<double, double>>& range) {
  if (bins < 1) throw ValueError("histogram: bins must be positive, got " + std::to_string(bins));
  const DType t = a.dtype();
  if (t == DType::bool_) throw TypeError("histogram: a must hold numbers, got bool");
  if (bins > std::numeric_limits<i64>::max() - 1) throw ValueError("histogram: too many bins");
  const Device dev = a.device();
  const Array flat = reshape(a, {-1});
  // NumPy's edges and their dtype (np.histogram_bin_edges): `range` is two Python floats (weak);
  // without it, a's minimum and maximum as a's own scalars, widened by 0.5 each way when equal.
  const bool float_a = is_float(t);
  const DType bin_type = float_a ? t : DType::float64;
  double first = 0, last = 1, denom = 1;
  bool in_bin_type = false;  // the edges are values of bin_type (linspace computes in it)
  if (range) {
    first = range->first;
    last = range->second;
    if (first > last) throw ValueError("histogram: max must be larger than min in range parameter");
    if (!std::isfinite(first) || !std::isfinite(last))
      throw ValueError("histogram: supplied range of [" + std::to_string(first) + ", " + std::to_string(last) +
                       "] is not finite");
    if (first == last) {
      first -= 0.5;
      last += 0.5;
    }
    denom = last - first;
  } else if (flat.size() > 0) {
    const Array lo = min(flat), hi = max(flat);
    if (float_a) {
      first = lo.item<double>();
      last = hi.item<double>();
      if (!std::isfinite(first) || !std::isfinite(last))
        throw ValueError("histogram: autodetected range of [" + std::to_string(first) + ", " + std::to_string(last) +
                         "] is not finite");
      in_bin_type = true;
      if (first == last) {  // in a's dtype, as NumPy's scalar arithmetic
        first = (full({}, first, t, dev) - 0.5).item<double>();
        last = (full({}, last, t, dev) + 0.5).item<double>();
      }
      denom = (full({}, last, t, dev) - full({}, first, t, dev)).item<double>();
    } else {
      // Integers: the extremes as Python ints (uint64 read unsigned: past 2^63 an int64 would
      // wrap), the width by an unsigned subtraction, as NumPy's.
      const bool u64 = t == DType::uint64;
      const std::uint64_t l =
          u64 ? lo.item<std::uint64_t>() : static_cast<std::uint64_t>(lo.astype(DType::int64).item<i64>());
      const std::uint64_t h =
          u64 ? hi.item<std::uint64_t>() : static_cast<std::uint64_t>(hi.astype(DType::int64).item<i64>());
      first = u64 ? static_cast<double>(l) : static_cast<double>(static_cast<i64>(l));
      last = u64 ? static_cast<double>(h) : static_cast<double>(static_cast<i64>(h));
      if (l == h) {
        first -= 0.5;
        last += 0.5;
        denom = 1;
      } else {
        denom = static_cast<double>(h - l);
      }
    }
  }
  const DType lin_type = in_bin_type ? bin_type : DType::float64;
  const Array edges =
      linspace_like_numpy(full({}, first, lin_type, dev), full({}, last, lin_type, dev), bins + 1).astype(bin_type);
  if (any(greater_equal(edges.slice({Slice(std::nullopt, bins)}), edges.slice({Slice(1, std::nullopt)}))).item<bool>())
    throw ValueError("histogram: too many bins for data range: cannot create " + std::to_string(bins) +
                     " finite-sized bins");
  return {edges, flat, bin_type, first, last, denom};
}

// counts / (sum(counts) * widths) in float64, as NumPy's n / db / n.sum().
Array density_of(const Array& counts, const Array& edges) {
  const i64 nb = counts.shape(0);
  const Array widths =
      subtract(edges.slice({Slice(1, std::nullopt)}), edges.slice({Slice(std::nullopt, nb)})).astype(DType::float64);
  return divide(divide(counts.astype(DType::float64), widths), sum(counts)).eval();
}

}  // namespace

Histogram histogram(const Array& a, std::int64_t bins, const std::optional<std::pair<double, double>>& range,
                    bool density) {
  const EqualBins eb = equal_bins(a, bins, range);
  const Array& flat = eb.flat;
  const Array& edges = eb.edges;
  const DType bin_type = eb.bin_type;
  const double first = eb.first, last = eb.last, denom = eb.denom;
  const Device dev = a.device();
  // NumPy's counting: each value's bin computed, then moved by one where it lies across an edge.
  const Array keep = logical_and(greater_equal(flat, first), less_equal(flat, last));
  const Array v = detail::masked(flat, keep).astype(bin_type);
  Array counts;
  if (v.size() == 0) {
    counts = zeros({bins}, DType::int64, dev);
  } else {
    Array ix = multiply(divide(subtract(v, first), denom), bins).astype(DType::int64);
    ix = where(equal(ix, bins), bins - 1, ix).eval();
    ix = where(less(v, take(edges, ix)), ix - 1, ix).eval();
    const Array up = logical_and(greater_equal(v, take(edges, (ix + 1).eval())), not_equal(ix, bins - 1));
    ix = where(up, ix + 1, ix).eval();
    counts = bincount(ix, std::nullopt, bins);
  }
  if (density) return {density_of(counts, edges), edges};
  return {counts, edges};
}

Array histogram_bin_edges(const Array& a, std::int64_t bins, const std::optional<std::pair<double, double>>& range) {
  return equal_bins(a, bins, range).edges;
}

Histogram histogram(const Array& a, const Array& bins, bool density) {
  if (a.dtype() == DType::bool_) throw TypeError("histogram: a must hold numbers, got bool");
  if (bins.ndim() != 1)
    throw ValueError("histogram: bins must be 1d, when an array (got shape " + shape_text(bins) + ")");
  if (bins.dtype() == DType::bool_) throw TypeError("histogram: bins must hold numbers, got bool");
  if (!(bins.device() == a.device())) throw DeviceMismatch("histogram", a.device().str(), bins.device().str());
  const i64 ne = bins.shape(0);
  if (ne < 2) return {zeros({0}, density ? DType::float64 : DType::int64, a.device()), bins};
  if (any(greater(bins.slice({Slice(std::nullopt, ne - 1)}), bins.slice({Slice(1, std::nullopt)}))).item<bool>())
    throw ValueError("histogram: bins must increase monotonically, when an array");
  // NumPy's counting for edges given: a sorted (NaNs last), the number of values below each edge
  // but the last and at or below the last, and their differences.
  const Array sa = sort(reshape(a, {-1}));
  const Array below = searchsorted(sa, bins.slice({Slice(std::nullopt, ne - 1)}), Side::left);
  const Array upto = searchsorted(sa, bins.slice({Slice(ne - 1, std::nullopt)}), Side::right);
  const Array cum = concat({below, upto});
  const Array counts = subtract(cum.slice({Slice(1, std::nullopt)}), cum.slice({Slice(std::nullopt, ne - 1)})).eval();
  if (density) return {density_of(counts, bins), bins};
  return {counts, bins};
}

// ---- padding -------------------------------------------------------------------------------------

Array pad(const Array& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& pad_width, const std::string& mode,
          const Scalar& constant_value) {
  const int nd = a.ndim();
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "symmetric" && mode != "wrap")
    throw ValueError("pad: mode must be 'constant', 'edge', 'reflect', 'symmetric' or 'wrap', got '" + mode + "'");
  if (pad_width.size() != 1 && pad_width.size() != static_cast<std::size_t>(nd))
    throw ValueError("pad: pad_width needs one (before, after) pair or one per axis (" + std::to_string(nd) +
                     "), got " + std::to_string(pad_width.size()));
  std::vector<std::pair<i64, i64>> widths(static_cast<std::size_t>(nd));
  Shape out_shape = shape_of(a);
  for (int d = 0; d < nd; ++d) {
    const auto du = static_cast<std::size_t>(d);
    widths[du] = pad_width.size() == 1 ? pad_width[0] : pad_width[du];
    const auto [before, after] = widths[du];
    if (before < 0 || after < 0) throw ValueError("pad: pad_width can't contain negative values");
    i64 total = 0;
    if (!detail::checked_add(before, after, total) || !detail::checked_add(total, out_shape[du], total))
      throw ValueError("pad: the padded extent of axis " + std::to_string(d) + " does not fit int64");
    if (mode != "constant" && a.shape(d) == 0 && total > 0)
      throw ValueError("pad: can't extend empty axis " + std::to_string(d) + " using modes other than 'constant'");
    out_shape[du] = total;
  }
  detail::checked_size(out_shape);
  if (mode == "constant") {
    // The value converted to a's dtype as NumPy converts it (astype), then a written inside.
    const Array fill = full({}, constant_value, std::nullopt, a.device()).astype(a.dtype());
    Array out = broadcast_to(fill, out_shape).copy();
    std::vector<Index> inner;
    for (int d = 0; d < nd; ++d) {
      const auto du = static_cast<std::size_t>(d);
      inner.emplace_back(Slice(widths[du].first, widths[du].first + a.shape(d)));
    }
    out.slice(std::span<const Index>(inner)).assign(a);
    return out;
  }
  // Every other mode is a `take` per axis of host-made source positions.
  Array out = a;
  for (int d = 0; d < nd; ++d) {
    const auto du = static_cast<std::size_t>(d);
    const auto [before, after] = widths[du];
    if (before == 0 && after == 0) continue;
    const i64 n = a.shape(d);
    std::vector<i64> src(static_cast<std::size_t>(out_shape[du]));
    for (i64 j = 0; j < out_shape[du]; ++j) {
      const i64 p = j - before;  // the position relative to a's first element
      i64 s = 0;
      if (mode == "edge") {
        s = std::clamp<i64>(p, 0, n - 1);
      } else if (mode == "wrap") {
        s = ((p % n) + n) % n;
      } else if (mode == "reflect") {
        if (n > 1) {
          const i64 period = 2 * (n - 1);
          s = ((p % period) + period) % period;
          if (s >= n) s = period - s;
        }
      } else {  // symmetric
        const i64 period = 2 * n;
        s = ((p % period) + period) % period;
        if (s >= n) s = period - 1 - s;
      }
      src[static_cast<std::size_t>(j)] = s;
    }
    out = take(out, index_array(src, a.device()), d);
  }
  return out.valid() && out.impl() == a.impl() ? a.copy() : out;
}

}  // namespace xp
