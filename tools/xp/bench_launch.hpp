#pragma once

// `xp bench launch`: one vector_add kernel launched through the raw driver API + NVRTC, through xp
// (empty disk cache, warm disk cache, in-process hit) and as an nvcc-built program, timed the same
// way and checked bit for bit against one CPU reference; then xp's arrays against CuPy and PyTorch
// (a + b, a*b + c, sum, matmul).
//
// The inputs, the references and the checks are defined here, inline and in C++17 with standard
// headers only, because bench/nvcc/vector_add_nvcc.cu includes this header too: every process of
// the benchmark then computes the same bytes.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace xp_cli {

struct BenchLaunchArgs {
  long long n = 0;  // elements per buffer; 0: 2^27 on a GPU, 2^24 for the CPU rows (sum, matmul: kSumN, kMatmulN)
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
  std::string row;  // "raw-child", "xp-child", "array-child" or "raw-first-child"; empty in the parent
  std::string label;
  std::string sizes;  // a sweep: comma-separated sizes
  std::string driver_path, nvrtc_path;
  std::vector<std::string> nvrtc_includes;
  int arch = 0;             // the SM number to compile for (raw child)
  int device = 0;           // the CUDA ordinal (raw child)
  std::string on = "cuda";  // array child: "cuda" or "cpu"
  std::string cubin_dir;    // raw-first child: where its cubin file is kept between processes
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

// ---- The sum and matmul rows ---------------------------------------------------------------------
// Their results depend on the order of the additions, which each library chooses, so they are not
// compared bit for bit: each is checked against a float64 reference of the same input within a
// bound stated here (BoundCheck), and the parent passes the references and the bounds to the Python
// rows, so that every row is held to the same numbers.

constexpr std::uint64_t kSumN = std::uint64_t{1} << 28;  // GPU sum rows: 1 GiB of float32, whatever --n
constexpr int kMatmulN = 8192;                           // GPU matmul rows: 8192 x 8192 times 8192 x 8192
constexpr int kMatmulCpuN = 512;                         // the same rows on the CPU
constexpr int kHostMatmulN = 32;                         // host-cost loop: 32 x 32 matrices (1024 elements)
constexpr int kMatmulSamples = 256;                      // entries of C checked against the reference

// |s - ref| <= kSumRelBound * sum|a|. The input lies in [1, 2), so sum|a| is the sum itself and
// the bound is a relative error of 1e-6, about 17 units of float32 rounding (u = 2^-24): the
// float32 result alone is rounded by up to u, and the rounding errors of a float32 tree of partial
// sums over values of one binade add up like a random walk; simulated on this input, chains of up
// to 2^18 elements per partial sum stay below 4e-7. What the bound catches: a lost or repeated
// block of 270 or more elements, a float32 sum that runs serially (it stops growing near 2^25),
// anything not a sum. The worst case of a float32 sum, (longest chain) * u * sum|a|, is no bound
// here: it grows with the chain each library picks.
constexpr double kSumRelBound = 1e-6;

// Element i of the sum rows' input: 1 plus 23 random mantissa bits, in [1, 2).
inline float sum_input(std::uint64_t i) {
  const std::uint64_t r = mix64((kSeed ^ 0x5a3e7d1c2b4f6089ULL) + 0x9e3779b97f4a7c15ULL * (i + 1));
  const std::uint32_t bits = 0x3f800000u | static_cast<std::uint32_t>(r & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

struct SumReference {
  double sum = 0;      // the float64 sum of the input
  double abs_sum = 0;  // the float64 sum of |input|
};

// A float64 sum in index order. For sum_input it is exact: every value is a multiple of 2^-23 below
// 2, so every partial sum of up to 2^29 of them is a multiple of 2^-23 below 2^30, which float64's 53
// bits hold.
inline SumReference reference_sum(const float* a, std::size_t n) {
  SumReference r;
  for (std::size_t i = 0; i < n; ++i) {
    r.sum += static_cast<double>(a[i]);
    r.abs_sum += std::fabs(static_cast<double>(a[i]));
  }
  return r;
}

// A value checked against its reference: ok when |got - ref| <= bound (a NaN or an infinity
// never is); error is |got - ref|.
struct BoundCheck {
  bool ok = false;
  double error = 0;
  double bound = 0;
};

inline BoundCheck check_bound(double got, double ref, double bound) {
  BoundCheck c;
  c.error = std::fabs(got - ref);
  c.bound = bound;
  c.ok = std::isfinite(got) && c.error <= bound;
  return c;
}

inline BoundCheck check_sum(double got, const SumReference& ref) {
  return check_bound(got, ref.sum, kSumRelBound * ref.abs_sum);
}

// Element i (row-major) of input `which` (0 = A, 1 = B) of the matmul rows. Small integers, so
// that float32 accumulation is exact and the check can be tight:
// - float32: A in [-4095, 4095], B in {-1, 0, 1}. |A| above 2048 needs 12 significant bits, which
//   TF32 (11) does not hold: a TF32 product would be off, and the check would say so.
// - float16: A and B in [-8, 8], exact in float16; C stays far below float16's 65504.
inline float matmul_input(bool half, int which, std::uint64_t i) {
  const std::uint64_t stream = half ? 0x4d3a1f0e2c5b6978ULL : 0x1b2c3d4e5f607182ULL;
  const std::uint64_t r =
      mix64((kSeed ^ stream) + 0x9e3779b97f4a7c15ULL * (2 * i + static_cast<std::uint64_t>(which) + 1));
  const std::uint64_t span = half ? 17 : (which == 0 ? 8191 : 3);
  return static_cast<float>(static_cast<std::int64_t>((r >> 11) % span) - static_cast<std::int64_t>(span / 2));
}

// The bound for one entry C[i][j] = sum over l < k of A[i][l] * B[l][j], `ref` its float64 value
// and `abs_dot` the sum of |A[i][l] * B[l][j]|, for a float32 accumulation (the compute type of
// every matmul row) and an output rounded to float32 or float16 (`half`):
// - when every product is an integer and abs_dot <= 2^24 (`integer_terms`; the inputs above), every
//   partial sum, in any order and with or without FMA, is an integer of at most 2^24 in magnitude,
//   which float32 holds: the accumulation is exact, and only the output's rounding remains,
//   u_out * |ref| (u_out = 2^-24, or 2^-11 for float16);
// - otherwise the bound of a float32 inner product in any order (Higham, Accuracy and Stability of
//   Numerical Algorithms, 3.1), gamma_k * abs_dot with gamma_k = k u / (1 - k u), plus the same
//   output rounding.
inline double matmul_bound(double ref, double abs_dot, std::int64_t k, bool integer_terms, bool half) {
  const double u = std::ldexp(1.0, -24);
  const double u_out = half ? std::ldexp(1.0, -11) : u;
  const double output = u_out * std::fabs(ref);
  if (integer_terms && abs_dot <= std::ldexp(1.0, 24)) return output;
  const double ku = static_cast<double>(k) * u;
  return ku / (1 - ku) * abs_dot + output;
}

// The bound for the TF32 rows (xp's MatmulPrecision::tf32, CuPy's CUPY_TF32=1, PyTorch's allow_tf32),
// on the float32 rows' inputs and against the same float64 reference: each input may be rounded to
// TF32's 11 significant bits, to nearest or by truncation, a relative error below t = 2^-10, so each
// product moves by at most (2t + t^2) |a b|; the rounded products then accumulate in float32 as
// matmul_bound says, over at most (1 + t)^2 sum |a b|. Integer inputs (`integer_inputs`; the inputs
// above) stay integers in TF32 (one of more than 11 bits rounds to a multiple of a power of two), so
// the accumulation is exact while that sum stays within 2^24. What the bound catches: anything that
// is not C with inputs rounded at most so far (a lost block, a float16 accumulation, a wrong entry); a
// float32 result is within it too, as TF32 is permitted, not required.
inline double matmul_tf32_bound(double ref, double abs_dot, std::int64_t k, bool integer_inputs) {
  const double t = std::ldexp(1.0, -10);
  const double inputs = (2 * t + t * t) * abs_dot;
  return inputs + matmul_bound(std::fabs(ref) + inputs, abs_dot * (1 + t) * (1 + t), k, integer_inputs, false);
}

// One checked entry of C.
struct MatmulSample {
  std::int64_t i = 0, j = 0;
  double ref = 0, abs_dot = 0, bound = 0;
};

// The entries checked: the four corners, then random (i, j) from the seed; their float64
// references (exact: integer products, sums far below 2^53) and bounds (matmul_tf32_bound for the
// TF32 rows, `tf32`). a is m x m, b is m x m, row-major.
inline std::vector<MatmulSample> matmul_samples(const float* a, const float* b, std::int64_t m, bool half, int count,
                                                bool tf32 = false) {
  std::vector<MatmulSample> out;
  for (int s = 0; s < count; ++s) {
    MatmulSample e;
    if (s < 4) {
      e.i = (s & 1) ? m - 1 : 0;
      e.j = (s & 2) ? m - 1 : 0;
    } else {
      const std::uint64_t r =
          mix64((kSeed ^ 0x7e57ab1e5a3b1e5ULL) + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(s));
      e.i = static_cast<std::int64_t>((r >> 32) % static_cast<std::uint64_t>(m));
      e.j = static_cast<std::int64_t>((r & 0xffffffffu) % static_cast<std::uint64_t>(m));
    }
    bool integer_terms = true, integer_inputs = true;
    for (std::int64_t l = 0; l < m; ++l) {
      const double x = static_cast<double>(a[e.i * m + l]), y = static_cast<double>(b[l * m + e.j]);
      const double p = x * y;
      e.ref += p;
      e.abs_dot += std::fabs(p);
      integer_terms = integer_terms && p == std::floor(p);
      integer_inputs = integer_inputs && x == std::floor(x) && y == std::floor(y);
    }
    e.bound = tf32 ? matmul_tf32_bound(e.ref, e.abs_dot, m, integer_inputs)
                   : matmul_bound(e.ref, e.abs_dot, m, integer_terms, half);
    out.push_back(e);
  }
  return out;
}

}  // namespace bench

}  // namespace xp_cli
