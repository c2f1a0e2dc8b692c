#include "backend/cpu/tile_ops.hpp"

namespace xp::detail::cpu {
TileFn math_tile_fn(Op, DType, DType) noexcept {
  return nullptr;  // stub
}
double math_ulp_bound(Op, DType) noexcept {
  return 0;
}
const char* math_isa() noexcept {
  return "scalar";
}
}  // namespace xp::detail::cpu
