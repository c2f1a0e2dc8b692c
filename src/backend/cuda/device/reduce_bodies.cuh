// The reduction kernels' bodies, generic over the op R (reduce_source.cpp writes one R per op and
// dtype, or names a template of reduce_sum.cuh): its state St, id(), add(), merge(), shfl(),
// finish(), and kPack / kIntMoments / kArgRun, which choose a body's packed, integer or argmin /
// argmax path. Elements are read at byte offsets from a.in by xp_ld (one) and xp_ldv (16 bytes,
// 16-byte aligned); a fused value
// (XP_FUSED) computes them from its inputs instead (element index = offset / sizeof(S)). After
// reduce_geometry.cuh, the element definitions, reduce_moments.cuh for var and std, and R.
#ifdef XP_FUSED
XP_D S xp_ld(const Args& a, i64 off) { return xp_fused_at(a.f, off / (i64)sizeof(S)); }
XP_D uint4 xp_ldv(const Args& a, i64 off) {
  union {
    uint4 v;
    S e[16 / sizeof(S)];
  } w;
  xp_fused_vec(a.f, off / (i64)sizeof(S), w.e);
  return w.v;
}
#else
XP_D S xp_ld(const Args& a, i64 off) { return *(const S*)(a.in + off); }
XP_D uint4 xp_ldv(const Args& a, i64 off) { return __ldg((const uint4*)(a.in + off)); }
#endif
// A vector of VB bytes (16, or 8 for the columns kernel of the heavy 16-bit ops, cols_vec_bytes):
// its type and its load at a byte offset that is a multiple of VB.
template <int VB> struct xp_vec_of {
  typedef uint4 T;
};
template <> struct xp_vec_of<8> {
  typedef uint2 T;
};
template <int VB> XP_D typename xp_vec_of<VB>::T xp_ldvb(const Args& a, i64 off) {
  if constexpr (VB == 16) {
    return xp_ldv(a, off);
  } else {
#ifdef XP_FUSED
    union {
      uint2 v;
      S e[8 / sizeof(S)];
    } w;
#pragma unroll
    for (int j = 0; j < (int)(8 / sizeof(S)); ++j) w.e[j] = xp_ld(a, off + j * (i64)sizeof(S));
    return w.v;
#else
    return __ldg((const uint2*)(a.in + off));
#endif
  }
}

// The one-pass finish of split outputs (a.cnt != 0: a counter per output, zero before the launch):
// the unit that stores an output's state counts it after a fence; the one that counts the S-th, the
// last, combines the S states in the finish kernel's order (the same bits as the two launches) and
// sets the counter back to zero. Called by one thread per unit, after the unit's state is stored.
XP_D unsigned xp_last_of_output(const Args& a, i64 m) {
  __threadfence();  // the state before the count, for the unit that finishes
  const unsigned done = atomicAdd((unsigned*)a.cnt + m, 1u) + 1u;
  if (done != (unsigned)a.S) return 0;
  __threadfence();  // the other units' states after their counts
  return 1;
}
template <class R, bool Fresh> XP_D void xp_finish_warp_one(const Args& a, i64 m, int lane);
template <class R, bool Cols, bool Fresh> XP_D void xp_finish_block_one(const Args& a, i64 m);

// A warp's unit: the lanes' states as a tree (lane l takes lane l + d), then stored or finished.
// oo: the output's byte offset (xp_kept).
template <class R>
XP_D void xp_warp_done(const Args& a, const R& r, typename R::St st, i64 u, i64 m, i64 oo, int lane) {
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) st = r.merge(st, R::shfl(st, d));
  if (lane == 0) {
    if (a.final_ != 0) {
      r.finish(a, m, st, oo);
    } else {
      ((typename R::St*)a.part)[u] = st;
    }
  }
  if (a.final_ == 0 && a.cnt != 0) {  // the one-pass finish: the warp that stores output m's last state
    unsigned last = 0;
    if (lane == 0) last = xp_last_of_output(a, m);
    if (__shfl_sync(XP_FULL, last, 0) != 0) {
      xp_finish_warp_one<R, true>(a, m, lane);
      if (lane == 0) ((unsigned*)a.cnt)[m] = 0;  // zero again for the next launch on the stream
    }
  }
}

// rows_vector: 16-byte vectors (W elements; a warp per unit: lane l takes vectors l, l + 32, ...,
// D in flight), W accumulators per lane combined as a tree, then the tail element by element.
template <class R> XP_D void xp_vec_add(const R& r, typename R::St* acc, uint4 x, i64 k) {
  union {
    uint4 v;
    S e[16 / sizeof(S)];
  } w;
  w.v = x;
#pragma unroll
  for (int j = 0; j < (int)(16 / sizeof(S)); ++j) r.add(acc[j], w.e[j], k + j);
}
// The vectors t, t + T, ... below nv of a run starting at byte offset base, D loads in flight, given
// to f(vector, i) in increasing order of i (so that the order of additions does not depend on D).
// Load addresses: for 8-byte elements a byte offset that advances with i, for the others
// base + 16 i. Both are measured: on an H200 the tile kernel summed a GiB of float64 in 0.2418 ms the
// first way and 0.2676 ms the second, and a GiB of bfloat16 in 0.3036 ms the first way and 0.2504 ms
// the second (ptxas schedules the two differently; bench/results/2026-12-03-h200-rows, runs 2 and 4).
template <int T, int D, class F> XP_D void xp_each_vec(const Args& a, i64 base, i64 nv, int t, F&& f) {
  constexpr bool advance = sizeof(S) == 8;
  i64 i = t, off = base + (i64)t * 16;
  for (; i + (D - 1) * T < nv; i += D * T) {
    uint4 x[D];
#pragma unroll
    for (int e = 0; e < D; ++e) x[e] = xp_ldv(a, advance ? off + (i64)e * T * 16 : base + (i + e * T) * 16);
#pragma unroll
    for (int e = 0; e < D; ++e) f(x[e], i + e * T);
    if (advance) off += (i64)D * T * 16;
  }
  for (; i < nv; i += T) {
    f(xp_ldv(a, advance ? off : base + i * 16), i);
    if (advance) off += (i64)T * 16;
  }
}
// A thread's run (see xp_run_state) for an op that combines 32-bit words of packed elements
// (R::kPack == 1: min and max of 8- and 16-bit integers, exact in any order): four words per
// vector, one SIMD min or max each, then the lanes of the last word one by one, then the elements
// past the last whole vector.
template <class R, int T, int D>
XP_D typename R::St xp_run_packed(const Args& a, const R& r, i64 io, i64 k0, i64 k1, int t) {
  typedef typename R::St St;
  const int W = (int)(16 / sizeof(S));
  const i64 nv = (k1 - k0) / W;
  u32 p0 = R::packed_id(), p1 = p0, p2 = p0, p3 = p0;
  xp_each_vec<T, D>(a, io + k0 * (i64)sizeof(S), nv, t, [&](uint4 x, i64) {
    p0 = R::packed(p0, x.x);
    p1 = R::packed(p1, x.y);
    p2 = R::packed(p2, x.z);
    p3 = R::packed(p3, x.w);
  });
  union {
    u32 w;
    S e[4 / sizeof(S)];
  } u;
  u.w = R::packed(R::packed(p0, p1), R::packed(p2, p3));
  St st = r.id();
#pragma unroll
  for (int j = 0; j < (int)(4 / sizeof(S)); ++j) st = r.merge(st, (St)u.e[j]);
  for (i64 k = k0 + nv * W + t; k < k1; k += T) r.add(st, xp_ld(a, io + k * (i64)sizeof(S)), k);
  return st;
}

// argmin and argmax of 8- and 16-bit integers (R::kPack == 2): a vector's extreme from its packed
// words (SIMD min or max, then the lanes of one word); only a vector whose extreme is strictly
// better than the state's value, or the first a state sees, is searched for the first element
// holding it. A thread's vectors come in increasing index order, so an equal value later keeps the
// earlier index, as choose() would.
template <class R> XP_D void xp_arg_vec(typename R::St& st, uint4 x, i64 k) {
  const int W = (int)(16 / sizeof(S));
  u32 w = R::packed(R::packed(x.x, x.y), R::packed(x.z, x.w));
  w = R::packed(w, w >> 16);
  if (sizeof(S) == 1) w = R::packed(w, w >> 8);
  const S e = (S)w;  // lane 0
  if (R::better(e, st.v) || st.i == 0x7FFFFFFFFFFFFFFFll) {
    union {
      uint4 v;
      S e[16 / sizeof(S)];
    } u;
    u.v = x;
    int j = W - 1;
#pragma unroll
    for (int q = W - 1; q >= 0; --q)
      if (u.e[q] == e) j = q;
    st.v = e;
    st.i = k + j;
  }
}
template <class R, int T, int D>
XP_D typename R::St xp_run_packed_arg(const Args& a, const R& r, i64 io, i64 k0, i64 k1, int t) {
  typedef typename R::St St;
  const int W = (int)(16 / sizeof(S));
  const i64 nv = (k1 - k0) / W;
  St st = r.id();
  xp_each_vec<T, D>(a, io + k0 * (i64)sizeof(S), nv, t, [&](uint4 x, i64 i) { xp_arg_vec<R>(st, x, k0 + i * W); });
  for (i64 k = k0 + nv * W + t; k < k1; k += T) r.add(st, xp_ld(a, io + k * (i64)sizeof(S)), k);
  return st;
}

// A thread's run for sums of bool and 8- and 16-bit integers (R::kPack == 4; sum, and mean, which
// adds the same integers): each vector's elements summed exactly in 32 bits by R::vsum (SIMD dot
// products for bytes), then one 64-bit addition per vector, then the elements past the last whole
// vector. Integer sums wrap in 64 bits and are exact in any order: the same bits as xp_run_state.
// One accumulator instead of W (16 64-bit words for bytes): a third of the registers.
template <class R, int T, int D>
XP_D typename R::St xp_run_packed_sum(const Args& a, const R& r, i64 io, i64 k0, i64 k1, int t) {
  typedef typename R::St St;
  const int W = (int)(16 / sizeof(S));
  const i64 nv = (k1 - k0) / W;
  St st = r.id();
  xp_each_vec<T, D>(a, io + k0 * (i64)sizeof(S), nv, t, [&](uint4 x, i64) { st += R::vsum(x); });
  for (i64 k = k0 + nv * W + t; k < k1; k += T) r.add(st, xp_ld(a, io + k * (i64)sizeof(S)), k);
  return st;
}

// The W values of a vector.
XP_D void xp_unpack(uint4 x, V* v) {
  union {
    uint4 v;
    S e[16 / sizeof(S)];
  } w;
  w.v = x;
#pragma unroll
  for (int j = 0; j < (int)(16 / sizeof(S)); ++j) v[j] = xp_val(w.e[j]);
}
// argmin and argmax of the dtypes without packed words (R::kArgRun) over rows: a vector's extreme by
// better() (a NaN, once met, stays), and only a vector whose extreme is strictly better than the
// state's value, or the first a state sees, is searched for the first element equal to it (the first
// NaN for a NaN; -0.0 equals 0.0, as in choose()). A thread's vectors come in increasing index order,
// so an equal value later keeps the earlier index. Per element a compare and a select instead of
// choose()'s two better() tests, index compare and branches.
template <class R> XP_D void xp_arg_vec_values(typename R::St& st, uint4 x, i64 k) {
  const int W = (int)(16 / sizeof(S));
  V v[16 / sizeof(S)];
  xp_unpack(x, v);
  V e = v[0];
#pragma unroll
  for (int q = 1; q < W; ++q) e = R::better(v[q], e) ? v[q] : e;
  if (R::better(e, st.v) || st.i == 0x7FFFFFFFFFFFFFFFll) {
    int j = W - 1;
#pragma unroll
    for (int q = W - 1; q >= 0; --q)
      if (v[q] == e || (v[q] != v[q] && e != e)) j = q;
    st.v = e;
    st.i = k + j;
  }
}
template <class R, int T, int D>
XP_D typename R::St xp_run_arg_values(const Args& a, const R& r, i64 io, i64 k0, i64 k1, int t) {
  typedef typename R::St St;
  const int W = (int)(16 / sizeof(S));
  const i64 nv = (k1 - k0) / W;
  St st = r.id();
  xp_each_vec<T, D>(a, io + k0 * (i64)sizeof(S), nv, t,
                    [&](uint4 x, i64 i) { xp_arg_vec_values<R>(st, x, k0 + i * W); });
  for (i64 k = k0 + nv * W + t; k < k1; k += T) r.add(st, xp_ld(a, io + k * (i64)sizeof(S)), k);
  return st;
}

// A thread's run for var and std (R::kPack == 3, reduce_moments.cuh): the D vectors in flight are cut into
// tiles of at most 32 values (whole vectors), each tile added as one state, in order; a vector past
// the last whole group is a tile of its own; then the elements past the last whole vector.
template <class R, int T, int D>
XP_D typename R::St xp_run_tiles(const Args& a, const R& r, i64 io, i64 k0, i64 k1, int t) {
  typedef typename R::St St;
  const int W = (int)(16 / sizeof(S));
  constexpr int G = D * W <= 32 ? D : (32 / W > 0 ? 32 / W : 1);  // vectors per tile
  static_assert(D % G == 0, "a group of loads is a whole number of tiles");
  const i64 nv = (k1 - k0) / W;
  St st = r.id();
  i64 i = t, off = io + k0 * (i64)sizeof(S) + (i64)t * 16;
  for (; i + (D - 1) * T < nv; i += D * T, off += (i64)D * T * 16) {
    uint4 x[D];
#pragma unroll
    for (int e = 0; e < D; ++e) x[e] = xp_ldv(a, off + (i64)e * T * 16);
#pragma unroll
    for (int g = 0; g < D; g += G) {
      V v[G * (16 / sizeof(S))];
#pragma unroll
      for (int e = 0; e < G; ++e) xp_unpack(x[g + e], v + e * W);
      r.template tile<G * (16 / sizeof(S))>(st, v);
    }
  }
  for (; i < nv; i += T, off += (i64)T * 16) {
    V v[16 / sizeof(S)];
    xp_unpack(xp_ldv(a, off), v);
    r.template tile<16 / sizeof(S)>(st, v);
  }
  for (i64 k = k0 + nv * W + t; k < k1; k += T) r.add(st, xp_ld(a, io + k * (i64)sizeof(S)), k);
  return st;
}

// One thread's state over the contiguous elements [k0, k1) of a unit that T threads read together
// (T = 32: a warp; 256: a block), the thread being number t of them: 16-byte vectors t, t + T, ...
// (D in flight; W elements each, W accumulators), the accumulators as a tree, then the elements
// past the last whole vector, t, t + T, ...
// Ops on packed words (R::kPack) take their own run, above.
template <class R, int T, int D>
XP_D typename R::St xp_run_state(const Args& a, const R& r, i64 io, i64 k0, i64 k1, int t) {
  typedef typename R::St St;
  if constexpr (R::kPack == 1) return xp_run_packed<R, T, D>(a, r, io, k0, k1, t);
  if constexpr (R::kPack == 2) return xp_run_packed_arg<R, T, D>(a, r, io, k0, k1, t);
  if constexpr (R::kPack == 3) return xp_run_tiles<R, T, D>(a, r, io, k0, k1, t);
  if constexpr (R::kPack == 4) return xp_run_packed_sum<R, T, D>(a, r, io, k0, k1, t);
  if constexpr (R::kArgRun) return xp_run_arg_values<R, T, D>(a, r, io, k0, k1, t);
  const int W = (int)(16 / sizeof(S));
  const i64 nv = (k1 - k0) / W;  // the run starts 16-byte aligned: the plan checks
  St acc[16 / sizeof(S)];
#pragma unroll
  for (int j = 0; j < W; ++j) acc[j] = r.id();
  xp_each_vec<T, D>(a, io + k0 * (i64)sizeof(S), nv, t, [&](uint4 x, i64 i) { xp_vec_add(r, acc, x, k0 + i * W); });
  // The inner bound is W / 2, not h: a bound that varies with the outer loop left the tree rolled,
  // and the W accumulators in local memory (a 128-byte stack frame for the sum of 8-bit integers).
#pragma unroll
  for (int h = W / 2; h >= 1; h /= 2) {
#pragma unroll
    for (int j = 0; j < W / 2; ++j)
      if (j < h) acc[j] = r.merge(acc[j], acc[j + h]);
  }
  St st = acc[0];
  for (i64 k = k0 + nv * W + t; k < k1; k += T) r.add(st, xp_ld(a, io + k * (i64)sizeof(S)), k);
  return st;
}

// rows_vector in tiles (plan.tiles: fewer outputs than multiprocessors; a kernel of its own, so that
// the warp kernel keeps its registers): a unit is read by a whole block, thread t taking vectors t,
// t + 256, ... (four in flight), so that each block streams one contiguous run as
// cub::DeviceReduce does; the lanes as a tree, then the eight warps in order. On an H200 this sums
// a GiB 2.7% faster than a warp per unit (bench/nvcc/xp_sum_kernels.cu, see kTileMinBlocks).
template <class R> XP_D void xp_rows_tile_body(const Args& a) {
  typedef typename R::St St;
  __shared__ St warps[8];
  __shared__ unsigned last;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const i64 units = a.M * a.S;
  if (threadIdx.x == 0) last = 0;
  for (i64 u = blockIdx.x; u < units; u += gridDim.x) {
    const i64 m = xp_unit_output(a, u), k0 = (u - m * a.S) * a.chunk, k1 = xp_min64(a.N, k0 + a.chunk);
    i64 io, oo;
    xp_kept(a, m, io, oo);
    const R r(a, m);
    St st = xp_run_state<R, 256, 4>(a, r, io, k0, k1, threadIdx.x);
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) st = r.merge(st, R::shfl(st, d));
    if (lane == 0) warps[w] = st;
    __syncthreads();
    if (threadIdx.x == 0) {
      St t = warps[0];
      for (int k = 1; k < 8; ++k) t = r.merge(t, warps[k]);
      if (a.final_ != 0) {
        r.finish(a, m, t, oo);
      } else {
        ((St*)a.part)[u] = t;
        last = a.cnt != 0 ? xp_last_of_output(a, m) : 0;  // rewritten only after the next barrier
      }
    }
    __syncthreads();
    if (last != 0) {  // the block that stored output m's last state (the same for every thread)
      if (a.S >= XP_WIDE_FINISH_STATES) {
        xp_finish_block_one<R, false, true>(a, m);
      } else if (threadIdx.x < 32) {
        xp_finish_warp_one<R, true>(a, m, lane);
      }
      if (threadIdx.x == 0) ((unsigned*)a.cnt)[m] = 0;  // zero again for the next launch on the stream
      __syncthreads();
    }
  }
}

template <class R, int D> XP_D void xp_rows_vec_body(const Args& a) {
  typedef typename R::St St;
  const int lane = threadIdx.x & 31;
  const i64 units = a.M * a.S, step = (i64)gridDim.x * 8;
  for (i64 u = (i64)blockIdx.x * 8 + (threadIdx.x >> 5); u < units; u += step) {
    const i64 m = xp_unit_output(a, u), k0 = (u - m * a.S) * a.chunk, k1 = xp_min64(a.N, k0 + a.chunk);
    i64 io, oo;
    xp_kept(a, m, io, oo);
    const R r(a, m);
    const St st = xp_run_state<R, 32, D>(a, r, io, k0, k1, lane);
    xp_warp_done<R>(a, r, st, u, m, oo, lane);
  }
}

// rows_vector with one kept axis and one split (plan.rows_each): a warp per row, its offsets a
// multiple of the row, no division and no partial state. A kernel of its own, so that the general
// one's index arithmetic does not cost it registers: on an H200, sums of rows of 1024 float32 in
// 0.2371 ms at 40 registers against 0.2640 ms at 60 (bench/results/2026-12-03-h200-rows, run 2,
// xp_short_rows.cu's "idx"). The same additions in the same order as xp_rows_vec_body.
template <class R, int D> XP_D void xp_rows_each_body(const Args& a) {
  typedef typename R::St St;
  const int lane = threadIdx.x & 31;
  const i64 step = (i64)gridDim.x * 8;
  // The strides are read where they are used (the argument lives in constant memory, nk = 0 leaves
  // them 0): held in registers for the whole loop they cost the float32 sum 8 registers.
  for (i64 m = (i64)blockIdx.x * 8 + (threadIdx.x >> 5); m < a.M; m += step) {
    const R r(a, m);
    St st = xp_run_state<R, 32, D>(a, r, m * a.kin[0], 0, a.N, lane);
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) st = r.merge(st, R::shfl(st, d));
    if (lane == 0) r.finish(a, m, st, m * a.kout[0]);
  }
}

// rows_strided: any reduced strides; lane l takes reduced indices k0 + l, k0 + l + 32, ...
template <class R> XP_D void xp_rows_strided_body(const Args& a) {
  typedef typename R::St St;
  const int lane = threadIdx.x & 31;
  const i64 units = a.M * a.S, step = (i64)gridDim.x * 8;
  const i64 n0 = a.rshape[a.nr - 1], s0 = a.rin[a.nr - 1];
  for (i64 u = (i64)blockIdx.x * 8 + (threadIdx.x >> 5); u < units; u += step) {
    const i64 m = xp_unit_output(a, u), k0 = (u - m * a.S) * a.chunk, k1 = xp_min64(a.N, k0 + a.chunk);
    i64 io, oo;
    xp_kept(a, m, io, oo);
    const R r(a, m);
    St st = r.id();
    i64 k = k0 + lane;
    if (k < k1) {
      i64 q = k / n0, j = k - q * n0, qo = xp_outer(a, q);
      for (;;) {
        r.add(st, xp_ld(a, io + qo + j * s0), k);
        k += 32;
        if (k >= k1) break;
        j += 32;
        if (j >= n0) {
          q += j / n0;
          j %= n0;
          qo = xp_outer(a, q);
        }
      }
    }
    xp_warp_done<R>(a, r, st, u, m, oo, lane);
  }
}

// columns: a thread per unit, neighbouring threads on neighbouring outputs. The states of split s
// go to part[s * M + m], so that a warp's stores are contiguous (xp_finish_cols_body reads them).
template <class R> XP_D void xp_cols_body(const Args& a) {
  typedef typename R::St St;
  const i64 units = a.M * a.S, step = (i64)gridDim.x * blockDim.x;
  const i64 n0 = a.rshape[a.nr - 1], s0 = a.rin[a.nr - 1];
  for (i64 u = (i64)blockIdx.x * blockDim.x + threadIdx.x; u < units; u += step) {
    const i64 s = u / a.M, m = u - s * a.M;
    const i64 k0 = s * a.chunk, k1 = xp_min64(a.N, k0 + a.chunk);
    i64 io, oo;
    xp_kept(a, m, io, oo);
    const R r(a, m);
    St st = r.id();
    if (a.nr == 1) {
      // One reduced axis (a column of a matrix): eight loads in flight, added in order.
      i64 off = io + k0 * s0, k = k0;
      for (; k + 8 <= k1; k += 8, off += 8 * s0) {
        S x[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) x[e] = xp_ld(a, off + e * s0);
#pragma unroll
        for (int e = 0; e < 8; ++e) r.add(st, x[e], k + e);
      }
      for (; k < k1; ++k, off += s0) r.add(st, xp_ld(a, off), k);
    } else if (k0 < k1) {
      i64 q = k0 / n0, j = k0 - q * n0, qo = xp_outer(a, q);
      for (i64 k = k0; k < k1; ++k) {
        r.add(st, xp_ld(a, io + qo + j * s0), k);
        if (++j == n0) {
          j = 0;
          qo = xp_outer(a, ++q);
        }
      }
    }
    if (a.final_ != 0) {
      r.finish(a, m, st, oo);
    } else {
      ((St*)a.part)[s * a.M + m] = st;
    }
  }
}

// Columns in vectors for the ops on packed words (R::kPack 1: min and max, 2: argmin and argmax of
// 8- and 16-bit integers), rows [k0, k1) from offset off: one SIMD min or max per 32-bit word of a
// row's vector and, for the arg ops, one SIMD compare and a select of the row's number into every
// lane that the row strictly improved. Runs of at most 2^(8 sizeof(S)) rows, so that a row's
// number within its run fits a lane; each run's lanes are then merged into the outputs' states,
// runs in order. A later equal value never takes a lane, and merge keeps the earlier index of
// equal values: the first index, as choose() gives.
template <class R, int L>
XP_D void xp_cols_vec_packed(const Args& a, const R* r, typename R::St* acc, i64 off, i64 s0, i64 k0, i64 k1) {
  typedef typename R::St St;
  constexpr int E = (int)(4 / sizeof(S));         // lanes per word
  constexpr i64 Q = (i64)1 << (8 * sizeof(S));    // rows per run
  constexpr u32 kRep = sizeof(S) == 1 ? 0x01010101u : 0x00010001u;
  constexpr u32 kLane = sizeof(S) == 1 ? 0xFFu : 0xFFFFu;
  for (i64 base = k0; base < k1; base += Q) {
    const i64 end = xp_min64(k1, base + Q);
    u32 b[4], ix[4];
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      b[w] = R::packed_id();
      ix[w] = 0u;
    }
    const auto row = [&](const uint4& x, u32 kk) {
      const u32 xs[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        if constexpr (R::kPack == 2) {
          const u32 m = R::packed_better(xs[w], b[w]);
          ix[w] = (ix[w] & ~m) | (kk & m);
        }
        b[w] = R::packed(b[w], xs[w]);
      }
    };
    i64 k = base;
    for (; k + L <= end; k += L, off += L * s0) {
      uint4 x[L];
#pragma unroll
      for (int e = 0; e < L; ++e) x[e] = xp_ldv(a, off + e * s0);
#pragma unroll
      for (int e = 0; e < L; ++e) row(x[e], (u32)(k + e - base) * kRep);
    }
    for (; k < end; ++k, off += s0) row(xp_ldv(a, off), (u32)(k - base) * kRep);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      union {
        u32 word;
        S e[4 / sizeof(S)];
      } u;
      u.word = b[w];
#pragma unroll
      for (int l = 0; l < E; ++l) {
        St c;
        if constexpr (R::kPack == 2) {
          c.v = xp_val(u.e[l]);
          c.i = base + (i64)((ix[w] >> (l * 8 * (int)sizeof(S))) & kLane);
        } else {
          c = (St)xp_val(u.e[l]);
        }
        acc[w * E + l] = r[w * E + l].merge(acc[w * E + l], c);
      }
    }
  }
}

// Columns in vectors for var and std of bool and integers of 8 and 16 bits (R::kIntMoments): per
// output the exact sum S (32 bits) and sum of squares Q (R::QT) of the thread's rows, then its
// (n, mean, M2) as pairs of doubles from S / n and (n Q - S^2) / n, with n Q - S^2 exact in 64 bits.
// Three integer operations per element instead of a float64 state per output per element. The plan
// keeps a thread's rows to at most R::kRun (reduce_int_moments_run), where nothing overflows.
template <class R, int L>
XP_D void xp_cols_vec_int_moments(const Args& a, const R* r, typename R::St* acc, i64 off, i64 s0, i64 k0, i64 k1) {
  typedef typename R::St St;
  typedef typename R::A A;
  typedef typename R::QT QT;
  constexpr int W = (int)(16 / sizeof(S));
  union Vec {
    uint4 v;
    S e[16 / sizeof(S)];
  };
  if (k1 <= k0) return;
  i32 s[16 / sizeof(S)];
  QT q[16 / sizeof(S)];
#pragma unroll
  for (int j = 0; j < W; ++j) {
    s[j] = 0;
    q[j] = 0;
  }
  const auto row = [&](const Vec& x) {
#pragma unroll
    for (int j = 0; j < W; ++j) {
      const i32 v = (i32)xp_val(x.e[j]);
      s[j] += v;
      q[j] += (QT)v * (QT)v;
    }
  };
  i64 k = k0;
  for (; k + L <= k1; k += L, off += L * s0) {
    Vec x[L];
#pragma unroll
    for (int e = 0; e < L; ++e) x[e].v = xp_ldv(a, off + e * s0);
#pragma unroll
    for (int e = 0; e < L; ++e) row(x[e]);
  }
  for (; k < k1; ++k, off += s0) {
    Vec x;
    x.v = xp_ldv(a, off);
    row(x);
  }
  const i64 n = k1 - k0;
  const A an = (A)n;
#pragma unroll
  for (int j = 0; j < W; ++j) {
    St b;
    b.n = n;
    const A sj = (A)s[j];
    b.h = xp_div(sj, an);
    b.l = xp_div(fma(-b.h, an, sj), an);
    // n Q - S^2 >= 0, below 2^63: two exact halves, then their sum as a pair.
    const u64 d = (u64)n * (u64)q[j] - (u64)((i64)s[j] * (i64)s[j]);
    A dh, dl;
    xp_two_sum((A)(d >> 32) * 4294967296.0, (A)(d & 0xFFFFFFFFull), dh, dl);
    b.q = xp_div(dh, an);
    b.c = xp_div(fma(-b.q, an, dh) + dl, an);
    acc[j] = r[j].merge(acc[j], b);
  }
}

// Columns in vectors for argmin and argmax of the dtypes without packed words (R::kArgRun): per
// output the best value of the thread's rows and its row as a 32-bit offset, the first row taken as
// it comes and a later one only when R::better (strictly better, or a NaN over a number): a compare
// and two selects per element, without the index's 64-bit compare or branches. The first index of
// the extreme (of the first NaN), as choose() gives in order; merged into the outputs' states once
// per run of at most 2^31 rows.
template <class R, int L, int VB>
XP_D void xp_cols_vec_arg(const Args& a, const R* r, typename R::St* acc, i64 off, i64 s0, i64 k0, i64 k1) {
  typedef typename R::St St;
  constexpr int W = (int)(VB / sizeof(S));
  constexpr i64 Q = (i64)1 << 31;
  union Vec {
    typename xp_vec_of<VB>::T v;
    S e[VB / sizeof(S)];
  };
  for (i64 base = k0; base < k1; base += Q) {
    const i64 end = xp_min64(k1, base + Q);
    V b[VB / sizeof(S)];
    u32 at[VB / sizeof(S)];
    {
      Vec x;
      x.v = xp_ldvb<VB>(a, off);
#pragma unroll
      for (int j = 0; j < W; ++j) {
        b[j] = xp_val(x.e[j]);
        at[j] = 0u;
      }
    }
    off += s0;
    const auto row = [&](const Vec& x, u32 kk) {
#pragma unroll
      for (int j = 0; j < W; ++j) {
        const V v = xp_val(x.e[j]);
        const bool t = R::better(v, b[j]);
        b[j] = t ? v : b[j];
        at[j] = t ? kk : at[j];
      }
    };
    i64 k = base + 1;
    for (; k + L <= end; k += L, off += L * s0) {
      Vec x[L];
#pragma unroll
      for (int e = 0; e < L; ++e) x[e].v = xp_ldvb<VB>(a, off + e * s0);
#pragma unroll
      for (int e = 0; e < L; ++e) row(x[e], (u32)(k + e - base));
    }
    for (; k < end; ++k, off += s0) {
      Vec x;
      x.v = xp_ldvb<VB>(a, off);
      row(x, (u32)(k - base));
    }
#pragma unroll
    for (int j = 0; j < W; ++j) {
      St c;
      c.v = b[j];
      c.i = base + (i64)at[j];
      acc[j] = r[j].merge(acc[j], c);
    }
  }
}

// columns in vectors (plan.cols_vec: one reduced axis, the innermost kept axis contiguous and a
// multiple of 16 / sizeof(S) long, every row 16-byte aligned): a thread per W = VB / sizeof(S)
// adjacent outputs, reading them as one vector of VB bytes per row (16, or 8: cols_vec_bytes), L
// vectors in flight, each output's elements added in order (as xp_cols_body adds them); packed ops
// in xp_cols_vec_packed.
template <class R, int L, int VB = 16> XP_D void xp_cols_vec_body(const Args& a) {
  typedef typename R::St St;
  const int W = (int)(VB / sizeof(S));
  const i64 groups = a.M / W, units = groups * a.S, step = (i64)gridDim.x * blockDim.x;
  const i64 s0 = a.rin[0], ko = a.kout[a.nk - 1];
  for (i64 u = (i64)blockIdx.x * blockDim.x + threadIdx.x; u < units; u += step) {
    const i64 s = u / groups, m0 = (u - s * groups) * W;
    const i64 k0 = s * a.chunk, k1 = xp_min64(a.N, k0 + a.chunk);
    i64 io, oo;
    xp_kept_each(a, m0, io, oo);
    R r[VB / sizeof(S)];
    St acc[VB / sizeof(S)];
#pragma unroll
    for (int j = 0; j < W; ++j) {
      r[j] = R(a, m0 + j);
      acc[j] = r[j].id();
    }
    union Vec {
      typename xp_vec_of<VB>::T v;
      S e[VB / sizeof(S)];
    };
    i64 off = io + k0 * s0, k = k0;
    if constexpr (VB == 16 && (R::kPack == 1 || R::kPack == 2)) {
      xp_cols_vec_packed<R, L>(a, r, acc, off, s0, k0, k1);
      k = k1;
    } else if constexpr (VB == 16 && R::kIntMoments) {
      xp_cols_vec_int_moments<R, L>(a, r, acc, off, s0, k0, k1);
      k = k1;
    } else if constexpr (R::kArgRun) {
      xp_cols_vec_arg<R, L, VB>(a, r, acc, off, s0, k0, k1);
      k = k1;
    }
    for (; k + L <= k1; k += L, off += L * s0) {
      Vec x[L];
#pragma unroll
      for (int e = 0; e < L; ++e) x[e].v = xp_ldvb<VB>(a, off + e * s0);
      if constexpr (R::kPack == 3) {  // var, std: the L rows of an output are one tile
#pragma unroll
        for (int j = 0; j < W; ++j) {
          V v[L];
#pragma unroll
          for (int e = 0; e < L; ++e) v[e] = xp_val(x[e].e[j]);
          r[j].template tile<L>(acc[j], v);
        }
      } else {
#pragma unroll
        for (int e = 0; e < L; ++e) {
#pragma unroll
          for (int j = 0; j < W; ++j) r[j].add(acc[j], x[e].e[j], k + e);
        }
      }
    }
    for (; k < k1; ++k, off += s0) {
      Vec x;
      x.v = xp_ldvb<VB>(a, off);
#pragma unroll
      for (int j = 0; j < W; ++j) r[j].add(acc[j], x.e[j], k);
    }
#pragma unroll
    for (int j = 0; j < W; ++j) {
      if (a.final_ != 0) {
        r[j].finish(a, m0 + j, acc[j], oo + j * ko);
      } else {
        ((St*)a.part)[s * a.M + m0 + j] = acc[j];
      }
    }
  }
}

// The finish of the columns class (states at part[s * M + m]): a block per 32 adjacent outputs,
// warp w merging the states of splits [w q, (w + 1) q) in order (q = ceil(S / 8), four loads in
// flight; a warp's loads are contiguous), then the eight warps' states in order. Up to Thin (<= 8)
// states, a thread per output instead (finish_grid: 256 outputs a block): its S loads at once, then
// the same merges in the same order (state s merged into the identity, as warp s does, and the
// identity for each warp past S), so both give the same bits.
template <class R, int Thin> XP_D void xp_finish_cols_body(const Args& a) {
  typedef typename R::St St;
  static_assert(Thin <= 8, "a thread per output repeats the eight warps' merges");
  if (a.S <= Thin) {
    for (i64 m = (i64)blockIdx.x * blockDim.x + threadIdx.x; m < a.M; m += (i64)gridDim.x * blockDim.x) {
      const R r(a, m);
      const St* part = (const St*)a.part + m;
      St p[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) p[k] = k < a.S ? part[k * a.M] : r.id();
      St t = r.merge(r.id(), p[0]);
#pragma unroll
      for (int k = 1; k < 8; ++k) t = r.merge(t, k < a.S ? r.merge(r.id(), p[k]) : p[k]);
      i64 io, oo;
      xp_kept(a, m, io, oo);
      r.finish(a, m, t, oo);
    }
    return;
  }
  __shared__ St sh[8][32];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const i64 q = (a.S + 7) / 8;
  for (i64 m0 = (i64)blockIdx.x * 32; m0 < a.M; m0 += (i64)gridDim.x * 32) {
    const i64 m = m0 + lane;
    if (m < a.M) {
      const R r(a, m);
      const St* part = (const St*)a.part + m;
      St st = r.id();
      i64 s = w * q;
      const i64 s1 = xp_min64(a.S, s + q);
      for (; s + 4 <= s1; s += 4) {
        const St p0 = part[s * a.M], p1 = part[(s + 1) * a.M], p2 = part[(s + 2) * a.M], p3 = part[(s + 3) * a.M];
        st = r.merge(st, p0);
        st = r.merge(st, p1);
        st = r.merge(st, p2);
        st = r.merge(st, p3);
      }
      for (; s < s1; ++s) st = r.merge(st, part[s * a.M]);
      sh[w][lane] = st;
    }
    __syncthreads();
    if (w == 0 && m < a.M) {
      const R r(a, m);
      St t = sh[0][lane];
      for (int k = 1; k < 8; ++k) t = r.merge(t, sh[k][lane]);
      i64 io, oo;
      xp_kept(a, m, io, oo);
      r.finish(a, m, t, oo);
    }
    __syncthreads();
  }
}

// A partial state written by another block of the same launch (the one-pass finish): read past the
// SM's L1, which is not coherent with the other SMs' stores. Fresh = false: a plain load (the finish
// kernels, launched after every state is written).
template <bool Fresh, class St> XP_D St xp_ld_state(const St* p) {
  if constexpr (!Fresh) {
    return *p;
  } else if constexpr (sizeof(St) % 4 == 0) {
    union {
      St v;
      unsigned w[sizeof(St) / 4];
    } u;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(St) / 4); ++i) u.w[i] = __ldcg((const unsigned*)p + i);
    return u.v;
  } else if constexpr (sizeof(St) == 2) {
    union {
      St v;
      unsigned short w;
    } u;
    u.w = __ldcg((const unsigned short*)p);
    return u.v;
  } else {
    static_assert(sizeof(St) == 1, "a state of 1, 2 or 4k bytes");
    union {
      St v;
      unsigned char w;
    } u;
    u.w = __ldcg((const unsigned char*)p);
    return u.v;
  }
}

// The block finish of output m (all 256 threads): thread t takes states t, t + 256, ..., four loads
// in flight, then the lanes as a tree and the eight warps in order. The states of output m are
// part[m * S + s] or, for the columns class (Cols), part[s * M + m].
template <class R, bool Cols, bool Fresh> XP_D void xp_finish_block_one(const Args& a, i64 m) {
  typedef typename R::St St;
  __shared__ St warps[8];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const R r(a, m);
  const St* part = (const St*)a.part + (Cols ? m : m * a.S);
  const i64 ps = Cols ? a.M : 1;  // between two splits' states
  St st = r.id();
  i64 s = threadIdx.x;
  for (; s + 768 < a.S; s += 1024) {
    const St p0 = xp_ld_state<Fresh>(part + s * ps), p1 = xp_ld_state<Fresh>(part + (s + 256) * ps),
             p2 = xp_ld_state<Fresh>(part + (s + 512) * ps), p3 = xp_ld_state<Fresh>(part + (s + 768) * ps);
    st = r.merge(st, p0);
    st = r.merge(st, p1);
    st = r.merge(st, p2);
    st = r.merge(st, p3);
  }
  for (; s < a.S; s += 256) st = r.merge(st, xp_ld_state<Fresh>(part + s * ps));
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) st = r.merge(st, R::shfl(st, d));
  if (lane == 0) warps[w] = st;
  __syncthreads();
  if (threadIdx.x == 0) {
    St t = warps[0];
    for (int k = 1; k < 8; ++k) t = r.merge(t, warps[k]);
    i64 io, oo;
    xp_kept(a, m, io, oo);
    r.finish(a, m, t, oo);
  }
  __syncthreads();
}

// The warp finish of output m (a whole warp): lane l takes states l, l + 32, ... of part[m * S + s],
// then the lanes as a tree.
template <class R, bool Fresh> XP_D void xp_finish_warp_one(const Args& a, i64 m, int lane) {
  typedef typename R::St St;
  const R r(a, m);
  const St* part = (const St*)a.part + m * a.S;
  St st = r.id();
  for (i64 s = lane; s < a.S; s += 32) st = r.merge(st, xp_ld_state<Fresh>(part + s));
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) st = r.merge(st, R::shfl(st, d));
  if (lane == 0) {
    i64 io, oo;
    xp_kept(a, m, io, oo);
    r.finish(a, m, st, oo);
  }
}

// finish_wide: a block per output for many states.
template <class R, bool Cols> XP_D void xp_finish_wide_body(const Args& a) {
  for (i64 m = blockIdx.x; m < a.M; m += gridDim.x) xp_finish_block_one<R, Cols, false>(a, m);
}

// finish: a warp per output combines its S partial states.
template <class R> XP_D void xp_finish_body(const Args& a) {
  const int lane = threadIdx.x & 31;
  const i64 step = (i64)gridDim.x * 8;
  for (i64 m = (i64)blockIdx.x * 8 + (threadIdx.x >> 5); m < a.M; m += step) xp_finish_warp_one<R, false>(a, m, lane);
}
