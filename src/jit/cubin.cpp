#include "jit/cubin.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <string_view>

namespace xp::detail {

namespace {

constexpr int kEmCuda = 190;                   // EM_CUDA
constexpr unsigned char kStoCudaEntry = 0x10;  // st_other bit of a __global__ function

ModuleInfo inspect_ptx(std::string_view text) {
  ModuleInfo m;
  m.is_ptx = true;
  if (const auto t = text.find(".target sm_"); t != std::string_view::npos) m.arch = std::atoi(text.data() + t + 11);
  size_t pos = 0;
  while ((pos = text.find(".entry ", pos)) != std::string_view::npos) {
    pos += 7;
    size_t end = pos;
    while (end < text.size() && text[end] != '(' && text[end] != ' ' && text[end] != '\n') ++end;
    m.kernels.emplace_back(text.substr(pos, end - pos));
  }
  m.valid = m.arch > 0;
  if (!m.valid) m.error = "PTX without a .target line";
  return m;
}

template <class T>
bool read_at(const char* data, std::size_t size, std::size_t offset, T& out) {
  if (offset > size || sizeof(T) > size - offset) return false;
  std::memcpy(&out, data + offset, sizeof(T));
  return true;
}

}  // namespace

ModuleInfo inspect_module(const char* data, std::size_t size) {
  ModuleInfo m;
  if (size >= 4 && std::memcmp(data, ELFMAG, SELFMAG) != 0) {
    return inspect_ptx(std::string_view(data, size));
  }
  Elf64_Ehdr eh{};
  if (!read_at(data, size, 0, eh) || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    m.error = "not a 64-bit ELF file";
    return m;
  }
  if (eh.e_machine != kEmCuda) {
    m.error = "an ELF file for machine " + std::to_string(eh.e_machine) + ", not a cubin";
    return m;
  }
  // The SM sits in bits 8-15 of e_flags in current cubins, in bits 0-7 in older ones.
  const unsigned high = (eh.e_flags >> 8) & 0xff, low = eh.e_flags & 0xff;
  m.arch = static_cast<int>(high >= 30 ? high : low);
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    if (!read_at(data, size, eh.e_shoff + std::size_t{i} * eh.e_shentsize, sh)) break;
    if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize != sizeof(Elf64_Sym)) continue;
    Elf64_Shdr strtab{};
    if (!read_at(data, size, eh.e_shoff + std::size_t{sh.sh_link} * eh.e_shentsize, strtab)) break;
    for (std::size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym{};
      if (!read_at(data, size, sh.sh_offset + k * sizeof(Elf64_Sym), sym)) break;
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || (sym.st_other & kStoCudaEntry) == 0) continue;
      const std::size_t name_at = strtab.sh_offset + sym.st_name;
      if (name_at >= size) continue;
      const char* name = data + name_at;
      m.kernels.emplace_back(name, strnlen(name, size - name_at));
    }
  }
  std::sort(m.kernels.begin(), m.kernels.end());
  m.valid = m.arch > 0;
  if (!m.valid) m.error = "cubin without an SM in its header";
  return m;
}

}  // namespace xp::detail
