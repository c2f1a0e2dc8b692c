// CPU reductions and cumulative sums (src/backend/cpu/reduce.cpp), white-box: Views over buffers
// made here.
//
// NumPy* tests: every op and dtype over strided views (contiguous, transposed, negative and zero
// strides, sliced, size-0 and size-1 axes, 0-d, 64 dimensions, several blocks long) against
// tests/ref/reduce_reference.py (NumPy 2 and ml_dtypes in the repository's .venv; without them those
// tests skip with the reason, a failure under XP_TEST_REQUIRE_NUMPY=1). Integer results, min, max,
// argmin, argmax, any, all and cumulative sums must be exact. Float sums, means, variances and
// products are checked against a long double reference with the a priori error bound of xp's
// summation tree (see float_tolerance). Accuracy: ill-conditioned sums against math.fsum, no worse
// than np.sum on the same input.
//
// The other tests need nothing: results independent of the thread count and of the memory layout
// (bit for bit), hand-made edge cases, errors, and random views against plain long double loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/reduce.hpp"
#include "runtime/parallel.hpp"
#include "test_util.hpp"
#include "xp/dtype.hpp"
#include "xp/error.hpp"

namespace {

using xp::DType;
using xp::detail::ReduceOp;
using xp::detail::View;
using xp::detail::cpu::cumulative_sum;
using xp::detail::cpu::reduce;
using i64 = std::int64_t;

// ---- buffers and views ----

// Zero-initialized bytes, 64-byte aligned.
struct Buffer {
  std::vector<std::uint64_t> words;
  explicit Buffer(std::size_t bytes = 0, unsigned char fill = 0) : words((bytes + 71) / 8) {
    std::memset(data(), fill, bytes);
  }
  std::byte* data() {
    const auto p = reinterpret_cast<std::uintptr_t>(words.data());
    return reinterpret_cast<std::byte*>(words.data()) + ((64 - p % 64) % 64);
  }
};

// A shape with strides (in bytes) that outlives the View made from it.
struct Layout {
  std::vector<i64> shape, strides;
  View view(std::byte* data, DType t) const {
    return View{data, t, static_cast<int>(shape.size()), shape.data(), strides.data()};
  }
  i64 size() const { return std::accumulate(shape.begin(), shape.end(), i64{1}, std::multiplies<>()); }
};

Layout contiguous(std::vector<i64> shape, DType t) {
  Layout l{shape, std::vector<i64>(shape.size())};
  i64 s = static_cast<i64>(xp::itemsize(t));
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    l.strides[static_cast<std::size_t>(d)] = s;
    s *= shape[static_cast<std::size_t>(d)];
  }
  return l;
}

Layout without_axes(const Layout& in, const std::vector<int>& axes, DType out) {
  std::vector<i64> shape;
  for (int d = 0; d < static_cast<int>(in.shape.size()); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) shape.push_back(in.shape[static_cast<std::size_t>(d)]);
  return contiguous(shape, out);
}

DType dtype_of(const std::string& name) {
  const auto t = xp::parse_dtype(name);
  if (!t) throw std::runtime_error("unknown dtype " + name);
  return *t;
}

bool is_float(DType t) {
  return xp::kind(t) == xp::DTypeKind::floating;
}

double to_double(const std::byte* p, DType t) {
  switch (t) {
    case DType::float16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      return xp::half_bits_to_float(h);
    }
    case DType::bfloat16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      return xp::bfloat16_bits_to_float(h);
    }
    case DType::float32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::float64: {
      double f;
      std::memcpy(&f, p, 8);
      return f;
    }
    default:
      return std::nan("");
  }
}

// The spacing of dtype t's numbers at |x|.
double ulp(double x, DType t) {
  int precision = 53, emin = -1022;
  if (t == DType::float16) precision = 11, emin = -14;
  if (t == DType::bfloat16) precision = 8, emin = -126;
  if (t == DType::float32) precision = 24, emin = -126;
  int e = emin;
  if (x != 0 && std::isfinite(x)) {
    std::frexp(x, &e);
    e = std::max(e - 1, emin);
  }
  return std::ldexp(1.0, e - (precision - 1));
}

double round_to(double x, DType t) {
  if (t == DType::float16) return xp::half_bits_to_float(xp::float_to_half_bits(static_cast<float>(x)));
  if (t == DType::bfloat16) return xp::bfloat16_bits_to_float(xp::float_to_bfloat16_bits(static_cast<float>(x)));
  if (t == DType::float32) return static_cast<float>(x);
  return x;
}

ReduceOp op_of(const std::string& s) {
  for (const ReduceOp op : xp::detail::kReduceOps)
    if (s == xp::detail::reduce_op_name(op)) return op;
  throw std::runtime_error("unknown op " + s);
}

// The bound a float result must meet against the exact value `ref`. u is the unit roundoff of the
// accumulation (2^-24 in float32, 2^-53 in float64); d = 150 + log2 N bounds the additions an
// element goes through in xp's tree (at most 128 in a leaf's lane, then the lanes and log2 N
// halvings). Float sums are compensated: what is left of their error is second order, (d u)^2.
//   sum   1 ulp of the output + 2 u |sum| + (d u)^2 sum|x|
//   mean  1 ulp + 2 u |mean| + (d u)^2 mean|x|
//   var   1 ulp + 6 u var + 4 N (u mean|x|)^2         (the last term: the mean's own rounding)
//   std   1 ulp + 3 u std + 2 sqrt(N) u mean|x|
//   prod  1 ulp + (N + 1) u |prod|                    (products are not compensated)
double float_tolerance(const std::string& op, double ref, double scale, i64 n, DType out) {
  const double u = out == DType::float64 ? 0x1p-53 : 0x1p-24;
  const double d = 150 + std::log2(static_cast<double>(std::max<i64>(n, 1)));
  const double nn = static_cast<double>(n), r = std::fabs(ref);
  double t = ulp(ref, out);
  if (op == "sum" || op == "mean") t += 2 * u * r + d * u * d * u * scale;
  if (op == "var") t += 6 * u * r + 4 * nn * (u * scale) * (u * scale);
  if (op == "std") t += 3 * u * r + 2 * std::sqrt(nn) * u * scale;
  if (op == "prod") t += (nn + 1) * u * r;
  return t;
}

// ---- the NumPy cases ----

struct Cases {
  xp_test::TempDir dir;
  xp_test::PythonReference ref;
  nlohmann::json json;
  Buffer data;
};

const Cases& cases() {
  static Cases* c = [] {
    auto* c = new Cases;
    c->ref = xp_test::run_python_reference("reduce_reference.py", {"cases", c->dir.path()});
    if (c->ref.missing || c->ref.error) return c;
    std::ifstream jf(c->dir / "cases.json");
    c->json = nlohmann::json::parse(jf, nullptr, /*allow_exceptions=*/false);
    std::ifstream df(c->dir / "data.bin", std::ios::binary | std::ios::ate);
    const auto bytes = static_cast<std::size_t>(df.tellg());
    c->data = Buffer(bytes);
    df.seekg(0);
    df.read(reinterpret_cast<char*>(c->data.data()), static_cast<std::streamsize>(bytes));
    if (c->json.is_discarded() || !df) c->ref.error = "reduce_reference.py cases wrote unreadable files";
    return c;
  }();
  return *c;
}

std::string describe(const nlohmann::json& c) {
  std::string s = c["op"].get<std::string>() + " " + c["dtype"].get<std::string>() + " " +
                  c["layout"].get<std::string>() + " shape " + c["shape"].dump();
  if (c.contains("axes")) s += " axes " + c["axes"].dump() + " ddof " + c["ddof"].dump();
  if (c.contains("axis")) s += " axis " + c["axis"].dump() + " include_initial " + c["include_initial"].dump();
  return s;
}

// Runs one case; returns what went wrong, if anything.
std::optional<std::string> run_case(const nlohmann::json& c) {
  const Cases& all = cases();
  std::byte* data = const_cast<Buffer&>(all.data).data();
  const DType t = dtype_of(c["dtype"]);
  const i64 item = static_cast<i64>(xp::itemsize(t));
  const auto& input = all.json["inputs"][c["input"].get<std::size_t>()];
  Layout in{c["shape"].get<std::vector<i64>>(), c["strides"].get<std::vector<i64>>()};
  for (auto& s : in.strides) s *= item;
  std::byte* first = data + input["offset"].get<i64>() + c["start"].get<i64>() * item;
  const View iv = in.view(first, t);
  const std::string op = c["op"];
  const DType ot = dtype_of(c["out_dtype"]);

  if (c["check"] == "error") {
    Layout ol = without_axes(in, c["axes"].get<std::vector<int>>(), ot);
    Buffer ob(static_cast<std::size_t>(std::max<i64>(ol.size(), 1)) * xp::itemsize(ot));
    const std::vector<int> axes = c["axes"];
    try {
      reduce(op_of(op), iv, axes, ol.view(ob.data(), ot), c["ddof"].get<int>());
    } catch (const xp::ValueError& e) {
      if (e.what() != c["error"].get<std::string>()) return std::string("message: ") + e.what();
      return std::nullopt;
    }
    return "no ValueError (NumPy: " + c["error"].get<std::string>() + ")";
  }

  const Layout ol = contiguous(c["out_shape"].get<std::vector<i64>>(), ot);
  const i64 osize = static_cast<i64>(xp::itemsize(ot));
  Buffer ob(static_cast<std::size_t>(ol.size() * osize), 0xCD);
  i64 n = 1;
  if (op == "cumulative_sum") {
    cumulative_sum(iv, c["axis"].get<int>(), ol.view(ob.data(), ot), c["include_initial"].get<bool>());
  } else {
    const std::vector<int> axes = c["axes"];
    for (const int a : axes) n *= in.shape[static_cast<std::size_t>(a)];
    reduce(op_of(op), iv, axes, ol.view(ob.data(), ot), c["ddof"].get<int>());
  }
  const std::byte* expect = data + c["expect"].get<i64>();
  for (i64 k = 0; k < ol.size(); ++k) {
    const std::byte* got = ob.data() + k * osize;
    const std::string where = "element " + std::to_string(k) + ": ";
    if (c["check"] == "float") {
      double ref, scale;
      std::memcpy(&ref, expect + k * 8, 8);
      std::memcpy(&scale, data + c["scale"].get<i64>() + k * 8, 8);
      const double g = to_double(got, ot), r = round_to(ref, ot);
      if (std::isnan(ref) || std::isnan(g) || std::isinf(r) || std::isinf(g)) {
        if (!(std::isnan(r) && std::isnan(g)) && g != r)
          return where + "got " + std::to_string(g) + ", expected " + std::to_string(r);
        continue;
      }
      const double tol = float_tolerance(op, ref, scale, n, ot);
      if (!(std::fabs(g - ref) <= tol))
        return where + "got " + std::to_string(g) + ", expected " + std::to_string(ref) + " within " +
               std::to_string(tol);
    } else if (is_float(ot)) {
      const double g = to_double(got, ot), r = to_double(expect + k * osize, ot);
      if (!(g == r || (std::isnan(g) && std::isnan(r))))
        return where + "got " + std::to_string(g) + ", expected " + std::to_string(r);
    } else if (std::memcmp(got, expect + k * osize, static_cast<std::size_t>(osize)) != 0) {
      i64 gv = 0, rv = 0;
      std::memcpy(&gv, got, static_cast<std::size_t>(osize));
      std::memcpy(&rv, expect + k * osize, static_cast<std::size_t>(osize));
      return where + "got " + std::to_string(gv) + ", expected " + std::to_string(rv);
    }
  }
  return std::nullopt;
}

void check_op(const std::string& op) {
  const Cases& all = cases();
  XP_REQUIRE_REFERENCE(all.ref);
  int checked = 0, failed = 0;
  for (const auto& c : all.json["cases"]) {
    if (c["op"] != op) continue;
    ++checked;
    std::optional<std::string> err;
    try {
      err = run_case(c);
    } catch (const std::exception& e) {
      err = std::string("threw ") + e.what();
    }
    if (err && ++failed <= 20) ADD_FAILURE() << describe(c) << ": " << *err;
  }
  EXPECT_GT(checked, 100);
  EXPECT_EQ(failed, 0) << "of " << checked << " cases";
}

TEST(ReduceNumPy, Sum) {
  check_op("sum");
}
TEST(ReduceNumPy, Prod) {
  check_op("prod");
}
TEST(ReduceNumPy, Mean) {
  check_op("mean");
}
TEST(ReduceNumPy, Var) {
  check_op("var");
}
TEST(ReduceNumPy, Std) {
  check_op("std");
}
TEST(ReduceNumPy, Min) {
  check_op("min");
}
TEST(ReduceNumPy, Max) {
  check_op("max");
}
TEST(ReduceNumPy, ArgMin) {
  check_op("argmin");
}
TEST(ReduceNumPy, ArgMax) {
  check_op("argmax");
}
TEST(ReduceNumPy, Any) {
  check_op("any");
}
TEST(ReduceNumPy, All) {
  check_op("all");
}
TEST(ReduceNumPy, CumulativeSum) {
  check_op("cumulative_sum");
}

// Ill-conditioned sums (12 decades of magnitudes, heavy cancellation): the error against the exact
// sum is within the pairwise bound and no larger than np.sum's on the same input, both for full
// reductions and along axis 0 of (n, 4) arrays (where NumPy adds row by row).
TEST(ReduceNumPy, AccuracyNoWorseThanNumPy) {
  xp_test::TempDir dir;
  const auto ref = xp_test::run_python_reference("reduce_reference.py", {"accuracy", dir.path()});
  XP_REQUIRE_REFERENCE(ref);
  const auto json = nlohmann::json::parse(ref.out);
  for (const auto& e : json["entries"]) {
    const DType t = dtype_of(e["dtype"]);
    const Layout in = contiguous(e["shape"].get<std::vector<i64>>(), t);
    Buffer buf(static_cast<std::size_t>(in.size()) * xp::itemsize(t));
    std::ifstream f(dir / e["file"].get<std::string>(), std::ios::binary);
    f.read(reinterpret_cast<char*>(buf.data()),
           static_cast<std::streamsize>(in.size()) * static_cast<std::streamsize>(xp::itemsize(t)));
    ASSERT_TRUE(f) << e["file"];
    std::vector<int> axes;
    if (e["axis"].is_null()) {
      axes.resize(in.shape.size());
      std::iota(axes.begin(), axes.end(), 0);
    } else {
      axes = {e["axis"].get<int>()};
    }
    const Layout ol = without_axes(in, axes, t);
    Buffer ob(static_cast<std::size_t>(ol.size()) * xp::itemsize(t));
    reduce(ReduceOp::sum, in.view(buf.data(), t), axes, ol.view(ob.data(), t));
    const i64 n = in.size() / ol.size();
    for (i64 k = 0; k < ol.size(); ++k) {
      const double exact = e["exact"][k], numpy = e["numpy"][k], abs_sum = e["abs_sum"][k];
      const double ours = to_double(ob.data() + k * static_cast<i64>(xp::itemsize(t)), t);
      const double err = std::fabs(ours - exact), np_err = std::fabs(numpy - exact);
      std::printf("  %-7s n=%-8lld %s: |sum - exact| / sum|x|: xp %.3g, numpy %.3g\n",
                  e["dtype"].get<std::string>().c_str(), static_cast<long long>(n),
                  e["axis"].is_null() ? "all   " : "axis 0", err / abs_sum, np_err / abs_sum);
      EXPECT_LE(err, np_err) << e["file"] << " output " << k;
      EXPECT_LE(err, float_tolerance("sum", exact, abs_sum, n, t)) << e["file"] << " output " << k;
    }
  }
}

// ---- without NumPy ----

template <class T>
View view_of(std::vector<T>& v, const Layout& l, DType t, i64 start = 0) {
  return l.view(reinterpret_cast<std::byte*>(v.data() + start), t);
}

// The same reductions, bit for bit, with 1, 2, 3 and 8 threads, over layouts that take each of the
// kernels (direct runs, gathered runs, columns), with one and several blocks per output.
TEST(Reduce, DeterministicAcrossThreadCounts) {
  const int saved = xp::detail::num_threads();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> mag(-6, 6);
  std::normal_distribution<double> nd;
  const i64 n = (i64{1} << 19) + 777;
  std::vector<float> f(static_cast<std::size_t>(n));
  std::vector<double> d(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) {
    d[static_cast<std::size_t>(i)] = nd(rng) * std::pow(10.0, mag(rng));
    f[static_cast<std::size_t>(i)] = static_cast<float>(d[static_cast<std::size_t>(i)]);
  }
  struct Case {
    Layout l;
    std::vector<int> axes;
    i64 start;
  };
  const i64 rows = 5000, cols = 104;  // rows * cols <= n
  std::vector<Case> layouts = {
      {contiguous({n}, DType::float32), {0}, 0},
      {{{n / 2}, {-8}}, {0}, n - 1},                       // negative stride: gathered
      {contiguous({rows, cols}, DType::float32), {0}, 0},  // columns, two blocks
      {contiguous({rows, cols}, DType::float32), {1}, 0},
      {contiguous({cols, rows}, DType::float32), {0, 1}, 0},
      {{{cols, rows}, {4, cols * 4}}, {0, 1}, 0},  // transposed, everything: gathered
      {{{cols, rows}, {4, cols * 4}}, {1}, 0},     // transposed rows: columns
  };
  const ReduceOp ops[] = {ReduceOp::sum,    ReduceOp::mean, ReduceOp::var, ReduceOp::std,
                          ReduceOp::argmin, ReduceOp::max,  ReduceOp::prod};
  for (const DType t : {DType::float32, DType::float64}) {
    for (auto& c : layouts) {
      Layout l = c.l;
      if (t == DType::float64)
        for (auto& s : l.strides) s *= 2;
      for (const ReduceOp op : ops) {
        const DType ot = op == ReduceOp::argmin ? DType::int64 : t;
        const Layout ol = without_axes(l, c.axes, ot);
        const std::size_t bytes = static_cast<std::size_t>(ol.size()) * xp::itemsize(ot);
        std::vector<unsigned char> first;
        for (const int threads : {1, 2, 3, 8}) {
          xp::detail::set_num_threads(threads);
          Buffer ob(bytes);
          const View iv = t == DType::float32 ? view_of(f, l, t, c.start) : view_of(d, l, t, c.start);
          reduce(op, iv, c.axes, ol.view(ob.data(), ot), 1);
          std::vector<unsigned char> got(reinterpret_cast<unsigned char*>(ob.data()),
                                         reinterpret_cast<unsigned char*>(ob.data()) + bytes);
          if (threads == 1) {
            first = got;
          } else {
            EXPECT_EQ(got, first) << xp::name(t) << " op " << static_cast<int>(op) << " threads " << threads
                                  << " shape " << l.shape[0];
          }
        }
      }
    }
  }
  xp::detail::set_num_threads(saved);
}

// Sums see the logical order of the elements only: the same values summed in place, gathered from
// negative or transposed strides, misaligned, or as the columns of a transposed copy give one bit
// pattern.
TEST(Reduce, SameBitsWhateverTheLayout) {
  std::mt19937_64 rng(5);
  std::normal_distribution<float> nd;
  const i64 R = 9000, C = 70;  // 9000: three blocks per output
  std::vector<float> rc(static_cast<std::size_t>(R * C)), cr(rc.size()), cr_rev(rc.size());
  for (auto& v : rc) v = nd(rng) * std::exp2(static_cast<float>(static_cast<int>(rng() % 40)) - 20);
  for (i64 r = 0; r < R; ++r)
    for (i64 c = 0; c < C; ++c) {
      cr[static_cast<std::size_t>(c * R + r)] = rc[static_cast<std::size_t>(r * C + c)];
      cr_rev[static_cast<std::size_t>(c * R + (R - 1 - r))] = rc[static_cast<std::size_t>(r * C + c)];
    }
  std::vector<unsigned char> bytes(rc.size() * 4 + 1);
  std::memcpy(bytes.data() + 1, rc.data(), rc.size() * 4);  // misaligned copy of rc
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::var, ReduceOp::prod, ReduceOp::argmax}) {
    const DType ot = op == ReduceOp::argmax ? DType::int64 : DType::float32;
    const Layout ol = contiguous({C}, ot);
    auto run = [&](const View& v, int axis) {
      Buffer ob(static_cast<std::size_t>(C) * 8);
      const std::vector<int> axes = {axis};
      reduce(op, v, axes, ol.view(ob.data(), ot));
      return std::vector<unsigned char>(reinterpret_cast<unsigned char*>(ob.data()),
                                        reinterpret_cast<unsigned char*>(ob.data()) + C * 8);
    };
    const Layout l_rc = contiguous({R, C}, DType::float32), l_cr = contiguous({C, R}, DType::float32);
    const auto columns = run(view_of(rc, l_rc, DType::float32), 0);
    EXPECT_EQ(run(view_of(cr, l_cr, DType::float32), 1), columns) << "direct";
    const Layout reversed{{C, R}, {R * 4, -4}};
    EXPECT_EQ(run(view_of(cr_rev, reversed, DType::float32, R - 1), 1), columns) << "gathered";
    const Layout transposed{{C, R}, {4, C * 4}};
    EXPECT_EQ(run(view_of(rc, transposed, DType::float32), 1), columns) << "transposed";
    EXPECT_EQ(run(l_rc.view(reinterpret_cast<std::byte*>(bytes.data() + 1), DType::float32), 0), columns)
        << "misaligned";
  }
}

// Random views (up to 6 axes, negative, zero and sliced strides, random axis sets) against plain
// loops in long double (float64 sums, means, variances: within the bound) and exact loops (int32
// sums wrapping in 64 bits, min, argmax).
TEST(Reduce, RandomViewsAgainstPlainLoops) {
  std::mt19937_64 rng(99);
  auto pick = [&](i64 lo, i64 hi) { return std::uniform_int_distribution<i64>(lo, hi)(rng); };
  for (int iter = 0; iter < 300; ++iter) {
    const int nd = static_cast<int>(pick(0, 6));
    Layout l;
    i64 span = 1;
    for (int d = 0; d < nd; ++d) l.shape.push_back(pick(1, nd > 3 ? 5 : 12));
    // Strides: a permutation of a contiguous layout with random steps and signs, or zero.
    std::vector<int> perm(static_cast<std::size_t>(nd));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    l.strides.assign(static_cast<std::size_t>(nd), 0);
    i64 start = 0;
    for (const int d : perm) {
      const i64 step = pick(1, 2), sign = pick(0, 3) == 0 ? -1 : 1;
      const bool zero = pick(0, 7) == 0;
      l.strides[static_cast<std::size_t>(d)] = zero ? 0 : sign * step * span;
      if (sign < 0 && !zero) start += (l.shape[static_cast<std::size_t>(d)] - 1) * step * span;
      span *= zero ? 1 : l.shape[static_cast<std::size_t>(d)] * step;
    }
    std::vector<double> d(static_cast<std::size_t>(span));
    std::vector<std::int32_t> v(static_cast<std::size_t>(span));
    for (i64 i = 0; i < span; ++i) {
      d[static_cast<std::size_t>(i)] =
          std::ldexp(static_cast<double>(pick(-1000000, 1000000)), static_cast<int>(pick(-30, 10)));
      v[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(pick(INT32_MIN, INT32_MAX));
    }
    std::vector<int> axes;
    for (int a = 0; a < nd; ++a)
      if (pick(0, 1)) axes.push_back(a);
    // Element strides (in elements) for the loops; the View's are in bytes.
    const std::vector<i64> es = l.strides;
    Layout ld = l, lv = l;
    for (auto& s : ld.strides) s *= 8;
    for (auto& s : lv.strides) s *= 4;
    const Layout o8 = without_axes(l, axes, DType::float64);
    const i64 M = o8.size(), N = l.size() / std::max<i64>(M, 1);
    // Plain loops: walk every element, find its output and its position among the output's.
    std::vector<long double> sum(static_cast<std::size_t>(M)), abs_sum(sum.size()), sq(sum.size());
    std::vector<i64> isum(sum.size());
    std::vector<std::int32_t> imin(sum.size(), INT32_MAX);
    std::vector<i64> imax_at(sum.size(), -1);
    std::vector<std::int32_t> imax(sum.size(), INT32_MIN);
    auto walk = [&](auto&& fn) {
      std::vector<i64> idx(static_cast<std::size_t>(nd));
      for (i64 lin = 0; lin < l.size(); ++lin) {
        i64 rem = lin, off = start, m = 0, r = 0;
        for (int a = nd - 1; a >= 0; --a) {
          idx[static_cast<std::size_t>(a)] = rem % l.shape[static_cast<std::size_t>(a)];
          rem /= l.shape[static_cast<std::size_t>(a)];
        }
        i64 mstride = 1, rstride = 1;
        for (int a = nd - 1; a >= 0; --a) {
          const std::size_t ua = static_cast<std::size_t>(a);
          off += idx[ua] * es[ua];
          if (std::find(axes.begin(), axes.end(), a) != axes.end()) {
            r += idx[ua] * rstride;
            rstride *= l.shape[ua];
          } else {
            m += idx[ua] * mstride;
            mstride *= l.shape[ua];
          }
        }
        fn(static_cast<std::size_t>(off), static_cast<std::size_t>(m), r);
      }
    };
    walk([&](std::size_t off, std::size_t m, i64) {
      sum[m] += d[off];
      abs_sum[m] += std::fabs(d[off]);
      isum[m] = static_cast<i64>(static_cast<std::uint64_t>(isum[m]) + static_cast<std::uint64_t>(v[off]));
      imin[m] = std::min(imin[m], v[off]);
    });
    walk([&](std::size_t off, std::size_t m, i64 r) {
      const long double dev = d[off] - sum[m] / static_cast<long double>(N);
      sq[m] += dev * dev;
      if (v[off] > imax[m] || imax_at[m] < 0) imax[m] = v[off], imax_at[m] = r;
    });
    Buffer b_sum(static_cast<std::size_t>(M) * 8), b_var(b_sum.words.size() * 8), b_isum(b_sum.words.size() * 8),
        b_imin(b_sum.words.size() * 8), b_arg(b_sum.words.size() * 8);
    const View dv = ld.view(reinterpret_cast<std::byte*>(d.data() + start), DType::float64);
    const View vv = lv.view(reinterpret_cast<std::byte*>(v.data() + start), DType::int32);
    reduce(ReduceOp::sum, dv, axes, o8.view(b_sum.data(), DType::float64));
    reduce(ReduceOp::var, dv, axes, o8.view(b_var.data(), DType::float64));
    reduce(ReduceOp::sum, vv, axes, o8.view(b_isum.data(), DType::int64));
    reduce(ReduceOp::min, vv, axes, without_axes(l, axes, DType::int32).view(b_imin.data(), DType::int32));
    const bool arg_ok = axes.size() == 1 || static_cast<int>(axes.size()) == nd;
    if (arg_ok) reduce(ReduceOp::argmax, vv, axes, o8.view(b_arg.data(), DType::int64));
    const std::string what = "iteration " + std::to_string(iter);
    for (i64 m = 0; m < M; ++m) {
      const std::size_t um = static_cast<std::size_t>(m);
      double got_sum, got_var;
      i64 got_isum, got_arg;
      std::int32_t got_min;
      std::memcpy(&got_sum, b_sum.data() + m * 8, 8);
      std::memcpy(&got_var, b_var.data() + m * 8, 8);
      std::memcpy(&got_isum, b_isum.data() + m * 8, 8);
      std::memcpy(&got_min, b_imin.data() + m * 4, 4);
      std::memcpy(&got_arg, b_arg.data() + m * 8, 8);
      const double ref_var = static_cast<double>(sq[um] / static_cast<long double>(N));
      const double mean_abs = static_cast<double>(abs_sum[um]) / static_cast<double>(N);
      EXPECT_NEAR(
          got_sum, static_cast<double>(sum[um]),
          float_tolerance("sum", static_cast<double>(sum[um]), static_cast<double>(abs_sum[um]), N, DType::float64))
          << what;
      EXPECT_NEAR(got_var, ref_var, float_tolerance("var", ref_var, mean_abs, N, DType::float64)) << what;
      EXPECT_EQ(got_isum, isum[um]) << what;
      EXPECT_EQ(got_min, imin[um]) << what;
      if (arg_ok) {
        EXPECT_EQ(got_arg, imax_at[um]) << what;
      }
    }
  }
}

// Reduces a 1-d vector of T over its only axis into one value of type R.
template <class R, class T>
R reduce1(ReduceOp op, std::vector<T> v, DType t, DType out, int correction = 0) {
  const Layout l = contiguous({static_cast<i64>(v.size())}, t);
  R r{};
  const int axes[] = {0};
  reduce(op, view_of(v, l, t), axes, View{reinterpret_cast<std::byte*>(&r), out, 0, nullptr, nullptr}, correction);
  return r;
}

TEST(Reduce, HandMadeEdges) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // Integers wrap; bool sums count.
  EXPECT_EQ((reduce1<i64>(ReduceOp::sum, std::vector<i64>{INT64_MAX, 1}, DType::int64, DType::int64)), INT64_MIN);
  EXPECT_EQ(
      (reduce1<std::uint64_t>(ReduceOp::sum, std::vector<std::uint64_t>{UINT64_MAX, 2}, DType::uint64, DType::uint64)),
      1u);
  EXPECT_EQ((reduce1<i64>(ReduceOp::sum, std::vector<std::int8_t>{-128, -128, 127}, DType::int8, DType::int64)), -129);
  EXPECT_EQ((reduce1<i64>(ReduceOp::prod, std::vector<i64>{i64{1} << 62, 4}, DType::int64, DType::int64)), 0);
  EXPECT_EQ((reduce1<i64>(ReduceOp::sum, std::vector<std::uint8_t>{1, 0, 7, 1}, DType::bool_, DType::int64)), 3);
  // NaN: propagates through min and max, is the first extreme for argmin and argmax, is true.
  EXPECT_TRUE(
      std::isnan(reduce1<double>(ReduceOp::min, std::vector<double>{1, nan, -inf}, DType::float64, DType::float64)));
  EXPECT_TRUE(
      std::isnan(reduce1<double>(ReduceOp::max, std::vector<double>{inf, 2, nan}, DType::float64, DType::float64)));
  EXPECT_EQ((reduce1<i64>(ReduceOp::argmin, std::vector<double>{3, -1, nan, -5, nan}, DType::float64, DType::int64)),
            2);
  EXPECT_EQ((reduce1<i64>(ReduceOp::argmax, std::vector<float>{1, 7, 7, 2}, DType::float32, DType::int64)), 1);
  EXPECT_EQ((reduce1<i64>(ReduceOp::argmin, std::vector<std::int8_t>{4, -2, 9, -2}, DType::int8, DType::int64)), 1);
  EXPECT_EQ((reduce1<std::uint8_t>(ReduceOp::any, std::vector<double>{0.0, -0.0, nan}, DType::float64, DType::bool_)),
            1);
  EXPECT_EQ((reduce1<std::uint8_t>(ReduceOp::any, std::vector<double>{0.0, -0.0}, DType::float64, DType::bool_)), 0);
  EXPECT_EQ(
      (reduce1<std::uint8_t>(ReduceOp::all, std::vector<std::uint16_t>{0x3C00, 0x8000}, DType::float16, DType::bool_)),
      0);
  // Empty: sum 0, prod 1, mean NaN, any false, all true.
  EXPECT_EQ((reduce1<double>(ReduceOp::sum, std::vector<double>{}, DType::float64, DType::float64)), 0.0);
  EXPECT_EQ((reduce1<i64>(ReduceOp::prod, std::vector<std::int32_t>{}, DType::int32, DType::int64)), 1);
  EXPECT_TRUE(std::isnan(reduce1<double>(ReduceOp::mean, std::vector<std::int32_t>{}, DType::int32, DType::float64)));
  EXPECT_EQ((reduce1<std::uint8_t>(ReduceOp::all, std::vector<float>{}, DType::float32, DType::bool_)), 1);
  // var and std divide by N - correction; N - correction <= 0 is NaN.
  EXPECT_EQ((reduce1<double>(ReduceOp::var, std::vector<double>{1, 2, 3, 4}, DType::float64, DType::float64)), 1.25);
  EXPECT_DOUBLE_EQ(
      (reduce1<double>(ReduceOp::std, std::vector<std::int16_t>{1, 2, 3, 4}, DType::int16, DType::float64, 1)),
      std::sqrt(5.0 / 3.0));
  EXPECT_TRUE(std::isnan(reduce1<double>(ReduceOp::var, std::vector<double>{1, 2}, DType::float64, DType::float64, 2)));
  // 16-bit floats: computed in float32, rounded once at the end (2048 + 1 + 1 is 2050 in float32).
  EXPECT_EQ((reduce1<std::uint16_t>(ReduceOp::sum, std::vector<std::uint16_t>{0x6800, 0x3C00, 0x3C00}, DType::float16,
                                    DType::float16)),
            0x6801);
  // Cumulative sums: a leading 0 on request; sequential along the axis.
  std::vector<std::int8_t> c8 = {100, 100, -56};
  std::vector<i64> cs(4);
  const Layout lin = contiguous({3}, DType::int8), lout = contiguous({4}, DType::int64);
  cumulative_sum(view_of(c8, lin, DType::int8), 0, view_of(cs, lout, DType::int64), true);
  EXPECT_EQ(cs, (std::vector<i64>{0, 100, 200, 144}));
  // Into the input's own integer dtype: the running sum wraps there (100 + 100 is -56 in int8).
  std::vector<std::int8_t> w8(4, 7);
  cumulative_sum(view_of(c8, lin, DType::int8), 0, view_of(w8, contiguous({4}, DType::int8), DType::int8), true);
  EXPECT_EQ(w8, (std::vector<std::int8_t>{0, 100, -56, -112}));
}

// A running sum written in the input's own integer dtype holds the low bits of the 64-bit one, on
// each of the scan's paths (one line at a time, and neighbouring lines at once along a strided axis).
TEST(Reduce, CumulativeSumIntoTheInputsOwnIntegerDtypeWraps) {
  std::vector<std::uint16_t> x(64 * 9);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint16_t>(60000 - 977 * i);
  const Layout in = contiguous({64, 9}, DType::uint16);
  for (int axis : {0, 1}) {
    for (bool initial : {false, true}) {
      const Layout wide_l = contiguous({64 + (axis == 0 && initial), 9 + (axis == 1 && initial)}, DType::uint64);
      const Layout own_l = contiguous({64 + (axis == 0 && initial), 9 + (axis == 1 && initial)}, DType::uint16);
      std::vector<std::uint64_t> wide(static_cast<std::size_t>(wide_l.size()));
      std::vector<std::uint16_t> own(wide.size(), 1);
      cumulative_sum(view_of(x, in, DType::uint16), axis, view_of(wide, wide_l, DType::uint64), initial);
      cumulative_sum(view_of(x, in, DType::uint16), axis, view_of(own, own_l, DType::uint16), initial);
      bool wrapped = false;
      for (std::size_t i = 0; i < wide.size(); ++i) {
        EXPECT_EQ(own[i], static_cast<std::uint16_t>(wide[i])) << "axis " << axis << " element " << i;
        wrapped = wrapped || wide[i] > 0xFFFF;
      }
      EXPECT_TRUE(wrapped) << "the sums pass 2^16";
    }
  }
  // Signed: the conversion of the low bits (two's complement).
  std::vector<std::int32_t> big = {2147483647, 1, 2147483647, 2};
  std::vector<std::int32_t> own32(4);
  const Layout l4 = contiguous({4}, DType::int32);
  cumulative_sum(view_of(big, l4, DType::int32), 0, view_of(own32, l4, DType::int32), false);
  EXPECT_EQ(own32, (std::vector<std::int32_t>{2147483647, -2147483647 - 1, -1, 1}));
}

// The output's own strides are honoured (here reversed), and a misaligned input gives the aligned
// answer.
TEST(Reduce, StridedOutputAndMisalignedInput) {
  std::vector<double> x(6 * 5);
  std::iota(x.begin(), x.end(), 1.0);
  const Layout in = contiguous({6, 5}, DType::float64);
  std::vector<double> out(5, -1);
  const Layout reversed{{5}, {-8}};
  const int axes[] = {0};
  reduce(ReduceOp::sum, view_of(x, in, DType::float64), axes, view_of(out, reversed, DType::float64, 4));
  EXPECT_EQ(out, (std::vector<double>{105, 99, 93, 87, 81}));  // column sums, last first
  std::vector<unsigned char> bytes(x.size() * 8 + 3);
  std::memcpy(bytes.data() + 3, x.data(), x.size() * 8);
  const int axes1[] = {1};
  std::vector<double> row(6), row_aligned(6);
  const Layout o6 = contiguous({6}, DType::float64);
  reduce(ReduceOp::max, in.view(reinterpret_cast<std::byte*>(bytes.data() + 3), DType::float64), axes1,
         view_of(row, o6, DType::float64));
  reduce(ReduceOp::max, view_of(x, in, DType::float64), axes1, view_of(row_aligned, o6, DType::float64));
  EXPECT_EQ(row, row_aligned);
  EXPECT_EQ(row[5], 30.0);
  // Cumulative sum along axis 0 into a transposed output.
  std::vector<double> cs(30);
  const Layout out_t{{6, 5}, {8, 48}};
  cumulative_sum(view_of(x, in, DType::float64), 0, view_of(cs, out_t, DType::float64), false);
  EXPECT_EQ(cs[4 * 6 + 5], 5.0 + 10 + 15 + 20 + 25 + 30);  // element (5, 4)
}

template <class F>
std::string value_error(F&& f) {
  try {
    f();
  } catch (const xp::ValueError& e) {
    return e.what();
  }
  return "no ValueError";
}

TEST(Reduce, Errors) {
  std::vector<float> x(6, 1.0f);
  const Layout l = contiguous({2, 0, 3}, DType::float32), l23 = contiguous({2, 3}, DType::float32);
  const Layout o23 = contiguous({2, 3}, DType::float32), o2 = contiguous({2}, DType::float32);
  std::vector<float> out(6);
  std::vector<i64> iout(6);
  const View v = view_of(x, l, DType::float32);
  const int ax1[] = {1};
  EXPECT_EQ(value_error([&] { reduce(ReduceOp::min, v, ax1, view_of(out, o23, DType::float32)); }),
            "zero-size array to reduction operation minimum which has no identity");
  EXPECT_EQ(value_error([&] { reduce(ReduceOp::max, v, ax1, view_of(out, o23, DType::float32)); }),
            "zero-size array to reduction operation maximum which has no identity");
  EXPECT_EQ(value_error([&] { reduce(ReduceOp::argmin, v, ax1, view_of(iout, o23, DType::int64)); }),
            "attempt to get argmin of an empty sequence");
  EXPECT_EQ(value_error([&] { reduce(ReduceOp::argmax, v, ax1, view_of(iout, o23, DType::int64)); }),
            "attempt to get argmax of an empty sequence");
  const View v23 = view_of(x, l23, DType::float32);
  const int ax2[] = {2}, dup[] = {1, 1}, unsorted[] = {1, 0}, neg[] = {-1};
  EXPECT_EQ(value_error([&] { reduce(ReduceOp::sum, v23, ax2, view_of(out, o2, DType::float32)); }),
            "axis 2 is out of bounds for array of dimension 2");
  EXPECT_EQ(value_error([&] { reduce(ReduceOp::sum, v23, neg, view_of(out, o2, DType::float32)); }),
            "axis -1 is out of bounds for array of dimension 2");
  EXPECT_EQ(value_error([&] { reduce(ReduceOp::sum, v23, dup, view_of(out, o2, DType::float32)); }),
            "duplicate value in 'axis'");
  EXPECT_NE(value_error([&] { reduce(ReduceOp::sum, v23, unsorted, {}); }), "no ValueError");
  EXPECT_NE(value_error([&] { reduce(ReduceOp::sum, v23, ax1, view_of(iout, o2, DType::int64)); }), "no ValueError");
  EXPECT_NE(value_error([&] { reduce(ReduceOp::sum, v23, ax1, view_of(out, o23, DType::float32)); }), "no ValueError");
  EXPECT_EQ(value_error([&] { cumulative_sum(v23, 2, view_of(out, o23, DType::float32), false); }),
            "axis 2 is out of bounds for array of dimension 2");
  EXPECT_NE(value_error([&] { cumulative_sum(v23, 1, view_of(out, o23, DType::float32), true); }), "no ValueError");
  // The output dtype: the sum's, or an integer input's own; nothing else.
  std::vector<std::int32_t> x32(6, 1);
  std::vector<std::int16_t> out16(6);
  const Layout i23 = contiguous({2, 3}, DType::int32);
  EXPECT_EQ(value_error([&] {
              cumulative_sum(view_of(x32, i23, DType::int32), 1,
                             view_of(out16, contiguous({2, 3}, DType::int16), DType::int16), false);
            }),
            "cumulative_sum: the output dtype is int16, expected int64 or int32");
  EXPECT_EQ(value_error([&] {
              cumulative_sum(v23, 1, view_of(iout, contiguous({2, 3}, DType::int64), DType::int64), false);
            }),
            "cumulative_sum: the output dtype is int64, expected float32");
  std::vector<std::uint8_t> flags(6, 1), flags_out(6);
  const Layout b23 = contiguous({2, 3}, DType::bool_);
  EXPECT_EQ(value_error([&] {
              cumulative_sum(view_of(flags, b23, DType::bool_), 1, view_of(flags_out, b23, DType::bool_), false);
            }),
            "cumulative_sum: the output dtype is bool, expected int64");
}

}  // namespace
