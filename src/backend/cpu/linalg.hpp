#pragma once

// matmul and vecdot on the CPU (linalg.cpp, blas.cpp). float32, float64, complex64 and complex128
// through CBLAS from OpenBLAS (sgemm, dgemm, cgemm, zgemm), opened at run time (libopenblas.so.0)
// with its thread count set to xp's, and never called from inside xp's own threads; a plain
// blocked loop when OpenBLAS is missing.

#include <cstdint>
#include <string>

#include "backend/ir.hpp"

namespace xp::detail::cpu {

// out[..., m, n] = a[..., m, k] @ b[..., k, n]. The three views have the same number of dimensions
// (>= 2) and the same batch shape (the array layer broadcasts batch dimensions with zero strides);
// one dtype for all three (the array layer promotes). Strides are arbitrary (BLAS gets contiguous
// copies when it needs them). Integers are exact with wrap-around (as NumPy), bool is the logical
// or of ands, float16 and bfloat16 are computed in float32 and rounded once at the end.
void matmul(const View& a, const View& b, const View& out);

// out[...] = sum over the last axis of a[..., k] * b[..., k] (complex: conj(a[..., k]) * b[..., k]);
// a and b have the same shape (already broadcast), out has that shape without its last axis, one
// dtype for all (as matmul).
void vecdot(const View& a, const View& b, const View& out);

struct BlasInfo {
  bool loaded = false;
  std::string path;           // the library opened
  std::string config;         // openblas_get_config()
  int threads = 0;            // openblas_get_num_threads() after xp set it
  std::string core;           // openblas_get_corename(): the kernel set in use ("SkylakeX"), "" unknown
  std::string core_reason;    // who chose it: OpenBLAS, OPENBLAS_CORETYPE, or xp from the CPU's features
  std::string error;          // why it is not loaded (or not used: it failed xp's check at load)
  std::string complex_error;  // why complex matmul does not use cgemm / zgemm ("" when it does)
};
BlasInfo blas_info();

}  // namespace xp::detail::cpu
