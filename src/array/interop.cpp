// Sharing arrays with other libraries (include/xp/interop.hpp): DLPack 1.x and the CUDA array
// interface, both ways, and arrays as kernel arguments (Kernel::launch).

#include "xp/interop.hpp"

#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "array/array_impl.hpp"
#include "runtime/current.hpp"
#include "runtime/foreign.hpp"
#include "xp/program.hpp"
#include "xp/stream.hpp"

static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4, "DLPack ABI");
static_assert(sizeof(DLTensor) == 48 && offsetof(DLTensor, byte_offset) == 40, "DLPack ABI");
static_assert(sizeof(DLManagedTensorVersioned) == 80 && offsetof(DLManagedTensorVersioned, flags) == 24 &&
                  offsetof(DLManagedTensorVersioned, dl_tensor) == 32,
              "DLPack ABI");

namespace xp {

using detail::impl_of;
using detail::ImplPtr;

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::string hex(std::uintptr_t p) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[p & 15]);
    p >>= 4;
  } while (p != 0);
  return "0x" + s;
}

// ---- dtypes ----

DLDataType dl_dtype(DType t) {
  const auto bits = static_cast<std::uint8_t>(itemsize(t) * 8);
  switch (kind(t)) {
    case DTypeKind::boolean:
      return {static_cast<std::uint8_t>(kDLBool), 8, 1};
    case DTypeKind::signed_integer:
      return {static_cast<std::uint8_t>(kDLInt), bits, 1};
    case DTypeKind::unsigned_integer:
      return {static_cast<std::uint8_t>(kDLUInt), bits, 1};
    case DTypeKind::floating:
      return {static_cast<std::uint8_t>(t == DType::bfloat16 ? kDLBfloat : kDLFloat), bits, 1};
    case DTypeKind::complex_floating:
      return {static_cast<std::uint8_t>(kDLComplex), bits, 1};
  }
  return {};
}

DType from_dl_dtype(DLDataType d) {
  const std::string text = "DLPack dtype (code " + std::to_string(d.code) + ", bits " + std::to_string(d.bits) +
                           ", lanes " + std::to_string(d.lanes) + ")";
  if (d.lanes != 1) throw ValueError("from_dlpack: " + text + ": vector lanes are not supported (lanes must be 1)");
  switch (d.code) {
    case kDLBool:
      if (d.bits == 8) return DType::bool_;
      break;
    case kDLInt:
      if (d.bits == 8) return DType::int8;
      if (d.bits == 16) return DType::int16;
      if (d.bits == 32) return DType::int32;
      if (d.bits == 64) return DType::int64;
      break;
    case kDLUInt:
      if (d.bits == 8) return DType::uint8;
      if (d.bits == 16) return DType::uint16;
      if (d.bits == 32) return DType::uint32;
      if (d.bits == 64) return DType::uint64;
      break;
    case kDLFloat:
      if (d.bits == 16) return DType::float16;
      if (d.bits == 32) return DType::float32;
      if (d.bits == 64) return DType::float64;
      break;
    case kDLBfloat:
      if (d.bits == 16) return DType::bfloat16;
      break;
    case kDLComplex:
      if (d.bits == 64) return DType::complex64;
      if (d.bits == 128) return DType::complex128;
      break;
    default:
      break;
  }
  throw TypeError("from_dlpack: " + text + " is not an xp dtype");
}

// ---- CUDA helpers (the device made current by the caller) ----

// `waiter` waits on the device for the work queued on `producer` so far (no host wait); handles
// as the driver takes them (1 and 2 are its own special handles).
void device_wait(std::uintptr_t waiter, std::uintptr_t producer) {
  detail::stream_wait_stream(waiter, producer);
}

// The calling thread's current stream of the device: where xp's work on imported and exported
// memory goes (xp's default stream outside a StreamScope).
std::uintptr_t xp_stream(const Device& d) {
  return reinterpret_cast<std::uintptr_t>(detail::work_stream(d).handle());
}

// The ordinal of the device whose memory `p` is, as the driver records it.
int pointer_device(std::uintptr_t p, const char* what) {
  const std::optional<int> ordinal = detail::pointer_device_ordinal(p);
  if (!ordinal) {
    throw ValueError(std::string(what) + ": " + hex(p) + " is not memory the CUDA driver knows (not a device pointer)");
  }
  return *ordinal;
}

// The owner of imported device memory: when the last array goes, the stream that last used it
// first finishes what it queued on the memory, then the foreign owner lets go (it may reuse the
// memory at once).
std::shared_ptr<void> device_owner(const Device& d, std::shared_ptr<void> foreign) {
  void* p = foreign.get();
  return std::shared_ptr<void>(p, [d, foreign = std::move(foreign)](void*) mutable {
    try {
      if (const Stream* last = detail::release_stream(d)) last->synchronize();
    } catch (...) {
      // CUDA unusable (a fault, the process exiting, a forked child): nothing of xp's runs anymore.
    }
    foreign.reset();
  });
}

ImplPtr wrap_storage(const Device& d, std::byte* base, std::size_t bytes, std::shared_ptr<void> owner, bool read_only,
                     DType dtype, Shape shape, Shape strides, std::int64_t offset) {
  auto storage = std::make_shared<detail::Storage>();
  storage->device = d;
  storage->backend = &detail::backend_for(d);
  storage->alloc.data = base;
  storage->alloc.bytes = bytes;
  storage->alloc.owner = std::move(owner);
  storage->read_only = read_only;
  return detail::view_of_storage(storage, dtype, std::move(shape), std::move(strides), offset);
}

// Byte strides from element strides; ValueError on overflow.
Shape byte_strides(const std::int64_t* elements, int ndim, std::size_t item, const char* what) {
  Shape s(static_cast<std::size_t>(ndim));
  const auto it = static_cast<std::int64_t>(item);
  for (int i = 0; i < ndim; ++i) {
    if (elements[i] > kInt64Max / it || elements[i] < -(kInt64Max / it)) {
      throw ValueError(std::string(what) + ": stride " + std::to_string(elements[i]) + " is too large");
    }
    s[i] = elements[i] * it;
  }
  return s;
}

// Evaluated, and ready for another library to read or write it.
void prepare_export(const ImplPtr& a) {
  detail::materialize(*a);
  if (!a->storage->read_only) detail::prepare_write(*a->storage);
}

struct DLPackExport {
  DLManagedTensorVersioned tensor{};
  ImplPtr array;
  std::vector<std::int64_t> shape, strides;
};

void delete_export(DLManagedTensorVersioned* self) {
  delete static_cast<DLPackExport*>(self->manager_ctx);
}

}  // namespace

namespace detail {

// Bytes from the lowest to past the highest element (for the storage's record; 0 when empty).
// `first` is the address of element (0, ..., 0). A ValueError when the elements would lie outside
// what any address space holds (no 64-bit platform maps memory at or past 2^57, on the host or a
// GPU): strides, a shape or an offset no real memory can have, which reads would turn into a crash.

std::size_t layout_extent(const Shape& shape, const Shape& strides, std::size_t item, std::uint64_t first,
                          const char* what) {
  constexpr std::int64_t kAddressLimit = std::int64_t{1} << 57;
  std::int64_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return 0;
  }
  const auto too_far = [&] {
    return ValueError(std::string(what) + ": the elements of shape " + shape_str(shape) + " with byte strides " +
                      shape_str(strides) + " from " + hex(first) + " lie outside any address space");
  };
  for (std::size_t i = 0; i < shape.size(); ++i) {
    std::int64_t span = 0;
    std::int64_t& side = strides[i] < 0 ? lo : hi;
    if (!checked_mul(shape[i] - 1, strides[i], span) || !checked_add(side, span, side)) throw too_far();
  }
  const auto item64 = static_cast<std::int64_t>(item);
  if (first >= static_cast<std::uint64_t>(kAddressLimit) || hi >= kAddressLimit || lo <= -kAddressLimit)
    throw too_far();
  const auto f = static_cast<std::int64_t>(first);
  if (f + lo < 0 || f + hi + item64 > kAddressLimit) throw too_far();
  return static_cast<std::size_t>(hi - lo + item64);
}

}  // namespace detail

// ---- DLPack ----

DLManagedTensorVersioned* to_dlpack(const Array& a_, std::optional<std::uintptr_t> consumer_stream) {
  const ImplPtr& a = impl_of(a_);
  const Device d = a->device;
  if (d.kind() == DeviceKind::cpu && consumer_stream) {
    throw ValueError("to_dlpack: a consumer stream for an array on the CPU (streams are for CUDA arrays)");
  }
  if (consumer_stream && *consumer_stream == 0) {
    throw ValueError("to_dlpack: stream 0 is ambiguous; use 1 for the legacy default stream, 2 for per-thread");
  }
  const std::size_t item = itemsize(a->dtype);
  detail::materialize(*a);
  for (std::int64_t s : a->strides) {
    if (s % static_cast<std::int64_t>(item) != 0) {
      throw ValueError("to_dlpack: a stride of " + std::to_string(s) + " bytes is not a whole number of " +
                       std::string(name(a->dtype)) + " elements (DLPack counts strides in elements)");
    }
  }
  prepare_export(a);
  auto ex = std::make_unique<DLPackExport>();
  const int ndim = static_cast<int>(a->shape.size());
  ex->shape.assign(a->shape.begin(), a->shape.end());
  ex->strides.resize(a->strides.size());
  for (int i = 0; i < ndim; ++i) ex->strides[i] = a->strides[i] / static_cast<std::int64_t>(item);
  ex->shape.reserve(1);  // non-null pointers also for 0-d arrays
  ex->strides.reserve(1);
  ex->array = a;
  DLManagedTensorVersioned& t = ex->tensor;
  t.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  t.manager_ctx = ex.get();
  t.deleter = delete_export;
  t.flags = a->storage->read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  t.dl_tensor.data = a->storage->alloc.data + a->offset;
  t.dl_tensor.device = {d.is_cuda() ? kDLCUDA : kDLCPU, d.is_cuda() ? d.index() : 0};
  t.dl_tensor.ndim = ndim;
  t.dl_tensor.dtype = dl_dtype(a->dtype);
  t.dl_tensor.shape = ex->shape.data();
  t.dl_tensor.strides = ex->strides.data();
  t.dl_tensor.byte_offset = 0;
  if (d.is_cuda()) {
    detail::activate_context(d);
    detail::use_on_work_stream(*a->storage);  // the current stream waits for the array's producer
    if (consumer_stream) {
      device_wait(*consumer_stream, xp_stream(d));
    } else {
      detail::work_stream(d).synchronize();
    }
  }
  return &ex.release()->tensor;
}

Array from_dlpack(DLManagedTensorVersioned* tensor, std::uintptr_t producer_stream) {
  if (tensor == nullptr) throw ValueError("from_dlpack: a null tensor");
  // Owned from here on: the deleter runs once, when the memory is released or if this throws.
  std::shared_ptr<void> owner(tensor, [](void* p) {
    auto* t = static_cast<DLManagedTensorVersioned*>(p);
    if (t->deleter != nullptr) t->deleter(t);
  });
  if (tensor->version.major != 1) {
    throw ValueError("from_dlpack: DLPack version " + std::to_string(tensor->version.major) + "." +
                     std::to_string(tensor->version.minor) + "; xp reads major version 1");
  }
  const DLTensor& t = tensor->dl_tensor;
  const std::int32_t type = t.device.device_type;
  if (type != kDLCPU && type != kDLCUDA) {
    throw ValueError("from_dlpack: device type " + std::to_string(type) +
                     " is not supported (xp reads kDLCPU (1) and kDLCUDA (2))");
  }
  const DType dtype = from_dl_dtype(t.dtype);
  const std::size_t item = itemsize(dtype);
  if (t.ndim < 0 || t.ndim > detail::kMaxDims) {
    throw ValueError("from_dlpack: ndim " + std::to_string(t.ndim) + " (xp arrays have 0 to " +
                     std::to_string(detail::kMaxDims) + " dimensions)");
  }
  if (t.ndim > 0 && t.shape == nullptr)
    throw ValueError("from_dlpack: a null shape for ndim " + std::to_string(t.ndim));
  Shape shape(t.shape, t.shape + t.ndim);
  const std::int64_t n = detail::checked_size(shape);
  Shape strides =
      t.strides == nullptr ? detail::c_strides(shape, dtype) : byte_strides(t.strides, t.ndim, item, "from_dlpack");
  if (t.byte_offset > static_cast<std::uint64_t>(kInt64Max) || t.byte_offset % item != 0) {
    throw ValueError("from_dlpack: byte_offset " + std::to_string(t.byte_offset) + " is not a whole number of " +
                     std::string(name(dtype)) + " elements");
  }
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  if (base == 0 && n > 0) throw ValueError("from_dlpack: null data for " + std::to_string(n) + " elements");
  if ((base + t.byte_offset) % item != 0) {
    throw ValueError("from_dlpack: the first element at " + hex(base + t.byte_offset) + " is not aligned to its " +
                     std::to_string(item) + " bytes");
  }
  const bool read_only = (tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  const auto offset = static_cast<std::int64_t>(t.byte_offset);
  if (t.byte_offset > base + t.byte_offset)
    throw ValueError("from_dlpack: byte_offset " + std::to_string(t.byte_offset) + " from " + hex(base) +
                     " passes the end of the address space");
  const std::size_t bytes = detail::layout_extent(shape, strides, item, base + t.byte_offset, "from_dlpack");
  if (type == kDLCPU) {
    if (producer_stream != 0) throw ValueError("from_dlpack: a producer stream for CPU memory");
    return Array(wrap_storage(Device::cpu(), static_cast<std::byte*>(t.data), bytes, std::move(owner), read_only, dtype,
                              std::move(shape), std::move(strides), offset));
  }
  if (t.device.device_id < 0) {
    throw ValueError("from_dlpack: device_id " + std::to_string(t.device.device_id) + " for kDLCUDA");
  }
  const Device d = Device::cuda(t.device.device_id);
  detail::activate_context(d);  // DeviceUnavailable when it cannot be used
  if (n > 0) {
    const int ordinal = pointer_device(base + t.byte_offset, "from_dlpack");
    if (ordinal != d.index()) {
      throw ValueError("from_dlpack: the tensor says cuda:" + std::to_string(d.index()) +
                       " but the driver places its memory on cuda:" + std::to_string(ordinal));
    }
  }
  if (producer_stream != 0) device_wait(xp_stream(d), producer_stream);
  ImplPtr imported = wrap_storage(d, static_cast<std::byte*>(t.data), bytes, device_owner(d, std::move(owner)),
                                  read_only, dtype, std::move(shape), std::move(strides), offset);
  detail::use_on_work_stream(*imported->storage);  // made on the current stream, which waited above
  return Array(imported);
}

// ---- the CUDA array interface ----

std::string typestr(DType t) {
  const std::string bytes = std::to_string(itemsize(t));
  switch (kind(t)) {
    case DTypeKind::boolean:
      return "|b1";
    case DTypeKind::signed_integer:
      return (itemsize(t) == 1 ? "|i" : "<i") + bytes;
    case DTypeKind::unsigned_integer:
      return (itemsize(t) == 1 ? "|u" : "<u") + bytes;
    case DTypeKind::floating:
      if (t == DType::bfloat16) {
        throw TypeError("bfloat16 has no array-protocol type string (NumPy has no bfloat16): share it through DLPack");
      }
      return "<f" + bytes;
    case DTypeKind::complex_floating:
      return "<c" + bytes;
  }
  return {};
}

DType dtype_from_typestr(const std::string& s) {
  const std::string what = "type string '" + s + "'";
  if (s.size() < 3) throw ValueError(what + " is malformed (expected e.g. '<f4')");
  const char order = s[0], k = s[1];
  int bytes = 0;
  for (std::size_t i = 2; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || bytes > 1000) throw ValueError(what + " is malformed (expected e.g. '<f4')");
    bytes = bytes * 10 + (s[i] - '0');
  }
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    throw ValueError(what + ": unknown byte order '" + std::string(1, order) + "'");
  }
  if (order == '>' && bytes > 1) throw ValueError(what + ": big-endian data (xp is little-endian)");
  std::optional<DType> t;
  if (k == 'b' && bytes == 1) t = DType::bool_;
  if (k == 'i' || k == 'u') {
    const bool s_ = k == 'i';
    if (bytes == 1) t = s_ ? DType::int8 : DType::uint8;
    if (bytes == 2) t = s_ ? DType::int16 : DType::uint16;
    if (bytes == 4) t = s_ ? DType::int32 : DType::uint32;
    if (bytes == 8) t = s_ ? DType::int64 : DType::uint64;
  }
  if (k == 'f') {
    if (bytes == 2) t = DType::float16;
    if (bytes == 4) t = DType::float32;
    if (bytes == 8) t = DType::float64;
  }
  if (k == 'c') {
    if (bytes == 8) t = DType::complex64;
    if (bytes == 16) t = DType::complex128;
  }
  if (!t) throw TypeError(what + " is not an xp dtype");
  return *t;
}

CudaArrayInterface to_cuda_array_interface(const Array& a_, bool synchronize) {
  const ImplPtr& a = impl_of(a_);
  const Device d = a->device;
  if (!d.is_cuda()) {
    throw ValueError("to_cuda_array_interface: the array is on " + d.str() +
                     "; the CUDA array interface describes device memory");
  }
  CudaArrayInterface c;
  c.typestr = typestr(a->dtype);
  prepare_export(a);
  c.shape = a->shape;
  if (!detail::view_of(*a).is_c_contiguous()) c.strides = a->strides;
  c.data = a->size() == 0 ? 0 : reinterpret_cast<std::uintptr_t>(a->storage->alloc.data + a->offset);
  c.read_only = a->storage->read_only;
  c.version = 3;
  detail::activate_context(d);
  detail::use_on_work_stream(*a->storage);
  if (synchronize) {
    detail::work_stream(d).synchronize();
    c.stream = 0;
  } else {
    c.stream = xp_stream(d);
  }
  return c;
}

Array from_cuda_array_interface(const CudaArrayInterface& c, std::shared_ptr<void> keep_alive,
                                std::optional<Device> device) {
  const char* what = "from_cuda_array_interface";
  if (c.version < 1 || c.version > 3) {
    throw ValueError(std::string(what) + ": version " + std::to_string(c.version) + " (xp reads versions 1 to 3)");
  }
  const DType dtype = dtype_from_typestr(c.typestr);
  const std::size_t item = itemsize(dtype);
  const std::int64_t n = detail::checked_size(c.shape);
  if (!c.strides.empty() && c.strides.size() != c.shape.size()) {
    throw ValueError(std::string(what) + ": " + std::to_string(c.strides.size()) + " strides for " +
                     std::to_string(c.shape.size()) + " dimensions");
  }
  for (std::int64_t s : c.strides) {
    if (s % static_cast<std::int64_t>(item) != 0) {
      throw ValueError(std::string(what) + ": a stride of " + std::to_string(s) + " bytes is not a whole number of " +
                       std::string(name(dtype)) + " elements");
    }
  }
  if (c.data == 0 && n > 0) throw ValueError(std::string(what) + ": null data for " + std::to_string(n) + " elements");
  if (c.data % item != 0) {
    throw ValueError(std::string(what) + ": data " + hex(c.data) + " is not aligned to its " + std::to_string(item) +
                     " bytes");
  }
  if (device && !device->is_cuda()) {
    throw ValueError(std::string(what) + ": " + device->str() + " is not a CUDA device");
  }
  Shape strides = c.strides.empty() ? detail::c_strides(c.shape, dtype) : Shape(c.strides.begin(), c.strides.end());
  const std::size_t bytes = detail::layout_extent(c.shape, strides, item, c.data, what);
  Device d = device ? *device : Device::cuda(0);
  if (!device && c.data == 0 && default_device().is_cuda()) d = default_device();
  if (device || c.data == 0) {
    detail::activate_context(d);  // DeviceUnavailable when CUDA cannot be used
  } else {
    // The device is the pointer's: asked of the driver before any device is made current, so that
    // memory on cuda:1 never creates a context on cuda:0. A driver that wants a current context
    // for the question gets cuda:0's, as before.
    // DeviceUnavailable when CUDA cannot be used; a failed question is asked again below, after
    // activate(), where its error is reported.
    try {
      if (const std::optional<int> ordinal = detail::pointer_device_ordinal(c.data)) d = Device::cuda(*ordinal);
    } catch (const CudaError&) {
    }
    detail::activate_context(d);
  }
  if (c.data != 0) {
    const int ordinal = pointer_device(c.data, what);
    if (device && ordinal != device->index()) {
      throw ValueError(std::string(what) + ": the memory is on cuda:" + std::to_string(ordinal) + ", not " +
                       device->str());
    }
    d = Device::cuda(ordinal);
    detail::activate_context(d);
  }
  if (c.stream != 0) device_wait(xp_stream(d), c.stream);
  ImplPtr imported =
      wrap_storage(d, reinterpret_cast<std::byte*>(c.data), bytes, device_owner(d, std::move(keep_alive)), c.read_only,
                   dtype, c.shape, std::move(strides), 0);
  detail::use_on_work_stream(*imported->storage);  // made on the current stream, which waited above
  return Array(imported);
}

// ---- kernel arguments ----

std::uint64_t kernel_arg(const Array& a, KernelArgContext& context) {
  const ImplPtr& impl = impl_of(a);
  if (impl->device != context.device()) {
    throw DeviceMismatch("kernel launch (kernel, argument)", context.device().str(), impl->device.str());
  }
  detail::materialize(*impl);
  // The kernel may write any argument: lazy arrays that read this memory compute first.
  if (!impl->storage->read_only) detail::prepare_write(*impl->storage);
  // The launch's stream waits for the array's last stream and becomes it. A stream of another
  // device is the launch's error to report.
  if (impl->device.is_cuda() && (context.stream() == nullptr || context.stream()->device() == impl->device)) {
    if (context.stream() != nullptr) {
      detail::use_on_stream(*impl->storage, *context.stream());
    } else {
      detail::use_on_work_stream(*impl->storage);
    }
  }
  context.keep_alive(impl->storage, impl->storage->alloc.stream_ordered);
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(impl->storage->alloc.data + impl->offset));
}

}  // namespace xp
