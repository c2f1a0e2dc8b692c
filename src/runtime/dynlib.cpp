#include "runtime/dynlib.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <utility>

namespace xp::detail {

namespace {

// glibc skips an ELF file built for another machine as if it were absent, so dlopen says "No such
// file or directory" about a file that exists. Says what the file is instead ("" when it is not that).
std::string foreign_machine_note(const std::string& path) {
  unsigned char h[20] = {};
  std::ifstream f(path, std::ios::binary);
  if (!f.read(reinterpret_cast<char*>(h), sizeof h) || h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F')
    return {};
  const int machine = h[EI_DATA] == ELFDATA2MSB ? (h[18] << 8 | h[19]) : (h[18] | h[19] << 8);
#if defined(__x86_64__)
  constexpr int kHost = EM_X86_64;
#elif defined(__aarch64__)
  constexpr int kHost = EM_AARCH64;
#else
  constexpr int kHost = -1;
#endif
  if (kHost < 0 || machine == kHost) return {};
  auto name = [](int m) -> std::string {
    switch (m) {
      case EM_X86_64:
        return "x86-64";
      case EM_AARCH64:
        return "AArch64";
      case EM_386:
        return "32-bit x86";
      default:
        return "machine " + std::to_string(m);
    }
  };
  return "the file is an ELF for " + name(machine) + ", not for this " + name(kHost) + " process";
}

}  // namespace

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

DynLib::DynLib(DynLib&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)),
      failure_(o.failure_),
      error_(std::move(o.error_)),
      path_(std::move(o.path_)) {}

DynLib& DynLib::operator=(DynLib&& o) noexcept {
  if (this != &o) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(o.handle_, nullptr);
    failure_ = o.failure_;
    error_ = std::move(o.error_);
    path_ = std::move(o.path_);
  }
  return *this;
}

DynLib::~DynLib() {
  if (handle_ != nullptr) dlclose(handle_);
}

// The absolute path of an opened library, from the link map (`fallback` if it has none).
static std::string loaded_path(void* handle, const std::string& fallback) {
  std::string path = fallback;
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0')
    path = map->l_name;
  if (char* real = realpath(path.c_str(), nullptr); real != nullptr) {
    path = real;
    std::free(real);
  }
  return path;
}

DynLib DynLib::open(const std::string& name_or_path) {
  DynLib lib;
  const bool is_path = name_or_path.find('/') != std::string::npos;
  if (is_path && !file_exists(name_or_path)) {
    lib.failure_ = Failure::not_found;
    lib.error_ = name_or_path + ": no such file";
    return lib;
  }
  dlerror();
  lib.handle_ = dlopen(name_or_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib.handle_ == nullptr) {
    const char* e = dlerror();
    lib.error_ = e != nullptr ? e : "dlopen failed";
    // Through the loader's search, "cannot open shared object file: No such file" means absent;
    // any other answer (bad ELF header, wrong class or machine, missing dependency) means present
    // but unusable.
    const bool absent = !is_path && lib.error_.rfind(name_or_path + ":", 0) == 0 &&
                        lib.error_.find("No such file") != std::string::npos;
    lib.failure_ = absent ? Failure::not_found : Failure::unusable;
    if (is_path) {
      if (const std::string note = foreign_machine_note(name_or_path); !note.empty()) lib.error_ += " (" + note + ")";
    }
    return lib;
  }
  lib.path_ = loaded_path(lib.handle_, name_or_path);
  return lib;
}

DynLib DynLib::loaded(const std::string& soname) {
  DynLib lib;
  dlerror();
  lib.handle_ = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (lib.handle_ == nullptr) {
    lib.failure_ = Failure::not_found;
    lib.error_ = soname + " is not loaded";
    return lib;
  }
  lib.path_ = loaded_path(lib.handle_, soname);
  return lib;
}

void* DynLib::symbol(const char* name) const noexcept {
  if (handle_ == nullptr) return nullptr;
  return dlsym(handle_, name);
}

}  // namespace xp::detail
