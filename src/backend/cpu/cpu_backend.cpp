// The CPU backend: host memory, the fused evaluator, and the loops of reduce.cpp and linalg.cpp.

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu/fft.hpp"
#include "backend/cpu/fused.hpp"
#include "backend/cpu/lapack.hpp"
#include "backend/cpu/linalg.hpp"
#include "backend/cpu/reduce.hpp"
#include "backend/cpu/sort.hpp"
#include "backend/philox.hpp"
#include "runtime/parallel.hpp"
#include "runtime/spin_lock.hpp"
#include "xp/error.hpp"

namespace xp::detail {

namespace {

template <class T>
void convert_integers(const std::int64_t* src, std::byte* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T v = static_cast<T>(src[i]);
    std::memcpy(dst + i * static_cast<std::int64_t>(sizeof(T)), &v, sizeof(T));
  }
}

constexpr std::size_t kHugePage = std::size_t{1} << 21;
constexpr std::size_t kHugeThreshold = std::size_t{1} << 22;
constexpr std::size_t kMaxBytes = std::size_t{1} << 62;

// Blocks of 64 << k bytes (k < kClasses) kept after they are freed, up to kCacheCap bytes in all.
constexpr int kClasses = 15;  // up to 1 MiB
constexpr std::size_t kCachedMax = std::size_t{64} << (kClasses - 1);
constexpr std::size_t kCacheCap = std::size_t{64} << 20;
// Freed big blocks by exact (rounded) size, at most kBigCacheCap bytes in all.
constexpr std::size_t kBigCacheCap = std::size_t{1} << 30;

// The smallest k with 64 << k >= bytes (bytes <= kCachedMax).
int size_class(std::size_t bytes) {
  return bytes <= 64 ? 0 : static_cast<int>(std::bit_width(bytes - 1)) - 6;
}

std::size_t big_rounded(std::size_t bytes) {
  const std::size_t align = bytes >= kHugeThreshold ? kHugePage : 64;
  return (bytes + align - 1) / align * align;
}

// Host blocks: the caches of freed blocks and the statistics, under one spin lock. A small
// evaluation allocates and frees one block, so this lock is taken twice per operation; counters kept
// under it cost no atomic operations of their own.
class HostBlocks {
 public:
  // A cached block of `size` bytes (`cls` >= 0: small class cls, else a big block), counted as in
  // use; nullptr on a miss, counted by note_fresh once the caller has a block.
  void* take(int cls, std::size_t size) {
    std::lock_guard<SpinLock> lock(lock_);
    ++allocations_;
    void* p = nullptr;
    if (cls >= 0) {
      auto& v = free_[cls];
      if (v.empty()) return nullptr;
      p = v.back();
      v.pop_back();
      cached_ -= size;
    } else {
      for (std::size_t i = 0; i < big_.size(); ++i) {
        if (big_[i].second == size) {
          p = big_[i].first;
          big_.erase(big_.begin() + static_cast<std::ptrdiff_t>(i));
          big_cached_ -= size;
          break;
        }
      }
      if (p == nullptr) return nullptr;
    }
    add_in_use(size);
    return p;
  }
  void note_fresh(std::size_t size) {
    std::lock_guard<SpinLock> lock(lock_);
    add_in_use(size);
  }
  // A block given back: kept while the caches have room, else freed.
  void give_back(void* p, int cls, std::size_t size) {
    std::vector<void*> evicted;
    {
      std::lock_guard<SpinLock> lock(lock_);
      in_use_ -= size;
      if (cls >= 0) {
        if (cached_ + size <= kCacheCap) {
          free_[cls].push_back(p);
          cached_ += size;
          return;
        }
      } else if (size <= kBigCacheCap) {
        // The oldest blocks go first when the cap would be passed (freed after the lock is released).
        while (!big_.empty() && big_cached_ + size > kBigCacheCap) {
          evicted.push_back(big_.front().first);
          big_cached_ -= big_.front().second;
          big_.erase(big_.begin());
        }
        big_.emplace_back(p, size);
        big_cached_ += size;
        p = nullptr;
      }
    }
    for (void* q : evicted) std::free(q);
    std::free(p);
  }
  void release_all() {
    std::vector<void*> blocks;
    {
      std::lock_guard<SpinLock> lock(lock_);
      for (auto& v : free_) {
        blocks.insert(blocks.end(), v.begin(), v.end());
        v.clear();
      }
      for (auto& [p, n] : big_) blocks.push_back(p);
      big_.clear();
      cached_ = big_cached_ = 0;
    }
    for (void* p : blocks) std::free(p);
  }
  // Big blocks only (a failed allocation retries after giving them back to the system).
  void release_big() {
    std::vector<std::pair<void*, std::size_t>> blocks;
    {
      std::lock_guard<SpinLock> lock(lock_);
      blocks.swap(big_);
      big_cached_ = 0;
    }
    for (auto& [p, n] : blocks) std::free(p);
  }
  MemoryStats stats() {
    std::lock_guard<SpinLock> lock(lock_);
    MemoryStats s;
    s.bytes_in_use = in_use_;
    s.bytes_cached = cached_ + big_cached_;
    s.peak_bytes_in_use = peak_;
    s.allocations = allocations_;
    return s;
  }
  std::uint64_t allocations() {
    std::lock_guard<SpinLock> lock(lock_);
    return allocations_;
  }
  void reset_peak() {
    std::lock_guard<SpinLock> lock(lock_);
    peak_ = in_use_;
  }

 private:
  void add_in_use(std::size_t size) {
    in_use_ += size;
    if (in_use_ > peak_) peak_ = in_use_;
  }

  SpinLock lock_;
  std::vector<void*> free_[kClasses];
  std::size_t cached_ = 0;
  std::vector<std::pair<void*, std::size_t>> big_;
  std::size_t big_cached_ = 0;
  // Bytes of blocks held by arrays (their rounded sizes), and the most held at once.
  std::uint64_t allocations_ = 0, in_use_ = 0, peak_ = 0;
};

// Never destroyed: blocks may be freed by arrays that outlive static destruction.
HostBlocks& blocks_ = *new HostBlocks;

class CpuBackend final : public Backend {
 public:
  const char* name() const noexcept override { return "cpu"; }

  Allocation allocate(std::size_t bytes) override {
    Allocation a;
    a.bytes = bytes;
    if (bytes <= kCachedMax) {
      // Small blocks come from a cache of freed ones: a fresh 4 KiB malloc makes glibc consolidate
      // its fast bins, which cost more than the whole 1,024-element addition it is for.
      const int cls = size_class(bytes);
      const std::size_t size = std::size_t{64} << cls;
      void* p = blocks_.take(cls, size);
      if (p == nullptr) {
        if (posix_memalign(&p, 64, size) != 0 || p == nullptr) throw OutOfMemory("cpu", bytes);
        blocks_.note_fresh(size);
      }
      a.data = static_cast<std::byte*>(p);
      a.release = [](std::byte* q, std::size_t n) {
        const int c = size_class(n);
        blocks_.give_back(q, c, std::size_t{64} << c);
      };
      return a;
    }
    // Big blocks on 2 MiB boundaries with transparent huge pages asked for (as NumPy does): the
    // first touch of a fresh 64 MiB block then costs 32 page faults instead of 16,384. Freed big
    // blocks are kept (up to kBigCacheCap bytes) for the next array of the same rounded size, so a
    // loop that makes a new result each time does not fault its pages in again on every call.
    if (bytes > kMaxBytes) throw OutOfMemory("cpu", bytes);
    const bool huge = bytes >= kHugeThreshold;
    const std::size_t align = huge ? kHugePage : 64;
    const std::size_t rounded = big_rounded(bytes);
    void* p = blocks_.take(-1, rounded);
    if (p == nullptr) {
      if (posix_memalign(&p, align, rounded) != 0 || p == nullptr) {
        blocks_.release_big();
        if (posix_memalign(&p, align, rounded) != 0 || p == nullptr) throw OutOfMemory("cpu", bytes, 0, 0, rounded);
      }
      if (huge) madvise(p, rounded, MADV_HUGEPAGE);
      blocks_.note_fresh(rounded);
    }
    a.data = static_cast<std::byte*>(p);
    a.release = [](std::byte* q, std::size_t n) { blocks_.give_back(q, -1, big_rounded(n)); };
    return a;
  }

  void run_fused(const FusedProgram& program) override { cpu::run_fused(program); }
  bool run_flat(Op op, DType operand, DType result, const std::byte* const* args, int nargs, std::byte* out,
                std::int64_t n) override {
    return cpu::run_flat(op, operand, result, args, nargs, out, n);
  }

  void reduce(ReduceOp op, const View& in, std::span<const int> axes, const View& out, double correction) override {
    cpu::reduce(op, in, axes, out, correction);
  }
  void cumulative(ReduceOp op, const View& in, int axis, const View& out, bool include_initial) override {
    cpu::cumulative(op, in, axis, out, include_initial);
  }
  // The CPU has no TF32: every precision computes as float32, bit for bit.
  void matmul(const View& a, const View& b, const View& out, MatmulPrecision) override { cpu::matmul(a, b, out); }
  void vecdot(const View& a, const View& b, const View& out) override { cpu::vecdot(a, b, out); }
  // LAPACK from OpenBLAS (lapack.cpp); never false: without LAPACK it throws, saying what to install.
  bool linalg(const LinalgCall& call, std::span<const View> in, std::span<const View> out,
              std::span<std::int64_t> info) override {
    cpu::lapack_linalg(call, in, out, info);
    return true;
  }
  bool fft(const FftCall& call, const View& in, const View& out) override {
    cpu::fft(call, in, out);
    return true;
  }

  void take(const View& in, const View& indices, int axis, const View& out) override {
    // out = [in's axes before axis][indices' axes][in's axes after axis]
    const int ind = indices.ndim;
    const std::size_t item = itemsize(in.dtype);
    const std::int64_t total = out.size();
    if (in.ndim == 1 && ind == 1 && out.ndim == 1) {  // a gather of elements: typed, in parallel
      switch (item) {
        case 1:
          return gather1<std::uint8_t>(in, indices, out);
        case 2:
          return gather1<std::uint16_t>(in, indices, out);
        case 4:
          return gather1<std::uint32_t>(in, indices, out);
        default:
          return gather1<std::uint64_t>(in, indices, out);
      }
    }
    parallel_for(total, 16384, [&](std::int64_t begin, std::int64_t end) {
      std::int64_t idx[kMaxDims] = {};
      {  // the multi-index of element `begin`
        std::int64_t r = begin;
        for (int d = out.ndim - 1; d >= 0; --d) {
          idx[d] = out.shape[d] == 0 ? 0 : r % out.shape[d];
          r = out.shape[d] == 0 ? 0 : r / out.shape[d];
        }
      }
      for (std::int64_t e = begin; e < end; ++e) {
        std::int64_t src = 0, dst = 0, iofs = 0;
        for (int d = 0; d < out.ndim; ++d) {
          dst += idx[d] * out.strides[d];
          if (d < axis) {
            src += idx[d] * in.strides[d];
          } else if (d < axis + ind) {
            iofs += idx[d] * indices.strides[d - axis];
          } else {
            src += idx[d] * in.strides[d - ind + 1];
          }
        }
        std::int64_t j;
        std::memcpy(&j, indices.data + iofs, sizeof j);
        src += j * in.strides[axis];
        std::memcpy(out.data + dst, in.data + src, item);
        for (int d = out.ndim - 1; d >= 0; --d) {
          if (++idx[d] < out.shape[d]) break;
          idx[d] = 0;
        }
      }
    });
  }
  template <class T>
  static void gather1(const View& in, const View& indices, const View& out) {
    const std::int64_t n = out.shape[0], si = in.strides[0], sx = indices.strides[0], so = out.strides[0];
    parallel_for(n, 32768, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        std::int64_t j;
        std::memcpy(&j, indices.data + i * sx, sizeof j);
        T v;
        std::memcpy(&v, in.data + j * si, sizeof v);
        std::memcpy(out.data + i * so, &v, sizeof v);
      }
    });
  }

  void sort(const View& keys, const View& values, const View& indices, bool descending) override {
    cpu::sort(keys, values, indices, descending);
  }
  void scatter(const View& dst, const View& indices, int axis, const View& values, bool) override {
    cpu::scatter(dst, indices, axis, values);
  }
  std::int64_t count_true(const View& mask) override { return cpu::count_true(mask); }
  void flatnonzero(const View& mask, const View& values, const View& out) override {
    cpu::flatnonzero(mask, values, out);
  }
  void searchsorted(const View& sorted, const View& queries, bool right, const View& out) override {
    cpu::searchsorted(sorted, queries, right, out);
  }

  void fill_random(const RandomRequest& req, const View& out) override {
    const std::int64_t n = out.size();
    const philox::StreamId id{req.seed, req.stream};
    const std::size_t item = itemsize(out.dtype);
    constexpr std::int64_t kChunk = 1 << 14;
    const std::int64_t chunks = (n + kChunk - 1) / kChunk;
    parallel_for(chunks, 4, [&](std::int64_t c0, std::int64_t c1) {
      std::vector<std::int64_t> tmp;
      for (std::int64_t c = c0; c < c1; ++c) {
        const std::int64_t first = c * kChunk, len = std::min(kChunk, n - first);
        std::byte* dst = out.data + first * static_cast<std::int64_t>(item);
        const std::uint64_t f = static_cast<std::uint64_t>(first);
        const std::size_t ulen = static_cast<std::size_t>(len);
        if (req.kind == RandomKind::integers) {
          tmp.resize(ulen);
          philox::fill_integers(id, f, req.low, req.high, std::span<std::int64_t>(tmp.data(), ulen));
          switch (out.dtype) {
            case DType::int8:
              convert_integers<std::int8_t>(tmp.data(), dst, len);
              break;
            case DType::int16:
              convert_integers<std::int16_t>(tmp.data(), dst, len);
              break;
            case DType::int32:
              convert_integers<std::int32_t>(tmp.data(), dst, len);
              break;
            case DType::int64:
              convert_integers<std::int64_t>(tmp.data(), dst, len);
              break;
            case DType::uint8:
              convert_integers<std::uint8_t>(tmp.data(), dst, len);
              break;
            case DType::uint16:
              convert_integers<std::uint16_t>(tmp.data(), dst, len);
              break;
            case DType::uint32:
              convert_integers<std::uint32_t>(tmp.data(), dst, len);
              break;
            case DType::uint64:
              convert_integers<std::uint64_t>(tmp.data(), dst, len);
              break;
            default:
              throw ValueError("integers: not an integer dtype");
          }
          continue;
        }
        const bool normal = req.kind == RandomKind::normal;
        switch (out.dtype) {
          case DType::float32: {
            std::span<float> s(reinterpret_cast<float*>(dst), ulen);
            normal ? philox::fill_normal(id, f, s) : philox::fill_uniform(id, f, s);
            break;
          }
          case DType::float64: {
            std::span<double> s(reinterpret_cast<double*>(dst), ulen);
            normal ? philox::fill_normal(id, f, s) : philox::fill_uniform(id, f, s);
            break;
          }
          case DType::float16: {
            std::span<float16> s(reinterpret_cast<float16*>(dst), ulen);
            normal ? philox::fill_normal(id, f, s) : philox::fill_uniform(id, f, s);
            break;
          }
          case DType::bfloat16: {
            std::span<bfloat16> s(reinterpret_cast<bfloat16*>(dst), ulen);
            normal ? philox::fill_normal(id, f, s) : philox::fill_uniform(id, f, s);
            break;
          }
          default:
            throw ValueError("random floats: not a float dtype");
        }
      }
    });
  }

  void copy_to_host(const std::byte* src, void* dst, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  void copy_from_host(const void* src, std::byte* dst, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }

  // Host memory has no xp limit; in use and peak count the blocks of allocate() (rounded sizes).
  MemoryStats memory_stats() override { return blocks_.stats(); }
  void free_cached() override { blocks_.release_all(); }
  void reset_peak() override { blocks_.reset_peak(); }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend cpu;
  return cpu;
}

namespace {
Backend& backend_of(const Device&) {
  return cpu_backend();
}
// The CPU is served from here: registry.cpp names no backend (backend.hpp).
[[gnu::init_priority(101)]] const BackendKindRegistration g_registration{DeviceKind::cpu, &backend_of};
}  // namespace

std::uint64_t cpu_allocations() noexcept {
  return blocks_.allocations();
}

}  // namespace xp::detail
