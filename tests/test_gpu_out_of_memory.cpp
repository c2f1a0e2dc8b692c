// The driver's out-of-memory with blocks in xp's cache: the allocator frees its cached blocks and
// asks once more (src/backend/cuda/cuda_backend.cpp, CudaBackend::allocate). Label `gpu`, and run
// alone (RUN_SERIAL in tests/CMakeLists.txt): the test holds nearly all of the device's free memory
// for a moment, which would starve GPU tests running beside it. Without XP_GPU_MEMORY_LIMIT, so that
// the refusal is the driver's. (A request no device could hold is ArrayGpu.DevicesAreNeverMixed...
// in test_array_gpu.cpp.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

Array bytes_on(const Device& d, std::uint64_t n) {
  return empty({static_cast<std::int64_t>(n)}, DType::uint8, d);
}
}  // namespace

TEST(GpuOutOfMemory, CachedBlocksAreFreedAndTheAllocationRetried) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  ASSERT_EQ(memory_stats(gpu).limit, 0u) << "runs without XP_GPU_MEMORY_LIMIT: the refusal must be the driver's";
  free_all(gpu);
  const MemoryStats s0 = memory_stats(gpu);
  ASSERT_EQ(s0.bytes_cached, 0u);
  const GpuInfo info0 = gpu_info(gpu);
  ASSERT_TRUE(info0.memory_free.has_value());
  ASSERT_EQ(info0.memory_free_source, "driver");
  const std::uint64_t free0 = *info0.memory_free;

  // Blocks of 1 GiB (a size xp keeps exactly) holding all but 1 to 2 GiB of the free memory, then
  // dropped: they stay in xp's cache, still allocated from the driver.
  ASSERT_GE(free0, 4 * kGiB) << "too little free device memory for this test";
  const std::uint64_t blocks = free0 / kGiB - 1;
  {
    std::vector<Array> held;
    for (std::uint64_t i = 0; i < blocks; ++i) held.push_back(bytes_on(gpu, kGiB));
    EXPECT_EQ(memory_stats(gpu).bytes_in_use, s0.bytes_in_use + blocks * kGiB);
  }
  const MemoryStats s1 = memory_stats(gpu);
  EXPECT_EQ(s1.bytes_in_use, s0.bytes_in_use);
  ASSERT_EQ(s1.bytes_cached, blocks * kGiB);

  // A block of another size (2 GiB + 2 MiB: no cached block matches) that the driver can give only
  // once the cached blocks are returned to it.
  const std::uint64_t request = 2 * kGiB + 2 * kMiB;
  const std::uint64_t free1 = *gpu_info(gpu).memory_free;
  ASSERT_LT(free1, request) << "the driver has room for the request beside the cached blocks (free before " << free0
                            << ", now " << free1 << "): the test would not reach the retry";
  ASSERT_GE(free1 + s1.bytes_cached, request + kGiB);
  Array big = bytes_on(gpu, request);  // the driver refuses, the cache is emptied, the second try succeeds
  const MemoryStats s2 = memory_stats(gpu);
  EXPECT_EQ(s2.bytes_cached, 0u) << "every cached block returned to the driver";
  EXPECT_EQ(s2.bytes_in_use, s0.bytes_in_use + request);
  EXPECT_EQ(s2.allocations, s1.allocations + 1);

  // The block is real device memory: its last bytes are written and read back.
  Array tail = big.slice({Slice(static_cast<std::int64_t>(request - 4096), std::nullopt)});
  tail.assign(7);
  EXPECT_EQ(tail.to_vector<std::uint8_t>(), std::vector<std::uint8_t>(4096, 7));

  tail = Array();
  big = Array();
  free_all(gpu);
  const MemoryStats s3 = memory_stats(gpu);
  EXPECT_EQ(s3.bytes_cached, 0u);
  EXPECT_EQ(s3.bytes_in_use, s0.bytes_in_use);
}
