#pragma once

// OpenBLAS, opened at run time (blas.cpp). xp declares the few CBLAS entry points it calls itself
// (ABI facts: the LP64 build, whose integers are C int, and the CBLAS enum values), so the library
// builds without OpenBLAS's headers and runs without OpenBLAS (matmul then uses its own loop).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/dynlib.hpp"

namespace xp::detail::cpu {

// CBLAS's enumerations (cblas.h): enum arguments travel as int.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;

using CblasSgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                            int lda, const float* b, int ldb, float beta, float* c, int ldc);
using CblasDgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, double alpha, const double* a,
                            int lda, const double* b, int ldb, double beta, double* c, int ldc);
// cblas_cgemm / cblas_zgemm: alpha and beta by pointer, to a complex value of the matrices' type.
using CblasComplexGemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, const void* alpha,
                                  const void* a, int lda, const void* b, int ldb, const void* beta, void* c, int ldc);
using OpenblasSetNumThreads = void (*)(int);
using OpenblasGetNumThreads = int (*)();
using OpenblasGetConfig = char* (*)();
using OpenblasGetParallel = int (*)();
using OpenblasGetCorename = char* (*)();

// A complex number as xp, NumPy and CBLAS store it: {re, im} of the component type. Arithmetic by the
// textbook formulas, which is what BLAS kernels compute ((a + bi)(c + di) = (ac - bd) + (ad + bc)i,
// no rescue of infinities as C's Annex G does; no FMA: the build passes -ffp-contract=off).
template <class R>
struct BlasComplex {
  R re = 0, im = 0;
  constexpr BlasComplex() = default;
  constexpr BlasComplex(R r, R i = R(0)) : re(r), im(i) {}  // NOLINT: implicit from a real, as std::complex
  friend constexpr BlasComplex operator+(BlasComplex a, BlasComplex b) { return {a.re + b.re, a.im + b.im}; }
  friend constexpr BlasComplex operator*(BlasComplex a, BlasComplex b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  constexpr BlasComplex& operator+=(BlasComplex b) { return *this = *this + b; }
  friend constexpr bool operator==(BlasComplex a, BlasComplex b) { return a.re == b.re && a.im == b.im; }
  friend constexpr BlasComplex conj(BlasComplex a) { return {a.re, -a.im}; }
};

// An opened OpenBLAS: required entry points (real gemm, thread count) and optional ones (null when
// absent: complex gemm, without which complex matmul takes xp's loop; config and threading model,
// which are only reported).
struct BlasLibrary {
  DynLib lib;
  bool loaded = false;
  std::string path;         // absolute path the loader used
  std::string config;       // openblas_get_config(), "" without it
  int parallel = -1;        // openblas_get_parallel(): 0 sequential, 1 pthreads, 2 OpenMP; -1 unknown
  std::string core;         // openblas_get_corename(): the kernel set OpenBLAS loaded, "" unknown
  std::string core_reason;  // why that one (choose_openblas_core)
  std::string error;        // why loaded is false: every name tried and what the loader said
  CblasSgemm sgemm = nullptr;
  CblasDgemm dgemm = nullptr;
  CblasComplexGemm cgemm = nullptr;  // optional; null also when it failed xp's check at load
  CblasComplexGemm zgemm = nullptr;  // optional; as cgemm (both or neither are used)
  std::string complex_error;         // why cgemm and zgemm are null ("" when they are used)
  OpenblasSetNumThreads set_num_threads = nullptr;
  OpenblasGetNumThreads get_num_threads = nullptr;
  OpenblasGetConfig get_config = nullptr;
  OpenblasGetParallel get_parallel = nullptr;
  OpenblasGetCorename get_corename = nullptr;
};

// Opens the first of `names` that loads and has the required entry points. Sets no thread count.
// `coretype`, when not empty, is put in OPENBLAS_CORETYPE while the library loads (a DYNAMIC_ARCH
// OpenBLAS reads it then to choose its kernels) and taken away after.
BlasLibrary open_blas(const std::vector<std::string>& names, const std::string& coretype = {});

// The kernel set xp asks a DYNAMIC_ARCH OpenBLAS for, from this CPU's features, or "" to leave
// OpenBLAS's own choice. OpenBLAS 0.3.21 (Debian 12) falls back to its generic "Prescott" kernels
// on x86-64 CPUs newer than its tables, cloud virtual machines among them, and runs sgemm 4-6x
// slower there (docs/performance.md, "CPU matmul: OpenBLAS's kernels"). The two routines xp calls,
// sgemm and dgemm, have one kernel per vector level in OpenBLAS: "SkylakeX" for AVX-512
// (F, CD, BW, DQ, VL), "Haswell" for AVX2 with FMA; the newer names (Cooperlake, SapphireRapids,
// Zen) reuse them for these two. `user` is OPENBLAS_CORETYPE when set: then it is kept ("").
struct CoreChoice {
  std::string coretype;  // what to put in OPENBLAS_CORETYPE while loading; "" for none
  std::string reason;    // for xp doctor
};
CoreChoice choose_openblas_core(const std::optional<std::string>& user, bool avx512, bool avx2_fma);

// xp's check of an opened OpenBLAS at load: sgemm and dgemm over small integer matrices whose
// products are exact (every layout xp passes: both transposes, strided leading dimensions),
// against a plain loop. Some old OpenBLAS builds compute wrong results with some kernels on some
// CPUs; a library that fails is not used (matmul takes xp's own loop) and xp doctor says why.
// Returns "" when every result matched, else what differed.
std::string check_blas(const BlasLibrary& b);
// The same check of cgemm and zgemm (both non-null), with exact Gaussian-integer matrices. A library
// that fails it keeps its real gemm; complex matmul then takes xp's loop.
std::string check_complex_blas(const BlasLibrary& b);

// The process's OpenBLAS (libopenblas.so.0, then libopenblas.so), opened on first call, thread
// safe, never closed. At load its thread count is set to num_threads(); the outcome is logged
// once (info when missing, debug when loaded).
const BlasLibrary& blas_library();

// What matmul may call now: the library, with its thread count equal to num_threads() (set again
// when xp's count has changed since load, e.g. by set_num_threads), or null when it must not be
// called: missing, the loop forced (set_gemm_path), or on one of xp's own threads (in_parallel():
// BLAS's threads on top of xp's would oversubscribe the cores).
const BlasLibrary* blas_for_call();

// Sets OpenBLAS's thread count to num_threads() when xp's count has changed since it was last set
// (what blas_for_call does): LAPACK's callers (lapack.cpp) run OpenBLAS's threads as matmul does.
void sync_blas_threads(const BlasLibrary& b);

// Counts gemm calls made through blas_for_call's library (white-box tests check which path ran).
void count_blas_call() noexcept;
std::uint64_t blas_call_count() noexcept;

// Which path matmul takes: automatic (BLAS for float32/float64/float16/bfloat16 and complex unless the
// matrices are small, then xp's loop), or forced, for tests and benchmarks. Forcing `blas` when
// the library is missing or on xp's threads still runs the loop. Process-wide; not thread safe
// against concurrent matmuls (set it before, in a test).
enum class GemmPath { automatic, blas, loop };
void set_gemm_path(GemmPath path) noexcept;
GemmPath gemm_path() noexcept;

}  // namespace xp::detail::cpu
