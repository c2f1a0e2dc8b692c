#pragma once

// Where Python packages live, for the searches that look for NVIDIA's wheels (NVRTC, cuBLAS).

#include <string>
#include <vector>

#include "runtime/environment.hpp"

namespace xp::detail {

// The site-packages folders of a virtual environment (lib/python3*/site-packages), newest Python
// first (by the minor version as a number); none for an empty path.
std::vector<std::string> venv_site_packages(const std::string& virtual_env);

// The other places, in search order: each PYTHONPATH entry, the user's
// ~/.local/lib/python3*/site-packages, /usr/local/lib/python3*/dist-packages (newest Python first
// in both), then /usr/lib/python3/dist-packages.
std::vector<std::string> other_site_packages(const ForeignEnvironment& env);

}  // namespace xp::detail
