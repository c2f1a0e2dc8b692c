#pragma once

// OpenBLAS, opened at run time (blas.cpp). xp declares the few CBLAS entry points it calls itself
// (ABI facts: the LP64 build, whose integers are C int, and the CBLAS enum values), so the library
// builds without OpenBLAS's headers and runs without OpenBLAS (matmul then uses its own loop).

#include <cstdint>
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
using OpenblasSetNumThreads = void (*)(int);
using OpenblasGetNumThreads = int (*)();
using OpenblasGetConfig = char* (*)();
using OpenblasGetParallel = int (*)();

// An opened OpenBLAS: required entry points (gemm, thread count) and optional ones (null when
// absent: config and threading model are only reported).
struct BlasLibrary {
  DynLib lib;
  bool loaded = false;
  std::string path;    // absolute path the loader used
  std::string config;  // openblas_get_config(), "" without it
  int parallel = -1;   // openblas_get_parallel(): 0 sequential, 1 pthreads, 2 OpenMP; -1 unknown
  std::string error;   // why loaded is false: every name tried and what the loader said
  CblasSgemm sgemm = nullptr;
  CblasDgemm dgemm = nullptr;
  OpenblasSetNumThreads set_num_threads = nullptr;
  OpenblasGetNumThreads get_num_threads = nullptr;
  OpenblasGetConfig get_config = nullptr;
  OpenblasGetParallel get_parallel = nullptr;
};

// Opens the first of `names` that loads and has the required entry points. Sets no thread count.
BlasLibrary open_blas(const std::vector<std::string>& names);

// The process's OpenBLAS (libopenblas.so.0, then libopenblas.so), opened on first call, thread
// safe, never closed. At load its thread count is set to num_threads(); the outcome is logged
// once (info when missing, debug when loaded).
const BlasLibrary& blas_library();

// What matmul may call now: the library, with its thread count equal to num_threads() (set again
// when xp's count has changed since load, e.g. by set_num_threads), or null when it must not be
// called: missing, the loop forced (set_gemm_path), or on one of xp's own threads (in_parallel():
// BLAS's threads on top of xp's would oversubscribe the cores).
const BlasLibrary* blas_for_call();

// Counts gemm calls made through blas_for_call's library (white-box tests check which path ran).
void count_blas_call() noexcept;
std::uint64_t blas_call_count() noexcept;

// Which path matmul takes: automatic (BLAS for float32/float64/float16/bfloat16 unless the
// matrices are small, then xp's loop), or forced, for tests and benchmarks. Forcing `blas` when
// the library is missing or on xp's threads still runs the loop. Process-wide; not thread safe
// against concurrent matmuls (set it before, in a test).
enum class GemmPath { automatic, blas, loop };
void set_gemm_path(GemmPath path) noexcept;
GemmPath gemm_path() noexcept;

}  // namespace xp::detail::cpu
