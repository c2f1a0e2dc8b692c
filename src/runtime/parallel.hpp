#pragma once

// xp's CPU threads, for every layer that splits host work (the CPU backend, the CUDA backend's
// staged copies): OpenMP, XP_NUM_THREADS wide (default the cores this process may run on,
// sched_getaffinity). Fork-safe: in a child forked after the parent started threads, work runs on
// the calling thread alone (libgomp's pool does not survive fork()).

#include <cstdint>
#include <type_traits>
#include <utility>

namespace xp::detail {

// A non-owning reference to a callable, for calls that must not allocate.
template <class Sig>
class FunctionRef;
template <class R, class... A>
class FunctionRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f) noexcept  // NOLINT: implicit by design
      : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, A... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<A>(a)...);
        }) {}
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

// The number of threads parallel_for uses (>= 1).
int num_threads() noexcept;
// Overrides XP_NUM_THREADS for this process (n >= 1); for tests and benchmarks.
void set_num_threads(int n) noexcept;

// Calls fn(begin, end) on disjoint chunks that cover [0, n), each at least `grain` long (except
// possibly the last), on up to num_threads() threads; inline when one chunk suffices. The chunking
// depends on n, grain and the thread count only; callers that need results independent of the
// thread count (reductions) must cut their work into fixed blocks themselves. The first exception
// thrown by fn is rethrown on the calling thread after all chunks finish.
void parallel_for(std::int64_t n, std::int64_t grain, FunctionRef<void(std::int64_t, std::int64_t)> fn);

// True while the calling thread runs inside parallel_for (nested calls then run inline).
bool in_parallel() noexcept;

}  // namespace xp::detail
