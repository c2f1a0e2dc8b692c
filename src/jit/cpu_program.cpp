// Compiling a Program for the CPU with the host compiler, through the same memory and disk caches
// as a cubin (cpu_program.hpp). The key material: xp's version, the compiler's identity (path and
// `--version`), its flags, the CPU (the code is built for it), the prelude's text, the program's
// options and source, and the files its #include directives reach (as NVRTC's key has them).
#include "jit/cpu_program.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "jit/cpu_source.hpp"
#include "jit/disk_cache.hpp"
#include "jit/hash.hpp"
#include "jit/host_compiler.hpp"
#include "jit/includes.hpp"
#include "jit/program_parts.hpp"
#include "runtime/log.hpp"
#include "xp/version.hpp"
#include "xp_generated/cpu_prelude.hpp"

namespace xp::detail {

namespace {

namespace fs = std::filesystem;

// The CUDA headers a kernel includes, answered by the prelude (force-included before the source).
constexpr const char* kStubHeaders[] = {"cuda.h",
                                        "cuda_runtime.h",
                                        "cuda_runtime_api.h",
                                        "cuda_fp16.h",
                                        "cuda_fp16.hpp",
                                        "cuda_bf16.h",
                                        "cuda_bf16.hpp",
                                        "device_launch_parameters.h",
                                        "device_functions.h",
                                        "vector_types.h",
                                        "vector_functions.h",
                                        "math_functions.h",
                                        "builtin_types.h",
                                        "crt/host_defines.h",
                                        "sm_60_atomic_functions.h",
                                        "assert.h",
                                        "cassert",
                                        "math_constants.h"};

const std::string& math_constants() {
  static const std::string s =
      "#pragma once\n"
      "#define CUDART_INF_F __int_as_float(0x7f800000)\n"
      "#define CUDART_NAN_F __int_as_float(0x7fffffff)\n"
      "#define CUDART_PI_F 3.141592654f\n"
      "#define CUDART_INF __longlong_as_double(0x7ff0000000000000ULL)\n"
      "#define CUDART_NAN __longlong_as_double(0xfff8000000000000ULL)\n"
      "#define CUDART_PI 3.1415926535897931e+0\n";
  return s;
}

struct MemoryCache {
  std::mutex m;
  std::map<std::string, std::shared_ptr<CpuModule>> by_hash;
};
MemoryCache& cpu_memory_cache() {
  static auto* c = new MemoryCache();  // never destroyed: kernels may run until exit
  return *c;
}

// The compiler's arguments for ProgramOptions::options: the preprocessor's and the language
// standard pass, the options that only mean something to a GPU's code generator are dropped.
std::vector<std::string> translate_options(const std::vector<std::string>& o, std::string& standard) {
  static constexpr const char* kGpuOnly[] = {"-arch",
                                             "--gpu-architecture",
                                             "--fmad",
                                             "-fmad",
                                             "-lineinfo",
                                             "--generate-line-info",
                                             "-G",
                                             "--device-debug",
                                             "--use_fast_math",
                                             "-use_fast_math",
                                             "-rdc",
                                             "--relocatable-device-code",
                                             "-ewp",
                                             "--extensible-whole-program",
                                             "-default-device",
                                             "--device-as-default-execution-space",
                                             "--extra-device-vectorization",
                                             "-extra-device-vectorization",
                                             "-dopt",
                                             "--dopt",
                                             "-maxrregcount",
                                             "--maxrregcount",
                                             "--ptxas-options",
                                             "-Xptxas",
                                             "--restrict",
                                             "-restrict",
                                             "-ftz",
                                             "--ftz",
                                             "-prec-div",
                                             "--prec-div",
                                             "-prec-sqrt",
                                             "--prec-sqrt",
                                             "-dlto",
                                             "--dlink-time-opt",
                                             "-Wno-deprecated-gpu-targets",
                                             "--diag-suppress",
                                             "-diag-suppress",
                                             "--diag-error",
                                             "-diag-error",
                                             "--diag-warn",
                                             "-diag-warn",
                                             "--display-error-number",
                                             "-err-no",
                                             "--no-display-error-number",
                                             "-no-err-no",
                                             "--no-source-include",
                                             "-no-source-include",
                                             "--minimal",
                                             "-minimal",
                                             "-split-compile",
                                             "--split-compile",
                                             "-time",
                                             "--time",
                                             "--fdevice-time-trace",
                                             "-fdevice-time-trace",
                                             "-builtin-move-forward",
                                             "--builtin-move-forward",
                                             "-builtin-initializer-list",
                                             "--builtin-initializer-list",
                                             "-pch",
                                             "--pch",
                                             "-create-pch",
                                             "--create-pch",
                                             "-use-pch",
                                             "--use-pch",
                                             "-pch-dir",
                                             "--pch-dir",
                                             "-pch-verbose",
                                             "--pch-verbose",
                                             "-pch-messages",
                                             "--pch-messages",
                                             "-instantiation-cache-dir"};
  std::vector<std::string> out;
  auto gpu_only = [&](const std::string& a) {
    for (const char* f : kGpuOnly) {
      const std::size_t n = std::strlen(f);
      if (a.compare(0, n, f) == 0 && (a.size() == n || a[n] == '=')) return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < o.size(); ++i) {
    const std::string& a = o[i];
    auto with_value = [&](const char* flag, const char* as) {
      const std::size_t n = std::strlen(flag);
      if (a == flag && i + 1 < o.size()) {
        out.push_back(as);
        out.push_back(o[++i]);
        return true;
      }
      if (a.compare(0, n, flag) == 0 && a.size() > n + 1 && a[n] == '=') {
        out.push_back(as);
        out.push_back(a.substr(n + 1));
        return true;
      }
      return false;
    };
    if (a.rfind("-std=", 0) == 0 || a.rfind("--std=", 0) == 0) {
      const std::string v = a.substr(a.find('=') + 1);
      if (v == "c++20" || v == "c++2a" || v == "c++23" || v == "c++2b") standard = "-std=" + v;
      continue;  // older standards: C++17, which the prelude needs
    }
    if (gpu_only(a)) continue;
    if (with_value("--include-path", "-I") || with_value("--pre-include", "-include") ||
        with_value("--define-macro", "-D") || with_value("--undefine-macro", "-U"))
      continue;
    if ((a == "-I" || a == "-D" || a == "-U" || a == "-include") && i + 1 < o.size()) {
      out.push_back(a);
      out.push_back(o[++i]);
      continue;
    }
    if (a == "-w" || a == "--disable-warnings") {
      out.push_back("-w");
      continue;
    }
    out.push_back(a);  // -Dx, -Ix, -Wx, ... and what the compiler may know: it says when it does not
  }
  return out;
}

int first_error_line(const std::string& log, const std::string& program) {
  std::size_t pos = 0;
  while ((pos = log.find(program + ":", pos)) != std::string::npos) {
    const std::size_t num = pos + program.size() + 1;
    std::size_t end = num;
    while (end < log.size() && std::isdigit(static_cast<unsigned char>(log[end]))) ++end;
    if (end > num) {
      const std::size_t line_end = log.find('\n', end);
      const std::string rest = log.substr(end, line_end == std::string::npos ? std::string::npos : line_end - end);
      if (rest.find("error") != std::string::npos) return std::atoi(log.c_str() + num);
    }
    pos = num;
  }
  return 0;
}

void write_file(const fs::path& p, std::string_view text) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  std::ofstream out(p, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw Error("cannot write " + p.string() + " for the host compiler");
}

std::vector<char> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A temporary folder of the user's own, removed with everything in it at the end of the scope.
struct TempFolder {
  std::string path;
  TempFolder() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string t = (base / "xp-cpu-kernel-XXXXXX").string();
    if (::mkdtemp(t.data()) == nullptr)
      throw Error("cannot make a temporary folder for the host compiler: " + std::string(std::strerror(errno)));
    path = t;
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
};

// Loads a shared object's bytes: from an anonymous memory file, else a temporary file.
void* load_bytes(const std::vector<char>& bytes, std::string& error) {
  const int fd = static_cast<int>(::memfd_create("xp-cpu-kernel", MFD_CLOEXEC));
  if (fd >= 0) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
    void* h = nullptr;
    if (done == bytes.size()) h = ::dlopen(("/proc/self/fd/" + std::to_string(fd)).c_str(), RTLD_NOW | RTLD_LOCAL);
    // The loader knows a loaded object by the path it was opened with, and a later dlopen of the
    // same path returns that object: the memory file stays open as long as the module (never
    // closed), so that no later module is opened as /proc/self/fd/<the same number>.
    if (h != nullptr) return h;
    ::close(fd);
    ::dlerror();  // a file of its own below (a system that refuses code from memory files)
  }
  TempFolder tmp;
  const fs::path p = fs::path(tmp.path) / "kernel.so";
  write_file(p, std::string_view(bytes.data(), bytes.size()));
  void* h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    error = e != nullptr ? e : "dlopen failed";
  }
  return h;
}

// The code of a function of the shared object: [start, end), from its dynamic symbol; empty when
// no symbol starts exactly there (then nothing is known to lie in it).
std::pair<const char*, const char*> code_of(const void* f) {
  Dl_info info{};
  void* extra = nullptr;
  if (f == nullptr || ::dladdr1(f, &info, &extra, RTLD_DL_SYMENT) == 0 || extra == nullptr || info.dli_saddr != f)
    return {nullptr, nullptr};
  const auto* sym = static_cast<const ElfW(Sym)*>(extra);
  const auto* start = static_cast<const char*>(f);
  return {start, start + sym->st_size};
}

// Which kernels of a program may synchronise. None when the program has no marker. Otherwise a
// kernel does when a synchronising call of the final code (the prelude's sites section) lies in
// its function or its entry point; and every kernel does when a call lies outside all of them (in
// a helper that was not inlined, or a part the compiler split off), or when the sites cannot be read.
std::vector<bool> synchronising_kernels(void* handle, const xp_cpu_kernel_info* table, unsigned count,
                                        bool program_synchronises) {
  std::vector<bool> out(count, program_synchronises);
  if (!program_synchronises) return out;
  auto sites = reinterpret_cast<xp_cpu_sync_sites_fn>(::dlsym(handle, XP_CPU_SYNC_SITES_SYMBOL));
  if (sites == nullptr) return out;
  const int* begin = nullptr;
  const unsigned n = sites(&begin);
  if (n == 0 || begin == nullptr) return out;
  std::vector<std::array<std::pair<const char*, const char*>, 2>> code(count);
  for (unsigned i = 0; i < count; ++i)
    code[i] = {code_of(reinterpret_cast<const void*>(table[i].entry)), code_of(table[i].function)};
  std::vector<bool> found(count, false);
  for (unsigned s = 0; s < n; ++s) {
    const char* at = reinterpret_cast<const char*>(begin + s) + begin[s];
    bool placed = false;
    for (unsigned i = 0; i < count; ++i)
      for (const auto& [from, to] : code[i])
        if (from != nullptr && at >= from && at < to) found[i] = placed = true;
    if (!placed) return out;  // every kernel, as the marker says
  }
  for (unsigned i = 0; i < count; ++i) out[i] = found[i];
  return out;
}

// The module's kernels, from its table; false (and the handle closed) when it is not one of
// xp's CPU programs of this ABI.
bool read_table(CpuModule& m, const std::string& program, std::string& error) {
  auto fn = reinterpret_cast<xp_cpu_kernels_fn>(::dlsym(m.handle, XP_CPU_KERNELS_SYMBOL));
  if (fn == nullptr) {
    error = "the shared object has no kernel table";
    return false;
  }
  unsigned count = 0, abi = 0;
  const xp_cpu_kernel_info* table = fn(&count, &abi);
  if (abi != XP_CPU_ABI_VERSION) {
    error = "the shared object was built for another version of xp's CPU kernel interface";
    return false;
  }
  auto prepare = reinterpret_cast<xp_cpu_prepare_thread_fn>(::dlsym(m.handle, XP_CPU_PREPARE_THREAD_SYMBOL));
  if (prepare == nullptr) {
    error = "the shared object has no " XP_CPU_PREPARE_THREAD_SYMBOL;
    return false;
  }
  // The marker of a program that may synchronise (an absolute symbol: found, whatever its value).
  ::dlerror();
  const bool synchronises = ::dlsym(m.handle, XP_CPU_SYNC_SYMBOL) != nullptr || ::dlerror() == nullptr;
  const std::vector<bool> each = synchronising_kernels(m.handle, table, count, synchronises);
  for (unsigned i = 0; i < count; ++i) {
    auto k = std::make_unique<CpuKernelDef>();
    k->synchronises = each[i];
    k->prepare_thread = prepare;
    k->name = table[i].name;
    k->program = program;
    k->entry = table[i].entry;
    k->param_sizes.assign(table[i].param_sizes, table[i].param_sizes + table[i].param_count);
    m.kernels.push_back(std::move(k));
  }
  return true;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> cpu_prelude_files() {
  std::vector<std::pair<std::string, std::string>> files = {
      {"xp_cpu_abi.h", std::string(cpu_prelude_text::xp_cpu_abi_h)},
      {"xp_cpu_prelude.h", std::string(cpu_prelude_text::xp_cpu_prelude_h)},
      {"xp_cpu_half.h", std::string(cpu_prelude_text::xp_cpu_half_h)}};
  for (const char* h : kStubHeaders)
    files.emplace_back(h, std::string(h) == "math_constants.h"
                              ? math_constants()
                              : std::string("#pragma once\n// answered by xp's prelude\n"));
  return files;
}

std::shared_ptr<CpuModule> cpu_module_for(ProgramState& st, CompileStats& stats) {
  const auto t0 = Clock::now();
  stats.target = "cpu";
  {
    std::lock_guard<std::mutex> lock(st.m);
    if (st.cpu_module) {
      stats.memory_hit = true;
      stats.binary_bytes = st.cpu_module->bytes;
      stats.total_ms = ms_since(t0);
      return st.cpu_module;
    }
  }
  const HostCompiler& hc = host_compiler();
  if (!hc.available) throw CompileError(st.options.name, "", 0, hc.error);

  const CpuSource src = prepare_cpu_source(st.source(), st.options.name, st.options.name_expressions);
  std::string standard = "-std=c++17";
  const std::vector<std::string> user_flags = translate_options(st.options.options, standard);
  std::vector<std::string> flags = hc.flags;
  flags.push_back(standard);

  // The files the source includes are key material, followed as the compiler will: the prelude's
  // headers and the in-memory ones first.
  auto prelude = cpu_prelude_files();
  std::vector<std::pair<std::string, std::string>> scan_headers = st.options.headers;
  scan_headers.insert(scan_headers.end(), prelude.begin(), prelude.end());
  const IncludeScan includes =
      scan_includes({st.source(), st.options.name, &st.options.options, &scan_headers, nullptr});

  static const std::string prelude_hash = [] {
    std::string all;
    for (const auto& [n, c] : cpu_prelude_files()) all += n + "\n" + c + "\n";
    return hash128(all).hex();
  }();
  std::string key = "xp-cpu-kernel 1\n";
  put_field(key, "xp", std::string(version()));
  put_field(key, "target", "cpu");
  put_field(key, "compiler", hc.identity);
  put_field(key, "flags", join(flags));
  put_field(key, "cpu", hc.cpu);
  put_field(key, "prelude", prelude_hash);
  key += st.key_base;
  if (!includes.key.empty()) put_field(key, "includes", includes.key);
  const Hash128 key_hash = hash128(key);
  const std::string hash = key_hash.hex();
  const bool cacheable = includes.cacheable;
  if (!cacheable) stats.not_cached = includes.why_not;

  std::shared_ptr<CpuModule> result;
  auto& mem = cpu_memory_cache();
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mem.m);
    if (auto it = mem.by_hash.find(hash); it != mem.by_hash.end() && it->second->key == key) {
      result = it->second;
      stats.memory_hit = true;
    }
  }
  if (!result) {
    auto m = std::make_shared<CpuModule>();
    auto& disk = DiskCache::checked();
    std::vector<char> payload;
    std::string error;
    if (cacheable && disk.load(key, key_hash, payload, &stats.cache_file) == DiskCache::Lookup::hit) {
      m->handle = load_bytes(payload, error);
      if (m->handle != nullptr && read_table(*m, st.options.name, error)) {
        stats.disk_hit = true;
        m->bytes = payload.size();
      } else {
        m = std::make_shared<CpuModule>();  // not usable here: built again below
        log(LogLevel::warn, "the cached CPU build of " + st.options.name + " (" + stats.cache_file +
                                ") could not be loaded (" + error + "); compiling it again");
      }
    }
    if (!stats.disk_hit) {
      TempFolder tmp;
      const fs::path src_dir = fs::path(tmp.path) / "src";
      for (const auto& [n, c] : prelude) write_file(src_dir / n, c);
      for (const auto& [n, c] : st.options.headers) {
        const fs::path hp(n);
        bool inside = !n.empty() && hp.is_relative();
        for (const auto& part : hp) inside = inside && part != "..";
        if (!inside)
          throw ValueError("the in-memory header '" + n + "' of " + st.options.name +
                           " cannot be given to the host compiler: its name must be a relative path without ..");
        write_file(src_dir / hp, c);
      }
      write_file(src_dir / "kernel.cpp", "#include \"xp_cpu_prelude.h\"\n" + src.text);
      const fs::path so = fs::path(tmp.path) / "out" / "kernel.so";
      std::error_code ec;
      fs::create_directories(so.parent_path(), ec);
      std::vector<std::string> argv = {hc.path};
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.push_back("-I" + src_dir.string());
      // Quoted includes of the program: its name's folder first, as for NVRTC.
      const fs::path name_dir = fs::path(st.options.name).parent_path();
      argv.push_back("-iquote");
      const fs::path here = fs::current_path(ec);
      argv.push_back(((ec ? fs::path(".") : here) / name_dir).lexically_normal().string());
      argv.insert(argv.end(), user_flags.begin(), user_flags.end());
      argv.insert(argv.end(), {"-x", "c++", (src_dir / "kernel.cpp").string(), "-x", "none", "-o", so.string()});
      const HostRun run = run_program(argv, (fs::path(tmp.path) / "out" / "log").string());
      if (run.status != 0) {
        throw CompileError(
            st.options.name, run.output, first_error_line(run.output, st.options.name),
            hc.path + " (" + hc.version + ") " +
                (run.status < 0 ? std::string("could not run") : "exited with status " + std::to_string(run.status)));
      }
      stats.compile_ms = run.ms;
      stats.log = run.output;
      const std::vector<char> bytes = read_bytes(so);
      m->handle = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (m->handle == nullptr) {
        const char* e = ::dlerror();
        throw Error("loading the CPU build of " + st.options.name + " failed: " + (e != nullptr ? e : "dlopen failed"));
      }
      if (!read_table(*m, st.options.name, error))
        throw Error("loading the CPU build of " + st.options.name + " failed: " + error);
      m->bytes = bytes.size();
      if (cacheable) stats.cache_file = disk.store(key, key_hash, bytes);
    }
    m->key = std::move(key);
    result = m;
    if (cacheable) {
      std::lock_guard<std::mutex> lock(mem.m);
      mem.by_hash[hash] = result;
    }
    if (log_enabled(LogLevel::debug)) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.1f", stats.compile_ms);
      log(LogLevel::debug, std::string(stats.disk_hit ? "disk cache hit: " : "compiled for the CPU: ") +
                               st.options.name + (stats.disk_hit ? std::string() : std::string(" in ") + ms + " ms") +
                               (stats.cache_file.empty() ? std::string() : ", " + stats.cache_file));
    }
  }
  {
    std::lock_guard<std::mutex> lock(st.m);
    if (!st.cpu_module) st.cpu_module = result;
    result = st.cpu_module;
  }
  stats.binary_bytes = result->bytes;
  stats.total_ms = ms_since(t0);
  return result;
}

Kernel KernelAccess::on_cpu(ProgramState& st, std::string_view name, const std::string& program_name) {
  CompileStats stats;
  std::shared_ptr<CpuModule> m = cpu_module_for(st, stats);
  Kernel k;
  std::lock_guard<std::mutex> lock(m->m);
  if (auto it = m->states.find(name); it != m->states.end()) {
    k.state_ = it->second;
    return k;
  }
  const CpuKernelDef* def = nullptr;
  for (const auto& d : m->kernels)
    if (d->name == name) def = d.get();
  if (def == nullptr) {
    std::string list;
    for (const auto& d : m->kernels) list += (list.empty() ? "" : ", ") + d->name;
    throw ValueError("no kernel '" + std::string(name) + "' in " + program_name +
                     "; it has: " + (list.empty() ? "no __global__ function" : list) +
                     ". A template kernel needs a name expression in ProgramOptions");
  }
  auto s = std::make_shared<KernelState>();
  s->module = m;
  s->device = Device::cpu();
  s->name = def->name;
  s->params_known = true;
  s->param_sizes = def->param_sizes;
  s->max_threads_device = kCpuMaxThreads;
  std::copy(kCpuMaxBlock, kCpuMaxBlock + 3, s->max_block);
  std::copy(kCpuMaxGrid, kCpuMaxGrid + 3, s->max_grid);
  s->max_shared_optin = kCpuMaxSharedBytes;
  s->cpu = def;
  k.state_ = m->states.emplace(std::string(name), std::move(s)).first->second;
  return k;
}

std::vector<std::string> KernelAccess::cpu_kernel_names(ProgramState& st) {
  CompileStats stats;
  std::shared_ptr<CpuModule> m = cpu_module_for(st, stats);
  std::vector<std::string> names;
  for (const auto& d : m->kernels) names.push_back(d->name);
  return names;
}

std::uint64_t KernelAccess::cpu_global_address(ProgramState& st, std::string_view name, std::size_t* bytes) {
  CompileStats stats;
  std::shared_ptr<CpuModule> m = cpu_module_for(st, stats);
  const std::string symbol(name);
  void* p = ::dlsym(m->handle, symbol.c_str());
  Dl_info info{};
  const void* sym = nullptr;
  if (p == nullptr || ::dladdr1(p, &info, const_cast<void**>(&sym), RTLD_DL_SYMENT) == 0 || sym == nullptr)
    throw ValueError("no __device__ or __constant__ variable '" + symbol + "' in " + st.options.name +
                     " (on the CPU: a variable at global scope, not in a namespace)");
  const auto* entry = static_cast<const ElfW(Sym)*>(sym);
  if (ELF64_ST_TYPE(entry->st_info) != STT_OBJECT)
    throw ValueError("'" + symbol + "' in " + st.options.name + " is not a variable");
  if (bytes != nullptr) *bytes = entry->st_size;
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

}  // namespace xp::detail
