#pragma once

// The Array API's `linalg` extension (2024.12): every function, batched over leading dimensions,
// for float32, float64, complex64 and complex128 (the factorizations), and every numeric dtype
// where the standard allows it (cross, diagonal, matmul, outer, tensordot, trace, vecdot, the
// norms). On the CPU the factorizations run in LAPACK (the one inside OpenBLAS, opened at run time
// beside its BLAS); on a CUDA device in cuSOLVER (opened at run time as cuBLAS is; XP_CUSOLVER names
// one). A matrix with no answer (singular for solve and inv, not positive definite for cholesky, an
// iteration that did not converge) is an xp::LinAlgError naming the function and the batch entry;
// nothing is returned half computed. Results follow numpy.linalg (docs/semantics.md, "Linear
// algebra", states the accuracy and where xp differs).

#include <optional>
#include <string_view>
#include <vector>

#include "xp/array.hpp"

namespace xp::linalg {

struct EighResult {
  Array eigenvalues;   // (..., n), ascending, the real dtype of the input
  Array eigenvectors;  // (..., n, n), column j the eigenvector of eigenvalue j
};
struct QRResult {
  Array Q;  // (..., m, k) with k = min(m, n) ("reduced") or (..., m, m) ("complete")
  Array R;  // (..., k, n) or (..., m, n)
};
struct SlogdetResult {
  Array sign;       // (...,): -1, 0 or 1 (complex: a number of modulus 1, or 0)
  Array logabsdet;  // (...,): log|det|, -inf for a singular matrix; the real dtype of the input
};
struct SVDResult {
  Array U;   // (..., m, m) or (..., m, k) with k = min(m, n)
  Array S;   // (..., k), descending, the real dtype of the input
  Array Vh;  // (..., n, n) or (..., k, n)
};

// The lower (upper = false) or upper Cholesky factor of Hermitian positive-definite matrices; only
// the triangle named is read. LinAlgError where a matrix is not positive definite.
XP_API Array cholesky(const Array& x, bool upper = false);
// The cross product of 3-element vectors along axis (broadcast over the other dimensions).
XP_API Array cross(const Array& x1, const Array& x2, int axis = -1);
XP_API Array det(const Array& x);
// The offset-th diagonal of each matrix (the last two axes): a new array (..., k).
XP_API Array diagonal(const Array& x, std::int64_t offset = 0);
XP_API EighResult eigh(const Array& x);  // reads the lower triangle, as numpy.linalg.eigh
XP_API Array eigvalsh(const Array& x);
XP_API Array inv(const Array& x);  // LinAlgError for a singular matrix
using xp::matmul;
using xp::matrix_transpose;
using xp::tensordot;
using xp::vecdot;
// ord "fro" (Frobenius) or "nuc" (nuclear).
XP_API Array matrix_norm(const Array& x, bool keepdims = false, std::string_view ord = "fro");
// matrix_norm(x, false, "nuc"): a string literal would otherwise convert as well to the double
// overload's arguments (bool to double) as to this one's.
inline Array matrix_norm(const Array& x, bool keepdims, const char* ord) {
  return matrix_norm(x, keepdims, std::string_view(ord));
}
// ord 1, -1, 2, -2, inf or -inf (as numpy.linalg.norm of a matrix).
XP_API Array matrix_norm(const Array& x, double ord, bool keepdims = false);
// x to the n-th power by repeated squaring; n = 0 gives identities, n < 0 the inverse's power.
XP_API Array matrix_power(const Array& x, std::int64_t n);
// Singular values above rtol * largest (rtol defaults to max(m, n) * eps of the dtype).
XP_API Array matrix_rank(const Array& x, std::optional<double> rtol = std::nullopt);
// A tolerance per matrix: rtol real, its shape broadcast with x's batch shape (the result's batch
// shape is the broadcast one); TypeError for a bool or complex rtol, ValueError for a shape that
// does not broadcast.
XP_API Array matrix_rank(const Array& x, const Array& rtol);
XP_API Array outer(const Array& x1, const Array& x2);
XP_API Array pinv(const Array& x, std::optional<double> rtol = std::nullopt);
XP_API Array pinv(const Array& x, const Array& rtol);                   // rtol as matrix_rank's
XP_API QRResult qr(const Array& x, std::string_view mode = "reduced");  // "reduced" or "complete"
XP_API SlogdetResult slogdet(const Array& x);
// x1 (..., n, n) and x2 (..., n, k), or x2 (n,) a single vector (as the standard says; batch
// dimensions broadcast). LinAlgError for a singular matrix.
XP_API Array solve(const Array& x1, const Array& x2);
XP_API SVDResult svd(const Array& x, bool full_matrices = true);
XP_API Array svdvals(const Array& x);
// The sum of each matrix's offset-th diagonal; dtype as sum's.
XP_API Array trace(const Array& x, std::int64_t offset = 0, std::optional<DType> dtype = std::nullopt);
// The ord-norm over axes (all of them when empty); ord any real (inf, -inf, 0 included).
XP_API Array vector_norm(const Array& x, const Axes& axes = {}, bool keepdims = false, double ord = 2);

}  // namespace xp::linalg
