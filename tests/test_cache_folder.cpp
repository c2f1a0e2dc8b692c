// The kernel disk cache in a folder it shares (white-box): sizes read from disk are never trusted
// (an entry claiming hundreds of GB is corrupt, not an allocation), only xp's own files are removed
// (by name and header, never another program's), looking at the cache creates nothing, and clearing
// it while other processes store entries reports no failure. Each case works in a private
// temporary folder of its own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "jit/disk_cache.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using xp::detail::DiskCache;
using xp::detail::encode_cache_entry;
using Lookup = xp::detail::DiskCache::Lookup;
using xp_test::TempDir;

namespace {

constexpr std::uint64_t kBig = 1ull << 30;
constexpr off_t kHuge = off_t{200} << 30;  // 200 GB, sparse: no disk is used

std::vector<char> payload_of(std::size_t n, int seed) {
  std::vector<char> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(seed) * 7) & 0xff);
  return p;
}

std::string key_of(int i) {
  return "xp-kernel-cache 1\nxp 5\n0.1.0\ntarget 5\nsm_90\nsource 9\nkernel" + std::to_string(1000 + i) + "\n";
}

bool exists_no_follow(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  ASSERT_TRUE(f.good()) << path;
  ::chmod(path.c_str(), 0600);
}

void set_mtime(const std::string& path, std::int64_t unix_seconds) {
  const struct timespec t[2] = {{unix_seconds, 0}, {unix_seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), t, AT_SYMLINK_NOFOLLOW), 0) << path << ": " << std::strerror(errno);
}

// Makes `path` kHuge bytes long (sparse), keeping what it holds.
void make_huge(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  ASSERT_EQ(::ftruncate(fd, kHuge), 0) << path << ": " << std::strerror(errno);
  ::close(fd);
}

std::uint64_t size_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

const char* kKernelSource =
    "extern \"C\" __global__ void scale(float* x, int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = x[i] * 3.0f;\n"
    "}\n";

// The line "label: VALUE" of a CLI's output.
std::string line_value(const std::string& out, const std::string& label) {
  const auto at = out.find(label);
  if (at == std::string::npos) return {};
  const auto nl = out.find('\n', at);
  return out.substr(at + label.size(), nl == std::string::npos ? std::string::npos : nl - at - label.size());
}

}  // namespace

// ---- sizes read from disk ----

// An xp entry grown to 200 GB (its header intact) is corrupt: a load removes it without allocating
// its size, and the kernel is stored again; the preload's read skips it.
TEST(CacheFolder, AnEntryOfHundredsOfGigabytesIsCorruptNotAnAllocation) {
  TempDir tmp;
  DiskCache cache(tmp / "cache", kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  const std::string key = key_of(1);
  const std::vector<char> payload = payload_of(900, 1);
  const std::string file = cache.store(key, payload);
  ASSERT_FALSE(file.empty());
  make_huge(file);

  std::string got_key;
  std::vector<char> got;
  EXPECT_FALSE(cache.read_entry(file, got_key, got)) << "the preload read a 200 GB entry";
  EXPECT_TRUE(exists_no_follow(file)) << "the preload's read removes nothing";
  EXPECT_EQ(cache.load(key, got), Lookup::corrupt_removed);
  EXPECT_TRUE(got.empty());
  EXPECT_FALSE(exists_no_follow(file));
  EXPECT_EQ(cache.store(key, payload), file);
  EXPECT_EQ(cache.load(key, got), Lookup::hit);
  EXPECT_EQ(got, payload);
}

// An entry just over the cap is refused the same way; one at the cap's edge is not stored at all
// (it could never be read back).
TEST(CacheFolder, TheLargestEntryIsANamedConstant) {
  TempDir tmp;
  DiskCache cache(tmp / "cache", ~std::uint64_t{0});
  ASSERT_TRUE(cache.usable()) << cache.problem();
  const std::string key = key_of(2);
  const std::string file = cache.store(key, payload_of(100, 2));
  ASSERT_FALSE(file.empty());
  ASSERT_EQ(::truncate(file.c_str(), static_cast<off_t>(DiskCache::kMaxEntryBytes + 1)), 0);
  std::vector<char> got;
  EXPECT_EQ(cache.load(key, got), Lookup::corrupt_removed);
  EXPECT_FALSE(exists_no_follow(file));
  EXPECT_EQ(cache.store(key, std::vector<char>(DiskCache::kMaxEntryBytes, 'x')), "");
  EXPECT_FALSE(exists_no_follow(file));
}

// Length fields in an entry's header are checked against the bytes there: a key or payload length
// larger than the file is a corrupt entry, not a read past the end or a huge allocation.
TEST(CacheFolder, LengthFieldsAreCheckedAgainstTheBytesThere) {
  TempDir tmp;
  DiskCache cache(tmp / "cache", kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  const std::string key = key_of(3);
  const std::vector<char> payload = payload_of(300, 3);
  for (const std::size_t field : {std::size_t{16}, 24 + key.size()}) {  // the key's length, the payload's
    for (const std::uint64_t claim : {std::uint64_t{1} << 63, ~std::uint64_t{0}, std::uint64_t{1} << 40}) {
      SCOPED_TRACE(std::to_string(field) + " " + std::to_string(claim));
      const std::string file = cache.store(key, payload);
      ASSERT_FALSE(file.empty());
      std::vector<char> bytes = encode_cache_entry(key, payload);
      for (int i = 0; i < 8; ++i) bytes[field + i] = static_cast<char>((claim >> (8 * i)) & 0xff);
      write_text(file, std::string(bytes.begin(), bytes.end()));
      std::string got_key;
      std::vector<char> got;
      EXPECT_FALSE(cache.read_entry(file, got_key, got));
      EXPECT_EQ(cache.load(key, got), Lookup::corrupt_removed);
      EXPECT_FALSE(exists_no_follow(file));
    }
  }
}

// `xp compile` with a 200 GB entry under its kernel's name: compiled again (not std::bad_alloc), the
// entry replaced by a whole one.
TEST(CacheFolder, XpCompileSurvivesAHugeEntry) {
  TempDir tmp;
  const std::string folder = tmp / "cache";
  const std::string source = tmp / "scale.cu";
  write_text(source, kKernelSource);
  const std::map<std::string, std::string> env = {{"XP_CACHE_DIR", folder}};
  const std::vector<std::string> argv = {XP_CLI_PATH, "compile", source, "--arch", "sm_90"};
  const auto first = xp_test::run_process(argv, env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string file = line_value(first.out, "cache entry: ");
  ASSERT_FALSE(file.empty()) << first.out;
  const std::uint64_t whole = size_of(file);
  make_huge(file);

  const auto second = xp_test::run_process(argv, env);
  EXPECT_EQ(second.exit_code, 0) << "signal " << second.signal << "\n" << second.err;
  EXPECT_NE(second.out.find("compiled (cache miss)"), std::string::npos) << second.out;
  EXPECT_EQ(size_of(file), whole) << "the entry was not rebuilt";
  const auto third = xp_test::run_process(argv, env);
  EXPECT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.out.find("disk cache hit"), std::string::npos) << third.out;
}

// A 200 GB file of zeros under an entry's name is not xp's: neither read nor removed nor replaced.
TEST(CacheFolder, AHugeFileThatIsNotAnEntryIsLeftAlone) {
  TempDir tmp;
  DiskCache cache(tmp / "cache", kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  ASSERT_FALSE(cache.store(key_of(9), payload_of(10, 9)).empty());  // makes the folder
  const std::string key = key_of(4);
  const std::string file = cache.file_for(key);
  make_huge(file);
  std::vector<char> got;
  EXPECT_EQ(cache.load(key, got), Lookup::foreign);
  EXPECT_EQ(cache.store(key, payload_of(100, 4)), "");
  EXPECT_EQ(size_of(file), static_cast<std::uint64_t>(kHuge));
  EXPECT_EQ(cache.entries().size(), 1u);
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_EQ(size_of(file), static_cast<std::uint64_t>(kHuge));
}

// ---- a folder shared with other files ----

namespace {

// Other programs' files in the cache folder, each with its content; old ones, as a dead writer's
// temporary files would be.
struct ForeignFiles {
  std::string folder;
  std::map<std::string, std::string> files = {
      {"notes.xpk", "my notes"},
      {"ABC.xpk", "not xp's"},
      {"0123456789ABCDEF0123456789ABCDEF.xpk", "upper case hex"},
      {"0123456789abcdef0123456789abcdef.xpk", "an entry's name, another program's bytes"},
      {"0123456789abcdef0123456789abcdef.xpk.bak", "XPKCACHE a backup"},
      {".tmp-foo", "another program's temporary file"},
      {".tmp-0123456789abcdef0123456789abcdef-4242-Ab3dEf", "xp's temporary name, another program's bytes"},
      {".tmp-recent-4242-Ab3dEf", "xp's temporary name, another program's bytes"},
      {".recent", "another program's list"},
  };
  void plant() {
    const std::int64_t old = static_cast<std::int64_t>(::time(nullptr)) - 3600;
    for (const auto& [name, text] : files) {
      write_text(folder + "/" + name, text);
      set_mtime(folder + "/" + name, old);
    }
  }
  void expect_intact(const char* after) const {
    for (const auto& [name, text] : files) {
      EXPECT_TRUE(exists_no_follow(folder + "/" + name)) << name << " removed by " << after;
      EXPECT_EQ(slurp(folder + "/" + name), text) << name << " changed by " << after;
    }
  }
};

}  // namespace

TEST(CacheFolder, OtherProgramsFilesSurviveStoreEvictionAndClear) {
  TempDir tmp;
  const std::string folder = tmp / "cache";
  DiskCache cache(folder, kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  ASSERT_FALSE(cache.store(key_of(0), payload_of(100, 0)).empty());  // makes the folder
  ForeignFiles foreign{folder};
  foreign.plant();
  // A temporary file of a writer of xp's that died an hour ago (pid and random part, xp's bytes).
  const std::string dead = folder + "/.tmp-fedcba9876543210fedcba9876543210-4243-Zz9aB0";
  const std::vector<char> entry = encode_cache_entry(key_of(5), payload_of(200, 5));
  write_text(dead, std::string(entry.begin(), entry.begin() + 100));
  set_mtime(dead, static_cast<std::int64_t>(::time(nullptr)) - 3600);
  ASSERT_EQ(cache.entries().size(), 1u) << "other programs' files listed as entries";

  // A store (which evicts, and removes dead writers' files).
  ASSERT_FALSE(cache.store(key_of(1), payload_of(100, 1)).empty());
  foreign.expect_intact("a store");
  EXPECT_FALSE(exists_no_follow(dead)) << "a dead writer's temporary file of xp's is left";

  // Eviction with a cap of about one entry: only xp's entries go.
  DiskCache small(folder, encode_cache_entry(key_of(2), payload_of(100, 2)).size() + 10);
  ASSERT_TRUE(small.usable()) << small.problem();
  for (int i = 2; i < 6; ++i) small.store(key_of(i), payload_of(100, i));
  foreign.expect_intact("eviction");
  EXPECT_EQ(small.entries().size(), 1u);

  // Clear.
  EXPECT_EQ(cache.clear(), 1u);
  foreign.expect_intact("clear");
  EXPECT_TRUE(cache.entries().empty());
}

TEST(CacheFolder, XpCacheClearAndEvictionLeaveOtherProgramsFiles) {
  TempDir tmp;
  const std::string folder = tmp / "cache";
  const std::string source = tmp / "scale.cu";
  write_text(source, kKernelSource);
  const auto first =
      xp_test::run_process({XP_CLI_PATH, "compile", source, "--arch", "sm_90"}, {{"XP_CACHE_DIR", folder}});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ForeignFiles foreign{folder};
  foreign.plant();
  // A cap smaller than any entry: the store evicts everything of xp's.
  const auto second = xp_test::run_process({XP_CLI_PATH, "compile", source, "--arch", "sm_80"},
                                           {{"XP_CACHE_DIR", folder}, {"XP_CACHE_MAX_BYTES", "1000"}});
  EXPECT_EQ(second.exit_code, 0) << second.err;
  foreign.expect_intact("xp compile with XP_CACHE_MAX_BYTES=1000");
  const auto info = xp_test::run_process({XP_CLI_PATH, "cache", "info"}, {{"XP_CACHE_DIR", folder}});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("entries: 0\n"), std::string::npos) << info.out;

  const auto third =
      xp_test::run_process({XP_CLI_PATH, "compile", source, "--arch", "sm_90"}, {{"XP_CACHE_DIR", folder}});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  const auto clear = xp_test::run_process({XP_CLI_PATH, "cache", "clear"}, {{"XP_CACHE_DIR", folder}});
  EXPECT_EQ(clear.exit_code, 0) << clear.err;
  EXPECT_NE(clear.out.find("removed 1 entries"), std::string::npos) << clear.out;
  foreign.expect_intact("xp cache clear");
}

// A .recent that is not xp's list is neither read, nor replaced by the next list, nor cleared.
TEST(CacheFolder, AnotherProgramsRecentFileIsLeftAlone) {
  TempDir tmp;
  const std::string folder = tmp / "cache";
  DiskCache cache(folder, kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  ASSERT_FALSE(cache.store(key_of(1), payload_of(10, 1)).empty());
  const std::string list = folder + "/.recent";
  write_text(list, "recent documents\n");
  EXPECT_TRUE(cache.recent().empty());
  EXPECT_FALSE(cache.remember({std::string(32, 'a')}));
  EXPECT_EQ(slurp(list), "recent documents\n");
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_EQ(slurp(list), "recent documents\n");
  // xp's own list, of this format or another, is xp's to replace and clear.
  write_text(list, "xp-recent 2\nwhatever\n");
  EXPECT_TRUE(cache.remember({std::string(32, 'a')}));
  EXPECT_EQ(cache.recent(), std::vector<std::string>{std::string(32, 'a')});
  EXPECT_EQ(cache.clear(), 0u);
  EXPECT_FALSE(exists_no_follow(list));
}

// ---- looking creates nothing ----

TEST(CacheFolder, XpCacheInfoWithAMissingHomeCreatesNothing) {
  TempDir tmp;
  const std::string home = tmp / "gone/home";
  const std::map<std::string, std::string> env = {{"HOME", home}};
  const std::vector<std::string> unset = {"XP_CACHE_DIR", "XDG_CACHE_HOME"};
  for (const char* action : {"info", "list", "clear"}) {
    SCOPED_TRACE(action);
    const auto r = xp_test::run_process({XP_CLI_PATH, "cache", action}, env, unset);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_FALSE(exists_no_follow(tmp / "gone")) << "xp cache " << action << " created a missing $HOME";
    if (std::string(action) == "info") {
      EXPECT_NE(r.out.find("folder:  " + home + "/.cache/xp/kernels\n"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("does not exist yet"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("entries: 0\n"), std::string::npos) << r.out;
    }
  }
  // A store creates it, private at every level it makes.
  const std::string source = tmp / "scale.cu";
  write_text(source, kKernelSource);
  const auto r = xp_test::run_process({XP_CLI_PATH, "compile", source, "--arch", "sm_90"}, env, unset);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat((home + "/.cache/xp/kernels").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::lstat((tmp / "gone").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const auto info = xp_test::run_process({XP_CLI_PATH, "cache", "info"}, env, unset);
  EXPECT_NE(info.out.find("status:  in use\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("entries: 1\n"), std::string::npos) << info.out;
}

TEST(CacheFolder, LoadingFromAMissingFolderCreatesNothing) {
  TempDir tmp;
  const std::string folder = tmp / "a/b/cache";
  DiskCache cache(folder, kBig);
  ASSERT_TRUE(cache.usable()) << cache.problem();
  EXPECT_FALSE(cache.folder_exists());
  std::vector<char> got;
  EXPECT_EQ(cache.load(key_of(1), got), Lookup::miss);
  EXPECT_TRUE(cache.entries().empty());
  EXPECT_TRUE(cache.recent().empty());
  EXPECT_EQ(cache.clear(), 0u);
  EXPECT_FALSE(exists_no_follow(tmp / "a"));
  // Another process makes the folder and stores: this cache finds the entry.
  DiskCache other(folder, kBig);
  ASSERT_FALSE(other.store(key_of(1), payload_of(50, 1)).empty());
  EXPECT_TRUE(cache.folder_exists());
  EXPECT_EQ(cache.load(key_of(1), got), Lookup::hit);
  EXPECT_EQ(got, payload_of(50, 1));
}

// ---- clear racing writers ----

// Entries stored (and removed) by others while a clear runs are not failures of the clear.
TEST(CacheFolder, ClearRacingWritersReportsNoFailure) {
  TempDir tmp;
  const std::string folder = tmp / "cache";
  DiskCache writer(folder, kBig), remover(folder, kBig), clearer(folder, kBig);
  ASSERT_FALSE(writer.store(key_of(0), payload_of(64, 0)).empty());
  std::atomic<bool> stop{false}, removing{true};
  std::atomic<long> stored{0};
  auto write = [&](int first) {
    for (int i = first; !stop.load(); i = (i + 2) % 200) {
      writer.store(key_of(i), payload_of(64, i));
      ++stored;
    }
  };
  std::thread w1(write, 0), w2(write, 1);
  std::thread r([&] {
    for (int i = 0; removing.load(); i = (i + 7) % 200) {
      ::unlink(remover.file_for(key_of(i)).c_str());
      std::this_thread::yield();
    }
  });
  std::vector<std::string> failed;
  for (int round = 0; round < 50; ++round) clearer.clear(&failed);
  removing = false;
  r.join();
  // The same through `xp cache clear`, a process of its own, while the two threads store.
  std::vector<std::string> cli_failures;
  for (int round = 0; round < 50; ++round) {
    const long before = stored.load();
    while (stored.load() < before + 20) std::this_thread::yield();  // entries to clear
    const auto c = xp_test::run_process({XP_CLI_PATH, "cache", "clear"}, {{"XP_CACHE_DIR", folder}});
    if (c.exit_code != 0 || !c.err.empty()) cli_failures.push_back(c.out + c.err);
  }
  stop = true;
  w1.join();
  w2.join();
  EXPECT_TRUE(failed.empty()) << failed.size() << " failures, the first: " << failed.front();
  EXPECT_TRUE(cli_failures.empty()) << cli_failures.size() << " of 50 failed, the first:\n" << cli_failures.front();
}
