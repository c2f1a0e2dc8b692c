// The CPU backend's complex tile kernels (src/backend/cpu/ew_complex.cpp over
// src/backend/complex_math.cuh):
// - every operation on complex64 and complex128 against NumPy 2 (tests/ref/complex_reference.py,
//   run with the repository's .venv python; without it these tests skip, or fail under
//   XP_TEST_REQUIRE_NUMPY=1): the exact operations bit for bit (NaN as a class), the functions
//   within complex_cases.hpp's bound of the long double result, with the special values' classes
//   (NaN, signed infinities, signed zeros) as the standard's tables give them;
// - casts to and from complex: the exact kernels' conversions of the real part, +0 imaginary parts;
// - each element's bits independent of n, of its position in the tile and of in-place use;
// - the set of defined combinations.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/fused.hpp"
#include "backend/cpu/tile_ops.hpp"
#include "complex_cases.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using xp::DType;
using xp::detail::Op;
using xp::detail::cpu::tile_fn;
using xp::detail::cpu::TileFn;
using namespace xp_complex_cases;

namespace {

Op op_named(const std::string& s) {
  for (int i = 0; i < xp::detail::kOpCount; ++i)
    if (xp::detail::op_name(static_cast<Op>(i)) == s) return static_cast<Op>(i);
  ADD_FAILURE() << "the reference names an op xp does not have: " << s;
  return Op::load;
}

DType dtype_named(const std::string& s) {
  const auto t = xp::parse_dtype(s);
  EXPECT_TRUE(t.has_value()) << s;
  return t.value_or(DType::float64);
}

struct Reference {
  xp_test::PythonReference ref;
  nlohmann::json cases;
  std::vector<std::uint64_t> data;
  const std::byte* at(std::int64_t offset) const { return reinterpret_cast<const std::byte*>(data.data()) + offset; }
};

const Reference& reference() {
  static const Reference r = [] {
    Reference r;
    xp_test::TempDir dir;
    r.ref = xp_test::run_python_reference("complex_reference.py", {dir.path()});
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

template <class T>
std::string text(T re, T im) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%.17g, %.17g)", static_cast<double>(re), static_cast<double>(im));
  return buf;
}

// pow(a, b) = exp(b log a) carries log a's error times |b| into the exponent: its error is measured
// in units of 1 + |b| |log a| (ulp of |result|).
template <class T>
double pow_condition(T ar, T ai, const std::byte* b) {
  T bb[2];
  std::memcpy(bb, b, sizeof bb);
  const long double la = std::log(std::hypot(static_cast<long double>(ar), static_cast<long double>(ai)));
  const long double arg = std::atan2(static_cast<long double>(ai), static_cast<long double>(ar));
  return static_cast<double>(1 + std::hypot(static_cast<long double>(bb[0]), static_cast<long double>(bb[1])) *
                                     std::hypot(la, arg));
}

// One reference case with component type T: how many elements fail, the worst error in ulp.
template <class T>
void check_case(const nlohmann::json& c, const Reference& r, std::map<std::string, double>& worst) {
  const std::string op_s = c["op"], dtype_s = c["dtype"], result_s = c["result"];
  const Op op = op_named(op_s);
  const DType dtype = dtype_named(dtype_s), result = dtype_named(result_s);
  const DType operand = dtype_named(c["inputs"][0][0]);
  const bool exact = c["exact"];
  const std::string what = op_s + "(" + dtype_s + ") -> " + result_s;
  const TileFn f = tile_fn(op, operand, result);
  ASSERT_NE(f, nullptr) << what;
  const std::int64_t n = c["n"];
  std::vector<const void*> in;
  for (const auto& i : c["inputs"]) in.push_back(r.at(i[1].get<std::int64_t>()));
  const std::size_t size = xp::itemsize(result);
  std::vector<std::uint64_t> store((static_cast<std::size_t>(n) * size + 7) / 8 + 2);
  auto* out = reinterpret_cast<std::byte*>(store.data());
  f(in.data(), out, n);
  const std::byte* expected = r.at(c["expected"].get<std::int64_t>());
  const std::int64_t loose_off = c["loose"];
  const auto* loose = loose_off >= 0 ? reinterpret_cast<const std::uint8_t*>(r.at(loose_off)) : nullptr;
  const double bound = exact ? 0 : cpu_ulp_bound(op, dtype);
  const auto* a = static_cast<const std::byte*>(in[0]);
  const std::size_t isz = xp::itemsize(operand);
  double& w = worst[op_s + " " + dtype_s];
  int reported = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    T ar = 0, ai = 0;  // the first operand, for messages (a complex value, or complex's real part)
    std::memcpy(&ar, a + k * isz, sizeof(T));
    if (isz == 2 * sizeof(T)) std::memcpy(&ai, a + k * isz + sizeof(T), sizeof(T));
    bool ok = true;
    double err = 0;
    std::string got_s, want_s;
    if (result == DType::bool_) {
      const auto g = static_cast<unsigned>(std::to_integer<unsigned>(out[k]));
      const auto v = static_cast<unsigned>(std::to_integer<unsigned>(expected[k]));
      ok = g == v;
      got_s = std::to_string(g);
      want_s = std::to_string(v);
    } else if (size == sizeof(T)) {  // real, imag, abs
      T g, v;
      std::memcpy(&g, out + k * size, sizeof(T));
      std::memcpy(&v, expected + k * size, sizeof(T));
      if (exact) {
        ok = same_bits(g, v);
      } else {
        ok = same_class(g, v, false);
        if (ok && std::isfinite(ar) && std::isfinite(ai) && !std::isinf(g)) err = ulp_distance(g, v);
      }
      got_s = text(g, T(0));
      want_s = text(v, T(0));
    } else {
      T g[2], v[2];
      std::memcpy(g, out + k * size, size);
      std::memcpy(v, expected + k * size, size);
      const std::uint8_t l = loose != nullptr ? loose[k] : 0;
      if (exact) {
        ok = same_bits(g[0], v[0]) && same_bits(g[1], v[1]);
      } else {
        ok = same_class(g[0], v[0], (l & 1) != 0) && same_class(g[1], v[1], (l & 2) != 0);
        bool finite_in = std::isfinite(ar) && std::isfinite(ai);
        if (in.size() > 1) {
          T b[2];
          std::memcpy(b, static_cast<const std::byte*>(in[1]) + k * isz, 2 * sizeof(T));
          finite_in = finite_in && std::isfinite(b[0]) && std::isfinite(b[1]);
        }
        const bool finite_out =
            std::isfinite(g[0]) && std::isfinite(g[1]) && std::isfinite(v[0]) && std::isfinite(v[1]);
        if (ok && finite_in && finite_out) {
          err = normwise(op) ? normwise_ulp(g[0], g[1], v[0], v[1])
                             : std::max(ulp_distance(g[0], v[0]), ulp_distance(g[1], v[1]));
          if (op == Op::pow) err /= pow_condition(ar, ai, static_cast<const std::byte*>(in[1]) + k * isz);
        } else if (ok && finite_in) {  // an overflow: the infinite parts by class, the others in ulp
          for (int p = 0; p < 2; ++p)
            if (std::isfinite(g[p]) && std::isfinite(v[p])) err = std::max(err, ulp_distance(g[p], v[p]));
        }
      }
      got_s = text(g[0], g[1]);
      want_s = text(v[0], v[1]);
    }
    w = std::max(w, err);
    if (err > bound) ok = false;
    if (!ok && reported++ < 5) {
      ADD_FAILURE() << what << " element " << k << " of " << text(ar, ai) << ": xp " << got_s << ", reference "
                    << want_s
                    << (err > 0 ? " (" + std::to_string(err) + " ulp, bound " + std::to_string(bound) + ")"
                                : std::string());
    }
  }
}

}  // namespace

TEST(CpuComplex, MatchesNumPy) {
  const Reference& r = reference();
  XP_REQUIRE_REFERENCE(r.ref);
  std::map<std::string, double> worst;
  std::int64_t elements = 0;
  for (const auto& c : r.cases["cases"]) {
    if (c["dtype"] == "complex64")
      check_case<float>(c, r, worst);
    else
      check_case<double>(c, r, worst);
    elements += c["n"].get<std::int64_t>();
  }
  for (const auto& [what, e] : worst)
    if (e > 0) std::printf("[ ulp ] cpu %-20s %g\n", what.c_str(), e);
  std::printf("[          ] %zu cases, %lld elements against NumPy %s\n", r.cases["cases"].size(),
              static_cast<long long>(elements), r.cases["numpy"].get<std::string>().c_str());
}

namespace {

constexpr DType kReal[] = {DType::bool_,    DType::int8,    DType::int16,  DType::int32,  DType::int64,
                           DType::uint8,    DType::uint16,  DType::uint32, DType::uint64, DType::float16,
                           DType::bfloat16, DType::float32, DType::float64};
constexpr DType kComplex[] = {DType::complex64, DType::complex128};

// n elements of random bits of a dtype, with its special values first (zeros, ones, infinities,
// NaNs, the extremes). Complex values: pairs of the component's.
std::vector<std::byte> values(DType d, std::int64_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  const std::size_t item = xp::itemsize(d);
  std::vector<std::byte> v(static_cast<std::size_t>(n) * item);
  auto put = [&](std::int64_t i, std::size_t at, std::uint64_t bits, std::size_t size) {
    std::memcpy(v.data() + i * item + at, &bits, size);
  };
  const float f32[] = {0.0f,     -0.0f,     1.0f, -1.5f,   2.5f,     1e30f,          -1e-40f,
                       INFINITY, -INFINITY, NAN,  3.4e38f, 65520.0f, -2147483648.0f, 4294967296.0f};
  const double f64[] = {0.0,      -0.0,      1.0, -1.5,   2.5,      1e300,   -1e-310,
                        INFINITY, -INFINITY, NAN, 3.4e38, 65519.99, -9.3e18, 1.9e19};
  constexpr std::int64_t kSpecial = sizeof(f32) / sizeof(f32[0]);
  for (std::int64_t i = 0; i < n; ++i) {
    if (d == DType::complex64 || d == DType::complex128) {
      const bool wide = d == DType::complex128;
      for (int p = 0; p < 2; ++p) {
        const std::int64_t s = p == 0 ? i % kSpecial : (i / kSpecial) % kSpecial;
        std::uint64_t bits = gen();
        if (i < kSpecial * kSpecial)
          bits = wide ? std::bit_cast<std::uint64_t>(f64[s]) : std::bit_cast<std::uint32_t>(f32[s]);
        else if (gen() % 2 == 0)
          bits = wide ? std::bit_cast<std::uint64_t>(
                            static_cast<double>(static_cast<std::int64_t>(gen() % 2001) - 1000) / 7)
                      : std::bit_cast<std::uint32_t>(
                            static_cast<float>(static_cast<std::int64_t>(gen() % 2001) - 1000) / 7);
        put(i, p * item / 2, bits, item / 2);
      }
    } else if (d == DType::float32 && i < kSpecial) {
      put(i, 0, std::bit_cast<std::uint32_t>(f32[i]), 4);
    } else if (d == DType::float64 && i < kSpecial) {
      put(i, 0, std::bit_cast<std::uint64_t>(f64[i]), 8);
    } else {
      put(i, 0, d == DType::bool_ ? gen() % 2 : gen(), item);
    }
  }
  return v;
}

}  // namespace

TEST(CpuComplex, CastsToComplexConvertAsToTheComponentWithAZeroImaginaryPart) {
  constexpr std::int64_t n = 700;
  for (DType c : kComplex) {
    const DType comp = xp::detail::component_dtype(c);
    const std::size_t half = xp::itemsize(comp);
    for (DType from : kReal) {
      const std::vector<std::byte> in = values(from, n, 1);
      const TileFn cast = tile_fn(Op::cast, from, c);
      ASSERT_NE(cast, nullptr) << xp::name(from) << " -> " << xp::name(c);
      std::vector<std::byte> got(n * xp::itemsize(c)), re(n * half);
      const void* args[1] = {in.data()};
      cast(args, got.data(), n);
      tile_fn(Op::cast, from, comp)(args, re.data(), n);
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::memcmp(got.data() + i * 2 * half, re.data() + i * half, half), 0)
            << xp::name(from) << " -> " << xp::name(c) << " element " << i;
        std::uint64_t im = 0;
        std::memcpy(&im, got.data() + i * 2 * half + half, half);
        ASSERT_EQ(im, 0u) << xp::name(from) << " -> " << xp::name(c) << ": the imaginary part is +0";
      }
    }
  }
}

TEST(CpuComplex, CastsFromComplexConvertTheRealPart) {
  constexpr std::int64_t n = 700;
  for (DType c : kComplex) {
    const DType comp = xp::detail::component_dtype(c);
    const std::size_t half = xp::itemsize(comp);
    const std::vector<std::byte> in = values(c, n, 2);
    std::vector<std::byte> re(n * half);
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(re.data() + i * half, in.data() + i * 2 * half, half);
    for (DType to : kReal) {
      const TileFn cast = tile_fn(Op::cast, c, to);
      ASSERT_NE(cast, nullptr) << xp::name(c) << " -> " << xp::name(to);
      const std::size_t item = xp::itemsize(to);
      std::vector<std::byte> got(n * item), want(n * item);
      const void* args[1] = {in.data()};
      cast(args, got.data(), n);
      if (to == DType::bool_) {
        for (std::int64_t i = 0; i < n; ++i) {
          double p[2];
          if (c == DType::complex64) {
            float q[2];
            std::memcpy(q, in.data() + i * 8, 8);
            p[0] = q[0];
            p[1] = q[1];
          } else {
            std::memcpy(p, in.data() + i * 16, 16);
          }
          want[i] = std::byte{static_cast<unsigned char>(p[0] != 0 || p[1] != 0)};  // NaN is true
        }
      } else {
        const void* rargs[1] = {re.data()};
        tile_fn(Op::cast, comp, to)(rargs, want.data(), n);
      }
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint64_t g = 0, w = 0;
        std::memcpy(&g, got.data() + i * item, item);
        std::memcpy(&w, want.data() + i * item, item);
        const bool nan = (to == DType::float32 || to == DType::float64) &&
                         (to == DType::float32 ? (g & 0x7FFFFFFFu) > 0x7F800000u && (w & 0x7FFFFFFFu) > 0x7F800000u
                                               : (g << 1) > (0x7FFull << 53) && (w << 1) > (0x7FFull << 53));
        ASSERT_TRUE(g == w || nan) << xp::name(c) << " -> " << xp::name(to) << " element " << i;
      }
    }
  }
  // complex64 <-> complex128, each part converted as float32 <-> float64.
  const std::vector<std::byte> narrow = values(DType::complex64, n, 3), wide = values(DType::complex128, n, 4);
  std::vector<std::byte> up(n * 16), down(n * 8);
  const void* a1[1] = {narrow.data()};
  const void* a2[1] = {wide.data()};
  tile_fn(Op::cast, DType::complex64, DType::complex128)(a1, up.data(), n);
  tile_fn(Op::cast, DType::complex128, DType::complex64)(a2, down.data(), n);
  for (std::int64_t i = 0; i < 2 * n; ++i) {
    float f, g;
    double d, e;
    std::memcpy(&f, narrow.data() + i * 4, 4);
    std::memcpy(&d, up.data() + i * 8, 8);
    EXPECT_TRUE(same_bits(d, static_cast<double>(f))) << i;
    std::memcpy(&e, wide.data() + i * 8, 8);
    std::memcpy(&g, down.data() + i * 4, 4);
    EXPECT_TRUE(same_bits(g, static_cast<float>(e))) << i;
  }
}

// Every complex kernel: one call over n elements, n calls of one element and the operand's own
// buffer as the output give the same bits.
TEST(CpuComplex, SameBitsWhateverTheTileAndInPlace) {
  constexpr std::int64_t n = 300;
  int checked = 0;
  for (DType c : kComplex) {
    const DType comp = xp::detail::component_dtype(c);
    const std::vector<std::byte> x = values(c, n, 5), y = values(c, n, 6);
    for (int o = 0; o < xp::detail::kOpCount; ++o) {
      const Op op = static_cast<Op>(o);
      for (DType r : {c, comp, DType::bool_}) {
        const TileFn f = tile_fn(op, c, r);
        if (f == nullptr || op == Op::cast || op == Op::where) continue;
        const int arity = xp::detail::op_arity(op);
        const std::size_t item = xp::itemsize(r), in_item = xp::itemsize(c);
        std::vector<std::byte> whole(n * item), one(n * item);
        const void* args[2] = {x.data(), y.data()};
        f(args, whole.data(), n);
        for (std::int64_t i = 0; i < n; ++i) {
          const void* a1[2] = {x.data() + i * in_item, y.data() + i * in_item};
          f(a1, one.data() + i * item, 1);
        }
        EXPECT_EQ(std::memcmp(whole.data(), one.data(), whole.size()), 0)
            << xp::detail::op_name(op) << " " << xp::name(c);
        std::vector<std::byte> in_place = x;
        const void* a2[2] = {in_place.data(), arity > 1 ? static_cast<const void*>(y.data()) : nullptr};
        f(a2, in_place.data(), n);
        EXPECT_EQ(std::memcmp(in_place.data(), whole.data(), whole.size()), 0)
            << xp::detail::op_name(op) << " " << xp::name(c) << " in place";
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 2 * 37);
}

TEST(CpuComplex, DefinedCombinations) {
  // The complex combinations of ir.hpp's rules, and nothing else on complex operands.
  int defined = 0;
  for (int o = 0; o < xp::detail::kOpCount; ++o) {
    const Op op = static_cast<Op>(o);
    for (DType c : kComplex) {
      for (int r = 0; r <= static_cast<int>(DType::complex128); ++r) {
        if (tile_fn(op, c, static_cast<DType>(r)) != nullptr) ++defined;
      }
    }
  }
  // 37 operations on each complex type (30 unary, 7 binary), where, and casts to the 15 dtypes.
  EXPECT_EQ(defined, 2 * 53);
  EXPECT_NE(tile_fn(Op::complex, DType::float32, DType::complex64), nullptr);
  EXPECT_NE(tile_fn(Op::complex, DType::float64, DType::complex128), nullptr);
  EXPECT_EQ(tile_fn(Op::complex, DType::float32, DType::complex128), nullptr);
  EXPECT_EQ(tile_fn(Op::less, DType::complex64, DType::bool_), nullptr);
  EXPECT_EQ(tile_fn(Op::floor, DType::complex128, DType::complex128), nullptr);
  EXPECT_EQ(tile_fn(Op::abs, DType::complex64, DType::complex64), nullptr);
}

// A fused program of complex values run by the CPU's tile runner (fused.cpp: tiles of 16-byte
// values, strided and broadcast inputs, a complex64 constant, converting stores) gives the tile
// kernels' bits, instruction by instruction.
TEST(CpuComplex, FusedProgramsMatchTheTileKernels) {
  using xp::detail::FusedProgram;
  using xp::detail::Instr;
  using xp::detail::View;
  for (std::int64_t rows : {3, 700}) {  // one tile, and several on several threads
    const std::int64_t cols = 61, n = rows * cols;
    const std::int64_t shape[2] = {rows, cols};
    // x: complex128, transposed storage; y: complex64, contiguous; r: float64 broadcast along rows.
    const std::vector<std::byte> xs = values(DType::complex128, n, 11), ys = values(DType::complex64, n, 12);
    const std::vector<std::byte> rs = values(DType::float64, cols, 13);
    const std::int64_t x_strides[2] = {16, 16 * rows}, y_strides[2] = {8 * cols, 8}, r_strides[2] = {0, 8};
    std::vector<std::byte> x_t(n * 16);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        std::memcpy(x_t.data() + (i + j * rows) * 16, xs.data() + (i * cols + j) * 16, 16);
    auto view = [&](const std::byte* data, DType d, const std::int64_t* strides) {
      View v;
      v.data = const_cast<std::byte*>(data);
      v.dtype = d;
      v.ndim = 2;
      v.shape = shape;
      v.strides = strides;
      return v;
    };
    FusedProgram p;
    p.ndim = 2;
    p.shape = shape;
    p.inputs = {view(x_t.data(), DType::complex128, x_strides), view(ys.data(), DType::complex64, y_strides),
                view(rs.data(), DType::float64, r_strides)};
    const std::uint64_t k64 = std::bit_cast<std::uint32_t>(0.5f) | std::uint64_t{std::bit_cast<std::uint32_t>(-2.0f)}
                                                                       << 32;
    p.code = {
        {Op::load, DType::complex128, -1, -1, -1, 0},       // 0 x
        {Op::load, DType::complex64, -1, -1, -1, 1},        // 1 y
        {Op::load, DType::float64, -1, -1, -1, 2},          // 2 r
        {Op::constant, DType::complex64, -1, -1, -1, k64},  // 3 0.5 - 2i
        {Op::multiply, DType::complex64, 1, 3, -1, 0},      // 4 y k
        {Op::cast, DType::complex128, 4, -1, -1, 0},        // 5
        {Op::complex, DType::complex128, 2, 2, -1, 0},      // 6 r + ri
        {Op::add, DType::complex128, 0, 5, -1, 0},          // 7 x + y k
        {Op::exp, DType::complex128, 7, -1, -1, 0},         // 8
        {Op::divide, DType::complex128, 8, 6, -1, 0},       // 9
        {Op::abs, DType::float64, 9, -1, -1, 0},            // 10
        {Op::isnan, DType::bool_, 9, -1, -1, 0},            // 11
        {Op::where, DType::complex128, 11, 6, 9, 0},        // 12
    };
    std::vector<std::byte> o0(n * 16), o1(n * 8), o2(n * 8), o3(n);
    const std::int64_t s16[2] = {16 * cols, 16}, s8[2] = {8 * cols, 8}, s1[2] = {cols, 1};
    p.outputs = {view(o0.data(), DType::complex128, s16), view(o1.data(), DType::float64, s8),
                 view(o2.data(), DType::complex64, s8), view(o3.data(), DType::bool_, s1)};
    p.output_instr = {12, 10, 9, 11};  // instruction 9 stored as complex64: a converting store
    xp::detail::cpu::run_fused(p);
    // Instruction by instruction over C-ordered copies of the inputs.
    std::vector<std::vector<std::byte>> val(p.code.size());
    std::vector<std::byte> rb(n * 8);
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(rb.data() + i * 8, rs.data() + (i % cols) * 8, 8);
    val[0] = xs;
    val[1] = ys;
    val[2] = rb;
    val[3].resize(n * 8);
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(val[3].data() + i * 8, &k64, 8);
    for (std::size_t k = 4; k < p.code.size(); ++k) {
      const Instr& ins = p.code[k];
      const DType operand = ins.op == Op::where ? p.code[ins.b].dtype : p.code[ins.a].dtype;
      val[k].resize(n * xp::itemsize(ins.dtype));
      const void* args[3] = {val[ins.a].data(), ins.b >= 0 ? val[ins.b].data() : nullptr,
                             ins.c >= 0 ? val[ins.c].data() : nullptr};
      tile_fn(ins.op, operand, ins.dtype)(args, val[k].data(), n);
    }
    std::vector<std::byte> narrow(n * 8);
    const void* args[1] = {val[9].data()};
    tile_fn(Op::cast, DType::complex128, DType::complex64)(args, narrow.data(), n);
    EXPECT_EQ(std::memcmp(o0.data(), val[12].data(), o0.size()), 0) << rows;
    EXPECT_EQ(std::memcmp(o1.data(), val[10].data(), o1.size()), 0) << rows;
    EXPECT_EQ(std::memcmp(o2.data(), narrow.data(), o2.size()), 0) << rows;
    EXPECT_EQ(std::memcmp(o3.data(), val[11].data(), o3.size()), 0) << rows;
  }
}

// Complex arrays through the public API (the array layer's complex rules over these kernels): the
// results are the tile kernels' bits.
TEST(CpuComplex, ArraysComputeWithTheTileKernels) {
  constexpr std::int64_t n = 500;
  const std::vector<std::byte> av = values(DType::complex128, n, 31), bv = values(DType::complex128, n, 32);
  std::vector<std::complex<double>> a(n), b(n);
  std::memcpy(a.data(), av.data(), av.size());
  std::memcpy(b.data(), bv.data(), bv.size());
  const xp::Array x = xp::asarray(a), y = xp::asarray(b);
  ASSERT_EQ(x.dtype(), DType::complex128);
  auto kernel = [&](Op op, DType r, const std::vector<std::byte>& p, const std::vector<std::byte>& q) {
    std::vector<std::byte> out(n * xp::itemsize(r));
    const void* args[2] = {p.data(), q.data()};
    tile_fn(op, DType::complex128, r)(args, out.data(), n);
    return out;
  };
  auto bytes = [](const xp::Array& arr) {
    const xp::Array c = arr.copy();
    const auto* p = static_cast<const std::byte*>(c.data());
    return std::vector<std::byte>(p, p + c.size() * static_cast<std::int64_t>(xp::itemsize(c.dtype())));
  };
  EXPECT_EQ(bytes(x * y), kernel(Op::multiply, DType::complex128, av, bv));
  EXPECT_EQ(bytes(x / y), kernel(Op::divide, DType::complex128, av, bv));
  EXPECT_EQ(bytes(xp::exp(x)), kernel(Op::exp, DType::complex128, av, bv));
  EXPECT_EQ(bytes(xp::abs(x)), kernel(Op::abs, DType::float64, av, bv));
  EXPECT_EQ(bytes(xp::real(x)), kernel(Op::real, DType::float64, av, bv));
  EXPECT_EQ(bytes(xp::conj(x)), kernel(Op::conj, DType::complex128, av, bv));
  EXPECT_EQ(bytes(xp::equal(x, y)), kernel(Op::equal, DType::bool_, av, bv));
  EXPECT_EQ(bytes(xp::sqrt(x)), kernel(Op::sqrt, DType::complex128, av, bv));
  // A weak complex scalar keeps complex64 (NEP 50), built as complex(re, im) in the program.
  const xp::Array f = xp::asarray(std::vector<float>{1.5f, -2.0f}) * std::complex<double>(0, 1);
  ASSERT_EQ(f.dtype(), DType::complex64);
  EXPECT_EQ(f.to_vector<std::complex<float>>(), (std::vector<std::complex<float>>{{0.0f, 1.5f}, {-0.0f, -2.0f}}));
}
