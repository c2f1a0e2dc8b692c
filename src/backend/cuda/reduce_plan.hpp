#pragma once

// Reductions and cumulative sums on a CUDA device: the plans (how the axes map to a kernel shape),
// testable without a GPU. The source is reduce_source.hpp's, the launch cuda_backend.cpp's.
//
// A reduction is M outputs times N reduced elements (the kept and the reduced axes, each list
// stripped of size-1 axes and merged where the strides allow, C order kept: argmin's index and the
// order of elements are those of the logical array). The N elements of an output are cut into S
// splits of `chunk` elements; a unit (output, split) is reduced by one warp (the rows kernels), one
// block (rows_vector in tiles) or one thread (the columns kernel) into a state. With S = 1 the unit
// finishes its output directly; otherwise the states go to a scratch buffer in a fixed order and
// are combined per output (a warp or, for many states, a block per output) by the unit that stores
// the last of them (rows classes, one_pass_finish) or by a finish kernel (columns). S, chunk and tiles are a function
// of M, N, the layout class, the multiprocessor count and the first-pass kernel's occupancy only, and every combination
// happens in a fixed order: the same input gives the same bits on every run. The one atomic: a counter per split output
// that elects the unit that finishes it (one_pass_finish); it decides who combines, never the order.
//
// Kernel classes (ReduceFamily):
//   rows_vector   the N elements of an output are one contiguous run, every run 16-byte aligned
//                 (reduce the innermost axes of a C-contiguous array, or everything): a warp reads
//                 16-byte vectors, rows_vec_loads(op, dtype) in flight per lane; with fewer outputs
//                 than multiprocessors (plan.tiles: a whole sum, a few long rows), or rows of
//                 kTileRowBytes or more but for argmin and argmax, a block per unit, so that each
//                 block streams one contiguous run, its warps' states combined in order (on an
//                 H200, 16384 rows of 64 KiB: sum 0.2356 ms in blocks, 0.2597 ms in warps; argmax
//                 0.2817 and 0.2466 ms; rows of 16 KiB: sum 0.2532 and 0.2452 ms). min and max of
//                 8- and 16-bit integers take a vector as four SIMD words; argmin and argmax of
//                 them search only a vector whose extreme beats the state. Whole rows of one kept
//                 axis up to kRowsEachMaxBytes (one split, no tiles: plan.rows_each) take a warp
//                 kernel of their own with no index arithmetic, which leaves it fewer registers;
//   rows_strided  any reduced strides (contiguous runs that are not aligned included), a warp over
//                 consecutive reduced indices;
//   columns       a thread per unit, adjacent threads on adjacent outputs: for reductions over
//                 leading or middle axes (the innermost kept axis is the denser one) and for short
//                 reductions (N < kMinWarpElements); over one reduced axis, eight loads in flight
//                 (the axis-0 sum of 16384 x 16384 float32 on an H200: 0.943 -> 0.282 ms). When the
//                 innermost kept axis is contiguous, a multiple of 16 / itemsize long and every row
//                 16-byte aligned (plan.cols_vec), a thread takes that many adjacent outputs as one
//                 16-byte vector per row, kColsVecLoads vectors in flight, with kColsVecWaves threads
//                 per resident thread. The split states of the class lie split-major
//                 (part[s * M + m], a warp's stores contiguous) and its finish kernels read them so.
//
// Cumulative sums (ScanPlan): sequential along the axis, as the CPU backend, one thread per line
// (many lines) or one block per line (a few long lines: the block stages tiles in shared memory;
// integers are scanned in parallel there, exactly; floats by one thread, in the CPU's order).
// Every dtype gives the CPU's bits.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/ir.hpp"
#include "backend/reduce_ops.hpp"

namespace xp::detail::cuda {

constexpr int kMaxReduceDims = 8;              // kept and reduced axes after merging; beyond: host
constexpr unsigned kReduceBlock = 256;         // threads per block, every reduction kernel
constexpr std::int64_t kMinWarpElements = 64;  // shorter contiguous reductions go to columns
// Rows up to this long take xp_rows_each (plan.rows_each): faster on sums of short rows, slower on
// argmax over rows of 64 KiB (docs/performance.md, "kRowsEachMaxBytes").
constexpr std::int64_t kRowsEachMaxBytes = 16384;
// rows_vector runs this long are read by a block each, except for argmin and argmax
// (docs/performance.md, "kTileRowBytes").
constexpr std::int64_t kTileRowBytes = 65536;
constexpr std::size_t kReduceStateBytes = 40;  // scratch bytes per partial state (the largest: var of float64)
// Columns in vectors: 16-byte loads in flight per thread, and threads per resident thread
// (docs/performance.md, "kColsVecLoads, kColsVecWaves").
constexpr int kColsVecLoads = 8;
constexpr std::int64_t kColsVecWaves = 1;
// Columns in vectors: below this many threads per SM, runs of 16 rows instead of 64 (plan_reduce;
// docs/performance.md, "kColsVecMinThreads": not yet measured on its own).
constexpr std::int64_t kColsVecMinThreads = 512;
// Columns in vectors: the splits' states (written, then read back) at most 1 / kColsStateShare of the
// bytes the first pass reads; 1 / kColsStateShareHeavy for argmin, argmax, var and std of float16 and
// bfloat16, whose eight outputs a thread bound them by its arithmetic, not by the bytes
// (docs/performance.md, "kColsStateShare").
constexpr std::int64_t kColsStateShare = 4;
constexpr std::int64_t kColsStateShareHeavy = 2;
// Columns in vectors with fewer threads than kReduceBlock per SM: blocks of this many threads, so
// that every SM gets some (16384 threads in blocks of 256 would leave half of an H100's idle).
constexpr unsigned kColsSmallBlock = 64;
// The finish of the columns class: up to this many states per output, a thread per output reads
// them all (a block per 32 outputs, a warp per eighth of the states, above).
constexpr std::int64_t kColsThinFinishStates = 8;

// Columns in vectors: the bytes of a thread's vector per row, 16, or 8 for argmin, argmax, var and
// std of float16 and bfloat16, whose arithmetic per element bounds a thread that takes eight outputs
// (four outputs a thread ran them 1.5 to 2 times as fast; docs/performance.md, "cols_vec_bytes").
int cols_vec_bytes(ReduceOp op, DType d) noexcept;

enum class ReduceFamily : std::uint8_t { rows_vector, rows_strided, columns };
const char* family_name(ReduceFamily f) noexcept;

struct ReducePlan {
  ReduceOp op = ReduceOp::sum;
  DType in_dtype = DType::float32, out_dtype = DType::float32;
  const std::byte* in = nullptr;
  std::byte* out = nullptr;
  double correction = 0;
  std::int64_t M = 1, N = 1;  // outputs, elements per output
  int nk = 0, nr = 0;
  ReduceDim kept[kMaxReduceDims]{}, red[kMaxReduceDims]{};
  bool on_device = true;  // false: more merged axes than the kernels take, or misaligned data
  ReduceFamily family = ReduceFamily::columns;
  std::int64_t splits = 1, chunk = 0;  // S splits of chunk elements per output (chunk * S >= N)
  bool tiles = false;                  // rows_vector: a block per unit, not a warp
  bool cols_vec = false;               // columns: a thread per cols_vec_bytes / itemsize adjacent outputs
  bool rows_each = false;              // rows_vector, a warp per unit, one kept axis, one split: kRowsEachKernel
  bool one_pass = false;               // splits finished by their last unit, no finish launch (one_pass_finish)
  unsigned block = kReduceBlock;       // threads per block of the first pass (kColsSmallBlock: few threads)
  std::int64_t units() const noexcept { return M * splits; }
};

// Checks the request as the CPU backend does (the same ValueErrors: axes, shapes, the output dtype,
// min/max/argmin/argmax of nothing), before anything is launched, and plans it for a device of
// `multiprocessors` SMs on which the first-pass kernel keeps `resident_warps` warps at once (0: 64
// per SM, the most an SM holds).
// var and std of bool and 8- and 16-bit integers over columns in vectors add exact integer sums; a
// thread then reads at most this many rows (0: not such a reduction).
std::int64_t reduce_int_moments_run(ReduceOp op, DType d) noexcept;
// The bytes of one partial state of `op` over elements of `d` as the kernels keep it (reduce_source's
// St; at most kReduceStateBytes): what a split writes and its finish reads back per output.
std::int64_t reduce_state_bytes(ReduceOp op, DType d) noexcept;

ReducePlan plan_reduce(ReduceOp op, const View& in, std::span<const int> axes, const View& out, double correction,
                       int multiprocessors, std::int64_t resident_warps = 0);
// The plan for reducing a fused value (ew_source.hpp, value_program(p) true): the value as a
// C-contiguous array of its dtype, at a stand-in base address that lets the plan pick rows_vector
// only when every non-scalar input is 16-byte aligned; plan.in is null (the kernels never read it).
ReducePlan plan_fused_reduce(ReduceOp op, const FusedProgram& p, std::span<const int> axes, const View& out,
                             double correction, int multiprocessors, std::int64_t resident_warps = 0);

// The 16-byte loads each lane of the rows_vector warp kernel keeps in flight (the tile kernel keeps
// 4). The order of additions does not depend on it. argmin and argmax: 4 (more registers cost them
// occupancy); min and max of floats: 16; the others 8 (docs/performance.md, "rows_vec_loads").
int rows_vec_loads(ReduceOp op, DType in) noexcept;
// Outputs of kWideFinishStates or more splits are finished by a block each.
constexpr std::int64_t kWideFinishStates = 256;
bool wide_finish(const ReducePlan& plan) noexcept;
// The rows classes' split outputs are finished inside the first pass (plan.one_pass): the unit that
// stores an output's last state (an atomic counter per output, zero before the launch and set back to
// zero by that unit) combines the S states exactly as the finish kernel would, in the same order, so
// the bits do not change; only the second launch goes (on an H100 the finish kernel took 3-4 us of
// a 16 MiB reduction's 10). A block finishes wide outputs, so only tiles (a block per unit) take it
// there. The columns class keeps its finish kernel (a thread per unit and state layouts of its own).
bool one_pass_finish(const ReducePlan& plan) noexcept;

// The kernels' one argument (by value). Every field is 8 bytes:
//   in, out, part                  addresses: input, output, partial states (S > 1)
//   cnt                            the one-pass finish's counters, one per output, zero (0: none)
//   M, N, S, chunk, dof, final     dof = N - correction; final: the unit writes the result itself
//   nk, nr                         axis counts (a reduced list of one axis of size N when nr = 0)
//   kshape[8], kin[8], kout[8]     kept axes
//   rshape[8], rin[8]              reduced axes
struct ReduceArgs {
  std::uint64_t in = 0, out = 0, part = 0, cnt = 0;
  std::int64_t M = 0, N = 0, S = 0, chunk = 0;
  double dof = 0;  // N - correction (the correction may be fractional)
  std::int64_t final = 0, nk = 0, nr = 0;
  std::int64_t kshape[kMaxReduceDims]{}, kin[kMaxReduceDims]{}, kout[kMaxReduceDims]{};
  std::int64_t rshape[kMaxReduceDims]{}, rin[kMaxReduceDims]{};
};
static_assert(sizeof(ReduceArgs) == 8 * (12 + 5 * kMaxReduceDims));
ReduceArgs reduce_args(const ReducePlan& plan, std::uint64_t part, bool final);

// Blocks for the first pass (units / warps or threads per block, a block per unit in tiles; capped:
// the kernels stride; plan.block threads each) and for the finish pass (a warp per output, a block
// when wide; columns: a block per 32 outputs, or a thread per output up to kColsThinFinishStates).
unsigned reduce_grid(const ReducePlan& plan) noexcept;
unsigned finish_grid(const ReducePlan& plan) noexcept;

// ---- cumulative sum ----

enum class ScanFamily : std::uint8_t { lines, tiles };

struct ScanPlan {
  DType in_dtype = DType::float32, out_dtype = DType::float32;
  const std::byte* in = nullptr;
  std::byte* out = nullptr;
  std::int64_t L = 0, sa = 0, so = 0;  // length along the axis, input and output strides there
  std::int64_t M = 1;                  // lines
  int nd = 0;                          // the other axes, merged
  ReduceDim dims[kMaxReduceDims]{};
  bool include_initial = false;
  bool on_device = true;
  ScanFamily family = ScanFamily::lines;
  ReduceOp op = ReduceOp::sum;  // sum or prod
};

// Checks as the CPU backend does (same ValueErrors) and plans; op: sum or prod.
ScanPlan plan_scan(const View& in, int axis, const View& out, bool include_initial, int multiprocessors,
                   ReduceOp op = ReduceOp::sum);

// Fields as ReduceArgs: in, out, M, L, sa, so, first (1 with include_initial), nd, shape[8], in[8], out[8].
struct ScanArgs {
  std::uint64_t in = 0, out = 0;
  std::int64_t M = 0, L = 0, sa = 0, so = 0, first = 0, nd = 0;
  std::int64_t shape[kMaxReduceDims]{}, sin[kMaxReduceDims]{}, sout[kMaxReduceDims]{};
};
static_assert(sizeof(ScanArgs) == 8 * (8 + 3 * kMaxReduceDims));
ScanArgs scan_args(const ScanPlan& plan);
unsigned scan_grid(const ScanPlan& plan) noexcept;

}  // namespace xp::detail::cuda
