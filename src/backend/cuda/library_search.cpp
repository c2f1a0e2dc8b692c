// The search for cuSOLVER and cuFFT (library_search.hpp), the steps of cuBLAS's (cublas.cpp).
#include "backend/cuda/library_search.hpp"

#include <set>
#include <utility>

#include "runtime/driver.hpp"
#include "runtime/environment.hpp"
#include "runtime/log.hpp"
#include "runtime/site_packages.hpp"
#include "xp/config.hpp"

namespace xp::detail::cuda {

namespace {

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

struct Searcher {
  const LibrarySpec& spec;
  LibrarySearch result;
  std::vector<DynLib> libs;  // parallel to result.found
  std::set<std::string> seen;
  bool explicit_path = false;
  std::string explicit_error;

  void consider(const std::string& target, const std::string& step) {
    const std::string var = spec.variable;
    if (target.find('/') != std::string::npos && !file_exists(target)) {
      result.tried.push_back(target + " [" + step + "]");
      if (explicit_path) explicit_error = var + " points at " + target + ", which does not exist";
      return;
    }
    DynLib lib = DynLib::open(target);
    if (!lib.ok()) {
      result.tried.push_back(target + " [" + step + "]: " + lib.error());
      if (explicit_path) explicit_error = var + "=" + target + " could not be loaded: " + lib.error();
      return;
    }
    if (!seen.insert(lib.path()).second) return;
    using GetVersion = int (*)(int*);
    const auto get = reinterpret_cast<GetVersion>(lib.symbol(spec.version_symbol));
    int v = 0;
    if (get == nullptr || get(&v) != 0 || v <= 0) {
      const std::string why = lib.path() + " is not a " + spec.title + " library (no " + spec.version_symbol + ")";
      result.tried.push_back(target + " [" + step + "]: " + why);
      if (explicit_path) explicit_error = var + ": " + why;
      return;
    }
    LibraryInfo info;
    info.name = spec.name;
    info.found = true;
    info.path = lib.path();
    info.found_by = step;
    info.version_number = v / 1000 * 1000 + v % 1000 / 100 * 10;
    info.version = std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 100) + "." + std::to_string(v % 100);
    result.found.push_back(std::move(info));
    libs.push_back(std::move(lib));
  }

  void folder(const std::string& dir, const std::string& step) {
    for (const auto& so : spec.sonames) consider(dir + "/" + so, step);
  }
};

}  // namespace

LibrarySearchInputs process_library_inputs(const LibrarySpec& spec) {
  LibrarySearchInputs in;
  for (const auto& row : config_variables())
    if (row.name == spec.variable && row.set) in.explicit_path = row.value;
  const ForeignEnvironment env = foreign_environment();
  in.cuda_path = env.cuda_path.value_or("");
  in.cuda_home = env.cuda_home.value_or("");
  in.virtual_env = env.virtual_env.value_or("");
  in.conda_prefix = env.conda_prefix.value_or("");
  in.site_packages = other_site_packages(env);
  in.driver_version = driver_probe().driver_version;
  return in;
}

LibrarySearch search_library(const LibrarySpec& spec, const LibrarySearchInputs& in) {
  Searcher s{spec, {}, {}, {}, false, {}};
  try {
    if (!in.explicit_path.empty()) {
      s.explicit_path = true;
      s.consider(in.explicit_path, spec.variable);
    } else {
      for (const auto& [var, value] : {std::pair{"CUDA_PATH", in.cuda_path}, std::pair{"CUDA_HOME", in.cuda_home}}) {
        if (value.empty()) continue;
        for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib"}) s.folder(value + sub, var);
      }
      std::vector<std::string> site = venv_site_packages(in.virtual_env);
      site.insert(site.end(), in.site_packages.begin(), in.site_packages.end());
      for (const auto& d : site) {
        for (const auto& sub : spec.wheel_dirs) {
          const std::string dir = d + "/" + sub;
          if (file_exists(dir))
            s.folder(dir, "wheel");
          else
            s.result.tried.push_back(dir + " [wheel]");
        }
      }
      if (!in.conda_prefix.empty()) s.folder(in.conda_prefix + "/lib", "CONDA_PREFIX");
      if (in.system_locations) {
        for (const auto& so : spec.sonames) s.consider(so, "OS loader");
        s.folder("/usr/local/cuda/lib64", "/usr/local/cuda");
      }
    }
    // The newest whose CUDA major the driver runs (a library needs a driver of its CUDA major or newer).
    std::vector<std::string> rejected;
    LibrarySearch& r = s.result;
    for (int i = 0; i < static_cast<int>(r.found.size()); ++i) {
      LibraryInfo& f = r.found[static_cast<std::size_t>(i)];
      const int cuda = spec.cuda_major(f.version_number / 1000);
      if (in.driver_version > 0 && cuda > in.driver_version / 1000)
        f.error = std::string(spec.title) + " " + f.version + " comes with CUDA " + std::to_string(cuda) +
                  " and needs its driver; the driver is CUDA " + version_text(in.driver_version);
      if (!f.error.empty()) {
        rejected.push_back(f.path + ": " + f.error);
        continue;
      }
      if (r.chosen < 0 || f.version_number > r.found[static_cast<std::size_t>(r.chosen)].version_number) r.chosen = i;
    }
    if (r.chosen >= 0) {
      r.found[static_cast<std::size_t>(r.chosen)].chosen = true;
      r.lib = std::move(s.libs[static_cast<std::size_t>(r.chosen)]);
    } else if (s.explicit_path && !s.explicit_error.empty()) {
      r.reason = s.explicit_error;
    } else if (!rejected.empty()) {
      r.reason = std::string("no usable ") + spec.title + ": ";
      for (std::size_t i = 0; i < rejected.size(); ++i) r.reason += (i ? "; " : "") + rejected[i];
    } else {
      std::string names;
      for (const auto& so : spec.sonames) names += (names.empty() ? "" : " or ") + so;
      r.reason = std::string(spec.title) + " (" + names + ") was not found; looked at " +
                 std::to_string(r.tried.size()) + " places (set " + spec.variable +
                 " to its path, or install the CUDA toolkit or the " + spec.wheel + " wheel)";
    }
    // The others found are closed again: only the one used stays loaded.
    if (log_enabled(LogLevel::info)) {
      if (r.chosen >= 0) {
        const LibraryInfo& f = r.found[static_cast<std::size_t>(r.chosen)];
        log(LogLevel::info,
            std::string(spec.title) + ": " + f.path + " (" + f.version + ", found by " + f.found_by + ")");
      } else {
        log(LogLevel::info, std::string(spec.title) + ": none (" + r.reason + ")");
      }
    }
    return std::move(s.result);
  } catch (const std::exception& e) {
    LibrarySearch r;
    r.reason = std::string(spec.title) + " search failed: " + e.what();
    return r;
  }
}

CudaLibraryReport library_report(const LibrarySearch& search) {
  CudaLibraryReport r;
  r.found = search.found;
  r.tried = search.tried;
  r.unavailable = search.reason;
  return r;
}

}  // namespace xp::detail::cuda
