// Complex values in generated CUDA kernels (src/backend/cuda/ew_source.cpp pasting
// src/backend/complex_math.cuh, the same functions the CPU backend's ew_complex.cpp runs):
// - without a GPU: the generator accepts exactly the complex combinations the CPU backend has
//   kernels for, and every one of them compiles with NVRTC (both layouts, the vector variant);
// - on a GPU (CudaComplexGpu.*): every complex operation, cast, complex(re, im), where and a
//   complex64 constant on special and random values against the CPU backend's tile kernels: the
//   exact operations bit for bit (NaN as a class), the functions with the same special-value classes
//   and within the CPU's bound plus the GPU's (complex_cases.hpp).
//
// Every test process gets its own empty kernel cache folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/tile_ops.hpp"
#include "backend/cuda/ew_source.hpp"
#include "backend/ir.hpp"
#include "complex_cases.hpp"
#include "nvrtc_answers.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

using xp::DType;
using xp::detail::FusedProgram;
using xp::detail::Instr;
using xp::detail::Op;
using xp::detail::View;
namespace cg = xp::detail::cuda;
namespace cpu = xp::detail::cpu;
using namespace xp_complex_cases;

const xp_test::ProcessCache g_process_cache;

constexpr DType kAll[] = {DType::bool_,    DType::int8,    DType::int16,   DType::int32,     DType::int64,
                          DType::uint8,    DType::uint16,  DType::uint32,  DType::uint64,    DType::float16,
                          DType::bfloat16, DType::float32, DType::float64, DType::complex64, DType::complex128};
constexpr DType kComplex[] = {DType::complex64, DType::complex128};

bool is_complex(DType d) {
  return d == DType::complex64 || d == DType::complex128;
}

// A FusedProgram over a 1-d shape of contiguous views.
class Built {
 public:
  explicit Built(std::int64_t n) : shape_{n} {
    p.ndim = 1;
    p.shape = shape_.data();
  }
  int input(DType d) {
    p.inputs.push_back(view(d));
    return emit({Op::load, d, -1, -1, -1, p.inputs.size() - 1});
  }
  int constant(DType d, std::uint64_t bits) { return emit({Op::constant, d, -1, -1, -1, bits}); }
  int op(Op o, DType result, int a, int b = -1, int c = -1) { return emit({o, result, a, b, c, 0}); }
  void output(int instr, DType d) {
    p.outputs.push_back(view(d));
    p.output_instr.push_back(instr);
  }
  FusedProgram p;

 private:
  View view(DType d) {
    strides_.push_back({static_cast<std::int64_t>(xp::itemsize(d))});
    View v;
    v.dtype = d;
    v.ndim = 1;
    v.shape = shape_.data();
    v.strides = strides_.back().data();
    return v;
  }
  int emit(Instr i) {
    p.code.push_back(i);
    return static_cast<int>(p.code.size()) - 1;
  }
  std::vector<std::int64_t> shape_;
  std::deque<std::vector<std::int64_t>> strides_;
};

DType result_of(Op op, DType c) {
  switch (op) {
    case Op::real:
    case Op::imag:
    case Op::abs:
      return xp::detail::component_dtype(c);
    case Op::isnan:
    case Op::isinf:
    case Op::isfinite:
    case Op::equal:
    case Op::not_equal:
      return DType::bool_;
    default:
      return c;
  }
}

// Every operation on complex dtype c (the functions or the exact ones), each stored to an output.
std::unique_ptr<Built> ops_group(DType c, std::int64_t n, bool math) {
  auto b = std::make_unique<Built>(n);
  const int x = b->input(c), y = b->input(c), cond = b->input(DType::bool_);
  const DType comp = xp::detail::component_dtype(c);
  for (int o = 0; o < xp::detail::kOpCount; ++o) {
    const Op op = static_cast<Op>(o);
    if (op == Op::cast || op == Op::complex) continue;
    const DType r = result_of(op, c);
    if (!cg::supported(op, c, r) || is_complex_math(op) != math) continue;
    const int arity = xp::detail::op_arity(op);
    const int k = op == Op::where ? b->op(op, r, cond, x, y) : arity == 2 ? b->op(op, r, x, y) : b->op(op, r, x);
    b->output(k, r);
  }
  if (!math) {
    const int re = b->input(comp), im = b->input(comp);
    b->output(b->op(Op::complex, c, re, im), c);
    if (c == DType::complex64) {  // a complex64 constant: {re, im} in the low and the high word
      const std::uint64_t bits =
          std::bit_cast<std::uint32_t>(-1.5f) | std::uint64_t{std::bit_cast<std::uint32_t>(0.25f)} << 32;
      const int k = b->constant(c, bits);
      b->output(k, c);
      b->output(b->op(Op::add, c, k, x), c);
    }
  }
  return b;
}

// Casts from complex c to every dtype and from every dtype to c, as cast instructions and as
// converting stores.
std::unique_ptr<Built> casts_group(DType c, std::int64_t n) {
  auto b = std::make_unique<Built>(n);
  const int x = b->input(c);
  for (DType to : kAll) b->output(b->op(Op::cast, to, x), to);
  for (DType to : kAll)
    if (to != c) b->output(x, to);
  for (DType from : kAll) {
    if (from == c) continue;
    const int y = b->input(from);
    b->output(b->op(Op::cast, c, y), c);
    b->output(y, c);
  }
  return b;
}

struct Group {
  std::string name;
  std::unique_ptr<Built> built;
};
std::vector<Group> all_groups(std::int64_t n) {
  std::vector<Group> g;
  for (DType c : kComplex) {
    const std::string t(xp::name(c));
    g.push_back({"exact ops on " + t, ops_group(c, n, false)});
    g.push_back({"functions on " + t, ops_group(c, n, true)});
    g.push_back({"casts to and from " + t, casts_group(c, n)});
  }
  return g;
}

cg::Variant variant(cg::Layout layout, bool vector, bool index64) {
  cg::Variant v;
  v.layout = layout;
  v.vector = vector;
  v.index64 = index64;
  return v;
}

xp::ProgramOptions options_for(const cg::Generated& g) {
  xp::ProgramOptions o;
  o.name = g.kernel_name + ".cu";
  o.options = cg::nvrtc_options();
  return o;
}

}  // namespace

TEST(CudaComplex, SupportsExactlyWhatTheCpuBackendComputes) {
  int count = 0;
  for (int o = 0; o < xp::detail::kOpCount; ++o) {
    const Op op = static_cast<Op>(o);
    for (DType a : kAll) {
      for (DType r : kAll) {
        if (!is_complex(a) && !is_complex(r) && op != Op::complex) continue;
        const bool cpu_has = cpu::tile_fn(op, a, r) != nullptr;
        EXPECT_EQ(cg::supported(op, a, r), cpu_has)
            << xp::detail::op_name(op) << " " << xp::name(a) << " -> " << xp::name(r);
        count += cpu_has ? 1 : 0;
      }
    }
  }
  // 53 per complex dtype (test_complex_elementwise's count), 13 casts into each, complex(re, im) twice.
  EXPECT_EQ(count, 2 * 53 + 2 * 13 + 2);
}

TEST(CudaComplex, SourcesOfRealProgramsLeaveTheComplexFunctionsOut) {
  Built b(5);
  b.output(b.op(Op::exp, DType::float32, b.input(DType::float32)), DType::float32);
  EXPECT_EQ(cg::generate(b.p, cg::Layout::contiguous).source.find("xp_cm_exp"), std::string::npos);
  Built c(5);
  c.output(c.op(Op::exp, DType::complex64, c.input(DType::complex64)), DType::complex64);
  const auto g = cg::generate(c.p, cg::Layout::contiguous);
  EXPECT_NE(g.source.find("xp_cm_exp"), std::string::npos);
  EXPECT_NE(g.key.find("complex64"), std::string::npos);
}

TEST(CudaComplexCompile, EveryCombinationCompilesForSm90) {
  XP_REQUIRE_NVRTC();
  // The functions' groups (the slow ones to compile) in the contiguous layout, the others in the
  // strided one too (the loads and stores of 8- and 16-byte elements differ there).
  for (const Group& group : all_groups(37)) {
    const bool functions = group.name.rfind("functions", 0) == 0;
    for (const auto& v : {variant(cg::Layout::contiguous, true, false), variant(cg::Layout::strided, false, true)}) {
      if (functions && v.layout == cg::Layout::strided) continue;
      const auto g = cg::generate(group.built->p, v);
      try {
        const auto answer = xp_test::nvrtc_answer(g.source, options_for(g), xp::Arch::sm(90));
        EXPECT_EQ(answer.log.find("warning"), std::string::npos) << group.name << ":\n" << answer.log;
        const auto& names = answer.names;
        EXPECT_NE(std::find(names.begin(), names.end(), g.kernel_name), names.end()) << group.name;
      } catch (const xp::CompileError& e) {
        ADD_FAILURE() << group.name << " (" << g.key << "):\n" << e.log();
      }
    }
  }
}

// ---- on a GPU ----

namespace {

// Component values: zeros, ones, infinities, NaNs, extremes, branch points, then random ones.
template <class T>
std::vector<T> component_specials() {
  const T inf = std::numeric_limits<T>::infinity();
  return {T(0),
          T(-0.0),
          T(1),
          T(-1),
          T(0.5),
          T(-2),
          T(1e-5),
          T(30),
          T(-30),
          inf,
          -inf,
          std::numeric_limits<T>::quiet_NaN(),
          std::numeric_limits<T>::denorm_min(),
          std::numeric_limits<T>::min(),
          std::numeric_limits<T>::max(),
          -std::numeric_limits<T>::max(),
          T(1.5707963267948966),
          T(sizeof(T) == 4 ? 88.5 : 709.5),
          T(0.7),
          T(3)};
}

// n values of dtype d (little-endian bytes): complex ones are pairs of component specials, then
// random; other dtypes random bits (floats: also ordinary magnitudes).
std::vector<std::byte> make_values(DType d, std::int64_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  const std::size_t item = xp::itemsize(d);
  std::vector<std::byte> out(static_cast<std::size_t>(n) * item);
  auto fill = [&]<class T>(T) {
    const auto s = component_specials<T>();
    const auto m = static_cast<std::int64_t>(s.size());
    std::uniform_real_distribution<T> u(-4, 4);
    for (std::int64_t i = 0; i < n; ++i) {
      T p[2];
      if (i < m * m) {
        p[0] = s[(i + seed) % m];
        p[1] = s[(i / m) % m];
      } else if (gen() % 4 == 0) {
        p[0] = std::bit_cast<T>(static_cast<Bits<T>>(gen()));
        p[1] = std::bit_cast<T>(static_cast<Bits<T>>(gen()));
      } else {
        p[0] = u(gen);
        p[1] = u(gen);
      }
      std::memcpy(out.data() + i * item, p, item);
    }
  };
  if (d == DType::complex64) {
    fill(0.0f);
  } else if (d == DType::complex128) {
    fill(0.0);
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint64_t bits = gen();
      if (d == DType::bool_) bits %= 2;
      if (d == DType::float32 && gen() % 2 == 0)
        bits = std::bit_cast<std::uint32_t>(static_cast<float>(gen() % 2001) / 8);
      if (d == DType::float64 && gen() % 2 == 0)
        bits = std::bit_cast<std::uint64_t>(static_cast<double>(gen() % 2001) / 8);
      std::memcpy(out.data() + i * item, &bits, item);
    }
  }
  return out;
}

DType operand_of(const FusedProgram& p, const Instr& ins) {
  return ins.op == Op::where ? p.code[ins.b].dtype : p.code[ins.a].dtype;
}

// The program instruction by instruction with the CPU backend's tile kernels.
std::vector<std::vector<std::byte>> cpu_reference(const FusedProgram& p, const std::vector<std::vector<std::byte>>& in,
                                                  std::int64_t n) {
  std::vector<std::vector<std::byte>> val(p.code.size());
  for (std::size_t k = 0; k < p.code.size(); ++k) {
    const Instr& ins = p.code[k];
    const std::size_t item = xp::itemsize(ins.dtype);
    if (ins.op == Op::load) {
      val[k] = in[ins.imm];
      continue;
    }
    val[k].resize(static_cast<std::size_t>(n) * item);
    if (ins.op == Op::constant) {
      for (std::int64_t i = 0; i < n; ++i) std::memcpy(val[k].data() + i * item, &ins.imm, item);
      continue;
    }
    const auto fn = cpu::tile_fn(ins.op, operand_of(p, ins), ins.dtype);
    EXPECT_NE(fn, nullptr);
    if (fn == nullptr) continue;
    const void* args[3] = {val[ins.a].data(), ins.b >= 0 ? val[ins.b].data() : nullptr,
                           ins.c >= 0 ? val[ins.c].data() : nullptr};
    fn(args, val[k].data(), n);
  }
  std::vector<std::vector<std::byte>> out;
  for (std::size_t o = 0; o < p.outputs.size(); ++o) {
    const Instr& ins = p.code[p.output_instr[o]];
    const DType to = p.outputs[o].dtype;
    const auto& src = val[p.output_instr[o]];
    if (ins.dtype == to) {
      out.push_back(src);
      continue;
    }
    out.emplace_back(static_cast<std::size_t>(n) * xp::itemsize(to));
    const void* args[3] = {src.data(), nullptr, nullptr};
    cpu::tile_fn(Op::cast, ins.dtype, to)(args, out.back().data(), n);
  }
  return out;
}

bool float_nan(DType d, std::uint64_t b) {
  if (d == DType::float16) return (b & 0x7FFF) > 0x7C00;
  if (d == DType::bfloat16) return (b & 0x7FFF) > 0x7F80;
  if (d == DType::float32) return (b & 0x7FFFFFFF) > 0x7F800000;
  if (d == DType::float64) return (b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
  return false;
}

// GPU and CPU parts of one element, components of type T: exact ones bit for bit (NaN as a class),
// functions by class and within the bounds (pow scaled by 1 + |b||log a|, as test_complex_elementwise).
template <class T>
bool element_ok(Op op, DType c, bool math, const T* g, const T* w, int parts, const T* a, const T* b, double& worst) {
  if (!math) {
    for (int q = 0; q < parts; ++q)
      if (!same_bits(g[q], w[q])) return false;
    return true;
  }
  // pow = exp(b log a): an error of log a grows by |b| |log a|. A zero b scales by nothing (0 times
  // the infinite log of a zero or infinite a was NaN, which failed equal results); an infinite
  // scale (a zero or infinite a) leaves the finite results to the class check below. The sign of
  // an infinite or zero part is the sign of the cosine or sine of the phase Im(b log a); where the
  // phase's rounding error (a few ulp of the terms that make it) could carry it across an axis, or
  // passes a radian, the operands do not determine that sign at this precision: the class check
  // then ignores signs.
  long double scale = 0;
  bool loose = false;
  if (op == Op::pow) {
    const long double la = std::log(std::hypot(static_cast<long double>(a[0]), static_cast<long double>(a[1])));
    const long double arg = std::atan2(static_cast<long double>(a[1]), static_cast<long double>(a[0]));
    const long double nb = std::hypot(static_cast<long double>(b[0]), static_cast<long double>(b[1]));
    scale = nb == 0 ? 0 : nb * std::hypot(la, arg);
    const long double phase = b[0] * arg + b[1] * la;
    const long double error = 4 * std::numeric_limits<T>::epsilon() * (std::fabs(b[0] * arg) + std::fabs(b[1] * la));
    const long double quarter = std::acos(-1.0L) / 2;
    const long double off_axis = std::fabs(phase - quarter * std::nearbyint(phase / quarter));
    loose = std::isfinite(static_cast<double>(phase)) && (error >= 1 || off_axis <= error);
  }
  for (int q = 0; q < parts; ++q)
    if (!same_class(g[q], w[q], loose)) return false;
  for (int q = 0; q < parts; ++q)
    if (!std::isfinite(g[q]) || !std::isfinite(w[q])) return true;  // by class only
  double err = parts == 1     ? ulp_distance(g[0], w[0])
               : normwise(op) ? normwise_ulp(g[0], g[1], w[0], w[1])
                              : std::max(ulp_distance(g[0], w[0]), ulp_distance(g[1], w[1]));
  if (op == Op::pow) err = std::isfinite(static_cast<double>(scale)) ? err / static_cast<double>(1 + scale) : 0;
  worst = std::max(worst, err);
  return err <= 2 * cpu_ulp_bound(op, c) + cuda_extra_ulp(c);
}

void compare_output(const std::string& what, const FusedProgram& p, std::size_t o, const std::vector<std::byte>& got,
                    const std::vector<std::byte>& want, const std::vector<std::vector<std::byte>>& in, std::int64_t n,
                    double& worst) {
  const Instr& ins = p.code[p.output_instr[o]];
  const DType d = p.outputs[o].dtype;
  const std::size_t item = xp::itemsize(d);
  const DType operand = operand_of(p, ins);
  const bool math = is_complex_math(ins.op) && is_complex(operand) && ins.dtype == d;
  std::int64_t bad = 0, first = -1;
  for (std::int64_t i = 0; i < n; ++i) {
    bool ok;
    if (is_complex(d) || math) {
      const DType comp = is_complex(d) ? xp::detail::component_dtype(d) : d;
      const int parts = is_complex(d) ? 2 : 1;
      const std::byte* a = ins.a >= 0 && p.code[ins.a].op == Op::load ? in[p.code[ins.a].imm].data() : nullptr;
      const std::byte* b = ins.b >= 0 && p.code[ins.b].op == Op::load ? in[p.code[ins.b].imm].data() : nullptr;
      const std::size_t oi = xp::itemsize(operand);
      if (comp == DType::float32) {
        float g[2], w[2], x[2] = {}, y[2] = {};
        std::memcpy(g, got.data() + i * item, item);
        std::memcpy(w, want.data() + i * item, item);
        if (a != nullptr && oi == 8) std::memcpy(x, a + i * oi, 8);
        if (b != nullptr && oi == 8) std::memcpy(y, b + i * oi, 8);
        ok = element_ok(ins.op, DType::complex64, math, g, w, parts, x, y, worst);
      } else {
        double g[2], w[2], x[2] = {}, y[2] = {};
        std::memcpy(g, got.data() + i * item, item);
        std::memcpy(w, want.data() + i * item, item);
        if (a != nullptr && oi == 16) std::memcpy(x, a + i * oi, 16);
        if (b != nullptr && oi == 16) std::memcpy(y, b + i * oi, 16);
        ok = element_ok(ins.op, DType::complex128, math, g, w, parts, x, y, worst);
      }
    } else {
      std::uint64_t g = 0, w = 0;
      std::memcpy(&g, got.data() + i * item, item);
      std::memcpy(&w, want.data() + i * item, item);
      ok = g == w || (float_nan(d, g) && float_nan(d, w));
    }
    if (!ok && first < 0) first = i;
    bad += ok ? 0 : 1;
  }
  if (bad == 0) return;
  std::ostringstream msg;
  msg << what << ": output " << o << " (" << xp::detail::op_name(ins.op) << " -> " << xp::name(ins.dtype)
      << ", stored as " << xp::name(d) << "): " << bad << " of " << n
      << " elements differ from the CPU's; the first at " << first;
  // The first one's parts, GPU then CPU, and its complex operands (when loaded), as hex floats.
  const auto parts_of = [&](const std::byte* data, DType t) {
    std::ostringstream os;
    os << std::hexfloat;
    const DType c = is_complex(t) ? xp::detail::component_dtype(t) : t;
    const int k = is_complex(t) ? 2 : 1;
    for (int q = 0; q < k; ++q) {
      if (c == DType::float32) {
        float v;
        std::memcpy(&v, data + q * 4, 4);
        os << (q ? ", " : "") << v;
      } else if (c == DType::float64) {
        double v;
        std::memcpy(&v, data + q * 8, 8);
        os << (q ? ", " : "") << v;
      } else {
        os << "(" << xp::name(t) << ")";
      }
    }
    return os.str();
  };
  const std::size_t fi = static_cast<std::size_t>(first);
  msg << "\n  gpu (" << parts_of(got.data() + fi * item, d) << ")  cpu (" << parts_of(want.data() + fi * item, d)
      << ")";
  for (const int operand_index : {ins.a, ins.b}) {
    if (operand_index < 0 || p.code[operand_index].op != Op::load) continue;
    const DType t = p.inputs[p.code[operand_index].imm].dtype;
    msg << "  operand (" << parts_of(in[p.code[operand_index].imm].data() + fi * xp::itemsize(t), t) << ")";
  }
  ADD_FAILURE() << msg.str();
}

void run_on_gpu(const FusedProgram& p, cg::Variant v, const xp::Device& dev, std::int64_t n) {
  const auto g = cg::generate(p, v);
  xp::Program prog(g.source, options_for(g));
  const xp::Kernel k = prog.kernel(g.kernel_name, dev);
  auto bytes = cg::pack_arguments(p, g.variant, n);
  ASSERT_EQ(bytes.size(), g.argument_bytes);
  const auto shape = cg::launch_shape(n, g, xp::gpu_info(dev).sm_count);
  void* args[1] = {bytes.data()};
  const std::size_t sizes[1] = {bytes.size()};
  k.launch_packed({.grid = shape.grid, .block = shape.block}, args, sizes, 1);
  xp::Stream::default_for(dev).synchronize();
}

}  // namespace

TEST(CudaComplexGpu, EveryCombinationMatchesTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device dev = xp::Device::cuda(0);
  const std::int64_t n = 5003;
  for (Group& group : all_groups(n)) {
    FusedProgram& p = group.built->p;
    std::vector<std::vector<std::byte>> host;
    std::vector<xp::Buffer> in_buf, out_buf;
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      host.push_back(make_values(p.inputs[i].dtype, n, 7 + static_cast<unsigned>(i)));
      in_buf.push_back(xp::Buffer::from(dev, host.back()));
      p.inputs[i].data = reinterpret_cast<std::byte*>(in_buf.back().address());
    }
    for (std::size_t o = 0; o < p.outputs.size(); ++o) {
      out_buf.emplace_back(dev, static_cast<std::size_t>(n) * xp::itemsize(p.outputs[o].dtype));
      p.outputs[o].data = reinterpret_cast<std::byte*>(out_buf.back().address());
    }
    const auto want = cpu_reference(p, host, n);
    double worst = 0;
    for (const auto& v : {cg::variant_of(p), variant(cg::Layout::contiguous, false, true),
                          variant(cg::Layout::strided, false, false)}) {
      if (v.layout == cg::Layout::strided && cg::generate(p, v).argument_bytes > cg::kMaxArgumentBytes) continue;
      for (auto& b : out_buf) b.fill_bytes(0x5A);
      run_on_gpu(p, v, dev, n);
      for (std::size_t o = 0; o < p.outputs.size(); ++o) {
        std::vector<std::byte> got(out_buf[o].size());
        out_buf[o].copy_to_host(got.data(), got.size());
        compare_output(group.name, p, o, got, want[o], host, n, worst);
      }
    }
    if (worst > 0) std::printf("[ ulp ] cuda vs cpu, %s: %g\n", group.name.c_str(), worst);
  }
}

namespace {

// Operations through the public API, each exact or not.
struct ApiOp {
  const char* name;
  xp::Array (*fn)(const xp::Array&, const xp::Array&);
  bool exact;
};
const ApiOp kApiOps[] = {
    {"a * b + conj(a)", [](const xp::Array& a, const xp::Array& b) { return a * b + xp::conj(a); }, true},
    {"a / b - 1j", [](const xp::Array& a, const xp::Array& b) { return a / b - std::complex<double>(0, 1); }, true},
    {"real(a) + imag(b)", [](const xp::Array& a, const xp::Array& b) { return xp::real(a) + xp::imag(b); }, true},
    {"a == b", [](const xp::Array& a, const xp::Array& b) { return xp::equal(a, b) | xp::isnan(a); }, true},
    {"round(a), as complex64",
     [](const xp::Array& a, const xp::Array&) { return xp::round(a).astype(DType::complex64); }, true},
    {"exp(a)", [](const xp::Array& a, const xp::Array&) { return xp::exp(a); }, false},
    {"sqrt(a) * log(b)", [](const xp::Array& a, const xp::Array& b) { return xp::sqrt(a) * xp::log(b); }, false},
    {"abs(atanh(a))", [](const xp::Array& a, const xp::Array&) { return xp::abs(xp::atanh(a)); }, false},
};

}  // namespace

// The same expressions on arrays on the GPU and on the CPU (fused programs in both backends).
TEST(CudaComplexGpu, ArraysMatchTheCpu) {
  XP_REQUIRE_GPU();
  const xp::Device gpu = xp::Device::cuda(0), host = xp::Device::cpu();
  const std::int64_t n = 3001;
  const auto av = make_values(DType::complex128, n, 21), bv = make_values(DType::complex128, n, 22);
  std::vector<std::complex<double>> a(n), b(n);
  std::memcpy(a.data(), av.data(), av.size());
  std::memcpy(b.data(), bv.data(), bv.size());
  for (const ApiOp& op : kApiOps) {
    const xp::Array on_cpu = op.fn(xp::asarray(a, std::nullopt, host), xp::asarray(b, std::nullopt, host));
    const xp::Array on_gpu =
        op.fn(xp::asarray(a, std::nullopt, gpu), xp::asarray(b, std::nullopt, gpu)).to_device(host);
    ASSERT_EQ(on_gpu.dtype(), on_cpu.dtype()) << op.name;
    const DType d = on_cpu.dtype();
    const xp::Array g = on_gpu.copy(), w = on_cpu.copy();
    if (d == DType::bool_) {
      EXPECT_EQ(std::memcmp(g.data(), w.data(), static_cast<std::size_t>(n)), 0) << op.name;
      continue;
    }
    const bool wide = d == DType::complex128 || d == DType::float64;
    const int parts = (d == DType::complex64 || d == DType::complex128) ? 2 : 1;
    std::int64_t bad = 0;
    double worst = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      bool ok = true;
      if (wide) {  // complex128 or float64 (a function's result): normwise, 64 ulp of |w| for the chain
        double x[2] = {}, y[2] = {};
        std::memcpy(x, static_cast<const std::byte*>(g.data()) + i * 8 * parts, 8 * parts);
        std::memcpy(y, static_cast<const std::byte*>(w.data()) + i * 8 * parts, 8 * parts);
        bool finite = true;
        for (int q = 0; q < parts; ++q) {
          ok = ok && (op.exact ? same_bits(x[q], y[q]) : same_class(x[q], y[q], false));
          finite = finite && std::isfinite(x[q]) && std::isfinite(y[q]);
        }
        if (!op.exact && ok && finite) {
          const double e = normwise_ulp(x[0], x[1], y[0], y[1]);
          worst = std::max(worst, e);
          ok = e <= 64;
        }
      } else {
        float x[2], y[2];  // complex64: an exact result
        std::memcpy(x, static_cast<const std::byte*>(g.data()) + i * 8, 8);
        std::memcpy(y, static_cast<const std::byte*>(w.data()) + i * 8, 8);
        ok = same_bits(x[0], y[0]) && same_bits(x[1], y[1]);
      }
      bad += ok ? 0 : 1;
    }
    // Chains of functions: 64 ulp of |result| between the devices; the single functions' own bounds
    // are EveryCombinationMatchesTheCpu's business.
    EXPECT_EQ(bad, 0) << op.name << " (worst " << worst << " ulp)";
  }
}
