// The files a kernel's source includes are part of its cache key: a changed header is never served
// from the disk or the memory cache as the old binary. Real NVRTC compiles, no GPU.
//
// Every test process gets its own empty kernel cache folder (XP_CACHE_DIR, set by ProcessCache).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "jit/includes.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

namespace fs = std::filesystem;
using xp_test::TempDir;

const xp_test::ProcessCache g_process_cache;

void write_file(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

const xp::Arch kArch = xp::Arch::sm(90);

// `xp <args>` run in `folder`, with the kernel cache in `cache`.
xp_test::ProcessResult xp_in(const std::string& folder, const std::string& args, const std::string& cache) {
  return xp_test::run_process({"/bin/sh", "-c", "cd '" + folder + "' && exec '" XP_CLI_PATH "' " + args},
                              {{"XP_CACHE_DIR", cache}, {"XP_LOG", "warn"}}, {"XP_CACHE_MAX_BYTES"});
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

const char* kScaleKernel =
    "#include \"scale.h\"\n"
    "extern \"C\" __global__ void scale(float* x) { x[threadIdx.x] *= SCALE; }\n";

}  // namespace

// The reproducer: a header in the working folder changes between two `xp compile` runs.
TEST(IncludeKey, CliRecompilesWhenAnIncludedFileChanges) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  const std::string cache = tmp / "cache";
  write_file(tmp / "scale.h", "#define SCALE 2.0f\n");
  write_file(tmp / "inc.cu", kScaleKernel);

  auto r = xp_in(tmp.path(), "compile inc.cu --arch sm_90", cache);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "compiled (cache miss)")) << r.out;
  r = xp_in(tmp.path(), "compile inc.cu --arch sm_90", cache);
  EXPECT_TRUE(has(r.out, "disk cache hit")) << r.out;

  write_file(tmp / "scale.h", "#define SCALE 3.0f\n");
  r = xp_in(tmp.path(), "compile inc.cu --arch sm_90", cache);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "compiled (cache miss)")) << "a changed header was served from the cache:\n" << r.out;

  // Back to the first content: its entry is still good.
  write_file(tmp / "scale.h", "#define SCALE 2.0f\n");
  r = xp_in(tmp.path(), "compile inc.cu --arch sm_90", cache);
  EXPECT_TRUE(has(r.out, "disk cache hit")) << r.out;

  // PTX keys the same way.
  r = xp_in(tmp.path(), "compile inc.cu --arch sm_90 --ptx", cache);
  EXPECT_TRUE(has(r.out, "compiled (cache miss)")) << r.out;
  write_file(tmp / "scale.h", "#define SCALE 4.0f\n");
  r = xp_in(tmp.path(), "compile inc.cu --arch sm_90 --ptx", cache);
  EXPECT_TRUE(has(r.out, "compiled (cache miss)")) << r.out;
}

// `xp compile sub/k.cu`: the file's own folder is where its quoted includes are found.
TEST(IncludeKey, CliFindsHeadersBesideTheFile) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  write_file(tmp / "sub/scale.h", "#define SCALE 2.0f\n");
  write_file(tmp / "sub/inc.cu", kScaleKernel);
  const auto r = xp_in(tmp.path(), "compile sub/inc.cu --arch sm_90", tmp / "cache");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

namespace {

struct Compiled {
  xp::CompileStats stats;
  std::vector<char> binary;
};
Compiled compile(const std::string& source, const xp::ProgramOptions& o) {
  xp::Program p(source, o);
  Compiled c;
  c.stats = p.compile(kArch);
  c.binary = p.binary(kArch);
  return c;
}

}  // namespace

// Headers found through -I (both spellings), nested includes relative to their includer, and a
// second Program in the same process: neither cache returns the old code.
TEST(IncludeKey, IncludePathsAndNestedFilesAreKeyedByContent) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  write_file(tmp / "inc/outer.h", "#include \"deep/middle.h\"\n");
  write_file(tmp / "inc/deep/middle.h", "#include \"value.h\"\n");
  write_file(tmp / "inc/deep/value.h", "#define VALUE 1\n");
  const std::string source = "#include <outer.h>\nextern \"C\" __global__ void put(int* x) { *x = VALUE; }\n";
  for (const std::string& flag : {"-I" + (tmp / "inc"), "--include-path=" + (tmp / "inc")}) {
    SCOPED_TRACE(flag);
    xp::ProgramOptions o;
    o.name = "nested.cu";
    o.options = {flag};
    write_file(tmp / "inc/deep/value.h", "#define VALUE 1\n");
    const Compiled a = compile(source, o);
    ASSERT_FALSE(a.stats.cache_file.empty());
    EXPECT_TRUE(a.stats.not_cached.empty()) << a.stats.not_cached;
    const Compiled again = compile(source, o);
    EXPECT_TRUE(again.stats.memory_hit);

    write_file(tmp / "inc/deep/value.h", "#define VALUE 2\n");
    const Compiled b = compile(source, o);
    EXPECT_FALSE(b.stats.memory_hit);
    EXPECT_FALSE(b.stats.disk_hit);
    EXPECT_NE(b.stats.cache_file, a.stats.cache_file);
    EXPECT_NE(b.binary, a.binary);
  }
}

// A file created where the search looks before the file it found shadows it: the key changes.
TEST(IncludeKey, AFileThatWouldShadowTheOneFoundChangesTheKey) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  write_file(tmp / "lib/value.h", "#define VALUE 1\n");
  xp::ProgramOptions o;
  o.name = tmp / "src/shadow.cu";  // quoted includes look in src/ first, then in lib/
  o.options = {"-I" + (tmp / "lib")};
  const std::string source = "#include \"value.h\"\nextern \"C\" __global__ void put(int* x) { *x = VALUE; }\n";
  fs::create_directories(tmp / "src");
  const Compiled a = compile(source, o);
  write_file(tmp / "src/value.h", "#define VALUE 2\n");
  const Compiled b = compile(source, o);
  EXPECT_FALSE(b.stats.memory_hit || b.stats.disk_hit);
  EXPECT_NE(a.binary, b.binary);
}

// A pre-included file is keyed like an include.
TEST(IncludeKey, PreIncludedFileIsKeyed) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  xp::ProgramOptions o;
  o.name = "pre.cu";
  o.options = {"--pre-include=" + (tmp / "pre.h")};
  const std::string source = "extern \"C\" __global__ void put(int* x) { *x = VALUE; }\n";
  write_file(tmp / "pre.h", "#define VALUE 1\n");
  const Compiled a = compile(source, o);
  write_file(tmp / "pre.h", "#define VALUE 2\n");
  const Compiled b = compile(source, o);
  EXPECT_FALSE(b.stats.memory_hit || b.stats.disk_hit);
  EXPECT_NE(a.binary, b.binary);
}

// An include through a macro cannot be followed: nothing is cached, and every new Program compiles
// what the file holds now.
TEST(IncludeKey, MacroIncludeIsNeverCached) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  xp::ProgramOptions o;
  o.name = tmp / "macro.cu";
  const std::string source =
      "#define HEADER \"value.h\"\n#include HEADER\nextern \"C\" __global__ void put(int* x) { *x = VALUE; }\n";
  write_file(tmp / "value.h", "#define VALUE 1\n");
  const Compiled a = compile(source, o);
  EXPECT_TRUE(has(a.stats.not_cached, "macro")) << a.stats.not_cached;
  EXPECT_TRUE(a.stats.cache_file.empty());
  const Compiled same = compile(source, o);
  EXPECT_FALSE(same.stats.memory_hit || same.stats.disk_hit);
  EXPECT_GT(same.stats.compile_ms, 0);
  EXPECT_EQ(same.binary, a.binary);
  write_file(tmp / "value.h", "#define VALUE 2\n");
  const Compiled b = compile(source, o);
  EXPECT_NE(b.binary, a.binary);
}

// An in-memory header wins over a file of the same name (NVRTC's rule), so that file is no key
// material: changing it costs no recompile.
TEST(IncludeKey, InMemoryHeaderIsNotShadowedByAFile) {
  XP_REQUIRE_NVRTC();
  TempDir tmp;
  xp::ProgramOptions o;
  o.name = tmp / "mem.cu";
  o.headers = {{"value.h", "#define VALUE 7\n"}};
  const std::string source = "#include \"value.h\"\nextern \"C\" __global__ void put(int* x) { *x = VALUE; }\n";
  write_file(tmp / "value.h", "#define VALUE 1\n");
  const Compiled a = compile(source, o);
  write_file(tmp / "value.h", "#define VALUE 2\n");
  const Compiled b = compile(source, o);
  EXPECT_TRUE(b.stats.memory_hit);
  EXPECT_EQ(a.binary, b.binary);
}

// ---- the scan itself (no NVRTC) ----

namespace {

xp::detail::IncludeScan scan(const std::string& source, const std::string& name,
                             const std::vector<std::string>& options = {},
                             const std::vector<std::pair<std::string, std::string>>& headers = {},
                             const std::vector<std::string>& toolkit = {}) {
  return xp::detail::scan_includes({source, name, &options, &headers, &toolkit});
}

}  // namespace

TEST(IncludeScan, CommentsAreNotDirectivesButContinuedLinesAre) {
  TempDir tmp;
  write_file(tmp / "a.h", "");
  write_file(tmp / "b.h", "");
  write_file(tmp / "c.h", "");
  write_file(tmp / "d.h", "");
  const std::string src =
      "// #include \"a.h\"\n"
      "/* #include \"b.h\"\n"
      "   still a comment */\n"
      "  #  include \\\n"
      "   \"c.h\" // a comment after it\n"
      "const char* s = \"// not a comment\"; /* x */ #include \"d.h\"\n";
  const auto s = scan(src, tmp / "x.cu");
  EXPECT_TRUE(s.cacheable);
  EXPECT_FALSE(has(s.key, "a.h")) << s.key;
  EXPECT_FALSE(has(s.key, "b.h")) << s.key;
  EXPECT_TRUE(has(s.key, "file " + (tmp / "c.h") + " 0 ")) << s.key;
  EXPECT_FALSE(has(s.key, "d.h")) << s.key;  // not at the start of a line: not a directive
}

TEST(IncludeScan, AbsentPlacesAndToolkitFilesAreRecordedNotRead) {
  TempDir tmp;
  write_file(tmp / "tk/cuda_fp16.h", "#include \"never_followed.h\"\n");
  write_file(tmp / "user/u.h", "#define U 1\n");
  const auto s = scan("#include <cuda_fp16.h>\n#include \"u.h\"\n#if __has_include(<maybe.h>)\n#endif\n",
                      tmp / "src/k.cu", {"-I", tmp / "user"}, {}, {tmp / "tk"});
  EXPECT_TRUE(has(s.key, "toolkit " + (tmp / "tk/cuda_fp16.h") + "\n")) << s.key;
  EXPECT_FALSE(has(s.key, "never_followed")) << s.key;
  EXPECT_TRUE(has(s.key, "absent " + (tmp / "src/u.h") + "\n")) << s.key;
  EXPECT_TRUE(has(s.key, "absent " + (tmp / "tk/u.h") + "\n")) << s.key;
  EXPECT_TRUE(has(s.key, "file " + (tmp / "user/u.h") + " 12 ")) << s.key;
  EXPECT_TRUE(has(s.key, "absent " + (tmp / "user/maybe.h") + "\n")) << s.key;
  EXPECT_EQ(s.files, 1u);
}

TEST(IncludeScan, CyclesEndAndInMemoryHeadersAreFollowed) {
  TempDir tmp;
  write_file(tmp / "a.h", "#pragma once\n#include \"b.h\"\n");
  write_file(tmp / "b.h", "#pragma once\n#include \"a.h\"\n");
  const auto s = scan("#include \"mem/m.h\"\n", tmp / "k.cu", {"-I" + tmp.path()}, {{"mem/m.h", "#include \"a.h\"\n"}});
  EXPECT_TRUE(s.cacheable);
  // mem/m.h's quoted include looks in mem/ (relative to the working folder) first, then -I.
  EXPECT_TRUE(has(s.key, "absent mem/a.h\n")) << s.key;
  EXPECT_TRUE(has(s.key, "file " + (tmp / "a.h"))) << s.key;
  EXPECT_TRUE(has(s.key, "file " + (tmp / "b.h"))) << s.key;
  EXPECT_EQ(s.files, 2u);
}

// A FIFO is refused without waiting for a writer.
TEST(IncludeScan, SpecialFileIsNotCachedAndDoesNotBlock) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo.h").c_str(), 0600), 0);
  const auto s = scan("#include \"fifo.h\"\n", tmp / "k.cu");
  EXPECT_FALSE(s.cacheable);
  EXPECT_TRUE(has(s.why_not, "not a regular file")) << s.why_not;
}
