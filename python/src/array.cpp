// xp.Array: properties, operators (with their reflected and in-place forms), indexing, conversions
// to Python numbers and printing, over xp::Array.
#include <Python.h>
#include <algorithm>
#include <complex>
#include <cstdint>

#include <cmath>

#include "common.hpp"

namespace xp_py {

bool to_scalar(nb::handle h, xp::Scalar& s) {
  if (PyBool_Check(h.ptr())) {
    s = xp::Scalar(h.ptr() == Py_True);
    return true;
  }
  if (PyLong_Check(h.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow == 0) {
      s = xp::Scalar(v);
      return true;
    }
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(h.ptr());
      if (!PyErr_Occurred()) {
        s = xp::Scalar(u);
        return true;
      }
      PyErr_Clear();
    }
    PyErr_SetString(PyExc_OverflowError, "xp: Python int too large for int64 and uint64 (xp has no dtype for it)");
    throw nb::python_error();
  }
  if (PyFloat_Check(h.ptr())) {
    s = xp::Scalar(PyFloat_AsDouble(h.ptr()));
    return true;
  }
  if (PyComplex_Check(h.ptr())) {
    s = xp::Scalar(std::complex<double>(PyComplex_RealAsDouble(h.ptr()), PyComplex_ImagAsDouble(h.ptr())));
    return true;
  }
  return false;
}

namespace {
// numpy.<name> (a type), once NumPy has been imported (never imported here); null before.
PyObject* numpy_type(const char* name, PyObject*& cache) {
  if (cache != nullptr) return cache;
  nb::object module_name = nb::str("numpy");
  PyObject* np = PyImport_GetModule(module_name.ptr());
  if (np == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  cache = PyObject_GetAttrString(np, name);  // kept for the process
  Py_DECREF(np);
  if (cache == nullptr) PyErr_Clear();
  return cache;
}
bool is_instance_of(PyObject* o, PyObject* type) {
  if (type == nullptr) return false;
  const int is = PyObject_IsInstance(o, type);
  if (is < 0) PyErr_Clear();
  return is > 0;
}
}  // namespace

bool is_numpy_array(nb::handle h) {
  static PyObject* ndarray = nullptr;
  return is_instance_of(h.ptr(), numpy_type("ndarray", ndarray));
}

std::optional<NumpyScalar> numpy_scalar(nb::handle h) {
  PyObject* const o = h.ptr();
  // Python's own numbers first (no NumPy scalar is one of these exact types).
  if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o) || PyComplex_CheckExact(o)) return std::nullopt;
  static PyObject* generic = nullptr;
  if (!is_instance_of(o, numpy_type("generic", generic))) return std::nullopt;
  std::optional<xp::DType> t;
  try {
    t = to_dtype(h.attr("dtype"));
  } catch (const std::exception&) {
    return std::nullopt;  // a dtype xp has not (datetime64, str_, object_, longdouble...)
  }
  if (!t) return std::nullopt;
  switch (xp::kind(*t)) {
    case xp::DTypeKind::boolean:
      return NumpyScalar{xp::Scalar(PyObject_IsTrue(o) == 1), *t};
    case xp::DTypeKind::signed_integer:
    case xp::DTypeKind::unsigned_integer: {
      xp::Scalar v(0);
      if (!to_scalar(checked(PyNumber_Index(o)), v)) return std::nullopt;
      return NumpyScalar{v, *t};
    }
    case xp::DTypeKind::floating: {
      const double d = PyFloat_AsDouble(o);  // exact for every float dtype xp has
      if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
      return NumpyScalar{xp::Scalar(d), *t};
    }
    case xp::DTypeKind::complex_floating: {
      const Py_complex z = PyComplex_AsCComplex(o);
      if (z.real == -1.0 && PyErr_Occurred()) throw nb::python_error();
      return NumpyScalar{xp::Scalar(std::complex<double>(z.real, z.imag)), *t};
    }
  }
  return std::nullopt;
}

int huge_int_sign(nb::handle h) {
  if (!h.is_valid() || !PyLong_Check(h.ptr()) || PyBool_Check(h.ptr())) return 0;
  int overflow = 0;
  (void)PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow > 0) {  // beyond int64: beyond uint64 too?
    (void)PyLong_AsUnsignedLongLong(h.ptr());
    const bool beyond = PyErr_Occurred() != nullptr;
    PyErr_Clear();
    return beyond ? 1 : 0;
  }
  return overflow;
}

bool to_operand(nb::handle h, std::optional<xp::Operand>& op, xp::Array& keep, bool strict,
                const std::optional<xp::Device>& device, std::optional<xp::DType> partner) {
  if (const xp::Array* a = exact_array(h)) {
    op.emplace(*a);
    return true;
  }
  if (nb::isinstance<xp::Array>(h)) {
    op.emplace(nb::cast<xp::Array&>(h));
    return true;
  }
  if (partner &&
      (xp::kind(*partner) == xp::DTypeKind::floating || xp::kind(*partner) == xp::DTypeKind::complex_floating) &&
      huge_int_sign(h) != 0) {
    // A float, or OverflowError past float64's range, as NumPy converts it.
    const double d = PyLong_AsDouble(h.ptr());
    if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
    op.emplace(xp::Scalar(d));
    return true;
  }
  if (const auto ns = numpy_scalar(h)) {
    keep = xp::full({}, ns->value, ns->dtype, device);
    op.emplace(keep);
    return true;
  }
  xp::Scalar s(0);
  if (to_scalar(h, s)) {
    op.emplace(s);
    return true;
  }
  // Operators take NumPy arrays too (NumPy defers to xp.Array's operators: __array_priority__), as
  // xp.asarray takes them: on the CPU, without a copy. And lists and tuples, as NumPy's operators
  // do (x == [1, 2, 3] compares elementwise; without them Python would compare identities), made on
  // the device of the operation, as a Python number is.
  const bool sequence = PyList_Check(h.ptr()) || PyTuple_Check(h.ptr());
  if (!strict && !is_numpy_array(h) && !sequence) return false;
  keep = asarray(h, std::nullopt, sequence ? device : std::nullopt, std::nullopt);
  op.emplace(keep);
  return true;
}

xp::Axes to_axes(nb::handle h) {
  if (h.is_none()) return xp::Axes();
  // An int, or any integer with __index__ (numpy.int64(1)).
  const auto axis = [](nb::handle a) { return nb::cast<int>(checked(PyNumber_Index(a.ptr()))); };
  if (PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !PySequence_Check(h.ptr()))) return xp::Axes(axis(h));
  std::vector<int> axes;
  for (nb::handle a : h) axes.push_back(axis(a));
  return xp::Axes(std::move(axes));
}

xp::Shape to_shape(nb::handle h) {
  if (PyLong_Check(h.ptr()) || PyIndex_Check(h.ptr())) {
    return xp::Shape{nb::cast<std::int64_t>(checked(PyNumber_Index(h.ptr())))};
  }
  xp::Shape s;
  for (nb::handle d : h) s.push_back(nb::cast<std::int64_t>(checked(PyNumber_Index(d.ptr()))));
  return s;
}

namespace {

nb::tuple shape_of(std::span<const std::int64_t> shape) {
  nb::list l;
  for (std::int64_t d : shape) l.append(d);
  return nb::tuple(l);
}
nb::tuple shape_tuple(const xp::Array& a) {
  return shape_of(a.shape());
}

// An array used as an index: on the indexed array's device (as CuPy and PyTorch take a host index
// for a device array: it is small beside the data, and the work runs on the data's device). A 0-d
// integer array is an integer, as NumPy treats it.
xp::Index array_index(const xp::Array& k, const xp::Array& a) {
  const xp::DTypeKind kind = xp::kind(k.dtype());
  if (kind == xp::DTypeKind::floating)
    throw nb::index_error(
        ("xp: arrays used as indices must be of integer or boolean type, got " + std::string(xp::name(k.dtype())))
            .c_str());
  if (k.ndim() == 0 && kind != xp::DTypeKind::boolean) return xp::Index(k.item<std::int64_t>());
  return xp::Index(k.device() == a.device() ? k : k.to_device(a.device()));
}

// An integer index: past the 64-bit range it is out of bounds of any axis (NumPy's IndexError).
std::int64_t int_index(nb::handle k) {
  const nb::object i = checked(PyNumber_Index(k.ptr()));
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0)
    throw nb::index_error(
        ("xp: index " + nb::cast<std::string>(nb::str(i)) + " is out of bounds (beyond int64)").c_str());
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

// One index of a[key]: an int (or __index__), a slice, Ellipsis, None, a bool, or an array (an xp
// array, or what xp.asarray takes: a NumPy array, a list) of integers or bools.
xp::Index to_index(nb::handle k, const xp::Array& a) {
  if (k.is_none()) return xp::newaxis;
  if (k.ptr() == Py_Ellipsis) return xp::ellipsis;
  if (PySlice_Check(k.ptr())) {
    // Bounds past the 64-bit range are clamped (as Python's slices clamp to the length); a step
    // past it is as long as any array.
    auto part = [&](const char* name) -> std::optional<std::int64_t> {
      nb::object o = k.attr(name);
      if (o.is_none()) return std::nullopt;
      const nb::object i = checked(PyNumber_Index(o.ptr()));
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
      if (overflow > 0) return INT64_MAX;
      if (overflow < 0) return -INT64_MAX;
      if (v == -1 && PyErr_Occurred()) throw nb::python_error();
      return std::max<std::int64_t>(v, -INT64_MAX);
    };
    const auto step = part("step");
    if (step && *step == 0) throw nb::value_error("xp: slice step cannot be zero");
    return xp::Slice(part("start"), part("stop"), step ? *step : 1);
  }
  if (nb::isinstance<xp::Array>(k)) return array_index(nb::cast<xp::Array&>(k), a);
  if (PyBool_Check(k.ptr()))
    return array_index(xp::full({}, xp::Scalar(k.ptr() == Py_True), xp::DType::bool_, a.device()), a);
  if (PyLong_Check(k.ptr())) return int_index(k);
  if (PyList_Check(k.ptr()) || nb::hasattr(k, "__array__") || nb::hasattr(k, "__dlpack__") ||
      nb::hasattr(k, "__array_interface__")) {  // a NumPy array (or scalar), a list, another library's array
    xp::Array arr = asarray(k, std::nullopt, a.device(), std::nullopt);
    if (PyList_Check(k.ptr()) && arr.size() == 0) arr = arr.astype(xp::DType::int64);  // [] indexes nothing
    return array_index(arr, a);
  }
  if (PyIndex_Check(k.ptr())) return int_index(k);
  throw nb::index_error(("xp: unsupported index " + nb::cast<std::string>(nb::repr(k)) +
                         " (integers, slices, ..., None, bools, integer and boolean arrays)")
                            .c_str());
}

std::vector<xp::Index> to_indices(nb::handle key, const xp::Array& a) {
  std::vector<xp::Index> idx;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle k : key) idx.push_back(to_index(k, a));
  } else {
    idx.push_back(to_index(key, a));
  }
  return idx;
}

// a[key]: basic indexing is a view; an array index (NumPy's advanced indexing) makes a copy.
xp::Array getitem(const xp::Array& a, nb::handle key) {
  const std::vector<xp::Index> idx = to_indices(key, a);
  return a.slice(std::span<const xp::Index>(idx));
}

// a[key] = value: writes through every kind of index.
void setitem(const xp::Array& a, nb::handle key, nb::handle value) {
  const std::vector<xp::Index> idx = to_indices(key, a);
  std::optional<xp::Operand> op;
  xp::Array keep;
  to_operand(value, op, keep, true, a.device(), a.dtype());
  a.set(std::span<const xp::Index>(idx), *op);
}

using Binary = xp::Array (*)(const xp::Operand&, const xp::Operand&, const xp::Out&);

// The forward, reflected and in-place forms of a binary operator.
template <Binary F>
nb::object forward(const xp::Array& a, nb::handle b) {
  // x == None and x != None compare elementwise, as NumPy's (no element is None).
  if (b.is_none() && (F == &xp::equal || F == &xp::not_equal))
    return nb::cast(xp::full(std::vector<std::int64_t>(a.shape().begin(), a.shape().end()),
                             xp::Scalar(F == &xp::not_equal), xp::DType::bool_, a.device()));
  if (const xp::Array* other = exact_array(b)) return wrap_array(F(a, *other, {}));
  std::optional<xp::Operand> op;
  xp::Array keep;
  if (!to_operand(b, op, keep, false, a.device(), a.dtype())) return nb::borrow(Py_NotImplemented);
  return wrap_array(F(a, *op, {}));
}
template <Binary F>
nb::object reflected(const xp::Array& a, nb::handle b) {
  std::optional<xp::Operand> op;
  xp::Array keep;
  if (!to_operand(b, op, keep, false, a.device(), a.dtype())) return nb::borrow(Py_NotImplemented);
  return wrap_array(F(*op, a, {}));
}
template <Binary F>
nb::object inplace(nb::handle self, nb::handle b) {
  const xp::Array& a = nb::cast<xp::Array&>(self);
  std::optional<xp::Operand> op;
  xp::Array keep;
  if (!to_operand(b, op, keep, false, a.device(), a.dtype())) return nb::borrow(Py_NotImplemented);
  F(a, *op, xp::Out(a));
  return nb::borrow(self);
}

template <Binary F>
void def_binary(nb::class_<xp::Array>& c, const char* name, const char* rname, const char* iname) {
  c.def(name, &forward<F>, nb::arg("other").none());
  if (rname != nullptr) c.def(rname, &reflected<F>, nb::arg("other").none());
  if (iname != nullptr) c.def(iname, &inplace<F>, nb::arg("other").none());
}

// The other operand of @: an xp array, or a NumPy array (as the other operators take one).
bool matmul_operand(nb::handle b, xp::Array& out) {
  if (nb::isinstance<xp::Array>(b)) {
    out = nb::cast<xp::Array&>(b);
    return true;
  }
  if (!is_numpy_array(b)) return false;
  out = asarray(b, std::nullopt, std::nullopt, std::nullopt);
  return true;
}

// int(), float(), complex() and operator.index() take a 0-d array only, as the standard says and
// NumPy 2.4 does (bool() takes any one element).
void require_0d(const xp::Array& a) {
  if (a.ndim() != 0) throw nb::type_error("only 0-dimensional arrays can be converted to Python scalars");
}

// The single element as a Python number (errors as the C++ item<T>() raises them).
nb::object item(const xp::Array& a) {
  switch (xp::kind(a.dtype())) {
    case xp::DTypeKind::boolean:
      return nb::bool_(a.item<bool>());
    case xp::DTypeKind::signed_integer:
      return nb::int_(a.item<std::int64_t>());
    case xp::DTypeKind::unsigned_integer:
      return nb::int_(a.item<std::uint64_t>());
    case xp::DTypeKind::floating:
      return nb::float_(a.item<double>());
    case xp::DTypeKind::complex_floating: {
      const auto z = a.item<std::complex<double>>();
      return nb::steal(PyComplex_FromDoubles(z.real(), z.imag()));
    }
  }
  return nb::none();
}

}  // namespace

void register_array(nb::module_& m) {
  nb::class_<xp::Array> c(m, "Array", nb::type_slots(g_buffer_slots),
                          "An n-dimensional array on one device (the CPU or a CUDA GPU). Elementwise work is lazy "
                          "and fused; values are computed where they are read.");
  // NumPy's arrays and scalars leave a mixed operation (np.float32(2) * x, ndarray + x) to this
  // class's reflected operators, as they do for PyTorch's tensors: the result is an xp array, and a
  // NumPy scalar keeps its dtype (NEP 50). NumPy's ufuncs (np.sin(x)) still take a CPU array.
  c.attr("__array_priority__") = 100.0;
  // xp.Array(obj) is xp.asarray(obj); through it a function that takes an xp array takes a sequence
  // (a list, a tuple, a NumPy array; not a str or bytes: ArrayLikeSequence) as NumPy's functions
  // take array-likes: nanobind converts the argument only when no overload takes it as it is
  // (xp.sum([1, 2]), xp.reshape(ndarray, ...)).
  c.def(
      "__init__",
      [](xp::Array* self, nb::handle obj) {
        new (self) xp::Array(asarray(obj, std::nullopt, std::nullopt, std::nullopt));
      },
      nb::arg("obj"));
  nb::implicitly_convertible<ArrayLikeSequence, xp::Array>();
  g_array_type = reinterpret_cast<PyTypeObject*>(c.ptr());
  c.def_prop_ro("dtype", [](const xp::Array& a) { return dtype_object(a.dtype()); })
      .def_prop_ro("shape", &shape_tuple)
      .def_prop_ro("ndim", &xp::Array::ndim)
      .def_prop_ro("size", [](const xp::Array& a) { return a.size(); })
      .def_prop_ro("nbytes", &xp::Array::nbytes)
      .def_prop_ro("itemsize", &xp::Array::itemsize)
      .def_prop_ro("strides",
                   [](const xp::Array& a) {
                     nb::list l;
                     for (std::int64_t s : a.strides()) l.append(s);
                     return nb::tuple(l);
                   })
      .def_prop_ro("device", &xp::Array::device)
      .def_prop_ro("T",
                   [](const xp::Array& a) {
                     if (a.ndim() != 2) throw nb::value_error("xp: x.T needs a 2-D array (use x.mT or permute_dims)");
                     return a.transpose();
                   })
      .def_prop_ro("mT", [](const xp::Array& a) { return xp::matrix_transpose(a); })
      // NumPy's attributes of complex arrays (new arrays here, where NumPy gives views).
      .def_prop_ro("real", [](const xp::Array& a) { return xp::real(a); })
      .def_prop_ro("imag", [](const xp::Array& a) { return xp::imag(a); })
      .def("conj", [](const xp::Array& a) { return xp::conj(a); })
      .def("conjugate", [](const xp::Array& a) { return xp::conj(a); })
      .def(
          "to_device",
          [](const xp::Array& a, nb::handle device, nb::handle stream) {
            (void)stream;
            const auto d = to_device(device);
            return d ? a.to_device(*d) : a;
          },
          nb::arg("device"), nb::kw_only(), nb::arg("stream") = nb::none())
      .def(
          "__array_namespace__",
          [](const xp::Array&, nb::handle api_version) {
            if (!api_version.is_none()) {
              const std::string v = nb::cast<std::string>(api_version);
              if (v != "2024.12" && v != "2023.12" && v != "2022.12" && v != "2021.12")
                throw nb::value_error(("xp: unsupported Array API version " + v).c_str());
            }
            return nb::module_::import_("xp");
          },
          nb::kw_only(), nb::arg("api_version") = nb::none())
      .def("__repr__", &xp::Array::repr)
      .def("__str__", &xp::Array::str)
      .def("__len__",
           [](const xp::Array& a) {
             if (a.ndim() == 0) throw nb::type_error("len() of a 0-d array");
             return a.shape(0);
           })
      .def("__bool__", [](const xp::Array& a) { return static_cast<bool>(a); })
      .def("__int__",
           [](const xp::Array& a) -> nb::object {
             require_0d(a);
             if (xp::kind(a.dtype()) == xp::DTypeKind::floating) {
               const double v = a.item<double>();
               if (std::isnan(v)) throw nb::value_error("cannot convert float NaN to integer");
               if (std::isinf(v)) {
                 PyErr_SetString(PyExc_OverflowError, "cannot convert float infinity to integer");
                 throw nb::python_error();
               }
               return nb::steal(PyLong_FromDouble(v));
             }
             return nb::int_(item(a));
           })
      .def("__float__",
           [](const xp::Array& a) {
             require_0d(a);
             if (xp::kind(a.dtype()) == xp::DTypeKind::complex_floating)
               throw nb::type_error("xp: float() of a complex array (use abs() or xp.real)");
             return a.item<double>();
           })
      .def("__complex__",
           [](const xp::Array& a) {
             require_0d(a);
             const auto z = a.item<std::complex<double>>();
             return nb::steal(PyComplex_FromDoubles(z.real(), z.imag()));
           })
      .def("__index__",
           [](const xp::Array& a) {
             require_0d(a);
             const xp::DTypeKind k = xp::kind(a.dtype());
             if (k != xp::DTypeKind::signed_integer && k != xp::DTypeKind::unsigned_integer)
               throw nb::type_error("xp: only integer arrays can be used as an index (__index__)");
             return item(a);
           })
      .def("item", &item)
      .def("__getitem__", &getitem, nb::arg("key").none())
      .def("__setitem__", &setitem, nb::arg("key").none(), nb::arg("value").none())
      .def("copy", &xp::Array::copy)
      .def("astype", [](const xp::Array& a, nb::handle dtype) { return a.astype(*to_dtype(dtype)); })
      .def("reshape", [](const xp::Array& a, nb::handle shape) { return a.reshape(to_shape(shape)); })
      .def("eval",
           [](nb::handle self) {
             xp::Array* a = exact_array(self);
             (a != nullptr ? *a : nb::cast<xp::Array&>(self)).eval();
             return nb::borrow(self);
           })
      .def_prop_ro("is_lazy", &xp::Array::is_lazy)
      .def("__neg__", [](const xp::Array& a) { return -a; })
      .def("__pos__", [](const xp::Array& a) { return +a; })
      .def("__abs__", [](const xp::Array& a) { return xp::abs(a); })
      .def("__invert__", [](const xp::Array& a) { return ~a; })
      .def("__matmul__",
           [](const xp::Array& a, nb::handle b) -> nb::object {
             xp::Array other;
             if (!matmul_operand(b, other)) return nb::borrow(Py_NotImplemented);
             return nb::cast(xp::matmul(a, other));
           })
      .def("__rmatmul__",
           [](const xp::Array& a, nb::handle b) -> nb::object {
             xp::Array other;
             if (!matmul_operand(b, other)) return nb::borrow(Py_NotImplemented);
             return nb::cast(xp::matmul(other, a));
           })
      .def("__imatmul__", [](nb::handle self, nb::handle b) -> nb::object {
        xp::Array other;
        if (!matmul_operand(b, other)) return nb::borrow(Py_NotImplemented);
        const xp::Array& a = nb::cast<xp::Array&>(self);
        const xp::Array r = xp::matmul(a, other);
        // As NumPy's matmul(a, b, out=a): the product must have a's shape (no broadcasting into it),
        // and a's dtype must take it (copyto's casting rule).
        if (!std::ranges::equal(r.shape(), a.shape())) {
          const auto text = [](std::span<const std::int64_t> sh) {
            return nb::cast<std::string>(nb::repr(shape_of(sh)));
          };
          throw nb::value_error(
              ("xp: a @= b: the product's shape " + text(r.shape()) + " is not the shape of a, " + text(a.shape()))
                  .c_str());
        }
        xp::copyto(a, r);
        return nb::borrow(self);
      });
  def_binary<&xp::add>(c, "__add__", "__radd__", "__iadd__");
  def_binary<&xp::subtract>(c, "__sub__", "__rsub__", "__isub__");
  def_binary<&xp::multiply>(c, "__mul__", "__rmul__", "__imul__");
  def_binary<&xp::divide>(c, "__truediv__", "__rtruediv__", "__itruediv__");
  def_binary<&xp::floor_divide>(c, "__floordiv__", "__rfloordiv__", "__ifloordiv__");
  def_binary<&xp::remainder>(c, "__mod__", "__rmod__", "__imod__");
  def_binary<&xp::pow>(c, "__pow__", "__rpow__", "__ipow__");
  def_binary<&xp::bitwise_and>(c, "__and__", "__rand__", "__iand__");
  def_binary<&xp::bitwise_or>(c, "__or__", "__ror__", "__ior__");
  def_binary<&xp::bitwise_xor>(c, "__xor__", "__rxor__", "__ixor__");
  def_binary<&xp::bitwise_left_shift>(c, "__lshift__", "__rlshift__", "__ilshift__");
  def_binary<&xp::bitwise_right_shift>(c, "__rshift__", "__rrshift__", "__irshift__");
  def_binary<&xp::equal>(c, "__eq__", nullptr, nullptr);
  def_binary<&xp::not_equal>(c, "__ne__", nullptr, nullptr);
  def_binary<&xp::less>(c, "__lt__", nullptr, nullptr);
  def_binary<&xp::less_equal>(c, "__le__", nullptr, nullptr);
  def_binary<&xp::greater>(c, "__gt__", nullptr, nullptr);
  def_binary<&xp::greater_equal>(c, "__ge__", nullptr, nullptr);
  register_array_interop(c);
}

}  // namespace xp_py
