// xp::cpu_report(): what the CPU backend found and uses, for `xp doctor` (include/xp/runtime.hpp).
#include <unistd.h>

#include <fstream>
#include <string>

#include "backend/cpu/lapack.hpp"
#include "backend/cpu/linalg.hpp"
#include "backend/cpu/reduce.hpp"
#include "backend/cpu/tile_ops.hpp"
#include "runtime/parallel.hpp"
#include "xp/runtime.hpp"

namespace xp {

namespace {
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const std::size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}
}  // namespace

CpuReport cpu_report() noexcept {
  CpuReport r;
  try {
    r.model = cpu_model();
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    r.logical_cpus = n > 0 ? static_cast<int>(n) : 0;
    r.threads = detail::num_threads();
    r.sum_isa = detail::cpu::sum_isa_name(detail::cpu::sum_isa_in_use());
    r.math_isa = detail::cpu::math_isa();
    const detail::cpu::BlasInfo b = detail::cpu::blas_info();
    r.blas_loaded = b.loaded;
    r.blas_path = b.path;
    r.blas_config = b.config;
    r.blas_threads = b.threads;
    r.blas_core = b.core;
    r.blas_core_reason = b.core_reason;
    r.blas_error = b.error;
    const detail::cpu::LapackInfo l = detail::cpu::lapack_info();
    r.lapack_loaded = l.loaded;
    r.lapack_error = l.error;
  } catch (const std::exception& e) {
    r.blas_error = std::string("the CPU report failed: ") + e.what();
  }
  return r;
}

}  // namespace xp
