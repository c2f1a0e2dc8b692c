// Sorting and searching on the CPU (sort.hpp).
#include "backend/cpu/sort.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "backend/sort_keys.hpp"
#include "runtime/parallel.hpp"
#include "xp/error.hpp"

namespace xp::detail::cpu {

namespace {

using i64 = std::int64_t;

template <class T>
T load(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store(std::byte* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);
}

// The element at multi-index `ix` of a view, as a byte offset.
i64 offset_of(const View& v, const i64* ix) noexcept {
  i64 o = 0;
  for (int d = 0; d < v.ndim; ++d) o += ix[d] * v.strides[d];
  return o;
}
// The multi-index of flat element e (C order) of `shape`.
void unravel(i64 e, int ndim, const i64* shape, i64* ix) noexcept {
  for (int d = ndim - 1; d >= 0; --d) {
    const i64 s = shape[d];
    ix[d] = s == 0 ? 0 : e % s;
    e = s == 0 ? 0 : e / s;
  }
}

// A stable LSD radix sort of n keys k with their positions ix, 8 bits a pass, on `threads` chunks
// (chunk t holds elements [t n / T, (t + 1) n / T), so that within a bucket its elements follow
// chunk t - 1's: stable). Digits every key shares are skipped. The result is in (k, ix); kt and it
// are scratch of n elements.
template <class K, class I>
void radix_sort(K* const k0, I* const ix0, K* kt, I* it, i64 n, int threads) {
  K* k = k0;
  I* ix = ix0;
  constexpr int kDigits = static_cast<int>(sizeof(K));
  const int T = static_cast<int>(std::clamp<i64>(threads, 1, std::max<i64>(1, n / 65536)));
  auto chunk_begin = [&](int t) { return n * t / T; };
  // Whole-row counts of every digit, to skip the digits every key shares.
  std::vector<i64> counts(static_cast<std::size_t>(T) * kDigits * 256, 0);
  parallel_for(T, 1, [&](i64 tb, i64 te) {
    for (i64 t = tb; t < te; ++t) {
      i64* c = counts.data() + t * kDigits * 256;
      for (i64 i = chunk_begin(static_cast<int>(t)); i < chunk_begin(static_cast<int>(t) + 1); ++i) {
        const K key = k[i];
        for (int d = 0; d < kDigits; ++d) ++c[d * 256 + ((key >> (8 * d)) & 0xFF)];
      }
    }
  });
  std::vector<i64> offsets(static_cast<std::size_t>(T) * 256);
  for (int d = 0; d < kDigits; ++d) {
    bool trivial = false;
    for (int b = 0; b < 256 && !trivial; ++b) {
      i64 total = 0;
      for (int t = 0; t < T; ++t) total += counts[(t * kDigits + d) * 256 + b];
      trivial = total == n;
    }
    if (trivial) continue;
    const int shift = 8 * d;
    // This pass's counts per chunk: the whole-row ones for one chunk, else counted again (the
    // elements moved between chunks in the passes before).
    if (T > 1) {
      parallel_for(T, 1, [&](i64 tb, i64 te) {
        for (i64 t = tb; t < te; ++t) {
          i64* c = counts.data() + (t * kDigits + d) * 256;
          std::fill(c, c + 256, 0);
          for (i64 i = chunk_begin(static_cast<int>(t)); i < chunk_begin(static_cast<int>(t) + 1); ++i)
            ++c[(k[i] >> shift) & 0xFF];
        }
      });
    }
    i64 running = 0;
    for (int b = 0; b < 256; ++b) {
      for (int t = 0; t < T; ++t) {
        offsets[t * 256 + b] = running;
        running += counts[(t * kDigits + d) * 256 + b];
      }
    }
    parallel_for(T, 1, [&](i64 tb, i64 te) {
      for (i64 t = tb; t < te; ++t) {
        i64* o = offsets.data() + t * 256;
        for (i64 i = chunk_begin(static_cast<int>(t)); i < chunk_begin(static_cast<int>(t) + 1); ++i) {
          const K key = k[i];
          const i64 to = o[(key >> shift) & 0xFF]++;
          kt[to] = key;
          it[to] = ix[i];
        }
      }
    });
    std::swap(k, kt);
    std::swap(ix, it);
  }
  if (k != k0) {  // an odd number of passes: the result is in the scratch
    std::memcpy(k0, k, static_cast<std::size_t>(n) * sizeof(K));
    std::memcpy(ix0, ix, static_cast<std::size_t>(n) * sizeof(I));
  }
}

// Sorts `rows` rows of n elements of K-sized keys.
template <class K, class I>
void sort_rows(const View& keys, const View& values, const View& indices, bool descending, i64 rows, i64 n) {
  const DType t = keys.dtype;
  const std::size_t esz = sizeof(K);
  const bool many_rows = rows > 1;
  const i64 grain = std::max<i64>(1, 65536 / std::max<i64>(n, 1));
  parallel_for(rows, grain, [&](i64 rb, i64 re) {
    std::vector<K> k(static_cast<std::size_t>(n)), kt;
    std::vector<I> ix(static_cast<std::size_t>(n)), it;
    for (i64 r = rb; r < re; ++r) {
      const std::byte* src = keys.data + r * n * static_cast<i64>(esz);
      for (i64 i = 0; i < n; ++i) {
        const K key = sort_key<K>(t, load<K>(src + i * static_cast<i64>(esz)));
        k[i] = descending ? static_cast<K>(~key) : key;
        ix[i] = static_cast<I>(i);
      }
      if (n <= 512) {
        // Short rows: a stable merge sort of the positions by key.
        std::stable_sort(ix.begin(), ix.end(), [&](I a, I b) { return k[a] < k[b]; });
      } else {
        kt.resize(static_cast<std::size_t>(n));
        it.resize(static_cast<std::size_t>(n));
        radix_sort<K, I>(k.data(), ix.data(), kt.data(), it.data(), n, many_rows ? 1 : num_threads());
      }
      if (indices.data != nullptr) {
        std::byte* o = indices.data + r * n * 8;
        for (i64 i = 0; i < n; ++i) store<i64>(o + i * 8, static_cast<i64>(ix[i]));
      }
      if (values.data != nullptr) {
        std::byte* o = values.data + r * n * static_cast<i64>(esz);
        for (i64 i = 0; i < n; ++i)
          std::memcpy(o + i * static_cast<i64>(esz), src + static_cast<i64>(ix[i]) * static_cast<i64>(esz), esz);
      }
    }
  });
}

template <class K>
void sort_as(const View& keys, const View& values, const View& indices, bool descending, i64 rows, i64 n) {
  if (n <= static_cast<i64>(std::numeric_limits<std::uint32_t>::max()))
    sort_rows<K, std::uint32_t>(keys, values, indices, descending, rows, n);
  else
    sort_rows<K, std::uint64_t>(keys, values, indices, descending, rows, n);
}

template <class K>
K key_at(DType t, const std::byte* p) noexcept {
  return sort_key<K>(t, load<K>(p));
}

template <class K>
void searchsorted_as(const View& sorted, const View& queries, bool right, const View& out) {
  const DType t = sorted.dtype;
  const i64 n = sorted.shape[0], st = sorted.strides[0];
  const i64 total = queries.size();
  parallel_for(total, 4096, [&](i64 b, i64 e) {
    i64 ix[kMaxDims];
    for (i64 q = b; q < e; ++q) {
      unravel(q, queries.ndim, queries.shape, ix);
      const K key = key_at<K>(t, queries.data + offset_of(queries, ix));
      i64 lo = 0, hi = n;  // the answer is in [lo, hi]
      while (lo < hi) {
        const i64 mid = lo + (hi - lo) / 2;
        const K m = key_at<K>(t, sorted.data + mid * st);
        if (right ? m <= key : m < key)
          lo = mid + 1;
        else
          hi = mid;
      }
      store<i64>(out.data + offset_of(out, ix), lo);
    }
  });
}

}  // namespace

void sort(const View& keys, const View& values, const View& indices, bool descending) {
  if (keys.ndim < 1) throw ValueError("sort: the backend sorts rows of an array of at least one dimension");
  if (!keys.is_c_contiguous()) throw ValueError("sort: the backend sorts C-contiguous keys");
  const i64 n = keys.shape[keys.ndim - 1];
  const i64 size = keys.size();
  if (size == 0 || n == 0) return;
  const i64 rows = size / n;
  switch (itemsize(keys.dtype)) {
    case 1:
      return sort_as<std::uint8_t>(keys, values, indices, descending, rows, n);
    case 2:
      return sort_as<std::uint16_t>(keys, values, indices, descending, rows, n);
    case 4:
      return sort_as<std::uint32_t>(keys, values, indices, descending, rows, n);
    default:
      return sort_as<std::uint64_t>(keys, values, indices, descending, rows, n);
  }
}

void scatter(const View& dst, const View& indices, int axis, const View& values) {
  const int ind = indices.ndim;
  const std::size_t item = itemsize(dst.dtype);
  const i64 total = values.size();
  i64 idx[kMaxDims] = {};
  // In C order of the values, one element after another: where an index repeats, the last wins.
  for (i64 e = 0; e < total; ++e) {
    i64 to = 0, from = 0, iofs = 0;
    for (int d = 0; d < values.ndim; ++d) {
      from += idx[d] * values.strides[d];
      if (d < axis) {
        to += idx[d] * dst.strides[d];
      } else if (d < axis + ind) {
        iofs += idx[d] * indices.strides[d - axis];
      } else {
        to += idx[d] * dst.strides[d - ind + 1];
      }
    }
    to += load<i64>(indices.data + iofs) * dst.strides[axis];
    std::memcpy(dst.data + to, values.data + from, item);
    for (int d = values.ndim - 1; d >= 0; --d) {
      if (++idx[d] < values.shape[d]) break;
      idx[d] = 0;
    }
  }
}

namespace {
constexpr i64 kMaskBlock = 1 << 16;
i64 count_block(const std::uint8_t* m, i64 begin, i64 end) {
  i64 c = 0;
  for (i64 i = begin; i < end; ++i) c += m[i] != 0;
  return c;
}
}  // namespace

std::int64_t count_true(const View& mask) {
  const i64 n = mask.size();
  const auto* m = reinterpret_cast<const std::uint8_t*>(mask.data);
  const i64 blocks = (n + kMaskBlock - 1) / kMaskBlock;
  std::vector<i64> c(static_cast<std::size_t>(blocks), 0);
  parallel_for(blocks, 4, [&](i64 b, i64 e) {
    for (i64 blk = b; blk < e; ++blk) c[blk] = count_block(m, blk * kMaskBlock, std::min(n, (blk + 1) * kMaskBlock));
  });
  return std::accumulate(c.begin(), c.end(), i64{0});
}

namespace {
// Block `blk`'s selected elements (T: the values' element type) or positions (T = i64, v = null),
// from out position o on, without a branch per element: every candidate is written to a buffer, the
// count advancing past the selected ones only, then the buffer copied out.
template <class T>
void select_block(const std::uint8_t* m, const std::byte* v, std::byte* out, i64 n, i64 blk, i64 o) {
  T buf[1025];
  const i64 hi = std::min(n, (blk + 1) * kMaskBlock);
  for (i64 i0 = blk * kMaskBlock; i0 < hi; i0 += 1024) {
    i64 k = 0;
    const i64 i1 = std::min(hi, i0 + 1024);
    for (i64 i = i0; i < i1; ++i) {
      if constexpr (std::is_same_v<T, i64>) {
        if (v == nullptr) {
          buf[k] = i;
          k += m[i] != 0;
          continue;
        }
      }
      std::memcpy(&buf[k], v + i * static_cast<i64>(sizeof(T)), sizeof(T));
      k += m[i] != 0;
    }
    std::memcpy(out + static_cast<i64>(sizeof(T)) * o, buf, static_cast<std::size_t>(k) * sizeof(T));
    o += k;
  }
}
}  // namespace

void flatnonzero(const View& mask, const View& values, const View& out) {
  const i64 n = mask.size();
  const auto* m = reinterpret_cast<const std::uint8_t*>(mask.data);
  const i64 blocks = (n + kMaskBlock - 1) / kMaskBlock;
  std::vector<i64> start(static_cast<std::size_t>(blocks) + 1, 0);
  parallel_for(blocks, 4, [&](i64 b, i64 e) {
    for (i64 blk = b; blk < e; ++blk)
      start[blk + 1] = count_block(m, blk * kMaskBlock, std::min(n, (blk + 1) * kMaskBlock));
  });
  for (i64 b = 0; b < blocks; ++b) start[b + 1] += start[b];
  if (start[blocks] != out.size())
    throw ValueError("flatnonzero: the output holds " + std::to_string(out.size()) + " elements, the mask has " +
                     std::to_string(start[blocks]) + " nonzero elements");
  const std::byte* v = values.data;
  const std::size_t isz = v == nullptr ? 8 : itemsize(values.dtype);
  parallel_for(blocks, 4, [&](i64 b, i64 e) {
    for (i64 blk = b; blk < e; ++blk) {
      switch (isz) {
        case 1:
          select_block<std::uint8_t>(m, v, out.data, n, blk, start[blk]);
          break;
        case 2:
          select_block<std::uint16_t>(m, v, out.data, n, blk, start[blk]);
          break;
        case 4:
          select_block<std::uint32_t>(m, v, out.data, n, blk, start[blk]);
          break;
        default:
          select_block<i64>(m, v, out.data, n, blk, start[blk]);
      }
    }
  });
}

void searchsorted(const View& sorted, const View& queries, bool right, const View& out) {
  if (sorted.ndim != 1) throw ValueError("searchsorted: the sorted array must be 1-D");
  if (queries.dtype != sorted.dtype)
    throw ValueError("searchsorted: the queries' dtype differs from the sorted array's");
  switch (itemsize(sorted.dtype)) {
    case 1:
      return searchsorted_as<std::uint8_t>(sorted, queries, right, out);
    case 2:
      return searchsorted_as<std::uint16_t>(sorted, queries, right, out);
    case 4:
      return searchsorted_as<std::uint32_t>(sorted, queries, right, out);
    default:
      return searchsorted_as<std::uint64_t>(sorted, queries, right, out);
  }
}

}  // namespace xp::detail::cpu
