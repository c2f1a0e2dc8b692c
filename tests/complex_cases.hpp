#pragma once

// What the complex tests share (test_complex_elementwise.cpp, test_cuda_complex.cpp): the error bounds of
// the complex functions, the ulp measures and the special-value comparison.
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backend/ir.hpp"

namespace xp_complex_cases {

using xp::DType;
using xp::detail::Op;

// The operations whose results are not exactly rounded: the complex functions of
// backend/complex_math.cuh (abs and sign included, which divide by or are a hypot).
inline bool is_complex_math(Op op) {
  switch (op) {
    case Op::abs:
    case Op::sign:
    case Op::sqrt:
    case Op::exp:
    case Op::expm1:
    case Op::log:
    case Op::log1p:
    case Op::log2:
    case Op::log10:
    case Op::sin:
    case Op::cos:
    case Op::tan:
    case Op::asin:
    case Op::acos:
    case Op::atan:
    case Op::sinh:
    case Op::cosh:
    case Op::tanh:
    case Op::asinh:
    case Op::acosh:
    case Op::atanh:
    case Op::pow:
      return true;
    default:
      return false;
  }
}

// pow and expm1 are measured normwise (in ulp of |result|): pow's error grows with |b log a| (its
// bound is in units of 1 + |b| |log a|) and expm1's real part cancels near e^x cos y = 1, so a small
// component of theirs has no bound of its own. The others componentwise (in ulp of each part).
inline bool normwise(Op op) {
  return op == Op::pow || op == Op::expm1;
}

// The bound on the CPU in ulp, against the function computed in long double and rounded (the
// largest error measured by test_complex_elementwise over its inputs, glibc 2.36, plus one; docs/semantics.md
// "Complex numbers" states the same figures).
inline double cpu_ulp_bound(Op op, DType d) {
  const bool f = d == DType::complex64;
  switch (op) {
    case Op::abs:
    case Op::sign:
    case Op::log:
      return 2;
    case Op::tan:
      return f ? 6 : 5;
    case Op::tanh:
      return 5;
    case Op::cos:
    case Op::cosh:
      return 4;
    case Op::asin:
    case Op::acos:
    case Op::asinh:
    case Op::acosh:
      return 4;
    case Op::pow:
      return 3;
    default:
      return 3;
  }
}

// The extra error a GPU may add: CUDA's real functions are up to 2 ulp (float64) and 4 ulp
// (float32: tanf) from the correctly rounded result where glibc's are within 1 (the CUDA C++
// Programming Guide's "Mathematical Functions"), and each complex function combines a few of them.
inline double cuda_extra_ulp(DType d) {
  return d == DType::complex64 ? 8 : 4;
}

template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

// Distance in ulp of two finite-or-infinite values (the ordered integers); infinity if one is NaN.
template <class T>
double ulp_distance(T a, T b) {
  if (a != a || b != b) return (a != a && b != b) ? 0 : INFINITY;
  using I = std::make_signed_t<Bits<T>>;
  auto ordered = [](T x) {
    const I i = std::bit_cast<I>(x);
    return i < 0 ? static_cast<I>(std::numeric_limits<I>::min() - i) : i;
  };
  const I da = ordered(a), db = ordered(b);
  return da > db ? static_cast<double>(static_cast<Bits<T>>(da - db))
                 : static_cast<double>(static_cast<Bits<T>>(db - da));
}

// |got - want| in ulp of |want| (the spacing of T at |want|, subnormal spacing below the normals).
template <class T>
double normwise_ulp(T gr, T gi, T wr, T wi) {
  const long double dr = static_cast<long double>(gr) - wr, di = static_cast<long double>(gi) - wi;
  const long double err = std::hypot(dr, di);
  const long double mag = std::hypot(static_cast<long double>(wr), static_cast<long double>(wi));
  int e = 0;
  std::frexp(static_cast<double>(mag), &e);  // mag = m 2^e, 0.5 <= m < 1
  const int digits = std::numeric_limits<T>::digits;
  const int emin = std::numeric_limits<T>::min_exponent;
  const long double ulp = std::ldexp(1.0L, std::max(e, emin) - digits);
  return static_cast<double>(err / ulp);
}

// The class check of one part: NaN where NaN is wanted; an infinity of the wanted sign (either sign
// when `loose`); a zero's sign where both are zeros (unless loose). Finite nonzero values are the
// ulp measure's business.
template <class T>
bool same_class(T got, T want, bool loose) {
  if (want != want) return got != got;
  if (got != got) return false;
  if (std::isinf(want) || std::isinf(got)) return got == want || (loose && std::fabs(got) == std::fabs(want));
  if (want == 0 && got == 0) return loose || std::signbit(got) == std::signbit(want);
  return true;
}

// Same bits, or both NaN.
template <class T>
bool same_bits(T a, T b) {
  return std::bit_cast<Bits<T>>(a) == std::bit_cast<Bits<T>>(b) || (a != a && b != b);
}

}  // namespace xp_complex_cases
