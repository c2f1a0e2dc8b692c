// The extension module xp._xp: the package xp (python/xp/__init__.py) re-exports it. Importing it
// opens no CUDA library and creates no context: detection runs at the first call that needs it.
#include "common.hpp"

NB_MODULE(_xp, m) {
  nb::set_leak_warnings(false);  // the dtype objects live as long as the process
  // A sequence that xp.asarray refuses (a ragged list) as an array argument is a TypeError; without
  // this, nanobind would also print a line to stderr about the failed implicit conversion.
  nb::set_implicit_cast_warnings(false);
  m.doc() = "xp's C++ core (libxp) for Python; import xp, not this module";
  xp_py::register_errors(m);
  xp_py::register_runtime(m);
  xp_py::register_array(m);
  xp_py::register_functions(m);
  xp_py::register_sorting(m);
  xp_py::register_numpy_extras(m);
  xp_py::register_interop(m);
  xp_py::register_kernels(m);
  xp_py::register_user_kernels(m);
  xp_py::register_linalg_fft(m);
  xp_py::register_signed(m);
}
