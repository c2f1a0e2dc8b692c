#include "runtime/dynlib.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <utility>

namespace xp::detail {

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

DynLib::DynLib(DynLib&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)), failure_(o.failure_), error_(std::move(o.error_)), path_(std::move(o.path_)) {}

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
    return lib;
  }
  link_map* map = nullptr;
  if (dlinfo(lib.handle_, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    lib.path_ = map->l_name;
  } else {
    lib.path_ = name_or_path;
  }
  if (char* real = realpath(lib.path_.c_str(), nullptr); real != nullptr) {
    lib.path_ = real;
    std::free(real);
  }
  return lib;
}

void* DynLib::symbol(const char* name) const noexcept {
  if (handle_ == nullptr) return nullptr;
  return dlsym(handle_, name);
}

}  // namespace xp::detail
