// Which backend serves which device: a table of factories by device kind, which each backend fills
// from its own source file (BackendKindRegistration), and devices registered one by one (tests).
// Also the public memory statistics (xp/memory.hpp), which each device's backend keeps.

#include <atomic>
#include <mutex>
#include <vector>

#include "backend/backend.hpp"
#include "xp/error.hpp"

namespace xp::detail {

namespace {

// One factory per DeviceKind (room for kinds to come). Constant-initialized (zeros before any
// constructor runs), so a registration made from any initializer finds the table ready.
constexpr std::size_t kDeviceKinds = 16;
static_assert(static_cast<std::size_t>(DeviceKind::cuda) < kDeviceKinds);
std::atomic<BackendFactory> g_factories[kDeviceKinds] = {};

std::mutex g_mutex;
std::vector<std::pair<Device, Backend*>>& registered() {
  static auto* v = new std::vector<std::pair<Device, Backend*>>;
  return *v;
}

}  // namespace

void register_backend_kind(DeviceKind kind, BackendFactory factory) noexcept {
  const auto k = static_cast<std::size_t>(kind);
  if (k < kDeviceKinds) g_factories[k].store(factory, std::memory_order_release);
}

void register_backend(const Device& device, Backend* backend) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& v = registered();
  std::erase_if(v, [&](const auto& e) { return e.first == device; });
  if (backend != nullptr) v.emplace_back(device, backend);
}

Backend& backend_for(const Device& device) {
  const auto k = static_cast<std::size_t>(device.kind());
  const BackendFactory factory = k < kDeviceKinds ? g_factories[k].load(std::memory_order_acquire) : nullptr;
  if (device.kind() != DeviceKind::cpu) {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& [d, b] : registered()) {
      if (d == device) return *b;
    }
  }
  if (factory == nullptr) throw DeviceUnavailable(device.str() + ": no backend for this kind of device in this build");
  return factory(device);
}

}  // namespace xp::detail

namespace xp {

MemoryStats memory_stats(const Device& device) {
  return detail::backend_for(device).memory_stats();
}

void free_all(const Device& device) {
  detail::backend_for(device).free_cached();
}

void reset_peak(const Device& device) {
  detail::backend_for(device).reset_peak();
}

}  // namespace xp
