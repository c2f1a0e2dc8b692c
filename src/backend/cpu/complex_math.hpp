#pragma once

// backend/complex_math.cuh for the CPU: the real functions it is written over, from the C library.
// Built with -ffp-contract=off, so + - * / are single IEEE operations, as the GPU's _rn intrinsics.

#include <cmath>
#include <limits>

#define XP_CM_D inline

namespace xp::detail::cpu {

template <class T>
struct xp_real {
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T div(T a, T b) { return a / b; }
  static T sqrt(T a) { return std::sqrt(a); }
  static T rint(T a) { return std::nearbyint(a); }  // the default rounding mode: half to even
  static T fabs(T a) { return std::fabs(a); }
  static T copysign(T a, T b) { return std::copysign(a, b); }
  static bool isnan(T a) { return a != a; }
  static bool isinf(T a) { return std::fabs(a) == std::numeric_limits<T>::infinity(); }
  static T exp(T a) { return std::exp(a); }
  static T expm1(T a) { return std::expm1(a); }
  static T log(T a) { return std::log(a); }
  static T log1p(T a) { return std::log1p(a); }
  static T sin(T a) { return std::sin(a); }
  static T cos(T a) { return std::cos(a); }
  static T tan(T a) { return std::tan(a); }
  static T sinh(T a) { return std::sinh(a); }
  static T cosh(T a) { return std::cosh(a); }
  static T asin(T a) { return std::asin(a); }
  static T atan(T a) { return std::atan(a); }
  static T atan2(T a, T b) { return std::atan2(a, b); }
  // C's hypot: +inf beside a NaN too (a signaling one included).
  static T hypot(T a, T b) { return isinf(a) || isinf(b) ? inf() : std::hypot(a, b); }
  static T inf() { return std::numeric_limits<T>::infinity(); }
  static T nan() { return std::numeric_limits<T>::quiet_NaN(); }
};

#include "backend/complex_math.cuh"

}  // namespace xp::detail::cpu

#undef XP_CM_D
