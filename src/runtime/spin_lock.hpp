#pragma once

// A lock for critical sections of a few dozen instructions (a free list, a list of readers). Taking
// it is one atomic exchange and releasing it a plain store, where std::mutex costs two atomic
// read-modify-writes; a small evaluation takes such locks several times, and on some machines each
// atomic costs tens of nanoseconds. A waiter spins briefly, then yields its core (a holder that the
// OS has descheduled is not spun on for a whole time slice). Not recursive. Meets Lockable, so
// std::lock_guard works.

#include <atomic>
#include <thread>

namespace xp::detail {

class SpinLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept {
    locked_.store(false, std::memory_order_release);
  }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace xp::detail
