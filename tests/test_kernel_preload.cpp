// The preload of recently used kernels (XP_PRELOAD_KERNELS, src/jit/program.cpp) on the fake
// driver's hollow devices: kernels are compiled by the real NVRTC, loaded through the fake, and none
// runs. A child process fills this process's disk cache; this process then starts using a device,
// and what the preload loaded is counted by the fake (modules) and by the cache (entries, times).
// Each case runs in a process of its own, so the device is first used inside the case.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fake_driver/fake_handle.hpp"
#include "jit/disk_cache.hpp"
#include "jit/generated.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;
namespace fs = std::filesystem;

namespace {

const xp_test::ProcessCache process_cache;

// A program of the user's own, besides the generated kernels.
constexpr const char* kUserSource = R"(extern "C" __global__ void twice(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
})";

// An array uploaded from the host (no kernel makes it).
Array uploaded(std::int64_t n, const Device& d) {
  return asarray(std::vector<float>(static_cast<std::size_t>(n), 1.5f), Shape{n}, d);
}

std::vector<fs::path> entry_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(process_cache.folder))
    if (e.path().extension() == ".xpk") out.push_back(e.path());
  return out;
}

std::time_t modified(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? st.st_mtim.tv_sec : 0;
}

void set_modified(const fs::path& p, std::time_t t) {
  const timespec times[2] = {{t, 0}, {t, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0) << p;
}

std::size_t recent_entries(std::time_t since) {
  std::size_t n = 0;
  for (const auto& f : entry_files()) n += modified(f) >= since ? 1 : 0;
  return n;
}

// Skips without NVRTC (a failure where XP_TEST_REQUIRE_NVRTC=1, as in CI); the fake must be usable.
#define REQUIRE_USABLE_FAKE()                                                                              \
  do {                                                                                                     \
    const CudaStatus s_ = cuda_status();                                                                   \
    if (s_.reason == CudaReason::no_usable_nvrtc)                                                          \
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no usable NVRTC, so CUDA is not available: " + s_.detail); \
    ASSERT_TRUE(s_.available) << to_string(s_.reason) << ": " << s_.detail;                                \
  } while (0)

class KernelPreload : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* driver = std::getenv("XP_CUDA_DRIVER");
    ASSERT_TRUE(driver != nullptr && std::string(driver) == XP_FAKE_DRIVER_PATH)
        << "run through ctest, which sets XP_CUDA_DRIVER=" << XP_FAKE_DRIVER_PATH;
  }

  // The child case `name` in a process of its own, on the default device, with this process's cache
  // folder; XP_PRELOAD_KERNELS as `preload` ("": the default).
  static xp_test::ProcessResult child(const std::string& name, const std::string& preload = "") {
    std::map<std::string, std::string> set = {{"XP_TEST_SHARED_CACHE_DIR", process_cache.folder}};
    std::vector<std::string> unset = {"FORCE_CPU", "XP_DEVICE"};
    if (preload.empty())
      unset.push_back("XP_PRELOAD_KERNELS");
    else
      set["XP_PRELOAD_KERNELS"] = preload;
    return xp_test::run_child_case("KernelPreload." + name, set, unset);
  }

  // A child process runs a + b, a * b (float32) and the user's program on cuda:0 with this process's
  // cache folder, and preloads nothing itself.
  void seed(const std::string& case_name = "DISABLED_SeedTheCache") {
    const xp_test::ProcessResult r = child(case_name, "0");
    EXPECT_CHILD_CASE_PASSED(r);
  }

  // The child's report of its own preload (DISABLED_ReportThePreload), with `preload` as the variable.
  std::string child_report(const std::string& preload) {
    const xp_test::ProcessResult r = child("DISABLED_ReportThePreload", preload);
    EXPECT_CHILD_CASE_PASSED(r);
    const auto at = r.out.find("preload:");
    return at == std::string::npos ? std::string() : r.out.substr(at, r.out.find('\n', at) - at);
  }

  const Device gpu0 = Device::cuda(0);
  const Device gpu1 = Device::cuda(1);
  xp_test::FakeDriverHandle fake;
};

}  // namespace

TEST_F(KernelPreload, DISABLED_SeedTheCache) {
  const char* shared = std::getenv("XP_TEST_SHARED_CACHE_DIR");
  ASSERT_NE(shared, nullptr);
  ::setenv("XP_CACHE_DIR", shared, 1);
  const Array a = uploaded(1000, gpu0), b = uploaded(1000, gpu0);
  (a + b).eval();
  (a * b).eval();
  Program p(kUserSource, ProgramOptions{"twice"});
  (void)p.kernel("twice", gpu0);
  const detail::PreloadReport r = detail::wait_for_kernel_preload(gpu0);
  EXPECT_EQ(r.ran, config().preload_kernels > 0);
  // With a preload, a kernel asked for while it was being loaded may have been loaded twice.
  if (config().preload_kernels == 0) {
    EXPECT_EQ(fake.modules_loaded(), 3);
  }
  EXPECT_GE(fake.modules_loaded(), 3);
  EXPECT_LE(fake.modules_loaded(), 6);
}

TEST_F(KernelPreload, DISABLED_OnlyAProgram) {
  const char* shared = std::getenv("XP_TEST_SHARED_CACHE_DIR");
  ASSERT_NE(shared, nullptr);
  ::setenv("XP_CACHE_DIR", shared, 1);
  Program p(kUserSource, ProgramOptions{"twice"});
  (void)p.kernel("twice", gpu0);  // no array: the CUDA backend is not started
  EXPECT_FALSE(detail::wait_for_kernel_preload(gpu0).ran);
}

TEST_F(KernelPreload, DISABLED_AProgramThenArraysThenExit) {
  const char* shared = std::getenv("XP_TEST_SHARED_CACHE_DIR");
  ASSERT_NE(shared, nullptr);
  ::setenv("XP_CACHE_DIR", shared, 1);
  Program p(kUserSource, ProgramOptions{"twice"});
  (void)p.kernel("twice", gpu0);             // the exit hook is registered here, before the backend starts
  detail::set_preload_delay_for_tests(100);  // the preload starts late, as on a busy machine
  (void)uploaded(16, gpu0);                  // the backend starts, and its preload with it
}  // the process ends while the preload may still run: nothing it reads may be destroyed first

TEST_F(KernelPreload, DISABLED_Subtract) {
  const char* shared = std::getenv("XP_TEST_SHARED_CACHE_DIR");
  ASSERT_NE(shared, nullptr);
  ::setenv("XP_CACHE_DIR", shared, 1);
  const Array a = uploaded(1000, gpu0), b = uploaded(1000, gpu0);
  (a - b).eval();
}

TEST_F(KernelPreload, DISABLED_ReportThePreload) {
  const char* shared = std::getenv("XP_TEST_SHARED_CACHE_DIR");
  ASSERT_NE(shared, nullptr);
  ::setenv("XP_CACHE_DIR", shared, 1);
  (void)empty({16}, DType::float32, gpu0);  // the device's first use
  const detail::PreloadReport r = detail::wait_for_kernel_preload(gpu0);
  std::printf("preload: ran %d modules %zu kernels %zu loaded %ld\n", r.ran ? 1 : 0, r.modules, r.kernels,
              fake.modules_loaded());
}

TEST_F(KernelPreload, DISABLED_ExitRightAfterTheDevicesFirstUse) {
  const char* shared = std::getenv("XP_TEST_SHARED_CACHE_DIR");
  ASSERT_NE(shared, nullptr);
  ::setenv("XP_CACHE_DIR", shared, 1);
  (void)empty({16}, DType::float32, gpu0);  // the preload starts; the process ends without waiting
}

// The kernels of the previous process are loaded when this one starts using the device, before it
// asks for them: their first use loads no module and compiles nothing, and a kernel that was not
// in the cache still loads its own.
TEST_F(KernelPreload, RecentKernelsAreLoadedBeforeTheirFirstUse) {
  REQUIRE_USABLE_FAKE();
  seed();
  const std::size_t entries = kernel_cache_info().entries;
  ASSERT_EQ(entries, 5u) << "a + b and a * b under two keys each, and the user's program";
  ASSERT_EQ(fake.modules_loaded(), 0);
  const Array a = uploaded(5000, gpu0), b = uploaded(5000, gpu0);
  const detail::PreloadReport r = detail::wait_for_kernel_preload(gpu0);
  EXPECT_TRUE(r.ran);
  EXPECT_EQ(r.modules, 3u) << "one module per binary: a generated kernel's two entries hold one (" << r.note << ")";
  EXPECT_EQ(r.kernels, 2u) << r.note;
  EXPECT_EQ(r.failed, 0u) << r.note;
  EXPECT_EQ(r.entries_read, 3u) << "the recent list names the generated kernels' entries and the program's";
  EXPECT_EQ(fake.modules_loaded(), 3);

  const long launches = fake.launches();
  (a + b).eval();
  (a * b).eval();
  Program p(kUserSource, ProgramOptions{"twice"});
  (void)p.kernel("twice", gpu0);
  EXPECT_EQ(fake.launches(), launches + 2);
  EXPECT_EQ(fake.modules_loaded(), 3) << "the preloaded modules served the first use";
  EXPECT_EQ(kernel_cache_info().entries, entries) << "nothing was compiled";

  (a - b).eval();
  EXPECT_EQ(fake.modules_loaded(), 4) << "a kernel the cache did not hold is compiled and loaded";
  EXPECT_EQ(kernel_cache_info().entries, entries + 2);
}

// The process may ask for the kernels while the preload is still loading them: each lookup gets a
// kernel, whoever loads it, and nothing is compiled (run under ThreadSanitizer too).
TEST_F(KernelPreload, KernelsAskedForDuringThePreloadAreFound) {
  REQUIRE_USABLE_FAKE();
  seed();
  const std::size_t entries = kernel_cache_info().entries;
  const long launches = fake.launches();
  {
    const Array a = uploaded(64, gpu0), b = uploaded(64, gpu0);
    (a + b).eval();  // at once: the preload has just started
    (a * b).eval();
    Program p(kUserSource, ProgramOptions{"twice"});
    (void)p.kernel("twice", gpu0);
  }
  const detail::PreloadReport r = detail::wait_for_kernel_preload(gpu0);
  EXPECT_TRUE(r.ran);
  EXPECT_EQ(r.failed, 0u) << r.note;
  EXPECT_EQ(fake.launches(), launches + 2);
  EXPECT_EQ(kernel_cache_info().entries, entries) << "nothing was compiled";
  EXPECT_LE(fake.modules_loaded(), 6) << "at most each of the three modules twice, by the preload and the lookup";
}

// A preload reads entries without marking them used; a kernel's first use marks its entry, as a
// disk hit does, so least recently used eviction sees what the process used, not what it read.
TEST_F(KernelPreload, OnlyTheEntriesOfKernelsUsedAreTouched) {
  REQUIRE_USABLE_FAKE();
  seed();
  const std::time_t old = std::time(nullptr) - 3600;
  for (const auto& f : entry_files()) set_modified(f, old);
  const std::time_t start = std::time(nullptr);
  const Array a = uploaded(64, gpu0), b = uploaded(64, gpu0);
  ASSERT_EQ(detail::wait_for_kernel_preload(gpu0).modules, 3u);
  EXPECT_EQ(recent_entries(start), 0u) << "the preload read every entry and touched none";
  (a + b).eval();
  EXPECT_EQ(recent_entries(start), 1u) << "a + b's entry, at its first use";
  (a + b).eval();
  (a * b).eval();
  EXPECT_EQ(recent_entries(start), 2u);
  EXPECT_EQ(fake.modules_loaded(), 3);
}

// XP_PRELOAD_KERNELS counts modules, in the order of the recent list (the last process's first use
// first); 0 runs no preload.
TEST_F(KernelPreload, TheVariableCapsTheModules) {
  REQUIRE_USABLE_FAKE();
  seed();
  EXPECT_EQ(child_report("0"), "preload: ran 0 modules 0 kernels 0 loaded 0");
  EXPECT_EQ(child_report("1"), "preload: ran 1 modules 1 kernels 1 loaded 1") << "a + b, used first";
  EXPECT_EQ(child_report("2"), "preload: ran 1 modules 2 kernels 2 loaded 2");
  EXPECT_EQ(child_report("16"), "preload: ran 1 modules 3 kernels 2 loaded 3");
}

// Entries that do not fit are skipped and left as they are: another build's, another target's,
// one that is not a whole entry, one under another entry's name, a name without a file; the
// preload goes on past them.
TEST_F(KernelPreload, EntriesThatDoNotFitAreSkippedAndKept) {
  REQUIRE_USABLE_FAKE();
  seed();
  const std::vector<fs::path> real = entry_files();
  ASSERT_EQ(real.size(), 5u);
  // Planted entries, named ahead of the real ones in the recent list: keys of another build and
  // another target with a real payload, a truncated entry, a real entry's copy under another name,
  // and a name with no file.
  std::string key, foreign_build, foreign_target;
  std::vector<char> payload;
  detail::DiskCache cache(process_cache.folder, 1ull << 30);
  for (const auto& f : real) {
    if (cache.read_entry(f.string(), key, payload) && key.rfind("xp-generated-kernel 1\n", 0) == 0) break;
    key.clear();
  }
  ASSERT_FALSE(key.empty());
  foreign_build = key;
  const auto at = foreign_build.find("build ");
  ASSERT_NE(at, std::string::npos);
  foreign_build[foreign_build.find('\n', at) + 1] ^= 1;  // the build ID's first character
  foreign_target = key;
  const auto sm = foreign_target.find("sm_");
  ASSERT_NE(sm, std::string::npos);
  foreign_target.replace(sm, 5, "sm_75");
  const std::string built = cache.store(foreign_build, payload);
  const std::string targeted = cache.store(foreign_target, payload);
  ASSERT_FALSE(built.empty());
  ASSERT_FALSE(targeted.empty());
  const std::vector<char> whole = detail::encode_cache_entry(key + "x", payload);
  const fs::path truncated = fs::path(process_cache.folder) / "0123456789abcdef0123456789abcdef.xpk";
  const fs::path misnamed = fs::path(process_cache.folder) / "00000000000000000000000000000001.xpk";
  {
    std::FILE* f = std::fopen(truncated.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(whole.data(), 1, whole.size() - 7, f);
    std::fclose(f);
    ASSERT_EQ(::chmod(truncated.c_str(), 0600), 0);
  }
  fs::copy_file(cache.file_for(key), misnamed);
  auto name_of = [](const fs::path& p) { return p.stem().string(); };
  ASSERT_TRUE(cache.remember(
      {name_of(built), name_of(targeted), name_of(truncated), name_of(misnamed), "ffffffffffffffffffffffffffffffff"}));
  ASSERT_EQ(cache.recent().size(), 8u);

  const Array a = uploaded(64, gpu0), b = uploaded(64, gpu0);
  const detail::PreloadReport r = detail::wait_for_kernel_preload(gpu0);
  EXPECT_EQ(r.modules, 3u) << r.note;
  EXPECT_EQ(r.kernels, 2u) << r.note;
  EXPECT_EQ(r.entries_read, 6u) << "two foreign entries, the misnamed copy and the three real ones; the truncated one "
                                   "and the missing one are unreadable";
  EXPECT_TRUE(fs::exists(truncated)) << "the preload removes nothing";
  EXPECT_TRUE(fs::exists(misnamed));
  EXPECT_TRUE(fs::exists(built));
  EXPECT_TRUE(fs::exists(targeted));
  (a + b).eval();
  EXPECT_EQ(fake.modules_loaded(), 3);
}

// A process notes the entries it used, first used first, and puts them ahead of the recent list at
// exit; the programs' entries of generated kernels (the same binaries) are not noted.
TEST_F(KernelPreload, EachProcessPutsWhatItUsedFirstInTheList) {
  REQUIRE_USABLE_FAKE();
  seed();
  detail::DiskCache cache(process_cache.folder, 1ull << 30);
  const std::vector<std::string> first = cache.recent();
  ASSERT_EQ(first.size(), 3u);
  std::vector<std::string> keys;
  for (const auto& n : first) {
    std::string key;
    std::vector<char> payload;
    ASSERT_TRUE(cache.read_entry(cache.file_of_name(n), key, payload)) << n;
    keys.push_back(key);
  }
  EXPECT_EQ(keys[0].rfind("xp-generated-kernel 1\n", 0), 0u);
  EXPECT_EQ(keys[1].rfind("xp-generated-kernel 1\n", 0), 0u);
  EXPECT_NE(keys[2].find(kUserSource), std::string::npos) << "the user's program, used last";
  EXPECT_EQ(kernel_cache_info().recent, 3u);
  const xp_test::ProcessResult info =
      xp_test::run_process({XP_CLI_PATH, "cache", "info"}, {{"XP_CACHE_DIR", process_cache.folder}});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("recent:  3 ("), std::string::npos) << info.out;
  // A process of a - b: its kernel goes first.
  seed("DISABLED_Subtract");
  const std::vector<std::string> second = cache.recent();
  ASSERT_EQ(second.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(second.begin() + 1, second.end()), first);
}

// A process that uses kernels of its own only, without arrays, notes them too.
TEST_F(KernelPreload, AProcessOfProgramsOnlyWritesTheListToo) {
  REQUIRE_USABLE_FAKE();
  seed("DISABLED_OnlyAProgram");
  detail::DiskCache cache(process_cache.folder, 1ull << 30);
  const std::vector<std::string> list = cache.recent();
  ASSERT_EQ(list.size(), 1u);
  std::string key;
  std::vector<char> payload;
  ASSERT_TRUE(cache.read_entry(cache.file_of_name(list[0]), key, payload));
  EXPECT_NE(key.find(kUserSource), std::string::npos);
  // The next process that starts the backend preloads it, and the program finds it loaded.
  const Array a = uploaded(64, gpu0);
  EXPECT_EQ(detail::wait_for_kernel_preload(gpu0).modules, 1u);
  Program p(kUserSource, ProgramOptions{"twice"});
  (void)p.kernel("twice", gpu0);
  EXPECT_EQ(fake.modules_loaded(), 1);
}

// A process that used the kernels of the list, in its order, leaves the file as it was.
TEST_F(KernelPreload, AProcessThatUsesTheSameKernelsLeavesTheListAlone) {
  REQUIRE_USABLE_FAKE();
  seed();
  const fs::path list = fs::path(process_cache.folder) / ".recent";
  struct stat before {};
  ASSERT_EQ(::stat(list.c_str(), &before), 0);
  const xp_test::ProcessResult r = child("DISABLED_SeedTheCache");
  EXPECT_CHILD_CASE_PASSED(r);
  struct stat after {};
  ASSERT_EQ(::stat(list.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "not written again";
}

// Each device gets its own preload; a second device's finds the code the first one's read and
// loads its modules there too.
TEST_F(KernelPreload, EachDeviceGetsItsOwn) {
  REQUIRE_USABLE_FAKE();
  seed();
  const Array a1 = uploaded(64, gpu1), b1 = uploaded(64, gpu1);
  const detail::PreloadReport r1 = detail::wait_for_kernel_preload(gpu1);
  EXPECT_EQ(r1.modules, 3u) << r1.note;
  EXPECT_FALSE(detail::wait_for_kernel_preload(gpu0).ran) << "cuda:0 is not in use yet";
  EXPECT_EQ(fake.modules_loaded(), 3);
  const Array a0 = uploaded(64, gpu0), b0 = uploaded(64, gpu0);
  const detail::PreloadReport r0 = detail::wait_for_kernel_preload(gpu0);
  EXPECT_EQ(r0.modules, 3u) << r0.note;
  EXPECT_EQ(r0.kernels, 2u) << r0.note;
  EXPECT_EQ(fake.modules_loaded(), 6);
  (a1 + b1).eval();
  (a0 + b0).eval();
  (a0 * b0).eval();
  EXPECT_EQ(fake.modules_loaded(), 6) << "every first use found its module on its device";
}

// Two devices' preloads at once (run under ThreadSanitizer too): each loads every module once.
TEST_F(KernelPreload, TwoDevicesPreloadAtOnce) {
  REQUIRE_USABLE_FAKE();
  seed();
  const Array a0 = uploaded(64, gpu0), a1 = uploaded(64, gpu1);
  const detail::PreloadReport r0 = detail::wait_for_kernel_preload(gpu0);
  const detail::PreloadReport r1 = detail::wait_for_kernel_preload(gpu1);
  EXPECT_EQ(r0.modules, 3u) << r0.note;
  EXPECT_EQ(r1.modules, 3u) << r1.note;
  EXPECT_EQ(r0.kernels + r1.kernels, 4u);
  EXPECT_EQ(fake.modules_loaded(), 6);
}

// A process whose first kernel is a program's, before any array, ends cleanly while its preload
// runs (under AddressSanitizer, a read of what exit had destroyed failed this).
TEST_F(KernelPreload, AProcessThatUsedAProgramFirstEndsCleanly) {
  REQUIRE_USABLE_FAKE();
  seed();
  for (int i = 0; i < 5; ++i) {
    const xp_test::ProcessResult r = child("DISABLED_AProgramThenArraysThenExit");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("[ RUN      ] KernelPreload.DISABLED_AProgramThenArraysThenExit"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
  }
}

// A process may end while its preload runs: the exit waits for it and the process ends cleanly.
TEST_F(KernelPreload, AProcessThatEndsAtOnceEndsCleanly) {
  REQUIRE_USABLE_FAKE();
  seed();
  for (int i = 0; i < 3; ++i) {
    const xp_test::ProcessResult r = child("DISABLED_ExitRightAfterTheDevicesFirstUse");
    EXPECT_CHILD_CASE_PASSED(r);
  }
}

// An entry of the recent list grown to 200 GB (a damaged or planted file, sparse: no disk used) is
// skipped by the preload without allocating its claimed size, and the other entries are loaded.
TEST_F(KernelPreload, AnEntryTooLargeToReadIsSkipped) {
  REQUIRE_USABLE_FAKE();
  seed();
  auto& disk = detail::DiskCache::instance();
  const std::vector<std::string> recent = disk.recent();
  ASSERT_EQ(recent.size(), 3u);
  const std::string huge = disk.file_of_name(recent.front());  // a + b's, used first
  ASSERT_EQ(::truncate(huge.c_str(), off_t{200} << 30), 0) << huge << ": " << std::strerror(errno);
  (void)uploaded(16, gpu0);
  const detail::PreloadReport r = detail::wait_for_kernel_preload(gpu0);
  EXPECT_TRUE(r.ran) << r.note;
  EXPECT_EQ(r.entries_read, 2u) << r.note;
  EXPECT_EQ(r.modules, 2u) << r.note;
  EXPECT_EQ(r.failed, 0u) << r.note;
  EXPECT_EQ(fake.modules_loaded(), 2);
}
