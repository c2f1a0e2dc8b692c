#pragma once

// A fused elementwise program (backend/ir.hpp) as CUDA C++ source for NVRTC, and the bytes of its
// one kernel argument. The source is self-contained (no #include) and computes every exactly
// rounded operation with the same bits as the CPU backend's tile kernels (backend/cpu/ew_exact.cpp,
// docs/semantics.md); the transcendental functions call CUDA's own (cuda_ulp_bound below).
//
// Two layouts, each a kernel of its own:
// - contiguous: every input view is C-contiguous or a broadcast scalar (all strides 0) and every
//   output is C-contiguous, so a flat index serves every view. A grid-stride loop over chunks of
//   elements_per_thread consecutive elements; the vector variant loads and stores each chunk with
//   vector accesses of up to 16 bytes (every non-scalar view must start 16-byte aligned), the tail
//   element by element.
// - strided: any strides (bytes, negative and zero included) over the coalesced shape, at most
//   kMaxStridedDims dimensions; one element per iteration, its offsets decomposed from the index.
// Both call one per-element function, so an element gets the same bits in every variant.
//
// Constants are not in the source: their bits travel in the argument, so programs that differ only
// in constant values share one kernel. The key names everything the source depends on (layout,
// variant, dtypes, instructions, which inputs are broadcast scalars), never sizes, strides,
// addresses or constant values: equal keys <=> identical source.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backend/ir.hpp"

namespace xp::detail::cuda {

enum class Layout : std::uint8_t { contiguous, strided };

constexpr int kMaxStridedDims = 8;               // after coalescing; beyond, no strided kernel
constexpr unsigned kBlockSize = 256;             // the kernels' __launch_bounds__
constexpr std::size_t kMaxArgumentBytes = 4096;  // the classic kernel parameter limit

// What a kernel is specialised for, besides the program's structure.
struct Variant {
  Layout layout = Layout::contiguous;
  bool vector = false;   // contiguous only: whole chunks by vector loads and stores (up to 16 bytes)
  bool index64 = false;  // 64-bit element indices: needed when n >= 2^31
  bool operator==(const Variant&) const = default;
};

struct Generated {
  std::string source;       // the whole translation unit
  std::string kernel_name;  // extern "C" __global__, derived from the key
  std::string key;          // equal keys <=> identical source; no sizes, addresses or constant values
  Variant variant;
  int elements_per_thread = 1;     // per loop iteration of a thread (launch_shape uses it)
  std::size_t argument_bytes = 0;  // the size of the one struct argument
};

// Whether the generator (and the CPU backend: the same set) computes `op` with the given operand and
// result dtypes. `operand` is operand 0's dtype, except for where (b's and c's) and cast (the source).
bool supported(Op op, DType operand, DType result) noexcept;

// contiguous when every output is C-contiguous and every input C-contiguous or a broadcast scalar.
Layout layout_of(const FusedProgram& p);
// Whether the kernel of `layout` reads input view v as one broadcast value (element 0 for every
// element): in the contiguous layout, a view that is not C-contiguous and whose strides are all 0
// where its extent is not 1. A size-1 view that is C-contiguous is read as an array. The key of the
// generated source says it per input; a memo of generated programs must key on it too.
bool scalar_input(const View& v, Layout layout) noexcept;
// The number of dimensions of the program's shape once size-1 dimensions are dropped and
// neighbours that are contiguous in every view are merged (0 for a single element). The strided
// layout takes at most kMaxStridedDims.
int strided_ndim(const FusedProgram& p);
// The variant for this program's pointers and size: vector when every non-scalar view of a
// contiguous layout starts 16-byte aligned, index64 when the element count is 2^31 or more.
Variant variant_of(const FusedProgram& p, Layout layout);
inline Variant variant_of(const FusedProgram& p) {
  return variant_of(p, layout_of(p));
}

// Throws ValueError for a program that breaks ir.hpp's rules or uses a combination `supported`
// refuses, and for a contiguous variant of a program that is not contiguous.
Generated generate(const FusedProgram& p, Variant variant);
// Everything generate() gives but the source (left empty), without writing it: the key names the
// source, so a kernel already compiled for it (jit/generated.hpp) is found from this alone.
Generated generate_key(const FusedProgram& p, Variant variant);
// How many sources generate() has written in this process (for tests of the caches).
std::uint64_t sources_written() noexcept;
inline Generated generate(const FusedProgram& p, Layout layout) {
  return generate(p, variant_of(p, layout));
}

// The kernel's one argument, passed by value (Kernel::launch_packed with one pointer to these bytes
// and their size). Every field is 8 bytes, in this order:
//   n                                  element count (int64)
//   ptr[inputs + outputs]              View::data of each input, then each output, as a uint64
//                                      (for the GPU, View::data holds the CUdeviceptr)
//   konst[constants]                   each constant's Instr::imm, in instruction order (if any)
//   strided only: ndim, shape[kMaxStridedDims], stride[inputs + outputs][kMaxStridedDims]
//                                      the coalesced shape (C order, unused entries 1) and byte strides
// Throws ValueError when the variant does not fit the program: a vector variant with a misaligned
// view, 32-bit indices with n >= 2^31, a strided program of more than kMaxStridedDims dimensions,
// or more than kMaxArgumentBytes in all.
void pack_arguments(const FusedProgram& p, Variant variant, std::int64_t n, std::vector<std::byte>& out);
std::vector<std::byte> pack_arguments(const FusedProgram& p, Variant variant, std::int64_t n);

// A grid and block for n elements: kBlockSize threads, enough blocks for one chunk per thread (at
// most kMaxGridBlocks: the loops stride over the rest).
constexpr std::int64_t kMaxGridBlocks = 0x7FFFFFFF;
struct LaunchShape {
  unsigned grid = 1, block = kBlockSize;
};
LaunchShape launch_shape(std::int64_t n, const Generated& g, int multiprocessors) noexcept;

// ---- a fused program as the value a reduction reads (reduce_source.hpp) ----
//
// A program with no output views and one output_instr (the value reduced), whose inputs are all
// C-contiguous or broadcast scalars over its shape: the value of element e (C order) is the element
// function applied to element e of every input. The source defines, after the prelude:
//   struct xp_fargs { u64 ptr[inputs]; u64 konst[constants]; }    (ptr[1] when there is no input)
//   XP_D T xp_fused_at(const xp_fargs& f, i64 e)                   one element
//   XP_D void xp_fused_vec(const xp_fargs& f, i64 e, T* y)         16 / sizeof(T) elements from e,
//        e a multiple of that count, every non-scalar input 16-byte aligned: vector loads
// where T is ctype(dtype). The key names what the source depends on, as generate's does.
struct GeneratedValue {
  std::string source;
  std::string key;
  DType dtype = DType::float32;
  std::size_t argument_bytes = 0;  // of xp_fargs
};
// Whether the program is one the value generator takes (no output views, one output_instr, every
// input C-contiguous or a broadcast scalar).
bool value_program(const FusedProgram& p);
// Throws ValueError as generate does, and for a program value_program refuses.
GeneratedValue generate_value(const FusedProgram& p);
// Appends xp_fargs' bytes (the inputs' addresses, the constants' bits) to `out`.
void pack_value_arguments(const FusedProgram& p, std::vector<std::byte>& out);
// Whether every non-scalar input starts 16-byte aligned (xp_fused_vec may be called).
bool value_vector_aligned(const FusedProgram& p);

// The NVRTC options the source is meant for: --fmad=false (the source also uses the _rn
// intrinsics, which are never contracted) and nothing that changes IEEE behaviour.
std::vector<std::string> nvrtc_options();

// The C type an element is stored as in generated source (the prelude's i8 .. u64, float, double;
// 16-bit floats as u16 bits), shared by every kernel generator.
const char* ctype(DType d);

// CUDA's documented maximum error in ulp (CUDA C++ Programming Guide, "Mathematical Functions"
// appendix, compute capability >= 5.2, without --use_fast_math) of the function computing a
// transcendental op on float32 or float64; 0 for everything exactly rounded.
double cuda_ulp_bound(Op op, DType dtype) noexcept;

}  // namespace xp::detail::cuda
