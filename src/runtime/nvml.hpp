#pragma once

#include <vector>

#include "xp/device.hpp"
#include "xp/runtime.hpp"

namespace xp::detail {

// Fills memory_free of each GPU from NVML (matched by PCI bus id) when NVML is present, without
// creating a CUDA context. Returns what was found of NVML; absence is normal.
LibraryInfo nvml_free_memory(std::vector<GpuInfo>& gpus) noexcept;

}  // namespace xp::detail
