#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "xp/config.hpp"
#include "xp/device.hpp"
#include "xp/export.hpp"

namespace xp {

// Why CUDA is or is not usable. A closed set: each value is documented in the README.
enum class CudaReason {
  available,           // CUDA is usable
  disabled_by_user,    // XP_DEVICE=cpu or FORCE_CPU=1
  invalid_config,      // an XP_* variable is malformed (the detail names it)
  driver_not_found,    // no libcuda.so.1 (or no file at XP_CUDA_DRIVER)
  driver_unusable,     // not a library, wrong architecture, or a required entry point missing
  init_failed,         // cuInit failed; its code and name are kept
  no_device,           // the driver initialized but reports no device
  all_devices_hidden,  // CUDA_VISIBLE_DEVICES hides every device
  no_usable_nvrtc,     // no NVRTC of a CUDA major the driver accepts that supports the GPU
  forked_after_init,   // this is a child of fork() from a process that had initialized CUDA
};

// "available", "disabled_by_user", ... (the names used in `xp doctor --json`).
XP_API std::string_view to_string(CudaReason reason) noexcept;

struct CudaStatus {
  bool available = false;
  CudaReason reason = CudaReason::driver_not_found;
  std::string detail;             // one sentence with the evidence
  int driver_error = 0;           // the CUresult when reason is init_failed (or hidden/no device)
  std::string driver_error_name;  // "CUDA_ERROR_NO_DEVICE"
  int driver_version = 0;         // cuDriverGetVersion: 13000 for CUDA 13.0; 0 when unknown
  int nvrtc_version = 0;          // 13000 for NVRTC 13.0; 0 when none was chosen
  int device_count = 0;
};

// Is CUDA usable in this process? Cached after the first call; never throws, never creates a
// CUDA context.
XP_API CudaStatus cuda_status() noexcept;

// Makes this process behave, from the next call on, as on a machine without a usable GPU (true),
// or as detected again (false): for tests of code that must also run without one (the Python
// package's xp.testing uses it). While hidden, cuda_status() reports no_device (its detail names
// this function), devices() lists the CPU alone, default_device() is the CPU (DeviceUnavailable
// when XP_DEVICE asks for CUDA), and activating a CUDA device, as every new use of one does,
// throws DeviceUnavailable (arrays already on a GPU are not moved: using them throws too).
// Detection's cached answer is kept: showing the GPU again costs nothing. Thread-safe; never throws.
XP_API void set_cuda_hidden(bool hidden) noexcept;
XP_API bool cuda_hidden() noexcept;

// One library xp looked for.
struct LibraryInfo {
  std::string name;  // "libcuda", "libnvrtc", "libnvidia-ml"
  bool found = false;
  bool chosen = false;             // for NVRTC: the one xp uses
  std::string path;                // absolute
  std::string version;             // "13.0"
  int version_number = 0;          // 13000
  std::string found_by;            // the search step: "XP_NVRTC", "CUDA_PATH", "wheel", ...
  std::vector<std::string> tried;  // every place looked at, when not found
  std::string error;               // why a found file could not be used
  std::vector<int> archs;          // NVRTC: supported SM numbers (75, 80, ..., 120)
};

// A problem `xp doctor` knows how to fix.
struct Problem {
  std::string id;        // stable: "nvrtc_missing", "driver_older_than_nvrtc", ...
  std::string severity;  // "error" (the user asked for it and cannot have it) or "warning"
  std::string message;
  std::string fix;
};

// A CUDA library already loaded into this process, by xp or by another package (CuPy, PyTorch,
// JAX bring their own runtime, cuBLAS, NVRTC...): its file and the CUDA major its soname carries.
struct LoadedCudaLibrary {
  std::string name;  // "libcudart", "libcublas", "libnvrtc", ...
  std::string path;  // as mapped (/proc/self/maps)
  // The CUDA major the soname tells: libcudart.so.12 -> 12, libcufft.so.12 -> 13 (cuFFT's majors run
  // one behind CUDA's), libcusolver.so.12 -> 13; 0 where the soname does not tell (libcusolver.so.11
  // came with CUDA 11 and 12, libcusparse.so.12 with CUDA 12 and 13, libcurand.so.10 with all).
  int major = 0;
};

// Every CUDA library of the toolkit's families (cudart, cublas, cublasLt, nvrtc, cufft, cusolver,
// cusparse, curand, nvJitLink) mapped into this process now, sorted by path. Never throws.
XP_API std::vector<LoadedCudaLibrary> loaded_cuda_libraries() noexcept;

// Everything detection found: the data behind `xp doctor`. Unlike cuda_status() it looks at the
// driver even when the user disabled CUDA. Never throws.
struct SystemReport {
  std::string xp_version;
  std::string xp_source;  // xp::source_hash(): the source tree of the loaded library
  CudaStatus status;
  LibraryInfo driver;
  std::vector<LibraryInfo> nvrtc;  // every NVRTC found or looked for; the one used has chosen=true
  LibraryInfo nvml;
  std::vector<GpuInfo> gpus;
  bool cuda_visible_devices_set = false;
  std::string cuda_visible_devices;
  bool device_nodes_present = false;  // /dev/nvidiactl
  std::vector<ConfigVariable> config;
  // CUDA libraries already in this process (loaded_cuda_libraries()); more than one CUDA major among
  // them is a problem ("cuda_major_mismatch"): the first cause of "no kernel image" and of wrong results
  // when packages bring different toolkits.
  std::vector<LoadedCudaLibrary> loaded_cuda;
  std::string default_device;  // "cuda:0" or "cpu"; empty when it is an error
  std::string default_device_error;
  std::vector<Problem> problems;
  bool user_demand_unmet = false;   // XP_DEVICE / XP_CUDA_DRIVER / XP_NVRTC asked for what is not there
  bool environment_broken = false;  // a malformed variable
};

XP_API SystemReport system_report() noexcept;

// The CPU side of `xp doctor`: the processor, the threads xp's CPU backend uses, the vector levels
// its reductions and elementwise math chose at run time, and the BLAS it opened for matmul
// (opening it if no matmul has yet). Never throws.
struct CpuReport {
  std::string model;     // /proc/cpuinfo's "model name"; empty when unknown
  int logical_cpus = 0;  // online logical CPUs
  int threads = 0;       // threads of xp's CPU backend (XP_NUM_THREADS, set_num_threads)
  std::string sum_isa;   // the vector level of reductions in use: "sse2", "avx2" or "avx512"
  std::string math_isa;  // the vector level of elementwise math in use
  bool blas_loaded = false;
  std::string blas_path;    // the BLAS library opened (OpenBLAS)
  std::string blas_config;  // openblas_get_config(): version, build options and the kernel it chose
  int blas_threads = 0;
  std::string blas_core;         // the kernel set OpenBLAS uses ("SkylakeX", "Haswell", "Prescott")
  std::string blas_core_reason;  // who chose it: OpenBLAS, OPENBLAS_CORETYPE, or xp from the CPU
  std::string blas_error;        // why no BLAS is used, when none is
  // LAPACK, which xp::linalg's factorizations use on the CPU: the routines xp calls, found in the
  // BLAS library above (OpenBLAS carries LAPACK).
  bool lapack_loaded = false;
  std::string lapack_error;  // why the factorizations cannot run on the CPU, when they cannot
};
XP_API CpuReport cpu_report() noexcept;

// cuBLAS, which matmul and vecdot use on a GPU, found as NVRTC is (XP_CUBLAS first; the order of
// docs/design.md, "Finding libraries") and opened at run time; it needs no GPU to be found.
// Searched once per process, on first use. Never throws.
// One more CUDA library of the same search (cuSOLVER, cuFFT).
struct CudaLibraryReport {
  std::vector<LibraryInfo> found;  // every one found; the one used has chosen = true
  std::vector<std::string> tried;  // the places looked at that had none
  std::string unavailable;         // why it cannot be used; empty when it can
};
// cuSOLVER (linalg's factorizations on a GPU: XP_CUSOLVER first) and cuFFT (xp::fft on a GPU:
// XP_CUFFT first) are searched the same way; without them those functions compute on the CPU.
struct BlasReport {
  std::vector<LibraryInfo> cublas;  // every libcublas found; the one used has chosen = true
  LibraryInfo cublas_lt;            // the libcublasLt the used libcublas loaded (found = false: none used)
  std::vector<std::string> tried;   // the places looked at that had none
  std::string unavailable;          // why GPU matmul cannot use cuBLAS; empty when it can
  CudaLibraryReport cusolver;
  CudaLibraryReport cufft;
};
XP_API BlasReport blas_report() noexcept;

}  // namespace xp
