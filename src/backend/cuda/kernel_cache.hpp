#pragma once

// The CUDA backend's one cache of the kernels it generates (docs/design.md, "Caches"): every
// generator (fused elementwise programs, reductions, scans, take, random numbers, the integer
// matmul loop) finds its kernels here, by (generator, key, kernel name), per device. A hit costs one
// lookup and writes no source. A miss goes to jit/generated.hpp, which finds the kernel by the
// generator's key and the build ID of xp's code (memory, then the disk cache) and calls
// make_source only when no cache has it: a new process whose kernels are on disk writes and hashes
// no source for any generator. Thread-safe: two threads asking for one kernel compile it once,
// kernels of different keys compile at once.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "backend/cuda/ew_source.hpp"
#include "backend/ir.hpp"
#include "xp/device.hpp"
#include "xp/program.hpp"

namespace xp::detail::cuda {

// Who wrote a kernel's source: decides its ProgramOptions (the name NVRTC reports, the headers).
enum class Generator : std::uint8_t { fused, reduce, scan, take, random, matmul_loop, sort };
const char* generator_name(Generator g) noexcept;

class KernelCache {
 public:
  explicit KernelCache(Device device) : device_(device) {}
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The kernel `name` of the program that `key` names for generator g (equal keys of one generator
  // <=> identical source). make_source is called at most once per kernel, and only on a miss in
  // every cache; what it throws (or the compile's CompileError) reaches the caller, and a later
  // call tries again.
  const Kernel& kernel(Generator g, std::string_view key, std::string_view name,
                       const std::function<std::string()>& make_source);

  // The structural description of a fused program (ew_source.hpp, generate_key: the key, the
  // kernel's name, the argument's size, without the source), by a signature of the program's
  // structure (never sizes, strides, addresses or constant values); and likewise the description
  // of a fused value that reductions compute (generate_value).
  const Generated& fused(const FusedProgram& p, const Variant& v);
  const GeneratedValue& fused_value(const FusedProgram& p);

  // Blocks of `block` threads that kernel k keeps resident per multiprocessor, asked of the driver
  // once per kernel.
  int max_active_blocks(const Kernel& k, int block);

 private:
  struct Entry {
    std::mutex mutex;  // held while the kernel is made
    std::atomic<bool> ready{false};
    Kernel kernel;
  };
  static std::string signature(const FusedProgram& p, const Variant& v);

  Device device_;
  std::mutex mutex_;  // guards the maps, not the entries' kernels
  std::unordered_map<std::string, std::unique_ptr<Entry>> kernels_;
  std::unordered_map<std::string, Generated> fused_;
  std::unordered_map<std::string, GeneratedValue> fused_values_;
  std::unordered_map<const void*, int> occupancy_;  // by CUfunction
};

// The cache of `device`'s CUDA backend: created at the first call, never destroyed (kernels may be
// launched until the process exits).
KernelCache& kernel_cache(const Device& device);

}  // namespace xp::detail::cuda
