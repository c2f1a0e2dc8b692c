// Creating arrays: filled, ranges, host data, wrapped memory, .npy files, joins, gathers, random.

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

#include "array/array_impl.hpp"
#include "array/npy.hpp"

namespace xp {

using detail::impl_of;
using detail::ImplPtr;

namespace {

Device pick(const DeviceArg& d) {
  return d ? *d : default_device();
}

Array filled(const Shape& shape, DType dtype, const Device& device, const Scalar& value) {
  ImplPtr out = detail::new_array(dtype, shape, device);
  detail::evaluate_into(detail::scalar_node(value, dtype, device, out->backend, "full"), out);
  return Array(out);
}

// n host values, zeroed: "array is too big" (ValueError) past what an array may hold, and
// OutOfMemory (not std::bad_alloc) when the host cannot give them: at once past the machine's
// physical memory, which no allocation is then asked for.
template <class T>
std::vector<T> host_values(std::int64_t n) {
  detail::checked_size(Shape{n});
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * sizeof(T);
  static const std::uint64_t physical = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  }();
  if (physical > 0 && bytes > physical) throw OutOfMemory("cpu", bytes);
  try {
    return std::vector<T>(static_cast<std::size_t>(n));
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  throw OutOfMemory("cpu", static_cast<std::uint64_t>(n) * sizeof(T));
}

// Host values (double or int64 per element) converted to dtype on `device`.
template <class T>
Array from_host_values(const std::vector<T>& v, DType dtype, const Shape& shape, const Device& device) {
  Array host = asarray(v.data(), dtype_of<T>(), shape, Device::cpu());
  Array out = host.astype(dtype);
  return out.to_device(device);
}

}  // namespace

Array empty(const Shape& shape, DType dtype, const DeviceArg& device) {
  return Array(detail::new_array(dtype, shape, pick(device)));
}
Array zeros(const Shape& shape, DType dtype, const DeviceArg& device) {
  return filled(shape, dtype, pick(device), Scalar(0));
}
Array ones(const Shape& shape, DType dtype, const DeviceArg& device) {
  return filled(shape, dtype, pick(device), Scalar(1));
}
Array full(const Shape& shape, const Scalar& value, std::optional<DType> dtype, const DeviceArg& device) {
  const DType t = dtype ? *dtype : value.default_dtype();
  if (value.kind() == ScalarKind::integer && kind(t) != DTypeKind::floating && t != DType::bool_) {
    const bool fits = value.is_large_unsigned() ? value_fits(t, value.as_uint()) : value_fits(t, value.as_int());
    if (!fits) throw OverflowError("full: the fill value does not fit " + std::string(name(t)));
  }
  return filled(shape, t, pick(device), value);
}
Array empty_like(const Array& a, std::optional<DType> dtype) {
  return empty(Shape(a.shape().begin(), a.shape().end()), dtype ? *dtype : a.dtype(), a.device());
}
Array zeros_like(const Array& a, std::optional<DType> dtype) {
  return zeros(Shape(a.shape().begin(), a.shape().end()), dtype ? *dtype : a.dtype(), a.device());
}
Array ones_like(const Array& a, std::optional<DType> dtype) {
  return ones(Shape(a.shape().begin(), a.shape().end()), dtype ? *dtype : a.dtype(), a.device());
}
Array full_like(const Array& a, const Scalar& value, std::optional<DType> dtype) {
  return full(Shape(a.shape().begin(), a.shape().end()), value, dtype ? *dtype : a.dtype(), a.device());
}

Array arange(const Scalar& stop) {
  return arange(Scalar(0), stop, Scalar(1));
}

Array arange(const Scalar& start, const Scalar& stop, const Scalar& step, std::optional<DType> dtype,
             const DeviceArg& device) {
  const bool ints = start.kind() != ScalarKind::floating && stop.kind() != ScalarKind::floating &&
                    step.kind() != ScalarKind::floating;
  const double s0 = start.as_double(), s1 = stop.as_double(), st = step.as_double();
  if (st == 0) throw ValueError("arange: step must not be zero");
  if (!std::isfinite(s0) || !std::isfinite(s1) || !std::isfinite(st)) throw ValueError("arange: non-finite bounds");
  std::int64_t n = 0;
  if (ints) {
    // Exact, in 128-bit arithmetic: bounds and steps anywhere in int64 or uint64. As NumPy, the
    // elements are start + i * step in the dtype (an integer dtype wraps), the first two must fit an
    // integer dtype (an empty range checks nothing), and without a dtype a range past int64 is
    // float64.
    using i128 = __int128;
    const auto wide = [](const Scalar& s) {
      return s.is_large_unsigned() ? static_cast<i128>(s.as_uint()) : static_cast<i128>(s.as_int());
    };
    const i128 a = wide(start), b = wide(stop), d = wide(step);
    i128 count = 0;
    if (d > 0 && b > a) count = (b - a - 1) / d + 1;
    if (d < 0 && a > b) count = (a - b - 1) / (-d) + 1;
    if (count > std::numeric_limits<std::int64_t>::max())
      throw ValueError("arange: array is too big: more than 2^63 elements");
    n = static_cast<std::int64_t>(count);
    const i128 last = n > 0 ? a + (n - 1) * d : a;  // the elements run from a to last
    const auto within = [&](i128 lo, i128 hi) { return std::min(a, last) >= lo && std::max(a, last) <= hi; };
    const bool in_int64 = within(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
    const DType t = dtype ? *dtype : in_int64 ? DType::int64 : DType::float64;
    const DTypeKind k = kind(t);
    // As NumPy: start (when there is an element) and start + step (when there are two) are stored
    // as they are and must fit an integer dtype; the others are computed in the dtype, wrapping.
    if (k == DTypeKind::signed_integer || k == DTypeKind::unsigned_integer) {
      const i128 stored[2] = {a, a + d};
      for (std::int64_t j = 0; j < std::min<std::int64_t>(n, 2); ++j) {
        const i128 v = stored[j];
        const bool fits =
            v < 0 ? v >= std::numeric_limits<std::int64_t>::min() && value_fits(t, static_cast<long long>(v))
                  : v <= std::numeric_limits<std::uint64_t>::max() && value_fits(t, static_cast<unsigned long long>(v));
        if (!fits) {
          const std::string text = v < 0 ? std::to_string(static_cast<long long>(v))
                                   : v <= std::numeric_limits<std::uint64_t>::max()
                                       ? std::to_string(static_cast<unsigned long long>(v))
                                       : "2^64 or more";
          throw OverflowError("arange: the integer " + text + " is out of bounds for " + std::string(name(t)));
        }
      }
    }
    if (in_int64) {
      std::vector<std::int64_t> v = host_values<std::int64_t>(n);
      for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<std::int64_t>(a + i * d);
      return from_host_values(v, t, Shape{n}, pick(device));
    }
    if (within(0, std::numeric_limits<std::uint64_t>::max())) {
      std::vector<std::uint64_t> v = host_values<std::uint64_t>(n);
      for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<std::uint64_t>(a + i * d);
      return from_host_values(v, t, Shape{n}, pick(device));
    }
    // From below int64's range to above it: no 64-bit integer holds every element.
    std::vector<double> v = host_values<double>(n);
    for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(a + i * d);
    return from_host_values(v, t, Shape{n}, pick(device));
  }
  const DType t = dtype ? *dtype : DType::float64;
  // As NumPy: the length is ceil((stop - start) / step); element i is start + i * delta, delta the
  // difference of the first two elements.
  const double len = std::ceil((s1 - s0) / st);
  if (len >= 0x1p62) throw ValueError("arange: array is too big: " + std::to_string(len) + " elements");
  n = len > 0 ? static_cast<std::int64_t>(len) : 0;
  const DTypeKind tk = kind(t);
  if (tk == DTypeKind::signed_integer || tk == DTypeKind::unsigned_integer) {
    // As NumPy: element 0 is start and element 1 start + step (added as floats), each truncated to
    // an integer that must fit the dtype (arange(0.0, 1e16, 4e15, int32) is an error); the others
    // are first + i * (second - first) in the dtype, wrapping: arange(1.95, 2.45, 0.1, int64) is
    // [1, 2, 3, 4, 5, 6] (6 elements by the float length, steps of 2 - 1).
    auto stored = [&](double x) -> std::uint64_t {
      const double whole = std::trunc(x);
      const bool fits = whole < 0 ? whole >= -0x1p63 && value_fits(t, static_cast<long long>(whole))
                                  : whole < 0x1p64 && value_fits(t, static_cast<unsigned long long>(whole));
      if (!fits) {
        char text[64];
        std::snprintf(text, sizeof text, "%.0f", whole);
        throw OverflowError("arange: the integer " + std::string(text) + " is out of bounds for " +
                            std::string(name(t)));
      }
      return whole < 0 ? static_cast<std::uint64_t>(static_cast<long long>(whole)) : static_cast<std::uint64_t>(whole);
    };
    std::vector<std::uint64_t> v = host_values<std::uint64_t>(n);
    if (n > 0) {
      const std::uint64_t first = stored(s0);
      const std::uint64_t delta = n > 1 ? stored(s0 + st) - first : 0;
      for (std::int64_t i = 0; i < n; ++i) v[i] = first + static_cast<std::uint64_t>(i) * delta;
    }
    return from_host_values(v, t, Shape{n}, pick(device));
  }
  // NumPy fills float32, float16 (and here bfloat16) ranges in float32 arithmetic: the first two
  // elements rounded to the dtype, delta their difference, element i = first + i * delta.
  if (t == DType::float32 || t == DType::float16 || t == DType::bfloat16) {
    auto round_to = [t](float x) {
      if (t == DType::float16) return static_cast<float>(float16(x));
      if (t == DType::bfloat16) return static_cast<float>(bfloat16(x));
      return x;
    };
    auto round_double = [&](double x) {
      // double -> the dtype directly (no double rounding through float32 for the 16-bit ones).
      Array one = asarray(&x, DType::float64, Shape{}, Device::cpu()).astype(t);
      return one.item<float>();
    };
    std::vector<float> v = host_values<float>(n);
    const float first = round_double(s0);
    const float second = n > 1 ? round_double(s0 + st) : first;
    const float delta = second - first;
    for (std::int64_t i = 0; i < n; ++i) v[i] = round_to(first + static_cast<float>(i) * delta);
    if (n > 0) v[0] = first;
    if (n > 1) v[1] = second;
    return from_host_values(v, t, Shape{n}, pick(device));
  }
  std::vector<double> v = host_values<double>(n);
  const double delta = (s0 + st) - s0;
  for (std::int64_t i = 0; i < n; ++i) v[i] = s0 + static_cast<double>(i) * delta;
  return from_host_values(v, t, Shape{n}, pick(device));
}

Array linspace(double start, double stop, std::int64_t num, bool endpoint, DType dtype, const DeviceArg& device) {
  if (num < 0) throw ValueError("linspace: number of samples, " + std::to_string(num) + ", must be non-negative");
  const std::int64_t div = endpoint ? num - 1 : num;
  std::vector<double> v = host_values<double>(num);
  const double delta = stop - start;
  if (div > 0) {
    const double step = delta / static_cast<double>(div);
    for (std::int64_t i = 0; i < num; ++i) {
      v[i] = step == 0 ? static_cast<double>(i) / static_cast<double>(div) * delta + start
                       : static_cast<double>(i) * step + start;
    }
  } else {
    for (std::int64_t i = 0; i < num; ++i) v[i] = static_cast<double>(i) * delta + start;
  }
  if (endpoint && num > 1) v[num - 1] = stop;
  // As NumPy 2: integer dtypes get the floor (not the truncation) of each value; complex ones the
  // values themselves (fuzzing found them floored); bool whether each value is nonzero (0.25 is
  // true, as NumPy converts the float values).
  if (dtype == DType::bool_) {
    for (double& x : v) x = x != 0 ? 1.0 : 0.0;
  } else if (kind(dtype) != DTypeKind::floating && kind(dtype) != DTypeKind::complex_floating) {
    for (double& x : v) x = std::floor(x);
  }
  return from_host_values(v, dtype, Shape{num}, pick(device));
}

Array eye(std::int64_t n, std::optional<std::int64_t> m_, std::int64_t k, DType dtype, const DeviceArg& device) {
  const std::int64_t m = m_ ? *m_ : n;
  std::vector<std::int64_t> v = host_values<std::int64_t>(detail::checked_size({n, m}));
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t j = 0;  // a diagonal past either end (k near INT64_MAX or INT64_MIN) has no element here
    if (detail::checked_add(i, k, j) && j >= 0 && j < m) v[i * m + j] = 1;
  }
  return from_host_values(v, dtype, Shape{n, m}, pick(device));
}

Array asarray(const void* data, DType dtype, const Shape& shape, const DeviceArg& device) {
  const std::int64_t n = detail::checked_size(shape);
  if (data == nullptr && n > 0) throw ValueError("asarray: null data for " + std::to_string(n) + " elements");
  ImplPtr out = detail::new_array(dtype, shape, pick(device));
  if (n > 0) {
    out->backend->copy_from_host(data, out->storage->alloc.data, static_cast<std::size_t>(n) * itemsize(dtype));
  }
  return Array(out);
}

Array asarray(const void* data, std::size_t count, DType dtype, const Shape& shape, const DeviceArg& device) {
  const std::int64_t n = detail::checked_size(shape);
  if (count != static_cast<std::uint64_t>(n)) {
    throw ValueError("asarray: " + std::to_string(count) + " values for shape " + detail::shape_str(shape) +
                     " of size " + std::to_string(n));
  }
  return asarray(data, dtype, shape, device);
}

Array wrap(void* data, DType dtype, const Shape& shape, std::shared_ptr<void> keep_alive, std::optional<Shape> strides,
           bool read_only) {
  const std::int64_t n = detail::checked_size(shape);
  if (data == nullptr && n > 0) throw ValueError("wrap: null data for " + std::to_string(n) + " elements");
  if (strides && strides->size() != shape.size()) {
    throw ValueError("wrap: " + std::to_string(strides->size()) + " strides for " + std::to_string(shape.size()) +
                     " dimensions");
  }
  // Strides whose offsets overflow (or leave any address space) would index the wrong memory.
  const std::size_t bytes =
      strides ? detail::layout_extent(shape, *strides, itemsize(dtype), reinterpret_cast<std::uintptr_t>(data), "wrap")
              : static_cast<std::size_t>(n) * itemsize(dtype);
  auto storage = std::make_shared<detail::Storage>();
  storage->device = Device::cpu();
  storage->backend = &detail::backend_for(storage->device);
  storage->alloc.data = static_cast<std::byte*>(data);
  storage->alloc.bytes = bytes;
  storage->alloc.owner = std::move(keep_alive);
  storage->read_only = read_only;
  return Array(detail::view_of_storage(storage, dtype, shape, strides ? *strides : detail::c_strides(shape, dtype), 0));
}

Array load(const std::string& path, const DeviceArg& device) {
  auto npy = std::make_shared<detail::NpyArray>(detail::read_npy(path));
  Shape shape(npy->shape.begin(), npy->shape.end());
  try {
    detail::checked_size(shape);  // a header shape no array can have: the file's fault, named with its path
  } catch (const ValueError& e) {
    throw FileError(path, std::string("the header's shape is not an xp array's: ") + e.what());
  }
  const std::vector<std::int64_t> bs = npy->byte_strides();
  Array view = wrap(npy->data.data(), npy->dtype, shape, npy, Shape(bs.begin(), bs.end()), true);
  return view.copy().to_device(pick(device));  // C order, own memory, writable
}

void save(const std::string& path, const Array& a) {
  if (path.empty()) throw ValueError("save: the path is empty ('')");
  Array host = a.to_device(Device::cpu());
  if (!host.is_c_contiguous() || host.is_lazy()) host = host.copy();
  const std::vector<std::int64_t> shape(host.shape().begin(), host.shape().end());
  detail::write_npy(path, host.dtype(), shape, host.data());
}

Array concat(const std::vector<Array>& arrays, int axis) {
  if (arrays.empty()) throw ValueError("concat: need at least one array to concatenate");
  const ImplPtr& first = impl_of(arrays[0]);
  const int nd = static_cast<int>(first->shape.size());
  if (nd == 0) throw ValueError("concat: zero-dimensional arrays cannot be concatenated");
  const int ax = detail::normalize_axis(axis, nd, "concat");
  Shape shape = first->shape;
  DType t = first->dtype;
  shape[ax] = 0;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const ImplPtr& a = impl_of(arrays[i]);
    if (!(a->device == first->device)) throw DeviceMismatch("concat", first->device.str(), a->device.str());
    if (static_cast<int>(a->shape.size()) != nd) {
      throw ValueError("concat: all the input arrays must have the same number of dimensions, but array 0 has " +
                       std::to_string(nd) + " dimension(s) and array " + std::to_string(i) + " has " +
                       std::to_string(a->shape.size()));
    }
    for (int d = 0; d < nd; ++d) {
      if (d != ax && a->shape[d] != first->shape[d]) {
        throw ValueError(
            "concat: the input array dimensions except for the concatenation axis must match exactly, "
            "but along dimension " +
            std::to_string(d) + ", array 0 has size " + std::to_string(first->shape[d]) + " and array " +
            std::to_string(i) + " has size " + std::to_string(a->shape[d]));
      }
    }
    if (!detail::checked_add(shape[ax], a->shape[ax], shape[ax])) {
      throw ValueError("concat: the arrays' sizes along axis " + std::to_string(ax) +
                       " add up past a 64-bit integer (array " + std::to_string(i) + " has shape " +
                       detail::shape_str(a->shape) + ")");
    }
  }
  {  // all the dtypes promoted at once, as NumPy (int8, uint8, float16: float16, not float32)
    std::vector<DType> dtypes;
    dtypes.reserve(arrays.size());
    for (const Array& arr : arrays) dtypes.push_back(arr.dtype());
    t = detail::result_type_all(dtypes);
  }
  ImplPtr out = detail::new_array(t, shape, first->device);
  std::int64_t at = 0;
  for (const Array& arr : arrays) {
    const ImplPtr& a = impl_of(arr);
    Shape sub = shape;
    sub[ax] = a->shape[ax];
    if (sub[ax] > 0) {
      ImplPtr dst = detail::view_of_storage(out->storage, t, sub, out->strides, at * out->strides[ax]);
      detail::evaluate_into(a, dst);
    }
    at += a->shape[ax];
  }
  return Array(out);
}

Array stack(const std::vector<Array>& arrays, int axis) {
  if (arrays.empty()) throw ValueError("stack: need at least one array to stack");
  const auto s0 = arrays[0].shape();
  std::vector<Array> expanded;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const auto s = arrays[i].shape();
    if (!std::equal(s.begin(), s.end(), s0.begin(), s0.end())) {
      throw ValueError("stack: all input arrays must have the same shape; array 0 has " + detail::shape_str(s0) +
                       " and array " + std::to_string(i) + " has " + detail::shape_str(s));
    }
  }
  const int ax = detail::normalize_axis(axis, static_cast<int>(s0.size()) + 1, "stack");
  for (const Array& a : arrays) expanded.push_back(expand_dims(a, ax));
  return concat(expanded, ax);
}

Array take(const Array& a_, const Array& indices, std::optional<int> axis) {
  const ImplPtr& ix = impl_of(indices);
  const DTypeKind k = kind(ix->dtype);
  if (k != DTypeKind::signed_integer && k != DTypeKind::unsigned_integer) {
    throw TypeError("take: indices must be integers, got " + std::string(name(ix->dtype)));
  }
  if (!(ix->device == impl_of(a_)->device)) throw DeviceMismatch("take", a_.device().str(), ix->device.str());
  Array a = axis ? a_ : reshape(a_, {-1});
  const int nd = a.ndim();
  if (nd == 0) throw ValueError("take: cannot take from a 0-d array");
  const int ax = detail::normalize_axis(axis ? *axis : 0, nd, "take");
  const std::int64_t n = a.shape(ax);
  // Checked (and negative indices wrapped) before anything is written.
  std::vector<std::int64_t> idx = indices.to_vector<std::int64_t>();
  if (ix->dtype == DType::uint64) {
    const std::vector<std::uint64_t> u = indices.to_vector<std::uint64_t>();
    for (std::size_t i = 0; i < u.size(); ++i) {
      if (u[i] >= static_cast<std::uint64_t>(n)) {
        throw IndexError("take: index " + std::to_string(u[i]) + " is out of bounds for axis " + std::to_string(ax) +
                         " with size " + std::to_string(n));
      }
    }
  }
  for (auto& i : idx) {
    if (i < -n || i >= n) {
      throw IndexError("take: index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(ax) +
                       " with size " + std::to_string(n));
    }
    if (i < 0) i += n;
  }
  Array norm = asarray(idx.data(), DType::int64, Shape(ix->shape.begin(), ix->shape.end()), a.device());
  return detail::take_unchecked(a, norm, ax);
}

namespace random {

namespace {
Array draw(detail::RandomKind kind_, std::uint64_t seed, std::uint64_t stream, DType dtype, const Shape& shape,
           const DeviceArg& device, std::int64_t low = 0, std::int64_t high = 0) {
  ImplPtr out = detail::new_array(dtype, shape, pick(device));
  detail::RandomRequest req;
  req.kind = kind_;
  req.seed = seed;
  req.stream = stream;
  req.low = low;
  req.high = high;
  if (out->size() > 0) out->backend->fill_random(req, detail::view_of(*out));
  return Array(out);
}
void need_float(DType t, const char* what) {
  if (kind(t) != DTypeKind::floating) {
    throw TypeError(std::string(what) + ": needs a float dtype, got " + std::string(name(t)));
  }
}
}  // namespace

Array Generator::uniform(const Shape& shape, DType dtype, double low, double high, const DeviceArg& device) {
  need_float(dtype, "uniform");
  if (!(low <= high) || !std::isfinite(high - low)) throw ValueError("uniform: needs low <= high, both finite");
  detail::checked_size(shape);
  Array u = draw(detail::RandomKind::uniform, seed_, stream_, dtype, shape, device);
  ++stream_;  // only once drawn: a draw that fails (no memory, a driver error) takes no stream
  if (low == 0 && high == 1) return u;
  const Array r = add(low, multiply(high - low, u));
  if (!(low < high)) return r;
  // low + (high - low) u rounds to high in the dtype for u near 1 (float16 over [1, 2): one draw in
  // 2000; bfloat16 over [100, 101): a quarter of them): those take the dtype's largest value below
  // high, so that every draw is in [low, high). That value is found on the host, exactly.
  const Device cpu = Device::cpu();
  Array top = full({}, high, dtype, cpu);
  if (top.item<double>() >= high) top = nextafter(top, full({}, low, dtype, cpu));
  const double below = top.item<double>();
  return where(less_equal(r, below), r, below);
}

Array Generator::normal(const Shape& shape, DType dtype, double loc, double scale, const DeviceArg& device) {
  need_float(dtype, "normal");
  if (!(scale >= 0)) throw ValueError("normal: scale must be non-negative");
  detail::checked_size(shape);
  Array z = draw(detail::RandomKind::normal, seed_, stream_, dtype, shape, device);
  ++stream_;
  if (loc == 0 && scale == 1) return z;
  return add(loc, multiply(scale, z));
}

Array Generator::integers(std::int64_t low, std::int64_t high, const Shape& shape, DType dtype,
                          const DeviceArg& device) {
  const DTypeKind k = kind(dtype);
  if (k != DTypeKind::signed_integer && k != DTypeKind::unsigned_integer) {
    throw TypeError("integers: needs an integer dtype, got " + std::string(name(dtype)));
  }
  if (low >= high)
    throw ValueError("integers: low >= high (" + std::to_string(low) + " >= " + std::to_string(high) + ")");
  if (!value_fits(dtype, static_cast<long long>(low)) || !value_fits(dtype, static_cast<long long>(high - 1))) {
    throw ValueError("integers: [" + std::to_string(low) + ", " + std::to_string(high) + ") is out of range for " +
                     std::string(name(dtype)));
  }
  detail::checked_size(shape);
  Array r = draw(detail::RandomKind::integers, seed_, stream_, dtype, shape, device, low, high);
  ++stream_;
  return r;
}

}  // namespace random

}  // namespace xp
