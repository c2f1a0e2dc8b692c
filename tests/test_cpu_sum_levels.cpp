// The vector levels of the CPU's compensated float sums (src/backend/cpu/reduce.cpp), white-box:
// SSE2, AVX2 and AVX-512F compute the same arithmetic, so every level this CPU supports must give
// the bits of every other, and all of them the bits of the summation tree reduce.hpp documents,
// written here plainly in scalars. Sizes cover leaves shorter than the lanes, tails that are not a
// multiple of them, every leaf length up to a block, and several blocks; starts one element past a
// vector boundary; float16, bfloat16, float32 and float64; sum, mean, var and std.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/reduce.hpp"
#include "runtime/parallel.hpp"
#include "xp/dtype.hpp"
#include "xp/error.hpp"

namespace {

using xp::DType;
using xp::detail::ReduceOp;
using xp::detail::View;
using xp::detail::cpu::SumIsa;
using i64 = std::int64_t;

const char* isa_name(SumIsa isa) {
  return xp::detail::cpu::sum_isa_name(isa);
}

// The levels this CPU supports, the baseline first.
std::vector<SumIsa> supported_levels() {
  std::vector<SumIsa> v;
  for (const SumIsa isa : {SumIsa::sse2, SumIsa::avx2, SumIsa::avx512})
    if (isa <= xp::detail::cpu::sum_isa_supported()) v.push_back(isa);
  return v;
}

// Sets a level for a scope, then restores the one before.
struct ForcedLevel {
  SumIsa before;
  explicit ForcedLevel(SumIsa isa) : before(xp::detail::cpu::set_sum_isa(isa)) {}
  ~ForcedLevel() { xp::detail::cpu::set_sum_isa(before); }
};

// One thread for a scope (thousands of small reductions: thread start-up would dominate; the thread
// count changes no bit, as test_cpu_reduce checks).
struct OneThread {
  int before = xp::detail::num_threads();
  OneThread() { xp::detail::set_num_threads(1); }
  ~OneThread() { xp::detail::set_num_threads(before); }
};

// op over the n elements of type t at p (contiguous), as the bytes of the result.
std::vector<unsigned char> reduce_bytes(ReduceOp op, DType t, const void* p, i64 n) {
  i64 shape[1] = {n}, strides[1] = {static_cast<i64>(xp::itemsize(t))};
  const View in{static_cast<std::byte*>(const_cast<void*>(p)), t, 1, shape, strides};
  const DType ot = xp::detail::reduce_result_dtype(op, t);
  std::vector<unsigned char> out(xp::itemsize(ot));
  const int axes[] = {0};
  xp::detail::cpu::reduce(op, in, axes, View{reinterpret_cast<std::byte*>(out.data()), ot, 0, nullptr, nullptr});
  return out;
}

// Ill-conditioned input: values over 2^-20 .. 2^20 with both signs, each odd element all but the
// negative of the one before it, so the exact sum is far below sum|x| and the compensation terms'
// own roundings (any change of order) show in the result's bits.
struct Inputs {
  std::vector<double> f64;
  std::vector<float> f32;
  std::vector<std::uint16_t> f16, bf16;
  explicit Inputs(i64 n) : f64(static_cast<std::size_t>(n)), f32(f64.size()), f16(f64.size()), bf16(f64.size()) {
    std::mt19937_64 rng(2024);
    std::normal_distribution<double> nd;
    for (std::size_t i = 0; i < f64.size(); ++i) {
      if (i % 2 == 0) {
        f64[i] = nd(rng) * std::exp2(static_cast<double>(static_cast<int>(rng() % 41)) - 20);
        f32[i] = static_cast<float>(f64[i]);
        f16[i] = xp::float_to_half_bits(static_cast<float>(f64[i] / 256));  // within float16's range
        bf16[i] = xp::float_to_bfloat16_bits(f32[i]);
      } else {
        const double e = static_cast<double>(rng() % 8) - 4;
        f64[i] = -f64[i - 1] * (1 + e * 0x1p-45);
        f32[i] = -f32[i - 1] * (1 + static_cast<float>(e) * 0x1p-20f);
        f16[i] = static_cast<std::uint16_t>((f16[i - 1] ^ 0x8000u) + (rng() % 3));  // the last bits moved
        bf16[i] = static_cast<std::uint16_t>((bf16[i - 1] ^ 0x8000u) + (rng() % 3));
      }
    }
  }
  const void* data(DType t, i64 start) const {
    switch (t) {
      case DType::float64:
        return f64.data() + start;
      case DType::float32:
        return f32.data() + start;
      case DType::float16:
        return f16.data() + start;
      default:
        return bf16.data() + start;
    }
  }
};

std::vector<i64> sizes() {
  std::vector<i64> v;
  for (i64 n = 1; n <= 1100; ++n) v.push_back(n);
  for (i64 n = 1101; n <= 9000; n += 13) v.push_back(n);
  for (const i64 n : {4095, 4096, 4097, 8191, 8192, 8193, 3 * 4096 + 5, 16384, 40000 + 3, 70000}) v.push_back(n);
  return v;
}

TEST(SumLevels, SameBitsOnEveryLevel) {
  const auto levels = supported_levels();
  if (levels.size() < 2) GTEST_SKIP() << "skipped: this CPU has SSE2 only, there is no other level to compare";
  const OneThread one;
  const Inputs in(70000 + 8);
  const ReduceOp ops[] = {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::std};
  const DType types[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16};
  // [op][dtype][start][size] results at the baseline, then compared level by level.
  std::vector<std::vector<unsigned char>> base;
  const auto all_sizes = sizes();
  int compared = 0;
  for (const SumIsa isa : levels) {
    const ForcedLevel forced(isa);
    std::size_t k = 0;
    int failures = 0;
    for (const ReduceOp op : ops) {
      for (const DType t : types) {
        for (const i64 start : {0, 1}) {
          for (const i64 n : all_sizes) {
            auto got = reduce_bytes(op, t, in.data(t, start), n);
            if (isa == SumIsa::sse2) {
              base.push_back(std::move(got));
              continue;
            }
            ++compared;
            if (got != base[k] && ++failures <= 10)
              ADD_FAILURE() << isa_name(isa) << " differs from sse2: op " << static_cast<int>(op) << " " << xp::name(t)
                            << " start " << start << " n " << n;
            ++k;
          }
        }
      }
    }
    EXPECT_EQ(failures, 0) << isa_name(isa);
  }
  EXPECT_GT(compared, 0);
}

// The same with infinities and NaN inside (NaN compared as a class), and with exact cancellation.
TEST(SumLevels, SpecialValuesOnEveryLevel) {
  const auto levels = supported_levels();
  if (levels.size() < 2) GTEST_SKIP() << "skipped: this CPU has SSE2 only, there is no other level to compare";
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<double>> cases;
  for (const i64 n : {7, 8, 9, 33, 512, 600, 4096, 5000}) {
    std::vector<double> x(static_cast<std::size_t>(n), 1.5);
    x[static_cast<std::size_t>(n / 3)] = inf;
    cases.push_back(x);  // +inf
    x[static_cast<std::size_t>(n - 1)] = -inf;
    cases.push_back(x);  // inf - inf: NaN
    x[static_cast<std::size_t>(n / 3)] = nan;
    cases.push_back(x);  // NaN
    std::vector<double> y(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n; ++i)
      y[static_cast<std::size_t>(i)] = (i % 2 ? -1.0 : 1.0) * std::exp2(static_cast<double>(i % 60));
    cases.push_back(y);  // large terms that cancel
    y[0] = 1e308;
    y[1] = 1e308;
    cases.push_back(y);  // overflow
  }
  for (const DType t : {DType::float32, DType::float64}) {
    std::vector<double> base;
    for (const SumIsa isa : levels) {
      const ForcedLevel forced(isa);
      std::size_t k = 0;
      for (const auto& x : cases) {
        double r;
        if (t == DType::float64) {
          double v;
          std::memcpy(&v, reduce_bytes(ReduceOp::sum, t, x.data(), static_cast<i64>(x.size())).data(), 8);
          r = v;
        } else {
          std::vector<float> f(x.begin(), x.end());
          float v;
          std::memcpy(&v, reduce_bytes(ReduceOp::sum, t, f.data(), static_cast<i64>(f.size())).data(), 4);
          r = v;
        }
        if (isa == SumIsa::sse2) {
          base.push_back(r);
        } else if (std::isnan(base[k])) {
          EXPECT_TRUE(std::isnan(r)) << isa_name(isa) << " " << xp::name(t) << " case " << k;
        } else {
          EXPECT_EQ(r, base[k]) << isa_name(isa) << " " << xp::name(t) << " case " << k;
        }
        ++k;
      }
    }
    EXPECT_EQ(base[0], std::numeric_limits<double>::infinity());  // the first case: +inf
    EXPECT_TRUE(std::isnan(base[1]));
  }
}

// The wide levels convert float16 and bfloat16 with vector integer operations: every one of the
// 65,536 bit patterns, as the mean of 1,024 copies (two whole leaves: exact for a finite value, so a
// float16 mean is the value itself, but for -0, whose sum is +0 as the compensation starts at +0),
// gives the baseline's bits.
TEST(SumLevels, Every16BitPatternOnEveryLevel) {
  const auto levels = supported_levels();
  if (levels.size() < 2) GTEST_SKIP() << "skipped: this CPU has SSE2 only, there is no other level to compare";
  const OneThread one;
  constexpr i64 kRows = 256, kCopies = 1024;
  std::vector<std::uint16_t> x(static_cast<std::size_t>(kRows * kCopies)), out(static_cast<std::size_t>(kRows));
  i64 shape[2] = {kRows, kCopies}, strides[2] = {kCopies * 2, 2}, out_shape[1] = {kRows}, out_strides[1] = {2};
  const int axes[] = {1};
  for (const DType t : {DType::float16, DType::bfloat16}) {
    int failures = 0;
    for (i64 first = 0; first < 65536; first += kRows) {
      for (i64 r = 0; r < kRows; ++r)
        std::fill_n(x.begin() + r * kCopies, kCopies, static_cast<std::uint16_t>(first + r));
      std::vector<std::uint16_t> base;
      for (const SumIsa isa : levels) {
        const ForcedLevel forced(isa);
        xp::detail::cpu::reduce(ReduceOp::mean, View{reinterpret_cast<std::byte*>(x.data()), t, 2, shape, strides},
                                axes, View{reinterpret_cast<std::byte*>(out.data()), t, 1, out_shape, out_strides});
        if (isa == SumIsa::sse2) {
          base = out;
          continue;
        }
        for (i64 r = 0; r < kRows; ++r)
          if (out[static_cast<std::size_t>(r)] != base[static_cast<std::size_t>(r)] && ++failures <= 10)
            ADD_FAILURE() << isa_name(isa) << " " << xp::name(t) << " pattern 0x" << std::hex << first + r << ": 0x"
                          << out[static_cast<std::size_t>(r)] << " vs 0x" << base[static_cast<std::size_t>(r)];
      }
      if (t == DType::float16)  // finite patterns come back as they are
        for (i64 r = 0; r < kRows; ++r)
          if (((first + r) & 0x7C00) != 0x7C00 && first + r != 0x8000 &&
              base[static_cast<std::size_t>(r)] != first + r && ++failures <= 10)
            ADD_FAILURE() << "float16 mean of copies of 0x" << std::hex << first + r << " is 0x"
                          << base[static_cast<std::size_t>(r)];
    }
    EXPECT_EQ(failures, 0) << xp::name(t);
  }
}

// reduce.hpp's summation tree, one lane at a time in scalars: blocks of 4096; in a block, halves
// (the first a multiple of L long) down to leaves of at most 512; a leaf of n >= L elements in L
// lanes (lane l adds elements l, l + L, ...; L = 8 for float32, 4 for float64), the lanes combined
// as a tree (lane l takes lane l + h, h = L/2 ... 1), then the leftover n % L elements; every
// addition compensated (TwoSum); blocks combined pairwise, neighbours first, a lone last one carried.
template <class A>
struct Tree {
  static constexpr i64 kL = 32 / sizeof(A);
  struct P {
    A s, c;
  };
  static void add(P& p, A x) {
    const A t = p.s + x, z = t - p.s;
    p.c += (p.s - (t - z)) + (x - z);
    p.s = t;
  }
  static void merge(P& a, P b) {
    const A t = a.s + b.s, z = t - a.s;
    a.c = (a.c + b.c) + ((a.s - (t - z)) + (b.s - z));
    a.s = t;
  }
  static P leaf(const A* x, i64 n) {
    P r{x[0], 0};
    if (n < kL) {
      for (i64 i = 1; i < n; ++i) add(r, x[i]);
      return r;
    }
    P lane[kL];
    const i64 full = n - n % kL;
    for (i64 l = 0; l < kL; ++l) {
      lane[l] = {x[l], 0};
      for (i64 i = kL + l; i < full; i += kL) add(lane[l], x[i]);
    }
    for (i64 h = kL / 2; h >= 1; h /= 2)
      for (i64 l = 0; l < h; ++l) merge(lane[l], lane[l + h]);
    for (i64 i = full; i < n; ++i) add(lane[0], x[i]);
    return lane[0];
  }
  static P halves(const A* x, i64 n) {
    if (n <= 512) return leaf(x, n);
    i64 h = n / 2;
    h -= h % kL;
    P a = halves(x, h);
    merge(a, halves(x + h, n - h));
    return a;
  }
  static A sum(const A* x, i64 n) {
    std::vector<P> b;
    for (i64 i = 0; i < n; i += 4096) b.push_back(halves(x + i, std::min<i64>(4096, n - i)));
    while (b.size() > 1) {
      std::vector<P> up;
      for (std::size_t i = 0; i + 1 < b.size(); i += 2) {
        P p = b[i];
        merge(p, b[i + 1]);
        up.push_back(p);
      }
      if (b.size() % 2 == 1) up.push_back(b.back());
      b = up;
    }
    return std::isfinite(b[0].s) ? b[0].s + b[0].c : b[0].s;
  }
};

TEST(SumLevels, EveryLevelIsTheDocumentedTree) {
  const Inputs in(70000 + 8);
  const int saved = xp::detail::num_threads();
  for (const SumIsa isa : supported_levels()) {
    const ForcedLevel forced(isa);
    for (const int threads : {1, 2}) {
      xp::detail::set_num_threads(threads);
      int failures = 0;
      for (const i64 start : {0, 1}) {
        for (const i64 n : sizes()) {
          const float* f = in.f32.data() + start;
          const double* d = in.f64.data() + start;
          float fs;
          double ds;
          std::memcpy(&fs, reduce_bytes(ReduceOp::sum, DType::float32, f, n).data(), 4);
          std::memcpy(&ds, reduce_bytes(ReduceOp::sum, DType::float64, d, n).data(), 8);
          const float fw = Tree<float>::sum(f, n);
          const double dw = Tree<double>::sum(d, n);
          if (std::memcmp(&fs, &fw, 4) != 0 && ++failures <= 10)
            ADD_FAILURE() << isa_name(isa) << " float32 start " << start << " n " << n << ": " << fs << " vs " << fw;
          if (std::memcmp(&ds, &dw, 8) != 0 && ++failures <= 10)
            ADD_FAILURE() << isa_name(isa) << " float64 start " << start << " n " << n << ": " << ds << " vs " << dw;
        }
      }
      EXPECT_EQ(failures, 0) << isa_name(isa) << ", " << threads << " threads";
    }
  }
  xp::detail::set_num_threads(saved);
}

TEST(SumLevels, ForcingALevelTheCpuLacksIsAValueError) {
  const SumIsa best = xp::detail::cpu::sum_isa_supported();
  if (best == SumIsa::avx512) GTEST_SKIP() << "skipped: this CPU supports every level";
  const SumIsa above = static_cast<SumIsa>(static_cast<int>(best) + 1);
  EXPECT_THROW(xp::detail::cpu::set_sum_isa(above), xp::ValueError);
  EXPECT_EQ(xp::detail::cpu::set_sum_isa(best), best);  // unchanged by the refusal
}

}  // namespace
