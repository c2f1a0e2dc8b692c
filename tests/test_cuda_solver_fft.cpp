// cuSOLVER and cuFFT in the CUDA backend without a GPU: the fake driver's hollow devices (memory is
// host memory, kernels are compiled and launched but do not run) with a fake cuSOLVER and a fake
// cuFFT (tests/fake_driver/fake_cusolver.cpp, fake_cufft.cpp) that record their calls. Checked:
// - the searches: XP_CUSOLVER / XP_CUFFT naming no file, a file that is not the library, a library
//   newer than the driver, the fakes found with their versions, the toolkit's own (every entry point
//   resolves) where it is installed, and `xp doctor` (text and JSON) reporting each;
// - Backend::linalg's translation to cuSOLVER's column-major calls (routine, dtype, m, n, lda, ldb,
//   uplo, trans, jobz, jobu), per batch entry or batched (potrfBatched, syevjBatched, cuBLAS's
//   getrfBatched and getrsBatched), the stream set, the work area from the
//   allocator, the info words read back (positive: reported per entry; negative: an Error);
// - Backend::fft's plans (one per shape, cached, bounded), their arguments, the work area from the
//   allocator with cuFFT's own allocation off, the stream, c2r reading a copy;
// - both hooks returning false when their library is missing.
// Each case that needs a library runs in a child process (the searches run once per process).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "backend/cuda/cufft.hpp"
#include "backend/cuda/cusolver.hpp"
#include "backend/cuda/library_search.hpp"
#include "backend/cuda/matrix_copy.hpp"
#include "runtime/dynlib.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::Device;
using xp::DType;
using xp::detail::Allocation;
using xp::detail::Backend;
using xp::detail::FftCall;
using xp::detail::FftKind;
using xp::detail::LinalgCall;
using xp::detail::LinalgOp;
using xp::detail::View;
using i64 = std::int64_t;

const xp_test::ProcessCache g_process_cache;
const Device gpu1 = Device::cuda(1);

// An array of `shape` on a device, through the backend's allocator, with its C-order view.
struct DeviceArray {
  Allocation mem;
  std::vector<i64> shape, strides;
  DType dtype;
  DeviceArray(Backend& be, std::vector<i64> s, DType t) : shape(std::move(s)), dtype(t) {
    strides.resize(shape.size());
    i64 n = static_cast<i64>(xp::itemsize(t));
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      strides[static_cast<std::size_t>(d)] = n;
      n *= shape[static_cast<std::size_t>(d)];
    }
    mem = be.allocate(static_cast<std::size_t>(n));
    std::memset(mem.data, 0, static_cast<std::size_t>(n));  // hollow memory is host memory
  }
  View view() const { return View{mem.data, dtype, static_cast<int>(shape.size()), shape.data(), strides.data()}; }
};

// The fakes as xp loaded them (dlopen of the same path gives the same copy).
template <class F>
F fake_fn(const char* path, const char* name) {
  void* lib = ::dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  return lib != nullptr ? reinterpret_cast<F>(::dlsym(lib, name)) : nullptr;
}
long calls(const char* routine) {
  return fake_fn<long (*)(const char*)>(XP_FAKE_CUSOLVER_PATH, "xp_fake_cusolver_calls")(routine);
}
long long arg(const char* routine, int i) {
  return fake_fn<long long (*)(const char*, int)>(XP_FAKE_CUSOLVER_PATH, "xp_fake_cusolver_arg")(routine, i);
}
char dtype_letter(const char* routine) {
  return static_cast<char>(fake_fn<int (*)(const char*)>(XP_FAKE_CUSOLVER_PATH, "xp_fake_cusolver_dtype")(routine));
}
long fft_count(const char* what) {
  return fake_fn<long (*)(const char*)>(XP_FAKE_CUFFT_PATH, "xp_fake_cufft_count")(what);
}
long long fft_plan(int i) {
  return fake_fn<long long (*)(int)>(XP_FAKE_CUFFT_PATH, "xp_fake_cufft_last_plan")(i);
}

std::vector<std::int64_t> run_linalg(const LinalgCall& call, const std::vector<View>& in, const std::vector<View>& out,
                                     i64 batch) {
  std::vector<std::int64_t> info(static_cast<std::size_t>(batch), -1);
  const bool done = xp::detail::backend_for(gpu1).linalg(call, in, out, info);
  EXPECT_TRUE(done) << "cuSOLVER (the fake) is loaded: the hook computes";
  return info;
}

// ---- the searches (in this process: no library is kept)

xp::detail::cuda::LibrarySearchInputs explicit_inputs(const std::string& path) {
  xp::detail::cuda::LibrarySearchInputs in;
  in.explicit_path = path;
  in.system_locations = false;
  return in;
}

TEST(CudaSolverSearch, AMissingExplicitPathIsTheReasonAndNothingElseIsTried) {
  namespace cs = xp::detail::cusolver;
  const auto r = xp::detail::cuda::search_library(cs::spec(), explicit_inputs("/nonexistent/libcusolver.so.12"));
  EXPECT_EQ(r.chosen, -1);
  EXPECT_TRUE(r.found.empty());
  EXPECT_EQ(r.reason, "XP_CUSOLVER points at /nonexistent/libcusolver.so.12, which does not exist");
  ASSERT_EQ(r.tried.size(), 1u);
  const auto f = xp::detail::cuda::search_library(xp::detail::cufft::spec(), explicit_inputs("/nonexistent/x.so"));
  EXPECT_EQ(f.reason, "XP_CUFFT points at /nonexistent/x.so, which does not exist");
}

TEST(CudaSolverSearch, ALibraryWithoutTheVersionEntryIsNotTaken) {
  // The fake cuFFT has no cusolverGetVersion, the fake cuSOLVER no cufftGetVersion.
  const auto r = xp::detail::cuda::search_library(xp::detail::cusolver::spec(), explicit_inputs(XP_FAKE_CUFFT_PATH));
  EXPECT_EQ(r.chosen, -1);
  EXPECT_NE(r.reason.find("is not a cuSOLVER library (no cusolverGetVersion)"), std::string::npos) << r.reason;
  const auto f = xp::detail::cuda::search_library(xp::detail::cufft::spec(), explicit_inputs(XP_FAKE_CUSOLVER_PATH));
  EXPECT_NE(f.reason.find("is not a cuFFT library (no cufftGetVersion)"), std::string::npos) << f.reason;
}

TEST(CudaSolverSearch, TheFakesAreFoundWithTheirVersionsAndRefusedByAnOlderDriver) {
  auto in = explicit_inputs(XP_FAKE_CUSOLVER_PATH);
  const auto r = xp::detail::cuda::search_library(xp::detail::cusolver::spec(), in);
  ASSERT_EQ(r.chosen, 0) << r.reason;
  EXPECT_EQ(r.found[0].version, "12.0.4");
  EXPECT_EQ(r.found[0].version_number, 12000);
  EXPECT_EQ(r.found[0].found_by, "XP_CUSOLVER");
  EXPECT_EQ(r.found[0].name, "libcusolver");
  EXPECT_TRUE(r.found[0].chosen);
  EXPECT_TRUE(r.lib.ok());
  // cuSOLVER 12 comes with CUDA 13: a CUDA 12.8 driver cannot run it.
  in.driver_version = 12080;
  const auto old = xp::detail::cuda::search_library(xp::detail::cusolver::spec(), in);
  EXPECT_EQ(old.chosen, -1);
  EXPECT_NE(old.reason.find("comes with CUDA 13 and needs its driver; the driver is CUDA 12.8"), std::string::npos)
      << old.reason;
  auto fin = explicit_inputs(XP_FAKE_CUFFT_PATH);
  fin.driver_version = 13000;
  const auto f = xp::detail::cuda::search_library(xp::detail::cufft::spec(), fin);
  ASSERT_EQ(f.chosen, 0) << f.reason;
  EXPECT_EQ(f.found[0].version, "12.0.0");
}

// The toolkit's own libraries, where installed: found in /usr/local/cuda/lib64, and every entry
// point xp declares resolves (the names and the dtype letters are right).
TEST(CudaSolverSearch, TheToolkitsLibrariesHaveEveryEntryPoint) {
  for (const char* file : {"/usr/local/cuda/lib64/libcusolver.so.12", "/usr/local/cuda/lib64/libcufft.so.12"}) {
    if (!xp::detail::file_exists(file)) GTEST_SKIP() << "skipped: no " << file;
  }
  xp_test::ProcessResult r = xp_test::run_child_case("CudaSolverSearch.DISABLED_ToolkitLibraries", {},
                                                     {"XP_CUSOLVER", "XP_CUFFT", "CUDA_PATH", "CUDA_HOME"});
  EXPECT_CHILD_CASE_PASSED(r);
}
TEST(CudaSolverSearch, DISABLED_ToolkitLibraries) {
  const auto& s = xp::detail::cusolver::library();
  ASSERT_NE(s.api, nullptr) << s.search.reason;
  EXPECT_EQ(s.search.found[static_cast<std::size_t>(s.search.chosen)].version_number / 1000, 12);
  for (int i = 0; i < 4; ++i) EXPECT_NE(s.api->syevjBatched[i], nullptr) << "the optional batched Jacobi eigh";
  const auto& f = xp::detail::cufft::library();
  ASSERT_NE(f.api, nullptr) << f.search.reason;
  // Both loaded, beside the cuBLAS they brought: no false CUDA major mismatch (cuSOLVER 12 and
  // cuFFT 12 are CUDA 13's, as libcublas.so.13).
  const xp::SystemReport rep = xp::system_report();
  for (const auto& p : rep.problems) EXPECT_NE(p.id, "cuda_major_mismatch") << p.message;
  bool listed = false;
  for (const auto& l : rep.loaded_cuda)
    if (l.name == "libcufft") listed = l.major == 13;
  EXPECT_TRUE(listed);
}

// `xp doctor` names the cuSOLVER and cuFFT found (path and version) or why none, and an unusable
// XP_CUSOLVER / XP_CUFFT is an error (exit 1).
TEST(CudaSolverSearch, DoctorReportsBothLibraries) {
  const std::string missing = "/nonexistent/libcufft.so.12";
  const auto r = xp_test::run_process({XP_CLI_PATH, "doctor", "--json"},
                                      {{"XP_CUSOLVER", XP_FAKE_CUSOLVER_PATH}, {"XP_CUFFT", missing}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& cs = j.at("linear_algebra").at("cusolver");
  ASSERT_EQ(cs.at("found").size(), 1u) << cs.dump();
  EXPECT_EQ(cs.at("found")[0].at("version"), "12.0.4");
  EXPECT_EQ(cs.at("found")[0].at("path"), XP_FAKE_CUSOLVER_PATH);
  EXPECT_EQ(cs.at("found")[0].at("chosen"), true);
  EXPECT_TRUE(cs.at("unavailable").is_null());
  const auto& cf = j.at("fft").at("cufft");
  EXPECT_EQ(cf.at("unavailable"), "XP_CUFFT points at " + missing + ", which does not exist");
  bool problem = false;
  for (const auto& p : j.at("problems")) problem = problem || p.at("id") == "cufft_unusable";
  EXPECT_TRUE(problem) << j.at("problems").dump();
  const auto text = xp_test::run_process({XP_CLI_PATH, "doctor"},
                                         {{"XP_CUSOLVER", XP_FAKE_CUSOLVER_PATH}, {"XP_CUFFT", XP_FAKE_CUFFT_PATH}});
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find(std::string("cuSOLVER: ") + XP_FAKE_CUSOLVER_PATH +
                          "  (version 12.0.4)  [found by "
                          "XP_CUSOLVER]  <- used"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(std::string("cuFFT:    ") + XP_FAKE_CUFFT_PATH + "  (version 12.0.0)"), std::string::npos)
      << text.out;
}

// A chosen library that lacks an entry point xp reads is reported so (the missing names, on the
// file's line of the report) and not used. The fake cuFFT has cufftGetVersion; the table asked of it
// here names one entry point it lacks.
TEST(CudaSolverSearch, ALibraryLackingAnEntryPointIsNotUsed) {
  EXPECT_CHILD_CASE_PASSED(
      xp_test::run_child_case("CudaSolverSearch.DISABLED_LacksAnEntryPoint", {{"XP_CUFFT", XP_FAKE_CUFFT_PATH}}));
}
TEST(CudaSolverSearch, DISABLED_LacksAnEntryPoint) {
  namespace cuda = xp::detail::cuda;
  int table = 0;
  const auto l =
      cuda::load_library(xp::detail::cufft::spec(), table, [](const xp::detail::DynLib& lib, std::string& missing) {
        if (lib.symbol("cufftGetVersion") == nullptr) missing += "cufftGetVersion";
        if (lib.symbol("cufftNoSuchEntry") == nullptr)
          missing += missing.empty() ? "cufftNoSuchEntry" : ", cufftNoSuchEntry";
        return 7;
      });
  EXPECT_EQ(l.api, nullptr);
  EXPECT_EQ(table, 7) << "read before it was refused";
  ASSERT_EQ(l.search.found.size(), 1u);
  EXPECT_FALSE(l.search.found[0].chosen);
  EXPECT_EQ(l.search.found[0].error, "lacks cufftNoSuchEntry");
  EXPECT_EQ(l.search.reason, l.search.found[0].path + " lacks cufftNoSuchEntry");
  // And one that has them all is used.
  const auto ok =
      cuda::load_library(xp::detail::cufft::spec(), table, [](const xp::detail::DynLib&, std::string&) { return 8; });
  EXPECT_EQ(ok.api, &table);
  EXPECT_EQ(*ok.api, 8);
  EXPECT_TRUE(ok.search.reason.empty()) << ok.search.reason;
}

// ---- the hooks on a hollow device

// Without the library, both hooks do nothing and say so: the array layer computes on the CPU.
TEST(CudaSolverFake, WithoutTheLibrariesTheHooksReturnFalse) {
  EXPECT_CHILD_CASE_PASSED(
      xp_test::run_child_case("CudaSolverFake.DISABLED_NoLibraries",
                              {{"XP_CUSOLVER", "/nonexistent/a.so"}, {"XP_CUFFT", "/nonexistent/b.so"}}));
}
TEST(CudaSolverFake, DISABLED_NoLibraries) {
  Backend& be = xp::detail::backend_for(gpu1);
  DeviceArray a(be, {4, 4}, DType::float32), l(be, {4, 4}, DType::float32);
  std::vector<std::int64_t> info(1, 7);
  const std::vector<View> in{a.view()}, out{l.view()};
  EXPECT_FALSE(be.linalg(LinalgCall{}, in, out, info));
  EXPECT_EQ(info[0], 7) << "untouched";
  DeviceArray x(be, {2, 8}, DType::complex64), y(be, {2, 8}, DType::complex64);
  FftCall f;
  f.n = 8;
  EXPECT_FALSE(be.fft(f, x.view(), y.view()));
  EXPECT_FALSE(xp::blas_report().cusolver.unavailable.empty());
}

TEST(CudaSolverFake, CallsAreTranslatedToColumnMajor) {
  XP_REQUIRE_NVRTC();
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case(
      "CudaSolverFake.DISABLED_Calls", {{"XP_CUSOLVER", XP_FAKE_CUSOLVER_PATH}, {"XP_CUBLAS", XP_FAKE_CUBLAS_PATH}}));
}
TEST(CudaSolverFake, DISABLED_Calls) {
  Backend& be = xp::detail::backend_for(gpu1);
  void* stream = xp::Stream::default_for(gpu1).handle();
  // solve: a (5, 5) float32, two right-hand sides: getrf of a's buffer (a^T column-major) and
  // getrs with CUBLAS_OP_T (1), lda = ldb = 5.
  {
    DeviceArray a(be, {5, 5}, DType::float32), b(be, {5, 2}, DType::float32), x(be, {5, 2}, DType::float32);
    LinalgCall c;
    c.op = LinalgOp::solve;
    const auto info = run_linalg(c, {a.view(), b.view()}, {x.view()}, 1);
    EXPECT_EQ(info, (std::vector<std::int64_t>{0}));
    EXPECT_EQ(calls("getrf"), 1);
    EXPECT_EQ(calls("getrs"), 1);
    EXPECT_EQ(dtype_letter("getrs"), 'S');
    EXPECT_EQ(arg("getrf", 0), 5);
    EXPECT_EQ(arg("getrf", 2), 5);
    EXPECT_EQ(arg("getrs", 0), 1) << "CUBLAS_OP_T: the transposed problem";
    EXPECT_EQ(arg("getrs", 2), 2) << "nrhs";
    EXPECT_EQ(arg("getrs", 3), 5);
    EXPECT_EQ(arg("getrs", 4), 5);
    EXPECT_NE(fake_fn<const void* (*)(const char*)>(XP_FAKE_CUSOLVER_PATH, "xp_fake_cusolver_work")("getrf"), nullptr);
  }
  // A batch of small systems goes to cuBLAS's batched LU, as CuPy's: one getrfBatched and one
  // getrsBatched (CUBLAS_OP_T) for 3 matrices.
  {
    DeviceArray a(be, {3, 5, 5}, DType::float32), b(be, {3, 5, 1}, DType::float32), x(be, {3, 5, 1}, DType::float32);
    LinalgCall c;
    c.op = LinalgOp::solve;
    (void)run_linalg(c, {a.view(), b.view()}, {x.view()}, 3);
    const auto batched = fake_fn<long long (*)(int)>(XP_FAKE_CUBLAS_PATH, "xp_fake_cublas_batched");
    ASSERT_NE(batched, nullptr);
    EXPECT_EQ(
        (std::vector<long long>{batched(0), batched(1), batched(2), batched(3), batched(4), batched(5), batched(6)}),
        (std::vector<long long>{1, 1, 5, 3, 1, 1, 5}));
    EXPECT_EQ(calls("getrf"), 1) << "not cuSOLVER's";
  }
  EXPECT_EQ(fake_fn<void* (*)()>(XP_FAKE_CUSOLVER_PATH, "xp_fake_cusolver_stream")(), stream)
      << "the handle runs on xp's stream of the device";
  EXPECT_EQ(fake_fn<long (*)()>(XP_FAKE_CUSOLVER_PATH, "xp_fake_cusolver_creates")(), 1);
  // cholesky: the lower factor of a batch of 4 is potrfBatched with the upper triangle of the
  // buffer read column-major (CUBLAS_FILL_MODE_UPPER, 1); one matrix is potrf, upper asked: LOWER.
  {
    DeviceArray a(be, {4, 8, 8}, DType::complex128), l(be, {4, 8, 8}, DType::complex128);
    LinalgCall c;
    (void)run_linalg(c, {a.view()}, {l.view()}, 4);
    EXPECT_EQ(calls("potrfBatched"), 1);
    EXPECT_EQ(dtype_letter("potrfBatched"), 'Z');
    EXPECT_EQ(arg("potrfBatched", 0), 1);
    EXPECT_EQ(arg("potrfBatched", 1), 8);
    EXPECT_EQ(arg("potrfBatched", 3), 4) << "batch";
    DeviceArray one(be, {6, 6}, DType::float64), u(be, {6, 6}, DType::float64);
    c.upper = true;
    (void)run_linalg(c, {one.view()}, {u.view()}, 1);
    EXPECT_EQ(calls("potrf"), 1);
    EXPECT_EQ(arg("potrf", 0), 0);
    EXPECT_EQ(arg("potrf", 3), 1000) << "lwork from potrf_bufferSize";
  }
  // qr of (2, 6, 4) complex64: geqrf m = 6, n = 4, lda = 6; ungqr of k = 4 columns, or 6 in an
  // m x m copy for "complete".
  {
    DeviceArray a(be, {2, 6, 4}, DType::complex64), q(be, {2, 6, 4}, DType::complex64),
        r(be, {2, 4, 4}, DType::complex64);
    LinalgCall c;
    c.op = LinalgOp::qr;
    (void)run_linalg(c, {a.view()}, {q.view(), r.view()}, 2);
    EXPECT_EQ(calls("geqrf"), 2);
    EXPECT_EQ(dtype_letter("orgqr"), 'C');
    EXPECT_EQ((std::vector<long long>{arg("geqrf", 0), arg("geqrf", 1), arg("geqrf", 2)}),
              (std::vector<long long>{6, 4, 6}));
    EXPECT_EQ((std::vector<long long>{arg("orgqr", 0), arg("orgqr", 1), arg("orgqr", 2), arg("orgqr", 3)}),
              (std::vector<long long>{6, 4, 4, 6}));
    DeviceArray qc(be, {2, 6, 6}, DType::complex64), rc(be, {2, 6, 4}, DType::complex64);
    c.complete = true;
    (void)run_linalg(c, {a.view()}, {qc.view(), rc.view()}, 2);
    EXPECT_EQ(arg("orgqr", 1), 6);
  }
  // eigh: syevd (float64) / heevd with the lower triangle (0), vectors (1) or not (0).
  {
    DeviceArray a(be, {5, 5}, DType::float64), w(be, {5}, DType::float64), v(be, {5, 5}, DType::float64);
    LinalgCall c;
    c.op = LinalgOp::eigh;
    (void)run_linalg(c, {a.view()}, {w.view(), v.view()}, 1);
    EXPECT_EQ((std::vector<long long>{arg("syevd", 0), arg("syevd", 1), arg("syevd", 2), arg("syevd", 3)}),
              (std::vector<long long>{1, 0, 5, 5}));
    c.vectors = false;
    (void)run_linalg(c, {a.view()}, {w.view()}, 1);
    EXPECT_EQ(arg("syevd", 0), 0);
    // A batch of small matrices: one heevjBatched over the batch, as CuPy's.
    DeviceArray ab(be, {6, 4, 4}, DType::complex64), wb(be, {6, 4}, DType::float32),
        vb(be, {6, 4, 4}, DType::complex64);
    c.vectors = true;
    const long syevd_calls = calls("syevd");
    (void)run_linalg(c, {ab.view()}, {wb.view(), vb.view()}, 6);
    EXPECT_EQ(calls("syevd"), syevd_calls);
    EXPECT_EQ(calls("syevjBatched"), 1);
    EXPECT_EQ(dtype_letter("syevjBatched"), 'C');
    EXPECT_EQ((std::vector<long long>{arg("syevjBatched", 0), arg("syevjBatched", 1), arg("syevjBatched", 2),
                                      arg("syevjBatched", 3), arg("syevjBatched", 5)}),
              (std::vector<long long>{1, 0, 4, 4, 6}));
  }
  // svd: gesvd needs m >= n. A (3, 5) is factored as its buffer, a^T (5 x 3): m = 5, n = 3,
  // lda = ldu = 5, ldvt = 3, jobs 'S'; a (5, 3) is moved to column-major: the same numbers; full
  // matrices 'A'; values only 'N'.
  {
    DeviceArray a(be, {3, 5}, DType::float32), s(be, {3}, DType::float32), u(be, {3, 3}, DType::float32),
        vh(be, {3, 5}, DType::float32);
    LinalgCall c;
    c.op = LinalgOp::svd;
    (void)run_linalg(c, {a.view()}, {s.view(), u.view(), vh.view()}, 1);
    EXPECT_EQ((std::vector<long long>{arg("gesvd", 0), arg("gesvd", 1), arg("gesvd", 2), arg("gesvd", 3),
                                      arg("gesvd", 4), arg("gesvd", 5), arg("gesvd", 6)}),
              (std::vector<long long>{'S', 'S', 5, 3, 5, 5, 3}));
    DeviceArray t(be, {5, 3}, DType::float32), ut(be, {5, 5}, DType::float32), vt(be, {3, 3}, DType::float32);
    c.complete = true;
    (void)run_linalg(c, {t.view()}, {s.view(), ut.view(), vt.view()}, 1);
    EXPECT_EQ(
        (std::vector<long long>{arg("gesvd", 0), arg("gesvd", 2), arg("gesvd", 3), arg("gesvd", 5), arg("gesvd", 6)}),
        (std::vector<long long>{'A', 5, 3, 5, 3}));
    c.vectors = false;
    (void)run_linalg(c, {t.view()}, {s.view()}, 1);
    EXPECT_EQ(arg("gesvd", 0), 'N');
  }
  // lu: getrf of a itself (moved to column-major), square.
  {
    DeviceArray a(be, {7, 7}, DType::float64), lu(be, {7, 7}, DType::float64), p(be, {7}, DType::int64);
    LinalgCall c;
    c.op = LinalgOp::lu;
    (void)run_linalg(c, {a.view()}, {lu.view(), p.view()}, 1);
    EXPECT_EQ(calls("getrf"), 2);
    EXPECT_EQ(dtype_letter("getrf"), 'D');
  }
  EXPECT_EQ(fake_fn<long (*)()>(XP_FAKE_CUSOLVER_PATH, "xp_fake_cusolver_creates")(), 1) << "one handle per device";
}

// The info words are read back after the calls: a positive one is reported for its batch entry, a
// negative one (an argument refused) is an Error.
TEST(CudaSolverFake, InfoCodesAreReadAndReported) {
  XP_REQUIRE_NVRTC();
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case(
      "CudaSolverFake.DISABLED_Info", {{"XP_CUSOLVER", XP_FAKE_CUSOLVER_PATH}, {"XP_FAKE_CUSOLVER_INFO", "2:3"}}));
  EXPECT_CHILD_CASE_PASSED(
      xp_test::run_child_case("CudaSolverFake.DISABLED_NegativeInfo",
                              {{"XP_CUSOLVER", XP_FAKE_CUSOLVER_PATH}, {"XP_FAKE_CUSOLVER_INFO", "1:-4"}}));
}
TEST(CudaSolverFake, DISABLED_Info) {
  Backend& be = xp::detail::backend_for(gpu1);
  DeviceArray a(be, {4, 3, 3}, DType::float32), l(be, {4, 3, 3}, DType::float32);
  const auto info = run_linalg(LinalgCall{}, {a.view()}, {l.view()}, 4);  // potrfBatched: one word per matrix
  EXPECT_EQ(info, (std::vector<std::int64_t>{0, 0, 3, 0}));
}
TEST(CudaSolverFake, DISABLED_NegativeInfo) {
  Backend& be = xp::detail::backend_for(gpu1);
  DeviceArray a(be, {2, 3, 3}, DType::float64), w(be, {2, 3}, DType::float64), v(be, {2, 3, 3}, DType::float64);
  LinalgCall c;
  c.op = LinalgOp::eigh;
  std::vector<std::int64_t> info(2);
  const std::vector<View> in{a.view()}, out{w.view(), v.view()};
  try {
    be.linalg(c, in, out, info);
    ADD_FAILURE() << "no error";
  } catch (const xp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("refused its argument 4 (info -4) for batch entry 1"), std::string::npos)
        << e.what();
  }
}

// The work area comes from xp's allocator: the peak in use grows by at least lwork (1000 elements).
TEST(CudaSolverFake, WorkAreasComeFromTheAllocator) {
  XP_REQUIRE_NVRTC();
  EXPECT_CHILD_CASE_PASSED(
      xp_test::run_child_case("CudaSolverFake.DISABLED_Work", {{"XP_CUSOLVER", XP_FAKE_CUSOLVER_PATH}}));
}
TEST(CudaSolverFake, DISABLED_Work) {
  Backend& be = xp::detail::backend_for(gpu1);
  DeviceArray a(be, {4, 4}, DType::float64), l(be, {4, 4}, DType::float64);
  (void)run_linalg(LinalgCall{}, {a.view()}, {l.view()}, 1);
  const xp::MemoryStats before = xp::memory_stats(gpu1);
  xp::reset_peak(gpu1);
  (void)run_linalg(LinalgCall{}, {a.view()}, {l.view()}, 1);
  const xp::MemoryStats after = xp::memory_stats(gpu1);
  EXPECT_GE(after.peak_bytes_in_use, before.bytes_in_use + 1000 * 8) << "potrf's work area, 1000 float64";
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use) << "and given back";
}

// ---- cuFFT

TEST(CudaFftFake, PlansAreMadeOncePerShapeAndBounded) {
  XP_REQUIRE_NVRTC();
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("CudaFftFake.DISABLED_Plans", {{"XP_CUFFT", XP_FAKE_CUFFT_PATH}}));
}
TEST(CudaFftFake, DISABLED_Plans) {
  namespace cf = xp::detail::cufft;
  Backend& be = xp::detail::backend_for(gpu1);
  DeviceArray x(be, {4, 16}, DType::complex64), y(be, {4, 16}, DType::complex64);
  FftCall c;
  c.n = 16;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(be.fft(c, x.view(), y.view()));
  EXPECT_EQ(fft_count("create"), 1) << "one plan for the repeated shape";
  EXPECT_EQ(cf::plans_made(), 1u);
  EXPECT_EQ(fft_count("exec"), 3);
  EXPECT_EQ(fft_count("auto_allocation_on"), 0);
  EXPECT_EQ((std::vector<long long>{fft_plan(0), fft_plan(1), fft_plan(2), fft_plan(3), fft_plan(4)}),
            (std::vector<long long>{16, 16, 16, cf::CUFFT_C2C, 4}));
  EXPECT_EQ(fake_fn<long long (*)(int)>(XP_FAKE_CUFFT_PATH, "xp_fake_cufft_last_exec")(0), cf::CUFFT_FORWARD);
  c.inverse = true;
  ASSERT_TRUE(be.fft(c, x.view(), y.view()));
  EXPECT_EQ(fake_fn<long long (*)(int)>(XP_FAKE_CUFFT_PATH, "xp_fake_cufft_last_exec")(0), cf::CUFFT_INVERSE);
  EXPECT_EQ(fft_count("create"), 1) << "the direction is the exec's, not the plan's";
  EXPECT_EQ(fake_fn<void* (*)()>(XP_FAKE_CUFFT_PATH, "xp_fake_cufft_stream")(), xp::Stream::default_for(gpu1).handle());
  EXPECT_NE(fake_fn<void* (*)()>(XP_FAKE_CUFFT_PATH, "xp_fake_cufft_work_area")(), nullptr);
  // r2c of float64 (3, 10): D2Z, the complex side 6; c2r back reads a copy of its input.
  DeviceArray r(be, {3, 10}, DType::float64), z(be, {3, 6}, DType::complex128);
  FftCall rc;
  rc.kind = FftKind::r2c;
  rc.n = 10;
  ASSERT_TRUE(be.fft(rc, r.view(), z.view()));
  EXPECT_EQ((std::vector<long long>{fft_plan(0), fft_plan(1), fft_plan(2), fft_plan(3), fft_plan(4)}),
            (std::vector<long long>{10, 10, 6, cf::CUFFT_D2Z, 3}));
  rc.kind = FftKind::c2r;
  rc.scale = 0.1;
  ASSERT_TRUE(be.fft(rc, z.view(), r.view()));
  EXPECT_EQ((std::vector<long long>{fft_plan(0), fft_plan(1), fft_plan(2), fft_plan(3), fft_plan(4)}),
            (std::vector<long long>{10, 6, 10, cf::CUFFT_Z2D, 3}));
  EXPECT_NE(fake_fn<void* (*)()>(XP_FAKE_CUFFT_PATH, "xp_fake_cufft_exec_in")(), static_cast<void*>(z.mem.data))
      << "cuFFT's c2r overwrites its input: it reads a copy";
  EXPECT_EQ(fake_fn<void* (*)()>(XP_FAKE_CUFFT_PATH, "xp_fake_cufft_exec_out")(), static_cast<void*>(r.mem.data));
  // The cache keeps at most kPlanCacheSize plans, destroying the least recently used.
  const long made = fft_count("create");
  for (i64 n = 1; n <= static_cast<i64>(cf::kPlanCacheSize) + 4; ++n) {
    DeviceArray a(be, {2, n}, DType::complex64), b(be, {2, n}, DType::complex64);
    FftCall k;
    k.n = n;
    ASSERT_TRUE(be.fft(k, a.view(), b.view()));
  }
  EXPECT_EQ(cf::cached_plans(), cf::kPlanCacheSize);
  EXPECT_EQ(fft_count("create") - fft_count("destroy"), static_cast<long>(cf::kPlanCacheSize));
  EXPECT_GT(fft_count("create"), made);
}

// The work area (1 MiB for the fake's plans) is taken from xp's allocator for the transform.
TEST(CudaFftFake, WorkAreasComeFromTheAllocator) {
  XP_REQUIRE_NVRTC();
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("CudaFftFake.DISABLED_Work", {{"XP_CUFFT", XP_FAKE_CUFFT_PATH}}));
}
TEST(CudaFftFake, DISABLED_Work) {
  Backend& be = xp::detail::backend_for(gpu1);
  DeviceArray x(be, {8}, DType::complex64), y(be, {8}, DType::complex64);
  FftCall c;
  c.n = 8;
  const xp::MemoryStats before = xp::memory_stats(gpu1);
  xp::reset_peak(gpu1);
  ASSERT_TRUE(be.fft(c, x.view(), y.view()));
  const xp::MemoryStats after = xp::memory_stats(gpu1);
  EXPECT_GE(after.peak_bytes_in_use, before.bytes_in_use + (1u << 20));
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
}

}  // namespace

// The fused copies around cuSOLVER are programs of the backend contract: run on the CPU backend
// here, they must keep exactly the triangle asked for, transpose between storage orders, and move
// complex elements whole (the GPU runs the same programs in CudaSolverGpu.*).
TEST(CudaMatrixCopy, TrianglesAndStorageOrdersOnTheCpuBackend) {
  using xp::detail::cuda::Triangle;
  xp::detail::Backend& cpu = xp::detail::cpu_backend();
  const std::int64_t batch = 2, rows = 3, cols = 4;
  for (const xp::DType t : {xp::DType::float64, xp::DType::complex64}) {
    const std::size_t e = xp::itemsize(t), n = static_cast<std::size_t>(batch * rows * cols);
    std::vector<std::byte> src(n * e), dst(n * e);
    for (std::size_t i = 0; i < n * e; ++i) src[i] = static_cast<std::byte>(i % 251 + 1);
    for (const Triangle keep : {Triangle::all, Triangle::upper, Triangle::lower}) {
      std::fill(dst.begin(), dst.end(), std::byte{0xEE});
      // Row-major source to column-major destination (leading dimension rows).
      xp::detail::cuda::copy_matrices(cpu, t, batch, rows, cols, xp::detail::cuda::row_major(src.data(), rows, cols),
                                      xp::detail::cuda::column_major(dst.data(), rows, cols), keep);
      for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j) {
            const bool kept = keep == Triangle::all || (keep == Triangle::upper ? i <= j : i >= j);
            const std::byte* from = src.data() + static_cast<std::size_t>((b * rows + i) * cols + j) * e;
            const std::byte* to = dst.data() + static_cast<std::size_t>(b * rows * cols + j * rows + i) * e;
            std::vector<std::byte> want(from, from + e);
            if (!kept) std::fill(want.begin(), want.end(), std::byte{0});
            EXPECT_EQ(std::memcmp(to, want.data(), e), 0)
                << xp::name(t) << " keep " << static_cast<int>(keep) << " at " << b << ", " << i << ", " << j;
          }
    }
  }
}
