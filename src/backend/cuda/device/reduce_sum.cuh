// The ops of float sums and means (reduce_source.cpp names one as R0): a state, its identity, how
// an element is added and two states merged, the warp shuffle and the finish. Before it:
// reduce_geometry.cuh, the element definitions (S, xp_val) and xp_store(at, value), which stores a
// result as the output's dtype.

// Sums and means of float32 and float64, and means of 32- and 64-bit integers, in A
// (float or double): each addition's rounding error is carried (TwoSum), and two states merge as
// the CPU merges two compensated sums (backend/cpu/reduce.cpp). Only additions and subtractions
// touch the state: with --fmad=false nothing is contracted into an FMA.
template <class A_, bool Mean> struct xp_sum_comp {
  typedef A_ A;
  struct St {
    A s, c;
  };
  static constexpr int kPack = 0;
  static constexpr bool kIntMoments = false;
  static constexpr bool kArgRun = false;
  XP_D xp_sum_comp() {}
  XP_D xp_sum_comp(const Args& a, i64 m) { (void)a; (void)m; }
  XP_D St id() const {
    St r;
    r.s = -(A)0;
    r.c = (A)0;
    return r;
  }
  XP_D void add(St& st, S v, i64) const {
    const A x = (A)xp_val(v);
    const A t = st.s + x, z = t - st.s;
    st.c += (st.s - (t - z)) + (x - z);
    st.s = t;
  }
  XP_D St merge(St a, St b) const {
    St r;
    r.s = a.s + b.s;
    const A z = r.s - a.s;
    r.c = (a.c + b.c) + ((a.s - (r.s - z)) + (b.s - z));
    return r;
  }
  static XP_D St shfl(St a, int d) {
    a.s = __shfl_down_sync(XP_FULL, a.s, d);
    a.c = __shfl_down_sync(XP_FULL, a.c, d);
    return a;
  }
  static XP_D A result(St st) { return xp_finite(st.s) ? st.s + st.c : st.s; }
  XP_D void finish(const Args& a, i64 m, St st, i64 oo) const {
    (void)m;
    if constexpr (Mean) {
      xp_store(a.out + oo, xp_div(result(st), (A)a.N));
    } else {
      xp_store(a.out + oo, result(st));
    }
  }
};

// Sums and means of float16 and bfloat16, in double: one addition per element instead of TwoSum's
// six, and faster (docs/performance.md, "float16 and bfloat16 sums in float64"). Every value
// converts exactly; a float16 value is a multiple of 2^-24 below 2^16, so every partial sum below
// 2^29 in magnitude is exact (53 bits), and the result is the exact sum rounded once to float32
// (then to float16) whenever sum|x| < 2^29. Either dtype's result is within n 2^-53 sum|x| of the
// exact sum before that rounding, inside the bound of the compensated float32 sum.
template <bool Mean> struct xp_sum_wide {
  typedef double A;
  struct St {
    A s;
  };
  static constexpr int kPack = 0;
  static constexpr bool kIntMoments = false;
  static constexpr bool kArgRun = false;
  XP_D xp_sum_wide() {}
  XP_D xp_sum_wide(const Args& a, i64 m) { (void)a; (void)m; }
  XP_D St id() const {
    St r;
    r.s = -(A)0;
    return r;
  }
  XP_D void add(St& st, S v, i64) const { st.s += (A)xp_val(v); }
  XP_D St merge(St a, St b) const {
    St r;
    r.s = a.s + b.s;
    return r;
  }
  static XP_D St shfl(St a, int d) {
    a.s = __shfl_down_sync(XP_FULL, a.s, d);
    return a;
  }
  XP_D void finish(const Args& a, i64 m, St st, i64 oo) const {
    (void)m;
    if constexpr (Mean) {
      xp_store(a.out + oo, (float)xp_div(st.s, (A)a.N));
    } else {
      xp_store(a.out + oo, (float)st.s);
    }
  }
};
