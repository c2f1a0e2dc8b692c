#include "xp/stream.hpp"

#include <atomic>
#include <map>
#include <mutex>

#include "runtime/current.hpp"
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
  detail::activate_context(device);
  const auto& api = detail::api_for_use();
  auto s = std::make_shared<State>();
  s->device = device;
  check(need(api.cuStreamCreate, "cuStreamCreate")(&s->handle, cu::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  s->owned = true;
  state_ = std::move(s);
}

namespace detail {
const Stream& default_stream(const Device& device) {
  // The map's entries never move and are never destroyed, so a thread keeps pointers to them.
  constexpr int kCached = 16;
  thread_local const Stream* cached[kCached] = {};
  const int ordinal = device.index();
  if (device.is_cuda() && ordinal < kCached && cached[ordinal] != nullptr) return *cached[ordinal];
  static std::mutex m;
  static std::map<int, Stream>* streams = new std::map<int, Stream>();  // lives until exit, never destroyed
  require_cuda(device, "a stream");
  std::lock_guard<std::mutex> lock(m);
  auto it = streams->find(ordinal);
  if (it == streams->end()) it = streams->emplace(ordinal, Stream(device)).first;
  if (ordinal < kCached) cached[ordinal] = &it->second;
  return it->second;
}
}  // namespace detail

Stream Stream::default_for(const Device& device) {
  return detail::default_stream(device);
}

Stream Stream::external(const Device& device, void* handle) {
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
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  check(need(api.cuStreamSynchronize, "cuStreamSynchronize")(state_->handle), "cuStreamSynchronize");
  after_synchronize();
}

struct Event::State {
  Device device;
  EventFlags flags;
  cu::CUevent handle = nullptr;
  ~State() {
    if (handle != nullptr && !detail::forked_after_init()) {
      if (const auto* api = detail::driver_api(); api != nullptr && api->cuEventDestroy != nullptr)
        api->cuEventDestroy(handle);
    }
  }
};

Event::Event(const Device& device, EventFlags flags) {
  require_cuda(device, "an event");
  detail::activate_context(device);
  const auto& api = detail::api_for_use();
  auto s = std::make_shared<State>();
  s->device = device;
  s->flags = flags;
  unsigned bits = cu::CU_EVENT_DEFAULT;
  if (!flags.timing) bits |= cu::CU_EVENT_DISABLE_TIMING;
  if (flags.blocking) bits |= cu::CU_EVENT_BLOCKING_SYNC;
  check(need(api.cuEventCreate, "cuEventCreate")(&s->handle, bits), "cuEventCreate");
  state_ = std::move(s);
}

void Event::record() {
  record(detail::work_stream(state_->device));
}

void Event::record(const Stream& stream) {
  if (stream.device() != state_->device)
    throw ValueError("an event of " + state_->device.str() + " cannot be recorded on a stream of " +
                     stream.device().str());
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  check(need(api.cuEventRecord, "cuEventRecord")(state_->handle, static_cast<cu::CUstream>(stream.handle())),
        "cuEventRecord");
}

void Event::synchronize() const {
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  check(need(api.cuEventSynchronize, "cuEventSynchronize")(state_->handle), "cuEventSynchronize");
}

bool Event::query() const {
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  const cu::CUresult r = need(api.cuEventQuery, "cuEventQuery")(state_->handle);
  if (r == cu::CUDA_ERROR_NOT_READY) return false;
  check(r, "cuEventQuery");
  return true;
}

const Device& Event::device() const noexcept {
  return state_->device;
}
const EventFlags& Event::flags() const noexcept {
  return state_->flags;
}

void Stream::wait_event(const Event& event) const {
  if (event.device() != state_->device)
    throw ValueError("a stream of " + state_->device.str() + " cannot wait for an event of " + event.device().str());
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  check(need(api.cuStreamWaitEvent, "cuStreamWaitEvent")(state_->handle, static_cast<cu::CUevent>(event.handle()), 0),
        "cuStreamWaitEvent");
}

float Event::elapsed(const Event& start, const Event& stop) {
  if (!start.state_->flags.timing || !stop.state_->flags.timing)
    throw ValueError("Event::elapsed: an event made without timing (EventFlags::timing = false) cannot be timed");
  if (start.state_->device != stop.state_->device)
    throw ValueError("Event::elapsed: events of " + start.state_->device.str() + " and " + stop.state_->device.str());
  detail::activate_context(start.state_->device);
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
  detail::activate_context(device);
  const auto& api = detail::api_for_use();
  check(api.cuCtxSynchronize(), "cuCtxSynchronize");
  after_synchronize();
}

}  // namespace xp
