// xp._xp._Function: a function of the package with the signature Python's tools read.
//
// nanobind's functions carry their signature as text (`__nb_signature__`), which inspect.signature
// does not read: on Python 3.11 it finds none, and from 3.12 it reports `(*args, **kwargs)`, so
// tools (and the Array API suite) cannot see the standard's parameter names and kinds. The package
// exposes each of its extension functions through this thin object instead: a call goes straight on
// to the wrapped function (vectorcall, no argument repacking), and `__signature__` is made on first
// use by a Python function the package registers (xp/_signatures.py, from `__nb_signature__`).
// Every other attribute (`__doc__`, `__name__`, `__module__`, `__nb_signature__`...) is the wrapped
// function's.
#include <cstddef>

#include "common.hpp"

// The member type and flag of __vectorcalloffset__: Python.h's names from 3.12 (the stable ABI the
// extension is built for there), structmember.h's before.
#if PY_VERSION_HEX >= 0x030C0000
#define XP_T_PYSSIZET Py_T_PYSSIZET
#define XP_READONLY Py_READONLY
#else
#include <structmember.h>
#define XP_T_PYSSIZET T_PYSSIZET
#define XP_READONLY READONLY
#endif

namespace xp_py {
namespace {

struct Signed {
  PyObject ob_base;  // PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* fn;
  PyObject* signature;           // made on first use
  vectorcallfunc fn_vectorcall;  // fn's own, where the API lets it be read (not the stable ABI's)
};

PyObject* g_signature_maker = nullptr;  // fn -> inspect.Signature (xp/_signatures.py)

PyObject* signed_vectorcall(PyObject* self, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
  Signed* s = reinterpret_cast<Signed*>(self);
  if (s->fn_vectorcall != nullptr) return s->fn_vectorcall(s->fn, args, nargsf, kwnames);
  return PyObject_Vectorcall(s->fn, args, nargsf, kwnames);
}

int signed_traverse(PyObject* self, visitproc visit, void* arg) {
  Signed* s = reinterpret_cast<Signed*>(self);
  Py_VISIT(s->fn);
  Py_VISIT(s->signature);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int signed_clear(PyObject* self) {
  Signed* s = reinterpret_cast<Signed*>(self);
  Py_CLEAR(s->fn);
  Py_CLEAR(s->signature);
  return 0;
}

void signed_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  signed_clear(self);
  freefunc free = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free(self);
  Py_DECREF(type);
}

PyObject* signed_signature(PyObject* self, void*) {
  Signed* s = reinterpret_cast<Signed*>(self);
  if (s->signature == nullptr) {
    if (g_signature_maker == nullptr) {
      PyErr_SetString(PyExc_ValueError, "xp: no signature maker registered");
      return nullptr;
    }
    s->signature = PyObject_CallFunctionObjArgs(g_signature_maker, s->fn, nullptr);  // in the stable ABI
    if (s->signature == nullptr) return nullptr;
  }
  Py_INCREF(s->signature);
  return s->signature;
}

PyObject* signed_wrapped(PyObject* self, void*) {
  PyObject* fn = reinterpret_cast<Signed*>(self)->fn;
  Py_INCREF(fn);
  return fn;
}

// Attributes of the object itself first, then the wrapped function's; `__doc__` and `__module__` are
// the wrapped function's always (the type's own are the class's: getset descriptors there would show
// at the class level, where nanobind's stub generator reads a module name).
PyObject* signed_getattro(PyObject* self, PyObject* name) {
  if (PyUnicode_Check(name) != 0 && (PyUnicode_CompareWithASCIIString(name, "__doc__") == 0 ||
                                     PyUnicode_CompareWithASCIIString(name, "__module__") == 0))
    return PyObject_GetAttr(reinterpret_cast<Signed*>(self)->fn, name);
  PyObject* r = PyObject_GenericGetAttr(self, name);
  if (r != nullptr || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyErr_Clear();
  return PyObject_GetAttr(reinterpret_cast<Signed*>(self)->fn, name);
}

PyObject* signed_repr(PyObject* self) {
  PyObject* name = PyObject_GetAttrString(reinterpret_cast<Signed*>(self)->fn, "__name__");
  if (name == nullptr) return nullptr;
  PyObject* r = PyUnicode_FromFormat("<xp function %U>", name);
  Py_DECREF(name);
  return r;
}

PyGetSetDef signed_getset[] = {
    {"__signature__", signed_signature, nullptr, "the signature inspect.signature reports", nullptr},
    {"__wrapped__", signed_wrapped, nullptr, "the extension's function", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMemberDef signed_members[] = {
    {"__vectorcalloffset__", XP_T_PYSSIZET, static_cast<Py_ssize_t>(offsetof(Signed, vectorcall)), XP_READONLY,
     nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot signed_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(signed_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(signed_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(signed_clear)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_getattro, reinterpret_cast<void*>(signed_getattro)},
    {Py_tp_repr, reinterpret_cast<void*>(signed_repr)},
    {Py_tp_getset, signed_getset},
    {Py_tp_members, signed_members},
    {0, nullptr},
};

PyType_Spec signed_spec = {
    "xp._xp._Function",
    static_cast<int>(sizeof(Signed)),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    signed_slots,
};

PyTypeObject* g_signed_type = nullptr;

}  // namespace

void register_signed(nb::module_& m) {
  g_signed_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&signed_spec));
  if (g_signed_type == nullptr) throw nb::python_error();
  m.attr("_Function") = nb::borrow(reinterpret_cast<PyObject*>(g_signed_type));
  m.def(
      "_signed",
      [](nb::handle fn) {
        if (!PyCallable_Check(fn.ptr())) throw nb::type_error("xp._signed: expected a callable");
        Signed* s = PyObject_GC_New(Signed, g_signed_type);
        if (s == nullptr) throw nb::python_error();
        s->vectorcall = signed_vectorcall;
        s->fn = fn.inc_ref().ptr();
        s->signature = nullptr;
#ifdef Py_LIMITED_API
        s->fn_vectorcall = nullptr;
#else
        s->fn_vectorcall = PyVectorcall_Function(fn.ptr());
#endif
        PyObject_GC_Track(reinterpret_cast<PyObject*>(s));
        return nb::steal(reinterpret_cast<PyObject*>(s));
      },
      nb::arg("fn"));
  m.def(
      "_set_signature_maker",
      [](nb::handle maker) {
        Py_XDECREF(g_signature_maker);
        g_signature_maker = maker.inc_ref().ptr();
      },
      nb::arg("maker"));
}

}  // namespace xp_py
