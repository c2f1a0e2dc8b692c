// NumPy functions beyond the Array API (xp/numpy.hpp): known values (NumPy 2's answers, written
// here), edge cases (empty, 0-d, NaN, views that are not contiguous), the errors; and, on a GPU
// (NumpyExtrasGpu.*, skipped without one), every function on cuda:0 against the CPU bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
  // exponential goes through each device's log1p: close, not bit for bit (docs/semantics.md).
  const std::vector<double> ec = gc.exponential({10000}, DType::float64, 1, kCpu).to_vector<double>();
  const std::vector<double> ed = gd.exponential({10000}, DType::float64, 1, g).to_vector<double>();
  ASSERT_EQ(ec.size(), ed.size());
  for (std::size_t i = 0; i < ec.size(); ++i) EXPECT_NEAR(ed[i], ec[i], 1e-14 * std::max(1.0, ec[i])) << i;
}

}  // namespace
