// Run-time compilation without a GPU (public API): real kernels through NVRTC, checked in the bytes
// of the cubin; PTX; name expressions; toolkit and CUB headers; user headers in the cache key;
// compile errors with their evidence; the in-process cache; the `xp compile` and `xp cache` CLI.
//
// Every test process gets its own empty kernel cache folder (XP_CACHE_DIR is set below, before xp
// reads its configuration), so a hit is always one this process or its children made.
#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

namespace fs = std::filesystem;

using xp_test::TempDir;

const xp_test::ProcessCache g_process_cache;  // this process's kernel cache

std::vector<std::string> files_in(const std::string& folder) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) out.push_back(e.path().filename().string());
  return out;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// Two extern "C" kernels and a template, instantiated through a name expression; a device
// function that is not a kernel.
const char* kSource = R"(
__device__ __noinline__ float plus_one(float v) { return v + 1.0f; }
extern "C" __global__ void add_one(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = plus_one(x[i]);
}
extern "C" __global__ void fill(int* x, int v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
template <class T>
__global__ void scale(T* x, T factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}
)";
const char* kScaleFloat = "_Z5scaleIfEvPT_S0_i";

xp::ProgramOptions options_named(const std::string& name) {
  xp::ProgramOptions o;
  o.name = name;
  o.name_expressions = {"scale<float>"};
  return o;
}

xp::ProgramOptions plain(const std::string& name) {
  xp::ProgramOptions o;
  o.name = name;
  return o;
}

// The ELF header read by hand, independently of xp's own reader.
struct ElfFacts {
  bool elf64 = false;
  std::uint16_t machine = 0;
  std::uint32_t flags = 0;
};
ElfFacts read_elf(const std::vector<char>& b) {
  ElfFacts f;
  if (b.size() < 64) return f;
  static const char kMagic[4] = {0x7f, 'E', 'L', 'F'};
  f.elf64 = std::memcmp(b.data(), kMagic, 4) == 0 && b[4] == 2 /* ELFCLASS64 */ && b[5] == 1 /* little-endian */;
  std::memcpy(&f.machine, b.data() + 18, 2);
  std::memcpy(&f.flags, b.data() + 48, 4);
  return f;
}

bool bytes_contain(const std::vector<char>& b, const std::string& s) {
  return std::search(b.begin(), b.end(), s.begin(), s.end()) != b.end();
}

}  // namespace

// ---- no NVRTC needed ----

TEST(Program, EmptyOrWhitespaceSourceIsAValueError) {
  EXPECT_THROW(xp::Program(""), xp::ValueError);
  EXPECT_THROW(xp::Program(" \n\t\r\n  "), xp::ValueError);
  EXPECT_NO_THROW(xp::Program("// just a comment\n"));  // not empty: NVRTC decides later
}

// On the CPU device the host C++ compiler builds the same source (tests/test_cpu_kernels.cpp has
// the rest); without one, the CompileError says how to get one.
TEST(Program, OnTheCpuTheHostCompilerBuildsTheSameSource) {
  xp::Program p(kSource, options_named("cpu.cu"));
  if (!xp::host_compiler_info().available) {
    EXPECT_THROW(p.compile(xp::Device::cpu()), xp::CompileError);
    return;
  }
  const xp::CompileStats s = p.compile(xp::Device::cpu());
  EXPECT_EQ(s.target, "cpu");
  std::vector<float> x = {1.0f, 2.0f, 3.0f};
  p.kernel("add_one", xp::Device::cpu()).launch({.grid = 1, .block = 3}, x.data(), 3);
  EXPECT_EQ(x, (std::vector<float>{2.0f, 3.0f, 4.0f}));
}

// ---- real kernels through NVRTC ----

TEST(Compile, CubinsForSm80AndSm90) {
  XP_REQUIRE_NVRTC();
  xp::Program p(kSource, options_named("two_archs.cu"));
  std::vector<char> cubins[2];
  const int archs[2] = {80, 90};
  for (int i = 0; i < 2; ++i) {
    const int sm = archs[i];
    const xp::CompileStats s = p.compile(xp::Arch::sm(sm));
    EXPECT_EQ(s.target, "sm_" + std::to_string(sm));  // xp's reading of the cubin header
    EXPECT_FALSE(s.memory_hit);
    EXPECT_FALSE(s.disk_hit);
    EXPECT_GT(s.compile_ms, 0);
    const std::vector<char>& bin = p.binary(xp::Arch::sm(sm));
    EXPECT_EQ(s.binary_bytes, bin.size());
    const ElfFacts elf = read_elf(bin);
    EXPECT_TRUE(elf.elf64) << "sm_" << sm << ": not a 64-bit little-endian ELF file";
    EXPECT_EQ(elf.machine, 190) << "EM_CUDA";
    EXPECT_EQ((elf.flags >> 8) & 0xff, static_cast<unsigned>(sm)) << "e_flags 0x" << std::hex << elf.flags;

    const auto names = p.kernel_names(xp::Arch::sm(sm));
    EXPECT_EQ(names.size(), 3u);
    EXPECT_TRUE(contains(names, "add_one"));
    EXPECT_TRUE(contains(names, "fill"));
    EXPECT_TRUE(contains(names, kScaleFloat));
    for (const auto& n : names) EXPECT_TRUE(bytes_contain(bin, n)) << n << " is not in the cubin";
    EXPECT_TRUE(bytes_contain(bin, "plus_one")) << "the device function was inlined: the kernel list proves less";
    cubins[i] = bin;
  }
  EXPECT_NE(cubins[0], cubins[1]);
  // A second request for a compiled arch is this Program's own memory.
  EXPECT_TRUE(p.compile(xp::Arch::sm(80)).memory_hit);
}

TEST(Compile, PtxOnRequest) {
  XP_REQUIRE_NVRTC();
  xp::ProgramOptions o = options_named("ptx.cu");
  o.ptx = true;
  xp::Program p(kSource, o);
  const xp::CompileStats s = p.compile(xp::Arch::sm(90));
  EXPECT_EQ(s.target, "compute_90");
  const std::vector<char>& bin = p.binary(xp::Arch::sm(90));
  const std::string text(bin.data(), strnlen(bin.data(), bin.size()));
  EXPECT_EQ(text.rfind("//", 0), 0u) << text.substr(0, 200);
  EXPECT_NE(text.find(".target sm_90"), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find(".entry add_one"), std::string::npos);
  EXPECT_NE(text.find(".entry fill"), std::string::npos);
  EXPECT_NE(text.find(std::string(".entry ") + kScaleFloat), std::string::npos);
  EXPECT_FALSE(read_elf(bin).elf64);
  const auto names = p.kernel_names(xp::Arch::sm(90));
  EXPECT_TRUE(contains(names, "add_one"));
  EXPECT_TRUE(contains(names, kScaleFloat));
}

TEST(Compile, NameExpressionIsLowered) {
  XP_REQUIRE_NVRTC();
  xp::Program p(kSource, options_named("lowered.cu"));
  EXPECT_EQ(p.lowered_name("scale<float>", xp::Arch::sm(90)), kScaleFloat);
  EXPECT_TRUE(contains(p.kernel_names(xp::Arch::sm(90)), kScaleFloat));
  EXPECT_THROW(p.lowered_name("scale<double>", xp::Arch::sm(90)), xp::ValueError);
}

TEST(Compile, ToolkitAndCubHeaders) {
  XP_REQUIRE_NVRTC();
  const xp::CompilerInfo info = xp::compiler_info();
  ASSERT_FALSE(info.include_dirs.empty()) << "no toolkit include folder found next to " << info.nvrtc_path;
  EXPECT_TRUE(fs::exists(info.include_dirs[0] + "/cuda_fp16.h")) << info.include_dirs[0];
  // Where the toolkit has include/cccl, xp must find it and pass it with -I.
  const std::string cccl = info.include_dirs[0] + "/cccl";
  if (fs::exists(cccl + "/cub/cub.cuh")) {
    EXPECT_TRUE(info.cccl_found);
    EXPECT_TRUE(contains(info.include_dirs, cccl));
  }
  if (fs::exists("/usr/local/cuda/include/cccl") &&
      fs::equivalent(fs::path(info.include_dirs[0]), fs::path("/usr/local/cuda/include"))) {
    EXPECT_TRUE(info.cccl_found);
  }

  xp::Program half(R"(
#include <cuda_fp16.h>
extern "C" __global__ void halve(__half* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = __hmul(x[i], __float2half(0.5f));
})",
                   plain("fp16.cu"));
  EXPECT_TRUE(contains(half.kernel_names(xp::Arch::sm(90)), "halve"));

  if (!info.cccl_found)
    XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no CCCL headers next to " + info.nvrtc_path + ": CUB not tried");
  xp::Program cub(R"(
#include <cub/block/block_reduce.cuh>
extern "C" __global__ void block_sum(const float* in, float* out) {
  using Reduce = cub::BlockReduce<float, 128>;
  __shared__ typename Reduce::TempStorage tmp;
  const float s = Reduce(tmp).Sum(in[threadIdx.x]);
  if (threadIdx.x == 0) *out = s;
})",
                  plain("cub.cu"));
  EXPECT_TRUE(contains(cub.kernel_names(xp::Arch::sm(90)), "block_sum"));
}

TEST(Compile, UserHeadersAreUsed) {
  XP_REQUIRE_NVRTC();
  xp::ProgramOptions o;
  o.name = "with_header.cu";
  o.headers = {{"my_kernel.h", "#define KERNEL_NAME from_header\n#define VALUE 7\n"}};
  xp::Program p("#include \"my_kernel.h\"\nextern \"C\" __global__ void KERNEL_NAME(int* x) { *x = VALUE; }\n", o);
  EXPECT_EQ(p.kernel_names(xp::Arch::sm(90)), std::vector<std::string>{"from_header"});
}

TEST(Compile, HeaderContentIsPartOfTheCacheKey) {
  XP_REQUIRE_NVRTC();
  const std::string source = "#include \"value.h\"\nextern \"C\" __global__ void put(int* x) { *x = VALUE; }\n";
  auto with_value = [&](int v) {
    xp::ProgramOptions o;
    o.name = "header_key.cu";
    o.headers = {{"value.h", "#define VALUE " + std::to_string(v) + "\n"}};
    return xp::Program(source, o);
  };
  xp::Program a = with_value(1);
  const xp::CompileStats sa = a.compile(xp::Arch::sm(90));
  EXPECT_FALSE(sa.memory_hit || sa.disk_hit);
  ASSERT_FALSE(sa.cache_file.empty()) << "the disk cache is in use in this test";

  // Same name, source and header name; only the header's content differs: a fresh compile.
  xp::Program b = with_value(2);
  const xp::CompileStats sb = b.compile(xp::Arch::sm(90));
  EXPECT_FALSE(sb.memory_hit);
  EXPECT_FALSE(sb.disk_hit);
  EXPECT_GT(sb.compile_ms, 0);
  EXPECT_NE(sb.cache_file, sa.cache_file);
  EXPECT_NE(a.binary(xp::Arch::sm(90)), b.binary(xp::Arch::sm(90)));

  // The first content again: found in memory, so the key did not drift for other reasons.
  xp::Program c = with_value(1);
  const xp::CompileStats sc = c.compile(xp::Arch::sm(90));
  EXPECT_TRUE(sc.memory_hit);
  EXPECT_EQ(c.binary(xp::Arch::sm(90)), a.binary(xp::Arch::sm(90)));
}

TEST(Compile, SyntaxErrorKeepsItsEvidence) {
  XP_REQUIRE_NVRTC();
  const std::string bad = "extern \"C\" __global__ void f(int* x) {\n  x[0] = 1;\n  this is not C++;\n}\n";
  xp::ProgramOptions o;
  o.name = "broken.cu";
  xp::Program p(bad, o);
  try {
    p.compile(xp::Arch::sm(90));
    FAIL() << "a syntax error compiled";
  } catch (const xp::CompileError& e) {
    EXPECT_EQ(e.program(), "broken.cu");
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("broken.cu(3)"), std::string::npos) << e.log();
    EXPECT_EQ(e.nvrtc_error(), "NVRTC_ERROR_COMPILATION");
    EXPECT_NE(std::string(e.what()).find(e.log()), std::string::npos) << "the message keeps the whole log";
  }
  // Nothing reached this process's disk cache.
  for (const auto& f : files_in(g_process_cache.folder)) ADD_FAILURE() << "left in the cache: " << f;
}

TEST(Compile, MissingIncludeIsACompileErrorWithItsLine) {
  XP_REQUIRE_NVRTC();
  xp::Program p("// a kernel\n#include \"no_such_header.h\"\nextern \"C\" __global__ void f() {}\n",
                plain("include.cu"));
  try {
    p.compile(xp::Arch::sm(90));
    FAIL() << "a missing include compiled";
  } catch (const xp::CompileError& e) {
    EXPECT_EQ(e.nvrtc_error(), "NVRTC_ERROR_COMPILATION");
    EXPECT_NE(e.log().find("no_such_header.h"), std::string::npos) << e.log();
    EXPECT_EQ(e.line(), 2) << e.log();  // NVRTC calls it a "catastrophic error"
  }
}

TEST(Compile, RejectedOptionIsACompileError) {
  XP_REQUIRE_NVRTC();
  xp::ProgramOptions o = options_named("bad_option.cu");
  o.options = {"--no-such-option"};
  xp::Program p(kSource, o);
  try {
    p.compile(xp::Arch::sm(90));
    FAIL() << "NVRTC accepted --no-such-option";
  } catch (const xp::CompileError& e) {
    EXPECT_EQ(e.nvrtc_error(), "NVRTC_ERROR_INVALID_OPTION");
    EXPECT_NE(e.log().find("--no-such-option"), std::string::npos) << e.log();
  }
}

TEST(Compile, ArchitectureNvrtcDoesNotKnow) {
  XP_REQUIRE_NVRTC();
  if (xp::compiler_info().nvrtc_version.rfind("13.", 0) != 0)
    GTEST_SKIP() << "NVRTC " << xp::compiler_info().nvrtc_version << " is not 13: sm_61 may be supported";
  xp::Program p(kSource, options_named("old_gpu.cu"));
  try {
    p.compile(xp::Arch::sm(61));
    FAIL() << "NVRTC 13 compiled for sm_61";
  } catch (const xp::CompileError& e) {
    FAIL() << "not a compile error, an unsupported target: " << e.what();
  } catch (const xp::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("sm_61"), std::string::npos) << m;
    EXPECT_NE(m.find("NVRTC 13 starts at sm_75"), std::string::npos) << m;
  }
}

TEST(Compile, SecondProgramHitsTheMemoryCache) {
  XP_REQUIRE_NVRTC();
  xp::Program first(kSource, options_named("memory.cu"));
  const xp::CompileStats s1 = first.compile(xp::Arch::sm(90));
  EXPECT_FALSE(s1.memory_hit);
  EXPECT_GT(s1.compile_ms, 0);

  xp::Program second(kSource, options_named("memory.cu"));
  const xp::CompileStats s2 = second.compile(xp::Arch::sm(90));
  EXPECT_TRUE(s2.memory_hit);
  EXPECT_FALSE(s2.disk_hit);
  EXPECT_EQ(s2.compile_ms, 0);
  EXPECT_EQ(s2.target, "sm_90");
  EXPECT_EQ(second.binary(xp::Arch::sm(90)), first.binary(xp::Arch::sm(90)));
  EXPECT_EQ(second.lowered_name("scale<float>", xp::Arch::sm(90)), kScaleFloat);

  // Another arch, other options or another source is not the same entry.
  EXPECT_FALSE(second.compile(xp::Arch::sm(80)).memory_hit);
  xp::ProgramOptions o = options_named("memory.cu");
  o.options = {"-DUNUSED=1"};
  xp::Program third(kSource, o);
  EXPECT_FALSE(third.compile(xp::Arch::sm(90)).memory_hit);
  xp::Program fourth(std::string(kSource) + "// edited\n", options_named("memory.cu"));
  EXPECT_FALSE(fourth.compile(xp::Arch::sm(90)).memory_hit);
}

// ---- the command line ----

namespace {

const char* kCliSource =
    "extern \"C\" __global__ void cli_kernel(float* x, int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= 3.0f;\n"
    "}\n";

xp_test::ProcessResult xp_cli(const std::vector<std::string>& args, const std::string& cache_dir) {
  std::vector<std::string> argv = {XP_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return xp_test::run_process(argv, {{"XP_CACHE_DIR", cache_dir}, {"XP_LOG", "warn"}}, {"XP_CACHE_MAX_BYTES"});
}

}  // namespace

TEST(CompileCli, MissThenDiskHitThenListInfoClear) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  const std::string file = tmp / "cli_kernel.cu";
  write_file(file, kCliSource);
  const std::string cache = tmp / "cache";

  auto r = xp_cli({"compile", file, "--arch", "sm_90", "--kernel", "cli_kernel"}, cache);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("compiled (cache miss)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cli_kernel"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");

  r = xp_cli({"compile", file, "--arch", "sm_90"}, cache);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("disk cache hit"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cache miss"), std::string::npos) << r.out;

  std::vector<std::string> entries;
  for (const auto& f : files_in(cache))
    if (f.size() > 4 && f.compare(f.size() - 4, 4, ".xpk") == 0) entries.push_back(f);
  ASSERT_EQ(entries.size(), 1u);

  r = xp_cli({"cache", "list"}, cache);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_of(r.out, "\n"), 1u) << r.out;
  EXPECT_NE(r.out.find("cli_kernel.cu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sm_90"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(entries[0]), std::string::npos) << r.out;

  r = xp_cli({"cache", "info"}, cache);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("entries: 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("in use"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(cache), std::string::npos) << r.out;

  r = xp_cli({"cache", "clear"}, cache);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("removed 1 entries"), std::string::npos) << r.out;
  EXPECT_TRUE(files_in(cache).empty());
  r = xp_cli({"cache", "info"}, cache);
  EXPECT_NE(r.out.find("entries: 0\n"), std::string::npos) << r.out;

  // Cleared: the next compile is a miss again.
  r = xp_cli({"compile", file, "--arch", "sm_90"}, cache);
  EXPECT_NE(r.out.find("compiled (cache miss)"), std::string::npos) << r.out;
}

TEST(CompileCli, UsageErrorsExit2) {
  TempDir tmp;
  const std::string file = tmp / "ok.cu";
  write_file(file, kCliSource);
  auto r = xp_cli({"compile", tmp / "missing.cu", "--arch", "sm_90"}, tmp / "cache");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("missing.cu"), std::string::npos) << r.err;
  r = xp_cli({"compile", file, "--arch", "sm_x"}, tmp / "cache");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("sm_x"), std::string::npos) << r.err;
  r = xp_cli({"cache", "shred"}, tmp / "cache");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  // Architectures past what an int holds, or no architecture at all: refused, never wrapped around.
  for (const char* arch : {"sm_4294967386", "sm_99999999999", "sm_5", "sm_0", "sm_-90"}) {
    r = xp_cli({"compile", file, "--arch", arch}, tmp / "cache");
    EXPECT_EQ(r.exit_code, 2) << arch << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(std::string("--arch ") + arch), std::string::npos) << r.err;
  }
  // A folder is not a source file.
  r = xp_cli({"compile", tmp.path(), "--arch", "sm_90"}, tmp / "cache");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r.err;
}

TEST(CompileCli, SyntaxErrorExits1WithTheLogAndCachesNothing) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  const std::string file = tmp / "broken.cu";
  write_file(file, "extern \"C\" __global__ void f(int* x) {\n  x[0] = 1;\n  this is not C++;\n}\n");
  const std::string cache = tmp / "cache";
  const auto r = xp_cli({"compile", file, "--arch", "sm_90"}, cache);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at line 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("broken.cu(3): error"), std::string::npos) << r.err;
  for (const auto& f : files_in(cache)) ADD_FAILURE() << "left in the cache: " << f;

  write_file(tmp / "ok.cu", kCliSource);
  const auto opt = xp_cli({"compile", tmp / "ok.cu", "--arch", "sm_90", "--", "--no-such-option"}, cache);
  EXPECT_EQ(opt.exit_code, 1) << opt.out << opt.err;
  EXPECT_NE(opt.err.find("NVRTC_ERROR_INVALID_OPTION"), std::string::npos) << opt.err;
}

TEST(CompileCli, MissingKernelExits1) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  const std::string file = tmp / "k.cu";
  write_file(file, kCliSource);
  const auto r = xp_cli({"compile", file, "--arch", "sm_80", "--kernel", "no_such_kernel"}, tmp / "cache");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("no_such_kernel"), std::string::npos) << r.err;
}
