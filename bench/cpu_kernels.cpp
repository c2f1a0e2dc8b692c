// CUDA C++ kernels on the CPU against xp's own array functions, in one run (public API only):
//   1. vector add: c[i] = a[i] + b[i] through an xp::Program kernel on the CPU device, and
//      xp::add(a, b, out=c), at 2^24 float32 (--log2n); the two outputs compared bit for bit. Once
//      in a program of its own (the seed's), once in a program with a kernel that synchronises.
//   2. block reduction: a kernel whose blocks of 256 threads sum a grid-stride share each, then a
//      tree in __shared__ memory with __syncthreads (so its threads run as fibers), a second launch
//      of one block summing the partial sums; against xp::sum(a). The two sums are compared with a
//      relative bound (their orders of addition differ).
//   3. compile: the vector add's first kernel() in a new process whose disk cache is empty (cold:
//      the host compiler runs), and in a new process whose disk cache holds it (cached: the shared
//      object is loaded), timed from the Program's construction to the kernel in hand.
// Steady-state rows: medians of 7 rounds of 10 calls (CPU work has ended when its call returns);
// process rows: medians of 5 child processes. Each row prints its ratio to the baseline.
// Usage: xp_bench_cpu_kernels [--log2n 24]
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench_timing.hpp"
#include "xp/xp.hpp"

using namespace xp;
using Clock = std::chrono::steady_clock;

namespace {

// The seed's vector add, a program of its own: no function of it synchronises, so each block runs
// as one loop over its threads that the host compiler may vectorise (docs/cpu-kernels.md).
const char* kSource = R"(
extern "C" __global__ void vadd(const float* a, const float* b, float* c, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

// The same vector add beside a kernel that synchronises: each thread's call is followed by a check
// (did it start the block's fibers?), and the loop stays scalar.
const char* kSyncSource = R"(
extern "C" __global__ void vadd(const float* a, const float* b, float* c, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void block_sum(const float* x, float* partial, long long n) {
  __shared__ float s[256];
  float acc = 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    acc += x[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}
)";

using xp_bench::Stat;
using xp_bench::stat_of;

Stat measure(int reps, const std::function<void()>& f) {
  f();  // warm: first-touch pages, plans, the kernel's first call
  return xp_bench::rounds(reps, f);
}

void row(const char* what, const Stat& s, const char* base, const Stat& b) {
  std::printf("%-44s %10.3f ms [%.3f-%.3f]   %-18s %10.3f ms [%.3f-%.3f]   speed ratio %.3f\n", what, s.median * 1e3,
              s.lo * 1e3, s.hi * 1e3, base, b.median * 1e3, b.lo * 1e3, b.hi * 1e3, b.median / s.median);
}

// A child process: the vector add's kernel() timed from the Program's construction, in ms.
int child_compile() {
  const auto t0 = Clock::now();
  Program p(kSource);
  Kernel k = p.kernel("vadd", Device::cpu());
  const double ms = std::chrono::duration<double>(Clock::now() - t0).count() * 1e3;
  // The kernel must run: one launch on four elements.
  const Array a = full({4}, 1.5, DType::float32, "cpu"), b = full({4}, 2.0, DType::float32, "cpu");
  const Array c = empty({4}, DType::float32, "cpu");
  k.launch({.grid = 1, .block = 4}, a, b, c, static_cast<long long>(4));
  if (c.to_vector<float>()[3] != 3.5f) {
    std::fprintf(stderr, "wrong result\n");
    return 1;
  }
  std::printf("%.6f\n", ms);
  return 0;
}

// Runs this program with --child-compile and XP_CACHE_DIR=dir; its time in ms (NaN on failure).
double child(const std::string& dir) {
  return xp_bench::run_self("XP_CACHE_DIR='" + dir + "'", "--child-compile");
}

}  // namespace

int main(int argc, char** argv) {
  int log2n = 24;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--child-compile") return child_compile();
    if (k == "--log2n" && i + 1 < argc) log2n = std::atoi(argv[++i]);
  }
  const Device cpu = Device::cpu();
  std::printf("xp %s, source %s, CPU threads %d\n", std::string(version()).c_str(), std::string(source_hash()).c_str(),
              num_threads());
  const std::int64_t n = std::int64_t{1} << log2n;
  random::Generator g(7);
  Array a = g.uniform({n}, DType::float32, -1, 1, cpu), b = g.uniform({n}, DType::float32, -1, 1, cpu);
  const Array c = empty({n}, DType::float32, cpu), d = empty({n}, DType::float32, cpu);
  a.eval();
  b.eval();

  Program p(kSource), q(kSyncSource);
  const Kernel vadd = p.kernel("vadd", cpu), vadd_checked = q.kernel("vadd", cpu),
               block_sum = q.kernel("block_sum", cpu);
  const auto nn = static_cast<long long>(n);
  const unsigned grid = static_cast<unsigned>((n + 255) / 256);

  // 1. vector add
  const Stat k1 = measure(10, [&] { vadd.launch({.grid = grid, .block = 256}, a, b, c, nn); });
  const Stat x1 = measure(10, [&] { add(a, b, d).eval(); });
  const auto cv = c.to_vector<float>(), dv = d.to_vector<float>();
  const bool same = std::memcmp(cv.data(), dv.data(), cv.size() * sizeof(float)) == 0;
  std::printf("vector add, 2^%d float32: outputs %s\n", log2n, same ? "identical bit for bit" : "DIFFER");
  row("Program kernel on the CPU", k1, "xp::add(out=)", x1);
  const Stat k1s = measure(10, [&] { vadd_checked.launch({.grid = grid, .block = 256}, a, b, c, nn); });
  const auto cv2 = c.to_vector<float>();
  std::printf("the same kernel in a program that synchronises: outputs %s\n",
              std::memcmp(cv2.data(), dv.data(), cv2.size() * sizeof(float)) == 0 ? "identical bit for bit" : "DIFFER");
  row("  ... beside a kernel that synchronises", k1s, "xp::add(out=)", x1);
  // What ordinary stores allow: the same loop in C++, compiled with this program, split over as many
  // threads as xp uses. xp::add writes its output with non-temporal stores (no read for ownership
  // of the output's cache lines), which neither this loop nor a kernel's `c[i] = ...` does.
  {
    const auto* pa = static_cast<const float*>(a.data());
    const auto* pb = static_cast<const float*>(b.data());
    auto* pc = static_cast<float*>(Array(c).mutable_data());
    const int parts = std::max(1, num_threads());
    const Stat loop = measure(10, [&] {
      std::vector<std::thread> ts;
      for (int t = 0; t < parts; ++t)
        ts.emplace_back([&, t] {
          const std::int64_t lo = n * t / parts, hi = n * (t + 1) / parts;
          for (std::int64_t i = lo; i < hi; ++i) pc[i] = pa[i] + pb[i];
        });
      for (auto& t : ts) t.join();
    });
    row("a C++ loop on as many std::threads", loop, "xp::add(out=)", x1);
    row("Program kernel on the CPU", k1, "the C++ loop", loop);
  }

  // 2. block reduction: 1024 blocks of 256 threads, then one block over the 1024 partial sums
  const unsigned blocks = 1024;
  const Array partial = empty({blocks}, DType::float32, cpu), total = empty({1}, DType::float32, cpu);
  const Stat k2 = measure(10, [&] {
    block_sum.launch({.grid = blocks, .block = 256}, a, partial, nn);
    block_sum.launch({.grid = 1, .block = 256}, partial, total, static_cast<long long>(blocks));
  });
  Array s;
  const Stat x2 = measure(10, [&] {
    s = sum(a);
    s.eval();
  });
  const double kt = total.to_vector<float>()[0], xt = s.to_vector<float>()[0];
  const double rel = std::abs(kt - xt) / std::max(1e-30, std::abs(xt));
  std::printf("block reduction, 2^%d float32: kernel %.6g, xp::sum %.6g, relative difference %.2e (%s)\n", log2n, kt,
              xt, rel, rel < 1e-4 ? "within 1e-4" : "BEYOND 1e-4");
  row("block reduction kernel (__syncthreads)", k2, "xp::sum", x2);

  // 3. compile: cold (each child its own empty cache folder) and cached (one folder, filled first)
  char tmpl[] = "/tmp/xp-bench-cpu-kernels-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::filesystem::path root(tmpl);
  std::vector<double> cold, warm;
  for (int i = 0; i < 5; ++i) cold.push_back(child((root / ("cold" + std::to_string(i))).string()) / 1e3);
  const std::string shared = (root / "warm").string();
  child(shared);
  for (int i = 0; i < 5; ++i) warm.push_back(child(shared) / 1e3);
  std::filesystem::remove_all(root);
  const bool ok = std::none_of(cold.begin(), cold.end(), [](double v) { return std::isnan(v); }) &&
                  std::none_of(warm.begin(), warm.end(), [](double v) { return std::isnan(v); });
  if (!ok) {
    std::printf("compile rows: a child process failed\n");
    return 1;
  }
  const Stat cs = stat_of(cold), ws = stat_of(warm);
  std::printf("%-44s %10.3f ms [%.3f-%.3f]   goal <= 1000 ms: %s\n", "cold host compile of the vector add (5 procs)",
              cs.median * 1e3, cs.lo * 1e3, cs.hi * 1e3, cs.median <= 1.0 ? "met" : "NOT met");
  std::printf("%-44s %10.3f ms [%.3f-%.3f]   goal <= 1 ms: %s\n", "cached load of the vector add (5 procs)",
              ws.median * 1e3, ws.lo * 1e3, ws.hi * 1e3, ws.median <= 1e-3 ? "met" : "NOT met");
  return same && rel < 1e-4 ? 0 : 1;
}
