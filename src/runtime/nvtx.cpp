// NVTX ranges (nvtx.hpp). Two ways in, both opened at run time:
//  - NVTX_INJECTION64_PATH, the tool's library (what `nsys profile` sets): xp offers it NVTX's
//    export table of callbacks, as the NVTX headers do, and the tool fills in the slots of the core
//    module's functions it implements (RangePushA, RangePop among them);
//  - else libnvToolsExt.so.1 (NVTX 2's library, which itself forwards to a tool), its
//    nvtxRangePushA and nvtxRangePop.
// The ABI facts below (the export table ids, the module and callback numbers, the structs'
// layouts) are NVTX's, declared here so that no NVTX header is needed.
#include "runtime/nvtx.hpp"

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "runtime/dynlib.hpp"
#include "runtime/environment.hpp"
#include "runtime/log.hpp"
#include "xp/config.hpp"

namespace xp::detail {

std::atomic<int> g_nvtx_state{0};

namespace {

using PushA = int (*)(const char*);
using Pop = int (*)();
using FunctionPointer = void (*)();

// NVTX's export table ids, callback modules and core callback ids.
constexpr std::uint32_t kExportCallbacks = 1, kExportVersionInfo = 3;
constexpr int kModuleCore = 1, kModules = 7;  // CORE .. SYNC are 1 .. 6
constexpr int kCoreSize = 16, kRangePushA = 9, kRangePop = 11;
constexpr int kOtherSize = 63;  // the other modules: slots nobody reads, more than any of them has
constexpr std::uint32_t kNvtxVersion = 3;

struct ExportTableCallbacks {
  std::size_t struct_size;
  int (*get_module_function_table)(int module, FunctionPointer*** out_table, unsigned* out_size);
};
struct ExportTableVersionInfo {
  std::size_t struct_size;
  std::uint32_t version;
  std::uint32_t reserved0;
  void (*set_injection_nvtx_version)(std::uint32_t version);
};
using InitializeInjection = int (*)(const void* (*get_export_table)(std::uint32_t));

// The slots a tool fills: one function pointer per callback id, and the tables of their addresses.
FunctionPointer g_core[kCoreSize + 1] = {};
FunctionPointer* g_core_table[kCoreSize + 1] = {};
FunctionPointer g_other[kModules][kOtherSize + 1] = {};
FunctionPointer* g_other_table[kModules][kOtherSize + 1] = {};

int get_module_function_table(int module, FunctionPointer*** out_table, unsigned* out_size) {
  if (module < kModuleCore || module >= kModules) return 0;
  if (module == kModuleCore) {
    if (out_table != nullptr) *out_table = g_core_table;
    if (out_size != nullptr) *out_size = kCoreSize;
  } else {
    if (out_table != nullptr) *out_table = g_other_table[module];
    if (out_size != nullptr) *out_size = kOtherSize;
  }
  return 1;
}
void set_injection_nvtx_version(std::uint32_t) {}

const ExportTableCallbacks g_callbacks{sizeof(ExportTableCallbacks), &get_module_function_table};
const ExportTableVersionInfo g_version{sizeof(ExportTableVersionInfo), kNvtxVersion, 0, &set_injection_nvtx_version};

const void* get_export_table(std::uint32_t id) {
  if (id == kExportCallbacks) return &g_callbacks;
  if (id == kExportVersionInfo) return &g_version;
  return nullptr;
}

struct Library {
  PushA push = nullptr;
  Pop pop = nullptr;
  NvtxStatus status;
};

Library open_library() {
  Library lib;
  lib.status.enabled = true;
  const ForeignEnvironment env = foreign_environment();
  if (env.nvtx_injection64_path && !env.nvtx_injection64_path->empty()) {
    DynLib d = DynLib::open(*env.nvtx_injection64_path);
    if (!d.ok()) {
      lib.status.error = "NVTX_INJECTION64_PATH " + *env.nvtx_injection64_path + ": " + d.error();
      return lib;
    }
    auto init = reinterpret_cast<InitializeInjection>(d.symbol("InitializeInjectionNvtx2"));
    if (init == nullptr) {
      lib.status.error = "NVTX_INJECTION64_PATH " + d.path() + " has no InitializeInjectionNvtx2";
      return lib;
    }
    for (int i = 0; i <= kCoreSize; ++i) g_core_table[i] = &g_core[i];
    for (int m = 0; m < kModules; ++m)
      for (int i = 0; i <= kOtherSize; ++i) g_other_table[m][i] = &g_other[m][i];
    if (init(&get_export_table) == 0) {
      lib.status.error = "NVTX_INJECTION64_PATH " + d.path() + ": its InitializeInjectionNvtx2 failed";
      return lib;
    }
    lib.push = reinterpret_cast<PushA>(g_core[kRangePushA]);
    lib.pop = reinterpret_cast<Pop>(g_core[kRangePop]);
    lib.status.library = d.path();
    if (lib.push == nullptr || lib.pop == nullptr)
      lib.status.error = "NVTX_INJECTION64_PATH " + d.path() + " does not take push/pop ranges";
    d.release();  // a tool stays loaded for the life of the process
    return lib;
  }
  DynLib d = DynLib::open("libnvToolsExt.so.1");
  if (!d.ok()) {
    lib.status.error = "neither NVTX_INJECTION64_PATH nor libnvToolsExt.so.1: " + d.error();
    return lib;
  }
  lib.push = reinterpret_cast<PushA>(d.symbol("nvtxRangePushA"));
  lib.pop = reinterpret_cast<Pop>(d.symbol("nvtxRangePop"));
  lib.status.library = d.path();
  if (lib.push == nullptr || lib.pop == nullptr) {
    lib.status.error = d.path() + " lacks nvtxRangePushA or nvtxRangePop";
    lib.push = nullptr, lib.pop = nullptr;
    return lib;
  }
  d.release();
  return lib;
}

Library* g_library = nullptr;  // set once, under g_once, when XP_NVTX is on

void decide() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    bool on = false;
    try {
      on = config().nvtx;
    } catch (...) {  // a malformed configuration is reported by the calls that need it
    }
    if (on) {
      try {
        g_library = new Library(open_library());  // never destroyed: ranges may close at exit
      } catch (...) {
        g_library = nullptr;
      }
      if (g_library != nullptr && !g_library->status.error.empty())
        log(LogLevel::warn, "XP_NVTX=1 but no NVTX ranges are recorded: " + g_library->status.error);
    }
    // On, a library that takes ranges: 2; otherwise 1, so that a range costs one branch from now.
    g_nvtx_state.store(on && g_library != nullptr && g_library->push != nullptr ? 2 : 1, std::memory_order_release);
  });
}

}  // namespace

bool nvtx_push_slow(const char* name) noexcept {
  if (g_nvtx_state.load(std::memory_order_acquire) == 0) decide();
  if (g_nvtx_state.load(std::memory_order_acquire) != 2) return false;
  g_library->push(name);
  return true;
}

void nvtx_pop() noexcept {
  g_library->pop();
}

NvtxStatus nvtx_status() noexcept {
  decide();
  if (g_library == nullptr) return NvtxStatus{};
  return g_library->status;
}

}  // namespace xp::detail
