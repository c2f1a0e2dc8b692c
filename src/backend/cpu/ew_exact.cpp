// Over 800 lines on purpose: the element operations, their loops and the dispatch table that
// instantiates them are one set of templates; split, the templates would move into a header.
//
// The exactly rounded and integer tile kernels: casts, integer arithmetic, comparisons, selection.
// docs/semantics.md is the contract; tests/test_cpu_exact.cpp checks it against NumPy 2.
//
// Rules every kernel here keeps:
// - No C++ undefined behaviour for any input bits: integer arithmetic is done in an unsigned type
//   at least as wide as int (no signed overflow, no promotion of uint16 * uint16 to int), shifts
//   check their count, float-to-integer conversions clamp before converting, bool bytes are read
//   as uint8_t (a byte is true when it is nonzero) and every bool written is 0 or 1.
// - One computation per element, the same for every element of a tile: a loop has no separately
//   written tail (or pads the tail to a whole vector), so an element's bits never depend on n or
//   on its position.
// - Exactly rounded float operations only (+ - * / sqrt fma, conversions), under the default
//   rounding mode; no library call whose result could differ between machines.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "backend/cpu/tile_ops.hpp"

namespace xp::detail::cpu {
namespace {

using std::int64_t;
using std::uint16_t;
using std::uint32_t;
using std::uint64_t;
using std::uint8_t;

// ---- storage types and dtype classes ----

// The C++ type an element is stored as: bool as a byte (never read as C++ bool, for which any
// other byte than 0 or 1 would be undefined), the 16-bit floats as their bits.
template <DType D>
auto storage() {
  if constexpr (D == DType::bool_ || D == DType::uint8)
    return uint8_t{};
  else if constexpr (D == DType::int8)
    return std::int8_t{};
  else if constexpr (D == DType::int16)
    return std::int16_t{};
  else if constexpr (D == DType::int32)
    return std::int32_t{};
  else if constexpr (D == DType::int64)
    return std::int64_t{};
  else if constexpr (D == DType::uint16 || D == DType::float16 || D == DType::bfloat16)
    return uint16_t{};
  else if constexpr (D == DType::uint32)
    return uint32_t{};
  else if constexpr (D == DType::uint64)
    return uint64_t{};
  else if constexpr (D == DType::float32)
    return float{};
  else
    return double{};
}
template <DType D>
using S = decltype(storage<D>());

constexpr bool is_bool(DType d) {
  return d == DType::bool_;
}
constexpr bool is_half(DType d) {
  return d == DType::float16 || d == DType::bfloat16;
}
constexpr bool is_float(DType d) {  // the float types arithmetic sees
  return d == DType::float32 || d == DType::float64;
}

// The unsigned type integer arithmetic on T is done in: T's own width, but never narrower than
// unsigned int (uint8/uint16 operands would otherwise be promoted to a signed int).
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
constexpr T wrap(Wide<T> v) {
  return static_cast<T>(v);  // modular since C++20
}

// ---- vectors of 16 bytes (SSE2), for the loops that select between float results ----
// With -ftrapping-math (the default) GCC moves a float operation whose result only one side of a
// ?: uses into that side, and then cannot vectorize the branch. Written with vector types, both
// sides are computed for every lane and a mask picks one; the scalar forms below are lane 0.

template <class T>
struct Vec;
template <>
struct Vec<float> {
  typedef float V __attribute__((vector_size(16)));
  typedef uint32_t U __attribute__((vector_size(16)));
  typedef std::int32_t I __attribute__((vector_size(16)));
  static constexpr uint32_t kSign = 0x80000000u;
};
template <>
struct Vec<double> {
  typedef double V __attribute__((vector_size(16)));
  typedef uint64_t U __attribute__((vector_size(16)));
  typedef std::int64_t I __attribute__((vector_size(16)));
  static constexpr uint64_t kSign = 0x8000000000000000ull;
};

// Lanes of a where m is all ones, else of b.
template <class U>
U select(U m, U a, U b) {
  return (a & m) | (b & ~m);
}

// float16 bits (in 32-bit lanes) -> float32 bits; the same bits as xp::half_bits_to_float.
inline Vec<float>::U half_to_float(Vec<float>::U h) {
  using U = Vec<float>::U;
  using V = Vec<float>::V;
  const U sign = (h & 0x8000u) << 16;
  const U o = (h & 0x7FFFu) << 13;
  const U exp = o & 0x0F800000u;
  const U normal = o + 0x38000000u;                                              // rebias 15 -> 127
  const U special = (o + 0x70000000u) | (U)(((o & 0x7FFFFFu) != 0) & 0x400000);  // inf, quiet NaN
  // Subnormal: m * 2^-24 = (2^-14 + m * 2^-24) - 2^-14, exact in float32.
  const U sub = (U)((V)(o + 0x38800000u) - 0x1p-14f);
  return select((U)(exp == 0x0F800000u), special, select((U)(exp == 0), sub, normal)) | sign;
}

// float32 bits -> float16 bits (in 32-bit lanes), to nearest even; as xp::float_to_half_bits.
inline Vec<float>::U float_to_half(Vec<float>::U x) {
  using U = Vec<float>::U;
  using I = Vec<float>::I;
  using V = Vec<float>::V;
  const U sign = (x >> 16) & 0x8000u;
  const I ax = (I)(x & 0x7FFFFFFFu);                  // signed compares are SSE2's, and ax < 2^31
  const U nan = 0x7E00u | (((U)ax >> 13) & 0x03FFu);  // quiet, the top of the payload kept
  const U v = (U)ax - 0x38000000u;                    // rebias; used only when ax >= 2^-14
  const U normal = (v + 0x0FFFu + ((v >> 13) & 1u)) >> 13;
  // Below 2^-14: adding 0.5 rounds to a multiple of 2^-24 (to nearest even), whose count is the
  // low bits of the sum.
  const U sub = (U)((V)ax + 0.5f) - 0x3F000000u;
  const U finite = select((U)(ax >= 0x477FF000), U{} + 0x7C00u, select((U)(ax >= 0x38800000), normal, sub));
  return select((U)(ax > 0x7F800000), nan, finite) | sign;
}

inline float half_to_float(uint16_t h) {
  return std::bit_cast<float>(half_to_float(Vec<float>::U{h})[0]);
}
inline uint16_t float_to_half(float f) {
  return static_cast<uint16_t>(float_to_half(Vec<float>::U{std::bit_cast<uint32_t>(f)})[0]);
}

inline float bfloat16_to_float(uint16_t h) {
  const uint32_t x = static_cast<uint32_t>(h) << 16;
  return std::bit_cast<float>((x & 0x7FFFFFFFu) > 0x7F800000u ? (x | 0x400000u) : x);
}

inline uint16_t float_to_bfloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>((x & 0x7FFFFFFFu) > 0x7F800000u ? ((x >> 16) | 0x40u) : rounded);
}

// float64 -> 16 bits in one rounding (through float32 would round twice). P: the 16-bit format's
// fraction bits (10 or 7), E: its exponent bias (15 or 127).
template <int P, int E>
uint16_t double_to_16(double d) {
  constexpr int kDrop = 52 - P;                                  // fraction bits rounded off
  constexpr uint64_t kMinNormal = uint64_t(1023 - E + 1) << 52;  // the format's smallest normal
  constexpr uint32_t kInf = ((1u << (15 - P)) - 1u) << P;
  const uint64_t x = std::bit_cast<uint64_t>(d);
  const auto sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  const uint64_t ax = x & 0x7FFFFFFFFFFFFFFFull;
  if (ax > 0x7FF0000000000000ull) {  // NaN: quiet, the top of the payload kept
    return static_cast<uint16_t>(sign | kInf | (1u << (P - 1)) | ((ax >> kDrop) & ((1u << P) - 1u)));
  }
  // Halfway between the largest finite value and the next power of two: from there up, infinity.
  constexpr uint64_t kOverflow = (uint64_t(1023 + E) << 52) | (((1ull << (P + 1)) - 1) << (kDrop - 1));
  if (ax >= kOverflow) return static_cast<uint16_t>(sign | kInf);
  if (ax >= kMinNormal) {
    const uint64_t v = ax - (uint64_t(1023 - E) << 52);
    return static_cast<uint16_t>(sign | ((v + ((1ull << (kDrop - 1)) - 1) + ((v >> kDrop) & 1)) >> kDrop));
  }
  // Subnormal: count units of 2^(1 - E - P), rounded to nearest even; below half a unit, 0.
  const int e = static_cast<int>(ax >> 52);
  const int shift = (1075 + 1 - E - P) - e;  // ax = m * 2^(e - 1075)
  if (shift > 53) return sign;
  const uint64_t m = (ax & 0xFFFFFFFFFFFFFull) | (1ull << 52);  // e >= 1 here: no double subnormal
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((1ull << shift) - 1);
  const uint64_t half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;  // may carry into the smallest normal: correct
  return static_cast<uint16_t>(sign | q);
}

// A 64-bit integer as a double rounded to odd: with 53 >= 11 + 2 bits, rounding that to a 16-bit
// format afterwards gives the correctly rounded result (no double-rounding error).
inline double u64_to_double_odd(uint64_t u) {
  if (u < (1ull << 53)) return static_cast<double>(u);
  const int s = 11 - std::countl_zero(u);  // 1 .. 11 bits to drop
  const uint64_t v = (u >> s) | ((u & ((1ull << s) - 1)) != 0 ? 1u : 0u);
  return std::ldexp(static_cast<double>(v), s);
}
template <class I>
double int_to_double_odd(I x) {
  if constexpr (sizeof(I) < 8) {
    return static_cast<double>(x);  // exact
  } else if constexpr (std::is_unsigned_v<I>) {
    return u64_to_double_odd(x);
  } else {
    const uint64_t mag = x < 0 ? uint64_t(0) - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
    const double d = u64_to_double_odd(mag);
    return x < 0 ? -d : d;
  }
}

// ---- float -> integer: NaN -> 0, beyond the range saturated, else truncated toward zero ----

template <class I, class F>
I float_to_int(F x) {
  // Both bounds are exact in F: 0 or -2^(bits-1), and 2^bits or 2^(bits-1).
  constexpr F lo = static_cast<F>(std::numeric_limits<I>::min());
  constexpr F hi = F(2) * static_cast<F>(uint64_t(1) << (std::numeric_limits<I>::digits - 1));
  if (!(x == x)) return 0;
  if (x >= hi) return std::numeric_limits<I>::max();
  if (x <= lo) return std::numeric_limits<I>::min();
  return static_cast<I>(x);  // lo < x < hi: the truncated value fits
}

// ---- conversion of one element ----

template <DType From>
float half_in(S<From> x) {
  if constexpr (From == DType::float16)
    return half_to_float(x);
  else
    return bfloat16_to_float(x);
}

template <DType To>
S<To> from_float(float f) {
  if constexpr (To == DType::float16)
    return float_to_half(f);
  else
    return float_to_bfloat16(f);
}

template <DType To>
S<To> from_double(double d) {
  if constexpr (To == DType::float16)
    return double_to_16<10, 15>(d);
  else
    return double_to_16<7, 127>(d);
}

template <DType From>
bool nonzero(S<From> x) {
  if constexpr (is_half(From))
    return (x & 0x7FFFu) != 0;  // NaN is true
  else
    return x != 0;  // floats: NaN != 0 is true
}

template <DType From, DType To>
S<To> convert(S<From> x) {
  if constexpr (To == DType::bool_) {
    return nonzero<From>(x) ? 1 : 0;
  } else if constexpr (From == DType::bool_) {
    if constexpr (To == DType::float16)
      return x != 0 ? 0x3C00 : 0;
    else if constexpr (To == DType::bfloat16)
      return x != 0 ? 0x3F80 : 0;
    else
      return x != 0 ? S<To>(1) : S<To>(0);
  } else if constexpr (From == To) {
    return x;
  } else if constexpr (is_half(From)) {
    return convert<DType::float32, To>(half_in<From>(x));  // exact widening first
  } else if constexpr (is_half(To)) {
    if constexpr (From == DType::float32)
      return from_float<To>(x);
    else if constexpr (From == DType::float64)
      return from_double<To>(x);
    else if constexpr (sizeof(S<From>) <= 2)
      return from_float<To>(static_cast<float>(x));  // exact
    else
      return from_double<To>(int_to_double_odd(x));
  } else if constexpr (is_float(To)) {
    return static_cast<S<To>>(x);  // to nearest even
  } else if constexpr (is_float(From)) {
    return float_to_int<S<To>>(x);
  } else {
    return static_cast<S<To>>(x);  // integers: modular
  }
}

// ---- the operations on one element ----
// T is the storage type; for bool operands the kernels pass normalized bytes (0 or 1) as uint8_t.

// floor, ceil, round (half to even) and trunc of every lane. From 2^(digits-1) up every float is
// an integer; below, adding and subtracting 2^(digits-1) rounds |x| to an integer, ties to even,
// in the default rounding mode. floor, ceil and trunc step from there by one, and all four put x's
// sign back at the end (round(-0.3) = -0.0, ceil(-0.7) = -0.0); NaN passes through.
template <Op O, class T>
typename Vec<T>::V round_family(typename Vec<T>::V x) {
  using V = typename Vec<T>::V;
  using U = typename Vec<T>::U;
  constexpr auto kSign = Vec<T>::kSign;
  constexpr T big = static_cast<T>(uint64_t(1) << (std::numeric_limits<T>::digits - 1));
  const U one = (U)(V{} + T(1));
  const U sign = (U)x & kSign;
  const V m = (V)((U)x & ~kSign);
  V r = (V)select((U)(m < big), (U)((m + big) - big), (U)m);
  if constexpr (O == Op::trunc) {
    r -= (V)((U)(r > m) & one);
  } else if constexpr (O == Op::floor) {
    const V s = (V)((U)r | sign);
    r = s - (V)((U)(s > x) & one);
  } else if constexpr (O == Op::ceil) {
    const V s = (V)((U)r | sign);
    r = s + (V)((U)(s < x) & one);
  }
  return (V)(((U)r & ~kSign) | sign);
}

// NumPy's npy_divmod: fmod, then the quotient and the remainder adjusted to Python's convention
// (remainder with the divisor's sign, quotient snapped to an integer), signs of zeros included.
template <class T>
T float_divmod(T a, T b, T& mod) {
  mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1;
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  if (div == 0) return std::copysign(T(0), a / b);
  const T floordiv = std::floor(div);
  return div - floordiv > T(0.5) ? floordiv + 1 : floordiv;
}

// C's nextafter written out on the bits (and so the same on every device): NaN if either is NaN,
// b if a == b (+0 and -0 too), the smallest subnormal of b's sign from a zero, else one step of a's
// magnitude up or down.
template <class T>
T next_after(T a, T b) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  if (a != a || b != b) return a + b;
  if (a == b) return b;
  if (a == 0) return std::copysign(std::numeric_limits<T>::denorm_min(), b);
  const U u = std::bit_cast<U>(a);
  return std::bit_cast<T>(((a < b) == (a > 0)) ? U(u + 1) : U(u - 1));
}

// The same on float16 (BF false) or bfloat16 bits, compared through float32 (exact); a NaN result is
// the format's default quiet NaN. Of two equal values (+0 and -0) b, as C, ml_dtypes and NumPy
// 2.5's half loop do (before 2.5 NumPy's float16 gave a).
template <bool BF>
uint16_t next_after_16(uint16_t a, uint16_t b) {
  const float fa = BF ? bfloat16_to_float(a) : half_to_float(a);
  const float fb = BF ? bfloat16_to_float(b) : half_to_float(b);
  if (fa != fa || fb != fb) return BF ? 0x7FC0u : 0x7E00u;
  if (fa == fb) return b;
  if ((a & 0x7FFFu) == 0) return static_cast<uint16_t>((b & 0x8000u) | 1u);
  return static_cast<uint16_t>(((fa < fb) == (fa > 0)) ? a + 1u : a - 1u);
}

template <bool BF>
void next_after_16_kernel(const void* const* in, void* out, int64_t n) {
  const auto* a = static_cast<const uint16_t*>(in[0]);
  const auto* b = static_cast<const uint16_t*>(in[1]);
  auto* r = static_cast<uint16_t*>(out);
  for (int64_t i = 0; i < n; ++i) r[i] = next_after_16<BF>(a[i], b[i]);
}

template <Op O, class T>
auto apply(T a) {
  constexpr bool fp = std::is_floating_point_v<T>;
  if constexpr (O == Op::negative) {
    if constexpr (fp)
      return -a;
    else
      return wrap<T>(Wide<T>(0) - Wide<T>(a));  // negative(INT_MIN) = INT_MIN
  } else if constexpr (O == Op::abs) {
    if constexpr (fp)
      return std::fabs(a);
    else if constexpr (std::is_signed_v<T>)
      return a < 0 ? apply<Op::negative>(a) : a;
    else
      return a;
  } else if constexpr (O == Op::sign) {
    if constexpr (fp)
      return a > 0 ? T(1) : (a < 0 ? T(-1) : (a == 0 ? T(0) : a));  // NaN stays, -0 -> +0
    else
      return static_cast<T>((a > 0) - (a < 0));
  } else if constexpr (O == Op::square) {
    if constexpr (fp)
      return a * a;
    else
      return wrap<T>(Wide<T>(a) * Wide<T>(a));
  } else if constexpr (O == Op::floor || O == Op::ceil || O == Op::round || O == Op::trunc) {
    if constexpr (fp)
      return round_family<O, T>(typename Vec<T>::V{a})[0];
    else
      return a;
  } else if constexpr (O == Op::isnan) {
    if constexpr (fp)
      return uint8_t(a != a);
    else
      return uint8_t(0);
  } else if constexpr (O == Op::isinf) {
    if constexpr (fp)
      return uint8_t(std::fabs(a) == std::numeric_limits<T>::infinity());
    else
      return uint8_t(0);
  } else if constexpr (O == Op::isfinite) {
    if constexpr (fp)
      return uint8_t(std::fabs(a) < std::numeric_limits<T>::infinity());
    else
      return uint8_t(1);
  } else if constexpr (O == Op::signbit) {
    if constexpr (fp)
      return uint8_t(std::signbit(a) ? 1 : 0);
    else
      return uint8_t(a < 0);
  } else if constexpr (O == Op::logical_not) {
    return uint8_t(a == 0);
  } else {
    static_assert(O == Op::bitwise_invert);
    return wrap<T>(~Wide<T>(a));
  }
}

template <Op O, class T>
auto apply(T a, T b) {
  constexpr bool fp = std::is_floating_point_v<T>;
  if constexpr (O == Op::add) {
    if constexpr (fp)
      return a + b;
    else
      return wrap<T>(Wide<T>(a) + Wide<T>(b));
  } else if constexpr (O == Op::subtract) {
    if constexpr (fp)
      return a - b;
    else
      return wrap<T>(Wide<T>(a) - Wide<T>(b));
  } else if constexpr (O == Op::multiply) {
    if constexpr (fp)
      return a * b;
    else
      return wrap<T>(Wide<T>(a) * Wide<T>(b));  // never uint16 * uint16 in a signed int
  } else if constexpr (O == Op::divide) {
    return a / b;
  } else if constexpr (O == Op::floor_divide) {
    if constexpr (fp) {
      T mod;
      return b == 0 ? a / b : float_divmod(a, b, mod);
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return apply<Op::negative>(a);  // INT_MIN // -1 wraps to INT_MIN
        const T q = static_cast<T>(a / b);
        return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
      }
      return static_cast<T>(a / b);
    }
  } else if constexpr (O == Op::remainder) {
    if constexpr (fp) {
      T mod = std::fmod(a, b);
      if (b != 0) float_divmod(a, b, mod);
      return mod;
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return T(0);  // INT_MIN % -1 would trap
        const T r = static_cast<T>(a % b);
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
      }
      return static_cast<T>(a % b);
    }
  } else if constexpr (O == Op::pow) {
    // By squaring, wrapping. A negative exponent (NumPy raises; a fused kernel cannot): 1 for
    // base 1, (-1)^e for base -1, else 0 (the real result truncated; 0 for base 0 too).
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) return a == 1 ? T(1) : (a == -1 ? ((b & 1) != 0 ? T(-1) : T(1)) : T(0));
    }
    Wide<T> base = Wide<T>(a), r = 1;
    for (Wide<T> e = Wide<T>(b); e != 0; e >>= 1) {
      if ((e & 1) != 0) r *= base;
      base *= base;
    }
    return wrap<T>(r);
  } else if constexpr (O == Op::copysign) {
    return std::copysign(a, b);  // bits only: exact
  } else if constexpr (O == Op::nextafter) {
    return next_after(a, b);
  } else if constexpr (O == Op::minimum) {  // NaN propagating; of +0 and -0 the second, as NumPy
    if constexpr (fp)
      return (a < b || a != a) ? a : b;
    else
      return a < b ? a : b;
  } else if constexpr (O == Op::maximum) {
    if constexpr (fp)
      return (a > b || a != a) ? a : b;
    else
      return a > b ? a : b;
  } else if constexpr (O == Op::equal) {
    return uint8_t(a == b);
  } else if constexpr (O == Op::not_equal) {
    return uint8_t(a != b);
  } else if constexpr (O == Op::less) {
    return uint8_t(a < b);
  } else if constexpr (O == Op::less_equal) {
    return uint8_t(a <= b);
  } else if constexpr (O == Op::greater) {
    return uint8_t(a > b);
  } else if constexpr (O == Op::greater_equal) {
    return uint8_t(a >= b);
  } else if constexpr (O == Op::bitwise_and) {
    return static_cast<T>(a & b);
  } else if constexpr (O == Op::bitwise_or) {
    return static_cast<T>(a | b);
  } else if constexpr (O == Op::bitwise_xor) {
    return static_cast<T>(a ^ b);
  } else {
    // NumPy's npy_lshift / npy_rshift: a count outside 0 .. bits-1 (a negative one read as
    // unsigned) shifts everything out: 0, or -1 for a negative value shifted right.
    static_assert(O == Op::left_shift || O == Op::right_shift);
    const auto count = static_cast<std::make_unsigned_t<T>>(b);
    const bool in_range = count < sizeof(T) * 8;
    if constexpr (O == Op::left_shift)
      return in_range ? wrap<T>(Wide<T>(a) << count) : T(0);
    else
      return in_range ? static_cast<T>(a >> count) : (a < 0 ? T(-1) : T(0));  // arithmetic (C++20)
  }
}

template <Op O, class T>
T apply(T a, T b, T c) {
  if constexpr (O == Op::clip)
    return apply<Op::minimum>(apply<Op::maximum>(a, b), c);
  else
    return std::fma(a, b, c);
}

// ---- the loops: one expression per element, no separate tail ----

// Operation O on n elements of T; B: bool operands, read as "nonzero is true".
template <Op O, class T, bool B>
void kernel(const void* const* in, void* out, int64_t n) {
  auto load = [](const T* p, int64_t i) { return B ? static_cast<T>(p[i] != 0) : p[i]; };
  const T* a = static_cast<const T*>(in[0]);
  if constexpr (O >= Op::where) {
    const T* b = static_cast<const T*>(in[1]);
    const T* c = static_cast<const T*>(in[2]);
    T* r = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) r[i] = apply<O>(load(a, i), load(b, i), load(c, i));
  } else if constexpr (O >= Op::add) {
    const T* b = static_cast<const T*>(in[1]);
    auto* r = static_cast<decltype(apply<O>(T{}, T{}))*>(out);
    for (int64_t i = 0; i < n; ++i) r[i] = apply<O>(load(a, i), load(b, i));
  } else {
    auto* r = static_cast<decltype(apply<O>(T{}))*>(out);
    for (int64_t i = 0; i < n; ++i) r[i] = apply<O>(load(a, i));
  }
}

// add, subtract, multiply and divide of float32 and float64, the loops that small programs spend
// their time in, also compiled for AVX2 and AVX-512F and picked when the library is loaded (GCC's
// target_clones, x86-64 ELF only). Each element is one IEEE operation whatever the vector width, so
// every path gives the same bits (-ffp-contract=off: never an FMA). Not under ThreadSanitizer: the
// clones' resolvers run while the program is relocated, before TSan's runtime is set up, and their
// instrumented code crashes there.
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define XP_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define XP_SIMD_CLONES
#endif
template <Op O, class T>
XP_SIMD_CLONES void float_arith_kernel(const void* const* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in[0]);
  const T* b = static_cast<const T*>(in[1]);
  T* r = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) r[i] = apply<O>(a[i], b[i]);
}
#undef XP_SIMD_CLONES

// A tile in whole vectors of W elements, the tail padded to a whole vector and computed the same
// way. f(a, r) reads all W inputs before it writes (out may be the input itself).
template <class In, class Out, int W, class F>
void vector_blocks(const In* a, Out* r, int64_t n, F f) {
  int64_t i = 0;
  for (; i + W <= n; i += W) f(a + i, r + i);
  if (i < n) {
    In ta[W] = {};
    Out tr[W];
    std::memcpy(ta, a + i, static_cast<std::size_t>(n - i) * sizeof(In));
    f(ta, tr);
    std::memcpy(r + i, tr, static_cast<std::size_t>(n - i) * sizeof(Out));
  }
}

template <Op O, class T>
void round_kernel(const void* const* in, void* out, int64_t n) {
  vector_blocks<T, T, 16 / sizeof(T)>(static_cast<const T*>(in[0]), static_cast<T*>(out), n, [](const T* a, T* r) {
    typename Vec<T>::V x;
    std::memcpy(&x, a, sizeof x);
    const auto y = round_family<O, T>(x);
    std::memcpy(r, &y, sizeof y);
  });
}

void half_to_float_kernel(const void* const* in, void* out, int64_t n) {
  const auto* a = static_cast<const uint16_t*>(in[0]);
  vector_blocks<uint16_t, float, 4>(a, static_cast<float*>(out), n, [](const uint16_t* h, float* r) {
    const auto y = half_to_float(Vec<float>::U{h[0], h[1], h[2], h[3]});
    std::memcpy(r, &y, sizeof y);
  });
}

void float_to_half_kernel(const void* const* in, void* out, int64_t n) {
  const auto* a = static_cast<const float*>(in[0]);
  vector_blocks<float, uint16_t, 4>(a, static_cast<uint16_t*>(out), n, [](const float* f, uint16_t* r) {
    Vec<float>::U x;
    std::memcpy(&x, f, sizeof x);
    const auto y = float_to_half(x);
    for (int k = 0; k < 4; ++k) r[k] = static_cast<uint16_t>(y[k]);
  });
}

// sqrt is exactly rounded in every form, so the packed and the single-lane instructions give the
// same bits; SSE2's are used because std::sqrt keeps a scalar errno check that blocks vectorizing.
template <class T>
void sqrt_kernel(const void* const* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in[0]);
  T* r = static_cast<T*>(out);
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float>) {
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(r + i, _mm_sqrt_ps(_mm_loadu_ps(a + i)));
    for (; i < n; ++i) r[i] = _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(a[i])));
  } else {
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(r + i, _mm_sqrt_pd(_mm_loadu_pd(a + i)));
    for (; i < n; ++i) r[i] = _mm_cvtsd_f64(_mm_sqrt_sd(_mm_setzero_pd(), _mm_set_sd(a[i])));
  }
#endif
  for (; i < n; ++i) r[i] = std::sqrt(a[i]);
}

template <DType From, DType To>
void cast_kernel(const void* const* in, void* out, int64_t n) {
  const S<From>* a = static_cast<const S<From>*>(in[0]);
  S<To>* r = static_cast<S<To>*>(out);
  for (int64_t i = 0; i < n; ++i) r[i] = convert<From, To>(a[i]);
}

// Pure selection of the bits: any dtype of the width.
template <class T>
void where_kernel(const void* const* in, void* out, int64_t n) {
  const uint8_t* c = static_cast<const uint8_t*>(in[0]);
  const T* a = static_cast<const T*>(in[1]);
  const T* b = static_cast<const T*>(in[2]);
  T* r = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const T x = a[i], y = b[i];  // both read: the select vectorizes
    r[i] = c[i] != 0 ? x : y;
  }
}

// ---- dispatch ----

enum : unsigned { kSigned = 1, kUnsigned = 2, kFloat = 4 };
constexpr unsigned kInt = kSigned | kUnsigned;
constexpr unsigned kNum = kInt | kFloat;

// The non-bool dtypes each operation is defined on (ir.hpp's rules). bool: bool_fn below.
constexpr unsigned defined_on(Op op) {
  switch (op) {
    case Op::sqrt:
    case Op::divide:
    case Op::fma:
    case Op::signbit:
    case Op::copysign:
    case Op::nextafter:
      return kFloat;
    case Op::pow:
    case Op::bitwise_invert:
    case Op::bitwise_and:
    case Op::bitwise_or:
    case Op::bitwise_xor:
    case Op::left_shift:
    case Op::right_shift:
      return kInt;
    case Op::negative:
    case Op::abs:
    case Op::sign:
    case Op::square:
    case Op::floor:
    case Op::ceil:
    case Op::round:
    case Op::trunc:
    case Op::isnan:
    case Op::isinf:
    case Op::isfinite:
    case Op::add:
    case Op::subtract:
    case Op::multiply:
    case Op::floor_divide:
    case Op::remainder:
    case Op::minimum:
    case Op::maximum:
    case Op::equal:
    case Op::not_equal:
    case Op::less:
    case Op::less_equal:
    case Op::greater:
    case Op::greater_equal:
    case Op::clip:
      return kNum;
    default:
      return 0;
  }
}

constexpr bool bool_result(Op op) {
  return (op >= Op::isnan && op <= Op::logical_not) || (op >= Op::equal && op <= Op::logical_xor);
}

template <class T>
constexpr unsigned kClassOf = std::is_floating_point_v<T> ? kFloat : (std::is_signed_v<T> ? kSigned : kUnsigned);

template <Op O, class T>
TileFn kernel_if_defined() {
  constexpr bool fp = std::is_floating_point_v<T>;
  if constexpr (O == Op::sqrt && fp)
    return &sqrt_kernel<T>;
  else if constexpr ((O == Op::floor || O == Op::ceil || O == Op::round || O == Op::trunc) && fp)
    return &round_kernel<O, T>;
  else if constexpr ((O == Op::add || O == Op::subtract || O == Op::multiply || O == Op::divide) && fp)
    return &float_arith_kernel<O, T>;
  else if constexpr ((kClassOf<T> & defined_on(O)) != 0)
    return &kernel<O, T, false>;
  else
    return nullptr;
}

template <Op O>
TileFn numeric_fn(DType d) {
  switch (d) {
    case DType::int8:
      return kernel_if_defined<O, std::int8_t>();
    case DType::int16:
      return kernel_if_defined<O, std::int16_t>();
    case DType::int32:
      return kernel_if_defined<O, std::int32_t>();
    case DType::int64:
      return kernel_if_defined<O, std::int64_t>();
    case DType::uint8:
      return kernel_if_defined<O, uint8_t>();
    case DType::uint16:
      return kernel_if_defined<O, uint16_t>();
    case DType::uint32:
      return kernel_if_defined<O, uint32_t>();
    case DType::uint64:
      return kernel_if_defined<O, uint64_t>();
    case DType::float32:
      return kernel_if_defined<O, float>();
    case DType::float64:
      return kernel_if_defined<O, double>();
    default:
      return nullptr;
  }
}

// The runtime op as a template argument, for every op that has arithmetic (negative .. fma).
template <int... I>
TileFn numeric_fn(Op op, DType d, std::integer_sequence<int, I...>) {
  constexpr int first = static_cast<int>(Op::negative);
  TileFn r = nullptr;
  ((static_cast<int>(op) == first + I ? (r = numeric_fn<static_cast<Op>(first + I)>(d), 0) : 0), ...);
  return r;
}

// NumPy's bool loops: on normalized bytes, + is or, * is and, minimum / maximum are and / or.
TileFn bool_fn(Op op) {
  using U = uint8_t;
  switch (op) {
    case Op::abs:
    case Op::floor:
    case Op::ceil:
    case Op::trunc:
      return &kernel<Op::floor, U, true>;  // the identity on 0 and 1
    case Op::bitwise_invert:
    case Op::logical_not:
      return &kernel<Op::logical_not, U, true>;
    case Op::isnan:
      return &kernel<Op::isnan, U, true>;
    case Op::isinf:
      return &kernel<Op::isinf, U, true>;
    case Op::isfinite:
      return &kernel<Op::isfinite, U, true>;
    case Op::add:
    case Op::maximum:
    case Op::bitwise_or:
    case Op::logical_or:
      return &kernel<Op::bitwise_or, U, true>;
    case Op::multiply:
    case Op::minimum:
    case Op::bitwise_and:
    case Op::logical_and:
      return &kernel<Op::bitwise_and, U, true>;
    case Op::bitwise_xor:
    case Op::logical_xor:
      return &kernel<Op::bitwise_xor, U, true>;
    case Op::equal:
      return &kernel<Op::equal, U, true>;
    case Op::not_equal:
      return &kernel<Op::not_equal, U, true>;
    case Op::less:
      return &kernel<Op::less, U, true>;
    case Op::less_equal:
      return &kernel<Op::less_equal, U, true>;
    case Op::greater:
      return &kernel<Op::greater, U, true>;
    case Op::greater_equal:
      return &kernel<Op::greater_equal, U, true>;
    case Op::clip:
      return &kernel<Op::clip, U, true>;
    default:
      return nullptr;
  }
}

// A dtype as a template argument, for the casts' 13 x 13 table.
template <class G>
TileFn by_dtype(DType d, G g) {
  switch (d) {
    case DType::bool_:
      return g.template operator()<DType::bool_>();
    case DType::int8:
      return g.template operator()<DType::int8>();
    case DType::int16:
      return g.template operator()<DType::int16>();
    case DType::int32:
      return g.template operator()<DType::int32>();
    case DType::int64:
      return g.template operator()<DType::int64>();
    case DType::uint8:
      return g.template operator()<DType::uint8>();
    case DType::uint16:
      return g.template operator()<DType::uint16>();
    case DType::uint32:
      return g.template operator()<DType::uint32>();
    case DType::uint64:
      return g.template operator()<DType::uint64>();
    case DType::float16:
      return g.template operator()<DType::float16>();
    case DType::bfloat16:
      return g.template operator()<DType::bfloat16>();
    case DType::float32:
      return g.template operator()<DType::float32>();
    case DType::float64:
      return g.template operator()<DType::float64>();
    case DType::complex64:
    case DType::complex128:
      return nullptr;  // complex kernels are ew_complex's
  }
  return nullptr;
}

TileFn cast_fn(DType from, DType to) {
  if (from == DType::float16 && to == DType::float32) return &half_to_float_kernel;
  if (from == DType::float32 && to == DType::float16) return &float_to_half_kernel;
  return by_dtype(from,
                  [to]<DType F>() { return by_dtype(to, []<DType T>() -> TileFn { return &cast_kernel<F, T>; }); });
}

TileFn where_fn(DType d) {
  switch (itemsize(d)) {
    case 1:
      return &where_kernel<uint8_t>;
    case 2:
      return &where_kernel<uint16_t>;
    case 4:
      return &where_kernel<uint32_t>;
    case 8:
      return &where_kernel<uint64_t>;
    default:
      return nullptr;
  }
}

}  // namespace

TileFn exact_tile_fn(Op op, DType operand, DType result) noexcept {
  constexpr auto kLast = static_cast<unsigned>(DType::float64);
  if (static_cast<unsigned>(operand) > kLast || static_cast<unsigned>(result) > kLast) return nullptr;
  if (op == Op::cast) return cast_fn(operand, result);
  if (op == Op::where) return operand == result ? where_fn(result) : nullptr;
  if (op < Op::negative || op > Op::fma) return nullptr;
  if (result != (bool_result(op) ? DType::bool_ : operand)) return nullptr;
  if (op == Op::nextafter && operand == DType::float16) return &next_after_16_kernel<false>;
  if (op == Op::nextafter && operand == DType::bfloat16) return &next_after_16_kernel<true>;
  if (is_bool(operand)) return bool_fn(op);
  constexpr int kArith = static_cast<int>(Op::fma) - static_cast<int>(Op::negative) + 1;
  return numeric_fn(op, operand, std::make_integer_sequence<int, kArith>{});
}

}  // namespace xp::detail::cpu
