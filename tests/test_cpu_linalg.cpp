// matmul and vecdot on the CPU, white-box: Views over buffers made here, every dtype, strided,
// transposed, broadcast and reversed operands, on OpenBLAS's path and on xp's own loop, each
// checked against a plain triple loop in double precision (integers in exact modular arithmetic).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/blas.hpp"
#include "backend/cpu/linalg.hpp"
#include "runtime/parallel.hpp"
#include "test_util.hpp"
#include "xp/dtype.hpp"
#include "xp/error.hpp"

namespace {

namespace cpu = xp::detail::cpu;
using xp::DType;
using xp::detail::View;
using i64 = std::int64_t;

constexpr DType kAllDtypes[] = {DType::bool_,    DType::int8,    DType::int16,  DType::int32,  DType::int64,
                                DType::uint8,    DType::uint16,  DType::uint32, DType::uint64, DType::float16,
                                DType::bfloat16, DType::float32, DType::float64};

bool is_float(DType t) {
  return xp::kind(t) == xp::DTypeKind::floating;
}

// How an operand's last two dimensions lie in memory.
enum class Layout {
  c,           // row-major, contiguous
  transposed,  // column-major (a transposed C array)
  stepped,     // every 2nd column, every 3rd row, starting one element in: gaps everywhere
  reversed,    // row-major with both strides negative (data points at the last element)
};
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::c:
      return "c";
    case Layout::transposed:
      return "transposed";
    case Layout::stepped:
      return "stepped";
    case Layout::reversed:
      return "reversed";
  }
  return "?";
}

constexpr std::uint8_t kSentinel = 0xA5;

// A strided array over its own byte buffer (filled with kSentinel), like a NumPy view of a larger
// base. `broadcast` marks dimensions stored once with stride 0.
class Tensor {
 public:
  Tensor(DType dtype, std::vector<i64> shape, Layout layout, std::vector<bool> broadcast = {})
      : dtype_(dtype), shape_(std::move(shape)), strides_(shape_.size()) {
    const int nd = static_cast<int>(shape_.size());
    broadcast.resize(shape_.size(), false);
    const i64 e = static_cast<i64>(xp::itemsize(dtype));
    std::vector<int> order;  // innermost first
    for (int d = nd - 1; d >= 0; --d) order.push_back(d);
    if (layout == Layout::transposed && nd >= 2) std::swap(order[0], order[1]);
    i64 span = 1;  // elements
    for (int d : order) {
      const i64 step = layout == Layout::stepped && d >= nd - 2 ? (d == nd - 1 ? 2 : 3) : 1;
      const i64 extent = broadcast[d] ? 1 : std::max<i64>(shape_[d], 1);
      strides_[d] = broadcast[d] ? 0 : span * step * e;
      span *= extent * step;
    }
    i64 start = layout == Layout::stepped ? 1 : 0;
    if (layout == Layout::reversed) {
      for (int d = std::max(0, nd - 2); d < nd; ++d) {
        start += (std::max<i64>(shape_[d], 1) - 1) * strides_[d] / e;
        strides_[d] = -strides_[d];
      }
    }
    buf_.assign(static_cast<std::size_t>((span + 2) * e), std::byte{kSentinel});
    data_ = buf_.data() + start * e;
  }

  View view() const { return View{data_, dtype_, static_cast<int>(shape_.size()), shape_.data(), strides_.data()}; }
  DType dtype() const { return dtype_; }
  const std::vector<i64>& shape() const { return shape_; }
  i64 size() const {
    i64 n = 1;
    for (i64 s : shape_) n *= s;
    return n;
  }
  std::byte* at(const std::vector<i64>& idx) const {
    std::byte* p = data_;
    for (std::size_t d = 0; d < idx.size(); ++d) p += idx[d] * strides_[d];
    return p;
  }
  // Every element in C order: fn(index).
  template <class F>
  void for_each(F&& fn) const {
    if (size() == 0) return;
    std::vector<i64> idx(shape_.size(), 0);
    for (;;) {
      fn(idx);
      int d = static_cast<int>(shape_.size()) - 1;
      for (; d >= 0; --d) {
        if (++idx[d] < shape_[d]) break;
        idx[d] = 0;
      }
      if (d < 0) return;
    }
  }

  // The value as a double (floats, bool and small integers) ...
  double get(const std::vector<i64>& idx) const {
    const std::byte* p = at(idx);
    switch (dtype_) {
      case DType::float16:
        return xp::half_bits_to_float(raw<std::uint16_t>(p));
      case DType::bfloat16:
        return xp::bfloat16_bits_to_float(raw<std::uint16_t>(p));
      case DType::float32:
        return raw<float>(p);
      case DType::float64:
        return raw<double>(p);
      default:
        return static_cast<double>(static_cast<i64>(get_bits(idx)));
    }
  }
  // ... and an integer or bool as its value modulo 2^64 (signed types sign-extended).
  std::uint64_t get_bits(const std::vector<i64>& idx) const {
    std::uint64_t v = 0;
    std::memcpy(&v, at(idx), xp::itemsize(dtype_));
    return canonical(dtype_, v);
  }
  void set(const std::vector<i64>& idx, double v) {
    std::byte* p = at(idx);
    switch (dtype_) {
      case DType::float16:
        return put(p, xp::float_to_half_bits(static_cast<float>(v)));
      case DType::bfloat16:
        return put(p, xp::float_to_bfloat16_bits(static_cast<float>(v)));
      case DType::float32:
        return put(p, static_cast<float>(v));
      case DType::float64:
        return put(p, v);
      default:
        return set_bits(idx, static_cast<std::uint64_t>(static_cast<i64>(v)));
    }
  }
  void set_bits(const std::vector<i64>& idx, std::uint64_t v) {
    std::memcpy(at(idx), &v, xp::itemsize(dtype_));  // little-endian: the low bytes
  }

  // Truncates to the dtype's width and sign-extends signed types (bool: 0 or 1).
  static std::uint64_t canonical(DType t, std::uint64_t v) {
    const int bits = static_cast<int>(xp::itemsize(t)) * 8;
    if (t == DType::bool_) return (v & 0xff) != 0 ? 1 : 0;
    if (bits < 64) {
      v &= (std::uint64_t{1} << bits) - 1;
      if (xp::kind(t) == xp::DTypeKind::signed_integer && (v >> (bits - 1)) != 0) v |= ~std::uint64_t{0} << bits;
    }
    return v;
  }

  // Fills every element with a random value: floats in [-1, 1] (rounded to the dtype), integers
  // over their whole range (so sums of products wrap), bool true with probability 0.2.
  void fill_random(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for_each([&](const std::vector<i64>& idx) {
      if (is_float(dtype_)) {
        set(idx, u(rng));
      } else if (dtype_ == DType::bool_) {
        set_bits(idx, rng() % 5 == 0 ? 1 : 0);
      } else {
        set_bits(idx, rng());
      }
    });
  }

  // True when no byte outside the view's elements changed from kSentinel.
  bool gaps_untouched() const {
    std::vector<bool> mine(buf_.size(), false);
    const std::size_t e = xp::itemsize(dtype_);
    for_each([&](const std::vector<i64>& idx) {
      const std::size_t off = static_cast<std::size_t>(at(idx) - buf_.data());
      for (std::size_t b = 0; b < e; ++b) mine[off + b] = true;
    });
    for (std::size_t i = 0; i < buf_.size(); ++i)
      if (!mine[i] && buf_[i] != std::byte{kSentinel}) return false;
    return true;
  }

 private:
  template <class S>
  static S raw(const std::byte* p) {
    S s;
    std::memcpy(&s, p, sizeof s);
    return s;
  }
  template <class S>
  static void put(std::byte* p, S s) {
    std::memcpy(p, &s, sizeof s);
  }

  DType dtype_;
  std::vector<i64> shape_, strides_;
  std::vector<std::byte> buf_;
  std::byte* data_ = nullptr;
};

// Sets the gemm path for one scope.
class PathScope {
 public:
  explicit PathScope(cpu::GemmPath p) { cpu::set_gemm_path(p); }
  ~PathScope() { cpu::set_gemm_path(cpu::GemmPath::automatic); }
};

// Sets xp's thread count for one scope.
class ThreadsScope {
 public:
  explicit ThreadsScope(int n) : before_(xp::detail::num_threads()) { xp::detail::set_num_threads(n); }
  ~ThreadsScope() { xp::detail::set_num_threads(before_); }

 private:
  int before_;
};

double ulp_of(DType t, double x) {
  const int mantissa = t == DType::float16 ? 10 : t == DType::bfloat16 ? 7 : t == DType::float32 ? 23 : 52;
  const int min_exp = t == DType::float16 ? -14 : t == DType::float64 ? -1022 : -126;
  int e = 0;
  std::frexp(std::fabs(x), &e);  // |x| = f * 2^e, f in [0.5, 1)
  return std::ldexp(1.0, std::max(e - 1, min_exp) - mantissa);
}

// The allowed error of a float result whose exact value is `ref`, from k products whose absolute
// values sum to `sumabs`: the float32 (or float64) summation bound, plus one rounding to 16 bits.
double tolerance(DType t, i64 k, double ref, double sumabs) {
  const double eps = t == DType::float64 ? 0x1p-53 : 0x1p-24;
  const double sum_err = 2.0 * static_cast<double>(k + 1) * eps * sumabs + 1e-300;
  if (t == DType::float16 || t == DType::bfloat16) return sum_err + ulp_of(t, std::fabs(ref) + sum_err);
  return sum_err;
}

// Checks out == a @ b against the reference loop; returns the number of mismatches (reported).
int check_matmul(const Tensor& a, const Tensor& b, const Tensor& out, const std::string& what) {
  const int nd = static_cast<int>(a.shape().size());
  const i64 k = a.shape()[nd - 1];
  const DType t = a.dtype();
  int bad = 0;
  out.for_each([&](const std::vector<i64>& idx) {
    std::vector<i64> ia = idx, ib = idx;
    const i64 i = idx[nd - 2], j = idx[nd - 1];
    if (is_float(t)) {
      double ref = 0, sumabs = 0;
      for (i64 p = 0; p < k; ++p) {
        ia[nd - 2] = i, ia[nd - 1] = p, ib[nd - 2] = p, ib[nd - 1] = j;
        const double x = a.get(ia) * b.get(ib);
        ref += x;
        sumabs += std::fabs(x);
      }
      const double got = out.get(idx);
      if (!(std::fabs(got - ref) <= tolerance(t, k, ref, sumabs)) && ++bad <= 3)
        ADD_FAILURE() << what << ": element (" << i << ", " << j << ") is " << got << ", expected " << ref;
    } else {
      std::uint64_t ref = 0;
      for (i64 p = 0; p < k; ++p) {
        ia[nd - 2] = i, ia[nd - 1] = p, ib[nd - 2] = p, ib[nd - 1] = j;
        if (t == DType::bool_) {
          ref |= a.get_bits(ia) & b.get_bits(ib);
        } else {
          ref += a.get_bits(ia) * b.get_bits(ib);
        }
      }
      ref = Tensor::canonical(t, ref);
      const std::uint64_t got = out.get_bits(idx);
      if (got != ref && ++bad <= 3)
        ADD_FAILURE() << what << ": element (" << i << ", " << j << ") is " << got << ", expected " << ref;
    }
  });
  if (!out.gaps_untouched()) {
    ++bad;
    ADD_FAILURE() << what << ": bytes outside the output view changed";
  }
  return bad;
}

struct Case {
  std::vector<i64> batch;
  i64 m, k, n;
};

std::string case_name(const Case& c) {
  std::string s;
  for (i64 b : c.batch) s += std::to_string(b) + "x";
  return s + "(" + std::to_string(c.m) + "," + std::to_string(c.k) + ")@(" + std::to_string(c.k) + "," +
         std::to_string(c.n) + ")";
}

// Builds a @ b for one case with the given layouts (batch dims: a broadcast over its last batch
// dimension, b over its first, when there are two), runs matmul and checks it.
void run_case(DType t, const Case& c, Layout la, Layout lb, Layout lo, std::mt19937_64& rng) {
  std::vector<i64> sa = c.batch, sb = c.batch, so = c.batch;
  sa.insert(sa.end(), {c.m, c.k});
  sb.insert(sb.end(), {c.k, c.n});
  so.insert(so.end(), {c.m, c.n});
  std::vector<bool> ba(sa.size(), false), bb(sb.size(), false);
  if (c.batch.size() == 2) ba[1] = true, bb[0] = true;
  if (c.batch.size() == 1) bb[0] = true;
  Tensor a(t, sa, la, ba), b(t, sb, lb, bb), out(t, so, lo);
  a.fill_random(rng);
  b.fill_random(rng);
  cpu::matmul(a.view(), b.view(), out.view());
  check_matmul(a, b, out,
               std::string(xp::name(t)) + " " + case_name(c) + " a " + layout_name(la) + ", b " + layout_name(lb) +
                   ", out " + layout_name(lo));
}

const Case kCases[] = {{{}, 5, 7, 3},     {{}, 17, 17, 17}, {{}, 33, 19, 45}, {{}, 6, 1, 9},    {{}, 1, 40, 30},
                       {{}, 30, 40, 1},   {{}, 1, 50, 1},   {{}, 0, 4, 5},    {{}, 3, 4, 0},    {{}, 3, 0, 5},
                       {{2, 3}, 4, 5, 6}, {{0}, 2, 3, 4},   {{3}, 9, 1, 2},   {{4}, 20, 21, 22}};

struct Layouts {
  Layout a, b, out;
};
const Layouts kLayouts[] = {
    {Layout::c, Layout::c, Layout::c},
    {Layout::transposed, Layout::c, Layout::c},
    {Layout::c, Layout::transposed, Layout::c},
    {Layout::transposed, Layout::transposed, Layout::c},
    {Layout::stepped, Layout::stepped, Layout::c},
    {Layout::reversed, Layout::c, Layout::stepped},
    {Layout::c, Layout::reversed, Layout::transposed},
    {Layout::stepped, Layout::transposed, Layout::reversed},
    {Layout::reversed, Layout::reversed, Layout::reversed},
    {Layout::c, Layout::c, Layout::transposed},
    {Layout::transposed, Layout::stepped, Layout::stepped},
};

const char* path_name(cpu::GemmPath p) {
  return p == cpu::GemmPath::blas ? "blas" : p == cpu::GemmPath::loop ? "loop" : "automatic";
}

class MatmulTest : public ::testing::TestWithParam<std::tuple<DType, cpu::GemmPath>> {};

TEST_P(MatmulTest, ShapesAndLayouts) {
  const auto [t, path] = GetParam();
  if (path == cpu::GemmPath::blas && !cpu::blas_info().loaded)
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", cpu::blas_info().error);
  PathScope scope(path);
  std::mt19937_64 rng(1234 + static_cast<int>(t));
  const std::uint64_t calls = cpu::blas_call_count();
  for (const Case& c : kCases)
    for (const Layouts& l : kLayouts) run_case(t, c, l.a, l.b, l.out, rng);
  // Which path ran: the loop never calls BLAS; forced BLAS calls it for every float dtype.
  if (path == cpu::GemmPath::loop || !is_float(t)) {
    EXPECT_EQ(cpu::blas_call_count(), calls);
  } else {
    EXPECT_GT(cpu::blas_call_count(), calls);
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, MatmulTest,
                         ::testing::Combine(::testing::ValuesIn(kAllDtypes),
                                            ::testing::Values(cpu::GemmPath::loop, cpu::GemmPath::blas,
                                                              cpu::GemmPath::automatic)),
                         [](const auto& info) {
                           return std::string(xp::name(std::get<0>(info.param))) + "_" +
                                  path_name(std::get<1>(info.param));
                         });

// Larger than one cache block in every dimension (the loop's k and n blocking, BLAS's threads).
TEST(Matmul, LargerFloat) {
  std::mt19937_64 rng(7);
  for (const auto path : {cpu::GemmPath::loop, cpu::GemmPath::blas}) {
    PathScope scope(path);
    for (const DType t : {DType::float32, DType::float64, DType::bfloat16}) {
      run_case(t, {{}, 13, 270, 530}, Layout::c, Layout::c, Layout::c, rng);
      run_case(t, {{2}, 45, 260, 60}, Layout::transposed, Layout::stepped, Layout::transposed, rng);
    }
    run_case(DType::int32, {{}, 9, 300, 520}, Layout::c, Layout::transposed, Layout::c, rng);
  }
}

// float16 and bfloat16 are computed in float32 and rounded once: bit for bit the float32 product of
// the same (widened) values, rounded, on both paths.
TEST(Matmul, HalfRoundsOnceFromFloat32) {
  std::mt19937_64 rng(11);
  for (const auto path : {cpu::GemmPath::loop, cpu::GemmPath::blas}) {
    PathScope scope(path);
    for (const DType t : {DType::float16, DType::bfloat16}) {
      const i64 m = 24, k = 200, n = 20;
      Tensor a(t, {m, k}, Layout::c), b(t, {k, n}, Layout::c), out(t, {m, n}, Layout::c);
      Tensor a32(DType::float32, {m, k}, Layout::c), b32(DType::float32, {k, n}, Layout::c),
          out32(DType::float32, {m, n}, Layout::c);
      a.fill_random(rng);
      b.fill_random(rng);
      a.for_each([&](const auto& idx) { a32.set(idx, a.get(idx)); });
      b.for_each([&](const auto& idx) { b32.set(idx, b.get(idx)); });
      cpu::matmul(a.view(), b.view(), out.view());
      cpu::matmul(a32.view(), b32.view(), out32.view());
      int bad = 0;
      out.for_each([&](const auto& idx) {
        const float f = static_cast<float>(out32.get(idx));
        const std::uint16_t want = t == DType::float16 ? xp::float_to_half_bits(f) : xp::float_to_bfloat16_bits(f);
        std::uint16_t got = 0;
        std::memcpy(&got, out.at(idx), 2);
        if (got != want && ++bad <= 3) ADD_FAILURE() << xp::name(t) << " " << path_name(path) << " at " << idx[0];
      });
    }
  }
}

TEST(Matmul, IntegerWrapAround) {
  PathScope scope(cpu::GemmPath::automatic);
  auto one = [](DType t, std::vector<std::uint64_t> av, std::vector<std::uint64_t> bv) {
    const i64 k = static_cast<i64>(av.size());
    Tensor a(t, {1, k}, Layout::c), b(t, {k, 1}, Layout::c), out(t, {1, 1}, Layout::c);
    for (i64 p = 0; p < k; ++p) a.set_bits({0, p}, av[p]), b.set_bits({p, 0}, bv[p]);
    cpu::matmul(a.view(), b.view(), out.view());
    return out.get_bits({0, 0});
  };
  EXPECT_EQ(static_cast<i64>(one(DType::int8, {100, 100}, {2, 1})), 44);       // 300 - 256
  EXPECT_EQ(static_cast<i64>(one(DType::int8, {0x80, 0x7f}, {0xff, 1})), -1);  // -128 * -1 + 127 = 255
  EXPECT_EQ(one(DType::uint8, {200, 100}, {2, 3}), 188u);                      // 700 mod 256
  EXPECT_EQ(one(DType::uint16, {65535}, {65535}), 1u);                         // (2^16 - 1)^2 mod 2^16
  EXPECT_EQ(static_cast<i64>(one(DType::int32, {0x7fffffff}, {2})), -2);       // wraps, no UB
  EXPECT_EQ(one(DType::uint64, {~0ull, ~0ull}, {~0ull, 3}), 0ull - 2);         // 1 + (2^64 - 3)
  EXPECT_EQ(static_cast<i64>(one(DType::int64, {1ull << 62}, {4})), 0);        // 2^64 mod 2^64
  EXPECT_EQ(one(DType::bool_, {0, 1, 1}, {1, 0, 1}), 1u);
  EXPECT_EQ(one(DType::bool_, {0, 1, 0}, {1, 0, 1}), 0u);
  EXPECT_EQ(one(DType::bool_, {2, 0}, {4, 0}), 1u);  // any nonzero byte is true
}

// Many small matrices: the automatic path runs the loop over the batch on xp's threads.
TEST(Matmul, ManySmallMatricesUseTheLoop) {
  PathScope scope(cpu::GemmPath::automatic);
  std::mt19937_64 rng(3);
  const std::uint64_t calls = cpu::blas_call_count();
  run_case(DType::float32, {{64, 5}, 6, 5, 7}, Layout::c, Layout::transposed, Layout::c, rng);
  EXPECT_EQ(cpu::blas_call_count(), calls);
}

// xp's loop gives the same bits whatever the thread count; BLAS the same bits twice at one count.
TEST(Matmul, Deterministic) {
  std::mt19937_64 rng(5);
  const i64 m = 67, k = 300, n = 45;
  Tensor a(DType::float32, {3, m, k}, Layout::c), b(DType::float32, {3, k, n}, Layout::c);
  a.fill_random(rng);
  b.fill_random(rng);
  auto run = [&](cpu::GemmPath path, int threads) {
    PathScope scope(path);
    ThreadsScope ts(threads);
    Tensor out(DType::float32, {3, m, n}, Layout::c);
    cpu::matmul(a.view(), b.view(), out.view());
    std::vector<float> v;
    out.for_each([&](const auto& idx) { v.push_back(static_cast<float>(out.get(idx))); });
    return v;
  };
  EXPECT_EQ(run(cpu::GemmPath::loop, 1), run(cpu::GemmPath::loop, 2));
  EXPECT_EQ(run(cpu::GemmPath::loop, 1), run(cpu::GemmPath::loop, 3));
  EXPECT_EQ(run(cpu::GemmPath::blas, 2), run(cpu::GemmPath::blas, 2));
}

// On one of xp's threads matmul never calls BLAS (its threads would oversubscribe the cores).
TEST(Matmul, InsideParallelForRunsTheLoop) {
  if (!cpu::blas_info().loaded) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", cpu::blas_info().error);
  PathScope scope(cpu::GemmPath::blas);
  ThreadsScope ts(2);
  std::mt19937_64 rng(9);
  std::vector<Tensor> as, bs, outs;
  for (int i = 0; i < 4; ++i) {
    as.emplace_back(DType::float32, std::vector<i64>{40, 50}, Layout::c);
    bs.emplace_back(DType::float32, std::vector<i64>{50, 30}, Layout::transposed);
    outs.emplace_back(DType::float32, std::vector<i64>{40, 30}, Layout::c);
    as.back().fill_random(rng);
    bs.back().fill_random(rng);
  }
  const std::uint64_t calls = cpu::blas_call_count();
  xp::detail::parallel_for(4, 1, [&](i64 b0, i64 b1) {
    for (i64 i = b0; i < b1; ++i) cpu::matmul(as[i].view(), bs[i].view(), outs[i].view());
  });
  EXPECT_EQ(cpu::blas_call_count(), calls);
  for (int i = 0; i < 4; ++i) check_matmul(as[i], bs[i], outs[i], "inside parallel_for");
}

// OpenBLAS runs as many threads as xp, also after xp's count changes.
TEST(Matmul, BlasThreadsFollowXp) {
  const cpu::BlasInfo info = cpu::blas_info();
  if (!info.loaded) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", info.error);
  const bool sequential = cpu::blas_library().parallel == 0;  // a sequential build stays at 1
  PathScope scope(cpu::GemmPath::blas);
  std::mt19937_64 rng(2);
  auto matmul_then_threads = [&] {
    run_case(DType::float64, {{}, 30, 30, 30}, Layout::c, Layout::c, Layout::c, rng);
    return cpu::blas_info().threads;
  };
  EXPECT_EQ(matmul_then_threads(), sequential ? 1 : xp::detail::num_threads());
  {
    ThreadsScope ts(1);
    EXPECT_EQ(matmul_then_threads(), 1);
  }
  {
    ThreadsScope ts(3);
    EXPECT_EQ(matmul_then_threads(), sequential ? 1 : 3);
  }
  EXPECT_EQ(matmul_then_threads(), sequential ? 1 : xp::detail::num_threads());
}

TEST(Matmul, BadViewsThrow) {
  Tensor a(DType::float32, {2, 3}, Layout::c), b(DType::float32, {4, 5}, Layout::c),
      out(DType::float32, {2, 5}, Layout::c);
  EXPECT_THROW(cpu::matmul(a.view(), b.view(), out.view()), xp::ValueError);
  Tensor b2(DType::float64, {3, 5}, Layout::c);
  EXPECT_THROW(cpu::matmul(a.view(), b2.view(), out.view()), xp::ValueError);
  Tensor v(DType::float32, {3}, Layout::c), o1(DType::float32, {2}, Layout::c);
  EXPECT_THROW(cpu::matmul(a.view(), v.view(), o1.view()), xp::ValueError);
  EXPECT_THROW(cpu::vecdot(a.view(), b.view(), o1.view()), xp::ValueError);
}

TEST(Blas, Info) {
  const cpu::BlasInfo info = cpu::blas_info();
  if (!info.loaded) {
    EXPECT_NE(info.error.find("libopenblas.so.0"), std::string::npos) << info.error;
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", "OpenBLAS is not installed: " + info.error);
  }
  EXPECT_TRUE(info.error.empty());
  EXPECT_NE(info.path.find("openblas"), std::string::npos) << info.path;
  EXPECT_EQ(info.path.front(), '/');
  EXPECT_EQ(info.config.rfind("OpenBLAS", 0), 0u) << info.config;
  EXPECT_GE(info.threads, 1);
}

TEST(Blas, MissingOrIncompleteLibrarySaysWhy) {
  const cpu::BlasLibrary none = cpu::open_blas({"libxp-no-such-blas.so.0", "libxp-no-such-blas.so"});
  EXPECT_FALSE(none.loaded);
  EXPECT_NE(none.error.find("libxp-no-such-blas.so.0"), std::string::npos) << none.error;
  EXPECT_NE(none.error.find("libxp-no-such-blas.so:"), std::string::npos) << none.error;
  const cpu::BlasLibrary libm = cpu::open_blas({"libm.so.6"});
  EXPECT_FALSE(libm.loaded);
  EXPECT_NE(libm.error.find("lacks cblas_sgemm cblas_dgemm"), std::string::npos) << libm.error;
}

// ---- vecdot

void check_vecdot(const Tensor& a, const Tensor& b, const Tensor& out, const std::string& what) {
  const int nd = static_cast<int>(a.shape().size());
  const i64 k = a.shape()[nd - 1];
  const DType t = a.dtype();
  int bad = 0;
  out.for_each([&](const std::vector<i64>& idx) {
    std::vector<i64> ia = idx;
    ia.push_back(0);
    if (is_float(t)) {
      double ref = 0, sumabs = 0;
      for (i64 p = 0; p < k; ++p) {
        ia[nd - 1] = p;
        ref += a.get(ia) * b.get(ia);
        sumabs += std::fabs(a.get(ia) * b.get(ia));
      }
      // A pairwise sum: the error grows with log2(k), not k.
      const i64 k_eff = static_cast<i64>(std::ceil(std::log2(static_cast<double>(k) + 1))) + 16;
      const double got = out.get(idx);
      if (!(std::fabs(got - ref) <= tolerance(t, std::min(k, k_eff), ref, sumabs)) && ++bad <= 3)
        ADD_FAILURE() << what << ": " << got << ", expected " << ref;
    } else {
      std::uint64_t ref = 0;
      for (i64 p = 0; p < k; ++p) {
        ia[nd - 1] = p;
        if (t == DType::bool_) {
          ref |= a.get_bits(ia) & b.get_bits(ia);
        } else {
          ref += a.get_bits(ia) * b.get_bits(ia);
        }
      }
      if (out.get_bits(idx) != Tensor::canonical(t, ref) && ++bad <= 3)
        ADD_FAILURE() << what << ": " << out.get_bits(idx) << ", expected " << Tensor::canonical(t, ref);
    }
  });
  if (!out.gaps_untouched()) ADD_FAILURE() << what << ": bytes outside the output view changed";
}

class VecdotTest : public ::testing::TestWithParam<DType> {};

TEST_P(VecdotTest, ShapesAndLayouts) {
  const DType t = GetParam();
  std::mt19937_64 rng(77 + static_cast<int>(t));
  struct VCase {
    std::vector<i64> shape;
    std::vector<bool> bcast_a;
  };
  const VCase cases[] = {{{5}, {}},
                         {{0}, {}},
                         {{1}, {}},
                         {{4, 0}, {}},
                         {{0, 3}, {}},
                         {{3, 7}, {true, false}},
                         {{2, 3, 130}, {false, true, false}},
                         {{2, 1000}, {}},
                         {{6, 2, 9}, {}},
                         {{2, 4100}, {true, false}}};
  for (const VCase& c : cases) {
    for (const Layout l : {Layout::c, Layout::stepped, Layout::reversed, Layout::transposed}) {
      std::vector<i64> so(c.shape.begin(), c.shape.end() - 1);
      Tensor a(t, c.shape, l, c.bcast_a), b(t, c.shape, Layout::c), out(t, so, l == Layout::c ? l : Layout::stepped);
      a.fill_random(rng);
      b.fill_random(rng);
      cpu::vecdot(a.view(), b.view(), out.view());
      std::ostringstream what;
      what << xp::name(t) << " vecdot " << layout_name(l) << " shape";
      for (i64 s : c.shape) what << " " << s;
      check_vecdot(a, b, out, what.str());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, VecdotTest, ::testing::ValuesIn(kAllDtypes),
                         [](const auto& info) { return std::string(xp::name(info.param)); });

}  // namespace

// Which kernels xp asks OpenBLAS for: the user's OPENBLAS_CORETYPE wins; else the CPU's vector
// level; without AVX2, OpenBLAS's own choice.
TEST(BlasCore, ChoiceFollowsTheUserThenTheCpu) {
  EXPECT_EQ(cpu::choose_openblas_core(std::string("Haswell"), true, true).coretype, "");
  EXPECT_NE(cpu::choose_openblas_core(std::string("Haswell"), true, true).reason.find("OPENBLAS_CORETYPE=Haswell"),
            std::string::npos);
  EXPECT_EQ(cpu::choose_openblas_core(std::nullopt, true, true).coretype, "SkylakeX");
  EXPECT_EQ(cpu::choose_openblas_core(std::nullopt, false, true).coretype, "Haswell");
  EXPECT_EQ(cpu::choose_openblas_core(std::nullopt, false, false).coretype, "");
  EXPECT_NE(cpu::choose_openblas_core(std::nullopt, false, false).reason.find("OpenBLAS's own"), std::string::npos);
}

// Run by BlasCore.TheLoadedKernelsAreTheChoiceAndTheEnvironmentIsRestored in a fresh process:
// prints what the BLAS reports after a matmul loaded it, and whether OPENBLAS_CORETYPE is set.
TEST(BlasCore, DISABLED_ReportChild) {
  const cpu::BlasInfo info = cpu::blas_info();
  const char* env = std::getenv("OPENBLAS_CORETYPE");
  std::printf("loaded=%d core=[%s] reason=[%s] env=[%s] error=[%s]\n", info.loaded ? 1 : 0, info.core.c_str(),
              info.core_reason.c_str(), env == nullptr ? "(unset)" : env, info.error.c_str());
}

TEST(BlasCore, TheLoadedKernelsAreTheChoiceAndTheEnvironmentIsRestored) {
  const cpu::BlasInfo here = cpu::blas_info();
  if (!here.loaded) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", here.error);
  if (here.config.find("DYNAMIC_ARCH") == std::string::npos)
    GTEST_SKIP() << "this OpenBLAS is not a DYNAMIC_ARCH build: its kernels are fixed (" << here.config << ")";
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  const bool avx512 = false, avx2 = false;
#endif
  const std::string want = cpu::choose_openblas_core(std::nullopt, avx512, avx2).coretype;
  // Left to xp: the kernels xp chose, and the variable gone again after the load.
  const auto mine = xp_test::run_child_case("BlasCore.DISABLED_ReportChild", {}, {"OPENBLAS_CORETYPE"});
  ASSERT_EQ(mine.exit_code, 0) << mine.out << mine.err;
  EXPECT_NE(mine.out.find("loaded=1"), std::string::npos) << mine.out;
  EXPECT_NE(mine.out.find("env=[(unset)]"), std::string::npos) << mine.out;
  if (!want.empty()) {
    EXPECT_NE(mine.out.find("core=[" + want + "]"), std::string::npos) << mine.out;
    EXPECT_NE(mine.out.find("chosen by xp from the CPU's features"), std::string::npos) << mine.out;
  }
  // The user's choice is kept, and left in the environment as the user set it.
  const auto users = xp_test::run_child_case("BlasCore.DISABLED_ReportChild", {{"OPENBLAS_CORETYPE", "Prescott"}});
  ASSERT_EQ(users.exit_code, 0) << users.out << users.err;
  EXPECT_NE(users.out.find("core=[Prescott]"), std::string::npos) << users.out;
  EXPECT_NE(users.out.find("reason=[OPENBLAS_CORETYPE=Prescott, set in the environment]"), std::string::npos)
      << users.out;
  EXPECT_NE(users.out.find("env=[Prescott]"), std::string::npos) << users.out;
}

// A wrong gemm is caught by the check at load and named; the library in use passes it.
void wrong_sgemm(int, int, int, int m, int n, int, float, const float*, int, const float*, int, float, float* c,
                 int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) c[i * ldc + j] = (i == m - 1 && j == n - 1) ? 1000.0f : 0.0f;
}

TEST(BlasCore, TheCheckAtLoadCatchesAWrongResult) {
  const cpu::BlasInfo info = cpu::blas_info();
  if (!info.loaded) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", info.error);
  EXPECT_EQ(cpu::check_blas(cpu::blas_library()), "");
  cpu::BlasLibrary bad;
  bad.sgemm = &wrong_sgemm;
  bad.dgemm = cpu::blas_library().dgemm;
  const std::string why = cpu::check_blas(bad);
  EXPECT_NE(why.find("sgemm 1x1x1: element (0, 0) is 1000"), std::string::npos) << why;
}
