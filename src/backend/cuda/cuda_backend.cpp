// The CUDA backend (first part): device memory through a caching allocator, copies, and fused
// elementwise programs turned into CUDA source (ew_source.cpp), compiled by NVRTC through xp's
// kernel caches and launched on xp's stream of the device. Reductions, scans, matmul, take and
// random numbers still run on the host here (the data goes to the CPU backend and back, exactly
// its answers); device versions of those come next.

#include "backend/cuda/cuda_backend.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/cuda/ew_source.hpp"
#include "runtime/driver.hpp"
#include "xp/error.hpp"
#include "xp/program.hpp"
#include "xp/stream.hpp"

namespace xp::detail::cuda {

namespace {

namespace cu = detail::cu;

// Freed blocks kept for reuse, by size class. Every kernel and copy xp issues for the device goes to
// one stream (Stream::default_for), so a block freed after its last use was enqueued is only handed
// out for work enqueued later on that same stream: stream order makes reuse safe.
class BlockCache {
 public:
  explicit BlockCache(Device d) : device_(d) {}

  static std::size_t rounded(std::size_t bytes) {
    if (bytes <= 512) return 512;
    if (bytes >= (std::size_t{1} << 30)) return (bytes + (std::size_t{1} << 21) - 1) & ~((std::size_t{1} << 21) - 1);
    std::size_t r = 512;
    while (r < bytes) r <<= 1;
    return r;
  }

  cu::CUdeviceptr get(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it == free_.end() || it->second.empty()) return 0;
    const cu::CUdeviceptr p = it->second.back();
    it->second.pop_back();
    cached_ -= size;
    return p;
  }
  void put(cu::CUdeviceptr p, std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_[size].push_back(p);
    cached_ += size;
  }
  // Frees every cached block (before retrying an allocation that failed).
  void release_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto* api = driver_api();
    for (auto& [size, v] : free_) {
      for (cu::CUdeviceptr p : v) {
        if (api != nullptr && api->cuMemFree != nullptr) api->cuMemFree(p);
      }
      v.clear();
    }
    cached_ = 0;
  }

 private:
  Device device_;
  std::mutex mutex_;
  std::map<std::size_t, std::vector<cu::CUdeviceptr>> free_;
  std::size_t cached_ = 0;
};

// A strided view's bytes, mirrored on the host for the host fallbacks.
struct HostMirror {
  std::vector<std::byte> bytes;
  View view;
  std::int64_t lo = 0;  // byte offset of the lowest element from view.data
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(Device d) : device_(d), cache_(new BlockCache(d)) {}

  const char* name() const noexcept override { return "cuda"; }

  Allocation allocate(std::size_t bytes) override {
    device_.activate();
    const auto& api = api_for_use();
    const std::size_t size = BlockCache::rounded(bytes);
    cu::CUdeviceptr p = cache_->get(size);
    if (p == 0) {
      cu::CUresult r = need(api.cuMemAlloc, "cuMemAlloc")(&p, size);
      if (r == cu::CUDA_ERROR_OUT_OF_MEMORY) {
        // Cached blocks are freed and the allocation tried once more.
        stream().synchronize();
        cache_->release_all();
        r = api.cuMemAlloc(&p, size);
      }
      if (r == cu::CUDA_ERROR_OUT_OF_MEMORY) {
        std::size_t free = 0, total = 0;
        api.cuMemGetInfo(&free, &total);
        throw OutOfMemory(device_.str(), bytes, free, total);
      }
      check(r, "cuMemAlloc");
    }
    Allocation a;
    a.data = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(p));
    a.bytes = bytes;
    BlockCache* cache = cache_;
    a.owner = std::shared_ptr<void>(reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)),
                                    [cache, size](void* q) { cache->put(reinterpret_cast<std::uintptr_t>(q), size); });
    return a;
  }

  void run_fused(const FusedProgram& p) override {
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
    const Generated& g = generated(p, variant);
    if (g.argument_bytes > kMaxArgumentBytes) {
      run_fused_on_host(p);  // strides of more views than one kernel argument holds: rare, exact, slow
      return;
    }
    const Kernel& k = kernel_for(g);
    thread_local std::vector<std::byte> args;
    pack_arguments(p, variant, n, args);
    void* arg = args.data();
    const std::size_t size = args.size();
    const LaunchShape shape = launch_shape(n, g, sm_count_);
    LaunchConfig cfg;
    cfg.grid = {shape.grid, 1, 1};
    cfg.block = {shape.block, 1, 1};
    const Stream st = stream();
    cfg.stream = st;
    k.launch_packed(cfg, &arg, &size, 1);
  }

  void reduce(ReduceOp op, const View& in, std::span<const int> axes, const View& out, int correction) override {
    HostMirror hin = mirror(in, true), hout = mirror(out, true);
    cpu_backend().reduce(op, hin.view, axes, hout.view, correction);
    write_back(hout, out);
  }
  void cumulative_sum(const View& in, int axis, const View& out, bool include_initial) override {
    HostMirror hin = mirror(in, true), hout = mirror(out, true);
    cpu_backend().cumulative_sum(hin.view, axis, hout.view, include_initial);
    write_back(hout, out);
  }
  void matmul(const View& a, const View& b, const View& out) override {
    HostMirror ha = mirror(a, true), hb = mirror(b, true), hout = mirror(out, true);
    cpu_backend().matmul(ha.view, hb.view, hout.view);
    write_back(hout, out);
  }
  void vecdot(const View& a, const View& b, const View& out) override {
    HostMirror ha = mirror(a, true), hb = mirror(b, true), hout = mirror(out, true);
    cpu_backend().vecdot(ha.view, hb.view, hout.view);
    write_back(hout, out);
  }
  void take(const View& in, const View& indices, int axis, const View& out) override {
    HostMirror hin = mirror(in, true), hix = mirror(indices, true), hout = mirror(out, true);
    cpu_backend().take(hin.view, hix.view, axis, hout.view);
    write_back(hout, out);
  }
  void fill_random(const RandomRequest& request, const View& out) override {
    // The same Philox streams as the CPU, bit for bit (computed there, for now).
    HostMirror hout = mirror(out, true);
    cpu_backend().fill_random(request, hout.view);
    write_back(hout, out);
  }

  void copy_to_host(const std::byte* src, void* dst, std::size_t bytes) override {
    if (bytes == 0) return;
    device_.activate();
    const auto& api = api_for_use();
    const Stream st = stream();
    check(need(api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync")(dst, address(src), bytes,
                                                           static_cast<cu::CUstream>(st.handle())),
          "cuMemcpyDtoHAsync");
    st.synchronize();
  }
  void copy_from_host(const void* src, std::byte* dst, std::size_t bytes) override {
    if (bytes == 0) return;
    device_.activate();
    const auto& api = api_for_use();
    const Stream st = stream();
    check(need(api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync")(address(dst), src, bytes,
                                                           static_cast<cu::CUstream>(st.handle())),
          "cuMemcpyHtoDAsync");
    st.synchronize();  // the host memory may go away when we return
  }

 private:
  static cu::CUdeviceptr address(const std::byte* p) {
    return static_cast<cu::CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
  }

  Stream stream() const { return Stream::default_for(device_); }

  const Generated& generated(const FusedProgram& p, const Variant& v) {
    // Generating the source is cheap next to compiling, but not next to a launch: programs of one
    // structure are generated once, keyed by a structural signature.
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
      bool scalar = true;
      for (int d = 0; d < in.ndim; ++d) scalar = scalar && (in.strides[d] == 0 || in.shape[d] == 1);
      sig += static_cast<char>(scalar);
    }
    for (const View& out : p.outputs) sig += static_cast<char>(out.dtype);
    for (std::int32_t o : p.output_instr) sig.append(reinterpret_cast<const char*>(&o), sizeof o);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = generated_.find(sig);
    if (it == generated_.end()) it = generated_.emplace(sig, generate(p, v)).first;
    return it->second;
  }

  const Kernel& kernel_for(const Generated& g) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kernels_.find(g.key);
    if (it != kernels_.end()) return it->second;
    ProgramOptions opt;
    opt.name = "xp_fused.cu";
    opt.options = nvrtc_options();
    Program prog(g.source, opt);
    Kernel k = prog.kernel(g.kernel_name, device_);
    if (sm_count_ == 0) sm_count_ = gpu_info(device_).sm_count;
    return kernels_.emplace(g.key, std::move(k)).first->second;
  }

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
  void write_back(const HostMirror& m, const View& v) {
    if (!m.bytes.empty()) copy_from_host(m.bytes.data(), v.data + m.lo, m.bytes.size());
  }

  Device device_;
  BlockCache* cache_;  // never destroyed: blocks can be freed by arrays alive at exit
  std::mutex mutex_;
  std::unordered_map<std::string, Kernel> kernels_;
  std::unordered_map<std::string, Generated> generated_;
  int sm_count_ = 0;
};

}  // namespace

Backend* cuda_backend(const Device& device) {
  static std::mutex m;
  static auto* backends = new std::map<int, CudaBackend*>();
  std::lock_guard<std::mutex> lock(m);
  auto it = backends->find(device.index());
  if (it != backends->end()) return it->second;
  device.activate();  // DeviceUnavailable (with the reason) when CUDA or this device cannot be used
  auto* b = new CudaBackend(device);
  backends->emplace(device.index(), b);
  return b;
}

}  // namespace xp::detail::cuda
