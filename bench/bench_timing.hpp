#pragma once

// What the benchmark programs that time rounds of calls and child processes share: medians of
// rounds, and this program run again as a child that prints one number. Public API only.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace xp_bench {

struct Stat {
  double median, lo, hi;  // seconds
};

inline Stat stat_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

// Seven rounds of `reps` calls of f, each round between two calls of sync (work on a device has
// ended); the time per call of each round.
inline Stat rounds(
    int reps, const std::function<void()>& f, const std::function<void()>& sync = [] {}) {
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    sync();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    sync();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps);
  }
  return stat_of(t);
}

// Runs this program again as `env self args` (env: VAR='value' assignments or empty) and reads the
// number its first line prints; NaN when it could not run, printed nothing or failed.
inline double run_self(const std::string& env, const std::string& args) {
  char self[4096] = {};
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return NAN;
  const std::string cmd = env + (env.empty() ? "" : " ") + "'" + std::string(self) + "' " + args;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return NAN;
  char line[128] = {};
  const bool got = std::fgets(line, sizeof line, p) != nullptr;
  const int rc = ::pclose(p);
  return got && rc == 0 ? std::atof(line) : NAN;
}

}  // namespace xp_bench
