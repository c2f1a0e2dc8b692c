// __half and __nv_bfloat16 for CUDA C++ compiled for the CPU (part of xp's prelude): storage
// types computed in float and rounded back to nearest even after every operation, which gives the
// GPU's bits for +, -, *, / and sqrt (float has more than twice their precision plus two bits, so
// rounding twice is the same as rounding once) and for every conversion.
#pragma once

namespace xp_cpu {
inline unsigned int bits_of(float f) {
  unsigned int x;
  std::memcpy(&x, &f, 4);
  return x;
}
inline float float_of(unsigned int x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
// Rounds m >> shift to nearest even.
inline unsigned long long round_shift(unsigned long long m, int shift) {
  if (shift <= 0) return m;
  if (shift >= 64) return 0;
  const unsigned long long r = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  return r + ((rem > half || (rem == half && (r & 1))) ? 1 : 0);
}
// A double's bits to a binary16 or bfloat16 (`mant` explicit mantissa bits, `bias`, `emax` the
// largest biased exponent of a finite value), to nearest even. NaN becomes the GPU's 0x7fff.
inline unsigned short narrow(double d, int mant, int bias) {
  unsigned long long x;
  std::memcpy(&x, &d, 8);
  const unsigned short sign = static_cast<unsigned short>((x >> 48) & 0x8000u);
  const int e = static_cast<int>((x >> 52) & 0x7ff);
  const unsigned long long frac = x & ((1ull << 52) - 1);
  const int exp_bits = 15 - mant;
  const unsigned short inf = static_cast<unsigned short>(((1u << exp_bits) - 1) << mant);
  if (e == 0x7ff) return frac != 0 ? static_cast<unsigned short>(0x7fff) : static_cast<unsigned short>(sign | inf);
  if (e == 0 && frac == 0) return sign;
  // value = m * 2^(e - 1075), m with its leading one (doubles' subnormals are far below ours)
  const unsigned long long m = e == 0 ? frac : (frac | (1ull << 52));
  const int ee = e == 0 ? 1 : e;
  int target_e = ee - 1023 + bias;  // biased exponent in the narrow type if normal
  unsigned long long r;
  if (target_e >= 1) {
    r = round_shift(m, 52 - mant);  // 1.mant, may carry to 2.0
    if (r >> (mant + 1)) {
      r >>= 1;
      ++target_e;
    }
    if (target_e >= (1 << exp_bits) - 1) return static_cast<unsigned short>(sign | inf);
    return static_cast<unsigned short>(sign | (static_cast<unsigned>(target_e) << mant) |
                                       static_cast<unsigned>(r & ((1ull << mant) - 1)));
  }
  // subnormal: units of 2^(1 - bias - mant)
  const int shift = 52 - mant + (1 - target_e);
  r = round_shift(m, shift);  // may round up to the smallest normal, which the bits express right
  return static_cast<unsigned short>(sign | static_cast<unsigned>(r));
}
inline unsigned short float_to_half(float f) {
  return narrow(static_cast<double>(f), 10, 15);
}
inline unsigned short float_to_bf16(float f) {
  const unsigned int x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  return static_cast<unsigned short>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float half_to_float(unsigned short h) {
  const unsigned int sign = static_cast<unsigned int>(h & 0x8000u) << 16;
  const unsigned int e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return float_of(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-08f;  // m * 2^-24, exact
    return sign ? -v : v;
  }
  return float_of(sign | ((e + 112u) << 23) | (m << 13));
}
inline float bf16_to_float(unsigned short b) {
  return float_of(static_cast<unsigned int>(b) << 16);
}
}  // namespace xp_cpu

#define XP_NARROW_FLOAT(T, RAW, TO, FROM, FROM_DOUBLE)                                  \
  struct RAW {                                                                          \
    unsigned short x;                                                                   \
  };                                                                                    \
  struct T {                                                                            \
    unsigned short __x;                                                                 \
    T() = default;                                                                      \
    constexpr T(RAW r) : __x(r.x) {}                                                    \
    T(float f) : __x(TO(f)) {}                                                          \
    T(double d) : __x(FROM_DOUBLE) {}                                                   \
    T(int i) : __x(TO(static_cast<float>(i))) {}                                        \
    T(unsigned int i) : __x(TO(static_cast<float>(i))) {}                               \
    T(short i) : __x(TO(static_cast<float>(i))) {}                                      \
    T(unsigned short i) : __x(TO(static_cast<float>(i))) {}                             \
    T(long long i) : __x(TO(static_cast<float>(i))) {}                                  \
    T(unsigned long long i) : __x(TO(static_cast<float>(i))) {}                         \
    operator float() const { return FROM(__x); }                                        \
    operator RAW() const { return RAW{__x}; }                                           \
    T& operator=(float f) {                                                             \
      __x = TO(f);                                                                      \
      return *this;                                                                     \
    }                                                                                   \
    T& operator+=(const T& o) { return *this = T(float(*this) + float(o)); }            \
    T& operator-=(const T& o) { return *this = T(float(*this) - float(o)); }            \
    T& operator*=(const T& o) { return *this = T(float(*this) * float(o)); }            \
    T& operator/=(const T& o) { return *this = T(float(*this) / float(o)); }            \
    T& operator++() { return *this += T(1.0f); }                                        \
    T& operator--() { return *this -= T(1.0f); }                                        \
  };                                                                                    \
  inline T operator+(const T& a, const T& b) {                                          \
    return T(float(a) + float(b));                                                      \
  }                                                                                     \
  inline T operator-(const T& a, const T& b) {                                          \
    return T(float(a) - float(b));                                                      \
  }                                                                                     \
  inline T operator*(const T& a, const T& b) {                                          \
    return T(float(a) * float(b));                                                      \
  }                                                                                     \
  inline T operator/(const T& a, const T& b) {                                          \
    return T(float(a) / float(b));                                                      \
  }                                                                                     \
  inline T operator-(const T& a) {                                                      \
    T r = a;                                                                            \
    r.__x ^= 0x8000u;                                                                   \
    return r;                                                                           \
  }                                                                                     \
  inline T operator+(const T& a) {                                                      \
    return a;                                                                           \
  }                                                                                     \
  inline bool operator==(const T& a, const T& b) {                                      \
    return float(a) == float(b);                                                        \
  }                                                                                     \
  inline bool operator!=(const T& a, const T& b) {                                      \
    return float(a) != float(b);                                                        \
  }                                                                                     \
  inline bool operator<(const T& a, const T& b) {                                       \
    return float(a) < float(b);                                                         \
  }                                                                                     \
  inline bool operator<=(const T& a, const T& b) {                                      \
    return float(a) <= float(b);                                                        \
  }                                                                                     \
  inline bool operator>(const T& a, const T& b) {                                       \
    return float(a) > float(b);                                                         \
  }                                                                                     \
  inline bool operator>=(const T& a, const T& b) {                                      \
    return float(a) >= float(b);                                                        \
  }                                                                                     \
  inline T __hadd(T a, T b) {                                                           \
    return a + b;                                                                       \
  }                                                                                     \
  inline T __hsub(T a, T b) {                                                           \
    return a - b;                                                                       \
  }                                                                                     \
  inline T __hmul(T a, T b) {                                                           \
    return a * b;                                                                       \
  }                                                                                     \
  inline T __hdiv(T a, T b) {                                                           \
    return a / b;                                                                       \
  }                                                                                     \
  inline T __hfma(T a, T b, T c) {                                                      \
    return T(static_cast<double>(float(a)) * static_cast<double>(float(b)) + float(c)); \
  }                                                                                     \
  inline T __hneg(T a) {                                                                \
    return -a;                                                                          \
  }                                                                                     \
  inline T __habs(T a) {                                                                \
    a.__x &= 0x7fffu;                                                                   \
    return a;                                                                           \
  }                                                                                     \
  inline T __hmax(T a, T b) {                                                           \
    return T(std::fmax(float(a), float(b)));                                            \
  }                                                                                     \
  inline T __hmin(T a, T b) {                                                           \
    return T(std::fmin(float(a), float(b)));                                            \
  }                                                                                     \
  inline bool __heq(T a, T b) {                                                         \
    return a == b;                                                                      \
  }                                                                                     \
  inline bool __hne(T a, T b) {                                                         \
    return !(float(a) == float(b)) && float(a) == float(a) && float(b) == float(b);     \
  }                                                                                     \
  inline bool __hlt(T a, T b) {                                                         \
    return a < b;                                                                       \
  }                                                                                     \
  inline bool __hle(T a, T b) {                                                         \
    return a <= b;                                                                      \
  }                                                                                     \
  inline bool __hgt(T a, T b) {                                                         \
    return a > b;                                                                       \
  }                                                                                     \
  inline bool __hge(T a, T b) {                                                         \
    return a >= b;                                                                      \
  }                                                                                     \
  inline bool __hisnan(T a) {                                                           \
    return float(a) != float(a);                                                        \
  }                                                                                     \
  inline int __hisinf(T a) {                                                            \
    const float f = float(a);                                                           \
    return std::isinf(f) ? (f < 0 ? -1 : 1) : 0;                                        \
  }                                                                                     \
  inline T hsqrt(T a) {                                                                 \
    return T(std::sqrt(float(a)));                                                      \
  }                                                                                     \
  inline T hexp(T a) {                                                                  \
    return T(std::exp(float(a)));                                                       \
  }                                                                                     \
  inline T hlog(T a) {                                                                  \
    return T(std::log(float(a)));                                                       \
  }                                                                                     \
  inline T hsin(T a) {                                                                  \
    return T(std::sin(float(a)));                                                       \
  }                                                                                     \
  inline T hcos(T a) {                                                                  \
    return T(std::cos(float(a)));                                                       \
  }                                                                                     \
  inline T hrsqrt(T a) {                                                                \
    return T(1.0f / std::sqrt(float(a)));                                               \
  }                                                                                     \
  inline T hrcp(T a) {                                                                  \
    return T(1.0f / float(a));                                                          \
  }                                                                                     \
  inline T hfloor(T a) {                                                                \
    return T(std::floor(float(a)));                                                     \
  }                                                                                     \
  inline T hceil(T a) {                                                                 \
    return T(std::ceil(float(a)));                                                      \
  }                                                                                     \
  inline T htrunc(T a) {                                                                \
    return T(std::trunc(float(a)));                                                     \
  }                                                                                     \
  inline T hrint(T a) {                                                                 \
    return T(std::nearbyint(float(a)));                                                 \
  }                                                                                     \
  struct alignas(4) T##2 {                                                              \
    T x, y;                                                                             \
  };                                                                                    \
  inline T##2 operator+(const T##2 & a, const T##2 & b) {                               \
    return T##2 {a.x + b.x, a.y + b.y};                                                 \
  }                                                                                     \
  inline T##2 operator-(const T##2 & a, const T##2 & b) {                               \
    return T##2 {a.x - b.x, a.y - b.y};                                                 \
  }                                                                                     \
  inline T##2 operator*(const T##2 & a, const T##2 & b) {                               \
    return T##2 {a.x * b.x, a.y * b.y};                                                 \
  }                                                                                     \
  inline T##2 operator/(const T##2 & a, const T##2 & b) {                               \
    return T##2 {a.x / b.x, a.y / b.y};                                                 \
  }                                                                                     \
  inline T##2 __hadd2(T##2 a, T##2 b) {                                                 \
    return a + b;                                                                       \
  }                                                                                     \
  inline T##2 __hsub2(T##2 a, T##2 b) {                                                 \
    return a - b;                                                                       \
  }                                                                                     \
  inline T##2 __hmul2(T##2 a, T##2 b) {                                                 \
    return a * b;                                                                       \
  }                                                                                     \
  inline T##2 __h2div(T##2 a, T##2 b) {                                                 \
    return a / b;                                                                       \
  }                                                                                     \
  inline T##2 __hfma2(T##2 a, T##2 b, T##2 c) {                                         \
    return T##2 {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};                         \
  }                                                                                     \
  inline T##2 __hneg2(T##2 a) {                                                         \
    return T##2 {-a.x, -a.y};                                                           \
  }
XP_NARROW_FLOAT(__half, __half_raw, xp_cpu::float_to_half, xp_cpu::half_to_float, xp_cpu::narrow(d, 10, 15))
XP_NARROW_FLOAT(__nv_bfloat16, __nv_bfloat16_raw, xp_cpu::float_to_bf16, xp_cpu::bf16_to_float,
                xp_cpu::narrow(d, 7, 127))
#undef XP_NARROW_FLOAT
using half = __half;
using half2 = __half2;
using nv_bfloat16 = __nv_bfloat16;
using nv_bfloat162 = __nv_bfloat162;

inline __half __float2half(float f) {
  return __half(f);
}
inline __half __float2half_rn(float f) {
  return __half(f);
}
inline float __half2float(__half h) {
  return float(h);
}
inline __half __double2half(double d) {
  return __half(d);
}
inline __half __int2half_rn(int i) {
  return __half(i);
}
inline int __half2int_rz(__half h) {
  return __float2int_rz(float(h));
}
inline int __half2int_rn(__half h) {
  return __float2int_rn(float(h));
}
inline unsigned short __half_as_ushort(__half h) {
  return h.__x;
}
inline short __half_as_short(__half h) {
  return static_cast<short>(h.__x);
}
inline __half __ushort_as_half(unsigned short x) {
  return __half(__half_raw{x});
}
inline __half __short_as_half(short x) {
  return __half(__half_raw{static_cast<unsigned short>(x)});
}
inline __half2 __halves2half2(__half a, __half b) {
  return __half2{a, b};
}
inline __half2 __half2half2(__half a) {
  return __half2{a, a};
}
inline __half2 __float2half2_rn(float f) {
  return __half2{__half(f), __half(f)};
}
inline __half2 __floats2half2_rn(float a, float b) {
  return __half2{__half(a), __half(b)};
}
inline __half2 __float22half2_rn(float2 f) {
  return __half2{__half(f.x), __half(f.y)};
}
inline float2 __half22float2(__half2 h) {
  return make_float2(float(h.x), float(h.y));
}
inline __half __low2half(__half2 h) {
  return h.x;
}
inline __half __high2half(__half2 h) {
  return h.y;
}
inline float __low2float(__half2 h) {
  return float(h.x);
}
inline float __high2float(__half2 h) {
  return float(h.y);
}

inline __nv_bfloat16 __float2bfloat16(float f) {
  return __nv_bfloat16(f);
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  return __nv_bfloat16(f);
}
inline float __bfloat162float(__nv_bfloat16 h) {
  return float(h);
}
inline __nv_bfloat16 __double2bfloat16(double d) {
  return __nv_bfloat16(d);
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) {
  return h.__x;
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) {
  return __nv_bfloat16(__nv_bfloat16_raw{x});
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(b)};
}
inline float2 __bfloat1622float2(__nv_bfloat162 h) {
  return make_float2(float(h.x), float(h.y));
}
inline __half atomicAdd(__half* a, __half v) {
  unsigned short* p = &a->__x;
  unsigned short old = __atomic_load_n(p, __ATOMIC_RELAXED), next;
  do {
    next = (__half(__half_raw{old}) + v).__x;
  } while (!__atomic_compare_exchange_n(p, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return __half(__half_raw{old});
}
