// Array handles, layouts and views.

#include <algorithm>
#include <cstring>
#include <limits>
#include <ostream>

#include "array/array_impl.hpp"
#include "array/format.hpp"
#include "runtime/parallel.hpp"
#include "xp/config.hpp"

namespace xp {

namespace detail {

const ImplPtr& impl_of(const Array& a) {
  if (!a.impl()) throw ValueError("empty xp::Array handle (default-constructed or moved from)");
  return a.impl();
}

Shape c_strides(const Shape& shape, DType dtype) {
  Shape s(shape.size());
  std::int64_t st = static_cast<std::int64_t>(xp::itemsize(dtype));
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    s[i] = st;
    st *= std::max<std::int64_t>(shape[i], 1);
  }
  return s;
}

std::string shape_str(std::span<const std::int64_t> shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

int normalize_axis(int axis, int ndim, const char* what) {
  if (axis < -ndim || axis >= ndim) {
    throw ValueError(std::string(what) + ": axis " + std::to_string(axis) +
                     " is out of bounds for array of dimension " + std::to_string(ndim));
  }
  return axis < 0 ? axis + ndim : axis;
}

Shape broadcast_shape(const Shape& a, const Shape& b) {
  check_extents(a, "broadcast_shapes");
  check_extents(b, "broadcast_shapes");
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw ValueError("operands could not be broadcast together with shapes " + shape_str(a) + " " + shape_str(b));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void check_extents(const Shape& shape, const char* what) {
  if (shape.size() > static_cast<std::size_t>(kMaxDims)) {
    throw ValueError(std::string(what) + ": an array has at most " + std::to_string(kMaxDims) +
                     " dimensions; asked for " + std::to_string(shape.size()));
  }
  for (auto d : shape) {
    if (d < 0) throw ValueError(std::string(what) + ": negative dimensions are not allowed: " + shape_str(shape));
  }
}

std::int64_t checked_size(const Shape& shape) {
  if (shape.size() > static_cast<std::size_t>(kMaxDims)) {
    throw ValueError("an array has at most " + std::to_string(kMaxDims) + " dimensions; asked for " +
                     std::to_string(shape.size()));
  }
  // As NumPy, the product of the nonzero dimensions must fit (here in max / 16 elements, room for
  // the bytes of any dtype and for the strides of every axis), even when another dimension is 0.
  std::int64_t n = 1;
  bool empty = false;
  for (auto d : shape) {
    if (d < 0) throw ValueError("negative dimensions are not allowed: " + shape_str(shape));
    if (d == 0) {
      empty = true;
      continue;
    }
    // n * d above max / 16 (checked without a division: this runs for every new array).
    std::int64_t next = 0;
    if (!checked_mul(n, d, next) || next > std::numeric_limits<std::int64_t>::max() / 16) {
      throw ValueError("array is too big: shape " + shape_str(shape));
    }
    n = next;
  }
  return empty ? 0 : n;
}

// A complex array as a real one with a last axis of 2 (the parts), over the same memory.
Array as_parts(const Array& z) {
  const ImplPtr& x = impl_of(z);
  materialize(*x);
  const DType part = real_dtype(x->dtype);
  Shape shape = x->shape, strides = x->strides;
  shape.push_back(2);
  strides.push_back(static_cast<std::int64_t>(itemsize(part)));
  return Array(view_of_storage(x->storage, part, std::move(shape), std::move(strides), x->offset));
}
// The inverse: a C-contiguous real array whose last axis is 2 as a complex one.
Array from_parts(const Array& r) {
  const ImplPtr& x = impl_of(r);
  materialize(*x);
  const DType c = complex_dtype(x->dtype);
  Shape shape(x->shape.begin(), x->shape.end() - 1);
  Shape strides = c_strides(shape, c);
  return Array(view_of_storage(x->storage, c, std::move(shape), std::move(strides), x->offset));
}

bool can_cast_same_kind(DType from, DType to) noexcept {
  const DTypeKind f = kind(from), t = kind(to);
  switch (f) {
    case DTypeKind::boolean:
      return true;
    case DTypeKind::unsigned_integer:
      return t != DTypeKind::boolean;
    case DTypeKind::signed_integer:
      return t == DTypeKind::signed_integer || t == DTypeKind::floating || t == DTypeKind::complex_floating;
    case DTypeKind::floating:
      return t == DTypeKind::floating || t == DTypeKind::complex_floating;
    case DTypeKind::complex_floating:
      return t == DTypeKind::complex_floating;
  }
  return false;
}

std::shared_ptr<Storage> new_storage(const Device& device, Backend& backend, std::size_t bytes) {
  auto storage = std::make_shared<Storage>();
  storage->device = device;
  storage->backend = &backend;
  storage->alloc = backend.allocate(bytes);
  use_on_work_stream(*storage);  // made on the current stream of its device
  return storage;
}

ImplPtr new_array(DType dtype, const Shape& shape, const Device& device) {
  const std::int64_t n = checked_size(shape);
  Backend& be = backend_for(device);
  auto impl = std::make_shared<ArrayImpl>();
  impl->storage = new_storage(device, be, static_cast<std::size_t>(n) * xp::itemsize(dtype));
  impl->dtype = dtype;
  impl->shape = shape;
  impl->strides = c_strides(shape, dtype);
  impl->device = device;
  impl->backend = &be;
  return impl;
}

ImplPtr view_of_storage(const std::shared_ptr<Storage>& storage, DType dtype, Shape shape, Shape strides,
                        std::int64_t offset) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->dtype = dtype;
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->device = storage->device;
  impl->backend = storage->backend;
  impl->storage = storage;
  return impl;
}

ImplPtr make_view(const ImplPtr& a, Shape shape, Shape strides, std::int64_t offset) {
  materialize(*a);
  return view_of_storage(a->storage, a->dtype, std::move(shape), std::move(strides), offset);
}

namespace {

// NumPy's attempt to reshape without copying: strides for `to` over a's memory, or false.
bool reshape_strides(const ArrayImpl& a, const Shape& to, Shape& out) {
  Shape oshape, ostrides;  // a without its size-1 axes
  for (std::size_t i = 0; i < a.shape.size(); ++i) {
    if (a.shape[i] != 1) {
      oshape.push_back(a.shape[i]);
      ostrides.push_back(a.strides[i]);
    }
  }
  out.assign(to.size(), 0);
  const int on = static_cast<int>(oshape.size()), nn = static_cast<int>(to.size());
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nn && oi < on) {
    std::int64_t np = to[ni], op = oshape[oi];
    while (np != op) {
      if (np < op) {
        np *= to[nj++];
      } else {
        op *= oshape[oj++];
      }
    }
    for (int ok = oi; ok < oj - 1; ++ok) {
      if (ostrides[ok] != oshape[ok + 1] * ostrides[ok + 1]) return false;
    }
    out[nj - 1] = ostrides[oj - 1];
    for (int nk = nj - 1; nk > ni; --nk) out[nk - 1] = out[nk] * to[nk];
    ni = nj++;
    oi = oj++;
  }
  const std::int64_t last = ni >= 1 ? out[ni - 1] : static_cast<std::int64_t>(xp::itemsize(a.dtype));
  for (int i = ni; i < nn; ++i) out[i] = last;
  return true;
}

}  // namespace

}  // namespace detail

using detail::impl_of;
using detail::ImplPtr;

double Scalar::as_double() const noexcept {
  switch (kind_) {
    case ScalarKind::floating:
    case ScalarKind::complex:
      return f_;
    case ScalarKind::boolean:
      return i_ != 0 ? 1.0 : 0.0;
    case ScalarKind::integer:
      return unsigned_ ? static_cast<double>(u_) : static_cast<double>(i_);
  }
  return 0;
}

DType Scalar::default_dtype() const noexcept {
  switch (kind_) {
    case ScalarKind::floating:
      return DType::float64;
    case ScalarKind::boolean:
      return DType::bool_;
    case ScalarKind::integer:
      return unsigned_ ? DType::uint64 : DType::int64;
    case ScalarKind::complex:
      return DType::complex128;
  }
  return DType::float64;
}

Array::Array() noexcept = default;
Array::Array(const Array&) noexcept = default;
Array::Array(Array&&) noexcept = default;
Array::~Array() = default;
Array& Array::operator=(const Array&) & noexcept = default;
Array& Array::operator=(Array&&) & noexcept = default;
Array::Array(std::shared_ptr<detail::ArrayImpl> impl) noexcept : impl_(std::move(impl)) {}

namespace {
void refuse_index_copy(const Array& a) {
  if (impl_of(a)->index_copy)
    throw ValueError(
        "assigning to a.slice({...}) with an array index would write into a copy: use a.set({...}, values)");
}
}  // namespace

const Array& Array::operator=(const Array& values) && {
  refuse_index_copy(*this);
  copyto(*this, values);
  return *this;
}
const Array& Array::operator=(const Scalar& value) && {
  refuse_index_copy(*this);
  copyto(*this, value);
  return *this;
}

const Array& Array::assign(const Operand& values) const {
  copyto(*this, values);
  return *this;
}

DType Array::dtype() const {
  return impl_of(*this)->dtype;
}
int Array::ndim() const {
  return static_cast<int>(impl_of(*this)->shape.size());
}
std::span<const std::int64_t> Array::shape() const {
  return impl_of(*this)->shape;
}
std::int64_t Array::shape(int axis) const {
  const auto& i = impl_of(*this);
  return i->shape[detail::normalize_axis(axis, static_cast<int>(i->shape.size()), "shape")];
}
std::span<const std::int64_t> Array::strides() const {
  const ImplPtr& a = impl_of(*this);
  if (a->strides.size() != a->shape.size()) a->strides = detail::c_strides(a->shape, a->dtype);  // lazy: C order
  return a->strides;
}
std::int64_t Array::offset() const {
  return impl_of(*this)->offset;
}
std::int64_t Array::size() const {
  return impl_of(*this)->size();
}
std::int64_t Array::nbytes() const {
  return size() * static_cast<std::int64_t>(xp::itemsize(dtype()));
}
std::size_t Array::itemsize() const {
  return xp::itemsize(dtype());
}
Device Array::device() const {
  return impl_of(*this)->device;
}
bool Array::is_c_contiguous() const {
  const auto& i = impl_of(*this);
  if (i->lazy()) return true;
  return detail::view_of(*i).is_c_contiguous();
}
bool Array::is_lazy() const noexcept {
  return impl_ && impl_->lazy();
}
bool Array::is_read_only() const {
  const auto& i = impl_of(*this);
  return !i->lazy() && i->storage->read_only;
}

Array Array::slice(std::initializer_list<Index> index) const {
  return slice(std::span<const Index>(index.begin(), index.size()));
}

Array Array::slice(std::span<const Index> index) const {
  if (std::any_of(index.begin(), index.end(), [](const Index& ix) { return ix.kind() == Index::Kind::array; }))
    return detail::advanced_get(*this, index);
  const ImplPtr& a = impl_of(*this);
  const int nd = static_cast<int>(a->shape.size());
  int consumed = 0, ellipses = 0;
  for (const Index& ix : index) {
    if (ix.kind() == Index::Kind::integer || ix.kind() == Index::Kind::slice) ++consumed;
    if (ix.kind() == Index::Kind::ellipsis) ++ellipses;
  }
  if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
  if (consumed > nd) {
    throw IndexError("too many indices for array: array is " + std::to_string(nd) + "-dimensional, but " +
                     std::to_string(consumed) + " were indexed");
  }
  const int new_axes = static_cast<int>(
      std::count_if(index.begin(), index.end(), [](const Index& ix) { return ix.kind() == Index::Kind::newaxis; }));
  if (nd - consumed + new_axes > detail::kMaxDims) {
    throw IndexError("too many dimensions: indexing an array of shape " + detail::shape_str(a->shape) + " with " +
                     std::to_string(new_axes) + " newaxis gives " + std::to_string(nd - consumed + new_axes) +
                     " dimensions; an array has at most " + std::to_string(detail::kMaxDims));
  }
  materialize(*a);
  Shape shape, strides;
  std::int64_t offset = a->offset;
  int axis = 0;
  auto take_axis = [&](const Index& ix) {
    const std::int64_t n = a->shape[axis], st = a->strides[axis];
    if (ix.kind() == Index::Kind::integer) {
      std::int64_t i = ix.integer();
      if (i < -n || i >= n) {
        throw IndexError("index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(axis) +
                         " with size " + std::to_string(n));
      }
      if (i < 0) i += n;
      offset += i * st;
    } else {
      const Slice& s = ix.slice();
      if (s.step == 0) throw ValueError("slice step cannot be zero");
      std::int64_t start, stop;
      const std::int64_t step = s.step;
      // Python's slice.indices(n).
      if (step > 0) {
        start = s.start ? *s.start : 0;
        stop = s.stop ? *s.stop : n;
        if (start < 0) start = std::max<std::int64_t>(start + n, 0);
        if (stop < 0) stop = std::max<std::int64_t>(stop + n, 0);
        start = std::min(start, n);
        stop = std::min(stop, n);
      } else {
        start = s.start ? *s.start : n - 1;
        stop = s.stop ? *s.stop : -n - 1;
        if (start < 0) start = std::max<std::int64_t>(start + n, -1);
        if (stop < 0) stop = std::max<std::int64_t>(stop + n, -1);
        start = std::min(start, n - 1);
        stop = std::min(stop, n - 1);
      }
      // In unsigned arithmetic: a step of INT64_MAX or INT64_MIN overflows the usual formula.
      std::int64_t len = 0;
      const auto ustep = static_cast<std::uint64_t>(step);
      if (step > 0 && stop > start)
        len = static_cast<std::int64_t>(static_cast<std::uint64_t>(stop - start - 1) / ustep + 1);
      if (step < 0 && start > stop)
        len = static_cast<std::int64_t>(static_cast<std::uint64_t>(start - stop - 1) / (0 - ustep) + 1);
      if (len > 0) offset += start * st;
      shape.push_back(len);
      // A step that overflows the byte stride leaves at most one element, whose stride is unused.
      std::int64_t stride = 0;
      if (!detail::checked_mul(st, step, stride)) stride = 0;
      strides.push_back(stride);
    }
    ++axis;
  };
  for (const Index& ix : index) {
    switch (ix.kind()) {
      case Index::Kind::newaxis:
        shape.push_back(1);
        strides.push_back(0);
        break;
      case Index::Kind::ellipsis:
        for (int k = 0; k < nd - consumed; ++k) {
          shape.push_back(a->shape[axis]);
          strides.push_back(a->strides[axis]);
          ++axis;
        }
        break;
      default:
        take_axis(ix);
    }
  }
  for (; axis < nd; ++axis) {
    shape.push_back(a->shape[axis]);
    strides.push_back(a->strides[axis]);
  }
  return Array(detail::view_of_storage(a->storage, a->dtype, std::move(shape), std::move(strides), offset));
}

Array Array::operator[](std::int64_t i) const {
  return slice({Index(i)});
}

Array Array::reshape(const Shape& shape) const {
  return xp::reshape(*this, shape);
}
Array Array::transpose() const {
  std::vector<int> axes(static_cast<std::size_t>(ndim()));
  for (int i = 0; i < ndim(); ++i) axes[i] = ndim() - 1 - i;
  return permute_dims(*this, axes);
}

Array Array::ravel() const {
  return xp::reshape(*this, {-1});
}
Array Array::flatten() const {
  return xp::reshape(copy(), {-1});
}

Array Array::copy() const {
  const ImplPtr& a = impl_of(*this);
  ImplPtr out = detail::new_array(a->dtype, a->shape, a->device);
  detail::evaluate_into(a, out);
  return Array(out);
}

Array Array::astype(DType dtype) const {
  const ImplPtr& a = impl_of(*this);
  ImplPtr out = detail::new_array(dtype, a->shape, a->device);
  detail::evaluate_into(a, out);
  return Array(out);
}

Array Array::to_device(const Device& device) const {
  const ImplPtr& a = impl_of(*this);
  if (a->device == device) return *this;
  Array src = is_c_contiguous() && !a->lazy() ? *this : copy();
  materialize(*src.impl());
  ImplPtr out = detail::new_array(a->dtype, a->shape, device);
  const std::size_t bytes = static_cast<std::size_t>(src.nbytes());
  const std::byte* from = src.impl()->storage->alloc.data + src.impl()->offset;
  detail::use_on_work_stream(*src.impl()->storage);  // after its producer's work, on this stream
  if (a->device.kind() == DeviceKind::cpu) {
    out->backend->copy_from_host(from, out->storage->alloc.data, bytes);
  } else if (device.kind() == DeviceKind::cpu) {
    a->backend->copy_to_host(from, out->storage->alloc.data, bytes);
  } else {
    std::vector<std::byte> host(bytes);
    a->backend->copy_to_host(from, host.data(), bytes);
    out->backend->copy_from_host(host.data(), out->storage->alloc.data, bytes);
  }
  return Array(out);
}

Array& Array::eval() {
  materialize(*impl_of(*this));
  return *this;
}

void Array::copy_item(DType dtype, void* dst) const {
  const ImplPtr& a = impl_of(*this);
  if (a->size() != 1) {
    throw ValueError("item: can only convert an array of size 1 to a C++ scalar; this array has size " +
                     std::to_string(a->size()) + " (shape " + detail::shape_str(a->shape) + ")");
  }
  copy_to_host(dtype, dst, 1);
}

void Array::copy_to_host(DType dtype, void* dst, std::size_t count) const {
  const ImplPtr& a = impl_of(*this);
  if (count != static_cast<std::uint64_t>(a->size())) {
    throw ValueError("copy_to_host: room for " + std::to_string(count) + " elements, the array has " +
                     std::to_string(a->size()) + " (shape " + detail::shape_str(a->shape) + ")");
  }
  if (a->device.kind() != DeviceKind::cpu) {
    Array host = to_device(Device::cpu());
    host.copy_to_host(dtype, dst, count);
    return;
  }
  materialize(*a);
  if (dtype == a->dtype && detail::view_of(*a).is_c_contiguous()) {
    if (count > 0) std::memcpy(dst, a->storage->alloc.data + a->offset, count * xp::itemsize(dtype));
    return;
  }
  Array w = wrap(dst, dtype, a->shape);
  detail::evaluate_into(a, w.impl());
}

const void* Array::data() const {
  const ImplPtr& a = impl_of(*this);
  if (a->device.kind() != DeviceKind::cpu)
    throw ValueError("data(): the array is on " + a->device.str() + ", not the CPU");
  materialize(*a);
  return a->storage->alloc.data + a->offset;
}

void* Array::mutable_data() {
  const ImplPtr& a = impl_of(*this);
  if (a->device.kind() != DeviceKind::cpu) {
    throw ValueError("mutable_data(): the array is on " + a->device.str() + ", not the CPU");
  }
  materialize(*a);
  detail::prepare_write(*a->storage);
  return a->storage->alloc.data + a->offset;
}

std::string Array::repr() const {
  const Array c = is_c_contiguous() && device().kind() == DeviceKind::cpu ? *this : copy().to_device(Device::cpu());
  return detail::format_repr(c.dtype(), c.shape(), c.data());
}
std::string Array::str() const {
  const Array c = is_c_contiguous() && device().kind() == DeviceKind::cpu ? *this : copy().to_device(Device::cpu());
  return detail::format_str(c.dtype(), c.shape(), c.data());
}

std::ostream& operator<<(std::ostream& os, const Array& a) {
  return os << a.repr();
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  return os << detail::shape_str(shape);
}
std::ostream& operator<<(std::ostream& os, std::span<const std::int64_t> shape) {
  return os << detail::shape_str(shape);
}

Array::operator bool() const {
  const std::int64_t n = size();
  if (n == 0) {
    throw ValueError("The truth value of an empty array is ambiguous (shape " + detail::shape_str(shape()) +
                     "): use a.size() > 0 to check that an array is not empty");
  }
  if (n > 1) {
    throw ValueError("The truth value of an array with more than one element is ambiguous (shape " +
                     detail::shape_str(shape()) + "): use xp::any(a) or xp::all(a)");
  }
  return item<bool>();
}

Array& Array::operator+=(const Operand& b) {
  add(*this, b, *this);
  return *this;
}
Array& Array::operator-=(const Operand& b) {
  subtract(*this, b, *this);
  return *this;
}
Array& Array::operator*=(const Operand& b) {
  multiply(*this, b, *this);
  return *this;
}
Array& Array::operator/=(const Operand& b) {
  divide(*this, b, *this);
  return *this;
}
Array& Array::operator%=(const Operand& b) {
  remainder(*this, b, *this);
  return *this;
}
Array& Array::operator&=(const Operand& b) {
  bitwise_and(*this, b, *this);
  return *this;
}
Array& Array::operator|=(const Operand& b) {
  bitwise_or(*this, b, *this);
  return *this;
}
Array& Array::operator^=(const Operand& b) {
  bitwise_xor(*this, b, *this);
  return *this;
}
Array& Array::operator<<=(const Operand& b) {
  bitwise_left_shift(*this, b, *this);
  return *this;
}
Array& Array::operator>>=(const Operand& b) {
  bitwise_right_shift(*this, b, *this);
  return *this;
}

void set_lazy(bool lazy) {
  detail::set_lazy_mode(lazy);
}
bool lazy() {
  return detail::lazy_mode();
}
void set_num_threads(int threads) {
  if (threads < 1 || threads > kMaxNumThreads) {
    throw ValueError("set_num_threads: " + std::to_string(threads) + " threads; accepted: an integer from 1 to " +
                     std::to_string(kMaxNumThreads) + " (as XP_NUM_THREADS)");
  }
  detail::set_num_threads(threads);
}
int num_threads() {
  return detail::num_threads();
}

// ---- manipulation ----

Array reshape(const Array& a, const Shape& shape) {
  const ImplPtr& x = impl_of(a);
  Shape to = shape;
  int unknown = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      if (unknown >= 0) throw ValueError("reshape: can only specify one unknown dimension");
      unknown = static_cast<int>(i);
    } else if (to[i] < 0) {
      throw ValueError("reshape: negative dimension in " + detail::shape_str(shape));
    } else if (!detail::checked_mul(known, to[i], known)) {
      throw ValueError("cannot reshape array of size " + std::to_string(x->size()) + " into shape " +
                       detail::shape_str(shape) + ": the shape's size overflows a 64-bit integer");
    }
  }
  const std::int64_t n = x->size();
  if (unknown >= 0) {
    if (known == 0 || n % known != 0) {
      throw ValueError("cannot reshape array of size " + std::to_string(n) + " into shape " + detail::shape_str(shape));
    }
    to[unknown] = n / known;
  }
  if (detail::checked_size(to) != n) {
    throw ValueError("cannot reshape array of size " + std::to_string(n) + " into shape " + detail::shape_str(shape));
  }
  materialize(*x);
  Shape strides;
  if (n == 0) return Array(detail::make_view(x, to, detail::c_strides(to, x->dtype), x->offset));
  if (detail::reshape_strides(*x, to, strides)) return Array(detail::make_view(x, to, strides, x->offset));
  Array c = a.copy();
  return Array(detail::make_view(c.impl(), to, detail::c_strides(to, x->dtype), 0));
}

Array permute_dims(const Array& a, const std::vector<int>& axes) {
  const ImplPtr& x = impl_of(a);
  const int nd = static_cast<int>(x->shape.size());
  if (static_cast<int>(axes.size()) != nd) {
    throw ValueError("permute_dims: axes don't match array (" + std::to_string(axes.size()) + " axes for " +
                     std::to_string(nd) + " dimensions)");
  }
  std::vector<bool> seen(static_cast<std::size_t>(nd));
  Shape shape(nd), strides(nd);
  materialize(*x);
  for (int i = 0; i < nd; ++i) {
    const int ax = detail::normalize_axis(axes[i], nd, "permute_dims");
    if (seen[ax]) throw ValueError("permute_dims: repeated axis in " + std::to_string(axes[i]));
    seen[ax] = true;
    shape[i] = x->shape[ax];
    strides[i] = x->strides[ax];
  }
  return Array(detail::make_view(x, shape, strides, x->offset));
}

Array matrix_transpose(const Array& a) {
  const int nd = a.ndim();
  if (nd < 2) throw ValueError("matrix_transpose: needs at least 2 dimensions, got " + std::to_string(nd));
  std::vector<int> axes(nd);
  for (int i = 0; i < nd; ++i) axes[i] = i;
  std::swap(axes[nd - 1], axes[nd - 2]);
  return permute_dims(a, axes);
}

Array expand_dims(const Array& a, int axis) {
  const ImplPtr& x = impl_of(a);
  const int nd = static_cast<int>(x->shape.size());
  if (nd >= detail::kMaxDims) {
    throw ValueError("expand_dims: the array of shape " + detail::shape_str(x->shape) + " has " + std::to_string(nd) +
                     " dimensions already; an array has at most " + std::to_string(detail::kMaxDims));
  }
  const int ax = detail::normalize_axis(axis, nd + 1, "expand_dims");
  materialize(*x);
  Shape shape = x->shape, strides = x->strides;
  shape.insert(shape.begin() + ax, 1);
  strides.insert(strides.begin() + ax, 0);
  return Array(detail::make_view(x, shape, strides, x->offset));
}

Array squeeze(const Array& a, const Axes& axes) {
  const ImplPtr& x = impl_of(a);
  const int nd = static_cast<int>(x->shape.size());
  std::vector<bool> drop(static_cast<std::size_t>(nd));
  if (axes.all()) {
    for (int i = 0; i < nd; ++i) drop[i] = x->shape[i] == 1;
  } else {
    for (int ax : axes.list()) {
      const int i = detail::normalize_axis(ax, nd, "squeeze");
      if (x->shape[i] != 1) {
        throw ValueError("squeeze: cannot select an axis to squeeze out which has size not equal to one (axis " +
                         std::to_string(ax) + " has size " + std::to_string(x->shape[i]) + ")");
      }
      drop[i] = true;
    }
  }
  materialize(*x);
  Shape shape, strides;
  for (int i = 0; i < nd; ++i) {
    if (!drop[i]) {
      shape.push_back(x->shape[i]);
      strides.push_back(x->strides[i]);
    }
  }
  return Array(detail::make_view(x, shape, strides, x->offset));
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  return detail::broadcast_shape(a, b);
}

Array broadcast_to(const Array& a, const Shape& shape) {
  const ImplPtr& x = impl_of(a);
  detail::check_extents(shape, "broadcast_to");
  detail::checked_size(shape);
  const int nd = static_cast<int>(shape.size()), xd = static_cast<int>(x->shape.size());
  auto fail = [&] {
    throw ValueError("broadcast_to: cannot broadcast an array of shape " + detail::shape_str(x->shape) + " to shape " +
                     detail::shape_str(shape));
  };
  if (xd > nd) fail();
  materialize(*x);
  Shape strides(nd, 0);
  for (int i = 0; i < nd; ++i) {
    const int j = i - (nd - xd);
    if (j < 0) continue;
    if (x->shape[j] == shape[i]) {
      strides[i] = x->strides[j];
    } else if (x->shape[j] != 1) {
      fail();
    }
  }
  return Array(detail::make_view(x, shape, strides, x->offset));
}

Array flip(const Array& a, const Axes& axes) {
  const ImplPtr& x = impl_of(a);
  const int nd = static_cast<int>(x->shape.size());
  std::vector<bool> f(static_cast<std::size_t>(nd), axes.all());
  for (int ax : axes.list()) {
    const int i = detail::normalize_axis(ax, nd, "flip");
    if (!axes.all() && f[i]) throw ValueError("flip: repeated axis " + std::to_string(ax));
    f[i] = true;
  }
  materialize(*x);
  Shape strides = x->strides;
  std::int64_t offset = x->offset;
  for (int i = 0; i < nd; ++i) {
    if (f[i] && x->shape[i] > 0) {
      offset += (x->shape[i] - 1) * strides[i];
      strides[i] = -strides[i];
    }
  }
  return Array(detail::make_view(x, x->shape, strides, offset));
}

Array astype(const Array& a, DType dtype) {
  return a.astype(dtype);
}

}  // namespace xp
