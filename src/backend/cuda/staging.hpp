#pragma once

// Copies between pageable host memory and a device through pinned staging buffers: two buffers of
// kStagingChunk bytes per device (cuMemHostAlloc, made on first use and kept), used in turn so that
// the DMA of one chunk overlaps the host memcpy of the next, the memcpy spread over xp's CPU
// threads. Where that does not pay (staging_pays below), or where pinned memory (or an event for a
// buffer) cannot be had, the caller copies through the driver directly (these functions return false).
//
// The sizes and thread counts come from a measurement on an H200: staging beats the driver's own
// pageable copies from 4 MiB with enough threads, loses below (docs/performance.md, "kStagingChunk,
// kStagingMin").
//
// from_host returns once every byte is in a pinned buffer and its DMA is queued on the stream: the
// caller's memory may go away at once, and later work on the stream sees the data. to_host returns
// when the bytes are in `dst`.

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "runtime/driver.hpp"
#include "xp/device.hpp"

namespace xp::detail::cuda {

constexpr std::size_t kStagingChunk = std::size_t{8} << 20;
constexpr std::size_t kStagingMin = std::size_t{4} << 20;

// Whether a copy of `bytes` with `threads` CPU threads goes through the staging buffers.
constexpr bool staging_pays(std::size_t bytes, int threads, bool to_host) noexcept {
  return bytes >= kStagingMin && threads >= (to_host ? 4 : 2);
}

// The chunks of a staged copy: chunk i covers [i * kStagingChunk, min(bytes, (i + 1) * kStagingChunk))
// and uses buffer i % 2.
constexpr std::size_t staging_chunks(std::size_t bytes) noexcept {
  return (bytes + kStagingChunk - 1) / kStagingChunk;
}

class Staging {
 public:
  explicit Staging(Device device) : device_(device) {}
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // False: not staged (staging_pays says no, or no pinned memory); nothing was done. Throws CudaError.
  bool to_host(cu::CUdeviceptr src, void* dst, std::size_t bytes, cu::CUstream stream);
  bool from_host(const void* src, cu::CUdeviceptr dst, std::size_t bytes, cu::CUstream stream);

 private:
  static constexpr int kBuffers = 2;
  bool ready(const DriverApi& api);  // makes the buffers and events once; false when it cannot
  void wait(const DriverApi& api, int i);

  Device device_;
  std::mutex mutex_;
  bool tried_ = false, usable_ = false;
  std::byte* buffer_[kBuffers] = {};
  cu::CUevent done_[kBuffers] = {};
  bool pending_[kBuffers] = {};  // an event recorded after the last DMA of the buffer
};

}  // namespace xp::detail::cuda
