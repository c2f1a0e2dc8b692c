// The reduction kernels over float32 with xp's sum op, and the moments of var and std: the bodies
// (device/reduce_bodies.cuh) instantiated for every kernel class, as reduce_source.cpp writes them
// for sum float32. build.device_code compiles it with nvcc.
#include "../../src/backend/cuda/device/types.cuh"
#include "../../src/backend/cuda/device/half.cuh"
#include "../../src/backend/cuda/device/reduce_common.cuh"
#include "../../src/backend/cuda/device/reduce_geometry.cuh"
typedef float S;
typedef float V;
XP_D V xp_val(S s) { return s; }
XP_D bool xp_truth(S s) { return s != 0; }
template <class T> XP_D void xp_store(u64 at, T v) { *(float*)at = v; }
#include "../../src/backend/cuda/device/reduce_moments.cuh"
#include "../../src/backend/cuda/device/reduce_sum.cuh"
typedef xp_sum_comp<float, false> R0;
#define XP_WIDE_FINISH_STATES 256  // reduce_source.cpp writes kWideFinishStates
#include "../../src/backend/cuda/device/reduce_bodies.cuh"

extern "C" __global__ void __launch_bounds__(256) xp_rows_vec(const Args a) { xp_rows_vec_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(256, 6) xp_rows_tile(const Args a) { xp_rows_tile_body<R0>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_rows_each(const Args a) { xp_rows_each_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_rows_strided(const Args a) { xp_rows_strided_body<R0>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_cols(const Args a) { xp_cols_body<R0>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_cols_vec(const Args a) { xp_cols_vec_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_finish(const Args a) { xp_finish_body<R0>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_finish_cols(const Args a) { xp_finish_cols_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_finish_wide(const Args a) { xp_finish_wide_body<R0, true>(a); }

struct Moments {
  float h, l, q, c;
  i64 n;
};
extern "C" __global__ void xp_test_moments(const float* x, Moments* out) {
  out[threadIdx.x] = xp_moments_merge(xp_moments_tile<Moments, float, 8>(x + 8 * threadIdx.x), out[threadIdx.x]);
}
