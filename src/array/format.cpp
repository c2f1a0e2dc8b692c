#include "array/format.hpp"

namespace xp::detail {
std::string format_repr(DType, std::span<const std::int64_t>, const void*) {
  return "array(...)";  // stub
}
std::string format_str(DType, std::span<const std::int64_t>, const void*) {
  return "[...]";  // stub
}
}  // namespace xp::detail
