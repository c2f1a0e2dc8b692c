// Semantics that once differed from NumPy 2 (docs/semantics.md), each case checked against the
// answer NumPy 2.4 (with ml_dtypes 0.7 for bfloat16) gives, written beside it. Through the public
// API only, on the default device: the CPU here, a GPU in test_semantics_gpu (XP_DEVICE=cuda:0).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include <xp/xp.hpp>

#include "test_util.hpp"

namespace {

using xp::Array;
using xp::DType;

Array f16(const std::vector<double>& v) {
  return xp::asarray(v).astype(DType::float16);
}
Array bf16(const std::vector<double>& v) {
  return xp::asarray(v).astype(DType::bfloat16);
}
std::vector<double> values(const Array& a) {
  return a.astype(DType::float64).to_vector<double>();
}
std::vector<std::uint16_t> bits16(const Array& a) {
  std::vector<std::uint16_t> r;
  if (a.dtype() == DType::float16) {
    for (const xp::float16 h : a.to_vector<xp::float16>()) r.push_back(h.bits);
  } else {
    for (const xp::bfloat16 h : a.to_vector<xp::bfloat16>()) r.push_back(h.bits);
  }
  return r;
}
std::vector<bool> signbits(const Array& a) {
  std::vector<bool> r;
  for (double x : values(a)) r.push_back(std::signbit(x));
  return r;
}

}  // namespace

// On a GPU (XP_DEVICE=cuda:0, test_semantics_gpu, label gpu) every case needs one: without it the
// case reports itself skipped (a failure under XP_TEST_REQUIRE_GPU=1).
class Semantics : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* d = std::getenv("XP_DEVICE");
    if (d != nullptr && std::string(d).rfind("cuda", 0) == 0) XP_REQUIRE_GPU();
  }
};

namespace {

// ---- clip ----

TEST_F(Semantics, ClipDropsAnIntegerBoundBeyondAnIntegerArraysDtype) {
  const Array i8 = xp::asarray(std::vector<std::int8_t>{5, -13});
  // np.clip(np.array([5, -13], np.int8), 200.0, 300): 300 >= 127 is dropped, maximum(x, 200.0):
  // array([200., 200.]) float64 (not 127: the bound is dropped, not replaced by int8's limit).
  Array r = xp::clip(i8, 200.0, 300);
  EXPECT_EQ(r.dtype(), DType::float64);
  EXPECT_EQ(values(r), (std::vector<double>{200, 200}));
  // np.clip(np.array([5, 7], np.uint32), 3.4e38, 2**32): array([3.4e+38, 3.4e+38]) float64.
  r = xp::clip(xp::asarray(std::vector<std::uint32_t>{5, 7}), 3.4e38, 4294967296LL);
  EXPECT_EQ(r.dtype(), DType::float64);
  EXPECT_EQ(values(r), (std::vector<double>{3.4e38, 3.4e38}));
  // np.clip(int8 [5, -13], np.array([1000, -1000], np.int16), 300): 300 is dropped although it
  // fits int16 (x's dtype decides): maximum -> array([1000, -13], dtype=int16).
  r = xp::clip(i8, xp::asarray(std::vector<std::int16_t>{1000, -1000}), 300);
  EXPECT_EQ(r.dtype(), DType::int16);
  EXPECT_EQ(r.to_vector<std::int16_t>(), (std::vector<std::int16_t>{1000, -13}));
  // np.clip(int8 [5, -13], -300, np.array([-1000, 1000], np.int16)): array([-1000, -13], int16).
  r = xp::clip(i8, -300, xp::asarray(std::vector<std::int16_t>{-1000, 1000}));
  EXPECT_EQ(r.dtype(), DType::int16);
  EXPECT_EQ(r.to_vector<std::int16_t>(), (std::vector<std::int16_t>{-1000, -13}));
  // np.clip(int8 [5, -13], -300, 1.5): array([1.5, -13.]) float64.
  r = xp::clip(i8, -300, 1.5);
  EXPECT_EQ(r.dtype(), DType::float64);
  EXPECT_EQ(values(r), (std::vector<double>{1.5, -13}));
  // Both dropped: np.clip(uint64 [5, 0], -1, 2**64 - 1) is the array, uint64.
  r = xp::clip(xp::asarray(std::vector<std::uint64_t>{5, 0}), -1, ~0ULL);
  EXPECT_EQ(r.dtype(), DType::uint64);
  EXPECT_EQ(r.to_vector<std::uint64_t>(), (std::vector<std::uint64_t>{5, 0}));
  // Beyond the other side is still an error: np.clip(int8, 200, 300) and np.clip(int8, -300, -200)
  // raise OverflowError ("Python integer 200 out of bounds for int8").
  EXPECT_THROW(xp::clip(i8, 200, 300), xp::TypeError);
  EXPECT_THROW(xp::clip(i8, -300, -200), xp::TypeError);
  // A C++ number as x is an array of its default dtype, as np.clip's np.asarray(x):
  // np.clip(5, np.array([1, 8], np.int8), 300) is array([5, 8]) int64 (x weak would make 300 an error).
  r = xp::clip(5, xp::asarray(std::vector<std::int8_t>{1, 8}), 300);
  EXPECT_EQ(r.dtype(), DType::int64);
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{5, 8}));
  // np.clip(2.5, np.array([3], np.float16), 4) is array([3.]) float64.
  r = xp::clip(2.5, f16({3}), 4);
  EXPECT_EQ(r.dtype(), DType::float64);
  EXPECT_EQ(values(r), (std::vector<double>{3}));
  // out= goes with the dropped form too.
  Array out = xp::zeros({2}, DType::int16);
  xp::clip(i8, xp::asarray(std::vector<std::int16_t>{1000, -1000}), 300, out);
  EXPECT_EQ(out.to_vector<std::int16_t>(), (std::vector<std::int16_t>{1000, -13}));
}

TEST_F(Semantics, ClipPromotesAllOperandsAtOnce) {
  // np.clip(np.array([1], np.uint16), np.array([1], np.int16), np.array([1], np.float16)) is
  // float32 (np.result_type(uint16, int16, float16)); pairwise it would be float64.
  const Array r = xp::clip(xp::asarray(std::vector<std::uint16_t>{5, 7}), xp::asarray(std::vector<std::int16_t>{1, 8}),
                           f16({6, 6}));
  EXPECT_EQ(r.dtype(), DType::float32);
  EXPECT_EQ(values(r), (std::vector<double>{5, 6}));
  // fma of int8, uint8 and float16 arrays: float16 (pairwise: int16, then float32).
  const Array f =
      xp::fma(xp::asarray(std::vector<std::int8_t>{2}), xp::asarray(std::vector<std::uint8_t>{3}), f16({0.5}));
  EXPECT_EQ(f.dtype(), DType::float16);
  EXPECT_EQ(values(f), (std::vector<double>{6.5}));
}

TEST_F(Semantics, Float16ClipKeepsXWhereItEqualsABound) {
  // NumPy's float16 clip loop keeps x on ties, with array bounds and with scalar ones, at every
  // length: np.clip(f16 [0.0, -0.0], [-0.0, -0.0], [0.0, 0.0]) is [0., -0.];
  // np.clip(f16 [-0.0, 0.0], 0.0, 0.0) is [-0., 0.]; np.clip(f16 [0.0, -0.0], -0.0, -0.0) is [0., -0.].
  const Array x = f16({0.0, -0.0});
  EXPECT_EQ(signbits(xp::clip(x, f16({-0.0, -0.0}), f16({0.0, 0.0}))), (std::vector<bool>{false, true}));
  EXPECT_EQ(signbits(xp::clip(x, f16({0.0, 0.0}), f16({-0.0, -0.0}))), (std::vector<bool>{false, true}));
  EXPECT_EQ(signbits(xp::clip(x, 0.0, 0.0)), (std::vector<bool>{false, true}));
  EXPECT_EQ(signbits(xp::clip(x, -0.0, -0.0)), (std::vector<bool>{false, true}));
  const Array neg = f16({-0.0});
  EXPECT_EQ(signbits(xp::clip(neg, -0.0, -0.0)), (std::vector<bool>{true}));
  EXPECT_EQ(signbits(xp::clip(neg, 0.0, 0.0)), (std::vector<bool>{true}));
  // The rest of clip is unchanged: NaN anywhere gives NaN, lo > hi gives hi.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> r = values(xp::clip(f16({nan, 1, 1, 5}), f16({0, nan, 0, 3}), f16({1, 2, nan, 1})));
  EXPECT_TRUE(std::isnan(r[0]) && std::isnan(r[1]) && std::isnan(r[2]));
  EXPECT_EQ(r[3], 1);
  // float32 keeps NumPy's array-bound answer (the bound): np.clip(f32 [0.0], [-0.0], [-0.0]) is -0.
  const Array x32 = xp::asarray(std::vector<float>{0.0f, 0.0f});
  EXPECT_EQ(signbits(xp::clip(x32, xp::asarray(std::vector<float>{-0.0f, -0.0f}),
                              xp::asarray(std::vector<float>{-0.0f, -0.0f}))),
            (std::vector<bool>{true, true}));
}

// ---- concat, stack ----

TEST_F(Semantics, ConcatAndStackPromoteAllAtOnce) {
  // np.concat / np.stack of int8, uint8, float16 arrays: float16 (np.result_type of all three).
  const std::vector<Array> parts = {xp::asarray(std::vector<std::int8_t>{-1}),
                                    xp::asarray(std::vector<std::uint8_t>{200}), f16({2.5})};
  const Array c = xp::concat(parts);
  EXPECT_EQ(c.dtype(), DType::float16);
  EXPECT_EQ(values(c), (std::vector<double>{-1, 200, 2.5}));
  const Array s = xp::stack(parts);
  EXPECT_EQ(s.dtype(), DType::float16);
  EXPECT_EQ(values(s), (std::vector<double>{-1, 200, 2.5}));
  // uint16, int16, float16: float32 (pairwise: float64).
  EXPECT_EQ(
      xp::concat({xp::asarray(std::vector<std::uint16_t>{1}), xp::asarray(std::vector<std::int16_t>{1}), f16({1})})
          .dtype(),
      DType::float32);
  // Integers alone promote as before: int8, uint8, uint16 -> int32.
  EXPECT_EQ(xp::concat({xp::asarray(std::vector<std::int8_t>{1}), xp::asarray(std::vector<std::uint8_t>{1}),
                        xp::asarray(std::vector<std::uint16_t>{1})})
                .dtype(),
            DType::int32);
}

// ---- var, std ----

TEST_F(Semantics, VarAndStdTakeAnyRealCorrection) {
  const Array x = xp::asarray(std::vector<double>{1, 2, 3, 4});
  // np.var([1., 2, 3, 4], correction=0.5) = 1.4285714285714286 (5 / 3.5).
  EXPECT_DOUBLE_EQ(xp::var(x, {}, 0.5).item<double>(), 1.4285714285714286);
  // np.std(np.float32 [1, 2, 3, 4], correction=1.5) = 1.4142135 (float32; var 5 / 2.5 = 2).
  const Array s = xp::std(x.astype(DType::float32), {}, 1.5);
  EXPECT_EQ(s.dtype(), DType::float32);
  EXPECT_FLOAT_EQ(s.item<float>(), 1.4142135f);
  // np.var(..., correction=-1) = 1.0 (5 / 5); np.var of int8 [1, 2, 3, 4], correction=0.5: float64.
  EXPECT_DOUBLE_EQ(xp::var(x, {}, -1).item<double>(), 1.0);
  const Array vi = xp::var(xp::asarray(std::vector<std::int8_t>{1, 2, 3, 4}), {}, 0.5);
  EXPECT_EQ(vi.dtype(), DType::float64);
  EXPECT_DOUBLE_EQ(vi.item<double>(), 1.4285714285714286);
  // np.var(..., correction=3.5) = 10.0; N - correction <= 0 gives NaN here (NumPy: inf, a warning).
  EXPECT_DOUBLE_EQ(xp::var(x, {}, 3.5).item<double>(), 10.0);
  EXPECT_TRUE(std::isnan(xp::var(x, {}, 4.5).item<double>()));
  // Along an axis, and fused with an elementwise producer.
  const Array m = xp::reshape(xp::asarray(std::vector<double>{1, 2, 3, 4, 2, 4, 6, 8}), {2, 4});
  EXPECT_EQ(values(xp::var(m * 1.0, 1, 0.5)), (std::vector<double>{5 / 3.5, 20 / 3.5}));
}

// ---- cumulative_sum ----

TEST_F(Semantics, CumulativeSumOfA0dArrayIsOneElement) {
  const Array x = xp::reshape(xp::asarray(std::vector<std::int16_t>{5}), {});
  ASSERT_EQ(x.ndim(), 0);
  // np.cumulative_sum(np.array(5, np.int16)): array([5]) (int64); include_initial: array([0, 5]).
  Array r = xp::cumulative_sum(x);
  EXPECT_EQ(r.ndim(), 1);
  EXPECT_EQ(r.dtype(), DType::int64);
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{5}));
  r = xp::cumulative_sum(x, std::nullopt, std::nullopt, true);
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 5}));
  // axis=0 and axis=-1 are accepted, axis=1 is out of bounds (AxisError); dtype=int8 is kept.
  EXPECT_EQ(xp::cumulative_sum(x, 0).to_vector<std::int64_t>(), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(xp::cumulative_sum(x, -1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{5}));
  EXPECT_THROW(xp::cumulative_sum(x, 1), xp::ValueError);
  r = xp::cumulative_sum(x, std::nullopt, DType::int8);
  EXPECT_EQ(r.dtype(), DType::int8);
  EXPECT_EQ(r.to_vector<std::int8_t>(), (std::vector<std::int8_t>{5}));
  // np.cumulative_sum(np.array(2.5, np.float16)): array([2.5], dtype=float16).
  r = xp::cumulative_sum(xp::reshape(f16({2.5}), {}));
  EXPECT_EQ(r.dtype(), DType::float16);
  EXPECT_EQ(values(r), (std::vector<double>{2.5}));
}

// ---- arange ----

TEST_F(Semantics, ArangeIntoAnIntegerDtypeAsNumPy) {
  // np.arange(1.95, 2.45, 0.1, np.int64): array([1, 2, 3, 4, 5, 6]): the length from the floats
  // (ceil(0.5 / 0.1) = 6), element 0 int(1.95), element 1 int(1.95 + 0.1), then steps of their
  // difference in the dtype.
  EXPECT_EQ(xp::arange(1.95, 2.45, 0.1, DType::int64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(xp::arange(1.95, 2.45, 0.1, DType::int8).to_vector<std::int8_t>(),
            (std::vector<std::int8_t>{1, 2, 3, 4, 5, 6}));
  // np.arange(-0.5, 3, 1, np.uint8): array([0, 0, 0, 0]); np.arange(0.5, -3, -1, np.int8): the same.
  EXPECT_EQ(xp::arange(-0.5, 3, 1, DType::uint8).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(xp::arange(0.5, -3, -1, DType::int8).to_vector<std::int8_t>(), (std::vector<std::int8_t>{0, 0, 0, 0}));
  // np.arange(1e19, 2e19, 5e18, np.uint64): [10000000000000000000, 15000000000000000000].
  EXPECT_EQ(xp::arange(1e19, 2e19, 5e18, DType::uint64).to_vector<std::uint64_t>(),
            (std::vector<std::uint64_t>{10000000000000000000ULL, 15000000000000000000ULL}));
  // np.arange(0.0, 1e16, 4e15, np.int32) raises OverflowError (4e15 does not fit int32), as does
  // np.arange(-1.5, 3, 1, np.uint8) (-1); np.arange(0.0, 1e16, 4e15, np.int64) is [0, 4e15, 8e15].
  EXPECT_THROW(xp::arange(0.0, 1e16, 4e15, DType::int32), xp::TypeError);
  EXPECT_THROW(xp::arange(-1.5, 3, 1, DType::uint8), xp::TypeError);
  EXPECT_EQ(xp::arange(0.0, 1e16, 4e15, DType::int64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 4000000000000000, 8000000000000000}));
}

TEST_F(Semantics, ArangeChecksOnlyTheElementsItStores) {
  // np.arange(-3, -4, 3, np.uint8): array([], dtype=uint8) (nothing stored, nothing checked).
  Array r = xp::arange(-3, -4, 3, DType::uint8);
  EXPECT_EQ(r.dtype(), DType::uint8);
  EXPECT_EQ(r.size(), 0);
  // np.arange(300, 200, 10, np.uint8): empty too; np.arange(-3, 4, 3, np.uint8) raises.
  EXPECT_EQ(xp::arange(300, 200, 10, DType::uint8).size(), 0);
  EXPECT_THROW(xp::arange(-3, 4, 3, DType::uint8), xp::TypeError);
  // np.arange(250, 251, 10, np.uint8): [250]; np.arange(250, 270, 10, np.uint8) raises (260 is
  // stored); np.arange(0, 400, 100, np.uint8): [0, 100, 200, 44] (computed, wrapping).
  EXPECT_EQ(xp::arange(250, 251, 10, DType::uint8).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{250}));
  EXPECT_THROW(xp::arange(250, 270, 10, DType::uint8), xp::TypeError);
  EXPECT_EQ(xp::arange(0, 400, 100, DType::uint8).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{0, 100, 200, 44}));
  // Empty float ranges into an integer dtype: np.arange(-3.0, -4.0, 1.0, np.uint8) is empty.
  EXPECT_EQ(xp::arange(-3.0, -4.0, 1.0, DType::uint8).size(), 0);
}

// ---- fma ----

TEST_F(Semantics, Float16FmaRoundsOnce) {
  // 7272 * -3 + 2^-14 = -21815.99993896484375, rounded once to float16: -21808 (float16's ulp
  // there is 16); through float32 first (-21816, a tie) it would be -21824.
  const Array r = xp::fma(f16({7272, 7272}), f16({-3, 3}), f16({0x1p-14, -0x1p-14}));
  EXPECT_EQ(r.dtype(), DType::float16);
  EXPECT_EQ(values(r), (std::vector<double>{-21808, 21808}));
  // Exact sums, zeros' signs (IEEE: -0 only when both the product and c are -0), NaN and infinity.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> z =
      values(xp::fma(f16({-0.0, -0.0, 2, inf, 65504}), f16({1, 1, 3, 0, 2}), f16({-0.0, 0.0, 0.5, 1, -65504})));
  EXPECT_TRUE(z[0] == 0 && std::signbit(z[0]));
  EXPECT_TRUE(z[1] == 0 && !std::signbit(z[1]));
  EXPECT_EQ(z[2], 6.5);
  EXPECT_TRUE(std::isnan(z[3]));
  EXPECT_EQ(z[4], 65504);
}

TEST_F(Semantics, Bfloat16FmaRoundsOnce) {
  // a = b = 2^-35 (1 + 2^-4): a * b = 2^-70 (1 + 2^-3 + 2^-8), halfway between two bfloat16
  // values. c = +-2^-133 (the smallest bfloat16) decides the side; c = 0 ties to even. The exact
  // answers (Fraction arithmetic rounded by ml_dtypes): 0x1C91, 0x1C90, 0x1C90.
  const double ab = 0x1p-35 * (1 + 0x1p-4);
  Array r = xp::fma(bf16({ab, ab, ab}), bf16({ab, ab, ab}), bf16({0x1p-133, -0x1p-133, 0.0}));
  EXPECT_EQ(r.dtype(), DType::bfloat16);
  EXPECT_EQ(bits16(r), (std::vector<std::uint16_t>{0x1C91, 0x1C90, 0x1C90}));
  // At the overflow threshold: 7 * 2^60 * 73 * 2^59 = 2^128 - 2^119, halfway between the largest
  // bfloat16 (0x7F7F) and 2^128: -2^-133 gives 0x7F7F, +2^-133 and 0 give inf (0x7F80); negated too.
  r = xp::fma(bf16({7 * 0x1p60, 7 * 0x1p60, 7 * 0x1p60, -7 * 0x1p60}),
              bf16({73 * 0x1p59, 73 * 0x1p59, 73 * 0x1p59, 73 * 0x1p59}), bf16({-0x1p-133, 0x1p-133, 0.0, 0x1p-133}));
  EXPECT_EQ(bits16(r), (std::vector<std::uint16_t>{0x7F7F, 0x7F80, 0x7F80, 0xFF7F}));
  // Subnormal halfway cases: 2^-67 * 2^-67 = 2^-134, halfway between 0 and 2^-133 (to even: +0, or
  // -0 when negative); with c = 2^-133, 3 * 2^-134 is halfway to 2^-132 (0x0002).
  r = xp::fma(bf16({0x1p-67, 0x1p-67, -0x1p-67}), bf16({0x1p-67, 0x1p-67, 0x1p-67}), bf16({0.0, 0x1p-133, 0.0}));
  EXPECT_EQ(bits16(r), (std::vector<std::uint16_t>{0x0000, 0x0002, 0x8000}));
  // Ordinary values: 1.5 * 2.5 + 0.25 = 4.
  EXPECT_EQ(values(xp::fma(bf16({1.5}), bf16({2.5}), bf16({0.25}))), (std::vector<double>{4.0}));
  // NaN and infinities keep their class.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> s = values(xp::fma(bf16({inf, inf, 1}), bf16({1, 0, 1}), bf16({1, 1, -inf})));
  EXPECT_EQ(s[0], inf);
  EXPECT_TRUE(std::isnan(s[1]));
  EXPECT_EQ(s[2], -inf);
}

TEST_F(Semantics, FmaOfIntegersIsFloat64) {
  // NumPy has no fma; xp's fma is a float operation: integer (and bool) operands are converted to
  // float64, as true division does, and the result rounded once (docs/semantics.md).
  const Array r =
      xp::fma(xp::asarray(std::vector<std::int32_t>{3, 1 << 30}), xp::asarray(std::vector<std::int32_t>{5, 1 << 30}),
              xp::asarray(std::vector<std::int32_t>{1, 1}));
  EXPECT_EQ(r.dtype(), DType::float64);
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{16, 0x1p60 + 1}));
}

// ---- matmul, vecdot ----

TEST_F(Semantics, Bfloat16MatmulAndVecdotStayBfloat16) {
  // NumPy with ml_dtypes gives float32 for bfloat16 matmul and vecdot (np.dot gives bfloat16); xp
  // keeps the promoted dtype, as the Array API, np.dot, JAX and PyTorch do (docs/semantics.md):
  // computed in float32, rounded once. [1, 2] @ [3, 4] = 11; (1 + 2^-7)^2 + 1 = 2 + 2^-6 + 2^-14
  // in float32, rounded once to bfloat16: 2 + 2^-6 (0x4001).
  const Array m = xp::matmul(xp::reshape(bf16({1, 2}), {1, 2}), xp::reshape(bf16({3, 4}), {2, 1}));
  EXPECT_EQ(m.dtype(), DType::bfloat16);
  EXPECT_EQ(values(m), (std::vector<double>{11}));
  const Array v = xp::vecdot(bf16({1 + 0x1p-7, 1}), bf16({1 + 0x1p-7, 1}));
  EXPECT_EQ(v.dtype(), DType::bfloat16);
  EXPECT_EQ(bits16(v), (std::vector<std::uint16_t>{0x4001}));
}

}  // namespace
