#pragma once

// What the files of xp::Program share (docs/design.md, "Caches"): the compiled code and its loaded
// modules, a program's state, the key material's fields, and the access to Program's and Kernel's
// insides. program.cpp: the Program API and its compile; program_key.cpp: the key material;
// code_cache.cpp: the in-process caches of code and modules; generated.cpp: generated kernels by
// the generator's key; preload.cpp: the preload of recently used kernels, the recent list and the
// exit hook. Internal to src/jit.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jit/cubin.hpp"
#include "jit/kernel_state.hpp"
#include "runtime/current.hpp"
#include "runtime/driver.hpp"
#include "xp/program.hpp"

namespace xp::detail {

class NvrtcCompiler;
struct CpuModule;

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Compiled {
  std::string key;  // the full key material
  std::vector<char> binary;
  ModuleInfo info;
  std::vector<std::pair<std::string, std::string>> lowered;
  std::string log;
  // Read ahead of its use by the preload of recently used kernels: the name of the disk entry it
  // came from, noted as used when the process first uses it, and then touched (for least recently
  // used eviction) when `touch`, as a disk hit is.
  std::string preloaded_name;
  bool touch = false;
  mutable std::atomic<bool> first_use_pending{false};
};

// ---- the key material (program_key.cpp) ----

// One field of key material: "label size\nvalue\n".
void put_field(std::string& out, const std::string& label, const std::string& value);
// The fields of a program's options, in the order both keys (a program's and a generated kernel's)
// have always written them.
void put_options(std::string& k, const ProgramOptions& options);
// The key material of a program's disk entry up to its options: everything but the program.
std::string program_key_head(const NvrtcCompiler& nvrtc, bool ptx, int target);
// The same for a generated kernel's entry; "" without a build ID.
std::string generated_key_head(const NvrtcCompiler& nvrtc, bool ptx, int target);
// The value of the field `label` of key material written by put_field, read from `from` on (past
// the material's first line); nullopt when absent or when the fields do not parse.
std::optional<std::string_view> field_value(std::string_view k, std::string_view label, std::size_t from);
// The SM number of a usable CUDA device (90); DeviceUnavailable otherwise.
int device_arch(const Device& device);

// ---- code and modules in the process (code_cache.cpp) ----

// Lowered names travel with the binary in the cache payload: "expr\tlowered\n"... then a NUL,
// then the binary.
std::vector<char> pack_payload(const Compiled& c);
bool unpack_payload(const std::vector<char>& p, Compiled& c);

struct MemoryCache {
  std::mutex m;
  std::unordered_map<std::string, std::shared_ptr<const Compiled>> by_hash;  // hex of the key's hash
};
MemoryCache& memory_cache();

// A module loaded on one device, with the kernels looked up in it. Shared by every Program of
// the same code in the process (see module_for).
struct Module {
  Device device;
  cu::CUmodule handle = nullptr;
  std::shared_ptr<const Compiled> code;
  std::mutex m;
  std::map<std::string, std::shared_ptr<const KernelState>, std::less<>> kernels;
  ~Module() {
    if (handle != nullptr && !forked_after_init()) {
      if (const auto* api = driver_api(); api != nullptr && api->cuModuleUnload != nullptr) {
        try {
          detail::activate_context(device);
          api->cuModuleUnload(handle);
        } catch (...) {
        }
      }
    }
  }
};

// The module of this code on this device, loaded on first use; whether it is loaded already.
std::shared_ptr<Module> module_of(const std::shared_ptr<const Compiled>& code, const Device& device);
bool module_loaded(const Compiled& code, const Device& device);

// ---- a Program (program.cpp) ----

struct ProgramState {
  ProgramOptions options;
  // The key material minus the target and NVRTC version. It ends with the source and a newline:
  // the source is kept there only, not in a copy of its own.
  std::string key_base;
  std::size_t source_at = 0;
  std::string_view source() const {
    return std::string_view(key_base).substr(source_at, key_base.size() - 1 - source_at);
  }
  std::mutex m;
  std::map<int, std::shared_ptr<const Compiled>> by_target;  // arch * 2 + ptx
  std::map<int, std::shared_ptr<Module>> modules;            // by device ordinal
  std::shared_ptr<CpuModule> cpu_module;                     // compiled for the CPU (cpu_program.cpp)
};

// The code of a program for a target: from the program, the memory cache, the disk cache or NVRTC.
std::shared_ptr<const Compiled> build(ProgramState& st, Arch arch, CompileStats& stats);
// The program's module on a device. `note`: a program of the user's (not one compiled for a
// generated kernel): the disk entry it came from or went to is noted as used, for the recent list.
std::shared_ptr<Module> module_for(Program& p, ProgramState& st, const Device& device, bool note = true);

// ---- the entries a process used, the recent list and the exit hook (preload.cpp) ----

// The disk entries this process used, by name, first used first: written ahead of the recent
// list at exit (DiskCache::remember), for the next process's preload.
struct UsedEntries {
  std::mutex m;
  std::vector<std::string> names;
};
UsedEntries& used_entries();
// Registers, once, the exit hook that writes the recent list (and stops a preload): false if the
// C library refused it.
bool ensure_exit_hook();
void note_entry_used(const std::string& name);
// The name of an entry's file (its hash in hex), or "" for a path that is not an entry's.
std::string entry_name(const std::string& file);
// The first use of code the preload read: noted, and its entry touched when due.
void note_use(const Compiled& c);

// ---- generated kernels (generated.cpp) ----

// Generated kernels by the hash of their key material: the material (to rule out a collision)
// and the code, the same object as Program's memory cache holds, so that one module serves both.
struct GeneratedCache {
  std::mutex m;
  struct Value {
    std::string key;
    std::shared_ptr<const Compiled> code;
    // Set by the preload: the entry's name, noted as used at the first use (cleared then), and
    // whether its time is to be renewed then.
    std::string preloaded_name;
    bool touch = false;
  };
  std::unordered_map<std::string, Value> by_hash;
};
GeneratedCache& generated_cache();

struct KernelAccess {
  // The program's kernel `name` on the CPU, its kernels' names there, a variable's address
  // (cpu_program.cpp).
  static Kernel on_cpu(ProgramState& st, std::string_view name, const std::string& program_name);
  static std::vector<std::string> cpu_kernel_names(ProgramState& st);
  static std::uint64_t cpu_global_address(ProgramState& st, std::string_view name, std::size_t* bytes);

  // The kernel `name` of a loaded module (of the program called program_name, for messages).
  static Kernel in_module(const std::shared_ptr<Module>& module, std::string_view name,
                          const std::string& program_name) {
    Kernel k;
    {
      std::lock_guard<std::mutex> lock(module->m);
      if (auto it = module->kernels.find(name); it != module->kernels.end()) {
        k.state_ = it->second;
        return k;
      }
    }
    std::string symbol(name);
    for (const auto& [e, l] : module->code->lowered)
      if (e == name) symbol = l;
    const auto& kernels = module->code->info.kernels;
    if (std::find(kernels.begin(), kernels.end(), symbol) == kernels.end()) {
      std::string list;
      for (const auto& n : kernels) list += (list.empty() ? "" : ", ") + n;
      throw ValueError("no kernel '" + std::string(name) + "' in " + program_name +
                       "; it has: " + (list.empty() ? "no __global__ function" : list) +
                       (symbol == name ? "" : " (looked for the lowered name " + symbol + ")") +
                       ". A C++ kernel needs extern \"C\" or a name expression in ProgramOptions");
    }
    const auto& params = module->code->info.params;
    const auto found = params.find(symbol);
    auto state = make_kernel_state(module, module->handle, module->device, std::move(symbol),
                                   found != params.end() ? &found->second : nullptr);
    std::lock_guard<std::mutex> lock(module->m);
    k.state_ = module->kernels.emplace(std::string(name), std::move(state)).first->second;
    return k;
  }

  // in_module, with the kernel's own limits asked of the driver now rather than at its first launch.
  static void look_up_ahead(const std::shared_ptr<Module>& module, std::string_view name,
                            const std::string& program_name) {
    const Kernel k = in_module(module, name, program_name);
    (void)function_limits(*k.state_);
  }

  static Kernel generated(const std::string& generator_key, const std::function<std::string()>& make_source,
                          const ProgramOptions& options, std::string_view kernel_name, const Device& device);

  // Another kernel of the module k was found in.
  static Kernel sibling(const Kernel& k, std::string_view name, const std::string& program_name) {
    if (!k.state_) throw ValueError("no kernel '" + std::string(name) + "' in " + program_name + ": an empty Kernel");
    auto module = std::static_pointer_cast<Module>(std::const_pointer_cast<void>(k.state_->module));
    return in_module(module, name, program_name);
  }
};

}  // namespace xp::detail
