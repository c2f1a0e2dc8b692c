// Run 1's prototype: column reductions (axis 0 of 16384 x 16384), xp's scalar kernel of the time
// (xp_cols, states at part[m * S + s]) against threads taking 16 / itemsize adjacent outputs as one
// 16-byte vector per row (L = 2, 4, 8 in flight), with the states at part[m * S + s] (v2, v4, v8;
// finished by xp's finish kernels) or at part[s * M + m] (v4c, v8c; finished by fin_cols, a thread
// per output). "tgt/SM": threads per multiprocessor the splits aim at. Built by
//   nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -DXP_SRC='"xp_sum_float32.cuh"' \
//        -DHOSTVAL='(float)(v % 1000) * 1e-3f + 1.0f' -DOUTSZ=4 -o cols_sum_f32 cols_prototype.cu
// with XP_SRC the output of `xp_dump_reduce_source sum float32 columns` at commit 8e0502f
// (max float32: HOSTVAL '(float)(v % 100003) * 1e-3f'; sum float16: '(S)(0x3C00u + (v & 0x3FFu))',
// OUTSZ 2; max int8: '(S)(v & 0xFFu)', OUTSZ 1) and bench/nvcc/timing.cuh on the include path.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "timing.cuh"
#include XP_SRC

template <class R, int L, int PL> XP_D void cols_vec_body(const Args& a) {
  typedef typename R::St St;
  const int W = (int)(16 / sizeof(S));
  const i64 groups = a.M / W;
  const i64 units = groups * a.S, step = (i64)gridDim.x * blockDim.x;
  const i64 s0 = a.rin[0];
  for (i64 u = (i64)blockIdx.x * blockDim.x + threadIdx.x; u < units; u += step) {
    const i64 s = u / groups, g = u - s * groups, m0 = g * W;
    const i64 k0 = s * a.chunk, k1 = xp_min64(a.N, k0 + a.chunk);
    i64 io, oo;
    xp_kept(a, m0, io, oo);
    const R r(a, m0);
    St acc[16 / sizeof(S)];
#pragma unroll
    for (int j = 0; j < W; ++j) acc[j] = r.id();
    i64 off = io + k0 * s0, k = k0;
    for (; k + L <= k1; k += L, off += L * s0) {
      uint4 x[L];
#pragma unroll
      for (int e = 0; e < L; ++e) x[e] = xp_ldv(a, off + e * s0);
#pragma unroll
      for (int e = 0; e < L; ++e) {
        union { uint4 v; S e[16 / sizeof(S)]; } w;
        w.v = x[e];
#pragma unroll
        for (int j = 0; j < W; ++j) r.add(acc[j], w.e[j], k + e);
      }
    }
    for (; k < k1; ++k, off += s0) {
      union { uint4 v; S e[16 / sizeof(S)]; } w;
      w.v = xp_ldv(a, off);
#pragma unroll
      for (int j = 0; j < W; ++j) r.add(acc[j], w.e[j], k);
    }
#pragma unroll
    for (int j = 0; j < W; ++j) {
      if (PL == 0) ((St*)a.part)[(m0 + j) * a.S + s] = acc[j];
      else ((St*)a.part)[s * a.M + m0 + j] = acc[j];
    }
  }
}
template <class R> XP_D void finish_cols_body(const Args& a) {
  typedef typename R::St St;
  const i64 step = (i64)gridDim.x * blockDim.x;
  for (i64 m = (i64)blockIdx.x * blockDim.x + threadIdx.x; m < a.M; m += step) {
    const R r(a, m);
    const St* part = (const St*)a.part + m;
    St st = r.id();
    i64 s = 0;
    for (; s + 4 <= a.S; s += 4) {
      const St p0 = part[s * a.M], p1 = part[(s + 1) * a.M], p2 = part[(s + 2) * a.M], p3 = part[(s + 3) * a.M];
      st = r.merge(st, p0); st = r.merge(st, p1); st = r.merge(st, p2); st = r.merge(st, p3);
    }
    for (; s < a.S; ++s) st = r.merge(st, part[s * a.M]);
    i64 io, oo;
    xp_kept(a, m, io, oo);
    r.finish(a, m, st, oo);
  }
}
#define K(name, L, PL) extern "C" __global__ void __launch_bounds__(256) name(const Args a) { cols_vec_body<R0, L, PL>(a); }
K(v2, 2, 0) K(v4, 4, 0) K(v8, 8, 0) K(v4c, 4, 1) K(v8c, 8, 1)
extern "C" __global__ void __launch_bounds__(256) fin_cols(const Args a) { finish_cols_body<R0>(a); }

int sms;
const long long R_ = 16384, C_ = 16384;
void *in, *out, *part;

struct Variant { const char* name; void (*k)(const Args); bool vec; int pl; long long target_per_sm; };

std::vector<unsigned char> ref;
bool same_as_ref(size_t bytes) {
  std::vector<unsigned char> h(bytes);
  CHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
  if (ref.empty()) { ref = h; return true; }
  return h == ref;
}

double run(const Variant& v, size_t obytes) {
  const int W = 16 / sizeof(S);
  const long long M = C_, N = R_;
  const long long target = sms * v.target_per_sm;
  const long long cols = v.vec ? M / W : M;
  long long Sp = std::max(1LL, std::min((target + cols - 1) / cols, (N + 63) / 64));
  long long chunk = (N + Sp - 1) / Sp;
  Sp = (N + chunk - 1) / chunk;
  Args a; std::memset(&a, 0, sizeof a);
  a.in = (u64)in; a.out = (u64)out; a.part = (u64)part;
  a.M = M; a.N = N; a.S = Sp; a.chunk = chunk; a.dof = N; a.final_ = 0; a.nk = 1; a.nr = 1;
  a.kshape[0] = M; a.kin[0] = sizeof(S); a.kout[0] = obytes / M;
  a.rshape[0] = N; a.rin[0] = M * sizeof(S);
  Args f = a; f.final_ = 1;
  const long long units = cols * Sp;
  const unsigned grid = (unsigned)std::min<long long>((units + 255) / 256, 1 << 20);
  auto launch = [&] {
    v.k<<<grid, 256>>>(a);
    if (v.pl == 1) fin_cols<<<(unsigned)((M + 255) / 256), 256>>>(f);
    else if (Sp >= 256) xp_finish_wide<<<(unsigned)M, 256>>>(f);
    else xp_finish<<<(unsigned)((M + 7) / 8), 256>>>(f);
  };
  const double ms = median_ms(launch, 3, 9);
  const double first = median_ms([&] { v.k<<<grid, 256>>>(a); }, 3, 9);
  cudaFuncAttributes attr; CHECK(cudaFuncGetAttributes(&attr, v.k));
  int occ = 0; CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, v.k, 256, 0));
  CHECK(cudaMemset(out, 0, obytes)); launch(); CHECK(cudaDeviceSynchronize());
  std::printf("%-6s tgt/SM %5lld S %4lld chunk %5lld regs %3d occ %d  first %.4f ms  both %.4f ms  %4.0f GB/s  same_as_first %d\n",
              v.name, v.target_per_sm, Sp, chunk, attr.numRegs, occ, first, ms, R_ * C_ * sizeof(S) / ms / 1e6, (int)same_as_ref(obytes));
  return ms;
}

int main() {
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t bytes = R_ * C_ * sizeof(S);
  std::vector<S> h(R_ * C_);
  for (long long i = 0; i < R_ * C_; ++i) { const unsigned v = (unsigned)((i * 2654435761ULL) >> 7); h[i] = HOSTVAL; }
  CHECK(cudaMalloc(&in, bytes)); CHECK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&part, 256 << 20)); CHECK(cudaMalloc(&out, C_ * 16));
  const size_t obytes = C_ * OUTSZ;
  std::printf("%s over axis 0 of %lld x %lld, %zu-byte elements, %d SMs\n", XP_SRC, R_, C_, sizeof(S), sms);
  const Variant vs[] = {
    {"scalar", xp_cols, false, 0, 8192},
    {"v4", v4, true, 0, 2048}, {"v4", v4, true, 0, 4096}, {"v4", v4, true, 0, 8192},
    {"v8", v8, true, 0, 1024}, {"v8", v8, true, 0, 2048}, {"v8", v8, true, 0, 4096},
    {"v2", v2, true, 0, 2048}, {"v2", v2, true, 0, 4096},
    {"v4c", v4c, true, 1, 2048}, {"v4c", v4c, true, 1, 4096},
    {"v8c", v8c, true, 1, 2048}, {"v8c", v8c, true, 1, 4096},
  };
  for (int rep = 0; rep < 2; ++rep) for (const auto& v : vs) run(v, obytes);
}
