// How a whole-array float32 sum should finish on the local GPU, timed with CUDA events against
// cub::DeviceReduce::Sum (what CuPy runs for a full sum) in the same program:
//   two      the first pass writes one compensated state per warp, a second kernel of one block
//            combines them (xp's shape before this program);
//   last     one kernel: each block combines its warps' states in a fixed order, and the block that
//            finishes last (an integer ticket, no float atomics) combines the blocks' states in
//            block order, so the bits do not depend on which block is last;
//   pdl      as `two`, the second kernel launched with programmatic stream serialization (it is
//            scheduled while the first pass drains and waits at griddepcontrol.wait);
// each with 4 or 8 16-byte loads in flight per lane, plain loads or loads with the
// L2::256B prefetch hint, and one or one half split per resident warp. Every variant's value is
// checked against the others (same order => same bits where the order is the same).
//
//   tile-*   a unit read by a whole block (thread t takes vectors t, t + 256, ...), one contiguous
//            run per block as cub::DeviceReduce reads, with one, two or five units per resident
//            block, finished by a second kernel or by the last block;
//
//   nvcc -O3 -arch=sm_90 -o sum_finish sum_finish.cu && ./sum_finish [log2 n = 28] [all]
#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compensated.cuh"
#include "timing.cuh"

template <bool HINT>
__device__ __forceinline__ uint4 load(const uint4* p) {
  if (HINT) {
    uint4 r;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
    return r;
  }
  return __ldg(p);
}

// Warp u's state over elements [u * chunk, min(n, (u + 1) * chunk)), chunk a multiple of 128.
template <int F, bool HINT>
__device__ __forceinline__ St warp_state(const float* __restrict__ in, long long n, long long chunk, long long u) {
  const int lane = threadIdx.x & 31;
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
    for (int f = 0; f < F; ++f) x[f] = load<HINT>(v + i + 32 * f);
#pragma unroll
    for (int f = 0; f < F; ++f) {
      add4(acc, x[f]);
    }
  }
  for (; i < nv; i += 32) {
    const uint4 x = load<HINT>(v + i);
    add4(acc, x);
  }
  St st = merge(merge(acc[0], acc[2]), merge(acc[1], acc[3]));
  for (long long k = k0 + nv * 4 + lane; k < k1; k += 32) add(st, in[k]);
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) st = merge(st, shfl(st, d));
  return st;
}

// States written by other blocks of the same grid: read through L2 (never a stale L1 line).
__device__ __forceinline__ St ld(const St* p) {
  const float2 v = __ldcg(reinterpret_cast<const float2*>(p));
  return St{v.x, v.y};
}

// A block's combination of `count` states read from part (256 threads, fixed order), to thread 0.
__device__ __forceinline__ St block_combine(const St* part, long long count) {
  __shared__ St w[8];
  St st{-0.0f, 0.0f};
  long long s = threadIdx.x;
  for (; s + 768 < count; s += 1024) {
    const St p0 = ld(part + s), p1 = ld(part + s + 256), p2 = ld(part + s + 512), p3 = ld(part + s + 768);
    st = merge(merge(merge(merge(st, p0), p1), p2), p3);
  }
  for (; s < count; s += 256) st = merge(st, ld(part + s));
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) st = merge(st, shfl(st, d));
  if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = st;
  __syncthreads();
  St t = w[0];
  if (threadIdx.x == 0)
    for (int k = 1; k < 8; ++k) t = merge(t, w[k]);
  return t;
}

template <int F, bool HINT, bool PDL>
__global__ void __launch_bounds__(256)
    first(const float* __restrict__ in, long long n, long long chunk, long long units, St* part) {
  if (PDL) asm volatile("griddepcontrol.launch_dependents;");
  for (long long u = (long long)blockIdx.x * 8 + (threadIdx.x >> 5); u < units; u += (long long)gridDim.x * 8) {
    const St st = warp_state<F, HINT>(in, n, chunk, u);
    if ((threadIdx.x & 31) == 0) part[u] = st;
  }
}

template <bool PDL>
__global__ void __launch_bounds__(256) finish(const St* part, long long S, float* out) {
  if (PDL) asm volatile("griddepcontrol.wait;" ::: "memory");
  const St t = block_combine(part, S);
  if (threadIdx.x == 0) *out = t.s + t.c;
}

// One kernel: block b combines its warps' states (units b*8 + w, then + gridDim*8, ...) in order into
// part[b]; the last block to take a ticket combines part[0..gridDim) and resets the ticket.
template <int F, bool HINT>
__global__ void __launch_bounds__(256) last(const float* __restrict__ in, long long n, long long chunk, long long units,
                                            St* part, unsigned* ticket, float* out) {
  __shared__ St w[8];
  __shared__ bool is_last;
  St mine{-0.0f, 0.0f};
  for (long long u0 = (long long)blockIdx.x * 8; u0 < units; u0 += (long long)gridDim.x * 8) {
    const long long u = u0 + (threadIdx.x >> 5);
    St st{-0.0f, 0.0f};
    if (u < units) st = warp_state<F, HINT>(in, n, chunk, u);
    if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = st;
    __syncthreads();
    if (threadIdx.x == 0)
      for (int k = 0; k < 8; ++k) mine = merge(mine, w[k]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    part[blockIdx.x] = mine;
    __threadfence();
    is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  const St t = block_combine(part, gridDim.x);
  if (threadIdx.x == 0) {
    *out = t.s + t.c;
    *ticket = 0;
  }
}

// Block tiles: unit u (elements [u * chunk, ...), chunk a multiple of 256 * 4) is read by a whole block,
// thread t taking vectors t, t + 256, ... (F in flight), so that a block streams one contiguous run
// as cub::DeviceReduce does; the lanes as a tree, then the warps in order.
template <int F>
__device__ __forceinline__ St block_state(const float* __restrict__ in, long long n, long long chunk, long long u) {
  __shared__ St w[8];
  const long long k0 = u * chunk, k1 = min(n, k0 + chunk);
  const uint4* v = (const uint4*)(in + k0);
  const long long nv = (k1 - k0) / 4;
  St acc[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) acc[j] = St{-0.0f, 0.0f};
  long long i = threadIdx.x;
  for (; i + 256 * (F - 1) < nv; i += 256 * F) {
    uint4 x[F];
#pragma unroll
    for (int f = 0; f < F; ++f) x[f] = __ldg(v + i + 256 * f);
#pragma unroll
    for (int f = 0; f < F; ++f) {
      add4(acc, x[f]);
    }
  }
  for (; i < nv; i += 256) {
    const uint4 x = __ldg(v + i);
    add4(acc, x);
  }
  St st = merge(merge(acc[0], acc[2]), merge(acc[1], acc[3]));
  for (long long k = k0 + nv * 4 + threadIdx.x; k < k1; k += 256) add(st, in[k]);
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) st = merge(st, shfl(st, d));
  if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = st;
  __syncthreads();
  St t = w[0];
  if (threadIdx.x == 0)
    for (int k = 1; k < 8; ++k) t = merge(t, w[k]);
  __syncthreads();
  return t;  // thread 0's
}

template <int F>
__global__ void __launch_bounds__(256)
    tile_first(const float* __restrict__ in, long long n, long long chunk, long long units, St* part) {
  for (long long u = blockIdx.x; u < units; u += gridDim.x) {
    const St st = block_state<F>(in, n, chunk, u);
    if (threadIdx.x == 0) part[u] = st;
  }
}

template <int F>
__global__ void __launch_bounds__(256) tile_last(const float* __restrict__ in, long long n, long long chunk,
                                                 long long units, St* part, unsigned* ticket, float* out) {
  __shared__ bool is_last;
  for (long long u = blockIdx.x; u < units; u += gridDim.x) {
    const St st = block_state<F>(in, n, chunk, u);
    if (threadIdx.x == 0) part[u] = st;
  }
  if (threadIdx.x == 0) {
    __threadfence();
    is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  const St t = block_combine(part, units);
  if (threadIdx.x == 0) {
    *out = t.s + t.c;
    *ticket = 0;
  }
}

template <class F>
double time_ms(F f) {
  return median_ms(f, 3, 9);
}

int sms;
float *in, *out;
St* part;
unsigned* ticket;
long long n;
double cub_ms;

float read_out() {
  float v;
  CHECK(cudaMemcpy(&v, out, 4, cudaMemcpyDeviceToHost));
  return v;
}

template <class K>
long long units_for(K kernel, double per_warp, long long* chunk_out, int* occ) {
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(occ, kernel, 256, 0));
  const long long resident = (long long)*occ * 8 * sms;
  long long units = std::max(1LL, (long long)(resident * per_warp));
  long long chunk = (n + units - 1) / units;
  chunk = (chunk + 127) / 128 * 128;
  *chunk_out = chunk;
  return (n + chunk - 1) / chunk;
}

void print(const char* what, int f, bool hint, double per_warp, int occ, long long units, double ms, float v) {
  std::printf("%-4s in flight %d %-5s %.1f split/warp occ %d units %6lld  %.4f ms  %4.0f GB/s  %.3fx cub  sum %.9g\n",
              what, f, hint ? "L2pf" : "plain", per_warp, occ, units, ms, 4.0 * n / ms / 1e6, cub_ms / ms, v);
}

template <int F, bool HINT>
void rows(double per_warp) {
  long long chunk;
  int occ;
  {  // two kernels
    const long long units = units_for(first<F, HINT, false>, per_warp, &chunk, &occ);
    const unsigned grid = (unsigned)((units + 7) / 8);
    const double ms = time_ms([&] {
      first<F, HINT, false><<<grid, 256>>>(in, n, chunk, units, part);
      finish<false><<<1, 256>>>(part, units, out);
    });
    print("two", F, HINT, per_warp, occ, units, ms, read_out());
  }
  {  // programmatic dependent launch of the finish
    const long long units = units_for(first<F, HINT, true>, per_warp, &chunk, &occ);
    const unsigned grid = (unsigned)((units + 7) / 8);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(256);
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    const double ms = time_ms([&] {
      first<F, HINT, true><<<grid, 256>>>(in, n, chunk, units, part);
      CHECK(cudaLaunchKernelEx(&cfg, finish<true>, (const St*)part, units, out));
    });
    print("pdl", F, HINT, per_warp, occ, units, ms, read_out());
  }
  {  // one kernel, the last block finishes
    const long long units = units_for(last<F, HINT>, per_warp, &chunk, &occ);
    const unsigned grid = (unsigned)std::min<long long>((units + 7) / 8, (long long)occ * sms);
    const double ms = time_ms([&] { last<F, HINT><<<grid, 256>>>(in, n, chunk, units, part, ticket, out); });
    print("last", F, HINT, per_warp, occ, units, ms, read_out());
  }
}

// Block tiles with `per_block` units per resident block (chunk a multiple of 1024 elements).
template <int F>
void tiles(double per_block) {
  for (int mode = 0; mode < 2; ++mode) {
    int occ;
    if (mode == 0)
      CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, tile_first<F>, 256, 0));
    else
      CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, tile_last<F>, 256, 0));
    const long long resident = (long long)occ * sms;
    long long units = std::max(1LL, (long long)(resident * per_block));
    long long chunk = (n + units - 1) / units;
    chunk = (chunk + 1023) / 1024 * 1024;
    units = (n + chunk - 1) / chunk;
    const unsigned grid = (unsigned)std::min(units, resident);
    double ms;
    if (mode == 0) {
      ms = time_ms([&] {
        tile_first<F><<<(unsigned)units, 256>>>(in, n, chunk, units, part);
        finish<false><<<1, 256>>>(part, units, out);
      });
    } else {
      ms = time_ms([&] { tile_last<F><<<grid, 256>>>(in, n, chunk, units, part, ticket, out); });
    }
    std::printf(
        "tile-%s in flight %d  %.1f unit/resident block occ %d units %6lld  %.4f ms  %4.0f GB/s  %.3fx cub  sum %.9g\n",
        mode == 0 ? "two " : "last", F, per_block, occ, units, ms, 4.0 * n / ms / 1e6, cub_ms / ms, read_out());
  }
}

int main(int argc, char** argv) {
  n = 1LL << (argc > 1 ? std::atoi(argv[1]) : 28);
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<float> h(n);
  for (long long i = 0; i < n; ++i) h[i] = (float)((i * 2654435761ULL) % 1000003) * 1e-6f - 0.5f;
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&part, sizeof(St) << 20));
  CHECK(cudaMalloc(&out, 4));
  CHECK(cudaMalloc(&ticket, 4));
  CHECK(cudaMemset(ticket, 0, 4));
  double ref = 0;
  for (long long i = 0; i < n; ++i) ref += h[i];
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, n));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  cub_ms = time_ms([&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n)); });
  std::printf("sum of %lld float32, %d SMs, float64 reference %.9g\n", n, sms, ref);
  std::printf("cub::DeviceReduce::Sum  %.4f ms  %4.0f GB/s  sum %.9g\n", cub_ms, 4.0 * n / cub_ms / 1e6, read_out());
  const bool all = argc > 2;
  rows<4, false>(1.0);
  rows<8, false>(1.0);
  for (double pb : {1.0, 2.0, 5.0}) {
    tiles<4>(pb);
    tiles<2>(pb);
    tiles<8>(pb);
  }
  if (all) {
    rows<4, true>(1.0);
    rows<8, true>(1.0);
    for (double pw : {0.5}) {
      rows<4, false>(pw);
      rows<8, false>(pw);
      rows<4, true>(pw);
      rows<8, true>(pw);
    }
  }
  cub_ms = time_ms([&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n)); });
  std::printf("cub::DeviceReduce::Sum again  %.4f ms\n", cub_ms);
  return 0;
}
