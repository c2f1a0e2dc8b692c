#pragma once

// User-defined elementwise and reduction kernels, as CuPy's ElementwiseKernel and ReductionKernel:
//
//   xp::ElementwiseKernel fma1("T x, T y", "T z", "z = x * y + 1", "fma1");
//   xp::Array z = fma1({x, y});
//   xp::ReductionKernel l2norm("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm");
//   xp::Array n = l2norm({x}, {.axis = 1});
//
// Parameter lists are "type name" pairs separated by commas. A type is a dtype name (float32,
// int64, bool, ...) or a placeholder: a single letter (T, U, ...) bound at each call from the
// dtypes of the arrays given for it; two arrays that bind one placeholder to two dtypes are a
// TypeError naming both. "raw T w" passes an array without broadcasting: the body indexes it
// itself (w[i], w.size()). The body sees `i`, the flat index in C order of the broadcast shape, and
// `_ind.size()`, the number of elements; the inputs as values of their types and the outputs as
// references. Scalars may be given for non-raw inputs: a placeholder bound by no array takes the
// scalar's own dtype (int64, float64, bool), else the scalar is converted to the parameter's type
// (a value that does not fit, or a float for an integer type, is a TypeError). Arrays given for a
// parameter of another dtype are converted as they are read (NumPy's same_kind rule).
//
// Inputs broadcast together (NumPy's rules). Outputs are allocated with the broadcast shape and
// the bound dtype, or given (after the inputs, or as `out`): of exactly that shape and dtype, and
// written in place. Non-contiguous arrays (views, broadcasts, negative strides) are read and
// written through their strides, without copies; raw arrays are passed C-contiguous (copied when
// not; a raw output must be C-contiguous).
//
// The generated CUDA C++ (`source` shows it) is compiled through xp::Program and launched with
// Kernel::launch on the device of the arrays: NVRTC for a GPU, the host compiler for the CPU. A
// kernel is generated once per combination of argument dtypes, scalar or array arguments, number
// of dimensions after merging, and contiguity, and kept in the kernel object; Program's memory and
// disk caches make a later process skip the compilation. The kernel is compiled with xp's own
// floating rules (--fmad=false: no implicit fused multiply-add). Arguments are evaluated first (a
// lazy expression is computed) and the kernel runs as one launch: it does not join a fused
// expression. Supported dtypes: bool, the integers, float32 and float64.
//
// Errors come before anything is written: a parameter list that does not parse or names an unknown
// type (ValueError, TypeError), a wrong argument count (ValueError), a placeholder bound twice or
// an out array of another dtype (TypeError) or shape (ValueError), arrays on two devices
// (DeviceMismatch), a body that does not compile (CompileError with the compiler's log).

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xp/array.hpp"
#include "xp/export.hpp"

namespace xp {

namespace detail {
struct UserKernelState;
}

struct ElementwiseKernelOptions {
  std::string preamble{};              // pasted before the kernel (helper functions, constants)
  std::vector<std::string> options{};  // compiler options added to xp's ("-DN=4")
};

struct ElementwiseCall {
  std::vector<Array> out{};            // the outputs, instead of giving them after the inputs
  std::optional<std::int64_t> size{};  // the element count when every argument is raw or a scalar
};

class XP_API ElementwiseKernel {
 public:
  ElementwiseKernel(std::string in_params, std::string out_params, std::string operation, std::string name = "kernel",
                    ElementwiseKernelOptions options = {});

  // All outputs, one per output parameter. `args`: the inputs, optionally followed by the outputs.
  std::vector<Array> call(std::span<const Operand> args, const ElementwiseCall& how = {}) const;
  // The one output of a kernel with one output parameter (ValueError for more: use call).
  Array operator()(std::initializer_list<Operand> args, const ElementwiseCall& how = {}) const;
  // The CUDA C++ source that call(args, how) compiles (its kernel is named name()).
  std::string source(std::span<const Operand> args, const ElementwiseCall& how = {}) const;

  const std::string& name() const;
  int nin() const;   // input parameters
  int nout() const;  // output parameters

 private:
  std::shared_ptr<detail::UserKernelState> state_;
};

struct ReductionKernelOptions {
  std::string preamble{};
  std::vector<std::string> options{};
  // The type of the values reduced (`a`, `b`, `_type_reduce` in the expressions): a dtype name or
  // a placeholder; default, the first output's type.
  std::string reduce_type{};
};

struct ReductionCall {
  Axes axis{};  // every axis (the default), one, or several
  bool keepdims = false;
  std::vector<Array> out{};
};

// map_expr maps the inputs of one element to a value of the reduce type; reduce_expr combines two
// such values `a` and `b`; post_map_expr writes the outputs from the reduced value `a`;
// `identity` (required) is the reduce type's starting value, what an empty reduction reduces to
// before post_map_expr. `_in_ind.size()` and `_out_ind.size()` give the input (broadcast) and
// output element counts in any of the expressions. Floating reductions are computed in an order of
// their own (blocks of threads, then a second pass over partial results): they match another order
// within rounding, not bit for bit.
class XP_API ReductionKernel {
 public:
  ReductionKernel(std::string in_params, std::string out_params, std::string map_expr, std::string reduce_expr,
                  std::string post_map_expr, std::string identity, std::string name = "reduce_kernel",
                  ReductionKernelOptions options = {});

  std::vector<Array> call(std::span<const Operand> args, const ReductionCall& how = {}) const;
  Array operator()(std::initializer_list<Operand> args, const ReductionCall& how = {}) const;
  std::string source(std::span<const Operand> args, const ReductionCall& how = {}) const;

  const std::string& name() const;
  int nin() const;
  int nout() const;

 private:
  std::shared_ptr<detail::UserKernelState> state_;
};

}  // namespace xp
