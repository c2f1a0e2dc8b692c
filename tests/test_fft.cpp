// xp::fft against NumPy 2's numpy.fft (tests/ref/fft_reference.py):
// - every function (fft, ifft, rfft, irfft, hfft, ihfft, fftn, ifftn, rfftn, irfftn) for float32,
//   float64, complex64 and complex128 inputs; lengths 1, 2, 3, 5, 7, 8, 12, 16, 97, 1000, 1009,
//   1024, 4096, 8192, 65536, 2^17, 6000, 633 (3 * 211: a prime above the generic radix), 2 * 10007
//   (a large prime factor: Bluestein); n shorter and longer than the input; every norm; batches
//   along any axis; axes lists, s cutting and padding (and -1); empty inputs; under each
//   instruction set the CPU kernels have here. The result's dtype and shape are NumPy's; its values
//   agree with NumPy's long double answer within kC * eps * log2(N) * ||X||_2 per element (eps of the
//   dtype's parts, N the length of the whole transform, X the exact result); the instruction sets
//   give the same bits;
// - fftfreq and rfftfreq give NumPy's bits; fftshift and ifftshift NumPy's order;
// - round trips ifft(fft(x)), irfft(rfft(x)) give x back, up to 2^20 and a prime length of 10^6;
// - callers on several threads get the same bits as one;
// - bad input: typed errors;
// - a device whose backend cannot transform (Backend::fft returns false): computed on the CPU;
// - FftGpu.*: the same transforms on a GPU agree with the CPU's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "backend/cpu/fft.hpp"
#include "cpu_forwarding_backend.hpp"
#include "reference_cases.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

namespace cpu = xp::detail::cpu;
using xp::Array;
using xp::DType;
using i64 = std::int64_t;
using cd = std::complex<double>;

// The bound's constant: |xp - exact| <= kC * eps * log2(max(N, 2)) * ||X||_2 for every element.
constexpr double kC = 2.0;

using Cases = xp_test::ReferenceCases;
using xp_test::count_of;
using xp_test::shape_of;

const Cases& cases() {
  static const Cases* c = xp_test::load_reference_cases("fft_reference.py");
  return *c;
}

template <class T>
std::vector<T> values_at(const Cases& c, std::size_t offset, i64 n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  if (n > 0) std::memcpy(v.data(), c.data.data() + offset, static_cast<std::size_t>(n) * sizeof(T));
  return v;
}

DType dtype_named(const std::string& s) {
  if (s == "float32") return DType::float32;
  if (s == "float64") return DType::float64;
  if (s == "complex64") return DType::complex64;
  return DType::complex128;
}

double eps_of(DType t) {
  return t == DType::float32 || t == DType::complex64 ? 0x1p-24 : 0x1p-53;
}

Array input_of(const Cases& c, const nlohmann::json& k, const xp::Device& device) {
  const xp::Shape shape = shape_of(k["shape"]);
  const DType t = dtype_named(k["dtype"]);
  const auto z = values_at<cd>(c, k["in"].get<std::size_t>(), count_of(shape));
  if (t == DType::float32 || t == DType::float64) {
    std::vector<double> re(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) re[i] = z[i].real();
    return xp::asarray(re.data(), DType::float64, shape, device).astype(t);
  }
  return xp::asarray(z.data(), DType::complex128, shape, device).astype(t);
}

std::optional<std::vector<i64>> s_of(const nlohmann::json& kw) {
  if (!kw.contains("s")) return std::nullopt;
  return kw["s"].get<std::vector<i64>>();
}
std::optional<std::vector<int>> axes_of(const nlohmann::json& kw) {
  if (!kw.contains("axes")) return std::nullopt;
  return kw["axes"].get<std::vector<int>>();
}

Array call(const std::string& f, const Array& x, const nlohmann::json& kw) {
  namespace F = xp::fft;
  const F::Norm norm = F::norm_from_string(kw.value("norm", std::string("backward")));
  std::optional<i64> n;
  if (kw.contains("n")) n = kw["n"].get<i64>();
  const int axis = kw.value("axis", -1);
  if (f == "fft") return F::fft(x, n, axis, norm);
  if (f == "ifft") return F::ifft(x, n, axis, norm);
  if (f == "rfft") return F::rfft(x, n, axis, norm);
  if (f == "irfft") return F::irfft(x, n, axis, norm);
  if (f == "hfft") return F::hfft(x, n, axis, norm);
  if (f == "ihfft") return F::ihfft(x, n, axis, norm);
  if (f == "fftn") return F::fftn(x, s_of(kw), axes_of(kw), norm);
  if (f == "ifftn") return F::ifftn(x, s_of(kw), axes_of(kw), norm);
  if (f == "rfftn") return F::rfftn(x, s_of(kw), axes_of(kw), norm);
  if (f == "irfftn") return F::irfftn(x, s_of(kw), axes_of(kw), norm);
  ADD_FAILURE() << "unknown function " << f;
  return x;
}

// Runs every case on `device`; returns how many passed, and the largest error seen in units of
// eps * log2(N) * ||X||_2.
int check_cases(const xp::Device& device, const std::string& label, double& worst) {
  const Cases& c = cases();
  int passed = 0;
  worst = 0;
  for (const auto& k : c.json["cases"]) {
    const std::string f = k["func"];
    const std::string what =
        label + " " + f + " " + k["dtype"].get<std::string>() + " " + k["shape"].dump() + " " + k["kw"].dump();
    SCOPED_TRACE(what);
    const Array x = input_of(c, k, device);
    const Array r = call(f, x, k["kw"]).to_device(xp::Device::cpu());
    EXPECT_EQ(std::string(xp::name(r.dtype())), k["out_dtype"].get<std::string>());
    const xp::Shape want = shape_of(k["out_shape"]);
    EXPECT_EQ(xp::Shape(r.shape().begin(), r.shape().end()), want);
    if (xp::Shape(r.shape().begin(), r.shape().end()) != want) continue;
    const i64 count = count_of(want);
    const double eps = eps_of(r.dtype());
    const double scale = eps * std::log2(std::max<double>(2.0, k["N"].get<double>())) * k["norm2"].get<double>();
    double err = 0;
    if (xp::kind(r.dtype()) == xp::DTypeKind::complex_floating) {
      const auto want_v = values_at<cd>(c, k["out"].get<std::size_t>(), count);
      const auto got = r.astype(DType::complex128).to_vector<cd>();
      for (i64 i = 0; i < count; ++i) err = std::max(err, std::abs(got[i] - want_v[i]));
    } else {
      const auto want_v = values_at<double>(c, k["out"].get<std::size_t>(), count);
      const auto got = r.astype(DType::float64).to_vector<double>();
      for (i64 i = 0; i < count; ++i) err = std::max(err, std::abs(got[i] - want_v[i]));
    }
    const double ratio = scale > 0 ? err / scale : (err > 0 ? INFINITY : 0);
    worst = std::max(worst, ratio);
    EXPECT_LE(ratio, kC) << "max error " << err << " against a bound of " << kC * scale;
    if (ratio <= kC) ++passed;
  }
  return passed;
}

TEST(Fft, MatchesNumPy) {
  XP_REQUIRE_REFERENCE(cases().ref);
  const int total = static_cast<int>(cases().json["cases"].size());
  EXPECT_GE(total, 380);
  for (const auto& isa : cpu::fft_isas_available()) {
    ASSERT_TRUE(cpu::set_fft_isa_for_testing(isa.c_str()));
    double worst = 0;
    EXPECT_EQ(check_cases(xp::Device::cpu(), "cpu/" + isa, worst), total) << isa;
    std::printf("%s: %d cases, the largest error %.3g eps log2(N) ||X||_2 (bound %g)\n", isa.c_str(), total, worst, kC);
  }
  cpu::set_fft_isa_for_testing(nullptr);
}

// Every instruction set computes the same operations in the same order: the same bits.
TEST(Fft, InstructionSetsAgreeBitForBit) {
  xp::random::Generator g(13);
  const Array z = (g.normal({3, 1000}) + g.normal({3, 1000}) * std::complex<double>(0, 1)).astype(DType::complex128);
  const Array zf = z.astype(DType::complex64);
  const Array big = g.normal({i64{1} << 18});
  std::vector<std::vector<cd>> results;
  for (const auto& isa : cpu::fft_isas_available()) {
    ASSERT_TRUE(cpu::set_fft_isa_for_testing(isa.c_str()));
    std::vector<cd> r = xp::fft::fft(z).to_vector<cd>();
    for (const cd& v : xp::fft::ifft(zf, 1009).astype(DType::complex128).to_vector<cd>()) r.push_back(v);
    for (const cd& v : xp::fft::rfft(big).to_vector<cd>()) r.push_back(v);
    for (const cd& v : xp::fft::fft(z, std::nullopt, 0).to_vector<cd>()) r.push_back(v);
    results.push_back(std::move(r));
  }
  cpu::set_fft_isa_for_testing(nullptr);
  for (std::size_t i = 1; i < results.size(); ++i)
    EXPECT_EQ(0, std::memcmp(results[0].data(), results[i].data(), results[0].size() * sizeof(cd)))
        << cpu::fft_isas_available()[i];
}

TEST(Fft, FrequenciesAreNumPys) {
  XP_REQUIRE_REFERENCE(cases().ref);
  const Cases& c = cases();
  for (const auto& k : c.json["freqs"]) {
    const i64 n = k["n"];
    const double d = k["d"];
    SCOPED_TRACE("n " + std::to_string(n) + " d " + std::to_string(d));
    const auto f = xp::fft::fftfreq(n, d).to_vector<double>();
    const auto r = xp::fft::rfftfreq(n, d).to_vector<double>();
    EXPECT_EQ(f, values_at<double>(c, k["fftfreq"].get<std::size_t>(), n));
    EXPECT_EQ(r, values_at<double>(c, k["rfftfreq"].get<std::size_t>(), n / 2 + 1));
  }
  const Array f32 = xp::fft::fftfreq(4, 0.5, DType::float32);
  EXPECT_EQ(f32.dtype(), DType::float32);
  EXPECT_EQ(f32.to_vector<float>(), (std::vector<float>{0.0f, 0.5f, -1.0f, -0.5f}));
  EXPECT_EQ(xp::fft::rfftfreq(1).to_vector<double>(), std::vector<double>{0.0});
}

TEST(Fft, ShiftsAreNumPys) {
  const Array a = xp::arange(5);
  EXPECT_EQ(xp::fft::fftshift(a).to_vector<std::int64_t>(), (std::vector<std::int64_t>{3, 4, 0, 1, 2}));
  EXPECT_EQ(xp::fft::ifftshift(a).to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 3, 4, 0, 1}));
  EXPECT_EQ(xp::fft::ifftshift(xp::fft::fftshift(a)).to_vector<std::int64_t>(), a.to_vector<std::int64_t>());
  // numpy.fft.fftshift(np.arange(12).reshape(3, 4)) and with axes=(1,)
  const Array m = xp::reshape(xp::arange(12), {3, 4});
  EXPECT_EQ(xp::fft::fftshift(m).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{10, 11, 8, 9, 2, 3, 0, 1, 6, 7, 4, 5}));
  EXPECT_EQ(xp::fft::fftshift(m, std::vector<int>{1}).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9}));
  EXPECT_EQ(xp::fft::ifftshift(m, std::vector<int>{-2}).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3}));
  const Array f = xp::fft::fftfreq(6);
  EXPECT_EQ(xp::fft::fftshift(f).to_vector<double>(),
            (std::vector<double>{-0.5, -1.0 / 3, -1.0 / 6, 0, 1.0 / 6, 1.0 / 3}));
}

// x and y agree within c eps log2(n) ||x||_2 per element.
void expect_close(const Array& x, const Array& y, double c) {
  const auto a = x.astype(DType::complex128).to_vector<cd>();
  const auto b = y.astype(DType::complex128).to_vector<cd>();
  ASSERT_EQ(a.size(), b.size());
  double norm = 0, err = 0;
  for (std::size_t i = 0; i < a.size(); ++i) norm += std::norm(a[i]), err = std::max(err, std::abs(a[i] - b[i]));
  const DType t = x.dtype() == DType::float32 || x.dtype() == DType::complex64 ? DType::float32 : DType::float64;
  const double bound =
      c * eps_of(t) * std::log2(std::max<double>(2.0, static_cast<double>(a.size()))) * std::sqrt(norm);
  EXPECT_LE(err, bound) << "size " << a.size();
}

double norm2(const Array& x) {
  double s = 0;
  for (const cd& v : x.astype(DType::complex128).to_vector<cd>()) s += std::norm(v);
  return std::sqrt(s);
}

TEST(Fft, RoundTrips) {
  xp::random::Generator g(7);
  for (i64 n :
       std::vector<i64>{1, 2, 3, 6, 7, 16, 97, 243, 1000, 1009, 4096, 6561, 20014, 65537, i64{1} << 20, i64{1000003}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    for (DType t : {DType::float32, DType::float64}) {
      const DType ct = t == DType::float32 ? DType::complex64 : DType::complex128;
      const Array re = g.normal({n}, t), im = g.normal({n}, t);
      const Array z = (re + im * std::complex<double>(0, 1)).astype(ct);
      expect_close(z, xp::fft::ifft(xp::fft::fft(z)), 2 * kC);
      expect_close(re, xp::fft::irfft(xp::fft::rfft(re), n), 2 * kC);
      // ortho is unitary: the norm is kept
      const double nz = norm2(z), nf = norm2(xp::fft::fft(z, std::nullopt, -1, xp::fft::Norm::ortho));
      EXPECT_NEAR(nf, nz, 2 * kC * eps_of(t) * std::log2(std::max<double>(2, double(n))) * nz);
    }
  }
  // Batches of rows along every axis.
  const Array b = g.normal({6, 50, 10}, DType::float64).astype(DType::complex128);
  for (int axis : {0, 1, 2})
    expect_close(b, xp::fft::ifft(xp::fft::fft(b, std::nullopt, axis), std::nullopt, axis), 2 * kC);
  expect_close(b, xp::fft::ifftn(xp::fft::fftn(b)), 2 * kC);
  const Array r = g.normal({6, 50, 10}, DType::float32);
  expect_close(r, xp::fft::irfftn(xp::fft::rfftn(r), std::vector<i64>{6, 50, 10}), 2 * kC);
}

// Plans are shared between threads (a cache under a lock), buffers are each thread's own: callers on
// several threads get the answers of one caller.
TEST(Fft, ConcurrentCallers) {
  xp::random::Generator g(17);
  std::vector<Array> inputs;
  for (i64 n : {i64{1000}, i64{4096}, i64{20014}, i64{3 * 211}, i64{1} << 16})
    inputs.push_back(g.normal({2, n}).astype(DType::complex128));
  std::vector<std::vector<cd>> serial;
  for (const Array& x : inputs) serial.push_back(xp::fft::fft(x).to_vector<cd>());
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep)
        for (std::size_t i = 0; i < inputs.size(); ++i)
          if (xp::fft::fft(inputs[(i + t) % inputs.size()]).to_vector<cd>() != serial[(i + t) % inputs.size()])
            ++mismatches[t];
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(Fft, Methods) {
  EXPECT_EQ(cpu::fft_method(1000, 40), "stockham");
  EXPECT_EQ(cpu::fft_method(1000, 1), "four-step");
  EXPECT_EQ(cpu::fft_method(i64{1} << 20, 1), "four-step");
  EXPECT_EQ(cpu::fft_method(31, 1), "stockham");
  EXPECT_EQ(cpu::fft_method(97, 20), "bluestein");  // 3 transforms of 200 cost less than radix 97
  EXPECT_EQ(cpu::fft_method(2 * 10007, 1), "bluestein");
  EXPECT_EQ(cpu::fft_method(1000003, 1), "bluestein");
  EXPECT_EQ(cpu::fft_method(3 * 211, 1), "bluestein");
}

TEST(Fft, ViewsAndDtypes) {
  xp::random::Generator g(3);
  const Array x = g.normal({8, 30}, DType::float64);
  const Array stepped = x.slice({xp::Slice(), xp::Slice(std::nullopt, std::nullopt, 2)});
  expect_close(xp::fft::fft(stepped), xp::fft::fft(stepped.copy()), 0.0);
  expect_close(xp::fft::fft(x.T(), std::nullopt, 0).T(), xp::fft::fft(x), 0.0);
  EXPECT_EQ(xp::fft::fft(x.astype(DType::float16)).dtype(), DType::complex64);
  EXPECT_EQ(xp::fft::rfft(x.astype(DType::float32)).dtype(), DType::complex64);
  EXPECT_EQ(xp::fft::irfft(x.astype(DType::complex64)).dtype(), DType::float32);
  EXPECT_EQ(xp::fft::hfft(x).dtype(), DType::float64);
  EXPECT_EQ(xp::fft::ihfft(x.astype(DType::float32)).dtype(), DType::complex64);
}

TEST(Fft, BadInputIsTyped) {
  namespace F = xp::fft;
  const Array x = xp::ones({4, 6});
  EXPECT_THROW((void)F::fft(xp::arange(4)), xp::TypeError);
  EXPECT_THROW((void)F::fft(xp::ones({3}, DType::bool_)), xp::TypeError);
  EXPECT_THROW((void)F::rfft(x.astype(DType::complex128)), xp::TypeError);
  EXPECT_THROW((void)F::rfftn(x.astype(DType::complex64)), xp::TypeError);
  EXPECT_THROW((void)F::irfft(xp::arange(4)), xp::TypeError);
  EXPECT_THROW((void)F::fft(x, 0), xp::ValueError);
  EXPECT_THROW((void)F::ifft(x, -3), xp::ValueError);
  EXPECT_THROW((void)F::irfft(xp::ones({1})), xp::ValueError);  // n defaults to 2 (1 - 1) = 0
  EXPECT_THROW((void)F::fft(xp::ones({3, 0})), xp::ValueError);
  EXPECT_THROW((void)F::fft(x, std::nullopt, 2), xp::ValueError);
  EXPECT_THROW((void)F::fft(xp::asarray({1.0}).reshape({})), xp::ValueError);
  EXPECT_THROW((void)F::fftn(x, std::nullopt, std::vector<int>{0, 0}), xp::ValueError);
  EXPECT_THROW((void)F::fftn(x, std::nullopt, std::vector<int>{1, -1}), xp::ValueError);
  EXPECT_THROW((void)F::fftn(x, std::vector<i64>{2, 3}, std::vector<int>{0}), xp::ValueError);
  EXPECT_THROW((void)F::fftn(x, std::vector<i64>{2, 3, 4}), xp::ValueError);
  EXPECT_THROW((void)F::fftn(x, std::vector<i64>{2, 0}), xp::ValueError);
  EXPECT_THROW((void)F::norm_from_string("Ortho"), xp::ValueError);
  EXPECT_THROW((void)F::norm_from_string(""), xp::ValueError);
  EXPECT_EQ(F::norm_from_string("forward"), F::Norm::forward);
  EXPECT_THROW((void)F::fftfreq(0), xp::ValueError);
  EXPECT_THROW((void)F::rfftfreq(-1), xp::ValueError);
  EXPECT_THROW((void)F::fftfreq(4, 1.0, DType::int32), xp::TypeError);
  EXPECT_THROW((void)F::fftfreq(4, 1.0, DType::complex64), xp::TypeError);
  EXPECT_THROW((void)F::fftshift(x, std::vector<int>{2}), xp::ValueError);
}

// A device whose backend transforms nothing (Backend::fft's default: false): the array layer
// computes on the CPU and copies the result to it.
class NoFftDevice final : public xp_test::CpuForwardingBackend {
 public:
  const char* name() const noexcept override { return "no-fft"; }
  bool fft(const xp::detail::FftCall& call, const View& in, const View& out) override {
    ++fft_calls;
    return xp::detail::Backend::fft(call, in, out);
  }
  int fft_calls = 0;
};

TEST(Fft, FallsBackToTheCpu) {
  NoFftDevice second;
  const xp::Device other = xp::Device::cuda(0);
  xp::detail::register_backend(other, &second);
  {
    xp::random::Generator g(11);
    const Array x = g.normal({3, 40}, DType::float64);
    const Array on_other = x.to_device(other);
    const Array r = xp::fft::rfft(on_other);
    EXPECT_EQ(r.device(), other);
    EXPECT_EQ(second.fft_calls, 1);
    expect_close(xp::fft::rfft(x), r.to_device(xp::Device::cpu()), 0.0);
    const Array c = xp::fft::fftn(on_other.astype(DType::complex64));
    EXPECT_EQ(c.device(), other);
    expect_close(xp::fft::fftn(x.astype(DType::complex64)), c.to_device(xp::Device::cpu()), 0.0);
  }
  xp::detail::register_backend(other, nullptr);
}

// ---- on a GPU (labelled gpu): the device's transforms agree with the CPU's ----

void gpu_agrees(DType t, const std::vector<i64>& lengths) {
  xp::random::Generator g(5);
  const xp::Device gpu = xp::Device::cuda(0);
  for (i64 n : lengths) {
    SCOPED_TRACE("n " + std::to_string(n) + " " + std::string(xp::name(t)));
    const Array x = g.normal({4, n}, t);
    const Array z = (x + g.normal({4, n}, t) * std::complex<double>(0, 1))
                        .astype(t == DType::float32 ? DType::complex64 : DType::complex128);
    const Array xg = x.to_device(gpu), zg = z.to_device(gpu);
    expect_close(xp::fft::fft(z), xp::fft::fft(zg).to_device(xp::Device::cpu()), 2 * kC);
    expect_close(xp::fft::ifft(z, std::nullopt, -1, xp::fft::Norm::ortho),
                 xp::fft::ifft(zg, std::nullopt, -1, xp::fft::Norm::ortho).to_device(xp::Device::cpu()), 2 * kC);
    expect_close(xp::fft::rfft(x), xp::fft::rfft(xg).to_device(xp::Device::cpu()), 2 * kC);
    expect_close(xp::fft::irfft(z, n), xp::fft::irfft(zg, n).to_device(xp::Device::cpu()), 2 * kC);
  }
}

TEST(FftGpu, AgreesWithTheCpu) {
  XP_REQUIRE_GPU();
  gpu_agrees(DType::float64, {1, 8, 97, 1000, 2 * 10007, i64{1} << 16});
  gpu_agrees(DType::float32, {3, 12, 1009, 4096});
}

TEST(FftGpu, ManyAxes) {
  XP_REQUIRE_GPU();
  xp::random::Generator g(9);
  const xp::Device gpu = xp::Device::cuda(0);
  const Array x = g.normal({5, 6, 7}, DType::float64);
  expect_close(xp::fft::rfftn(x), xp::fft::rfftn(x.to_device(gpu)).to_device(xp::Device::cpu()), 2 * kC);
  const Array c = xp::fft::fftn(x, std::vector<i64>{4, 9}, std::vector<int>{2, 0});
  expect_close(
      c, xp::fft::fftn(x.to_device(gpu), std::vector<i64>{4, 9}, std::vector<int>{2, 0}).to_device(xp::Device::cpu()),
      2 * kC);
  const Array e = xp::fft::fft(xp::zeros({0, 8}, DType::complex64, gpu));
  EXPECT_EQ(e.shape(0), 0);
}

}  // namespace
