// xp::warm_kernel_cache (xp/cache.hpp): the array kernels most programs meet, compiled into the disk
// cache by running each operation once on small arrays of a GPU, real or compile-only
// (runtime/compile_only.hpp).
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/compile_only.hpp"
#include "runtime/detect.hpp"
#include "xp/xp.hpp"

namespace xp {

namespace {

// The disk cache as it is before a warm; Error when it is disabled (nothing would be kept).
KernelCacheInfo usable_cache() {
  KernelCacheInfo info = kernel_cache_info();
  if (!info.usable) throw Error("the kernel disk cache is disabled (" + info.problem + "): nothing would be kept");
  return info;
}

KernelCacheWarm warm_on(const Device& dev, bool compile_only) {
  const KernelCacheInfo before = usable_cache();
  KernelCacheWarm w;
  w.device = dev.str();
  w.compile_only = compile_only;
  w.entries_before = before.entries;
  const auto t0 = std::chrono::steady_clock::now();
  auto run = [&](const std::string& what, const std::function<Array()>& f) {
    try {
      f().eval();
      ++w.operations;
    } catch (const std::exception& e) {
      w.failed.push_back(what + ": " + e.what());
    }
  };
  for (const DType t : {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int32, DType::int64}) {
    const std::string tn(name(t));
    const bool fl = t == DType::float32 || t == DType::float64 || t == DType::float16 || t == DType::bfloat16;
    const Array a = ones({1024}, t, dev), b = full({1024}, 2, t, dev), c = ones({1024}, t, dev);
    const Array odd = ones({1023}, t, dev), tail = a.slice({Slice(1, std::nullopt)});
    const Array m = ones({64, 64}, t, dev), row = ones({64}, t, dev);
    const Array o = empty({1024}, t, dev);
    run(tn + " a + b", [&] { return a + b; });
    run(tn + " a - b", [&] { return a - b; });
    run(tn + " a * b", [&] { return a * b; });
    run(tn + " a / b", [&] { return a / b; });
    run(tn + " a * 2", [&] { return a * 2; });
    run(tn + " a + 1", [&] { return a + 1; });
    run(tn + " a*b + c", [&] { return a * b + c; });
    run(tn + " add(out=)", [&] { return add(a, b, o); });
    run(tn + " maximum", [&] { return maximum(a, b); });
    run(tn + " minimum", [&] { return minimum(a, b); });
    run(tn + " a < b", [&] { return a < b; });
    run(tn + " where", [&] { return where(a < b, a, b); });
    run(tn + " negative", [&] { return -a; });
    run(tn + " abs", [&] { return abs(a); });
    run(tn + " a + b, 1023", [&] { return odd + odd; });
    run(tn + " a + b, offset view", [&] { return tail + tail; });
    run(tn + " m.T + m", [&] { return m.T() + m; });
    run(tn + " m + row", [&] { return m + row; });
    run(tn + " astype float32", [&] { return a.astype(DType::float32); });
    run(tn + " astype float64", [&] { return a.astype(DType::float64); });
    if (fl) {
      for (const auto& [fn, f] :
           std::vector<std::pair<const char*, Array (*)(const Operand&, const Out&)>>{{"sqrt", &xp::sqrt},
                                                                                      {"exp", &xp::exp},
                                                                                      {"log", &xp::log},
                                                                                      {"sin", &xp::sin},
                                                                                      {"cos", &xp::cos},
                                                                                      {"tanh", &xp::tanh},
                                                                                      {"square", &xp::square}})
        run(tn + " " + fn, [&, f = f] { return f(a, {}); });
    }
    run(tn + " sum", [&] { return sum(a); });
    run(tn + " sum axis 0", [&] { return sum(m, 0); });
    run(tn + " sum axis 1", [&] { return sum(m, 1); });
    run(tn + " max", [&] { return max(a); });
    run(tn + " min", [&] { return min(a); });
    run(tn + " argmax", [&] { return argmax(a); });
    run(tn + " mean", [&] { return mean(a); });
    run(tn + " cumulative_sum", [&] { return cumulative_sum(a); });
  }
  synchronize(dev);
  w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const KernelCacheInfo after = kernel_cache_info();
  w.entries_after = after.entries;
  w.folder = after.folder;
  const GpuInfo gpu = gpu_info(dev);
  w.gpu = gpu.name;
  w.arch = gpu.arch();
  return w;
}

}  // namespace

KernelCacheWarm warm_kernel_cache() {
  const CudaStatus status = cuda_status();
  if (!status.available)
    throw DeviceUnavailable("no GPU to compile for: " + std::string(to_string(status.reason)) + ": " + status.detail +
                            " (without a GPU, give the architecture: xp cache warm --arch sm_90)");
  const Device dev = default_device();
  if (!dev.is_cuda())
    throw DeviceUnavailable("xp's default device is " + dev.str() + " (XP_DEVICE or FORCE_CPU): no GPU to compile for");
  return warm_on(dev, false);
}

KernelCacheWarm warm_kernel_cache(Arch arch) {
  if (arch.number < 10 || arch.number > 999) throw ValueError(arch.str() + " is not an architecture (sm_90, ...)");
  (void)usable_cache();  // before the compile-only choice, which lasts for the process
  if (const std::string why = detail::use_compile_only_gpu(arch.number); !why.empty())
    throw Error("cannot warm the kernel cache for " + arch.str() + " without a GPU: " + why);
  // NVRTC and the architecture, checked once before the operations (one error rather than one per
  // operation): the verdict of the driver, here the compile-only GPU's, and NVRTC, whatever
  // XP_DEVICE or FORCE_CPU say, since the architecture was asked for by name.
  if (const CudaStatus s = detail::hardware_status(); !s.available)
    throw Error("cannot warm the kernel cache for " + arch.str() + ": " + std::string(to_string(s.reason)) + ": " +
                s.detail);
  return warm_on(Device::cuda(0), true);
}

}  // namespace xp
