// Fused copies around cuSOLVER and cuFFT (matrix_copy.hpp).
#include "backend/cuda/matrix_copy.hpp"

#include <algorithm>
#include <bit>
#include <vector>

namespace xp::detail::cuda {

namespace {

using i64 = std::int64_t;

std::uint64_t constant_bits(DType t, double v) {
  if (t == DType::float32) return std::bit_cast<std::uint32_t>(static_cast<float>(v));
  if (t == DType::int64) return static_cast<std::uint64_t>(static_cast<i64>(v));
  return std::bit_cast<std::uint64_t>(v);
}

}  // namespace

MatrixLayout row_major(std::byte* data, i64 rows, i64 cols) {
  return {data, rows * cols, cols, 1};
}
MatrixLayout column_major(std::byte* data, i64 ld, i64 cols) {
  return {data, ld * cols, 1, ld};
}

void copy_matrices(Backend& backend, DType t, i64 batch, i64 rows, i64 cols, const MatrixLayout& src,
                   const MatrixLayout& dst, Triangle keep) {
  if (batch == 0 || rows == 0 || cols == 0) return;
  // A complex matrix moves as its parts (a last axis of 2 of the component dtype): the kernel needs
  // no complex arithmetic.
  const bool parts = is_complex(t);
  const DType et = parts ? component_dtype(t) : t;
  const i64 e = static_cast<i64>(itemsize(t)), pe = static_cast<i64>(itemsize(et));
  const int nd = parts ? 4 : 3;
  const i64 shape[4] = {batch, rows, cols, 2};
  const i64 ss[4] = {src.batch_stride * e, src.rs * e, src.cs * e, pe};
  const i64 ds[4] = {dst.batch_stride * e, dst.rs * e, dst.cs * e, pe};
  FusedProgram p;
  p.ndim = nd;
  p.shape = shape;
  p.inputs.push_back(View{src.data, et, nd, shape, ss});
  p.code.push_back(Instr{Op::load, et, -1, -1, -1, 0});
  // The triangle kept: element (i, j) where i <= j (upper) or i >= j (lower), compared on the
  // device from one int64 vector 0, 1, ..., max(rows, cols) - 1 read twice, once along the rows and
  // once along the columns (max(rows, cols) elements uploaded, not a rows x cols mask).
  // Freed when the copy returns: through its owner where the backend gives one (CUDA: a
  // stream-ordered block), else through its release function (the CPU backend, whose run_fused has
  // finished by then).
  struct Held {
    Allocation a;
    ~Held() {
      if (!a.owner && a.release != nullptr) a.release(a.data, a.bytes);
    }
  } held;
  Allocation& index = held.a;
  const i64 rs[4] = {0, 8, 0, 0}, cs[4] = {0, 0, 8, 0};
  if (keep != Triangle::all) {
    std::vector<i64> host(static_cast<std::size_t>(std::max(rows, cols)));
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<i64>(i);
    index = backend.allocate(host.size() * sizeof(i64));
    backend.copy_from_host(host.data(), index.data, host.size() * sizeof(i64));
    p.inputs.push_back(View{index.data, DType::int64, nd, shape, rs});
    p.inputs.push_back(View{index.data, DType::int64, nd, shape, cs});
    const auto x = static_cast<std::int32_t>(p.code.size() - 1);
    p.code.push_back(Instr{Op::load, DType::int64, -1, -1, -1, 1});
    p.code.push_back(Instr{Op::load, DType::int64, -1, -1, -1, 2});
    p.code.push_back(
        Instr{keep == Triangle::upper ? Op::less_equal : Op::greater_equal, DType::bool_, x + 1, x + 2, -1, 0});
    p.code.push_back(Instr{Op::constant, et, -1, -1, -1, 0});
    p.code.push_back(Instr{Op::where, et, x + 3, x, x + 4, 0});
  }
  p.outputs.push_back(View{dst.data, et, nd, shape, ds});
  p.output_instr.push_back(static_cast<std::int32_t>(p.code.size() - 1));
  backend.run_fused(p);
}

void scale(Backend& backend, DType t, std::byte* data, i64 count, double factor) {
  if (count == 0 || factor == 1.0) return;
  const DType c = component_dtype(t);
  const i64 shape[1] = {is_complex(t) ? 2 * count : count};
  const i64 strides[1] = {static_cast<i64>(itemsize(c))};
  FusedProgram p;
  p.ndim = 1;
  p.shape = shape;
  p.inputs.push_back(View{data, c, 1, shape, strides});
  p.code.push_back(Instr{Op::load, c, -1, -1, -1, 0});
  p.code.push_back(Instr{Op::constant, c, -1, -1, -1, constant_bits(c, factor)});
  p.code.push_back(Instr{Op::multiply, c, 0, 1, -1, 0});
  p.outputs.push_back(View{data, c, 1, shape, strides});
  p.output_instr.push_back(2);
  backend.run_fused(p);
}

void pivots_to_int64(Backend& backend, const std::byte* src, std::byte* dst, i64 count) {
  if (count == 0) return;
  const i64 shape[1] = {count};
  const i64 s4[1] = {4}, s8[1] = {8};
  FusedProgram p;
  p.ndim = 1;
  p.shape = shape;
  p.inputs.push_back(View{const_cast<std::byte*>(src), DType::int32, 1, shape, s4});
  p.code.push_back(Instr{Op::load, DType::int32, -1, -1, -1, 0});
  p.code.push_back(Instr{Op::cast, DType::int64, 0, -1, -1, 0});
  p.code.push_back(Instr{Op::constant, DType::int64, -1, -1, -1, 1});
  p.code.push_back(Instr{Op::subtract, DType::int64, 1, 2, -1, 0});
  p.outputs.push_back(View{dst, DType::int64, 1, shape, s8});
  p.output_instr.push_back(3);
  backend.run_fused(p);
}

void zero(Backend& backend, DType t, std::byte* data, i64 count, i64 stride_bytes) {
  if (count == 0) return;
  const i64 shape[1] = {count};
  const i64 strides[1] = {stride_bytes};
  FusedProgram p;
  p.ndim = 1;
  p.shape = shape;
  p.code.push_back(Instr{Op::constant, t, -1, -1, -1, 0});
  p.outputs.push_back(View{data, t, 1, shape, strides});
  p.output_instr.push_back(0);
  backend.run_fused(p);
}

}  // namespace xp::detail::cuda
