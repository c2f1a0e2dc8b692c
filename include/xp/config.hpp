#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xp/export.hpp"

namespace xp {

enum class LogLevel { error, warn, info, debug };

// The most CPU threads xp uses: XP_NUM_THREADS and set_num_threads accept 1 to this.
constexpr int kMaxNumThreads = 4096;

// XP_GPU_MEMORY_LIMIT: an absolute byte count, or a percentage of each device's memory.
struct MemoryLimit {
  std::uint64_t bytes = 0;  // when percent is empty
  std::optional<double> percent;
};

// What the user asked for with XP_DEVICE / FORCE_CPU.
struct DeviceRequest {
  enum class Kind { unset, cpu, cuda_default, cuda_index };
  Kind kind = Kind::unset;
  int index = 0;  // for cuda_index
};

// Every XP_* variable, parsed and validated once per process (see the README's table).
struct Config {
  DeviceRequest device;                                    // XP_DEVICE, with FORCE_CPU=1 folded in as cpu
  bool force_cpu = false;                                  // FORCE_CPU
  std::string cuda_driver;                                 // XP_CUDA_DRIVER, empty when unset
  std::string nvrtc;                                       // XP_NVRTC
  std::string cublas;                                      // XP_CUBLAS
  std::string cusolver;                                    // XP_CUSOLVER
  std::string cufft;                                       // XP_CUFFT
  std::string host_cxx;                                    // XP_HOST_CXX, empty when unset (c++ on PATH)
  std::string cache_dir;                                   // XP_CACHE_DIR or its default, resolved
  std::uint64_t cache_max_bytes = std::uint64_t{1} << 30;  // XP_CACHE_MAX_BYTES
  std::optional<MemoryLimit> gpu_memory_limit;             // XP_GPU_MEMORY_LIMIT
  bool lazy = true;                                        // XP_LAZY
  int num_threads = 0;                                     // XP_NUM_THREADS; 0 = the cores this process may use
  std::size_t preload_kernels = 16;                        // XP_PRELOAD_KERNELS; 0 = none
  LogLevel log = LogLevel::warn;                           // XP_LOG
  bool nvtx = false;                                       // XP_NVTX: NVTX ranges around xp's operations
};

// The parsed configuration. Throws ConfigError (naming the variable, its value and the accepted
// forms) on every call while any variable is malformed.
XP_API const Config& config();

// One row of the configuration table, as found in the environment (for `xp doctor`).
struct ConfigVariable {
  std::string name;
  bool set = false;
  std::string value;
  std::string meaning;
  std::string error;  // non-empty when the value is malformed
};

// Every variable xp reads, set or not, with its validation result. Never throws.
XP_API std::vector<ConfigVariable> config_variables() noexcept;

// An XP_* variable set in the environment that xp does not read (a misspelt XP_DEVIC=cpu is
// otherwise silently ignored), with the known name at most two edits away, if any. The test
// suite's XP_TEST_* and XP_FAKE_* are left out. Sorted by name; never throws.
struct UnknownVariable {
  std::string name;
  std::string value;
  std::string nearest;  // empty when no known name is close
};
XP_API std::vector<UnknownVariable> unknown_config_variables() noexcept;

}  // namespace xp
