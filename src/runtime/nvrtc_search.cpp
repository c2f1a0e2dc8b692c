// Finds NVRTC in the order of docs/design.md ("Finding libraries") and chooses the one xp uses.
#include "runtime/nvrtc_search.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "runtime/cuda_abi.hpp"
#include "runtime/dynlib.hpp"
#include "runtime/environment.hpp"
#include "runtime/site_packages.hpp"
#include "xp/config.hpp"

namespace xp::detail {

namespace {

constexpr const char* kSonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

struct Searcher {
  NvrtcSearch result;
  std::set<std::string> seen;  // real paths already loaded

  // Loads the file (or soname), reads its version and archs; records it when it is NVRTC.
  void consider(const std::string& target, const std::string& step) {
    const bool is_path = target.find('/') != std::string::npos;
    if (is_path && !file_exists(target)) {
      result.tried.push_back(target + " [" + step + "]");
      return;
    }
    DynLib lib = DynLib::open(target);
    if (!lib.ok()) {
      result.tried.push_back(target + " [" + step + "]: " + lib.error());
      if (result.explicit_path) result.explicit_error = lib.error();
      return;
    }
    if (!seen.insert(lib.path()).second) return;
    LibraryInfo info;
    info.name = "libnvrtc";
    info.found = true;
    info.path = lib.path();
    info.found_by = step;
    auto version = reinterpret_cast<nvrtc::PFN_nvrtcVersion>(lib.symbol("nvrtcVersion"));
    auto num_archs = reinterpret_cast<nvrtc::PFN_nvrtcGetNumSupportedArchs>(lib.symbol("nvrtcGetNumSupportedArchs"));
    auto archs = reinterpret_cast<nvrtc::PFN_nvrtcGetSupportedArchs>(lib.symbol("nvrtcGetSupportedArchs"));
    int major = 0, minor = 0;
    if (version == nullptr || version(&major, &minor) != 0) {
      info.error = "not an NVRTC library (no nvrtcVersion)";
      result.tried.push_back(target + " [" + step + "]: " + info.error);
      if (result.explicit_path) result.explicit_error = info.error;
      return;
    }
    info.version_number = major * 1000 + minor * 10;
    info.version = std::to_string(major) + "." + std::to_string(minor);
    int n = 0;
    if (num_archs != nullptr && archs != nullptr && num_archs(&n) == 0 && n > 0 && n < 256) {
      info.archs.resize(static_cast<size_t>(n));
      if (archs(info.archs.data()) != 0) info.archs.clear();
    }
    result.found.push_back(std::move(info));
    lib.release();  // stays loaded: the chosen one is used, the others cost only address space
  }

  void folder(const std::string& dir, const std::string& step) {
    for (const char* so : kSonames) consider(dir + "/" + so, step);
  }
};

NvrtcSearch search() {
  Searcher s;
  std::string explicit_path;
  for (const auto& row : config_variables())
    if (row.name == "XP_NVRTC" && row.set) explicit_path = row.value;
  if (!explicit_path.empty()) {
    s.result.explicit_path = true;
    s.consider(explicit_path, "XP_NVRTC");
    if (s.result.found.empty() && s.result.explicit_error.empty()) s.result.explicit_error = "no such file";
    return s.result;
  }
  const ForeignEnvironment env = foreign_environment();
  for (const auto& [var, value] : {std::pair{"CUDA_PATH", env.cuda_path}, std::pair{"CUDA_HOME", env.cuda_home}}) {
    if (!value || value->empty()) continue;
    for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib"}) s.folder(*value + sub, var);
  }
  // Python wheels: nvidia-cuda-nvrtc installs nvidia/cu13/lib (CUDA 13) or nvidia/cuda_nvrtc/lib (12).
  std::vector<std::string> site = venv_site_packages(env.virtual_env.value_or(""));
  for (auto& d : other_site_packages(env)) site.push_back(std::move(d));
  for (const auto& d : site) {
    for (const char* sub : {"/nvidia/cu13/lib", "/nvidia/cuda_nvrtc/lib"}) {
      const std::string dir = d + sub;
      if (file_exists(dir))
        s.folder(dir, "wheel");
      else
        s.result.tried.push_back(dir + " [wheel]");
    }
  }
  if (env.conda_prefix && !env.conda_prefix->empty()) s.folder(*env.conda_prefix + "/lib", "CONDA_PREFIX");
  for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12"}) s.consider(so, "OS loader");
  s.folder("/usr/local/cuda/lib64", "/usr/local/cuda");
  return s.result;
}

}  // namespace

const NvrtcSearch& nvrtc_search() noexcept {
  static const NvrtcSearch r = [] {
    try {
      return search();
    } catch (...) {
      return NvrtcSearch{};
    }
  }();
  return r;
}

bool nvrtc_supports(const LibraryInfo& nvrtc, int arch) {
  if (nvrtc.archs.empty()) return false;
  return arch >= *std::min_element(nvrtc.archs.begin(), nvrtc.archs.end());
}

std::string nvrtc_rejection(const LibraryInfo& nvrtc, int driver_version, const std::vector<int>& gpu_archs) {
  if (!nvrtc.found || nvrtc.version_number == 0) return "not a usable NVRTC";
  const int major = nvrtc.version_number / 1000;
  if (driver_version > 0 && major > driver_version / 1000)
    return "NVRTC " + nvrtc.version + " is newer than the driver's CUDA " + std::to_string(driver_version / 1000) +
           "." + std::to_string((driver_version % 1000) / 10) + ": its code would not load";
  for (int a : gpu_archs)
    if (!nvrtc_supports(nvrtc, a))
      return "NVRTC " + nvrtc.version + " cannot compile for sm_" + std::to_string(a) +
             (nvrtc.archs.empty()
                  ? ""
                  : " (its oldest is sm_" + std::to_string(*std::min_element(nvrtc.archs.begin(), nvrtc.archs.end())) +
                        ")");
  return {};
}

int choose_nvrtc(const std::vector<LibraryInfo>& found, int driver_version, const std::vector<int>& gpu_archs) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(found.size()); ++i) {
    if (!nvrtc_rejection(found[i], driver_version, gpu_archs).empty()) continue;
    // Newest wins; among equals, the earlier search step.
    if (best < 0 || found[i].version_number > found[best].version_number) best = i;
  }
  return best;
}

}  // namespace xp::detail
