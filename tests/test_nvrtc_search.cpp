// Choosing an NVRTC (pure rules on made-up candidates) and finding the real ones of this machine
// along the search order of docs/design.md, "Finding libraries" (each case in a process of its
// own: the search is cached).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "jit/nvrtc_compiler.hpp"
#include "runtime/dynlib.hpp"
#include "runtime/nvrtc_search.hpp"
#include "runtime/site_packages.hpp"
#include "test_util.hpp"
#include "xp/program.hpp"

using xp::LibraryInfo;
using xp::detail::choose_nvrtc;
using xp::detail::nvrtc_rejection;

namespace {

LibraryInfo nvrtc(int version, std::vector<int> archs) {
  LibraryInfo l;
  l.name = "libnvrtc";
  l.found = true;
  l.version_number = version;
  l.version = std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
  l.archs = std::move(archs);
  return l;
}

const std::vector<int> kArchs12 = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 120};
const std::vector<int> kArchs13 = {75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121};

}  // namespace

TEST(NvrtcChoice, NewestWhoseMajorTheDriverAccepts) {
  const std::vector<LibraryInfo> found = {nvrtc(12090, kArchs12), nvrtc(13000, kArchs13)};
  EXPECT_EQ(choose_nvrtc(found, 13000, {90}), 1);  // CUDA 13 driver: NVRTC 13
  EXPECT_EQ(choose_nvrtc(found, 12080, {90}), 0);  // CUDA 12.8 driver: NVRTC 13 code would not load
  EXPECT_EQ(choose_nvrtc(found, 11080, {90}), -1);
  EXPECT_NE(nvrtc_rejection(found[1], 12080, {90}).find("newer than the driver"), std::string::npos);
}

TEST(NvrtcChoice, OlderGpusNeedNvrtc12) {
  const std::vector<LibraryInfo> found = {nvrtc(13000, kArchs13), nvrtc(12090, kArchs12)};
  EXPECT_EQ(choose_nvrtc(found, 13000, {61}), 1);      // Pascal: NVRTC 13 starts at sm_75
  EXPECT_EQ(choose_nvrtc(found, 13000, {90, 61}), 1);  // every GPU must be served
  EXPECT_EQ(choose_nvrtc({found[0]}, 13000, {61}), -1);
  EXPECT_NE(nvrtc_rejection(found[0], 13000, {61}).find("sm_61"), std::string::npos);
}

TEST(NvrtcChoice, GpuNewerThanNvrtcKnowsIsServedThroughPtx) {
  EXPECT_EQ(choose_nvrtc({nvrtc(12040, {50, 60, 70, 75, 80, 86, 89, 90})}, 13000, {120}), 0);
}

TEST(NvrtcChoice, WithoutDriverTheNewestWins) {
  EXPECT_EQ(choose_nvrtc({nvrtc(12090, kArchs12), nvrtc(13020, kArchs13), nvrtc(13000, kArchs13)}, 0, {}), 1);
}

TEST(NvrtcChoice, EqualVersionsKeepSearchOrder) {
  EXPECT_EQ(choose_nvrtc({nvrtc(13000, kArchs13), nvrtc(13000, kArchs13)}, 13000, {90}), 0);
}

// ---- where the wheel searches look (NVRTC and cuBLAS share the list) ----

namespace {

void make_dirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  ASSERT_FALSE(ec) << path << ": " << ec.message();
}

}  // namespace

TEST(SitePackages, AVirtualEnvironmentsFoldersNewestPythonFirst) {
  xp_test::TempDir venv;
  for (const char* py : {"python3.9", "python3.12", "python3.10", "python3.13t"})
    make_dirs(venv / "lib" + "/" + py + "/site-packages");
  make_dirs(venv / "lib/python3.11");  // no site-packages in it: not listed
  const std::vector<std::string> want = {venv / "lib/python3.13t/site-packages", venv / "lib/python3.12/site-packages",
                                         venv / "lib/python3.10/site-packages", venv / "lib/python3.9/site-packages"};
  EXPECT_EQ(xp::detail::venv_site_packages(venv.path()), want);
  EXPECT_TRUE(xp::detail::venv_site_packages("").empty());
  EXPECT_TRUE(xp::detail::venv_site_packages(venv / "missing").empty());
  // A prefix that names a Python itself does not decide the order.
  const std::string named = venv / "python3.7-env";
  for (const char* py : {"python3.9", "python3.12"}) make_dirs(named + "/lib/" + py + "/site-packages");
  EXPECT_EQ(xp::detail::venv_site_packages(named), (std::vector<std::string>{named + "/lib/python3.12/site-packages",
                                                                             named + "/lib/python3.9/site-packages"}));
}

TEST(SitePackages, ThePythonPathThenTheUsersThenTheSystemsFolders) {
  xp_test::TempDir home;
  make_dirs(home / ".local/lib/python3.8/site-packages");
  make_dirs(home / ".local/lib/python3.12/site-packages");
  xp::detail::ForeignEnvironment env;
  env.pythonpath = "/a::/b:";
  env.home = home.path();
  const std::vector<std::string> got = xp::detail::other_site_packages(env);
  ASSERT_GE(got.size(), 5u);
  EXPECT_EQ(got[0], "/a");  // empty entries are left out
  EXPECT_EQ(got[1], "/b");
  EXPECT_EQ(got[2], home / ".local/lib/python3.12/site-packages");
  EXPECT_EQ(got[3], home / ".local/lib/python3.8/site-packages");
  EXPECT_EQ(got.back(), "/usr/lib/python3/dist-packages");
  for (std::size_t i = 4; i + 1 < got.size(); ++i)  // this machine's /usr/local ones in between
    EXPECT_EQ(got[i].rfind("/usr/local/lib/python3", 0), 0u) << got[i];

  xp::detail::ForeignEnvironment bare;  // no PYTHONPATH, no HOME
  const std::vector<std::string> sys = xp::detail::other_site_packages(bare);
  ASSERT_FALSE(sys.empty());
  EXPECT_EQ(sys.back(), "/usr/lib/python3/dist-packages");
  EXPECT_EQ(sys.size(), got.size() - 4);
}

// ---- the real NVRTC of this machine, found by each step of the search ----

namespace {

const char* kToolkit = "/usr/local/cuda";
const std::string kToolkitNvrtc = std::string(kToolkit) + "/lib64/libnvrtc.so.13";
const std::string kVenv = std::string(XP_SOURCE_DIR) + "/.venv";

// Variables that steer the search, removed so that each case sees only what it sets.
const std::vector<std::string> kSearchVars = {"XP_NVRTC",     "CUDA_PATH",  "CUDA_HOME",     "VIRTUAL_ENV",
                                              "CONDA_PREFIX", "PYTHONPATH", "XP_CUDA_DRIVER"};

nlohmann::json doctor(const std::map<std::string, std::string>& set, int* exit_code = nullptr) {
  std::vector<std::string> unset;
  for (const auto& v : kSearchVars)
    if (!set.count(v)) unset.push_back(v);
  auto r = xp_test::run_process({XP_CLI_PATH, "doctor", "--json"}, set, unset);
  EXPECT_EQ(r.signal, 0) << r.err;
  if (exit_code != nullptr) *exit_code = r.exit_code;
  return nlohmann::json::parse(r.out);
}

const nlohmann::json* find_by(const nlohmann::json& report, const std::string& step) {
  for (const auto& l : report["libraries"]["nvrtc"])
    if (l["found"] == true && l["found_by"] == step) return &l;
  return nullptr;
}

bool toolkit_nvrtc_present() {
  return xp::detail::file_exists(kToolkitNvrtc);
}

std::string venv_wheel_dir() {
  for (const char* py : {"python3.11", "python3.12", "python3.13", "python3.10", "python3.14"}) {
    const std::string d = kVenv + "/lib/" + py + "/site-packages/nvidia/cu13/lib";
    if (xp::detail::file_exists(d + "/libnvrtc.so.13")) return d;
  }
  return {};
}

}  // namespace

TEST(NvrtcSearch, FindsTheToolkitThroughCudaPath) {
  if (!toolkit_nvrtc_present()) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no CUDA toolkit NVRTC at /usr/local/cuda");
  const auto j = doctor({{"CUDA_PATH", kToolkit}});
  const auto* l = find_by(j, "CUDA_PATH");
  ASSERT_NE(l, nullptr) << j["libraries"]["nvrtc"].dump(2);
  EXPECT_EQ((*l)["path"].get<std::string>().front(), '/');  // absolute
  EXPECT_EQ((*l)["version"].get<std::string>().substr(0, 3), "13.");
  const auto archs = (*l)["archs"];
  EXPECT_NE(std::find(archs.begin(), archs.end(), "sm_90"), archs.end());
  EXPECT_EQ(std::find(archs.begin(), archs.end(), "sm_61"), archs.end());  // NVRTC 13 starts at sm_75
  // Without a driver the newest NVRTC is the one used for compiling.
  int chosen = 0;
  for (const auto& c : j["libraries"]["nvrtc"]) chosen += c.value("chosen", false) ? 1 : 0;
  EXPECT_EQ(chosen, 1);
}

TEST(NvrtcSearch, FindsTheToolkitThroughCudaHome) {
  if (!toolkit_nvrtc_present()) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no CUDA toolkit NVRTC at /usr/local/cuda");
  const auto j = doctor({{"CUDA_HOME", kToolkit}});
  EXPECT_NE(find_by(j, "CUDA_HOME"), nullptr) << j["libraries"]["nvrtc"].dump(2);
  EXPECT_EQ(find_by(j, "CUDA_PATH"), nullptr);
}

TEST(NvrtcSearch, FindsThePythonWheelInTheVirtualEnvironment) {
  const std::string dir = venv_wheel_dir();
  if (dir.empty()) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no nvidia-cuda-nvrtc wheel in " + kVenv);
  const auto j = doctor({{"VIRTUAL_ENV", kVenv}});
  const auto* l = find_by(j, "wheel");
  ASSERT_NE(l, nullptr) << j["libraries"]["nvrtc"].dump(2);
  EXPECT_NE((*l)["path"].get<std::string>().find("/nvidia/cu13/lib/libnvrtc.so.13"), std::string::npos);
}

TEST(NvrtcSearch, FindsTheWheelThroughPythonPath) {
  const std::string dir = venv_wheel_dir();
  if (dir.empty()) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no nvidia-cuda-nvrtc wheel in " + kVenv);
  const std::string site = dir.substr(0, dir.size() - std::string("/nvidia/cu13/lib").size());
  const auto j = doctor({{"PYTHONPATH", "/nonexistent:" + site}});
  EXPECT_NE(find_by(j, "wheel"), nullptr) << j["libraries"]["nvrtc"].dump(2);
}

TEST(NvrtcSearch, ExplicitPathIsTheOnlyCandidate) {
  if (!toolkit_nvrtc_present()) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no CUDA toolkit NVRTC at /usr/local/cuda");
  const auto j = doctor({{"XP_NVRTC", kToolkitNvrtc}, {"CUDA_PATH", kToolkit}});
  ASSERT_EQ(j["libraries"]["nvrtc"].size(), 1u);
  EXPECT_EQ(j["libraries"]["nvrtc"][0]["found_by"], "XP_NVRTC");
  EXPECT_EQ(j["libraries"]["nvrtc"][0]["chosen"], true);
}

TEST(NvrtcSearch, ExplicitMissingFileIsAnErrorTheUserSees) {
  int code = -1;
  const auto j = doctor({{"XP_NVRTC", "/nonexistent/libnvrtc.so.13"}}, &code);
  EXPECT_EQ(code, 1);  // the user named a library that is not there
  ASSERT_EQ(j["libraries"]["nvrtc"].size(), 1u);
  EXPECT_EQ(j["libraries"]["nvrtc"][0]["found"], false);
  bool reported = false;
  for (const auto& p : j["problems"]) reported = reported || p["id"] == "nvrtc_explicit_unusable";
  EXPECT_TRUE(reported) << j["problems"].dump(2);
}

TEST(NvrtcSearch, ExplicitLibraryThatIsNotNvrtcIsRefused) {
  int code = -1;
  const auto j = doctor({{"XP_NVRTC", XP_FAKE_DRIVER_PATH}}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(j["libraries"]["nvrtc"][0]["found"], false);
  EXPECT_NE(j["libraries"]["nvrtc"][0]["error"].get<std::string>().find("not an NVRTC"), std::string::npos);
}

TEST(NvrtcSearch, NothingFoundListsThePlacesTried) {
  // Only the last steps (OS loader, /usr/local/cuda) can still find the toolkit here.
  const auto j = doctor({{"HOME", "/nonexistent"}});
  if (toolkit_nvrtc_present()) {
    const bool by_loader_or_default = find_by(j, "OS loader") != nullptr || find_by(j, "/usr/local/cuda") != nullptr;
    EXPECT_TRUE(by_loader_or_default) << j["libraries"]["nvrtc"].dump(2);
  } else {
    ASSERT_EQ(j["libraries"]["nvrtc"].size(), 1u);
    EXPECT_FALSE(j["libraries"]["nvrtc"][0]["tried"].empty());
  }
}

TEST(DriverLibrary, ToolkitStubIsRecognised) {
  const std::string stub = std::string(kToolkit) + "/lib64/stubs/libcuda.so";
  if (!xp::detail::file_exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub libcuda at " << stub;
  int code = -1;
  const auto j = doctor({{"XP_CUDA_DRIVER", stub}}, &code);
  EXPECT_EQ(j["cuda"]["reason"], "driver_unusable");
  EXPECT_EQ(j["cuda"]["driver_error"]["code"], 34);
  EXPECT_EQ(j["cuda"]["driver_error"]["name"], "CUDA_ERROR_STUB_LIBRARY");
  EXPECT_EQ(code, 1);
  bool reported = false;
  for (const auto& p : j["problems"]) reported = reported || p["id"] == "driver_is_stub";
  EXPECT_TRUE(reported);
}

// ---- The toolkit headers' version (the cuda.h line that goes into every kernel cache key) -------

namespace {

std::string write_file(const xp_test::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr) << path;
  if (f != nullptr) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  return path;
}

}  // namespace

TEST(ToolkitHeaders, CudaVersionLineAnywhereInTheFile) {
  using xp::detail::cuda_version_define;
  xp_test::TempDir dir;
  EXPECT_EQ(cuda_version_define(write_file(dir, "first.h", "#define CUDA_VERSION 13000\nint x;\n")), "13000");
  EXPECT_EQ(cuda_version_define(write_file(dir, "last.h", "int x;\n#define CUDA_VERSION 12080")), "12080");
  // Lines that only look like it come first; the first real one wins.
  EXPECT_EQ(
      cuda_version_define(write_file(dir, "near.h",
                                     " #define CUDA_VERSION 1\n#define CUDA_VERSIONS 2\n// #define CUDA_VERSION 3\n"
                                     "#define CUDA_VERSION 12090\n#define CUDA_VERSION 4\n")),
      "12090");
  // Far in, and across every offset of the 16 KB read steps: the same answer.
  for (std::size_t pad : {std::size_t{16384 - 30}, std::size_t{16384 - 5}, std::size_t{16384}, std::size_t{40000}}) {
    std::string text;
    while (text.size() < pad) text += "/* filler filler filler */\n";
    text.resize(pad - 1);
    text += "\n#define CUDA_VERSION 13010\r\nint y;\n";
    EXPECT_EQ(cuda_version_define(write_file(dir, "far.h", text)), "13010\r") << "pad " << pad;  // as getline gives it
  }
  EXPECT_EQ(cuda_version_define(write_file(dir, "none.h", "int x;\n#define CUDA_VERSION\n")), "");
  EXPECT_EQ(cuda_version_define(write_file(dir, "empty.h", "")), "");
  EXPECT_EQ(cuda_version_define(dir / "absent.h"), "");
}

TEST(ToolkitHeaders, TheCompilerReportsTheLineOfItsCudaH) {
  XP_REQUIRE_NVRTC();
  const xp::CompilerInfo info = xp::compiler_info();
  ASSERT_FALSE(info.include_dirs.empty()) << "NVRTC at " << info.nvrtc_path << " has no toolkit headers beside it";
  std::string want;  // an independent reading: std::getline until the first such line
  std::ifstream h(info.include_dirs.front() + "/cuda.h");
  for (std::string line; std::getline(h, line);) {
    if (line.rfind("#define CUDA_VERSION ", 0) == 0) {
      want = line.substr(21);
      break;
    }
  }
  ASSERT_FALSE(want.empty()) << info.include_dirs.front() << "/cuda.h has no CUDA_VERSION line";
  EXPECT_EQ(info.toolkit_headers_version, want);
}
