// Complex elementwise math, written once for both backends: the CPU backend #includes this file
// (backend/cpu/ew_complex.cpp) and the CUDA backend pastes it into every generated kernel after
// device/complex_real.cuh (CMake embeds it beside the device/*.cuh files). It includes nothing.
//
// Before it the includer defines:
//   XP_CM_D            the function qualifiers: `inline` on the CPU, `__device__ __forceinline__` on a GPU
//   xp_real<float>, xp_real<double>   static member functions on one real type T:
//     add sub mul div sqrt rint   exactly rounded, never contracted into an FMA (IEEE operations)
//     fabs copysign               bits only
//     isnan isinf                 -> bool
//     exp expm1 log log1p sin cos tan sinh cosh asin atan atan2 hypot   C99 Annex F's special values;
//                                 hypot(+-inf, NaN) = +inf and no overflow or underflow inside hypot
//     inf() nan()                 +infinity and a quiet NaN
//
// Values follow the Array API standard's special-case tables for complex operands (which follow C99
// Annex G): odd / even / conjugate symmetries, signed zeros, infinities and NaNs. Where the standard
// leaves a sign unspecified the choice is NumPy's (glibc's). docs/semantics.md ("Complex numbers")
// states the accuracy measured against a reference of higher precision.
//
// Algorithms: textbook formulas with the usual guards. exp / sinh / cosh scale past the overflow
// threshold; log and log1p compute |z|^2 - 1 in double-double (Dekker's products, no FMA) near the
// unit circle; sqrt is Kahan's half-angle form with power-of-two scaling; tanh is Kahan's formula;
// asin / acos (and through them asinh, acosh) use the real-part / imaginary-part split of Hull,
// Fairgrieve and Tang (ACM TOMS 1997) with crossovers at A = 1.5 and B = 0.6417; atanh uses
// log1p(4x / ((1-x)^2 + y^2)) / 4 and atan2.

template <class T>
struct xp_complex {
  T re, im;
};
typedef xp_complex<float> xp_c64;
typedef xp_complex<double> xp_c128;

template <class T>
XP_CM_D xp_complex<T> xp_cm_make(T re, T im) {
  xp_complex<T> z;
  z.re = re;
  z.im = im;
  return z;
}

// Thresholds of each precision (exact powers of two or values well inside the range).
template <class T>
struct xp_cm_lim;
template <>
struct xp_cm_lim<float> {
  static XP_CM_D float exp_max() { return 88.0f; }   // exp below it is finite
  static XP_CM_D float huge() { return 0x1p120f; }   // scale down beyond
  static XP_CM_D float tiny() { return 0x1p-100f; }  // scale up below
  static XP_CM_D float down() { return 0x1p-64f; }   // the scales (exact powers of two)
  static XP_CM_D float up() { return 0x1p64f; }
  static XP_CM_D float up_half() { return 0x1p32f; }           // sqrt(up())
  static XP_CM_D float up_log() { return 44.3614195558365f; }  // ln(up()) = 64 ln 2
  static XP_CM_D float big() { return 0x1p13f; }               // asin, atanh: past it the asymptotic form
  static XP_CM_D float small() { return 0x1p-13f; }            // below it f(z) = z to working precision
  static XP_CM_D float sq_tiny() { return 0x1p-60f; }          // y^2 underflows below it
  static XP_CM_D float tanh_big() { return 11.0f; }            // tanh(x) rounds to +-1 from there
};
template <>
struct xp_cm_lim<double> {
  static XP_CM_D double exp_max() { return 709.0; }
  static XP_CM_D double huge() { return 0x1p1000; }
  static XP_CM_D double tiny() { return 0x1p-900; }
  static XP_CM_D double down() { return 0x1p-600; }
  static XP_CM_D double up() { return 0x1p600; }
  static XP_CM_D double up_half() { return 0x1p300; }
  static XP_CM_D double up_log() { return 415.88830833596716; }  // 600 ln 2
  static XP_CM_D double big() { return 0x1p28; }
  static XP_CM_D double small() { return 0x1p-28; }
  static XP_CM_D double sq_tiny() { return 0x1p-500; }
  static XP_CM_D double tanh_big() { return 22.0; }
};

// Constants, rounded to T from their double values (correctly rounded for float too: every double
// here is within a quarter float ulp of the true constant, so it rounds the same way).
template <class T>
struct xp_cm_k {
  static XP_CM_D T pi() { return (T)3.141592653589793; }
  static XP_CM_D T pi_2() { return (T)1.5707963267948966; }
  static XP_CM_D T pi_4() { return (T)0.7853981633974483; }
  static XP_CM_D T ln2() { return (T)0.6931471805599453; }
  static XP_CM_D T log2e() { return (T)1.4426950408889634; }
  static XP_CM_D T log10e() { return (T)0.4342944819032518; }
};

template <class T>
XP_CM_D T xp_cm_max(T a, T b) {
  return a > b ? a : b;
}
template <class T>
XP_CM_D T xp_cm_min(T a, T b) {
  return a < b ? a : b;
}

// ---- exactly rounded operations: the same bits on every device ----

template <class T>
XP_CM_D xp_complex<T> xp_cm_add(xp_complex<T> a, xp_complex<T> b) {
  typedef xp_real<T> R;
  return xp_cm_make(R::add(a.re, b.re), R::add(a.im, b.im));
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_sub(xp_complex<T> a, xp_complex<T> b) {
  typedef xp_real<T> R;
  return xp_cm_make(R::sub(a.re, b.re), R::sub(a.im, b.im));
}
// -v with its sign bit flipped for a NaN too, through copysign (bits only): a GPU's negation of a
// NaN need not flip it (atan(inf + NaN i) gave -0 where the CPU gives +0, the sign coming from the
// NaN that the rotation negates), so every negation here that may meet a NaN is this one.
template <class T>
XP_CM_D T xp_cm_flip(T v) {
  typedef xp_real<T> R;
  return R::copysign(v, R::copysign((T)1, v) > (T)0 ? (T)-1 : (T)1);
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_neg(xp_complex<T> a) {
  return xp_cm_make(xp_cm_flip(a.re), xp_cm_flip(a.im));
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_conj(xp_complex<T> a) {
  return xp_cm_make(a.re, xp_cm_flip(a.im));
}
// (ac - bd) + (ad + bc)i, each product rounded, as NumPy (no recovery of infinities from NaNs).
template <class T>
XP_CM_D xp_complex<T> xp_cm_mul(xp_complex<T> a, xp_complex<T> b) {
  typedef xp_real<T> R;
  return xp_cm_make(R::sub(R::mul(a.re, b.re), R::mul(a.im, b.im)), R::add(R::mul(a.re, b.im), R::mul(a.im, b.re)));
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_square(xp_complex<T> a) {
  return xp_cm_mul(a, a);
}
// Smith's algorithm in NumPy's form: the ratio of the divisor's smaller to larger component, a
// reciprocal scale, and a zero divisor divided through componentwise (giving infinities or NaNs).
template <class T>
XP_CM_D xp_complex<T> xp_cm_div(xp_complex<T> a, xp_complex<T> b) {
  typedef xp_real<T> R;
  const T br = R::fabs(b.re), bi = R::fabs(b.im);
  if (br >= bi) {
    if (br == 0 && bi == 0) return xp_cm_make(R::div(a.re, br), R::div(a.im, br));
    const T rat = R::div(b.im, b.re);
    const T scl = R::div((T)1, R::add(b.re, R::mul(b.im, rat)));
    return xp_cm_make(R::mul(R::add(a.re, R::mul(a.im, rat)), scl), R::mul(R::sub(a.im, R::mul(a.re, rat)), scl));
  }
  const T rat = R::div(b.re, b.im);
  const T scl = R::div((T)1, R::add(b.im, R::mul(b.re, rat)));
  return xp_cm_make(R::mul(R::add(R::mul(a.re, rat), a.im), scl), R::mul(R::sub(R::mul(a.im, rat), a.re), scl));
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_round(xp_complex<T> a) {
  typedef xp_real<T> R;
  return xp_cm_make(R::rint(a.re), R::rint(a.im));  // half to even, each component
}
template <class T>
XP_CM_D bool xp_cm_equal(xp_complex<T> a, xp_complex<T> b) {
  return a.re == b.re && a.im == b.im;
}
// A complex value as a truth value (a cast to bool): either part nonzero, a NaN part too.
template <class T>
XP_CM_D bool xp_cm_nonzero(xp_complex<T> a) {
  return a.re != 0 || a.im != 0;
}
template <class T>
XP_CM_D bool xp_cm_isnan(xp_complex<T> a) {
  return xp_real<T>::isnan(a.re) || xp_real<T>::isnan(a.im);
}
// Infinite when either component is, whatever the other (a NaN too).
template <class T>
XP_CM_D bool xp_cm_isinf(xp_complex<T> a) {
  return xp_real<T>::isinf(a.re) || xp_real<T>::isinf(a.im);
}
template <class T>
XP_CM_D bool xp_cm_isfinite(xp_complex<T> a) {
  return !xp_cm_isnan(a) && !xp_cm_isinf(a);
}

// ---- double-double helpers (Dekker), for x^2 + y^2 + c near cancellation ----

XP_CM_D void xp_cm_two_sum(double a, double b, double& s, double& e) {
  typedef xp_real<double> R;
  s = R::add(a, b);
  const double bb = R::sub(s, a);
  e = R::add(R::sub(a, R::sub(s, bb)), R::sub(b, bb));
}
// a * a = p + e exactly (|a| well inside the range), by Veltkamp's split.
XP_CM_D void xp_cm_two_square(double a, double& p, double& e) {
  typedef xp_real<double> R;
  const double c = R::mul(134217729.0, a);  // 2^27 + 1
  const double hi = R::sub(c, R::sub(c, a));
  const double lo = R::sub(a, hi);
  p = R::mul(a, a);
  e = R::add(R::add(R::sub(R::mul(hi, hi), p), R::mul(R::add(hi, hi), lo)), R::mul(lo, lo));
}
// x^2 + y^2 + c to about double-double accuracy before the last rounding (|x|, |y| <= 4, c exact).
XP_CM_D double xp_cm_sumsq_plus(double x, double y, double c) {
  typedef xp_real<double> R;
  double px, ex, py, ey, s1, t1, s2, t2;
  xp_cm_two_square(x, px, ex);
  xp_cm_two_square(y, py, ey);
  xp_cm_two_sum(c, px, s1, t1);
  xp_cm_two_sum(s1, py, s2, t2);
  return R::add(s2, R::add(R::add(t1, t2), R::add(ex, ey)));
}
XP_CM_D float xp_cm_sumsq_plus(float x, float y, float c) {
  return (float)xp_cm_sumsq_plus((double)x, (double)y, (double)c);
}

// ---- abs and sign ----

template <class T>
XP_CM_D T xp_cm_abs(xp_complex<T> a) {
  return xp_real<T>::hypot(a.re, a.im);
}

// z / |z|; 0 for 0; NaN if a component is NaN (the standard); an infinite component gives its
// direction (NumPy), both infinite NaN.
template <class T>
XP_CM_D xp_complex<T> xp_cm_sign(xp_complex<T> a) {
  typedef xp_real<T> R;
  typedef xp_cm_lim<T> L;
  if (R::isnan(a.re) || R::isnan(a.im)) return xp_cm_make(R::nan(), R::nan());
  if (a.re == 0 && a.im == 0) return xp_cm_make((T)0, (T)0);
  const bool ire = R::isinf(a.re), iim = R::isinf(a.im);
  if (ire && iim) return xp_cm_make(R::nan(), R::nan());
  if (ire) return xp_cm_make(R::copysign((T)1, a.re), (T)0);
  if (iim) return xp_cm_make((T)0, R::copysign((T)1, a.im));
  T x = a.re, y = a.im;
  const T m = xp_cm_max(R::fabs(x), R::fabs(y));
  if (m > L::huge()) {
    x = R::mul(x, L::down());
    y = R::mul(y, L::down());
  } else if (m < L::tiny()) {
    x = R::mul(x, L::up());
    y = R::mul(y, L::up());
  }
  const T h = R::hypot(x, y);
  return xp_cm_make(R::div(x, h), R::div(y, h));
}

// ---- exp and its relatives ----

// e^x (cos y + i sin y) for finite x and y != 0, without overflow where the result is finite.
template <class T>
XP_CM_D xp_complex<T> xp_cm_exp_cis(T x, T y) {
  typedef xp_real<T> R;
  const T c = R::cos(y), s = R::sin(y);
  if (x > xp_cm_lim<T>::exp_max()) {
    const T h = R::exp(R::mul(x, (T)0.5));
    return xp_cm_make(R::mul(R::mul(h, c), h), R::mul(R::mul(h, s), h));
  }
  const T e = R::exp(x);
  return xp_cm_make(R::mul(e, c), R::mul(e, s));
}

template <class T>
XP_CM_D xp_complex<T> xp_cm_exp(xp_complex<T> z) {
  typedef xp_real<T> R;
  const T x = z.re, y = z.im;
  if (R::isnan(x)) return y == 0 ? z : xp_cm_make(x, R::nan());
  if (R::isinf(y) || R::isnan(y)) {
    if (R::isinf(x)) return x > 0 ? xp_cm_make(x, R::nan()) : xp_cm_make((T)0, (T)0);
    return xp_cm_make(R::nan(), R::nan());
  }
  if (y == 0) return xp_cm_make(R::exp(x), y);
  if (R::isinf(x))
    return x > 0 ? xp_cm_make(R::mul(x, R::cos(y)), R::mul(x, R::sin(y)))
                 : xp_cm_make(R::mul((T)0, R::cos(y)), R::mul((T)0, R::sin(y)));
  return xp_cm_exp_cis(x, y);
}

// e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2) for finite x (not past exp_max) and y != 0. The
// two terms cancel near e^x cos y = 1: float32 computes them in float64, which leaves 24 good bits
// there; float64 loses what the cancellation takes. x = 0 gives -0 where the square underflows.
XP_CM_D double xp_cm_expm1_re(double x, double y) {
  typedef xp_real<double> R;
  const double s = R::sin(R::mul(y, 0.5));
  const double t = R::mul(R::add(s, s), s);
  return x == 0 ? -t : R::sub(R::mul(R::expm1(x), R::cos(y)), t);
}
XP_CM_D float xp_cm_expm1_re(float x, float y) {
  return (float)xp_cm_expm1_re((double)x, (double)y);
}

// e^z - 1: (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y; special values as exp's, less one.
template <class T>
XP_CM_D xp_complex<T> xp_cm_expm1(xp_complex<T> z) {
  typedef xp_real<T> R;
  const T x = z.re, y = z.im;
  if (R::isnan(x)) return y == 0 ? z : xp_cm_make(x, R::nan());
  if (R::isinf(y) || R::isnan(y)) {
    if (R::isinf(x)) return x > 0 ? xp_cm_make(x, R::nan()) : xp_cm_make((T)-1, (T)0);
    return xp_cm_make(R::nan(), R::nan());
  }
  // The standard: expm1(+-0 + 0j) is +0 + 0j (the real function keeps -0's sign; this one does not).
  if (y == 0) return xp_cm_make(x == 0 ? (T)0 : R::expm1(x), y);
  if (R::isinf(x))
    return x > 0 ? xp_cm_make(R::mul(x, R::cos(y)), R::mul(x, R::sin(y))) : xp_cm_make((T)-1, R::mul((T)0, R::sin(y)));
  if (x > xp_cm_lim<T>::exp_max()) {
    const xp_complex<T> e = xp_cm_exp_cis(x, y);
    return xp_cm_make(R::sub(e.re, (T)1), e.im);
  }
  return xp_cm_make(xp_cm_expm1_re(x, y), R::mul(R::exp(x), R::sin(y)));
}

// sinh(z) = sinh x cos y + i cosh x sin y.
template <class T>
XP_CM_D xp_complex<T> xp_cm_sinh(xp_complex<T> z) {
  typedef xp_real<T> R;
  const T x = z.re, y = z.im;
  const bool fy = !R::isinf(y) && !R::isnan(y);
  if (R::isnan(x)) return y == 0 ? z : xp_cm_make(x, R::nan());
  if (R::isinf(x)) {
    if (y == 0) return z;
    if (fy) return xp_cm_make(R::mul(x, R::cos(y)), R::mul(R::inf(), R::sin(y)));
    return xp_cm_make(R::fabs(x), R::nan());  // (+-inf, inf or NaN) -> (inf, NaN), NumPy's sign
  }
  if (!fy) return x == 0 ? xp_cm_make(x, R::nan()) : xp_cm_make(R::nan(), R::nan());
  if (y == 0) return xp_cm_make(R::sinh(x), y);
  const T ax = R::fabs(x);
  if (ax > xp_cm_lim<T>::exp_max()) {  // cosh and sinh overflow before the products do
    const T h = R::exp(R::mul(ax, (T)0.5));
    const T hh = R::mul(h, (T)0.5);
    const T re = R::mul(R::mul(hh, R::cos(y)), h);  // sinh x cos y with sinh |x| ~ e^|x| / 2
    return xp_cm_make(x < 0 ? -re : re, R::mul(R::mul(hh, R::sin(y)), h));
  }
  return xp_cm_make(R::mul(R::sinh(x), R::cos(y)), R::mul(R::cosh(x), R::sin(y)));
}

// cosh(z) = cosh x cos y + i sinh x sin y.
template <class T>
XP_CM_D xp_complex<T> xp_cm_cosh(xp_complex<T> z) {
  typedef xp_real<T> R;
  const T x = z.re, y = z.im;
  const bool fy = !R::isinf(y) && !R::isnan(y);
  if (R::isnan(x)) return y == 0 ? z : xp_cm_make(x, R::nan());
  if (R::isinf(x)) {
    if (y == 0) return xp_cm_make(R::inf(), R::mul(R::copysign((T)0, x), y));
    if (fy) return xp_cm_make(R::mul(R::inf(), R::cos(y)), R::mul(x, R::sin(y)));
    return xp_cm_make(R::inf(), R::nan());
  }
  if (!fy) return x == 0 ? xp_cm_make(R::nan(), (T)0) : xp_cm_make(R::nan(), R::nan());
  if (y == 0) return xp_cm_make(R::cosh(x), R::mul(R::copysign((T)0, x), y));
  const T ax = R::fabs(x);
  if (ax > xp_cm_lim<T>::exp_max()) {
    const T h = R::exp(R::mul(ax, (T)0.5));
    const T hh = R::mul(h, (T)0.5);
    const T im = R::mul(R::mul(hh, R::sin(y)), h);
    return xp_cm_make(R::mul(R::mul(hh, R::cos(y)), h), x < 0 ? -im : im);
  }
  return xp_cm_make(R::mul(R::cosh(x), R::cos(y)), R::mul(R::sinh(x), R::sin(y)));
}

// tanh by Kahan's formula: t = tan y, s = sinh x, beta = 1 + t^2, rho = sqrt(1 + s^2):
// tanh z = (beta rho s + i t) / (1 + beta s^2); past tanh_big, +-1 + i 4 sin y cos y e^(-2|x|).
template <class T>
XP_CM_D xp_complex<T> xp_cm_tanh(xp_complex<T> z) {
  typedef xp_real<T> R;
  const T x = z.re, y = z.im;
  const bool fy = !R::isinf(y) && !R::isnan(y);
  if (R::isnan(x)) return y == 0 ? z : xp_cm_make(x, R::nan());
  if (R::isinf(x)) {
    // The standard: tanh(+infinity + bj) is 1 + 0j for a positive finite b (C99 gives 0 the sign
    // of sin(2b)); a negative b gives -0 by symmetry (tanh(conj(z)) = conj(tanh(z))).
    return xp_cm_make(R::copysign((T)1, x), fy ? R::copysign((T)0, y) : (T)0);
  }
  if (!fy) return x == 0 ? xp_cm_make(x, R::nan()) : xp_cm_make(R::nan(), R::nan());
  const T ax = R::fabs(x);
  if (ax >= xp_cm_lim<T>::tanh_big()) {
    const T e = R::exp(-ax);
    const T im = R::mul(R::mul(R::mul((T)4, R::sin(y)), R::cos(y)), R::mul(e, e));
    return xp_cm_make(R::copysign((T)1, x), im);
  }
  const T t = R::tan(y);
  const T beta = R::add((T)1, R::mul(t, t));
  const T s = R::sinh(x);
  const T rho = R::sqrt(R::add((T)1, R::mul(s, s)));
  const T den = R::add((T)1, R::mul(R::mul(beta, s), s));
  return xp_cm_make(R::div(R::mul(R::mul(beta, rho), s), den), R::div(t, den));
}

// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz).
template <class T>
XP_CM_D xp_complex<T> xp_cm_sin(xp_complex<T> z) {
  const xp_complex<T> w = xp_cm_sinh(xp_cm_make(xp_cm_flip(z.im), z.re));
  return xp_cm_make(w.im, xp_cm_flip(w.re));
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_cos(xp_complex<T> z) {
  return xp_cm_cosh(xp_cm_make(xp_cm_flip(z.im), z.re));
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_tan(xp_complex<T> z) {
  const xp_complex<T> w = xp_cm_tanh(xp_cm_make(xp_cm_flip(z.im), z.re));
  return xp_cm_make(w.im, xp_cm_flip(w.re));
}

// ---- logarithms and sqrt ----

// log |x + iy| for finite x, y: near the unit circle log1p(x^2 + y^2 - 1) / 2 with x^2 + y^2 - 1
// in double-double; elsewhere log(hypot) with the operands scaled away from overflow and underflow.
template <class T>
XP_CM_D T xp_cm_log_abs(T x, T y) {
  typedef xp_real<T> R;
  typedef xp_cm_lim<T> L;
  const T ax = R::fabs(x), ay = R::fabs(y);
  const T big = xp_cm_max(ax, ay), small = xp_cm_min(ax, ay);
  if (big > L::huge()) return R::add(R::log(R::hypot(R::mul(x, L::down()), R::mul(y, L::down()))), L::up_log());
  if (big < L::tiny()) return R::sub(R::log(R::hypot(R::mul(x, L::up()), R::mul(y, L::up()))), L::up_log());
  const T h = R::hypot(x, y);
  if (h >= (T)0.5 && h <= (T)2) return R::mul((T)0.5, R::log1p(xp_cm_sumsq_plus(big, small, (T)-1)));
  return R::log(h);
}

template <class T>
XP_CM_D xp_complex<T> xp_cm_log(xp_complex<T> z) {
  typedef xp_real<T> R;
  const T x = z.re, y = z.im;
  const T im = R::atan2(y, x);
  if (R::isinf(x) || R::isinf(y) || R::isnan(x) || R::isnan(y)) return xp_cm_make(R::log(R::hypot(x, y)), im);
  if (x == 0 && y == 0) return xp_cm_make(-R::inf(), im);
  return xp_cm_make(xp_cm_log_abs(x, y), im);
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_log2(xp_complex<T> z) {
  typedef xp_real<T> R;
  const xp_complex<T> l = xp_cm_log(z);
  return xp_cm_make(R::mul(l.re, xp_cm_k<T>::log2e()), R::mul(l.im, xp_cm_k<T>::log2e()));
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_log10(xp_complex<T> z) {
  typedef xp_real<T> R;
  const xp_complex<T> l = xp_cm_log(z);
  return xp_cm_make(R::mul(l.re, xp_cm_k<T>::log10e()), R::mul(l.im, xp_cm_k<T>::log10e()));
}

// log(1 + z): near |1 + z| = 1 the real part is log1p(x^2 + 2x + y^2) / 2 without forming 1 + x.
template <class T>
XP_CM_D xp_complex<T> xp_cm_log1p(xp_complex<T> z) {
  typedef xp_real<T> R;
  const T x = z.re, y = z.im;
  const T w = R::add(x, (T)1);
  const T im = R::atan2(y, w);
  if (R::isinf(x) || R::isinf(y) || R::isnan(x) || R::isnan(y)) return xp_cm_make(R::log(R::hypot(w, y)), im);
  const T ax = R::fabs(x), ay = R::fabs(y);
  if (ax < (T)2 && ay < (T)2) {
    const T h = R::hypot(w, y);
    if (h >= (T)0.5 && h <= (T)2) return xp_cm_make(R::mul((T)0.5, R::log1p(xp_cm_sumsq_plus(x, y, R::add(x, x)))), im);
  }
  if (w == 0 && y == 0) return xp_cm_make(-R::inf(), im);
  return xp_cm_make(xp_cm_log_abs(w, y), im);
}

// sqrt by the half angle: t = sqrt((|x| + |z|) / 2); x >= 0: t + i y/(2t); x < 0: |y|/(2t) +- i t.
template <class T>
XP_CM_D xp_complex<T> xp_cm_sqrt(xp_complex<T> z) {
  typedef xp_real<T> R;
  typedef xp_cm_lim<T> L;
  T x = z.re, y = z.im;
  if (R::isinf(y)) return xp_cm_make(R::inf(), y);
  if (R::isnan(x)) return xp_cm_make(x, R::nan());
  if (R::isinf(x)) {
    if (x > 0) return xp_cm_make(x, R::isnan(y) ? y : R::copysign((T)0, y));
    return xp_cm_make(R::isnan(y) ? y : (T)0, R::copysign(R::inf(), y));  // (-inf, NaN): NaN + inf i
  }
  if (R::isnan(y)) return xp_cm_make(R::nan(), R::nan());
  if (x == 0 && y == 0) return xp_cm_make((T)0, y);
  const T m = xp_cm_max(R::fabs(x), R::fabs(y));
  T scale = (T)1;  // of the result
  if (m > L::huge()) {
    x = R::mul(x, (T)0.25);
    y = R::mul(y, (T)0.25);
    scale = (T)2;
  } else if (m < L::tiny()) {
    x = R::mul(x, L::up());
    y = R::mul(y, L::up());
    scale = R::div((T)1, L::up_half());
  }
  const T t = R::sqrt(R::mul(R::add(R::fabs(x), R::hypot(x, y)), (T)0.5));
  const T u = R::div(R::fabs(y), R::add(t, t));
  if (x >= 0) return xp_cm_make(R::mul(t, scale), R::copysign(R::mul(u, scale), y));
  return xp_cm_make(R::mul(u, scale), R::copysign(R::mul(t, scale), y));
}

// ---- inverse functions ----

// asin and acos on the first quadrant (x, y >= 0, not NaN; infinities go to the asymptotic form):
// re_asin, re_acos and the common imaginary magnitude im (asin's imaginary part, -acos's).
template <class T>
XP_CM_D void xp_cm_asin_core(T x, T y, T& re_asin, T& re_acos, T& im) {
  typedef xp_real<T> R;
  typedef xp_cm_lim<T> L;
  if (x > L::big() || y > L::big()) {  // asin z ~ atan2(x, y) + i log(2|z|)
    re_asin = R::atan2(x, y);
    re_acos = R::atan2(y, x);
    im = R::add(xp_cm_log_abs(x, y), xp_cm_k<T>::ln2());
    return;
  }
  if (x < L::small() && y < L::small()) {  // asin z ~ z
    re_asin = x;
    re_acos = R::sub(xp_cm_k<T>::pi_2(), x);
    im = y;
    return;
  }
  const T xp1 = R::add(x, (T)1), xm1 = R::sub(x, (T)1), one_m_x = R::sub((T)1, x);
  const T r = R::hypot(xp1, y), s = R::hypot(xm1, y);
  const T A = R::mul((T)0.5, R::add(r, s));
  const T B = R::div(x, A);
  const T yy = R::mul(y, y);
  // The imaginary part: log(A + sqrt(A^2 - 1)), with A - 1 formed without cancellation.
  if (A <= (T)1.5) {
    if (x < (T)1 && y < L::sq_tiny()) {
      im = R::div(y, R::sqrt(R::mul(one_m_x, xp1)));
    } else if (x == (T)1 && y < L::sq_tiny()) {
      im = R::sqrt(y);  // A - 1 ~ y/2 would underflow
    } else {
      T am1;
      if (x < (T)1)
        am1 = R::mul((T)0.5, R::add(R::div(yy, R::add(r, xp1)), R::div(yy, R::add(s, one_m_x))));
      else
        am1 = R::mul((T)0.5, R::add(R::div(yy, R::add(r, xp1)), R::add(s, xm1)));
      im = R::log1p(R::add(am1, R::sqrt(R::mul(am1, R::add(A, (T)1)))));
    }
  } else {
    im = R::log(R::add(A, R::sqrt(R::sub(R::mul(A, A), (T)1))));
  }
  // The real parts: asin(B) and acos(B), or near B = 1 the same angle through atan.
  if (B <= (T)0.6417) {
    re_asin = R::asin(B);
    re_acos = R::sub(xp_cm_k<T>::pi_2(), re_asin);
    if (B > (T)0.25) re_acos = R::atan2(R::sqrt(R::sub((T)1, R::mul(B, B))), B);
    return;
  }
  T q;  // sqrt(A^2 - x^2) = the cosine side, formed without cancellation
  if (x <= (T)1) {
    q = R::sqrt(R::mul(R::mul((T)0.5, R::add(A, x)), R::add(R::div(yy, R::add(r, xp1)), R::add(s, one_m_x))));
  } else {
    const T apx = R::add(A, x);
    q = R::mul(y, R::sqrt(R::mul((T)0.5, R::add(R::div(apx, R::add(r, xp1)), R::div(apx, R::add(s, xm1))))));
  }
  re_asin = R::atan2(x, q);
  re_acos = R::atan2(q, x);
}

// asinh(x + iy) = (v, u) where asin(|y| + i|x|) = (u, v), signs from x and y (odd, conjugate
// symmetric).
template <class T>
XP_CM_D xp_complex<T> xp_cm_asinh(xp_complex<T> z) {
  typedef xp_real<T> R;
  const T x = z.re, y = z.im;
  if (R::isnan(x)) {
    if (y == 0) return z;
    if (R::isinf(y)) return xp_cm_make(y, x);  // (NaN, +-inf) -> (+-inf, NaN)
    return xp_cm_make(x, R::nan());
  }
  if (R::isnan(y)) return R::isinf(x) ? xp_cm_make(x, y) : xp_cm_make(R::nan(), R::nan());
  T u, unused, v;
  xp_cm_asin_core(R::fabs(y), R::fabs(x), u, unused, v);
  return xp_cm_make(R::copysign(v, x), R::copysign(u, y));
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_asin(xp_complex<T> z) {  // -i asinh(iz)
  const xp_complex<T> w = xp_cm_asinh(xp_cm_make(xp_cm_flip(z.im), z.re));
  return xp_cm_make(w.im, xp_cm_flip(w.re));
}

template <class T>
XP_CM_D xp_complex<T> xp_cm_acos(xp_complex<T> z) {
  typedef xp_real<T> R;
  const T x = z.re, y = z.im;
  if (R::isnan(x)) {
    if (R::isinf(y)) return xp_cm_make(x, -y);
    return xp_cm_make(x, R::nan());
  }
  if (R::isnan(y)) {
    if (x == 0) return xp_cm_make(xp_cm_k<T>::pi_2(), y);
    if (R::isinf(x)) return xp_cm_make(y, -R::inf());
    return xp_cm_make(R::nan(), R::nan());
  }
  T unused, re, im;
  xp_cm_asin_core(R::fabs(x), R::fabs(y), unused, re, im);
  if (R::copysign((T)1, x) < 0) re = R::sub(xp_cm_k<T>::pi(), re);
  return xp_cm_make(re, R::copysign(im, y) * (T)-1);
}
// acosh z = +-i acos z, the sign making the real part nonnegative.
template <class T>
XP_CM_D xp_complex<T> xp_cm_acosh(xp_complex<T> z) {
  typedef xp_real<T> R;
  const xp_complex<T> w = xp_cm_acos(z);
  return xp_cm_make(R::fabs(w.im), R::copysign(w.re, z.im));
}

// atanh on x, y >= 0: (log1p(4x / ((1-x)^2 + y^2)) / 4, atan2(2y, (1-x)(1+x) - y^2) / 2).
template <class T>
XP_CM_D xp_complex<T> xp_cm_atanh(xp_complex<T> z) {
  typedef xp_real<T> R;
  typedef xp_cm_lim<T> L;
  const T x0 = z.re, y0 = z.im;
  if (R::isnan(x0)) {
    if (R::isinf(y0)) return xp_cm_make(R::copysign((T)0, x0), R::copysign(xp_cm_k<T>::pi_2(), y0));
    return xp_cm_make(x0, R::nan());
  }
  if (R::isnan(y0)) {
    if (R::isinf(x0)) return xp_cm_make(R::copysign((T)0, x0), y0);
    return x0 == 0 ? z : xp_cm_make(R::nan(), R::nan());
  }
  if (R::isinf(x0) || R::isinf(y0)) return xp_cm_make(R::copysign((T)0, x0), R::copysign(xp_cm_k<T>::pi_2(), y0));
  const T x = R::fabs(x0), y = R::fabs(y0);
  T re, im;
  if (x > L::big() || y > L::big()) {  // atanh z ~ 1/z +- i pi/2
    const T h = R::hypot(x, y);
    if (xp_cm_max(x, y) > L::huge()) {  // x / |z|^2 with |z| scaled down, then the scale undone
      const T hs = R::hypot(R::mul(x, L::down()), R::mul(y, L::down()));
      re = R::mul(R::div(R::div(R::mul(x, L::down()), hs), hs), L::down());
    } else {
      re = R::div(R::div(x, h), h);
    }
    im = R::mul((T)0.5, R::atan2(R::add(R::div(y, h), R::div(y, h)), -h));
  } else if (x < L::small() && y < L::small()) {
    re = x;
    im = y;
  } else {
    const T one_m_x = R::sub((T)1, x);
    const T d = R::hypot(one_m_x, y);
    if (d < (T)0.5)
      re = R::mul((T)0.5, R::sub(R::log(R::hypot(R::add((T)1, x), y)), R::log(d)));
    else
      re = R::mul((T)0.25, R::log1p(R::div(R::mul((T)4, x), R::add(R::mul(one_m_x, one_m_x), R::mul(y, y)))));
    im = R::mul((T)0.5, R::atan2(R::add(y, y), R::sub(R::mul(one_m_x, R::add((T)1, x)), R::mul(y, y))));
  }
  return xp_cm_make(R::copysign(re, x0), R::copysign(im, y0));
}
template <class T>
XP_CM_D xp_complex<T> xp_cm_atan(xp_complex<T> z) {  // -i atanh(iz)
  const xp_complex<T> w = xp_cm_atanh(xp_cm_make(xp_cm_flip(z.im), z.re));
  return xp_cm_make(w.im, xp_cm_flip(w.re));
}

// ---- pow, as NumPy 2: 1 for a zero exponent; 0 for a zero base with an exponent of positive real
// part (NaN for other exponents); an integer exponent of magnitude below 100 by products (1, 2 and 3 written
// out, others by repeated squaring from 1 + 0i, a negative one's reciprocal), so that integer powers
// of Gaussian integers are exact; otherwise exp(b log a). ----

template <class T>
XP_CM_D xp_complex<T> xp_cm_pow(xp_complex<T> a, xp_complex<T> b) {
  typedef xp_real<T> R;
  if (b.re == 0 && b.im == 0) return xp_cm_make((T)1, (T)0);
  if (a.re == 0 && a.im == 0) {
    if (b.re > 0) return xp_cm_make((T)0, (T)0);
    return xp_cm_make(R::nan(), R::nan());
  }
  if (b.im == 0 && b.re == R::rint(b.re) && R::fabs(b.re) < (T)100) {
    int n = (int)b.re;
    if (n == 1) return a;
    if (n == 2) return xp_cm_mul(a, a);
    if (n == 3) return xp_cm_mul(a, xp_cm_mul(a, a));
    const bool negative = n < 0;
    if (negative) n = -n;
    xp_complex<T> r = xp_cm_make((T)1, (T)0), p = a;  // from 1 + 0i: the signs of zeros as NumPy's
    while (n != 0) {
      if ((n & 1) != 0) r = xp_cm_mul(r, p);
      n >>= 1;
      if (n != 0) p = xp_cm_mul(p, p);
    }
    return negative ? xp_cm_div(xp_cm_make((T)1, (T)0), r) : r;
  }
  return xp_cm_exp(xp_cm_mul(b, xp_cm_log(a)));
}
