// The compensated float32 sum of the tuning programs in bench/nvcc (sum_finish.cu, sum_tune.cu):
// a running sum and its rounding error (TwoSum, every operation rounded on its own), merged the
// same way, moved across a warp with shuffles, and four lanes of a 16-byte load added at once.
#pragma once

#include <cuda_runtime.h>

struct St {
  float s, c;
};
__device__ __forceinline__ void add(St& st, float x) {
  const float t = __fadd_rn(st.s, x), z = __fsub_rn(t, st.s);
  st.c = __fadd_rn(st.c, __fadd_rn(__fsub_rn(st.s, __fsub_rn(t, z)), __fsub_rn(x, z)));
  st.s = t;
}
__device__ __forceinline__ St merge(St a, St b) {
  St r;
  r.s = __fadd_rn(a.s, b.s);
  const float z = __fsub_rn(r.s, a.s);
  r.c = __fadd_rn(__fadd_rn(a.c, b.c), __fadd_rn(__fsub_rn(a.s, __fsub_rn(r.s, z)), __fsub_rn(b.s, z)));
  return r;
}
__device__ __forceinline__ St shfl(St a, int d) {
  a.s = __shfl_down_sync(0xffffffffu, a.s, d);
  a.c = __shfl_down_sync(0xffffffffu, a.c, d);
  return a;
}
// The four floats of a 16-byte load into four accumulators (one per lane of the vector).
__device__ __forceinline__ void add4(St* acc, uint4 x) {
  add(acc[0], __uint_as_float(x.x));
  add(acc[1], __uint_as_float(x.y));
  add(acc[2], __uint_as_float(x.z));
  add(acc[3], __uint_as_float(x.w));
}
