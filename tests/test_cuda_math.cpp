// The transcendental functions against a correctly rounded reference (one precision up, rounded:
// math_cases.hpp), through xp's arrays:
// - on a CUDA device, float32 and float64 within the bounds xp states for the CUDA math library
//   (cuda_ulp_bound, docs/semantics.md), special values by class as C's libm and within the bound, and the Annex F
//   table;
// - float16 and bfloat16, computed in float32 and rounded once, within 1 ulp on the CPU and on a GPU.
// The GPU tests carry the label `gpu` (CudaMathGpu.*); HalfMath.* runs everywhere.
#include <gtest/gtest.h>
#include <math.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/vmath.hpp"
#include "backend/cuda/ew_source.hpp"
#include "math_cases.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using namespace xp_math_cases;
using xp::Array;
using xp::Device;

const Device kCpu = Device::cpu();

Array apply(Op op, const Array& a, const Array& b) {
  switch (op) {
    case Op::exp:
      return xp::exp(a);
    case Op::expm1:
      return xp::expm1(a);
    case Op::log:
      return xp::log(a);
    case Op::log1p:
      return xp::log1p(a);
    case Op::log2:
      return xp::log2(a);
    case Op::log10:
      return xp::log10(a);
    case Op::sin:
      return xp::sin(a);
    case Op::cos:
      return xp::cos(a);
    case Op::tan:
      return xp::tan(a);
    case Op::asin:
      return xp::asin(a);
    case Op::acos:
      return xp::acos(a);
    case Op::atan:
      return xp::atan(a);
    case Op::sinh:
      return xp::sinh(a);
    case Op::cosh:
      return xp::cosh(a);
    case Op::tanh:
      return xp::tanh(a);
    case Op::acosh:
      return xp::acosh(a);
    case Op::asinh:
      return xp::asinh(a);
    case Op::atanh:
      return xp::atanh(a);
    case Op::atan2:
      return xp::atan2(a, b);
    case Op::hypot:
      return xp::hypot(a, b);
    case Op::pow:
      return xp::pow(a, b);
    default:
      ADD_FAILURE() << "not a transcendental function: " << xp::detail::op_name(op);
      return a;
  }
}

std::string args_text(const MathFn& fn, double a, double b) {
  char buf[80];
  if (fn.binary()) {
    std::snprintf(buf, sizeof buf, "%.17g, %.17g", a, b);
  } else {
    std::snprintf(buf, sizeof buf, "%.17g", a);
  }
  return buf;
}

// fn over (a, b) on `device`, read back on the CPU.
template <class T>
std::vector<T> run_on(const Device& device, const MathFn& fn, const std::vector<T>& a, const std::vector<T>& b) {
  const Array x = xp::asarray(a, std::nullopt, device);
  const Array y = xp::asarray(b, std::nullopt, device);
  const Array r = apply(fn.op, x, y);
  EXPECT_EQ(r.device(), device) << fn.name;
  EXPECT_EQ(r.dtype(), dtype_of<T>) << fn.name;
  return r.to_device(kCpu).to_vector<T>();
}

template <class T>
double gpu_max_error(const Device& gpu, const MathFn& fn, std::string& worst) {
  std::vector<T> a, b;
  make_inputs<T>(fn, a, b);
  const std::vector<T> out = run_on<T>(gpu, fn, a, b);
  double m = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const T ref = reference<T>(fn, a[i], b[i]);
    const double e = ulp_distance(out[i], ref);
    if (e > m) {
      m = e;
      char buf[240];
      std::snprintf(buf, sizeof buf, "%s(%s) = %.17g, reference %.17g", fn.name,
                    args_text(fn, double(a[i]), double(b[i])).c_str(), double(out[i]), double(ref));
      worst = buf;
    }
  }
  return m;
}

// ---- float16 and bfloat16: computed in float32, rounded once ----

// Distance in ulp between two 16-bit floats given as bits (+0 == -0); NaN only matches NaN.
double ulp16(DType t, std::uint16_t g, std::uint16_t r) {
  auto is_nan = [t](std::uint16_t u) {
    return t == DType::float16 ? (u & 0x7C00) == 0x7C00 && (u & 0x03FF) != 0
                               : (u & 0x7F80) == 0x7F80 && (u & 0x007F) != 0;
  };
  if (is_nan(g) || is_nan(r)) return is_nan(g) && is_nan(r) ? 0 : INFINITY;
  auto ordered = [](std::uint16_t u) {
    const int mag = u & 0x7FFF;
    return (u & 0x8000) != 0 ? -mag : mag;
  };
  const int d = ordered(g) - ordered(r);
  return d < 0 ? -d : d;
}

// The elements of a 16-bit array as bits, in C order.
std::vector<std::uint16_t> bits16(const Array& a) {
  const Array h = a.to_device(kCpu).copy();
  std::vector<std::uint16_t> v(static_cast<std::size_t>(h.size()));
  std::memcpy(v.data(), h.data(), v.size() * sizeof(std::uint16_t));
  return v;
}

// The worst distance of fn over the float32 inputs rounded to t, on `device`, against the double
// function of the same (rounded) inputs, rounded once to t.
double half_max_error(const Device& device, const MathFn& fn, DType t, std::string& worst) {
  std::vector<float> a32, b32;
  make_inputs<float>(fn, a32, b32);
  const Array a = xp::asarray(a32, std::nullopt, kCpu).astype(t);
  const Array b = xp::asarray(b32, std::nullopt, kCpu).astype(t);
  const std::vector<double> ad = a.astype(xp::DType::float64).to_vector<double>();
  const std::vector<double> bd = b.astype(xp::DType::float64).to_vector<double>();
  std::vector<double> want(ad.size());
  for (std::size_t i = 0; i < ad.size(); ++i) want[i] = fn.binary() ? fn.d2(ad[i], bd[i]) : fn.d1(ad[i]);
  const std::vector<std::uint16_t> ref = bits16(xp::asarray(want, std::nullopt, kCpu).astype(t));
  const Array r = apply(fn.op, a.to_device(device), b.to_device(device));
  EXPECT_EQ(r.dtype(), t) << fn.name;
  const std::vector<std::uint16_t> got = bits16(r);
  double m = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = ulp16(t, got[i], ref[i]);
    if (e > m) {
      m = e;
      char buf[240];
      std::snprintf(buf, sizeof buf, "%s(%s): bits 0x%04x, reference 0x%04x", fn.name,
                    args_text(fn, ad[i], bd[i]).c_str(), got[i], ref[i]);
      worst = buf;
    }
  }
  return m;
}

void check_half(const Device& device) {
  for (const MathFn& fn : kFns) {
    for (DType t : {DType::float16, DType::bfloat16}) {
      std::string worst;
      const double e = half_max_error(device, fn, t, worst);
      std::printf("[ ulp ] %-4s %-6s %-8s %g (bound 1)\n", device.is_cuda() ? "cuda" : "cpu", fn.name,
                  std::string(xp::name(t)).c_str(), e);
      EXPECT_LE(e, 1.0) << device.str() << " " << xp::name(t) << " " << worst;
    }
  }
}

// ---- special values on a GPU ----

enum class Zero { no, pos, neg };

// The GPU's result for a special operand against the reference (one precision up, rounded; its
// classes are libm's): NaN and infinities by class exactly, a zero's sign exactly, and otherwise (a
// finite result where the reference is finite) within the bound: the CUDA functions' error may round
// a tiny result to zero, or a zero to the smallest subnormal. (libm's own value is not the measure:
// float64 log10(1 - 2^-52) is 1 ulp below the correctly rounded result in glibc and 1 ulp above it in
// CUDA, 2 ulp apart.)
template <class T>
bool same_special(T got, T want, double bound) {
  if (isnan(got) || isnan(want) || isinf(got) || isinf(want)) return cls(got) == cls(want);
  if (got == 0 && want == 0) return signbit(got) == signbit(want);
  if ((got == 0 || want == 0) && signbit(got) != signbit(want)) return false;
  return ulp_distance(got, want) <= bound;
}

template <class T>
void check_special_classes_gpu(const Device& gpu, const MathFn& fn) {
  std::vector<T> a, b;
  special_operands<T>(fn, a, b);
  const std::vector<T> out = run_on<T>(gpu, fn, a, b);
  const double bound = xp::detail::cuda::cuda_ulp_bound(fn.op, dtype_of<T>);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const T want = reference<T>(fn, a[i], b[i]);
    EXPECT_EQ(cls(want), cls(libm<T>(fn, a[i], b[i])))
        << fn.name << "(" << args_text(fn, double(a[i]), double(b[i])) << "): the reference and libm differ in class";
    EXPECT_TRUE(same_special(out[i], want, bound))
        << (sizeof(T) == 4 ? "float32 " : "float64 ") << fn.name << "(" << args_text(fn, double(a[i]), double(b[i]))
        << ") = " << out[i] << " (" << cls_name(cls(out[i])) << "), the reference is " << want << " ("
        << cls_name(cls(want)) << ")";
  }
}

template <class T>
void check_annex_f_gpu(const Device& gpu) {
  const std::vector<AnnexFRow<T>> rows = annex_f_rows<T>();
  for (const AnnexFRow<T>& r : rows) {
    const MathFn* fn = nullptr;
    for (const MathFn& f : kFns) fn = f.op == r.op ? &f : fn;
    ASSERT_NE(fn, nullptr);
    const T out = run_on<T>(gpu, *fn, std::vector<T>{r.a}, std::vector<T>{r.b})[0];
    const std::string what = std::string(sizeof(T) == 4 ? "float32 " : "float64 ") + fn->name + "(" +
                             args_text(*fn, double(r.a), double(r.b)) + ")";
    if (isnan(r.want)) {
      EXPECT_TRUE(isnan(out)) << what << " = " << out;
    } else {
      EXPECT_EQ(cls(out), cls(r.want)) << what << " = " << out;
      EXPECT_LE(ulp_distance(out, r.want), 1.0) << what << " = " << out << ", want " << r.want;
    }
  }
}

}  // namespace

TEST(HalfMath, CpuFloat16AndBfloat16WithinOneUlpOfTheCorrectlyRoundedResult) {
  check_half(kCpu);
}

TEST(CudaMathGpu, Float16AndBfloat16WithinOneUlpOfTheCorrectlyRoundedResult) {
  XP_REQUIRE_GPU();
  check_half(Device::cuda(0));
}

TEST(CudaMathGpu, Float32AndFloat64WithinTheStatedBoundOfTheCorrectlyRoundedResult) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (const MathFn& fn : kFns) {
    std::string worst32, worst64;
    const double e32 = gpu_max_error<float>(gpu, fn, worst32);
    const double e64 = gpu_max_error<double>(gpu, fn, worst64);
    const double b32 = xp::detail::cuda::cuda_ulp_bound(fn.op, DType::float32);
    const double b64 = xp::detail::cuda::cuda_ulp_bound(fn.op, DType::float64);
    std::printf("[ ulp ] cuda %-6s float32 %g (bound %g)  float64 %g (bound %g)\n", fn.name, e32, b32, e64, b64);
    EXPECT_GT(b32, 0) << fn.name;
    EXPECT_GT(b64, 0) << fn.name;
    EXPECT_LE(e32, b32) << "float32 " << worst32;
    EXPECT_LE(e64, b64) << "float64 " << worst64;
  }
}

TEST(CudaMathGpu, SpecialValuesByClassAndWithinTheBound) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (const MathFn& fn : kFns) {
    check_special_classes_gpu<float>(gpu, fn);
    check_special_classes_gpu<double>(gpu, fn);
  }
}

TEST(CudaMathGpu, AnnexFSpecialCases) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  check_annex_f_gpu<float>(gpu);
  check_annex_f_gpu<double>(gpu);
}
