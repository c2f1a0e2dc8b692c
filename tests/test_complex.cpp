// Complex arrays in the array layer (docs/semantics.md, "Complex numbers"): the dtype rules of
// operations with complex operands (weak complex scalars, the TypeErrors of orderings), real / imag
// / conj, creation, reductions through the parts, printing, .npy and DLPack, fusion against eager
// evaluation; and, on a GPU (ComplexGpu.*, skipped without one), the same on cuda:0 against the CPU.
// The elementwise kernels themselves are tested against NumPy in test_complex_elementwise.cpp.
#include <gtest/gtest.h>

#include <unistd.h>
#include <complex>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::Array;
using xp::DType;
using c64 = std::complex<float>;
using c128 = std::complex<double>;
using i64 = std::int64_t;

const xp_test::ProcessCache g_process_cache;  // this process's kernel cache

const xp::Device kCpu = xp::Device::cpu();

template <class T>
Array vec(const std::vector<T>& v, const xp::Device& d = kCpu) {
  return xp::asarray(v.data(), v.size(), xp::dtype_of<T>(), {static_cast<i64>(v.size())}, d);
}
template <class T>
Array mat(const std::vector<T>& v, i64 rows, i64 cols, const xp::Device& d = kCpu) {
  return xp::asarray(v.data(), v.size(), xp::dtype_of<T>(), {rows, cols}, d);
}

std::string str(const Array& a) {
  return a.str();
}

// Parts of float type T (the components of a complex array, or a real float array's elements) with
// the same bits, a NaN matching any NaN: a NaN's sign and payload are nobody's promise (x86 makes
// negative quiet NaNs where a GPU makes positive ones), so exact operations agree on NaN as a class.
template <class T>
bool same_parts(const void* a, const void* b, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T x, y;
    std::memcpy(&x, static_cast<const std::byte*>(a) + i * sizeof(T), sizeof(T));
    std::memcpy(&y, static_cast<const std::byte*>(b) + i * sizeof(T), sizeof(T));
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::memcmp(&x, &y, sizeof(T)) != 0) return false;
  }
  return true;
}

// The same bits, element by element (signed zeros included; a NaN matching any NaN).
void expect_same_bits(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(std::vector<i64>(got.shape().begin(), got.shape().end()),
            std::vector<i64>(want.shape().begin(), want.shape().end()))
      << what;
  const Array g = got.to_device(kCpu).copy(), w = want.to_device(kCpu).copy();
  const std::size_t bytes = static_cast<std::size_t>(g.size()) * xp::itemsize(g.dtype());
  const DType t = g.dtype();
  const bool same = t == DType::complex64 || t == DType::float32    ? same_parts<float>(g.data(), w.data(), bytes / 4)
                    : t == DType::complex128 || t == DType::float64 ? same_parts<double>(g.data(), w.data(), bytes / 8)
                                                                    : std::memcmp(g.data(), w.data(), bytes) == 0;
  EXPECT_TRUE(same) << what << "\n got: " << str(g) << "\nwant: " << str(w);
}

// ---- dtype rules -----------------------------------------------------------------------------

TEST(Complex, WeakComplexScalarsAndPromotion) {
  const Array f32 = vec<float>({1, 2}), f64 = vec<double>({1, 2}), i32 = vec<std::int32_t>({1, 2});
  const Array z64 = vec<c64>({{1, 1}, {2, -1}});
  EXPECT_EQ((f32 + c128(0, 1)).dtype(), DType::complex64);  // NEP 50: the scalar is weak
  EXPECT_EQ((f64 * c128(0, 1)).dtype(), DType::complex128);
  EXPECT_EQ((i32 + c128(0, 1)).dtype(), DType::complex128);
  EXPECT_EQ((z64 + 1.5).dtype(), DType::complex64);
  EXPECT_EQ((z64 + 2).dtype(), DType::complex64);
  EXPECT_EQ((z64 * f64).dtype(), DType::complex128);
  EXPECT_EQ((z64 * i32).dtype(), DType::complex128);
  EXPECT_EQ(xp::abs(z64).dtype(), DType::float32);
  EXPECT_EQ(xp::real(z64).dtype(), DType::float32);
  EXPECT_EQ(xp::imag(vec<c128>({{1, 2}})).dtype(), DType::float64);
  EXPECT_EQ(xp::conj(z64).dtype(), DType::complex64);
  EXPECT_EQ((z64 == c128(1, 1)).dtype(), DType::bool_);
  EXPECT_EQ(xp::isnan(z64).dtype(), DType::bool_);
  EXPECT_EQ(xp::result_type(f32, c128(0, 1)), DType::complex64);
  EXPECT_EQ(xp::result_type({xp::TypeArg(DType::float16), xp::TypeArg(c128(1, 0))}), DType::complex64);
}

TEST(Complex, OrderingsAndRealOnlyFunctionsAreTypeErrors) {
  const Array z = vec<c128>({{1, 1}, {2, -1}});
  EXPECT_THROW(z < z, xp::TypeError);
  EXPECT_THROW(xp::greater_equal(z, 1), xp::TypeError);
  EXPECT_THROW(xp::minimum(z, z), xp::TypeError);
  EXPECT_THROW(xp::maximum(z, 0), xp::TypeError);
  EXPECT_THROW(xp::clip(z, 0, 1), xp::TypeError);
  EXPECT_THROW(xp::floor(z), xp::TypeError);
  EXPECT_THROW(xp::trunc(z), xp::TypeError);
  EXPECT_THROW(xp::floor_divide(z, z), xp::TypeError);
  EXPECT_THROW(xp::remainder(z, 2), xp::TypeError);
  EXPECT_THROW(xp::atan2(z, z), xp::TypeError);
  EXPECT_THROW(xp::hypot(z, z), xp::TypeError);
  EXPECT_THROW(xp::copysign(z, z), xp::TypeError);
  EXPECT_THROW(xp::nextafter(z, z), xp::TypeError);
  EXPECT_THROW(xp::logaddexp(z, z), xp::TypeError);
  EXPECT_THROW(xp::signbit(z), xp::TypeError);
  EXPECT_THROW(xp::bitwise_and(z, z), xp::TypeError);
  EXPECT_THROW(xp::fma(z, z, z), xp::TypeError);
  EXPECT_THROW(xp::max(z), xp::TypeError);
  EXPECT_THROW(xp::argmin(z), xp::TypeError);
  EXPECT_THROW(xp::var(z), xp::TypeError);
  EXPECT_THROW(vec<float>({1}) < c128(0, 1), xp::TypeError);
  EXPECT_THROW(xp::conj(xp::asarray({true, false})), xp::TypeError);
  // A complex number does not go into a real array under same_kind.
  EXPECT_THROW(xp::full({2}, c128(1, 1), DType::float64), xp::TypeError);
  EXPECT_THROW(xp::copyto(vec<double>({1, 2}), c128(0, 1)), xp::TypeError);
  EXPECT_THROW(xp::copyto(vec<double>({1, 2}), z), xp::TypeError);
  EXPECT_THROW(xp::add(vec<double>({1, 2}), z, xp::Out(vec<double>({0, 0}))), xp::TypeError);
}

// ---- values ----------------------------------------------------------------------------------

TEST(Complex, CreationAndParts) {
  const Array z = xp::full({3}, c128(1.5, -2), DType::complex64);
  EXPECT_EQ(z.dtype(), DType::complex64);
  EXPECT_EQ(z.to_vector<c64>(), (std::vector<c64>{{1.5f, -2.f}, {1.5f, -2.f}, {1.5f, -2.f}}));
  EXPECT_EQ(xp::zeros({2}, DType::complex128).to_vector<c128>(), (std::vector<c128>{0, 0}));
  EXPECT_EQ(xp::ones({2}, DType::complex64).to_vector<c64>(), (std::vector<c64>{1, 1}));
  EXPECT_EQ(xp::full({1}, c128(0, 1)).dtype(), DType::complex128);  // a complex number's own dtype
  EXPECT_EQ(xp::full({1}, 3, DType::complex128).to_vector<c128>(), (std::vector<c128>{3}));
  EXPECT_EQ(xp::asarray(std::vector<c64>{{1, 2}}).item<c64>(), c64(1, 2));
  const Array w = vec<c128>({{1, 2}, {-3, 0.5}, {-0.0, -0.0}});
  EXPECT_EQ(xp::real(w).to_vector<double>(), (std::vector<double>{1, -3, -0.0}));
  EXPECT_EQ(xp::imag(w).to_vector<double>(), (std::vector<double>{2, 0.5, -0.0}));
  const auto c = xp::conj(w).to_vector<c128>();
  EXPECT_EQ(c[1], c128(-3, -0.5));
  EXPECT_TRUE(std::signbit(c[2].imag()) == false) << "conj flips the sign of -0.0 too";
  // A real operand: real and conj give its values, imag zeros of its dtype (NumPy's answers).
  const Array r = vec<float>({1, -2});
  EXPECT_EQ(xp::real(r).to_vector<float>(), (std::vector<float>{1, -2}));
  EXPECT_EQ(xp::imag(r).to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(xp::imag(r).dtype(), DType::float32);
  EXPECT_EQ(xp::conj(r).to_vector<float>(), (std::vector<float>{1, -2}));
  // Casts both ways: a real array to complex, complex to real (the real part), to bool (nonzero).
  EXPECT_EQ(r.astype(DType::complex64).to_vector<c64>(), (std::vector<c64>{1, -2}));
  EXPECT_EQ(w.astype(DType::float64).to_vector<double>(), (std::vector<double>{1, -3, -0.0}));
  EXPECT_EQ(w.astype(DType::bool_).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 1, 0}));
  EXPECT_EQ(w.astype(DType::complex64).to_vector<c64>(), (std::vector<c64>{{1, 2}, {-3, 0.5f}, {-0.0f, -0.0f}}));
  EXPECT_EQ(xp::asarray(std::vector<std::int32_t>{7}).astype(DType::complex128).item<c128>(), c128(7, 0));
}

TEST(Complex, ArithmeticWithExactValues) {
  const Array a = vec<c128>({{1, 2}, {3, -4}}), b = vec<c128>({{2, 1}, {0.5, 0.5}});
  EXPECT_EQ((a + b).to_vector<c128>(), (std::vector<c128>{{3, 3}, {3.5, -3.5}}));
  EXPECT_EQ((a - b).to_vector<c128>(), (std::vector<c128>{{-1, 1}, {2.5, -4.5}}));
  EXPECT_EQ((a * b).to_vector<c128>(), (std::vector<c128>{{0, 5}, {3.5, -0.5}}));
  EXPECT_EQ((a * c128(0, 1)).to_vector<c128>(), (std::vector<c128>{{-2, 1}, {4, 3}}));
  EXPECT_EQ((a / c128(0, 1)).to_vector<c128>(), (std::vector<c128>{{2, -1}, {-4, -3}}));
  EXPECT_EQ((a * 2).to_vector<c128>(), (std::vector<c128>{{2, 4}, {6, -8}}));
  EXPECT_EQ((-a).to_vector<c128>(), (std::vector<c128>{{-1, -2}, {-3, 4}}));
  EXPECT_EQ(xp::abs(vec<c128>({{3, -4}})).item<double>(), 5.0);
  EXPECT_EQ(xp::square(a).to_vector<c128>(), (std::vector<c128>{{-3, 4}, {-7, -24}}));
  EXPECT_EQ((a == c128(1, 2)).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0}));
  EXPECT_EQ((a != a).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{0, 0}));
  EXPECT_EQ(xp::reciprocal(vec<c128>({{0, 2}})).item<c128>(), c128(0, -0.5));
  EXPECT_EQ(xp::where(xp::asarray({true, false}), a, c128(9, 9)).to_vector<c128>(),
            (std::vector<c128>{{1, 2}, {9, 9}}));
  // A float32 array with a complex number stays in single precision.
  EXPECT_EQ((vec<float>({1.5f}) * c128(0, 2)).to_vector<c64>(), (std::vector<c64>{{0, 3}}));
  // A zero base: 0 for an exponent of positive real part, whatever its imaginary part (NumPy 2.4's
  // np.power(0j, 1 + 2j) is 0j), NaN + NaN j for the others, 1 for a zero exponent.
  const std::vector<c128> r =
      xp::pow(vec<c128>({0, 0, 0, 0, 0}), vec<c128>({{1, 2}, {0.5, 0}, {0, 1}, {-1, 1}, {0, 0}})).to_vector<c128>();
  EXPECT_EQ(r[0], c128(0, 0));
  EXPECT_EQ(r[1], c128(0, 0));
  EXPECT_TRUE(std::isnan(r[2].real()) && std::isnan(r[2].imag()));
  EXPECT_TRUE(std::isnan(r[3].real()) && std::isnan(r[3].imag()));
  EXPECT_EQ(r[4], c128(1, 0));
}

TEST(Complex, ReductionsThroughTheParts) {
  const Array z = mat<c128>({{1, 1}, {2, -1}, {3, 0.5}, {-4, 2}, {0, 0}, {1, -3}}, 2, 3);
  EXPECT_EQ(xp::sum(z).item<c128>(), c128(3, -0.5));
  EXPECT_EQ(xp::sum(z, 0).to_vector<c128>(), (std::vector<c128>{{-3, 3}, {2, -1}, {4, -2.5}}));
  EXPECT_EQ(xp::sum(z, 1, true).shape()[1], 1);
  EXPECT_EQ(xp::sum(z, 1).to_vector<c128>(), (std::vector<c128>{{6, 0.5}, {-3, -1}}));
  EXPECT_EQ(xp::mean(z, 1).to_vector<c128>(), (std::vector<c128>{{2, 0.5 / 3}, {-1, -1.0 / 3}}));
  EXPECT_EQ(xp::sum(z.astype(DType::complex64)).dtype(), DType::complex64);
  // prod: exact small Gaussian integers; odd and even lengths; an empty axis gives 1.
  const Array p = vec<c128>({{1, 1}, {1, 1}, {1, 1}, {0, 2}, {2, 0}});
  EXPECT_EQ(xp::prod(p).item<c128>(), c128(-8, -8));  // (1+i)^3 = -2+2i; times 2i, times 2 (NumPy: -8-8j)
  EXPECT_EQ(xp::prod(z, 1).to_vector<c128>(), (std::vector<c128>{{8.5, 4.5}, {0, 0}}));
  EXPECT_EQ(xp::prod(xp::zeros({2, 0}, DType::complex64), 1).to_vector<c64>(), (std::vector<c64>{1, 1}));
  EXPECT_EQ(xp::sum(xp::zeros({0}, DType::complex128)).item<c128>(), c128(0, 0));
  EXPECT_TRUE(std::isnan(xp::mean(xp::zeros({0}, DType::complex128)).item<c128>().real()));
  EXPECT_EQ(xp::cumulative_sum(vec<c128>({{1, 1}, {2, -1}, {0, 3}})).to_vector<c128>(),
            (std::vector<c128>{{1, 1}, {3, 0}, {3, 3}}));
  EXPECT_EQ(xp::cumulative_sum(vec<c128>({{1, 1}}), 0, std::nullopt, true).to_vector<c128>(),
            (std::vector<c128>{{0, 0}, {1, 1}}));
  // cumulative_prod by the doubling scan: Gaussian integers are exact in any grouping, so these are
  // NumPy's values (np.cumprod) bit for bit; lengths 1 to 5 cross the power-of-two steps.
  EXPECT_EQ(xp::cumulative_prod(p).to_vector<c128>(), (std::vector<c128>{{1, 1}, {0, 2}, {-2, 2}, {-4, -4}, {-8, -8}}));
  EXPECT_EQ(xp::cumulative_prod(z, 1).to_vector<c128>(),
            (std::vector<c128>{{1, 1}, {3, 1}, {8.5, 4.5}, {-4, 2}, {0, 0}, {0, 0}}));
  EXPECT_EQ(xp::cumulative_prod(z, 0).to_vector<c128>(),
            (std::vector<c128>{{1, 1}, {2, -1}, {3, 0.5}, {-6, -2}, {0, 0}, {4.5, -8.5}}));
  EXPECT_EQ(xp::cumulative_prod(vec<c64>({{0, 1}, {0, 1}}), 0, std::nullopt, true).to_vector<c64>(),
            (std::vector<c64>{{1, 0}, {0, 1}, {-1, 0}}));
  EXPECT_EQ(xp::cumulative_prod(vec<c64>({{0, 1}}), 0, DType::complex128).dtype(), DType::complex128);
  const Array empty = xp::cumulative_prod(xp::zeros({2, 0}, DType::complex64), 1);
  EXPECT_EQ(empty.ndim(), 2);
  EXPECT_EQ(empty.shape()[0], 2);
  EXPECT_EQ(empty.size(), 0);
  EXPECT_TRUE(xp::any(vec<c128>({{0, 0}, {0, 1}})).item<bool>());
  EXPECT_FALSE(xp::all(vec<c128>({{0, 0}, {0, 1}})).item<bool>());
  // A transposed view reduces like its copy.
  expect_same_bits(xp::sum(xp::matrix_transpose(z), 1), xp::sum(z, 0), "sum of a transposed view");
}

TEST(Complex, IndexingMovesWholeElements) {
  // take, a mask's selection and the scatters of writes go through the parts (16-byte elements).
  const Array z = vec<c128>({{1, 1}, {2, 0}, {3, -1}, {-0.0, -4}});
  EXPECT_EQ(z.slice({xp::Index(vec<i64>({3, 0, 0}))}).to_vector<c128>(),
            (std::vector<c128>{{-0.0, -4}, {1, 1}, {1, 1}}));
  EXPECT_EQ(xp::take(z, vec<i64>({-1, 1})).to_vector<c128>(), (std::vector<c128>{{-0.0, -4}, {2, 0}}));
  EXPECT_EQ(z.slice({xp::Index(z != c128(2, 0))}).to_vector<c128>(), (std::vector<c128>{{1, 1}, {3, -1}, {-0.0, -4}}));
  Array y = z.copy();
  y.set({xp::Index(vec<i64>({0, 2}))}, c128(0, 9));
  EXPECT_EQ(y.to_vector<c128>(), (std::vector<c128>{{0, 9}, {2, 0}, {0, 9}, {-0.0, -4}}));
  y.set({xp::Index(y == c128(0, 9))}, 5);
  EXPECT_EQ(y.to_vector<c128>(), (std::vector<c128>{{5, 0}, {2, 0}, {5, 0}, {-0.0, -4}}));
  const Array m = mat<c64>({{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}}, 2, 3);
  EXPECT_EQ(xp::take_along_axis(m, mat<i64>({2, 0}, 2, 1), 1).to_vector<c64>(), (std::vector<c64>{{2, 1}, {3, 1}}));
  Array w = m.copy();
  w.set({xp::Slice(), xp::Index(vec<i64>({1}))}, vec<c64>({{9, 9}, {8, 8}}).slice({xp::Slice(), xp::NewAxis{}}));
  EXPECT_EQ(w.to_vector<c64>(), (std::vector<c64>{{0, 1}, {9, 9}, {2, 1}, {3, 1}, {8, 8}, {5, 1}}));
  // Sorting and searching have no order to follow.
  EXPECT_THROW(xp::sort(z), xp::TypeError);
  EXPECT_THROW(xp::argsort(z), xp::TypeError);
  EXPECT_THROW(xp::searchsorted(z, z), xp::TypeError);
  // unique: equal complex numbers meet in the real-then-imaginary order; each NaN is distinct.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto u = xp::unique_all(vec<c128>({{2, 1}, {1, 5}, {2, 1}, {-0.0, 0}, {0, 0}, {1, -5}, {nan, 0}, {nan, 0}}));
  const auto uv = u.values.to_vector<c128>();
  ASSERT_EQ(uv.size(), 6u);
  EXPECT_EQ(uv[0], c128(0, 0));
  EXPECT_EQ(uv[1], c128(1, -5));
  EXPECT_EQ(uv[2], c128(1, 5));
  EXPECT_EQ(uv[3], c128(2, 1));
  EXPECT_TRUE(std::isnan(uv[4].real()) && std::isnan(uv[5].real()));
  EXPECT_EQ(u.counts.to_vector<i64>(), (std::vector<i64>{2, 1, 1, 2, 1, 1}));
  EXPECT_EQ(u.indices.to_vector<i64>(), (std::vector<i64>{3, 5, 1, 0, 6, 7}));
  EXPECT_EQ(u.inverse_indices.to_vector<i64>(), (std::vector<i64>{3, 2, 3, 0, 0, 1, 4, 5}));
  EXPECT_EQ(xp::count_nonzero(z).item<i64>(), 4);
}

TEST(Complex, PrintsAsNumPy) {
  // NumPy 2.4's str and repr of the same arrays.
  const Array a = vec<c128>({{1, 2}, {3, -4}, {-0.0, -0.5}});
  EXPECT_EQ(str(a), "[ 1.+2.j   3.-4.j  -0.-0.5j]");
  EXPECT_EQ(a.repr(), "array([ 1.+2.j ,  3.-4.j , -0.-0.5j])");
  EXPECT_EQ(vec<c64>({{1, 1}, {2, 0}}).repr(), "array([1.+1.j, 2.+0.j], dtype=complex64)");
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(str(vec<c128>({{nan, 1}, {1, inf}, {-inf, nan}})), "[ nan +1.j   1.+infj -inf+nanj]");
  EXPECT_EQ(str(vec<c128>({{1.5, 2.25}, {-3.125, -1000}})), "[ 1.5     +2.25j -3.125-1000.j  ]");
  EXPECT_EQ(str(vec<c128>({{1e10, 1}, {0, 1e-5}})), "[1.e+10+1.e+00j 0.e+00+1.e-05j]");
  EXPECT_EQ(str(xp::full({}, c128(1, 2))), "(1+2j)");
  EXPECT_EQ(str(xp::full({}, c128(0, 2))), "2j");
  EXPECT_EQ(str(xp::full({}, c128(1.5, -2.5), DType::complex64)), "(1.5-2.5j)");
}

TEST(Complex, NpyAndDLPackRoundTrips) {
  const Array z = mat<c64>({{1, 2}, {-0.0f, 3}, {4, -5}, {0.25f, 1e-30f}}, 2, 2);
  const auto dir = std::filesystem::temp_directory_path() / ("xp-test-complex-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const Array& a : {z, z.astype(DType::complex128), xp::matrix_transpose(z)}) {
    const std::string p = (dir / "z.npy").string();
    xp::save(p, a);
    expect_same_bits(xp::load(p), a.copy(), "npy " + std::string(xp::name(a.dtype())));
    expect_same_bits(xp::from_dlpack(xp::to_dlpack(a)), a, "dlpack");
  }
  std::filesystem::remove_all(dir);
}

TEST(Complex, FusedEqualsEager) {
  const Array a = vec<c128>({{1, 2}, {-0.5, 3}, {2, -1}, {0, 0}});
  const Array b = vec<float>({1, 2, 3, 4});
  auto chain = [&] {
    Array t = a * b + c128(0.5, -1);
    t = xp::exp(t / 4) - xp::conj(a) * xp::sqrt(t);
    return xp::abs(t) + xp::real(t) * xp::imag(a);
  };
  Array lazy = chain();
  lazy.eval();
  xp::set_lazy(false);
  const Array eager = chain();
  xp::set_lazy(true);
  expect_same_bits(lazy, eager, "fused vs eager");
}

// ---- on a GPU: the same operations on cuda:0 give the CPU's bits where they are exact ---------

TEST(ComplexGpu, ExactOperationsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device g = xp::Device::cuda(0);
  const Array a = vec<c128>({{1, 2}, {-0.5, 3}, {2, -1}, {0, -0.0}, {1e300, 1e-300}});
  const Array b = vec<c128>({{2, 1}, {0.25, 0.5}, {-3, 7}, {1, 1}, {1e-300, 1e300}});
  const Array ga = a.to_device(g), gb = b.to_device(g);
  expect_same_bits(ga + gb, a + b, "add");
  expect_same_bits(ga * gb, a * b, "multiply");
  expect_same_bits(ga / gb, a / b, "divide");
  expect_same_bits(xp::conj(ga) - gb, xp::conj(a) - b, "conj, subtract");
  expect_same_bits(xp::real(ga) + xp::imag(gb), xp::real(a) + xp::imag(b), "real, imag");
  expect_same_bits(ga == gb, a == b, "equal");
  expect_same_bits(ga.astype(DType::complex64), a.astype(DType::complex64), "complex128 -> complex64");
  expect_same_bits(xp::sum(ga), xp::sum(a), "sum");
  expect_same_bits(xp::prod(ga.astype(DType::complex64)), xp::prod(a.astype(DType::complex64)), "prod");
  expect_same_bits(xp::full({3}, c128(1, -2), DType::complex64, g), xp::full({3}, c128(1, -2), DType::complex64),
                   "full");
  expect_same_bits(xp::from_dlpack(xp::to_dlpack(ga)), a, "dlpack on the GPU");
  const Array idx = vec<i64>({4, 0, 2, 2});
  expect_same_bits(ga.slice({xp::Index(idx.to_device(g))}), a.slice({xp::Index(idx)}), "take");
  expect_same_bits(ga.slice({xp::Index(ga != gb)}), a.slice({xp::Index(a != b)}), "mask");
  Array gy = ga.copy(), y = a.copy();
  gy.set({xp::Index(idx.to_device(g))}, gb.slice({xp::Slice(0, 4)}));
  y.set({xp::Index(idx)}, b.slice({xp::Slice(0, 4)}));
  expect_same_bits(gy, y, "scatter (the last write wins)");
}

}  // namespace
