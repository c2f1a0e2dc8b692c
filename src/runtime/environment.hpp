#pragma once

#include <optional>
#include <string>

namespace xp::detail {

// The one place where xp reads the process environment (config.cpp). Everything else asks here.
std::optional<std::string> getenv_string(const char* name);

// Variables that are not xp's own but steer what xp finds.
struct ForeignEnvironment {
  std::optional<std::string> cuda_visible_devices;
  std::optional<std::string> cuda_path, cuda_home, conda_prefix, virtual_env, pythonpath;
  std::optional<std::string> home, xdg_cache_home;
  std::optional<std::string> openblas_coretype;      // OpenBLAS's own: the kernel set it loads
  std::optional<std::string> path;                   // PATH: where the host C++ compiler is looked for
  std::optional<std::string> nvtx_injection64_path;  // NVTX's: the profiler's library (XP_NVTX)
};
ForeignEnvironment foreign_environment();

}  // namespace xp::detail

#include <cstdint>
#include <string_view>

#include "xp/config.hpp"

namespace xp::detail {

// Parsers behind config(), exposed for tests. Each returns nullopt for a malformed value.
std::string lower(std::string s);
std::string trim(const std::string& s);
std::optional<std::uint64_t> parse_u64(std::string_view digits);
std::optional<bool> parse_bool_setting(const std::string& raw);
std::optional<std::uint64_t> parse_byte_count(const std::string& raw);      // "512M", "1GiB", "2GB"
std::optional<DeviceRequest> parse_device_setting(const std::string& raw);  // "cpu", "cuda", "cuda:N"
// XP_GPU_MEMORY_LIMIT: a byte count above 0 ("256M"), or a plain decimal percentage above 0 and at
// most 100 ("80%", "12.5 %").
std::optional<MemoryLimit> parse_memory_limit(const std::string& raw);

}  // namespace xp::detail
