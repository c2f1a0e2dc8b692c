#pragma once

#include <vector>

#include "xp/runtime.hpp"

namespace xp::detail {

std::vector<int> gpu_archs(const std::vector<GpuInfo>& gpus);
// The verdict from the driver and NVRTC, whatever the user asked for.
CudaStatus hardware_status() noexcept;
// Index into nvrtc_search().found of the NVRTC xp uses, or -1.
int chosen_nvrtc_index() noexcept;

}  // namespace xp::detail
