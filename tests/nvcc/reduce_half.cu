// The reduction kernels over float16 with xp's float16 sum (in double, device/reduce_sum.cuh) and
// the mean of float64: build.device_code compiles it with nvcc.
#include "../../src/backend/cuda/device/types.cuh"
#include "../../src/backend/cuda/device/half.cuh"
#include "../../src/backend/cuda/device/reduce_common.cuh"
#include "../../src/backend/cuda/device/reduce_geometry.cuh"
typedef u16 S;
typedef float V;
XP_D V xp_val(S s) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(s));
  return f;
}
XP_D bool xp_truth(S s) { return (s & 0x7FFFu) != 0; }
template <class T> XP_D void xp_store(u64 at, T v) { *(u16*)at = xp_f32_to_f16((float)(v)); }
#include "../../src/backend/cuda/device/reduce_sum.cuh"
typedef xp_sum_wide<true> R0;
typedef xp_sum_comp<double, true> R1;
#define XP_WIDE_FINISH_STATES 256  // reduce_source.cpp writes kWideFinishStates
#include "../../src/backend/cuda/device/reduce_bodies.cuh"

extern "C" __global__ void __launch_bounds__(256) xp_rows_vec(const Args a) { xp_rows_vec_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_cols_vec(const Args a) { xp_cols_vec_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_finish(const Args a) { xp_finish_body<R1>(a); }
