#pragma once

// Reductions and scans on the CPU (reduce.cpp). Deterministic: the same input gives the same bits
// whatever the thread count (work is cut into fixed blocks, combined in a fixed order).

#include <cstdint>
#include <span>

#include "backend/ir.hpp"
#include "backend/reduce_ops.hpp"

namespace xp::detail::cpu {

// Reduces `in` over `axes` (sorted, unique, each in [0, in.ndim); empty = no axis reduced, every
// element its own result) into `out`, whose shape is in's shape without the reduced axes (C order;
// keepdims is the array layer's business). out.dtype was chosen by the array layer (NumPy's rules,
// reduce_result_dtype in backend/reduce_ops.hpp; the request is checked by check_reduce_request):
//   sum, prod:  bool and signed integers -> int64, unsigned -> uint64, floats keep their dtype;
//               integers wrap; float16 and bfloat16 accumulate in float32, float32 in float32,
//               float64 in float64: fixed blocks of 4096, NumPy's halving pairwise tree inside a
//               block (leaves of <= 512, the first half of a split a multiple of L long), each
//               addition's rounding error carried along (TwoSum), blocks combined pairwise in index
//               order. A leaf of n >= L elements is added in L lanes, L = 32 bytes of the
//               accumulation type (8 float32, 4 float64): lane l adds elements l, l + L, l + 2L...;
//               the lanes are combined as a tree (lane l takes lane l + h, h = L/2 ... 1), then the
//               last n % L elements are added (a shorter leaf: one by one). The error is about
//               u|S| + O((log n u)^2) sum|x|: no worse than NumPy's pairwise sum on the same input.
//               A backend that must match the CPU bit for bit computes this same tree.
//   mean, var, std: integers and bool -> float64, floats keep their dtype (16-bit floats computed
//               in float32); var and std use two passes (mean, then squared deviations) and divide
//               by (N - correction); N - correction <= 0 gives NaN (NumPy: inf or NaN with a warning).
//   min, max:   the input's dtype; NaN propagates (a NaN anywhere gives NaN). An empty reduction is
//               a ValueError ("zero-size array to reduction operation minimum which has no identity").
//   any, all:   bool.
//   argmin, argmax: int64, the first index of the extreme (the first NaN if there is one); `axes`
//               has one axis, or every axis (then the index is into the C-order flattening); empty
//               input is a ValueError.
// An empty sum is 0, an empty prod 1, an empty mean NaN.
void reduce(ReduceOp op, const View& in, std::span<const int> axes, const View& out, double correction = 0);

// Cumulative sum along `axis` (NumPy's cumsum; the Array API's cumulative_sum): out has in's shape,
// plus one along axis when include_initial (a leading 0). out.dtype as for sum, or for an integer
// input its own dtype (the running sum wraps in it: NumPy's cumsum(dtype=)). Sequential along
// the axis (as NumPy), parallel across the other axes; float16/bfloat16 accumulate in float32 and
// each output is the running float32 sum rounded. `op` sum or prod: cumulative(ReduceOp::prod, ...)
// is the running product (the Array API's cumulative_prod) in the same types and order, with a
// leading 1 for include_initial; integers wrap as sum's do.
void cumulative(ReduceOp op, const View& in, int axis, const View& out, bool include_initial);
inline void cumulative_sum(const View& in, int axis, const View& out, bool include_initial) {
  cumulative(ReduceOp::sum, in, axis, out, include_initial);
}

// The vector instructions that compute the leaves of compensated float sums (sum, mean, var, std
// of float16, bfloat16, float32, float64 runs). Every level computes the same arithmetic (the
// lanes and the tree above), so the bits never depend on the level: 16-byte SSE2 vectors (the
// x86-64 baseline), 32-byte AVX2 vectors (one leaf's lanes), 64-byte AVX-512F vectors (two
// leaves'; with AVX-512VL). The best level the CPU supports is chosen once, at the first reduction.
enum class SumIsa : std::uint8_t { sse2, avx2, avx512 };

// The best level this CPU (and OS) supports.
SumIsa sum_isa_supported() noexcept;
// The level reductions use now ("sse2", "avx2", "avx512" from sum_isa_name).
SumIsa sum_isa_in_use() noexcept;
const char* sum_isa_name(SumIsa isa) noexcept;

// For tests: makes later reductions, on every thread, use `isa`; returns the level in force before.
// A level above sum_isa_supported() is a ValueError.
SumIsa set_sum_isa(SumIsa isa);

}  // namespace xp::detail::cpu
