// DTypes: names, sizes, type promotion (NumPy 2, NEP 50 for C++ scalars) and xp's own 16-bit
// floating storage types. The rules are written down in docs/semantics.md; tests/test_dtype.cpp
// checks every answer here against NumPy 2 and ml_dtypes (tests/ref/dtype_reference.py).
#include "xp/dtype.hpp"

#include <array>
#include <cstring>
#include <ostream>
#include <span>
#include <string>
#include <utility>

#include "xp/error.hpp"

namespace xp {

namespace {

constexpr std::size_t kNumDTypes = 15;

constexpr std::size_t idx(DType t) noexcept {
  return static_cast<std::size_t>(t);
}

struct DTypeInfo {
  std::string_view name;
  std::size_t itemsize;
  DTypeKind kind;
};

// In DType's order.
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"bool", 1, DTypeKind::boolean},
    {"int8", 1, DTypeKind::signed_integer},
    {"int16", 2, DTypeKind::signed_integer},
    {"int32", 4, DTypeKind::signed_integer},
    {"int64", 8, DTypeKind::signed_integer},
    {"uint8", 1, DTypeKind::unsigned_integer},
    {"uint16", 2, DTypeKind::unsigned_integer},
    {"uint32", 4, DTypeKind::unsigned_integer},
    {"uint64", 8, DTypeKind::unsigned_integer},
    {"float16", 2, DTypeKind::floating},
    {"bfloat16", 2, DTypeKind::floating},
    {"float32", 4, DTypeKind::floating},
    {"float64", 8, DTypeKind::floating},
    {"complex64", 8, DTypeKind::complex_floating},
    {"complex128", 16, DTypeKind::complex_floating},
}};

// np.result_type(row, column) under NumPy 2.4 with ml_dtypes 0.7 (bfloat16), copied from
// `tests/ref/dtype_reference.py markdown`; test_dtype compares it with NumPy's live answers.
// Worth noticing: int64 + uint64 -> float64; int8/uint8 + float16 -> float16 but int16/uint16 ->
// float32 and 32/64-bit integers -> float64; float16 + bfloat16 -> float32 (neither holds the other).
constexpr DType b_ = DType::bool_, i1 = DType::int8, i2 = DType::int16, i4 = DType::int32, i8 = DType::int64,
                u1 = DType::uint8, u2 = DType::uint16, u4 = DType::uint32, u8 = DType::uint64, f2 = DType::float16,
                bf = DType::bfloat16, f4 = DType::float32, f8 = DType::float64, c8 = DType::complex64,
                c16 = DType::complex128;
constexpr std::array<std::array<DType, kNumDTypes>, kNumDTypes> kPromotion = {{
    //  bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 f16 bf16 f32 f64 c64 c128
    {b_, i1, i2, i4, i8, u1, u2, u4, u8, f2, bf, f4, f8, c8, c16},                // bool
    {i1, i1, i2, i4, i8, i2, i4, i8, f8, f2, bf, f4, f8, c8, c16},                // int8
    {i2, i2, i2, i4, i8, i2, i4, i8, f8, f4, f4, f4, f8, c8, c16},                // int16
    {i4, i4, i4, i4, i8, i4, i4, i8, f8, f8, f8, f8, f8, c16, c16},               // int32
    {i8, i8, i8, i8, i8, i8, i8, i8, f8, f8, f8, f8, f8, c16, c16},               // int64
    {u1, i2, i2, i4, i8, u1, u2, u4, u8, f2, bf, f4, f8, c8, c16},                // uint8
    {u2, i4, i4, i4, i8, u2, u2, u4, u8, f4, f4, f4, f8, c8, c16},                // uint16
    {u4, i8, i8, i8, i8, u4, u4, u4, u8, f8, f8, f8, f8, c16, c16},               // uint32
    {u8, f8, f8, f8, f8, u8, u8, u8, u8, f8, f8, f8, f8, c16, c16},               // uint64
    {f2, f2, f4, f8, f8, f2, f4, f8, f8, f2, f4, f4, f8, c8, c16},                // float16
    {bf, bf, f4, f8, f8, bf, f4, f8, f8, f4, bf, f4, f8, c8, c16},                // bfloat16
    {f4, f4, f4, f8, f8, f4, f4, f8, f8, f4, f4, f4, f8, c8, c16},                // float32
    {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c16, c16},               // float64
    {c8, c8, c8, c16, c16, c8, c8, c16, c16, c8, c8, c8, c16, c8, c16},           // complex64
    {c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16},  // complex128
}};

std::uint32_t float_bits(float f) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(std::uint32_t u) noexcept {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

template <class V>
bool fits(DType t, V v) noexcept {
  switch (t) {
    case DType::bool_:
      return v == 0 || v == 1;
    case DType::int8:
      return std::in_range<std::int8_t>(v);
    case DType::int16:
      return std::in_range<std::int16_t>(v);
    case DType::int32:
      return std::in_range<std::int32_t>(v);
    case DType::int64:
      return std::in_range<std::int64_t>(v);
    case DType::uint8:
      return std::in_range<std::uint8_t>(v);
    case DType::uint16:
      return std::in_range<std::uint16_t>(v);
    case DType::uint32:
      return std::in_range<std::uint32_t>(v);
    case DType::uint64:
      return std::in_range<std::uint64_t>(v);
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::float64:
    case DType::complex64:
    case DType::complex128:
      return true;  // a float array takes any integer (float16 + 100000 is inf, as NumPy)
  }
  return false;
}

}  // namespace

std::string_view name(DType t) noexcept {
  return idx(t) < kNumDTypes ? kInfo[idx(t)].name : "invalid";
}

std::ostream& operator<<(std::ostream& os, DType t) {
  return os << name(t);
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kNumDTypes; ++i) {
    if (kInfo[i].name == name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

std::size_t itemsize(DType t) noexcept {
  return idx(t) < kNumDTypes ? kInfo[idx(t)].itemsize : 0;
}

DTypeKind kind(DType t) noexcept {
  return idx(t) < kNumDTypes ? kInfo[idx(t)].kind : DTypeKind::floating;
}

DType real_dtype(DType t) noexcept {
  if (t == DType::complex64) return DType::float32;
  if (t == DType::complex128) return DType::float64;
  return t;
}

DType complex_dtype(DType t) noexcept {
  return result_type(t, DType::complex64);
}

DType result_type(DType a, DType b) noexcept {
  if (idx(a) >= kNumDTypes || idx(b) >= kNumDTypes) return DType::float64;
  return kPromotion[idx(a)][idx(b)];
}

namespace detail {
// NumPy 2 promotes all the dtypes of one operation at once, not pairwise in argument order: the
// floating dtypes first (among them the table is associative), then the others folded into that.
// So int8, uint8 and float16 give float16 (pairwise: int8 + uint8 -> int16, then float32), and
// uint16, int16, float16 give float32 (pairwise: float64), as np.result_type of all of them.
DType result_type_all(std::span<const DType> dtypes) noexcept {
  if (dtypes.empty()) return DType::float64;
  bool any = false;
  DType r = DType::bool_;
  for (int pass = 0; pass < 2; ++pass) {
    for (DType t : dtypes) {
      const bool inexact = kind(t) == DTypeKind::floating || kind(t) == DTypeKind::complex_floating;
      if (inexact != (pass == 0)) continue;
      r = any ? result_type(r, t) : t;
      any = true;
    }
  }
  return r;
}
}  // namespace detail

// NEP 50: a Python (here C++) scalar is weak, so the array's dtype wins unless the scalar's kind is
// "higher": an int scalar lifts a bool array to the default integer, a float scalar lifts a bool or
// integer array to the default float. Whether the value fits is value_fits' job.
DType result_type(DType array, ScalarKind scalar) noexcept {
  switch (scalar) {
    case ScalarKind::boolean:
      return array;
    case ScalarKind::integer:
      return kind(array) == DTypeKind::boolean ? DType::int64 : array;
    case ScalarKind::floating:
      return kind(array) == DTypeKind::floating || kind(array) == DTypeKind::complex_floating ? array : DType::float64;
    case ScalarKind::complex:
      // NumPy 2: float32 + 1j is complex64, float16 too (there is no complex32); integers and bool
      // take the default complex128.
      if (kind(array) == DTypeKind::complex_floating) return array;
      return kind(array) == DTypeKind::floating ? complex_dtype(array) : DType::complex128;
  }
  return array;
}

bool value_fits(DType t, long long value) noexcept {
  return fits(t, value);
}
bool value_fits(DType t, unsigned long long value) noexcept {
  return fits(t, value);
}

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. Integer arithmetic only, so the
// result never depends on the floating-point environment or on compiler support for _Float16.
std::uint16_t float_to_half_bits(float f) noexcept {
  const std::uint32_t x = float_bits(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) {  // NaN: quiet, sign and the top of the payload kept
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((ax >> 13) & 0x03FFu));
  }
  // 65520 is halfway between 65504 (max finite, odd significand) and 65536: ties go up to infinity.
  if (ax >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (ax >= 0x38800000u) {  // a normal half (>= 2^-14): rebias the exponent, round off 13 bits
    std::uint32_t v = ax - 0x38000000u;
    v += 0x0FFFu + ((v >> 13) & 1u);  // a carry may step into the exponent: that is correct
    return static_cast<std::uint16_t>(sign | (v >> 13));
  }
  // A subnormal half counts units of 2^-24. ax = m * 2^(e - 150) with m's hidden bit set, so the
  // count is m >> (126 - e), rounded to nearest even. Below 2^-25 (e < 102) everything rounds to 0.
  const std::uint32_t e = ax >> 23;
  if (e < 102) return sign;
  const std::uint32_t m = (ax & 0x007FFFFFu) | 0x00800000u;
  const std::uint32_t shift = 126 - e;  // 14 .. 24
  std::uint32_t q = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;  // q may reach 0x400, the smallest normal
  return static_cast<std::uint16_t>(sign | q);
}

float half_bits_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1Fu;
  std::uint32_t m = h & 0x03FFu;
  if (e == 0x1F) {  // infinity, or NaN made quiet with its payload kept
    return bits_float(m == 0 ? (sign | 0x7F800000u) : (sign | 0x7FC00000u | (m << 13)));
  }
  if (e != 0) return bits_float(sign | ((e + 112) << 23) | (m << 13));
  if (m == 0) return bits_float(sign);
  // Subnormal: m * 2^-24, normal in float32. Shift the leading one up to the hidden bit.
  std::uint32_t exp = 113;  // the exponent of 2^-14, the smallest normal half
  while ((m & 0x0400u) == 0) {
    m <<= 1;
    --exp;
  }
  return bits_float(sign | (exp << 23) | ((m & 0x03FFu) << 13));
}

// bfloat16 is the top half of a float32: round the low 16 bits off, to nearest even. Overflow
// carries into the exponent and lands on infinity; subnormals round like everything else.
std::uint16_t float_to_bfloat16_bits(float f) noexcept {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  const std::uint32_t rounded = x + 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

float bfloat16_bits_to_float(std::uint16_t h) noexcept {
  std::uint32_t x = static_cast<std::uint32_t>(h) << 16;
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) x |= 0x00400000u;  // NaN made quiet, as the hardware does
  return bits_float(x);
}

}  // namespace xp

namespace xp {

bool can_cast(DType from, DType to) noexcept {
  return result_type(from, to) == to;
}

FInfo finfo(DType t) {
  switch (real_dtype(t)) {
    case DType::float16:
      return {16, 0x1p-10, 65504.0, -65504.0, 0x1p-14, DType::float16};
    case DType::bfloat16:
      return {16, 0x1p-7, 0x1.FEp127, -0x1.FEp127, 0x1p-126, DType::bfloat16};
    case DType::float32:
      return {32, 0x1p-23, 0x1.FFFFFEp127, -0x1.FFFFFEp127, 0x1p-126, DType::float32};
    case DType::float64:
      return {64, 0x1p-52, 0x1.FFFFFFFFFFFFFp1023, -0x1.FFFFFFFFFFFFFp1023, 0x1p-1022, DType::float64};
    default:
      throw ValueError("finfo: " + std::string(name(t)) + " is not a floating dtype");
  }
}

IInfo iinfo(DType t) {
  const int bits = static_cast<int>(itemsize(t)) * 8;
  if (kind(t) == DTypeKind::signed_integer) {
    const unsigned long long max = (1ull << (bits - 1)) - 1;
    return {bits, -static_cast<long long>(max) - 1, max, t};
  }
  if (kind(t) == DTypeKind::unsigned_integer) return {bits, 0, bits == 64 ? ~0ull : (1ull << bits) - 1, t};
  throw ValueError("iinfo: " + std::string(name(t)) + " is not an integer dtype");
}

bool isdtype(DType t, std::string_view k) {
  const DTypeKind c = kind(t);
  if (k == "bool") return c == DTypeKind::boolean;
  if (k == "signed integer") return c == DTypeKind::signed_integer;
  if (k == "unsigned integer") return c == DTypeKind::unsigned_integer;
  if (k == "integral") return c == DTypeKind::signed_integer || c == DTypeKind::unsigned_integer;
  if (k == "real floating") return c == DTypeKind::floating;
  if (k == "complex floating") return c == DTypeKind::complex_floating;
  if (k == "numeric") return c != DTypeKind::boolean;
  throw ValueError("isdtype: unknown kind '" + std::string(k) +
                   "' (the kinds: 'bool', 'signed integer', 'unsigned integer', 'integral', 'real floating', "
                   "'complex floating', 'numeric')");
}

bool isdtype(DType t, std::initializer_list<std::string_view> kinds) {
  bool any = false;
  for (std::string_view k : kinds) any = isdtype(t, k) || any;  // every kind checked: an unknown one is an error
  return any;
}

}  // namespace xp
