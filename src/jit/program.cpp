// xp::Program: source -> NVRTC -> cubin, through the in-process and disk caches; modules loaded
// once per device. The pieces it shares with the caches and the preload are program_parts.hpp's.
#include "xp/program.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "jit/cpu_program.hpp"
#include "jit/disk_cache.hpp"
#include "jit/generated.hpp"
#include "jit/hash.hpp"
#include "jit/host_compiler.hpp"
#include "jit/includes.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "jit/program_parts.hpp"
#include "runtime/current.hpp"
#include "runtime/log.hpp"
#include "xp/config.hpp"
#include "xp/runtime.hpp"
#include "xp/version.hpp"

namespace xp {

namespace cu = detail::cu;

namespace {

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

}  // namespace

CompileError::CompileError(std::string program, std::string log, int line, std::string nvrtc_error)
    : Error("compiling " + program + " failed (" + nvrtc_error + ")" +
            (line > 0 ? " at line " + std::to_string(line) : std::string()) + ":\n" + log),
      program_(std::move(program)),
      log_(std::move(log)),
      line_(line),
      nvrtc_error_(std::move(nvrtc_error)) {}
CompileError::~CompileError() = default;

Program::Program(std::string source, ProgramOptions options) {
  if (source.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ValueError("xp::Program: the source of " + options.name + " is empty");
  auto s = std::make_shared<detail::ProgramState>();
  s->options = std::move(options);
  std::string k;
  detail::put_options(k, s->options);
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

CompileStats Program::compile(Arch arch) {
  CompileStats stats;
  detail::build(*state_, arch, stats);
  return stats;
}

CompileStats Program::compile(const Device& device) {
  if (device.kind() == DeviceKind::cpu) {
    CompileStats stats;
    detail::cpu_module_for(*state_, stats);
    return stats;
  }
  if (!device.is_cuda()) throw ValueError("xp::Program compiles CUDA C++: " + device.str() + " is not a CUDA device");
  return compile(Arch::sm(detail::device_arch(device)));
}

const std::vector<char>& Program::binary(Arch arch) {
  CompileStats stats;
  return detail::build(*state_, arch, stats)->binary;
}

std::vector<std::string> Program::kernel_names(Arch arch) {
  CompileStats stats;
  return detail::build(*state_, arch, stats)->info.kernels;
}

std::vector<std::string> Program::kernel_names(const Device& device) {
  if (device.kind() == DeviceKind::cpu) return detail::KernelAccess::cpu_kernel_names(*state_);
  return kernel_names(Arch::sm(detail::device_arch(device)));
}

std::string Program::lowered_name(const std::string& expression, Arch arch) {
  CompileStats stats;
  const auto c = detail::build(*state_, arch, stats);
  for (const auto& [e, l] : c->lowered)
    if (e == expression) return l;
  throw ValueError("'" + expression + "' is not a name expression of " + name() +
                   " (give it in ProgramOptions::name_expressions)");
}

namespace detail {

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

std::shared_ptr<Module> module_for(Program& p, ProgramState& st, const Device& device, bool note) {
  if (!device.is_cuda())
    throw ValueError("a kernel runs on a CUDA device; " + device.str() + " is not one (xp::Program " + p.name() + ")");
  {
    std::lock_guard<std::mutex> lock(st.m);
    if (auto it = st.modules.find(device.index()); it != st.modules.end()) return it->second;
  }
  CompileStats stats;
  auto m = module_of(build(st, Arch::sm(device_arch(device)), stats), device);
  if (note && !stats.memory_hit) {
    if (const std::string name = entry_name(stats.cache_file); !name.empty()) note_entry_used(name);
  }
  std::lock_guard<std::mutex> lock(st.m);
  return st.modules.emplace(device.index(), m).first->second;
}

}  // namespace detail

Kernel Program::kernel(std::string_view name) {
  return kernel(name, default_device());
}

Kernel Program::kernel(std::string_view name, const Device& device) {
  if (device.kind() == DeviceKind::cpu) return detail::KernelAccess::on_cpu(*state_, name, this->name());
  return detail::KernelAccess::in_module(detail::module_for(*this, *state_, device), name, this->name());
}

std::uint64_t Program::global_address(std::string_view name, const Device& device, std::size_t* bytes) {
  if (device.kind() == DeviceKind::cpu) return detail::KernelAccess::cpu_global_address(*state_, name, bytes);
  auto module = detail::module_for(*this, *state_, device);
  std::string symbol(name);
  for (const auto& [e, l] : module->code->lowered)
    if (e == name) symbol = l;
  detail::activate_context(device);
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

HostCompilerInfo host_compiler_info() noexcept {
  HostCompilerInfo i;
  try {
    const detail::HostCompiler& c = detail::host_compiler();
    i.available = c.available;
    i.error = c.error;
    i.found_by = c.found_by;
    i.path = c.path;
    i.version = c.version;
    i.flags = c.flags;
  } catch (...) {
    i.error = "the host compiler could not be looked for";
  }
  return i;
}

}  // namespace xp
