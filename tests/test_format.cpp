// Printing arrays (repr and str) against NumPy 2 itself: each array below is described to
// tests/ref/format_reference.py (dtype, shape, raw little-endian bytes), which prints NumPy's repr
// and str of the same array with the default print options (bfloat16 through ml_dtypes), and the
// strings must match character for character. Without the repository's .venv python, or without
// numpy / ml_dtypes in it, the tests are skipped with the reason (a failure under
// XP_TEST_REQUIRE_NUMPY=1).
//
// No known corner is left out: every case below is compared in full.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "array/format.hpp"
#include "test_util.hpp"
#include "xp/dtype.hpp"

using xp::DType;

namespace {

struct Case {
  std::string label;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;
};

std::int64_t count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

template <class T>
void put(std::vector<unsigned char>& b, T v) {
  unsigned char raw[sizeof(T)];
  std::memcpy(raw, &v, sizeof(T));
  b.insert(b.end(), raw, raw + sizeof(T));  // little-endian on x86-64, as the script reads it
}

// One element of `t` from a double (integers by truncation, 16-bit floats rounded from float).
void put_value(std::vector<unsigned char>& b, DType t, double v) {
  switch (t) {
    case DType::bool_:
      put<std::uint8_t>(b, v != 0 ? 1 : 0);
      break;
    case DType::int8:
      put(b, static_cast<std::int8_t>(v));
      break;
    case DType::int16:
      put(b, static_cast<std::int16_t>(v));
      break;
    case DType::int32:
      put(b, static_cast<std::int32_t>(v));
      break;
    case DType::int64:
      put(b, static_cast<std::int64_t>(v));
      break;
    case DType::uint8:
      put(b, static_cast<std::uint8_t>(v));
      break;
    case DType::uint16:
      put(b, static_cast<std::uint16_t>(v));
      break;
    case DType::uint32:
      put(b, static_cast<std::uint32_t>(v));
      break;
    case DType::uint64:
      put(b, static_cast<std::uint64_t>(v));
      break;
    case DType::float16:
      put(b, xp::float16(static_cast<float>(v)).bits);
      break;
    case DType::bfloat16:
      put(b, xp::bfloat16(static_cast<float>(v)).bits);
      break;
    case DType::float32:
      put(b, static_cast<float>(v));
      break;
    case DType::float64:
      put(b, v);
      break;
    case DType::complex64:
      put(b, static_cast<float>(v));
      put(b, 0.0f);
      break;
    case DType::complex128:
      put(b, v);
      put(b, 0.0);
      break;
  }
}

// An array whose element i is f(i).
Case gen(std::string label, DType t, std::vector<std::int64_t> shape, const std::function<double(std::int64_t)>& f) {
  Case c{std::move(label), t, std::move(shape), {}};
  for (std::int64_t i = 0; i < count(c.shape); ++i) put_value(c.bytes, t, f(i));
  return c;
}

// An array of the given values, repeated to fill the shape.
Case vals(std::string label, DType t, std::vector<std::int64_t> shape, std::vector<double> v) {
  return gen(std::move(label), t, std::move(shape),
             [v](std::int64_t i) { return v[static_cast<std::size_t>(i) % v.size()]; });
}

// An array of raw bit patterns (the low itemsize bytes of each), repeated to fill the shape.
Case bits(std::string label, DType t, std::vector<std::int64_t> shape, std::vector<std::uint64_t> v) {
  Case c{std::move(label), t, std::move(shape), {}};
  const std::size_t item = xp::itemsize(t);
  for (std::int64_t i = 0; i < count(c.shape); ++i) {
    const std::uint64_t x = v[static_cast<std::size_t>(i) % v.size()];
    for (std::size_t k = 0; k < item; ++k) c.bytes.push_back(static_cast<unsigned char>(x >> (8 * k)));
  }
  return c;
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<Case> table_cases() {
  std::vector<Case> c;
  // bool
  c.push_back(vals("bool 0-d true", DType::bool_, {}, {1}));
  c.push_back(vals("bool 0-d false", DType::bool_, {}, {0}));
  c.push_back(vals("bool 1-d", DType::bool_, {3}, {1, 0, 1}));
  c.push_back(vals("bool all true", DType::bool_, {2}, {1}));
  c.push_back(vals("bool 2-d wraps", DType::bool_, {2, 20}, {1, 0, 0}));
  c.push_back(vals("bool summarised", DType::bool_, {2000}, {0, 1, 1}));
  // integers
  c.push_back(vals("int8 limits", DType::int8, {3}, {-128, 0, 127}));
  c.push_back(vals("int8 0-d", DType::int8, {}, {-5}));
  c.push_back(gen("int16 wide row", DType::int16, {100}, [](std::int64_t i) { return i * 331 - 16000; }));
  c.push_back(gen("int32 2-d", DType::int32, {3, 4}, [](std::int64_t i) { return i * i * i - 20; }));
  c.push_back(gen("int64 iota wraps", DType::int64, {100}, [](std::int64_t i) { return i; }));
  c.push_back(vals("int64 0-d", DType::int64, {}, {42}));
  c.push_back(bits("int64 limits", DType::int64, {3}, {0x8000000000000000ull, 0, 0x7FFFFFFFFFFFFFFFull}));
  c.push_back(gen("int64 summarised", DType::int64, {2000}, [](std::int64_t i) { return i; }));
  c.push_back(vals("uint8", DType::uint8, {4}, {0, 1, 254, 255}));
  c.push_back(gen("uint16 2-d", DType::uint16, {4, 5}, [](std::int64_t i) { return i * 3000; }));
  c.push_back(bits("uint32 max", DType::uint32, {2}, {0, 0xFFFFFFFFull}));
  c.push_back(bits("uint64 max", DType::uint64, {3}, {0, 1, 0xFFFFFFFFFFFFFFFFull}));
  c.push_back(vals("uint64 0-d", DType::uint64, {}, {7}));
  c.push_back(gen("int32 4-d", DType::int32, {2, 2, 2, 3}, [](std::int64_t i) { return i - 12; }));
  c.push_back(gen("int8 3-d summarised", DType::int8, {11, 11, 11}, [](std::int64_t i) { return i % 256 - 128; }));
  // float64
  c.push_back(vals("float64 integral", DType::float64, {3}, {1, 2, 3}));
  c.push_back(vals("float64 fractions", DType::float64, {3}, {0.1, 0.25, -1.5}));
  c.push_back(vals("float64 1e8 scientific", DType::float64, {2}, {1e8, 1}));
  c.push_back(vals("float64 below 1e8", DType::float64, {2}, {99999999.5, 1}));
  c.push_back(vals("float64 small scientific", DType::float64, {2}, {1e-5, 1}));
  c.push_back(vals("float64 1e-4 positional", DType::float64, {2}, {1e-4, 0.1}));
  c.push_back(vals("float64 ratio 1000", DType::float64, {2}, {1, 1000}));
  c.push_back(vals("float64 ratio 1001", DType::float64, {2}, {1, 1001}));
  c.push_back(vals("float64 special", DType::float64, {5}, {kNan, kInf, -kInf, 1.5, 0}));
  c.push_back(vals("float64 nan only", DType::float64, {2}, {kNan}));
  c.push_back(vals("float64 inf nan", DType::float64, {3}, {kInf, kNan, -kInf}));
  c.push_back(vals("float64 special scientific", DType::float64, {4}, {kNan, 1e-10, -kInf, 3e20}));
  c.push_back(vals("float64 signed zeros", DType::float64, {3}, {-0.0, 0.0, -0.0}));
  c.push_back(vals("float64 0-d zero", DType::float64, {}, {0.0}));
  c.push_back(vals("float64 0-d minus zero", DType::float64, {}, {-0.0}));
  c.push_back(vals("float64 0-d pi", DType::float64, {}, {std::numbers::pi}));
  c.push_back(vals("float64 0-d 1e16", DType::float64, {}, {1e16}));
  c.push_back(vals("float64 0-d below 1e16", DType::float64, {}, {9999999999999998.0}));
  c.push_back(vals("float64 0-d 1e-5", DType::float64, {}, {1.5e-5}));
  c.push_back(vals("float64 0-d nan", DType::float64, {}, {kNan}));
  c.push_back(vals("float64 0-d -inf", DType::float64, {}, {-kInf}));
  c.push_back(vals("float64 0-d 1e8", DType::float64, {}, {1e8}));
  c.push_back(gen("float64 pi wraps", DType::float64, {40}, [](std::int64_t i) { return std::numbers::pi * (i - 7); }));
  c.push_back(gen("float64 3-d", DType::float64, {2, 3, 4}, [](std::int64_t i) { return i * 0.5 - 3; }));
  c.push_back(gen("float64 3-d scientific", DType::float64, {2, 2, 3},
                  [](std::int64_t i) { return std::pow(10.0, i - 6.0) * (i % 2 ? -1 : 1); }));
  c.push_back(vals("float64 extremes", DType::float64, {4}, {1e300, 1e-300, 5e-324, 1.7976931348623157e308}));
  c.push_back(vals("float64 cut at 8 digits", DType::float64, {4}, {1.0 / 3, 2.0 / 3, 0.999999999, 123456.789012345}));
  c.push_back(vals("float64 round to 1.", DType::float64, {2}, {0.999999999, 0.5}));
  c.push_back(vals("float64 big integers", DType::float64, {3}, {12345678, 99999999, 0.5}));
  c.push_back(vals("float64 scientific digits", DType::float64, {3}, {1.23456789e-7, 1, 2.5e10}));
  c.push_back(vals("float64 exponent 3 digits", DType::float64, {3}, {1e-100, 1.5e200, 2}));
  c.push_back(vals("float64 negative", DType::float64, {4}, {-1, -22.5, -333.25, 4}));
  {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> nd(0, 1);
    std::vector<double> r(10000);
    for (auto& x : r) x = nd(rng);
    c.push_back(vals("float64 summarised", DType::float64, {10000}, r));
    c.push_back(vals("float64 2-d summarised", DType::float64, {100, 100}, r));
    c.push_back(vals("float64 3-d summarised", DType::float64, {20, 20, 25}, r));
    c.push_back(vals("float64 summarised one axis", DType::float64, {1001, 2}, r));
    c.push_back(vals("float64 long axis short", DType::float64, {2, 501}, r));
  }
  c.push_back(vals("float64 ties at 8 digits", DType::float64, {4}, {0.001953125, 5 / 512.0, 3 / 1024.0, 0.5}));
  c.push_back(vals("float64 single", DType::float64, {1}, {2.5}));
  c.push_back(gen("float64 unit axes", DType::float64, {3, 1, 4}, [](std::int64_t i) { return i / 8.0; }));
  c.push_back(vals("int64 1x1x1", DType::int64, {1, 1, 1}, {-7}));
  c.push_back(gen("int32 summarised rows", DType::int32, {5, 400}, [](std::int64_t i) { return i * 7 - 900; }));
  c.push_back(gen("float64 summarised inner", DType::float64, {2, 2, 300}, [](std::int64_t i) { return i * 0.01; }));
  // float32
  c.push_back(vals("float32 tenths", DType::float32, {3}, {0.1, 0.2, 0.3}));
  c.push_back(vals("float32 1e6 scientific", DType::float32, {2}, {1e6, 1}));
  c.push_back(vals("float32 below 1e6", DType::float32, {2}, {999999.9, 1}));
  c.push_back(vals("float32 1e-4", DType::float32, {2}, {1e-4, 0.5}));
  c.push_back(bits("float32 below 1e-4", DType::float32, {2}, {0x38d1b716, 0x3f000000}));
  c.push_back(vals("float32 0-d pi", DType::float32, {}, {std::numbers::pi}));
  c.push_back(vals("float32 0-d 1e10", DType::float32, {}, {1e10}));
  c.push_back(vals("float32 0-d 123456.7", DType::float32, {}, {123456.7}));
  c.push_back(vals("float32 0-d 1e-4", DType::float32, {}, {1e-4}));
  c.push_back(vals("float32 special", DType::float32, {4}, {kNan, -kInf, 0.125, -2}));
  c.push_back(vals("float32 mixed", DType::float32, {5}, {3.4e38, 1.2e-38, 1.4e-45, -1, 0}));
  c.push_back(gen("float32 wide 2-d", DType::float32, {3, 12}, [](std::int64_t i) { return 1234.5678 * (i + 1) / 7; }));
  c.push_back(vals("float32 ratio", DType::float32, {2}, {0.001, 1.0001}));
  // float16
  c.push_back(vals("float16 sci at 1000", DType::float16, {3}, {0.1, 0.2, 1000}));
  c.push_back(vals("float16 positional", DType::float16, {3}, {1, 2.5, 999}));
  c.push_back(vals("float16 0-d 0.1", DType::float16, {}, {0.1}));
  c.push_back(vals("float16 0-d 1000", DType::float16, {}, {1000}));
  c.push_back(vals("float16 0-d 999", DType::float16, {}, {999}));
  c.push_back(vals("float16 max", DType::float16, {2}, {65504, -65504}));
  c.push_back(bits("float16 subnormals", DType::float16, {3}, {0x0001, 0x03FF, 0x0400}));
  c.push_back(bits("float16 nan inf", DType::float16, {4}, {0x7E00, 0xFC00, 0x7C00, 0x3C00}));
  c.push_back(bits("float16 tie at 5e4", DType::float16, {2}, {0x7A1A, 0x7A1B}));
  // max / min is 1000.17 exactly but 1000 in float16, where NumPy divides: positional
  c.push_back(bits("float16 ratio rounds in half", DType::float16, {2}, {0x30de, 0x58c1}));
  c.push_back(gen("float16 wide", DType::float16, {30}, [](std::int64_t i) { return 0.1 * i + 0.01; }));
  c.push_back(gen("float16 2-d summarised", DType::float16, {50, 50}, [](std::int64_t i) { return (i % 97) * 0.37; }));
  // bfloat16
  c.push_back(vals("bfloat16 basic", DType::bfloat16, {6}, {1, 2.5, 3.1, 100, kNan, -kInf}));
  c.push_back(vals("bfloat16 0-d", DType::bfloat16, {}, {3.5}));
  c.push_back(vals("bfloat16 0-d nan", DType::bfloat16, {}, {-kNan}));
  c.push_back(
      vals("bfloat16 magnitudes", DType::bfloat16, {8}, {1e-5, 1.0 / 3, -0.0, 3.4e38, 1e6, 123456, 1234567, 9.2e-41}));
  c.push_back(gen("bfloat16 wide", DType::bfloat16, {40}, [](std::int64_t i) { return std::exp(i * 0.7) / 1000; }));
  c.push_back(gen("bfloat16 3-d", DType::bfloat16, {2, 2, 3}, [](std::int64_t i) { return i * 1.1; }));
  c.push_back(gen("bfloat16 summarised", DType::bfloat16, {3000}, [](std::int64_t i) { return i * 0.25; }));
  // empty
  c.push_back(vals("float64 empty", DType::float64, {0}, {0}));
  c.push_back(vals("int64 empty", DType::int64, {0}, {0}));
  c.push_back(vals("bool empty", DType::bool_, {0}, {0}));
  c.push_back(vals("int8 empty 2-d", DType::int8, {2, 0}, {0}));
  c.push_back(vals("float32 empty 3-d", DType::float32, {0, 3, 2}, {0}));
  c.push_back(vals("bfloat16 empty", DType::bfloat16, {0}, {0}));
  c.push_back(vals("float16 empty 2-d", DType::float16, {0, 4}, {0}));
  // line ends: rows of every length near the width, so the ", dtype=..." suffix lands on either line
  for (std::int64_t n = 5; n <= 16; ++n)
    c.push_back(gen("float32 row " + std::to_string(n), DType::float32, {n}, [](std::int64_t i) { return 0.5 + i; }));
  for (std::int64_t n = 10; n <= 14; ++n)
    c.push_back(
        gen("uint8 row " + std::to_string(n), DType::uint8, {2, n}, [](std::int64_t i) { return i * 9 % 256; }));
  return c;
}

// Bit patterns of the 16-bit floats. float16: all 65,536 in 1000-element arrays (shortest digits
// in half precision, NumPy's padding and switch to scientific notation over all of them) and every
// 9th as a 0-d array, whose str follows NumPy's scalar rules. bfloat16 (printed by ml_dtypes with
// %g, unpadded): every 3rd block of 1000 and every 31st pattern as 0-d. Every pattern as 0-d
// matches as well; the sampling only keeps NumPy's share of the run time short.
std::vector<Case> sixteen_bit_cases() {
  std::vector<Case> cases;
  for (DType t : {DType::float16, DType::bfloat16}) {
    const bool f16 = t == DType::float16;
    for (std::uint64_t start = 0; start < 65536; start += f16 ? 1000 : 3000) {
      std::vector<std::uint64_t> block;
      for (std::uint64_t b = start; b < std::min<std::uint64_t>(start + 1000, 65536); ++b) block.push_back(b);
      cases.push_back(bits(std::string(xp::name(t)) + " patterns from " + std::to_string(start), t,
                           {static_cast<std::int64_t>(block.size())}, block));
    }
    for (std::uint64_t b = 0; b < 65536; b += f16 ? 9 : 31)
      cases.push_back(bits(std::string(xp::name(t)) + " 0-d " + std::to_string(b), t, {}, {b}));
  }
  return cases;
}

// Random float32 and float64 values: bit patterns over the whole range, and decimals in the
// positional range where the 8-digit cutoff rounds.
std::vector<Case> random_float_cases() {
  std::vector<Case> cases;
  std::mt19937_64 rng(20260412);
  for (DType t : {DType::float32, DType::float64}) {
    const bool f32 = t == DType::float32;
    auto random_bits = [&] { return f32 ? rng() & 0xFFFFFFFFull : rng(); };
    for (int k = 0; k < 10; ++k) {
      std::vector<std::uint64_t> v(20);
      for (auto& x : v) x = random_bits();
      cases.push_back(bits(std::string(xp::name(t)) + " random bits " + std::to_string(k), t, {20}, v));
    }
    for (int k = 0; k < 500; ++k)
      cases.push_back(bits(std::string(xp::name(t)) + " 0-d random bits " + std::to_string(k), t, {}, {random_bits()}));
    std::uniform_real_distribution<double> u(0, 1);
    for (int k = 0; k < 40; ++k) {
      const double scale = std::pow(10.0, static_cast<int>(rng() % 9) - 3);
      std::vector<double> v(12);
      for (auto& x : v) x = u(rng) * scale;
      cases.push_back(vals(std::string(xp::name(t)) + " random decimals " + std::to_string(k), t, {3, 4}, v));
    }
    for (int k = 0; k < 200; ++k) {
      const double scale = std::pow(10.0, static_cast<int>(rng() % 24) - 8);
      cases.push_back(
          vals(std::string(xp::name(t)) + " 0-d random decimal " + std::to_string(k), t, {}, {u(rng) * scale}));
    }
  }
  return cases;
}

enum Group { kTable, kSixteenBit, kRandom, kGroups };

// All groups' cases and NumPy's (repr, str) of each, from one run of the reference script (NumPy's
// import is most of its time).
struct Answers {
  std::vector<Case> cases[kGroups];
  std::vector<std::pair<std::string, std::string>> expected[kGroups];
  xp_test::PythonReference ref;
};

const Answers& answers() {
  static const Answers a = [] {
    Answers a;
    a.cases[kTable] = table_cases();
    a.cases[kSixteenBit] = sixteen_bit_cases();
    a.cases[kRandom] = random_float_cases();
    nlohmann::json j = nlohmann::json::array();
    static const char* hex = "0123456789abcdef";
    for (const auto& group : a.cases) {
      for (const Case& c : group) {
        std::string h;
        h.reserve(c.bytes.size() * 2);
        for (unsigned char b : c.bytes) {
          h += hex[b >> 4];
          h += hex[b & 15];
        }
        j.push_back({{"dtype", std::string(xp::name(c.dtype))}, {"shape", c.shape}, {"hex", h}});
      }
    }
    xp_test::TempDir dir;
    const std::string path = dir / "cases.json";
    std::ofstream(path) << j.dump();
    a.ref = xp_test::run_python_reference("format_reference.py", {path});
    if (a.ref.missing || a.ref.error) return a;
    const nlohmann::json answer = nlohmann::json::parse(a.ref.out, nullptr, /*allow_exceptions=*/false);
    if (answer.is_discarded() || !answer.is_array() || answer.size() != j.size()) {
      a.ref.error = "format_reference.py printed no JSON list of " + std::to_string(j.size()) + " answers:\n" +
                    a.ref.out.substr(0, 2000);
      return a;
    }
    std::size_t k = 0;
    for (int g = 0; g < kGroups; ++g) {
      for (std::size_t i = 0; i < a.cases[g].size(); ++i, ++k)
        a.expected[g].emplace_back(answer[k].at("repr").get<std::string>(), answer[k].at("str").get<std::string>());
    }
    return a;
  }();
  return a;
}

// Compares every case of a group; reports at most `max_failures` of them in full.
void check(Group g, int max_failures = 20) {
  const Answers& a = answers();
  XP_REQUIRE_REFERENCE(a.ref);
  const std::vector<Case>& cases = a.cases[g];
  int failures = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string r = xp::detail::format_repr(c.dtype, c.shape, c.bytes.data());
    const std::string s = xp::detail::format_str(c.dtype, c.shape, c.bytes.data());
    const auto& [want_repr, want_str] = a.expected[g][i];
    if (r != want_repr || s != want_str) {
      if (++failures <= max_failures) {
        ADD_FAILURE() << c.label << "\nrepr expected:\n"
                      << want_repr << "\nrepr got:\n"
                      << r << "\nstr expected:\n"
                      << want_str << "\nstr got:\n"
                      << s;
      }
    }
  }
  EXPECT_EQ(failures, 0) << "of " << cases.size() << " arrays";
}

TEST(Format, TableMatchesNumPy) {
  ASSERT_GE(table_cases().size(), 60u);
  check(kTable);
}

TEST(Format, SixteenBitPatternsMatchNumPy) {
  check(kSixteenBit);
}

TEST(Format, RandomFloatsMatchNumPy) {
  check(kRandom);
}

}  // namespace

// The NumPy references kept across test programs and builds (tests/test_util.hpp): the same request
// again reads the kept entry (its output files copied back), XP_TEST_REFERENCE_CACHE=0 runs the
// script afresh, and another request has another key.
TEST(ReferenceCache, TheSameRequestReadsTheKeptRunAndAnotherRunsTheScript) {
  namespace fs = std::filesystem;
  namespace rc = xp_test::reference_cache;
  const std::string python = XP_TEST_PYTHON, script = "array_reference.py";
  // An empty request, with a token no other test writes beside it (the folder's files are keyed).
  const std::string token =
      std::to_string(::getpid()) + "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const auto request = [&](const xp_test::TempDir& d, const std::string& t) {
    std::ofstream(d / "request.json") << R"({"cases": []})";
    std::ofstream(d / "token.txt") << t;
    return std::vector<std::string>{d.path()};
  };
  // Kept runs on, whatever this process was given (put back however the test ends).
  struct Restore {
    std::optional<std::string> before;
    Restore() {
      if (const char* v = std::getenv("XP_TEST_REFERENCE_CACHE")) before = v;
      ::unsetenv("XP_TEST_REFERENCE_CACHE");
    }
    ~Restore() {
      if (before) {
        ::setenv("XP_TEST_REFERENCE_CACHE", before->c_str(), 1);
      } else {
        ::unsetenv("XP_TEST_REFERENCE_CACHE");
      }
    }
  } restore;
  xp_test::TempDir d1, d2, d3, d4;
  const std::vector<std::string> a1 = request(d1, token);
  const fs::path entry = rc::venv(python) / "xp-test-references" / rc::key(python, script, a1);
  const xp_test::PythonReference r1 = xp_test::run_python_reference(script, a1);
  XP_REQUIRE_REFERENCE(r1);
  ASSERT_TRUE(fs::is_regular_file(entry / "stdout")) << entry;
  ASSERT_TRUE(fs::is_regular_file(entry / "files" / "0" / "response.json"));
  // Marked, the kept response shows where the next answer comes from.
  std::ofstream(entry / "files" / "0" / "response.json") << "kept";
  const std::vector<std::string> a2 = request(d2, token);
  EXPECT_EQ(rc::key(python, script, a2), entry.filename().string()) << "the same request, another folder";
  const xp_test::PythonReference r2 = xp_test::run_python_reference(script, a2);
  EXPECT_FALSE(r2.missing || r2.error);
  EXPECT_EQ(r2.out, r1.out);
  EXPECT_EQ(rc::slurp_file(d2 / "response.json"), "kept");
  // Without the cache the script answers.
  const std::vector<std::string> a3 = request(d3, token);
  ::setenv("XP_TEST_REFERENCE_CACHE", "0", 1);
  const xp_test::PythonReference r3 = xp_test::run_python_reference(script, a3);
  ::unsetenv("XP_TEST_REFERENCE_CACHE");
  EXPECT_FALSE(r3.missing || r3.error);
  EXPECT_NE(rc::slurp_file(d3 / "response.json").find("answers"), std::string::npos);
  // Another request (one byte of the folder changed) has another key.
  EXPECT_NE(rc::key(python, script, request(d4, token + "x")), entry.filename().string());
  std::error_code ec;
  fs::remove_all(entry, ec);
}
