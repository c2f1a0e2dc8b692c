// Pinned staging for host <-> device copies (staging.hpp).
#include "backend/cuda/staging.hpp"

#include <algorithm>
#include <cstring>

#include "runtime/log.hpp"
#include "runtime/parallel.hpp"

namespace xp::detail::cuda {

namespace {

// memcpy over xp's CPU threads in pieces of 1 MiB: one thread alone cannot keep up with the DMA.
void parallel_memcpy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::int64_t kPiece = std::int64_t{1} << 20;
  const auto n = static_cast<std::int64_t>(bytes);
  parallel_for((n + kPiece - 1) / kPiece, 1, [&](std::int64_t p0, std::int64_t p1) {
    const std::int64_t b = p0 * kPiece, e = std::min(n, p1 * kPiece);
    std::memcpy(static_cast<std::byte*>(dst) + b, static_cast<const std::byte*>(src) + b,
                static_cast<std::size_t>(e - b));
  });
}

}  // namespace

bool Staging::ready(const DriverApi& api) {
  if (tried_) return usable_;
  tried_ = true;
  if (api.cuMemHostAlloc == nullptr || api.cuEventCreate == nullptr || api.cuEventRecord == nullptr ||
      api.cuEventSynchronize == nullptr)
    return false;
  // Staging is only a faster path: what it cannot have (pinned memory, an event) sends this copy
  // and every later one to the driver directly, never fails the copy. What was made so far is kept:
  // a few MiB, not worth a path of their own.
  const auto unavailable = [&](const char* call, cu::CUresult r) {
    log(LogLevel::info, "pinned staging unavailable on " + device_.str() + " (" + call + ": " + driver_error_name(r) +
                            "); host copies go to the driver directly");
    return false;
  };
  for (int i = 0; i < kBuffers; ++i) {
    void* p = nullptr;
    if (const cu::CUresult r = api.cuMemHostAlloc(&p, kStagingChunk, 0); r != cu::CUDA_SUCCESS || p == nullptr)
      return unavailable("cuMemHostAlloc", r);
    buffer_[i] = static_cast<std::byte*>(p);
    if (const cu::CUresult r = api.cuEventCreate(&done_[i], cu::CU_EVENT_DISABLE_TIMING); r != cu::CUDA_SUCCESS) {
      done_[i] = nullptr;
      return unavailable("cuEventCreate", r);
    }
  }
  usable_ = true;
  return true;
}

void Staging::wait(const DriverApi& api, int i) {
  if (!pending_[i]) return;
  check(api.cuEventSynchronize(done_[i]), "cuEventSynchronize");
  pending_[i] = false;
}

bool Staging::from_host(const void* src, cu::CUdeviceptr dst, std::size_t bytes, cu::CUstream stream) {
  if (!staging_pays(bytes, num_threads(), false)) return false;
  const DriverApi& api = api_for_use();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ready(api)) return false;
  auto copy = need(api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync");
  for (std::size_t c = 0, n = staging_chunks(bytes); c < n; ++c) {
    const int i = static_cast<int>(c % kBuffers);
    const std::size_t off = c * kStagingChunk, len = std::min(kStagingChunk, bytes - off);
    wait(api, i);  // the DMA that last read this buffer is done
    parallel_memcpy(buffer_[i], static_cast<const std::byte*>(src) + off, len);
    check(copy(dst + off, buffer_[i], len, stream), "cuMemcpyHtoDAsync");
    check(api.cuEventRecord(done_[i], stream), "cuEventRecord");
    pending_[i] = true;
  }
  return true;
}

bool Staging::to_host(cu::CUdeviceptr src, void* dst, std::size_t bytes, cu::CUstream stream) {
  if (!staging_pays(bytes, num_threads(), true)) return false;
  const DriverApi& api = api_for_use();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ready(api)) return false;
  auto copy = need(api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync");
  const std::size_t n = staging_chunks(bytes);
  // The DMA of chunk c runs while chunk c - 1 is copied out of the other buffer.
  const auto drain = [&](std::size_t c) {
    const int i = static_cast<int>(c % kBuffers);
    const std::size_t off = c * kStagingChunk, len = std::min(kStagingChunk, bytes - off);
    wait(api, i);
    parallel_memcpy(static_cast<std::byte*>(dst) + off, buffer_[i], len);
  };
  for (std::size_t c = 0; c < n; ++c) {
    const int i = static_cast<int>(c % kBuffers);
    const std::size_t off = c * kStagingChunk, len = std::min(kStagingChunk, bytes - off);
    wait(api, i);  // a copy from the host may still be reading this buffer
    check(copy(buffer_[i], src + off, len, stream), "cuMemcpyDtoHAsync");
    check(api.cuEventRecord(done_[i], stream), "cuEventRecord");
    pending_[i] = true;
    if (c > 0) drain(c - 1);
  }
  drain(n - 1);
  return true;
}

}  // namespace xp::detail::cuda
