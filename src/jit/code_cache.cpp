// The code xp compiled or read in this process, and its modules (program_parts.hpp): the memory
// cache by the hash of the key material, the payload of a disk entry, and the modules of a code by
// device, shared by every Program of that code.
#include <algorithm>

#include "jit/program_parts.hpp"
#include "runtime/current.hpp"

namespace xp::detail {

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

MemoryCache& memory_cache() {
  static MemoryCache* c = new MemoryCache();  // never destroyed: kernels may outlive static destructors
  return *c;
}

namespace {

// Modules by (compiled code, device): a second Program of the same source finds the module, and
// its kernels, that the first one loaded. Code lives as long as the memory cache, so the pointer
// is a stable key; modules stay loaded for the life of the process.
struct ModuleCache {
  std::mutex m;
  std::map<std::pair<const Compiled*, int>, std::shared_ptr<Module>> modules;
};
ModuleCache& module_cache() {
  static ModuleCache* c = new ModuleCache();  // never destroyed, as the memory cache
  return *c;
}

}  // namespace

// The module of this code on this device, loaded on first use.
std::shared_ptr<Module> module_of(const std::shared_ptr<const Compiled>& code, const Device& device) {
  auto& cache = module_cache();
  std::shared_ptr<Module> m;
  {
    std::lock_guard<std::mutex> lock(cache.m);
    if (auto it = cache.modules.find({code.get(), device.index()}); it != cache.modules.end()) return it->second;
  }
  detail::activate_context(device);
  const auto& api = api_for_use();
  m = std::make_shared<Module>();
  m->device = device;
  m->code = code;
  check(need(api.cuModuleLoadData, "cuModuleLoadData")(&m->handle, code->binary.data()), "cuModuleLoadData");
  std::lock_guard<std::mutex> lock(cache.m);
  return cache.modules.emplace(std::make_pair(code.get(), device.index()), m).first->second;
}

// Whether this code's module is loaded on this device already.
bool module_loaded(const Compiled& code, const Device& device) {
  auto& cache = module_cache();
  std::lock_guard<std::mutex> lock(cache.m);
  return cache.modules.count({&code, device.index()}) > 0;
}

}  // namespace xp::detail
