// The states of var and std (reduce_source.cpp, the op structs of ReduceOp::var and ::std). After
// reduce_geometry.cuh and the element definitions (S, V, xp_val).
// var and std in one read. A run's state is its count n, its mean as an unevaluated pair h + l and
// its M2 (the sum of squared deviations from the mean) as a pair q + c. Two states merge by Chan,
// Golub and LeVeque's formula, M2 = M2a + M2b + d^2 na nb / n with d = mean_b - mean_a, all terms
// nonnegative; the mean moves by d nb / n, kept as a pair so that d stays exact to the working
// precision even when |mean| is large against the deviations. A tile of C values (C a power of
// two, held in registers) becomes a state directly: its approximate mean c (a tree of sums over C),
// the deviations e = x - c, then M2 = sum e^2 - (sum e)^2 / C and mean = c + (sum e) / C: the
// corrected two-pass formula on registers. One element is a state of n = 1.
template <class A> XP_D void xp_two_sum(A a, A b, A& s, A& e) {
  s = a + b;
  const A z = s - a;
  e = (a - (s - z)) + (b - z);
}
template <class St> XP_D St xp_moments_merge(const St& a, const St& b) {
  typedef decltype(a.h) A;
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  St r;
  r.n = a.n + b.n;
  const A f = xp_div((A)b.n, (A)r.n);
  const A d = (b.h - a.h) + (b.l - a.l);
  xp_two_sum(a.h, a.l + d * f, r.h, r.l);
  A q, e1, e2;
  xp_two_sum(a.q, b.q, q, e1);
  xp_two_sum(q, (d * d) * ((A)a.n * f), r.q, e2);
  r.c = ((a.c + b.c) + e1) + e2;
  return r;
}
// x[0] = the sum of x[0..2H) as a tree (x is overwritten). A recursion, not a loop over H: the
// loop was left rolled, its array in local memory.
template <class A, int H> XP_D void xp_tree_sum(A* x) {
  if constexpr (H >= 1) {
#pragma unroll
    for (int j = 0; j < H; ++j) x[j] = x[j] + x[j + H];
    xp_tree_sum<A, H / 2>(x);
  }
}
template <class St, class A, int C> XP_D St xp_moments_tile(const V* v) {
  A t[C], e[C], e2[C];
#pragma unroll
  for (int j = 0; j < C; ++j) t[j] = (A)v[j];
  xp_tree_sum<A, C / 2>(t);
  const A c = t[0] * (A)(1.0 / C);
#pragma unroll
  for (int j = 0; j < C; ++j) {
    e[j] = (A)v[j] - c;
    e2[j] = e[j] * e[j];
  }
  xp_tree_sum<A, C / 2>(e);
  xp_tree_sum<A, C / 2>(e2);
  St r;
  r.n = C;
  const A m1 = e[0] * (A)(1.0 / C);
  xp_two_sum(c, m1, r.h, r.l);
  // (sum e)^2 / C <= sum e^2: the correction is finite when the sum of squares is.
  r.q = xp_finite(e2[0]) ? e2[0] - e[0] * m1 : e2[0];
  r.c = (A)0;
  return r;
}
