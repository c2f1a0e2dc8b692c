// The calling thread's current device and streams: DeviceScope, StreamScope, current_device,
// current_stream (current.hpp). Thread-local state, no lock: a scope belongs to the thread that
// made it.
#include <utility>
#include <vector>

#include "runtime/current.hpp"
#include "runtime/driver.hpp"
#include "xp/error.hpp"

namespace xp {

namespace detail {

namespace {

struct ThreadScopes {
  bool has_device = false;
  Device device;
  std::vector<std::pair<int, Stream>> streams;  // (ordinal, its current stream), one entry per ordinal
  const Stream* releasing = nullptr;            // ReleasingOn's
};

ThreadScopes& scopes() noexcept {
  thread_local ThreadScopes t;
  return t;
}

}  // namespace

const Stream* scoped_stream(int ordinal) noexcept {
  for (auto& [o, s] : scopes().streams)
    if (o == ordinal) return &s;
  return nullptr;
}

const Stream& work_stream(const Device& device) {
  const ThreadScopes& t = scopes();
  if (!t.streams.empty() && device.is_cuda()) {
    if (const Stream* s = scoped_stream(device.index())) return *s;
  }
  return default_stream(device);
}

std::optional<Device> thread_device() noexcept {
  const ThreadScopes& t = scopes();
  if (!t.has_device) return std::nullopt;
  return t.device;
}

void set_thread_device(const Device& device) noexcept {
  scopes().has_device = true;
  scopes().device = device;
}

ReleasingOn::ReleasingOn(const Stream* stream) noexcept : previous_(scopes().releasing) {
  scopes().releasing = stream;
}
ReleasingOn::~ReleasingOn() {
  scopes().releasing = previous_;
}

const Stream* release_stream(const Device& device) noexcept {
  const ThreadScopes& t = scopes();
  if (t.releasing != nullptr && t.releasing->device() == device) return t.releasing;
  try {
    return &work_stream(device);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace detail

DeviceScope::DeviceScope(const Device& device) {
  detail::activate_context(device);  // throws before anything changed
  detail::ThreadScopes& t = detail::scopes();
  had_previous_ = t.has_device;
  previous_ = t.device;
  t.has_device = true;
  t.device = device;
}

DeviceScope::~DeviceScope() {
  detail::ThreadScopes& t = detail::scopes();
  t.has_device = had_previous_;
  t.device = previous_;
  // The previous device's context current again, for code after the scope that calls the driver
  // or the runtime API itself (as CuPy's and PyTorch's device guards do).
  if (had_previous_ && previous_.is_cuda() && detail::context_retained(previous_.index())) {
    try {
      detail::make_current(previous_.index());
    } catch (...) {  // a broken context: reported by the next call that uses it
    }
  }
}

StreamScope::StreamScope(const Stream& stream) : device_(stream.device()), ordinal_(stream.device().index()) {
  auto& streams = detail::scopes().streams;
  for (auto& [o, s] : streams) {
    if (o == ordinal_) {
      previous_ = s;
      s = stream;
      return;
    }
  }
  streams.emplace_back(ordinal_, stream);
}

StreamScope::~StreamScope() {
  auto& streams = detail::scopes().streams;
  for (auto it = streams.begin(); it != streams.end(); ++it) {
    if (it->first != ordinal_) continue;
    if (previous_) {
      it->second = *previous_;
    } else {
      streams.erase(it);
    }
    return;
  }
}

Stream current_stream(const Device& device) {
  if (!device.is_cuda()) throw ValueError("current_stream: " + device.str() + " has no streams (a CUDA device has)");
  return detail::work_stream(device);
}

Stream current_stream() {
  return current_stream(current_device());
}

Device current_device() {
  return default_device();
}

}  // namespace xp
