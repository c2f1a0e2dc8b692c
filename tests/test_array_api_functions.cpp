// The Array API 2024.12 functions added to the core: acosh, asinh, atanh, copysign, hypot,
// logaddexp, nextafter, reciprocal, signbit; meshgrid, tril, triu; can_cast, finfo, iinfo, isdtype,
// n-ary result_type; broadcast_arrays, moveaxis, repeat, roll, tile, unstack; cumulative_prod, diff;
// tensordot. On the CPU against hand-made values (the elementwise ones also run against NumPy in
// test_array_numpy), error paths, empty, 0-d and non-contiguous arrays, several dtypes.
// ArrayApiFunctionsGpu.*: the same functions on cuda:0 against the CPU, bit for bit where exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "array_bits.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const Device kCpu = Device::cpu();

Array arr(const std::vector<double>& v, const Shape& shape, DType t = DType::float64) {
  return asarray(v, shape, kCpu).astype(t);
}
Array arr(const std::vector<double>& v, DType t = DType::float64) {
  return arr(v, Shape{static_cast<std::int64_t>(v.size())}, t);
}
Array iota(const Shape& shape, DType t = DType::int64) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return arange(0, n, 1, DType::int64, kCpu).reshape(shape).astype(t);
}
std::vector<double> vals(const Array& a) {
  return a.to_vector<double>();
}
Shape shape_of(const Array& a) {
  return Shape(a.shape().begin(), a.shape().end());
}
std::uint16_t bits16(const Array& a, std::size_t i) {
  const Array h = a.to_device(kCpu).eval();
  std::uint16_t b;
  std::memcpy(&b, static_cast<const std::byte*>(h.data()) + 2 * i, 2);
  return b;
}
std::uint64_t bits64(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}
double ulps(double got, double want, DType t) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (got == want) return 0;
  const double u = t == DType::float32
                       ? std::abs(std::nextafter(static_cast<float>(want), INFINITY) - static_cast<float>(want))
                       : std::abs(std::nextafter(want, INFINITY) - want);
  return std::abs(got - want) / u;
}
template <class F>
std::string what_throws(F&& f) {
  try {
    f();
  } catch (const TypeError& e) {
    return std::string("TypeError: ") + e.what();
  } catch (const IndexError& e) {
    return std::string("IndexError: ") + e.what();
  } catch (const ValueError& e) {
    return std::string("ValueError: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
  return "nothing";
}
bool starts(const std::string& s, const std::string& p) {
  return s.rfind(p, 0) == 0;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

}  // namespace

// ---- elementwise ----

TEST(ArrayApiFunctions, SignbitReadsTheSignBitOfEveryFloat) {
  const std::vector<double> v = {-0.0, 0.0, -kNan, kNan, -kInf, kInf, 1.0, -1.0, -1e-310};
  for (DType t : {DType::float16, DType::bfloat16, DType::float32, DType::float64}) {
    const Array s = signbit(arr(v, t));
    EXPECT_EQ(s.dtype(), DType::bool_);
    // -1e-310 is -0.0 in the narrower dtypes: its sign bit stays set.
    EXPECT_EQ(s.to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0, 1, 0, 1, 0, 0, 1, 1})) << name(t);
  }
  EXPECT_EQ(signbit(arr({-3, 0, 5}, DType::int8)).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0, 0}));
  EXPECT_EQ(signbit(arr({200, 0}, DType::uint8)).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{0, 0}));
  EXPECT_EQ(signbit(arr({1, 0}, DType::bool_)).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{0, 0}));
  // 0-d, empty, and a flipped view.
  EXPECT_TRUE(signbit(full({}, -0.0, DType::float32, kCpu)).item<bool>());
  EXPECT_EQ(signbit(zeros({0, 3}, DType::float32, kCpu)).shape(1), 3);
  EXPECT_EQ(signbit(flip(arr({-1, 2, -3}))).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0, 1}));
}

TEST(ArrayApiFunctions, CopysignIsExactOnBits) {
  const Array x = arr({1.5, -2.0, 0.0, kNan, kInf, 3.0});
  const Array y = arr({-0.0, 0.0, -1.0, -1.0, -5.0, kNan});
  const Array r = copysign(x, y);
  EXPECT_EQ(r.dtype(), DType::float64);
  const std::vector<double> got = vals(r);
  EXPECT_EQ(bits64(got[0]), bits64(-1.5));
  EXPECT_EQ(bits64(got[1]), bits64(2.0));
  EXPECT_EQ(bits64(got[2]), bits64(-0.0));
  EXPECT_TRUE(std::isnan(got[3]) && std::signbit(got[3]));
  EXPECT_EQ(got[4], -kInf);
  EXPECT_EQ(got[5], 3.0);  // a NaN's sign bit: positive here
  // Integers promote as sqrt does (int8 -> float16), weak scalars take the array's dtype.
  EXPECT_EQ(copysign(arr({3}, DType::int8), arr({-1}, DType::int8)).dtype(), DType::float16);
  EXPECT_EQ(copysign(arr({3}, DType::float32), -1.0).dtype(), DType::float32);
  EXPECT_EQ(vals(copysign(arr({3}, DType::float32), -1.0)), (std::vector<double>{-3.0}));
}

TEST(ArrayApiFunctions, NextafterStepsInTheResultDtype) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  const std::vector<double> r =
      vals(nextafter(arr({1.0, 0.0, -0.0, 1.0, kInf, 1.0, 0.0}), arr({2.0, -1.0, 1.0, 1.0, 0.0, kNan, -0.0})));
  EXPECT_EQ(r[0], std::nextafter(1.0, 2.0));
  EXPECT_EQ(r[1], -tiny);
  EXPECT_EQ(r[2], tiny);
  EXPECT_EQ(r[3], 1.0);
  EXPECT_EQ(r[4], std::numeric_limits<double>::max());
  EXPECT_TRUE(std::isnan(r[5]));
  EXPECT_EQ(bits64(r[6]), bits64(-0.0));  // equal values: y, with its sign
  const float f = nextafter(arr({1.0}, DType::float32), 0.0).item<float>();
  EXPECT_EQ(f, std::nextafter(1.0f, 0.0f));
  // float16 and bfloat16 step by their own ulp, not float32's.
  const Array h =
      nextafter(arr({1.0, 65504.0, 0.0, -0.0, 1.0}, DType::float16), arr({2.0, kInf, -1.0, 1.0, kNan}, DType::float16));
  EXPECT_EQ(h.dtype(), DType::float16);
  EXPECT_EQ(bits16(h, 0), 0x3C01);
  EXPECT_EQ(bits16(h, 1), 0x7C00);
  EXPECT_EQ(bits16(h, 2), 0x8001);
  EXPECT_EQ(bits16(h, 3), 0x0001);
  EXPECT_TRUE(std::isnan(h.to_vector<double>()[4]));
  const Array b = nextafter(arr({1.0, 1.0}, DType::bfloat16), arr({0.0, 2.0}, DType::bfloat16));
  EXPECT_EQ(bits16(b, 0), 0x3F7F);
  EXPECT_EQ(bits16(b, 1), 0x3F81);
  // int8 computes in float16 (NumPy's loop).
  EXPECT_EQ(nextafter(arr({1}, DType::int8), arr({2}, DType::int8)).dtype(), DType::float16);
}

TEST(ArrayApiFunctions, ReciprocalIsOneOverX) {
  const std::vector<double> r = vals(reciprocal(arr({2.0, 0.0, -0.0, kInf, -4.0, 3.0}, DType::float32)));
  EXPECT_EQ(r[0], 0.5);
  EXPECT_EQ(r[1], kInf);
  EXPECT_EQ(r[2], -kInf);
  EXPECT_EQ(r[3], 0.0);
  EXPECT_EQ(r[4], -0.25);
  EXPECT_EQ(r[5], static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(reciprocal(arr({2}, DType::int16)).dtype(), DType::float32);
  EXPECT_EQ(reciprocal(arr({2}, DType::bool_)).dtype(), DType::float16);
  EXPECT_EQ(reciprocal(arr({4}, DType::int64)).item<double>(), 0.25);
  EXPECT_EQ(reciprocal(arr({3}, DType::float16)).item<double>(),
            static_cast<double>(static_cast<float>(float16(1.0f / 3.0f))));
}

TEST(ArrayApiFunctions, HypotAndTheInverseHyperbolicFunctions) {
  const std::vector<double> h = vals(hypot(arr({3.0, kInf, kNan, -5.0, 1e300}), arr({-4.0, kNan, kInf, 12.0, 1e300})));
  EXPECT_EQ(h[0], 5.0);
  EXPECT_EQ(h[1], kInf);  // C99 Annex F: an infinity wins over NaN
  EXPECT_EQ(h[2], kInf);
  EXPECT_EQ(h[3], 13.0);
  EXPECT_LE(ulps(h[4], 1e300 * std::sqrt(2.0), DType::float64), 2);  // no overflow on the way
  const std::vector<double> x = {1.0, 1.5, 10.0, 1e10};
  const std::vector<double> ac = vals(acosh(arr(x)));
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_LE(ulps(ac[i], std::acosh(x[i]), DType::float64), 4) << x[i];
  EXPECT_TRUE(std::isnan(vals(acosh(arr({0.5})))[0]));
  const std::vector<double> y = {-0.0, 0.25, -3.0, 1e-300, 1e300};
  const std::vector<double> as = vals(asinh(arr(y)));
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_LE(ulps(as[i], std::asinh(y[i]), DType::float64), 4) << y[i];
  EXPECT_TRUE(std::signbit(as[0]));
  const std::vector<double> at = vals(atanh(arr({0.5, -0.999, 1.0, -1.0, 2.0})));
  EXPECT_LE(ulps(at[0], 0.54930614433405484570, DType::float64), 4);
  EXPECT_LE(ulps(at[1], std::atanh(-0.999), DType::float64), 4);
  EXPECT_EQ(at[2], kInf);
  EXPECT_EQ(at[3], -kInf);
  EXPECT_TRUE(std::isnan(at[4]));
  const std::vector<double> f32 = vals(atanh(arr({0.5}, DType::float32)));
  EXPECT_LE(ulps(f32[0], static_cast<float>(std::atanh(0.5)), DType::float32), 4);
  EXPECT_EQ(acosh(arr({2}, DType::uint8)).dtype(), DType::float16);
  EXPECT_EQ(hypot(arr({3}, DType::int32), 4).dtype(), DType::float64);
}

TEST(ArrayApiFunctions, LogaddexpNeverOverflows) {
  const double ln2 = 0.693147180559945309417;
  const std::vector<double> r = vals(logaddexp(arr({0.0, -kInf, kInf, 1000.0, kNan, 1.0, -kInf, 800.0}),
                                               arr({0.0, -kInf, 1.0, 1000.0, 1.0, 2.0, 3.0, -800.0})));
  EXPECT_EQ(r[0], ln2);
  EXPECT_EQ(r[1], -kInf);
  EXPECT_EQ(r[2], kInf);
  EXPECT_EQ(r[3], 1000.0 + ln2);
  EXPECT_TRUE(std::isnan(r[4]));
  EXPECT_LE(std::abs(r[5] - std::log(std::exp(1.0) + std::exp(2.0))), 4e-15);
  EXPECT_EQ(r[6], 3.0);
  EXPECT_EQ(r[7], 800.0);
  // float16 is computed in float32 and rounded once: within 1 ulp of float16.
  const double h = logaddexp(arr({2.0}, DType::float16), arr({3.0}, DType::float16)).item<double>();
  EXPECT_LE(std::abs(h - std::log(std::exp(2.0) + std::exp(3.0))), 0x1p-8);
  EXPECT_EQ(logaddexp(arr({1}, DType::int16), arr({1}, DType::int16)).dtype(), DType::float32);
}

TEST(ArrayApiFunctions, NewElementwiseFunctionsFuseAndWriteOut) {
  // Lazy and fused, with out= and broadcasting, as every elementwise function.
  const Array x = arr({1.0, -2.0, 3.0}, {3, 1}), y = arr({-1.0, 1.0}, {1, 2});
  const Array r = copysign(x, y) + reciprocal(hypot(x, y));
  EXPECT_TRUE(r.is_lazy());
  EXPECT_EQ(shape_of(r), (Shape{3, 2}));
  Array out = zeros({3, 2}, DType::float64, kCpu);
  copysign(x, y, out);
  EXPECT_EQ(vals(out), (std::vector<double>{-1, 1, -2, 2, -3, 3}));
  EXPECT_TRUE(starts(what_throws([&] { copysign(x, y, zeros({2}, DType::float64, kCpu)); }), "ValueError"));
  EXPECT_TRUE(starts(what_throws([&] { signbit(x, zeros({3, 1}, DType::float64, kCpu)); }), "nothing"));
  EXPECT_TRUE(starts(what_throws([&] { nextafter(x, y, zeros({3, 2}, DType::int32, kCpu)); }), "TypeError"));
}

// ---- creation ----

TEST(ArrayApiFunctions, MeshgridXyAndIj) {
  const Array a = arr({1, 2, 3}, DType::int32), b = arr({10, 20}, DType::int32);
  const std::vector<Array> xy = meshgrid({a, b});
  ASSERT_EQ(xy.size(), 2u);
  EXPECT_EQ(shape_of(xy[0]), (Shape{2, 3}));
  EXPECT_EQ(vals(xy[0]), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(vals(xy[1]), (std::vector<double>{10, 10, 10, 20, 20, 20}));
  EXPECT_EQ(xy[0].dtype(), DType::int32);
  const std::vector<Array> ij = meshgrid({a, b, arr({7, 8})}, "ij");
  EXPECT_EQ(shape_of(ij[2]), (Shape{3, 2, 2}));
  EXPECT_EQ(vals(ij[0]), (std::vector<double>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  EXPECT_EQ(vals(ij[2]), (std::vector<double>{7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8}));
  EXPECT_EQ(ij[2].dtype(), DType::float64);  // each keeps its own dtype, as NumPy
  // Outputs are arrays of their own: writing one leaves the others and the inputs alone.
  Array w = xy[0];
  w += 100;
  EXPECT_EQ(vals(a), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(vals(meshgrid({a}).at(0)), (std::vector<double>{1, 2, 3}));
  EXPECT_TRUE(meshgrid({}).empty());
  EXPECT_EQ(shape_of(meshgrid({a, zeros({0}, DType::int32, kCpu)})[0]), (Shape{0, 3}));
  EXPECT_TRUE(starts(what_throws([&] { meshgrid({a, b}, "xyz"); }), "ValueError: meshgrid: indexing"));
}

TEST(ArrayApiFunctions, TrilAndTriuKeepTheirTriangles) {
  const Array x = iota({3, 4}, DType::int32) + 1;
  EXPECT_EQ(vals(tril(x)), (std::vector<double>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(vals(triu(x)), (std::vector<double>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  EXPECT_EQ(vals(tril(x, 1)), (std::vector<double>{1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12}));
  EXPECT_EQ(vals(triu(x, -1)), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}));
  EXPECT_EQ(vals(tril(x, INT64_MAX)), vals(x));
  EXPECT_EQ(vals(triu(x, INT64_MAX)), std::vector<double>(12, 0.0));
  EXPECT_EQ(vals(tril(x, INT64_MIN)), std::vector<double>(12, 0.0));
  EXPECT_EQ(tril(x).dtype(), DType::int32);
  // Batched over the leading axes, on a transposed (non-contiguous) view, bool and float16.
  const Array b = iota({2, 2, 2}, DType::float16);
  EXPECT_EQ(vals(triu(b)), (std::vector<double>{0, 1, 0, 3, 4, 5, 0, 7}));
  EXPECT_EQ(vals(tril(x.T())), (std::vector<double>{1, 0, 0, 2, 6, 0, 3, 7, 11, 4, 8, 12}));
  const Array t = ones({2, 2}, DType::bool_, kCpu);
  EXPECT_EQ(tril(t).dtype(), DType::bool_);
  EXPECT_EQ(tril(t).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(shape_of(tril(zeros({0, 3}, DType::float32, kCpu))), (Shape{0, 3}));
  EXPECT_TRUE(starts(what_throws([&] { tril(arr({1, 2})); }), "ValueError: tril"));
  EXPECT_TRUE(starts(what_throws([&] { triu(full({}, 1.0, std::nullopt, kCpu)); }), "ValueError: triu"));
}

// ---- data types ----

TEST(ArrayApiFunctions, CanCastFollowsPromotion) {
  EXPECT_TRUE(can_cast(DType::int8, DType::int16));
  EXPECT_FALSE(can_cast(DType::int16, DType::int8));
  EXPECT_FALSE(can_cast(DType::uint8, DType::int8));
  EXPECT_TRUE(can_cast(DType::uint8, DType::int16));
  EXPECT_TRUE(can_cast(DType::bool_, DType::float16));
  EXPECT_FALSE(can_cast(DType::float32, DType::int64));
  EXPECT_FALSE(can_cast(DType::float16, DType::bfloat16));
  EXPECT_TRUE(can_cast(DType::float16, DType::float32));
  EXPECT_FALSE(can_cast(DType::int64, DType::uint64));
  EXPECT_TRUE(can_cast(arr({1}, DType::int32), DType::float64));
  EXPECT_FALSE(can_cast(arr({1}, DType::int32), DType::float32));
}

TEST(ArrayApiFunctions, FinfoAndIinfo) {
  const FInfo f = finfo(DType::float32);
  EXPECT_EQ(f.bits, 32);
  EXPECT_EQ(f.eps, std::numeric_limits<float>::epsilon());
  EXPECT_EQ(f.max, std::numeric_limits<float>::max());
  EXPECT_EQ(f.min, -static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(f.smallest_normal, std::numeric_limits<float>::min());
  EXPECT_EQ(finfo(DType::float64).max, std::numeric_limits<double>::max());
  EXPECT_EQ(finfo(DType::float16).max, 65504.0);
  EXPECT_EQ(finfo(DType::float16).eps, 0x1p-10);
  EXPECT_EQ(finfo(DType::bfloat16).max, static_cast<double>(bfloat16::from_bits(0x7F7F).operator float()));
  EXPECT_EQ(finfo(DType::bfloat16).smallest_normal, 0x1p-126);
  EXPECT_TRUE(starts(what_throws([] { finfo(DType::int32); }), "ValueError: finfo: int32"));
  const IInfo u = iinfo(DType::uint64);
  EXPECT_EQ(u.bits, 64);
  EXPECT_EQ(u.max, UINT64_MAX);
  EXPECT_EQ(u.min, 0);
  EXPECT_EQ(iinfo(DType::int8).min, -128);
  EXPECT_EQ(iinfo(DType::int8).max, 127u);
  EXPECT_EQ(iinfo(DType::int64).min, INT64_MIN);
  EXPECT_EQ(iinfo(DType::uint16).max, 65535u);
  EXPECT_TRUE(starts(what_throws([] { iinfo(DType::float32); }), "ValueError: iinfo: float32"));
  EXPECT_TRUE(starts(what_throws([] { iinfo(DType::bool_); }), "ValueError"));
}

TEST(ArrayApiFunctions, IsdtypeKinds) {
  EXPECT_TRUE(isdtype(DType::bool_, "bool"));
  EXPECT_FALSE(isdtype(DType::bool_, "numeric"));
  EXPECT_FALSE(isdtype(DType::bool_, "integral"));
  EXPECT_TRUE(isdtype(DType::int16, "signed integer"));
  EXPECT_FALSE(isdtype(DType::uint16, "signed integer"));
  EXPECT_TRUE(isdtype(DType::uint16, "unsigned integer"));
  EXPECT_TRUE(isdtype(DType::uint64, "integral"));
  EXPECT_TRUE(isdtype(DType::bfloat16, "real floating"));
  EXPECT_FALSE(isdtype(DType::float64, "complex floating"));
  EXPECT_TRUE(isdtype(DType::float64, "numeric"));
  EXPECT_TRUE(isdtype(DType::int8, {"bool", "signed integer"}));
  EXPECT_FALSE(isdtype(DType::float32, {"bool", "integral"}));
  EXPECT_TRUE(starts(what_throws([] { isdtype(DType::int8, "integer"); }), "ValueError: isdtype: unknown kind"));
  EXPECT_TRUE(starts(what_throws([] { isdtype(DType::int8, {"integral", "nope"}); }), "ValueError"));
}

TEST(ArrayApiFunctions, ResultTypeOfManyPromotesAtOnce) {
  // All at once, as np.result_type: int8, uint8, float16 is float16 (pairwise it would be float32).
  EXPECT_EQ(result_type({DType::int8, DType::uint8, DType::float16}), DType::float16);
  EXPECT_EQ(result_type({DType::uint16, DType::int16, DType::float16}), DType::float32);
  const Array a = arr({1}, DType::uint8);
  EXPECT_EQ(result_type({a, DType::int8}), DType::int16);
  EXPECT_EQ(result_type({a, 1}), DType::uint8);  // a weak integer
  EXPECT_EQ(result_type({a, 1.5}), DType::float64);
  EXPECT_EQ(result_type({arr({1}, DType::float32), 1.5, true}), DType::float32);
  EXPECT_EQ(result_type({DType::bool_, 1}), DType::int64);
  EXPECT_EQ(result_type({DType::float32}), DType::float32);
  EXPECT_TRUE(starts(what_throws([] { result_type(std::vector<TypeArg>{}); }), "ValueError: result_type"));
  EXPECT_TRUE(starts(what_throws([] { result_type({1, 2.0}); }), "TypeError: result_type"));
}

// ---- manipulation ----

TEST(ArrayApiFunctions, BroadcastArrays) {
  const std::vector<Array> r =
      broadcast_arrays({arr({1, 2, 3}), arr({5, 6}, {2, 1}), full({}, 9.0, std::nullopt, kCpu)});
  ASSERT_EQ(r.size(), 3u);
  for (const Array& a : r) EXPECT_EQ(shape_of(a), (Shape{2, 3}));
  EXPECT_EQ(vals(r[1]), (std::vector<double>{5, 5, 5, 6, 6, 6}));
  EXPECT_EQ(vals(r[2]), std::vector<double>(6, 9.0));
  EXPECT_TRUE(broadcast_arrays({}).empty());
  EXPECT_EQ(shape_of(broadcast_arrays({zeros({0, 1}, DType::float64, kCpu), arr({1, 2})})[1]), (Shape{0, 2}));
  EXPECT_TRUE(starts(what_throws([&] { broadcast_arrays({arr({1, 2, 3}), arr({1, 2})}); }), "ValueError"));
}

TEST(ArrayApiFunctions, MoveaxisPermutes) {
  const Array x = iota({2, 3, 4});
  EXPECT_EQ(shape_of(moveaxis(x, 0, -1)), (Shape{3, 4, 2}));
  EXPECT_EQ(vals(moveaxis(x, 0, -1)), vals(permute_dims(x, {1, 2, 0})));
  EXPECT_EQ(shape_of(moveaxis(x, -1, 0)), (Shape{4, 2, 3}));
  EXPECT_EQ(vals(moveaxis(x, {0, 1}, {-1, -2})), vals(permute_dims(x, {2, 1, 0})));
  EXPECT_EQ(vals(moveaxis(x, {2, 0}, {0, 2})), vals(permute_dims(x, {2, 1, 0})));
  EXPECT_EQ(shape_of(moveaxis(x, std::vector<int>{}, std::vector<int>{})), (Shape{2, 3, 4}));
  EXPECT_TRUE(starts(what_throws([&] { moveaxis(x, {0, 0}, {1, 2}); }), "ValueError: moveaxis: repeated axis"));
  EXPECT_TRUE(starts(what_throws([&] { moveaxis(x, {0, 1}, {1}); }), "ValueError: moveaxis: source and destination"));
  EXPECT_TRUE(starts(what_throws([&] { moveaxis(x, 3, 0); }), "ValueError: moveaxis: axis 3"));
}

TEST(ArrayApiFunctions, RepeatByCountOrCounts) {
  const Array x = arr({1, 2, 3}, DType::int16);
  EXPECT_EQ(vals(repeat(x, 2)), (std::vector<double>{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(repeat(x, 2).dtype(), DType::int16);
  EXPECT_EQ(repeat(x, 0).size(), 0);
  const Array m = iota({2, 2});
  EXPECT_EQ(vals(repeat(m, 2)), (std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3}));  // flattened
  EXPECT_EQ(vals(repeat(m, 2, 0)), (std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(vals(repeat(m, 2, -1)), (std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(shape_of(repeat(m, 3, 1)), (Shape{2, 6}));
  EXPECT_EQ(vals(repeat(m.T(), 2, 1)), (std::vector<double>{0, 0, 2, 2, 1, 1, 3, 3}));  // a transposed view
  EXPECT_EQ(vals(repeat(x, arr({1, 0, 2}, DType::int64))), (std::vector<double>{1, 3, 3}));
  EXPECT_EQ(vals(repeat(m, arr({2}, DType::uint8), 0)), (std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(vals(repeat(m, arr({0, 3}, DType::int32), 1)), (std::vector<double>{1, 1, 1, 3, 3, 3}));
  EXPECT_EQ(shape_of(repeat(full({}, 5.0, std::nullopt, kCpu), 3)), (Shape{3}));
  // A 0-d x along axis 0 or -1: one element repeated, as NumPy (fuzzing found it refused).
  EXPECT_EQ(vals(repeat(full({}, 5.0, std::nullopt, kCpu), 2, 0)), (std::vector<double>{5, 5}));
  EXPECT_EQ(vals(repeat(full({}, 5.0, std::nullopt, kCpu), arr({3}, DType::int64), -1)),
            (std::vector<double>{5, 5, 5}));
  EXPECT_TRUE(starts(what_throws([&] { repeat(full({}, 5.0, std::nullopt, kCpu), 2, 1); }), "ValueError: repeat"));
  EXPECT_TRUE(starts(what_throws([&] { repeat(x, -1); }), "ValueError: repeat: repeats may not be negative"));
  EXPECT_TRUE(starts(what_throws([&] { repeat(x, arr({1, -1, 1}, DType::int8)); }), "ValueError: repeat"));
  EXPECT_TRUE(starts(what_throws([&] { repeat(x, arr({1, 2}, DType::int8)); }), "ValueError: repeat: repeats has 2"));
  EXPECT_TRUE(starts(what_throws([&] { repeat(x, arr({1, 2, 3}, DType::float32)); }), "TypeError: repeat"));
  EXPECT_TRUE(starts(what_throws([&] { repeat(x, 2, 1); }), "ValueError: repeat: axis 1"));
}

TEST(ArrayApiFunctions, RollWrapsAround) {
  const Array x = arr({0, 1, 2, 3, 4});
  EXPECT_EQ(vals(roll(x, 2)), (std::vector<double>{3, 4, 0, 1, 2}));
  EXPECT_EQ(vals(roll(x, -1)), (std::vector<double>{1, 2, 3, 4, 0}));
  EXPECT_EQ(vals(roll(x, 12)), (std::vector<double>{3, 4, 0, 1, 2}));
  EXPECT_EQ(vals(roll(x, INT64_MIN)), vals(roll(x, INT64_MIN % 5)));
  const Array m = iota({2, 3});
  EXPECT_EQ(vals(roll(m, 1)), (std::vector<double>{5, 0, 1, 2, 3, 4}));  // flattened, shape kept
  EXPECT_EQ(shape_of(roll(m, 1)), (Shape{2, 3}));
  EXPECT_EQ(vals(roll(m, 1, 1)), (std::vector<double>{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(vals(roll(m, {1, 1}, {0, 1})), (std::vector<double>{5, 3, 4, 2, 0, 1}));
  EXPECT_EQ(vals(roll(m, {1, 1}, {1, 1})), (std::vector<double>{1, 2, 0, 4, 5, 3}));  // shifts on one axis add
  EXPECT_EQ(vals(roll(m, {1}, {0, 1})), (std::vector<double>{5, 3, 4, 2, 0, 1}));     // one shift, two axes
  EXPECT_EQ(vals(roll(m.T(), 1, 0)), (std::vector<double>{2, 5, 0, 3, 1, 4}));
  EXPECT_EQ(shape_of(roll(zeros({0, 2}, DType::float64, kCpu), 3, 0)), (Shape{0, 2}));
  EXPECT_EQ(roll(full({}, 7.0, std::nullopt, kCpu), 3).item<double>(), 7.0);
  EXPECT_TRUE(starts(what_throws([&] { roll(m, {1, 2, 3}, {0, 1}); }), "ValueError: roll: shift and axis"));
  EXPECT_TRUE(starts(what_throws([&] { roll(m, 1, 2); }), "ValueError: roll: axis 2"));
}

TEST(ArrayApiFunctions, TileRepeatsTheWhole) {
  const Array x = arr({1, 2}, DType::uint8);
  EXPECT_EQ(vals(tile(x, {3})), (std::vector<double>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(shape_of(tile(x, {2, 2})), (Shape{2, 4}));
  EXPECT_EQ(vals(tile(x, {2, 2})), (std::vector<double>{1, 2, 1, 2, 1, 2, 1, 2}));
  const Array m = iota({2, 2});
  EXPECT_EQ(vals(tile(m, {2})), (std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3}));  // fewer reps than axes
  EXPECT_EQ(vals(tile(m, {2, 1})), (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(shape_of(tile(m, {0, 3})), (Shape{0, 6}));
  EXPECT_EQ(vals(tile(m.T(), {1, 2})), (std::vector<double>{0, 2, 0, 2, 1, 3, 1, 3}));
  EXPECT_EQ(shape_of(tile(full({}, 1.0, std::nullopt, kCpu), {2, 3})), (Shape{2, 3}));
  EXPECT_EQ(tile(x, {2}).dtype(), DType::uint8);
  EXPECT_TRUE(starts(what_throws([&] { tile(x, {2, -1}); }), "ValueError: tile"));
}

TEST(ArrayApiFunctions, TileAndRepeatOfManyDimensions) {
  // 40 axes leave no room to split each in two (tile), 64 none for one more (repeat): other paths,
  // the same answers.
  Shape s40(40, 1);
  s40[0] = 2;
  s40[39] = 3;
  const Array x = iota(s40);
  std::vector<std::int64_t> reps(40, 1);
  reps[0] = 2;
  reps[39] = 2;
  const Array t = tile(x, reps);
  EXPECT_EQ(t.shape(0), 4);
  EXPECT_EQ(t.shape(39), 6);
  EXPECT_EQ(vals(t), (std::vector<double>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  reps[5] = 0;
  EXPECT_EQ(tile(x, reps).size(), 0);
  Shape s64(64, 1);
  s64[63] = 3;
  const Array y = iota(s64);
  EXPECT_EQ(vals(repeat(y, 2, 63)), (std::vector<double>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(repeat(y, 2, 63).ndim(), 64);
  EXPECT_EQ(repeat(y, 0, -1).size(), 0);
  EXPECT_TRUE(starts(what_throws([&] { repeat(y, INT64_MAX, 63); }), "ValueError: repeat"));
  EXPECT_TRUE(starts(what_throws([&] { repeat(arr({1, 2}), INT64_MAX); }), "ValueError"));
  EXPECT_TRUE(starts(what_throws([&] { tile(arr({1, 2}), {INT64_MAX}); }), "ValueError"));
}

TEST(ArrayApiFunctions, RepeatRollAndTileGiveNewArrays) {
  // Even where nothing moves (one repetition, a shift of 0): writing the result leaves x alone.
  const Array x = arr({1, 2, 3});
  for (Array r : {repeat(x, 1), roll(x, 0), roll(x, 3, 0), tile(x, {1}), tile(x, {})}) {
    r += 10;
    EXPECT_EQ(vals(x), (std::vector<double>{1, 2, 3}));
  }
  Array lazy = x * 2;  // a lazy input
  Array t = tile(lazy, {2});
  EXPECT_EQ(vals(t), (std::vector<double>{2, 4, 6, 2, 4, 6}));
}

TEST(ArrayApiFunctions, UnstackGivesViews) {
  const Array m = iota({2, 3});
  const std::vector<Array> rows = unstack(m);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(vals(rows[1]), (std::vector<double>{3, 4, 5}));
  const std::vector<Array> cols = unstack(m, -1);
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_EQ(vals(cols[2]), (std::vector<double>{2, 5}));
  EXPECT_EQ(vals(stack(unstack(m, 1), 1)), vals(m));
  EXPECT_TRUE(unstack(zeros({0, 2}, DType::float64, kCpu)).empty());
  EXPECT_EQ(unstack(arr({4, 5})).at(1).ndim(), 0);
  EXPECT_TRUE(starts(what_throws([] { unstack(full({}, 1.0, std::nullopt, kCpu)); }), "ValueError: unstack"));
}

// ---- statistics ----

TEST(ArrayApiFunctions, CumulativeProdAsCumulativeSum) {
  const Array x = arr({1, 2, 3, 4}, DType::int32);
  EXPECT_EQ(cumulative_prod(x).dtype(), DType::int64);
  EXPECT_EQ(vals(cumulative_prod(x)), (std::vector<double>{1, 2, 6, 24}));
  EXPECT_EQ(vals(cumulative_prod(x, std::nullopt, std::nullopt, true)), (std::vector<double>{1, 1, 2, 6, 24}));
  EXPECT_EQ(cumulative_prod(arr({1}, DType::uint16)).dtype(), DType::uint64);
  // dtype=int8: the running product wraps in it (16 * 16 = 256 -> 0), as NumPy's cumprod(dtype=).
  const Array w = cumulative_prod(arr({16, 16, 3}, DType::int64), std::nullopt, DType::int8);
  EXPECT_EQ(w.dtype(), DType::int8);
  EXPECT_EQ(vals(w), (std::vector<double>{16, 0, 0}));
  EXPECT_EQ(vals(cumulative_prod(arr({-2, 3, 50}, DType::int8))), (std::vector<double>{-2, -6, -300}));
  // Along an axis, on a transposed view and a strided axis.
  const Array m = iota({2, 3}) + 1;
  EXPECT_EQ(vals(cumulative_prod(m, 1)), (std::vector<double>{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(vals(cumulative_prod(m, 0)), (std::vector<double>{1, 2, 3, 4, 10, 18}));
  EXPECT_EQ(vals(cumulative_prod(m.T(), 0, std::nullopt, true)), (std::vector<double>{1, 1, 1, 4, 2, 20, 6, 120}));
  // Floats: float16 keeps a float32 running product, rounded at each output.
  const Array h = cumulative_prod(arr({0.5, 3.0, 1.0 / 3.0, kInf, 0.0}, DType::float16));
  EXPECT_EQ(h.dtype(), DType::float16);
  const std::vector<double> hv = vals(h);
  EXPECT_EQ(hv[0], 0.5);
  EXPECT_EQ(hv[1], 1.5);
  EXPECT_EQ(hv[2], static_cast<double>(static_cast<float>(float16(1.5f * static_cast<float>(float16(1.0f / 3.0f))))));
  EXPECT_EQ(hv[3], kInf);
  EXPECT_TRUE(std::isnan(hv[4]));
  EXPECT_EQ(vals(cumulative_prod(arr({1, 1, 0, 1}, DType::bool_))), (std::vector<double>{1, 1, 0, 0}));
  // 0-d, empty.
  EXPECT_EQ(shape_of(cumulative_prod(full({}, 3.0, std::nullopt, kCpu))), (Shape{1}));
  EXPECT_EQ(vals(cumulative_prod(full({}, 3.0, std::nullopt, kCpu), std::nullopt, std::nullopt, true)),
            (std::vector<double>{1, 3}));
  EXPECT_EQ(vals(cumulative_prod(zeros({0}, DType::float32, kCpu), std::nullopt, std::nullopt, true)),
            (std::vector<double>{1}));
  EXPECT_EQ(shape_of(cumulative_prod(zeros({2, 0}, DType::float32, kCpu), 0)), (Shape{2, 0}));
  EXPECT_TRUE(starts(what_throws([&] { cumulative_prod(m); }), "ValueError: cumulative_prod: axis is required"));
  EXPECT_TRUE(starts(what_throws([&] { cumulative_prod(m, 2); }), "ValueError: cumulative_prod: axis 2"));
}

TEST(ArrayApiFunctions, CumulativeProdOfLongLinesAndManyLines) {
  // Both scan paths: many short lines (neighbouring lines at once) and a line of thousands.
  const Array ones_ish = full({3000}, 1.0, DType::float64, kCpu) + 0x1p-20;
  const std::vector<double> p = vals(cumulative_prod(ones_ish));
  double acc = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    acc = i == 0 ? 1.0 + 0x1p-20 : acc * (1.0 + 0x1p-20);
    ASSERT_EQ(p[i], acc) << i;  // the sequential order, rounded as a loop rounds
  }
  const Array cols = iota({40, 8}, DType::int64) % 3 + 1;
  const std::vector<double> c = vals(cumulative_prod(cols, 0));
  const std::vector<double> in = vals(cols);
  for (int j = 0; j < 8; ++j) {
    double a = 1;
    for (int i = 0; i < 40; ++i) {
      a = std::fmod(a * in[static_cast<std::size_t>(i * 8 + j)], 18446744073709551616.0);
      if (a < 1e15) {
        EXPECT_EQ(c[static_cast<std::size_t>(i * 8 + j)], a) << i << " " << j;
      }
    }
  }
}

TEST(ArrayApiFunctions, DiffAlongAxes) {
  const Array x = arr({1, 4, 9, 16}, DType::int32);
  EXPECT_EQ(vals(diff(x)), (std::vector<double>{3, 5, 7}));
  EXPECT_EQ(diff(x).dtype(), DType::int32);
  EXPECT_EQ(vals(diff(x, -1, 2)), (std::vector<double>{2, 2}));
  EXPECT_EQ(vals(diff(x, 0, 0)), vals(x));
  // n = 0 gives x itself: prepend and append are not joined (NumPy's answer; fuzzing found them joined).
  EXPECT_EQ(vals(diff(x, 0, 0, Operand(9), Operand(9))), vals(x));
  EXPECT_EQ(diff(x, 0, 0, Operand(9.5)).dtype(), x.dtype());
  EXPECT_EQ(diff(x, 0, 7).size(), 0);
  EXPECT_EQ(vals(diff(x, -1, 1, 0)), (std::vector<double>{1, 3, 5, 7}));
  EXPECT_EQ(diff(x, -1, 1, 0).dtype(), DType::int64);  // a number is np.asarray's int64, promoted
  EXPECT_EQ(vals(diff(x, -1, 1, std::nullopt, arr({20, 30}, DType::int32))), (std::vector<double>{3, 5, 7, 4, 10}));
  EXPECT_EQ(vals(diff(arr({3, 1}, DType::uint8))), (std::vector<double>{254}));  // wraps, as NumPy
  EXPECT_EQ(vals(diff(arr({1, 1, 0, 1}, DType::bool_))), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(diff(arr({1, 0}, DType::bool_)).dtype(), DType::bool_);
  const Array m = iota({3, 3}) * iota({3, 3});
  EXPECT_EQ(vals(diff(m, 0)), (std::vector<double>{9, 15, 21, 27, 33, 39}));
  EXPECT_EQ(vals(diff(m.T())), (std::vector<double>{9, 27, 15, 33, 21, 39}));
  EXPECT_EQ(vals(diff(m, 1, 1, full({}, 100, std::nullopt, kCpu))),
            (std::vector<double>{-100, 1, 3, -91, 7, 9, -64, 13, 15}));
  EXPECT_EQ(shape_of(diff(zeros({0}, DType::float32, kCpu))), (Shape{0}));
  EXPECT_TRUE(starts(what_throws([&] { diff(x, 0, -1); }), "ValueError: diff: n"));
  EXPECT_TRUE(starts(what_throws([] { diff(full({}, 1.0, std::nullopt, kCpu)); }), "ValueError: diff"));
  EXPECT_TRUE(starts(what_throws([&] { diff(x, 1); }), "ValueError: diff: axis 1"));
  EXPECT_TRUE(starts(what_throws([&] { diff(m, 0, 1, arr({1, 2})); }), "ValueError"));
}

// ---- tensordot ----

TEST(ArrayApiFunctions, TensordotContractsAxes) {
  const Array a = iota({2, 3, 4}, DType::float64), b = iota({3, 4, 5}, DType::float64);
  const Array c = tensordot(a, b);
  EXPECT_EQ(shape_of(c), (Shape{2, 5}));
  const std::vector<double> av = vals(a), bv = vals(b), cv = vals(c);
  for (int i = 0; i < 2; ++i)
    for (int l = 0; l < 5; ++l) {
      double s = 0;
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k)
          s += av[static_cast<std::size_t>(i * 12 + j * 4 + k)] * bv[static_cast<std::size_t>(j * 20 + k * 5 + l)];
      EXPECT_EQ(cv[static_cast<std::size_t>(i * 5 + l)], s);
    }
  // Pairs of axes, negative ones, and the outer product.
  const Array d = tensordot(a, b, {1, -1}, {0, 1});
  EXPECT_EQ(vals(d), cv);
  const Array e = tensordot(a, iota({4, 2}, DType::float64), {2}, {0});
  EXPECT_EQ(shape_of(e), (Shape{2, 3, 2}));
  EXPECT_EQ(vals(e)[0], 0 * 0 + 1 * 2 + 2 * 4 + 3 * 6);
  EXPECT_EQ(shape_of(tensordot(arr({1, 2}), arr({3, 4, 5}), 0)), (Shape{2, 3}));
  EXPECT_EQ(vals(tensordot(arr({1, 2}), arr({3, 4, 5}), 0)), (std::vector<double>{3, 4, 5, 6, 8, 10}));
  EXPECT_EQ(tensordot(arr({1, 2}, DType::int8), arr({3, 4}, DType::int8), 1).item<std::int64_t>(), 11);
  EXPECT_EQ(tensordot(arr({1, 2}, DType::int8), arr({3, 4}, DType::int16), 1).dtype(), DType::int16);
  EXPECT_EQ(vals(tensordot(zeros({2, 0}, DType::float64, kCpu), zeros({0, 3}, DType::float64, kCpu), 1)),
            std::vector<double>(6, 0.0));
  EXPECT_TRUE(starts(what_throws([&] { tensordot(a, b, 4); }), "ValueError: tensordot: axes = 4"));
  EXPECT_TRUE(starts(what_throws([&] { tensordot(a, b, 3); }), "ValueError: tensordot: shape mismatch"));
  EXPECT_TRUE(starts(what_throws([&] { tensordot(a, b, -1); }), "ValueError: tensordot"));
  EXPECT_TRUE(starts(what_throws([&] { tensordot(a, b, {0}, {0}); }), "ValueError: tensordot: shape mismatch"));
  EXPECT_TRUE(starts(what_throws([&] { tensordot(a, b, {0, 1}, {0}); }), "ValueError: tensordot: the two lists"));
  EXPECT_TRUE(starts(what_throws([&] { tensordot(a, b, {1, 1}, {0, 1}); }), "ValueError: tensordot: repeated"));
}

// ==== on a GPU: the CPU's answers ==================================================================

namespace {
std::vector<std::uint64_t> bits(const Array& a) {
  return xp_test::exact_bits(a);
}
// Special values, then seeded random ones, in dtype t.
Array gpu_inputs(DType t, std::uint64_t seed, std::int64_t n = 2048) {
  random::Generator g(seed);
  std::vector<double> v = g.normal({n}, DType::float64, 0, 4, kCpu).to_vector<double>();
  const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e30, -1e30, 65504, 3e38, kInf, -kInf, kNan, 1e-40};
  for (std::size_t i = 0; i < std::size(special) && i < v.size(); ++i) v[i] = special[i];
  return asarray(v, std::nullopt, kCpu).astype(t);
}
}  // namespace

TEST(ArrayApiFunctionsGpu, ExactElementwiseFunctionsMatchTheCpuBitForBit) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : {DType::bool_, DType::int8, DType::uint16, DType::int32, DType::int64, DType::float16, DType::bfloat16,
                  DType::float32, DType::float64}) {
    const Array a = gpu_inputs(t, 11), b = gpu_inputs(t, 12);
    const Array ga = a.to_device(gpu), gb = b.to_device(gpu);
    EXPECT_EQ(bits(signbit(ga)), bits(signbit(a))) << name(t);
    EXPECT_EQ(bits(copysign(ga, gb)), bits(copysign(a, b))) << name(t);
    EXPECT_EQ(bits(nextafter(ga, gb)), bits(nextafter(a, b))) << name(t);
    EXPECT_EQ(bits(reciprocal(ga)), bits(reciprocal(a))) << name(t);
    // The signs of NaNs too, which exact_bits folds: signbit of the results.
    EXPECT_EQ(bits(signbit(copysign(ga, gb))), bits(signbit(copysign(a, b)))) << name(t);
  }
}

TEST(ArrayApiFunctionsGpu, TranscendentalFunctionsWithinBothBounds) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : {DType::float16, DType::float32, DType::float64}) {
    const Array a = gpu_inputs(t, 21), b = gpu_inputs(t, 22);
    const Array ga = a.to_device(gpu), gb = b.to_device(gpu);
    const Array ina = xp::abs(a) + 1, inb = tanh(a);  // acosh's and atanh's domains too
    struct Case {
      const char* what;
      Array cpu, gpu;
    };
    const Case cases[] = {{"acosh", acosh(a), acosh(ga)},
                          {"acosh in domain", acosh(ina), acosh(ina.to_device(gpu))},
                          {"asinh", asinh(a), asinh(ga)},
                          {"atanh", atanh(a), atanh(ga)},
                          {"atanh in domain", atanh(inb), atanh(inb.to_device(gpu))},
                          {"hypot", hypot(a, b), hypot(ga, gb)}};
    for (const Case& c : cases) {
      const std::vector<double> x = vals(c.cpu), y = vals(c.gpu);
      ASSERT_EQ(x.size(), y.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (std::isnan(x[i]) || std::isinf(x[i])) {
          EXPECT_EQ(std::isnan(x[i]), std::isnan(y[i])) << c.what << " " << name(t) << " [" << i << "]";
          if (!std::isnan(x[i])) {
            EXPECT_EQ(x[i], y[i]) << c.what << " [" << i << "]";
          }
          continue;
        }
        if (x[i] == 0 || y[i] == 0) {  // a tiny result may come back as zero, or the reverse
          EXPECT_LE(std::abs(x[i] - y[i]), finfo(t).smallest_normal) << c.what << " " << name(t) << " [" << i << "]";
          continue;
        }
        // CPU (at most 4 ulp) + GPU (at most 4 ulp); 16-bit results 1 ulp each side.
        const double bound = t == DType::float16 ? 2 : 8;
        const double d = t == DType::float16 ? std::abs(x[i] - y[i]) / std::max(std::abs(x[i]) * 0x1p-10, 0x1p-24)
                                             : ulps(y[i], x[i], t);
        EXPECT_LE(d, bound) << c.what << " " << name(t) << " [" << i << "] " << x[i] << " vs " << y[i];
      }
    }
    // logaddexp: each within 1 ulp of the result plus 8 ulp of ln 2 (docs/semantics.md), so the two
    // within twice that.
    const std::vector<double> x = vals(logaddexp(a, b)), y = vals(logaddexp(ga, gb));
    const double u = t == DType::float64 ? 0x1p-52 : t == DType::float32 ? 0x1p-23 : 0x1p-10;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!std::isfinite(x[i])) {
        EXPECT_EQ(bits64(std::isnan(x[i]) ? kNan : x[i]), bits64(std::isnan(y[i]) ? kNan : y[i])) << i;
        continue;
      }
      EXPECT_LE(std::abs(x[i] - y[i]), 2 * (2 * u * std::abs(x[i]) + 8 * u * 0.6931471805599453)) << i;
    }
  }
}

TEST(ArrayApiFunctionsGpu, CumulativeProdMatchesTheCpuBitForBit) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : {DType::bool_, DType::int8, DType::uint8, DType::int32, DType::uint64, DType::float16, DType::bfloat16,
                  DType::float32, DType::float64}) {
    // Values near 1 so that float products stay finite over long lines; integers wrap exactly.
    Array c = (gpu_inputs(DType::float64, 31, 3 * 4096) * 0.01 + 1).reshape({3, 4096});
    if (kind(t) != DTypeKind::floating) c = iota({3, 4096}, DType::int64) % 7 - 2;
    c = c.astype(t);
    const Array g = c.to_device(gpu);
    for (int axis : {0, 1}) {
      for (bool initial : {false, true}) {
        EXPECT_EQ(bits(cumulative_prod(g, axis, std::nullopt, initial)),
                  bits(cumulative_prod(c, axis, std::nullopt, initial)))
            << name(t) << " axis " << axis << (initial ? " include_initial" : "");
      }
    }
    if (kind(t) == DTypeKind::signed_integer) {
      EXPECT_EQ(bits(cumulative_prod(g, 1, t)), bits(cumulative_prod(c, 1, t))) << name(t) << " dtype=";
    }
    // A transposed (strided) view, and many short lines (one thread each).
    EXPECT_EQ(bits(cumulative_prod(g.T(), 1)), bits(cumulative_prod(c.T(), 1))) << name(t);
    const Array many = c.reshape({-1, 3});
    EXPECT_EQ(bits(cumulative_prod(many.to_device(gpu), 1)), bits(cumulative_prod(many, 1))) << name(t);
  }
}

TEST(ArrayApiFunctionsGpu, ComposedFunctionsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const Array x = iota({4, 5, 6}, DType::int32) % 11 - 5;
  const Array g = x.to_device(gpu);
  EXPECT_EQ(bits(tril(g, 1)), bits(tril(x, 1)));
  EXPECT_EQ(bits(triu(g, -2)), bits(triu(x, -2)));
  EXPECT_EQ(bits(repeat(g, 3, 1)), bits(repeat(x, 3, 1)));
  EXPECT_EQ(bits(repeat(g, arr({1, 0, 2, 3, 1}, DType::int64).to_device(gpu), 1)),
            bits(repeat(x, arr({1, 0, 2, 3, 1}, DType::int64), 1)));
  EXPECT_EQ(bits(roll(g, {2, -1}, {0, 2})), bits(roll(x, {2, -1}, {0, 2})));
  EXPECT_EQ(bits(roll(g, 7)), bits(roll(x, 7)));
  EXPECT_EQ(bits(tile(g, {2, 1, 1, 2})), bits(tile(x, {2, 1, 1, 2})));
  EXPECT_EQ(bits(moveaxis(g, 0, -1)), bits(moveaxis(x, 0, -1)));
  EXPECT_EQ(bits(unstack(g, 1).at(3)), bits(unstack(x, 1).at(3)));
  EXPECT_EQ(bits(diff(g, 1, 2)), bits(diff(x, 1, 2)));
  EXPECT_EQ(bits(diff(g, -1, 1, 0, 1)), bits(diff(x, -1, 1, 0, 1)));
  EXPECT_EQ(bits(broadcast_arrays({g, g[0]}).at(1)), bits(broadcast_arrays({x, x[0]}).at(1)));
  const Array a = arr({1, 2, 3}, DType::float32), b = arr({4, 5}, DType::float32);
  const std::vector<Array> mc = meshgrid({a, b}), mg = meshgrid({a.to_device(gpu), b.to_device(gpu)});
  EXPECT_EQ(mg[0].device(), gpu);
  EXPECT_EQ(bits(mg[0]), bits(mc[0]));
  EXPECT_EQ(bits(mg[1]), bits(mc[1]));
  // Integer tensordot runs in xp's own exact kernel on both devices.
  const Array y = iota({5, 6, 3}, DType::int64) % 5;
  EXPECT_EQ(bits(tensordot(g.astype(DType::int64), y.to_device(gpu))), bits(tensordot(x.astype(DType::int64), y)));
  EXPECT_THROW(tensordot(g, y), DeviceMismatch);
}
