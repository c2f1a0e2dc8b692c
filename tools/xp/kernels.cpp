#include "kernels.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "xp/xp.hpp"

namespace xp_cli {

namespace {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw xp::ValueError(path + " is a folder, not a .cu file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw xp::ValueError("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
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

// "sm_90" or "90"; ValueError otherwise.
xp::Arch parse_arch(const std::string& text) {
  const std::string digits = text.rfind("sm_", 0) == 0 ? text.substr(3) : text;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || errno == ERANGE || n < 10 || n > 999)
    throw xp::ValueError("--arch " + text + ": expected sm_NN, e.g. sm_90");
  return xp::Arch::sm(static_cast<int>(n));
}

int compile(const CompileArgs& a) {
  xp::ProgramOptions opts;
  opts.name = a.file;  // its folder is where the file's quoted includes are found, as NVRTC resolves them
  opts.options = a.options;
  opts.ptx = a.ptx;
  xp::Program prog(read_file(a.file), opts);
  xp::Arch arch;
  if (!a.arch.empty()) {
    arch = parse_arch(a.arch);
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

int cache(const std::string& action, const std::string& arch) {
  if (!arch.empty() && action != "warm")
    throw xp::ValueError("--arch " + arch + " is for `xp cache warm`, not `xp cache " + action + "`");
  if (action == "info") {
    const xp::KernelCacheInfo i = xp::kernel_cache_info();
    std::printf("folder:  %s\n", i.folder.c_str());
    std::printf("status:  %s\n", !i.usable         ? ("disabled: " + i.problem).c_str()
                                 : i.folder_exists ? "in use"
                                                   : "in use (the folder does not exist yet: the first kernel "
                                                     "stored creates it)");
    std::printf("entries: %zu\nsize:    %s of %s\n", i.entries, human(i.bytes).c_str(), human(i.max_bytes).c_str());
    std::printf(
        "recent:  %zu (entries the last processes used, first used first; up to XP_PRELOAD_KERNELS=%zu modules "
        "of them are loaded onto a GPU in the background when a process starts using it)\n",
        i.recent, xp::config().preload_kernels);
    return 0;
  }
  if (action == "list" || action == "clear") {
    const xp::KernelCacheInfo before = xp::kernel_cache_info();
    if (!before.usable) {
      std::fprintf(stderr, "xp cache %s: the kernel disk cache is disabled (%s)\n", action.c_str(),
                   before.problem.c_str());
      return 1;
    }
  }
  if (action == "list") {
    for (const auto& e : xp::kernel_cache_entries())
      std::printf("%-10s %-12s %-12s %-24s %s\n", human(e.bytes).c_str(), e.target.c_str(),
                  e.nvrtc.empty() ? "" : ("nvrtc " + e.nvrtc).c_str(), e.program.c_str(), e.file.c_str());
    return 0;
  }
  if (action == "clear") {
    // Failures are the entries this clear could not remove, not a count taken afterwards: other
    // processes may store entries meanwhile, and those are theirs to keep.
    std::vector<std::string> failed;
    std::printf("removed %zu entries\n", xp::clear_kernel_cache(&failed));
    for (const auto& f : failed) std::fprintf(stderr, "xp cache clear: cannot remove %s\n", f.c_str());
    if (!failed.empty()) {
      std::fprintf(stderr, "xp cache clear: %zu entries could not be removed from %s\n", failed.size(),
                   xp::kernel_cache_info().folder.c_str());
      return 1;
    }
    return 0;
  }
  if (action == "warm") return cache_warm(arch);
  std::fprintf(stderr, "xp cache: unknown action '%s' (info, list, clear, warm)\n", action.c_str());
  return 2;
}

// `xp cache warm [--arch sm_NN]`: xp::warm_kernel_cache on the local GPU, or for an architecture
// without one (a compile-only GPU in this process).
int cache_warm(const std::string& arch_text) {
  xp::KernelCacheWarm w;
  try {
    w = arch_text.empty() ? xp::warm_kernel_cache() : xp::warm_kernel_cache(parse_arch(arch_text));
  } catch (const xp::ValueError&) {
    throw;  // a malformed --arch: a usage error (exit 2)
  } catch (const xp::Error& e) {
    std::fprintf(stderr, "xp cache warm: %s\n", e.what());
    return 1;
  }
  std::printf("xp cache warm: %s (%s, %s%s): %zu operations in %.1f s; cache entries %zu -> %zu (%zu new) in %s\n",
              w.device.c_str(), w.gpu.c_str(), w.arch.c_str(), w.compile_only ? ", compiled only: no GPU used" : "",
              w.operations, w.seconds, w.entries_before, w.entries_after,
              w.entries_after >= w.entries_before ? w.entries_after - w.entries_before : 0, w.folder.c_str());
  for (const auto& f : w.failed) std::fprintf(stderr, "xp cache warm: failed: %s\n", f.c_str());
  return w.failed.empty() ? 0 : 1;
}

}  // namespace xp_cli
