// xp::linalg and xp::fft on cuda:0 against the same calls on the CPU, through the public API (the
// array layer in front of cuSOLVER and cuFFT): float32 and complex64 within single precision's
// bounds, float64 and complex128 within double's. Factors defined up to signs (Q, R, U, Vh,
// eigenvectors) are compared through what is unique: Q R and |R|, U S Vh and S, A V - V diag(w) and
// w. Skipped without a GPU; registered only when the array layer's src/array/linalg.cpp and fft.cpp
// are in the tree (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <string>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::Array;
using xp::Device;
using xp::DType;

const xp_test::ProcessCache g_process_cache;

double rtol(DType t) {
  return t == DType::float32 || t == DType::complex64 ? 1e-4 : 1e-10;
}
Array random(xp::random::Generator& g, const xp::Shape& shape, DType t) {
  Array a = g.normal(shape, DType::float64, 0, 1, Device::cpu());
  if (t == DType::complex64 || t == DType::complex128)
    a = a.astype(t) + g.normal(shape, DType::float64, 0, 1, Device::cpu()).astype(t) * std::complex<double>(0, 1);
  return a.astype(t);
}
bool close(const Array& gpu, const Array& cpu, DType t, double scale = 1) {
  return xp::allclose(gpu.to_device(Device::cpu()), cpu, rtol(t) * scale, rtol(t) * scale);
}
constexpr DType kDtypes[] = {DType::float32, DType::float64, DType::complex64, DType::complex128};

TEST(CudaSolverGpu, PublicFunctionsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  xp::random::Generator g(42);
  for (DType t : kDtypes) {
    SCOPED_TRACE(xp::name(t));
    const Array m = random(g, {64, 8, 8}, t);
    const Array spd =
        xp::matmul(m, xp::conj(xp::matrix_transpose(m))) + xp::eye(8, std::nullopt, 0, t, Device::cpu()) * 8.0;
    const Array b = random(g, {64, 8, 3}, t);
    const Array a = m + xp::eye(8, std::nullopt, 0, t, Device::cpu()) * 4.0;
    const Array ag = a.to_device(gpu), spdg = spd.to_device(gpu);
    EXPECT_TRUE(close(xp::linalg::solve(ag, b.to_device(gpu)), xp::linalg::solve(a, b), t, 10));
    EXPECT_TRUE(close(xp::linalg::cholesky(spdg), xp::linalg::cholesky(spd), t, 10));
    EXPECT_TRUE(close(xp::linalg::cholesky(spdg, true), xp::linalg::cholesky(spd, true), t, 10));
    EXPECT_TRUE(close(xp::linalg::inv(ag), xp::linalg::inv(a), t, 10));
    EXPECT_TRUE(close(xp::linalg::det(ag), xp::linalg::det(a), t, 100));
    EXPECT_TRUE(close(xp::linalg::eigvalsh(spdg), xp::linalg::eigvalsh(spd), t, 100));
    const xp::linalg::EighResult e = xp::linalg::eigh(spdg);
    EXPECT_TRUE(close(xp::matmul(spdg, e.eigenvectors),
                      (e.eigenvectors * xp::expand_dims(e.eigenvalues, -2)).to_device(Device::cpu()), t, 1000));
    for (const char* mode : {"reduced", "complete"}) {
      const Array r = random(g, {4, 9, 5}, t);
      const xp::linalg::QRResult qg = xp::linalg::qr(r.to_device(gpu), mode), qc = xp::linalg::qr(r, mode);
      EXPECT_TRUE(close(xp::matmul(qg.Q, qg.R), r, t, 10)) << mode;
      EXPECT_TRUE(close(xp::abs(qg.R), xp::abs(qc.R), t, 10)) << mode;
    }
    for (const xp::Shape& shape : {xp::Shape{3, 9, 5}, xp::Shape{3, 5, 9}}) {
      const Array s = random(g, shape, t);
      EXPECT_TRUE(close(xp::linalg::svdvals(s.to_device(gpu)), xp::linalg::svdvals(s), t, 10));
      const xp::linalg::SVDResult u = xp::linalg::svd(s.to_device(gpu), false);
      EXPECT_TRUE(close(xp::matmul(u.U * xp::expand_dims(u.S, -2).astype(t), u.Vh), s, t, 10));
    }
  }
}

TEST(CudaFftGpu, PublicFunctionsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  xp::random::Generator g(7);
  for (DType t : {DType::complex64, DType::complex128}) {
    const DType rt = t == DType::complex64 ? DType::float32 : DType::float64;
    const Array x = random(g, {6, 100}, t), r = random(g, {6, 100}, rt);
    const Array xg = x.to_device(gpu), rg = r.to_device(gpu);
    for (xp::fft::Norm norm : {xp::fft::Norm::backward, xp::fft::Norm::ortho, xp::fft::Norm::forward}) {
      EXPECT_TRUE(close(xp::fft::fft(xg, std::nullopt, -1, norm), xp::fft::fft(x, std::nullopt, -1, norm), t, 100));
      EXPECT_TRUE(close(xp::fft::ifft(xg, std::nullopt, -1, norm), xp::fft::ifft(x, std::nullopt, -1, norm), t, 100));
      EXPECT_TRUE(close(xp::fft::rfft(rg, std::nullopt, -1, norm), xp::fft::rfft(r, std::nullopt, -1, norm), t, 100));
      EXPECT_TRUE(close(xp::fft::irfft(xg, 150, -1, norm), xp::fft::irfft(x, 150, -1, norm), t, 100));
    }
    EXPECT_TRUE(close(xp::fft::fftn(xg), xp::fft::fftn(x), t, 1000));
    EXPECT_TRUE(close(xp::fft::fft(xg, 64, 0), xp::fft::fft(x, 64, 0), t, 100));
  }
}

}  // namespace
