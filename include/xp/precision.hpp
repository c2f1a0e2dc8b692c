#pragma once

// The compute precision a float32 matmul may use: a header of its own so that the backends can take
// it without the array API (xp/array.hpp declares matmul with it).

#include <string_view>

#include "xp/export.hpp"

namespace xp {

// How a float32 matmul may round on a GPU. float32 (the default): products and sums in float32.
// tf32: cuBLAS may use TF32 tensor cores (inputs rounded to 10 mantissa bits, sums in float32),
// as PyTorch's allow_tf32 and CuPy's CUPY_TF32=1. It permits, it does not require: other dtypes and the
// CPU compute as with float32.
enum class MatmulPrecision { float32, tf32 };

// "float32", "tf32".
XP_API std::string_view to_string(MatmulPrecision precision) noexcept;

}  // namespace xp
