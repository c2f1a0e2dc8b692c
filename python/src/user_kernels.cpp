// xp.ElementwiseKernel and xp.ReductionKernel, as CuPy users write them, over the C++ classes of
// xp/kernels.hpp. Arguments: xp arrays, Python numbers (weak scalars) or anything xp.asarray takes.
#include <Python.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"

namespace xp_py {

namespace {

std::vector<std::string> option_strings(nb::handle seq) {
  std::vector<std::string> v;
  if (nb::isinstance<nb::str>(seq)) {
    v.push_back(nb::cast<std::string>(seq));
    return v;
  }
  for (nb::handle s : seq) v.push_back(nb::cast<std::string>(s));
  return v;
}

// The operands of a call; `keep` holds the arrays made from other objects (NumPy arrays, lists).
struct Operands {
  std::vector<xp::Array> keep;
  std::vector<xp::Operand> ops;
  explicit Operands(nb::args args) {
    keep.resize(args.size());
    ops.reserve(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::optional<xp::Operand> op;
      to_operand(args[i], op, keep[i], true);
      ops.push_back(*op);
    }
  }
};

std::vector<xp::Array> outs(nb::handle out) {
  std::vector<xp::Array> v;
  if (out.is_none()) return v;
  if (nb::isinstance<xp::Array>(out)) {
    v.push_back(nb::cast<xp::Array>(out));
    return v;
  }
  for (nb::handle a : out) {
    if (!nb::isinstance<xp::Array>(a)) throw nb::type_error("xp: out= takes xp arrays");
    v.push_back(nb::cast<xp::Array>(a));
  }
  if (v.empty()) throw nb::value_error("xp: out= is an empty sequence");
  return v;
}

nb::object results(std::vector<xp::Array> r) {
  if (r.size() == 1) return nb::cast(std::move(r[0]));
  nb::list l;
  for (auto& a : r) l.append(nb::cast(std::move(a)));
  return nb::tuple(l);
}

}  // namespace

void register_user_kernels(nb::module_& m) {
  nb::class_<xp::ElementwiseKernel>(
      m, "ElementwiseKernel",
      "A user-defined elementwise kernel, as CuPy's: ElementwiseKernel('T x, T y', 'T z', 'z = x * y + 1', 'f').\n"
      "Called with the inputs (and optionally the outputs); returns the output, or a tuple of them.")
      .def(nb::new_([](const std::string& in_params, const std::string& out_params, const std::string& operation,
                       const std::string& name, bool /*reduce_dims*/, const std::string& preamble, nb::handle options) {
             return xp::ElementwiseKernel(in_params, out_params, operation, name,
                                          xp::ElementwiseKernelOptions{preamble, option_strings(options)});
           }),
           nb::arg("in_params"), nb::arg("out_params"), nb::arg("operation"), nb::arg("name") = "kernel",
           nb::arg("reduce_dims") = true, nb::arg("preamble") = "", nb::arg("options") = nb::tuple())
      .def_prop_ro("name", &xp::ElementwiseKernel::name)
      .def_prop_ro("nin", &xp::ElementwiseKernel::nin)
      .def_prop_ro("nout", &xp::ElementwiseKernel::nout)
      .def(
          "__call__",
          [](const xp::ElementwiseKernel& k, nb::args args, nb::handle out, nb::handle size) {
            const Operands a(args);
            xp::ElementwiseCall how{outs(out), std::nullopt};
            if (!size.is_none()) how.size = nb::cast<std::int64_t>(size);
            std::vector<xp::Array> r;
            {
              nb::gil_scoped_release release;
              r = k.call(a.ops, how);
            }
            return results(std::move(r));
          },
          nb::arg("args"), nb::kw_only(), nb::arg("out") = nb::none(), nb::arg("size") = nb::none())
      .def(
          "source",
          [](const xp::ElementwiseKernel& k, nb::args args, nb::handle out, nb::handle size) {
            const Operands a(args);
            xp::ElementwiseCall how{outs(out), std::nullopt};
            if (!size.is_none()) how.size = nb::cast<std::int64_t>(size);
            return k.source(a.ops, how);
          },
          nb::arg("args"), nb::kw_only(), nb::arg("out") = nb::none(), nb::arg("size") = nb::none(),
          "The CUDA C++ a call with these arguments compiles.");

  nb::class_<xp::ReductionKernel>(
      m, "ReductionKernel",
      "A user-defined reduction kernel, as CuPy's: ReductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', "
      "'0', 'l2norm').\nCalled with the inputs, axis=None (every axis), an int or a tuple, and keepdims.")
      .def(
          nb::new_([](const std::string& in_params, const std::string& out_params, const std::string& map_expr,
                      const std::string& reduce_expr, const std::string& post_map_expr, nb::handle identity,
                      const std::string& name, nb::handle reduce_type, bool /*reduce_dims*/,
                      const std::string& preamble, nb::handle options) {
            if (identity.is_none())
              throw nb::value_error("xp: ReductionKernel needs an identity (the reduction of no elements)");
            return xp::ReductionKernel(
                in_params, out_params, map_expr, reduce_expr, post_map_expr, nb::cast<std::string>(nb::str(identity)),
                name,
                xp::ReductionKernelOptions{preamble, option_strings(options),
                                           reduce_type.is_none() ? std::string() : nb::cast<std::string>(reduce_type)});
          }),
          nb::arg("in_params"), nb::arg("out_params"), nb::arg("map_expr"), nb::arg("reduce_expr"),
          nb::arg("post_map_expr"), nb::arg("identity").none(), nb::arg("name") = "reduce_kernel",
          nb::arg("reduce_type") = nb::none(), nb::arg("reduce_dims") = true, nb::arg("preamble") = "",
          nb::arg("options") = nb::tuple())
      .def_prop_ro("name", &xp::ReductionKernel::name)
      .def_prop_ro("nin", &xp::ReductionKernel::nin)
      .def_prop_ro("nout", &xp::ReductionKernel::nout)
      .def(
          "__call__",
          [](const xp::ReductionKernel& k, nb::args args, nb::handle axis, Flag keepdims, nb::handle out) {
            const Operands a(args);
            const xp::ReductionCall how{to_axes(axis), keepdims, outs(out)};
            std::vector<xp::Array> r;
            {
              nb::gil_scoped_release release;
              r = k.call(a.ops, how);
            }
            return results(std::move(r));
          },
          nb::arg("args"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
          nb::arg("out") = nb::none())
      .def(
          "source",
          [](const xp::ReductionKernel& k, nb::args args, nb::handle axis, Flag keepdims, nb::handle out) {
            const Operands a(args);
            return k.source(a.ops, xp::ReductionCall{to_axes(axis), keepdims, outs(out)});
          },
          nb::arg("args"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
          nb::arg("out") = nb::none(), "The CUDA C++ a call with these arguments compiles.");
}

}  // namespace xp_py
