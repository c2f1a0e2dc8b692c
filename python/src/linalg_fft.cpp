// The `linalg` and `fft` extensions (include/xp/linalg.hpp, include/xp/fft.hpp) as xp._xp._linalg
// and xp._xp._fft, which python/xp/linalg.py and python/xp/fft.py re-export under the standard's
// names and signatures (the named tuples of eigh, qr, slogdet and svd are made there).
#include <cmath>
#include <string>

#include "common.hpp"

namespace xp_py {

namespace {

using nb::arg;

std::optional<std::vector<int>> opt_ints(nb::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  std::vector<int> v;
  if (nb::isinstance<nb::int_>(h)) {
    v.push_back(nb::cast<int>(h));
    return v;
  }
  try {
    for (nb::handle e : h) v.push_back(nb::cast<int>(e));
  } catch (const nb::cast_error&) {
    throw nb::type_error((std::string(what) + ": expected None, an int or a sequence of ints").c_str());
  }
  return v;
}

std::optional<std::vector<std::int64_t>> opt_sizes(nb::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  std::vector<std::int64_t> v;
  try {
    for (nb::handle e : h) v.push_back(nb::cast<std::int64_t>(e));
  } catch (const nb::cast_error&) {
    throw nb::type_error((std::string(what) + ": s must be None or a sequence of ints").c_str());
  }
  return v;
}

xp::fft::Norm to_norm(const std::string& s) {
  return xp::fft::norm_from_string(s);
}

// rtol: None, a Python number, or an array (a tolerance per matrix, broadcast with the batch).
template <class F>
xp::Array with_rtol(const xp::Array& x, nb::handle rtol, F f) {
  if (rtol.is_none()) return f(x, std::optional<double>());
  if (nb::isinstance<xp::Array>(rtol)) return f(x, nb::cast<const xp::Array&>(rtol));
  if (nb::isinstance<nb::bool_>(rtol)) throw nb::type_error("xp.linalg: rtol must be a real number or an array");
  return f(x, std::optional<double>(nb::cast<double>(rtol)));
}

}  // namespace

void register_linalg_fft(nb::module_& m) {
  nb::module_ l = m.def_submodule("_linalg", "xp.linalg's functions (import xp.linalg)");
  namespace la = xp::linalg;
  l.def(
      "cholesky", [](const xp::Array& x, Flag upper) { return la::cholesky(x, upper); }, arg("x"), nb::kw_only(),
      arg("upper") = false);
  l.def(
      "cross", [](const xp::Array& a, const xp::Array& b, int axis) { return la::cross(a, b, axis); }, arg("x1"),
      arg("x2"), nb::kw_only(), arg("axis") = -1);
  l.def(
      "det", [](const xp::Array& x) { return la::det(x); }, arg("x"));
  l.def(
      "diagonal", [](const xp::Array& x, std::int64_t offset) { return la::diagonal(x, offset); }, arg("x"),
      nb::kw_only(), arg("offset") = 0);
  l.def(
      "eigh",
      [](const xp::Array& x) {
        la::EighResult r = la::eigh(x);
        return nb::make_tuple(r.eigenvalues, r.eigenvectors);
      },
      arg("x"));
  l.def(
      "eigvalsh", [](const xp::Array& x) { return la::eigvalsh(x); }, arg("x"));
  l.def(
      "inv", [](const xp::Array& x) { return la::inv(x); }, arg("x"));
  l.def(
      "matrix_norm",
      [](const xp::Array& x, Flag keepdims, nb::handle ord) {
        if (nb::isinstance<nb::str>(ord)) return la::matrix_norm(x, keepdims, nb::cast<std::string>(ord));
        if (nb::isinstance<nb::bool_>(ord)) throw nb::type_error("xp.linalg.matrix_norm: ord must be a number or str");
        return la::matrix_norm(x, nb::cast<double>(ord), keepdims);
      },
      arg("x"), nb::kw_only(), arg("keepdims") = false, arg("ord") = "fro");
  l.def(
      "matrix_power", [](const xp::Array& x, std::int64_t n) { return la::matrix_power(x, n); }, arg("x"), arg("n"));
  l.def(
      "matrix_rank",
      [](const xp::Array& x, nb::handle rtol) {
        return with_rtol(x, rtol, [](const xp::Array& a, const auto& t) { return la::matrix_rank(a, t); });
      },
      arg("x"), nb::kw_only(), arg("rtol") = nb::none());
  l.def(
      "outer", [](const xp::Array& a, const xp::Array& b) { return la::outer(a, b); }, arg("x1"), arg("x2"));
  l.def(
      "pinv",
      [](const xp::Array& x, nb::handle rtol) {
        return with_rtol(x, rtol, [](const xp::Array& a, const auto& t) { return la::pinv(a, t); });
      },
      arg("x"), nb::kw_only(), arg("rtol") = nb::none());
  l.def(
      "qr",
      [](const xp::Array& x, const std::string& mode) {
        la::QRResult r = la::qr(x, mode);
        return nb::make_tuple(r.Q, r.R);
      },
      arg("x"), nb::kw_only(), arg("mode") = "reduced");
  l.def(
      "slogdet",
      [](const xp::Array& x) {
        la::SlogdetResult r = la::slogdet(x);
        return nb::make_tuple(r.sign, r.logabsdet);
      },
      arg("x"));
  l.def(
      "solve", [](const xp::Array& a, const xp::Array& b) { return la::solve(a, b); }, arg("x1"), arg("x2"));
  l.def(
      "svd",
      [](const xp::Array& x, Flag full_matrices) {
        la::SVDResult r = la::svd(x, full_matrices);
        return nb::make_tuple(r.U, r.S, r.Vh);
      },
      arg("x"), nb::kw_only(), arg("full_matrices") = true);
  l.def(
      "svdvals", [](const xp::Array& x) { return la::svdvals(x); }, arg("x"));
  l.def(
      "trace",
      [](const xp::Array& x, std::int64_t offset, nb::handle dtype) { return la::trace(x, offset, to_dtype(dtype)); },
      arg("x"), nb::kw_only(), arg("offset") = 0, arg("dtype") = nb::none());
  l.def(
      "vector_norm",
      [](const xp::Array& x, nb::handle axis, Flag keepdims, nb::handle ord) {
        if (nb::isinstance<nb::bool_>(ord) || nb::isinstance<nb::str>(ord))
          throw nb::type_error("xp.linalg.vector_norm: ord must be a number");
        return la::vector_norm(x, to_axes(axis), keepdims, nb::cast<double>(ord));
      },
      arg("x"), nb::kw_only(), arg("axis") = nb::none(), arg("keepdims") = false, arg("ord") = 2);

  nb::module_ f = m.def_submodule("_fft", "xp.fft's functions (import xp.fft)");
  namespace ft = xp::fft;
#define XP_FFT1_(name)                                                                           \
  f.def(                                                                                         \
      #name,                                                                                     \
      [](const xp::Array& x, std::optional<std::int64_t> n, int axis, const std::string& norm) { \
        return ft::name(x, n, axis, to_norm(norm));                                              \
      },                                                                                         \
      arg("x"), nb::kw_only(), arg("n") = nb::none(), arg("axis") = -1, arg("norm") = "backward");
  XP_FFT1_(fft)
  XP_FFT1_(ifft)
  XP_FFT1_(rfft)
  XP_FFT1_(irfft)
  XP_FFT1_(hfft)
  XP_FFT1_(ihfft)
#undef XP_FFT1_
#define XP_FFTN_(name)                                                                                     \
  f.def(                                                                                                   \
      #name,                                                                                               \
      [](const xp::Array& x, nb::handle s, nb::handle axes, const std::string& norm) {                     \
        return ft::name(x, opt_sizes(s, "xp.fft." #name), opt_ints(axes, "xp.fft." #name), to_norm(norm)); \
      },                                                                                                   \
      arg("x"), nb::kw_only(), arg("s") = nb::none(), arg("axes") = nb::none(), arg("norm") = "backward");
  XP_FFTN_(fftn)
  XP_FFTN_(ifftn)
  XP_FFTN_(rfftn)
  XP_FFTN_(irfftn)
#undef XP_FFTN_
#define XP_FREQ_(name)                                                    \
  f.def(                                                                  \
      #name,                                                              \
      [](std::int64_t n, double d, nb::handle dtype, nb::handle device) { \
        return ft::name(n, d, to_dtype(dtype), to_device(device));        \
      },                                                                  \
      arg("n"), nb::kw_only(), arg("d") = 1.0, arg("dtype") = nb::none(), arg("device") = nb::none());
  XP_FREQ_(fftfreq)
  XP_FREQ_(rfftfreq)
#undef XP_FREQ_
  f.def(
      "fftshift",
      [](const xp::Array& x, nb::handle axes) { return ft::fftshift(x, opt_ints(axes, "xp.fft.fftshift")); }, arg("x"),
      nb::kw_only(), arg("axes") = nb::none());
  f.def(
      "ifftshift",
      [](const xp::Array& x, nb::handle axes) { return ft::ifftshift(x, opt_ints(axes, "xp.fft.ifftshift")); },
      arg("x"), nb::kw_only(), arg("axes") = nb::none());
}

}  // namespace xp_py
