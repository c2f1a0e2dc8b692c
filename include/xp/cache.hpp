#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xp/export.hpp"
#include "xp/program.hpp"

namespace xp {

// The disk cache of compiled kernels (XP_CACHE_DIR, capped by XP_CACHE_MAX_BYTES).
struct KernelCacheInfo {
  std::string folder;
  bool usable = false;
  // Whether the folder exists: looking at the cache never creates it, the first kernel stored does.
  bool folder_exists = false;
  std::string problem;  // why it is disabled, when it is
  std::uint64_t bytes = 0;
  std::uint64_t max_bytes = 0;
  std::size_t entries = 0;
  // Names in the recent list: the entries the last processes used, first used first, whose kernels
  // are loaded onto a GPU in the background when a process starts using it (XP_PRELOAD_KERNELS).
  std::size_t recent = 0;
};

struct KernelCacheEntry {
  std::string file;
  std::uint64_t bytes = 0;
  std::int64_t last_used_unix_ns = 0;
  std::string program;  // the program's name, from the entry's key
  std::string target;   // "sm_90" or "compute_90"
  std::string nvrtc;    // the NVRTC version that built it
};

// Never throws: a malformed XP_* variable shows as a disabled cache, the ConfigError's text its problem.
XP_API KernelCacheInfo kernel_cache_info();
// Least recently used first. Throws ConfigError for a malformed XP_* variable.
XP_API std::vector<KernelCacheEntry> kernel_cache_entries();
// Removes every entry (and temporary files that writers which died left behind); returns how many
// entries. Only xp's files are removed: an entry's name (32 lowercase hex digits and .xpk) and
// header, never other files in the folder. An entry another process removes or stores meanwhile is
// no failure; `failed`, when given, gets "file: reason" for each entry that could not be removed.
// Throws ConfigError for a malformed XP_* variable.
XP_API std::size_t clear_kernel_cache(std::vector<std::string>* failed = nullptr);

// What warm_kernel_cache did.
struct KernelCacheWarm {
  std::string device;  // "cuda:0"
  std::string gpu;     // its name: "xp compile-only GPU (sm_90)" for a warm without a GPU
  std::string arch;    // "sm_90"
  bool compile_only = false;
  std::size_t operations = 0;       // operations that ran, each compiling its kernels or finding them
  std::vector<std::string> failed;  // "float32 a + b: <the error>" for each operation that failed
  double seconds = 0;
  std::size_t entries_before = 0, entries_after = 0;
  std::string folder;
};

// Fills the disk cache with the array kernels most programs meet, by running each operation once
// on small arrays of the default device (the path of any program, so the entries are the ones it
// looks up): elementwise arithmetic, comparisons, the common transcendental functions, casts, a
// fused a*b+c, contiguous, offset, strided and broadcast layouts, reductions and cumulative_sum, over
// float32, float64, float16, bfloat16, int32 and int64. A process that later meets these operations
// at any size compiles none of them. Throws DeviceUnavailable when the default device is not a GPU,
// Error when the disk cache is disabled (nothing would be kept).
XP_API KernelCacheWarm warm_kernel_cache();

// The same without a GPU, for a GPU of architecture `arch`: the process is given a compile-only GPU
// of that architecture as cuda:0, on which the operations compile and store their kernels under the
// keys a real GPU of the architecture looks up, and run nothing. That choice is for the life of the
// process, whatever GPU the machine has, and it must come before anything in the process has
// looked for CUDA: call this in a process of its own (`xp cache warm --arch sm_90` does). Throws
// ValueError for an architecture that is not one, Error when CUDA was already looked for in this
// process, when NVRTC is missing or cannot compile for `arch` (the first compile's error), or when
// the disk cache is disabled.
XP_API KernelCacheWarm warm_kernel_cache(Arch arch);

}  // namespace xp
