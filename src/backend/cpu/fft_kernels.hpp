// The CPU FFT's kernels and drivers (fft.cpp), written once and compiled once per instruction set:
// fft.cpp includes this file inside a namespace of its own under `#pragma GCC target`, after the
// plans (Plan, ColPlan, RealPlan), the thread buffers and parallel_for are declared. No include
// guard and no includes: it is text for that inclusion only.

#define XP_FFT_INLINE inline __attribute__((always_inline))

template <class T>
struct Vec;
template <>
struct Vec<double> {
  typedef double type __attribute__((vector_size(64)));
  typedef double unaligned __attribute__((vector_size(64), aligned(8)));
};
template <>
struct Vec<float> {
  typedef float type __attribute__((vector_size(64)));
  typedef float unaligned __attribute__((vector_size(64), aligned(4)));
};

// Lane permutations: even and odd elements of two vectors (complex numbers split into their
// parts), their inverse (lo, hi), and the stages of an L x L transpose (t<S>: blocks of S swapped).
template <class T>
struct Shuffles;
template <>
struct Shuffles<double> {
  typedef long long M __attribute__((vector_size(64)));
  static constexpr M even = {0, 2, 4, 6, 8, 10, 12, 14};
  static constexpr M odd = {1, 3, 5, 7, 9, 11, 13, 15};
  static constexpr M lo = {0, 8, 1, 9, 2, 10, 3, 11};
  static constexpr M hi = {4, 12, 5, 13, 6, 14, 7, 15};
  static constexpr M t1_a = {0, 8, 2, 10, 4, 12, 6, 14};
  static constexpr M t1_b = {1, 9, 3, 11, 5, 13, 7, 15};
  static constexpr M t2_a = {0, 1, 8, 9, 4, 5, 12, 13};
  static constexpr M t2_b = {2, 3, 10, 11, 6, 7, 14, 15};
  static constexpr M t4_a = {0, 1, 2, 3, 8, 9, 10, 11};
  static constexpr M t4_b = {4, 5, 6, 7, 12, 13, 14, 15};
};
template <>
struct Shuffles<float> {
  typedef int M __attribute__((vector_size(64)));
  static constexpr M even = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  static constexpr M odd = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
  static constexpr M lo = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
  static constexpr M hi = {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  static constexpr M t1_a = {0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30};
  static constexpr M t1_b = {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31};
  static constexpr M t2_a = {0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29};
  static constexpr M t2_b = {2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31};
  static constexpr M t4_a = {0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27};
  static constexpr M t4_b = {4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31};
  static constexpr M t8_a = {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
  static constexpr M t8_b = {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31};
};

template <class T>
using V = typename Vec<T>::type;

// L complex numbers, interleaved, into their real and imaginary parts (exchanged when swap).
template <class T>
XP_FFT_INLINE void load_split(const T* s, bool swap, V<T>& re, V<T>& im) {
  using U = typename Vec<T>::unaligned;
  const V<T> a = *reinterpret_cast<const U*>(s), b = *reinterpret_cast<const U*>(s + kLanes<T>);
  re = __builtin_shuffle(a, b, Shuffles<T>::even);
  im = __builtin_shuffle(a, b, Shuffles<T>::odd);
  if (swap) std::swap(re, im);
}

// The inverse of load_split.
template <class T>
XP_FFT_INLINE void store_split(T* d, bool swap, const V<T>& re, const V<T>& im) {
  using U = typename Vec<T>::unaligned;
  const V<T>& r = swap ? im : re;
  const V<T>& i = swap ? re : im;
  *reinterpret_cast<U*>(d) = __builtin_shuffle(r, i, Shuffles<T>::lo);
  *reinterpret_cast<U*>(d + kLanes<T>) = __builtin_shuffle(r, i, Shuffles<T>::hi);
}

template <class T, int S>
XP_FFT_INLINE void transpose_stage(V<T>* r, const typename Shuffles<T>::M& ma, const typename Shuffles<T>::M& mb) {
  for (int i = 0; i < kLanes<T>; ++i)
    if ((i & S) == 0) {
      const V<T> a = r[i], b = r[i + S];
      r[i] = __builtin_shuffle(a, b, ma);
      r[i + S] = __builtin_shuffle(a, b, mb);
    }
}

// r[i][j] <- r[j][i] for the L x L matrix of L vectors.
template <class T>
XP_FFT_INLINE void transpose(V<T>* r) {
  transpose_stage<T, 1>(r, Shuffles<T>::t1_a, Shuffles<T>::t1_b);
  transpose_stage<T, 2>(r, Shuffles<T>::t2_a, Shuffles<T>::t2_b);
  transpose_stage<T, 4>(r, Shuffles<T>::t4_a, Shuffles<T>::t4_b);
  if constexpr (kLanes<T> == 16) transpose_stage<T, 8>(r, Shuffles<T>::t8_a, Shuffles<T>::t8_b);
}

// One row of a column block: the real parts of its L lanes, then the imaginary parts.
template <class T>
struct Cell {
  typename Vec<T>::type re, im;
};

// c *= (wr + i wi), the same twiddle in every lane.
template <class T>
XP_FFT_INLINE void twiddle(Cell<T>& c, T wr, T wi) {
  const auto r = c.re * wr - c.im * wi;
  c.im = c.re * wi + c.im * wr;
  c.re = r;
}

template <class T, bool First>
void pass2(std::int64_t m, std::int64_t ns, const T* tw, const Cell<T>* __restrict src, Cell<T>* __restrict dst) {
  const std::int64_t s = m / 2, groups = s / ns;
  for (std::int64_t j = 0; j < groups; ++j)
    for (std::int64_t k = 0; k < ns; ++k) {
      const std::int64_t i = j * ns + k;
      Cell<T> a0 = src[i], a1 = src[i + s];
      if (!First) twiddle(a1, tw[2 * k], tw[2 * k + 1]);
      Cell<T>* d = dst + j * ns * 2 + k;
      d[0] = {a0.re + a1.re, a0.im + a1.im};
      d[ns] = {a0.re - a1.re, a0.im - a1.im};
    }
}

template <class T, bool First>
void pass4(std::int64_t m, std::int64_t ns, const T* tw, const Cell<T>* __restrict src, Cell<T>* __restrict dst) {
  const std::int64_t s = m / 4, groups = s / ns;
  for (std::int64_t j = 0; j < groups; ++j)
    for (std::int64_t k = 0; k < ns; ++k) {
      const std::int64_t i = j * ns + k;
      Cell<T> a0 = src[i], a1 = src[i + s], a2 = src[i + 2 * s], a3 = src[i + 3 * s];
      if (!First) {
        const T* w = tw + 6 * k;
        twiddle(a1, w[0], w[1]);
        twiddle(a2, w[2], w[3]);
        twiddle(a3, w[4], w[5]);
      }
      const auto t0r = a0.re + a2.re, t0i = a0.im + a2.im, t1r = a0.re - a2.re, t1i = a0.im - a2.im;
      const auto t2r = a1.re + a3.re, t2i = a1.im + a3.im, t3r = a1.re - a3.re, t3i = a1.im - a3.im;
      Cell<T>* d = dst + j * ns * 4 + k;
      d[0] = {t0r + t2r, t0i + t2i};
      d[ns] = {t1r + t3i, t1i - t3r};  // t1 - i t3
      d[2 * ns] = {t0r - t2r, t0i - t2i};
      d[3 * ns] = {t1r - t3i, t1i + t3r};  // t1 + i t3
    }
}

template <class T, bool First>
void pass8(std::int64_t m, std::int64_t ns, const T* tw, const Cell<T>* __restrict src, Cell<T>* __restrict dst) {
  const std::int64_t s = m / 8, groups = s / ns;
  const T c = T(0.7071067811865475244008443621048490);  // sqrt(1/2)
  for (std::int64_t j = 0; j < groups; ++j)
    for (std::int64_t k = 0; k < ns; ++k) {
      const std::int64_t i = j * ns + k;
      Cell<T> a[8];
      for (int q = 0; q < 8; ++q) a[q] = src[i + q * s];
      if (!First) {
        const T* w = tw + 14 * k;
        for (int q = 1; q < 8; ++q) twiddle(a[q], w[2 * q - 2], w[2 * q - 1]);
      }
      // Two transforms of 4 (even and odd inputs), then y[k] = E[k] + w8^k O[k], y[k+4] = E[k] - w8^k O[k].
      const auto e0r = a[0].re + a[4].re, e0i = a[0].im + a[4].im, e1r = a[0].re - a[4].re, e1i = a[0].im - a[4].im;
      const auto e2r = a[2].re + a[6].re, e2i = a[2].im + a[6].im, e3r = a[2].re - a[6].re, e3i = a[2].im - a[6].im;
      const auto E0r = e0r + e2r, E0i = e0i + e2i, E2r = e0r - e2r, E2i = e0i - e2i;
      const auto E1r = e1r + e3i, E1i = e1i - e3r, E3r = e1r - e3i, E3i = e1i + e3r;
      const auto o0r = a[1].re + a[5].re, o0i = a[1].im + a[5].im, o1r = a[1].re - a[5].re, o1i = a[1].im - a[5].im;
      const auto o2r = a[3].re + a[7].re, o2i = a[3].im + a[7].im, o3r = a[3].re - a[7].re, o3i = a[3].im - a[7].im;
      const auto O0r = o0r + o2r, O0i = o0i + o2i, O2r = o0r - o2r, O2i = o0i - o2i;
      const auto O1r = o1r + o3i, O1i = o1i - o3r, O3r = o1r - o3i, O3i = o1i + o3r;
      const auto W1r = (O1r + O1i) * c, W1i = (O1i - O1r) * c;   // w8 O1
      const auto W2r = O2i, W2i = -O2r;                          // -i O2
      const auto W3r = (O3i - O3r) * c, W3i = -(O3r + O3i) * c;  // w8^3 O3
      Cell<T>* d = dst + j * ns * 8 + k;
      d[0] = {E0r + O0r, E0i + O0i};
      d[4 * ns] = {E0r - O0r, E0i - O0i};
      d[ns] = {E1r + W1r, E1i + W1i};
      d[5 * ns] = {E1r - W1r, E1i - W1i};
      d[2 * ns] = {E2r + W2r, E2i + W2i};
      d[6 * ns] = {E2r - W2r, E2i - W2i};
      d[3 * ns] = {E3r + W3r, E3i + W3i};
      d[7 * ns] = {E3r - W3r, E3i - W3i};
    }
}

template <class T, bool First>
void pass3(std::int64_t m, std::int64_t ns, const T* tw, const Cell<T>* __restrict src, Cell<T>* __restrict dst) {
  const std::int64_t s = m / 3, groups = s / ns;
  const T h = T(0.8660254037844386467637231707529362);  // sin(2 pi / 3)
  for (std::int64_t j = 0; j < groups; ++j)
    for (std::int64_t k = 0; k < ns; ++k) {
      const std::int64_t i = j * ns + k;
      Cell<T> a0 = src[i], a1 = src[i + s], a2 = src[i + 2 * s];
      if (!First) {
        twiddle(a1, tw[4 * k], tw[4 * k + 1]);
        twiddle(a2, tw[4 * k + 2], tw[4 * k + 3]);
      }
      const auto tr = a1.re + a2.re, ti = a1.im + a2.im;
      const auto sr = (a1.re - a2.re) * h, si = (a1.im - a2.im) * h;
      const auto mr = a0.re - tr * T(0.5), mi = a0.im - ti * T(0.5);
      Cell<T>* d = dst + j * ns * 3 + k;
      d[0] = {a0.re + tr, a0.im + ti};
      d[ns] = {mr + si, mi - sr};      // m - i s
      d[2 * ns] = {mr - si, mi + sr};  // m + i s
    }
}

template <class T, bool First>
void pass5(std::int64_t m, std::int64_t ns, const T* tw, const Cell<T>* __restrict src, Cell<T>* __restrict dst) {
  const std::int64_t s = m / 5, groups = s / ns;
  const T c1 = T(0.3090169943749474241022934171828191), c2 = T(-0.8090169943749474241022934171828191);
  const T s1 = T(0.9510565162951535721164393333793821), s2 = T(0.5877852522924731291687059546390728);
  for (std::int64_t j = 0; j < groups; ++j)
    for (std::int64_t k = 0; k < ns; ++k) {
      const std::int64_t i = j * ns + k;
      Cell<T> a0 = src[i], a1 = src[i + s], a2 = src[i + 2 * s], a3 = src[i + 3 * s], a4 = src[i + 4 * s];
      if (!First) {
        const T* w = tw + 8 * k;
        twiddle(a1, w[0], w[1]);
        twiddle(a2, w[2], w[3]);
        twiddle(a3, w[4], w[5]);
        twiddle(a4, w[6], w[7]);
      }
      const auto t1r = a1.re + a4.re, t1i = a1.im + a4.im, t2r = a2.re + a3.re, t2i = a2.im + a3.im;
      const auto t3r = a1.re - a4.re, t3i = a1.im - a4.im, t4r = a2.re - a3.re, t4i = a2.im - a3.im;
      const auto b1r = a0.re + t1r * c1 + t2r * c2, b1i = a0.im + t1i * c1 + t2i * c2;
      const auto b2r = a0.re + t1r * c2 + t2r * c1, b2i = a0.im + t1i * c2 + t2i * c1;
      const auto d1r = t3r * s1 + t4r * s2, d1i = t3i * s1 + t4i * s2;
      const auto d2r = t3r * s2 - t4r * s1, d2i = t3i * s2 - t4i * s1;
      Cell<T>* d = dst + j * ns * 5 + k;
      d[0] = {a0.re + t1r + t2r, a0.im + t1i + t2i};
      d[ns] = {b1r + d1i, b1i - d1r};  // b1 - i d1
      d[2 * ns] = {b2r + d2i, b2i - d2r};
      d[3 * ns] = {b2r - d2i, b2i + d2r};
      d[4 * ns] = {b1r - d1i, b1i + d1r};
    }
}

// Any odd prime p (up to kMaxGeneric): the symmetric O(p^2) butterfly. roots: exp(-2 pi i u / p).
template <class T>
void pass_generic(int p, std::int64_t m, std::int64_t ns, const T* tw, const T* roots, const Cell<T>* __restrict src,
                  Cell<T>* __restrict dst) {
  const std::int64_t s = m / p, groups = s / ns;
  const int h = (p - 1) / 2;
  Cell<T> a[kMaxGeneric];
  for (std::int64_t j = 0; j < groups; ++j)
    for (std::int64_t k = 0; k < ns; ++k) {
      const std::int64_t i = j * ns + k;
      for (int u = 0; u < p; ++u) a[u] = src[i + u * s];
      if (ns > 1)
        for (int u = 1; u < p; ++u) twiddle(a[u], tw[2 * (k * (p - 1) + u - 1)], tw[2 * (k * (p - 1) + u - 1) + 1]);
      Cell<T> y0 = a[0];
      for (int u = 1; u <= h; ++u) {
        const Cell<T> t = {a[u].re + a[p - u].re, a[u].im + a[p - u].im};
        const Cell<T> d = {a[u].re - a[p - u].re, a[u].im - a[p - u].im};
        a[u] = t;
        a[p - u] = d;
        y0.re += t.re;
        y0.im += t.im;
      }
      Cell<T>* out = dst + j * ns * p + k;
      out[0] = y0;
      for (int q = 1; q <= h; ++q) {
        Cell<T> r = a[0], x = {};
        int e = 0;
        for (int u = 1; u <= h; ++u) {
          e += q;
          if (e >= p) e -= p;
          const T c = roots[2 * e], sn = roots[2 * e + 1];
          r.re += a[u].re * c;
          r.im += a[u].im * c;
          x.re += a[p - u].re * sn;
          x.im += a[p - u].im * sn;
        }
        out[q * ns] = {r.re - x.im, r.im + x.re};        // r + i x
        out[(p - q) * ns] = {r.re + x.im, r.im - x.re};  // r - i x
      }
    }
}

// The column transform of plan.m rows: a holds the input; returns a or b, whichever holds the result.
template <class T>
Cell<T>* run_columns(const ColPlan<T>& plan, Cell<T>* a, Cell<T>* b) {
  for (const Pass& ps : plan.passes) {
    const T* tw = plan.tw.data() + ps.tw;
    const bool first = ps.ns == 1;
    switch (ps.p) {
      case 8:
        first ? pass8<T, true>(plan.m, 1, tw, a, b) : pass8<T, false>(plan.m, ps.ns, tw, a, b);
        break;
      case 4:
        first ? pass4<T, true>(plan.m, 1, tw, a, b) : pass4<T, false>(plan.m, ps.ns, tw, a, b);
        break;
      case 2:
        first ? pass2<T, true>(plan.m, 1, tw, a, b) : pass2<T, false>(plan.m, ps.ns, tw, a, b);
        break;
      case 3:
        first ? pass3<T, true>(plan.m, 1, tw, a, b) : pass3<T, false>(plan.m, ps.ns, tw, a, b);
        break;
      case 5:
        first ? pass5<T, true>(plan.m, 1, tw, a, b) : pass5<T, false>(plan.m, ps.ns, tw, a, b);
        break;
      default:
        pass_generic<T>(ps.p, plan.m, ps.ns, tw, plan.tw.data() + ps.roots, a, b);
    }
    std::swap(a, b);
  }
  return a;
}

// Loads m rows of nl lanes (element (t, l) of the interleaved complex array at src + 2 (t ts + l ls))
// into cells; lanes nl .. L-1 are zero. swap exchanges the real and imaginary parts.
template <class T>
void gather(const T* src, std::int64_t m, std::int64_t ts, int nl, std::int64_t ls, bool swap, Cell<T>* cells) {
  constexpr int L = kLanes<T>;
  T* c = reinterpret_cast<T*>(cells);
  if (nl < L) std::memset(static_cast<void*>(cells), 0, sizeof(Cell<T>) * static_cast<std::size_t>(m));
  const int ro = swap ? L : 0, io = swap ? 0 : L;
  if (ls == 1) {
    for (std::int64_t t = 0; t < m; ++t) {
      const T* s = src + 2 * t * ts;
      T* d = c + 2 * L * t;
      if (nl == L) {
        load_split(s, swap, cells[t].re, cells[t].im);
      } else {
        for (int l = 0; l < nl; ++l) {
          d[ro + l] = s[2 * l];
          d[io + l] = s[2 * l + 1];
        }
      }
    }
  } else {
    std::int64_t t0 = 0;
    if (nl == L && ts == 1) {  // L x L tiles: L numbers of each row, transposed in registers
      for (; t0 + L <= m; t0 += L) {
        V<T> re[L], im[L];
        for (int l = 0; l < L; ++l) load_split(src + 2 * (l * ls + t0), swap, re[l], im[l]);
        transpose<T>(re);
        transpose<T>(im);
        for (int k = 0; k < L; ++k) cells[t0 + k] = {re[k], im[k]};
      }
    }
    for (int l = 0; l < nl; ++l) {
      const T* s = src + 2 * l * ls;
      for (std::int64_t t = t0; t < m; ++t) {
        c[2 * L * t + ro + l] = s[2 * t * ts];
        c[2 * L * t + io + l] = s[2 * t * ts + 1];
      }
    }
  }
}

// The mirror of gather, times scale.
template <class T>
void scatter(const Cell<T>* cells, T* dst, std::int64_t m, std::int64_t ts, int nl, std::int64_t ls, bool swap,
             T scale) {
  constexpr int L = kLanes<T>;
  const T* c = reinterpret_cast<const T*>(cells);
  const int ro = swap ? L : 0, io = swap ? 0 : L;
  if (ls == 1) {
    for (std::int64_t t = 0; t < m; ++t) {
      const T* s = c + 2 * L * t;
      T* d = dst + 2 * t * ts;
      if (nl == L) {
        store_split(d, swap, cells[t].re * scale, cells[t].im * scale);
      } else {
        for (int l = 0; l < nl; ++l) {
          d[2 * l] = s[ro + l] * scale;
          d[2 * l + 1] = s[io + l] * scale;
        }
      }
    }
  } else {
    std::int64_t t0 = 0;
    if (nl == L && ts == 1) {
      for (; t0 + L <= m; t0 += L) {
        V<T> re[L], im[L];
        for (int k = 0; k < L; ++k) re[k] = cells[t0 + k].re * scale, im[k] = cells[t0 + k].im * scale;
        transpose<T>(re);
        transpose<T>(im);
        for (int l = 0; l < L; ++l) store_split(dst + 2 * (l * ls + t0), swap, re[l], im[l]);
      }
    }
    for (int l = 0; l < nl; ++l) {
      T* d = dst + 2 * l * ls;
      for (std::int64_t t = t0; t < m; ++t) {
        d[2 * t * ts] = c[2 * L * t + ro + l] * scale;
        d[2 * t * ts + 1] = c[2 * L * t + io + l] * scale;
      }
    }
  }
}

template <class T>
void execute(const Plan<T>& plan, std::int64_t batch, const T* in, std::int64_t is, T* out, std::int64_t os,
             bool inverse, T scale);

// Rows in the lanes, L at a time.
template <class T>
void run_lanes(const Plan<T>& plan, std::int64_t batch, const T* in, std::int64_t is, T* out, std::int64_t os,
               bool inverse, T scale) {
  constexpr int L = kLanes<T>;
  const std::int64_t n = plan.n, groups = (batch + L - 1) / L;
  const std::int64_t grain = std::max<std::int64_t>(1, kParallelMin / (n * L));
  parallel_for(groups, grain, [&](std::int64_t g0, std::int64_t g1) {
    auto* a = thread_buffer<Cell<T>>(0, static_cast<std::size_t>(n));
    auto* b = thread_buffer<Cell<T>>(4, static_cast<std::size_t>(n));
    for (std::int64_t g = g0; g < g1; ++g) {
      const std::int64_t r0 = g * L;
      const int nl = static_cast<int>(std::min<std::int64_t>(L, batch - r0));
      gather(in + 2 * r0 * is, n, 1, nl, is, inverse, a);
      const Cell<T>* r = run_columns(plan.col, a, b);
      scatter(r, out + 2 * r0 * os, n, 1, nl, os, inverse, scale);
    }
  });
}

// How many column blocks the four-step moves together: W * L complex numbers (512 bytes) of each row
// read or written at once, not L (128 bytes) pages apart.
constexpr int kWide = 4;

// One row by the four-step algorithm: x as n1 rows of n2; the columns transformed (length n1), the
// twiddle w^(k1 j2), the rows transformed (length n2) and written transposed. Between the two
// steps the row blocks are kept as cells (L rows of k1 in the lanes, one cell per j2), so that the
// second step reads them in place.
template <class T>
void run_four_step(const Plan<T>& plan, const T* in, T* out, bool inverse, T scale) {
  constexpr int L = kLanes<T>;
  using U = typename Vec<T>::unaligned;
  const std::int64_t n1 = plan.n1, n2 = plan.n2;
  const std::int64_t blocks_a = (n2 + L - 1) / L, blocks_b = (n1 + L - 1) / L;
  Cell<T>* scratch = thread_buffer<Cell<T>>(5, static_cast<std::size_t>(blocks_b * n2));
  if (n1 % L != 0)  // the lanes past n1 of the last row block: zeros, never garbage
    std::memset(static_cast<void*>(scratch + (blocks_b - 1) * n2), 0, sizeof(Cell<T>) * static_cast<std::size_t>(n2));
  const std::int64_t groups_a = (blocks_a + kWide - 1) / kWide, groups_b = (blocks_b + kWide - 1) / kWide;
  // Below kParallelMin numbers a row is done on the calling thread: waking other threads costs more.
  const std::int64_t grain_a = plan.n < kParallelMin ? groups_a : 1, grain_b = plan.n < kParallelMin ? groups_b : 1;
  parallel_for(groups_a, grain_a, [&](std::int64_t g0, std::int64_t g1) {
    Cell<T>* a[kWide];
    for (int w = 0; w < kWide; ++w) a[w] = thread_buffer<Cell<T>>(w, static_cast<std::size_t>(n1));
    auto* b = thread_buffer<Cell<T>>(4, static_cast<std::size_t>(n1));
    for (std::int64_t g = g0; g < g1; ++g) {
      const std::int64_t cb0 = g * kWide;
      const int wide = static_cast<int>(std::min<std::int64_t>(kWide, blocks_a - cb0));
      int nl[kWide];
      for (int w = 0; w < wide; ++w) nl[w] = static_cast<int>(std::min<std::int64_t>(L, n2 - (cb0 + w) * L));
      // Gather: each row's wide * L numbers in one sweep.
      const int ro = inverse ? L : 0, io = inverse ? 0 : L;
      for (int w = 0; w < wide; ++w)
        if (nl[w] < L) std::memset(static_cast<void*>(a[w]), 0, sizeof(Cell<T>) * static_cast<std::size_t>(n1));
      const std::int64_t line_bytes = static_cast<std::int64_t>(2 * sizeof(T)) * wide * L;
      for (std::int64_t j1 = 0; j1 < n1; ++j1) {
        const T* src = in + 2 * (j1 * n2 + cb0 * L);
        if (j1 + 8 < n1)  // rows are pages apart: the hardware does not see this stream coming
          for (std::int64_t b0 = 0; b0 < line_bytes; b0 += 64)
            __builtin_prefetch(reinterpret_cast<const char*>(src + 2 * 8 * n2) + b0);
        for (int w = 0; w < wide; ++w) {
          T* d = reinterpret_cast<T*>(a[w] + j1);
          const T* sw = src + 2 * w * L;
          if (nl[w] == L) {
            load_split(sw, inverse, a[w][j1].re, a[w][j1].im);
          } else {
            for (int l = 0; l < nl[w]; ++l) {
              d[ro + l] = sw[2 * l];
              d[io + l] = sw[2 * l + 1];
            }
          }
        }
      }
      for (int w = 0; w < wide; ++w) {
        const std::int64_t cb = cb0 + w;
        Cell<T>* r = run_columns(plan.c1, a[w], b);
        const T* lane = plan.tw_lane.data();
        const T* block = plan.tw_block.data() + 2 * cb * n1;
        for (std::int64_t k1 = 0; k1 < n1; ++k1) {
          Cell<T> t = {*reinterpret_cast<const U*>(lane + 2 * L * k1),
                       *reinterpret_cast<const U*>(lane + 2 * L * k1 + L)};
          twiddle(t, block[2 * k1], block[2 * k1 + 1]);
          const auto re = r[k1].re * t.re - r[k1].im * t.im;
          r[k1].im = r[k1].re * t.im + r[k1].im * t.re;
          r[k1].re = re;
        }
        // Transposed into the row blocks: cell (rb, j2) holds k1 = rb L + lane.
        const T* rs = reinterpret_cast<const T*>(r);
        for (std::int64_t rb = 0; rb < blocks_b; ++rb) {
          const int kn = static_cast<int>(std::min<std::int64_t>(L, n1 - rb * L));
          if (kn == L && nl[w] == L) {
            V<T> re[L], im[L];
            for (int k = 0; k < L; ++k) re[k] = r[rb * L + k].re, im[k] = r[rb * L + k].im;
            transpose<T>(re);
            transpose<T>(im);
            for (int l = 0; l < L; ++l) scratch[rb * n2 + cb * L + l] = {re[l], im[l]};
            continue;
          }
          T* dst = reinterpret_cast<T*>(scratch + rb * n2 + cb * L);
          for (int l = 0; l < nl[w]; ++l) {
            T* d = dst + 2 * L * l;
            for (int k = 0; k < kn; ++k) {
              d[k] = rs[2 * L * (rb * L + k) + l];
              d[L + k] = rs[2 * L * (rb * L + k) + L + l];
            }
          }
        }
      }
    }
  });
  parallel_for(groups_b, grain_b, [&](std::int64_t g0, std::int64_t g1) {
    Cell<T>* partner[kWide];
    for (int w = 0; w < kWide; ++w) partner[w] = thread_buffer<Cell<T>>(w, static_cast<std::size_t>(n2));
    for (std::int64_t g = g0; g < g1; ++g) {
      const std::int64_t rb0 = g * kWide;
      const int wide = static_cast<int>(std::min<std::int64_t>(kWide, blocks_b - rb0));
      const Cell<T>* r[kWide];
      int nl[kWide];
      for (int w = 0; w < wide; ++w) {
        nl[w] = static_cast<int>(std::min<std::int64_t>(L, n1 - (rb0 + w) * L));
        r[w] = run_columns(plan.c2, scratch + (rb0 + w) * n2, partner[w]);
      }
      // Scatter: X[k1 + n1 k2], each k2's wide * L numbers in one sweep.
      const int ro = inverse ? L : 0, io = inverse ? 0 : L;
      for (std::int64_t k2 = 0; k2 < n2; ++k2) {
        T* dst = out + 2 * (k2 * n1 + rb0 * L);
        for (int w = 0; w < wide; ++w) {
          const T* sc = reinterpret_cast<const T*>(r[w] + k2);
          T* d = dst + 2 * w * L;
          if (nl[w] == L) {
            store_split(d, inverse, r[w][k2].re * scale, r[w][k2].im * scale);
          } else {
            for (int l = 0; l < nl[w]; ++l) {
              d[2 * l] = sc[ro + l] * scale;
              d[2 * l + 1] = sc[io + l] * scale;
            }
          }
        }
      }
    }
  });
}

// Bluestein: X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]), c[j] = exp(-pi i j^2 / n), the
// convolution by transforms of length M >= 2n - 1 (bhat: the transform of conj(c) / M).
template <class T>
void run_bluestein(const Plan<T>& plan, std::int64_t batch, const T* in, std::int64_t is, T* out, std::int64_t os,
                   bool inverse, T scale) {
  const std::int64_t n = plan.n, M = plan.M;
  const std::int64_t chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(batch, (std::int64_t{1} << 20) / M));
  T* w = thread_buffer<T>(6, static_cast<std::size_t>(2 * chunk * M));
  const T* c = plan.chirp.data();
  const T* bh = plan.bhat.data();
  for (std::int64_t r0 = 0; r0 < batch; r0 += chunk) {
    const std::int64_t rows = std::min(chunk, batch - r0);
    parallel_for(rows * M, kParallelMin, [&](std::int64_t e0, std::int64_t e1) {
      for (std::int64_t e = e0; e < e1; ++e) {
        const std::int64_t r = e / M, j = e % M;
        T* d = w + 2 * e;
        if (j >= n) {
          d[0] = d[1] = T(0);
          continue;
        }
        const T* s = in + 2 * ((r0 + r) * is + j);
        const T xr = inverse ? s[1] : s[0], xi = inverse ? s[0] : s[1];
        d[0] = xr * c[2 * j] - xi * c[2 * j + 1];
        d[1] = xr * c[2 * j + 1] + xi * c[2 * j];
      }
    });
    execute(*plan.inner, rows, w, M, w, M, false, T(1));
    parallel_for(rows * M, kParallelMin, [&](std::int64_t e0, std::int64_t e1) {
      for (std::int64_t e = e0; e < e1; ++e) {
        const std::int64_t j = e % M;
        T* d = w + 2 * e;
        const T pr = d[0] * bh[2 * j] - d[1] * bh[2 * j + 1];
        const T pi = d[0] * bh[2 * j + 1] + d[1] * bh[2 * j];
        d[0] = pi;  // swapped: the inverse as a forward transform
        d[1] = pr;
      }
    });
    execute(*plan.inner, rows, w, M, w, M, false, T(1));
    parallel_for(rows * n, kParallelMin, [&](std::int64_t e0, std::int64_t e1) {
      for (std::int64_t e = e0; e < e1; ++e) {
        const std::int64_t r = e / n, k = e % n;
        const T* s = w + 2 * (r * M + k);
        const T vr = s[1], vi = s[0];  // swapped back
        const T xr = (vr * c[2 * k] - vi * c[2 * k + 1]) * scale;
        const T xi = (vr * c[2 * k + 1] + vi * c[2 * k]) * scale;
        T* d = out + 2 * ((r0 + r) * os + k);
        d[0] = inverse ? xi : xr;
        d[1] = inverse ? xr : xi;
      }
    });
  }
}

// batch rows of plan.n complex numbers (row r at in + 2 r is, out + 2 r os; out may be in).
template <class T>
void execute(const Plan<T>& plan, std::int64_t batch, const T* in, std::int64_t is, T* out, std::int64_t os,
             bool inverse, T scale) {
  switch (choose_method(plan, batch)) {
    case Method::bluestein:
      run_bluestein(plan, batch, in, is, out, os, inverse, scale);
      break;
    case Method::four_step:
      for (std::int64_t r = 0; r < batch; ++r) run_four_step(plan, in + 2 * r * is, out + 2 * r * os, inverse, scale);
      break;
    case Method::lanes:
      run_lanes(plan, batch, in, is, out, os, inverse, scale);
      break;
  }
}

// Real to complex: in rows of n reals (stride n), out rows of n/2 + 1 complex numbers.
template <class T>
void real_forward(const RealPlan<T>& rp, std::int64_t batch, const T* in, T* out, T scale) {
  const std::int64_t n = rp.n, h = n / 2;
  if (n % 2 == 1) {
    const std::int64_t chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(batch, (std::int64_t{1} << 20) / n));
    T* w = thread_buffer<T>(7, static_cast<std::size_t>(2 * chunk * n));
    for (std::int64_t r0 = 0; r0 < batch; r0 += chunk) {
      const std::int64_t rows = std::min(chunk, batch - r0);
      for (std::int64_t e = 0; e < rows * n; ++e) {
        w[2 * e] = in[r0 * n + e];
        w[2 * e + 1] = T(0);
      }
      execute(*rp.c, rows, w, n, w, n, false, scale);
      for (std::int64_t r = 0; r < rows; ++r)
        std::memcpy(out + 2 * (r0 + r) * (h + 1), w + 2 * r * n, sizeof(T) * 2 * static_cast<std::size_t>(h + 1));
    }
    return;
  }
  // The row read as h complex numbers z[j] = x[2j] + i x[2j+1]; Z = fft(z) into out, then
  // X[k] = (Z[k] + conj Z[h-k]) / 2 - i w^k (Z[k] - conj Z[h-k]) / 2, w = exp(-2 pi i / n).
  execute(*rp.c, batch, in, h, out, h + 1, false, T(1));
  const T* tw = rp.w.data();
  const T half = T(0.5) * scale;
  for (std::int64_t r = 0; r < batch; ++r) {
    T* x = out + 2 * r * (h + 1);
    const T z0r = x[0], z0i = x[1];
    x[0] = (z0r + z0i) * scale;
    x[1] = T(0);
    x[2 * h] = (z0r - z0i) * scale;
    x[2 * h + 1] = T(0);
    parallel_for(h / 2, kParallelMin / 2, [&](std::int64_t k0, std::int64_t k1) {
      for (std::int64_t k = k0 + 1; k <= k1; ++k) {
        const T ar = x[2 * k], ai = x[2 * k + 1], br = x[2 * (h - k)], bi = x[2 * (h - k) + 1];
        const T wr = tw[2 * k], wi = tw[2 * k + 1];
        // k: s = A + conj B, d = A - conj B; X = (s - i w d) / 2
        {
          const T sr = ar + br, si = ai - bi, dr = ar - br, di = ai + bi;
          const T pr = wr * dr - wi * di, pi = wr * di + wi * dr;  // w d
          x[2 * k] = (sr + pi) * half;
          x[2 * k + 1] = (si - pr) * half;
        }
        if (k != h - k) {  // h - k: the roles of A and B exchanged, w^(h-k) = -conj(w^k)
          const T sr = br + ar, si = bi - ai, dr = br - ar, di = bi + ai;
          const T pr = -wr * dr - wi * di, pi = -wr * di + wi * dr;
          x[2 * (h - k)] = (sr + pi) * half;
          x[2 * (h - k) + 1] = (si - pr) * half;
        }
      }
    });
  }
}

// Complex to real: in rows of n/2 + 1 complex numbers (Hermitian; the imaginary parts of the first
// and, n even, the last ignored), out rows of n reals.
template <class T>
void real_inverse(const RealPlan<T>& rp, std::int64_t batch, const T* in, T* out, T scale) {
  const std::int64_t n = rp.n, h = n / 2;
  if (n % 2 == 1) {
    const std::int64_t chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(batch, (std::int64_t{1} << 20) / n));
    T* w = thread_buffer<T>(7, static_cast<std::size_t>(2 * chunk * n));
    for (std::int64_t r0 = 0; r0 < batch; r0 += chunk) {
      const std::int64_t rows = std::min(chunk, batch - r0);
      for (std::int64_t r = 0; r < rows; ++r) {
        const T* s = in + 2 * (r0 + r) * (h + 1);
        T* d = w + 2 * r * n;
        d[0] = s[0];
        d[1] = T(0);
        for (std::int64_t k = 1; k <= h; ++k) {
          d[2 * k] = s[2 * k];
          d[2 * k + 1] = s[2 * k + 1];
          d[2 * (n - k)] = s[2 * k];
          d[2 * (n - k) + 1] = -s[2 * k + 1];
        }
      }
      execute(*rp.c, rows, w, n, w, n, true, scale);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < n; ++j) out[(r0 + r) * n + j] = w[2 * (r * n + j)];
    }
    return;
  }
  // Z[k] = (X[k] + conj X[h-k]) + i conj(w^k) (X[k] - conj X[h-k]) into out as h complex numbers;
  // its unnormalized inverse of length h is n x read as complex pairs.
  const T* tw = rp.w.data();
  for (std::int64_t r = 0; r < batch; ++r) {
    const T* x = in + 2 * r * (h + 1);
    T* z = out + r * n;
    const T x0 = x[0], xh = x[2 * h];
    z[0] = x0 + xh;
    z[1] = x0 - xh;
    parallel_for(h / 2, kParallelMin / 2, [&](std::int64_t k0, std::int64_t k1) {
      for (std::int64_t k = k0 + 1; k <= k1; ++k) {
        const T ar = x[2 * k], ai = x[2 * k + 1], br = x[2 * (h - k)], bi = x[2 * (h - k) + 1];
        const T wr = tw[2 * k], wi = -tw[2 * k + 1];  // conj(w^k)
        {
          const T sr = ar + br, si = ai - bi, dr = ar - br, di = ai + bi;
          const T pr = wr * dr - wi * di, pi = wr * di + wi * dr;  // conj(w^k) d
          z[2 * k] = sr - pi;
          z[2 * k + 1] = si + pr;
        }
        if (k != h - k) {  // conj(w^(h-k)) = -w^k
          const T sr = br + ar, si = bi - ai, dr = br - ar, di = bi + ai;
          const T vr = -tw[2 * k], vi = -tw[2 * k + 1];
          const T pr = vr * dr - vi * di, pi = vr * di + vi * dr;
          z[2 * (h - k)] = sr - pi;
          z[2 * (h - k) + 1] = si + pr;
        }
      }
    });
  }
  execute(*rp.c, batch, out, h, out, h, true, scale);
}

#undef XP_FFT_INLINE
