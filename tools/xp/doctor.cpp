#include "doctor.hpp"

#include <cstdio>
#include <iostream>
#include <string>

#include "xp/xp.hpp"

namespace xp_cli {

namespace {

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string gib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

void print_library(const char* label, const xp::LibraryInfo& l) {
  if (l.found) {
    std::cout << "  " << label << l.path << (l.version.empty() ? "" : "  (version " + l.version + ")") << "  [found by "
              << l.found_by << "]" << (l.chosen ? "  <- used" : "") << "\n";
    if (!l.archs.empty()) {
      std::cout << "      compiles for: sm_" << l.archs.front() << " .. sm_" << l.archs.back() << "\n";
    }
    if (!l.error.empty()) std::cout << "      problem: " << l.error << "\n";
  } else {
    std::cout << "  " << label << "not found" << (l.error.empty() ? "" : " (" + l.error + ")") << "\n";
    for (const auto& t : l.tried) std::cout << "      tried " << t << "\n";
  }
}

void print_cpu(const xp::CpuReport& c) {
  std::cout << "\nCPU\n";
  std::cout << "  " << (c.model.empty() ? "model unknown" : c.model) << ", " << c.logical_cpus
            << " logical CPUs; xp uses " << c.threads << " thread" << (c.threads == 1 ? "" : "s") << "\n";
  std::cout << "  vector level in use: reductions " << c.sum_isa << ", elementwise math " << c.math_isa << "\n";
  if (c.blas_loaded) {
    std::cout << "  BLAS (matmul): " << c.blas_path << "  (" << c.blas_config << "; " << c.blas_threads
              << " threads)\n";
    std::cout << "  BLAS kernels: " << (c.blas_core.empty() ? "unknown" : c.blas_core) << "  (" << c.blas_core_reason
              << ")\n";
  } else
    std::cout << "  BLAS (matmul): none, xp's own loops (" << c.blas_error << ")\n";
  if (c.lapack_loaded)
    std::cout << "  LAPACK (linalg): found in the BLAS library\n";
  else
    std::cout << "  LAPACK (linalg): none, the factorizations raise an error (" << c.lapack_error << ")\n";
}

void print_text(const xp::SystemReport& r) {
  std::cout << "xp " << r.xp_version << " doctor (source " << r.xp_source.substr(0, 16) << ")\n\nLibraries\n";
  print_library("CUDA driver: ", r.driver);
  for (const auto& l : r.nvrtc) print_library("NVRTC:       ", l);
  print_library("NVML:        ", r.nvml);
  std::cout << "\nGPUs\n";
  if (r.gpus.empty()) std::cout << "  none\n";
  for (const auto& g : r.gpus) {
    std::cout << "  cuda:" << g.index << "  " << g.name << "  " << g.arch() << " (compute " << g.cc_major << "."
              << g.cc_minor << "), " << g.sm_count << " SMs\n";
    std::cout << "      memory " << gib(g.memory_total) << " total"
              << (g.memory_free ? ", " + gib(*g.memory_free) + " free (" + g.memory_free_source + ")"
                                : ", free unknown until initialized (no NVML)")
              << "\n";
    if (g.memory_clock_khz > 0) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "      memory clock %d MHz, bus %d bits: %.0f GB/s theoretical\n",
                    g.memory_clock_khz / 1000, g.memory_bus_width_bits, g.bandwidth_bytes_per_s / 1e9);
      std::cout << buf;
    }
    std::cout << "      PCI " << g.pci_bus_id << "  " << g.uuid << "\n";
    std::cout << "      NVRTC can compile for it: " << (g.nvrtc_supports_arch ? "yes" : "no") << "\n";
  }
  if (r.cuda_visible_devices_set) std::cout << "  CUDA_VISIBLE_DEVICES='" << r.cuda_visible_devices << "'\n";

  print_cpu(xp::cpu_report());

  if (!r.loaded_cuda.empty()) {
    std::cout << "\nCUDA libraries in this process\n";
    for (const auto& l : r.loaded_cuda) std::cout << "  " << l.path << "  (CUDA " << l.major << ")\n";
  }

  std::cout << "\nEnvironment\n";
  bool any = false;
  for (const auto& v : r.config) {
    if (!v.set) continue;
    any = true;
    std::cout << "  " << v.name << "=" << v.value << (v.error.empty() ? "" : "  INVALID (" + v.error + ")") << "\n";
  }
  if (!any) std::cout << "  no XP_* variable set\n";

  std::cout << "\nVerdict\n";
  const xp::CudaStatus& s = r.status;
  if (!r.default_device.empty()) {
    if (r.default_device.rfind("cuda", 0) == 0)
      std::cout << "  GPU in use: " << r.default_device << " (driver CUDA " << version_text(s.driver_version)
                << ", NVRTC " << version_text(s.nvrtc_version) << ")\n";
    else
      std::cout << "  CPU" << (s.available ? " (chosen by the user)" : " fallback") << ": CUDA "
                << xp::to_string(s.reason) << (s.detail.empty() ? "" : ": " + s.detail) << "\n";
  } else {
    std::cout << "  error: "
              << (r.default_device_error.empty() ? "the configuration is invalid" : r.default_device_error) << "\n";
  }
  const xp::CompilerInfo c = xp::compiler_info();
  const xp::KernelCacheInfo k = xp::kernel_cache_info();
  std::cout << "\nKernels\n";
  if (c.available) {
    std::cout << "  compiler: NVRTC " << c.nvrtc_version << " (" << c.nvrtc_path << ")\n";
    std::cout << "  toolkit headers: "
              << (c.include_dirs.empty()
                      ? std::string("not found next to NVRTC (#include <cuda_fp16.h> will fail; with "
                                    "pip, add nvidia-cuda-runtime, nvidia-cuda-crt and "
                                    "nvidia-cuda-cccl)")
                      : c.include_dirs.front())
              << "\n  CCCL (CUB, Thrust, libcu++): " << (c.cccl_found ? "found" : "not found") << "\n";
  } else {
    std::cout << "  compiler: none (" << c.error.substr(0, c.error.find('\n')) << ")\n";
  }
  const xp::HostCompilerInfo h = xp::host_compiler_info();
  if (h.available) {
    std::cout << "  CPU kernels: " << h.version << " (" << h.path << ", found by " << h.found_by << ")\n";
  } else {
    std::cout << "  CPU kernels: no compiler (" << h.error << ")\n";
  }
  std::cout << "  cache: " << k.folder << ", "
            << (k.usable ? std::to_string(k.entries) + " entries, " + gib(k.bytes) + " of " + gib(k.max_bytes)
                         : "disabled: " + k.problem)
            << "\n";
  // Matmul and vecdot on a GPU: cuBLAS, found without a GPU.
  const xp::BlasReport b = xp::blas_report();
  std::cout << "\nLinear algebra (GPU matmul, vecdot; factorizations)\n";
  for (const auto& l : b.cublas) print_library("cuBLAS:   ", l);
  if (b.cublas_lt.found) print_library("cuBLASLt: ", b.cublas_lt);
  if (!b.unavailable.empty()) {
    std::cout << "  cuBLAS:   none used (" << b.unavailable << ")\n";
    for (const auto& t : b.tried) std::cout << "      tried " << t << "\n";
  }
  // The factorizations (cuSOLVER) and transforms (cuFFT) on a GPU; without them, on the CPU.
  const auto print_other = [](const char* label, const xp::CudaLibraryReport& r) {
    for (const auto& l : r.found) print_library(label, l);
    if (!r.unavailable.empty()) {
      std::cout << "  " << label << "none used (" << r.unavailable << ")\n";
      for (const auto& t : r.tried) std::cout << "      tried " << t << "\n";
    }
  };
  print_other("cuSOLVER: ", b.cusolver);
  std::cout << "\nFFT (GPU)\n";
  print_other("cuFFT:    ", b.cufft);
  if (!r.problems.empty()) {
    std::cout << "\nProblems\n";
    for (const auto& p : r.problems) {
      std::cout << "  [" << p.severity << "] " << p.message << "\n      fix: " << p.fix << "\n";
    }
  }
}

}  // namespace

int doctor(bool as_json) {
  const xp::SystemReport r = xp::doctor_report();
  if (as_json)
    std::cout << xp::doctor_json() << "\n";
  else
    print_text(r);
  return xp::doctor_exit_code(r);
}

}  // namespace xp_cli
