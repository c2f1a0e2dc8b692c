#pragma once

// The CPU backend's elementwise kernels: each computes one operation over n contiguous elements of
// a tile (a few thousand elements that stay in cache while a fused program runs through them).
//
// in[k] points at operand k's n elements (operand 0 = Instr::a, 1 = b, 2 = c), laid out
// contiguously in the operands' dtype; out at n elements of the result's dtype. `out` may be the
// same pointer as an operand (an in-place tile), never a partial overlap. Kernels must give each
// element the same bits whatever n and the element's position in the tile (the fused and the eager
// evaluation cut tiles differently and must agree bit for bit), and must never execute C++
// undefined behaviour for any input bits (docs/semantics.md says what each operation gives).

#include <cstdint>

#include "backend/ir.hpp"

namespace xp::detail::cpu {

using TileFn = void (*)(const void* const* in, void* out, std::int64_t n);

// Exactly rounded and integer operations (ew_exact.cpp): cast, negative, abs, sign, square, sqrt,
// floor, ceil, round, trunc, isnan, isinf, isfinite, signbit, logical_not, bitwise_invert, add,
// subtract, multiply, divide, floor_divide, remainder, pow (integer dtypes only), copysign,
// nextafter (float16 and bfloat16 too), minimum, maximum,
// comparisons, logical_*, bitwise_*, shifts, where, clip, fma. `operand` is the dtype of operand 0
// except for where (the dtype of b and c) and cast (the source). nullptr when the combination is not
// defined by ir.hpp's rules.
TileFn exact_tile_fn(Op op, DType operand, DType result) noexcept;

// The transcendental functions (ew_math.cpp): exp, expm1, log, log1p, log2, log10, sin, cos, tan,
// asin, acos, atan, sinh, cosh, tanh, acosh, asinh, atanh, atan2, pow, hypot (float32 and float64). SIMD where the CPU
// has it, chosen at run time. nullptr for other combinations.
TileFn math_tile_fn(Op op, DType operand, DType result) noexcept;

// complex64 and complex128 (ew_complex.cpp, over backend/complex_math.cuh): every operation ir.hpp
// defines on complex operands, complex(re, im), casts to and from complex, and where.
TileFn complex_tile_fn(Op op, DType operand, DType result) noexcept;

// Any of the above.
inline TileFn tile_fn(Op op, DType operand, DType result) noexcept {
  TileFn f = exact_tile_fn(op, operand, result);
  if (f == nullptr) f = complex_tile_fn(op, operand, result);
  return f != nullptr ? f : math_tile_fn(op, operand, result);
}

// The maximum error of math_tile_fn's functions in ulp against the correctly rounded result, on
// this CPU's dispatch path, for the docs and the tests.
double math_ulp_bound(Op op, DType dtype) noexcept;
// Which implementation math_tile_fn uses on this CPU: "avx512", "avx2", "sse4" or "scalar".
const char* math_isa() noexcept;

}  // namespace xp::detail::cpu
