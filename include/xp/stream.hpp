#pragma once

#include <memory>
#include <optional>

#include "xp/device.hpp"
#include "xp/export.hpp"

namespace xp {

class Event;

// An ordered queue of GPU work. xp's own streams are non-blocking (they do not wait for the
// legacy default stream). Cheap to copy: copies share the stream, destroyed with the last copy.
class XP_API Stream {
 public:
  // A new non-blocking stream on a CUDA device. Throws DeviceUnavailable or CudaError.
  explicit Stream(const Device& device);
  // xp's default stream for a device: one per device per process, created on first use.
  static Stream default_for(const Device& device);
  // Wraps a stream another library owns (CuPy's `stream.ptr`, PyTorch's `cuda_stream`): xp never
  // destroys it; the owner keeps it alive while xp uses it (and while arrays made on it live).
  // Inside a StreamScope, xp's array work runs on it as on a stream of xp's own.
  static Stream external(const Device& device, void* handle);
  static Stream wrap(const Device& device, void* handle) { return external(device, handle); }  // the older name

  const Device& device() const noexcept;
  void* handle() const noexcept;  // the CUstream
  bool owned() const noexcept;
  // Waits for all work queued so far. A kernel fault surfaces here as CudaError.
  void synchronize() const;
  // Makes this stream wait, on the device, for `event` (recorded on any stream of the device);
  // the host does not wait. ValueError for an event of another device.
  void wait_event(const Event& event) const;
  // The same stream (one CUstream) as `other`.
  bool operator==(const Stream& other) const noexcept { return handle() == other.handle(); }

 private:
  struct State;
  explicit Stream(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

// How an event is made (the driver's CU_EVENT_* flags).
struct EventFlags {
  bool timing = true;     // false: CU_EVENT_DISABLE_TIMING, the cheaper kind, which elapsed refuses
  bool blocking = false;  // true: CU_EVENT_BLOCKING_SYNC, synchronize() sleeps instead of spinning
};

// A marker in a stream, for timing and for waiting.
class XP_API Event {
 public:
  explicit Event(const Device& device, EventFlags flags = {});
  // Records on `stream`; without one, on the calling thread's current stream of the event's device.
  void record(const Stream& stream);
  void record();
  void synchronize() const;
  // Whether the work recorded before the event has completed (never recorded: true).
  bool query() const;
  // Milliseconds between two recorded events (both completed, both with timing). Throws CudaError
  // otherwise (CUDA_ERROR_NOT_READY while one has not completed: synchronize stop first).
  static float elapsed(const Event& start, const Event& stop);
  static float elapsed_ms(const Event& start, const Event& stop) { return elapsed(start, stop); }
  const Device& device() const noexcept;
  const EventFlags& flags() const noexcept;
  void* handle() const noexcept;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Waits for all work on the device (its primary context). No-op for the CPU.
XP_API void synchronize(const Device& device);

// The calling thread's current stream of a CUDA device: the innermost StreamScope's for that
// device, else xp's default stream of the device (Stream::default_for). Array operations,
// transfers and kernel launches without a stream run there. ValueError for the CPU (it has no
// streams), DeviceUnavailable / CudaError as Stream::default_for.
XP_API Stream current_stream(const Device& device);
XP_API Stream current_stream();  // of current_device(); ValueError when that is the CPU

// Makes `stream` the calling thread's current stream of its device, and its device the current
// device (DeviceScope), until the scope ends; the previous ones come back then, also when an
// exception leaves the scope. Nestable; scopes of one thread must end in the reverse order they
// began (as C++ scopes and Python's `with` do). Not copyable or movable.
class XP_API StreamScope {
 public:
  explicit StreamScope(const Stream& stream);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  DeviceScope device_;
  int ordinal_;
  std::optional<Stream> previous_;
};

}  // namespace xp
