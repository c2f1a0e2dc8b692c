#pragma once

// What the files of the extension share: dtype objects, devices and operands converted from Python.
// Only the public API of libxp (include/xp) is used.

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "xp/xp.hpp"

namespace nb = nanobind;

namespace xp_py {

// A dtype as Python sees it: one object per dtype (xp.float32 is x.dtype), compared by identity or ==.
struct PyDType {
  xp::DType dtype;
};

// The dtype object of a DType, and back (a dtype object, or a name such as "float32"; None gives
// nullopt). Anything else is a TypeError.
nb::object dtype_object(xp::DType t);
std::optional<xp::DType> to_dtype(nb::handle h);

// A device from Python: None (nullopt), an xp.Device, or a name ("cpu", "cuda", "cuda:1").
std::optional<xp::Device> to_device(nb::handle h);

// An operand: an xp array, a Python bool/int/float/complex (a weak scalar), a NumPy scalar (a 0-d
// array of its own dtype on `device`, else on the default device: strong, as NEP 50 says), or anything
// xp.asarray takes. `keep` holds the array made for a non-array operand. Returns false (nothing
// converted) for an object that is none of these, when `strict` is false: operators then return
// NotImplemented.
// A Python int beyond int64 and uint64 is a float beside a float or complex `partner` (the dtype of
// the operation's array operand, as NumPy converts it there: float32_array + 2**70 is float32), and
// a builtin OverflowError beside anything else or without one (int64_array + 2**70, as NumPy).
bool to_operand(nb::handle h, std::optional<xp::Operand>& op, xp::Array& keep, bool strict,
                const std::optional<xp::Device>& device = std::nullopt,
                std::optional<xp::DType> partner = std::nullopt);

// 1 or -1 for a Python int (not a bool) beyond int64 and uint64 by its sign, else 0.
int huge_int_sign(nb::handle h);

// An elementwise operand that may be a Python scalar; `keep` holds an array made from another object.
// A NumPy scalar goes to the device of the first xp array among `partners` (else the default), and
// that array's dtype decides what a Python int beyond 64 bits becomes (to_operand).
struct Arg {
  std::optional<xp::Operand> op;
  xp::Array keep;
  explicit Arg(nb::handle h, std::initializer_list<nb::handle> partners = {}) {
    std::optional<xp::Device> device;
    std::optional<xp::DType> dtype;
    for (nb::handle p : partners) {
      if (nb::isinstance<xp::Array>(p)) {
        const xp::Array& a = nb::cast<xp::Array&>(p);
        device = a.device();
        dtype = a.dtype();
        break;
      }
    }
    to_operand(h, op, keep, true, device, dtype);
  }
  const xp::Operand& operator*() const { return *op; }
};

// A NumPy scalar (an instance of numpy.generic of a dtype xp has: numpy.float32(2), numpy.int64(n),
// numpy.bool_, ml_dtypes.bfloat16): its value and dtype. nullopt for anything else, and whenever
// NumPy is not imported (then nothing can be one). NumPy's float64 and complex128 scalars are
// Python float and complex objects too: they are checked before those.
struct NumpyScalar {
  xp::Scalar value;
  xp::DType dtype;
};
std::optional<NumpyScalar> numpy_scalar(nb::handle h);
// Whether h is a NumPy ndarray (false whenever NumPy is not imported).
bool is_numpy_array(nb::handle h);

// The xp.Array type object, set once register_array has made it: the operators' fast paths test
// and wrap arrays through it, without nanobind's lookup of the C++ type (a hash table) each time.
inline PyTypeObject* g_array_type = nullptr;
// The xp array that h is (exactly xp.Array, not a subclass), or null.
inline xp::Array* exact_array(nb::handle h) noexcept {
  return Py_TYPE(h.ptr()) == g_array_type && nb::inst_ready(h) ? nb::inst_ptr<xp::Array>(h) : nullptr;
}
// A new Python object owning `a` (as nb::cast(std::move(a)) makes one).
inline nb::object wrap_array(xp::Array&& a) {
  nb::object o = nb::inst_alloc(nb::handle(reinterpret_cast<PyObject*>(g_array_type)));
  new (nb::inst_ptr<xp::Array>(o)) xp::Array(std::move(a));
  nb::inst_mark_ready(o);
  return o;
}

// A new reference from a C API call, or the Python error it set raised as nb::python_error.
inline nb::object checked(PyObject* result) {
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

// A Python number as a weak scalar; false when h is not a bool, int or float.
bool to_scalar(nb::handle h, xp::Scalar& s);

// Axes: None (all), an int, or a sequence of ints.
xp::Axes to_axes(nb::handle h);

// Shape from an int or a sequence of ints.
xp::Shape to_shape(nb::handle h);

// xp.asarray(obj, dtype, device, copy): in interop.cpp.
xp::Array asarray(nb::handle obj, std::optional<xp::DType> dtype, std::optional<xp::Device> device,
                  std::optional<bool> copy);

// An array argument: an xp array as it is, or a sequence (a list, a tuple, a NumPy array) as
// xp.asarray takes it, as NumPy's functions take array-likes. Anything else is a TypeError naming
// the function `what` (interop.cpp).
xp::Array array_like(nb::handle h, const char* what);

// The buffer protocol of xp.Array (CPU arrays): interop.cpp.
extern PyType_Slot g_buffer_slots[];

void register_errors(nb::module_& m);
void register_runtime(nb::module_& m);
void register_array(nb::module_& m);
void register_functions(nb::module_& m);
void register_sorting(nb::module_& m);
void register_numpy_extras(nb::module_& m);
void register_interop(nb::module_& m);
void register_kernels(nb::module_& m);
void register_user_kernels(nb::module_& m);
void register_linalg_fft(nb::module_& m);
void register_signed(nb::module_& m);  // signed.cpp: xp._xp._Function, _signed, _set_signature_maker
void register_array_interop(nb::class_<xp::Array>& cls);

// A flag argument (keepdims, stable, endpoint, ...): a bool, NumPy's bool scalar or an integer, as
// NumPy's functions take them (keepdims=1); not a float, None or a str (a TypeError).
struct Flag {
  bool value = false;
  Flag() = default;
  Flag(bool v) : value(v) {}  // NOLINT: implicit, as the defaults are written
  operator bool() const noexcept { return value; }
};

// The sequences that an xp array argument converts from implicitly (xp.Array's constructor, as
// xp.asarray): a list, a tuple, a NumPy array, anything with the sequence protocol but str, bytes
// and bytearray. Only its type caster's test is used (nb::implicitly_convertible in array.cpp).
struct ArrayLikeSequence {
  nb::handle h;
};

}  // namespace xp_py

namespace nanobind::detail {
template <>
struct type_caster<xp_py::Flag> {
  NB_TYPE_CASTER(xp_py::Flag, const_name("bool"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    if (o == Py_True || o == Py_False) {
      value = xp_py::Flag(o == Py_True);
      return true;
    }
    const char* type = Py_TYPE(o)->tp_name;
    const bool numpy_bool = std::strcmp(type, "numpy.bool") == 0 || std::strcmp(type, "numpy.bool_") == 0;
    if (!numpy_bool && (!PyIndex_Check(o) || PyFloat_Check(o))) return false;
    const int t = PyObject_IsTrue(o);
    if (t < 0) {
      PyErr_Clear();
      return false;
    }
    value = xp_py::Flag(t != 0);
    return true;
  }
  static handle from_cpp(xp_py::Flag v, rv_policy, cleanup_list*) noexcept {
    return handle(v.value ? Py_True : Py_False).inc_ref();
  }
};
template <>
struct type_caster<xp_py::ArrayLikeSequence> {
  NB_TYPE_CASTER(xp_py::ArrayLikeSequence, const_name("collections.abc.Sequence"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    if (!PySequence_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o)) return false;
    value.h = src;
    return true;
  }
  static handle from_cpp(const xp_py::ArrayLikeSequence& v, rv_policy, cleanup_list*) noexcept { return v.h.inc_ref(); }
};
}  // namespace nanobind::detail
