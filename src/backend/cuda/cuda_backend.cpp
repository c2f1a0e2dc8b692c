// The CUDA backend: device memory through a caching allocator (XP_GPU_MEMORY_LIMIT, statistics),
// copies through pinned staging buffers (staging.cpp), fused elementwise programs turned into CUDA
// source (ew_source.cpp), reductions and scans (reduce_plan.cpp, reduce_source.cpp) and Philox random
// numbers (random_source.cpp) and `take` (take_source.cpp) compiled by NVRTC, found through the
// device's kernel cache (kernel_cache.cpp),
// matmul through cuBLAS or xp's exact integer kernel (cublas.cpp, linalg.cpp), factorizations in
// cuSOLVER (cusolver.cpp) and transforms in cuFFT (cufft.cpp); all on the calling thread's
// current stream of the device (xp's default stream unless a StreamScope names another). The rare layouts the kernels
// do not take run on the host (the data goes to the CPU backend and back).

#include "backend/cuda/cuda_backend.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backend/cuda/cufft.hpp"
#include "backend/cuda/cusolver.hpp"
#include "backend/cuda/ew_source.hpp"
#include "backend/cuda/kernel_cache.hpp"
#include "backend/cuda/linalg.hpp"
#include "backend/cuda/random_source.hpp"
#include "backend/cuda/reduce_source.hpp"
#include "backend/cuda/sort_source.hpp"
#include "backend/cuda/staging.hpp"
#include "backend/cuda/take_source.hpp"
#include "jit/generated.hpp"
#include "memory/stats.hpp"
#include "runtime/current.hpp"
#include "runtime/driver.hpp"
#include "runtime/log.hpp"
#include "runtime/nvtx.hpp"
#include "xp/config.hpp"
#include "xp/error.hpp"
#include "xp/program.hpp"
#include "xp/stream.hpp"

namespace xp::detail::cuda {

namespace {

namespace cu = detail::cu;

// Freed blocks kept for reuse, by size class, each with the stream whose work last used it.
// A block freed on xp's default stream of the device carries no event: handed out again for work on
// that stream, stream order makes the reuse safe. A block last used on another stream carries an
// event recorded there when it was freed. Handed out for work on another stream than its own, that
// stream first waits on the device (never the host) for the block's event, or, for a block of the
// default stream, for an event recorded on the default stream then.
// Also the device's accounting: bytes in use (blocks handed out, by rounded size), cached, the peak,
// and XP_GPU_MEMORY_LIMIT over in use + cached.
class BlockCache {
 public:
  BlockCache(Device d, std::uint64_t limit) : device_(d), limit_(limit) {}

  static std::size_t rounded(std::size_t bytes) {
    if (bytes <= 512) return 512;
    if (bytes >= (std::size_t{1} << 30)) return (bytes + (std::size_t{1} << 21) - 1) & ~((std::size_t{1} << 21) - 1);
    std::size_t r = 512;
    while (r < bytes) r <<= 1;
    return r;
  }

  // A cached block of `size` for work on `stream` (its device current), ordered after its last use;
  // 0 when none is cached.
  cu::CUdeviceptr get(std::size_t size, cu::CUstream stream, cu::CUstream default_stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it == free_.end() || it->second.empty()) return 0;
    std::vector<Free>& v = it->second;
    // The most recently freed block of this stream, else the most recently freed one.
    std::size_t pick = v.size() - 1;
    for (std::size_t i = v.size(); i-- > 0;) {
      if (v[i].stream == stream) {
        pick = i;
        break;
      }
    }
    const Free f = v[pick];
    if (f.stream != stream) {
      const auto& api = api_for_use();
      cu::CUevent e = f.event;
      cu::CUresult r = cu::CUDA_SUCCESS;
      if (e == nullptr) {  // last used on the default stream: its work so far
        e = take_event();
        if (e == nullptr) return 0;
        r = api.cuEventRecord(e, default_stream);
      }
      if (r == cu::CUDA_SUCCESS) r = need(api.cuStreamWaitEvent, "cuStreamWaitEvent")(stream, e, 0);
      if (f.event == nullptr) spare_.push_back(e);
      check(r, "cuStreamWaitEvent");  // the block stays cached when the wait could not be made
    }
    if (f.event != nullptr) spare_.push_back(f.event);
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(pick));
    cached_ -= size;
    in_use(size);
    return f.ptr;
  }
  // Holds room for a new block of `size` under the limit; false when it does not fit.
  bool reserve(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!within_limit(in_use_ + reserved_, cached_, size, limit_)) return false;
    reserved_ += size;
    return true;
  }
  // The reserved block was allocated (commit) or not (cancel).
  void commit(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    reserved_ -= size;
    in_use(size);
  }
  // A block of `size` allocated without a reservation (a cache without a limit).
  void commit_new(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    in_use(size);
  }
  void cancel(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    reserved_ -= size;
  }
  // A block whose last user let go on this thread. Never throws: called by the last owner.
  void put(cu::CUdeviceptr p, std::size_t size) noexcept {
    Free f{p, nullptr, nullptr};
    const Stream* last = release_stream(device_);
    if (last != nullptr) f.stream = static_cast<cu::CUstream>(last->handle());
    std::lock_guard<std::mutex> lock(mutex_);
    const Stream* dflt = nullptr;
    try {
      dflt = &default_stream(device_);
    } catch (...) {
    }
    if (last != nullptr && dflt != nullptr && last->handle() != dflt->handle() && !forked_after_init()) {
      // Last used on another stream: an event there says when that work is done.
      const DriverApi* api = driver_api();
      cu::CUevent e = nullptr;
      bool recorded = false;
      try {
        make_current(device_.index());
        e = take_event();
        recorded = e != nullptr && api != nullptr && api->cuEventRecord != nullptr &&
                   api->cuEventRecord(e, f.stream) == cu::CUDA_SUCCESS;
      } catch (...) {
      }
      if (recorded) {
        f.event = e;
      } else {
        // No event (a broken context, a stream gone): the device's work finishes first.
        if (e != nullptr) spare_.push_back(e);
        if (api != nullptr && api->cuCtxSynchronize != nullptr) api->cuCtxSynchronize();
        f.stream = dflt != nullptr ? static_cast<cu::CUstream>(dflt->handle()) : nullptr;
      }
    } else if (dflt != nullptr) {
      f.stream = static_cast<cu::CUstream>(dflt->handle());
    }
    free_[size].push_back(f);
    cached_ += size;
    in_use_ -= size;
  }
  MemoryStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return MemoryStats{in_use_, cached_, peak_, allocations_, limit_};
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    peak_ = in_use_;
  }
  std::uint64_t limit() const noexcept { return limit_; }
  // Frees every cached block (before retrying an allocation that failed). The caller has
  // synchronized the default stream; blocks of other streams wait for their events.
  void release_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto* api = driver_api();
    for (auto& [size, v] : free_) {
      for (const Free& f : v) {
        if (f.event != nullptr && api != nullptr && api->cuEventSynchronize != nullptr) {
          api->cuEventSynchronize(f.event);
          spare_.push_back(f.event);
        }
        if (api != nullptr && api->cuMemFree != nullptr) api->cuMemFree(f.ptr);
      }
      v.clear();
    }
    cached_ = 0;
  }

 private:
  struct Free {
    cu::CUdeviceptr ptr;
    cu::CUstream stream;  // the stream of its last use
    cu::CUevent event;    // recorded there at the free; null for the default stream
  };
  void in_use(std::size_t size) {  // under mutex_
    in_use_ += size;
    peak_ = std::max(peak_, in_use_);
    ++allocations_;
  }
  // An event without timing (the device current), from the spares or new; null when none can be made.
  cu::CUevent take_event() noexcept {  // under mutex_
    if (!spare_.empty()) {
      cu::CUevent e = spare_.back();
      spare_.pop_back();
      return e;
    }
    const DriverApi* api = driver_api();
    cu::CUevent e = nullptr;
    if (api == nullptr || api->cuEventCreate == nullptr ||
        api->cuEventCreate(&e, cu::CU_EVENT_DISABLE_TIMING) != cu::CUDA_SUCCESS)
      return nullptr;
    return e;
  }

  Device device_;
  const std::uint64_t limit_;  // 0: none
  std::mutex mutex_;
  std::map<std::size_t, std::vector<Free>> free_;
  std::vector<cu::CUevent> spare_;  // events no block carries any more
  std::uint64_t cached_ = 0, in_use_ = 0, reserved_ = 0, peak_ = 0, allocations_ = 0;
};

// The NVTX range of a reduction (XP_NVTX): the array function's name.
const char* range_name(ReduceOp op) noexcept {
  static const std::array<std::string, std::size(kReduceOps)> names = [] {
    std::array<std::string, std::size(kReduceOps)> n;
    for (std::size_t i = 0; i < n.size(); ++i) n[i] = std::string("xp.") + reduce_op_name(kReduceOps[i]);
    return n;
  }();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (kReduceOps[i] == op) return names[i].c_str();
  return "xp.reduce";
}

// A strided view's bytes, mirrored on the host for the host fallbacks.
struct HostMirror {
  std::vector<std::byte> bytes;
  View view;
  std::int64_t lo = 0;  // byte offset of the lowest element from view.data
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(Device d) : CudaBackend(d, gpu_info(d)) {}
  // The multiprocessor count is kept from here: asking gpu_info again at a first launch would
  // also ask the driver for free memory (cuMemGetInfo, 20-30 us on an H200), which a launch does
  // not need.
  CudaBackend(Device d, const GpuInfo& info)
      : device_(d),
        cache_(new BlockCache(d, memory_limit_bytes(config().gpu_memory_limit, info.memory_total))),
        counters_(new BlockCache(d, 0)),
        staging_(new Staging(d)),
        kernels_(kernel_cache(d)),
        sm_count_(info.sm_count) {
    // The lookup's one-time set-up (build ID, NVRTC, the disk cache's folder) here, where the
    // context's creation already takes ~100 ms, rather than inside the device's first kernel; then
    // the recently used kernels of the disk cache loaded in the background (XP_PRELOAD_KERNELS).
    detail::start_kernel_preload(d);
  }

  const char* name() const noexcept override { return "cuda"; }
  bool uses_streams() const noexcept override { return true; }

  // XP_LOG=debug: the pool's events (a block from the driver, cached blocks freed).
  void log_pool(const char* what, std::size_t size) const {
    if (!log_enabled(LogLevel::debug)) return;
    const MemoryStats st = cache_->stats();
    log(LogLevel::debug, device_.str() + " memory pool: " + what + " " + std::to_string(size) + " bytes (in use " +
                             std::to_string(st.bytes_in_use) + ", cached " + std::to_string(st.bytes_cached) + ")");
  }

  Allocation allocate(std::size_t bytes) override {
    detail::activate_context(device_);
    const auto& api = api_for_use();
    const std::size_t size = BlockCache::rounded(bytes);
    cu::CUdeviceptr p = cache_->get(size, static_cast<cu::CUstream>(stream().handle()),
                                    static_cast<cu::CUstream>(default_stream(device_).handle()));
    if (p == 0) {
      const auto mem_alloc = need(api.cuMemAlloc, "cuMemAlloc");
      if (!cache_->reserve(size)) {
        // Past XP_GPU_MEMORY_LIMIT: cached blocks are freed and the room counted once more.
        default_stream(device_).synchronize();
        log_pool("past the memory limit: freeing the cached blocks for", size);
        cache_->release_all();
        if (!cache_->reserve(size)) {
          const MemoryStats s = cache_->stats();
          throw OutOfMemory(device_.str(), bytes, room_under_limit(s.bytes_in_use, s.bytes_cached, s.limit), s.limit,
                            size);
        }
      }
      cu::CUresult r = mem_alloc(&p, size);
      if (r == cu::CUDA_ERROR_OUT_OF_MEMORY) {
        // Cached blocks are freed and the allocation tried once more.
        try {
          default_stream(device_).synchronize();
        } catch (...) {
          cache_->cancel(size);
          throw;
        }
        log_pool("the driver is out of memory: freeing the cached blocks to retry", size);
        cache_->release_all();
        r = mem_alloc(&p, size);
      }
      if (r != cu::CUDA_SUCCESS) {
        cache_->cancel(size);
        if (r == cu::CUDA_ERROR_OUT_OF_MEMORY) {
          std::size_t free = 0, total = 0;
          api.cuMemGetInfo(&free, &total);
          throw OutOfMemory(device_.str(), bytes, free, cache_->limit(), size);
        }
        check(r, "cuMemAlloc");
      }
      cache_->commit(size);
      log_pool("new block from the driver:", size);
    }
    Allocation a;
    a.data = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(p));
    a.bytes = bytes;
    BlockCache* cache = cache_;
    a.owner = std::shared_ptr<void>(reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)),
                                    [cache, size](void* q) { cache->put(reinterpret_cast<std::uintptr_t>(q), size); });
    // The cache hands blocks out again only ordered after the stream that last used them (BlockCache),
    // and gives them back to the driver only after that stream's work is done.
    a.stream_ordered = true;
    return a;
  }

  void run_fused(const FusedProgram& p) override {
    const NvtxRange range("xp.elementwise");
    std::int64_t n = 1;
    for (int d = 0; d < p.ndim; ++d) n *= p.shape[d];
    if (n == 0) return;
    const Layout layout = layout_of(p);
    if (layout == Layout::strided && strided_ndim(p) > kMaxStridedDims) {
      run_fused_on_host(p);  // more strided dimensions than the kernels take: rare, exact, slow
      return;
    }
    const Variant variant = variant_of(p, layout);
    // The generated source and its kernel, by the program's structure (never its sizes).
    const Generated& g = kernels_.fused(p, variant);
    if (g.argument_bytes > kMaxArgumentBytes) {
      run_fused_on_host(p);  // strides of more views than one kernel argument holds: rare, exact, slow
      return;
    }
    const Kernel& k =
        kernels_.kernel(Generator::fused, g.key, g.kernel_name, [&] { return generate(p, variant).source; });
    thread_local std::vector<std::byte> args;
    pack_arguments(p, variant, n, args);
    void* arg = args.data();
    const std::size_t size = args.size();
    const LaunchShape shape = launch_shape(n, g, multiprocessors());
    LaunchConfig cfg;
    cfg.grid = {shape.grid, 1, 1};
    cfg.block = {shape.block, 1, 1};
    const Stream st = stream();
    cfg.stream = st;
    k.launch_packed(cfg, &arg, &size, 1);
  }

  // Reductions on the device (reduce_source.hpp): a first pass over (output, split) units whose
  // outputs of several splits are finished by the unit that stores their last state (the rows
  // classes) or by a finish pass over their states (columns). var and std too: one read.
  void reduce(ReduceOp op, const View& in, std::span<const int> axes, const View& out, double correction) override {
    const NvtxRange range(range_name(op));
    const ReducePlan plan = plan_reduce(op, in, axes, out, correction, multiprocessors());  // checks first
    if (plan.M == 0) return;
    if (!plan.on_device) {  // more merged axes than the kernels take, or misaligned data: exact, slow
      HostMirror hin = mirror(in, true), hout = mirror(out, true);
      cpu_backend().reduce(op, hin.view, axes, hout.view, correction);
      write_back(hout, out);
      return;
    }
    detail::activate_context(device_);
    const std::int64_t warps = resident_warps(plan, nullptr);
    launch_reduce(warps > 0 ? plan_reduce(op, in, axes, out, correction, multiprocessors(), warps) : plan, nullptr,
                  nullptr);
  }
  // A reduction of a fused value (contiguous or scalar inputs) in the reduction kernels themselves:
  // each element computed from the value's inputs where the plain kernels load it. The plan is the
  // one a C-contiguous array of the value's dtype would get, so the answer has the same bits as
  // evaluating the value first and reducing it.
  bool reduce_fused(ReduceOp op, const FusedProgram& p, std::span<const int> axes, const View& out,
                    double correction) override {
    if (!value_program(p)) return false;
    std::int64_t n = 1;
    for (int d = 0; d < p.ndim; ++d) n *= p.shape[d];
    if (n == 0) return false;
    const ReducePlan plan = plan_fused_reduce(op, p, axes, out, correction, multiprocessors());  // checks first
    if (!plan.on_device) return false;
    if (plan.M == 0) return true;
    const GeneratedValue& value = kernels_.fused_value(p);
    if (sizeof(ReduceArgs) + value.argument_bytes > kMaxArgumentBytes) return false;
    detail::activate_context(device_);
    const std::int64_t warps = resident_warps(plan, &value);
    launch_reduce(warps > 0 ? plan_fused_reduce(op, p, axes, out, correction, multiprocessors(), warps) : plan, &value,
                  &p);
    return true;
  }
  // Sums and products, sequential along the axis on the device (the CPU's order and bits),
  // reduce_source.hpp.
  void cumulative(ReduceOp op, const View& in, int axis, const View& out, bool include_initial) override {
    const NvtxRange range(op == ReduceOp::prod ? "xp.cumulative_prod" : "xp.cumulative_sum");
    const ScanPlan plan = plan_scan(in, axis, out, include_initial, multiprocessors(), op);  // checks first
    if (plan.M == 0 || (plan.L == 0 && !include_initial)) return;
    if (!plan.on_device) {  // more merged axes than the kernels take, or misaligned data: exact, slow
      HostMirror hin = mirror(in, true), hout = mirror(out, true);
      cpu_backend().cumulative(op, hin.view, axis, hout.view, include_initial);
      write_back(hout, out);
      return;
    }
    detail::activate_context(device_);
    const DType t = plan.in_dtype, o = plan.out_dtype;
    ScanArgs args = scan_args(plan);
    launch_one(kernels_.kernel(Generator::scan, scan_key(t, o, op), scan_kernel_name(plan.family),
                               [t, o, op] { return scan_source(t, o, op); }),
               scan_grid(plan), &args, sizeof args, stream());
  }

 private:
  int multiprocessors() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (sm_count_ == 0) sm_count_ = gpu_info(device_).sm_count;
    return sm_count_;
  }
  // One launch of `block` threads per block with one by-value struct argument.
  static void launch_one(const Kernel& k, unsigned grid, void* arg, std::size_t size, const Stream& st,
                         unsigned block = kReduceBlock) {
    LaunchConfig cfg;
    cfg.grid = {grid, 1, 1};
    cfg.block = {block, 1, 1};
    cfg.stream = st;
    k.launch_packed(cfg, &arg, &size, 1);
  }
  // The warps the first-pass kernel of a rows plan or of columns in vectors (the tile or vector kernel
  // for a plan that takes one: whether it does, does not depend on the occupancy) keeps resident on
  // the whole device (its occupancy at kReduceBlock threads), which the splits follow; 0 for the
  // scalar columns kernel.
  std::int64_t resident_warps(const ReducePlan& plan, const GeneratedValue* value) {
    if (plan.family == ReduceFamily::columns && !plan.cols_vec) return 0;
    const Kernel& k = kernels_.kernel(Generator::reduce, reduce_key(plan.op, plan.in_dtype, plan.family, value),
                                      reduce_kernel_name(plan),
                                      [&] { return reduce_source(plan.op, plan.in_dtype, plan.family, value); });
    if (api_for_use().cuOccupancyMaxActiveBlocksPerMultiprocessor == nullptr) return 0;  // an old driver: 64 per SM
    const int blocks = kernels_.max_active_blocks(k, static_cast<int>(kReduceBlock));
    return static_cast<std::int64_t>(blocks) * (kReduceBlock / 32) * multiprocessors();
  }
  // `n` 32-bit counters, zero, for the one-pass finish of a reduction on `st` (one_pass_finish): blocks
  // of a cache of their own, zeroed on the stream when they come from the driver and zero again
  // after every kernel that used them (the unit that finishes an output sets its counter back), so
  // that a block handed out in stream order (BlockCache) is zero when the kernel runs. A launch
  // that fails before the kernel runs leaves them untouched; a kernel that faults leaves the
  // context unusable, counters and all. At most 4 bytes per resident warp of the device a block,
  // outside XP_GPU_MEMORY_LIMIT's count (the memory statistics are the arrays' and their scratch's).
  Allocation zeroed_counters(std::int64_t n, const Stream& st) {
    const std::size_t size = BlockCache::rounded(static_cast<std::size_t>(n) * 4);
    const auto sh = static_cast<cu::CUstream>(st.handle());
    cu::CUdeviceptr p = counters_->get(size, sh, static_cast<cu::CUstream>(default_stream(device_).handle()));
    if (p == 0) {
      const auto& api = api_for_use();
      check(need(api.cuMemAlloc, "cuMemAlloc")(&p, size), "cuMemAlloc");
      const cu::CUresult r = need(api.cuMemsetD8Async, "cuMemsetD8Async")(p, 0, size, sh);
      if (r != cu::CUDA_SUCCESS) {
        if (api.cuMemFree != nullptr) api.cuMemFree(p);
        check(r, "cuMemsetD8Async");
      }
      counters_->commit_new(size);
    }
    Allocation a;
    a.data = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(p));
    a.bytes = size;
    BlockCache* cache = counters_;
    a.owner = std::shared_ptr<void>(reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)),
                                    [cache, size](void* q) { cache->put(reinterpret_cast<std::uintptr_t>(q), size); });
    a.stream_ordered = true;
    return a;
  }
  // The launches of a plan (of a fused value's program `p` when value is not null).
  void launch_reduce(const ReducePlan& plan, const GeneratedValue* value, const FusedProgram* p) {
    const std::string key = reduce_key(plan.op, plan.in_dtype, plan.family, value);
    const auto source = [&] { return reduce_source(plan.op, plan.in_dtype, plan.family, value); };
    const bool split = plan.splits > 1, wide = wide_finish(plan);
    Allocation part;  // stream-ordered scratch: back to the cache once the launches are enqueued
    if (split) part = allocate(static_cast<std::size_t>(plan.units()) * kReduceStateBytes);
    const Stream st = stream();
    Allocation counters;  // the one-pass finish's, zero
    if (plan.one_pass) counters = zeroed_counters(plan.M, st);
    std::vector<std::byte> bytes(sizeof(ReduceArgs));  // ReduceArgs, then the fused value's xp_fargs
    if (p != nullptr) pack_value_arguments(*p, bytes);
    ReduceArgs args = reduce_args(plan, address(part.data), !split);
    args.cnt = address(counters.data);
    std::memcpy(bytes.data(), &args, sizeof args);
    launch_one(kernels_.kernel(Generator::reduce, key, reduce_kernel_name(plan), source), reduce_grid(plan),
               bytes.data(), bytes.size(), st, plan.block);
    if (split && !plan.one_pass) {
      args.final = 1;
      std::memcpy(bytes.data(), &args, sizeof args);
      launch_one(kernels_.kernel(Generator::reduce, key, reduce_finish_name(wide), source), finish_grid(plan),
                 bytes.data(), bytes.size(), st);
    }
  }

 public:
  void matmul(const View& a, const View& b, const View& out, MatmulPrecision precision) override {
    const NvtxRange range("xp.matmul");
    if (device_matmul(*this, device_, a, b, out, precision)) return;
    // Without cuBLAS (or past its int sizes) the CPU computes it: in float32 whatever the precision.
    HostMirror ha = mirror(a, true), hb = mirror(b, true), hout = mirror(out, true);
    cpu_backend().matmul(ha.view, hb.view, hout.view, MatmulPrecision::float32);
    write_back(hout, out);
  }
  void vecdot(const View& a, const View& b, const View& out) override {
    const NvtxRange range("xp.vecdot");
    if (device_vecdot(*this, device_, a, b, out)) return;
    HostMirror ha = mirror(a, true), hb = mirror(b, true), hout = mirror(out, true);
    cpu_backend().vecdot(ha.view, hb.view, hout.view);
    write_back(hout, out);
  }
  // Factorizations in cuSOLVER (cusolver.hpp); false without it: the array layer uses the CPU.
  bool linalg(const LinalgCall& call, std::span<const View> in, std::span<const View> out,
              std::span<std::int64_t> info) override {
    const NvtxRange range("xp.linalg");
    return cusolver::device_linalg(*this, device_, call, in, out, info);
  }
  // Transforms in cuFFT (cufft.hpp); false without it.
  bool fft(const FftCall& call, const View& in, const View& out) override {
    const NvtxRange range("xp.fft");
    return cufft::device_fft(*this, device_, call, in, out);
  }
  // A gather kernel per element size (take_source.hpp), on the device's stream.
  void take(const View& in, const View& indices, int axis, const View& out) override {
    const NvtxRange range("xp.take");
    static_assert(kTakeBlock == kReduceBlock, "launch_one launches kReduceBlock threads per block");
    const TakePlan plan = plan_take(in, indices, axis, out);  // checks first
    if (plan.n == 0) return;
    if (!plan.on_device) {  // more merged dimensions than the kernel takes, or misaligned data: exact, slow
      HostMirror hin = mirror(in, true), hix = mirror(indices, true), hout = mirror(out, true);
      cpu_backend().take(hin.view, hix.view, axis, hout.view);
      write_back(hout, out);
      return;
    }
    detail::activate_context(device_);
    const int size = plan.element_size;
    TakeArgs args = take_args(plan);
    launch_one(
        kernels_.kernel(Generator::take, take_key(size), take_kernel_name(), [size] { return take_source(size); }),
        take_grid(plan.n, multiprocessors()), &args, sizeof args, stream());
  }
  // A stable LSD radix sort on the device (sort_source.hpp, device/sort.cuh): the keys' 8-bit
  // digits from the lowest, then the row number's, each pass a count, a scan and a stable move.
  void sort(const View& keys, const View& values, const View& indices, bool descending) override {
    const NvtxRange range("xp.sort");
    const std::int64_t n = keys.size();
    if (n == 0) return;
    const std::int64_t row = keys.shape[keys.ndim - 1];
    const auto esize = static_cast<std::int32_t>(itemsize(keys.dtype));
    // One row, values only: the payload is each element's bits (no gather at the end).
    const bool bits = n == row && values.data != nullptr && indices.data == nullptr;
    const int kb = esize <= 4 ? 4 : 8, pb = bits ? kb : n <= 0xFFFFFFFFll ? 4 : 8;
    const auto ub = static_cast<std::size_t>(n);
    SortArgs a;
    const std::int64_t blocks = (n + kSortTile - 1) / kSortTile;
    a.n = n;
    a.row = row;
    a.blocks = blocks;
    a.hist_len = 256 * blocks;
    a.parts = (a.hist_len + kScanChunk - 1) / kScanChunk;
    a.esize = esize;
    a.dtype = static_cast<std::int32_t>(keys.dtype);
    a.descending = descending ? 1 : 0;
    a.bits = bits ? 1 : 0;
    Allocation k0 = allocate(ub * kb), k1 = allocate(ub * kb), p0 = allocate(ub * pb), p1 = allocate(ub * pb);
    Allocation hist = allocate(static_cast<std::size_t>(a.hist_len) * 8);
    Allocation part = allocate(static_cast<std::size_t>(a.parts) * 8);
    a.in = address(keys.data);
    a.keys[0] = address(k0.data);
    a.keys[1] = address(k1.data);
    a.pay[0] = address(p0.data);
    a.pay[1] = address(p1.data);
    a.hist = address(hist.data);
    a.part = address(part.data);
    a.values = values.data != nullptr ? address(values.data) : 0;
    a.indices = indices.data != nullptr ? address(indices.data) : 0;
    detail::activate_context(device_);
    const Stream st = stream();
    auto kernel = [&](const char* name) -> const Kernel& {
      return kernels_.kernel(Generator::sort, sort_key_text(kb, pb), name, [=] { return sort_source(kb, pb); });
    };
    const auto grid = static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 16LL * multiprocessors()));
    launch_one(kernel("xp_sort_init"), grid, &a, sizeof a, st);
    auto pass = [&](int shift, bool row_pass) {
      a.shift = shift;
      a.row_pass = row_pass ? 1 : 0;
      launch_one(kernel("xp_sort_hist"), static_cast<unsigned>(blocks), &a, sizeof a, st);
      launch_one(kernel("xp_sort_scan_parts"), static_cast<unsigned>(a.parts), &a, sizeof a, st);
      launch_one(kernel("xp_sort_scan_top"), 1, &a, sizeof a, st);
      launch_one(kernel("xp_sort_scan_apply"), static_cast<unsigned>(a.parts), &a, sizeof a, st);
      launch_one(kernel(kSortAnchor), static_cast<unsigned>(blocks), &a, sizeof a, st);
      a.src ^= 1;
    };
    for (int shift = 0; shift < 8 * esize; shift += 8) pass(shift, false);
    const std::int64_t rows = n / row;
    for (int shift = 0; rows > 1 && ((rows - 1) >> shift) != 0; shift += 8) pass(shift, true);
    launch_one(kernel("xp_sort_finish"), grid, &a, sizeof a, st);
  }
  // Rows of contiguous elements written to the rows the indices name (xp_scatter); where indices may
  // repeat, a first pass keeps each row's last writer. Other layouts: on the host.
  void scatter(const View& dst, const View& indices, int axis, const View& values, bool unique) override {
    const NvtxRange range("xp.scatter");
    const std::int64_t esize = static_cast<std::int64_t>(itemsize(dst.dtype));
    bool device = axis == 0 && dst.ndim >= 1 && indices.dtype == DType::int64 && indices.is_c_contiguous() &&
                  values.is_c_contiguous() && values.dtype == dst.dtype && dst.strides[0] % esize == 0 &&
                  reinterpret_cast<std::uintptr_t>(dst.data) % static_cast<std::uintptr_t>(esize) == 0;
    std::int64_t inner = 1, expect = esize;
    for (int d = dst.ndim - 1; device && d >= 1; --d) {
      if (dst.shape[d] != 1 && dst.strides[d] != expect) device = false;
      expect *= dst.shape[d];
      inner *= dst.shape[d];
    }
    if (!device) {
      HostMirror hd = mirror(dst, true), hi = mirror(indices, true), hv = mirror(values, true);
      cpu_backend().scatter(hd.view, hi.view, axis, hv.view, unique);
      write_back(hd, dst);
      return;
    }
    SortArgs a;
    a.m = indices.size();
    a.inner = inner;
    a.stride0 = dst.strides[0];
    a.esize = static_cast<std::int32_t>(esize);
    a.indices = address(indices.data);
    a.values = address(values.data);
    a.out = address(dst.data);
    if (a.m * inner == 0) return;
    detail::activate_context(device_);
    const Stream st = stream();
    auto kernel = [&](const char* name) -> const Kernel& {
      return kernels_.kernel(Generator::sort, sort_key_text(4, 4), name, [] { return sort_source(4, 4); });
    };
    Allocation last;
    if (!unique && a.m > 1) {
      last = allocate(static_cast<std::size_t>(dst.shape[0]) * 8);
      a.hist = address(last.data);
      check(need(api_for_use().cuMemsetD8Async, "cuMemsetD8Async")(
                a.hist, 0, static_cast<std::size_t>(dst.shape[0]) * 8, static_cast<cu::CUstream>(st.handle())),
            "cuMemsetD8Async");
      launch_one(kernel("xp_scatter_last"),
                 static_cast<unsigned>(std::min<std::int64_t>((a.m + 255) / 256, 16LL * multiprocessors())), &a,
                 sizeof a, st);
    }
    launch_one(kernel("xp_scatter"),
               static_cast<unsigned>(std::min<std::int64_t>((a.m * inner + 255) / 256, 16LL * multiprocessors())), &a,
               sizeof a, st);
  }
  // The sum of the mask (xp's reduction into one int64), read back.
  std::int64_t count_true(const View& mask) override {
    const NvtxRange range("xp.count_nonzero");
    if (mask.size() == 0) return 0;
    Allocation one = allocate(8);
    const std::int64_t shape0 = 0;
    View out;
    out.data = one.data;
    out.dtype = DType::int64;
    out.ndim = 0;
    out.shape = &shape0;
    out.strides = &shape0;
    const int axis = 0;
    reduce(ReduceOp::sum, mask, std::span<const int>(&axis, 1), out, 0);
    std::int64_t count = 0;
    copy_to_host(one.data, &count, 8);
    return count;
  }
  // Per tile of 4096: the count, the counts scanned, then the positions written in order.
  void flatnonzero(const View& mask, const View& values, const View& out) override {
    const NvtxRange range("xp.nonzero");
    const std::int64_t n = mask.size();
    if (n == 0 || out.size() == 0) return;
    if (!mask.is_c_contiguous() || (values.data != nullptr && !values.is_c_contiguous())) {
      HostMirror hm = mirror(mask, true), hv = values.data != nullptr ? mirror(values, true) : mirror_if(values),
                 ho = mirror(out, false);
      cpu_backend().flatnonzero(hm.view, hv.view, ho.view);
      write_back(ho, out);
      return;
    }
    SortArgs a;
    a.n = n;
    a.parts = (n + kSortTile - 1) / kSortTile;
    Allocation part = allocate(static_cast<std::size_t>(a.parts) * 8);
    a.part = address(part.data);
    a.mask = address(mask.data);
    a.out = address(out.data);
    a.values = values.data != nullptr ? address(values.data) : 0;
    a.esize = values.data != nullptr ? static_cast<std::int32_t>(itemsize(values.dtype)) : 8;
    detail::activate_context(device_);
    const Stream st = stream();
    auto kernel = [&](const char* name) -> const Kernel& {
      return kernels_.kernel(Generator::sort, sort_key_text(4, 4), name, [] { return sort_source(4, 4); });
    };
    launch_one(kernel("xp_nonzero_count"), static_cast<unsigned>(a.parts), &a, sizeof a, st);
    launch_one(kernel("xp_sort_scan_top"), 1, &a, sizeof a, st);
    launch_one(kernel("xp_nonzero_write"), static_cast<unsigned>(a.parts), &a, sizeof a, st);
  }
  // One binary search per query (contiguous queries; others on the host).
  void searchsorted(const View& sorted, const View& queries, bool right, const View& out) override {
    const NvtxRange range("xp.searchsorted");
    if (!queries.is_c_contiguous() || !out.is_c_contiguous() || sorted.ndim != 1) {
      HostMirror hs = mirror(sorted, true), hq = mirror(queries, true), ho = mirror(out, true);
      cpu_backend().searchsorted(hs.view, hq.view, right, ho.view);
      write_back(ho, out);
      return;
    }
    SortArgs a;
    a.n = queries.size();
    if (a.n == 0) return;
    a.m = sorted.shape[0];
    a.stride0 = sorted.strides[0];
    a.in = address(sorted.data);
    a.values = address(queries.data);
    a.out = address(out.data);
    a.esize = static_cast<std::int32_t>(itemsize(sorted.dtype));
    a.dtype = static_cast<std::int32_t>(sorted.dtype);
    a.right = right ? 1 : 0;
    detail::activate_context(device_);
    const Stream st = stream();
    launch_one(
        kernels_.kernel(Generator::sort, sort_key_text(4, 4), "xp_searchsorted", [] { return sort_source(4, 4); }),
        static_cast<unsigned>(std::min<std::int64_t>((a.n + 255) / 256, 16LL * multiprocessors())), &a, sizeof a, st);
  }
  void fill_random(const RandomRequest& request, const View& out) override {
    const NvtxRange range("xp.random");
    // The CPU's Philox streams, computed on the device (random_source.hpp): uniform and integers
    // bit for bit, normals within philox.hpp's bounds.
    cuda::fill_random(device_, multiprocessors(), request, out);
  }

  void copy_to_host(const std::byte* src, void* dst, std::size_t bytes) override {
    const NvtxRange range("xp.copy_to_host");
    if (bytes == 0) return;
    detail::activate_context(device_);
    const auto& api = api_for_use();
    const Stream st = stream();
    if (staging_->to_host(address(src), dst, bytes, static_cast<cu::CUstream>(st.handle()))) return;
    check(need(api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync")(dst, address(src), bytes,
                                                           static_cast<cu::CUstream>(st.handle())),
          "cuMemcpyDtoHAsync");
    st.synchronize();
  }
  void copy_from_host(const void* src, std::byte* dst, std::size_t bytes) override {
    const NvtxRange range("xp.copy_from_host");
    if (bytes == 0) return;
    detail::activate_context(device_);
    const auto& api = api_for_use();
    const Stream st = stream();
    // Staged: every byte is in pinned memory when this returns, its DMA queued on the stream.
    if (staging_->from_host(src, address(dst), bytes, static_cast<cu::CUstream>(st.handle()))) return;
    check(need(api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync")(address(dst), src, bytes,
                                                           static_cast<cu::CUstream>(st.handle())),
          "cuMemcpyHtoDAsync");
    st.synchronize();  // the host memory may go away when we return
  }

  MemoryStats memory_stats() override { return cache_->stats(); }
  void free_cached() override {
    detail::activate_context(device_);
    default_stream(device_).synchronize();  // cached blocks may still be read by queued work
    cache_->release_all();
    counters_->release_all();
  }
  void reset_peak() override { cache_->reset_peak(); }

 private:
  static cu::CUdeviceptr address(const std::byte* p) {
    return static_cast<cu::CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
  }

  // The calling thread's current stream of the device (xp's default one outside a StreamScope).
  const Stream& stream() const { return work_stream(device_); }

  void run_fused_on_host(const FusedProgram& p) {
    std::vector<HostMirror> ins, outs;
    FusedProgram h = p;
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      ins.push_back(mirror(p.inputs[i], true));
      h.inputs[i] = ins.back().view;
    }
    for (std::size_t i = 0; i < p.outputs.size(); ++i) {
      outs.push_back(mirror(p.outputs[i], true));
      h.outputs[i] = outs.back().view;
    }
    cpu_backend().run_fused(h);
    for (std::size_t i = 0; i < p.outputs.size(); ++i) write_back(outs[i], p.outputs[i]);
  }

  // The smallest byte range holding every element of v, copied to the host (or only sized, for
  // an output), with a view over the copy.
  HostMirror mirror(const View& v, bool copy) {
    HostMirror m;
    std::int64_t lo = 0, hi = 0;
    bool empty = false;
    for (int d = 0; d < v.ndim; ++d) {
      if (v.shape[d] == 0) empty = true;
      const std::int64_t span = (v.shape[d] - 1) * v.strides[d];
      (span < 0 ? lo : hi) += span;
    }
    const std::int64_t bytes = empty ? 0 : hi - lo + static_cast<std::int64_t>(itemsize(v.dtype));
    m.bytes.resize(static_cast<std::size_t>(bytes));
    m.lo = lo;
    m.view = v;
    m.view.data = m.bytes.data() - lo;
    if (copy && bytes > 0) copy_to_host(v.data + lo, m.bytes.data(), static_cast<std::size_t>(bytes));
    return m;
  }
  // A mirror of an output that may be absent (data == nullptr: stays absent).
  HostMirror mirror_if(const View& v) {
    if (v.data != nullptr) return mirror(v, false);
    HostMirror m;
    m.view = v;
    return m;
  }
  void write_back(const HostMirror& m, const View& v) {
    if (!m.bytes.empty()) copy_from_host(m.bytes.data(), v.data + m.lo, m.bytes.size());
  }

  Device device_;
  BlockCache* cache_;     // never destroyed: blocks can be freed by arrays alive at exit
  BlockCache* counters_;  // the one-pass finish's zero counters (zeroed_counters); never destroyed either
  Staging* staging_;      // never destroyed: pinned memory is the process's until it exits
  KernelCache& kernels_;  // the device's generated kernels (kernel_cache.hpp)
  std::mutex mutex_;
  int sm_count_ = 0;
};

}  // namespace

Backend* cuda_backend(const Device& device) {
  static std::mutex m;
  static auto* backends = new std::map<int, CudaBackend*>();
  std::lock_guard<std::mutex> lock(m);
  auto it = backends->find(device.index());
  if (it != backends->end()) return it->second;
  detail::activate_context(device);  // DeviceUnavailable (with the reason) when CUDA or this device cannot be used
  auto* b = new CudaBackend(device);
  backends->emplace(device.index(), b);
  return b;
}

namespace {
Backend& backend_of(const Device& device) {
  return *cuda_backend(device);
}
// CUDA devices are served from here: registry.cpp names no backend (backend.hpp).
[[gnu::init_priority(101)]] const BackendKindRegistration g_registration{DeviceKind::cuda, &backend_of};
}  // namespace

}  // namespace xp::detail::cuda
