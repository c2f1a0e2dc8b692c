// Kernels from Python as CuPy users call them: xp.RawKernel, xp.RawModule, xp.Stream and xp.Event,
// over xp::Program, xp::Kernel, xp::Stream and xp::Event.
#include <Python.h>
#include <nanobind/stl/pair.h>

#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

#include "common.hpp"

namespace xp_py {

namespace {

xp::Dim3 to_dim3(nb::handle h) {
  if (PyLong_Check(h.ptr())) return xp::Dim3(nb::cast<unsigned>(h));
  std::vector<unsigned> v;
  for (nb::handle d : h) v.push_back(nb::cast<unsigned>(d));
  if (v.empty() || v.size() > 3) throw nb::value_error("xp: a grid or block is an int or a tuple of 1 to 3 ints");
  v.resize(3, 1);
  return xp::Dim3(v[0], v[1], v[2]);
}

// A stream argument: None, an xp.Stream, an object speaking __cuda_stream__ (cuda.core's protocol),
// an object with .ptr (CuPy) or .cuda_stream (PyTorch), or a CUstream as an int.
std::optional<xp::Stream> to_stream(nb::handle h, const xp::Device& device) {
  if (h.is_none()) return std::nullopt;
  if (nb::isinstance<xp::Stream>(h)) return nb::cast<xp::Stream>(h);
  std::uintptr_t handle = 0;
  if (nb::hasattr(h, "__cuda_stream__")) {
    nb::tuple t = nb::borrow<nb::tuple>(h.attr("__cuda_stream__")());
    handle = nb::cast<std::uintptr_t>(t[1]);
  } else if (nb::hasattr(h, "ptr")) {
    handle = nb::cast<std::uintptr_t>(h.attr("ptr"));
  } else if (nb::hasattr(h, "cuda_stream")) {
    handle = nb::cast<std::uintptr_t>(h.attr("cuda_stream"));
  } else {
    handle = nb::cast<std::uintptr_t>(h);
  }
  return xp::Stream::external(device, reinterpret_cast<void*>(handle));
}

// The bytes of a NumPy scalar (or array) of at most 8 bytes into *out; their count. Through the
// buffer protocol, which NumPy's scalars speak (no bytes object made, no method called), else
// tobytes().
std::size_t numpy_scalar_bytes(nb::handle h, std::uint64_t* out) {
  const auto too_big = [] { throw nb::type_error("xp: a kernel argument of more than 8 bytes"); };
  Py_buffer view;
  if (PyObject_CheckBuffer(h.ptr()) && PyObject_GetBuffer(h.ptr(), &view, PyBUF_C_CONTIGUOUS) == 0) {
    const auto len = static_cast<std::size_t>(view.len);
    if (len <= sizeof(std::uint64_t)) std::memcpy(out, view.buf, len);
    PyBuffer_Release(&view);
    if (len > sizeof(std::uint64_t)) too_big();
    return len;
  }
  PyErr_Clear();
  nb::bytes b = nb::borrow<nb::bytes>(h.attr("tobytes")());
  if (b.size() > sizeof(std::uint64_t)) too_big();
  std::memcpy(out, b.c_str(), b.size());
  return b.size();
}

// numpy.generic, the type of every NumPy scalar, once NumPy is imported (no NumPy scalar exists
// before): a type check instead of attribute lookups on the launch path (a failed hasattr raises
// and clears an AttributeError, the most of a microsecond per argument).
PyTypeObject* numpy_generic() noexcept {
  static std::atomic<PyTypeObject*> generic{nullptr};
  PyTypeObject* t = generic.load(std::memory_order_acquire);
  if (t != nullptr) return t;
  PyObject* modules = PyImport_GetModuleDict();                                          // borrowed
  PyObject* np = modules != nullptr ? PyDict_GetItemString(modules, "numpy") : nullptr;  // borrowed
  if (np == nullptr) return nullptr;
  PyObject* g = PyObject_GetAttrString(np, "generic");  // new reference, kept for the process
  if (g == nullptr || !PyType_Check(g)) {
    Py_XDECREF(g);
    PyErr_Clear();
    return nullptr;
  }
  t = reinterpret_cast<PyTypeObject*>(g);
  PyTypeObject* expected = nullptr;
  if (!generic.compare_exchange_strong(expected, t)) Py_DECREF(g);  // another thread was first
  return generic.load(std::memory_order_acquire);
}

bool is_numpy_scalar(nb::handle h) noexcept {
  PyTypeObject* g = numpy_generic();
  return g != nullptr && PyType_IsSubtype(Py_TYPE(h.ptr()), g) != 0;
}

// Room for a launch's per-argument values: on the stack for up to 8 arguments.
template <class T>
class ArgSlots {
 public:
  explicit ArgSlots(std::size_t n) : p_(n <= kInline ? inline_.data() : (heap_.resize(n), heap_.data())) {}
  ArgSlots(const ArgSlots&) = delete;
  ArgSlots& operator=(const ArgSlots&) = delete;
  T& operator[](std::size_t i) { return p_[i]; }
  T* data() { return p_; }

 private:
  static constexpr std::size_t kInline = 8;
  std::array<T, kInline> inline_{};
  std::vector<T> heap_;
  T* p_;
};

std::vector<std::string> strings(nb::handle seq) {
  std::vector<std::string> v;
  for (nb::handle s : seq) v.push_back(nb::cast<std::string>(s));
  return v;
}

struct RawModule {
  std::shared_ptr<xp::Program> program;
};

struct RawKernel {
  std::shared_ptr<xp::Program> program;
  std::string name;
  std::map<int, xp::Kernel> kernels;  // by device ordinal; -1: the CPU (the source compiled by the host compiler)

  const xp::Kernel& kernel(const xp::Device& d) {
    const int key = d.is_cuda() ? d.index() : -1;
    auto it = kernels.find(key);
    if (it == kernels.end()) it = kernels.emplace(key, program->kernel(name, d)).first;
    return it->second;
  }

  void call(nb::handle grid, nb::handle block, nb::handle args, unsigned shared_mem, nb::handle stream) {
    const nb::tuple a = nb::tuple(nb::borrow(args));
    const std::size_t n = a.size();
    // The device: the stream's, else the first array's, else the default device.
    std::optional<xp::Device> device;
    if (nb::isinstance<xp::Stream>(stream)) device = nb::cast<xp::Stream&>(stream).device();
    ArgSlots<xp::Array> arrays(n);     // xp arrays, and foreign arrays seen through DLPack or the CAI
    ArgSlots<std::uint8_t> scalar(n);  // NumPy scalars
    for (std::size_t i = 0; i < n; ++i) {
      nb::handle h = a[i];
      if (nb::isinstance<xp::Array>(h))
        arrays[i] = nb::cast<xp::Array&>(h);
      else if (is_numpy_scalar(h))
        scalar[i] = 1;
      else if (nb::hasattr(h, "__cuda_array_interface__") || nb::hasattr(h, "__dlpack_device__"))
        arrays[i] = asarray(h, std::nullopt, std::nullopt, std::nullopt);
      if (!device && arrays[i].valid()) device = arrays[i].device();
    }
    if (!device) device = xp::default_device();
    const xp::Kernel& k = kernel(*device);
    const std::optional<xp::Stream> st = to_stream(stream, *device);
    ArgSlots<std::uint64_t> values(n);  // each argument's bytes (at most 8)
    ArgSlots<void*> pointers(n);
    ArgSlots<std::size_t> sizes(n);
    ArgSlots<std::shared_ptr<const void>> refs(n);
    xp::KernelArgContext context(*device, refs.data(), n, st ? &*st : nullptr);
    for (std::size_t i = 0; i < n; ++i) {
      nb::handle h = a[i];
      if (arrays[i].valid()) {
        values[i] = xp::kernel_arg(arrays[i], context);
        sizes[i] = sizeof(std::uint64_t);
      } else if (scalar[i] != 0 ||
                 (nb::hasattr(h, "dtype") && nb::hasattr(h, "tobytes"))) {  // a NumPy scalar: its bytes
        sizes[i] = numpy_scalar_bytes(h, &values[i]);
      } else {
        throw nb::type_error(("xp: kernel argument " + std::to_string(i) + " is a " +
                              nb::cast<std::string>(nb::repr(h.type())) +
                              ": give an array, or a NumPy scalar (numpy.float32(1), numpy.int32(n)) so that its "
                              "size is explicit")
                                 .c_str());
      }
      pointers[i] = &values[i];
    }
    xp::LaunchConfig config;
    config.grid = to_dim3(grid);
    config.block = to_dim3(block);
    config.shared_bytes = shared_mem;
    if (st) config.stream = &*st;
    k.launch_holding(config, pointers.data(), sizes.data(), n, refs.data(), context.kept(), context.stream_ordered());
  }
};

std::shared_ptr<xp::Program> make_program(const std::string& code, nb::handle options, nb::handle name_expressions) {
  xp::ProgramOptions o;
  o.options = strings(options);
  o.name_expressions = strings(name_expressions);
  return std::make_shared<xp::Program>(code, o);
}

// The scopes a thread's `with` blocks opened (xp.Stream, xp.cuda.Device), innermost last: `with`
// ends them in the reverse order, on the thread that began them.
std::vector<std::shared_ptr<void>>& scope_stack() {
  thread_local std::vector<std::shared_ptr<void>> stack;
  return stack;
}
void push_scope(std::shared_ptr<void> scope) {
  scope_stack().push_back(std::move(scope));
}
void pop_scope() {
  auto& stack = scope_stack();
  if (stack.empty()) throw nb::value_error("xp: a scope ended that this thread did not begin");
  stack.pop_back();
}

}  // namespace

void register_kernels(nb::module_& m) {
  nb::class_<xp::Stream>(m, "Stream",
                         "A CUDA stream: xp's own (Stream(device)) or another library's (Stream.external). As a "
                         "context manager, the current stream of its device (and its device the current device).")
      .def(nb::new_([](nb::handle device, bool null, bool non_blocking) {
             (void)non_blocking;  // xp's streams are always non-blocking (they never wait for the legacy stream)
             const auto d = to_device(device);
             const xp::Device dev = d ? *d : xp::default_device();
             return null ? xp::Stream::default_for(dev) : xp::Stream(dev);
           }),
           nb::arg("device") = nb::none(), nb::kw_only(), nb::arg("null") = false, nb::arg("non_blocking") = true)
      .def_static(
          "default_for",
          [](nb::handle device) {
            const auto d = to_device(device);
            return xp::Stream::default_for(d ? *d : xp::default_device());
          },
          nb::arg("device") = nb::none())
      .def_static(
          "external",
          [](nb::handle ptr, nb::handle device) {
            if (ptr.is_none())
              throw nb::value_error("xp.Stream.external: give the stream (a CUstream or an object with one)");
            const auto d = to_device(device);
            return *to_stream(ptr, d ? *d : xp::default_device());
          },
          nb::arg("ptr"), nb::arg("device") = nb::none())
      .def_prop_ro("device", &xp::Stream::device)
      .def_prop_ro("ptr", [](const xp::Stream& s) { return reinterpret_cast<std::uintptr_t>(s.handle()); })
      .def_prop_ro("owned", &xp::Stream::owned)
      .def("__cuda_stream__",
           [](const xp::Stream& s) {
             return std::pair<int, std::uintptr_t>(0, reinterpret_cast<std::uintptr_t>(s.handle()));
           })
      .def("__eq__", [](const xp::Stream& a, const xp::Stream& b) { return a == b; })
      .def("__hash__", [](const xp::Stream& s) { return std::hash<void*>()(s.handle()); })
      .def("__enter__",
           [](const xp::Stream& s) {
             push_scope(std::make_shared<xp::StreamScope>(s));
             return s;
           })
      .def("__exit__", [](const xp::Stream&, nb::args) { pop_scope(); })
      .def("synchronize", &xp::Stream::synchronize)
      .def("wait_event", &xp::Stream::wait_event, nb::arg("event"))
      .def(
          "record",
          [](const xp::Stream& s, nb::handle event) {
            xp::Event e = event.is_none() ? xp::Event(s.device()) : nb::cast<xp::Event>(event);
            e.record(s);
            return e;
          },
          nb::arg("event") = nb::none());
  nb::class_<xp::Event>(m, "Event", "A marker in a stream, for timing and waiting.")
      .def(nb::new_([](nb::handle device, bool timing, bool blocking) {
             const auto d = to_device(device);
             return xp::Event(d ? *d : xp::default_device(), xp::EventFlags{timing, blocking});
           }),
           nb::arg("device") = nb::none(), nb::kw_only(), nb::arg("timing") = true, nb::arg("blocking") = false)
      .def(
          "record",
          [](xp::Event& e, nb::handle stream) {
            if (stream.is_none()) {
              e.record();  // the current stream of the event's device
            } else {
              e.record(*to_stream(stream, e.device()));
            }
          },
          nb::arg("stream") = nb::none())
      .def("synchronize", &xp::Event::synchronize)
      .def("query", &xp::Event::query)
      .def_prop_ro("done", &xp::Event::query)
      .def_prop_ro("device", &xp::Event::device)
      .def_prop_ro("ptr", [](const xp::Event& e) { return reinterpret_cast<std::uintptr_t>(e.handle()); })
      .def(
          "elapsed", [](const xp::Event& start, const xp::Event& stop) { return xp::Event::elapsed(start, stop); },
          nb::arg("end"), "Milliseconds from this event to `end` (both recorded and completed).")
      .def(
          "elapsed_time", [](const xp::Event& start, const xp::Event& stop) { return xp::Event::elapsed(start, stop); },
          nb::arg("end"))
      .def_static("elapsed_ms", &xp::Event::elapsed, nb::arg("start"), nb::arg("stop"));
  m.def(
      "current_stream",
      [](nb::handle device) {
        const auto d = to_device(device);
        return d ? xp::current_stream(*d) : xp::current_stream();
      },
      nb::arg("device") = nb::none(),
      "The calling thread's current stream of a CUDA device (of the current device by default).");
  m.def("current_device", &xp::current_device, "The calling thread's current device.");
  m.def(
      "_enter_device", [](const xp::Device& d) { push_scope(std::make_shared<xp::DeviceScope>(d)); },
      nb::arg("device"));
  m.def("_exit_scope", [] { pop_scope(); });

  nb::class_<RawKernel>(m, "RawKernel",
                        "A __global__ function of CUDA C++ source compiled at first use: by NVRTC for a GPU, by the "
                        "host C++ compiler for the CPU.")
      .def(nb::new_([](const std::string& code, const std::string& name, nb::handle options) {
             return RawKernel{make_program(code, options, nb::tuple()), name, {}};
           }),
           nb::arg("code"), nb::arg("name"), nb::arg("options") = nb::tuple())
      .def_prop_ro("name", [](const RawKernel& k) { return k.name; })
      .def(
          "compile",
          [](RawKernel& k, nb::handle device) {
            const auto d = to_device(device);
            k.kernel(d ? *d : xp::default_device());
          },
          nb::arg("device") = nb::none())
      .def("__call__", &RawKernel::call, nb::arg("grid"), nb::arg("block"), nb::arg("args"), nb::kw_only(),
           nb::arg("shared_mem") = 0, nb::arg("stream") = nb::none());
  nb::class_<RawModule>(m, "RawModule", "CUDA C++ source compiled by NVRTC; get_function names its kernels.")
      .def(nb::new_([](const std::string& code, nb::handle options, nb::handle name_expressions) {
             return RawModule{make_program(code, options, name_expressions)};
           }),
           nb::kw_only(), nb::arg("code"), nb::arg("options") = nb::tuple(), nb::arg("name_expressions") = nb::tuple())
      .def(
          "get_function",
          [](const RawModule& m, const std::string& name) {
            return RawKernel{m.program, name, {}};
          },
          nb::arg("name"));
}

}  // namespace xp_py
