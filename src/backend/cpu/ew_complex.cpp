// The complex tile kernels (complex64, complex128): backend/complex_math.cuh's functions over a
// tile, the casts to and from complex, and where. The CUDA backend pastes the same complex_math.cuh
// into its kernels, so the exact operations give the same bits on both devices and the others the
// same algorithm over each device's real functions (docs/semantics.md, "Complex numbers").
//
// Each element is computed from its own operands alone, so its bits never depend on n or on its
// position in the tile. `out` may be an operand's buffer: narrowing kernels (complex -> real or
// bool) walk forward, widening casts (real -> complex) walk backward in chunks, so that no operand
// is overwritten before it is read.

#include <cstdint>
#include <cstring>

#include "backend/cpu/complex_math.hpp"
#include "backend/cpu/tile_ops.hpp"

namespace xp::detail::cpu {
namespace {

using std::int64_t;
using std::uint8_t;

template <class T>
using Cx = xp_complex<T>;

// ---- the operations on one element ----

template <Op O, class T>
auto apply(Cx<T> z) {
  if constexpr (O == Op::negative)
    return xp_cm_neg(z);
  else if constexpr (O == Op::conj)
    return xp_cm_conj(z);
  else if constexpr (O == Op::real)
    return z.re;
  else if constexpr (O == Op::imag)
    return z.im;
  else if constexpr (O == Op::abs)
    return xp_cm_abs(z);
  else if constexpr (O == Op::sign)
    return xp_cm_sign(z);
  else if constexpr (O == Op::square)
    return xp_cm_square(z);
  else if constexpr (O == Op::sqrt)
    return xp_cm_sqrt(z);
  else if constexpr (O == Op::exp)
    return xp_cm_exp(z);
  else if constexpr (O == Op::expm1)
    return xp_cm_expm1(z);
  else if constexpr (O == Op::log)
    return xp_cm_log(z);
  else if constexpr (O == Op::log1p)
    return xp_cm_log1p(z);
  else if constexpr (O == Op::log2)
    return xp_cm_log2(z);
  else if constexpr (O == Op::log10)
    return xp_cm_log10(z);
  else if constexpr (O == Op::sin)
    return xp_cm_sin(z);
  else if constexpr (O == Op::cos)
    return xp_cm_cos(z);
  else if constexpr (O == Op::tan)
    return xp_cm_tan(z);
  else if constexpr (O == Op::asin)
    return xp_cm_asin(z);
  else if constexpr (O == Op::acos)
    return xp_cm_acos(z);
  else if constexpr (O == Op::atan)
    return xp_cm_atan(z);
  else if constexpr (O == Op::sinh)
    return xp_cm_sinh(z);
  else if constexpr (O == Op::cosh)
    return xp_cm_cosh(z);
  else if constexpr (O == Op::tanh)
    return xp_cm_tanh(z);
  else if constexpr (O == Op::asinh)
    return xp_cm_asinh(z);
  else if constexpr (O == Op::acosh)
    return xp_cm_acosh(z);
  else if constexpr (O == Op::atanh)
    return xp_cm_atanh(z);
  else if constexpr (O == Op::round)
    return xp_cm_round(z);
  else if constexpr (O == Op::isnan)
    return uint8_t(xp_cm_isnan(z) ? 1 : 0);
  else if constexpr (O == Op::isinf)
    return uint8_t(xp_cm_isinf(z) ? 1 : 0);
  else {
    static_assert(O == Op::isfinite);
    return uint8_t(xp_cm_isfinite(z) ? 1 : 0);
  }
}

template <Op O, class T>
auto apply(Cx<T> a, Cx<T> b) {
  if constexpr (O == Op::add)
    return xp_cm_add(a, b);
  else if constexpr (O == Op::subtract)
    return xp_cm_sub(a, b);
  else if constexpr (O == Op::multiply)
    return xp_cm_mul(a, b);
  else if constexpr (O == Op::divide)
    return xp_cm_div(a, b);
  else if constexpr (O == Op::pow)
    return xp_cm_pow(a, b);
  else if constexpr (O == Op::equal)
    return uint8_t(xp_cm_equal(a, b) ? 1 : 0);
  else {
    static_assert(O == Op::not_equal);
    return uint8_t(xp_cm_equal(a, b) ? 0 : 1);
  }
}

// ---- the loops ----

// Results are never wider than the operands here: element i is read before out[i] is written and
// out[i] overlaps no later operand element, forward.
template <Op O, class T>
void unary_kernel(const void* const* in, void* out, int64_t n) {
  const auto* a = static_cast<const Cx<T>*>(in[0]);
  using R = decltype(apply<O>(Cx<T>{}));
  auto* r = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const Cx<T> z = a[i];
    const R y = apply<O>(z);
    r[i] = y;
  }
}

template <Op O, class T>
void binary_kernel(const void* const* in, void* out, int64_t n) {
  const auto* a = static_cast<const Cx<T>*>(in[0]);
  const auto* b = static_cast<const Cx<T>*>(in[1]);
  using R = decltype(apply<O>(Cx<T>{}, Cx<T>{}));
  auto* r = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const Cx<T> x = a[i], y = b[i];
    const R v = apply<O>(x, y);
    r[i] = v;
  }
}

// complex(re, im) from two operands of the component type: wider than either operand, so backward.
template <class T>
void make_kernel(const void* const* in, void* out, int64_t n) {
  const T* re = static_cast<const T*>(in[0]);
  const T* im = static_cast<const T*>(in[1]);
  auto* r = static_cast<Cx<T>*>(out);
  for (int64_t i = n; i-- > 0;) {
    const T x = re[i], y = im[i];
    r[i] = xp_cm_make(x, y);
  }
}

// Pure selection of the bits.
template <class T>
void where_kernel(const void* const* in, void* out, int64_t n) {
  const uint8_t* c = static_cast<const uint8_t*>(in[0]);
  const auto* a = static_cast<const Cx<T>*>(in[1]);
  const auto* b = static_cast<const Cx<T>*>(in[2]);
  auto* r = static_cast<Cx<T>*>(out);
  for (int64_t i = 0; i < n; ++i) r[i] = c[i] != 0 ? a[i] : b[i];
}

// ---- casts ----

constexpr int64_t kChunk = 256;

template <class T>
constexpr DType component_of = sizeof(T) == 4 ? DType::float32 : DType::float64;

// A real dtype -> complex: converted to the component type as a cast to it (the exact kernels),
// imaginary part +0. Chunks from the end: the result is wider than the operand.
template <int From, class T>
void real_to_complex_kernel(const void* const* in, void* out, int64_t n) {
  const auto from = static_cast<DType>(From);
  const TileFn cast = exact_tile_fn(Op::cast, from, component_of<T>);
  const std::size_t item = itemsize(from);
  auto* r = static_cast<Cx<T>*>(out);
  T re[kChunk];
  for (int64_t end = n; end > 0;) {
    const int64_t start = end > kChunk ? end - kChunk : 0;
    const void* src[1] = {static_cast<const std::byte*>(in[0]) + static_cast<std::size_t>(start) * item};
    cast(src, re, end - start);
    for (int64_t i = end; i-- > start;) r[i] = xp_cm_make(re[i - start], T(0));
    end = start;
  }
}

// Complex -> a real dtype: the real part, converted as from the component type; complex -> bool:
// true when either part is nonzero (NaN too). Forward: the result is narrower.
template <class T, int To>
void complex_to_real_kernel(const void* const* in, void* out, int64_t n) {
  const auto to = static_cast<DType>(To);
  const auto* a = static_cast<const Cx<T>*>(in[0]);
  if (to == DType::bool_) {
    auto* r = static_cast<uint8_t*>(out);
    for (int64_t i = 0; i < n; ++i) {
      const Cx<T> z = a[i];
      r[i] = xp_cm_nonzero(z) ? 1 : 0;
    }
    return;
  }
  const TileFn cast = exact_tile_fn(Op::cast, component_of<T>, to);
  const std::size_t item = itemsize(to);
  T re[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t m = n - start < kChunk ? n - start : kChunk;
    for (int64_t i = 0; i < m; ++i) re[i] = a[start + i].re;
    const void* src[1] = {re};
    cast(src, static_cast<std::byte*>(out) + static_cast<std::size_t>(start) * item, m);
  }
}

// complex64 <-> complex128 componentwise (to nearest even), or the same type copied. complex64 ->
// complex128 widens: backward.
template <class F, class T>
void complex_to_complex_kernel(const void* const* in, void* out, int64_t n) {
  const auto* a = static_cast<const Cx<F>*>(in[0]);
  auto* r = static_cast<Cx<T>*>(out);
  if constexpr (sizeof(T) > sizeof(F)) {
    for (int64_t i = n; i-- > 0;) {
      const Cx<F> z = a[i];
      r[i] = xp_cm_make(static_cast<T>(z.re), static_cast<T>(z.im));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const Cx<F> z = a[i];
      r[i] = xp_cm_make(static_cast<T>(z.re), static_cast<T>(z.im));
    }
  }
}

constexpr int kRealDTypes = static_cast<int>(DType::float64) + 1;

template <class T, int... I>
TileFn to_complex(DType from, std::integer_sequence<int, I...>) {
  TileFn r = nullptr;
  ((static_cast<int>(from) == I ? (r = &real_to_complex_kernel<I, T>, 0) : 0), ...);
  return r;
}
template <class T, int... I>
TileFn from_complex(DType to, std::integer_sequence<int, I...>) {
  TileFn r = nullptr;
  ((static_cast<int>(to) == I ? (r = &complex_to_real_kernel<T, I>, 0) : 0), ...);
  return r;
}

TileFn cast_fn(DType from, DType to) {
  const auto reals = std::make_integer_sequence<int, kRealDTypes>{};
  const bool cf = is_complex(from), ct = is_complex(to);
  if (cf && ct) {
    if (from == DType::complex64)
      return to == DType::complex64 ? &complex_to_complex_kernel<float, float>
                                    : &complex_to_complex_kernel<float, double>;
    return to == DType::complex64 ? &complex_to_complex_kernel<double, float>
                                  : &complex_to_complex_kernel<double, double>;
  }
  if (ct) return to == DType::complex64 ? to_complex<float>(from, reals) : to_complex<double>(from, reals);
  if (cf) return from == DType::complex64 ? from_complex<float>(to, reals) : from_complex<double>(to, reals);
  return nullptr;
}

// ---- dispatch ----

template <class T>
TileFn op_fn(Op op) {
  switch (op) {
#define XP_UNARY(O) \
  case Op::O:       \
    return &unary_kernel<Op::O, T>;
#define XP_BINARY(O) \
  case Op::O:        \
    return &binary_kernel<Op::O, T>;
    XP_UNARY(negative)
    XP_UNARY(conj)
    XP_UNARY(real)
    XP_UNARY(imag)
    XP_UNARY(abs)
    XP_UNARY(sign)
    XP_UNARY(square)
    XP_UNARY(sqrt)
    XP_UNARY(exp)
    XP_UNARY(expm1)
    XP_UNARY(log)
    XP_UNARY(log1p)
    XP_UNARY(log2)
    XP_UNARY(log10)
    XP_UNARY(sin)
    XP_UNARY(cos)
    XP_UNARY(tan)
    XP_UNARY(asin)
    XP_UNARY(acos)
    XP_UNARY(atan)
    XP_UNARY(sinh)
    XP_UNARY(cosh)
    XP_UNARY(tanh)
    XP_UNARY(asinh)
    XP_UNARY(acosh)
    XP_UNARY(atanh)
    XP_UNARY(round)
    XP_UNARY(isnan)
    XP_UNARY(isinf)
    XP_UNARY(isfinite)
    XP_BINARY(add)
    XP_BINARY(subtract)
    XP_BINARY(multiply)
    XP_BINARY(divide)
    XP_BINARY(pow)
    XP_BINARY(equal)
    XP_BINARY(not_equal)
#undef XP_UNARY
#undef XP_BINARY
    default:
      return nullptr;
  }
}

// The result dtype each operation has on a complex operand (ir.hpp's rules), or none.
bool result_ok(Op op, DType operand, DType result) {
  switch (op) {
    case Op::real:
    case Op::imag:
    case Op::abs:
      return result == component_dtype(operand);
    case Op::isnan:
    case Op::isinf:
    case Op::isfinite:
    case Op::equal:
    case Op::not_equal:
      return result == DType::bool_;
    default:
      return result == operand;
  }
}

}  // namespace

TileFn complex_tile_fn(Op op, DType operand, DType result) noexcept {
  if (op == Op::cast) return is_complex(operand) || is_complex(result) ? cast_fn(operand, result) : nullptr;
  if (op == Op::complex) {
    if (operand == DType::float32 && result == DType::complex64) return &make_kernel<float>;
    if (operand == DType::float64 && result == DType::complex128) return &make_kernel<double>;
    return nullptr;
  }
  if (!is_complex(operand)) return nullptr;
  if (op == Op::where) {
    if (operand != result) return nullptr;
    return operand == DType::complex64 ? &where_kernel<float> : &where_kernel<double>;
  }
  if (!result_ok(op, operand, result)) return nullptr;
  return operand == DType::complex64 ? op_fn<float>(op) : op_fn<double>(op);
}

}  // namespace xp::detail::cpu
