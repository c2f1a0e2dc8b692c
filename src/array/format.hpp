#pragma once

// Printing arrays as NumPy 2 prints them (repr and str), from contiguous host data.

#include <cstdint>
#include <span>
#include <string>

#include "xp/dtype.hpp"

namespace xp::detail {

// NumPy's repr: "array([1., 2.], dtype=float32)", "array(3)", "array([], shape=(0, 2), dtype=int64)",
// with NumPy's default print options: precision 8, line width 75, summarised with "..." beyond 1000
// elements (3 items each side), floats in the shortest form that round-trips (Dragon4 as NumPy,
// here std::to_chars), scientific when NumPy would switch to it, uniform width per array, nan and
// inf spelled as NumPy spells them, the dtype shown unless it is the default for its kind (float64,
// int64, bool). bfloat16 prints as ml_dtypes does ("dtype=bfloat16"). `data` holds the elements in
// C order.
std::string format_repr(DType dtype, std::span<const std::int64_t> shape, const void* data);

// NumPy's str: "[1. 2.]".
std::string format_str(DType dtype, std::span<const std::int64_t> shape, const void* data);

}  // namespace xp::detail
