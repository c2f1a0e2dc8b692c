#include "jit/cubin.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace xp::detail {

namespace {

constexpr int kEmCuda = 190;                   // EM_CUDA
constexpr unsigned char kStoCudaEntry = 0x10;  // st_other bit of a __global__ function

ModuleInfo inspect_ptx(std::string_view text) {
  ModuleInfo m;
  m.is_ptx = true;
  // The digits are read within the text: a module's bytes carry no terminating NUL.
  if (const auto t = text.find(".target sm_"); t != std::string_view::npos) {
    int arch = 0;
    for (std::size_t i = t + 11; i < text.size() && text[i] >= '0' && text[i] <= '9' && arch < 100000; ++i)
      arch = arch * 10 + (text[i] - '0');
    m.arch = arch;
  }
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

// Whether [offset, offset + count * entry) lies within a buffer of `size` bytes, without overflow.
bool in_bounds(std::uint64_t offset, std::uint64_t count, std::uint64_t entry, std::size_t size) {
  if (offset > size) return false;
  if (entry != 0 && count > (size - offset) / entry) return false;
  return true;
}

template <class T>
bool read_at(const char* data, std::size_t size, std::uint64_t offset, T& out) {
  if (!in_bounds(offset, 1, sizeof(T), size)) return false;
  std::memcpy(&out, data + offset, sizeof(T));
  return true;
}

// A .nv.info.<kernel> section is a list of records: u8 format, u8 attribute, then by format
// nothing (EIFMT_NVAL, 1), one u16 (EIFMT_HVAL, 3; EIFMT_BVAL, 2, pads to the same 4 bytes), or a
// u16 length and that many bytes (EIFMT_SVAL, 4). EIATTR_KPARAM_INFO (0x17) describes one
// parameter: u32 index, u16 ordinal, u16 offset, u32 whose top 14 bits are the size in bytes.
enum class Params { ok, unknown, corrupt };
Params kernel_params(const char* p, std::size_t n, std::vector<std::size_t>& sizes) {
  std::map<unsigned, std::size_t> by_ordinal;
  std::size_t i = 0;
  while (n - i >= 4) {
    const auto format = static_cast<unsigned char>(p[i]);
    const auto attribute = static_cast<unsigned char>(p[i + 1]);
    if (format == 4) {
      std::uint16_t len = 0;
      std::memcpy(&len, p + i + 2, 2);
      if (len > n - i - 4) return Params::corrupt;  // a record past the end of its section
      if (attribute == 0x17 && len >= 12) {
        std::uint16_t ordinal = 0;
        std::uint32_t flags = 0;
        std::memcpy(&ordinal, p + i + 8, 2);
        std::memcpy(&flags, p + i + 12, 4);
        by_ordinal[ordinal] = flags >> 18;
      }
      i += 4 + std::size_t{len};
    } else if (format >= 1 && format <= 3) {
      i += 4;
    } else {
      return Params::unknown;  // a format this reader does not know: trust the driver instead
    }
  }
  sizes.clear();
  for (const auto& [ordinal, size] : by_ordinal) {
    if (ordinal != sizes.size() || size == 0) return Params::unknown;  // ordinals must run 0..n-1
    sizes.push_back(size);
  }
  return Params::ok;
}

// The NUL-terminated string at `index` in a string table section, or nullopt when it does not
// lie (terminator included) within the section.
std::optional<std::string_view> string_at(const char* data, const Elf64_Shdr& table, std::uint64_t index) {
  if (index >= table.sh_size) return std::nullopt;
  const char* s = data + table.sh_offset + index;
  const std::size_t room = static_cast<std::size_t>(table.sh_size - index);
  const std::size_t len = strnlen(s, room);
  if (len == room) return std::nullopt;
  return std::string_view(s, len);
}

ModuleInfo invalid(ModuleInfo& m, std::string why) {
  m.valid = false;
  m.kernels.clear();
  m.params.clear();
  m.error = "corrupt cubin: " + std::move(why);
  return m;
}

}  // namespace

// Every offset and size is checked against the buffer before use: a truncated or damaged image is
// `valid = false` with the reason, never a read outside [data, data + size).
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
  if (m.arch <= 0) return invalid(m, "no SM in its header");

  // The program headers and the section headers lie within the image, and each section's bytes too.
  if (eh.e_phnum != 0 &&
      (eh.e_phentsize < sizeof(Elf64_Phdr) || !in_bounds(eh.e_phoff, eh.e_phnum, eh.e_phentsize, size)))
    return invalid(m, "its program headers lie outside the " + std::to_string(size) + " bytes of the image");
  if (eh.e_shnum == 0) return invalid(m, "no section headers");
  if (eh.e_shentsize < sizeof(Elf64_Shdr) || !in_bounds(eh.e_shoff, eh.e_shnum, eh.e_shentsize, size))
    return invalid(m, "its section headers lie outside the " + std::to_string(size) + " bytes of the image");
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    std::memcpy(&sections[i], data + eh.e_shoff + std::uint64_t{i} * eh.e_shentsize, sizeof(Elf64_Shdr));
    const Elf64_Shdr& sh = sections[i];
    if (sh.sh_type != SHT_NOBITS && !in_bounds(sh.sh_offset, 1, sh.sh_size, size))
      return invalid(
          m, "section " + std::to_string(i) + " lies outside the " + std::to_string(size) + " bytes of the image");
  }
  if (eh.e_shstrndx >= eh.e_shnum || sections[eh.e_shstrndx].sh_type != SHT_STRTAB)
    return invalid(m, "no section name table");
  const Elf64_Shdr& names = sections[eh.e_shstrndx];

  std::map<std::string, std::pair<std::size_t, std::size_t>, std::less<>> info_sections;  // kernel -> (offset, size)
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr& sh = sections[i];
    const auto section = string_at(data, names, sh.sh_name);
    if (!section) return invalid(m, "the name of section " + std::to_string(i) + " lies outside its string table");
    if (section->substr(0, 9) == ".nv.info." && sh.sh_type != SHT_NOBITS)
      info_sections[std::string(section->substr(9))] = {sh.sh_offset, sh.sh_size};
    if (sh.sh_type != SHT_SYMTAB) continue;
    if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_size % sizeof(Elf64_Sym) != 0)
      return invalid(
          m, "symbol table " + std::to_string(i) + " has entries of " + std::to_string(sh.sh_entsize) + " bytes");
    if (sh.sh_link >= eh.e_shnum || sections[sh.sh_link].sh_type != SHT_STRTAB)
      return invalid(m, "symbol table " + std::to_string(i) + " has no string table");
    const Elf64_Shdr& strtab = sections[sh.sh_link];
    for (std::uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym{};
      std::memcpy(&sym, data + sh.sh_offset + k * sizeof(Elf64_Sym), sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || (sym.st_other & kStoCudaEntry) == 0) continue;
      const auto name = string_at(data, strtab, sym.st_name);
      if (!name) return invalid(m, "the name of symbol " + std::to_string(k) + " lies outside its string table");
      m.kernels.emplace_back(*name);
    }
  }
  std::sort(m.kernels.begin(), m.kernels.end());
  for (const auto& k : m.kernels) {
    std::vector<std::size_t> sizes;
    const auto it = info_sections.find(k);
    if (it == info_sections.end()) continue;
    const Params p = kernel_params(data + it->second.first, it->second.second, sizes);
    if (p == Params::corrupt) return invalid(m, "a record of .nv.info." + k + " runs past the end of its section");
    if (p == Params::ok) m.params[k] = std::move(sizes);
  }
  m.valid = true;
  return m;
}

}  // namespace xp::detail
