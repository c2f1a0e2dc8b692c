// Generated kernels by the generator's key and the build ID (generated.hpp, program_parts.hpp).
#include "jit/generated.hpp"

#include "jit/build_id.hpp"
#include "jit/disk_cache.hpp"
#include "jit/hash.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "jit/program_parts.hpp"

namespace xp::detail {

GeneratedCache& generated_cache() {
  static GeneratedCache* c = new GeneratedCache();  // never destroyed, as the memory cache
  return *c;
}

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

}  // namespace xp::detail
