// xp's sum kernels of one dtype and one kernel class, made of xp's own device code
// (src/backend/cuda/device/) exactly as backend/cuda/reduce_source.cpp assembles it for
// reduce_source(sum, dtype, class): the element definitions, the op R0, the bodies and the kernels
// with their names and launch bounds. For the timing programs of this folder:
//   -DXP_SUM_FLOAT64 or -DXP_SUM_FLOAT16 (else float32): the dtype;
//   -DXP_SUM_COLUMNS (else rows_vector): xp_cols, xp_cols_vec and the columns' finish kernels, or
//   xp_rows_vec, xp_rows_tile, xp_rows_each and the rows' finish kernels.
// The bodies stay templates: a program may instantiate them with other parameters.
#include "../../src/backend/cuda/device/types.cuh"
#include "../../src/backend/cuda/device/half.cuh"
#include "../../src/backend/cuda/device/reduce_common.cuh"
#include "../../src/backend/cuda/device/reduce_geometry.cuh"

#if defined(XP_SUM_FLOAT64)
typedef double S;
typedef double V;
XP_D V xp_val(S s) { return s; }
XP_D bool xp_truth(S s) { return s != 0; }
template <class T> XP_D void xp_store(u64 at, T v) { *(double*)at = v; }
#elif defined(XP_SUM_FLOAT16)
typedef u16 S;
typedef float V;
XP_D V xp_val(S s) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(s));
  return f;
}
XP_D bool xp_truth(S s) { return (s & 0x7FFFu) != 0; }
template <class T> XP_D void xp_store(u64 at, T v) { *(u16*)at = xp_f32_to_f16((float)(v)); }
#else
typedef float S;
typedef float V;
XP_D V xp_val(S s) { return s; }
XP_D bool xp_truth(S s) { return s != 0; }
template <class T> XP_D void xp_store(u64 at, T v) { *(float*)at = v; }
#endif

#include "../../src/backend/cuda/device/reduce_sum.cuh"
#if defined(XP_SUM_FLOAT16)
typedef xp_sum_wide<false> R0;
#define XP_SUM_TILE_BOUNDS 256
#else
typedef xp_sum_comp<S, false> R0;
#define XP_SUM_TILE_BOUNDS 256, 6  // reduce_source.cpp, tile_bounds: kTileMinBlocks
#endif
#include "../../src/backend/cuda/device/reduce_bodies.cuh"

#if defined(XP_SUM_COLUMNS)
extern "C" __global__ void __launch_bounds__(256) xp_cols(const Args a) { xp_cols_body<R0>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_cols_vec(const Args a) { xp_cols_vec_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_finish(const Args a) { xp_finish_cols_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_finish_wide(const Args a) { xp_finish_wide_body<R0, true>(a); }
#else
// rows_vec_loads(sum, dtype): 8 loads in flight.
extern "C" __global__ void __launch_bounds__(256) xp_rows_vec(const Args a) { xp_rows_vec_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(XP_SUM_TILE_BOUNDS) xp_rows_tile(const Args a) { xp_rows_tile_body<R0>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_rows_each(const Args a) { xp_rows_each_body<R0, 8>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_finish(const Args a) { xp_finish_body<R0>(a); }
extern "C" __global__ void __launch_bounds__(256) xp_finish_wide(const Args a) { xp_finish_wide_body<R0, false>(a); }
#endif
