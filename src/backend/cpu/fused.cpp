// Runs a fused elementwise program on the CPU: the iteration space is cut into tiles of kTile
// elements; each tile runs the whole program with its intermediate values in small buffers that stay
// in cache, so every input is read once and every output written once. Contiguous views are read and
// written in place; strided and broadcast ones are gathered into (scattered from) tile buffers.
//
// Programs whose contiguous outputs are too big for the caches (kStreamBytes) are memory-bound:
// they write their outputs with non-temporal stores (no read for ownership) and, when every input
// is contiguous too, run in smaller tiles (kStreamTile) and prefetch their inputs kStreamPrefetch
// tiles ahead, so that memory reads stay in flight while a tile computes (measured on a 2-core
// Xeon: docs/performance.md, "kStreamBytes, kStreamTile, kStreamPrefetch, kMinParallel").
// Small programs (at most kMinParallel elements) run on the calling thread without entering a
// parallel region.

#include "backend/cpu/fused.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#define XP_STREAMING_STORES 1
#else
#define XP_STREAMING_STORES 0
#endif

#include "backend/cpu/tile_ops.hpp"
#include "runtime/parallel.hpp"
#include "runtime/thread_cache.hpp"
#include "xp/error.hpp"

namespace xp::detail::cpu {

namespace {

constexpr std::int64_t kTile = 2048;
// Outputs of at least this many bytes (all outputs together, every one contiguous) are written with
// non-temporal stores: they would only push the inputs out of the caches. set_stream_threshold
// changes it for tests.
constexpr std::int64_t kStreamBytes = std::int64_t{32} << 20;
std::atomic<std::int64_t> g_stream_bytes{kStreamBytes};
std::atomic<std::uint64_t> g_streamed_runs{0};
// Such programs run in tiles of kStreamTile elements (1 KiB of float32 per input) and prefetch their
// contiguous inputs kStreamPrefetch tiles ahead. Larger tiles were slower (docs/performance.md,
// "kStreamBytes, kStreamTile, kStreamPrefetch, kMinParallel").
constexpr std::int64_t kStreamTile = 256;
constexpr std::int64_t kStreamPrefetch = 2;
static_assert(kStreamTile <= kTile, "tile buffers hold kTile elements");
// Below this many elements a program runs on the calling thread.
constexpr std::int64_t kMinParallel = 1 << 15;

// Bytes per element, inline (xp::itemsize is a call into another file, twice per view per run).
constexpr unsigned char kItemBytes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
static_assert(static_cast<int>(DType::complex128) == 14 && sizeof(kItemBytes) == 15, "one entry per DType, in order");
inline std::size_t item_bytes(DType t) {
  return kItemBytes[static_cast<std::size_t>(t)];
}

// The kernel lookups' answers, remembered: finding an operation's kernel walks a chain of switches,
// which costs more than a small program's whole tile. Filled on first use (a racing thread stores
// the same values). `fn` is exact_tile_fn's kernel, else complex_tile_fn's, else kNotExact: a
// combination that goes to math_tile_fn every time (its choice can change:
// set_math_isa_for_testing). `exact` says the kernel is exact_tile_fn's: every element correctly
// rounded or exact, so one element computed alone has the bits it has inside a tile.
void not_exact(const void* const*, void*, std::int64_t) {}
constexpr TileFn kNotExact = &not_exact;
struct KernelSlot {
  std::atomic<TileFn> fn{nullptr};
  std::atomic<bool> exact{false};  // stored before fn
};
const KernelSlot& kernel_slot(Op op, DType operand, DType result) {
  static KernelSlot table[kOpCount][sizeof(kItemBytes)][sizeof(kItemBytes)];
  KernelSlot& slot = table[static_cast<int>(op)][static_cast<std::size_t>(operand)][static_cast<std::size_t>(result)];
  if (slot.fn.load(std::memory_order_acquire) == nullptr) {
    TileFn f = exact_tile_fn(op, operand, result);
    slot.exact.store(f != nullptr, std::memory_order_relaxed);
    if (f == nullptr) f = complex_tile_fn(op, operand, result);
    if (f == nullptr) f = kNotExact;
    slot.fn.store(f, std::memory_order_release);
  }
  return slot;
}
TileFn cached_tile_fn(Op op, DType operand, DType result) {
  const TileFn f = kernel_slot(op, operand, result).fn.load(std::memory_order_relaxed);
  return f != kNotExact ? f : math_tile_fn(op, operand, result);
}
bool exact_kernel(Op op, DType operand, DType result) {
  return kernel_slot(op, operand, result).exact.load(std::memory_order_relaxed);
}

// A view with the iteration space's (coalesced) dimensions.
struct Walk {
  std::byte* base = nullptr;
  const std::int64_t* strides = nullptr;  // into Plan::stride_store
  std::size_t item = 0;
  bool flat = false;     // strides are C-contiguous for the coalesced shape: tiles are plain pointers
  bool uniform = false;  // every stride is zero: one element
};

struct Plan {
  int ndim = 0;
  std::int64_t shape[kMaxDims];
  std::int64_t total = 1;
  std::vector<Walk> in, out;
  std::vector<std::int64_t> stride_store;
  // Scratch for coalesce(), kept with the plan so that its capacity is reused.
  std::vector<const View*> views;
  std::vector<std::int64_t> st;  // views.size() x kMaxDims
  std::vector<Instr> code;
  std::vector<TileFn> fns;
  std::vector<std::int32_t> output_instr;
  std::vector<char> uniform;              // per instruction: the same value everywhere
  std::vector<std::byte*> uniform_tiles;  // per instruction (uniform ones): a copy per element of a tile
  bool direct_output = false;             // the single output is flat, of the last instruction's dtype
  bool stream_output = false;             // flat outputs too big for the caches: non-temporal stores
  std::int64_t tile = kTile;              // elements per tile (at most kTile)
  std::int64_t slot_bytes = kTile * 8;    // one instruction's tile buffer: kTile of its widest value
  std::int64_t prefetch = 0;              // tiles ahead whose flat inputs are prefetched
};

// Copies `n` elements of `item` bytes from a strided walk starting at linear index `start` into dst
// (gather) or from src into the walk (scatter).
template <bool Gather>
void walk_copy(const Plan& p, const Walk& w, std::int64_t start, std::int64_t n, std::byte* buf) {
  std::int64_t idx[kMaxDims];
  std::int64_t rem = start;
  std::byte* ptr = w.base;
  for (int d = p.ndim - 1; d >= 0; --d) {
    idx[d] = rem % p.shape[d];
    rem /= p.shape[d];
    ptr += idx[d] * w.strides[d];
  }
  const int last = p.ndim - 1;
  const std::size_t item = w.item;
  const std::int64_t st = w.strides[last];
  while (n > 0) {
    const std::int64_t run = std::min<std::int64_t>(n, p.shape[last] - idx[last]);
    if (Gather) {
      if (st == static_cast<std::int64_t>(item)) {
        std::memcpy(buf, ptr, static_cast<std::size_t>(run) * item);
      } else {
        for (std::int64_t i = 0; i < run; ++i) std::memcpy(buf + i * item, ptr + i * st, item);
      }
    } else {
      if (st == static_cast<std::int64_t>(item)) {
        std::memcpy(ptr, buf, static_cast<std::size_t>(run) * item);
      } else {
        for (std::int64_t i = 0; i < run; ++i) std::memcpy(ptr + i * st, buf + i * item, item);
      }
    }
    buf += run * static_cast<std::int64_t>(item);
    n -= run;
    ptr += run * st;
    idx[last] += run;
    // Carry into the outer dimensions.
    for (int d = last; d > 0 && idx[d] == p.shape[d]; --d) {
      ptr -= idx[d] * w.strides[d];
      idx[d] = 0;
      ++idx[d - 1];
      ptr += w.strides[d - 1];
    }
  }
}

template <class T>
void fill_typed(std::byte* dst, const std::byte* value, std::int64_t n) {
  T v;
  std::memcpy(&v, value, sizeof v);              // first: `value` may be dst's first element
  std::fill_n(reinterpret_cast<T*>(dst), n, v);  // tile buffers are aligned for every dtype
}
void fill_copies(std::byte* dst, const std::byte* value, std::size_t item, std::int64_t n) {
  switch (item) {
    case 1:
      return fill_typed<std::uint8_t>(dst, value, n);
    case 2:
      return fill_typed<std::uint16_t>(dst, value, n);
    case 4:
      return fill_typed<std::uint32_t>(dst, value, n);
    case 8:
      return fill_typed<std::uint64_t>(dst, value, n);
    default:
      return fill_typed<std::array<std::uint64_t, 2>>(dst, value, n);  // complex128
  }
}

// coalesce() for the common case, every view C-contiguous over the whole shape (no broadcasting):
// one flat dimension. False (nothing set) otherwise, and for fewer than two elements.
bool coalesce_contiguous(const FusedProgram& fp, Plan& p) {
  std::int64_t total = 1;
  for (int d = 0; d < fp.ndim; ++d) total *= fp.shape[d];
  if (total < 2) return false;
  auto contiguous = [&](const View& v) {
    std::int64_t expect = static_cast<std::int64_t>(item_bytes(v.dtype));
    for (int d = fp.ndim - 1; d >= 0; --d) {
      if (fp.shape[d] == 1) continue;
      if (v.strides[d] != expect) return false;
      expect *= fp.shape[d];
    }
    return true;
  };
  for (const View& v : fp.inputs) {
    if (!contiguous(v)) return false;
  }
  for (const View& v : fp.outputs) {
    if (!contiguous(v)) return false;
  }
  p.ndim = 1;
  p.shape[0] = total;
  p.total = total;
  p.stride_store.resize(fp.inputs.size() + fp.outputs.size());
  std::size_t slot = 0;
  auto make = [&](const View& v) {
    Walk w;
    w.base = v.data;
    w.item = item_bytes(v.dtype);
    p.stride_store[slot] = static_cast<std::int64_t>(w.item);
    w.strides = p.stride_store.data() + slot++;
    w.flat = true;
    return w;
  };
  p.in.clear();
  p.out.clear();
  for (const View& v : fp.inputs) p.in.push_back(make(v));
  for (const View& v : fp.outputs) p.out.push_back(make(v));
  return true;
}

// The iteration space without size-1 dimensions, with neighbours merged where every view allows.
void coalesce(const FusedProgram& fp, Plan& p) {
  if (coalesce_contiguous(fp, p)) return;
  auto& views = p.views;
  views.clear();
  for (const View& v : fp.inputs) views.push_back(&v);
  for (const View& v : fp.outputs) views.push_back(&v);
  const std::size_t width = fp.ndim > 0 ? static_cast<std::size_t>(fp.ndim) : 1;
  p.st.resize(views.size() * width);  // entries are written before they are read
  auto st = [&](std::size_t v) { return p.st.data() + v * width; };
  p.ndim = 0;
  for (int d = 0; d < fp.ndim; ++d) {
    if (fp.shape[d] == 1) continue;
    const int k = p.ndim;
    bool merge = k > 0;
    for (std::size_t v = 0; merge && v < views.size(); ++v) {
      merge = st(v)[k - 1] == views[v]->strides[d] * fp.shape[d];
    }
    if (merge) {
      p.shape[k - 1] *= fp.shape[d];
      for (std::size_t v = 0; v < views.size(); ++v) st(v)[k - 1] = views[v]->strides[d];
    } else {
      p.shape[k] = fp.shape[d];
      for (std::size_t v = 0; v < views.size(); ++v) st(v)[k] = views[v]->strides[d];
      ++p.ndim;
    }
  }
  if (p.ndim == 0) {  // a single element
    p.ndim = 1;
    p.shape[0] = 1;
    for (std::size_t v = 0; v < views.size(); ++v) st(v)[0] = 0;
  }
  p.total = 1;
  for (int d = 0; d < p.ndim; ++d) p.total *= p.shape[d];
  p.stride_store.resize(views.size() * static_cast<std::size_t>(p.ndim));
  std::size_t slot = 0;
  auto make = [&](const View& v, const std::int64_t* s) {
    Walk w;
    w.base = v.data;
    w.item = item_bytes(v.dtype);
    std::int64_t* strides = p.stride_store.data() + slot;
    slot += static_cast<std::size_t>(p.ndim);
    w.strides = strides;
    bool flat = true, uniform = true;
    std::int64_t expect = static_cast<std::int64_t>(w.item);
    for (int d = p.ndim - 1; d >= 0; --d) {
      strides[d] = s[d];
      flat = flat && s[d] == expect;
      uniform = uniform && s[d] == 0;
      expect *= p.shape[d];
    }
    w.flat = flat;
    w.uniform = uniform;
    return w;
  };
  std::size_t v = 0;
  p.in.clear();
  p.out.clear();
  for (const View& in : fp.inputs) p.in.push_back(make(in, st(v++)));
  for (const View& out : fp.outputs) p.out.push_back(make(out, st(v++)));
}

DType operand_dtype(const std::vector<Instr>& code, const Instr& i) {
  const std::int32_t k = i.op == Op::where ? i.b : i.a;
  return code[k].dtype;
}

// Copies with non-temporal stores: an output that will not fit in the caches is written without
// first being read for ownership, which takes a quarter of the memory traffic off a + b and
// a * b + c. Whole 64-byte lines at a time where the CPU has AVX-512 (one store per line: the
// write-combining buffer never holds a partial line), else 32 (AVX) or 16 bytes (SSE2, every
// x86-64). The bytes before dst's first aligned block and after its last one are copied with plain
// stores. The caller fences (sfence) before another thread reads dst.
#if XP_STREAMING_STORES
__attribute__((target("avx512f"))) void stream_blocks_64(std::byte* dst, const std::byte* src, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), _mm512_loadu_si512(src + i));
  }
}
__attribute__((target("avx"))) void stream_blocks_32(std::byte* dst, const std::byte* src, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
  }
}
void stream_blocks_16(std::byte* dst, const std::byte* src, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  }
}
// The widest streaming store this CPU has (bytes).
int best_stream_width() noexcept {
  static const int best = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 64;
    if (__builtin_cpu_supports("avx")) return 32;
    return 16;
  }();
  return best;
}
// The width in use: 0 until the first streamed program (constant-initialized, so that a program run
// during another file's static initialization finds it); set_stream_width narrows it for tests.
std::atomic<int> g_stream_width{0};
#endif

void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
#if XP_STREAMING_STORES
  int w = g_stream_width.load(std::memory_order_relaxed);
  if (w == 0) {
    w = best_stream_width();
    g_stream_width.store(w, std::memory_order_relaxed);
  }
  const std::size_t width = static_cast<std::size_t>(w);
  std::size_t head = (width - (reinterpret_cast<std::uintptr_t>(dst) & (width - 1))) & (width - 1);
  if (head > bytes) head = bytes;
  if (head > 0) std::memcpy(dst, src, head);
  const std::size_t body = (bytes - head) / width * width;
  if (body > 0) {
    if (w == 64) {
      stream_blocks_64(dst + head, src + head, body);
    } else if (w == 32) {
      stream_blocks_32(dst + head, src + head, body);
    } else {
      stream_blocks_16(dst + head, src + head, body);
    }
  }
  if (head + body < bytes) std::memcpy(dst + head + body, src + head + body, bytes - head - body);
#else
  std::memcpy(dst, src, bytes);
#endif
}

struct Scratch {
  std::vector<std::byte> bytes;
};
struct TileScratch : Scratch {};     // per thread: the tile buffers
struct UniformScratch : Scratch {};  // the calling thread's: values the same everywhere, read by all

void run_tile(const Plan& p, std::int64_t start, std::int64_t n, std::byte* scratch) {
  const std::size_t ninstr = p.code.size();
  if (p.prefetch > 0) {
    const std::int64_t ahead = start + p.prefetch * p.tile;
    const std::int64_t m = std::min(p.tile, p.total - ahead);
    for (const Walk& w : p.in) {
      if (!w.flat || m <= 0) continue;
      const std::byte* b = w.base + ahead * static_cast<std::int64_t>(w.item);
      const std::int64_t bytes = m * static_cast<std::int64_t>(w.item);
      for (std::int64_t q = 0; q < bytes; q += 64) __builtin_prefetch(b + q, 0, 3);
    }
  }
  const void* ptr[256];
  std::byte* slot = scratch;  // p.slot_bytes per instruction
  const std::int64_t slot_bytes = p.slot_bytes;
  const std::int32_t last = static_cast<std::int32_t>(ninstr) - 1;
  for (std::size_t k = 0; k < ninstr; ++k) {
    std::byte* buf = slot + static_cast<std::int64_t>(k) * slot_bytes;
    const Instr& ins = p.code[k];
    if (p.uniform[k]) {
      ptr[k] = p.uniform_tiles[k];
      continue;
    }
    if (ins.op == Op::load) {
      const Walk& w = p.in[ins.imm];
      if (w.flat) {
        ptr[k] = w.base + start * static_cast<std::int64_t>(w.item);
      } else {
        walk_copy<true>(p, w, start, n, buf);
        ptr[k] = buf;
      }
      continue;
    }
    const void* args[3] = {ptr[ins.a], ins.b >= 0 ? ptr[ins.b] : nullptr, ins.c >= 0 ? ptr[ins.c] : nullptr};
    void* dst = buf;
    if (p.direct_output && static_cast<std::int32_t>(k) == last) {
      dst = p.out[0].base + start * static_cast<std::int64_t>(p.out[0].item);
    }
    p.fns[k](args, dst, n);
    ptr[k] = dst;
  }
  if (p.direct_output) return;
  for (std::size_t o = 0; o < p.out.size(); ++o) {
    const Walk& w = p.out[o];
    const std::byte* src = static_cast<const std::byte*>(ptr[p.output_instr[o]]);
    if (p.uniform[p.output_instr[o]]) src = p.uniform_tiles[p.output_instr[o]];
    if (w.flat && p.stream_output) {
      stream_copy(w.base + start * static_cast<std::int64_t>(w.item), src, static_cast<std::size_t>(n) * w.item);
    } else if (w.flat) {
      std::memcpy(w.base + start * static_cast<std::int64_t>(w.item), src, static_cast<std::size_t>(n) * w.item);
    } else {
      walk_copy<false>(p, w, start, n, const_cast<std::byte*>(src));
    }
  }
}

}  // namespace

void run_fused(const FusedProgram& fp) {
  for (int d = 0; d < fp.ndim; ++d) {
    if (fp.shape[d] == 0) return;
  }
  // One plan per thread, reused: its vectors keep their capacity (run_fused never nests).
  Plan& p = thread_cache<Plan>();
  coalesce(fp, p);
  p.code.assign(fp.code.begin(), fp.code.end());
  p.output_instr.assign(fp.output_instr.begin(), fp.output_instr.end());
  // Stores that convert: a cast appended per output whose dtype differs from its instruction's.
  for (std::size_t o = 0; o < fp.outputs.size(); ++o) {
    const Instr& src = p.code[p.output_instr[o]];
    if (src.dtype != fp.outputs[o].dtype) {
      p.code.push_back({Op::cast, fp.outputs[o].dtype, p.output_instr[o], -1, -1, 0});
      p.output_instr[o] = static_cast<std::int32_t>(p.code.size() - 1);
    }
  }
  const std::size_t ninstr = p.code.size();
  if (ninstr > 255) throw ValueError("fused program too long (" + std::to_string(ninstr) + " instructions)");
  // Every entry is written below (resize, not assign: no memset call per run).
  p.fns.resize(ninstr);
  p.uniform.resize(ninstr);
  p.uniform_tiles.resize(ninstr);
  // Outputs too big for the caches: streaming stores, small tiles, prefetching (see the top).
  std::int64_t out_bytes = 0;
  bool all_flat = true;
  for (const Walk& w : p.out) {
    out_bytes += p.total * static_cast<std::int64_t>(w.item);
    all_flat = all_flat && w.flat;
  }
  p.stream_output = XP_STREAMING_STORES && all_flat && out_bytes >= g_stream_bytes.load(std::memory_order_relaxed);
  if (p.stream_output) g_streamed_runs.fetch_add(1, std::memory_order_relaxed);
  // Small tiles and prefetching when every input is read in order (gathering a strided input costs
  // some divisions per tile, and its reads are not a stream to prefetch).
  bool inputs_flat = true;
  for (const Walk& w : p.in) inputs_flat = inputs_flat && (w.flat || w.uniform);
  const bool small_tiles = p.stream_output && inputs_flat;
  p.tile = small_tiles ? kStreamTile : kTile;
  p.prefetch = small_tiles ? kStreamPrefetch : 0;
  // Tile buffers of 8 bytes an element, 16 where a complex128 value is in the program.
  std::size_t widest = 8;
  for (const Instr& ins : p.code) widest = std::max<std::size_t>(widest, item_bytes(ins.dtype));
  p.slot_bytes = kTile * static_cast<std::int64_t>(widest);
  const std::size_t slot = static_cast<std::size_t>(p.slot_bytes);
  // Uniform values live in the calling thread's arena, sized for every instruction (it never shrinks).
  auto& arena = thread_cache<UniformScratch>().bytes;
  if (arena.size() < ninstr * slot) arena.resize(ninstr * slot);
  const std::int64_t uniform_n = std::min(p.total, p.tile);  // no tile is longer
  // A uniform value is computed on one element where its operation is exact (a constant's cast, a
  // scalar's product), and copied over a whole tile only where a tile reads it.
  bool whole[256];  // whether uniform_tiles[k] holds uniform_n copies (else one)
  auto expand = [&](std::int32_t k) {
    if (k < 0 || !p.uniform[k] || whole[k]) return;
    fill_copies(p.uniform_tiles[k], p.uniform_tiles[k], item_bytes(p.code[k].dtype), uniform_n);
    whole[k] = true;
  };
  for (std::size_t k = 0; k < ninstr; ++k) {
    const Instr& ins = p.code[k];
    p.fns[k] = nullptr;
    p.uniform_tiles[k] = nullptr;
    if (ins.op == Op::constant) {
      if (item_bytes(ins.dtype) > 8)
        throw ValueError("a fused constant holds at most 8 bytes (complex(re, im) builds wider values)");
      p.uniform[k] = 1;
    } else if (ins.op == Op::load) {
      p.uniform[k] = p.in[ins.imm].uniform ? 1 : 0;
    } else {
      p.fns[k] = cached_tile_fn(ins.op, operand_dtype(p.code, ins), ins.dtype);
      if (p.fns[k] == nullptr) {
        throw ValueError(std::string("the CPU backend has no kernel for ") + std::string(op_name(ins.op)) + " on " +
                         std::string(name(operand_dtype(p.code, ins))) + " -> " + std::string(name(ins.dtype)));
      }
      bool u = true;
      for (std::int32_t a : {ins.a, ins.b, ins.c}) u = u && (a < 0 || p.uniform[a]);
      p.uniform[k] = u ? 1 : 0;
    }
    if (!p.uniform[k]) {
      for (std::int32_t a : {ins.a, ins.b, ins.c}) expand(a);  // a tile reads them
      continue;
    }
    // A value that is the same everywhere: computed once.
    const std::size_t item = item_bytes(ins.dtype);
    std::byte* tile = arena.data() + k * slot;
    p.uniform_tiles[k] = tile;
    whole[k] = false;
    if (ins.op == Op::constant) {
      std::memcpy(tile, &ins.imm, item);
    } else if (ins.op == Op::load) {
      std::memcpy(tile, p.in[ins.imm].base, item);
    } else {
      const bool one = exact_kernel(ins.op, operand_dtype(p.code, ins), ins.dtype);
      if (!one) {
        // A SIMD kernel's lanes and its scalar tail may round differently: over a whole tile, as
        // the same value computed from an array would be.
        for (std::int32_t a : {ins.a, ins.b, ins.c}) expand(a);
      }
      const void* args[3] = {p.uniform_tiles[ins.a], ins.b >= 0 ? p.uniform_tiles[ins.b] : nullptr,
                             ins.c >= 0 ? p.uniform_tiles[ins.c] : nullptr};
      p.fns[k](args, tile, one ? 1 : uniform_n);
      whole[k] = !one;
    }
  }
  for (std::int32_t o : p.output_instr) expand(o);
  const std::int32_t last = static_cast<std::int32_t>(ninstr) - 1;
  p.direct_output = !p.stream_output && p.out.size() == 1 && p.output_instr[0] == last && p.out[0].flat &&
                    !p.uniform[last] && p.code[last].op != Op::load;
  const std::int64_t tile = p.tile;
  const std::int64_t tiles = small_tiles ? (p.total + kStreamTile - 1) / kStreamTile : (p.total + kTile - 1) / kTile;
  const std::size_t scratch_bytes = ninstr * slot;
  const std::int64_t grain = small_tiles ? kMinParallel / kStreamTile : kMinParallel / kTile;
  if (tiles <= grain) {  // small: on the calling thread, without parallel_for's bookkeeping
    auto& s = thread_cache<TileScratch>().bytes;
    if (s.size() < scratch_bytes) s.resize(scratch_bytes);
    for (std::int64_t t = 0; t < tiles; ++t) {
      const std::int64_t start = t * tile;
      run_tile(p, start, std::min(tile, p.total - start), s.data());
    }
#if XP_STREAMING_STORES
    if (p.stream_output) _mm_sfence();
#endif
    return;
  }
  parallel_for(tiles, grain, [&](std::int64_t t0, std::int64_t t1) {
    auto& s = thread_cache<TileScratch>().bytes;
    if (s.size() < scratch_bytes) s.resize(scratch_bytes);
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t start = t * tile;
      run_tile(p, start, std::min(tile, p.total - start), s.data());
    }
#if XP_STREAMING_STORES
    if (p.stream_output) _mm_sfence();  // the non-temporal stores, visible before the chunk ends
#endif
  });
}

bool run_flat(Op op, DType operand, DType result, const std::byte* const* args, int nargs, std::byte* out,
              std::int64_t n) {
  if (n > kMinParallel || nargs < 1 || nargs > 3 || op == Op::where || op == Op::load || op == Op::constant)
    return false;
  const TileFn fn = cached_tile_fn(op, operand, result);
  if (fn == nullptr) return false;
  const std::int64_t in_item = static_cast<std::int64_t>(item_bytes(operand));
  const std::int64_t out_item = static_cast<std::int64_t>(item_bytes(result));
  // An output run_fused would stream (a lowered threshold, in tests) goes there too.
  if (XP_STREAMING_STORES && n * out_item >= g_stream_bytes.load(std::memory_order_relaxed)) return false;
  for (std::int64_t start = 0; start < n; start += kTile) {
    const void* a[3] = {nullptr, nullptr, nullptr};
    for (int k = 0; k < nargs; ++k) a[k] = args[k] + start * in_item;
    fn(a, out + start * out_item, std::min(kTile, n - start));
  }
  return true;
}

std::int64_t stream_threshold() noexcept {
  return g_stream_bytes.load(std::memory_order_relaxed);
}

std::int64_t set_stream_threshold(std::int64_t bytes) noexcept {
  return g_stream_bytes.exchange(bytes < 0 ? kStreamBytes : bytes, std::memory_order_relaxed);
}

int stream_width() noexcept {
#if XP_STREAMING_STORES
  const int w = g_stream_width.load(std::memory_order_relaxed);
  return w != 0 ? w : best_stream_width();
#else
  return 0;
#endif
}

int set_stream_width(int bytes) noexcept {
#if XP_STREAMING_STORES
  const int best = best_stream_width();
  int w = 16;
  while (w * 2 <= bytes && w * 2 <= best) w *= 2;
  if (bytes <= 0) w = best;
  const int old = g_stream_width.exchange(w, std::memory_order_relaxed);
  return old != 0 ? old : best;
#else
  (void)bytes;
  return 0;
#endif
}

std::uint64_t streamed_runs() noexcept {
  return g_streamed_runs.load(std::memory_order_relaxed);
}

}  // namespace xp::detail::cpu
