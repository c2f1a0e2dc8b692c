// Sorting and searching on the CPU (sort.hpp).
#include "backend/cpu/sort.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "backend/backend.hpp"
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

// ---- The stable radix sort of Backend::sort ----
//
// A row's keys are the unsigned keys of backend/sort_keys.hpp (descending: inverted), computed as
// they are read. A least-significant-digit radix sort orders them: 11-bit digits for rows of at
// least kWideRow elements of 32- or 64-bit keys (3 passes for 32 bits), else 8-bit digits. One read
// of the row counts the digits of every pass; a pass whose digit every key shares is skipped. Each
// pass writes through a buffer of one cache line per digit value (software write combining: whole
// lines reach memory, with streaming stores on long rows, one 64-byte store a line where the CPU has
// AVX-512) and splits the row over the threads: chunk t of the source goes after chunks 0..t-1
// within each digit's range of the destination (stable). Where there are several chunks, a read of
// the pass's output counts the next pass's digit per chunk (one digit: 6 ms on two threads for 2^24
// keys, where counting each item as its line was written took 12 ms). The counting reads make keys
// or digits 256 at a time with loops the compiler vectorizes (the float keys made without branches)
// and ask for the lines eight blocks ahead (software prefetch: without it they waited on memory at
// each block, 9.4 ms instead of 6). What is
// sorted is the key alone where only the values are wanted (the sorted keys turned back into the
// values' bits), a key and a 32-bit position packed into 64 bits where positions are wanted, else a
// (key, position) pair. The first pass reads the input, the last writes the output where it holds
// what is sorted (values alone; positions alone, turned into int64 as the lines are written): the
// only scratch is one row. Keys shared by several bit patterns (-0.0 and +0.0, NaNs) are put back to
// their own bits in input order after a values-only sort, in one more read of the row where the row
// has more than one pattern of them. Rows of at most kSmallRow elements are sorted by
// std::stable_sort instead. docs/performance.md has the measurements.

enum class Kind { bits, sign, real };  // bool and unsigned integers; signed integers; floats

template <class K>
constexpr K kTop = static_cast<K>(K{1} << (sizeof(K) * 8 - 1));

// sort_key of backend/sort_keys.hpp for one class of dtypes (no switch per element), then the
// descending inversion (flip: all ones or zero).
template <class K, Kind kind>
struct Codec {
  K inf = 0, flip = 0;
  K zero_bits = 0, nan_bits = 0;  // what decode gives for the keys of zeros and NaNs
  K encode(K bits) const noexcept {
    if constexpr (kind == Kind::bits) {
      return static_cast<K>(bits ^ flip);
    } else if constexpr (kind == Kind::sign) {
      return static_cast<K>(bits ^ kTop<K> ^ flip);
    } else {
      // Without branches, in signed arithmetic (SSE2 compares signed integers only), so that the
      // compiler vectorizes the loops that make keys: a negative number's bits are inverted (the
      // arithmetic shift of its sign gives all ones), a positive one's sign bit set.
      using S = std::make_signed_t<K>;
      const auto neg = static_cast<K>(static_cast<S>(bits) >> (sizeof(K) * 8 - 1));
      const auto mag = static_cast<S>(bits & static_cast<K>(~kTop<K>));
      K k = static_cast<K>(bits ^ (neg | kTop<K>));
      k = mag == 0 ? kTop<K> : k;
      k = mag > static_cast<S>(inf) ? static_cast<K>(~K{0}) : k;
      return static_cast<K>(k ^ flip);
    }
  }
  // The bits of the element of key k: exact except for zeros and NaNs, whose keys are shared by
  // several bit patterns (given as zero_bits and nan_bits).
  K decode(K k) const noexcept {
    k = static_cast<K>(k ^ flip);
    if constexpr (kind == Kind::bits) {
      return k;
    } else if constexpr (kind == Kind::sign) {
      return static_cast<K>(k ^ kTop<K>);
    } else {  // without branches, as encode
      using S = std::make_signed_t<K>;
      const auto pos = static_cast<K>(static_cast<S>(k) >> (sizeof(K) * 8 - 1));
      K bits = static_cast<K>(k ^ (static_cast<K>(~pos) | kTop<K>));
      bits = k == kTop<K> ? zero_bits : bits;
      bits = k == static_cast<K>(~K{0}) ? nan_bits : bits;
      return bits;
    }
  }
  // Whether key k is shared by several bit patterns (zeros, NaNs).
  bool shared(K k) const noexcept {
    if constexpr (kind != Kind::real) {
      (void)k;
      return false;
    } else {
      k = static_cast<K>(k ^ flip);
      return k == kTop<K> || k == static_cast<K>(~K{0});
    }
  }
};

// What a pass moves: Tr::Item, its key (Tr::key) and, where it has one, its position (Tr::index).
template <class K>
struct PlainItems {  // the key alone
  using Item = K;
  static constexpr bool kIndexed = false;
  static K key(Item x) noexcept { return x; }
  static Item make(K k, i64) noexcept { return k; }
  static i64 index(Item) noexcept { return 0; }
};
template <class K>
struct PackedItems {  // key << 32 | position, positions below 2^32
  static_assert(sizeof(K) <= 4);
  using Item = std::uint64_t;
  static constexpr bool kIndexed = true;
  static K key(Item x) noexcept { return static_cast<K>(x >> 32); }
  static Item make(K k, i64 i) noexcept { return (static_cast<Item>(k) << 32) | static_cast<std::uint64_t>(i); }
  static i64 index(Item x) noexcept { return static_cast<i64>(x & 0xFFFFFFFFu); }
};
template <class K>
struct PairItems {  // any key, any position
  struct Item {
    std::uint64_t k, i;
  };
  static constexpr bool kIndexed = true;
  static K key(const Item& x) noexcept { return static_cast<K>(x.k); }
  static Item make(K k, i64 i) noexcept { return {k, static_cast<std::uint64_t>(i)}; }
  static i64 index(const Item& x) noexcept { return static_cast<i64>(x.i); }
};

constexpr i64 kSmallRow = 128;              // rows up to this: std::stable_sort
constexpr i64 kWideRow = i64{1} << 16;      // rows from this (32- and 64-bit keys): 11-bit digits
constexpr i64 kThreadRow = i64{1} << 16;    // one thread per this many elements of a row, at most
constexpr i64 kStreamBytes = i64{4} << 20;  // passes over at least this many bytes: streaming stores

// Uninitialized memory on a cache line's boundary. Big buffers come from the CPU backend's allocator,
// which puts them on huge pages and keeps freed ones for the next request of the size: a sort called
// again does not fault its scratch in again.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }
  T* get(std::size_t want) {
    if (want > n_) {
      reset();
      const std::size_t bytes = std::max<std::size_t>(want * sizeof(T), 64);
      if (bytes >= kBig) {
        a_ = backend_for(Device::cpu()).allocate(bytes);
        p_ = reinterpret_cast<T*>(a_.data);
      } else {
        p_ = static_cast<T*>(::operator new ((bytes + 63) / 64 * 64, std::align_val_t{64}));
      }
      n_ = want;
    }
    return p_;
  }
  T* data() const noexcept { return p_; }

 private:
  void reset() noexcept {
    if (a_.data != nullptr) {
      if (a_.release != nullptr) a_.release(a_.data, a_.bytes);
      a_ = Allocation{};
    } else if (p_ != nullptr) {
      ::operator delete (static_cast<void*>(p_), std::align_val_t{64});
    }
    p_ = nullptr;
    n_ = 0;
  }
  static constexpr std::size_t kBig = std::size_t{1} << 20;
  Allocation a_;
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// Float rows' zeros and NaNs, whose keys are shared by several bit patterns: how many, whether their
// bits differ (then the values are put right after the sort), and the negative numbers before them.
template <class K>
struct Shared {
  i64 neg = 0, zeros = 0, nans = 0;
  K zero_or = 0, zero_and = static_cast<K>(~K{0}), nan_or = 0, nan_and = static_cast<K>(~K{0});
  void add(const Shared& o) noexcept {
    neg += o.neg, zeros += o.zeros, nans += o.nans;
    zero_or |= o.zero_or, zero_and &= o.zero_and, nan_or |= o.nan_or, nan_and &= o.nan_and;
  }
  bool mixed() const noexcept { return (zeros > 0 && zero_or != zero_and) || (nans > 0 && nan_or != nan_and); }
};

template <class K, Kind kind>
void note_shared(Shared<K>& s, K bits, K inf) noexcept {
  if constexpr (kind == Kind::real) {
    const K mag = static_cast<K>(bits & static_cast<K>(~kTop<K>));
    const bool nan = mag > inf, zero = mag == 0;
    s.neg += !nan && !zero && (bits & kTop<K>) != 0;
    s.zeros += zero;
    s.nans += nan;
    s.zero_or |= zero ? bits : K{0};
    s.zero_and &= zero ? bits : static_cast<K>(~K{0});
    s.nan_or |= nan ? bits : K{0};
    s.nan_and &= nan ? bits : static_cast<K>(~K{0});
  } else {
    (void)s, (void)bits, (void)inf;
  }
}

#if defined(__SSE2__)
inline void stream_line(void* dst, const void* src) noexcept {
  auto* d = static_cast<__m128i*>(dst);
  const auto* s = static_cast<const __m128i*>(src);
  _mm_stream_si128(d, _mm_load_si128(s));
  _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
  _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
  _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
}
inline void stream_fence() noexcept {
  _mm_sfence();
}
#else
inline void stream_line(void* dst, const void* src) noexcept {
  std::memcpy(dst, src, 64);
}
inline void stream_fence() noexcept {}
#endif

// A line with one 64-byte streaming store where the CPU has AVX-512: the CPU's write-combining
// buffer never holds a partial line (four 16-byte stores kept the scatter waiting on them longer).
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) void stream_line_wide(void* dst, const void* src) noexcept {
  _mm512_stream_si512(static_cast<__m512i*>(dst), _mm512_load_si512(src));
}
bool wide_streams() noexcept {
  static const bool wide = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return wide;
}
#else
inline void stream_line_wide(void* dst, const void* src) noexcept {
  stream_line(dst, src);
}
inline bool wide_streams() noexcept {
  return false;
}
#endif

// Asks for the cache lines of the n items `ahead` blocks of n after p: the counting loops read a
// block, then count it without a load in flight, so the hardware's prefetch alone leaves them
// waiting on memory at each block.
template <class T>
inline void prefetch_ahead(const T* p, int n) noexcept {
  constexpr int kAhead = 8;
  const auto* b = reinterpret_cast<const char*>(p + static_cast<i64>(n) * kAhead);
  for (int o = 0; o < n * static_cast<int>(sizeof(T)); o += 64) __builtin_prefetch(b + o);
}

// One row's sort. `in`: the row's element bits; `values` and `indices`: its outputs (either null).
template <class K, Kind kind, class Tr>
class RowSort {
 public:
  using Item = typename Tr::Item;
  static constexpr int kLine = static_cast<int>(64 / sizeof(Item));
  static_assert(64 % sizeof(Item) == 0);

  RowSort(const Codec<K, kind>& codec, int threads) : codec_(codec), threads_(threads) {}

  void run(const K* in, i64 n, K* values, i64* indices) {
    in_ = in;
    n_ = n;
    if (n <= kSmallRow) return small(values, indices);
    T_ = static_cast<int>(std::clamp<i64>(threads_, 1, std::max<i64>(1, n / kThreadRow)));
    const int key_bits = static_cast<int>(sizeof(K)) * 8;
    D_ = key_bits >= 32 && n >= kWideRow ? 11 : 8;
    B_ = 1 << D_;
    P_ = (key_bits + D_ - 1) / D_;
    count_digits();
    std::vector<int> active;
    for (int d = 0; d < P_; ++d) {
      bool shared_digit = false;
      for (int b = 0; b < B_ && !shared_digit; ++b) {
        i64 total = 0;
        for (int t = 0; t < T_; ++t) total += hist_[(static_cast<std::size_t>(t) * P_ + d) * B_ + b];
        shared_digit = total == n;
      }
      if (!shared_digit) active.push_back(d);
    }
    if (active.empty()) {  // every key equal: the input order
      if (values != nullptr) std::memcpy(values, in, static_cast<std::size_t>(n) * sizeof(K));
      if (indices != nullptr) std::iota(indices, indices + n, i64{0});
      return;
    }
    // Where the last pass writes: the output itself where it holds Items (the pass turning each into
    // the output's element), else scratch and a last sequential step.
    Item* out = nullptr;
    if constexpr (!Tr::kIndexed) {
      out = reinterpret_cast<Item*>(values);
    } else if constexpr (sizeof(Item) == 8) {
      if (values == nullptr) out = reinterpret_cast<Item*>(indices);
    }
    const int P = static_cast<int>(active.size());
    Item* s0 = scratch0_.get(static_cast<std::size_t>(n));
    Item* s1 = out != nullptr ? nullptr : scratch1_.get(static_cast<std::size_t>(n));
    wc_.get(static_cast<std::size_t>(T_) * B_ * kLine);
    pos_.resize(static_cast<std::size_t>(T_) * B_ * 2);
    if (T_ > 1) next_.assign(static_cast<std::size_t>(T_) * B_, 0);
    const bool nt = n * static_cast<i64>(sizeof(Item)) >= kStreamBytes;
    Item* src = nullptr;
    for (int j = 0; j < P; ++j) {
      Item* dst = out != nullptr ? (((P - 1 - j) % 2 == 0) ? out : s0) : (j % 2 == 0 ? s0 : s1);
      const bool last = j == P - 1;
      pass(src, dst, active[j], j == 0, last && out != nullptr, nt);
      if (T_ > 1 && !last) count_chunks(dst, active[j + 1]);
      src = dst;
    }
    if (out == nullptr) emit(src, values, indices);
    if constexpr (kind == Kind::real && !Tr::kIndexed) {
      if (shared_.mixed()) restore_shared(values, false);
    }
  }

 private:
  K key_of(i64 i) const noexcept { return codec_.encode(in_[i]); }
  i64 chunk_begin(int t) const noexcept { return n_ * t / T_; }

  // Rows of at most kSmallRow: a merge sort of the items.
  void small(K* values, i64* indices) {
    std::vector<Item> items(static_cast<std::size_t>(n_));
    Shared<K> sh;
    for (i64 i = 0; i < n_; ++i) {
      items[static_cast<std::size_t>(i)] = Tr::make(key_of(i), i);
      note_shared<K, kind>(sh, in_[i], codec_.inf);
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return Tr::key(a) < Tr::key(b); });
    shared_ = sh;
    set_shared_bits();
    emit(items.data(), values, indices);
    if constexpr (kind == Kind::real && !Tr::kIndexed) {
      if (shared_.mixed()) restore_shared(values, true);
    }
  }

  void set_shared_bits() noexcept {
    codec_.zero_bits = shared_.zero_or;
    codec_.nan_bits = shared_.nan_or;
  }

  // The sorted items to the outputs.
  void emit(const Item* items, K* values, i64* indices) const {
    const i64 n = n_;
    parallel_for(n, 65536, [&](i64 b, i64 e) {
      for (i64 i = b; i < e; ++i) {
        const Item& x = items[i];
        if (indices != nullptr) indices[i] = Tr::index(x);
        if (values != nullptr) {
          const K k = Tr::key(x);
          if constexpr (Tr::kIndexed) {
            values[i] = codec_.shared(k) ? in_[Tr::index(x)] : codec_.decode(k);
          } else {
            values[i] = codec_.decode(k);
          }
        }
      }
    });
  }

  // The counts of every pass's digit in every chunk of the input (hist_[t][d][b]) and, for floats,
  // the zeros and NaNs.
  void count_digits() {
    if (D_ == 11)
      count_digits_as<11>();
    else
      count_digits_as<8>();
  }
  template <int D>
  void count_digits_as() {
    constexpr int P = (static_cast<int>(sizeof(K)) * 8 + D - 1) / D, B = 1 << D;
    constexpr std::uint32_t mask = B - 1;
    hist_.assign(static_cast<std::size_t>(T_) * P * B, 0);
    flags_.assign(static_cast<std::size_t>(T_), {});
    const Codec<K, kind> codec = codec_;
    // Only a float row sorted by its keys alone needs its zeros and NaNs.
    const bool note = kind == Kind::real && !Tr::kIndexed;
    parallel_for(T_, 1, [&](i64 tb, i64 te) {
      std::vector<std::uint32_t> counts(static_cast<std::size_t>(P) * B * 2);
      std::uint32_t* __restrict c = counts.data();
      std::uint32_t* __restrict c2 = c + static_cast<std::size_t>(P) * B;
      for (i64 t = tb; t < te; ++t) {
        const K* __restrict in = in_;
        const i64 lo = chunk_begin(static_cast<int>(t)), hi = chunk_begin(static_cast<int>(t) + 1);
        std::vector<std::uint8_t>& flags = flags_[static_cast<std::size_t>(t)];
        if (note) flags.assign(static_cast<std::size_t>((hi - lo + 255) / 256), 0);
        for (i64 b0 = chunk_begin(static_cast<int>(t)); b0 < hi; b0 += i64{1} << 30) {
          std::fill(counts.begin(), counts.end(), 0u);
          const i64 b1 = std::min(hi, b0 + (i64{1} << 30));
          // 256 keys at a time: made (and the zeros and NaNs noted) by a loop the compiler
          // vectorizes, then counted.
          K keys[256];
          for (i64 i0 = b0; i0 < b1; i0 += 256) {
            const int m = static_cast<int>(std::min<i64>(256, b1 - i0));
            prefetch_ahead(in + i0, 256);
            for (int j = 0; j < m; ++j) keys[j] = codec.encode(in[i0 + j]);
            if (note) {  // any zero or NaN in these 256? (looked at afterwards where there is one)
              K any = 0;
              for (int j = 0; j < m; ++j) {
                const K k = keys[j] ^ codec.flip;
                any |= static_cast<K>(k == kTop<K> || k == static_cast<K>(~K{0}));
              }
              flags[static_cast<std::size_t>((i0 - lo) / 256)] = any != 0;
            }
            // Two tables, even and odd elements: a run of equal digits (the top digit of floats
            // near one magnitude) then waits on one increment in two.
            int j = 0;
            for (; j + 1 < m; j += 2) {
              const auto k0 = static_cast<std::uint64_t>(keys[j]), k1 = static_cast<std::uint64_t>(keys[j + 1]);
              for (int d = 0; d < P; ++d) {
                ++c[d * B + ((k0 >> (d * D)) & mask)];
                ++c2[d * B + ((k1 >> (d * D)) & mask)];
              }
            }
            if (j < m) {
              const auto k = static_cast<std::uint64_t>(keys[j]);
              for (int d = 0; d < P; ++d) ++c[d * B + ((k >> (d * D)) & mask)];
            }
          }
          i64* h = hist_.data() + static_cast<std::size_t>(t) * P * B;
          for (std::size_t x = 0; x < static_cast<std::size_t>(P) * B; ++x) h[x] += c[x] + c2[x];
        }
      }
    });
    shared_ = Shared<K>{};
    if (note) {
      // The negative numbers: the keys below the zeros' (above, descending). Their top digit's
      // buckets start at the zeros' key, so the top digit's counts give them.
      const int top = P - 1;
      const auto split = static_cast<std::size_t>(static_cast<std::uint64_t>(kTop<K>) >> (top * D));
      i64 below = 0;
      for (int t = 0; t < T_; ++t)
        for (std::size_t b = 0; b < split; ++b) below += hist_[(static_cast<std::size_t>(t) * P + top) * B + b];
      for_flagged([&](i64 i) { note_shared<K, kind>(shared_, in_[i], codec.inf); });
      shared_.neg = codec.flip != 0 ? n_ - below : below;
    }
    set_shared_bits();
  }

  // Calls f(i) for the elements of the blocks of 256 that count_digits saw a zero or NaN in, in order.
  template <class F>
  void for_flagged(F&& f) const {
    for (int t = 0; t < T_; ++t) {
      const i64 lo = chunk_begin(t), hi = chunk_begin(t + 1);
      const std::vector<std::uint8_t>& flags = flags_[static_cast<std::size_t>(t)];
      for (std::size_t k = 0; k < flags.size(); ++k) {
        if (flags[k] == 0) continue;
        const i64 b = lo + static_cast<i64>(k) * 256;
        for (i64 i = b; i < std::min(hi, b + 256); ++i) f(i);
      }
    }
  }

  // Puts the zeros and NaNs of a float row sorted by its keys alone back to their own bits, in input
  // order: they hold one range each of the sorted row.
  void restore_shared(K* values, bool all) const {
    const Shared<K>& s = shared_;
    const bool descending = codec_.flip != 0;
    i64 z = descending ? n_ - s.neg - s.zeros : s.neg;
    i64 q = descending ? 0 : n_ - s.nans;
    auto put = [&](i64 i) {
      const K bits = in_[i];
      const K mag = static_cast<K>(bits & static_cast<K>(~kTop<K>));
      if (mag == 0) values[z++] = bits;
      if (mag > codec_.inf) values[q++] = bits;
    };
    if (all) {
      for (i64 i = 0; i < n_; ++i) put(i);
    } else {
      for_flagged(put);
    }
  }

  // The counts of digit d in every chunk of items (next_[t][b]), for the pass on d where the row is
  // split over threads. A read of the row, one digit: cheaper than counting each item as the pass
  // before wrote it (which took 12 ms of a 32 ms pass on two threads).
  void count_chunks(const Item* items, int d) {
    parallel_for(T_, 1, [&](i64 tb, i64 te) {
      // Locals, not the lambda's captures: the compiler reloads a capture after each counter store.
      const int B = B_;
      const int shift = d * D_;
      const auto mask = static_cast<std::uint64_t>(B - 1);
      std::vector<std::uint32_t> counts(static_cast<std::size_t>(B) * 2);
      std::uint32_t* __restrict c = counts.data();
      std::uint32_t* __restrict c2 = c + B;
      for (i64 t = tb; t < te; ++t) {
        std::fill(counts.begin(), counts.end(), 0u);
        const Item* __restrict x = items;
        const i64 lo = chunk_begin(static_cast<int>(t)), hi = chunk_begin(static_cast<int>(t) + 1);
        // 256 digits at a time, made by a loop the compiler vectorizes, then counted in two tables
        // (as in count_digits_as).
        std::uint32_t digits[256];
        for (i64 i0 = lo; i0 < hi; i0 += 256) {
          const int m = static_cast<int>(std::min<i64>(256, hi - i0));
          prefetch_ahead(x + i0, 256);
          for (int j = 0; j < m; ++j)
            digits[j] = static_cast<std::uint32_t>((static_cast<std::uint64_t>(Tr::key(x[i0 + j])) >> shift) & mask);
          int j = 0;
          for (; j + 1 < m; j += 2) {
            ++c[digits[j]];
            ++c2[digits[j + 1]];
          }
          if (j < m) ++c[digits[j]];
        }
        i64* h = next_.data() + static_cast<std::size_t>(t) * B;
        for (int b = 0; b < B; ++b) h[b] = static_cast<i64>(c[b]) + c2[b];
      }
    });
  }

  // One pass on digit d: src (null: the input) to dst.
  void pass(const Item* src, Item* dst, int d, bool first, bool finish, bool nt) {
    const int T = T_, B = B_;
    const int shift = d * D_;
    // Each chunk's counts of this digit: the input's from count_digits, a later pass's from
    // count_chunks (one chunk: the whole row's counts from count_digits).
    std::vector<i64> cnt(static_cast<std::size_t>(T) * B);
    for (int t = 0; t < T; ++t) {
      for (int b = 0; b < B; ++b) {
        i64 c = 0;
        if (first) {
          c = hist_[(static_cast<std::size_t>(t) * P_ + d) * B + b];
        } else if (T == 1) {
          c = hist_[static_cast<std::size_t>(d) * B + b];
        } else {
          c = next_[static_cast<std::size_t>(t) * B + b];
        }
        cnt[static_cast<std::size_t>(t) * B + b] = c;
      }
    }
    i64 running = 0;
    for (int b = 0; b < B; ++b) {
      for (int t = 0; t < T; ++t) {
        pos_[static_cast<std::size_t>(t) * 2 * B + b] = running;      // where chunk t's next item goes
        pos_[static_cast<std::size_t>(t) * 2 * B + B + b] = running;  // where its range starts
        running += cnt[static_cast<std::size_t>(t) * B + b];
      }
    }
    const bool aligned = (reinterpret_cast<std::uintptr_t>(dst) & 63) == 0;
    const bool wide = wide_streams();
    parallel_for(T, 1, [&](i64 tb, i64 te) {
      for (i64 t = tb; t < te; ++t) {
        i64* pos = pos_.data() + static_cast<std::size_t>(t) * 2 * B;
        const i64* start = pos + B;
        Item* wc = wc_.data() + static_cast<std::size_t>(t) * B * kLine;
        // Writes the buffered items of bucket b for positions [s, e) (within one line).
        auto flush = [&](std::uint32_t b, i64 s, i64 e) {
          Item* line = wc + static_cast<std::size_t>(b) * kLine;
          const int o = static_cast<int>(s & (kLine - 1));
          if (finish) {
            for (int j = o; j < o + static_cast<int>(e - s); ++j) line[j] = finish_item(line[j]);
          }
          if (nt && aligned && e - s == kLine) {
            if (wide)
              stream_line_wide(dst + s, line);
            else
              stream_line(dst + s, line);
          } else {
            std::memcpy(static_cast<void*>(dst + s), line + o, static_cast<std::size_t>(e - s) * sizeof(Item));
          }
        };
        const i64 lo = chunk_begin(static_cast<int>(t)), hi = chunk_begin(static_cast<int>(t) + 1);
        if (D_ == 11) {
          if (first)
            scatter_loop<11>(lo, hi, shift, pos, start, wc, flush,
                             [in = in_, codec = codec_](i64 i) { return Tr::make(codec.encode(in[i]), i); });
          else
            scatter_loop<11>(lo, hi, shift, pos, start, wc, flush, [src](i64 i) { return src[i]; });
        } else {
          if (first)
            scatter_loop<8>(lo, hi, shift, pos, start, wc, flush,
                            [in = in_, codec = codec_](i64 i) { return Tr::make(codec.encode(in[i]), i); });
          else
            scatter_loop<8>(lo, hi, shift, pos, start, wc, flush, [src](i64 i) { return src[i]; });
        }
        for (int b = 0; b < B; ++b) {  // the partial lines left
          const i64 e = pos[b];
          if ((e & (kLine - 1)) == 0) continue;
          const i64 s = std::max(e & ~static_cast<i64>(kLine - 1), start[b]);
          if (s < e) flush(static_cast<std::uint32_t>(b), s, e);
        }
        if (nt) stream_fence();
      }
    });
  }

  // Items lo..hi of the source (load(i)) into the line buffers of their digit (bits shift.. of the
  // key), each full line handed to flush(b, s, e) (positions s..e of the destination).
  template <int D, class Flush, class Load>
  static void scatter_loop(i64 lo, i64 hi, int shift, i64* __restrict pos, const i64* __restrict start,
                           Item* __restrict wc, Flush& flush, Load load) {
    constexpr std::uint64_t mask = (1u << D) - 1;
    for (i64 i = lo; i < hi; ++i) {
      const Item x = load(i);
      const auto b = static_cast<std::uint32_t>((static_cast<std::uint64_t>(Tr::key(x)) >> shift) & mask);
      const i64 p = pos[b]++;
      wc[static_cast<std::size_t>(b) * kLine + static_cast<std::size_t>(p & (kLine - 1))] = x;
      if (((p + 1) & (kLine - 1)) == 0) [[unlikely]] {
        const i64 s = p + 1 - kLine;
        flush(b, s >= start[b] ? s : start[b], p + 1);
      }
    }
  }

  // An item of the last pass as the output's element: the value's bits, or the position.
  Item finish_item(const Item& x) const noexcept {
    if constexpr (!Tr::kIndexed) {
      return codec_.decode(x);
    } else {
      if constexpr (sizeof(Item) == 8) return static_cast<Item>(Tr::index(x));
      return x;
    }
  }

  Codec<K, kind> codec_;
  int threads_;
  const K* in_ = nullptr;
  i64 n_ = 0;
  int T_ = 1, D_ = 8, B_ = 256, P_ = 4;
  std::vector<i64> hist_, next_, pos_;
  std::vector<std::vector<std::uint8_t>> flags_;  // count_digits: blocks of 256 with zeros or NaNs
  Shared<K> shared_;
  Buffer<Item> scratch0_, scratch1_, wc_;
};

template <class K, Kind kind, class Tr>
void sort_rows_as(const View& keys, const View& values, const View& indices, const Codec<K, kind>& codec, i64 rows,
                  i64 n) {
  const K* in = reinterpret_cast<const K*>(keys.data);
  K* vo = reinterpret_cast<K*>(values.data);
  i64* io = reinterpret_cast<i64*>(indices.data);
  if (rows == 1) {
    RowSort<K, kind, Tr>(codec, num_threads()).run(in, n, vo, io);
    return;
  }
  const i64 grain = std::max<i64>(1, 65536 / std::max<i64>(n, 1));
  parallel_for(rows, grain, [&](i64 rb, i64 re) {
    RowSort<K, kind, Tr> s(codec, 1);
    for (i64 r = rb; r < re; ++r)
      s.run(in + r * n, n, vo == nullptr ? nullptr : vo + r * n, io == nullptr ? nullptr : io + r * n);
  });
}

template <class K, Kind kind>
void sort_kind(const View& keys, const View& values, const View& indices, bool descending, i64 rows, i64 n) {
  Codec<K, kind> codec;
  codec.flip = descending ? static_cast<K>(~K{0}) : K{0};
  switch (keys.dtype) {
    case DType::float16:
      codec.inf = static_cast<K>(0x7C00u);
      break;
    case DType::bfloat16:
      codec.inf = static_cast<K>(0x7F80u);
      break;
    case DType::float32:
      codec.inf = static_cast<K>(0x7F800000u);
      break;
    case DType::float64:
      codec.inf = static_cast<K>(0x7FF0000000000000ull);
      break;
    default:
      break;
  }
  if (indices.data == nullptr) return sort_rows_as<K, kind, PlainItems<K>>(keys, values, indices, codec, rows, n);
  if constexpr (sizeof(K) <= 4) {
    if (n <= static_cast<i64>(std::numeric_limits<std::uint32_t>::max()))
      return sort_rows_as<K, kind, PackedItems<K>>(keys, values, indices, codec, rows, n);
  }
  return sort_rows_as<K, kind, PairItems<K>>(keys, values, indices, codec, rows, n);
}

template <class K>
void sort_as(const View& keys, const View& values, const View& indices, bool descending, i64 rows, i64 n) {
  switch (keys.dtype) {
    case DType::int8:
    case DType::int16:
    case DType::int32:
    case DType::int64:
      return sort_kind<K, Kind::sign>(keys, values, indices, descending, rows, n);
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::float64:
      return sort_kind<K, Kind::real>(keys, values, indices, descending, rows, n);
    default:
      return sort_kind<K, Kind::bits>(keys, values, indices, descending, rows, n);
  }
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
  if (size == 0 || n == 0 || (values.data == nullptr && indices.data == nullptr)) return;
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
