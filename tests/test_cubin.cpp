// Reading compiled modules without a GPU: the SM, the kernels and each kernel's parameter sizes
// from the cubin's ELF, checked against sizes worked out by hand from the kernels' signatures.
#include <gtest/gtest.h>

#include "jit/cubin.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

const char* kSource = R"(
struct Pair { double a; char b; };  // 16 bytes, 8-aligned
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void mixed(char c, short s, Pair p, double d, int* out, float f) {
  if (c) out[0] = s + p.b + (int)d + (int)f + (int)p.a;
}
extern "C" __global__ void no_arguments() {}
template <class T> __global__ void fill(T* out, T value, unsigned long long n) {
  if (threadIdx.x < n) out[threadIdx.x] = value;
}
)";

}  // namespace

TEST(Cubin, ParameterSizesFromTheModule) {
  if (!xp::compiler_info().available)
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no NVRTC: " + xp::compiler_info().error);
  for (int arch : {80, 90}) {
    xp::Program prog(kSource, {.name = "params.cu", .name_expressions = {"fill<short>"}});
    const auto& bin = prog.binary(xp::Arch::sm(arch));
    const auto info = xp::detail::inspect_module(bin.data(), bin.size());
    ASSERT_TRUE(info.valid) << info.error;
    EXPECT_EQ(info.arch, arch);
    using V = std::vector<std::size_t>;
    ASSERT_TRUE(info.params.count("vector_add")) << "sm_" << arch;
    EXPECT_EQ(info.params.at("vector_add"), (V{8, 8, 8, 4}));
    ASSERT_TRUE(info.params.count("mixed"));
    EXPECT_EQ(info.params.at("mixed"), (V{1, 2, 16, 8, 8, 4}));
    ASSERT_TRUE(info.params.count("no_arguments"));
    EXPECT_EQ(info.params.at("no_arguments"), V{});
    const std::string fill = prog.lowered_name("fill<short>", xp::Arch::sm(arch));
    ASSERT_TRUE(info.params.count(fill)) << fill;
    EXPECT_EQ(info.params.at(fill), (V{8, 2, 8}));
  }
}

TEST(Cubin, PtxHasNoParameterTable) {
  if (!xp::compiler_info().available)
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no NVRTC: " + xp::compiler_info().error);
  xp::Program prog(kSource, {.name = "params.cu", .ptx = true});
  const auto& ptx = prog.binary(xp::Arch::sm(90));
  const auto info = xp::detail::inspect_module(ptx.data(), ptx.size());
  EXPECT_TRUE(info.is_ptx);
  EXPECT_TRUE(info.params.empty());  // the driver's cuFuncGetParamInfo is the source then
}

TEST(Cubin, DamagedInputIsNotACubin) {
  const std::string junk =
      "\x7f"
      "ELF but not really";
  const auto info = xp::detail::inspect_module(junk.data(), junk.size());
  EXPECT_FALSE(info.valid);
  EXPECT_FALSE(info.error.empty());
}
