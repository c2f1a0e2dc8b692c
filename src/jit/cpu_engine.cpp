// The CPU kernel engine (cpu_engine.hpp). A block runs on one worker thread from start to end.
// Without synchronisation its threads are one loop inside the compiled program (no engine call per
// thread). With it, each thread is a fiber and the block's scheduler, on the worker's own stack,
// runs every ready fiber until it waits (a barrier, a warp function) or ends, then releases the
// waits that are complete, until all have ended. Warp functions exchange values through one slot
// per thread, with a warp barrier before the read and another after it.
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

// Thrown by an engine call the running mode cannot serve; the entry point catches it.
struct Stop {};

// The engine object a block's entry point gets; fibers says which of the two it is.
struct Engine {
  bool fibers = false;
  LaunchState* launch = nullptr;
  const CpuKernelDef* kernel = nullptr;
  std::string where() const { return kernel->name + " (" + kernel->program + ")"; }
};

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

struct FiberBlock : Engine {
  xp_cpu_entry entry = nullptr;
  void** args = nullptr;
  const xp_cpu_block* block = nullptr;
  int n = 0;
  int current = 0;
  int live = 0;
  int at_barrier = 0;
  int result_count = 0, result_and = 0, result_or = 0;
  bool stopped = false;
  FiberContext main;
  std::vector<Thread> threads;
  std::vector<unsigned> warp_live;

  static void fiber_main(void* p) {
    auto* b = static_cast<FiberBlock*>(p);
    const int i = b->current;
    b->entry(b->args, b->block, i);  // catches everything itself
    b->threads[static_cast<std::size_t>(i)].state = State::done;
    --b->live;
    b->warp_live[static_cast<std::size_t>(i / 32)] &= ~(1u << (i % 32));
    switch_fiber(b->threads[static_cast<std::size_t>(i)].context, b->main);
    std::abort();  // never resumed
  }

  // The caller waits in `state` until the scheduler releases it.
  void wait(State s) {
    Thread& t = threads[static_cast<std::size_t>(current)];
    t.state = s;
    switch_fiber(t.context, main);
  }
  void warp_wait(unsigned mask) {
    threads[static_cast<std::size_t>(current)].mask = mask;
    wait(State::warp);
  }

  // Releases the waits that are complete; false when none was.
  bool release() {
    bool any = false;
    if (at_barrier > 0 && at_barrier == live) {
      result_count = 0;
      result_and = 1;
      result_or = 0;
      for (Thread& t : threads)
        if (t.state == State::barrier) {
          result_count += t.predicate;
          result_and &= t.predicate;
          result_or |= t.predicate;
          t.state = State::ready;
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
        Thread& t = threads[i];
        if (t.state == State::warp && (t.mask & warp_live[w] & ~arrived) == 0) {
          t.state = State::ready;
          any = true;
        }
      }
    }
    return any;
  }

  void run(LaunchState& launch_state) {
    for (int i = 0; i < n; ++i) {
      Thread& t = threads[static_cast<std::size_t>(i)];
      t.state = State::ready;
      prepare_fiber(t.context, t_memory.stacks[static_cast<std::size_t>(i)], &FiberBlock::fiber_main, this);
    }
    live = n;
    at_barrier = 0;
    for (std::size_t w = 0; w < warp_live.size(); ++w) {
      const int lanes = std::min(32, n - static_cast<int>(w) * 32);
      warp_live[w] = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1);
    }
    for (;;) {
      bool ran = false;
      for (int i = 0; i < n && !stopped; ++i) {
        if (threads[static_cast<std::size_t>(i)].state != State::ready) continue;
        current = i;
        ran = true;
        switch_fiber(main, threads[static_cast<std::size_t>(i)].context);
      }
      if (stopped || live == 0) return;
      if (!release() && !ran) {
        std::string waits;
        int shown = 0;
        for (int i = 0; i < n && shown < 4; ++i) {
          const Thread& t = threads[static_cast<std::size_t>(i)];
          if (t.state == State::done) continue;
          waits += std::string(shown++ ? ", " : "") + "thread " + std::to_string(i) +
                   (t.state == State::barrier ? " at __syncthreads" : " at a warp function");
        }
        launch_state.fail(where() + ": the threads of block (" + std::to_string(block->block_index[0]) + ", " +
                          std::to_string(block->block_index[1]) + ", " + std::to_string(block->block_index[2]) +
                          ") wait for each other for ever (" + waits +
                          "...): a barrier that not every thread reaches, or a warp mask naming a thread that waits "
                          "elsewhere");
        return;
      }
    }
  }
};

FiberBlock& fibers_of(void* engine, const char* what) {
  auto* e = static_cast<Engine*>(engine);
  if (!e->fibers) {
    e->launch->fail(e->where() + " called " + what +
                    ", which xp did not find in its source or in-memory headers; the program's threads therefore "
                    "ran without the fibers that synchronisation needs. Call it in the program's own text (or in a "
                    "ProgramOptions header)");
    throw Stop{};
  }
  return *static_cast<FiberBlock*>(e);
}

int api_barrier(void* engine, int op, int predicate) {
  FiberBlock& b = fibers_of(engine, "__syncthreads");
  b.threads[static_cast<std::size_t>(b.current)].predicate = predicate;
  ++b.at_barrier;
  b.wait(State::barrier);
  return op == 1 ? b.result_count : op == 2 ? b.result_and : op == 3 ? b.result_or : 0;
}

void api_warp_sync(void* engine, unsigned mask) {
  fibers_of(engine, "__syncwarp").warp_wait(mask);
}

unsigned long long api_shfl(void* engine, int kind, unsigned mask, unsigned long long value, int arg, int width) {
  FiberBlock& b = fibers_of(engine, "a __shfl function");
  const int i = b.current;
  b.threads[static_cast<std::size_t>(i)].slot = value;
  b.warp_wait(mask);
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
  b.warp_wait(mask);
  return r;
}

unsigned api_vote(void* engine, int kind, unsigned mask, int predicate) {
  FiberBlock& b = fibers_of(engine, "a warp vote function");
  const int i = b.current;
  b.threads[static_cast<std::size_t>(i)].predicate = predicate;
  b.warp_wait(mask);
  const int base = i - i % 32;
  const unsigned live = b.warp_live[static_cast<std::size_t>(i / 32)] | (1u << (i % 32));
  unsigned ballot = 0;
  for (int l = 0; l < 32 && base + l < b.n; ++l)
    if ((mask & live & (1u << l)) != 0 && b.threads[static_cast<std::size_t>(base + l)].predicate != 0)
      ballot |= 1u << l;
  b.warp_wait(mask);
  if (kind == 0) return ballot;
  if (kind == 1) return ballot != 0 ? 1u : 0u;
  return ballot == (mask & live) ? 1u : 0u;
}

unsigned api_active_mask(void* engine) {
  FiberBlock& b = fibers_of(engine, "__activemask");
  return b.warp_live[static_cast<std::size_t>(b.current / 32)];
}

void api_fail(void* engine, const char* message) {
  auto* e = static_cast<Engine*>(engine);
  if (message != nullptr)
    e->launch->fail(e->where() + ": " + message);
  else
    e->launch->fail(e->where() + ": a thread stopped with an exception");
  if (e->fibers) static_cast<FiberBlock*>(e)->stopped = true;
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
  const std::int64_t grain = std::max<std::int64_t>(1, 16384 / static_cast<std::int64_t>(threads));
  parallel_for(blocks, grain, [&](std::int64_t first, std::int64_t last) {
    WorkerMemory& mem = t_memory;
    xp_cpu_block blk{};
    blk.grid[0] = g.x;
    blk.grid[1] = g.y;
    blk.grid[2] = g.z;
    blk.block[0] = b.x;
    blk.block[1] = b.y;
    blk.block[2] = b.z;
    blk.dynamic_shared = mem.dynamic_shared(c.shared_bytes);
    blk.api = &kApi;
    Engine plain;
    plain.launch = &state;
    plain.kernel = &k;
    std::unique_ptr<FiberBlock> fb;
    if (k.fibers) {
      if (!mem.reserve_stacks(threads)) {
        state.fail(k.name + ": no memory for " + std::to_string(threads) + " fiber stacks");
        return;
      }
      fb = std::make_unique<FiberBlock>();
      fb->fibers = true;
      fb->launch = &state;
      fb->kernel = &k;
      fb->entry = k.entry;
      fb->args = args;
      fb->block = &blk;
      fb->n = static_cast<int>(threads);
      fb->threads.resize(threads);
      fb->warp_live.resize((threads + 31) / 32);
      blk.engine = fb.get();
    } else {
      blk.engine = &plain;
    }
    for (std::int64_t i = first; i < last; ++i) {
      if (state.failed.load(std::memory_order_relaxed)) return;
      blk.block_index[0] = static_cast<unsigned>(i % g.x);
      blk.block_index[1] = static_cast<unsigned>((i / g.x) % g.y);
      blk.block_index[2] = static_cast<unsigned>(i / (static_cast<std::int64_t>(g.x) * g.y));
      if (fb) {
        fb->stopped = false;
        fb->run(state);
      } else {
        k.entry(args, &blk, -1);
      }
    }
    if (fb)
      for (Thread& t : fb->threads) release_fiber(t.context);
  });
  if (state.failed.load()) throw Error("kernel " + state.error);
}

}  // namespace xp::detail
