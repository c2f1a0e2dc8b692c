// Where the time of a warm-cache first launch goes, step by step, in a fresh process (run it
// several times): the disk-cache steps xp adds, and each driver call of loading a module and
// looking up a kernel. White-box: links xp's objects. Prints one line per step, in microseconds.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "jit/cubin.hpp"
#include "jit/disk_cache.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "runtime/driver.hpp"
#include "xp/xp.hpp"

namespace {
using Clock = std::chrono::steady_clock;
double us(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}
const char* kSource = R"(extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; })";
}  // namespace

int main(int argc, char** argv) {
  namespace cu = xp::detail::cu;
  const std::string folder = argc > 1 ? argv[1] : "/tmp/xp-warm-path";
  if (!xp::cuda_status().available) {
    std::printf("skipped: no GPU (%s)\n", std::string(xp::to_string(xp::cuda_status().reason)).c_str());
    return 0;
  }
  std::printf("xp %s, source %s\n", std::string(xp::version()).c_str(), std::string(xp::source_hash()).c_str());
  const xp::Device dev = xp::Device::cuda(0);
  dev.activate();
  const auto& nvrtc = xp::detail::NvrtcCompiler::instance();
  const auto& api = *xp::detail::driver_api();
  const xp::GpuInfo g = xp::gpu_info(dev);
  const std::string key = std::string("warm-path-probe\n") + kSource;

  auto t = Clock::now();
  xp::detail::DiskCache cache(folder, 1ull << 30);
  const double t_cache = us(t);
  std::vector<char> payload;
  t = Clock::now();
  const auto found = cache.load(key, payload);
  const double t_load = us(t);
  if (found != xp::detail::DiskCache::Lookup::hit) {  // first run: compile and store, time nothing
    xp::detail::CompileRequest req;
    req.source = kSource;
    req.name = "warm_path.cu";
    req.arch = g.cc_major * 10 + g.cc_minor;
    auto out = nvrtc.compile(req);
    cache.store(key, out.binary);
    std::printf("stored; run again\n");
    return 0;
  }
  t = Clock::now();
  const auto info = xp::detail::inspect_module(payload.data(), payload.size());
  const double t_inspect = us(t);
  cu::CUmodule mod = nullptr;
  t = Clock::now();
  xp::detail::check(api.cuModuleLoadData(&mod, payload.data()), "cuModuleLoadData");
  const double t_modload = us(t);
  cu::CUfunction fn = nullptr;
  t = Clock::now();
  xp::detail::check(api.cuModuleGetFunction(&fn, mod, "vector_add"), "cuModuleGetFunction");
  const double t_getfn = us(t);
  int v = 0;
  t = Clock::now();
  api.cuFuncGetAttribute(&v, cu::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn);
  const double t_fattr1 = us(t);
  t = Clock::now();
  for (int a : {cu::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                cu::CU_FUNC_ATTRIBUTE_NUM_REGS})
    api.cuFuncGetAttribute(&v, a, fn);
  const double t_fattr3 = us(t);
  t = Clock::now();
  std::size_t off = 0, size = 0, n = 0;
  if (api.cuFuncGetParamInfo != nullptr)
    while (api.cuFuncGetParamInfo(fn, n, &off, &size) == 0) ++n;
  const double t_params = us(t);
  cu::CUdevice d = 0;
  api.cuDeviceGet(&d, 0);
  t = Clock::now();
  for (int a = 2; a <= 8; ++a) api.cuDeviceGetAttribute(&v, a, d);
  const double t_dattr = us(t);
  t = Clock::now();
  const xp::Stream s = xp::Stream::default_for(dev);
  const double t_stream = us(t);
  std::printf(
      "disk cache open %.1f | load %.1f | inspect %.1f | cuModuleLoadData %.1f | cuModuleGetFunction %.1f | "
      "first cuFuncGetAttribute %.1f | 3 more %.1f | cuFuncGetParamInfo x%zu %.1f | 7 cuDeviceGetAttribute %.1f | "
      "default stream %.1f | kernels %zu\n",
      t_cache, t_load, t_inspect, t_modload, t_getfn, t_fattr1, t_fattr3, n + 1, t_params, t_dattr, t_stream,
      info.kernels.size());
  return 0;
}
