#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "xp/device.hpp"
#include "xp/export.hpp"
#include "xp/stream.hpp"

namespace xp {

// Plain device memory (cuMemAlloc): the pooled allocator comes with arrays on the GPU. Cheap to
// copy: copies share the allocation, freed with the last copy.
class XP_API Buffer {
 public:
  Buffer() = default;
  // Throws ValueError for a CPU device, CudaError when the driver refuses (out of memory keeps
  // CUDA_ERROR_OUT_OF_MEMORY (2) with the bytes asked; first the device's cached array blocks are
  // given back to the driver, free_all, and the allocation tried once more).
  Buffer(const Device& device, std::size_t bytes);

  std::size_t size() const noexcept;
  const Device& device() const noexcept;
  std::uint64_t address() const noexcept;  // the CUdeviceptr
  explicit operator bool() const noexcept { return static_cast<bool>(state_); }

  // Synchronous copies, ordered after the work on the calling thread's current stream of the
  // device (current_stream: xp's default stream outside a StreamScope; bounds checked: ValueError
  // past the end).
  void copy_from_host(const void* src, std::size_t bytes, std::size_t offset = 0);
  void copy_to_host(void* dst, std::size_t bytes, std::size_t offset = 0) const;
  void copy_from(const Buffer& src, std::size_t bytes);
  // Asynchronous on a stream; host memory must stay valid until the stream reaches the copy.
  void copy_from_host_async(const void* src, std::size_t bytes, const Stream& stream, std::size_t offset = 0);
  void copy_to_host_async(void* dst, std::size_t bytes, const Stream& stream, std::size_t offset = 0) const;
  // Sets every byte (cuMemsetD8Async on the current stream, then waits).
  void fill_bytes(unsigned char value);

  template <class T>
  std::vector<T> to_vector() const {
    std::vector<T> v(size() / sizeof(T));
    copy_to_host(v.data(), v.size() * sizeof(T));
    return v;
  }
  template <class T>
  static Buffer from(const Device& device, const std::vector<T>& host) {
    Buffer b(device, host.size() * sizeof(T));
    b.copy_from_host(host.data(), host.size() * sizeof(T));
    return b;
  }

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace xp
