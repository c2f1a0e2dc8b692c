// Reductions and cumulative sums on a CUDA device: the plans (reduce_plan.hpp). Which kernel class,
// how many splits of how many elements, which blocks: a function of the request's shapes, strides,
// dtypes and the device's multiprocessors and occupancy alone. The source the plans launch is
// reduce_source.cpp's.
#include "backend/cuda/reduce_plan.hpp"

#include <algorithm>

#include "backend/cuda/ew_source.hpp"
#include "xp/error.hpp"

namespace xp::detail::cuda {
namespace {

using i64 = std::int64_t;

bool is_float(DType d) {
  return kind(d) == DTypeKind::floating;
}
bool is_intlike(DType d) {  // bool and the integers
  return !is_float(d);
}

// ---- geometry (the request checked by check_reduce_request, as every backend does) ----

int simplify(ReduceDim* d, int n) noexcept {
  return simplify_reduce_dims(d, n);
}

i64 ceil_div(i64 a, i64 b) {
  return (a + b - 1) / b;
}

i64 abs64(i64 v) {
  return v < 0 ? -v : v;
}

}  // namespace

i64 reduce_int_moments_run(ReduceOp op, DType d) noexcept {
  if ((op != ReduceOp::var && op != ReduceOp::std) || !is_intlike(d) || itemsize(d) > 2) return 0;
  // 8 bits: S < 2^24 and Q < 2^32 over 2^16 rows; 16 bits: S < 2^31 and Q < 2^47 over 2^15 rows;
  // n Q - S^2 < 2^63 in both.
  return itemsize(d) == 1 ? i64{1} << 16 : i64{1} << 15;
}

i64 reduce_state_bytes(ReduceOp op, DType d) noexcept {
  // reduce_source's accumulators: integers and float64 in 8 bytes, the other floats in 4.
  const i64 acc = is_intlike(d) || d == DType::float64 ? 8 : 4;
  switch (op) {
    case ReduceOp::var:
    case ReduceOp::std:
      return 4 * acc + 8;  // (h, l, q, c, n)
    case ReduceOp::sum:
    case ReduceOp::mean:
      if (is_intlike(d) || d == DType::float16 || d == DType::bfloat16) return 8;  // a u64, or xp_sum_wide's double
      return 2 * acc;                                                              // xp_sum_comp's compensated pair
    case ReduceOp::prod:
      return acc;
    case ReduceOp::min:
    case ReduceOp::max:
      return d == DType::float16 || d == DType::bfloat16 ? 4 : static_cast<i64>(itemsize(d));
    case ReduceOp::argmin:
    case ReduceOp::argmax:
      return 16;  // (value, i64 index)
    case ReduceOp::any:
    case ReduceOp::all:
      return 4;
  }
  return kReduceStateBytes;
}

int cols_vec_bytes(ReduceOp op, DType d) noexcept {
  const bool half = d == DType::float16 || d == DType::bfloat16;
  const bool heavy = op == ReduceOp::argmin || op == ReduceOp::argmax || op == ReduceOp::var || op == ReduceOp::std;
  return half && heavy ? 8 : 16;
}

const char* family_name(ReduceFamily f) noexcept {
  switch (f) {
    case ReduceFamily::rows_vector:
      return "rows_vector";
    case ReduceFamily::rows_strided:
      return "rows_strided";
    case ReduceFamily::columns:
      return "columns";
  }
  return "?";
}

ReducePlan plan_reduce(ReduceOp op, const View& in, std::span<const int> axes, const View& out, double correction,
                       int multiprocessors, std::int64_t resident_warps) {
  check_reduce_request(op, in, axes, out);
  bool reduced[kMaxDims] = {};
  for (const int a : axes) reduced[a] = true;
  ReducePlan p;
  p.op = op;
  p.in_dtype = in.dtype;
  p.out_dtype = out.dtype;
  p.in = in.data;
  p.out = out.data;
  p.correction = correction;
  const i64 isz = static_cast<i64>(itemsize(in.dtype));
  const i64 osz = static_cast<i64>(itemsize(out.dtype));
  bool aligned = reinterpret_cast<std::uintptr_t>(in.data) % static_cast<std::uintptr_t>(isz) == 0 &&
                 reinterpret_cast<std::uintptr_t>(out.data) % static_cast<std::uintptr_t>(osz) == 0;
  ReduceDim kept[kMaxDims], red[kMaxDims];
  int nk = 0, nr = 0, ko = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (in.shape[d] != 1 && in.strides[d] % isz != 0) aligned = false;
    if (reduced[d]) {
      red[nr++] = {in.shape[d], in.strides[d], 0};
      p.N *= in.shape[d];
    } else {
      if (in.shape[d] != 1 && out.strides[ko] % osz != 0) aligned = false;
      kept[nk++] = {in.shape[d], in.strides[d], out.strides[ko]};
      p.M *= in.shape[d];
      ++ko;
    }
  }
  if (p.M == 0) return p;  // nothing to compute
  nk = simplify(kept, nk);
  if (p.N == 0) {
    nr = 1;
    red[0] = {0, 0, 0};
  } else {
    nr = simplify(red, nr);
    if (nr == 0) red[nr++] = {1, 0, 0};  // one element per output
  }
  if (nk > kMaxReduceDims || nr > kMaxReduceDims || !aligned) {
    p.on_device = false;
    return p;
  }
  p.nk = nk;
  p.nr = nr;
  std::copy(kept, kept + nk, p.kept);
  std::copy(red, red + nr, p.red);

  // The kernel class.
  const ReduceDim& ri = p.red[nr - 1];
  if (p.N < kMinWarpElements) {
    p.family = ReduceFamily::columns;
  } else if (nr == 1 && ri.in == isz) {
    bool vec = reinterpret_cast<std::uintptr_t>(in.data) % 16 == 0;
    for (int k = 0; k < nk; ++k) vec = vec && p.kept[k].in % 16 == 0;
    p.family = vec ? ReduceFamily::rows_vector : ReduceFamily::rows_strided;
  } else if (nk > 0 && abs64(p.kept[nk - 1].in) <= abs64(ri.in)) {
    p.family = ReduceFamily::columns;
  } else {
    p.family = ReduceFamily::rows_strided;
  }
  if (p.family == ReduceFamily::columns && nr == 1 && nk > 0) {
    // Columns in vectors: W adjacent outputs per thread, a 16-byte vector of them per row.
    const i64 W = 16 / isz;
    bool vec = p.kept[nk - 1].in == isz && p.kept[nk - 1].size % W == 0 && ri.in % 16 == 0 &&
               reinterpret_cast<std::uintptr_t>(in.data) % 16 == 0;
    for (int k = 0; k + 1 < nk; ++k) vec = vec && p.kept[k].in % 16 == 0;
    p.cols_vec = vec;
  }

  // Splits. Rows: one unit per warp the device runs at once (resident_warps, the first-pass kernel's
  // occupancy; 64 per SM when not given), one wave in which every warp streams an equal share. More
  // units only add partial states for the finish pass to combine, and a wave not filled by the last
  // units costs a share of the time: on an H200, sum of 2^28 float32 ran at 2.0 TB/s with four units
  // per resident warp and a warp finishing each output. Columns: about four units per thread of a
  // full device (2048 per SM). No chunk below a minimum. A function of M, N, the class, the
  // multiprocessor count and the occupancy alone.
  // Tiles: with fewer outputs than multiprocessors, a rows_vector unit is read by a block (one unit
  // per resident block, none below 2048 elements), as cub::DeviceReduce reads: a GiB 2.7% faster
  // than a warp per unit on an H200 (bench/nvcc/xp_sum_kernels.cu).
  const i64 sms = std::max(1, multiprocessors);
  const bool warp = p.family != ReduceFamily::columns;
  const bool arg = op == ReduceOp::argmin || op == ReduceOp::argmax;
  p.tiles = p.family == ReduceFamily::rows_vector && (p.M < sms || (p.N * isz >= kTileRowBytes && !arg));
  const i64 warps = resident_warps > 0 ? resident_warps : sms * 64;
  const i64 target = p.tiles      ? std::max<i64>(1, warps / (kReduceBlock / 32))
                     : warp       ? warps
                     : p.cols_vec ? warps * 32 * kColsVecWaves
                                  : sms * 8192;
  const i64 min_chunk = warp ? 2048 : 64;
  if (p.N == 0) {
    p.splits = 1;
    p.chunk = 0;
    return p;
  }
  i64 S = 1;
  if (p.cols_vec) {
    // Whole waves: at most `target` threads, each streaming an equal run of rows. Runs of at least
    // 64 rows, or of 16 where 64 would leave fewer than kColsVecMinThreads threads per SM in an input
    // of a MiB or more (below, a second pass costs more than the threads it adds): a short,
    // wide matrix (256 rows of 64 KiB) in runs of 64 rows kept 16384 threads, under half a block per
    // SM of an H100, and lost to the libraries that spread its rows wider.
    const i64 groups = p.M / (cols_vec_bytes(op, p.in_dtype) / isz);
    const i64 most = target / groups;
    S = std::max<i64>(1, std::min(most, ceil_div(p.N, min_chunk)));
    if (groups * S < sms * kColsVecMinThreads && p.M * p.N * isz >= (i64{1} << 20))
      S = std::max<i64>(1, std::min(most, ceil_div(p.N, 16)));
    // The states a split writes and its finish reads back (2 S state bytes an output) stay within
    // 1 / kColsStateShare of what the first pass reads (N isz): over 64 rows of float16, the
    // variance's four splits moved 2.5 times the input's bytes and took 0.050 ms for 16 MiB on an
    // H100, where one kernel reading it once took 0.015 ms. The heavy ops of 16-bit floats keep
    // more splits (a half share: at a quarter they ran 1.2x slower, the others 0.7-0.8x as long).
    const bool half = p.in_dtype == DType::float16 || p.in_dtype == DType::bfloat16;
    const bool heavy = half && (arg || op == ReduceOp::var || op == ReduceOp::std);
    const i64 share = heavy ? kColsStateShareHeavy : kColsStateShare;
    S = std::max<i64>(1, std::min(S, p.N * isz / (2 * share * reduce_state_bytes(op, p.in_dtype))));
  } else if (p.M < target) {
    S = std::max<i64>(1, std::min(ceil_div(target, p.M), ceil_div(p.N, min_chunk)));
  }
  if (const i64 run = reduce_int_moments_run(op, p.in_dtype); p.cols_vec && run > 0)
    S = std::max(S, ceil_div(p.N, run));  // xp_cols_vec_int_moments: no thread past `run` rows
  i64 chunk = ceil_div(p.N, S);
  if (p.family == ReduceFamily::rows_vector) {
    // Whole vectors for the lanes (a warp) or the threads (tiles): chunk starts stay 16-byte aligned.
    const i64 g = (p.tiles ? kReduceBlock : 32) * (16 / isz);
    chunk = ceil_div(chunk, g) * g;
  }
  p.chunk = chunk;
  p.splits = ceil_div(p.N, chunk);
  p.rows_each =
      p.family == ReduceFamily::rows_vector && !p.tiles && p.splits == 1 && p.nk <= 1 && p.N * isz <= kRowsEachMaxBytes;
  if (p.cols_vec && p.M / (cols_vec_bytes(op, p.in_dtype) / isz) * p.splits < sms * kReduceBlock)
    p.block = kColsSmallBlock;
  p.one_pass = one_pass_finish(p);
  return p;
}

ReducePlan plan_fused_reduce(ReduceOp op, const FusedProgram& p, std::span<const int> axes, const View& out,
                             double correction, int multiprocessors, std::int64_t resident_warps) {
  if (!value_program(p)) throw ValueError("reduce: not a fused value program");
  const DType t = p.code[static_cast<std::size_t>(p.output_instr[0])].dtype;
  std::vector<i64> strides(static_cast<std::size_t>(std::max(p.ndim, 1)), 0);
  i64 step = static_cast<i64>(itemsize(t));
  for (int d = p.ndim - 1; d >= 0; --d) {
    strides[static_cast<std::size_t>(d)] = step;
    step *= p.shape[d];
  }
  View in;
  in.dtype = t;
  in.ndim = p.ndim;
  in.shape = p.shape;
  in.strides = strides.data();
  const std::uintptr_t base = value_vector_aligned(p) ? 16 : itemsize(t);
  in.data = reinterpret_cast<std::byte*>(base);
  ReducePlan plan = plan_reduce(op, in, axes, out, correction, multiprocessors, resident_warps);
  plan.in = nullptr;
  return plan;
}

int rows_vec_loads(ReduceOp op, DType in) noexcept {
  if (op == ReduceOp::argmin || op == ReduceOp::argmax) return 4;
  if ((op == ReduceOp::min || op == ReduceOp::max) && is_float(in)) return 16;
  return 8;
}

bool wide_finish(const ReducePlan& p) noexcept {
  return p.splits >= kWideFinishStates;
}

bool one_pass_finish(const ReducePlan& p) noexcept {
  return p.splits > 1 && p.family != ReduceFamily::columns && (p.tiles || !wide_finish(p));
}

ReduceArgs reduce_args(const ReducePlan& p, std::uint64_t part, bool final) {
  ReduceArgs a;
  a.in = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p.in));
  a.out = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p.out));
  a.part = part;
  a.M = p.M;
  a.N = p.N;
  a.S = p.splits;
  a.chunk = p.chunk;
  a.dof = static_cast<double>(p.N) - p.correction;
  a.final = final ? 1 : 0;
  a.nk = p.nk;
  a.nr = p.nr;
  for (int k = 0; k < p.nk; ++k) {
    a.kshape[k] = p.kept[k].size;
    a.kin[k] = p.kept[k].in;
    a.kout[k] = p.kept[k].out;
  }
  for (int k = 0; k < p.nr; ++k) {
    a.rshape[k] = p.red[k].size;
    a.rin[k] = p.red[k].in;
  }
  return a;
}

namespace {
constexpr i64 kMaxGrid = i64{1} << 20;  // the kernels stride over what one launch does not cover
}

unsigned reduce_grid(const ReducePlan& p) noexcept {
  const i64 per_block = p.family == ReduceFamily::columns ? p.block : p.tiles ? 1 : kReduceBlock / 32;
  const i64 units =
      p.cols_vec ? p.units() / (cols_vec_bytes(p.op, p.in_dtype) / static_cast<i64>(itemsize(p.in_dtype))) : p.units();
  return static_cast<unsigned>(std::clamp<i64>(ceil_div(std::max<i64>(units, 1), per_block), 1, kMaxGrid));
}

unsigned finish_grid(const ReducePlan& p) noexcept {
  const i64 per_block = wide_finish(p)                      ? 1
                        : p.family != ReduceFamily::columns ? kReduceBlock / 32
                        : p.splits <= kColsThinFinishStates ? kReduceBlock
                                                            : 32;
  return static_cast<unsigned>(std::clamp<i64>(ceil_div(std::max<i64>(p.M, 1), per_block), 1, kMaxGrid));
}

// ---- cumulative sum and product ----

ScanPlan plan_scan(const View& in, int axis, const View& out, bool include_initial, int multiprocessors, ReduceOp op) {
  check_scan_request(op, in, axis, out, include_initial);
  ScanPlan p;
  p.op = op;
  p.in_dtype = in.dtype;
  p.out_dtype = out.dtype;
  p.in = in.data;
  p.out = out.data;
  p.include_initial = include_initial;
  p.L = in.shape[axis];
  p.sa = in.strides[axis];
  p.so = out.strides[axis];
  const i64 isz = static_cast<i64>(itemsize(in.dtype)), osz = static_cast<i64>(itemsize(out.dtype));
  bool aligned = reinterpret_cast<std::uintptr_t>(in.data) % static_cast<std::uintptr_t>(isz) == 0 &&
                 reinterpret_cast<std::uintptr_t>(out.data) % static_cast<std::uintptr_t>(osz) == 0 &&
                 p.sa % isz == 0 && p.so % osz == 0;
  ReduceDim dims[kMaxDims];
  int nd = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (d == axis) continue;
    dims[nd++] = {in.shape[d], in.strides[d], out.strides[d]};
    p.M *= in.shape[d];
    if (in.shape[d] != 1 && (in.strides[d] % isz != 0 || out.strides[d] % osz != 0)) aligned = false;
  }
  if (p.M == 0) return p;
  nd = simplify(dims, nd);
  if (nd > kMaxReduceDims || !aligned) {
    p.on_device = false;
    return p;
  }
  p.nd = nd;
  std::copy(dims, dims + nd, p.dims);
  // Lines when they fill the device by themselves (or are short); else a block per line.
  const i64 sms = std::max(1, multiprocessors);
  p.family = (p.M >= sms * 128 || p.L < 64) ? ScanFamily::lines : ScanFamily::tiles;
  return p;
}

ScanArgs scan_args(const ScanPlan& p) {
  ScanArgs a;
  a.in = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p.in));
  a.out = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p.out));
  a.M = p.M;
  a.L = p.L;
  a.sa = p.sa;
  a.so = p.so;
  a.first = p.include_initial ? 1 : 0;
  a.nd = p.nd;
  for (int k = 0; k < p.nd; ++k) {
    a.shape[k] = p.dims[k].size;
    a.sin[k] = p.dims[k].in;
    a.sout[k] = p.dims[k].out;
  }
  return a;
}

unsigned scan_grid(const ScanPlan& p) noexcept {
  const i64 blocks = p.family == ScanFamily::lines ? ceil_div(std::max<i64>(p.M, 1), kReduceBlock) : p.M;
  return static_cast<unsigned>(std::clamp<i64>(blocks, 1, kMaxGrid));
}

}  // namespace xp::detail::cuda
