#include "runtime/parallel.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include "xp/config.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace xp::detail {

namespace {

std::atomic<int> g_threads{0};            // 0 = not decided yet
std::atomic<bool> g_started{false};       // an OpenMP team has run in this process
std::atomic<bool> g_forked_child{false};  // this process is a child forked after g_started
// Initial-exec: read on every parallel_for, in a shared library (no __tls_get_addr call).
thread_local int t_depth __attribute__((tls_model("initial-exec"))) = 0;

void on_fork_child() {
  if (g_started.load(std::memory_order_relaxed)) g_forked_child.store(true, std::memory_order_relaxed);
}

int cores_available() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

int decide_threads() noexcept {
  int n = 0;
  try {
    n = xp::config().num_threads;
  } catch (...) {
    n = 0;  // a malformed variable is reported where the configuration is read; run with the default
  }
  if (n <= 0) n = cores_available();
  return n;
}

std::once_flag g_atfork_once;

// All of [0, n) on the calling thread, counted as inside parallel_for (nested calls run inline).
struct DepthGuard {
  DepthGuard() noexcept { ++t_depth; }
  ~DepthGuard() { --t_depth; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
};
void run_inline(FunctionRef<void(std::int64_t, std::int64_t)> fn, std::int64_t n) {
  DepthGuard guard;
  fn(0, n);
}

}  // namespace

int num_threads() noexcept {
  if (g_forked_child.load(std::memory_order_relaxed)) return 1;
  int n = g_threads.load(std::memory_order_relaxed);
  if (n == 0) {
    n = decide_threads();
    int expected = 0;
    g_threads.compare_exchange_strong(expected, n);
    n = g_threads.load(std::memory_order_relaxed);
  }
  return n;
}

void set_num_threads(int n) noexcept {
  g_threads.store(n < 1 ? 1 : n, std::memory_order_relaxed);
}

bool in_parallel() noexcept {
  return t_depth > 0;
}

void parallel_for(std::int64_t n, std::int64_t grain, FunctionRef<void(std::int64_t, std::int64_t)> fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  const int threads = num_threads();
  std::int64_t chunks = (n + grain - 1) / grain;
  if (chunks <= 1 || threads <= 1 || t_depth > 0) {
    run_inline(fn, n);
    return;
  }
#ifdef _OPENMP
  std::call_once(g_atfork_once, [] { pthread_atfork(nullptr, nullptr, on_fork_child); });
  g_started.store(true, std::memory_order_relaxed);
  std::exception_ptr error;
  std::mutex error_mutex;
  // At most `threads` threads, with a few chunks each handed out as threads come free: a thread the
  // OS has descheduled (a busy machine, a CI runner) then delays one small chunk, not half the work.
  if (chunks > static_cast<std::int64_t>(threads) * 4) chunks = static_cast<std::int64_t>(threads) * 4;
  const std::int64_t per = n / chunks, extra = n % chunks;
  const int team = static_cast<int>(std::min<std::int64_t>(chunks, threads));
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t begin = c * per + (c < extra ? c : extra);
    const std::int64_t end = begin + per + (c < extra ? 1 : 0);
    ++t_depth;
    try {
      fn(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    --t_depth;
  }
  if (error) std::rethrow_exception(error);
#else
  run_inline(fn, n);
#endif
}

}  // namespace xp::detail
