// Shapes of a whole-array float32 sum on the local GPU, timed with CUDA events: the first pass of
// xp's rows_vector reduction (a warp per split, 16-byte loads, several in flight per lane, a
// compensated or a plain float sum per lane) with a number of splits per resident warp, then the
// finish (one block combining the partial states), each timed apart and together; so that xp's
// plan (src/backend/cuda/reduce_plan.cpp) can take the fastest shape.
//
//   nvcc -O3 -arch=native -o sum_tune sum_tune.cu && ./sum_tune [log2 n = 28]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compensated.cuh"
#include "timing.cuh"

template <bool COMP>
__device__ __forceinline__ void add(St& st, float x) {
  if (COMP) {
    add(st, x);  // the compensated add of compensated.cuh
  } else {
    st.s = __fadd_rn(st.s, x);
  }
}

// Warp u sums elements [u * chunk, min(n, (u + 1) * chunk)) (chunk a multiple of 128).
template <int F, bool COMP>
__global__ void __launch_bounds__(256)
    first(const float* __restrict__ in, long long n, long long chunk, long long units, St* part) {
  const int lane = threadIdx.x & 31;
  for (long long u = (long long)blockIdx.x * 8 + (threadIdx.x >> 5); u < units; u += (long long)gridDim.x * 8) {
    const long long k0 = u * chunk, k1 = min(n, k0 + chunk);
    const uint4* v = (const uint4*)(in + k0);
    const long long nv = (k1 - k0) / 4;
    St acc[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[j] = St{-0.0f, 0.0f};
    long long i = lane;
    for (; i + 32 * (F - 1) < nv; i += 32 * F) {
      uint4 x[F];
#pragma unroll
      for (int f = 0; f < F; ++f) x[f] = __ldg(v + i + 32 * f);
#pragma unroll
      for (int f = 0; f < F; ++f) {
        add<COMP>(acc[0], __uint_as_float(x[f].x));
        add<COMP>(acc[1], __uint_as_float(x[f].y));
        add<COMP>(acc[2], __uint_as_float(x[f].z));
        add<COMP>(acc[3], __uint_as_float(x[f].w));
      }
    }
    for (; i < nv; i += 32) {
      const uint4 x = __ldg(v + i);
      add<COMP>(acc[0], __uint_as_float(x.x));
      add<COMP>(acc[1], __uint_as_float(x.y));
      add<COMP>(acc[2], __uint_as_float(x.z));
      add<COMP>(acc[3], __uint_as_float(x.w));
    }
    St st = merge(merge(acc[0], acc[2]), merge(acc[1], acc[3]));
    for (long long k = k0 + nv * 4 + lane; k < k1; k += 32) add<COMP>(st, in[k]);
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) st = merge(st, shfl(st, d));
    if (lane == 0) part[u] = st;
  }
}

__global__ void __launch_bounds__(256) finish(const St* part, long long S, float* out) {
  __shared__ St w[8];
  St st{-0.0f, 0.0f};
  long long s = threadIdx.x;
  for (; s + 768 < S; s += 1024) {
    const St p0 = part[s], p1 = part[s + 256], p2 = part[s + 512], p3 = part[s + 768];
    st = merge(merge(merge(merge(st, p0), p1), p2), p3);
  }
  for (; s < S; s += 256) st = merge(st, part[s]);
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) st = merge(st, shfl(st, d));
  if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = st;
  __syncthreads();
  if (threadIdx.x == 0) {
    St t = w[0];
    for (int k = 1; k < 8; ++k) t = merge(t, w[k]);
    *out = t.s + t.c;
  }
}

template <class F>
double time_ms(F f) {
  return median_ms(f, 3, 7);
}

int sms;
float *in, *out;
St* part;
long long n;

template <int F, bool COMP>
void row(double per_warp) {
  int blocks_per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, first<F, COMP>, 256, 0));
  const long long resident = (long long)blocks_per_sm * 8 * sms;
  long long units = std::max(1LL, (long long)(resident * per_warp));
  long long chunk = (n + units - 1) / units;
  chunk = (chunk + 127) / 128 * 128;
  units = (n + chunk - 1) / chunk;
  const unsigned grid = (unsigned)((units + 7) / 8);
  const double a = time_ms([&] { first<F, COMP><<<grid, 256>>>(in, n, chunk, units, part); });
  const double b = time_ms([&] { finish<<<1, 256>>>(part, units, out); });
  const double ab = time_ms([&] {
    first<F, COMP><<<grid, 256>>>(in, n, chunk, units, part);
    finish<<<1, 256>>>(part, units, out);
  });
  std::printf(
      "%-5s in flight %d  occupancy %d blocks/SM  units %7lld (%.2f per resident warp)  first %.4f ms "
      "(%4.0f GB/s)  finish %.4f ms  both %.4f ms (%4.0f GB/s)\n",
      COMP ? "comp" : "plain", F, blocks_per_sm, units, per_warp, a, 4.0 * n / a / 1e6, b, ab, 4.0 * n / ab / 1e6);
}

int main(int argc, char** argv) {
  n = 1LL << (argc > 1 ? std::atoi(argv[1]) : 28);
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMemset(in, 0x3c, n * 4));
  CHECK(cudaMalloc(&part, sizeof(St) << 20));
  CHECK(cudaMalloc(&out, 4));
  const double copy = time_ms([&] { CHECK(cudaMemcpyAsync(part, in, 1 << 20, cudaMemcpyDeviceToDevice)); });
  (void)copy;
  std::printf("sum of %lld float32, %d SMs\n", n, sms);
  for (double pw : {0.5, 1.0, 2.0, 4.0}) {
    row<4, true>(pw);
    row<4, false>(pw);
    row<8, true>(pw);
    row<2, true>(pw);
  }
  return 0;
}
