// The reductions every backend computes: result dtypes and the checks of a request.
#include "backend/reduce_ops.hpp"

#include <string>

#include "xp/error.hpp"

namespace xp::detail {

namespace {

bool valid(DType t) noexcept {
  return static_cast<unsigned>(t) <= static_cast<unsigned>(DType::float64);
}

std::string dims_text(int n) {
  return "array of dimension " + std::to_string(n);
}

void check_shape(const View& v, const char* what) {
  if (v.ndim < 0 || v.ndim > kMaxDims)
    throw ValueError(std::string(what) + ": " + std::to_string(v.ndim) + " dimensions (at most 64)");
  for (int d = 0; d < v.ndim; ++d)
    if (v.shape[d] < 0) throw ValueError(std::string(what) + ": negative dimension");
}

}  // namespace

DType reduce_result_dtype(ReduceOp op, DType input) noexcept {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::prod:
      switch (kind(input)) {
        case DTypeKind::boolean:
        case DTypeKind::signed_integer:
          return DType::int64;
        case DTypeKind::unsigned_integer:
          return DType::uint64;
        case DTypeKind::floating:
        case DTypeKind::complex_floating:
          return input;
      }
      return input;
    case ReduceOp::mean:
    case ReduceOp::var:
    case ReduceOp::std:
      return kind(input) == DTypeKind::floating || kind(input) == DTypeKind::complex_floating ? input : DType::float64;
    case ReduceOp::min:
    case ReduceOp::max:
      return input;
    case ReduceOp::any:
    case ReduceOp::all:
      return DType::bool_;
    case ReduceOp::argmin:
    case ReduceOp::argmax:
      return DType::int64;
  }
  return input;
}

std::int64_t check_reduce_request(ReduceOp op, const View& in, std::span<const int> axes, const View& out) {
  check_shape(in, "reduce");
  check_shape(out, "reduce");
  bool reduced[kMaxDims] = {};
  int prev = -1;
  for (const int a : axes) {
    if (a < 0 || a >= in.ndim)
      throw ValueError("axis " + std::to_string(a) + " is out of bounds for " + dims_text(in.ndim));
    if (a == prev) throw ValueError("duplicate value in 'axis'");
    if (a < prev) throw ValueError("reduce: axes must be sorted");
    reduced[a] = true;
    prev = a;
  }
  if (out.ndim != in.ndim - static_cast<int>(axes.size()))
    throw ValueError("reduce: the output has " + std::to_string(out.ndim) + " dimensions, expected " +
                     std::to_string(in.ndim - static_cast<int>(axes.size())));
  if (!valid(in.dtype)) throw ValueError("reduce: unknown dtype");
  std::int64_t n = 1;
  int ko = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (reduced[d]) {
      n *= in.shape[d];
    } else {
      if (out.shape[ko] != in.shape[d])
        throw ValueError("reduce: output dimension " + std::to_string(ko) + " is " + std::to_string(out.shape[ko]) +
                         ", expected " + std::to_string(in.shape[d]));
      ++ko;
    }
  }
  const DType want = reduce_result_dtype(op, in.dtype);
  if (out.dtype != want)
    throw ValueError("reduce: the output dtype is " + std::string(name(out.dtype)) + ", expected " +
                     std::string(name(want)));
  if (n == 0) {
    if (op == ReduceOp::min || op == ReduceOp::max)
      throw ValueError(std::string("zero-size array to reduction operation ") +
                       (op == ReduceOp::min ? "minimum" : "maximum") + " which has no identity");
    if (op == ReduceOp::argmin || op == ReduceOp::argmax)
      throw ValueError(std::string("attempt to get ") + (op == ReduceOp::argmin ? "argmin" : "argmax") +
                       " of an empty sequence");
  }
  return n;
}

void check_scan_request(ReduceOp op, const View& in, int axis, const View& out, bool include_initial) {
  if (op != ReduceOp::sum && op != ReduceOp::prod) throw ValueError("cumulative: only sum and prod scan");
  const std::string fn = op == ReduceOp::sum ? "cumulative_sum" : "cumulative_prod";
  check_shape(in, fn.c_str());
  if (axis < 0 || axis >= in.ndim)
    throw ValueError("axis " + std::to_string(axis) + " is out of bounds for " + dims_text(in.ndim));
  if (out.ndim != in.ndim) throw ValueError(fn + ": the output's dimensions differ from the input's");
  for (int d = 0; d < in.ndim; ++d) {
    const std::int64_t want = in.shape[d] + (d == axis && include_initial ? 1 : 0);
    if (out.shape[d] != want)
      throw ValueError(fn + ": output dimension " + std::to_string(d) + " is " + std::to_string(out.shape[d]) +
                       ", expected " + std::to_string(want));
  }
  if (!valid(in.dtype)) throw ValueError("reduce: unknown dtype");
  const DType want = reduce_result_dtype(op, in.dtype);
  const bool integer = kind(in.dtype) == DTypeKind::signed_integer || kind(in.dtype) == DTypeKind::unsigned_integer;
  if (out.dtype != want && !(integer && out.dtype == in.dtype))
    throw ValueError(fn + ": the output dtype is " + std::string(name(out.dtype)) + ", expected " +
                     std::string(name(want)) + (integer ? " or " + std::string(name(in.dtype)) : std::string()));
}

int simplify_reduce_dims(ReduceDim* d, int n) noexcept {
  int k = 0;
  for (int i = 0; i < n; ++i) {
    if (d[i].size == 1) continue;
    if (k > 0 && d[k - 1].in == d[i].in * d[i].size && d[k - 1].out == d[i].out * d[i].size) {
      d[k - 1] = {d[k - 1].size * d[i].size, d[i].in, d[i].out};
    } else {
      d[k++] = d[i];
    }
  }
  return k;
}

}  // namespace xp::detail
