// The CPU backend's FFT (fft.hpp): the plans, their cache, the choice of instruction set, and
// Backend::fft's entry. The kernels and drivers are in fft_kernels.hpp, compiled once per
// instruction set below.
#include "backend/cpu/fft.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "runtime/parallel.hpp"
#include "xp/error.hpp"

namespace xp::detail::cpu {

namespace {

// The largest prime handled by the O(p^2) butterfly; a length with a larger prime factor always goes
// through Bluestein's algorithm.
constexpr int kMaxGeneric = 199;
// The longest length whose L columns are transformed in one block (two blocks of 2 * L * n reals
// each, 1 MiB in all): longer rows go through the four-step algorithm.
constexpr std::int64_t kLanesMax = 4096;
// The least work (complex numbers) a thread of parallel_for is given: each parallel region costs
// the wake-up of the other threads, which on a busy machine can take milliseconds.
constexpr std::int64_t kParallelMin = std::int64_t{1} << 18;
template <class T>
constexpr int kLanes = static_cast<int>(64 / sizeof(T));

// exp(-2 pi i k / n), in double, from an angle reduced to the first octant (so that its rounding
// error stays below a few units in the last place whatever k).
void unit_root(std::int64_t k, std::int64_t n, double& re, double& im) {
  k %= n;
  if (k < 0) k += n;
  // e^{-i theta}, theta = 2 pi k / n: reflect theta into [0, pi/4] keeping track of the signs.
  bool neg_sin = false;
  if (2 * static_cast<unsigned __int128>(k) > static_cast<unsigned __int128>(n)) {  // theta > pi
    k = n - k;
    neg_sin = true;  // sin(2 pi - phi) = -sin(phi), cos unchanged
  }
  // theta = 2 pi k / n in [0, pi]
  const unsigned __int128 k4 = 4 * static_cast<unsigned __int128>(k), k8 = 2 * k4;
  const auto un = static_cast<unsigned __int128>(n);
  double c, s;
  if (k8 <= un) {  // theta <= pi/4
    const double a = 2.0 * M_PI * static_cast<double>(k) / static_cast<double>(n);
    c = std::cos(a), s = std::sin(a);
  } else if (k4 <= un) {  // pi/4 < theta <= pi/2: theta = pi/2 - psi, psi = pi (n - 4k) / (2n)
    const double a = M_PI * static_cast<double>(static_cast<__int128>(un) - static_cast<__int128>(k4)) /
                     (2.0 * static_cast<double>(n));
    c = std::sin(a), s = std::cos(a);
  } else if (3 * k8 <= 3 * un && k8 <= 3 * un) {  // pi/2 < theta <= 3pi/4: theta = pi/2 + psi
    const double a = M_PI * static_cast<double>(static_cast<__int128>(k4) - static_cast<__int128>(un)) /
                     (2.0 * static_cast<double>(n));
    c = -std::sin(a), s = std::cos(a);
  } else {  // 3pi/4 < theta <= pi: theta = pi - phi, phi = pi (n - 2k) / n
    const double a = M_PI * static_cast<double>(n - 2 * k) / static_cast<double>(n);
    c = -std::cos(a), s = std::sin(a);
  }
  re = c;
  im = neg_sin ? s : -s;
}

// The factors of m in the order the passes take them: 8s, a 4, a 2, 3s, 5s, then larger primes.
std::vector<std::int64_t> factorize(std::int64_t m) {
  std::vector<std::int64_t> f;
  while (m % 8 == 0) f.push_back(8), m /= 8;
  if (m % 4 == 0) f.push_back(4), m /= 4;
  if (m % 2 == 0) f.push_back(2), m /= 2;
  for (std::int64_t p = 3; p * p <= m; p += 2)
    while (m % p == 0) f.push_back(p), m /= p;
  if (m > 1) f.push_back(m);
  std::sort(
      f.begin() + static_cast<std::ptrdiff_t>(std::count(f.begin(), f.end(), 4) + std::count(f.begin(), f.end(), 2)),
      f.end());
  return f;
}

std::int64_t largest_factor(std::int64_t m) {
  const auto f = factorize(m);
  std::int64_t p = 1;
  for (auto x : f) p = std::max(p, x == 4 || x == 8 ? 2 : x);
  return p;
}

// A rough count of the work per element of a column transform of length m (the passes' butterflies).
double cost_per_element(std::int64_t m) {
  double c = 0;
  for (auto p : factorize(m))
    c += p == 2 ? 3.0 : p == 3 ? 4.5 : p == 4 ? 5.0 : p == 8 ? 7.0 : p == 5 ? 7.0 : 1.2 * double(p);
  return c;
}

// The smallest 2^a 3^b 5^c >= m.
std::int64_t smooth_at_least(std::int64_t m) {
  std::int64_t best = std::int64_t{1} << 62;
  for (std::int64_t p5 = 1; p5 < best; p5 *= 5)
    for (std::int64_t p35 = p5; p35 < best; p35 *= 3) {
      std::int64_t v = p35;
      while (v < m) v *= 2;
      best = std::min(best, v);
    }
  return best;
}

struct Pass {
  int p = 2;
  std::int64_t ns = 1;    // the length of the transforms already done (the Stockham stride)
  std::size_t tw = 0;     // its twiddles: exp(-2 pi i q k / (ns p)), k < ns, 1 <= q < p, interleaved
  std::size_t roots = 0;  // a generic radix's exp(-2 pi i u / p), u < p
};

template <class T>
struct ColPlan {
  std::int64_t m = 1;
  std::vector<Pass> passes;
  std::vector<T> tw;
};

enum class Method : std::uint8_t { lanes, four_step, bluestein };

template <class T>
struct Plan {
  std::int64_t n = 0;
  bool bluestein = false;
  bool has_lanes = false, has_four = false;
  ColPlan<T> col;  // the whole length, when has_lanes
  // four-step: n = n1 * n2; tw_lane[k1]: w^(k1 l) for the lanes l < L (L reals, then L imaginary
  // parts); tw_block[cb][k1]: w^(k1 cb L), interleaved; w = exp(-2 pi i / n).
  std::int64_t n1 = 0, n2 = 0;
  ColPlan<T> c1, c2;
  std::vector<T> tw_lane, tw_block;
  // Bluestein
  std::int64_t M = 0;
  std::shared_ptr<const Plan<T>> inner;
  std::vector<T> chirp, bhat;
};

template <class T>
struct RealPlan {
  std::int64_t n = 0;
  std::shared_ptr<const Plan<T>> c;  // length n / 2 (n even) or n
  std::vector<T> w;                  // n even: exp(-2 pi i k / n), k <= n / 4, interleaved
};

template <class T>
Method choose_method(const Plan<T>& plan, std::int64_t batch) {
  if (plan.bluestein) return Method::bluestein;
  if (plan.has_lanes && (batch >= kLanes<T> || !plan.has_four)) return Method::lanes;
  return plan.has_four ? Method::four_step : Method::lanes;
}

template <class T>
ColPlan<T> make_col_plan(std::int64_t m) {
  ColPlan<T> plan;
  plan.m = m;
  std::int64_t ns = 1;
  for (auto p : factorize(m)) {
    Pass ps;
    ps.p = static_cast<int>(p);
    ps.ns = ns;
    ps.tw = plan.tw.size();
    for (std::int64_t k = 0; k < ns; ++k)
      for (std::int64_t q = 1; q < p; ++q) {
        double re, im;
        unit_root(q * k, ns * p, re, im);
        plan.tw.push_back(static_cast<T>(re));
        plan.tw.push_back(static_cast<T>(im));
      }
    if (p > 5 && p != 8) {
      ps.roots = plan.tw.size();
      for (std::int64_t u = 0; u < p; ++u) {
        double re, im;
        unit_root(u, p, re, im);
        plan.tw.push_back(static_cast<T>(re));
        plan.tw.push_back(static_cast<T>(im));
      }
    }
    plan.passes.push_back(ps);
    ns *= p;
  }
  return plan;
}

// ---- the plan cache ----

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
// (length, bytes of the real type, real transform) -> the plan.
std::map<std::tuple<std::int64_t, int, bool>, std::shared_ptr<const void>>& cache() {
  static auto* c = new std::map<std::tuple<std::int64_t, int, bool>, std::shared_ptr<const void>>();
  return *c;
}
constexpr std::size_t kCacheEntries = 64;

template <class P>
std::shared_ptr<const P> cached(std::tuple<std::int64_t, int, bool> key, P (*make)(std::int64_t)) {
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    auto it = cache().find(key);
    if (it != cache().end()) return std::static_pointer_cast<const P>(it->second);
  }
  // Built outside the lock: a plan may ask for others (Bluestein's inner length, a real plan's
  // complex one). Two threads may build the same plan; the first stored is kept.
  auto plan = std::make_shared<const P>(make(std::get<0>(key)));
  std::lock_guard<std::mutex> lock(cache_mutex());
  if (cache().size() >= kCacheEntries) cache().clear();  // the plans in use are held by their callers
  auto [it, inserted] = cache().emplace(key, plan);
  return std::static_pointer_cast<const P>(it->second);
}

template <class T>
Plan<T> make_plan(std::int64_t n);
template <class T>
std::shared_ptr<const Plan<T>> plan_for(std::int64_t n) {
  return cached<Plan<T>>({n, static_cast<int>(sizeof(T)), false}, &make_plan<T>);
}
template <class T>
RealPlan<T> make_real_plan(std::int64_t n);
template <class T>
std::shared_ptr<const RealPlan<T>> real_plan_for(std::int64_t n) {
  return cached<RealPlan<T>>({n, static_cast<int>(sizeof(T)), true}, &make_real_plan<T>);
}

// ---- buffers of each thread ----

// Slots 0 to 3: column blocks (the four-step moves 4 at once), 4: their Stockham partner; 5: the
// four-step's intermediate row; 6: Bluestein's rows; 7: the real transforms' complex rows. Kept for the next transform
// (up to 256 MiB a slot).
struct ThreadBuffer {
  void* data = nullptr;
  std::size_t bytes = 0;
  ~ThreadBuffer() { std::free(data); }
};
constexpr std::size_t kKeptBytes = std::size_t{256} << 20;

template <class U>
U* thread_buffer(int slot, std::size_t count) {
  thread_local ThreadBuffer buffers[8];
  ThreadBuffer& b = buffers[slot];
  const std::size_t bytes = std::max<std::size_t>(64, (count * sizeof(U) + 63) / 64 * 64);
  if (b.bytes < bytes || (b.bytes > kKeptBytes && b.bytes > 2 * bytes)) {
    std::free(b.data);
    b.data = std::aligned_alloc(64, bytes);
    b.bytes = b.data != nullptr ? bytes : 0;
    if (b.data == nullptr) throw OutOfMemory("cpu", bytes);
  }
  return static_cast<U*>(b.data);
}

}  // namespace

// ---- the kernels, once per instruction set ----

namespace isa_baseline {
namespace {
#include "backend/cpu/fft_kernels.hpp"
}  // namespace
}  // namespace isa_baseline

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define XP_FFT_X86 1
#pragma GCC push_options
#pragma GCC target("avx2")
namespace isa_avx2 {
namespace {
#include "backend/cpu/fft_kernels.hpp"
}  // namespace
}  // namespace isa_avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f")
namespace isa_avx512 {
namespace {
#include "backend/cpu/fft_kernels.hpp"
}  // namespace
}  // namespace isa_avx512
#pragma GCC pop_options
#endif

namespace {

enum class Isa : std::uint8_t { baseline, avx2, avx512 };

Isa best_isa() noexcept {
#ifdef XP_FFT_X86
  if (__builtin_cpu_supports("avx512f")) return Isa::avx512;
  if (__builtin_cpu_supports("avx2")) return Isa::avx2;
#endif
  return Isa::baseline;
}

std::atomic<int> g_isa{-1};

Isa current_isa() noexcept {
  int v = g_isa.load(std::memory_order_relaxed);
  if (v < 0) {
    v = static_cast<int>(best_isa());
    g_isa.store(v, std::memory_order_relaxed);
  }
  return static_cast<Isa>(v);
}

template <class T>
void dispatch_execute(const Plan<T>& plan, std::int64_t batch, const T* in, std::int64_t is, T* out, std::int64_t os,
                      bool inverse, T scale) {
  switch (current_isa()) {
#ifdef XP_FFT_X86
    case Isa::avx512:
      return isa_avx512::execute<T>(plan, batch, in, is, out, os, inverse, scale);
    case Isa::avx2:
      return isa_avx2::execute<T>(plan, batch, in, is, out, os, inverse, scale);
#endif
    default:
      return isa_baseline::execute<T>(plan, batch, in, is, out, os, inverse, scale);
  }
}

template <class T>
void dispatch_real_forward(const RealPlan<T>& plan, std::int64_t batch, const T* in, T* out, T scale) {
  switch (current_isa()) {
#ifdef XP_FFT_X86
    case Isa::avx512:
      return isa_avx512::real_forward<T>(plan, batch, in, out, scale);
    case Isa::avx2:
      return isa_avx2::real_forward<T>(plan, batch, in, out, scale);
#endif
    default:
      return isa_baseline::real_forward<T>(plan, batch, in, out, scale);
  }
}

template <class T>
void dispatch_real_inverse(const RealPlan<T>& plan, std::int64_t batch, const T* in, T* out, T scale) {
  switch (current_isa()) {
#ifdef XP_FFT_X86
    case Isa::avx512:
      return isa_avx512::real_inverse<T>(plan, batch, in, out, scale);
    case Isa::avx2:
      return isa_avx2::real_inverse<T>(plan, batch, in, out, scale);
#endif
    default:
      return isa_baseline::real_inverse<T>(plan, batch, in, out, scale);
  }
}

// The split n = n1 * n2 of the four-step algorithm: both factors multiples of the lanes where the
// length allows, then as close to sqrt(n) as possible; false when n has no split with n1, n2 >= 2.
bool four_step_split(std::int64_t n, int lanes, std::int64_t& n1, std::int64_t& n2) {
  std::vector<std::int64_t> divisors = {1};
  std::int64_t m = n;
  for (std::int64_t p = 2; p * p <= m; ++p) {
    int e = 0;
    while (m % p == 0) m /= p, ++e;
    const std::size_t size = divisors.size();
    std::int64_t pk = 1;
    for (int i = 0; i < e; ++i) {
      pk *= p;
      for (std::size_t j = 0; j < size; ++j) divisors.push_back(divisors[j] * pk);
    }
  }
  if (m > 1) {
    const std::size_t size = divisors.size();
    for (std::size_t j = 0; j < size; ++j) divisors.push_back(divisors[j] * m);
  }
  bool found = false;
  double best = 0;
  for (auto d : divisors) {
    const std::int64_t e = n / d;
    if (d < 2 || e < 2) continue;
    const double score = (d % lanes ? 4.0 : 0.0) + (e % lanes ? 4.0 : 0.0) +
                         std::abs(std::log2(static_cast<double>(d)) - std::log2(static_cast<double>(e)));
    if (!found || score < best) found = true, best = score, n1 = d, n2 = e;
  }
  return found;
}

template <class T>
Plan<T> make_plan(std::int64_t n) {
  constexpr int L = kLanes<T>;
  Plan<T> plan;
  plan.n = n;
  const std::int64_t p = largest_factor(n);
  if (p > 5) {
    const std::int64_t M = smooth_at_least(2 * n - 1);
    const double direct = static_cast<double>(n) * cost_per_element(n);
    const double blue = static_cast<double>(M) * (2 * cost_per_element(M) + 6.0);
    plan.bluestein = p > kMaxGeneric || blue < direct;
  }
  if (plan.bluestein) {
    const std::int64_t M = smooth_at_least(2 * n - 1);
    plan.M = M;
    plan.inner = plan_for<T>(M);
    plan.chirp.resize(static_cast<std::size_t>(2 * n));
    std::vector<double> b(static_cast<std::size_t>(2 * M), 0.0), chirp(static_cast<std::size_t>(2 * n));
    const auto two_n = static_cast<unsigned __int128>(2 * n);
    for (std::int64_t j = 0; j < n; ++j) {
      const auto j2 = static_cast<std::int64_t>(static_cast<unsigned __int128>(j) * j % two_n);
      double re, im;
      unit_root(j2, 2 * n, re, im);  // exp(-pi i j^2 / n)
      chirp[2 * j] = re, chirp[2 * j + 1] = im;
      plan.chirp[2 * j] = static_cast<T>(re), plan.chirp[2 * j + 1] = static_cast<T>(im);
      // b = conj(chirp) / M at j and M - j
      b[2 * j] = re / static_cast<double>(M), b[2 * j + 1] = -im / static_cast<double>(M);
      if (j > 0) b[2 * (M - j)] = b[2 * j], b[2 * (M - j) + 1] = b[2 * j + 1];
    }
    // Its transform computed in double whatever T (one length-M plan of double more).
    const auto dplan = plan_for<double>(M);
    dispatch_execute<double>(*dplan, 1, b.data(), M, b.data(), M, false, 1.0);
    plan.bhat.assign(b.begin(), b.end());
    return plan;
  }
  plan.has_lanes = n <= kLanesMax;
  if (plan.has_lanes) plan.col = make_col_plan<T>(n);
  if (n >= 64 && four_step_split(n, L, plan.n1, plan.n2)) {
    plan.has_four = true;
    plan.c1 = make_col_plan<T>(plan.n1);
    plan.c2 = make_col_plan<T>(plan.n2);
    const std::int64_t n1 = plan.n1, n2 = plan.n2, blocks = (n2 + L - 1) / L;
    plan.tw_lane.resize(static_cast<std::size_t>(2 * L * n1));
    plan.tw_block.resize(static_cast<std::size_t>(2 * blocks * n1));
    for (std::int64_t k1 = 0; k1 < n1; ++k1) {
      for (int l = 0; l < L; ++l) {
        double re, im;
        unit_root(static_cast<std::int64_t>(static_cast<unsigned __int128>(k1) * l % n), n, re, im);
        plan.tw_lane[2 * L * k1 + l] = static_cast<T>(re);
        plan.tw_lane[2 * L * k1 + L + l] = static_cast<T>(im);
      }
      for (std::int64_t cb = 0; cb < blocks; ++cb) {
        double re, im;
        unit_root(static_cast<std::int64_t>(static_cast<unsigned __int128>(k1) * (cb * L) % n), n, re, im);
        plan.tw_block[2 * (cb * n1 + k1)] = static_cast<T>(re);
        plan.tw_block[2 * (cb * n1 + k1) + 1] = static_cast<T>(im);
      }
    }
  }
  if (!plan.has_lanes && !plan.has_four) {  // long, and no split: cannot happen (a prime goes to Bluestein)
    plan.has_lanes = true;
    plan.col = make_col_plan<T>(n);
  }
  return plan;
}

template <class T>
RealPlan<T> make_real_plan(std::int64_t n) {
  RealPlan<T> plan;
  plan.n = n;
  if (n % 2 == 1) {
    plan.c = plan_for<T>(n);
    return plan;
  }
  const std::int64_t h = n / 2;
  plan.c = plan_for<T>(h);
  plan.w.resize(static_cast<std::size_t>(2 * (h / 2 + 1)));
  for (std::int64_t k = 0; k <= h / 2; ++k) {
    double re, im;
    unit_root(k, n, re, im);
    plan.w[2 * k] = static_cast<T>(re);
    plan.w[2 * k + 1] = static_cast<T>(im);
  }
  return plan;
}

template <class T>
void run(const FftCall& call, const View& in, const View& out) {
  const std::int64_t n = call.n;
  const View& real_side = call.kind == FftKind::c2r ? out : in;
  const View& rows_view = call.kind == FftKind::c2c ? in : real_side;
  std::int64_t batch = 1;
  for (int d = 0; d + 1 < rows_view.ndim; ++d) batch *= rows_view.shape[d];
  if (batch == 0 || n == 0) return;
  const T scale = static_cast<T>(call.scale);
  const T* src = reinterpret_cast<const T*>(in.data);
  T* dst = reinterpret_cast<T*>(out.data);
  switch (call.kind) {
    case FftKind::c2c:
      dispatch_execute<T>(*plan_for<T>(n), batch, src, n, dst, n, call.inverse, scale);
      break;
    case FftKind::r2c:
      dispatch_real_forward<T>(*real_plan_for<T>(n), batch, src, dst, scale);
      break;
    case FftKind::c2r:
      dispatch_real_inverse<T>(*real_plan_for<T>(n), batch, src, dst, scale);
      break;
  }
}

}  // namespace

void fft(const FftCall& call, const View& in, const View& out) {
  if (!in.is_c_contiguous() || !out.is_c_contiguous())
    throw Error("fft: the CPU backend takes C-contiguous views (the array layer copies first)");
  if (call.n < 1) throw ValueError("fft: the transform's length must be at least 1, not " + std::to_string(call.n));
  const DType real = call.kind == FftKind::r2c ? in.dtype : call.kind == FftKind::c2r ? out.dtype : in.dtype;
  switch (real) {
    case DType::float32:
    case DType::complex64:
      return run<float>(call, in, out);
    case DType::float64:
    case DType::complex128:
      return run<double>(call, in, out);
    default:
      throw TypeError("fft: the CPU backend transforms float32, float64, complex64 and complex128, not " +
                      std::string(name(real)));
  }
}

std::string fft_method(std::int64_t n, std::int64_t batch) {
  switch (choose_method(*plan_for<double>(n), batch)) {
    case Method::bluestein:
      return "bluestein";
    case Method::four_step:
      return "four-step";
    case Method::lanes:
      break;
  }
  return "stockham";
}

std::vector<std::string> fft_isas_available() {
  std::vector<std::string> v;
#ifdef XP_FFT_X86
  if (__builtin_cpu_supports("avx512f")) v.push_back("avx512");
  if (__builtin_cpu_supports("avx2")) v.push_back("avx2");
#endif
  v.push_back("baseline");
  return v;
}

bool set_fft_isa_for_testing(const char* isa) noexcept {
  if (isa == nullptr) {
    g_isa.store(static_cast<int>(best_isa()));
    return true;
  }
  const std::string s = isa;
  for (const auto& a : fft_isas_available())
    if (a == s) {
      g_isa.store(static_cast<int>(s == "avx512" ? Isa::avx512 : s == "avx2" ? Isa::avx2 : Isa::baseline));
      return true;
    }
  return false;
}

const char* fft_isa() noexcept {
  switch (current_isa()) {
    case Isa::avx512:
      return "avx512";
    case Isa::avx2:
      return "avx2";
    default:
      return "baseline";
  }
}

}  // namespace xp::detail::cpu
