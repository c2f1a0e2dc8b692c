#pragma once

// `take` on a CUDA device: a gather kernel, planned and generated here (testable without a GPU), launched
// by cuda_backend.cpp through its program cache.
//
// The kernel iterates over out's elements in C order (a grid-stride loop, 64-bit indices; 32-bit
// divisions while out has fewer than 2^32 elements). out's dimensions are in's before the axis, then
// the indices', then in's after the axis; each carries three byte strides: out's, in's (0 for an index
// dimension) and the indices' (0 for the others). Element e at multi-index (i_d) is
//   out[sum i_d * out_d] = in[sum i_d * in_d + indices[sum i_d * idx_d] * in.strides[axis]].
// Size-1 dimensions are dropped and neighbours merged where all three strides allow (C order kept).
// The kernel only copies bits, so its source depends on the element size alone (1, 2, 4 or 8 bytes:
// bool, 16-bit floats and the rest alike), never on sizes or strides: those travel in its one
// by-value argument (TakeArgs). More merged dimensions than the argument holds, or data that is not
// aligned to its element size, is left to the host (on_device = false).

#include <cstdint>
#include <string>

#include "backend/backend.hpp"

namespace xp::detail::cuda {

constexpr int kMaxTakeDims = 8;       // out's dimensions after dropping and merging; beyond: host
constexpr unsigned kTakeBlock = 256;  // threads per block (the kernel's __launch_bounds__)

struct TakeDim {
  std::int64_t size = 1;
  std::int64_t out = 0;  // byte strides: out's,
  std::int64_t in = 0;   // in's (0 for the indices' dimensions),
  std::int64_t idx = 0;  // the indices' (0 for in's dimensions)
};

struct TakePlan {
  const std::byte* in = nullptr;
  const std::byte* indices = nullptr;
  std::byte* out = nullptr;
  int element_size = 0;          // bytes: 1, 2, 4 or 8 (else on_device is false)
  std::int64_t n = 0;            // out's elements; 0: nothing to do
  std::int64_t axis = 0;         // in's byte stride along the axis (0 when that dimension has size 1)
  int nd = 0;                    // dimensions after dropping and merging (may exceed kMaxTakeDims)
  TakeDim dims[kMaxTakeDims]{};  // C order; filled when nd <= kMaxTakeDims
  bool on_device = true;         // false: more dimensions than the kernel takes, or misaligned data
};

// Checks the request (ValueError: axis out of range, dtypes, out's shape not in's with the axis replaced
// by the indices' shape, int64 indices) and plans it.
TakePlan plan_take(const View& in, const View& indices, int axis, const View& out);

// The translation unit for elements of `element_size` bytes (1, 2, 4, 8; else ValueError), one
// kernel named take_kernel_name().
std::string take_source(int element_size);
// A cache key: equal keys <=> identical source.
std::string take_key(int element_size);
const char* take_kernel_name() noexcept;  // "xp_take"

// The kernel's one argument (by value), every field 8 bytes:
//   in, indices, out     device addresses of the first elements
//   n, axis, nd          out's elements, in's stride along the axis, dimensions
//   shape[8], sout[8], sin[8], sidx[8]
struct TakeArgs {
  std::uint64_t in = 0, indices = 0, out = 0;
  std::int64_t n = 0, axis = 0, nd = 0;
  std::int64_t shape[kMaxTakeDims]{}, sout[kMaxTakeDims]{}, sin[kMaxTakeDims]{}, sidx[kMaxTakeDims]{};
};
static_assert(sizeof(TakeArgs) == 8 * (6 + 4 * kMaxTakeDims));
TakeArgs take_args(const TakePlan& plan);

// Blocks of kTakeBlock threads for n elements: one element per thread, at most 16 blocks per
// multiprocessor (the threads loop over the rest).
unsigned take_grid(std::int64_t n, int multiprocessors) noexcept;

}  // namespace xp::detail::cuda
