// The array layer against NumPy 2, function by function, through the public API only.
//
// Every case is described once, as JSON (dtypes, shapes, the bytes of every element, view steps,
// scalars), and interpreted twice: here with xp, and by tests/ref/array_reference.py with NumPy 2
// and ml_dtypes. All cases go to the script in one run; each test below checks its own group.
// Exact operations are compared bit for bit (NaN as a class); transcendental functions within an
// ulp bound of the correctly rounded result; float reductions and matmul within an error bound the
// script derives from the data. Where NumPy raises, xp must throw (a TypeError where NumPy's is a
// TypeError), and where NumPy answers, xp must not throw.
//
// Without the repository's Python (or without NumPy 2 / ml_dtypes in it) the tests are skipped with
// the reason, a failure under XP_TEST_REQUIRE_NUMPY=1.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <xp/xp.hpp>

#include "test_util.hpp"

namespace {

using json = nlohmann::json;
using xp::Array;
using xp::DType;
using xp::Operand;
using xp::Shape;

const std::vector<DType> kAll = {DType::bool_,    DType::int8,    DType::int16,  DType::int32,  DType::int64,
                                 DType::uint8,    DType::uint16,  DType::uint32, DType::uint64, DType::float16,
                                 DType::bfloat16, DType::float32, DType::float64};

bool is_float(DType d) {
  return xp::kind(d) == xp::DTypeKind::floating;
}
bool is_int(DType d) {
  return xp::kind(d) == xp::DTypeKind::signed_integer || xp::kind(d) == xp::DTypeKind::unsigned_integer;
}
std::string dname(DType d) {
  return std::string(xp::name(d));
}
DType dtype_named(const std::string& s) {
  const auto d = xp::parse_dtype(s);
  if (!d) throw std::runtime_error("NumPy named a dtype xp does not have: " + s);
  return *d;
}
std::int64_t count(const Shape& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}
Shape shape_of(const Array& a) {
  return Shape(a.shape().begin(), a.shape().end());
}

// ---- a seeded generator (splitmix64) ----

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::int64_t range(std::int64_t lo, std::int64_t hi) {  // [lo, hi]
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }
  bool chance(double p) { return unit() < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(range(0, static_cast<std::int64_t>(v.size()) - 1))];
  }
};

// ---- element bits ----

std::string to_hex(const std::vector<std::uint8_t>& b) {
  static const char* k = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (std::uint8_t c : b) {
    s.push_back(k[c >> 4]);
    s.push_back(k[c & 15]);
  }
  return s;
}
std::vector<std::uint8_t> from_hex(const std::string& s) {
  std::vector<std::uint8_t> b(s.size() / 2);
  auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(v(s[2 * i]) * 16 + v(s[2 * i + 1]));
  return b;
}

std::uint64_t get_bits(const std::vector<std::uint8_t>& b, std::size_t item, std::size_t i) {
  std::uint64_t v = 0;
  std::memcpy(&v, b.data() + i * item, item);
  return v;
}

std::uint64_t bits_of_double(DType d, double x) {
  switch (d) {
    case DType::bool_:
      return x != 0;
    case DType::float16:
      return xp::float_to_half_bits(static_cast<float>(x));
    case DType::bfloat16:
      return xp::float_to_bfloat16_bits(static_cast<float>(x));
    case DType::float32: {
      const float f = static_cast<float>(x);
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      return u;
    }
    case DType::float64: {
      std::uint64_t u;
      std::memcpy(&u, &x, 8);
      return u;
    }
    default:
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
  }
}

double double_of_bits(DType d, std::uint64_t b) {
  switch (d) {
    case DType::bool_:
      return b != 0;
    case DType::float16:
      return xp::half_bits_to_float(static_cast<std::uint16_t>(b));
    case DType::bfloat16:
      return xp::bfloat16_bits_to_float(static_cast<std::uint16_t>(b));
    case DType::float32: {
      float f;
      const auto u = static_cast<std::uint32_t>(b);
      std::memcpy(&f, &u, 4);
      return f;
    }
    case DType::float64: {
      double f;
      std::memcpy(&f, &b, 8);
      return f;
    }
    case DType::int8:
      return static_cast<std::int8_t>(b);
    case DType::int16:
      return static_cast<std::int16_t>(b);
    case DType::int32:
      return static_cast<std::int32_t>(b);
    case DType::int64:
      return static_cast<double>(static_cast<std::int64_t>(b));
    default:
      return static_cast<double>(b);
  }
}

bool nan_bits(DType d, std::uint64_t b) {
  return is_float(d) && std::isnan(double_of_bits(d, b));
}

// A float's place in the ordered list of its dtype's values (+0 and -0 both 0).
std::int64_t ordered(DType d, std::uint64_t b) {
  const int bits = static_cast<int>(xp::itemsize(d)) * 8;
  const std::uint64_t sign = std::uint64_t(1) << (bits - 1);
  const auto mag = static_cast<std::int64_t>(b & (sign - 1));
  return (b & sign) ? -mag : mag;
}

std::uint64_t mask_of(DType d) {
  const std::size_t n = xp::itemsize(d);
  return n == 8 ? ~0ull : (1ull << (8 * n)) - 1;
}

// ---- generated values ----

enum class Prof {
  general,   // specials, small values, values in (-1, 1), random bit patterns
  shift,     // shift counts: -1 .. bits + 1
  pow_base,  // integers in [-6, 6]; floats as general
  pow_exp,   // integers in [0, 7]; floats as general
  reduce,    // floats in +-[0.5, 2] (sums and means stay in range), integers general
  near_one,  // floats in +-[0.9, 1.1] (products stay in range), integers in [-3, 3]
  small,     // integers in [-20, 20], floats quarter steps in [-10, 10]
  ties,      // small integers (repeated extremes), in every dtype
};

std::vector<std::uint64_t> float_specials(DType d) {
  std::vector<double> v = {0.0, -0.0,  1.0, -1.0,  0.5,      -0.5,      1.5, 2.5,  -2.5,
                           3.0, -7.75, 0.1, 100.0, INFINITY, -INFINITY, NAN, -NAN, 3.14159265358979};
  std::vector<std::uint64_t> b;
  for (double x : v) b.push_back(bits_of_double(d, x));
  switch (d) {  // largest finite (both signs), smallest normal, smallest subnormal (both signs)
    case DType::float16:
      b.insert(b.end(), {0x7BFF, 0xFBFF, 0x0400, 0x0001, 0x8001});
      break;
    case DType::bfloat16:
      b.insert(b.end(), {0x7F7F, 0xFF7F, 0x0080, 0x0001, 0x8001});
      break;
    case DType::float32:
      b.insert(b.end(), {0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x00000001, 0x80000001});
      break;
    default:
      b.insert(b.end(),
               {0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull, 0x0010000000000000ull, 1ull, 0x8000000000000001ull});
  }
  return b;
}

std::vector<std::uint64_t> int_specials(DType d) {
  const int bits = static_cast<int>(xp::itemsize(d)) * 8;
  const bool sgn = xp::kind(d) == xp::DTypeKind::signed_integer;
  const std::uint64_t m = mask_of(d);
  const std::uint64_t top = std::uint64_t(1) << (bits - 1);
  std::vector<std::uint64_t> b = {0, 1, m /* -1 or max */, 2, 7, (~std::uint64_t(1)) & m /* -2 */, 100 & m};
  if (sgn) {
    b.insert(b.end(), {top /* min */, top - 1 /* max */, top + 1});
  } else {
    b.insert(b.end(), {m - 1, top, top - 1});
  }
  return b;
}

std::vector<std::uint64_t> specials(DType d) {
  if (d == DType::bool_) return {0, 1};
  return is_float(d) ? float_specials(d) : int_specials(d);
}

std::uint64_t one_value(DType d, Prof p, Rng& r) {
  const std::uint64_t m = mask_of(d);
  if (d == DType::bool_) return r.next() & 1;
  const bool f = is_float(d);
  const int bits = static_cast<int>(xp::itemsize(d)) * 8;
  switch (p) {
    case Prof::shift:
      if (!f) return static_cast<std::uint64_t>(r.range(-1, bits + 1)) & m;
      break;
    case Prof::pow_base:
      if (!f) return static_cast<std::uint64_t>(r.range(xp::kind(d) == xp::DTypeKind::signed_integer ? -6 : 0, 6)) & m;
      break;
    case Prof::pow_exp:
      if (!f) return static_cast<std::uint64_t>(r.range(0, 7));
      break;
    case Prof::reduce:
      if (f) {
        const double mag = std::exp2(2 * r.unit() - 1);
        return bits_of_double(d, r.chance(0.5) ? -mag : mag);
      }
      break;
    case Prof::near_one:
      if (f) return bits_of_double(d, (r.chance(0.3) ? -1 : 1) * (0.9 + 0.2 * r.unit()));
      return static_cast<std::uint64_t>(r.range(xp::kind(d) == xp::DTypeKind::signed_integer ? -3 : 0, 3)) & m;
    case Prof::small:
      if (f) return bits_of_double(d, static_cast<double>(r.range(-40, 40)) / 4);
      return static_cast<std::uint64_t>(r.range(-20, 20)) & m;
    case Prof::ties:
      return f ? bits_of_double(d, static_cast<double>(r.range(-3, 3)))
               : static_cast<std::uint64_t>(r.range(xp::kind(d) == xp::DTypeKind::signed_integer ? -3 : 0, 3)) & m;
    case Prof::general:
      break;
  }
  const double u = r.unit();
  if (u < 0.2) return r.pick(specials(d));
  if (f) {
    if (u < 0.5) return bits_of_double(d, static_cast<double>(r.range(-40, 40)) / 4);
    if (u < 0.65) return bits_of_double(d, 2 * r.unit() - 1);
    return r.next() & m;
  }
  if (u < 0.6) return static_cast<std::uint64_t>(r.range(-20, 20)) & m;
  return r.next() & m;
}

std::vector<std::uint8_t> make_values(DType d, std::int64_t n, Prof p, Rng& r, bool specials_first = false) {
  const std::size_t item = xp::itemsize(d);
  std::vector<std::uint8_t> b(static_cast<std::size_t>(n) * item);
  std::vector<std::uint64_t> sp = specials_first && p == Prof::general ? specials(d) : std::vector<std::uint64_t>{};
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t v =
        static_cast<std::size_t>(i) < sp.size() ? sp[static_cast<std::size_t>(i)] : one_value(d, p, r);
    std::memcpy(b.data() + static_cast<std::size_t>(i) * item, &v, item);
  }
  return b;
}

json arr(DType d, const Shape& s, const std::vector<std::uint8_t>& bytes, json views = json::array()) {
  if (views.is_null()) views = json::array();
  return json{{"dtype", dname(d)}, {"shape", s}, {"hex", to_hex(bytes)}, {"views", std::move(views)}};
}
json rand_arr(DType d, const Shape& s, Prof p, Rng& r, json views = json::array(), bool specials_first = false) {
  return arr(d, s, make_values(d, count(s), p, r, specials_first), std::move(views));
}
// `s` {-1}: one dimension of v.size().
json arr_of_bits(DType d, const std::vector<std::uint64_t>& v, const Shape& s = {-1}) {
  std::vector<std::uint8_t> b(v.size() * xp::itemsize(d));
  for (std::size_t i = 0; i < v.size(); ++i) std::memcpy(b.data() + i * xp::itemsize(d), &v[i], xp::itemsize(d));
  return arr(d, s == Shape{-1} ? Shape{static_cast<std::int64_t>(v.size())} : s, b);
}
json arr_of_doubles(DType d, const std::vector<double>& v, const Shape& s = {-1}) {
  std::vector<std::uint64_t> b;
  for (double x : v) b.push_back(bits_of_double(d, x));
  return arr_of_bits(d, b, s);
}

json s_int(long long v) {
  return json{{"scalar", "int"}, {"value", std::to_string(v)}};
}
json s_uint(unsigned long long v) {
  return json{{"scalar", "int"}, {"value", std::to_string(v)}, {"unsigned", true}};
}
json s_bool(bool v) {
  return json{{"scalar", "bool"}, {"value", v}};
}
json s_float(double v) {
  std::uint64_t u;
  std::memcpy(&u, &v, 8);
  return json{{"scalar", "float"}, {"value", std::to_string(u)}};
}

// ---- the same description, interpreted with xp ----

xp::Scalar make_scalar(const json& d) {
  const std::string k = d["scalar"].get<std::string>();
  if (k == "bool") return xp::Scalar(d["value"].get<bool>());
  if (k == "int") {
    if (d.value("unsigned", false)) return xp::Scalar(std::stoull(d["value"].get<std::string>()));
    return xp::Scalar(std::stoll(d["value"].get<std::string>()));
  }
  const std::uint64_t u = std::stoull(d["value"].get<std::string>());
  double v;
  std::memcpy(&v, &u, 8);
  return xp::Scalar(v);
}

Array make_base(const json& d) {
  const auto bytes = from_hex(d["hex"].get<std::string>());
  return xp::asarray(bytes.data(), dtype_named(d["dtype"].get<std::string>()), d["shape"].get<Shape>());
}

std::vector<xp::Index> make_index(const json& idx) {
  std::vector<xp::Index> out;
  for (const auto& i : idx) {
    if (i.is_array()) {
      std::optional<std::int64_t> a, b;
      if (!i[0].is_null()) a = i[0].get<std::int64_t>();
      if (!i[1].is_null()) b = i[1].get<std::int64_t>();
      out.emplace_back(xp::Slice(a, b, i[2].get<std::int64_t>()));
    } else if (i.is_string()) {
      if (i.get<std::string>() == "newaxis")
        out.emplace_back(xp::newaxis);
      else
        out.emplace_back(xp::ellipsis);
    } else {
      out.emplace_back(i.get<std::int64_t>());
    }
  }
  return out;
}

xp::Axes make_axes(const json& a) {
  if (a.is_null()) return xp::Axes();
  if (a.is_number()) return xp::Axes(a.get<int>());
  return xp::Axes(a.get<std::vector<int>>());
}

Array apply_step(const Array& a, const json& step) {
  const auto it = step.begin();
  const std::string k = it.key();
  const json& arg = it.value();
  if (k == "slice") {
    const auto idx = make_index(arg);
    return a.slice(std::span<const xp::Index>(idx));
  }
  if (k == "index") return a[arg.get<std::int64_t>()];
  if (k == "permute") return xp::permute_dims(a, arg.get<std::vector<int>>());
  if (k == "T") return a.T();
  if (k == "mT") return xp::matrix_transpose(a);
  if (k == "reshape") return a.reshape(arg.get<Shape>());
  if (k == "expand_dims") return xp::expand_dims(a, arg.get<int>());
  if (k == "squeeze") return xp::squeeze(a, make_axes(arg));
  if (k == "flip") return xp::flip(a, make_axes(arg));
  if (k == "broadcast_to") return xp::broadcast_to(a, arg.get<Shape>());
  throw std::runtime_error("unknown view step " + k);
}

Array apply_views(Array a, const json& views) {
  for (const auto& s : views) a = apply_step(a, s);
  return a;
}

// Operands and the arrays they refer to (which must outlive them).
struct Operands {
  std::deque<Array> arrays;
  std::vector<Operand> ops;
  void add(const json& d, const Array* out_base = nullptr) {
    if (d.contains("scalar")) {
      ops.emplace_back(make_scalar(d));
      return;
    }
    const Array base = d.value("alias_out", false) ? *out_base : make_base(d);
    arrays.push_back(apply_views(base, d.value("views", json::array())));
    ops.emplace_back(arrays.back());
  }
};

Array make_operand_array(const json& d) {
  return apply_views(make_base(d), d.value("views", json::array()));
}

// ---- the functions ----

using UnaryFn = Array (*)(const Operand&, const xp::Out&);
using BinaryFn = Array (*)(const Operand&, const Operand&, const xp::Out&);
using TernaryFn = Array (*)(const Operand&, const Operand&, const Operand&, const xp::Out&);

const std::map<std::string, UnaryFn>& unary_fns() {
  static const std::map<std::string, UnaryFn> m = {{"negative", xp::negative},
                                                   {"positive", xp::positive},
                                                   {"abs", xp::abs},
                                                   {"sign", xp::sign},
                                                   {"square", xp::square},
                                                   {"sqrt", xp::sqrt},
                                                   {"exp", xp::exp},
                                                   {"expm1", xp::expm1},
                                                   {"log", xp::log},
                                                   {"log1p", xp::log1p},
                                                   {"log2", xp::log2},
                                                   {"log10", xp::log10},
                                                   {"sin", xp::sin},
                                                   {"cos", xp::cos},
                                                   {"tan", xp::tan},
                                                   {"asin", xp::asin},
                                                   {"acos", xp::acos},
                                                   {"atan", xp::atan},
                                                   {"sinh", xp::sinh},
                                                   {"cosh", xp::cosh},
                                                   {"tanh", xp::tanh},
                                                   {"acosh", xp::acosh},
                                                   {"asinh", xp::asinh},
                                                   {"atanh", xp::atanh},
                                                   {"signbit", xp::signbit},
                                                   {"reciprocal", xp::reciprocal},
                                                   {"floor", xp::floor},
                                                   {"ceil", xp::ceil},
                                                   {"round", xp::round},
                                                   {"trunc", xp::trunc},
                                                   {"isnan", xp::isnan},
                                                   {"isinf", xp::isinf},
                                                   {"isfinite", xp::isfinite},
                                                   {"logical_not", xp::logical_not},
                                                   {"bitwise_invert", xp::bitwise_invert}};
  return m;
}
const std::map<std::string, BinaryFn>& binary_fns() {
  static const std::map<std::string, BinaryFn> m = {{"add", xp::add},
                                                    {"subtract", xp::subtract},
                                                    {"multiply", xp::multiply},
                                                    {"divide", xp::divide},
                                                    {"floor_divide", xp::floor_divide},
                                                    {"remainder", xp::remainder},
                                                    {"pow", xp::pow},
                                                    {"atan2", xp::atan2},
                                                    {"hypot", xp::hypot},
                                                    {"copysign", xp::copysign},
                                                    {"nextafter", xp::nextafter},
                                                    {"logaddexp", xp::logaddexp},
                                                    {"minimum", xp::minimum},
                                                    {"maximum", xp::maximum},
                                                    {"equal", xp::equal},
                                                    {"not_equal", xp::not_equal},
                                                    {"less", xp::less},
                                                    {"less_equal", xp::less_equal},
                                                    {"greater", xp::greater},
                                                    {"greater_equal", xp::greater_equal},
                                                    {"logical_and", xp::logical_and},
                                                    {"logical_or", xp::logical_or},
                                                    {"logical_xor", xp::logical_xor},
                                                    {"bitwise_and", xp::bitwise_and},
                                                    {"bitwise_or", xp::bitwise_or},
                                                    {"bitwise_xor", xp::bitwise_xor},
                                                    {"bitwise_left_shift", xp::bitwise_left_shift},
                                                    {"bitwise_right_shift", xp::bitwise_right_shift}};
  return m;
}
const std::map<std::string, TernaryFn>& ternary_fns() {
  static const std::map<std::string, TernaryFn> m = {{"clip", xp::clip}, {"where", xp::where}, {"fma", xp::fma}};
  return m;
}

using BinaryOp = std::function<Array(const Operand&, const Operand&)>;
const std::map<std::string, BinaryOp>& binary_ops() {
  static const std::map<std::string, BinaryOp> m = {
      {"add", [](const Operand& a, const Operand& b) { return a + b; }},
      {"subtract", [](const Operand& a, const Operand& b) { return a - b; }},
      {"multiply", [](const Operand& a, const Operand& b) { return a * b; }},
      {"divide", [](const Operand& a, const Operand& b) { return a / b; }},
      {"remainder", [](const Operand& a, const Operand& b) { return a % b; }},
      {"bitwise_and", [](const Operand& a, const Operand& b) { return a & b; }},
      {"bitwise_or", [](const Operand& a, const Operand& b) { return a | b; }},
      {"bitwise_xor", [](const Operand& a, const Operand& b) { return a ^ b; }},
      {"bitwise_left_shift", [](const Operand& a, const Operand& b) { return a << b; }},
      {"bitwise_right_shift", [](const Operand& a, const Operand& b) { return a >> b; }},
      {"equal", [](const Operand& a, const Operand& b) { return a == b; }},
      {"not_equal", [](const Operand& a, const Operand& b) { return a != b; }},
      {"less", [](const Operand& a, const Operand& b) { return a < b; }},
      {"less_equal", [](const Operand& a, const Operand& b) { return a <= b; }},
      {"greater", [](const Operand& a, const Operand& b) { return a > b; }},
      {"greater_equal", [](const Operand& a, const Operand& b) { return a >= b; }}};
  return m;
}
using UnaryOp = std::function<Array(const Array&)>;
const std::map<std::string, UnaryOp>& unary_ops() {
  static const std::map<std::string, UnaryOp> m = {{"negative", [](const Array& a) { return -a; }},
                                                   {"positive", [](const Array& a) { return +a; }},
                                                   {"bitwise_invert", [](const Array& a) { return ~a; }},
                                                   {"logical_not", [](const Array& a) { return !a; }}};
  return m;
}
using InplaceOp = std::function<void(Array&, const Operand&)>;
const std::map<std::string, InplaceOp>& inplace_ops() {
  static const std::map<std::string, InplaceOp> m = {
      {"add", [](Array& a, const Operand& b) { a += b; }},
      {"subtract", [](Array& a, const Operand& b) { a -= b; }},
      {"multiply", [](Array& a, const Operand& b) { a *= b; }},
      {"divide", [](Array& a, const Operand& b) { a /= b; }},
      {"remainder", [](Array& a, const Operand& b) { a %= b; }},
      {"bitwise_and", [](Array& a, const Operand& b) { a &= b; }},
      {"bitwise_or", [](Array& a, const Operand& b) { a |= b; }},
      {"bitwise_xor", [](Array& a, const Operand& b) { a ^= b; }},
      {"bitwise_left_shift", [](Array& a, const Operand& b) { a <<= b; }},
      {"bitwise_right_shift", [](Array& a, const Operand& b) { a >>= b; }}};
  return m;
}

const std::set<std::string> kTranscendental = {"exp", "expm1", "log",   "log1p", "log2",  "log10",    "sin",  "cos",
                                               "tan", "asin",  "acos",  "atan",  "sinh",  "cosh",     "tanh", "atan2",
                                               "pow", "acosh", "asinh", "atanh", "hypot", "logaddexp"};

// The error bound of the transcendental functions, in ulp of the correctly rounded result: 4 for
// float32 and float64, 5 where the CPU backend documents more (float32 log and tan, ew_math.cpp).
double ulp_bound(const std::string& fn, DType d) {
  if (d == DType::float32 && (fn == "log" || fn == "tan")) return 5;
  return 4;
}

Array call_fn(const std::string& fn, const std::string& form, const std::vector<Operand>& a, const xp::Out& out) {
  if (form == "op") {
    if (a.size() == 1) return unary_ops().at(fn)(a[0].array());
    return binary_ops().at(fn)(a[0], a[1]);
  }
  if (a.size() == 1) return unary_fns().at(fn)(a[0], out);
  if (a.size() == 2) return binary_fns().at(fn)(a[0], a[1], out);
  return ternary_fns().at(fn)(a[0], a[1], a[2], out);
}

// ---- comparing ----

// How a value is checked: bit for bit (NaN as a class), within `ulp` of the reference, or within
// an absolute tolerance per element.
struct Check {
  double ulp = 0;
  const json* approx = nullptr;
};

struct Fetched {
  DType dtype;
  Shape shape;
  std::vector<std::uint8_t> bytes;
};

Fetched fetch(const Array& a) {
  Fetched f{a.dtype(), shape_of(a), {}};
  f.bytes.resize(static_cast<std::size_t>(a.size()) * xp::itemsize(a.dtype()));
  a.copy_to_host(a.dtype(), f.bytes.data(), static_cast<std::size_t>(a.size()));
  return f;
}

std::string show(DType d, std::uint64_t b) {
  std::ostringstream s;
  s.precision(17);
  if (is_float(d)) {
    s << double_of_bits(d, b) << " (0x" << std::hex << b << ")";
  } else if (xp::kind(d) == xp::DTypeKind::unsigned_integer || d == DType::bool_) {
    s << b;
  } else {
    const int sh = 64 - 8 * static_cast<int>(xp::itemsize(d));
    s << (static_cast<std::int64_t>(b << sh) >> sh);
  }
  return s.str();
}

// Empty when `got` matches `want` ({dtype, shape, hex}); else what differs (the first few elements).
std::string compare(const Fetched& got, const json& want, const Check& check = {}) {
  const DType wd = dtype_named(want["dtype"].get<std::string>());
  std::ostringstream err;
  if (got.dtype != wd) err << "dtype " << dname(got.dtype) << ", NumPy " << dname(wd) << "; ";
  const Shape ws = want["shape"].get<Shape>();
  if (got.shape != ws) err << "shape " << json(got.shape).dump() << ", NumPy " << json(ws).dump() << "; ";
  if (!err.str().empty()) return err.str();
  const auto wb = from_hex(want["hex"].get<std::string>());
  const std::size_t item = xp::itemsize(wd), n = wb.size() / item;
  if (got.bytes.size() != wb.size()) return "size differs";
  std::vector<std::uint8_t> ref, tol;
  if (check.approx) {
    ref = from_hex((*check.approx)["ref"].get<std::string>());
    tol = from_hex((*check.approx)["tol"].get<std::string>());
  }
  int bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t g = get_bits(got.bytes, item, i), w = get_bits(wb, item, i);
    bool ok;
    std::string extra;
    if (check.approx && is_float(wd)) {
      const double r = double_of_bits(DType::float64, get_bits(ref, 8, i));
      const double t = double_of_bits(DType::float64, get_bits(tol, 8, i));
      const double gv = double_of_bits(wd, g);
      if (std::isnan(r) || std::isinf(r)) {
        ok = std::isnan(r) ? std::isnan(gv) : gv == r;
      } else {
        ok = std::fabs(gv - r) <= t;
      }
      if (!ok) extra = " (reference " + std::to_string(r) + " +- " + std::to_string(t) + ")";
    } else if (nan_bits(wd, w) || nan_bits(wd, g)) {
      ok = nan_bits(wd, w) && nan_bits(wd, g);
    } else if (check.ulp > 0 && is_float(wd)) {
      ok = std::llabs(ordered(wd, g) - ordered(wd, w)) <= check.ulp;
      if (!ok) extra = " (" + std::to_string(std::llabs(ordered(wd, g) - ordered(wd, w))) + " ulp)";
    } else {
      ok = g == w;
    }
    if (!ok && ++bad <= 4) err << "[" << i << "] xp " << show(wd, g) << ", NumPy " << show(wd, w) << extra << "; ";
  }
  if (bad > 4) err << "... " << bad << " of " << n << " elements differ";
  return err.str();
}

// xp's exception for NumPy's: a TypeError for a TypeError, an IndexError for an IndexError, a
// ValueError (or subclass) for a ValueError or OverflowError.
std::string check_throw(const std::string& numpy_error, const std::function<void()>& f) {
  try {
    f();
  } catch (const xp::Error& e) {
    const bool ok = numpy_error == "TypeError"    ? dynamic_cast<const xp::TypeError*>(&e) != nullptr
                    : numpy_error == "IndexError" ? dynamic_cast<const xp::IndexError*>(&e) != nullptr
                    : numpy_error == "ValueError" || numpy_error == "OverflowError"
                        ? dynamic_cast<const xp::ValueError*>(&e) != nullptr
                        : true;
    if (!ok) return std::string("NumPy raises ") + numpy_error + ", xp throws another class: " + e.what();
    return "";
  } catch (const std::exception& e) {
    return "NumPy raises " + numpy_error + ", xp throws a non-xp exception: " + e.what();
  }
  return "NumPy raises " + numpy_error + ", xp does not throw";
}

// Collects failures of one test: the first few in full, then a count.
class Failures {
 public:
  explicit Failures(std::string what) : what_(std::move(what)) {}
  void add(const json& c, const std::string& msg) {
    if (msg.empty()) return;
    if (++n_ <= 25) {
      std::string d = c.dump();
      if (d.size() > 700) d = d.substr(0, 700) + "...";
      ADD_FAILURE() << msg << "\n  case: " << d;
    }
  }
  // One case run; `answer` is NumPy's (a refusal counts apart).
  void ran(const json& answer) {
    ++cases_;
    if (answer.contains("error")) ++refused_;
  }
  ~Failures() {
    ::testing::Test::RecordProperty("cases", cases_);
    ::testing::Test::RecordProperty("numpy_refused", refused_);
    EXPECT_EQ(n_, 0) << n_ << " failures in " << cases_ << " " << what_ << " cases";
    EXPECT_GT(cases_, 0) << what_;
  }

 private:
  std::string what_;
  int n_ = 0, cases_ = 0, refused_ = 0;
};

// Runs f; a failure message when it throws (NumPy answered).
std::string no_throw(const std::function<std::string()>& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return std::string("NumPy answers, xp throws: ") + e.what();
  }
}

// ---- the suite: every case, one run of the script ----

struct Suite {
  xp_test::TempDir dir;
  std::vector<json> cases;
  std::map<std::string, std::vector<std::size_t>> groups;
  xp_test::PythonReference ref;
  json answers;

  void add(const std::string& group, json c) {
    c["id"] = cases.size();
    groups[group].push_back(cases.size());
    cases.push_back(std::move(c));
  }
  const json& answer(const json& c) const {
    static const json none = {{"error", "no answer from the script"}};
    const auto it = answers.find(std::to_string(c["id"].get<std::size_t>()));
    return it == answers.end() ? none : *it;
  }
};

void build_all(Suite& s);

const Suite& suite() {
  static Suite s;
  static const bool once = [] {
    build_all(s);
    {
      std::ofstream f(s.dir / "request.json");
      f << json{{"cases", s.cases}}.dump();
    }
    s.ref = xp_test::run_python_reference("array_reference.py", {s.dir.path()});
    if (!s.ref.missing && !s.ref.error) {
      std::ifstream f(s.dir / "response.json");
      s.answers = json::parse(f, nullptr, false);
      if (s.answers.is_discarded() || !s.answers.contains("answers")) {
        s.ref.error = "array_reference.py wrote no readable response";
      } else {
        s.answers = s.answers["answers"];
      }
    }
    return true;
  }();
  (void)once;
  return s;
}

#define XP_SUITE(s)         \
  const Suite& s = suite(); \
  XP_REQUIRE_REFERENCE((s).ref)

// ==== case builders ================================================================================

const std::vector<std::string> kUnary = {"negative", "positive", "abs",   "sign",     "square",      "sqrt",
                                         "exp",      "expm1",    "log",   "log1p",    "log2",        "log10",
                                         "sin",      "cos",      "tan",   "asin",     "acos",        "atan",
                                         "sinh",     "cosh",     "tanh",  "floor",    "ceil",        "round",
                                         "trunc",    "isnan",    "isinf", "isfinite", "logical_not", "bitwise_invert",
                                         "acosh",    "asinh",    "atanh", "signbit",  "reciprocal"};
const std::vector<std::string> kBinary = {"add",
                                          "subtract",
                                          "multiply",
                                          "divide",
                                          "floor_divide",
                                          "remainder",
                                          "pow",
                                          "atan2",
                                          "hypot",
                                          "copysign",
                                          "nextafter",
                                          "logaddexp",
                                          "minimum",
                                          "maximum",
                                          "equal",
                                          "not_equal",
                                          "less",
                                          "less_equal",
                                          "greater",
                                          "greater_equal",
                                          "logical_and",
                                          "logical_or",
                                          "logical_xor",
                                          "bitwise_and",
                                          "bitwise_or",
                                          "bitwise_xor",
                                          "bitwise_left_shift",
                                          "bitwise_right_shift"};

Prof prof_for(const std::string& fn, int pos) {
  if ((fn == "bitwise_left_shift" || fn == "bitwise_right_shift") && pos == 1) return Prof::shift;
  if (fn == "pow") return pos == 0 ? Prof::pow_base : Prof::pow_exp;
  return Prof::general;
}

// A random view chain of `base` (of shape `shape`), chosen with xp's idea of each step's shape.
json random_views(Rng& r, const Shape& base_shape, DType d, int steps, bool writable_only);

// A view of shape exactly `s` that is not C-contiguous: a step-2 slice (either direction) of a
// larger base, or the transpose of a base of the reversed shape.
json strided_of_shape(DType d, const Shape& s, Prof p, Rng& r) {
  if (s.size() >= 2 && r.chance(0.4)) {
    Shape rev(s.rbegin(), s.rend());
    return rand_arr(d, rev, p, r, json::array({json{{"T", 1}}}));
  }
  Shape big;
  json idx = json::array();
  for (auto v : s) {
    big.push_back(2 * v);
    const int k = static_cast<int>(r.range(0, 2));
    idx.push_back(k == 0   ? json::array({nullptr, nullptr, 2})
                  : k == 1 ? json::array({1, nullptr, 2})
                           : json::array({nullptr, nullptr, -2}));
  }
  return rand_arr(d, big, p, r, json::array({json{{"slice", idx}}}));
}

// A shape that broadcasts with `s`: some dimensions 1, some leading ones dropped.
Shape broadcastable(const Shape& s, Rng& r) {
  Shape o = s;
  for (auto& v : o)
    if (r.chance(0.3)) v = 1;
  const auto drop = static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(o.size())));
  if (r.chance(0.4)) o.erase(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(drop));
  return o;
}

Shape random_shape(Rng& r, int max_ndim = 4, int max_dim = 5) {
  Shape s(static_cast<std::size_t>(r.range(0, max_ndim)));
  for (auto& v : s) v = r.range(1, max_dim);
  return s;
}

// The result dtype and shape xp gives (lazily: nothing is evaluated), or nothing when xp refuses.
std::optional<std::pair<DType, Shape>> xp_result(const std::string& fn, const json& args) {
  try {
    Operands o;
    for (const auto& a : args) o.add(a);
    const Array r = call_fn(fn, "fn", o.ops, {});
    return std::make_pair(r.dtype(), shape_of(r));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void build_elementwise(Suite& s) {
  Rng r{101};
  const std::vector<json> scalars = {s_bool(true),  s_int(3),      s_int(-2),     s_int(300),
                                     s_uint(~0ull), s_float(2.5),  s_float(-0.0), s_float(1 + 0x1p-11 + 0x1p-40),
                                     s_float(NAN),  s_float(1e10), s_int(-128)};
  for (DType d : kAll) {
    // Every unary function over specials and random values.
    for (const auto& fn : kUnary) {
      s.add("ew_same",
            {{"kind", "ew"}, {"fn", fn}, {"args", {rand_arr(d, {72}, Prof::general, r, json::array(), true)}}});
    }
    for (const auto& fn : kBinary) {
      // Every pair of special values, through broadcasting (n, 1) with (1, n). (minimum and maximum
      // of +0 and -0: NumPy's float16 loops give the first operand, its other float loops the second.)
      const auto sp = specials(d);
      const Shape col{static_cast<std::int64_t>(sp.size()), 1}, row{1, static_cast<std::int64_t>(sp.size())};
      json x = arr_of_bits(d, sp, col), y = arr_of_bits(d, sp, row);
      if (fn == "pow" && is_int(d)) y = rand_arr(d, row, Prof::pow_exp, r);
      if (fn.find("shift") != std::string::npos) y = rand_arr(d, row, Prof::shift, r);
      s.add("ew_same", {{"kind", "ew"}, {"fn", fn}, {"args", {x, y}}});
      // Random values of each operand's kind.
      s.add("ew_same", {{"kind", "ew"},
                        {"fn", fn},
                        {"args", {rand_arr(d, {48}, prof_for(fn, 0), r), rand_arr(d, {48}, prof_for(fn, 1), r)}}});
      // Weak scalars on either side.
      for (const auto& sc : scalars) {
        const bool negative_int = sc["scalar"] == "int" && sc["value"].get<std::string>()[0] == '-';
        if (fn == "pow" && negative_int) continue;  // NumPy raises for integers to negative powers
        if (fn == "pow" && sc == s_int(300)) continue;
        // NumPy's logical functions convert a Python int to int64 first: 2^64 - 1 overflows there.
        if (fn.rfind("logical_", 0) == 0 && sc == s_uint(~0ull)) continue;
        s.add("ew_scalar", {{"kind", "ew"}, {"fn", fn}, {"args", {rand_arr(d, {6}, prof_for(fn, 0), r), sc}}});
        if (fn == "pow" && is_int(d)) continue;  // the array would be the exponent, possibly negative
        s.add("ew_scalar", {{"kind", "ew"}, {"fn", fn}, {"args", {sc, rand_arr(d, {6}, prof_for(fn, 1), r)}}});
      }
    }
    // clip, where, fma.
    s.add("ew_same", {{"kind", "ew"},
                      {"fn", "clip"},
                      {"args",
                       {rand_arr(d, {40}, Prof::general, r, {}, true), rand_arr(d, {40}, Prof::general, r),
                        rand_arr(d, {40}, Prof::general, r)}}});
    s.add("ew_scalar", {{"kind", "ew"},
                        {"fn", "clip"},
                        {"args", {rand_arr(d, {3, 8}, Prof::general, r), rand_arr(d, {8}, Prof::small, r), s_int(5)}}});
    for (const auto& [lo, hi] : std::vector<std::pair<json, json>>{
             {s_int(0), s_int(5)},
             {s_float(-1.5), s_float(2.5)},
             {s_bool(false), s_bool(true)},
             // Integer bounds beyond the dtype: dropped on their own side, an error on the other.
             {s_int(-1), s_int(300)},
             {s_int(-129), s_uint(~0ull)},
             {s_int(3), s_int(300)},
             {s_int(300), s_int(400)},
             {s_int(-5), s_int(-1)}})
      s.add("ew_scalar", {{"kind", "ew"}, {"fn", "clip"}, {"args", {rand_arr(d, {12}, Prof::small, r), lo, hi}}});
    s.add("ew_same", {{"kind", "ew"},
                      {"fn", "where"},
                      {"args",
                       {rand_arr(DType::bool_, {40}, Prof::general, r), rand_arr(d, {40}, Prof::general, r),
                        rand_arr(d, {40}, Prof::general, r)}}});
    s.add("ew_scalar",
          {{"kind", "ew"},
           {"fn", "where"},
           {"args", {rand_arr(d, {4, 1}, Prof::general, r), rand_arr(d, {5}, Prof::general, r), s_int(1)}}});
    s.add(
        "ew_scalar",
        {{"kind", "ew"},
         {"fn", "where"},
         {"args", {rand_arr(DType::bool_, {8}, Prof::general, r), s_float(1.5), rand_arr(d, {8}, Prof::general, r)}}});
    if (is_float(d)) {  // fma is for floating types (NumPy has none: the script rounds exactly)
      s.add("ew_same", {{"kind", "ew"},
                        {"fn", "fma"},
                        {"args",
                         {rand_arr(d, {64}, Prof::general, r, {}, true), rand_arr(d, {64}, Prof::general, r),
                          rand_arr(d, {64}, Prof::general, r)}}});
      s.add("ew_scalar",
            {{"kind", "ew"}, {"fn", "fma"}, {"args", {rand_arr(d, {16}, Prof::small, r), s_float(2.0), s_float(0.5)}}});
    }
  }
  // Mixed dtypes: every pair, every binary function; the result dtype must be NumPy's. (atan2 of two
  // integer arrays: NumPy takes the smallest float both convert to safely, int8 with uint8 -> float16.)
  for (const auto& fn : kBinary)
    for (DType a : kAll)
      for (DType b : kAll)
        s.add("ew_mixed", {{"kind", "ew"},
                           {"fn", fn},
                           {"args", {rand_arr(a, {7}, prof_for(fn, 0), r), rand_arr(b, {7}, prof_for(fn, 1), r)}}});
  for (DType a : kAll)
    for (DType b : kAll) {
      s.add("ew_mixed", {{"kind", "ew"},
                         {"fn", "where"},
                         {"args",
                          {rand_arr(DType::bool_, {7}, Prof::general, r), rand_arr(a, {7}, Prof::general, r),
                           rand_arr(b, {7}, Prof::general, r)}}});
      s.add("ew_mixed",
            {{"kind", "ew"},
             {"fn", "clip"},
             {"args",
              {rand_arr(a, {7}, Prof::small, r), rand_arr(b, {7}, Prof::small, r), rand_arr(b, {7}, Prof::small, r)}}});
      if (is_float(a) && is_float(b))
        s.add("ew_mixed", {{"kind", "ew"},
                           {"fn", "fma"},
                           {"args",
                            {rand_arr(a, {7}, Prof::general, r), rand_arr(b, {7}, Prof::general, r),
                             rand_arr(DType::float32, {7}, Prof::general, r)}}});
    }
  // Hard cases: a float64 scalar that must round once to float16, int64 to float32.
  s.add("ew_scalar", {{"kind", "ew"},
                      {"fn", "add"},
                      {"args", {arr_of_doubles(DType::float16, {0, 1, -1, 2}), s_float(1 + 0x1p-11 + 0x1p-40)}}});
  s.add("ew_mixed", {{"kind", "ew"},
                     {"fn", "add"},
                     {"args",
                      {arr_of_bits(DType::int64, {(1ull << 60) + (1ull << 36) + 1, 16777217}),
                       arr_of_doubles(DType::float32, {0, 0})}}});
  s.add("ew_mixed", {{"kind", "ew"},
                     {"fn", "add"},
                     {"args",
                      {arr_of_bits(DType::uint64, {(1ull << 60) + (1ull << 36) + 1, ~0ull}),
                       arr_of_doubles(DType::float16, {0, 0})}}});

  // fma of 16-bit floats rounded once: products halfway between two values, a tiny c deciding the
  // side (float32 arithmetic would round twice), at bfloat16's overflow threshold and subnormals.
  s.add("ew_same",
        {{"kind", "ew"},
         {"fn", "fma"},
         {"args",
          {arr_of_doubles(DType::float16, {7272, 7272, -0.0, 2}), arr_of_doubles(DType::float16, {-3, 3, 1, 3}),
           arr_of_doubles(DType::float16, {0x1p-14, -0x1p-14, -0.0, 0.5})}}});
  {
    const double h = 0x1p-35 * (1 + 0x1p-4), big = 7 * 0x1p60, other = 73 * 0x1p59;
    s.add(
        "ew_same",
        {{"kind", "ew"},
         {"fn", "fma"},
         {"args",
          {arr_of_doubles(DType::bfloat16, {h, h, h, big, big, big, -big, 0x1p-67, 0x1p-67}),
           arr_of_doubles(DType::bfloat16, {h, h, h, other, other, other, other, 0x1p-67, 0x1p-67}),
           arr_of_doubles(DType::bfloat16, {0x1p-133, -0x1p-133, 0, -0x1p-133, 0x1p-133, 0, 0x1p-133, 0, 0x1p-133})}}});
  }
  {
    // Many bfloat16 products (8-bit significands, exponents from 2^-140 to 2^104) with a c that is
    // tiny (a halfway product decided by it), of any size, or cancelling the product.
    std::vector<double> a, b, c;
    for (int i = 0; i < 256; ++i) {
      const double x = std::ldexp(static_cast<double>(r.range(128, 255)), static_cast<int>(r.range(-77, 52)));
      const double y = std::ldexp(static_cast<double>(r.range(128, 255)), static_cast<int>(r.range(-77, 52)));
      const double sign = r.chance(0.5) ? -1.0 : 1.0;
      const int pick = static_cast<int>(r.range(0, 2));
      double z = 0;
      if (pick == 0) z = sign * std::ldexp(1.0, static_cast<int>(r.range(-133, -100)));
      if (pick == 1) z = sign * std::ldexp(static_cast<double>(r.range(128, 255)), static_cast<int>(r.range(-140, 40)));
      if (pick == 2) z = -x * y * (1 + std::ldexp(static_cast<double>(r.range(-1, 1)), -8));
      a.push_back(r.chance(0.5) ? -x : x);
      b.push_back(y);
      c.push_back(z);
    }
    s.add("ew_same", {{"kind", "ew"},
                      {"fn", "fma"},
                      {"args",
                       {arr_of_doubles(DType::bfloat16, a), arr_of_doubles(DType::bfloat16, b),
                        arr_of_doubles(DType::bfloat16, c)}}});
  }
  // Operands promoted all at once (uint16, int16, float16: float32; pairwise float64), and
  // float16's clip keeping x where it equals a bound.
  s.add("ew_mixed", {{"kind", "ew"},
                     {"fn", "clip"},
                     {"args",
                      {rand_arr(DType::uint16, {7}, Prof::small, r), rand_arr(DType::int16, {7}, Prof::small, r),
                       rand_arr(DType::float16, {7}, Prof::small, r)}}});
  s.add("ew_mixed", {{"kind", "ew"},
                     {"fn", "clip"},
                     {"args",
                      {rand_arr(DType::int8, {7}, Prof::small, r), rand_arr(DType::uint8, {7}, Prof::small, r),
                       rand_arr(DType::float16, {7}, Prof::small, r)}}});
  s.add("ew_same", {{"kind", "ew"},
                    {"fn", "clip"},
                    {"args",
                     {arr_of_doubles(DType::float16, {0.0, -0.0, 0.0, -0.0}),
                      arr_of_doubles(DType::float16, {-0.0, 0.0, 0.0, -0.0}),
                      arr_of_doubles(DType::float16, {-0.0, 0.0, -0.0, 0.0})}}});

  // Operators: arrays with arrays and with scalars on either side.
  for (DType d : kAll) {
    for (const auto& [fn, op] : binary_ops()) {
      (void)op;
      const Prof p1 = fn.find("shift") != std::string::npos ? Prof::shift : Prof::general;
      s.add("ew_op", {{"kind", "ew"},
                      {"form", "op"},
                      {"fn", fn},
                      {"args", {rand_arr(d, {3, 4}, Prof::general, r), rand_arr(d, {4}, p1, r)}}});
      s.add("ew_op",
            {{"kind", "ew"}, {"form", "op"}, {"fn", fn}, {"args", {rand_arr(d, {5}, Prof::general, r), s_int(3)}}});
      s.add("ew_op", {{"kind", "ew"}, {"form", "op"}, {"fn", fn}, {"args", {s_float(2.5), rand_arr(d, {5}, p1, r)}}});
      s.add("ew_op", {{"kind", "ew"},
                      {"form", "op"},
                      {"fn", fn},
                      {"args", {rand_arr(d, {5}, Prof::general, r), rand_arr(DType::int32, {5}, p1, r)}}});
    }
    for (const auto& [fn, op] : unary_ops()) {
      (void)op;
      s.add("ew_op",
            {{"kind", "ew"}, {"form", "op"}, {"fn", fn}, {"args", {rand_arr(d, {40}, Prof::general, r, {}, true)}}});
    }
  }

  // Non-contiguous inputs: random views, broadcast partners that are strided or transposed.
  const std::vector<DType> view_dtypes = {DType::bool_,   DType::int16,    DType::uint8,   DType::int64,
                                          DType::float16, DType::bfloat16, DType::float32, DType::float64};
  std::vector<std::string> all_fns = kUnary;
  all_fns.insert(all_fns.end(), kBinary.begin(), kBinary.end());
  all_fns.insert(all_fns.end(), {"clip", "where", "fma"});
  for (const auto& fn : all_fns) {
    for (DType d : view_dtypes) {
      if (fn == "fma" && !is_float(d)) continue;
      const int arity = fn == "clip" || fn == "where" || fn == "fma" ? 3 : unary_fns().count(fn) ? 1 : 2;
      const Shape base = random_shape(r, 4, 6);
      json x = rand_arr(d, base, prof_for(fn, 0), r);
      x["views"] = random_views(r, base, d, static_cast<int>(r.range(1, 4)), false);
      const Array xv = make_operand_array(x);
      const Shape xs = shape_of(xv);
      json args = json::array({x});
      for (int k = 1; k < arity; ++k) {
        const DType dk = fn == "where" && k == 1 ? d : d;
        args.push_back(strided_of_shape(dk, broadcastable(xs, r), prof_for(fn, k), r));
      }
      if (fn == "where") args[0] = strided_of_shape(DType::bool_, xs, Prof::general, r);
      s.add("ew_view", {{"kind", "ew"}, {"fn", fn}, {"args", args}});
    }
  }

  // out=: the result's dtype, a wider one, a narrower one of the same kind, a strided out, an out
  // that overlaps an input, and a kind the result cannot be cast to (NumPy's TypeError).
  const std::map<DType, DType> wider = {
      {DType::bool_, DType::int8},      {DType::int8, DType::int16},       {DType::int16, DType::int32},
      {DType::int32, DType::int64},     {DType::int64, DType::float64},    {DType::uint8, DType::uint16},
      {DType::uint16, DType::int32},    {DType::uint32, DType::uint64},    {DType::uint64, DType::float64},
      {DType::float16, DType::float32}, {DType::bfloat16, DType::float32}, {DType::float32, DType::float64},
      {DType::float64, DType::float64}};
  const std::map<DType, DType> narrower = {{DType::float64, DType::float16}, {DType::float32, DType::bfloat16},
                                           {DType::int64, DType::int8},      {DType::uint32, DType::uint8},
                                           {DType::int16, DType::int8},      {DType::float16, DType::float16}};
  for (const auto& fn : all_fns) {
    for (DType d : {DType::bool_, DType::int8, DType::int32, DType::uint8, DType::float16, DType::float32,
                    DType::float64, DType::int64, DType::bfloat16}) {
      if (fn == "fma" && !is_float(d)) continue;
      const int arity = fn == "clip" || fn == "where" || fn == "fma" ? 3 : unary_fns().count(fn) ? 1 : 2;
      json args = json::array();
      for (int k = 0; k < arity; ++k)
        args.push_back(
            rand_arr(fn == "where" && k == 0 ? DType::bool_ : d, k == 1 ? Shape{5} : Shape{3, 5}, prof_for(fn, k), r));
      const auto res = xp_result(fn, args);
      if (!res) continue;
      const auto [rd, rs] = *res;
      auto add_out = [&](DType od, bool strided, json a) {
        json out = strided ? strided_of_shape(od, rs, Prof::general, r) : rand_arr(od, rs, Prof::general, r);
        s.add("ew_out", {{"kind", "ew"}, {"fn", fn}, {"args", std::move(a)}, {"out", out}});
      };
      add_out(rd, false, args);
      add_out(wider.at(rd), true, args);
      if (narrower.count(rd)) add_out(narrower.at(rd), false, args);
      if (is_float(rd)) add_out(DType::int32, false, args);
      if (rd == DType::bool_ || is_int(rd)) add_out(DType::bool_, false, args);
      // The out array is also the first operand, reversed: NumPy reads before it writes.
      if (arity >= 2 && rd == d && fn != "where") {
        json a = args;
        json out = rand_arr(rd, rs, prof_for(fn, 0), r);
        a[0] = json{{"alias_out", true}, {"views", json::array({json{{"flip", nullptr}}})}};
        s.add("ew_out", {{"kind", "ew"}, {"fn", fn}, {"args", a}, {"out", out}});
      }
    }
  }

  // Compound assignment into arrays and views.
  for (const auto& [fn, op] : inplace_ops()) {
    (void)op;
    for (DType d : kAll) {
      const Prof p1 = fn.find("shift") != std::string::npos ? Prof::shift : Prof::general;
      for (int k = 0; k < 5; ++k) {
        json views = r.chance(0.5) ? json::array({json{{"slice", json::array({json::array({nullptr, nullptr, -1}),
                                                                              json::array({1, nullptr, 2})})}}})
                                   : json::array();
        json target = rand_arr(d, {4, 6}, Prof::general, r, views);
        const DType other = k == 1 ? r.pick(kAll) : d;
        json o = k == 2   ? s_int(3)
                 : k == 3 ? s_float(0.5)
                 : k == 4 ? json{{"alias_out", true}, {"views", json::array({json{{"flip", nullptr}}})}}
                          : rand_arr(other, {views.empty() ? 6 : 3}, p1, r);
        if (k == 4 && !views.empty()) o["views"] = json::array({views[0], json{{"flip", nullptr}}});
        s.add("iop", {{"kind", "iop"}, {"fn", fn}, {"target", target}, {"other", o}});
      }
    }
  }
}

// ---- views ----

json random_views(Rng& r, const Shape& base_shape, DType d, int steps, bool writable_only) {
  json views = json::array();
  Array a;
  try {
    a = xp::zeros(base_shape, d);
  } catch (const std::exception&) {
    return views;
  }
  for (int i = 0; i < steps; ++i) {
    const Shape sh = shape_of(a);
    const int nd = static_cast<int>(sh.size());
    json step;
    const int kind = static_cast<int>(r.range(0, writable_only ? 6 : 8));
    if (kind <= 1) {  // a slice over some axes
      json idx = json::array();
      const bool ell = nd > 1 && r.chance(0.2);
      const int first = ell ? static_cast<int>(r.range(1, nd - 1)) : 0;
      if (ell) idx.push_back("...");
      for (int ax = first; ax < nd; ++ax) {
        const std::int64_t n = sh[static_cast<std::size_t>(ax)];
        if (r.chance(0.1)) idx.push_back("newaxis");
        const double u = r.unit();
        if (u < 0.15 && n > 0) {
          idx.push_back(r.range(-n, n - 1));
        } else if (u < 0.35) {
          idx.push_back(json::array({nullptr, nullptr, 1}));
        } else {
          const std::int64_t step_v = r.pick(std::vector<std::int64_t>{1, 2, 3, -1, -2, -3});
          auto bound = [&]() -> json {
            if (r.chance(0.3)) return nullptr;
            return r.range(-n - 2, n + 2);
          };
          idx.push_back(json::array({bound(), bound(), step_v}));
        }
      }
      if (r.chance(0.1)) idx.push_back("newaxis");
      step = {{"slice", idx}};
    } else if (kind == 2 && nd > 0 && sh[0] > 0) {
      step = {{"index", r.range(-sh[0], sh[0] - 1)}};
    } else if (kind == 3) {
      std::vector<int> p(static_cast<std::size_t>(nd));
      for (int k = 0; k < nd; ++k) p[static_cast<std::size_t>(k)] = k;
      for (int k = nd - 1; k > 0; --k)
        std::swap(p[static_cast<std::size_t>(k)], p[static_cast<std::size_t>(r.range(0, k))]);
      step = r.chance(0.2) ? json{{"T", 1}} : r.chance(0.2) && nd >= 2 ? json{{"mT", 1}} : json{{"permute", p}};
    } else if (kind == 4) {
      step = {{"flip", r.chance(0.3) || nd == 0 ? json(nullptr)
                                                : json(std::vector<int>{static_cast<int>(r.range(0, nd - 1))})}};
    } else if (kind == 5) {
      step = {{"expand_dims", r.range(-nd - 1, nd)}};
    } else if (kind == 6) {
      std::vector<int> ones;
      for (int k = 0; k < nd; ++k)
        if (sh[static_cast<std::size_t>(k)] == 1 && r.chance(0.7)) ones.push_back(k - (r.chance(0.5) ? nd : 0));
      step = {{"squeeze", r.chance(0.3) ? json(nullptr) : json(ones)}};
    } else if (kind == 7) {  // reshape: a random factorization of the size, maybe with -1
      std::int64_t n = count(sh);
      Shape ns;
      if (n == 0) {
        continue;  // reshaping empty arrays: ReshapeEmptyArrays below
      } else {
        std::int64_t rest = n;
        while (rest > 1 && ns.size() < 4) {
          std::vector<std::int64_t> divs;
          for (std::int64_t k = 2; k <= rest; ++k)
            if (rest % k == 0) divs.push_back(k);
          const std::int64_t f = r.pick(divs);
          ns.push_back(f);
          rest /= f;
        }
        if (rest != 1) ns.push_back(rest);
        if (r.chance(0.3))
          ns.insert(ns.begin() + static_cast<std::ptrdiff_t>(r.range(0, static_cast<std::int64_t>(ns.size()))), 1);
        if (!ns.empty() && r.chance(0.4))
          ns[static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(ns.size()) - 1))] = -1;
      }
      step = {{"reshape", ns}};
    } else {  // broadcast_to
      Shape ns;
      for (int k = 0; k < r.range(0, 2); ++k) ns.push_back(r.range(1, 3));
      for (auto v : sh) ns.push_back(v == 1 ? r.range(1, 3) : v);
      step = {{"broadcast_to", ns}};
    }
    if (step.is_null()) continue;
    views.push_back(step);
    try {
      a = apply_step(a, step);
    } catch (const std::exception&) {
      break;  // the check reports it if NumPy takes this step
    }
  }
  return views;
}

void build_views(Suite& s) {
  Rng r{202};
  for (int i = 0; i < 400; ++i) {
    const DType d = r.pick(kAll);
    Shape base(static_cast<std::size_t>(r.range(1, 4)));
    for (auto& v : base) v = r.range(1, 6);
    if (r.chance(0.03)) base[0] = 0;
    json x = rand_arr(d, base, Prof::general, r);
    x["views"] = random_views(r, base, d, static_cast<int>(r.range(1, 6)), false);
    s.add("view", {{"kind", "view"}, {"x", x}});
  }
  // Random broadcast-compatible (and some incompatible) shape pairs.
  for (int i = 0; i < 200; ++i) {
    const Shape res = random_shape(r, 4, 4);
    Shape a = broadcastable(res, r), b = broadcastable(res, r);
    if (r.chance(0.1) && !a.empty() && !b.empty()) {
      a.back() = 2;
      b.back() = 3;
    }
    const DType da = r.pick(kAll), db = r.pick(kAll);
    s.add("broadcast",
          {{"kind", "broadcast"}, {"a", rand_arr(da, a, Prof::small, r)}, {"b", rand_arr(db, b, Prof::small, r)}});
  }
}

// ---- random elementwise graphs ----

const std::vector<std::string> kGraphExactFloat = {
    "add",  "subtract", "multiply", "divide",   "minimum",       "maximum",   "negative",     "abs",      "square",
    "sqrt", "floor",    "ceil",     "trunc",    "round",         "sign",      "less",         "equal",    "where",
    "clip", "fma",      "isnan",    "isfinite", "greater_equal", "not_equal", "floor_divide", "remainder"};
const std::vector<std::string> kGraphExactInt = {"add",
                                                 "subtract",
                                                 "multiply",
                                                 "minimum",
                                                 "maximum",
                                                 "negative",
                                                 "abs",
                                                 "square",
                                                 "bitwise_and",
                                                 "bitwise_or",
                                                 "bitwise_xor",
                                                 "bitwise_invert",
                                                 "bitwise_left_shift",
                                                 "bitwise_right_shift",
                                                 "floor_divide",
                                                 "remainder",
                                                 "less",
                                                 "where",
                                                 "clip",
                                                 "sign",
                                                 "divide",
                                                 "equal"};
const std::vector<std::string> kGraphBool = {"logical_and", "logical_or",  "logical_xor", "logical_not", "where",
                                             "equal",       "bitwise_and", "add",         "multiply"};
const std::vector<std::string> kGraphMath = {"exp",   "log", "sin",   "cos",   "tanh",
                                             "atan2", "pow", "expm1", "log1p", "atan"};

struct GraphBuild {
  json c;
  bool exact = true;
};

// Nodes are built with xp as they are chosen (to know each node's dtype and keep the ones xp takes).
GraphBuild random_graph(Rng& r, int nodes, bool with_math) {
  GraphBuild g;
  const std::vector<DType> dts = {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int32,
                                  DType::int8,    DType::uint16,  DType::int64,   DType::bool_,    DType::uint8};
  const Shape res = random_shape(r, 3, 5);
  json inputs = json::array();
  const int nin = static_cast<int>(r.range(2, 4));
  for (int i = 0; i < nin; ++i) {
    const DType d = r.pick(dts);
    const Shape sh = broadcastable(res, r);
    inputs.push_back(r.chance(0.4) ? strided_of_shape(d, sh, Prof::small, r) : rand_arr(d, sh, Prof::small, r));
  }
  std::deque<Array> vals;  // inputs, then nodes
  for (const auto& in : inputs) vals.push_back(make_operand_array(in));
  json nodes_j = json::array();
  std::vector<Array> node_vals;
  auto pick_arg = [&]() -> std::pair<json, const Array*> {
    const std::size_t nn = node_vals.size();
    if (nn > 0 && r.chance(0.7)) {
      const std::size_t k =
          nn - 1 - static_cast<std::size_t>(r.range(0, std::min<std::int64_t>(static_cast<std::int64_t>(nn) - 1, 3)));
      return {json{{"node", k}}, &node_vals[k]};
    }
    const auto k = static_cast<std::size_t>(r.range(0, nin - 1));
    return {json{{"input", k}}, &vals[k]};
  };
  int attempts = 0;
  while (static_cast<int>(node_vals.size()) < nodes && attempts++ < nodes * 20) {
    auto [j0, a0] = pick_arg();
    const DType d0 = a0->dtype();
    std::string fn;
    if (with_math && is_float(d0) && r.chance(0.3)) {
      fn = r.pick(kGraphMath);
    } else {
      fn = r.pick(d0 == DType::bool_ ? kGraphBool : is_float(d0) ? kGraphExactFloat : kGraphExactInt);
    }
    const int arity = fn == "clip" || fn == "where" || fn == "fma" ? 3 : unary_fns().count(fn) ? 1 : 2;
    json args = json::array({j0});
    std::vector<const Array*> arrs = {a0};
    std::vector<xp::Scalar> scs;
    for (int k = 1; k < arity; ++k) {
      if (r.chance(0.25)) {
        json sc = is_float(d0)         ? s_float(static_cast<double>(r.range(-8, 8)) / 4)
                  : d0 == DType::bool_ ? s_bool(r.chance(0.5))
                                       : s_int(r.range(0, 3));
        args.push_back(sc);
        arrs.push_back(nullptr);
      } else {
        auto [jk, ak] = pick_arg();
        args.push_back(jk);
        arrs.push_back(ak);
      }
    }
    if (fn == "where") {  // the condition: a comparison node or a bool input, if there is one
      std::swap(args[0], args[1]);
      std::swap(arrs[0], arrs[1]);
      if (arrs[0] && arrs[0]->dtype() != DType::bool_) continue;
    }
    std::vector<Operand> ops;
    for (std::size_t k = 0; k < args.size(); ++k) {
      if (arrs[k]) {
        ops.emplace_back(*arrs[k]);
      } else {
        ops.emplace_back(make_scalar(args[k]));
      }
    }
    try {
      Array v = call_fn(fn, "fn", ops, {});
      if (count(shape_of(v)) > 4096) continue;
      node_vals.push_back(v);
      nodes_j.push_back({{"fn", fn}, {"args", args}});
      if (kTranscendental.count(fn)) g.exact = false;
    } catch (const std::exception&) {
      continue;
    }
  }
  json outputs = json::array({node_vals.size() - 1});
  if (node_vals.size() > 2) outputs.push_back(r.range(0, static_cast<std::int64_t>(node_vals.size()) - 2));
  json mutations = json::array();
  if (r.chance(0.5)) {
    const auto k = r.range(0, nin - 1);
    const json& in = inputs[static_cast<std::size_t>(k)];
    const DType d = dtype_named(in["dtype"].get<std::string>());
    json val = is_float(d) ? s_float(7.25) : d == DType::bool_ ? s_bool(true) : s_int(5);
    const json views = r.chance(0.5) ? json::array() : json::array({json{{"flip", nullptr}}});
    mutations.push_back({{"input", k}, {"views", views}, {"value", val}});
  }
  g.c = {{"kind", "graph"}, {"inputs", inputs}, {"nodes", nodes_j}, {"outputs", outputs}, {"mutations", mutations}};
  return g;
}

void build_graphs(Suite& s) {
  Rng r{303};
  for (int i = 0; i < 150; ++i) {
    GraphBuild g = random_graph(r, static_cast<int>(r.range(2, 16)), i % 3 == 0);
    g.c["exact"] = g.exact;
    s.add("graph", g.c);
  }
  // Past the fusion cap: a chain of 150 operations.
  for (DType d : {DType::float32, DType::int32, DType::float16}) {
    json nodes = json::array();
    json prev = json{{"input", 0}};
    for (int i = 0; i < 150; ++i) {
      const json sc = is_float(d) ? s_float(i % 2 ? 1.03125 : 0.5) : s_int(i % 2 ? 3 : 1);
      nodes.push_back({{"fn", i % 2 ? "multiply" : "add"}, {"args", {prev, i % 5 == 4 ? json{{"input", 1}} : sc}}});
      prev = json{{"node", i}};
    }
    json inputs = {rand_arr(d, {3, 70}, Prof::small, r), rand_arr(d, {70}, Prof::small, r)};
    s.add("graph", {{"kind", "graph"},
                    {"inputs", inputs},
                    {"nodes", nodes},
                    {"outputs", {149, 70}},
                    {"mutations", json::array({json{{"input", 0}, {"views", json::array()}, {"value", s_int(1)}}})},
                    {"exact", true}});
  }
}

// ---- creation, astype, reductions, linear algebra, repr, .npy ----

json create(const std::string& fn, json extra) {
  extra["kind"] = "create";
  extra["fn"] = fn;
  return extra;
}

void build_creation(Suite& s) {
  Rng r{404};
  for (DType d : kAll) {
    for (const Shape& sh : {Shape{}, Shape{0}, Shape{3}, Shape{2, 3, 4}}) {
      s.add("create", create("zeros", {{"shape", sh}, {"dtype", dname(d)}}));
      s.add("create", create("ones", {{"shape", sh}, {"dtype", dname(d)}}));
      s.add("create", create("empty", {{"shape", sh}, {"dtype", dname(d)}}));
    }
    json x = strided_of_shape(d, {3, 4}, Prof::general, r);
    for (const json& dt : {json(nullptr), json("float32"), json("int8")}) {
      s.add("create", create("zeros_like", {{"x", x}, {"dtype", dt}}));
      s.add("create", create("ones_like", {{"x", x}, {"dtype", dt}}));
      s.add("create", create("empty_like", {{"x", x}, {"dtype", dt}}));
      s.add("create", create("full_like", {{"x", x}, {"value", s_int(7)}, {"dtype", dt}}));
      s.add("create", create("full_like", {{"x", x}, {"value", s_float(2.75)}, {"dtype", dt}}));
    }
    s.add("create", create("full", {{"shape", {2, 3}}, {"value", s_int(1)}, {"dtype", dname(d)}}));
    s.add("create", create("full", {{"shape", {3}}, {"value", s_float(0.1)}, {"dtype", dname(d)}}));
    s.add("create", create("copy", {{"x", strided_of_shape(d, {2, 3}, Prof::general, r)}}));
    s.add("create", create("asarray", {{"x", rand_arr(d, {2, 3, 2}, Prof::general, r)}}));
  }
  for (const auto& [v, dt] : std::vector<std::pair<json, json>>{
           {s_int(7), nullptr},
           {s_float(2.5), nullptr},
           {s_bool(true), nullptr},
           {s_uint(~0ull), nullptr},
           {s_int(255), "uint8"},
           {s_int(300), "uint8"},
           {s_int(-1), "uint32"},
           {s_int(-129), "int8"},
           {s_uint(~0ull), "uint64"},
           {s_float(NAN), "float16"},
           {s_float(1e6), "float16"},
           {s_float(0.1), "bfloat16"},
           {s_float(1 + 0x1p-11 + 0x1p-40), "float16"},
           {s_float(1.9), "int32"},
           {s_float(-1.9), "int8"},
           {s_bool(true), "float32"},
           {s_int(3), "bool"},
       }) {
    s.add("create", create("full", {{"shape", {2, 2}}, {"value", v}, {"dtype", dt}}));
  }
  s.add("create", create("full", {{"shape", Shape{}}, {"value", s_int(3)}, {"dtype", nullptr}}));
  // arange. NumPy fills a float range as start + i * delta, delta = (start + step) - start, in the
  // dtype.
  struct Ar {
    json a, b, c, dt;
  };
  const std::vector<Ar> aranges = {
      {s_int(0), s_int(10), s_int(1), nullptr},
      {s_int(10), s_int(0), s_int(-1), nullptr},
      {s_int(10), s_int(0), s_int(-3), nullptr},
      {s_int(0), s_int(10), s_int(3), nullptr},
      {s_int(-5), s_int(5), s_int(2), nullptr},
      {s_int(5), s_int(5), s_int(1), nullptr},
      {s_int(5), s_int(0), s_int(1), nullptr},
      {s_float(0), s_float(1), s_float(0.1), nullptr},
      {s_float(0.1), s_float(1), s_float(0.3), nullptr},
      {s_float(1), s_float(0), s_float(-0.1), nullptr},
      {s_float(0), s_float(5), s_float(0.5), "float32"},
      {s_float(-2.5), s_float(2.5), s_float(0.7), "float32"},
      {s_int(0), s_int(10), s_int(1), "float16"},
      {s_int(0), s_int(10), s_int(2), "uint8"},
      {s_int(10), s_int(-10), s_int(-3), "int8"},
      {s_float(0), s_float(1e-3), s_float(1e-4), nullptr},
      {s_int(1), s_int(2), s_float(1.0 / 3), nullptr},
      {s_int(0), s_float(5.5), s_int(1), nullptr},
      {s_float(0.3), s_float(7.1), s_float(0.7), nullptr},
      {s_float(-1), s_float(1), s_float(0.25), "bfloat16"},
      {s_int(0), s_int(100), s_int(7), "int32"},
      {s_int(3), s_int(40), s_int(5), "float64"},
      {s_int(0), s_int(1), s_float(0.1), "float32"},
      {s_float(1e16), s_float(1e16 + 10), s_float(1), nullptr},
  };
  for (const auto& a : aranges)
    s.add("create", create("arange", {{"start", a.a}, {"stop", a.b}, {"step", a.c}, {"dtype", a.dt}}));
  for (const json& stop : {s_int(7), s_float(2.5), s_int(0), s_int(-3)})
    s.add("create", create("arange", {{"stop", stop}}));
  // linspace (to an integer dtype NumPy 2 rounds toward -inf).
  struct Ls {
    double a, b;
    int n;
    bool ep;
    const char* dt;
  };
  for (const Ls& l : std::vector<Ls>{{0, 1, 5, true, "float64"},
                                     {0, 1, 5, false, "float64"},
                                     {0, 1, 0, true, "float64"},
                                     {0, 1, 1, true, "float64"},
                                     {0, 1, 1, false, "float64"},
                                     {2, -3, 7, true, "float64"},
                                     {0, 1e-3, 11, true, "float64"},
                                     {-1, 1, 50, true, "float32"},
                                     {-1, 1, 50, false, "float32"},
                                     {0, 10, 7, true, "int64"},
                                     {-3, 10, 6, false, "int32"},
                                     {1, 1, 4, true, "float64"},
                                     {0, 1, 3, true, "float16"},
                                     {0.1, 0.7, 13, true, "float64"},
                                     {0.1, 0.7, 13, false, "float64"},
                                     {1e300, -1e300, 9, true, "float64"},
                                     {5, 5.5, 2, true, "bfloat16"}})
    s.add("create",
          create("linspace", {{"start", l.a}, {"stop", l.b}, {"num", l.n}, {"endpoint", l.ep}, {"dtype", l.dt}}));
  // eye.
  for (const auto& e : std::vector<json>{
           {{"n", 3}, {"k", 0}, {"dtype", "float64"}},
           {{"n", 3}, {"m", 4}, {"k", 0}, {"dtype", "float64"}},
           {{"n", 4}, {"m", 3}, {"k", 0}, {"dtype", "float32"}},
           {{"n", 3}, {"k", 1}, {"dtype", "int32"}},
           {{"n", 3}, {"m", 4}, {"k", -2}, {"dtype", "float64"}},
           {{"n", 3}, {"m", 4}, {"k", 5}, {"dtype", "float64"}},
           {{"n", 0}, {"k", 0}, {"dtype", "float64"}},
           {{"n", 1}, {"k", 0}, {"dtype", "uint8"}},
           {{"n", 2}, {"m", 5}, {"k", -1}, {"dtype", "bool"}},
           {{"n", 4}, {"k", -4}, {"dtype", "float16"}},
           {{"n", 5}, {"m", 2}, {"k", -3}, {"dtype", "bfloat16"}},
       })
    s.add("create", create("eye", e));
  // concat and stack.
  for (int i = 0; i < 30; ++i) {
    const DType d1 = i < 10 ? DType::float32 : r.pick(kAll), d2 = i < 10 ? DType::float32 : r.pick(kAll);
    const int nd = static_cast<int>(r.range(1, 3));
    const int axis = static_cast<int>(r.range(-nd, nd - 1));
    Shape s1 = random_shape(r, nd, 4);
    s1.resize(static_cast<std::size_t>(nd), 2);
    Shape s2 = s1, s3 = s1;
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + nd : axis);
    s2[ax] = r.range(0, 3);
    s3[ax] = r.range(1, 2);
    if (i % 10 == 9) s3[(ax + 1) % static_cast<std::size_t>(nd)] += nd > 1 ? 1 : 0;  // mismatch
    json arrays = {rand_arr(d1, s1, Prof::general, r), strided_of_shape(d2, s2, Prof::general, r),
                   rand_arr(d1, s3, Prof::general, r)};
    s.add("create", create("concat", {{"arrays", arrays}, {"axis", axis}}));
    const int sax = static_cast<int>(r.range(-nd - 1, nd));
    json same = {rand_arr(d1, s1, Prof::general, r), strided_of_shape(d2, s1, Prof::general, r)};
    if (i % 10 == 8) same.push_back(rand_arr(d1, s2, Prof::general, r));
    s.add("create", create("stack", {{"arrays", same}, {"axis", sax}}));
  }
  s.add("create", create("concat", {{"arrays", {rand_arr(DType::int8, {}, Prof::general, r)}}, {"axis", 0}}));
  // take.
  for (DType d : kAll) {
    json a = rand_arr(d, {4, 5}, Prof::general, r);
    for (const json& axis : {json(nullptr), json(0), json(1), json(-1)}) {
      const std::int64_t n = axis.is_null() ? 20 : axis == 0 ? 4 : 5;
      json idx = arr_of_bits(DType::int64, {0, static_cast<std::uint64_t>(-1), static_cast<std::uint64_t>(n - 1),
                                            static_cast<std::uint64_t>(-n), 1});
      s.add("create", create("take", {{"x", a}, {"indices", idx}, {"axis", axis}}));
    }
  }
  json a = rand_arr(DType::float32, {4, 5}, Prof::general, r);
  s.add("create",
        create("take", {{"x", a}, {"indices", arr_of_bits(DType::int32, {1, 0, 4, 2}, {2, 2})}, {"axis", 1}}));
  s.add("create", create("take", {{"x", a}, {"indices", arr_of_bits(DType::uint8, {3, 3, 0})}, {"axis", 0}}));
  s.add("create", create("take", {{"x", a}, {"indices", arr_of_bits(DType::int64, {20})}, {"axis", nullptr}}));
  s.add("create",
        create("take",
               {{"x", a}, {"indices", arr_of_bits(DType::int64, {static_cast<std::uint64_t>(-6)})}, {"axis", 1}}));
  s.add("create", create("take", {{"x", a}, {"indices", arr_of_bits(DType::int64, {})}, {"axis", 0}}));
  s.add("create", create("take", {{"x", strided_of_shape(DType::int16, {4, 5}, Prof::general, r)},
                                  {"indices", arr_of_bits(DType::int64, {4, 0, -1ull})},
                                  {"axis", 1}}));
  s.add("create", create("take", {{"x", a}, {"indices", arr_of_doubles(DType::float32, {1, 2})}, {"axis", 0}}));
  // result_type of arrays and scalars (NumPy's answers without looking at the value: int8 with 300 is
  // int8; the operation itself is what fails).
  for (DType d : kAll) {
    for (const json& sc : {s_int(1), s_float(1.0), s_bool(true), s_int(300)}) {
      s.add("create", create("result_type", {{"a", rand_arr(d, {1}, Prof::small, r)}, {"b", sc}}));
    }
  }
}

void build_astype(Suite& s) {
  Rng r{505};
  for (DType from : kAll) {
    for (DType to : kAll) {
      std::vector<std::uint64_t> v;
      if (is_float(from) && (is_int(to))) {
        // In-range values only: NumPy leaves the others to the C compiler.
        const bool sg = xp::kind(to) == xp::DTypeKind::signed_integer;
        const double lim = std::ldexp(1.0, 8 * static_cast<int>(xp::itemsize(to)) - (sg ? 1 : 0));
        const double lo = sg ? -lim : -1;
        for (double x : {0.0, -0.0, 0.5, -0.9, 2.7, -2.7, 1.0, 100.9, -100.9, 127.5, 255.9, lim / 2, -lim / 2,
                         lim * 0.75, lim - 1, lim - 0.5, 65504.0, 1e9, 3e19})
          v.push_back(bits_of_double(from, x));
        for (int i = 0; i < 30; ++i) v.push_back(bits_of_double(from, lo + (lim - lo) * r.unit()));
        std::vector<std::uint64_t> keep;
        for (auto b : v) {
          const double x = std::trunc(double_of_bits(from, b));
          if (std::isfinite(x) && x > lo && x < lim) keep.push_back(b);
        }
        v = keep;
      } else {
        v = specials(from);
        for (int i = 0; i < 40; ++i) v.push_back(one_value(from, Prof::general, r));
      }
      json x = arr_of_bits(from, v);
      s.add("astype", create("astype", {{"x", x}, {"dtype", dname(to)}}));
    }
  }
  // Conversions that must round once: 64-bit integers to float32 / 16 bits, float64 to 16 bits.
  const std::vector<std::uint64_t> big = {(1ull << 60) + (1ull << 36) + 1,
                                          (1ull << 60) + (1ull << 52) + 1,
                                          (1ull << 53) + 1,
                                          (1ull << 53) + 3,
                                          (1ull << 24) + 1,
                                          65519,
                                          65520,
                                          ~0ull,
                                          ~0ull - 1000,
                                          static_cast<std::uint64_t>(-((1ll << 60) + (1ll << 36) + 1))};
  for (DType from : {DType::int64, DType::uint64})
    for (DType to : {DType::float16, DType::bfloat16, DType::float32, DType::float64})
      s.add("astype", create("astype", {{"x", arr_of_bits(from, big)}, {"dtype", dname(to)}}));
  s.add("astype",
        create("astype", {{"x", arr_of_doubles(DType::float64, {1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8 + 0x1p-40, 0x1p-25,
                                                                0x1p-25 + 0x1p-60, 65519.99, 1e300})},
                          {"dtype", "float16"}}));
  s.add("astype", create("astype", {{"x", arr_of_doubles(DType::float64, {1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8 + 0x1p-40,
                                                                          3.3961e38, 3.3963e38, 1e-40})},
                                    {"dtype", "bfloat16"}}));
  s.add("astype",
        create("astype", {{"x", strided_of_shape(DType::float32, {3, 4}, Prof::general, r)}, {"dtype", "float16"}}));
  s.add("astype",
        create("astype", {{"x", strided_of_shape(DType::int16, {3, 4}, Prof::general, r)}, {"dtype", "uint8"}}));
}

void build_reductions(Suite& s) {
  Rng r{606};
  const std::vector<std::string> fns = {
      "sum",    "prod",           "mean",           "var", "std", "min", "max", "any", "all", "argmin",
      "argmax", "cumulative_sum", "cumulative_prod"};
  for (DType d : kAll) {
    for (const auto& fn : fns) {
      for (int k = 0; k < 7; ++k) {
        const Prof p = fn == "prod" || fn == "cumulative_prod" ? Prof::near_one
                       : fn == "argmin" || fn == "argmax" || fn == "min" || fn == "max"
                           ? (k % 2 ? Prof::ties : Prof::general)
                       : fn == "any" || fn == "all" ? (k % 2 ? Prof::ties : Prof::general)
                                                    : Prof::reduce;
        json x = k % 3 == 2 ? strided_of_shape(d, {4, 5, 6}, p, r) : rand_arr(d, {4, 5, 6}, p, r);
        if (k == 5 && is_float(d)) {  // NaN propagation: a NaN in some rows
          auto b = from_hex(x["hex"].get<std::string>());
          const std::uint64_t nan = bits_of_double(d, NAN);
          for (std::size_t i : {3u, 50u, 51u}) std::memcpy(b.data() + i * xp::itemsize(d), &nan, xp::itemsize(d));
          x["hex"] = to_hex(b);
        }
        json c = {{"kind", "reduce"}, {"fn", fn}, {"x", x}, {"keepdims", k % 2 == 1}};
        const bool scan = fn == "cumulative_sum" || fn == "cumulative_prod";
        if (fn == "argmin" || fn == "argmax" || scan) {
          const std::vector<json> ax = {nullptr, 0, 1, -1, 2, -2, nullptr};
          c["axes"] = ax[static_cast<std::size_t>(k)];
          if (scan) {
            c.erase("keepdims");
            if (c["axes"].is_null()) c["x"]["views"].push_back(json{{"reshape", {-1}}});
            c["include_initial"] = k % 2 == 1;
          }
        } else {
          const std::vector<json> ax = {nullptr, 0, -1, json::array({0, 2}), json::array({1}), json::array({-1, 0}), 1};
          c["axes"] = ax[static_cast<std::size_t>(k)];
        }
        // Fractional corrections too (the Array API allows any real one), each below 1 or 1 itself.
        static const double kCorrection[] = {0, 1, 0.5, 1, 0.75, 0, 0.25};
        if (fn == "var" || fn == "std") c["correction"] = kCorrection[k];
        s.add("reduce", c);
      }
    }
    // The dtype argument, narrower than the default too (NumPy then accumulates in it, wrapping).
    for (const char* dt : {"int8", "float32", "float64", "uint64", "int64"}) {
      if (is_float(d) && std::string(dt) == "uint64") continue;  // negative floats to uint64: C's business
      s.add(
          "reduce",
          {{"kind", "reduce"}, {"fn", "sum"}, {"x", rand_arr(d, {3, 7}, Prof::reduce, r)}, {"axes", 1}, {"dtype", dt}});
      s.add("reduce", {{"kind", "reduce"},
                       {"fn", "prod"},
                       {"x", rand_arr(d, {3, 7}, Prof::near_one, r)},
                       {"axes", 0},
                       {"dtype", dt}});
      s.add("reduce", {{"kind", "reduce"},
                       {"fn", "cumulative_sum"},
                       {"x", rand_arr(d, {3, 7}, Prof::reduce, r)},
                       {"axes", 1},
                       {"dtype", dt}});
      s.add("reduce", {{"kind", "reduce"},
                       {"fn", "cumulative_prod"},
                       {"x", rand_arr(d, {3, 7}, Prof::near_one, r)},
                       {"axes", 1},
                       {"dtype", dt},
                       {"include_initial", true}});
    }
    // Running sums in the other integer widths (written in them directly, wrapping), along either axis.
    for (const char* dt : {"uint8", "int16", "uint16", "int32", "uint32"}) {
      if (is_float(d) && dt[0] == 'u') continue;
      s.add("reduce", {{"kind", "reduce"},
                       {"fn", "cumulative_sum"},
                       {"x", rand_arr(d, {40, 6}, is_float(d) ? Prof::reduce : Prof::general, r)},
                       {"axes", dt[0] == 'u' ? 0 : 1},
                       {"dtype", dt},
                       {"include_initial", dt[1] == 'n'}});
    }
    // Empty arrays.
    for (const auto& fn : fns) {
      json c = {{"kind", "reduce"}, {"fn", fn}, {"x", rand_arr(d, {0, 3}, Prof::general, r)}, {"axes", 0}};
      if (fn == "var" || fn == "std") c["correction"] = 0;
      s.add("reduce", c);
      json c2 = c;
      c2["axes"] = nullptr;
      if (fn == "cumulative_sum" || fn == "cumulative_prod") c2["x"]["views"].push_back(json{{"reshape", {-1}}});
      s.add("reduce", c2);
    }
    // A long sum (blocked or pairwise summation) and a 1-D one.
    s.add("reduce",
          {{"kind", "reduce"}, {"fn", "sum"}, {"x", rand_arr(d, {3000}, Prof::reduce, r)}, {"axes", nullptr}});
    s.add("reduce", {{"kind", "reduce"}, {"fn", "mean"}, {"x", rand_arr(d, {257, 3}, Prof::reduce, r)}, {"axes", 0}});
  }
}

void build_linalg(Suite& s) {
  Rng r{707};
  struct Mm {
    Shape a, b;
  };
  const std::vector<Mm> shapes = {{{5}, {5}},
                                  {{5}, {5, 3}},
                                  {{4, 5}, {5}},
                                  {{4, 5}, {5, 3}},
                                  {{2, 4, 5}, {5, 3}},
                                  {{2, 1, 4, 5}, {3, 5, 2}},
                                  {{1, 4, 5}, {2, 5, 3}},
                                  {{0, 5}, {5, 3}},
                                  {{4, 0}, {0, 3}},
                                  {{33, 65}, {65, 17}},
                                  {{4, 5}, {4, 5}},
                                  {{3}, {2, 3, 4}}};
  const std::vector<std::pair<DType, DType>> dts = {
      {DType::float32, DType::float32}, {DType::float64, DType::float64}, {DType::int32, DType::int32},
      {DType::int64, DType::int64},     {DType::int8, DType::int8},       {DType::uint8, DType::uint8},
      {DType::bool_, DType::bool_},     {DType::float16, DType::float16}, {DType::bfloat16, DType::bfloat16},
      {DType::int8, DType::float32},    {DType::int32, DType::float64},   {DType::float16, DType::float32},
      {DType::uint8, DType::int8},      {DType::uint64, DType::uint64}};
  for (const auto& [da, db] : dts) {
    const Prof pa = is_float(da) ? Prof::reduce : Prof::general, pb = is_float(db) ? Prof::reduce : Prof::general;
    for (const auto& m : shapes) {
      json a = rand_arr(da, m.a, pa, r), b = rand_arr(db, m.b, pb, r);
      s.add("linalg", {{"kind", "linalg"}, {"fn", "matmul"}, {"a", a}, {"b", b}});
    }
    if (is_float(db)) {  // NaN and infinity propagate
      std::vector<std::uint64_t> v(15, bits_of_double(db, 1.5));
      v[1] = bits_of_double(db, NAN);
      v[5] = bits_of_double(db, INFINITY);
      v[9] = bits_of_double(db, -INFINITY);
      s.add("linalg", {{"kind", "linalg"},
                       {"fn", "matmul"},
                       {"a", rand_arr(da, {4, 5}, pa, r)},
                       {"b", arr_of_bits(db, v, {5, 3})}});
    }
    // Transposed and strided operands.
    s.add("linalg", {{"kind", "linalg"},
                     {"fn", "matmul"},
                     {"a", strided_of_shape(da, {2, 6, 7}, Prof::small, r)},
                     {"b", strided_of_shape(db, {7, 4}, Prof::small, r)}});
    json at = rand_arr(da, {9, 6}, Prof::small, r, json::array({json{{"mT", 1}}}));
    s.add("linalg",
          {{"kind", "linalg"},
           {"fn", "matmul"},
           {"a", at},
           {"b", rand_arr(db, {9, 2}, Prof::small, r,
                          json::array({json{{"slice", json::array({json::array({nullptr, nullptr, -1})})}}}))}});
    // vecdot.
    struct Vd {
      Shape a, b;
      int axis;
    };
    for (const Vd& v : std::vector<Vd>{{{5}, {5}, -1},
                                       {{3, 5}, {5}, -1},
                                       {{2, 3, 5}, {3, 5}, -1},
                                       {{5, 3}, {5, 3}, 0},
                                       {{2, 5, 3}, {5, 1}, -2},
                                       {{4, 3}, {4, 2}, -1}})
      s.add("linalg", {{"kind", "linalg"},
                       {"fn", "vecdot"},
                       {"a", rand_arr(da, v.a, is_float(da) ? Prof::reduce : Prof::general, r)},
                       {"b", strided_of_shape(db, v.b, is_float(db) ? Prof::reduce : Prof::general, r)},
                       {"axis", v.axis}});
  }
}

void build_repr(Suite& s) {
  Rng r{808};
  const std::vector<json> xs = {
      arr_of_doubles(DType::float64, {1, 2.5, -3}),
      arr_of_doubles(DType::float32, {1, 2, 3, 4, 5, 6}, {2, 3}),
      arr_of_doubles(DType::int8, {-128, 0, 127}),
      arr_of_bits(DType::uint64, {0, ~0ull}),
      arr_of_doubles(DType::bool_, {1, 0, 1}),
      arr_of_doubles(DType::float16, {0.1, 1e4, -2.5, 65504}),
      arr_of_doubles(DType::float16, {0.5, 1.0, 1.5}, {3, 1}),
      arr_of_doubles(DType::int64, {1, 2, 3}),
      arr_of_doubles(DType::int32, {1, 2, 3}),
      arr_of_doubles(DType::float64, {}, {0}),
      arr_of_doubles(DType::int16, {}, {2, 0}),
      arr_of_doubles(DType::float64, {3}, Shape{}),
      arr_of_doubles(DType::float64, {NAN, INFINITY, -INFINITY, -0.0, 0.0}),
      arr_of_doubles(DType::float64, {1e-10, 1, 1e8}),
      arr_of_doubles(DType::float32, {1e20f, 1e-3f}),
      arr_of_doubles(DType::float64, {0.1, 0.25, 1.0 / 3}),
      arr_of_doubles(DType::uint8, {255, 0, 17, 3, 9, 200}, {2, 3}),
  };
  for (const auto& x : xs) s.add("repr", {{"kind", "repr"}, {"x", x}});
  // Views: a strided transposed block and a reversed float16 row.
  json v = rand_arr(DType::int32, {4, 6}, Prof::small, r);
  v["views"] =
      json::array({json{{"slice", json::array({json::array({nullptr, nullptr, 2}), json::array({1, nullptr, 2})})}},
                   json{{"T", 1}}});
  s.add("repr", {{"kind", "repr"}, {"x", v}});
  json h = rand_arr(DType::float16, {2, 5}, Prof::small, r);
  h["views"] = json::array({json{{"index", 1}}, json{{"flip", nullptr}}});
  s.add("repr", {{"kind", "repr"}, {"x", h}});
  s.add("repr", {{"kind", "repr"}, {"x", rand_arr(DType::float64, {3, 4, 5}, Prof::small, r)}});
  std::vector<double> many(2000);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<double>(i) * 0.5;
  s.add("repr", {{"kind", "repr"}, {"x", arr_of_doubles(DType::float64, many)}});
  s.add("repr", {{"kind", "repr"}, {"x", arr_of_doubles(DType::int64, many, {40, 50})}});
}

void build_npy(Suite& s) {
  Rng r{909};
  int file = 0;
  for (DType d : kAll) {
    std::vector<json> xs = {rand_arr(d, {3, 4}, Prof::general, r), strided_of_shape(d, {3, 4, 2}, Prof::general, r),
                            rand_arr(d, {}, Prof::general, r), rand_arr(d, {0, 3}, Prof::general, r)};
    for (const auto& x : xs) {
      // xp writes, NumPy reads.
      const std::string name = "xp_" + std::to_string(file++) + ".npy";
      try {
        xp::save(s.dir / name, make_operand_array(x));
      } catch (const std::exception& e) {
        s.add("npy", {{"kind", "npy_failed"}, {"x", x}, {"error", e.what()}});
        continue;
      }
      s.add("npy", {{"kind", "npy_from_xp"}, {"x", x}, {"file", name}});
    }
    if (d == DType::bfloat16) continue;  // np.save writes ml_dtypes' bfloat16 as raw void '<V2'
    // NumPy writes (C order, Fortran order, big-endian), xp reads.
    for (int k = 0; k < 4; ++k) {
      const std::string name = "np_" + std::to_string(file++) + ".npy";
      json c = {{"kind", "npy_to_xp"}, {"file", name}};
      c["x"] = k == 0   ? rand_arr(d, {3, 4}, Prof::general, r)
               : k == 3 ? rand_arr(d, {}, Prof::general, r)
                        : rand_arr(d, {3, 4, 2}, Prof::general, r);
      c["fortran"] = k >= 1 && k <= 2;
      c["big_endian"] = k == 2 && xp::itemsize(d) > 1;
      s.add("npy", c);
    }
  }
}

void build_all(Suite& s) {
  build_elementwise(s);
  build_views(s);
  build_graphs(s);
  build_creation(s);
  build_astype(s);
  build_reductions(s);
  build_linalg(s);
  build_repr(s);
  build_npy(s);
}

// ==== checks ========================================================================================

// One elementwise case with xp: the result (and the out= base afterwards), compared with NumPy's.
std::string check_ew(const json& c, const json& ans) {
  const std::string fn = c["fn"].get<std::string>();
  const std::string form = c.value("form", "fn");
  auto run = [&](Fetched* result, Fetched* base) {
    std::optional<Array> out_base, out;
    if (c.contains("out")) {
      out_base = make_base(c["out"]);
      out = apply_views(*out_base, c["out"]["views"]);
    }
    Operands o;
    for (const auto& a : c["args"]) o.add(a, out_base ? &*out_base : nullptr);
    const Array r = out ? call_fn(fn, form, o.ops, xp::Out(*out)) : call_fn(fn, form, o.ops, {});
    if (result) *result = fetch(r);
    if (base && out_base) *base = fetch(*out_base);
  };
  if (ans.contains("error")) return check_throw(ans["error"].get<std::string>(), [&] { run(nullptr, nullptr); });
  return no_throw([&] {
    Fetched res, base;
    run(&res, &base);
    const DType rd = dtype_named(ans["result"]["dtype"].get<std::string>());
    Check chk;
    const json* want = &ans["result"];
    if (ans.contains("approx")) {  // logaddexp: a reference and an absolute tolerance per element
      chk.approx = &ans["approx"];
    } else if (ans.contains("ref")) {  // transcendental, float32 or float64: the correctly rounded result
      want = &ans["ref"];
      chk.ulp = ulp_bound(fn, rd);
    } else if ((kTranscendental.count(fn) || fn == "fma") && xp::itemsize(rd) == 2) {
      chk.ulp = 1;  // 16-bit results: computed in float32, rounded once more
    }
    if (ans.contains("base_approx")) {  // out= of a rounded function: checked through the base
      Check bchk;
      bchk.approx = &ans["base_approx"];
      const std::string e = compare(base, ans["base"], bchk);
      return e.empty() ? e : "out array afterwards: " + e;
    }
    std::string e = compare(res, *want, chk);
    if (!e.empty()) return "result: " + e;
    if (ans.contains("base")) {
      e = compare(base, ans["base"]);
      if (!e.empty()) return "out array afterwards: " + e;
    }
    return std::string();
  });
}

// Runs the cases of `groups`, or only every `parts`-th of them from `part` on: on a GPU every process
// compiles the kernels it meets, and a group of thousands of fused mixed-dtype kernels runs for
// minutes in one process, so it is split into tests that ctest runs side by side.
void run_ew_groups(const std::vector<std::string>& groups, bool lazy, std::size_t part = 0, std::size_t parts = 1) {
  XP_SUITE(s);
  const bool before = xp::lazy();
  xp::set_lazy(lazy);
  {
    Failures f(json(groups).dump() + (lazy ? " (lazy)" : " (eager)") +
               (parts > 1 ? " part " + std::to_string(part + 1) + " of " + std::to_string(parts) : ""));
    for (const auto& g : groups) {
      const auto& ids = s.groups.at(g);
      for (std::size_t k = part; k < ids.size(); k += parts) {
        const json& c = s.cases[ids[k]];
        f.ran(s.answer(c));
        f.add(c, check_ew(c, s.answer(c)));
      }
    }
  }
  xp::set_lazy(before);
}

}  // namespace

// The same suite runs on a GPU as test_array_numpy_gpu (XP_DEVICE=cuda:0, label gpu): every array the
// cases make is on the default device, so every function runs there and is read back to compare.
class ArrayNumPy : public ::testing::Test {
 protected:
  void SetUp() override {
    if (on_gpu()) XP_REQUIRE_GPU();
  }
  static bool on_gpu() {
    const char* d = std::getenv("XP_DEVICE");
    return d != nullptr && std::string(d).rfind("cuda", 0) == 0;
  }
};

TEST_F(ArrayNumPy, ArraysAreMadeOnTheDeviceXpDeviceNames) {
  const Array a = xp::asarray(std::vector<float>{1, 2, 3});
  EXPECT_EQ(a.device(), on_gpu() ? xp::Device::cuda(0) : xp::Device::cpu());
  EXPECT_EQ((a + a).device(), a.device());
}

// Every function of every dtype over special values (all pairs of them for binary functions, by
// broadcasting a column against a row) and random values.
TEST_F(ArrayNumPy, ElementwiseEveryDtype) {
  run_ew_groups({"ew_same"}, true);
}

// Every binary function of every pair of dtypes: NumPy 2's result dtype and values. Eight tests of
// every eighth case each (see run_ew_groups).
#define XP_MIXED_PART(k)                                   \
  TEST_F(ArrayNumPy, ElementwiseMixedDtypesPart##k##of8) { \
    run_ew_groups({"ew_mixed"}, true, k - 1, 8);           \
  }
XP_MIXED_PART(1)
XP_MIXED_PART(2)
XP_MIXED_PART(3)
XP_MIXED_PART(4)
XP_MIXED_PART(5)
XP_MIXED_PART(6)
XP_MIXED_PART(7)
XP_MIXED_PART(8)
#undef XP_MIXED_PART

// C++ numbers on either side, weak as Python's numbers are in NumPy 2 (NEP 50), including values
// that do not fit the array's dtype: an error only where NumPy raises (an integer result), an
// answer where NumPy answers (true division, atan2, comparisons and logical functions compare or
// convert the value instead).
// In four parts, as the mixed dtypes: whole, on a GPU beside eleven other test programs compiling
// kernels, it ran past ctest's 280 s (34 s alone).
#define XP_SCALAR_PART(k)                                  \
  TEST_F(ArrayNumPy, ElementwiseWeakScalarsPart##k##of4) { \
    run_ew_groups({"ew_scalar"}, true, k - 1, 4);          \
  }
XP_SCALAR_PART(1)
XP_SCALAR_PART(2)
XP_SCALAR_PART(3)
XP_SCALAR_PART(4)
#undef XP_SCALAR_PART

TEST_F(ArrayNumPy, ElementwiseOperators) {
  run_ew_groups({"ew_op"}, true);
}

// Slices with steps (negative too), transposes, permutations, broadcasts as inputs.
TEST_F(ArrayNumPy, ElementwiseNonContiguous) {
  run_ew_groups({"ew_view"}, true);
}

// out= of the result's dtype, wider, narrower of the same kind, strided, overlapping an input,
// and of a kind NumPy's same_kind rule refuses.
TEST_F(ArrayNumPy, ElementwiseOut) {
  run_ew_groups({"ew_out"}, true);
}

// All of the above with XP_LAZY=0 semantics: the same answers.
TEST_F(ArrayNumPy, ElementwiseEager) {
  run_ew_groups({"ew_same", "ew_mixed", "ew_scalar", "ew_op", "ew_view", "ew_out"}, false);
}

TEST_F(ArrayNumPy, CompoundAssignment) {
  XP_SUITE(s);
  Failures f("compound assignment");
  for (std::size_t id : s.groups.at("iop")) {
    const json& c = s.cases[id];
    const json& ans = s.answer(c);
    f.ran(ans);
    auto run = [&](Fetched* base) {
      const Array b = make_base(c["target"]);
      Array t = apply_views(b, c["target"]["views"]);
      Operands o;
      o.add(c["other"], &b);
      inplace_ops().at(c["fn"].get<std::string>())(t, o.ops[0]);
      if (base) *base = fetch(b);
    };
    if (ans.contains("error")) {
      f.add(c, check_throw(ans["error"].get<std::string>(), [&] { run(nullptr); }));
    } else {
      f.add(c, no_throw([&] {
              Fetched b;
              run(&b);
              return compare(b, ans["base"]);
            }));
    }
  }
}

TEST_F(ArrayNumPy, RandomViews) {
  XP_SUITE(s);
  Failures f("view");
  for (std::size_t id : s.groups.at("view")) {
    const json& c = s.cases[id];
    const json& ans = s.answer(c);
    f.ran(ans);
    if (ans.contains("error")) {
      f.add(c, check_throw(ans["error"].get<std::string>(), [&] { fetch(make_operand_array(c["x"])); }));
    } else {
      f.add(c, no_throw([&] { return compare(fetch(make_operand_array(c["x"])), ans["result"]); }));
    }
  }
}

TEST_F(ArrayNumPy, RandomBroadcastPairs) {
  XP_SUITE(s);
  Failures f("broadcast");
  for (std::size_t id : s.groups.at("broadcast")) {
    const json& c = s.cases[id];
    const json& ans = s.answer(c);
    f.ran(ans);
    const Shape a = c["a"]["shape"].get<Shape>(), b = c["b"]["shape"].get<Shape>();
    if (ans.contains("error")) {
      f.add(c, check_throw(ans["error"].get<std::string>(), [&] { xp::broadcast_shapes(a, b); }));
      f.add(c, check_throw(ans["error"].get<std::string>(),
                           [&] { fetch(make_operand_array(c["a"]) + make_operand_array(c["b"])); }));
      continue;
    }
    f.add(c, no_throw([&]() -> std::string {
            const Shape got = xp::broadcast_shapes(a, b);
            if (got != ans["shape"].get<Shape>()) return "broadcast_shapes " + json(got).dump();
            return compare(fetch(make_operand_array(c["a"]) + make_operand_array(c["b"])), ans["result"]);
          }));
  }
}

namespace {

// A graph built with xp, evaluated (after the case's writes to its inputs): the outputs' and the
// inputs' bytes.
std::vector<Fetched> run_graph(const json& c, bool lazy) {
  const bool before = xp::lazy();
  xp::set_lazy(lazy);
  std::vector<Array> bases, inputs, nodes;
  for (const auto& in : c["inputs"]) {
    bases.push_back(make_base(in));
    inputs.push_back(apply_views(bases.back(), in["views"]));
  }
  for (const auto& n : c["nodes"]) {
    std::vector<Operand> ops;
    for (const auto& a : n["args"]) {
      if (a.contains("node")) {
        ops.emplace_back(nodes[a["node"].get<std::size_t>()]);
      } else if (a.contains("input")) {
        ops.emplace_back(inputs[a["input"].get<std::size_t>()]);
      } else {
        ops.emplace_back(make_scalar(a));
      }
    }
    nodes.push_back(call_fn(n["fn"].get<std::string>(), "fn", ops, {}));
  }
  for (const auto& m : c["mutations"]) {
    apply_views(bases[m["input"].get<std::size_t>()], m["views"]) = make_scalar(m["value"]);
  }
  std::vector<Array> outs;
  for (const auto& o : c["outputs"]) outs.push_back(nodes[o.get<std::size_t>()]);
  if (outs.size() == 2) {
    xp::eval({outs[0], outs[1]});
  }
  std::vector<Fetched> r;
  for (const auto& o : outs) r.push_back(fetch(o));
  for (const auto& b : bases) r.push_back(fetch(b));
  xp::set_lazy(before);
  return r;
}

}  // namespace

TEST_F(ArrayNumPy, RandomGraphsLazyEqualsEagerEqualsNumPy) {
  XP_SUITE(s);
  Failures f("graph");
  int compared_with_numpy = 0, compared_within_bound = 0, big = 0;
  for (std::size_t id : s.groups.at("graph")) {
    const json& c = s.cases[id];
    const json& ans = s.answer(c);
    f.ran(ans);
    if (c["nodes"].size() > static_cast<std::size_t>(xp::kMaxFusedOps)) ++big;
    f.add(c, no_throw([&]() -> std::string {
            const auto eager = run_graph(c, false);
            const auto lazy = run_graph(c, true);
            const std::size_t nout = c["outputs"].size();
            for (std::size_t i = 0; i < eager.size(); ++i) {
              const json as_json = {
                  {"dtype", dname(eager[i].dtype)}, {"shape", eager[i].shape}, {"hex", to_hex(eager[i].bytes)}};
              const std::string e = compare(lazy[i], as_json);
              if (!e.empty()) return (i < nout ? "output " : "input ") + std::to_string(i) + ", lazy vs eager: " + e;
            }
            if (ans.contains("error"))
              return "NumPy raises " + ans["error"].get<std::string>() + ": " + ans.value("message", "");
            for (std::size_t i = 0; i < nout; ++i) {
              const Check chk{c["exact"].get<bool>() ? 0.0 : 64.0};
              const std::string e = compare(lazy[i], ans["outputs"][i], chk);
              // Transcendental graphs: the dtype and shape must be NumPy's, values within a wide bound.
              if (!e.empty()) return "output " + std::to_string(i) + " vs NumPy: " + e;
            }
            for (std::size_t i = 0; i < c["inputs"].size(); ++i) {
              const std::string e = compare(lazy[nout + i], ans["inputs"][i]);
              if (!e.empty()) return "input " + std::to_string(i) + " after the writes vs NumPy: " + e;
            }
            ++(c["exact"].get<bool>() ? compared_with_numpy : compared_within_bound);
            return std::string();
          }));
  }
  EXPECT_GT(compared_with_numpy, 50);
  EXPECT_GT(compared_within_bound, 20) << "graphs with transcendental functions, within 64 ulp of NumPy";
  EXPECT_GE(big, 3);
}

namespace {

Array run_create(const json& c) {
  const std::string fn = c["fn"].get<std::string>();
  auto opt_dtype = [&]() -> std::optional<DType> {
    if (!c.contains("dtype") || c["dtype"].is_null()) return std::nullopt;
    return dtype_named(c["dtype"].get<std::string>());
  };
  if (fn == "zeros") return xp::zeros(c["shape"].get<Shape>(), *opt_dtype());
  if (fn == "ones") return xp::ones(c["shape"].get<Shape>(), *opt_dtype());
  if (fn == "empty") return xp::empty(c["shape"].get<Shape>(), *opt_dtype());
  if (fn == "full") return xp::full(c["shape"].get<Shape>(), make_scalar(c["value"]), opt_dtype());
  if (fn == "zeros_like") return xp::zeros_like(make_operand_array(c["x"]), opt_dtype());
  if (fn == "ones_like") return xp::ones_like(make_operand_array(c["x"]), opt_dtype());
  if (fn == "empty_like") return xp::empty_like(make_operand_array(c["x"]), opt_dtype());
  if (fn == "full_like") return xp::full_like(make_operand_array(c["x"]), make_scalar(c["value"]), opt_dtype());
  if (fn == "arange") {
    if (!c.contains("start")) return xp::arange(make_scalar(c["stop"]));
    return xp::arange(make_scalar(c["start"]), make_scalar(c["stop"]), make_scalar(c["step"]), opt_dtype());
  }
  if (fn == "linspace")
    return xp::linspace(c["start"].get<double>(), c["stop"].get<double>(), c["num"].get<std::int64_t>(),
                        c["endpoint"].get<bool>(), *opt_dtype());
  if (fn == "eye") {
    std::optional<std::int64_t> m;
    if (c.contains("m")) m = c["m"].get<std::int64_t>();
    return xp::eye(c["n"].get<std::int64_t>(), m, c["k"].get<std::int64_t>(), *opt_dtype());
  }
  if (fn == "asarray") {
    const auto bytes = from_hex(c["x"]["hex"].get<std::string>());
    return xp::asarray(bytes.data(), dtype_named(c["x"]["dtype"].get<std::string>()), c["x"]["shape"].get<Shape>());
  }
  if (fn == "concat" || fn == "stack") {
    std::vector<Array> arrays;
    for (const auto& a : c["arrays"]) arrays.push_back(make_operand_array(a));
    return fn == "concat" ? xp::concat(arrays, c["axis"].get<int>()) : xp::stack(arrays, c["axis"].get<int>());
  }
  if (fn == "take") {
    std::optional<int> axis;
    if (!c["axis"].is_null()) axis = c["axis"].get<int>();
    return xp::take(make_operand_array(c["x"]), make_operand_array(c["indices"]), axis);
  }
  if (fn == "astype") return make_operand_array(c["x"]).astype(*opt_dtype());
  if (fn == "copy") return make_operand_array(c["x"]).copy();
  throw std::runtime_error("unknown creation " + fn);
}

void check_create_group(const std::string& group) {
  XP_SUITE(s);
  Failures f(group);
  for (std::size_t id : s.groups.at(group)) {
    const json& c = s.cases[id];
    const json& ans = s.answer(c);
    f.ran(ans);
    const std::string fn = c["fn"].get<std::string>();
    if (fn == "result_type") {
      f.add(c, no_throw([&]() -> std::string {
              if (ans.contains("error")) return "";  // NumPy's result_type has no answer for the value
              const Array a = make_operand_array(c["a"]);
              const DType d = xp::result_type(Operand(a), Operand(make_scalar(c["b"])));
              if (dname(d) != ans["dtype"].get<std::string>())
                return "result_type " + dname(d) + ", NumPy " + ans["dtype"].get<std::string>();
              return "";
            }));
      continue;
    }
    if (ans.contains("error")) {
      f.add(c, check_throw(ans["error"].get<std::string>(), [&] { fetch(run_create(c)); }));
      continue;
    }
    f.add(c, no_throw([&]() -> std::string {
            const Array a = run_create(c);
            if (fn == "empty" || fn == "empty_like") {
              if (dname(a.dtype()) != ans["dtype"].get<std::string>() || shape_of(a) != ans["shape"].get<Shape>())
                return "empty: " + dname(a.dtype()) + " " + json(shape_of(a)).dump();
              return "";
            }
            return compare(fetch(a), ans["result"]);
          }));
  }
}

}  // namespace

TEST_F(ArrayNumPy, Creation) {
  check_create_group("create");
}

TEST_F(ArrayNumPy, AstypeEveryPair) {
  check_create_group("astype");
}

TEST_F(ArrayNumPy, Reductions) {
  XP_SUITE(s);
  Failures f("reduction");
  for (std::size_t id : s.groups.at("reduce")) {
    const json& c = s.cases[id];
    const json& ans = s.answer(c);
    f.ran(ans);
    auto run = [&]() {
      const std::string fn = c["fn"].get<std::string>();
      const Array x = make_operand_array(c["x"]);
      const xp::Axes axes = make_axes(c["axes"]);
      const bool keep = c.value("keepdims", false);
      std::optional<DType> dt;
      if (c.contains("dtype") && !c["dtype"].is_null()) dt = dtype_named(c["dtype"].get<std::string>());
      std::optional<int> axis;
      if (c["axes"].is_number()) axis = c["axes"].get<int>();
      if (fn == "sum") return xp::sum(x, axes, keep, dt);
      if (fn == "prod") return xp::prod(x, axes, keep, dt);
      if (fn == "mean") return xp::mean(x, axes, keep);
      if (fn == "var") return xp::var(x, axes, c["correction"].get<double>(), keep);
      if (fn == "std") return xp::std(x, axes, c["correction"].get<double>(), keep);
      if (fn == "min") return xp::min(x, axes, keep);
      if (fn == "max") return xp::max(x, axes, keep);
      if (fn == "any") return xp::any(x, axes, keep);
      if (fn == "all") return xp::all(x, axes, keep);
      if (fn == "argmin") return xp::argmin(x, axis, keep);
      if (fn == "argmax") return xp::argmax(x, axis, keep);
      if (fn == "cumulative_prod") return xp::cumulative_prod(x, axis, dt, c.value("include_initial", false));
      return xp::cumulative_sum(x, axis, dt, c.value("include_initial", false));
    };
    if (ans.contains("error")) {
      f.add(c, check_throw(ans["error"].get<std::string>(), [&] { fetch(run()); }));
      continue;
    }
    f.add(c, no_throw([&] {
            Check chk;
            if (ans.contains("approx")) chk.approx = &ans["approx"];
            return compare(fetch(run()), ans["result"], chk);
          }));
  }
}

TEST_F(ArrayNumPy, MatmulAndVecdot) {
  XP_SUITE(s);
  Failures f("linalg");
  for (std::size_t id : s.groups.at("linalg")) {
    const json& c = s.cases[id];
    const json& ans = s.answer(c);
    f.ran(ans);
    auto run = [&]() {
      const Array a = make_operand_array(c["a"]), b = make_operand_array(c["b"]);
      return c["fn"] == "matmul" ? xp::matmul(a, b) : xp::vecdot(a, b, c["axis"].get<int>());
    };
    if (ans.contains("error")) {
      f.add(c, check_throw(ans["error"].get<std::string>(), [&] { fetch(run()); }));
      continue;
    }
    f.add(c, no_throw([&] {
            Check chk;
            if (ans.contains("approx")) chk.approx = &ans["approx"];
            return compare(fetch(run()), ans["result"], chk);
          }));
  }
}

TEST_F(ArrayNumPy, ReprAndStr) {
  XP_SUITE(s);
  Failures f("repr");
  for (std::size_t id : s.groups.at("repr")) {
    const json& c = s.cases[id];
    const json& ans = s.answer(c);
    f.ran(ans);
    f.add(c, no_throw([&]() -> std::string {
            const Array a = make_operand_array(c["x"]);
            std::string e;
            if (a.repr() != ans["repr"].get<std::string>())
              e += "repr:\n" + a.repr() + "\nNumPy:\n" + ans["repr"].get<std::string>() + "\n";
            if (a.str() != ans["str"].get<std::string>())
              e += "str:\n" + a.str() + "\nNumPy:\n" + ans["str"].get<std::string>() + "\n";
            std::ostringstream os;
            os << a;
            if (os.str() != a.repr()) e += "operator<< is not the repr\n";
            return e;
          }));
  }
}

TEST_F(ArrayNumPy, NpyFilesBothWays) {
  XP_SUITE(s);
  Failures f("npy");
  int from_xp = 0, to_xp = 0;
  for (std::size_t id : s.groups.at("npy")) {
    const json& c = s.cases[id];
    const json& ans = s.answer(c);
    f.ran(ans);
    const std::string kind = c["kind"].get<std::string>();
    if (kind == "npy_failed") {
      f.add(c, "xp::save threw: " + c["error"].get<std::string>());
    } else if (ans.contains("error")) {
      f.add(c, "NumPy: " + ans["error"].get<std::string>() + ": " + ans.value("message", ""));
    } else if (kind == "npy_from_xp") {
      ++from_xp;
      // What NumPy loaded must be the array xp saved: compare it with xp's own view.
      f.add(c, no_throw([&] {
              const Fetched mine = fetch(make_operand_array(c["x"]));
              const json want = {{"dtype", dname(mine.dtype)}, {"shape", mine.shape}, {"hex", to_hex(mine.bytes)}};
              Fetched loaded{dtype_named(ans["result"]["dtype"].get<std::string>()),
                             ans["result"]["shape"].get<Shape>(), from_hex(ans["result"]["hex"].get<std::string>())};
              return compare(loaded, want);
            }));
    } else {
      ++to_xp;
      if (c["fortran"].get<bool>() && !ans["fortran"].get<bool>())
        f.add(c, "NumPy did not write a Fortran-ordered file");
      f.add(c, no_throw([&] {
              const Array a = xp::load(s.dir / c["file"].get<std::string>());
              const Fetched want = fetch(make_operand_array(c["x"]));
              return compare(fetch(a),
                             {{"dtype", dname(want.dtype)}, {"shape", want.shape}, {"hex", to_hex(want.bytes)}});
            }));
    }
  }
  EXPECT_GE(from_xp, 13 * 4);
  EXPECT_GE(to_xp, 12 * 4);
}

// Reshaping an array with no elements: NumPy gives the new shape (np.zeros((0, 3)).reshape(0, 2) has
// shape (0, 2)). Run in a child process, so that a crash fails this test only.
TEST_F(ArrayNumPy, ReshapeEmptyArrays) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  struct Case {
    Shape from, to, want;
  };
  for (const Case& c : std::vector<Case>{{{0, 3}, {0, 2}, {0, 2}},
                                         {{0, 3}, {3, 0}, {3, 0}},
                                         {{2, 0}, {-1, 3}, {0, 3}},
                                         {{3, 0, 2}, {0}, {0}},
                                         {{0}, {0, 2}, {0, 2}}}) {
    EXPECT_EXIT(
        {
          const Array a = xp::zeros(c.from).reshape(c.to);
          std::exit(shape_of(a) == c.want && a.size() == 0 ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "")
        << json(c.from).dump() << " -> " << json(c.to).dump();
  }
}
