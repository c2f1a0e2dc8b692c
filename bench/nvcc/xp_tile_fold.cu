// A/B of xp's tile kernel (a block per unit of a whole-array reduction) before and after its loads
// were written once (xp_each_vec, commit 1afe92b): `prefold` is the tile body with the loop as it was
// (four loads in flight, written out), `xp_rows_tile` the kernel as xp generates it now. The same
// plan for both (one unit per resident block, chunks of whole vectors for the 256 threads), each
// followed by xp_finish_wide; alternated, 5 rounds. Outputs must agree bit for bit (the order of
// additions is the same). Written after run 5 of bench/results/2026-12-03-h200-columns, where the
// float64 sum was 7.6% slower than in run 3; not yet run on a GPU. For float32 the two kernels'
// PTX is the same but for names; for float64 it differs in where the loop computes its load addresses.
//
//   nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -I. -DELEM='(double)(v % 1000) * 1e-3 + 1.0' \
//       -o xp_tile_fold bench/nvcc/xp_tile_fold.cu && ./xp_tile_fold
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "timing.cuh"

#define XP_SUM_FLOAT64
#include "xp_reduce.cuh"

// The run of a thread before the fold (reduce_source.cpp at 8e0502f, xp_run_state without the packed ops).
template <class R, int T>
XP_D typename R::St prefold_run(const Args& a, const R& r, i64 io, i64 k0, i64 k1, int t) {
  typedef typename R::St St;
  const int W = (int)(16 / sizeof(S));
  const i64 base = io + k0 * (i64)sizeof(S);
  const i64 nv = (k1 - k0) / W;
  St acc[16 / sizeof(S)];
#pragma unroll
  for (int j = 0; j < W; ++j) acc[j] = r.id();
  i64 i = t;
  for (; i + 3 * T < nv; i += 4 * T) {
    const uint4 x0 = xp_ldv(a, base + i * 16), x1 = xp_ldv(a, base + (i + T) * 16),
                x2 = xp_ldv(a, base + (i + 2 * T) * 16), x3 = xp_ldv(a, base + (i + 3 * T) * 16);
    xp_vec_add(r, acc, x0, k0 + i * W);
    xp_vec_add(r, acc, x1, k0 + (i + T) * W);
    xp_vec_add(r, acc, x2, k0 + (i + 2 * T) * W);
    xp_vec_add(r, acc, x3, k0 + (i + 3 * T) * W);
  }
  for (; i < nv; i += T) xp_vec_add(r, acc, xp_ldv(a, base + i * 16), k0 + i * W);
#pragma unroll
  for (int h = W / 2; h >= 1; h /= 2) {
#pragma unroll
    for (int j = 0; j < h; ++j) acc[j] = r.merge(acc[j], acc[j + h]);
  }
  St st = acc[0];
  for (i64 k = k0 + nv * W + t; k < k1; k += T) r.add(st, xp_ld(a, io + k * (i64)sizeof(S)), k);
  return st;
}

// xp_rows_tile_body (device/reduce_bodies.cuh) with prefold_run for xp_run_state, all else the same.
template <class R>
XP_D void prefold_tile_body(const Args& a) {
  typedef typename R::St St;
  __shared__ St warps[8];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const i64 units = a.M * a.S;
  for (i64 u = blockIdx.x; u < units; u += gridDim.x) {
    const i64 m = u / a.S, k0 = (u - m * a.S) * a.chunk, k1 = xp_min64(a.N, k0 + a.chunk);
    i64 io, oo;
    xp_kept(a, m, io, oo);
    const R r(a, m);
    St st = prefold_run<R, 256>(a, r, io, k0, k1, threadIdx.x);
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
      }
    }
    __syncthreads();
  }
}
extern "C" __global__ void __launch_bounds__(256, 6) prefold(const Args a) {
  prefold_tile_body<R0>(a);
}

int main() {
  const long long n = (1LL << 30) / sizeof(S);
  int sms = 0, occ = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, xp_rows_tile, 256, 0));
  std::vector<S> h(n);
  for (long long i = 0; i < n; ++i) {
    const unsigned v = (unsigned)((i * 2654435761ULL) >> 7);
    h[i] = ELEM;
  }
  void *in, *out, *part;
  CHECK(cudaMalloc(&in, n * sizeof(S)));
  CHECK(cudaMemcpy(in, h.data(), n * sizeof(S), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&part, 16 << 20));
  CHECK(cudaMalloc(&out, 16));
  // xp's plan: one unit per resident block, chunks of whole vectors for the 256 threads.
  const long long g = 256 * (16 / sizeof(S));
  long long S_ = (long long)occ * sms, chunk = (n + S_ - 1) / S_;
  chunk = (chunk + g - 1) / g * g;
  S_ = (n + chunk - 1) / chunk;
  Args a;
  std::memset(&a, 0, sizeof a);
  a.in = (u64)in;
  a.out = (u64)out;
  a.part = (u64)part;
  a.M = 1;
  a.N = n;
  a.S = S_;
  a.chunk = chunk;
  a.dof = n;
  a.nr = 1;
  a.rshape[0] = n;
  a.rin[0] = sizeof(S);
  Args f = a;
  f.final_ = 1;
  std::printf("sum of 1 GiB of %zu-byte elements: %lld units of %lld, occupancy %d blocks/SM, %d SMs\n", sizeof(S), S_,
              chunk, occ, sms);
  unsigned long long bits[2] = {0, 0};
  for (int round = 0; round < 5; ++round) {
    for (int v = 0; v < 2; ++v) {
      const auto launch = [&] {
        if (v == 0)
          prefold<<<(unsigned)S_, 256>>>(a);
        else
          xp_rows_tile<<<(unsigned)S_, 256>>>(a);
        xp_finish_wide<<<1, 256>>>(f);
      };
      const double ms = median_ms(launch, 3, 9);
      unsigned long long b = 0;
      CHECK(cudaMemcpy(&b, out, sizeof(S) < 8 ? 4 : 8, cudaMemcpyDeviceToHost));
      bits[v] = b;
      std::printf("round %d  %-12s %.4f ms  %4.0f GB/s  result bits %016llx\n", round,
                  v == 0 ? "prefold" : "xp_rows_tile", ms, (double)(n * sizeof(S)) / ms / 1e6, b);
    }
  }
  std::printf("same bits: %s\n", bits[0] == bits[1] ? "yes" : "NO");
  return bits[0] == bits[1] ? 0 : 1;
}
