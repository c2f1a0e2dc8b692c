// The CUDA libraries other packages load into a process (CuPy's, PyTorch's, JAX's runtime, cuBLAS,
// NVRTC): xp::loaded_cuda_libraries() lists them from the process's mappings with the major of each
// soname, and system_report() warns when two majors meet. Two of the test suite's own shared
// objects, copied under CUDA library names, stand in for another package's libraries.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

bool listed(const std::vector<xp::LoadedCudaLibrary>& v, const std::string& name, const std::string& path, int major) {
  return std::any_of(v.begin(), v.end(),
                     [&](const auto& l) { return l.name == name && l.path == path && l.major == major; });
}

}  // namespace

TEST(LoadedCuda, OtherPackagesLibrariesAreListedWithTheirMajorsAndAMismatchIsAWarning) {
  xp_test::TempDir dir;
  const std::string runtime = dir / "libcudart.so.12", blas = dir / "libcublas.so.13.1.0.3";
  std::filesystem::copy_file(XP_BINARY_DIR "/tests/libxp_fake_cublas.so", runtime);
  std::filesystem::copy_file(XP_FAKE_DRIVER_PATH, blas);
  for (const auto& l : xp::loaded_cuda_libraries()) EXPECT_NE(l.path.rfind(dir.path(), 0), 0u) << l.path;

  void* a = ::dlopen(runtime.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(a, nullptr) << ::dlerror();
  const auto one = xp::loaded_cuda_libraries();
  EXPECT_TRUE(listed(one, "libcudart", runtime, 12));

  void* b = ::dlopen(blas.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(b, nullptr) << ::dlerror();
  const xp::SystemReport r = xp::system_report();
  EXPECT_TRUE(listed(r.loaded_cuda, "libcudart", runtime, 12));
  EXPECT_TRUE(listed(r.loaded_cuda, "libcublas", blas, 13));  // the major is the first number
  const auto p = std::find_if(r.problems.begin(), r.problems.end(),
                              [](const xp::Problem& q) { return q.id == "cuda_major_mismatch"; });
  ASSERT_NE(p, r.problems.end());
  EXPECT_EQ(p->severity, "warning");
  EXPECT_NE(p->message.find("libcudart (CUDA 12)"), std::string::npos) << p->message;
  EXPECT_NE(p->message.find("libcublas (CUDA 13)"), std::string::npos) << p->message;

  ::dlclose(b);
  ::dlclose(a);
  // Unmapped, a library leaves the list (the fake driver's copy may stay: the loader keeps a library
  // with unique symbols mapped, and the list is what is mapped).
  EXPECT_FALSE(listed(xp::loaded_cuda_libraries(), "libcudart", runtime, 12));
}
