#pragma once

// The machine's C++ compiler, which builds CUDA C++ programs for the CPU into shared objects
// (docs/design.md, "CUDA kernels on the CPU"): found once per process (XP_HOST_CXX, else c++ on
// PATH), identified by its path and `--version` output, run with fork and exec. Internal to src/jit.

#include <string>
#include <vector>

namespace xp::detail {

struct HostCompiler {
  bool available = false;
  std::string error;               // why not, and how to fix it
  std::string requested;           // XP_HOST_CXX's value, or "c++"
  std::string found_by;            // "XP_HOST_CXX" or "PATH"
  std::string path;                // absolute, links resolved
  std::string version;             // the first line of `--version`
  std::string identity;            // path and the whole `--version` output: key material
  std::string cpu;                 // the CPU's model and features: key material (the code is built for this CPU)
  std::vector<std::string> flags;  // the flags every compile gets
};

// Found on first use; never throws (a malformed XP_* variable is reported as unavailable).
const HostCompiler& host_compiler();

struct HostRun {
  int status = -1;     // the exit status; -1 when it could not be run or died of a signal
  std::string output;  // stdout and stderr
  double ms = 0;
};
// Runs `argv` (argv[0] an absolute path) in the current folder, output to `log_file`; never throws.
HostRun run_program(const std::vector<std::string>& argv, const std::string& log_file);

}  // namespace xp::detail
