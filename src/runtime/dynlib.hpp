#pragma once

#include <string>

namespace xp::detail {

// A shared library opened with dlopen (RTLD_NOW | RTLD_LOCAL). Move-only; closes on destruction
// unless leaked with release() (the driver and NVRTC stay loaded for the life of the process).
class DynLib {
 public:
  enum class Failure { none, not_found, unusable };

  DynLib() = default;
  DynLib(DynLib&& o) noexcept;
  DynLib& operator=(DynLib&& o) noexcept;
  DynLib(const DynLib&) = delete;
  DynLib& operator=(const DynLib&) = delete;
  ~DynLib();

  // name_or_path: a bare soname goes through the OS loader's search; a path is opened as is.
  static DynLib open(const std::string& name_or_path);
  // The library of this soname if the process has loaded it already (as another library's
  // dependency, say); not ok() otherwise. Loads nothing.
  static DynLib loaded(const std::string& soname);

  bool ok() const noexcept { return handle_ != nullptr; }
  Failure failure() const noexcept { return failure_; }
  const std::string& error() const noexcept { return error_; }
  // The absolute path the loader used (from the link map).
  const std::string& path() const noexcept { return path_; }
  void* symbol(const char* name) const noexcept;
  void release() noexcept { handle_ = nullptr; }

 private:
  void* handle_ = nullptr;
  Failure failure_ = Failure::none;
  std::string error_;
  std::string path_;
};

bool file_exists(const std::string& path);

}  // namespace xp::detail
