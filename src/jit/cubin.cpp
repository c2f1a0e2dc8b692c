#include "jit/cubin.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
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

// A .nv.info.<kernel> section is a list of records: u8 format, u8 attribute, then by format
// nothing (EIFMT_NVAL, 1), one u16 (EIFMT_HVAL, 3; EIFMT_BVAL, 2, pads to the same 4 bytes), or a
// u16 length and that many bytes (EIFMT_SVAL, 4). EIATTR_KPARAM_INFO (0x17) describes one
// parameter: u32 index, u16 ordinal, u16 offset, u32 whose top 14 bits are the size in bytes.
bool kernel_params(const char* p, std::size_t n, std::vector<std::size_t>& sizes) {
  std::map<unsigned, std::size_t> by_ordinal;
  std::size_t i = 0;
  while (i + 4 <= n) {
    const auto format = static_cast<unsigned char>(p[i]);
    const auto attribute = static_cast<unsigned char>(p[i + 1]);
    if (format == 4) {
      std::uint16_t len = 0;
      std::memcpy(&len, p + i + 2, 2);
      if (i + 4 + len > n) return false;
      if (attribute == 0x17 && len >= 12) {
        std::uint16_t ordinal = 0;
        std::uint32_t flags = 0;
        std::memcpy(&ordinal, p + i + 8, 2);
        std::memcpy(&flags, p + i + 12, 4);
        by_ordinal[ordinal] = flags >> 18;
      }
      i += 4 + len;
    } else if (format >= 1 && format <= 3) {
      i += 4;
    } else {
      return false;  // a format this reader does not know: trust the driver instead
    }
  }
  sizes.clear();
  for (const auto& [ordinal, size] : by_ordinal) {
    if (ordinal != sizes.size() || size == 0) return false;  // ordinals must run 0..n-1
    sizes.push_back(size);
  }
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
  Elf64_Shdr names{};
  const bool have_names = read_at(data, size, eh.e_shoff + std::size_t{eh.e_shstrndx} * eh.e_shentsize, names);
  std::map<std::string, std::pair<std::size_t, std::size_t>> info_sections;  // kernel -> (offset, size)
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    if (!read_at(data, size, eh.e_shoff + std::size_t{i} * eh.e_shentsize, sh)) break;
    if (have_names && names.sh_offset + sh.sh_name < size) {
      const char* sname = data + names.sh_offset + sh.sh_name;
      const std::string_view section(sname, strnlen(sname, size - names.sh_offset - sh.sh_name));
      if (section.substr(0, 9) == ".nv.info." && sh.sh_offset <= size && sh.sh_size <= size - sh.sh_offset)
        info_sections[std::string(section.substr(9))] = {sh.sh_offset, sh.sh_size};
    }
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
  for (const auto& k : m.kernels) {
    std::vector<std::size_t> sizes;
    const auto it = info_sections.find(k);
    if (it != info_sections.end() && kernel_params(data + it->second.first, it->second.second, sizes)) {
      m.params[k] = std::move(sizes);
    }
  }
  m.valid = m.arch > 0;
  if (!m.valid) m.error = "cubin without an SM in its header";
  return m;
}

}  // namespace xp::detail
