// The gather kernel of take (backend/cuda/take_source.cpp). Before it: types.cuh, E (the element
// type: an unsigned integer of the element's size), XP_TAKE_DIMS (kMaxTakeDims), XP_TAKE_BLOCK
// (kTakeBlock) and XP_TAKE_ARGS (sizeof(TakeArgs)). The dimension loop is unrolled over the
// argument's fixed slots, so the argument is read at constant offsets only.
struct Args {
  u64 in, indices, out;
  i64 n, axis, nd;
  i64 shape[XP_TAKE_DIMS], sout[XP_TAKE_DIMS], sin[XP_TAKE_DIMS], sidx[XP_TAKE_DIMS];
};
static_assert(sizeof(Args) == XP_TAKE_ARGS, "the host's TakeArgs");

// The byte offsets of element e in out, in and the indices; I is the type of the divisions (u32
// while out has fewer than 2^32 elements: every size and every e then fits).
template <class I>
__device__ __forceinline__ void xp_offsets(const Args& a, I e, i64& o, i64& s, i64& x) {
  o = 0;
  s = 0;
  x = 0;
#pragma unroll
  for (int d = XP_TAKE_DIMS - 1; d >= 0; --d) {
    if (d < a.nd) {
      const I size = (I)a.shape[d];
      const I q = e / size;
      const i64 i = (i64)(e - q * size);
      e = q;
      o += i * a.sout[d];
      s += i * a.sin[d];
      x += i * a.sidx[d];
    }
  }
}

extern "C" __global__ void __launch_bounds__(XP_TAKE_BLOCK) xp_take(const Args a) {
  const i64 step = (i64)gridDim.x * blockDim.x;
  const bool narrow = a.n <= 0xFFFFFFFFll;
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < a.n; e += step) {
    i64 o, s, x;
    if (narrow) {
      xp_offsets<u32>(a, (u32)e, o, s, x);
    } else {
      xp_offsets<u64>(a, (u64)e, o, s, x);
    }
    const i64 j = *(const i64*)(a.indices + x);
    *(E*)(a.out + o) = *(const E*)(a.in + s + j * a.axis);
  }
}
