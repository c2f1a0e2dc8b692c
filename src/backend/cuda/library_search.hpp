#pragma once

// The search of docs/design.md ("Finding libraries") for the CUDA libraries that xp opens on first
// use beside cuBLAS (cuSOLVER, cuFFT): the explicit variable alone when set; else CUDA_PATH and
// CUDA_HOME (lib64, lib, targets/x86_64-linux/lib), NVIDIA's wheels in site-packages, CONDA_PREFIX/lib,
// the OS loader, /usr/local/cuda/lib64. Each candidate is loaded to read its version (no GPU
// needed); among those found, the newest whose CUDA major the driver runs is used and stays loaded.

#include <exception>
#include <string>
#include <vector>

#include "runtime/dynlib.hpp"
#include "xp/runtime.hpp"

namespace xp::detail::cuda {

struct LibrarySpec {
  const char* name;                     // "libcusolver"
  const char* title;                    // "cuSOLVER"
  const char* variable;                 // "XP_CUSOLVER"
  std::vector<std::string> sonames;     // newest first: "libcusolver.so.12", "libcusolver.so.11"
  std::vector<std::string> wheel_dirs;  // under site-packages: "nvidia/cu13/lib", "nvidia/cusolver/lib"
  const char* wheel;                    // the wheel to install, for the reason: "nvidia-cusolver"
  // int fn(int*): 0 on success, the version as major * 1000 + minor * 100 + patch.
  const char* version_symbol;
  // The CUDA major a library of this major ships with (cuSOLVER 12 and cuFFT 12 come with CUDA 13).
  int (*cuda_major)(int library_major);
};

// Where to look: the explicit path and the foreign variables, as read from config().
struct LibrarySearchInputs {
  std::string explicit_path;  // the variable; when set nothing else is considered
  std::string cuda_path, cuda_home, virtual_env, conda_prefix;
  std::vector<std::string> site_packages;  // PYTHONPATH entries, ~/.local, the system's
  bool system_locations = true;            // the OS loader and /usr/local/cuda/lib64
  int driver_version = 0;                  // 0: no driver, every major acceptable
};

struct LibrarySearch {
  std::vector<LibraryInfo> found;  // one per distinct file; the one used has chosen = true
  std::vector<std::string> tried;  // the places that had none
  int chosen = -1;
  std::string reason;  // why none is used; empty when one is
  DynLib lib;          // the chosen library, open (its symbols resolve the entry points; closed with this object)
};

// The inputs of this process: config()'s value of spec.variable and the foreign environment.
LibrarySearchInputs process_library_inputs(const LibrarySpec& spec);

// Never throws (a failure is the reason).
LibrarySearch search_library(const LibrarySpec& spec, const LibrarySearchInputs& inputs);

// A library that search_library chose, with its table of entry points: `api` is null when none is
// usable (search.reason says why).
template <class Api>
struct LoadedLibrary {
  LibrarySearch search;
  const Api* api = nullptr;
};

// Searches for spec's library and reads its entry points into `table` with `table_of(lib, missing)`
// (which appends the names the library lacks to `missing`): a chosen library that lacks any is
// reported so and not used. The library stays loaded for the life of the process: handles and plans
// may be used until exit, and its own allocations must stay reachable. Never throws.
template <class Api, class TableOf>
LoadedLibrary<Api> load_library(const LibrarySpec& spec, Api& table, TableOf table_of) noexcept {
  LoadedLibrary<Api> l;
  try {
    l.search = search_library(spec, process_library_inputs(spec));
    if (l.search.chosen >= 0) {
      std::string missing;
      table = table_of(l.search.lib, missing);
      l.search.lib.release();
      if (missing.empty()) {
        l.api = &table;
      } else {
        LibraryInfo& f = l.search.found[static_cast<std::size_t>(l.search.chosen)];
        f.error = "lacks " + missing;
        f.chosen = false;
        l.search.reason = f.path + " lacks " + missing;
      }
    }
  } catch (const std::exception& e) {
    l.search.reason = std::string(spec.title) + " search failed: " + e.what();
  }
  return l;
}

// The report of a search for xp::blas_report().
CudaLibraryReport library_report(const LibrarySearch& search);

// blas_report()'s cuSOLVER and cuFFT sections (cusolver.cpp, cufft.cpp): each searches on first use.
CudaLibraryReport cusolver_report() noexcept;
CudaLibraryReport cufft_report() noexcept;

}  // namespace xp::detail::cuda
