#pragma once

#include "backend/backend.hpp"

namespace xp::detail::cuda {

// The backend of a CUDA device, made at first use and kept for the process. Throws
// DeviceUnavailable (with the reason) when CUDA or this device cannot be used.
Backend* cuda_backend(const Device& device);

// How many evaluations of this device allocated their new output blocks on the backend's side
// thread, beside their kernel's first lookup, whether the allocation succeeded or not (for tests).
long overlapped_allocations(const Device& device);

}  // namespace xp::detail::cuda
