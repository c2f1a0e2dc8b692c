// xp::Kernel: the launch path. Checks are integer compares on the device's limits, gathered once
// per device; the launch itself is one cuLaunchKernel. A function's own limits are asked of the
// driver only when a launch needs them (function_limits). Launches with arrays also hold the arrays' memory until the
// stream has run the kernel (the keep-alive queue below).
#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "jit/cpu_engine.hpp"
#include "jit/kernel_state.hpp"
#include "runtime/current.hpp"
#include "runtime/driver.hpp"
#include "runtime/nvtx.hpp"
#include "runtime/parallel.hpp"
#include "xp/program.hpp"

namespace xp {

namespace cu = detail::cu;

namespace detail {

namespace {

// A device's launch limits, the same for every kernel: asked of the driver once per device (eight
// attribute calls that a process's first kernel would otherwise pay again with each new kernel).
struct DeviceLimits {
  unsigned max_threads = 0;
  unsigned max_block[3] = {0, 0, 0};
  unsigned max_grid[3] = {0, 0, 0};
  unsigned max_shared_optin = 0;
};

const DeviceLimits& device_limits(const Device& device, const DriverApi& api) {
  static std::mutex m;
  static auto* by_index = new std::map<int, DeviceLimits>();  // never destroyed, as the kernels
  std::lock_guard<std::mutex> lock(m);
  if (auto it = by_index->find(device.index()); it != by_index->end()) return it->second;
  cu::CUdevice dev = 0;
  check(api.cuDeviceGet(&dev, device.index()), "cuDeviceGet");
  auto attr = [&](int a) {
    int v = 0;
    check(api.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
    return static_cast<unsigned>(v);
  };
  DeviceLimits l;
  l.max_threads = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  l.max_block[0] = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  l.max_block[1] = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  l.max_block[2] = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  l.max_grid[0] = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  l.max_grid[1] = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  l.max_grid[2] = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  l.max_shared_optin = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  return by_index->emplace(device.index(), l).first->second;  // stored only when every call succeeded
}

}  // namespace

std::shared_ptr<const KernelState> make_kernel_state(std::shared_ptr<const void> keep_alive, cu::CUmodule module,
                                                     const Device& device, std::string name,
                                                     const std::vector<std::size_t>* params_from_module) {
  detail::activate_context(device);
  const DriverApi& api = api_for_use();
  auto k = std::make_shared<KernelState>(Stream::default_for(device));
  k->module = std::move(keep_alive);
  k->device = device;
  k->name = std::move(name);
  check(need(api.cuModuleGetFunction, "cuModuleGetFunction")(&k->function, module, k->name.c_str()),
        "cuModuleGetFunction");
  const DeviceLimits& limits = device_limits(device, api);
  std::copy(limits.max_block, limits.max_block + 3, k->max_block);
  std::copy(limits.max_grid, limits.max_grid + 3, k->max_grid);
  k->max_threads_device = limits.max_threads;
  k->max_shared_optin = limits.max_shared_optin;
  if (params_from_module != nullptr) {  // no driver calls: the cubin said
    k->param_sizes = *params_from_module;
    k->params_known = true;
  } else if (api.cuFuncGetParamInfo != nullptr) {
    // Parameters until the driver says there are no more (CUDA_ERROR_INVALID_VALUE).
    for (std::size_t i = 0;; ++i) {
      std::size_t offset = 0, size = 0;
      if (api.cuFuncGetParamInfo(k->function, i, &offset, &size) != cu::CUDA_SUCCESS) break;
      k->param_sizes.push_back(size);
    }
    k->params_known = true;
  }
  return k;
}

const FunctionLimits& function_limits(const KernelState& k) {
  if (k.limits_known.load(std::memory_order_acquire)) return k.limits;
  std::lock_guard<std::mutex> lock(k.mutex);
  if (k.limits_known.load(std::memory_order_relaxed)) return k.limits;
  detail::activate_context(k.device);
  const DriverApi& api = api_for_use();
  auto attr = [&](int a) {
    int v = 0;
    check(need(api.cuFuncGetAttribute, "cuFuncGetAttribute")(&v, a, k.function), "cuFuncGetAttribute");
    return v;
  };
  FunctionLimits f;  // a driver error leaves them unknown, to be asked again
  f.max_threads = static_cast<unsigned>(attr(cu::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  f.static_shared = static_cast<unsigned>(attr(cu::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
  f.dynamic_shared = static_cast<unsigned>(attr(cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES));
  f.registers = attr(cu::CU_FUNC_ATTRIBUTE_NUM_REGS);
  k.limits = f;
  k.limits_known.store(true, std::memory_order_release);
  return k.limits;
}

namespace {

[[noreturn]] void bad_launch(const KernelState& k, const std::string& what) {
  throw ValueError("launch of " + k.name + " on " + k.device.str() + ": " + what);
}

std::string dims(const Dim3& d) {
  std::string s(1, '(');  // built by appending: g++ 12 warns falsely (-Wrestrict) on "(" + std::string
  s.append(std::to_string(d.x)).append(", ").append(std::to_string(d.y)).append(", ");
  return s.append(std::to_string(d.z)).append(")");
}

// Dynamic shared memory beyond what is known to be allowed: the function's own allowance, asked
// once, or raised with cuFuncSetAttribute up to the device's opt-in limit. The allowance only grows:
// a launch never lowers what a concurrent one raised.
void allow_shared(const KernelState& k, unsigned bytes) {
  const FunctionLimits& f = function_limits(k);
  std::lock_guard<std::mutex> lock(k.mutex);
  unsigned allowed = std::max(k.dynamic_shared_allowed.load(std::memory_order_relaxed), f.dynamic_shared);
  if (bytes > allowed) {
    if (bytes + f.static_shared > k.max_shared_optin)
      bad_launch(k, std::to_string(bytes) + " bytes of dynamic shared memory plus " + std::to_string(f.static_shared) +
                        " static exceed the device's " + std::to_string(k.max_shared_optin) + " per block");
    const auto& api = api_for_use();
    detail::activate_context(k.device);
    check(need(api.cuFuncSetAttribute, "cuFuncSetAttribute")(
              k.function, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)),
          "cuFuncSetAttribute");
    allowed = bytes;
  }
  k.dynamic_shared_allowed.store(allowed, std::memory_order_release);
}

// cuLaunchKernel refused. Too many threads for this function (its registers or __launch_bounds__)
// is the one check left to the driver; it is explained with the function's limits, any other
// refusal reported as the driver's.
[[noreturn]] void refused_launch(const KernelState& k, unsigned long long threads, cu::CUresult r) {
  const FunctionLimits* f = nullptr;
  try {
    f = &function_limits(k);
  } catch (const Error&) {  // the driver's own refusal is the more useful error
  }
  if (f != nullptr && threads > f->max_threads)
    bad_launch(k, std::to_string(threads) + " threads per block; this kernel allows at most " +
                      std::to_string(f->max_threads) + " (" + std::to_string(f->registers) + " registers per thread)");
  check(r, "cuLaunchKernel");
  throw Error("cuLaunchKernel failed");  // not reached: check throws on an error
}

std::string size_list(const std::size_t* sizes, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s;
}

// The configuration's stream, else the calling thread's current stream of the kernel's device.
const Stream& launch_stream(const KernelState& k, const LaunchConfig& c) {
  const Stream* scoped = c.stream.get() != nullptr ? c.stream.get() : scoped_stream(k.device.index());
  const Stream& stream = scoped != nullptr ? *scoped : *k.default_stream;
  if (stream.device() != k.device)
    bad_launch(k, "the stream belongs to " + stream.device().str() +
                      "; load the kernel there with "
                      "Program::kernel(name, device)");
  return stream;
}

// References held until an event recorded after a launch has completed. Entries are checked in the
// order they were made, at every launch that holds references, up to the first that is not
// complete (one stream's events complete in order; several streams' roughly so). Past kMaxPending
// entries the oldest is waited for, so memory stays bounded when the GPU falls far behind; the
// host never waits otherwise. Events are reused.
class KeepAlive {
 public:
  static constexpr std::size_t kMaxPending = 4096;

  static KeepAlive& instance() {
    static KeepAlive* k = [] {
      auto* made = new KeepAlive();  // never destroyed: entries may be pending at exit
      set_after_synchronize([] { KeepAlive::instance().release_completed(); });
      return made;
    }();
    return *k;
  }

  // Releases the references of every launch whose event has completed, in any order (called where
  // xp has just waited for a stream or a device: without it, the arrays of a program's last
  // launches would stay in use until its next launch with arrays, unseen by free_all and by the
  // allocator's out-of-memory retry).
  void release_completed() {
    const auto query = api_for_use().cuEventQuery;
    if (query == nullptr) return;
    std::vector<std::shared_ptr<const void>> done;  // released after the lock: a release may call back
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::deque<Pending> still;
      for (Pending& p : pending_) {
        if (query(p.event) == cu::CUDA_ERROR_NOT_READY) {
          still.push_back(std::move(p));
          continue;
        }
        for (auto& ref : p.refs) done.push_back(std::move(ref));
        free_[p.device].push_back(p.event);
      }
      pending_.swap(still);
    }
  }

  // An event of the device (current), from the pool or new.
  cu::CUevent take_event(int device) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& v = free_[device];
      if (!v.empty()) {
        cu::CUevent e = v.back();
        v.pop_back();
        return e;
      }
    }
    const DriverApi& api = api_for_use();
    cu::CUevent e = nullptr;
    // CU_EVENT_DISABLE_TIMING: the cheapest kind of event
    check(need(api.cuEventCreate, "cuEventCreate")(&e, cu::CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    return e;
  }
  void put_event(int device, cu::CUevent e) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_[device].push_back(e);
  }

  // Holds refs until `event` (recorded after the launch) has completed.
  void hold(int device, cu::CUevent event, std::shared_ptr<const void>* refs, std::size_t n) {
    const DriverApi& api = api_for_use();
    const auto query = api_for_use().cuEventQuery;  // without it (never seen), entries are waited for
    std::vector<std::shared_ptr<const void>> done;  // released after the lock: a release may call back
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Pending p;
      p.event = event;
      p.device = device;
      p.refs.reserve(n);
      for (std::size_t i = 0; i < n; ++i) p.refs.push_back(std::move(refs[i]));
      pending_.push_back(std::move(p));
      while (!pending_.empty()) {
        Pending& f = pending_.front();
        cu::CUresult r = cu::CUDA_ERROR_NOT_READY;
        if ((pending_.size() > kMaxPending || query == nullptr) && api.cuEventSynchronize != nullptr) {
          r = api.cuEventSynchronize(f.event);
        } else if (query != nullptr) {
          r = query(f.event);
        }
        // Any answer but "not ready" means nothing queued before the event still runs: complete, or
        // the context is broken by a fault (reported by the next synchronize).
        if (r == cu::CUDA_ERROR_NOT_READY) break;
        for (auto& ref : f.refs) done.push_back(std::move(ref));
        free_[f.device].push_back(f.event);
        pending_.pop_front();
      }
    }
  }

  std::size_t pending() {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_.size();
  }

 private:
  struct Pending {
    cu::CUevent event = nullptr;
    int device = 0;
    std::vector<std::shared_ptr<const void>> refs;
  };
  std::mutex mutex_;
  std::deque<Pending> pending_;
  std::map<int, std::vector<cu::CUevent>> free_;
};

}  // namespace

std::size_t launches_holding_references() {
  return KeepAlive::instance().pending();
}

}  // namespace detail

const std::string& Kernel::name() const {
  return state_->name;
}
const Device& Kernel::device() const {
  if (!state_) throw ValueError("an empty xp::Kernel has no device (get one from Program::kernel)");
  return state_->device;
}
void* Kernel::handle() const {
  return state_->function;
}
const std::vector<std::size_t>& Kernel::parameter_sizes() const {
  return state_->param_sizes;
}
int Kernel::registers() const {
  if (!state_) throw ValueError("registers of an empty xp::Kernel");
  if (state_->cpu != nullptr) return 0;
  return detail::function_limits(*state_).registers;
}

int Kernel::max_potential_block_size(std::size_t dynamic_shared_bytes, int* min_grid) const {
  if (!state_) throw ValueError("max_potential_block_size on an empty xp::Kernel");
  if (state_->cpu != nullptr) {  // a block is one worker's unit of work: big enough to pay for its start
    if (min_grid != nullptr) *min_grid = detail::num_threads();
    return 256;
  }
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  int grid = 0, block = 0;
  detail::check(detail::need(api.cuOccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize")(
                    &grid, &block, state_->function, nullptr, dynamic_shared_bytes, 0),
                "cuOccupancyMaxPotentialBlockSize");
  if (min_grid != nullptr) *min_grid = grid;
  return block;
}

int Kernel::max_active_blocks(int block_threads, std::size_t dynamic_shared_bytes) const {
  if (!state_) throw ValueError("max_active_blocks on an empty xp::Kernel");
  if (block_threads <= 0) throw ValueError("max_active_blocks: block_threads must be positive");
  if (state_->cpu != nullptr) return 1;  // one block per CPU thread at a time
  detail::activate_context(state_->device);
  const auto& api = detail::api_for_use();
  int blocks = 0;
  detail::check(
      detail::need(api.cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor")(
          &blocks, state_->function, block_threads, dynamic_shared_bytes),
      "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

void Kernel::launch_packed(const LaunchConfig& c, void** args, const std::size_t* sizes, std::size_t count) const {
  if (!state_) throw ValueError("launch of an empty xp::Kernel (get one from Program::kernel)");
  if (state_->cpu != nullptr) {  // synchronous, on xp's CPU threads
    detail::cpu_launch(*static_cast<const detail::CpuKernelDef*>(state_->cpu), c, args, sizes, count);
    return;
  }
  const detail::KernelState& k = *state_;
  const Dim3& g = c.grid;
  const Dim3& b = c.block;
  if (g.x == 0 || g.y == 0 || g.z == 0) detail::bad_launch(k, "grid " + detail::dims(g) + " has a zero dimension");
  if (b.x == 0 || b.y == 0 || b.z == 0) detail::bad_launch(k, "block " + detail::dims(b) + " has a zero dimension");
  if (g.x > k.max_grid[0] || g.y > k.max_grid[1] || g.z > k.max_grid[2])
    detail::bad_launch(k, "grid " + detail::dims(g) + " exceeds the device's " +
                              detail::dims(Dim3(k.max_grid[0], k.max_grid[1], k.max_grid[2])));
  if (b.x > k.max_block[0] || b.y > k.max_block[1] || b.z > k.max_block[2])
    detail::bad_launch(k, "block " + detail::dims(b) + " exceeds the device's " +
                              detail::dims(Dim3(k.max_block[0], k.max_block[1], k.max_block[2])));
  const unsigned long long threads = 1ull * b.x * b.y * b.z;
  if (threads > k.max_threads_device)
    detail::bad_launch(k, std::to_string(threads) + " threads per block; the device allows at most " +
                              std::to_string(k.max_threads_device));
  if (c.shared_bytes > k.dynamic_shared_allowed.load(std::memory_order_acquire))
    detail::allow_shared(k, c.shared_bytes);
  if (k.params_known) {
    bool same = count == k.param_sizes.size();
    for (std::size_t i = 0; same && i < count; ++i) same = sizes[i] == k.param_sizes[i];
    if (!same)
      detail::bad_launch(k, "the kernel takes " + std::to_string(k.param_sizes.size()) + " parameters of (" +
                                detail::size_list(k.param_sizes.data(), k.param_sizes.size()) +
                                ") bytes; the launch passed " + std::to_string(count) + " of (" +
                                detail::size_list(sizes, count) + ")");
  }
  const Stream& stream = detail::launch_stream(k, c);
  const detail::NvtxRange range(k.name.c_str());
  detail::make_current(k.device.index());
  const detail::DriverApi& api = *detail::driver_api();
  const cu::CUresult r =
      detail::need(api.cuLaunchKernel, "cuLaunchKernel")(k.function, g.x, g.y, g.z, b.x, b.y, b.z, c.shared_bytes,
                                                         static_cast<cu::CUstream>(stream.handle()), args, nullptr);
  if (r != cu::CUDA_SUCCESS) detail::refused_launch(k, threads, r);
}

void Kernel::launch_holding(const LaunchConfig& c, void** args, const std::size_t* sizes, std::size_t count,
                            std::shared_ptr<const void>* refs, std::size_t nrefs, bool stream_ordered) const {
  if (!state_ || nrefs == 0 || stream_ordered || state_->cpu != nullptr) {
    // On the CPU: done when launch_packed returns. xp's pool memory: the arrays recorded this
    // launch's stream as their last use (kernel_arg), and the pool hands their blocks out again only
    // ordered after that stream: no event, no hold.
    launch_packed(c, args, sizes, count);
    return;
  }
  const detail::KernelState& k = *state_;
  const Stream& stream = detail::launch_stream(k, c);
  detail::make_current(k.device.index());
  launch_packed(c, args, sizes, count);
  // Other memory (wrapped, foreign) is held until the stream has run the kernel.
  detail::KeepAlive& ka = detail::KeepAlive::instance();
  const detail::DriverApi& api = detail::api_for_use();
  cu::CUevent e = ka.take_event(k.device.index());
  const cu::CUresult r =
      detail::need(api.cuEventRecord, "cuEventRecord")(e, static_cast<cu::CUstream>(stream.handle()));
  if (r != cu::CUDA_SUCCESS) {
    // Without the event nothing tells when the kernel is done: wait for the stream before the
    // references go.
    ka.put_event(k.device.index(), e);
    if (api.cuStreamSynchronize != nullptr) api.cuStreamSynchronize(static_cast<cu::CUstream>(stream.handle()));
    detail::check(r, "cuEventRecord");
  }
  ka.hold(k.device.index(), e, refs, nrefs);
}

}  // namespace xp
