#pragma once

// The fake CUDA driver (fake_cuda.cpp) as xp loaded it, for tests that read its state: dlopen of
// the same path gives the same copy, with its thread-local current context and its counters.
#include <dlfcn.h>

namespace xp_test {

class FakeDriverHandle {
 public:
  FakeDriverHandle() : handle_(dlopen(XP_FAKE_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL)) {}
  ~FakeDriverHandle() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  FakeDriverHandle(const FakeDriverHandle&) = delete;
  FakeDriverHandle& operator=(const FakeDriverHandle&) = delete;

  bool ok() const { return handle_ != nullptr; }
  // An entry point of the fake (a driver function or one of its xp_fake_cuda_* extras); null if absent.
  template <class F>
  F fn(const char* name) const {
    return handle_ != nullptr ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
  }
  // One of the fake's counters (xp_fake_cuda_modules_loaded, ...); -1 when it has no such counter.
  long count(const char* name) const {
    const auto f = fn<long (*)()>(name);
    return f != nullptr ? f() : -1;
  }
  long modules_loaded() const { return count("xp_fake_cuda_modules_loaded"); }
  long launches() const { return count("xp_fake_cuda_launches"); }

 private:
  void* handle_;
};

}  // namespace xp_test
