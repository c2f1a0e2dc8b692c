// xp's C++ errors (include/xp/error.hpp) as Python exceptions: each derives from xp.Error and from
// the builtin a Python user expects, and keeps the C++ error's evidence as attributes.
#include <Python.h>

#include <initializer_list>
#include <utility>

#include "common.hpp"

namespace xp_py {

namespace {

PyObject* g_error = nullptr;
PyObject* g_value_error = nullptr;
PyObject* g_config_error = nullptr;
PyObject* g_index_error = nullptr;
PyObject* g_type_error = nullptr;
PyObject* g_overflow_error = nullptr;
PyObject* g_device_mismatch = nullptr;
PyObject* g_device_unavailable = nullptr;
PyObject* g_cuda_error = nullptr;
PyObject* g_compile_error = nullptr;
PyObject* g_out_of_memory = nullptr;
PyObject* g_file_error = nullptr;
PyObject* g_linalg_error = nullptr;

PyObject* make(nb::module_& m, const char* name, std::initializer_list<PyObject*> bases, const char* doc) {
  nb::list b;
  for (PyObject* p : bases) b.append(nb::handle(p));
  const std::string full = std::string("xp.") + name;
  PyObject* t = PyErr_NewExceptionWithDoc(full.c_str(), doc, nb::tuple(b).ptr(), nullptr);
  if (t == nullptr) throw nb::python_error();
  m.attr(name) = nb::handle(t);
  return t;  // kept for the life of the process, as the module is
}

// Raises `type(message)` with the given attributes.
void raise(PyObject* type, const char* message, std::initializer_list<std::pair<const char*, nb::object>> attrs = {}) {
  nb::object exc = nb::steal(PyObject_CallFunction(type, "s", message));
  if (!exc.is_valid()) return;  // the call set its own error
  for (const auto& [k, v] : attrs) exc.attr(k) = v;
  PyErr_SetObject(type, exc.ptr());
}

}  // namespace

void register_errors(nb::module_& m) {
  g_error = make(m, "Error", {PyExc_Exception}, "Root of every error xp raises.");
  g_value_error = make(m, "ValueError", {g_error, PyExc_ValueError}, "A bad argument to an xp function.");
  g_config_error =
      make(m, "ConfigError", {g_value_error}, "A malformed XP_* variable: .variable, .value and .accepted forms.");
  g_index_error = make(m, "IndexError", {g_value_error, PyExc_IndexError}, "An index out of range.");
  g_linalg_error = make(m, "LinAlgError", {g_value_error},
                        "A matrix with no answer (singular, not positive definite, no convergence): .batch_index "
                        "names the batch entry, .info is the library's info code.");
  g_type_error = make(m, "TypeError", {g_value_error, PyExc_TypeError}, "An operation the dtypes do not support.");
  g_overflow_error = make(m, "OverflowError", {g_type_error, PyExc_OverflowError},
                          "An integer that does not fit the integer dtype it must take (uint8_array + 300).");
  g_device_mismatch = make(m, "DeviceMismatch", {g_value_error}, "Arrays on two devices in one operation.");
  g_device_unavailable = make(m, "DeviceUnavailable", {g_error, PyExc_RuntimeError},
                              "A device this process cannot use (CUDA unusable, no such ordinal, fork).");
  g_cuda_error = make(m, "CudaError", {g_error, PyExc_RuntimeError},
                      "A CUDA driver call failed: .code and .name are the driver's, .call the call.");
  g_compile_error =
      make(m, "CompileError", {g_error, PyExc_RuntimeError}, "NVRTC rejected a program: .log is its whole log.");
  g_out_of_memory = make(m, "OutOfMemoryError", {g_error, PyExc_MemoryError},
                         "An allocation failed: .requested, .free, .limit and .block in bytes, and .device.");
  g_file_error = make(m, "FileError", {g_error, PyExc_OSError}, "A file could not be read or written.");

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const xp::ConfigError& e) {
      raise(g_config_error, e.what(),
            {{"variable", nb::str(e.variable().c_str())},
             {"value", nb::str(e.value().c_str())},
             {"accepted", nb::str(e.accepted().c_str())}});
    } catch (const xp::IndexError& e) {
      raise(g_index_error, e.what());
    } catch (const xp::OverflowError& e) {
      raise(g_overflow_error, e.what());
    } catch (const xp::TypeError& e) {
      raise(g_type_error, e.what());
    } catch (const xp::LinAlgError& e) {
      raise(g_linalg_error, e.what(), {{"batch_index", nb::int_(e.batch_index())}, {"info", nb::int_(e.info())}});
    } catch (const xp::DeviceMismatch& e) {
      raise(g_device_mismatch, e.what());
    } catch (const xp::ValueError& e) {
      raise(g_value_error, e.what());
    } catch (const xp::DeviceUnavailable& e) {
      raise(g_device_unavailable, e.what());
    } catch (const xp::CudaError& e) {
      raise(g_cuda_error, e.what(),
            {{"code", nb::int_(e.code())}, {"name", nb::str(e.name().c_str())}, {"call", nb::str(e.call().c_str())}});
    } catch (const xp::CompileError& e) {
      raise(
          g_compile_error, e.what(),
          {{"log", nb::str(e.log().c_str())}, {"program", nb::str(e.program().c_str())}, {"line", nb::int_(e.line())}});
    } catch (const xp::OutOfMemory& e) {
      raise(g_out_of_memory, e.what(),
            {{"device", nb::str(e.device().c_str())},
             {"requested", nb::int_(e.requested())},
             {"free", nb::int_(e.free())},
             {"limit", nb::int_(e.limit())},
             {"block", nb::int_(e.block())}});
    } catch (const xp::FileError& e) {
      raise(g_file_error, e.what(), {{"filename", nb::str(e.path().c_str())}, {"reason", nb::str(e.reason().c_str())}});
    } catch (const xp::Error& e) {
      raise(g_error, e.what());
    } catch (const nb::cast_error&) {
      // An explicit conversion of an argument failed (else nanobind's default: RuntimeError
      // "std::bad_cast", which names nothing).
      PyErr_SetString(PyExc_TypeError,
                      "xp: an argument could not be converted to what the function takes (a Python int beyond the "
                      "64-bit range, or an object of another type)");
    }
  });
}

}  // namespace xp_py
