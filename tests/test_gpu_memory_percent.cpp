// XP_GPU_MEMORY_LIMIT=12.5% (set by tests/CMakeLists.txt for this executable): the limit is an
// eighth of the device's memory as the driver reports it (cuDeviceTotalMem: GpuInfo::memory_total),
// rounded down, and an allocation past it is refused with that limit. Label `gpu`. The parsing of
// the variable is tested without a GPU in test_config.cpp (ConfigParse.MemoryLimits).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

TEST(GpuMemoryPercent, TheLimitIsThatShareOfTheDevicesMemory) {
  XP_REQUIRE_GPU();
  const std::optional<MemoryLimit>& asked = config().gpu_memory_limit;
  ASSERT_TRUE(asked.has_value() && asked->percent.has_value()) << "run with XP_GPU_MEMORY_LIMIT=12.5%";
  EXPECT_EQ(*asked->percent, 12.5);
  const Device gpu = Device::cuda(0);
  const std::uint64_t total = gpu_info(gpu).memory_total;
  ASSERT_GT(total, std::uint64_t{1} << 30);
  const std::uint64_t limit = total / 8;  // 12.5%, rounded down
  EXPECT_EQ(memory_stats(gpu).limit, limit);

  // What fits is allocated; one byte more than the room left is refused before the driver is asked.
  free_all(gpu);
  Array a = empty({std::int64_t{1} << 20}, DType::uint8, gpu);
  const MemoryStats s = memory_stats(gpu);
  ASSERT_LE(s.bytes_in_use + s.bytes_cached, limit);
  const std::uint64_t room = limit - s.bytes_in_use - s.bytes_cached;
  try {
    Array b = empty({static_cast<std::int64_t>(room + 1)}, DType::uint8, gpu);
    FAIL() << room + 1 << " bytes fit under a limit of " << limit << " with " << room << " left";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.requested(), room + 1);
    EXPECT_EQ(e.free(), room);
    EXPECT_EQ(e.limit(), limit);
    EXPECT_NE(std::string(e.what()).find("limit " + std::to_string(limit)), std::string::npos) << e.what();
  }
  EXPECT_EQ(memory_stats(gpu).bytes_in_use, s.bytes_in_use);
}
