#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xp::detail {

// A fast non-cryptographic 128-bit hash (the MurmurHash3 x64-128 construction). It names cache
// entries and checks their payloads; it is not a defence against a hostile writer (the cache
// folder's ownership and permissions are).
struct Hash128 {
  std::uint64_t lo = 0, hi = 0;
  bool operator==(const Hash128&) const = default;
  std::string hex() const;  // 32 lowercase hex digits
};

Hash128 hash128_bytes(const void* data, std::size_t size, std::uint64_t seed = 0);
inline Hash128 hash128(std::string_view s, std::uint64_t seed = 0) {
  return hash128_bytes(s.data(), s.size(), seed);
}

}  // namespace xp::detail
