// The elementwise functions: NumPy 2's dtype rules (docs/semantics.md) turned into lazy nodes with
// explicit casts, float16/bfloat16 computed in float32 and rounded back after every operation.

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <vector>

#include "array/array_impl.hpp"

namespace xp {

namespace detail {
namespace {

enum class Rule {
  arith,            // the common dtype; bool allowed (add = or, multiply = and, min, max, abs, clip)
  arith_no_bool,    // subtract, negative, sign: bool is a TypeError
  arith_int8_bool,  // floor_divide, remainder, pow, square: bool computed as int8
  float_fn,         // sqrt and transcendental: integers -> the smallest float that holds them
  divide,           // integers -> float64
  rounding,         // floor, ceil, trunc, round: integers unchanged (round: bool -> float16)
  compare,          // the common dtype, result bool
  predicate,        // isnan, isinf, isfinite
  logical,          // operands as bool
  bitwise,          // integers and bool
  shift,            // integers (bool as int8)
  where,
  fma,
  nextafter,   // as float_fn, but float16 and bfloat16 stepped in their own format
  signbit,     // floats: the sign bit; integers: x < 0; bool: false
  logaddexp,   // as float_fn, composed of exact operations, exp and log1p
  reciprocal,  // 1 / x with float_fn's dtype
  part,        // real, imag, conj: a complex operand's parts; a real operand as it is (imag: zeros)
};

bool is_float(DType t) {
  return kind(t) == DTypeKind::floating;
}
bool is_cplx(DType t) {
  return kind(t) == DTypeKind::complex_floating;
}
bool is_16bit_float(DType t) {
  return t == DType::float16 || t == DType::bfloat16;
}

// Up to three operands, without allocating.
struct OperandList {
  const Operand* items[3];  // the first `count` are set
  std::size_t count = 0;
  const Operand* const* begin() const { return items; }
  const Operand* const* end() const { return items + count; }
  std::size_t size() const { return count; }
  const Operand* operator[](std::size_t i) const { return items[i]; }
};

struct Resolved {
  Resolved() noexcept {}  // user-provided: the members' initializers only, no zero-filling first
  OperandList ops;
  DType float_common = DType::float64;  // the smallest float every array operand converts to safely
  bool has_array = false;
  Device device;
  Backend* backend = nullptr;
  DType common = DType::float64;
  // The result's shape: an operand's own (no copy: the common case) or a broadcast one.
  const Shape* same_shape = nullptr;
  Shape broadcast;
  const Shape& shape() const { return same_shape != nullptr ? *same_shape : broadcast; }
};

DType smallest_float(DType t) {
  switch (t) {
    case DType::bool_:
    case DType::int8:
    case DType::uint8:
      return DType::float16;
    case DType::int16:
    case DType::uint16:
      return DType::float32;
    default:
      return is_float(t) ? t : DType::float64;
  }
}

// Shapes, device and the common dtype (NumPy 2 with weak scalars) of the operands.
Resolved resolve(const char* name, std::initializer_list<const Operand*> ops) {
  Resolved r;
  for (const Operand* o : ops) r.ops.items[r.ops.count++] = o;
  bool any_array = false;
  const Device* first_device = nullptr;
  DType dtypes[3];  // the array operands' dtypes, promoted all at once below (not pairwise)
  std::size_t arrays = 0;
  for (const Operand* o : r.ops) {
    if (!o->is_array()) continue;
    const ImplPtr& a = impl_of(o->array());
    if (first_device == nullptr) {
      first_device = &a->device;
      r.backend = a->backend;
      r.same_shape = &a->shape;
      r.float_common = smallest_float(a->dtype);
    } else {
      if (!(a->device == *first_device)) throw DeviceMismatch(name, first_device->str(), a->device.str());
      if (a->shape != r.shape()) {
        r.broadcast = broadcast_shape(r.shape(), a->shape);
        r.same_shape = nullptr;
      }
      r.float_common = result_type(r.float_common, smallest_float(a->dtype));
    }
    dtypes[arrays++] = a->dtype;
    any_array = true;
  }
  if (any_array) r.common = result_type_all(std::span<const DType>(dtypes, arrays));
  if (!any_array) {
    r.device = default_device();
    r.backend = &backend_for(r.device);
    bool any_complex = false, any_float = false, any_int = false, big = false;
    for (const Operand* o : r.ops) {
      any_complex |= o->scalar().kind() == ScalarKind::complex;
      any_float |= o->scalar().kind() == ScalarKind::floating;
      any_int |= o->scalar().kind() == ScalarKind::integer;
      big |= o->scalar().is_large_unsigned();
    }
    r.common = any_complex ? DType::complex128
               : any_float ? DType::float64
               : any_int   ? (big ? DType::uint64 : DType::int64)
                           : DType::bool_;
  } else {
    r.device = *first_device;
  }
  r.has_array = any_array;
  if (!any_array) r.float_common = is_float(r.common) ? r.common : DType::float64;
  for (const Operand* o : r.ops) {
    if (!o->is_array()) r.common = result_type(r.common, o->scalar().kind());
  }
  return r;
}

bool scalar_fits(const Scalar& s, DType t) {
  return s.is_large_unsigned() ? value_fits(t, s.as_uint()) : value_fits(t, s.as_int());
}

// NEP 50: an integer scalar must fit the integer dtype an operation computes in.
void check_scalars_fit(const char* name, const Resolved& r, DType t) {
  const DTypeKind k = kind(t);
  if (k != DTypeKind::signed_integer && k != DTypeKind::unsigned_integer) return;
  for (const Operand* o : r.ops) {
    if (o->is_array() || o->scalar().kind() != ScalarKind::integer) continue;
    const Scalar& s = o->scalar();
    if (!scalar_fits(s, t)) {
      throw OverflowError(std::string(name) + ": the integer " +
                          (s.is_large_unsigned() ? std::to_string(s.as_uint()) : std::to_string(s.as_int())) +
                          " is out of bounds for " + std::string(xp::name(t)) +
                          " (a C++ number takes the array's dtype, NEP 50)");
    }
  }
}

struct Maker {
  const Resolved& r;
  bool detached;
  std::size_t order[3] = {0, 1, 2};  // which operand goes in each argument slot
  ImplPtr node(Op op, DType dtype, const Shape& shape, LazyArg a, LazyArg b = {}, LazyArg c = {}) const {
    return make_node(op, dtype, shape, r.device, r.backend, std::move(a), std::move(b), std::move(c), detached);
  }
  // Operand k converted to dtype t.
  LazyArg arg(std::size_t slot, DType t) const {
    const Operand& o = *r.ops[order[slot]];
    if (o.is_array()) {
      const ImplPtr& a = o.array().impl();
      if (a->dtype == t) return LazyArg{a};
      return LazyArg{node(Op::cast, t, a->shape, LazyArg{a})};
    }
    if (o.scalar().kind() == ScalarKind::complex || is_cplx(t)) return complex_constant(o.scalar(), t);
    LazyArg c = constant_arg(o.scalar());
    if (c.dtype == t) return c;
    return LazyArg{node(Op::cast, t, Shape{}, c)};
  }
  // A number as a 0-d value of dtype t: a complex t is built from its two parts (the IR's `complex`);
  // a complex number with a real t (where's condition, a bool) is converted as cast converts.
  LazyArg complex_constant(const Scalar& s, DType t) const {
    const DType c = is_cplx(t) ? t : DType::complex128;
    const DType part = real_dtype(c);
    auto number = [&](double v) {
      LazyArg k = constant_arg(Scalar(v));
      return part == DType::float64 ? k : LazyArg{node(Op::cast, part, Shape{}, std::move(k))};
    };
    // A real number's part is converted as a cast to the part's dtype would (an integer beyond
    // 2^53 rounds once, from the integer).
    LazyArg re = s.kind() == ScalarKind::complex ? number(s.as_double()) : cast(constant_arg(s), part);
    LazyArg z{node(Op::complex, c, Shape{}, std::move(re), number(s.imag()))};
    return c == t ? z : cast(std::move(z), t);
  }
  LazyArg cast(LazyArg x, DType t) const {
    const DType from = x.array ? x.array->dtype : x.dtype;
    if (from == t) return x;
    static const Shape kScalar;
    const Shape& shape = x.array ? x.array->shape : kScalar;  // x's array outlives the call (the node holds it)
    return LazyArg{node(Op::cast, t, shape, std::move(x))};
  }
};

[[noreturn]] void unsupported(const char* name, const Resolved& r) {
  std::string types;
  for (const Operand* o : r.ops) {
    if (!types.empty()) types += ", ";
    types += o->is_array() ? std::string(xp::name(o->array().dtype())) : "a C++ number";
  }
  throw TypeError(std::string(name) + " is not supported for " + types + " (computed as " +
                  std::string(xp::name(r.common)) + ")");
}

// A signed integer array against a uint64 one promotes to float64, which rounds values past 2^53:
// NumPy 2 compares the exact values, and so does xp, with exact operations only: a negative value
// is below every uint64; the others compare as uint64. Null when the operands are not such a pair.
ImplPtr compare_signed_with_uint64(Op op, const Resolved& r, const Maker& m) {
  if (r.ops.size() != 2 || !r.ops[0]->is_array() || !r.ops[1]->is_array()) return nullptr;
  const DType d0 = r.ops[0]->array().dtype(), d1 = r.ops[1]->array().dtype();
  std::size_t s = 0;  // the signed operand
  if (kind(d0) == DTypeKind::signed_integer && d1 == DType::uint64) {
    s = 0;
  } else if (d0 == DType::uint64 && kind(d1) == DTypeKind::signed_integer) {
    s = 1;
  } else {
    return nullptr;
  }
  const ImplPtr& si = r.ops[s]->array().impl();
  const ImplPtr& ui = r.ops[1 - s]->array().impl();
  const Shape& shape = r.shape();
  // Where the signed value is negative the answer is known: s < u, s <= u and s != u hold (written
  // either way round), the others do not.
  const bool s_left = s == 0;
  const bool negative_holds = op == Op::not_equal || (s_left ? (op == Op::less || op == Op::less_equal)
                                                             : (op == Op::greater || op == Op::greater_equal));
  LazyArg zero = m.cast(constant_arg(Scalar(0)), si->dtype);
  LazyArg sign = LazyArg{
      m.node(negative_holds ? Op::less : Op::greater_equal, DType::bool_, si->shape, LazyArg{si}, std::move(zero))};
  LazyArg as_u = m.cast(LazyArg{si}, DType::uint64);
  LazyArg cmp = s_left ? LazyArg{m.node(op, DType::bool_, shape, std::move(as_u), LazyArg{ui})}
                       : LazyArg{m.node(op, DType::bool_, shape, LazyArg{ui}, std::move(as_u))};
  return m.node(negative_holds ? Op::logical_or : Op::logical_and, DType::bool_, shape, std::move(sign),
                std::move(cmp));
}

// A comparison with an integer scalar outside the array's integer dtype has one answer for every
// element (NumPy 2 compares the exact values): uint8_array < -2 is all false.
template <class Compute>
ImplPtr compare(Op op, const Resolved& r, const Maker& m, DType t, Compute&& compute) {
  if (t == DType::float64) {
    if (ImplPtr exact = compare_signed_with_uint64(op, r, m)) return exact;
  }
  const DTypeKind k = kind(t);
  bool bool_array = false;  // a bool array compares as int64: a scalar beyond it is an error, as NumPy
  for (const Operand* o : r.ops) bool_array = bool_array || (o->is_array() && o->array().dtype() == DType::bool_);
  if (bool_array) check_scalars_fit("comparison", r, t);
  if (k == DTypeKind::signed_integer || k == DTypeKind::unsigned_integer) {
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      const Operand* o = r.ops[i];
      if (o->is_array() || o->scalar().kind() != ScalarKind::integer || scalar_fits(o->scalar(), t)) continue;
      const bool above = o->scalar().is_large_unsigned() || o->scalar().as_int() > 0;
      // The scalar is the right operand (i == 1) or the left one (i == 0): x < big is true.
      const bool scalar_is_greater = above;
      bool value = false;
      switch (op) {
        case Op::equal:
          value = false;
          break;
        case Op::not_equal:
          value = true;
          break;
        case Op::less:
        case Op::less_equal:
          value = (i == 1) == scalar_is_greater;
          break;
        default:
          value = (i == 1) != scalar_is_greater;
          break;
      }
      return m.node(Op::cast, DType::bool_, r.shape(), constant_arg(Scalar(value)));
    }
  }
  return compute(t, DType::bool_);
}

// fma of float16 or bfloat16 operands: the exact a * b + c rounded once to the 16-bit type (in
// float32 it would be rounded twice: float16 7272 * -3 + 2^-14 is -21808, not -21824). a * b is exact
// in float64 (two significands of at most 11 bits). float16: float64's fma, then one rounding, is
// correct: it could only differ where float64's result lies exactly halfway between two float16
// values while the exact sum does not, which needs a * b on that halfway point and |c| below half an
// ulp of float64 there (2^-53 |a * b|); but |c| >= 2^-24 where it is not 0, so |a * b| >= 2^29 and
// the result overflows to inf either way. bfloat16 has float32's exponent range, where such a c
// exists (2^-133 beside a product near 2^-70), so the sum s = a * b + c in float64 comes with its
// exact error e (TwoSum), and where s is halfway between two bfloat16 values (or one of them) and
// e is not 0, the answer is the neighbour on e's side. Only exact float64 operations: every backend
// computes the same bits.
ImplPtr fma16(const Maker& m, DType t) {
  const Shape& shape = m.r.shape();
  constexpr DType D = DType::float64;
  auto node = [&](Op op, DType d, LazyArg a, LazyArg b = {}, LazyArg c = {}) {
    return LazyArg{m.node(op, d, shape, std::move(a), std::move(b), std::move(c))};
  };
  auto k = [](double x) { return constant_arg(Scalar(x)); };
  LazyArg a = m.cast(m.arg(0, t), D), b = m.cast(m.arg(1, t), D), c = m.cast(m.arg(2, t), D);
  if (t == DType::float16) return m.cast(node(Op::fma, D, a, b, c), t).array;
  const LazyArg p = node(Op::multiply, D, a, b);  // exact
  const LazyArg s = node(Op::add, D, p, c);
  const LazyArg bb = node(Op::subtract, D, s, p);
  const LazyArg e = node(Op::add, D, node(Op::subtract, D, p, node(Op::subtract, D, s, bb)),
                         node(Op::subtract, D, c, bb));  // (p + c) - s, exactly
  // s moved by 2^-20 |s| either way: far less than half a bfloat16 ulp (2^-9 |s|), so the two round
  // to s's bfloat16 neighbours when s is halfway between them, else both to s's nearest.
  const LazyArg d = node(Op::multiply, D, node(Op::abs, D, s), k(0x1p-20));
  const LazyArg up = m.cast(node(Op::add, D, s, d), t), down = m.cast(node(Op::subtract, D, s, d), t);
  // Back in float64, an infinity as 2^128 (the halfway point to it is the overflow threshold).
  auto wide = [&](const LazyArg& h) { return node(Op::clip, D, m.cast(h, D), k(-0x1p128), k(0x1p128)); };
  const LazyArg halfway = node(Op::equal, DType::bool_, node(Op::add, D, wide(up), wide(down)), node(Op::add, D, s, s));
  const LazyArg inexact = node(Op::not_equal, DType::bool_, e, k(0.0));
  const LazyArg side = node(Op::where, t, node(Op::greater, DType::bool_, e, k(0.0)), up, down);
  return node(Op::where, t, node(Op::logical_and, DType::bool_, halfway, inexact), side, m.cast(s, t)).array;
}

Array finish(ImplPtr result, const Out& out, const char* name) {
  if (out.array() == nullptr) return Array(std::move(result));
  const ImplPtr& o = impl_of(*out.array());
  if (!(o->device == result->device))
    throw DeviceMismatch(std::string(name) + " (out=)", result->device.str(), o->device.str());
  // The result must broadcast to out='s shape (NumPy's rule): checked here, not by broadcast_shape,
  // whose message would not say that out= is the array at fault.
  bool fits = result->shape.size() <= o->shape.size();
  for (std::size_t i = 0; fits && i < result->shape.size(); ++i) {
    const std::int64_t r = result->shape[result->shape.size() - 1 - i], d = o->shape[o->shape.size() - 1 - i];
    fits = r == d || r == 1;
  }
  if (!fits) {
    throw ValueError(std::string(name) + ": out= has shape " + shape_str(o->shape) + ", expected shape " +
                     shape_str(result->shape) + " (the result's, or one it broadcasts to)");
  }
  if (!can_cast_same_kind(result->dtype, o->dtype)) {
    throw TypeError(std::string(name) + ": cannot cast the result from " + std::string(xp::name(result->dtype)) +
                    " to out= of dtype " + std::string(xp::name(o->dtype)) + " with casting rule 'same_kind'");
  }
  evaluate_into(result, o);
  return *out.array();
}

}  // namespace

ImplPtr scalar_node(const Scalar& s, DType t, const Device& device, Backend* backend, const char* what) {
  if (s.kind() == ScalarKind::complex && !is_cplx(t)) {
    throw TypeError(std::string(what) + ": cannot cast a complex number to " + std::string(xp::name(t)) +
                    " with casting rule 'same_kind'");
  }
  if (!is_cplx(t)) return make_node(Op::cast, t, Shape{}, device, backend, constant_arg(s), {}, {}, true);
  const DType part = real_dtype(t);
  auto number = [&](const Scalar& v) {
    return LazyArg{make_node(Op::cast, part, Shape{}, device, backend, constant_arg(v), {}, {}, true)};
  };
  const Scalar re = s.kind() == ScalarKind::complex ? Scalar(s.as_double()) : s;
  return make_node(Op::complex, t, Shape{}, device, backend, number(re), number(Scalar(s.imag())), {}, true);
}

namespace {

// real, imag, conj. A real operand: real and conj give it as it is (a new array, as positive does),
// imag zeros of its dtype, as NumPy's (the standard defines them for complex operands only).
ImplPtr parts(Op op, const char* name, const Resolved& r, const Maker& m) {
  const DType t = r.common;
  if (t == DType::bool_ && op == Op::conj) unsupported(name, r);
  if (is_cplx(t)) {
    const DType res = op == Op::conj ? t : real_dtype(t);
    return m.node(op, res, r.shape(), m.arg(0, t));
  }
  if (op == Op::imag) return m.node(Op::cast, t, r.shape(), m.cast(constant_arg(Scalar(0)), t));
  return m.node(Op::cast, t, r.shape(), m.arg(0, t));
}

// An operation whose operands promote to a complex dtype (docs/semantics.md, "Complex numbers"):
// the arithmetic, the powers and roots, the exponentials, logarithms and trigonometric functions,
// equality and the predicates; abs gives the parts' real dtype. The orderings (less, minimum, clip,
// floor, ...), the bitwise and the real-only functions (atan2, hypot, copysign, nextafter,
// logaddexp, signbit, fma) are a TypeError, as the standard leaves them undefined.
ImplPtr complex_op(Op op, Rule rule, const char* name, const Resolved& r, const Maker& m) {
  const DType t = r.common;
  const std::size_t n = r.ops.size();
  auto arg = [&](std::size_t k) { return n > k ? m.arg(k, t) : LazyArg{}; };
  switch (rule) {
    case Rule::arith:
    case Rule::arith_no_bool:
    case Rule::arith_int8_bool:
      if (op == Op::minimum || op == Op::maximum || op == Op::clip || op == Op::floor_divide || op == Op::remainder)
        unsupported(name, r);
      if (op == Op::abs) return m.node(Op::abs, real_dtype(t), r.shape(), arg(0));
      return m.node(op, t, r.shape(), arg(0), arg(1));
    case Rule::float_fn:
      if (op == Op::atan2 || op == Op::hypot || op == Op::copysign) unsupported(name, r);
      return m.node(op, t, r.shape(), arg(0), arg(1));
    case Rule::divide:
      return m.node(op, t, r.shape(), arg(0), arg(1));
    case Rule::reciprocal:
      return m.node(Op::divide, t, r.shape(), m.complex_constant(Scalar(1.0), t), arg(0));
    case Rule::rounding:
      if (op != Op::round) unsupported(name, r);
      return m.node(op, t, r.shape(), arg(0));
    case Rule::compare:
      if (op != Op::equal && op != Op::not_equal) unsupported(name, r);
      return m.node(op, DType::bool_, r.shape(), arg(0), arg(1));
    case Rule::predicate:
      return m.node(op, DType::bool_, r.shape(), arg(0));
    default:
      unsupported(name, r);
  }
}

Array apply(Op op, Rule rule, const char* name, std::initializer_list<const Operand*> operands, const Out& out) {
  const Resolved r = resolve(name, operands);
  if (out.array() != nullptr) {
    const ImplPtr& o = impl_of(*out.array());
    if (!o->lazy() && o->storage->read_only) {
      throw ValueError(std::string(name) + ": out= (shape " + shape_str(o->shape) + ") is read-only");
    }
  }
  Maker m{r, out.array() != nullptr};
  const std::size_t n = r.ops.size();
  DType t = r.common;
  DType result = t;
  auto args_as = [&](DType d) {  // built in place (braced: left to right), not zero-filled then assigned
    return std::array<LazyArg, 3>{n > 0 ? m.arg(0, d) : LazyArg{}, n > 1 ? m.arg(1, d) : LazyArg{},
                                  n > 2 ? m.arg(2, d) : LazyArg{}};
  };
  // Computes op on operands converted to `d`, in float32 when d is a 16-bit float, rounding back.
  auto compute = [&](DType d, DType res) -> ImplPtr {
    if (is_16bit_float(d)) {
      auto a = args_as(d);
      for (std::size_t k = 0; k < n; ++k) a[k] = m.cast(std::move(a[k]), DType::float32);
      const DType inner = res == DType::bool_ ? DType::bool_ : DType::float32;
      ImplPtr v = m.node(op, inner, r.shape(), std::move(a[0]), std::move(a[1]), std::move(a[2]));
      if (res == inner) return v;
      return m.cast(LazyArg{std::move(v)}, res).array;
    }
    auto a = args_as(d);
    return m.node(op, res, r.shape(), std::move(a[0]), std::move(a[1]), std::move(a[2]));
  };
  // NumPy picks the first loop every operand converts to safely: a float common dtype is its own
  // answer; integer arrays each need their smallest float (int8 with uint8: float16); a bool array
  // that a weak integer made int64 needs float64.
  auto float_of = [&](DType d) {
    if (is_float(d)) return d;
    bool all_bool = r.has_array;
    for (const Operand* o : r.ops) all_bool = all_bool && (!o->is_array() || o->array().dtype() == DType::bool_);
    return r.has_array && !(all_bool && d != DType::bool_) ? r.float_common : smallest_float(d);
  };
  ImplPtr v;
  if (rule == Rule::part) {
    v = parts(op, name, r, m);
    return finish(std::move(v), out, name);
  }
  if (is_cplx(t) && rule != Rule::where && rule != Rule::logical) {
    v = complex_op(op, rule, name, r, m);
    return finish(std::move(v), out, name);
  }
  switch (rule) {
    case Rule::arith:
      check_scalars_fit(name, r, t);
      if (t == DType::float16 && op == Op::clip) {
        // NumPy's float16 clip keeps x where it equals a bound (its half loop: x >= lo ? x : lo,
        // then <= hi), NaN in any operand giving NaN: maximum(lo, x), then minimum(hi, that), in
        // float32, whose primitives return the second operand of two equal values.
        auto a = args_as(t);
        for (std::size_t k = 0; k < n; ++k) a[k] = m.cast(std::move(a[k]), DType::float32);
        LazyArg low{m.node(Op::maximum, DType::float32, r.shape(), std::move(a[1]), std::move(a[0]))};
        LazyArg both{m.node(Op::minimum, DType::float32, r.shape(), std::move(a[2]), std::move(low))};
        v = m.cast(std::move(both), t).array;
        break;
      }
      if (t == DType::float16 && (op == Op::minimum || op == Op::maximum) && n == 2) {
        // NumPy's float16 minimum/maximum return the first operand for +0 and -0 (float32, float64
        // and bfloat16 the second): computed with the operands swapped, which changes nothing else.
        std::swap(m.order[0], m.order[1]);
      }
      v = compute(t, t);
      break;
    case Rule::arith_no_bool:
      check_scalars_fit(name, r, t);
      if (t == DType::bool_) {
        throw TypeError(std::string(name) + " is not supported for bool (use logical_xor or logical_not)");
      }
      v = compute(t, t);
      break;
    case Rule::arith_int8_bool:
      if (t == DType::bool_) t = DType::int8;
      check_scalars_fit(name, r, t);
      v = compute(t, t);
      break;
    case Rule::float_fn:
      t = float_of(t);
      v = compute(t, t);
      break;
    case Rule::fma:
      check_scalars_fit(name, r, t);
      if (is_16bit_float(t)) {
        v = fma16(m, t);
        break;
      }
      [[fallthrough]];
    case Rule::divide:
      if (!is_float(t)) t = DType::float64;
      v = compute(t, t);
      break;
    case Rule::rounding:
      check_scalars_fit(name, r, t);
      if (op == Op::round && t == DType::bool_) t = DType::float16;
      if (!is_float(t)) {
        v = m.node(Op::cast, t, r.shape(), m.arg(0, t));
      } else {
        v = compute(t, t);
      }
      break;
    case Rule::compare:
      v = compare(op, r, m, t, compute);
      break;
    case Rule::predicate: {
      const DType x = r.ops[0]->is_array() ? r.ops[0]->array().dtype() : t;
      if (is_float(x)) {
        v = compute(x, DType::bool_);
      } else {
        const bool value = op == Op::isfinite;
        v = m.node(Op::cast, DType::bool_, r.shape(), constant_arg(Scalar(value)));
      }
      break;
    }
    case Rule::logical: {
      auto a = args_as(DType::bool_);
      v = m.node(op, DType::bool_, r.shape(), std::move(a[0]), std::move(a[1]), std::move(a[2]));
      break;
    }
    case Rule::bitwise:
      if (is_float(t)) unsupported(name, r);
      check_scalars_fit(name, r, t);
      v = compute(t, t);
      break;
    case Rule::shift:
      if (is_float(t)) unsupported(name, r);
      if (t == DType::bool_) t = DType::int8;
      check_scalars_fit(name, r, t);
      v = compute(t, t);
      break;
    case Rule::nextafter: {
      t = float_of(t);
      auto a = args_as(t);
      v = m.node(op, t, r.shape(), std::move(a[0]), std::move(a[1]));
      break;
    }
    case Rule::signbit: {
      const DType x = r.ops[0]->is_array() ? r.ops[0]->array().dtype() : t;
      if (is_float(x)) {
        v = compute(x, DType::bool_);
      } else if (x == DType::bool_) {
        v = m.node(Op::cast, DType::bool_, r.shape(), constant_arg(Scalar(false)));
      } else {
        LazyArg zero = m.cast(constant_arg(Scalar(0)), x);
        v = m.node(Op::less, DType::bool_, r.shape(), m.arg(0, x), std::move(zero));
      }
      break;
    }
    case Rule::logaddexp: {
      t = float_of(t);
      // NumPy's npy_logaddexp: x + ln 2 where x == y (infinities of one sign included), else
      // max(x, y) + log1p(exp(-|x - y|)), NaN propagating. Computed in the operands' dtype (float32
      // for float16 and bfloat16, rounded once at the end).
      const DType c = is_16bit_float(t) ? DType::float32 : t;
      auto a = args_as(t);
      LazyArg x = m.cast(std::move(a[0]), c), y = m.cast(std::move(a[1]), c);
      const Shape& shape = r.shape();
      auto node = [&](Op o, DType d, LazyArg p, LazyArg q = {}, LazyArg s3 = {}) {
        return LazyArg{m.node(o, d, shape, std::move(p), std::move(q), std::move(s3))};
      };
      const LazyArg ln2 = m.cast(constant_arg(Scalar(0.693147180559945309417232121458176568)), c);
      const LazyArg diff = node(Op::abs, c, node(Op::subtract, c, x, y));
      const LazyArg tail = node(Op::log1p, c, node(Op::exp, c, node(Op::negative, c, diff)));
      const LazyArg general = node(Op::add, c, node(Op::maximum, c, x, y), tail);
      const LazyArg same = node(Op::add, c, x, ln2);
      LazyArg res = node(Op::where, c, node(Op::equal, DType::bool_, x, y), same, general);
      v = m.cast(std::move(res), t).array;
      break;
    }
    case Rule::reciprocal: {
      t = float_of(t);
      const DType c = is_16bit_float(t) ? DType::float32 : t;
      LazyArg one = m.cast(constant_arg(Scalar(1.0)), c);
      v = m.cast(LazyArg{m.node(Op::divide, c, r.shape(), std::move(one), m.cast(m.arg(0, t), c))}, t).array;
      break;
    }
    case Rule::where: {
      // The condition is operand 0; x and y promote between themselves.
      const Resolved xy = resolve(name, {r.ops[1], r.ops[2]});
      result = xy.common;
      check_scalars_fit(name, xy, result);
      LazyArg c = m.arg(0, DType::bool_);
      v = m.node(Op::where, result, r.shape(), std::move(c), m.arg(1, result), m.arg(2, result));
      break;
    }
    case Rule::part:
      break;  // above
  }
  (void)result;
  return finish(std::move(v), out, name);
}

}  // namespace
}  // namespace detail

using detail::Rule;

DType result_type(const Operand& a, const Operand& b) {
  return detail::resolve("result_type", {&a, &b}).common;
}

#define XP_UNARY_DEF(fn, op, rule)                                    \
  Array fn(const Operand& x, const Out& out) {                        \
    return detail::apply(detail::Op::op, Rule::rule, #fn, {&x}, out); \
  }
#define XP_BINARY_DEF(fn, op, rule)                                       \
  Array fn(const Operand& x, const Operand& y, const Out& out) {          \
    return detail::apply(detail::Op::op, Rule::rule, #fn, {&x, &y}, out); \
  }

XP_UNARY_DEF(negative, negative, arith_no_bool)
XP_UNARY_DEF(abs, abs, arith)
XP_UNARY_DEF(sign, sign, arith_no_bool)
XP_UNARY_DEF(square, square, arith_int8_bool)
XP_UNARY_DEF(sqrt, sqrt, float_fn)
XP_UNARY_DEF(exp, exp, float_fn)
XP_UNARY_DEF(expm1, expm1, float_fn)
XP_UNARY_DEF(log, log, float_fn)
XP_UNARY_DEF(log1p, log1p, float_fn)
XP_UNARY_DEF(log2, log2, float_fn)
XP_UNARY_DEF(log10, log10, float_fn)
XP_UNARY_DEF(sin, sin, float_fn)
XP_UNARY_DEF(cos, cos, float_fn)
XP_UNARY_DEF(tan, tan, float_fn)
XP_UNARY_DEF(asin, asin, float_fn)
XP_UNARY_DEF(acos, acos, float_fn)
XP_UNARY_DEF(atan, atan, float_fn)
XP_UNARY_DEF(sinh, sinh, float_fn)
XP_UNARY_DEF(cosh, cosh, float_fn)
XP_UNARY_DEF(tanh, tanh, float_fn)
XP_UNARY_DEF(acosh, acosh, float_fn)
XP_UNARY_DEF(asinh, asinh, float_fn)
XP_UNARY_DEF(atanh, atanh, float_fn)
XP_UNARY_DEF(signbit, signbit, signbit)
XP_UNARY_DEF(floor, floor, rounding)
XP_UNARY_DEF(ceil, ceil, rounding)
XP_UNARY_DEF(round, round, rounding)
XP_UNARY_DEF(trunc, trunc, rounding)
XP_UNARY_DEF(isnan, isnan, predicate)
XP_UNARY_DEF(isinf, isinf, predicate)
XP_UNARY_DEF(isfinite, isfinite, predicate)
XP_UNARY_DEF(logical_not, logical_not, logical)
XP_UNARY_DEF(bitwise_invert, bitwise_invert, bitwise)
XP_BINARY_DEF(add, add, arith)
XP_BINARY_DEF(subtract, subtract, arith_no_bool)
XP_BINARY_DEF(multiply, multiply, arith)
XP_BINARY_DEF(divide, divide, divide)
XP_BINARY_DEF(floor_divide, floor_divide, arith_int8_bool)
XP_BINARY_DEF(remainder, remainder, arith_int8_bool)
XP_BINARY_DEF(pow, pow, arith_int8_bool)
XP_BINARY_DEF(atan2, atan2, float_fn)
XP_BINARY_DEF(hypot, hypot, float_fn)
XP_BINARY_DEF(copysign, copysign, float_fn)
XP_BINARY_DEF(nextafter, nextafter, nextafter)
XP_BINARY_DEF(logaddexp, add, logaddexp)
XP_BINARY_DEF(minimum, minimum, arith)
XP_BINARY_DEF(maximum, maximum, arith)
XP_BINARY_DEF(equal, equal, compare)
XP_BINARY_DEF(not_equal, not_equal, compare)
XP_BINARY_DEF(less, less, compare)
XP_BINARY_DEF(less_equal, less_equal, compare)
XP_BINARY_DEF(greater, greater, compare)
XP_BINARY_DEF(greater_equal, greater_equal, compare)
XP_BINARY_DEF(logical_and, logical_and, logical)
XP_BINARY_DEF(logical_or, logical_or, logical)
XP_BINARY_DEF(logical_xor, logical_xor, logical)
XP_BINARY_DEF(bitwise_and, bitwise_and, bitwise)
XP_BINARY_DEF(bitwise_or, bitwise_or, bitwise)
XP_BINARY_DEF(bitwise_xor, bitwise_xor, bitwise)
XP_BINARY_DEF(bitwise_left_shift, left_shift, shift)
XP_BINARY_DEF(bitwise_right_shift, right_shift, shift)
#undef XP_UNARY_DEF
#undef XP_BINARY_DEF

Array real(const Operand& x, const Out& out) {
  return detail::apply(detail::Op::real, Rule::part, "real", {&x}, out);
}
Array imag(const Operand& x, const Out& out) {
  return detail::apply(detail::Op::imag, Rule::part, "imag", {&x}, out);
}
Array conj(const Operand& x, const Out& out) {
  return detail::apply(detail::Op::conj, Rule::part, "conj", {&x}, out);
}

Array positive(const Operand& x, const Out& out) {
  return detail::apply(detail::Op::cast, Rule::arith_no_bool, "positive", {&x}, out);
}
// 1 / x, exactly rounded: divide with the dtype rule of sqrt (integers -> the smallest float that
// holds them), the weak 1 taking x's dtype.
Array reciprocal(const Operand& x, const Out& out) {
  return detail::apply(detail::Op::divide, Rule::reciprocal, "reciprocal", {&x}, out);
}

namespace {
// Whether `bound` is an integer scalar at or beyond integer dtype t's limit on its side.
bool beyond(const Operand& bound, DType t, bool lower) {
  if (bound.is_array() || bound.scalar().kind() != ScalarKind::integer) return false;
  using i128 = __int128;
  const Scalar& v = bound.scalar();
  const unsigned bits = 8 * static_cast<unsigned>(itemsize(t));
  const bool is_signed = kind(t) == DTypeKind::signed_integer;
  const i128 x = v.is_large_unsigned() ? static_cast<i128>(v.as_uint()) : static_cast<i128>(v.as_int());
  const i128 lo = is_signed ? -(i128{1} << (bits - 1)) : 0;
  const i128 hi = is_signed ? (i128{1} << (bits - 1)) - 1 : (i128{1} << bits) - 1;
  return lower ? x <= lo : x >= hi;
}
}  // namespace

// As NumPy 2's clip (np._core._methods._clip): where x is an integer array, an integer scalar bound
// at or beyond x's dtype's limit on its own side is dropped, so that clip(uint8_array, -1, 300) is
// the array (though maximum(uint8_array, -1) is an error) and the other bound alone decides the
// dtype: clip(int8_array, 200.0, 300) is maximum(int8_array, 200.0), float64 200s. A bound beyond
// the other side (clip(uint8_array, 300, 400)) stays an error, as any scalar that does not fit.
Array clip(const Operand& x, const Operand& min, const Operand& max, const Out& out) {
  if (!x.is_array()) {
    // np.clip makes x an array first (np.asarray): a C++ number x is not weak here but an array of
    // its default dtype, so clip(5, int8_array, 300) is int64 [5, 8], as NumPy's.
    const Scalar& v = x.scalar();
    const DType t = v.kind() == ScalarKind::boolean    ? DType::bool_
                    : v.kind() == ScalarKind::floating ? DType::float64
                    : v.is_large_unsigned()            ? DType::uint64
                                                       : DType::int64;
    const Operand* with_array = min.is_array() ? &min : max.is_array() ? &max : nullptr;
    const Device device = with_array != nullptr ? with_array->array().device() : default_device();
    const Array as_array = full(Shape{}, v, t, device);
    return clip(as_array, min, max, out);
  }
  const DType t = x.array().dtype();
  if (kind(t) == DTypeKind::signed_integer || kind(t) == DTypeKind::unsigned_integer) {
    const bool no_lo = beyond(min, t, true), no_hi = beyond(max, t, false);
    if (no_lo && no_hi) return positive(x, out);
    if (no_lo) return minimum(x, max, out);
    if (no_hi) return maximum(x, min, out);
  }
  return detail::apply(detail::Op::clip, Rule::arith, "clip", {&x, &min, &max}, out);
}
Array where(const Operand& condition, const Operand& x, const Operand& y, const Out& out) {
  return detail::apply(detail::Op::where, Rule::where, "where", {&condition, &x, &y}, out);
}
Array fma(const Operand& x, const Operand& y, const Operand& z, const Out& out) {
  return detail::apply(detail::Op::fma, Rule::fma, "fma", {&x, &y, &z}, out);
}

void copyto(const Array& dst, const Operand& src) {
  const detail::ImplPtr& d = detail::impl_of(dst);
  if (src.is_array()) {
    // As NumPy's copyto (and so a[idx] = v): leading axes of length 1 beyond dst's are dropped.
    Array source = src.array();
    const std::size_t snd = detail::impl_of(source)->shape.size(), dnd = d->shape.size();
    if (snd > dnd) {
      const Shape& ss = detail::impl_of(source)->shape;
      if (std::all_of(ss.begin(), ss.begin() + static_cast<std::ptrdiff_t>(snd - dnd),
                      [](std::int64_t e) { return e == 1; }))
        source = reshape(source, Shape(ss.begin() + static_cast<std::ptrdiff_t>(snd - dnd), ss.end()));
    }
    const detail::ImplPtr& s = detail::impl_of(source);
    if (!(s->device == d->device)) throw DeviceMismatch("copyto", s->device.str(), d->device.str());
    if (detail::broadcast_shape(s->shape, d->shape) != d->shape) {
      throw ValueError("copyto: could not broadcast input array from shape " + detail::shape_str(s->shape) +
                       " into shape " + detail::shape_str(d->shape));
    }
    if (!detail::can_cast_same_kind(s->dtype, d->dtype)) {
      throw TypeError("copyto: cannot cast from " + std::string(name(s->dtype)) + " to " + std::string(name(d->dtype)) +
                      " with casting rule 'same_kind'");
    }
    detail::evaluate_into(s, d);
    return;
  }
  // A weak scalar: converted to dst's dtype under NEP 50 (an integer that does not fit is an error).
  const Scalar& v = src.scalar();
  const bool inexact = kind(d->dtype) == DTypeKind::floating || kind(d->dtype) == DTypeKind::complex_floating;
  if (v.kind() == ScalarKind::integer && !inexact && d->dtype != DType::bool_) {
    const bool fits = v.is_large_unsigned() ? value_fits(d->dtype, v.as_uint()) : value_fits(d->dtype, v.as_int());
    if (!fits) throw OverflowError("copyto: the integer does not fit " + std::string(name(d->dtype)));
  }
  if (v.kind() == ScalarKind::floating && !inexact) {
    throw TypeError("copyto: cannot cast a float to " + std::string(name(d->dtype)) + " with casting rule 'same_kind'");
  }
  if (v.kind() == ScalarKind::integer && d->dtype == DType::bool_) {  // NumPy's copyto: even 0 and 1
    throw TypeError("copyto: cannot cast an integer to bool with casting rule 'same_kind'");
  }
  detail::evaluate_into(detail::scalar_node(v, d->dtype, d->device, d->backend, "copyto"), d);
}

Array operator+(const Operand& a, const Operand& b) {
  return add(a, b);
}
Array operator-(const Operand& a, const Operand& b) {
  return subtract(a, b);
}
Array operator*(const Operand& a, const Operand& b) {
  return multiply(a, b);
}
Array operator/(const Operand& a, const Operand& b) {
  return divide(a, b);
}
Array operator%(const Operand& a, const Operand& b) {
  return remainder(a, b);
}
Array operator&(const Operand& a, const Operand& b) {
  return bitwise_and(a, b);
}
Array operator|(const Operand& a, const Operand& b) {
  return bitwise_or(a, b);
}
Array operator^(const Operand& a, const Operand& b) {
  return bitwise_xor(a, b);
}
Array operator<<(const Operand& a, const Operand& b) {
  return bitwise_left_shift(a, b);
}
Array operator>>(const Operand& a, const Operand& b) {
  return bitwise_right_shift(a, b);
}
Array operator==(const Operand& a, const Operand& b) {
  return equal(a, b);
}
Array operator!=(const Operand& a, const Operand& b) {
  return not_equal(a, b);
}
Array operator<(const Operand& a, const Operand& b) {
  return less(a, b);
}
Array operator<=(const Operand& a, const Operand& b) {
  return less_equal(a, b);
}
Array operator>(const Operand& a, const Operand& b) {
  return greater(a, b);
}
Array operator>=(const Operand& a, const Operand& b) {
  return greater_equal(a, b);
}
Array operator-(const Array& a) {
  return negative(a);
}
Array operator+(const Array& a) {
  return positive(a);
}
Array operator~(const Array& a) {
  return bitwise_invert(a);
}
Array operator!(const Array& a) {
  return logical_not(a);
}

}  // namespace xp
