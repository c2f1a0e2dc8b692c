// Philox random numbers (backend/philox.hpp, device/random.cuh), as random_source.cpp writes the
// kernel for uniform float16: build.device_code compiles it with nvcc.
#include "backend/philox.hpp"
#include "../../src/backend/cuda/device/types.cuh"
#include "../../src/backend/cuda/device/half.cuh"
#include "../../src/backend/cuda/device/random.cuh"

extern "C" __global__ void __launch_bounds__(256) xp_random_normal_float16(u16* out, u64 n, u64 seed, u64 stream,
                                                                          u64 low, u64 range) {
  const u64 per = 4;
  xp_random_blocks(n, seed, stream, per, [&](const px::Block& x, u64 i0) {
    for (u32 s = 0; s < 4; ++s) {
      if (i0 + s < n) out[i0 + s] = xp_f32_to_f16(px::normal_float32_from(x.x[s & 2], x.x[(s & 2) + 1], (s & 1) != 0));
    }
  });
}
