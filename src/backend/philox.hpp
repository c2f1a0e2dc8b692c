#pragma once

// Counter-based random numbers: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011) and the conversions xp draws with. Element i of a draw is a pure function of
// (seed, stream, i), so a range can be cut anywhere: CPU threads and GPU blocks each compute their
// own part and the whole is the same as one sequential pass.
//
// The first part of this file is the core: plain 32/64-bit integer arithmetic (and, for normals,
// the C math functions) in small inline functions marked XP_HOST_DEVICE. It needs no header but
// math.h on the host (CUDA has those functions built in), uses no std:: and throws nothing, so a
// CUDA translation unit (nvcc, or NVRTC: checked with both) can include this file unchanged and
// compute the same values. The second part (host only, hidden from NVRTC) fills buffers by looping
// over the core.
//
// ## The stream layout
//
// A draw is defined by a 64-bit seed and a 64-bit stream id. Its words are numbered j = 0, 1, ...:
//
//   key      = (k0, k1) = (seed & 0xffffffff, seed >> 32)
//   block b  = Philox4x32-10(counter = (b & 0xffffffff, b >> 32, stream & 0xffffffff, stream >> 32),
//                            key)                                   four 32-bit words (x0, x1, x2, x3)
//   word j   = word j % 4 of block j / 4
//
// An element of a draw takes w consecutive words (w = 1, 2 or 4, so it never straddles a block):
// element i takes words w*i .. w*i + w - 1, that is block i*w/4 (computed as i >> 2, i >> 1 or i).
// Where two words make a 64-bit value, the lower-numbered word is the low half:
// v = word(j) | word(j+1) << 32. Per kind:
//
//   uniform float32     w = 1   (x >> 8) * 2^-24                  in [0, 1), 24 bits, exact
//   uniform float16     w = 1   (x >> 21) * 2^-11                 in [0, 1), 11 bits, exact in float16
//   uniform bfloat16    w = 1   (x >> 24) * 2^-8                  in [0, 1), 8 bits, exact in bfloat16
//   uniform float64     w = 2   (v >> 11) * 2^-53                 in [0, 1), 53 bits, exact
//   integers [low, high), r = high - low (as unsigned 64-bit, 1 <= r <= 2^64 - 1):
//                       r <= 2^32:  w = 2   low + floor(v * r / 2^64)
//                       r >  2^32:  w = 4   low + floor(V * r / 2^128),  V = v(4i) | v(4i+2) << 64
//   normal float32      w = 1   pair p = i / 2 (block i / 4) from words 2p, 2p+1:
//                               u1 = ((word(2p) >> 8) + 1) * 2^-24        in (0, 1]
//                               u2 = (word(2p+1) >> 8) * 2^-24           in [0, 1)
//                               t  = fl32(2pi_f32 * u2),  radius = sqrtf(-2 * logf(u1))
//                               element 2p = radius * cosf(t), element 2p+1 = radius * sinf(t)
//   normal float64      w = 2   pair p = i / 2 is block p (words 4p .. 4p+3):
//                               u1 = ((v(4p) >> 11) + 1) * 2^-53          in (0, 1]
//                               u2 = (v(4p+2) >> 11) * 2^-53              in [0, 1)
//                               t  = fl64(2pi_f64 * u2),  radius = sqrt(-2 * log(u1))
//                               element 2p = radius * cos(t), element 2p+1 = radius * sin(t)
//
// float16 and bfloat16 normals are the float32 normal rounded to nearest even.
//
// A Generator (below) hands each draw the next stream id: a second draw with the same seed
// continues with fresh numbers instead of repeating the first, and Generator(seed, k) or advance(k)
// reproduces draw k directly. Each draw may have up to 2^64 elements of any kind.
//
// ## Integers: why multiply-shift with a fixed number of words
//
// Lemire's method and rejection sampling are exactly unbiased but draw a random number of words per
// element; a GPU kernel would then need a per-element loop with data-dependent trip counts, and
// element i would no longer sit at a fixed place in the stream. Instead, each element takes a fixed
// number of words and maps the fraction v / 2^64 (or V / 2^128) onto [0, r) by a widening
// multiply. Each of the r results then comes from floor(2^64 / r) or ceil(2^64 / r) of the 2^64
// values of v, so its probability differs from 1/r by less than 2^-64 in absolute terms and by a
// factor within 1 +- r / 2^64 <= 1 +- 2^-32 relative (r <= 2^32); with 128 bits, within
// 1 +- r / 2^128 < 1 +- 2^-64 for every 64-bit range. Both are far below what any statistical test
// of a sample that fits in memory can see. The multiply is written with 32x32->64 products, so it
// needs neither unsigned __int128 nor __umul64hi.
//
// ## Normals: error bound
//
// Box-Muller uses log, sqrt, sin and cos. sqrt is exactly rounded everywhere (CUDA's sqrtf too,
// without fast-math); the products are exactly rounded; t is computed the same way on every device.
// log, sin and cos are not exactly rounded, so normals are not bit-identical across devices. Per the
// libraries' stated maximum errors, glibc on x86-64 (logf, sinf, cosf, log, sin, cos: 1 ulp each
// in its libm-test-ulps) gives at most kNormalUlpBoundCpu ulp from the exact value of the formula
// for the same u1 and t; CUDA (logf, log 1 ulp; sinf, cosf, sin, cos 2 ulp) at most
// kNormalUlpBoundGpu. (sqrt halves log's relative error and adds half an ulp, sin/cos add theirs,
// a relative error is at most twice as many ulps of the result, and the last product adds half an
// ulp: 2 * (0.5 + 0.5 + 1) + 0.5 = 4.5 on glibc, 2 * (0.5 + 0.5 + 2) + 0.5 = 6.5 on CUDA.) The CPU
// is tested against a 50-digit reference at kNormalUlpBoundCpu (measured: about 2 ulp); the GPU
// path is to be checked at kNormalUlpBoundGpu, so CPU and GPU normals differ by at most the sum.
// Generated kernels must be compiled with --fmad=false, and the CPU with -ffp-contract=off.

#ifndef XP_HOST_DEVICE
#if defined(__CUDACC__)
#define XP_HOST_DEVICE __host__ __device__
#else
#define XP_HOST_DEVICE
#endif
#endif

#if !defined(__CUDACC_RTC__)
#include <math.h>  // logf, sqrtf, sinf, cosf and the double forms, in the global namespace as CUDA has them
#endif

namespace xp::philox {

// ================================= core: host and device ===================================

using u32 = unsigned int;
using u64 = unsigned long long;
static_assert(sizeof(u32) == 4 && sizeof(u64) == 8, "philox needs 32- and 64-bit unsigned types");

constexpr u32 kMultiplier0 = 0xD2511F53u;
constexpr u32 kMultiplier1 = 0xCD9E8D57u;
constexpr u32 kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr u32 kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1
constexpr int kRounds = 10;

constexpr int kNormalUlpBoundCpu = 5;  // float32 and float64, from the 50-digit reference
constexpr int kNormalUlpBoundGpu = 7;

struct Block {  // four 32-bit words: a counter or an output
  u32 x[4];
};
struct Key {
  u32 k[2];
};

XP_HOST_DEVICE inline Block philox_round(Block c, Key key) {
  const u64 p0 = static_cast<u64>(kMultiplier0) * c.x[0];
  const u64 p1 = static_cast<u64>(kMultiplier1) * c.x[2];
  Block out;
  out.x[0] = static_cast<u32>(p1 >> 32) ^ c.x[1] ^ key.k[0];
  out.x[1] = static_cast<u32>(p1);
  out.x[2] = static_cast<u32>(p0 >> 32) ^ c.x[3] ^ key.k[1];
  out.x[3] = static_cast<u32>(p0);
  return out;
}

// Philox4x32-10: ten rounds, the key bumped by the Weyl constants between rounds.
XP_HOST_DEVICE inline Block philox4x32_10(Block counter, Key key) {
  for (int r = 0; r < kRounds; ++r) {
    if (r > 0) {
      key.k[0] += kWeyl0;
      key.k[1] += kWeyl1;
    }
    counter = philox_round(counter, key);
  }
  return counter;
}

XP_HOST_DEVICE inline Key key_from_seed(u64 seed) {
  Key k;
  k.k[0] = static_cast<u32>(seed);
  k.k[1] = static_cast<u32>(seed >> 32);
  return k;
}

// Block b of stream `stream` under `seed` (see the layout above).
XP_HOST_DEVICE inline Block stream_block(u64 seed, u64 stream, u64 b) {
  Block c;
  c.x[0] = static_cast<u32>(b);
  c.x[1] = static_cast<u32>(b >> 32);
  c.x[2] = static_cast<u32>(stream);
  c.x[3] = static_cast<u32>(stream >> 32);
  return philox4x32_10(c, key_from_seed(seed));
}

XP_HOST_DEVICE inline u32 stream_word(u64 seed, u64 stream, u64 j) {
  return stream_block(seed, stream, j >> 2).x[j & 3];
}

XP_HOST_DEVICE inline u64 join64(u32 lo, u32 hi) {
  return static_cast<u64>(lo) | (static_cast<u64>(hi) << 32);
}

// ---- conversions of words to values ----

XP_HOST_DEVICE inline float uniform_float32_from(u32 x) {
  return static_cast<float>(x >> 8) * 0x1p-24f;
}

XP_HOST_DEVICE inline double uniform_float64_from(u32 lo, u32 hi) {
  return static_cast<double>(join64(lo, hi) >> 11) * 0x1p-53;
}

// Index (0-based) of the highest set bit of a nonzero value below 2^11.
XP_HOST_DEVICE inline u32 top_bit(u32 k) {
  u32 p = 0;
  while ((k >> (p + 1)) != 0) ++p;
  return p;
}

// The float16 bits of (x >> 21) * 2^-11: k * 2^-11 with k < 2^11 is k's top bit 2^p times 1.f,
// a normal float16 (exponent p - 11 >= -11 > -15) holding all of k's bits.
XP_HOST_DEVICE inline unsigned short uniform_float16_bits_from(u32 x) {
  const u32 k = x >> 21;
  if (k == 0) return 0;
  const u32 p = top_bit(k);
  const u32 exponent = p - 11 + 15;
  const u32 mantissa = (k << (10 - p)) & 0x3FFu;
  return static_cast<unsigned short>((exponent << 10) | mantissa);
}

// The bfloat16 bits of (x >> 24) * 2^-8 (8 exponent bits, 7 mantissa bits, bias 127).
XP_HOST_DEVICE inline unsigned short uniform_bfloat16_bits_from(u32 x) {
  const u32 k = x >> 24;
  if (k == 0) return 0;
  const u32 p = top_bit(k);
  const u32 exponent = p - 8 + 127;
  const u32 mantissa = (k << (7 - p)) & 0x7Fu;
  return static_cast<unsigned short>((exponent << 7) | mantissa);
}

// The 128-bit product a * b, from four 32x32->64 products.
struct Product128 {
  u64 hi, lo;
};
XP_HOST_DEVICE inline Product128 mul_64x64(u64 a, u64 b) {
  const u64 a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const u64 middle = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);  // < 3 * 2^32
  Product128 p;
  p.lo = (middle << 32) | (p00 & 0xFFFFFFFFu);
  p.hi = p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
  return p;
}

// Words per integer element for a range r = high - low (1 <= r): 2 up to 2^32, else 4.
XP_HOST_DEVICE inline u32 integer_words(u64 range) {
  return range <= 0x100000000ull ? 2u : 4u;
}

// floor(v * r / 2^64) for v = (lo, hi), r <= 2^32. Result < r.
XP_HOST_DEVICE inline u64 bounded_from_2_words(u32 lo, u32 hi, u64 range) {
  return mul_64x64(join64(lo, hi), range).hi;
}

// floor(V * r / 2^128) for V = (w0 | w1 << 32 | w2 << 64 | w3 << 96), any 64-bit r. Result < r.
// V * r = Vh * r * 2^64 + Vl * r; the low 64 bits of Vl * r cannot carry into bit 128.
XP_HOST_DEVICE inline u64 bounded_from_4_words(u32 w0, u32 w1, u32 w2, u32 w3, u64 range) {
  const Product128 a = mul_64x64(join64(w2, w3), range);
  const Product128 b = mul_64x64(join64(w0, w1), range);
  const u64 sum = a.lo + b.hi;
  return a.hi + (sum < a.lo ? 1u : 0u);
}

// One Box-Muller pair member: `second` false gives radius * cos(t), true gives radius * sin(t).
XP_HOST_DEVICE inline float normal_float32_from(u32 a, u32 b, bool second) {
  const float u1 = static_cast<float>((a >> 8) + 1u) * 0x1p-24f;  // (0, 1]: log(u1) is finite
  const float u2 = static_cast<float>(b >> 8) * 0x1p-24f;
  const float t = 0x1.921fb6p+2f * u2;  // 2pi rounded to float32 (0x40c90fdb)
  const float radius = ::sqrtf(-2.0f * ::logf(u1));
  return second ? radius * ::sinf(t) : radius * ::cosf(t);
}

XP_HOST_DEVICE inline double normal_float64_from(u32 a0, u32 a1, u32 b0, u32 b1, bool second) {
  const double u1 = static_cast<double>((join64(a0, a1) >> 11) + 1u) * 0x1p-53;
  const double u2 = static_cast<double>(join64(b0, b1) >> 11) * 0x1p-53;
  const double t = 0x1.921fb54442d18p+2 * u2;  // 2pi rounded to float64
  const double radius = ::sqrt(-2.0 * ::log(u1));
  return second ? radius * ::sin(t) : radius * ::cos(t);
}

// ---- element i of a draw: what a one-element-per-thread kernel calls ----

XP_HOST_DEVICE inline float uniform_float32(u64 seed, u64 stream, u64 i) {
  return uniform_float32_from(stream_block(seed, stream, i >> 2).x[i & 3]);
}
XP_HOST_DEVICE inline unsigned short uniform_float16_bits(u64 seed, u64 stream, u64 i) {
  return uniform_float16_bits_from(stream_block(seed, stream, i >> 2).x[i & 3]);
}
XP_HOST_DEVICE inline unsigned short uniform_bfloat16_bits(u64 seed, u64 stream, u64 i) {
  return uniform_bfloat16_bits_from(stream_block(seed, stream, i >> 2).x[i & 3]);
}
XP_HOST_DEVICE inline double uniform_float64(u64 seed, u64 stream, u64 i) {
  const Block b = stream_block(seed, stream, i >> 1);
  const u32 w = static_cast<u32>(i & 1) * 2;
  return uniform_float64_from(b.x[w], b.x[w + 1]);
}
// The offset in [0, r) of an integer element; r = high - low as unsigned 64-bit (wrapping), >= 1.
// The value is low + offset, added in unsigned 64-bit (wrapping) and converted to the dtype.
XP_HOST_DEVICE inline u64 integer_offset(u64 seed, u64 stream, u64 i, u64 range) {
  if (integer_words(range) == 2) {
    const Block b = stream_block(seed, stream, i >> 1);
    const u32 w = static_cast<u32>(i & 1) * 2;
    return bounded_from_2_words(b.x[w], b.x[w + 1], range);
  }
  const Block b = stream_block(seed, stream, i);
  return bounded_from_4_words(b.x[0], b.x[1], b.x[2], b.x[3], range);
}
XP_HOST_DEVICE inline float normal_float32(u64 seed, u64 stream, u64 i) {
  const Block b = stream_block(seed, stream, i >> 2);
  const u32 w = static_cast<u32>(i & 2);
  return normal_float32_from(b.x[w], b.x[w + 1], (i & 1) != 0);
}
XP_HOST_DEVICE inline double normal_float64(u64 seed, u64 stream, u64 i) {
  const Block b = stream_block(seed, stream, i >> 1);
  return normal_float64_from(b.x[0], b.x[1], b.x[2], b.x[3], (i & 1) != 0);
}

}  // namespace xp::philox

// ================================= host: filling buffers ===================================

#if !defined(__CUDACC_RTC__)
#include <cstdint>
#include <span>

#include "xp/dtype.hpp"

namespace xp::philox {

// One draw's place: the seed (the key) and the stream id (the counter's high 64 bits).
struct StreamId {
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  bool operator==(const StreamId&) const = default;
};

// Hands out stream ids: each draw takes the next one, so successive draws with one seed never
// repeat each other. Not thread-safe; a shared generator needs a lock around next().
class Generator {
 public:
  explicit Generator(std::uint64_t seed, std::uint64_t stream = 0) : seed_(seed), stream_(stream) {}
  std::uint64_t seed() const noexcept { return seed_; }
  std::uint64_t position() const noexcept { return stream_; }  // the stream id the next draw takes
  StreamId next() noexcept { return {seed_, stream_++}; }      // take one draw's stream
  void advance(std::uint64_t draws) noexcept { stream_ += draws; }

 private:
  std::uint64_t seed_;
  std::uint64_t stream_;
};

// Each fill writes elements first .. first + out.size() - 1 of the draw `id` into out, so any split
// of [0, n) into chunks gives the same values as one call. Bit for bit what the core functions
// above give element by element.
void fill_uniform(StreamId id, std::uint64_t first, std::span<float> out);
void fill_uniform(StreamId id, std::uint64_t first, std::span<double> out);
void fill_uniform(StreamId id, std::uint64_t first, std::span<xp::float16> out);
void fill_uniform(StreamId id, std::uint64_t first, std::span<xp::bfloat16> out);

void fill_normal(StreamId id, std::uint64_t first, std::span<float> out);
void fill_normal(StreamId id, std::uint64_t first, std::span<double> out);
void fill_normal(StreamId id, std::uint64_t first, std::span<xp::float16> out);
void fill_normal(StreamId id, std::uint64_t first, std::span<xp::bfloat16> out);

// Integers in [low, high): xp::ValueError unless low < high. The values depend on low and high
// only through low and r = high - low, so a draw into [0, r) shifted by low gives the same stream.
void fill_integers(StreamId id, std::uint64_t first, std::int64_t low, std::int64_t high, std::span<std::int64_t> out);
void fill_integers(StreamId id, std::uint64_t first, std::uint64_t low, std::uint64_t high,
                   std::span<std::uint64_t> out);

}  // namespace xp::philox
#endif
