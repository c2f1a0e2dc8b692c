// The CPU kernel engine (cpu_engine.hpp). A block runs on one worker thread from start to end, as
// the program's own loop over its threads; when a thread first synchronises, the others become
// fibers (see Block). The scheduler runs every ready fiber until it waits (a barrier, a warp
// function) or ends, then releases the waits that are complete. Warp functions exchange values
// through one slot per thread, with a warp barrier before the read and another after it.
#include "jit/cpu_engine.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "jit/fiber.hpp"
#include "runtime/parallel.hpp"

namespace xp::detail {

namespace {

std::string dims(const Dim3& d) {
  std::string s(1, '(');
  s.append(std::to_string(d.x)).append(", ").append(std::to_string(d.y)).append(", ");
  return s.append(std::to_string(d.z)).append(")");
}

[[noreturn]] void bad_launch(const CpuKernelDef& k, const std::string& what) {
  throw ValueError("launch of " + k.name + " on cpu: " + what);
}

// What every block of a launch shares: the first failure.
struct LaunchState {
  std::atomic<bool> failed{false};
  std::mutex m;
  std::string error;
  void fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(m);
    if (error.empty()) error = why;
    failed.store(true, std::memory_order_release);
  }
};

// Thrown by an engine call to stop the calling thread (the launch failed); the entry point catches it.
struct Stop {};

enum class State : unsigned char { ready, barrier, warp, done };

struct Thread {
  FiberContext context;
  State state = State::ready;
  int predicate = 0;
  unsigned mask = 0;
  unsigned long long slot = 0;
};

// A worker's fiber stacks, kept for its later blocks, and its dynamic shared memory.
struct WorkerMemory {
  std::vector<void*> stacks;
  void* shared = nullptr;
  std::size_t shared_bytes = 0;
  ~WorkerMemory() {
    for (void* s : stacks) free_fiber_stack(s);
    std::free(shared);
  }
  void* dynamic_shared(std::size_t bytes) {
    if (shared == nullptr || bytes > shared_bytes) {
      const std::size_t size = (std::max<std::size_t>(bytes, 1024) + 63) / 64 * 64;
      void* p = std::aligned_alloc(64, size);
      if (p == nullptr) throw Error("no memory for " + std::to_string(bytes) + " bytes of dynamic shared memory");
      std::free(shared);
      shared = p;
      shared_bytes = size;
    }
    return shared;
  }
  bool reserve_stacks(std::size_t n) {
    while (stacks.size() < n) {
      void* s = new_fiber_stack();
      if (s == nullptr) return false;
      stacks.push_back(s);
    }
    return true;
  }
};
thread_local WorkerMemory t_memory;

// One worker's blocks of a launch, one at a time. A block starts as the program's plain loop over
// its threads, on the worker's own stack. The first thread that synchronises (`native`) stays
// there: the engine makes fibers of the threads after it (those before it have ended, as threads
// that exit before a barrier do on a GPU) and, while `native` waits, runs them from inside its call
// until the wait is released. When `native` ends, the loop returns and the engine runs the fibers
// to their end. A block that never synchronises makes no fiber and calls no engine function.
struct Block {
  LaunchState* launch = nullptr;
  const CpuKernelDef* kernel = nullptr;
  void** args = nullptr;
  xp_cpu_block* block = nullptr;
  int n = 0;
  bool fibers = false;
  bool stopped = false;
  int native = -1;
  int starting = 0;  // the fiber that is starting (fiber_main reads it)
  int live = 0;
  int at_barrier = 0;
  int result_count = 0, result_and = 0, result_or = 0;
  FiberContext main;
  std::vector<Thread> threads;
  std::vector<unsigned> warp_live;

  std::string where() const {
    return kernel->name + " (" + kernel->program + "), block (" + std::to_string(block->block_index[0]) + ", " +
           std::to_string(block->block_index[1]) + ", " + std::to_string(block->block_index[2]) + ")";
  }

  void fail(const std::string& why) {
    launch->fail(why);
    stopped = true;
  }

  void run_block() {
    fibers = false;
    stopped = false;
    native = -1;
    block->fibers = 0;
    kernel->entry(args, block, kernel->synchronises ? -1 : XP_CPU_ALL_THREADS);
    if (!fibers || stopped) return;
    if (native >= 0) end_thread(native);  // it returned from the kernel
    native = -1;
    schedule([this] { return live == 0; });
  }

  // The first synchronising call of the block, from thread t (on the worker's own stack).
  void start_fibers(int t) {
    if (!t_memory.reserve_stacks(static_cast<std::size_t>(n))) {
      fail(kernel->name + ": no memory for " + std::to_string(n) + " fiber stacks");
      throw Stop{};
    }
    fibers = true;
    block->fibers = 1;
    native = t;
    threads.resize(static_cast<std::size_t>(n));
    warp_live.assign(static_cast<std::size_t>((n + 31) / 32), 0);
    live = 0;
    at_barrier = 0;
    for (int i = 0; i < n; ++i) {
      Thread& th = threads[static_cast<std::size_t>(i)];
      th.state = i < t ? State::done : State::ready;
      if (i < t) continue;
      ++live;
      warp_live[static_cast<std::size_t>(i / 32)] |= 1u << (i % 32);
      if (i > t)
        prepare_fiber(th.context, t_memory.stacks[static_cast<std::size_t>(i)], &Block::fiber_main, this,
                      static_cast<unsigned>(i));
    }
  }

  static void fiber_main(void* p) {
    auto* b = static_cast<Block*>(p);
    const int i = b->starting;
    b->kernel->entry(b->args, b->block, i);  // catches everything itself
    b->end_thread(i);
    b->leave(i);
    std::abort();  // never resumed
  }

  void end_thread(int i) {
    threads[static_cast<std::size_t>(i)].state = State::done;
    --live;
    warp_live[static_cast<std::size_t>(i / 32)] &= ~(1u << (i % 32));
  }

  // Runs the ready fibers and releases complete waits until `done` (true), or until nothing can
  // move (a deadlock: false, the launch failed) or the launch stopped (false).
  template <class Done>
  bool schedule(Done done) {
    for (;;) {
      if (done()) return true;
      bool ran = false;
      for (int i = 0; i < n && !stopped; ++i) {
        Thread& th = threads[static_cast<std::size_t>(i)];
        if (i == native || th.state != State::ready) continue;
        starting = i;
        ran = true;
        switch_fiber(main, th.context);
      }
      if (stopped) return false;
      if (!release() && !ran && !done()) {
        std::string waits;
        int shown = 0;
        for (int i = 0; i < n && shown < 4; ++i) {
          const Thread& th = threads[static_cast<std::size_t>(i)];
          if (th.state != State::barrier && th.state != State::warp) continue;
          waits += std::string(shown++ ? ", " : "") + "thread " + std::to_string(i) +
                   (th.state == State::barrier ? " at __syncthreads" : " at a warp function");
        }
        fail(where() + ": the block's threads wait for each other for ever (" + waits +
             "): a barrier that not every thread reaches, or a warp mask naming a thread that waits elsewhere");
        return false;
      }
    }
  }

  // Fiber i (waiting or ended) goes straight on to the next ready fiber of the scheduler's pass
  // (one switch instead of two), or back to the scheduler at the end of the pass.
  void leave(int i) {
    Thread& th = threads[static_cast<std::size_t>(i)];
    for (int j = i + 1; j < n && !stopped; ++j) {
      Thread& next = threads[static_cast<std::size_t>(j)];
      if (j == native || next.state != State::ready) continue;
      starting = j;
      switch_fiber(th.context, next.context);
      return;
    }
    switch_fiber(th.context, main);
  }

  // Thread i waits in state s until the scheduler releases it.
  void wait(int i, State s) {
    Thread& th = threads[static_cast<std::size_t>(i)];
    th.state = s;
    if (i == native) {
      if (!schedule([&th] { return th.state == State::ready; })) throw Stop{};
      return;
    }
    leave(i);
    if (stopped) throw Stop{};
  }

  // Releases the waits that are complete; false when none was.
  bool release() {
    bool any = false;
    if (at_barrier > 0 && at_barrier == live) {
      result_count = 0;
      result_and = 1;
      result_or = 0;
      for (Thread& th : threads)
        if (th.state == State::barrier) {
          result_count += th.predicate;
          result_and &= th.predicate;
          result_or |= th.predicate;
          th.state = State::ready;
        }
      at_barrier = 0;
      any = true;
    }
    for (std::size_t w = 0; w < warp_live.size(); ++w) {
      const std::size_t base = w * 32, end = std::min<std::size_t>(base + 32, threads.size());
      unsigned arrived = 0;
      for (std::size_t i = base; i < end; ++i)
        if (threads[i].state == State::warp) arrived |= 1u << (i - base);
      if (arrived == 0) continue;
      for (std::size_t i = base; i < end; ++i) {
        Thread& th = threads[i];
        if (th.state == State::warp && (th.mask & warp_live[w] & ~arrived) == 0) {
          th.state = State::ready;
          any = true;
        }
      }
    }
    return any;
  }

  Block& synchronising(unsigned thread) {
    if (stopped) throw Stop{};
    if (!kernel->synchronises) {  // no site of the prelude's in its code: a call that did not come from the prelude
      fail(where() + ": a thread synchronised, but the kernel was loaded as one that never does");
      throw Stop{};
    }
    if (!fibers) start_fibers(static_cast<int>(thread));
    return *this;
  }
};

int api_barrier(void* engine, unsigned thread, int op, int predicate) {
  Block& b = static_cast<Block*>(engine)->synchronising(thread);
  b.threads[thread].predicate = predicate;
  ++b.at_barrier;
  b.wait(static_cast<int>(thread), State::barrier);
  return op == 1 ? b.result_count : op == 2 ? b.result_and : op == 3 ? b.result_or : 0;
}

void api_warp_sync(void* engine, unsigned thread, unsigned mask) {
  Block& b = static_cast<Block*>(engine)->synchronising(thread);
  b.threads[thread].mask = mask;
  b.wait(static_cast<int>(thread), State::warp);
}

void warp_wait(Block& b, unsigned thread, unsigned mask) {
  b.threads[thread].mask = mask;
  b.wait(static_cast<int>(thread), State::warp);
}

unsigned long long api_shfl(void* engine, unsigned thread, int kind, unsigned mask, unsigned long long value, int arg,
                            int width) {
  Block& b = static_cast<Block*>(engine)->synchronising(thread);
  const int i = static_cast<int>(thread);
  b.threads[thread].slot = value;
  warp_wait(b, thread, mask);
  const int lane = i % 32, base = i - lane;
  const int w = (width >= 1 && width <= 32 && (width & (width - 1)) == 0) ? width : 32;
  const int first = lane & ~(w - 1);
  int src = lane;
  switch (kind) {
    case 0:
      src = first + (arg & (w - 1));
      break;
    case 1:
      src = lane - arg >= first ? lane - arg : lane;
      break;
    case 2:
      src = lane + arg < first + w ? lane + arg : lane;
      break;
    default:
      src = (lane ^ arg) < first + w ? (lane ^ arg) : lane;
      break;
  }
  const unsigned long long r =
      (src >= 0 && src < 32 && base + src < b.n) ? b.threads[static_cast<std::size_t>(base + src)].slot : value;
  warp_wait(b, thread, mask);
  return r;
}

unsigned api_vote(void* engine, unsigned thread, int kind, unsigned mask, int predicate) {
  Block& b = static_cast<Block*>(engine)->synchronising(thread);
  const int i = static_cast<int>(thread);
  b.threads[thread].predicate = predicate;
  warp_wait(b, thread, mask);
  const int base = i - i % 32;
  const unsigned live = b.warp_live[static_cast<std::size_t>(i / 32)] | (1u << (i % 32));
  unsigned ballot = 0;
  for (int l = 0; l < 32 && base + l < b.n; ++l)
    if ((mask & live & (1u << l)) != 0 && b.threads[static_cast<std::size_t>(base + l)].predicate != 0)
      ballot |= 1u << l;
  warp_wait(b, thread, mask);
  if (kind == 0) return ballot;
  if (kind == 1) return ballot != 0 ? 1u : 0u;
  return ballot == (mask & live) ? 1u : 0u;
}

unsigned api_active_mask(void* engine, unsigned thread) {
  Block& b = static_cast<Block*>(engine)->synchronising(thread);
  return b.warp_live[thread / 32];
}

void api_fail(void* engine, const char* message) {
  auto* b = static_cast<Block*>(engine);
  b->fail(message != nullptr ? b->where() + ": " + message : b->where() + ": a thread stopped with an exception");
}

const xp_cpu_engine_api kApi = {XP_CPU_ABI_VERSION, api_barrier,     api_warp_sync, api_shfl,
                                api_vote,           api_active_mask, api_fail};

}  // namespace

void cpu_launch(const CpuKernelDef& k, const LaunchConfig& c, void** args, const std::size_t* sizes,
                std::size_t count) {
  const Dim3& g = c.grid;
  const Dim3& b = c.block;
  if (g.x == 0 || g.y == 0 || g.z == 0) bad_launch(k, "grid " + dims(g) + " has a zero dimension");
  if (b.x == 0 || b.y == 0 || b.z == 0) bad_launch(k, "block " + dims(b) + " has a zero dimension");
  if (g.x > kCpuMaxGrid[0] || g.y > kCpuMaxGrid[1] || g.z > kCpuMaxGrid[2])
    bad_launch(
        k, "grid " + dims(g) + " exceeds the device's " + dims(Dim3(kCpuMaxGrid[0], kCpuMaxGrid[1], kCpuMaxGrid[2])));
  if (b.x > kCpuMaxBlock[0] || b.y > kCpuMaxBlock[1] || b.z > kCpuMaxBlock[2])
    bad_launch(k, "block " + dims(b) + " exceeds the device's " +
                      dims(Dim3(kCpuMaxBlock[0], kCpuMaxBlock[1], kCpuMaxBlock[2])));
  const unsigned long long threads = 1ull * b.x * b.y * b.z;
  if (threads > kCpuMaxThreads)
    bad_launch(
        k, std::to_string(threads) + " threads per block; the device allows at most " + std::to_string(kCpuMaxThreads));
  if (c.shared_bytes > kCpuMaxSharedBytes)
    bad_launch(k, std::to_string(c.shared_bytes) + " bytes of dynamic shared memory exceed the " +
                      std::to_string(kCpuMaxSharedBytes) + " per block that CPU kernels allow");
  if (c.stream.get() != nullptr)
    bad_launch(k, "a stream was given; a CPU kernel runs at once on the calling thread and xp's CPU threads");
  bool same = count == k.param_sizes.size();
  for (std::size_t i = 0; same && i < count; ++i) same = sizes[i] == k.param_sizes[i];
  if (!same) {
    auto list = [](const std::size_t* s, std::size_t n) {
      std::string r;
      for (std::size_t i = 0; i < n; ++i) r += (i ? ", " : "") + std::to_string(s[i]);
      return r;
    };
    bad_launch(k, "the kernel takes " + std::to_string(k.param_sizes.size()) + " parameters of (" +
                      list(k.param_sizes.data(), k.param_sizes.size()) + ") bytes; the launch passed " +
                      std::to_string(count) + " of (" + list(sizes, count) + ")");
  }

  LaunchState state;
  const std::int64_t blocks = static_cast<std::int64_t>(g.x) * g.y * g.z;
  // Chunks of about 16384 CUDA threads, and at least four chunks per worker where the grid has
  // that many blocks (a grid of a few long blocks, as xp's own elementwise kernels launch on the
  // CPU, must not become one chunk on one worker).
  const std::int64_t per_worker = std::max<std::int64_t>(1, blocks / (4 * std::int64_t{num_threads()}));
  const std::int64_t grain =
      std::max<std::int64_t>(1, std::min<std::int64_t>(16384 / static_cast<std::int64_t>(threads), per_worker));
  parallel_for(blocks, grain, [&](std::int64_t first, std::int64_t last) {
    k.prepare_thread();  // the program's thread-local storage on this thread, before its code runs
    xp_cpu_block blk{};
    blk.grid[0] = g.x;
    blk.grid[1] = g.y;
    blk.grid[2] = g.z;
    blk.block[0] = b.x;
    blk.block[1] = b.y;
    blk.block[2] = b.z;
    blk.dynamic_shared = t_memory.dynamic_shared(c.shared_bytes);
    blk.api = &kApi;
    Block run;
    run.launch = &state;
    run.kernel = &k;
    run.args = args;
    run.block = &blk;
    run.n = static_cast<int>(threads);
    blk.engine = &run;
    for (std::int64_t i = first; i < last; ++i) {
      if (state.failed.load(std::memory_order_relaxed)) break;
      blk.block_index[0] = static_cast<unsigned>(i % g.x);
      blk.block_index[1] = static_cast<unsigned>((i / g.x) % g.y);
      blk.block_index[2] = static_cast<unsigned>(i / (static_cast<std::int64_t>(g.x) * g.y));
      run.run_block();
    }
    for (Thread& t : run.threads) release_fiber(t.context);
  });
  if (state.failed.load()) throw Error("kernel " + state.error);
}

}  // namespace xp::detail
