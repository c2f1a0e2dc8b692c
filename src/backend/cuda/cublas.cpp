// Finds and opens cuBLAS, and keeps one handle per device.
#include "backend/cuda/cublas.hpp"

#include "backend/cuda/library_search.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "runtime/current.hpp"
#include "runtime/driver.hpp"
#include "runtime/dynlib.hpp"
#include "runtime/environment.hpp"
#include "runtime/foreign.hpp"
#include "runtime/site_packages.hpp"
#include "xp/config.hpp"
#include "xp/error.hpp"
#include "xp/stream.hpp"

namespace xp::detail::cublas {

namespace {

constexpr const char* kSonames[] = {"libcublas.so.13", "libcublas.so.12"};

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

template <class F>
bool resolve(const DynLib& lib, const char* name, F& slot, std::string& missing) {
  slot = reinterpret_cast<F>(lib.symbol(name));
  if (slot == nullptr && missing.empty()) missing = name;
  return slot != nullptr;
}

// The table of a loaded library; `missing` names the first required entry point it lacks.
Api table_of(const DynLib& lib, std::string& missing) {
  Api api;
  resolve(lib, "cublasGetProperty", api.cublasGetProperty, missing);
  resolve(lib, "cublasCreate_v2", api.cublasCreate_v2, missing);
  resolve(lib, "cublasSetStream_v2", api.cublasSetStream_v2, missing);
  resolve(lib, "cublasSetWorkspace_v2", api.cublasSetWorkspace_v2, missing);
  resolve(lib, "cublasSetMathMode", api.cublasSetMathMode, missing);
  resolve(lib, "cublasGemmStridedBatchedEx", api.cublasGemmStridedBatchedEx, missing);
  std::string optional;
  resolve(lib, "cublasGetStatusName", api.cublasGetStatusName, optional);
  resolve(lib, "cublasDestroy_v2", api.cublasDestroy_v2, optional);
  for (int i = 0; i < 4; ++i) {
    const std::string x(1, "SDCZ"[i]);
    resolve(lib, ("cublas" + x + "getrfBatched").c_str(), api.getrfBatched[i], optional);
    resolve(lib, ("cublas" + x + "getrsBatched").c_str(), api.getrsBatched[i], optional);
  }
  return api;
}

// The libcublasLt that a libcublas of CUDA `major` loaded as its dependency: the same major's
// soname, found among the process's libraries (dlopen with RTLD_NOLOAD), its version from
// cublasLtGetVersion.
LibraryInfo lt_of(int major, const std::string& cublas_path) {
  LibraryInfo info;
  info.name = "libcublasLt";
  const std::string soname = "libcublasLt.so." + std::to_string(major);
  DynLib lt = DynLib::loaded(soname);
  if (!lt.ok()) {
    info.error = soname + " is not among the loaded libraries after " + cublas_path;
    return info;
  }
  info.found = true;
  info.path = lt.path();
  info.found_by = "the loader, for " + cublas_path;
  using GetVersion = std::size_t (*)();
  if (auto get = reinterpret_cast<GetVersion>(lt.symbol("cublasLtGetVersion")); get != nullptr) {
    const std::size_t v = get();  // major * 10000 + minor * 100 + patch
    info.version_number = static_cast<int>(v / 10000 * 1000 + v / 100 % 100 * 10);
    info.version = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  }
  lt.release();  // stays loaded with its libcublas
  return info;
}

struct Searcher {
  SearchResult result;
  std::vector<Api> apis;  // parallel to result.found
  std::set<std::string> seen;
  bool explicit_path = false;
  std::string explicit_error;

  void consider(const std::string& target, const std::string& step) {
    const bool is_path = target.find('/') != std::string::npos;
    if (is_path && !file_exists(target)) {
      result.tried.push_back(target + " [" + step + "]");
      if (explicit_path) explicit_error = "XP_CUBLAS points at " + target + ", which does not exist";
      return;
    }
    DynLib lib = DynLib::open(target);
    if (!lib.ok()) {
      result.tried.push_back(target + " [" + step + "]: " + lib.error());
      if (explicit_path) explicit_error = "XP_CUBLAS=" + target + " could not be loaded: " + lib.error();
      return;
    }
    if (!seen.insert(lib.path()).second) return;
    std::string missing;
    const Api api = table_of(lib, missing);
    int major = 0, minor = 0, patch = 0;
    if (api.cublasGetProperty == nullptr || api.cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
        api.cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS) {
      const std::string why = lib.path() + " is not a cuBLAS library (no cublasGetProperty)";
      result.tried.push_back(target + " [" + step + "]: " + why);
      if (explicit_path) explicit_error = "XP_CUBLAS: " + why;
      return;
    }
    api.cublasGetProperty(PATCH_LEVEL, &patch);
    LibraryInfo info;
    info.name = "libcublas";
    info.found = true;
    info.path = lib.path();
    info.found_by = step;
    info.version_number = major * 1000 + minor * 10;
    info.version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    if (!missing.empty()) info.error = "lacks " + missing;
    result.lt.push_back(lt_of(major, lib.path()));
    result.found.push_back(std::move(info));
    apis.push_back(api);
    lib.release();  // stays loaded: the chosen one is used, the others cost only address space
  }

  void folder(const std::string& dir, const std::string& step) {
    for (const char* so : kSonames) consider(dir + "/" + so, step);
  }
};

Searcher run_search(const SearchInputs& in) {
  Searcher s;
  if (!in.explicit_path.empty()) {
    s.explicit_path = true;
    s.consider(in.explicit_path, "XP_CUBLAS");
  } else {
    for (const auto& [var, value] : {std::pair{"CUDA_PATH", in.cuda_path}, std::pair{"CUDA_HOME", in.cuda_home}}) {
      if (value.empty()) continue;
      for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib"}) s.folder(value + sub, var);
    }
    std::vector<std::string> site = venv_site_packages(in.virtual_env);
    site.insert(site.end(), in.site_packages.begin(), in.site_packages.end());
    for (const auto& d : site) {
      // nvidia-cublas (CUDA 13) installs nvidia/cu13/lib, nvidia-cublas-cu12 nvidia/cublas/lib.
      for (const char* sub : {"/nvidia/cu13/lib", "/nvidia/cublas/lib"}) {
        const std::string dir = d + sub;
        if (file_exists(dir))
          s.folder(dir, "wheel");
        else
          s.result.tried.push_back(dir + " [wheel]");
      }
    }
    if (!in.conda_prefix.empty()) s.folder(in.conda_prefix + "/lib", "CONDA_PREFIX");
    if (in.system_locations) {
      for (const char* so : kSonames) s.consider(so, "OS loader");
      s.folder("/usr/local/cuda/lib64", "/usr/local/cuda");
    }
  }
  // The newest whose CUDA major the driver runs (a cuBLAS needs a driver of its major or newer).
  std::vector<std::string> rejected;
  for (int i = 0; i < static_cast<int>(s.result.found.size()); ++i) {
    LibraryInfo& f = s.result.found[static_cast<std::size_t>(i)];
    if (f.error.empty() && in.driver_version > 0 && f.version_number / 1000 > in.driver_version / 1000)
      f.error = "cuBLAS " + f.version + " needs a CUDA " + std::to_string(f.version_number / 1000) +
                " driver; the driver is CUDA " + version_text(in.driver_version);
    if (!f.error.empty()) {
      rejected.push_back(f.path + ": " + f.error);
      continue;
    }
    if (s.result.chosen < 0 ||
        f.version_number > s.result.found[static_cast<std::size_t>(s.result.chosen)].version_number)
      s.result.chosen = i;
  }
  if (s.result.chosen >= 0) {
    s.result.found[static_cast<std::size_t>(s.result.chosen)].chosen = true;
  } else if (s.explicit_path && !s.explicit_error.empty()) {
    s.result.reason = s.explicit_error;
  } else if (!rejected.empty()) {
    s.result.reason = "no usable cuBLAS: ";
    for (std::size_t i = 0; i < rejected.size(); ++i) s.result.reason += (i ? "; " : "") + rejected[i];
  } else {
    s.result.reason = "cuBLAS (libcublas.so.13 or .12) was not found; looked at " +
                      std::to_string(s.result.tried.size()) +
                      " places (set XP_CUBLAS to its path, or install the CUDA toolkit or the nvidia-cublas wheel)";
  }
  return s;
}

const char* const kStatusNames[] = {"CUBLAS_STATUS_SUCCESS",
                                    "CUBLAS_STATUS_NOT_INITIALIZED",
                                    nullptr,
                                    "CUBLAS_STATUS_ALLOC_FAILED",
                                    nullptr,
                                    nullptr,
                                    nullptr,
                                    "CUBLAS_STATUS_INVALID_VALUE",
                                    "CUBLAS_STATUS_ARCH_MISMATCH",
                                    nullptr,
                                    nullptr,
                                    "CUBLAS_STATUS_MAPPING_ERROR",
                                    nullptr,
                                    "CUBLAS_STATUS_EXECUTION_FAILED",
                                    "CUBLAS_STATUS_INTERNAL_ERROR",
                                    "CUBLAS_STATUS_NOT_SUPPORTED",
                                    "CUBLAS_STATUS_LICENSE_ERROR"};

}  // namespace

SearchResult search(const SearchInputs& inputs) {
  try {
    return run_search(inputs).result;
  } catch (const std::exception& e) {
    SearchResult r;
    r.reason = std::string("cuBLAS search failed: ") + e.what();
    return r;
  }
}

SearchInputs process_inputs() {
  SearchInputs in;
  for (const auto& row : config_variables())
    if (row.name == "XP_CUBLAS" && row.set) in.explicit_path = row.value;
  const ForeignEnvironment env = foreign_environment();
  in.cuda_path = env.cuda_path.value_or("");
  in.cuda_home = env.cuda_home.value_or("");
  in.virtual_env = env.virtual_env.value_or("");
  in.conda_prefix = env.conda_prefix.value_or("");
  in.site_packages = other_site_packages(env);
  in.driver_version = driver_probe().driver_version;
  return in;
}

const Library& library() noexcept {
  static const Library lib = []() noexcept {
    Library l;
    try {
      Searcher s = run_search(process_inputs());
      l.search = std::move(s.result);
      if (l.search.chosen >= 0) {
        static Api api;
        api = s.apis[static_cast<std::size_t>(l.search.chosen)];
        l.api = &api;
      }
    } catch (const std::exception& e) {
      l.search.reason = std::string("cuBLAS search failed: ") + e.what();
    }
    return l;
  }();
  return lib;
}

std::string unavailable_reason() noexcept {
  return library().search.reason;
}

std::string status_name(cublasStatus_t status) {
  if (const Library& l = library(); l.api != nullptr && l.api->cublasGetStatusName != nullptr) {
    if (const char* s = l.api->cublasGetStatusName(status); s != nullptr) return s;
  }
  if (status >= 0 && status < static_cast<int>(std::size(kStatusNames)) && kStatusNames[status] != nullptr)
    return kStatusNames[status];
  return "CUBLAS_STATUS_UNKNOWN";
}

void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(std::string(call) + " failed: " + status_name(status) + " (" + std::to_string(status) + ")");
}

std::size_t workspace_bytes(int cc_major) noexcept {
  return cc_major >= 9 ? std::size_t{32} << 20 : std::size_t{4} << 20;
}

Handle& handle_for(const Device& device, const std::function<std::shared_ptr<void>(std::size_t)>& allocate) {
  static std::mutex m;
  static auto* handles = new std::map<int, Handle*>();  // never destroyed (see the header)
  std::lock_guard<std::mutex> lock(m);
  auto it = handles->find(device.index());
  if (it != handles->end()) return *it->second;
  const Library& lib = library();
  if (lib.api == nullptr) throw DeviceUnavailable("cuBLAS is not available: " + lib.search.reason);
  const Api& api = *lib.api;
  detail::activate_context(device);
  const Stream stream = default_stream(device);
  cublasHandle_t h = nullptr;
  check(api.cublasCreate_v2(&h), "cublasCreate");
  std::shared_ptr<void> workspace;  // null: no room (a tight memory limit); cuBLAS then does without
  try {
    // The stream first: setting a stream resets the workspace to cuBLAS's own pool.
    check(api.cublasSetStream_v2(h, static_cast<cudaStream_t>(stream.handle())), "cublasSetStream");
    const std::size_t bytes = workspace_bytes(gpu_info(device).cc_major);
    workspace = allocate(bytes);
    check(api.cublasSetWorkspace_v2(h, workspace.get(), workspace != nullptr ? bytes : 0), "cublasSetWorkspace");
    check(api.cublasSetMathMode(h, CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION),
          "cublasSetMathMode");
  } catch (...) {
    // Nothing ran with this handle: it goes (when the library can destroy one), then its workspace.
    if (api.cublasDestroy_v2 != nullptr) api.cublasDestroy_v2(h);
    throw;
  }
  auto* handle = new Handle;
  handle->handle = h;
  handle->workspace_bytes = workspace != nullptr ? workspace_bytes(gpu_info(device).cc_major) : 0;
  handle->workspace = std::move(workspace);
  handle->stream = stream.handle();
  handles->emplace(device.index(), handle);
  return *handle;
}

void bind_stream(Handle& h, const Stream& stream) {
  if (stream.handle() == h.stream) return;
  const Api& api = *library().api;
  stream_wait_stream(reinterpret_cast<std::uintptr_t>(stream.handle()), reinterpret_cast<std::uintptr_t>(h.stream));
  check(api.cublasSetStream_v2(h.handle, static_cast<cudaStream_t>(stream.handle())), "cublasSetStream");
  h.stream = stream.handle();
  check(api.cublasSetWorkspace_v2(h.handle, h.workspace.get(), h.workspace != nullptr ? h.workspace_bytes : 0),
        "cublasSetWorkspace");
}

}  // namespace xp::detail::cublas

namespace xp {

BlasReport blas_report() noexcept {
  BlasReport r;
  try {
    const detail::cublas::SearchResult& s = detail::cublas::library().search;
    r.cublas = s.found;
    r.tried = s.tried;
    r.unavailable = s.reason;
    r.cusolver = detail::cuda::cusolver_report();
    r.cufft = detail::cuda::cufft_report();
    r.cublas_lt.name = "libcublasLt";
    if (s.chosen >= 0 && static_cast<std::size_t>(s.chosen) < s.lt.size()) {
      r.cublas_lt = s.lt[s.chosen];
      r.cublas_lt.chosen = r.cublas_lt.found;  // used with the chosen libcublas
    }
  } catch (const std::exception& e) {
    r.unavailable = std::string("cuBLAS report failed: ") + e.what();
  }
  return r;
}

}  // namespace xp
