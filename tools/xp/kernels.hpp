#pragma once

#include <string>
#include <vector>

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
// `xp cache info|list|clear`.
int cache(const std::string& action);
// `xp cache warm`: compiles the common array kernels for the local GPU into the disk cache.
int cache_warm();

}  // namespace xp_cli
