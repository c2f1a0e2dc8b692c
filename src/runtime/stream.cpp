#include "xp/stream.hpp"

#include <atomic>
#include <map>
#include <mutex>

#include "runtime/driver.hpp"
#include "xp/error.hpp"

namespace xp {

namespace cu = detail::cu;

using detail::check;
using detail::need;

struct Stream::State {
  Device device;
  cu::CUstream handle = nullptr;
  bool owned = false;
  ~State() {
    if (owned && handle != nullptr && !detail::forked_after_init()) {
      if (const auto* api = detail::driver_api(); api != nullptr && api->cuStreamDestroy != nullptr)
        api->cuStreamDestroy(handle);  // errors here have nowhere to go; the handle is gone either way
    }
  }
};

namespace {
void require_cuda(const Device& d, const char* what) {
  if (!d.is_cuda()) throw ValueError(std::string(what) + " needs a CUDA device, not " + d.str());
}
}  // namespace

Stream::Stream(const Device& device) {
  require_cuda(device, "a stream");
  device.activate();
  const auto& api = detail::api_for_use();
  auto s = std::make_shared<State>();
  s->device = device;
  check(need(api.cuStreamCreate, "cuStreamCreate")(&s->handle, cu::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  s->owned = true;
  state_ = std::move(s);
}

Stream Stream::default_for(const Device& device) {
  static std::mutex m;
  static std::map<int, Stream>* streams = new std::map<int, Stream>();  // lives until exit, never destroyed
  require_cuda(device, "a stream");
  std::lock_guard<std::mutex> lock(m);
  auto it = streams->find(device.index());
  if (it == streams->end()) it = streams->emplace(device.index(), Stream(device)).first;
  return it->second;
}

Stream Stream::wrap(const Device& device, void* handle) {
  require_cuda(device, "a stream");
  auto s = std::make_shared<State>();
  s->device = device;
  s->handle = static_cast<cu::CUstream>(handle);
  s->owned = false;
  return Stream(std::move(s));
}

const Device& Stream::device() const noexcept {
  return state_->device;
}
void* Stream::handle() const noexcept {
  return state_->handle;
}
bool Stream::owned() const noexcept {
  return state_->owned;
}

namespace {
std::atomic<void (*)()> g_after_synchronize{nullptr};
void after_synchronize() {
  if (void (*hook)() = g_after_synchronize.load(std::memory_order_acquire)) hook();
}
}  // namespace

namespace detail {
void set_after_synchronize(void (*hook)()) noexcept {
  g_after_synchronize.store(hook, std::memory_order_release);
}
}  // namespace detail

void Stream::synchronize() const {
  state_->device.activate();
  const auto& api = detail::api_for_use();
  check(need(api.cuStreamSynchronize, "cuStreamSynchronize")(state_->handle), "cuStreamSynchronize");
  after_synchronize();
}

struct Event::State {
  Device device;
  cu::CUevent handle = nullptr;
  ~State() {
    if (handle != nullptr && !detail::forked_after_init()) {
      if (const auto* api = detail::driver_api(); api != nullptr && api->cuEventDestroy != nullptr)
        api->cuEventDestroy(handle);
    }
  }
};

Event::Event(const Device& device) {
  require_cuda(device, "an event");
  device.activate();
  const auto& api = detail::api_for_use();
  auto s = std::make_shared<State>();
  s->device = device;
  check(need(api.cuEventCreate, "cuEventCreate")(&s->handle, cu::CU_EVENT_DEFAULT), "cuEventCreate");
  state_ = std::move(s);
}

void Event::record(const Stream& stream) {
  if (stream.device() != state_->device)
    throw ValueError("an event of " + state_->device.str() + " cannot be recorded on a stream of " +
                     stream.device().str());
  state_->device.activate();
  const auto& api = detail::api_for_use();
  check(need(api.cuEventRecord, "cuEventRecord")(state_->handle, static_cast<cu::CUstream>(stream.handle())),
        "cuEventRecord");
}

void Event::synchronize() const {
  state_->device.activate();
  const auto& api = detail::api_for_use();
  check(need(api.cuEventSynchronize, "cuEventSynchronize")(state_->handle), "cuEventSynchronize");
}

float Event::elapsed_ms(const Event& start, const Event& stop) {
  const auto& api = detail::api_for_use();
  float ms = 0;
  check(need(api.cuEventElapsedTime, "cuEventElapsedTime")(&ms, start.state_->handle, stop.state_->handle),
        "cuEventElapsedTime");
  return ms;
}

void* Event::handle() const noexcept {
  return state_->handle;
}

void synchronize(const Device& device) {
  if (!device.is_cuda()) return;
  device.activate();
  const auto& api = detail::api_for_use();
  check(api.cuCtxSynchronize(), "cuCtxSynchronize");
  after_synchronize();
}

}  // namespace xp
