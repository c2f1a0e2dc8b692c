#pragma once

// Reductions and cumulative sums on a CUDA device: their CUDA C++ source (reduce_source.cpp; the
// device code is device/reduce_*.cuh and device/scan.cuh), testable without a GPU. The plans it
// serves are reduce_plan.hpp's.
//
// The source of one (op, dtype, class) holds the class's kernels and the finish kernels: only what a
// request needs is compiled. It depends on op, dtype and class only: sizes, strides and pointers
// travel in the kernel's one argument (ReduceArgs).

#include <string>

#include "backend/cuda/ew_source.hpp"
#include "backend/cuda/reduce_plan.hpp"

namespace xp::detail::cuda {

// The one translation unit of (op, dtype, class): kernels named by reduce_kernel_name and
// reduce_finish_name. With a fused value (ew_source.hpp, generate_value; its dtype is `in`), the
// kernels compute each element from the value's inputs instead of loading it: the plan is made for
// the value as a C-contiguous array of `in` (see plan_fused_reduce), the argument is ReduceArgs
// followed by the value's xp_fargs, and a.in is never read.
std::string reduce_source(ReduceOp op, DType in, ReduceFamily family, const GeneratedValue* value = nullptr);
// A cache key: equal keys <=> identical source.
std::string reduce_key(ReduceOp op, DType in, ReduceFamily family, const GeneratedValue* value = nullptr);
// "xp_rows_vec" ("xp_rows_tile" for a plan in tiles, in the same program), "xp_rows_strided",
// "xp_cols" ("xp_cols_vec" for a plan in vectors). variant: plan.tiles for rows_vector, plan.cols_vec
// for columns (reduce_kernel_name(plan) picks).
std::string reduce_kernel_name(ReduceFamily f, bool variant = false);
// The rows_vector program's warp kernel for plan.rows_each: a warp per row, no index arithmetic.
inline constexpr const char* kRowsEachKernel = "xp_rows_each";
inline std::string reduce_kernel_name(const ReducePlan& p) {
  return p.rows_each ? std::string(kRowsEachKernel) : reduce_kernel_name(p.family, p.tiles || p.cols_vec);
}
// "xp_finish" (a warp per output; for the columns class, a block per 32 adjacent outputs) or, wide,
// "xp_finish_wide" (a block per output).
std::string reduce_finish_name(bool wide = false);

// out: the sum dtype of in, or an integer in's own dtype (the running sum wraps in it).
// op: sum or prod (a running product, the same kernels with * and 1).
std::string scan_source(DType in, DType out, ReduceOp op = ReduceOp::sum);
std::string scan_key(DType in, DType out, ReduceOp op = ReduceOp::sum);
const char* scan_kernel_name(ScanFamily f) noexcept;  // "xp_scan_lines", "xp_scan_tiles"

}  // namespace xp::detail::cuda
