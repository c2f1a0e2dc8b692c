// Host loops over the Philox core of philox.hpp: one Philox block serves every element it holds
// (4, 2 or 1), and a fill may start at any element, so chunks of a draw match one whole pass.
#include "backend/philox.hpp"

#include <cstddef>
#include <string>

#include "xp/error.hpp"

namespace xp::philox {

namespace {

// Calls emit(k, block, slot) for out[k], k < n, which is element first + k of the draw: slot
// `slot` of the `kPerBlock` elements that block (first + k) / kPerBlock holds.
template <u32 kPerBlock, class Emit>
void for_each_element(StreamId id, std::uint64_t first, std::size_t n, Emit&& emit) {
  std::size_t k = 0;
  while (k < n) {
    const std::uint64_t i = first + k;
    const Block block = stream_block(id.seed, id.stream, i / kPerBlock);
    for (u32 slot = static_cast<u32>(i % kPerBlock); slot < kPerBlock && k < n; ++slot, ++k) emit(k, block, slot);
  }
}

template <class T>
void fill_integers_impl(StreamId id, std::uint64_t first, std::uint64_t low, std::uint64_t range, std::span<T> out) {
  if (integer_words(range) == 2) {
    for_each_element<2>(id, first, out.size(), [&](std::size_t k, const Block& b, u32 slot) {
      out[k] = static_cast<T>(low + bounded_from_2_words(b.x[2 * slot], b.x[2 * slot + 1], range));
    });
  } else {
    for_each_element<1>(id, first, out.size(), [&](std::size_t k, const Block& b, u32) {
      out[k] = static_cast<T>(low + bounded_from_4_words(b.x[0], b.x[1], b.x[2], b.x[3], range));
    });
  }
}

}  // namespace

void fill_uniform(StreamId id, std::uint64_t first, std::span<float> out) {
  for_each_element<4>(id, first, out.size(),
                      [&](std::size_t k, const Block& b, u32 slot) { out[k] = uniform_float32_from(b.x[slot]); });
}

void fill_uniform(StreamId id, std::uint64_t first, std::span<double> out) {
  for_each_element<2>(id, first, out.size(), [&](std::size_t k, const Block& b, u32 slot) {
    out[k] = uniform_float64_from(b.x[2 * slot], b.x[2 * slot + 1]);
  });
}

void fill_uniform(StreamId id, std::uint64_t first, std::span<xp::float16> out) {
  for_each_element<4>(id, first, out.size(), [&](std::size_t k, const Block& b, u32 slot) {
    out[k] = xp::float16::from_bits(uniform_float16_bits_from(b.x[slot]));
  });
}

void fill_uniform(StreamId id, std::uint64_t first, std::span<xp::bfloat16> out) {
  for_each_element<4>(id, first, out.size(), [&](std::size_t k, const Block& b, u32 slot) {
    out[k] = xp::bfloat16::from_bits(uniform_bfloat16_bits_from(b.x[slot]));
  });
}

void fill_normal(StreamId id, std::uint64_t first, std::span<float> out) {
  for_each_element<4>(id, first, out.size(), [&](std::size_t k, const Block& b, u32 slot) {
    out[k] = normal_float32_from(b.x[slot & 2], b.x[(slot & 2) + 1], (slot & 1) != 0);
  });
}

void fill_normal(StreamId id, std::uint64_t first, std::span<double> out) {
  for_each_element<2>(id, first, out.size(), [&](std::size_t k, const Block& b, u32 slot) {
    out[k] = normal_float64_from(b.x[0], b.x[1], b.x[2], b.x[3], slot != 0);
  });
}

void fill_normal(StreamId id, std::uint64_t first, std::span<xp::float16> out) {
  for_each_element<4>(id, first, out.size(), [&](std::size_t k, const Block& b, u32 slot) {
    out[k] = xp::float16(normal_float32_from(b.x[slot & 2], b.x[(slot & 2) + 1], (slot & 1) != 0));
  });
}

void fill_normal(StreamId id, std::uint64_t first, std::span<xp::bfloat16> out) {
  for_each_element<4>(id, first, out.size(), [&](std::size_t k, const Block& b, u32 slot) {
    out[k] = xp::bfloat16(normal_float32_from(b.x[slot & 2], b.x[(slot & 2) + 1], (slot & 1) != 0));
  });
}

void fill_integers(StreamId id, std::uint64_t first, std::int64_t low, std::int64_t high, std::span<std::int64_t> out) {
  if (!(low < high)) {
    throw xp::ValueError("integers: low (" + std::to_string(low) + ") must be less than high (" + std::to_string(high) +
                         ")");
  }
  const auto ulow = static_cast<std::uint64_t>(low);
  fill_integers_impl(id, first, ulow, static_cast<std::uint64_t>(high) - ulow, out);
}

void fill_integers(StreamId id, std::uint64_t first, std::uint64_t low, std::uint64_t high,
                   std::span<std::uint64_t> out) {
  if (!(low < high)) {
    throw xp::ValueError("integers: low (" + std::to_string(low) + ") must be less than high (" + std::to_string(high) +
                         ")");
  }
  fill_integers_impl(id, first, low, high - low, out);
}

}  // namespace xp::philox
