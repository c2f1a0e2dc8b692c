// matmul and vecdot on a GPU against the CPU backend, the device allocator's statistics and the
// staged host transfers. Label `gpu`: skipped without one (a failure under XP_TEST_REQUIRE_GPU=1).
//
// Floats (cuBLAS) are checked against a float64 product of the same inputs on the CPU, within the
// bound of a float32 (or float64) sum of k products plus the output's rounding:
//   |gpu - exact| <= (k + 2) u |a| @ |b| + u_out |exact|;
// integers and bool (xp's exact kernel) bit for bit against the CPU (bits() below: all 64 bits of
// 64-bit integers, whose products of inputs up to 2^40 wrap).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "array_bits.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const Device kCpu = Device::cpu();

std::vector<double> values(const Array& a) {
  return a.to_device(kCpu).astype(DType::float64).to_vector<double>();
}

std::vector<std::uint64_t> bits(const Array& a) {
  return xp_test::exact_bits(a);
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::float64:
      return std::ldexp(1.0, -53);
    case DType::float16:
      return std::ldexp(1.0, -11);
    case DType::bfloat16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -24);
  }
}

// The GPU result of f(a, b) (inputs in dtype t, made on the CPU and copied over) against the exact
// product: the bound above. Returns the number of elements checked.
template <class F>
std::size_t expect_within_bound(const Array& a_cpu, const Array& b_cpu, std::int64_t k, F f, const std::string& what) {
  const DType t = a_cpu.dtype();
  const Device gpu = Device::cuda(0);
  Array g = f(a_cpu.to_device(gpu), b_cpu.to_device(gpu));
  EXPECT_EQ(g.dtype(), t) << what;
  EXPECT_EQ(g.device(), gpu) << what;
  const Array a64 = a_cpu.astype(DType::float64), b64 = b_cpu.astype(DType::float64);
  const std::vector<double> exact = values(f(a64, b64));
  const std::vector<double> scale = values(f(abs(a64), abs(b64)));
  const std::vector<double> got = values(g);
  EXPECT_EQ(got.size(), exact.size()) << what;
  const double u = t == DType::float64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double u_out = unit_roundoff(t);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size() && i < exact.size(); ++i) {
    const double bound = static_cast<double>(k + 2) * u * scale[i] + u_out * std::abs(exact[i]);
    if (!(std::abs(got[i] - exact[i]) <= bound) && bad++ < 5)
      ADD_FAILURE() << what << " " << name(t) << " element " << i << ": " << got[i] << " vs " << exact[i] << " (bound "
                    << bound << ")";
  }
  return got.size();
}

Array uniform(std::uint64_t seed, const std::vector<std::int64_t>& shape, DType t) {
  random::Generator g(seed);
  return g.uniform(shape, DType::float64, -2, 2, kCpu).astype(t);
}

constexpr DType kFloats[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16};
constexpr DType kExact[] = {DType::bool_, DType::int8,   DType::uint8, DType::int16,
                            DType::int32, DType::uint32, DType::int64, DType::uint64};

Array integers(std::uint64_t seed, const std::vector<std::int64_t>& shape, DType t) {
  random::Generator g(seed);
  if (t == DType::bool_) return g.integers(0, 2, shape, DType::int64, kCpu).astype(DType::bool_);
  // Large values: products and sums wrap, as NumPy's
  return g.integers(-(std::int64_t{1} << 40), std::int64_t{1} << 40, shape, DType::int64, kCpu).astype(t);
}

const auto kMatmul = [](const Array& x, const Array& y) { return matmul(x, y); };

}  // namespace

TEST(GpuMatmul, FloatsAreWithinTheBoundOfTheExactProduct) {
  XP_REQUIRE_GPU();
  for (DType t : kFloats) {
    expect_within_bound(uniform(1, {3, 37, 29}, t), uniform(2, {3, 29, 41}, t), 29, kMatmul, "batched");
    expect_within_bound(uniform(3, {300, 257}, t), uniform(4, {257, 130}, t), 257, kMatmul, "one matrix");
    expect_within_bound(uniform(5, {1, 1000}, t), uniform(6, {1000, 1}, t), 1000, kMatmul, "1 x 1");
  }
}

TEST(GpuMatmul, TransposedSlicedAndReversedViews) {
  XP_REQUIRE_GPU();
  for (DType t : kFloats) {
    const Array a = uniform(7, {40, 30}, t), b = uniform(8, {50, 40}, t);
    const auto f = [](const Array& x, const Array& y) { return matmul(x.T(), y.T()); };  // (30 x 40) @ (40 x 50)
    expect_within_bound(a, b, 40, f, "both transposed");
    const auto stepped = [](const Array& x, const Array& y) {
      // every third row and second column of a, every second column of b: packed first
      return matmul(x.slice({Slice(0, 40, 3), Slice(0, 30, 2)}), y.slice({Slice(0, 15), Slice(0, 40, 2)}));
    };
    expect_within_bound(a, b, 15, stepped, "stepped");
    const auto reversed = [](const Array& x, const Array& y) {
      return matmul(x.slice({Slice(std::nullopt, std::nullopt, -1)}).T(), y.T());
    };
    expect_within_bound(a, b, 40, reversed, "reversed rows");
    expect_within_bound(
        a, b, 40, [](const Array& x, const Array& y) { return matmul(y.slice({7}), x); }, "1-D @ 2-D");
    expect_within_bound(
        a, b, 30,
        [](const Array& x, const Array& y) {
          return matmul(x, y.slice({Slice(0, 30), 3}));
        },
        "2-D @ 1-D (strided)");
  }
}

TEST(GpuMatmul, BatchDimensionsBroadcast) {
  XP_REQUIRE_GPU();
  for (DType t : kFloats) {
    expect_within_bound(uniform(9, {3, 1, 4, 5}, t), uniform(10, {1, 2, 5, 6}, t), 5, kMatmul, "(3,1) x (1,2)");
    expect_within_bound(uniform(11, {4, 5}, t), uniform(12, {7, 5, 3}, t), 5, kMatmul, "matrix x stack");
    expect_within_bound(uniform(13, {6, 2, 8, 5}, t), uniform(14, {5, 3}, t), 5, kMatmul, "stack x matrix");
  }
}

TEST(GpuMatmul, IntegersAndBoolAreExact) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : kExact) {
    for (const auto& [as, bs] : std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>>{
             {{33, 17}, {17, 9}}, {{3, 1, 4, 5}, {1, 2, 5, 6}}, {{200}, {200, 3}}}) {
      const Array a = integers(21, as, t), b = integers(22, bs, t);
      const Array c = matmul(a, b), g = matmul(a.to_device(gpu), b.to_device(gpu));
      EXPECT_EQ(g.dtype(), c.dtype()) << name(t);
      EXPECT_EQ(bits(g), bits(c)) << name(t);
      if (as.size() == 2) {  // a column-major view: a stored transposed
        const Array at = integers(23, {as[1], as[0]}, t);
        EXPECT_EQ(bits(matmul(at.to_device(gpu).T(), b.to_device(gpu))), bits(matmul(at.T(), b)))
            << name(t) << " transposed";
      }
    }
  }
}

TEST(GpuMatmul, EmptySumsAreZeros) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : {DType::float32, DType::int32, DType::float16}) {
    Array g = matmul(ones({3, 0}, t, gpu), ones({0, 4}, t, gpu));
    EXPECT_EQ(values(g), std::vector<double>(12, 0.0)) << name(t);
    EXPECT_EQ(matmul(ones({2, 0, 3}, t, gpu), ones({2, 3, 5}, t, gpu)).size(), 0);
  }
}

TEST(GpuVecdot, FloatsWithinBoundIntegersExact) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : kFloats) {
    expect_within_bound(
        uniform(31, {50, 300}, t), uniform(32, {50, 300}, t), 300,
        [](const Array& x, const Array& y) { return vecdot(x, y); }, "last axis");
    expect_within_bound(
        uniform(33, {300, 50}, t), uniform(34, {300, 50}, t), 300,
        [](const Array& x, const Array& y) { return vecdot(x, y, 0); }, "axis 0 (strided)");
    expect_within_bound(
        uniform(35, {4, 1, 64}, t), uniform(36, {3, 64}, t), 64,
        [](const Array& x, const Array& y) { return vecdot(x, y); }, "broadcast");
  }
  for (DType t : kExact) {
    const Array a = integers(41, {20, 70}, t), b = integers(42, {20, 70}, t);
    EXPECT_EQ(bits(vecdot(a.to_device(gpu), b.to_device(gpu))), bits(vecdot(a, b))) << name(t);
    EXPECT_EQ(bits(vecdot(a.to_device(gpu), b.to_device(gpu), 0)), bits(vecdot(a, b, 0))) << name(t);
  }
}

TEST(GpuMemory, StatisticsFollowAllocations) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  free_all(gpu);
  const MemoryStats s0 = memory_stats(gpu);
  EXPECT_EQ(s0.bytes_cached, 0u);
  const std::uint64_t mib = std::uint64_t{1} << 20;
  {
    Array a = empty({1 << 20}, DType::uint8, gpu);  // exactly 1 MiB: one block of that size
    Array b = empty({1000}, DType::uint8, gpu);     // a 1 KiB block
    const MemoryStats s1 = memory_stats(gpu);
    EXPECT_EQ(s1.bytes_in_use, s0.bytes_in_use + mib + 1024);
    EXPECT_EQ(s1.allocations, s0.allocations + 2);
    EXPECT_GE(s1.peak_bytes_in_use, s1.bytes_in_use);
  }
  const MemoryStats s2 = memory_stats(gpu);
  EXPECT_EQ(s2.bytes_in_use, s0.bytes_in_use);
  EXPECT_EQ(s2.bytes_cached, mib + 1024);
  {
    Array again = empty({1 << 20}, DType::uint8, gpu);  // the cached block comes back
    EXPECT_EQ(memory_stats(gpu).bytes_cached, 1024u);
  }
  free_all(gpu);
  const MemoryStats s3 = memory_stats(gpu);
  EXPECT_EQ(s3.bytes_cached, 0u);
  EXPECT_EQ(s3.bytes_in_use, s0.bytes_in_use);
}

TEST(GpuMemory, PeakIsTrackedAndReset) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  reset_peak(gpu);
  const MemoryStats s0 = memory_stats(gpu);
  EXPECT_EQ(s0.peak_bytes_in_use, s0.bytes_in_use);
  const std::uint64_t block = std::uint64_t{64} << 20;
  { Array a = empty({std::int64_t{64} << 20}, DType::uint8, gpu); }
  const MemoryStats s1 = memory_stats(gpu);
  EXPECT_EQ(s1.bytes_in_use, s0.bytes_in_use);
  EXPECT_EQ(s1.peak_bytes_in_use, s0.bytes_in_use + block);
  reset_peak(gpu);
  EXPECT_EQ(memory_stats(gpu).peak_bytes_in_use, s1.bytes_in_use);
  free_all(gpu);
}

TEST(GpuTransfers, StagedCopiesAreExactAndDoNotKeepTheHostMemory) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  // Sizes around the staging threshold and chunk (4 MiB, 8 MiB), odd sizes included.
  for (std::int64_t n : {std::int64_t{1000}, (std::int64_t{4} << 20) - 1, std::int64_t{4} << 20,
                         (std::int64_t{8} << 20) + 3, (std::int64_t{40} << 20) + 7}) {
    std::vector<std::uint8_t> host(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
    const std::vector<std::uint8_t> expected = host;
    Array g = asarray(host, std::nullopt, gpu);
    std::fill(host.begin(), host.end(), std::uint8_t{0});  // the source may change at once
    host.clear();
    host.shrink_to_fit();
    Array h = g.to_device(kCpu);
    EXPECT_EQ(h.to_vector<std::uint8_t>(), expected) << n << " bytes";
    // Device work after the copy sees the data: a sum on the GPU matches the CPU's.
    EXPECT_EQ(sum(g.astype(DType::uint64)).item<std::uint64_t>(), sum(h.astype(DType::uint64)).item<std::uint64_t>());
  }
}

// The first float matmul of a process creates the device's cuBLAS handle, whose workspace comes
// from xp's allocator and stays in use for the life of the process: in a fresh process (the
// disabled case below), where no earlier matmul made it.
TEST(GpuMatmul, CublasWorkspaceCountsAsMemoryInUse) {
  XP_REQUIRE_GPU();
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("GpuMatmul.DISABLED_FirstMatmulOfAProcess"));
}

TEST(GpuMatmul, DISABLED_FirstMatmulOfAProcess) {
  const Device gpu = Device::cuda(0);
  // cuBLAS's advice, as src/backend/cuda/cublas.cpp gives it (workspace_bytes): 32 MiB from Hopper
  // on, 4 MiB before.
  const std::uint64_t workspace = gpu_info(gpu).cc_major >= 9 ? std::uint64_t{32} << 20 : std::uint64_t{4} << 20;
  const std::uint64_t result = 64 * 64 * 4;  // 16 KiB: a block of exactly that size
  Array a = ones({64, 64}, DType::float32, gpu);
  a.eval();
  const MemoryStats before = memory_stats(gpu);
  Array c = matmul(a, a);
  const MemoryStats after = memory_stats(gpu);
  EXPECT_EQ(after.bytes_in_use - before.bytes_in_use, result + workspace)
      << "the first matmul should hold its result and the cuBLAS workspace from xp's allocator (cuBLAS must be "
         "found on this machine: without it matmul runs on the host)";
  EXPECT_EQ(after.allocations - before.allocations, 2u);
  EXPECT_EQ(c.to_device(kCpu).to_vector<float>(), std::vector<float>(64 * 64, 64.0f));
  // The workspace is made once: a second matmul holds only its result.
  Array d = matmul(a, a);
  const MemoryStats again = memory_stats(gpu);
  EXPECT_EQ(again.bytes_in_use - after.bytes_in_use, result);
  EXPECT_EQ(again.allocations - after.allocations, 1u);
  EXPECT_EQ(d.to_device(kCpu).to_vector<float>(), std::vector<float>(64 * 64, 64.0f));
}
