// The kernel disk cache (white-box): the hash that names entries, storing and loading, damaged and
// foreign entries, concurrent writers (threads and `xp compile` processes), a folder that cannot be
// used, ownership and permission refusals, links, least-recently-used eviction. Each case works in
// a private temporary folder of its own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "jit/build_id.hpp"
#include "jit/disk_cache.hpp"
#include "jit/generated.hpp"
#include "jit/hash.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using xp::detail::DiskCache;
using xp::detail::encode_cache_entry;
using xp::detail::hash128;
using xp::detail::hash128_bytes;
using Lookup = xp::detail::DiskCache::Lookup;

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kBig = 1ull << 30;

using xp_test::TempDir;

std::vector<char> payload_of(std::size_t n, int seed) {
  std::vector<char> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(seed) * 7) & 0xff);
  return p;
}

// Key material shaped like xp's (fields of "label LEN\nVALUE\n"), all keys of one length.
std::string key_of(int i, const std::string& xp_version = "0.1.0") {
  char num[16];
  std::snprintf(num, sizeof num, "%04d", i);
  return "xp-kernel-cache 1\nxp 5\n" + xp_version + "\ntarget 5\nsm_90\nsource 21\n__global__ void k" + num + "(){}\n";
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<char>& data, mode_t mode = 0600) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ::fchmod(fd, mode);
  ::close(fd);
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode;
}

bool exists_no_follow(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) out.push_back(e.path().filename().string());
  return out;
}

void set_mtime(const std::string& path, std::int64_t unix_seconds) {
  const struct timespec t[2] = {{unix_seconds, 0}, {unix_seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), t, AT_SYMLINK_NOFOLLOW), 0) << path << ": " << std::strerror(errno);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

const char* kKernelSource =
    "extern \"C\" __global__ void racer(float* x, int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = x[i] * 2.0f + 1.0f;\n"
    "}\n";

}  // namespace

// ---- the hash (MurmurHash3 x64-128; vectors from the mmh3 package, low 64 bits first) ----

TEST(Hash128, MatchesMmh3Vectors) {
  struct Case {
    std::string data;
    std::uint64_t seed, lo, hi;
  };
  std::string bytes31;
  for (int i = 0; i < 31; ++i) bytes31.push_back(static_cast<char>(i));
  const Case cases[] = {
      {"", 0, 0x0ull, 0x0ull},
      {"a", 0, 0x85555565f6597889ull, 0xe6b53a48510e895aull},
      {"hello world", 0, 0x533f6046eb7f610eull, 0xab97467d60eb63b1ull},
      {"The quick brown fox jumps over the lazy dog", 42, 0x740dcf93fe0bd5d7ull, 0xc4546cf4ec705c8full},
      {bytes31, 7, 0x04365954be67f77eull, 0x5a9e408d5359e11cull},
  };
  for (const auto& c : cases) {
    const auto h = hash128_bytes(c.data.data(), c.data.size(), c.seed);
    EXPECT_EQ(h.lo, c.lo) << "'" << c.data << "' seed " << c.seed;
    EXPECT_EQ(h.hi, c.hi) << "'" << c.data << "' seed " << c.seed;
    EXPECT_EQ(hash128(std::string_view(c.data), c.seed), h);
  }
}

TEST(Hash128, HexIs32LowercaseDigits) {
  EXPECT_EQ(hash128("").hex(), std::string(32, '0'));
  const std::string h = hash128("a").hex();
  EXPECT_EQ(h.size(), 32u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
  EXPECT_EQ(h, "e6b53a48510e895a85555565f6597889");  // the 128-bit value, high half first
  EXPECT_NE(hash128("a", 1).hex(), h);               // the seed changes the hash
}

// ---- store and load ----

TEST(DiskCache, StoreThenLoadAndPrivateModes) {
  TempDir tmp;
  DiskCache cache(tmp / "a/b/c", kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  EXPECT_EQ(cache.problem(), "");
  const std::string key = key_of(1);
  const std::vector<char> payload = payload_of(1000, 1);
  std::vector<char> got;
  EXPECT_EQ(cache.load(key, got), Lookup::miss);
  EXPECT_FALSE(exists_no_follow(tmp / "a")) << "only a store creates the folder";

  const mode_t old_umask = ::umask(0);  // 0700 must not depend on the umask
  const std::string file = cache.store(key, payload);
  ::umask(old_umask);
  for (const char* part : {"a", "a/b", "a/b/c"}) {
    const mode_t m = mode_of(tmp / part);
    EXPECT_TRUE(S_ISDIR(m)) << part;
    EXPECT_EQ(m & 07777, 0700u) << part << std::oct << " mode " << (m & 07777);
  }
  EXPECT_EQ(mode_of(tmp.path()) & 07777, 0700u);  // an existing folder is left as it was
  EXPECT_EQ(file, cache.file_for(key));
  EXPECT_EQ(file, tmp / "a/b/c/" + hash128(key).hex() + ".xpk");
  EXPECT_EQ(mode_of(file) & 07777, 0600u) << std::oct << (mode_of(file) & 07777);
  EXPECT_TRUE(S_ISREG(mode_of(file)));
  EXPECT_EQ(read_bytes(file), encode_cache_entry(key, payload));

  std::string where;
  EXPECT_EQ(cache.load(key, got, &where), Lookup::hit);
  EXPECT_EQ(got, payload);
  EXPECT_EQ(where, file);

  // An empty payload is an entry too; another key is another file.
  EXPECT_FALSE(cache.store(key_of(2), {}).empty());
  got = payload_of(3, 9);
  EXPECT_EQ(cache.load(key_of(2), got), Lookup::hit);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(cache.entries().size(), 2u);

  // A second cache object on the same folder (another process, in effect) sees the entry.
  DiskCache again(tmp / "a/b/c/", kBig);
  EXPECT_EQ(again.folder(), tmp / "a/b/c");
  EXPECT_EQ(again.load(key, got), Lookup::hit);
  EXPECT_EQ(got, payload);
}

// ---- damaged and foreign entries ----

namespace {

// Stores an entry, damages its file with `damage`, and expects it to be removed, then rebuilt.
template <class F>
void expect_removed_when(F damage, const char* what) {
  SCOPED_TRACE(what);
  TempDir tmp;
  DiskCache cache(tmp / "cache", kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  const std::string key = key_of(3);
  const std::vector<char> payload = payload_of(777, 3);
  const std::string file = cache.store(key, payload);
  ASSERT_FALSE(file.empty());
  damage(file);
  std::vector<char> got;
  EXPECT_EQ(cache.load(key, got), Lookup::corrupt_removed);
  EXPECT_TRUE(got.empty()) << "a damaged payload was handed out";
  EXPECT_FALSE(exists_no_follow(file)) << "the damaged entry is still there";
  EXPECT_EQ(cache.load(key, got), Lookup::miss);
  EXPECT_EQ(cache.store(key, payload), file);
  EXPECT_EQ(cache.load(key, got), Lookup::hit);
  EXPECT_EQ(got, payload);
}

}  // namespace

TEST(DiskCache, CorruptEntriesAreRemoved) {
  expect_removed_when(
      [](const std::string& f) {
        auto b = read_bytes(f);
        b[b.size() - 100] ^= 0x01;  // one bit of the payload
        write_bytes(f, b);
      },
      "a flipped payload byte");
  expect_removed_when(
      [](const std::string& f) {
        auto b = read_bytes(f);
        b.resize(b.size() - 5);
        write_bytes(f, b);
      },
      "a truncated entry");
  expect_removed_when(
      [](const std::string& f) {
        auto b = read_bytes(f);
        b.resize(20);
        write_bytes(f, b);
      },
      "an entry cut inside its header");
  expect_removed_when([](const std::string& f) { write_bytes(f, {}); }, "an empty file");
  expect_removed_when(
      [](const std::string& f) {
        auto b = read_bytes(f);
        b.resize(5);
        write_bytes(f, b);
      },
      "an entry cut inside its magic");
  expect_removed_when(
      [](const std::string& f) {
        auto b = read_bytes(f);
        b[8] = 2;  // format version
        write_bytes(f, b);
      },
      "an unknown format");
  expect_removed_when(
      [](const std::string& f) {
        auto b = read_bytes(f);
        b.push_back('x');
        write_bytes(f, b);
      },
      "trailing bytes");
  expect_removed_when([](const std::string& f) { ::chmod(f.c_str(), 0666); }, "an entry others may write");
}

TEST(DiskCache, ForeignEntryIsNotUsedAndGetsReplaced) {
  TempDir tmp;
  DiskCache cache(tmp / "cache", kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  ASSERT_EQ(::mkdir(std::string(tmp / "cache").c_str(), 0700), 0);  // the folder, as a first store makes it
  const std::string key = key_of(4);
  const std::vector<char> payload = payload_of(500, 4);
  struct Case {
    const char* what;
    std::string other_key;
  };
  const Case cases[] = {
      {"another xp version's key material", key_of(4, "0.2.0")},
      {"a name collision with another key", "something else entirely"},
      {"a longer key with this key as its prefix", key + "extra"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string file = cache.file_for(key);
    const std::vector<char> planted = encode_cache_entry(c.other_key, payload_of(500, 99));
    write_bytes(file, planted);
    std::vector<char> got;
    EXPECT_EQ(cache.load(key, got), Lookup::foreign);
    EXPECT_TRUE(got.empty());
    EXPECT_EQ(read_bytes(file), planted) << "a foreign entry is left alone by a load";
    EXPECT_EQ(cache.store(key, payload), file);
    EXPECT_EQ(cache.load(key, got), Lookup::hit);
    EXPECT_EQ(got, payload);
    ::unlink(file.c_str());
  }
}

// A file under an entry's name that does not begin with xp's magic is another program's: a load
// neither uses nor removes it, and a store does not replace it (the kernel is then not kept).
TEST(DiskCache, AFileThatDoesNotBeginAsAnEntryIsNotXps) {
  TempDir tmp;
  DiskCache cache(tmp / "cache", kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  const std::string key = key_of(5);
  const std::vector<char> payload = payload_of(400, 5);
  const std::string file = cache.store(key, payload);
  ASSERT_FALSE(file.empty());
  auto planted = read_bytes(file);
  planted[0] = 'Y';
  write_bytes(file, planted);
  std::vector<char> got;
  EXPECT_EQ(cache.load(key, got), Lookup::foreign);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(cache.store(key, payload), "");
  EXPECT_EQ(read_bytes(file), planted);
  EXPECT_TRUE(cache.entries().empty()) << "not an entry of xp's";
  EXPECT_EQ(cache.clear(), 0u);
  EXPECT_EQ(read_bytes(file), planted);
}

// ---- concurrent writers ----

TEST(DiskCache, ThreadsStoringOneKey) {
  TempDir tmp;
  DiskCache cache(tmp / "cache", kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  const std::string key = key_of(5);
  const std::vector<char> payload = payload_of(64 * 1024, 5);
  std::vector<std::string> results(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      for (int round = 0; round < 5; ++round) results[i] = cache.store(key, payload);
    });
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r, cache.file_for(key));
  EXPECT_EQ(names_in(tmp / "cache"), std::vector<std::string>{hash128(key).hex() + ".xpk"});
  std::vector<char> got;
  EXPECT_EQ(cache.load(key, got), Lookup::hit);
  EXPECT_EQ(got, payload);
}

namespace {

struct Child {
  pid_t pid = -1;
  std::string out, err;  // capture files
};

Child spawn_xp(const std::vector<std::string>& args, const std::map<std::string, std::string>& set,
               const std::string& capture_prefix) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (set.count(kv.substr(0, kv.find('='))) == 0) env.push_back(kv);
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> all = {XP_CLI_PATH};
  all.insert(all.end(), args.begin(), args.end());
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  Child c;
  c.out = capture_prefix + ".out";
  c.err = capture_prefix + ".err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (posix_spawn(&c.pid, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0) c.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return c;
}

std::string slurp(const std::string& path) {
  const auto b = read_bytes(path);
  return std::string(b.begin(), b.end());
}

// The key material stored in an entry file (to look the entry up as its writer did).
std::string key_in(const std::vector<char>& entry) {
  if (entry.size() < 24) return {};
  std::uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= std::uint64_t{static_cast<unsigned char>(entry[16 + i])} << (8 * i);
  if (len > entry.size() - 24) return {};
  return std::string(entry.data() + 24, len);
}

}  // namespace

TEST(DiskCache, EightProcessesCompilingOneKernel) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  const std::string source = tmp / "racer.cu";
  std::ofstream(source) << kKernelSource;
  const std::string folder = tmp / "cache/kernels";  // created by the racers themselves
  const std::map<std::string, std::string> env = {{"XP_CACHE_DIR", folder}, {"XP_LOG", "warn"}};
  std::size_t misses = 0, hits = 0;
  std::vector<Child> children;
  for (int i = 0; i < 8; ++i)
    children.push_back(spawn_xp({"compile", source, "--arch", "sm_90"}, env, tmp / ("child" + std::to_string(i))));
  for (auto& c : children) {
    ASSERT_GT(c.pid, 0);
    int status = 0;
    ASSERT_EQ(::waitpid(c.pid, &status, 0), c.pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << "\n"
                                                               << slurp(c.out) << slurp(c.err);
    EXPECT_EQ(slurp(c.err), "");
    EXPECT_NE(slurp(c.out).find("racer"), std::string::npos) << slurp(c.out);
    misses += count_of(slurp(c.out), "compiled (cache miss)");
    hits += count_of(slurp(c.out), "disk cache hit");
  }
  EXPECT_GE(misses, 1u);
  EXPECT_EQ(misses + hits, 8u);
  const auto names = names_in(folder);
  ASSERT_EQ(names.size(), 1u) << "leftovers: " << ::testing::PrintToString(names);
  EXPECT_EQ(names[0].size(), 32u + 4u);
  EXPECT_EQ(names[0].substr(32), ".xpk");
  EXPECT_EQ(mode_of(folder) & 07777, 0700u);
  EXPECT_EQ(mode_of(folder + "/" + names[0]) & 07777, 0600u);

  DiskCache cache(folder, kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  const std::string key = key_in(read_bytes(folder + "/" + names[0]));
  ASSERT_FALSE(key.empty());
  EXPECT_EQ(cache.file_for(key), folder + "/" + names[0]);
  std::vector<char> got;
  EXPECT_EQ(cache.load(key, got), Lookup::hit);
  EXPECT_GT(got.size(), 100u);

  // And a ninth process finds it.
  const auto r = xp_test::run_process({XP_CLI_PATH, "compile", source, "--arch", "sm_90"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("disk cache hit"), std::string::npos) << r.out;
}

// ---- a folder that cannot be used ----

TEST(DiskCache, FolderThatCannotBeCreated) {
  TempDir tmp;
  std::ofstream(tmp / "plain_file") << "not a folder";
  for (const std::string& folder : {tmp / "plain_file/sub", std::string("/proc/xp-cache")}) {
    SCOPED_TRACE(folder);
    DiskCache cache(folder, kBig);
    // The folder is made by the first store: a parent that is not a writable folder is seen at
    // once; one that refuses the mkdir anyway (/proc, even to root) by the store, which keeps nothing.
    const std::string key = key_of(6);
    std::vector<char> got;
    if (cache.usable()) {
      EXPECT_EQ(folder, "/proc/xp-cache");
      EXPECT_EQ(cache.load(key, got), Lookup::miss);
    } else {
      EXPECT_NE(cache.problem().find("cannot create"), std::string::npos) << cache.problem();
      EXPECT_EQ(cache.load(key, got), Lookup::disabled);
    }
    EXPECT_EQ(cache.store(key, payload_of(10, 6)), "");
    EXPECT_FALSE(exists_no_follow(folder));
    EXPECT_TRUE(cache.entries().empty());
    EXPECT_EQ(cache.total_bytes(), 0u);
    EXPECT_EQ(cache.clear(), 0u);
  }
  EXPECT_EQ(slurp(tmp / "plain_file"), "not a folder");
}

TEST(DiskCache, CompilingWithoutACacheWarnsOnce) {
  XP_REQUIRE_NVRTC();
  if (xp_test::env_flag("XP_TEST_DISABLED_CACHE_CHILD")) {
    // The child: XP_CACHE_DIR cannot be created. Three compiles, each looking the cache up.
    EXPECT_FALSE(xp::kernel_cache_info().usable);
    for (int i = 0; i < 3; ++i) {
      xp::ProgramOptions o;
      o.name = "nocache" + std::to_string(i) + ".cu";
      o.ptx = i == 2;
      xp::Program p(kKernelSource, o);
      const xp::CompileStats s = p.compile(xp::Arch::sm(90));
      EXPECT_FALSE(s.memory_hit || s.disk_hit);
      EXPECT_EQ(s.cache_file, "");
      EXPECT_EQ(p.kernel_names(xp::Arch::sm(90)), std::vector<std::string>{"racer"});
    }
    return;
  }
  TempDir tmp;
  std::ofstream(tmp / "plain_file") << "x";
  const std::string source = tmp / "k.cu";
  std::ofstream(source) << kKernelSource;
  const std::map<std::string, std::string> env = {{"XP_CACHE_DIR", tmp / "plain_file/sub"}, {"XP_LOG", "warn"}};

  // `xp compile`: succeeds, says nothing of a cache entry, warns once.
  auto r = xp_test::run_process({XP_CLI_PATH, "compile", source, "--arch", "sm_90"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("compiled (cache miss)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cache entry"), std::string::npos) << r.out;
  EXPECT_EQ(count_of(r.err, "disk cache disabled"), 1u) << r.err;
  EXPECT_NE(r.err.find("plain_file/sub"), std::string::npos) << r.err;

  // `xp cache info` says why; list and clear cannot act on it and say so (exit 1).
  r = xp_test::run_process({XP_CLI_PATH, "cache", "info"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("disabled: cannot create"), std::string::npos) << r.out;
  for (const char* action : {"list", "clear"}) {
    r = xp_test::run_process({XP_CLI_PATH, "cache", action}, env);
    EXPECT_EQ(r.exit_code, 1) << action << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("disabled (cannot create"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("removed"), std::string::npos) << r.out;
  }
  // The doctor lists it among the problems, with the fix, and still exits 0 (xp runs).
  r = xp_test::run_process({XP_CLI_PATH, "doctor", "--json"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  bool listed = false;
  for (const auto& p : doc.at("problems"))
    listed = listed || (p.at("id") == "kernel_cache_disabled" && p.at("severity") == "warning" &&
                        p.at("fix").get<std::string>().find("chmod 700") != std::string::npos);
  EXPECT_TRUE(listed) << doc.at("problems").dump(2);

  // This test again in a process of its own, compiling three times: one warning.
  auto child_env = env;
  child_env["XP_TEST_DISABLED_CACHE_CHILD"] = "1";
  r = xp_test::run_process(
      {fs::read_symlink("/proc/self/exe").string(), "--gtest_filter=DiskCache.CompilingWithoutACacheWarnsOnce"},
      child_env);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[  PASSED  ] 1 test"), std::string::npos) << r.out;
  EXPECT_EQ(count_of(r.err, "disk cache disabled"), 1u) << r.err;
}

// A malformed XP_* variable (any of them) is a ConfigError wherever the cache would be used: never
// a cache turned off in silence. kernel_cache_info, which the doctor reads, reports it instead.
TEST(DiskCache, AMalformedVariableIsAConfigErrorNotASilentlyDisabledCache) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  const std::string source = tmp / "k.cu";
  std::ofstream(source) << kKernelSource;
  for (const auto& [variable, value] : {std::pair<std::string, std::string>{"XP_LOG", "verbose"},
                                        std::pair<std::string, std::string>{"XP_CACHE_MAX_BYTES", "10X"}}) {
    SCOPED_TRACE(variable + "=" + value);
    const std::map<std::string, std::string> env = {{"XP_CACHE_DIR", tmp / "cache"}, {variable, value}};
    EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("DiskCache.DISABLED_MalformedVariableChild", env));
    for (const std::vector<std::string>& args : {std::vector<std::string>{"compile", source, "--arch", "sm_90"},
                                                 {"cache", "info"},
                                                 {"cache", "clear"},
                                                 {"cache", "list"}}) {
      std::vector<std::string> argv = {XP_CLI_PATH};
      argv.insert(argv.end(), args.begin(), args.end());
      const auto r = xp_test::run_process(argv, env);
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << "\n" << r.out << r.err;
      EXPECT_NE(r.err.find(variable), std::string::npos) << r.err;
    }
    EXPECT_TRUE(names_in(tmp / "cache").empty());
  }
}

TEST(DiskCache, DISABLED_MalformedVariableChild) {
  const xp::KernelCacheInfo info = xp::kernel_cache_info();  // never throws
  EXPECT_FALSE(info.usable);
  EXPECT_NE(info.problem.find("XP_"), std::string::npos) << info.problem;
  xp::Program p(kKernelSource, {.name = "malformed.cu"});
  EXPECT_THROW(p.compile(xp::Arch::sm(90)), xp::ConfigError);
  EXPECT_THROW(xp::clear_kernel_cache(), xp::ConfigError);
  EXPECT_THROW(xp::kernel_cache_entries(), xp::ConfigError);
}

// ---- folders and entries that are not the user's own ----

TEST(DiskCache, FolderOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  TempDir tmp;
  const std::string folder = tmp / "theirs";
  ASSERT_EQ(::mkdir(folder.c_str(), 0700), 0);
  ASSERT_EQ(::chown(folder.c_str(), 65534, 65534), 0) << std::strerror(errno);
  DiskCache cache(folder, kBig);
  EXPECT_FALSE(cache.usable());
  EXPECT_NE(cache.problem().find("uid 65534"), std::string::npos) << cache.problem();
  EXPECT_EQ(cache.store(key_of(7), payload_of(10, 7)), "");
  EXPECT_TRUE(names_in(folder).empty());
}

TEST(DiskCache, FolderOthersMayWriteIsRefused) {
  for (const mode_t mode : {mode_t{0770}, mode_t{0777}, mode_t{0720}, mode_t{0702}}) {
    TempDir tmp;
    const std::string folder = tmp / "shared";
    ASSERT_EQ(::mkdir(folder.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(folder.c_str(), mode), 0);
    char octal[8];
    std::snprintf(octal, sizeof octal, "%03o", static_cast<unsigned>(mode));
    SCOPED_TRACE(octal);
    DiskCache cache(folder, kBig);
    EXPECT_FALSE(cache.usable());
    EXPECT_NE(cache.problem().find(std::string("mode ") + octal), std::string::npos) << cache.problem();
    EXPECT_EQ(cache.store(key_of(8), payload_of(10, 8)), "");
    EXPECT_EQ(mode_of(folder) & 07777, mode) << "the cache changed the mode of a folder it refused";
    EXPECT_TRUE(names_in(folder).empty());
  }
}

TEST(DiskCache, FolderThatIsALinkIsRefused) {
  TempDir tmp;
  const std::string real = tmp / "real";
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(real.c_str(), (tmp / "link").c_str()), 0);
  for (const std::string& folder : {tmp / "link", tmp / "link/"}) {
    SCOPED_TRACE(folder);
    DiskCache cache(folder, kBig);
    EXPECT_FALSE(cache.usable());
    EXPECT_NE(cache.problem().find("symbolic link"), std::string::npos) << cache.problem();
    EXPECT_EQ(cache.store(key_of(9), payload_of(10, 9)), "");
  }
  EXPECT_TRUE(names_in(real).empty());
  EXPECT_TRUE(DiskCache(real, kBig).usable());
}

TEST(DiskCache, EntryThatIsALinkIsNotFollowed) {
  TempDir tmp;
  DiskCache cache(tmp / "cache", kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  ASSERT_EQ(::mkdir(std::string(tmp / "cache").c_str(), 0700), 0);  // the folder, as a first store makes it
  const std::string key = key_of(10);
  // Even a perfectly valid entry is not read through a link.
  const std::vector<char> planted = encode_cache_entry(key, payload_of(300, 10));
  const std::string target = tmp / "elsewhere.xpk";
  write_bytes(target, planted);
  const std::string file = cache.file_for(key);
  ASSERT_EQ(::symlink(target.c_str(), file.c_str()), 0);
  set_mtime(target, 1000000000);

  std::vector<char> got;
  EXPECT_EQ(cache.load(key, got), Lookup::miss);
  EXPECT_TRUE(got.empty());
  EXPECT_TRUE(S_ISLNK(mode_of(file)));
  EXPECT_TRUE(cache.entries().empty()) << "a link is not an entry";
  EXPECT_EQ(cache.clear(), 0u);
  EXPECT_TRUE(S_ISLNK(mode_of(file)));

  // Storing replaces the link itself, never writes through it.
  const std::vector<char> payload = payload_of(300, 11);
  EXPECT_EQ(cache.store(key, payload), file);
  EXPECT_TRUE(S_ISREG(mode_of(file)));
  EXPECT_EQ(cache.load(key, got), Lookup::hit);
  EXPECT_EQ(got, payload);

  EXPECT_EQ(read_bytes(target), planted);
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_sec, 1000000000) << "the link's target was touched";
}

// ---- eviction, listing, clearing ----

TEST(DiskCache, LeastRecentlyUsedEntriesAreEvicted) {
  TempDir tmp;
  const std::vector<char> payload = payload_of(2000, 12);
  const std::uint64_t entry_bytes = encode_cache_entry(key_of(0), payload).size();
  DiskCache cache(tmp / "cache", 3 * entry_bytes);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  EXPECT_EQ(cache.max_bytes(), 3 * entry_bytes);

  // Entry i was last used at base + i seconds: the order is certain whatever the clock's grain.
  const std::int64_t base = static_cast<std::int64_t>(::time(nullptr)) - 10000;
  std::vector<std::string> files;
  for (int i = 0; i < 5; ++i) {
    files.push_back(cache.store(key_of(i), payload));
    ASSERT_FALSE(files.back().empty());
    ASSERT_EQ(encode_cache_entry(key_of(i), payload).size(), entry_bytes);
    set_mtime(files.back(), base + i);
  }
  EXPECT_FALSE(exists_no_follow(files[0]));
  EXPECT_FALSE(exists_no_follow(files[1]));
  for (int i = 2; i < 5; ++i) EXPECT_TRUE(exists_no_follow(files[i])) << i;
  EXPECT_EQ(cache.entries().size(), 3u);
  EXPECT_EQ(cache.total_bytes(), 3 * entry_bytes);

  // A hit makes entry 2 the most recently used: entry 3 goes next.
  std::vector<char> got;
  ASSERT_EQ(cache.load(key_of(2), got), Lookup::hit);
  files.push_back(cache.store(key_of(5), payload));
  EXPECT_TRUE(exists_no_follow(files[2])) << "a hit did not refresh the entry";
  EXPECT_FALSE(exists_no_follow(files[3]));
  EXPECT_TRUE(exists_no_follow(files[4]));
  EXPECT_TRUE(exists_no_follow(files[5]));
  EXPECT_EQ(cache.total_bytes(), 3 * entry_bytes);

  // A lower cap, applied by evict(): the two most recent remain.
  DiskCache smaller(tmp / "cache", 2 * entry_bytes);
  smaller.evict();
  EXPECT_FALSE(exists_no_follow(files[4]));
  EXPECT_TRUE(exists_no_follow(files[2]));
  EXPECT_TRUE(exists_no_follow(files[5]));
}

TEST(DiskCache, EntriesTotalAndClear) {
  TempDir tmp;
  const std::string folder = tmp / "cache";
  DiskCache cache(folder, kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  EXPECT_TRUE(cache.entries().empty());
  EXPECT_EQ(cache.total_bytes(), 0u);

  std::uint64_t expected = 0;
  std::vector<std::string> files;
  for (int i = 0; i < 3; ++i) {
    files.push_back(cache.store(key_of(i), payload_of(100 * (i + 1), i)));
    expected += encode_cache_entry(key_of(i), payload_of(100 * (i + 1), i)).size();
  }
  // Things in the folder that are not entries.
  std::ofstream(folder + "/README") << "not an entry";
  std::ofstream(folder + "/.tmp-unfinished.xpk") << "a writer's temporary file";
  ASSERT_EQ(::mkdir((folder + "/folder.xpk").c_str(), 0700), 0);

  const auto entries = cache.entries();
  ASSERT_EQ(entries.size(), 3u);
  std::vector<std::string> listed;
  for (const auto& e : entries) {
    listed.push_back(e.file);
    struct stat st {};
    ASSERT_EQ(::stat(e.file.c_str(), &st), 0) << e.file;
    EXPECT_EQ(e.bytes, static_cast<std::uint64_t>(st.st_size));
    EXPECT_EQ(e.modified_ns, static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
  }
  std::sort(listed.begin(), listed.end());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(listed, files);
  EXPECT_EQ(cache.total_bytes(), expected);

  EXPECT_EQ(cache.clear(), 3u);
  EXPECT_TRUE(cache.entries().empty());
  EXPECT_EQ(cache.total_bytes(), 0u);
  for (const auto& f : files) EXPECT_FALSE(exists_no_follow(f));
  EXPECT_TRUE(exists_no_follow(folder + "/README"));
  EXPECT_TRUE(exists_no_follow(folder + "/folder.xpk"));
  EXPECT_TRUE(exists_no_follow(folder + "/.tmp-unfinished.xpk")) << "a live writer's temporary file";
  EXPECT_EQ(cache.clear(), 0u);
}

// A process killed between writing its temporary file and renaming it leaves the file behind; it is
// no entry, so only its age tells it from a live writer's: eviction and clear remove it after a minute.
TEST(DiskCache, TemporaryFilesOfWritersThatDiedAreRemoved) {
  TempDir tmp;
  const std::string folder = tmp / "cache";
  DiskCache cache(folder, kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  ASSERT_EQ(::mkdir(folder.c_str(), 0700), 0);  // as another process's store made it
  const std::int64_t now = static_cast<std::int64_t>(::time(nullptr));
  // Temporary names as xp's writers make them (the entry's name, the pid, mkostemp's part), holding
  // the start of an entry; one without the pid, as earlier versions of xp named them.
  const std::string dead = folder + "/.tmp-0123456789abcdef0123456789abcdef-4242-Xq81Zp",
                    live = folder + "/.tmp-456789abcdef0123456789abcdef0123-Ab3dEf";
  const std::vector<char> entry_bytes = encode_cache_entry(key_of(7), payload_of(5000, 7));
  write_bytes(dead, std::vector<char>(entry_bytes.begin(), entry_bytes.begin() + 3000));
  write_bytes(live, {});  // a writer between mkostemp and its write
  write_bytes(folder + "/.other", payload_of(10, 3));
  set_mtime(dead, now - 3600);
  const std::string entry = cache.store(key_of(1), payload_of(100, 1));  // a store evicts
  ASSERT_FALSE(entry.empty());
  EXPECT_FALSE(exists_no_follow(dead));
  EXPECT_TRUE(exists_no_follow(live));
  EXPECT_TRUE(exists_no_follow(folder + "/.other")) << "not a temporary file of xp's";
  set_mtime(live, now - 120);
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_FALSE(exists_no_follow(live));
  EXPECT_FALSE(exists_no_follow(entry));
  EXPECT_TRUE(exists_no_follow(folder + "/.other"));
}

// Two processes evicting at once (here two caches with a mutex each, on two threads): an entry the
// other removed first counts as removed, so together they remove only what the cap asks.
TEST(DiskCache, ConcurrentEvictionsRemoveOnlyWhatTheCapAsks) {
  TempDir tmp;
  const std::vector<char> payload = payload_of(1000, 5);
  const std::int64_t base = static_cast<std::int64_t>(::time(nullptr)) - 10000;
  int over = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::string folder = tmp / ("race" + std::to_string(trial));
    DiskCache fill(folder, kBig);
    std::uint64_t total = 0;
    for (int i = 0; i < 10; ++i) {
      const std::string f = fill.store(key_of(i), payload);
      ASSERT_FALSE(f.empty());
      set_mtime(f, base + i);
      total += encode_cache_entry(key_of(i), payload).size();
    }
    DiskCache a(folder, total - 1), b(folder, total - 1);  // one entry must go
    std::atomic<int> ready{0};
    auto run = [&](DiskCache& c) {
      ++ready;
      while (ready.load() < 2) {
      }
      c.evict();
    };
    std::thread ta(run, std::ref(a)), tb(run, std::ref(b));
    ta.join();
    tb.join();
    const std::size_t left = fill.entries().size();
    EXPECT_GE(left, 9u);
    over += left < 9 ? 1 : 0;
  }
  EXPECT_EQ(over, 0) << "trials where the two evictions removed more than the one entry needed";
}

// XP_CACHE_MAX_BYTES=0 keeps nothing: the cache says so instead of storing and deleting each entry.
TEST(DiskCache, ACapOfZeroIsADisabledCacheAndAnEntryOverTheCapIsNotNamed) {
  TempDir tmp;
  DiskCache none(tmp / "none", 0);
  EXPECT_FALSE(none.usable());
  EXPECT_NE(none.problem().find("XP_CACHE_MAX_BYTES is 0"), std::string::npos) << none.problem();
  EXPECT_EQ(none.store(key_of(1), payload_of(100, 1)), "");
  std::vector<char> got;
  EXPECT_EQ(none.load(key_of(1), got), Lookup::disabled);
  // A cap smaller than one entry: the entry is evicted as soon as it is stored, and store names none.
  DiskCache tiny(tmp / "tiny", 64);
  ASSERT_TRUE(tiny.usable()) << tiny.problem();
  EXPECT_EQ(tiny.store(key_of(2), payload_of(1000, 2)), "");
  EXPECT_TRUE(tiny.entries().empty());
}

// Generated kernels are cached under the build ID of xp's code, NVRTC's version, the target, the
// options, the kernel's name and the generator's key (jit/generated.hpp): any of them changed
// gives another key; an architecture NVRTC cannot compile for gives none (xp::Program says why).
TEST(GeneratedKernels, KeyMaterialNamesEverythingTheKernelDependsOn) {
  const std::string& id = xp::detail::build_id();
  ASSERT_EQ(id.size(), 40u) << "a SHA-1 build ID, linked with --build-id=sha1: '" << id << "'";
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  XP_REQUIRE_NVRTC();
  using xp::detail::generated_key_material;
  xp::ProgramOptions o;
  o.name = "xp_fused.cu";
  o.options = {"--fmad=false"};
  const std::string k = generated_key_material("xp-ew-1;contiguous;add", o, "xp_ew_1", 90);
  ASSERT_FALSE(k.empty());
  EXPECT_EQ(generated_key_material("xp-ew-1;contiguous;add", o, "xp_ew_1", 90), k);
  for (const std::string& part :
       {id, std::string("sm_90"), std::string("--fmad=false"), std::string("xp-ew-1;contiguous;add"),
        std::string("xp_ew_1"), std::string("xp_fused.cu"), xp::compiler_info().nvrtc_version})
    EXPECT_NE(k.find(part), std::string::npos) << part << " not in\n" << k;
  EXPECT_NE(generated_key_material("xp-ew-1;contiguous;mul", o, "xp_ew_1", 90), k);
  EXPECT_NE(generated_key_material("xp-ew-1;contiguous;add", o, "xp_ew_2", 90), k);
  EXPECT_NE(generated_key_material("xp-ew-1;contiguous;add", o, "xp_ew_1", 80), k);
  xp::ProgramOptions other = o;
  other.options = {"--fmad=true"};
  EXPECT_NE(generated_key_material("xp-ew-1;contiguous;add", other, "xp_ew_1", 90), k);
  other = o;
  other.ptx = true;
  EXPECT_NE(generated_key_material("xp-ew-1;contiguous;add", other, "xp_ew_1", 90).find("compute_90"),
            std::string::npos);
  EXPECT_EQ(generated_key_material("xp-ew-1;contiguous;add", o, "xp_ew_1", 0), "");
  EXPECT_EQ(generated_key_material("xp-ew-1;contiguous;add", o, "xp_ew_1", 60), "");  // below NVRTC 13's sm_75
}

// The CUDA backend sets the lookup up when it is created for a device (prepare_generated_kernels).
// It never throws: a device that cannot be used is reported by the first lookup, with its reason.
TEST(GeneratedKernels, PreparingTheLookupNeverThrows) {
  EXPECT_NO_THROW(xp::detail::prepare_generated_kernels(xp::Device::cpu()));
  const xp::Device missing = xp::Device::cuda(64);
  EXPECT_NO_THROW(xp::detail::prepare_generated_kernels(missing));
  EXPECT_THROW(xp::detail::generated_kernel(
                   "xp-test prepare", [] { return std::string("extern \"C\" __global__ void k() {}\n"); },
                   xp::ProgramOptions{}, "k", missing),
               xp::DeviceUnavailable);
}

// ---- the recent list (.recent): what the last processes used, for the preload ----

namespace {
std::string name_of(int i) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%032x", i);
  return buf;
}
}  // namespace

TEST(DiskCache, TheRecentListPutsTheLatestProcessFirstAndKeepsSixtyFour) {
  TempDir tmp;
  const std::string folder = tmp / "cache";
  DiskCache cache(folder, kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  EXPECT_TRUE(cache.recent().empty()) << "no list yet";
  EXPECT_FALSE(cache.remember({})) << "nothing used: nothing written";
  EXPECT_FALSE(exists_no_follow(folder + "/.recent"));

  ASSERT_TRUE(cache.remember({name_of(1), name_of(2), name_of(1), name_of(3)}));
  EXPECT_EQ(cache.recent(), (std::vector<std::string>{name_of(1), name_of(2), name_of(3)})) << "each name once";
  struct stat st {};
  ASSERT_EQ(::lstat((folder + "/.recent").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(cache.entries().empty()) << "the list is not an entry";

  // The next process's names go first; the others follow in their order.
  ASSERT_TRUE(cache.remember({name_of(4), name_of(2)}));
  EXPECT_EQ(cache.recent(), (std::vector<std::string>{name_of(4), name_of(2), name_of(1), name_of(3)}));
  // Names the list already starts with, in its order: the file is left as it is.
  const ino_t inode = st.st_ino;
  EXPECT_FALSE(cache.remember({name_of(4), name_of(2)}));
  ASSERT_EQ(::lstat((folder + "/.recent").c_str(), &st), 0);
  EXPECT_NE(st.st_ino, inode) << "the second write renamed a new file into place";
  const ino_t written = st.st_ino;
  EXPECT_FALSE(cache.remember({name_of(4)}));
  ASSERT_EQ(::lstat((folder + "/.recent").c_str(), &st), 0);
  EXPECT_EQ(st.st_ino, written);

  std::vector<std::string> many;
  for (int i = 100; i < 200; ++i) many.push_back(name_of(i));
  ASSERT_TRUE(cache.remember(many));
  const auto list = cache.recent();
  ASSERT_EQ(list.size(), DiskCache::kRecentNames);
  EXPECT_EQ(list, std::vector<std::string>(many.begin(), many.begin() + 64));

  EXPECT_EQ(cache.clear(), 0u);
  EXPECT_FALSE(exists_no_follow(folder + "/.recent")) << "clear removes the list too";
}

TEST(DiskCache, ARecentListThatIsNotWholeOrNotTheUsersIsIgnored) {
  TempDir tmp;
  const std::string folder = tmp / "cache";
  DiskCache cache(folder, kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  ASSERT_EQ(::mkdir(folder.c_str(), 0700), 0);  // the folder, as a first store makes it
  const std::string list = folder + "/.recent";
  auto write = [&](const std::string& text, mode_t mode) {
    ::unlink(list.c_str());
    std::ofstream(list) << text;
    ASSERT_EQ(::chmod(list.c_str(), mode), 0);
  };
  // Lines that are not names are skipped; a last line without its newline is not whole.
  write("xp-recent 1\n" + name_of(1) + "\nNOT-A-NAME\n" + name_of(2) + "0\n" + name_of(3) + "\n" + name_of(4), 0600);
  EXPECT_EQ(cache.recent(), (std::vector<std::string>{name_of(1), name_of(3)}));
  write("xp-recent 2\n" + name_of(1) + "\n", 0600);
  EXPECT_TRUE(cache.recent().empty()) << "another format";
  write("xp-recent 1\n" + name_of(1) + "\n", 0622);
  EXPECT_TRUE(cache.recent().empty()) << "others may write it";
  // A link is not followed, and a new list replaces it rather than writing through it.
  const std::string target = tmp / "elsewhere";
  std::ofstream(target) << "xp-recent 1\n" + name_of(9) + "\n";
  ::unlink(list.c_str());
  ASSERT_EQ(::symlink(target.c_str(), list.c_str()), 0);
  EXPECT_TRUE(cache.recent().empty());
  ASSERT_TRUE(cache.remember({name_of(5)}));
  EXPECT_EQ(cache.recent(), std::vector<std::string>{name_of(5)});
  std::ifstream in(target);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "xp-recent 1\n" + name_of(9) + "\n");
}
