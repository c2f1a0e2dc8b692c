// Over 800 lines on purpose: the reductions' element types, fold kernels and vector leaves, the
// min/max/arg kernels, the geometry and the scans share file-local templates that are instantiated
// together; a header for them would make them part of the backend's surface.
//
// Reductions and scans on the CPU.
//
// A reduction sees its input as M outputs times N reduced elements: the kept axes and the reduced
// axes, each list stripped of size-1 axes and merged where the strides allow (C order is kept, so
// argmin's flat index and the order of a sum are those of the logical elements). The N elements
// of one output are cut into fixed blocks of kBlock; blocks are reduced independently (in
// parallel, over outputs and blocks) and their results combined pairwise in index order. Nothing
// depends on the thread count, so neither do the bits.
//
// Sums and products fold a block as NumPy's pairwise summation does: halves down to leaves of at
// most kLeaf elements, each leaf folded into kLanes accumulators (32 bytes) that are then combined
// as a tree. Float sums (sum, mean, var, std) also carry each addition's rounding
// error along (TwoSum, in the accumulation type itself): the result is all but correctly rounded,
// where a plain tree (NumPy's) is within O(log n) roundings of it. That costs 7 vector operations
// per vector of input, so their leaves use the widest vectors the CPU has (SSE2, AVX2 or AVX-512F,
// chosen at run time, the same arithmetic on each: see "wide leaves"); with compensation, long
// leaves lose nothing and save tree overhead.
//
// A block is read one of three ways, all computing the same tree, so the bits depend on the
// logical values only, never on the layout:
//   direct    the reduced elements are one contiguous run: read in place;
//   gathered  any other strides (or misaligned data): copied into a buffer first;
//   columns   the innermost kept axis is contiguous (reducing leading or middle axes): the trees of
//             kCols neighbouring outputs are computed together, row by row, vectorized across them.
#include "backend/cpu/reduce.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/parallel.hpp"
#include "xp/error.hpp"

namespace xp::detail::cpu {
namespace {

using i64 = std::int64_t;
using u64 = std::uint64_t;

constexpr i64 kLeaf = 512;            // the largest leaf of the pairwise tree
constexpr i64 kBlock = 4096;          // the fixed unit of work
constexpr i64 kCols = 512;            // outputs computed together by the column kernels
constexpr i64 kGrain = i64{1} << 15;  // elements a parallel chunk gets at least

// ---- element types: the storage S and the value V it stands for ----

template <class T>
struct Num {
  using S = T;
  using V = T;
  static V value(S s) noexcept { return s; }
  static bool truth(S s) noexcept { return s != 0; }  // NaN is true
};
struct Bool {
  using S = std::uint8_t;
  using V = std::uint8_t;
  static V value(S s) noexcept { return s != 0; }
  static bool truth(S s) noexcept { return s != 0; }
};
struct Half {
  using S = std::uint16_t;
  using V = float;
  static V value(S h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t em = h & 0x7FFFu;
    if (em > 0x7C00u) return std::bit_cast<float>(sign | 0x7FC00000u | ((em & 0x3FFu) << 13));  // NaN, quieted
    if (em == 0x7C00u) return std::bit_cast<float>(sign | 0x7F800000u);
    if (em >= 0x0400u) return std::bit_cast<float>(sign | ((em << 13) + 0x38000000u));  // rebias 15 -> 127
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(static_cast<float>(em) * 0x1p-24f));
  }
  static bool truth(S s) noexcept { return (s & 0x7FFFu) != 0; }
  static S from_float(float f) noexcept { return float_to_half_bits(f); }
};
struct BHalf {
  using S = std::uint16_t;
  using V = float;
  static V value(S h) noexcept {  // a signalling NaN is quieted, as xp's conversion does
    const std::uint32_t quiet = (h & 0x7FFFu) > 0x7F80u ? 0x00400000u : 0u;
    return std::bit_cast<float>((static_cast<std::uint32_t>(h) << 16) | quiet);
  }
  static bool truth(S s) noexcept { return (s & 0x7FFFu) != 0; }
  static S from_float(float f) noexcept { return float_to_bfloat16_bits(f); }
};

template <class E>
constexpr bool kIsInt = !std::is_floating_point_v<typename E::V>;  // bool and the integers
template <class E>
constexpr bool kIsHalf = std::is_same_v<E, Half> || std::is_same_v<E, BHalf>;
// sum, prod: integers wrap in 64 bits; 16-bit floats and float32 in float32, float64 in float64.
template <class E>
using SumAcc =
    std::conditional_t<kIsInt<E>, u64, std::conditional_t<std::is_same_v<typename E::V, double>, double, float>>;
// mean, var, std: integers in float64.
template <class E>
using MeanAcc = std::conditional_t<kIsInt<E>, double, SumAcc<E>>;

template <class T>
void put(std::byte* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);
}
// Stores a result of E's arithmetic in the output dtype reduce.hpp gives: 16-bit floats rounded from
// float32, everything else as computed (a u64 sum is the bits of the int64 or uint64 result).
template <class E, class A>
void store(std::byte* p, A v) noexcept {
  if constexpr (kIsHalf<E> && std::is_floating_point_v<A>) {
    put(p, E::from_float(static_cast<float>(v)));
  } else {
    put(p, v);
  }
}

// ---- fold kernels: sum, prod, squared deviations ----

// A running result: s, plus c for compensated sums.
template <class A>
struct Pair {
  A s{}, c{};
};

// Sums of floats carry their rounding errors along (TwoSum: t + e == s + x exactly), so s + c holds
// about twice A's precision: the result is all but correctly rounded even for ill-conditioned input.
// Infinities and NaN (and overflow) pass through s alone: c is then ignored.
template <class A>
struct Compensated {
  template <class T>  // A, or a vector of A
  static void add(T& s, T& c, T x) noexcept {
    const T t = s + x, z = t - s;
    c += (s - (t - z)) + (x - z);
    s = t;
  }
  template <class T>
  static void merge(T& s, T& c, T s2, T c2) noexcept {
    const T t = s + s2, z = t - s;
    c = (c + c2) + ((s - (t - z)) + (s2 - z));
    s = t;
  }
  static A result(Pair<A> p) noexcept { return std::isfinite(p.s) ? p.s + p.c : p.s; }
};
// Integer sums (exact modulo 2^64) and products: one operation, no compensation.
template <class Bin, class A>
struct Plain {
  template <class T>
  static void add(T& s, T&, T x) noexcept {
    s = Bin{}(s, x);
  }
  template <class T>
  static void merge(T& s, T&, T s2, T) noexcept {
    s = Bin{}(s, s2);
  }
  static A result(Pair<A> p) noexcept { return p.s; }
};

struct Add {
  template <class T>
  T operator()(T a, T b) const noexcept {
    return a + b;
  }
};
struct Mul {
  template <class T>
  T operator()(T a, T b) const noexcept {
    return a * b;
  }
};

// What is added: each element converted to A, then transformed (as is, or its squared deviation
// from its output's mean). Transforms take A or a vector of A.
template <class E, class A>
A convert(typename E::S s) noexcept {
  return static_cast<A>(E::value(s));
}
struct AsIs {
  template <class T>
  T operator()(T x, i64) const noexcept {
    return x;
  }
};
template <class A>
struct SquaredDeviation {
  const A* mean;  // one per output
  template <class T>
  T operator()(T x, i64 m) const noexcept {
    const T d = x - mean[m];
    return d * d;
  }
};

// 16-byte vectors of T (SSE2, the x86-64 baseline), through GCC's vector extension (also Clang's).
template <class T>
struct Vec {
  typedef T V __attribute__((vector_size(16)));
  static constexpr int kPer = 16 / sizeof(T);
};

// A leaf's accumulators are the lanes of kVecs vectors: lane l (lane l % kPer of vector l / kPer)
// adds the elements l, l + kLanes, l + 2 kLanes... Two vectors hide the latency of a compensated
// step; more would only grow the column kernels' state (kLanes pairs per output).
constexpr int kVecs = 2;
template <class A>
constexpr int kLanes = Vec<A>::kPer* kVecs;

template <class P, class E, class A, class Tf>
Pair<A> fold_leaf(const typename E::S* p, i64 n, const Tf& tf, i64 m) noexcept {
  using S = typename E::S;
  using V = typename Vec<A>::V;
  constexpr int kPer = Vec<A>::kPer, kL = kLanes<A>;
  if (n < kL) {
    A s = tf(convert<E, A>(p[0]), m), c{};
    for (i64 i = 1; i < n; ++i) P::add(s, c, tf(convert<E, A>(p[i]), m));
    return {s, c};
  }
  // kPer elements from p + at: a plain load when the storage is A's bits already.
  const auto get = [p, &tf, m](i64 at) noexcept {
    V v{};
    if constexpr (std::is_same_v<S, A> || (sizeof(S) == sizeof(A) && std::is_integral_v<S> && std::is_integral_v<A>)) {
      std::memcpy(&v, p + at, sizeof v);
    } else {
      for (int l = 0; l < kPer; ++l) v[l] = convert<E, A>(p[at + l]);
    }
    return tf(v, m);
  };
  V s[kVecs], c[kVecs];
  for (int v = 0; v < kVecs; ++v) s[v] = get(v * kPer), c[v] = V{};
  i64 i = kL;
  for (; i + kL <= n; i += kL)
    for (int v = 0; v < kVecs; ++v) P::add(s[v], c[v], get(i + v * kPer));
  // The lanes as a tree: lane l takes lane l + h, for h = kLanes / 2 ... 1 (whole vectors first).
  int h = kL / 2;
  for (; h >= kPer; h /= 2)
    for (int v = 0; v < h / kPer; ++v) P::merge(s[v], c[v], s[v + h / kPer], c[v + h / kPer]);
  A ss[kPer], cc[kPer];
  std::memcpy(ss, &s[0], sizeof ss);
  std::memcpy(cc, &c[0], sizeof cc);
  for (; h >= 1; h /= 2)
    for (int l = 0; l < h; ++l) P::merge(ss[l], cc[l], ss[l + h], cc[l + h]);
  for (; i < n; ++i) P::add(ss[0], cc[0], tf(convert<E, A>(p[i]), m));
  return {ss[0], cc[0]};
}

// n >= 1 elements; the split keeps leaves a multiple of kLanes long.
template <class P, class E, class A, class Tf>
Pair<A> fold(const typename E::S* p, i64 n, const Tf& tf, i64 m) noexcept {
  if (n <= kLeaf) return fold_leaf<P, E, A>(p, n, tf, m);
  i64 h = n / 2;
  h -= h % kLanes<A>;
  Pair<A> left = fold<P, E, A>(p, h, tf, m);
  const Pair<A> right = fold<P, E, A>(p + h, n - h, tf, m);
  P::merge(left.s, left.c, right.s, right.c);
  return left;
}

// ---- wide leaves: fold's tree for compensated sums in 32- and 64-byte vectors ----
//
// A leaf's kLanes accumulators are 32 bytes of A. One 32-byte vector (AVX2) holds one leaf's
// lanes, one 64-byte vector (AVX-512F) two leaves' (lanes 0..kLanes-1 the first, the rest the
// second). Lane for lane the operations are fold_leaf's, and so is the lane tree (lane l takes lane
// l + h, h = kLanes / 2 ... 1): the bits are fold's. One leaf alone is a chain of dependent
// additions; the leaves of a block (8 of kLeaf in a whole one) are computed together instead, which
// keeps the vector units busy. Chosen at run time (one binary for every x86-64 CPU; the AVX-512
// level also asks for VL, whose 32 registers serve the 32-byte steps of 16-bit conversions); the
// target functions inline the generic code below, written with GCC's vector extension (also Clang's).

#if defined(__x86_64__) && defined(__GNUC__)
#define XP_SUM_WIDE 1
#else
#define XP_SUM_WIDE 0
#endif

SumIsa detect_sum_isa() noexcept {
#if XP_SUM_WIDE
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return SumIsa::avx512;
  if (__builtin_cpu_supports("avx2")) return SumIsa::avx2;
#endif
  return SumIsa::sse2;
}
std::atomic<SumIsa>& sum_isa() noexcept {
  static std::atomic<SumIsa> isa{detect_sum_isa()};
  return isa;
}

// E's values summed by the wide leaves: the floats (16-bit ones accumulate in float32).
template <class E, class A, class P>
constexpr bool wide_sum() noexcept {
  return std::is_floating_point_v<typename E::V> && std::is_same_v<P, Compensated<A>>;
}

#if XP_SUM_WIDE
template <int kW, class A>
struct Wide {
  typedef A V __attribute__((vector_size(kW)));
};

// x = lo's lanes, then hi's.
template <class H, class V, std::size_t... J>
[[gnu::always_inline]] inline void join(const H& lo, const H& hi, V& x, std::index_sequence<J...>) noexcept {
  x = __builtin_shufflevector(lo, hi, static_cast<int>(J)...);
}

// h = raw's 16-bit lanes zero-extended to 32 bits (a shuffle with zeros, which compiles to one
// instruction where a conversion does not).
template <class U16, class U32, std::size_t... J>
[[gnu::always_inline]] inline void widen(const U16& raw, U32& h, std::index_sequence<J...>) noexcept {
  constexpr int kN = sizeof(U16) / 2;
  h = (U32)__builtin_shufflevector(raw, U16{}, static_cast<int>(J % 2 == 0 ? J / 2 : kN)...);
}

// The kLanes 16-bit floats at q in float32, bit for bit as E::value converts one (integer vector
// operations: no instruction beyond the level's own).
template <class E, class H>
[[gnu::always_inline]] inline void wide_convert(const std::uint16_t* q, H& out) noexcept {
  using U16 = typename Wide<sizeof(H) / 2, std::uint16_t>::V;
  using U32 = typename Wide<sizeof(H), std::uint32_t>::V;
  U16 raw;
  std::memcpy(&raw, q, sizeof raw);
  U32 h;
  widen(raw, h, std::make_index_sequence<sizeof(H) / 2>{});
  U32 bits;
  if constexpr (std::is_same_v<E, BHalf>) {
    bits = (h << 16) | ((U32)((h & 0x7FFFu) > 0x7F80u) & 0x00400000u);  // a signalling NaN quieted
  } else {
    const U32 sign = (h & 0x8000u) << 16, em = h & 0x7FFFu;
    const U32 normal = (em << 13) + 0x38000000u;
    const U32 special = (em << 13) | 0x7F800000u | ((U32)(em > 0x7C00u) & 0x00400000u);  // inf, NaN
    using I32 = typename Wide<sizeof(H), std::int32_t>::V;  // em < 2^15: a signed conversion is one instruction
    const U32 subnormal = (U32)(__builtin_convertvector((I32)em, H) * 0x1p-24f);  // exact
    bits = sign | (em >= 0x7C00u ? special : em >= 0x0400u ? normal : subnormal);
  }
  out = (H)bits;
}

// x = the kLanes elements at p[h] + at, for each leaf h of the vector (two halves joined by a
// shuffle: through memory they would cost a store-forwarding stall).
template <int kW, class E, class A, class V>
[[gnu::always_inline]] inline void wide_load(const typename E::S* const* p, i64 at, V& x) noexcept {
  using H = typename Wide<32, A>::V;
  H h[kW / 32];
  for (int k = 0; k < kW / 32; ++k) {
    if constexpr (std::is_same_v<typename E::S, A>) {
      std::memcpy(&h[k], p[k] + at, sizeof(H));
    } else {
      static_assert(kIsHalf<E> && std::is_same_v<A, float>);
      wide_convert<E>(p[k] + at, h[k]);
    }
  }
  if constexpr (kW == 32) {
    x = h[0];
  } else {
    join(h[0], h[1], x, std::make_index_sequence<2 * kLanes<A>>{});
  }
}

// Lane j of d is lane j + kH of j's leaf in v (wrapping: those lanes are not used). Vectors are
// passed by reference: these functions are compiled for the baseline and inlined into the wide ones.
template <int kL, int kH, class V, std::size_t... J>
[[gnu::always_inline]] inline void lanes_down(const V& v, V& d, std::index_sequence<J...>) noexcept {
  d = __builtin_shufflevector(v, v, static_cast<int>(J / kL * kL + (J % kL + kH) % kL)...);
}

// tf on a vector: the squared deviations computed as SquaredDeviation computes them.
template <class Tf, class V>
[[gnu::always_inline]] inline void wide_transform(const Tf& tf, V& x, i64 m) noexcept {
  if constexpr (!std::is_same_v<Tf, AsIs>) {
    const V d = x - tf.mean[m];
    x = d * d;
  }
}

// The lane tree of every leaf of s, c at once: lane 0 of each leaf ends with the leaf's result.
template <int kL, int kH, class V>
[[gnu::always_inline]] inline void wide_tree(V& s, V& c) noexcept {
  if constexpr (kH >= 1) {
    constexpr auto kJ = std::make_index_sequence<sizeof(V) / sizeof(s[0])>{};
    V s2, c2;
    lanes_down<kL, kH>(s, s2, kJ);
    lanes_down<kL, kH>(c, c2, kJ);
    const V t = s + s2, z = t - s;  // Compensated::merge
    c = (c + c2) + ((s - (t - z)) + (s2 - z));
    s = t;
    wide_tree<kL, kH / 2>(s, c);
  }
}

// kNV * kW / 32 leaves: leaf g has n[g] elements at p[g], each n[g] / kLanes == steps >= 1.
template <int kW, int kNV, class E, class A, class Tf>
[[gnu::always_inline]] inline void wide_leaves(const typename E::S* const* p, i64 steps, const i64* n, const Tf& tf,
                                               i64 m, Pair<A>* out) noexcept {
  using V = typename Wide<kW, A>::V;
  using P = Compensated<A>;
  constexpr int kL = kLanes<A>, kPer = kW / 32;
  V s[kNV], c[kNV];
  for (int v = 0; v < kNV; ++v) {
    wide_load<kW, E, A>(p + v * kPer, 0, s[v]);
    wide_transform(tf, s[v], m);
    c[v] = V{};
  }
  for (i64 i = kL; i < steps * kL; i += kL) {
    for (int v = 0; v < kNV; ++v) {
      V x;
      wide_load<kW, E, A>(p + v * kPer, i, x);
      wide_transform(tf, x, m);
      const V t = s[v] + x, z = t - s[v];  // Compensated::add
      c[v] += (s[v] - (t - z)) + (x - z);
      s[v] = t;
    }
  }
  for (int v = 0; v < kNV; ++v) {
    wide_tree<kL, kL / 2>(s[v], c[v]);
    for (int h = 0; h < kPer; ++h) {
      const int g = v * kPer + h;
      Pair<A> r{s[v][h * kL], c[v][h * kL]};
      for (i64 i = steps * kL; i < n[g]; ++i) P::add(r.s, r.c, tf(convert<E, A>(p[g][i]), m));
      out[g] = r;
    }
  }
}

template <int kNV, class E, class A, class Tf>
__attribute__((target("avx2"))) void leaves_avx2(const typename E::S* const* p, i64 steps, const i64* n, const Tf& tf,
                                                 i64 m, Pair<A>* out) noexcept {
  wide_leaves<32, kNV, E, A>(p, steps, n, tf, m, out);
}
template <int kNV, class E, class A, class Tf>
__attribute__((target("avx512f,avx512vl"))) void leaves_avx512(const typename E::S* const* p, i64 steps, const i64* n,
                                                               const Tf& tf, i64 m, Pair<A>* out) noexcept {
  wide_leaves<64, kNV, E, A>(p, steps, n, tf, m, out);
}

// The leaves of fold's tree over n <= kBlock elements (at most 9), left to right, from leaf k on:
// their starts and lengths. Returns the next k.
constexpr int kMaxLeaves = 16;
template <int kL>
int list_leaves(i64 start, i64 n, i64* at, i64* len, int k) noexcept {
  if (n <= kLeaf) {
    at[k] = start;
    len[k] = n;
    return k + 1;
  }
  i64 h = n / 2;
  h -= h % kL;
  return list_leaves<kL>(start + h, n - h, at, len, list_leaves<kL>(start, h, at, len, k));
}
// The leaves' results r[k]... merged as fold merges them.
template <class P, class A>
Pair<A> merge_leaves(i64 n, const Pair<A>* r, int& k) noexcept {
  if (n <= kLeaf) return r[k++];
  i64 h = n / 2;
  h -= h % kLanes<A>;
  Pair<A> left = merge_leaves<P>(h, r, k);
  const Pair<A> right = merge_leaves<P>(n - h, r, k);
  P::merge(left.s, left.c, right.s, right.c);
  return left;
}

// fold<Compensated<A>, E, A> over n <= kBlock elements, bit for bit, with isa's vectors.
template <class E, class A, class Tf>
Pair<A> fold_wide(SumIsa isa, const typename E::S* p, i64 n, const Tf& tf, i64 m) noexcept {
  using P = Compensated<A>;
  constexpr int kL = kLanes<A>;
  i64 at[kMaxLeaves], len[kMaxLeaves];  // list_leaves writes the first `count`: no zeroing on this path
  const int count = list_leaves<kL>(0, n, at, len, 0);
  Pair<A> r[kMaxLeaves];
  for (int k = 0; k < count;) {
    const i64 steps = len[k] / kL;
    if (steps == 0) {  // a lone short leaf: fold_leaf adds it element by element
      r[k] = fold_leaf<P, E, A>(p + at[k], len[k], tf, m);
      ++k;
      continue;
    }
    // Neighbouring leaves with as many whole steps go together: 8, 4, 2 or 1.
    int run = 1;
    for (int j = k + 1; j < count && len[j] / kL == steps; ++j) ++run;
    const int take = run >= 8 && isa == SumIsa::avx512 ? 8 : run >= 4 ? 4 : run >= 2 ? 2 : 1;
    const typename E::S* q[8];
    for (int g = 0; g < take; ++g) q[g] = p + at[k + g];
    const i64* n_k = len + k;
    Pair<A>* out = r + k;
    if (isa == SumIsa::avx512 && take == 8) {
      leaves_avx512<4, E, A>(q, steps, n_k, tf, m, out);
    } else if (isa == SumIsa::avx512 && take == 4) {
      leaves_avx512<2, E, A>(q, steps, n_k, tf, m, out);
    } else if (take == 4) {
      leaves_avx2<4, E, A>(q, steps, n_k, tf, m, out);
    } else if (take == 2) {
      leaves_avx2<2, E, A>(q, steps, n_k, tf, m, out);
    } else {
      leaves_avx2<1, E, A>(q, steps, n_k, tf, m, out);
    }
    k += take;
  }
  int k = 0;
  return merge_leaves<P>(n, r, k);
}
#endif

template <class S>
void prefetch(const S* row, i64 w) noexcept {
  const char* b = reinterpret_cast<const char*>(row);
  for (i64 o = 0; o < w * static_cast<i64>(sizeof(S)); o += 64) __builtin_prefetch(b + o);
}

// The same trees as fold_leaf and fold, for w <= kCols outputs: element i of output k is rows[i][k]
// (lane l of output k is s[l][k], c[l][k]). Each row is read as one contiguous run of w elements;
// the state (kLanes pairs per output, and 2 per level of the recursion) lives in `scratch`.
template <class A>
constexpr std::size_t kRowsScratch = (2 * kLanes<A> + 8) * kCols;

template <class P, class E, class A, class Tf>
void fold_rows_leaf(const typename E::S* const* rows, i64 n, i64 w, const Tf& tf, i64 m0, A* os, A* oc,
                    A* scratch) noexcept {
  using S = typename E::S;
  constexpr int kL = kLanes<A>;
  if (n < kL) {
    for (i64 k = 0; k < w; ++k) os[k] = tf(convert<E, A>(rows[0][k]), m0 + k), oc[k] = A{};
    for (i64 i = 1; i < n; ++i) {
      const S* row = rows[i];
      for (i64 k = 0; k < w; ++k) P::add(os[k], oc[k], tf(convert<E, A>(row[k]), m0 + k));
    }
    return;
  }
  const auto s = [scratch](int l) { return scratch + l * kCols; };
  const auto c = [scratch](int l) { return scratch + (kL + l) * kCols; };
  for (int l = 0; l < kL; ++l) {
    const S* row = rows[l];
    A *sl = s(l), *cl = c(l);
    for (i64 k = 0; k < w; ++k) sl[k] = tf(convert<E, A>(row[k]), m0 + k), cl[k] = A{};
  }
  // Lane by lane (each lane's rows in order, as fold_leaf adds them): one lane's state stays in L1.
  // The rows are far apart: the next one is prefetched while this one is added.
  const i64 full = n - n % kL;
  for (int l = 0; l < kL; ++l) {
    A *sl = s(l), *cl = c(l);
    for (i64 i = kL + l; i < full; i += kL) {
      const S* row = rows[i];
      if (i + kL < full) prefetch(rows[i + kL], w);
      for (i64 k = 0; k < w; ++k) P::add(sl[k], cl[k], tf(convert<E, A>(row[k]), m0 + k));
    }
  }
  for (int h = kL / 2; h >= 1; h /= 2) {
    for (int l = 0; l < h; ++l) {
      A *sl = s(l), *cl = c(l), *sh = s(l + h), *ch = c(l + h);
      for (i64 k = 0; k < w; ++k) P::merge(sl[k], cl[k], sh[k], ch[k]);
    }
  }
  std::copy_n(s(0), w, os);
  std::copy_n(c(0), w, oc);
  for (i64 i = full; i < n; ++i) {
    const S* row = rows[i];
    for (i64 k = 0; k < w; ++k) P::add(os[k], oc[k], tf(convert<E, A>(row[k]), m0 + k));
  }
}

template <class P, class E, class A, class Tf>
void fold_rows(const typename E::S* const* rows, i64 n, i64 w, const Tf& tf, i64 m0, A* os, A* oc,
               A* scratch) noexcept {
  if (n <= kLeaf) return fold_rows_leaf<P, E, A>(rows, n, w, tf, m0, os, oc, scratch);
  i64 h = n / 2;
  h -= h % kLanes<A>;
  fold_rows<P, E, A>(rows, h, w, tf, m0, os, oc, scratch);
  A *rs = scratch, *rc = scratch + kCols;
  fold_rows<P, E, A>(rows + h, n - h, w, tf, m0, rs, rc, scratch + 2 * kCols);
  for (i64 k = 0; k < w; ++k) P::merge(os[k], oc[k], rs[k], rc[k]);
}

// An op reduces a run of n >= 1 elements (`run`, `first` = the run's index among the N), the same
// for w columns (`run_rows`), and combines the results of two neighbouring runs (a first).
template <class E, class A, class P, class Tf>
struct FoldOp {
  using S = typename E::S;
  using State = Pair<A>;
  Tf tf;
  State run(const S* p, i64 n, i64, i64 m) const noexcept {
#if XP_SUM_WIDE
    if constexpr (wide_sum<E, A, P>()) {
      // Runs shorter than a vector's lanes are one short leaf, which fold_wide would hand to
      // fold_leaf after listing its leaves: straight there (a reduction over an axis of length 1
      // runs this once per output).
      const SumIsa isa = sum_isa().load(std::memory_order_relaxed);
      if (isa != SumIsa::sse2 && n >= kLanes<A> && n <= kBlock) return fold_wide<E, A>(isa, p, n, tf, m);
    }
#endif
    return fold<P, E, A>(p, n, tf, m);
  }
  static constexpr std::size_t kScratch = (kRowsScratch<A> + 2 * kCols) * sizeof(A);
  void run_rows(const S* const* rows, i64 n, i64, i64 w, i64 m0, State* out, void* scratch) const noexcept {
    A* const os = static_cast<A*>(scratch);
    A* const oc = os + kCols;
    fold_rows<P, E, A>(rows, n, w, tf, m0, os, oc, oc + kCols);
    for (i64 k = 0; k < w; ++k) out[k] = {os[k], oc[k]};
  }
  State combine(State a, State b) const noexcept {
    P::merge(a.s, a.c, b.s, b.c);
    return a;
  }
};

// ---- min, max, argmin, argmax, any, all ----

template <class V>
bool is_nan(V v) noexcept {
  if constexpr (std::is_floating_point_v<V>) {
    return v != v;
  } else {
    return false;
  }
}

// x strictly better than v (NaN beats every number; the first of equals stays).
template <bool kMax, class V>
bool better(V x, V v) noexcept {
  if constexpr (std::is_floating_point_v<V>) {
    return (kMax ? x > v : x < v) || (x != x && v == v);
  } else {
    return kMax ? x > v : x < v;
  }
}
// v, or x when x is better or NaN: a NaN once taken stays (branch-free, vectorizable).
template <bool kMax, class V>
V pick(V v, V x) noexcept {
  if constexpr (std::is_floating_point_v<V>) {
    return ((kMax ? x > v : x < v) | (x != x)) ? x : v;
  } else {
    return (kMax ? x > v : x < v) ? x : v;
  }
}

// pick on vectors: comparisons give lane masks, the choice is made with them bit by bit.
template <bool kMax, class T, class V = typename Vec<T>::V>
V pick_vec(V v, V x) noexcept {
  auto mask = kMax ? (x > v) : (x < v);
  if constexpr (std::is_floating_point_v<T>) mask |= (x != x);
  using M = decltype(mask);
  return (V)(((M)x & mask) | ((M)v & ~mask));
}

template <bool kMax, class E>
typename E::V extreme(const typename E::S* p, i64 n) noexcept {
  using V = typename E::V;
  V best = E::value(p[0]);
  i64 i = 1;
  if constexpr (std::is_same_v<E, Num<V>>) {  // stored as computed: four vectors at a time
    using W = typename Vec<V>::V;
    constexpr int kPer = Vec<V>::kPer, kStep = 4 * kPer;
    if (n >= kStep) {
      W r[4];
      std::memcpy(r, p, sizeof r);
      for (i = kStep; i + kStep <= n; i += kStep) {
        W x[4];
        std::memcpy(x, p + i, sizeof x);
        for (int u = 0; u < 4; ++u) r[u] = pick_vec<kMax, V>(r[u], x[u]);
      }
      for (int u = 1; u < 4; ++u) r[0] = pick_vec<kMax, V>(r[0], r[u]);
      V lanes[kPer];
      std::memcpy(lanes, r, sizeof lanes);
      best = lanes[0];
      for (int l = 1; l < kPer; ++l) best = pick<kMax>(best, lanes[l]);
    }
  }
  for (; i < n; ++i) best = pick<kMax>(best, E::value(p[i]));
  return best;
}

template <class E, bool kMax>
struct MinMaxOp {
  using S = typename E::S;
  using State = typename E::V;
  State run(const S* p, i64 n, i64, i64) const noexcept { return extreme<kMax, E>(p, n); }
  static constexpr std::size_t kScratch = 0;
  void run_rows(const S* const* rows, i64 n, i64, i64 w, i64, State* out, void*) const noexcept {
    for (i64 c = 0; c < w; ++c) out[c] = E::value(rows[0][c]);
    for (i64 i = 1; i < n; ++i) {
      const S* row = rows[i];
      for (i64 c = 0; c < w; ++c) out[c] = pick<kMax>(out[c], E::value(row[c]));
    }
  }
  State combine(State a, State b) const noexcept { return pick<kMax>(a, b); }
};

template <class V>
struct ArgState {
  V v{};
  i64 i = 0;
};

template <class E, bool kMax>
struct ArgOp {
  using S = typename E::S;
  using V = typename E::V;
  using State = ArgState<V>;
  static constexpr i64 kChunk = 64;
  // The first position where hit(value) holds (there is one): chunks tested whole (vectorized), then
  // the one that has it element by element.
  template <i64 kN, class F>
  static i64 find(const S* p, i64 n, F hit) noexcept {
    i64 k = 0;
    for (; k + kN <= n; k += kN) {
      int any = 0;
      for (i64 j = 0; j < kN; ++j) any |= hit(E::value(p[k + j]));
      if (any) break;
    }
    while (!hit(E::value(p[k]))) ++k;
    return k;
  }
  // The extreme (vectorized), then its first position (the block is in cache).
  State run(const S* p, i64 n, i64 first, i64) const noexcept {
    const V best = extreme<kMax, E>(p, n);
    return {best, first + (is_nan(best) ? find<kChunk>(p, n, [](V x) { return is_nan(x); })
                                        : find<kChunk>(p, n, [best](V x) { return x == best; }))};
  }
  static constexpr std::size_t kScratch = 0;
  void run_rows(const S* const* rows, i64 n, i64 first, i64 w, i64, State* out, void*) const noexcept {
    for (i64 c = 0; c < w; ++c) out[c] = {E::value(rows[0][c]), first};
    for (i64 i = 1; i < n; ++i) {
      const S* row = rows[i];
      for (i64 c = 0; c < w; ++c) {
        const V x = E::value(row[c]);
        if (better<kMax>(x, out[c].v)) out[c] = {x, first + i};
      }
    }
  }
  State combine(State a, State b) const noexcept { return better<kMax>(b.v, a.v) ? b : a; }
};

template <class E, bool kAll>
struct AnyAllOp {
  using S = typename E::S;
  using State = std::uint8_t;
  State run(const S* p, i64 n, i64, i64) const noexcept {
    State r = kAll;
    for (i64 i = 0; i < n; ++i) r = kAll ? (r & E::truth(p[i])) : (r | E::truth(p[i]));
    return r;
  }
  static constexpr std::size_t kScratch = 0;
  void run_rows(const S* const* rows, i64 n, i64, i64 w, i64, State* out, void*) const noexcept {
    for (i64 c = 0; c < w; ++c) out[c] = kAll;
    for (i64 i = 0; i < n; ++i) {
      const S* row = rows[i];
      for (i64 c = 0; c < w; ++c) out[c] = kAll ? (out[c] & E::truth(row[c])) : (out[c] | E::truth(row[c]));
    }
  }
  State combine(State a, State b) const noexcept { return kAll ? (a & b) : (a | b); }
};

// ---- geometry ----

using Dim = ReduceDim;  // backend/reduce_ops.hpp

int simplify(Dim* d, int n) noexcept {
  return simplify_reduce_dims(d, n);
}

// Walks a list of axes in C order, keeping the input and output byte offsets.
struct Walker {
  const Dim* dims;
  int nd;
  i64 in = 0, out = 0;
  std::array<i64, kMaxDims> idx{};
  Walker(const Dim* d, int n) noexcept : dims(d), nd(n) {}
  void seek(i64 linear) noexcept {
    in = out = 0;
    for (int k = nd - 1; k >= 0; --k) {
      const i64 q = linear / dims[k].size;
      idx[k] = linear - q * dims[k].size;
      linear = q;
      in += idx[k] * dims[k].in;
      out += idx[k] * dims[k].out;
    }
  }
  void next() noexcept {
    for (int k = nd - 1; k >= 0; --k) {
      in += dims[k].in;
      out += dims[k].out;
      if (++idx[k] < dims[k].size) return;
      in -= dims[k].size * dims[k].in;
      out -= dims[k].size * dims[k].out;
      idx[k] = 0;
    }
  }
};

struct Geometry {
  const std::byte* in = nullptr;
  std::byte* out = nullptr;
  std::array<Dim, kMaxDims> kept{}, red{};
  int nk = 0, nr = 0;
  i64 M = 1, N = 1;     // outputs, elements per output
  bool aligned = true;  // data and strides are multiples of the itemsize
};

// The geometry of a request that check_reduce_request accepted.
Geometry make_geometry(const View& in, std::span<const int> axes, const View& out) {
  std::array<bool, kMaxDims> reduced{};
  for (const int a : axes) reduced[static_cast<std::size_t>(a)] = true;
  Geometry g;
  g.in = in.data;
  g.out = out.data;
  const i64 size = static_cast<i64>(itemsize(in.dtype));
  g.aligned = reinterpret_cast<std::uintptr_t>(in.data) % static_cast<std::uintptr_t>(size) == 0;
  int ko = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (in.shape[d] != 1 && in.strides[d] % size != 0) g.aligned = false;
    if (reduced[static_cast<std::size_t>(d)]) {
      g.red[static_cast<std::size_t>(g.nr++)] = {in.shape[d], in.strides[d], 0};
      g.N *= in.shape[d];
    } else {
      g.kept[static_cast<std::size_t>(g.nk++)] = {in.shape[d], in.strides[d], out.strides[ko]};
      g.M *= in.shape[d];
      ++ko;
    }
  }
  if (g.M > 0 && g.N > 0) {
    g.nk = simplify(g.kept.data(), g.nk);
    g.nr = simplify(g.red.data(), g.nr);
  }
  return g;
}

// Copies elements [start, start + len) of the reduced axes (C order) into buf.
template <class S>
void gather(const std::byte* base, const Geometry& g, i64 start, i64 len, S* buf) noexcept {
  if (g.nr == 0) {
    std::memcpy(buf, base, sizeof(S));
    return;
  }
  const Dim& inner = g.red[static_cast<std::size_t>(g.nr - 1)];
  Walker outer(g.red.data(), g.nr - 1);
  outer.seek(start / inner.size);
  i64 j = start % inner.size;
  for (i64 i = 0; i < len;) {
    const i64 take = std::min(inner.size - j, len - i);
    const std::byte* src = base + outer.in + j * inner.in;
    for (i64 k = 0; k < take; ++k) std::memcpy(buf + i + k, src + k * inner.in, sizeof(S));
    i += take;
    j = 0;
    outer.next();
  }
}

// Reduces every output: op's runs over fixed blocks, combined pairwise, handed to
// sink(state, output index, output address).
template <class Op, class Sink>
void drive(const Geometry& g, const Op& op, const Sink& sink) {
  using S = typename Op::S;
  using State = typename Op::State;
  constexpr i64 kSize = sizeof(S);
  const i64 N = g.N, M = g.M;
  const i64 nb = (N + kBlock - 1) / kBlock, per = std::min(N, kBlock);
  std::vector<State> partial(nb > 1 ? static_cast<std::size_t>(M * nb) : 0);
  const bool red_contiguous = g.nr > 0 && g.red[static_cast<std::size_t>(g.nr - 1)].in == kSize;
  const Dim* last_kept = g.nk > 0 ? &g.kept[static_cast<std::size_t>(g.nk - 1)] : nullptr;

  if (g.aligned && g.nr > 0 && !red_contiguous && last_kept != nullptr && last_kept->in == kSize &&
      last_kept->size >= 4) {
    // Columns: items are (outer output, chunk of cw columns, block). Columns never mix, so the
    // chunks may be narrowed to give every thread work without changing a bit.
    const Dim kd = *last_kept;
    const i64 W = kd.size;
    i64 cw = kCols;
    while (cw > 64 && M / W * ((W + cw - 1) / cw) * nb < 4 * num_threads()) cw /= 2;
    const i64 chunks = (W + cw - 1) / cw, per_outer = chunks * nb;
    const i64 grain = std::max<i64>(1, kGrain / (per * std::min(W, cw)));
    parallel_for(M / W * per_outer, grain, [&](i64 b, i64 e) {
      std::vector<const S*> rows(static_cast<std::size_t>(per));
      std::vector<State> st(static_cast<std::size_t>(kCols));
      std::vector<double> scratch(Op::kScratch / sizeof(double) + 1);  // double: aligned for any A
      Walker ow(g.kept.data(), g.nk - 1), rw(g.red.data(), g.nr);
      i64 o = b / per_outer, j = b % per_outer / nb, k = b % nb;
      ow.seek(o);
      for (i64 it = b; it < e; ++it) {
        const i64 start = k * kBlock, len = std::min(kBlock, N - start);
        const i64 c0 = j * cw, w = std::min(cw, W - c0), m0 = o * W + c0;
        const std::byte* base = g.in + ow.in + c0 * kSize;
        rw.seek(start);
        for (i64 i = 0; i < len; ++i, rw.next())
          rows[static_cast<std::size_t>(i)] = reinterpret_cast<const S*>(base + rw.in);
        op.run_rows(rows.data(), len, start, w, m0, st.data(), scratch.data());
        for (i64 c = 0; c < w; ++c) {
          if (nb == 1) {
            sink(st[static_cast<std::size_t>(c)], m0 + c, g.out + ow.out + (c0 + c) * kd.out);
          } else {
            partial[static_cast<std::size_t>((m0 + c) * nb + k)] = st[static_cast<std::size_t>(c)];
          }
        }
        if (++k == nb) {
          k = 0;
          if (++j == chunks) {
            j = 0;
            ++o;
            ow.next();
          }
        }
      }
    });
  } else {
    // Runs: items are (output, block), read in place or gathered.
    const bool direct = g.aligned && (g.nr == 0 || (g.nr == 1 && red_contiguous));
    parallel_for(M * nb, std::max<i64>(1, kGrain / per), [&](i64 b, i64 e) {
      std::vector<S> buf(direct ? 0 : static_cast<std::size_t>(per));
      Walker kw(g.kept.data(), g.nk);
      i64 m = b / nb, k = b % nb;
      kw.seek(m);
      for (i64 it = b; it < e; ++it) {
        const std::byte* base = g.in + kw.in;
        const i64 start = k * kBlock, len = std::min(kBlock, N - start);
        const S* p = buf.data();
        if (direct) {
          p = reinterpret_cast<const S*>(base) + start;
        } else {
          gather(base, g, start, len, buf.data());
        }
        const State s = op.run(p, len, start, m);
        if (nb == 1) {
          sink(s, m, g.out + kw.out);
        } else {
          partial[static_cast<std::size_t>(it)] = s;
        }
        if (++k == nb) {
          k = 0;
          ++m;
          kw.next();
        }
      }
    });
  }

  if (nb > 1) {
    parallel_for(M, std::max<i64>(1, kGrain / nb), [&](i64 b, i64 e) {
      std::vector<State> tmp(static_cast<std::size_t>(nb));
      Walker kw(g.kept.data(), g.nk);
      kw.seek(b);
      for (i64 m = b; m < e; ++m, kw.next()) {
        // Pairwise over the blocks, bottom-up: neighbours first, a lone last one carried up.
        std::copy_n(partial.begin() + m * nb, nb, tmp.begin());
        for (i64 n = nb; n > 1; n = (n + 1) / 2) {
          for (i64 i = 0; i + 1 < n; i += 2)
            tmp[static_cast<std::size_t>(i / 2)] =
                op.combine(tmp[static_cast<std::size_t>(i)], tmp[static_cast<std::size_t>(i + 1)]);
          if (n % 2 == 1) tmp[static_cast<std::size_t>(n / 2)] = tmp[static_cast<std::size_t>(n - 1)];
        }
        sink(tmp[0], m, g.out + kw.out);
      }
    });
  }
}

// fn(element, output address) for every output of a reduction over axes of length 1: the innermost
// kept axis as a plain strided loop.
template <class S, class Fn>
void each_one(const Geometry& g, const Fn& fn) {
  if (g.nk == 0) {  // one output
    S x;
    std::memcpy(&x, g.in, sizeof x);
    fn(x, g.out);
    return;
  }
  const Dim inner = g.kept[static_cast<std::size_t>(g.nk - 1)];
  parallel_for(g.M, kGrain, [&](i64 b, i64 e) {
    Walker ow(g.kept.data(), g.nk - 1);
    ow.seek(b / inner.size);
    i64 j = b % inner.size;
    for (i64 m = b; m < e;) {
      const i64 take = std::min(inner.size - j, e - m);
      const std::byte* src = g.in + ow.in + j * inner.in;
      std::byte* dst = g.out + ow.out + j * inner.out;
      for (i64 k = 0; k < take; ++k) {
        S x;
        std::memcpy(&x, src + k * inner.in, sizeof x);
        fn(x, dst + k * inner.out);
      }
      m += take;
      j = 0;
      ow.next();
    }
  });
}

// Every output the reduction of one element (axes of length 1, none left once simplified): what the
// folds below give for a single element, in one pass over the outputs without their machinery
// (one fold per output cost 4 to 13 times NumPy's time). Sums: the element in the accumulator
// with a zero compensation (Compensated::result), products and extremes the element, means and
// variances as reduce_typed's sinks compute them with N = 1, arg* 0, any/all its truth.
template <class E>
void reduce_one(ReduceOp op, const Geometry& g, double correction) {
  using S = typename E::S;
  using A = SumAcc<E>;
  using F = MeanAcc<E>;
  using SumP = std::conditional_t<kIsInt<E>, Plain<Add, A>, Compensated<A>>;
  using MeanP = Compensated<F>;
  const double dof = 1.0 - correction;
  const auto mean_of = [](S x) { return MeanP::result({convert<E, F>(x), F{}}) / static_cast<F>(1); };
  const auto variance = [&](S x) {
    const F d = convert<E, F>(x) - mean_of(x);
    return dof > 0 ? MeanP::result({d * d, F{}}) / static_cast<F>(dof) : std::numeric_limits<F>::quiet_NaN();
  };
  switch (op) {
    case ReduceOp::sum:
      return each_one<S>(g, [](S x, std::byte* o) { store<E>(o, SumP::result({convert<E, A>(x), A{}})); });
    case ReduceOp::prod:
      return each_one<S>(g, [](S x, std::byte* o) { store<E>(o, convert<E, A>(x)); });
    case ReduceOp::mean:
      return each_one<S>(g, [&](S x, std::byte* o) { store<E>(o, mean_of(x)); });
    case ReduceOp::var:
      return each_one<S>(g, [&](S x, std::byte* o) { store<E>(o, variance(x)); });
    case ReduceOp::std:
      return each_one<S>(g, [&](S x, std::byte* o) { store<E>(o, std::sqrt(variance(x))); });
    case ReduceOp::min:
    case ReduceOp::max:
      return each_one<S>(g, [](S x, std::byte* o) { store<E>(o, E::value(x)); });
    case ReduceOp::argmin:
    case ReduceOp::argmax:
      return each_one<S>(g, [](S, std::byte* o) { put(o, i64{0}); });
    case ReduceOp::any:
    case ReduceOp::all:
      return each_one<S>(g, [](S x, std::byte* o) { put(o, static_cast<std::uint8_t>(E::truth(x))); });
  }
}

template <class E>
void reduce_typed(ReduceOp op, const Geometry& g, double correction) {
  using V = typename E::V;
  using A = SumAcc<E>;
  using F = MeanAcc<E>;
  using SumP = std::conditional_t<kIsInt<E>, Plain<Add, A>, Compensated<A>>;
  using MeanP = Compensated<F>;
  const i64 N = g.N;
  if (g.M == 0) return;
  if (N == 0) {
    Walker kw(g.kept.data(), g.nk);
    for (i64 m = 0; m < g.M; ++m, kw.next()) {
      std::byte* o = g.out + kw.out;
      switch (op) {
        case ReduceOp::sum:
          store<E>(o, A{0});
          break;
        case ReduceOp::prod:
          store<E>(o, A{1});
          break;
        case ReduceOp::any:
          put(o, std::uint8_t{0});
          break;
        case ReduceOp::all:
          put(o, std::uint8_t{1});
          break;
        default:
          store<E>(o, std::numeric_limits<F>::quiet_NaN());
          break;  // mean, var, std
      }
    }
    return;
  }
  if (N == 1 && g.nr == 0) return reduce_one<E>(op, g, correction);
  const auto put_value = [](V s, i64, std::byte* o) { store<E>(o, s); };
  const auto put_index = [](ArgState<V> s, i64, std::byte* o) { put(o, s.i); };
  const auto put_bool = [](std::uint8_t s, i64, std::byte* o) { put(o, s); };
  switch (op) {
    case ReduceOp::sum:
      return drive(g, FoldOp<E, A, SumP, AsIs>{}, [](Pair<A> s, i64, std::byte* o) { store<E>(o, SumP::result(s)); });
    case ReduceOp::prod:
      return drive(g, FoldOp<E, A, Plain<Mul, A>, AsIs>{}, [](Pair<A> s, i64, std::byte* o) { store<E>(o, s.s); });
    case ReduceOp::mean:
      return drive(g, FoldOp<E, F, MeanP, AsIs>{},
                   [N](Pair<F> s, i64, std::byte* o) { store<E>(o, MeanP::result(s) / static_cast<F>(N)); });
    case ReduceOp::var:
    case ReduceOp::std: {
      std::vector<F> mean(static_cast<std::size_t>(g.M));
      drive(g, FoldOp<E, F, MeanP, AsIs>{}, [&](Pair<F> s, i64 m, std::byte*) {
        mean[static_cast<std::size_t>(m)] = MeanP::result(s) / static_cast<F>(N);
      });
      const double dof = static_cast<double>(N) - correction;
      const bool root = op == ReduceOp::std;
      return drive(g, FoldOp<E, F, MeanP, SquaredDeviation<F>>{{mean.data()}},
                   [dof, root](Pair<F> s, i64, std::byte* o) {
                     F v = dof > 0 ? MeanP::result(s) / static_cast<F>(dof) : std::numeric_limits<F>::quiet_NaN();
                     if (root) v = std::sqrt(v);
                     store<E>(o, v);
                   });
    }
    case ReduceOp::min:
      return drive(g, MinMaxOp<E, false>{}, put_value);
    case ReduceOp::max:
      return drive(g, MinMaxOp<E, true>{}, put_value);
    case ReduceOp::argmin:
      return drive(g, ArgOp<E, false>{}, put_index);
    case ReduceOp::argmax:
      return drive(g, ArgOp<E, true>{}, put_index);
    case ReduceOp::any:
      return drive(g, AnyAllOp<E, false>{}, put_bool);
    case ReduceOp::all:
      return drive(g, AnyAllOp<E, true>{}, put_bool);
  }
}

template <class F>
void dispatch(DType t, F&& f) {
  switch (t) {
    case DType::bool_:
      return f.template operator()<Bool>();
    case DType::int8:
      return f.template operator()<Num<std::int8_t>>();
    case DType::int16:
      return f.template operator()<Num<std::int16_t>>();
    case DType::int32:
      return f.template operator()<Num<std::int32_t>>();
    case DType::int64:
      return f.template operator()<Num<std::int64_t>>();
    case DType::uint8:
      return f.template operator()<Num<std::uint8_t>>();
    case DType::uint16:
      return f.template operator()<Num<std::uint16_t>>();
    case DType::uint32:
      return f.template operator()<Num<std::uint32_t>>();
    case DType::uint64:
      return f.template operator()<Num<std::uint64_t>>();
    case DType::float16:
      return f.template operator()<Half>();
    case DType::bfloat16:
      return f.template operator()<BHalf>();
    case DType::float32:
      return f.template operator()<Num<float>>();
    case DType::float64:
      return f.template operator()<Num<double>>();
    case DType::complex64:
    case DType::complex128:
      break;  // the array layer reduces complex arrays through their parts
  }
  throw TypeError("reduce: " + std::string(name(t)) + " is not supported by the CPU reduction");
}

}  // namespace

SumIsa sum_isa_supported() noexcept {
  return detect_sum_isa();
}

SumIsa sum_isa_in_use() noexcept {
  return sum_isa().load(std::memory_order_relaxed);
}

const char* sum_isa_name(SumIsa isa) noexcept {
  switch (isa) {
    case SumIsa::sse2:
      return "sse2";
    case SumIsa::avx2:
      return "avx2";
    case SumIsa::avx512:
      return "avx512";
  }
  return "unknown";
}

SumIsa set_sum_isa(SumIsa isa) {
  if (isa > sum_isa_supported())
    throw ValueError("set_sum_isa: level " + std::to_string(static_cast<int>(isa)) +
                     " is not supported by this CPU (the best is " +
                     std::to_string(static_cast<int>(sum_isa_supported())) + ")");
  return sum_isa().exchange(isa);
}

namespace {

// ---- cumulative sum and product ----

// Narrow: an integer output of the input's own dtype, which keeps the low bits of the 64-bit running
// sum: the values of accumulating in that dtype with wraparound, as NumPy's cumsum(dtype=) gives.
// Prod: a running product (identity 1) instead of a sum.
template <class E, bool Narrow, bool Prod>
void cumsum_typed(const View& in, int axis, const View& out, bool include_initial) {
  using S = typename E::S;
  using A = SumAcc<E>;
  const auto put_out = [](std::byte* p, A v) noexcept {
    if constexpr (Narrow) {
      put(p, static_cast<S>(v));
    } else {
      store<E>(p, v);
    }
  };
  const i64 L = in.shape[axis], sa = in.strides[axis], so = out.strides[axis];
  const i64 osize = static_cast<i64>(itemsize(out.dtype));
  std::array<Dim, kMaxDims> dims{};
  int nd = 0;
  i64 M = 1;
  bool aligned = reinterpret_cast<std::uintptr_t>(in.data) % sizeof(S) == 0 &&
                 reinterpret_cast<std::uintptr_t>(out.data) % static_cast<std::uintptr_t>(osize) == 0 &&
                 sa % static_cast<i64>(sizeof(S)) == 0 && so % osize == 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (d == axis) continue;
    dims[static_cast<std::size_t>(nd++)] = {in.shape[d], in.strides[d], out.strides[d]};
    M *= in.shape[d];
    aligned = aligned && in.strides[d] % static_cast<i64>(sizeof(S)) == 0 && out.strides[d] % osize == 0;
  }
  if (M == 0) return;
  nd = simplify(dims.data(), nd);
  const i64 first = include_initial ? 1 : 0;
  const Dim* last = nd > 0 ? &dims[static_cast<std::size_t>(nd - 1)] : nullptr;

  if (aligned && L > 0 && sa != static_cast<i64>(sizeof(S)) && last != nullptr &&
      last->in == static_cast<i64>(sizeof(S)) && last->out == osize && last->size >= 4) {
    // Along a non-contiguous axis: kCols neighbouring lines at once, vectorized across them.
    const i64 W = last->size, chunks = (W + kCols - 1) / kCols;
    parallel_for(M / W * chunks, std::max<i64>(1, kGrain / (L * std::min(W, kCols))), [&](i64 b, i64 e) {
      Walker ow(dims.data(), nd - 1);
      i64 o = b / chunks, j = b % chunks;
      ow.seek(o);
      A acc[kCols];
      for (i64 it = b; it < e; ++it) {
        const i64 c0 = j * kCols, w = std::min(kCols, W - c0);
        const std::byte* ip = in.data + ow.in + c0 * static_cast<i64>(sizeof(S));
        std::byte* op = out.data + ow.out + c0 * osize;
        if (include_initial)
          for (i64 c = 0; c < w; ++c) put_out(op + c * osize, A{Prod ? 1 : 0});
        for (i64 i = 0; i < L; ++i) {
          const S* row = reinterpret_cast<const S*>(ip + i * sa);
          std::byte* orow = op + (i + first) * so;
          for (i64 c = 0; c < w; ++c) {
            const A v = static_cast<A>(E::value(row[c]));
            acc[c] = i == 0 ? v : (Prod ? acc[c] * v : acc[c] + v);
            put_out(orow + c * osize, acc[c]);
          }
        }
        if (++j == chunks) {
          j = 0;
          ++o;
          ow.next();
        }
      }
    });
    return;
  }
  parallel_for(M, std::max<i64>(1, kGrain / std::max<i64>(L, 1)), [&](i64 b, i64 e) {
    Walker w(dims.data(), nd);
    w.seek(b);
    for (i64 t = b; t < e; ++t, w.next()) {
      const std::byte* ip = in.data + w.in;
      std::byte* op = out.data + w.out;
      if (include_initial) put_out(op, A{Prod ? 1 : 0});
      op += first * so;
      A acc{};
      for (i64 i = 0; i < L; ++i) {
        S s;
        std::memcpy(&s, ip + i * sa, sizeof s);
        const A v = static_cast<A>(E::value(s));
        acc = i == 0 ? v : (Prod ? acc * v : acc + v);
        put_out(op + i * so, acc);
      }
    }
  });
}

}  // namespace

void reduce(ReduceOp op, const View& in, std::span<const int> axes, const View& out, double correction) {
  check_reduce_request(op, in, axes, out);
  const Geometry g = make_geometry(in, axes, out);
  dispatch(in.dtype, [&]<class E>() { reduce_typed<E>(op, g, correction); });
}

void cumulative(ReduceOp op, const View& in, int axis, const View& out, bool include_initial) {
  check_scan_request(op, in, axis, out, include_initial);
  const bool prod = op == ReduceOp::prod;
  dispatch(in.dtype, [&]<class E>() {
    if constexpr (kIsInt<E>) {
      if (out.dtype != reduce_result_dtype(op, in.dtype)) {
        return prod ? cumsum_typed<E, true, true>(in, axis, out, include_initial)
                    : cumsum_typed<E, true, false>(in, axis, out, include_initial);
      }
    }
    prod ? cumsum_typed<E, false, true>(in, axis, out, include_initial)
         : cumsum_typed<E, false, false>(in, axis, out, include_initial);
  });
}

}  // namespace xp::detail::cpu
