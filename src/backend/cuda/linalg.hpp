#pragma once

// matmul and vecdot on a CUDA device (the views and their rules as backend/cpu/linalg.hpp).
//
// - float32, float64, float16, bfloat16, complex64, complex128: cublasGemmStridedBatchedEx with
//   explicit compute types (float32 -> CUBLAS_COMPUTE_32F, never TF32 unless MatmulPrecision::tf32
//   asks for CUBLAS_COMPUTE_32F_FAST_TF32; float64 -> 64F; float16 / bfloat16 -> 32F with the output
//   in the input dtype, reductions kept in float32; complex64 -> CUDA_C_32F in 32F whatever the
//   precision, complex128 -> CUDA_C_64F in 64F: cublasCgemm's and cublasZgemm's arithmetic). Batch
//   dimensions broadcast with zero
//   strides; one call per batch dimension left over after coalescing. An operand cuBLAS cannot read
//   in place (a unit stride in neither matrix dimension, overlapping rows, misalignment, negative
//   or odd batch strides) is first copied to contiguous device scratch (broadcast batch dimensions
//   stay broadcast), and such an output is computed in scratch and copied back (complex views are
//   copied as their real parts). vecdot is the same gemm with m = n = 1; complex vecdot conjugates
//   its first operand with CUBLAS_OP_C.
// - Integers and bool: xp's own kernel, one thread per output element summing in k order in an
//   unsigned type (uint32 up to 32 bits, uint64 for 64), so the bits are the CPU backend's
//   (wrap-around as NumPy); bool is the or of ands.
// The functions return false where the device path does not apply (cuBLAS unavailable for a float
// dtype, sizes past cuBLAS's 32-bit arguments, more batch dimensions than the kernel takes): the
// caller then computes on the host.

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/ir.hpp"

namespace xp::detail::cuda {

// A matrix (rows x cols, byte strides) as cuBLAS reads it: column-major storage with a leading
// dimension. row_major: the matrix is stored row by row, so cuBLAS sees its transpose.
struct ColumnMajor {
  bool ok = false;
  bool row_major = false;
  std::int64_t ld = 0;  // elements
};
// reading: either storage order (row by row first), or only the one named.
enum class Reading { either, row, column };
ColumnMajor column_major(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs, std::size_t itemsize,
                         Reading reading = Reading::either) noexcept;

// Batch dimensions of views with one batch shape (the first nb dimensions), extent-1 dimensions
// dropped and neighbours merged where every view allows.
struct BatchDims {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides[3];  // bytes, per view
};
BatchDims coalesce_batch(const View* const* views, int count, int nb);

// One cublasGemmStridedBatchedEx call pattern (column-major, cuBLAS's argument names), repeated
// over the looped batch dimensions.
struct GemmCall {
  bool swapped = false;  // the first operand is b: out is row-major, cuBLAS computes C^T = B^T A^T
  int trans_first = 0, trans_second = 0;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t ld_first = 0, ld_second = 0, ld_out = 0;
  std::int64_t count = 1;                                            // batched in one call
  std::int64_t stride_first = 0, stride_second = 0, stride_out = 0;  // elements
  std::vector<std::int64_t> loop_shape;                              // looped batch dimensions
  std::vector<std::int64_t> loop_strides[3];                         // bytes: a, b, out
};

struct GemmPlan {
  bool pack_a = false, pack_b = false, pack_out = false;  // copy to (or compute in) contiguous scratch first
  bool too_big = false;                                   // m, n or k past cuBLAS's int arguments: the host computes it
  GemmCall call;                                          // valid when nothing needs packing and not too_big
};
// The plan for out = a @ b (views as cpu::matmul takes them; m, n, k and the batch non-empty).
// conj_a: out = conj(a) @ b, a's operation CUBLAS_OP_C (a conjugate transpose: the reading of a and
// out is chosen for it; complex vecdot, where m = n = 1).
GemmPlan plan_gemm(const View& a, const View& b, const View& out, bool conj_a = false);

// The cuBLAS types of a float gemm (cublas.hpp's constants): the cudaDataType of A, B and C, and the
// compute type. float32: CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32 for
// MatmulPrecision::tf32; float16 and bfloat16: CUBLAS_COMPUTE_32F; float64: CUBLAS_COMPUTE_64F;
// complex64: CUDA_C_32F in CUBLAS_COMPUTE_32F; complex128: CUDA_C_64F in CUBLAS_COMPUTE_64F; the
// precision changes float32 only. Throws ValueError for any other dtype.
struct GemmTypes {
  int data_type = 0;
  int compute_type = 0;
};
GemmTypes gemm_types(DType dtype, MatmulPrecision precision);

// The exact kernel for integer and bool matmul (and vecdot), one per dtype: extern "C"
// xp_matmul_loop(LoopArgs), self-contained source (no #include).
constexpr int kMaxLoopBatchDims = 8;
bool loop_kernel_dtype(DType dtype) noexcept;  // integers and bool
std::string loop_kernel_source(DType dtype);
constexpr const char* kLoopKernelName = "xp_matmul_loop";
struct LoopArgs {
  std::uint64_t a = 0, b = 0, out = 0;
  std::int64_t m = 0, n = 0, k = 0, total = 0;
  std::int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, o_rs = 0, o_cs = 0;
  std::int64_t nbatch = 0;
  std::int64_t shape[kMaxLoopBatchDims] = {};
  std::int64_t a_st[kMaxLoopBatchDims] = {}, b_st[kMaxLoopBatchDims] = {}, o_st[kMaxLoopBatchDims] = {};
};

// out = a @ b and vecdot on the device of `backend` (its allocator for scratch and the cuBLAS
// workspace, its run_fused for copies, xp's stream of the device for everything). False: use the
// host path. Throws CudaError / Error when a call fails. vecdot is float32 always (memory bound:
// TF32 would buy nothing).
bool device_matmul(Backend& backend, const Device& device, const View& a, const View& b, const View& out,
                   MatmulPrecision precision);
bool device_vecdot(Backend& backend, const Device& device, const View& a, const View& b, const View& out);

}  // namespace xp::detail::cuda
