// xp::ElementwiseKernel against xp's own fused expression, on one device (default cuda:0; --device
// cpu for the CPU), public API only:
//   1. steady state: z = x * y + w through an ElementwiseKernel, and xp's fused a * b + c, at 2^26
//      float32, into an out array and into a new one; medians of 7 rounds of 20 calls (the device
//      synchronized around each round), each output NaN-filled before its row and checked bit for bit
//      against the other's; the ratio kernel / fused.
//   2. the first call of each in a new process whose disk cache is warm (this process compiled both
//      first): the median of 5 child processes each, and the ratio.
// Usage: xp_bench_user_kernels [--device cuda:0|cpu] [--log2n 26]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_timing.hpp"
#include "xp/xp.hpp"

using namespace xp;
using Clock = std::chrono::steady_clock;

namespace {

using xp_bench::Stat;
using xp_bench::stat_of;

Stat measure(int reps, const std::function<void()>& f, const std::function<void()>& sync) {
  return xp_bench::rounds(reps, f, sync);
}

const ElementwiseKernel& kernel() {
  static const ElementwiseKernel k("T x, T y, T w", "T z", "z = x * y + w", "bench_fma");
  return k;
}

// The index of the first element whose bits differ, or -1.
std::int64_t first_difference(const Array& a, const Array& b) {
  const auto x = a.to_vector<float>(), y = b.to_vector<float>();
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &y[i], sizeof(float)) != 0) return static_cast<std::int64_t>(i);
  return -1;
}

// A child process: the first call of one of the two, timed from before the call to the result on
// the host's side of the device (synchronized), in ms.
int first_call(const Device& d, const std::string& which) {
  const Array a = full({1024}, 1.5, DType::float32, d), b = full({1024}, 2.0, DType::float32, d),
              c = full({1024}, 0.25, DType::float32, d);
  const auto sync = [&] {
    if (d.is_cuda()) Stream::default_for(d).synchronize();
  };
  sync();
  const auto t0 = Clock::now();
  Array z;
  if (which == "kernel") {
    z = kernel()({a, b, c});
  } else {
    z = a * b + c;
  }
  z.eval();
  sync();
  const double ms = std::chrono::duration<double>(Clock::now() - t0).count() * 1e3;
  if (z.to_vector<float>()[0] != 3.25f) {
    std::fprintf(stderr, "wrong result\n");
    return 1;
  }
  std::printf("%.6f\n", ms);
  return 0;
}

double child_first_call(const std::string& device, const std::string& which) {
  return xp_bench::run_self("", "--device " + device + " --first-call " + which);
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cuda:0", first;
  int log2n = 26;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--device")
      device = argv[i + 1];
    else if (k == "--log2n")
      log2n = std::atoi(argv[i + 1]);
    else if (k == "--first-call")
      first = argv[i + 1];
  }
  const Device d(device);
  if (!first.empty()) return first_call(d, first);

  std::printf("xp %s, source %s, device %s\n", std::string(version()).c_str(), std::string(source_hash()).c_str(),
              d.str().c_str());
  if (d.is_cuda()) std::printf("GPU: %s\n", gpu_info(d).name.c_str());
  // CPU work is done when its call returns; a GPU's, when xp's stream of the device has run it.
  auto sync = [&] {
    if (d.is_cuda()) Stream::default_for(d).synchronize();
  };
  const std::int64_t n = std::int64_t{1} << log2n;
  random::Generator g(7);
  const Array a = g.uniform({n}, DType::float32, -1, 1, d), b = g.uniform({n}, DType::float32, -1, 1, d),
              c = g.uniform({n}, DType::float32, -1, 1, d);
  const Array o1 = empty({n}, DType::float32, d), o2 = empty({n}, DType::float32, d);
  const double bytes = 4.0 * 4 * static_cast<double>(n);
  const auto nan_fill = [&](const Array& o) {
    copyto(o, NAN);
    sync();
  };

  // Warm both (compile, or the disk cache), and check one against the other.
  nan_fill(o1);
  nan_fill(o2);
  kernel().call(std::vector<Operand>{a, b, c}, {.out = {o1}});
  add(a * b, c, o2);
  sync();
  std::int64_t diff = first_difference(o1, o2);
  std::printf("check: kernel vs fused into out, first differing index %lld\n", static_cast<long long>(diff));
  if (diff >= 0) return 1;

  const int reps = d.is_cuda() ? 20 : 3;
  nan_fill(o1);
  const Stat k_out = measure(
      reps,
      [&] {
        kernel().call(std::vector<Operand>{a, b, c}, {.out = {o1}});
      },
      sync);
  nan_fill(o2);
  const Stat f_out = measure(
      reps, [&] { add(a * b, c, o2); }, sync);
  diff = first_difference(o1, o2);
  const Stat k_new = measure(
      reps,
      [&] {
        (void)kernel()({a, b, c});
      },
      sync);
  const Stat f_new = measure(
      reps,
      [&] {
        Array z = a * b + c;
        z.eval();
      },
      sync);
  std::printf("2^%d float32, medians of 7 rounds of %d calls [min..max]:\n", log2n, reps);
  const auto row = [&](const char* name, const Stat& s) {
    std::printf("  %-44s %8.3f ms [%.3f..%.3f] %6.0f GB/s\n", name, s.median * 1e3, s.lo * 1e3, s.hi * 1e3,
                bytes / s.median / 1e9);
  };
  row("ElementwiseKernel z = x * y + w, out=", k_out);
  row("fused add(a * b, c, out=)", f_out);
  row("ElementwiseKernel, new output", k_new);
  row("fused a * b + c, new output", f_new);
  std::printf(
      "ratio kernel / fused: out= %.3f, new output %.3f (outputs after the rows: first differing index "
      "%lld)\n",
      k_out.median / f_out.median, k_new.median / f_new.median, static_cast<long long>(diff));

  // First calls in new processes, the disk cache warm from this one.
  std::vector<double> tk, tf;
  for (int r = 0; r < 5; ++r) {
    tk.push_back(child_first_call(device, "kernel"));
    tf.push_back(child_first_call(device, "fused"));
  }
  const Stat sk = stat_of(tk), sf = stat_of(tf);
  std::printf("first call in a new process, warm disk cache, median of 5 [min..max]:\n");
  std::printf("  ElementwiseKernel (1,024 float32)            %8.3f ms [%.3f..%.3f]\n", sk.median, sk.lo, sk.hi);
  std::printf("  fused a * b + c (1,024 float32)              %8.3f ms [%.3f..%.3f]\n", sf.median, sf.lo, sf.hi);
  std::printf("ratio kernel / fused: %.3f\n", sk.median / sf.median);
  return diff >= 0 ? 1 : 0;
}
