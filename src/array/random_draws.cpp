// The draws of xp::random::Generator composed of its others (xp/array.hpp): permutation, shuffle,
// choice and exponential, from integers and uniform with argsort and take, so that they need no
// backend code and give the same numbers on every device wherever those do.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

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
  return choice(arange(0, n, 1, DType::int64, device), size, replace, 0);
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
