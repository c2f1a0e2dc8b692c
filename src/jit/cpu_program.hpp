#pragma once

// A Program compiled for the CPU (docs/design.md, "CUDA kernels on the CPU"): the shared object of
// its kernels, loaded once per process and shared by every Program of the same code. Internal to
// src/jit.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit/cpu_engine.hpp"
#include "jit/kernel_state.hpp"

namespace xp::detail {

struct ProgramState;

struct CpuModule {
  void* handle = nullptr;  // dlopen's; never closed (kernels may be in use until exit)
  std::string key;
  std::size_t bytes = 0;
  std::vector<std::unique_ptr<CpuKernelDef>> kernels;
  std::mutex m;
  std::map<std::string, std::shared_ptr<const KernelState>, std::less<>> states;  // by name
};

// The program's module for the CPU: from the program, the memory cache, the disk cache or the
// host compiler. Throws CompileError (no compiler, or the compiler failed).
std::shared_ptr<CpuModule> cpu_module_for(ProgramState& st, CompileStats& stats);

// The prelude and the headers it answers for (cuda_fp16.h, ...), as (name, content).
std::vector<std::pair<std::string, std::string>> cpu_prelude_files();

}  // namespace xp::detail
