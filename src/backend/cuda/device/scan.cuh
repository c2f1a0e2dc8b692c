// Cumulative sums and products (reduce_source.cpp, scan_source): one thread per line
// (xp_scan_lines) or one block per line (xp_scan_tiles). Before it: reduce_common.cuh, the element
// definitions (S, xp_val), the accumulation type A, xp_put (a store of A as the output dtype),
// XP_SCAN_OP(x, y) and XP_SCAN_ID (x + y and 0, or x * y and 1) and XP_SCAN_SERIAL: 1 for floats
// (one thread combines a tile in the CPU's order), 0 for integers (exact modulo 2^64 in any order,
// for products as for sums: a block scan).
struct Args {
  u64 in, out;
  i64 M, L, sa, so, first, nd;
  i64 shape[8], sin[8], sout[8];
};
XP_D void xp_line(const Args& a, i64 m, i64& in, i64& out) {
  in = 0;
  out = 0;
  for (int d = (int)a.nd - 1; d >= 0; --d) {
    const i64 q = m / a.shape[d], i = m - q * a.shape[d];
    m = q;
    in += i * a.sin[d];
    out += i * a.sout[d];
  }
}

// One thread per line, sequential (the CPU's order): loads are independent of the running sum.
extern "C" __global__ void __launch_bounds__(256) xp_scan_lines(const Args a) {
  const i64 step = (i64)gridDim.x * blockDim.x;
  for (i64 m = (i64)blockIdx.x * blockDim.x + threadIdx.x; m < a.M; m += step) {
    i64 io, oo;
    xp_line(a, m, io, oo);
    if (a.first != 0) xp_put(a.out + oo, XP_SCAN_ID);
    oo += a.first * a.so;
    const u64 ip = a.in + io;
    A acc = XP_SCAN_ID;
#pragma unroll 8
    for (i64 i = 0; i < a.L; ++i) {
      const A v = (A)xp_val(*(const S*)(ip + i * a.sa));
      acc = i == 0 ? v : XP_SCAN_OP(acc, v);
      xp_put(a.out + oo + i * a.so, acc);
    }
  }
}

// One block per line: tiles staged in shared memory, loaded and stored by the whole block.
#define XP_TILE 2048
extern "C" __global__ void __launch_bounds__(256) xp_scan_tiles(const Args a) {
  __shared__ A tile[XP_TILE];
  const int t = threadIdx.x;
  for (i64 m = blockIdx.x; m < a.M; m += gridDim.x) {
    i64 io, oo;
    xp_line(a, m, io, oo);
    if (a.first != 0 && t == 0) xp_put(a.out + oo, XP_SCAN_ID);
    oo += a.first * a.so;
    A carry = XP_SCAN_ID;
    for (i64 base = 0; base < a.L; base += XP_TILE) {
      const int n = (int)xp_min64((i64)XP_TILE, a.L - base);
      for (int j = t; j < n; j += 256) tile[j] = (A)xp_val(*(const S*)(a.in + io + (base + j) * a.sa));
      __syncthreads();
#if XP_SCAN_SERIAL
      // Floats: one thread adds in the CPU's order (eight loads ahead of the additions).
      if (t == 0) {
        A acc = carry;
        int j = 0;
        if (base == 0) {
          acc = tile[0];
          j = 1;
        }
        for (; j + 8 <= n; j += 8) {
          A x[8];
#pragma unroll
          for (int u = 0; u < 8; ++u) x[u] = tile[j + u];
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            acc = XP_SCAN_OP(acc, x[u]);
            tile[j + u] = acc;
          }
        }
        for (; j < n; ++j) {
          acc = XP_SCAN_OP(acc, tile[j]);
          tile[j] = acc;
        }
        carry = acc;
      }
#else
      // Integers (u64, exact modulo 2^64 in any order): eight elements per thread, then a block scan.
      {
        __shared__ A wsum[8];
        A loc[8], sum = XP_SCAN_ID;
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int j = t * 8 + u;
          sum = XP_SCAN_OP(sum, j < n ? tile[j] : XP_SCAN_ID);
          loc[u] = sum;
        }
        const int lane = t & 31, w = t >> 5;
        A inc = sum;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
          const A y = __shfl_up_sync(XP_FULL, inc, d);
          if (lane >= d) inc = XP_SCAN_OP(inc, y);
        }
        // The lanes before this one, combined (a product has no inverse to take `sum` back out).
        A ex = __shfl_up_sync(XP_FULL, inc, 1);
        if (lane == 0) ex = XP_SCAN_ID;
        if (lane == 31) wsum[w] = inc;
        __syncthreads();
        A before = carry, total = XP_SCAN_ID;
        for (int k = 0; k < 8; ++k) {
          if (k < w) before = XP_SCAN_OP(before, wsum[k]);
          total = XP_SCAN_OP(total, wsum[k]);
        }
        before = XP_SCAN_OP(before, ex);
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int j = t * 8 + u;
          if (j < n) tile[j] = XP_SCAN_OP(before, loc[u]);
        }
        carry = XP_SCAN_OP(carry, total);
      }
#endif
      __syncthreads();
      for (int j = t; j < n; j += 256) xp_put(a.out + oo + (base + j) * a.so, tile[j]);
      __syncthreads();
    }
  }
}
