// The fault matrix: every way finding and starting CUDA can go wrong, each reproduced with the fake
// driver (or a broken file) in a process of its own, and checked through `xp doctor --json`: the
// reason, the exit code, the evidence kept, and no crash.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kNvrtc13 = "/usr/local/cuda/lib64/libnvrtc.so.13";

// Everything xp (and the fake) reads is removed from the inherited environment, then set per case.
const std::vector<std::string> kScrubbed = {"XP_DEVICE",
                                            "FORCE_CPU",
                                            "XP_CUDA_DRIVER",
                                            "XP_NVRTC",
                                            "XP_CUBLAS",
                                            "XP_CUSOLVER",
                                            "XP_CUFFT",
                                            "XP_CACHE_DIR",
                                            "XP_LAZY",
                                            "XP_NUM_THREADS",
                                            "XP_PRELOAD_KERNELS",
                                            "XP_LOG",
                                            "XP_FAKE_CUDA",
                                            "XP_CACHE_MAX_BYTES",
                                            "XP_GPU_MEMORY_LIMIT",
                                            "CUDA_VISIBLE_DEVICES"};

bool nvrtc13_present() {
  return fs::exists(kNvrtc13);
}

using Env = std::map<std::string, std::string>;

// The fake driver with the given XP_FAKE_CUDA, and NVRTC 13 named explicitly when this machine has it,
// so that the NVRTC search does not depend on what else is installed.
Env fake(const std::string& spec = "") {
  Env env{{"XP_CUDA_DRIVER", XP_FAKE_DRIVER_PATH}};
  if (!spec.empty()) env["XP_FAKE_CUDA"] = spec;
  if (nvrtc13_present()) env["XP_NVRTC"] = kNvrtc13;
  return env;
}

Env with(Env env, const Env& more) {
  for (const auto& [k, v] : more) env[k] = v;
  return env;
}

#define REQUIRE_NVRTC13()                                                                               \
  do {                                                                                                  \
    if (!nvrtc13_present())                                                                             \
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", std::string(kNvrtc13) + " is absent: no NVRTC 13 here"); \
  } while (0)

class FaultMatrix : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!tmp_.empty()) fs::remove_all(tmp_);
  }

  // Runs `xp doctor --json` with env; the process must exit normally and print one JSON document
  // whose exit_code matches the process's.
  void run(const Env& env) {
    proc_ = xp_test::run_process({XP_CLI_PATH, "doctor", "--json"}, env, kScrubbed);
    ASSERT_EQ(proc_.signal, 0) << "xp doctor crashed\nstdout:\n" << proc_.out << "\nstderr:\n" << proc_.err;
    ASSERT_NE(proc_.exit_code, -1) << "xp doctor did not run: " << XP_CLI_PATH;
    try {
      doc_ = json::parse(proc_.out);
    } catch (const json::exception& e) {
      FAIL() << "not JSON: " << e.what() << "\nstdout:\n" << proc_.out << "\nstderr:\n" << proc_.err;
    }
    ASSERT_EQ(doc_.value("schema", ""), "xp.doctor/1");
    ASSERT_EQ(doc_["exit_code"], proc_.exit_code) << proc_.out;
  }

  const json& cuda() const { return doc_["cuda"]; }
  const json& driver() const { return doc_["libraries"]["driver"]; }
  std::string reason() const { return cuda()["reason"].get<std::string>(); }

  bool has_problem(const std::string& id) const { return problem(id) != nullptr; }
  json problem(const std::string& id) const {
    for (const auto& p : doc_["problems"])
      if (p["id"] == id) return p;
    return nullptr;
  }
  json env_row(const std::string& name) const {
    for (const auto& row : doc_["environment"])
      if (row["name"] == name) return row;
    return nullptr;
  }

  std::string temp_dir() {
    if (tmp_.empty()) {
      std::string tmpl = (fs::temp_directory_path() / "xp-fault-XXXXXX").string();
      if (mkdtemp(tmpl.data()) != nullptr) tmp_ = tmpl;
    }
    return tmp_;
  }

  xp_test::ProcessResult proc_;
  json doc_;
  std::string tmp_;
};

// The problem id for a cuInit failure depends on the device node, as xp's diagnosis does.
std::string init_problem_for(int code) {
  if (!fs::exists("/dev/nvidiactl")) return "no_device_node";
  return code == 35 ? "insufficient_driver" : "init_failed";
}

std::string canonical(const std::string& p) {
  return fs::canonical(p).string();
}

// --- the driver library itself -------------------------------------------------------------------

TEST_F(FaultMatrix, DriverPathMissingIsNotFoundAndAnErrorBecauseTheUserNamedIt) {
  const std::string path = "/nonexistent/xp-test/libcuda.so.1";
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{"XP_CUDA_DRIVER", path}})));
  EXPECT_EQ(reason(), "driver_not_found");
  EXPECT_EQ(proc_.exit_code, 1);
  EXPECT_FALSE(cuda()["available"].get<bool>());
  EXPECT_NE(cuda()["detail"].get<std::string>().find(path), std::string::npos) << cuda()["detail"];
  EXPECT_FALSE(driver()["found"].get<bool>());
  ASSERT_EQ(driver()["tried"].size(), 1u);
  EXPECT_EQ(driver()["tried"][0], path);
  const json p = problem("driver_not_found");
  ASSERT_NE(p, nullptr) << doc_["problems"];
  EXPECT_EQ(p["severity"], "error");
  // Without XP_DEVICE the verdict is still a usable device: the CPU.
  EXPECT_EQ(doc_["verdict"]["device"], "cpu");
  EXPECT_FALSE(has_problem("requested_device_unavailable"));
  EXPECT_TRUE(doc_["gpus"].empty());
}

TEST_F(FaultMatrix, TextFileIsAnUnusableDriver) {
  const std::string path = temp_dir() + "/libcuda.so.1";
  // Longer than an ELF header, as a linker script named like a library is.
  std::ofstream(path) << "/* GNU ld script: this is a text file, not a shared library */\n"
                         "GROUP ( /usr/lib/x86_64-linux-gnu/libcuda.so.1 )\n";
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{"XP_CUDA_DRIVER", path}})));
  EXPECT_EQ(reason(), "driver_unusable");
  EXPECT_EQ(proc_.exit_code, 1);
  const std::string error = driver()["error"].get<std::string>();
  EXPECT_NE(error.find("ELF"), std::string::npos) << error;  // glibc: "invalid ELF header"
  EXPECT_NE(cuda()["detail"].get<std::string>().find(error), std::string::npos) << cuda()["detail"];
  EXPECT_NE(cuda()["detail"].get<std::string>().find(path), std::string::npos) << cuda()["detail"];
  ASSERT_TRUE(has_problem("driver_unusable")) << doc_["problems"];
  EXPECT_EQ(problem("driver_unusable")["severity"], "error");
}

TEST_F(FaultMatrix, WrongMachineElfIsAnUnusableDriverWithTheLoadersText) {
  const std::string path = temp_dir() + "/libcuda.so.1";
  fs::copy_file(XP_FAKE_DRIVER_PATH, path);
  {
    // e_machine, a little-endian 16-bit field at offset 18: 62 (x86-64) becomes 183 (AArch64).
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    char machine[2] = {};
    f.seekg(18);
    f.read(machine, 2);
    ASSERT_EQ(machine[0], 62) << "the fake driver is not an x86-64 ELF";
    const char aarch64[2] = {static_cast<char>(183), 0};
    f.seekp(18);
    f.write(aarch64, 2);
    ASSERT_TRUE(f.good());
  }
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{"XP_CUDA_DRIVER", path}})));
  EXPECT_EQ(reason(), "driver_unusable");
  EXPECT_EQ(proc_.exit_code, 1);
  EXPECT_FALSE(driver()["found"].get<bool>());
  // The loader's own words are kept (glibc says "No such file or directory" about a foreign
  // machine's file), and xp says what the file is.
  const std::string error = driver()["error"].get<std::string>();
  EXPECT_NE(error.find(path + ": "), std::string::npos) << error;
  EXPECT_NE(error.find("AArch64"), std::string::npos) << error;
  EXPECT_NE(error.find("x86-64"), std::string::npos) << error;
  EXPECT_NE(cuda()["detail"].get<std::string>().find(error), std::string::npos) << cuda()["detail"];
  EXPECT_TRUE(has_problem("driver_unusable")) << doc_["problems"];
}

TEST_F(FaultMatrix, MissingRequiredEntryPointIsAnUnusableDriverNamingIt) {
  ASSERT_NO_FATAL_FAILURE(run(fake("missing=cuDeviceGetName")));
  EXPECT_EQ(reason(), "driver_unusable");
  EXPECT_EQ(proc_.exit_code, 1);
  EXPECT_NE(cuda()["detail"].get<std::string>().find("cuDeviceGetName"), std::string::npos) << cuda()["detail"];
  EXPECT_NE(driver()["error"].get<std::string>().find("cuDeviceGetName"), std::string::npos) << driver()["error"];
  // The library loaded and said its version before the table failed.
  EXPECT_TRUE(driver()["found"].get<bool>());
  EXPECT_EQ(driver()["path"], canonical(XP_FAKE_DRIVER_PATH));
  EXPECT_EQ(driver()["version"], "13.0");
  EXPECT_TRUE(doc_["gpus"].empty());
  EXPECT_TRUE(has_problem("driver_unusable")) << doc_["problems"];
}

TEST_F(FaultMatrix, MissingOptionalEntryPointsLeaveTheirFieldsNull) {
  ASSERT_NO_FATAL_FAILURE(run(fake("missing=cuDeviceGetUuid,missing=cuDeviceGetPCIBusId")));
  ASSERT_EQ(doc_["gpus"].size(), 1u) << proc_.out;
  const json& g = doc_["gpus"][0];
  EXPECT_TRUE(g["uuid"].is_null()) << g;
  EXPECT_TRUE(g["pci_bus_id"].is_null()) << g;
  EXPECT_EQ(g["name"], "xp fake GPU");
  EXPECT_FALSE(has_problem("driver_unusable"));
  if (!nvrtc13_present()) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no NVRTC 13: CUDA cannot be available");
  EXPECT_EQ(reason(), "available");
  EXPECT_EQ(proc_.exit_code, 0);
}

TEST_F(FaultMatrix, StubDriverIsNamedAsTheToolkitsStub) {
  ASSERT_NO_FATAL_FAILURE(run(fake("stub")));
  EXPECT_EQ(reason(), "driver_unusable");
  EXPECT_EQ(proc_.exit_code, 1);
  EXPECT_EQ(cuda()["driver_error"]["code"], 34);
  EXPECT_EQ(cuda()["driver_error"]["name"], "CUDA_ERROR_STUB_LIBRARY");
  EXPECT_TRUE(driver()["version"].is_null());  // the stub does not say
  EXPECT_TRUE(has_problem("driver_is_stub")) << doc_["problems"];
  EXPECT_FALSE(has_problem("driver_unusable"));
}

TEST_F(FaultMatrix, ToolkitStubLibraryIsNamedAsTheStub) {
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!fs::exists(stub)) GTEST_SKIP() << stub << " is absent: no CUDA toolkit here";
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{"XP_CUDA_DRIVER", stub}})));
  EXPECT_EQ(reason(), "driver_unusable");
  EXPECT_EQ(cuda()["driver_error"]["code"], 34);
  EXPECT_EQ(driver()["path"], canonical(stub));
  EXPECT_TRUE(has_problem("driver_is_stub")) << doc_["problems"];
}

// --- cuInit and devices --------------------------------------------------------------------------

TEST_F(FaultMatrix, InitNoDeviceKeepsTheDriversCodeAndName) {
  ASSERT_NO_FATAL_FAILURE(run(fake("init=100")));
  EXPECT_EQ(reason(), "init_failed");
  EXPECT_EQ(proc_.exit_code, 0);  // the machine's state, not a demand of the user's
  ASSERT_TRUE(cuda()["driver_error"].is_object()) << cuda();
  EXPECT_EQ(cuda()["driver_error"]["code"], 100);
  EXPECT_EQ(cuda()["driver_error"]["name"], "CUDA_ERROR_NO_DEVICE");
  const std::string detail = cuda()["detail"].get<std::string>();
  EXPECT_NE(detail.find("cuInit"), std::string::npos) << detail;
  EXPECT_NE(detail.find("CUDA_ERROR_NO_DEVICE (100)"), std::string::npos) << detail;
  EXPECT_NE(detail.find("no CUDA-capable device is detected"), std::string::npos) << detail;  // the driver's text
  EXPECT_TRUE(has_problem(init_problem_for(100))) << doc_["problems"];
  EXPECT_EQ(doc_["device_nodes_present"], fs::exists("/dev/nvidiactl"));
  EXPECT_EQ(doc_["verdict"]["device"], "cpu");
}

TEST_F(FaultMatrix, InitInsufficientDriverIsDiagnosedByTheDeviceNode) {
  ASSERT_NO_FATAL_FAILURE(run(fake("init=35")));
  EXPECT_EQ(reason(), "init_failed");
  EXPECT_EQ(proc_.exit_code, 0);
  EXPECT_EQ(cuda()["driver_error"]["code"], 35);
  EXPECT_EQ(cuda()["driver_error"]["name"], "CUDA_ERROR_INSUFFICIENT_DRIVER");
  const bool one_of = has_problem("insufficient_driver") || has_problem("no_device_node");
  EXPECT_TRUE(one_of) << doc_["problems"];
  EXPECT_TRUE(has_problem(init_problem_for(35))) << doc_["problems"];
}

TEST_F(FaultMatrix, ZeroDevicesIsNoDevice) {
  ASSERT_NO_FATAL_FAILURE(run(fake("devices=0")));
  EXPECT_EQ(reason(), "no_device");
  EXPECT_EQ(proc_.exit_code, 0);
  EXPECT_EQ(cuda()["device_count"], 0);
  EXPECT_TRUE(cuda()["driver_error"].is_null());
  EXPECT_TRUE(doc_["gpus"].empty());
  EXPECT_TRUE(has_problem("no_device")) << doc_["problems"];
  EXPECT_EQ(doc_["verdict"]["device"], "cpu");
  EXPECT_FALSE(doc_["verdict"]["uses_gpu"].get<bool>());
}

TEST_F(FaultMatrix, OneFakeDeviceIsReportedAsTheDriverSaysIt) {
  REQUIRE_NVRTC13();
  ASSERT_NO_FATAL_FAILURE(run(fake()));
  EXPECT_EQ(reason(), "available");
  EXPECT_TRUE(cuda()["available"].get<bool>());
  EXPECT_EQ(proc_.exit_code, 0);
  EXPECT_EQ(cuda()["device_count"], 1);
  EXPECT_EQ(cuda()["driver_version"], "13.0");
  EXPECT_EQ(cuda()["nvrtc_version"].get<std::string>().rfind("13.", 0), 0u) << cuda();
  EXPECT_EQ(doc_["verdict"]["device"], "cuda:0");
  EXPECT_TRUE(doc_["verdict"]["uses_gpu"].get<bool>());
  EXPECT_TRUE(doc_["verdict"]["error"].is_null());

  EXPECT_TRUE(driver()["found"].get<bool>());
  EXPECT_EQ(driver()["path"], canonical(XP_FAKE_DRIVER_PATH));
  EXPECT_EQ(driver()["found_by"], "XP_CUDA_DRIVER");
  EXPECT_EQ(driver()["version"], "13.0");
  ASSERT_FALSE(doc_["libraries"]["nvrtc"].empty());
  EXPECT_TRUE(doc_["libraries"]["nvrtc"][0]["chosen"].get<bool>());
  EXPECT_EQ(doc_["libraries"]["nvrtc"][0]["found_by"], "XP_NVRTC");

  ASSERT_EQ(doc_["gpus"].size(), 1u);
  const json& g = doc_["gpus"][0];
  EXPECT_EQ(g["index"], 0);
  EXPECT_EQ(g["device"], "cuda:0");
  EXPECT_EQ(g["name"], "xp fake GPU");
  EXPECT_EQ(g["compute_capability"], "9.0");
  EXPECT_EQ(g["arch"], "sm_90");
  EXPECT_EQ(g["sm_count"], 132);
  EXPECT_EQ(g["memory_total_bytes"], std::uint64_t{141} << 30);
  EXPECT_EQ(g["memory_clock_khz"], 2619000);
  EXPECT_EQ(g["memory_bus_width_bits"], 5120);
  EXPECT_EQ(g["l2_cache_bytes"], 50 * 1024 * 1024);
  // 2 transfers per clock x 2619 MHz x 640 bytes.
  EXPECT_DOUBLE_EQ(g["bandwidth_bytes_per_s"].get<double>(), 2.0 * 2619000e3 * 640);
  EXPECT_EQ(g["pci_bus_id"], "0000:19:00.0");
  EXPECT_EQ(g["uuid"], "GPU-fa4ec0de-0000-4000-8000-000000000000");
  EXPECT_TRUE(g["nvrtc_supports_arch"].get<bool>());
  for (const auto& p : doc_["problems"]) EXPECT_NE(p["severity"], "error") << p;
}

TEST_F(FaultMatrix, VisibleDevicesSelectsAPhysicalDevice) {
  ASSERT_NO_FATAL_FAILURE(run(with(fake("devices=2"), {{"CUDA_VISIBLE_DEVICES", "1"}})));
  EXPECT_EQ(doc_["cuda_visible_devices"], "1");
  ASSERT_EQ(doc_["gpus"].size(), 1u) << proc_.out;
  EXPECT_EQ(doc_["gpus"][0]["device"], "cuda:0");
  EXPECT_EQ(doc_["gpus"][0]["pci_bus_id"], "0000:1a:00.0");  // the second physical device
  EXPECT_EQ(doc_["gpus"][0]["uuid"], "GPU-fa4ec0de-0000-4000-8000-000000000001");
}

class FaultMatrixHidden : public FaultMatrix, public ::testing::WithParamInterface<std::string> {};

TEST_P(FaultMatrixHidden, EveryDeviceHiddenIsAllDevicesHidden) {
  const std::string cvd = GetParam();
  ASSERT_NO_FATAL_FAILURE(run(with(fake("devices=2"), {{"CUDA_VISIBLE_DEVICES", cvd}})));
  EXPECT_EQ(reason(), "all_devices_hidden");
  EXPECT_EQ(proc_.exit_code, 0);
  EXPECT_EQ(cuda()["driver_error"]["code"], 100);
  EXPECT_EQ(cuda()["driver_error"]["name"], "CUDA_ERROR_NO_DEVICE");
  EXPECT_NE(cuda()["detail"].get<std::string>().find("CUDA_VISIBLE_DEVICES='" + cvd + "'"), std::string::npos)
      << cuda()["detail"];
  EXPECT_EQ(doc_["cuda_visible_devices"], cvd);
  EXPECT_TRUE(has_problem("all_devices_hidden")) << doc_["problems"];
  EXPECT_FALSE(has_problem("no_device_node"));
  EXPECT_TRUE(doc_["gpus"].empty());
}

INSTANTIATE_TEST_SUITE_P(Fault, FaultMatrixHidden, ::testing::Values("", "-1"),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return i.param.empty() ? std::string("empty") : std::string("minus_one");
                         });

// --- what the user asks for ----------------------------------------------------------------------

TEST_F(FaultMatrix, ForceCpuDisablesCudaButStillListsTheGpus) {
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{"FORCE_CPU", "1"}})));
  EXPECT_EQ(reason(), "disabled_by_user");
  EXPECT_EQ(cuda()["detail"], "FORCE_CPU is set");
  EXPECT_EQ(proc_.exit_code, 0);
  EXPECT_EQ(doc_["verdict"]["device"], "cpu");
  EXPECT_FALSE(doc_["verdict"]["uses_gpu"].get<bool>());
  ASSERT_EQ(doc_["gpus"].size(), 1u);
  EXPECT_EQ(doc_["gpus"][0]["name"], "xp fake GPU");
}

TEST_F(FaultMatrix, XpDeviceCpuDisablesCuda) {
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{"XP_DEVICE", "cpu"}})));
  EXPECT_EQ(reason(), "disabled_by_user");
  EXPECT_EQ(cuda()["detail"], "XP_DEVICE=cpu");
  EXPECT_EQ(proc_.exit_code, 0);
  EXPECT_EQ(doc_["verdict"]["device"], "cpu");
  EXPECT_EQ(doc_["gpus"].size(), 1u);
}

TEST_F(FaultMatrix, XpDeviceOrdinalPastTheCountIsAnError) {
  REQUIRE_NVRTC13();
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{"XP_DEVICE", "cuda:7"}})));
  EXPECT_EQ(reason(), "available");  // CUDA works; the request does not
  EXPECT_EQ(proc_.exit_code, 1);
  EXPECT_TRUE(doc_["verdict"]["device"].is_null());
  const std::string error = doc_["verdict"]["error"].get<std::string>();
  EXPECT_NE(error.find("cuda:7"), std::string::npos) << error;
  EXPECT_NE(error.find("1 CUDA device"), std::string::npos) << error;
  const json p = problem("requested_device_unavailable");
  ASSERT_NE(p, nullptr) << doc_["problems"];
  EXPECT_EQ(p["severity"], "error");
}

TEST_F(FaultMatrix, XpDeviceCudaWithoutADriverNamesTheReason) {
  ASSERT_NO_FATAL_FAILURE(
      run(with(fake(), {{"XP_DEVICE", "cuda"}, {"XP_CUDA_DRIVER", "/nonexistent/xp-test/libcuda.so.1"}})));
  EXPECT_EQ(reason(), "driver_not_found");
  EXPECT_EQ(proc_.exit_code, 1);
  EXPECT_TRUE(doc_["verdict"]["device"].is_null());
  const std::string error = doc_["verdict"]["error"].get<std::string>();
  EXPECT_NE(error.find("cuda:0"), std::string::npos) << error;
  EXPECT_NE(error.find("driver_not_found"), std::string::npos) << error;
  EXPECT_TRUE(has_problem("requested_device_unavailable")) << doc_["problems"];
}

TEST_F(FaultMatrix, XpDeviceCudaWhenInitFailsIsAnErrorOfItsOwn) {
  // The driver loads, so the exit code comes from XP_DEVICE alone.
  ASSERT_NO_FATAL_FAILURE(run(with(fake("init=100"), {{"XP_DEVICE", "cuda"}})));
  EXPECT_EQ(reason(), "init_failed");
  EXPECT_EQ(proc_.exit_code, 1);
  const std::string error = doc_["verdict"]["error"].get<std::string>();
  EXPECT_NE(error.find("init_failed"), std::string::npos) << error;
  EXPECT_NE(error.find("CUDA_ERROR_NO_DEVICE"), std::string::npos) << error;
  EXPECT_TRUE(has_problem("requested_device_unavailable")) << doc_["problems"];
}

struct Malformed {
  const char* variable;
  const char* value;
};

void PrintTo(const Malformed& m, std::ostream* os) {
  *os << m.variable << "=" << m.value;
}

class FaultMatrixConfig : public FaultMatrix, public ::testing::WithParamInterface<Malformed> {};

TEST_P(FaultMatrixConfig, MalformedValueIsInvalidConfig) {
  const Malformed m = GetParam();
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{m.variable, m.value}})));
  EXPECT_EQ(reason(), "invalid_config");
  EXPECT_EQ(proc_.exit_code, 2);
  EXPECT_NE(cuda()["detail"].get<std::string>().find(m.variable), std::string::npos) << cuda()["detail"];
  const json row = env_row(m.variable);
  ASSERT_NE(row, nullptr) << doc_["environment"];
  EXPECT_TRUE(row["set"].get<bool>());
  EXPECT_EQ(row["value"], m.value);
  ASSERT_TRUE(row["error"].is_string()) << row;
  EXPECT_NE(row["error"].get<std::string>().find("accepted"), std::string::npos) << row;
  for (const auto& other : doc_["environment"]) {
    if (other["name"] != m.variable) {
      EXPECT_TRUE(other["error"].is_null()) << other;
    }
  }
  const json p = problem("invalid_config");
  ASSERT_NE(p, nullptr) << doc_["problems"];
  EXPECT_NE(p["message"].get<std::string>().find(m.variable), std::string::npos) << p;
  EXPECT_TRUE(doc_["verdict"]["device"].is_null());
}

INSTANTIATE_TEST_SUITE_P(Fault, FaultMatrixConfig,
                         ::testing::Values(Malformed{"XP_DEVICE", "gpu"}, Malformed{"FORCE_CPU", "maybe"},
                                           Malformed{"XP_CACHE_MAX_BYTES", "12Q"},
                                           Malformed{"XP_GPU_MEMORY_LIMIT", "150%"}, Malformed{"XP_NUM_THREADS", "0"},
                                           Malformed{"XP_PRELOAD_KERNELS", "1025"}, Malformed{"XP_LOG", "loud"},
                                           Malformed{"XP_LAZY", "2"}),
                         [](const ::testing::TestParamInfo<Malformed>& i) { return std::string(i.param.variable); });

// The CPU section: whatever the driver, the CPU backend's threads, vector levels and BLAS.
TEST_F(FaultMatrix, TheReportHasTheCpuSection) {
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{"XP_NUM_THREADS", "3"}})));
  const json& c = doc_["cpu"];
  ASSERT_TRUE(c.is_object()) << doc_;
  EXPECT_GE(c["logical_cpus"].get<int>(), 1) << c;
  EXPECT_EQ(c["threads"], 3) << c;
  const std::string isa = c["sum_isa"].get<std::string>();
  EXPECT_TRUE(isa == "sse2" || isa == "avx2" || isa == "avx512") << c;
  EXPECT_FALSE(c["math_isa"].get<std::string>().empty()) << c;
  const json& b = c["blas"];
  EXPECT_EQ(b["loaded"].get<bool>(), b["path"].is_string()) << b;
  EXPECT_EQ(b["loaded"].get<bool>(), b["error"].is_null()) << b;
  const json& l = c["lapack"];
  EXPECT_EQ(l["loaded"].get<bool>(), l["error"].is_null()) << l;
  if (!b["loaded"].get<bool>()) {
    EXPECT_FALSE(l["loaded"].get<bool>()) << c;
  }
  if (xp_test::env_flag("XP_TEST_REQUIRE_OPENBLAS")) {
    EXPECT_TRUE(b["loaded"].get<bool>()) << b;
    EXPECT_NE(b["config"].get<std::string>().find("OpenBLAS"), std::string::npos) << b;
    EXPECT_TRUE(l["loaded"].get<bool>()) << l;
  }
  // The text report says the same.
  const auto text = xp_test::run_process({XP_CLI_PATH, "doctor"}, with(fake(), {{"XP_NUM_THREADS", "3"}}), kScrubbed);
  EXPECT_NE(text.out.find("\nCPU\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("xp uses 3 threads"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("vector level in use: reductions " + isa), std::string::npos) << text.out;
  EXPECT_NE(
      text.out.find(l["loaded"].get<bool>() ? "LAPACK (linalg): found in the BLAS library" : "LAPACK (linalg): none"),
      std::string::npos)
      << text.out;
}

// A misspelt variable is not an error (xp never reads it) but a warning that names the nearest
// variable xp reads; the exit code and the verdict stay those of a clean environment. A name far
// from every known one gets no suggestion, and the test suite's own XP_TEST_* are not reported.
TEST_F(FaultMatrix, UnknownXpVariablesAreWarningsNamingTheNearest) {
  ASSERT_NO_FATAL_FAILURE(run(with(fake(), {{"XP_DEVIC", "cpu"}, {"XP_SOMETHING_ELSE", "1"}})));
  EXPECT_EQ(proc_.exit_code, 0) << proc_.out << proc_.err;
  std::vector<json> unknown;
  for (const auto& p : doc_["problems"])
    if (p["id"] == "unknown_variable") unknown.push_back(p);
  ASSERT_EQ(unknown.size(), 2u) << doc_["problems"];
  EXPECT_EQ(unknown[0]["severity"], "warning");
  EXPECT_NE(unknown[0]["message"].get<std::string>().find("XP_DEVIC='cpu'"), std::string::npos) << unknown[0];
  EXPECT_NE(unknown[0]["fix"].get<std::string>().find("did you mean XP_DEVICE?"), std::string::npos) << unknown[0];
  EXPECT_NE(unknown[1]["message"].get<std::string>().find("XP_SOMETHING_ELSE"), std::string::npos) << unknown[1];
  EXPECT_EQ(unknown[1]["fix"].get<std::string>().find("did you mean"), std::string::npos) << unknown[1];
  for (const auto& p : doc_["problems"])
    EXPECT_EQ(p["message"].get<std::string>().find("XP_TEST_"), std::string::npos) << p;
  // Without them, no such warning.
  ASSERT_NO_FATAL_FAILURE(run(fake()));
  EXPECT_FALSE(has_problem("unknown_variable")) << doc_["problems"];
}

// --- NVRTC against the driver and the GPU --------------------------------------------------------

TEST_F(FaultMatrix, DriverOlderThanNvrtcLeavesNoUsableNvrtc) {
  REQUIRE_NVRTC13();
  ASSERT_NO_FATAL_FAILURE(run(fake("version=12080")));
  EXPECT_EQ(reason(), "no_usable_nvrtc");
  EXPECT_EQ(cuda()["driver_version"], "12.8");
  EXPECT_TRUE(cuda()["nvrtc_version"].is_null());
  // XP_NVRTC named the library, so it not fitting is an error.
  EXPECT_EQ(proc_.exit_code, 1);
  const json p = problem("driver_older_than_nvrtc");
  ASSERT_NE(p, nullptr) << doc_["problems"];
  EXPECT_EQ(p["severity"], "error");
  EXPECT_NE(p["message"].get<std::string>().find("CUDA 12"), std::string::npos) << p;
  ASSERT_EQ(doc_["libraries"]["nvrtc"].size(), 1u);
  EXPECT_FALSE(doc_["libraries"]["nvrtc"][0]["chosen"].get<bool>());
  EXPECT_EQ(doc_["libraries"]["nvrtc"][0]["version"].get<std::string>().rfind("13.", 0), 0u);
  EXPECT_EQ(doc_["verdict"]["device"], "cpu");
  ASSERT_EQ(doc_["gpus"].size(), 1u);
}

TEST_F(FaultMatrix, GpuOlderThanNvrtcLeavesNoUsableNvrtc) {
  REQUIRE_NVRTC13();
  ASSERT_NO_FATAL_FAILURE(run(fake("cc=6.1")));
  EXPECT_EQ(reason(), "no_usable_nvrtc");
  EXPECT_NE(cuda()["detail"].get<std::string>().find("sm_61"), std::string::npos) << cuda()["detail"];
  EXPECT_EQ(proc_.exit_code, 1);
  const json p = problem("gpu_older_than_nvrtc");
  ASSERT_NE(p, nullptr) << doc_["problems"];
  EXPECT_NE(p["message"].get<std::string>().find("sm_61"), std::string::npos) << p;
  EXPECT_FALSE(has_problem("driver_older_than_nvrtc"));
  ASSERT_EQ(doc_["gpus"].size(), 1u);
  EXPECT_EQ(doc_["gpus"][0]["compute_capability"], "6.1");
  EXPECT_FALSE(doc_["gpus"][0]["nvrtc_supports_arch"].get<bool>());
}

// --- the text report -----------------------------------------------------------------------------

TEST_F(FaultMatrix, TextReportNamesTheLibraryTheGpuAndTheVerdict) {
  REQUIRE_NVRTC13();
  const auto r = xp_test::run_process({XP_CLI_PATH, "doctor"}, fake("name=xp text GPU"), kScrubbed);
  ASSERT_EQ(r.signal, 0) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("CUDA driver: " + canonical(XP_FAKE_DRIVER_PATH)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cuda:0  xp text GPU  sm_90"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("132 SMs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PCI 0000:19:00.0"), std::string::npos) << r.out;
  const size_t verdict = r.out.find("\nVerdict\n");
  ASSERT_NE(verdict, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU in use: cuda:0 (driver CUDA 13.0, NVRTC 13.", verdict), std::string::npos) << r.out;
}

TEST_F(FaultMatrix, TextReportOfAMissingDriverSaysCpuFallback) {
  const std::string path = "/nonexistent/xp-test/libcuda.so.1";
  const auto r = xp_test::run_process({XP_CLI_PATH, "doctor"}, with(fake(), {{"XP_CUDA_DRIVER", path}}), kScrubbed);
  ASSERT_EQ(r.signal, 0) << r.err;
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("CUDA driver: not found"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tried " + path), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CPU fallback: CUDA driver_not_found"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[error]"), std::string::npos) << r.out;
}

}  // namespace
