// What every reduction and cumulative sum uses (backend/cuda/reduce_source.cpp): correctly rounded
// division and square root, the finiteness test, NaN. After types.cuh.
#define XP_FULL 0xffffffffu

XP_D i64 xp_min64(i64 a, i64 b) { return a < b ? a : b; }
XP_D bool xp_finite(float x) { return (__float_as_uint(x) & 0x7F800000u) != 0x7F800000u; }
XP_D bool xp_finite(double x) {
  return ((u64)__double_as_longlong(x) & 0x7FF0000000000000ull) != 0x7FF0000000000000ull;
}
XP_D float xp_div(float a, float b) { return __fdiv_rn(a, b); }
XP_D double xp_div(double a, double b) { return __ddiv_rn(a, b); }
XP_D float xp_sqrt(float a) { return __fsqrt_rn(a); }
XP_D double xp_sqrt(double a) { return __dsqrt_rn(a); }
XP_D float xp_nan(float) { return __uint_as_float(0x7FC00000u); }
XP_D double xp_nan(double) { return __longlong_as_double(0x7FF8000000000000ll); }
