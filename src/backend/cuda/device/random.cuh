// Philox random numbers (backend/cuda/random_source.cpp). Before it: the text of backend/philox.hpp
// (as the header xp_philox.hpp, namespace xp::philox), types.cuh and half.cuh, whose xp_f32_to_f16
// and xp_f32_to_bf16 round float32 to the 16-bit formats bit for bit as xp::float16(float) and
// xp::bfloat16(float) do (docs/semantics.md).
namespace px = xp::philox;

// Thread b (grid-stride) computes Philox block b and gives it to f with the index of its first
// element, b * per: f writes the per elements that block gives, those below n.
template <class F> XP_D void xp_random_blocks(u64 n, u64 seed, u64 stream, u64 per, F&& f) {
  const u64 blocks = n / per + (n % per != 0 ? 1 : 0);
  const u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x; b < blocks; b += step) {
    const px::Block x = px::stream_block(seed, stream, b);
    f(x, b * per);
  }
}
