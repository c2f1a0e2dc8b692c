// The CUDA backend's kernel cache (kernel_cache.hpp).
#include "backend/cuda/kernel_cache.hpp"

#include <map>

#include "backend/cuda/random_source.hpp"
#include "backend/cuda/sort_source.hpp"
#include "jit/generated.hpp"

namespace xp::detail::cuda {

const char* generator_name(Generator g) noexcept {
  switch (g) {
    case Generator::fused:
      return "fused";
    case Generator::reduce:
      return "reduce";
    case Generator::scan:
      return "scan";
    case Generator::take:
      return "take";
    case Generator::random:
      return "random";
    case Generator::matmul_loop:
      return "matmul_loop";
    case Generator::sort:
      return "sort";
  }
  return "?";
}

namespace {

// What NVRTC is given besides the source: the name it reports in messages, --fmad=false and the
// other options of the elementwise kernels, and the random kernels' Philox header.
ProgramOptions options_of(Generator g) {
  ProgramOptions o;
  switch (g) {
    case Generator::fused:
      o.name = "xp_fused.cu";
      break;
    case Generator::reduce:
    case Generator::scan:
    case Generator::take:
      o.name = "xp_reduce.cu";
      break;
    case Generator::random:
      o.name = "xp_random.cu";
      o.headers = {philox_header()};
      break;
    case Generator::matmul_loop:
      o.name = "xp_matmul_loop.cu";
      break;
    case Generator::sort:
      o.name = "xp_sort.cu";
      break;
  }
  o.options = nvrtc_options();
  return o;
}

// The kernel that names a program of several kernels in the caches below (every program of the
// generator has it): the others are found in its module. nullptr: one kernel per program.
const char* anchor_kernel(Generator g) noexcept {
  switch (g) {
    case Generator::reduce:
      return "xp_finish";  // reduce_finish_name(): every reduction program has it
    case Generator::scan:
      return "xp_scan_lines";  // both scan kernels are in every scan program
    case Generator::sort:
      return "xp_sort_scatter";  // every sort program has all its kernels
    default:
      return nullptr;
  }
}

}  // namespace

const Kernel& KernelCache::kernel(Generator g, std::string_view key, std::string_view name,
                                  const std::function<std::string()>& make_source) {
  // The map's key: the generator, the generator's key and the kernel's name, built in a buffer of
  // the thread's so that a hit allocates nothing.
  thread_local std::string full;
  full.clear();
  full += static_cast<char>('0' + static_cast<int>(g));
  full += key;
  full += '\n';
  full += name;
  Entry* e = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kernels_.find(full);
    if (it == kernels_.end()) it = kernels_.emplace(full, std::make_unique<Entry>()).first;
    e = it->second.get();  // entries are never removed: the pointer stays valid
  }
  if (e->ready.load(std::memory_order_acquire)) return e->kernel;
  std::lock_guard<std::mutex> lock(e->mutex);
  if (!e->ready.load(std::memory_order_relaxed)) {
    // A program of several kernels is found (or compiled) once, by its anchor kernel, and its other
    // kernels taken from the same module: one entry per program in the memory and disk caches.
    const char* anchor = anchor_kernel(g);
    if (anchor != nullptr && name != anchor) {
      const std::string k(key), n(name);  // `full` is the thread's, and the anchor's lookup reuses it
      const Kernel& a = kernel(g, k, anchor, make_source);
      e->kernel = detail::generated_sibling(a, n, options_of(g));
    } else {
      e->kernel = detail::generated_kernel(std::string(key), make_source, options_of(g), name, device_);
    }
    e->ready.store(true, std::memory_order_release);
  }
  return e->kernel;
}

std::string KernelCache::signature(const FusedProgram& p, const Variant& v) {
  std::string sig;
  sig.reserve(64);
  sig += static_cast<char>(v.layout);
  sig += static_cast<char>(v.vector);
  sig += static_cast<char>(v.index64);
  for (const Instr& i : p.code) {
    sig += static_cast<char>(i.op);
    sig += static_cast<char>(i.dtype);
    for (std::int32_t a : {i.a, i.b, i.c}) sig.append(reinterpret_cast<const char*>(&a), sizeof a);
  }
  for (const View& in : p.inputs) {
    sig += static_cast<char>(in.dtype);
    // As the generator reads the input: a C-contiguous size-1 view is an array, a broadcast one a
    // scalar. (Keyed on zero strides alone, the two shared a kernel and a broadcast input was read
    // as an array past its one element.)
    sig += static_cast<char>(scalar_input(in, v.layout));
  }
  for (const View& out : p.outputs) sig += static_cast<char>(out.dtype);
  for (std::int32_t o : p.output_instr) sig.append(reinterpret_cast<const char*>(&o), sizeof o);
  return sig;
}

// Describing a program is cheap next to compiling, but not next to a launch: programs of one
// structure are described once. Without the source (generate_key): kernel() has it written only
// when no cache has the kernel.
const Generated& KernelCache::fused(const FusedProgram& p, const Variant& v) {
  const std::string sig = signature(p, v);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = fused_.find(sig);
  if (it == fused_.end()) it = fused_.emplace(sig, generate_key(p, v)).first;
  return it->second;
}

const GeneratedValue& KernelCache::fused_value(const FusedProgram& p) {
  const std::string sig = signature(p, Variant{});
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = fused_values_.find(sig);
  if (it == fused_values_.end()) it = fused_values_.emplace(sig, generate_value(p)).first;
  return it->second;
}

int KernelCache::max_active_blocks(const Kernel& k, int block) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = occupancy_.find(k.handle());
    if (it != occupancy_.end()) return it->second;
  }
  const int blocks = k.max_active_blocks(block);
  std::lock_guard<std::mutex> lock(mutex_);
  occupancy_[k.handle()] = blocks;
  return blocks;
}

KernelCache& kernel_cache(const Device& device) {
  static std::mutex m;
  static auto* caches = new std::map<int, KernelCache*>();  // never destroyed
  std::lock_guard<std::mutex> lock(m);
  auto it = caches->find(device.index());
  if (it == caches->end()) it = caches->emplace(device.index(), new KernelCache(device)).first;
  return *it->second;
}

}  // namespace xp::detail::cuda
