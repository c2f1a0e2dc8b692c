// The array layer's own behaviour: fusion (one pass, one allocation), graphs that keep their captured
// values when inputs are written later, eager and lazy evaluation agreeing bit for bit, views, bad
// input (typed errors, nothing written), devices never mixed, fork safety, random streams.
// Function-by-function values against NumPy are in test_array_numpy.cpp.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <omp.h>

#include "array/array_impl.hpp"
#include "backend/backend.hpp"
#include "backend/philox.hpp"
#include "cpu_forwarding_backend.hpp"
#include "runtime/parallel.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const Device kCpu = Device::cpu();

Array iota(std::int64_t n, DType t = DType::float32) {
  return arange(Scalar(0), Scalar(n), Scalar(1), t, kCpu);
}

template <class T>
std::vector<std::uint64_t> bits_of(const Array& a) {
  std::vector<T> v = a.to_vector<T>();
  std::vector<std::uint64_t> out;
  for (T x : v) {
    std::uint64_t b = 0;
    std::memcpy(&b, &x, sizeof x);
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) b = ~0ULL;  // NaN as a class
    }
    out.push_back(b);
  }
  return out;
}

// Restores laziness after a test changes it.
struct LazyGuard {
  bool saved = xp::lazy();
  ~LazyGuard() { xp::set_lazy(saved); }
};

}  // namespace

TEST(Fusion, AtimesBplusCIsOnePassWithOneAllocation) {
  random::Generator g(7);
  Array a = g.uniform({100000}, DType::float32, -1, 1, kCpu);
  Array b = g.uniform({100000}, DType::float32, -1, 1, kCpu);
  Array c = g.uniform({100000}, DType::float32, -1, 1, kCpu);
  LazyGuard guard;
  set_lazy(true);
  const std::uint64_t before = detail::cpu_allocations();
  Array d = a * b + c;
  EXPECT_TRUE(d.is_lazy());
  EXPECT_EQ(detail::cpu_allocations(), before) << "building the graph allocated array memory";
  d.eval();
  EXPECT_FALSE(d.is_lazy());
  EXPECT_EQ(detail::cpu_allocations(), before + 1) << "a*b+c must write d once, with no temporary";
  // Rounded multiply, then rounded add (no FMA contraction).
  const auto va = a.to_vector<float>(), vb = b.to_vector<float>(), vc = c.to_vector<float>(), vd = d.to_vector<float>();
  for (std::size_t i = 0; i < va.size(); ++i) {
    volatile float p = va[i] * vb[i];
    const float want = p + vc[i];
    ASSERT_EQ(std::memcmp(&want, &vd[i], 4), 0) << i;
  }
}

TEST(Fusion, ExplicitFmaRoundsOnce) {
  Array a = asarray(std::vector<double>{1.0 + std::ldexp(1.0, -30)}, std::nullopt, kCpu);
  Array c = asarray(std::vector<double>{-(1.0 + std::ldexp(1.0, -29))}, std::nullopt, kCpu);
  const double fused = fma(a, a, c).item<double>();
  const double twice = (a * a + c).item<double>();
  EXPECT_EQ(fused, std::ldexp(1.0, -60));
  EXPECT_EQ(twice, 0.0);
}

TEST(Fusion, GraphsPastTheCapAreCutAndStayCorrect) {
  Array x = ones({1000}, DType::float64, kCpu);
  Array acc = x;
  for (int i = 0; i < 300; ++i) {
    acc = acc + x;
    if (acc.is_lazy()) {
      ASSERT_LE(acc.impl()->node->ops, kMaxFusedOps);
    }
  }
  EXPECT_EQ(acc.to_vector<double>(), std::vector<double>(1000, 301.0));
}

TEST(Fusion, SharedSubexpressionsAndBroadcasting) {
  Array a = reshape(iota(6, DType::float64), {2, 3});
  Array row = asarray(std::vector<double>{10, 20, 30}, std::nullopt, kCpu);
  Array t = a * 2.0;
  Array d = t + t * row;  // t used twice, row broadcast
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{0, 42, 124, 66, 168, 310}));
}

TEST(Aliasing, GraphKeepsValuesWhenInputChangesInPlace) {
  Array a = iota(8, DType::int32);
  Array t = a * 10;  // lazy
  ASSERT_TRUE(t.is_lazy());
  a += 1;
  EXPECT_EQ(t.to_vector<int>(), (std::vector<int>{0, 10, 20, 30, 40, 50, 60, 70}));
  EXPECT_EQ(a.to_vector<int>(), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Aliasing, GraphKeepsValuesWhenWrittenThroughAView) {
  Array a = iota(6, DType::float64);
  Array t = a + 100.0;
  Array v = a.slice({Slice(1, 4)});
  v.assign(0.0);  // writes a[1:4] through the view
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{100, 101, 102, 103, 104, 105}));
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{0, 0, 0, 0, 4, 5}));
}

TEST(Aliasing, GraphKeepsValuesWhenInputIsAnOutOrCopytoTarget) {
  Array a = iota(4, DType::float32), b = iota(4, DType::float32);
  Array t1 = a - 1.0f;
  add(b, 10.0f, a);  // out= a
  Array t2 = a * 1.0f;
  copyto(a, 7.0f);
  Array t3 = a + 0.0f;
  float* p = static_cast<float*>(a.mutable_data());
  p[0] = -1;
  EXPECT_EQ(t1.to_vector<float>(), (std::vector<float>{-1, 0, 1, 2}));
  EXPECT_EQ(t2.to_vector<float>(), (std::vector<float>{10, 11, 12, 13}));
  EXPECT_EQ(t3.to_vector<float>(), (std::vector<float>{7, 7, 7, 7}));
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{-1, 7, 7, 7}));
}

// A graph that reads a lazy array keeps that array's values when it is evaluated later (by eval, a
// reduction, printing, a view) and then written: every way of evaluating it, every way of writing.
TEST(Aliasing, GraphKeepsValuesOfALazyInputEvaluatedAndWrittenLater) {
  const std::vector<std::pair<const char*, std::function<void(Array&)>>> evaluations = {
      {"eval", [](Array& c) { c.eval(); }},
      {"sum", [](Array& c) { (void)sum(c).item<double>(); }},
      {"repr", [](Array& c) { (void)c.repr(); }},
      {"a view", [](Array& c) { (void)c.slice({Slice(0, 2)}); }},
      {"eval with another",
       [](Array& c) {
         eval({c, c * 3.0});
       }},
  };
  const std::vector<std::pair<const char*, std::function<void(Array&)>>> writes = {
      {"+=", [](Array& c) { c += 100.0; }},
      {"a view's assign", [](Array& c) { c.slice({Slice(0, 1)}).assign(50.0); }},
      {"copyto", [](Array& c) { copyto(c, 9.0); }},
      {"mutable_data", [](Array& c) { static_cast<double*>(c.mutable_data())[1] = -1; }},
  };
  for (const auto& [how, evaluate] : evaluations) {
    for (const auto& [write_name, write] : writes) {
      SCOPED_TRACE(std::string(how) + ", then " + write_name);
      Array a = asarray(std::vector<double>{1, 2, 3});
      Array c = a * 2.0;
      Array d = c + 1.0;   // reads c while c is lazy
      Array e = d * 10.0;  // reads d, lazy too
      ASSERT_TRUE(c.is_lazy() && d.is_lazy() && e.is_lazy());
      evaluate(c);
      ASSERT_FALSE(c.is_lazy());
      write(c);
      EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{3, 5, 7}));
      EXPECT_EQ(e.to_vector<double>(), (std::vector<double>{30, 50, 70}));
    }
  }
  // Two levels: c evaluated, then d evaluated, then d written: e keeps d's values.
  Array a = asarray(std::vector<double>{1, 2, 3});
  Array c = a * 2.0, d = c + 1.0, e = d * 10.0;
  c.eval();
  d.eval();
  c += 1.0;
  d += 1.0;
  EXPECT_EQ(e.to_vector<double>(), (std::vector<double>{30, 50, 70}));
}

TEST(Aliasing, OverlappingOutIsComputedFromTheOldValues) {
  // a[1:] += a[:-1] reads the old a, as NumPy (which copies the overlapping input).
  Array a = iota(6, DType::int64);
  Array hi = a.slice({Slice(1, std::nullopt)}), lo = a.slice({Slice(std::nullopt, -1)});
  add(hi, lo, hi);
  EXPECT_EQ(a.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 3, 5, 7, 9}));
  Array r = iota(5, DType::int64);
  copyto(r, flip(r));
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{4, 3, 2, 1, 0}));
}

// Random elementwise graphs over every dtype, evaluated lazily and eagerly: the same bits.
TEST(Fusion, LazyAndEagerAgreeBitForBitOnRandomGraphs) {
  LazyGuard guard;
  std::mt19937_64 rng(1234);
  const DType dtypes[] = {DType::float16, DType::bfloat16, DType::float32, DType::float64, DType::int8,
                          DType::int32,   DType::uint16,   DType::int64,   DType::uint8,   DType::bool_};
  for (int trial = 0; trial < 60; ++trial) {
    const DType t = dtypes[rng() % std::size(dtypes)];
    random::Generator g(static_cast<std::uint64_t>(trial));
    const Shape shape{static_cast<std::int64_t>(1 + rng() % 40), static_cast<std::int64_t>(1 + rng() % 300)};
    Array leaves[3];
    for (auto& l : leaves) {
      Array f = g.normal(shape, DType::float64, 0, 50, kCpu);
      l = f.astype(t);
    }
    const std::uint64_t seed = rng();
    auto build = [&]() {
      std::mt19937_64 r(seed);
      Array x = leaves[0];
      for (int depth = 0; depth < 8; ++depth) {
        const Array& y = leaves[r() % 3];
        const bool is_float = kind(x.dtype()) == DTypeKind::floating;
        switch (r() % (is_float ? 9 : 6)) {
          case 0:
            x = x + y;
            break;
          case 1:
            x = x * y;
            break;
          case 2:
            x = maximum(x, y);
            break;
          case 3:
            x = where(x > y, x, y);
            break;
          case 4:
            x = x.dtype() == DType::bool_ ? logical_xor(x, y) : x - (y * 2);
            break;
          case 5:
            x = minimum(x, 3);
            break;
          case 6:
            x = sin(x) + sqrt(abs(y));
            break;
          case 7:
            x = x / (abs(y) + 1);
            break;
          default:
            x = exp(x * 0.01) - floor(y);
            break;
        }
      }
      return x;
    };
    set_lazy(true);
    Array lazy_result = build();
    lazy_result.eval();
    set_lazy(false);
    Array eager_result = build();
    ASSERT_FALSE(eager_result.is_lazy());
    ASSERT_EQ(lazy_result.dtype(), eager_result.dtype());
    ASSERT_EQ(bits_of<double>(lazy_result.astype(DType::float64)), bits_of<double>(eager_result.astype(DType::float64)))
        << "trial " << trial << " dtype " << name(t);
  }
}

TEST(Views, SlicesShareMemoryAndAssignThrough) {
  Array a = reshape(iota(12, DType::int32), {3, 4});
  Array col = a.slice({Slice(), 1});
  EXPECT_EQ(col.to_vector<int>(), (std::vector<int>{1, 5, 9}));
  a.slice({Slice(), 1}) = asarray(std::vector<int>{-1, -2, -3}, std::nullopt, kCpu);
  EXPECT_EQ(a.to_vector<int>(), (std::vector<int>{0, -1, 2, 3, 4, -2, 6, 7, 8, -3, 10, 11}));
  a[0] = 100;
  EXPECT_EQ(a.slice({0}).to_vector<int>(), (std::vector<int>{100, 100, 100, 100}));
  Array rev = a.slice({Slice(std::nullopt, std::nullopt, -1), Slice(3, 0, -2)});
  EXPECT_EQ(rev.shape()[0], 3);
  EXPECT_EQ(rev.to_vector<int>(), (std::vector<int>{11, -3, 7, -2, 100, 100}));
  Array na = a.slice({newaxis, ellipsis, newaxis});
  EXPECT_EQ(std::vector<std::int64_t>(na.shape().begin(), na.shape().end()), (std::vector<std::int64_t>{1, 3, 4, 1}));
  EXPECT_EQ(a.slice({Slice(10, 20)}).size(), 0);  // clamped as NumPy
}

TEST(Views, ReshapeIsAViewWhenPossibleAndACopyOtherwise) {
  Array a = iota(24, DType::float32);
  Array r = reshape(a, {2, -1, 4});
  EXPECT_EQ(r.shape()[1], 3);
  EXPECT_EQ(r.impl()->storage, a.impl()->storage);
  Array t = reshape(a, {4, 6}).T();  // not C-contiguous: reshape copies
  Array r2 = reshape(t, {24});
  EXPECT_NE(r2.impl()->storage, a.impl()->storage);
  EXPECT_EQ(r2.to_vector<float>()[1], 6.0f);
  Array s =
      reshape(a, {4, 6}).slice({Slice(), Slice(std::nullopt, std::nullopt, 2)});  // strided: (4,3) -> (2,2,3) is a view
  Array s2 = reshape(s, {2, 2, 3});
  EXPECT_EQ(s2.impl()->storage, a.impl()->storage);
  EXPECT_EQ(s2.to_vector<float>(), s.to_vector<float>());
}

TEST(Views, PermuteExpandSqueezeBroadcastFlip) {
  Array a = reshape(iota(6, DType::int16), {2, 3});
  EXPECT_EQ(permute_dims(a, {1, 0}).to_vector<short>(), (std::vector<short>{0, 3, 1, 4, 2, 5}));
  Array e = expand_dims(a, -1);
  EXPECT_EQ(e.ndim(), 3);
  EXPECT_EQ(squeeze(e).ndim(), 2);
  Array b = broadcast_to(asarray(std::vector<short>{1, 2, 3}, std::nullopt, kCpu), {4, 3});
  EXPECT_EQ(b.strides()[0], 0);
  EXPECT_EQ(sum(b).item<long long>(), 24);
  EXPECT_EQ(flip(a, 1).to_vector<short>(), (std::vector<short>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(flip(a).to_vector<short>(), (std::vector<short>{5, 4, 3, 2, 1, 0}));
}

TEST(Views, WrapKeepsItsOwnerAliveAndReadOnlyRefusesWrites) {
  auto holder = std::make_shared<std::vector<double>>(std::vector<double>{1, 2, 3});
  std::weak_ptr<std::vector<double>> watch = holder;
  Array w = wrap(holder->data(), DType::float64, {3}, holder);
  holder.reset();
  EXPECT_FALSE(watch.expired());
  w *= 2.0;
  EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{2, 4, 6}));
  w = Array();
  EXPECT_TRUE(watch.expired());

  std::vector<float> data{1, 2};
  Array ro = wrap(data.data(), DType::float32, {2}, nullptr, std::nullopt, true);
  EXPECT_THROW(ro += 1.0f, ValueError);
  EXPECT_THROW(ro.mutable_data(), ValueError);
  EXPECT_EQ(data, (std::vector<float>{1, 2}));
  EXPECT_EQ((ro + 1.0f).to_vector<float>(), (std::vector<float>{2, 3}));
}

TEST(BadInput, BroadcastMismatchShowsBothShapes) {
  Array a = zeros({2, 3}, DType::float32, kCpu), b = zeros({4}, DType::float32, kCpu);
  try {
    (void)(a + b);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 3)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(4,)"), std::string::npos) << e.what();
  }
}

// Counts at the edge of int64: NumPy's answer or a typed error, never a wrapped count, a
// std::bad_alloc or std::length_error.
TEST(BadInput, RangesSlicesAndShapesAtTheEdgeOfInt64) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  // arange: the length without overflow, the elements exact.
  Array r = arange(Scalar(std::int64_t{0}), Scalar(kMax), Scalar(kMax / 2 + 1));
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, kMax / 2 + 1}));
  r = arange(Scalar(std::int64_t{-1}), Scalar(kMax), Scalar(kMax));
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{-1, kMax - 1}));
  r = arange(Scalar(kMax), Scalar(kMin), Scalar(kMin));
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{kMax, -1}));
  r = arange(Scalar(std::int64_t{5}), Scalar(kMin), Scalar(std::int64_t{-3} << 61));
  EXPECT_EQ(r.to_vector<std::int64_t>(), (std::vector<std::int64_t>{5, 5 - (std::int64_t{3} << 61)}));
  // Past INT64_MAX, as NumPy: exact in uint64 when asked for, float64 without a dtype.
  constexpr std::uint64_t kB = std::uint64_t{1} << 63, kUMax = ~std::uint64_t{0};
  r = arange(Scalar(kB + 1), Scalar(kB + 4), Scalar(1), DType::uint64);
  EXPECT_EQ(r.to_vector<std::uint64_t>(), (std::vector<std::uint64_t>{kB + 1, kB + 2, kB + 3}));
  r = arange(Scalar(kUMax), Scalar(kUMax - 5), Scalar(-1), DType::uint64);
  EXPECT_EQ(r.to_vector<std::uint64_t>(),
            (std::vector<std::uint64_t>{kUMax, kUMax - 1, kUMax - 2, kUMax - 3, kUMax - 4}));
  r = arange(Scalar(std::int64_t{0}), Scalar(kUMax), Scalar(kB));
  EXPECT_EQ(r.dtype(), DType::float64);
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{0, 0x1p63}));
  r = arange(Scalar(kB + 1), Scalar(kB + 4));
  EXPECT_EQ(r.dtype(), DType::float64);
  EXPECT_EQ(r.size(), 3);
  // An integer dtype: start must fit it, the elements wrap in it (NumPy's arange(250, 260, dtype=uint8)).
  EXPECT_THROW(arange(Scalar(-3), Scalar(3), Scalar(1), DType::uint8), TypeError);
  EXPECT_EQ(arange(Scalar(250), Scalar(260), Scalar(1), DType::uint8).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{250, 251, 252, 253, 254, 255, 0, 1, 2, 3}));
  EXPECT_EQ(arange(Scalar(5), Scalar(0), Scalar(-1), DType::uint8).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{5, 4, 3, 2, 1}));
  // Too many elements: "array is too big" (ValueError); more than the host has: OutOfMemory.
  EXPECT_THROW(arange(Scalar(std::int64_t{-1}), Scalar(kMax), Scalar(std::int64_t{2})), ValueError);
  EXPECT_THROW(arange(Scalar(0.0), Scalar(1e19)), ValueError);
  EXPECT_THROW(arange(Scalar(0.0), Scalar(1e300), Scalar(1e-300)), ValueError);
  EXPECT_THROW(linspace(0, 1, std::int64_t{1} << 62), ValueError);
  EXPECT_THROW(eye(std::int64_t{1} << 40), ValueError);
  // A complex dtype keeps the values (they were floored as for integers).
  EXPECT_EQ(linspace(0, 1, 5, true, DType::complex128).to_vector<std::complex<double>>(),
            (std::vector<std::complex<double>>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(linspace(0, 4, 5, false, DType::complex64).to_vector<std::complex<float>>(),
            (std::vector<std::complex<float>>{0, 0.8f, 1.6f, 2.4f, 3.2f}));
  try {
    (void)arange(Scalar(std::int64_t{0}), Scalar(std::int64_t{1} << 58));
    ADD_FAILURE() << "2^58 int64 values were made";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.requested(), std::uint64_t{8} << 58);
  }
  // Slices with steps of INT64_MAX and INT64_MIN: one element, as Python.
  Array a = iota(10, DType::int64);
  EXPECT_EQ(a.slice({Slice(0, 10, kMax)}).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(a.slice({Slice(std::nullopt, std::nullopt, kMin)}).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{9}));
  EXPECT_EQ(a.slice({Slice(3, std::nullopt, kMax - 1)}).to_vector<std::int64_t>(), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(a.slice({Slice(8, 1, kMin + 1)}).to_vector<std::int64_t>(), (std::vector<std::int64_t>{8}));
  // Shapes: the product of the nonzero dimensions must fit, as in NumPy, even with a 0 among them.
  EXPECT_THROW(zeros({0, std::int64_t{1} << 62, std::int64_t{1} << 62}), ValueError);
  EXPECT_EQ(zeros({std::int64_t{1} << 40, 0}, DType::bool_).size(), 0);
  EXPECT_EQ(zeros({0, std::int64_t{1} << 40, 3}).strides()[1], 24);
}

// A signed integer against uint64 (which promotes to float64) compares the exact values, as NumPy 2:
// 2^53 + 1 and 2^53, or INT64_MAX and 2^63, are told apart; a negative value is below every uint64.
TEST(Comparisons, SignedIntegersAgainstUint64AreExact) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> s = {(std::int64_t{1} << 53) + 1, kMax,     -1, 0, kMax,
                                       std::int64_t{1} << 53,       -kMax - 1};
  const std::vector<std::uint64_t> u = {std::uint64_t{1} << 53,
                                        std::uint64_t{1} << 63,
                                        ~std::uint64_t{0},
                                        0,
                                        static_cast<std::uint64_t>(kMax),
                                        (std::uint64_t{1} << 53) + 1,
                                        0};
  const Array a = asarray(s), b = asarray(u);
  using Cmp = std::function<Array(const Array&, const Array&)>;
  const std::vector<std::pair<const char*, Cmp>> ops = {
      {"==", [](const Array& x, const Array& y) { return x == y; }},
      {"!=", [](const Array& x, const Array& y) { return x != y; }},
      {"<", [](const Array& x, const Array& y) { return x < y; }},
      {"<=", [](const Array& x, const Array& y) { return x <= y; }},
      {">", [](const Array& x, const Array& y) { return x > y; }},
      {">=", [](const Array& x, const Array& y) { return x >= y; }},
  };
  // The exact answer, from the mathematical values.
  const auto exact = [&](const char* op, std::size_t i, bool swapped) {
    const __int128 x = swapped ? static_cast<__int128>(u[i]) : static_cast<__int128>(s[i]);
    const __int128 y = swapped ? static_cast<__int128>(s[i]) : static_cast<__int128>(u[i]);
    const std::string o = op;
    if (o == "==") return x == y;
    if (o == "!=") return x != y;
    if (o == "<") return x < y;
    if (o == "<=") return x <= y;
    if (o == ">") return x > y;
    return x >= y;
  };
  for (const auto& [op, f] : ops) {
    for (bool swapped : {false, true}) {
      for (const DType st : {DType::int64, DType::int32, DType::int8}) {
        SCOPED_TRACE(std::string(op) + (swapped ? " uint64 first, " : " signed first, ") + std::string(name(st)));
        const Array sa = a.astype(st);
        const std::vector<std::int64_t> sv = sa.astype(DType::int64).to_vector<std::int64_t>();
        const Array r = swapped ? f(b, sa) : f(sa, b);
        ASSERT_EQ(r.dtype(), DType::bool_);
        const std::vector<std::uint8_t> got = r.to_vector<std::uint8_t>();
        for (std::size_t i = 0; i < s.size(); ++i) {
          const __int128 x = swapped ? static_cast<__int128>(u[i]) : static_cast<__int128>(sv[i]);
          const __int128 y = swapped ? static_cast<__int128>(sv[i]) : static_cast<__int128>(u[i]);
          const std::string o = op;
          const bool want = o == "=="   ? x == y
                            : o == "!=" ? x != y
                            : o == "<"  ? x < y
                            : o == "<=" ? x <= y
                            : o == ">"  ? x > y
                                        : x >= y;
          EXPECT_EQ(got[i] != 0, want) << "element " << i;
        }
        if (st == DType::int64) {
          for (std::size_t i = 0; i < s.size(); ++i) EXPECT_EQ(got[i] != 0, exact(op, i, swapped)) << "element " << i;
        }
      }
    }
  }
  // Broadcast, and fused into a larger graph.
  const Array col = reshape(a, {7, 1});
  EXPECT_EQ(sum(col < b).item<std::int64_t>(), 30);  // counted exactly in Python
  EXPECT_EQ((where(a >= b, a, a * 0) + 1).to_vector<std::int64_t>()[1], 1) << "INT64_MAX < 2^63";
}

// The contracted axis of vecdot is not broadcast; writes to a broadcast view are refused (NumPy's
// broadcast_to is read-only): which write landed would depend on the order.
TEST(BadInput, VecdotsAxisAndBroadcastViewsAsNumPy) {
  EXPECT_THROW(vecdot(ones({3}), ones({1})), ValueError);
  EXPECT_THROW(vecdot(ones({2, 3}), ones({2, 1})), ValueError);
  EXPECT_EQ(vecdot(ones({2, 3}), ones({3})).to_vector<double>(), (std::vector<double>{3, 3}));  // others broadcast
  EXPECT_THROW(vecdot(ones({2, 3}), ones({1, 3}), 0), ValueError);
  EXPECT_EQ(vecdot(ones({2, 3}), ones({2, 1}), 0).to_vector<double>(), (std::vector<double>{2, 2, 2}));
  Array x = zeros({3});
  Array b = broadcast_to(x, {1000, 3});
  EXPECT_THROW(add(b, 1.0, b), ValueError);
  EXPECT_THROW(copyto(b, 5.0), ValueError);
  EXPECT_THROW(b += 1.0, ValueError);
  EXPECT_THROW(b.slice({Slice(0, 2)}).assign(1.0), ValueError);
  // One element of the view is every element of its broadcast axis, and the source's: set() checks
  // the whole view before indexing it (b[1, 0] = 100 wrote x[0] before).
  EXPECT_THROW(b.set({1, 0}, 100.0), ValueError);
  EXPECT_THROW(b.set({Index(0)}, 100.0), ValueError);
  EXPECT_THROW(b.set({Index(asarray(std::vector<std::int64_t>{0, 2}))}, 100.0), ValueError);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0, 0, 0})) << "nothing written";
  // copyto's same_kind: no integer into bool (NumPy's copyto refuses even 1); flip's axes distinct.
  Array flags = zeros({2}, DType::bool_);
  EXPECT_THROW(copyto(flags, 2), TypeError);
  EXPECT_THROW(flags.assign(1), TypeError);
  copyto(flags, true);
  EXPECT_EQ(flags.to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 1}));
  EXPECT_THROW(flip(zeros({2, 3}), {0, 0}), ValueError);
  EXPECT_THROW(flip(zeros({2, 3}), {1, -1}), ValueError);
  // A zero step along an axis of one element names nothing twice: allowed.
  Array one = broadcast_to(x, {1, 3});
  one += 2.0;
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{2, 2, 2}));
  // Nor does an empty view, whatever its steps: writing to it does nothing (as NumPy), where a zero
  // step along an axis of 4 was refused (an empty array imported from NumPy had such steps).
  Array none = broadcast_to(zeros({0, 1}), {0, 4});
  EXPECT_NO_THROW(none.assign(3.0));
  EXPECT_NO_THROW(copyto(none, 5.0));
  EXPECT_EQ(none.size(), 0);
}

TEST(BadInput, TypedErrorsAndNothingWrittenToOut) {
  Array f = ones({3}, DType::float32, kCpu);
  Array i = ones({3}, DType::int32, kCpu);
  Array u8 = ones({3}, DType::uint8, kCpu);
  EXPECT_THROW((void)bitwise_and(f, f), TypeError);
  EXPECT_THROW((void)(u8 + 300), TypeError);
  EXPECT_THROW((void)(u8 + -1), TypeError);
  EXPECT_EQ((u8 + 255).dtype(), DType::uint8);
  // An integer that does not fit the integer dtype it must take is an OverflowError (a TypeError),
  // as NumPy raises OverflowError there: operators, full, arange, copyto.
  EXPECT_THROW((void)(u8 + 300), OverflowError);
  EXPECT_THROW((void)(i * Scalar(std::uint64_t{1} << 63)), OverflowError);
  EXPECT_THROW(full({2}, 300, DType::uint8, kCpu), OverflowError);
  EXPECT_THROW(arange(Scalar(-3), Scalar(5), Scalar(1), DType::uint8, kCpu), OverflowError);
  EXPECT_THROW(arange(Scalar(0.0), Scalar(1e16), Scalar(4e15), DType::int32, kCpu), OverflowError);
  EXPECT_THROW(copyto(u8, 256), OverflowError);
  EXPECT_THROW((void)bitwise_and(f, f), TypeError);
  try {
    (void)bitwise_and(f, f);
  } catch (const OverflowError&) {
    ADD_FAILURE() << "an unsupported dtype is a TypeError, not an OverflowError";
  } catch (const TypeError&) {
  }
  EXPECT_EQ(u8.to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 1, 1}));  // nothing written
  EXPECT_THROW((void)negative(ones({2}, DType::bool_, kCpu)), TypeError);
  EXPECT_THROW(sum(f, 1), ValueError);
  EXPECT_THROW(sum(f, {0, 0}), ValueError);
  EXPECT_THROW(reshape(f, {2, 2}), ValueError);
  EXPECT_THROW(f.slice({3}), IndexError);
  EXPECT_THROW(f.slice({0, 0}), IndexError);
  EXPECT_THROW(f.slice({Slice(0, 2, 0)}), ValueError);
  EXPECT_THROW(take(f, asarray(std::vector<std::int64_t>{0, 3}, std::nullopt, kCpu)), IndexError);
  EXPECT_THROW(take(f, ones({2}, DType::bool_, kCpu)), TypeError);  // integers only (docs/semantics.md)
  EXPECT_THROW((void)matmul(ones({2, 3}, DType::float32, kCpu), ones({2, 3}, DType::float32, kCpu)), ValueError);
  // out= of the wrong dtype or shape: an error before anything is written.
  Array out_i = full({3}, 5, DType::int32, kCpu);
  EXPECT_THROW(add(f, f, out_i), TypeError);
  EXPECT_EQ(out_i.to_vector<int>(), (std::vector<int>{5, 5, 5}));
  Array out_s = full({4}, 5.0, DType::float32, kCpu);
  EXPECT_THROW(add(f, f, out_s), ValueError);
  EXPECT_EQ(out_s.to_vector<float>(), std::vector<float>(4, 5.0f));
  EXPECT_THROW(i += 1.5, TypeError);
  EXPECT_EQ(i.to_vector<int>(), std::vector<int>(3, 1));
  Array wide = zeros({3}, DType::float64, kCpu);
  add(i, i, wide);  // int32 -> float64 is same_kind
  EXPECT_EQ(wide.to_vector<double>(), std::vector<double>(3, 2.0));
  EXPECT_THROW((void)Array().dtype(), ValueError);
}

TEST(BadInput, AllocationFailureIsOutOfMemoryWithTheBytes) {
  try {
    (void)empty({std::int64_t{1} << 52}, DType::uint8, kCpu);
    FAIL() << "no error";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.requested(), std::uint64_t{1} << 52);
    EXPECT_NE(std::string(e.what()).find(std::to_string(std::uint64_t{1} << 52)), std::string::npos);
  }
  EXPECT_THROW((void)empty({-1}, DType::uint8, kCpu), ValueError);
  EXPECT_THROW((void)empty({std::int64_t{1} << 40, std::int64_t{1} << 40}, DType::uint8, kCpu), ValueError);
}

TEST(BadInput, CorruptNpyIsAFileErrorAndSaveIsAtomic) {
  xp_test::TempDir dir;
  const std::string path = dir.path() + "/bad.npy";
  std::ofstream(path) << "\x93NUMPY\x01\x00garbage";
  EXPECT_THROW((void)load(path, kCpu), FileError);
  Array a = reshape(iota(6, DType::float32), {2, 3}).T();
  save(dir.path() + "/a.npy", a);
  Array b = load(dir.path() + "/a.npy", kCpu);
  EXPECT_EQ(b.to_vector<float>(), a.to_vector<float>());
  EXPECT_THROW(save(dir.path() + "/missing/x.npy", a), FileError);
}

namespace {
// A second device for the tests: the CPU's loops behind the name cuda:0.
class SecondDevice final : public xp_test::CpuForwardingBackend {
 public:
  const char* name() const noexcept override { return "second"; }
  void matmul(const View& a, const View& b, const View& out, MatmulPrecision p) override {
    precisions.push_back(p);
    cpu.matmul(a, b, out, p);
  }
  void copy_to_host(const std::byte* s, void* d, std::size_t n) override {
    ++copies;
    cpu.copy_to_host(s, d, n);
  }
  void copy_from_host(const void* s, std::byte* d, std::size_t n) override {
    ++copies;
    cpu.copy_from_host(s, d, n);
  }
  int copies = 0;
  std::vector<MatmulPrecision> precisions;  // of each matmul call, in order
};
}  // namespace

TEST(Devices, NeverMixedSilently) {
  SecondDevice second;
  const Device other = Device::cuda(0);
  detail::register_backend(other, &second);
  Array g = ones({3}, DType::float32, other);
  Array c = ones({3}, DType::float32, kCpu);
  const int copies = second.copies;
  try {
    (void)(g + c);
    FAIL() << "no error";
  } catch (const DeviceMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos) << e.what();
  }
  EXPECT_THROW(copyto(c, g), DeviceMismatch);
  EXPECT_THROW((void)matmul(reshape(g, {1, 3}), reshape(c, {3, 1})), DeviceMismatch);
  EXPECT_THROW((void)concat({g, c}), DeviceMismatch);
  EXPECT_EQ(second.copies, copies) << "something was copied between devices";
  Array moved = g.to_device(kCpu);  // explicit: fine
  EXPECT_EQ((moved + c).to_vector<float>(), std::vector<float>(3, 2.0f));
  detail::register_backend(other, nullptr);
}

// The array layer hands matmul's precision to the device's backend, for every operand form; vecdot
// calls no matmul. (The CPU backend behind this device computes tf32 as float32.)
TEST(Devices, MatmulPrecisionReachesTheBackend) {
  SecondDevice second;
  const Device other = Device::cuda(0);
  detail::register_backend(other, &second);
  Array m = reshape(arange(Scalar(0), Scalar(12), Scalar(1), DType::float32, other), {3, 4});
  Array v = arange(Scalar(0), Scalar(4), Scalar(1), DType::float32, other);
  const auto T = MatmulPrecision::tf32, F = MatmulPrecision::float32;
  (void)matmul(m, m.T());
  (void)matmul(m, m.T(), T);
  (void)matmul(m, m.T(), F);
  (void)matmul(m * 2.0f, v, T);                      // lazy, 1-D
  (void)matmul(v, m.T(), T);                         // 1-D first
  (void)matmul(reshape(m, {1, 3, 4}), m.T(), T);     // batched
  (void)matmul(m.astype(DType::float16), m.T(), T);  // promoted to float32
  (void)matmul(m.astype(DType::int32), m.T().astype(DType::int32), T);
  (void)vecdot(m, m);
  EXPECT_EQ(second.precisions, (std::vector<MatmulPrecision>{F, T, F, T, T, T, T, T}));
  EXPECT_EQ(matmul(m, m.T(), T).to_vector<float>(), matmul(m, m.T()).to_vector<float>());
  detail::register_backend(other, nullptr);
}

TEST(Threads, ReductionsGiveTheSameBitsForAnyThreadCount) {
  random::Generator g(3);
  Array x = g.normal({1 << 20}, DType::float32, 0, 1, kCpu);
  const int saved = num_threads();
  std::vector<std::uint64_t> first;
  for (int t : {1, 2, 3, 8}) {
    set_num_threads(t);
    Array r = concat({sum(x, {}, true), mean(x, {}, true), var(x, {}, 0, true), xp::std(x, {}, 1, true)});
    const auto b = bits_of<float>(r);
    if (first.empty()) first = b;
    EXPECT_EQ(b, first) << t << " threads";
  }
  set_num_threads(saved);
  EXPECT_THROW(set_num_threads(0), ValueError);
}

// Two threads build lazy arrays from one input they share (allowed: reading an array from several
// threads) and evaluate them at their own pace. Each new reader of the input's memory prunes the
// list of readers, which looks at the other thread's arrays: whether they are still lazy is read
// from an atomic flag (ArrayImpl::evaluated), never from the node their thread resets. The values
// and the pruning are checked; the next test makes the race itself visible to ThreadSanitizer.
TEST(Threads, TwoThreadsGraphsReadingOneInputEvaluateIndependently) {
  Array x = arange(0, 64, 1, DType::float32, kCpu);
  x.eval();
  std::atomic<int> wrong{0};
  auto work = [&](float k) {
    std::vector<std::pair<Array, int>> pending;
    for (int i = 0; i < 2000; ++i) {
      pending.emplace_back(x * k + static_cast<float>(i), i);
      if (pending.size() == 24) {  // evaluate one, drop the rest
        const auto& [a, j] = pending[12];
        if (a.slice({5}).item<float>() != 5.0f * k + static_cast<float>(j)) ++wrong;
        pending.clear();
      }
    }
  };
  std::thread t1(work, 2.0f), t2(work, 3.0f);
  t1.join();
  t2.join();
  EXPECT_EQ(wrong.load(), 0);
  // Every reader above is evaluated or destroyed: the next reader prunes the list to itself.
  const detail::ImplPtr& xi = detail::impl_of(x);
  std::vector<Array> keep;
  for (int i = 0; i < 17; ++i) keep.push_back(x + 1.0f);
  for (auto& a : keep) a.eval();
  const Array last = x + 2.0f;
  std::lock_guard<detail::SpinLock> lock(xi->storage->mutex);
  EXPECT_EQ(xi->storage->readers.size(), 1u);
}

// The same race as above, caught by ThreadSanitizer on every run: thread A keeps adding readers of
// x (each one makes x's storage prune its list, which holds B's array) while thread B evaluates its
// reader of x and so resets that array's lazy node. They coordinate through relaxed atomics alone,
// so nothing orders A's checks before B's reset. Reading B's node there (the code before the
// `evaluated` flag) is a data race TSan reports; reading the flag is not. Everywhere, the values
// and the pruning of B's evaluated array are checked. One thread per evaluation throughout:
// OpenMP's own synchronization is not visible to TSan.
TEST(Threads, TwoThreadsPruneWhileAnotherThreadEvaluates) {
  const int saved = num_threads();
  set_num_threads(1);
  Array x = arange(0, 4096, 1, DType::float32, kCpu) * 1e-3f;
  x.eval();
  const detail::ImplPtr& xi = detail::impl_of(x);
  std::atomic<bool> a_running{false}, b_done{false};
  std::optional<Array> y;  // B's array, kept alive until the end
  std::thread b([&] {
    Array t = x * 3.0f;  // a direct reader of x's storage (a deeper graph's readers are its inner nodes)
    // Lazy readers of t: its evaluation hands them on to its new storage after the kernel has run
    // and before the node is reset, which widens the window in which A looks at t.
    std::vector<Array> zs;
    for (int i = 0; i < 600; ++i) zs.push_back(t + static_cast<float>(i));
    while (!a_running.load(std::memory_order_relaxed)) std::this_thread::yield();
    t.eval();
    b_done.store(true, std::memory_order_relaxed);
    y = std::move(t);
  });
  std::thread a([&] {
    std::vector<Array> keep;
    for (int i = 0; i < 14; ++i) keep.push_back(x + static_cast<float>(i));  // with B's: 15 readers
    a_running.store(true, std::memory_order_relaxed);
    while (!b_done.load(std::memory_order_relaxed)) {
      Array r = x - 1.0f;  // the 16th reader: the next one prunes the list, B's array included
    }
  });
  a.join();
  b.join();
  EXPECT_EQ(bits_of<float>(*y), bits_of<float>(x * 3.0f));
  // Enough lazy readers to prune the list once more: B's evaluated array is dropped from it.
  std::vector<Array> keep;
  for (int i = 0; i < 17; ++i) keep.push_back(x + 1.0f);
  {
    std::lock_guard<detail::SpinLock> lock(xi->storage->mutex);
    std::size_t lazy_readers = 0;
    for (const auto& w : xi->storage->readers) {
      const detail::ImplPtr p = w.lock();
      EXPECT_NE(p.get(), detail::impl_of(*y).get());
      lazy_readers += p && p->lazy() ? 1 : 0;
    }
    EXPECT_EQ(lazy_readers, 17u);
  }
  set_num_threads(saved);
}

TEST(Threads, ChildAfterForkDoesNotHang) {
  random::Generator g(5);
  Array x = g.uniform({1 << 22}, DType::float32, 0, 1, kCpu);
  const float parent = sum(x * 2.0f).item<float>();  // starts the thread pool
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);  // a hang becomes SIGALRM
    const float child = sum(x * 2.0f).item<float>();
    _exit(child == parent ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child computed a different sum";
}

TEST(Random, SeededStreamsReproduceAndMatchTheBackendCore) {
  random::Generator g1(42), g2(42);
  Array a = g1.uniform({1000}, DType::float32, 0, 1, kCpu);
  Array b = g2.uniform({1000}, DType::float32, 0, 1, kCpu);
  EXPECT_EQ(bits_of<float>(a), bits_of<float>(b));
  Array c = g1.uniform({1000}, DType::float32, 0, 1, kCpu);  // the next draw: different numbers
  EXPECT_NE(bits_of<float>(a), bits_of<float>(c));
  std::vector<float> core(1000);
  philox::fill_uniform({42, 0}, 0, std::span<float>(core));
  EXPECT_EQ(a.to_vector<float>(), core);
  Array ints = g1.integers(-5, 5, {10000}, DType::int8, kCpu);
  EXPECT_GE(min(ints).item<int>(), -5);
  EXPECT_LE(max(ints).item<int>(), 4);
  EXPECT_THROW(g1.integers(0, 300, {3}, DType::uint8, kCpu), ValueError);
  EXPECT_THROW(g1.uniform({3}, DType::int32, 0, 1, kCpu), TypeError);
  Array n = g1.normal({200000}, DType::float64, 3, 2, kCpu);
  EXPECT_NEAR(mean(n).item<double>(), 3.0, 0.03);
  EXPECT_NEAR(xp::std(n).item<double>(), 2.0, 0.03);
}

TEST(Conversions, ItemAndToVectorConvertAsAstype) {
  Array a = asarray(std::vector<double>{1.5, -2.5, 1e300, std::nan("")}, std::nullopt, kCpu);
  EXPECT_EQ(a.to_vector<int>(), (std::vector<int>{1, -2, 2147483647, 0}));
  EXPECT_EQ(a.slice({0}).item<float>(), 1.5f);
  EXPECT_THROW(a.item<double>(), ValueError);
  Array h = asarray(std::vector<float>{1.0f / 3}, std::nullopt, kCpu).astype(DType::float16);
  EXPECT_EQ(h.item<float16>().bits, 0x3555);
}

TEST(Fusion, EvalOfSeveralArraysIsOnePassWithSharedSubexpressions) {
  random::Generator g(9);
  Array a = g.uniform({5000}, DType::float64, 0, 1, kCpu);
  Array t = exp(a);
  Array x = t + 1.0, y = t * 2.0, z = sum(a, {}, true);  // z is already evaluated
  const std::uint64_t before = detail::cpu_allocations();
  eval({x, y, z});
  EXPECT_EQ(detail::cpu_allocations(), before + 2) << "x and y: one block each, no temporary for t";
  EXPECT_FALSE(x.is_lazy());
  EXPECT_FALSE(y.is_lazy());
  EXPECT_TRUE(t.is_lazy());
  const auto vt = t.to_vector<double>(), vx = x.to_vector<double>(), vy = y.to_vector<double>();
  for (std::size_t i = 0; i < vt.size(); ++i) {
    ASSERT_EQ(vx[i], vt[i] + 1.0);
    ASSERT_EQ(vy[i], vt[i] * 2.0);
  }
}

TEST(Threads, ParallelForNeverRunsMoreThreadsThanAsked) {
  const int saved = num_threads();
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    std::atomic<int> widest{0};
    std::mutex m;
    std::set<std::thread::id> ids;
    detail::parallel_for(1 << 16, 1, [&](std::int64_t, std::int64_t) {
      int now = omp_get_num_threads();
      int w = widest.load();
      while (now > w && !widest.compare_exchange_weak(w, now)) {
      }
      std::lock_guard<std::mutex> lock(m);
      ids.insert(std::this_thread::get_id());
    });
    EXPECT_LE(widest.load(), t);
    EXPECT_LE(static_cast<int>(ids.size()), t);
  }
  set_num_threads(saved);
}
