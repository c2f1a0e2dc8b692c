// xp's CPU matmul against OpenBLAS called directly (cblas_sgemm / cblas_dgemm, opened with dlopen
// as xp opens it: the same library instance and thread count), on the same buffers in the same
// run. Square sizes 256, 1024, 2048 in float32 and float64: medians of 5 runs (min..max) after a
// warm-up, and the ratio xp / OpenBLAS (1.00 = no overhead). Then xp's own loop (the fallback
// without OpenBLAS) on the smaller sizes, and batches of small matrices, where xp runs its loop
// over the batch on its threads instead of one BLAS call per matrix. White-box: links xp's objects.
//
//   xp_bench_cpu_matmul [--quick] [--threads N]
//     --quick: sizes 256 and 1024 only; --threads: xp's thread count (and so OpenBLAS's) for this run
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend/cpu/blas.hpp"
#include "backend/cpu/linalg.hpp"
#include "runtime/dynlib.hpp"
#include "runtime/parallel.hpp"
#include "xp/version.hpp"

namespace {

namespace cpu = xp::detail::cpu;
using Clock = std::chrono::steady_clock;
using i64 = std::int64_t;

struct Stats {
  double median, min, max;  // milliseconds
};

Stats stats(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

double time_ms(const std::function<void()>& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Times `base` and `xp` alternately (each warmed up once), `reps` runs each.
std::pair<Stats, Stats> compare(const std::function<void()>& base, const std::function<void()>& xp, int reps) {
  base();
  xp();
  std::vector<double> tb, tx;
  for (int r = 0; r < reps; ++r) {
    tb.push_back(time_ms(base));
    tx.push_back(time_ms(xp));
  }
  return {stats(tb), stats(tx)};
}

template <class T>
void fill(std::vector<T>& v, std::uint64_t seed) {
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (T& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<T>(static_cast<double>(s >> 11) * 0x1p-52 - 1.0);
  }
}

// A C-contiguous view of `shape` over `data`.
struct Contig {
  std::vector<i64> shape, strides;
  xp::detail::View view(void* data, xp::DType t) {
    strides.assign(shape.size(), 0);
    i64 s = static_cast<i64>(xp::itemsize(t));
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      strides[d] = s;
      s *= shape[d];
    }
    return {static_cast<std::byte*>(data), t, static_cast<int>(shape.size()), shape.data(), strides.data()};
  }
};

// Largest |x - y| / max(|y|, 1) over the arrays (0 when bit for bit the same).
template <class T>
double max_diff(const std::vector<T>& x, const std::vector<T>& y) {
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    d = std::max(d, std::fabs(static_cast<double>(x[i]) - y[i]) / std::max(1.0, std::fabs(static_cast<double>(y[i]))));
  return d;
}

void row(const char* what, const char* dtype, const std::string& size, const std::pair<Stats, Stats>& s, double diff) {
  const auto& [b, x] = s;
  std::printf("%-10s %-8s %-14s %9.3f [%8.3f..%8.3f] %9.3f [%8.3f..%8.3f] %7.2f   %s\n", what, dtype, size.c_str(),
              b.median, b.min, b.max, x.median, x.min, x.max, x.median / b.median,
              diff == 0 ? "same bits" : ("max rel diff " + std::to_string(diff)).c_str());
}

struct Direct {
  cpu::CblasSgemm sgemm;
  cpu::CblasDgemm dgemm;
  void gemm(int m, int n, int k, const float* a, const float* b, float* c) const {
    sgemm(cpu::kCblasRowMajor, cpu::kCblasNoTrans, cpu::kCblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  }
  void gemm(int m, int n, int k, const double* a, const double* b, double* c) const {
    dgemm(cpu::kCblasRowMajor, cpu::kCblasNoTrans, cpu::kCblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
  }
};

template <class T>
void square(const Direct& blas, const char* what, cpu::GemmPath path, int n) {
  constexpr xp::DType t = sizeof(T) == 4 ? xp::DType::float32 : xp::DType::float64;
  std::vector<T> a(static_cast<std::size_t>(n) * n), b(a.size()), c_ref(a.size()), c_xp(a.size());
  fill(a, 1);
  fill(b, 2);
  Contig ca{{n, n}, {}}, cb{{n, n}, {}}, cc{{n, n}, {}};
  const auto va = ca.view(a.data(), t), vb = cb.view(b.data(), t), vc = cc.view(c_xp.data(), t);
  cpu::set_gemm_path(path);
  const auto s =
      compare([&] { blas.gemm(n, n, n, a.data(), b.data(), c_ref.data()); }, [&] { cpu::matmul(va, vb, vc); }, 5);
  cpu::set_gemm_path(cpu::GemmPath::automatic);
  row(what, sizeof(T) == 4 ? "float32" : "float64", std::to_string(n) + "^2", s, max_diff(c_xp, c_ref));
}

void batched(const Direct& blas, const char* what, cpu::GemmPath path, int batch, int n) {
  std::vector<float> a(static_cast<std::size_t>(batch) * n * n), b(a.size()), c_ref(a.size()), c_xp(a.size());
  fill(a, 3);
  fill(b, 4);
  Contig ca{{batch, n, n}, {}}, cb{{batch, n, n}, {}}, cc{{batch, n, n}, {}};
  const auto va = ca.view(a.data(), xp::DType::float32), vb = cb.view(b.data(), xp::DType::float32),
             vc = cc.view(c_xp.data(), xp::DType::float32);
  const std::size_t mat = static_cast<std::size_t>(n) * n;
  cpu::set_gemm_path(path);
  const auto s = compare(
      [&] {
        for (int i = 0; i < batch; ++i)
          blas.gemm(n, n, n, a.data() + i * mat, b.data() + i * mat, c_ref.data() + i * mat);
      },
      [&] { cpu::matmul(va, vb, vc); }, 5);
  cpu::set_gemm_path(cpu::GemmPath::automatic);
  row(what, "float32", std::to_string(batch) + "x" + std::to_string(n) + "^2", s, max_diff(c_xp, c_ref));
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      xp::detail::set_num_threads(std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--threads N]\n", argv[0]);
      return 2;
    }
  }
  std::printf("xp %s, source %s\n", std::string(xp::version()).c_str(), std::string(xp::source_hash()).c_str());
  // xp opens OpenBLAS first, choosing its kernels as in any program (OPENBLAS_CORETYPE is read at
  // load); the direct calls then use the same instance.
  const cpu::BlasInfo info = cpu::blas_info();
  xp::detail::DynLib lib = xp::detail::DynLib::open("libopenblas.so.0");
  if (!lib.ok()) lib = xp::detail::DynLib::open("libopenblas.so");
  if (!lib.ok() || !info.loaded) {
    std::printf("skipped: no OpenBLAS (%s)\n", info.error.c_str());
    return 0;
  }
  const Direct blas{reinterpret_cast<cpu::CblasSgemm>(lib.symbol("cblas_sgemm")),
                    reinterpret_cast<cpu::CblasDgemm>(lib.symbol("cblas_dgemm"))};
  lib.release();  // stays loaded with xp's handle
  std::printf("OpenBLAS: %s\n  %s\n  kernels: %s (%s)\n  threads: OpenBLAS %d, xp %d\n", info.path.c_str(),
              info.config.c_str(), info.core.c_str(), info.core_reason.c_str(), cpu::blas_info().threads,
              xp::detail::num_threads());
  std::printf("times in ms: median [min..max] of 5 runs; ratio = xp / OpenBLAS direct\n\n");
  std::printf("%-10s %-8s %-14s %32s %32s %7s\n", "xp path", "dtype", "size", "OpenBLAS direct", "xp matmul", "ratio");

  std::vector<int> sizes = {256, 1024, 2048};
  if (quick) sizes.pop_back();
  for (int n : sizes) square<float>(blas, "automatic", cpu::GemmPath::automatic, n);
  for (int n : sizes) square<double>(blas, "automatic", cpu::GemmPath::automatic, n);
  // xp's own loop: what a machine without OpenBLAS gets.
  for (int n : {256, 1024}) square<float>(blas, "loop", cpu::GemmPath::loop, n);
  for (int n : {256, 1024}) square<double>(blas, "loop", cpu::GemmPath::loop, n);
  // Batches of small matrices: one sgemm per matrix (baseline) against xp's loop over the batch on
  // its threads (automatic, below 8^3 multiply-adds per matrix) and xp calling sgemm per matrix.
  std::printf("\n");
  for (int n : {4, 6, 8, 12, 16}) {
    batched(blas, "automatic", cpu::GemmPath::automatic, 4096, n);
    batched(blas, "loop", cpu::GemmPath::loop, 4096, n);
    batched(blas, "blas", cpu::GemmPath::blas, 4096, n);
  }
  return 0;
}
