// Fibers for CPU kernels (fiber.hpp).
#include "jit/fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace xp::detail {

namespace {
std::size_t page_bytes() {
  static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return p;
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

// Saves rbp, rbx, r12-r15, MXCSR and the x87 control word on the running stack, stores the stack
// pointer in *save_sp, and restores the same from new_sp. A new fiber's first switch "returns" into
// xp_fiber_start, which calls r12(r13) with the stack 16-byte aligned.
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
    "  subq $8, %rsp\n"
    "  stmxcsr (%rsp)\n"
    "  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n"
    "  fldcw 4(%rsp)\n"
    "  addq $8, %rsp\n"
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

void prepare_fiber(FiberContext& fiber, void* stack, void (*entry)(void*), void* arg) {
  auto top = reinterpret_cast<std::uintptr_t>(static_cast<char*>(stack) + kFiberStackBytes) & ~std::uintptr_t{15};
  auto* sp = reinterpret_cast<std::uint64_t*>(top - 80);  // 16-byte aligned; 8 words used
  sp[0] = 0x037f00001f80ull;                              // MXCSR 0x1f80, x87 control word 0x037f: the defaults
  sp[1] = 0;                                              // r15
  sp[2] = 0;                                              // r14
  sp[3] = reinterpret_cast<std::uint64_t>(arg);           // r13
  sp[4] = reinterpret_cast<std::uint64_t>(entry);         // r12
  sp[5] = 0;                                              // rbx
  sp[6] = 0;                                              // rbp
  sp[7] = reinterpret_cast<std::uint64_t>(&xp_fiber_start);
  fiber.sp = sp;
}

void switch_fiber(FiberContext& from, FiberContext& to) {
  xp_fiber_switch(&from.sp, to.sp);
}

void release_fiber(FiberContext&) {}

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

void prepare_fiber(FiberContext& fiber, void* stack, void (*entry)(void*), void* arg) {
  auto* uc = static_cast<ucontext_t*>(fiber.impl);
  if (uc == nullptr) {
    uc = new ucontext_t();
    fiber.impl = uc;
  }
  // The start record sits at the stack's bottom, above the guard page.
  auto* s = static_cast<Start*>(stack);
  s->entry = entry;
  s->arg = arg;
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
  swapcontext(static_cast<ucontext_t*>(from.impl), static_cast<ucontext_t*>(to.impl));
}

void release_fiber(FiberContext& fiber) {
  delete static_cast<ucontext_t*>(fiber.impl);
  fiber.impl = nullptr;
}

#endif

}  // namespace xp::detail
