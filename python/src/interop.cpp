// Zero-copy interop over include/xp/interop.hpp: DLPack both ways, __cuda_array_interface__ both
// ways, the buffer protocol for CPU arrays, and xp.asarray from arrays, buffers, sequences, scalars.
#include <Python.h>
#include <complex>

#include <nanobind/stl/pair.h>

#include <cmath>
#include <cstring>
#include <iomanip>
#include <memory>
#include <sstream>

#include "common.hpp"

namespace xp_py {

namespace {

constexpr const char* kVersioned = "dltensor_versioned";
constexpr const char* kUsedVersioned = "used_dltensor_versioned";
constexpr const char* kLegacy = "dltensor";
constexpr const char* kUsedLegacy = "used_dltensor";

// A reference to a Python object that may be dropped from any thread (xp releases foreign memory
// where its last array goes).
std::shared_ptr<void> keep_python(nb::handle h) {
  Py_INCREF(h.ptr());
  return std::shared_ptr<void>(h.ptr(), [](void* p) {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(p));
    PyGILState_Release(g);
  });
}

// A legacy (unversioned) DLPack tensor seen as a versioned one, for xp::from_dlpack.
DLManagedTensorVersioned* from_legacy(DLManagedTensor* legacy) {
  auto* v = new DLManagedTensorVersioned{};
  v->version = {1, 0};
  v->manager_ctx = legacy;
  v->deleter = [](DLManagedTensorVersioned* self) {
    auto* l = static_cast<DLManagedTensor*>(self->manager_ctx);
    if (l->deleter != nullptr) l->deleter(l);
    delete self;
  };
  v->flags = 0;
  v->dl_tensor = legacy->dl_tensor;
  return v;
}

// xp's versioned export as a legacy tensor, for consumers that ask for DLPack 0.x.
DLManagedTensor* to_legacy(DLManagedTensorVersioned* v) {
  auto* l = new DLManagedTensor{};
  l->dl_tensor = v->dl_tensor;
  l->manager_ctx = v;
  l->deleter = [](DLManagedTensor* self) {
    auto* t = static_cast<DLManagedTensorVersioned*>(self->manager_ctx);
    if (t->deleter != nullptr) t->deleter(t);
    delete self;
  };
  return l;
}

std::pair<int, int> dlpack_device(const xp::Array& a) {
  const xp::Device d = a.device();
  return d.is_cuda() ? std::pair{static_cast<int>(kDLCUDA), d.index()} : std::pair{static_cast<int>(kDLCPU), 0};
}

nb::object dlpack(const xp::Array& self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                  nb::handle copy) {
  xp::Array a = self;
  if (!dl_device.is_none()) {
    const auto want = nb::cast<std::pair<int, int>>(dl_device);
    if (want != dlpack_device(a)) {
      if (want.first == kDLCPU)
        a = a.to_device(xp::Device::cpu());
      else if (want.first == kDLCUDA)
        a = a.to_device(xp::Device::cuda(want.second));
      else
        throw nb::value_error("xp: __dlpack__ cannot export to that device type");
      if (!copy.is_none() && !nb::cast<bool>(copy))
        throw nb::buffer_error("xp: __dlpack__(copy=False) to another device needs a copy");
    }
  }
  if (!copy.is_none() && nb::cast<bool>(copy) && a.impl() == self.impl()) a = a.copy();
  std::optional<std::uintptr_t> consumer;
  if (!stream.is_none()) {
    const long long s = nb::cast<long long>(stream);
    if (!a.device().is_cuda()) {
      if (s != -1) throw nb::value_error("xp: __dlpack__ takes no stream for a CPU array");
    } else if (s > 0) {
      consumer = static_cast<std::uintptr_t>(s);
    } else if (s == 0) {
      throw nb::value_error("xp: stream 0 is ambiguous for CUDA (use 1 for the legacy default stream)");
    }
  }
  DLManagedTensorVersioned* t = xp::to_dlpack(a, consumer);
  bool versioned = false;
  if (!max_version.is_none()) versioned = nb::cast<int>(nb::tuple(nb::borrow(max_version))[0]) >= 1;
  if (versioned) {
    PyObject* cap = PyCapsule_New(t, kVersioned, [](PyObject* c) {
      if (PyCapsule_IsValid(c, kVersioned)) {
        auto* p = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kVersioned));
        if (p != nullptr && p->deleter != nullptr) p->deleter(p);
      }
    });
    if (cap == nullptr) {
      t->deleter(t);
      throw nb::python_error();
    }
    return nb::steal(cap);
  }
  DLManagedTensor* l = to_legacy(t);
  PyObject* cap = PyCapsule_New(l, kLegacy, [](PyObject* c) {
    if (PyCapsule_IsValid(c, kLegacy)) {
      auto* p = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kLegacy));
      if (p != nullptr && p->deleter != nullptr) p->deleter(p);
    }
  });
  if (cap == nullptr) {
    l->deleter(l);
    throw nb::python_error();
  }
  return nb::steal(cap);
}

// An xp array over a DLPack producer's memory (zero copy).
xp::Array import_dlpack(nb::handle obj) {
  nb::tuple dev = nb::borrow<nb::tuple>(obj.attr("__dlpack_device__")());
  const int type = nb::cast<int>(dev[0]);
  const int id = nb::cast<int>(dev[1]);
  nb::object stream = nb::none();
  std::uintptr_t producer_stream = 0;
  if (type == kDLCUDA) {
    const xp::Stream s = xp::current_stream(xp::Device::cuda(id));
    producer_stream = 0;  // the producer orders its work before the current stream (the consumer's)
    stream =
        nb::int_(reinterpret_cast<std::uintptr_t>(s.handle()) == 0 ? 1 : reinterpret_cast<std::uintptr_t>(s.handle()));
  } else if (type != kDLCPU) {
    throw nb::value_error("xp: from_dlpack: the producer's device type is not CPU or CUDA");
  }
  nb::object cap;
  try {
    cap = obj.attr("__dlpack__")(nb::arg("stream") = stream, nb::arg("max_version") = nb::make_tuple(1, 1));
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    cap = obj.attr("__dlpack__")(nb::arg("stream") = stream);  // a producer of DLPack 0.x
  }
  if (PyCapsule_IsValid(cap.ptr(), kVersioned)) {
    auto* t = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap.ptr(), kVersioned));
    PyCapsule_SetName(cap.ptr(), kUsedVersioned);
    return xp::from_dlpack(t, producer_stream);
  }
  if (PyCapsule_IsValid(cap.ptr(), kLegacy)) {
    auto* l = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), kLegacy));
    PyCapsule_SetName(cap.ptr(), kUsedLegacy);
    return xp::from_dlpack(from_legacy(l), producer_stream);
  }
  throw nb::type_error("xp: __dlpack__ returned no DLPack capsule");
}

xp::Array import_cai(nb::handle obj, std::optional<xp::Device> device) {
  nb::dict d = nb::borrow<nb::dict>(obj.attr("__cuda_array_interface__"));
  xp::CudaArrayInterface c;
  c.shape = to_shape(d["shape"]);
  c.typestr = nb::cast<std::string>(d["typestr"]);
  nb::tuple data = nb::borrow<nb::tuple>(d["data"]);
  c.data = nb::cast<std::uintptr_t>(data[0]);
  c.read_only = nb::cast<bool>(data[1]);
  c.version = nb::cast<int>(d["version"]);
  if (d.contains("strides") && !d["strides"].is_none())
    for (nb::handle s : d["strides"]) c.strides.push_back(nb::cast<std::int64_t>(s));
  if (d.contains("stream") && !d["stream"].is_none()) c.stream = nb::cast<std::uintptr_t>(d["stream"]);
  if (d.contains("mask") && !d["mask"].is_none())
    throw nb::value_error("xp: __cuda_array_interface__ with a mask is not supported");
  return xp::from_cuda_array_interface(c, keep_python(obj), device);
}

// A buffer (bytes, memoryview, array.array...) as a CPU array over its memory.
std::optional<xp::DType> format_dtype(const char* f, Py_ssize_t itemsize) {
  std::string s = f == nullptr ? "B" : f;
  if (!s.empty() && (s[0] == '<' || s[0] == '=' || s[0] == '@' || s[0] == '|')) s = s.substr(1);
  if (s == "?") return xp::DType::bool_;
  if (s == "e") return xp::DType::float16;
  if (s == "f") return xp::DType::float32;
  if (s == "d") return xp::DType::float64;
  if (s == "Zf") return xp::DType::complex64;
  if (s == "Zd") return xp::DType::complex128;
  const bool is_signed = s == "b" || s == "h" || s == "i" || s == "l" || s == "q" || s == "n";
  const bool is_unsigned = s == "B" || s == "H" || s == "I" || s == "L" || s == "Q" || s == "N" || s == "c";
  if (!is_signed && !is_unsigned) return std::nullopt;
  switch (itemsize) {
    case 1:
      return is_signed ? xp::DType::int8 : xp::DType::uint8;
    case 2:
      return is_signed ? xp::DType::int16 : xp::DType::uint16;
    case 4:
      return is_signed ? xp::DType::int32 : xp::DType::uint32;
    case 8:
      return is_signed ? xp::DType::int64 : xp::DType::uint64;
  }
  return std::nullopt;
}

xp::Array import_buffer(nb::handle obj) {
  auto view = std::shared_ptr<Py_buffer>(new Py_buffer{}, [](Py_buffer* b) {
    if (Py_IsInitialized()) {
      PyGILState_STATE g = PyGILState_Ensure();
      PyBuffer_Release(b);
      PyGILState_Release(g);
    }
    delete b;
  });
  if (PyObject_GetBuffer(obj.ptr(), view.get(), PyBUF_RECORDS_RO) != 0) {
    view.reset(new Py_buffer{});  // nothing to release
    throw nb::python_error();
  }
  const auto t = format_dtype(view->format, view->itemsize);
  if (!t) throw nb::type_error(("xp: unsupported buffer format '" + std::string(view->format) + "'").c_str());
  xp::Shape shape(view->shape, view->shape + view->ndim);
  xp::Shape strides(view->strides, view->strides + view->ndim);
  if (view->ndim == 0) shape = {}, strides = {};
  return xp::wrap(view->buf, *t, shape, view, strides, view->readonly != 0);
}

// Nested sequences of Python numbers (or 0-d arrays): shape, then values as the widest kind met.
struct Nested {
  xp::Shape shape;
  std::vector<double> f;
  std::vector<long long> i;
  std::vector<unsigned long long> u;
  std::vector<std::uint8_t> b;
  int kind = 0;  // 0 bool, 1 int, 2 float
  bool big = false;
  // Owned: a sequence may make its items as it is indexed (range, a generator-backed class), and
  // such an item lives only as long as this reference.
  std::vector<nb::object> leaves;
};

// A complex number that is not a Python complex: a NumPy complex64 scalar (whose __float__ would
// drop the imaginary part), or any object with __complex__ and no __float__.
bool is_complex_number(nb::handle h) {
  if (PyFloat_Check(h.ptr()) || !nb::hasattr(h, "__complex__")) return false;
  if (!nb::hasattr(h, "__float__")) return true;
  if (!nb::hasattr(h, "dtype")) return false;
  nb::object d = h.attr("dtype");
  return nb::hasattr(d, "kind") && nb::cast<std::string>(nb::str(d.attr("kind"))) == "c";
}

void walk(nb::handle h, int depth, Nested& n) {
  const bool seq = PySequence_Check(h.ptr()) && !PyUnicode_Check(h.ptr()) && !PyBytes_Check(h.ptr()) &&
                   !nb::isinstance<xp::Array>(h);
  if (seq) {
    const Py_ssize_t len = PySequence_Size(h.ptr());
    if (len < 0) throw nb::python_error();
    if (static_cast<int>(n.shape.size()) == depth) {
      if (!n.leaves.empty())  // a number was met at this depth before: [1, [2]]
        throw nb::value_error("xp.asarray: ragged nested sequence (a sequence where a number was expected)");
      n.shape.push_back(len);
    } else if (static_cast<int>(n.shape.size()) < depth || n.shape[static_cast<std::size_t>(depth)] != len)
      throw nb::value_error("xp.asarray: ragged nested sequence (every row needs the same length)");
    for (Py_ssize_t k = 0; k < len; ++k) walk(checked(PySequence_GetItem(h.ptr(), k)), depth + 1, n);
    return;
  }
  if (static_cast<int>(n.shape.size()) != depth &&
      !(n.leaves.empty() && n.shape.size() == static_cast<std::size_t>(depth)))
    throw nb::value_error("xp.asarray: ragged nested sequence (a number where a sequence was expected)");
  n.leaves.push_back(nb::borrow(h));
}

[[noreturn]] void raise_overflow(const std::string& message) {
  PyErr_SetString(PyExc_OverflowError, message.c_str());
  throw nb::python_error();
}

// A Python number as NumPy converts it into an element of an integer dtype `t`: a float truncated
// toward zero (NaN a ValueError, an infinity an OverflowError), then the value checked against t's
// range (OverflowError, as NumPy 2: "Python integer 300 out of bounds for uint8"); a complex number
// is a TypeError. The result in 64 bits (uint64's upper half in an int64's bits).
std::int64_t integer_element(const xp::Scalar& s, xp::DType t) {
  const std::string tn(xp::name(t));
  if (s.kind() == xp::ScalarKind::complex)
    throw nb::type_error(("xp.asarray: a complex number cannot be an element of " + tn).c_str());
  long double v;  // exact for every int64 and uint64, and for every double
  if (s.kind() == xp::ScalarKind::floating) {
    const double d = s.as_double();
    if (std::isnan(d)) throw nb::value_error("xp.asarray: cannot convert float NaN to integer");
    if (std::isinf(d)) raise_overflow("xp.asarray: cannot convert float infinity to integer");
    v = std::trunc(static_cast<long double>(d));
  } else if (s.is_large_unsigned()) {
    v = static_cast<long double>(s.as_uint());
  } else {
    v = static_cast<long double>(s.as_int());
  }
  long double lo = 0, hi = 1;  // bool: 0 and 1 as NumPy's int(True)
  if (t != xp::DType::bool_) {
    const xp::IInfo info = xp::iinfo(t);
    lo = static_cast<long double>(info.min);
    hi = static_cast<long double>(info.max);
  }
  if (v < lo || v > hi) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(0) << "Python integer " << v << " out of bounds for " << tn;
    raise_overflow("xp.asarray: " + os.str());
  }
  return v < 0 ? static_cast<std::int64_t>(v) : static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
}

xp::Array from_nested(nb::handle obj, std::optional<xp::DType> dtype, std::optional<xp::Device> device) {
  Nested n;
  walk(obj, 0, n);
  // NumPy scalars among the numbers (a list of NumPy arrays reaches here as their scalars): their
  // dtypes take part in the result's, as NumPy promotes them, so NumPy converts the whole.
  for (nb::handle h : n.leaves) {
    if (numpy_scalar(h)) {
      nb::object np = nb::steal(PyImport_GetModule(nb::str("numpy").ptr()));
      if (!np.is_valid()) throw nb::python_error();
      return asarray(np.attr("asarray")(obj), dtype, device, std::nullopt);
    }
  }
  std::vector<xp::Scalar> vals;
  vals.reserve(n.leaves.size());
  std::optional<xp::DType> seen;  // the promoted dtype of the leaves that are 0-d xp arrays
  std::size_t array_leaves = 0;
  for (nb::handle h : n.leaves) {
    xp::Scalar s(0);
    if (!to_scalar(h, s)) {
      if (nb::isinstance<xp::Array>(h) && nb::cast<xp::Array&>(h).ndim() == 0) {
        const xp::Array& a = nb::cast<xp::Array&>(h);
        seen = seen ? xp::result_type(*seen, a.dtype()) : a.dtype();
        ++array_leaves;
        switch (xp::kind(a.dtype())) {
          case xp::DTypeKind::boolean:
            s = xp::Scalar(a.item<bool>());
            break;
          case xp::DTypeKind::signed_integer:
            s = xp::Scalar(a.item<std::int64_t>());
            break;
          case xp::DTypeKind::unsigned_integer:
            s = xp::Scalar(a.item<std::uint64_t>());
            break;
          case xp::DTypeKind::floating:
            s = xp::Scalar(a.item<double>());
            break;
          case xp::DTypeKind::complex_floating:
            s = xp::Scalar(a.item<std::complex<double>>());
            break;
        }
      } else if (is_complex_number(h)) {
        nb::object z = checked(PyObject_CallMethod(h.ptr(), "__complex__", nullptr));  // owned
        s = xp::Scalar(std::complex<double>(PyComplex_RealAsDouble(z.ptr()), PyComplex_ImagAsDouble(z.ptr())));
      } else if (PyFloat_Check(h.ptr()) || nb::hasattr(h, "__float__")) {
        if (PyIndex_Check(h.ptr()))
          s = xp::Scalar(nb::cast<long long>(checked(PyNumber_Index(h.ptr()))));
        else
          s = xp::Scalar(nb::cast<double>(checked(PyNumber_Float(h.ptr()))));
      } else {
        throw nb::type_error(("xp.asarray: cannot convert " + nb::cast<std::string>(nb::repr(h.type()))).c_str());
      }
    }
    vals.push_back(s);
  }
  // The dtype: asked for, else NumPy's for the numbers: the widest kind among them (bool < int64 <
  // float64 < complex128), an integer past int64 making uint64, and float64 where both meet (as
  // int64 and uint64 promote), else the arrays' own.
  bool any_int = false, any_float = false, any_big = false, any_complex = false;
  for (const xp::Scalar& s : vals) {
    any_complex |= s.kind() == xp::ScalarKind::complex;
    any_float |= s.kind() == xp::ScalarKind::floating;
    any_big |= s.is_large_unsigned();
    any_int |= s.kind() == xp::ScalarKind::integer && !s.is_large_unsigned();
  }
  xp::DType t = any_complex          ? xp::DType::complex128
                : any_float          ? xp::DType::float64
                : any_big && any_int ? xp::DType::float64
                : any_big            ? xp::DType::uint64
                : any_int            ? xp::DType::int64
                                     : xp::DType::bool_;
  if (seen && array_leaves == n.leaves.size()) t = *seen;  // only arrays: their dtypes promoted
  if (vals.empty()) t = xp::DType::float64;                // as NumPy: asarray([]) is float64
  if (dtype) t = *dtype;
  const std::size_t count = vals.size();
  xp::Array out;
  switch (xp::kind(t)) {
    case xp::DTypeKind::complex_floating: {
      std::vector<std::complex<double>> v(count);
      for (std::size_t k = 0; k < count; ++k) v[k] = vals[k].as_complex();
      out = xp::asarray(v.data(), count, xp::DType::complex128, n.shape, device);
      break;
    }
    case xp::DTypeKind::floating: {
      std::vector<double> v(count);
      for (std::size_t k = 0; k < count; ++k) {
        if (vals[k].kind() == xp::ScalarKind::complex)
          throw nb::type_error(
              ("xp.asarray: a complex number cannot be an element of " + std::string(xp::name(t))).c_str());
        v[k] = vals[k].as_double();
      }
      out = xp::asarray(v.data(), count, xp::DType::float64, n.shape, device);
      break;
    }
    case xp::DTypeKind::unsigned_integer:
    case xp::DTypeKind::signed_integer: {
      // Every value checked against t's range first (nothing is made when one does not fit).
      std::vector<std::int64_t> v(count);
      for (std::size_t k = 0; k < count; ++k) v[k] = integer_element(vals[k], t);
      const xp::DType wide = xp::kind(t) == xp::DTypeKind::unsigned_integer ? xp::DType::uint64 : xp::DType::int64;
      out = xp::asarray(v.data(), count, wide, n.shape, device);
      break;
    }
    case xp::DTypeKind::boolean: {
      std::vector<std::uint8_t> v(count);
      for (std::size_t k = 0; k < count; ++k) v[k] = vals[k].as_complex() != std::complex<double>(0, 0);
      out = xp::asarray(v.data(), count, xp::DType::bool_, n.shape, device);
      break;
    }
  }
  return out.dtype() == t ? out : out.astype(t);
}

int buffer_get(PyObject* self, Py_buffer* view, int flags);
void buffer_release(PyObject* self, Py_buffer* view);

struct BufferInfo {
  xp::Array array;
  std::vector<Py_ssize_t> shape, strides;
  std::string format;
};

const char* buffer_format(xp::DType t) {
  switch (t) {
    case xp::DType::bool_:
      return "?";
    case xp::DType::int8:
      return "b";
    case xp::DType::int16:
      return "h";
    case xp::DType::int32:
      return "i";
    case xp::DType::int64:
      return "q";
    case xp::DType::uint8:
      return "B";
    case xp::DType::uint16:
      return "H";
    case xp::DType::uint32:
      return "I";
    case xp::DType::uint64:
      return "Q";
    case xp::DType::float16:
      return "e";
    case xp::DType::float32:
      return "f";
    case xp::DType::float64:
      return "d";
    case xp::DType::complex64:
      return "Zf";
    case xp::DType::complex128:
      return "Zd";
    case xp::DType::bfloat16:
      return nullptr;
  }
  return nullptr;
}

int buffer_get(PyObject* self, Py_buffer* view, int flags) {
  try {
    xp::Array& a = nb::cast<xp::Array&>(nb::handle(self));
    if (a.device().is_cuda()) {
      PyErr_SetString(PyExc_BufferError, "xp: a CUDA array has no buffer (use xp.to_cpu or DLPack)");
      return -1;
    }
    const char* fmt = buffer_format(a.dtype());
    if (fmt == nullptr) {
      PyErr_SetString(PyExc_BufferError, "xp: bfloat16 has no buffer format");
      return -1;
    }
    const bool writable = (flags & PyBUF_WRITABLE) != 0;
    if (writable && a.is_read_only()) {
      PyErr_SetString(PyExc_BufferError, "xp: the array is read-only");
      return -1;
    }
    auto* info = new BufferInfo{a, {}, {}, fmt};
    // Writers may change the memory: pending graphs reading it are evaluated first (mutable_data).
    void* data = a.is_read_only() ? const_cast<void*>(a.data()) : info->array.mutable_data();
    for (std::int64_t d : a.shape()) info->shape.push_back(static_cast<Py_ssize_t>(d));
    for (std::int64_t s : a.strides()) info->strides.push_back(static_cast<Py_ssize_t>(s));
    view->buf = data;
    view->obj = Py_NewRef(self);
    view->len = static_cast<Py_ssize_t>(a.nbytes());
    view->itemsize = static_cast<Py_ssize_t>(a.itemsize());
    view->readonly = a.is_read_only() ? 1 : 0;
    view->ndim = a.ndim();
    view->format = (flags & PyBUF_FORMAT) ? info->format.data() : nullptr;
    view->shape = info->shape.data();
    view->strides = info->strides.data();
    view->suboffsets = nullptr;
    view->internal = info;
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !a.is_c_contiguous()) {
      delete info;
      Py_DECREF(self);
      view->obj = nullptr;
      PyErr_SetString(PyExc_BufferError, "xp: the array is not C-contiguous");
      return -1;
    }
    return 0;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
    return -1;
  }
}

void buffer_release(PyObject*, Py_buffer* view) {
  delete static_cast<BufferInfo*>(view->internal);
}

}  // namespace

PyType_Slot g_buffer_slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(buffer_get)},
                                {Py_bf_releasebuffer, reinterpret_cast<void*>(buffer_release)},
                                {0, nullptr}};

namespace {
// A list or tuple of xp arrays of one or more dimensions (or of such lists, to any depth) as NumPy
// takes a list of its arrays: stacked along a new leading axis (the arrays' own devices, which must
// agree). nullopt for anything else (numbers, 0-d arrays: from_nested's).
std::optional<xp::Array> stacked(nb::handle obj) {
  if (!(PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) || PySequence_Size(obj.ptr()) <= 0) return std::nullopt;
  std::vector<xp::Array> parts;
  for (nb::handle item : obj) {
    if (nb::isinstance<xp::Array>(item) && nb::cast<xp::Array&>(item).ndim() > 0) {
      parts.push_back(nb::cast<xp::Array&>(item));
    } else if (auto inner = stacked(item)) {
      parts.push_back(*inner);
    } else {
      return std::nullopt;
    }
  }
  return xp::stack(parts, 0);
}
}  // namespace

xp::Array array_like(nb::handle h, const char* what) {
  if (nb::isinstance<xp::Array>(h)) return nb::cast<xp::Array&>(h);
  if (PySequence_Check(h.ptr()) && !PyUnicode_Check(h.ptr()) && !PyBytes_Check(h.ptr()))
    return asarray(h, std::nullopt, std::nullopt, std::nullopt);
  throw nb::type_error((std::string("xp.") + what + ": expected an array or a sequence, got " +
                        nb::cast<std::string>(nb::repr(h.type())))
                           .c_str());
}

xp::Array asarray(nb::handle obj, std::optional<xp::DType> dtype, std::optional<xp::Device> device,
                  std::optional<bool> copy) {
  xp::Array a;
  bool fresh = false;  // a new array, not sharing the object's memory
  if (nb::isinstance<xp::Array>(obj)) {
    a = nb::cast<xp::Array&>(obj);
  } else if (xp::Scalar s(0); to_scalar(obj, s)) {
    if (copy && !*copy) throw nb::value_error("xp.asarray: copy=False, but a Python number must be copied");
    return xp::full({}, s, dtype, device);
  } else if (nb::hasattr(obj, "__dlpack__") && nb::hasattr(obj, "__dlpack_device__")) {
    if (is_numpy_array(obj) && !nb::cast<bool>(obj.attr("dtype").attr("isnative"))) {
      // DLPack has no byte order: a byte-swapped NumPy array comes in as its native-order copy.
      if (copy && !*copy) throw nb::value_error("xp.asarray: copy=False, but a byte-swapped array must be copied");
      a = import_dlpack(obj.attr("astype")(obj.attr("dtype").attr("newbyteorder")("=")));
      fresh = true;
    } else {
      a = import_dlpack(obj);
    }
  } else if (nb::hasattr(obj, "__cuda_array_interface__")) {
    a = import_cai(obj, device);
  } else if (PyObject_CheckBuffer(obj.ptr()) && !PyUnicode_Check(obj.ptr())) {
    a = import_buffer(obj);
  } else if (auto st = stacked(obj)) {
    if (copy && !*copy) throw nb::value_error("xp.asarray: copy=False, but a sequence must be copied");
    a = *st;
    fresh = true;
  } else {
    if (copy && !*copy) throw nb::value_error("xp.asarray: copy=False, but a sequence must be copied");
    a = from_nested(obj, dtype, device);
    fresh = true;
  }
  if (dtype && a.dtype() != *dtype) {
    if (copy && !*copy) throw nb::value_error("xp.asarray: copy=False but the dtype asks for a conversion");
    a = a.astype(*dtype);
    fresh = true;
  }
  if (device && a.device() != *device) {
    if (copy && !*copy) throw nb::value_error("xp.asarray: copy=False but the device asks for a copy");
    a = a.to_device(*device);
    fresh = true;
  }
  if (copy && *copy && !fresh) a = a.copy();
  return a;
}

void register_array_interop(nb::class_<xp::Array>& c) {
  c.def("__dlpack__", &dlpack, nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
        nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack_device__", &dlpack_device)
      .def_prop_ro("__cuda_array_interface__", [](const xp::Array& a) {
        if (!a.device().is_cuda())
          throw nb::attribute_error("xp: a CPU array has no __cuda_array_interface__ (device memory only)");
        const xp::CudaArrayInterface cai = xp::to_cuda_array_interface(a);
        nb::dict d;
        nb::list shape;
        for (std::int64_t s : cai.shape) shape.append(s);
        d["shape"] = nb::tuple(shape);
        d["typestr"] = cai.typestr;
        d["data"] = nb::make_tuple(cai.data, cai.read_only);
        d["version"] = cai.version;
        if (cai.strides.empty()) {
          d["strides"] = nb::none();
        } else {
          nb::list st;
          for (std::int64_t s : cai.strides) st.append(s);
          d["strides"] = nb::tuple(st);
        }
        d["stream"] = cai.stream == 0 ? nb::none() : nb::cast(cai.stream);
        return d;
      });
}

void register_interop(nb::module_& m) {
  m.def(
      "asarray",
      [](nb::handle obj, nb::handle dtype, nb::handle device, std::optional<bool> copy) {
        return asarray(obj, to_dtype(dtype), to_device(device), copy);
      },
      nb::arg("obj"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("copy") = nb::none());
  m.def(
      "from_dlpack",
      [](nb::handle x, nb::handle device, std::optional<bool> copy) {
        xp::Array a = import_dlpack(x);
        const auto d = to_device(device);
        if (d && *d != a.device()) {
          if (copy && !*copy) throw nb::value_error("xp.from_dlpack: copy=False but the device asks for a copy");
          return a.to_device(*d);
        }
        return copy && *copy ? a.copy() : a;
      },
      nb::arg("x"), nb::kw_only(), nb::arg("device") = nb::none(), nb::arg("copy") = nb::none());
  m.def("_data_pointer", [](const xp::Array& a) {
    return a.device().is_cuda() ? xp::to_cuda_array_interface(a, true).data
                                : reinterpret_cast<std::uintptr_t>(a.data());
  });
}

}  // namespace xp_py
