#pragma once

// The transcendental functions' test cases, shared by the CPU backend's tests (test_cpu_math) and
// the CUDA backend's (test_cuda_math): the functions with their C library forms, the reference (one
// precision up, rounded), the distance in ulp, the random inputs over each function's ranges, the
// special values and a table of C99 Annex F cases.
#include <math.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/ir.hpp"
#include "xp/dtype.hpp"

namespace xp_math_cases {

using xp::DType;
using xp::detail::Op;

// ---- the functions and their references ----

struct MathFn {
  Op op;
  const char* name;
  // Unary: f1/d1/l1; binary: f2/d2/l2. f = C's float function, d = double, l = long double.
  float (*f1)(float);
  double (*d1)(double);
  long double (*l1)(long double);
  float (*f2)(float, float);
  double (*d2)(double, double);
  long double (*l2)(long double, long double);
  bool binary() const { return f2 != nullptr; }
};

#define XP_UNARY(NAME) \
  { Op::NAME, #NAME, ::NAME##f, ::NAME, ::NAME##l, nullptr, nullptr, nullptr }
#define XP_BINARY(NAME) \
  { Op::NAME, #NAME, nullptr, nullptr, nullptr, ::NAME##f, ::NAME, ::NAME##l }
const MathFn kFns[] = {XP_UNARY(exp),   XP_UNARY(expm1), XP_UNARY(log),   XP_UNARY(log1p),  XP_UNARY(log2),
                       XP_UNARY(log10), XP_UNARY(sin),   XP_UNARY(cos),   XP_UNARY(tan),    XP_UNARY(asin),
                       XP_UNARY(acos),  XP_UNARY(atan),  XP_UNARY(sinh),  XP_UNARY(cosh),   XP_UNARY(tanh),
                       XP_UNARY(acosh), XP_UNARY(asinh), XP_UNARY(atanh), XP_BINARY(atan2), XP_BINARY(pow),
                       XP_BINARY(hypot)};
#undef XP_UNARY
#undef XP_BINARY

template <class T>
constexpr DType dtype_of = std::is_same_v<T, float> ? DType::float32 : DType::float64;

// The reference: one precision up, rounded to T.
template <class T>
T reference(const MathFn& fn, T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(fn.binary() ? fn.d2(a, b) : fn.d1(a));
  } else {
    return static_cast<double>(fn.binary() ? fn.l2(a, b) : fn.l1(a));
  }
}

// C's libm in the same precision (the class reference for special values).
template <class T>
T libm(const MathFn& fn, T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
    return fn.binary() ? fn.f2(a, b) : fn.f1(a);
  } else {
    return fn.binary() ? fn.d2(a, b) : fn.d1(a);
  }
}

template <class T>
using Bits = std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>;

template <class T>
Bits<T> bits(T x) {
  Bits<T> u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
template <class T>
T from_bits(Bits<T> u) {
  T x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// Distance in ulp between two results (their places in the ordered list of T's values; +0 == -0).
template <class T>
double ulp_distance(T got, T ref) {
  if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got) ? 0 : INFINITY;
  auto ordered = [](T x) {
    const Bits<T> u = bits(x);
    const Bits<T> sign = Bits<T>(1) << (sizeof(T) * 8 - 1);
    const auto mag = static_cast<std::int64_t>(u & ~sign);
    return (u & sign) != 0 ? -mag : mag;
  };
  const std::int64_t d = ordered(got) - ordered(ref);
  return static_cast<double>(d < 0 ? -d : d);
}

// ---- inputs ----

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  // A magnitude 2^e * [1, 2) with e uniform in [elo, ehi], of random sign when `signed_`.
  double log_uniform(int elo, int ehi, bool signed_) {
    const int e = elo + static_cast<int>(next() % static_cast<std::uint64_t>(ehi - elo + 1));
    const double m = ldexp(1.0 + unit(), e);
    return signed_ && (next() & 1) ? -m : m;
  }
  template <class T>
  T finite_bits() {
    for (;;) {
      const T x = from_bits<T>(static_cast<Bits<T>>(next()));
      if (isfinite(x)) return x;
    }
  }
};

// Random inputs over the function's interesting ranges: a list of (a, b) pairs (b unused for unary).
template <class T>
void make_inputs(const MathFn& fn, std::vector<T>& a, std::vector<T>& b) {
  constexpr bool f32 = std::is_same_v<T, float>;
  // Per range. (ew_math.cpp's bounds were set from a run with 400,000.)
  constexpr int kPer = 40000;
  constexpr int emax = f32 ? 127 : 1023;
  constexpr int emin = f32 ? -149 : -1074;
  Rng rng{0x5EED0000ull + static_cast<std::uint64_t>(fn.op) * 7919 + (f32 ? 0 : 1)};
  auto add = [&](auto gen_a, auto gen_b) {
    for (int i = 0; i < kPer; ++i) {
      a.push_back(static_cast<T>(gen_a()));
      b.push_back(static_cast<T>(gen_b()));
    }
  };
  auto one = [] { return 1.0; };
  auto u = [&](double lo, double hi) { return [&rng, lo, hi] { return rng.uniform(lo, hi); }; };
  auto lu = [&](int elo, int ehi, bool s) { return [&rng, elo, ehi, s] { return rng.log_uniform(elo, ehi, s); }; };
  auto any = [&] { return rng.finite_bits<T>(); };
  auto pos = [&] { return fabs(rng.finite_bits<T>()); };
  const double ovf = f32 ? 88.72 : 709.78;     // exp overflows past this
  const double unf = f32 ? -103.97 : -745.13;  // exp underflows to zero before this
  switch (fn.op) {
    case Op::exp:
      add(u(unf - 1, ovf + 1), one), add(u(-1, 1), one), add(u(ovf - 1, ovf + 0.1), one);
      add(u(unf - 0.5, unf + 20), one), add(lu(emin, -1, true), one);
      break;
    case Op::expm1:
      add(lu(f32 ? -40 : -80, -1, true), one), add(u(-1, 1), one), add(u(-2 * ovf, ovf + 1), one);
      add(u(ovf - 1, ovf + 0.1), one);
      break;
    case Op::log:
    case Op::log2:
    case Op::log10:
      add(pos, one), add(u(1 - 1e-3, 1 + 1e-3), one), add(u(0, 10), one), add(lu(emin, emax, false), one);
      break;
    case Op::log1p:
      add(lu(f32 ? -40 : -80, -1, true), one), add(u(-1, 10), one), add(pos, one), add(u(-1, -0.9), one);
      break;
    case Op::sin:
    case Op::cos:
    case Op::tan:
      add(u(-10, 10), one), add(u(-1e5, 1e5), one), add(lu(emin, emax, true), one), add(any, one);
      // Close to multiples of pi/2, the hard cases of argument reduction.
      add([&] { return static_cast<T>(static_cast<double>(rng.next() % 2000000) * (M_PI / 2)); }, one);
      break;
    case Op::asin:
    case Op::acos:
      add(u(-1, 1), one), add([&] { return (rng.next() & 1 ? 1 : -1) * (1 - rng.log_uniform(-53, -1, false)); }, one);
      add(lu(emin, -1, true), one);
      break;
    case Op::atan:
      add(lu(emin, emax, true), one), add(u(-10, 10), one), add(any, one);
      break;
    case Op::sinh:
    case Op::cosh:
      add(u(-(ovf + 1.5), ovf + 1.5), one), add(u(-1, 1), one), add(lu(emin, -1, true), one);
      add(u(ovf - 1, ovf + 1.5), one);
      break;
    case Op::tanh:
      add(u(-10, 10), one), add(u(-25, 25), one), add(lu(emin, -1, true), one), add(any, one);
      break;
    case Op::acosh:
      add(u(1, 10), one), add(u(1, 1 + 1e-3), one), add(lu(0, emax, false), one), add(pos, one);
      break;
    case Op::asinh:
      add(lu(emin, emax, true), one), add(u(-10, 10), one), add(lu(f32 ? -40 : -80, -1, true), one), add(any, one);
      break;
    case Op::atanh:
      add(u(-1, 1), one), add(lu(emin, -1, true), one);
      add([&] { return (rng.next() & 1 ? 1 : -1) * (1 - rng.log_uniform(f32 ? -24 : -53, -1, false)); }, one);
      break;
    case Op::hypot:
      add(lu(emin, emax, true), lu(emin, emax, true)), add(u(-10, 10), u(-10, 10)), add(any, any);
      add(lu(-10, 10, true), lu(-40, 10, true));
      break;
    case Op::atan2:
      add(lu(emin, emax, true), lu(emin, emax, true)), add(u(-10, 10), u(-10, 10)), add(any, any);
      add(lu(-10, 10, true), lu(-10, 10, true));
      break;
    case Op::pow:
      add(lu(-10, 10, false), u(-30, 30)), add(u(1 - 1e-3, 1 + 1e-3), u(-1e4, 1e4));
      add(u(0, 5), u(-200, 200)), add(pos, u(-2, 2));
      // Negative bases with integer exponents.
      add([&] { return -rng.log_uniform(-3, 3, false); }, [&] { return static_cast<double>(rng.next() % 81) - 40; });
      // Near the overflow and underflow edges.
      add(u(1.5, 2.5), f32 ? u(120, 140) : u(1000, 1050));
      add(u(1.5, 2.5), f32 ? u(-160, -120) : u(-1100, -1000));
      break;
    default:
      break;
  }
}

// ---- special values ----

enum class Cls { nan, pos_inf, neg_inf, pos_zero, neg_zero, pos, neg };
template <class T>
Cls cls(T x) {
  if (isnan(x)) return Cls::nan;
  if (isinf(x)) return x > 0 ? Cls::pos_inf : Cls::neg_inf;
  if (x == 0) return signbit(x) ? Cls::neg_zero : Cls::pos_zero;
  return x > 0 ? Cls::pos : Cls::neg;
}
inline const char* cls_name(Cls c) {
  static const char* names[] = {"NaN", "+inf", "-inf", "+0", "-0", "positive", "negative"};
  return names[static_cast<int>(c)];
}

template <class T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  // clang-format off
  std::vector<T> v = {T(0), -T(0), L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(),
                      T(1), T(-1), T(0.5), T(-0.5), T(2), T(-2), T(3), T(-3), T(0.75),
                      L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), L::max(), -L::max(),
                      T(1e30), T(-1e30), T(1e6), T(-1e6), T(100), T(-100), T(M_PI / 2), T(M_PI),
                      T(1e-20), T(1e-5), T(1) - L::epsilon(), T(1) + L::epsilon()};
  // clang-format on
  return v;
}

// The special values as operands of fn: each alone (b = 0) for a unary function, every pair for a
// binary one.
template <class T>
void special_operands(const MathFn& fn, std::vector<T>& a, std::vector<T>& b) {
  const std::vector<T> s = special_values<T>();
  for (T x : s) {
    if (fn.binary()) {
      for (T y : s) a.push_back(x), b.push_back(y);
    } else {
      a.push_back(x), b.push_back(T(0));
    }
  }
}

// A hand-made table of C99 Annex F cases (independent of libm); want NaN: any NaN.
template <class T>
struct AnnexFRow {
  Op op;
  T a, b, want;
};

template <class T>
std::vector<AnnexFRow<T>> annex_f_rows() {
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T pi = T(M_PI), half_pi = T(M_PI / 2);
  // clang-format off
  return {
      {Op::exp, -inf, 0, T(0)},          {Op::exp, inf, 0, inf},            {Op::exp, nan, 0, nan},
      {Op::exp, T(1000), 0, inf},        {Op::exp, T(-1000), 0, T(0)},      {Op::exp, -T(0), 0, T(1)},
      {Op::expm1, -inf, 0, T(-1)},       {Op::expm1, -T(0), 0, -T(0)},      {Op::expm1, inf, 0, inf},
      {Op::log, T(0), 0, -inf},          {Op::log, -T(0), 0, -inf},         {Op::log, T(-1), 0, nan},
      {Op::log, inf, 0, inf},            {Op::log, -inf, 0, nan},           {Op::log, T(1), 0, T(0)},
      {Op::log2, T(0), 0, -inf},         {Op::log2, T(8), 0, T(3)},         {Op::log10, T(0), 0, -inf},
      {Op::log10, T(-2), 0, nan},        {Op::log1p, T(-1), 0, -inf},       {Op::log1p, T(-2), 0, nan},
      {Op::log1p, -T(0), 0, -T(0)},      {Op::sin, inf, 0, nan},            {Op::sin, -T(0), 0, -T(0)},
      {Op::cos, -inf, 0, nan},           {Op::cos, T(0), 0, T(1)},          {Op::tan, inf, 0, nan},
      {Op::tan, -T(0), 0, -T(0)},        {Op::asin, T(2), 0, nan},          {Op::asin, -T(0), 0, -T(0)},
      {Op::acos, T(1), 0, T(0)},         {Op::acos, T(-1.5), 0, nan},       {Op::atan, inf, 0, half_pi},
      {Op::atan, -inf, 0, -half_pi},     {Op::sinh, -inf, 0, -inf},         {Op::sinh, -T(0), 0, -T(0)},
      {Op::cosh, -inf, 0, inf},          {Op::cosh, T(0), 0, T(1)},         {Op::tanh, inf, 0, T(1)},
      {Op::tanh, -inf, 0, T(-1)},        {Op::tanh, -T(0), 0, -T(0)},       {Op::atan2, T(0), -T(0), pi},
      {Op::atan2, -T(0), -T(0), -pi},    {Op::atan2, T(0), T(0), T(0)},     {Op::atan2, -T(0), T(0), -T(0)},
      {Op::atan2, T(1), -inf, pi},       {Op::atan2, inf, inf, T(M_PI / 4)}, {Op::atan2, nan, T(1), nan},
      {Op::pow, T(1), nan, T(1)},        {Op::pow, nan, T(0), T(1)},        {Op::pow, T(-1), inf, T(1)},
      {Op::pow, T(-1), -inf, T(1)},      {Op::pow, -T(0), T(-1), -inf},     {Op::pow, T(0), T(-1), inf},
      {Op::pow, -T(0), T(-2), inf},      {Op::pow, -T(0), T(3), -T(0)},     {Op::pow, T(-8), T(1) / T(3), nan},
      {Op::pow, T(-2), T(3), T(-8)},     {Op::pow, T(0.5), -inf, inf},      {Op::pow, T(2), -inf, T(0)},
      {Op::pow, -inf, T(3), -inf},       {Op::pow, -inf, T(-3), -T(0)},     {Op::pow, inf, T(-1), T(0)},
      {Op::pow, nan, nan, nan},          {Op::pow, T(2), T(0.5), T(M_SQRT2)},
      {Op::acosh, T(1), 0, T(0)},        {Op::acosh, T(0.5), 0, nan},       {Op::acosh, inf, 0, inf},
      {Op::acosh, -inf, 0, nan},         {Op::asinh, -T(0), 0, -T(0)},      {Op::asinh, -inf, 0, -inf},
      {Op::asinh, inf, 0, inf},          {Op::atanh, -T(0), 0, -T(0)},      {Op::atanh, T(1), 0, inf},
      {Op::atanh, T(-1), 0, -inf},       {Op::atanh, T(2), 0, nan},         {Op::hypot, inf, nan, inf},
      {Op::hypot, nan, -inf, inf},       {Op::hypot, T(3), T(-4), T(5)},    {Op::hypot, -T(0), T(0), T(0)},
      {Op::hypot, nan, T(1), nan},
  };
  // clang-format on
}

}  // namespace xp_math_cases
