#include "backend/cpu/blas.hpp"

#include <atomic>
#include <mutex>

#include "backend/cpu/linalg.hpp"
#include "runtime/log.hpp"
#include "runtime/parallel.hpp"

namespace xp::detail::cpu {

namespace {

std::atomic<int> g_threads_set{0};  // the count last given to openblas_set_num_threads
std::mutex g_threads_mutex;
std::atomic<std::uint64_t> g_calls{0};
std::atomic<GemmPath> g_path{GemmPath::automatic};

template <class F>
F entry(const DynLib& lib, const char* name) {
  return reinterpret_cast<F>(lib.symbol(name));
}

// Gives OpenBLAS xp's thread count (a pthreads build resizes its pool; a sequential build ignores it).
void sync_threads(const BlasLibrary& b) {
  const int want = num_threads();
  if (g_threads_set.load(std::memory_order_acquire) == want) return;
  std::lock_guard<std::mutex> lock(g_threads_mutex);
  if (g_threads_set.load(std::memory_order_relaxed) == want) return;
  b.set_num_threads(want);
  g_threads_set.store(want, std::memory_order_release);
}

}  // namespace

BlasLibrary open_blas(const std::vector<std::string>& names) {
  BlasLibrary b;
  std::string tried;
  for (const std::string& name : names) {
    DynLib lib = DynLib::open(name);
    if (!lib.ok()) {
      tried += (tried.empty() ? "" : "; ") + lib.error();
      continue;
    }
    b.sgemm = entry<CblasSgemm>(lib, "cblas_sgemm");
    b.dgemm = entry<CblasDgemm>(lib, "cblas_dgemm");
    b.set_num_threads = entry<OpenblasSetNumThreads>(lib, "openblas_set_num_threads");
    b.get_num_threads = entry<OpenblasGetNumThreads>(lib, "openblas_get_num_threads");
    b.get_config = entry<OpenblasGetConfig>(lib, "openblas_get_config");
    b.get_parallel = entry<OpenblasGetParallel>(lib, "openblas_get_parallel");
    std::string missing;
    if (b.sgemm == nullptr) missing += " cblas_sgemm";
    if (b.dgemm == nullptr) missing += " cblas_dgemm";
    if (b.set_num_threads == nullptr) missing += " openblas_set_num_threads";
    if (b.get_num_threads == nullptr) missing += " openblas_get_num_threads";
    if (!missing.empty()) {
      tried += (tried.empty() ? "" : "; ") + lib.path() + " lacks" + missing;
      b = BlasLibrary{};
      continue;
    }
    b.path = lib.path();
    if (b.get_config != nullptr) {
      if (const char* c = b.get_config(); c != nullptr) b.config = c;
    }
    if (b.get_parallel != nullptr) b.parallel = b.get_parallel();
    b.lib = std::move(lib);
    b.loaded = true;
    return b;
  }
  b.error = "OpenBLAS not usable (" + tried + ")";
  return b;
}

const BlasLibrary& blas_library() {
  static BlasLibrary* const lib = [] {
    auto* b = new BlasLibrary(open_blas({"libopenblas.so.0", "libopenblas.so"}));
    if (b->loaded) {
      // Stays loaded for the life of the process: closing a pthreads OpenBLAS at exit, with its
      // pool running, is a known way to hang.
      b->lib.release();
      sync_threads(*b);
      log(LogLevel::info,
          "OpenBLAS: " + b->path + " (" + b->config + "), " + std::to_string(b->get_num_threads()) + " threads");
    } else {
      log_once(LogLevel::info, b->error + "; matmul uses xp's own loop (correct, slower)");
    }
    return b;
  }();
  return *lib;
}

const BlasLibrary* blas_for_call() {
  if (g_path.load(std::memory_order_relaxed) == GemmPath::loop || in_parallel()) return nullptr;
  const BlasLibrary& b = blas_library();
  if (!b.loaded) return nullptr;
  sync_threads(b);
  return &b;
}

void count_blas_call() noexcept {
  g_calls.fetch_add(1, std::memory_order_relaxed);
}
std::uint64_t blas_call_count() noexcept {
  return g_calls.load(std::memory_order_relaxed);
}

void set_gemm_path(GemmPath path) noexcept {
  g_path.store(path, std::memory_order_relaxed);
}
GemmPath gemm_path() noexcept {
  return g_path.load(std::memory_order_relaxed);
}

BlasInfo blas_info() {
  const BlasLibrary& b = blas_library();
  BlasInfo info;
  info.loaded = b.loaded;
  info.path = b.path;
  info.config = b.config;
  info.threads = b.loaded ? b.get_num_threads() : 0;
  info.error = b.error;
  return info;
}

}  // namespace xp::detail::cpu
