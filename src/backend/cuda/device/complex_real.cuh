// The real functions backend/complex_math.cuh is written over, on a GPU: the _rn intrinsics (never
// contracted into an FMA, never flushed to zero) and CUDA's math library. Pasted, with
// complex_math.cuh after it, into the kernels of programs that have complex values. After types.cuh
// and elementwise.cuh (xp_hypot_f32 / xp_hypot_f64: C's hypot without CUDA's overflow near the max).
template <class T> struct xp_real;
template <> struct xp_real<float> {
  static XP_D float add(float a, float b) { return __fadd_rn(a, b); }
  static XP_D float sub(float a, float b) { return __fsub_rn(a, b); }
  static XP_D float mul(float a, float b) { return __fmul_rn(a, b); }
  static XP_D float div(float a, float b) { return __fdiv_rn(a, b); }
  static XP_D float sqrt(float a) { return __fsqrt_rn(a); }
  static XP_D float rint(float a) { return rintf(a); }
  static XP_D float fabs(float a) { return fabsf(a); }
  static XP_D float copysign(float a, float b) { return copysignf(a, b); }
  static XP_D bool isnan(float a) { return a != a; }
  static XP_D bool isinf(float a) { return fabsf(a) == __uint_as_float(0x7F800000u); }
  static XP_D float exp(float a) { return expf(a); }
  static XP_D float expm1(float a) { return expm1f(a); }
  static XP_D float log(float a) { return logf(a); }
  static XP_D float log1p(float a) { return log1pf(a); }
  static XP_D float sin(float a) { return sinf(a); }
  static XP_D float cos(float a) { return cosf(a); }
  static XP_D float tan(float a) { return tanf(a); }
  static XP_D float sinh(float a) { return sinhf(a); }
  static XP_D float cosh(float a) { return coshf(a); }
  static XP_D float asin(float a) { return asinf(a); }
  static XP_D float atan(float a) { return atanf(a); }
  static XP_D float atan2(float a, float b) { return atan2f(a, b); }
  static XP_D float hypot(float a, float b) { return xp_hypot_f32(a, b); }
  static XP_D float inf() { return __uint_as_float(0x7F800000u); }
  static XP_D float nan() { return __uint_as_float(0x7FC00000u); }
};
template <> struct xp_real<double> {
  static XP_D double add(double a, double b) { return __dadd_rn(a, b); }
  static XP_D double sub(double a, double b) { return __dsub_rn(a, b); }
  static XP_D double mul(double a, double b) { return __dmul_rn(a, b); }
  static XP_D double div(double a, double b) { return __ddiv_rn(a, b); }
  static XP_D double sqrt(double a) { return __dsqrt_rn(a); }
  static XP_D double rint(double a) { return ::rint(a); }
  static XP_D double fabs(double a) { return ::fabs(a); }
  static XP_D double copysign(double a, double b) { return ::copysign(a, b); }
  static XP_D bool isnan(double a) { return a != a; }
  static XP_D bool isinf(double a) { return ::fabs(a) == __longlong_as_double(0x7FF0000000000000ll); }
  static XP_D double exp(double a) { return ::exp(a); }
  static XP_D double expm1(double a) { return ::expm1(a); }
  static XP_D double log(double a) { return ::log(a); }
  static XP_D double log1p(double a) { return ::log1p(a); }
  static XP_D double sin(double a) { return ::sin(a); }
  static XP_D double cos(double a) { return ::cos(a); }
  static XP_D double tan(double a) { return ::tan(a); }
  static XP_D double sinh(double a) { return ::sinh(a); }
  static XP_D double cosh(double a) { return ::cosh(a); }
  static XP_D double asin(double a) { return ::asin(a); }
  static XP_D double atan(double a) { return ::atan(a); }
  static XP_D double atan2(double a, double b) { return ::atan2(a, b); }
  static XP_D double hypot(double a, double b) { return xp_hypot_f64(a, b); }
  static XP_D double inf() { return __longlong_as_double(0x7FF0000000000000ll); }
  static XP_D double nan() { return __longlong_as_double(0x7FF8000000000000ll); }
};
#define XP_CM_D XP_D
