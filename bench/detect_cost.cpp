// How long the first xp::cuda_status() takes in a fresh process: docs/design.md ("Principles", 2) promises under 5 ms
// on a machine without a driver. Each sample is a new process (detection is cached per process);
// the baseline, measured in the same children, is one failed dlopen of a missing library, the
// least any detection must do.
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "xp/xp.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

int child() {
  auto t0 = Clock::now();
  void* h = dlopen("libxp-detect-bench-absent.so.1", RTLD_NOW | RTLD_LOCAL);
  const double baseline = us_since(t0);
  if (h != nullptr) dlclose(h);
  t0 = Clock::now();
  const xp::CudaStatus s = xp::cuda_status();
  const double first = us_since(t0);
  t0 = Clock::now();
  const xp::CudaStatus again = xp::cuda_status();
  const double cached = us_since(t0);
  std::printf("%.3f %.3f %.3f %s %d\n", baseline, first, cached, std::string(xp::to_string(s.reason)).c_str(),
              again.available ? 1 : 0);
  return 0;
}

// With a driver, the cost the driver itself imposes: dlopen, cuInit and a device count, asked
// directly. Prints -1 when there is no driver.
int raw_child() {
  const auto t0 = Clock::now();
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::printf("-1\n");
    return 0;
  }
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  auto init = reinterpret_cast<Init>(dlsym(h, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(h, "cuDeviceGetCount"));
  int n = 0;
  const bool ok = init != nullptr && count != nullptr && init(0) == 0 && count(&n) == 0;
  std::printf("%.3f\n", ok ? us_since(t0) : -1.0);
  return 0;
}

// Runs this program with one argument and returns its first line.
std::string run_child(const char* self, const char* flag) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::string arg = flag;
  char* args[] = {const_cast<char*>(self), arg.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, self, &fa, nullptr, args, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  char buf[256] = {};
  const ssize_t got = rc == 0 ? read(fds[0], buf, sizeof buf - 1) : -1;
  close(fds[0]);
  int status = 0;
  if (rc == 0) waitpid(pid, &status, 0);
  return got > 0 ? std::string(buf, static_cast<size_t>(got)) : std::string();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--child") return child();
  if (argc > 1 && std::string(argv[1]) == "--raw-child") return raw_child();
  const int n = argc > 1 ? std::atoi(argv[1]) : 41;
  std::vector<double> base, first, cached, raw;
  std::string reason;
  for (int i = 0; i < n; ++i) {
    const std::string line = run_child(argv[0], "--child");
    double b = 0, f = 0, c = 0;
    char r[64] = {};
    int avail = 0;
    if (std::sscanf(line.c_str(), "%lf %lf %lf %63s %d", &b, &f, &c, r, &avail) != 5) {
      std::fprintf(stderr, "child %d gave no result\n", i);
      return 1;
    }
    base.push_back(b);
    first.push_back(f);
    cached.push_back(c);
    reason = r;
    const double d = std::atof(run_child(argv[0], "--raw-child").c_str());
    if (d > 0) raw.push_back(d);
  }
  const double budget_us = 5000.0;
  std::printf("xp %s (source %s): first xp::cuda_status() in a fresh process, %d processes (reason: %s)\n",
              std::string(xp::version()).c_str(), std::string(xp::source_hash()).c_str(), n, reason.c_str());
  std::printf("  %-44s %10s %10s\n", "", "median us", "p90 us");
  std::printf("  %-44s %10.1f %10.1f\n", "baseline: one failed dlopen", median(base), quantile(base, 0.9));
  std::printf("  %-44s %10.1f %10.1f\n", "cuda_status(), first call", median(first), quantile(first, 0.9));
  std::printf("  %-44s %10.3f %10.3f\n", "cuda_status(), cached", median(cached), quantile(cached, 0.9));
  if (!raw.empty()) {
    std::printf("  %-44s %10.1f %10.1f\n", "raw driver: dlopen + cuInit + cuDeviceGetCount", median(raw),
                quantile(raw, 0.9));
    std::printf("  first call / raw driver: %.2fx (the rest: entry points, device queries, NVML, NVRTC search)\n",
                median(first) / median(raw));
  }
  std::printf("  first call / baseline: %.1fx; first call / 5 ms budget: %.3f (%s)\n", median(first) / median(base),
              median(first) / budget_us,
              median(first) < budget_us ? "within budget"
              : raw.empty()             ? "OVER BUDGET"
                                        : "over: the budget is for machines without a driver");
  return 0;
}
