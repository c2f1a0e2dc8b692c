// Sorting, searching, sets and advanced indexing (xp/sorting.hpp, Index's array indices): the
// order against an oracle written here (std::stable_sort with NumPy's comparison), every dtype,
// rows and other axes, views, empty and 0-d arrays, the errors and that a failed write leaves the
// array as it was; the CPU radix sort's paths (thresholds, threads, values and/or positions,
// restored zeros and NaNs), through Backend::sort too; the CUDA sort program's source compiled
// with NVRTC (no GPU needed); and, on a GPU (SortingGpu.*, skipped without one), every function
// on cuda:0 against the CPU bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/sort.hpp"
#include "backend/cuda/ew_source.hpp"
#include "backend/cuda/sort_source.hpp"
#include "runtime/parallel.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::Array;
using xp::DType;
using xp::Index;
using xp::Slice;
using i64 = std::int64_t;
namespace cg = xp::detail::cuda;

const xp_test::ProcessCache g_process_cache;  // this process's kernel cache

const xp::Device kCpu = xp::Device::cpu();

const DType kDTypes[] = {DType::bool_,    DType::int8,    DType::int16,  DType::int32,  DType::int64,
                         DType::uint8,    DType::uint16,  DType::uint32, DType::uint64, DType::float16,
                         DType::bfloat16, DType::float32, DType::float64};

template <class T>
Array array_of(const std::vector<T>& v, const xp::Shape& shape, const xp::Device& d = kCpu) {
  return xp::asarray(v.data(), v.size(), xp::dtype_of<T>(), shape, d);
}

// Random elements of dtype t as raw bytes: few distinct values (ties), and for floats NaNs of both
// signs, infinities and zeros of both signs.
std::vector<std::uint8_t> random_bytes(DType t, i64 n, std::mt19937_64& rng) {
  const std::size_t isz = xp::itemsize(t);
  std::vector<std::uint8_t> b(static_cast<std::size_t>(n) * isz);
  std::uniform_int_distribution<int> small(-6, 6);
  for (i64 i = 0; i < n; ++i) {
    std::uint8_t* p = b.data() + i * static_cast<i64>(isz);
    const int r = small(rng);
    const std::uint64_t raw = rng();
    switch (t) {
      case DType::bool_:
        *p = r > 0;
        break;
      case DType::float32: {
        float f = r == 6    ? std::numeric_limits<float>::quiet_NaN()
                  : r == -6 ? -std::numeric_limits<float>::quiet_NaN()
                  : r == 5  ? INFINITY
                  : r == -5 ? -INFINITY
                  : r == 0  ? (raw & 1 ? -0.0f : 0.0f)
                            : static_cast<float>(r) / 4;
        std::memcpy(p, &f, 4);
        break;
      }
      case DType::float64: {
        double f = r == 6    ? std::numeric_limits<double>::quiet_NaN()
                   : r == -6 ? -std::numeric_limits<double>::quiet_NaN()
                   : r == 5  ? INFINITY
                   : r == -5 ? -INFINITY
                   : r == 0  ? (raw & 1 ? -0.0 : 0.0)
                             : static_cast<double>(r) / 4;
        std::memcpy(p, &f, 8);
        break;
      }
      case DType::float16:
      case DType::bfloat16: {
        const float f = r == 6    ? NAN
                        : r == -6 ? -NAN
                        : r == 5  ? INFINITY
                        : r == 0  ? (raw & 1 ? -0.0f : 0.0f)
                                  : static_cast<float>(r) / 4;
        if (t == DType::float16) {
          const xp::float16 h(f);
          std::memcpy(p, &h, 2);
        } else {
          const xp::bfloat16 h(f);
          std::memcpy(p, &h, 2);
        }
        break;
      }
      default:
        // Integers: small values, and now and then any bits (the extremes of the dtype too).
        if (r == 6) {
          std::memcpy(p, &raw, isz);
        } else {
          const i64 v = r;
          std::memcpy(p, &v, isz);  // little end first: the low bytes of a small value
          if (v < 0 && (t == DType::uint8 || t == DType::uint16 || t == DType::uint32 || t == DType::uint64))
            std::memset(p, 0xFF, isz);
        }
    }
  }
  return b;
}

// The oracle: element i's value as a double for floats (exact for every float dtype), or as a
// 128-bit integer for integers, and NumPy's order: NaNs last, -0.0 == 0.0.
struct Elem {
  bool nan = false;
  long double v = 0;  // exact for every integer of 64 bits and every float
};
Elem elem(DType t, const std::uint8_t* p) {
  Elem e;
  switch (t) {
    case DType::bool_:
      e.v = *p;
      break;
    case DType::int8: {
      std::int8_t x;
      std::memcpy(&x, p, 1);
      e.v = x;
      break;
    }
    case DType::int16: {
      std::int16_t x;
      std::memcpy(&x, p, 2);
      e.v = x;
      break;
    }
    case DType::int32: {
      std::int32_t x;
      std::memcpy(&x, p, 4);
      e.v = x;
      break;
    }
    case DType::int64: {
      std::int64_t x;
      std::memcpy(&x, p, 8);
      e.v = x;
      break;
    }
    case DType::uint8:
      e.v = *p;
      break;
    case DType::uint16: {
      std::uint16_t x;
      std::memcpy(&x, p, 2);
      e.v = x;
      break;
    }
    case DType::uint32: {
      std::uint32_t x;
      std::memcpy(&x, p, 4);
      e.v = x;
      break;
    }
    case DType::uint64: {
      std::uint64_t x;
      std::memcpy(&x, p, 8);
      e.v = x;
      break;
    }
    case DType::float16: {
      xp::float16 x;
      std::memcpy(&x, p, 2);
      e.v = static_cast<float>(x);
      break;
    }
    case DType::bfloat16: {
      xp::bfloat16 x;
      std::memcpy(&x, p, 2);
      e.v = static_cast<float>(x);
      break;
    }
    case DType::float32: {
      float x;
      std::memcpy(&x, p, 4);
      e.v = x;
      break;
    }
    case DType::float64: {
      double x;
      std::memcpy(&x, p, 8);
      e.v = x;
      break;
    }
    case DType::complex64:
    case DType::complex128:
      break;  // sort takes real dtypes only
  }
  e.nan = std::isnan(e.v);
  return e;
}
bool less(const Elem& a, const Elem& b) {
  if (a.nan) return false;
  if (b.nan) return true;
  return a.v < b.v;
}

// argsort of each row of a (rows x n) by the oracle, stable; descending as the standard's
// reference does it (the reverse order, ties in input order).
std::vector<i64> oracle_argsort(DType t, const std::vector<std::uint8_t>& b, i64 rows, i64 n, bool descending) {
  const std::size_t isz = xp::itemsize(t);
  std::vector<i64> out;
  for (i64 r = 0; r < rows; ++r) {
    std::vector<Elem> e;
    for (i64 i = 0; i < n; ++i) e.push_back(elem(t, b.data() + (r * n + i) * static_cast<i64>(isz)));
    std::vector<i64> ix(static_cast<std::size_t>(n));
    std::iota(ix.begin(), ix.end(), 0);
    if (descending)
      std::stable_sort(ix.begin(), ix.end(), [&](i64 x, i64 y) { return less(e[y], e[x]); });
    else
      std::stable_sort(ix.begin(), ix.end(), [&](i64 x, i64 y) { return less(e[x], e[y]); });
    out.insert(out.end(), ix.begin(), ix.end());
  }
  return out;
}

Array mask_of(std::initializer_list<int> v) {
  std::vector<std::uint8_t> b(v.begin(), v.end());
  return array_of(b, {static_cast<i64>(b.size())}).astype(DType::bool_);
}

Array raw_array(DType t, const std::vector<std::uint8_t>& b, const xp::Shape& shape, const xp::Device& d = kCpu) {
  return xp::asarray(b.data(), t, shape, d);
}

std::vector<std::uint8_t> bytes_of(const Array& a) {
  const Array c = a.to_device(kCpu).copy();
  std::vector<std::uint8_t> v(static_cast<std::size_t>(c.nbytes()));
  if (!v.empty()) std::memcpy(v.data(), c.data(), v.size());
  return v;
}

TEST(Sorting, TheOrderIsNumPysWithNaNsLastAndSignedZerosEqual) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> v = {3, nan, -0.0f, 1, -INFINITY, 0.0f, -nan, INFINITY, -1};
  const Array a = array_of(v, {9});
  EXPECT_EQ(xp::argsort(a).to_vector<i64>(), (std::vector<i64>{4, 8, 2, 5, 3, 0, 7, 1, 6}));
  EXPECT_EQ(xp::argsort(a, -1, true).to_vector<i64>(), (std::vector<i64>{1, 6, 7, 0, 3, 2, 5, 8, 4}));
  // The values keep their bits: -0.0 before 0.0 (input order), the NaNs' signs as they were.
  const std::vector<float> s = xp::sort(a).to_vector<float>();
  EXPECT_TRUE(std::signbit(s[2]) && !std::signbit(s[3]));
  EXPECT_TRUE(std::isnan(s[7]) && !std::signbit(s[7]) && std::isnan(s[8]) && std::signbit(s[8]));
  EXPECT_EQ(s[0], -INFINITY);
  EXPECT_EQ(s[6], INFINITY);
}

TEST(Sorting, EveryDtypeRowsOfEveryLengthMatchTheOracle) {
  std::mt19937_64 rng(1);
  for (DType t : kDTypes) {
    // Short rows (merge sort), long ones (radix), one row long enough to be split over threads.
    for (auto [rows, n] : {std::pair<i64, i64>{5, 7}, {3, 600}, {2, 5000}, {1, 200001}}) {
      const auto b = random_bytes(t, rows * n, rng);
      const Array a = raw_array(t, b, {rows, n});
      for (bool desc : {false, true}) {
        const std::vector<i64> want = oracle_argsort(t, b, rows, n, desc);
        ASSERT_EQ(xp::argsort(a, -1, desc).to_vector<i64>(), want)
            << xp::name(t) << " " << rows << "x" << n << " desc " << desc;
        // sort == the input gathered in that order, bit for bit.
        const std::vector<std::uint8_t> got = bytes_of(xp::sort(a, 1, desc));
        const std::size_t isz = xp::itemsize(t);
        for (i64 r = 0; r < rows; ++r)
          for (i64 i = 0; i < n; ++i)
            ASSERT_EQ(std::memcmp(
                          got.data() + (r * n + i) * static_cast<i64>(isz),
                          b.data() + (r * n + want[static_cast<std::size_t>(r * n + i)]) * static_cast<i64>(isz), isz),
                      0)
                << xp::name(t) << " row " << r << " element " << i;
      }
    }
  }
}

TEST(Sorting, OtherAxesViewsEmptyAnd0d) {
  std::mt19937_64 rng(2);
  const auto b = random_bytes(DType::int32, 4 * 5 * 6, rng);
  const Array a = raw_array(DType::int32, b, {4, 5, 6});
  // Axis 1 of a transposed, flipped view equals the same sort of its copy, and the argsort's
  // positions gather the sort (take_along_axis).
  const Array v = xp::flip(xp::permute_dims(a, {2, 0, 1}), 1);
  for (int axis : {0, 1, 2, -1}) {
    const Array s = xp::sort(v, axis);
    EXPECT_EQ(s.to_vector<std::int32_t>(), xp::sort(v.copy(), axis).to_vector<std::int32_t>()) << axis;
    EXPECT_TRUE(s.is_c_contiguous());
    EXPECT_EQ(xp::take_along_axis(v, xp::argsort(v, axis), axis).to_vector<std::int32_t>(),
              s.to_vector<std::int32_t>());
  }
  EXPECT_EQ(xp::sort(xp::empty({3, 0}, DType::float32, kCpu)).shape(1), 0);
  EXPECT_EQ(xp::argsort(xp::empty({0, 4}, DType::float32, kCpu), 0).dtype(), DType::int64);
  EXPECT_THROW(xp::sort(xp::asarray(std::vector<float>{1}, xp::Shape{}, kCpu)), xp::ValueError);
  EXPECT_THROW(xp::argsort(a, 3), xp::ValueError);
}

// Rows of `pattern` for the radix sort's paths: 0 random (ties, NaNs of both signs, zeros of both
// signs), 1 already sorted, 2 reversed, 3 all equal, 4 mostly NaNs (both signs) and zeros of both
// signs, 5 one NaN and one zero pattern only (the values need no restoring), 6 keys that differ in
// their lowest byte only (the other digits' passes skipped), 7 distinct values with a -0.0, a 0.0
// and two NaNs of different signs far apart.
std::vector<std::uint8_t> pattern_bytes(DType t, i64 n, int pattern, std::mt19937_64& rng) {
  const std::size_t isz = xp::itemsize(t);
  std::vector<std::uint8_t> b = random_bytes(t, n, rng);
  auto at = [&](i64 i) { return b.data() + i * static_cast<i64>(isz); };
  const bool is_float = t == DType::float16 || t == DType::bfloat16 || t == DType::float32 || t == DType::float64;
  switch (pattern) {
    case 1:
    case 2: {
      std::vector<i64> ix = oracle_argsort(t, b, 1, n, pattern == 2);
      std::vector<std::uint8_t> s(b.size());
      for (i64 i = 0; i < n; ++i) std::memcpy(s.data() + i * static_cast<i64>(isz), at(ix[i]), isz);
      return s;
    }
    case 3:
      for (i64 i = 1; i < n; ++i) std::memcpy(at(i), at(0), isz);
      return b;
    case 4:
      if (!is_float) return b;
      for (i64 i = 0; i < n; ++i) {
        const auto r = rng() % 8;
        const std::uint64_t sign = std::uint64_t{1} << (8 * isz - 1);
        const std::uint64_t nan = isz == 8              ? 0x7FF8000000000000ull
                                  : isz == 4            ? 0x7FC00000u
                                  : t == DType::float16 ? 0x7E00u
                                                        : 0x7FC0u;
        const std::uint64_t bits = r < 3    ? nan
                                   : r < 5  ? (nan | sign) | (r == 4 ? 1 : 0)
                                   : r == 5 ? sign
                                   : r == 6 ? 0
                                            : 1;
        std::memcpy(at(i), &bits, isz);
      }
      return b;
    case 5:
      if (!is_float) return b;
      for (i64 i = 0; i < n; ++i) {
        std::uint8_t* p = at(i);
        const Elem e = elem(t, p);
        if (e.nan || e.v == 0) {
          const std::uint64_t bits = e.nan ? (isz == 8              ? 0xFFF8000000000000ull
                                              : isz == 4            ? 0xFFC00000u
                                              : t == DType::float16 ? 0xFE00u
                                                                    : 0xFFC0u)
                                           : std::uint64_t{1} << (8 * isz - 1);  // -NaN, -0.0
          std::memcpy(p, &bits, isz);
        }
      }
      return b;
    case 6:
      for (i64 i = 0; i < n; ++i) {
        std::uint8_t* p = at(i);
        std::memset(p, 0, isz);
        p[0] = static_cast<std::uint8_t>(rng() & (t == DType::bool_ ? 1 : 0xFF));
        if (is_float) p[isz - 1] = t == DType::float16 ? 0x3C : 0x3F;  // a normal exponent: no NaNs
      }
      return b;
    case 7:  // distinct values, and a -0.0, a 0.0 and two NaNs far apart (few blocks hold them)
      if (!is_float) return b;
      for (i64 i = 0; i < n; ++i) {
        std::uint8_t* p = at(i);
        for (std::size_t j = 0; j + 1 < isz; ++j) p[j] = static_cast<std::uint8_t>(rng());
        p[isz - 1] = static_cast<std::uint8_t>((rng() & 0x80) | (t == DType::float16 ? 0x38 : 0x3E));
      }
      for (const i64 where : {n / 3, n / 7, n - 2, i64{5}}) {
        const std::uint64_t sign = std::uint64_t{1} << (8 * isz - 1);
        const std::uint64_t nan = isz == 8              ? 0x7FF8000000000000ull
                                  : isz == 4            ? 0x7FC00000u
                                  : t == DType::float16 ? 0x7E00u
                                                        : 0x7FC0u;
        const std::uint64_t v = where == n - 2 ? sign : where == n / 3 ? 0 : where == 5 ? nan | sign : nan;
        std::memcpy(at(where), &v, isz);
      }
      return b;
    default:
      return b;
  }
}

// Backend::sort of a row to both outputs at once (as unique's inverse asks for).
void backend_sort_both(DType t, const std::vector<std::uint8_t>& b, i64 rows, i64 n, bool descending,
                       std::vector<std::uint8_t>& values, std::vector<i64>& indices) {
  const i64 isz = static_cast<i64>(xp::itemsize(t));
  std::vector<std::uint8_t> keys = b;
  values.assign(b.size(), 0);
  indices.assign(static_cast<std::size_t>(rows * n), -1);
  const i64 shape[2] = {rows, n};
  const i64 kstrides[2] = {n * isz, isz}, istrides[2] = {n * 8, 8};
  namespace d = xp::detail;
  const d::View k{reinterpret_cast<std::byte*>(keys.data()), t, 2, shape, kstrides};
  const d::View v{reinterpret_cast<std::byte*>(values.data()), t, 2, shape, kstrides};
  const d::View ix{reinterpret_cast<std::byte*>(indices.data()), DType::int64, 2, shape, istrides};
  d::cpu::sort(k, v, ix, descending);
}

// The number of CPU threads for a scope.
struct Threads {
  int saved = xp::detail::num_threads();
  explicit Threads(int n) { xp::detail::set_num_threads(n); }
  ~Threads() { xp::detail::set_num_threads(saved); }
};

// The radix sort's paths: rows around its thresholds (the merge sort's 128, 8- and 11-bit digits
// at 2^16, one thread per 2^16 elements, streaming stores from 4 MiB), split over two threads or
// one; sorted, reversed, constant rows, rows of NaNs and signed zeros, passes skipped; the values
// alone, the positions alone and both (packed 64-bit items, (key, position) pairs).
TEST(Sorting, RadixPathsMatchTheOracle) {
  std::mt19937_64 rng(7);
  const Threads threads(2);
  struct Case {
    DType t;
    std::vector<i64> sizes;
  };
  const std::vector<Case> cases = {
      {DType::float32, {127, 128, 129, 65535, 65536, 65537, 131075, 1100003}},
      {DType::int32, {129, 65536, 131075}},
      {DType::uint32, {65537}},
      {DType::float64, {129, 65537, 140001}},
      {DType::int64, {131075}},
      {DType::uint64, {65537}},
      {DType::float16, {129, 131075}},
      {DType::bfloat16, {65537}},
      {DType::int16, {131075}},
      {DType::uint8, {131075}},
      {DType::bool_, {65537}},
  };
  for (const Case& c : cases) {
    const i64 isz = static_cast<i64>(xp::itemsize(c.t));
    for (i64 n : c.sizes) {
      for (int pattern = 0; pattern <= 7; ++pattern) {
        if (n > 200000 && pattern != 0 && pattern != 4) continue;  // the longest row: two patterns
        const auto b = pattern_bytes(c.t, n, pattern, rng);
        const Array a = raw_array(c.t, b, {n});
        for (bool desc : {false, true}) {
          if (desc && n > 65537 && pattern != 0 && pattern != 4) continue;
          const std::string what = std::string(xp::name(c.t)) + " n " + std::to_string(n) + " pattern " +
                                   std::to_string(pattern) + " desc " + std::to_string(desc);
          const std::vector<i64> want = oracle_argsort(c.t, b, 1, n, desc);
          ASSERT_EQ(xp::argsort(a, -1, desc).to_vector<i64>(), want) << what;
          std::vector<std::uint8_t> gathered(b.size());
          for (i64 i = 0; i < n; ++i)
            std::memcpy(gathered.data() + i * isz, b.data() + want[static_cast<std::size_t>(i)] * isz,
                        static_cast<std::size_t>(isz));
          ASSERT_TRUE(bytes_of(xp::sort(a, 0, desc)) == gathered) << what;
          std::vector<std::uint8_t> values;
          std::vector<i64> indices;
          backend_sort_both(c.t, b, 1, n, desc, values, indices);
          ASSERT_EQ(indices, want) << what << " (both outputs)";
          ASSERT_TRUE(values == gathered) << what << " (both outputs)";
        }
      }
    }
  }
}

// Many rows at once (each row on one thread, the buffers reused from row to row), of each path.
TEST(Sorting, ManyRowsReuseTheRowBuffers) {
  std::mt19937_64 rng(8);
  const Threads threads(2);
  for (DType t : {DType::float32, DType::int64, DType::float16}) {
    for (auto [rows, n] : {std::pair<i64, i64>{40, 129}, {5, 70001}}) {
      const auto b = random_bytes(t, rows * n, rng);
      for (bool desc : {false, true}) {
        const std::vector<i64> want = oracle_argsort(t, b, rows, n, desc);
        std::vector<std::uint8_t> values;
        std::vector<i64> indices;
        backend_sort_both(t, b, rows, n, desc, values, indices);
        ASSERT_EQ(indices, want) << xp::name(t) << " " << rows << "x" << n;
        const Array a = raw_array(t, b, {rows, n});
        ASSERT_EQ(xp::argsort(a, -1, desc).to_vector<i64>(), want) << xp::name(t) << " " << rows << "x" << n;
        ASSERT_TRUE(bytes_of(xp::sort(a, -1, desc)) == values) << xp::name(t) << " " << rows << "x" << n;
      }
    }
  }
}

TEST(Searching, NonzeroCountNonzeroAndWhere) {
  const Array a = array_of(std::vector<std::int32_t>{0, 3, 0, -1, 5, 0}, {2, 3});
  const std::vector<Array> nz = xp::nonzero(a);
  ASSERT_EQ(nz.size(), 2u);
  EXPECT_EQ(nz[0].to_vector<i64>(), (std::vector<i64>{0, 1, 1}));
  EXPECT_EQ(nz[1].to_vector<i64>(), (std::vector<i64>{1, 0, 1}));
  EXPECT_EQ(xp::where(a != 0)[1].to_vector<i64>(), nz[1].to_vector<i64>());
  EXPECT_EQ(xp::count_nonzero(a).item<i64>(), 3);
  EXPECT_EQ(xp::count_nonzero(a, 0).to_vector<i64>(), (std::vector<i64>{1, 2, 0}));
  EXPECT_EQ(xp::count_nonzero(a, 1, true).shape(1), 1);
  // NaN and -0.0: NaN is nonzero, -0.0 is zero.
  const Array f = array_of(std::vector<double>{-0.0, NAN, 0.0, 2}, {4});
  EXPECT_EQ(xp::nonzero(f)[0].to_vector<i64>(), (std::vector<i64>{1, 3}));
  EXPECT_EQ(xp::nonzero(xp::zeros({0, 2}, DType::float64, kCpu))[0].size(), 0);
  EXPECT_THROW(xp::nonzero(xp::asarray(std::vector<float>{1}, xp::Shape{}, kCpu)), xp::ValueError);
}

TEST(Searching, SearchsortedLeftRightSorterAndNaN) {
  const std::vector<double> s = {-1, 0, 0, 2, 2, 2, 7, NAN};
  const Array x1 = array_of(s, {8});
  const Array q = array_of(std::vector<double>{-5, 0, 2, 3, 7, 100, NAN, -0.0}, {2, 4});
  EXPECT_EQ(xp::searchsorted(x1, q).to_vector<i64>(), (std::vector<i64>{0, 1, 3, 6, 6, 7, 7, 1}));
  EXPECT_EQ(xp::searchsorted(x1, q, xp::Side::right).to_vector<i64>(), (std::vector<i64>{0, 3, 6, 6, 7, 7, 8, 3}));
  EXPECT_EQ(xp::searchsorted(x1, q).shape(0), 2);
  EXPECT_EQ(xp::searchsorted(x1, 2).item<i64>(), 3);
  // Complex values against a real x1 were cast to it (wrong positions): refused. An integer beyond
  // an integer x1's dtype is below or above every element (NumPy compares exactly).
  EXPECT_THROW(xp::searchsorted(x1, std::complex<double>(0, 1)), xp::TypeError);
  EXPECT_THROW(xp::searchsorted(x1, xp::full({2}, std::complex<double>(1, 0))), xp::TypeError);
  const Array small = array_of(std::vector<std::uint8_t>{1, 2, 3}, {3});
  EXPECT_EQ(xp::searchsorted(small, -1).item<i64>(), 0);
  EXPECT_EQ(xp::searchsorted(small, 300, xp::Side::left).item<i64>(), 3);
  EXPECT_EQ(xp::searchsorted(small, std::numeric_limits<std::uint64_t>::max()).item<i64>(), 3);
  // sorter: x1 unsorted, with the positions that sort it.
  const Array u = array_of(std::vector<std::int32_t>{5, 1, 3}, {3});
  EXPECT_EQ(xp::searchsorted(u, array_of(std::vector<std::int32_t>{0, 2, 3, 9}, {4}), xp::Side::left, xp::argsort(u))
                .to_vector<i64>(),
            (std::vector<i64>{0, 1, 1, 3}));
  // Mixed dtypes compare promoted: 2.5 between 2 and 3 of an int array.
  EXPECT_EQ(xp::searchsorted(array_of(std::vector<std::int64_t>{1, 2, 3}, {3}), 2.5).item<i64>(), 2);
  EXPECT_THROW(xp::searchsorted(xp::zeros({2, 2}, DType::float64, kCpu), 1.0), xp::ValueError);
  EXPECT_THROW(xp::searchsorted(u, 1, xp::Side::left, xp::zeros({2}, DType::int64, kCpu)), xp::ValueError);
  EXPECT_THROW(xp::searchsorted(u, 1, xp::Side::left, xp::zeros({3}, DType::float32, kCpu)), xp::TypeError);
  EXPECT_THROW(xp::searchsorted(u, 1, xp::Side::left, array_of(std::vector<i64>{0, 1, 3}, {3})), xp::IndexError);
}

TEST(Sets, UniqueOfFloatsWithNaNsAndSignedZeros) {
  const std::vector<double> v = {3, NAN, 1, -0.0, 0.0, NAN, 3, 2};
  const Array a = array_of(v, {2, 4});
  const xp::UniqueAll u = xp::unique_all(a);
  const std::vector<double> values = u.values.to_vector<double>();
  ASSERT_EQ(values.size(), 6u);
  EXPECT_EQ(std::vector<double>(values.begin(), values.begin() + 4), (std::vector<double>{-0.0, 1, 2, 3}));
  EXPECT_TRUE(std::signbit(values[0]));  // the first of the equal zeros in x
  EXPECT_TRUE(std::isnan(values[4]) && std::isnan(values[5]));
  EXPECT_EQ(u.indices.to_vector<i64>(), (std::vector<i64>{3, 2, 7, 0, 1, 5}));
  EXPECT_EQ(u.counts.to_vector<i64>(), (std::vector<i64>{2, 1, 1, 2, 1, 1}));
  EXPECT_EQ(u.inverse_indices.shape(0), 2);
  EXPECT_EQ(u.inverse_indices.to_vector<i64>(), (std::vector<i64>{3, 4, 1, 0, 0, 5, 3, 2}));
  EXPECT_EQ(xp::unique_counts(a).counts.to_vector<i64>(), u.counts.to_vector<i64>());
  EXPECT_EQ(xp::unique_inverse(a).inverse_indices.to_vector<i64>(), u.inverse_indices.to_vector<i64>());
  EXPECT_EQ(xp::unique_values(array_of(std::vector<std::uint8_t>{9, 9, 0, 255}, {4})).to_vector<int>(),
            (std::vector<int>{0, 9, 255}));
  const xp::UniqueAll e = xp::unique_all(xp::empty({0, 3}, DType::int16, kCpu));
  EXPECT_EQ(e.values.size(), 0);
  EXPECT_EQ(e.values.dtype(), DType::int16);
  EXPECT_EQ(e.inverse_indices.shape(1), 3);
}

// Complex values in NumPy's order (np.unique): R + Rj lexicographically, then R + nanj by the real
// part, nan + Rj by the imaginary part, nan + nanj; each NaN its own. Fuzzing against NumPy found
// R + nanj sorted among the others by its real part.
TEST(Sets, UniqueOfComplexInNumPysOrder) {
  using c128 = std::complex<double>;
  const std::vector<c128> v = {{1, 1}, {0, NAN}, {0, 0}, {NAN, -1}, {2, NAN}, {1, 1}, {NAN, NAN}, {-1, 5}, {NAN, -3}};
  const xp::UniqueAll u = xp::unique_all(array_of(v, {9}));
  const std::vector<c128> got = u.values.to_vector<c128>();
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got[0], c128(-1, 5));
  EXPECT_EQ(got[1], c128(0, 0));
  EXPECT_EQ(got[2], c128(1, 1));
  EXPECT_EQ(got[3].real(), 0);   // 0 + nanj
  EXPECT_EQ(got[4].real(), 2);   // 2 + nanj
  EXPECT_EQ(got[5].imag(), -3);  // nan - 3j
  EXPECT_EQ(got[6].imag(), -1);  // nan - 1j
  EXPECT_TRUE(std::isnan(got[7].real()) && std::isnan(got[7].imag()));
  EXPECT_EQ(u.indices.to_vector<i64>(), (std::vector<i64>{7, 2, 0, 1, 4, 8, 3, 6}));
  EXPECT_EQ(u.counts.to_vector<i64>(), (std::vector<i64>{1, 1, 2, 1, 1, 1, 1, 1}));
}

TEST(Indexing, MasksReadAndWrite) {
  Array a = xp::reshape(xp::arange(0, 12, 1, DType::int64, kCpu), {3, 4});
  const Array mask = a > 6;
  const Array got = a.slice({Index(mask)});
  EXPECT_EQ(got.to_vector<i64>(), (std::vector<i64>{7, 8, 9, 10, 11}));
  // A mask over the leading axis: whole rows.
  const Array rows = mask_of({1, 0, 1});
  EXPECT_EQ(a.slice({Index(rows)}).shape(0), 2);
  EXPECT_EQ(a.slice({Index(rows), 1}).to_vector<i64>(), (std::vector<i64>{1, 9}));
  a.set({Index(mask)}, -1);
  EXPECT_EQ(a.to_vector<i64>(), (std::vector<i64>{0, 1, 2, 3, 4, 5, 6, -1, -1, -1, -1, -1}));
  a.set({Slice(), Index(mask_of({0, 1, 0, 1}))}, array_of(std::vector<i64>{10, 20}, {2}));  // broadcast along the rows
  EXPECT_EQ(a.to_vector<i64>(), (std::vector<i64>{0, 10, 2, 20, 4, 10, 6, 20, -1, 10, -1, 20}));
  EXPECT_THROW(a.slice({Index(mask_of({1, 0}))}), xp::IndexError);
  // An empty mask: each of its axes must be the array's size or 0 (NumPy's rule), whatever its size.
  const auto empty_mask = [](xp::Shape s) { return xp::zeros(s, DType::bool_, kCpu); };
  EXPECT_EQ(a.slice({Index(empty_mask({0, 4}))}).shape(0), 0);
  EXPECT_EQ(a.slice({Index(empty_mask({3, 0}))}).shape(0), 0);
  EXPECT_EQ(a.slice({Index(empty_mask({0}))}).shape(1), 4);
  EXPECT_THROW(a.slice({Index(empty_mask({0, 5}))}), xp::IndexError);
  EXPECT_THROW(a.slice({Index(empty_mask({2, 0}))}), xp::IndexError);
  const Array none = xp::zeros({0, 0}, DType::float32, kCpu);
  EXPECT_THROW(none.slice({Index(empty_mask({2, 0}))}), xp::IndexError);
  EXPECT_THROW(none.slice({Index(empty_mask({0, 1}))}), xp::IndexError);
  EXPECT_THROW(a.set({Index(empty_mask({0, 5}))}, 1), xp::IndexError);
  // Assigning to the copy that an array index reads is refused, not lost.
  EXPECT_THROW(a.slice({Index(mask)}) = 5, xp::ValueError);
}

TEST(Indexing, IntegerArraysFollowNumPysPlacement) {
  const Array a = xp::reshape(xp::arange(0, 60, 1, DType::int64, kCpu), {3, 4, 5});
  const Array i = array_of(std::vector<i64>{0, 2}, {2}), j = array_of(std::vector<i64>{1, -1}, {2});
  // Adjacent array indices: their dimension in place.
  const Array adj = a.slice({Slice(), Index(i), Index(j)});
  EXPECT_EQ(adj.shape(0), 3);
  EXPECT_EQ(adj.shape(1), 2);
  EXPECT_EQ(adj.to_vector<i64>(), (std::vector<i64>{1, 14, 21, 34, 41, 54}));
  // Separated by a slice: first.
  const Array sep = a.slice({Index(i), Slice(), Index(j)});
  EXPECT_EQ(sep.ndim(), 2);
  EXPECT_EQ(sep.shape(0), 2);
  EXPECT_EQ(sep.shape(1), 4);
  EXPECT_EQ(sep.slice({1, 0}).item<i64>(), 44);  // a[2, 0, -1]
  // An integer beside an array counts as an array index (here: separated, so first).
  EXPECT_EQ(a.slice({1, Slice(), Index(i)}).shape(0), 2);
  // An ellipsis between two array indices separates them even where it covers no axis (NumPy's
  // a[:, [0, 2], ..., [1, -1]] has shape (2, 3)): fuzzing against NumPy found it kept in place, the
  // values transposed where the sizes agree.
  const Array e = a.slice({Slice(), Index(i), xp::ellipsis, Index(j)});
  EXPECT_EQ(e.shape(0), 2);
  EXPECT_EQ(e.shape(1), 3);
  EXPECT_EQ(e.to_vector<i64>(), (std::vector<i64>{1, 21, 41, 14, 34, 54}));
  EXPECT_EQ(a.slice({Slice(), 0, xp::ellipsis, Index(j)}).shape(0), 2);  // an integer too
  // With nothing between them, an ellipsis before or after leaves them in place.
  EXPECT_EQ(a.slice({xp::ellipsis, Index(i), Index(j)}).shape(0), 3);
  Array w = xp::zeros({3, 4, 5}, DType::int64, kCpu);
  w.set({Slice(), Index(i), xp::ellipsis, Index(j)}, e + 100);
  EXPECT_EQ(w.slice({2, 2, 4}).item<i64>(), 154);  // a[2, 2, -1] + 100 went to its own place
  // Values with leading axes of length 1 beyond the target's: dropped, as NumPy's copyto and
  // setitem drop them (fuzzing found them refused); other extra axes stay an error.
  Array t = xp::zeros({2, 3, 4}, DType::int64, kCpu);
  t.set({0}, xp::ones({1, 1, 4}, DType::int64, kCpu));
  t.set({Slice(), Index(i)}, xp::full({1, 1, 2, 4}, 5, DType::int64, kCpu));
  EXPECT_EQ(xp::sum(t).item<i64>(), 12 + 5 * 16 - 2 * 4);  // row 0 of t[0] ones, then rows 0, 2 of both fives
  EXPECT_THROW(t.set({0}, xp::ones({2, 1, 4}, DType::int64, kCpu)), xp::ValueError);
  // Broadcasting index arrays.
  const Array col = array_of(std::vector<i64>{0, 2}, {2, 1});
  EXPECT_EQ(a.slice({Index(col), Index(j)}).shape(1), 2);
  // Out of range: the index and the axis named.
  try {
    (void)a.slice({Slice(), Index(array_of(std::vector<i64>{1, 4}, {2}))});
    ADD_FAILURE() << "no IndexError";
  } catch (const xp::IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("index 4 is out of bounds for axis 1 with size 4"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(a.slice({Index(array_of(std::vector<float>{0}, {1}))}), xp::IndexError);
  EXPECT_THROW(a.slice({Index(i), Index(array_of(std::vector<i64>{0, 1, 2}, {3}))}), xp::IndexError);  // no broadcast
}

TEST(Indexing, WritesRepeatLastWinsAndFailuresWriteNothing) {
  Array a = xp::zeros({5}, DType::int32, kCpu);
  a.set({Index(array_of(std::vector<i64>{1, 3, 1, 1}, {4}))}, array_of(std::vector<std::int32_t>{7, 8, 9, 6}, {4}));
  EXPECT_EQ(a.to_vector<int>(), (std::vector<int>{0, 6, 0, 8, 0}));
  // One index out of range: an IndexError, and nothing written (not even the good ones).
  EXPECT_THROW(a.set({Index(array_of(std::vector<i64>{0, 5}, {2}))}, 1), xp::IndexError);
  EXPECT_EQ(a.to_vector<int>(), (std::vector<int>{0, 6, 0, 8, 0}));
  // A value that cannot convert under same_kind: a TypeError, nothing written.
  EXPECT_THROW(a.set({Index(a > 0)}, 1.5), xp::TypeError);
  EXPECT_EQ(a.to_vector<int>(), (std::vector<int>{0, 6, 0, 8, 0}));
  // A destination whose indexed axes do not merge as a view (a transposed array): written through.
  Array m = xp::zeros({3, 4}, DType::float32, kCpu);
  const Array t = m.T();  // (4, 3)
  t.set({Index(array_of(std::vector<i64>{0, 3}, {2})), Index(array_of(std::vector<i64>{2, 1}, {2}))}, 5.0f);
  EXPECT_EQ(m.slice({2, 0}).item<float>(), 5.0f);
  EXPECT_EQ(m.slice({1, 3}).item<float>(), 5.0f);
  EXPECT_EQ(xp::sum(m).item<float>(), 10.0f);
  // Read-only memory.
  std::vector<float> host = {1, 2, 3};
  const Array ro = xp::wrap(host.data(), DType::float32, {3}, nullptr, std::nullopt, true);
  EXPECT_THROW(ro.set({Index(ro > 1)}, 0.0f), xp::ValueError);
  EXPECT_EQ(host[1], 2.0f);
}

TEST(Indexing, TakeAlongAxisBroadcastsAndChecks) {
  const Array x = xp::reshape(xp::arange(0, 6, 1, DType::int64, kCpu), {2, 3});
  const Array ix = array_of(std::vector<i64>{2, 0}, {1, 2});  // broadcast over the rows
  EXPECT_EQ(xp::take_along_axis(x, ix, 1).to_vector<i64>(), (std::vector<i64>{2, 0, 5, 3}));
  EXPECT_EQ(xp::take_along_axis(x, array_of(std::vector<i64>{-1}, {1, 1}), 1).to_vector<i64>(),
            (std::vector<i64>{2, 5}));
  EXPECT_THROW(xp::take_along_axis(x, array_of(std::vector<i64>{3}, {1, 1}), 1), xp::IndexError);
  EXPECT_THROW(xp::take_along_axis(x, array_of(std::vector<i64>{0}, {1}), 1), xp::ValueError);
}

// ---- the CUDA program's source (NVRTC, no GPU) ----

TEST(SortingSource, EveryWidthCompilesForSm75AndSm90) {
  XP_REQUIRE_NVRTC();
  for (int kb : {4, 8}) {
    for (int pb : {4, 8}) {
      const std::string s = cg::sort_source(kb, pb);
      EXPECT_NE(s.find(cg::sort_key_text(kb, pb)), std::string::npos);
      for (int sm : {75, 90}) {
        xp::ProgramOptions opt;
        opt.name = "xp_sort_check.cu";
        opt.options = cg::nvrtc_options();
        xp::Program prog(s, opt);
        try {
          const auto stats = prog.compile(xp::Arch::sm(sm));
          EXPECT_EQ(stats.log.find("warning"), std::string::npos) << kb << "/" << pb << " sm_" << sm << stats.log;
          const auto names = prog.kernel_names(xp::Arch::sm(sm));
          for (const char* k : {"xp_sort_init", "xp_sort_hist", "xp_sort_scan_parts", "xp_sort_scan_top",
                                "xp_sort_scan_apply", "xp_sort_scatter", "xp_sort_finish", "xp_scatter_last",
                                "xp_scatter", "xp_nonzero_count", "xp_nonzero_write", "xp_searchsorted"})
            EXPECT_NE(std::find(names.begin(), names.end(), k), names.end()) << k;
        } catch (const xp::CompileError& e) {
          ADD_FAILURE() << kb << "/" << pb << " sm_" << sm << ":\n" << e.log();
        }
      }
    }
  }
  EXPECT_THROW(cg::sort_source(2, 4), xp::ValueError);
  EXPECT_THROW(cg::sort_source(4, 2), xp::ValueError);
}

TEST(SortingSource, TheKernelsArgumentIsHeldToTheHostsSortArgs) {
  XP_REQUIRE_NVRTC();
  std::string s = cg::sort_source(4, 4);
  const std::string size = "#define XP_SORT_ARGS " + std::to_string(sizeof(cg::SortArgs)) + "\n";
  const std::size_t at = s.find(size);
  ASSERT_NE(at, std::string::npos);
  s.replace(at, size.size(), "#define XP_SORT_ARGS " + std::to_string(sizeof(cg::SortArgs) + 8) + "\n");
  xp::ProgramOptions opt;
  opt.name = "xp_sort_check.cu";
  opt.options = cg::nvrtc_options();
  xp::Program prog(s, opt);
  EXPECT_THROW(prog.compile(xp::Arch::sm(90)), xp::CompileError);
}

// ---- on a GPU: the same calls on cuda:0 and on the CPU, bit for bit ----

void expect_same(const Array& gpu, const Array& cpu, const std::string& what) {
  ASSERT_EQ(gpu.device(), xp::Device::cuda(0)) << what;
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what;
  ASSERT_EQ(std::vector<i64>(gpu.shape().begin(), gpu.shape().end()),
            std::vector<i64>(cpu.shape().begin(), cpu.shape().end()))
      << what;
  ASSERT_EQ(bytes_of(gpu), bytes_of(cpu)) << what;
}

TEST(SortingGpu, SortAndArgsortOfEveryDtypeMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device g = xp::Device::cuda(0);
  std::mt19937_64 rng(3);
  for (DType t : kDTypes) {
    // One long row, many short rows (the row passes: 3000 rows need two), and a middle axis.
    for (auto shape : {xp::Shape{1 << 20}, xp::Shape{3000, 37}, xp::Shape{5, 1000, 3}}) {
      const auto b = random_bytes(t, xp::empty(shape, t, kCpu).size(), rng);
      const Array c = raw_array(t, b, shape), d = raw_array(t, b, shape, g);
      for (int axis : {-1, 1}) {
        if (axis == 1 && shape.size() < 2) continue;
        for (bool desc : {false, true}) {
          const std::string what = std::string(xp::name(t)) + " axis " + std::to_string(axis) + (desc ? " desc" : "");
          expect_same(xp::argsort(d, axis, desc), xp::argsort(c, axis, desc), "argsort " + what);
          expect_same(xp::sort(d, axis, desc), xp::sort(c, axis, desc), "sort " + what);
        }
      }
    }
  }
}

TEST(SortingGpu, SearchingSetsAndIndexingMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device g = xp::Device::cuda(0);
  std::mt19937_64 rng(4);
  for (DType t : {DType::float32, DType::int32, DType::uint8, DType::float64, DType::int64, DType::bfloat16}) {
    const auto b = random_bytes(t, 100003, rng);
    const Array c = raw_array(t, b, {100003}), d = raw_array(t, b, {100003}, g);
    const std::string n(xp::name(t));
    expect_same(xp::nonzero(d)[0], xp::nonzero(c)[0], "nonzero " + n);
    const xp::UniqueAll uc = xp::unique_all(c), ud = xp::unique_all(d);
    expect_same(ud.values, uc.values, "unique values " + n);
    expect_same(ud.indices, uc.indices, "unique indices " + n);
    expect_same(ud.inverse_indices, uc.inverse_indices, "unique inverse " + n);
    expect_same(ud.counts, uc.counts, "unique counts " + n);
    const Array sc = xp::sort(c), sd = xp::sort(d);
    for (xp::Side side : {xp::Side::left, xp::Side::right})
      expect_same(xp::searchsorted(sd, d, side), xp::searchsorted(sc, c, side), "searchsorted " + n);
    const Array mc = c.astype(DType::float32) > 0, md = d.astype(DType::float32) > 0;
    expect_same(d.slice({Index(md)}), c.slice({Index(mc)}), "mask read " + n);
    Array wc = c.copy(), wd = d.copy();
    wc.set({Index(mc)}, 1);
    wd.set({Index(md)}, 1);
    expect_same(wd, wc, "mask write " + n);
    // Repeated integer indices: the last value written, on both.
    std::vector<i64> ix(5000);
    for (auto& v : ix) v = static_cast<i64>(rng() % 200) - 100;
    const Array ic = array_of(ix, {5000}), id = array_of(ix, {5000}, g);
    const Array vc = xp::arange(0, 5000, 1, DType::int32, kCpu).astype(t), vd = vc.to_device(g);
    wc.set({Index(ic)}, vc);
    wd.set({Index(id)}, vd);
    expect_same(wd, wc, "repeated write " + n);
    expect_same(d.slice({Index(id)}), c.slice({Index(ic)}), "integer read " + n);
  }
  // 2-D: masks over the leading axis, integer arrays on two axes, take_along_axis.
  const Array c = xp::reshape(xp::arange(0, 3000, 1, DType::float32, kCpu), {60, 50}), d = c.to_device(g);
  const Array rc = xp::argsort(c * -1.0f, 0), rd = xp::argsort(d * -1.0f, 0);
  expect_same(xp::take_along_axis(d, rd, 0), xp::take_along_axis(c, rc, 0), "take_along_axis");
  const Array lead_c = xp::arange(0, 60, 1, DType::int64, kCpu) % 3 == 0, lead_d = lead_c.to_device(g);
  expect_same(d.slice({Index(lead_d)}), c.slice({Index(lead_c)}), "rows mask");
  const Array i2 = array_of(std::vector<i64>{3, 59, 0}, {3}), j2 = array_of(std::vector<i64>{49, 0, 7}, {3});
  expect_same(d.slice({Index(i2.to_device(g)), Index(j2.to_device(g))}), c.slice({Index(i2), Index(j2)}), "pairs");
}

TEST(SortingGpu, TheSortProgramIsCompiledSoTheDeviceRanIt) {
  XP_REQUIRE_GPU();
  const Array d = xp::asarray(std::vector<float>{3, 1, 2}, xp::Shape{3}, xp::Device::cuda(0));
  EXPECT_EQ(xp::sort(d).to_vector<float>(), (std::vector<float>{1, 2, 3}));
  bool found = false;
  for (const auto& e : xp::kernel_cache_entries())
    if (e.program == "xp_sort.cu") found = true;
  EXPECT_TRUE(found) << "no sort program in the kernel cache: the host ran it";
}

}  // namespace
