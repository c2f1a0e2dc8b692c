// Build: g++ -O2 -std=c++20 -I$CUDA/include raw_first_kernel.cpp -o raw -ldl; a cubin of
// extern "C" __global__ void add(const float*, const float*, float*, unsigned) from nvcc -cubin -arch=sm_90.
// Run: raw module|library N add.cubin.
// The driver's own first-kernel cost: load a cubin, get the function, attributes, allocate, launch, sync.
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
  const std::string mode = argv[1];
  const long n = std::atol(argv[2]);
  FILE* fp = std::fopen(argv[3], "rb");
  std::vector<char> bin(1 << 20);
  bin.resize(std::fread(bin.data(), 1, bin.size(), fp));
  std::fclose(fp);
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  F(cuInit);
  F(cuDeviceGet);
  F(cuDevicePrimaryCtxRetain);
  F(cuCtxSetCurrent);
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
  CUcontext ctx;
  C(cuDevicePrimaryCtxRetain(&ctx, dev));
  C(cuCtxSetCurrent(ctx));
  CUdeviceptr a, b, c;
  C(cuMemAlloc_v2(&a, n * 4));
  C(cuMemAlloc_v2(&b, n * 4));
  C(cuMemsetD32_v2(a, 0x3fc00000u, n));
  C(cuMemsetD32_v2(b, 0x3fc00000u, n));
  C(cuCtxSynchronize());
  const auto t0 = Clock::now();
  CUfunction f;
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
