#pragma once

// Runs a CUDA kernel compiled for the CPU (docs/design.md, "CUDA kernels on the CPU"): the blocks
// of a launch in parallel on xp's CPU threads (runtime/parallel.hpp), the threads of a block as a
// plain loop until one synchronises, then as fibers. Synchronous. Internal to src/jit.

#include <cstddef>
#include <string>
#include <vector>

#include "jit/cpu_device/xp_cpu_abi.h"
#include "xp/program.hpp"

namespace xp::detail {

struct CpuKernelDef {
  std::string name;
  std::string program;  // for messages
  xp_cpu_entry entry = nullptr;
  std::vector<std::size_t> param_sizes;
  // Whether it may synchronise (the program's XP_CPU_SYNC_SYMBOL, and a site of a synchronising
  // call in the kernel's code, XP_CPU_SYNC_SITES_SECTION); when not, each block runs as one plain
  // loop over its threads (XP_CPU_ALL_THREADS).
  bool synchronises = true;
  // Makes the program's thread-local storage on the calling thread (XP_CPU_PREPARE_THREAD_SYMBOL).
  xp_cpu_prepare_thread_fn prepare_thread = nullptr;
};

// The limits a launch is checked against: a GPU's (CUDA's compute capability 9.0).
inline constexpr unsigned kCpuMaxBlock[3] = {1024, 1024, 64};
inline constexpr unsigned kCpuMaxGrid[3] = {2147483647u, 65535u, 65535u};
inline constexpr unsigned kCpuMaxThreads = 1024;
inline constexpr unsigned kCpuMaxSharedBytes = 227u << 10;

// Checks the configuration and the arguments (ValueError), runs every block, and throws Error when
// a thread failed (an assert, __trap, an exception, threads that wait for each other for ever).
void cpu_launch(const CpuKernelDef& k, const LaunchConfig& c, void** args, const std::size_t* sizes, std::size_t count);

}  // namespace xp::detail
