#include "backend/cpu/linalg.hpp"

#include "xp/error.hpp"

namespace xp::detail::cpu {
void matmul(const View&, const View&, const View&) {
  throw ValueError("matmul: not implemented");  // stub
}
void vecdot(const View&, const View&, const View&) {
  throw ValueError("vecdot: not implemented");  // stub
}
BlasInfo blas_info() {
  return {};
}
}  // namespace xp::detail::cpu
