#pragma once

// Cooperative fibers for the threads of a CPU kernel's block (cpu_engine.cpp): a context switch
// that saves only what the calling convention asks a callee to keep (x86-64: six registers and
// the floating-point control words), so that a switch costs a few nanoseconds; stacks of
// kFiberStackBytes with a guard page below each. Other architectures use ucontext. Internal to
// src/jit.

#include <cstddef>

namespace xp::detail {

inline constexpr std::size_t kFiberStackBytes = std::size_t{64} << 10;

// A stack of kFiberStackBytes above a guard page; freed with free_fiber_stack. nullptr when the
// memory could not be mapped.
void* new_fiber_stack();
void free_fiber_stack(void* stack);

// A fiber's saved context.
struct FiberContext {
  void* sp = nullptr;    // x86-64: the saved stack pointer
  void* impl = nullptr;  // elsewhere: a ucontext_t
  // The stack's extent and what it runs first, for AddressSanitizer's fiber annotations (the
  // stack of a thread's own context is learnt at its first switch).
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
  void (*entry)(void*) = nullptr;
  void* arg = nullptr;
  // ThreadSanitizer's fiber (its builds only): made by prepare_fiber, or the thread's own, learnt
  // at the first switch away from it.
  void* tsan = nullptr;
  bool tsan_owned = false;
};

// Makes `fiber` start entry(arg) on `stack` at its first switch_fiber. entry must never return:
// it ends by switching away for good. `color` (a fiber's index) moves the start of the stack down
// by a multiple of 64 bytes: stacks lie kFiberStackBytes plus a page apart, so their tops would
// otherwise all fall in the same few sets of the L1 cache.
void prepare_fiber(FiberContext& fiber, void* stack, void (*entry)(void*), void* arg, unsigned color = 0);
// Saves the running context into `from` and resumes `to`.
void switch_fiber(FiberContext& from, FiberContext& to);
// Releases what prepare_fiber allocated besides the stack (on x86-64, only ThreadSanitizer's fiber).
void release_fiber(FiberContext& fiber);

}  // namespace xp::detail
