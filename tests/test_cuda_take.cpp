// Device take (white-box: src/backend/cuda/take_source).
//
// Without a GPU: plan_take against hand-computed dimensions and strides (axis first, last and in the
// middle, 0-d and 2-d indices, negative and zero strides, merging, empty outputs) and its fallback
// decisions (too many dimensions, misaligned data) and checks; the plan executed on the host the way
// the kernel executes it, against the CPU backend's take over random layouts; the argument and the
// grid; the source of every element size compiles with NVRTC for sm_75 and sm_90, and its
// static_assert holds the kernel's argument to the host's TakeArgs.
// With a GPU (CudaTakeGpu.*): the CUDA backend's take against the CPU backend's, byte for byte
// (the output's gaps included), over every element size and random layouts (transposed, sliced with
// negative steps, broadcast input and indices, strided outputs), the host fallbacks, a large take,
// more than 2^32 elements, an empty result; and the kernel is compiled, so the device ran it.
//
// Every test process gets its own empty kernel cache folder, as in test_compile.cpp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/ew_source.hpp"
#include "backend/cuda/take_source.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::DType;
using xp::detail::View;
namespace cg = xp::detail::cuda;
using i64 = std::int64_t;

const xp_test::ProcessCache g_process_cache;  // this process's kernel cache

// The program name of the compile checks below: not the backend's, so that the kernel cache tells
// the backend's programs apart from these.
constexpr const char* kCheckProgram = "xp_take_check.cu";

// A view of a shape over an address that is never read (planning only); strides in bytes, C order
// when empty.
struct FakeView {
  std::vector<i64> shape, strides;
  View v;
  FakeView(DType t, std::vector<i64> shape_, std::vector<i64> byte_strides = {}, std::uintptr_t address = 1 << 20)
      : shape(std::move(shape_)), strides(std::move(byte_strides)) {
    const i64 isz = static_cast<i64>(xp::itemsize(t));
    if (strides.empty()) {
      strides.resize(shape.size());
      i64 s = isz;
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        strides[d] = s;
        s *= shape[d];
      }
    }
    v.data = reinterpret_cast<std::byte*>(address);
    v.dtype = t;
    v.ndim = static_cast<int>(shape.size());
    v.shape = shape.data();
    v.strides = strides.data();
  }
  FakeView(const FakeView&) = delete;
};

// out's shape for take(in, indices, axis).
std::vector<i64> take_shape(const FakeView& in, const FakeView& ix, int axis) {
  std::vector<i64> s(in.shape.begin(), in.shape.begin() + axis);
  s.insert(s.end(), ix.shape.begin(), ix.shape.end());
  s.insert(s.end(), in.shape.begin() + axis + 1, in.shape.end());
  return s;
}

constexpr std::uintptr_t kIn = 1 << 20, kIdx = 1 << 24, kOut = 1 << 28;

void expect_dims(const cg::TakePlan& p, const std::vector<cg::TakeDim>& want, const std::string& what) {
  ASSERT_EQ(p.nd, static_cast<int>(want.size())) << what;
  for (int d = 0; d < p.nd; ++d) {
    EXPECT_EQ(p.dims[d].size, want[d].size) << what << " dim " << d;
    EXPECT_EQ(p.dims[d].out, want[d].out) << what << " dim " << d << " out stride";
    EXPECT_EQ(p.dims[d].in, want[d].in) << what << " dim " << d << " in stride";
    EXPECT_EQ(p.dims[d].idx, want[d].idx) << what << " dim " << d << " indices stride";
  }
}

}  // namespace

// ---- planning (no GPU) ----

TEST(CudaTakePlan, MiddleAxisWithOneDimensionalIndices) {
  // in float32 (4, 5, 6) C order: strides (120, 24, 4); indices (3,); out (4, 3, 6): (72, 24, 4).
  FakeView in(DType::float32, {4, 5, 6}, {}, kIn), ix(DType::int64, {3}, {}, kIdx);
  FakeView out(DType::float32, take_shape(in, ix, 1), {}, kOut);
  const cg::TakePlan p = cg::plan_take(in.v, ix.v, 1, out.v);
  EXPECT_TRUE(p.on_device);
  EXPECT_EQ(p.n, 72);
  EXPECT_EQ(p.element_size, 4);
  EXPECT_EQ(p.axis, 24);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.in), kIn);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.indices), kIdx);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.out), kOut);
  // Nothing merges: in's stride 120 is not 0 * 3, the index dimension's 0 is not 4 * 6.
  expect_dims(p, {{4, 72, 120, 0}, {3, 24, 0, 8}, {6, 4, 4, 0}}, "(4,5,6)[:, ix]");
}

TEST(CudaTakePlan, FirstAxisAndLastAxisWithTwoDimensionalIndices) {
  {
    // in float64 (10, 6): (48, 8); indices (4,); out (4, 6): (48, 8).
    FakeView in(DType::float64, {10, 6}, {}, kIn), ix(DType::int64, {4}, {}, kIdx);
    FakeView out(DType::float64, take_shape(in, ix, 0), {}, kOut);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, 0, out.v);
    EXPECT_TRUE(p.on_device);
    EXPECT_EQ(p.n, 24);
    EXPECT_EQ(p.element_size, 8);
    EXPECT_EQ(p.axis, 48);
    expect_dims(p, {{4, 48, 0, 8}, {6, 8, 8, 0}}, "axis 0");
  }
  {
    // in int16 (3, 7): (14, 2); indices (2, 5): (40, 8); out (3, 2, 5): (20, 10, 2). The two index
    // dimensions merge (10 = 2 * 5, 0 = 0 * 5, 40 = 8 * 5); in's dimension does not (14 != 0).
    FakeView in(DType::int16, {3, 7}, {}, kIn), ix(DType::int64, {2, 5}, {}, kIdx);
    FakeView out(DType::int16, take_shape(in, ix, 1), {}, kOut);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, 1, out.v);
    EXPECT_TRUE(p.on_device);
    EXPECT_EQ(p.n, 30);
    EXPECT_EQ(p.element_size, 2);
    EXPECT_EQ(p.axis, 2);
    expect_dims(p, {{3, 20, 14, 0}, {10, 2, 0, 8}}, "axis -1, indices (2, 5)");
  }
  {
    // Transposed indices (5, 2) of a (2, 5) block: strides (8, 40) do not merge.
    FakeView in(DType::uint8, {3, 7}, {}, kIn), ix(DType::int64, {5, 2}, {8, 40}, kIdx);
    FakeView out(DType::uint8, take_shape(in, ix, 1), {}, kOut);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, 1, out.v);
    EXPECT_TRUE(p.on_device);
    EXPECT_EQ(p.axis, 1);
    expect_dims(p, {{3, 10, 7, 0}, {5, 2, 0, 8}, {2, 1, 0, 40}}, "transposed indices");
  }
}

TEST(CudaTakePlan, ZeroDimensionalIndicesAndSizeOneDimensions) {
  {
    // in uint8 (4, 5): (5, 1); indices 0-d; out (4,): (1,).
    FakeView in(DType::uint8, {4, 5}, {}, kIn), ix(DType::int64, {}, {}, kIdx);
    FakeView out(DType::uint8, take_shape(in, ix, 1), {}, kOut);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, 1, out.v);
    EXPECT_TRUE(p.on_device);
    EXPECT_EQ(p.n, 4);
    EXPECT_EQ(p.axis, 1);
    expect_dims(p, {{4, 1, 5, 0}}, "0-d indices");
  }
  {
    // in (7,), 0-d indices: a 0-d out, one element, no dimensions.
    FakeView in(DType::int32, {7}, {}, kIn), ix(DType::int64, {}, {}, kIdx);
    FakeView out(DType::int32, {}, {}, kOut);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, 0, out.v);
    EXPECT_TRUE(p.on_device);
    EXPECT_EQ(p.n, 1);
    EXPECT_EQ(p.axis, 4);
    expect_dims(p, {}, "0-d out");
  }
  {
    // Size-1 dimensions are dropped, their strides (here unaligned) ignored; an axis of size 1 has
    // stride 0 (every index is 0).
    FakeView in(DType::float32, {1, 1, 6}, {3, 5, 4}, kIn), ix(DType::int64, {2, 1}, {8, 3}, kIdx);
    FakeView out(DType::float32, take_shape(in, ix, 1), {7, 48, 1, 4}, kOut);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, 1, out.v);
    EXPECT_TRUE(p.on_device);
    EXPECT_EQ(p.n, 12);
    EXPECT_EQ(p.axis, 0);
    expect_dims(p, {{2, 48, 0, 8}, {6, 4, 4, 0}}, "size-1 dimensions");
  }
}

TEST(CudaTakePlan, NegativeAndZeroStrides) {
  {
    // in float32 (6, 8) flipped along axis 1: (32, -4), data at its last column; indices (3,)
    // reversed: -8; out (3, 8) with rows reversed: (-32, 4).
    FakeView in(DType::float32, {6, 8}, {32, -4}, kIn + 28), ix(DType::int64, {3}, {-8}, kIdx + 16);
    FakeView out(DType::float32, take_shape(in, ix, 0), {-32, 4}, kOut + 64);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, 0, out.v);
    EXPECT_TRUE(p.on_device);
    EXPECT_EQ(p.axis, 32);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.in), kIn + 28);
    expect_dims(p, {{3, -32, 0, -8}, {8, 4, -4, 0}}, "flipped");
  }
  {
    // in float32 (2, 3, 4) flipped along every axis: (-48, -16, -4); 0-d indices on axis 0; out (3, 4)
    // C order: the two kept dimensions merge, negative strides included (16 = 4 * 4, -16 = -4 * 4).
    FakeView in(DType::float32, {2, 3, 4}, {-48, -16, -4}, kIn + 92), ix(DType::int64, {}, {}, kIdx);
    FakeView out(DType::float32, take_shape(in, ix, 0), {}, kOut);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, 0, out.v);
    EXPECT_TRUE(p.on_device);
    EXPECT_EQ(p.axis, -48);
    expect_dims(p, {{12, 4, -4, 0}}, "flipped, merged");
  }
  {
    // A broadcast input (4, 9, 2): (0, 2, 1) and broadcast indices (5, 3): (0, 8) on axis 1; out
    // (4, 5, 3, 2) C order: (30, 6, 2, 1). Dimension 1 merges into 0 (out 30 = 6 * 5, in 0 = 0 * 5,
    // indices 0 = 0 * 5): (20, 6, 0, 0). Dimension 2 stays (indices 0 != 8 * 3), and so does 3 (in
    // 0 != 1 * 2).
    FakeView in(DType::int8, {4, 9, 2}, {0, 2, 1}, kIn), ix(DType::int64, {5, 3}, {0, 8}, kIdx);
    FakeView out(DType::int8, take_shape(in, ix, 1), {}, kOut);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, 1, out.v);
    EXPECT_TRUE(p.on_device);
    EXPECT_EQ(p.axis, 2);
    expect_dims(p, {{20, 6, 0, 0}, {3, 2, 0, 8}, {2, 1, 1, 0}}, "broadcast");
  }
}

TEST(CudaTakePlan, EightDimensionsRunOnTheDeviceNineOnTheHost) {
  // in (2,)*k with increasing strides (reversed order: nothing merges), 0-d indices on the last axis:
  // out has k - 1 dimensions.
  for (int k : {9, 10}) {
    std::vector<i64> shape(k, 2), strides(k);
    for (int d = 0; d < k; ++d) strides[d] = i64{4} << d;
    FakeView in(DType::float32, shape, strides, kIn), ix(DType::int64, {}, {}, kIdx);
    FakeView out(DType::float32, take_shape(in, ix, k - 1), {}, kOut);
    const cg::TakePlan p = cg::plan_take(in.v, ix.v, k - 1, out.v);
    EXPECT_EQ(p.nd, k - 1) << k;
    EXPECT_EQ(p.on_device, k - 1 <= cg::kMaxTakeDims) << k;
  }
  // Twenty dimensions that merge into one stay on the device.
  std::vector<i64> shape(20, 2);
  FakeView in(DType::float32, shape, {}, kIn), ix(DType::int64, {}, {}, kIdx);
  FakeView out(DType::float32, take_shape(in, ix, 0), {}, kOut);
  const cg::TakePlan p = cg::plan_take(in.v, ix.v, 0, out.v);
  EXPECT_TRUE(p.on_device);
  expect_dims(p, {{i64{1} << 19, 4, 4, 0}}, "merged");
  EXPECT_EQ(p.axis, i64{4} << 19);
}

TEST(CudaTakePlan, MisalignedDataStaysOnTheHost) {
  struct Case {
    std::string what;
    std::uintptr_t in_at, ix_at, out_at;
    std::vector<i64> in_strides, ix_strides;
  };
  const std::vector<Case> cases = {
      {"aligned", kIn, kIdx, kOut, {24, 4}, {8}},         {"in data", kIn + 2, kIdx, kOut, {24, 4}, {8}},
      {"out data", kIn, kIdx, kOut + 1, {24, 4}, {8}},    {"indices data", kIn, kIdx + 4, kOut, {24, 4}, {8}},
      {"in stride", kIn, kIdx, kOut, {24, 6}, {8}},       {"axis stride", kIn, kIdx, kOut, {22, 4}, {8}},
      {"indices stride", kIn, kIdx, kOut, {24, 4}, {12}},
  };
  for (const Case& c : cases) {
    FakeView in(DType::float32, {5, 6}, c.in_strides, c.in_at), ix(DType::int64, {3}, c.ix_strides, c.ix_at);
    FakeView out(DType::float32, take_shape(in, ix, 0), {}, c.out_at);
    EXPECT_EQ(cg::plan_take(in.v, ix.v, 0, out.v).on_device, c.what == "aligned") << c.what;
  }
  // One byte elements are aligned anywhere.
  FakeView in(DType::bool_, {5, 6}, {7, 1}, kIn + 3), ix(DType::int64, {3}, {}, kIdx);
  FakeView out(DType::bool_, take_shape(in, ix, 0), {}, kOut + 1);
  EXPECT_TRUE(cg::plan_take(in.v, ix.v, 0, out.v).on_device);
}

TEST(CudaTakePlan, EmptyOutputsPlanNothing) {
  FakeView in(DType::float32, {5, 6}, {}, kIn), ix(DType::int64, {0}, {}, kIdx);
  FakeView out(DType::float32, take_shape(in, ix, 0), {}, kOut);
  const cg::TakePlan p = cg::plan_take(in.v, ix.v, 0, out.v);
  EXPECT_EQ(p.n, 0);
  EXPECT_EQ(p.nd, 0);
  FakeView in0(DType::float32, {0, 6}, {}, kIn), ix0(DType::int64, {2}, {}, kIdx);
  FakeView out0(DType::float32, take_shape(in0, ix0, 1), {}, kOut);
  EXPECT_EQ(cg::plan_take(in0.v, ix0.v, 1, out0.v).n, 0);
}

TEST(CudaTakePlan, BadRequestsAreValueErrors) {
  FakeView in(DType::float32, {5, 6}, {}, kIn), ix(DType::int64, {3}, {}, kIdx);
  FakeView out(DType::float32, {3, 6}, {}, kOut);
  EXPECT_NO_THROW(cg::plan_take(in.v, ix.v, 0, out.v));
  FakeView ix32(DType::int32, {3}, {}, kIdx), out64(DType::float64, {3, 6}, {}, kOut);
  FakeView wrong(DType::float32, {3, 5}, {}, kOut), fewer(DType::float32, {18}, {}, kOut);
  FakeView in0(DType::float32, {}, {}, kIn), out0(DType::float32, {3}, {}, kOut);
  EXPECT_THROW(cg::plan_take(in.v, ix.v, 2, out.v), xp::ValueError);
  EXPECT_THROW(cg::plan_take(in.v, ix.v, -1, out.v), xp::ValueError);
  EXPECT_THROW(cg::plan_take(in.v, ix32.v, 0, out.v), xp::ValueError);
  EXPECT_THROW(cg::plan_take(in.v, ix.v, 0, out64.v), xp::ValueError);
  EXPECT_THROW(cg::plan_take(in.v, ix.v, 0, wrong.v), xp::ValueError);
  EXPECT_THROW(cg::plan_take(in.v, ix.v, 0, fewer.v), xp::ValueError);
  EXPECT_THROW(cg::plan_take(in0.v, ix.v, 0, out0.v), xp::ValueError);
  try {
    cg::plan_take(in.v, ix.v, 0, wrong.v);
  } catch (const xp::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("(3, 5)"), std::string::npos) << e.what();
  }
}

TEST(CudaTakePlan, ArgumentsCarryThePlanAndTheGridCoversIt) {
  FakeView in(DType::uint16, {3, 7}, {}, kIn), ix(DType::int64, {5, 2}, {8, 40}, kIdx);
  FakeView out(DType::uint16, take_shape(in, ix, 1), {}, kOut);
  const cg::TakePlan p = cg::plan_take(in.v, ix.v, 1, out.v);
  const cg::TakeArgs a = cg::take_args(p);
  EXPECT_EQ(a.in, kIn);
  EXPECT_EQ(a.indices, kIdx);
  EXPECT_EQ(a.out, kOut);
  EXPECT_EQ(a.n, 30);
  EXPECT_EQ(a.axis, 2);
  ASSERT_EQ(a.nd, 3);
  const i64 shape[] = {3, 5, 2}, sout[] = {20, 4, 2}, sin[] = {14, 0, 0}, sidx[] = {0, 8, 40};
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(a.shape[d], shape[d]) << d;
    EXPECT_EQ(a.sout[d], sout[d]) << d;
    EXPECT_EQ(a.sin[d], sin[d]) << d;
    EXPECT_EQ(a.sidx[d], sidx[d]) << d;
  }
  for (int d = 3; d < cg::kMaxTakeDims; ++d) EXPECT_EQ(a.shape[d], 0) << d;

  EXPECT_EQ(cg::take_grid(1, 132), 1u);
  EXPECT_EQ(cg::take_grid(256, 132), 1u);
  EXPECT_EQ(cg::take_grid(257, 132), 2u);
  EXPECT_EQ(cg::take_grid(256 * 2112, 132), 2112u);
  EXPECT_EQ(cg::take_grid(256 * 2112 + 1, 132), 2112u);  // 16 blocks per multiprocessor
  EXPECT_EQ(cg::take_grid(i64{1} << 40, 132), 2112u);
  EXPECT_EQ(cg::take_grid(i64{1} << 40, 0), 16u);
  EXPECT_EQ(cg::take_grid(0, 132), 1u);
}

// ---- the plan executed as the kernel executes it, against the CPU backend (no GPU) ----

namespace {

// A view of random layout over memory of its own: one in three C-contiguous, the others with their
// dimensions in a random memory order, some with gaps (step 2), some flipped, and (where allowed) some
// broadcast (stride 0). The memory is filled with random bytes (indices: valid indices below `bound`).
struct Strided {
  std::vector<i64> shape, strides;
  std::vector<std::byte> mem;
  i64 offset = 0;
  DType dtype = DType::uint8;
  View view() {
    View v;
    v.data = mem.data() + offset;
    v.dtype = dtype;
    v.ndim = static_cast<int>(shape.size());
    v.shape = shape.data();
    v.strides = strides.data();
    return v;
  }
};

Strided random_layout(std::mt19937_64& rng, DType t, std::vector<i64> shape, bool broadcast, i64 bound = 0) {
  Strided s;
  s.dtype = t;
  s.shape = std::move(shape);
  const int nd = static_cast<int>(s.shape.size());
  const i64 isz = static_cast<i64>(xp::itemsize(t));
  std::vector<int> order(nd);
  std::iota(order.begin(), order.end(), 0);
  const bool plain = rng() % 3 == 0;
  if (!plain) std::shuffle(order.begin(), order.end(), rng);
  s.strides.assign(nd, 0);
  i64 elements = 1;
  for (int k = nd - 1; k >= 0; --k) {
    const int d = order[k];
    if (!plain && broadcast && rng() % 4 == 0) continue;  // stride 0
    const i64 step = !plain && rng() % 3 == 0 ? 2 : 1;
    s.strides[d] = elements * step * isz;
    elements *= std::max<i64>(s.shape[d], 1) * step;
  }
  for (int d = 0; d < nd; ++d) {
    if (!plain && s.strides[d] != 0 && rng() % 3 == 0) {
      s.offset += (std::max<i64>(s.shape[d], 1) - 1) * s.strides[d];
      s.strides[d] = -s.strides[d];
    }
  }
  s.mem.resize(static_cast<std::size_t>(elements * isz));
  if (bound > 0) {
    for (std::size_t i = 0; i < s.mem.size(); i += 8) {
      const i64 v = static_cast<i64>(rng() % static_cast<std::uint64_t>(bound));
      std::memcpy(s.mem.data() + i, &v, 8);
    }
  } else {
    for (auto& b : s.mem) b = static_cast<std::byte>(rng());
  }
  return s;
}

constexpr DType kDTypes[] = {DType::bool_,    DType::int8,    DType::int16,  DType::int32,  DType::int64,
                             DType::uint8,    DType::uint16,  DType::uint32, DType::uint64, DType::float16,
                             DType::bfloat16, DType::float32, DType::float64};

// One random request: in of 1 to 4 dimensions (sizes 1 to 5), indices of 0 to 3 dimensions, an axis.
struct Request {
  Strided in, ix, out;
  int axis = 0;
  std::string what;
};

Request random_request(std::mt19937_64& rng, DType t) {
  Request r;
  const int nd = 1 + static_cast<int>(rng() % 4), nx = static_cast<int>(rng() % 4);
  std::vector<i64> shape(nd), ishape(nx);
  for (auto& s : shape) s = 1 + static_cast<i64>(rng() % 5);
  for (auto& s : ishape) s = 1 + static_cast<i64>(rng() % 4);
  r.axis = static_cast<int>(rng() % static_cast<std::uint64_t>(nd));
  r.in = random_layout(rng, t, shape, true);
  r.ix = random_layout(rng, DType::int64, ishape, true, shape[r.axis]);
  std::vector<i64> oshape(shape.begin(), shape.begin() + r.axis);
  oshape.insert(oshape.end(), ishape.begin(), ishape.end());
  oshape.insert(oshape.end(), shape.begin() + r.axis + 1, shape.end());
  r.out = random_layout(rng, t, oshape, false);
  auto text = [](const Strided& s) {
    std::string x = "shape (";
    for (i64 v : s.shape) x += std::to_string(v) + ",";
    x += ") strides (";
    for (i64 v : s.strides) x += std::to_string(v) + ",";
    return x + ")";
  };
  r.what = std::string(xp::name(t)) + " axis " + std::to_string(r.axis) + " in " + text(r.in) + " indices " +
           text(r.ix) + " out " + text(r.out);
  return r;
}

// The kernel's loop, on the host: element e of out, decomposed over the argument's dimensions.
void take_as_the_kernel(const cg::TakeArgs& a, int element_size) {
  const auto at = [](std::uint64_t address, i64 offset) {
    return reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(address + static_cast<std::uint64_t>(offset)));
  };
  for (i64 e = 0; e < a.n; ++e) {
    i64 q = e, o = 0, s = 0, x = 0;
    for (int d = static_cast<int>(a.nd) - 1; d >= 0; --d) {
      const i64 i = q % a.shape[d];
      q /= a.shape[d];
      o += i * a.sout[d];
      s += i * a.sin[d];
      x += i * a.sidx[d];
    }
    i64 j = 0;
    std::memcpy(&j, at(a.indices, x), 8);
    std::memcpy(at(a.out, o), at(a.in, s + j * a.axis), static_cast<std::size_t>(element_size));
  }
}

}  // namespace

TEST(CudaTakePlan, ThePlanRunAsTheKernelRunsIsTheCpuTake) {
  std::mt19937_64 rng(2024);
  int on_device = 0, merged = 0, total = 0;
  for (DType t : kDTypes) {
    for (int rep = 0; rep < 150; ++rep) {
      Request r = random_request(rng, t);
      Strided expect = r.out;
      xp::detail::cpu_backend().take(r.in.view(), r.ix.view(), r.axis, expect.view());
      const cg::TakePlan p = cg::plan_take(r.in.view(), r.ix.view(), r.axis, r.out.view());
      ++total;
      ASSERT_TRUE(p.on_device) << r.what;  // at most 6 dimensions, all aligned
      ++on_device;
      const auto sizes_above_1 = std::count_if(r.out.shape.begin(), r.out.shape.end(), [](i64 s) { return s > 1; });
      if (p.nd < sizes_above_1) ++merged;
      ASSERT_EQ(p.element_size, static_cast<int>(xp::itemsize(t)));
      take_as_the_kernel(cg::take_args(p), p.element_size);
      ASSERT_TRUE(r.out.mem == expect.mem) << r.what;
    }
  }
  EXPECT_EQ(on_device, total);
  EXPECT_GT(merged, total / 10) << "merging was hardly exercised";
}

// ---- the source (NVRTC, no GPU) ----

TEST(CudaTakeSource, OneSourcePerElementSizeKeyedByItAlone) {
  for (int size : {1, 2, 4, 8}) {
    const std::string s = cg::take_source(size);
    EXPECT_EQ(s, cg::take_source(size));
    EXPECT_EQ(cg::take_key(size), "xp-take-2:" + std::to_string(size));
    EXPECT_NE(s.find(cg::take_key(size)), std::string::npos);
    EXPECT_NE(s.find("#define XP_TAKE_BLOCK 256\n"), std::string::npos);
    EXPECT_NE(s.find("void __launch_bounds__(XP_TAKE_BLOCK) xp_take("), std::string::npos);
    EXPECT_NE(s.find("#define XP_TAKE_ARGS " + std::to_string(sizeof(cg::TakeArgs)) + "\n"), std::string::npos);
    EXPECT_EQ(s.find("#include"), std::string::npos);
    EXPECT_EQ(s.find('$'), std::string::npos) << "a placeholder left";
    for (int other : {1, 2, 4, 8}) {
      if (other != size) {
        EXPECT_NE(s, cg::take_source(other));
      }
    }
  }
  EXPECT_STREQ(cg::take_kernel_name(), "xp_take");
  EXPECT_EQ(cg::kTakeBlock, 256u);
  for (int bad : {0, 3, 16}) EXPECT_THROW(cg::take_source(bad), xp::ValueError) << bad;
}

TEST(CudaTakeSource, EveryElementSizeCompilesForSm75AndSm90) {
  XP_REQUIRE_NVRTC();
  for (int size : {1, 2, 4, 8}) {
    for (int sm : {75, 90}) {
      xp::ProgramOptions opt;
      opt.name = kCheckProgram;
      opt.options = cg::nvrtc_options();
      xp::Program prog(cg::take_source(size), opt);
      try {
        const auto stats = prog.compile(xp::Arch::sm(sm));
        EXPECT_EQ(stats.log.find("warning"), std::string::npos) << size << " bytes, sm_" << sm << ":\n" << stats.log;
        const auto names = prog.kernel_names(xp::Arch::sm(sm));
        EXPECT_NE(std::find(names.begin(), names.end(), cg::take_kernel_name()), names.end())
            << size << " bytes, sm_" << sm;
      } catch (const xp::CompileError& e) {
        ADD_FAILURE() << size << " bytes, sm_" << sm << ":\n" << e.log();
      }
    }
  }
}

TEST(CudaTakeSource, TheKernelsArgumentIsHeldToTheHostsTakeArgs) {
  XP_REQUIRE_NVRTC();
  // The same source with another argument size does not compile: its static_assert is live.
  std::string s = cg::take_source(4);
  const std::string size = "#define XP_TAKE_ARGS " + std::to_string(sizeof(cg::TakeArgs)) + "\n";
  const std::size_t at = s.find(size);
  ASSERT_NE(at, std::string::npos);
  s.replace(at, size.size(), "#define XP_TAKE_ARGS " + std::to_string(sizeof(cg::TakeArgs) - 8) + "\n");
  xp::ProgramOptions opt;
  opt.name = kCheckProgram;
  opt.options = cg::nvrtc_options();
  xp::Program prog(s, opt);
  try {
    prog.compile(xp::Arch::sm(90));
    ADD_FAILURE() << "compiled with the wrong argument size";
  } catch (const xp::CompileError& e) {
    EXPECT_NE(e.log().find("TakeArgs"), std::string::npos) << e.log();
  }
}

// ---- on a GPU: the CUDA backend against the CPU backend ----

namespace {

const xp::Device kCpu = xp::Device::cpu();

// Memory of a backend, given back when it goes (an Allocation either owns it or says how to release it).
struct Memory {
  xp::detail::Allocation a;
  Memory(xp::detail::Backend& b, std::size_t bytes) : a(b.allocate(std::max<std::size_t>(bytes, 1))) {}
  Memory(const Memory&) = delete;
  ~Memory() {
    if (a.release != nullptr) a.release(a.data, a.bytes);
  }
};

// A Strided's memory on the device: the same bytes, the same layout.
struct OnDevice {
  Memory m;
  const Strided* host = nullptr;
  OnDevice(xp::detail::Backend& b, const Strided& s) : m(b, s.mem.size()), host(&s) {
    b.copy_from_host(s.mem.data(), m.a.data, s.mem.size());
  }
  View view() const {
    View v;
    v.data = m.a.data + host->offset;
    v.dtype = host->dtype;
    v.ndim = static_cast<int>(host->shape.size());
    v.shape = host->shape.data();
    v.strides = host->strides.data();
    return v;
  }
  std::vector<std::byte> bytes(xp::detail::Backend& b) const {
    std::vector<std::byte> v(host->mem.size());
    b.copy_to_host(m.a.data, v.data(), v.size());
    return v;
  }
};

// take on the device and on the CPU over the same bytes: the whole output memory, gaps included,
// must be the same.
void expect_same_take(xp::detail::Backend& gpu, Request& r) {
  OnDevice in(gpu, r.in), ix(gpu, r.ix), out(gpu, r.out);
  gpu.take(in.view(), ix.view(), r.axis, out.view());
  Strided expect = r.out;
  xp::detail::cpu_backend().take(r.in.view(), r.ix.view(), r.axis, expect.view());
  const std::vector<std::byte> got = out.bytes(gpu);
  ASSERT_EQ(got.size(), expect.mem.size());
  const auto diff = std::mismatch(got.begin(), got.end(), expect.mem.begin());
  EXPECT_TRUE(diff.first == got.end()) << r.what << ": first differing byte " << (diff.first - got.begin());
}

std::size_t backend_programs_in_cache() {
  std::size_t n = 0;
  for (const auto& e : xp::kernel_cache_entries())
    if (e.program != kCheckProgram) ++n;
  return n;
}

}  // namespace

TEST(CudaTakeGpu, RandomLayoutsOfEveryDtypeMatchTheCpuByteForByte) {
  XP_REQUIRE_GPU();
  xp::detail::Backend& gpu = xp::detail::backend_for(xp::Device::cuda(0));
  std::mt19937_64 rng(7);
  for (DType t : kDTypes) {
    for (int rep = 0; rep < 40; ++rep) {
      Request r = random_request(rng, t);
      expect_same_take(gpu, r);
      if (HasFailure()) return;
    }
  }
}

TEST(CudaTakeGpu, TheKernelIsCompiledSoTheDeviceRanIt) {
  XP_REQUIRE_GPU();
  const xp::KernelCacheInfo info = xp::kernel_cache_info();
  ASSERT_TRUE(info.usable) << info.problem;
  xp::detail::Backend& gpu = xp::detail::backend_for(xp::Device::cuda(0));
  const std::size_t before = backend_programs_in_cache();
  std::mt19937_64 rng(8);
  Request r = random_request(rng, DType::float32);
  expect_same_take(gpu, r);
  // The host fallback compiles nothing; in a process of its own (as ctest runs it) this take
  // compiled the 4-byte program, else an earlier test of the process did.
  EXPECT_GE(backend_programs_in_cache(), std::max<std::size_t>(before, 1));
}

TEST(CudaTakeGpu, TransposedFlippedAndBroadcastViewsOfALargeArray) {
  XP_REQUIRE_GPU();
  xp::detail::Backend& gpu = xp::detail::backend_for(xp::Device::cuda(0));
  std::mt19937_64 rng(9);
  for (DType t : {DType::uint8, DType::bfloat16, DType::float32, DType::float64}) {
    const i64 isz = static_cast<i64>(xp::itemsize(t));
    Request r;
    r.what = std::string(xp::name(t)) + " (1024, 2048) transposed and flipped, axis 1, indices (3000,)";
    // in: (2048, 1024) C order seen as its transpose (1024, 2048), then flipped along axis 0.
    r.in.dtype = t;
    r.in.shape = {1024, 2048};
    r.in.strides = {-isz, 1024 * isz};
    r.in.offset = 1023 * isz;
    r.in.mem.resize(static_cast<std::size_t>(2048 * 1024 * isz));
    for (auto& b : r.in.mem) b = static_cast<std::byte>(rng());
    r.ix = random_layout(rng, DType::int64, {3000}, false, 2048);
    r.axis = 1;
    r.out.dtype = t;
    r.out.shape = {1024, 3000};
    r.out.strides = {3000 * isz, isz};
    r.out.mem.assign(static_cast<std::size_t>(1024 * 3000 * isz), std::byte{0xA5});
    expect_same_take(gpu, r);
    // Broadcast indices (600, 5) with strides (0, 8) over axis 0 of the same input.
    Request b;
    b.what = std::string(xp::name(t)) + " broadcast indices (600, 5) on axis 0";
    b.in = r.in;
    b.ix = random_layout(rng, DType::int64, {5}, false, 1024);
    b.ix.shape = {600, 5};
    b.ix.strides = {0, b.ix.strides[0]};
    b.axis = 0;
    b.out = random_layout(rng, t, {600, 5, 2048}, false);
    expect_same_take(gpu, b);
  }
}

TEST(CudaTakeGpu, HostFallbacksMatchTheCpu) {
  XP_REQUIRE_GPU();
  xp::detail::Backend& gpu = xp::detail::backend_for(xp::Device::cuda(0));
  std::mt19937_64 rng(10);
  {
    // Ten dimensions of 2 in reversed memory order: nine out dimensions that do not merge.
    Request r;
    r.what = "nine dimensions";
    r.in = random_layout(rng, DType::int16, std::vector<i64>(10, 2), false);
    std::vector<i64> st(10);
    for (int d = 0; d < 10; ++d) st[d] = i64{2} << d;
    r.in.strides = st;
    r.in.offset = 0;
    r.ix = random_layout(rng, DType::int64, {}, false, 2);
    r.axis = 9;
    r.out = random_layout(rng, DType::int16, std::vector<i64>(9, 2), false);
    View in = r.in.view(), ix = r.ix.view(), out = r.out.view();
    ASSERT_FALSE(cg::plan_take(in, ix, r.axis, out).on_device);
    expect_same_take(gpu, r);
  }
  {
    // float32 elements one byte off their alignment.
    Request r;
    r.what = "misaligned float32";
    r.in = random_layout(rng, DType::float32, {40, 30}, false);
    r.in.mem.resize(r.in.mem.size() + 4);
    r.in.offset += 1;
    r.ix = random_layout(rng, DType::int64, {7}, false, 30);
    r.axis = 1;
    r.out = random_layout(rng, DType::float32, {40, 7}, false);
    View in = r.in.view(), ix = r.ix.view(), out = r.out.view();
    ASSERT_FALSE(cg::plan_take(in, ix, r.axis, out).on_device);
    expect_same_take(gpu, r);
  }
}

TEST(CudaTakeGpu, EmptyResultsLaunchNothing) {
  XP_REQUIRE_GPU();
  xp::detail::Backend& gpu = xp::detail::backend_for(xp::Device::cuda(0));
  const std::vector<i64> in_shape = {5, 3}, in_strides = {12, 4}, ix_shape = {0}, ix_strides = {8}, out_shape = {0, 3},
                         out_strides = {12, 4};
  // No memory at all: a launch or a copy would fault.
  const View in{nullptr, DType::float32, 2, in_shape.data(), in_strides.data()};
  const View ix{nullptr, DType::int64, 1, ix_shape.data(), ix_strides.data()};
  const View out{nullptr, DType::float32, 2, out_shape.data(), out_strides.data()};
  EXPECT_NO_THROW(gpu.take(in, ix, 0, out));
  // Through the array API: empty indices, and an empty input.
  const xp::Device dev = xp::Device::cuda(0);
  xp::Array a = xp::arange(0, 15, 1, DType::float32, dev).reshape({5, 3});
  xp::Array r = xp::take(a, xp::zeros({0}, DType::int64, dev), 0);
  EXPECT_EQ(std::vector<i64>(r.shape().begin(), r.shape().end()), (std::vector<i64>{0, 3}));
  xp::Array e = xp::take(a.slice({xp::Slice(0, 0)}), xp::zeros({2}, DType::int64, dev), 1);
  EXPECT_EQ(std::vector<i64>(e.shape().begin(), e.shape().end()), (std::vector<i64>{0, 2}));
  xp::synchronize(dev);
}

TEST(CudaTakeGpu, MoreThanTwoToThe32ElementsUseSixtyFourBitIndices) {
  XP_REQUIRE_GPU();
  xp::detail::Backend& gpu = xp::detail::backend_for(xp::Device::cuda(0));
  // in: uint8 0..255; indices: 0..255 broadcast over M rows; out (M, 256): out[m, k] = k.
  const i64 M = (i64{1} << 24) + 3, n = M * 256;
  std::vector<std::uint8_t> values(256);
  std::vector<i64> idx(256);
  std::iota(values.begin(), values.end(), 0);
  std::iota(idx.begin(), idx.end(), 0);
  Memory in_mem(gpu, 256), ix_mem(gpu, 256 * 8);
  std::unique_ptr<Memory> out_mem;
  try {
    out_mem = std::make_unique<Memory>(gpu, static_cast<std::size_t>(n));
  } catch (const xp::OutOfMemory& e) {
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_GPU", std::string("needs 4 GiB of device memory: ") + e.what());
  }
  gpu.copy_from_host(values.data(), in_mem.a.data, 256);
  gpu.copy_from_host(idx.data(), ix_mem.a.data, 256 * 8);
  const std::vector<i64> in_shape = {256}, in_strides = {1}, ix_shape = {M, 256}, ix_strides = {0, 8},
                         out_shape = {M, 256}, out_strides = {256, 1};
  const View in{in_mem.a.data, DType::uint8, 1, in_shape.data(), in_strides.data()};
  const View ix{ix_mem.a.data, DType::int64, 2, ix_shape.data(), ix_strides.data()};
  const View out{out_mem->a.data, DType::uint8, 2, out_shape.data(), out_strides.data()};
  const cg::TakePlan p = cg::plan_take(in, ix, 0, out);
  ASSERT_TRUE(p.on_device);
  ASSERT_GT(p.n, i64{0xFFFFFFFF});
  gpu.take(in, ix, 0, out);
  // Checked in chunks of 256 MiB against the repeating 0..255.
  const std::size_t chunk = std::size_t{1} << 28;
  std::vector<std::uint8_t> want(chunk), got(chunk);
  for (std::size_t i = 0; i < chunk; ++i) want[i] = static_cast<std::uint8_t>(i);
  for (i64 at = 0; at < n; at += static_cast<i64>(chunk)) {
    const std::size_t len = static_cast<std::size_t>(std::min<i64>(static_cast<i64>(chunk), n - at));
    gpu.copy_to_host(out_mem->a.data + at, got.data(), len);
    ASSERT_EQ(std::memcmp(got.data(), want.data(), len), 0) << "in the 256 MiB from byte " << at;
  }
}

// tests/CMakeLists.txt labels this program's CudaTakeGpu.* gpu (GPU_TESTS) and tells each test its
// label in XP_TEST_LABEL; XP_REQUIRE_GPU() fails a GPU test that ctest runs without the label, so
// `ctest -L gpu` on a GPU machine runs every GPU test. Checked on one of them, in a child process.
TEST(TestLabels, AGpuTestRunWithoutTheGpuLabelFails) {
  if (const char* label = std::getenv("XP_TEST_LABEL")) {
    EXPECT_STREQ(label, "cpu") << "this test needs no GPU";
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::vector<std::string> argv = {self, "--gtest_filter=CudaTakeGpu.EmptyResultsLaunchNothing"};
  const xp_test::ProcessResult unlabelled =
      xp_test::run_process(argv, {{"XP_TEST_LABEL", "cpu"}}, {"XP_TEST_REQUIRE_GPU"});
  EXPECT_EQ(unlabelled.exit_code, 1) << unlabelled.out << unlabelled.err;
  EXPECT_NE(unlabelled.out.find("this test needs a GPU but ctest does not label it gpu (XP_TEST_LABEL=cpu)"),
            std::string::npos)
      << unlabelled.out;
  // Labelled, it runs: a pass with a GPU (exit 0), a skip ("no GPU") without one (exit 77,
  // ctest's SKIP_RETURN_CODE: test_main.cpp).
  const xp_test::ProcessResult labelled =
      xp_test::run_process(argv, {{"XP_TEST_LABEL", "gpu"}}, {"XP_TEST_REQUIRE_GPU"});
  EXPECT_EQ(labelled.exit_code, xp::cuda_status().available ? 0 : 77) << labelled.out << labelled.err;
  EXPECT_EQ(labelled.out.find("does not label it gpu"), std::string::npos) << labelled.out;
  EXPECT_NE(labelled.out.find("1 test from 1 test suite ran"), std::string::npos) << labelled.out;
}
