// The draws of xp::random::Generator composed of its others (xp/array.hpp): permutation, shuffle,
// choice (weighted too), exponential, gamma, poisson and binomial, from integers, uniform and normal
// with argsort, searchsorted and take, so that they need no backend code and give the same numbers
// on every device wherever those do.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "array/array_impl.hpp"
#include "xp/error.hpp"
#include "xp/sorting.hpp"

namespace xp {

namespace random {

Array Generator::permutation(std::int64_t n, const DeviceArg& device) {
  if (n < 0) throw ValueError("permutation: n must be non-negative, got " + std::to_string(n));
  // Keys in [0, 2^63 - 1); the argsort is stable, so even equal keys give one answer.
  const Array keys = integers(0, std::numeric_limits<std::int64_t>::max(), {n}, DType::int64, device);
  return argsort(keys);
}

Array Generator::permutation(const Array& x, int axis) {
  if (x.ndim() == 0) throw ValueError("permutation: x must have at least one dimension (or pass an int)");
  const int ax = detail::normalize_axis(axis, x.ndim(), "permutation");
  return take(x, permutation(x.shape(ax), x.device()), ax);
}

void Generator::shuffle(const Array& x, int axis) {
  if (x.ndim() == 0) throw ValueError("shuffle: x must have at least one dimension");
  if (x.is_read_only()) throw ValueError("shuffle: the array is read-only (it wraps memory given as read-only)");
  const Array shuffled = permutation(x, axis);
  x.assign(shuffled);
}

Array Generator::choice(const Array& x, const std::optional<Shape>& size, bool replace, int axis) {
  if (x.ndim() == 0) throw ValueError("choice: a must be 1-dimensional or an integer");
  const int ax = detail::normalize_axis(axis, x.ndim(), "choice");
  const std::int64_t n = x.shape(ax);
  const Shape shape = size ? *size : Shape{};
  const std::int64_t k = detail::checked_size(shape);
  if (n == 0 && k > 0) throw ValueError("choice: a cannot be empty unless no samples are taken");
  if (!replace && k > n)
    throw ValueError("choice: cannot take a larger sample (" + std::to_string(k) + ") than the population (" +
                     std::to_string(n) + ") when replace is false");
  Array ix;
  if (k == 0)
    ix = empty(shape, DType::int64, x.device());
  else if (replace)
    ix = integers(0, n, shape, DType::int64, x.device());
  else
    ix = reshape(permutation(n, x.device()).slice({Slice(std::nullopt, k)}), shape);
  return take(x, ix, ax);
}

Array Generator::choice(std::int64_t n, const std::optional<Shape>& size, bool replace, const DeviceArg& device) {
  if (n < 0) throw ValueError("choice: a must be a non-negative integer, got " + std::to_string(n));
  if (replace) {
    // take(arange(n), integers(0, n)) without the arange: the same numbers from the same stream, in
    // memory and time of the sample, not of the population (choice(2**40, 3) asked for 8 TB).
    const Shape shape = size ? *size : Shape{};
    const std::int64_t k = detail::checked_size(shape);
    if (n == 0 && k > 0) throw ValueError("choice: a cannot be empty unless no samples are taken");
    if (k == 0) return empty(shape, DType::int64, device);
    return integers(0, n, shape, DType::int64, device);
  }
  return choice(arange(0, n, 1, DType::int64, device), size, replace, 0);
}

namespace {

using i64 = std::int64_t;

// The running sum of weights w (non-negative, not all 0) divided by its last value, so that the
// last is exactly 1: the table searchsorted(table, u, right) inverts for u in [0, 1).
Array cdf_table(const std::vector<double>& w, const Device& device) {
  std::vector<double> cdf(w.size());
  double run = 0;
  for (std::size_t i = 0; i < w.size(); ++i) cdf[i] = run += w[i];
  for (double& c : cdf) c /= run;
  return asarray(cdf.data(), cdf.size(), DType::float64, Shape{static_cast<i64>(cdf.size())}, device);
}

// Relative weights of a discrete distribution around its mode m (weight 1), extended by the ratios
// up(k) = w(k + 1) / w(k) and down(k) = w(k - 1) / w(k) while they stay above 1e-20 and inside
// [lo, hi]. Returns the first k and the weights from it.
template <class Up, class Down>
std::pair<i64, std::vector<double>> weights_around(i64 m, i64 lo, i64 hi, Up up, Down down) {
  constexpr double kTail = 1e-20;
  std::vector<double> below, above;
  double w = 1;
  for (i64 k = m; k > lo;) {
    w *= down(k);
    --k;
    if (!(w >= kTail)) break;
    below.push_back(w);
  }
  w = 1;
  for (i64 k = m; k < hi;) {
    w *= up(k);
    ++k;
    if (!(w >= kTail)) break;
    above.push_back(w);
  }
  std::vector<double> all(below.rbegin(), below.rend());
  all.push_back(1);
  all.insert(all.end(), above.begin(), above.end());
  return {m - static_cast<i64>(below.size()), std::move(all)};
}

// The largest variance the inversion tables serve (about 2 million entries at most).
constexpr double kMaxVariance = 1e10;

}  // namespace

Array Generator::choice(const Array& x, const std::optional<Shape>& size, bool replace, const Array& p, int axis) {
  if (x.ndim() == 0) throw ValueError("choice: a must be 1-dimensional or an integer");
  const int ax = detail::normalize_axis(axis, x.ndim(), "choice");
  const i64 n = x.shape(ax);
  const Shape shape = size ? *size : Shape{};
  const i64 k = detail::checked_size(shape);
  if (p.ndim() != 1) throw ValueError("choice: p must be 1-dimensional");
  if (p.shape(0) != n)
    throw ValueError("choice: a and p must have same size (" + std::to_string(n) + " and " +
                     std::to_string(p.shape(0)) + ")");
  if (kind(p.dtype()) != DTypeKind::floating && kind(p.dtype()) != DTypeKind::signed_integer &&
      kind(p.dtype()) != DTypeKind::unsigned_integer)
    throw TypeError("choice: p must hold real numbers, got " + std::string(name(p.dtype())));
  if (n == 0 && k > 0) throw ValueError("choice: a cannot be empty unless no samples are taken");
  std::vector<double> w = p.to_vector<double>();
  double total = 0;
  i64 positive = 0;
  for (double v : w) {
    if (std::isnan(v)) throw ValueError("choice: probabilities contain NaN");
    if (v < 0) throw ValueError("choice: probabilities are not non-negative");
    total += v;
    positive += v > 0;
  }
  // NumPy's tolerance: sqrt of the float64 epsilon, or of p's own where that is larger.
  double atol = std::sqrt(std::numeric_limits<double>::epsilon());
  if (kind(p.dtype()) == DTypeKind::floating) atol = std::max(atol, std::sqrt(finfo(p.dtype()).eps));
  if (n > 0 && !(std::fabs(total - 1) <= atol)) throw ValueError("choice: probabilities do not sum to 1");
  if (!replace && k > n)
    throw ValueError("choice: cannot take a larger sample (" + std::to_string(k) + ") than the population (" +
                     std::to_string(n) + ") when replace is false");
  if (!replace && positive < k) throw ValueError("choice: fewer non-zero entries in p than size");
  const Device dev = x.device();
  if (k == 0) return take(x, empty(shape, DType::int64, dev), ax);
  if (replace) {
    const Array u = uniform(shape, DType::float64, 0, 1, dev);
    return take(x, searchsorted(cdf_table(w, dev), u, Side::right), ax);
  }
  // NumPy's rounds: k - found draws, the first occurrence of each new index kept in draw order,
  // the found ones' weights set to 0 for the next round.
  std::vector<i64> found;
  std::vector<bool> taken(static_cast<std::size_t>(n), false);
  while (static_cast<i64>(found.size()) < k) {
    const i64 want = k - static_cast<i64>(found.size());
    const Array u = uniform({want}, DType::float64, 0, 1, dev);
    const std::vector<i64> drawn = searchsorted(cdf_table(w, dev), u, Side::right).to_vector<i64>();
    for (i64 i : drawn) {
      const auto iu = static_cast<std::size_t>(i);
      if (taken[iu]) continue;
      taken[iu] = true;
      w[iu] = 0;
      found.push_back(i);
    }
  }
  const Array ix = asarray(found.data(), found.size(), DType::int64, Shape{k}, dev);
  return take(x, reshape(ix, shape), ax);
}

Array Generator::choice(std::int64_t n, const std::optional<Shape>& size, bool replace, const Array& p,
                        const DeviceArg& device) {
  if (n < 0) throw ValueError("choice: a must be a non-negative integer, got " + std::to_string(n));
  return choice(arange(0, n, 1, DType::int64, device), size, replace, p, 0);
}

Array Generator::gamma(double shape_k, double scale, const Shape& size, DType dtype, const DeviceArg& device) {
  if (kind(dtype) != DTypeKind::floating)
    throw TypeError("gamma: needs a float dtype, got " + std::string(name(dtype)));
  if (!(shape_k >= 0) || !std::isfinite(shape_k)) throw ValueError("gamma: shape must be non-negative and finite");
  if (!(scale >= 0) || !std::isfinite(scale)) throw ValueError("gamma: scale must be non-negative and finite");
  detail::checked_size(size);
  if (shape_k == 0 || scale == 0) return zeros(size, dtype, device);
  // Marsaglia and Tsang (2000): with d = k - 1/3, c = 1 / sqrt(9 d), x normal and v = (1 + c x)^3,
  // d v is a gamma(k) draw where v > 0 and log(u) < x^2 / 2 + d - d v + d log(v). Every round
  // draws whole arrays; the elements still pending take the first round that accepts them.
  const bool boost = shape_k < 1;  // gamma(k) = gamma(k + 1) * u^(1/k)
  const double k1 = boost ? shape_k + 1 : shape_k;
  const double d = k1 - 1.0 / 3.0, c = 1 / std::sqrt(9 * d);
  Array result = zeros(size, DType::float64, device);
  Array pending = full(size, true, DType::bool_, device);
  for (;;) {
    const Array x = normal(size, DType::float64, 0, 1, device);
    const Array u = uniform(size, DType::float64, 0, 1, device);
    const Array t = 1 + c * x;
    const Array v = (t * t * t).eval();
    const Array ok = logical_and(greater(t, 0), less(log(u), 0.5 * x * x + d - d * v + d * log(v)));
    result = where(logical_and(pending, ok), d * v, result).eval();
    pending = logical_and(pending, logical_not(ok)).eval();
    if (!any(pending).item<bool>()) break;
  }
  if (boost) result = result * pow(uniform(size, DType::float64, 0, 1, device), 1 / shape_k);
  if (scale != 1) result = result * scale;
  return (dtype == DType::float64 ? result : result.astype(dtype)).eval();
}

Array Generator::poisson(double lam, const Shape& size, const DeviceArg& device) {
  if (!(lam >= 0)) throw ValueError("poisson: lam must be non-negative, got " + std::to_string(lam));
  if (!(lam <= kMaxVariance))
    throw ValueError("poisson: lam = " + std::to_string(lam) + " is above xp's limit of 1e10");
  detail::checked_size(size);
  if (lam == 0) return zeros(size, DType::int64, device);
  // Weights w(k) proportional to lam^k / k!, from the mode floor(lam).
  const auto m = static_cast<i64>(std::floor(lam));
  const auto [k0, w] = weights_around(
      m, 0, std::numeric_limits<i64>::max(), [lam](i64 k) { return lam / static_cast<double>(k + 1); },
      [lam](i64 k) { return static_cast<double>(k) / lam; });
  const Array u = uniform(size, DType::float64, 0, 1, device);
  const Device dev = u.device();
  return (searchsorted(cdf_table(w, dev), u, Side::right) + k0).eval();
}

Array Generator::binomial(std::int64_t n, double p, const Shape& size, const DeviceArg& device) {
  if (n < 0) throw ValueError("binomial: n must be non-negative, got " + std::to_string(n));
  if (!(p >= 0 && p <= 1)) throw ValueError("binomial: p must be in [0, 1], got " + std::to_string(p));
  const double nd = static_cast<double>(n);
  if (!(nd * p * (1 - p) <= kMaxVariance))
    throw ValueError("binomial: n p (1 - p) = " + std::to_string(nd * p * (1 - p)) + " is above xp's limit of 1e10");
  detail::checked_size(size);
  if (n == 0 || p == 0) return zeros(size, DType::int64, device);
  if (p == 1) return full(size, n, DType::int64, device);
  // Weights w(k) proportional to C(n, k) p^k (1 - p)^(n - k), from the mode floor((n + 1) p).
  const double r = p / (1 - p);
  const i64 m = std::min<i64>(n, static_cast<i64>(std::floor((nd + 1) * p)));
  const auto [k0, w] = weights_around(
      m, 0, n, [n, r](i64 k) { return static_cast<double>(n - k) / static_cast<double>(k + 1) * r; },
      [n, r](i64 k) { return static_cast<double>(k) / static_cast<double>(n - k + 1) / r; });
  const Array u = uniform(size, DType::float64, 0, 1, device);
  const Device dev = u.device();
  return (searchsorted(cdf_table(w, dev), u, Side::right) + k0).eval();
}

Array Generator::exponential(const Shape& shape, DType dtype, double scale, const DeviceArg& device) {
  if (kind(dtype) != DTypeKind::floating)
    throw TypeError("exponential: needs a float dtype, got " + std::string(name(dtype)));
  if (!(scale >= 0) || !std::isfinite(scale)) throw ValueError("exponential: scale must be non-negative and finite");
  // 16-bit floats from float32 draws (a 16-bit u would take only a few hundred values).
  const DType work = dtype == DType::float64 ? DType::float64 : DType::float32;
  const Array u = uniform(shape, work, 0, 1, device);
  Array e = negative(log1p(negative(u)));
  if (scale != 1) e = e * scale;
  return (work == dtype ? e : e.astype(dtype)).eval();
}

}  // namespace random

}  // namespace xp
