#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cuda_abi.hpp"
#include "xp/device.hpp"
#include "xp/stream.hpp"

namespace xp::detail {

// Everything a launch needs, gathered once when the kernel is looked up, so that a launch does
// integer compares and one cuLaunchKernel.
struct KernelState {
  std::shared_ptr<const void> module;  // keeps the module loaded
  Device device;
  std::string name;
  cu::CUfunction function = nullptr;
  Stream default_stream;
  unsigned max_block[3] = {0, 0, 0};
  unsigned max_grid[3] = {0, 0, 0};
  unsigned max_threads = 0;  // for this function (registers limit it)
  unsigned static_shared = 0;
  unsigned max_shared_optin = 0;                            // per block, static + dynamic
  mutable std::atomic<unsigned> dynamic_shared_allowed{0};  // raised with cuFuncSetAttribute on need
  bool params_known = false;
  std::vector<std::size_t> param_sizes;
  int registers = 0;

  explicit KernelState(Stream s) : default_stream(std::move(s)) {}
};

// params_from_module: the parameter sizes read from the cubin, when it had them; else the driver
// is asked (cuFuncGetParamInfo, where it exists).
std::shared_ptr<const KernelState> make_kernel_state(std::shared_ptr<const void> keep_alive, cu::CUmodule module,
                                                     const Device& device, std::string name,
                                                     const std::vector<std::size_t>* params_from_module);

}  // namespace xp::detail
