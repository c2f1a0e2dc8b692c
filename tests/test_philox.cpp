// Philox random streams (src/backend/philox.hpp): the Random123 known answers, the stream layout and
// every kind of draw against tests/ref/philox_reference.py (an independent Python implementation
// from the definitions, run with the repository's .venv python; without it those tests are skipped
// with the reason, a failure under XP_TEST_REQUIRE_NUMPY=1), then properties that need no
// reference: chunked fills equal one pass and the per-element core functions, generator streams,
// integer ranges and uniformity, the widening multiplies against unsigned __int128, moments.
#include "backend/philox.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/dtype.hpp"
#include "xp/error.hpp"

namespace px = xp::philox;
using px::Block;
using px::StreamId;

namespace {

const char* const kPython = XP_TEST_PYTHON;
const std::string kScript = std::string(XP_SOURCE_DIR) + "/tests/ref/philox_reference.py";

// The reference's output split at whitespace, or why it could not run.
struct Reference {
  std::optional<std::string> missing;  // no python: a skip (a failure under XP_TEST_REQUIRE_NUMPY=1)
  std::optional<std::string> error;    // the script broke: a failure
  std::vector<std::string> tokens;
};

Reference run_reference(const std::vector<std::string>& args) {
  Reference ref;
  if (access(kPython, X_OK) != 0) {
    ref.missing = std::string("no Python at ") + kPython + " (scripts/main.sh makes .venv)";
    return ref;
  }
  std::vector<std::string> argv = {kPython, kScript};
  argv.insert(argv.end(), args.begin(), args.end());
  const xp_test::ProcessResult r = xp_test::run_process(argv);
  if (r.exit_code != 0) {
    ref.error = "philox_reference.py exited with " + std::to_string(r.exit_code) + " (signal " +
                std::to_string(r.signal) + "):\n" + r.err;
    return ref;
  }
  std::istringstream in(r.out);
  for (std::string t; in >> t;) ref.tokens.push_back(t);
  return ref;
}

#define XP_REFERENCE(var, ...)                                             \
  const Reference var = run_reference(__VA_ARGS__);                        \
  if (var.missing) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", *var.missing); \
  ASSERT_FALSE(var.error.has_value()) << *var.error

// "draw KIND SEED STREAM FIRST N [LOW HIGH]", expecting N values.
#define XP_REFERENCE_DRAW(var, kind, id, first, n, ...)                                                           \
  XP_REFERENCE(var, {"draw", kind, std::to_string((id).seed), std::to_string((id).stream), std::to_string(first), \
                     std::to_string(n) __VA_OPT__(, ) __VA_ARGS__});                                              \
  ASSERT_EQ(var.tokens.size(), static_cast<std::size_t>(n))

std::uint64_t hex(const std::string& s) {
  return std::stoull(s, nullptr, 16);
}

template <class T>
std::uint64_t bits_of(T v) {
  if constexpr (sizeof(T) == 4) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  } else {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }
}

// |value - ref| in ulps of T at ref's binade (zero's ulp: the smallest subnormal).
template <class T>
long double ulp_error(T value, long double ref) {
  const int digits = std::numeric_limits<T>::digits;  // 24 or 53
  long double ulp = std::numeric_limits<T>::denorm_min();
  if (ref != 0) {
    int e = 0;
    std::frexp(ref, &e);  // |ref| in [2^(e-1), 2^e)
    ulp = std::max(ulp, std::ldexp(1.0L, e - digits));
  }
  return std::fabs(static_cast<long double>(value) - ref) / ulp;
}

constexpr StreamId kIds[] = {{0, 0}, {42, 7}, {0x0123456789ABCDEFull, 0xFEDCBA9876543210ull}};

// ---------------------------------- the Philox block function ----------------------------------

struct Kat {
  Block counter;
  px::Key key;
  Block expected;
};
// Random123's published known answers for philox4x32-10.
const Kat kKats[] = {
    {{{0, 0, 0, 0}}, {{0, 0}}, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
    {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
     {{0xffffffff, 0xffffffff}},
     {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
    {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
     {{0xa4093822, 0x299f31d0}},
     {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
};

TEST(Philox, KnownAnswers) {
  for (const Kat& kat : kKats) {
    const Block out = px::philox4x32_10(kat.counter, kat.key);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(out.x[w], kat.expected.x[w]) << "word " << w;
  }
}

TEST(Philox, ReferenceSelfTestPassesTheKnownAnswers) {
  XP_REFERENCE(ref, {"selftest"});
  ASSERT_EQ(ref.tokens, std::vector<std::string>{"ok"});
}

TEST(Philox, BlocksMatchReference) {
  std::vector<std::pair<Block, px::Key>> inputs;
  for (const Kat& kat : kKats) inputs.push_back({kat.counter, kat.key});
  inputs.push_back({{{1, 0, 0, 0}}, {{0, 0}}});
  inputs.push_back({{{0, 0, 0, 1}}, {{0, 0}}});
  inputs.push_back({{{0, 0, 0, 0}}, {{0, 1}}});
  inputs.push_back({{{0x80000000u, 0x7fffffffu, 0xdeadbeefu, 0x01234567u}}, {{0x89abcdefu, 0xfedcba98u}}});
  for (const auto& [counter, key] : inputs) {
    std::vector<std::string> args = {"block"};
    for (std::uint32_t w : counter.x) args.push_back(std::to_string(w));
    for (std::uint32_t k : key.k) args.push_back(std::to_string(k));
    XP_REFERENCE(ref, args);
    ASSERT_EQ(ref.tokens.size(), 4u);
    const Block out = px::philox4x32_10(counter, key);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(out.x[w], hex(ref.tokens[w])) << "word " << w;
  }
}

// The layout: word j = word j % 4 of block j / 4; counter (block, stream), key = seed.
TEST(Philox, StreamWordsMatchReference) {
  for (const StreamId& id : kIds) {
    XP_REFERENCE_DRAW(ref, "words", id, 0, 2000);
    for (std::size_t j = 0; j < ref.tokens.size(); ++j) {
      ASSERT_EQ(px::stream_word(id.seed, id.stream, j), hex(ref.tokens[j])) << "word " << j;
    }
  }
  // Far into a stream: the block index's high word is used.
  const StreamId id{5, 6};
  const std::uint64_t first = 0x0000000700000001ull * 4 - 3;
  XP_REFERENCE_DRAW(ref, "words", id, first, 16);
  for (std::size_t j = 0; j < ref.tokens.size(); ++j) {
    ASSERT_EQ(px::stream_word(id.seed, id.stream, first + j), hex(ref.tokens[j])) << "word " << first + j;
  }
}

// ------------------------------- draws, bit for bit with Python -------------------------------

TEST(Philox, UniformFloat32MatchesReference) {
  for (const StreamId& id : kIds) {
    for (std::uint64_t first : {0ull, 3ull, 1ull << 40}) {
      std::vector<float> out(3001);
      px::fill_uniform(id, first, std::span<float>(out));
      XP_REFERENCE_DRAW(ref, "uniform32", id, first, out.size());
      for (std::size_t k = 0; k < out.size(); ++k) ASSERT_EQ(bits_of(out[k]), hex(ref.tokens[k])) << "element " << k;
    }
  }
}

TEST(Philox, UniformFloat64MatchesReference) {
  for (const StreamId& id : kIds) {
    for (std::uint64_t first : {0ull, 1ull, 1ull << 40}) {
      std::vector<double> out(3001);
      px::fill_uniform(id, first, std::span<double>(out));
      XP_REFERENCE_DRAW(ref, "uniform64", id, first, out.size());
      for (std::size_t k = 0; k < out.size(); ++k) ASSERT_EQ(bits_of(out[k]), hex(ref.tokens[k])) << "element " << k;
    }
  }
}

TEST(Philox, UniformFloat16AndBfloat16MatchReference) {
  for (const StreamId& id : kIds) {
    std::vector<xp::float16> h(3001);
    std::vector<xp::bfloat16> bf(3001);
    px::fill_uniform(id, 5, std::span<xp::float16>(h));
    px::fill_uniform(id, 5, std::span<xp::bfloat16>(bf));
    XP_REFERENCE_DRAW(ref_h, "uniform16", id, 5, h.size());
    XP_REFERENCE_DRAW(ref_bf, "uniformbf16", id, 5, bf.size());
    for (std::size_t k = 0; k < h.size(); ++k) {
      ASSERT_EQ(h[k].bits, hex(ref_h.tokens[k])) << "float16 element " << k;
      ASSERT_EQ(bf[k].bits, hex(ref_bf.tokens[k])) << "bfloat16 element " << k;
    }
  }
}

struct IntRange {
  std::int64_t low, high;
};

TEST(Philox, SignedIntegersMatchReference) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const IntRange ranges[] = {
      {0, 1},  // r = 1: always low
      {0, 10},
      {-5, 3},
      {-128, 128},
      {0, 1000003},
      {0, 1ll << 32},   // r = 2^32: the largest two-word range
      {-1, 1ll << 32},  // r = 2^32 + 1: four words
      {-(1ll << 40), 1ll << 40},
      {kMin, kMax},  // r = 2^64 - 1
      {kMin, kMin + 3},
      {kMax - 1000, kMax},
  };
  for (const IntRange& r : ranges) {
    const StreamId id{0xC0FFEEull, static_cast<std::uint64_t>(r.high)};
    std::vector<std::int64_t> out(2001);
    px::fill_integers(id, 7, r.low, r.high, std::span<std::int64_t>(out));
    XP_REFERENCE_DRAW(ref, "integers", id, 7, out.size(), std::to_string(r.low), std::to_string(r.high));
    for (std::size_t k = 0; k < out.size(); ++k) {
      ASSERT_EQ(out[k], std::stoll(ref.tokens[k])) << "[" << r.low << ", " << r.high << ") element " << k;
    }
  }
}

TEST(Philox, UnsignedIntegersMatchReference) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const std::pair<std::uint64_t, std::uint64_t> ranges[] = {
      {0, 256}, {1ull << 63, kMax}, {0, kMax}, {kMax - 5, kMax}, {0, 0xFFFFFFFFull}, {12345, 0x100003039ull}};
  for (const auto& [low, high] : ranges) {
    const StreamId id{99, 1};
    std::vector<std::uint64_t> out(2001);
    px::fill_integers(id, 0, low, high, std::span<std::uint64_t>(out));
    XP_REFERENCE_DRAW(ref, "integers", id, 0, out.size(), std::to_string(low), std::to_string(high));
    for (std::size_t k = 0; k < out.size(); ++k) {
      ASSERT_EQ(out[k], std::stoull(ref.tokens[k])) << "[" << low << ", " << high << ") element " << k;
    }
  }
}

// Normals: within kNormalUlpBoundCpu of the 50-digit value of the same formula (philox.hpp says
// why not bit for bit).
template <class T>
void check_normals_against_reference(const char* kind) {
  for (const StreamId& id : kIds) {
    std::vector<T> out(2001);
    px::fill_normal(id, 3, std::span<T>(out));
    XP_REFERENCE_DRAW(ref, kind, id, 3, out.size());
    long double worst = 0;
    std::size_t exact = 0;
    for (std::size_t k = 0; k < out.size(); ++k) {
      const long double r = std::strtold(ref.tokens[k].c_str(), nullptr);
      const long double e = ulp_error(out[k], r);
      ASSERT_LE(e, px::kNormalUlpBoundCpu) << kind << " element " << k << ": " << out[k] << " vs " << ref.tokens[k];
      worst = std::max(worst, e);
      if (e <= 0.5L) ++exact;
    }
    std::printf("%s seed %llu: max error %.3Lf ulp, %zu of %zu correctly rounded\n", kind,
                static_cast<unsigned long long>(id.seed), worst, exact, out.size());
  }
}

TEST(Philox, NormalFloat32WithinBoundOfReference) {
  check_normals_against_reference<float>("normal32");
}
TEST(Philox, NormalFloat64WithinBoundOfReference) {
  check_normals_against_reference<double>("normal64");
}

// --------------------------------- determinism and layout ---------------------------------

// Filling [0, n) in chunks at odd offsets gives what one pass gives, and what the per-element core
// functions (a GPU thread's view) give.
template <class T, class Fill, class Element>
void check_chunks(Fill fill, Element element, const char* what) {
  constexpr std::size_t n = 10007;
  const std::size_t cuts[] = {0, 1, 2, 7, 8, 9, 1000, 1001, 4096, 4099, 9999, n};
  for (const StreamId& id : kIds) {
    std::vector<T> whole(n), chunked(n);
    fill(id, 0, std::span<T>(whole));
    for (std::size_t c = 0; c + 1 < std::size(cuts); ++c) {
      fill(id, cuts[c], std::span<T>(chunked).subspan(cuts[c], cuts[c + 1] - cuts[c]));
    }
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::memcmp(&whole[i], &chunked[i], sizeof(T)), 0) << what << " element " << i;
      const T e = element(id, i);
      ASSERT_EQ(std::memcmp(&whole[i], &e, sizeof(T)), 0) << what << " element " << i << " (core function)";
    }
  }
}

TEST(Philox, ChunksEqualOnePassAndTheCoreFunctions) {
  check_chunks<float>([](StreamId id, std::uint64_t f, std::span<float> o) { px::fill_uniform(id, f, o); },
                      [](StreamId id, std::uint64_t i) { return px::uniform_float32(id.seed, id.stream, i); },
                      "uniform float32");
  check_chunks<double>([](StreamId id, std::uint64_t f, std::span<double> o) { px::fill_uniform(id, f, o); },
                       [](StreamId id, std::uint64_t i) { return px::uniform_float64(id.seed, id.stream, i); },
                       "uniform float64");
  check_chunks<xp::float16>([](StreamId id, std::uint64_t f, std::span<xp::float16> o) { px::fill_uniform(id, f, o); },
                            [](StreamId id, std::uint64_t i) {
                              return xp::float16::from_bits(px::uniform_float16_bits(id.seed, id.stream, i));
                            },
                            "uniform float16");
  check_chunks<xp::bfloat16>(
      [](StreamId id, std::uint64_t f, std::span<xp::bfloat16> o) { px::fill_uniform(id, f, o); },
      [](StreamId id, std::uint64_t i) {
        return xp::bfloat16::from_bits(px::uniform_bfloat16_bits(id.seed, id.stream, i));
      },
      "uniform bfloat16");
  check_chunks<float>([](StreamId id, std::uint64_t f, std::span<float> o) { px::fill_normal(id, f, o); },
                      [](StreamId id, std::uint64_t i) { return px::normal_float32(id.seed, id.stream, i); },
                      "normal float32");
  check_chunks<double>([](StreamId id, std::uint64_t f, std::span<double> o) { px::fill_normal(id, f, o); },
                       [](StreamId id, std::uint64_t i) { return px::normal_float64(id.seed, id.stream, i); },
                       "normal float64");
  check_chunks<xp::float16>(
      [](StreamId id, std::uint64_t f, std::span<xp::float16> o) { px::fill_normal(id, f, o); },
      [](StreamId id, std::uint64_t i) { return xp::float16(px::normal_float32(id.seed, id.stream, i)); },
      "normal float16");
  check_chunks<xp::bfloat16>(
      [](StreamId id, std::uint64_t f, std::span<xp::bfloat16> o) { px::fill_normal(id, f, o); },
      [](StreamId id, std::uint64_t i) { return xp::bfloat16(px::normal_float32(id.seed, id.stream, i)); },
      "normal bfloat16");
  for (const IntRange r : {IntRange{-3, 1000}, IntRange{std::numeric_limits<std::int64_t>::min(), 77}}) {
    const auto range = static_cast<std::uint64_t>(r.high) - static_cast<std::uint64_t>(r.low);
    check_chunks<std::int64_t>(
        [r](StreamId id, std::uint64_t f, std::span<std::int64_t> o) { px::fill_integers(id, f, r.low, r.high, o); },
        [r, range](StreamId id, std::uint64_t i) {
          return static_cast<std::int64_t>(static_cast<std::uint64_t>(r.low) +
                                           px::integer_offset(id.seed, id.stream, i, range));
        },
        "integers");
  }
}

TEST(Philox, SeedsAndStreamsGiveDifferentNumbers) {
  std::vector<float> a(64), b(64), c(64);
  px::fill_uniform({1, 0}, 0, std::span<float>(a));
  px::fill_uniform({2, 0}, 0, std::span<float>(b));
  px::fill_uniform({1, 1}, 0, std::span<float>(c));
  int same_ab = 0, same_ac = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same_ab += a[i] == b[i];
    same_ac += a[i] == c[i];
  }
  EXPECT_LE(same_ab, 1);
  EXPECT_LE(same_ac, 1);
}

TEST(Philox, GeneratorContinuesInsteadOfRepeating) {
  px::Generator g(1234);
  EXPECT_EQ(g.seed(), 1234u);
  EXPECT_EQ(g.position(), 0u);
  const StreamId first = g.next(), second = g.next();
  EXPECT_EQ(first, (StreamId{1234, 0}));
  EXPECT_EQ(second, (StreamId{1234, 1}));
  EXPECT_EQ(g.position(), 2u);

  std::vector<double> x(100), y(100);
  px::fill_uniform(first, 0, std::span<double>(x));
  px::fill_uniform(second, 0, std::span<double>(y));
  EXPECT_NE(x, y);

  // A generator restarted at a position, or advanced to it, reproduces that draw.
  px::Generator h(1234);
  h.advance(1);
  EXPECT_EQ(h.next(), second);
  EXPECT_EQ(px::Generator(1234, 1).next(), second);
}

// ----------------------------------------- integers -----------------------------------------

TEST(Philox, IntegersStayInRange) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const IntRange ranges[] = {
      {0, 1},       {-1, 0},          {0, 2},           {-7, 6},   {0, 1ll << 32}, {0, (1ll << 32) + 1},
      {kMin, kMax}, {kMin, kMin + 1}, {kMax - 1, kMax}, {kMin, 0}, {-1, kMax}};
  for (const IntRange& r : ranges) {
    std::vector<std::int64_t> out(20000);
    px::fill_integers({3, 4}, 0, r.low, r.high, std::span<std::int64_t>(out));
    std::int64_t lo = kMax, hi = kMin;
    for (std::int64_t v : out) {
      ASSERT_GE(v, r.low);
      ASSERT_LT(v, r.high);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const auto range = static_cast<std::uint64_t>(r.high) - static_cast<std::uint64_t>(r.low);
    if (range <= 13) {  // small ranges: every value comes up
      EXPECT_EQ(lo, r.low);
      EXPECT_EQ(hi, r.high - 1);
    }
  }
  std::vector<std::uint64_t> u(20000);
  px::fill_integers({3, 4}, 0, std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max(),
                    std::span<std::uint64_t>(u));
  for (std::uint64_t v : u) ASSERT_LT(v, std::numeric_limits<std::uint64_t>::max());
}

TEST(Philox, IntegersRejectAnEmptyRange) {
  std::vector<std::int64_t> out(4);
  EXPECT_THROW(px::fill_integers({0, 0}, 0, std::int64_t{5}, std::int64_t{5}, std::span<std::int64_t>(out)),
               xp::ValueError);
  EXPECT_THROW(px::fill_integers({0, 0}, 0, std::int64_t{5}, std::int64_t{-5}, std::span<std::int64_t>(out)),
               xp::ValueError);
  std::vector<std::uint64_t> u(4);
  EXPECT_THROW(px::fill_integers({0, 0}, 0, std::uint64_t{9}, std::uint64_t{9}, std::span<std::uint64_t>(u)),
               xp::ValueError);
}

// Pearson's chi-square over `bins` equal bins of a fixed-seed sample; the limit is the
// 1 - 10^-6 quantile of chi-square with bins - 1 degrees of freedom (Wilson-Hilferty).
void expect_uniform_bins(const std::vector<std::uint64_t>& counts, std::size_t n, const char* what) {
  const double k = static_cast<double>(counts.size() - 1);
  const double expected = static_cast<double>(n) / static_cast<double>(counts.size());
  double chi2 = 0;
  for (std::uint64_t c : counts)
    chi2 += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  const double z = 4.753;  // the 1 - 10^-6 normal quantile
  const double limit = k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
  EXPECT_LT(chi2, limit) << what;
  std::printf("%s: chi-square %.1f with %.0f degrees of freedom (limit %.1f)\n", what, chi2, k, limit);
}

TEST(Philox, IntegersAreUniform) {
  constexpr std::size_t n = 1000000;
  std::vector<std::int64_t> out(n);
  for (std::int64_t bins : {7, 100, 256}) {
    px::fill_integers({2024, 0}, 0, std::int64_t{-3}, bins - 3, std::span<std::int64_t>(out));
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(bins));
    for (std::int64_t v : out) ++counts[static_cast<std::size_t>(v + 3)];
    expect_uniform_bins(counts, n, ("integers in [-3, " + std::to_string(bins - 3) + ")").c_str());
  }
  // Four-word ranges: 10^12 (not a power of two) in 50 bins, and the whole int64 range by top bits.
  constexpr std::int64_t kTera = 1000000000000;
  px::fill_integers({2024, 1}, 0, std::int64_t{0}, kTera, std::span<std::int64_t>(out));
  std::vector<std::uint64_t> counts(50);
  for (std::int64_t v : out) ++counts[static_cast<std::size_t>(v / (kTera / 50))];
  expect_uniform_bins(counts, n, "integers in [0, 10^12)");
  px::fill_integers({2024, 2}, 0, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                    std::span<std::int64_t>(out));
  std::vector<std::uint64_t> top(64);
  for (std::int64_t v : out) ++top[(static_cast<std::uint64_t>(v) + (1ull << 63)) >> 58];
  expect_uniform_bins(top, n, "int64 full range, top 6 bits");
}

// The widening multiplies against the compiler's 128-bit arithmetic.
TEST(Philox, WideningMultipliesMatchInt128) {
  using u128 = unsigned __int128;
  std::vector<std::uint64_t> values = {0,
                                       1,
                                       2,
                                       0xFFFFFFFFull,
                                       0x100000000ull,
                                       0x100000001ull,
                                       0xFFFFFFFFFFFFFFFFull,
                                       0x8000000000000000ull,
                                       0x7FFFFFFFFFFFFFFFull};
  std::vector<std::uint64_t> random(2000);
  px::fill_integers({77, 0}, 0, std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max(),
                    std::span<std::uint64_t>(random));
  for (std::size_t k = 0; k < random.size(); ++k) values.push_back(random[k] >> (k % 64));  // all magnitudes
  for (std::size_t a = 0; a < values.size(); a += 3) {
    for (std::size_t b = 0; b < values.size(); b += 7) {
      const u128 p = static_cast<u128>(values[a]) * values[b];
      const px::Product128 q = px::mul_64x64(values[a], values[b]);
      ASSERT_EQ(q.hi, static_cast<std::uint64_t>(p >> 64));
      ASSERT_EQ(q.lo, static_cast<std::uint64_t>(p));
    }
  }
  for (std::size_t k = 0; k + 3 < values.size(); ++k) {
    const std::uint64_t vlo = values[k], vhi = values[k + 1];
    for (std::uint64_t r : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{0x100000000}, values[k + 2] | 1,
                            values[k + 3] >> 32 | 1, std::numeric_limits<std::uint64_t>::max()}) {
      if (r <= 0x100000000ull) {
        const std::uint64_t two =
            px::bounded_from_2_words(static_cast<std::uint32_t>(vlo), static_cast<std::uint32_t>(vlo >> 32), r);
        ASSERT_EQ(two, static_cast<std::uint64_t>((static_cast<u128>(vlo) * r) >> 64));
        ASSERT_LT(two, r);
      }
      // floor(V r / 2^128) with V = vhi:vlo, from V r = vhi r 2^64 + vlo r.
      const u128 a = static_cast<u128>(vhi) * r, b = static_cast<u128>(vlo) * r;
      const u128 upper = (a >> 64) + (((a & ~std::uint64_t{0}) + (b >> 64)) >> 64);
      const std::uint64_t four =
          px::bounded_from_4_words(static_cast<std::uint32_t>(vlo), static_cast<std::uint32_t>(vlo >> 32),
                                   static_cast<std::uint32_t>(vhi), static_cast<std::uint32_t>(vhi >> 32), r);
      ASSERT_EQ(four, static_cast<std::uint64_t>(upper));
      ASSERT_LT(four, r);
    }
  }
}

// ------------------------------------ floats: properties ------------------------------------

// Every 16-bit uniform value, against the dtype layer's float -> float16 / bfloat16 conversion of
// the same (exact) value; all below 1.
TEST(Philox, SixteenBitUniformsAreExactAndBelowOne) {
  for (std::uint32_t k = 0; k < 2048; ++k) {
    const std::uint16_t bits = px::uniform_float16_bits_from(k << 21 | 0x1FFFFFu);
    ASSERT_EQ(bits, xp::float_to_half_bits(static_cast<float>(k) / 2048.0f)) << k;
    ASSERT_LT(xp::half_bits_to_float(bits), 1.0f);
  }
  for (std::uint32_t k = 0; k < 256; ++k) {
    const std::uint16_t bits = px::uniform_bfloat16_bits_from(k << 24 | 0xFFFFFFu);
    ASSERT_EQ(bits, xp::float_to_bfloat16_bits(static_cast<float>(k) / 256.0f)) << k;
    ASSERT_LT(xp::bfloat16_bits_to_float(bits), 1.0f);
  }
}

TEST(Philox, UniformExtremes) {
  EXPECT_EQ(px::uniform_float32_from(0), 0.0f);
  EXPECT_EQ(px::uniform_float32_from(0xFFFFFFFFu), 1.0f - 0x1p-24f);
  EXPECT_EQ(px::uniform_float64_from(0, 0), 0.0);
  EXPECT_EQ(px::uniform_float64_from(0xFFFFFFFFu, 0xFFFFFFFFu), 1.0 - 0x1p-53);
  // The largest u1 is 1: a zero radius, never log(0).
  EXPECT_EQ(px::normal_float32_from(0xFFFFFFFFu, 12345, false), 0.0f);
  EXPECT_TRUE(std::isfinite(px::normal_float32_from(0, 0, false)));
  EXPECT_TRUE(std::isfinite(px::normal_float64_from(0, 0, 0, 0, false)));
  EXPECT_NEAR(px::normal_float32_from(0, 0, false), std::sqrt(-2 * std::log(0x1p-24)), 1e-5);
}

template <class T, class Fill>
void check_moments(Fill fill, double mean, double variance, const char* what) {
  constexpr std::size_t n = 1000000;
  std::vector<T> out(n);
  fill(StreamId{31337, 0}, std::span<T>(out));
  double sum = 0, sum2 = 0;
  for (T v : out) sum += static_cast<double>(v);
  const double m = sum / n;
  for (T v : out) sum2 += (static_cast<double>(v) - m) * (static_cast<double>(v) - m);
  const double var = sum2 / (n - 1);
  // Six standard errors: sd(mean) = sqrt(variance / n); sd(variance) ~ variance * sqrt(2 / n) for a
  // normal, smaller for a uniform.
  EXPECT_NEAR(m, mean, 6 * std::sqrt(variance / n)) << what;
  EXPECT_NEAR(var, variance, 6 * variance * std::sqrt(2.0 / n)) << what;
  std::printf("%s: mean %.5f, variance %.5f over %zu\n", what, m, var, n);
}

TEST(Philox, MomentsOverAMillion) {
  check_moments<float>([](StreamId id, std::span<float> o) { px::fill_uniform(id, 0, o); }, 0.5, 1.0 / 12,
                       "uniform float32");
  check_moments<double>([](StreamId id, std::span<double> o) { px::fill_uniform(id, 0, o); }, 0.5, 1.0 / 12,
                        "uniform float64");
  check_moments<float>([](StreamId id, std::span<float> o) { px::fill_normal(id, 0, o); }, 0.0, 1.0, "normal float32");
  check_moments<double>([](StreamId id, std::span<double> o) { px::fill_normal(id, 0, o); }, 0.0, 1.0,
                        "normal float64");
}

}  // namespace
