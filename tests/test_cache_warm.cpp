// `xp cache warm`: without a usable GPU it says why and fails, unless given an architecture (then
// it compiles for a compile-only GPU; the hollow GPU tests check that the entries are the ones a
// GPU looks up); on a GPU it fills the kernel disk cache once, a second run finds everything there,
// and so does a run after a warm for the GPU's architecture made without it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "runtime/compile_only.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

namespace fs = std::filesystem;

TEST(CacheWarm, WithoutAGpuItSaysWhyAndFails) {
  const auto r = xp_test::run_process({XP_CLI_PATH, "cache", "warm"}, {{"FORCE_CPU", "1"}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("xp cache warm: no GPU to compile for: disabled_by_user"), std::string::npos) << r.err;
}

// The regular files under a folder.
std::size_t files_under(const std::string& folder) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(folder)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

// `--arch` names what to compile for, so a GPU is not needed; what is not an architecture, or one
// NVRTC cannot compile for, or a disabled disk cache stops it before anything is stored.
TEST(CacheWarm, AnArchitectureItCannotWarmForIsAClearErrorAndStoresNothing) {
  const xp_test::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const auto malformed =
      xp_test::run_process({XP_CLI_PATH, "cache", "warm", "--arch", "sm_9"}, {{"XP_CACHE_DIR", dir.path()}});
  EXPECT_EQ(malformed.exit_code, 2) << malformed.out << malformed.err;
  EXPECT_NE(malformed.err.find("--arch sm_9: expected sm_NN, e.g. sm_90"), std::string::npos) << malformed.err;
  const auto word =
      xp_test::run_process({XP_CLI_PATH, "cache", "warm", "--arch", "hopper"}, {{"XP_CACHE_DIR", dir.path()}});
  EXPECT_EQ(word.exit_code, 2) << word.out << word.err;
  // NVRTC 13 starts at sm_75 (NVRTC 12 at sm_50): sm_30 is too old for both.
  const auto old =
      xp_test::run_process({XP_CLI_PATH, "cache", "warm", "--arch", "sm_30"}, {{"XP_CACHE_DIR", dir.path()}});
  EXPECT_EQ(old.exit_code, 1) << old.out << old.err;
  EXPECT_NE(old.err.find("xp cache warm: cannot warm the kernel cache for sm_30: no_usable_nvrtc:"), std::string::npos)
      << old.err;
  EXPECT_NE(old.err.find("cannot compile for sm_30"), std::string::npos) << old.err;
  const auto info =
      xp_test::run_process({XP_CLI_PATH, "cache", "info", "--arch", "sm_90"}, {{"XP_CACHE_DIR", dir.path()}});
  EXPECT_EQ(info.exit_code, 2) << info.out << info.err;
  EXPECT_NE(info.err.find("--arch sm_90 is for `xp cache warm`, not `xp cache info`"), std::string::npos) << info.err;
  const auto disabled = xp_test::run_process({XP_CLI_PATH, "cache", "warm", "--arch", "sm_90"},
                                             {{"XP_CACHE_DIR", dir.path()}, {"XP_CACHE_MAX_BYTES", "0"}});
  EXPECT_EQ(disabled.exit_code, 1) << disabled.out << disabled.err;
  EXPECT_NE(disabled.err.find("the kernel disk cache is disabled (XP_CACHE_MAX_BYTES is 0"), std::string::npos)
      << disabled.err;
  EXPECT_EQ(files_under(dir.path()), 0u) << "nothing is stored by a warm that stopped";
}

// The compile-only GPU's driver table under the layers above it, in a fresh process: the device as
// the runtime sees it, copies that keep their bytes (its memory is host memory), kernels generated,
// compiled and stored, a custom kernel loaded and launched (nothing runs), and the choice kept.
TEST(CompileOnlyGpu, DISABLED_ArraysAndKernelsRunAboveItsDriverTable) {
  ASSERT_EQ(xp::detail::use_compile_only_gpu(90), "");
  ASSERT_EQ(xp::detail::use_compile_only_gpu(90), "") << "the same choice again";
  const xp::CudaStatus s = xp::cuda_status();
  ASSERT_TRUE(s.available) << s.detail;
  EXPECT_EQ(s.device_count, 1);
  EXPECT_EQ(s.driver_version, 0);
  const xp::Device gpu = xp::Device::cuda(0);
  const xp::GpuInfo info = xp::gpu_info(gpu);
  EXPECT_EQ(info.name, "xp compile-only GPU (sm_90)");
  EXPECT_EQ(info.arch(), "sm_90");
  EXPECT_NE(xp::detail::use_compile_only_gpu(80).find("already compiles for a compile-only sm_90"), std::string::npos);
  // Copies move real bytes.
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  const xp::Array a = xp::asarray(v, xp::Shape{2, 3}, gpu);
  EXPECT_EQ(a.to_vector<float>(), v);
  EXPECT_EQ(a.to_device(xp::Device::cpu()).to_vector<float>(), v);
  // Generated kernels are compiled and stored; a second use of one finds it.
  const std::size_t before = xp::kernel_cache_info().entries;
  (a + a).eval();
  const std::size_t after_add = xp::kernel_cache_info().entries;
  EXPECT_GT(after_add, before);
  (a + a).eval();
  EXPECT_EQ(xp::kernel_cache_info().entries, after_add);
  xp::sum(a, 1).eval();
  EXPECT_GT(xp::kernel_cache_info().entries, after_add);
  // A custom kernel loads and launches; the driver checks the configuration as a real one does.
  xp::Program p(R"(extern "C" __global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
  })");
  xp::Kernel k = p.kernel("scale", gpu);
  xp::Array x = xp::asarray(v, xp::Shape{6}, gpu);
  k.launch(xp::LaunchConfig{{1, 1, 1}, {64, 1, 1}}, x, 6);
  xp::synchronize(gpu);
  EXPECT_EQ(x.to_vector<float>(), v) << "nothing runs on a compile-only GPU";
  EXPECT_THROW(k.launch(xp::LaunchConfig{{1, 1, 1}, {2048, 1, 1}}, x, 6), xp::Error);
  const xp::MemoryStats m = xp::memory_stats(gpu);
  EXPECT_GT(m.bytes_in_use, 0u);
}

TEST(CompileOnlyGpu, ArraysAndKernelsRunAboveItsDriverTable) {
  const xp_test::TempDir dir;
  EXPECT_CHILD_CASE_PASSED(
      xp_test::run_child_case("CompileOnlyGpu.DISABLED_ArraysAndKernelsRunAboveItsDriverTable",
                              {{"XP_CACHE_DIR", dir / "kernels"}, {"XP_CUDA_DRIVER", "/nonexistent/libcuda.so.1"}}));
}

// In a process that has already looked for CUDA, the compile-only GPU cannot be chosen: the
// process keeps what it found, and nothing is compiled.
TEST(CacheWarm, ACompileOnlyWarmAfterCudaWasLookedForIsRefused) {
  const xp::CudaStatus before = xp::cuda_status();
  const std::size_t entries = xp::kernel_cache_info().entries;
  try {
    (void)xp::warm_kernel_cache(xp::Arch::sm(90));
    ADD_FAILURE() << "a compile-only GPU was chosen after CUDA was looked for";
  } catch (const xp::ValueError& e) {
    ADD_FAILURE() << "not a ValueError: " << e.what();
  } catch (const xp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA was already looked for in this process"), std::string::npos) << e.what();
  }
  EXPECT_EQ(xp::cuda_status().reason, before.reason);
  EXPECT_EQ(xp::cuda_status().device_count, before.device_count);
  EXPECT_EQ(xp::kernel_cache_info().entries, entries);
  EXPECT_THROW((void)xp::warm_kernel_cache(xp::Arch::sm(7)), xp::ValueError);
}

// The count in warm's "(N new)", or none when the line is missing.
std::optional<std::size_t> new_entries(const std::string& out) {
  std::smatch m;
  static const std::regex re(R"(\((\d+) new\))");
  if (!std::regex_search(out, m, re)) return std::nullopt;
  return std::stoul(m[1]);
}

TEST(CacheWarm, OnAGpuTheSecondRunFindsEverything) {
  XP_REQUIRE_GPU();
  std::string dir = (fs::temp_directory_path() / "xp-test-warm-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const auto first =
      xp_test::run_process({XP_CLI_PATH, "cache", "warm"}, {{"XP_CACHE_DIR", dir}}, {"FORCE_CPU", "XP_DEVICE"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  ASSERT_TRUE(new_entries(first.out).has_value()) << first.out;
  EXPECT_GE(*new_entries(first.out), 40u) << first.out;  // six dtypes, each a few dozen kernels
  const auto second =
      xp_test::run_process({XP_CLI_PATH, "cache", "warm"}, {{"XP_CACHE_DIR", dir}}, {"FORCE_CPU", "XP_DEVICE"});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(new_entries(second.out), std::optional<std::size_t>(0)) << second.out;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// A cache warmed without the GPU, for its architecture, is the one the GPU looks up: a warm on the
// GPU afterwards compiles nothing.
TEST(CacheWarm, OnAGpuACacheWarmedForItsArchitectureWithoutItIsComplete) {
  XP_REQUIRE_GPU();
  const std::string arch = xp::gpu_info(xp::Device::cuda(0)).arch();
  const xp_test::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const auto compile_only = xp_test::run_process({XP_CLI_PATH, "cache", "warm", "--arch", arch},
                                                 {{"XP_CACHE_DIR", dir.path()}, {"CUDA_VISIBLE_DEVICES", ""}});
  ASSERT_EQ(compile_only.exit_code, 0) << compile_only.out << compile_only.err;
  EXPECT_NE(compile_only.out.find("compiled only: no GPU used"), std::string::npos) << compile_only.out;
  ASSERT_TRUE(new_entries(compile_only.out).has_value()) << compile_only.out;
  EXPECT_GE(*new_entries(compile_only.out), 40u) << compile_only.out;
  const auto on_gpu =
      xp_test::run_process({XP_CLI_PATH, "cache", "warm"}, {{"XP_CACHE_DIR", dir.path()}}, {"FORCE_CPU", "XP_DEVICE"});
  ASSERT_EQ(on_gpu.exit_code, 0) << on_gpu.out << on_gpu.err;
  EXPECT_EQ(new_entries(on_gpu.out), std::optional<std::size_t>(0)) << on_gpu.out;
}

}  // namespace
