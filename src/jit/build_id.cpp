#include "jit/build_id.hpp"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace xp::detail {

namespace {

struct Search {
  std::uintptr_t address = 0;  // an address inside xp's code
  std::string id;
};

// The notes of one loaded object, when it holds the address.
int visit(dl_phdr_info* info, std::size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum && !holds; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    holds = ph.p_type == PT_LOAD && s->address >= start && s->address < start + ph.p_memsz;
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* const end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof n);
      const char* name = p + sizeof n;
      const char* desc = name + ((n.n_namesz + 3) & ~3u);
      const char* next = desc + ((n.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 && n.n_descsz > 0) {
        static constexpr char kHex[] = "0123456789abcdef";
        for (std::uint32_t b = 0; b < n.n_descsz; ++b) {
          const auto v = static_cast<unsigned char>(desc[b]);
          s->id += kHex[v >> 4];
          s->id += kHex[v & 15];
        }
        return 1;
      }
      p = next;
    }
  }
  return 1;  // the object holding xp's code has no build ID
}

}  // namespace

const std::string& build_id() {
  // Never destroyed, as the kernel caches: a kernel may be looked up during static destruction, and
  // the preload's thread reads it until the exit hook has stopped it.
  static const std::string* id = [] {
    Search s;
    s.address = reinterpret_cast<std::uintptr_t>(&visit);
    dl_iterate_phdr(&visit, &s);
    return new std::string(s.id);
  }();
  return *id;
}

}  // namespace xp::detail
