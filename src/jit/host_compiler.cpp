// Finding and running the host C++ compiler (host_compiler.hpp).
#include "jit/host_compiler.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "jit/disk_cache.hpp"
#include "jit/program_parts.hpp"
#include "runtime/environment.hpp"
#include "xp/config.hpp"
#include "xp/error.hpp"

namespace xp::detail {

namespace {

bool executable_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) != nullptr ? std::string(buf) : p;
}

std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The CPU the code is built for (-march=native): its model and feature flags.
std::string cpu_identity() {
  utsname u{};
  std::string id = ::uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line)) {
    auto value = [&](const char* key) -> std::string {
      if (line.rfind(key, 0) != 0) return {};
      const auto colon = line.find(':');
      return colon == std::string::npos ? std::string() : line.substr(colon + 1);
    };
    if (model.empty()) model = value("model name");
    if (flags.empty()) flags = value("flags");
    if (flags.empty()) flags = value("Features");
    if (!model.empty() && !flags.empty()) break;
  }
  return id + "\n" + model + "\n" + flags;
}

HostCompiler find() {
  HostCompiler c;
  std::string wanted;
  try {
    wanted = xp::config().host_cxx;
  } catch (const Error& e) {
    c.error = e.what();
    return c;
  }
  c.found_by = wanted.empty() ? "PATH" : "XP_HOST_CXX";
  c.requested = wanted.empty() ? "c++" : wanted;
  std::string found;
  if (c.requested.find('/') != std::string::npos) {
    if (!executable_file(c.requested)) {
      c.error = "XP_HOST_CXX=" + c.requested +
                " is not an executable file: point XP_HOST_CXX at a C++ compiler (g++ or clang++), or unset it to "
                "use c++ on PATH";
      return c;
    }
    found = c.requested;
  } else {
    const std::string path = foreign_environment().path.value_or("/usr/local/bin:/usr/bin:/bin");
    std::size_t start = 0;
    while (start <= path.size()) {
      const std::size_t colon = std::min(path.find(':', start), path.size());
      const std::string dir = colon > start ? path.substr(start, colon - start) : std::string(".");
      if (executable_file(dir + "/" + c.requested)) {
        found = dir + "/" + c.requested;
        break;
      }
      start = colon + 1;
    }
    if (found.empty()) {
      c.error = (c.found_by == "PATH" ? std::string("no C++ compiler: c++ is not on PATH")
                                      : "XP_HOST_CXX=" + c.requested + " is not on PATH") +
                "; CUDA kernels run on the CPU need one: install g++ (apt install g++) or set XP_HOST_CXX to a C++ "
                "compiler's path";
      return c;
    }
  }
  c.path = real_path(found);
  // `--version` costs a process (about 2 ms), which a process that only loads cached kernels should
  // not pay: its output is remembered in the kernel cache under the compiler file's identity (path,
  // device, inode, size, modification and change times), and read from there while that file stays.
  std::string memo_key;
  struct stat st {};
  if (::stat(c.path.c_str(), &st) == 0) {
    memo_key = "xp-host-compiler 1\n";
    put_field(memo_key, "target", "host c++");  // what `xp cache list` shows
    put_field(memo_key, "name", c.path);
    put_field(memo_key, "file",
              std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
                  std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
                  std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec));
  }
  HostRun r;
  std::vector<char> memo;
  if (!memo_key.empty() && DiskCache::instance().load(memo_key, memo) == DiskCache::Lookup::hit && !memo.empty()) {
    r.status = 0;
    r.output.assign(memo.begin(), memo.end());
  } else {
    char tmp[] = "/tmp/xp-cxx-version-XXXXXX";
    const int fd = ::mkstemp(tmp);
    if (fd < 0) {
      c.error = std::string("cannot make a temporary file to run ") + c.path + " --version: " + std::strerror(errno);
      return c;
    }
    ::close(fd);
    r = run_program({found, "--version"}, tmp);
    ::unlink(tmp);
    if (r.status != 0) {
      c.error = c.path + " --version failed (" +
                (r.status < 0 ? "could not run" : "status " + std::to_string(r.status)) + ")" +
                (r.output.empty() ? "" : ": " + r.output.substr(0, 300)) +
                "; set XP_HOST_CXX to a C++ compiler (g++ or clang++)";
      return c;
    }
    // Remembered only in a folder that exists: finding the compiler (xp doctor) creates nothing.
    if (!memo_key.empty() && !r.output.empty() && DiskCache::instance().folder_exists())
      DiskCache::instance().store(memo_key, std::vector<char>(r.output.begin(), r.output.end()));
  }
  c.version = r.output.substr(0, r.output.find('\n'));
  c.identity = c.path + "\n" + r.output;
  c.cpu = cpu_identity();
  // -ffp-contract=off: no fused multiply-add that the source did not ask for (docs/semantics.md);
  // -fno-strict-aliasing: CUDA code reads floats through int pointers and the like.
  c.flags = {"-O2",
             "-fPIC",
             "-shared",
             "-march=native",
             "-ffp-contract=off",
             "-fno-math-errno",
             "-fno-strict-aliasing",
             "-fvisibility=default",
             "-fno-semantic-interposition",
             "-pthread"};
#if defined(__x86_64__)
  // TLS descriptors (GCC's spelling; clang before 19 lacks the flag): the prelude's thread_local
  // built-ins are reached without calls to __tls_get_addr, whose interception by LeakSanitizer
  // recorded a bogus range for these objects and crashed its leak check at exit in xp's sanitizer
  // build; descriptors are also the cheaper access from a shared object.
  if (r.output.find("clang") == std::string::npos) c.flags.push_back("-mtls-dialect=gnu2");
#endif
  // Each program's shared object binds its own symbols to its own definitions: a kernel named
  // like a C library function (`step`) calls the kernel, not the library. And GCC's unique
  // symbols (the static locals of inline templates, such as the prelude's parameter-size tables)
  // stay within their object: otherwise the first program loaded answers for every later one
  // that instantiates the same template for a type of the same name and another layout.
  c.flags.push_back("-Wl,-Bsymbolic");
  if (r.output.find("clang") == std::string::npos) c.flags.push_back("-fno-gnu-unique");
  // GCC's -O2 vectorises only loops that need no runtime checks (its "very cheap" model), which
  // leaves scalar the loop over a block's threads (a bounds test per thread, pointers that may
  // alias): the dynamic model vectorises it, as clang's -O2 does.
  if (r.output.find("clang") == std::string::npos) c.flags.push_back("-fvect-cost-model=dynamic");
  c.available = true;
  return c;
}

}  // namespace

const HostCompiler& host_compiler() {
  static const HostCompiler c = find();
  return c;
}

HostRun run_program(const std::vector<std::string>& argv, const std::string& log_file) {
  HostRun r;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) {
    r.output = "cannot open " + log_file + ": " + std::strerror(errno);
    return r;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out, 1);
    ::dup2(out, 2);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out);
  if (pid < 0) {
    r.output = std::string("fork failed: ") + std::strerror(errno);
    return r;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (r.status == 127) r.status = -1;
  r.output = read_file(log_file);
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace xp::detail
