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

int compile(const CompileArgs& a) {
  xp::ProgramOptions opts;
  opts.name = a.file;  // its folder is where the file's quoted includes are found, as NVRTC resolves them
  opts.options = a.options;
  opts.ptx = a.ptx;
  xp::Program prog(read_file(a.file), opts);
  xp::Arch arch;
  if (!a.arch.empty()) {
    const std::string digits = a.arch.rfind("sm_", 0) == 0 ? a.arch.substr(3) : a.arch;
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || errno == ERANGE || n < 10 || n > 9999)
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
      std::printf("%-10s %-12s nvrtc %-6s %-24s %s\n", human(e.bytes).c_str(), e.target.c_str(), e.nvrtc.c_str(),
                  e.program.c_str(), e.file.c_str());
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
  if (action == "warm") return cache_warm();
  std::fprintf(stderr, "xp cache: unknown action '%s' (info, list, clear, warm)\n", action.c_str());
  return 2;
}

// `xp cache warm`: the array kernels most programs meet, compiled for the local GPU into the disk
// cache, by running each operation once on small arrays there (the same path as any program, so the
// entries are the ones it will look up): elementwise arithmetic, comparisons, the common
// transcendental functions, casts, a fused a*b+c, contiguous, offset, strided and broadcast
// layouts, reductions and cumulative_sum, over the float and the common integer dtypes.
int cache_warm() {
  const xp::CudaStatus status = xp::cuda_status();
  if (!status.available) {
    std::fprintf(stderr, "xp cache warm: no GPU to compile for: %s: %s\n",
                 std::string(xp::to_string(status.reason)).c_str(), status.detail.c_str());
    return 1;
  }
  const xp::Device dev = xp::default_device();
  if (!dev.is_cuda()) {
    std::fprintf(stderr, "xp cache warm: xp's default device is %s (XP_DEVICE or FORCE_CPU): no GPU to compile for\n",
                 dev.str().c_str());
    return 1;
  }
  const xp::KernelCacheInfo before = xp::kernel_cache_info();
  if (!before.usable) {
    std::fprintf(stderr, "xp cache warm: the kernel disk cache is disabled (%s): nothing would be kept\n",
                 before.problem.c_str());
    return 1;
  }
  using xp::DType;
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t done = 0;
  std::vector<std::string> failed;
  auto run = [&](const std::string& what, const std::function<xp::Array()>& f) {
    try {
      f().eval();
      ++done;
    } catch (const std::exception& e) {
      failed.push_back(what + ": " + e.what());
    }
  };
  for (const DType t : {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int32, DType::int64}) {
    const std::string tn(xp::name(t));
    const bool fl = t == DType::float32 || t == DType::float64 || t == DType::float16 || t == DType::bfloat16;
    const xp::Array a = xp::ones({1024}, t, dev), b = xp::full({1024}, 2, t, dev), c = xp::ones({1024}, t, dev);
    const xp::Array odd = xp::ones({1023}, t, dev), tail = a.slice({xp::Slice(1, std::nullopt)});
    const xp::Array m = xp::ones({64, 64}, t, dev), row = xp::ones({64}, t, dev);
    const xp::Array o = xp::empty({1024}, t, dev);
    run(tn + " a + b", [&] { return a + b; });
    run(tn + " a - b", [&] { return a - b; });
    run(tn + " a * b", [&] { return a * b; });
    run(tn + " a / b", [&] { return a / b; });
    run(tn + " a * 2", [&] { return a * 2; });
    run(tn + " a + 1", [&] { return a + 1; });
    run(tn + " a*b + c", [&] { return a * b + c; });
    run(tn + " add(out=)", [&] { return xp::add(a, b, o); });
    run(tn + " maximum", [&] { return xp::maximum(a, b); });
    run(tn + " minimum", [&] { return xp::minimum(a, b); });
    run(tn + " a < b", [&] { return a < b; });
    run(tn + " where", [&] { return xp::where(a < b, a, b); });
    run(tn + " negative", [&] { return -a; });
    run(tn + " abs", [&] { return xp::abs(a); });
    run(tn + " a + b, 1023", [&] { return odd + odd; });
    run(tn + " a + b, offset view", [&] { return tail + tail; });
    run(tn + " m.T + m", [&] { return m.T() + m; });
    run(tn + " m + row", [&] { return m + row; });
    run(tn + " astype float32", [&] { return a.astype(DType::float32); });
    run(tn + " astype float64", [&] { return a.astype(DType::float64); });
    if (fl) {
      for (const auto& [fn, f] : std::vector<std::pair<const char*, xp::Array (*)(const xp::Operand&, const xp::Out&)>>{
               {"sqrt", &xp::sqrt},
               {"exp", &xp::exp},
               {"log", &xp::log},
               {"sin", &xp::sin},
               {"cos", &xp::cos},
               {"tanh", &xp::tanh},
               {"square", &xp::square}})
        run(tn + " " + fn, [&, f = f] { return f(a, {}); });
    }
    run(tn + " sum", [&] { return xp::sum(a); });
    run(tn + " sum axis 0", [&] { return xp::sum(m, 0); });
    run(tn + " sum axis 1", [&] { return xp::sum(m, 1); });
    run(tn + " max", [&] { return xp::max(a); });
    run(tn + " min", [&] { return xp::min(a); });
    run(tn + " argmax", [&] { return xp::argmax(a); });
    run(tn + " mean", [&] { return xp::mean(a); });
    run(tn + " cumulative_sum", [&] { return xp::cumulative_sum(a); });
  }
  xp::synchronize(dev);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const xp::KernelCacheInfo after = xp::kernel_cache_info();
  const xp::GpuInfo gpu = xp::gpu_info(dev);
  std::printf("xp cache warm: %s (%s, %s): %zu operations in %.1f s; cache entries %zu -> %zu (%zu new) in %s\n",
              dev.str().c_str(), gpu.name.c_str(), gpu.arch().c_str(), done, s, before.entries, after.entries,
              after.entries >= before.entries ? after.entries - before.entries : 0, after.folder.c_str());
  for (const auto& f : failed) std::fprintf(stderr, "xp cache warm: failed: %s\n", f.c_str());
  return failed.empty() ? 0 : 1;
}

}  // namespace xp_cli
