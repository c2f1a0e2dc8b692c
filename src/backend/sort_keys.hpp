#pragma once

// The order of sort, argsort, searchsorted and unique (Backend::sort), as unsigned keys: every
// element maps to an unsigned integer of its own width whose unsigned order is NumPy's order.
//   bool, unsigned integers   the bits
//   signed integers           the bits with the sign bit flipped
//   floats                    -0.0 first becomes +0.0 (the two are equal); then a negative number's
//                             bits are inverted and a positive one's sign bit set; every NaN
//                             (any sign, any payload) becomes the largest key, all ones, so NaNs
//                             sort last and equal to each other
// Descending order inverts the key (NaNs then come first). A stable sort of the keys is xp's sort
// on every backend; the CUDA backend's device code (device/sort.cuh) computes the same keys.

#include <cstdint>
#include <cstring>

#include "xp/dtype.hpp"

namespace xp::detail {

// The key of `bits` (the element's bytes as an unsigned integer of its size) for dtype t.
template <class K>
inline K sort_key(DType t, K bits) noexcept {
  constexpr int w = static_cast<int>(sizeof(K)) * 8;
  constexpr K sign = static_cast<K>(K{1} << (w - 1));
  switch (t) {
    case DType::int8:
    case DType::int16:
    case DType::int32:
    case DType::int64:
      return static_cast<K>(bits ^ sign);
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::float64: {
      // The exponent's all-ones pattern: the bits of +infinity.
      K inf = 0;
      if (t == DType::float16) inf = static_cast<K>(0x7C00u);
      if (t == DType::bfloat16) inf = static_cast<K>(0x7F80u);
      if (t == DType::float32) inf = static_cast<K>(0x7F800000u);
      if (t == DType::float64) inf = static_cast<K>(0x7FF0000000000000ull);
      const K mag = static_cast<K>(bits & static_cast<K>(~sign));
      if (mag > inf) return static_cast<K>(~K{0});  // NaN
      if (mag == 0) return sign;                    // -0.0 and +0.0
      return (bits & sign) != 0 ? static_cast<K>(~bits) : static_cast<K>(bits | sign);
    }
    default:
      return bits;
  }
}

}  // namespace xp::detail
