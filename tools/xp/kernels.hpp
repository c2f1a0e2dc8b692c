#pragma once

#include <string>
#include <vector>

#include "xp/program.hpp"

namespace xp_cli {

struct CompileArgs {
  std::string file;
  std::string arch;  // "sm_90"; empty: the default device's, else the newest NVRTC knows
  std::string kernel;
  bool ptx = false;
  std::vector<std::string> options;
};

// `xp compile`: compiles through the caches, prints the time and whether a cache hit.
int compile(const CompileArgs& args);
// "sm_90" or "90" as an Arch; ValueError otherwise.
xp::Arch parse_arch(const std::string& text);
// `xp cache info|list|clear|warm`; arch: warm's --arch ("" without it; the other actions refuse it).
int cache(const std::string& action, const std::string& arch);
// `xp cache warm`: compiles the common array kernels into the disk cache, for the local GPU or, with
// an architecture, without one.
int cache_warm(const std::string& arch);

}  // namespace xp_cli
