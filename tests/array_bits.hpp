#pragma once
// Each element of an array as one word to compare exactly, for tests that check GPU results bit for
// bit against the CPU's: integers and bool by their own bytes (every bit of an int64 or uint64,
// which a float64 would round away), floats by the bits of their float64 value (exact for every
// float dtype) with every NaN the same (payloads differ by hardware).

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "xp/xp.hpp"

namespace xp_test {

inline std::vector<std::uint64_t> exact_bits(const xp::Array& a) {
  const xp::Array h = a.to_device(xp::Device::cpu());
  std::vector<std::uint64_t> out;
  if (xp::kind(h.dtype()) == xp::DTypeKind::floating) {
    for (double x : h.astype(xp::DType::float64).to_vector<double>()) {
      if (std::isnan(x)) x = std::numeric_limits<double>::quiet_NaN();
      std::uint64_t b = 0;
      std::memcpy(&b, &x, 8);
      out.push_back(b);
    }
    return out;
  }
  const std::size_t item = h.itemsize(), n = static_cast<std::size_t>(h.size());
  std::vector<unsigned char> raw(n * item);
  h.copy_to_host(h.dtype(), raw.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t b = 0;  // the element's bytes, zero-extended: distinct elements give distinct words
    std::memcpy(&b, raw.data() + i * item, item);
    out.push_back(b);
  }
  return out;
}

}  // namespace xp_test
