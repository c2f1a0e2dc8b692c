// NumPy functions beyond the Array API (xp/numpy.hpp): known values (NumPy 2's answers, written
// here), edge cases (empty, 0-d, NaN, views that are not contiguous), the errors; and, on a GPU
// (NumpyExtrasGpu.*, skipped without one), every function on cuda:0 against the CPU bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::Array;
using xp::DType;
using xp::Index;
using xp::Slice;
using i64 = std::int64_t;

const xp_test::ProcessCache g_process_cache;  // this process's kernel cache

const xp::Device kCpu = xp::Device::cpu();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

template <class T>
Array array_of(const std::vector<T>& v, const xp::Shape& shape, const xp::Device& d = kCpu) {
  return xp::asarray(v.data(), v.size(), xp::dtype_of<T>(), shape, d);
}
template <class T>
Array vec(const std::vector<T>& v, const xp::Device& d = kCpu) {
  return array_of(v, {static_cast<i64>(v.size())}, d);
}

std::vector<i64> shape_of(const Array& a) {
  return std::vector<i64>(a.shape().begin(), a.shape().end());
}

// Doubles equal, NaN equal to NaN.
void expect_values(const Array& a, const std::vector<double>& want, const std::string& what = "") {
  const std::vector<double> got = a.to_vector<double>();
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i << ": " << got[i];
    else
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
  }
}

// ---- comparison ----

TEST(NumpyExtras, IscloseFollowsNumPysFormula) {
  const Array a = vec<double>({1e10, 1e-7, kInf, kNaN, 1.0, -kInf});
  const Array b = vec<double>({1.00001e10, 1e-8, kInf, kNaN, 1.00002, kInf});
  EXPECT_EQ(xp::isclose(a, b).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(xp::isclose(a, b, 1e-5, 1e-8, true).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{1, 0, 1, 1, 0, 0}));
  EXPECT_EQ(xp::isclose(a, b, 1e-4).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0, 1, 0, 1, 0}));
  // Weak scalars: a float32 array against a number compares in float32 (1 + 5e-8 rounds to 1).
  const Array f = vec<float>({1.0f, 1.5f});
  EXPECT_EQ(xp::isclose(f, 1.00000005, 0, 0).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0}));
  EXPECT_EQ(xp::isclose(f.astype(DType::float64), 1.00000005, 0, 0).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{0, 0}));
  EXPECT_EQ(xp::isclose(f, kNaN, 1e-5, 1e-8, true).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{0, 0}));
  // An integer b is converted to float64: no wrap in a - b.
  const Array i8 = vec<std::int8_t>({-128, 127});
  EXPECT_EQ(xp::isclose(i8, vec<std::int8_t>({127, 127})).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{0, 1}));
  // Broadcasting, and the result is bool of the broadcast shape.
  const Array m = xp::reshape(xp::arange(0, 6, 1, DType::float64, kCpu), {2, 3});
  const Array r = xp::isclose(m, vec<double>({0, 4, 5}));
  EXPECT_EQ(r.dtype(), DType::bool_);
  EXPECT_EQ(shape_of(r), (std::vector<i64>{2, 3}));
  EXPECT_EQ(r.to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0, 0, 0, 1, 1}));
  EXPECT_THROW(xp::isclose(m, vec<double>({1, 2})), xp::ValueError);
  // A number as a, NaN or not, with equal_nan.
  EXPECT_EQ(xp::isclose(kNaN, a, 1e-5, 1e-8, true).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(xp::isclose(1.0, a, 1e-5, 1e-8, true).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(xp::isclose(1.0, a, 1e-5, 1e-8, true).device(), kCpu);
}

TEST(NumpyExtras, AllcloseAndArrayEqual) {
  const Array a = vec<double>({1, 2, kNaN});
  EXPECT_FALSE(xp::allclose(a, a));
  EXPECT_TRUE(xp::allclose(a, a, 1e-5, 1e-8, true));
  EXPECT_TRUE(xp::allclose(a.slice({Slice(0, 2)}), vec<double>({1 + 1e-9, 2})));
  EXPECT_FALSE(xp::array_equal(a, a));
  EXPECT_TRUE(xp::array_equal(a, a, true));
  EXPECT_TRUE(xp::array_equal(vec<std::int32_t>({1, 2}), vec<double>({1, 2})));
  EXPECT_FALSE(xp::array_equal(vec<double>({1, 2}), vec<double>({1, 2, 3})));
  // No broadcasting: (1,) against (2,) is a different shape.
  EXPECT_FALSE(xp::array_equal(vec<double>({1}), vec<double>({1, 1})));
  EXPECT_TRUE(xp::array_equal(xp::empty({0, 3}, DType::float32, kCpu), xp::empty({0, 3}, DType::int8, kCpu)));
  // int64 against uint64 compares exact values (no float64 rounding).
  EXPECT_FALSE(xp::array_equal(vec<i64>({-1}), vec<std::uint64_t>({18446744073709551615ull})));
}

// ---- NaN reductions ----

TEST(NumpyExtras, NanReductionsLeaveNaNsOut) {
  const Array a = array_of<double>({kNaN, 1, 4, kNaN, kNaN, kNaN}, {2, 3});
  expect_values(xp::nansum(a), {5});
  expect_values(xp::nansum(a, 1), {5, 0});
  expect_values(xp::nanmean(a, 1), {2.5, kNaN});
  expect_values(xp::nanmax(a, 1), {4, kNaN});
  expect_values(xp::nanmin(a, 1), {1, kNaN});
  expect_values(xp::nanmin(a, 0), {kNaN, 1, 4});
  EXPECT_EQ(shape_of(xp::nanmax(a, 1, true)), (std::vector<i64>{2, 1}));
  EXPECT_EQ(xp::nanmax(a, 1).dtype(), DType::float64);
  EXPECT_EQ(xp::nanargmax(a).item<i64>(), 2);
  EXPECT_EQ(xp::nanargmin(a).item<i64>(), 1);
  EXPECT_THROW(xp::nanargmax(a, 1), xp::ValueError);  // the second row is all NaN
  EXPECT_THROW(xp::nanargmin(a, 0), xp::ValueError);  // so is the first column
  const Array b = array_of<double>({kNaN, 1, 4, kNaN, kNaN, 2}, {2, 3});
  EXPECT_THROW(xp::nanargmax(b, 0), xp::ValueError);
  const Array r = xp::nanargmax(b, 1, true);
  EXPECT_EQ(r.dtype(), DType::int64);
  EXPECT_EQ(shape_of(r), (std::vector<i64>{2, 1}));
  EXPECT_EQ(r.to_vector<i64>(), (std::vector<i64>{2, 2}));
  // Empty: an empty reduced axis has no answer; along a non-empty one the result is just empty.
  const Array none = xp::zeros({0, 3, 5}, DType::float32);
  EXPECT_EQ(shape_of(xp::nanargmin(none, 1)), (std::vector<i64>{0, 5}));
  EXPECT_EQ(shape_of(xp::nanargmax(none, -1, true)), (std::vector<i64>{0, 3, 1}));
  EXPECT_THROW(xp::nanargmax(none, 0), xp::ValueError);
  EXPECT_THROW(xp::nanargmin(none), xp::ValueError);
  // As NumPy: a NaN is replaced by -inf (+inf for nanargmin), and the first of equal values wins,
  // so a NaN before the -inf maxima is the answer.
  EXPECT_EQ(xp::nanargmax(vec<double>({kNaN, -kInf, -kInf})).item<i64>(), 0);
  EXPECT_EQ(xp::nanargmin(vec<double>({kNaN, kInf})).item<i64>(), 0);
  EXPECT_EQ(xp::nanargmin(vec<double>({kNaN, 2, -kInf, 1})).item<i64>(), 2);
  // float32 keeps its dtype; integers are the plain reductions.
  const Array f = vec<float>({1.5f, NAN, 2.5f});
  EXPECT_EQ(xp::nanmean(f).dtype(), DType::float32);
  EXPECT_EQ(xp::nanmean(f).item<float>(), 2.0f);
  const Array i = vec<std::int32_t>({3, -7, 5});
  EXPECT_EQ(xp::nanmax(i).item<i64>(), 5);
  EXPECT_EQ(xp::nanargmin(i).item<i64>(), 1);
  EXPECT_EQ(xp::nansum(i).item<i64>(), 1);
  EXPECT_EQ(xp::nanmean(i).dtype(), DType::float64);
  // A view that is not contiguous (every other column).
  const Array v = a.slice({Slice(), Slice(std::nullopt, std::nullopt, 2)});
  expect_values(xp::nansum(v, 0), {0, 4});
  // Empty: nansum 0, nanmean NaN, nanmax and nanargmax errors as NumPy's.
  const Array e = xp::empty({0}, DType::float64, kCpu);
  expect_values(xp::nansum(e), {0});
  expect_values(xp::nanmean(e), {kNaN});
  EXPECT_THROW(xp::nanmax(e), xp::ValueError);
  EXPECT_THROW(xp::nanargmax(e), xp::ValueError);
  // 0-d.
  expect_values(xp::nanmax(xp::full({}, kNaN, DType::float64, kCpu)), {kNaN});
  expect_values(xp::nansum(xp::full({}, 3.0, DType::float64, kCpu)), {3});
}

// ---- shapes ----

TEST(NumpyExtras, DiagBuildsAndExtracts) {
  const Array d = xp::diag(vec<i64>({1, 2}), 1);
  EXPECT_EQ(shape_of(d), (std::vector<i64>{3, 3}));
  EXPECT_EQ(d.to_vector<i64>(), (std::vector<i64>{0, 1, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(xp::diag(vec<float>({5, 6}), -1).to_vector<float>(), (std::vector<float>{0, 0, 0, 5, 0, 0, 0, 6, 0}));
  const Array m = xp::reshape(xp::arange(0, 12, 1, DType::int64, kCpu), {3, 4});
  EXPECT_EQ(xp::diag(m).to_vector<i64>(), (std::vector<i64>{0, 5, 10}));
  EXPECT_EQ(xp::diag(m, -1).to_vector<i64>(), (std::vector<i64>{4, 9}));
  EXPECT_EQ(xp::diag(m, 2).to_vector<i64>(), (std::vector<i64>{2, 7}));
  EXPECT_EQ(xp::diag(m, 4).size(), 0);
  EXPECT_EQ(xp::diag(m, std::numeric_limits<i64>::min()).size(), 0);
  EXPECT_EQ(xp::diag(m, std::numeric_limits<i64>::max()).size(), 0);
  // A transposed view.
  EXPECT_EQ(xp::diag(m.T(), 1).to_vector<i64>(), (std::vector<i64>{4, 9}));
  EXPECT_EQ(shape_of(xp::diag(xp::empty({0}, DType::float32, kCpu))), (std::vector<i64>{0, 0}));
  EXPECT_THROW(xp::diag(xp::full({}, 1.0, DType::float64, kCpu)), xp::ValueError);
  EXPECT_THROW(xp::diag(xp::zeros({2, 2, 2}, DType::float64, kCpu)), xp::ValueError);
  EXPECT_THROW(xp::diag(vec<double>({1}), std::numeric_limits<i64>::max()), xp::ValueError);
  EXPECT_EQ(xp::ravel(m.T()).to_vector<i64>(), (std::vector<i64>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

// ---- order statistics ----

TEST(NumpyExtras, MedianAndQuantilesAreNumPysLinearMethod) {
  const Array x = vec<double>({10, 2, 4, 1, 3});
  expect_values(xp::quantile(x, vec<double>({0, 0.3, 0.5, 0.95, 1})), {1.0, 2.2, 3.0, 8.799999999999999, 10.0});
  expect_values(xp::percentile(vec<std::int32_t>({1, 2, 3, 4, 10}), vec<double>({30, 75})), {2.2, 4.0});
  // A number with a float32 array is taken in float32: NumPy's float32 result, bit for bit.
  const Array q32 = xp::quantile(vec<float>({1, 2, 3, 4, 10}), 0.3);
  EXPECT_EQ(q32.dtype(), DType::float32);
  const float got = q32.item<float>();
  std::uint32_t bits = 0;
  std::memcpy(&bits, &got, 4);
  EXPECT_EQ(bits, 1074580685u);
  const Array m = array_of<double>({3, 1, kNaN, 2, 8, 5}, {2, 3});
  expect_values(xp::median(m, 1), {kNaN, 5});
  expect_values(xp::median(m, 0), {2.5, 4.5, kNaN});
  expect_values(xp::median(array_of<i64>({5, 1, 4, 2, 9, 8, 7, 6}, {2, 4}), 1), {3.0, 7.5});
  EXPECT_EQ(xp::median(vec<std::int16_t>({1, 2})).dtype(), DType::float64);
  EXPECT_EQ(shape_of(xp::quantile(m, 0.5, 0, true)), (std::vector<i64>{1, 3}));
  EXPECT_EQ(shape_of(xp::quantile(m, vec<double>({0.5, 1.0}), 1, true)), (std::vector<i64>{2, 2, 1}));
  expect_values(xp::quantile(m, vec<double>({0.0, 1.0}), 1), {kNaN, 2, kNaN, 8});
  // Several axes at once, and a view that is not contiguous.
  const Array cube = xp::reshape(xp::arange(0, 24, 1, DType::float64, kCpu), {2, 3, 4});
  expect_values(xp::median(cube, {0, 2}), {7.5, 11.5, 15.5});
  expect_values(xp::median(cube.slice({Slice(), Slice(), Slice(std::nullopt, std::nullopt, -2)}), -1),
                {2, 6, 10, 14, 18, 22});
  // Integer q with an integer result: the elements themselves (NumPy takes them).
  EXPECT_EQ(xp::quantile(vec<std::int32_t>({4, 1, 3}), vec<i64>({0, 1})).dtype(), DType::int32);
  // Empty: median NaN, quantile an IndexError; out of range q a ValueError.
  expect_values(xp::median(xp::empty({0}, DType::float64, kCpu)), {kNaN});
  EXPECT_THROW(xp::quantile(xp::empty({0}, DType::float64, kCpu), 0.5), xp::IndexError);
  EXPECT_THROW(xp::quantile(x, 1.5), xp::ValueError);
  EXPECT_THROW(xp::quantile(x, kNaN), xp::ValueError);
  EXPECT_THROW(xp::percentile(x, -1), xp::ValueError);
  EXPECT_THROW(xp::quantile(x, xp::zeros({2, 2}, DType::float64, kCpu)), xp::ValueError);
  EXPECT_THROW(xp::quantile(vec<std::uint8_t>({1}).astype(DType::bool_), 0.5), xp::TypeError);
  // 0-d: its own median.
  expect_values(xp::median(xp::full({}, 4.0, DType::float64, kCpu)), {4});
}

// NumPy's other simple methods: the values below come from NumPy 2 (np.quantile(a, q, method=m)).
TEST(NumpyExtras, QuantileMethodsAreNumPys) {
  const Array a = vec<std::int32_t>({3, 1, 4, 1, 5, 9, 2, 6});  // sorted: 1 1 2 3 4 5 6 9
  const Array q = vec<double>({0.25, 0.5, 0.3, 1.0});           // (n - 1) q: 1.75, 3.5, 2.1, 7
  const auto ints = [](const Array& r) { return r.to_vector<std::int32_t>(); };
  EXPECT_EQ(ints(xp::quantile(a, q, {}, false, "lower")), (std::vector<std::int32_t>{1, 3, 2, 9}));
  EXPECT_EQ(ints(xp::quantile(a, q, {}, false, "higher")), (std::vector<std::int32_t>{2, 4, 3, 9}));
  // nearest rounds half to even: 3.5 -> 4
  EXPECT_EQ(ints(xp::quantile(a, q, {}, false, "nearest")), (std::vector<std::int32_t>{2, 4, 2, 9}));
  expect_values(xp::quantile(a, q, {}, false, "midpoint"), {1.5, 3.5, 2.5, 9.0});
  EXPECT_EQ(xp::quantile(a, 0.5, {}, false, "nearest").dtype(), DType::int32);
  EXPECT_EQ(xp::quantile(a, 0.5, {}, false, "nearest").item<std::int32_t>(), 4);
  // (n - 1) q = 0.5 and 2.5 on five elements: half to even, 0 and 2
  EXPECT_EQ(xp::quantile(vec<double>({0, 1, 2, 3, 4}), 0.125, {}, false, "nearest").item<double>(), 0);
  EXPECT_EQ(xp::quantile(vec<double>({0, 1, 2, 3, 4}), 0.625, {}, false, "nearest").item<double>(), 2);
  // midpoint with an integer q still interpolates: a float64 result where linear takes the element
  EXPECT_EQ(xp::quantile(a, 1, {}, false, "midpoint").dtype(), DType::float64);
  EXPECT_EQ(xp::quantile(a, 1, {}, false, "linear").dtype(), DType::int32);
  expect_values(xp::percentile(a, vec<double>({25, 50}), {}, false, "midpoint"), {1.5, 3.5});
  // a NaN in a slice gives NaN with every method
  const Array m = array_of<double>({3, 1, kNaN, 2, 8, 5}, {2, 3});
  for (const char* method : {"lower", "higher", "nearest", "midpoint"})
    expect_values(xp::quantile(m, 0.5, 1, false, method), {kNaN, 5});
  EXPECT_THROW(xp::quantile(a, 0.5, {}, false, "hazen"), xp::ValueError);
}

// ---- partition, bincount, histogram ----

TEST(NumpyExtras, PartitionIsAFullSortThatMeetsTheContract) {
  const Array a = vec<double>({5, kNaN, 1, 4, 2});
  const std::vector<double> sorted = xp::partition(a, {2}).to_vector<double>();
  EXPECT_EQ(sorted[2], 4);
  EXPECT_LE(sorted[0], 4);
  EXPECT_EQ(xp::argpartition(a, {0, -1}).to_vector<i64>(), (std::vector<i64>{2, 4, 3, 0, 1}));
  EXPECT_THROW(xp::partition(a, {5}), xp::ValueError);
  EXPECT_THROW(xp::partition(a, {-6}), xp::ValueError);
  EXPECT_THROW(xp::partition(xp::full({}, 1.0, DType::float64, kCpu), {0}), xp::ValueError);
}

TEST(NumpyExtras, BincountCountsAndSumsWeights) {
  EXPECT_EQ(xp::bincount(vec<i64>({0, 1, 1, 3}), std::nullopt, 2).to_vector<i64>(), (std::vector<i64>{1, 2, 0, 1}));
  EXPECT_EQ(xp::bincount(vec<std::uint8_t>({2, 2})).to_vector<i64>(), (std::vector<i64>{0, 0, 2}));
  EXPECT_EQ(xp::bincount(vec<i64>({}), std::nullopt, 3).to_vector<i64>(), (std::vector<i64>{0, 0, 0}));
  const Array w = xp::bincount(vec<i64>({3, 1, 1, 0, 3, 3}), vec<double>({.5, .25, .25, 1, 1, 1}));
  EXPECT_EQ(w.dtype(), DType::float64);
  expect_values(w, {1.0, 0.5, 0.0, 2.5});
  // Many values in one bin: the scan adds them all (the sum of 0..999 is exact in float64).
  std::vector<i64> ones(1000, 7);
  expect_values(xp::bincount(vec(ones), xp::arange(0, 1000, 1, DType::float32, kCpu)).slice({Slice(7, 8)}), {499500});
  // A view that is not contiguous.
  EXPECT_EQ(xp::bincount(vec<i64>({1, 9, 1, 9, 2}).slice({Slice(std::nullopt, std::nullopt, 2)})).to_vector<i64>(),
            (std::vector<i64>{0, 2, 1}));
  EXPECT_THROW(xp::bincount(vec<i64>({1, -1})), xp::ValueError);
  EXPECT_THROW(xp::bincount(vec<double>({1})), xp::TypeError);
  EXPECT_THROW(xp::bincount(xp::zeros({2, 2}, DType::int64, kCpu)), xp::ValueError);
  EXPECT_THROW(xp::bincount(vec<i64>({1}), vec<double>({1, 2})), xp::ValueError);
  EXPECT_THROW(xp::bincount(vec<i64>({1}), std::nullopt, -1), xp::ValueError);
}

TEST(NumpyExtras, HistogramUsesNumPysEdges) {
  const xp::Histogram h = xp::histogram(vec<double>({0, 1, 1, 2, 5, 9, 10}), 4);
  EXPECT_EQ(h.counts.to_vector<i64>(), (std::vector<i64>{4, 0, 1, 2}));  // 10 falls in the last bin
  expect_values(h.edges, {0, 2.5, 5, 7.5, 10});
  const xp::Histogram r = xp::histogram(vec<i64>({1, 2, 2, 3, 7, -1}), 3, std::make_pair(0.0, 6.0));
  EXPECT_EQ(r.counts.to_vector<i64>(), (std::vector<i64>{1, 3, 0}));
  EXPECT_EQ(r.edges.dtype(), DType::float64);
  const xp::Histogram same = xp::histogram(vec<float>({5, 5, 5}), 2);
  EXPECT_EQ(same.edges.dtype(), DType::float32);
  expect_values(same.edges, {4.5, 5, 5.5});
  EXPECT_EQ(same.counts.to_vector<i64>(), (std::vector<i64>{0, 3}));
  const xp::Histogram empty = xp::histogram(xp::empty({0}, DType::float64, kCpu), 2);
  EXPECT_EQ(empty.counts.to_vector<i64>(), (std::vector<i64>{0, 0}));
  expect_values(empty.edges, {0, 0.5, 1});
  // NaN with a range is left out; without one the range is not finite.
  EXPECT_EQ(xp::histogram(vec<double>({kNaN, 1}), 1, std::make_pair(0.0, 2.0)).counts.to_vector<i64>(),
            (std::vector<i64>{1}));
  EXPECT_THROW(xp::histogram(vec<double>({kNaN, 1})), xp::ValueError);
  EXPECT_THROW(xp::histogram(vec<double>({1}), 0), xp::ValueError);
  EXPECT_THROW(xp::histogram(vec<double>({1}), 2, std::make_pair(2.0, 1.0)), xp::ValueError);
}

// Found by differential fuzzing against NumPy 2.4: uint64 values past 2^63 (read as int64 they
// wrapped negative), the bins check for a single bin, complex NaNs in the nan reductions and in
// array_equal, complex weights of bincount.
TEST(NumpyExtras, FuzzedCornersMatchNumPy) {
  const std::uint64_t big = std::uint64_t{1} << 63;
  const xp::Histogram u = xp::histogram(vec<std::uint64_t>({big, big + (big >> 1), ~std::uint64_t{0} - 2047}), 2);
  EXPECT_EQ(u.counts.to_vector<i64>(), (std::vector<i64>{1, 2}));
  expect_values(u.edges, {9223372036854775808.0, 13835058055282163712.0, 18446744073709549568.0});
  const xp::Histogram v = xp::histogram(vec<std::uint64_t>({10, big}), 2);
  EXPECT_EQ(v.counts.to_vector<i64>(), (std::vector<i64>{1, 1}));
  // One bin of no width in float64 (1e17 +- 0.5 rounds to 1e17): NumPy's "too many bins".
  EXPECT_THROW(xp::histogram(vec<double>({1e17}), 1), xp::ValueError);
  EXPECT_EQ(xp::histogram(vec<double>({1, 2, 3}), 1).counts.to_vector<i64>(), (std::vector<i64>{3}));
  // Complex: a NaN in either part is left out by nansum and nanmean.
  const Array c = vec<std::complex<double>>({{1, 1}, {kNaN, 1}, {2, 0}});
  EXPECT_EQ(xp::nansum(c).item<std::complex<double>>(), std::complex<double>(3, 1));
  EXPECT_EQ(xp::nanmean(c).item<std::complex<double>>(), std::complex<double>(1.5, 0.5));
  EXPECT_EQ(xp::nanmean(c.astype(DType::complex64)).dtype(), DType::complex64);
  const Array n = vec<std::complex<double>>({{kNaN, 1}});
  EXPECT_TRUE(xp::array_equal(n, n, true));
  EXPECT_FALSE(xp::array_equal(n, n, false));
  try {
    xp::bincount(vec<i64>({0, 1}), c.slice({Slice(0, 2)}));
    ADD_FAILURE() << "bincount took complex weights";
  } catch (const xp::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("weights must be real, got complex128"), std::string::npos) << e.what();
  }
}

TEST(NumpyExtras, HistogramWithEdgesDensityAndBinEdges) {
  // np.histogram([0, 1, 1, 2, 5, 9, 10, nan], bins=[0, 1, 2.5, 10]): ([1, 3, 3], ...), each bin
  // half-open but the last; values outside and NaN not counted.
  const Array a = vec<double>({0, 1, 1, 2, 5, 9, 10, kNaN, -1, 11});
  const Array edges = vec<double>({0, 1, 2.5, 10});
  const xp::Histogram h = xp::histogram(a, edges);
  EXPECT_EQ(h.counts.dtype(), DType::int64);
  EXPECT_EQ(h.counts.to_vector<i64>(), (std::vector<i64>{1, 3, 3}));
  expect_values(h.edges, {0, 1, 2.5, 10});
  // Equal edges make an empty bin unless it is the last (NumPy: [1, 1, 2] on [1, 2, 1] gives [0, 3]).
  EXPECT_EQ(xp::histogram(vec<double>({1, 2, 1}), vec<i64>({1, 1, 2})).counts.to_vector<i64>(),
            (std::vector<i64>{0, 3}));
  // Integer values, float edges (compared in the promoted dtype).
  EXPECT_EQ(xp::histogram(vec<i64>({0, 1, 2, 3, 4}), vec<double>({0, 2.5, 4})).counts.to_vector<i64>(),
            (std::vector<i64>{3, 2}));
  // density: counts / (total * width), float64: np.histogram(arange(5.), [0, 2.5, 4], density=True)
  // is [3 / 5 / 2.5, 2 / 5 / 1.5].
  const xp::Histogram d = xp::histogram(xp::arange(0, 5, 1, DType::float64, kCpu), vec<double>({0, 2.5, 4}), true);
  EXPECT_EQ(d.counts.dtype(), DType::float64);
  expect_values(d.counts, {3.0 / 2.5 / 5, 2.0 / 1.5 / 5});
  // density with equal bins integrates to 1.
  const xp::Histogram e = xp::histogram(vec<float>({0, 1, 2, 3, 4}), 3, std::nullopt, true);
  const std::vector<double> de = e.counts.to_vector<double>();
  const double width = (e.edges.to_vector<double>()[1] - e.edges.to_vector<double>()[0]);
  EXPECT_NEAR((de[0] + de[1] + de[2]) * width, 1.0, 1e-6);
  // NumPy's order: the widths are float32 differences widened to float64, then n / width / total
  // (np.histogram(float32 [0, 1, 2, 3, 4], 3, density=True) is [0.29999999, 0.15, 0.30000002]).
  const std::vector<float> ef = e.edges.to_vector<float>();
  expect_values(e.counts, {2.0 / static_cast<double>(ef[1] - ef[0]) / 5, 1.0 / static_cast<double>(ef[2] - ef[1]) / 5,
                           2.0 / static_cast<double>(ef[3] - ef[2]) / 5});
  // histogram_bin_edges is histogram's edges.
  expect_values(xp::histogram_bin_edges(vec<double>({0, 1, 1, 2, 5, 9, 10}), 4), {0, 2.5, 5, 7.5, 10});
  // Fewer than two edges: no bins.
  EXPECT_EQ(xp::histogram(a, vec<double>({1})).counts.size(), 0);
  EXPECT_THROW(xp::histogram(a, vec<double>({3, 1})), xp::ValueError);
  EXPECT_THROW(xp::histogram(a, xp::zeros({2, 2}, DType::float64, kCpu)), xp::ValueError);
  EXPECT_THROW(xp::histogram(a, vec<i64>({0, 1}).astype(DType::bool_)), xp::TypeError);
}

// ---- pad ----

TEST(NumpyExtras, PadModes) {
  const Array a = vec<i64>({1, 2, 3});
  EXPECT_EQ(xp::pad(a, {{5, 4}}, "reflect").to_vector<i64>(), (std::vector<i64>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3}));
  EXPECT_EQ(xp::pad(a, {{5, 4}}, "symmetric").to_vector<i64>(), (std::vector<i64>{2, 3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1}));
  EXPECT_EQ(xp::pad(a, {{5, 4}}, "wrap").to_vector<i64>(), (std::vector<i64>{2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1}));
  EXPECT_EQ(xp::pad(a, {{2, 1}}, "edge").to_vector<i64>(), (std::vector<i64>{1, 1, 1, 2, 3, 3}));
  const Array m = array_of<i64>({1, 2, 3, 4}, {2, 2});
  const Array c = xp::pad(m, {{1, 0}, {0, 2}}, "constant", 7);
  EXPECT_EQ(shape_of(c), (std::vector<i64>{3, 4}));
  EXPECT_EQ(c.to_vector<i64>(), (std::vector<i64>{7, 7, 7, 7, 1, 2, 7, 7, 3, 4, 7, 7}));
  // The constant converted as astype converts (1.9 -> 1 in an integer array), a transposed view.
  EXPECT_EQ(xp::pad(m.T(), {{0, 1}}, "constant", 1.9).to_vector<i64>(), (std::vector<i64>{1, 3, 1, 2, 4, 1, 1, 1, 1}));
  // No padding is still a new array.
  const Array same = xp::pad(a, {{0, 0}}, "edge");
  EXPECT_NE(same.impl(), a.impl());
  EXPECT_EQ(same.to_vector<i64>(), a.to_vector<i64>());
  EXPECT_EQ(xp::pad(xp::empty({0}, DType::float64, kCpu), {{1, 1}}).to_vector<double>(), (std::vector<double>{0, 0}));
  EXPECT_THROW(xp::pad(xp::empty({0}, DType::float64, kCpu), {{1, 1}}, "edge"), xp::ValueError);
  EXPECT_THROW(xp::pad(a, {{-1, 0}}), xp::ValueError);
  EXPECT_THROW(xp::pad(a, {{1, 0}}, "mean"), xp::ValueError);
  EXPECT_THROW(xp::pad(m, {{1, 0}, {0, 1}, {1, 1}}), xp::ValueError);
}

// ---- random numbers ----

std::vector<i64> sorted_copy(std::vector<i64> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(NumpyExtras, RandomPermutationShuffleAndChoice) {
  xp::random::Generator g(42), same(42);
  const std::vector<i64> p = g.permutation(1000, kCpu).to_vector<i64>();
  std::vector<i64> iota(1000);
  for (i64 i = 0; i < 1000; ++i) iota[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(sorted_copy(p), iota);
  EXPECT_NE(p, iota);
  EXPECT_EQ(same.permutation(1000, kCpu).to_vector<i64>(), p);  // the same seed, the same order
  EXPECT_NE(g.permutation(1000, kCpu).to_vector<i64>(), p);     // the next draw, another one
  EXPECT_EQ(g.position(), 2u);
  EXPECT_EQ(g.permutation(0, kCpu).size(), 0);
  // Rows of a matrix moved together, along either axis; shuffle writes into a view.
  const Array m = xp::reshape(xp::arange(0, 12, 1, DType::int64, kCpu), {3, 4});
  const Array pr = g.permutation(m, 1);
  EXPECT_EQ(shape_of(pr), (std::vector<i64>{3, 4}));
  const std::vector<i64> v = pr.to_vector<i64>();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(v[static_cast<std::size_t>(r * 4 + c)] - v[static_cast<std::size_t>(c)], 4 * r);
  Array big = xp::arange(0, 20, 1, DType::int64, kCpu).copy();
  const Array evens = big.slice({Slice(std::nullopt, std::nullopt, 2)});
  g.shuffle(evens);
  const std::vector<i64> after = big.to_vector<i64>();
  std::vector<i64> even_values, odd_values;
  for (std::size_t i = 0; i < after.size(); ++i) (i % 2 ? odd_values : even_values).push_back(after[i]);
  EXPECT_EQ(odd_values, (std::vector<i64>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}));  // untouched
  EXPECT_EQ(sorted_copy(even_values), (std::vector<i64>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18}));
  // choice: without replacement distinct, with replacement in range, the shape of size.
  const Array c = g.choice(50, xp::Shape{5, 10}, false, kCpu);
  EXPECT_EQ(shape_of(c), (std::vector<i64>{5, 10}));
  EXPECT_EQ(sorted_copy(c.to_vector<i64>()), std::vector<i64>(iota.begin(), iota.begin() + 50));
  const std::vector<i64> w = g.choice(3, xp::Shape{200}, true, kCpu).to_vector<i64>();
  for (i64 x : w) EXPECT_TRUE(x >= 0 && x < 3);
  EXPECT_EQ(sorted_copy(w).front(), 0);
  EXPECT_EQ(sorted_copy(w).back(), 2);
  const Array one = g.choice(m, std::nullopt, true, 1);
  EXPECT_EQ(shape_of(one), (std::vector<i64>{3}));
  EXPECT_THROW(g.choice(3, xp::Shape{4}, false, kCpu), xp::ValueError);
  EXPECT_THROW(g.choice(0, xp::Shape{1}, true, kCpu), xp::ValueError);
  EXPECT_THROW(g.permutation(-1, kCpu), xp::ValueError);
  EXPECT_THROW(g.shuffle(xp::full({}, 1.0, DType::float64, kCpu)), xp::ValueError);
  EXPECT_EQ(g.choice(3, xp::Shape{0}, false, kCpu).size(), 0);
}

TEST(NumpyExtras, RandomExponential) {
  xp::random::Generator g(7);
  const Array e = g.exponential({200000}, DType::float64, 2.0, kCpu);
  EXPECT_GE(xp::min(e).item<double>(), 0.0);
  EXPECT_TRUE(xp::all(xp::isfinite(e)).item<bool>());
  // The mean of 200000 draws of mean 2 (standard deviation 2): within 5 standard errors.
  EXPECT_NEAR(xp::mean(e).item<double>(), 2.0, 5 * 2.0 / std::sqrt(200000.0));
  // P(X > 2 * scale) = e^-2.
  EXPECT_NEAR(xp::mean(xp::greater(e, 4.0).astype(DType::float64)).item<double>(), std::exp(-2.0), 0.005);
  EXPECT_EQ(g.exponential({3}, DType::float16, 1, kCpu).dtype(), DType::float16);
  EXPECT_THROW(g.exponential({3}, DType::int32, 1, kCpu), xp::TypeError);
  EXPECT_THROW(g.exponential({3}, DType::float64, -1, kCpu), xp::ValueError);
}

// ---- random draws of other distributions: moments and goodness of fit with fixed seeds ----

// Sample mean and variance (float64).
std::pair<double, double> moments(const Array& x) {
  const Array f = x.astype(DType::float64);
  return {xp::mean(f).item<double>(), xp::var(f, {}, 1).item<double>()};
}

// The chi-square statistic of counts of the values 0..k-1 (everything >= k-1 in the last cell) in
// x against probabilities pk (summing to 1), cells with fewer than 5 expected merged into the last.
double chi_square(const Array& x, const std::vector<double>& pk, int& dof) {
  const std::vector<i64> v = x.astype(DType::int64).to_vector<i64>();
  const auto k = static_cast<i64>(pk.size());
  std::vector<double> observed(pk.size(), 0);
  for (i64 e : v) observed[static_cast<std::size_t>(std::min(e, k - 1))] += 1;
  const double n = static_cast<double>(v.size());
  // Cells of at least 5 expected: neighbours merged, a small remainder joined to the last cell.
  std::vector<double> co, ce;
  double eo = 0, ee = 0;
  for (std::size_t i = 0; i < pk.size(); ++i) {
    eo += observed[i];
    ee += pk[i] * n;
    if (ee >= 5) {
      co.push_back(eo);
      ce.push_back(ee);
      eo = ee = 0;
    }
  }
  if (!co.empty()) {
    co.back() += eo;
    ce.back() += ee;
  }
  double stat = 0;
  for (std::size_t i = 0; i < co.size(); ++i) stat += (co[i] - ce[i]) * (co[i] - ce[i]) / ce[i];
  dof = static_cast<int>(co.size()) - 1;
  return stat;
}

// An upper bound of the chi-square distribution's 0.9999 quantile for dof degrees of freedom
// (Wilson-Hilferty with z = 3.72, plus a margin): a correct sampler exceeds it once in 10^4 seeds.
double chi_square_limit(int dof) {
  const double d = dof, z = 3.72;
  const double t = 1 - 2 / (9 * d) + z * std::sqrt(2 / (9 * d));
  return d * t * t * t + 2;
}

// The Kolmogorov-Smirnov statistic sqrt(n) D of x against the CDF cdf.
template <class Cdf>
double ks_statistic(const Array& x, Cdf cdf) {
  std::vector<double> v = x.astype(DType::float64).to_vector<double>();
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  double d = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double f = cdf(v[i]);
    d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
  }
  return std::sqrt(n) * d;
}
constexpr double kKsLimit = 1.95;  // the KS distribution's 0.999 quantile

TEST(NumpyExtras, RandomPoisson) {
  xp::random::Generator g(21);
  constexpr i64 n = 200000;
  for (double lam : {0.3, 4.0, 57.5, 1000.0, 2.5e6}) {
    const Array x = g.poisson(lam, {n}, kCpu);
    ASSERT_EQ(x.dtype(), DType::int64);
    EXPECT_GE(xp::min(x).item<i64>(), 0);
    const auto [m, v] = moments(x);
    // Mean within 5 standard errors; the sample variance within 5 of its standard errors
    // (var(s^2) ~ (mu4 - sigma^4) / n, mu4 = lam (1 + 3 lam) for Poisson).
    EXPECT_NEAR(m, lam, 5 * std::sqrt(lam / n)) << lam;
    EXPECT_NEAR(v, lam, 5 * std::sqrt((lam + 2 * lam * lam) / n)) << lam;
    if (lam < 100) {
      // Goodness of fit against exp(-lam) lam^k / k!.
      std::vector<double> pk;
      double p = std::exp(-lam), left = 1;
      for (i64 k = 0; k < static_cast<i64>(lam * 3 + 20); ++k) {
        pk.push_back(p);
        left -= p;
        p *= lam / static_cast<double>(k + 1);
      }
      pk.back() += std::max(left, 0.0);
      int dof = 0;
      const double stat = chi_square(x, pk, dof);
      EXPECT_LT(stat, chi_square_limit(dof)) << lam << " with " << dof << " degrees of freedom";
    }
  }
  EXPECT_EQ(xp::max(g.poisson(0, {100}, kCpu)).item<i64>(), 0);
  EXPECT_EQ(shape_of(g.poisson(2, {3, 0}, kCpu)), (std::vector<i64>{3, 0}));
  // The same seed and position give the same draws.
  xp::random::Generator g1(5), g2(5);
  EXPECT_TRUE(xp::array_equal(g1.poisson(3.5, {1000}, kCpu), g2.poisson(3.5, {1000}, kCpu)));
  EXPECT_THROW(g.poisson(-1, {3}, kCpu), xp::ValueError);
  EXPECT_THROW(g.poisson(kNaN, {3}, kCpu), xp::ValueError);
  EXPECT_THROW(g.poisson(1e11, {3}, kCpu), xp::ValueError);
}

TEST(NumpyExtras, RandomBinomial) {
  xp::random::Generator g(22);
  constexpr i64 n = 200000;
  struct Case {
    i64 trials;
    double p;
  };
  for (const Case c : {Case{1, 0.3}, Case{20, 0.3}, Case{10, 0.999}, Case{1000, 0.01}, Case{1000000, 0.5},
                       Case{i64{1} << 50, 1e-12}}) {
    const Array x = g.binomial(c.trials, c.p, {n}, kCpu);
    ASSERT_EQ(x.dtype(), DType::int64);
    EXPECT_GE(xp::min(x).item<i64>(), 0);
    EXPECT_LE(xp::max(x).item<i64>(), c.trials);
    const double nt = static_cast<double>(c.trials), mean = nt * c.p, var = nt * c.p * (1 - c.p);
    const auto [m, v] = moments(x);
    EXPECT_NEAR(m, mean, 5 * std::sqrt(var / n)) << c.trials << " " << c.p;
    // var(s^2) ~ (mu4 - sigma^4) / n with mu4 = var (1 + 3 (n - 2) p q) for the binomial.
    const double mu4 = var * (1 + 3 * (nt - 2) * c.p * (1 - c.p));
    EXPECT_NEAR(v, var, 5 * std::sqrt(std::max(mu4 - var * var, var * var) / n) + 1e-12) << c.trials << " " << c.p;
    if (c.trials <= 20) {
      std::vector<double> pk;
      for (i64 k = 0; k <= c.trials; ++k) {
        double comb = 1;
        for (i64 j = 0; j < k; ++j) comb = comb * static_cast<double>(c.trials - j) / static_cast<double>(j + 1);
        pk.push_back(comb * std::pow(c.p, static_cast<double>(k)) *
                     std::pow(1 - c.p, static_cast<double>(c.trials - k)));
      }
      int dof = 0;
      const double stat = chi_square(x, pk, dof);
      if (dof > 0) {
        EXPECT_LT(stat, chi_square_limit(dof)) << c.trials << " " << c.p;
      }
    }
  }
  EXPECT_EQ(xp::max(g.binomial(0, 0.5, {100}, kCpu)).item<i64>(), 0);
  EXPECT_EQ(xp::max(g.binomial(7, 0.0, {100}, kCpu)).item<i64>(), 0);
  const Array all = g.binomial(7, 1.0, {100}, kCpu);
  EXPECT_EQ(xp::min(all).item<i64>(), 7);
  EXPECT_EQ(xp::max(all).item<i64>(), 7);
  EXPECT_THROW(g.binomial(-1, 0.5, {3}, kCpu), xp::ValueError);
  EXPECT_THROW(g.binomial(5, -0.1, {3}, kCpu), xp::ValueError);
  EXPECT_THROW(g.binomial(5, 1.5, {3}, kCpu), xp::ValueError);
  EXPECT_THROW(g.binomial(5, kNaN, {3}, kCpu), xp::ValueError);
  EXPECT_THROW(g.binomial(i64{1} << 50, 0.5, {3}, kCpu), xp::ValueError);  // beyond the table's limit
}

TEST(NumpyExtras, RandomGamma) {
  xp::random::Generator g(23);
  constexpr i64 n = 200000;
  for (double k : {0.05, 0.5, 1.0, 3.0, 42.0}) {
    const double scale = 1.5;
    const Array x = g.gamma(k, scale, {n}, DType::float64, kCpu);
    ASSERT_EQ(x.dtype(), DType::float64);
    EXPECT_GE(xp::min(x).item<double>(), 0.0);
    EXPECT_TRUE(xp::all(xp::isfinite(x)).item<bool>());
    const auto [m, v] = moments(x);
    const double mean = k * scale, var = k * scale * scale;
    // Gamma's fourth central moment: 3 k (k + 2) scale^4.
    EXPECT_NEAR(m, mean, 5 * std::sqrt(var / n)) << k;
    EXPECT_NEAR(v, var, 5 * std::sqrt((3 * k * (k + 2) - k * k) * std::pow(scale, 4) / n)) << k;
  }
  // Kolmogorov-Smirnov against closed-form CDFs: gamma(1) is the exponential; gamma(3) has
  // 1 - e^-x (1 + x + x^2 / 2); gamma(1/2, scale 2) is chi-square(1), erf(sqrt(x / 2)), drawn by
  // the boost (k < 1: gamma(3/2) u^2).
  EXPECT_LT(ks_statistic(g.gamma(1, 1, {n}, DType::float64, kCpu), [](double x) { return 1 - std::exp(-x); }),
            kKsLimit);
  EXPECT_LT(ks_statistic(g.gamma(3, 1, {n}, DType::float64, kCpu),
                         [](double x) { return 1 - std::exp(-x) * (1 + x + x * x / 2); }),
            kKsLimit);
  EXPECT_LT(
      ks_statistic(g.gamma(0.5, 2, {n}, DType::float64, kCpu), [](double x) { return std::erf(std::sqrt(x / 2)); }),
      kKsLimit);
  // gamma(5/2, scale 2) is chi-square(5): erf(sqrt(x / 2)) - sqrt(2 x / pi) e^(-x / 2) (1 + x / 3).
  EXPECT_LT(ks_statistic(g.gamma(2.5, 2, {n}, DType::float64, kCpu),
                         [](double x) {
                           return std::erf(std::sqrt(x / 2)) -
                                  std::sqrt(2 * x / 3.14159265358979323846) * std::exp(-x / 2) * (1 + x / 3);
                         }),
            kKsLimit);
  EXPECT_EQ(g.gamma(2, 1, {3}, DType::float32, kCpu).dtype(), DType::float32);
  EXPECT_EQ(xp::max(g.gamma(0, 1, {10}, DType::float64, kCpu)).item<double>(), 0.0);
  EXPECT_EQ(xp::max(g.gamma(2, 0, {10}, DType::float64, kCpu)).item<double>(), 0.0);
  EXPECT_THROW(g.gamma(-1, 1, {3}, DType::float64, kCpu), xp::ValueError);
  EXPECT_THROW(g.gamma(1, -1, {3}, DType::float64, kCpu), xp::ValueError);
  EXPECT_THROW(g.gamma(kNaN, 1, {3}, DType::float64, kCpu), xp::ValueError);
  EXPECT_THROW(g.gamma(1, 1, {3}, DType::int32, kCpu), xp::TypeError);
}

TEST(NumpyExtras, RandomChoiceWithProbabilities) {
  xp::random::Generator g(24);
  const std::vector<double> p = {0.1, 0.0, 0.4, 0.2, 0.3};
  const Array pa = vec(p);
  constexpr i64 n = 100000;
  const Array x = g.choice(5, xp::Shape{n}, true, pa, kCpu);
  EXPECT_EQ(x.dtype(), DType::int64);
  const std::vector<i64> counts = xp::bincount(x, std::nullopt, 5).to_vector<i64>();
  EXPECT_EQ(counts[1], 0);  // weight 0: never drawn
  std::vector<double> nz = {p[0], p[2], p[3], p[4]};
  std::vector<i64> nzc = {counts[0], counts[2], counts[3], counts[4]};
  double stat = 0;
  for (std::size_t i = 0; i < nz.size(); ++i) {
    const double e = nz[i] * n;
    stat += (static_cast<double>(nzc[i]) - e) * (static_cast<double>(nzc[i]) - e) / e;
  }
  EXPECT_LT(stat, chi_square_limit(3));
  // Sub-arrays of an array, along an axis.
  const Array m = xp::reshape(xp::arange(0, 10, 1, DType::float64, kCpu), {2, 5});
  const Array cols = g.choice(m, xp::Shape{4}, true, pa, 1);
  EXPECT_EQ(shape_of(cols), (std::vector<i64>{2, 4}));
  // Without replacement: distinct, never a zero weight; all the positive ones when size is their
  // count; and the first pick follows p, the second sum_i p_i p_j / (1 - p_i).
  const Array all4 = g.choice(5, xp::Shape{4}, false, pa, kCpu);
  std::vector<i64> got = all4.to_vector<i64>();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<i64>{0, 2, 3, 4}));
  std::vector<double> first(5, 0), second(5, 0);
  constexpr int trials = 4000;
  for (int t = 0; t < trials; ++t) {
    const std::vector<i64> two = g.choice(5, xp::Shape{2}, false, pa, kCpu).to_vector<i64>();
    ASSERT_NE(two[0], two[1]);
    first[static_cast<std::size_t>(two[0])] += 1;
    second[static_cast<std::size_t>(two[1])] += 1;
  }
  double s1 = 0, s2 = 0;
  for (std::size_t j = 0; j < 5; ++j) {
    double q = 0;
    for (std::size_t i = 0; i < 5; ++i)
      if (i != j) q += p[i] * p[j] / (1 - p[i]);
    if (p[j] == 0) {
      EXPECT_EQ(first[j] + second[j], 0);
      continue;
    }
    s1 += (first[j] - p[j] * trials) * (first[j] - p[j] * trials) / (p[j] * trials);
    s2 += (second[j] - q * trials) * (second[j] - q * trials) / (q * trials);
  }
  EXPECT_LT(s1, chi_square_limit(3));
  EXPECT_LT(s2, chi_square_limit(3));
  EXPECT_THROW(g.choice(5, xp::Shape{5}, false, pa, kCpu), xp::ValueError);  // 4 positive weights
  EXPECT_THROW(g.choice(5, xp::Shape{2}, true, vec<double>({0.5, 0.5}), kCpu), xp::ValueError);
  EXPECT_THROW(g.choice(2, xp::Shape{2}, true, vec<double>({0.5, 0.6}), kCpu), xp::ValueError);
  EXPECT_THROW(g.choice(2, xp::Shape{2}, true, vec<double>({1.5, -0.5}), kCpu), xp::ValueError);
  EXPECT_THROW(g.choice(2, xp::Shape{2}, true, vec<double>({kNaN, 1}), kCpu), xp::ValueError);
  EXPECT_THROW(g.choice(4, xp::Shape{2}, true, xp::full({2, 2}, 0.25, DType::float64, kCpu), kCpu), xp::ValueError);
  // Within sqrt(eps) of 1 is accepted.
  EXPECT_NO_THROW(g.choice(2, xp::Shape{2}, true, vec<double>({0.5, 0.5 + 1e-9}), kCpu));
  // ... and a float32 p gets float32's sqrt(eps), as NumPy's.
  EXPECT_NO_THROW(g.choice(2, xp::Shape{2}, true, vec<float>({0.5f, 0.50001f}), kCpu));
  EXPECT_THROW(g.choice(2, xp::Shape{2}, true, vec<double>({0.5, 0.50001}), kCpu), xp::ValueError);
}

// ---- einsum ----

// A naive einsum for explicit letter-only subscripts: every assignment of every label, summed.
std::vector<double> naive_einsum(const std::string& subs, const std::vector<Array>& ops, std::vector<i64>& out_shape) {
  const auto arrow = subs.find("->");
  std::vector<std::string> terms;
  std::string in = subs.substr(0, arrow), out = subs.substr(arrow + 2);
  for (std::size_t s = 0;;) {
    const auto c = in.find(',', s);
    terms.push_back(in.substr(s, c == std::string::npos ? std::string::npos : c - s));
    if (c == std::string::npos) break;
    s = c + 1;
  }
  std::string labels;
  std::vector<i64> ext(128, -1);  // -1: unseen; an extent of 1 broadcasts
  for (std::size_t i = 0; i < terms.size(); ++i)
    for (std::size_t d = 0; d < terms[i].size(); ++d) {
      const char c = terms[i][d];
      if (labels.find(c) == std::string::npos) labels += c;
      i64& e = ext[static_cast<std::size_t>(c)];
      if (e == -1 || e == 1) e = ops[i].shape(static_cast<int>(d));
    }
  std::vector<std::vector<double>> data;
  for (const Array& a : ops) data.push_back(a.to_vector<double>());
  out_shape.clear();
  i64 out_size = 1;
  for (char c : out) out_shape.push_back(ext[static_cast<std::size_t>(c)]), out_size *= out_shape.back();
  std::vector<double> r(static_cast<std::size_t>(out_size), 0);
  std::vector<i64> val(128, 0);
  i64 total = 1;
  for (char c : labels) total *= ext[static_cast<std::size_t>(c)];
  for (i64 it = 0; it < total; ++it) {
    i64 rest = it;
    for (auto c = labels.rbegin(); c != labels.rend(); ++c) {
      val[static_cast<std::size_t>(*c)] = rest % ext[static_cast<std::size_t>(*c)];
      rest /= ext[static_cast<std::size_t>(*c)];
    }
    double prod = 1;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      i64 off = 0;
      for (std::size_t d = 0; d < terms[i].size(); ++d) {
        const i64 n = ops[i].shape(static_cast<int>(d));
        off = off * n + (n == 1 ? 0 : val[static_cast<std::size_t>(terms[i][d])]);  // extent 1 broadcasts
      }
      prod *= data[i][static_cast<std::size_t>(off)];
    }
    i64 o = 0;
    for (char c : out) o = o * ext[static_cast<std::size_t>(c)] + val[static_cast<std::size_t>(c)];
    r[static_cast<std::size_t>(o)] += prod;
  }
  return r;
}

Array small_ints(const std::vector<i64>& shape, std::mt19937_64& rng, DType t = DType::int64) {
  i64 n = 1;
  for (i64 e : shape) n *= e;
  std::vector<i64> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<i64>(rng() % 7) - 3;
  return array_of(v, xp::Shape(shape.begin(), shape.end())).astype(t);
}

TEST(NumpyExtras, EinsumMatchesANaiveSumOfProducts) {
  std::mt19937_64 rng(11);
  struct Case {
    std::string subs;
    std::vector<std::vector<i64>> shapes;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}},
      {"ij,jk->ki", {{3, 4}, {4, 5}}},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"ij,ij->ij", {{3, 4}, {3, 4}}},
      {"ij,ij->", {{3, 4}, {3, 4}}},
      {"i,j->ij", {{3}, {4}}},
      {"ii->i", {{4, 4}}},
      {"ii->", {{4, 4}}},
      {"iji->j", {{3, 2, 3}}},
      {"ij->ji", {{3, 4}}},
      {"ij->", {{3, 4}}},
      {"ij->j", {{3, 4}}},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},
      {"ab,bc,cd,da->", {{2, 3}, {3, 4}, {4, 5}, {5, 2}}},
      {"ijk,jil->kl", {{2, 3, 4}, {3, 2, 5}}},
      {"ij,kl->ijkl", {{2, 3}, {1, 2}}},
      {"ij,jk->ik", {{3, 1}, {4, 5}}},  // j broadcasts from 1
      {"ij,ij->ij", {{1, 4}, {3, 4}}},  // i broadcasts from 1
      {"i,i,i->i", {{5}, {5}, {5}}},
      {"ii,i->i", {{3, 3}, {3}}},
      {"abc,cd,bd->ad", {{2, 3, 4}, {4, 5}, {3, 5}}},
      {"ij,jk->ik", {{3, 0}, {0, 5}}},  // an empty sum: zeros
      {"ij,jk->ik", {{0, 2}, {2, 5}}},
      {"->", {{}}},
      {"i,->i", {{4}, {}}},
  };
  for (const Case& c : cases) {
    std::vector<Array> ops;
    for (const auto& s : c.shapes) ops.push_back(small_ints(s, rng));
    std::vector<i64> want_shape;
    const std::vector<double> want = naive_einsum(c.subs, ops, want_shape);
    // int64: exact.
    const Array r = xp::einsum(c.subs, ops);
    EXPECT_EQ(r.dtype(), DType::int64) << c.subs;
    EXPECT_EQ(shape_of(r), want_shape) << c.subs;
    expect_values(r, want, c.subs);
    // float64 of the same small integers: exact too (every partial sum is an integer below 2^53).
    std::vector<Array> fops;
    for (const Array& a : ops) fops.push_back(a.astype(DType::float64));
    const Array f = xp::einsum(c.subs, fops);
    EXPECT_EQ(f.dtype(), DType::float64) << c.subs;
    expect_values(f, want, c.subs + " float64");
  }
}

TEST(NumpyExtras, EinsumImplicitOutputEllipsisDtypesAndViews) {
  std::mt19937_64 rng(12);
  const Array a = small_ints({3, 4}, rng), b = small_ints({4, 5}, rng), v = small_ints({4}, rng);
  // Implicit: letters used once, sorted (upper case first), so "ij,jk" is "ik" and "ji" a transpose.
  EXPECT_TRUE(xp::array_equal(xp::einsum("ij,jk", a, b), xp::matmul(a, b)));
  EXPECT_TRUE(xp::array_equal(xp::einsum("ji", a), xp::permute_dims(a, {1, 0})));
  EXPECT_TRUE(xp::array_equal(xp::einsum("Ba,aA", a, b), xp::permute_dims(xp::matmul(a, b), {1, 0})));
  EXPECT_TRUE(xp::array_equal(xp::einsum("i j , j", a, v), xp::matmul(a, v)));  // spaces are ignored
  const Array sq = small_ints({4, 4}, rng);
  EXPECT_EQ(xp::einsum("ii", sq).item<i64>(), xp::sum(xp::diag(sq)).item<i64>());  // a trace
  EXPECT_EQ(xp::einsum("i,i", v, v).item<i64>(), xp::sum(v * v).item<i64>());
  // Ellipsis: broadcast dimensions, first in an implicit output.
  const Array s = small_ints({2, 3, 4}, rng);
  EXPECT_TRUE(xp::array_equal(xp::einsum("...ij,...jk->...ik", s, b), xp::matmul(s, b)));
  EXPECT_TRUE(xp::array_equal(xp::einsum("...ij,jk", s, b), xp::matmul(s, b)));
  EXPECT_TRUE(xp::array_equal(xp::einsum("i...->...", s), xp::sum(s, 0)));
  EXPECT_TRUE(xp::array_equal(xp::einsum("...j,j->...", s, v), xp::matmul(s, v)));
  const Array bc = small_ints({5, 1, 3, 4}, rng);  // (5, 1) broadcasts against (2,)
  const Array s2 = xp::reshape(s, {2, 4, 3});
  const Array be = xp::einsum("...ij,...jk->...ik", bc, s2);
  EXPECT_EQ(shape_of(be), (std::vector<i64>{5, 2, 3, 3}));
  EXPECT_TRUE(xp::array_equal(be, xp::matmul(bc, s2)));
  EXPECT_EQ(xp::einsum("ij->...", a).item<i64>(), xp::sum(a).item<i64>());
  // Dtypes: promoted once; sums stay in it (int8 wraps as NumPy's: 3 * 100 * 100 = 30000 is 48),
  // bool is the or of ands.
  const Array i8 = xp::full({2, 3}, 100, DType::int8, kCpu), j8 = xp::full({3, 2}, 100, DType::int8, kCpu);
  const Array p8 = xp::einsum("ij,jk->ik", i8, j8);
  EXPECT_EQ(p8.dtype(), DType::int8);
  EXPECT_EQ(p8.to_vector<i64>(), (std::vector<i64>{48, 48, 48, 48}));
  EXPECT_EQ(xp::einsum("ij->i", i8).to_vector<i64>(), (std::vector<i64>{44, 44}));  // 300 wraps to 44
  const Array bl = vec<i64>({0, 1, 0, 0}).astype(DType::bool_).reshape({2, 2});
  const Array bs = xp::einsum("ij,jk->ik", bl, xp::ones({2, 2}, DType::bool_, kCpu));
  EXPECT_EQ(bs.dtype(), DType::bool_);
  EXPECT_EQ(bs.astype(DType::int64).to_vector<i64>(), (std::vector<i64>{1, 1, 0, 0}));
  EXPECT_EQ(xp::einsum("ij,j", a.astype(DType::float32), v.astype(DType::int32)).dtype(), DType::float64);
  EXPECT_EQ(xp::einsum("ij,j", a.astype(DType::float32), v.astype(DType::int8)).dtype(), DType::float32);
  // A non-contiguous view, and the result is never a view of an operand.
  const Array t = xp::permute_dims(a, {1, 0});
  EXPECT_TRUE(xp::array_equal(xp::einsum("ij,jk->ik", t, a), xp::matmul(t, a)));
  Array same = xp::einsum("ij", a);
  same.set({Index(0), Index(0)}, 99);
  EXPECT_NE(a.to_vector<i64>()[0], 99);
}

TEST(NumpyExtras, EinsumErrorsNameTheProblem) {
  const Array a = xp::ones({2, 3}, DType::float64, kCpu);
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const xp::ValueError& e) {
      return e.what();
    }
    return "(no error)";
  };
  auto has = [&](const std::string& subs, const std::vector<Array>& ops, const std::string& text) {
    const std::string m = message([&] { (void)xp::einsum(subs, ops); });
    EXPECT_NE(m.find(text), std::string::npos) << subs << ": " << m;
  };
  has("ij->ii", {a}, "appears more than once");
  has("ij->k", {a}, "never appears in an input");
  has("ijk", {a}, "name 3 dimensions, it has 2");
  has("i", {a}, "no '...'");
  has("i,j", {a}, "fewer operands (1) than terms in the subscripts (2)");
  has("ij", {a, a}, "more operands (2) than terms in the subscripts (1)");
  has("i.j", {a}, "not part of an ellipsis");
  has("i...j...", {a}, "not part of an ellipsis");
  has("ij->i->j", {a}, "more than once");
  has("i>j", {a}, "not part of '->'");
  has("0j", {a}, "invalid subscript '0'");
  has("...i->i", {a}, "no '...' to put them in");
  has("ii", {a}, "don't match (2 != 3)");
  has("i,i", {xp::ones({2}, DType::float64, kCpu), xp::ones({3}, DType::float64, kCpu)}, "do not broadcast");
  has("ij,jk->i,k", {a, a}, "contain a ','");
  EXPECT_THROW((void)xp::einsum("ij", std::vector<Array>{}), xp::ValueError);
}

// ---- on a GPU: the same calls on cuda:0 and on the CPU, bit for bit ----

std::vector<std::uint8_t> bytes_of(const Array& a) {
  const Array c = a.to_device(kCpu).copy();
  std::vector<std::uint8_t> v(static_cast<std::size_t>(c.nbytes()));
  if (!v.empty()) std::memcpy(v.data(), c.data(), v.size());
  return v;
}

void expect_same(const Array& gpu, const Array& cpu, const std::string& what) {
  ASSERT_EQ(gpu.device(), xp::Device::cuda(0)) << what;
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what;
  ASSERT_EQ(shape_of(gpu), shape_of(cpu)) << what;
  if (xp::kind(cpu.dtype()) == xp::DTypeKind::floating) {
    // NaNs as a class: compare the NaN masks, then the other bits.
    const Array gn = xp::isnan(gpu), cn = xp::isnan(cpu);
    ASSERT_EQ(bytes_of(gn), bytes_of(cn)) << what;
    ASSERT_EQ(bytes_of(xp::where(gn, 0, gpu)), bytes_of(xp::where(cn, 0, cpu))) << what;
  } else {
    ASSERT_EQ(bytes_of(gpu), bytes_of(cpu)) << what;
  }
}

// Random doubles with ties, NaNs and infinities.
std::vector<double> random_values(i64 n, std::mt19937_64& rng) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uniform_int_distribution<int> pick(0, 40);
  std::normal_distribution<double> normal(0, 100);
  for (auto& x : v) {
    const int r = pick(rng);
    x = r == 0 ? kNaN : r == 1 ? kInf : r == 2 ? -kInf : r < 10 ? static_cast<double>(r) : normal(rng);
  }
  return v;
}

TEST(NumpyExtrasGpu, ComparisonsAndNanReductionsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device g = xp::Device::cuda(0);
  std::mt19937_64 rng(5);
  for (DType t : {DType::float64, DType::float32, DType::float16, DType::int32}) {
    const auto v = random_values(3000, rng), w = random_values(3000, rng);
    const Array c = array_of(v, {30, 100}).astype(t), d = c.to_device(g);
    const Array c2 = array_of(w, {30, 100}).astype(t), d2 = c2.to_device(g);
    const std::string n(xp::name(t));
    expect_same(xp::isclose(d, d2, 0.1, 1.0), xp::isclose(c, c2, 0.1, 1.0), "isclose " + n);
    expect_same(xp::isclose(d, d, 1e-5, 1e-8, true), xp::isclose(c, c, 1e-5, 1e-8, true), "isclose nan " + n);
    EXPECT_EQ(xp::array_equal(d, d, true), xp::array_equal(c, c, true)) << n;
    EXPECT_EQ(xp::allclose(d, d2), xp::allclose(c, c2)) << n;
    for (int axis : {0, 1}) {
      const std::string what = n + " axis " + std::to_string(axis);
      expect_same(xp::nanmax(d, axis), xp::nanmax(c, axis), "nanmax " + what);
      expect_same(xp::nanmin(d, axis, true), xp::nanmin(c, axis, true), "nanmin " + what);
      if (xp::kind(t) != xp::DTypeKind::floating) {
        expect_same(xp::nansum(d, axis), xp::nansum(c, axis), "nansum " + what);
      } else {  // float sums: the order may differ by device (sum's error bound, docs/semantics.md)
        // The classic bound of a sum of n terms in any order: n * eps * sum |x| (and one rounding).
        const std::vector<double> sd = xp::nansum(d, axis).to_vector<double>();
        const std::vector<double> sc = xp::nansum(c, axis).to_vector<double>();
        const std::vector<double> mag = xp::nansum(xp::abs(c.astype(DType::float64)), axis).to_vector<double>();
        const double eps = xp::finfo(t).eps, terms = static_cast<double>(c.shape(axis));
        ASSERT_EQ(sd.size(), sc.size());
        for (std::size_t i = 0; i < sc.size(); ++i)
          if (std::isfinite(sc[i])) {
            EXPECT_NEAR(sd[i], sc[i], (terms + 1) * eps * mag[i]) << what << " at " << i;
          }
      }
    }
    const Array dc = xp::where(xp::isnan(c), 0, c), dd = xp::where(xp::isnan(d), 0, d);
    expect_same(xp::nanargmax(dd, 1), xp::nanargmax(dc, 1), "nanargmax " + n);
    expect_same(xp::nanargmin(d), xp::nanargmin(c), "nanargmin " + n);
  }
}

TEST(NumpyExtrasGpu, OrderStatisticsCountsAndPaddingMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device g = xp::Device::cuda(0);
  std::mt19937_64 rng(6);
  for (DType t : {DType::float64, DType::float32, DType::int64, DType::uint8}) {
    const auto v = random_values(4000, rng);
    Array c = array_of(v, {40, 100});
    if (xp::kind(t) != xp::DTypeKind::floating) c = xp::where(xp::isfinite(c), xp::abs(c), 3).astype(t);
    c = c.astype(t);
    const Array d = c.to_device(g);
    const std::string n(xp::name(t));
    expect_same(xp::median(d, 1), xp::median(c, 1), "median " + n);
    expect_same(xp::median(d), xp::median(c), "median all " + n);
    const Array qc = array_of(std::vector<double>{0, 0.1, 0.5, 0.77, 1}, {5}), qd = qc.to_device(g);
    expect_same(xp::quantile(d, qd, 0), xp::quantile(c, qc, 0), "quantile " + n);
    expect_same(xp::percentile(d, 33.3, 1, true), xp::percentile(c, 33.3, 1, true), "percentile " + n);
    expect_same(xp::partition(d, {3}, 0), xp::partition(c, {3}, 0), "partition " + n);
    expect_same(xp::argpartition(d, {3}), xp::argpartition(c, {3}), "argpartition " + n);
    expect_same(xp::diag(xp::reshape(d, {40, 100}), 3), xp::diag(xp::reshape(c, {40, 100}), 3), "diag " + n);
    expect_same(xp::diag(d.slice({Index(0)})), xp::diag(c.slice({Index(0)})), "diag 1-D " + n);
    for (const char* mode : {"constant", "edge", "reflect", "symmetric", "wrap"})
      expect_same(xp::pad(d, {{3, 150}, {0, 7}}, mode, 2), xp::pad(c, {{3, 150}, {0, 7}}, mode, 2),
                  std::string("pad ") + mode + " " + n);
    const auto fin = xp::where(xp::isfinite(c.astype(DType::float64)), c.astype(DType::float64), 0);
    const xp::Histogram hc = xp::histogram(fin, 17), hd = xp::histogram(fin.to_device(g), 17);
    expect_same(hd.counts, hc.counts, "histogram counts " + n);
    expect_same(hd.edges, hc.edges, "histogram edges " + n);
  }
  std::vector<i64> ix(20000);
  std::vector<double> w(ix.size());
  for (std::size_t i = 0; i < ix.size(); ++i) {
    ix[i] = static_cast<i64>(rng() % 300);
    w[i] = std::ldexp(static_cast<double>(rng() % 1000000), -static_cast<int>(rng() % 40));
  }
  const Array ic = vec(ix), id = ic.to_device(g), wc = vec(w), wd = wc.to_device(g);
  expect_same(xp::bincount(id), xp::bincount(ic), "bincount");
  expect_same(xp::bincount(id, wd, 400), xp::bincount(ic, wc, 400), "bincount weights");
}

TEST(NumpyExtrasGpu, RandomDrawsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device g = xp::Device::cuda(0);
  xp::random::Generator gc(9), gd(9);
  expect_same(gd.permutation(100000, g), gc.permutation(100000, kCpu), "permutation");
  const Array m = xp::reshape(xp::arange(0, 3000, 1, DType::float32, kCpu), {100, 30});
  expect_same(gd.permutation(m.to_device(g), 1), gc.permutation(m, 1), "permutation of an array");
  Array sc = m.copy(), sd = m.to_device(g);
  gc.shuffle(sc);
  gd.shuffle(sd);
  expect_same(sd, sc, "shuffle");
  expect_same(gd.choice(1000, xp::Shape{10, 20}, true, g), gc.choice(1000, xp::Shape{10, 20}, true, kCpu), "choice");
  expect_same(gd.choice(m.to_device(g), xp::Shape{40}, false), gc.choice(m, xp::Shape{40}, false), "choice without");
  // poisson, binomial and weighted choice invert exact uniform draws through host-made tables.
  expect_same(gd.poisson(3.5, {10000}, g), gc.poisson(3.5, {10000}, kCpu), "poisson");
  expect_same(gd.poisson(1e6, {10000}, g), gc.poisson(1e6, {10000}, kCpu), "poisson large");
  expect_same(gd.binomial(40, 0.3, {10000}, g), gc.binomial(40, 0.3, {10000}, kCpu), "binomial");
  const Array p = vec<double>({0.1, 0.0, 0.4, 0.2, 0.3});
  expect_same(gd.choice(5, xp::Shape{1000}, true, p, g), gc.choice(5, xp::Shape{1000}, true, p, kCpu), "choice p");
  const Array m5 = m.slice({Slice(), Slice(0, 5)}).copy();  // an axis of p's five
  expect_same(gd.choice(m5.to_device(g), xp::Shape{3}, false, p, 1), gc.choice(m5, xp::Shape{3}, false, p, 1),
              "choice p without");
  // gamma goes through normal, log and pow: close, not bit for bit.
  const std::vector<double> gmc = gc.gamma(2.5, 1, {10000}, DType::float64, kCpu).to_vector<double>();
  const std::vector<double> gmd = gd.gamma(2.5, 1, {10000}, DType::float64, g).to_vector<double>();
  ASSERT_EQ(gmc.size(), gmd.size());
  for (std::size_t i = 0; i < gmc.size(); ++i) EXPECT_NEAR(gmd[i], gmc[i], 1e-12 * std::max(1.0, gmc[i])) << i;
  // exponential goes through each device's log1p: close, not bit for bit (docs/semantics.md).
  const std::vector<double> ec = gc.exponential({10000}, DType::float64, 1, kCpu).to_vector<double>();
  const std::vector<double> ed = gd.exponential({10000}, DType::float64, 1, g).to_vector<double>();
  ASSERT_EQ(ec.size(), ed.size());
  for (std::size_t i = 0; i < ec.size(); ++i) EXPECT_NEAR(ed[i], ec[i], 1e-14 * std::max(1.0, ec[i])) << i;
}

TEST(NumpyExtrasGpu, EinsumAndHistogramEdgesMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device g = xp::Device::cuda(0);
  std::mt19937_64 rng(13);
  // Integers: exact on both. Floats: matmul's bound (cuBLAS sums in its own order).
  const Array a = small_ints({6, 7, 8}, rng), b = small_ints({8, 5}, rng), c = small_ints({5, 6}, rng);
  for (const char* subs : {"ijk,kl->ijl", "ijk,kl,li->j", "iji->j", "ijk->kji", "ijk,ijk->"}) {
    std::vector<Array> cpu, gpu;
    const std::string s(subs);
    cpu.push_back(s.rfind("iji", 0) == 0 ? small_ints({6, 7, 6}, rng) : a);
    if (s.find(',') != std::string::npos) cpu.push_back(s.find("ijk,ijk") != std::string::npos ? a : b);
    if (std::count(s.begin(), s.end(), ',') == 2) cpu.push_back(c);
    for (const Array& x : cpu) gpu.push_back(x.to_device(g));
    expect_same(xp::einsum(s, gpu), xp::einsum(s, cpu), s);
    std::vector<Array> fc, fg;
    for (const Array& x : cpu)
      fc.push_back(x.astype(DType::float64)), fg.push_back(x.to_device(g).astype(DType::float64));
    // Small integers in float64: every partial sum is exact, so these agree bit for bit too.
    expect_same(xp::einsum(s, fg), xp::einsum(s, fc), s + " float64");
  }
  const auto v = random_values(5000, rng);
  const Array x = xp::where(xp::isfinite(vec(v)), vec(v), 0);
  const Array edges = vec<double>({-300, -10, 0, 0, 2.5, 9, 400});
  const xp::Histogram hc = xp::histogram(x, edges), hd = xp::histogram(x.to_device(g), edges.to_device(g));
  expect_same(hd.counts, hc.counts, "histogram with edges");
  const xp::Histogram dc = xp::histogram(x, edges, true), dd = xp::histogram(x.to_device(g), edges.to_device(g), true);
  expect_same(dd.counts, dc.counts, "histogram density");
}

}  // namespace
