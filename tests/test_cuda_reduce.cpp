// Device reductions and cumulative sums (white-box: src/backend/cuda/reduce_source).
//
// Without a GPU: the planning maps axes to the documented kernel classes, splits depend on sizes and
// the multiprocessor count only, bad requests get the CPU backend's errors, the argument carries
// the geometry, and the generated source of every (op, dtype, kernel class) and every scan compiles
// with NVRTC for sm_90 with each kernel present.
// With a GPU (CudaReduceGpu.*): every op and dtype over axis sets, views, keepdims, empty arrays,
// NaN cases and a large n against the CPU backend: integers, min/max/argmin/argmax/any/all and
// cumulative sums bit for bit (NaN as a class), float sums, means, var and std within the bound of
// docs/semantics.md; the same input gives the same bits twice.
//
// Every test process gets its own empty kernel cache folder, as in test_compile.cpp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/ew_source.hpp"
#include "backend/cuda/reduce_source.hpp"
#include "nvrtc_answers.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::DType;
using xp::detail::ReduceOp;
using xp::detail::View;
namespace cg = xp::detail::cuda;
using i64 = std::int64_t;

const xp_test::ProcessCache g_process_cache;  // this process's kernel cache

constexpr DType kDTypes[] = {DType::bool_,    DType::int8,    DType::int16,  DType::int32,  DType::int64,
                             DType::uint8,    DType::uint16,  DType::uint32, DType::uint64, DType::float16,
                             DType::bfloat16, DType::float32, DType::float64};
constexpr int kH200 = 132;  // multiprocessors of the planning examples

const char* op_name(ReduceOp op) {
  return xp::detail::reduce_op_name(op);
}

// A view of a shape over an address that is never read (planning only); strides in elements, C
// order when empty.
struct FakeView {
  std::vector<i64> shape, strides;
  View v;
  FakeView(DType t, std::vector<i64> shape_, std::vector<i64> elem_strides = {}, std::uintptr_t address = 1 << 20)
      : shape(std::move(shape_)) {
    const i64 isz = static_cast<i64>(xp::itemsize(t));
    strides.resize(shape.size());
    i64 s = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      strides[d] = (elem_strides.empty() ? s : elem_strides[d]) * isz;
      s *= shape[d];
    }
    v.data = reinterpret_cast<std::byte*>(address);
    v.dtype = t;
    v.ndim = static_cast<int>(shape.size());
    v.shape = shape.data();
    v.strides = strides.data();
  }
  FakeView(const FakeView&) = delete;
};

// The output view of reducing `in` over sorted axes (C order).
std::unique_ptr<FakeView> out_for(const FakeView& in, std::vector<int> axes, DType t,
                                  std::uintptr_t address = 1 << 24) {
  std::vector<i64> shape;
  for (int d = 0; d < in.v.ndim; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) shape.push_back(in.shape[d]);
  return std::make_unique<FakeView>(t, shape, std::vector<i64>{}, address);
}

cg::ReducePlan plan(ReduceOp op, const FakeView& in, std::vector<int> axes, int sms = kH200) {
  const auto out = out_for(in, axes, xp::detail::reduce_result_dtype(op, in.v.dtype));
  return cg::plan_reduce(op, in.v, axes, out->v, 0, sms);
}

// Every split is non-empty and together they cover the N elements.
void expect_cover(const cg::ReducePlan& p) {
  ASSERT_GE(p.splits, 1);
  EXPECT_GE(p.chunk * p.splits, p.N);
  EXPECT_LT(p.chunk * (p.splits - 1), p.N);
}

}  // namespace

// ---- planning (no GPU) ----

TEST(CudaReducePlan, FullContiguousSumIsRowsVectorInTilesWithAFullDeviceOfBlocks) {
  FakeView in(DType::float32, {i64{1} << 28});  // 1 GiB
  const auto p = plan(ReduceOp::sum, in, {0});
  EXPECT_TRUE(p.on_device);
  EXPECT_EQ(p.family, cg::ReduceFamily::rows_vector) << cg::family_name(p.family);
  EXPECT_TRUE(p.tiles);  // one output, fewer than the multiprocessors: a block per unit
  EXPECT_EQ(p.M, 1);
  EXPECT_EQ(p.N, i64{1} << 28);
  EXPECT_EQ(p.nk, 0);
  EXPECT_EQ(p.nr, 1);
  expect_cover(p);
  EXPECT_EQ(p.chunk % 1024, 0);                                    // whole float4 vectors for the 256 threads
  EXPECT_LE(p.splits, kH200 * 8);                                  // one unit per block a full device holds (8 per SM)
  EXPECT_GE(p.splits, kH200 * 8 * 0.95);                           // and about that many
  EXPECT_EQ(cg::reduce_grid(p), static_cast<unsigned>(p.splits));  // a block per unit
  EXPECT_TRUE(cg::wide_finish(p));                                 // a thousand states: a block finishes the one output
  EXPECT_EQ(cg::finish_grid(p), 1u);
  EXPECT_TRUE(p.one_pass);  // the block that stores the last state, in the same launch
  EXPECT_TRUE(cg::one_pass_finish(p));
  EXPECT_EQ(cg::reduce_kernel_name(p.family, p.tiles), "xp_rows_tile");
  // With the kernel's occupancy given (5 blocks of 8 warps per SM), one unit per resident block.
  {
    const auto out = out_for(in, {0}, DType::float32);
    const auto r = cg::plan_reduce(ReduceOp::sum, in.v, std::vector<int>{0}, out->v, 0, kH200, kH200 * 40);
    expect_cover(r);
    EXPECT_TRUE(r.tiles);
    EXPECT_LE(r.splits, kH200 * 5);
    EXPECT_GE(r.splits, kH200 * 5 * 0.95);
    EXPECT_EQ(cg::reduce_grid(r), static_cast<unsigned>(r.splits));
  }
  // The same request on a device of another size splits differently, on the same one identically.
  FakeView other(DType::float32, {i64{1} << 28}, {}, 1 << 12);
  const auto q = plan(ReduceOp::sum, other, {0});
  EXPECT_EQ(q.splits, p.splits);
  EXPECT_EQ(q.chunk, p.chunk);
  EXPECT_NE(plan(ReduceOp::sum, in, {0}, 16).splits, p.splits);
}

// A warp per row without index arithmetic exactly when a rows_vector plan has one kept axis, one
// split and no tiles; the general warp kernel otherwise.
TEST(CudaReducePlan, WholeRowsOfOneKeptAxisTakeTheWarpKernelWithoutIndexArithmetic) {
  FakeView rows(DType::float32, {262144, 1024});
  auto p = plan(ReduceOp::sum, rows, {1});
  EXPECT_EQ(p.family, cg::ReduceFamily::rows_vector);
  EXPECT_FALSE(p.tiles);
  EXPECT_EQ(p.splits, 1);
  EXPECT_FALSE(p.one_pass);  // nothing to finish
  EXPECT_TRUE(p.rows_each);
  EXPECT_EQ(cg::reduce_kernel_name(p), "xp_rows_each");
  EXPECT_EQ(cg::reduce_grid(p), 262144u / 8);
  FakeView split(DType::float32, {1000, 4096});  // two splits per row
  p = plan(ReduceOp::sum, split, {1});
  EXPECT_EQ(p.splits, 2);
  EXPECT_FALSE(p.rows_each);
  EXPECT_EQ(cg::reduce_kernel_name(p), "xp_rows_vec");
  FakeView two_kept(DType::float32, {8, 40, 64}, {40 * 64, 2 * 64, 1});  // [:, ::2]: kept axes that do not merge
  p = plan(ReduceOp::sum, two_kept, {2});
  EXPECT_EQ(p.family, cg::ReduceFamily::rows_vector);
  EXPECT_EQ(p.nk, 2);
  EXPECT_FALSE(p.tiles);
  EXPECT_FALSE(p.rows_each);
  FakeView whole(DType::float32, {i64{1} << 20});
  p = plan(ReduceOp::sum, whole, {0});
  EXPECT_TRUE(p.tiles);
  EXPECT_FALSE(p.rows_each);
  FakeView cols(DType::float32, {4096, 1024});
  EXPECT_FALSE(plan(ReduceOp::sum, cols, {0}).rows_each);
  FakeView long_rows(DType::float32, {16384, 16384});  // argmax keeps a warp per row of 64 KiB
  p = plan(ReduceOp::argmax, long_rows, {1});
  EXPECT_FALSE(p.tiles);
  EXPECT_EQ(p.splits, 1);
  EXPECT_FALSE(p.rows_each);
  FakeView rows_16k(DType::float32, {65536, 4096});
  EXPECT_TRUE(plan(ReduceOp::sum, rows_16k, {1}).rows_each);
}

TEST(CudaReducePlan, InnerAxesAreRowsOuterAxesColumnsMiddleAxesStrided) {
  FakeView a(DType::float32, {1000, 4096});
  auto p = plan(ReduceOp::sum, a, {1});
  EXPECT_EQ(p.family, cg::ReduceFamily::rows_vector);
  EXPECT_EQ(p.M, 1000);
  EXPECT_EQ(p.N, 4096);
  EXPECT_FALSE(p.tiles);   // more outputs than multiprocessors: a warp per unit
  EXPECT_EQ(p.splits, 2);  // ceil(132 * 64 / 1000) = 9, at most N / 2048 = 2
  EXPECT_EQ(cg::reduce_kernel_name(p.family, p.tiles), "xp_rows_vec");
  EXPECT_EQ(cg::reduce_grid(p), 1000u * 2 / 8);
  EXPECT_FALSE(cg::wide_finish(p));
  EXPECT_EQ(cg::finish_grid(p), 1000u / 8);  // a warp per output
  EXPECT_TRUE(p.one_pass);                   // the warp that stores the last state, in the same launch
  expect_cover(p);

  p = plan(ReduceOp::max, a, {0});
  EXPECT_EQ(p.family, cg::ReduceFamily::columns);
  EXPECT_TRUE(p.cols_vec);  // four adjacent outputs per thread
  EXPECT_EQ(p.M, 4096);
  EXPECT_EQ(p.N, 1000);
  // 132 * 64 * 32 threads / 1024 per split = 264, at most ceil(1000 / 64) = 16; 1024 * 16 threads
  // are fewer than 512 per SM (kColsVecMinThreads), so runs of 16 rows: ceil(1000 / 16) = 63.
  EXPECT_EQ(p.splits, 63);
  expect_cover(p);
  EXPECT_EQ(cg::reduce_grid(p), static_cast<unsigned>(1024 * 63 / 256));
  EXPECT_EQ(cg::finish_grid(p), 4096u / 32);  // a block per 32 outputs
  EXPECT_FALSE(p.one_pass);                   // columns keep their finish kernel
  EXPECT_EQ(cg::reduce_kernel_name(p), "xp_cols_vec");

  // A whole strided reduction: thousands of warp states, finished by a block in a kernel of its own
  // (a warp unit cannot run the block finish); a block per unit (tiles) can.
  FakeView strided(DType::float32, {i64{1} << 24}, {2});
  auto q = plan(ReduceOp::sum, strided, {0});
  EXPECT_EQ(q.family, cg::ReduceFamily::rows_strided);
  EXPECT_TRUE(cg::wide_finish(q));
  EXPECT_FALSE(q.one_pass);
  FakeView few_rows(DType::float32, {4, i64{1} << 22});
  q = plan(ReduceOp::max, few_rows, {1});
  EXPECT_TRUE(q.tiles);
  EXPECT_TRUE(cg::wide_finish(q));
  EXPECT_TRUE(q.one_pass);

  FakeView b(DType::float64, {8, 16, 32});   // reduce 0 and 2: inner stride 8 bytes, kept stride 256
  p = plan(ReduceOp::argmax, b, {0, 1, 2});  // merged into one contiguous run
  EXPECT_EQ(p.family, cg::ReduceFamily::rows_vector);
  EXPECT_EQ(p.nr, 1);
  p = plan(ReduceOp::mean, b, {0, 2});
  EXPECT_EQ(p.family, cg::ReduceFamily::rows_strided);
  EXPECT_EQ(p.nr, 2);
  EXPECT_EQ(p.nk, 1);
  EXPECT_EQ(p.red[0].size, 8);
  EXPECT_EQ(p.red[0].in, 16 * 32 * 8);
  EXPECT_EQ(p.red[1].size, 32);
  EXPECT_EQ(p.red[1].in, 8);
  EXPECT_EQ(p.kept[0].in, 32 * 8);
  EXPECT_EQ(p.kept[0].out, 8);

  // A row length that breaks 16-byte alignment of the rows: element by element.
  FakeView c(DType::float32, {10, 1001});
  EXPECT_EQ(plan(ReduceOp::sum, c, {1}).family, cg::ReduceFamily::rows_strided);
  // A misaligned start (4-byte aligned, not 16): element by element.
  FakeView d(DType::float32, {5000}, {}, (1 << 20) + 4);
  EXPECT_EQ(plan(ReduceOp::sum, d, {0}).family, cg::ReduceFamily::rows_strided);
  // Every second element of a full reduction: strided.
  FakeView e(DType::int32, {5000}, {2});
  EXPECT_EQ(plan(ReduceOp::sum, e, {0}).family, cg::ReduceFamily::rows_strided);
}

// Columns in vectors exactly when one axis is reduced, the innermost kept axis is contiguous and a
// multiple of 16 / itemsize long, and every row and the start are 16-byte aligned; then at most one
// thread per resident thread, each with an equal run of rows.
TEST(CudaReducePlan, ColumnsInVectorsForAlignedContiguousOutputs) {
  FakeView big(DType::float32, {16384, 16384});
  const auto out = out_for(big, {0}, DType::float32);
  // The vector kernel's occupancy given: 6 blocks of 8 warps per SM, 202752 threads.
  auto p = cg::plan_reduce(ReduceOp::sum, big.v, std::vector<int>{0}, out->v, 0, kH200, kH200 * 48);
  EXPECT_EQ(p.family, cg::ReduceFamily::columns);
  EXPECT_TRUE(p.cols_vec);
  EXPECT_EQ(p.splits, 202752 / 4096);  // floor: never a second, partial wave
  EXPECT_LE(p.M / 4 * p.splits, kH200 * 48 * 32);
  expect_cover(p);
  EXPECT_EQ(cg::reduce_grid(p), static_cast<unsigned>((4096 * p.splits + 255) / 256));
  EXPECT_FALSE(cg::wide_finish(p));
  EXPECT_EQ(cg::finish_grid(p), 16384u / 32);
  // More adjacent outputs than resident threads: one split, each thread writing its outputs.
  FakeView wide(DType::int8, {100, 1 << 24});
  p = plan(ReduceOp::max, wide, {0});
  EXPECT_TRUE(p.cols_vec);
  EXPECT_EQ(p.splits, 1);
  EXPECT_EQ(cg::reduce_grid(p), static_cast<unsigned>((1 << 24) / 16 / 256));
  // Few outputs, many rows: many splits, finished by a block per output.
  FakeView tall(DType::float64, {1 << 20, 16});
  p = plan(ReduceOp::var, tall, {0});
  EXPECT_TRUE(p.cols_vec);
  EXPECT_EQ(p.splits, (1 << 20) / 64);  // chunks of at least 64 rows
  EXPECT_TRUE(cg::wide_finish(p));
  EXPECT_EQ(cg::finish_grid(p), 16u);
  // var and std of small integers add exact integer sums: no thread reads more than 2^16 rows of 8-bit
  // values (2^15 of 16-bit), however few the splits would otherwise be.
  for (const auto& [t, run] : {std::pair{DType::int8, i64{1} << 16}, std::pair{DType::uint16, i64{1} << 15}}) {
    EXPECT_EQ(cg::reduce_int_moments_run(ReduceOp::var, t), run);
    EXPECT_EQ(cg::reduce_int_moments_run(ReduceOp::std, t), run);
    EXPECT_EQ(cg::reduce_int_moments_run(ReduceOp::mean, t), 0);
    const i64 w = 16 / static_cast<i64>(xp::itemsize(t));
    FakeView deep(t, {3 * run + 5, w * 300000});  // 300000 threads' outputs: one split before the cap
    for (ReduceOp op : {ReduceOp::var, ReduceOp::std}) {
      p = plan(op, deep, {0});
      EXPECT_TRUE(p.cols_vec);
      EXPECT_EQ(p.splits, 4);
      EXPECT_LE(p.chunk, run);
      expect_cover(p);
    }
    EXPECT_EQ(plan(ReduceOp::sum, deep, {0}).splits, 1);
  }
  EXPECT_EQ(cg::reduce_int_moments_run(ReduceOp::var, DType::int32), 0);
  EXPECT_EQ(cg::reduce_int_moments_run(ReduceOp::var, DType::float16), 0);
  EXPECT_EQ(cg::reduce_int_moments_run(ReduceOp::var, DType::bool_), i64{1} << 16);
  // Kept axes that do not merge (the middle one reduced): still vectors, the innermost contiguous.
  FakeView mid(DType::float16, {3, 40, 32});
  p = plan(ReduceOp::mean, mid, {1});
  EXPECT_TRUE(p.cols_vec);
  EXPECT_EQ(p.nk, 2);
  EXPECT_EQ(p.splits, 1);
  // Not in vectors: an innermost kept length that is not a multiple of 16 bytes' elements (int8:
  // 16), rows not 16-byte aligned, a start not 16-byte aligned, two reduced axes, or a kept axis
  // that is not contiguous.
  FakeView odd(DType::int8, {1000, 4100});
  p = plan(ReduceOp::sum, odd, {0});
  EXPECT_EQ(p.family, cg::ReduceFamily::columns);
  EXPECT_FALSE(p.cols_vec);
  EXPECT_EQ(cg::reduce_kernel_name(p), "xp_cols");
  EXPECT_TRUE(plan(ReduceOp::sum, FakeView(DType::float32, {1000, 4100}), {0}).cols_vec);
  EXPECT_FALSE(plan(ReduceOp::sum, FakeView(DType::float32, {1000, 4100}, {}, (1 << 20) + 4), {0}).cols_vec);
  EXPECT_FALSE(plan(ReduceOp::sum, FakeView(DType::float32, {1000, 64}, {66, 1}), {0}).cols_vec);
  FakeView two(DType::float32, {4, 10, 8, 64});
  p = plan(ReduceOp::sum, two, {0, 2});
  EXPECT_EQ(p.family, cg::ReduceFamily::columns);
  EXPECT_EQ(p.nr, 2);
  EXPECT_FALSE(p.cols_vec);
  EXPECT_FALSE(plan(ReduceOp::sum, FakeView(DType::float32, {1000, 64}, {128, 2}), {0}).cols_vec);
}

// Columns in vectors over few rows: the splits' states (written, then read back by the finish) stay
// within a quarter of the input's bytes (kColsStateShare), a thread per output finishes up to kColsThinFinishStates
// states, and fewer threads than a block per SM run in blocks of kColsSmallBlock.
TEST(CudaReducePlan, ColumnsOverFewRowsKeepTheirStatesSmall) {
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::argmin,
                      ReduceOp::argmax, ReduceOp::var, ReduceOp::std})
    for (DType t : {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int8, DType::uint16,
                    DType::int32, DType::int64})
      EXPECT_LE(cg::reduce_state_bytes(op, t), static_cast<i64>(cg::kReduceStateBytes)) << xp::name(t);
  EXPECT_EQ(cg::reduce_state_bytes(ReduceOp::var, DType::float16), 24);  // four floats and a count
  EXPECT_EQ(cg::reduce_state_bytes(ReduceOp::var, DType::int8), 40);     // four doubles and a count
  EXPECT_EQ(cg::reduce_state_bytes(ReduceOp::sum, DType::bfloat16), 8);  // a double
  EXPECT_EQ(cg::reduce_state_bytes(ReduceOp::argmax, DType::uint8), 16);
  EXPECT_EQ(cg::reduce_state_bytes(ReduceOp::any, DType::bool_), 4);
  constexpr int kH100 = 132;
  // 64 rows of 128 KiB float32 (16 MiB): 16384 threads of four outputs would be under 512 per SM,
  // so runs of 16 rows, four splits; their 8-byte sums move 64 bytes an output against 256 read.
  FakeView f32(DType::float32, {64, 32768 * 4});
  auto p = plan(ReduceOp::sum, f32, {0}, kH100);
  EXPECT_TRUE(p.cols_vec);
  EXPECT_EQ(p.splits, 4);
  EXPECT_EQ(p.block, cg::kReduceBlock);          // 131072 threads
  EXPECT_EQ(cg::finish_grid(p), 131072u / 256);  // a thread per output
  // The variance's 24-byte states: no split (2 * 2 * 24 > 256 / 4), 32768 threads in blocks of 64.
  p = plan(ReduceOp::var, f32, {0}, kH100);
  EXPECT_EQ(p.splits, 1);
  EXPECT_EQ(p.block, cg::kColsSmallBlock);
  // float16 over 64 rows (128 bytes an output): no split for the variance (24-byte states) or
  // argmax of uint8 (16-byte states, 64 bytes an output), each thread reading all 64 rows; a
  // sum's 8-byte state, two. Fewer threads than 256 per SM: blocks of 64. The variance of float16
  // takes four outputs a thread (8-byte vectors, cols_vec_bytes), the sum eight.
  FakeView f16(DType::float16, {64, 131072});
  p = plan(ReduceOp::var, f16, {0}, kH100);
  EXPECT_EQ(p.splits, 1);
  EXPECT_EQ(p.block, cg::kColsSmallBlock);
  EXPECT_EQ(cg::reduce_grid(p), 131072u / 4 / cg::kColsSmallBlock);
  for (ReduceOp op : {ReduceOp::argmin, ReduceOp::argmax, ReduceOp::var, ReduceOp::std}) {
    EXPECT_EQ(cg::cols_vec_bytes(op, DType::float16), 8);
    EXPECT_EQ(cg::cols_vec_bytes(op, DType::bfloat16), 8);
    EXPECT_EQ(cg::cols_vec_bytes(op, DType::float32), 16);
    EXPECT_EQ(cg::cols_vec_bytes(op, DType::uint16), 16);
  }
  EXPECT_EQ(cg::cols_vec_bytes(ReduceOp::sum, DType::float16), 16);
  p = plan(ReduceOp::sum, f16, {0}, kH100);
  EXPECT_EQ(p.splits, 2);
  EXPECT_EQ(p.block, cg::kColsSmallBlock);  // 32768 threads, fewer than 256 per SM
  EXPECT_EQ(cg::finish_grid(p), 131072u / 256);
  FakeView u8(DType::uint8, {64, 262144});
  p = plan(ReduceOp::argmax, u8, {0}, kH100);
  EXPECT_EQ(p.splits, 1);
  EXPECT_EQ(p.block, cg::kColsSmallBlock);
  EXPECT_EQ(plan(ReduceOp::any, FakeView(DType::bool_, {64, 262144}), {0}, kH100).splits, 2);
  // argmin, argmax, var and std of 16-bit floats keep twice as many splits (kColsStateShareHeavy):
  // 170 rows of 96 KiB float16 (340 bytes an output), runs of 16 rows would be 11 splits.
  FakeView f16r(DType::float16, {170, 49152});
  EXPECT_EQ(plan(ReduceOp::argmax, f16r, {0}, kH100).splits, 5);  // 2 * 5 * 16 <= 340 / 2
  EXPECT_EQ(plan(ReduceOp::var, f16r, {0}, kH100).splits, 3);     // 2 * 3 * 24 <= 340 / 2
  EXPECT_EQ(plan(ReduceOp::sum, f16r, {0}, kH100).splits, 5);     // 2 * 5 * 8 <= 340 / 4
  EXPECT_EQ(plan(ReduceOp::argmax, FakeView(DType::float32, {170, 24576}), {0}, kH100).splits,
            5);  // 2 * 5 * 16 <= 680 / 4
  // More rows: the sum of 256 rows of 64 KiB float32 keeps its runs of 16 rows (the cap is 16
  // splits); the variance's bigger states, 5 (2 * 5 * 24 <= 1024 / 4).
  EXPECT_EQ(plan(ReduceOp::sum, FakeView(DType::float32, {256, 16384}), {0}, kH100).splits, 16);
  EXPECT_EQ(plan(ReduceOp::var, FakeView(DType::float32, {256, 16384}), {0}, kH100).splits, 5);
  // The finish of many states stays a block per 32 outputs.
  EXPECT_EQ(cg::finish_grid(plan(ReduceOp::sum, FakeView(DType::float32, {256, 16384}), {0}, kH100)), 16384u / 32);
}

// Tiles (a block per rows_vector unit) exactly when the outputs are fewer than the multiprocessors,
// or when each row is at least 64 KiB and the op is not argmin or argmax; a block's chunk is whole
// vectors for its 256 threads, never below 2048 elements, and a short reduction is one unit that
// finishes its output in the one kernel.
TEST(CudaReducePlan, TilesForFewerOutputsThanMultiprocessors) {
  FakeView a(DType::float32, {131, i64{1} << 20});
  auto p = plan(ReduceOp::sum, a, {1});
  EXPECT_EQ(p.family, cg::ReduceFamily::rows_vector);
  EXPECT_TRUE(p.tiles);
  EXPECT_EQ(p.splits, 9);  // ceil(132 * 8 / 131) blocks per output
  EXPECT_EQ(p.chunk % 1024, 0);
  expect_cover(p);
  EXPECT_EQ(cg::reduce_grid(p), 131u * 9);
  EXPECT_FALSE(cg::wide_finish(p));
  FakeView b(DType::float32, {132, 16383});
  p = plan(ReduceOp::sum, b, {1});
  EXPECT_FALSE(p.tiles);
  EXPECT_EQ(p.splits, 8);  // ceil(132 * 64 / 132) warps per output, none below 2048 elements
  // Rows of 64 KiB: a block each, whatever their number, but for argmin and argmax.
  for (i64 rows : {132, 16384}) {
    FakeView r(DType::float32, {rows, 16384});
    p = plan(ReduceOp::max, r, {1});
    EXPECT_TRUE(p.tiles) << rows;
    expect_cover(p);
    EXPECT_FALSE(plan(ReduceOp::argmax, r, {1}).tiles) << rows;
    EXPECT_FALSE(plan(ReduceOp::argmin, r, {1}).tiles) << rows;
  }
  FakeView big(DType::float32, {16384, 16384});
  p = plan(ReduceOp::sum, big, {1});
  EXPECT_EQ(p.splits, 1);  // more rows than resident blocks: each block finishes its row
  EXPECT_EQ(cg::reduce_grid(p), 16384u);
  FakeView r16(DType::float32, {65536, 4096});  // 16 KiB rows: a warp each
  EXPECT_FALSE(plan(ReduceOp::sum, r16, {1}).tiles);
  // float64: two elements per vector, chunks of 512; int8: sixteen, chunks of 4096.
  FakeView c(DType::float64, {3, 100000});
  p = plan(ReduceOp::argmax, c, {1});
  EXPECT_TRUE(p.tiles);
  EXPECT_EQ(p.chunk % 512, 0);
  expect_cover(p);
  FakeView d(DType::int8, {1 << 22});
  p = plan(ReduceOp::any, d, {0});
  EXPECT_TRUE(p.tiles);
  EXPECT_EQ(p.chunk % 4096, 0);
  expect_cover(p);
  // 1024 floats: one unit, the block writes the output (no finish pass).
  FakeView e(DType::float32, {1024});
  p = plan(ReduceOp::sum, e, {0});
  EXPECT_TRUE(p.tiles);
  EXPECT_EQ(p.splits, 1);
  EXPECT_EQ(cg::reduce_grid(p), 1u);
  // 5000 floats: ceil(5000 / 2048) = 3 splits, each whole vectors for 256 threads.
  FakeView f(DType::float32, {5000});
  p = plan(ReduceOp::mean, f, {0});
  EXPECT_TRUE(p.tiles);
  EXPECT_EQ(p.chunk, 2048);
  EXPECT_EQ(p.splits, 3);
  expect_cover(p);
  // Strided rows and columns never take tiles.
  FakeView g(DType::float32, {5000}, {2});
  EXPECT_FALSE(plan(ReduceOp::sum, g, {0}).tiles);
  FakeView h(DType::float32, {1000, 64});
  EXPECT_FALSE(plan(ReduceOp::sum, h, {0}).tiles);
}

TEST(CudaReducePlan, MergedAxesAndShortReductions) {
  FakeView a(DType::int16, {4, 8, 16});
  auto p = plan(ReduceOp::sum, a, {0, 1, 2});  // one contiguous run once merged
  EXPECT_EQ(p.nr, 1);
  EXPECT_EQ(p.N, 512);
  EXPECT_EQ(p.family, cg::ReduceFamily::rows_vector);
  p = plan(ReduceOp::sum, a, {1, 2});
  EXPECT_EQ(p.nr, 1);
  EXPECT_EQ(p.M, 4);
  EXPECT_EQ(p.N, 128);
  // Fewer than kMinWarpElements per output: a thread per output, no split.
  p = plan(ReduceOp::any, a, {2});
  EXPECT_EQ(p.family, cg::ReduceFamily::columns);
  EXPECT_EQ(p.N, 16);
  EXPECT_EQ(p.splits, 1);
  // No axis reduced: every element its own output (one reduced axis of size 1).
  p = plan(ReduceOp::sum, a, {});
  EXPECT_EQ(p.M, 512);
  EXPECT_EQ(p.N, 1);
  EXPECT_EQ(p.nr, 1);
  EXPECT_EQ(p.red[0].size, 1);
  EXPECT_EQ(p.family, cg::ReduceFamily::columns);
  // Size-1 axes are dropped.
  FakeView b(DType::float32, {1, 300, 1});
  p = plan(ReduceOp::sum, b, {0, 1});
  EXPECT_EQ(p.nk, 0);
  EXPECT_EQ(p.nr, 1);
  EXPECT_EQ(p.M, 1);
}

TEST(CudaReducePlan, EmptyInputsAndOutputs) {
  FakeView a(DType::float32, {0, 5});
  auto p = plan(ReduceOp::sum, a, {0});
  EXPECT_TRUE(p.on_device);
  EXPECT_EQ(p.M, 5);
  EXPECT_EQ(p.N, 0);
  EXPECT_EQ(p.splits, 1);
  EXPECT_EQ(p.chunk, 0);
  EXPECT_EQ(p.nr, 1);
  EXPECT_EQ(p.red[0].size, 0);
  p = plan(ReduceOp::sum, a, {1});
  EXPECT_EQ(p.M, 0);  // nothing to launch
  for (ReduceOp op : {ReduceOp::min, ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax})
    EXPECT_THROW(plan(op, a, {0}), xp::ValueError) << op_name(op);
}

TEST(CudaReducePlan, MisalignedDataOrTooManyAxesStayOnTheHost) {
  FakeView a(DType::float32, {100}, {}, (1 << 20) + 2);
  EXPECT_FALSE(plan(ReduceOp::sum, a, {0}).on_device);
  // Nine kept axes that cannot merge (strides 3^k elements, shapes 2).
  std::vector<i64> shape(10, 2), strides(10);
  i64 s = 1;
  for (int d = 9; d >= 0; --d, s *= 3) strides[d] = s;
  FakeView b(DType::float32, shape, strides);
  EXPECT_FALSE(plan(ReduceOp::sum, b, {9}).on_device);
  EXPECT_FALSE(plan(ReduceOp::sum, b, {0, 1, 2, 3, 4, 5, 6, 7, 8}).on_device);
  EXPECT_TRUE(plan(ReduceOp::sum, b, {0, 1}).on_device);  // eight kept axes
}

// Bad requests: the same ValueError (and message) as the CPU backend, before anything is launched.
TEST(CudaReducePlan, ChecksAsTheCpuBackend) {
  std::vector<float> host(64);
  const auto addr = reinterpret_cast<std::uintptr_t>(host.data());
  FakeView in(DType::float32, {4, 16}, {}, addr);
  std::vector<float> out_host(64);
  const auto oaddr = reinterpret_cast<std::uintptr_t>(out_host.data());
  struct Case {
    ReduceOp op;
    std::vector<int> axes;
    DType out_dtype;
    std::vector<i64> out_shape;
  };
  const Case cases[] = {
      {ReduceOp::sum, {2}, DType::float32, {4, 16}}, {ReduceOp::sum, {1, 1}, DType::float32, {4}},
      {ReduceOp::sum, {1, 0}, DType::float32, {}},   {ReduceOp::sum, {1}, DType::float64, {4}},
      {ReduceOp::sum, {1}, DType::float32, {5}},     {ReduceOp::sum, {1}, DType::float32, {4, 1}},
      {ReduceOp::argmax, {1}, DType::float32, {4}},  {ReduceOp::any, {0}, DType::float32, {16}},
      {ReduceOp::mean, {-1}, DType::float32, {4}},
  };
  for (const Case& c : cases) {
    FakeView out(c.out_dtype, c.out_shape, {}, oaddr);
    std::string cpu_msg, gpu_msg;
    try {
      xp::detail::cpu_backend().reduce(c.op, in.v, c.axes, out.v, 0);
    } catch (const xp::ValueError& e) {
      cpu_msg = e.what();
    }
    try {
      cg::plan_reduce(c.op, in.v, c.axes, out.v, 0, kH200);
    } catch (const xp::ValueError& e) {
      gpu_msg = e.what();
    }
    EXPECT_FALSE(cpu_msg.empty()) << op_name(c.op);
    EXPECT_EQ(gpu_msg, cpu_msg) << op_name(c.op);
  }
  FakeView empty(DType::float32, {0, 3}, {}, addr);
  for (ReduceOp op : {ReduceOp::min, ReduceOp::argmax}) {
    const DType t = xp::detail::reduce_result_dtype(op, DType::float32);
    FakeView out(t, {}, {}, oaddr);
    std::string cpu_msg, gpu_msg;
    try {
      xp::detail::cpu_backend().reduce(op, empty.v, std::vector<int>{0, 1}, out.v, 0);
    } catch (const xp::ValueError& e) {
      cpu_msg = e.what();
    }
    try {
      cg::plan_reduce(op, empty.v, std::vector<int>{0, 1}, out.v, 0, kH200);
    } catch (const xp::ValueError& e) {
      gpu_msg = e.what();
    }
    EXPECT_FALSE(cpu_msg.empty());
    EXPECT_EQ(gpu_msg, cpu_msg);
  }
}

TEST(CudaReducePlan, ArgumentsCarryTheGeometry) {
  FakeView in(DType::float64, {8, 16, 32});
  const auto out = out_for(in, {0, 2}, DType::float64);
  const auto p = cg::plan_reduce(ReduceOp::var, in.v, std::vector<int>{0, 2}, out->v, 1, kH200);
  const cg::ReduceArgs a = cg::reduce_args(p, 0x1000, false);
  EXPECT_EQ(a.in, std::uint64_t{1} << 20);
  EXPECT_EQ(a.out, std::uint64_t{1} << 24);
  EXPECT_EQ(a.part, 0x1000u);
  EXPECT_EQ(a.M, 16);
  EXPECT_EQ(a.N, 256);
  EXPECT_EQ(a.S, p.splits);
  EXPECT_EQ(a.chunk, p.chunk);
  EXPECT_EQ(a.dof, 255);
  EXPECT_EQ(a.final, 0);
  EXPECT_EQ(a.nk, 1);
  EXPECT_EQ(a.nr, 2);
  EXPECT_EQ(a.kshape[0], 16);
  EXPECT_EQ(a.kin[0], 32 * 8);
  EXPECT_EQ(a.kout[0], 8);
  EXPECT_EQ(a.rshape[0], 8);
  EXPECT_EQ(a.rin[0], 16 * 32 * 8);
  EXPECT_EQ(a.rshape[1], 32);
  EXPECT_EQ(a.rin[1], 8);
  EXPECT_EQ(cg::reduce_args(p, 0, true).final, 1);
}

TEST(CudaScanPlan, LinesForManyTilesForFewAndTheCpuChecks) {
  FakeView a(DType::int32, {40000, 3});
  auto o = std::make_unique<FakeView>(DType::int64, std::vector<i64>{40000, 3});
  auto p = cg::plan_scan(a.v, 1, o->v, false, kH200);
  EXPECT_EQ(p.family, cg::ScanFamily::lines);  // L = 3: short lines
  EXPECT_EQ(p.M, 40000);
  EXPECT_EQ(p.L, 3);
  EXPECT_EQ(p.sa, 4);
  EXPECT_EQ(p.so, 8);
  p = cg::plan_scan(a.v, 0, o->v, false, kH200);
  EXPECT_EQ(p.sa, 12);
  EXPECT_EQ(p.so, 24);
  EXPECT_EQ(p.family, cg::ScanFamily::tiles);  // three long lines: a block each
  EXPECT_EQ(p.M, 3);
  EXPECT_EQ(cg::scan_grid(p), 3u);
  FakeView b(DType::float32, {20000, 100});
  auto ob = std::make_unique<FakeView>(DType::float32, std::vector<i64>{20000, 101});
  p = cg::plan_scan(b.v, 1, ob->v, true, kH200);
  EXPECT_EQ(p.family, cg::ScanFamily::lines);  // 20000 >= 132 * 128 lines
  EXPECT_EQ(cg::scan_grid(p), (20000u + 255) / 256);
  const cg::ScanArgs args = cg::scan_args(p);
  EXPECT_EQ(args.first, 1);
  EXPECT_EQ(args.L, 100);
  EXPECT_EQ(args.so, 4);
  EXPECT_EQ(args.nd, 1);
  EXPECT_EQ(args.shape[0], 20000);
  EXPECT_EQ(args.sin[0], 400);
  EXPECT_EQ(args.sout[0], 404);
  // Errors as the CPU's.
  EXPECT_THROW(cg::plan_scan(b.v, 2, ob->v, true, kH200), xp::ValueError);
  EXPECT_THROW(cg::plan_scan(b.v, 1, ob->v, false, kH200), xp::ValueError);  // shape
  auto wrong = std::make_unique<FakeView>(DType::float64, std::vector<i64>{20000, 100});
  EXPECT_THROW(cg::plan_scan(b.v, 1, wrong->v, false, kH200), xp::ValueError);  // dtype
  // An integer input may also write its own dtype (wrapping), and no other narrower one.
  auto own = std::make_unique<FakeView>(DType::int32, std::vector<i64>{40000, 3});
  p = cg::plan_scan(a.v, 1, own->v, false, kH200);
  EXPECT_EQ(p.out_dtype, DType::int32);
  EXPECT_EQ(p.so, 4);
  auto int16 = std::make_unique<FakeView>(DType::int16, std::vector<i64>{40000, 3});
  EXPECT_THROW(cg::plan_scan(a.v, 1, int16->v, false, kH200), xp::ValueError);
  FakeView flags(DType::bool_, {100});
  auto flags_out = std::make_unique<FakeView>(DType::bool_, std::vector<i64>{100});
  EXPECT_THROW(cg::plan_scan(flags.v, 0, flags_out->v, false, kH200), xp::ValueError);  // bool is no integer
  FakeView odd(DType::float32, {100}, {}, (1 << 20) + 1);
  auto oo = std::make_unique<FakeView>(DType::float32, std::vector<i64>{100});
  EXPECT_FALSE(cg::plan_scan(odd.v, 0, oo->v, false, kH200).on_device);
}

// ---- source (NVRTC, no GPU) ----

constexpr cg::ReduceFamily kFamilies[] = {cg::ReduceFamily::rows_vector, cg::ReduceFamily::rows_strided,
                                          cg::ReduceFamily::columns};

TEST(CudaReduceSource, KeysNameOpDtypeAndClassOnly) {
  const auto f = cg::ReduceFamily::columns;
  EXPECT_EQ(cg::reduce_key(ReduceOp::sum, DType::float32, f), cg::reduce_key(ReduceOp::sum, DType::float32, f));
  EXPECT_NE(cg::reduce_key(ReduceOp::sum, DType::float32, f), cg::reduce_key(ReduceOp::sum, DType::float64, f));
  EXPECT_NE(cg::reduce_key(ReduceOp::sum, DType::float32, f), cg::reduce_key(ReduceOp::mean, DType::float32, f));
  EXPECT_NE(cg::reduce_key(ReduceOp::sum, DType::float32, f),
            cg::reduce_key(ReduceOp::sum, DType::float32, cg::ReduceFamily::rows_vector));
  EXPECT_EQ(cg::reduce_source(ReduceOp::argmin, DType::int8, f), cg::reduce_source(ReduceOp::argmin, DType::int8, f));
  EXPECT_NE(cg::reduce_source(ReduceOp::argmin, DType::int8, f), cg::reduce_source(ReduceOp::argmax, DType::int8, f));
  EXPECT_NE(cg::scan_key(DType::int8, DType::int64), cg::scan_key(DType::uint8, DType::uint64));
  EXPECT_NE(cg::scan_key(DType::int8, DType::int64), cg::scan_key(DType::int8, DType::int8));
  EXPECT_EQ(cg::scan_key(DType::int64, DType::int64), "xp-scan-2:int64");  // the default keeps its key
  // Products: keys and sources of their own, the same kernels with * and 1.
  EXPECT_EQ(cg::scan_key(DType::int64, DType::int64, ReduceOp::prod), "xp-scan-2:prod:int64");
  EXPECT_NE(cg::scan_source(DType::float32, DType::float32, ReduceOp::prod),
            cg::scan_source(DType::float32, DType::float32));
  EXPECT_NE(cg::scan_source(DType::int8, DType::int8, ReduceOp::prod).find("((x) * (y))"), std::string::npos);
  EXPECT_THROW(cg::scan_source(DType::float32, DType::float32, ReduceOp::max), xp::ValueError);
  EXPECT_THROW(cg::scan_source(DType::int32, DType::int16, ReduceOp::prod), xp::ValueError);
  EXPECT_THROW(cg::scan_source(DType::float32, DType::int32), xp::ValueError);
  EXPECT_THROW(cg::scan_source(DType::int32, DType::int16), xp::ValueError);
  EXPECT_THROW(cg::scan_source(DType::bool_, DType::bool_), xp::ValueError);
  // One atomic, the counter that elects the unit finishing an output (one_pass_finish), never an
  // atomic combination; no CUB; only the class's kernels.
  for (ReduceOp op : xp::detail::kReduceOps) {
    const std::string s = cg::reduce_source(op, DType::float32, cg::ReduceFamily::rows_vector);
    const std::size_t at = s.find("atomic");
    EXPECT_EQ(s.compare(at, 34, "atomicAdd((unsigned*)a.cnt + m, 1u"), 0) << op_name(op);
    EXPECT_EQ(s.find("atomic", at + 1), std::string::npos) << op_name(op);
    EXPECT_EQ(s.find("#include"), std::string::npos);
    EXPECT_NE(s.find("void __launch_bounds__(256) xp_rows_vec("), std::string::npos);
    // The tile kernel of a float sum or mean asks for six resident blocks per multiprocessor (40
    // registers without spilling; the fastest float32 sum on an H200, bench/nvcc/xp_sum_kernels.cu);
    // the others keep the compiler's choice.
    const bool bounded = op == ReduceOp::sum || op == ReduceOp::mean;
    EXPECT_NE(
        s.find(bounded ? "void __launch_bounds__(256, 6) xp_rows_tile(" : "void __launch_bounds__(256) xp_rows_tile("),
        std::string::npos)
        << op_name(op);
    EXPECT_EQ(s.find("void __launch_bounds__(256) xp_cols("), std::string::npos);
  }
  // float64 as float32; float16 (added in double) and bfloat16 ran faster without; int8 (sixteen
  // 64-bit accumulators) would spill.
  const std::tuple<ReduceOp, DType, bool> tiles[] = {{ReduceOp::sum, DType::float64, true},
                                                     {ReduceOp::sum, DType::int8, false},
                                                     {ReduceOp::mean, DType::float16, false},
                                                     {ReduceOp::sum, DType::bfloat16, false}};
  for (const auto& [op, t, bounded] : tiles)
    EXPECT_NE(cg::reduce_source(op, t, cg::ReduceFamily::rows_vector)
                  .find(bounded ? "void __launch_bounds__(256, 6) xp_rows_tile("
                                : "void __launch_bounds__(256) xp_rows_tile("),
              std::string::npos)
        << op_name(op) << " " << xp::name(t);
}

// min and max of 8- and 16-bit integers combine 32-bit words of packed elements with the SIMD
// intrinsics (exact in any order), and argmin and argmax find each vector's extreme that way
// (kPack 2); no other op or dtype does. The 16-bit floats widen without xp's software conversion
// (float16 by the hardware's cvt, bfloat16 by a shift).
// The warp kernel's loads in flight per lane, by op (bench/results/2026-12-03-h200-columns/run4):
// argmin and argmax 4, min and max of floats 16, the rest 8; the tile kernel 4 for every op.
TEST(CudaReduceSource, WarpRowsKeepTheMeasuredLoadsInFlight) {
  const auto warp = [](ReduceOp op, DType t) {
    const std::string s = cg::reduce_source(op, t, cg::ReduceFamily::rows_vector);
    EXPECT_NE(s.find("xp_rows_tile_body<R0>(a)"), std::string::npos);
    EXPECT_NE(s.find("xp_run_state<R, 256, 4>"), std::string::npos);
    for (int d : {4, 8, 16})
      if (s.find("xp_rows_vec_body<R0, " + std::to_string(d) + ">(a)") != std::string::npos) return d;
    return 0;
  };
  EXPECT_EQ(warp(ReduceOp::argmax, DType::float32), 4);
  EXPECT_EQ(warp(ReduceOp::argmin, DType::int8), 4);
  EXPECT_EQ(warp(ReduceOp::max, DType::float32), 16);
  EXPECT_EQ(warp(ReduceOp::min, DType::bfloat16), 16);
  EXPECT_EQ(warp(ReduceOp::max, DType::int8), 8);
  EXPECT_EQ(warp(ReduceOp::sum, DType::float32), 8);
  EXPECT_EQ(warp(ReduceOp::var, DType::float16), 8);
}

// var and std read the input once: one op struct, its runs in tiles (kPack 3), no second pass.
TEST(CudaReduceSource, VarianceReadsOnceInTiles) {
  for (ReduceOp op : {ReduceOp::var, ReduceOp::std}) {
    for (auto f : {cg::ReduceFamily::rows_vector, cg::ReduceFamily::rows_strided, cg::ReduceFamily::columns}) {
      const std::string s = cg::reduce_source(op, DType::float32, f);
      EXPECT_NE(s.find("static constexpr int kPack = 3;"), std::string::npos);
      EXPECT_NE(s.find("xp_moments_merge"), std::string::npos);
      EXPECT_EQ(s.find("struct R1"), std::string::npos);
      EXPECT_EQ(s.find("a.aux"), std::string::npos);
    }
  }
  EXPECT_EQ(cg::reduce_source(ReduceOp::sum, DType::float32, cg::ReduceFamily::rows_vector).find("xp_moments"),
            std::string::npos);
  // Integers of 8 and 16 bits over columns: exact integer sums over runs (xp_cols_vec_int_moments).
  const auto cols = cg::ReduceFamily::columns;
  for (DType t : {DType::bool_, DType::int8, DType::uint8, DType::int16, DType::uint16}) {
    for (ReduceOp op : {ReduceOp::var, ReduceOp::std}) {
      const std::string s = cg::reduce_source(op, t, cols);
      EXPECT_NE(s.find("static constexpr bool kIntMoments = true;"), std::string::npos) << xp::name(t);
      EXPECT_NE(s.find(xp::itemsize(t) == 1 ? "typedef u32 QT;" : "typedef u64 QT;"), std::string::npos);
      EXPECT_NE(s.find("static constexpr i64 kRun = " + std::to_string(cg::reduce_int_moments_run(op, t)) + ";"),
                std::string::npos);
    }
  }
  for (DType t : {DType::int32, DType::int64, DType::float16, DType::float32})
    EXPECT_NE(cg::reduce_source(ReduceOp::var, t, cols).find("kIntMoments = false;"), std::string::npos) << xp::name(t);
  EXPECT_NE(cg::reduce_source(ReduceOp::sum, DType::int8, cols).find("kIntMoments = false;"), std::string::npos);
}

TEST(CudaReduceSource, SmallIntegerMinMaxRunOnPackedWords) {
  const auto f = cg::ReduceFamily::rows_vector;
  const std::pair<DType, const char*> packed[] = {
      {DType::int8, "s4"}, {DType::uint8, "u4"}, {DType::int16, "s2"}, {DType::uint16, "u2"}};
  for (const auto& [t, suffix] : packed) {
    for (ReduceOp op : {ReduceOp::min, ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax}) {
      const std::string s = cg::reduce_source(op, t, f);
      const bool largest = op == ReduceOp::max || op == ReduceOp::argmax;
      const std::string fn = std::string(largest ? "__vmax" : "__vmin") + suffix + "(a, b)";
      EXPECT_NE(s.find(fn), std::string::npos) << op_name(op) << " " << xp::name(t);
      const bool arg = op == ReduceOp::argmin || op == ReduceOp::argmax;
      EXPECT_NE(s.find(arg ? "static constexpr int kPack = 2;" : "static constexpr int kPack = 1;"), std::string::npos)
          << op_name(op) << " " << xp::name(t);
      // The arg ops over columns: a SIMD compare gives the lanes a row improves (xp_cols_vec_packed).
      const std::string better = std::string(largest ? "__vcmpgt" : "__vcmplt") + suffix + "(x, b)";
      EXPECT_EQ(s.find(better) != std::string::npos, arg) << op_name(op) << " " << xp::name(t);
      EXPECT_NE(s.find("static XP_D u32 packed_id()"), std::string::npos) << op_name(op) << " " << xp::name(t);
    }
  }
  for (DType t : {DType::bool_, DType::int32, DType::uint64, DType::float16, DType::float32}) {
    for (ReduceOp op : {ReduceOp::max, ReduceOp::argmin}) {
      const std::string s = cg::reduce_source(op, t, f);
      EXPECT_NE(s.find("static constexpr int kPack = 0;"), std::string::npos) << op_name(op) << " " << xp::name(t);
    }
  }
  EXPECT_NE(cg::reduce_source(ReduceOp::prod, DType::int8, f).find("kPack = 0;"), std::string::npos);
  EXPECT_NE(cg::reduce_source(ReduceOp::sum, DType::float16, f).find("cvt.f32.f16"), std::string::npos);
  // float16 and bfloat16 sums and means add in double, one addition per element (no TwoSum: no
  // st.c); float32 keeps the compensated float32 state.
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean}) {
    for (auto fam : {f, cg::ReduceFamily::rows_vector, cg::ReduceFamily::rows_strided}) {
      const std::string mean = op == ReduceOp::mean ? "true" : "false";
      for (DType t : {DType::float16, DType::bfloat16}) {
        const std::string h = cg::reduce_source(op, t, fam);
        EXPECT_NE(h.find("typedef xp_sum_wide<" + mean + "> R0;"), std::string::npos) << op_name(op);
        EXPECT_EQ(h.find("typedef xp_sum_comp"), std::string::npos) << op_name(op);
      }
      EXPECT_NE(cg::reduce_source(op, DType::float32, fam).find("typedef xp_sum_comp<float, " + mean + "> R0;"),
                std::string::npos)
          << op_name(op);
    }
    EXPECT_EQ(cg::reduce_state_bytes(op, DType::bfloat16), 8);  // the double, not a float pair
  }
  // argmin and argmax of the dtypes without packed words take a value and a 32-bit row per output
  // over columns (xp_cols_vec_arg); those with packed words, and the other ops, do not.
  for (ReduceOp op : {ReduceOp::argmin, ReduceOp::argmax}) {
    for (DType t : {DType::float16, DType::bfloat16, DType::float32, DType::float64, DType::int32, DType::uint64})
      EXPECT_NE(cg::reduce_source(op, t, f).find("kArgRun = true;"), std::string::npos) << xp::name(t);
    for (DType t : {DType::int8, DType::uint16})
      EXPECT_NE(cg::reduce_source(op, t, f).find("kArgRun = false;"), std::string::npos) << xp::name(t);
  }
  EXPECT_NE(cg::reduce_source(ReduceOp::max, DType::float32, f).find("kArgRun = false;"), std::string::npos);
  EXPECT_NE(cg::reduce_source(ReduceOp::sum, DType::bfloat16, f).find("return __uint_as_float((u32)s << 16);"),
            std::string::npos);
}

namespace {

// Runs job(i) for i in [0, n) on up to 16 threads; returns what the jobs report (empty: fine).
template <class Job>
std::vector<std::string> run_parallel(std::size_t n, const Job& job) {
  std::vector<std::string> failures(n);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) failures[i] = job(i);
  };
  std::vector<std::thread> pool;
  const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work);
  for (auto& th : pool) th.join();
  std::erase_if(failures, [](const std::string& f) { return f.empty(); });
  return failures;
}

struct SourceTask {
  ReduceOp op;
  DType t;
  cg::ReduceFamily f;
  std::string what() const {
    return std::string(op_name(op)) + " " + std::string(xp::name(t)) + " " + cg::family_name(f);
  }
};

std::vector<SourceTask> every_source() {
  std::vector<SourceTask> tasks;
  for (ReduceOp op : xp::detail::kReduceOps)
    for (DType t : kDTypes)
      for (cg::ReduceFamily f : kFamilies) tasks.push_back({op, t, f});
  return tasks;
}

xp::ProgramOptions backend_options() {  // as the backend compiles them
  xp::ProgramOptions opt;
  opt.name = "xp_reduce.cu";
  opt.options = cg::nvrtc_options();
  return opt;
}

std::string compile_error(const std::string& what, const xp::Error& e) {
  std::string f = what + ":\n" + e.what() + "\n";
  if (const auto* ce = dynamic_cast<const xp::CompileError*>(&e)) f += ce->log();
  return f;
}

}  // namespace

// Every (op, dtype, class) source for sm_90, compiled on every core (NVRTC is thread-safe; each
// task has its own Program): the kernels of the class and the finish kernels are there.
// Sums (and means) of bool and 8- and 16-bit integers add a vector's elements in one 32-bit word
// (SIMD dot products for bytes) and keep one 64-bit accumulator, means of them convert the integer
// sum once; any and all of 1-byte types combine four truths a word. Wider types keep their states.
TEST(CudaReduceSource, SmallIntegerSumsAndTruthsRunOnPackedWords) {
  for (const auto f : {cg::ReduceFamily::rows_vector, cg::ReduceFamily::columns}) {
    for (DType t : {DType::bool_, DType::int8, DType::uint8, DType::int16, DType::uint16}) {
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean}) {
        const std::string s = cg::reduce_source(op, t, f);
        EXPECT_NE(s.find("kPack = 4;"), std::string::npos) << op_name(op) << " " << xp::name(t);
        EXPECT_NE(s.find("static XP_D u64 vsum(uint4 x)"), std::string::npos) << op_name(op) << " " << xp::name(t);
        EXPECT_NE(s.find("typedef u64 St;"), std::string::npos) << op_name(op) << " " << xp::name(t);
        EXPECT_EQ(s.find("__dp4a") != std::string::npos, xp::itemsize(t) == 1) << op_name(op) << " " << xp::name(t);
      }
      const bool byte = xp::itemsize(t) == 1;
      for (ReduceOp op : {ReduceOp::any, ReduceOp::all}) {
        const std::string s = cg::reduce_source(op, t, f);
        EXPECT_NE(s.find(byte ? "kPack = 1;" : "kPack = 0;"), std::string::npos) << op_name(op) << " " << xp::name(t);
        EXPECT_EQ(s.find("__vcmpne4(b, 0u)") != std::string::npos, byte) << op_name(op) << " " << xp::name(t);
      }
    }
    // The mean of wider integers keeps the compensated double (its sums leave 53 bits).
    for (DType t : {DType::int32, DType::int64, DType::uint32}) {
      const std::string s = cg::reduce_source(ReduceOp::mean, t, f);
      EXPECT_NE(s.find("typedef xp_sum_comp<double, true> R0;"), std::string::npos) << xp::name(t);
      EXPECT_NE(s.find("kPack = 0;"), std::string::npos) << xp::name(t);
      EXPECT_NE(cg::reduce_source(ReduceOp::sum, t, f).find("kPack = 0;"), std::string::npos) << xp::name(t);
    }
  }
}

// Every source goes through NVRTC's whole front end and optimizer (PTX for compute_90: its errors,
// warnings and kernels); a third of them, chosen so that every op, dtype and class is among them,
// also through ptxas to an sm_90 cubin, which costs half as much again and has never failed where
// the PTX compiled (the GPU tests load the cubins of the kernels they run).
TEST(CudaReduceSource, EveryOpDtypeAndClassCompilesForSm90) {
  XP_REQUIRE_NVRTC();
  const std::vector<SourceTask> tasks = every_source();
  const auto failures = run_parallel(tasks.size(), [&](std::size_t i) -> std::string {
    const SourceTask& k = tasks[i];
    xp::ProgramOptions options = backend_options();
    options.ptx =
        (static_cast<std::size_t>(k.op) + static_cast<std::size_t>(k.t) + static_cast<std::size_t>(k.f)) % 3 != 0;
    std::string failure;
    try {
      const auto answer = xp_test::nvrtc_answer(cg::reduce_source(k.op, k.t, k.f), options, xp::Arch::sm(90));
      if (answer.log.find("warning") != std::string::npos) failure += k.what() + ":\n" + answer.log;
      const auto& names = answer.names;
      for (const std::string& w :
           {cg::reduce_kernel_name(k.f), cg::reduce_finish_name(), cg::reduce_finish_name(true)}) {
        if (std::find(names.begin(), names.end(), w) == names.end()) failure += k.what() + ": " + w + " missing\n";
      }
      // The tile kernel: in the rows_vector program only; the vector kernel in the columns one.
      for (const auto f : {cg::ReduceFamily::rows_vector, cg::ReduceFamily::columns}) {
        const std::string variant = cg::reduce_kernel_name(f, true);
        const bool present = std::find(names.begin(), names.end(), variant) != names.end();
        if (present != (k.f == f)) failure += k.what() + ": " + variant + (present ? " present\n" : " missing\n");
      }
      if (k.f == cg::ReduceFamily::rows_vector && std::find(names.begin(), names.end(), "xp_rows_each") == names.end())
        failure += k.what() + ": xp_rows_each missing\n";
      if (names.size() != (k.f == cg::ReduceFamily::rows_strided ? 3u : k.f == cg::ReduceFamily::rows_vector ? 5u : 4u))
        failure += k.what() + ": " + std::to_string(names.size()) + " kernels\n";
    } catch (const xp::Error& e) {
      failure += compile_error(k.what(), e);
    }
    return failure;
  });
  for (std::size_t i = 0; i < failures.size() && i < 5; ++i) ADD_FAILURE() << failures[i];
  EXPECT_EQ(failures.size(), 0u) << "of " << tasks.size();
}

namespace {

// A fused value over `shape`: the inputs (C-contiguous, or broadcast scalars when scalar[i]) and the
// code, the value being the last instruction.
struct ValueCase {
  std::string what;
  ReduceOp op;
  std::vector<DType> in;
  std::vector<bool> scalar;
  std::vector<xp::detail::Instr> code;
};

struct BuiltValue {
  std::vector<i64> shape;
  std::vector<std::vector<i64>> strides;
  xp::detail::FusedProgram p;
  BuiltValue(const ValueCase& c, std::vector<i64> shape_, std::uintptr_t address = 1 << 20) : shape(std::move(shape_)) {
    strides.resize(c.in.size());
    for (std::size_t i = 0; i < c.in.size(); ++i) {
      strides[i].assign(shape.size(), 0);
      i64 step = static_cast<i64>(xp::itemsize(c.in[i]));
      for (std::size_t d = shape.size(); d-- > 0;) {
        if (!c.scalar[i]) strides[i][d] = step;
        step *= shape[d];
      }
      View v;
      v.data = reinterpret_cast<std::byte*>(address + (i << 28));
      v.dtype = c.in[i];
      v.ndim = static_cast<int>(shape.size());
      v.shape = shape.data();
      v.strides = strides[i].data();
      p.inputs.push_back(v);
    }
    p.code = c.code;
    p.output_instr = {static_cast<std::int32_t>(c.code.size() - 1)};
    p.ndim = static_cast<int>(shape.size());
    p.shape = shape.data();
  }
};

using xp::detail::Instr;
using xp::detail::Op;

std::vector<ValueCase> value_cases() {
  const DType f32 = DType::float32, f64 = DType::float64, i32 = DType::int32, b = DType::bool_, f16 = DType::float16,
              i8 = DType::int8;
  return {
      {"sum(a * b) float32",
       ReduceOp::sum,
       {f32, f32},
       {false, false},
       {{Op::load, f32, -1, -1, -1, 0}, {Op::load, f32, -1, -1, -1, 1}, {Op::multiply, f32, 0, 1}}},
      {"var(x - scalar + 2.5) float64",
       ReduceOp::var,
       {f64, f64},
       {false, true},
       {{Op::load, f64, -1, -1, -1, 0},
        {Op::load, f64, -1, -1, -1, 1},
        {Op::subtract, f64, 0, 1},
        {Op::constant, f64, -1, -1, -1, 0x4004000000000000ull},
        {Op::add, f64, 2, 3}}},
      {"argmax(where(a > b, a, b)) int32",
       ReduceOp::argmax,
       {i32, i32},
       {false, false},
       {{Op::load, i32, -1, -1, -1, 0},
        {Op::load, i32, -1, -1, -1, 1},
        {Op::greater, b, 0, 1},
        {Op::where, i32, 2, 0, 1}}},
      {"any(isnan(h)) from float16 (computed in float32)",
       ReduceOp::any,
       {f16},
       {false},
       {{Op::load, f16, -1, -1, -1, 0}, {Op::cast, f32, 0}, {Op::isnan, b, 1}}},
      {"sum(float64(i) * 3) from int32",
       ReduceOp::sum,
       {i32},
       {false},
       {{Op::load, i32, -1, -1, -1, 0},
        {Op::cast, f64, 0},
        {Op::constant, f64, -1, -1, -1, 0x4008000000000000ull},
        {Op::multiply, f64, 1, 2}}},
      // int8 values: min/max and argmin/argmax on packed words of computed elements.
      {"max(int8(i)) from int32", ReduceOp::max, {i32}, {false}, {{Op::load, i32, -1, -1, -1, 0}, {Op::cast, i8, 0}}},
      {"argmin(int8(i)) from int32",
       ReduceOp::argmin,
       {i32},
       {false},
       {{Op::load, i32, -1, -1, -1, 0}, {Op::cast, i8, 0}}},
  };
}

}  // namespace

// A fused elementwise value feeding a reduction: the plan is a C-contiguous array's of the value's
// dtype, rows_vector only when every non-scalar input is 16-byte aligned; the value's inputs travel
// after ReduceArgs; the source names the value in its key.
TEST(CudaReducePlan, FusedValuesPlanAsAContiguousArrayOfTheirDtype) {
  const ValueCase c = value_cases()[0];
  BuiltValue v(c, {1000, 4096});
  ASSERT_TRUE(cg::value_program(v.p));
  ASSERT_TRUE(cg::value_vector_aligned(v.p));
  FakeView same(DType::float32, {1000, 4096});
  const auto out = out_for(same, {1}, DType::float32);
  const auto fused = cg::plan_fused_reduce(ReduceOp::sum, v.p, std::vector<int>{1}, out->v, 0, kH200);
  const auto plain = cg::plan_reduce(ReduceOp::sum, same.v, std::vector<int>{1}, out->v, 0, kH200);
  EXPECT_EQ(fused.family, cg::ReduceFamily::rows_vector);
  EXPECT_EQ(fused.family, plain.family);
  EXPECT_EQ(fused.splits, plain.splits);
  EXPECT_EQ(fused.chunk, plain.chunk);
  EXPECT_EQ(fused.in, nullptr);
  BuiltValue odd(c, {1000, 4096}, (1 << 20) + 4);  // 4-byte aligned inputs: no vector loads
  EXPECT_FALSE(cg::value_vector_aligned(odd.p));
  EXPECT_EQ(cg::plan_fused_reduce(ReduceOp::sum, odd.p, std::vector<int>{1}, out->v, 0, kH200).family,
            cg::ReduceFamily::rows_strided);
  // Checks as the plain plan: a wrong output shape.
  const auto wrong = out_for(same, {0}, DType::float32);
  EXPECT_THROW(cg::plan_fused_reduce(ReduceOp::sum, v.p, std::vector<int>{1}, wrong->v, 0, kH200), xp::ValueError);
  // A strided input, or an output view, is not a value program.
  BuiltValue t(c, {64, 64});
  std::swap(t.strides[0][0], t.strides[0][1]);
  EXPECT_FALSE(cg::value_program(t.p));
  EXPECT_THROW(cg::generate_value(t.p), xp::ValueError);
  // The argument: the input addresses, then the constants' bits.
  const ValueCase k = value_cases()[1];
  BuiltValue kv(k, {10});
  const auto g = cg::generate_value(kv.p);
  EXPECT_EQ(g.argument_bytes, 3u * 8);
  std::vector<std::byte> bytes(5);
  cg::pack_value_arguments(kv.p, bytes);
  ASSERT_EQ(bytes.size(), 5u + 3 * 8);
  std::uint64_t w[3];
  std::memcpy(w, bytes.data() + 5, sizeof w);
  EXPECT_EQ(w[0], std::uint64_t{1} << 20);
  EXPECT_EQ(w[1], (std::uint64_t{1} << 20) + (std::uint64_t{1} << 28));
  EXPECT_EQ(w[2], 0x4004000000000000ull);
  // Keys: the value's structure is in the reduction's key, its constants are not.
  const auto f = cg::ReduceFamily::rows_vector;
  EXPECT_NE(cg::reduce_key(ReduceOp::var, DType::float64, f, &g), cg::reduce_key(ReduceOp::var, DType::float64, f));
  ValueCase k2 = k;
  k2.code[3].imm = 0x3FF0000000000000ull;
  BuiltValue kv2(k2, {10});
  const auto g2 = cg::generate_value(kv2.p);
  EXPECT_EQ(cg::reduce_key(ReduceOp::var, DType::float64, f, &g2),
            cg::reduce_key(ReduceOp::var, DType::float64, f, &g));
  EXPECT_THROW(cg::reduce_source(ReduceOp::var, DType::float32, f, &g), xp::ValueError);  // not the value's dtype
}

// Every fused-value case in every class compiles for sm_90 without a warning, with its kernels.
TEST(CudaReduceSource, FusedValuesCompileForSm90) {
  XP_REQUIRE_NVRTC();
  std::vector<std::pair<ValueCase, cg::ReduceFamily>> tasks;
  for (const ValueCase& c : value_cases())
    for (cg::ReduceFamily f : kFamilies) tasks.emplace_back(c, f);
  const auto failures = run_parallel(tasks.size(), [&](std::size_t i) -> std::string {
    const auto& [c, f] = tasks[i];
    const std::string what = c.what + " " + cg::family_name(f);
    std::string failure;
    try {
      BuiltValue v(c, {64, 256});
      const auto g = cg::generate_value(v.p);
      const std::string src = cg::reduce_source(c.op, g.dtype, f, &g);
      if (src.find("xp_fused_at") == std::string::npos) failure += what + ": no fused load\n";
      xp::Program prog(src, backend_options());
      const auto stats = prog.compile(xp::Arch::sm(90));
      if (stats.log.find("warning") != std::string::npos) failure += what + ":\n" + stats.log;
      const auto names = prog.kernel_names(xp::Arch::sm(90));
      std::vector<std::string> want{cg::reduce_kernel_name(f), cg::reduce_finish_name(true)};
      if (f == cg::ReduceFamily::rows_vector) want.push_back(cg::reduce_kernel_name(f, true));
      for (const std::string& w : want)
        if (std::find(names.begin(), names.end(), w) == names.end()) failure += what + ": " + w + " missing\n";
    } catch (const xp::Error& e) {
      failure += compile_error(what, e);
    }
    return failure;
  });
  for (std::size_t i = 0; i < failures.size() && i < 5; ++i) ADD_FAILURE() << failures[i];
  EXPECT_EQ(failures.size(), 0u) << "of " << tasks.size();
}

// Every (input, output) pair a scan kernel takes: the sum dtype, and an integer's own dtype.
std::vector<std::pair<DType, DType>> scan_pairs() {
  std::vector<std::pair<DType, DType>> pairs;
  for (DType t : kDTypes) {
    const DType sum = xp::detail::reduce_result_dtype(ReduceOp::sum, t);
    pairs.emplace_back(t, sum);
    if (t != DType::bool_ && xp::kind(t) != xp::DTypeKind::floating && t != sum) pairs.emplace_back(t, t);
  }
  return pairs;
}

TEST(CudaReduceSource, EveryScanCompilesForSm90) {
  XP_REQUIRE_NVRTC();
  const auto pairs = scan_pairs();
  EXPECT_EQ(pairs.size(), std::size(kDTypes) + 6);  // int8 to int32, uint8 to uint32 also wrap in their own
  // Every pair as a cumulative sum, then as a cumulative product.
  const auto failures = run_parallel(2 * pairs.size(), [&](std::size_t i) -> std::string {
    const auto [t, o] = pairs[i % pairs.size()];
    const ReduceOp op = i < pairs.size() ? ReduceOp::sum : ReduceOp::prod;
    const std::string what = std::string(op == ReduceOp::sum ? "sum of " : "product of ") + std::string(xp::name(t)) +
                             " to " + std::string(xp::name(o));
    xp::ProgramOptions opt;
    opt.name = "xp_reduce.cu";
    opt.options = cg::nvrtc_options();
    xp::Program prog(cg::scan_source(t, o, op), opt);
    try {
      const auto stats = prog.compile(xp::Arch::sm(90));
      if (stats.log.find("warning") != std::string::npos) return what + ":\n" + stats.log;
      const auto names = prog.kernel_names(xp::Arch::sm(90));
      for (auto f : {cg::ScanFamily::lines, cg::ScanFamily::tiles})
        if (std::find(names.begin(), names.end(), cg::scan_kernel_name(f)) == names.end())
          return what + ": no " + cg::scan_kernel_name(f);
    } catch (const xp::CompileError& e) {
      return what + ":\n" + e.log();
    }
    return std::string();
  });
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

// ---- on a GPU: against the CPU backend ----

namespace {

using xp::Array;
using xp::Axes;
using xp::Slice;
const xp::Device kCpu = xp::Device::cpu();

bool is_float(DType t) {
  return xp::kind(t) == xp::DTypeKind::floating;
}

// The elements of a (any device) as float64 in C order, and the raw bits of each.
std::vector<double> values(const Array& a) {
  return a.to_device(kCpu).astype(DType::float64).to_vector<double>();
}
std::vector<std::uint64_t> raw_bits(const Array& a) {
  Array h = a.to_device(kCpu).copy();
  const std::size_t isz = h.itemsize();
  const auto* p = static_cast<const unsigned char*>(h.data());
  std::vector<std::uint64_t> out(static_cast<std::size_t>(h.size()));
  for (std::size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], p + i * isz, isz);
  return out;
}

// Bit for bit, NaN as a class; with zero_sign_free, +0.0 and -0.0 count as equal (min and max:
// which zero of a tie is returned is not specified, docs/semantics.md).
void expect_same(const Array& g, const Array& c, const std::string& what, bool zero_sign_free = false) {
  ASSERT_EQ(g.device(), xp::Device::cuda(0)) << what;
  ASSERT_EQ(g.dtype(), c.dtype()) << what;
  ASSERT_EQ(std::vector<i64>(g.shape().begin(), g.shape().end()), std::vector<i64>(c.shape().begin(), c.shape().end()))
      << what;
  const auto gb = raw_bits(g), cb = raw_bits(c);
  const auto gv = values(g), cv = values(c);
  for (std::size_t i = 0; i < gb.size(); ++i) {
    if (is_float(g.dtype()) && std::isnan(gv[i]) && std::isnan(cv[i])) continue;
    if (zero_sign_free && gv[i] == 0 && cv[i] == 0) continue;
    if (gb[i] != cb[i]) {
      ADD_FAILURE() << what << ": element " << i << " GPU " << gv[i] << " (0x" << std::hex << gb[i] << "), CPU "
                    << std::dec << cv[i] << " (0x" << std::hex << cb[i] << ")";
      return;
    }
  }
}

// The spacing of dtype t's values at |v| (its ulp).
double ulp(DType t, double v) {
  const int p = t == DType::float16 ? 10 : t == DType::bfloat16 ? 7 : t == DType::float32 ? 23 : 52;
  const int emin = t == DType::float16 ? -14 : t == DType::float64 ? -1022 : -126;
  const int e = v == 0 || !std::isfinite(v) ? emin : std::max(emin, std::ilogb(v));
  return std::ldexp(1.0, e - p);
}

// The bound of docs/semantics.md: |GPU - CPU| <= k ulp of the result (k = 4; 1 for 16-bit results)
// + 4 n u^2 sum|x| (u the accumulation type's unit roundoff, sum|x| over the output's elements,
// `scale`, divided by n for a mean).
void expect_close(const Array& g, const Array& c, const std::vector<double>& scale, i64 n, DType acc,
                  const std::string& what) {
  ASSERT_EQ(g.dtype(), c.dtype()) << what;
  ASSERT_EQ(g.size(), c.size()) << what;
  const auto gv = values(g), cv = values(c);
  const DType t = g.dtype();
  const double k = (t == DType::float16 || t == DType::bfloat16) ? 1 : 4;
  const double u = acc == DType::float64 ? 0x1p-53 : 0x1p-24;
  for (std::size_t i = 0; i < gv.size(); ++i) {
    if (std::isnan(gv[i]) && std::isnan(cv[i])) continue;
    if (std::isinf(cv[i]) && gv[i] == cv[i]) continue;
    const double s = scale.empty() ? 0 : scale[i];
    const double tol =
        k * ulp(t, std::max(std::abs(cv[i]), std::abs(gv[i]))) + 4.0 * static_cast<double>(n) * u * u * s;
    if (!(std::abs(gv[i] - cv[i]) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " GPU " << gv[i] << ", CPU " << cv[i] << ", bound " << tol;
      return;
    }
  }
}

// Inputs: special values first (for float dtypes: NaN, infinities, signed zeros, extremes), then
// seeded normal values of scale 100, converted to t (integers saturate).
Array make_input(DType t, const xp::Shape& shape, std::uint64_t seed, bool specials = true) {
  i64 n = 1;
  for (i64 s : shape) n *= s;
  xp::random::Generator g(seed);
  std::vector<double> v = g.normal({n}, DType::float64, 0, 100, kCpu).to_vector<double>();
  const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e30, -1e30, 65504, -70000, INFINITY, -INFINITY, NAN, 255, -129};
  if (specials)
    for (std::size_t i = 0; i < std::size(special) && static_cast<i64>(i) * 7 < n; ++i) v[i * 7] = special[i];
  return xp::asarray(v, std::nullopt, kCpu).astype(t).reshape(shape);
}

// Values near 1 (floats) or in [-3, 3] (integers): products that neither overflow nor vanish.
Array make_factors(DType t, const xp::Shape& shape, std::uint64_t seed) {
  xp::random::Generator g(seed);
  if (is_float(t)) return g.uniform(shape, DType::float64, 0.95, 1.05, kCpu).astype(t);
  return g.integers(-3, 4, shape, DType::int64, kCpu).astype(t);
}

Array run(ReduceOp op, const Array& a, const std::optional<std::vector<int>>& axes, bool keepdims, int correction) {
  const Axes ax = axes ? Axes(*axes) : Axes();
  switch (op) {
    case ReduceOp::sum:
      return xp::sum(a, ax, keepdims);
    case ReduceOp::prod:
      return xp::prod(a, ax, keepdims);
    case ReduceOp::min:
      return xp::min(a, ax, keepdims);
    case ReduceOp::max:
      return xp::max(a, ax, keepdims);
    case ReduceOp::mean:
      return xp::mean(a, ax, keepdims);
    case ReduceOp::var:
      return xp::var(a, ax, correction, keepdims);
    case ReduceOp::std:
      return xp::std(a, ax, correction, keepdims);
    case ReduceOp::any:
      return xp::any(a, ax, keepdims);
    case ReduceOp::all:
      return xp::all(a, ax, keepdims);
    case ReduceOp::argmin:
    case ReduceOp::argmax: {
      std::optional<int> one;
      if (axes) one = (*axes)[0];
      return op == ReduceOp::argmin ? xp::argmin(a, one, keepdims) : xp::argmax(a, one, keepdims);
    }
  }
  return a;
}

// One op on one input (a CPU array and the same view of its GPU copy), compared as its class says.
void check_op(ReduceOp op, const Array& c, const Array& g, const std::optional<std::vector<int>>& axes, bool keepdims,
              const std::string& where, int correction = 0) {
  const std::string what = std::string(op_name(op)) + " " + std::string(xp::name(c.dtype())) + " " + where;
  Array rc = run(op, c, axes, keepdims, correction), rg = run(op, g, axes, keepdims, correction);
  const DType t = c.dtype();
  const bool float_result = op == ReduceOp::mean || op == ReduceOp::var || op == ReduceOp::std ||
                            ((op == ReduceOp::sum || op == ReduceOp::prod) && is_float(t));
  if (!float_result) {
    expect_same(rg, rc, what, op == ReduceOp::min || op == ReduceOp::max);
    return;
  }
  ASSERT_EQ(std::vector<i64>(rg.shape().begin(), rg.shape().end()),
            std::vector<i64>(rc.shape().begin(), rc.shape().end()))
      << what;
  i64 n = 1;
  const int nd = c.ndim();
  for (int d = 0; d < nd; ++d)
    if (!axes || std::find(axes->begin(), axes->end(), d) != axes->end()) n *= c.shape(d);
  const DType acc = (t == DType::float64 || !is_float(t)) ? DType::float64 : DType::float32;
  if (op == ReduceOp::prod) {  // any order: within 2 (n - 1) u relative of each other
    const auto gv = values(rg), cv = values(rc);
    const double u = acc == DType::float64 ? 0x1p-53 : 0x1p-24;
    for (std::size_t i = 0; i < gv.size(); ++i) {
      if (std::isnan(gv[i]) || std::isnan(cv[i]) || std::isinf(cv[i])) {  // NaN as a class; infinities exactly
        EXPECT_TRUE(std::isnan(gv[i]) ? std::isnan(cv[i]) : gv[i] == cv[i])
            << what << " element " << i << ": " << gv[i] << " vs " << cv[i];
        continue;
      }
      EXPECT_LE(std::abs(gv[i] - cv[i]), 2.0 * static_cast<double>(n) * u * std::abs(cv[i]) + ulp(t, cv[i]))
          << what << " element " << i;
    }
    return;
  }
  if (op == ReduceOp::var || op == ReduceOp::std) {  // one read on the GPU, two passes on the CPU
    const auto gv = values(rg), cv = values(rc);
    const auto mabs = values(xp::mean(xp::abs(c.astype(DType::float64)), axes ? Axes(*axes) : Axes()));
    const double u = acc == DType::float64 ? 0x1p-53 : 0x1p-24, nn = static_cast<double>(n);
    for (std::size_t i = 0; i < gv.size(); ++i) {
      if (std::isnan(gv[i]) && std::isnan(cv[i])) continue;
      if (std::isinf(cv[i]) && gv[i] == cv[i]) continue;
      const double r = std::abs(cv[i]), um = u * mabs[i];
      const double tol = ulp(rc.dtype(), r) +
                         (op == ReduceOp::var ? 16 * u * r + 4 * nn * um * um : 8 * u * r + 2 * std::sqrt(nn) * um);
      if (!(std::abs(gv[i] - cv[i]) <= tol)) {
        ADD_FAILURE() << what << ": element " << i << " GPU " << gv[i] << ", CPU " << cv[i] << ", bound " << tol;
        return;
      }
    }
    return;
  }
  std::vector<double> scale;
  if (op == ReduceOp::sum || op == ReduceOp::mean) {
    Array a64 = xp::abs(c.astype(DType::float64));
    scale = values(op == ReduceOp::sum ? xp::sum(a64, axes ? Axes(*axes) : Axes())
                                       : xp::mean(a64, axes ? Axes(*axes) : Axes()));
  }
  expect_close(rg, rc, scale, n, acc, what);
}

struct Layout {
  std::string name;
  xp::Shape shape;
  std::vector<std::optional<std::vector<int>>> axes;  // nullopt: every axis
  int view = 0;                                       // 0: as is, 1: transposed, 2: sliced [::2, 1::3]
};

std::vector<Layout> layouts() {
  using V = std::vector<int>;
  return {
      {"(1000,)", {1000}, {std::nullopt}},
      {"(37,129)", {37, 129}, {V{0}, V{1}, std::nullopt, V{}}},
      {"(4,5,6)", {4, 5, 6}, {V{0, 2}, V{1}, V{0, 1}}},
      {"(129,37).T", {129, 37}, {V{0}, V{1}, std::nullopt}, 1},
      {"(64,200)[::2,1::3]", {64, 200}, {V{1}, V{0}, std::nullopt}, 2},
      {"(3,2053)", {3, 2053}, {V{1}}},
      {"(70000,)", {70000}, {std::nullopt}},
      {"(5000,3)", {5000, 3}, {V{0}}},
      {"(6,300,5)", {6, 300, 5}, {V{1}, V{0, 2}}},
      // rows_vector with a warp per row (more rows than an H200 has multiprocessors).
      {"(160,256)", {160, 256}, {V{1}, V{0}}},
      // columns in vectors: split (a block per 32 outputs finishing), unsplit over two kept axes,
      // and split more than 256 times (a block per output finishing).
      {"(300,64)", {300, 64}, {V{0}}},
      {"(3,40,32)", {3, 40, 32}, {V{1}}},
      {"(20000,16)", {20000, 16}, {V{0}}},
  };
}

// A shape and the axis a test reduces or scans.
struct ShapeAxis {
  xp::Shape shape;
  int axis;
};

Array view_of(const Array& a, int view) {
  if (view == 1) return a.T();
  if (view == 2) return a.slice({Slice(std::nullopt, std::nullopt, 2), Slice(1, std::nullopt, 3)});
  return a;
}

// Compiles every reduction and scan program for the device on every core, once per process, so
// that the tests below find them in the kernel cache instead of compiling one by one.
void warm_kernel_cache(const xp::Device& gpu) {
  static const std::vector<std::string> failures = [&] {
    const std::vector<SourceTask> tasks = every_source();
    const auto scans = scan_pairs();
    return run_parallel(tasks.size() + scans.size(), [&](std::size_t i) -> std::string {
      const bool scan = i >= tasks.size();
      const std::string source = scan ? cg::scan_source(scans[i - tasks.size()].first, scans[i - tasks.size()].second)
                                      : cg::reduce_source(tasks[i].op, tasks[i].t, tasks[i].f);
      try {
        xp::Program(source, backend_options()).compile(gpu);
      } catch (const xp::Error& e) {
        return compile_error(scan ? "scan" : tasks[i].what(), e);
      }
      return std::string();
    });
  }();
  for (std::size_t i = 0; i < failures.size() && i < 5; ++i) ADD_FAILURE() << failures[i];
}

}  // namespace

TEST(CudaReduceGpu, EveryOpAndDtypeOverAxesAndViewsMatchesTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  warm_kernel_cache(gpu);
  std::uint64_t seed = 1;
  for (const Layout& l : layouts()) {
    for (DType t : kDTypes) {
      const Array base = make_input(t, l.shape, seed++);
      const Array factors = make_factors(t, l.shape, seed++);
      const Array c = view_of(base, l.view), g = view_of(base.to_device(gpu), l.view);
      const Array cf = view_of(factors, l.view), gf = view_of(factors.to_device(gpu), l.view);
      // The specials put a NaN in every float reduction of the whole array: its values are compared
      // on an input without them too.
      const Array plain = make_input(t, l.shape, seed++, false);
      const Array cp = view_of(plain, l.view), gp = view_of(plain.to_device(gpu), l.view);
      for (const auto& axes : l.axes) {
        std::string where = l.name + " axes ";
        if (axes) {
          for (int a : *axes) where += std::to_string(a) + ",";
        } else {
          where += "all";
        }
        for (ReduceOp op : xp::detail::kReduceOps) {
          const bool arg = op == ReduceOp::argmin || op == ReduceOp::argmax;
          if (arg && axes && axes->size() != 1) continue;
          if (op == ReduceOp::prod) {
            check_op(op, cf, gf, axes, false, where);
          } else {
            check_op(op, c, g, axes, false, where);
          }
        }
        check_op(ReduceOp::var, c, g, axes, false, where + " correction 1", 1);
        check_op(ReduceOp::std, c, g, axes, true, where + " correction 1 keepdims", 1);
        check_op(ReduceOp::sum, c, g, axes, true, where + " keepdims");
        if (!axes) {
          for (ReduceOp op : xp::detail::kReduceOps)
            if (op != ReduceOp::prod) check_op(op, cp, gp, axes, false, where + " without specials");
        }
      }
    }
  }
}

TEST(CudaReduceGpu, EmptyArraysGiveTheIdentitiesOrTheCpuErrors) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  warm_kernel_cache(gpu);
  for (DType t : kDTypes) {
    for (const xp::Shape& shape : {xp::Shape{0, 5}, xp::Shape{3, 0}, xp::Shape{0}}) {
      const Array c = xp::zeros(shape, t, kCpu), g = xp::zeros(shape, t, gpu);
      const std::string where = "shape " + std::to_string(shape[0]);
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::mean, ReduceOp::var, ReduceOp::std, ReduceOp::any,
                          ReduceOp::all}) {
        check_op(op, c, g, std::nullopt, false, where);
        if (shape.size() == 2) {
          check_op(op, c, g, std::vector<int>{0}, false, where + " axis 0");
          check_op(op, c, g, std::vector<int>{1}, false, where + " axis 1");
        }
      }
      for (ReduceOp op : {ReduceOp::min, ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax}) {
        std::string cpu_msg, gpu_msg;
        try {
          (void)run(op, c, std::nullopt, false, 0);
        } catch (const xp::ValueError& e) {
          cpu_msg = e.what();
        }
        try {
          (void)run(op, g, std::nullopt, false, 0);
        } catch (const xp::ValueError& e) {
          gpu_msg = e.what();
        }
        EXPECT_FALSE(cpu_msg.empty()) << op_name(op);
        EXPECT_EQ(gpu_msg, cpu_msg) << op_name(op);
      }
    }
  }
}

TEST(CudaReduceGpu, NaNPropagatesAndArgTakesTheFirstIndex) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  warm_kernel_cache(gpu);
  const double nan = NAN;
  // Rows: NaN late, NaN first, all NaN, ties of the extreme (first index), +-0 ties, infinities,
  // rows of -inf and of +inf only (the identities of argmax and argmin). 300 values: rows the
  // 16-bit floats read strided; 320: in vectors, a vector's extreme found first (R::kArgRun).
  for (const i64 W : {i64{300}, i64{320}}) {
    std::vector<double> rows;
    for (int r = 0; r < 8; ++r) {
      for (i64 i = 0; i < W; ++i) rows.push_back(std::sin(static_cast<double>(i * (r + 1))));
    }
    rows[0 * W + 250] = nan;
    rows[0 * W + 251] = nan;
    rows[1 * W + 0] = nan;
    for (i64 i = 0; i < W; ++i) rows[2 * W + i] = nan;
    rows[3 * W + 40] = 7;
    rows[3 * W + 41] = 7;
    rows[3 * W + 290] = 7;
    rows[3 * W + 10] = -7;
    rows[3 * W + 299] = -7;
    for (i64 i = 0; i < W; ++i) rows[4 * W + i] = (i % 3 == 0) ? -0.0 : 0.0;
    rows[5 * W + 100] = INFINITY;
    rows[5 * W + 200] = -INFINITY;
    for (i64 i = 0; i < W; ++i) {
      rows[6 * W + i] = -INFINITY;
      rows[7 * W + i] = INFINITY;
    }
    for (DType t : {DType::float16, DType::bfloat16, DType::float32, DType::float64}) {
      const Array c = xp::asarray(rows, xp::Shape{8, W}, kCpu).astype(t);
      const Array g = c.to_device(gpu);
      for (ReduceOp op : xp::detail::kReduceOps) {
        check_op(op, c, g, std::vector<int>{1}, false, "rows");
        check_op(op, c.T(), g.T(), std::vector<int>{0}, false, "columns");
      }
      expect_same(xp::argmin(g, 1), xp::argmin(c, 1), "argmin");
      const auto am = xp::argmax(g, 1).to_device(kCpu).to_vector<std::int64_t>();
      EXPECT_EQ(am[0], 250);
      EXPECT_EQ(am[1], 0);
      EXPECT_EQ(am[2], 0);
      EXPECT_EQ(am[3], 40);
      EXPECT_EQ(am[4], 0);
      EXPECT_EQ(am[5], 100);
      EXPECT_EQ(am[6], 0);
      const auto an = xp::argmin(g, 1).to_device(kCpu).to_vector<std::int64_t>();
      EXPECT_EQ(an[3], 10);
      EXPECT_EQ(an[7], 0);
    }
  }
}

// The packed kernels of 8- and 16-bit integers (min, max on SIMD words; argmin, argmax searching a
// vector only when its extreme beats the state): rows whose every element is the op's identity,
// the extreme repeated within one vector, across vectors, and only in the tail past the last whole
// vector; a whole array (tiles), rows (a warp each) and columns.
TEST(CudaReduceGpu, PackedSmallIntegersFindTheFirstIndexOfTheExtreme) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  const i64 W = 4099;  // 256 vectors of 16 bytes and a tail of 3 (int8)
  for (DType t : {DType::int8, DType::uint8, DType::int16, DType::uint16}) {
    const bool is_signed = t == DType::int8 || t == DType::int16;
    const double lo = is_signed ? (itemsize(t) == 1 ? -128.0 : -32768.0) : 0.0;
    const double hi = itemsize(t) == 1 ? (is_signed ? 127.0 : 255.0) : (is_signed ? 32767.0 : 65535.0);
    std::vector<double> v(static_cast<std::size_t>(6 * W));
    for (i64 i = 0; i < W; ++i) {
      v[static_cast<std::size_t>(0 * W + i)] = lo;  // all the identity of max: argmax 0
      v[static_cast<std::size_t>(1 * W + i)] = hi;  // all the identity of min: argmin 0
      const double mid = static_cast<double>((i * 37) % 50) + 3;
      for (int r = 2; r < 6; ++r) v[static_cast<std::size_t>(r * W + i)] = mid;
    }
    const auto at = [&](int r, i64 i) -> double& { return v[static_cast<std::size_t>(r * W + i)]; };
    at(2, 21) = at(2, 22) = at(2, 30) = hi;  // twice in one vector (elements 16..31), once more
    at(2, 9) = at(2, 10) = lo;
    at(3, 4000) = at(3, 17) = hi;  // across vectors: the earlier one
    at(3, 4001) = at(3, 2) = lo;
    at(4, W - 1) = hi;  // only in the tail
    at(4, W - 2) = lo;
    at(5, 15) = at(5, 16) = hi;  // the last element of one vector, the first of the next
    at(5, 31) = at(5, 32) = lo;
    const Array c = xp::asarray(v, xp::Shape{6, W}, kCpu).astype(t);
    const Array g = c.to_device(gpu);
    const std::string what = std::string(xp::name(t));
    const auto argmax = xp::argmax(g, 1).to_device(kCpu).to_vector<std::int64_t>();
    const auto argmin = xp::argmin(g, 1).to_device(kCpu).to_vector<std::int64_t>();
    EXPECT_EQ(argmax, (std::vector<std::int64_t>{0, 0, 21, 17, W - 1, 15})) << what;
    EXPECT_EQ(argmin, (std::vector<std::int64_t>{0, 0, 9, 2, W - 2, 31})) << what;
    for (ReduceOp op : {ReduceOp::min, ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax}) {
      check_op(op, c, g, std::vector<int>{1}, false, "rows " + what);
      check_op(op, c.T(), g.T(), std::vector<int>{0}, false, "columns " + what);
      for (int r = 0; r < 6; ++r) {
        const Array cr = c.slice({Slice(r, r + 1)}).reshape({W}), gr = g.slice({Slice(r, r + 1)}).reshape({W});
        check_op(op, cr, gr, std::nullopt, false, "row " + std::to_string(r) + " whole " + what);
      }
    }
    // Many rows: a warp per row.
    const Array many = xp::concat(std::vector<Array>(40, c), 0), gmany = many.to_device(gpu);
    check_op(ReduceOp::argmax, many, gmany, std::vector<int>{1}, false, "240 rows " + what);
    check_op(ReduceOp::max, many, gmany, std::vector<int>{1}, false, "240 rows " + what);
  }
}

// min, max, argmin and argmax of 8-bit integers over the columns of a large array: each thread of
// the columns-in-vectors kernel reads about 600 rows of its 16 columns on an H200 (2.5 GiB, fewer
// threads than rows * columns / 16), so its rows cross runs of 256, the most a lane's row number
// holds. The extremes are placed across those runs: an equal value in a later run must not take the
// index, a strictly better one must. The answers follow from the construction. var and std, which
// add exact integer sums, are compared with the CPU on the same arrays and on 16-bit copies of half
// their columns.
TEST(CudaReduceGpu, PackedColumnsKeepTheFirstIndexAcrossRunsOfRows) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  const i64 N = 16384, M = 163840;
  // Element (r, c): (3 r + 5 c) mod 7 - 3, in [-3, 3]; then for column c by c mod 4:
  //   0: 5 at rows 100, 300 and 530, -5 a row below each: argmax 100, argmin 101;
  //   1: 5 at rows 300 and 530: 300, 301;  2: 5 at rows 530 and 9000: 530, 531;
  //   3: none: the first of rows 0..6 holding 3 (argmax) or -3 (argmin).
  std::vector<std::int8_t> h(static_cast<std::size_t>(N * M));
  for (i64 r = 0; r < N; ++r) {
    std::int8_t* row = h.data() + r * M;
    int m = static_cast<int>((3 * r) % 7);
    for (i64 c = 0; c < M; ++c) {
      row[c] = static_cast<std::int8_t>(m - 3);
      m = m + 5 >= 7 ? m - 2 : m + 5;
    }
  }
  const std::pair<int, std::vector<i64>> marks[] = {{0, {100, 300, 530}}, {1, {300, 530}}, {2, {530, 9000}}};
  for (const auto& [kind, rows] : marks) {
    for (i64 c = kind; c < M; c += 4) {
      for (i64 r : rows) {
        h[static_cast<std::size_t>(r * M + c)] = 5;
        h[static_cast<std::size_t>((r + 1) * M + c)] = -5;
      }
    }
  }
  std::vector<std::int64_t> want_max(static_cast<std::size_t>(M)), want_min(want_max.size());
  for (i64 c = 0; c < M; ++c) {
    const auto j = static_cast<std::size_t>(c);
    if (c % 4 < 3) {
      want_max[j] = marks[c % 4].second[0];
      want_min[j] = want_max[j] + 1;
      continue;
    }
    want_max[j] = want_min[j] = -1;
    for (i64 r = 6; r >= 0; --r) {
      if ((3 * r + 5 * c) % 7 == 6) want_max[j] = r;
      if ((3 * r + 5 * c) % 7 == 0) want_min[j] = r;
    }
  }
  for (DType t : {DType::int8, DType::uint8}) {
    if (t == DType::uint8)
      for (auto& x : h) x = static_cast<std::int8_t>(static_cast<std::uint8_t>(x) ^ 0x80u);  // the same order
    const Array g = xp::asarray(h.data(), t, xp::Shape{N, M}, gpu);
    const std::string what = std::string(xp::name(t));
    EXPECT_EQ(xp::argmax(g, 0).to_device(kCpu).to_vector<std::int64_t>(), want_max) << what;
    EXPECT_EQ(xp::argmin(g, 0).to_device(kCpu).to_vector<std::int64_t>(), want_min) << what;
    const auto mx = xp::max(g, 0).astype(DType::int16).to_device(kCpu).to_vector<std::int16_t>();
    const auto mn = xp::min(g, 0).astype(DType::int16).to_device(kCpu).to_vector<std::int16_t>();
    const int bias = t == DType::uint8 ? 128 : 0;
    for (i64 c = 0; c < M; ++c) {
      const auto j = static_cast<std::size_t>(c);
      ASSERT_EQ(mx[j], (c % 4 < 3 ? 5 : 3) + bias) << what << " column " << c;
      ASSERT_EQ(mn[j], (c % 4 < 3 ? -5 : -3) + bias) << what << " column " << c;
    }
    const Array c = xp::asarray(h.data(), t, xp::Shape{N, M}, kCpu);
    check_op(ReduceOp::var, c, g, std::vector<int>{0}, false, "columns " + what);
    check_op(ReduceOp::std, c, g, std::vector<int>{0}, false, "columns " + what);
    const DType wide = t == DType::int8 ? DType::int16 : DType::uint16;
    const Array c16 = c.slice({Slice(), Slice(0, M / 2)}).astype(wide);
    const Array g16 = c16.to_device(gpu);
    check_op(ReduceOp::var, c16, g16, std::vector<int>{0}, false, "columns " + std::string(xp::name(wide)));
    check_op(ReduceOp::argmax, c16, g16, std::vector<int>{0}, false, "columns " + std::string(xp::name(wide)));
  }
}

TEST(CudaReduceGpu, LargeArraysMatchTheCpuAndRepeatBitForBit) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  warm_kernel_cache(gpu);
  const i64 n = (i64{1} << 26) + 7;
  xp::random::Generator g1(5), g2(5);
  const Array c = g1.uniform({n}, DType::float32, -1, 2, kCpu), g = g2.uniform({n}, DType::float32, -1, 2, gpu);
  expect_same(g, c, "the inputs");
  for (ReduceOp op :
       {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::std, ReduceOp::max, ReduceOp::argmin, ReduceOp::any})
    check_op(op, c, g, std::nullopt, false, "n = 2^26 + 7");
  // The same bits on every run.
  const auto first = raw_bits(xp::sum(g)), second = raw_bits(xp::sum(g));
  EXPECT_EQ(first, second);
  EXPECT_EQ(raw_bits(xp::var(g)), raw_bits(xp::var(g)));
  // Integers, exact.
  const Array ci = g1.integers(-1000, 1000, {n}, DType::int32, kCpu),
              gi = g2.integers(-1000, 1000, {n}, DType::int32, gpu);
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::argmax, ReduceOp::mean})
    check_op(op, ci, gi, std::nullopt, false, "int32 n = 2^26 + 7");
  // Rows and columns of a large matrix.
  const Array c2 = c.slice({Slice(0, i64{1} << 26)}).reshape({i64{1} << 13, i64{1} << 13});
  const Array g2d = g.slice({Slice(0, i64{1} << 26)}).reshape({i64{1} << 13, i64{1} << 13});
  check_op(ReduceOp::sum, c2, g2d, std::vector<int>{0}, false, "2^13 x 2^13 axis 0");
  check_op(ReduceOp::sum, c2, g2d, std::vector<int>{1}, false, "2^13 x 2^13 axis 1");
  check_op(ReduceOp::argmax, c2, g2d, std::vector<int>{0}, false, "2^13 x 2^13 axis 0");
}

// The two warp kernels of rows_vector against the CPU: a warp per whole row of one kept axis
// (xp_rows_each), and the general one (rows split in two; kept axes that do not merge).
TEST(CudaReduceGpu, WarpRowKernelsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  struct Case {
    std::string what;
    xp::Shape shape;
    bool every_other_row;  // [:, ::2] of a 3-d array
    int axis;
  };
  const Case cases[] = {{"(300,1024) axis 1: a warp per row", {300, 1024}, false, 1},
                        {"(1000,4096) axis 1: two splits per row", {1000, 4096}, false, 1},
                        {"(8,40,64)[:, ::2] axis 2: two kept axes", {8, 40, 64}, true, 2}};
  for (const Case& k : cases) {
    for (DType t : {DType::float32, DType::float64, DType::float16, DType::int8, DType::uint8, DType::int16,
                    DType::uint16, DType::bool_}) {
      Array c = make_input(t, k.shape, 21);
      if (k.every_other_row) c = c.slice({Slice(), Slice(std::nullopt, std::nullopt, 2)});
      const Array g = c.to_device(gpu);
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::max, ReduceOp::argmax, ReduceOp::var, ReduceOp::any,
                          ReduceOp::all})
        check_op(op, c, g, std::vector<int>{k.axis}, false, k.what);
    }
  }
}

// var in one read against the exact variance of the float32 values (long double, two passes), for
// data whose mean is 10^4 times their spread: the pairs of floats keep the GPU within a few u of the
// exact value over every kernel (a whole array in tiles, rows, columns in vectors, strided rows,
// scalar columns), where a mean rounded to float32 alone would cost up to (u mean)^2 per element.
TEST(CudaReduceGpu, VarianceInOneReadStaysAccurateForLargeMeans) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  const i64 rows = 1536, cols = 1024;
  xp::random::Generator gen(11);
  const Array c = (gen.normal({rows, cols}, DType::float64, 0, 1, kCpu) + 1e4).astype(DType::float32);
  const Array g = c.to_device(gpu);
  const std::vector<float> x = c.to_vector<float>();
  // The exact variance (correction 1) of the elements x[start + k * step], k < n.
  const auto exact = [&](i64 start, i64 step, i64 n) {
    long double m = 0, q = 0;
    for (i64 k = 0; k < n; ++k) m += x[static_cast<std::size_t>(start + k * step)];
    m /= n;
    for (i64 k = 0; k < n; ++k) {
      const long double e = x[static_cast<std::size_t>(start + k * step)] - m;
      q += e * e;
    }
    return static_cast<double>(q / (n - 1));
  };
  const double u = 0x1p-24;
  const auto check = [&](const Array& got, const std::vector<double>& want, const std::string& what) {
    const std::vector<double> v = values(got);
    ASSERT_EQ(v.size(), want.size()) << what;
    for (std::size_t i = 0; i < v.size(); ++i)
      ASSERT_LE(std::abs(v[i] - want[i]), 12 * u * want[i])
          << what << " output " << i << ": " << v[i] << " vs " << want[i];
  };
  check(xp::var(g, Axes(), 1), {exact(0, 1, rows * cols)}, "whole");
  std::vector<double> by_row, by_col;
  for (i64 r = 0; r < rows; ++r) by_row.push_back(exact(r * cols, 1, cols));
  for (i64 k = 0; k < cols; ++k) by_col.push_back(exact(k, cols, rows));
  check(xp::var(g, Axes{1}, 1), by_row, "rows");
  check(xp::var(g, Axes{0}, 1), by_col, "columns in vectors");
  std::vector<double> by_row_from_1;
  for (i64 r = 0; r < rows; ++r) by_row_from_1.push_back(exact(r * cols + 1, 1, cols - 1));
  const Array shifted = g.slice({Slice(std::nullopt, std::nullopt), Slice(1, std::nullopt)});  // misaligned rows
  check(xp::var(shifted, Axes{1}, 1), by_row_from_1, "rows from element 1 (rows_strided)");
  const Array odd = g.slice({Slice(std::nullopt, std::nullopt), Slice(0, 1023)});  // scalar columns
  by_col.pop_back();
  check(xp::var(odd, Axes{0}, 1), by_col, "scalar columns");
}

// float16 sums and means add in double on the GPU (docs/semantics.md): with sum|x| below 2^29 every
// partial sum is exact, so the sum is the exact sum rounded to float32 and then to float16, bit for
// bit, and the mean the exact sum divided by n in double, rounded the same way, whatever the kernel
// (tiles, warps, columns in vectors, scalar columns, strided rows) and its order. Subnormals, the
// largest float16 and values of every scale are in the input; the host's reference adds in double,
// which is exact for the same reason.
TEST(CudaReduceGpu, Float16SumsAreTheExactSumRoundedOnce) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  const i64 rows = 1500, cols = 1003;
  xp::random::Generator gen(23);
  std::vector<double> v = gen.normal({rows * cols}, DType::float64, 0, 1, kCpu).to_vector<double>();
  const std::vector<double> scale = gen.uniform({rows * cols}, DType::float64, -24, 12, kCpu).to_vector<double>();
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = std::clamp(std::ldexp(v[i], static_cast<int>(scale[i])), -65504.0, 65504.0);
  v[17] = 65504;
  v[18] = -65504;
  v[19] = 0x1p-24;  // the smallest subnormal
  v[20] = -0x1p-20;
  const Array c = xp::asarray(v, xp::Shape{rows, cols}, kCpu).astype(DType::float16);
  const std::vector<double> h = c.astype(DType::float64).to_vector<double>();  // the float16 values
  double abs_sum = 0;
  for (double x : h) abs_sum += std::abs(x);
  ASSERT_LT(abs_sum, 0x1p29) << "the exactness argument needs sum|x| < 2^29";
  const Array g = c.to_device(gpu);
  // float64 -> float32 -> float16, as the kernel stores (the CPU backend's conversions).
  const auto rounded = [](const std::vector<double>& exact) {
    return xp::asarray(exact, xp::Shape{static_cast<i64>(exact.size())}, kCpu)
        .astype(DType::float32)
        .astype(DType::float16)
        .astype(DType::float64)
        .to_vector<double>();
  };
  const auto check = [&](const Array& got, const std::vector<double>& exact, const std::string& what) {
    const std::vector<double> want = rounded(exact), have = values(got);
    ASSERT_EQ(have.size(), want.size()) << what;
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(have[i], want[i]) << what << ", output " << i << " (exact " << exact[i] << ")";
  };
  // The exact sums (or means) of h[o * out_step + first + k * step], k < n, for each output o.
  const auto sums = [&](i64 outputs, i64 out_step, i64 first, i64 n, i64 step, bool mean) {
    std::vector<double> r;
    for (i64 o = 0; o < outputs; ++o) {
      double s = 0;
      for (i64 k = 0; k < n; ++k) s += h[static_cast<std::size_t>(o * out_step + first + k * step)];
      r.push_back(mean ? s / static_cast<double>(n) : s);
    }
    return r;
  };
  for (bool mean : {false, true}) {
    const std::string op = mean ? "mean" : "sum";
    const auto reduce = [&](const Array& a, const Axes& axes) { return mean ? xp::mean(a, axes) : xp::sum(a, axes); };
    check(reduce(g, Axes()), sums(1, 0, 0, rows * cols, 1, mean), op + " of everything (tiles)");
    check(reduce(g, Axes{1}), sums(rows, cols, 0, cols, 1, mean), op + " of rows (warps)");
    check(reduce(g, Axes{0}), sums(cols, 1, 0, rows, cols, mean), op + " of 1003 columns (scalar kernel)");
    const Array even = g.slice({Slice(std::nullopt, std::nullopt), Slice(0, 1000)}).copy();  // rows of 2000 bytes
    ASSERT_TRUE(even.is_c_contiguous());
    check(reduce(even, Axes{0}), sums(1000, 1, 0, rows, cols, mean), op + " of 1000 columns (in vectors)");
    const Array shifted = g.slice({Slice(std::nullopt, std::nullopt), Slice(1, std::nullopt)});  // rows_strided
    check(reduce(shifted, Axes{1}), sums(rows, cols, 1, cols - 1, 1, mean), op + " of rows from element 1");
  }
}

// Tiles (a block per rows_vector unit: fewer outputs than multiprocessors) over lengths around a
// block's vector count and the split boundaries, one row and three, every dtype. The same extreme is
// planted at both sides of every 512-element boundary (each tile chunk is a multiple of 512
// elements), so argmax must keep the first index across the splits; float sums within their bound
// and the same bits on a second run.
// Columns in vectors (a thread per 16 bytes of adjacent outputs): unsplit, split and finished by a
// block per 32 outputs, split more than 256 times and finished by a block per output, and over two
// kept axes; the same columns from a misaligned view take the scalar kernel. Every answer as the
// CPU's; argmax finds the first of equal extremes planted in every column, across splits.
TEST(CudaReduceGpu, ColumnsInVectorsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  warm_kernel_cache(gpu);
  const ShapeAxis cases[] = {{{40, 64}, 0}, {{300, 64}, 0}, {{20000, 16}, 0}, {{3, 40, 32}, 1}};
  std::uint64_t seed = 300;
  for (const ShapeAxis& k : cases) {
    i64 n = 1;
    for (i64 d : k.shape) n *= d;
    xp::random::Generator r(seed++);
    std::vector<double> v = r.normal({n}, DType::float64, 0, 20, kCpu).to_vector<double>();
    const i64 rows = k.shape[static_cast<std::size_t>(k.axis)], inner = k.shape.back();
    // 120 (six standard deviations) at rows 7 and rows - 2 of every column: argmax is 7.
    for (i64 i = 0; i < n; ++i) {
      const i64 row = k.axis == 0 ? i / inner : (i / inner) % rows;
      if (row == 7 || row == rows - 2) v[static_cast<std::size_t>(i)] = 120;
    }
    const Array base = xp::asarray(v, k.shape, kCpu);
    std::string where = "shape " + std::to_string(k.shape[0]) + "x" + std::to_string(k.shape[1]);
    where += " axis " + std::to_string(k.axis);
    for (DType t : {DType::float32, DType::float64, DType::float16, DType::int8, DType::int16, DType::uint8}) {
      const Array c = base.astype(t), g = c.to_device(gpu);
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::std, ReduceOp::max, ReduceOp::min,
                          ReduceOp::argmax, ReduceOp::argmin, ReduceOp::any})
        check_op(op, c, g, std::vector<int>{k.axis}, false, where);
      check_op(ReduceOp::var, c, g, std::vector<int>{k.axis}, true, where + " correction 1 keepdims", 1);
      const bool signed_values = t != DType::uint8;
      if (signed_values) {
        const auto am = xp::argmax(g, k.axis).to_device(kCpu).to_vector<std::int64_t>();
        for (std::size_t j = 0; j < am.size(); ++j)
          EXPECT_EQ(am[j], 7) << xp::name(t) << " " << where << " output " << j;
      }
      EXPECT_EQ(raw_bits(xp::sum(g, k.axis)), raw_bits(xp::sum(g, k.axis))) << xp::name(t) << " " << where;
      if (k.axis == 0) {
        // The columns but the first: rows no longer 16-byte aligned in full, the scalar kernel.
        const Array cs = c.slice({Slice(), Slice(1, std::nullopt)}), gs = g.slice({Slice(), Slice(1, std::nullopt)});
        for (ReduceOp op : {ReduceOp::sum, ReduceOp::var, ReduceOp::argmax})
          check_op(op, cs, gs, std::vector<int>{0}, false, where + " [:, 1:]");
      }
    }
  }
}

// Columns over few rows (the plans of CudaReducePlan.ColumnsOverFewRowsKeepTheirStatesSmall): no
// split, two or four; blocks of kColsSmallBlock; a thread per output finishing the states.
TEST(CudaReduceGpu, ColumnsOverFewRowsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  warm_kernel_cache(gpu);
  std::uint64_t seed = 900;
  for (const xp::Shape& shape : {xp::Shape{64, 65536}, xp::Shape{40, 131072}}) {
    xp::random::Generator r(seed++);
    std::vector<double> v = r.normal({shape[0] * shape[1]}, DType::float64, 0, 20, kCpu).to_vector<double>();
    for (i64 j = 0; j < shape[1]; ++j) v[static_cast<std::size_t>(7 * shape[1] + j)] = 120;  // argmax: row 7
    const Array base = xp::asarray(v, shape, kCpu);
    const std::string where = "shape " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + " axis 0";
    for (DType t : {DType::float32, DType::float16, DType::bfloat16, DType::int8, DType::uint8}) {
      const Array c = base.astype(t), g = c.to_device(gpu);
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::std, ReduceOp::max, ReduceOp::argmax,
                          ReduceOp::argmin, ReduceOp::any, ReduceOp::all})
        check_op(op, c, g, std::vector<int>{0}, false, where);
      EXPECT_EQ(raw_bits(xp::var(g, 0)), raw_bits(xp::var(g, 0))) << xp::name(t) << " " << where;
      if (t != DType::uint8) {
        const auto am = xp::argmax(g, 0).to_device(kCpu).to_vector<std::int64_t>();
        i64 wrong = 0;
        for (const std::int64_t i : am) wrong += i == 7 ? 0 : 1;
        EXPECT_EQ(wrong, 0) << xp::name(t) << " " << where;
      }
    }
    const Array b = (base > 30.0).to_device(gpu);  // bool: any and all of 16 bytes a vector
    for (ReduceOp op : {ReduceOp::any, ReduceOp::all, ReduceOp::sum})
      check_op(op, b.to_device(kCpu), b, std::vector<int>{0}, false, where + " bool");
  }
}

TEST(CudaReduceGpu, TilesMatchTheCpuAroundSplitBoundaries) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  warm_kernel_cache(gpu);
  std::uint64_t seed = 100;
  for (const i64 n : {i64{1}, i64{3}, i64{255}, i64{1024}, i64{1025}, i64{2048}, i64{2049}, i64{5000},
                      i64{3 * 65536 + 5}, i64{1} << 21}) {
    for (const i64 rows : {i64{1}, i64{3}}) {
      if (n == (i64{1} << 21) && rows == 3) continue;
      xp::random::Generator r(seed++);
      std::vector<double> v = r.normal({rows * n}, DType::float64, 0, 20, kCpu).to_vector<double>();
      for (i64 row = 0; row < rows; ++row)
        for (i64 k = 511; k < n; k += 512) {
          v[static_cast<std::size_t>(row * n + k)] = 120;  // six standard deviations
          if (k + 1 < n) v[static_cast<std::size_t>(row * n + k + 1)] = 120;
        }
      const Array base = xp::asarray(v, xp::Shape{rows, n}, kCpu);
      for (DType t : kDTypes) {
        const Array c = base.astype(t), g = c.to_device(gpu);
        std::string where = "(";  // appended piece by piece: g++ 12 warns (-Wrestrict) on "(" + ...
        where += std::to_string(rows);
        where += ",";
        where += std::to_string(n);
        where += ") axis 1";
        for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::max, ReduceOp::min,
                            ReduceOp::argmax, ReduceOp::argmin, ReduceOp::any, ReduceOp::all})
          check_op(op, c, g, std::vector<int>{1}, false, where);
        if (rows == 1) check_op(ReduceOp::sum, c, g, std::nullopt, false, where + " all");
        EXPECT_EQ(raw_bits(xp::sum(g, 1)), raw_bits(xp::sum(g, 1))) << xp::name(t) << " " << where;
        const bool signed_values = t != DType::bool_ && t != DType::uint8 && t != DType::uint16 && t != DType::uint32 &&
                                   t != DType::uint64;  // negatives wrap to large
        if (n >= 512 && signed_values) {
          const auto am = xp::argmax(g, 1).to_device(kCpu).to_vector<std::int64_t>();
          for (i64 row = 0; row < rows; ++row)
            EXPECT_EQ(am[static_cast<std::size_t>(row)], 511) << xp::name(t) << " " << where << " row " << row;
        }
      }
    }
  }
}

// The one-pass finish (one_pass_finish): split outputs finished by the unit that stores their last
// state, elected by counters that must be zero before every launch. Many launches queued at once on
// two streams (their counter blocks handed between them by the stream-ordered cache) and on the
// default stream: every result has the bits of the first, and exact ops the CPU's.
TEST(CudaReduceGpu, OnePassFinishIsRepeatableAcrossStreams) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  warm_kernel_cache(gpu);
  struct Case {
    xp::Shape shape;
    std::optional<int> axis;
  };
  // tiles with few states (4 rows of 4 MiB: a warp finishes), tiles with many (the whole array: a
  // block finishes), warps (1000 rows of 16 KiB: two states each), and one output without splits.
  const Case cases[] = {{{4, i64{1} << 20}, 1}, {{i64{1} << 22}, std::nullopt}, {{1000, 4096}, 1}, {{64, 64}, 1}};
  std::uint64_t seed = 7;
  for (const Case& k : cases) {
    xp::random::Generator r(seed++);
    const Array c = r.normal(k.shape, DType::float32, 0, 10, kCpu);
    const Array g = c.to_device(gpu);
    const std::optional<std::vector<int>> axes =
        k.axis ? std::optional<std::vector<int>>{std::vector<int>{*k.axis}} : std::nullopt;
    const auto reduce = [&](ReduceOp op) { return run(op, g, axes, false, 0); };
    std::string shape;
    for (const i64 d : k.shape) shape += std::to_string(d) + " ";
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::argmax}) {
      const std::string where = std::string(op_name(op)) + " shape " + shape;
      const Array first = reduce(op);
      const auto want = raw_bits(first);
      if (op != ReduceOp::sum) check_op(op, c, g, axes, false, where);  // exact: the CPU's bits
      std::vector<Array> results;
      {
        const xp::Stream s1(gpu), s2(gpu);
        for (int i = 0; i < 8; ++i) {
          {
            const xp::StreamScope in(i % 2 == 0 ? s1 : s2);
            results.push_back(reduce(op));
          }
          results.push_back(reduce(op));  // the default stream, between them
        }
        s1.synchronize();
        s2.synchronize();
      }
      for (std::size_t i = 0; i < results.size(); ++i) EXPECT_EQ(raw_bits(results[i]), want) << where << " #" << i;
    }
  }
}

TEST(CudaReduceGpu, CumulativeSumMatchesTheCpuBitForBit) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  warm_kernel_cache(gpu);
  const ShapeAxis cases[] = {{{5000}, 0},     {{300, 257}, 0},   {{300, 257}, 1}, {{40000, 3}, 0},
                             {{40000, 3}, 1}, {{20000, 100}, 1}, {{0, 4}, 1},     {{4, 0}, 1}};
  std::uint64_t seed = 100;
  for (DType t : kDTypes) {
    for (const ShapeAxis& k : cases) {
      const Array c = make_input(t, k.shape, seed++, false);
      const Array g = c.to_device(gpu);
      for (bool initial : {false, true}) {
        const std::string what = std::string("cumulative_sum ") + std::string(xp::name(t)) + " axis " +
                                 std::to_string(k.axis) + " of " + std::to_string(k.shape[0]) +
                                 (initial ? " include_initial" : "");
        expect_same(xp::cumulative_sum(g, k.axis, std::nullopt, initial),
                    xp::cumulative_sum(c, k.axis, std::nullopt, initial), what);
        if (t != DType::bool_ && xp::kind(t) != xp::DTypeKind::floating) {  // wrapping in the input's dtype
          const Array own = xp::cumulative_sum(g, k.axis, t, initial);
          EXPECT_EQ(own.dtype(), t) << what;
          expect_same(own, xp::cumulative_sum(c, k.axis, t, initial), what + " dtype=" + std::string(xp::name(t)));
        }
      }
      if (k.shape.size() == 2) {  // a transposed view
        expect_same(xp::cumulative_sum(g.T(), 1 - k.axis), xp::cumulative_sum(c.T(), 1 - k.axis),
                    std::string("cumulative_sum of a transpose ") + std::string(xp::name(t)));
      }
    }
  }
}

// Products run in the scans' kernels with * for +: the CPU's order, so the same bits (integers wrap,
// floats overflow to inf and underflow to 0 exactly where the CPU's running product does).
TEST(CudaReduceGpu, CumulativeProdMatchesTheCpuBitForBit) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  const ShapeAxis cases[] = {{{5000}, 0},     {{300, 257}, 0},  {{300, 257}, 1}, {{40000, 3}, 0},
                             {{40000, 3}, 1}, {{2000, 100}, 1}, {{0, 4}, 1},     {{4, 0}, 1}};
  std::uint64_t seed = 500;
  for (DType t : kDTypes) {
    for (const ShapeAxis& k : cases) {
      const Array c = make_input(t, k.shape, seed++, false);
      const Array g = c.to_device(gpu);
      for (bool initial : {false, true}) {
        const std::string what = std::string("cumulative_prod ") + std::string(xp::name(t)) + " axis " +
                                 std::to_string(k.axis) + " of " + std::to_string(k.shape[0]) +
                                 (initial ? " include_initial" : "");
        expect_same(xp::cumulative_prod(g, k.axis, std::nullopt, initial),
                    xp::cumulative_prod(c, k.axis, std::nullopt, initial), what);
        if (t != DType::bool_ && xp::kind(t) != xp::DTypeKind::floating)
          expect_same(xp::cumulative_prod(g, k.axis, t, initial), xp::cumulative_prod(c, k.axis, t, initial),
                      what + " dtype=" + std::string(xp::name(t)));
      }
      if (k.shape.size() == 2) {
        expect_same(xp::cumulative_prod(g.T(), 1 - k.axis), xp::cumulative_prod(c.T(), 1 - k.axis),
                    std::string("cumulative_prod of a transpose ") + std::string(xp::name(t)));
      }
    }
  }
}

// A lazy elementwise value reduced on the device runs in the reduction's own kernels: the same bits
// as evaluating it first and reducing the result (the same plan), without the value ever stored
// (the peak memory grows by far less than the value's size).
TEST(CudaReduceGpu, FusedElementwiseValuesReduceInOnePassWithTheSameBits) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0);
  xp::random::Generator rng(7);
  const Array a = rng.uniform({1000, 4096}, DType::float32, -2, 2, gpu);
  const Array b = rng.uniform({1000, 4096}, DType::float32, -2, 2, gpu);
  const Array ia = rng.integers(0, 1000, {1000, 4096}, DType::int32, gpu);
  using V = std::vector<int>;
  const std::vector<std::optional<V>> axes = {std::nullopt, V{1}, V{0}};
  for (ReduceOp op : xp::detail::kReduceOps) {
    for (const auto& ax : axes) {
      if ((op == ReduceOp::argmin || op == ReduceOp::argmax) && ax && ax->size() != 1) continue;
      const std::string where = ax ? (ax->empty() ? "()" : "axis " + std::to_string((*ax)[0])) : "all";
      // A float value with a constant; an integer value; a bool value (any/all of a comparison); an
      // int8 value (min, max, argmin and argmax on packed words, computed by the value).
      const Array fv = a * b + 1.5f;
      const Array iv = ia * 3 - 7;
      const Array bv = a > b;
      const Array sv = ia.astype(DType::int8) + 1;
      for (const Array* v : {&fv, &iv, &bv, &sv}) {
        if (v == &bv && op != ReduceOp::any && op != ReduceOp::all) continue;
        Array stored = *v + 0;  // the same value, evaluated into memory first
        stored.eval();
        const Array fused = run(op, *v, ax, false, 1);
        expect_same(fused, run(op, stored, ax, false, 1),
                    std::string(op_name(op)) + " " + std::string(xp::name(v->dtype())) + " " + where, true);
      }
    }
  }
  // Nothing of the value's size allocated: 16 MB of float32 reduced, far less than that in use.
  Array warm = xp::sum(a * b);
  warm.eval();
  (void)warm.item<float>();
  xp::reset_peak(gpu);
  const std::uint64_t before = xp::memory_stats(gpu).bytes_in_use;
  const float s = xp::sum(a * b).item<float>();
  const std::uint64_t peak = xp::memory_stats(gpu).peak_bytes_in_use;
  EXPECT_LT(peak - before, std::uint64_t{4} << 20) << "peak " << peak << ", before " << before;
  Array stored = a * b;
  stored.eval();
  EXPECT_EQ(xp::sum(stored).item<float>(), s);
}
