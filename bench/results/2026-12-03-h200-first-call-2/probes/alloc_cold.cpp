// Build: g++ -O2 -std=c++20 -I$CUDA/include alloc_cold.cpp -o alloc_cold -ldl. Run: alloc_cold FLUSH ASYNC (0 or 1
// each). cuMemAlloc of 512 MiB: with or without the host caches flushed by a 1 GiB memcpy first; sync or
// stream-ordered.
#include <cuda.h>
#include <dlfcn.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
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
int main(int argc, char** argv) {
  const bool flush = std::atoi(argv[1]) != 0;
  const bool async = std::atoi(argv[2]) != 0;
  const size_t bytes = size_t{1} << 29;
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  F(cuInit);
  F(cuDeviceGet);
  F(cuDevicePrimaryCtxRetain);
  F(cuCtxSetCurrent);
  F(cuMemAlloc_v2);
  F(cuMemAllocAsync);
  F(cuCtxSynchronize);
  F(cuMemsetD32_v2);
  F(cuStreamSynchronize);
  C(cuInit(0));
  CUdevice dev;
  C(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  C(cuDevicePrimaryCtxRetain(&ctx, dev));
  C(cuCtxSetCurrent(ctx));
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
    const auto b = Clock::now();
    t[i] = us(a, b);
    C(cuMemsetD32_v2(p[i], 0, bytes / 4));
    C(cuCtxSynchronize());
  }
  std::printf("flush=%d async=%d: 512 MiB allocations %.1f %.1f %.1f %.1f us (%d)\n", flush, async, t[0], t[1], t[2],
              t[3], dst[5]);
  return 0;
}
