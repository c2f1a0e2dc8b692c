#pragma once

#include <string>
#include <vector>

#include "xp/runtime.hpp"

namespace xp::detail {

// Every NVRTC found along the search order of docs/design.md ("Finding libraries"), each loaded
// once to read its version and the architectures it compiles for. Built once per process; never
// throws.
struct NvrtcSearch {
  std::vector<LibraryInfo> found;  // in search order, one per distinct file
  std::vector<std::string> tried;  // every place looked at, with its step
  bool explicit_path = false;      // XP_NVRTC was set: only that file is considered
  std::string explicit_error;      // why XP_NVRTC could not be used
};
const NvrtcSearch& nvrtc_search() noexcept;

// Why a candidate is or is not acceptable for a driver and a set of GPU architectures.
// driver_version 0 means no driver (compiling only): every major is acceptable.
std::string nvrtc_rejection(const LibraryInfo& nvrtc, int driver_version, const std::vector<int>& gpu_archs);

// The index in `found` of the newest acceptable NVRTC, or -1.
int choose_nvrtc(const std::vector<LibraryInfo>& found, int driver_version, const std::vector<int>& gpu_archs);

// Whether this NVRTC can compile for sm_<arch>: the arch is in its list, or newer than everything
// in it (then through PTX of its newest arch).
bool nvrtc_supports(const LibraryInfo& nvrtc, int arch);

}  // namespace xp::detail
