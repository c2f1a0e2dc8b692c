#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "xp/export.hpp"

namespace xp {

// The element types of xp arrays. complex64 and complex128 hold a (real, imaginary) pair of
// float32 / float64, real part first, as std::complex, NumPy and CUDA lay them out.
enum class DType : std::uint8_t {
  bool_,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float16,
  bfloat16,
  float32,
  float64,
  complex64,
  complex128,
};

enum class DTypeKind : std::uint8_t { boolean, signed_integer, unsigned_integer, floating, complex_floating };

XP_API std::string_view name(DType t) noexcept;              // "float32", "bool", ...
XP_API std::ostream& operator<<(std::ostream& os, DType t);  // writes name(t)
XP_API std::optional<DType> parse_dtype(std::string_view name) noexcept;
XP_API std::size_t itemsize(DType t) noexcept;  // bytes
XP_API DTypeKind kind(DType t) noexcept;
// The dtype of a complex dtype's real and imaginary parts (float32 for complex64, float64 for
// complex128); any other dtype is returned as it is.
XP_API DType real_dtype(DType t) noexcept;
// The complex dtype whose parts are t or hold t's values as the promotion rules do: complex64 for
// bool, float16, bfloat16, float32, int8, uint8, int16, uint16 and complex64; complex128 for the
// rest.
XP_API DType complex_dtype(DType t) noexcept;

// Type promotion of two array dtypes, as NumPy 2 (the Python Array API table, and NumPy's answers
// where the standard is silent: integer with float, int64 with uint64, and bfloat16 as ml_dtypes
// promotes it). Documented in docs/semantics.md.
XP_API DType result_type(DType a, DType b) noexcept;

// A C++ scalar combined with an array is weak (NEP 50): the array's dtype wins within the scalar's
// kind. `value_fits` checks an integer scalar against an integer dtype (uint8 + 300 is an error).
// A complex scalar lifts a real array to the complex dtype of its float type (float32 -> complex64,
// integers and float64 -> complex128; float16 and bfloat16 -> complex64).
enum class ScalarKind : std::uint8_t { boolean, integer, floating, complex };
XP_API DType result_type(DType array, ScalarKind scalar) noexcept;
XP_API bool value_fits(DType t, long long value) noexcept;
XP_API bool value_fits(DType t, unsigned long long value) noexcept;

// The Array API's dtype functions.
// Whether `from` converts to `to` under the promotion rules (result_type(from, to) == to): bool to
// anything, within a kind to a wider type, integers to floats that hold them; never float to integer.
XP_API bool can_cast(DType from, DType to) noexcept;
// Facts of a floating dtype (ValueError for another): bits, eps (the gap above 1), the largest finite
// value, the smallest (its negative), the smallest positive normal number. For a complex dtype, the
// facts of its real and imaginary parts (finfo(complex64) is finfo(float32), dtype float32 too), as
// the standard says.
struct FInfo {
  int bits;
  double eps, max, min, smallest_normal;
  DType dtype;
};
XP_API FInfo finfo(DType t);
// Facts of an integer dtype (ValueError for another): bits and the range; uint64's max is 2^64 - 1.
struct IInfo {
  int bits;
  long long min;
  unsigned long long max;
  DType dtype;
};
XP_API IInfo iinfo(DType t);
// Whether t is of a kind, the standard's names: "bool", "signed integer", "unsigned integer",
// "integral", "real floating" (float16 and bfloat16 too), "complex floating", "numeric";
// or of any of several kinds. An unknown kind is a ValueError naming it.
XP_API bool isdtype(DType t, std::string_view kind);
XP_API bool isdtype(DType t, std::initializer_list<std::string_view> kinds);

// xp's own 16-bit floating storage types: conversion from float rounds to nearest, ties to even;
// arithmetic is done in float32 and rounded back after every operation.
struct float16 {
  std::uint16_t bits = 0;
  float16() = default;
  explicit float16(float f) noexcept;
  explicit operator float() const noexcept;
  static float16 from_bits(std::uint16_t b) noexcept {
    float16 h;
    h.bits = b;
    return h;
  }
};
struct bfloat16 {
  std::uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) noexcept;
  explicit operator float() const noexcept;
  static bfloat16 from_bits(std::uint16_t b) noexcept {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

XP_API std::uint16_t float_to_half_bits(float f) noexcept;
XP_API float half_bits_to_float(std::uint16_t h) noexcept;
XP_API std::uint16_t float_to_bfloat16_bits(float f) noexcept;
XP_API float bfloat16_bits_to_float(std::uint16_t h) noexcept;

inline float16::float16(float f) noexcept : bits(float_to_half_bits(f)) {}
inline float16::operator float() const noexcept {
  return half_bits_to_float(bits);
}
inline bfloat16::bfloat16(float f) noexcept : bits(float_to_bfloat16_bits(f)) {}
inline bfloat16::operator float() const noexcept {
  return bfloat16_bits_to_float(bits);
}

}  // namespace xp
