// Exact integer and bool matmul (backend/cuda/linalg.cpp, loop_kernel_source): one thread per output
// element, summed in k order. Before it: types.cuh, S (the element's storage type), A (the
// accumulator: u8 for bool, else an unsigned type of at least 32 bits, whose arithmetic wraps with
// no signed overflow; truncating once gives NumPy's wrap-around) and XP_MATMUL_LOGICAL (1 for bool:
// or of ands).
struct LoopArgs {
  u64 a, b, out;
  i64 m, n, k, total;
  i64 a_rs, a_cs, b_rs, b_cs, o_rs, o_cs;
  i64 nbatch;
  i64 shape[8];
  i64 a_st[8], b_st[8], o_st[8];
};
#if XP_MATMUL_LOGICAL
__device__ __forceinline__ A xp_in(S s) { return s != 0 ? 1 : 0; }
__device__ __forceinline__ A xp_mac(A acc, A x, A y) { return (A)(acc | (x & y)); }
__device__ __forceinline__ S xp_out(A c) { return c != 0 ? 1 : 0; }
#else
__device__ __forceinline__ A xp_in(S s) { return (A)s; }
__device__ __forceinline__ A xp_mac(A acc, A x, A y) { return (A)(acc + x * y); }
__device__ __forceinline__ S xp_out(A c) { return (S)c; }
#endif
extern "C" __global__ void __launch_bounds__(256) xp_matmul_loop(const LoopArgs p) {
  const i64 step = (i64)gridDim.x * blockDim.x;
  for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < p.total; t += step) {
    const i64 j = t % p.n, r = t / p.n, i = r % p.m;
    i64 bi = r / p.m, oa = 0, ob = 0, oo = 0;
    for (int d = (int)p.nbatch - 1; d >= 0; --d) {
      const i64 q = bi % p.shape[d];
      bi /= p.shape[d];
      oa += q * p.a_st[d];
      ob += q * p.b_st[d];
      oo += q * p.o_st[d];
    }
    const char* pa = (const char*)p.a + oa + i * p.a_rs;
    const char* pb = (const char*)p.b + ob + j * p.b_cs;
    A acc = 0;
    for (i64 q = 0; q < p.k; ++q) acc = xp_mac(acc, xp_in(*(const S*)(pa + q * p.a_cs)), xp_in(*(const S*)(pb + q * p.b_rs)));
    *(S*)((char*)p.out + oo + i * p.o_rs + j * p.o_cs) = xp_out(acc);
  }
}
