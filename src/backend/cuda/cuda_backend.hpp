#pragma once

#include "backend/backend.hpp"

namespace xp::detail::cuda {

// The backend of a CUDA device, made at first use and kept for the process. Throws
// DeviceUnavailable (with the reason) when CUDA or this device cannot be used.
Backend* cuda_backend(const Device& device);

}  // namespace xp::detail::cuda
