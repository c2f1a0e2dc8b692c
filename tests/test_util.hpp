#pragma once

// Helpers shared by xp's tests: running a program with a changed environment, temporary folders,
// and the skip-or-fail rule for tests that need NVRTC or a GPU.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace xp_test {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out, err;
};

// Runs argv with the current environment, where `set` adds or replaces variables and `unset`
// removes them. Captures stdout and stderr through temporary files (gtest's skip marker defused).
inline ProcessResult run_process(const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& set = {},
                                 const std::vector<std::string>& unset = {}) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    bool drop = set.count(key) > 0;
    for (const auto& u : unset) drop = drop || u == key;
    if (!drop) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : set) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  char out_tmpl[] = "/tmp/xp-test-out-XXXXXX";
  char err_tmpl[] = "/tmp/xp-test-err-XXXXXX";
  const int out_fd = mkstemp(out_tmpl);
  const int err_fd = mkstemp(err_tmpl);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  pid_t pid = 0;
  ProcessResult r;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data()) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&fa);
  close(out_fd);
  close(err_fd);
  auto slurp = [](const char* p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  // A child's "[  SKIPPED ]" is written "[ child SKIPPED ]": ctest takes that pattern anywhere in a
  // test's output for a skip (gtest_discover_tests' SKIP_REGULAR_EXPRESSION), and a failing test
  // that prints its child's output must stay a failure.
  const auto defuse = [](std::string s) {
    for (std::size_t at = s.find("[  SKIPPED ]"); at != std::string::npos; at = s.find("[  SKIPPED ]", at))
      s.replace(at, 12, "[ child SKIPPED ]");
    return s;
  };
  r.out = defuse(slurp(out_tmpl));
  r.err = defuse(slurp(err_tmpl));
  unlink(out_tmpl);
  unlink(err_tmpl);
  return r;
}

// Runs one case of this test program, "Suite.DISABLED_Name", in a process of its own (for what must
// start from a fresh process: settings read once, a first call, a spoiled context), with the
// environment changed as run_process does. EXPECT_CHILD_CASE_PASSED checks the result.
inline ProcessResult run_child_case(const std::string& test, const std::map<std::string, std::string>& set = {},
                                    const std::vector<std::string>& unset = {}) {
  return run_process({"/proc/self/exe", "--gtest_also_run_disabled_tests", "--gtest_filter=" + test}, set, unset);
}

// A private temporary folder (mode 0700), removed with its contents.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/xp-test-XXXXXX";
    if (::mkdtemp(tmpl) != nullptr) path_ = tmpl;
    if (!path_.empty()) ::chmod(path_.c_str(), 0700);
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// This process's kernel cache (XP_CACHE_DIR) in a folder of its own, set when constructed: a test
// file defines one at namespace scope, so that it is set before anything in xp reads the environment
// and no test reads kernels another process stored.
struct ProcessCache {
  TempDir dir;
  std::string folder = dir / "kernels";
  ProcessCache() { ::setenv("XP_CACHE_DIR", folder.c_str(), 1); }
};

inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == "1";
}

// The child case ran and passed (exactly one test, so a misspelt filter that matches none fails).
#define EXPECT_CHILD_CASE_PASSED(r)                                                        \
  do {                                                                                     \
    const ::xp_test::ProcessResult& r_ = (r);                                              \
    EXPECT_EQ(r_.exit_code, 0) << r_.out << r_.err;                                        \
    EXPECT_NE(r_.out.find("[  PASSED  ] 1 test."), std::string::npos) << r_.out << r_.err; \
  } while (0)

// Skips with the reason, unless the variable (XP_TEST_REQUIRE_NVRTC, XP_TEST_REQUIRE_GPU) says
// the resource must be there: then the missing resource fails the test.
#define XP_SKIP_OR_FAIL(require_var, reason)                                                \
  do {                                                                                      \
    if (::xp_test::env_flag(require_var)) FAIL() << (reason) << " (and " require_var "=1)"; \
    GTEST_SKIP() << (reason);                                                               \
  } while (0)

// One run of a Python reference script (tests/ref/*.py) with the repository's .venv python.
// `missing` says why it could not run (no .venv, or the script exited with 3: "NumPy 2 or ml_dtypes
// is missing"): a skip, or a failure under XP_TEST_REQUIRE_NUMPY=1 (XP_REQUIRE_REFERENCE below).
// `error` is a real failure (the script broke). `out` is its stdout.
struct PythonReference {
  std::optional<std::string> missing;
  std::optional<std::string> error;
  std::string out;
};

// NumPy's answers to a request do not change between the test programs of a build, nor between the
// builds beside it (release, sanitize, tsan): a reference run that succeeded is kept under
// .venv/xp-test-references/<key>/ (its stdout, and the files it left in the folders it was given), the
// key a hash of everything that decides the answer: the scripts of tests/ref, the arguments, the
// contents of the files and folders they name, and the packages installed in .venv (their
// dist-info names carry the versions). A failed or skipped run is not kept. XP_TEST_REFERENCE_CACHE=0
// runs every reference afresh.
namespace reference_cache {

inline void fnv(std::uint64_t& h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  h = (h ^ 0xff) * 0x100000001b3ull;  // ends each piece, so that pieces cannot run into each other
}

inline std::string slurp_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The regular files under `dir`, by path relative to it, in a fixed order.
inline std::vector<std::filesystem::path> files_under(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(std::filesystem::relative(it->path(), dir, ec));
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline std::filesystem::path venv(const std::string& python) {
  return std::filesystem::path(python).parent_path().parent_path();  // .venv/bin/python
}

inline std::string key(const std::string& python, const std::string& script, const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::uint64_t h = 0xcbf29ce484222325ull;
  fnv(h, "xp-test-reference-1");
  fnv(h, python);
  fnv(h, script);
  for (const fs::path& f : files_under(fs::path(XP_SOURCE_DIR) / "tests" / "ref")) {
    fnv(h, f.string());
    fnv(h, slurp_file(fs::path(XP_SOURCE_DIR) / "tests" / "ref" / f));
  }
  std::error_code ec;
  std::vector<std::string> packages;
  for (auto& lib : fs::directory_iterator(venv(python) / "lib", ec)) {
    for (auto& p : fs::directory_iterator(lib.path() / "site-packages", ec)) packages.push_back(p.path().string());
  }
  std::sort(packages.begin(), packages.end());
  for (const auto& p : packages) fnv(h, p);
  for (const std::string& a : args) {
    if (fs::is_directory(a, ec)) {
      fnv(h, "<folder>");
      for (const fs::path& f : files_under(a)) {
        fnv(h, f.string());
        fnv(h, slurp_file(fs::path(a) / f));
      }
    } else if (fs::is_regular_file(a, ec)) {
      fnv(h, "<file>");
      fnv(h, slurp_file(a));
    } else {
      fnv(h, a);
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// The kept run's stdout, its files copied into the folders among `args`; nullopt when none is kept.
inline std::optional<std::string> load(const std::filesystem::path& entry, const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(entry / "stdout", ec)) return std::nullopt;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const fs::path kept = entry / "files" / std::to_string(i);
    if (!fs::is_directory(kept, ec)) continue;
    for (const fs::path& f : files_under(kept)) {
      fs::create_directories((fs::path(args[i]) / f).parent_path(), ec);
      fs::copy_file(kept / f, fs::path(args[i]) / f, fs::copy_options::overwrite_existing, ec);
      if (ec) return std::nullopt;
    }
  }
  return slurp_file(entry / "stdout");
}

// Keeps a successful run: written beside the entry, then renamed into place, so that a process that
// finds the entry finds all of it (of two processes storing the same key, one rename wins).
inline void store(const std::filesystem::path& entry, const std::vector<std::string>& args, const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path tmp = entry.string() + ".tmp-" + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp / "files", ec);
  bool whole = !ec;
  for (std::size_t i = 0; whole && i < args.size(); ++i) {
    if (!fs::is_directory(args[i], ec)) continue;
    for (const fs::path& f : files_under(args[i])) {
      fs::create_directories((tmp / "files" / std::to_string(i) / f).parent_path(), ec);
      whole = whole && fs::copy_file(fs::path(args[i]) / f, tmp / "files" / std::to_string(i) / f, ec) && !ec;
    }
  }
  std::ofstream so(tmp / "stdout", std::ios::binary);
  so << out;
  so.close();
  whole = whole && so.good();
  if (!whole || std::rename(tmp.c_str(), entry.c_str()) != 0) fs::remove_all(tmp, ec);
}

}  // namespace reference_cache

inline PythonReference run_python_reference(const std::string& script, const std::vector<std::string>& args = {}) {
  PythonReference ref;
  const std::string python = XP_TEST_PYTHON;
  if (access(python.c_str(), X_OK) != 0) {
    ref.missing = "no Python at " + python + " (scripts/test.sh makes .venv with numpy 2 and ml_dtypes)";
    return ref;
  }
  const char* keep = std::getenv("XP_TEST_REFERENCE_CACHE");
  const bool cached = keep == nullptr || std::string(keep) != "0";
  const std::filesystem::path entry =
      reference_cache::venv(python) / "xp-test-references" / reference_cache::key(python, script, args);
  if (cached) {
    if (auto out = reference_cache::load(entry, args)) {
      ref.out = std::move(*out);
      return ref;
    }
  }
  std::vector<std::string> argv = {python, std::string(XP_SOURCE_DIR) + "/tests/ref/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  const ProcessResult r = run_process(argv);
  if (r.exit_code == 3) {
    ref.missing = script + " needs NumPy 2 and ml_dtypes in " + python + ": " + r.err;
  } else if (r.exit_code != 0) {
    ref.error = script + " exited with " + std::to_string(r.exit_code) + " (signal " + std::to_string(r.signal) +
                "):\n" + r.err;
  } else if (cached) {
    std::error_code ec;
    std::filesystem::create_directories(entry.parent_path(), ec);
    reference_cache::store(entry, args, r.out);
  }
  ref.out = r.out;
  return ref;
}

}  // namespace xp_test

// Skips (or fails under XP_TEST_REQUIRE_NUMPY=1) when a reference could not run; fails when it broke.
#define XP_REQUIRE_REFERENCE(ref)                                                \
  do {                                                                           \
    if ((ref).missing) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NUMPY", *(ref).missing); \
    if ((ref).error) FAIL() << *(ref).error;                                     \
  } while (0)

// Skips a test that compiles with NVRTC with "no NVRTC: error", or fails it under
// XP_TEST_REQUIRE_NVRTC=1. (Needs xp/compile.hpp, or xp/xp.hpp, included before use.)
#define XP_REQUIRE_NVRTC()                                                                      \
  do {                                                                                          \
    const ::xp::CompilerInfo info_ = ::xp::compiler_info();                                     \
    if (!info_.available) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no NVRTC: " + info_.error); \
  } while (0)

// Skips a GPU test with "no GPU (reason: detail)", or fails it under XP_TEST_REQUIRE_GPU=1.
// Under ctest (XP_TEST_LABEL set, tests/CMakeLists.txt) it first fails a test that is not labelled
// gpu, so that `ctest -L gpu` on a GPU machine leaves none out. (Needs xp/runtime.hpp included before use.)
#define XP_REQUIRE_GPU()                                                                              \
  do {                                                                                                \
    if (const char* label_ = std::getenv("XP_TEST_LABEL"); label_ && std::string(label_) != "gpu")    \
      FAIL() << "this test needs a GPU but ctest does not label it gpu (XP_TEST_LABEL=" << label_     \
             << "): add it to its program's GPU_TESTS in tests/CMakeLists.txt";                       \
    const ::xp::CudaStatus s_ = ::xp::cuda_status();                                                  \
    if (!s_.available)                                                                                \
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_GPU",                                                          \
                      "no GPU (" + std::string(::xp::to_string(s_.reason)) + ": " + s_.detail + ")"); \
  } while (0)
