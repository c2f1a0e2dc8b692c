#pragma once

// NVTX ranges around xp's own operations and kernel launches (XP_NVTX=1), for Nsight Systems and
// other tools that read NVTX. Nothing is linked: the profiler's injection library
// (NVTX_INJECTION64_PATH) or libnvToolsExt.so.1 is opened at the first range when XP_NVTX is on.
// Off (the default), a range costs one load and one branch.

#include <atomic>
#include <string>

namespace xp::detail {

// 0: not decided yet (XP_NVTX not read), 1: off, 2: on.
extern std::atomic<int> g_nvtx_state;

// Reads XP_NVTX on the first call and opens the library; pushes `name` when on. True when pushed.
bool nvtx_push_slow(const char* name) noexcept;
void nvtx_pop() noexcept;

// One range for the lifetime of the object.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) noexcept {
    if (g_nvtx_state.load(std::memory_order_relaxed) != 1) [[unlikely]]
      pushed_ = nvtx_push_slow(name);
  }
  ~NvtxRange() {
    if (pushed_) [[unlikely]]
      nvtx_pop();
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  bool pushed_ = false;
};

// For `xp doctor`: whether XP_NVTX is on, and the library that receives the ranges or why none does.
struct NvtxStatus {
  bool enabled = false;
  std::string library;  // the path opened
  std::string error;    // why no library receives the ranges, when enabled and none does
};
NvtxStatus nvtx_status() noexcept;

}  // namespace xp::detail
