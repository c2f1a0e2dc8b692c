#pragma once

// The CUDA C++ program of xp's GPU kernel tests (test_kernels_gpu.cpp), which the CPU kernel tests
// (test_cpu_kernels.cpp) also run on the CPU: one text, so that the two suites test the same
// kernels. `write_far` faults on purpose on a GPU; it is never launched on the CPU.

namespace xp_test {

inline const char* const kGpuTestKernels = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void axpy_fma_free(float alpha, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}
__device__ unsigned long long counter;
__constant__ float scale_by;
extern "C" __global__ void count_up(int times) { for (int i = 0; i < times; ++i) atomicAdd(&counter, 1ull); }
extern "C" __global__ void read_counter(unsigned long long* out) { *out = counter; }
extern "C" __global__ void scaled_copy(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * scale_by;
}
template <class T> __global__ void fill(T* out, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}
extern "C" __global__ void shared_sum(const int* in, int* out) {
  extern __shared__ int tile[];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) { int s = 0; for (unsigned i = 0; i < blockDim.x; ++i) s += tile[i]; *out = s; }
}
extern "C" __global__ void write_far(float* p) { p[(1ull << 40) / sizeof(float)] = 1.0f; }
struct Pair { double a; char b; };
extern "C" __global__ void mixed(char c, short s, Pair p, double d, int* out, float f) {
  if (c) out[0] = s + p.b + (int)d + (int)f + (int)p.a;
}
)";

}  // namespace xp_test
