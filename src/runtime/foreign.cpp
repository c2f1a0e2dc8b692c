// Driver calls for memory and streams of other libraries (foreign.hpp).
#include "runtime/foreign.hpp"

#include "runtime/driver.hpp"

namespace xp::detail {

void stream_wait_stream(std::uintptr_t waiter, std::uintptr_t producer) {
  const auto& api = api_for_use();
  const auto wait = need(api_for_use().cuStreamWaitEvent, "cuStreamWaitEvent");
  cu::CUevent e = nullptr;
  check(need(api.cuEventCreate, "cuEventCreate")(&e, cu::CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  cu::CUresult r = need(api.cuEventRecord, "cuEventRecord")(e, reinterpret_cast<cu::CUstream>(producer));
  const char* call = "cuEventRecord";
  if (r == cu::CUDA_SUCCESS) {
    r = wait(reinterpret_cast<cu::CUstream>(waiter), e, 0);
    call = "cuStreamWaitEvent";
  }
  if (api.cuEventDestroy != nullptr) api.cuEventDestroy(e);  // the wait stays: it was captured above
  check(r, call);
}

std::optional<int> pointer_device_ordinal(std::uintptr_t p) {
  (void)api_for_use();  // DeviceUnavailable when CUDA cannot be used
  const auto get = need(api_for_use().cuPointerGetAttribute, "cuPointerGetAttribute");
  int ordinal = -1;
  const cu::CUresult r = get(&ordinal, cu::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, static_cast<cu::CUdeviceptr>(p));
  if (r == cu::CUDA_ERROR_INVALID_VALUE) return std::nullopt;
  check(r, "cuPointerGetAttribute");
  return ordinal;
}

}  // namespace xp::detail
