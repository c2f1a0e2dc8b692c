// XP_GPU_MEMORY_LIMIT=256M (set by tests/CMakeLists.txt for this executable): in use + cached bytes
// stay under it, cached blocks are freed before an allocation is refused, and a refusal is an
// OutOfMemory with the bytes requested, the bytes left under the limit and the limit, leaving the
// statistics as they were. Label `gpu`.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kLimit = 256 * kMiB;

Array block(std::uint64_t mib) {
  return empty({static_cast<std::int64_t>(mib * kMiB)}, DType::uint8, Device::cuda(0));
}
}  // namespace

TEST(GpuMemoryLimit, TheLimitIsTheVariables) {
  XP_REQUIRE_GPU();
  ASSERT_TRUE(config().gpu_memory_limit.has_value()) << "run with XP_GPU_MEMORY_LIMIT=256M";
  EXPECT_EQ(memory_stats(Device::cuda(0)).limit, kLimit);
}

TEST(GpuMemoryLimit, PastTheLimitIsOutOfMemoryAndNothingChanges) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  free_cached(gpu);
  const MemoryStats s0 = memory_stats(gpu);
  ASSERT_LE(s0.bytes_in_use, 64 * kMiB) << "this test needs the device's memory to itself";
  Array a = block(64), b = block(64);
  const MemoryStats s1 = memory_stats(gpu);
  EXPECT_EQ(s1.bytes_in_use, s0.bytes_in_use + 128 * kMiB);
  const std::uint64_t room = kLimit - s1.bytes_in_use;
  try {
    Array c = block(256);
    FAIL() << "256 MiB more fit under a 256 MiB limit";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.requested(), 256 * kMiB);
    EXPECT_EQ(e.free(), room);
    EXPECT_EQ(e.limit(), kLimit);
    const std::string what = e.what();
    EXPECT_NE(what.find("cuda:0"), std::string::npos) << what;
    EXPECT_NE(what.find("limit " + std::to_string(kLimit)), std::string::npos) << what;
  }
  const MemoryStats s2 = memory_stats(gpu);
  EXPECT_EQ(s2.bytes_in_use, s1.bytes_in_use);
  EXPECT_EQ(s2.bytes_cached, 0u);
  EXPECT_EQ(s2.allocations, s1.allocations);
  Array after = block(64);  // what fits still works
  EXPECT_EQ(memory_stats(gpu).bytes_in_use, s1.bytes_in_use + 64 * kMiB);
}

TEST(GpuMemoryLimit, CachedBlocksAreFreedToMakeRoom) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  free_cached(gpu);
  const MemoryStats s0 = memory_stats(gpu);
  ASSERT_LE(s0.bytes_in_use, 64 * kMiB);
  Array keep = block(64);
  { Array x = block(64), y = block(64); }  // 128 MiB of cached 64 MiB blocks
  EXPECT_EQ(memory_stats(gpu).bytes_cached, 128 * kMiB);
  // 128 MiB more: no cached block of that size, and in use + cached + 128 MiB passes the limit;
  // the cache is emptied and the block fits.
  Array big = block(128);
  const MemoryStats s1 = memory_stats(gpu);
  EXPECT_EQ(s1.bytes_cached, 0u);
  EXPECT_EQ(s1.bytes_in_use, s0.bytes_in_use + 192 * kMiB);
  EXPECT_LE(s1.bytes_in_use + s1.bytes_cached, kLimit);
  EXPECT_GE(s1.peak_bytes_in_use, s1.bytes_in_use);
}

TEST(GpuMemoryLimit, WorkStillRunsUnderTheLimit) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Array a = ones({512, 512}, DType::float32, gpu);
  Array c = matmul(a, a) + 1.0f;  // cuBLAS's workspace comes from the same, limited allocator
  EXPECT_EQ(max(c).item<float>(), 513.0f);
  const MemoryStats s = memory_stats(gpu);
  EXPECT_LE(s.bytes_in_use + s.bytes_cached, kLimit);
}
