#include "jit/hash.hpp"

#include <cstring>

namespace xp::detail {

namespace {

inline std::uint64_t rotl(std::uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

inline std::uint64_t fmix(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

inline std::uint64_t load64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian hosts only (x86-64, aarch64), which is all xp targets
}

}  // namespace

Hash128 hash128_bytes(const void* data, std::size_t size, std::uint64_t seed) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  const std::size_t blocks = size / 16;
  std::uint64_t h1 = seed, h2 = seed;
  constexpr std::uint64_t c1 = 0x87c37b91114253d5ull, c2 = 0x4cf5ad432745937full;
  for (std::size_t i = 0; i < blocks; ++i) {
    std::uint64_t k1 = load64(bytes + 16 * i), k2 = load64(bytes + 16 * i + 8);
    k1 *= c1;
    k1 = rotl(k1, 31);
    k1 *= c2;
    h1 ^= k1;
    h1 = rotl(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    k2 *= c2;
    k2 = rotl(k2, 33);
    k2 *= c1;
    h2 ^= k2;
    h2 = rotl(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }
  const unsigned char* tail = bytes + blocks * 16;
  std::uint64_t k1 = 0, k2 = 0;
  const std::size_t rest = size & 15;
  for (std::size_t i = rest; i > 8; --i) k2 ^= std::uint64_t{tail[i - 1]} << (8 * (i - 9));
  if (rest > 8) {
    k2 *= c2;
    k2 = rotl(k2, 33);
    k2 *= c1;
    h2 ^= k2;
  }
  for (std::size_t i = rest < 8 ? rest : 8; i > 0; --i) k1 ^= std::uint64_t{tail[i - 1]} << (8 * (i - 1));
  if (rest > 0) {
    k1 *= c1;
    k1 = rotl(k1, 31);
    k1 *= c2;
    h1 ^= k1;
  }
  h1 ^= size;
  h2 ^= size;
  h1 += h2;
  h2 += h1;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 += h2;
  h2 += h1;
  return Hash128{h1, h2};
}

std::string Hash128::hex() const {
  static const char* digits = "0123456789abcdef";
  std::string s(32, '0');
  for (int i = 0; i < 16; ++i) {
    s[15 - i] = digits[(hi >> (4 * i)) & 15];
    s[31 - i] = digits[(lo >> (4 * i)) & 15];
  }
  return s;
}

}  // namespace xp::detail
