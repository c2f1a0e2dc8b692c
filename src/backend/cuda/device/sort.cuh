// Sorting and searching on the device (backend/cuda/sort_source.cpp): a stable LSD radix sort of the
// keys of backend/sort_keys.hpp (8-bit digits; rows sorted together by a further pass per 8 bits of
// the row number, taken from each element's position), the scatter of indexed writes, the positions
// of a mask's nonzero elements, and binary searches. Before it: types.cuh, K (the key: u32 or u64),
// P (the payload, an element's position: u32 or u64) and XP_SORT_ARGS (sizeof(SortArgs)).
// Every kernel runs 256 threads a block and takes the one SortArgs by value.
struct Args {
  u64 in, keys[2], pay[2], hist, part, values, indices, mask, out;
  i64 n, row, blocks, hist_len, parts, m, inner, stride0, dst_rows;
  i32 esize, dtype, descending, shift, row_pass, src, right, bits;
};
static_assert(sizeof(Args) == XP_SORT_ARGS, "the host's SortArgs");

#define XP_SORT_TILE 4096  // elements a block ranks: 8 warps of 16 rounds of 32
#define XP_SORT_ROUNDS 16

// The key of element bits b of dtype t (sort_keys.hpp): dtype codes are xp::DType's.
template <class T>
XP_D T xp_sort_key(int t, T b) {
  const int w = sizeof(T) * 8;
  const T sign = (T)1 << (w - 1);
  T inf = 0;
  switch (t) {
    case 1: case 2: case 3: case 4:  // int8 .. int64
      return b ^ sign;
    case 9: inf = (T)0x7C00u; break;       // float16
    case 10: inf = (T)0x7F80u; break;      // bfloat16
    case 11: inf = (T)0x7F800000u; break;  // float32
    case 12: inf = (T)0x7FF0000000000000ull; break;  // float64
    default:
      return b;
  }
  const T mag = b & ~sign;
  if (mag > inf) return ~(T)0;
  if (mag == 0) return sign;
  return (b & sign) ? ~b : (b | sign);
}

// The key of element i of the input, widened to K (1-, 2- and 4-byte elements: their own width's
// key, zero-extended, so the order is kept).
XP_D K xp_load_key(const Args& a, i64 i) {
  K k;
  switch (a.esize) {
    case 1: k = (K)xp_sort_key<u8>(a.dtype, ((const u8*)a.in)[i]); if (a.descending) k = (K)(u8)~(u8)k; break;
    case 2: k = (K)xp_sort_key<u16>(a.dtype, ((const u16*)a.in)[i]); if (a.descending) k = (K)(u16)~(u16)k; break;
    case 4: k = (K)xp_sort_key<u32>(a.dtype, ((const u32*)a.in)[i]); if (a.descending) k = (K)(u32)~(u32)k; break;
    default: k = (K)xp_sort_key<u64>(a.dtype, ((const u64*)a.in)[i]); if (a.descending) k = ~k; break;
  }
  return k;
}

extern "C" __global__ void __launch_bounds__(256) xp_sort_init(const Args a) {
  K* keys = (K*)a.keys[0];
  P* pay = (P*)a.pay[0];
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += (i64)gridDim.x * blockDim.x) {
    keys[i] = xp_load_key(a, i);
    // The element's position, or (bits: one row, values only) its own bits, which then come out
    // sorted without a gather.
    if (!a.bits) {
      pay[i] = (P)i;
    } else {
      switch (a.esize) {
        case 1: pay[i] = (P)((const u8*)a.in)[i]; break;
        case 2: pay[i] = (P)((const u16*)a.in)[i]; break;
        case 4: pay[i] = (P)((const u32*)a.in)[i]; break;
        default: pay[i] = (P)((const u64*)a.in)[i]; break;
      }
    }
  }
}

// The digit of this pass: 8 bits of the key, or of the row number of the element's position.
XP_D u32 xp_digit(const Args& a, K k, P p) {
  if (a.row_pass) return (u32)(((u64)p / (u64)a.row) >> a.shift) & 0xFFu;
  return (u32)(k >> a.shift) & 0xFFu;
}

// Each block counts the digits of its tile: hist[digit * blocks + block].
extern "C" __global__ void __launch_bounds__(256) xp_sort_hist(const Args a) {
  __shared__ u32 c[256];
  c[threadIdx.x] = 0;
  __syncthreads();
  const K* keys = (const K*)a.keys[a.src];
  const P* pay = (const P*)a.pay[a.src];
  const i64 base = (i64)blockIdx.x * XP_SORT_TILE;
  for (int j = threadIdx.x; j < XP_SORT_TILE; j += 256) {
    const i64 i = base + j;
    if (i < a.n) atomicAdd(&c[xp_digit(a, keys[i], a.row_pass ? pay[i] : (P)0)], 1u);
  }
  __syncthreads();
  ((u64*)a.hist)[(i64)threadIdx.x * a.blocks + blockIdx.x] = c[threadIdx.x];
}

// Exclusive scan of hist (hist_len values), in three kernels: each block's sum of 4096 values into
// part, then part scanned by one block, then each block's values scanned from its part.
XP_D u64 xp_block_exclusive(u64 v, u64* s, u64& total) {
  // 256 threads: warp inclusive scans, then the warps' totals.
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  u64 x = v;
  for (int o = 1; o < 32; o <<= 1) {
    const u64 y = __shfl_up_sync(0xFFFFFFFFu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) s[w] = x;
  __syncthreads();
  if (threadIdx.x == 0) {
    u64 run = 0;
    for (int k = 0; k < 8; ++k) {
      const u64 t = s[k];
      s[k] = run;
      run += t;
    }
    s[8] = run;
  }
  __syncthreads();
  const u64 r = s[w] + x - v;
  total = s[8];
  __syncthreads();
  return r;
}

extern "C" __global__ void __launch_bounds__(256) xp_sort_scan_parts(const Args a) {
  __shared__ u64 s[9];
  const u64* h = (const u64*)a.hist;
  const i64 base = (i64)blockIdx.x * 4096 + (i64)threadIdx.x * 16;
  u64 v = 0;
  for (int j = 0; j < 16; ++j)
    if (base + j < a.hist_len) v += h[base + j];
  u64 total;
  xp_block_exclusive(v, s, total);
  if (threadIdx.x == 0) ((u64*)a.part)[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(256) xp_sort_scan_top(const Args a) {
  __shared__ u64 s[9];
  u64* part = (u64*)a.part;
  u64 carry = 0;
  for (i64 b = 0; b < a.parts; b += 256) {
    const i64 i = b + threadIdx.x;
    const u64 v = i < a.parts ? part[i] : 0;
    u64 total;
    const u64 e = xp_block_exclusive(v, s, total);
    if (i < a.parts) part[i] = carry + e;
    carry += total;
  }
}

extern "C" __global__ void __launch_bounds__(256) xp_sort_scan_apply(const Args a) {
  __shared__ u64 s[9];
  u64* h = (u64*)a.hist;
  const i64 base = (i64)blockIdx.x * 4096 + (i64)threadIdx.x * 16;
  u64 v[16], sum = 0;
  for (int j = 0; j < 16; ++j) {
    v[j] = base + j < a.hist_len ? h[base + j] : 0;
    sum += v[j];
  }
  u64 total;
  u64 run = xp_block_exclusive(sum, s, total) + ((const u64*)a.part)[blockIdx.x];
  for (int j = 0; j < 16; ++j) {
    if (base + j < a.hist_len) h[base + j] = run;
    run += v[j];
  }
}

// Each block moves its tile to the scanned offsets; within the tile an element's rank among equal
// digits follows its position (warp w holds elements [w 512, w 512 + 512) in rounds of 32), so the
// pass is stable. The tile is first put in digit order in shared memory, so that the writes of
// consecutive threads go to consecutive addresses (keys, then positions, through one buffer).
extern "C" __global__ void __launch_bounds__(256) xp_sort_scatter(const Args a) {
  __shared__ u32 cnt[8][256];
  __shared__ u64 gbase[256];
  __shared__ u32 bstart[256];
  __shared__ u64 buf[XP_SORT_TILE];
  __shared__ u8 dig[XP_SORT_TILE];
  __shared__ u64 s[9];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (int k = threadIdx.x; k < 8 * 256; k += 256) (&cnt[0][0])[k] = 0;
  gbase[threadIdx.x] = ((const u64*)a.hist)[(i64)threadIdx.x * a.blocks + blockIdx.x];
  __syncthreads();
  const K* keys = (const K*)a.keys[a.src];
  const P* pay = (const P*)a.pay[a.src];
  K* okeys = (K*)a.keys[1 - a.src];
  P* opay = (P*)a.pay[1 - a.src];
  const i64 tile = (i64)blockIdx.x * XP_SORT_TILE;
  const i64 base = tile + (i64)w * (XP_SORT_TILE / 8);
  const u32 lt = (1u << lane) - 1u;
  K k[XP_SORT_ROUNDS];
  P p[XP_SORT_ROUNDS];
  u32 d[XP_SORT_ROUNDS], r[XP_SORT_ROUNDS];
#pragma unroll
  for (int j = 0; j < XP_SORT_ROUNDS; ++j) {
    const i64 i = base + j * 32 + lane;
    const bool in = i < a.n;
    k[j] = in ? keys[i] : (K)0;
    p[j] = in ? pay[i] : (P)0;
    d[j] = in ? xp_digit(a, k[j], p[j]) : 256u;
    const u32 peers = __match_any_sync(0xFFFFFFFFu, d[j]);
    const u32 before = in ? cnt[w][d[j]] : 0u;
    r[j] = before + __popc(peers & lt);
    __syncwarp();
    if (in && (peers & lt) == 0) cnt[w][d[j]] = before + __popc(peers);
    __syncwarp();
  }
  __syncthreads();
  u32 total = 0;
  {  // each digit's count in the warps before: a prefix over the 8 warps; then the digits' starts
    for (int q = 0; q < 8; ++q) {
      const u32 c = cnt[q][threadIdx.x];
      cnt[q][threadIdx.x] = total;
      total += c;
    }
  }
  u64 all;
  bstart[threadIdx.x] = (u32)xp_block_exclusive(total, s, all);
  __syncthreads();
  const int valid = (int)all;
  K* sk = (K*)buf;
  P* sp = (P*)buf;
#pragma unroll
  for (int j = 0; j < XP_SORT_ROUNDS; ++j) {
    if (d[j] < 256u) {
      const u32 lp = bstart[d[j]] + cnt[w][d[j]] + r[j];
      sk[lp] = k[j];
      dig[lp] = (u8)d[j];
    }
  }
  __syncthreads();
  for (int t = threadIdx.x; t < valid; t += 256) {
    const u32 dd = dig[t];
    okeys[gbase[dd] + (u64)(t - (int)bstart[dd])] = sk[t];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < XP_SORT_ROUNDS; ++j)
    if (d[j] < 256u) sp[bstart[d[j]] + cnt[w][d[j]] + r[j]] = p[j];
  __syncthreads();
  for (int t = threadIdx.x; t < valid; t += 256) {
    const u32 dd = dig[t];
    opay[gbase[dd] + (u64)(t - (int)bstart[dd])] = sp[t];
  }
}

// The results from the sorted positions: indices (position in the row, int64) and values (the
// input's own bits).
extern "C" __global__ void __launch_bounds__(256) xp_sort_finish(const Args a) {
  const P* pay = (const P*)a.pay[a.src];
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += (i64)gridDim.x * blockDim.x) {
    const P p = pay[i];
    if (a.bits) {
      switch (a.esize) {
        case 1: ((u8*)a.values)[i] = (u8)p; break;
        case 2: ((u16*)a.values)[i] = (u16)p; break;
        case 4: ((u32*)a.values)[i] = (u32)p; break;
        default: ((u64*)a.values)[i] = (u64)p; break;
      }
      continue;
    }
    if (a.indices) ((i64*)a.indices)[i] = (i64)((u64)p % (u64)a.row);
    if (a.values) {
      switch (a.esize) {
        case 1: ((u8*)a.values)[i] = ((const u8*)a.in)[p]; break;
        case 2: ((u16*)a.values)[i] = ((const u16*)a.in)[p]; break;
        case 4: ((u32*)a.values)[i] = ((const u32*)a.in)[p]; break;
        default: ((u64*)a.values)[i] = ((const u64*)a.in)[p]; break;
      }
    }
  }
}

// scatter: rows of `inner` contiguous elements, values row j to dst row indices[j] (dst rows
// stride0 bytes apart). With repeats (hist: one u64 per dst row, zeroed), a first pass keeps each
// row's last j + 1 and only that j writes.
extern "C" __global__ void __launch_bounds__(256) xp_scatter_last(const Args a) {
  const i64* ix = (const i64*)a.indices;
  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < a.m; j += (i64)gridDim.x * blockDim.x)
    atomicMax((unsigned long long*)a.hist + ix[j], (unsigned long long)(j + 1));
}

extern "C" __global__ void __launch_bounds__(256) xp_scatter(const Args a) {
  const i64* ix = (const i64*)a.indices;
  const i64 total = a.m * a.inner;
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (i64)gridDim.x * blockDim.x) {
    const i64 j = e / a.inner, t = e - j * a.inner;
    const i64 row = ix[j];
    if (a.hist && ((const u64*)a.hist)[row] != (u64)(j + 1)) continue;
    const u64 to = a.out + (u64)(row * a.stride0 + t * a.esize);
    switch (a.esize) {
      case 1: *(u8*)to = ((const u8*)a.values)[e]; break;
      case 2: *(u16*)to = ((const u16*)a.values)[e]; break;
      case 4: *(u32*)to = ((const u32*)a.values)[e]; break;
      default: *(u64*)to = ((const u64*)a.values)[e]; break;
    }
  }
}

// flatnonzero (and a mask's selection): part[block] = the nonzero count of each 4096-element tile of the bool mask (then
// scanned by xp_sort_scan_top), then each tile writes its positions in order.
extern "C" __global__ void __launch_bounds__(256) xp_nonzero_count(const Args a) {
  __shared__ u64 s[9];
  const u8* m = (const u8*)a.mask;
  const i64 base = (i64)blockIdx.x * XP_SORT_TILE;
  u64 c = 0;
  for (int j = threadIdx.x; j < XP_SORT_TILE; j += 256) {
    const i64 i = base + j;
    if (i < a.n && m[i]) ++c;
  }
  u64 total;
  xp_block_exclusive(c, s, total);
  if (threadIdx.x == 0) ((u64*)a.part)[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(256) xp_nonzero_write(const Args a) {
  __shared__ u64 s[9];
  const u8* m = (const u8*)a.mask;
  // Thread t reads 16 consecutive elements of the tile: its count, the block's exclusive scan, then
  // the positions in order.
  const i64 base = (i64)blockIdx.x * XP_SORT_TILE + (i64)threadIdx.x * 16;
  u32 bits = 0;
  u64 c = 0;
  for (int j = 0; j < 16; ++j) {
    const i64 i = base + j;
    if (i < a.n && m[i]) {
      bits |= 1u << j;
      ++c;
    }
  }
  u64 total;
  u64 o = xp_block_exclusive(c, s, total) + ((const u64*)a.part)[blockIdx.x];
  // The positions, or (values set) the values' elements of esize bytes there.
  for (int j = 0; j < 16; ++j) {
    if (bits & (1u << j)) {
      const i64 i = base + j;
      if (!a.values) {
        ((i64*)a.out)[o] = i;
      } else {
        switch (a.esize) {
          case 1: ((u8*)a.out)[o] = ((const u8*)a.values)[i]; break;
          case 2: ((u16*)a.out)[o] = ((const u16*)a.values)[i]; break;
          case 4: ((u32*)a.out)[o] = ((const u32*)a.values)[i]; break;
          default: ((u64*)a.out)[o] = ((const u64*)a.values)[i]; break;
        }
      }
      ++o;
    }
  }
}

// searchsorted: for each query (contiguous, the sorted array's dtype), the insertion index into the
// sorted 1-D array (stride0 bytes between elements, m of them).
template <class T>
XP_D i64 xp_search(const Args& a, T key) {
  i64 lo = 0, hi = a.m;
  while (lo < hi) {
    const i64 mid = lo + (hi - lo) / 2;
    const T v = xp_sort_key<T>(a.dtype, *(const T*)(a.in + (u64)(mid * a.stride0)));
    if (a.right ? v <= key : v < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

extern "C" __global__ void __launch_bounds__(256) xp_searchsorted(const Args a) {
  i64* out = (i64*)a.out;
  for (i64 q = (i64)blockIdx.x * blockDim.x + threadIdx.x; q < a.n; q += (i64)gridDim.x * blockDim.x) {
    switch (a.esize) {
      case 1: out[q] = xp_search<u8>(a, xp_sort_key<u8>(a.dtype, ((const u8*)a.values)[q])); break;
      case 2: out[q] = xp_search<u16>(a, xp_sort_key<u16>(a.dtype, ((const u16*)a.values)[q])); break;
      case 4: out[q] = xp_search<u32>(a, xp_sort_key<u32>(a.dtype, ((const u32*)a.values)[q])); break;
      default: out[q] = xp_search<u64>(a, xp_sort_key<u64>(a.dtype, ((const u64*)a.values)[q])); break;
    }
  }
}
