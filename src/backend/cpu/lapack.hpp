#pragma once

// LAPACK on the CPU (lapack.cpp): the dense factorizations of Backend::linalg, through the Fortran
// entry points of the OpenBLAS xp already opens for matmul (blas.cpp; Debian's libopenblas0 carries
// LAPACK inside). xp declares the prototypes itself (the LP64 ABI: every integer a C int, arrays and
// scalars by pointer, and after the other arguments one hidden size_t length per CHARACTER argument).

#include <cstdint>
#include <span>
#include <string>

#include "backend/backend.hpp"

namespace xp::detail::cpu {

// Whether LAPACK can be called, and why not when not.
struct LapackInfo {
  bool loaded = false;
  std::string path;   // the library the routines come from (OpenBLAS's path)
  std::string error;  // why not loaded: OpenBLAS missing or unusable, or routines it lacks
};
LapackInfo lapack_info();

// Backend::linalg on host memory (the contract is in backend/backend.hpp). Throws xp::Error saying to
// install OpenBLAS when LAPACK is not there (or hidden by set_lapack_hidden), ValueError for a
// matrix whose dimensions do not fit LAPACK's 32-bit integers, and Error for a negative info (an
// argument LAPACK refused: a bug of xp's, or a NaN where gesdd checks for one).
void lapack_linalg(const LinalgCall& call, std::span<const View> in, std::span<const View> out,
                   std::span<std::int64_t> info);

// Makes LAPACK look missing to lapack_linalg (for tests of the error a machine without OpenBLAS
// gives). Process-wide; set it before, not during, a computation.
void set_lapack_hidden(bool hidden) noexcept;

}  // namespace xp::detail::cpu
