// The helpers of fused elementwise kernels (backend/cuda/ew_source.cpp), ports of the CPU
// backend's element functions (backend/cpu/ew_exact.cpp) one for one. After types.cuh and half.cuh.
struct alignas(16) xp_v16 { u32 x, y, z, w; };

// ---- integers: wrapping arithmetic in the unsigned type W (at least 32 bits) ----
template <class T, class W> XP_D T xp_neg(T a) { return (T)((W)0 - (W)a); }
template <class T, class W> XP_D T xp_add(T a, T b) { return (T)((W)a + (W)b); }
template <class T, class W> XP_D T xp_sub(T a, T b) { return (T)((W)a - (W)b); }
template <class T, class W> XP_D T xp_mul(T a, T b) { return (T)((W)a * (W)b); }
template <class T, class W> XP_D T xp_abs_s(T a) { return a < 0 ? xp_neg<T, W>(a) : a; }
template <class T> XP_D T xp_sign_s(T a) { return (T)((a > 0) - (a < 0)); }
template <class T> XP_D T xp_sign_u(T a) { return (T)(a != 0 ? 1 : 0); }
template <class T> XP_D T xp_min_i(T a, T b) { return a < b ? a : b; }
template <class T> XP_D T xp_max_i(T a, T b) { return a > b ? a : b; }
// Python's // and %: toward -inf, the divisor's sign; x // 0 = x % 0 = 0; INT_MIN // -1 wraps.
template <class T, class W> XP_D T xp_floordiv_s(T a, T b) {
  if (b == 0) return (T)0;
  if (b == (T)-1) return xp_neg<T, W>(a);
  const T q = (T)(a / b);
  return (a % b != 0 && ((a < 0) != (b < 0))) ? (T)(q - 1) : q;
}
template <class T> XP_D T xp_floordiv_u(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }
template <class T> XP_D T xp_rem_s(T a, T b) {
  if (b == 0 || b == (T)-1) return (T)0;
  const T r = (T)(a % b);
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
template <class T> XP_D T xp_rem_u(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }
// By squaring, wrapping; a negative exponent: 1 for base 1, +-1 for base -1, else 0.
template <class T, class W> XP_D T xp_ipow_u(T a, T b) {
  W base = (W)a, r = 1;
  for (W e = (W)b; e != 0; e >>= 1) {
    if ((e & 1) != 0) r *= base;
    base *= base;
  }
  return (T)r;
}
template <class T, class W> XP_D T xp_ipow_s(T a, T b) {
  if (b < 0) return a == 1 ? (T)1 : (a == (T)-1 ? ((b & 1) != 0 ? (T)-1 : (T)1) : (T)0);
  return xp_ipow_u<T, W>(a, b);
}
// pow with a signaling NaN operand gives a quiet NaN, as glibc's (the CPU backend's) does; CUDA's
// pow(1, y) and pow(x, 0) would answer 1 even then (C99 Annex F says so for quiet NaNs only).
XP_D float xp_powf(float a, float b) {
  const unsigned ua = __float_as_uint(a), ub = __float_as_uint(b);
  const bool sa = (ua & 0x7fc00000u) == 0x7f800000u && (ua & 0x003fffffu) != 0;
  const bool sb = (ub & 0x7fc00000u) == 0x7f800000u && (ub & 0x003fffffu) != 0;
  return sa || sb ? __fadd_rn(a, b) : powf(a, b);
}
XP_D double xp_pow(double a, double b) {
  const unsigned long long ua = (unsigned long long)__double_as_longlong(a);
  const unsigned long long ub = (unsigned long long)__double_as_longlong(b);
  const unsigned long long e = 0x7ff8000000000000ull, inf = 0x7ff0000000000000ull, m = 0x0007ffffffffffffull;
  const bool sa = (ua & e) == inf && (ua & m) != 0;
  const bool sb = (ub & e) == inf && (ub & m) != 0;
  return sa || sb ? __dadd_rn(a, b) : pow(a, b);
}
// NumPy's shifts: a count outside 0 .. bits-1 (negative read as unsigned) shifts everything out.
template <class T, class UT, class W> XP_D T xp_shl(T a, T b) {
  const UT count = (UT)b;
  return count < sizeof(T) * 8 ? (T)((W)a << count) : (T)0;
}
template <class T, class UT> XP_D T xp_shr_s(T a, T b) {
  const UT count = (UT)b;
  return count < sizeof(T) * 8 ? (T)(a >> count) : (a < 0 ? (T)-1 : (T)0);
}
template <class T> XP_D T xp_shr_u(T a, T b) { return b < sizeof(T) * 8 ? (T)(a >> b) : (T)0; }

// ---- float -> integer: NaN -> 0, saturated beyond [lo, hi), else truncated toward zero ----
template <class I, class F> XP_D I xp_ftoi(F x, F lo, F hi, I mn, I mx) {
  if (!(x == x)) return (I)0;
  if (x >= hi) return mx;
  if (x <= lo) return mn;
  return (I)x;  // lo < x < hi: the truncated value fits
}

// float64 -> 16 bits in one rounding. P: fraction bits (10 or 7), E: exponent bias (15 or 127).
template <int P, int E> XP_D u16 xp_f64_to_16(double d) {
  const int kDrop = 52 - P;
  const u64 kMinNormal = (u64)(1023 - E + 1) << 52;
  const u32 kInf = ((1u << (15 - P)) - 1u) << P;
  const u64 x = (u64)__double_as_longlong(d);
  const u32 sign = (u32)((x >> 48) & 0x8000u);
  const u64 ax = x & 0x7FFFFFFFFFFFFFFFull;
  if (ax > 0x7FF0000000000000ull) return (u16)(sign | kInf | (1u << (P - 1)) | (u32)((ax >> kDrop) & ((1u << P) - 1u)));
  const u64 kOverflow = ((u64)(1023 + E) << 52) | ((((u64)1 << (P + 1)) - 1) << (kDrop - 1));
  if (ax >= kOverflow) return (u16)(sign | kInf);
  if (ax >= kMinNormal) {
    const u64 v = ax - ((u64)(1023 - E) << 52);
    return (u16)(sign | (u32)((v + (((u64)1 << (kDrop - 1)) - 1) + ((v >> kDrop) & 1)) >> kDrop));
  }
  const int e = (int)(ax >> 52);
  const int shift = (1075 + 1 - E - P) - e;
  if (shift > 53) return (u16)sign;
  const u64 m = (ax & 0xFFFFFFFFFFFFFull) | ((u64)1 << 52);
  u64 q = m >> shift;
  const u64 rem = m & (((u64)1 << shift) - 1);
  const u64 half = (u64)1 << (shift - 1);
  if (rem > half || (rem == half && (q & 1) != 0)) ++q;
  return (u16)(sign | (u32)q);
}
// A 64-bit integer as a double rounded to odd, so that rounding it to 16 bits is correct.
XP_D double xp_u64_to_f64_odd(u64 u) {
  if (u < ((u64)1 << 53)) return (double)u;
  const int s = 11 - __clzll((long long)u);  // 1 .. 11 bits dropped
  const u64 v = (u >> s) | ((u & (((u64)1 << s) - 1)) != 0 ? 1ull : 0ull);
  return __dmul_rn((double)v, __longlong_as_double((long long)(1023 + s) << 52));  // exact
}
XP_D double xp_i64_to_f64_odd(i64 x) {
  const u64 mag = x < 0 ? (u64)0 - (u64)x : (u64)x;
  const double d = xp_u64_to_f64_odd(mag);
  return x < 0 ? -d : d;
}

// The float32 and float64 helpers: the same code for each type, with its own intrinsics.
// ---- float ----
XP_D float xp_sign_f32(float a) { return a > 0.0f ? 1.0f : (a < 0.0f ? -1.0f : (a == 0.0f ? 0.0f : a)); }
XP_D float xp_min_f32(float a, float b) { return (a < b || a != a) ? a : b; }  // NaN propagating; ties: b
XP_D float xp_max_f32(float a, float b) { return (a > b || a != a) ? a : b; }
// C's nextafter on the bits, as the CPU's next_after: NaN; b when equal; from 0 the smallest subnormal.
XP_D float xp_nextafter_f32(float a, float b) {
  if (a != a || b != b) return __fadd_rn(a, b);
  if (a == b) return b;
  if (a == 0.0f) return copysignf(__uint_as_float(1u), b);
  const unsigned u = __float_as_uint(a);
  return __uint_as_float(((a < b) == (a > 0.0f)) ? u + 1u : u - 1u);
}
// NumPy's npy_divmod: fmod (exact), then Python's convention, signs of zeros included.
XP_D float xp_divmod_f32(float a, float b, float* mod) {
  *mod = fmodf(a, b);
  float div = __fdiv_rn(__fsub_rn(a, *mod), b);
  if (*mod != 0.0f) {
    if ((b < 0.0f) != (*mod < 0.0f)) {
      *mod = __fadd_rn(*mod, b);
      div = __fsub_rn(div, 1.0f);
    }
  } else {
    *mod = copysignf(0.0f, b);
  }
  if (div == 0.0f) return copysignf(0.0f, __fdiv_rn(a, b));
  const float floordiv = floorf(div);
  return __fsub_rn(div, floordiv) > 0.5f ? __fadd_rn(floordiv, 1.0f) : floordiv;
}
XP_D float xp_floordiv_f32(float a, float b) {
  float mod;
  return b == 0.0f ? __fdiv_rn(a, b) : xp_divmod_f32(a, b, &mod);
}
XP_D float xp_rem_f32(float a, float b) {
  float mod = fmodf(a, b);
  if (b != 0.0f) xp_divmod_f32(a, b, &mod);
  return mod;
}

// hypot as C's: +inf where either operand is infinite (a NaN beside it too), NaN for a NaN, the
// larger magnitude where the smaller is below it by more than half the format's precision (the
// correctly rounded result, where CUDA's hypot(1, DBL_MAX) overflows to inf), and operands scaled
// by an exact power of two near the largest finite values.
XP_D float xp_hypot_f32(float a, float b) {
  const float x = fabsf(a), y = fabsf(b), m = fmaxf(x, y), n = fminf(x, y);
  if (m == __int_as_float(0x7f800000)) return m;
  if (x != x || y != y) return __fadd_rn(a, b);
  if (n <= __fmul_rn(m, 0x1p-13f)) return m;
  if (m > 0x1p120f) return __fmul_rn(hypotf(__fmul_rn(a, 0x1p-64f), __fmul_rn(b, 0x1p-64f)), 0x1p64f);
  return hypotf(a, b);
}

// ---- double ----
XP_D double xp_hypot_f64(double a, double b) {
  const double x = fabs(a), y = fabs(b), m = fmax(x, y), n = fmin(x, y);
  if (m == __longlong_as_double(0x7ff0000000000000ll)) return m;
  if (x != x || y != y) return __dadd_rn(a, b);
  if (n <= __dmul_rn(m, 0x1p-27)) return m;
  if (m > 0x1p1000) return __dmul_rn(hypot(__dmul_rn(a, 0x1p-600), __dmul_rn(b, 0x1p-600)), 0x1p600);
  return hypot(a, b);
}
XP_D double xp_sign_f64(double a) { return a > 0.0 ? 1.0 : (a < 0.0 ? -1.0 : (a == 0.0 ? 0.0 : a)); }
XP_D double xp_min_f64(double a, double b) { return (a < b || a != a) ? a : b; }  // NaN propagating; ties: b
XP_D double xp_max_f64(double a, double b) { return (a > b || a != a) ? a : b; }
XP_D double xp_nextafter_f64(double a, double b) {
  if (a != a || b != b) return __dadd_rn(a, b);
  if (a == b) return b;
  if (a == 0.0) return copysign(__longlong_as_double(1ll), b);
  const u64 u = (u64)__double_as_longlong(a);
  return __longlong_as_double((long long)(((a < b) == (a > 0.0)) ? u + 1ull : u - 1ull));
}
// The same on float16 (bf 0) or bfloat16 (bf 1) bits; a NaN result is the format's default NaN; of
// equal values b, as C (and NumPy 2.5's half loop).
XP_D u16 xp_nextafter_16(u16 a, u16 b, int bf) {
  const float fa = bf ? xp_bf16_to_f32(a) : xp_f16_to_f32(a), fb = bf ? xp_bf16_to_f32(b) : xp_f16_to_f32(b);
  if (fa != fa || fb != fb) return (u16)(bf ? 0x7FC0u : 0x7E00u);
  if (fa == fb) return b;
  if ((a & 0x7FFFu) == 0) return (u16)((b & 0x8000u) | 1u);
  return (u16)(((fa < fb) == (fa > 0.0f)) ? a + 1u : a - 1u);
}
// NumPy's npy_divmod: fmod (exact), then Python's convention, signs of zeros included.
XP_D double xp_divmod_f64(double a, double b, double* mod) {
  *mod = fmod(a, b);
  double div = __ddiv_rn(__dsub_rn(a, *mod), b);
  if (*mod != 0.0) {
    if ((b < 0.0) != (*mod < 0.0)) {
      *mod = __dadd_rn(*mod, b);
      div = __dsub_rn(div, 1.0);
    }
  } else {
    *mod = copysign(0.0, b);
  }
  if (div == 0.0) return copysign(0.0, __ddiv_rn(a, b));
  const double floordiv = floor(div);
  return __dsub_rn(div, floordiv) > 0.5 ? __dadd_rn(floordiv, 1.0) : floordiv;
}
XP_D double xp_floordiv_f64(double a, double b) {
  double mod;
  return b == 0.0 ? __ddiv_rn(a, b) : xp_divmod_f64(a, b, &mod);
}
XP_D double xp_rem_f64(double a, double b) {
  double mod = fmod(a, b);
  if (b != 0.0) xp_divmod_f64(a, b, &mod);
  return mod;
}
