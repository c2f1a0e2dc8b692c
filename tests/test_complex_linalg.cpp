// Complex matmul and vecdot (complex64, complex128) against NumPy 2 (tests/ref/complex_linalg_reference.py):
// - on the CPU through each path: OpenBLAS's cgemm / zgemm (forced), xp's loop (forced), and the
//   automatic choice; vectors, matrices, broadcast batches, transposed, stepped and reversed views,
//   empty dimensions and k = 0; vecdot is sum(conj(x1) * x2) over the axis;
// - the same cases on a GPU (ComplexLinalgGpu.*, labelled gpu): cuBLAS, complex vecdot with
//   CUBLAS_OP_C on its first operand;
// - without a GPU: the cuBLAS plan of a conjugated operand, run by a host interpreter of cuBLAS's
//   column-major semantics, and the cuBLAS types of complex dtypes;
// - xp's check at load of cgemm / zgemm catches a wrong result.
// Results agree within 4 (k + 2) eps sum |x1| |x2| per element (eps of the dtype's parts).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cpu/blas.hpp"
#include "backend/cpu/linalg.hpp"
#include "backend/cuda/cublas.hpp"
#include "backend/cuda/linalg.hpp"
#include "reference_cases.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

namespace cpu = xp::detail::cpu;
namespace cg = xp::detail::cuda;
namespace cb = xp::detail::cublas;
using xp::DType;
using xp::detail::View;
using i64 = std::int64_t;
using cd = std::complex<double>;

using Cases = xp_test::ReferenceCases;
using xp_test::count_of;
using xp_test::shape_of;

const Cases& cases() {
  static const Cases* c = xp_test::load_reference_cases("complex_linalg_reference.py");
  return *c;
}

std::vector<cd> values_at(const Cases& c, std::size_t offset, i64 n) {
  std::vector<cd> v(static_cast<std::size_t>(n));
  if (n > 0) std::memcpy(v.data(), c.data.data() + offset, static_cast<std::size_t>(n) * sizeof(cd));
  return v;
}

// An operand: its base array on `device` in the case's dtype, then the case's views of it.
xp::Array operand(const Cases& c, const nlohmann::json& j, DType dtype, const xp::Device& device) {
  const xp::Shape shape = shape_of(j["shape"]);
  const std::vector<cd> v = values_at(c, j["offset"].get<std::size_t>(), count_of(shape));
  xp::Array a;
  if (dtype == DType::complex64) {
    std::vector<std::complex<float>> f(v.begin(), v.end());  // exact: the values are complex64's
    a = xp::asarray(f.data(), f.size(), dtype, shape, device);
  } else {
    a = xp::asarray(v.data(), v.size(), dtype, shape, device);
  }
  for (const auto& op : j["views"]) {
    if (op[0] == "T") {
      a = xp::matrix_transpose(a);
    } else {
      const int axis = op[1].get<int>();
      std::vector<xp::Index> idx(static_cast<std::size_t>(a.ndim()), xp::Index(xp::Slice()));
      idx[static_cast<std::size_t>(axis)] = xp::Slice(std::nullopt, std::nullopt, op[2].get<i64>());
      a = a.slice(std::span<const xp::Index>(idx));
    }
  }
  return a;
}

// Runs every case on `device` and compares with NumPy; returns how many ran.
int check_cases(const xp::Device& device, const std::string& what) {
  const Cases& c = cases();
  int ran = 0;
  for (const auto& k : c.json["cases"]) {
    const std::string name = k["name"].get<std::string>() + " (" + what + ")";
    SCOPED_TRACE(name);
    const DType t = k["dtype"] == "complex64" ? DType::complex64 : DType::complex128;
    const xp::Array a = operand(c, k["a"], t, device), b = operand(c, k["b"], t, device);
    const xp::Array r = k["op"] == "matmul" ? xp::matmul(a, b) : xp::vecdot(a, b, k["axis"].get<int>());
    EXPECT_EQ(r.dtype(), t);
    const xp::Shape want_shape = shape_of(k["want"]["shape"]);
    const xp::Shape got_shape(r.shape().begin(), r.shape().end());
    EXPECT_EQ(got_shape, want_shape);
    if (got_shape != want_shape) continue;
    const i64 n = count_of(want_shape);
    const std::vector<cd> want = values_at(c, k["want"]["offset"].get<std::size_t>(), n);
    std::vector<double> scale(static_cast<std::size_t>(n));
    if (n > 0)
      std::memcpy(scale.data(), c.data.data() + k["scale"]["offset"].get<std::size_t>(), scale.size() * sizeof(double));
    std::vector<cd> got(static_cast<std::size_t>(n));
    if (t == DType::complex64) {
      const auto g = r.to_vector<std::complex<float>>();
      got.assign(g.begin(), g.end());
    } else {
      got = r.to_vector<cd>();
    }
    const double eps = t == DType::complex64 ? 0x1p-24 : 0x1p-53;
    const double kk = static_cast<double>(k["k"].get<i64>());
    int bad = 0;
    for (std::size_t i = 0; i < got.size() && bad < 5; ++i) {
      const double err = std::abs(got[i] - want[i]), bound = 4 * (kk + 2) * eps * scale[i];
      if (!(err <= bound)) {
        ++bad;
        ADD_FAILURE() << "element " << i << ": got " << got[i] << ", NumPy " << want[i] << " (error " << err
                      << ", bound " << bound << ")";
      }
    }
    ++ran;
  }
  return ran;
}

struct PathScope {
  explicit PathScope(cpu::GemmPath p) { cpu::set_gemm_path(p); }
  ~PathScope() { cpu::set_gemm_path(cpu::GemmPath::automatic); }
};

}  // namespace

TEST(ComplexLinalg, CpuMatchesNumPyOnEveryPath) {
  XP_REQUIRE_REFERENCE(cases().ref);
  const xp::Device cpu_device = xp::Device::cpu();
  const cpu::BlasInfo info = cpu::blas_info();
  for (const cpu::GemmPath p : {cpu::GemmPath::automatic, cpu::GemmPath::loop, cpu::GemmPath::blas}) {
    const PathScope scope(p);
    const std::uint64_t calls = cpu::blas_call_count();
    const std::string what = p == cpu::GemmPath::loop ? "xp's loop" : p == cpu::GemmPath::blas ? "BLAS" : "automatic";
    EXPECT_EQ(check_cases(cpu_device, what), 56);
    if (p == cpu::GemmPath::loop) {
      EXPECT_EQ(cpu::blas_call_count(), calls) << "the loop was forced";
    }
    // Forced BLAS calls cgemm / zgemm for every non-empty matrix when the library has them.
    if (p == cpu::GemmPath::blas && info.loaded && info.complex_error.empty()) {
      EXPECT_GT(cpu::blas_call_count(), calls + 20);
    }
  }
  if (!info.loaded || !info.complex_error.empty())
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS",
                    "the BLAS path ran xp's loop: " + (info.loaded ? info.complex_error : info.error));
}

// x1 conjugated, x2 not: vecdot([i], [i]) = conj(i) i = 1, matmul([i], [i]) = -1 (hand-made).
TEST(ComplexLinalg, VecdotConjugatesTheFirstOperandOnly) {
  using cf = std::complex<float>;
  const xp::Device cpu_device = xp::Device::cpu();
  const xp::Array a = xp::asarray(std::vector<cf>{cf(0, 1), cf(1, 2)}, std::nullopt, cpu_device);
  const xp::Array b = xp::asarray(std::vector<cf>{cf(0, 1), cf(3, -1)}, std::nullopt, cpu_device);
  // conj(i) i + conj(1 + 2i)(3 - i) = 1 + (1 - 2i)(3 - i) = 1 + (1 - 7i) = 2 - 7i
  EXPECT_EQ(xp::vecdot(a, b).item<cf>(), cf(2, -7));
  // i i + (1 + 2i)(3 - i) = -1 + (5 + 5i) = 4 + 5i
  EXPECT_EQ(xp::matmul(a, b).item<cf>(), cf(4, 5));
  EXPECT_EQ(xp::vecdot(b, a).item<cf>(), cf(2, 7));
}

// vecdot's bits depend on the values only: contiguous rows (the unit-stride loop) and stepped ones
// (the strided loop) give the same bits, on both complex dtypes, for short and long rows.
TEST(ComplexLinalg, VecdotBitsDoNotDependOnStrides) {
  const xp::Device cpu_device = xp::Device::cpu();
  for (const i64 k : {5, 100, 1000, 4099}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    std::vector<cd> a(static_cast<std::size_t>(2 * k)), b(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = cd(std::sin(0.37 * static_cast<double>(i)), std::cos(1.3 * static_cast<double>(i)));
      b[i] = cd(std::cos(0.11 * static_cast<double>(i)), -std::sin(0.7 * static_cast<double>(i)));
    }
    for (const DType t : {DType::complex64, DType::complex128}) {
      // Whole arrays (every element) and their even elements, made on the host in the dtype.
      const auto make = [&](const std::vector<cd>& v, bool even) {
        std::vector<cd> w;
        for (std::size_t i = 0; i < v.size(); i += even ? 2 : 1) w.push_back(v[i]);
        if (t == DType::complex128) return xp::asarray(w, std::nullopt, cpu_device);
        std::vector<std::complex<float>> f(w.begin(), w.end());
        return xp::asarray(f, std::nullopt, cpu_device);
      };
      const xp::Array sa = make(a, false).slice({xp::Slice(std::nullopt, std::nullopt, 2)});
      const xp::Array sb = make(b, false).slice({xp::Slice(std::nullopt, std::nullopt, 2)});
      const xp::Array ca = make(a, true), cb2 = make(b, true);
      // The result's own bytes (to_vector in its dtype: no conversion).
      const auto value = [&](const xp::Array& r) {
        if (t == DType::complex128) return r.to_vector<cd>().at(0);
        return cd(r.to_vector<std::complex<float>>().at(0));
      };
      const cd strided = value(xp::vecdot(sa, sb)), unit = value(xp::vecdot(ca, cb2));
      EXPECT_EQ(std::memcmp(&strided, &unit, sizeof(cd)), 0)
          << name(t) << ": strided " << strided << ", contiguous " << unit;
    }
  }
}

// A real operand meets a complex one: promoted (NumPy 2: float32 with complex64 is complex64,
// float64 with complex64 is complex128) and converted before the backend sees it.
TEST(ComplexLinalg, RealOperandsArePromoted) {
  using cf = std::complex<float>;
  const xp::Device cpu_device = xp::Device::cpu();
  const xp::Array z = xp::asarray(std::vector<cf>{cf(1, 1), cf(2, -1)}, std::nullopt, cpu_device);
  const xp::Array x = xp::asarray(std::vector<float>{3, 4}, std::nullopt, cpu_device);
  const xp::Array x64 = xp::asarray(std::vector<double>{3, 4}, std::nullopt, cpu_device);
  try {
    (void)x.astype(DType::complex64).eval();
  } catch (const std::exception& e) {
    GTEST_SKIP() << "astype to complex is not available in this build yet: " << e.what();
  }
  const xp::Array m = xp::matmul(x, z);
  EXPECT_EQ(m.dtype(), DType::complex64);
  EXPECT_EQ(m.item<cf>(), cf(11, -1));
  EXPECT_EQ(xp::vecdot(z, x).item<cf>(), cf(11, 1));  // conj(z) . x
  EXPECT_EQ(xp::vecdot(x64, z).dtype(), DType::complex128);
  EXPECT_EQ(xp::vecdot(x64, z).item<std::complex<double>>(), std::complex<double>(11, -1));
}

// ---- xp's check of cgemm / zgemm at load

namespace {
void wrong_cgemm(int, int, int, int m, int n, int, const void*, const void*, int, const void*, int, const void*,
                 void* c, int ldc) {
  auto* out = static_cast<std::complex<float>*>(c);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) out[i * ldc + j] = {0.0f, (i == m - 1 && j == n - 1) ? 1000.0f : 0.0f};
}
}  // namespace

TEST(ComplexLinalg, TheCheckAtLoadCatchesAWrongComplexResult) {
  const cpu::BlasInfo info = cpu::blas_info();
  if (!info.loaded) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", info.error);
  if (!info.complex_error.empty()) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_OPENBLAS", info.complex_error);
  EXPECT_EQ(cpu::check_complex_blas(cpu::blas_library()), "");
  cpu::BlasLibrary bad;
  bad.cgemm = &wrong_cgemm;
  bad.zgemm = cpu::blas_library().zgemm;
  const std::string why = cpu::check_complex_blas(bad);
  EXPECT_NE(why.find("cgemm 1x1x1: element (0, 0) is (0.000000, 1000.000000)"), std::string::npos) << why;
}

// ---- the cuBLAS plan of complex vecdot, without a GPU

namespace {

using cx = std::complex<double>;

// What cuBLAS computes for a plan's calls (column-major; op N, T or C), complex128 on host memory.
void interpret(const cg::GemmCall& c, const View& a, const View& b, const View& out) {
  const View& first = c.swapped ? b : a;
  const View& second = c.swapped ? a : b;
  const auto elem = [](const std::byte* base, i64 i, int op) {
    cx x;
    std::memcpy(&x, base + i * 16, 16);
    return op == cb::CUBLAS_OP_C ? std::conj(x) : x;
  };
  ASSERT_TRUE(c.loop_shape.empty());
  for (i64 q = 0; q < c.count; ++q) {
    const std::byte* F = first.data + q * c.stride_first * 16;
    const std::byte* S = second.data + q * c.stride_second * 16;
    std::byte* C = out.data + q * c.stride_out * 16;
    for (i64 i = 0; i < c.m; ++i)
      for (i64 j = 0; j < c.n; ++j) {
        cx s = 0;
        for (i64 p = 0; p < c.k; ++p) {
          const cx f = c.trans_first == cb::CUBLAS_OP_N ? elem(F, i + p * c.ld_first, c.trans_first)
                                                        : elem(F, p + i * c.ld_first, c.trans_first);
          const cx g = c.trans_second == cb::CUBLAS_OP_N ? elem(S, p + j * c.ld_second, c.trans_second)
                                                         : elem(S, j + p * c.ld_second, c.trans_second);
          s += f * g;
        }
        std::memcpy(C + (i + j * c.ld_out) * 16, &s, 16);
      }
  }
}

}  // namespace

TEST(ComplexGemmPlan, VecdotConjugatesItsFirstOperandWithOpC) {
  // vecdot as device_vecdot sets it up: a (rows, 1, k) with stride 0 on the 1, b (rows, k, 1),
  // out (rows, 1, 1); a's elements `step` apart.
  for (const i64 step : {1, 3}) {
    for (const i64 bstep : {1, 2}) {
      SCOPED_TRACE("a step " + std::to_string(step) + ", b step " + std::to_string(bstep));
      const i64 rows = 3, k = 5;
      std::vector<cx> ab(static_cast<std::size_t>(rows * k * step)), bb(static_cast<std::size_t>(rows * k * bstep)),
          ob(static_cast<std::size_t>(rows), cx(-99, -99));
      for (std::size_t i = 0; i < ab.size(); ++i)
        ab[i] = cx(static_cast<double>(i % 7) - 3, static_cast<double>(i % 5) - 2);
      for (std::size_t i = 0; i < bb.size(); ++i)
        bb[i] = cx(static_cast<double>(i % 3) - 1, static_cast<double>(i % 4) - 2);
      std::vector<i64> as = {rows, 1, k}, ast = {k * step * 16, 0, step * 16};
      std::vector<i64> bs = {rows, k, 1}, bst = {k * bstep * 16, bstep * 16, 0};
      std::vector<i64> os = {rows, 1, 1}, ost = {16, 0, 0};
      const View va{reinterpret_cast<std::byte*>(ab.data()), DType::complex128, 3, as.data(), ast.data()};
      const View vb{reinterpret_cast<std::byte*>(bb.data()), DType::complex128, 3, bs.data(), bst.data()};
      const View vo{reinterpret_cast<std::byte*>(ob.data()), DType::complex128, 3, os.data(), ost.data()};
      const cg::GemmPlan plan = cg::plan_gemm(va, vb, vo, /*conj_a=*/true);
      ASSERT_FALSE(plan.pack_a || plan.pack_b || plan.pack_out || plan.too_big);
      const int op_a = plan.call.swapped ? plan.call.trans_second : plan.call.trans_first;
      EXPECT_EQ(op_a, cb::CUBLAS_OP_C);
      interpret(plan.call, va, vb, vo);
      for (i64 r = 0; r < rows; ++r) {
        cx want = 0;
        for (i64 p = 0; p < k; ++p)
          want += std::conj(ab[static_cast<std::size_t>(r * k * step + p * step)]) *
                  bb[static_cast<std::size_t>(r * k * bstep + p * bstep)];
        EXPECT_EQ(ob[static_cast<std::size_t>(r)], want) << "row " << r;
      }
    }
  }
}

TEST(ComplexGemmPlan, ComplexTypesIgnoreTf32) {
  EXPECT_EQ(cb::CUDA_C_32F, 4);  // library_types.h
  EXPECT_EQ(cb::CUDA_C_64F, 5);
  EXPECT_EQ(cb::CUBLAS_OP_C, 2);  // cublas_api.h
  for (const xp::MatmulPrecision p : {xp::MatmulPrecision::float32, xp::MatmulPrecision::tf32}) {
    EXPECT_EQ(cg::gemm_types(DType::complex64, p).data_type, cb::CUDA_C_32F);
    EXPECT_EQ(cg::gemm_types(DType::complex64, p).compute_type, cb::CUBLAS_COMPUTE_32F);
    EXPECT_EQ(cg::gemm_types(DType::complex128, p).data_type, cb::CUDA_C_64F);
    EXPECT_EQ(cg::gemm_types(DType::complex128, p).compute_type, cb::CUBLAS_COMPUTE_64F);
  }
}

// ---- on a GPU

TEST(ComplexLinalgGpu, MatchesNumPy) {
  XP_REQUIRE_GPU();
  if (cb::library().api == nullptr) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_GPU", "no cuBLAS: " + cb::unavailable_reason());
  XP_REQUIRE_REFERENCE(cases().ref);
  EXPECT_EQ(check_cases(xp::Device::cuda(0), "cuda:0"), 56);
  // And with TF32 permitted: complex64 is computed as plain complex64 all the same.
  const Cases& c = cases();
  for (const auto& k : c.json["cases"]) {
    if (k["name"] != "matmul complex64 larger") continue;
    const xp::Array a = operand(c, k["a"], DType::complex64, xp::Device::cuda(0));
    const xp::Array b = operand(c, k["b"], DType::complex64, xp::Device::cuda(0));
    const auto f32 = xp::matmul(a, b, xp::MatmulPrecision::float32).to_vector<std::complex<float>>();
    const auto tf32 = xp::matmul(a, b, xp::MatmulPrecision::tf32).to_vector<std::complex<float>>();
    EXPECT_EQ(f32, tf32);
  }
}

// The device path itself runs (not the host fallback) for a complex vecdot whose first operand is
// stepped (CUBLAS_OP_C reads it in place) and one that needs packing (reversed).
TEST(ComplexLinalgGpu, VecdotRunsOnTheDevice) {
  XP_REQUIRE_GPU();
  if (cb::library().api == nullptr) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_GPU", "no cuBLAS: " + cb::unavailable_reason());
  const xp::Device gpu = xp::Device::cuda(0);
  xp::detail::Backend& be = xp::detail::backend_for(gpu);
  const i64 k = 4;
  std::vector<cx> ha = {{1, 2}, {9, 9}, {3, -1}, {9, 9}, {0, 1}, {9, 9}, {-2, 0}, {9, 9}};
  std::vector<cx> hb = {{2, 1}, {1, -1}, {0, 3}, {4, 4}};
  xp::detail::Allocation ma = be.allocate(ha.size() * 16), mb = be.allocate(hb.size() * 16), mo = be.allocate(16);
  be.copy_from_host(ha.data(), ma.data, ha.size() * 16);
  be.copy_from_host(hb.data(), mb.data, hb.size() * 16);
  for (const bool reversed : {false, true}) {
    SCOPED_TRACE(reversed ? "a reversed" : "a stepped");
    std::vector<i64> sh = {k}, sa = {reversed ? -32 : 32}, sb = {16};
    std::vector<i64> none;
    std::byte* a0 = reversed ? ma.data + 6 * 16 : ma.data;
    const View va{a0, DType::complex128, 1, sh.data(), sa.data()},
        vb{mb.data, DType::complex128, 1, sh.data(), sb.data()};
    const View vo{mo.data, DType::complex128, 0, none.data(), none.data()};
    ASSERT_TRUE(cg::device_vecdot(be, gpu, va, vb, vo)) << "the device path declined";
    cx got;
    be.copy_to_host(mo.data, &got, 16);
    cx want = 0;
    for (i64 p = 0; p < k; ++p)
      want += std::conj(ha[static_cast<std::size_t>(reversed ? 6 - 2 * p : 2 * p)]) * hb[static_cast<std::size_t>(p)];
    EXPECT_EQ(got, want);
  }
}
