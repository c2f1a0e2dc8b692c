#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xp/export.hpp"

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

}  // namespace xp
