// xp::Kernel: the launch path. Checks are integer compares on facts gathered at lookup; the
// launch itself is one cuLaunchKernel.
#include <string>

#include "jit/kernel_state.hpp"
#include "runtime/driver.hpp"
#include "xp/program.hpp"

namespace xp {

namespace cu = detail::cu;

namespace detail {

std::shared_ptr<const KernelState> make_kernel_state(std::shared_ptr<const void> keep_alive, cu::CUmodule module,
                                                     const Device& device, std::string name,
                                                     const std::vector<std::size_t>* params_from_module) {
  device.activate();
  const DriverApi& api = api_for_use();
  auto k = std::make_shared<KernelState>(Stream::default_for(device));
  k->module = std::move(keep_alive);
  k->device = device;
  k->name = std::move(name);
  check(need(api.cuModuleGetFunction, "cuModuleGetFunction")(&k->function, module, k->name.c_str()),
        "cuModuleGetFunction");
  cu::CUdevice dev = 0;
  check(api.cuDeviceGet(&dev, device.index()), "cuDeviceGet");
  auto dattr = [&](int a) {
    int v = 0;
    check(api.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
    return static_cast<unsigned>(v);
  };
  auto fattr = [&](int a) {
    int v = 0;
    check(need(api.cuFuncGetAttribute, "cuFuncGetAttribute")(&v, a, k->function), "cuFuncGetAttribute");
    return v;
  };
  k->max_block[0] = dattr(cu::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  k->max_block[1] = dattr(cu::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  k->max_block[2] = dattr(cu::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  k->max_grid[0] = dattr(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  k->max_grid[1] = dattr(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  k->max_grid[2] = dattr(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  k->max_shared_optin = dattr(cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  k->max_threads = static_cast<unsigned>(fattr(cu::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  k->static_shared = static_cast<unsigned>(fattr(cu::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
  k->dynamic_shared_allowed = static_cast<unsigned>(fattr(cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES));
  k->registers = fattr(cu::CU_FUNC_ATTRIBUTE_NUM_REGS);
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

namespace {

[[noreturn]] void bad_launch(const KernelState& k, const std::string& what) {
  throw ValueError("launch of " + k.name + " on " + k.device.str() + ": " + what);
}

std::string dims(const Dim3& d) {
  std::string s(1, '(');  // built by appending: g++ 12 warns falsely (-Wrestrict) on "(" + std::string
  s.append(std::to_string(d.x)).append(", ").append(std::to_string(d.y)).append(", ");
  return s.append(std::to_string(d.z)).append(")");
}

std::string size_list(const std::size_t* sizes, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s;
}

}  // namespace

}  // namespace detail

const std::string& Kernel::name() const {
  return state_->name;
}
const Device& Kernel::device() const {
  return state_->device;
}
void* Kernel::handle() const {
  return state_->function;
}
const std::vector<std::size_t>& Kernel::parameter_sizes() const {
  return state_->param_sizes;
}
int Kernel::registers() const {
  return state_->registers;
}

int Kernel::max_potential_block_size(std::size_t dynamic_shared_bytes, int* min_grid) const {
  if (!state_) throw ValueError("max_potential_block_size on an empty xp::Kernel");
  state_->device.activate();
  const auto& api = detail::api_for_use();
  int grid = 0, block = 0;
  detail::check(detail::need(api.cuOccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize")(
                    &grid, &block, state_->function, nullptr, dynamic_shared_bytes, 0),
                "cuOccupancyMaxPotentialBlockSize");
  if (min_grid != nullptr) *min_grid = grid;
  return block;
}

void Kernel::launch_packed(const LaunchConfig& c, void** args, const std::size_t* sizes, std::size_t count) const {
  if (!state_) throw ValueError("launch of an empty xp::Kernel (get one from Program::kernel)");
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
  if (threads > k.max_threads)
    detail::bad_launch(k, std::to_string(threads) + " threads per block; this kernel allows at most " +
                              std::to_string(k.max_threads) + " (" + std::to_string(k.registers) +
                              " registers per thread)");
  if (c.shared_bytes > k.dynamic_shared_allowed.load(std::memory_order_relaxed)) {
    if (c.shared_bytes + k.static_shared > k.max_shared_optin)
      detail::bad_launch(k, std::to_string(c.shared_bytes) + " bytes of dynamic shared memory plus " +
                                std::to_string(k.static_shared) + " static exceed the device's " +
                                std::to_string(k.max_shared_optin) + " per block");
    const auto& api = detail::api_for_use();
    k.device.activate();
    detail::check(
        detail::need(api.cuFuncSetAttribute, "cuFuncSetAttribute")(
            k.function, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(c.shared_bytes)),
        "cuFuncSetAttribute");
    k.dynamic_shared_allowed.store(c.shared_bytes, std::memory_order_relaxed);
  }
  if (k.params_known) {
    bool same = count == k.param_sizes.size();
    for (std::size_t i = 0; same && i < count; ++i) same = sizes[i] == k.param_sizes[i];
    if (!same)
      detail::bad_launch(k, "the kernel takes " + std::to_string(k.param_sizes.size()) + " parameters of (" +
                                detail::size_list(k.param_sizes.data(), k.param_sizes.size()) +
                                ") bytes; the launch passed " + std::to_string(count) + " of (" +
                                detail::size_list(sizes, count) + ")");
  }
  const Stream& stream = c.stream.get() != nullptr ? *c.stream.get() : k.default_stream;
  if (stream.device() != k.device)
    detail::bad_launch(k, "the stream belongs to " + stream.device().str() +
                              "; load the kernel there with "
                              "Program::kernel(name, device)");
  detail::make_current(k.device.index());
  const detail::DriverApi& api = *detail::driver_api();
  detail::check(
      detail::need(api.cuLaunchKernel, "cuLaunchKernel")(k.function, g.x, g.y, g.z, b.x, b.y, b.z, c.shared_bytes,
                                                         static_cast<cu::CUstream>(stream.handle()), args, nullptr),
      "cuLaunchKernel");
}

}  // namespace xp
