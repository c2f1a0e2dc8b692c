// The one vector_add kernel of `xp bench launch` (tools/xp/bench_launch.cpp). Every row of that
// benchmark runs the text between the two snippet markers below, byte for byte: the raw driver +
// NVRTC row and the xp rows read it from this file at run time, and the nvcc row gets it at build
// time (bench/CMakeLists.txt copies it into a generated header). Edit only between the markers.
//
// One IEEE-754 single-precision addition per element: nothing to fuse or reorder, so every row
// must match the CPU reference bit for bit. The index is 64-bit so that no n <= INT_MAX overflows.

// [xp-snippet vector_add begin]
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < static_cast<unsigned long long>(n)) c[i] = a[i] + b[i];
}
// [xp-snippet vector_add end]
