#pragma once

// The arithmetic of XP_GPU_MEMORY_LIMIT, apart so that it is tested without a GPU.

#include <cstdint>
#include <optional>

#include "xp/config.hpp"

namespace xp::detail {

// The limit in bytes for a device of `total` bytes: the byte count as given, or the percentage of
// total rounded down (at least 1 byte); 0 when there is no limit (or a percentage of total 0).
std::uint64_t memory_limit_bytes(const std::optional<MemoryLimit>& limit, std::uint64_t total) noexcept;

// Whether `request` more bytes keep in_use + cached within `limit` (0: no limit). No overflow.
bool within_limit(std::uint64_t in_use, std::uint64_t cached, std::uint64_t request, std::uint64_t limit) noexcept;

// The bytes left under the limit (0 when at or past it, or when there is no limit).
std::uint64_t room_under_limit(std::uint64_t in_use, std::uint64_t cached, std::uint64_t limit) noexcept;

}  // namespace xp::detail
