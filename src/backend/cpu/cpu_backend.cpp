// The CPU backend: host memory, the fused evaluator, and the loops of reduce.cpp and linalg.cpp.

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu/fused.hpp"
#include "backend/cpu/linalg.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/cpu/reduce.hpp"
#include "backend/philox.hpp"
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

int size_class(std::size_t bytes) {
  int k = 0;
  while ((std::size_t{64} << k) < bytes) ++k;
  return k;
}

class BlockCache {
 public:
  void* get(int cls) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& v = free_[cls];
    if (v.empty()) return nullptr;
    void* p = v.back();
    v.pop_back();
    cached_ -= std::size_t{64} << cls;
    return p;
  }
  void put(void* p, int cls) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + (std::size_t{64} << cls) <= kCacheCap) {
        free_[cls].push_back(p);
        cached_ += std::size_t{64} << cls;
        return;
      }
    }
    std::free(p);
  }
  std::size_t cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }
  void release_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& v : free_) {
      for (void* p : v) std::free(p);
      v.clear();
    }
    cached_ = 0;
  }

 private:
  std::mutex mutex_;
  std::vector<void*> free_[kClasses];
  std::size_t cached_ = 0;
};

// Never destroyed: blocks may be freed by arrays that outlive static destruction.
BlockCache& cache_ = *new BlockCache;

// Freed big blocks by exact (rounded) size, at most kBigCacheCap bytes in all.
constexpr std::size_t kBigCacheCap = std::size_t{1} << 30;
class BigBlockCache {
 public:
  void* get(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_[i].second == size) {
        void* p = blocks_[i].first;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        cached_ -= size;
        return p;
      }
    }
    return nullptr;
  }
  void put(void* p, std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    // The oldest blocks go first when the cap would be passed.
    while (!blocks_.empty() && cached_ + size > kBigCacheCap) {
      std::free(blocks_.front().first);
      cached_ -= blocks_.front().second;
      blocks_.erase(blocks_.begin());
    }
    if (size > kBigCacheCap) {
      std::free(p);
      return;
    }
    blocks_.emplace_back(p, size);
    cached_ += size;
  }
  void release_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [p, n] : blocks_) std::free(p);
    blocks_.clear();
    cached_ = 0;
  }
  std::size_t cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<void*, std::size_t>> blocks_;
  std::size_t cached_ = 0;
};
BigBlockCache& big_cache_ = *new BigBlockCache;

std::atomic<std::uint64_t> g_allocations{0};
// Bytes of blocks held by arrays (their rounded sizes), and the most held at once.
std::atomic<std::uint64_t> g_in_use{0};
std::atomic<std::uint64_t> g_peak{0};

void note_in_use(std::size_t bytes) noexcept {
  const std::uint64_t now = g_in_use.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::uint64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}
void note_released(std::size_t bytes) noexcept {
  g_in_use.fetch_sub(bytes, std::memory_order_relaxed);
}

class CpuBackend final : public Backend {
 public:
  const char* name() const noexcept override { return "cpu"; }

  Allocation allocate(std::size_t bytes) override {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    Allocation a;
    a.bytes = bytes;
    if (bytes <= kCachedMax) {
      // Small blocks come from a cache of freed ones: a fresh 4 KiB malloc makes glibc consolidate
      // its fast bins, which cost more than the whole 1,024-element addition it is for.
      const int cls = size_class(bytes);
      void* p = cache_.get(cls);
      if (p == nullptr) {
        if (posix_memalign(&p, 64, std::size_t{64} << cls) != 0 || p == nullptr) throw OutOfMemory("cpu", bytes);
      }
      a.data = static_cast<std::byte*>(p);
      a.release = [](std::byte* q, std::size_t n) {
        note_released(std::size_t{64} << size_class(n));
        cache_.put(q, size_class(n));
      };
      note_in_use(std::size_t{64} << cls);
      return a;
    }
    // Big blocks on 2 MiB boundaries with transparent huge pages asked for (as NumPy does): the
    // first touch of a fresh 64 MiB block then costs 32 page faults instead of 16,384. Freed big
    // blocks are kept (up to kBigCacheCap bytes) for the next array of the same rounded size, so a
    // loop that makes a new result each time does not fault its pages in again on every call.
    const bool huge = bytes >= kHugeThreshold;
    const std::size_t align = huge ? kHugePage : 64;
    const std::size_t rounded = (bytes + align - 1) / align * align;
    if (bytes > kMaxBytes) throw OutOfMemory("cpu", bytes);
    void* p = big_cache_.get(rounded);
    if (p == nullptr) {
      if (posix_memalign(&p, align, rounded) != 0 || p == nullptr) {
        big_cache_.release_all();
        if (posix_memalign(&p, align, rounded) != 0 || p == nullptr) throw OutOfMemory("cpu", bytes);
      }
      if (huge) madvise(p, rounded, MADV_HUGEPAGE);
    }
    a.data = static_cast<std::byte*>(p);
    a.release = [](std::byte* q, std::size_t n) {
      const std::size_t al = n >= kHugeThreshold ? kHugePage : 64;
      note_released((n + al - 1) / al * al);
      big_cache_.put(q, (n + al - 1) / al * al);
    };
    note_in_use(rounded);
    return a;
  }

  void run_fused(const FusedProgram& program) override { cpu::run_fused(program); }

  void reduce(ReduceOp op, const View& in, std::span<const int> axes, const View& out, int correction) override {
    cpu::reduce(op, in, axes, out, correction);
  }
  void cumulative_sum(const View& in, int axis, const View& out, bool include_initial) override {
    cpu::cumulative_sum(in, axis, out, include_initial);
  }
  void matmul(const View& a, const View& b, const View& out) override { cpu::matmul(a, b, out); }
  void vecdot(const View& a, const View& b, const View& out) override { cpu::vecdot(a, b, out); }

  void take(const View& in, const View& indices, int axis, const View& out) override {
    // out = [in's axes before axis][indices' axes][in's axes after axis]
    const int ind = indices.ndim;
    const std::size_t item = itemsize(in.dtype);
    const std::int64_t total = out.size();
    std::int64_t idx[kMaxDims] = {};
    for (std::int64_t e = 0; e < total; ++e) {
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
  }

  void fill_random(const RandomRequest& req, const View& out) override {
    const std::int64_t n = out.size();
    const philox::StreamId id{req.seed, req.stream};
    const std::size_t item = itemsize(out.dtype);
    constexpr std::int64_t kChunk = 1 << 14;
    const std::int64_t chunks = (n + kChunk - 1) / kChunk;
    cpu::parallel_for(chunks, 4, [&](std::int64_t c0, std::int64_t c1) {
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
  MemoryStats memory_stats() override {
    MemoryStats s;
    s.bytes_in_use = g_in_use.load(std::memory_order_relaxed);
    s.bytes_cached = cache_.cached() + big_cache_.cached();
    s.peak_bytes_in_use = g_peak.load(std::memory_order_relaxed);
    s.allocations = g_allocations.load(std::memory_order_relaxed);
    return s;
  }
  void free_cached() override {
    cache_.release_all();
    big_cache_.release_all();
  }
  void reset_peak() override { g_peak.store(g_in_use.load(std::memory_order_relaxed), std::memory_order_relaxed); }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend cpu;
  return cpu;
}

std::uint64_t cpu_allocations() noexcept {
  return g_allocations.load(std::memory_order_relaxed);
}

}  // namespace xp::detail
