#include "kernels.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "xp/xp.hpp"

namespace xp_cli {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw xp::ValueError("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string base_name(const std::string& path) {
  const auto p = path.rfind('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

std::string human(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(1ull << 30));
  else if (bytes >= (1ull << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1ull << 20));
  else if (bytes >= (1ull << 10))
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / double(1ull << 10));
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

}  // namespace

int compile(const CompileArgs& a) {
  xp::ProgramOptions opts;
  opts.name = base_name(a.file);
  opts.options = a.options;
  opts.ptx = a.ptx;
  xp::Program prog(read_file(a.file), opts);
  xp::Arch arch;
  if (!a.arch.empty()) {
    const std::string digits = a.arch.rfind("sm_", 0) == 0 ? a.arch.substr(3) : a.arch;
    char* end = nullptr;
    const long n = std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || n <= 0)
      throw xp::ValueError("--arch " + a.arch + ": expected sm_NN, e.g. sm_90");
    arch = xp::Arch::sm(static_cast<int>(n));
  } else if (const xp::Device d = xp::default_device(); d.is_cuda()) {
    const xp::GpuInfo g = xp::gpu_info(d);
    arch = xp::Arch::sm(g.cc_major * 10 + g.cc_minor);
  } else {
    throw xp::ValueError("no GPU to take the architecture from: give --arch sm_NN");
  }
  const xp::CompileStats s = prog.compile(arch);
  const char* where = s.memory_hit ? "memory cache hit" : s.disk_hit ? "disk cache hit" : "compiled (cache miss)";
  std::printf("%s: %s for %s, %zu bytes, %.3f ms (NVRTC %.3f ms)\n", a.file.c_str(), where, s.target.c_str(),
              s.binary_bytes, s.total_ms, s.compile_ms);
  if (!s.cache_file.empty()) std::printf("cache entry: %s\n", s.cache_file.c_str());
  if (!s.log.empty()) std::printf("NVRTC log:\n%s\n", s.log.c_str());
  const auto names = prog.kernel_names(arch);
  std::printf("kernels:");
  for (const auto& n : names) std::printf(" %s", n.c_str());
  std::printf("\n");
  if (!a.kernel.empty()) {
    bool found = false;
    for (const auto& n : names) found = found || n == a.kernel;
    if (!found) {
      std::fprintf(stderr, "xp: no kernel '%s' in %s\n", a.kernel.c_str(), a.file.c_str());
      return 1;
    }
    if (xp::cuda_status().available) {
      const xp::Kernel k = prog.kernel(a.kernel, xp::default_device());
      std::printf("%s: %d registers, best block size %d\n", a.kernel.c_str(), k.registers(),
                  k.max_potential_block_size());
    }
  }
  return 0;
}

int cache(const std::string& action) {
  if (action == "info") {
    const xp::KernelCacheInfo i = xp::kernel_cache_info();
    std::printf("folder:  %s\n", i.folder.c_str());
    std::printf("status:  %s\n", i.usable ? "in use" : ("disabled: " + i.problem).c_str());
    std::printf("entries: %zu\nsize:    %s of %s\n", i.entries, human(i.bytes).c_str(), human(i.max_bytes).c_str());
    return 0;
  }
  if (action == "list") {
    for (const auto& e : xp::kernel_cache_entries())
      std::printf("%-10s %-12s nvrtc %-6s %-24s %s\n", human(e.bytes).c_str(), e.target.c_str(), e.nvrtc.c_str(),
                  e.program.c_str(), e.file.c_str());
    return 0;
  }
  if (action == "clear") {
    std::printf("removed %zu entries\n", xp::clear_kernel_cache());
    return 0;
  }
  std::fprintf(stderr, "xp cache: unknown action '%s' (info, list, clear)\n", action.c_str());
  return 2;
}

}  // namespace xp_cli
