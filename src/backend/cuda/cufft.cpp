// cuFFT: found and opened on first use, a bounded cache of plans, Backend::fft (cufft.hpp).
#include "backend/cuda/cufft.hpp"

#include <list>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "backend/cuda/matrix_copy.hpp"
#include "runtime/current.hpp"
#include "xp/error.hpp"
#include "xp/stream.hpp"

namespace xp::detail::cufft {

namespace {

using i64 = std::int64_t;

int cuda_major_of(int library_major) {
  return library_major + 1;  // cuFFT 12 comes with CUDA 13, 11 with CUDA 12
}

template <class F>
void resolve(const DynLib& lib, const char* name, F& slot, std::string& missing) {
  slot = reinterpret_cast<F>(lib.symbol(name));
  if (slot == nullptr && missing.empty()) missing = name;
}

Api table_of(const DynLib& lib, std::string& missing) {
  Api a;
#define XP_CUFFT_RESOLVE(f) resolve(lib, #f, a.f, missing)
  XP_CUFFT_RESOLVE(cufftGetVersion);
  XP_CUFFT_RESOLVE(cufftCreate);
  XP_CUFFT_RESOLVE(cufftDestroy);
  XP_CUFFT_RESOLVE(cufftSetAutoAllocation);
  XP_CUFFT_RESOLVE(cufftMakePlanMany64);
  XP_CUFFT_RESOLVE(cufftSetStream);
  XP_CUFFT_RESOLVE(cufftSetWorkArea);
  XP_CUFFT_RESOLVE(cufftExecC2C);
  XP_CUFFT_RESOLVE(cufftExecZ2Z);
  XP_CUFFT_RESOLVE(cufftExecR2C);
  XP_CUFFT_RESOLVE(cufftExecD2Z);
  XP_CUFFT_RESOLVE(cufftExecC2R);
  XP_CUFFT_RESOLVE(cufftExecZ2D);
#undef XP_CUFFT_RESOLVE
  return a;
}

const char* const kResultNames[] = {"CUFFT_SUCCESS",
                                    "CUFFT_INVALID_PLAN",
                                    "CUFFT_ALLOC_FAILED",
                                    "CUFFT_INVALID_TYPE",
                                    "CUFFT_INVALID_VALUE",
                                    "CUFFT_INTERNAL_ERROR",
                                    "CUFFT_EXEC_FAILED",
                                    "CUFFT_SETUP_FAILED",
                                    "CUFFT_INVALID_SIZE",
                                    "CUFFT_UNALIGNED_DATA",
                                    "CUFFT_INCOMPLETE_PARAMETER_LIST",
                                    "CUFFT_INVALID_DEVICE",
                                    "CUFFT_PARSE_ERROR",
                                    "CUFFT_NO_WORKSPACE",
                                    "CUFFT_NOT_IMPLEMENTED",
                                    "CUFFT_LICENSE_ERROR",
                                    "CUFFT_NOT_SUPPORTED"};

// A plan and what it was made for; work_size: the bytes of work area a transform needs.
struct Plan {
  cufftHandle handle = 0;
  std::size_t work_size = 0;
  std::mutex mutex;  // one transform at a time: the work area and stream are the plan's state
};
using PlanKey = std::tuple<int, int, i64, i64, int>;  // device, cufftType, n, batch, dtype

struct PlanCache {
  std::mutex mutex;
  std::list<std::pair<PlanKey, std::shared_ptr<Plan>>> plans;  // most recently used first
  std::size_t made = 0;
};
PlanCache& plan_cache() {
  static auto* c = new PlanCache();  // never destroyed: plans may be in use at exit
  return *c;
}

int type_of(FftKind kind, DType t) {
  const bool f64 = t == DType::float64 || t == DType::complex128;
  switch (kind) {
    case FftKind::c2c:
      return f64 ? CUFFT_Z2Z : CUFFT_C2C;
    case FftKind::r2c:
      return f64 ? CUFFT_D2Z : CUFFT_R2C;
    case FftKind::c2r:
      return f64 ? CUFFT_Z2D : CUFFT_C2R;
  }
  return CUFFT_C2C;
}

// The plan for a key, from the cache or made (and cached, the least recently used one destroyed
// past kPlanCacheSize once the device's stream has finished with it).
std::shared_ptr<Plan> plan_for(const Api& api, const Device& device, int type, i64 n, i64 batch, DType dtype) {
  PlanCache& c = plan_cache();
  const PlanKey key{device.index(), type, n, batch, static_cast<int>(dtype)};
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto it = c.plans.begin(); it != c.plans.end(); ++it) {
    if (it->first != key) continue;
    c.plans.splice(c.plans.begin(), c.plans, it);
    return c.plans.front().second;
  }
  auto plan = std::make_shared<Plan>();
  check(api.cufftCreate(&plan->handle), "cufftCreate");
  try {
    check(api.cufftSetAutoAllocation(plan->handle, 0), "cufftSetAutoAllocation");
    // The real side has n elements per transform, the complex side n / 2 + 1 (r2c, c2r).
    const i64 complex_n = type == CUFFT_C2C || type == CUFFT_Z2Z ? n : n / 2 + 1;
    const bool real_in = type == CUFFT_R2C || type == CUFFT_D2Z, real_out = type == CUFFT_C2R || type == CUFFT_Z2D;
    long long dims[1] = {n};
    check(api.cufftMakePlanMany64(plan->handle, 1, dims, nullptr, 1, real_in ? n : complex_n, nullptr, 1,
                                  real_out ? n : complex_n, type, batch, &plan->work_size),
          "cufftMakePlanMany64");
  } catch (...) {
    api.cufftDestroy(plan->handle);
    throw;
  }
  ++c.made;
  c.plans.emplace_front(key, plan);
  while (c.plans.size() > kPlanCacheSize) {
    auto& [k, old] = c.plans.back();
    // Transforms of the old plan may still be queued on any stream of its device.
    synchronize(Device::cuda(std::get<0>(k)));
    std::lock_guard<std::mutex> plan_lock(old->mutex);
    api.cufftDestroy(old->handle);
    c.plans.pop_back();
  }
  return plan;
}

}  // namespace

const cuda::LibrarySpec& spec() {
  static const cuda::LibrarySpec s{"libcufft",
                                   "cuFFT",
                                   "XP_CUFFT",
                                   {"libcufft.so.12", "libcufft.so.11"},
                                   {"nvidia/cu13/lib", "nvidia/cufft/lib"},
                                   "nvidia-cufft",
                                   "cufftGetVersion",
                                   &cuda_major_of};
  return s;
}

const Library& library() noexcept {
  static Api api;
  static const Library lib = cuda::load_library(spec(), api, table_of);
  return lib;
}

std::string result_name(cufftResult r) {
  if (r >= 0 && r < static_cast<int>(std::size(kResultNames))) return kResultNames[r];
  return "CUFFT_UNKNOWN_ERROR";
}

void check(cufftResult r, const char* call) {
  if (r == CUFFT_SUCCESS) return;
  throw Error(std::string(call) + " failed: " + result_name(r) + " (" + std::to_string(r) + ")");
}

std::size_t cached_plans() noexcept {
  PlanCache& c = plan_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.plans.size();
}
std::size_t plans_made() noexcept {
  PlanCache& c = plan_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.made;
}

bool device_fft(Backend& backend, const Device& device, const FftCall& call, const View& in, const View& out) {
  const Library& lib = library();
  if (lib.api == nullptr) return false;
  const Api& api = *lib.api;
  const i64 n = call.n;
  const View& real_side = call.kind == FftKind::r2c ? in : out;
  const View& complex_side = call.kind == FftKind::r2c ? out : in;
  const i64 last = call.kind == FftKind::c2c ? n : n / 2 + 1;
  const i64 total = call.kind == FftKind::c2c ? in.size() : complex_side.size();
  if (n <= 0 || total == 0) return true;
  const i64 batch = total / last;
  const DType cdt = call.kind == FftKind::c2c ? in.dtype : complex_side.dtype;
  if (!is_complex(cdt)) throw ValueError("fft: the complex side is not complex");
  (void)real_side;
  const int type = type_of(call.kind, cdt);
  detail::activate_context(device);
  std::shared_ptr<Plan> plan = plan_for(api, device, type, n, batch, cdt);
  // cuFFT's complex-to-real transform overwrites its input: it reads a copy. cuFFT does not promise
  // to ignore the imaginary parts of the first and (n even) middle elements, which the contract
  // ignores: they are zeroed in the copy.
  Allocation copy;
  std::byte* src = in.data;
  if (call.kind == FftKind::c2r) {
    const std::size_t bytes = static_cast<std::size_t>(total) * itemsize(cdt);
    copy = backend.allocate(bytes);
    cuda::copy_matrices(backend, cdt, 1, 1, total, cuda::row_major(in.data, 1, total),
                        cuda::row_major(copy.data, 1, total));
    const DType part = component_dtype(cdt);
    const i64 pe = static_cast<i64>(itemsize(part)), row = last * 2 * pe;
    cuda::zero(backend, part, copy.data + pe, batch, row);
    if (n % 2 == 0) cuda::zero(backend, part, copy.data + (last - 1) * 2 * pe + pe, batch, row);
    src = copy.data;
  }
  Allocation work;
  if (plan->work_size > 0) work = backend.allocate(plan->work_size);
  {
    std::lock_guard<std::mutex> lock(plan->mutex);
    check(api.cufftSetStream(plan->handle, static_cast<cudaStream_t>(work_stream(device).handle())), "cufftSetStream");
    check(api.cufftSetWorkArea(plan->handle, work.data), "cufftSetWorkArea");
    const int direction = call.inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
    switch (type) {
      case CUFFT_C2C:
        check(api.cufftExecC2C(plan->handle, src, out.data, direction), "cufftExecC2C");
        break;
      case CUFFT_Z2Z:
        check(api.cufftExecZ2Z(plan->handle, src, out.data, direction), "cufftExecZ2Z");
        break;
      case CUFFT_R2C:
        check(api.cufftExecR2C(plan->handle, src, out.data), "cufftExecR2C");
        break;
      case CUFFT_D2Z:
        check(api.cufftExecD2Z(plan->handle, src, out.data), "cufftExecD2Z");
        break;
      case CUFFT_C2R:
        check(api.cufftExecC2R(plan->handle, src, out.data), "cufftExecC2R");
        break;
      case CUFFT_Z2D:
        check(api.cufftExecZ2D(plan->handle, src, out.data), "cufftExecZ2D");
        break;
      default:
        break;
    }
  }
  cuda::scale(backend, out.dtype, out.data, out.size(), call.scale);
  return true;
}

}  // namespace xp::detail::cufft

namespace xp::detail::cuda {
CudaLibraryReport cufft_report() noexcept {
  try {
    return library_report(cufft::library().search);
  } catch (const std::exception& e) {
    CudaLibraryReport r;
    r.unavailable = std::string("cuFFT report failed: ") + e.what();
    return r;
  }
}
}  // namespace xp::detail::cuda
