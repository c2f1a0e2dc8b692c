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
};
ForeignEnvironment foreign_environment();

}  // namespace xp::detail
