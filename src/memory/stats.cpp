// The arithmetic of XP_GPU_MEMORY_LIMIT (stats.hpp). The public statistics (xp/memory.hpp) are
// the backends' own counters, reached through backend/registry.cpp.
#include "memory/stats.hpp"

#include <cmath>

namespace xp::detail {

std::uint64_t memory_limit_bytes(const std::optional<MemoryLimit>& limit, std::uint64_t total) noexcept {
  if (!limit) return 0;
  if (!limit->percent) return limit->bytes;
  if (total == 0) return 0;  // a percentage of an unknown size: no limit
  // The percentage is a decimal the user wrote (33.3 is 33.29999... as a double): a millionth of a
  // byte of slack keeps 33.3% of 1000 bytes at 333.
  const long double bytes =
      std::floor(static_cast<long double>(total) * static_cast<long double>(*limit->percent) / 100.0L + 1e-6L);
  if (bytes < 1.0L) return 1;
  if (bytes >= static_cast<long double>(total)) return total;
  return static_cast<std::uint64_t>(bytes);
}

bool within_limit(std::uint64_t in_use, std::uint64_t cached, std::uint64_t request, std::uint64_t limit) noexcept {
  if (limit == 0) return true;
  const std::uint64_t held = in_use + cached;
  return held <= limit && request <= limit - held;
}

std::uint64_t room_under_limit(std::uint64_t in_use, std::uint64_t cached, std::uint64_t limit) noexcept {
  const std::uint64_t held = in_use + cached;
  return limit > held ? limit - held : 0;
}

}  // namespace xp::detail
