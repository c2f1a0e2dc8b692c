// Dtype objects, devices, and the optional-GPU questions: cuda_status, devices, the doctor's report.
#include <nanobind/stl/string_view.h>

#include <array>

#include "common.hpp"

namespace xp_py {

namespace {

constexpr int kDTypes = 15;
std::array<nb::object, kDTypes>* g_dtypes = nullptr;  // leaked: the objects live as long as the module

}  // namespace

nb::object dtype_object(xp::DType t) {
  return (*g_dtypes)[static_cast<std::size_t>(t)];
}

namespace {
// NumPy's codes and aliases for the dtypes xp has, as numpy.dtype reads them on a little-endian
// 64-bit machine: "f4", "<f8", "=i2", "|b1", "?", one-letter codes ("e", "f", "d", "F", "D", "b", "B",
// "h", "H", "i", "I", "l", "L", "q", "Q"), "float" (float64), "int" (int64), "complex", "double",
// "single", "half", "longlong", "intp", "uint". A big-endian code (">f4") is not a dtype xp has.
std::optional<xp::DType> numpy_dtype_code(std::string s) {
  using D = xp::DType;
  if (!s.empty() && (s[0] == '<' || s[0] == '=' || s[0] == '|')) s.erase(0, 1);
  static const std::pair<const char*, D> codes[] = {{"?", D::bool_},
                                                    {"b1", D::bool_},
                                                    {"e", D::float16},
                                                    {"f2", D::float16},
                                                    {"half", D::float16},
                                                    {"f", D::float32},
                                                    {"f4", D::float32},
                                                    {"single", D::float32},
                                                    {"d", D::float64},
                                                    {"f8", D::float64},
                                                    {"double", D::float64},
                                                    {"float", D::float64},
                                                    {"F", D::complex64},
                                                    {"c8", D::complex64},
                                                    {"D", D::complex128},
                                                    {"c16", D::complex128},
                                                    {"complex", D::complex128},
                                                    {"b", D::int8},
                                                    {"i1", D::int8},
                                                    {"B", D::uint8},
                                                    {"u1", D::uint8},
                                                    {"h", D::int16},
                                                    {"i2", D::int16},
                                                    {"H", D::uint16},
                                                    {"u2", D::uint16},
                                                    {"i", D::int32},
                                                    {"i4", D::int32},
                                                    {"I", D::uint32},
                                                    {"u4", D::uint32},
                                                    {"l", D::int64},
                                                    {"q", D::int64},
                                                    {"i8", D::int64},
                                                    {"int", D::int64},
                                                    {"longlong", D::int64},
                                                    {"intp", D::int64},
                                                    {"L", D::uint64},
                                                    {"Q", D::uint64},
                                                    {"u8", D::uint64},
                                                    {"uint", D::uint64},
                                                    {"ulonglong", D::uint64}};
  for (const auto& [code, t] : codes)
    if (s == code) return t;
  return std::nullopt;
}
}  // namespace

std::optional<xp::DType> to_dtype(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (nb::isinstance<PyDType>(h)) return nb::cast<PyDType&>(h).dtype;
  if (nb::isinstance<nb::str>(h)) {
    const std::string s = nb::cast<std::string>(h);
    if (auto t = xp::parse_dtype(s == "bool_" ? "bool" : s)) return *t;
    if (auto t = numpy_dtype_code(s)) return *t;
    throw nb::type_error(("xp: unknown dtype name '" + s + "'").c_str());
  }
  // Python's own types, as NumPy takes them (float: float64, int: int64, complex: complex128).
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return xp::DType::float64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return xp::DType::int64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return xp::DType::bool_;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyComplex_Type)) return xp::DType::complex128;
  // A NumPy scalar type (numpy.float32, numpy.bool_, ml_dtypes.bfloat16): by its name. Its
  // `dtype` attribute is a descriptor of the class, not a dtype.
  if (PyType_Check(h.ptr()) && nb::hasattr(h, "__name__") && nb::hasattr(h, "dtype")) {
    const nb::object named = h.attr("__name__");
    if (nb::isinstance<nb::str>(named)) {
      std::string n = nb::cast<std::string>(named);
      if (n == "bool_") n = "bool";
      if (auto t = xp::parse_dtype(n)) return *t;
    }
    throw nb::type_error(("xp: not a dtype xp has: " + nb::cast<std::string>(nb::repr(h))).c_str());
  }
  // A NumPy dtype or scalar: by its name.
  if (nb::hasattr(h, "dtype") || nb::hasattr(h, "name")) {
    nb::object named = nb::hasattr(h, "name") && nb::isinstance<nb::str>(h.attr("name")) ? h.attr("name")
                       : nb::hasattr(h, "dtype")                                         ? h.attr("dtype").attr("name")
                                                                                         : nb::none();
    if (nb::isinstance<nb::str>(named)) {
      if (auto t = xp::parse_dtype(nb::cast<std::string>(named))) return *t;
    }
  }
  throw nb::type_error(("xp: not a dtype: " + nb::cast<std::string>(nb::repr(h))).c_str());
}

namespace {
bool same_dtype(xp::DType t, nb::handle o) {
  if (nb::isinstance<PyDType>(o)) return nb::cast<PyDType&>(o).dtype == t;
  if (o.is_none()) return false;
  try {
    const std::optional<xp::DType> other = to_dtype(o);
    return other && *other == t;
  } catch (const nb::python_error&) {
    return false;
  } catch (const nb::builtin_exception&) {
    return false;
  } catch (const std::exception&) {
    return false;
  }
}
}  // namespace

std::optional<xp::Device> to_device(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (nb::isinstance<xp::Device>(h)) return nb::cast<xp::Device>(h);
  if (nb::isinstance<nb::str>(h)) return xp::Device(nb::cast<std::string>(h));
  throw nb::type_error(("xp: not a device: " + nb::cast<std::string>(nb::repr(h)) +
                        " (give an xp.Device or a name: 'cpu', 'cuda', 'cuda:N')")
                           .c_str());
}

void register_runtime(nb::module_& m) {
  nb::class_<PyDType>(m, "DType", "An element type: xp.float32, xp.int64, xp.bool ...")
      .def_prop_ro("name", [](const PyDType& d) { return std::string(xp::name(d.dtype)); })
      .def_prop_ro("itemsize", [](const PyDType& d) { return xp::itemsize(d.dtype); })
      // NumPy's dtype of the same name (ml_dtypes' bfloat16), which numpy.dtype() reads from an
      // object's `dtype`: numpy.dtype(x.dtype) and numpy.zeros(2, x.dtype) then work. An
      // AttributeError where NumPy (or ml_dtypes) cannot be imported.
      .def_prop_ro("dtype",
                   [](const PyDType& d) -> nb::object {
                     try {
                       nb::module_ np = nb::module_::import_("numpy");
                       if (d.dtype == xp::DType::bfloat16)
                         return np.attr("dtype")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
                       return np.attr("dtype")(std::string(xp::name(d.dtype)));
                     } catch (const nb::python_error&) {
                       throw nb::attribute_error(("xp." + std::string(xp::name(d.dtype)) +
                                                  ".dtype: NumPy's dtype needs NumPy (and ml_dtypes for bfloat16)")
                                                     .c_str());
                     }
                   })
      .def_prop_ro("kind",
                   [](const PyDType& d) {
                     switch (xp::kind(d.dtype)) {
                       case xp::DTypeKind::boolean:
                         return "b";
                       case xp::DTypeKind::signed_integer:
                         return "i";
                       case xp::DTypeKind::unsigned_integer:
                         return "u";
                       case xp::DTypeKind::floating:
                         return "f";
                       case xp::DTypeKind::complex_floating:
                         return "c";
                     }
                     return "?";
                   })
      .def("__repr__", [](const PyDType& d) { return "xp." + std::string(xp::name(d.dtype)); })
      .def("__str__", [](const PyDType& d) { return std::string(xp::name(d.dtype)); })
      // Equal to its own object and, as NumPy's dtypes compare, to what names the same dtype: a
      // NumPy dtype or scalar type (x.dtype == numpy.float32), a name ("float32"), Python's float,
      // int, bool and complex. Anything else is unequal, never an error.
      .def(
          "__eq__", [](const PyDType& d, nb::handle o) { return same_dtype(d.dtype, o); }, nb::arg("other").none())
      .def(
          "__ne__", [](const PyDType& d, nb::handle o) { return !same_dtype(d.dtype, o); }, nb::arg("other").none())
      .def("__hash__", [](const PyDType& d) { return static_cast<int>(d.dtype) + 0x5870; });
  g_dtypes = new std::array<nb::object, kDTypes>();
  for (int i = 0; i < kDTypes; ++i) {
    const auto t = static_cast<xp::DType>(i);
    (*g_dtypes)[static_cast<std::size_t>(i)] = nb::cast(PyDType{t});
    m.attr(std::string(xp::name(t)).c_str()) = (*g_dtypes)[static_cast<std::size_t>(i)];
  }

  nb::class_<xp::Device>(m, "Device", "A place where arrays live: Device('cpu'), Device('cuda:0').")
      .def(nb::init<std::string_view>(), nb::arg("name"))
      .def_prop_ro("kind", [](const xp::Device& d) { return d.is_cuda() ? "cuda" : "cpu"; })
      .def_prop_ro("index", &xp::Device::index)
      .def("activate", &xp::Device::activate,
           "Makes the device the calling thread's current device (where arrays made without a device go).")
      .def("__repr__", [](const xp::Device& d) { return "Device('" + d.str() + "')"; })
      .def("__str__", &xp::Device::str)
      .def(
          "__eq__",
          [](const xp::Device& d, nb::handle o) {
            if (nb::isinstance<xp::Device>(o)) return nb::cast<xp::Device>(o) == d;
            if (nb::isinstance<nb::str>(o)) {
              try {
                return xp::Device(nb::cast<std::string>(o)) == d;
              } catch (const xp::ValueError&) {
                return false;
              }
            }
            return false;
          },
          nb::arg("other").none())
      .def("__hash__", [](const xp::Device& d) { return std::hash<std::string>()(d.str()); });

  m.def(
      "cuda_status",
      []() {
        const xp::CudaStatus s = xp::cuda_status();
        nb::dict d;
        d["available"] = s.available;
        d["reason"] = std::string(xp::to_string(s.reason));
        d["detail"] = s.detail;
        // The doctor's fix for the reason, when it has one (the same words as `xp doctor`).
        std::string fix;
        if (!s.available) {
          for (const xp::Problem& p : xp::system_report().problems)
            if (p.severity == "error" || fix.empty()) fix = p.fix;
        }
        d["fix"] = fix.empty() ? nb::none() : nb::cast(fix);
        d["driver_error"] = s.driver_error_name.empty() ? nb::none() : nb::cast(s.driver_error_name);
        d["driver_version"] = s.driver_version;
        d["nvrtc_version"] = s.nvrtc_version;
        d["device_count"] = s.device_count;
        return d;
      },
      "Is CUDA usable here, and if not why (a reason from a closed set), with the evidence and a fix.");
  m.def("is_cuda_available", []() { return xp::cuda_status().available; });
  m.def("cuda_device_count", []() {
    const xp::CudaStatus s = xp::cuda_status();
    return s.available ? s.device_count : 0;
  });
  m.def("devices", &xp::devices, "The CPU, then every usable CUDA device.");
  m.def("default_device", &xp::default_device);
  m.def("doctor_json", &xp::doctor_json, "The document of `xp doctor --json`, as text.");
  m.def("doctor_exit_code", []() { return xp::doctor_exit_code(xp::doctor_report()); });
  m.def("set_cuda_hidden", &xp::set_cuda_hidden, nb::arg("hidden"));
  m.def("cuda_hidden", &xp::cuda_hidden);
  m.def("set_lazy", &xp::set_lazy, nb::arg("lazy"));
  m.def("lazy", &xp::lazy);
  m.def("set_num_threads", &xp::set_num_threads, nb::arg("threads"));
  m.def("num_threads", &xp::num_threads);
  m.def(
      "synchronize",
      [](nb::handle device) {
        const auto d = to_device(device);
        xp::synchronize(d ? *d : xp::default_device());
      },
      nb::arg("device") = nb::none());
  m.def("loaded_cuda_libraries", []() {
    nb::list out;
    for (const auto& l : xp::loaded_cuda_libraries()) {
      nb::dict d;
      d["name"] = l.name;
      d["path"] = l.path;
      d["major"] = l.major;
      out.append(d);
    }
    return out;
  });
  m.attr("__version__") = std::string(xp::version());
  m.def("source_hash", []() { return std::string(xp::source_hash()); });
}

}  // namespace xp_py
