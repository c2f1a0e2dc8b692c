#pragma once

#include <memory>

#include "xp/device.hpp"
#include "xp/export.hpp"

namespace xp {

// An ordered queue of GPU work. xp's own streams are non-blocking (they do not wait for the
// legacy default stream). Cheap to copy: copies share the stream, destroyed with the last copy.
class XP_API Stream {
 public:
  // A new non-blocking stream on a CUDA device. Throws DeviceUnavailable or CudaError.
  explicit Stream(const Device& device);
  // xp's default stream for a device: one per device per process, created on first use.
  static Stream default_for(const Device& device);
  // Wraps a stream another library owns (CuPy's `stream.ptr`, PyTorch's `cuda_stream`): xp never
  // destroys it; the owner keeps it alive while xp uses it.
  static Stream wrap(const Device& device, void* handle);

  const Device& device() const noexcept;
  void* handle() const noexcept;  // the CUstream
  bool owned() const noexcept;
  // Waits for all work queued so far. A kernel fault surfaces here as CudaError.
  void synchronize() const;

 private:
  struct State;
  explicit Stream(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

// A marker in a stream, for timing and for waiting.
class XP_API Event {
 public:
  explicit Event(const Device& device);
  void record(const Stream& stream);
  void synchronize() const;
  // Milliseconds between two recorded events (both completed). Throws CudaError otherwise.
  static float elapsed_ms(const Event& start, const Event& stop);
  void* handle() const noexcept;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Waits for all work on the device (its primary context). No-op for the CPU.
XP_API void synchronize(const Device& device);

}  // namespace xp
