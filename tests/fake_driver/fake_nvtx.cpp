// A fake NVTX tool (libxp_fake_nvtx.so) for tests: what a profiler's injection library does when
// NVTX_INJECTION64_PATH names it. Its InitializeInjectionNvtx2 asks the caller's export table for
// the core module's function slots and fills RangePushA and RangePop with its own, which count the
// ranges and keep their names. The ABI facts (export table 1, the callbacks struct, module 1, ids 9
// and 11) are NVTX's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

using FunctionPointer = void (*)();
struct ExportTableCallbacks {
  std::size_t struct_size;
  int (*get_module_function_table)(int module, FunctionPointer*** out_table, unsigned* out_size);
};

std::mutex g_mutex;
long g_pushes = 0, g_pops = 0, g_depth = 0, g_max_depth = 0;
std::string& g_names = *new std::string();

int range_push(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_pushes;
  g_names += name != nullptr ? name : "(null)";
  g_names += '\n';
  if (++g_depth > g_max_depth) g_max_depth = g_depth;
  return static_cast<int>(g_depth - 1);
}
int range_pop() {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_pops;
  return static_cast<int>(--g_depth);
}

}  // namespace

FAKE_API int InitializeInjectionNvtx2(const void* (*get_export_table)(std::uint32_t)) {
  const auto* callbacks = static_cast<const ExportTableCallbacks*>(get_export_table(1));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(ExportTableCallbacks)) return 0;
  FunctionPointer** table = nullptr;
  unsigned size = 0;
  if (callbacks->get_module_function_table(1, &table, &size) == 0 || table == nullptr || size < 11) return 0;
  *table[9] = reinterpret_cast<FunctionPointer>(&range_push);
  *table[11] = reinterpret_cast<FunctionPointer>(&range_pop);
  return 1;
}

FAKE_API long xp_fake_nvtx_pushes() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_pushes;
}
FAKE_API long xp_fake_nvtx_pops() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_pops;
}
// The names pushed so far, one a line, into out (n bytes with the terminating zero); the length.
FAKE_API long xp_fake_nvtx_names(char* out, long n) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (out != nullptr && n > 0) {
    const std::size_t len = std::min(g_names.size(), static_cast<std::size_t>(n - 1));
    std::memcpy(out, g_names.data(), len);
    out[len] = '\0';
  }
  return static_cast<long>(g_names.size());
}
