#pragma once

// Sorting and searching on the CPU (sort.cpp): Backend::sort, scatter, flatnonzero and
// searchsorted of the CPU backend (backend/backend.hpp says what each computes).
// Sort is a stable least-significant-digit radix sort of the keys of backend/sort_keys.hpp (11-bit
// digits on long rows of 32- and 64-bit keys, else 8-bit; one counting read for every pass; passes
// whose digit every key shares skipped; write-combining line buffers), rows in parallel, one long
// row split across the threads; it moves the keys alone where only the values are wanted, else keys
// with positions. Short rows use a stable merge sort of the same keys. sort.cpp's comment has more.

#include "backend/ir.hpp"

namespace xp::detail::cpu {

void sort(const View& keys, const View& values, const View& indices, bool descending);
void scatter(const View& dst, const View& indices, int axis, const View& values);
std::int64_t count_true(const View& mask);
void flatnonzero(const View& mask, const View& values, const View& out);
void searchsorted(const View& sorted, const View& queries, bool right, const View& out);

}  // namespace xp::detail::cpu
