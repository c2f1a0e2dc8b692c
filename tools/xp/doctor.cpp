#include "doctor.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "xp/xp.hpp"

namespace xp_cli {

namespace {

using json = nlohmann::ordered_json;

int exit_code(const xp::SystemReport& r) {
  if (r.environment_broken) return 2;
  if (r.user_demand_unmet) return 1;
  return 0;
}

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

json nullable(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

json library_json(const xp::LibraryInfo& l) {
  json j = {{"name", l.name},
            {"found", l.found},
            {"path", nullable(l.path)},
            {"version", nullable(l.version)},
            {"found_by", l.found ? nullable(l.found_by) : json(nullptr)},
            {"error", nullable(l.error)},
            {"tried", l.tried}};
  if (l.name == "libnvrtc") {
    j["chosen"] = l.chosen;
    json archs = json::array();
    for (int a : l.archs) archs.push_back("sm_" + std::to_string(a));
    j["archs"] = archs;
  }
  return j;
}

json gpu_json(const xp::GpuInfo& g) {
  return {{"index", g.index},
          {"device", "cuda:" + std::to_string(g.index)},
          {"name", g.name},
          {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
          {"arch", g.arch()},
          {"sm_count", g.sm_count},
          {"memory_total_bytes", g.memory_total},
          {"memory_free_bytes", g.memory_free ? json(*g.memory_free) : json(nullptr)},
          {"memory_free_source", nullable(g.memory_free_source)},
          {"memory_clock_khz", g.memory_clock_khz},
          {"memory_bus_width_bits", g.memory_bus_width_bits},
          {"bandwidth_bytes_per_s", g.bandwidth_bytes_per_s},
          {"l2_cache_bytes", g.l2_cache_bytes},
          {"pci_bus_id", nullable(g.pci_bus_id)},
          {"uuid", nullable(g.uuid)},
          {"nvrtc_supports_arch", g.nvrtc_supports_arch}};
}

json report_json(const xp::SystemReport& r) {
  const xp::CudaStatus& s = r.status;
  json j;
  j["schema"] = "xp.doctor/1";
  j["xp_version"] = r.xp_version;
  j["xp_source"] = r.xp_source;
  j["verdict"] = {{"device", nullable(r.default_device)},
                  {"uses_gpu", r.default_device.rfind("cuda", 0) == 0},
                  {"error", nullable(r.default_device_error)}};
  j["cuda"] = {
      {"available", s.available},
      {"reason", std::string(xp::to_string(s.reason))},
      {"detail", s.detail},
      {"driver_error",
       s.driver_error_name.empty() ? json(nullptr) : json{{"code", s.driver_error}, {"name", s.driver_error_name}}},
      {"driver_version", s.driver_version ? json(version_text(s.driver_version)) : json(nullptr)},
      {"nvrtc_version", s.nvrtc_version ? json(version_text(s.nvrtc_version)) : json(nullptr)},
      {"device_count", s.device_count}};
  json nvrtc = json::array();
  for (const auto& l : r.nvrtc) nvrtc.push_back(library_json(l));
  j["libraries"] = {{"driver", library_json(r.driver)}, {"nvrtc", nvrtc}, {"nvml", library_json(r.nvml)}};
  json gpus = json::array();
  for (const auto& g : r.gpus) gpus.push_back(gpu_json(g));
  j["gpus"] = gpus;
  j["cuda_visible_devices"] = r.cuda_visible_devices_set ? json(r.cuda_visible_devices) : json(nullptr);
  j["device_nodes_present"] = r.device_nodes_present;
  json env = json::array();
  for (const auto& v : r.config)
    env.push_back({{"name", v.name},
                   {"set", v.set},
                   {"value", v.set ? json(v.value) : json(nullptr)},
                   {"meaning", v.meaning},
                   {"error", nullable(v.error)}});
  j["environment"] = env;
  json loaded = json::array();
  for (const auto& l : r.loaded_cuda) loaded.push_back({{"name", l.name}, {"path", l.path}, {"major", l.major}});
  j["loaded_cuda"] = loaded;
  json problems = json::array();
  for (const auto& p : r.problems)
    problems.push_back({{"id", p.id}, {"severity", p.severity}, {"message", p.message}, {"fix", p.fix}});
  j["problems"] = problems;
  j["exit_code"] = exit_code(r);
  return j;
}

json kernels_json(const xp::CompilerInfo& c, const xp::KernelCacheInfo& k) {
  return {{"compiler",
           {{"available", c.available},
            {"error", nullable(c.error)},
            {"nvrtc_path", nullable(c.nvrtc_path)},
            {"nvrtc_version", nullable(c.nvrtc_version)},
            {"include_dirs", c.include_dirs},
            {"cccl_found", c.cccl_found},
            {"toolkit_headers_version", nullable(c.toolkit_headers_version)}}},
          {"cache",
           {{"folder", k.folder},
            {"usable", k.usable},
            {"problem", nullable(k.problem)},
            {"entries", k.entries},
            {"bytes", k.bytes},
            {"max_bytes", k.max_bytes}}}};
}

json blas_json(const xp::BlasReport& b) {
  json found = json::array();
  for (const auto& l : b.cublas) {
    json one = library_json(l);
    one["chosen"] = l.chosen;
    found.push_back(one);
  }
  return {{"cublas", found},
          {"cublaslt", library_json(b.cublas_lt)},
          {"tried", b.tried},
          {"unavailable", nullable(b.unavailable)}};
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

json cpu_json(const xp::CpuReport& c) {
  return {{"model", nullable(c.model)},
          {"logical_cpus", c.logical_cpus},
          {"threads", c.threads},
          {"sum_isa", c.sum_isa},
          {"math_isa", c.math_isa},
          {"blas",
           {{"loaded", c.blas_loaded},
            {"path", nullable(c.blas_path)},
            {"config", nullable(c.blas_config)},
            {"threads", c.blas_threads},
            {"core", nullable(c.blas_core)},
            {"core_reason", nullable(c.blas_core_reason)},
            {"error", nullable(c.blas_error)}}}};
}

void print_cpu(const xp::CpuReport& c) {
  std::cout << "\nCPU\n";
  std::cout << "  " << (c.model.empty() ? "model unknown" : c.model) << ", " << c.logical_cpus
            << " logical CPUs; xp uses " << c.threads << " thread" << (c.threads == 1 ? "" : "s") << "\n";
  std::cout << "  vector level in use: reductions " << c.sum_isa << ", elementwise math " << c.math_isa << "\n";
  if (c.blas_loaded)
  {
    std::cout << "  BLAS (matmul): " << c.blas_path << "  (" << c.blas_config << "; " << c.blas_threads
              << " threads)\n";
    std::cout << "  BLAS kernels: " << (c.blas_core.empty() ? "unknown" : c.blas_core) << "  ("
              << c.blas_core_reason << ")\n";
  } else
    std::cout << "  BLAS (matmul): none, xp's own loops (" << c.blas_error << ")\n";
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
  std::cout << "  cache: " << k.folder << ", "
            << (k.usable ? std::to_string(k.entries) + " entries, " + gib(k.bytes) + " of " + gib(k.max_bytes)
                         : "disabled: " + k.problem)
            << "\n";
  // Matmul and vecdot on a GPU: cuBLAS, found without a GPU.
  const xp::BlasReport b = xp::blas_report();
  std::cout << "\nLinear algebra (GPU matmul, vecdot)\n";
  for (const auto& l : b.cublas) print_library("cuBLAS:   ", l);
  if (b.cublas_lt.found) print_library("cuBLASLt: ", b.cublas_lt);
  if (!b.unavailable.empty()) {
    std::cout << "  cuBLAS:   none used (" << b.unavailable << ")\n";
    for (const auto& t : b.tried) std::cout << "      tried " << t << "\n";
  }
  if (!r.problems.empty()) {
    std::cout << "\nProblems\n";
    for (const auto& p : r.problems) {
      std::cout << "  [" << p.severity << "] " << p.message << "\n      fix: " << p.fix << "\n";
    }
  }
}

}  // namespace

// XP_CUBLAS names a cuBLAS that cannot be used: the user asked for it (exit 1, as for XP_NVRTC).
void add_cublas_problem(xp::SystemReport& r, const xp::BlasReport& b) {
  for (const auto& v : r.config) {
    if (v.name != "XP_CUBLAS" || !v.set || b.unavailable.empty()) continue;
    r.problems.push_back({"cublas_unusable", "error", b.unavailable,
                          "point XP_CUBLAS at a libcublas.so.N whose libcublasLt.so.N the loader finds, or unset it "
                          "to search CUDA_PATH, CUDA_HOME, the nvidia-cublas wheel and the system"});
    r.user_demand_unmet = true;
  }
}

// The kernel disk cache cannot be used: every process compiles its kernels again (a warning; a
// malformed variable is reported as such, and XP_CACHE_MAX_BYTES=0 is the user's choice).
void add_cache_problem(xp::SystemReport& r, const xp::KernelCacheInfo& k) {
  if (k.usable || r.environment_broken || k.max_bytes == 0) return;
  r.problems.push_back({"kernel_cache_disabled", "warning", "the kernel disk cache is disabled: " + k.problem,
                        "make " + k.folder +
                            " a folder of your own with mode 700 (chmod 700), or point XP_CACHE_DIR "
                            "at one; until then each process compiles its kernels again"});
}

int doctor(bool as_json) {
  xp::SystemReport r = xp::system_report();
  add_cublas_problem(r, xp::blas_report());
  add_cache_problem(r, xp::kernel_cache_info());
  if (as_json) {
    json j = report_json(r);
    j["kernels"] = kernels_json(xp::compiler_info(), xp::kernel_cache_info());
    j["linear_algebra"] = blas_json(xp::blas_report());
    j["cpu"] = cpu_json(xp::cpu_report());
    std::cout << j.dump(2) << "\n";
  } else {
    print_text(r);
  }
  return exit_code(r);
}

}  // namespace xp_cli
