#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "xp/export.hpp"

namespace xp {

enum class DeviceKind { cpu, cuda };

// A place where arrays live and kernels run: "cpu" or "cuda:N". Cheap to copy and compare.
class XP_API Device {
 public:
  Device() = default;  // the CPU
  // Parses "cpu", "cuda" (= cuda:0) or "cuda:N"; throws ValueError otherwise, naming the text and
  // the accepted forms. Does not check that the device exists: that happens when it is used.
  explicit Device(std::string_view spec);
  // The same, implicit from text (a string literal, std::string, std::string_view), so that a
  // device can be named where one is taken: xp::zeros({2}, DType::float32, "cpu"). Integers are
  // not text: Device d = 0 does not compile.
  template <class S,
            std::enable_if_t<std::is_convertible_v<const S&, std::string_view> && !std::is_same_v<S, std::nullptr_t>,
                             int> = 0>
  Device(const S& spec) : Device(std::string_view(spec)) {}  // NOLINT: implicit by design
  static Device cpu() { return Device(); }
  static Device cuda(int index = 0);

  DeviceKind kind() const noexcept { return kind_; }
  int index() const noexcept { return index_; }
  bool is_cuda() const noexcept { return kind_ == DeviceKind::cuda; }
  std::string str() const;
  bool operator==(const Device&) const = default;

  // Makes the device the calling thread's current device for the array API (current_device():
  // where arrays made without a device go) until another activate or the end of an enclosing
  // DeviceScope. For a CUDA device it also retains its primary context (once per process, shared
  // with CuPy, PyTorch and any other user of the runtime API) and makes it current on the calling
  // thread. Throws DeviceUnavailable or CudaError (and then changes nothing).
  void activate() const;

 private:
  DeviceKind kind_ = DeviceKind::cpu;
  int index_ = 0;
};

// Writes str(): cpu, cuda:0.
XP_API std::ostream& operator<<(std::ostream& os, const Device& d);

// The devices this process can use: the CPU first, then every usable CUDA device. Never throws.
XP_API std::vector<Device> devices() noexcept;

// The device arrays go to when none is named: the calling thread's current device when a
// DeviceScope, a StreamScope or Device::activate made one current; otherwise the process default:
// cuda:0 when CUDA is usable, else the CPU, XP_DEVICE / FORCE_CPU overriding. Throws ConfigError
// for a malformed variable, DeviceUnavailable when XP_DEVICE asks for CUDA (or cuda:N) that is not
// usable, naming the reason.
XP_API Device default_device();
// The same device, by the name CuPy and PyTorch use.
XP_API Device current_device();

// Makes `device` the calling thread's current device (as Device::activate) until the scope ends;
// the previous one (or none: the process default) comes back then, also when an exception leaves
// the scope. Nestable; a thread's scopes end in the reverse order they began. On the CPU it only
// changes where new arrays go. Throws DeviceUnavailable or CudaError for a CUDA device that
// cannot be used (and then changes nothing). Not copyable or movable.
class XP_API DeviceScope {
 public:
  explicit DeviceScope(const Device& device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  bool had_previous_ = false;
  Device previous_;
};

// Facts about one GPU, read at detection time without creating a context.
struct GpuInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;  // compute capability
  int sm_count = 0;
  std::uint64_t memory_total = 0;            // bytes
  std::optional<std::uint64_t> memory_free;  // from NVML, or from the driver once initialized
  std::string memory_free_source;            // "nvml", "driver" or empty when unknown
  int memory_clock_khz = 0;                  // 0 when the driver does not say
  int memory_bus_width_bits = 0;
  double bandwidth_bytes_per_s = 0;  // theoretical: 2 x clock x bus width
  int l2_cache_bytes = 0;
  std::string pci_bus_id;            // "0000:19:00.0"
  std::string uuid;                  // "GPU-xxxxxxxx-xxxx-..."
  bool nvrtc_supports_arch = false;  // the chosen NVRTC can compile for this GPU
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

// Information on a CUDA device, free memory refreshed from the driver when its context is active.
// Throws DeviceUnavailable for the CPU or a device that is not there.
XP_API GpuInfo gpu_info(const Device& device);

}  // namespace xp
