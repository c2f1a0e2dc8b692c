// Sums of short rows (4 and 16 KiB of float32; 2^28 elements in all), where xp's warp-per-row kernel
// trails PyTorch and CuPy (bench/results/2026-12-03-h200-columns, run 5: 0.94x and 0.96x) and the
// loads in flight made no difference (run 4). Two hypotheses, each a variant of xp_rows_vec_body
// (src/backend/cuda/device/reduce_bodies.cuh) timed against xp_rows_vec in the same program:
//   idx      the unit's offsets without 64-bit divisions (one split, one kept axis: m = u), to see
//            what the per-unit index arithmetic (u / S and xp_kept, twice) costs;
//   two      a warp reads two rows before combining either (both runs' loads in flight, then both
//            trees interleaved), to see what the compensated shuffle tree at each row's end costs.
// Each writes the same bits as xp_rows_vec (the order of additions is the same); the program checks.
// Not yet run on a GPU.
//
//   nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -I. -o xp_short_rows bench/nvcc/xp_short_rows.cu && ./xp_short_rows
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "timing.cuh"

#include "xp_reduce.cuh"

namespace {
constexpr int kLoads = 8;  // rows_vec_loads(sum, float32)
}

// One split per row and one kept axis of stride kin[0]: unit u is row u.
template <class R>
XP_D void idx_body(const Args& a) {
  typedef typename R::St St;
  const int lane = threadIdx.x & 31;
  const i64 step = (i64)gridDim.x * 8;
  for (i64 u = (i64)blockIdx.x * 8 + (threadIdx.x >> 5); u < a.M; u += step) {
    const R r(a, u);
    St st = xp_run_state<R, 32, kLoads>(a, r, u * a.kin[0], 0, a.N, lane);
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) st = r.merge(st, R::shfl(st, d));
    if (lane == 0) r.finish(a, u, st, u * a.kout[0]);
  }
}

template <class R>
XP_D void two_body(const Args& a) {
  typedef typename R::St St;
  const int lane = threadIdx.x & 31;
  const i64 step = (i64)gridDim.x * 16;
  for (i64 u = ((i64)blockIdx.x * 8 + (threadIdx.x >> 5)) * 2; u < a.M; u += step) {
    const bool second = u + 1 < a.M;
    const R r0(a, u), r1(a, u + 1);
    St s0 = xp_run_state<R, 32, kLoads>(a, r0, u * a.kin[0], 0, a.N, lane);
    St s1 = second ? xp_run_state<R, 32, kLoads>(a, r1, (u + 1) * a.kin[0], 0, a.N, lane) : r1.id();
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) {
      s0 = r0.merge(s0, R::shfl(s0, d));
      s1 = r1.merge(s1, R::shfl(s1, d));
    }
    if (lane == 0) {
      r0.finish(a, u, s0, u * a.kout[0]);
      if (second) r1.finish(a, u + 1, s1, (u + 1) * a.kout[0]);
    }
  }
}

extern "C" __global__ void __launch_bounds__(256) idx(const Args a) {
  idx_body<R0>(a);
}
extern "C" __global__ void __launch_bounds__(256) two(const Args a) {
  two_body<R0>(a);
}

int main() {
  const long long n = 1LL << 28;
  std::vector<float> h(n);
  for (long long i = 0; i < n; ++i) h[i] = 1.0f + (float)((i * 2654435761ULL) % 1000003) * 1e-6f;
  float *in, *out;
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&out, (n / 1024) * 4));
  int bad = 0;
  for (int round = 0; round < 2; ++round) {
    for (const long long L : {1024LL, 4096LL}) {
      const long long M = n / L;
      Args a;
      std::memset(&a, 0, sizeof a);
      a.in = (u64)in;
      a.out = (u64)out;
      a.M = M;
      a.N = L;
      a.S = 1;
      a.chunk = L;
      a.dof = L;
      a.final_ = 1;
      a.nk = 1;
      a.nr = 1;
      a.kshape[0] = M;
      a.kin[0] = L * 4;
      a.kout[0] = 4;
      a.rshape[0] = L;
      a.rin[0] = 4;
      std::vector<float> want(M), got(M);
      const unsigned grid = (unsigned)std::min<long long>((M + 7) / 8, 1 << 20);
      const unsigned grid2 = (unsigned)std::min<long long>((M + 15) / 16, 1 << 20);
      struct Choice {
        const char* name;
        void (*kernel)(const Args);
        unsigned grid;
      } choices[] = {{"xp_rows_vec", xp_rows_vec, grid}, {"idx", idx, grid}, {"two", two, grid2}};
      for (const Choice& c : choices) {
        const double ms = median_ms([&] { c.kernel<<<c.grid, 256>>>(a); }, 3, 9);
        CHECK(cudaMemcpy(got.data(), out, M * 4, cudaMemcpyDeviceToHost));
        if (c.kernel == xp_rows_vec) want = got;
        const bool same = std::memcmp(want.data(), got.data(), M * 4) == 0;
        bad += same ? 0 : 1;
        std::printf("rows of %5lld  %-12s %.4f ms  %4.0f GB/s  same bits as xp_rows_vec: %s\n", L, c.name, ms,
                    4.0 * n / ms / 1e6, same ? "yes" : "NO");
      }
    }
  }
  return bad == 0 ? 0 : 1;
}
