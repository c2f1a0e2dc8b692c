// Runs a fused elementwise program on the CPU: the iteration space is cut into tiles of kTile
// elements; each tile runs the whole program with its intermediate values in small buffers that stay
// in cache, so every input is read once and every output written once. Contiguous views are read and
// written in place; strided and broadcast ones are gathered into (scattered from) tile buffers.

#include "backend/cpu/fused.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "backend/cpu/parallel.hpp"
#include "backend/cpu/tile_ops.hpp"
#include "runtime/thread_cache.hpp"
#include "xp/error.hpp"

namespace xp::detail::cpu {

namespace {

constexpr std::int64_t kTile = 2048;
// Outputs of at least this many bytes are written with non-temporal stores (they would only push
// the inputs out of the caches).
constexpr std::int64_t kStreamBytes = std::int64_t{32} << 20;
// Below this many elements a program runs on the calling thread.
constexpr std::int64_t kMinParallel = 1 << 15;

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
  std::vector<std::byte*> uniform_tiles;  // per instruction (uniform ones): kTile copies
  bool direct_output = false;             // the single output is flat, of the last instruction's dtype
  bool stream_output = false;             // flat outputs too big for the caches: non-temporal stores
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

void fill_copies(std::byte* dst, const std::byte* value, std::size_t item, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * static_cast<std::int64_t>(item), value, item);
}

// The iteration space without size-1 dimensions, with neighbours merged where every view allows.
void coalesce(const FusedProgram& fp, Plan& p) {
  auto& views = p.views;
  views.clear();
  for (const View& v : fp.inputs) views.push_back(&v);
  for (const View& v : fp.outputs) views.push_back(&v);
  const std::size_t width = fp.ndim > 0 ? static_cast<std::size_t>(fp.ndim) : 1;
  p.st.assign(views.size() * width, 0);
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
  }
  p.total = 1;
  for (int d = 0; d < p.ndim; ++d) p.total *= p.shape[d];
  p.stride_store.resize(views.size() * static_cast<std::size_t>(p.ndim));
  std::size_t slot = 0;
  auto make = [&](const View& v, const std::int64_t* s) {
    Walk w;
    w.base = v.data;
    w.item = itemsize(v.dtype);
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

// Copies with non-temporal 16-byte stores (SSE2, every x86-64) where dst is 16-byte aligned: an
// output that will not fit in the caches is written without first being read for ownership, which
// takes a quarter of the memory traffic off a + b and a * b + c. The caller fences (sfence).
void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
#if defined(__SSE2__)
  std::size_t i = 0;
  if ((reinterpret_cast<std::uintptr_t>(dst) & 15) == 0) {
    for (; i + 16 <= bytes; i += 16) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    }
  }
  if (i < bytes) std::memcpy(dst + i, src + i, bytes - i);
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
  const void* ptr[256];
  std::byte* slot = scratch;  // kTile * 8 bytes per instruction
  const std::int64_t slot_bytes = kTile * 8;
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
  p.fns.assign(ninstr, nullptr);
  p.uniform.assign(ninstr, 0);
  p.uniform_tiles.assign(ninstr, nullptr);
  // Uniform values live in the calling thread's arena, sized for every instruction (it never shrinks).
  auto& arena = thread_cache<UniformScratch>().bytes;
  if (arena.size() < ninstr * static_cast<std::size_t>(kTile) * 8)
    arena.resize(ninstr * static_cast<std::size_t>(kTile) * 8);
  for (std::size_t k = 0; k < ninstr; ++k) {
    const Instr& ins = p.code[k];
    if (ins.op == Op::constant) {
      p.uniform[k] = 1;
    } else if (ins.op == Op::load) {
      p.uniform[k] = p.in[ins.imm].uniform ? 1 : 0;
    } else {
      p.fns[k] = tile_fn(ins.op, operand_dtype(p.code, ins), ins.dtype);
      if (p.fns[k] == nullptr) {
        throw ValueError(std::string("the CPU backend has no kernel for ") + std::string(op_name(ins.op)) + " on " +
                         std::string(name(operand_dtype(p.code, ins))) + " -> " + std::string(name(ins.dtype)));
      }
      bool u = true;
      for (std::int32_t a : {ins.a, ins.b, ins.c}) u = u && (a < 0 || p.uniform[a]);
      p.uniform[k] = u ? 1 : 0;
    }
    if (!p.uniform[k]) continue;
    // A value that is the same everywhere: computed once, over a whole tile.
    const std::size_t item = itemsize(ins.dtype);
    std::byte* tile = arena.data() + k * static_cast<std::size_t>(kTile) * 8;
    p.uniform_tiles[k] = tile;
    if (ins.op == Op::constant) {
      fill_copies(tile, reinterpret_cast<const std::byte*>(&ins.imm), item, kTile);
    } else if (ins.op == Op::load) {
      fill_copies(tile, p.in[ins.imm].base, item, kTile);
    } else {
      const void* args[3] = {p.uniform_tiles[ins.a], ins.b >= 0 ? p.uniform_tiles[ins.b] : nullptr,
                             ins.c >= 0 ? p.uniform_tiles[ins.c] : nullptr};
      p.fns[k](args, tile, kTile);
    }
  }
  const std::int32_t last = static_cast<std::int32_t>(ninstr) - 1;
  std::int64_t out_bytes = 0;
  bool all_flat = true;
  for (const Walk& w : p.out) {
    out_bytes += p.total * static_cast<std::int64_t>(w.item);
    all_flat = all_flat && w.flat && (reinterpret_cast<std::uintptr_t>(w.base) & 15) == 0;
  }
  p.stream_output = all_flat && out_bytes >= kStreamBytes;
  p.direct_output = !p.stream_output && p.out.size() == 1 && p.output_instr[0] == last && p.out[0].flat &&
                    !p.uniform[last] && p.code[last].op != Op::load;
  const std::int64_t tiles = (p.total + kTile - 1) / kTile;
  const std::size_t scratch_bytes = ninstr * static_cast<std::size_t>(kTile) * 8;
  parallel_for(tiles, std::max<std::int64_t>(1, kMinParallel / kTile), [&](std::int64_t t0, std::int64_t t1) {
    auto& s = thread_cache<TileScratch>().bytes;
    if (s.size() < scratch_bytes) s.resize(scratch_bytes);
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t start = t * kTile;
      run_tile(p, start, std::min(kTile, p.total - start), s.data());
    }
#if defined(__SSE2__)
    if (p.stream_output) _mm_sfence();  // the non-temporal stores, visible before the chunk ends
#endif
  });
}

}  // namespace xp::detail::cpu
