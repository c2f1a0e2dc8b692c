#pragma once

// Driver calls for memory and streams that belong to other libraries (DLPack, the CUDA array
// interface): what src/array/interop.cpp needs of the driver, behind functions that name no CUDA
// type, so that the array layer never includes the driver's tables.

#include <cstdint>
#include <optional>

namespace xp::detail {

// Makes the stream `waiter` wait, on the device, for the work queued on `producer` so far (an event
// recorded on producer, waited for on waiter; the host does not wait). Handles as the driver takes
// them: 1 and 2 are the legacy and the per-thread default streams. The caller has made the device
// current. Throws DeviceUnavailable when CUDA cannot be used, CudaError when a call fails.
void stream_wait_stream(std::uintptr_t waiter, std::uintptr_t producer);

// The ordinal of the device whose memory the address `p` is, as the driver records it; nullopt
// when the driver does not know the address (not device memory). Throws DeviceUnavailable when
// CUDA cannot be used, CudaError for any other failure.
std::optional<int> pointer_device_ordinal(std::uintptr_t p);

}  // namespace xp::detail
