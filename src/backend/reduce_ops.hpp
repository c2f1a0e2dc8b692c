#pragma once

// The reductions every backend computes: the ops, their result dtypes and the checks of a request,
// in one place so that each backend (backend/cpu/reduce.hpp, backend/cuda/reduce_source.hpp) and
// the array layer agree on them.

#include <cstdint>
#include <span>

#include "backend/ir.hpp"

namespace xp::detail {

enum class ReduceOp : std::uint8_t { sum, prod, min, max, mean, var, std, any, all, argmin, argmax };

// Every op in declaration order, and each op's name (the array function's), for kernel keys,
// messages and tools.
inline constexpr ReduceOp kReduceOps[] = {ReduceOp::sum,  ReduceOp::prod,   ReduceOp::min,   ReduceOp::max,
                                          ReduceOp::mean, ReduceOp::var,    ReduceOp::std,   ReduceOp::any,
                                          ReduceOp::all,  ReduceOp::argmin, ReduceOp::argmax};
constexpr const char* reduce_op_name(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::prod:
      return "prod";
    case ReduceOp::min:
      return "min";
    case ReduceOp::max:
      return "max";
    case ReduceOp::mean:
      return "mean";
    case ReduceOp::var:
      return "var";
    case ReduceOp::std:
      return "std";
    case ReduceOp::any:
      return "any";
    case ReduceOp::all:
      return "all";
    case ReduceOp::argmin:
      return "argmin";
    case ReduceOp::argmax:
      return "argmax";
  }
  return "?";
}

// The dtype of op's result for an input dtype (NumPy's rules; how each op computes in it is the
// CPU backend's reduce.hpp): sum and prod: bool and signed integers -> int64, unsigned -> uint64,
// floats keep theirs; mean, var, std: floats keep theirs, the rest -> float64; min, max: the
// input's; any, all: bool; argmin, argmax: int64.
DType reduce_result_dtype(ReduceOp op, DType input) noexcept;

// Checks a reduction of `in` over `axes` into `out` as every backend takes it (Backend::reduce):
// at most kMaxDims dimensions, none negative; axes sorted, unique and in range; out has in's shape
// without the reduced axes and the dtype reduce_result_dtype gives; min, max, argmin and argmax of
// no element are errors (NumPy's messages). Throws ValueError; returns the elements reduced into
// each output (1 when no axis is reduced).
std::int64_t check_reduce_request(ReduceOp op, const View& in, std::span<const int> axes, const View& out);

// One axis of a reduction's geometry, as both backends plan it: its extent and its byte strides.
struct ReduceDim {
  std::int64_t size = 1;
  std::int64_t in = 0;   // input stride, bytes
  std::int64_t out = 0;  // output stride, bytes (0 for reduced axes)
};

// Drops size-1 axes and merges neighbours that step through memory as one axis, in place; returns
// the count left.
int simplify_reduce_dims(ReduceDim* d, int n) noexcept;

// Checks a cumulative sum or product (op sum or prod) of `in` along `axis` into `out`
// (Backend::cumulative): out has in's shape, plus one along axis when include_initial; out's dtype
// is sum's (prod's is the same), or for an integer input its own. Throws ValueError.
void check_scan_request(ReduceOp op, const View& in, int axis, const View& out, bool include_initial);

}  // namespace xp::detail
