/* The interface between xp's CPU kernel engine (src/jit/cpu_engine.cpp) and a CUDA C++ program
   compiled for the CPU (the prelude, xp_cpu_prelude.h, and the entry points xp generates after the
   program's source). Plain C, so that both sides agree on it whatever compiler built them; a
   change of layout changes XP_CPU_ABI_VERSION, which the engine checks when it loads a program. */
#ifndef XP_CPU_ABI_H
#define XP_CPU_ABI_H

#define XP_CPU_ABI_VERSION 4u

/* A symbol that a program defines when some function of it may synchronise (the prelude's
   synchronising calls emit it): without it the engine runs a block's threads with
   XP_CPU_ALL_THREADS. */
#define XP_CPU_SYNC_SYMBOL "xp_cpu_synchronises"
#define XP_CPU_ALL_THREADS (-2)

/* The section where each synchronising call of the final code leaves its address (a 32-bit offset
   from the entry to the call), and the function of the program that returns its entries (begin,
   count): the engine runs with XP_CPU_ALL_THREADS each kernel whose code (its function, its entry
   point) holds none of them, unless one lies outside every kernel's code. */
#define XP_CPU_SYNC_SITES_SECTION "xp_cpu_sync_sites"
typedef unsigned (*xp_cpu_sync_sites_fn)(const int** begin);
#define XP_CPU_SYNC_SITES_SYMBOL "xp_cpu_sync_site_table"

#ifdef __cplusplus
extern "C" {
#endif

/* What a running kernel asks of the engine. `engine` is the block's, from xp_cpu_block; `thread`
   the caller's linear index in the block (x fastest). The calls that synchronise (barrier,
   warp_sync, shfl, vote) suspend the caller until the threads they wait for arrive. The first such
   call of a block turns its remaining threads into fibers (the block's `fibers` becomes 1). */
struct xp_cpu_engine_api {
  unsigned version;
  /* __syncthreads (op 0) and __syncthreads_count (1), _and (2), _or (3): the block's answer. */
  int (*barrier)(void* engine, unsigned thread, int op, int predicate);
  /* __syncwarp(mask) */
  void (*warp_sync)(void* engine, unsigned thread, unsigned mask);
  /* __shfl_sync (kind 0), _up (1), _down (2), _xor (3) of a value of at most 8 bytes. */
  unsigned long long (*shfl)(void* engine, unsigned thread, int kind, unsigned mask, unsigned long long value, int lane,
                             int width);
  /* __ballot_sync (kind 0), __any_sync (1), __all_sync (2) */
  unsigned (*vote)(void* engine, unsigned thread, int kind, unsigned mask, int predicate);
  /* __activemask: the lanes of the caller's warp that have not exited */
  unsigned (*active_mask)(void* engine, unsigned thread);
  /* The thread stops: a failed assert, __trap, an exception (message may be null when the engine
     already knows why). */
  void (*fail)(void* engine, const char* message);
};

/* One block of a launch, as the engine gives it to an entry point. */
struct xp_cpu_block {
  unsigned grid[3];
  unsigned block[3];
  unsigned block_index[3];
  void* dynamic_shared; /* LaunchConfig::shared_bytes of this block's own memory, 16-byte aligned */
  void* engine;
  const struct xp_cpu_engine_api* api;
  /* Set by the engine when a thread first synchronises: the loop over the block's threads then
     stops after the current one, whose later threads run as fibers. */
  int fibers;
};

/* Runs thread `thread` (linear, x fastest) of the block; when thread is -1, its threads one
   after another until one synchronises (then the engine runs the others as fibers); when it is
   XP_CPU_ALL_THREADS, its threads one after another with no check between them (for a program
   that never synchronises). args: one pointer per parameter, as for cuLaunchKernel. */
typedef void (*xp_cpu_entry)(void** args, const struct xp_cpu_block* block, int thread);

struct xp_cpu_kernel_info {
  const char* name; /* the __global__ function's name, or the name expression */
  xp_cpu_entry entry;
  const void* function; /* the __global__ function itself */
  unsigned param_count;
  const unsigned long long* param_sizes;
};

/* Every program exports this: its kernels (count of them) and the ABI version it was built for. */
typedef const struct xp_cpu_kernel_info* (*xp_cpu_kernels_fn)(unsigned* count, unsigned* abi_version);
#define XP_CPU_KERNELS_SYMBOL "xp_cpu_kernels"

/* Every program exports this too: it makes the program's thread-local storage (the built-ins,
   __shared__ variables) on the calling thread. The engine calls it on each worker before the
   worker's first block of a launch, so that no kernel code meets the loader's slow path of a first
   TLS access (see the prelude). */
typedef void (*xp_cpu_prepare_thread_fn)(void);
#define XP_CPU_PREPARE_THREAD_SYMBOL "xp_cpu_prepare_thread"

#ifdef __cplusplus
}
#endif

#endif
