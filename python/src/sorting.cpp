// Sorting, searching, sets and take_along_axis (xp/sorting.hpp) under their Array API names. The
// unique_* functions return plain tuples here; python/xp/_sets.py makes them the standard's named
// tuples.
#include <xp/sorting.hpp>

#include "common.hpp"

namespace xp_py {

namespace {

xp::Array array_arg(nb::handle h, const char* what) {
  return array_like(h, what);
}

nb::tuple tuple_of(const std::vector<xp::Array>& v) {
  nb::list l;
  for (const xp::Array& a : v) l.append(nb::cast(a));
  return nb::tuple(l);
}

}  // namespace

void register_sorting(nb::module_& m) {
  using nb::arg;
  const auto none = nb::none();
  // axis=None sorts the flattened array, as NumPy's sort and argsort do.
  const auto flat_or = [](const xp::Array& a, nb::handle axis, int& ax) {
    if (axis.is_none()) {
      ax = 0;
      return xp::reshape(a, {-1});
    }
    ax = nb::cast<int>(checked(PyNumber_Index(axis.ptr())));
    return a;
  };
  m.def(
      "sort",
      [flat_or](nb::handle x, nb::handle axis, Flag descending, Flag stable) {
        int ax = 0;
        const xp::Array a = flat_or(array_arg(x, "sort"), axis, ax);
        return xp::sort(a, ax, descending, stable);
      },
      arg("x"), nb::kw_only(), arg("axis").none() = -1, arg("descending") = false, arg("stable") = true);
  m.def(
      "argsort",
      [flat_or](nb::handle x, nb::handle axis, Flag descending, Flag stable) {
        int ax = 0;
        const xp::Array a = flat_or(array_arg(x, "argsort"), axis, ax);
        return xp::argsort(a, ax, descending, stable);
      },
      arg("x"), nb::kw_only(), arg("axis").none() = -1, arg("descending") = false, arg("stable") = true);
  m.def(
      "nonzero", [](nb::handle x) { return tuple_of(xp::nonzero(array_arg(x, "nonzero"))); }, arg("x"));
  m.def(
      "count_nonzero",
      [](nb::handle x, nb::handle axis, Flag keepdims) {
        return xp::count_nonzero(array_arg(x, "count_nonzero"), to_axes(axis), keepdims);
      },
      arg("x"), nb::kw_only(), arg("axis") = none, arg("keepdims") = false);
  m.def(
      "searchsorted",
      [](nb::handle x1, nb::handle x2, const std::string& side, nb::handle sorter) {
        if (side != "left" && side != "right")
          throw nb::value_error(("xp.searchsorted: side must be 'left' or 'right', got '" + side + "'").c_str());
        std::optional<xp::Operand> op;
        xp::Array keep;
        to_operand(x2, op, keep, true);
        std::optional<xp::Array> s;
        if (!sorter.is_none()) s = array_arg(sorter, "searchsorted");
        return xp::searchsorted(array_arg(x1, "searchsorted"), *op, side == "left" ? xp::Side::left : xp::Side::right,
                                s);
      },
      arg("x1"), arg("x2"), nb::kw_only(), arg("side") = "left", arg("sorter") = none);
  m.def(
      "_unique_all",
      [](nb::handle x) {
        const xp::UniqueAll u = xp::unique_all(array_arg(x, "unique_all"));
        return nb::make_tuple(u.values, u.indices, u.inverse_indices, u.counts);
      },
      arg("x"));
  m.def(
      "_unique_counts",
      [](nb::handle x) {
        const xp::UniqueCounts u = xp::unique_counts(array_arg(x, "unique_counts"));
        return nb::make_tuple(u.values, u.counts);
      },
      arg("x"));
  m.def(
      "_unique_inverse",
      [](nb::handle x) {
        const xp::UniqueInverse u = xp::unique_inverse(array_arg(x, "unique_inverse"));
        return nb::make_tuple(u.values, u.inverse_indices);
      },
      arg("x"));
  m.def(
      "unique_values", [](nb::handle x) { return xp::unique_values(array_arg(x, "unique_values")); }, arg("x"));
  m.def(
      "take_along_axis",
      [](nb::handle x, nb::handle indices, int axis) {
        return xp::take_along_axis(array_arg(x, "take_along_axis"), array_arg(indices, "take_along_axis"), axis);
      },
      arg("x"), arg("indices"), nb::kw_only(), arg("axis") = -1);
}

}  // namespace xp_py
