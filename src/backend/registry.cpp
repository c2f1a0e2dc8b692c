// Which backend serves which device.

#include <mutex>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "xp/error.hpp"

namespace xp::detail {

namespace {
std::mutex g_mutex;
std::vector<std::pair<Device, Backend*>>& registered() {
  static auto* v = new std::vector<std::pair<Device, Backend*>>;
  return *v;
}
}  // namespace

void register_backend(const Device& device, Backend* backend) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& v = registered();
  std::erase_if(v, [&](const auto& e) { return e.first == device; });
  if (backend != nullptr) v.emplace_back(device, backend);
}

Backend& backend_for(const Device& device) {
  if (device.kind() == DeviceKind::cpu) return cpu_backend();
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& [d, b] : registered()) {
      if (d == device) return *b;
    }
  }
  return *cuda::cuda_backend(device);
}

}  // namespace xp::detail
