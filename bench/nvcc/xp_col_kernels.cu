// xp's own column reductions (over axis 0 of a 16384 x 16384 C-contiguous matrix), as xp generates
// them, timed with CUDA events: the scalar kernel (a thread per output, xp_cols) and the kernel in
// vectors (a thread per 16 / itemsize adjacent outputs, xp_cols_vec) with 4 or 8 loads in flight and
// 0.5, 1 or 2 threads per resident thread, each followed by the finish kernel xp launches. One line
// per choice, twice; "best:" names the fastest. The sum of float32 (xp_reduce.cuh: -DXP_SUM_FLOAT64 or
// -DXP_SUM_FLOAT16 for the others):
//
//   nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -I. -DELEM='(float)(v % 1000) * 1e-3f + 1.0f' -DOUT_BYTES=4 \
//       -o xp_col_kernels bench/nvcc/xp_col_kernels.cu && ./xp_col_kernels
//
// ELEM is the element made of a pseudo-random 32-bit v (its bits, for float16: ELEM='(S)(0x3C00u + (v & 0x3FFu))');
// OUT_BYTES the output element's size.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "timing.cuh"

#define XP_SUM_COLUMNS
#include "xp_reduce.cuh"

extern "C" __global__ void __launch_bounds__(256) vec4(const Args a) {
  xp_cols_vec_body<R0, 4>(a);
}
extern "C" __global__ void __launch_bounds__(256) vec8(const Args a) {
  xp_cols_vec_body<R0, 8>(a);
}

namespace {

const long long kRows = 16384, kCols = 16384;
int sms;
void *in, *out, *part;

struct Choice {
  const char* name;
  void (*kernel)(const Args);
  bool vec;
  double waves;  // threads per resident thread (vectors); the scalar kernel keeps xp's 8192 per SM
};

double run(const Choice& c, std::string& best, double& best_ms) {
  const long long W = 16 / sizeof(S), M = kCols, N = kRows;
  int occ = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c.kernel, 256, 0));
  const long long per_split = c.vec ? M / W : M;  // threads per split
  long long splits = 1;
  if (c.vec) {
    const long long target = (long long)(occ * 256.0 * sms * c.waves);
    splits = std::max(1LL, std::min(target / per_split, (N + 63) / 64));
  } else {
    splits = std::max(1LL, std::min((sms * 8192LL + M - 1) / M, (N + 63) / 64));
  }
  const long long chunk = (N + splits - 1) / splits;
  splits = (N + chunk - 1) / chunk;
  Args a;
  std::memset(&a, 0, sizeof a);
  a.in = (u64)in;
  a.out = (u64)out;
  a.part = (u64)part;
  a.M = M;
  a.N = N;
  a.S = splits;
  a.chunk = chunk;
  a.dof = N;
  a.final_ = splits > 1 ? 0 : 1;
  a.nk = 1;
  a.nr = 1;
  a.kshape[0] = M;
  a.kin[0] = sizeof(S);
  a.kout[0] = OUT_BYTES;
  a.rshape[0] = N;
  a.rin[0] = M * sizeof(S);
  Args f = a;
  f.final_ = 1;
  const unsigned grid = (unsigned)std::min<long long>((per_split * splits + 255) / 256, 1 << 20);
  const bool wide = splits >= 256;
  const auto launch = [&] {
    c.kernel<<<grid, 256>>>(a);
    if (splits > 1) {
      if (wide)
        xp_finish_wide<<<(unsigned)M, 256>>>(f);
      else
        xp_finish<<<(unsigned)((M + 31) / 32), 256>>>(f);
    }
  };
  const double ms = median_ms(launch, 3, 9);
  const double first = median_ms([&] { c.kernel<<<grid, 256>>>(a); }, 3, 9);
  std::vector<unsigned char> h(M * OUT_BYTES);
  CHECK(cudaMemcpy(h.data(), out, h.size(), cudaMemcpyDeviceToHost));
  unsigned long long sum = 1469598103934665603ULL;  // FNV-1a of the output bytes
  for (unsigned char b : h) sum = (sum ^ b) * 1099511628211ULL;
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, c.kernel));
  std::printf(
      "%-7s waves %.1f  regs %3d  occupancy %d  splits %4lld  chunk %5lld  first pass %.4f ms  both %.4f ms  %4.0f "
      "GB/s  output %016llx\n",
      c.name, c.vec ? c.waves : 0.0, attr.numRegs, occ, splits, chunk, first, ms,
      (double)(kRows * kCols * sizeof(S)) / ms / 1e6, sum);
  if (ms < best_ms) {
    best_ms = ms;
    best = std::string(c.name) + (c.vec ? " waves " + std::to_string(c.waves) : "");
  }
  return ms;
}

}  // namespace

int main() {
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t bytes = kRows * kCols * sizeof(S);
  std::vector<S> h(kRows * kCols);
  for (long long i = 0; i < kRows * kCols; ++i) {
    const unsigned v = (unsigned)((i * 2654435761ULL) >> 7);
    h[i] = ELEM;
  }
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&part, 256 << 20));
  CHECK(cudaMalloc(&out, kCols * 16));
  std::printf("axis 0 of %lld x %lld, %zu-byte elements, %d SMs\n", kRows, kCols, sizeof(S), sms);
  const Choice choices[] = {{"scalar", xp_cols, false, 0}, {"vec4", vec4, true, 0.5},
                            {"vec4", vec4, true, 1},       {"vec4", vec4, true, 2},
                            {"vec8", vec8, true, 0.5},     {"vec8", vec8, true, 1},
                            {"vec8", vec8, true, 2},       {"xp_cols_vec", xp_cols_vec, true, 1}};
  std::string best;
  double best_ms = 1e30;
  for (int rep = 0; rep < 2; ++rep)
    for (const Choice& c : choices) run(c, best, best_ms);
  std::printf("best: %s %.4f ms\n", best.c_str(), best_ms);
  return 0;
}
