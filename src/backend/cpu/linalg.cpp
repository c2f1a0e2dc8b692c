#include "backend/cpu/linalg.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/blas.hpp"
#include "runtime/parallel.hpp"
#include "xp/error.hpp"

// How results are made, and what they depend on:
//  - float32 / float64 (and float16 / bfloat16, converted to float32 and rounded once at the end)
//    go to cblas_sgemm / cblas_dgemm unless the matrices are small (kSmallWork) or the call comes
//    from one of xp's threads. OpenBLAS's bits depend on its kernel (the CPU it picked) and may
//    depend on its thread count; for a given machine and thread count they are repeatable.
//  - Everything else runs xp's loop: every output element is summed in k order, one product at a
//    time, so its bits depend on the inputs only (not on threads, blocking or strides).
//  - Integers are summed in an unsigned type at least as wide (uint32 up to 32 bits, uint64 for 64):
//    the low bits of a sum of products do not depend on the width, so truncating once gives NumPy's
//    wrap-around, and no signed overflow happens in C++. bool is the or of ands.
//  - vecdot never calls BLAS: a pairwise sum for floats (error O(log k)), thread independent.

namespace xp::detail::cpu {

namespace {

using i64 = std::int64_t;

// Below this many multiply-adds per matrix xp's loop is used: for such small matrices it is as fast
// as an OpenBLAS call or faster, and it spreads a batch over xp's threads (bench/cpu_matmul.cpp;
// docs/performance.md, "kSmallWork").
constexpr double kSmallWork = 8.0 * 8 * 8;
// About this many multiply-adds per parallel_for chunk.
constexpr double kGrainWork = 1 << 16;

// Storage type S and compute type C of each dtype, and the conversions between them.
template <class S, class C>
struct IntTraits {
  using Storage = S;
  using Compute = C;
  static constexpr bool kFloat = false, kLogical = false;
  static constexpr bool kDirect = std::is_same_v<S, C>;  // the loop may read and write S in place
  static C in(S s) noexcept { return static_cast<C>(s); }
  static S out(C c) noexcept { return static_cast<S>(c); }  // modular (C++20)
};
struct BoolTraits {
  using Storage = std::uint8_t;
  using Compute = std::uint8_t;
  static constexpr bool kFloat = false, kLogical = true, kDirect = false;
  static std::uint8_t in(std::uint8_t s) noexcept { return s != 0 ? 1 : 0; }
  static std::uint8_t out(std::uint8_t c) noexcept { return c != 0 ? 1 : 0; }
};
template <class S>
struct FloatTraits {
  using Storage = S;
  using Compute = S;
  static constexpr bool kFloat = true, kLogical = false, kDirect = true;
  static S in(S s) noexcept { return s; }
  static S out(S c) noexcept { return c; }
};
struct HalfTraits {
  using Storage = std::uint16_t;
  using Compute = float;
  static constexpr bool kFloat = true, kLogical = false, kDirect = false;
  static float in(std::uint16_t s) noexcept { return half_bits_to_float(s); }
  static std::uint16_t out(float c) noexcept { return float_to_half_bits(c); }
};
struct BFloatTraits {
  using Storage = std::uint16_t;
  using Compute = float;
  static constexpr bool kFloat = true, kLogical = false, kDirect = false;
  static float in(std::uint16_t s) noexcept { return bfloat16_bits_to_float(s); }
  static std::uint16_t out(float c) noexcept { return float_to_bfloat16_bits(c); }
};

template <class F>
void dispatch(DType t, F&& f) {
  switch (t) {
    case DType::bool_:
      return f(BoolTraits{});
    case DType::int8:
      return f(IntTraits<std::int8_t, std::uint32_t>{});
    case DType::int16:
      return f(IntTraits<std::int16_t, std::uint32_t>{});
    case DType::int32:
      return f(IntTraits<std::int32_t, std::uint32_t>{});
    case DType::int64:
      return f(IntTraits<std::int64_t, std::uint64_t>{});
    case DType::uint8:
      return f(IntTraits<std::uint8_t, std::uint32_t>{});
    case DType::uint16:
      return f(IntTraits<std::uint16_t, std::uint32_t>{});
    case DType::uint32:
      return f(IntTraits<std::uint32_t, std::uint32_t>{});
    case DType::uint64:
      return f(IntTraits<std::uint64_t, std::uint64_t>{});
    case DType::float16:
      return f(HalfTraits{});
    case DType::bfloat16:
      return f(BFloatTraits{});
    case DType::float32:
      return f(FloatTraits<float>{});
    case DType::float64:
      return f(FloatTraits<double>{});
    case DType::complex64:
    case DType::complex128:
      break;  // complex matmul goes to the BLAS (cgemm, zgemm)
  }
  throw TypeError("linalg: " + std::string(name(t)) + " is not supported here");
}

template <class S>
S load(const std::byte* p) noexcept {
  S s;
  std::memcpy(&s, p, sizeof s);
  return s;
}
template <class S>
void store(std::byte* p, S s) noexcept {
  std::memcpy(p, &s, sizeof s);
}

template <class T, class C = typename T::Compute>
inline C mac(C acc, C a, C b) noexcept {
  if constexpr (T::kLogical) {
    return static_cast<C>(acc | (a & b));
  } else {
    return static_cast<C>(acc + a * b);
  }
}

// One matrix of a batch: strides in bytes.
struct Mat {
  std::byte* p;
  i64 rows, cols, rs, cs;
};
Mat transposed(const Mat& m) {
  return {m.p, m.cols, m.rows, m.cs, m.rs};
}

// The leading dimension in elements when `m` is row-major with a unit column stride, rows that do
// not overlap and an aligned start (a stride along an extent of 1 does not matter); 0 otherwise.
i64 row_major_ld(const Mat& m, std::size_t itemsize) {
  const i64 e = static_cast<i64>(itemsize);
  if (reinterpret_cast<std::uintptr_t>(m.p) % itemsize != 0) return 0;
  if (m.cols > 1 && m.cs != e) return 0;
  if (m.rows <= 1) return std::max<i64>(m.cols, 1);
  if (m.rs <= 0 || m.rs % e != 0 || m.rs / e < std::max<i64>(m.cols, 1)) return 0;
  return m.rs / e;
}

template <class T, class C = typename T::Compute>
void pack(const Mat& m, std::vector<C>& dst) {
  using S = typename T::Storage;
  dst.resize(static_cast<std::size_t>(m.rows * m.cols));
  for (i64 r = 0; r < m.rows; ++r) {
    const std::byte* row = m.p + r * m.rs;
    C* d = dst.data() + r * m.cols;
    for (i64 c = 0; c < m.cols; ++c) d[c] = T::in(load<S>(row + c * m.cs));
  }
}

template <class T, class C = typename T::Compute>
void unpack(const C* src, i64 ld, const Mat& m) {
  using S = typename T::Storage;
  for (i64 r = 0; r < m.rows; ++r) {
    std::byte* row = m.p + r * m.rs;
    const C* s = src + r * ld;
    for (i64 c = 0; c < m.cols; ++c) store<S>(row + c * m.cs, T::out(s[c]));
  }
}

// Per-thread temporaries. A packed operand is kept with its source pointer: a batch dimension
// broadcast with stride 0 hands the same matrix again, and it is not packed twice.
template <class C>
struct Scratch {
  std::vector<C> a, b, c;
  const std::byte* a_src = nullptr;
  const std::byte* b_src = nullptr;
};

// An operand for the loop: row-major with a leading dimension, in place when possible.
template <class T, class C = typename T::Compute>
const C* loop_operand(const Mat& m, std::vector<C>& buf, const std::byte*& src, i64& ld) {
  if constexpr (T::kDirect) {
    if (const i64 l = row_major_ld(m, sizeof(C)); l != 0) {
      ld = l;
      return reinterpret_cast<const C*>(m.p);
    }
  }
  ld = m.cols;
  if (src != m.p) {
    pack<T>(m, buf);
    src = m.p;
  }
  return buf.data();
}

// ---- xp's loop: C[i0:i1, :] = A @ B, cache-blocked. R rows of C take one row of B at a time
// (an axpy per row, which compilers vectorize), so each element is still summed in k order.

constexpr i64 kKc = 256;  // k per block: a block of B (kKc x kNc) stays in L2, R rows of C in L1
constexpr i64 kNc = 512;
constexpr int kMr = 4;

template <class T, int R, class C = typename T::Compute>
void row_block(const C* a, i64 lda, const C* b, i64 ldb, C* c, i64 ldc, i64 j0, i64 j1, i64 pk, bool first) {
  const i64 w = j1 - j0;
  C* rows[R];
  for (int r = 0; r < R; ++r) {
    rows[r] = c + r * ldc + j0;
    if (first) std::fill(rows[r], rows[r] + w, C(0));
  }
  for (i64 p = 0; p < pk; ++p) {
    const C* __restrict bp = b + p * ldb + j0;
    for (int r = 0; r < R; ++r) {
      const C av = a[r * lda + p];
      C* __restrict cr = rows[r];
      for (i64 j = 0; j < w; ++j) cr[j] = mac<T>(cr[j], av, bp[j]);
    }
  }
}

template <class T, class C = typename T::Compute>
void gemm_rows(const C* a, i64 lda, const C* b, i64 ldb, C* c, i64 ldc, i64 i0, i64 i1, i64 n, i64 k) {
  for (i64 j0 = 0; j0 < n; j0 += kNc) {
    const i64 j1 = std::min(n, j0 + kNc);
    for (i64 p0 = 0; p0 < k; p0 += kKc) {
      const i64 pk = std::min(k - p0, kKc);
      const bool first = p0 == 0;
      i64 i = i0;
      for (; i + kMr <= i1; i += kMr)
        row_block<T, kMr>(a + i * lda + p0, lda, b + p0 * ldb, ldb, c + i * ldc, ldc, j0, j1, pk, first);
      for (; i < i1; ++i)
        row_block<T, 1>(a + i * lda + p0, lda, b + p0 * ldb, ldb, c + i * ldc, ldc, j0, j1, pk, first);
    }
  }
}

template <class T, class C = typename T::Compute>
void loop_one(const Mat& a, const Mat& b, const Mat& o, Scratch<C>& s, bool parallel_rows) {
  const i64 m = a.rows, k = a.cols, n = b.cols;
  i64 lda = 0, ldb = 0, ldc = 0;
  const C* pa = loop_operand<T>(a, s.a, s.a_src, lda);
  const C* pb = loop_operand<T>(b, s.b, s.b_src, ldb);
  C* pc = nullptr;
  if constexpr (T::kDirect) {
    if ((ldc = row_major_ld(o, sizeof(C))) != 0) pc = reinterpret_cast<C*>(o.p);
  }
  const bool direct = pc != nullptr;
  if (!direct) {
    s.c.resize(static_cast<std::size_t>(m * n));
    pc = s.c.data();
    ldc = n;
  }
  if (parallel_rows) {
    const double per_block = static_cast<double>(kMr) * static_cast<double>(n) * static_cast<double>(k);
    const i64 grain = std::max<i64>(1, static_cast<i64>(kGrainWork / per_block));
    parallel_for((m + kMr - 1) / kMr, grain, [&](i64 b0, i64 b1) {
      gemm_rows<T>(pa, lda, pb, ldb, pc, ldc, b0 * kMr, std::min(m, b1 * kMr), n, k);
    });
  } else {
    gemm_rows<T>(pa, lda, pb, ldb, pc, ldc, 0, m, n, k);
  }
  if (!direct) unpack<T>(pc, ldc, o);
}

// ---- OpenBLAS: float32 / float64, and 16-bit floats through float32 temporaries.

template <class C>
struct BlasOperand {
  const C* p;
  int ld;
  int trans;
};

template <class T, class C = typename T::Compute>
BlasOperand<C> blas_operand(const Mat& m, std::vector<C>& buf, const std::byte*& src) {
  if constexpr (T::kDirect) {
    if (const i64 l = row_major_ld(m, sizeof(C)); l != 0 && l <= INT_MAX)
      return {reinterpret_cast<const C*>(m.p), static_cast<int>(l), kCblasNoTrans};
    if (const i64 l = row_major_ld(transposed(m), sizeof(C)); l != 0 && l <= INT_MAX)
      return {reinterpret_cast<const C*>(m.p), static_cast<int>(l), kCblasTrans};
  }
  if (src != m.p) {
    pack<T>(m, buf);
    src = m.p;
  }
  return {buf.data(), static_cast<int>(std::max<i64>(m.cols, 1)), kCblasNoTrans};
}

template <class T, class C = typename T::Compute>
void blas_one(const BlasLibrary& lib, Mat a, Mat b, Mat o, Scratch<C>& s) {
  i64 ldc = 0;
  if constexpr (T::kDirect) {
    ldc = row_major_ld(o, sizeof(C));
    if (ldc == 0 || ldc > INT_MAX) {
      // A column-major output is written in place as C^T = B^T A^T.
      if (const i64 l = row_major_ld(transposed(o), sizeof(C)); l != 0 && l <= INT_MAX) {
        const Mat at = transposed(a);
        a = transposed(b);
        b = at;
        o = transposed(o);
        ldc = l;
      } else {
        ldc = 0;
      }
    }
  }
  const BlasOperand<C> pa = blas_operand<T>(a, s.a, s.a_src);
  const BlasOperand<C> pb = blas_operand<T>(b, s.b, s.b_src);
  const i64 m = a.rows, k = a.cols, n = b.cols;
  C* pc = nullptr;
  if (ldc != 0) {
    pc = reinterpret_cast<C*>(o.p);
  } else {
    s.c.resize(static_cast<std::size_t>(m * n));
    pc = s.c.data();
  }
  const int ldc_int = static_cast<int>(ldc != 0 ? ldc : n);
  const auto mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  if constexpr (std::is_same_v<C, float>) {
    lib.sgemm(kCblasRowMajor, pa.trans, pb.trans, mi, ni, ki, 1.0f, pa.p, pa.ld, pb.p, pb.ld, 0.0f, pc, ldc_int);
  } else {
    lib.dgemm(kCblasRowMajor, pa.trans, pb.trans, mi, ni, ki, 1.0, pa.p, pa.ld, pb.p, pb.ld, 0.0, pc, ldc_int);
  }
  count_blas_call();
  if (ldc == 0) unpack<T>(pc, n, o);
}

// ---- matmul

i64 batch_offset(const View& v, int nb, i64 index) {
  i64 off = 0;
  for (int d = nb - 1; d >= 0; --d) {
    off += (index % v.shape[d]) * v.strides[d];
    index /= v.shape[d];
  }
  return off;
}

std::string shape_text(const View& v) {
  std::string s = "(";
  for (int i = 0; i < v.ndim; ++i) s += (i ? ", " : "") + std::to_string(v.shape[i]);
  return s + (v.ndim == 1 ? ",)" : ")");
}

void check_matmul(const View& a, const View& b, const View& out) {
  const auto fail = [&](const std::string& why) {
    throw ValueError("matmul: " + why + " (a " + shape_text(a) + ", b " + shape_text(b) + ", out " + shape_text(out) +
                     ")");
  };
  if (a.ndim < 2 || b.ndim != a.ndim || out.ndim != a.ndim) fail("the views need one number of dimensions, >= 2");
  if (a.dtype != b.dtype || a.dtype != out.dtype)
    fail("one dtype for all three views (a " + std::string(name(a.dtype)) + ", b " + std::string(name(b.dtype)) +
         ", out " + std::string(name(out.dtype)) + ")");
  const int nd = a.ndim;
  for (int d = 0; d < nd - 2; ++d)
    if (b.shape[d] != a.shape[d] || out.shape[d] != a.shape[d]) fail("batch shapes differ");
  if (b.shape[nd - 2] != a.shape[nd - 1]) fail("a's last dimension is not b's second to last");
  if (out.shape[nd - 2] != a.shape[nd - 2] || out.shape[nd - 1] != b.shape[nd - 1]) fail("out is not (..., m, n)");
}

template <class T>
void matmul_typed(const View& a, const View& b, const View& out, i64 batches) {
  using C = typename T::Compute;
  const int nd = a.ndim, nb = nd - 2;
  const i64 m = a.shape[nd - 2], k = a.shape[nd - 1], n = b.shape[nd - 1];
  const auto mat = [&](const View& v, i64 batch) {
    return Mat{v.data + batch_offset(v, nb, batch), v.shape[nd - 2], v.shape[nd - 1], v.strides[nd - 2],
               v.strides[nd - 1]};
  };
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const GemmPath path = gemm_path();
  if constexpr (T::kFloat) {
    const bool fits = m <= INT_MAX && n <= INT_MAX && k <= INT_MAX;
    if (fits && (path == GemmPath::blas || (path == GemmPath::automatic && work >= kSmallWork))) {
      if (const BlasLibrary* lib = blas_for_call()) {
        Scratch<C> s;
        for (i64 i = 0; i < batches; ++i) blas_one<T>(*lib, mat(a, i), mat(b, i), mat(out, i), s);
        return;
      }
    }
  }
  if (batches > 1 && batches >= num_threads()) {
    const i64 grain = std::max<i64>(1, static_cast<i64>(kGrainWork / work));
    parallel_for(batches, grain, [&](i64 b0, i64 b1) {
      Scratch<C> s;
      for (i64 i = b0; i < b1; ++i) loop_one<T>(mat(a, i), mat(b, i), mat(out, i), s, false);
    });
  } else {
    Scratch<C> s;
    for (i64 i = 0; i < batches; ++i) loop_one<T>(mat(a, i), mat(b, i), mat(out, i), s, true);
  }
}

// ---- vecdot

// Pairwise sum of products, as NumPy's pairwise_sum: eight partial sums up to 128 terms, halves above.
template <class T, class C = typename T::Compute>
C pairwise_dot(const std::byte* a, i64 sa, const std::byte* b, i64 sb, i64 n) {
  using S = typename T::Storage;
  const auto prod = [&](i64 i) { return static_cast<C>(T::in(load<S>(a + i * sa)) * T::in(load<S>(b + i * sb))); };
  if (n < 8) {
    C r = prod(0);
    for (i64 i = 1; i < n; ++i) r += prod(i);
    return r;
  }
  if (n <= 128) {
    C r[8];
    for (int t = 0; t < 8; ++t) r[t] = prod(t);
    i64 i = 8;
    for (; i + 8 <= n; i += 8)
      for (int t = 0; t < 8; ++t) r[t] += prod(i + t);
    C res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += prod(i);
    return res;
  }
  i64 half = n / 2;
  half -= half % 8;
  return pairwise_dot<T>(a, sa, b, sb, half) + pairwise_dot<T>(a + half * sa, sa, b + half * sb, sb, n - half);
}

template <class T, class C = typename T::Compute>
C dot(const std::byte* a, i64 sa, const std::byte* b, i64 sb, i64 n) {
  using S = typename T::Storage;
  if (n == 0) return C(0);
  if constexpr (T::kFloat) {
    return pairwise_dot<T>(a, sa, b, sb, n);
  } else {
    C acc = 0;
    for (i64 i = 0; i < n; ++i) acc = mac<T>(acc, T::in(load<S>(a + i * sa)), T::in(load<S>(b + i * sb)));
    return acc;
  }
}

template <class T>
void vecdot_typed(const View& a, const View& b, const View& out, i64 count) {
  using S = typename T::Storage;
  const int nd = a.ndim, no = nd - 1;
  const i64 k = a.shape[no], sa = a.strides[no], sb = b.strides[no];
  const i64 grain = std::max<i64>(1, static_cast<i64>(kGrainWork / static_cast<double>(std::max<i64>(k, 1))));
  parallel_for(count, grain, [&](i64 i0, i64 i1) {
    std::vector<i64> idx(static_cast<std::size_t>(no));
    i64 oa = 0, ob = 0, oo = 0, rest = i0;
    for (int d = no - 1; d >= 0; --d) {
      idx[d] = rest % out.shape[d];
      rest /= out.shape[d];
      oa += idx[d] * a.strides[d];
      ob += idx[d] * b.strides[d];
      oo += idx[d] * out.strides[d];
    }
    for (i64 i = i0; i < i1; ++i) {
      store<S>(out.data + oo, T::out(dot<T>(a.data + oa, sa, b.data + ob, sb, k)));
      for (int d = no - 1; d >= 0; --d) {
        oa += a.strides[d];
        ob += b.strides[d];
        oo += out.strides[d];
        if (++idx[d] < out.shape[d]) break;
        oa -= out.shape[d] * a.strides[d];
        ob -= out.shape[d] * b.strides[d];
        oo -= out.shape[d] * out.strides[d];
        idx[d] = 0;
      }
    }
  });
}

}  // namespace

void matmul(const View& a, const View& b, const View& out) {
  check_matmul(a, b, out);
  const int nd = a.ndim;
  const i64 m = a.shape[nd - 2], k = a.shape[nd - 1], n = b.shape[nd - 1];
  i64 batches = 1;
  for (int d = 0; d < nd - 2; ++d) batches *= a.shape[d];
  if (batches == 0 || m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: zeros (all-zero bytes are 0, +0.0 and false in every dtype)
    const std::size_t size = itemsize(out.dtype);
    for (i64 bi = 0; bi < batches; ++bi) {
      std::byte* base = out.data + batch_offset(out, nd - 2, bi);
      for (i64 i = 0; i < m; ++i)
        for (i64 j = 0; j < n; ++j) std::memset(base + i * out.strides[nd - 2] + j * out.strides[nd - 1], 0, size);
    }
    return;
  }
  dispatch(a.dtype, [&](auto traits) { matmul_typed<decltype(traits)>(a, b, out, batches); });
}

void vecdot(const View& a, const View& b, const View& out) {
  const auto fail = [&](const std::string& why) {
    throw ValueError("vecdot: " + why + " (a " + shape_text(a) + ", b " + shape_text(b) + ", out " + shape_text(out) +
                     ")");
  };
  if (a.ndim < 1 || b.ndim != a.ndim || out.ndim != a.ndim - 1)
    fail("a and b need one shape, out that without its last axis");
  for (int d = 0; d < a.ndim; ++d)
    if (b.shape[d] != a.shape[d] || (d < out.ndim && out.shape[d] != a.shape[d])) fail("shapes differ");
  if (a.dtype != b.dtype || a.dtype != out.dtype) fail("one dtype for all three views");
  const i64 count = out.size();
  if (count == 0) return;
  dispatch(a.dtype, [&](auto traits) { vecdot_typed<decltype(traits)>(a, b, out, count); });
}

}  // namespace xp::detail::cpu
