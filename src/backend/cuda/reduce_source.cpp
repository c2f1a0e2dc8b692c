// Reductions and cumulative sums as CUDA C++ source (reduce_source.hpp): the device code of
// device/reduce_*.cuh and device/scan.cuh, and per (op, dtype) the element definitions and the op
// struct R0 that the kernel bodies are generic over. The plans are reduce_plan.cpp's.
//
// The states and their combinations are the CPU backend's (backend/cpu/reduce.cpp), so that the
// answers agree: integer sums and products wrap in 64 bits (exact in any order); float sums carry
// each addition's rounding error (TwoSum, merged as the CPU merges two compensated sums), except
// float16 and bfloat16 sums and means, which add in double (see the sum's state); min and
// max take a later value only when it is strictly better or NaN; argmin and argmax keep the better
// value and, between equal values (or two NaNs), the smaller index, which makes their answer the
// first index of the extreme whatever the order of combination; any and all are or and and.
// Only additions and subtractions touch a compensated sum and the source is compiled with
// --fmad=false: nothing is contracted into an FMA.
#include "backend/cuda/reduce_source.hpp"

#include <algorithm>
#include <string>

#include "backend/cuda/ew_source.hpp"
#include "xp/error.hpp"
#include "xp_generated/device_code.hpp"

namespace xp::detail::cuda {
namespace {

using i64 = std::int64_t;

// ---- dtype facts ----

bool is_half(DType d) {
  return d == DType::float16 || d == DType::bfloat16;
}
bool is_float(DType d) {
  return kind(d) == DTypeKind::floating;
}
bool is_intlike(DType d) {  // bool and the integers
  return !is_float(d);
}
bool is_integer(DType d) {  // the integers, not bool
  return kind(d) == DTypeKind::signed_integer || kind(d) == DTypeKind::unsigned_integer;
}

// The type values are computed in (CPU: E::V).
const char* vtype(DType d) {
  if (is_half(d)) return "float";
  return ctype(d);
}
// Sums and products (CPU: SumAcc): integers in u64, float64 in double, the rest in float.
const char* sum_acc(DType d) {
  if (is_intlike(d)) return "u64";
  return d == DType::float64 ? "double" : "float";
}
// mean, var, std (CPU: MeanAcc): integers in double.
const char* mean_acc(DType d) {
  if (is_intlike(d)) return "double";
  return sum_acc(d);
}

// The element definitions of one dtype: S, V, xp_val, xp_truth.
std::string element_defs(DType d) {
  std::string s = "typedef ";
  s += ctype(d);
  s += " S;\ntypedef ";
  s += vtype(d);
  s += " V;\n";
  switch (d) {
    case DType::bool_:
      s += "XP_D V xp_val(S s) { return (u8)(s != 0 ? 1 : 0); }\n";
      break;
    // The 16-bit floats widen exactly: float16 by the hardware's conversion, bfloat16 by a shift.
    // A NaN stays a NaN (its payload is not kept: NaN results are compared as a class).
    case DType::float16:
      s += "XP_D V xp_val(S s) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(s)); return f; }\n";
      break;
    case DType::bfloat16:
      s += "XP_D V xp_val(S s) { return __uint_as_float((u32)s << 16); }\n";
      break;
    default:
      s += "XP_D V xp_val(S s) { return s; }\n";
      break;
  }
  if (is_half(d)) {
    s += "XP_D bool xp_truth(S s) { return (s & 0x7FFFu) != 0; }\n";  // NaN is true, -0 false
  } else {
    s += "XP_D bool xp_truth(S s) { return s != 0; }\n";
  }
  return s;
}

// A statement storing the value `expr` (of the accumulation type) as an element of dtype `out` at
// a.out + oo: 16-bit floats rounded from float32, everything else as computed.
std::string store_stmt(DType out, const std::string& expr) {
  const std::string at = "(a.out + oo)";
  if (out == DType::float16) return "*(u16*)" + at + " = xp_f32_to_f16((float)(" + expr + "));";
  if (out == DType::bfloat16) return "*(u16*)" + at + " = xp_f32_to_bf16((float)(" + expr + "));";
  return std::string("*(") + ctype(out) + "*)" + at + " = " + expr + ";";
}

// The largest and smallest value of V (the identities of min and max).
std::string v_extreme(DType d, bool largest) {
  switch (d) {
    case DType::bool_:
      return largest ? "(u8)1" : "(u8)0";
    case DType::int8:
      return largest ? "(i8)127" : "(i8)-128";
    case DType::int16:
      return largest ? "(i16)32767" : "(i16)-32768";
    case DType::int32:
      return largest ? "(i32)2147483647" : "(i32)(-2147483647 - 1)";
    case DType::int64:
      return largest ? "(i64)0x7FFFFFFFFFFFFFFFll" : "(i64)(-0x7FFFFFFFFFFFFFFFll - 1)";
    case DType::uint8:
      return largest ? "(u8)255" : "(u8)0";
    case DType::uint16:
      return largest ? "(u16)65535" : "(u16)0";
    case DType::uint32:
      return largest ? "0xFFFFFFFFu" : "0u";
    case DType::uint64:
      return largest ? "0xFFFFFFFFFFFFFFFFull" : "0ull";
    case DType::float64:
      return largest ? "__longlong_as_double(0x7FF0000000000000ll)"
                     : "__longlong_as_double((i64)0xFFF0000000000000ull)";
    default:  // float32 and the 16-bit floats (V = float)
      return largest ? "__uint_as_float(0x7F800000u)" : "__uint_as_float(0xFF800000u)";
  }
}

// The suffix of the SIMD intrinsics on 32-bit words of packed 8- or 16-bit integers ("" for other
// dtypes): s4, u4, s2 or u2.
std::string packed_suffix(DType d) {
  switch (d) {
    case DType::int8:
      return "s4";
    case DType::uint8:
      return "u4";
    case DType::int16:
      return "s2";
    case DType::uint16:
      return "u2";
    default:
      return {};
  }
}
// The SIMD min or max of those words ("" for other dtypes).
std::string packed_minmax(DType d, bool largest) {
  const std::string s = packed_suffix(d);
  return s.empty() ? s : (largest ? "__vmax" : "__vmin") + s;
}
// The SIMD "strictly greater" (largest) or "strictly less" compare of those words: all ones in the
// lanes where it holds.
std::string packed_compare(DType d, bool largest) {
  const std::string s = packed_suffix(d);
  return s.empty() ? s : (largest ? "__vcmpgt" : "__vcmplt") + s;
}

// The identity of packed_minmax: every element of the word the identity of min or max.
std::string packed_identity(DType d, bool largest) {
  const bool is_signed = d == DType::int8 || d == DType::int16;
  if (!is_signed) return largest ? "0u" : "0xFFFFFFFFu";
  if (itemsize(d) == 1) return largest ? "0x80808080u" : "0x7F7F7F7Fu";
  return largest ? "0x80008000u" : "0x7FFF7FFFu";
}

// A shuffle of one value of a C type (the small integers travel as an int).
std::string shfl_expr(const std::string& type, const std::string& value) {
  if (type == "u8" || type == "i8" || type == "u16" || type == "i16")
    return "(" + type + ")__shfl_down_sync(XP_FULL, (int)" + value + ", d)";
  return "__shfl_down_sync(XP_FULL, " + value + ", d)";
}

// The op of device/reduce_sum.cuh that computes op over d, "" when op_struct writes it: float sums
// and means (float16's and bfloat16's in double, xp_sum_wide; the others compensated, xp_sum_comp), and means of
// 32- and 64-bit integers (compensated, in double).
std::string sum_template(ReduceOp op, DType d) {
  if (op != ReduceOp::sum && op != ReduceOp::mean) return {};
  const bool mean = op == ReduceOp::mean;
  if (!is_float(d) && (!mean || itemsize(d) <= 2)) return {};
  if (is_half(d)) return mean ? "xp_sum_wide<true>" : "xp_sum_wide<false>";
  return std::string("xp_sum_comp<") + (mean ? mean_acc(d) : sum_acc(d)) + (mean ? ", true>" : ", false>");
}

// xp_store(at, v): v stored as an element of dtype `out` at address `at` (store_stmt's conversions),
// for the ops of device/reduce_sum.cuh.
std::string store_def(DType out) {
  std::string s = "template <class T> XP_D void xp_store(u64 at, T v) { ";
  if (out == DType::float16) {
    s += "*(u16*)at = xp_f32_to_f16((float)(v));";
  } else if (out == DType::bfloat16) {
    s += "*(u16*)at = xp_f32_to_bf16((float)(v));";
  } else {
    s += std::string("*(") + ctype(out) + "*)at = v;";
  }
  return s + " }\n";
}

// The op struct `name` (R0, or R1 for the second pass of var and std).
std::string op_struct(ReduceOp op, DType d, const std::string& name) {
  if (const std::string t = sum_template(op, d); !t.empty()) return "typedef " + t + " " + name + ";\n";
  const DType out = reduce_result_dtype(op, d);
  const bool fl = is_float(d);
  int packed = 0;            // R::kPack: 1 see xp_run_packed, 2 xp_run_packed_arg, 3 xp_run_tiles, 4 xp_run_packed_sum
  bool int_moments = false;  // R::kIntMoments: see xp_cols_vec_int_moments
  bool arg_run = false;      // R::kArgRun: see xp_cols_vec_arg
  std::string s = "struct " + name + " {\n";
  // Constructed for output m; the default for arrays of them.
  s += "  XP_D " + name + "() {}\n";
  const auto ctor = [&](const std::string& body) { s += "  XP_D " + name + "(const Args& a, i64 m) {" + body + "}\n"; };
  // The members that ops whose state is one value share: its type and identity, how an element is
  // added and two states merged, the warp shuffle, and the statement that stores a result.
  const auto scalar_state = [&](const std::string& type, const std::string& identity) {
    s += "  typedef " + type + " St;\n";
    ctor(" (void)a; (void)m; ");
    s += "  XP_D St id() const { return " + identity + "; }\n";
  };
  const auto add_merge = [&](const std::string& add, const std::string& merge) {
    s += "  XP_D void add(St& st, S x, i64) const { " + add + " }\n";
    s += "  XP_D St merge(St a, St b) const { return " + merge + "; }\n";
  };
  const auto scalar_shfl = [&](const std::string& type) {
    s += "  static XP_D St shfl(St a, int d) { return " + shfl_expr(type, "a") + "; }\n";
  };
  const auto finish = [&](const std::string& store) {
    s += "  XP_D void finish(const Args& a, i64, St st, i64 oo) const { " + store + " }\n";
  };
  // For 8- and 16-bit integers, the identity word and the SIMD min or max of words of packed
  // elements (min/max and argmin/argmax); false for other dtypes, which get neither.
  const auto packed_words = [&](DType t, bool largest) {
    const std::string f = packed_minmax(t, largest);
    if (f.empty()) return false;
    s += "  static XP_D u32 packed_id() { return " + packed_identity(t, largest) + "; }\n";
    s += "  static XP_D u32 packed(u32 a, u32 b) { return " + f + "(a, b); }\n";
    return true;
  };
  // For bool and 8- and 16-bit integers, R::vsum: the exact sum of a vector's W elements as a u64
  // (two's complement for the signed types), every partial sum within 32 bits.
  const auto packed_sum = [&](DType t) {
    std::string body;
    switch (t) {
      case DType::bool_:  // a byte counts 1 when it is not 0, as xp_val says
        body =
            "const u32 o = 0x01010101u; u32 c = __dp4a(__vcmpne4(x.x, 0u) & o, o, 0u); "
            "c = __dp4a(__vcmpne4(x.y, 0u) & o, o, c); c = __dp4a(__vcmpne4(x.z, 0u) & o, o, c); "
            "return (u64)__dp4a(__vcmpne4(x.w, 0u) & o, o, c);";
        break;
      case DType::uint8:
        body =
            "const u32 o = 0x01010101u; return (u64)__dp4a(x.w, o, __dp4a(x.z, o, __dp4a(x.y, o, __dp4a(x.x, o, "
            "0u))));";
        break;
      case DType::int8:
        body =
            "const int o = 0x01010101; return (u64)(i64)__dp4a((int)x.w, o, __dp4a((int)x.z, o, "
            "__dp4a((int)x.y, o, __dp4a((int)x.x, o, 0))));";
        break;
      case DType::uint16:
        body =
            "return (u64)((x.x & 0xFFFFu) + (x.x >> 16) + (x.y & 0xFFFFu) + (x.y >> 16) + (x.z & 0xFFFFu) + "
            "(x.z >> 16) + (x.w & 0xFFFFu) + (x.w >> 16));";
        break;
      case DType::int16:
        body =
            "return (u64)(i64)((i32)(i16)x.x + ((i32)x.x >> 16) + (i32)(i16)x.y + ((i32)x.y >> 16) + "
            "(i32)(i16)x.z + ((i32)x.z >> 16) + (i32)(i16)x.w + ((i32)x.w >> 16));";
        break;
      default:
        return false;
    }
    s += "  static XP_D u64 vsum(uint4 x) { " + body + " }\n";
    return true;
  };
  switch (op) {
    case ReduceOp::var:
    case ReduceOp::std: {
      // One read (device/reduce_moments.cuh): the state of a run is (n, mean as a pair h + l, M2 as a pair q + c).
      const std::string A = mean_acc(d);
      packed = 3;
      s += "  typedef " + A + " A;\n  struct St { A h, l, q, c; i64 n; };\n";
      if (const i64 run = reduce_int_moments_run(op, d); run > 0) {
        // Columns: exact integer sums of a thread's rows (xp_cols_vec_int_moments).
        int_moments = true;
        s += itemsize(d) == 1 ? "  typedef u32 QT;\n" : "  typedef u64 QT;\n";
        s += "  static constexpr i64 kRun = " + std::to_string(run) + ";\n";
      }
      ctor(" (void)a; (void)m; ");
      s += "  XP_D St id() const { St r; r.h = (A)0; r.l = (A)0; r.q = (A)0; r.c = (A)0; r.n = 0; return r; }\n";
      s += "  XP_D St merge(St a, St b) const { return xp_moments_merge(a, b); }\n";
      s += "  XP_D void add(St& st, S x, i64) const {\n";
      s += "    St b;\n    b.h = (A)xp_val(x);\n    b.l = (A)0;\n    b.q = (A)0;\n    b.c = (A)0;\n    b.n = 1;\n";
      s += "    st = xp_moments_merge(st, b);\n  }\n";
      s += "  template <int C> XP_D void tile(St& st, const V* v) const { st = xp_moments_merge(st, "
           "xp_moments_tile<St, A, C>(v)); }\n";
      s += "  static XP_D St shfl(St a, int d) {\n";
      for (const char* f : {"h", "l", "q", "c", "n"})
        s += std::string("    a.") + f + " = __shfl_down_sync(XP_FULL, a." + f + ", d);\n";
      s += "    return a;\n  }\n";
      s += "  XP_D void finish(const Args& a, i64, St st, i64 oo) const {\n";
      s += "    const A q = xp_finite(st.q) ? st.q + st.c : st.q;\n";
      // A mean that is not finite (an infinity or a NaN in the input) gives NaN, as x - mean does
      // in the CPU's second pass.
      s += "    A v = a.dof > 0 && xp_finite(st.h) ? xp_div(q, (A)a.dof) : xp_nan((A)0);\n";
      if (op == ReduceOp::std) s += "    v = xp_sqrt(v);\n";
      s += "    " + store_stmt(out, "v") + "\n  }\n";
      break;
    }
    case ReduceOp::sum:
    case ReduceOp::mean:
      if (op == ReduceOp::sum && !fl) {
        scalar_state("u64", "0");
        add_merge("st += (u64)xp_val(x);", "a + b");
        scalar_shfl("u64");
        finish("*(u64*)(a.out + oo) = st;");
        if (packed_sum(d)) packed = 4;
      } else if (op == ReduceOp::mean && !fl && itemsize(d) <= 2) {
        // bool and 8- and 16-bit integers: the sum of integers (in 64 bits, wrapping as the sum
        // does), then one conversion. The double state below adds integers too, exactly while the
        // sum stays below 2^53 (2^37 elements of 16 bits), so both give the same bits; this one keeps
        // a word per accumulator instead of a compensated pair (mean of 8-bit rows of 1 KiB: 150
        // registers with the pairs).
        scalar_state("u64", "0");
        add_merge("st += (u64)xp_val(x);", "a + b");
        scalar_shfl("u64");
        const bool sgn = kind(d) == DTypeKind::signed_integer;
        finish(store_stmt(out, std::string("xp_div((double)(") + (sgn ? "i64" : "u64") + ")st, (double)a.N)"));
        if (packed_sum(d)) packed = 4;
      } else {
        throw ValueError("reduce: float sums are sum_template's");  // op_struct returns first
      }
      break;
    case ReduceOp::prod: {
      scalar_state(sum_acc(d), "(St)1");
      add_merge("st = st * (St)xp_val(x);", "a * b");
      scalar_shfl(sum_acc(d));
      finish(store_stmt(out, "st"));
      break;
    }
    case ReduceOp::min:
    case ReduceOp::max: {
      const bool mx = op == ReduceOp::max;
      const std::string cmp = mx ? "x > v" : "x < v";
      scalar_state("V", v_extreme(d, !mx));
      // v, or x when x is strictly better or NaN (a NaN once taken stays)
      if (fl) {
        s += "  static XP_D V pick(V v, V x) { return ((" + cmp + ") || (x != x)) ? x : v; }\n";
      } else {
        s += "  static XP_D V pick(V v, V x) { return (" + cmp + ") ? x : v; }\n";
      }
      add_merge("st = pick(st, xp_val(x));", "pick(a, b)");
      if (packed_words(d, mx)) packed = 1;  // 8- and 16-bit integers: one SIMD min or max per word
      scalar_shfl(vtype(d));
      finish(store_stmt(out, "st"));
      break;
    }
    case ReduceOp::argmin:
    case ReduceOp::argmax: {
      const bool mx = op == ReduceOp::argmax;
      const std::string cmp = mx ? "x > v" : "x < v";
      s += "  struct St { V v; i64 i; };\n";
      ctor(" (void)a; (void)m; ");
      s += "  XP_D St id() const { St r; r.v = " + v_extreme(d, !mx) + "; r.i = 0x7FFFFFFFFFFFFFFFll; return r; }\n";
      if (fl) {
        s += "  static XP_D bool better(V x, V v) { return (" + cmp + ") || (x != x && v == v); }\n";
      } else {
        s += "  static XP_D bool better(V x, V v) { return " + cmp + "; }\n";
      }
      s += "  static XP_D St choose(St a, St b) {\n";
      s += "    if (better(b.v, a.v)) return b;\n    if (better(a.v, b.v)) return a;\n";
      s += "    return b.i < a.i ? b : a;  // equal values, or two NaNs: the first index\n  }\n";
      s += "  XP_D void add(St& st, S x, i64 k) const { St c; c.v = xp_val(x); c.i = k; st = choose(st, c); }\n";
      s += "  XP_D St merge(St a, St b) const { return choose(a, b); }\n";
      if (packed_words(d, mx)) {
        packed = 2;  // 8- and 16-bit integers: a vector's extreme from its packed words
        // All ones in each lane where x is strictly better than b.
        s += "  static XP_D u32 packed_better(u32 x, u32 b) { return " + packed_compare(d, mx) + "(x, b); }\n";
      } else {
        arg_run = true;  // the other dtypes: a value and a 32-bit row per output over columns in vectors
      }
      s += "  static XP_D St shfl(St a, int d) {\n    a.v = " + shfl_expr(vtype(d), "a.v") + ";\n";
      s += "    a.i = __shfl_down_sync(XP_FULL, a.i, d);\n    return a;\n  }\n";
      finish("*(i64*)(a.out + oo) = st.i;");
      break;
    }
    case ReduceOp::any:
    case ReduceOp::all: {
      const bool all = op == ReduceOp::all;
      scalar_state("u32", all ? "1u" : "0u");
      add_merge(std::string("st ") + (all ? "&=" : "|=") + " (xp_truth(x) ? 1u : 0u);", all ? "a & b" : "a | b");
      scalar_shfl("u32");
      finish("*(u8*)(a.out + oo) = (u8)st;");
      if (itemsize(d) == 1) {
        // bool and 8-bit integers (R::kPack 1, as min and max): a word's four truths at once, each
        // byte 1 where the element is not 0, and the words anded or ored.
        packed = 1;
        s += std::string("  static XP_D u32 packed_id() { return ") + (all ? "0x01010101u" : "0u") + "; }\n";
        s += std::string("  static XP_D u32 packed(u32 a, u32 b) { return a ") + (all ? "&" : "|") +
             " (__vcmpne4(b, 0u) & 0x01010101u); }\n";
      }
      break;
    }
  }
  s += "  static constexpr int kPack = " + std::to_string(packed) + ";\n";
  s += std::string("  static constexpr bool kIntMoments = ") + (int_moments ? "true" : "false") + ";\n";
  s += std::string("  static constexpr bool kArgRun = ") + (arg_run ? "true" : "false") + ";\n};\n";
  return s;
}

bool valid(DType d) {
  return static_cast<unsigned>(d) <= static_cast<unsigned>(DType::float64);
}

}  // namespace

std::string reduce_key(ReduceOp op, DType in, ReduceFamily family, const GeneratedValue* value) {
  std::string k =
      std::string("xp-reduce-6:") + reduce_op_name(op) + ":" + std::string(name(in)) + ":" + family_name(family);
  if (value != nullptr) k += "|" + value->key;
  return k;
}

std::string reduce_kernel_name(ReduceFamily f, bool variant) {
  std::string n;
  switch (f) {
    case ReduceFamily::rows_vector:
      n = variant ? "xp_rows_tile" : "xp_rows_vec";
      break;
    case ReduceFamily::rows_strided:
      n = "xp_rows_strided";
      break;
    case ReduceFamily::columns:
      n = variant ? "xp_cols_vec" : "xp_cols";
      break;
  }
  return n;
}

namespace {
// The tile kernel's __launch_bounds__: 256 threads and, for the plain float32 and float64 sum and
// mean, at least kTileMinBlocks resident blocks per multiprocessor: 40 registers and the fastest
// float32 sum (bench/nvcc/xp_sum_kernels.cu against fewer, more and none; docs/performance.md,
// "kTileMinBlocks"). float16 adds in double (64 registers, no spill) and is fastest with no minimum.
// The float32 and float64 ops fit 40 registers without spilling (ptxas -v); the others (wider
// states, 16 elements per vector) and fused values (which compute their elements) would spill, and
// keep the compiler's choice.
constexpr int kTileMinBlocks = 6;
std::string tile_bounds(ReduceOp op, DType in, bool fused) {
  const bool small_state =
      (op == ReduceOp::sum || op == ReduceOp::mean) && (in == DType::float32 || in == DType::float64);
  return small_state && !fused ? "256, " + std::to_string(kTileMinBlocks) : std::string("256");
}
}  // namespace

std::string reduce_source(ReduceOp op, DType in, ReduceFamily family, const GeneratedValue* value) {
  if (!valid(in)) throw ValueError("reduce: unknown dtype");
  if (value != nullptr && value->dtype != in) throw ValueError("reduce: the fused value's dtype is not the input's");
  std::string s;
  if (value != nullptr) {
    s += value->source;  // the types, the 16-bit conversions, xp_fargs, xp_fused_at, xp_fused_vec
    s += "#define XP_FUSED 1\n";
    s += device_code::reduce_common_cuh;
    s += "// " + reduce_key(op, in, family, value) + "\n";
  } else {
    s += "// generated by xp: reductions\n";
    s += device_code::types_cuh;
    s += device_code::half_cuh;
    s += device_code::reduce_common_cuh;
    s += "// " + reduce_key(op, in, family) + "\n";
  }
  s += device_code::reduce_geometry_cuh;
  s += element_defs(in);
  s += store_def(reduce_result_dtype(op, in));
  if (op == ReduceOp::var || op == ReduceOp::std) s += device_code::reduce_moments_cuh;
  if (!sum_template(op, in).empty()) s += device_code::reduce_sum_cuh;
  s += op_struct(op, in, "R0");
  s += "#define XP_WIDE_FINISH_STATES " + std::to_string(kWideFinishStates) + "\n";
  s += device_code::reduce_bodies_cuh;
  const char* body = family == ReduceFamily::rows_vector    ? "xp_rows_vec_body"
                     : family == ReduceFamily::rows_strided ? "xp_rows_strided_body"
                                                            : "xp_cols_body";
  const bool cols = family == ReduceFamily::columns;
  const std::string loads = family == ReduceFamily::rows_vector ? ", " + std::to_string(rows_vec_loads(op, in)) : "";
  s += "extern \"C\" __global__ void __launch_bounds__(256) " + reduce_kernel_name(family) + "(const Args a) { " +
       body + "<R0" + loads + ">(a); }\n";
  if (family == ReduceFamily::rows_vector) {
    s += "extern \"C\" __global__ void __launch_bounds__(" + tile_bounds(op, in, value != nullptr) + ") " +
         reduce_kernel_name(family, true) + "(const Args a) { xp_rows_tile_body<R0>(a); }\n";
    s += "extern \"C\" __global__ void __launch_bounds__(256) " + std::string(kRowsEachKernel) +
         "(const Args a) { xp_rows_each_body<R0" + loads + ">(a); }\n";
  }
  if (cols)
    s += "extern \"C\" __global__ void __launch_bounds__(256) " + reduce_kernel_name(family, true) +
         "(const Args a) { xp_cols_vec_body<R0, " + std::to_string(kColsVecLoads) + ", " +
         std::to_string(cols_vec_bytes(op, in)) + ">(a); }\n";
  s += "extern \"C\" __global__ void __launch_bounds__(256) " + reduce_finish_name() + "(const Args a) { " +
       (cols ? "xp_finish_cols_body<R0, " + std::to_string(kColsThinFinishStates) + ">"
             : std::string("xp_finish_body<R0>")) +
       "(a); }\n";
  s += "extern \"C\" __global__ void __launch_bounds__(256) " + reduce_finish_name(true) +
       "(const Args a) { xp_finish_wide_body<R0" + (cols ? ", true" : ", false") + ">(a); }\n";
  return s;
}

std::string reduce_finish_name(bool wide) {
  return wide ? "xp_finish_wide" : "xp_finish";
}

std::string scan_key(DType in, DType out, ReduceOp op) {
  std::string k = "xp-scan-2:";
  if (op == ReduceOp::prod) k += "prod:";
  k += name(in);
  if (out != reduce_result_dtype(op, in)) {
    k += '>';
    k += name(out);
  }
  return k;
}

std::string scan_source(DType in, DType out, ReduceOp op) {
  const bool prod = op == ReduceOp::prod;
  if (op != ReduceOp::sum && !prod) throw ValueError("cumulative: only sum and prod scan");
  const std::string fn = prod ? "cumulative_prod" : "cumulative_sum";
  if (!valid(in) || !valid(out)) throw ValueError(fn + ": unknown dtype");
  const bool narrow = out != reduce_result_dtype(op, in);
  if (narrow && !(is_integer(in) && out == in))
    throw ValueError(fn + ": no kernel writes " + std::string(name(out)) + (prod ? " products of " : " sums of ") +
                     std::string(name(in)));
  std::string s = prod ? "// generated by xp: a cumulative product\n" : "// generated by xp: a cumulative sum\n";
  s += device_code::types_cuh;
  s += device_code::half_cuh;
  s += device_code::reduce_common_cuh;
  s += "// " + scan_key(in, out, op) + "\n";
  s += element_defs(in);
  s += std::string("typedef ") + sum_acc(in) + " A;\n";
  s += "XP_D void xp_put(u64 at, A v) { ";
  if (narrow) {
    s += "*(S*)at = (S)v;";  // the low bits of the 64-bit running sum: wraparound in S
  } else if (out == DType::float16) {
    s += "*(u16*)at = xp_f32_to_f16(v);";
  } else if (out == DType::bfloat16) {
    s += "*(u16*)at = xp_f32_to_bf16(v);";
  } else {
    s += "*(A*)at = v;";  // u64 is the bits of the int64 / uint64 result
  }
  s += " }\n";
  s += is_float(in) ? "#define XP_SCAN_SERIAL 1\n" : "#define XP_SCAN_SERIAL 0\n";
  s += prod ? "#define XP_SCAN_ID ((A)1)\n#define XP_SCAN_OP(x, y) ((x) * (y))\n"
            : "#define XP_SCAN_ID ((A)0)\n#define XP_SCAN_OP(x, y) ((x) + (y))\n";
  s += device_code::scan_cuh;
  return s;
}

const char* scan_kernel_name(ScanFamily f) noexcept {
  return f == ScanFamily::lines ? "xp_scan_lines" : "xp_scan_tiles";
}

}  // namespace xp::detail::cuda
