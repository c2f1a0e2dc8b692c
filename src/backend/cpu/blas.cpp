#include "backend/cpu/blas.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#include "backend/cpu/linalg.hpp"
#include "runtime/environment.hpp"
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

CoreChoice choose_openblas_core(const std::optional<std::string>& user, bool avx512, bool avx2_fma) {
  if (user) return {"", "OPENBLAS_CORETYPE=" + *user + ", set in the environment"};
  if (avx512) return {"SkylakeX", "chosen by xp from the CPU's features (AVX-512)"};
  if (avx2_fma) return {"Haswell", "chosen by xp from the CPU's features (AVX2, FMA)"};
  return {"", "OpenBLAS's own choice (the CPU has no AVX2)"};
}

namespace {

// Fills `c` (m x n, row-major, leading dimension ldc) with op(A) op(B) by a plain loop; A is m x k
// (or k x m transposed), B k x n (or n x k).
template <class T>
void reference_gemm(bool ta, bool tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      T s = 0;
      for (int p = 0; p < k; ++p) s += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = s;
    }
}

// A test value in [-8, 8] (both parts for a complex T) from the generator x.
template <class T>
T small_value(unsigned& x) {
  const auto draw = [&x] { return static_cast<int>((x = x * 1103515245u + 12345u) >> 16) % 17 - 8; };
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<T>(draw());
  } else {
    const auto re = static_cast<decltype(T{}.re)>(draw());
    return T(re, static_cast<decltype(T{}.re)>(draw()));
  }
}

template <class T>
std::string value_text(T v) {
  if constexpr (std::is_arithmetic_v<T>) {
    return std::to_string(static_cast<double>(v));
  } else {
    // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on "(" + std::string.
    std::string s = std::to_string(static_cast<double>(v.re));
    s.insert(0, 1, '(');
    s += ", ";
    s += std::to_string(static_cast<double>(v.im));
    s += ')';
    return s;
  }
}

// gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc) computes C = op(A) op(B), row-major.
template <class T, class Gemm>
std::string check_gemm(Gemm gemm, const char* name) {
  // Sizes past the kernels' unroll factors and blocking edges, odd on purpose; values in [-8, 8],
  // so every product and sum is an integer far below 2^24: exact in float32 in any order (complex:
  // each part of a product is a difference of two such products, still exact).
  struct Case {
    int m, n, k;
  };
  for (const Case sz : {Case{1, 1, 1}, Case{7, 5, 3}, Case{67, 45, 33}, Case{33, 70, 40}}) {
    for (const bool ta : {false, true})
      for (const bool tb : {false, true}) {
        const int lda = (ta ? sz.m : sz.k) + 3, ldb = (tb ? sz.k : sz.n) + 2, ldc = sz.n + 1;
        std::vector<T> a(static_cast<std::size_t>((ta ? sz.k : sz.m) * lda));
        std::vector<T> b(static_cast<std::size_t>((tb ? sz.n : sz.k) * ldb));
        unsigned x = 12345u + static_cast<unsigned>(sz.m * 31 + sz.k);
        for (auto& v : a) v = small_value<T>(x);
        for (auto& v : b) v = small_value<T>(x);
        std::vector<T> want(static_cast<std::size_t>(sz.m * ldc), T(0)), got(want.size(), T(-99));
        reference_gemm(ta, tb, sz.m, sz.n, sz.k, a.data(), lda, b.data(), ldb, want.data(), ldc);
        gemm(ta ? kCblasTrans : kCblasNoTrans, tb ? kCblasTrans : kCblasNoTrans, sz.m, sz.n, sz.k, a.data(), lda,
             b.data(), ldb, got.data(), ldc);
        for (int i = 0; i < sz.m; ++i)
          for (int j = 0; j < sz.n; ++j)
            if (!(got[static_cast<std::size_t>(i * ldc + j)] == want[static_cast<std::size_t>(i * ldc + j)]))
              return std::string(name) + " " + std::to_string(sz.m) + "x" + std::to_string(sz.n) + "x" +
                     std::to_string(sz.k) + (ta ? " A^T" : "") + (tb ? " B^T" : "") + ": element (" +
                     std::to_string(i) + ", " + std::to_string(j) + ") is " +
                     value_text(got[static_cast<std::size_t>(i * ldc + j)]) + ", not " +
                     value_text(want[static_cast<std::size_t>(i * ldc + j)]);
      }
  }
  return {};
}

template <class R>
std::string check_complex_gemm(CblasComplexGemm gemm, const char* name) {
  return check_gemm<BlasComplex<R>>(
      [gemm](int ta, int tb, int m, int n, int k, const BlasComplex<R>* a, int lda, const BlasComplex<R>* b, int ldb,
             BlasComplex<R>* c, int ldc) {
        const BlasComplex<R> one(1), zero(0);
        gemm(kCblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
      },
      name);
}

}  // namespace

std::string check_blas(const BlasLibrary& b) {
  std::string bad = check_gemm<float>(
      [&b](int ta, int tb, int m, int n, int k, const float* a, int lda, const float* x, int ldb, float* c, int ldc) {
        b.sgemm(kCblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, x, ldb, 0.0f, c, ldc);
      },
      "sgemm");
  if (bad.empty())
    bad = check_gemm<double>(
        [&b](int ta, int tb, int m, int n, int k, const double* a, int lda, const double* x, int ldb, double* c,
             int ldc) { b.dgemm(kCblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, x, ldb, 0.0, c, ldc); },
        "dgemm");
  return bad;
}

std::string check_complex_blas(const BlasLibrary& b) {
  std::string bad = check_complex_gemm<float>(b.cgemm, "cgemm");
  if (bad.empty()) bad = check_complex_gemm<double>(b.zgemm, "zgemm");
  return bad;
}

BlasLibrary open_blas(const std::vector<std::string>& names, const std::string& coretype) {
  BlasLibrary b;
  std::string tried;
  for (const std::string& name : names) {
    // OPENBLAS_CORETYPE is read once, by the library's constructor during dlopen: set for that
    // moment only, so that another OpenBLAS the process loads later (NumPy's) makes its own choice.
    // setenv races with a getenv on another thread; xp reads its environment once, in config.cpp,
    // and the first matmul that gets here is ordinarily long after.
    const bool set_core = !coretype.empty() && !DynLib::loaded(name).ok();
    if (set_core) ::setenv("OPENBLAS_CORETYPE", coretype.c_str(), 1);
    DynLib lib = DynLib::open(name);
    if (set_core) ::unsetenv("OPENBLAS_CORETYPE");
    if (!lib.ok()) {
      tried += (tried.empty() ? "" : "; ") + lib.error();
      continue;
    }
    b.sgemm = entry<CblasSgemm>(lib, "cblas_sgemm");
    b.dgemm = entry<CblasDgemm>(lib, "cblas_dgemm");
    b.cgemm = entry<CblasComplexGemm>(lib, "cblas_cgemm");
    b.zgemm = entry<CblasComplexGemm>(lib, "cblas_zgemm");
    if (b.cgemm == nullptr || b.zgemm == nullptr) {
      b.complex_error = lib.path() + " lacks cblas_cgemm or cblas_zgemm";
      b.cgemm = b.zgemm = nullptr;
    }
    b.set_num_threads = entry<OpenblasSetNumThreads>(lib, "openblas_set_num_threads");
    b.get_num_threads = entry<OpenblasGetNumThreads>(lib, "openblas_get_num_threads");
    b.get_config = entry<OpenblasGetConfig>(lib, "openblas_get_config");
    b.get_parallel = entry<OpenblasGetParallel>(lib, "openblas_get_parallel");
    b.get_corename = entry<OpenblasGetCorename>(lib, "openblas_get_corename");
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
    if (b.get_corename != nullptr) {
      if (const char* c = b.get_corename(); c != nullptr) b.core = c;
    }
    b.lib = std::move(lib);
    b.loaded = true;
    return b;
  }
  b.error = "OpenBLAS not usable (" + tried + ")";
  return b;
}

const BlasLibrary& blas_library() {
  static BlasLibrary* const lib = [] {
#if defined(__x86_64__)
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vl");
    const bool avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    const bool avx512 = false, avx2_fma = false;
#endif
    CoreChoice choice = choose_openblas_core(foreign_environment().openblas_coretype, avx512, avx2_fma);
    const bool was_loaded = DynLib::loaded("libopenblas.so.0").ok() || DynLib::loaded("libopenblas.so").ok();
    if (was_loaded && !choice.coretype.empty())
      choice = {"", "the choice of the OpenBLAS the process had loaded before xp (its kernels are fixed at load)"};
    auto* b = new BlasLibrary(open_blas({"libopenblas.so.0", "libopenblas.so"}, choice.coretype));
    if (b->loaded) {
      // Stays loaded for the life of the process: closing a pthreads OpenBLAS at exit, with its
      // pool running, is a known way to hang.
      b->lib.release();
      b->core_reason = choice.reason;
      if (!choice.coretype.empty() && b->core != choice.coretype)
        b->core_reason += "; asked for " + choice.coretype + ", OpenBLAS kept its own (not a DYNAMIC_ARCH build?)";
      sync_threads(*b);
      if (std::string bad = check_blas(*b); !bad.empty()) {
        b->loaded = false;
        b->error = "OpenBLAS " + b->path + " with the " + (b->core.empty() ? "default" : b->core) +
                   " kernels gave a wrong result in xp's check at load (" + bad +
                   "): not used; set OPENBLAS_CORETYPE to another kernel set to try one";
        log_once(LogLevel::warn, b->error + "; matmul uses xp's own loop (correct, slower)");
        return b;
      }
      if (b->cgemm != nullptr) {
        if (std::string bad = check_complex_blas(*b); !bad.empty()) {
          b->cgemm = b->zgemm = nullptr;
          b->complex_error = "OpenBLAS " + b->path + " with the " + (b->core.empty() ? "default" : b->core) +
                             " kernels gave a wrong complex result in xp's check at load (" + bad + "): not used";
          log_once(LogLevel::warn, b->complex_error + "; complex matmul uses xp's own loop (correct, slower)");
        }
      } else {
        log_once(LogLevel::info, "OpenBLAS: " + b->complex_error + "; complex matmul uses xp's own loop");
      }
      log(LogLevel::info, "OpenBLAS: " + b->path + " (" + b->config + "), kernels " + b->core + " (" + b->core_reason +
                              "), " + std::to_string(b->get_num_threads()) + " threads");
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

void sync_blas_threads(const BlasLibrary& b) {
  sync_threads(b);
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
  info.core = b.core;
  info.core_reason = b.core_reason;
  info.error = b.error;
  info.complex_error = b.loaded ? b.complex_error : b.error;
  return info;
}

}  // namespace xp::detail::cpu
