// First figures for arrays on a CUDA device (public API only): the host cost of an evaluated
// c = a + b on 1,024 elements, add(out=) and a fused a*b+c at 2^27 float32 in GB/s (bytes read plus
// written), and the first a + b of the process (compile or disk-cache hit included). Medians of 5
// with min..max. Not yet the `xp bench` rows against CuPy and PyTorch.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "xp/xp.hpp"

using namespace xp;
using Clock = std::chrono::steady_clock;

namespace {
struct Stat {
  double median, lo, hi;
};
Stat measure(int reps, const std::function<void()>& f, const std::function<void()>& sync) {
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    sync();
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) f();
    sync();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / reps);
  }
  std::sort(t.begin(), t.end());
  return {t[2], t[0], t[4]};
}
}  // namespace

int main() {
  std::printf("xp %s, source %s\n", std::string(xp::version()).c_str(), std::string(xp::source_hash()).c_str());
  const Device gpu = Device::cuda(0);
  const Stream st = Stream::default_for(gpu);
  auto sync = [&] { st.synchronize(); };
  {
    const auto t0 = Clock::now();
    Array a = ones({1024}, DType::float32, gpu), b = ones({1024}, DType::float32, gpu);
    Array c = a + b;
    c.eval();
    sync();
    std::printf("first a + b of the process (1,024 float32, with allocation, compile or cache hit): %.3f ms\n",
                std::chrono::duration<double>(Clock::now() - t0).count() * 1e3);
  }
  random::Generator g(1);
  Array s1 = g.uniform({1024}, DType::float32, 0, 1, gpu), s2 = g.uniform({1024}, DType::float32, 0, 1, gpu);
  Stat small = measure(
      2000,
      [&] {
        Array c = s1 + s2;
        c.eval();
      },
      sync);
  std::printf("host cost of an evaluated c = a + b, 1,024 float32: %.2f us [%.2f..%.2f]\n", small.median * 1e6,
              small.lo * 1e6, small.hi * 1e6);
  const std::int64_t n = std::int64_t{1} << 27;
  Array a = g.uniform({n}, DType::float32, 0, 1, gpu), b = g.uniform({n}, DType::float32, 0, 1, gpu),
        c = g.uniform({n}, DType::float32, 0, 1, gpu), o = empty({n}, DType::float32, gpu);
  Stat add_out = measure(
      10, [&] { add(a, b, o); }, sync);
  const double bytes3 = 3.0 * 4 * static_cast<double>(n), bytes4 = 4.0 * 4 * static_cast<double>(n);
  std::printf("add(a, b, out=o), 2^27 float32: %.3f ms [%.3f..%.3f], %.0f GB/s\n", add_out.median * 1e3,
              add_out.lo * 1e3, add_out.hi * 1e3, bytes3 / add_out.median / 1e9);
  Stat fma_out = measure(
      10, [&] { add(a * b, c, o); }, sync);
  std::printf("a * b + c into out=o (one fused kernel, rounded twice), 2^27 float32: %.3f ms [%.3f..%.3f], %.0f GB/s\n",
              fma_out.median * 1e3, fma_out.lo * 1e3, fma_out.hi * 1e3, bytes4 / fma_out.median / 1e9);
  Stat fresh = measure(
      10,
      [&] {
        Array d = a * b + c;
        d.eval();
      },
      sync);
  std::printf("a * b + c into a new array, 2^27 float32: %.3f ms [%.3f..%.3f], %.0f GB/s\n", fresh.median * 1e3,
              fresh.lo * 1e3, fresh.hi * 1e3, bytes4 / fresh.median / 1e9);
  {
    // sum of 1 GiB (2^28 float32), the value read back each call.
    Array big = g.uniform({std::int64_t{1} << 28}, DType::float32, 0, 1, gpu);
    volatile float sink = 0;
    Stat s = measure(
        10, [&] { sink = sum(big).item<float>(); }, sync);
    const double bytes = 4.0 * static_cast<double>(std::int64_t{1} << 28);
    std::printf("sum of 2^28 float32 (1 GiB), value read back: %.3f ms [%.3f..%.3f], %.0f GB/s\n", s.median * 1e3,
                s.lo * 1e3, s.hi * 1e3, bytes / s.median / 1e9);
    (void)sink;
  }
  for (DType t : {DType::float32, DType::float16}) {
    const std::int64_t m = 8192;
    Array A = g.uniform({m, m}, DType::float32, -1, 1, gpu).astype(t);
    Array B = g.uniform({m, m}, DType::float32, -1, 1, gpu).astype(t);
    A.eval();
    B.eval();
    Stat s = measure(
        3,
        [&] {
          Array C = matmul(A, B);
          C.eval();
        },
        sync);
    std::printf("matmul 8192^3 %s: %.3f ms [%.3f..%.3f], %.1f TFLOP/s\n", t == DType::float32 ? "float32" : "float16",
                s.median * 1e3, s.lo * 1e3, s.hi * 1e3, 2.0 * m * m * m / s.median / 1e12);
  }
  // The first 2^20 results against the CPU backend, bit for bit.
  const Device cpu = Device::cpu();
  auto head = [&](const Array& x) { return x.slice({Slice(0, 1 << 20)}).to_device(cpu); };
  const std::vector<float> want = (head(a) * head(b) + head(c)).to_vector<float>();
  const std::vector<float> got = head(o).to_vector<float>();
  const bool ok = want == got;
  std::printf("a * b + c on the GPU equals the CPU backend's (a rounded multiply, then a rounded add): %s\n",
              ok ? "yes, bit for bit" : "NO");
  return ok ? 0 : 1;
}
