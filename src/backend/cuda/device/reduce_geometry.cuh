// The argument of the reduction kernels and the offsets it gives (backend/cuda/reduce_source.cpp:
// the host's ReduceArgs has the same layout). After reduce_common.cuh and, for a fused value
// (XP_FUSED defined), the value's xp_fargs.
struct Args {
  u64 in, out, part, cnt;  // cnt: the one-pass finish's counters (0: none)
  i64 M, N, S, chunk;
  double dof;  // N - correction
  i64 final_, nk, nr;
  i64 kshape[8], kin[8], kout[8];
  i64 rshape[8], rin[8];
#ifdef XP_FUSED
  xp_fargs f;  // the fused value's inputs and constants
#endif
};
// The input and output byte offsets of output m (inlined: a call that takes the kernel's argument
// by reference makes the compiler copy the whole argument to local memory in every thread). The
// outermost kept axis takes what is left of m without a division (m < M), so that one kept axis,
// the common case, costs no 64-bit division at all (on an H200 those divisions made the warp kernel
// 16% slower on rows of 4 KiB: bench/nvcc/xp_short_rows.cu). Each = true divides for every axis, for the columns-in-vectors
// kernel: there the shorter code gives the float32 sum 48 registers instead of 52, five resident
// blocks per SM instead of four, and its one wave of threads summed 16384^2 over axis 0 in 0.2629 ms
// against 0.2437 ms (bench/results/2026-12-03-h200-rows, run 2). A thread computes it once.
template <bool Each> XP_D void xp_kept_t(const Args& a, i64 m, i64& in, i64& out) {
  in = 0;
  out = 0;
  for (int d = (int)a.nk - 1; d >= (Each ? 0 : 1); --d) {
    const i64 q = m / a.kshape[d], i = m - q * a.kshape[d];
    m = q;
    in += i * a.kin[d];
    out += i * a.kout[d];
  }
  if (!Each && a.nk > 0) {
    in += m * a.kin[0];
    out += m * a.kout[0];
  }
}
XP_D void xp_kept(const Args& a, i64 m, i64& in, i64& out) {
  xp_kept_t<false>(a, m, in, out);
}
XP_D void xp_kept_each(const Args& a, i64 m, i64& in, i64& out) {
  xp_kept_t<true>(a, m, in, out);
}
// The output of unit u (a.S units per output), without a division when each output is one unit.
XP_D i64 xp_unit_output(const Args& a, i64 u) {
  return a.S == 1 ? u : u / a.S;
}
// The input byte offset of index q over the reduced axes but the innermost.
XP_D i64 xp_outer(const Args& a, i64 q) {
  i64 off = 0;
  for (int d = (int)a.nr - 2; d >= 0; --d) {
    const i64 p = q / a.rshape[d];
    off += (q - p * a.rshape[d]) * a.rin[d];
    q = p;
  }
  return off;
}
