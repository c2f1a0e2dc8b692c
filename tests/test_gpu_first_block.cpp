// A program's first kernel and a new output block from the driver are found at once: the CUDA
// backend allocates on its side thread while it looks the kernel up (Backend::run_fused_new). The
// values, when the side thread is and is not used, and an allocation refused there. White-box (the
// count of overlapped allocations), label `gpu`, XP_GPU_MEMORY_LIMIT=256M (tests/CMakeLists.txt).
// Every case frees the cache first and uses a program no other case runs, so that the whole
// executable in one process (under compute-sanitizer) sees what each case in its own process does.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "backend/cuda/cuda_backend.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;
using detail::cuda::overlapped_allocations;

namespace {
constexpr std::int64_t kMiB = std::int64_t{1} << 20;
}

TEST(GpuFirstBlock, AFirstKernelAndANewBlockAreFoundAtOnce) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  free_cached(gpu);
  const std::int64_t n = (std::int64_t{1} << 22) + 3;  // not a multiple of the vector width
  std::vector<std::int16_t> ha(n), hb(n);
  for (std::int64_t i = 0; i < n; ++i) {
    ha[i] = static_cast<std::int16_t>(i % 20011 - 10000);
    hb[i] = static_cast<std::int16_t>((i * 7) % 1009 - 504);
  }
  const Array a = asarray(ha, std::nullopt, gpu), b = asarray(hb, std::nullopt, gpu);
  const auto expect_values = [&](const Array& x, auto f, const char* what) {
    const std::vector<std::int16_t> got = x.to_vector<std::int16_t>();
    ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
    std::int64_t bad = -1;
    for (std::int64_t i = 0; i < n && bad < 0; ++i)
      if (got[i] != f(ha[i], hb[i])) bad = i;
    EXPECT_EQ(bad, -1) << what << " differs at " << bad;
  };
  const auto sum = [](std::int16_t x, std::int16_t y) { return static_cast<std::int16_t>(x + y); };
  const long before = overlapped_allocations(gpu);
  std::optional<Array> c = a + b;
  ASSERT_TRUE(c->is_lazy());
  c->eval();
  EXPECT_EQ(overlapped_allocations(gpu), before + 1) << "the first a + b did not allocate beside its lookup";
  expect_values(*c, sum, "the first a + b");

  // The kernel is loaded now: the next new block is allocated in turn.
  std::optional<Array> d = a + b;
  d->eval();
  EXPECT_EQ(overlapped_allocations(gpu), before + 1);
  expect_values(*d, sum, "the second a + b");

  // A first kernel whose block the cache holds: nothing to allocate beside its lookup.
  c.reset();
  d.reset();
  EXPECT_EQ(memory_stats(gpu).bytes_cached, static_cast<std::uint64_t>(2 * 16 * kMiB));
  Array e = a - b;
  e.eval();
  EXPECT_EQ(overlapped_allocations(gpu), before + 1);
  expect_values(
      e, [](std::int16_t x, std::int16_t y) { return static_cast<std::int16_t>(x - y); }, "a - b");

  // One program with two outputs: one block from the cache, one new beside the lookup.
  Array f = a * b, g = a * b + a;
  eval({f, g});
  EXPECT_EQ(overlapped_allocations(gpu), before + 2);
  EXPECT_EQ(memory_stats(gpu).bytes_cached, 0u);
  expect_values(
      f, [](std::int16_t x, std::int16_t y) { return static_cast<std::int16_t>(x * y); }, "a * b");
  expect_values(
      g, [](std::int16_t x, std::int16_t y) { return static_cast<std::int16_t>(x * y + x); }, "a * b + a");
}

TEST(GpuFirstBlock, ABlockRefusedBesideTheLookupLeavesTheArrayLazy) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  free_cached(gpu);
  ASSERT_EQ(memory_stats(gpu).limit, static_cast<std::uint64_t>(256 * kMiB)) << "run with XP_GPU_MEMORY_LIMIT=256M";
  ASSERT_LE(memory_stats(gpu).bytes_in_use, static_cast<std::uint64_t>(kMiB)) << "this test needs the limit to itself";
  const std::vector<float> h(static_cast<std::size_t>(16 * kMiB), 1.5f);  // 64 MiB
  const Array a = asarray(h, std::nullopt, gpu);
  std::optional<Array> ballast = empty({128 * kMiB}, DType::uint8, gpu);
  const Array extra = empty({32 * kMiB}, DType::uint8, gpu);
  const MemoryStats s1 = memory_stats(gpu);  // 224 MiB in use: 64 more do not fit under 256
  Array c = a * 2.0f + 1.0f;
  ASSERT_TRUE(c.is_lazy());
  const long before = overlapped_allocations(gpu);
  try {
    c.eval();
    FAIL() << "64 MiB more fit under the limit with " << s1.bytes_in_use << " bytes in use";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.requested(), static_cast<std::uint64_t>(64 * kMiB));
    EXPECT_EQ(e.free(), 256 * kMiB - s1.bytes_in_use);
    EXPECT_EQ(e.limit(), static_cast<std::uint64_t>(256 * kMiB));
  }
  EXPECT_EQ(overlapped_allocations(gpu), before + 1) << "the refused block was not asked for beside the lookup";
  EXPECT_TRUE(c.is_lazy());
  const MemoryStats s2 = memory_stats(gpu);
  EXPECT_EQ(s2.bytes_in_use, s1.bytes_in_use);
  EXPECT_EQ(s2.allocations, s1.allocations);

  // With room made, the same array evaluates; its kernel was loaded beside the refused allocation.
  ballast.reset();
  c.eval();
  EXPECT_EQ(overlapped_allocations(gpu), before + 1);
  EXPECT_FALSE(c.is_lazy());
  const std::vector<float> got = c.to_vector<float>();
  std::size_t bad = got.size();
  for (std::size_t i = 0; i < got.size() && bad == got.size(); ++i)
    if (got[i] != 4.0f) bad = i;
  EXPECT_EQ(bad, got.size()) << "c differs at " << bad;
}
