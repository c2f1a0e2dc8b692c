// The Array API's fft extension (xp/fft.hpp) with numpy.fft's semantics: every function is made of
// 1-D transforms along one axis, each a call of Backend::fft on a C-contiguous copy with that axis
// last. Where a device's backend cannot (its library is missing) the transform runs on the CPU and
// the result is copied back.
#include "xp/fft.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "array/array_impl.hpp"
#include "xp/error.hpp"

namespace xp::fft {

using detail::FftCall;
using detail::FftKind;
using detail::ImplPtr;

Norm norm_from_string(std::string_view name) {
  if (name == "backward") return Norm::backward;
  if (name == "ortho") return Norm::ortho;
  if (name == "forward") return Norm::forward;
  throw ValueError("fft: norm must be \"backward\", \"ortho\" or \"forward\", not \"" + std::string(name) + "\"");
}

namespace {

// The complex dtype a transform of x computes in. Real floats become complex of their precision
// (float16 and bfloat16: complex64, as NumPy's float16); integers and bools are a TypeError (the
// standard allows floating inputs only; NumPy would convert them to complex128).
DType complex_dtype(DType t, const char* what) {
  switch (t) {
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::complex64:
      return DType::complex64;
    case DType::float64:
    case DType::complex128:
      return DType::complex128;
    default:
      throw TypeError(std::string("fft.") + what + ": the input must have a floating-point dtype, not " +
                      std::string(name(t)));
  }
}

DType real_dtype(DType t, const char* what) {
  if (kind(t) == DTypeKind::complex_floating)
    throw TypeError(std::string("fft.") + what + ": the input must be real, not " + std::string(name(t)));
  return complex_dtype(t, what) == DType::complex64 ? DType::float32 : DType::float64;
}

DType real_of(DType complex) {
  return complex == DType::complex64 ? DType::float32 : DType::float64;
}

// The factor a transform of length n is multiplied by.
double scale_of(Norm norm, std::int64_t n, bool forward) {
  switch (norm) {
    case Norm::ortho:
      return 1.0 / std::sqrt(static_cast<double>(n));
    case Norm::forward:
      return forward ? 1.0 / static_cast<double>(n) : 1.0;
    case Norm::backward:
      break;
  }
  return forward ? 1.0 : 1.0 / static_cast<double>(n);
}

// hfft and ihfft: the transform in the other direction, so its norm swaps.
Norm swapped(Norm norm) {
  return norm == Norm::backward ? Norm::forward : norm == Norm::forward ? Norm::backward : Norm::ortho;
}

void check_length(std::int64_t n, const char* what) {
  if (n < 1)
    throw ValueError(std::string("fft.") + what + ": invalid number of data points (" + std::to_string(n) +
                     "): it must be at least 1");
}

int axis_of(const Array& x, int axis, const char* what) {
  if (x.ndim() == 0) throw ValueError(std::string("fft.") + what + ": the input must have at least one dimension");
  return detail::normalize_axis(axis, x.ndim(), (std::string("fft.") + what).c_str());
}

// x cut or zero-padded to length m along axis.
Array fit(const Array& x, int axis, std::int64_t m) {
  const std::int64_t cur = x.shape(axis);
  if (cur == m) return x;
  std::vector<Index> index(static_cast<std::size_t>(x.ndim()), Index(Slice()));
  if (cur > m) {
    index[static_cast<std::size_t>(axis)] = Slice(0, m);
    return x.slice(index);
  }
  Shape shape(x.shape().begin(), x.shape().end());
  shape[static_cast<std::size_t>(axis)] = m;
  Array z = zeros(shape, x.dtype(), x.device());
  index[static_cast<std::size_t>(axis)] = Slice(0, cur);
  z.set(index, x);
  return z;
}

// One batch of 1-D transforms along axis: x already has the input dtype (complex, or real for r2c)
// and the input length along axis (n, or n / 2 + 1 for c2r).
Array transform(const Array& x, int axis, FftKind kind, bool inverse, std::int64_t n, double scale, DType out_dtype) {
  const int nd = x.ndim();
  const bool move = axis != nd - 1;
  Array moved = move ? moveaxis(x, axis, -1) : x;
  const ImplPtr& m = detail::impl_of(moved);
  detail::materialize(*m);
  ImplPtr k = detail::view_of(*m).is_c_contiguous() ? m : detail::impl_of(moved.copy());
  Shape shape = k->shape;
  shape.back() = kind == FftKind::r2c ? n / 2 + 1 : n;
  ImplPtr o = detail::new_array(out_dtype, shape, k->device);
  Array result(o);
  if (o->size() > 0) {
    FftCall call;
    call.kind = kind;
    call.inverse = kind == FftKind::c2r ? true : kind == FftKind::r2c ? false : inverse;
    call.n = n;
    call.scale = scale;
    if (!detail::backend_for(k->device).fft(call, detail::view_of(*k), detail::view_of(*o))) {
      // This device's backend cannot: on the CPU, then back.
      const Device cpu = Device::cpu();
      Array kc = Array(k).to_device(cpu);
      Array oc = empty(Shape(shape), out_dtype, cpu);
      detail::backend_for(cpu).fft(call, detail::view_of(*detail::impl_of(kc)), detail::view_of(*detail::impl_of(oc)));
      result = oc.to_device(k->device);
    }
  }
  return move ? moveaxis(result, -1, axis) : result;
}

Array c2c(const Array& x, std::optional<std::int64_t> n, int axis, Norm norm, bool inverse, const char* what) {
  const DType t = complex_dtype(x.dtype(), what);
  const int ax = axis_of(x, axis, what);
  const std::int64_t m = n.value_or(x.shape(ax));
  check_length(m, what);
  Array xc = x.dtype() == t ? x : x.astype(t);
  return transform(fit(xc, ax, m), ax, FftKind::c2c, inverse, m, scale_of(norm, m, !inverse), t);
}

Array r2c(const Array& x, std::optional<std::int64_t> n, int axis, Norm norm, const char* what) {
  const DType t = real_dtype(x.dtype(), what);
  const int ax = axis_of(x, axis, what);
  const std::int64_t m = n.value_or(x.shape(ax));
  check_length(m, what);
  Array xr = x.dtype() == t ? x : x.astype(t);
  const DType ct = t == DType::float32 ? DType::complex64 : DType::complex128;
  return transform(fit(xr, ax, m), ax, FftKind::r2c, false, m, scale_of(norm, m, true), ct);
}

Array c2r(const Array& x, std::optional<std::int64_t> n, int axis, Norm norm, const char* what) {
  const DType t = complex_dtype(x.dtype(), what);
  const int ax = axis_of(x, axis, what);
  const std::int64_t m = n.value_or(2 * (x.shape(ax) - 1));
  check_length(m, what);
  Array xc = x.dtype() == t ? x : x.astype(t);
  return transform(fit(xc, ax, m / 2 + 1), ax, FftKind::c2r, true, m, scale_of(norm, m, false), real_of(t));
}

// NumPy's _cook_nd_args: the axes (default the last s.size(), or all) and the lengths (default the
// input's; -1 also means the input's; for irfftn the last one 2 (m - 1)), checked.
void nd_args(const Array& x, const std::optional<std::vector<std::int64_t>>& s,
             const std::optional<std::vector<int>>& axes, bool inverse_real, const char* what, std::vector<int>& ax,
             std::vector<std::int64_t>& len) {
  const int nd = x.ndim();
  ax.clear();
  if (axes) {
    for (int a : *axes) ax.push_back(detail::normalize_axis(a, nd, (std::string("fft.") + what).c_str()));
  } else {
    const int count = s ? static_cast<int>(s->size()) : nd;
    if (count > nd)
      throw ValueError(std::string("fft.") + what + ": s has " + std::to_string(count) + " lengths but the input has " +
                       std::to_string(nd) + " dimensions");
    for (int a = nd - count; a < nd; ++a) ax.push_back(a);
  }
  for (std::size_t i = 0; i < ax.size(); ++i)
    for (std::size_t j = i + 1; j < ax.size(); ++j)
      if (ax[i] == ax[j])
        throw ValueError(std::string("fft.") + what + ": axis " + std::to_string(ax[i]) + " is repeated in axes");
  if (s && s->size() != ax.size())
    throw ValueError(std::string("fft.") + what + ": s and axes must have the same length (" +
                     std::to_string(s->size()) + " and " + std::to_string(ax.size()) + ")");
  len.clear();
  for (std::size_t i = 0; i < ax.size(); ++i) {
    std::int64_t v = s ? (*s)[i] : -1;
    if (v == -1) {
      v = x.shape(ax[i]);
      if (inverse_real && i + 1 == ax.size()) v = 2 * (v - 1);
    }
    check_length(v, what);
    len.push_back(v);
  }
}

}  // namespace

Array fft(const Array& x, std::optional<std::int64_t> n, int axis, Norm norm) {
  return c2c(x, n, axis, norm, false, "fft");
}
Array ifft(const Array& x, std::optional<std::int64_t> n, int axis, Norm norm) {
  return c2c(x, n, axis, norm, true, "ifft");
}
Array rfft(const Array& x, std::optional<std::int64_t> n, int axis, Norm norm) {
  return r2c(x, n, axis, norm, "rfft");
}
Array irfft(const Array& x, std::optional<std::int64_t> n, int axis, Norm norm) {
  return c2r(x, n, axis, norm, "irfft");
}

// hfft(x) = irfft(conj(x)) with the norm's direction swapped; ihfft(x) = conj(rfft(x)), likewise.
Array hfft(const Array& x, std::optional<std::int64_t> n, int axis, Norm norm) {
  const DType t = complex_dtype(x.dtype(), "hfft");
  return c2r(conj(x.dtype() == t ? x : x.astype(t)), n, axis, swapped(norm), "hfft");
}
Array ihfft(const Array& x, std::optional<std::int64_t> n, int axis, Norm norm) {
  return conj(r2c(x, n, axis, swapped(norm), "ihfft"));
}

namespace {
Array c2c_nd(const Array& x, const std::optional<std::vector<std::int64_t>>& s,
             const std::optional<std::vector<int>>& axes, Norm norm, bool inverse, const char* what) {
  const DType t = complex_dtype(x.dtype(), what);
  std::vector<int> ax;
  std::vector<std::int64_t> len;
  nd_args(x, s, axes, false, what, ax, len);
  Array a = x.dtype() == t ? x : x.astype(t);
  for (std::size_t i = ax.size(); i-- > 0;) a = c2c(a, len[i], ax[i], norm, inverse, what);
  return a;
}
}  // namespace

Array fftn(const Array& x, const std::optional<std::vector<std::int64_t>>& s,
           const std::optional<std::vector<int>>& axes, Norm norm) {
  return c2c_nd(x, s, axes, norm, false, "fftn");
}
Array ifftn(const Array& x, const std::optional<std::vector<std::int64_t>>& s,
            const std::optional<std::vector<int>>& axes, Norm norm) {
  return c2c_nd(x, s, axes, norm, true, "ifftn");
}

// rfft along the last axis given, then complex transforms along the others (last to first).
Array rfftn(const Array& x, const std::optional<std::vector<std::int64_t>>& s,
            const std::optional<std::vector<int>>& axes, Norm norm) {
  const DType t = real_dtype(x.dtype(), "rfftn");
  std::vector<int> ax;
  std::vector<std::int64_t> len;
  nd_args(x, s, axes, false, "rfftn", ax, len);
  if (ax.empty()) return x.astype(t == DType::float32 ? DType::complex64 : DType::complex128);
  Array a = r2c(x, len.back(), ax.back(), norm, "rfftn");
  for (std::size_t i = ax.size() - 1; i-- > 0;) a = c2c(a, len[i], ax[i], norm, false, "rfftn");
  return a;
}

// Complex inverses along every axis but the last given (first to last), then irfft along it.
Array irfftn(const Array& x, const std::optional<std::vector<std::int64_t>>& s,
             const std::optional<std::vector<int>>& axes, Norm norm) {
  const DType t = complex_dtype(x.dtype(), "irfftn");
  std::vector<int> ax;
  std::vector<std::int64_t> len;
  nd_args(x, s, axes, true, "irfftn", ax, len);
  Array a = x.dtype() == t ? x : x.astype(t);
  if (ax.empty()) return real(a);
  for (std::size_t i = 0; i + 1 < ax.size(); ++i) a = c2c(a, len[i], ax[i], norm, true, "irfftn");
  return c2r(a, len.back(), ax.back(), norm, "irfftn");
}

namespace {
Array frequencies(std::int64_t n, double d, std::optional<DType> dtype, std::optional<Device> device, bool real_only,
                  const char* what) {
  if (n < 1) throw ValueError(std::string("fft.") + what + ": n must be at least 1, not " + std::to_string(n));
  const DType t = dtype.value_or(DType::float64);
  if (kind(t) != DTypeKind::floating)
    throw TypeError(std::string("fft.") + what + ": dtype must be a real floating-point dtype, not " +
                    std::string(name(t)));
  // As NumPy: the integers times 1 / (d n), in double.
  const double val = 1.0 / (static_cast<double>(n) * d);
  const std::int64_t count = real_only ? n / 2 + 1 : n;
  std::vector<double> v(static_cast<std::size_t>(count));
  const std::int64_t positive = (n - 1) / 2 + 1;
  for (std::int64_t i = 0; i < count; ++i)
    v[static_cast<std::size_t>(i)] = static_cast<double>(real_only || i < positive ? i : i - n) * val;
  Array r = asarray(v.data(), DType::float64, Shape{count}, device);
  return t == DType::float64 ? r : r.astype(t);
}

Array shift(const Array& x, const std::optional<std::vector<int>>& axes, bool inverse) {
  std::vector<int> ax;
  if (axes) {
    for (int a : *axes) ax.push_back(detail::normalize_axis(a, x.ndim(), inverse ? "fft.ifftshift" : "fft.fftshift"));
  } else {
    for (int a = 0; a < x.ndim(); ++a) ax.push_back(a);
  }
  if (ax.empty()) return x;
  std::vector<std::int64_t> by;
  for (int a : ax) by.push_back(inverse ? -(x.shape(a) / 2) : x.shape(a) / 2);
  return roll(x, by, ax);
}
}  // namespace

Array fftfreq(std::int64_t n, double d, std::optional<DType> dtype, std::optional<Device> device) {
  return frequencies(n, d, dtype, device, false, "fftfreq");
}
Array rfftfreq(std::int64_t n, double d, std::optional<DType> dtype, std::optional<Device> device) {
  return frequencies(n, d, dtype, device, true, "rfftfreq");
}
Array fftshift(const Array& x, const std::optional<std::vector<int>>& axes) {
  return shift(x, axes, false);
}
Array ifftshift(const Array& x, const std::optional<std::vector<int>>& axes) {
  return shift(x, axes, true);
}

}  // namespace xp::fft
