#pragma once

// The device-side moves around cuSOLVER and cuFFT calls, each one fused elementwise program run by
// the backend (run_fused: generated, cached and launched on xp's stream like any array operation):
// batched matrix copies between storage orders with a triangle kept, a scale, int32 pivots made
// 0-based int64, zeros.

#include <cstdint>

#include "backend/backend.hpp"

namespace xp::detail::cuda {

// `batch` matrices of rows x cols at data, strides in elements (a row-major matrix: rs = cols,
// cs = 1; column-major with leading dimension ld: rs = 1, cs = ld).
struct MatrixLayout {
  std::byte* data = nullptr;
  std::int64_t batch_stride = 0, rs = 0, cs = 0;
};
MatrixLayout row_major(std::byte* data, std::int64_t rows, std::int64_t cols);
MatrixLayout column_major(std::byte* data, std::int64_t ld, std::int64_t cols);

enum class Triangle : std::uint8_t { all, upper, lower };  // upper: i <= j kept, the rest written 0

// dst = src over batch x rows x cols of dtype t, the other triangle zero. dst may be src itself
// (elementwise in place). A triangle is kept by comparing row and column indices on the device.
void copy_matrices(Backend& backend, DType t, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                   const MatrixLayout& src, const MatrixLayout& dst, Triangle keep = Triangle::all);

// count elements of dtype t at data multiplied by factor (rounded to t's precision), in place; a
// complex value's parts both.
void scale(Backend& backend, DType t, std::byte* data, std::int64_t count, double factor);

// count int32 values at src minus one, stored as int64 at dst.
void pivots_to_int64(Backend& backend, const std::byte* src, std::byte* dst, std::int64_t count);

// count values of the real dtype t at data, stride_bytes apart, set to zero.
void zero(Backend& backend, DType t, std::byte* data, std::int64_t count, std::int64_t stride_bytes);

}  // namespace xp::detail::cuda
