// matmul and vecdot on a CUDA device: cuBLAS for floats, an exact kernel for integers (linalg.hpp).
#include "backend/cuda/linalg.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "backend/cuda/cublas.hpp"
#include "backend/cuda/ew_source.hpp"
#include "backend/cuda/kernel_cache.hpp"
#include "runtime/current.hpp"
#include "runtime/driver.hpp"
#include "runtime/log.hpp"
#include "xp/error.hpp"
#include "xp/program.hpp"
#include "xp/stream.hpp"
#include "xp_generated/device_code.hpp"

namespace xp::detail::cuda {

namespace {

using i64 = std::int64_t;

// The dtypes cuBLAS computes (gemm_types).
bool is_cublas_dtype(DType t) {
  return t == DType::float32 || t == DType::float64 || t == DType::float16 || t == DType::bfloat16 ||
         t == DType::complex64 || t == DType::complex128;
}

// Device memory holding a C-order copy of a view (or room for a result). Batch dimensions that the
// view broadcasts (stride 0) are kept broadcast: stored once, stride 0 in `view`.
struct Scratch {
  Allocation mem;
  std::vector<i64> shape, strides;                // the full view over the scratch memory
  std::vector<i64> packed_shape, packed_strides;  // what is stored: broadcast dimensions of extent 1
  View view;
};

std::unique_ptr<Scratch> scratch_for(Backend& backend, const View& v, int nb) {
  auto s = std::make_unique<Scratch>();
  const i64 e = static_cast<i64>(itemsize(v.dtype));
  s->shape.assign(v.shape, v.shape + v.ndim);
  s->packed_shape = s->shape;
  for (int d = 0; d < nb; ++d)
    if (v.strides[d] == 0) s->packed_shape[static_cast<std::size_t>(d)] = 1;
  s->strides.resize(static_cast<std::size_t>(v.ndim));
  s->packed_strides.resize(static_cast<std::size_t>(v.ndim));
  i64 stride = e;
  for (int d = v.ndim - 1; d >= 0; --d) {
    const auto u = static_cast<std::size_t>(d);
    s->packed_strides[u] = stride;
    s->strides[u] = s->packed_shape[u] == 1 && s->shape[u] != 1 ? 0 : stride;
    stride *= s->packed_shape[u];
  }
  s->mem = backend.allocate(static_cast<std::size_t>(stride));
  s->view = View{s->mem.data, v.dtype, v.ndim, s->shape.data(), s->strides.data()};
  return s;
}

// dst = src elementwise over `shape` (a fused program of one load), on the device's stream. A complex
// view is copied as its parts: a real view with a last axis of 2 (a copy needs no complex kernel).
void copy_view(Backend& backend, const View& src, const View& dst, int ndim, const i64* shape) {
  if (is_complex(src.dtype)) {
    std::vector<i64> sh(shape, shape + ndim), ss(src.strides, src.strides + ndim), ds(dst.strides, dst.strides + ndim);
    const DType part = component_dtype(src.dtype);
    sh.push_back(2);
    ss.push_back(static_cast<i64>(itemsize(part)));
    ds.push_back(static_cast<i64>(itemsize(part)));
    const View s2{src.data, part, ndim + 1, sh.data(), ss.data()};
    const View d2{dst.data, part, ndim + 1, sh.data(), ds.data()};
    copy_view(backend, s2, d2, ndim + 1, sh.data());
    return;
  }
  FusedProgram p;
  p.code.push_back(Instr{Op::load, src.dtype, -1, -1, -1, 0});
  View in = src, out = dst;
  in.ndim = out.ndim = ndim;
  in.shape = out.shape = shape;
  p.inputs.push_back(in);
  p.outputs.push_back(out);
  p.output_instr.push_back(0);
  p.ndim = ndim;
  p.shape = shape;
  backend.run_fused(p);
}

std::unique_ptr<Scratch> packed_copy(Backend& backend, const View& v, int nb) {
  auto s = scratch_for(backend, v, nb);
  const View stored{s->mem.data, v.dtype, v.ndim, s->packed_shape.data(), s->packed_strides.data()};
  copy_view(backend, v, stored, v.ndim, s->packed_shape.data());
  return s;
}

// ---- cuBLAS

// A workspace for a cuBLAS handle: its owner, which the handle keeps (null: no room).
std::shared_ptr<void> workspace_for(Backend& backend, std::size_t bytes) {
  try {
    Allocation a = backend.allocate(bytes);
    std::byte* data = a.data;
    if (a.owner) return std::shared_ptr<void>(a.owner, data);  // the owner's lifetime, the block's address
    return std::shared_ptr<void>(data, [release = a.release, n = a.bytes](void* p) {
      if (release != nullptr) release(static_cast<std::byte*>(p), n);
    });
  } catch (const OutOfMemory&) {
    return nullptr;  // under a tight memory limit cuBLAS runs without a workspace (fewer algorithms)
  }
}

void run_gemm(Backend& backend, const Device& device, const GemmCall& c, const View& a, const View& b, const View& out,
              MatmulPrecision precision) {
  const GemmTypes types = gemm_types(a.dtype, precision);  // throws for a dtype cuBLAS is not given
  const cublas::Api& api = *cublas::library().api;
  cublas::Handle& h =
      cublas::handle_for(device, [&backend](std::size_t bytes) { return workspace_for(backend, bytes); });
  const int data_type = types.data_type, compute = types.compute_type;
  // alpha and beta in the compute type's precision; complex ones {re, im} (a real one reads re only).
  const float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
  const double one_d[2] = {1.0, 0.0}, zero_d[2] = {0.0, 0.0};
  const bool f64 = compute == cublas::CUBLAS_COMPUTE_64F;
  const void* alpha = f64 ? static_cast<const void*>(one_d) : one_f;
  const void* beta = f64 ? static_cast<const void*>(zero_d) : zero_f;
  const View& first = c.swapped ? b : a;
  const View& second = c.swapped ? a : b;
  const int i_first = c.swapped ? 1 : 0, i_second = c.swapped ? 0 : 1;
  i64 loops = 1;
  for (i64 s : c.loop_shape) loops *= s;
  const int nl = static_cast<int>(c.loop_shape.size());
  detail::activate_context(device);
  std::lock_guard<std::mutex> lock(h.mutex);
  cublas::bind_stream(h, work_stream(device));
  for (i64 l = 0; l < loops; ++l) {
    i64 off[3] = {0, 0, 0};
    i64 rest = l;
    for (int d = nl - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      const i64 q = rest % c.loop_shape[u];
      rest /= c.loop_shape[u];
      for (int v = 0; v < 3; ++v) off[v] += q * c.loop_strides[v][u];
    }
    cublas::check(api.cublasGemmStridedBatchedEx(
                      h.handle, c.trans_first, c.trans_second, static_cast<int>(c.m), static_cast<int>(c.n),
                      static_cast<int>(c.k), alpha, first.data + off[i_first], data_type, static_cast<int>(c.ld_first),
                      c.stride_first, second.data + off[i_second], data_type, static_cast<int>(c.ld_second),
                      c.stride_second, beta, out.data + off[2], data_type, static_cast<int>(c.ld_out), c.stride_out,
                      static_cast<int>(c.count), compute, cublas::CUBLAS_GEMM_DEFAULT),
                  "cublasGemmStridedBatchedEx");
  }
}

// ---- the exact loop kernel

const Kernel& loop_kernel(const Device& device, DType dtype) {
  return kernel_cache(device).kernel(Generator::matmul_loop, "xp-matmul-loop-1:" + std::string(name(dtype)),
                                     kLoopKernelName, [dtype] { return loop_kernel_source(dtype); });
}

bool run_loop(const Device& device, const View& a, const View& b, const View& out) {
  const int nd = a.ndim, nb = nd - 2;
  const View* views[3] = {&a, &b, &out};
  const BatchDims bd = coalesce_batch(views, 3, nb);
  if (bd.shape.size() > static_cast<std::size_t>(kMaxLoopBatchDims)) return false;
  LoopArgs p;
  p.a = reinterpret_cast<std::uintptr_t>(a.data);
  p.b = reinterpret_cast<std::uintptr_t>(b.data);
  p.out = reinterpret_cast<std::uintptr_t>(out.data);
  p.m = a.shape[nd - 2];
  p.k = a.shape[nd - 1];
  p.n = b.shape[nd - 1];
  p.a_rs = a.strides[nd - 2];
  p.a_cs = a.strides[nd - 1];
  p.b_rs = b.strides[nd - 2];
  p.b_cs = b.strides[nd - 1];
  p.o_rs = out.strides[nd - 2];
  p.o_cs = out.strides[nd - 1];
  p.nbatch = static_cast<i64>(bd.shape.size());
  i64 batches = 1;
  for (std::size_t d = 0; d < bd.shape.size(); ++d) {
    p.shape[d] = bd.shape[d];
    p.a_st[d] = bd.strides[0][d];
    p.b_st[d] = bd.strides[1][d];
    p.o_st[d] = bd.strides[2][d];
    batches *= bd.shape[d];
  }
  p.total = batches * p.m * p.n;
  const Kernel& k = loop_kernel(device, a.dtype);
  LaunchConfig cfg;
  cfg.grid = {static_cast<unsigned>(std::min<i64>((p.total + 255) / 256, i64{1} << 20)), 1, 1};
  cfg.block = {256, 1, 1};
  const Stream st = work_stream(device);
  cfg.stream = st;
  void* arg = &p;
  const std::size_t size = sizeof p;
  k.launch_packed(cfg, &arg, &size, 1);
  return true;
}

const char* storage_type(DType t) {
  switch (t) {
    case DType::bool_:
    case DType::uint8:
      return "unsigned char";
    case DType::int8:
      return "signed char";
    case DType::int16:
      return "short";
    case DType::uint16:
      return "unsigned short";
    case DType::int32:
      return "int";
    case DType::uint32:
      return "unsigned int";
    case DType::int64:
      return "long long";
    case DType::uint64:
      return "unsigned long long";
    default:
      return nullptr;
  }
}

}  // namespace

GemmTypes gemm_types(DType dtype, MatmulPrecision precision) {
  switch (dtype) {
    case DType::float32:
      // FAST_TF32 on a handle in CUBLAS_DEFAULT_MATH (cublas.hpp): the compute type asks, the math mode
      // does not forbid; the hardware or cuBLAS's choice of kernel may still compute in float32.
      return {cublas::CUDA_R_32F,
              precision == MatmulPrecision::tf32 ? cublas::CUBLAS_COMPUTE_32F_FAST_TF32 : cublas::CUBLAS_COMPUTE_32F};
    case DType::float64:
      return {cublas::CUDA_R_64F, cublas::CUBLAS_COMPUTE_64F};
    case DType::float16:
      return {cublas::CUDA_R_16F, cublas::CUBLAS_COMPUTE_32F};
    case DType::bfloat16:
      return {cublas::CUDA_R_16BF, cublas::CUBLAS_COMPUTE_32F};
    // Complex: MatmulPrecision::tf32 is not taken up (computed as plain complex64, docs/semantics.md).
    case DType::complex64:
      return {cublas::CUDA_C_32F, cublas::CUBLAS_COMPUTE_32F};
    case DType::complex128:
      return {cublas::CUDA_C_64F, cublas::CUBLAS_COMPUTE_64F};
    default:
      throw ValueError("matmul: no cuBLAS type for " + std::string(name(dtype)));
  }
}

ColumnMajor column_major(i64 rows, i64 cols, i64 rs, i64 cs, std::size_t itemsize, Reading reading) noexcept {
  const i64 e = static_cast<i64>(itemsize);
  ColumnMajor r;
  // Row by row (cuBLAS sees the transpose, cols x rows): unit column stride, rows apart and in order.
  if (reading != Reading::column && (cols <= 1 || cs == e) &&
      (rows <= 1 || (rs > 0 && rs % e == 0 && rs / e >= std::max<i64>(cols, 1)))) {
    r.ok = true;
    r.row_major = true;
    r.ld = rows <= 1 ? std::max<i64>(cols, 1) : rs / e;
    return r;
  }
  if (reading != Reading::row && (rows <= 1 || rs == e) &&
      (cols <= 1 || (cs > 0 && cs % e == 0 && cs / e >= std::max<i64>(rows, 1)))) {
    r.ok = true;
    r.ld = cols <= 1 ? std::max<i64>(rows, 1) : cs / e;
  }
  return r;
}

BatchDims coalesce_batch(const View* const* views, int count, int nb) {
  BatchDims r;
  for (int d = 0; d < nb; ++d) {
    const i64 extent = views[0]->shape[d];
    if (extent == 1) continue;
    if (!r.shape.empty()) {
      bool merge = true;
      for (int v = 0; v < count; ++v) merge = merge && r.strides[v].back() == views[v]->strides[d] * extent;
      if (merge) {
        r.shape.back() *= extent;
        for (int v = 0; v < count; ++v) r.strides[v].back() = views[v]->strides[d];
        continue;
      }
    }
    r.shape.push_back(extent);
    for (int v = 0; v < count; ++v) r.strides[v].push_back(views[v]->strides[d]);
  }
  return r;
}

GemmPlan plan_gemm(const View& a, const View& b, const View& out, bool conj_a) {
  GemmPlan p;
  const int nd = a.ndim, nb = nd - 2;
  const i64 m = a.shape[nd - 2], k = a.shape[nd - 1], n = b.shape[nd - 1];
  const std::size_t e = itemsize(a.dtype);
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    p.too_big = true;
    return p;
  }
  const auto batch_ok = [&](const View& v, bool output) {
    if (reinterpret_cast<std::uintptr_t>(v.data) % e != 0) return false;
    for (int d = 0; d < nb; ++d) {
      if (v.shape[d] == 1) continue;
      if (v.strides[d] < 0 || v.strides[d] % static_cast<i64>(e) != 0) return false;
      if (output && v.strides[d] == 0) return false;
    }
    return true;
  };
  ColumnMajor ca = column_major(m, k, a.strides[nd - 2], a.strides[nd - 1], e);
  const ColumnMajor cb = column_major(k, n, b.strides[nd - 2], b.strides[nd - 1], e);
  ColumnMajor co = column_major(m, n, out.strides[nd - 2], out.strides[nd - 1], e);
  if (conj_a) {
    // a's operation must be a transpose, to become CUBLAS_OP_C: a read row by row with out read column
    // by column (C = conj(A) B), or a column by column with out row by row (C^T = B^T conj(A)^T).
    const auto reading = [&](const View& v, i64 r, i64 c, Reading how) {
      return column_major(r, c, v.strides[nd - 2], v.strides[nd - 1], e, how);
    };
    const ColumnMajor a_row = reading(a, m, k, Reading::row), a_col = reading(a, m, k, Reading::column);
    const ColumnMajor o_row = reading(out, m, n, Reading::row), o_col = reading(out, m, n, Reading::column);
    if (a_row.ok && o_col.ok) {
      ca = a_row, co = o_col;
    } else if (a_col.ok && o_row.ok) {
      ca = a_col, co = o_row;
    } else {
      // Packed, a is C-ordered (read row by row); out then column by column, which its C-ordered
      // scratch is where m or n is 1 (vecdot's case, the only user of conj_a).
      ca = ColumnMajor{};
      co = o_col;
    }
  }
  p.pack_a = !ca.ok || ca.ld > INT_MAX || !batch_ok(a, false);
  p.pack_b = !cb.ok || cb.ld > INT_MAX || !batch_ok(b, false);
  p.pack_out = !co.ok || co.ld > INT_MAX || !batch_ok(out, true);
  if (p.pack_a || p.pack_b || p.pack_out) return p;

  GemmCall& c = p.call;
  c.swapped = co.row_major;
  c.k = k;
  c.ld_out = co.ld;
  if (c.swapped) {  // C^T (n x m) = B^T (n x k) A^T (k x m)
    c.m = n;
    c.n = m;
    c.trans_first = cb.row_major ? cublas::CUBLAS_OP_N : cublas::CUBLAS_OP_T;
    c.ld_first = cb.ld;
    c.trans_second = ca.row_major ? cublas::CUBLAS_OP_N : conj_a ? cublas::CUBLAS_OP_C : cublas::CUBLAS_OP_T;
    c.ld_second = ca.ld;
  } else {  // C (m x n) = A (m x k) B (k x n)
    c.m = m;
    c.n = n;
    c.trans_first = ca.row_major ? (conj_a ? cublas::CUBLAS_OP_C : cublas::CUBLAS_OP_T) : cublas::CUBLAS_OP_N;
    c.ld_first = ca.ld;
    c.trans_second = cb.row_major ? cublas::CUBLAS_OP_T : cublas::CUBLAS_OP_N;
    c.ld_second = cb.ld;
  }
  const View* views[3] = {&a, &b, &out};
  const BatchDims bd = coalesce_batch(views, 3, nb);
  // The longest batch dimension goes into one call; the others are looped.
  int best = -1;
  for (int d = 0; d < static_cast<int>(bd.shape.size()); ++d)
    if (bd.shape[static_cast<std::size_t>(d)] <= INT_MAX &&
        (best < 0 || bd.shape[static_cast<std::size_t>(d)] > bd.shape[static_cast<std::size_t>(best)]))
      best = d;
  const i64 ei = static_cast<i64>(e);
  for (int d = 0; d < static_cast<int>(bd.shape.size()); ++d) {
    const auto u = static_cast<std::size_t>(d);
    if (d == best) {
      c.count = bd.shape[u];
      const i64 sa = bd.strides[0][u] / ei, sb = bd.strides[1][u] / ei;
      c.stride_first = c.swapped ? sb : sa;
      c.stride_second = c.swapped ? sa : sb;
      c.stride_out = bd.strides[2][u] / ei;
      continue;
    }
    c.loop_shape.push_back(bd.shape[u]);
    for (int v = 0; v < 3; ++v) c.loop_strides[v].push_back(bd.strides[v][u]);
  }
  return p;
}

bool loop_kernel_dtype(DType dtype) noexcept {
  return storage_type(dtype) != nullptr;
}

std::string loop_kernel_source(DType dtype) {
  const char* s = storage_type(dtype);
  if (s == nullptr) throw ValueError("matmul loop kernel: not an integer or bool dtype: " + std::string(name(dtype)));
  const bool logical = dtype == DType::bool_;
  const bool wide = dtype == DType::int64 || dtype == DType::uint64;
  std::string src = "// generated by xp: exact integer and bool matmul\n";
  src += device_code::types_cuh;
  src += "typedef " + std::string(s) + " S;\n";
  if (logical) {
    src += "typedef unsigned char A;\n#define XP_MATMUL_LOGICAL 1\n";
  } else {
    src += wide ? "typedef unsigned long long A;\n" : "typedef unsigned int A;\n";
    src += "#define XP_MATMUL_LOGICAL 0\n";
  }
  src += device_code::matmul_int_cuh;
  return src;
}

namespace {

// device_matmul, with conj_a: out = conj(a) @ b (complex vecdot; m or n is 1, see plan_gemm).
bool matmul_on_device(Backend& backend, const Device& device, const View& a, const View& b, const View& out,
                      MatmulPrecision precision, bool conj_a) {
  if (a.ndim < 2 || b.ndim != a.ndim || out.ndim != a.ndim || a.dtype != b.dtype || a.dtype != out.dtype)
    return false;  // the host path reports the error
  const int nd = a.ndim, nb = nd - 2;
  for (int d = 0; d < nb; ++d)
    if (b.shape[d] != a.shape[d] || out.shape[d] != a.shape[d]) return false;
  if (b.shape[nd - 2] != a.shape[nd - 1] || out.shape[nd - 2] != a.shape[nd - 2] ||
      out.shape[nd - 1] != b.shape[nd - 1])
    return false;
  const i64 m = a.shape[nd - 2], k = a.shape[nd - 1], n = b.shape[nd - 1];
  i64 batches = 1;
  for (int d = 0; d < nb; ++d) batches *= a.shape[d];
  if (batches == 0 || m == 0 || n == 0) return true;
  detail::activate_context(device);
  if (k == 0) {  // an empty sum: zeros (all-zero bytes are 0, +0.0 and false in every dtype)
    if (!out.is_c_contiguous()) return false;
    const auto& api = api_for_use();
    const Stream st = work_stream(device);
    check(need(api.cuMemsetD8Async, "cuMemsetD8Async")(
              static_cast<cu::CUdeviceptr>(reinterpret_cast<std::uintptr_t>(out.data)), 0,
              static_cast<std::size_t>(out.size()) * itemsize(out.dtype), static_cast<cu::CUstream>(st.handle())),
          "cuMemsetD8Async");
    return true;
  }
  if (loop_kernel_dtype(a.dtype)) return run_loop(device, a, b, out);
  if (!is_cublas_dtype(a.dtype)) return false;
  // The CPU backend computes what cuBLAS cannot; a slow path the user should hear of, once.
  if (cublas::library().api == nullptr) {
    log_once(LogLevel::warn, "float matmul and vecdot of GPU arrays run on the CPU (the data goes there and back): " +
                                 cublas::unavailable_reason());
    return false;
  }
  GemmPlan plan = plan_gemm(a, b, out, conj_a);
  if (plan.too_big) {
    log_once(LogLevel::warn,
             "float matmul and vecdot of GPU arrays with a dimension past 2^31 - 1 run on the CPU (the data goes "
             "there and back): cuBLAS takes 32-bit sizes");
    return false;
  }
  std::unique_ptr<Scratch> pa, pb, po;
  View a2 = a, b2 = b, o2 = out;
  if (plan.pack_a || plan.pack_b || plan.pack_out) {
    if (plan.pack_a) a2 = (pa = packed_copy(backend, a, nb))->view;
    if (plan.pack_b) b2 = (pb = packed_copy(backend, b, nb))->view;
    if (plan.pack_out) o2 = (po = scratch_for(backend, out, 0))->view;
    plan = plan_gemm(a2, b2, o2, conj_a);
    if (plan.too_big || plan.pack_a || plan.pack_b || plan.pack_out)
      throw Error("matmul: contiguous scratch is still not a cuBLAS layout (an xp bug)");
  }
  run_gemm(backend, device, plan.call, a2, b2, o2, precision);
  if (po) copy_view(backend, o2, out, out.ndim, out.shape);
  return true;  // the scratch goes back to the cache: later work on the stream comes after the gemm
}

}  // namespace

bool device_matmul(Backend& backend, const Device& device, const View& a, const View& b, const View& out,
                   MatmulPrecision precision) {
  return matmul_on_device(backend, device, a, b, out, precision, false);
}

bool device_vecdot(Backend& backend, const Device& device, const View& a, const View& b, const View& out) {
  // A complex copy (packing) adds an axis for the parts (copy_view).
  const int extra = is_complex(a.dtype) ? 2 : 1;
  if (a.ndim < 1 || b.ndim != a.ndim || out.ndim != a.ndim - 1 || a.ndim + extra > kMaxDims) return false;
  const int no = a.ndim - 1;
  for (int d = 0; d < a.ndim; ++d)
    if (b.shape[d] != a.shape[d] || (d < no && out.shape[d] != a.shape[d])) return false;
  // a (..., 1, k) @ b (..., k, 1) = out (..., 1, 1)
  const auto n2 = static_cast<std::size_t>(no + 2);
  std::vector<i64> as(n2), ast(n2), bs(n2), bst(n2), os(n2), ost(n2);
  for (int d = 0; d < no; ++d) {
    as[d] = bs[d] = os[d] = a.shape[d];
    ast[d] = a.strides[d];
    bst[d] = b.strides[d];
    ost[d] = out.strides[d];
  }
  const i64 k = a.shape[no];
  const auto r = static_cast<std::size_t>(no), c = r + 1;
  as[r] = 1;
  as[c] = k;
  ast[r] = 0;
  ast[c] = a.strides[no];
  bs[r] = k;
  bs[c] = 1;
  bst[r] = b.strides[no];
  bst[c] = 0;
  os[r] = os[c] = 1;
  ost[r] = ost[c] = 0;
  const View a2{a.data, a.dtype, no + 2, as.data(), ast.data()};
  const View b2{b.data, b.dtype, no + 2, bs.data(), bst.data()};
  const View o2{out.data, out.dtype, no + 2, os.data(), ost.data()};
  // Complex: sum(conj(a) * b), the conjugation done by cuBLAS (CUBLAS_OP_C on a).
  return matmul_on_device(backend, device, a2, b2, o2, MatmulPrecision::float32, is_complex(a.dtype));
}

}  // namespace xp::detail::cuda
