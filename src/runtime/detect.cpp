// cuda_status(): the one verdict on whether CUDA is usable, from the configuration, the driver
// probe and the NVRTC search.
#include <atomic>
#include <mutex>
#include <string>

#include "runtime/detect.hpp"
#include "runtime/driver.hpp"
#include "runtime/log.hpp"
#include "runtime/nvrtc_search.hpp"
#include "xp/error.hpp"

namespace xp {

std::string_view to_string(CudaReason reason) noexcept {
  switch (reason) {
    case CudaReason::available:
      return "available";
    case CudaReason::disabled_by_user:
      return "disabled_by_user";
    case CudaReason::invalid_config:
      return "invalid_config";
    case CudaReason::driver_not_found:
      return "driver_not_found";
    case CudaReason::driver_unusable:
      return "driver_unusable";
    case CudaReason::init_failed:
      return "init_failed";
    case CudaReason::no_device:
      return "no_device";
    case CudaReason::all_devices_hidden:
      return "all_devices_hidden";
    case CudaReason::no_usable_nvrtc:
      return "no_usable_nvrtc";
    case CudaReason::forked_after_init:
      return "forked_after_init";
  }
  return "unknown";
}

namespace detail {

std::vector<int> gpu_archs(const std::vector<GpuInfo>& gpus) {
  std::vector<int> archs;
  for (const auto& g : gpus) archs.push_back(g.cc_major * 10 + g.cc_minor);
  return archs;
}

int chosen_nvrtc_index() noexcept {
  const DriverProbe& d = driver_probe();
  return choose_nvrtc(nvrtc_search().found, d.driver_version, gpu_archs(d.gpus));
}

// The verdict from the driver and NVRTC alone, ignoring the user's wishes.
CudaStatus hardware_status_uncached() noexcept;

namespace {
// XP_LOG=info: what detection found, once per process.
void log_verdict(const CudaStatus& s, const DriverProbe& d) {
  if (!log_enabled(LogLevel::info)) return;
  if (!s.available) {
    log(LogLevel::info,
        "CUDA not usable (" + std::string(to_string(s.reason)) + "): " + s.detail + "; arrays go to the CPU");
    return;
  }
  const NvrtcSearch& n = nvrtc_search();
  const LibraryInfo& nv = n.found[static_cast<std::size_t>(chosen_nvrtc_index())];
  std::string gpus;
  for (const GpuInfo& g : d.gpus)
    gpus += (gpus.empty() ? "" : ", ") + g.name + " (sm_" + std::to_string(g.cc_major * 10 + g.cc_minor) + ")";
  // A compile-only GPU (runtime/compile_only.hpp) has no driver and so no driver version.
  const std::string version = s.driver_version > 0 ? " (CUDA " + std::to_string(s.driver_version / 1000) + "." +
                                                         std::to_string(s.driver_version % 1000 / 10) + ")"
                                                   : "";
  log(LogLevel::info, "CUDA driver " + d.lib.path + version + ", NVRTC " + nv.path + " [found by " + nv.found_by +
                          "], " + std::to_string(d.gpus.size()) + " GPU" + (d.gpus.size() == 1 ? "" : "s") + ": " +
                          gpus);
}
}  // namespace

CudaStatus hardware_status() noexcept {
  CudaStatus s = hardware_status_uncached();
  static std::once_flag logged;
  try {
    std::call_once(logged, [&] { log_verdict(s, driver_probe()); });
  } catch (...) {
  }
  return s;
}

CudaStatus hardware_status_uncached() noexcept {
  CudaStatus s;
  const DriverProbe& d = driver_probe();
  s.reason = d.reason;
  s.detail = d.detail;
  s.driver_error = d.driver_error;
  s.driver_error_name = d.driver_error_name;
  s.driver_version = d.driver_version;
  if (d.reason != CudaReason::available) return s;
  s.device_count = static_cast<int>(d.gpus.size());
  const NvrtcSearch& n = nvrtc_search();
  const int chosen = chosen_nvrtc_index();
  if (chosen < 0) {
    s.reason = CudaReason::no_usable_nvrtc;
    if (n.found.empty()) {
      s.detail = n.explicit_path ? "XP_NVRTC could not be used: " + n.explicit_error
                                 : "no NVRTC library was found (it compiles xp's kernels)";
    } else {
      s.detail = "no NVRTC found suits this driver and GPU: " +
                 nvrtc_rejection(n.found.front(), d.driver_version, gpu_archs(d.gpus));
    }
    return s;
  }
  s.nvrtc_version = n.found[static_cast<size_t>(chosen)].version_number;
  s.available = true;
  s.reason = CudaReason::available;
  return s;
}

}  // namespace detail

namespace {
std::atomic<bool> g_cuda_hidden{false};
}  // namespace

void set_cuda_hidden(bool hidden) noexcept {
  g_cuda_hidden.store(hidden, std::memory_order_relaxed);
}

bool cuda_hidden() noexcept {
  return g_cuda_hidden.load(std::memory_order_relaxed);
}

CudaStatus cuda_status() noexcept {
  if (cuda_hidden()) {
    CudaStatus s;
    s.reason = CudaReason::no_device;
    s.detail = "CUDA is hidden in this process by xp::set_cuda_hidden(true)";
    return s;
  }
  if (detail::forked_after_init()) {
    CudaStatus s;
    s.reason = CudaReason::forked_after_init;
    s.detail = "this process is a fork() child of a process that had initialized CUDA; CUDA cannot be used here";
    return s;
  }
  try {
    const Config& cfg = config();
    if (cfg.device.kind == DeviceRequest::Kind::cpu) {
      CudaStatus s;
      s.reason = CudaReason::disabled_by_user;
      s.detail = cfg.force_cpu ? "FORCE_CPU is set" : "XP_DEVICE=cpu";
      return s;
    }
  } catch (const ConfigError& e) {
    CudaStatus s;
    s.reason = CudaReason::invalid_config;
    s.detail = e.what();
    return s;
  }
  return detail::hardware_status();
}

}  // namespace xp
