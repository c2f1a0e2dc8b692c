// The CPU backend's transcendental kernels (ew_math.cpp), on every dispatch path this machine has:
// accuracy against a reference computed in higher precision (float32 against the double libm
// function rounded to float, float64 against the x87 long double function rounded to double),
// special values by class against C's libm and Annex F, and bit-identical results whatever the
// tile length, the element's position and the buffers' alignment.

#include <gtest/gtest.h>
#include <math.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/tile_ops.hpp"
#include "backend/cpu/vmath.hpp"
#include "math_cases.hpp"

namespace {

using namespace xp_math_cases;
using xp::detail::cpu::math_impl;
using xp::detail::cpu::math_isa;
using xp::detail::cpu::math_isas_available;
using xp::detail::cpu::math_tile_fn;
using xp::detail::cpu::math_ulp_bound;
using xp::detail::cpu::set_math_isa_for_testing;
using xp::detail::cpu::TileFn;

template <class T>
struct Case {
  std::vector<T> a, b, ref;
};

// Inputs and references are the same for every path: computed once.
template <class T>
const Case<T>& case_for(const MathFn& fn) {
  static std::map<Op, Case<T>> cache;
  auto it = cache.find(fn.op);
  if (it != cache.end()) return it->second;
  Case<T> c;
  make_inputs<T>(fn, c.a, c.b);
  c.ref.resize(c.a.size());
  for (std::size_t i = 0; i < c.a.size(); ++i) c.ref[i] = reference<T>(fn, c.a[i], c.b[i]);
  return cache.emplace(fn.op, std::move(c)).first->second;
}

template <class T>
void run(TileFn k, const T* a, const T* b, T* out, std::int64_t n) {
  const void* in[2] = {a, b};
  k(in, out, n);
}

// Runs every path this machine has, skipping the others with the reason.
class MathPath : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!set_math_isa_for_testing(GetParam())) GTEST_SKIP() << "this machine has no '" << GetParam() << "' path";
  }
  void TearDown() override { set_math_isa_for_testing(nullptr); }
};

// ---- accuracy ----

template <class T>
double max_error(const MathFn& fn, std::string& worst) {
  const Case<T>& c = case_for<T>(fn);
  const TileFn k = math_tile_fn(fn.op, dtype_of<T>, dtype_of<T>);
  if (k == nullptr) {
    worst = "no kernel";
    return INFINITY;
  }
  std::vector<T> out(c.a.size());
  run(k, c.a.data(), c.b.data(), out.data(), static_cast<std::int64_t>(out.size()));
  double m = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double e = ulp_distance(out[i], c.ref[i]);
    if (e > m) {
      m = e;
      char args[80], buf[200];
      if (fn.binary()) {
        std::snprintf(args, sizeof args, "%.17g, %.17g", double(c.a[i]), double(c.b[i]));
      } else {
        std::snprintf(args, sizeof args, "%.17g", double(c.a[i]));
      }
      std::snprintf(buf, sizeof buf, "%s(%s) = %.17g, reference %.17g", fn.name, args, double(out[i]),
                    double(c.ref[i]));
      worst = buf;
    }
  }
  return m;
}

TEST_P(MathPath, ErrorWithinBound) {
  for (const MathFn& fn : kFns) {
    std::string worst32, worst64;
    const double e32 = max_error<float>(fn, worst32);
    const double e64 = max_error<double>(fn, worst64);
    const double b32 = math_ulp_bound(fn.op, DType::float32);
    const double b64 = math_ulp_bound(fn.op, DType::float64);
    std::printf("[ ulp ] %-6s %-5s float32 %g (bound %g, %s)  float64 %g (bound %g, %s)\n", math_isa(), fn.name, e32,
                b32, math_impl(fn.op, DType::float32), e64, b64, math_impl(fn.op, DType::float64));
    EXPECT_GT(b32, 0) << fn.name;
    EXPECT_LE(e32, b32) << math_isa() << " float32 " << worst32;
    EXPECT_LE(e64, b64) << math_isa() << " float64 " << worst64;
  }
}

// ---- special values ----

template <class T>
void check_special_classes(const MathFn& fn) {
  std::vector<T> a, b;
  special_operands<T>(fn, a, b);
  const TileFn k = math_tile_fn(fn.op, dtype_of<T>, dtype_of<T>);
  ASSERT_NE(k, nullptr);
  std::vector<T> out(a.size());
  run(k, a.data(), b.data(), out.data(), static_cast<std::int64_t>(a.size()));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const T want = libm<T>(fn, a[i], b[i]);
    EXPECT_EQ(cls(out[i]), cls(want)) << math_isa() << " " << (sizeof(T) == 4 ? "float32 " : "float64 ") << fn.name
                                      << "(" << a[i] << (fn.binary() ? ", " + std::to_string(b[i]) : "")
                                      << ") = " << out[i] << " (" << cls_name(cls(out[i])) << "), libm gives " << want
                                      << " (" << cls_name(cls(want)) << ")";
  }
}

TEST_P(MathPath, SpecialValuesAsLibm) {
  for (const MathFn& fn : kFns) {
    check_special_classes<float>(fn);
    check_special_classes<double>(fn);
  }
}

template <class T>
void check_annex_f() {
  for (const AnnexFRow<T>& r : annex_f_rows<T>()) {
    const TileFn k = math_tile_fn(r.op, dtype_of<T>, dtype_of<T>);
    ASSERT_NE(k, nullptr);
    T out = T(42);
    run(k, &r.a, &r.b, &out, 1);
    const std::string what = std::string(math_isa()) + " " + std::string(xp::detail::op_name(r.op)) + "(" +
                             std::to_string(r.a) + ", " + std::to_string(r.b) + ")";
    if (isnan(r.want)) {
      EXPECT_TRUE(isnan(out)) << what << " = " << out;
    } else {
      EXPECT_EQ(cls(out), cls(r.want)) << what << " = " << out;
      EXPECT_LE(ulp_distance(out, r.want), 1.0) << what << " = " << out << ", want " << r.want;
    }
  }
}

TEST_P(MathPath, AnnexFSpecialCases) {
  check_annex_f<float>();
  check_annex_f<double>();
}

// ---- position independence ----

template <class T>
void check_positions(const MathFn& fn) {
  // Mixed inputs: ordinary values, special values and huge arguments side by side.
  Rng rng{0xB175ull + static_cast<std::uint64_t>(fn.op)};
  const std::vector<T> s = special_values<T>();
  constexpr int kLen = 160;
  std::vector<T> a(kLen), b(kLen);
  for (int i = 0; i < kLen; ++i) {
    const auto r = rng.next() % 4;
    a[i] = r == 0 ? s[rng.next() % s.size()] : r == 1 ? rng.finite_bits<T>() : static_cast<T>(rng.uniform(-4, 4));
    b[i] = static_cast<T>(rng.next() % 3 == 0 ? s[rng.next() % s.size()] : static_cast<T>(rng.uniform(-4, 4)));
    if (fn.op == Op::pow && rng.next() % 2 == 0) a[i] = static_cast<T>(rng.uniform(0, 3));
  }
  const TileFn k = math_tile_fn(fn.op, dtype_of<T>, dtype_of<T>);
  ASSERT_NE(k, nullptr);
  // Each element alone (n = 1): the value every other evaluation must reproduce.
  std::vector<Bits<T>> solo(kLen);
  for (int i = 0; i < kLen; ++i) {
    T o;
    run(k, &a[i], &b[i], &o, 1);
    solo[i] = bits(o);
  }
  // Slices [start, start + n) of copies shifted by `shift` elements (other alignments), out of
  // place and in place.
  constexpr int kShift = 4;
  std::vector<T> sa(kLen + kShift), sb(kLen + kShift), out(kLen + kShift);
  for (int shift = 0; shift < kShift; ++shift) {
    std::copy(a.begin(), a.end(), sa.begin() + shift);
    std::copy(b.begin(), b.end(), sb.begin() + shift);
    for (int n = 1; n <= 70; ++n) {
      for (int start = 0; start + n <= kLen; start += 1 + (n + start) % 23) {
        run(k, sa.data() + shift + start, sb.data() + shift + start, out.data() + shift + start, n);
        for (int i = start; i < start + n; ++i) {
          ASSERT_EQ(bits(out[shift + i]), solo[i]) << math_isa() << " " << fn.name << " element " << i << " of a tile ["
                                                   << start << ", " << start + n << "), shift " << shift;
        }
        // In place: the output over the first operand.
        std::vector<T> inplace(sa.begin() + shift + start, sa.begin() + shift + start + n);
        run(k, inplace.data(), sb.data() + shift + start, inplace.data(), n);
        for (int i = 0; i < n; ++i) ASSERT_EQ(bits(inplace[i]), solo[start + i]) << fn.name << " in place";
      }
    }
  }
}

TEST_P(MathPath, SameBitsWhateverTheTile) {
  for (const MathFn& fn : kFns) {
    check_positions<float>(fn);
    check_positions<double>(fn);
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, MathPath, ::testing::Values("avx512", "avx2", "sse4", "scalar"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// ---- dispatch ----

TEST(MathDispatch, OnlyTheTranscendentalFloatFunctions) {
  for (const MathFn& fn : kFns) {
    EXPECT_NE(math_tile_fn(fn.op, DType::float32, DType::float32), nullptr) << fn.name;
    EXPECT_NE(math_tile_fn(fn.op, DType::float64, DType::float64), nullptr) << fn.name;
    EXPECT_EQ(math_tile_fn(fn.op, DType::float16, DType::float16), nullptr) << fn.name;
    EXPECT_EQ(math_tile_fn(fn.op, DType::bfloat16, DType::bfloat16), nullptr) << fn.name;
    EXPECT_EQ(math_tile_fn(fn.op, DType::int32, DType::int32), nullptr) << fn.name;
    EXPECT_EQ(math_tile_fn(fn.op, DType::float32, DType::float64), nullptr) << fn.name;
    EXPECT_GE(math_ulp_bound(fn.op, DType::float32), 1.0) << fn.name;
    EXPECT_GE(math_ulp_bound(fn.op, DType::float64), 1.0) << fn.name;
  }
  for (Op op : {Op::add, Op::sqrt, Op::load, Op::cast, Op::fma}) {
    EXPECT_EQ(math_tile_fn(op, DType::float32, DType::float32), nullptr) << xp::detail::op_name(op);
    EXPECT_EQ(math_impl(op, DType::float32), nullptr);
  }
}

TEST(MathDispatch, BestPathByDefaultAndScalarAlwaysThere) {
  const std::vector<std::string> paths = math_isas_available();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.back(), "scalar");
  EXPECT_EQ(paths.front(), math_isa());
  std::printf("[ isa ] paths here:");
  for (const auto& p : paths) std::printf(" %s", p.c_str());
  std::printf("\n");
  EXPECT_FALSE(set_math_isa_for_testing("avx9000"));
  EXPECT_EQ(paths.front(), math_isa());
  ASSERT_TRUE(set_math_isa_for_testing("scalar"));
  EXPECT_STREQ(math_isa(), "scalar");
  EXPECT_STREQ(math_impl(Op::exp, DType::float32), "libm");
  ASSERT_TRUE(set_math_isa_for_testing(nullptr));
  EXPECT_EQ(paths.front(), math_isa());
}

}  // namespace
