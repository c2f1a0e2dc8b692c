// Writes the CUDA source xp generates for one reduction (op, dtype, class) to stdout, for the
// kernel timing programs of bench/nvcc (xp_sum_kernels.cu):
//   xp_dump_reduce_source [op = sum] [dtype = float32] [class = rows_vector]
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "backend/cuda/reduce_source.hpp"
#include "xp/dtype.hpp"
#include "xp/error.hpp"

namespace cg = xp::detail::cuda;

int main(int argc, char** argv) {
  const char* op_text = argc > 1 ? argv[1] : "sum";
  const char* dtype_text = argc > 2 ? argv[2] : "float32";
  const char* family_text = argc > 3 ? argv[3] : "rows_vector";
  std::optional<xp::detail::ReduceOp> op;
  for (const xp::detail::ReduceOp o : xp::detail::kReduceOps)
    if (std::strcmp(op_text, xp::detail::reduce_op_name(o)) == 0) op = o;
  const cg::ReduceFamily families[] = {cg::ReduceFamily::rows_vector, cg::ReduceFamily::rows_strided,
                                       cg::ReduceFamily::columns};
  int family = -1;
  for (int i = 0; i < 3; ++i)
    if (std::strcmp(family_text, cg::family_name(families[i])) == 0) family = i;
  const auto t = xp::parse_dtype(dtype_text);
  try {
    if (!op || family < 0 || !t) {
      std::fprintf(stderr, "usage: %s [op] [dtype] [rows_vector|rows_strided|columns]\n", argv[0]);
      return 2;
    }
    const std::string s = cg::reduce_source(*op, *t, families[family]);
    std::fwrite(s.data(), 1, s.size(), stdout);
  } catch (const xp::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
