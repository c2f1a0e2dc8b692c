// The report behind `xp doctor` and its JSON document (include/xp/doctor.hpp). The CLI and the
// Python package both print it from here, so that the document has one writer.
#include "xp/doctor.hpp"

#include <nlohmann/json.hpp>
#include <string>

#include "xp/cache.hpp"
#include "xp/program.hpp"
#include "xp/runtime.hpp"

namespace xp {

namespace {

using json = nlohmann::ordered_json;

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
  j["exit_code"] = doctor_exit_code(r);
  return j;
}

json kernels_json(const xp::CompilerInfo& c, const xp::HostCompilerInfo& h, const xp::KernelCacheInfo& k) {
  return {{"host_compiler",
           {{"available", h.available},
            {"error", nullable(h.error)},
            {"found_by", nullable(h.found_by)},
            {"path", nullable(h.path)},
            {"version", nullable(h.version)},
            {"flags", h.flags}}},
          {"compiler",
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

// cuSOLVER or cuFFT: every one found (the one used with chosen = true), the places tried, why none.
json cuda_library_json(const xp::CudaLibraryReport& r) {
  json found = json::array();
  for (const auto& l : r.found) {
    json one = library_json(l);
    one["chosen"] = l.chosen;
    found.push_back(one);
  }
  return {{"found", found}, {"tried", r.tried}, {"unavailable", nullable(r.unavailable)}};
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
          {"unavailable", nullable(b.unavailable)},
          {"cusolver", cuda_library_json(b.cusolver)}};
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
            {"error", nullable(c.blas_error)}}},
          {"lapack", {{"loaded", c.lapack_loaded}, {"error", nullable(c.lapack_error)}}}};
}

// XP_CUBLAS, XP_CUSOLVER or XP_CUFFT names a library that cannot be used: the user asked for it
// (exit 1, as for XP_NVRTC).
void add_cublas_problem(xp::SystemReport& r, const xp::BlasReport& b) {
  for (const auto& v : r.config) {
    if (!v.set) continue;
    if (v.name == "XP_CUBLAS" && !b.unavailable.empty()) {
      r.problems.push_back({"cublas_unusable", "error", b.unavailable,
                            "point XP_CUBLAS at a libcublas.so.N whose libcublasLt.so.N the loader finds, or unset "
                            "it to search CUDA_PATH, CUDA_HOME, the nvidia-cublas wheel and the system"});
      r.user_demand_unmet = true;
    } else if (v.name == "XP_CUSOLVER" && !b.cusolver.unavailable.empty()) {
      r.problems.push_back({"cusolver_unusable", "error", b.cusolver.unavailable,
                            "point XP_CUSOLVER at a libcusolver.so.N whose libcublas and libcusparse the loader "
                            "finds, or unset it to search CUDA_PATH, CUDA_HOME, the nvidia-cusolver wheel and the "
                            "system"});
      r.user_demand_unmet = true;
    } else if (v.name == "XP_CUFFT" && !b.cufft.unavailable.empty()) {
      r.problems.push_back({"cufft_unusable", "error", b.cufft.unavailable,
                            "point XP_CUFFT at a libcufft.so.N, or unset it to search CUDA_PATH, CUDA_HOME, the "
                            "nvidia-cufft wheel and the system"});
      r.user_demand_unmet = true;
    }
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

}  // namespace

int doctor_exit_code(const SystemReport& r) noexcept {
  if (r.environment_broken) return 2;
  if (r.user_demand_unmet) return 1;
  return 0;
}

SystemReport doctor_report() noexcept {
  SystemReport r = system_report();
  try {
    add_cublas_problem(r, blas_report());
    add_cache_problem(r, kernel_cache_info());
  } catch (...) {  // kernel_cache_info() throws ConfigError for a malformed variable: reported already
  }
  return r;
}

std::string doctor_json() noexcept {
  try {
    const SystemReport r = doctor_report();
    json j = report_json(r);
    j["kernels"] = kernels_json(compiler_info(), host_compiler_info(), kernel_cache_info());
    const BlasReport b = blas_report();
    j["linear_algebra"] = blas_json(b);
    j["fft"] = {{"cufft", cuda_library_json(b.cufft)}};
    j["cpu"] = cpu_json(cpu_report());
    return j.dump(2);
  } catch (const std::exception& e) {
    return json{{"schema", "xp.doctor/1"}, {"error", e.what()}}.dump(2);
  }
}

}  // namespace xp
