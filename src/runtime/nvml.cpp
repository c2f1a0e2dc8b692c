#include "runtime/nvml.hpp"

#include <array>

#include "runtime/cuda_abi.hpp"
#include "runtime/dynlib.hpp"

namespace xp::detail {

LibraryInfo nvml_free_memory(std::vector<GpuInfo>& gpus) noexcept {
  LibraryInfo info;
  info.name = "libnvidia-ml";
  info.found_by = "OS loader";
  try {
    DynLib lib = DynLib::open("libnvidia-ml.so.1");
    if (!lib.ok()) {
      info.tried.push_back("libnvidia-ml.so.1 (OS loader search)");
      info.error = lib.error();
      return info;
    }
    info.found = true;
    info.path = lib.path();
    auto init = reinterpret_cast<nvml::PFN_nvmlInit_v2>(lib.symbol("nvmlInit_v2"));
    auto shutdown = reinterpret_cast<nvml::PFN_nvmlShutdown>(lib.symbol("nvmlShutdown"));
    auto driver_version =
        reinterpret_cast<nvml::PFN_nvmlSystemGetDriverVersion>(lib.symbol("nvmlSystemGetDriverVersion"));
    auto by_bus =
        reinterpret_cast<nvml::PFN_nvmlDeviceGetHandleByPciBusId_v2>(lib.symbol("nvmlDeviceGetHandleByPciBusId_v2"));
    auto mem = reinterpret_cast<nvml::PFN_nvmlDeviceGetMemoryInfo>(lib.symbol("nvmlDeviceGetMemoryInfo"));
    if (init == nullptr || shutdown == nullptr || by_bus == nullptr || mem == nullptr) {
      info.error = "an NVML entry point is missing";
      return info;
    }
    if (const int r = init(); r != 0) {
      info.error = "nvmlInit_v2 returned " + std::to_string(r);
      return info;
    }
    if (driver_version != nullptr) {
      std::array<char, 96> v{};
      if (driver_version(v.data(), static_cast<unsigned>(v.size())) == 0) info.version = v.data();  // "580.95.05"
    }
    for (GpuInfo& g : gpus) {
      nvml::nvmlDevice_t dev = nullptr;
      nvml::nvmlMemory_t m{};
      if (!g.pci_bus_id.empty() && by_bus(g.pci_bus_id.c_str(), &dev) == 0 && mem(dev, &m) == 0) {
        g.memory_free = m.free;
        g.memory_free_source = "nvml";
      }
    }
    shutdown();
    lib.release();  // NVML keeps threads of its own; unloading it under them is not safe
  } catch (...) {
    info.error = "NVML query failed";
  }
  return info;
}

}  // namespace xp::detail
