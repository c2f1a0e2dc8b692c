#pragma once

// xp::Array and the array namespace: NumPy / Python Array API names on every device.
//
// An Array is a handle (cheap to copy, copies share the array) to a dtype, a shape, strides in
// bytes, an offset and a shared block of memory on one device. Views (slices, reshape,
// permute_dims, expand_dims, squeeze, broadcast_to, flip) share memory with their base.
//
// Elementwise operations are lazy: `d = a * b + c` records a small graph, evaluated in one fused
// pass (a, b, c read once, d written once, no temporaries) when a value is needed: a reduction, a
// transfer, item/to_vector/data, printing, xp::eval, a view or any other non-elementwise operation,
// or when the graph grows past kMaxFusedOps operations. A graph computes with the values its inputs
// had when it was built, even if they are written later (in place, through a view, with out=).
// XP_LAZY=0 (or set_lazy(false)) evaluates every operation at once, with bit-identical results.
//
// C++ numbers in expressions are weak scalars (NEP 50): `float32_array * 2.0` stays float32,
// `uint8_array + 300` is a TypeError. docs/semantics.md lists the rules both backends follow.
//
// Thread safety: distinct arrays may be used from distinct threads; one lazy array evaluated from
// two threads at once is a data race (call eval() first, then share). An array that a lazy array
// of another thread reads (an input of its graph) counts as shared with that thread: writing it
// evaluates the lazy array first, in the writing thread, so such a write needs the lazy array
// evaluated first (eval()) or the two threads ordered, as any write to memory another thread reads.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "xp/device.hpp"
#include "xp/dtype.hpp"
#include "xp/error.hpp"
#include "xp/export.hpp"
#include "xp/precision.hpp"

namespace xp {

class Array;
namespace detail {
struct ArrayImpl;
}

using Shape = std::vector<std::int64_t>;

// A shape as NumPy prints its tuple: (2, 3), (5,), (). Shape is a std::vector, so argument-dependent
// lookup does not find these from outside namespace xp: write `using xp::operator<<;` (or use them
// inside code that has `using namespace xp;`). The span form takes a.shape().
XP_API std::ostream& operator<<(std::ostream& os, const Shape& shape);
XP_API std::ostream& operator<<(std::ostream& os, std::span<const std::int64_t> shape);

// The largest elementwise graph evaluated as one fused pass; a bigger one is cut.
constexpr int kMaxFusedOps = 64;

// The dtype of a C++ element type: dtype_of<float>() == DType::float32.
template <class T>
constexpr DType dtype_of() noexcept {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>)
    return DType::bool_;
  else if constexpr (std::is_same_v<U, float16>)
    return DType::float16;
  else if constexpr (std::is_same_v<U, bfloat16>)
    return DType::bfloat16;
  else if constexpr (std::is_same_v<U, float>)
    return DType::float32;
  else if constexpr (std::is_same_v<U, double>)
    return DType::float64;
  else if constexpr (std::is_same_v<U, std::complex<float>>)
    return DType::complex64;
  else if constexpr (std::is_same_v<U, std::complex<double>>)
    return DType::complex128;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 1)
    return DType::int8;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 2)
    return DType::int16;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 4)
    return DType::int32;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 8)
    return DType::int64;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 1)
    return DType::uint8;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 2)
    return DType::uint16;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 4)
    return DType::uint32;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 8)
    return DType::uint64;
  else
    static_assert(sizeof(U) == 0, "not an xp element type");
}

// A C++ number used with arrays: weak in NEP 50's sense (the array's dtype wins within its kind).
class XP_API Scalar {
 public:
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) noexcept {  // NOLINT: implicit by design
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = ScalarKind::boolean;
      i_ = v ? 1 : 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      kind_ = ScalarKind::floating;
      f_ = static_cast<double>(v);
    } else if constexpr (std::is_unsigned_v<T>) {
      kind_ = ScalarKind::integer;
      if (static_cast<unsigned long long>(v) > 0x7fffffffffffffffULL) {
        unsigned_ = true;
        u_ = static_cast<unsigned long long>(v);
      } else {
        i_ = static_cast<long long>(v);
      }
    } else {
      kind_ = ScalarKind::integer;
      i_ = static_cast<long long>(v);
    }
  }
  Scalar(float16 v) noexcept : kind_(ScalarKind::floating), f_(static_cast<float>(v)) {}   // NOLINT
  Scalar(bfloat16 v) noexcept : kind_(ScalarKind::floating), f_(static_cast<float>(v)) {}  // NOLINT
  // A complex number (Python's 1j): weak like the others, so float32_array * 1i stays complex64.
  template <class T>
  Scalar(std::complex<T> v) noexcept  // NOLINT
      : kind_(ScalarKind::complex), f_(static_cast<double>(v.real())), im_(static_cast<double>(v.imag())) {}

  ScalarKind kind() const noexcept { return kind_; }
  bool is_large_unsigned() const noexcept { return unsigned_; }  // an integer above INT64_MAX
  long long as_int() const noexcept { return i_; }
  unsigned long long as_uint() const noexcept { return unsigned_ ? u_ : static_cast<unsigned long long>(i_); }
  double as_double() const noexcept;  // a complex number's real part
  std::complex<double> as_complex() const noexcept { return {as_double(), imag()}; }
  double imag() const noexcept { return kind_ == ScalarKind::complex ? im_ : 0.0; }
  // The dtype this number has on its own (no array to follow): bool, int64 (uint64 above INT64_MAX),
  // float64 or complex128, as NumPy gives np.asarray(value).
  DType default_dtype() const noexcept;

 private:
  ScalarKind kind_ = ScalarKind::integer;
  bool unsigned_ = false;
  long long i_ = 0;
  unsigned long long u_ = 0;
  double f_ = 0;
  double im_ = 0;
};

// An operand of an elementwise function: an array or a weak scalar. An argument type only: it
// refers to the array it was made from, which must outlive it.
class Operand {
 public:
  Operand(const Array& a) noexcept : array_(&a) {}  // NOLINT: implicit by design
  template <class T,
            std::enable_if_t<std::is_arithmetic_v<T> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16> ||
                                 std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>,
                             int> = 0>
  Operand(T v) noexcept : scalar_(Scalar(v)) {}  // NOLINT
  Operand(Scalar s) noexcept : scalar_(s) {}     // NOLINT

  bool is_array() const noexcept { return array_ != nullptr; }
  const Array& array() const noexcept { return *array_; }
  const Scalar& scalar() const noexcept { return scalar_; }

 private:
  const Array* array_ = nullptr;
  Scalar scalar_ = Scalar(0);
};

// Where an `out=` result goes: an array of the result's shape and a dtype the result casts to
// under NumPy's same_kind rule. Default: a new array.
class XP_API Out {
 public:
  Out() = default;
  Out(const Array& a) noexcept : array_(&a) {}  // NOLINT: implicit by design
  const Array* array() const noexcept { return array_; }

 private:
  const Array* array_ = nullptr;
};

// One index of a[...]: an integer (drops the axis; negative counts from the end; out of range is an
// IndexError), a Slice (start:stop:step, clamped as NumPy clamps; Slice() is ":"), newaxis or
// ellipsis.
struct Slice {
  std::optional<std::int64_t> start, stop;
  std::int64_t step = 1;  // nonzero
  Slice() = default;
  Slice(std::optional<std::int64_t> start_, std::optional<std::int64_t> stop_, std::int64_t step_ = 1)
      : start(start_), stop(stop_), step(step_) {}
};
struct NewAxis {};
struct Ellipsis {};
inline constexpr NewAxis newaxis{};
inline constexpr Ellipsis ellipsis{};

// An array index (Kind::array) is NumPy's advanced indexing: a bool array selects where it is true
// over as many axes as it has (a[mask]), an integer array picks those positions of its axis (negative
// counting from the end); several array indices broadcast together, integers among them count as
// array indices, and the result's dimensions go where NumPy puts them (in place of the indexed axes
// when those are next to each other, else first). Out-of-range positions are an IndexError naming
// the index and the axis. Reading through an array index makes a copy; writing (Array::set) writes
// through, and where a position repeats the last value given for it is written, on every device.
class Index {
 public:
  enum class Kind { integer, slice, newaxis, ellipsis, array };
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Index(T i) noexcept : kind_(Kind::integer), i_(static_cast<std::int64_t>(i)) {}  // NOLINT
  Index(const Slice& s) noexcept : kind_(Kind::slice), s_(s) {}                    // NOLINT
  Index(NewAxis) noexcept : kind_(Kind::newaxis) {}                                // NOLINT
  Index(Ellipsis) noexcept : kind_(Kind::ellipsis) {}                              // NOLINT
  XP_API Index(const Array& a);                                                    // NOLINT: an array index
  Kind kind() const noexcept { return kind_; }
  std::int64_t integer() const noexcept { return i_; }
  const Slice& slice() const noexcept { return s_; }
  XP_API Array array() const;  // the array of an array index

 private:
  Kind kind_;
  std::int64_t i_ = 0;
  Slice s_;
  std::shared_ptr<detail::ArrayImpl> array_;
};

// Axes of a reduction or of squeeze/flip: every axis (the default), one, or several. Negative axes
// count from the end.
class Axes {
 public:
  Axes() = default;
  Axes(int axis) : all_(false), axes_{axis} {}                          // NOLINT
  Axes(std::initializer_list<int> axes) : all_(false), axes_(axes) {}   // NOLINT
  Axes(std::vector<int> axes) : all_(false), axes_(std::move(axes)) {}  // NOLINT
  bool all() const noexcept { return all_; }
  const std::vector<int>& list() const noexcept { return axes_; }

 private:
  bool all_ = true;
  std::vector<int> axes_;
};

class XP_API Array {
 public:
  Array() noexcept;  // an empty handle: using it is a ValueError
  Array(const Array&) noexcept;
  Array(Array&&) noexcept;
  ~Array();
  // Rebinds this handle (as Python's `a = b`).
  Array& operator=(const Array&) & noexcept;
  Array& operator=(Array&&) & noexcept;
  // Assigning to a temporary view writes through it: a.slice({...}) = b, a[0] = 1.0 (copyto).
  const Array& operator=(const Array& values) &&;
  const Array& operator=(const Scalar& value) &&;
  // Writes values (broadcast, converted under same_kind) into this array's memory: copyto.
  const Array& assign(const Operand& values) const;

  bool valid() const noexcept { return impl_ != nullptr; }
  DType dtype() const;
  int ndim() const;
  std::span<const std::int64_t> shape() const;
  std::int64_t shape(int axis) const;  // negative counts from the end
  // Strides in bytes and the offset of the first element into the memory block, in bytes. A lazy
  // array reports the layout it will have (C order) without being evaluated.
  std::span<const std::int64_t> strides() const;
  std::int64_t offset() const;
  std::int64_t size() const;
  std::int64_t nbytes() const;
  std::size_t itemsize() const;
  Device device() const;
  bool is_c_contiguous() const;
  bool is_lazy() const noexcept;  // an elementwise graph not evaluated yet
  bool is_read_only() const;      // wraps memory given as read-only

  // Views, sharing memory; with an array index (Index), a copy (NumPy's advanced indexing).
  // Assigning to such a copy (a.slice({mask}) = v) is a ValueError: use set.
  Array slice(std::initializer_list<Index> index) const;
  Array slice(std::span<const Index> index) const;
  // NumPy's a[index] = values: writes values (broadcast to a[index]'s shape, converted under
  // same_kind) through any index, array indices included.
  const Array& set(std::initializer_list<Index> index, const Operand& values) const;
  const Array& set(std::span<const Index> index, const Operand& values) const;
  Array operator[](std::int64_t i) const;   // the sub-array at index i of axis 0
  Array reshape(const Shape& shape) const;  // one -1 allowed; a view when the layout allows, else a copy
  Array transpose() const;                  // all axes reversed
  Array T() const { return transpose(); }
  Array ravel() const;    // 1-D in C order: reshape({-1}), a view when the layout allows, else a copy
  Array flatten() const;  // 1-D in C order, always a copy (as NumPy's a.flatten())

  Array copy() const;                           // a new C-contiguous array
  Array astype(DType dtype) const;              // always a new array (conversions as docs/semantics.md)
  Array to_device(const Device& device) const;  // a copy on `device` (this array when it is there)
  Array& eval();                                // evaluates a lazy array now

  // The single element, converted to T as astype converts. ValueError unless size() == 1 (naming
  // item, the size and the shape).
  template <class T>
  T item() const {
    T v{};
    copy_item(dtype_of<T>(), &v);
    return v;
  }
  // As NumPy's bool(a): the single element's truth (nonzero; NaN is true) for an array of one
  // element, whatever its shape. More than one element, or none, is a ValueError: use xp::any or
  // xp::all, or test size(). Evaluates a lazy array and copies the element from a GPU.
  explicit operator bool() const;
  // Every element in C order, converted to T as astype converts.
  template <class T>
  std::vector<T> to_vector() const {
    std::vector<T> v(static_cast<std::size_t>(size()));
    copy_to_host(dtype_of<T>(), v.data(), v.size());
    return v;
  }
  // Copies every element, converted to `dtype`, in C order to dst (room for `count` elements, which
  // must equal size()).
  void copy_to_host(DType dtype, void* dst, std::size_t count) const;
  // item<T>()'s work: the single element, converted to `dtype`, to dst.
  void copy_item(DType dtype, void* dst) const;

  // The address of the first element in host memory, after evaluation (CPU arrays; ValueError for
  // other devices). mutable_data() first evaluates every pending graph that reads this memory, and
  // is a ValueError for read-only memory.
  const void* data() const;
  void* mutable_data();

  std::string repr() const;  // as NumPy's repr: array([1., 2.], dtype=float32)
  std::string str() const;   // as NumPy's str: [1. 2.]

  // In place: the result is written into this array's memory (out=); NumPy's same_kind rule
  // (an int array += 1.5 is a TypeError).
  Array& operator+=(const Operand& b);
  Array& operator-=(const Operand& b);
  Array& operator*=(const Operand& b);
  Array& operator/=(const Operand& b);
  Array& operator%=(const Operand& b);
  Array& operator&=(const Operand& b);
  Array& operator|=(const Operand& b);
  Array& operator^=(const Operand& b);
  Array& operator<<=(const Operand& b);
  Array& operator>>=(const Operand& b);

  // For xp's own layers.
  explicit Array(std::shared_ptr<detail::ArrayImpl> impl) noexcept;
  const std::shared_ptr<detail::ArrayImpl>& impl() const noexcept { return impl_; }

 private:
  std::shared_ptr<detail::ArrayImpl> impl_;
};

XP_API std::ostream& operator<<(std::ostream& os, const Array& a);  // the repr

// Laziness (XP_LAZY) and CPU threads (XP_NUM_THREADS) changed for this process.
XP_API void set_lazy(bool lazy);
XP_API bool lazy();
XP_API void set_num_threads(int threads);  // 1 to kMaxNumThreads (xp/config.hpp), as XP_NUM_THREADS
XP_API int num_threads();

// Evaluates lazy arrays (together, sharing their common subexpressions).
XP_API void eval(std::initializer_list<Array> arrays);

// ---- creation ----------------------------------------------------------------------------------
// `device` defaults to default_device(); the dtype to float64 (as NumPy), except where noted.
using DeviceArg = std::optional<Device>;
XP_API Array empty(const Shape& shape, DType dtype = DType::float64, const DeviceArg& device = std::nullopt);
XP_API Array zeros(const Shape& shape, DType dtype = DType::float64, const DeviceArg& device = std::nullopt);
XP_API Array ones(const Shape& shape, DType dtype = DType::float64, const DeviceArg& device = std::nullopt);
// The dtype defaults to the value's own (bool, int64, float64).
XP_API Array full(const Shape& shape, const Scalar& value, std::optional<DType> dtype = std::nullopt,
                  const DeviceArg& device = std::nullopt);
XP_API Array empty_like(const Array& a, std::optional<DType> dtype = std::nullopt);
XP_API Array zeros_like(const Array& a, std::optional<DType> dtype = std::nullopt);
XP_API Array ones_like(const Array& a, std::optional<DType> dtype = std::nullopt);
XP_API Array full_like(const Array& a, const Scalar& value, std::optional<DType> dtype = std::nullopt);
// start, start + step, ... below stop. The dtype defaults to int64 when all three are integers,
// else float64. As NumPy: elements 0 and 1 are start and start + step, which must fit an integer
// dtype (float ones truncated), the others computed from them in the dtype (docs/semantics.md).
XP_API Array arange(const Scalar& start, const Scalar& stop, const Scalar& step = 1,
                    std::optional<DType> dtype = std::nullopt, const DeviceArg& device = std::nullopt);
XP_API Array arange(const Scalar& stop);
// num values from start to stop (included when endpoint), as NumPy computes them.
XP_API Array linspace(double start, double stop, std::int64_t num, bool endpoint = true, DType dtype = DType::float64,
                      const DeviceArg& device = std::nullopt);
// Ones on the k-th diagonal of an n x m matrix (m defaults to n).
XP_API Array eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, std::int64_t k = 0,
                 DType dtype = DType::float64, const DeviceArg& device = std::nullopt);
// Coordinate matrices from 1-D coordinate vectors (any number; 0-d arrays count as one element):
// indexing "xy" (Cartesian, the default: the first two outputs' axes swapped) or "ij" (matrix).
// Every output has the promoted dtype of the inputs and is a broadcast view (read-only in spirit:
// write to a copy). A ValueError for another indexing, an input of more than one dimension.
XP_API std::vector<Array> meshgrid(const std::vector<Array>& arrays, const std::string& indexing = "xy");
// The lower (tril) or upper (triu) triangle of the last two axes, batched over the others: the
// elements on and below (above) the k-th diagonal kept, the others zero. A new array.
XP_API Array tril(const Array& x, std::int64_t k = 0);
XP_API Array triu(const Array& x, std::int64_t k = 0);

// A copy of host data (C order) as an array of `shape` (default 1-D). The pointer form reads the
// shape's size of elements at `data`; the forms that know how many values they have (a count, a
// vector, a list) refuse a shape of another size with a ValueError naming both.
XP_API Array asarray(const void* data, DType dtype, const Shape& shape, const DeviceArg& device = std::nullopt);
XP_API Array asarray(const void* data, std::size_t count, DType dtype, const Shape& shape,
                     const DeviceArg& device = std::nullopt);
template <class T>
Array asarray(const std::vector<T>& values, std::optional<Shape> shape = std::nullopt,
              const DeviceArg& device = std::nullopt) {
  static_assert(!std::is_same_v<T, bool>, "std::vector<bool> has no contiguous storage: use uint8 or asarray(ptr)");
  return asarray(values.data(), values.size(), dtype_of<T>(),
                 shape ? *shape : Shape{static_cast<std::int64_t>(values.size())}, device);
}
// For asarray of braced lists (below): the element type a list of T is stored as, and nested lists'
// shapes and elements.
namespace detail {
template <class T>
using list_element_t = std::conditional_t<std::is_same_v<T, int>, std::int64_t, T>;
template <class T>
struct NestedList {
  static constexpr int depth = 0;
  using element = T;
};
template <class T>
struct NestedList<std::initializer_list<T>> {
  static constexpr int depth = NestedList<T>::depth + 1;
  using element = typename NestedList<T>::element;
};
// The shape of a nested list, read from its first elements.
template <class T>
void nested_list_shape(const std::initializer_list<T>& values, Shape& shape) {
  shape.push_back(static_cast<std::int64_t>(values.size()));
  if constexpr (NestedList<T>::depth > 0) {
    if (values.size() > 0)
      nested_list_shape(*values.begin(), shape);
    else
      shape.resize(shape.size() + NestedList<T>::depth, 0);
  }
}
// Row [i][j] as a message names it: "1" for one index, "[1][0]" for more.
inline std::string nested_list_row(const std::vector<std::size_t>& at) {
  if (at.size() == 1) return std::to_string(at[0]);
  std::string s;
  for (std::size_t i : at) s += "[" + std::to_string(i) + "]";
  return s;
}
// Copies the elements of `values` in C order to `out`, each list checked against `shape`; `at` is
// the path of `values` from the outermost list.
template <class E, class T>
void flatten_nested_list(const std::initializer_list<T>& values, const Shape& shape, std::vector<std::size_t>& at,
                         E*& out) {
  const std::int64_t want = shape[at.size()];
  if (static_cast<std::int64_t>(values.size()) != want) {
    throw ValueError("asarray: ragged nested list: row " + nested_list_row(at) + " has " +
                     std::to_string(values.size()) + (values.size() == 1 ? " element" : " elements") + " where row " +
                     nested_list_row(std::vector<std::size_t>(at.size(), 0)) + " has " + std::to_string(want) +
                     " (every row needs the same length)");
  }
  std::size_t i = 0;
  for (const T& v : values) {
    if constexpr (NestedList<T>::depth == 0) {
      *out++ = static_cast<E>(v);
    } else {
      at.push_back(i);
      flatten_nested_list(v, shape, at, out);
      at.pop_back();
    }
    ++i;
  }
}
template <class L>
Array asarray_nested(const L& values, const DeviceArg& device) {
  using E = list_element_t<typename NestedList<L>::element>;
  Shape shape;
  nested_list_shape(values, shape);
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
  const std::unique_ptr<E[]> flat(new E[n > 0 ? n : 1]);
  E* out = flat.get();
  std::vector<std::size_t> at;
  flatten_nested_list(values, shape, at, out);
  return asarray(flat.get(), n, dtype_of<E>(), shape, device);
}
}  // namespace detail

// A braced list is the C++ spelling of a Python list: its elements keep their C++ type's dtype,
// except `int`, which gives int64 as NumPy's default integer (asarray({1, 2, 3}) is int64, as
// full(shape, 1) and arange(3) are; asarray(std::vector<int>) stays int32). Nested lists give
// 2-D and 3-D arrays, C order: asarray({{1.f, 2.f}, {3.f, 4.f}}) has shape (2, 2); lists of
// unequal lengths are a ValueError naming the first one that differs.
template <class T>
Array asarray(std::initializer_list<T> values, std::optional<Shape> shape = std::nullopt,
              const DeviceArg& device = std::nullopt) {
  using E = detail::list_element_t<T>;
  const Shape s = shape ? *shape : Shape{static_cast<std::int64_t>(values.size())};
  if constexpr (std::is_same_v<E, T>) {
    return asarray(values.begin(), values.size(), dtype_of<T>(), s, device);
  } else {
    const std::vector<E> wide(values.begin(), values.end());
    return asarray(wide.data(), wide.size(), dtype_of<E>(), s, device);
  }
}
template <class T>
Array asarray(std::initializer_list<std::initializer_list<T>> rows, const DeviceArg& device = std::nullopt) {
  return detail::asarray_nested(rows, device);
}
template <class T>
Array asarray(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes,
              const DeviceArg& device = std::nullopt) {
  return detail::asarray_nested(planes, device);
}
// Wraps host memory without copying. `strides` in bytes (default C order); `keep_alive` is held
// until the last array using the memory is gone. The caller must not change the memory while a
// lazy graph that reads it is pending (xp cannot see such writes): eval() first.
XP_API Array wrap(void* data, DType dtype, const Shape& shape, std::shared_ptr<void> keep_alive = nullptr,
                  std::optional<Shape> strides = std::nullopt, bool read_only = false);
// Device memory other libraries own, and xp's exported to them: include/xp/interop.hpp.

// An Array as an argument of Kernel::launch (include/xp/program.hpp): the device address of its
// first element, after the checks and evaluation Kernel::launch describes; its memory stays safe
// from reuse until the stream has run the kernel (stream order, or a hold: Kernel::launch).
class KernelArgContext;
XP_API std::uint64_t kernel_arg(const Array& a, KernelArgContext& context);

// .npy files (NumPy's format; errors are FileError, nothing half-written).
XP_API Array load(const std::string& path, const DeviceArg& device = std::nullopt);
XP_API void save(const std::string& path, const Array& a);

// ---- manipulation (views where NumPy gives views) ----------------------------------------------
XP_API Array reshape(const Array& a, const Shape& shape);
XP_API Array permute_dims(const Array& a, const std::vector<int>& axes);
XP_API Array matrix_transpose(const Array& a);  // the last two axes swapped
XP_API Array expand_dims(const Array& a, int axis);
XP_API Array squeeze(const Array& a, const Axes& axes = {});
XP_API Array broadcast_to(const Array& a, const Shape& shape);
XP_API Shape broadcast_shapes(const Shape& a, const Shape& b);
XP_API Array flip(const Array& a, const Axes& axes = {});
// concat and stack promote all the arrays' dtypes at once (int8, uint8, float16: float16).
XP_API Array concat(const std::vector<Array>& arrays, int axis = 0);
XP_API Array stack(const std::vector<Array>& arrays, int axis = 0);
// Elements of `a` at `indices` (an integer array) along `axis` (the flattened array by default).
XP_API Array take(const Array& a, const Array& indices, std::optional<int> axis = std::nullopt);
// Writes src (broadcast, converted under same_kind) into dst.
XP_API void copyto(const Array& dst, const Operand& src);
XP_API Array astype(const Array& a, DType dtype);
XP_API DType result_type(const Operand& a, const Operand& b);
// One argument of the n-ary result_type: an array, a dtype, or a C++ number (weak, applied after
// the arrays and dtypes, as NEP 50). An argument type only, as Operand.
class TypeArg {
 public:
  TypeArg(const Array& a) noexcept : array_(&a) {}  // NOLINT: implicit by design
  TypeArg(DType t) noexcept : dtype_(t) {}          // NOLINT
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TypeArg(T v) noexcept : scalar_(Scalar(v)) {}  // NOLINT
  template <class T>
  TypeArg(std::complex<T> v) noexcept : scalar_(Scalar(v)) {}  // NOLINT
  TypeArg(Scalar s) noexcept : scalar_(s) {}                   // NOLINT
  const Array* array() const noexcept { return array_; }
  std::optional<DType> dtype() const noexcept { return dtype_; }
  const std::optional<Scalar>& scalar() const noexcept { return scalar_; }

 private:
  const Array* array_ = nullptr;
  std::optional<DType> dtype_;
  std::optional<Scalar> scalar_;
};
// The promoted dtype of every argument at once, as np.result_type (arrays and dtypes promoted all
// together as concat's operands are, then the weak scalars). No array or dtype: a ValueError.
XP_API DType result_type(std::initializer_list<TypeArg> args);
XP_API DType result_type(const std::vector<TypeArg>& args);
// Whether x's dtype converts to `to` (can_cast of dtypes).
XP_API bool can_cast(const Array& x, DType to);
// Arrays (each broadcast to the shapes' common shape, as views).
XP_API std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays);
// Axes moved to new positions, the others kept in order (a view, permute_dims). Each list holds
// distinct axes, both of one length; negative counts from the end.
XP_API Array moveaxis(const Array& x, int source, int destination);
XP_API Array moveaxis(const Array& x, const std::vector<int>& source, const std::vector<int>& destination);
// Each element repeated `repeats` times (or repeats[i] times: an integer array of one element, or
// of the axis's length; no negative count) along axis, or along the flattened array by default.
XP_API Array repeat(const Array& x, std::int64_t repeats, std::optional<int> axis = std::nullopt);
XP_API Array repeat(const Array& x, const Array& repeats, std::optional<int> axis = std::nullopt);
// Elements shifted by `shift` along axis (wrapping around), or along the flattened array (the shape
// kept) by default; several shifts and axes together (one shift may go with several axes).
XP_API Array roll(const Array& x, std::int64_t shift, std::optional<int> axis = std::nullopt);
XP_API Array roll(const Array& x, const std::vector<std::int64_t>& shift, const std::vector<int>& axis);
// x repeated along each axis (`repetitions` aligned to the last axes; the shorter of the two is
// padded with leading 1s). No negative repetition.
XP_API Array tile(const Array& x, const std::vector<std::int64_t>& repetitions);
// The sub-arrays along axis, as views (the inverse of stack).
XP_API std::vector<Array> unstack(const Array& x, int axis = 0);

// ---- elementwise (lazy) --------------------------------------------------------------------------
#define XP_UNARY_(name) XP_API Array name(const Operand& x, const Out& out = {});
#define XP_BINARY_(name) XP_API Array name(const Operand& x, const Operand& y, const Out& out = {});
XP_UNARY_(negative)
XP_UNARY_(positive)
XP_UNARY_(abs)
XP_UNARY_(sign)
XP_UNARY_(square)
XP_UNARY_(sqrt)
XP_UNARY_(exp)
XP_UNARY_(expm1)
XP_UNARY_(log)
XP_UNARY_(log1p)
XP_UNARY_(log2)
XP_UNARY_(log10)
XP_UNARY_(sin)
XP_UNARY_(cos)
XP_UNARY_(tan)
XP_UNARY_(asin)
XP_UNARY_(acos)
XP_UNARY_(atan)
XP_UNARY_(sinh)
XP_UNARY_(cosh)
XP_UNARY_(tanh)
XP_UNARY_(acosh)
XP_UNARY_(asinh)
XP_UNARY_(atanh)
XP_UNARY_(floor)
XP_UNARY_(ceil)
XP_UNARY_(round)
XP_UNARY_(trunc)
XP_UNARY_(isnan)
XP_UNARY_(isinf)
XP_UNARY_(isfinite)
XP_UNARY_(signbit)     // the sign bit of a float (-0.0 and NaNs too); integers: x < 0; bool: false
XP_UNARY_(reciprocal)  // 1 / x, exactly rounded; integers and bool as sqrt (the smallest float)
XP_UNARY_(logical_not)
XP_UNARY_(bitwise_invert)
// A complex x's real part, imaginary part (float32 for complex64, float64 for complex128) and
// conjugate; a real x: real and conj give its values, imag zeros of its dtype (as NumPy).
XP_UNARY_(real)
XP_UNARY_(imag)
XP_UNARY_(conj)
XP_BINARY_(add)
XP_BINARY_(subtract)
XP_BINARY_(multiply)
XP_BINARY_(divide)
XP_BINARY_(floor_divide)
XP_BINARY_(remainder)
XP_BINARY_(pow)
XP_BINARY_(atan2)
XP_BINARY_(hypot)
XP_BINARY_(copysign)   // x's magnitude with y's sign bit, exact
XP_BINARY_(nextafter)  // the next value of the result's float dtype after x toward y (float16 too)
XP_BINARY_(logaddexp)  // log(exp(x) + exp(y)) without overflow, as NumPy's
XP_BINARY_(minimum)
XP_BINARY_(maximum)
XP_BINARY_(equal)
XP_BINARY_(not_equal)
XP_BINARY_(less)
XP_BINARY_(less_equal)
XP_BINARY_(greater)
XP_BINARY_(greater_equal)
XP_BINARY_(logical_and)
XP_BINARY_(logical_or)
XP_BINARY_(logical_xor)
XP_BINARY_(bitwise_and)
XP_BINARY_(bitwise_or)
XP_BINARY_(bitwise_xor)
XP_BINARY_(bitwise_left_shift)
XP_BINARY_(bitwise_right_shift)
#undef XP_UNARY_
#undef XP_BINARY_
// minimum(maximum(x, min), max), as np.clip (docs/semantics.md): the operands promote all at once;
// for an integer array x, an integer bound at or beyond x's dtype's limit on its side is dropped.
XP_API Array clip(const Operand& x, const Operand& min, const Operand& max, const Out& out = {});
XP_API Array where(const Operand& condition, const Operand& x, const Operand& y, const Out& out = {});
// x * y + z rounded once (the only fused multiply-add xp does; a*b+c rounds twice, as NumPy), for
// float16 and bfloat16 too; integer and bool operands are converted to float64 first. As clip, the
// three operands promote all at once, as np.result_type of all of them.
XP_API Array fma(const Operand& x, const Operand& y, const Operand& z, const Out& out = {});

// Operators: arrays with arrays or weak scalars.
XP_API Array operator+(const Operand& a, const Operand& b);
XP_API Array operator-(const Operand& a, const Operand& b);
XP_API Array operator*(const Operand& a, const Operand& b);
XP_API Array operator/(const Operand& a, const Operand& b);
XP_API Array operator%(const Operand& a, const Operand& b);
XP_API Array operator&(const Operand& a, const Operand& b);
XP_API Array operator|(const Operand& a, const Operand& b);
XP_API Array operator^(const Operand& a, const Operand& b);
XP_API Array operator<<(const Operand& a, const Operand& b);
XP_API Array operator>>(const Operand& a, const Operand& b);
XP_API Array operator==(const Operand& a, const Operand& b);
XP_API Array operator!=(const Operand& a, const Operand& b);
XP_API Array operator<(const Operand& a, const Operand& b);
XP_API Array operator<=(const Operand& a, const Operand& b);
XP_API Array operator>(const Operand& a, const Operand& b);
XP_API Array operator>=(const Operand& a, const Operand& b);
XP_API Array operator-(const Array& a);
XP_API Array operator+(const Array& a);
XP_API Array operator~(const Array& a);
XP_API Array operator!(const Array& a);

// ---- reductions (evaluate) ---------------------------------------------------------------------
XP_API Array sum(const Array& a, const Axes& axes = {}, bool keepdims = false,
                 std::optional<DType> dtype = std::nullopt);
XP_API Array prod(const Array& a, const Axes& axes = {}, bool keepdims = false,
                  std::optional<DType> dtype = std::nullopt);
XP_API Array mean(const Array& a, const Axes& axes = {}, bool keepdims = false);
// var and std divide by N - correction, any real correction (0.5 too, as the Array API allows).
XP_API Array var(const Array& a, const Axes& axes = {}, double correction = 0, bool keepdims = false);
XP_API Array std(const Array& a, const Axes& axes = {}, double correction = 0, bool keepdims = false);
XP_API Array min(const Array& a, const Axes& axes = {}, bool keepdims = false);
XP_API Array max(const Array& a, const Axes& axes = {}, bool keepdims = false);
XP_API Array any(const Array& a, const Axes& axes = {}, bool keepdims = false);
XP_API Array all(const Array& a, const Axes& axes = {}, bool keepdims = false);
XP_API Array argmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
XP_API Array argmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
XP_API Array cumulative_sum(const Array& a, std::optional<int> axis = std::nullopt,
                            std::optional<DType> dtype = std::nullopt, bool include_initial = false);
// The running product, as cumulative_sum (dtypes as prod; include_initial adds a leading 1).
XP_API Array cumulative_prod(const Array& a, std::optional<int> axis = std::nullopt,
                             std::optional<DType> dtype = std::nullopt, bool include_initial = false);
// The n-th discrete difference along axis (x[1:] - x[:-1], n times), with `prepend` and `append`
// (arrays, or scalars broadcast to one slice) joined to x along axis first. bool differences are
// not_equal, as NumPy's. n = 0 gives x (after prepend and append).
XP_API Array diff(const Array& x, int axis = -1, int n = 1, const std::optional<Operand>& prepend = std::nullopt,
                  const std::optional<Operand>& append = std::nullopt);

// ---- linear algebra ------------------------------------------------------------------------------
// Batched over leading dimensions (broadcast); 1-D operands as NumPy (prepended / appended 1).
// The two-argument form is MatmulPrecision::float32: float32 never in TF32 unless asked for
// (xp/precision.hpp says what tf32 permits).
XP_API Array matmul(const Array& a, const Array& b);
XP_API Array matmul(const Array& a, const Array& b, MatmulPrecision precision);
XP_API Array vecdot(const Array& a, const Array& b, int axis = -1);
// Sums of products over the last `axes` axes of a and the first `axes` of b, or over the listed
// pairs of axes (equal extents): permute_dims, reshape and one matmul.
XP_API Array tensordot(const Array& a, const Array& b, int axes = 2);
XP_API Array tensordot(const Array& a, const Array& b, const std::vector<int>& axes_a, const std::vector<int>& axes_b);

// ---- random numbers ----------------------------------------------------------------------------
namespace random {
// Counter-based (Philox4x32-10): the same seed gives the same numbers on every device and thread
// count. Each draw takes the next stream of the seed, so successive draws differ.
class XP_API Generator {
 public:
  explicit Generator(std::uint64_t seed) noexcept : seed_(seed) {}
  std::uint64_t seed() const noexcept { return seed_; }
  std::uint64_t position() const noexcept { return stream_; }  // draws taken so far
  // Floats low + (high - low) * u, u uniform in [0, 1) (float dtypes only), computed in the dtype:
  // as in NumPy, the rounding can give exactly `high` (float32 1 + (2 - 1) * (1 - 2^-24) is 2).
  Array uniform(const Shape& shape, DType dtype = DType::float64, double low = 0, double high = 1,
                const DeviceArg& device = std::nullopt);
  // Normal floats: loc + scale * z (float dtypes only).
  Array normal(const Shape& shape, DType dtype = DType::float64, double loc = 0, double scale = 1,
               const DeviceArg& device = std::nullopt);
  // Integers in [low, high) (integer dtypes; both bounds must fit the dtype).
  Array integers(std::int64_t low, std::int64_t high, const Shape& shape, DType dtype = DType::int64,
                 const DeviceArg& device = std::nullopt);

  // Composed of the draws above (src/array/random_draws.cpp), one stream each. A random ordering
  // of 0..n-1 (int64): the stable argsort of random int64 keys, so the same on every device.
  Array permutation(std::int64_t n, const DeviceArg& device = std::nullopt);
  // x's sub-arrays along `axis` in a random order (a new array); shuffle writes them back into x.
  Array permutation(const Array& x, int axis = 0);
  void shuffle(const Array& x, int axis = 0);
  // Sub-arrays of x along `axis` (or elements of arange(n)) drawn uniformly, `size` of them in that
  // shape (none: one, the axis dropped), with replacement or without (then at most the axis's
  // extent).
  Array choice(const Array& x, const std::optional<Shape>& size = std::nullopt, bool replace = true, int axis = 0);
  Array choice(std::int64_t n, const std::optional<Shape>& size = std::nullopt, bool replace = true,
               const DeviceArg& device = std::nullopt);
  // Weighted choice: sub-array i drawn with probability p[i] (p 1-D, the axis's extent, no NaN, none
  // negative, summing to 1 within sqrt(float64 eps): ValueErrors otherwise). With replacement, the
  // inversion of uniform draws through p's running sum (NumPy's: cumsum, divided by its last
  // value, searchsorted right); without, NumPy's rounds: draws by that inversion, the first
  // occurrence of each index kept in draw order and the found ones given weight 0 for the next
  // round, until `size` are found (a ValueError when fewer than `size` weights are positive). The
  // running sums are made on the host and the searches are exact, so every device gives the same.
  Array choice(const Array& x, const std::optional<Shape>& size, bool replace, const Array& p, int axis = 0);
  Array choice(std::int64_t n, const std::optional<Shape>& size, bool replace, const Array& p,
               const DeviceArg& device = std::nullopt);
  // Gamma floats of shape k and `scale` (both finite and non-negative, else a ValueError; k = 0 or
  // scale = 0 gives zeros): Marsaglia and Tsang's method over whole arrays, computed in float64
  // and converted to dtype. Each round draws a normal and a uniform array of the full shape and
  // accepts where the test passes; rounds repeat until every element is accepted (at least 95% of
  // the pending ones are in each round). k < 1: a draw of shape k + 1 times u^(1/k). Built of
  // normal, log and pow, so not exact: devices agree within a few ulp (docs/semantics.md).
  Array gamma(double shape_k, double scale, const Shape& size, DType dtype = DType::float64,
              const DeviceArg& device = std::nullopt);
  // Poisson counts of mean lam (int64): uniform float64 draws inverted through the distribution's
  // running sum, tabulated on the host from the mode outwards (the table drops tails below 1e-20
  // of the mode's probability) and searched exactly, so the same on every device. lam must be
  // finite, non-negative and at most 1e10 (the table grows with sqrt(lam)): ValueErrors otherwise.
  Array poisson(double lam, const Shape& size, const DeviceArg& device = std::nullopt);
  // Binomial counts of n trials of probability p (int64), inverted as poisson is, from a table of
  // the pmf around the mode. n >= 0, p in [0, 1], and n p (1 - p) at most 1e10: ValueErrors
  // otherwise. n = 0, p = 0 and p = 1 draw nothing and give 0, 0 and n.
  Array binomial(std::int64_t n, double p, const Shape& size, const DeviceArg& device = std::nullopt);
  // Exponential floats of mean `scale` (float dtypes only): -log1p(-u) * scale with u uniform in
  // [0, 1), through each device's log1p (not exactly rounded: docs/semantics.md).
  Array exponential(const Shape& shape, DType dtype = DType::float64, double scale = 1,
                    const DeviceArg& device = std::nullopt);

 private:
  std::uint64_t seed_;
  std::uint64_t stream_ = 0;
};
}  // namespace random

}  // namespace xp
