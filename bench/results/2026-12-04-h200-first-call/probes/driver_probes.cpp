// Bare driver programs (no xp), for what the driver costs on its own:
//   driver_probes first-kernel module|library|overlap|overlap-pre N CUBIN
//     cubin load (cuModuleLoadData, or cuLibraryLoadData), function, attributes, a 4N-byte cuMemAlloc,
//     launch and sync of `extern "C" __global__ void add(const float*, const float*, float*, unsigned)`
//     (nvcc -cubin -arch=sm_90) over N floats; the inputs are filled on the device first.
//     overlap: the module is loaded by a thread started at the clock's start while this one
//     allocates; overlap-pre: by a thread started before the clock, spinning until it starts.
//     With PROBE_FLUSH=1, a 1 GiB host memcpy runs just before the clock starts (as uploading the
//     inputs would leave the host's caches).
//   driver_probes vmm FLUSH
//     512 MiB through cuMemCreate + cuMemAddressReserve + cuMemMap + cuMemSetAccess against cuMemAlloc,
//     alternating, four rounds, each after a 1 GiB host memcpy when FLUSH is 1.
//   driver_probes alloc FLUSH ASYNC
//     four 512 MiB allocations (cuMemAlloc, or cuMemAllocAsync when ASYNC is 1), each after a 1 GiB
//     host memcpy when FLUSH is 1.
// Build: g++ -O2 -std=c++20 -I$CUDA/include driver_probes.cpp -o driver_probes -ldl
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

static CUcontext g_ctx;

using Clock = std::chrono::steady_clock;
static double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}
#define F(name)                                                     \
  auto name = reinterpret_cast<decltype(&::name)>(dlsym(h, #name)); \
  if (!name) {                                                      \
    std::printf("no %s\n", #name);                                  \
    return 2;                                                       \
  }
#define C(x)                                 \
  do {                                       \
    CUresult r_ = (x);                       \
    if (r_) {                                \
      std::printf("%s = %d\n", #x, (int)r_); \
      return 1;                              \
    }                                        \
  } while (0)

static int first_kernel(void* h, const std::string& mode, long n, const char* cubin) {
  FILE* fp = std::fopen(cubin, "rb");
  if (fp == nullptr) return 2;
  std::vector<char> bin(1 << 20);
  bin.resize(std::fread(bin.data(), 1, bin.size(), fp));
  std::fclose(fp);
  F(cuDeviceGet);
  F(cuMemAlloc_v2);
  F(cuModuleLoadData);
  F(cuModuleGetFunction);
  F(cuLaunchKernel);
  F(cuCtxSynchronize);
  F(cuLibraryLoadData);
  F(cuLibraryGetKernel);
  F(cuKernelGetFunction);
  F(cuFuncGetAttribute);
  F(cuDeviceGetAttribute);
  F(cuMemsetD32_v2);
  F(cuMemcpyDtoH_v2);
  CUdevice dev;
  C(cuDeviceGet(&dev, 0));
  CUdeviceptr a, b, c;
  C(cuMemAlloc_v2(&a, n * 4));
  C(cuMemAlloc_v2(&b, n * 4));
  C(cuMemsetD32_v2(a, 0x3fc00000u, n));  // 1.5f
  C(cuMemsetD32_v2(b, 0x3fc00000u, n));
  C(cuCtxSynchronize());
  F(cuCtxSetCurrent);
  const bool overlap = mode == "overlap" || mode == "overlap-pre";
  std::atomic<int> go{0};
  CUresult loaded = CUDA_SUCCESS;
  CUfunction f = nullptr;
  double load_us = 0;
  auto load = [&] {
    while (go.load(std::memory_order_acquire) == 0) {
    }
    const auto a0 = Clock::now();
    CUmodule m;
    loaded = cuCtxSetCurrent(g_ctx);
    if (loaded == CUDA_SUCCESS) loaded = cuModuleLoadData(&m, bin.data());
    if (loaded == CUDA_SUCCESS) loaded = cuModuleGetFunction(&f, m, "add");
    load_us = us(a0, Clock::now());
  };
  std::thread th;
  if (mode == "overlap-pre") th = std::thread(load);
  std::vector<char> big;
  if (const char* e = std::getenv("PROBE_FLUSH"); e != nullptr && e[0] == '1') {
    std::vector<char> src(size_t{1} << 30, 1);
    big.assign(size_t{1} << 30, 2);
    std::memcpy(big.data(), src.data(), big.size());
  }
  const auto t0 = Clock::now();
  if (overlap) {
    if (mode == "overlap") th = std::thread(load);
    go.store(1, std::memory_order_release);
    C(cuMemAlloc_v2(&c, n * 4));
    const auto ta = Clock::now();
    th.join();
    C(loaded);
    const auto tb = Clock::now();
    unsigned nn = (unsigned)n;
    void* args[] = {&a, &b, &c, &nn};
    unsigned grid = (unsigned)((n + 1023) / 1024);
    if (grid > 132 * 16) grid = 132 * 16;
    C(cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    C(cuCtxSynchronize());
    const auto t5 = Clock::now();
    float last = 0;
    C(cuMemcpyDtoH_v2(&last, c + (n - 1) * 4, 4));
    std::printf("%s n=%ld alloc %.1f us, load+get (thread) %.1f us, join wait %.1f us, total %.1f us (%s)\n",
                mode.c_str(), n, us(t0, ta), load_us, us(ta, tb), us(t0, t5), last == 3.0f ? "ok" : "WRONG");
    return 0;
  }
  if (mode == "module") {
    CUmodule m;
    C(cuModuleLoadData(&m, bin.data()));
    C(cuModuleGetFunction(&f, m, "add"));
  } else {
    CUlibrary l;
    C(cuLibraryLoadData(&l, bin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel k;
    C(cuLibraryGetKernel(&k, l, "add"));
    C(cuKernelGetFunction(&f, k));
  }
  const auto t1 = Clock::now();
  int v = 0, acc = 0;
  for (int at : {2, 3, 4, 5, 6, 7, 97}) {
    C(cuDeviceGetAttribute(&v, (CUdevice_attribute)at, dev));
    acc += v;
  }
  for (int at : {0, 1, 8, 4}) {
    C(cuFuncGetAttribute(&v, (CUfunction_attribute)at, f));
    acc += v;
  }
  const auto t2 = Clock::now();
  C(cuMemAlloc_v2(&c, n * 4));
  const auto t3 = Clock::now();
  unsigned nn = (unsigned)n;
  void* args[] = {&a, &b, &c, &nn};
  unsigned grid = (unsigned)((n + 1023) / 1024);
  if (grid > 132 * 16) grid = 132 * 16;
  C(cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  const auto t4 = Clock::now();
  C(cuCtxSynchronize());
  const auto t5 = Clock::now();
  float last = 0;
  C(cuMemcpyDtoH_v2(&last, c + (n - 1) * 4, 4));
  std::printf(
      "%s n=%ld load+get %.1f us, attrs %.1f us, alloc %.1f us, launch %.1f us, sync %.1f us, total %.1f us (%s)\n",
      mode.c_str(), n, us(t0, t1), us(t1, t2), us(t2, t3), us(t3, t4), us(t4, t5), us(t0, t5),
      last == 3.0f ? "ok" : "WRONG");
  return acc == 0;
}

// VMM: cuMemCreate + cuMemAddressReserve + cuMemMap + cuMemSetAccess of 512 MiB, each after a 1 GiB
// host memcpy when FLUSH is 1, against cuMemAlloc in the same process (alternating).
static int vmm(void* h, bool flush) {
  const size_t bytes = size_t{1} << 29;
  F(cuMemAlloc_v2);
  F(cuMemCreate);
  F(cuMemAddressReserve);
  F(cuMemMap);
  F(cuMemSetAccess);
  F(cuMemGetAllocationGranularity);
  F(cuMemsetD32_v2);
  F(cuCtxSynchronize);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t gran = 0;
  C(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  std::vector<char> src(bytes, 1), dst(bytes, 2);
  for (int i = 0; i < 4; ++i) {
    for (int kind = 0; kind < 2; ++kind) {
      if (flush) std::memcpy(dst.data(), src.data(), bytes);
      const auto a = Clock::now();
      CUdeviceptr p = 0;
      double tc = 0, tr = 0, tm = 0;
      if (kind == 0) {
        C(cuMemAlloc_v2(&p, bytes));
      } else {
        CUmemGenericAllocationHandle hd;
        C(cuMemCreate(&hd, bytes, &prop, 0));
        tc = us(a, Clock::now());
        C(cuMemAddressReserve(&p, bytes, 0, 0, 0));
        tr = us(a, Clock::now());
        C(cuMemMap(p, bytes, 0, hd, 0));
        tm = us(a, Clock::now());
        CUmemAccessDesc ad{};
        ad.location = prop.location;
        ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        C(cuMemSetAccess(p, bytes, &ad, 1));
      }
      const double t = us(a, Clock::now());
      C(cuMemsetD32_v2(p, 0, bytes / 4));
      C(cuCtxSynchronize());
      if (kind == 0)
        std::printf("flush=%d round %d cuMemAlloc %.1f us\n", flush, i, t);
      else
        std::printf("flush=%d round %d vmm %.1f us (create %.1f, +reserve %.1f, +map %.1f, +access %.1f) granularity %zu\n",
                    flush, i, t, tc, tr - tc, tm - tr, t - tm, gran);
    }
  }
  std::printf("(%d)\n", dst[5]);
  return 0;
}

static int alloc(void* h, bool flush, bool async) {
  const size_t bytes = size_t{1} << 29;
  F(cuMemAlloc_v2);
  F(cuMemAllocAsync);
  F(cuCtxSynchronize);
  F(cuMemsetD32_v2);
  std::vector<char> src(bytes, 1), dst(bytes, 2);
  CUdeviceptr p[4];
  double t[4];
  for (int i = 0; i < 4; ++i) {
    if (flush) std::memcpy(dst.data(), src.data(), bytes);
    const auto a = Clock::now();
    if (async) {
      C(cuMemAllocAsync(&p[i], bytes, nullptr));
    } else {
      C(cuMemAlloc_v2(&p[i], bytes));
    }
    t[i] = us(a, Clock::now());
    C(cuMemsetD32_v2(p[i], 0, bytes / 4));
    C(cuCtxSynchronize());
  }
  std::printf("flush=%d async=%d: 512 MiB allocations %.1f %.1f %.1f %.1f us (%d)\n", flush, async, t[0], t[1], t[2],
              t[3], dst[5]);
  return 0;
}

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (!((what == "first-kernel" && argc == 5) || (what == "alloc" && argc == 4) || (what == "vmm" && argc == 3))) {
    std::fprintf(stderr, "usage: driver_probes first-kernel module|library N CUBIN | alloc FLUSH ASYNC\n");
    return 2;
  }
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  if (h == nullptr) {
    std::fprintf(stderr, "libcuda.so.1: %s\n", dlerror());
    return 2;
  }
  F(cuInit);
  F(cuDeviceGet);
  F(cuDevicePrimaryCtxRetain);
  F(cuCtxSetCurrent);
  C(cuInit(0));
  CUdevice dev;
  C(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  C(cuDevicePrimaryCtxRetain(&ctx, dev));
  C(cuCtxSetCurrent(ctx));
  g_ctx = ctx;
  if (what == "alloc") return alloc(h, std::atoi(argv[2]) != 0, std::atoi(argv[3]) != 0);
  if (what == "vmm") return vmm(h, std::atoi(argv[2]) != 0);
  return first_kernel(h, argv[2], std::atol(argv[3]), argv[4]);
}
