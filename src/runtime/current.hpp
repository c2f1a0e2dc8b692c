#pragma once

// The calling thread's current device and streams (scope.cpp): what DeviceScope, StreamScope and
// Device::activate set, and what xp's own code asks for the stream of its work. Names no CUDA type,
// so that the array layer may include it.

#include <optional>

#include "xp/device.hpp"
#include "xp/stream.hpp"

namespace xp::detail {

// Retains a CUDA device's primary context and makes it current on the calling thread (a no-op for
// the CPU); throws DeviceUnavailable or CudaError. xp's own code calls this, never
// Device::activate, so that its work never changes the user's current device.
void activate_context(const Device& device);

// The stream this thread's work on a CUDA device goes to: the innermost StreamScope's for the
// device, else xp's default stream of the device (Stream::default_for). The reference stays valid
// until this thread's scopes change; copy it to keep it longer. Throws as Stream::default_for.
const Stream& work_stream(const Device& device);
// The innermost StreamScope's stream of device `ordinal` on this thread, or null (no scope).
const Stream* scoped_stream(int ordinal) noexcept;
// xp's default stream of a CUDA device (created on first use; never destroyed).
const Stream& default_stream(const Device& device);

// The thread's current device when one was made current (DeviceScope, Device::activate), else
// nullopt; and the process default (XP_DEVICE, FORCE_CPU, detection) regardless of the thread.
std::optional<Device> thread_device() noexcept;
void set_thread_device(const Device& device) noexcept;  // Device::activate's (scope.cpp)
Device process_default_device();

// While one lives, memory whose last owner goes on this thread was last used on `stream` (null:
// unknown): the array layer's Storage sets it around freeing its block, so that the CUDA
// backend's pool knows which stream's work must finish before the block is used again.
class ReleasingOn {
 public:
  explicit ReleasingOn(const Stream* stream) noexcept;
  ~ReleasingOn();
  ReleasingOn(const ReleasingOn&) = delete;
  ReleasingOn& operator=(const ReleasingOn&) = delete;

 private:
  const Stream* previous_;
};
// The stream the memory being freed on this thread was last used on: ReleasingOn's when it is a
// stream of `device`, else this thread's work_stream(device); null when neither can be had
// (CUDA unusable, a failure creating the default stream). Never throws.
const Stream* release_stream(const Device& device) noexcept;

}  // namespace xp::detail
