// The CPU backend's exact elementwise kernels (src/backend/cpu/ew_exact.cpp):
// - every defined (op, dtype) combination against NumPy 2 and ml_dtypes, bit for bit (NaN as a
//   class), on special values and seeded random ones (tests/ref/exact_reference.py, run with the
//   repository's .venv python; without it these tests skip, or fail under XP_TEST_REQUIRE_NUMPY=1).
//   Where xp deliberately differs from NumPy (docs/semantics.md) the script gives xp's documented
//   answer instead, and the hand-written tables below check those rules directly;
// - the set of defined combinations is exactly the reference's (nullptr for the rest);
// - each element's bits are independent of n, of its position in the tile and of in-place use;
// - the semantics table itself, written out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cpu/tile_ops.hpp"
#include "test_util.hpp"

using xp::DType;
using xp::detail::Op;
using xp::detail::cpu::exact_tile_fn;
using xp::detail::cpu::TileFn;

namespace {

constexpr std::array<DType, 13> kAll = {DType::bool_,    DType::int8,    DType::int16,  DType::int32,  DType::int64,
                                        DType::uint8,    DType::uint16,  DType::uint32, DType::uint64, DType::float16,
                                        DType::bfloat16, DType::float32, DType::float64};

Op op_named(const std::string& s) {
  for (int i = 0; i < xp::detail::kOpCount; ++i) {
    if (xp::detail::op_name(static_cast<Op>(i)) == s) return static_cast<Op>(i);
  }
  ADD_FAILURE() << "the reference names an op xp does not have: " << s;
  return Op::load;
}

DType dtype_named(const std::string& s) {
  const auto t = xp::parse_dtype(s);
  EXPECT_TRUE(t.has_value()) << s;
  return t.value_or(DType::float64);
}

std::uint64_t load_bits(const std::byte* p, std::size_t size) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, size);  // little-endian
  return v;
}

bool is_nan_bits(DType t, std::uint64_t b) {
  switch (t) {
    case DType::float16:
      return (b & 0x7FFFu) > 0x7C00u;
    case DType::bfloat16:
      return (b & 0x7FFFu) > 0x7F80u;
    case DType::float32:
      return (b & 0x7FFFFFFFu) > 0x7F800000u;
    case DType::float64:
      return (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    default:
      return false;
  }
}

// Equal bits, or both NaN (payloads differ by hardware: docs/design.md, "Principles", 4).
bool same(DType t, std::uint64_t a, std::uint64_t b) {
  return a == b || (is_nan_bits(t, a) && is_nan_bits(t, b));
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// ---- the NumPy reference, run once per process ----

struct Reference {
  xp_test::PythonReference ref;
  nlohmann::json cases;
  std::vector<std::uint64_t> data;  // 8-byte aligned storage of data.bin
  const std::byte* at(std::int64_t offset) const { return reinterpret_cast<const std::byte*>(data.data()) + offset; }
};

const Reference& reference() {
  static const Reference r = [] {
    Reference r;
    xp_test::TempDir dir;
    r.ref = xp_test::run_python_reference("exact_reference.py", {dir.path()});
    if (r.ref.missing || r.ref.error) return r;
    std::ifstream bin(dir / "data.bin", std::ios::binary);
    const auto bytes = static_cast<std::size_t>(std::filesystem::file_size(dir / "data.bin"));
    r.data.resize((bytes + 7) / 8);
    bin.read(reinterpret_cast<char*>(r.data.data()), static_cast<std::streamsize>(bytes));
    std::ifstream js(dir / "cases.json");
    r.cases = nlohmann::json::parse(js, nullptr, /*allow_exceptions=*/false);
    if (!bin || r.cases.is_discarded() || !r.cases.contains("cases")) r.ref.error = "unreadable output:\n" + r.ref.out;
    return r;
  }();
  return r;
}

TEST(CpuExact, MatchesNumPy) {
  const Reference& r = reference();
  XP_REQUIRE_REFERENCE(r.ref);
  std::int64_t elements = 0, own_elements = 0;
  for (const auto& c : r.cases["cases"]) {
    const std::string op_s = c["op"], operand_s = c["operand"], result_s = c["result"];
    const Op op = op_named(op_s);
    const DType operand = dtype_named(operand_s), result = dtype_named(result_s);
    const std::string what = op_s + "(" + operand_s + ") -> " + result_s;
    const TileFn f = exact_tile_fn(op, operand, result);
    ASSERT_NE(f, nullptr) << what;
    const std::int64_t n = c["n"];
    std::vector<const void*> in;
    std::vector<DType> in_types;
    for (const auto& i : c["inputs"]) {
      in_types.push_back(dtype_named(i[0]));
      in.push_back(r.at(i[1].get<std::int64_t>()));
    }
    const std::size_t size = xp::itemsize(result);
    std::vector<std::uint64_t> out_store((static_cast<std::size_t>(n) * size + 7) / 8);
    auto* out = reinterpret_cast<std::byte*>(out_store.data());
    f(in.data(), out, n);
    const std::byte* expected = r.at(c["expected"].get<std::int64_t>());
    const std::int64_t own_off = c["own"];
    const auto* own = own_off >= 0 ? reinterpret_cast<const std::uint8_t*>(r.at(own_off)) : nullptr;
    int reported = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      const std::uint64_t got = load_bits(out + k * size, size);
      const std::uint64_t want = load_bits(expected + k * size, size);
      const bool ok = op == Op::where ? got == want : same(result, got, want);  // selection keeps every bit
      if (own != nullptr && own[k] != 0) ++own_elements;
      if (!ok && reported++ < 5) {
        std::string args;
        for (std::size_t i = 0; i < in.size(); ++i) {
          const std::size_t isz = xp::itemsize(in_types[i]);
          args += (i ? ", " : "") + hex(load_bits(static_cast<const std::byte*>(in[i]) + k * isz, isz));
        }
        ADD_FAILURE() << what << " element " << k << " (" << args << "): xp " << hex(got) << ", "
                      << (own != nullptr && own[k] != 0 ? "xp's documented rule " : "NumPy ") << hex(want);
      }
    }
    elements += n;
  }
  std::cout << "[          ] " << r.cases["cases"].size() << " cases, " << elements << " elements against NumPy "
            << r.cases["numpy"].get<std::string>() << " (" << own_elements << " of them xp's documented differences)\n";
}

// The ops exact_tile_fn answers for (tile_ops.hpp).
bool is_exact_op(Op op) {
  switch (op) {
    case Op::load:
    case Op::constant:
    case Op::exp:
    case Op::expm1:
    case Op::log:
    case Op::log1p:
    case Op::log2:
    case Op::log10:
    case Op::sin:
    case Op::cos:
    case Op::tan:
    case Op::asin:
    case Op::acos:
    case Op::atan:
    case Op::sinh:
    case Op::cosh:
    case Op::tanh:
    case Op::acosh:
    case Op::asinh:
    case Op::atanh:
    case Op::atan2:
    case Op::hypot:
      return false;
    default:
      return true;
  }
}

TEST(CpuExact, DefinedCombinationsAreTheReferenceCases) {
  const Reference& r = reference();
  XP_REQUIRE_REFERENCE(r.ref);
  std::set<std::tuple<int, int, int>> defined;
  for (const auto& c : r.cases["cases"]) {
    defined.emplace(static_cast<int>(op_named(c["op"])), static_cast<int>(dtype_named(c["operand"])),
                    static_cast<int>(dtype_named(c["result"])));
  }
  for (int o = 0; o < xp::detail::kOpCount; ++o) {
    const Op op = static_cast<Op>(o);
    for (DType a : kAll) {
      for (DType b : kAll) {
        const bool want = is_exact_op(op) && defined.count({o, static_cast<int>(a), static_cast<int>(b)}) > 0;
        EXPECT_EQ(exact_tile_fn(op, a, b) != nullptr, want)
            << xp::detail::op_name(op) << "(" << xp::name(a) << ") -> " << xp::name(b);
      }
    }
  }
  EXPECT_EQ(exact_tile_fn(Op::add, static_cast<DType>(200), static_cast<DType>(200)), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::cast, DType::float32, static_cast<DType>(13)), nullptr);
}

// ---- every element's bits independent of n, tile position and in-place use ----

// Input values for a dtype: random bits, specials and small numbers, made with the library's own
// casts from float64 (any input will do here: the test compares the kernels with themselves).
void fill(DType t, std::byte* p, int n, std::mt19937_64& rng) {
  static const double specials[] = {0.0,    -0.0, 1.0,  -1.0,     0.5,       -0.5, 2.5,  -2.5,  1e300, -1e300,
                                    1e-310, 3.0,  -7.0, INFINITY, -INFINITY, NAN,  -NAN, 127.0, 128.0, 65520.0};
  const std::size_t size = xp::itemsize(t);
  const TileFn from_f64 = exact_tile_fn(Op::cast, DType::float64, t);
  for (int k = 0; k < n; ++k) {
    const std::uint64_t r = rng();
    std::uint64_t bits = rng();
    if (t == DType::bool_) {
      const std::uint8_t options[] = {0, 1, 1, 0, 2, 255};
      bits = options[r % 6];
    } else if (r % 3 == 1) {
      double v = specials[(r >> 8) % std::size(specials)];
      if ((r >> 16) % 2 == 0) v = static_cast<double>(static_cast<int>((r >> 20) % 41) - 20);
      const void* in[] = {&v};
      from_f64(in, &bits, 1);
    }
    std::memcpy(p + k * size, &bits, size);
  }
}

TEST(CpuExact, ElementsIndependentOfTilePosition) {
  constexpr int kN = 48, kMaxN = 40, kOffsets = 4;
  std::mt19937_64 rng(20260413);
  int combos = 0;
  for (int o = 0; o < xp::detail::kOpCount; ++o) {
    const Op op = static_cast<Op>(o);
    const int arity = xp::detail::op_arity(op);
    for (DType a : kAll) {
      for (DType res : kAll) {
        const TileFn f = exact_tile_fn(op, a, res);
        if (f == nullptr) continue;
        ++combos;
        const std::string what = std::string(xp::detail::op_name(op)) + "(" + std::string(xp::name(a)) + ") -> " +
                                 std::string(xp::name(res));
        DType types[3] = {a, a, a};
        if (op == Op::where) types[0] = DType::bool_;
        const std::size_t rsize = xp::itemsize(res);
        // Inputs with room for the offsets; aligned storage.
        std::vector<std::uint64_t> store[3];
        std::byte* inputs[3] = {};
        for (int i = 0; i < arity; ++i) {
          store[i].resize(kN + kOffsets + 1);
          inputs[i] = reinterpret_cast<std::byte*>(store[i].data());
          fill(types[i], inputs[i], kN + kOffsets, rng);
        }
        // Each element alone.
        std::vector<std::uint64_t> alone(kN + kOffsets);
        for (int k = 0; k < kN + kOffsets; ++k) {
          std::uint64_t one[3] = {}, out = 0;
          const void* in[3] = {};
          for (int i = 0; i < arity; ++i) {
            std::memcpy(&one[i], inputs[i] + k * xp::itemsize(types[i]), xp::itemsize(types[i]));
            in[i] = &one[i];
          }
          f(in, &out, 1);
          alone[k] = out;
        }
        std::vector<std::uint64_t> out_store(kN + 1);
        auto* out = reinterpret_cast<std::byte*>(out_store.data());
        bool failed = false;
        for (int off = 0; off < kOffsets && !failed; ++off) {
          for (int n = 1; n <= kMaxN && !failed; ++n) {
            for (int in_place = 0; in_place < 2 && !failed; ++in_place) {
              if (in_place && types[0] != res) continue;
              const void* in[3] = {};
              for (int i = 0; i < arity; ++i) in[i] = inputs[i] + off * xp::itemsize(types[i]);
              std::vector<std::uint64_t> copy;
              void* dst = out;
              if (in_place) {  // out is operand 0 itself (a copy of it)
                copy.assign(store[0].begin(), store[0].end());
                dst = reinterpret_cast<std::byte*>(copy.data()) + off * rsize;
                in[0] = dst;
              }
              f(in, dst, n);
              for (int k = 0; k < n; ++k) {
                const std::uint64_t got = load_bits(static_cast<std::byte*>(dst) + k * rsize, rsize);
                if (!same(res, got, alone[off + k])) {
                  ADD_FAILURE() << what << ": element " << k << " of n=" << n << " at offset " << off
                                << (in_place ? " in place" : "") << " is " << hex(got) << ", alone "
                                << hex(alone[off + k]);
                  failed = true;
                  break;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(combos, 500);
}

// ---- the semantics table, by hand (docs/semantics.md) ----

template <class R, class... A>
R run1(Op op, DType operand, DType result, A... args) {
  const TileFn f = exact_tile_fn(op, operand, result);
  EXPECT_NE(f, nullptr) << xp::detail::op_name(op) << "(" << xp::name(operand) << ") -> " << xp::name(result);
  R r{};
  if (f == nullptr) return r;
  const std::tuple<A...> t(args...);
  const void* in[sizeof...(A) + 1] = {};
  std::apply(
      [&](const auto&... v) {
        int i = 0;
        ((in[i++] = &v), ...);
      },
      t);
  f(in, &r, 1);
  return r;
}

template <class T>
T bin(Op op, DType d, T a, T b) {
  return run1<T>(op, d, d, a, b);
}

template <class T>
std::uint64_t fbits(T v) {
  if constexpr (sizeof(T) == 4)
    return std::bit_cast<std::uint32_t>(v);
  else
    return std::bit_cast<std::uint64_t>(v);
}

TEST(CpuExactSemantics, IntegerDivisionAndRemainder) {
  using I8 = std::int8_t;
  const DType i8 = DType::int8;
  EXPECT_EQ(bin<I8>(Op::floor_divide, i8, 7, 0), 0);
  EXPECT_EQ(bin<I8>(Op::remainder, i8, 7, 0), 0);
  EXPECT_EQ(bin<I8>(Op::floor_divide, i8, -128, -1), -128);
  EXPECT_EQ(bin<I8>(Op::remainder, i8, -128, -1), 0);
  EXPECT_EQ(bin<I8>(Op::floor_divide, i8, -7, 2), -4);
  EXPECT_EQ(bin<I8>(Op::remainder, i8, -7, 2), 1);
  EXPECT_EQ(bin<I8>(Op::floor_divide, i8, 7, -2), -4);
  EXPECT_EQ(bin<I8>(Op::remainder, i8, 7, -2), -1);
  EXPECT_EQ(bin<I8>(Op::floor_divide, i8, -8, 2), -4);
  EXPECT_EQ(bin<I8>(Op::remainder, i8, -8, 2), 0);
  const auto min64 = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(bin<std::int64_t>(Op::floor_divide, DType::int64, min64, -1), min64);
  EXPECT_EQ(bin<std::int64_t>(Op::remainder, DType::int64, min64, -1), 0);
  EXPECT_EQ(bin<std::int64_t>(Op::floor_divide, DType::int64, min64, 0), 0);
  EXPECT_EQ(bin<std::uint64_t>(Op::floor_divide, DType::uint64, 5, 0), 0u);
  EXPECT_EQ(bin<std::uint64_t>(Op::remainder, DType::uint64, 5, 0), 0u);
  EXPECT_EQ(bin<std::uint32_t>(Op::floor_divide, DType::uint32, 0xFFFFFFFFu, 2), 0x7FFFFFFFu);
}

TEST(CpuExactSemantics, IntegerOverflowWraps) {
  using I8 = std::int8_t;
  EXPECT_EQ(bin<I8>(Op::add, DType::int8, 127, 1), -128);
  EXPECT_EQ(bin<std::uint8_t>(Op::subtract, DType::uint8, 0, 1), 255);
  EXPECT_EQ(bin<std::int16_t>(Op::multiply, DType::int16, 300, 300), 24464);    // 90000 - 65536
  EXPECT_EQ(bin<std::uint16_t>(Op::multiply, DType::uint16, 65535, 65535), 1);  // not int overflow
  EXPECT_EQ(run1<I8>(Op::negative, DType::int8, DType::int8, I8(-128)), -128);
  EXPECT_EQ(run1<I8>(Op::abs, DType::int8, DType::int8, I8(-128)), -128);
  const auto min32 = std::numeric_limits<std::int32_t>::min();
  EXPECT_EQ(run1<std::int32_t>(Op::abs, DType::int32, DType::int32, min32), min32);
  EXPECT_EQ(run1<std::int32_t>(Op::square, DType::int32, DType::int32, 65536), 0);
  EXPECT_EQ(run1<std::uint8_t>(Op::negative, DType::uint8, DType::uint8, std::uint8_t(1)), 255);
}

TEST(CpuExactSemantics, Shifts) {
  using I8 = std::int8_t;
  const DType i8 = DType::int8;
  EXPECT_EQ(bin<I8>(Op::left_shift, i8, 1, 7), -128);
  EXPECT_EQ(bin<I8>(Op::left_shift, i8, 1, 8), 0);
  EXPECT_EQ(bin<I8>(Op::left_shift, i8, 1, -1), 0);
  EXPECT_EQ(bin<I8>(Op::left_shift, i8, -1, 100), 0);
  EXPECT_EQ(bin<I8>(Op::right_shift, i8, -128, 7), -1);
  EXPECT_EQ(bin<I8>(Op::right_shift, i8, -128, 8), -1);
  EXPECT_EQ(bin<I8>(Op::right_shift, i8, -5, -1), -1);
  EXPECT_EQ(bin<I8>(Op::right_shift, i8, 64, 8), 0);
  EXPECT_EQ(bin<I8>(Op::right_shift, i8, -7, 1), -4);  // arithmetic: rounds toward -inf
  EXPECT_EQ(bin<std::uint64_t>(Op::left_shift, DType::uint64, 1, 64), 0u);
  EXPECT_EQ(bin<std::uint64_t>(Op::left_shift, DType::uint64, 1, 63), 1ull << 63);
  EXPECT_EQ(bin<std::uint64_t>(Op::right_shift, DType::uint64, ~0ull, 64), 0u);
  EXPECT_EQ(bin<std::int64_t>(Op::right_shift, DType::int64, -1, 64), -1);
  EXPECT_EQ(bin<std::uint8_t>(Op::left_shift, DType::uint8, 0xFF, 4), 0xF0);
}

TEST(CpuExactSemantics, IntegerPower) {
  const DType i32 = DType::int32;
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, 0, 0), 1);
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, 3, 4), 81);
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, 2, 31), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, 2, 32), 0);
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, 3, 40), 0x291FE821);  // 3^40 mod 2^32
  // Negative exponents (NumPy raises).
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, 2, -1), 0);
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, 0, -1), 0);
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, 1, -5), 1);
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, -1, -3), -1);
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, -1, -4), 1);
  EXPECT_EQ(bin<std::int32_t>(Op::pow, i32, -2, -2), 0);
  EXPECT_EQ(bin<std::int8_t>(Op::pow, DType::int8, -1, -128), 1);
  EXPECT_EQ(bin<std::int64_t>(Op::pow, DType::int64, -2, 63), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(bin<std::uint8_t>(Op::pow, DType::uint8, 3, 255), 0xABu);  // 3^255 mod 256
}

template <class I>
void expect_float_to_int(DType to) {
  const I lo = std::numeric_limits<I>::min(), hi = std::numeric_limits<I>::max();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType from : {DType::float32, DType::float64}) {
    auto cast = [&](double v) {
      if (from == DType::float32) return run1<I>(Op::cast, from, to, static_cast<float>(v));
      return run1<I>(Op::cast, from, to, v);
    };
    const std::string what = std::string(xp::name(from)) + " -> " + std::string(xp::name(to));
    EXPECT_EQ(cast(nan), 0) << what;
    EXPECT_EQ(cast(-nan), 0) << what;
    EXPECT_EQ(cast(inf), hi) << what;
    EXPECT_EQ(cast(-inf), lo) << what;
    EXPECT_EQ(cast(1e30), hi) << what;
    EXPECT_EQ(cast(-1e30), lo) << what;
    EXPECT_EQ(cast(-0.9), 0) << what;
    EXPECT_EQ(cast(0.9), 0) << what;
    EXPECT_EQ(cast(-1.0), std::is_signed_v<I> ? I(-1) : I(0)) << what;
    EXPECT_EQ(cast(100.7), 100) << what;
    if (sizeof(I) == 1) {
      EXPECT_EQ(cast(300.0), hi) << what;
      EXPECT_EQ(cast(127.9), 127) << what;
      EXPECT_EQ(cast(-129.5), lo) << what;
    }
    // 2^(bits-1) for signed, 2^bits for unsigned: the first value past the range, exact in float.
    const double past = std::ldexp(1.0, std::numeric_limits<I>::digits);
    EXPECT_EQ(cast(past), hi) << what;
    if (std::is_signed_v<I>) {
      EXPECT_EQ(cast(-past), lo) << what;
    }
  }
  // From the 16-bit floats: widened exactly, then the same rule.
  EXPECT_EQ(run1<I>(Op::cast, DType::float16, to, std::uint16_t(0x7E00)), 0);    // NaN
  EXPECT_EQ(run1<I>(Op::cast, DType::float16, to, std::uint16_t(0x7C00)), hi);   // inf
  EXPECT_EQ(run1<I>(Op::cast, DType::bfloat16, to, std::uint16_t(0xFF80)), lo);  // -inf
  EXPECT_EQ(run1<I>(Op::cast, DType::bfloat16, to, std::uint16_t(0x7FC0)), 0);   // NaN
}

TEST(CpuExactSemantics, FloatToIntegerSaturates) {
  expect_float_to_int<std::int8_t>(DType::int8);
  expect_float_to_int<std::int16_t>(DType::int16);
  expect_float_to_int<std::int32_t>(DType::int32);
  expect_float_to_int<std::int64_t>(DType::int64);
  expect_float_to_int<std::uint8_t>(DType::uint8);
  expect_float_to_int<std::uint16_t>(DType::uint16);
  expect_float_to_int<std::uint32_t>(DType::uint32);
  expect_float_to_int<std::uint64_t>(DType::uint64);
  // float -> bool: nonzero; NaN is true, -0 false.
  EXPECT_EQ(run1<std::uint8_t>(Op::cast, DType::float64, DType::bool_, std::nan("")), 1);
  EXPECT_EQ(run1<std::uint8_t>(Op::cast, DType::float32, DType::bool_, -0.0f), 0);
  EXPECT_EQ(run1<std::uint8_t>(Op::cast, DType::float16, DType::bool_, std::uint16_t(0x8000)), 0);
  EXPECT_EQ(run1<std::uint8_t>(Op::cast, DType::bfloat16, DType::bool_, std::uint16_t(0x0001)), 1);
}

TEST(CpuExactSemantics, CastsToSixteenBitsRoundOnce) {
  // float64 straight to 16 bits: through float32 would give 0x3C00 and 0x3F80.
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::float64, DType::float16, 1 + 0x1p-11 + 0x1p-40), 0x3C01);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::float64, DType::bfloat16, 1 + 0x1p-8 + 0x1p-40), 0x3F81);
  // 64-bit integers: 2^60 + 2^52 + 1 is just above a bfloat16 midpoint; through float64 it lands
  // on the midpoint and would round down to even.
  const std::int64_t x = (std::int64_t(1) << 60) + (std::int64_t(1) << 52) + 1;
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::int64, DType::bfloat16, x), 0x5D81);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::int64, DType::bfloat16, -x), 0xDD81);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::uint64, DType::bfloat16, std::uint64_t(x)), 0x5D81);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::uint64, DType::bfloat16, ~0ull), 0x5F80);  // 2^64
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::int32, DType::bfloat16, (1 << 24) + (1 << 16) + 1), 0x4B81);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::int64, DType::float16, std::int64_t(65519)), 0x7BFF);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::int64, DType::float16, std::int64_t(65520)), 0x7C00);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::int64, DType::float16, std::int64_t(-65520)), 0xFC00);
  // 2^53 + 1 to float64 and 2^24 + 1 to float32: to nearest even.
  EXPECT_EQ(run1<double>(Op::cast, DType::int64, DType::float64, (std::int64_t(1) << 53) + 1), 0x1p53);
  EXPECT_EQ(run1<double>(Op::cast, DType::int64, DType::float64, (std::int64_t(1) << 53) + 3), 0x1p53 + 4);
  EXPECT_EQ(run1<float>(Op::cast, DType::int32, DType::float32, (1 << 24) + 1), 0x1p24f);
  // NaN stays NaN (quiet), infinities and signed zeros keep their sign.
  const std::uint16_t h = run1<std::uint16_t>(Op::cast, DType::float64, DType::float16, -std::nan(""));
  EXPECT_TRUE(is_nan_bits(DType::float16, h) && (h & 0x8000) != 0 && (h & 0x0200) != 0);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::float64, DType::bfloat16, -0.0), 0x8000);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::float64, DType::float16, 1e300), 0x7C00);
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::float64, DType::float16, 0x1p-25), 0x0000);  // tie to even
  EXPECT_EQ(run1<std::uint16_t>(Op::cast, DType::float64, DType::float16, 0x1p-25 + 0x1p-60), 0x0001);
}

TEST(CpuExactSemantics, RoundingHalfToEven) {
  const double cases[][5] = {
      // x, round, floor, ceil, trunc
      {0.5, 0.0, 0.0, 1.0, 0.0},
      {1.5, 2.0, 1.0, 2.0, 1.0},
      {2.5, 2.0, 2.0, 3.0, 2.0},
      {-0.5, -0.0, -1.0, -0.0, -0.0},
      {-2.5, -2.0, -3.0, -2.0, -2.0},
      {-0.0, -0.0, -0.0, -0.0, -0.0},
      {0.49999999999999994, 0.0, 0.0, 1.0, 0.0},
      {-0.7, -1.0, -1.0, -0.0, -0.0},
      {4503599627370495.5, 4503599627370496.0, 4503599627370495.0, 4503599627370496.0, 4503599627370495.0},
      {4503599627370497.0, 4503599627370497.0, 4503599627370497.0, 4503599627370497.0, 4503599627370497.0},
      {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY},
  };
  const Op ops[] = {Op::round, Op::floor, Op::ceil, Op::trunc};
  for (const auto& c : cases) {
    for (int k = 0; k < 4; ++k) {
      const double got = run1<double>(ops[k], DType::float64, DType::float64, c[0]);
      EXPECT_EQ(fbits(got), fbits(c[k + 1])) << xp::detail::op_name(ops[k]) << "(" << c[0] << ") = " << got;
      // float32 against the C library's exact functions (in the default rounding mode).
      const float x32 = static_cast<float>(c[0]);
      const float want32[] = {std::nearbyint(x32), std::floor(x32), std::ceil(x32), std::trunc(x32)};
      const float got32 = run1<float>(ops[k], DType::float32, DType::float32, x32);
      EXPECT_EQ(fbits(got32), fbits(want32[k])) << xp::detail::op_name(ops[k]) << "(float32 " << x32 << ")";
    }
  }
  EXPECT_EQ(run1<float>(Op::round, DType::float32, DType::float32, 8388607.5f), 8388608.0f);
  EXPECT_TRUE(std::isnan(run1<double>(Op::floor, DType::float64, DType::float64, std::nan(""))));
  // Integers and bool: the identity.
  EXPECT_EQ(run1<std::int64_t>(Op::round, DType::int64, DType::int64, std::int64_t(-7)), -7);
  EXPECT_EQ(run1<std::uint8_t>(Op::floor, DType::bool_, DType::bool_, std::uint8_t(1)), 1);
  EXPECT_EQ(exact_tile_fn(Op::round, DType::bool_, DType::bool_), nullptr);  // NumPy: float16
}

TEST(CpuExactSemantics, NaN) {
  const double nan = std::nan(""), one = 1.0;
  for (Op op : {Op::equal, Op::less, Op::less_equal, Op::greater, Op::greater_equal}) {
    EXPECT_EQ(run1<std::uint8_t>(op, DType::float64, DType::bool_, nan, nan), 0) << xp::detail::op_name(op);
    EXPECT_EQ(run1<std::uint8_t>(op, DType::float64, DType::bool_, nan, one), 0) << xp::detail::op_name(op);
  }
  EXPECT_EQ(run1<std::uint8_t>(Op::not_equal, DType::float32, DType::bool_, NAN, NAN), 1);
  for (Op op : {Op::minimum, Op::maximum}) {
    EXPECT_TRUE(std::isnan(bin<double>(op, DType::float64, nan, one)));
    EXPECT_TRUE(std::isnan(bin<double>(op, DType::float64, one, nan)));
    EXPECT_TRUE(std::isnan(bin<float>(op, DType::float32, -INFINITY, NAN)));
  }
  // Of +0 and -0, the second operand (NumPy's answer).
  EXPECT_EQ(fbits(bin<double>(Op::minimum, DType::float64, 0.0, -0.0)), fbits(-0.0));
  EXPECT_EQ(fbits(bin<double>(Op::minimum, DType::float64, -0.0, 0.0)), fbits(0.0));
  EXPECT_EQ(fbits(bin<double>(Op::maximum, DType::float64, 0.0, -0.0)), fbits(-0.0));
  EXPECT_EQ(fbits(bin<double>(Op::maximum, DType::float64, -0.0, 0.0)), fbits(0.0));
  auto clip = [](double x, double lo, double hi) {
    return run1<double>(Op::clip, DType::float64, DType::float64, x, lo, hi);
  };
  EXPECT_TRUE(std::isnan(clip(nan, 0, 1)));
  EXPECT_TRUE(std::isnan(clip(0.5, nan, 1)));
  EXPECT_TRUE(std::isnan(clip(0.5, 0, nan)));
  EXPECT_EQ(clip(5, 0, 1), 1);
  EXPECT_EQ(clip(5, 3, 1), 1);  // lo > hi: hi, as minimum(maximum(x, lo), hi)
  EXPECT_EQ(clip(-5, 0, 1), 0);
  // sign: NaN stays NaN, sign(-0.0) = +0.0 (NumPy 2).
  EXPECT_TRUE(std::isnan(run1<double>(Op::sign, DType::float64, DType::float64, nan)));
  EXPECT_EQ(fbits(run1<double>(Op::sign, DType::float64, DType::float64, -0.0)), fbits(0.0));
  EXPECT_EQ(run1<float>(Op::sign, DType::float32, DType::float32, -INFINITY), -1.0f);
  EXPECT_EQ(run1<std::int8_t>(Op::sign, DType::int8, DType::int8, std::int8_t(-128)), -1);
  // isnan / isinf / isfinite of integers.
  EXPECT_EQ(run1<std::uint8_t>(Op::isfinite, DType::int64, DType::bool_, std::int64_t(5)), 1);
  EXPECT_EQ(run1<std::uint8_t>(Op::isnan, DType::uint8, DType::bool_, std::uint8_t(5)), 0);
}

TEST(CpuExactSemantics, Bool) {
  using U8 = std::uint8_t;
  const DType b = DType::bool_;
  EXPECT_EQ(bin<U8>(Op::add, b, 1, 1), 1);  // logical or
  EXPECT_EQ(bin<U8>(Op::multiply, b, 1, 0), 0);
  EXPECT_EQ(bin<U8>(Op::minimum, b, 1, 0), 0);
  EXPECT_EQ(bin<U8>(Op::maximum, b, 1, 0), 1);
  EXPECT_EQ(bin<U8>(Op::bitwise_xor, b, 1, 1), 0);
  EXPECT_EQ(run1<U8>(Op::bitwise_invert, b, b, U8(1)), 0);
  EXPECT_EQ(run1<U8>(Op::abs, b, b, U8(1)), 1);
  // A byte other than 0 or 1 is true; results are 0 or 1.
  EXPECT_EQ(bin<U8>(Op::bitwise_and, b, 2, 1), 1);
  EXPECT_EQ(bin<U8>(Op::add, b, 2, 0), 1);
  EXPECT_EQ(bin<U8>(Op::equal, b, 2, 1), 1);
  EXPECT_EQ(run1<U8>(Op::logical_not, b, b, U8(2)), 0);
  EXPECT_EQ(run1<std::int32_t>(Op::cast, b, DType::int32, U8(2)), 1);
  EXPECT_EQ(run1<std::uint16_t>(Op::where, DType::float16, DType::float16, U8(2), std::uint16_t(0x3C00),
                                std::uint16_t(0x7E01)),
            0x3C00);
  EXPECT_EQ(run1<std::uint16_t>(Op::where, DType::bfloat16, DType::bfloat16, U8(0), std::uint16_t(0x3C00),
                                std::uint16_t(0x7F81)),
            0x7F81);  // pure selection: a signalling NaN is kept as it is
  // Not defined on bool (NumPy refuses, or answers in another dtype).
  for (Op op : {Op::subtract, Op::negative, Op::sign, Op::square, Op::floor_divide, Op::remainder, Op::pow,
                Op::left_shift, Op::divide, Op::sqrt}) {
    EXPECT_EQ(exact_tile_fn(op, b, b), nullptr) << xp::detail::op_name(op);
  }
}

TEST(CpuExactSemantics, UndefinedCombinations) {
  EXPECT_EQ(exact_tile_fn(Op::add, DType::float16, DType::float16), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::less, DType::bfloat16, DType::bool_), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::add, DType::int32, DType::int64), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::less, DType::int32, DType::int32), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::sqrt, DType::int32, DType::int32), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::divide, DType::int32, DType::int32), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::pow, DType::float32, DType::float32), nullptr);  // ew_math's
  EXPECT_EQ(exact_tile_fn(Op::exp, DType::float64, DType::float64), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::logical_and, DType::int8, DType::bool_), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::left_shift, DType::float32, DType::float32), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::fma, DType::int32, DType::int32), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::where, DType::float32, DType::int32), nullptr);
  EXPECT_EQ(exact_tile_fn(Op::load, DType::float32, DType::float32), nullptr);
  EXPECT_NE(exact_tile_fn(Op::fma, DType::float32, DType::float32), nullptr);
  // fma rounds once: (1 + 2^-30)^2 - 1 keeps the 2^-60 that a*b + c would lose.
  const double e = 0x1p-30;
  EXPECT_EQ(run1<double>(Op::fma, DType::float64, DType::float64, 1 + e, 1 + e, -1.0), 2 * e + e * e);
}

}  // namespace
