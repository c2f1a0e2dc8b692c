// Fibers for CPU kernels (fiber.hpp).
#include "jit/fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define XP_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XP_FIBER_ASAN 1
#endif
#endif
#ifdef XP_FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__SANITIZE_THREAD__)
#define XP_FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define XP_FIBER_TSAN 1
#endif
#endif
#ifdef XP_FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace xp::detail {

namespace {
std::size_t page_bytes() {
  static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}

// AddressSanitizer follows the switches (else it takes a fiber's stack for an overflow of the
// thread's): each switch is announced with the stack it goes to, and the context that resumes
// learns the extent of the one it came from (the thread's own stack is known that way).
thread_local FiberContext* t_switching_from = nullptr;

void before_switch(FiberContext& from, FiberContext& to, void** fake_stack) {
  t_switching_from = &from;
#ifdef XP_FIBER_TSAN
  // ThreadSanitizer keeps a state per fiber (its own shadow stack, its clock): the context being
  // left is the thread's own the first time, and each switch orders what came before it with what
  // the resumed fiber does next, as running on one thread does.
  if (from.tsan == nullptr) from.tsan = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(to.tsan, 0);
#endif
#ifdef XP_FIBER_ASAN
  __sanitizer_start_switch_fiber(fake_stack, to.stack_bottom, to.stack_size);
#else
  (void)to;
  (void)fake_stack;
#endif
}

void after_switch(void* fake_stack) {
#ifdef XP_FIBER_ASAN
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(fake_stack, &bottom, &size);
  if (t_switching_from != nullptr && t_switching_from->stack_bottom == nullptr) {
    t_switching_from->stack_bottom = bottom;
    t_switching_from->stack_size = size;
  }
#else
  (void)fake_stack;
#endif
}

// A fresh ThreadSanitizer fiber for a context about to start (the one of its last run, abandoned
// where that run switched away for good, is destroyed).
void tsan_fresh(FiberContext& fiber) {
#ifdef XP_FIBER_TSAN
  if (fiber.tsan_owned) __tsan_destroy_fiber(fiber.tsan);
  fiber.tsan = __tsan_create_fiber(0);
  fiber.tsan_owned = true;
#else
  (void)fiber;
#endif
}

void tsan_release(FiberContext& fiber) {
#ifdef XP_FIBER_TSAN
  if (fiber.tsan_owned) __tsan_destroy_fiber(fiber.tsan);
  fiber.tsan = nullptr;
  fiber.tsan_owned = false;
#else
  (void)fiber;
#endif
}

// What a new fiber runs first.
void start(void* context) {
  after_switch(nullptr);
  auto* c = static_cast<FiberContext*>(context);
  c->entry(c->arg);
}
}  // namespace

void* new_fiber_stack() {
  const std::size_t guard = page_bytes();
  void* p = ::mmap(nullptr, kFiberStackBytes + guard, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // A thread that overflows its stack faults here instead of writing over another one's.
  if (::mprotect(p, guard, PROT_NONE) != 0) {
    ::munmap(p, kFiberStackBytes + guard);
    return nullptr;
  }
  return static_cast<char*>(p) + guard;
}

void free_fiber_stack(void* stack) {
  if (stack != nullptr) ::munmap(static_cast<char*>(stack) - page_bytes(), kFiberStackBytes + page_bytes());
}

#if defined(__x86_64__)

extern "C" void xp_fiber_switch(void** save_sp, void* new_sp);
extern "C" void xp_fiber_start();

// Saves rbp, rbx and r12-r15 on the running stack, stores the stack pointer in *save_sp, and
// restores the same from new_sp. The floating-point control words are not switched: every fiber of
// a worker runs with the worker's. A new fiber's first switch "returns" into xp_fiber_start, which
// calls r12(r13) with the stack 16-byte aligned.
__asm__(
    ".text\n"
    ".globl xp_fiber_switch\n"
    ".hidden xp_fiber_switch\n"
    ".type xp_fiber_switch,@function\n"
    "xp_fiber_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size xp_fiber_switch, .-xp_fiber_switch\n"
    ".globl xp_fiber_start\n"
    ".hidden xp_fiber_start\n"
    ".type xp_fiber_start,@function\n"
    "xp_fiber_start:\n"
    "  movq %r13, %rdi\n"
    "  callq *%r12\n"
    "  ud2\n"
    ".size xp_fiber_start, .-xp_fiber_start\n");

void prepare_fiber(FiberContext& fiber, void* stack, void (*entry)(void*), void* arg, unsigned color) {
  fiber.stack_bottom = stack;
  fiber.stack_size = kFiberStackBytes;
  fiber.entry = entry;
  fiber.arg = arg;
  tsan_fresh(fiber);
  auto top = (reinterpret_cast<std::uintptr_t>(static_cast<char*>(stack) + kFiberStackBytes) - (color % 64) * 64) &
             ~std::uintptr_t{15};
  // Seven words; after the ret into xp_fiber_start the stack pointer is top - 16: 16-byte aligned.
  auto* sp = reinterpret_cast<std::uint64_t*>(top - 72);
  sp[0] = 0;                                        // r15
  sp[1] = 0;                                        // r14
  sp[2] = reinterpret_cast<std::uint64_t>(&fiber);  // r13
  sp[3] = reinterpret_cast<std::uint64_t>(&start);  // r12
  sp[4] = 0;                                        // rbx
  sp[5] = 0;                                        // rbp
  sp[6] = reinterpret_cast<std::uint64_t>(&xp_fiber_start);
  fiber.sp = sp;
}

void switch_fiber(FiberContext& from, FiberContext& to) {
  void* fake_stack = nullptr;
  before_switch(from, to, &fake_stack);
  xp_fiber_switch(&from.sp, to.sp);
  after_switch(fake_stack);
}

void release_fiber(FiberContext& fiber) {
  tsan_release(fiber);
}

#else

namespace {
struct Start {
  void (*entry)(void*);
  void* arg;
};
void trampoline(unsigned hi, unsigned lo) {
  auto* s = reinterpret_cast<Start*>((static_cast<std::uintptr_t>(hi) << 32) | lo);
  s->entry(s->arg);
}
}  // namespace

void prepare_fiber(FiberContext& fiber, void* stack, void (*entry)(void*), void* arg, unsigned color) {
  (void)color;
  fiber.stack_bottom = stack;
  fiber.stack_size = kFiberStackBytes;
  fiber.entry = entry;
  fiber.arg = arg;
  tsan_fresh(fiber);
  auto* uc = static_cast<ucontext_t*>(fiber.impl);
  if (uc == nullptr) {
    uc = new ucontext_t();
    fiber.impl = uc;
  }
  // The start record sits at the stack's bottom, above the guard page.
  auto* s = static_cast<Start*>(stack);
  s->entry = &start;
  s->arg = &fiber;
  getcontext(uc);
  uc->uc_stack.ss_sp = static_cast<char*>(stack) + 64;
  uc->uc_stack.ss_size = kFiberStackBytes - 64;
  uc->uc_link = nullptr;
  const auto p = reinterpret_cast<std::uintptr_t>(s);
  makecontext(uc, reinterpret_cast<void (*)()>(&trampoline), 2, static_cast<unsigned>(p >> 32),
              static_cast<unsigned>(p & 0xffffffffu));
}

void switch_fiber(FiberContext& from, FiberContext& to) {
  if (from.impl == nullptr) from.impl = new ucontext_t();
  void* fake_stack = nullptr;
  before_switch(from, to, &fake_stack);
  swapcontext(static_cast<ucontext_t*>(from.impl), static_cast<ucontext_t*>(to.impl));
  after_switch(fake_stack);
}

void release_fiber(FiberContext& fiber) {
  tsan_release(fiber);
  delete static_cast<ucontext_t*>(fiber.impl);
  fiber.impl = nullptr;
}

#endif

}  // namespace xp::detail
