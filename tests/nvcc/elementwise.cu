// The prelude of fused elementwise kernels (device/types.cuh, half.cuh, elementwise.cuh) with its
// templates instantiated: build.device_code compiles it with nvcc.
#include "../../src/backend/cuda/device/types.cuh"
#include "../../src/backend/cuda/device/half.cuh"
#include "../../src/backend/cuda/device/elementwise.cuh"

extern "C" __global__ void xp_test_elementwise(const float* f, const double* d, const int* i, u16* h, float* out) {
  const int k = threadIdx.x;
  out[k] = xp_f16_to_f32(xp_f32_to_f16(f[k])) + xp_bf16_to_f32(xp_f32_to_bf16(f[k]));
  h[k] = xp_f64_to_16<10, 15>(d[k]) ^ xp_f64_to_16<7, 127>(xp_i64_to_f64_odd((i64)i[k]));
  out[k] += (float)(xp_add<int, u32>(i[k], 1) + xp_floordiv_s<int, u32>(i[k], 3) + xp_rem_s<int>(i[k], 5) +
                    xp_ipow_s<int, u32>(i[k], 3) + xp_shl<int, u32, u32>(i[k], 2) + xp_shr_s<int, u32>(i[k], 1) +
                    xp_abs_s<int, u32>(i[k]) + xp_sign_s<int>(i[k]) + xp_ftoi<int, float>(f[k], -2.0f, 2.0f, -2, 2));
  out[k] += xp_floordiv_f32(f[k], 3.0f) + xp_rem_f32(f[k], 3.0f) + xp_powf(f[k], 2.0f) + xp_sign_f32(f[k]);
  out[k] += (float)(xp_floordiv_f64(d[k], 3.0) + xp_rem_f64(d[k], 3.0) + xp_pow(d[k], 2.0) + xp_max_f64(d[k], 1.0));
}
