// xp's own float32 sum kernels, as xp generates them, timed with CUDA events against
// cub::DeviceReduce::Sum in the same program: the first pass with a warp per unit (xp_rows_vec) or a
// block per unit (xp_rows_tile, as xp compiles it, and again with no minimum of resident blocks and
// with at least 8), one unit per resident warp or block as xp plans, then the finish kernel xp
// launches (xp_finish_wide for 256 states or more). One line per shape, twice; the line
// "best: <name>" names the fastest. (bench/results/2026-12-03-h200-medians/xp_sum_kernels.txt was
// taken when xp's tile kernel had no minimum: its "tile" is today's tile_nomin, its "tile_min6"
// today's "tile".)
//
//   nvcc -O3 -arch=sm_90 --fmad=false -I. -o xp_sum_kernels bench/nvcc/xp_sum_kernels.cu && ./xp_sum_kernels [log2 n =
//   28]
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "timing.cuh"

#include "xp_reduce.cuh"

extern "C" __global__ void __launch_bounds__(256) tile_nomin(const Args a) {
  xp_rows_tile_body<R0>(a);
}
extern "C" __global__ void __launch_bounds__(256, 8) tile_min8(const Args a) {
  xp_rows_tile_body<R0>(a);
}
extern "C" __global__ void __launch_bounds__(256, 6) vec_min6(const Args a) {
  xp_rows_vec_body<R0, 8>(a);
}

template <class F>
double time_ms(F f) {
  return median_ms(f, 3, 9);
}

int sms;
long long n;
float *in, *out;
void* part;

float read_out() {
  float v;
  CHECK(cudaMemcpy(&v, out, 4, cudaMemcpyDeviceToHost));
  return v;
}

struct Shape {
  const char* name;
  void (*kernel)(const Args);
  bool tiles;
};

// xp's plan for one output of n contiguous float32 (reduce_plan.cpp, plan_reduce) with the
// kernel's occupancy: one unit per resident warp (or block, tiles), at least 2048 elements each,
// chunks of whole vectors for the 32 lanes (or 256 threads).
double run(const Shape& s, double cub_ms, std::string& best, double& best_ms) {
  int occ = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, s.kernel, 256, 0));
  const long long target = s.tiles ? (long long)occ * sms : (long long)occ * 8 * sms;
  long long S = std::max(1LL, std::min(target, (n + 2047) / 2048));
  const long long g = s.tiles ? 1024 : 128;
  long long chunk = (n + S - 1) / S;
  chunk = (chunk + g - 1) / g * g;
  S = (n + chunk - 1) / chunk;
  Args a;
  std::memset(&a, 0, sizeof a);
  a.in = (u64)in;
  a.out = (u64)out;
  a.part = (u64)part;
  a.M = 1;
  a.N = n;
  a.S = S;
  a.chunk = chunk;
  a.dof = n;
  a.final_ = S > 1 ? 0 : 1;
  a.nk = 0;
  a.nr = 1;
  a.rshape[0] = n;
  a.rin[0] = 4;
  Args f = a;
  f.final_ = 1;
  const unsigned grid = (unsigned)(s.tiles ? S : (S + 7) / 8);
  const bool wide = S >= 256;
  const double ms = time_ms([&] {
    s.kernel<<<grid, 256>>>(a);
    if (S > 1) {
      if (wide)
        xp_finish_wide<<<1, 256>>>(f);
      else
        xp_finish<<<1, 256>>>(f);
    }
  });
  const double first = time_ms([&] { s.kernel<<<grid, 256>>>(a); });
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, s.kernel));
  std::printf(
      "%-10s regs %3d stack %3zu  occupancy %d blocks/SM  units %5lld  first %.4f ms  both %.4f ms  %4.0f GB/s  "
      "%.3fx cub  sum %.9g\n",
      s.name, attr.numRegs, attr.localSizeBytes, occ, S, first, ms, 4.0 * n / ms / 1e6, cub_ms / ms, read_out());
  if (ms < best_ms) {
    best_ms = ms;
    best = s.name;
  }
  return ms;
}

int main(int argc, char** argv) {
  n = 1LL << (argc > 1 ? std::atoi(argv[1]) : 28);
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<float> h(n);
  for (long long i = 0; i < n; ++i) h[i] = 1.0f + (float)((i * 2654435761ULL) % 1000003) * 1e-6f;
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&part, 16 << 20));
  CHECK(cudaMalloc(&out, 4));
  double ref = 0;
  for (long long i = 0; i < n; ++i) ref += h[i];
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, n));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  const double cub_ms = time_ms([&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n)); });
  std::printf("sum of %lld float32, %d SMs, float64 reference %.9g\n", n, sms, ref);
  std::printf("cub::DeviceReduce::Sum  %.4f ms  %4.0f GB/s  sum %.9g\n", cub_ms, 4.0 * n / cub_ms / 1e6, read_out());
  const Shape shapes[] = {{"vec", xp_rows_vec, false},
                          {"vec_min6", vec_min6, false},
                          {"tile", xp_rows_tile, true},
                          {"tile_nomin", tile_nomin, true},
                          {"tile_min8", tile_min8, true}};
  std::string best;
  double best_ms = 1e30;
  for (int rep = 0; rep < 2; ++rep)
    for (const Shape& s : shapes) run(s, cub_ms, best, best_ms);
  const double cub_again = time_ms([&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n)); });
  std::printf("cub::DeviceReduce::Sum again  %.4f ms\n", cub_again);
  std::printf("best: %s %.4f ms\n", best.c_str(), best_ms);
  return 0;
}
