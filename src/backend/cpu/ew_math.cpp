// The transcendental tile kernels. Vector paths call glibc's libmvec (opened with dlopen at first use,
// so the library builds and runs without it) through the x86-64 vector function ABI; everything else
// calls the C library's scalar function per element. The path is chosen once from the CPU's
// features; a function this libmvec lacks (glibc before 2.35 has only exp, log, sin, cos and pow)
// falls back to libm alone.
//
// Bit-for-bit rule: every element goes through the same vector function whatever n and its position
// in the tile. libmvec computes each lane from that lane's input alone, so a tail is copied into a
// padded vector, computed as a whole, and the valid lanes copied back (never a scalar tail).

#include <dlfcn.h>
#include <math.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "backend/cpu/tile_ops.hpp"
#include "backend/cpu/vmath.hpp"

// libmvec and the vector ABI below are x86-64 Linux facts; elsewhere only the scalar path exists.
#if defined(__x86_64__) && defined(__linux__)
#define XP_MATH_VECTOR 1
#else
#define XP_MATH_VECTOR 0
#endif

namespace xp::detail::cpu {
namespace {

enum Fn : int {
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kLog2,
  kLog10,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kTanh,
  kAcosh,
  kAsinh,
  kAtanh,
  kAtan2,  // binary from here on
  kPow,
  kHypot,
  kFnCount
};
constexpr int kFirstBinary = kAtan2;

[[maybe_unused]] constexpr const char* kFnName[kFnCount] = {
    "exp",  "expm1", "log",  "log1p", "log2",  "log10", "sin",   "cos",   "tan", "asin", "acos",
    "atan", "sinh",  "cosh", "tanh",  "acosh", "asinh", "atanh", "atan2", "pow", "hypot"};

constexpr Op kFnOp[kFnCount] = {Op::exp,  Op::expm1, Op::log,   Op::log1p, Op::log2,  Op::log10, Op::sin,
                                Op::cos,  Op::tan,   Op::asin,  Op::acos,  Op::atan,  Op::sinh,  Op::cosh,
                                Op::tanh, Op::acosh, Op::asinh, Op::atanh, Op::atan2, Op::pow,   Op::hypot};

int fn_index(Op op) noexcept {
  for (int f = 0; f < kFnCount; ++f)
    if (kFnOp[f] == op) return f;
  return -1;
}

// ---- scalar libm ----

using F1 = float (*)(float);
using D1 = double (*)(double);
using F2 = float (*)(float, float);
using D2 = double (*)(double, double);

const F1 kLibmF1[kFirstBinary] = {::expf,  ::expm1f, ::logf,  ::log1pf, ::log2f,  ::log10f,
                                  ::sinf,  ::cosf,   ::tanf,  ::asinf,  ::acosf,  ::atanf,
                                  ::sinhf, ::coshf,  ::tanhf, ::acoshf, ::asinhf, ::atanhf};
const D1 kLibmD1[kFirstBinary] = {::exp,  ::expm1, ::log,  ::log1p, ::log2, ::log10, ::sin,   ::cos,   ::tan,
                                  ::asin, ::acos,  ::atan, ::sinh,  ::cosh, ::tanh,  ::acosh, ::asinh, ::atanh};
const F2 kLibmF2[kFnCount - kFirstBinary] = {::atan2f, ::powf, ::hypotf};
const D2 kLibmD2[kFnCount - kFirstBinary] = {::atan2, ::pow, ::hypot};

template <class T>
auto libm_unary(int f) noexcept {
  if constexpr (std::is_same_v<T, float>)
    return kLibmF1[f];
  else
    return kLibmD1[f];
}
template <class T>
auto libm_binary(int f) noexcept {
  if constexpr (std::is_same_v<T, float>)
    return kLibmF2[f - kFirstBinary];
  else
    return kLibmD2[f - kFirstBinary];
}

template <class T, int F>
void scalar_kernel(const void* const* in, void* out, std::int64_t n) {
  const T* a = static_cast<const T*>(in[0]);
  T* o = static_cast<T*>(out);
  if constexpr (F >= kFirstBinary) {
    const T* b = static_cast<const T*>(in[1]);
    const auto f = libm_binary<T>(F);
    if constexpr (F == kHypot) {
      // C's hypot(+-inf, y) is +inf for every y, a signaling NaN too (libm's gives NaN for one).
      for (std::int64_t i = 0; i < n; ++i)
        o[i] = std::isinf(a[i]) || std::isinf(b[i]) ? std::numeric_limits<T>::infinity() : f(a[i], b[i]);
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  } else {
    const auto f = libm_unary<T>(F);
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
  }
}

// ---- paths and the libmvec table ----

enum Path : int { kScalar, kSse4, kAvx2, kAvx512, kPathCount };
constexpr const char* kPathName[kPathCount] = {"scalar", "sse4", "avx2", "avx512"};
// The vector ABI's ISA letter and lanes (float, double) of each vector path.
[[maybe_unused]] constexpr char kAbiLetter[kPathCount] = {0, 'b', 'd', 'e'};
[[maybe_unused]] constexpr int kLanesF[kPathCount] = {1, 4, 8, 16};
[[maybe_unused]] constexpr int kLanesD[kPathCount] = {1, 2, 4, 8};

struct Table {
  bool usable[kPathCount] = {true, false, false, false};
  void* vec[kPathCount][2][kFnCount] = {};  // [path][0 float, 1 double][fn]; null: use libm
  Path best = kScalar;
};

#if XP_MATH_VECTOR
bool cpu_has(Path p) noexcept {
  __builtin_cpu_init();
  switch (p) {
    case kScalar:
      return true;
    case kSse4:
      return __builtin_cpu_supports("sse4.1");
    case kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    default:
      return false;
  }
}
#endif

Table make_table() noexcept {
  Table t;
#if XP_MATH_VECTOR
  void* lib = ::dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);  // kept open for the process
  if (lib == nullptr) return t;
  for (int p = kSse4; p < kPathCount; ++p) {
    if (!cpu_has(static_cast<Path>(p))) continue;
    bool any = false;
    for (int d = 0; d < 2; ++d) {
      for (int f = 0; f < kFnCount; ++f) {
        // _ZGV <isa> N <lanes> v|vv _ <name>[f], e.g. _ZGVdN8v_expf, _ZGVeN8vv_pow.
        char sym[32];
        std::snprintf(sym, sizeof sym, "_ZGV%cN%d%s_%s%s", kAbiLetter[p], d == 0 ? kLanesF[p] : kLanesD[p],
                      f >= kFirstBinary ? "vv" : "v", kFnName[f], d == 0 ? "f" : "");
        t.vec[p][d][f] = ::dlsym(lib, sym);
        any = any || t.vec[p][d][f] != nullptr;
      }
    }
    t.usable[p] = any;
    if (any) t.best = static_cast<Path>(p);
  }
#endif
  return t;
}

const Table& table() noexcept {
  static const Table t = make_table();
  return t;
}

std::atomic<int> g_forced_path{-1};

Path current_path() noexcept {
  const int forced = g_forced_path.load(std::memory_order_relaxed);
  return forced >= 0 ? static_cast<Path>(forced) : table().best;
}

#if XP_MATH_VECTOR
// ---- vector kernels ----
//
// The vector ABI passes vectors in xmm/ymm/zmm registers. C++ cannot be trusted to make such a call
// from a binary built for baseline x86-64: clang 14 classifies a 32- or 64-byte vector argument by
// the whole file's features, ignoring __attribute__((target)), and passes it in memory. So the calls
// are made by the small assembly loops below, which take pointers under the ordinary C ABI: loop<w>
// (a, [b,] out, count, fn) computes `count` whole vectors of w bytes, out[k] = fn(a[k] [, b[k]]),
// loading each vector before its result is stored (in place works). Unaligned loads and stores;
// vzeroupper before returning from AVX code.

// clang-format off
#define XP_VLOOP_PUSH(R) " push %" R "\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %" R ", 0\n"
#define XP_VLOOP_POP(R) " pop %" R "\n .cfi_adjust_cfa_offset -8\n .cfi_restore %" R "\n"
#define XP_VLOOP_HEAD(NAME)                                                                        \
  " .globl " NAME "\n .hidden " NAME "\n .type " NAME ", @function\n .p2align 4\n" NAME ":\n"        \
  " .cfi_startproc\n endbr64\n"
#define XP_VLOOP_TAIL(NAME) " ret\n .cfi_endproc\n .size " NAME ", .-" NAME "\n"
// Unary: rdi = a, rsi = out, rdx = count, rcx = fn. Four saved registers and 8 bytes keep the
// stack 16-byte aligned at the call.
#define XP_VLOOP1(NAME, MOV, REG, BYTES, ZU)                                                       \
  XP_VLOOP_HEAD(NAME) XP_VLOOP_PUSH("rbx") XP_VLOOP_PUSH("r12") XP_VLOOP_PUSH("r13")               \
  XP_VLOOP_PUSH("r14") " sub $8, %rsp\n .cfi_adjust_cfa_offset 8\n"                               \
  " mov %rdi, %rbx\n mov %rsi, %r12\n mov %rdx, %r13\n mov %rcx, %r14\n"                          \
  " test %r13, %r13\n jle 2f\n"                                                                   \
  "1:\n " MOV " (%rbx), %" REG "0\n call *%r14\n " MOV " %" REG "0, (%r12)\n"                     \
  " add $" BYTES ", %rbx\n add $" BYTES ", %r12\n dec %r13\n jnz 1b\n"                            \
  "2:\n" ZU " add $8, %rsp\n .cfi_adjust_cfa_offset -8\n"                                         \
  XP_VLOOP_POP("r14") XP_VLOOP_POP("r13") XP_VLOOP_POP("r12") XP_VLOOP_POP("rbx") XP_VLOOP_TAIL(NAME)
// Binary: rdi = a, rsi = b, rdx = out, rcx = count, r8 = fn. Five saved registers.
#define XP_VLOOP2(NAME, MOV, REG, BYTES, ZU)                                                       \
  XP_VLOOP_HEAD(NAME) XP_VLOOP_PUSH("rbx") XP_VLOOP_PUSH("r12") XP_VLOOP_PUSH("r13")               \
  XP_VLOOP_PUSH("r14") XP_VLOOP_PUSH("r15")                                                       \
  " mov %rdi, %rbx\n mov %rsi, %r12\n mov %rdx, %r13\n mov %rcx, %r14\n mov %r8, %r15\n"          \
  " test %r14, %r14\n jle 2f\n"                                                                   \
  "1:\n " MOV " (%rbx), %" REG "0\n " MOV " (%r12), %" REG "1\n call *%r15\n "                    \
  MOV " %" REG "0, (%r13)\n"                                                                      \
  " add $" BYTES ", %rbx\n add $" BYTES ", %r12\n add $" BYTES ", %r13\n dec %r14\n jnz 1b\n"     \
  "2:\n" ZU XP_VLOOP_POP("r15") XP_VLOOP_POP("r14") XP_VLOOP_POP("r13") XP_VLOOP_POP("r12")       \
  XP_VLOOP_POP("rbx") XP_VLOOP_TAIL(NAME)

asm(".pushsection .text\n"
    XP_VLOOP1("xp_math_vloop1_16", "movups", "xmm", "16", "")
    XP_VLOOP2("xp_math_vloop2_16", "movups", "xmm", "16", "")
    XP_VLOOP1("xp_math_vloop1_32", "vmovups", "ymm", "32", " vzeroupper\n")
    XP_VLOOP2("xp_math_vloop2_32", "vmovups", "ymm", "32", " vzeroupper\n")
    XP_VLOOP1("xp_math_vloop1_64", "vmovups", "zmm", "64", " vzeroupper\n")
    XP_VLOOP2("xp_math_vloop2_64", "vmovups", "zmm", "64", " vzeroupper\n")
    ".popsection\n");
#undef XP_VLOOP_PUSH
#undef XP_VLOOP_POP
#undef XP_VLOOP_HEAD
#undef XP_VLOOP_TAIL
#undef XP_VLOOP1
#undef XP_VLOOP2
// clang-format on

}  // namespace
}  // namespace xp::detail::cpu

extern "C" {
void xp_math_vloop1_16(const void* a, void* out, std::int64_t count, void* fn);
void xp_math_vloop2_16(const void* a, const void* b, void* out, std::int64_t count, void* fn);
void xp_math_vloop1_32(const void* a, void* out, std::int64_t count, void* fn);
void xp_math_vloop2_32(const void* a, const void* b, void* out, std::int64_t count, void* fn);
void xp_math_vloop1_64(const void* a, void* out, std::int64_t count, void* fn);
void xp_math_vloop2_64(const void* a, const void* b, void* out, std::int64_t count, void* fn);
}

namespace xp::detail::cpu {
namespace {

template <class T>
constexpr int dtype_slot = std::is_same_v<T, float> ? 0 : 1;

template <int Bytes>
void vloop(const void* a, const void* b, void* out, std::int64_t count, void* fn, bool binary) noexcept {
  if constexpr (Bytes == 16) {
    binary ? xp_math_vloop2_16(a, b, out, count, fn) : xp_math_vloop1_16(a, out, count, fn);
  } else if constexpr (Bytes == 32) {
    binary ? xp_math_vloop2_32(a, b, out, count, fn) : xp_math_vloop1_32(a, out, count, fn);
  } else {
    binary ? xp_math_vloop2_64(a, b, out, count, fn) : xp_math_vloop1_64(a, out, count, fn);
  }
}

// The whole vectors in place, then the tail padded with 0.5 (harmless to every function) and
// computed as one more whole vector.
template <class T, int F, Path P>
void vector_kernel(const void* const* in, void* out, std::int64_t n) {
  constexpr int kBytes = P == kSse4 ? 16 : P == kAvx2 ? 32 : 64;
  constexpr int W = kBytes / static_cast<int>(sizeof(T));
  constexpr bool kBinary = F >= kFirstBinary;
  void* const fn = table().vec[P][dtype_slot<T>][F];
  const T* a = static_cast<const T*>(in[0]);
  const T* b = kBinary ? static_cast<const T*>(in[1]) : nullptr;
  T* o = static_cast<T*>(out);
  // C's hypot(+-inf, y) is +inf for every y (a NaN too); the vector library's is NaN beside a NaN.
  // The infinities' positions are noted before the vector pass (out may be an input) and set after
  // it, so that no other element's bits depend on what shares its tile.
  std::vector<std::int64_t> infinite;
  if constexpr (F == kHypot) {
    for (std::int64_t i = 0; i < n; ++i)
      if (std::isinf(a[i]) || std::isinf(b[i])) infinite.push_back(i);
  }
  const std::int64_t whole = n / W;
  vloop<kBytes>(a, b, o, whole, fn, kBinary);
  const std::int64_t done = whole * W;
  if (done < n) {
    const std::size_t bytes = static_cast<std::size_t>(n - done) * sizeof(T);
    T ta[W], tb[W];
    for (int k = 0; k < W; ++k) ta[k] = tb[k] = T(0.5);
    std::memcpy(ta, a + done, bytes);
    if (kBinary) std::memcpy(tb, b + done, bytes);
    vloop<kBytes>(ta, tb, ta, 1, fn, kBinary);
    std::memcpy(o + done, ta, bytes);
  }
  for (const std::int64_t i : infinite) o[i] = std::numeric_limits<T>::infinity();
}

#endif  // XP_MATH_VECTOR

template <class T, int F>
TileFn kernel_for(Path p) noexcept {
#if XP_MATH_VECTOR
  switch (p) {
    case kSse4:
      return vector_kernel<T, F, kSse4>;
    case kAvx2:
      return vector_kernel<T, F, kAvx2>;
    case kAvx512:
      return vector_kernel<T, F, kAvx512>;
    default:
      break;
  }
#else
  (void)p;
#endif
  return scalar_kernel<T, F>;
}

template <class T, int... F>
TileFn pick(int f, Path p, std::integer_sequence<int, F...>) noexcept {
  TileFn r = nullptr;
  ((f == F ? (r = kernel_for<T, F>(p), 0) : 0), ...);
  return r;
}

// Which path actually computes function f of dtype slot d when `p` is selected.
Path effective_path(Path p, int d, int f) noexcept {
  if (p == kScalar || !table().usable[p] || table().vec[p][d][f] == nullptr) return kScalar;
  return p;
}

// ---- error bounds ----
// In ulp against the correctly rounded result: [float, double]. glibc documents its measured maxima
// (sysdeps/x86_64/fpu/libm-test-ulps: the _vlenN entries for libmvec, the plain ones for libm), but
// from a small set of inputs: tests/test_cpu_math.cpp found larger errors (libmvec's double exp is
// 3 ulp off at -487.33696160146661). So each figure is the larger of glibc's figure and the largest
// error measured here over 400,000 random inputs per range (on glibc 2.36, every vector width), plus
// one ulp of margin for other glibc versions and inputs not tried.
struct Bound {
  double f, d;
};
// clang-format off
//                                         exp     expm1   log     log1p   log2    log10   sin     cos     tan
constexpr Bound kVectorBound[kFnCount] = {{4, 4}, {3, 4}, {5, 3}, {3, 3}, {3, 3}, {3, 3}, {3, 4}, {3, 4}, {5, 4},
//                                         asin    acos    atan    sinh    cosh    tanh    acosh   asinh   atanh
                                          {4, 4}, {4, 3}, {3, 3}, {3, 3}, {3, 3}, {2, 3}, {4, 4}, {3, 3}, {3, 3},
//                                         atan2   pow     hypot
                                          {4, 4}, {3, 2}, {2, 3}};
constexpr Bound kScalarBound[kFnCount] = {{2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {3, 3}, {2, 2}, {2, 2}, {2, 2},
                                          {2, 2}, {2, 2}, {2, 2}, {3, 3}, {3, 3}, {3, 3}, {3, 3}, {3, 3}, {3, 3},
                                          {2, 2}, {2, 2}, {2, 2}};
// clang-format on

}  // namespace

TileFn math_tile_fn(Op op, DType operand, DType result) noexcept {
  const int f = fn_index(op);
  if (f < 0 || operand != result) return nullptr;
  if (result != DType::float32 && result != DType::float64) return nullptr;
  const int d = result == DType::float32 ? 0 : 1;
  const Path p = effective_path(current_path(), d, f);
  const auto all = std::make_integer_sequence<int, kFnCount>{};
  return d == 0 ? pick<float>(f, p, all) : pick<double>(f, p, all);
}

double math_ulp_bound(Op op, DType dtype) noexcept {
  const int f = fn_index(op);
  if (f < 0 || (dtype != DType::float32 && dtype != DType::float64)) return 0;
  const int d = dtype == DType::float32 ? 0 : 1;
  const Bound& b = effective_path(current_path(), d, f) == kScalar ? kScalarBound[f] : kVectorBound[f];
  return d == 0 ? b.f : b.d;
}

const char* math_isa() noexcept {
  return kPathName[current_path()];
}

std::vector<std::string> math_isas_available() {
  std::vector<std::string> r;
  for (int p = kPathCount - 1; p >= 0; --p)
    if (table().usable[p]) r.emplace_back(kPathName[p]);
  return r;
}

bool set_math_isa_for_testing(const char* isa) noexcept {
  if (isa == nullptr) {
    g_forced_path.store(-1);
    return true;
  }
  for (int p = 0; p < kPathCount; ++p) {
    if (std::string_view(isa) == kPathName[p] && table().usable[p]) {
      g_forced_path.store(p);
      return true;
    }
  }
  return false;
}

const char* math_impl(Op op, DType dtype) noexcept {
  const int f = fn_index(op);
  if (f < 0 || (dtype != DType::float32 && dtype != DType::float64)) return nullptr;
  return effective_path(current_path(), dtype == DType::float32 ? 0 : 1, f) == kScalar ? "libm" : "libmvec";
}

}  // namespace xp::detail::cpu
