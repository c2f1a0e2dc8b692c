// system_report(): everything detection found, and the problems it knows how to fix.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <string>

#include "runtime/current.hpp"
#include "runtime/detect.hpp"
#include "runtime/driver.hpp"
#include "runtime/environment.hpp"
#include "runtime/nvrtc_search.hpp"
#include "xp/error.hpp"
#include "xp/runtime.hpp"
#include "xp/version.hpp"

namespace xp {

namespace {

constexpr const char* kNvrtcWheelFix =
    "install NVRTC of the driver's CUDA major: `pip install nvidia-cuda-nvrtc` (CUDA 13) or "
    "`pip install nvidia-cuda-nvrtc-cu12` (CUDA 12) into the active virtual environment, or the toolkit's "
    "cuda-nvrtc package; or point XP_NVRTC at libnvrtc.so";

void add(SystemReport& r, std::string id, std::string severity, std::string message, std::string fix) {
  r.problems.push_back(Problem{std::move(id), std::move(severity), std::move(message), std::move(fix)});
}

void driver_problems(SystemReport& r, const detail::DriverProbe& d) {
  const std::string sev = d.explicit_path ? "error" : "warning";
  switch (d.reason) {
    case CudaReason::driver_not_found:
      if (d.explicit_path) r.user_demand_unmet = true;
      add(r, "driver_not_found", sev, d.detail,
          d.explicit_path
              ? "correct XP_CUDA_DRIVER, or unset it to let the OS loader find libcuda.so.1"
              : "install the NVIDIA driver (nvidia-smi should then list the GPU), or point XP_CUDA_DRIVER at "
                "libcuda.so.1; xp runs on the CPU meanwhile");
      break;
    case CudaReason::driver_unusable:
      if (d.explicit_path) r.user_demand_unmet = true;
      if (d.driver_error == 34) {
        add(r, "driver_is_stub", sev, d.detail,
            "the real libcuda.so.1 comes with the NVIDIA driver: remove the toolkit's lib64/stubs folder from "
            "LD_LIBRARY_PATH (or XP_CUDA_DRIVER) and install the driver if nvidia-smi is missing");
        break;
      }
      add(r, "driver_unusable", sev, d.detail,
          "point XP_CUDA_DRIVER at the x86-64 libcuda.so.1 of a CUDA 12.0 or newer driver, or update the driver");
      break;
    case CudaReason::init_failed:
      if (!r.device_nodes_present) {
        add(r, "no_device_node", "warning",
            "the driver library is present but /dev/nvidiactl is not (cuInit: " + d.driver_error_name + ")",
            "load the kernel module (run nvidia-smi, or modprobe nvidia as root); in a container, pass the GPU in "
            "(docker run --gpus all, or the NVIDIA container toolkit)");
      } else if (d.driver_error == 35) {
        add(r, "insufficient_driver", "warning", d.detail,
            "the kernel module is older than libcuda or the driver too old for this library: update the NVIDIA driver "
            "and reboot, or remove a mismatched libcuda from LD_LIBRARY_PATH");
      } else {
        add(r, "init_failed", "warning", d.detail,
            "run nvidia-smi to check the driver; a CUDA_ERROR_SYSTEM_DRIVER_MISMATCH or _COMPAT_ error means the "
            "forward-compatibility package does not fit this GPU");
      }
      break;
    case CudaReason::no_device:
      add(r, "no_device", "warning", d.detail, "check nvidia-smi: the driver sees no GPU");
      break;
    case CudaReason::all_devices_hidden:
      add(r, "all_devices_hidden", "warning", d.detail,
          "unset CUDA_VISIBLE_DEVICES, or set it to the ordinals or UUIDs of the GPUs this process may use");
      break;
    default:
      break;
  }
}

void nvrtc_problems(SystemReport& r, const detail::DriverProbe& d, const detail::NvrtcSearch& n, int chosen) {
  if (n.explicit_path && n.found.empty()) {
    r.user_demand_unmet = true;
    add(r, "nvrtc_explicit_unusable", "error", "XP_NVRTC could not be used: " + n.explicit_error,
        "correct XP_NVRTC or unset it to let xp search");
    return;
  }
  if (n.found.empty()) {
    add(r, "nvrtc_missing", "warning",
        "no NVRTC found: xp cannot compile kernels" +
            std::string(d.reason == CudaReason::available ? ", so the GPU goes unused" : ""),
        kNvrtcWheelFix);
    return;
  }
  if (d.reason != CudaReason::available || chosen >= 0) return;
  const int driver_major = d.driver_version / 1000;
  const bool all_newer = std::all_of(n.found.begin(), n.found.end(),
                                     [&](const LibraryInfo& l) { return l.version_number / 1000 > driver_major; });
  if (all_newer) {
    if (n.explicit_path) r.user_demand_unmet = true;
    add(r, "driver_older_than_nvrtc", n.explicit_path ? "error" : "warning",
        "the driver supports CUDA " + std::to_string(driver_major) + " but every NVRTC found is newer (" +
            n.found.front().version + " at " + n.found.front().path + ")",
        std::string(kNvrtcWheelFix) +
            "; or update the driver. Code from a newer major's NVRTC does not load: cubins are refused and PTX fails "
            "with CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)");
    return;
  }
  for (const GpuInfo& g : d.gpus) {
    const int arch = g.cc_major * 10 + g.cc_minor;
    const bool any = std::any_of(n.found.begin(), n.found.end(), [&](const LibraryInfo& l) {
      return l.version_number / 1000 <= driver_major && detail::nvrtc_supports(l, arch);
    });
    if (!any) {
      if (n.explicit_path) r.user_demand_unmet = true;
      add(r, "gpu_older_than_nvrtc", n.explicit_path ? "error" : "warning",
          "cuda:" + std::to_string(g.index) + " (" + g.name + ", " + g.arch() +
              ") is older than every NVRTC found supports",
          "NVRTC 13 compiles sm_75 and newer only: install NVRTC 12 (`pip install nvidia-cuda-nvrtc-cu12`) with a "
          "driver of CUDA 12 or newer, or point XP_NVRTC at it");
    }
  }
}

// The CUDA major of a library's soname major (LoadedCudaLibrary::major): the same for the runtime,
// cuBLAS, NVRTC and nvJitLink; cuFFT's runs one behind (10: CUDA 11, 11: 12, 12: 13); cuSOLVER 12 is
// CUDA 13's, 11 served CUDA 11 and 12; cuSPARSE 12 serves CUDA 12 and 13, cuRAND 10 every CUDA.
int cuda_major_of(const std::string& family, int soname_major) {
  if (family == "libcufft") return soname_major + 1;
  if (family == "libcusolver") return soname_major >= 12 ? soname_major + 1 : 0;
  if (family == "libcusparse") return soname_major <= 11 ? soname_major : 0;
  if (family == "libcurand") return 0;
  return soname_major;
}

}  // namespace

std::vector<LoadedCudaLibrary> loaded_cuda_libraries() noexcept {
  std::vector<LoadedCudaLibrary> out;
  try {
    static const char* const kFamilies[] = {"libcudart",   "libcublasLt", "libcublas", "libnvrtc",    "libcufft",
                                            "libcusolver", "libcusparse", "libcurand", "libnvJitLink"};
    std::ifstream maps("/proc/self/maps");
    std::string line;
    std::set<std::string> seen;
    while (std::getline(maps, line)) {
      const std::size_t slash = line.find('/');
      if (slash == std::string::npos) continue;
      const std::string path = line.substr(slash);
      if (!seen.insert(path).second) continue;
      const std::string file = path.substr(path.rfind('/') + 1);
      for (const char* family : kFamilies) {
        const std::string stem = std::string(family) + ".so.";
        if (file.rfind(stem, 0) != 0) continue;
        // libcublas.so.12 or libcublas.so.12.4.5.8: the major is the first number after ".so.".
        int major = 0;
        std::size_t i = stem.size();
        while (i < file.size() && std::isdigit(static_cast<unsigned char>(file[i])) != 0 && major < 1000)
          major = major * 10 + (file[i++] - '0');
        if (i == stem.size()) continue;
        out.push_back({family, path, cuda_major_of(family, major)});
        break;
      }
    }
  } catch (...) {
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

SystemReport system_report() noexcept {
  SystemReport r;
  try {
    r.xp_version = std::string(version());
    r.xp_source = std::string(source_hash());
    r.status = cuda_status();
    r.config = config_variables();
    const auto env = detail::foreign_environment();
    r.cuda_visible_devices_set = env.cuda_visible_devices.has_value();
    r.cuda_visible_devices = env.cuda_visible_devices.value_or("");

    const detail::DriverProbe& d = detail::driver_probe();
    r.driver = d.lib;
    r.nvml = d.nvml;
    r.device_nodes_present = d.device_nodes_present;
    const detail::NvrtcSearch& n = detail::nvrtc_search();
    const int chosen = detail::chosen_nvrtc_index();
    r.nvrtc = n.found;
    if (chosen >= 0) r.nvrtc[static_cast<size_t>(chosen)].chosen = true;
    if (n.found.empty()) {
      LibraryInfo missing;
      missing.name = "libnvrtc";
      missing.tried = n.tried;
      missing.error = n.explicit_error;
      r.nvrtc.push_back(std::move(missing));
    }
    for (const GpuInfo& g0 : d.gpus) {
      GpuInfo g = g0;
      if (chosen >= 0)
        g.nvrtc_supports_arch =
            detail::nvrtc_supports(n.found[static_cast<size_t>(chosen)], g.cc_major * 10 + g.cc_minor);
      r.gpus.push_back(std::move(g));
    }

    for (const auto& v : r.config) {
      if (!v.error.empty()) {
        r.environment_broken = true;
        add(r, "invalid_config", "error", v.name + "='" + v.value + "' is not valid",
            "set " + v.name + " to a valid value: " + v.error.substr(v.error.find(':') + 2) + ", or unset it");
      }
    }
    for (const UnknownVariable& u : unknown_config_variables()) {
      add(r, "unknown_variable", "warning", u.name + "='" + u.value + "' is set, but xp reads no such variable",
          u.nearest.empty() ? "unset it; `xp doctor` lists the variables xp reads"
                            : "did you mean " + u.nearest + "? Rename it, or unset it");
    }
    r.loaded_cuda = loaded_cuda_libraries();
    std::set<int> majors;
    for (const LoadedCudaLibrary& l : r.loaded_cuda)
      if (l.major > 0) majors.insert(l.major);
    if (majors.size() > 1) {
      std::string list;
      for (const LoadedCudaLibrary& l : r.loaded_cuda)
        if (l.major > 0) list += (list.empty() ? "" : ", ") + l.name + " (CUDA " + std::to_string(l.major) + ")";
      add(r, "cuda_major_mismatch", "warning", "this process holds CUDA libraries of more than one major: " + list,
          "install every package's CUDA wheels for one CUDA major (for example all -cu12 or all CUDA 13), so "
          "that one runtime, cuBLAS and NVRTC serve the process");
    }
    driver_problems(r, d);
    nvrtc_problems(r, d, n, chosen);

    if (!r.environment_broken) {
      try {
        r.default_device = detail::process_default_device().str();
      } catch (const Error& e) {
        r.default_device_error = e.what();
        r.user_demand_unmet = true;
        add(r, "requested_device_unavailable", "error", e.what(),
            "unset XP_DEVICE to let xp choose, or ask for a device this machine has (see the GPU list)");
      }
    }
  } catch (const std::exception& e) {
    add(r, "internal", "error", std::string("detection failed: ") + e.what(), "report this as a bug in xp");
    r.environment_broken = true;
  }
  return r;
}

}  // namespace xp
