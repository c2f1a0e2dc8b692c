#pragma once

// The report `xp doctor` prints, for programs and bindings that want it without the CLI: the
// system report with the problems only the kernel cache and cuBLAS searches find, its exit code,
// and the stable JSON document of `xp doctor --json` (schema xp.doctor/1, docs/doctor-json.md).

#include <string>

#include "xp/export.hpp"
#include "xp/runtime.hpp"

namespace xp {

// system_report() plus the problems of blas_report() (an unusable XP_CUBLAS: an error) and of
// kernel_cache_info() (a disabled disk cache: a warning). Never throws.
XP_API SystemReport doctor_report() noexcept;

// 0 when xp can run on some device, 1 when the user asked for something that is not there
// (XP_DEVICE, XP_CUDA_DRIVER, XP_NVRTC, XP_CUBLAS, XP_CUSOLVER, XP_CUFFT), 2 when a variable is malformed.
XP_API int doctor_exit_code(const SystemReport& report) noexcept;

// The document `xp doctor --json` prints, indented by two spaces, without a final newline:
// doctor_report() with the kernels (compiler_info, kernel_cache_info), linear algebra
// (blas_report) and CPU (cpu_report) sections. Never throws.
XP_API std::string doctor_json() noexcept;

}  // namespace xp
