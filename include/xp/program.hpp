#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "xp/buffer.hpp"
#include "xp/device.hpp"
#include "xp/error.hpp"
#include "xp/export.hpp"
#include "xp/stream.hpp"

namespace xp {

// A GPU architecture to compile for: Arch::sm(90) is sm_90.
struct Arch {
  int number = 0;
  static Arch sm(int n) { return Arch{n}; }
  std::string str() const { return "sm_" + std::to_string(number); }
  bool operator==(const Arch&) const = default;
};

// NVRTC (or, for the CPU, the host C++ compiler) rejected the source or its options, or there is
// no compiler to run (nvrtc_error() then says why and how to fix it). Keeps the whole log.
class XP_API CompileError : public Error {
 public:
  CompileError(std::string program, std::string log, int line, std::string nvrtc_error);
  ~CompileError() override;
  const std::string& program() const noexcept { return program_; }
  const std::string& log() const noexcept { return log_; }
  int line() const noexcept { return line_; }  // the first error's line; 0 when unknown
  const std::string& nvrtc_error() const noexcept { return nvrtc_error_; }

 private:
  std::string program_, log_;
  int line_;
  std::string nvrtc_error_;
};

// The caches key a program by everything that decides its code: the source, these options, the
// target, NVRTC's and the toolkit headers' versions, and the content of every file its #include
// directives reach (followed as NVRTC resolves them: the folder of `name` for quoted includes, then
// each -I folder; a place looked in and found empty counts too). A Program compiles once per
// target; a new Program sees a header that changed since.
struct ProgramOptions {
  // Shown in NVRTC's messages; its folder part (relative to the working folder) is where the
  // source's quoted includes are looked for first, as for a file of that path.
  std::string name = "program.cu";
  std::vector<std::string> options{};                          // NVRTC options: "-std=c++17", "-DN=4", ...
  std::vector<std::string> name_expressions{};                 // "axpy<float>": templates to instantiate and find
  std::vector<std::pair<std::string, std::string>> headers{};  // (include name, content)
  bool ptx = false;                                            // PTX instead of a cubin for the exact SM
};

struct CompileStats {
  std::string target;       // "sm_90" (cubin) or "compute_90" (PTX)
  bool memory_hit = false;  // found in this process
  bool disk_hit = false;    // found in the disk cache
  double compile_ms = 0;    // NVRTC's time; 0 on a hit
  double total_ms = 0;      // lookup + compile + store
  std::size_t binary_bytes = 0;
  std::string log;         // NVRTC's warnings, if any
  std::string cache_file;  // the disk entry, when the disk cache is in use
  // Why neither cache was used, when so: an #include that xp cannot follow (one that names its file
  // through a macro, a file that is not a regular one or is over 64 MiB). Such a program compiles
  // each time a new Program asks for it.
  std::string not_cached;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  Dim3() = default;
  Dim3(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT: implicit on purpose
};

// The stream of a launch, named by reference or pointer (`.stream = st` or `.stream = &st`); none
// means the calling thread's current stream of the kernel's device (current_stream). Holds no reference count: the
// stream must outlive the launch call, which it does in a designated initializer.
class StreamRef {
 public:
  StreamRef() = default;
  StreamRef(const Stream& s) : stream_(&s) {}  // NOLINT: implicit on purpose
  StreamRef(const Stream* s) : stream_(s) {}   // NOLINT: implicit on purpose
  const Stream* get() const noexcept { return stream_; }

 private:
  const Stream* stream_ = nullptr;
};

struct LaunchConfig {
  Dim3 grid{};
  Dim3 block{};
  unsigned shared_bytes = 0;  // dynamic shared memory
  StreamRef stream{};         // none: the current stream of the kernel's device
};

// What a launch argument of a type that is more than its bytes (xp::Array) sees: such a type
// provides `kernel_arg(const T&, KernelArgContext&)`, found by argument-dependent lookup, which
// returns the trivially copyable value the kernel gets and may ask the launch to hold one reference
// until the stream has run the kernel. array.hpp provides it for Array.
class KernelArgContext {
 public:
  // `stream`: the launch's, or null for the calling thread's current stream of the device.
  KernelArgContext(const Device& device, std::shared_ptr<const void>* slots, std::size_t capacity,
                   const Stream* stream = nullptr) noexcept
      : device_(device), slots_(slots), capacity_(capacity), stream_(stream) {}
  const Device& device() const noexcept { return device_; }  // the kernel's
  const Stream* stream() const noexcept { return stream_; }  // the launch's; null: the current one
  // Held until the launch's stream has run the kernel. One per argument: ValueError beyond.
  // stream_ordered: the memory, once released, is used again only by work ordered after the
  // stream that last used it (xp's pool), so that the launch need not hold it.
  void keep_alive(std::shared_ptr<const void> ref, bool stream_ordered = false) {
    if (kept_ == capacity_) throw ValueError("a kernel argument kept more than one reference alive");
    slots_[kept_++] = std::move(ref);
    if (!stream_ordered) ++unordered_;
  }
  std::size_t kept() const noexcept { return kept_; }
  bool stream_ordered() const noexcept { return unordered_ == 0; }  // every reference kept is

 private:
  Device device_;
  std::shared_ptr<const void>* slots_;
  std::size_t capacity_;
  const Stream* stream_;
  std::size_t kept_ = 0;
  std::size_t unordered_ = 0;
};

namespace detail {
struct KernelState;
struct ProgramState;
// How each launch argument reaches the kernel: buffers as their device address, pointers as
// themselves, trivially copyable values by value, and types with a kernel_arg (above) as it says.
inline std::uint64_t pack_arg(const Buffer& b) {
  return b.address();
}
template <class T>
T pack_arg(const T& v) {
  static_assert(std::is_trivially_copyable_v<T>, "a kernel argument must be trivially copyable");
  return v;
}
template <class T>
concept CustomKernelArg = requires(const T& v, KernelArgContext& c) {
  kernel_arg(v, c);
};
template <class T>
auto pack_launch_arg(const T& v, KernelArgContext& c) {
  if constexpr (CustomKernelArg<T>) {
    auto packed = kernel_arg(v, c);
    static_assert(std::is_trivially_copyable_v<decltype(packed)>, "kernel_arg must return a trivially copyable value");
    return packed;
  } else {
    return pack_arg(v);
  }
}
}  // namespace detail

class Program;
namespace detail {
struct KernelAccess;  // xp's own kernels of generated programs (src/jit/generated.hpp)
}

// The NVRTC xp compiles with and the headers it gives it.
struct CompilerInfo {
  bool available = false;
  std::string error;  // why not, when not
  std::string nvrtc_path, nvrtc_version;
  std::vector<std::string> include_dirs;  // the toolkit's include (and include/cccl), passed with -I
  bool cccl_found = false;                // CUB/Thrust/libcu++ headers
  std::string toolkit_headers_version;    // CUDA_VERSION of those headers, e.g. 13000
};
XP_API CompilerInfo compiler_info() noexcept;

// The C++ compiler xp builds CUDA kernels for the CPU with (XP_HOST_CXX, else c++ on PATH).
struct HostCompilerInfo {
  bool available = false;
  std::string error;               // why not and how to fix it, when not
  std::string found_by;            // "XP_HOST_CXX" or "PATH"
  std::string path;                // absolute, links resolved
  std::string version;             // the first line of its --version
  std::vector<std::string> flags;  // what every compile passes, before the program's options
};
XP_API HostCompilerInfo host_compiler_info() noexcept;

// One __global__ function of a loaded module, on one device.
class XP_API Kernel {
 public:
  Kernel() = default;
  // Launches with the arguments packed on the stack (no heap allocation) and one cuLaunchKernel.
  // The configuration is checked against the device's limits first, and the argument count and
  // sizes against the kernel's parameters where the driver can say (cuFuncGetParamInfo).
  //
  // xp::Array arguments pass the address of their first element. Before the launch, each is
  // evaluated if lazy and checked to be on the kernel's device (DeviceMismatch); the kernel may
  // write any of them, so pending lazy arrays that read their memory are evaluated first (a
  // read-only array is passed as it is: the kernel must not write it). The launch's stream first
  // waits, on the device, for the stream each array was last used on, and becomes that array's
  // last stream (docs/design.md, "Streams"). Temporaries may be passed: memory from xp's pool goes
  // back to it at once, since the pool reuses it only ordered after the launch's stream; other
  // memory (wrapped, foreign) is held until the stream has run the kernel (an event, checked at
  // later launches; the host never waits for it). Without a stream in the configuration the launch
  // goes to the calling thread's current stream of the kernel's device (current_stream).
  template <class... Args>
  void launch(const LaunchConfig& config, const Args&... args) const {
    constexpr std::size_t kCustom = (std::size_t{0} + ... + std::size_t{detail::CustomKernelArg<Args>});
    void* pointers[sizeof...(Args) + 1] = {};
    std::size_t sizes[sizeof...(Args) + 1] = {};
    auto point = [&](auto&... a) {
      std::size_t i = 0;
      ((pointers[i] = static_cast<void*>(&a), sizes[i] = sizeof(a), ++i), ...);
    };
    if constexpr (kCustom == 0) {
      auto packed = std::make_tuple(detail::pack_arg(args)...);
      std::apply(point, packed);
      launch_packed(config, pointers, sizes, sizeof...(Args));
    } else {
      std::shared_ptr<const void> refs[kCustom];
      KernelArgContext context(device(), refs, kCustom, config.stream.get());
      auto packed = std::tuple{detail::pack_launch_arg(args, context)...};  // left to right
      std::apply(point, packed);
      launch_holding(config, pointers, sizes, sizeof...(Args), refs, context.kept(), context.stream_ordered());
    }
  }

  const std::string& name() const;  // as the module knows it (mangled for templates)
  const Device& device() const;
  void* handle() const;  // the CUfunction
  // The block size that maximizes occupancy (cuOccupancyMaxPotentialBlockSize), and the grid
  // that fills the device at that size.
  int max_potential_block_size(std::size_t dynamic_shared_bytes = 0, int* min_grid = nullptr) const;
  // How many blocks of `block_threads` threads one multiprocessor runs at once
  // (cuOccupancyMaxActiveBlocksPerMultiprocessor).
  int max_active_blocks(int block_threads, std::size_t dynamic_shared_bytes = 0) const;
  // Parameter count and sizes when the driver reports them (cuFuncGetParamInfo), else empty.
  const std::vector<std::size_t>& parameter_sizes() const;
  int registers() const;

  void launch_packed(const LaunchConfig& config, void** args, const std::size_t* sizes, std::size_t count) const;
  // launch_packed, then `refs` held until the stream has run the kernel (see launch); not held when
  // `stream_ordered` (KernelArgContext::stream_ordered).
  void launch_holding(const LaunchConfig& config, void** args, const std::size_t* sizes, std::size_t count,
                      std::shared_ptr<const void>* refs, std::size_t nrefs, bool stream_ordered = false) const;

 private:
  friend class Program;
  friend struct detail::KernelAccess;
  std::shared_ptr<const detail::KernelState> state_;
};

// CUDA C++ source compiled at run time by NVRTC, through a memory and a disk cache. On the CPU
// (Device::cpu()) the same source is compiled by the machine's C++ compiler with xp's prelude of
// CUDA's built-ins, and its kernels run on xp's CPU threads (docs/cpu-kernels.md).
class XP_API Program {
 public:
  // Throws ValueError for an empty source.
  explicit Program(std::string source, ProgramOptions options = {});

  // Compiles for a device's exact SM, or for the CPU (or fetches from a cache); explicit and
  // optional. On the CPU, a missing compiler or a compile error is a CompileError.
  CompileStats compile(const Device& device);
  // Compiles for an architecture without needing a GPU.
  CompileStats compile(Arch arch);
  // The cubin (or PTX) for an architecture, compiling it if needed.
  const std::vector<char>& binary(Arch arch);
  // Names of the __global__ functions in the compiled code for an architecture.
  std::vector<std::string> kernel_names(Arch arch);
  // The same for a device: its SM's, or on the CPU the kernels xp found (the __global__ functions
  // that are not templates, by name, and the name expressions).
  std::vector<std::string> kernel_names(const Device& device);
  // The mangled name of a name expression given in ProgramOptions.
  std::string lowered_name(const std::string& expression, Arch arch);

  // A kernel by its name or name expression, loaded on a device (compiled at first need).
  // Throws Error listing the module's kernels when there is no such kernel.
  Kernel kernel(std::string_view name, const Device& device);
  Kernel kernel(std::string_view name);  // on default_device()
  // Address and size of a __device__ or __constant__ variable of the module on a device.
  std::uint64_t global_address(std::string_view name, const Device& device, std::size_t* bytes = nullptr);

  const std::string& name() const;

 private:
  friend struct detail::KernelAccess;
  std::shared_ptr<detail::ProgramState> state_;
};

}  // namespace xp
