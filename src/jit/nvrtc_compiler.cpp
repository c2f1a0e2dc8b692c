// Compiling CUDA C++ with the NVRTC that the search chose (src/runtime/nvrtc_search.cpp).
#include "jit/nvrtc_compiler.hpp"

#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "runtime/detect.hpp"
#include "runtime/driver.hpp"
#include "runtime/dynlib.hpp"
#include "runtime/nvrtc_search.hpp"
#include "xp/error.hpp"

namespace xp::detail {

namespace {
using nvrtcProgram = struct _nvrtcProgram*;
}

struct NvrtcCompiler::Api {
  int (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*destroy)(nvrtcProgram*) = nullptr;
  int (*compile)(nvrtcProgram, int, const char* const*) = nullptr;
  int (*ptx_size)(nvrtcProgram, std::size_t*) = nullptr;
  int (*ptx)(nvrtcProgram, char*) = nullptr;
  int (*cubin_size)(nvrtcProgram, std::size_t*) = nullptr;
  int (*cubin)(nvrtcProgram, char*) = nullptr;
  int (*log_size)(nvrtcProgram, std::size_t*) = nullptr;
  int (*log)(nvrtcProgram, char*) = nullptr;
  int (*add_name)(nvrtcProgram, const char*) = nullptr;
  int (*lowered)(nvrtcProgram, const char*, const char**) = nullptr;
  const char* (*error_string)(int) = nullptr;
};

namespace {

std::string parent(const std::string& path) {
  const auto p = path.rfind('/');
  return p == std::string::npos ? std::string(".") : path.substr(0, p);
}

}  // namespace

// Read with plain read(2) in 16 KB steps into a buffer left uninitialised, not an std::ifstream
// or a zero-filled string: the line sits about 14 KB into a 1.3 MB file, and this runs on the way
// to a process's first kernel even when the disk cache has it, where a first iostream's locale
// set-up (about 0.2 ms) or writing 16 KB of zeros before reading them over is a cost of its own.
std::string cuda_version_define(const std::string& path) {
  static constexpr char kTag[] = "#define CUDA_VERSION ";
  constexpr std::size_t kTagLength = sizeof kTag - 1;
  constexpr std::size_t kStep = 16384;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::unique_ptr<char[]> buf;
  std::size_t cap = 0, size = 0;  // buf[0, size) holds the unsearched lines (the last one maybe partial)
  for (bool eof = false; !eof;) {
    if (cap - size < kStep) {  // a line longer than the buffer: grow it
      const std::size_t grown = std::max(2 * cap, size + kStep);
      std::unique_ptr<char[]> next(new char[grown]);
      if (size > 0) std::memcpy(next.get(), buf.get(), size);
      buf = std::move(next);
      cap = grown;
    }
    ssize_t n = 0;
    do {
      n = ::read(fd, buf.get() + size, kStep);
    } while (n < 0 && errno == EINTR);
    size += static_cast<std::size_t>(n > 0 ? n : 0);
    eof = n <= 0;
    // Whole lines only (the last one too at the end of the file).
    std::size_t line = 0;
    for (;;) {
      const void* nl = std::memchr(buf.get() + line, '\n', size - line);
      if (nl == nullptr && !eof) break;
      const std::size_t stop =
          nl == nullptr ? size : static_cast<std::size_t>(static_cast<const char*>(nl) - buf.get());
      if (stop - line >= kTagLength && std::memcmp(buf.get() + line, kTag, kTagLength) == 0) {
        ::close(fd);
        return std::string(buf.get() + line + kTagLength, stop - line - kTagLength);
      }
      if (nl == nullptr) break;
      line = stop + 1;
    }
    if (line > 0) {  // keep only the partial last line
      std::memmove(buf.get(), buf.get() + line, size - line);
      size -= line;
    }
  }
  ::close(fd);
  return {};
}

namespace {

// The toolkit's headers sit at lib/../include (toolkit and wheel layouts alike); a toolkit's
// lib may also be targets/<triple>/lib with include beside it.
void find_headers(const std::string& lib_path, std::vector<std::string>& dirs, bool& cccl, std::string& version) {
  const std::string lib_dir = parent(lib_path);
  for (const std::string& cand : {parent(lib_dir) + "/include", parent(parent(parent(lib_dir))) + "/include"}) {
    if (!file_exists(cand + "/cuda_fp16.h") && !file_exists(cand + "/cuda.h")) continue;
    dirs.push_back(cand);
    if (file_exists(cand + "/cccl/cub/cub.cuh")) {
      dirs.push_back(cand + "/cccl");
      cccl = true;
    } else if (file_exists(cand + "/cub/cub.cuh")) {
      cccl = true;
    }
    version = cuda_version_define(cand + "/cuda.h");
    return;
  }
}

// NVRTC opens libnvrtc-builtins by its soname through its own RPATH ($ORIGIN) when it first
// compiles. Loaded here from the chosen NVRTC's folder, the soname is already resolved, which
// also holds where that lookup breaks (sanitizers intercepting dlopen lose the RPATH).
void preload_builtins(const std::string& nvrtc_path) {
  glob_t g{};
  const std::string pattern = parent(nvrtc_path) + "/libnvrtc-builtins.so.*";
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      const std::string p = g.gl_pathv[i];
      if (p.find(".alt.") != std::string::npos) continue;
      DynLib b = DynLib::open(p);
      if (b.ok()) b.release();
    }
  }
  globfree(&g);
}

template <class F>
void bind(const DynLib& lib, F& slot, const char* name) {
  slot = reinterpret_cast<F>(lib.symbol(name));
  if (slot == nullptr) throw Error(std::string("NVRTC at ") + lib.path() + " lacks " + name);
}

}  // namespace

const NvrtcCompiler& NvrtcCompiler::instance() {
  static std::once_flag once;
  static NvrtcCompiler* compiler = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    const NvrtcSearch& s = nvrtc_search();
    const int chosen = chosen_nvrtc_index();
    if (chosen < 0) {
      std::string tried;
      for (const auto& t : s.tried) tried += "\n  " + t;
      failure = s.found.empty() ? "no NVRTC found to compile CUDA C++ (`xp doctor` says where xp looked and how to "
                                  "install one); places tried:" +
                                      tried
                                : "no NVRTC found suits this driver and GPU (`xp doctor` explains)";
      return;
    }
    auto* c = new NvrtcCompiler();
    c->lib_ = s.found[static_cast<size_t>(chosen)];
    compiler = c;
  });
  if (compiler == nullptr) throw Error(failure);
  return *compiler;
}

const NvrtcCompiler::Headers& NvrtcCompiler::headers() const {
  std::call_once(headers_once_, [this] { find_headers(lib_.path, headers_.dirs, headers_.cccl, headers_.version); });
  return headers_;
}

// NVRTC's entry points, bound at the first compile (or compiler_info()). The search loaded the
// library and left it loaded, so this open finds it in the process and only adds a reference.
const NvrtcCompiler::Api& NvrtcCompiler::api() const {
  std::call_once(api_once_, [this] {
    DynLib lib = DynLib::open(lib_.path);
    if (!lib.ok()) {
      api_failure_ = "NVRTC at " + lib_.path + " could not be loaded: " + lib.error();
      return;
    }
    auto* api = new Api();
    try {
      bind(lib, api->create, "nvrtcCreateProgram");
      bind(lib, api->destroy, "nvrtcDestroyProgram");
      bind(lib, api->compile, "nvrtcCompileProgram");
      bind(lib, api->ptx_size, "nvrtcGetPTXSize");
      bind(lib, api->ptx, "nvrtcGetPTX");
      bind(lib, api->cubin_size, "nvrtcGetCUBINSize");
      bind(lib, api->cubin, "nvrtcGetCUBIN");
      bind(lib, api->log_size, "nvrtcGetProgramLogSize");
      bind(lib, api->log, "nvrtcGetProgramLog");
      bind(lib, api->add_name, "nvrtcAddNameExpression");
      bind(lib, api->lowered, "nvrtcGetLoweredName");
      bind(lib, api->error_string, "nvrtcGetErrorString");
    } catch (const Error& e) {
      api_failure_ = e.what();
      delete api;
      return;
    }
    lib.release();  // NVRTC stays loaded for the life of the process
    api_ = api;
  });
  if (api_ == nullptr) throw Error(api_failure_);
  return *api_;
}

bool NvrtcCompiler::supports(int arch) const {
  return nvrtc_supports(lib_, arch);
}

int NvrtcCompiler::newest_arch() const {
  return lib_.archs.empty() ? 0 : *std::max_element(lib_.archs.begin(), lib_.archs.end());
}

CompileOutput NvrtcCompiler::compile(const CompileRequest& req) const {
  static std::once_flag builtins_once;  // at the first compile only: a disk-cache hit never needs it
  const Api& api = this->api();
  std::call_once(builtins_once, [this] { preload_builtins(lib_.path); });
  CompileOutput out;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<const char*> header_src, header_names;
  for (const auto& [name, content] : req.headers) {
    header_names.push_back(name.c_str());
    header_src.push_back(content.c_str());
  }
  nvrtcProgram prog = nullptr;
  int r = api.create(&prog, req.source.c_str(), req.name.c_str(), static_cast<int>(req.headers.size()),
                     header_src.data(), header_names.data());
  if (r != 0) {
    out.nvrtc_result = r;
    out.nvrtc_error = api.error_string(r);
    return out;
  }
  struct Guard {
    const Api* api;
    nvrtcProgram* p;
    ~Guard() { api->destroy(p); }
  } guard{&api, &prog};

  // A device newer than this NVRTC knows gets PTX of the newest arch it knows; the driver
  // finishes the job.
  int arch = req.arch;
  bool ptx = req.ptx;
  if (arch > newest_arch()) {
    arch = newest_arch();
    ptx = true;
  }
  out.target_arch = arch;
  out.is_ptx = ptx;
  std::vector<std::string> opts;
  opts.push_back(std::string("--gpu-architecture=") + (ptx ? "compute_" : "sm_") + std::to_string(arch));
  for (const auto& d : include_dirs()) opts.push_back("-I" + d);
  for (const auto& o : req.options) opts.push_back(o);
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  for (const auto& e : req.name_expressions) api.add_name(prog, e.c_str());

  r = api.compile(prog, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  if (api.log_size(prog, &log_size) == 0 && log_size > 1) {
    out.log.resize(log_size);
    api.log(prog, out.log.data());
    out.log.resize(log_size - 1);
  }
  if (r != 0) {
    out.nvrtc_result = r;
    out.nvrtc_error = api.error_string(r);
    return out;
  }
  std::size_t size = 0;
  if (ptx) {
    api.ptx_size(prog, &size);
    out.binary.resize(size);
    api.ptx(prog, out.binary.data());
  } else {
    api.cubin_size(prog, &size);
    out.binary.resize(size);
    api.cubin(prog, out.binary.data());
  }
  for (const auto& e : req.name_expressions) {
    const char* lowered = nullptr;
    if (api.lowered(prog, e.c_str(), &lowered) == 0 && lowered != nullptr) out.lowered_names.emplace_back(e, lowered);
  }
  out.ok = true;
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace xp::detail

#include "xp/program.hpp"

namespace xp {

CompilerInfo compiler_info() noexcept {
  CompilerInfo i;
  try {
    const auto& c = detail::NvrtcCompiler::instance();
    (void)c.api();  // an NVRTC that lacks an entry point is not available
    i.available = true;
    i.nvrtc_path = c.library().path;
    i.nvrtc_version = c.library().version;
    i.include_dirs = c.include_dirs();
    i.cccl_found = c.has_cccl();
    i.toolkit_headers_version = c.headers_version();
  } catch (const std::exception& e) {
    i.error = e.what();
  }
  return i;
}

}  // namespace xp
