#pragma once

// Sorting and searching on a CUDA device: the source of device/sort.cuh's program and its
// argument (testable without a GPU), launched by cuda_backend.cpp. One program per key width
// (4 or 8 bytes: elements of 1 to 4 bytes sort as 4-byte keys) and position width (4 bytes while
// the array has fewer than 2^32 elements); dtypes, sizes and addresses travel in its argument.

#include <cstdint>
#include <string>

namespace xp::detail::cuda {

constexpr std::int64_t kSortTile = 4096;   // elements a block ranks in one pass (XP_SORT_TILE)
constexpr std::int64_t kScanChunk = 4096;  // values a block scans (xp_sort_scan_parts)

// device/sort.cuh's Args, every field as the kernels read it.
struct SortArgs {
  std::uint64_t in = 0, keys[2]{}, pay[2]{}, hist = 0, part = 0, values = 0, indices = 0, mask = 0, out = 0;
  std::int64_t n = 0, row = 1, blocks = 0, hist_len = 0, parts = 0, m = 0, inner = 0, stride0 = 0, dst_rows = 0;
  std::int32_t esize = 0, dtype = 0, descending = 0, shift = 0, row_pass = 0, src = 0, right = 0, bits = 0;
};
static_assert(sizeof(SortArgs) == 192);

// The translation unit for keys of key_bytes (4 or 8) and positions of pay_bytes (4 or 8); its
// kernels: xp_sort_init, xp_sort_hist, xp_sort_scan_parts, xp_sort_scan_top, xp_sort_scan_apply,
// xp_sort_scatter, xp_sort_finish, xp_scatter_last, xp_scatter, xp_nonzero_count,
// xp_nonzero_write, xp_searchsorted. ValueError for other widths.
std::string sort_source(int key_bytes, int pay_bytes);
std::string sort_key_text(int key_bytes, int pay_bytes);  // equal keys <=> identical source
constexpr const char* kSortAnchor = "xp_sort_scatter";    // every sort program has it

}  // namespace xp::detail::cuda
