// The preload of recently used kernels (generated.hpp, start_kernel_preload), the entries a process
// used and the exit hook that writes them ahead of the disk cache's recent list.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <thread>

#include "jit/build_id.hpp"
#include "jit/disk_cache.hpp"
#include "jit/generated.hpp"
#include "jit/hash.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "jit/program_parts.hpp"
#include "runtime/log.hpp"
#include "xp/config.hpp"
#include "xp/runtime.hpp"

namespace xp::detail {

UsedEntries& used_entries() {
  static UsedEntries* u = new UsedEntries();  // never destroyed: read by the exit hook
  return *u;
}
void note_entry_used(const std::string& name) {
  {
    auto& u = used_entries();
    std::lock_guard<std::mutex> lock(u.m);
    if (u.names.size() >= DiskCache::kRecentNames || std::find(u.names.begin(), u.names.end(), name) != u.names.end())
      return;
    u.names.push_back(name);
  }
  ensure_exit_hook();  // a process may use kernels without arrays, so without the CUDA backend's start
}
// The name of an entry's file (its hash in hex), or "" for a path that is not an entry's.
std::string entry_name(const std::string& file) {
  const auto slash = file.rfind('/');
  const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  return base.size() == 36 && base.ends_with(".xpk") ? base.substr(0, 32) : std::string();
}

// The first use of code the preload read: noted, and its entry touched when due.
void note_use(const Compiled& c) {
  if (!c.first_use_pending.load(std::memory_order_relaxed) || !c.first_use_pending.exchange(false)) return;
  note_entry_used(c.preloaded_name);
  if (c.touch) DiskCache::instance().touch(DiskCache::instance().file_of_name(c.preloaded_name));
}

namespace {

struct PreloadState {
  std::mutex m;
  std::condition_variable done;
  int running = 0;
  bool exit_hook = false;
  std::atomic<bool> stop{false};
  std::map<int, PreloadReport> reports;  // by device ordinal, once its preload has ended
};
PreloadState& preload_state() {
  static PreloadState* s = new PreloadState();  // never destroyed: the exit hook and threads use it
  return *s;
}

// At exit, a preload still running is told to stop and waited for, so that it is not inside the
// driver while the process tears the driver down; then the entries this process used go ahead of
// the recent list. The hook is registered after cuInit (a device is in use), so it runs before
// anything the driver registered. A forked child has no such thread and leaves the list alone.
void stop_preloads() {
  if (forked_after_init()) return;
  auto& s = preload_state();
  s.stop = true;
  std::unique_lock<std::mutex> lock(s.m);
  s.done.wait(lock, [&] { return s.running == 0; });
}

void at_exit() {
  stop_preloads();
  if (forked_after_init()) return;
  try {
    std::vector<std::string> used;
    {
      auto& u = used_entries();
      std::lock_guard<std::mutex> lock(u.m);
      used = u.names;
    }
    DiskCache::instance().remember(used);
  } catch (...) {  // at exit: the list is only a hint
  }
}

}  // namespace

bool ensure_exit_hook() {
  auto& s = preload_state();
  std::lock_guard<std::mutex> lock(s.m);
  if (!s.exit_hook && !s.stop) s.exit_hook = std::atexit(at_exit) == 0;
  return s.exit_hook;
}

namespace {

std::atomic<int> g_preload_delay_ms{0};  // set_preload_delay_for_tests

PreloadReport preload(const Device& device, std::size_t max_modules) {
  PreloadReport r;
  const auto t0 = Clock::now();
  if (preload_state().stop.load()) {
    r.note = "stopped at exit";
    return r;
  }
  if (const int ms = g_preload_delay_ms.load(); ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  auto& disk = DiskCache::instance();
  if (!disk.usable()) {
    r.note = "no disk cache: " + disk.problem();
    return r;
  }
  const int arch = device_arch(device);
  const NvrtcCompiler& nvrtc = NvrtcCompiler::instance();
  if (!nvrtc.supports(arch)) {
    r.note = "NVRTC " + nvrtc.library().version + " cannot compile for sm_" + std::to_string(arch);
    return r;
  }
  const bool ptx = arch > nvrtc.newest_arch();
  const int target = std::min(arch, nvrtc.newest_arch());
  const std::string generated_head = generated_key_head(nvrtc, ptx, target);
  std::string program_head;
  try {
    program_head = program_key_head(nvrtc, ptx, target);
  } catch (const std::exception&) {  // the toolkit's headers not found: programs are then not preloaded
  }
  const std::int64_t now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  // Code by its binary: one module for one binary, should two names hold it.
  std::vector<std::pair<Hash128, std::shared_ptr<const Compiled>>> seen;
  auto known = [&](const Hash128& h, const std::vector<char>& binary) -> std::shared_ptr<const Compiled> {
    for (const auto& [sh, code] : seen)
      if (sh == h && code->binary == binary) return code;
    return nullptr;
  };
  for (const std::string& name : disk.recent()) {
    if (r.modules >= max_modules) break;
    if (preload_state().stop.load()) {
      r.note = "stopped at exit";
      break;
    }
    std::string key;
    std::vector<char> payload;
    std::int64_t modified_ns = 0;
    if (!disk.read_entry(disk.file_of_name(name), key, payload, &modified_ns)) continue;  // evicted, or damaged
    ++r.entries_read;
    // Entries of another build of xp, NVRTC version or GPU are not this process's.
    const bool generated = !generated_head.empty() && key.starts_with(generated_head);
    const bool program = !generated && !program_head.empty() && key.starts_with(program_head);
    if (!generated && !program) continue;
    const std::string hash = hash128(key).hex();
    if (hash != name) continue;  // a file under another entry's name
    auto c = std::make_shared<Compiled>();
    if (!unpack_payload(payload, *c)) continue;
    const Hash128 binary_hash = hash128_bytes(c->binary.data(), c->binary.size(), 0);
    std::shared_ptr<const Compiled> code = known(binary_hash, c->binary);
    // Touched at its first use unless it was touched within the minute (as a disk hit does).
    const bool touch = now_ns - modified_ns > std::int64_t{60} * 1000000000;
    std::optional<std::string_view> kernel_name, program_name;
    if (generated) {
      kernel_name = field_value(key, "kernel", generated_head.size());
      program_name = field_value(key, "name", generated_head.size());
      if (!kernel_name || !program_name) continue;
      if (!code) {
        c->key = key;
        code = c;
      }
      // Code there already (the process found it first, or another device's preload did) is used
      // as it is: its module is loaded on this device too.
      auto& cache = generated_cache();
      std::lock_guard<std::mutex> lock(cache.m);
      const auto [it, fresh] = cache.by_hash.try_emplace(hash, GeneratedCache::Value{key, code, name, touch});
      if (!fresh) {
        if (it->second.key != key) continue;
        code = it->second.code;
      }
    } else {
      if (code) continue;  // its binary is on the way already
      auto& mem = memory_cache();
      std::lock_guard<std::mutex> lock(mem.m);
      auto it = mem.by_hash.find(hash);
      if (it == mem.by_hash.end()) {
        c->key = std::move(key);
        c->preloaded_name = name;
        c->touch = touch;
        c->first_use_pending = true;
        it = mem.by_hash.emplace(hash, c).first;
      } else if (it->second->key != key) {
        continue;
      }
      code = it->second;
    }
    if (!known(binary_hash, code->binary)) seen.emplace_back(binary_hash, code);
    try {
      const bool loaded = module_loaded(*code, device);
      const auto module = module_of(code, device);
      r.modules += loaded ? 0 : 1;
      if (generated) {
        KernelAccess::look_up_ahead(module, *kernel_name, std::string(*program_name));
        ++r.kernels;
      }
    } catch (const std::exception& ex) {  // the kernel's own lookup tries again and reports it
      ++r.failed;
      r.note = ex.what();
    }
  }
  r.ms = ms_since(t0);
  return r;
}

}  // namespace

void start_kernel_preload(const Device& device) noexcept {
  prepare_generated_kernels(device);
  try {
    if (!device.is_cuda()) return;
    // Registered even without a preload: the process's kernels are noted for the next.
    if (!ensure_exit_hook()) return;
    const std::size_t n = config().preload_kernels;
    if (n == 0) return;
    // Also registered here, after prepare_generated_kernels: exit handlers run in reverse order, so
    // this one stops the thread before anything made up to now is destroyed, even where the hook
    // above came first (a process that used a program's kernel before any array).
    if (std::atexit(stop_preloads) != 0) return;
    auto& s = preload_state();
    {
      std::lock_guard<std::mutex> lock(s.m);
      if (s.stop) return;
      ++s.running;
    }
    try {
      std::thread([device, n] {
        PreloadReport r;
        try {
          r = preload(device, n);
        } catch (const std::exception& e) {  // what it loaded stays loaded; a kernel's own lookup reports
          r.note = e.what();
        } catch (...) {
          r.note = "stopped by an unknown exception";
        }
        r.ran = true;
        log(LogLevel::debug, "preloaded " + std::to_string(r.modules) + " modules (" + std::to_string(r.kernels) +
                                 " generated kernels) of " + std::to_string(r.entries_read) +
                                 " recently used cache entries read onto " + device.str() + " in " +
                                 std::to_string(r.ms) + " ms" + (r.note.empty() ? "" : ": " + r.note));
        auto& st = preload_state();
        std::lock_guard<std::mutex> lock(st.m);
        st.reports[device.index()] = r;
        --st.running;
        st.done.notify_all();
      }).detach();
    } catch (...) {  // no thread: nothing is preloaded
      std::lock_guard<std::mutex> lock(s.m);
      --s.running;
      s.done.notify_all();
    }
  } catch (...) {  // a malformed XP_PRELOAD_KERNELS is reported where a kernel is needed
  }
}

void set_preload_delay_for_tests(int ms) {
  g_preload_delay_ms = ms;
}

PreloadReport wait_for_kernel_preload(const Device& device) {
  auto& s = preload_state();
  std::unique_lock<std::mutex> lock(s.m);
  s.done.wait(lock, [&] { return s.running == 0; });
  const auto it = s.reports.find(device.index());
  return it != s.reports.end() ? it->second : PreloadReport{};
}

}  // namespace xp::detail
