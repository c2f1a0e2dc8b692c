#pragma once

// `xp bench launch`: one vector_add kernel launched through the raw driver API + NVRTC, through xp
// (empty disk cache, warm disk cache, in-process hit) and as an nvcc-built program, timed the same
// way and checked bit for bit against one CPU reference.
//
// The inputs, the reference and the bit check are defined here, inline and in C++17 with standard
// headers only, because bench/nvcc/vector_add_nvcc.cu includes this header too: every process of
// the benchmark then computes the same bytes.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace xp_cli {

struct BenchLaunchArgs {
  long long n = 0;  // elements per buffer; 0: 2^27 on a GPU, 2^24 for the CPU rows
  int runs = 5;
  std::string json_file;           // write everything here as JSON
  std::string md_file;             // write the tables here as Markdown
  std::string kernel_file;         // bench/kernels/vector_add.cu; empty: look for it
  std::string nvcc_exe;            // the nvcc-built program; empty: look next to the CLI's build folder
  std::string python = "python3";  // runs bench/python/launch_rows.py; "none": no Python rows
  std::string python_rows;         // bench/python/launch_rows.py; empty: look for it
  std::string only;                // comma-separated row ids; empty: every row
  bool cpu = false;                // the CPU rows even where a GPU is usable

  // `xp bench sweep`: n = 2^min_log2 .. 2^max_log2 (capped by free memory).
  int min_log2 = 10, max_log2 = 28;
  std::string csv_file, svg_file;

  // Hidden: what the parent passes to the child processes it starts.
  std::string row;  // "raw-child", "xp-child" or "array-child"; empty in the parent
  std::string label;
  std::string sizes;  // a sweep: comma-separated sizes
  std::string driver_path, nvrtc_path;
  std::vector<std::string> nvrtc_includes;
  int arch = 0;             // the SM number to compile for (raw child)
  int device = 0;           // the CUDA ordinal (raw child)
  std::string on = "cuda";  // array child: "cuda" or "cpu"
};

// Runs the benchmark (or one child row); returns the process exit code.
int bench_launch(const BenchLaunchArgs& args);
// `xp bench sweep`: every row at each size, JSON, CSV and an SVG plot.
int bench_sweep(const BenchLaunchArgs& args);

namespace bench {

constexpr int kBlock = 256;                       // threads per block, every row
constexpr int kWarmups = 3;                       // launches before the timed ones
constexpr int kTimed = 10;                        // launches between the two events
constexpr int kHostN = 1024;                      // elements per launch for the host-cost loop
constexpr int kHostWarmups = 100;                 // untimed launches before it
constexpr int kHostLaunches = 10000;              // launches timed with the host clock
constexpr double kBytesPerElement = 12;           // two floats read, one written
constexpr std::uint64_t kSeed = 0x5eed0fabcdULL;  // fixed: every process makes the same inputs

inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Element i of input `which` (0 = a, 1 = b), a function of (seed, which, i) only: a random sign,
// 23 random mantissa bits and an exponent in [-8, 8]. Never NaN, infinite or subnormal, and a
// sum of two of them is never subnormal either, so flush-to-zero settings cannot matter; the sums
// do round, which the bit check then sees.
inline float input_value(int which, std::uint64_t i) {
  const std::uint64_t r = mix64(kSeed + 0x9e3779b97f4a7c15ULL * (2 * i + static_cast<std::uint64_t>(which) + 1));
  const std::uint32_t sign = static_cast<std::uint32_t>(r >> 63) << 31;
  const std::uint32_t exponent = static_cast<std::uint32_t>(127 - 8 + (r >> 23) % 17) << 23;
  const std::uint32_t bits = sign | exponent | static_cast<std::uint32_t>(r & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// a, b and the reference c = a + b, in float (IEEE addition is exactly rounded everywhere).
inline void make_inputs(float* a, float* b, float* ref, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = input_value(0, i);
    b[i] = input_value(1, i);
    ref[i] = a[i] + b[i];
  }
}

// The third input of the a*b+c rows: the same construction from another stream of the seed.
inline float input_c(std::uint64_t i) {
  const std::uint64_t r = mix64((kSeed ^ 0xc0ffee1234567ULL) + 0x9e3779b97f4a7c15ULL * (i + 1));
  const std::uint32_t sign = static_cast<std::uint32_t>(r >> 63) << 31;
  const std::uint32_t exponent = static_cast<std::uint32_t>(127 - 8 + (r >> 23) % 17) << 23;
  const std::uint32_t bits = sign | exponent | static_cast<std::uint32_t>(r & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The first index where the bits differ, or -1 when all n match.
inline long long first_difference(const float* got, const float* want, std::size_t n) {
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  for (std::size_t start = 0; start < n; start += kChunk) {
    const std::size_t len = n - start < kChunk ? n - start : kChunk;
    if (std::memcmp(got + start, want + start, len * sizeof(float)) == 0) continue;
    for (std::size_t i = start; i < start + len; ++i)
      if (std::memcmp(got + i, want + i, sizeof(float)) != 0) return static_cast<long long>(i);
  }
  return -1;
}

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace bench

}  // namespace xp_cli
