// xp's own row reductions (the innermost axis of a C-contiguous matrix of 2^28 / L rows of L
// elements, L = 1024, 4096, 16384), as xp generates them, timed with CUDA events: a warp per row
// with 4, 8 or 16 loads in flight per lane (xp_rows_vec_body<R0, D>; xp_rows_vec is xp's choice,
// rows_vec_loads) and a block per row (xp_rows_tile). Every row is one unit (more rows than resident
// warps: one split), so each kernel writes its outputs itself. One line per choice and length, twice.
//
//   nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -I. -DELEM='(float)(v % 1000) * 1e-3f + 1.0f' -DOUT_BYTES=4 \
//       -o xp_row_kernels bench/nvcc/xp_row_kernels.cu && ./xp_row_kernels
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "timing.cuh"

#include "xp_reduce.cuh"

extern "C" __global__ void __launch_bounds__(256) warp4(const Args a) {
  xp_rows_vec_body<R0, 4>(a);
}
extern "C" __global__ void __launch_bounds__(256) warp8(const Args a) {
  xp_rows_vec_body<R0, 8>(a);
}
extern "C" __global__ void __launch_bounds__(256) warp16(const Args a) {
  xp_rows_vec_body<R0, 16>(a);
}

namespace {

const long long kElements = 1LL << 28;
void *in, *out;

struct Choice {
  const char* name;
  void (*kernel)(const Args);
  bool tile;
};

void run(const Choice& c, long long L) {
  const long long M = kElements / L;
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
  a.kin[0] = L * sizeof(S);
  a.kout[0] = OUT_BYTES;
  a.rshape[0] = L;
  a.rin[0] = sizeof(S);
  const unsigned grid = (unsigned)std::min<long long>(c.tile ? M : (M + 7) / 8, 1 << 20);
  const double ms = median_ms([&] { c.kernel<<<grid, 256>>>(a); }, 3, 9);
  int occ = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c.kernel, 256, 0));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, c.kernel));
  std::vector<unsigned char> h(M * OUT_BYTES);
  CHECK(cudaMemcpy(h.data(), out, h.size(), cudaMemcpyDeviceToHost));
  unsigned long long sum = 1469598103934665603ULL;  // FNV-1a of the output bytes
  for (unsigned char b : h) sum = (sum ^ b) * 1099511628211ULL;
  std::printf("rows of %6lld  %-10s regs %3d  occupancy %d  %.4f ms  %4.0f GB/s  output %016llx\n", L, c.name,
              attr.numRegs, occ, ms, (double)(kElements * sizeof(S)) / ms / 1e6, sum);
}

}  // namespace

int main() {
  std::vector<S> h(kElements);
  for (long long i = 0; i < kElements; ++i) {
    const unsigned v = (unsigned)((i * 2654435761ULL) >> 7);
    h[i] = ELEM;
  }
  CHECK(cudaMalloc(&in, kElements * sizeof(S)));
  CHECK(cudaMemcpy(in, h.data(), kElements * sizeof(S), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&out, (kElements / 1024) * 16));
  std::printf("rows of 2^28 %zu-byte elements\n", sizeof(S));
  const Choice choices[] = {{"warp4", warp4, false},
                            {"warp8", warp8, false},
                            {"warp16", warp16, false},
                            {"xp_rows_vec", xp_rows_vec, false},
                            {"xp_rows_tile", xp_rows_tile, true}};
  for (int rep = 0; rep < 2; ++rep)
    for (long long L : {1024LL, 4096LL, 16384LL})
      for (const Choice& c : choices) run(c, L);
  return 0;
}
