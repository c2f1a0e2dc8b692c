// DTypes: names, type promotion (NumPy 2, NEP 50 weak scalars), integer-scalar range checks and
// the 16-bit float conversions, against the live answers of NumPy 2 and ml_dtypes
// (tests/ref/dtype_reference.py run with the repository's .venv python). Without that python, or
// without numpy / ml_dtypes in it, those tests are skipped with the reason, a failure under
// XP_TEST_REQUIRE_NUMPY=1. The hand-written tests below them need nothing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/dtype.hpp"

using xp::DType;
using xp::DTypeKind;
using xp::ScalarKind;

namespace {

constexpr std::array<DType, 15> kAll = {DType::bool_,   DType::int8,      DType::int16,     DType::int32,
                                        DType::int64,   DType::uint8,     DType::uint16,    DType::uint32,
                                        DType::uint64,  DType::float16,   DType::bfloat16,  DType::float32,
                                        DType::float64, DType::complex64, DType::complex128};

using Reference = xp_test::PythonReference;

Reference run_reference(const std::vector<std::string>& args) {
  return xp_test::run_python_reference("dtype_reference.py", args);
}

// The script's `table` answer, run once per process.
struct Table {
  Reference ref;
  nlohmann::json json;
};

const Table& table() {
  static const Table t = [] {
    Table t;
    t.ref = run_reference({"table"});
    if (!t.ref.missing && !t.ref.error) {
      t.json = nlohmann::json::parse(t.ref.out, nullptr, /*allow_exceptions=*/false);
      if (t.json.is_discarded()) t.ref.error = "dtype_reference.py table printed no JSON:\n" + t.ref.out;
    }
    return t;
  }();
  return t;
}

template <class T>
std::vector<T> read_binary(const std::filesystem::path& p, std::string& error) {
  std::ifstream f(p, std::ios::binary);
  std::vector<T> v;
  if (!f) {
    error += "cannot open " + p.string() + "\n";
    return v;
  }
  f.seekg(0, std::ios::end);
  const auto bytes = static_cast<std::size_t>(f.tellg());
  f.seekg(0);
  v.resize(bytes / sizeof(T));
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  if (!f || bytes % sizeof(T) != 0) error += "short or odd-sized " + p.string() + "\n";
  return v;  // little-endian on x86-64, as the script writes them
}

// The script's `floats` answer: float32 inputs with NumPy's float16 and ml_dtypes' bfloat16 of
// each, and both 16-bit formats widened to float32 for all 65,536 patterns. Run once per process,
// through a temporary folder removed afterwards.
struct Floats {
  Reference ref;
  std::vector<std::uint32_t> inputs, from_f16, from_bf16;
  std::vector<std::uint16_t> f16, bf16;
};

const Floats& floats() {
  static const Floats fl = [] {
    Floats fl;
    char tmpl[] = "/tmp/xp-test-dtype-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      fl.ref.error = "mkdtemp failed";
      return fl;
    }
    const std::filesystem::path dir = tmpl;
    fl.ref = run_reference({"floats", dir.string()});
    if (!fl.ref.missing && !fl.ref.error) {
      std::string err;
      fl.inputs = read_binary<std::uint32_t>(dir / "f32_inputs.u32", err);
      fl.f16 = read_binary<std::uint16_t>(dir / "f16_from_f32.u16", err);
      fl.bf16 = read_binary<std::uint16_t>(dir / "bf16_from_f32.u16", err);
      fl.from_f16 = read_binary<std::uint32_t>(dir / "f32_from_f16.u32", err);
      fl.from_bf16 = read_binary<std::uint32_t>(dir / "f32_from_bf16.u32", err);
      if (fl.f16.size() != fl.inputs.size() || fl.bf16.size() != fl.inputs.size() || fl.from_f16.size() != 65536 ||
          fl.from_bf16.size() != 65536 || fl.inputs.size() < 100000)
        err += "unexpected sizes from dtype_reference.py floats\n";
      if (!err.empty()) fl.ref.error = err;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return fl;
  }();
  return fl;
}

DType dtype_named(const std::string& s) {
  const auto t = xp::parse_dtype(s);
  EXPECT_TRUE(t.has_value()) << "NumPy named a dtype xp does not parse: " << s;
  return t.value_or(DType::float64);
}

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
bool half_is_nan(std::uint16_t h) {
  return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0;
}
bool bf16_is_nan(std::uint16_t h) {
  return (h & 0x7F80u) == 0x7F80u && (h & 0x007Fu) != 0;
}
bool f32_is_nan(std::uint32_t u) {
  return (u & 0x7FFFFFFFu) > 0x7F800000u;
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Against NumPy 2 and ml_dtypes

TEST(DTypeNumPy, NamesSizesAndKinds) {
  const auto& t = table();
  XP_REQUIRE_REFERENCE(t.ref);
  const auto& j = t.json;
  ASSERT_EQ(j["names"].size(), kAll.size());
  for (std::size_t i = 0; i < kAll.size(); ++i) {
    const DType d = kAll[i];
    SCOPED_TRACE(std::string(xp::name(d)));
    EXPECT_EQ(xp::name(d), j["numpy_names"][i].get<std::string>());  // NumPy's own spelling
    EXPECT_EQ(xp::parse_dtype(j["numpy_names"][i].get<std::string>()), d);
    EXPECT_EQ(xp::itemsize(d), j["itemsize"][i].get<std::size_t>());
    const std::string k = j["kind"][i].get<std::string>();
    const DTypeKind expected = k == "b"   ? DTypeKind::boolean
                               : k == "i" ? DTypeKind::signed_integer
                               : k == "u" ? DTypeKind::unsigned_integer
                               : k == "c" ? DTypeKind::complex_floating
                                          : DTypeKind::floating;
    EXPECT_TRUE(k == "b" || k == "i" || k == "u" || k == "f" || k == "c") << k;
    EXPECT_EQ(xp::kind(d), expected);
  }
}

TEST(DTypeNumPy, PromotionTable) {
  const auto& t = table();
  XP_REQUIRE_REFERENCE(t.ref);
  const auto& promo = t.json["promotion"];
  ASSERT_EQ(promo.size(), kAll.size());
  int checked = 0;
  for (std::size_t a = 0; a < kAll.size(); ++a) {
    ASSERT_EQ(promo[a].size(), kAll.size());
    for (std::size_t b = 0; b < kAll.size(); ++b) {
      const std::string numpy = promo[a][b].get<std::string>();
      EXPECT_EQ(xp::name(xp::result_type(kAll[a], kAll[b])), numpy)
          << "result_type(" << xp::name(kAll[a]) << ", " << xp::name(kAll[b]) << ") (NumPy "
          << t.json["numpy"].get<std::string>() << ", ml_dtypes " << t.json["ml_dtypes"].get<std::string>() << ")";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 225);
}

TEST(DTypeNumPy, WeakScalars) {
  const auto& t = table();
  XP_REQUIRE_REFERENCE(t.ref);
  const auto& weak = t.json["weak"];
  for (const DType d : kAll) {
    const std::string n(xp::name(d));
    ASSERT_TRUE(weak.contains(n)) << n;
    EXPECT_EQ(xp::name(xp::result_type(d, ScalarKind::boolean)), weak[n]["bool"].get<std::string>()) << n << " + True";
    EXPECT_EQ(xp::name(xp::result_type(d, ScalarKind::integer)), weak[n]["int"].get<std::string>()) << n << " + 1";
    EXPECT_EQ(xp::name(xp::result_type(d, ScalarKind::floating)), weak[n]["float"].get<std::string>()) << n << " + 1.0";
    EXPECT_EQ(xp::name(xp::result_type(d, ScalarKind::complex)), weak[n]["complex"].get<std::string>()) << n << " + 1j";
  }
}

TEST(DTypeNumPy, IntegerScalarRange) {
  const auto& t = table();
  XP_REQUIRE_REFERENCE(t.ref);
  const auto& cases = t.json["overflow"];
  ASSERT_GT(cases.size(), 200u);
  for (const auto& c : cases) {
    const DType d = dtype_named(c["dtype"].get<std::string>());
    const std::string v = c["value"].get<std::string>();
    const bool numpy_fits = c["fits"].get<bool>();
    // A negative value is a long long, a non-negative one both (each overload must agree).
    if (v[0] == '-') {
      EXPECT_EQ(xp::value_fits(d, std::stoll(v)), numpy_fits) << xp::name(d) << " + " << v;
    } else {
      const unsigned long long u = std::stoull(v);
      EXPECT_EQ(xp::value_fits(d, u), numpy_fits) << xp::name(d) << " + " << v << " (unsigned)";
      if (u <= static_cast<unsigned long long>(std::numeric_limits<long long>::max())) {
        EXPECT_EQ(xp::value_fits(d, static_cast<long long>(u)), numpy_fits) << xp::name(d) << " + " << v << " (signed)";
      }
    }
  }
}

TEST(DTypeNumPy, Float16ToFloat32AllPatterns) {
  const auto& fl = floats();
  XP_REQUIRE_REFERENCE(fl.ref);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const std::uint32_t ours = bits_of(xp::half_bits_to_float(static_cast<std::uint16_t>(h)));
    const std::uint32_t numpy = fl.from_f16[h];
    if (f32_is_nan(numpy)) {
      ASSERT_TRUE(f32_is_nan(ours)) << "half " << hex(h) << " -> " << hex(ours);
      ASSERT_EQ(ours >> 31, numpy >> 31) << "NaN sign, half " << hex(h);
    } else {
      ASSERT_EQ(ours, numpy) << "half " << hex(h);
    }
  }
}

TEST(DTypeNumPy, Bfloat16ToFloat32AllPatterns) {
  const auto& fl = floats();
  XP_REQUIRE_REFERENCE(fl.ref);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const std::uint32_t ours = bits_of(xp::bfloat16_bits_to_float(static_cast<std::uint16_t>(h)));
    const std::uint32_t ref = fl.from_bf16[h];
    if (f32_is_nan(ref)) {
      ASSERT_TRUE(f32_is_nan(ours)) << "bfloat16 " << hex(h) << " -> " << hex(ours);
      ASSERT_EQ(ours >> 31, ref >> 31) << "NaN sign, bfloat16 " << hex(h);
    } else {
      ASSERT_EQ(ours, ref) << "bfloat16 " << hex(h);
    }
  }
}

TEST(DTypeNumPy, Float32ToFloat16) {
  const auto& fl = floats();
  XP_REQUIRE_REFERENCE(fl.ref);
  std::size_t mismatches = 0, nans = 0;
  for (std::size_t i = 0; i < fl.inputs.size(); ++i) {
    const std::uint32_t x = fl.inputs[i];
    const std::uint16_t ours = xp::float_to_half_bits(float_of(x));
    const std::uint16_t numpy = fl.f16[i];
    bool ok;
    if (f32_is_nan(x)) {
      ++nans;
      // NaN as a class: NumPy keeps a signalling payload where xp makes it quiet.
      ok = half_is_nan(numpy) && half_is_nan(ours) && (ours & 0x0200u) && (ours >> 15) == (numpy >> 15);
    } else {
      ok = ours == numpy;
    }
    if (!ok && ++mismatches <= 10)
      ADD_FAILURE() << "float32 " << hex(x) << " (" << float_of(x) << "): xp " << hex(ours) << ", NumPy " << hex(numpy);
  }
  EXPECT_EQ(mismatches, 0u) << "of " << fl.inputs.size() << " values";
  EXPECT_GT(nans, 10u);  // the NaN cases were there to compare
}

TEST(DTypeNumPy, Float32ToBfloat16) {
  const auto& fl = floats();
  XP_REQUIRE_REFERENCE(fl.ref);
  std::size_t mismatches = 0, nans = 0;
  for (std::size_t i = 0; i < fl.inputs.size(); ++i) {
    const std::uint32_t x = fl.inputs[i];
    const std::uint16_t ours = xp::float_to_bfloat16_bits(float_of(x));
    const std::uint16_t ref = fl.bf16[i];
    bool ok;
    if (f32_is_nan(x)) {
      ++nans;
      ok = bf16_is_nan(ref) && bf16_is_nan(ours) && (ours & 0x0040u) && (ours >> 15) == (ref >> 15);
    } else {
      ok = ours == ref;
    }
    if (!ok && ++mismatches <= 10)
      ADD_FAILURE() << "float32 " << hex(x) << " (" << float_of(x) << "): xp " << hex(ours) << ", ml_dtypes "
                    << hex(ref);
  }
  EXPECT_EQ(mismatches, 0u) << "of " << fl.inputs.size() << " values";
  EXPECT_GT(nans, 10u);
}

// ---------------------------------------------------------------------------------------------
// Hand-made tables and properties: these need no Python.

TEST(DType, NamesRoundTripAndRejectOthers) {
  for (const DType d : kAll) EXPECT_EQ(xp::parse_dtype(xp::name(d)), d) << xp::name(d);
  EXPECT_EQ(xp::name(DType::bool_), "bool");
  EXPECT_EQ(xp::name(DType::bfloat16), "bfloat16");
  for (const char* bad : {"", "bool_", "float", "int", "Float32", "float32 ", "f4", "complex", "complex32", "uint"})
    EXPECT_FALSE(xp::parse_dtype(bad).has_value()) << '"' << bad << '"';
  EXPECT_EQ(xp::itemsize(DType::bool_), 1u);
  EXPECT_EQ(xp::itemsize(DType::bfloat16), 2u);
  EXPECT_EQ(xp::itemsize(DType::uint64), 8u);
  EXPECT_EQ(xp::kind(DType::bfloat16), DTypeKind::floating);
  EXPECT_EQ(xp::kind(DType::uint8), DTypeKind::unsigned_integer);
  EXPECT_EQ(xp::itemsize(DType::complex64), 8u);
  EXPECT_EQ(xp::itemsize(DType::complex128), 16u);
  EXPECT_EQ(xp::kind(DType::complex64), DTypeKind::complex_floating);
  EXPECT_EQ(xp::real_dtype(DType::complex64), DType::float32);
  EXPECT_EQ(xp::real_dtype(DType::complex128), DType::float64);
  EXPECT_EQ(xp::real_dtype(DType::int8), DType::int8);
  EXPECT_EQ(xp::complex_dtype(DType::float16), DType::complex64);
  EXPECT_EQ(xp::complex_dtype(DType::int32), DType::complex128);
  EXPECT_TRUE(xp::isdtype(DType::complex64, "complex floating"));
  EXPECT_TRUE(xp::isdtype(DType::complex128, "numeric"));
  EXPECT_FALSE(xp::isdtype(DType::complex128, "real floating"));
  EXPECT_FALSE(xp::isdtype(DType::float32, "complex floating"));
  EXPECT_EQ(xp::finfo(DType::complex64).dtype, DType::float32);
  EXPECT_EQ(xp::finfo(DType::complex128).eps, 0x1p-52);
  EXPECT_TRUE(xp::can_cast(DType::float32, DType::complex64));
  EXPECT_FALSE(xp::can_cast(DType::complex64, DType::float64));
  EXPECT_FALSE(xp::can_cast(DType::float64, DType::complex64));
}

TEST(DType, PromotionProperties) {
  for (const DType a : kAll) {
    EXPECT_EQ(xp::result_type(a, a), a);
    EXPECT_EQ(xp::result_type(DType::bool_, a), a);
    const bool cplx = xp::kind(a) == DTypeKind::complex_floating;
    EXPECT_EQ(xp::result_type(a, DType::float64), cplx ? DType::complex128 : DType::float64);
    EXPECT_EQ(xp::result_type(a, DType::complex128), DType::complex128);
    for (const DType b : kAll) {
      const DType r = xp::result_type(a, b);
      EXPECT_EQ(r, xp::result_type(b, a)) << xp::name(a) << ", " << xp::name(b);
      EXPECT_GE(xp::itemsize(r), std::max(xp::itemsize(a), xp::itemsize(b))) << xp::name(a) << ", " << xp::name(b);
    }
  }
  // Not associative, as NumPy: (float32, uint16), int16 -> float32 but float32, (uint16, int16) -> float64.
  EXPECT_EQ(xp::result_type(xp::result_type(DType::float32, DType::uint16), DType::int16), DType::float32);
  EXPECT_EQ(xp::result_type(DType::float32, xp::result_type(DType::uint16, DType::int16)), DType::float64);
  // The cases the Array API leaves to NumPy.
  EXPECT_EQ(xp::result_type(DType::int64, DType::uint64), DType::float64);
  EXPECT_EQ(xp::result_type(DType::int8, DType::uint8), DType::int16);
  EXPECT_EQ(xp::result_type(DType::int16, DType::float16), DType::float32);
  EXPECT_EQ(xp::result_type(DType::int32, DType::float16), DType::float64);
  EXPECT_EQ(xp::result_type(DType::float16, DType::bfloat16), DType::float32);
  EXPECT_EQ(xp::result_type(DType::uint8, DType::bfloat16), DType::bfloat16);
}

TEST(DType, WeakScalarRules) {
  EXPECT_EQ(xp::result_type(DType::uint8, ScalarKind::integer), DType::uint8);
  EXPECT_EQ(xp::result_type(DType::bool_, ScalarKind::integer), DType::int64);
  EXPECT_EQ(xp::result_type(DType::bool_, ScalarKind::boolean), DType::bool_);
  EXPECT_EQ(xp::result_type(DType::float32, ScalarKind::floating), DType::float32);
  EXPECT_EQ(xp::result_type(DType::bfloat16, ScalarKind::floating), DType::bfloat16);
  EXPECT_EQ(xp::result_type(DType::int8, ScalarKind::floating), DType::float64);
  EXPECT_EQ(xp::result_type(DType::bool_, ScalarKind::floating), DType::float64);
}

TEST(DType, ValueFits) {
  EXPECT_TRUE(xp::value_fits(DType::uint8, 255LL));
  EXPECT_FALSE(xp::value_fits(DType::uint8, 300LL));
  EXPECT_FALSE(xp::value_fits(DType::uint8, -1LL));
  EXPECT_FALSE(xp::value_fits(DType::uint64, -1LL));
  EXPECT_TRUE(xp::value_fits(DType::uint64, ~0ULL));
  EXPECT_FALSE(xp::value_fits(DType::int64, 1ULL << 63));
  EXPECT_TRUE(xp::value_fits(DType::int64, std::numeric_limits<long long>::min()));
  EXPECT_TRUE(xp::value_fits(DType::int8, -128LL));
  EXPECT_FALSE(xp::value_fits(DType::int8, -129LL));
  EXPECT_TRUE(xp::value_fits(DType::bool_, 0LL));
  EXPECT_TRUE(xp::value_fits(DType::bool_, 1ULL));
  EXPECT_FALSE(xp::value_fits(DType::bool_, 2LL));
  EXPECT_FALSE(xp::value_fits(DType::bool_, -1LL));
  EXPECT_TRUE(xp::value_fits(DType::float16, std::numeric_limits<long long>::min()));
  EXPECT_TRUE(xp::value_fits(DType::float16, ~0ULL));
}

TEST(Float16, AllPatternsRoundTrip) {
  int nans = 0;
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const float f = xp::half_bits_to_float(h);
    const std::uint16_t back = xp::float_to_half_bits(f);
    if (half_is_nan(h)) {
      ++nans;
      ASSERT_TRUE(std::isnan(f)) << hex(h);
      ASSERT_TRUE(half_is_nan(back)) << hex(h) << " -> " << hex(back);
      ASSERT_EQ(back & 0x8000u, h & 0x8000u) << "NaN sign, " << hex(h);
      ASSERT_EQ(back | 0x0200u, h | 0x0200u) << "NaN payload (quieted), " << hex(h);
    } else {
      ASSERT_EQ(back, h) << hex(h) << " -> " << f;
    }
    EXPECT_EQ(xp::float16::from_bits(h).bits, h);
  }
  EXPECT_EQ(nans, 2 * 1023);
}

TEST(Bfloat16, AllPatternsRoundTrip) {
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const std::uint16_t back = xp::float_to_bfloat16_bits(xp::bfloat16_bits_to_float(h));
    if (bf16_is_nan(h)) {
      ASSERT_TRUE(bf16_is_nan(back) && (back | 0x0040u) == (h | 0x0040u)) << hex(h) << " -> " << hex(back);
    } else {
      ASSERT_EQ(back, h) << hex(h);
    }
  }
}

TEST(Float16, KnownValues) {
  struct Case {
    float in;
    std::uint16_t out;
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (const Case& c : {Case{0.0f, 0x0000},
                        Case{-0.0f, 0x8000},
                        Case{1.0f, 0x3C00},
                        Case{-2.0f, 0xC000},
                        Case{65504.0f, 0x7BFF},
                        Case{65519.99f, 0x7BFF},
                        Case{65520.0f, 0x7C00},
                        Case{1e10f, 0x7C00},
                        Case{-1e10f, 0xFC00},
                        Case{inf, 0x7C00},
                        Case{-inf, 0xFC00},
                        Case{std::ldexp(1.0f, -24), 0x0001},                        // smallest subnormal
                        Case{std::ldexp(1.0f, -25), 0x0000},                        // half of it: tie to even 0
                        Case{std::ldexp(1.5f, -25), 0x0001},                        // above the tie
                        Case{std::ldexp(3.0f, -25), 0x0002},                        // 1.5 units: tie to even 2
                        Case{std::ldexp(1.0f, -14), 0x0400},                        // smallest normal
                        Case{std::ldexp(1023.5f, -24), 0x0400},                     // tie: rounds up into normal
                        Case{1.0f + std::ldexp(1.0f, -11), 0x3C00},                 // tie, even stays
                        Case{1.0f + 3 * std::ldexp(1.0f, -11), 0x3C02},             // tie, odd rounds up
                        Case{std::numeric_limits<float>::denorm_min(), 0x0000}}) {  // float32 subnormal
    EXPECT_EQ(xp::float_to_half_bits(c.in), c.out) << c.in;
    EXPECT_EQ(xp::float16(c.in).bits, c.out) << c.in;
  }
  EXPECT_EQ(xp::half_bits_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(xp::half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(xp::float16::from_bits(0x3555)), 0.333251953125f);
  EXPECT_TRUE(std::signbit(xp::half_bits_to_float(0x8000)));
  const std::uint16_t qnan = xp::float_to_half_bits(float_of(0x7F800001u));  // signalling, payload lost
  EXPECT_TRUE(half_is_nan(qnan));
  EXPECT_EQ(qnan, 0x7E00u);
  EXPECT_EQ(xp::float_to_half_bits(float_of(0xFFC00000u)), 0xFE00u);
}

TEST(Bfloat16, KnownValues) {
  EXPECT_EQ(xp::float_to_bfloat16_bits(1.0f), 0x3F80u);
  EXPECT_EQ(xp::float_to_bfloat16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(xp::float_to_bfloat16_bits(float_of(0x3F808000u)), 0x3F80u);  // tie, even stays
  EXPECT_EQ(xp::float_to_bfloat16_bits(float_of(0x3F818000u)), 0x3F82u);  // tie, odd rounds up
  EXPECT_EQ(xp::float_to_bfloat16_bits(float_of(0x3F808001u)), 0x3F81u);
  EXPECT_EQ(xp::float_to_bfloat16_bits(float_of(0x7F7FFFFFu)), 0x7F80u);  // float32 max overflows
  EXPECT_EQ(xp::float_to_bfloat16_bits(float_of(0x7F7F7FFFu)), 0x7F7Fu);
  EXPECT_EQ(xp::float_to_bfloat16_bits(float_of(0x00008001u)), 0x0001u);  // subnormals round too
  EXPECT_EQ(xp::float_to_bfloat16_bits(float_of(0x007FFFFFu)), 0x0080u);
  EXPECT_EQ(xp::float_to_bfloat16_bits(float_of(0x7F800001u)), 0x7FC0u);  // quiet NaN, not infinity
  EXPECT_EQ(xp::float_to_bfloat16_bits(float_of(0xFF800001u)), 0xFFC0u);
  EXPECT_EQ(xp::bfloat16(3.0f).bits, 0x4040u);
  EXPECT_EQ(static_cast<float>(xp::bfloat16::from_bits(0x4049)), 3.140625f);
}
