#include <charconv>
#include <mutex>
#include <ostream>
#include <string>

#include "runtime/current.hpp"
#include "runtime/detect.hpp"
#include "runtime/driver.hpp"
#include "runtime/log.hpp"
#include "runtime/nvrtc_search.hpp"
#include "xp/device.hpp"
#include "xp/error.hpp"
#include "xp/runtime.hpp"

namespace xp {

Device::Device(std::string_view spec) {
  if (spec == "cpu") return;
  if (spec == "cuda") {
    kind_ = DeviceKind::cuda;
    return;
  }
  if (spec.substr(0, 5) == "cuda:" && spec.size() > 5) {
    int n = -1;
    auto [p, ec] = std::from_chars(spec.data() + 5, spec.data() + spec.size(), n);
    if (ec == std::errc() && p == spec.data() + spec.size() && n >= 0) {
      kind_ = DeviceKind::cuda;
      index_ = n;
      return;
    }
  }
  throw ValueError("'" + std::string(spec) + "' is not a device; expected cpu, cuda or cuda:N");
}

Device Device::cuda(int index) {
  if (index < 0) throw ValueError("cuda:" + std::to_string(index) + " is not a device: the ordinal must be >= 0");
  Device d;
  d.kind_ = DeviceKind::cuda;
  d.index_ = index;
  return d;
}

std::string Device::str() const {
  return kind_ == DeviceKind::cpu ? "cpu" : "cuda:" + std::to_string(index_);
}

std::ostream& operator<<(std::ostream& os, const Device& d) {
  return os << d.str();
}

namespace detail {
void activate_context(const Device& device) {
  if (!device.is_cuda()) return;
  const CudaStatus s = cuda_status();
  if (s.reason == CudaReason::forked_after_init) make_current(device.index());  // throws the fork error
  if (!s.available && s.reason != CudaReason::disabled_by_user)
    throw DeviceUnavailable(device.str() + " is not usable: CUDA " + std::string(to_string(s.reason)) + ": " +
                            s.detail);
  make_current(device.index());
}
}  // namespace detail

void Device::activate() const {
  detail::activate_context(*this);  // first: nothing changes when it throws
  detail::set_thread_device(*this);
}

std::vector<Device> devices() noexcept {
  std::vector<Device> out{Device::cpu()};
  const CudaStatus s = cuda_status();
  if (s.available)
    for (int i = 0; i < s.device_count; ++i) out.push_back(Device::cuda(i));
  return out;
}

namespace {
Device choose_default_device();
}  // namespace

Device default_device() {
  if (std::optional<Device> d = detail::thread_device()) return *d;
  return detail::process_default_device();
}

Device detail::process_default_device() {
  const Device d = choose_default_device();
  static std::once_flag logged;
  std::call_once(logged, [&] {
    if (!detail::log_enabled(LogLevel::info)) return;
    const Config& cfg = config();
    const CudaStatus s = cuda_status();
    std::string why;
    if (cfg.device.kind != DeviceRequest::Kind::unset)
      why = cfg.force_cpu ? "FORCE_CPU is set" : "XP_DEVICE asks for it";
    else
      why = s.available ? "XP_DEVICE unset, CUDA usable"
                        : "XP_DEVICE unset, CUDA not usable: " + std::string(to_string(s.reason));
    detail::log(LogLevel::info, "default device " + d.str() + " (" + why + ")");
  });
  return d;
}

namespace {
Device choose_default_device() {
  const Config& cfg = config();  // throws ConfigError
  const CudaStatus s = cuda_status();
  switch (cfg.device.kind) {
    case DeviceRequest::Kind::cpu:
      return Device::cpu();
    case DeviceRequest::Kind::unset:
      return s.available ? Device::cuda(0) : Device::cpu();
    case DeviceRequest::Kind::cuda_default:
    case DeviceRequest::Kind::cuda_index: {
      const Device want = Device::cuda(cfg.device.index);
      if (!s.available)
        throw DeviceUnavailable("XP_DEVICE asks for " + want.str() + " but CUDA is not usable (" +
                                std::string(to_string(s.reason)) + "): " + s.detail);
      if (cfg.device.index >= s.device_count)
        throw DeviceUnavailable("XP_DEVICE asks for " + want.str() + " but this process sees " +
                                std::to_string(s.device_count) + " CUDA device" + (s.device_count == 1 ? "" : "s") +
                                " (cuda:0" +
                                (s.device_count > 1 ? " to cuda:" + std::to_string(s.device_count - 1) : "") + ")");
      return want;
    }
  }
  return Device::cpu();
}
}  // namespace

GpuInfo gpu_info(const Device& device) {
  if (!device.is_cuda()) throw DeviceUnavailable("gpu_info: " + device.str() + " is not a CUDA device");
  const detail::DriverProbe& p = detail::driver_probe();
  if (device.index() >= static_cast<int>(p.gpus.size()) || p.reason != CudaReason::available)
    throw DeviceUnavailable(device.str() + " is not usable: " + p.detail);
  GpuInfo g = p.gpus[static_cast<size_t>(device.index())];
  const int chosen = detail::chosen_nvrtc_index();
  if (chosen >= 0)
    g.nvrtc_supports_arch =
        detail::nvrtc_supports(detail::nvrtc_search().found[static_cast<size_t>(chosen)], g.cc_major * 10 + g.cc_minor);
  // Free memory from the driver needs a context: asked only where xp already holds one.
  if (const detail::DriverApi* api = detail::driver_api(); api != nullptr && detail::context_retained(device.index())) {
    detail::make_current(device.index());
    std::size_t free = 0, total = 0;
    detail::check(api->cuMemGetInfo(&free, &total), "cuMemGetInfo");
    g.memory_free = free;
    g.memory_free_source = "driver";
  }
  return g;
}

}  // namespace xp
