#pragma once

// A CUDA C++ program made ready for the host compiler (docs/design.md, "CUDA kernels on the CPU"):
// its source with the few rewrites that macros cannot do, and, after it, one entry point per
// kernel that the engine calls. Internal to src/jit.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xp::detail {

struct CpuSource {
  std::string text;                  // what the compiler reads after the prelude
  std::vector<std::string> kernels;  // the names kernel() finds, entry i for kernels[i]
};

// `source` is the program's; `name` its name (in the compiler's messages); name_expressions as
// ProgramOptions'.
CpuSource prepare_cpu_source(std::string_view source, const std::string& name,
                             const std::vector<std::string>& name_expressions);

// The names of the __global__ functions that are not templates, as written, with the namespaces
// around them ("ns::k"); for tests.
std::vector<std::string> scan_kernel_names(std::string_view source);

}  // namespace xp::detail
