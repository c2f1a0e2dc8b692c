#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cuda_abi.hpp"
#include "xp/device.hpp"
#include "xp/stream.hpp"

namespace xp::detail {

// The function's own limits (its registers and __launch_bounds__ bound the threads per block).
// Asked of the driver when something first needs them (function_limits in kernel.cpp): a launch
// with dynamic shared memory, a launch the driver refused, Kernel::registers(). A launch within the
// device's limits needs none of them: the driver checks the function's own, and xp explains a
// refusal with them. Four driver calls that every kernel's lookup paid before, a measurable part of
// a process's first c = a + b (docs/performance.md, "Kernel limits asked when needed").
struct FunctionLimits {
  unsigned max_threads = 0;
  unsigned static_shared = 0;
  unsigned dynamic_shared = 0;  // the dynamic shared memory allowed before any cuFuncSetAttribute
  int registers = 0;
};

// Everything a launch needs, gathered once when the kernel is looked up, so that a launch does
// integer compares and one cuLaunchKernel.
struct KernelState {
  std::shared_ptr<const void> module;  // keeps the module loaded
  Device device;
  std::string name;
  cu::CUfunction function = nullptr;
  std::optional<Stream> default_stream;  // none for a kernel on the CPU
  unsigned max_block[3] = {0, 0, 0};
  unsigned max_grid[3] = {0, 0, 0};
  unsigned max_threads_device = 0;  // per block, on this device (the function may allow fewer)
  unsigned max_shared_optin = 0;    // per block, static + dynamic
  // The dynamic shared memory known to be allowed: 0 until a launch asks for some, then the
  // driver's allowance, raised with cuFuncSetAttribute on need (under mutex).
  mutable std::atomic<unsigned> dynamic_shared_allowed{0};
  bool params_known = false;
  std::vector<std::size_t> param_sizes;
  mutable std::atomic<bool> limits_known{false};
  mutable FunctionLimits limits;  // once limits_known (function_limits)
  mutable std::mutex mutex;       // asking for the limits; raising the shared memory allowed

  // A kernel of a program compiled for the CPU (cpu_program.cpp): its CpuKernelDef; null on a GPU.
  const void* cpu = nullptr;

  explicit KernelState(Stream s) : default_stream(std::move(s)) {}
  KernelState() = default;  // on the CPU
};

// The function's limits, asked of the driver the first time (then kept); throws CudaError.
const FunctionLimits& function_limits(const KernelState& k);

// params_from_module: the parameter sizes read from the cubin, when it had them; else the driver
// is asked (cuFuncGetParamInfo, where it exists).
std::shared_ptr<const KernelState> make_kernel_state(std::shared_ptr<const void> keep_alive, cu::CUmodule module,
                                                     const Device& device, std::string name,
                                                     const std::vector<std::size_t>* params_from_module);

}  // namespace xp::detail
