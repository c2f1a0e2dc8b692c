#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace xp::detail {

// A shape as Python writes a tuple: (), (3,), (2, 3). For messages and repr (array.cpp).
std::string shape_str(std::span<const std::int64_t> shape);

}  // namespace xp::detail
