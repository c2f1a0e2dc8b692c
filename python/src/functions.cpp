// The array namespace's functions, under their Array API names and keyword arguments: creation,
// elementwise, reductions, manipulation, linear algebra, files.
#include <cmath>
#include <cstdint>

#include "common.hpp"

namespace xp_py {

namespace {

// A function's result: the out= object itself when one was given (NumPy returns `out`, so that
// `r is out`), else the new array.
nb::typed<nb::object, xp::Array> result_of(xp::Array r, nb::handle out) {
  if (out.is_none()) return nb::typed<nb::object, xp::Array>(nb::cast(std::move(r)));
  return nb::typed<nb::object, xp::Array>(nb::borrow(out));
}

// A path: a str or an os.PathLike (pathlib.Path), as NumPy's save and load take.
std::string path_of(nb::handle path) {
  const nb::object p = checked(PyOS_FSPath(path.ptr()));
  if (!nb::isinstance<nb::str>(p)) throw nb::type_error("xp: a path must be a str or an os.PathLike of str");
  return nb::cast<std::string>(p);
}

xp::Out to_out(nb::handle out) {
  if (out.is_none()) return {};
  if (!nb::isinstance<xp::Array>(out)) throw nb::type_error("xp: out= takes an xp array");
  return xp::Out(nb::cast<xp::Array&>(out));
}

std::vector<xp::Array> to_arrays(nb::handle seq) {
  std::vector<xp::Array> v;
  for (nb::handle h : seq) {
    if (nb::isinstance<xp::Array>(h))
      v.push_back(nb::cast<xp::Array&>(h));
    else
      v.push_back(asarray(h, std::nullopt, std::nullopt, std::nullopt));
  }
  return v;
}

const xp::Array& arr(nb::handle h) {
  if (!nb::isinstance<xp::Array>(h))
    throw nb::type_error(("xp: expected an xp array, got " + nb::cast<std::string>(nb::repr(h.type()))).c_str());
  return nb::cast<xp::Array&>(h);
}

std::optional<int> opt_axis(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<int>(h);
}

// An int or a sequence of ints (moveaxis, roll).
template <class T>
std::vector<T> int_or_ints(nb::handle h, const char* what) {
  // An integer is a Python int or anything with __index__ that is not a sequence (numpy.int64).
  const auto one = [what](nb::handle e) {
    if (!(PyLong_Check(e.ptr()) || PyIndex_Check(e.ptr())))
      throw nb::type_error((std::string("xp.") + what + ": expected an int or a tuple of ints").c_str());
    return nb::cast<T>(checked(PyNumber_Index(e.ptr())));
  };
  if (PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !PySequence_Check(h.ptr()))) return {one(h)};
  if (!nb::hasattr(h, "__iter__"))
    throw nb::type_error((std::string("xp.") + what + ": expected an int or a tuple of ints").c_str());
  std::vector<T> v;
  try {
    for (nb::handle e : h) v.push_back(one(e));
  } catch (const nb::cast_error&) {
    throw nb::type_error((std::string("xp.") + what + ": expected an int or a tuple of ints").c_str());
  }
  return v;
}

// A number for full, full_like and arange: a Python number, or a NumPy scalar's value (its dtype in
// `dtype` when one is asked for, as NumPy makes the scalar an array of its dtype).
bool to_number(nb::handle h, xp::Scalar& s, std::optional<xp::DType>* dtype = nullptr) {
  if (to_scalar(h, s)) return true;
  if (const auto ns = numpy_scalar(h)) {
    s = ns->value;
    if (dtype != nullptr) *dtype = ns->dtype;
    return true;
  }
  return false;
}

nb::list to_list(const std::vector<xp::Array>& v) {
  nb::list l;
  for (const xp::Array& a : v) l.append(nb::cast(a));
  return l;
}

}  // namespace

void register_functions(nb::module_& m) {
  using nb::arg;
  const auto none = nb::none();

  // ---- creation ----
#define XP_CREATE_(name)                                                                  \
  m.def(                                                                                  \
      #name,                                                                              \
      [](nb::handle shape, nb::handle dtype, nb::handle device) {                         \
        const auto t = to_dtype(dtype);                                                   \
        return xp::name(to_shape(shape), t ? *t : xp::DType::float64, to_device(device)); \
      },                                                                                  \
      arg("shape"), nb::kw_only(), arg("dtype") = none, arg("device") = none);
  XP_CREATE_(zeros)
  XP_CREATE_(ones)
  XP_CREATE_(empty)
#undef XP_CREATE_
  m.def(
      "full",
      [](nb::handle shape, nb::handle value, nb::handle dtype, nb::handle device) {
        xp::Scalar s(0);
        std::optional<xp::DType> own;  // a NumPy scalar's dtype: full(3, numpy.float32(1)) is float32
        if (to_number(value, s, &own)) {
          const auto t = to_dtype(dtype);
          return xp::full(to_shape(shape), s, t ? t : own, to_device(device));
        }
        if (nb::isinstance<xp::Array>(value)) {
          const xp::Array& v = nb::cast<xp::Array&>(value);
          const auto t = to_dtype(dtype);
          xp::Array out = xp::empty(to_shape(shape), t ? *t : v.dtype(), to_device(device));
          xp::copyto(out, v);
          return out;
        }
        throw nb::type_error("xp.full: fill_value must be a bool, int or float");
      },
      arg("shape"), arg("fill_value"), nb::kw_only(), arg("dtype") = none, arg("device") = none);
#define XP_LIKE_(name)                                              \
  m.def(                                                            \
      #name,                                                        \
      [](const xp::Array& x, nb::handle dtype, nb::handle device) { \
        const auto d = to_device(device);                           \
        xp::Array r = xp::name(x, to_dtype(dtype));                 \
        return d && *d != r.device() ? r.to_device(*d) : r;         \
      },                                                            \
      arg("x"), nb::kw_only(), arg("dtype") = none, arg("device") = none);
  XP_LIKE_(zeros_like)
  XP_LIKE_(ones_like)
  XP_LIKE_(empty_like)
#undef XP_LIKE_
  m.def(
      "full_like",
      [](const xp::Array& x, nb::handle value, nb::handle dtype, nb::handle device) {
        xp::Scalar s(0);
        if (!to_number(value, s)) throw nb::type_error("xp.full_like: fill_value must be a bool, int or float");
        const auto d = to_device(device);
        xp::Array r = xp::full_like(x, s, to_dtype(dtype));
        return d && *d != r.device() ? r.to_device(*d) : r;
      },
      arg("x"), arg("fill_value"), nb::kw_only(), arg("dtype") = none, arg("device") = none);
  m.def(
      "arange",
      [](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype, nb::handle device) {
        xp::Scalar a(0), b(0), c(1);
        if (!to_number(start, a) || (!stop.is_none() && !to_number(stop, b)) || !to_number(step, c))
          throw nb::type_error("xp.arange: start, stop and step must be ints or floats");
        if (stop.is_none()) {
          b = a;
          a = xp::Scalar(0);
        }
        return xp::arange(a, b, c, to_dtype(dtype), to_device(device));
      },
      arg("start"), arg("stop") = none, arg("step") = 1, nb::kw_only(), arg("dtype") = none, arg("device") = none);
  m.def(
      "linspace",
      [](double start, double stop, std::int64_t num, nb::handle dtype, nb::handle device, Flag endpoint) {
        const auto t = to_dtype(dtype);
        return xp::linspace(start, stop, num, endpoint, t ? *t : xp::DType::float64, to_device(device));
      },
      arg("start"), arg("stop"), arg("num"), nb::kw_only(), arg("dtype") = none, arg("device") = none,
      arg("endpoint") = true);
  m.def(
      "eye",
      [](std::int64_t n, std::optional<std::int64_t> m_, nb::int_ k_obj, nb::handle dtype, nb::handle device,
         std::optional<std::int64_t> numpy_m) {
        if (numpy_m) {  // NumPy's name for the columns
          if (m_) throw nb::type_error("xp.eye: n_cols and M name the same argument");
          m_ = numpy_m;
        }
        const auto t = to_dtype(dtype);
        // k is any Python int: a diagonal past either edge gives zeros, so one beyond int64 is
        // the same as one at the edge of int64's range.
        std::int64_t k = 0;
        if (!nb::try_cast<std::int64_t>(k_obj, k)) k = k_obj > nb::int_(0) ? INT64_MAX : INT64_MIN;
        return xp::eye(n, m_, k, t ? *t : xp::DType::float64, to_device(device));
      },
      arg("n_rows"), arg("n_cols") = none, nb::kw_only(), arg("k") = 0, arg("dtype") = none, arg("device") = none,
      arg("M") = none);

  // ---- elementwise ----
#define XP_UNARY_(name, pyname)                                                                                      \
  m.def(                                                                                                             \
      pyname, [](nb::handle x, nb::handle out) { return result_of(xp::name(*Arg(x), to_out(out)), out); }, arg("x"), \
      nb::kw_only(), arg("out") = none);
#define XP_BINARY_(name, pyname)                                                         \
  m.def(                                                                                 \
      pyname,                                                                            \
      [](nb::handle x1, nb::handle x2, nb::handle out) {                                 \
        const Arg a(x1, {x2}), b(x2, {x1});                                              \
        if (!(*a).is_array() && !(*b).is_array())                                        \
          throw nb::type_error("xp." pyname ": at least one argument must be an array"); \
        return result_of(xp::name(*a, *b, to_out(out)), out);                            \
      },                                                                                 \
      arg("x1"), arg("x2"), nb::kw_only(), arg("out") = none);
  XP_UNARY_(real, "real")
  XP_UNARY_(imag, "imag")
  XP_UNARY_(conj, "conj")
  XP_UNARY_(negative, "negative")
  XP_UNARY_(positive, "positive")
  XP_UNARY_(abs, "abs")
  XP_UNARY_(sign, "sign")
  XP_UNARY_(square, "square")
  XP_UNARY_(sqrt, "sqrt")
  XP_UNARY_(exp, "exp")
  XP_UNARY_(expm1, "expm1")
  XP_UNARY_(log, "log")
  XP_UNARY_(log1p, "log1p")
  XP_UNARY_(log2, "log2")
  XP_UNARY_(log10, "log10")
  XP_UNARY_(sin, "sin")
  XP_UNARY_(cos, "cos")
  XP_UNARY_(tan, "tan")
  XP_UNARY_(asin, "asin")
  XP_UNARY_(acos, "acos")
  XP_UNARY_(atan, "atan")
  XP_UNARY_(sinh, "sinh")
  XP_UNARY_(cosh, "cosh")
  XP_UNARY_(tanh, "tanh")
  XP_UNARY_(acosh, "acosh")
  XP_UNARY_(asinh, "asinh")
  XP_UNARY_(atanh, "atanh")
  XP_UNARY_(signbit, "signbit")
  XP_UNARY_(reciprocal, "reciprocal")
  XP_UNARY_(floor, "floor")
  XP_UNARY_(ceil, "ceil")
  XP_UNARY_(round, "round")
  XP_UNARY_(trunc, "trunc")
  XP_UNARY_(isnan, "isnan")
  XP_UNARY_(isinf, "isinf")
  XP_UNARY_(isfinite, "isfinite")
  XP_UNARY_(logical_not, "logical_not")
  XP_UNARY_(bitwise_invert, "bitwise_invert")
  XP_BINARY_(add, "add")
  XP_BINARY_(subtract, "subtract")
  XP_BINARY_(multiply, "multiply")
  XP_BINARY_(divide, "divide")
  XP_BINARY_(floor_divide, "floor_divide")
  XP_BINARY_(remainder, "remainder")
  XP_BINARY_(pow, "pow")
  XP_BINARY_(atan2, "atan2")
  XP_BINARY_(hypot, "hypot")
  XP_BINARY_(copysign, "copysign")
  XP_BINARY_(nextafter, "nextafter")
  XP_BINARY_(logaddexp, "logaddexp")
  XP_BINARY_(minimum, "minimum")
  XP_BINARY_(maximum, "maximum")
  XP_BINARY_(equal, "equal")
  XP_BINARY_(not_equal, "not_equal")
  XP_BINARY_(less, "less")
  XP_BINARY_(less_equal, "less_equal")
  XP_BINARY_(greater, "greater")
  XP_BINARY_(greater_equal, "greater_equal")
  XP_BINARY_(logical_and, "logical_and")
  XP_BINARY_(logical_or, "logical_or")
  XP_BINARY_(logical_xor, "logical_xor")
  XP_BINARY_(bitwise_and, "bitwise_and")
  XP_BINARY_(bitwise_or, "bitwise_or")
  XP_BINARY_(bitwise_xor, "bitwise_xor")
  XP_BINARY_(bitwise_left_shift, "bitwise_left_shift")
  XP_BINARY_(bitwise_right_shift, "bitwise_right_shift")
#undef XP_UNARY_
#undef XP_BINARY_
  m.def(
      "clip",
      [](const xp::Array& x, nb::handle lo, nb::handle hi, nb::handle out) {
        // A Python int beyond 64 bits on its own side of an integer array (a min below -2^63, a
        // max at 2^64 or more) is dropped, as NumPy drops a bound past the dtype's limit.
        const xp::DTypeKind xk = xp::kind(x.dtype());
        if (xk == xp::DTypeKind::signed_integer || xk == xp::DTypeKind::unsigned_integer) {
          if (huge_int_sign(lo) < 0) lo = nb::none();
          if (huge_int_sign(hi) > 0) hi = nb::none();
        }
        if (lo.is_none() && hi.is_none()) {
          if (!out.is_none()) xp::copyto(arr(out), x);
          return result_of(out.is_none() ? x.copy() : arr(out), out);
        }
        // A missing bound is one that never applies: +-inf for floats; false and true for bool
        // beside a bool bound; else a bound at or past the dtype's limit, which clip drops for an
        // integer array and which bounds nothing in the int64 or float result a bool array takes
        // from an integer or float bound. Only uint64 takes UINT64_MAX: beside a signed bound it
        // would not fit the int64 result.
        const xp::DTypeKind k = xp::kind(x.dtype());
        const nb::handle given = lo.is_none() ? hi : lo;
        const auto ns = numpy_scalar(given);
        const bool bool_bound = PyBool_Check(given.ptr()) || (ns && ns->dtype == xp::DType::bool_) ||
                                (nb::isinstance<xp::Array>(given) && arr(given).dtype() == xp::DType::bool_);
        const bool is_float = k == xp::DTypeKind::floating, is_bool = k == xp::DTypeKind::boolean && bool_bound;
        const xp::Scalar low = is_float  ? xp::Scalar(-INFINITY)
                               : is_bool ? xp::Scalar(false)
                                         : xp::Scalar(static_cast<std::int64_t>(INT64_MIN));
        const xp::Scalar high = is_float                         ? xp::Scalar(INFINITY)
                                : is_bool                        ? xp::Scalar(true)
                                : x.dtype() == xp::DType::uint64 ? xp::Scalar(static_cast<std::uint64_t>(UINT64_MAX))
                                                                 : xp::Scalar(static_cast<std::int64_t>(INT64_MAX));
        const Arg a(lo.is_none() ? nb::cast(x) : nb::borrow(lo), {nb::cast(x)}),
            b(hi.is_none() ? nb::cast(x) : nb::borrow(hi), {nb::cast(x)});
        const xp::Operand l = lo.is_none() ? xp::Operand(low) : *a;
        const xp::Operand h = hi.is_none() ? xp::Operand(high) : *b;
        return result_of(xp::clip(x, l, h, to_out(out)), out);
      },
      arg("x"), arg("min") = none, arg("max") = none, nb::kw_only(), arg("out") = none);
  m.def(
      "where",
      [](nb::handle c, nb::handle x1, nb::handle x2, nb::handle out) -> nb::object {
        if (x1.is_none() && x2.is_none() && out.is_none()) {  // where(condition): nonzero(condition)
          const Arg a(c);
          if (!(*a).is_array()) throw nb::type_error("xp: where(condition) takes an array");
          nb::list l;
          for (const xp::Array& r : xp::where((*a).array())) l.append(nb::cast(r));
          return nb::tuple(l);
        }
        if (x1.is_none() || x2.is_none()) throw nb::type_error("xp: where takes one argument or three");
        // The other value's dtype decides what a Python int beyond 64 bits becomes (to_operand).
        const Arg a(c, {x1, x2}), b(x1, {x2, c}), d(x2, {x1, c});
        return result_of(xp::where(*a, *b, *d, to_out(out)), out);
      },
      arg("condition"), arg("x1") = none, arg("x2") = none, nb::kw_only(), arg("out") = none);
  m.def(
      "fma",
      [](nb::handle x, nb::handle y, nb::handle z, nb::handle out) {
        const Arg a(x, {y, z}), b(y, {x, z}), c(z, {x, y});
        return result_of(xp::fma(*a, *b, *c, to_out(out)), out);
      },
      arg("x"), arg("y"), arg("z"), nb::kw_only(), arg("out") = none);

  // ---- reductions ----
#define XP_RED_DTYPE_(name)                                                      \
  m.def(                                                                         \
      #name,                                                                     \
      [](const xp::Array& x, nb::handle axis, nb::handle dtype, Flag keepdims) { \
        return xp::name(x, to_axes(axis), keepdims, to_dtype(dtype));            \
      },                                                                         \
      arg("x"), nb::kw_only(), arg("axis") = none, arg("dtype") = none, arg("keepdims") = false);
  XP_RED_DTYPE_(sum)
  XP_RED_DTYPE_(prod)
#undef XP_RED_DTYPE_
#define XP_RED_(name)                                                                                                 \
  m.def(                                                                                                              \
      #name, [](const xp::Array& x, nb::handle axis, Flag keepdims) { return xp::name(x, to_axes(axis), keepdims); }, \
      arg("x"), nb::kw_only(), arg("axis") = none, arg("keepdims") = false);
  XP_RED_(mean)
  XP_RED_(min)
  XP_RED_(max)
  XP_RED_(any)
  XP_RED_(all)
#undef XP_RED_
#define XP_VAR_(name)                                                             \
  m.def(                                                                          \
      #name,                                                                      \
      [](const xp::Array& x, nb::handle axis, double correction, Flag keepdims) { \
        return xp::name(x, to_axes(axis), correction, keepdims);                  \
      },                                                                          \
      arg("x"), nb::kw_only(), arg("axis") = none, arg("correction") = 0.0, arg("keepdims") = false);
  XP_VAR_(var)
  XP_VAR_(std)
#undef XP_VAR_
  m.def(
      "argmin",
      [](const xp::Array& x, nb::handle axis, Flag keepdims) { return xp::argmin(x, opt_axis(axis), keepdims); },
      arg("x"), nb::kw_only(), arg("axis") = none, arg("keepdims") = false);
  m.def(
      "argmax",
      [](const xp::Array& x, nb::handle axis, Flag keepdims) { return xp::argmax(x, opt_axis(axis), keepdims); },
      arg("x"), nb::kw_only(), arg("axis") = none, arg("keepdims") = false);
  m.def(
      "cumulative_sum",
      [](const xp::Array& x, nb::handle axis, nb::handle dtype, Flag include_initial) {
        return xp::cumulative_sum(x, opt_axis(axis), to_dtype(dtype), include_initial);
      },
      arg("x"), nb::kw_only(), arg("axis") = none, arg("dtype") = none, arg("include_initial") = false);
  m.def(
      "cumulative_prod",
      [](const xp::Array& x, nb::handle axis, nb::handle dtype, Flag include_initial) {
        return xp::cumulative_prod(x, opt_axis(axis), to_dtype(dtype), include_initial);
      },
      arg("x"), nb::kw_only(), arg("axis") = none, arg("dtype") = none, arg("include_initial") = false);
  m.def(
      "diff",
      [](const xp::Array& x, int axis, int n, nb::handle prepend, nb::handle append) {
        std::optional<Arg> p, a;
        const nb::object self = nb::cast(x);
        if (!prepend.is_none()) p.emplace(prepend, std::initializer_list<nb::handle>{self});
        if (!append.is_none()) a.emplace(append, std::initializer_list<nb::handle>{self});
        return xp::diff(x, axis, n, p ? std::optional<xp::Operand>(**p) : std::nullopt,
                        a ? std::optional<xp::Operand>(**a) : std::nullopt);
      },
      arg("x"), nb::kw_only(), arg("axis") = -1, arg("n") = 1, arg("prepend") = none, arg("append") = none);

  // ---- creation from other arrays ----
  m.def(
      "meshgrid",
      [](nb::args arrays, const std::string& indexing) { return to_list(xp::meshgrid(to_arrays(arrays), indexing)); },
      arg("arrays"), arg("indexing") = "xy");
  // k is any Python int, as eye's: a diagonal past either edge keeps all or nothing, as one at the
  // edge of int64's range does.
  // NumPy's integer scalars too (operator.index); a float is a TypeError.
  auto any_k = [](nb::handle h) {
    const nb::int_ k = nb::borrow<nb::int_>(checked(PyNumber_Index(h.ptr())));
    std::int64_t v = 0;
    if (!nb::try_cast<std::int64_t>(k, v)) v = k > nb::int_(0) ? INT64_MAX : INT64_MIN;
    return v;
  };
  m.def(
      "tril", [any_k](const xp::Array& x, nb::handle k) { return xp::tril(x, any_k(k)); }, arg("x"), nb::kw_only(),
      arg("k") = 0);
  m.def(
      "triu", [any_k](const xp::Array& x, nb::handle k) { return xp::triu(x, any_k(k)); }, arg("x"), nb::kw_only(),
      arg("k") = 0);

  // ---- manipulation ----
  m.def("broadcast_arrays", [](nb::args arrays) { return to_list(xp::broadcast_arrays(to_arrays(arrays))); });
  m.def(
      "moveaxis",
      [](const xp::Array& x, nb::handle source, nb::handle destination) {
        return xp::moveaxis(x, int_or_ints<int>(source, "moveaxis"), int_or_ints<int>(destination, "moveaxis"));
      },
      arg("x"), arg("source"), arg("destination"));
  m.def(
      "repeat",
      [](const xp::Array& x, nb::handle repeats, nb::handle axis) {
        if (nb::isinstance<xp::Array>(repeats)) return xp::repeat(x, arr(repeats), opt_axis(axis));
        if (PyBool_Check(repeats.ptr()) || !(PyLong_Check(repeats.ptr()) || PyIndex_Check(repeats.ptr())))
          throw nb::type_error("xp.repeat: repeats must be an int or an integer array");
        return xp::repeat(x, nb::cast<std::int64_t>(checked(PyNumber_Index(repeats.ptr()))), opt_axis(axis));
      },
      arg("x"), arg("repeats"), nb::kw_only(), arg("axis") = none);
  m.def(
      "roll",
      [](const xp::Array& x, nb::handle shift, nb::handle axis) {
        if (axis.is_none()) {
          if (!(PyLong_Check(shift.ptr()) || (PyIndex_Check(shift.ptr()) && !PySequence_Check(shift.ptr())))) {
            // Several shifts without axes roll the flattened array by their sum, as NumPy.
            std::int64_t total = 0;
            for (std::int64_t s : int_or_ints<std::int64_t>(shift, "roll")) total += s;
            return xp::roll(x, total);
          }
          return xp::roll(x, int_or_ints<std::int64_t>(shift, "roll")[0]);
        }
        return xp::roll(x, int_or_ints<std::int64_t>(shift, "roll"), int_or_ints<int>(axis, "roll"));
      },
      arg("x"), arg("shift"), nb::kw_only(), arg("axis") = none);
  m.def(
      "tile",
      [](const xp::Array& x, nb::handle repetitions) {
        return xp::tile(x, int_or_ints<std::int64_t>(repetitions, "tile"));
      },
      arg("x"), arg("repetitions"));
  m.def(
      "unstack",
      [](const xp::Array& x, int axis) {
        const std::vector<xp::Array> parts = xp::unstack(x, axis);
        nb::list l = to_list(parts);
        return nb::tuple(l);
      },
      arg("x"), nb::kw_only(), arg("axis") = 0);
  m.def(
      "reshape",
      [](const xp::Array& x, nb::handle shape, nb::handle copy) {
        xp::Array r = xp::reshape(x, to_shape(shape));
        if (!copy.is_none() && nb::cast<bool>(copy)) r = r.copy();
        return r;
      },
      arg("x"), arg("shape"), nb::kw_only(), arg("copy") = none);
  m.def(
      "permute_dims",
      // One int is the one axis of a 1-d array, as NumPy takes it.
      [](const xp::Array& x, nb::handle axes) { return xp::permute_dims(x, int_or_ints<int>(axes, "permute_dims")); },
      arg("x"), arg("axes"));
  m.def("matrix_transpose", &xp::matrix_transpose, arg("x"));
  m.def(
      "expand_dims",
      [](const xp::Array& x, int axis) {
        // The standard asks IndexError for an axis out of range (NumPy's AxisError is both).
        if (axis < -x.ndim() - 1 || axis > x.ndim())
          throw xp::IndexError("expand_dims: axis " + std::to_string(axis) + " is out of bounds for a result of " +
                               std::to_string(x.ndim() + 1) + " dimensions");
        return xp::expand_dims(x, axis);
      },
      arg("x"), arg("axis") = 0);  // by position too, as the standard (2024.12) and NumPy take it
  m.def(
      "squeeze",
      [](const xp::Array& x, nb::handle axis) {
        if (!axis.is_none()) return xp::squeeze(x, to_axes(axis));
        std::vector<int> ones;  // no axis: every axis of length 1, as NumPy
        for (int k = 0; k < x.ndim(); ++k)
          if (x.shape(k) == 1) ones.push_back(k);
        return xp::squeeze(x, xp::Axes(std::move(ones)));
      },
      arg("x"), arg("axis") = none);
  m.def(
      "broadcast_to", [](const xp::Array& x, nb::handle shape) { return xp::broadcast_to(x, to_shape(shape)); },
      arg("x"), arg("shape"));
  m.def(
      "flip", [](const xp::Array& x, nb::handle axis) { return xp::flip(x, to_axes(axis)); }, arg("x"), nb::kw_only(),
      arg("axis") = none);
  m.def(
      "concat",
      [](nb::handle arrays, nb::handle axis) {
        std::vector<xp::Array> v = to_arrays(arrays);
        if (axis.is_none()) {
          for (auto& a : v) a = a.ravel();
          return xp::concat(v, 0);
        }
        return xp::concat(v, nb::cast<int>(axis));
      },
      arg("arrays"), nb::kw_only(), arg("axis").none() = 0);
  m.def(
      "stack", [](nb::handle arrays, int axis) { return xp::stack(to_arrays(arrays), axis); }, arg("arrays"),
      nb::kw_only(), arg("axis") = 0);
  m.def(
      "take",
      [](const xp::Array& x, nb::handle indices, nb::handle axis) {
        return xp::take(x, array_like(indices, "take"), opt_axis(axis));
      },
      arg("x"), arg("indices"), nb::kw_only(), arg("axis") = none);
  m.def(
      "astype",
      [](const xp::Array& x, nb::handle dtype, Flag copy, nb::handle device) {
        const xp::DType t = *to_dtype(dtype);
        xp::Array r = (!copy && t == x.dtype()) ? x : x.astype(t);
        const auto d = to_device(device);
        return d && *d != r.device() ? r.to_device(*d) : r;
      },
      arg("x"), arg("dtype"), nb::kw_only(), arg("copy") = true, arg("device") = none);
  // The dtype functions of the core (python/xp/_namespace.py wraps them in the standard's objects).
  m.def("_result_type", [](nb::args args) {
    std::vector<xp::TypeArg> v;
    for (nb::handle h : args) {
      xp::Scalar s(0);
      if (nb::isinstance<PyDType>(h))
        v.emplace_back(nb::cast<PyDType&>(h).dtype);
      else if (nb::isinstance<xp::Array>(h))
        v.emplace_back(nb::cast<xp::Array&>(h));
      else if (to_scalar(h, s))
        v.emplace_back(s);
      else
        throw nb::type_error("xp.result_type: give arrays, dtypes and at most Python scalars beside them");
    }
    return dtype_object(xp::result_type(v));
  });
  m.def("_can_cast", [](const PyDType& from, const PyDType& to) { return xp::can_cast(from.dtype, to.dtype); });
  m.def("_finfo", [](const PyDType& t) {
    const xp::FInfo f = xp::finfo(t.dtype);
    return nb::make_tuple(f.bits, f.eps, f.max, f.min, f.smallest_normal);
  });
  m.def("_iinfo", [](const PyDType& t) {
    const xp::IInfo i = xp::iinfo(t.dtype);
    return nb::make_tuple(i.bits, i.max, i.min);
  });
  m.def("_isdtype", [](const PyDType& t, const std::string& kind) { return xp::isdtype(t.dtype, kind); });
  m.def(
      "copyto", [](const xp::Array& dst, nb::handle src) { xp::copyto(dst, *Arg(src, {nb::cast(dst)})); }, arg("dst"),
      arg("src"));
  m.def("eval", [](nb::args arrays) {
    for (nb::handle h : arrays) nb::cast<xp::Array&>(h).eval();
  });

  // ---- linear algebra ----
  m.def(
      "matmul", [](const xp::Array& a, const xp::Array& b) { return xp::matmul(a, b); }, arg("x1"), arg("x2"));
  m.def(
      "vecdot", [](const xp::Array& a, const xp::Array& b, int axis) { return xp::vecdot(a, b, axis); }, arg("x1"),
      arg("x2"), nb::kw_only(), arg("axis") = -1);
  m.def(
      "tensordot",
      [](const xp::Array& a, const xp::Array& b, nb::handle axes) {
        if (nb::isinstance<nb::int_>(axes)) return xp::tensordot(a, b, nb::cast<int>(axes));
        std::vector<std::vector<int>> pair;
        for (nb::handle h : axes) pair.push_back(int_or_ints<int>(h, "tensordot"));
        if (pair.size() != 2) throw nb::type_error("xp.tensordot: axes must be an int or a pair of sequences of ints");
        return xp::tensordot(a, b, pair[0], pair[1]);
      },
      arg("x1"), arg("x2"), nb::kw_only(), arg("axes") = 2);

  // ---- files ----
  m.def(
      "load", [](nb::handle path, nb::handle device) { return xp::load(path_of(path), to_device(device)); },
      arg("path"), nb::kw_only(), arg("device") = none);
  m.def(
      "save",
      [](nb::handle path, const xp::Array& a) {
        std::string p = path_of(path);
        if (p.size() < 4 || p.compare(p.size() - 4, 4, ".npy") != 0) p += ".npy";  // as numpy.save
        xp::save(p, a);
      },
      arg("path"), arg("x"));
}

}  // namespace xp_py
