#pragma once

// What the array layer hands a backend: strided views of memory and fused elementwise programs.
// Layer-neutral (no Array, no CUDA): the CPU backend interprets a program tile by tile, the CUDA
// backend turns the same program into CUDA source (backend/cuda/ew_source.hpp).

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "xp/dtype.hpp"

namespace xp::detail {

// NumPy's and xp's limit on dimensions.
constexpr int kMaxDims = 64;

// A strided view of memory. `data` points at the first element (the offset is applied); strides are
// in bytes and may be 0 (broadcast) or negative (flipped). For the CPU, `data` is a host pointer.
struct View {
  std::byte* data = nullptr;
  DType dtype = DType::float32;
  int ndim = 0;
  const std::int64_t* shape = nullptr;
  const std::int64_t* strides = nullptr;

  std::int64_t size() const noexcept {
    std::int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
  // True when the elements are laid out in C order without gaps (size-1 dimensions ignored).
  bool is_c_contiguous() const noexcept {
    std::int64_t expect = static_cast<std::int64_t>(itemsize(dtype));
    for (int i = ndim - 1; i >= 0; --i) {
      if (shape[i] == 1) continue;
      if (strides[i] != expect) return false;
      expect *= shape[i];
    }
    return true;
  }
};

// Elementwise operations. The dtype rules a program obeys (the array layer inserts the casts):
//   load          result dtype = the input view's dtype; imm = the input's index
//   constant      result dtype = dtype; imm = the value's bytes in that dtype (little end first)
//   cast          any dtype to any dtype (the conversions of docs/semantics.md)
//   unary and binary arithmetic (negative .. trunc, add .. maximum, clip, fma): operands have the
//                 result's dtype, which is never float16 or bfloat16 (those are computed in
//                 float32: the array layer casts up, operates, and casts back)
//   nextafter:    the exception to the above: float16 and bfloat16 operands are stepped in their own
//                 format (its result in float32 would round back to the operand)
//   comparisons, isnan, isinf, isfinite, signbit: operands of one dtype (not float16 / bfloat16),
//                 result bool
//   logical_*:    bool operands, bool result
//   bitwise_*, shifts: integer or bool operands of the result's dtype (shifts: integers only)
//   where:        a bool, b and c of the result's dtype (any dtype, float16 and bfloat16 included)
// Complex dtypes (complex64, complex128: a float32 / float64 pair, real part first):
//   cast          to and from every dtype: a real x becomes (x, 0) (x converted to the component
//                 type as a cast to it would); a complex z becomes its real part converted as from
//                 the component type (bool: re != 0 || im != 0); complex64 <-> complex128 by parts
//   real, imag, abs: complex operand, result of its component dtype (component_dtype)
//   conj, negative, sign, square, sqrt, exp, expm1, log, log1p, log2, log10, sin, cos, tan, asin,
//   acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, round (each part, half to even), add,
//   subtract, multiply, divide, pow: complex operands of the result's dtype
//   isnan, isinf, isfinite, equal, not_equal: complex operands of one dtype, bool result
//   complex:      two operands of the component dtype, complex result (how xp builds constants)
//   where:        b and c complex
// No other operation meets a complex operand.
enum class Op : std::uint8_t {
  load,
  constant,
  cast,
  // unary
  negative,
  abs,
  sign,
  square,
  sqrt,
  exp,
  expm1,
  log,
  log1p,
  log2,
  log10,
  sin,
  cos,
  tan,
  asin,
  acos,
  atan,
  sinh,
  cosh,
  tanh,
  acosh,
  asinh,
  atanh,
  floor,
  ceil,
  round,
  trunc,
  isnan,
  isinf,
  isfinite,
  signbit,  // float operands, bool result: the sign bit (of NaN and -0.0 too)
  logical_not,
  bitwise_invert,
  real,  // complex operand, its component dtype's result: the real part (exact)
  imag,  // complex operand, its component dtype's result: the imaginary part (exact)
  conj,  // complex operand and result: (re, -im) (exact)
  // binary
  add,
  subtract,
  multiply,
  divide,
  floor_divide,
  remainder,
  pow,
  atan2,
  hypot,
  copysign,   // a's magnitude with b's sign bit (exact)
  nextafter,  // the next value of a's dtype after a toward b (exact; float16 and bfloat16 too)
  minimum,
  maximum,
  equal,
  not_equal,
  less,
  less_equal,
  greater,
  greater_equal,
  logical_and,
  logical_or,
  logical_xor,
  bitwise_and,
  bitwise_or,
  bitwise_xor,
  left_shift,
  right_shift,
  complex,  // a + b*i: a and b of the result's component dtype (float32 for complex64), complex result
  // ternary
  where,  // a ? b : c
  clip,   // minimum(maximum(a, b), c), NaN propagating
  fma,    // a * b + c rounded once
  count_
};

constexpr int kOpCount = static_cast<int>(Op::count_);

constexpr bool is_complex(DType t) noexcept {
  return t == DType::complex64 || t == DType::complex128;
}
// The dtype of a complex dtype's parts (float32, float64); another dtype as it is.
constexpr DType component_dtype(DType t) noexcept {
  return t == DType::complex64 ? DType::float32 : t == DType::complex128 ? DType::float64 : t;
}

std::string_view op_name(Op op) noexcept;  // "add", "sqrt", ...
int op_arity(Op op) noexcept;              // 0 for load and constant, 1, 2 or 3

// One instruction of a fused program: its operands are earlier instructions (SSA).
struct Instr {
  Op op = Op::load;
  DType dtype = DType::float32;  // the result's dtype
  std::int32_t a = -1, b = -1, c = -1;
  std::uint64_t imm = 0;
};

// A fused elementwise program over one iteration shape: every input view and every output view
// has exactly `shape` (inputs broadcast with zero strides). Each output stores one instruction's
// result (cast to the output's dtype when they differ: a store converts like cast). Outputs never
// overlap inputs in a way that changes the result (the array layer copies such inputs first).
struct FusedProgram {
  std::vector<Instr> code;
  std::vector<View> inputs;
  std::vector<View> outputs;
  std::vector<std::int32_t> output_instr;  // which instruction each output stores
  int ndim = 0;
  const std::int64_t* shape = nullptr;
};

}  // namespace xp::detail
