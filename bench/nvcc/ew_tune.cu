// Launch shapes of a streaming elementwise kernel on the local GPU: the same add (c = a + b) and
// fused a*b+c (two roundings) in several shapes, timed with CUDA events, so that xp's generated
// kernels (src/backend/cuda/ew_source.cpp) can take the shape that reads and writes fastest.
// Shapes: threads per block, elements per thread (16-byte vectors per view), a grid-stride loop over
// at most `cap` blocks per multiprocessor or one chunk per thread (cap 0), and cache hints
// (plain, or __ldcs/__stcs: evict-first streaming accesses).
//
//   nvcc -O3 -arch=native -o ew_tune ew_tune.cu && ./ew_tune [log2 n = 27]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "timing.cuh"

template <int HINT>
__device__ __forceinline__ float4 ld(const float4* p) {
  if constexpr (HINT == 1)
    return __ldcs(p);
  else if constexpr (HINT == 2)
    return __ldlu(p);
  else
    return *p;
}
template <int HINT>
__device__ __forceinline__ void st(float4* p, float4 v) {
  if constexpr (HINT == 1)
    __stcs(p, v);
  else if constexpr (HINT == 2)
    __stcs(p, v);
  else
    *p = v;
}

// OP 0: c = a + b; OP 1: d = a * b + c, rounded twice. V = float4 vectors per view per thread.
template <int OP, int V, int HINT>
__global__ void ew(const float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                   float4* __restrict__ d, unsigned nv, unsigned step) {
  for (unsigned base = (blockIdx.x * blockDim.x + threadIdx.x) * V; base < nv; base += step) {
    float4 x[V], y[V], z[V];
#pragma unroll
    for (int j = 0; j < V; ++j) {
      x[j] = ld<HINT>(a + base + j);
      y[j] = ld<HINT>(b + base + j);
      if (OP == 1) z[j] = ld<HINT>(c + base + j);
    }
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float4 r;
      if (OP == 0) {
        r.x = __fadd_rn(x[j].x, y[j].x);
        r.y = __fadd_rn(x[j].y, y[j].y);
        r.z = __fadd_rn(x[j].z, y[j].z);
        r.w = __fadd_rn(x[j].w, y[j].w);
      } else {
        r.x = __fadd_rn(__fmul_rn(x[j].x, y[j].x), z[j].x);
        r.y = __fadd_rn(__fmul_rn(x[j].y, y[j].y), z[j].y);
        r.z = __fadd_rn(__fmul_rn(x[j].z, y[j].z), z[j].z);
        r.w = __fadd_rn(__fmul_rn(x[j].w, y[j].w), z[j].w);
      }
      st<HINT>(d + base + j, r);
    }
  }
}

// The layout of the vectors: V consecutive vectors per thread (above), or V vectors a block apart
// (warp-contiguous: each access instruction of a warp covers 512 consecutive bytes).
template <int OP, int V, int HINT>
__global__ void ew_spread(const float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                          float4* __restrict__ d, unsigned nv, unsigned step) {
  for (unsigned base = blockIdx.x * blockDim.x * V + threadIdx.x; base < nv; base += step) {
    float4 x[V], y[V], z[V];
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const unsigned i = base + j * blockDim.x;
      x[j] = ld<HINT>(a + i);
      y[j] = ld<HINT>(b + i);
      if (OP == 1) z[j] = ld<HINT>(c + i);
    }
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float4 r;
      if (OP == 0) {
        r.x = __fadd_rn(x[j].x, y[j].x);
        r.y = __fadd_rn(x[j].y, y[j].y);
        r.z = __fadd_rn(x[j].z, y[j].z);
        r.w = __fadd_rn(x[j].w, y[j].w);
      } else {
        r.x = __fadd_rn(__fmul_rn(x[j].x, y[j].x), z[j].x);
        r.y = __fadd_rn(__fmul_rn(x[j].y, y[j].y), z[j].y);
        r.z = __fadd_rn(__fmul_rn(x[j].z, y[j].z), z[j].z);
        r.w = __fadd_rn(__fmul_rn(x[j].w, y[j].w), z[j].w);
      }
      st<HINT>(d + base + j * blockDim.x, r);
    }
  }
}

struct Buffers {
  float4 *a, *b, *c, *d;
  unsigned nv;
};

template <class Launch>
double time_ms(Launch launch) {
  return median_ms(launch, 5, 7);
}

int sms = 0;

template <int OP, int V, int HINT, bool SPREAD>
void row(const Buffers& B, int block, int cap, double bytes) {
  const unsigned per_block = block * V;
  unsigned blocks = (B.nv + per_block - 1) / per_block;
  if (cap > 0) blocks = std::min<unsigned>(blocks, sms * cap);
  const unsigned step = blocks * per_block;
  const double ms = time_ms([&] {
    if (SPREAD)
      ew_spread<OP, V, HINT><<<blocks, block>>>(B.a, B.b, B.c, B.d, B.nv, step);
    else
      ew<OP, V, HINT><<<blocks, block>>>(B.a, B.b, B.c, B.d, B.nv, step);
  });
  std::printf("%-4s block %4d  vec/thread %2d  %-7s cap %3d (grid %7u)  hint %-6s  %.4f ms  %6.0f GB/s\n",
              OP == 0 ? "add" : "fma", block, V, SPREAD ? "spread" : "consec", cap, blocks,
              HINT == 0   ? "plain"
              : HINT == 1 ? "cs"
                          : "lu/cs",
              ms, bytes / ms / 1e6);
}

template <int OP>
void sweep(const Buffers& B) {
  const double bytes = double(B.nv) * 16 * (OP == 0 ? 3 : 4);
  for (int block : {128, 256, 512}) {
    for (int cap : {0, 4, 8, 16, 32}) {
      row<OP, 1, 0, false>(B, block, cap, bytes);
      row<OP, 2, 0, false>(B, block, cap, bytes);
      row<OP, 2, 0, true>(B, block, cap, bytes);
      row<OP, 4, 0, true>(B, block, cap, bytes);
    }
  }
  for (int block : {128, 256}) {
    for (int cap : {0, 8, 32}) {
      row<OP, 1, 1, false>(B, block, cap, bytes);
      row<OP, 2, 1, true>(B, block, cap, bytes);
      row<OP, 2, 2, true>(B, block, cap, bytes);
    }
  }
}

int main(int argc, char** argv) {
  const int lg = argc > 1 ? std::atoi(argv[1]) : 27;
  const size_t n = size_t(1) << lg;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Buffers B;
  B.nv = unsigned(n / 4);
  CHECK(cudaMalloc(&B.a, n * 4));
  CHECK(cudaMalloc(&B.b, n * 4));
  CHECK(cudaMalloc(&B.c, n * 4));
  CHECK(cudaMalloc(&B.d, n * 4));
  CHECK(cudaMemset(B.a, 0x3c, n * 4));
  CHECK(cudaMemset(B.b, 0x3d, n * 4));
  CHECK(cudaMemset(B.c, 0x3e, n * 4));
  const double copy = time_ms([&] { CHECK(cudaMemcpyAsync(B.d, B.a, n * 4, cudaMemcpyDeviceToDevice)); });
  std::printf("n = 2^%d float32, %d SMs; cudaMemcpy D2D %.4f ms %6.0f GB/s\n", lg, sms, copy, 2.0 * n * 4 / copy / 1e6);
  sweep<0>(B);
  sweep<1>(B);
  return 0;
}
