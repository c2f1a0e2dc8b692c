// NumPy functions beyond the Array API (xp/numpy.hpp) under NumPy's names and keyword arguments:
// isclose, allclose, array_equal, the nan* reductions, diag, ravel, median, quantile, percentile,
// partition, argpartition, bincount, histogram, histogram_bin_edges, einsum, pad.
#include <xp/numpy.hpp>

#include "common.hpp"

namespace xp_py {

namespace {

xp::Array array_arg(nb::handle h, const char* what) {
  return array_like(h, what);
}

std::optional<int> opt_axis(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<int>(h);
}

// kth: an int or a sequence of ints.
std::vector<std::int64_t> to_kth(nb::handle h, const char* what) {
  if (nb::isinstance<nb::int_>(h)) return {nb::cast<std::int64_t>(h)};
  std::vector<std::int64_t> v;
  try {
    for (nb::handle e : h) v.push_back(nb::cast<std::int64_t>(e));
  } catch (const nb::cast_error&) {
    throw nb::type_error((std::string("xp.") + what + ": kth must be an int or a sequence of ints").c_str());
  }
  return v;
}

// pad_width as np.pad takes it: an int, (n,), (before, after), or one (before, after) per axis.
std::vector<std::pair<std::int64_t, std::int64_t>> to_pad_width(nb::handle given, int ndim) {
  auto fail = []() -> std::vector<std::pair<std::int64_t, std::int64_t>> {
    throw nb::type_error("xp.pad: pad_width must be an int, (before, after) or a sequence of (before, after) pairs");
  };
  // An integer: a Python int or anything with __index__ that is not a sequence (numpy.int64).
  const auto is_int = [](nb::handle e) {
    return PyLong_Check(e.ptr()) || (PyIndex_Check(e.ptr()) && !PySequence_Check(e.ptr()));
  };
  const auto to_int = [](nb::handle e) { return nb::cast<std::int64_t>(checked(PyNumber_Index(e.ptr()))); };
  // An array (xp's or NumPy's) as NumPy takes one: its nested lists.
  nb::object h = nb::borrow(given);
  if (nb::isinstance<xp::Array>(h) || is_numpy_array(h)) h = h.attr("tolist")();
  if (is_int(h)) {
    const auto n = to_int(h);
    return {{n, n}};
  }
  if (!nb::isinstance<nb::sequence>(h)) return fail();
  // Owned references: a sequence may make its items as it is iterated.
  std::vector<nb::object> items;
  for (nb::handle e : h) items.push_back(nb::borrow(e));
  bool all_ints = true;
  for (const nb::object& e : items) all_ints = all_ints && is_int(e);
  if (all_ints) {
    if (items.size() == 1) {
      const auto n = to_int(items[0]);
      return {{n, n}};
    }
    if (items.size() == 2) return {{to_int(items[0]), to_int(items[1])}};
    if (static_cast<int>(items.size()) != ndim) return fail();
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const nb::object& e : items) {
    if (is_int(e)) {
      const auto n = to_int(e);
      out.emplace_back(n, n);
      continue;
    }
    std::vector<std::int64_t> pair;
    try {
      for (nb::handle x : e) pair.push_back(to_int(x));
    } catch (const nb::cast_error&) {
      return fail();
    } catch (const nb::python_error&) {
      return fail();
    }
    if (pair.size() == 1) pair.push_back(pair[0]);
    if (pair.size() != 2) return fail();
    out.emplace_back(pair[0], pair[1]);
  }
  return out;
}

// One sublist of np.einsum's interleaved form: ints 0..51 ('A'..'Z', 'a'..'z') and Ellipsis.
std::string sublist_text(nb::handle h) {
  std::string s;
  try {
    for (nb::handle e : h) {
      if (e.is(nb::ellipsis())) {
        s += "...";
        continue;
      }
      const auto i = nb::cast<std::int64_t>(e);
      if (i < 0 || i >= 52)
        throw nb::value_error(
            ("xp.einsum: subscript " + std::to_string(i) + " in a sublist is not in [0, 52)").c_str());
      s += static_cast<char>(i < 26 ? 'A' + i : 'a' + (i - 26));
    }
  } catch (const nb::cast_error&) {
    throw nb::type_error("xp.einsum: a sublist holds ints in [0, 52) and Ellipsis");
  }
  return s;
}

}  // namespace

void register_numpy_extras(nb::module_& m) {
  using nb::arg;
  const auto none = nb::none();

  m.def(
      "isclose",
      [](nb::handle a, nb::handle b, double rtol, double atol, Flag equal_nan) {
        const Arg x(a, {b}), y(b, {a});
        return xp::isclose(*x, *y, rtol, atol, equal_nan);
      },
      arg("a"), arg("b"), arg("rtol") = 1e-05, arg("atol") = 1e-08, arg("equal_nan") = false);
  m.def(
      "allclose",
      [](nb::handle a, nb::handle b, double rtol, double atol, Flag equal_nan) {
        const Arg x(a, {b}), y(b, {a});
        return xp::allclose(*x, *y, rtol, atol, equal_nan);
      },
      arg("a"), arg("b"), arg("rtol") = 1e-05, arg("atol") = 1e-08, arg("equal_nan") = false);
  m.def(
      "array_equal",
      [](nb::handle a1, nb::handle a2, Flag equal_nan) {
        const Arg x(a1, {a2}), y(a2, {a1});
        const xp::Array l = x.keep.valid() ? x.keep : array_arg(a1, "array_equal");
        const xp::Array r = y.keep.valid() ? y.keep : array_arg(a2, "array_equal");
        return xp::array_equal(l, r, equal_nan);
      },
      arg("a1"), arg("a2"), arg("equal_nan") = false);

#define XP_NAN_REDUCE_(name)                                           \
  m.def(                                                               \
      #name,                                                           \
      [](nb::handle a, nb::handle axis, Flag keepdims) {               \
        return xp::name(array_arg(a, #name), to_axes(axis), keepdims); \
      },                                                               \
      arg("a"), arg("axis") = none, nb::kw_only(), arg("keepdims") = false);
  XP_NAN_REDUCE_(nansum)
  XP_NAN_REDUCE_(nanmean)
  XP_NAN_REDUCE_(nanmax)
  XP_NAN_REDUCE_(nanmin)
#undef XP_NAN_REDUCE_
  m.def(
      "nanargmax",
      [](nb::handle a, nb::handle axis, Flag keepdims) {
        return xp::nanargmax(array_arg(a, "nanargmax"), opt_axis(axis), keepdims);
      },
      arg("a"), arg("axis") = none, nb::kw_only(), arg("keepdims") = false);
  m.def(
      "nanargmin",
      [](nb::handle a, nb::handle axis, Flag keepdims) {
        return xp::nanargmin(array_arg(a, "nanargmin"), opt_axis(axis), keepdims);
      },
      arg("a"), arg("axis") = none, nb::kw_only(), arg("keepdims") = false);

  m.def(
      "diag", [](nb::handle v, std::int64_t k) { return xp::diag(array_arg(v, "diag"), k); }, arg("v"), arg("k") = 0);
  m.def(
      "ravel", [](nb::handle a) { return xp::ravel(array_arg(a, "ravel")); }, arg("a"));

  m.def(
      "median",
      [](nb::handle a, nb::handle axis, Flag keepdims) {
        return xp::median(array_arg(a, "median"), to_axes(axis), keepdims);
      },
      arg("a"), arg("axis") = none, nb::kw_only(), arg("keepdims") = false);
  m.def(
      "quantile",
      [](nb::handle a, nb::handle q, nb::handle axis, Flag keepdims, const std::string& method) {
        const Arg qa(q);
        return xp::quantile(array_arg(a, "quantile"), *qa, to_axes(axis), keepdims, method);
      },
      arg("a"), arg("q"), arg("axis") = none, nb::kw_only(), arg("keepdims") = false, arg("method") = "linear");
  m.def(
      "percentile",
      [](nb::handle a, nb::handle q, nb::handle axis, Flag keepdims, const std::string& method) {
        const Arg qa(q);
        return xp::percentile(array_arg(a, "percentile"), *qa, to_axes(axis), keepdims, method);
      },
      arg("a"), arg("q"), arg("axis") = none, nb::kw_only(), arg("keepdims") = false, arg("method") = "linear");

  m.def(
      "partition",
      [](nb::handle a, nb::handle kth, nb::handle axis) {
        const xp::Array x = array_arg(a, "partition");
        if (axis.is_none()) return xp::partition(xp::ravel(x), to_kth(kth, "partition"), -1);
        return xp::partition(x, to_kth(kth, "partition"), nb::cast<int>(axis));
      },
      arg("a"), arg("kth"), arg("axis").none() = -1);
  m.def(
      "argpartition",
      [](nb::handle a, nb::handle kth, nb::handle axis) {
        const xp::Array x = array_arg(a, "argpartition");
        if (axis.is_none()) return xp::argpartition(xp::ravel(x), to_kth(kth, "argpartition"), -1);
        return xp::argpartition(x, to_kth(kth, "argpartition"), nb::cast<int>(axis));
      },
      arg("a"), arg("kth"), arg("axis").none() = -1);
  m.def(
      "bincount",
      [](nb::handle x, nb::handle weights, std::int64_t minlength) {
        std::optional<xp::Array> w;
        if (!weights.is_none())
          w = nb::isinstance<xp::Array>(weights) ? nb::cast<xp::Array&>(weights)
                                                 : asarray(weights, std::nullopt, std::nullopt, std::nullopt);
        return xp::bincount(array_arg(x, "bincount"), w, minlength);
      },
      arg("x"), arg("weights") = none, arg("minlength") = 0);
  m.def(
      "histogram",
      [](nb::handle a, nb::handle bins, nb::handle range, Flag density) {
        const xp::Array x = array_arg(a, "histogram");
        if (!nb::isinstance<nb::int_>(bins)) {
          if (nb::isinstance<nb::str>(bins))
            throw nb::value_error("xp.histogram: bin estimators such as 'auto' are not supported");
          // Edges given: range has no effect (as NumPy's).
          const xp::Array edges = nb::isinstance<xp::Array>(bins)
                                      ? nb::cast<xp::Array&>(bins)
                                      : asarray(bins, std::nullopt, x.device(), std::nullopt);
          const xp::Histogram h = xp::histogram(x, edges, density);
          return nb::make_tuple(h.counts, h.edges);
        }
        std::optional<std::pair<double, double>> r;
        if (!range.is_none()) {
          std::vector<double> v;
          try {
            for (nb::handle e : range) v.push_back(nb::cast<double>(e));
          } catch (const nb::cast_error&) {
            throw nb::type_error("xp.histogram: range must be (min, max)");
          }
          if (v.size() != 2) throw nb::value_error("xp.histogram: range must be (min, max)");
          r = std::make_pair(v[0], v[1]);
        }
        const xp::Histogram h = xp::histogram(x, nb::cast<std::int64_t>(bins), r, density);
        return nb::make_tuple(h.counts, h.edges);
      },
      arg("a"), arg("bins") = 10, arg("range") = none, arg("density") = false);
  m.def(
      "histogram_bin_edges",
      [](nb::handle a, std::int64_t bins, nb::handle range) {
        std::optional<std::pair<double, double>> r;
        if (!range.is_none()) {
          std::vector<double> v;
          try {
            for (nb::handle e : range) v.push_back(nb::cast<double>(e));
          } catch (const nb::cast_error&) {
            throw nb::type_error("xp.histogram_bin_edges: range must be (min, max)");
          }
          if (v.size() != 2) throw nb::value_error("xp.histogram_bin_edges: range must be (min, max)");
          r = std::make_pair(v[0], v[1]);
        }
        return xp::histogram_bin_edges(array_arg(a, "histogram_bin_edges"), bins, r);
      },
      arg("a"), arg("bins") = 10, arg("range") = none);
  m.def(
      "einsum",
      [](nb::args args, nb::kwargs kwargs) {
        for (auto [key, value] : kwargs) {
          const auto k = nb::cast<std::string>(key);
          // xp always chooses the contraction order (greedy): optimize is accepted and has no effect.
          if (k != "optimize") throw nb::type_error(("xp.einsum: unexpected keyword argument '" + k + "'").c_str());
        }
        if (args.size() == 0) throw nb::type_error("xp.einsum: needs the subscripts and at least one operand");
        std::string subscripts;
        std::vector<xp::Array> operands;
        if (nb::isinstance<nb::str>(args[0])) {
          subscripts = nb::cast<std::string>(args[0]);
          for (std::size_t i = 1; i < args.size(); ++i) operands.push_back(array_arg(args[i], "einsum"));
        } else {
          // np.einsum(op0, sublist0, op1, sublist1, ..., [sublistout])
          std::size_t i = 0;
          for (; i + 1 < args.size(); i += 2) {
            if (i > 0) subscripts += ",";
            operands.push_back(array_arg(args[i], "einsum"));
            subscripts += sublist_text(args[i + 1]);
          }
          if (i < args.size()) subscripts += "->" + sublist_text(args[i]);
        }
        return xp::einsum(subscripts, operands);
      },
      nb::sig("def einsum(subscripts, *operands, optimize=False)"));
  m.def(
      "pad",
      [](nb::handle array, nb::handle pad_width, const std::string& mode, nb::handle constant_values) {
        const xp::Array a = array_arg(array, "pad");
        xp::Scalar value(0);
        if (!to_scalar(constant_values, value))
          throw nb::type_error("xp.pad: constant_values must be a bool, int or float");
        return xp::pad(a, to_pad_width(pad_width, a.ndim()), mode, value);
      },
      arg("array"), arg("pad_width"), arg("mode") = "constant", nb::kw_only(), arg("constant_values") = 0);
  // ---- random numbers: xp._xp._random.Generator, which python/xp/random.py re-exports ----
  nb::module_ r = m.def_submodule("_random", "xp.random's generator (import xp.random)");
  auto size_of = [](nb::handle size) { return size.is_none() ? xp::Shape{} : to_shape(size); };
  nb::class_<xp::random::Generator>(r, "Generator",
                                    "Philox-4x32-10 streams: the same seed gives the same numbers on every device")
      .def(nb::init<std::uint64_t>(), arg("seed"))
      .def_prop_ro("seed", &xp::random::Generator::seed)
      .def(
          "uniform",
          [size_of](xp::random::Generator& g, double low, double high, nb::handle size, nb::handle dtype,
                    nb::handle device) {
            const auto t = to_dtype(dtype);
            return g.uniform(size_of(size), t ? *t : xp::DType::float64, low, high, to_device(device));
          },
          arg("low") = 0.0, arg("high") = 1.0, arg("size") = none, nb::kw_only(), arg("dtype") = none,
          arg("device") = none)
      .def(
          "normal",
          [size_of](xp::random::Generator& g, double loc, double scale, nb::handle size, nb::handle dtype,
                    nb::handle device) {
            const auto t = to_dtype(dtype);
            return g.normal(size_of(size), t ? *t : xp::DType::float64, loc, scale, to_device(device));
          },
          arg("loc") = 0.0, arg("scale") = 1.0, arg("size") = none, nb::kw_only(), arg("dtype") = none,
          arg("device") = none)
      .def(
          "integers",
          [size_of](xp::random::Generator& g, std::int64_t low, std::optional<std::int64_t> high, nb::handle size,
                    nb::handle dtype, Flag endpoint, nb::handle device) {
            const auto t = to_dtype(dtype);
            if (!high) {
              high = low;
              low = 0;
            }
            if (endpoint) {  // [low, high] as NumPy's endpoint=True: the exclusive bound one above
              if (*high == INT64_MAX)
                throw nb::value_error("xp.random: integers(endpoint=True) up to 2**63 - 1 is beyond int64's bounds");
              ++*high;
            }
            return g.integers(low, *high, size_of(size), t ? *t : xp::DType::int64, to_device(device));
          },
          // NumPy's order: integers(low, high=None, size=None, dtype=int64, endpoint=False).
          arg("low"), arg("high") = none, arg("size") = none, arg("dtype") = none, arg("endpoint") = false,
          nb::kw_only(), arg("device") = none)
      .def(
          "exponential",
          [size_of](xp::random::Generator& g, double scale, nb::handle size, nb::handle dtype, nb::handle device) {
            const auto t = to_dtype(dtype);
            return g.exponential(size_of(size), t ? *t : xp::DType::float64, scale, to_device(device));
          },
          arg("scale") = 1.0, arg("size") = none, nb::kw_only(), arg("dtype") = none, arg("device") = none)
      .def(
          "gamma",
          [size_of](xp::random::Generator& g, double shape, double scale, nb::handle size, nb::handle dtype,
                    nb::handle device) {
            const auto t = to_dtype(dtype);
            return g.gamma(shape, scale, size_of(size), t ? *t : xp::DType::float64, to_device(device));
          },
          arg("shape"), arg("scale") = 1.0, arg("size") = none, nb::kw_only(), arg("dtype") = none,
          arg("device") = none)
      .def(
          "poisson",
          [size_of](xp::random::Generator& g, double lam, nb::handle size, nb::handle device) {
            return g.poisson(lam, size_of(size), to_device(device));
          },
          arg("lam") = 1.0, arg("size") = none, nb::kw_only(), arg("device") = none)
      .def(
          "binomial",
          [size_of](xp::random::Generator& g, std::int64_t n, double p, nb::handle size, nb::handle device) {
            return g.binomial(n, p, size_of(size), to_device(device));
          },
          arg("n"), arg("p"), arg("size") = none, nb::kw_only(), arg("device") = none)
      .def(
          "permutation",
          [](xp::random::Generator& g, nb::handle x, int axis, nb::handle device) {
            if (nb::isinstance<nb::int_>(x)) return g.permutation(nb::cast<std::int64_t>(x), to_device(device));
            return g.permutation(array_arg(x, "random.Generator.permutation"), axis);
          },
          arg("x"), arg("axis") = 0, nb::kw_only(), arg("device") = none)
      .def(
          "shuffle",
          [](xp::random::Generator& g, nb::handle x, int axis) {
            if (!nb::isinstance<xp::Array>(x))  // in place: a converted copy would be shuffled and lost
              throw nb::type_error("xp.random.Generator.shuffle: expected an xp array");
            g.shuffle(nb::cast<xp::Array&>(x), axis);
          },
          arg("x"), arg("axis") = 0)
      .def(
          "choice",
          [](xp::random::Generator& g, nb::handle a, nb::handle size, Flag replace, nb::handle p, int axis,
             bool /*shuffle*/, nb::handle device) {
            std::optional<xp::Shape> s;
            if (!size.is_none()) s = to_shape(size);
            if (!p.is_none()) {
              const xp::Array pa = nb::isinstance<xp::Array>(p)
                                       ? nb::cast<xp::Array&>(p)
                                       : asarray(p, std::nullopt, xp::Device::cpu(), std::nullopt);
              if (nb::isinstance<nb::int_>(a))
                return g.choice(nb::cast<std::int64_t>(a), s, replace, pa, to_device(device));
              return g.choice(array_arg(a, "random.Generator.choice"), s, replace, pa, axis);
            }
            if (nb::isinstance<nb::int_>(a)) return g.choice(nb::cast<std::int64_t>(a), s, replace, to_device(device));
            return g.choice(array_arg(a, "random.Generator.choice"), s, replace, axis);
          },
          arg("a"), arg("size") = none, arg("replace") = true, arg("p") = none, arg("axis") = 0, arg("shuffle") = true,
          nb::kw_only(), arg("device") = none);
}

}  // namespace xp_py
