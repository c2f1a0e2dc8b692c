#pragma once

// Printing arrays as NumPy 2 prints them (repr and str), from contiguous host data.

#include <cstdint>
#include <span>
#include <string>

#include "xp/dtype.hpp"

namespace xp::detail {

// NumPy's repr: "array([1., 2.], dtype=float32)", "array(3)", "array([], shape=(0, 2), dtype=int64)",
// with NumPy's default print options: precision 8, line width 75, summarised with "..." beyond 1000
// elements (3 items each side), floats in the shortest form that round-trips (a port of NumPy's
// Dragon4, which also gives float16's and bfloat16's shortest digits), scientific when NumPy would
// switch to it, uniform width per array, nan and inf spelled as NumPy spells them, the dtype shown
// unless it is the default for its kind (float64, int64, bool). bfloat16 prints as NumPy prints an
// ml_dtypes array ("dtype=dtype(bfloat16)", each element at its own width). `data` holds the
// elements in C order.
std::string format_repr(DType dtype, std::span<const std::int64_t> shape, const void* data);

// NumPy's str: "[1. 2.]".
std::string format_str(DType dtype, std::span<const std::int64_t> shape, const void* data);

}  // namespace xp::detail
