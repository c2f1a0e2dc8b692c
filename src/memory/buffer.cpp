#include "xp/buffer.hpp"

#include "runtime/current.hpp"
#include "runtime/driver.hpp"
#include "xp/error.hpp"
#include "xp/memory.hpp"

namespace xp {

namespace cu = detail::cu;

using detail::check;
using detail::need;

struct Buffer::State {
  Device device;
  cu::CUdeviceptr ptr = 0;
  std::size_t bytes = 0;
  ~State() {
    if (ptr != 0 && !detail::forked_after_init()) {
      if (const auto* api = detail::driver_api(); api != nullptr && api->cuMemFree != nullptr) {
        try {
          detail::activate_context(device);
          api->cuMemFree(ptr);
        } catch (...) {  // a destructor cannot report; the context is gone or spoiled
        }
      }
    }
  }
};

Buffer::Buffer(const Device& device, std::size_t bytes) {
  if (!device.is_cuda()) throw ValueError("xp::Buffer is device memory: " + device.str() + " is not a CUDA device");
  detail::activate_context(device);
  const auto& api = detail::api_for_use();
  auto s = std::make_shared<State>();
  s->device = device;
  s->bytes = bytes;
  if (bytes > 0) {
    const auto mem_alloc = need(api.cuMemAlloc, "cuMemAlloc");
    cu::CUresult r = mem_alloc(&s->ptr, bytes);
    if (r == cu::CUDA_ERROR_OUT_OF_MEMORY) {
      // The blocks xp's arrays left cached on the device go back to the driver, then once more.
      free_all(device);
      r = mem_alloc(&s->ptr, bytes);
    }
    if (r != cu::CUDA_SUCCESS)
      throw CudaError(r, detail::driver_error_name(r),
                      detail::driver_error_message(r) + " (asked for " + std::to_string(bytes) + " bytes on " +
                          device.str() + ")" +
                          (detail::driver_error_advice(r).empty() ? "" : " " + detail::driver_error_advice(r)),
                      "cuMemAlloc");
  }
  state_ = std::move(s);
}

std::size_t Buffer::size() const noexcept {
  return state_ ? state_->bytes : 0;
}
const Device& Buffer::device() const noexcept {
  static const Device cpu;
  return state_ ? state_->device : cpu;
}
std::uint64_t Buffer::address() const noexcept {
  return state_ ? state_->ptr : 0;
}

namespace {
void check_range(const Buffer& b, std::size_t bytes, std::size_t offset, const char* what) {
  if (!b) throw ValueError(std::string(what) + ": the buffer is empty");
  if (offset > b.size() || bytes > b.size() - offset)
    throw ValueError(std::string(what) + ": " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                     " run past the end of a " + std::to_string(b.size()) + "-byte buffer");
}
}  // namespace

// The synchronous forms run on the calling thread's current stream of the device (xp's default one
// outside a StreamScope) and wait for it: they come
// after every kernel launched there (which the legacy default stream would not guarantee, xp's
// streams being non-blocking).
void Buffer::copy_from_host(const void* src, std::size_t bytes, std::size_t offset) {
  const Stream s = detail::work_stream(device());
  copy_from_host_async(src, bytes, s, offset);
  s.synchronize();
}

void Buffer::copy_to_host(void* dst, std::size_t bytes, std::size_t offset) const {
  check_range(*this, bytes, offset, "copy_to_host");
  const Stream s = detail::work_stream(device());
  copy_to_host_async(dst, bytes, s, offset);
  s.synchronize();
}

void Buffer::copy_from(const Buffer& src, std::size_t bytes) {
  check_range(*this, bytes, 0, "copy_from");
  check_range(src, bytes, 0, "copy_from");
  if (src.device() != device())
    throw ValueError("copy_from: source on " + src.device().str() + ", destination on " + device().str());
  if (bytes == 0) return;
  const Stream s = detail::work_stream(device());
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  check(need(api.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync")(state_->ptr, src.address(), bytes,
                                                         static_cast<cu::CUstream>(s.handle())),
        "cuMemcpyDtoDAsync");
  s.synchronize();
}

void Buffer::copy_from_host_async(const void* src, std::size_t bytes, const Stream& stream, std::size_t offset) {
  check_range(*this, bytes, offset, "copy_from_host_async");
  if (stream.device() != device())
    throw ValueError("copy_from_host_async: buffer on " + device().str() + ", stream on " + stream.device().str());
  if (bytes == 0) return;
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  check(need(api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync")(state_->ptr + offset, src, bytes,
                                                         static_cast<cu::CUstream>(stream.handle())),
        "cuMemcpyHtoDAsync");
}

void Buffer::copy_to_host_async(void* dst, std::size_t bytes, const Stream& stream, std::size_t offset) const {
  check_range(*this, bytes, offset, "copy_to_host_async");
  if (stream.device() != device())
    throw ValueError("copy_to_host_async: buffer on " + device().str() + ", stream on " + stream.device().str());
  if (bytes == 0) return;
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  check(need(api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync")(dst, state_->ptr + offset, bytes,
                                                         static_cast<cu::CUstream>(stream.handle())),
        "cuMemcpyDtoHAsync");
}

void Buffer::fill_bytes(unsigned char value) {
  if (!state_ || state_->bytes == 0) return;
  const Stream s = detail::work_stream(device());
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  check(need(api.cuMemsetD8Async, "cuMemsetD8Async")(state_->ptr, value, state_->bytes,
                                                     static_cast<cu::CUstream>(s.handle())),
        "cuMemsetD8Async");
  s.synchronize();
}

}  // namespace xp
