#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "xp/runtime.hpp"

namespace xp::detail {

struct CompileRequest {
  std::string source;
  std::string name;  // the program's file name, shown in NVRTC's log
  std::vector<std::string> options;
  std::vector<std::string> name_expressions;
  std::vector<std::pair<std::string, std::string>> headers;  // include name, content
  int arch = 0;                                              // sm number: 90 for sm_90
  bool ptx = false;                                          // PTX instead of a cubin
};

struct CompileOutput {
  bool ok = false;
  std::vector<char> binary;  // cubin, or PTX text with its terminating NUL
  bool is_ptx = false;
  int target_arch = 0;  // what the code was built for (may be lower than asked when PTX)
  std::string log;
  std::vector<std::pair<std::string, std::string>> lowered_names;  // expression, mangled name
  int nvrtc_result = 0;
  std::string nvrtc_error;  // "NVRTC_ERROR_COMPILATION"
  double ms = 0;
};

// The text after "#define CUDA_VERSION " on the first line of the file that starts so ("13000"),
// or "" (no such line, no such file).
std::string cuda_version_define(const std::string& path);

// The NVRTC xp compiles with, loaded from the library the search chose, with the toolkit
// headers found next to it.
class NvrtcCompiler {
 public:
  // The NVRTC chosen for this machine (the driver's major, every GPU's arch); throws
  // xp::Error naming what was searched when there is none.
  static const NvrtcCompiler& instance();

  const LibraryInfo& library() const { return lib_; }
  int version() const { return lib_.version_number; }
  // Folders given to NVRTC with -I: the toolkit's include and include/cccl, when found.
  const std::vector<std::string>& include_dirs() const { return headers().dirs; }
  bool has_cccl() const { return headers().cccl; }
  bool supports(int arch) const;
  int newest_arch() const;
  // A fingerprint of the toolkit headers' version (the cuda.h CUDA_VERSION line), for cache keys.
  const std::string& headers_version() const { return headers().version; }

  CompileOutput compile(const CompileRequest& request) const;

  struct Api;
  // NVRTC's entry points, bound on first use; throws xp::Error when the library lacks one.
  const Api& api() const;

 private:
  NvrtcCompiler() = default;
  // The toolkit headers next to the library, looked for on first use: a kernel found in the disk
  // cache under a key without them (jit/generated.hpp) never needs them.
  struct Headers {
    std::vector<std::string> dirs;
    bool cccl = false;
    std::string version;
  };
  const Headers& headers() const;
  LibraryInfo lib_;
  mutable std::once_flag headers_once_;
  mutable Headers headers_;
  mutable std::once_flag api_once_;
  mutable const Api* api_ = nullptr;
  mutable std::string api_failure_;
};

}  // namespace xp::detail
