// xp::Program: source -> NVRTC -> cubin, through the in-process and disk caches; modules loaded
// once per device.
#include "xp/program.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "jit/build_id.hpp"
#include "jit/cubin.hpp"
#include "jit/disk_cache.hpp"
#include "jit/generated.hpp"
#include "jit/hash.hpp"
#include "jit/includes.hpp"
#include "jit/kernel_state.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "runtime/driver.hpp"
#include "runtime/log.hpp"
#include "xp/config.hpp"
#include "xp/runtime.hpp"
#include "xp/version.hpp"

namespace xp {

namespace cu = detail::cu;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int first_error_line(const std::string& log, const std::string& program) {
  // NVRTC writes "name(LINE): error: ..." ("catastrophic error" for a missing include)
  size_t pos = 0;
  while ((pos = log.find("): ", pos)) != std::string::npos) {
    const bool error = log.compare(pos + 3, 6, "error:") == 0 || log.compare(pos + 3, 19, "catastrophic error:") == 0;
    const size_t open = log.rfind('(', pos);
    if (error && open != std::string::npos && open >= program.size() &&
        log.compare(open - program.size(), program.size(), program) == 0) {
      return std::atoi(log.c_str() + open + 1);
    }
    pos += 3;
  }
  return 0;
}

void put_field(std::string& out, const std::string& label, const std::string& value) {
  out += label;
  out += ' ';
  out += std::to_string(value.size());
  out += '\n';
  out += value;
  out += '\n';
}

// The fields of a program's options, in the order both keys (a program's and a generated kernel's)
// have always written them.
void put_options(std::string& k, const ProgramOptions& options) {
  put_field(k, "name", options.name);
  put_field(k, "options", std::to_string(options.options.size()));
  for (const auto& o : options.options) put_field(k, "option", o);
  put_field(k, "expressions", std::to_string(options.name_expressions.size()));
  for (const auto& e : options.name_expressions) put_field(k, "expression", e);
  put_field(k, "headers", std::to_string(options.headers.size()));
  for (const auto& [n, c] : options.headers) {
    put_field(k, "header", n);
    put_field(k, "content", c);
  }
}

}  // namespace

CompileError::CompileError(std::string program, std::string log, int line, std::string nvrtc_error)
    : Error("compiling " + program + " failed (" + nvrtc_error + ")" +
            (line > 0 ? " at line " + std::to_string(line) : std::string()) + ":\n" + log),
      program_(std::move(program)),
      log_(std::move(log)),
      line_(line),
      nvrtc_error_(std::move(nvrtc_error)) {}
CompileError::~CompileError() = default;

namespace detail {

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

// The disk entries this process used, by name, first used first: written ahead of the recent
// list at exit (DiskCache::remember), for the next process's preload.
struct UsedEntries {
  std::mutex m;
  std::vector<std::string> names;
};
UsedEntries& used_entries() {
  static UsedEntries* u = new UsedEntries();  // never destroyed: read by the exit hook
  return *u;
}
// Registers, once, the exit hook that writes the recent list (and stops a preload): false if the
// C library refused it. Defined with the preload below.
bool ensure_exit_hook();
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

// Lowered names travel with the binary in the cache payload: "expr\tlowered\n"... then a NUL,
// then the binary.
std::vector<char> pack_payload(const Compiled& c) {
  std::string head;
  for (const auto& [e, l] : c.lowered) head += e + '\t' + l + '\n';
  std::vector<char> out(head.begin(), head.end());
  out.push_back('\0');
  out.insert(out.end(), c.binary.begin(), c.binary.end());
  return out;
}

bool unpack_payload(const std::vector<char>& p, Compiled& c) {
  const auto nul = std::find(p.begin(), p.end(), '\0');
  if (nul == p.end()) return false;
  const std::string head(p.begin(), nul);
  size_t pos = 0;
  while (pos < head.size()) {
    const size_t tab = head.find('\t', pos), nl = head.find('\n', pos);
    if (tab == std::string::npos || nl == std::string::npos || tab > nl) return false;
    c.lowered.emplace_back(head.substr(pos, tab - pos), head.substr(tab + 1, nl - tab - 1));
    pos = nl + 1;
  }
  c.binary.assign(nul + 1, p.end());
  c.info = inspect_module(c.binary.data(), c.binary.size());
  return c.info.valid;
}

struct MemoryCache {
  std::mutex m;
  std::unordered_map<std::string, std::shared_ptr<const Compiled>> by_hash;  // hex of the key's hash
};
MemoryCache& memory_cache() {
  static MemoryCache* c = new MemoryCache();  // never destroyed: kernels may outlive static destructors
  return *c;
}

}  // namespace

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
          device.activate();
          api->cuModuleUnload(handle);
        } catch (...) {
        }
      }
    }
  }
};

}  // namespace detail

namespace detail {
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
  std::map<int, std::shared_ptr<const detail::Compiled>> by_target;  // arch * 2 + ptx
  std::map<int, std::shared_ptr<detail::Module>> modules;            // by device ordinal
};
}  // namespace detail

Program::Program(std::string source, ProgramOptions options) {
  if (source.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ValueError("xp::Program: the source of " + options.name + " is empty");
  auto s = std::make_shared<detail::ProgramState>();
  s->options = std::move(options);
  std::string k;
  put_options(k, s->options);
  // The last field, put_field(k, "source", source), written around the source in its own buffer:
  // a generated source has room reserved for it, so its bytes move within memory already touched
  // rather than being copied to memory that is not (this is on the path of a process's first kernel).
  k += "source ";
  k += std::to_string(source.size());
  k += '\n';
  s->source_at = k.size();
  source.insert(0, k);
  source += '\n';
  s->key_base = std::move(source);
  state_ = std::move(s);
}

const std::string& Program::name() const {
  return state_->options.name;
}

namespace detail {

// The key material of a program's disk entry up to its options: everything but the program.
std::string program_key_head(const NvrtcCompiler& nvrtc, bool ptx, int target) {
  std::string k = "xp-kernel-cache 1\n";
  put_field(k, "xp", std::string(version()));
  put_field(k, "nvrtc", nvrtc.library().version);
  put_field(k, "toolkit-headers", nvrtc.headers_version());
  put_field(k, "target", (ptx ? "compute_" : "sm_") + std::to_string(target));
  return k;
}

// The same for a generated kernel's entry; "" without a build ID.
std::string generated_key_head(const NvrtcCompiler& nvrtc, bool ptx, int target) {
  const std::string& id = build_id();
  if (id.empty()) return {};
  std::string k = "xp-generated-kernel 1\n";
  put_field(k, "build", id);
  put_field(k, "xp", std::string(version()));
  put_field(k, "nvrtc", nvrtc.library().version);
  put_field(k, "target", (ptx ? "compute_" : "sm_") + std::to_string(target));
  return k;
}

}  // namespace detail

namespace {

int device_arch(const Device& device) {
  const detail::DriverProbe& p = detail::driver_probe();
  if (p.reason != CudaReason::available || device.index() >= static_cast<int>(p.gpus.size()))
    throw DeviceUnavailable(device.str() + " is not usable" + (p.detail.empty() ? "" : ": " + p.detail));
  const GpuInfo& g = p.gpus[static_cast<size_t>(device.index())];
  return g.cc_major * 10 + g.cc_minor;
}

std::shared_ptr<const detail::Compiled> build(detail::ProgramState& st, Arch arch, CompileStats& stats);

}  // namespace

CompileStats Program::compile(Arch arch) {
  CompileStats stats;
  build(*state_, arch, stats);
  return stats;
}

CompileStats Program::compile(const Device& device) {
  if (!device.is_cuda()) throw ValueError("xp::Program compiles CUDA C++: " + device.str() + " is not a CUDA device");
  return compile(Arch::sm(device_arch(device)));
}

const std::vector<char>& Program::binary(Arch arch) {
  CompileStats stats;
  return build(*state_, arch, stats)->binary;
}

std::vector<std::string> Program::kernel_names(Arch arch) {
  CompileStats stats;
  return build(*state_, arch, stats)->info.kernels;
}

std::string Program::lowered_name(const std::string& expression, Arch arch) {
  CompileStats stats;
  const auto c = build(*state_, arch, stats);
  for (const auto& [e, l] : c->lowered)
    if (e == expression) return l;
  throw ValueError("'" + expression + "' is not a name expression of " + name() +
                   " (give it in ProgramOptions::name_expressions)");
}

namespace {

std::shared_ptr<const detail::Compiled> build(detail::ProgramState& st, Arch arch, CompileStats& stats) {
  const auto t0 = Clock::now();
  const bool want_ptx = st.options.ptx;
  const int slot = arch.number * 2 + (want_ptx ? 1 : 0);
  {
    std::lock_guard<std::mutex> lock(st.m);
    if (auto it = st.by_target.find(slot); it != st.by_target.end()) {
      stats.memory_hit = true;
      stats.target = (it->second->info.is_ptx ? "compute_" : "sm_") + std::to_string(it->second->info.arch);
      stats.binary_bytes = it->second->binary.size();
      stats.total_ms = ms_since(t0);
      return it->second;
    }
  }
  if (arch.number <= 0) throw ValueError("xp::Program: " + arch.str() + " is not an architecture");
  const detail::NvrtcCompiler& nvrtc = detail::NvrtcCompiler::instance();
  if (!nvrtc.supports(arch.number))
    throw Error("NVRTC " + nvrtc.library().version + " (" + nvrtc.library().path + ") cannot compile for " +
                arch.str() + "; NVRTC 13 starts at sm_75: use NVRTC 12 for older GPUs (`xp doctor` says how)");
  const bool ptx = want_ptx || arch.number > nvrtc.newest_arch();
  const int target = arch.number > nvrtc.newest_arch() ? nvrtc.newest_arch() : arch.number;

  // The files the source includes are key material too: a changed header is a new kernel.
  const detail::IncludeScan includes = detail::scan_includes(
      {st.source(), st.options.name, &st.options.options, &st.options.headers, &nvrtc.include_dirs()});
  std::string key;
  key.reserve(256 + st.key_base.size() + includes.key.size());
  key += detail::program_key_head(nvrtc, ptx, target);
  key += st.key_base;
  if (!includes.key.empty()) put_field(key, "includes", includes.key);
  const detail::Hash128 key_hash = detail::hash128(key);
  const std::string hash = key_hash.hex();
  // An include xp cannot follow: neither cache can know when this code is stale.
  const bool cacheable = includes.cacheable;
  if (!cacheable) stats.not_cached = includes.why_not;

  auto& mem = detail::memory_cache();
  std::shared_ptr<const detail::Compiled> result;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mem.m);
    if (auto it = mem.by_hash.find(hash); it != mem.by_hash.end() && it->second->key == key) {
      result = it->second;
      stats.memory_hit = true;
    }
  }
  if (result) detail::note_use(*result);
  if (!result) {
    auto& disk = detail::DiskCache::checked();
    std::vector<char> payload;
    auto c = std::make_shared<detail::Compiled>();
    c->key = std::move(key);  // used as c->key from here on
    if (cacheable && disk.load(c->key, key_hash, payload, &stats.cache_file) == detail::DiskCache::Lookup::hit &&
        detail::unpack_payload(payload, *c)) {
      stats.disk_hit = true;
    } else {
      c->lowered.clear();
      detail::CompileRequest req;
      req.source = std::string(st.source());
      req.name = st.options.name;
      req.options = st.options.options;
      req.name_expressions = st.options.name_expressions;
      req.headers = st.options.headers;
      req.arch = target;
      req.ptx = ptx;
      detail::CompileOutput out = nvrtc.compile(req);
      if (!out.ok)
        throw CompileError(st.options.name, out.log, first_error_line(out.log, st.options.name), out.nvrtc_error);
      stats.compile_ms = out.ms;
      c->binary = std::move(out.binary);
      c->lowered = std::move(out.lowered_names);
      c->log = std::move(out.log);
      c->info = detail::inspect_module(c->binary.data(), c->binary.size());
      if (cacheable) stats.cache_file = disk.store(c->key, key_hash, detail::pack_payload(*c));
    }
    result = c;
    if (cacheable) {
      std::lock_guard<std::mutex> lock(mem.m);
      mem.by_hash[hash] = result;
    }
    if (detail::log_enabled(LogLevel::debug)) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.1f", stats.compile_ms);
      detail::log(LogLevel::debug, std::string(stats.disk_hit ? "disk cache hit: " : "compiled (disk cache miss): ") +
                                       st.options.name + " for " + (ptx ? "compute_" : "sm_") + std::to_string(target) +
                                       (stats.disk_hit ? std::string() : std::string(" in ") + ms + " ms") +
                                       (stats.cache_file.empty() ? std::string() : ", " + stats.cache_file));
    }
  }
  stats.log = result->log;
  {
    std::lock_guard<std::mutex> lock(st.m);
    st.by_target.emplace(slot, result);
  }
  stats.target = (result->info.is_ptx ? "compute_" : "sm_") + std::to_string(result->info.arch);
  stats.binary_bytes = result->binary.size();
  stats.total_ms = ms_since(t0);
  return result;
}

}  // namespace

Kernel Program::kernel(std::string_view name) {
  return kernel(name, default_device());
}

namespace {

// Modules by (compiled code, device): a second Program of the same source finds the module, and
// its kernels, that the first one loaded. Code lives as long as the memory cache, so the pointer
// is a stable key; modules stay loaded for the life of the process.
struct ModuleCache {
  std::mutex m;
  std::map<std::pair<const detail::Compiled*, int>, std::shared_ptr<detail::Module>> modules;
};
ModuleCache& module_cache() {
  static ModuleCache* c = new ModuleCache();  // never destroyed, as the memory cache
  return *c;
}

// The module of this code on this device, loaded on first use.
std::shared_ptr<detail::Module> module_of(const std::shared_ptr<const detail::Compiled>& code, const Device& device) {
  auto& cache = module_cache();
  std::shared_ptr<detail::Module> m;
  {
    std::lock_guard<std::mutex> lock(cache.m);
    if (auto it = cache.modules.find({code.get(), device.index()}); it != cache.modules.end()) return it->second;
  }
  device.activate();
  const auto& api = detail::api_for_use();
  m = std::make_shared<detail::Module>();
  m->device = device;
  m->code = code;
  detail::check(detail::need(api.cuModuleLoadData, "cuModuleLoadData")(&m->handle, code->binary.data()),
                "cuModuleLoadData");
  std::lock_guard<std::mutex> lock(cache.m);
  return cache.modules.emplace(std::make_pair(code.get(), device.index()), m).first->second;
}

// `note`: a program of the user's (not one compiled for a generated kernel): the disk entry it came
// from or went to is noted as used, for the recent list.
// Whether this code's module is loaded on this device already.
bool module_loaded(const detail::Compiled& code, const Device& device) {
  auto& cache = module_cache();
  std::lock_guard<std::mutex> lock(cache.m);
  return cache.modules.count({&code, device.index()}) > 0;
}

std::shared_ptr<detail::Module> module_for(Program& p, detail::ProgramState& st, const Device& device,
                                           bool note = true) {
  if (!device.is_cuda())
    throw ValueError("a kernel runs on a CUDA device; " + device.str() + " is not one (xp::Program " + p.name() + ")");
  {
    std::lock_guard<std::mutex> lock(st.m);
    if (auto it = st.modules.find(device.index()); it != st.modules.end()) return it->second;
  }
  CompileStats stats;
  auto m = module_of(build(st, Arch::sm(device_arch(device)), stats), device);
  if (note && !stats.memory_hit) {
    if (const std::string name = detail::entry_name(stats.cache_file); !name.empty()) detail::note_entry_used(name);
  }
  std::lock_guard<std::mutex> lock(st.m);
  return st.modules.emplace(device.index(), m).first->second;
}

}  // namespace

namespace detail {

struct KernelAccess {
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

}  // namespace detail

Kernel Program::kernel(std::string_view name, const Device& device) {
  return detail::KernelAccess::in_module(module_for(*this, *state_, device), name, this->name());
}

namespace detail {

namespace {

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
GeneratedCache& generated_cache() {
  static GeneratedCache* c = new GeneratedCache();  // never destroyed, as the memory cache
  return *c;
}

}  // namespace

std::string generated_key_material(const std::string& generator_key, const ProgramOptions& options,
                                   std::string_view kernel_name, int arch) {
  if (build_id().empty() || arch <= 0) return {};
  const NvrtcCompiler& nvrtc = NvrtcCompiler::instance();
  if (!nvrtc.supports(arch)) return {};  // xp::Program says why
  const bool ptx = options.ptx || arch > nvrtc.newest_arch();
  const int target = std::min(arch, nvrtc.newest_arch());
  std::string k = generated_key_head(nvrtc, ptx, target);
  put_options(k, options);
  put_field(k, "kernel", std::string(kernel_name));
  put_field(k, "generator", generator_key);
  return k;
}

Kernel KernelAccess::generated(const std::string& generator_key, const std::function<std::string()>& make_source,
                               const ProgramOptions& options, std::string_view kernel_name, const Device& device) {
  const std::string key = device.is_cuda() && !build_id().empty()
                              ? generated_key_material(generator_key, options, kernel_name, device_arch(device))
                              : std::string();
  if (key.empty()) {
    Program prog(make_source(), options);
    return prog.kernel(kernel_name, device);
  }
  const Hash128 key_hash = hash128(key);
  const std::string hash = key_hash.hex();
  auto& cache = generated_cache();
  std::shared_ptr<const Compiled> code;
  std::string preloaded;
  bool touch = false;
  {
    std::lock_guard<std::mutex> lock(cache.m);
    if (auto it = cache.by_hash.find(hash); it != cache.by_hash.end() && it->second.key == key) {
      code = it->second.code;
      if (!it->second.preloaded_name.empty()) {
        preloaded = std::move(it->second.preloaded_name);
        it->second.preloaded_name.clear();
        touch = it->second.touch;
      }
    }
  }
  if (!preloaded.empty()) {  // the first use of a kernel the preload loaded
    note_entry_used(preloaded);
    if (touch) DiskCache::instance().touch(DiskCache::instance().file_of_name(preloaded));
  }
  auto& disk = DiskCache::checked();
  if (!code) {
    std::vector<char> payload;
    auto c = std::make_shared<Compiled>();
    if (disk.load(key, key_hash, payload) == DiskCache::Lookup::hit && unpack_payload(payload, *c)) {
      c->key = key;
      note_entry_used(hash);
      std::lock_guard<std::mutex> lock(cache.m);
      // The preload may have put the same code there meanwhile: that one is used (its module may be
      // loaded already), and its first use is this one.
      auto [it, fresh] = cache.by_hash.try_emplace(hash, GeneratedCache::Value{key, c, {}});
      if (!fresh && it->second.key != key) it->second = GeneratedCache::Value{key, c, {}};
      it->second.preloaded_name.clear();
      code = it->second.code;
    }
  }
  if (code) return in_module(module_of(code, device), kernel_name, options.name);
  // A miss: the source, compiled (or found by it) through Program; the code stored under this key.
  Program prog(make_source(), options);
  auto module = module_for(prog, *prog.state_, device, false);
  if (!disk.store(key, key_hash, pack_payload(*module->code)).empty()) note_entry_used(hash);
  {
    std::lock_guard<std::mutex> lock(cache.m);
    cache.by_hash[hash] = GeneratedCache::Value{key, module->code, {}};
  }
  return in_module(module, kernel_name, options.name);
}

Kernel generated_sibling(const Kernel& k, std::string_view name, const ProgramOptions& options) {
  return KernelAccess::sibling(k, name, options.name);
}

void prepare_generated_kernels(const Device& device) noexcept {
  try {
    if (!device.is_cuda() || build_id().empty()) return;
    (void)generated_key_material(std::string(), ProgramOptions{}, "", device_arch(device));
    (void)DiskCache::instance();
  } catch (...) {  // NVRTC or the device unusable: said again, with the reason, by the first lookup
  }
}

Kernel generated_kernel(const std::string& generator_key, const std::function<std::string()>& make_source,
                        const ProgramOptions& options, std::string_view kernel_name, const Device& device) {
  return KernelAccess::generated(generator_key, make_source, options, kernel_name, device);
}

// ---- the preload of recently used kernels ----

namespace {

// The value of the field `label` of key material written by put_field, read from `from` on (past
// the material's first line); nullopt when absent or when the fields do not parse.
std::optional<std::string_view> field_value(std::string_view k, std::string_view label, std::size_t from) {
  std::size_t pos = from;
  while (pos < k.size()) {
    const std::size_t sp = k.find(' ', pos), nl = k.find('\n', pos);
    if (sp == std::string_view::npos || nl == std::string_view::npos || sp > nl || nl == sp + 1) return std::nullopt;
    std::uint64_t len = 0;
    for (std::size_t i = sp + 1; i < nl; ++i) {
      if (k[i] < '0' || k[i] > '9' || len > (std::uint64_t{1} << 40)) return std::nullopt;
      len = len * 10 + static_cast<std::uint64_t>(k[i] - '0');
    }
    if (len > k.size() - nl - 1 || k.size() - nl - 1 - len < 1 || k[nl + 1 + len] != '\n') return std::nullopt;
    if (k.substr(pos, sp - pos) == label) return k.substr(nl + 1, len);
    pos = nl + 1 + len + 1;
  }
  return std::nullopt;
}

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

}  // namespace detail

std::uint64_t Program::global_address(std::string_view name, const Device& device, std::size_t* bytes) {
  auto module = module_for(*this, *state_, device);
  std::string symbol(name);
  for (const auto& [e, l] : module->code->lowered)
    if (e == name) symbol = l;
  device.activate();
  const auto& api = detail::api_for_use();
  cu::CUdeviceptr ptr = 0;
  std::size_t size = 0;
  const cu::CUresult r =
      detail::need(api.cuModuleGetGlobal, "cuModuleGetGlobal")(&ptr, &size, module->handle, symbol.c_str());
  if (r == cu::CUDA_ERROR_NOT_FOUND)
    throw ValueError("no __device__ or __constant__ variable '" + std::string(name) + "' in " + this->name());
  detail::check(r, "cuModuleGetGlobal");
  if (bytes != nullptr) *bytes = size;
  return ptr;
}

}  // namespace xp
