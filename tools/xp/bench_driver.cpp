// `xp bench launch`'s raw baseline: the driver API and NVRTC, declared in bench_launch_parts.hpp and
// resolved here (cuGetProcAddress_v2 at CUDA 12.0, legacy-stream flavour), so that the raw rows share
// nothing with xp but the kernel text, the buffers' contents and the clock.
#include "bench_launch_parts.hpp"

namespace xp_cli::launch::raw {

void check(const Driver& d, CUresult r, const char* call) {
  if (r == 0) return;
  const char* name = nullptr;
  if (d.cuGetErrorName == nullptr || d.cuGetErrorName(r, &name) != 0 || name == nullptr) name = "unknown CUresult";
  throw std::runtime_error(std::string(call) + " failed: " + name + " (" + std::to_string(r) + ")");
}

void* open_library(const std::string& path) {
  if (path.empty()) throw std::runtime_error("no library path given to the raw baseline");
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: lives as long as the process
  if (lib == nullptr) {
    const char* e = dlerror();
    throw std::runtime_error("dlopen " + path + ": " + (e != nullptr ? e : "failed"));
  }
  return lib;
}

const Driver& driver(const std::string& path) {
  static Driver d;
  static std::string loaded;
  if (!loaded.empty()) {
    if (loaded != path) throw std::runtime_error("raw driver already loaded from " + loaded);
    return d;
  }
  void* lib = open_library(path);
  using GetProc = CUresult (*)(const char*, void**, int, std::uint64_t, int*);
  const auto get = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get == nullptr)
    throw std::runtime_error(path + " has no cuGetProcAddress_v2 (a CUDA 12.0 driver or newer is needed)");
  auto resolve = [&](auto& slot, const char* name) {
    void* fn = nullptr;
    int status = -1;  // CUdriverProcAddressQueryResult: 0 = found
    const CUresult r = get(name, &fn, 12000, 1 /* CU_GET_PROC_ADDRESS_LEGACY_STREAM */, &status);
    if (r != 0 || fn == nullptr || status != 0)
      throw std::runtime_error("cuGetProcAddress_v2(" + std::string(name) + ", 12000) failed: CUresult " +
                               std::to_string(r) + ", status " + std::to_string(status));
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
  };
#define XP_BENCH_RESOLVE(name) resolve(d.name, #name)
  XP_BENCH_RESOLVE(cuGetErrorName);
  XP_BENCH_RESOLVE(cuInit);
  XP_BENCH_RESOLVE(cuDeviceGet);
  XP_BENCH_RESOLVE(cuDevicePrimaryCtxRetain);
  XP_BENCH_RESOLVE(cuDevicePrimaryCtxRelease);
  XP_BENCH_RESOLVE(cuCtxSetCurrent);
  XP_BENCH_RESOLVE(cuCtxSynchronize);
  XP_BENCH_RESOLVE(cuMemAlloc);
  XP_BENCH_RESOLVE(cuMemFree);
  XP_BENCH_RESOLVE(cuMemcpyHtoD);
  XP_BENCH_RESOLVE(cuMemcpyDtoH);
  XP_BENCH_RESOLVE(cuMemsetD8);
  XP_BENCH_RESOLVE(cuStreamCreate);
  XP_BENCH_RESOLVE(cuStreamDestroy);
  XP_BENCH_RESOLVE(cuStreamSynchronize);
  XP_BENCH_RESOLVE(cuEventCreate);
  XP_BENCH_RESOLVE(cuEventDestroy);
  XP_BENCH_RESOLVE(cuEventRecord);
  XP_BENCH_RESOLVE(cuEventSynchronize);
  XP_BENCH_RESOLVE(cuEventElapsedTime);
  XP_BENCH_RESOLVE(cuModuleLoadData);
  XP_BENCH_RESOLVE(cuModuleUnload);
  XP_BENCH_RESOLVE(cuModuleGetFunction);
  XP_BENCH_RESOLVE(cuLaunchKernel);
#undef XP_BENCH_RESOLVE
  check(d, d.cuInit(0), "cuInit");
  loaded = path;
  return d;
}

const Nvrtc& nvrtc(const std::string& path) {
  static Nvrtc n;
  static std::string loaded;
  if (!loaded.empty()) {
    if (loaded != path) throw std::runtime_error("raw NVRTC already loaded from " + loaded);
    return n;
  }
  void* lib = open_library(path);
  auto resolve = [&](auto& slot, const char* name) {
    void* fn = dlsym(lib, name);
    if (fn == nullptr) throw std::runtime_error(path + " lacks " + name);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
  };
#define XP_BENCH_RESOLVE(name) resolve(n.name, #name)
  XP_BENCH_RESOLVE(nvrtcVersion);
  XP_BENCH_RESOLVE(nvrtcGetErrorString);
  XP_BENCH_RESOLVE(nvrtcCreateProgram);
  XP_BENCH_RESOLVE(nvrtcCompileProgram);
  XP_BENCH_RESOLVE(nvrtcGetCUBINSize);
  XP_BENCH_RESOLVE(nvrtcGetCUBIN);
  XP_BENCH_RESOLVE(nvrtcGetProgramLogSize);
  XP_BENCH_RESOLVE(nvrtcGetProgramLog);
  XP_BENCH_RESOLVE(nvrtcDestroyProgram);
#undef XP_BENCH_RESOLVE
  loaded = path;
  return n;
}

std::vector<std::string> options(int arch, const std::vector<std::string>& includes) {
  std::vector<std::string> opts{"--gpu-architecture=sm_" + std::to_string(arch)};
  for (const auto& dir : includes) opts.push_back("-I" + dir);
  return opts;
}

std::vector<char> compile(const Nvrtc& nv, const std::string& source, const std::vector<std::string>& opts) {
  auto check_nvrtc = [&](int r, const char* call) {
    if (r != 0) throw std::runtime_error(std::string(call) + " failed: " + nv.nvrtcGetErrorString(r));
  };
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  Nvrtc::Program prog = nullptr;
  check_nvrtc(nv.nvrtcCreateProgram(&prog, source.c_str(), kProgramName, 0, nullptr, nullptr), "nvrtcCreateProgram");
  struct Guard {
    const Nvrtc& nv;
    Nvrtc::Program* p;
    ~Guard() { nv.nvrtcDestroyProgram(p); }
  } guard{nv, &prog};
  const int r = nv.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  if (r != 0) {
    std::size_t size = 0;
    std::string log;
    if (nv.nvrtcGetProgramLogSize(prog, &size) == 0 && size > 1) {
      log.resize(size);
      nv.nvrtcGetProgramLog(prog, log.data());
      log.resize(size - 1);
    }
    throw std::runtime_error(std::string("nvrtcCompileProgram failed: ") + nv.nvrtcGetErrorString(r) + "\n" + log);
  }
  std::size_t size = 0;
  check_nvrtc(nv.nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check_nvrtc(nv.nvrtcGetCUBIN(prog, cubin.data()), "nvrtcGetCUBIN");
  return cubin;
}

}  // namespace xp_cli::launch::raw
