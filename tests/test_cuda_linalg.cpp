// The GPU matmul's planning and the memory accounting, white-box and without a GPU:
// - plan_gemm's cuBLAS calls, run here by a host interpreter of cublasGemmStridedBatchedEx's
//   column-major semantics, give the answer of a plain loop over the views, for row-major,
//   transposed, padded, broadcast-batched and column-major-output layouts; layouts cuBLAS cannot
//   read are sent to packing; sizes past int are refused;
// - the exact integer kernel's source compiles with NVRTC for every integer dtype and bool;
// - the cuBLAS search: a missing XP_CUBLAS, a library that is not cuBLAS, a cuBLAS newer than the
//   driver, and the toolkit's own when there is one;
// - XP_GPU_MEMORY_LIMIT's arithmetic, and the statistics of the CPU device through xp/memory.hpp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "backend/cuda/cublas.hpp"
#include "backend/cuda/ew_source.hpp"
#include "backend/cuda/linalg.hpp"
#include "backend/cuda/staging.hpp"
#include "memory/stats.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

namespace cg = xp::detail::cuda;
namespace cb = xp::detail::cublas;
using xp::DType;
using xp::detail::View;
using i64 = std::int64_t;

const xp_test::ProcessCache g_process_cache;  // this process's kernel cache

// A float64 view over its own buffer: `shape`, element strides, and the element the view starts at.
struct HostView {
  std::vector<double> buf;
  std::vector<i64> shape, strides;  // strides in bytes once made
  std::size_t start = 0;
  View view() {
    return View{reinterpret_cast<std::byte*>(buf.data() + start), DType::float64, static_cast<int>(shape.size()),
                shape.data(), strides.data()};
  }
};

// `shape` stored in the order `order` (a permutation: order[0] the slowest dimension), with
// `pad` extra elements after each step of the fastest stored dimension's neighbour; dimensions in
// `broadcast` get stride 0. Filled with small integers (exact sums).
HostView make(std::vector<i64> shape, std::vector<int> order, i64 pad, std::vector<int> broadcast, int seed) {
  HostView h;
  h.shape = shape;
  const int nd = static_cast<int>(shape.size());
  std::vector<i64> el(static_cast<std::size_t>(nd), 0);
  i64 step = 1;
  for (int i = nd - 1; i >= 0; --i) {
    const int d = order[static_cast<std::size_t>(i)];
    bool bc = false;
    for (int x : broadcast) bc = bc || x == d;
    if (bc) continue;
    el[static_cast<std::size_t>(d)] = step;
    step *= shape[static_cast<std::size_t>(d)] + (i == nd - 1 ? pad : 0);
  }
  h.buf.assign(static_cast<std::size_t>(step + 8), -999.0);
  for (std::size_t i = 0; i < h.buf.size(); ++i)
    h.buf[i] = static_cast<double>((i * 7 + static_cast<std::size_t>(seed)) % 11) - 5;
  for (i64 s : el) h.strides.push_back(s * 8);
  return h;
}

double at(const View& v, const std::vector<i64>& idx) {
  const std::byte* p = v.data;
  for (int d = 0; d < v.ndim; ++d) p += idx[static_cast<std::size_t>(d)] * v.strides[d];
  double x;
  std::memcpy(&x, p, 8);
  return x;
}

// out = a @ b by a plain loop over the views' indices.
std::vector<double> reference(const View& a, const View& b) {
  const int nd = a.ndim;
  const i64 m = a.shape[nd - 2], k = a.shape[nd - 1], n = b.shape[nd - 1];
  i64 batches = 1;
  for (int d = 0; d < nd - 2; ++d) batches *= a.shape[d];
  std::vector<double> r;
  for (i64 bi = 0; bi < batches; ++bi) {
    std::vector<i64> idx(static_cast<std::size_t>(nd));
    i64 rest = bi;
    for (int d = nd - 3; d >= 0; --d) {
      idx[static_cast<std::size_t>(d)] = rest % a.shape[d];
      rest /= a.shape[d];
    }
    for (i64 i = 0; i < m; ++i)
      for (i64 j = 0; j < n; ++j) {
        double s = 0;
        for (i64 p = 0; p < k; ++p) {
          std::vector<i64> ia = idx, ib = idx;
          ia[nd - 2] = i, ia[nd - 1] = p, ib[nd - 2] = p, ib[nd - 1] = j;
          s += at(a, ia) * at(b, ib);
        }
        r.push_back(s);
      }
  }
  return r;
}

// What cuBLAS does with the plan's calls (column-major, op N or T), on host memory.
void interpret(const cg::GemmCall& c, const View& a, const View& b, const View& out) {
  const View& first = c.swapped ? b : a;
  const View& second = c.swapped ? a : b;
  const int fi = c.swapped ? 1 : 0, si = c.swapped ? 0 : 1;
  i64 loops = 1;
  for (i64 s : c.loop_shape) loops *= s;
  auto elem = [](const std::byte* base, i64 i) {
    double x;
    std::memcpy(&x, base + i * 8, 8);
    return x;
  };
  for (i64 l = 0; l < loops; ++l) {
    i64 off[3] = {0, 0, 0}, rest = l;
    for (int d = static_cast<int>(c.loop_shape.size()) - 1; d >= 0; --d) {
      const i64 q = rest % c.loop_shape[static_cast<std::size_t>(d)];
      rest /= c.loop_shape[static_cast<std::size_t>(d)];
      for (int v = 0; v < 3; ++v) off[v] += q * c.loop_strides[v][static_cast<std::size_t>(d)];
    }
    for (i64 q = 0; q < c.count; ++q) {
      const std::byte* F = first.data + off[fi] + q * c.stride_first * 8;
      const std::byte* S = second.data + off[si] + q * c.stride_second * 8;
      std::byte* C = out.data + off[2] + q * c.stride_out * 8;
      for (i64 i = 0; i < c.m; ++i)
        for (i64 j = 0; j < c.n; ++j) {
          double s = 0;
          for (i64 p = 0; p < c.k; ++p) {
            const double f =
                c.trans_first == cb::CUBLAS_OP_N ? elem(F, i + p * c.ld_first) : elem(F, p + i * c.ld_first);
            const double g =
                c.trans_second == cb::CUBLAS_OP_N ? elem(S, p + j * c.ld_second) : elem(S, j + p * c.ld_second);
            s += f * g;
          }
          std::memcpy(C + (i + j * c.ld_out) * 8, &s, 8);
        }
    }
  }
}

std::vector<double> gather(const View& v) {
  std::vector<double> r;
  const int nd = v.ndim;
  std::vector<i64> idx(static_cast<std::size_t>(nd), 0);
  const i64 n = v.size();
  for (i64 e = 0; e < n; ++e) {
    r.push_back(at(v, idx));
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < v.shape[d]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
  return r;
}

struct Case {
  const char* what;
  std::vector<i64> batch;
  i64 m, k, n;
  std::vector<int> a_order, b_order, o_order;  // over the batch + 2 dimensions
  i64 a_pad, b_pad;
  std::vector<int> a_bcast, b_bcast;
  bool swapped;
};

std::vector<int> order(int nd, bool transpose_last) {
  std::vector<int> o;
  for (int i = 0; i < nd; ++i) o.push_back(i);
  if (transpose_last) std::swap(o[static_cast<std::size_t>(nd - 1)], o[static_cast<std::size_t>(nd - 2)]);
  return o;
}

}  // namespace

TEST(CudaGemmPlan, CublasCallsComputeTheViewsProduct) {
  std::vector<Case> cases;
  const auto o3 = order(3, false), t3 = order(3, true), o2 = order(2, false), t2 = order(2, true);
  cases.push_back({"row-major", {2}, 3, 4, 5, o3, o3, o3, 0, 0, {}, {}, true});
  cases.push_back({"a transposed", {2}, 3, 4, 5, t3, o3, o3, 0, 0, {}, {}, true});
  cases.push_back({"b transposed", {2}, 3, 4, 5, o3, t3, o3, 0, 0, {}, {}, true});
  cases.push_back({"both transposed, padded rows", {2}, 3, 4, 5, t3, t3, o3, 2, 3, {}, {}, true});
  cases.push_back({"column-major out", {2}, 3, 4, 5, o3, t3, t3, 1, 0, {}, {}, false});
  cases.push_back({"one matrix", {}, 6, 1, 7, o2, t2, o2, 0, 0, {}, {}, true});
  cases.push_back({"row vector times matrix", {}, 1, 5, 3, o2, o2, o2, 0, 0, {}, {}, true});
  cases.push_back({"matrix times column", {}, 4, 5, 1, t2, o2, o2, 0, 0, {}, {}, true});
  cases.push_back({"a broadcast over the batch", {3}, 2, 3, 4, o3, o3, o3, 0, 0, {0}, {}, true});
  {
    const auto o4 = order(4, false), t4 = order(4, true);
    // batch (2, 3): a broadcast along the first, b along the second: two batch dims that cannot merge
    cases.push_back({"two broadcast batch dims", {2, 3}, 2, 3, 2, o4, t4, o4, 1, 0, {0}, {1}, true});
    cases.push_back({"mergeable batch dims", {2, 3}, 2, 2, 2, o4, o4, o4, 0, 0, {}, {}, true});
  }
  for (Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<i64> as = c.batch, bs = c.batch, os = c.batch;
    as.insert(as.end(), {c.m, c.k});
    bs.insert(bs.end(), {c.k, c.n});
    os.insert(os.end(), {c.m, c.n});
    HostView a = make(as, c.a_order, c.a_pad, c.a_bcast, 1);
    HostView b = make(bs, c.b_order, c.b_pad, c.b_bcast, 2);
    HostView o = make(os, c.o_order, 0, {}, 3);
    const View va = a.view(), vb = b.view(), vo = o.view();
    const cg::GemmPlan plan = cg::plan_gemm(va, vb, vo);
    ASSERT_FALSE(plan.pack_a || plan.pack_b || plan.pack_out || plan.too_big);
    EXPECT_EQ(plan.call.swapped, c.swapped);
    interpret(plan.call, va, vb, vo);
    EXPECT_EQ(gather(vo), reference(va, vb));
  }
}

// The compute type follows MatmulPrecision for float32 only; cublas_api.h's values (CUDA 13.0).
TEST(CudaGemmPlan, Tf32ChangesTheComputeTypeOfFloat32Only) {
  using xp::MatmulPrecision;
  EXPECT_EQ(cb::CUBLAS_COMPUTE_32F, 68);
  EXPECT_EQ(cb::CUBLAS_COMPUTE_32F_FAST_TF32, 77);
  EXPECT_EQ(cb::CUBLAS_COMPUTE_64F, 70);
  struct Want {
    DType t;
    int data, f32, tf32;  // data type; compute type for float32 and tf32
  };
  for (const Want& w : {Want{DType::float32, cb::CUDA_R_32F, 68, 77}, Want{DType::float64, cb::CUDA_R_64F, 70, 70},
                        Want{DType::float16, cb::CUDA_R_16F, 68, 68}, Want{DType::bfloat16, cb::CUDA_R_16BF, 68, 68}}) {
    const cg::GemmTypes f = cg::gemm_types(w.t, MatmulPrecision::float32);
    const cg::GemmTypes t = cg::gemm_types(w.t, MatmulPrecision::tf32);
    EXPECT_EQ(f.data_type, w.data) << name(w.t);
    EXPECT_EQ(t.data_type, w.data) << name(w.t);
    EXPECT_EQ(f.compute_type, w.f32) << name(w.t);
    EXPECT_EQ(t.compute_type, w.tf32) << name(w.t);
  }
  EXPECT_THROW(cg::gemm_types(DType::int32, MatmulPrecision::tf32), xp::ValueError);
}

TEST(CudaGemmPlan, BatchesGoIntoOneCallWithZeroStridesForBroadcast) {
  const auto o3 = order(3, false);
  HostView a = make({64, 2, 3}, o3, 0, {0}, 1), b = make({64, 3, 4}, o3, 0, {}, 2), o = make({64, 2, 4}, o3, 0, {}, 3);
  const cg::GemmPlan plan = cg::plan_gemm(a.view(), b.view(), o.view());
  ASSERT_FALSE(plan.pack_a || plan.pack_b || plan.pack_out);
  EXPECT_EQ(plan.call.count, 64);
  EXPECT_TRUE(plan.call.loop_shape.empty());
  EXPECT_EQ(plan.call.stride_second, 0);  // a, broadcast (second operand: the call is swapped)
  EXPECT_EQ(plan.call.stride_first, 12);  // b: 3 x 4 per batch
  EXPECT_EQ(plan.call.stride_out, 8);
}

TEST(CudaGemmPlan, LayoutsCublasCannotReadArePacked) {
  const auto o2 = order(2, false);
  HostView a = make({4, 6}, o2, 0, {}, 1), b = make({6, 3}, o2, 0, {}, 2), o = make({4, 3}, o2, 0, {}, 3);
  View va = a.view(), vb = b.view(), vo = o.view();
  // Every second column of a: no unit stride in either dimension.
  std::vector<i64> stepped = {a.strides[0], 16}, shape_a = {4, 3}, shape_b = {3, 3};
  View sa{va.data, DType::float64, 2, shape_a.data(), stepped.data()};
  View sb{vb.data, DType::float64, 2, shape_b.data(), vb.strides};
  cg::GemmPlan p = cg::plan_gemm(sa, sb, vo);
  EXPECT_TRUE(p.pack_a);
  EXPECT_FALSE(p.pack_b);
  EXPECT_FALSE(p.pack_out);
  // Reversed rows of b (negative stride).
  std::vector<i64> reversed = {-vb.strides[0], 8};
  View rb{vb.data + 5 * vb.strides[0], DType::float64, 2, vb.shape, reversed.data()};
  p = cg::plan_gemm(va, rb, vo);
  EXPECT_TRUE(p.pack_b);
  // A misaligned start.
  View ma = va;
  ma.data += 4;
  EXPECT_TRUE(cg::plan_gemm(ma, vb, vo).pack_a);
  // Overlapping rows of the output (row stride smaller than a row).
  std::vector<i64> overlap = {8, 8};
  View oo{vo.data, DType::float64, 2, vo.shape, overlap.data()};
  EXPECT_TRUE(cg::plan_gemm(va, vb, oo).pack_out);
  // A broadcast output batch dimension (stride 0) cannot be written by a batched call.
  const auto o3 = order(3, false);
  HostView a3 = make({2, 4, 6}, o3, 0, {}, 1), b3 = make({2, 6, 3}, o3, 0, {}, 2),
           out3 = make({2, 4, 3}, o3, 0, {0}, 3);
  EXPECT_TRUE(cg::plan_gemm(a3.view(), b3.view(), out3.view()).pack_out);
  // Extents past int go to the host.
  std::vector<i64> big = {i64{INT_MAX} + 1, 1}, big_strides = {8, 8};
  View huge{va.data, DType::float64, 2, big.data(), big_strides.data()};
  std::vector<i64> hb_shape = {1, 1};
  View hb{vb.data, DType::float64, 2, hb_shape.data(), vb.strides};
  std::vector<i64> ho_shape = {i64{INT_MAX} + 1, 1};
  View ho{vo.data, DType::float64, 2, ho_shape.data(), big_strides.data()};
  EXPECT_TRUE(cg::plan_gemm(huge, hb, ho).too_big);
}

TEST(CudaGemmPlan, ColumnMajorReadsEitherStorageOrder) {
  // 3 x 4 float32, row-major with padded rows: cuBLAS sees the transpose, ld 6.
  cg::ColumnMajor c = cg::column_major(3, 4, 24, 4, 4);
  EXPECT_TRUE(c.ok && c.row_major);
  EXPECT_EQ(c.ld, 6);
  c = cg::column_major(3, 4, 4, 12, 4);  // column-major
  EXPECT_TRUE(c.ok && !c.row_major);
  EXPECT_EQ(c.ld, 3);
  c = cg::column_major(1, 4, 0, 4, 4);  // one row: its row stride does not matter
  EXPECT_TRUE(c.ok && c.row_major);
  EXPECT_EQ(c.ld, 4);
  EXPECT_FALSE(cg::column_major(3, 4, 8, 8, 4).ok);   // rows overlap
  EXPECT_FALSE(cg::column_major(3, 4, 32, 8, 4).ok);  // no unit stride
  EXPECT_FALSE(cg::column_major(3, 4, 18, 4, 4).ok);  // row stride not a whole element
}

TEST(CudaGemmPlan, BatchDimensionsCoalesce) {
  std::vector<i64> shape = {2, 1, 3, 4, 5, 6};
  std::vector<i64> sa = {480, 999, 160, 40, 8, 1}, sb = {0, 7, 0, 0, 8, 1};
  View a{nullptr, DType::float64, 6, shape.data(), sa.data()};
  View b{nullptr, DType::float64, 6, shape.data(), sb.data()};
  const View* views[2] = {&a, &b};
  const cg::BatchDims d = cg::coalesce_batch(views, 2, 4);
  // dim 1 (extent 1) dropped; dims 0, 2 and 3 merge in both views (480 = 160 * 3 = 40 * 4 * 3, and b
  // broadcasts all three).
  ASSERT_EQ(d.shape, (std::vector<i64>{24}));
  EXPECT_EQ(d.strides[0], (std::vector<i64>{40}));
  EXPECT_EQ(d.strides[1], (std::vector<i64>{0}));
  sb[2] = 16;  // b broadcasts dim 0 only: 0 != 16 * 3, while dims 2 and 3 still merge (16 = 4 * 4)
  sb[3] = 4;
  const cg::BatchDims e = cg::coalesce_batch(views, 2, 4);
  ASSERT_EQ(e.shape, (std::vector<i64>{2, 12}));
  EXPECT_EQ(e.strides[0], (std::vector<i64>{480, 40}));
  EXPECT_EQ(e.strides[1], (std::vector<i64>{0, 4}));
}

TEST(CudaLoopKernel, SourceCompilesForEveryIntegerDtype) {
  const xp::CompilerInfo info = xp::compiler_info();
  if (!info.available) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no NVRTC: " + info.error);
  for (DType t : {DType::bool_, DType::int8, DType::int16, DType::int32, DType::int64, DType::uint8, DType::uint16,
                  DType::uint32, DType::uint64}) {
    ASSERT_TRUE(cg::loop_kernel_dtype(t));
    xp::ProgramOptions opt;
    opt.name = "xp_matmul_loop.cu";
    opt.options = cg::nvrtc_options();
    xp::Program prog(cg::loop_kernel_source(t), opt);
    EXPECT_NO_THROW(prog.compile(xp::Arch::sm(90))) << name(t);
  }
  for (DType t : {DType::float16, DType::bfloat16, DType::float32, DType::float64}) {
    EXPECT_FALSE(cg::loop_kernel_dtype(t));
    EXPECT_THROW(cg::loop_kernel_source(t), xp::ValueError);
  }
  EXPECT_EQ(sizeof(cg::LoopArgs), 46u * 8u);  // the kernel's struct: every field 8 bytes, no padding
}

TEST(CublasSearch, MissingExplicitPathSaysSo) {
  xp_test::TempDir dir;
  cb::SearchInputs in;
  in.explicit_path = dir / "libcublas.so.13";
  const cb::SearchResult r = cb::search(in);
  EXPECT_EQ(r.chosen, -1);
  EXPECT_NE(r.reason.find("XP_CUBLAS points at " + in.explicit_path + ", which does not exist"), std::string::npos)
      << r.reason;
}

TEST(CublasSearch, ALibraryThatIsNotCublasIsRefused) {
  cb::SearchInputs in;
  in.explicit_path = XP_FAKE_DRIVER_PATH;  // a real shared library, without cuBLAS's entry points
  const cb::SearchResult r = cb::search(in);
  EXPECT_EQ(r.chosen, -1);
  EXPECT_NE(r.reason.find("not a cuBLAS library"), std::string::npos) << r.reason;
}

TEST(CublasSearch, NothingFoundListsWhatWasTried) {
  xp_test::TempDir dir;
  cb::SearchInputs in;
  in.cuda_path = dir.path();
  in.system_locations = false;
  const cb::SearchResult r = cb::search(in);
  EXPECT_EQ(r.chosen, -1);
  EXPECT_NE(r.reason.find("was not found"), std::string::npos) << r.reason;
  bool tried_cuda_path = false;
  for (const auto& t : r.tried) tried_cuda_path = tried_cuda_path || t.find(dir.path() + "/lib64") == 0;
  EXPECT_TRUE(tried_cuda_path);
}

// This process's search without XP_CUBLAS and without a driver's limit: every cuBLAS installed.
static cb::SearchInputs every_cublas_inputs() {
  cb::SearchInputs in = cb::process_inputs();
  in.explicit_path.clear();
  in.driver_version = 0;
  return in;
}

TEST(CublasSearch, TheToolkitsCublasIsFoundAndCheckedAgainstTheDriver) {
  cb::SearchInputs in = every_cublas_inputs();
  const cb::SearchResult any = cb::search(in);
  if (any.chosen < 0) GTEST_SKIP() << "no cuBLAS on this machine: " << any.reason;
  const xp::LibraryInfo& lib = any.found[static_cast<std::size_t>(any.chosen)];
  EXPECT_TRUE(lib.chosen);
  EXPECT_GE(lib.version_number, 12000);
  EXPECT_FALSE(lib.path.empty());
  // A driver of an older CUDA major than every cuBLAS found: none is used, and the reason says why.
  int oldest = 1 << 30;
  for (const auto& f : any.found) oldest = std::min(oldest, f.version_number);
  in.driver_version = (oldest / 1000 - 1) * 1000;
  const cb::SearchResult old = cb::search(in);
  EXPECT_EQ(old.chosen, -1);
  EXPECT_NE(old.reason.find("driver"), std::string::npos) << old.reason;
}

// libcublas loads libcublasLt (same CUDA major) as its dependency; the search reports the one it
// brought in beside each libcublas, and blas_report() the one in use.
TEST(CublasSearch, EachCublasReportsTheLibcublasLtItLoaded) {
  const cb::SearchResult r = cb::search(every_cublas_inputs());
  if (r.chosen < 0) GTEST_SKIP() << "no cuBLAS on this machine: " << r.reason;
  ASSERT_EQ(r.lt.size(), r.found.size());
  for (std::size_t i = 0; i < r.found.size(); ++i) {
    const xp::LibraryInfo& lt = r.lt[i];
    const int major = r.found[i].version_number / 1000;
    ASSERT_TRUE(lt.found) << r.found[i].path << ": " << lt.error;
    EXPECT_EQ(lt.name, "libcublasLt");
    EXPECT_TRUE(std::filesystem::exists(lt.path)) << lt.path;
    EXPECT_EQ(std::filesystem::path(lt.path).filename().string().rfind("libcublasLt.so." + std::to_string(major), 0),
              0u)
        << lt.path;
    EXPECT_EQ(lt.version_number / 1000, major) << lt.version;
    EXPECT_NE(lt.found_by.find(r.found[i].path), std::string::npos) << lt.found_by;
    EXPECT_FALSE(lt.chosen) << "only blas_report() marks the libcublasLt in use";
  }
  const xp::BlasReport b = xp::blas_report();
  ASSERT_TRUE(b.unavailable.empty()) << b.unavailable;
  int chosen = 0;
  for (const auto& l : b.cublas) chosen += l.chosen ? 1 : 0;
  EXPECT_EQ(chosen, 1);
  EXPECT_TRUE(b.cublas_lt.found);
  EXPECT_TRUE(b.cublas_lt.chosen);
  EXPECT_TRUE(std::filesystem::exists(b.cublas_lt.path)) << b.cublas_lt.path;
}

// `xp doctor` names the cuBLAS and cuBLASLt in use, or why there is none.
TEST(CublasSearch, DoctorShowsTheLibrariesOrWhyNone) {
  const xp::BlasReport b = xp::blas_report();
  if (!b.unavailable.empty()) GTEST_SKIP() << "no cuBLAS on this machine: " << b.unavailable;
  std::string used;
  for (const auto& l : b.cublas)
    if (l.chosen) used = l.path;
  const auto text = xp_test::run_process({XP_CLI_PATH, "doctor"});
  EXPECT_NE(text.out.find("cuBLAS:   " + used), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("cuBLASLt: " + b.cublas_lt.path), std::string::npos) << text.out;
  const auto js = xp_test::run_process({XP_CLI_PATH, "doctor", "--json"});
  const nlohmann::json j = nlohmann::json::parse(js.out);
  const nlohmann::json& la = j.at("linear_algebra");
  bool listed = false;
  for (const auto& l : la.at("cublas")) listed = listed || (l.at("path") == used && l.at("chosen") == true);
  EXPECT_TRUE(listed) << la.dump(1);
  EXPECT_EQ(la.at("cublaslt").at("path"), b.cublas_lt.path);
  EXPECT_TRUE(la.at("unavailable").is_null());

  // A missing XP_CUBLAS: nothing else is looked at, and both forms say why.
  xp_test::TempDir dir;
  const std::string missing = dir / "libcublas.so.13";
  const auto bad = xp_test::run_process({XP_CLI_PATH, "doctor", "--json"}, {{"XP_CUBLAS", missing}});
  const nlohmann::json jb = nlohmann::json::parse(bad.out);
  const nlohmann::json& lb = jb.at("linear_algebra");
  EXPECT_TRUE(lb.at("cublas").empty()) << lb.dump(1);
  EXPECT_FALSE(lb.at("cublaslt").at("found"));
  EXPECT_NE(lb.at("unavailable").get<std::string>().find("XP_CUBLAS points at " + missing), std::string::npos)
      << lb.dump(1);
  bool problem = false;
  for (const auto& p : jb.at("problems"))
    problem = problem || (p.at("id") == "cublas_unusable" && p.at("severity") == "error");
  EXPECT_TRUE(problem) << jb.at("problems").dump(1);
  EXPECT_EQ(bad.exit_code, 1);  // what the user asked for is not there
  EXPECT_EQ(js.exit_code, text.exit_code);
  const auto bad_text = xp_test::run_process({XP_CLI_PATH, "doctor"}, {{"XP_CUBLAS", missing}});
  EXPECT_EQ(bad_text.exit_code, 1);
  EXPECT_NE(bad_text.out.find("cuBLAS:   none used (XP_CUBLAS points at " + missing), std::string::npos)
      << bad_text.out;
}

TEST(MemoryLimit, BytesAndPercentages) {
  using xp::MemoryLimit;
  using xp::detail::memory_limit_bytes;
  const std::uint64_t total = 150'000'000'000ULL;
  EXPECT_EQ(memory_limit_bytes(std::nullopt, total), 0u);
  EXPECT_EQ(memory_limit_bytes(MemoryLimit{std::uint64_t{1} << 30, std::nullopt}, total), std::uint64_t{1} << 30);
  EXPECT_EQ(memory_limit_bytes(MemoryLimit{0, 80.0}, total), 120'000'000'000ULL);
  EXPECT_EQ(memory_limit_bytes(MemoryLimit{0, 100.0}, total), total);
  EXPECT_EQ(memory_limit_bytes(MemoryLimit{0, 33.3}, 1000), 333u);  // rounded down
  EXPECT_EQ(memory_limit_bytes(MemoryLimit{0, 1e-9}, 1000), 1u);    // never 0 (which means none)
  EXPECT_EQ(memory_limit_bytes(MemoryLimit{0, 50.0}, 0), 0u);       // unknown total: none
}

TEST(MemoryLimit, InUsePlusCachedIsCapped) {
  using xp::detail::room_under_limit;
  using xp::detail::within_limit;
  EXPECT_TRUE(within_limit(100, 50, 1u << 30, 0));  // no limit
  EXPECT_TRUE(within_limit(100, 50, 850, 1000));
  EXPECT_FALSE(within_limit(100, 50, 851, 1000));
  EXPECT_FALSE(within_limit(900, 200, 0, 1000));              // already past (a limit applied late)
  EXPECT_FALSE(within_limit(1, 1, ~std::uint64_t{0}, 1000));  // no overflow
  EXPECT_EQ(room_under_limit(100, 50, 1000), 850u);
  EXPECT_EQ(room_under_limit(900, 200, 1000), 0u);
}

TEST(Staging, ChunksCoverTheCopy) {
  EXPECT_EQ(cg::staging_chunks(0), 0u);
  EXPECT_EQ(cg::staging_chunks(1), 1u);
  EXPECT_EQ(cg::staging_chunks(cg::kStagingChunk), 1u);
  EXPECT_EQ(cg::staging_chunks(cg::kStagingChunk + 1), 2u);
  EXPECT_LT(cg::kStagingMin, cg::kStagingChunk);
  // Measured (staging.hpp): below 4 MiB, or with one thread, the driver's direct copy is faster.
  EXPECT_FALSE(cg::staging_pays(std::size_t{1} << 20, 16, false));
  EXPECT_TRUE(cg::staging_pays(std::size_t{4} << 20, 16, false));
  EXPECT_TRUE(cg::staging_pays(std::size_t{4} << 20, 16, true));
  EXPECT_FALSE(cg::staging_pays(std::size_t{1} << 30, 1, false));
  EXPECT_TRUE(cg::staging_pays(std::size_t{1} << 30, 2, false));
  EXPECT_FALSE(cg::staging_pays(std::size_t{1} << 30, 2, true));
}

TEST(MemoryStats, TheCpuDeviceCountsItsBlocks) {
  const xp::Device cpu = xp::Device::cpu();
  xp::free_all(cpu);
  const xp::MemoryStats before = xp::memory_stats(cpu);
  EXPECT_EQ(before.bytes_cached, 0u);
  EXPECT_EQ(before.limit, 0u);
  {
    xp::Array big = xp::empty({std::int64_t{8} << 20}, DType::float32, cpu);  // 32 MiB
    xp::Array small = xp::empty({1000}, DType::float32, cpu);                 // 4,000 bytes: a 4 KiB block
    const xp::MemoryStats during = xp::memory_stats(cpu);
    EXPECT_EQ(during.bytes_in_use, before.bytes_in_use + (std::uint64_t{32} << 20) + 4096);
    EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
    EXPECT_GE(during.allocations, before.allocations + 2);
  }
  const xp::MemoryStats after = xp::memory_stats(cpu);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.bytes_cached, (std::uint64_t{32} << 20) + 4096);  // both blocks kept for reuse
  EXPECT_GE(after.peak_bytes_in_use, before.bytes_in_use + (std::uint64_t{32} << 20));
  xp::reset_peak(cpu);
  EXPECT_EQ(xp::memory_stats(cpu).peak_bytes_in_use, after.bytes_in_use);
  xp::free_all(cpu);
  EXPECT_EQ(xp::memory_stats(cpu).bytes_cached, 0u);
}

TEST(MemoryStats, AnUnusableGpuIsAnError) {
  if (xp::cuda_status().available) GTEST_SKIP() << "a GPU is usable here (test_gpu_memory covers it)";
  EXPECT_THROW(xp::memory_stats(xp::Device::cuda(0)), xp::DeviceUnavailable);
}

// With a GPU: float matmul really runs on the device through cuBLAS (not the host fallback), and
// integer matmul through xp's kernel; small integer values make both exact.
TEST(CudaLinalgGpu, MatmulRunsOnTheDevice) {
  XP_REQUIRE_GPU();
  if (cb::library().api == nullptr) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_GPU", "no cuBLAS: " + cb::unavailable_reason());
  EXPECT_EQ(cb::unavailable_reason(), "");
  const xp::Device gpu = xp::Device::cuda(0);
  xp::detail::Backend& be = xp::detail::backend_for(gpu);
  for (DType t : {DType::float32, DType::float64, DType::int32}) {
    const std::size_t e = xp::itemsize(t);
    std::vector<i64> as = {2, 3}, bs = {3, 2}, os = {2, 2};
    std::vector<i64> ast = {3 * static_cast<i64>(e), static_cast<i64>(e)},
                     bst = {2 * static_cast<i64>(e), static_cast<i64>(e)};
    std::vector<i64> ost = bst;
    xp::detail::Allocation ma = be.allocate(6 * e), mb = be.allocate(6 * e), mo = be.allocate(4 * e);
    std::vector<std::byte> ha(6 * e), hb(6 * e), ho(4 * e);
    for (int i = 0; i < 6; ++i) {
      const double x = i + 1, y = 6 - i;  // a = [[1 2 3] [4 5 6]], b = [[6 5] [4 3] [2 1]]
      if (t == DType::float32) {
        const float fx = static_cast<float>(x), fy = static_cast<float>(y);
        std::memcpy(ha.data() + i * e, &fx, e), std::memcpy(hb.data() + i * e, &fy, e);
      } else if (t == DType::float64) {
        std::memcpy(ha.data() + i * e, &x, e), std::memcpy(hb.data() + i * e, &y, e);
      } else {
        const std::int32_t ix = i + 1, iy = 6 - i;
        std::memcpy(ha.data() + i * e, &ix, e), std::memcpy(hb.data() + i * e, &iy, e);
      }
    }
    be.copy_from_host(ha.data(), ma.data, ha.size());
    be.copy_from_host(hb.data(), mb.data, hb.size());
    const View va{ma.data, t, 2, as.data(), ast.data()}, vb{mb.data, t, 2, bs.data(), bst.data()};
    const View vo{mo.data, t, 2, os.data(), ost.data()};
    ASSERT_TRUE(cg::device_matmul(be, gpu, va, vb, vo, xp::MatmulPrecision::float32))
        << name(t) << ": the device path declined";
    be.copy_to_host(mo.data, ho.data(), ho.size());
    const double expected[4] = {20, 14, 56, 41};
    for (int i = 0; i < 4; ++i) {
      double got = 0;
      if (t == DType::float32) {
        float f;
        std::memcpy(&f, ho.data() + i * e, e);
        got = f;
      } else if (t == DType::float64) {
        std::memcpy(&got, ho.data() + i * e, e);
      } else {
        std::int32_t v;
        std::memcpy(&v, ho.data() + i * e, e);
        got = v;
      }
      EXPECT_EQ(got, expected[i]) << name(t) << " element " << i;
    }
  }
}
