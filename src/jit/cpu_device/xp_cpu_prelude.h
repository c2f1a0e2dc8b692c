// xp's prelude for CUDA C++ compiled for the CPU: CUDA's built-in variables, qualifiers,
// synchronisation, warp functions, atomics, math functions, __half and __nv_bfloat16, vector types,
// printf and assert, for a kernel source that the machine's C++ compiler builds into a shared
// object. Force-included before the source (docs/cpu-kernels.md lists what it supports). The
// engine runs the threads of a block one after another, or as fibers when the source synchronises.
#pragma once

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "xp_cpu_abi.h"

#define XP_CPU_KERNEL 1

// ---- qualifiers ----
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __shared__ static thread_local

// ---- vector types (alignment as CUDA's) ----
#define XP_VEC1(T, N, A)         \
  struct alignas(A) N##1 {       \
    T x;                         \
  };                             \
  inline N##1 make_##N##1(T x) { \
    N##1 r;                      \
    r.x = x;                     \
    return r;                    \
  }
#define XP_VEC2(T, N, A)              \
  struct alignas(A) N##2 {            \
    T x, y;                           \
  };                                  \
  inline N##2 make_##N##2(T x, T y) { \
    N##2 r;                           \
    r.x = x;                          \
    r.y = y;                          \
    return r;                         \
  }
#define XP_VEC3(T, N)                      \
  struct N##3 {                            \
    T x, y, z;                             \
  };                                       \
  inline N##3 make_##N##3(T x, T y, T z) { \
    N##3 r;                                \
    r.x = x;                               \
    r.y = y;                               \
    r.z = z;                               \
    return r;                              \
  }
#define XP_VEC4(T, N, A)                        \
  struct alignas(A) N##4 {                      \
    T x, y, z, w;                               \
  };                                            \
  inline N##4 make_##N##4(T x, T y, T z, T w) { \
    N##4 r;                                     \
    r.x = x;                                    \
    r.y = y;                                    \
    r.z = z;                                    \
    r.w = w;                                    \
    return r;                                   \
  }
#define XP_VECS(T, N, A1, A2, A4) \
  XP_VEC1(T, N, A1)               \
  XP_VEC2(T, N, A2)               \
  XP_VEC4(T, N, A4)
XP_VECS(signed char, char, 1, 2, 4)
XP_VECS(unsigned char, uchar, 1, 2, 4)
XP_VECS(short, short, 2, 4, 8)
XP_VECS(unsigned short, ushort, 2, 4, 8)
XP_VECS(int, int, 4, 8, 16)
XP_VECS(unsigned int, uint, 4, 8, 16)
XP_VECS(long, long, 8, 16, 16)
XP_VECS(unsigned long, ulong, 8, 16, 16)
XP_VECS(long long, longlong, 8, 16, 16)
XP_VECS(unsigned long long, ulonglong, 8, 16, 16)
XP_VECS(float, float, 4, 8, 16)
XP_VECS(double, double, 8, 16, 16)
XP_VEC3(signed char, char)
XP_VEC3(unsigned char, uchar)
XP_VEC3(short, short)
XP_VEC3(unsigned short, ushort)
XP_VEC3(int, int)
XP_VEC3(long, long)
XP_VEC3(unsigned long, ulong)
XP_VEC3(long long, longlong)
XP_VEC3(unsigned long long, ulonglong)
XP_VEC3(float, float)
XP_VEC3(double, double)
#undef XP_VEC1
#undef XP_VEC2
#undef XP_VEC3
#undef XP_VEC4
#undef XP_VECS

struct uint3 {
  unsigned int x, y, z;
};
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) {
  return uint3{x, y, z};
}
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}  // NOLINT: as CUDA's
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// ---- the built-in variables: this worker's block and thread ----
static thread_local uint3 threadIdx;
static thread_local uint3 blockIdx;
static thread_local dim3 blockDim;
static thread_local dim3 gridDim;
static constexpr int warpSize = 32;

namespace xp_cpu {
static thread_local const xp_cpu_block* block;
struct abort_thread {};  // a failed assert or __trap: the thread stops
inline unsigned linear_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
inline void enter(const xp_cpu_block* b) {
  block = b;
  blockIdx = uint3{b->block_index[0], b->block_index[1], b->block_index[2]};
  blockDim = dim3(b->block[0], b->block[1], b->block[2]);
  gridDim = dim3(b->grid[0], b->grid[1], b->grid[2]);
}
inline void set_thread(int t) {
  const unsigned u = static_cast<unsigned>(t);
  threadIdx = uint3{u % blockDim.x, (u / blockDim.x) % blockDim.y, u / (blockDim.x * blockDim.y)};
}
inline unsigned char* dynamic_shared() {
  return static_cast<unsigned char*>(block->dynamic_shared);
}
// Around a call that may switch to another thread of the block: the memory the kernel sees is
// re-read after it, and this thread's index restored.
struct Resume {
  uint3 saved;
  Resume() : saved(threadIdx) { __asm__ __volatile__("" ::: "memory"); }
  ~Resume() {
    threadIdx = saved;
    __asm__ __volatile__("" ::: "memory");
  }
};
[[noreturn]] inline void fail(const char* message) {
  block->api->fail(block->engine, message);
  throw abort_thread{};
}
template <class T>
inline unsigned long long to_bits(T v) {
  static_assert(sizeof(T) <= 8, "a warp shuffle moves at most 8 bytes");
  unsigned long long b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
inline T from_bits(unsigned long long b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
}  // namespace xp_cpu

// ---- the program's thread-local storage, made before any kernel code runs ----
// A shared object loaded after the loader's static TLS room is used up gets its thread-local
// storage on each thread's first access, through the TLS descriptor's slow path, which before
// glibc 2.40 does not preserve the vector registers (glibc bug 31372): GCC's TLS descriptors
// (-mtls-dialect=gnu2) let code keep values in them across an access, and an entry point that held
// the block's size in one ran no thread. Called by the engine (XP_CPU_PREPARE_THREAD_SYMBOL), as a
// function call, where nothing is live in a vector register; every later access takes the fast path.
// It touches a variable of its own: any thread-local variable of the object makes all of them, and
// one whose address escapes (into the asm) could be written by any store in the compiler's eyes,
// which would keep the loop over threads from vectorising if it were threadIdx.
namespace xp_cpu {
static thread_local unsigned char tls_anchor;
}
extern "C" __attribute__((noinline, visibility("default"))) void xp_cpu_prepare_thread() {
  __asm__ __volatile__("" : : "r"(&xp_cpu::tls_anchor) : "memory");
}

// ---- synchronisation ----
namespace xp_cpu {
// Every call that may make a thread wait for others goes through here, inlined into its caller
// with the calls below. It leaves two marks in the shared object. A symbol says that some function
// of the program synchronises: a program without it runs each block as one plain loop over its
// threads, with no check after each thread, which the compiler may vectorise (XP_CPU_SYNC_SYMBOL).
// And each copy of the call in the final code, wherever inlining put it, adds its own address to
// a section (XP_CPU_SYNC_SITES_SECTION): the engine finds which kernels' code holds a copy, and
// runs the others as plain loops too; a copy outside every kernel and entry point (a helper that
// was not inlined) makes every kernel of the program one that synchronises.
__attribute__((always_inline)) inline const xp_cpu_engine_api* sync_api() {
  __asm__ __volatile__(".globl " XP_CPU_SYNC_SYMBOL "\n\t.set " XP_CPU_SYNC_SYMBOL
                       ", 1\n771:\n\t.pushsection " XP_CPU_SYNC_SITES_SECTION
                       ",\"a\"\n\t.balign 4\n\t.long 771b - .\n\t.popsection");
  return block->api;
}
}  // namespace xp_cpu
// The sites' section, bounded by the symbols the linker makes for it (weak: a program without a
// synchronising call has no such section).
extern "C" {
extern const int __start_xp_cpu_sync_sites[] __attribute__((weak, visibility("hidden")));
extern const int __stop_xp_cpu_sync_sites[] __attribute__((weak, visibility("hidden")));
__attribute__((visibility("default"))) unsigned xp_cpu_sync_site_table(const int** begin) {
  *begin = __start_xp_cpu_sync_sites;
  return __start_xp_cpu_sync_sites == nullptr
             ? 0u
             : static_cast<unsigned>(__stop_xp_cpu_sync_sites - __start_xp_cpu_sync_sites);
}
}
__attribute__((always_inline)) inline void __syncthreads() {
  xp_cpu::Resume r;
  xp_cpu::sync_api()->barrier(xp_cpu::block->engine, xp_cpu::linear_thread(), 0, 0);
}
__attribute__((always_inline)) inline int __syncthreads_count(int p) {
  xp_cpu::Resume r;
  return xp_cpu::sync_api()->barrier(xp_cpu::block->engine, xp_cpu::linear_thread(), 1, p != 0);
}
__attribute__((always_inline)) inline int __syncthreads_and(int p) {
  xp_cpu::Resume r;
  return xp_cpu::sync_api()->barrier(xp_cpu::block->engine, xp_cpu::linear_thread(), 2, p != 0);
}
__attribute__((always_inline)) inline int __syncthreads_or(int p) {
  xp_cpu::Resume r;
  return xp_cpu::sync_api()->barrier(xp_cpu::block->engine, xp_cpu::linear_thread(), 3, p != 0);
}
__attribute__((always_inline)) inline void __syncwarp(unsigned mask = 0xffffffffu) {
  xp_cpu::Resume r;
  xp_cpu::sync_api()->warp_sync(xp_cpu::block->engine, xp_cpu::linear_thread(), mask);
}
template <class T>
__attribute__((always_inline)) inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  xp_cpu::Resume r;
  return xp_cpu::from_bits<T>(xp_cpu::sync_api()->shfl(xp_cpu::block->engine, xp_cpu::linear_thread(), 0, mask,
                                                       xp_cpu::to_bits(v), src, width));
}
template <class T>
__attribute__((always_inline)) inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  xp_cpu::Resume r;
  return xp_cpu::from_bits<T>(xp_cpu::sync_api()->shfl(xp_cpu::block->engine, xp_cpu::linear_thread(), 1, mask,
                                                       xp_cpu::to_bits(v), static_cast<int>(delta), width));
}
template <class T>
__attribute__((always_inline)) inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  xp_cpu::Resume r;
  return xp_cpu::from_bits<T>(xp_cpu::sync_api()->shfl(xp_cpu::block->engine, xp_cpu::linear_thread(), 2, mask,
                                                       xp_cpu::to_bits(v), static_cast<int>(delta), width));
}
template <class T>
__attribute__((always_inline)) inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  xp_cpu::Resume r;
  return xp_cpu::from_bits<T>(xp_cpu::sync_api()->shfl(xp_cpu::block->engine, xp_cpu::linear_thread(), 3, mask,
                                                       xp_cpu::to_bits(v), lane_mask, width));
}
__attribute__((always_inline)) inline unsigned __ballot_sync(unsigned mask, int p) {
  xp_cpu::Resume r;
  return xp_cpu::sync_api()->vote(xp_cpu::block->engine, xp_cpu::linear_thread(), 0, mask, p != 0);
}
__attribute__((always_inline)) inline int __any_sync(unsigned mask, int p) {
  xp_cpu::Resume r;
  return static_cast<int>(xp_cpu::sync_api()->vote(xp_cpu::block->engine, xp_cpu::linear_thread(), 1, mask, p != 0));
}
__attribute__((always_inline)) inline int __all_sync(unsigned mask, int p) {
  xp_cpu::Resume r;
  return static_cast<int>(xp_cpu::sync_api()->vote(xp_cpu::block->engine, xp_cpu::linear_thread(), 2, mask, p != 0));
}
__attribute__((always_inline)) inline unsigned __activemask() {
  return xp_cpu::sync_api()->active_mask(xp_cpu::block->engine, xp_cpu::linear_thread());
}
inline void __threadfence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __threadfence_block() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __threadfence_system() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __nanosleep(unsigned) {}
[[noreturn]] inline void __trap() {
  xp_cpu::fail("__trap() was called");
}
inline long long clock64() {
#if defined(__x86_64__) || defined(__i386__)
  return static_cast<long long>(__builtin_ia32_rdtsc());
#else
  return static_cast<long long>(__builtin_readcyclecounter());
#endif
}

// ---- assert and printf (printf is the C library's) ----
namespace xp_cpu {
[[noreturn]] inline void assert_failed(const char* expr, const char* file, int line, const char* func) {
  char m[512];
  std::snprintf(m, sizeof m, "%s:%d: %s: block (%u, %u, %u), thread (%u, %u, %u): Assertion `%s` failed.", file, line,
                func, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, expr);
  fail(m);
}
}  // namespace xp_cpu
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : ::xp_cpu::assert_failed(#e, __FILE__, __LINE__, __func__))
#endif

// ---- loads and stores with cache hints: plain ones here ----
template <class T>
inline T __ldg(const T* p) {
  return *p;
}
template <class T>
inline T __ldcg(const T* p) {
  return *p;
}
template <class T>
inline T __ldca(const T* p) {
  return *p;
}
template <class T>
inline T __ldcs(const T* p) {
  return *p;
}
template <class T>
inline T __ldlu(const T* p) {
  return *p;
}
template <class T>
inline T __ldcv(const T* p) {
  return *p;
}
template <class T>
inline void __stwb(T* p, T v) {
  *p = v;
}
template <class T>
inline void __stcg(T* p, T v) {
  *p = v;
}
template <class T>
inline void __stcs(T* p, T v) {
  *p = v;
}
template <class T>
inline void __stwt(T* p, T v) {
  *p = v;
}

// ---- atomics: real ones, on any memory, with CUDA's results (the old value) ----
#define XP_ATOMIC_INT(T)                                                                                    \
  inline T atomicAdd(T* a, T v) {                                                                           \
    return __atomic_fetch_add(a, v, __ATOMIC_RELAXED);                                                      \
  }                                                                                                         \
  inline T atomicExch(T* a, T v) {                                                                          \
    return __atomic_exchange_n(a, v, __ATOMIC_RELAXED);                                                     \
  }                                                                                                         \
  inline T atomicAnd(T* a, T v) {                                                                           \
    return __atomic_fetch_and(a, v, __ATOMIC_RELAXED);                                                      \
  }                                                                                                         \
  inline T atomicOr(T* a, T v) {                                                                            \
    return __atomic_fetch_or(a, v, __ATOMIC_RELAXED);                                                       \
  }                                                                                                         \
  inline T atomicXor(T* a, T v) {                                                                           \
    return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED);                                                      \
  }                                                                                                         \
  inline T atomicCAS(T* a, T expected, T v) {                                                               \
    __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);                \
    return expected;                                                                                        \
  }                                                                                                         \
  inline T atomicMin(T* a, T v) {                                                                           \
    T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                           \
    while (v < old && !__atomic_compare_exchange_n(a, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) { \
    }                                                                                                       \
    return old;                                                                                             \
  }                                                                                                         \
  inline T atomicMax(T* a, T v) {                                                                           \
    T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                           \
    while (v > old && !__atomic_compare_exchange_n(a, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) { \
    }                                                                                                       \
    return old;                                                                                             \
  }
XP_ATOMIC_INT(int)
XP_ATOMIC_INT(unsigned int)
XP_ATOMIC_INT(long long)
XP_ATOMIC_INT(unsigned long long)
#undef XP_ATOMIC_INT
inline unsigned short atomicCAS(unsigned short* a, unsigned short expected, unsigned short v) {
  __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
}
inline int atomicSub(int* a, int v) {
  return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED);
}
inline unsigned int atomicSub(unsigned int* a, unsigned int v) {
  return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED);
}
// ((old >= v) ? 0 : (old + 1))
inline unsigned int atomicInc(unsigned int* a, unsigned int v) {
  unsigned int old = __atomic_load_n(a, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(a, &old, old >= v ? 0u : old + 1u, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
// (((old == 0) || (old > v)) ? v : (old - 1))
inline unsigned int atomicDec(unsigned int* a, unsigned int v) {
  unsigned int old = __atomic_load_n(a, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(a, &old, (old == 0u || old > v) ? v : old - 1u, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
  return old;
}
namespace xp_cpu {
// A floating-point read-modify-write as a compare-and-swap loop on the bits.
template <class F, class U, class Op>
inline F atomic_float(F* a, Op op) {
  U* p = reinterpret_cast<U*>(a);
  U old = __atomic_load_n(p, __ATOMIC_RELAXED), next;
  F f;
  do {
    std::memcpy(&f, &old, sizeof f);
    const F n = op(f);
    std::memcpy(&next, &n, sizeof next);
  } while (!__atomic_compare_exchange_n(p, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return f;
}
}  // namespace xp_cpu
inline float atomicAdd(float* a, float v) {
  return xp_cpu::atomic_float<float, unsigned int>(a, [v](float f) { return f + v; });
}
inline double atomicAdd(double* a, double v) {
  return xp_cpu::atomic_float<double, unsigned long long>(a, [v](double f) { return f + v; });
}
inline float atomicExch(float* a, float v) {
  return xp_cpu::atomic_float<float, unsigned int>(a, [v](float) { return v; });
}
inline float atomicMin(float* a, float v) {
  return xp_cpu::atomic_float<float, unsigned int>(a, [v](float f) { return std::fmin(f, v); });
}
inline float atomicMax(float* a, float v) {
  return xp_cpu::atomic_float<float, unsigned int>(a, [v](float f) { return std::fmax(f, v); });
}
inline double atomicMin(double* a, double v) {
  return xp_cpu::atomic_float<double, unsigned long long>(a, [v](double f) { return std::fmin(f, v); });
}
inline double atomicMax(double* a, double v) {
  return xp_cpu::atomic_float<double, unsigned long long>(a, [v](double f) { return std::fmax(f, v); });
}
// The scoped forms: every scope is the whole machine here.
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec

// ---- math: the C library's functions (sqrtf, expf, ...) come from <cmath>; CUDA's extras ----
using std::abs;
using std::isfinite;
using std::isinf;
using std::isnan;
using std::signbit;

#define XP_MINMAX(T, MIN, MAX) \
  inline T min(T a, T b) {     \
    return MIN;                \
  }                            \
  inline T max(T a, T b) {     \
    return MAX;                \
  }
XP_MINMAX(int, a<b ? a : b, a> b ? a : b)
XP_MINMAX(unsigned int, a<b ? a : b, a> b ? a : b)
XP_MINMAX(long, a<b ? a : b, a> b ? a : b)
XP_MINMAX(unsigned long, a<b ? a : b, a> b ? a : b)
XP_MINMAX(long long, a<b ? a : b, a> b ? a : b)
XP_MINMAX(unsigned long long, a<b ? a : b, a> b ? a : b)
XP_MINMAX(float, std::fmin(a, b), std::fmax(a, b))
XP_MINMAX(double, std::fmin(a, b), std::fmax(a, b))
#undef XP_MINMAX
// Mixed types: as CUDA's overloads, the usual arithmetic conversions first.
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && !std::is_same_v<A, B>>>
inline auto min(A a, B b) -> decltype(a + b) {
  using T = decltype(a + b);
  return min(static_cast<T>(a), static_cast<T>(b));
}
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && !std::is_same_v<A, B>>>
inline auto max(A a, B b) -> decltype(a + b) {
  using T = decltype(a + b);
  return max(static_cast<T>(a), static_cast<T>(b));
}
inline long long llmin(long long a, long long b) {
  return a < b ? a : b;
}
inline long long llmax(long long a, long long b) {
  return a > b ? a : b;
}
inline unsigned int umin(unsigned int a, unsigned int b) {
  return a < b ? a : b;
}
inline unsigned int umax(unsigned int a, unsigned int b) {
  return a > b ? a : b;
}
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) {
  return a < b ? a : b;
}
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) {
  return a > b ? a : b;
}

inline float rsqrtf(float x) {
  return 1.0f / std::sqrt(x);
}
inline double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}
inline float rcbrtf(float x) {
  return 1.0f / std::cbrt(x);
}
inline double rcbrt(double x) {
  return 1.0 / std::cbrt(x);
}
inline float exp10f(float x) {
  return static_cast<float>(std::pow(10.0, static_cast<double>(x)));
}
inline double exp10(double x) {
  return std::pow(10.0, x);
}
inline float sinpif(float x) {
  return static_cast<float>(std::sin(M_PI * static_cast<double>(x)));
}
inline float cospif(float x) {
  return static_cast<float>(std::cos(M_PI * static_cast<double>(x)));
}
inline double sinpi(double x) {
  return std::sin(M_PI * x);
}
inline double cospi(double x) {
  return std::cos(M_PI * x);
}
inline void sincosf(float x, float* s, float* c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
inline void sincos(double x, double* s, double* c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
inline void sincospif(float x, float* s, float* c) {
  *s = sinpif(x);
  *c = cospif(x);
}
inline float normcdff(float x) {
  return 0.5f * std::erfc(-x * static_cast<float>(M_SQRT1_2));
}
inline double normcdf(double x) {
  return 0.5 * std::erfc(-x * M_SQRT1_2);
}
inline float __saturatef(float x) {
  return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f);  // NaN: 0
}
// The fast forms compute as the accurate ones here (docs/cpu-kernels.md: precision).
inline float __expf(float x) {
  return std::exp(x);
}
inline float __exp10f(float x) {
  return exp10f(x);
}
inline float __logf(float x) {
  return std::log(x);
}
inline float __log2f(float x) {
  return std::log2(x);
}
inline float __log10f(float x) {
  return std::log10(x);
}
inline float __sinf(float x) {
  return std::sin(x);
}
inline float __cosf(float x) {
  return std::cos(x);
}
inline float __tanf(float x) {
  return std::tan(x);
}
inline void __sincosf(float x, float* s, float* c) {
  sincosf(x, s, c);
}
inline float __powf(float x, float y) {
  return std::pow(x, y);
}
inline float __fdividef(float a, float b) {
  return a / b;
}
// Correctly rounded: the same bits as the GPU's.
inline float __fadd_rn(float a, float b) {
  return a + b;
}
inline float __fsub_rn(float a, float b) {
  return a - b;
}
inline float __fmul_rn(float a, float b) {
  return a * b;
}
inline float __fdiv_rn(float a, float b) {
  return a / b;
}
inline float __frcp_rn(float a) {
  return 1.0f / a;
}
inline float __fsqrt_rn(float a) {
  return std::sqrt(a);
}
inline float __fmaf_rn(float a, float b, float c) {
  return std::fma(a, b, c);
}
inline double __dadd_rn(double a, double b) {
  return a + b;
}
inline double __dsub_rn(double a, double b) {
  return a - b;
}
inline double __dmul_rn(double a, double b) {
  return a * b;
}
inline double __ddiv_rn(double a, double b) {
  return a / b;
}
inline double __drcp_rn(double a) {
  return 1.0 / a;
}
inline double __dsqrt_rn(double a) {
  return std::sqrt(a);
}
inline double __fma_rn(double a, double b, double c) {
  return std::fma(a, b, c);
}

// ---- bits and integers ----
inline int __float_as_int(float x) {
  int r;
  std::memcpy(&r, &x, 4);
  return r;
}
inline unsigned int __float_as_uint(float x) {
  unsigned int r;
  std::memcpy(&r, &x, 4);
  return r;
}
inline float __int_as_float(int x) {
  float r;
  std::memcpy(&r, &x, 4);
  return r;
}
inline float __uint_as_float(unsigned int x) {
  float r;
  std::memcpy(&r, &x, 4);
  return r;
}
inline long long __double_as_longlong(double x) {
  long long r;
  std::memcpy(&r, &x, 8);
  return r;
}
inline double __longlong_as_double(long long x) {
  double r;
  std::memcpy(&r, &x, 8);
  return r;
}
inline int __double2hiint(double x) {
  return static_cast<int>(static_cast<unsigned long long>(__double_as_longlong(x)) >> 32);
}
inline int __double2loint(double x) {
  return static_cast<int>(static_cast<unsigned int>(__double_as_longlong(x)));
}
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long>(
      (static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) | static_cast<unsigned>(lo)));
}
inline int __popc(unsigned int x) {
  return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x) {
  return __builtin_popcountll(x);
}
inline int __clz(int x) {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x));
}
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) {
  return __builtin_ffs(x);
}
inline int __ffsll(long long x) {
  return __builtin_ffsll(x);
}
inline unsigned int __brev(unsigned int x) {
  unsigned int r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned long long __brevll(unsigned long long x) {
  unsigned long long r = 0;
  for (int i = 0; i < 64; ++i) r |= ((x >> i) & 1ull) << (63 - i);
  return r;
}
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned int r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned int>((v >> (((s >> (4 * i)) & 7u) * 8)) & 0xffu) << (8 * i);
  return r;
}
inline int __mulhi(int a, int b) {
  return static_cast<int>((static_cast<long long>(a) * b) >> 32);
}
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline int __mul24(int a, int b) {
  return static_cast<int>(static_cast<unsigned>((a << 8) >> 8) * static_cast<unsigned>((b << 8) >> 8));
}
inline unsigned int __umul24(unsigned int a, unsigned int b) {
  return (a & 0xffffffu) * (b & 0xffffffu);
}
inline unsigned int __sad(int x, int y, unsigned int z) {
  return (x > y ? static_cast<unsigned>(x) - static_cast<unsigned>(y)
                : static_cast<unsigned>(y) - static_cast<unsigned>(x)) +
         z;
}
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) {
  return (x > y ? x - y : y - x) + z;
}
inline int __hadd(int a, int b) {
  return static_cast<int>((static_cast<long long>(a) + b) >> 1);
}
inline int __rhadd(int a, int b) {
  return static_cast<int>((static_cast<long long>(a) + b + 1) >> 1);
}
inline unsigned int __uhadd(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) + b) >> 1);
}
inline unsigned int __urhadd(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) + b + 1) >> 1);
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>((v << (s & 31u)) >> 32);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>((v << (s > 32u ? 32u : s)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>(v >> (s & 31u));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>(v >> (s > 32u ? 32u : s));
}

// ---- conversions: as the GPU's, out-of-range values saturate and NaN gives 0 ----
namespace xp_cpu {
template <class I, class F>
inline I to_int(F r) {  // r already rounded
  if (r != r) return 0;
  if (r <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}
}  // namespace xp_cpu
#define XP_CONV(F, FN, I, IN)                    \
  inline I __##FN##2##IN##_rn(F x) {             \
    return xp_cpu::to_int<I>(std::nearbyint(x)); \
  }                                              \
  inline I __##FN##2##IN##_rz(F x) {             \
    return xp_cpu::to_int<I>(std::trunc(x));     \
  }                                              \
  inline I __##FN##2##IN##_rd(F x) {             \
    return xp_cpu::to_int<I>(std::floor(x));     \
  }                                              \
  inline I __##FN##2##IN##_ru(F x) {             \
    return xp_cpu::to_int<I>(std::ceil(x));      \
  }
XP_CONV(float, float, int, int)
XP_CONV(float, float, unsigned int, uint)
XP_CONV(float, float, long long, ll)
XP_CONV(float, float, unsigned long long, ull)
XP_CONV(double, double, int, int)
XP_CONV(double, double, unsigned int, uint)
XP_CONV(double, double, long long, ll)
XP_CONV(double, double, unsigned long long, ull)
#undef XP_CONV
inline float __int2float_rn(int x) {
  return static_cast<float>(x);
}
inline float __uint2float_rn(unsigned int x) {
  return static_cast<float>(x);
}
inline float __ll2float_rn(long long x) {
  return static_cast<float>(x);
}
inline float __ull2float_rn(unsigned long long x) {
  return static_cast<float>(x);
}
inline double __int2double_rn(int x) {
  return static_cast<double>(x);
}
inline double __ll2double_rn(long long x) {
  return static_cast<double>(x);
}
inline float __double2float_rn(double x) {
  return static_cast<float>(x);
}
inline float __float2float_rn(float x) {
  return x;
}

#include "xp_cpu_half.h"

// ---- what xp's generated entry points use ----
namespace xp_cpu {
// `extern __shared__ T name[];` becomes one of these (the dynamic shared memory of the block).
template <class T>
struct DynamicShared {
  T* get() const { return reinterpret_cast<T*>(dynamic_shared()); }
  operator T*() const { return get(); }  // NOLINT: an array's decay
  template <class P>
  explicit operator P*() const {
    return reinterpret_cast<P*>(dynamic_shared());
  }
};
// Inlined always, so that the kernel is a known function inside the loop over threads, inlined in
// turn where the compiler likes (clang left `run` a call through the pointer: no inlining, no
// vectorisation).
template <class... P, std::size_t... I>
__attribute__((always_inline)) inline void call_each(void (*f)(P...), void** a, const xp_cpu_block* b, int t,
                                                     std::index_sequence<I...>) {
  // The arguments are read once: each thread's call gets its own copy, as on a GPU.
  const std::tuple<std::remove_cv_t<P>...> values{*static_cast<std::remove_cv_t<P>*>(a[I])...};
  if (t >= 0) {
    set_thread(t);
    f(std::get<I>(values)...);
    return;
  }
  const unsigned bx = b->block[0], by = b->block[1], bz = b->block[2];
  if (t == XP_CPU_ALL_THREADS) {  // no function of the program synchronises
    for (unsigned z = 0; z < bz; ++z)
      for (unsigned y = 0; y < by; ++y)
        for (unsigned x = 0; x < bx; ++x) {
          threadIdx = uint3{x, y, z};
          f(std::get<I>(values)...);
        }
    return;
  }
  for (unsigned z = 0; z < bz; ++z)
    for (unsigned y = 0; y < by; ++y)
      for (unsigned x = 0; x < bx; ++x) {
        threadIdx = uint3{x, y, z};
        f(std::get<I>(values)...);
        if (b->fibers) return;  // this thread synchronised: the engine runs the others
      }
}
template <class... P>
__attribute__((always_inline)) inline void run(void (*f)(P...), void** a, const xp_cpu_block* b, int t) {
  enter(b);
  try {
    call_each(f, a, b, t, std::index_sequence_for<P...>{});
  } catch (const abort_thread&) {
  } catch (const std::exception& e) {
    b->api->fail(b->engine, e.what());
  } catch (...) {
    b->api->fail(b->engine, nullptr);
  }
}
template <class... P>
constexpr unsigned param_count(void (*)(P...)) {
  return sizeof...(P);
}
template <class... P>
inline const unsigned long long* param_sizes(void (*)(P...)) {
  static const unsigned long long sizes[] = {sizeof(P)..., 0};
  return sizes;
}
}  // namespace xp_cpu
