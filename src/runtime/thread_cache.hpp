#pragma once

// Per-thread scratch state that hot paths reach in a few instructions. A plain `thread_local`
// object in a shared library goes through __tls_get_addr on every access; here each type gets one
// initial-exec thread-local pointer (8 bytes of static TLS), set at a thread's first use to an object
// that a pthread key destroys when the thread exits.

#include <pthread.h>

namespace xp::detail {

template <class T>
T& thread_cache() {
  static thread_local T* ptr __attribute__((tls_model("initial-exec"))) = nullptr;
  if (__builtin_expect(ptr != nullptr, 1)) return *ptr;
  static pthread_key_t key;
  static const int made = pthread_key_create(&key, [](void* p) { delete static_cast<T*>(p); });
  (void)made;
  ptr = new T();
  pthread_setspecific(key, ptr);
  return *ptr;
}

}  // namespace xp::detail
