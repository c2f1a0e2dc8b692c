#pragma once

#include <cstdint>

#include "xp/device.hpp"
#include "xp/export.hpp"

namespace xp {

// What a device's allocator holds. Arrays get memory in blocks rounded up to the allocator's sizes
// (on a GPU: powers of two from 512 bytes, 2 MiB multiples from 1 GiB); a freed block is kept for
// the next array of its size ("cached") until free_all() or an allocation that needs the room.
//
// On a GPU, XP_GPU_MEMORY_LIMIT caps in use + cached bytes: an allocation that would pass it first
// frees the cached blocks, then throws OutOfMemory with the bytes requested, the bytes left under
// the limit and the limit. The cuBLAS workspace (matmul) comes from the same allocator and counts.
//
// On the CPU: in use counts xp's array blocks (host memory), cached the freed blocks kept for
// reuse (small blocks up to 64 MiB in all, big ones up to 1 GiB); there is no limit.
struct MemoryStats {
  std::uint64_t bytes_in_use = 0;       // blocks held by arrays (and xp's own scratch)
  std::uint64_t bytes_cached = 0;       // freed blocks kept for reuse
  std::uint64_t peak_bytes_in_use = 0;  // since the process started or reset_peak()
  std::uint64_t allocations = 0;        // blocks handed out since the process started (reuse included)
  std::uint64_t limit = 0;              // XP_GPU_MEMORY_LIMIT in bytes for this device; 0: none
};

// The device's statistics. Throws DeviceUnavailable for a CUDA device this process cannot use.
XP_API MemoryStats memory_stats(const Device& device);

// Returns all the device's cached blocks to the system (the driver, for a GPU), after the work
// queued on them has finished (xp's default stream of the device, and the stream each block was
// last used on); as CuPy's MemoryPool.free_all_blocks. Blocks in use are untouched.
XP_API void free_all(const Device& device);

// Sets the peak to the bytes in use now.
XP_API void reset_peak(const Device& device);

}  // namespace xp
