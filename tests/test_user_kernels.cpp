// xp::ElementwiseKernel and xp::ReductionKernel (public API): parameter lists and their errors, the
// binding of placeholders, broadcasting, out= and scalars, the generated source compiled by NVRTC
// without a GPU, and each kernel run on the CPU compared with the same computation through xp's
// array API (bit for bit where the operations are exactly rounded). UserKernelsGpu.* (label gpu)
// run the same kernels on cuda:0 and compare with the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

namespace {

// This process's kernel cache, or the one a parent test names for its children.
struct Cache {
  xp_test::ProcessCache own;
  Cache() {
    if (const char* c = std::getenv("XP_TEST_USER_KERNELS_CACHE")) ::setenv("XP_CACHE_DIR", c, 1);
  }
};
const Cache g_process_cache;

using xp::Array;
using xp::DType;

// A ValueError (or TypeError, ...) whose text contains every one of `parts`.
template <class E, class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another exception: " << e.what();
  }
}

Array cpu_data(const xp::Shape& shape, DType t, double scale = 0.37, double shift = -5) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return (xp::arange(0, n, 1, DType::float64, xp::Device::cpu()) * scale + shift).astype(t).reshape(shape);
}

template <class T>
std::vector<std::uint8_t> bytes_of(const Array& a) {
  const std::vector<T> v = a.to_vector<T>();
  std::vector<std::uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
void expect_same(const Array& got, const Array& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(std::vector<std::int64_t>(got.shape().begin(), got.shape().end()),
            std::vector<std::int64_t>(want.shape().begin(), want.shape().end()));
  EXPECT_EQ(bytes_of<T>(got), bytes_of<T>(want));
}

void expect_close(const Array& got, const Array& want, double rtol) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.size(), want.size());
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], w[i], rtol * std::max(1.0, std::fabs(w[i]))) << "at " << i;
}

// Kernels on the CPU need the host C++ compiler: without one the tests that run kernels there
// report a skip (a failure under XP_TEST_REQUIRE_HOST_CXX=1).
#define XP_REQUIRE_CPU_KERNELS()                                                                               \
  do {                                                                                                         \
    const ::xp::HostCompilerInfo info_ = ::xp::host_compiler_info();                                           \
    if (!info_.available) XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_HOST_CXX", "no host C++ compiler: " + info_.error); \
  } while (0)

// ---- parameter lists -------------------------------------------------------------------------

TEST(UserKernels, ParameterListsThatDoNotParseAreValueErrors) {
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T x y", "T z", "z = x", "k"); }, {"in_params", "'T x y'"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T", "T z", "z = 1", "k"); }, {"in_params", "'T'"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T x,, T y", "T z", "z = x", "k"); }, {"in_params", "''"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T x", "T 2z", "z = x", "k"); }, {"out_params", "'2z'"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T x, T x", "T z", "z = x", "k"); }, {"'x'", "twice"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T x", "T x", "x = 1", "k"); }, {"'x'", "twice"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T i", "T z", "z = i", "k"); }, {"'i'"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T xp_x", "T z", "z = 1", "k"); }, {"xp_"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T x", "T z", "z = x", "my-kernel"); }, {"'my-kernel'"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T x", "T z", "  ", "k"); }, {"operation", "empty"});
  expect_error<xp::ValueError>([] { xp::ElementwiseKernel("T x", "", "x", "k"); }, {"no output"});
  expect_error<xp::ValueError>([] { xp::ReductionKernel("T a", "T y", "a", "a + b", "y = a", "0", "r"); },
                               {"'a'", "reduced values"});
  expect_error<xp::ValueError>([] { xp::ReductionKernel("T x", "T y", "x", "a + b", "y = a", "", "r"); },
                               {"identity", "empty"});
  // What parses: raw parameters, spaces, no inputs.
  const xp::ElementwiseKernel k("  raw T w ,T x", "int32 z,  float64 q ", "z = 1; q = 2", "ok");
  EXPECT_EQ(k.nin(), 2);
  EXPECT_EQ(k.nout(), 2);
  EXPECT_EQ(k.name(), "ok");
  EXPECT_EQ(xp::ElementwiseKernel("", "T z", "z = 0", "none").nin(), 0);
}

TEST(UserKernels, UnknownAndUnsupportedTypesAreTypeErrors) {
  expect_error<xp::TypeError>([] { xp::ElementwiseKernel("flaot32 x", "T z", "z = x", "k"); },
                              {"unknown type name 'flaot32'"});
  expect_error<xp::TypeError>([] { xp::ElementwiseKernel("T x", "TT z", "z = x", "k"); }, {"'TT'"});
  expect_error<xp::TypeError>([] { xp::ElementwiseKernel("float16 x", "T z", "z = x", "k"); }, {"float16"});
  expect_error<xp::TypeError>([] { xp::ElementwiseKernel("complex64 x", "T z", "z = x", "k"); }, {"complex64"});
  expect_error<xp::TypeError>(
      [] {
        xp::ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "r",
                            xp::ReductionKernelOptions{.reduce_type = "flt"});
      },
      {"reduce_type", "'flt'"});
  expect_error<xp::TypeError>(
      [] {
        xp::ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "r",
                            xp::ReductionKernelOptions{.reduce_type = "U"});
      },
      {"reduce_type U"});
  // An array of an unsupported dtype for a placeholder.
  const xp::ElementwiseKernel k("T x", "T z", "z = x", "k");
  const Array h = xp::zeros({3}, DType::float16, xp::Device::cpu());
  expect_error<xp::TypeError>([&] { k({h}); }, {"float16", "'x'"});
}

// ---- binding, shapes and out= ---------------------------------------------------------------

TEST(UserKernels, APlaceholderBoundToTwoDtypesNamesBothArguments) {
  const xp::ElementwiseKernel k("T x, T y", "T z", "z = x * y + 1", "fma1");
  const Array a = cpu_data({4}, DType::float32), b = cpu_data({4}, DType::int32);
  expect_error<xp::TypeError>([&] { k({a, b}); }, {"placeholder T", "float32", "'x'", "int32", "'y'"});
  // An out array binds too: T from x is float32, from z float64.
  const Array z = xp::zeros({4}, DType::float64, xp::Device::cpu());
  expect_error<xp::TypeError>([&] { k({a, a}, {.out = {z}}); }, {"placeholder T", "'x'", "'z'"});
  // A placeholder only an output has, with no out array, cannot be known.
  const xp::ElementwiseKernel u("T x", "U z", "z = x", "u");
  expect_error<xp::TypeError>([&] { u({a}); }, {"'z'", "placeholder U"});
}

TEST(UserKernels, WrongArgumentCountsAreValueErrors) {
  const xp::ElementwiseKernel k("T x, T y", "T z", "z = x + y", "add");
  const Array a = cpu_data({4}, DType::float32);
  expect_error<xp::ValueError>([&] { k({a}); }, {"takes 2 inputs", "or 3", "got 1"});
  expect_error<xp::ValueError>([&] { k({a, a, a, a}); }, {"got 4"});
  expect_error<xp::ValueError>([&] { k({a, a, a}, {.out = {a}}); }, {"both"});
  expect_error<xp::ValueError>([&] { k({a, a}, {.out = {a, a}}); }, {"out has 2"});
  expect_error<xp::TypeError>([&] { k({a, a, 1.0f}); }, {"output 'z'", "scalar"});
  const xp::ElementwiseKernel two("T x", "T y, T z", "y = x; z = x", "two");
  expect_error<xp::ValueError>([&] { two({a}); }, {"2 outputs", "call()"});
}

TEST(UserKernels, OutArraysOfAnotherShapeOrDtypeAreRejectedUntouched) {
  const xp::ElementwiseKernel k("T x, T y", "T z", "z = x * y + 1", "fma1");
  const Array a = cpu_data({2, 3}, DType::float32);
  const Array wrong_shape = xp::full({3, 2}, 7.0, DType::float32, xp::Device::cpu());
  const Array wrong_dtype = xp::full({2, 3}, 7.0, DType::float64, xp::Device::cpu());
  expect_error<xp::ValueError>([&] { k({a, a}, {.out = {wrong_shape}}); }, {"'z'", "(3, 2)", "(2, 3)"});
  expect_error<xp::TypeError>([&] { k({a, a, wrong_dtype}); }, {"'z'", "float64"});
  for (float v : wrong_shape.to_vector<float>()) EXPECT_EQ(v, 7.0f);
  for (double v : wrong_dtype.to_vector<double>()) EXPECT_EQ(v, 7.0);
  // The broadcast shape must be the out array's: an out of shape (3,) for inputs of (2, 3) is not.
  const Array small = xp::full({3}, 7.0, DType::float32, xp::Device::cpu());
  expect_error<xp::ValueError>([&] { k({a, a}, {.out = {small}}); }, {"(3,)"});
  const xp::ReductionKernel r("T x", "T y", "x", "a + b", "y = a", "0", "total");
  const Array out = xp::full({3}, 7.0, DType::float32, xp::Device::cpu());
  expect_error<xp::ValueError>([&] { r({a}, {.axis = 1, .out = {out}}); }, {"'y'", "(3,)", "(2,)"});
  for (float v : out.to_vector<float>()) EXPECT_EQ(v, 7.0f);
}

TEST(UserKernels, ScalarsConvertToTheirParameterOrAreTypeErrors) {
  const xp::ElementwiseKernel k("T x, T s", "T z", "z = x * s", "scale");
  const Array i8 = xp::zeros({3}, DType::int8, xp::Device::cpu());
  expect_error<xp::TypeError>([&] { k({i8, 300}); }, {"'s'", "does not fit", "int8"});
  expect_error<xp::TypeError>([&] { k({i8, 2.5}); }, {"'s'", "float", "int8"});
  const xp::ElementwiseKernel raw("raw T w", "T z", "z = w[i]", "rawk");
  expect_error<xp::TypeError>([&] { raw({1.0}, {.size = 3}); }, {"raw parameter 'w'", "scalar"});
  // An array is converted to a concrete parameter's type under same_kind only.
  const xp::ElementwiseKernel f("int32 x", "int32 z", "z = x", "ints");
  const Array d = xp::zeros({3}, DType::float64, xp::Device::cpu());
  expect_error<xp::TypeError>([&] { f({d}); }, {"'x'", "int32", "float64", "same_kind"});
  // No array gives the shape: size is needed, and only then.
  const xp::ElementwiseKernel fill("T v", "raw T out", "out[i] = v", "fill");
  const Array o = xp::zeros({3}, DType::float64, xp::Device::cpu());
  expect_error<xp::ValueError>([&] { fill({1.0, o}); }, {"size"});
  expect_error<xp::ValueError>([&] { k({i8, 1}, {.size = 3}); }, {"size"});
  expect_error<xp::ValueError>([&] { fill({1.0}, {.size = 3}); }, {"raw output 'out'", "must be given"});
}

TEST(UserKernels, ShapesThatDoNotBroadcastAndBadAxesAreValueErrors) {
  const xp::ElementwiseKernel k("T x, T y", "T z", "z = x + y", "add");
  const Array a = cpu_data({2, 3}, DType::float32), b = cpu_data({4}, DType::float32);
  expect_error<xp::ValueError>([&] { k({a, b}); }, {"broadcast"});
  const xp::ReductionKernel r("T x", "T y", "x", "a + b", "y = a", "0", "total");
  expect_error<xp::ValueError>([&] { r({a}, {.axis = 2}); }, {"axis 2", "out of bounds"});
  expect_error<xp::ValueError>([&] { r({a}, {.axis = {0, -2}}); }, {"repeated"});
  expect_error<xp::ValueError>([&] { r({1.0}); }, {"needs one"});
}

// ---- generated source, compiled by NVRTC for a GPU that need not be here ---------------------

void compiles(const std::string& source, const std::string& name, const std::vector<std::string>& kernels) {
  xp::Program p(source, xp::ProgramOptions{.name = name + ".cu", .options = {"--fmad=false"}});
  ASSERT_NO_THROW(p.compile(xp::Arch::sm(90))) << source;
  const auto names = p.kernel_names(xp::Arch::sm(90));
  for (const auto& k : kernels) EXPECT_NE(std::find(names.begin(), names.end(), k), names.end()) << k;
}

TEST(UserKernels, GeneratedElementwiseSourcesCompileWithNvrtc) {
  XP_REQUIRE_NVRTC();
  const auto cpu = xp::Device::cpu();
  const xp::ElementwiseKernel fma1("T x, T y", "T z", "z = x * y + 1", "fma1");
  const Array a = cpu_data({4, 5}, DType::float32), b = cpu_data({5}, DType::float32);
  // Contiguous arrays are indexed by i, others through their strides.
  const std::string contiguous = fma1.source(std::vector<xp::Operand>{a, a});
  EXPECT_EQ(contiguous.find("xp_kdims"), std::string::npos);
  EXPECT_NE(contiguous.find("typedef float T;"), std::string::npos);
  compiles(contiguous, "fma1", {"xpk_fma1"});
  // Each #line back to the generated file names the line that follows it in the whole text.
  int restored = 0;
  std::size_t line = 1;
  for (std::size_t p = 0; p < contiguous.size(); ++line) {
    const std::size_t e = contiguous.find('\n', p);
    const std::string text = contiguous.substr(p, e - p);
    if (text.rfind("#line ", 0) == 0 && text.find("fma1.cu") != std::string::npos) {
      EXPECT_EQ(text, "#line " + std::to_string(line + 1) + " \"fma1.cu\"");
      ++restored;
    }
    p = e == std::string::npos ? contiguous.size() : e + 1;
  }
  EXPECT_EQ(restored, 1);
  const std::string broadcast = fma1.source(std::vector<xp::Operand>{a, b});
  EXPECT_NE(broadcast.find("xp_kdims"), std::string::npos);
  compiles(broadcast, "fma1", {"xpk_fma1"});
  const Array flipped = xp::flip(a.T(), 0);
  compiles(fma1.source(std::vector<xp::Operand>{flipped, 2.0f}), "fma1", {"xpk_fma1"});
  // Mixed types, conversions, raw arrays, a preamble, two outputs, `i` and `_ind`.
  const xp::ElementwiseKernel mixed("T x, raw T w, int32 n, float64 s", "float64 y, U z",
                                    "y = twice(x) * s + w[_ind.size() - i - 1]; z = (U)(n + i)", "mixed",
                                    {.preamble = "__device__ double twice(double v) { return 2 * v; }"});
  const Array z = xp::zeros({4, 5}, DType::int64, cpu);
  const Array y = xp::zeros({4, 5}, DType::float64, cpu);
  compiles(mixed.source(std::vector<xp::Operand>{a, a, cpu_data({4, 5}, DType::int16), 3, y, z}), "mixed",
           {"xpk_mixed"});
}

TEST(UserKernels, GeneratedReductionSourcesCompileWithNvrtc) {
  XP_REQUIRE_NVRTC();
  const xp::ReductionKernel l2("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm");
  const Array a = cpu_data({3, 4, 5}, DType::float32);
  for (const xp::ReductionCall& how :
       {xp::ReductionCall{}, xp::ReductionCall{.axis = 1}, xp::ReductionCall{.axis = {0, 2}, .keepdims = true},
        xp::ReductionCall{.axis = std::vector<int>{}}}) {
    const std::string s = l2.source(std::vector<xp::Operand>{a}, how);
    EXPECT_NE(s.find("typedef float _type_reduce;"), std::string::npos);
    compiles(s, "l2norm", {"xpk_l2norm", "xpk_l2norm_final"});
  }
  const xp::ReductionKernel mean("T x, raw float64 w", "float64 y", "x * w[0]", "a + b",
                                 "y = a / _in_ind.size() * _out_ind.size()", "0", "wmean", {.reduce_type = "float64"});
  const Array w = xp::ones({1}, DType::float64, xp::Device::cpu());
  const std::string s = mean.source(std::vector<xp::Operand>{xp::flip(a, 1), w}, {.axis = -1});
  EXPECT_NE(s.find("typedef double _type_reduce;"), std::string::npos);
  compiles(s, "wmean", {"xpk_wmean", "xpk_wmean_final"});
}

TEST(UserKernels, ABodyThatDoesNotCompileKeepsTheCompilersLogPointingAtTheOperation) {
  XP_REQUIRE_NVRTC();
  const xp::ElementwiseKernel bad("T x", "T z", "z = x +* undefined_thing", "broken");
  const Array a = cpu_data({4}, DType::float32);
  xp::Program p(bad.source(std::vector<xp::Operand>{a}), xp::ProgramOptions{.name = "broken.cu"});
  try {
    p.compile(xp::Arch::sm(90));
    FAIL() << "compiled";
  } catch (const xp::CompileError& e) {
    EXPECT_NE(e.log().find("broken operation"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("undefined_thing"), std::string::npos) << e.log();
  }
  // An error in the preamble is reported on its own line of the preamble.
  const xp::ElementwiseKernel pre("T x", "T z", "z = x", "broken2", {.preamble = "// fine\nint oops = ;\n"});
  xp::Program q(pre.source(std::vector<xp::Operand>{a}), xp::ProgramOptions{.name = "broken2.cu"});
  try {
    q.compile(xp::Arch::sm(90));
    FAIL() << "compiled";
  } catch (const xp::CompileError& e) {
    EXPECT_NE(e.log().find("broken2 preamble(2)"), std::string::npos) << e.log();
  }
}

// ---- run on a device, against xp's array API on the same device -----------------------------
// Each check runs on the CPU (UserKernels.*) and on cuda:0 (UserKernelsGpu.*).

Array data(const xp::Device& d, const xp::Shape& shape, DType t, double scale = 0.37, double shift = -5) {
  return cpu_data(shape, t, scale, shift).to_device(d);
}

void elementwise_matches_the_array_api(const xp::Device& dev) {
  const xp::ElementwiseKernel fma1("T x, T y", "T z", "z = x * y + 1", "fma1");
  const Array a = data(dev, {6, 7}, DType::float32, 0.37, -5), b = data(dev, {6, 7}, DType::float32, -0.11, 3);
  expect_same<float>(fma1({a, b}), a * b + 1);
  // float64, broadcast, transposed, flipped and sliced inputs.
  const Array c = data(dev, {7, 6}, DType::float64), r = data(dev, {6}, DType::float64, 1.5, 0.25);
  expect_same<double>(fma1({c.T(), r.reshape({6, 1})}), c.T() * r.reshape({6, 1}) + 1);
  const Array f = xp::flip(c, 1).slice({xp::Slice(1, 6, 2)});
  expect_same<double>(fma1({f, 3.0}), f * 3.0 + 1);
  // Integers, exact: x * y + 1 in int32.
  const Array i = data(dev, {100}, DType::int32, 3, -150), j = data(dev, {100}, DType::int32, -1, 40);
  expect_same<std::int32_t>(fma1({i, j}), i * j + 1);
  // A larger one, past one block of any size.
  const Array g = data(dev, {3, 100001}, DType::float32, 1e-4, -3), h = data(dev, {100001}, DType::float32, -2e-4, 1);
  expect_same<float>(fma1({g, h}), g * h + 1);
  // Kernels named like functions of the C library, which their bodies call.
  const xp::ElementwiseKernel fmax("T x, T y", "T z", "z = fmax(x, y)", "fmax");
  expect_same<float>(fmax({a, b}), xp::maximum(a, b));
  const xp::ReductionKernel abs("T x", "T y", "abs(x)", "a + b", "y = a", "0", "abs");
  expect_same<std::int32_t>(abs({i}), xp::sum(xp::abs(i)).astype(DType::int32));
}

void scalars_indices_raw_arrays_and_preamble(const xp::Device& dev) {
  // A scalar binds T alone when no array does: int64.
  const xp::ElementwiseKernel index("T start", "raw T out", "out[i] = start + i", "iota");
  const Array out = xp::zeros({10}, DType::int64, dev);
  index.call(std::vector<xp::Operand>{5, out}, {.size = 10});
  expect_same<std::int64_t>(out, xp::arange(5, 15, 1, DType::int64, dev));
  // A raw input read backwards: flip.
  const xp::ElementwiseKernel rev("raw T w, T x", "T z", "z = w[_ind.size() - 1 - i] + x", "rev");
  const Array a = data(dev, {9}, DType::float32);
  expect_same<float>(rev({a, 0.0f * a}), xp::flip(a) + 0.0f * a);
  // A raw input that is not contiguous is copied first.
  const Array s = data(dev, {18}, DType::float32).slice({xp::Slice(std::nullopt, std::nullopt, 2)});
  expect_same<float>(rev({s, 0.0f * a}), xp::flip(s) + 0.0f * a);
  // Preamble, concrete types and conversions on reading.
  const xp::ElementwiseKernel pre("float64 x, int32 k", "float64 y", "y = twice(x) + k", "pre",
                                  {.preamble = "__device__ double twice(double v) { return v + v; }"});
  const Array f = data(dev, {9}, DType::float32);
  const Array k = data(dev, {9}, DType::int16, 1, -4);
  expect_same<double>(pre({f, k}), f.astype(DType::float64) * 2 + k.astype(DType::float64));
}

void out_in_place_and_several_outputs(const xp::Device& dev) {
  const xp::ElementwiseKernel k("T x, T y", "T s, T d", "s = x + y; d = x - y", "sumdiff");
  const Array a = data(dev, {3, 4}, DType::float64), b = data(dev, {4}, DType::float64, 2, 1);
  const Array s = xp::zeros({3, 4}, DType::float64, dev);
  // A non-contiguous out: written through its strides.
  const Array big = xp::zeros({4, 3}, DType::float64, dev);
  const Array d = big.T();
  const std::vector<Array> r = k.call(std::vector<xp::Operand>{a, b}, {.out = {s, d}});
  ASSERT_EQ(r.size(), 2u);
  expect_same<double>(s, a + b);
  // The first result is out itself (the same memory on either device): writing it writes s.
  Array r0 = r[0];
  r0 += 1.0;
  expect_same<double>(s, a + b + 1.0);
  expect_same<double>(big.T(), a - b);
  // Allocated outputs have the broadcast shape.
  const std::vector<Array> n = k.call(std::vector<xp::Operand>{a, b});
  expect_same<double>(n[1], a - b);
}

void reductions_match_the_array_api(const xp::Device& dev) {
  const xp::ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "isum");
  const Array i = data(dev, {5, 6, 7}, DType::int64, 3, -100);
  expect_same<std::int64_t>(sum({i}), xp::sum(i));
  expect_same<std::int64_t>(sum({i}, {.axis = 1}), xp::sum(i, 1));
  expect_same<std::int64_t>(sum({i}, {.axis = {0, 2}, .keepdims = true}), xp::sum(i, {0, 2}, true));
  expect_same<std::int64_t>(sum({xp::flip(i.T(), 0)}, {.axis = -1}), xp::sum(xp::flip(i.T(), 0), -1));
  // Long rows: two passes (partial values, then the row's).
  const Array big = data(dev, {3, 200000}, DType::int64, 1, -7);
  expect_same<std::int64_t>(sum({big}), xp::sum(big));
  expect_same<std::int64_t>(sum({big}, {.axis = 1}), xp::sum(big, 1));
  // Empty reductions give the identity, through post_map_expr.
  const xp::ReductionKernel l2("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm");
  const Array e = xp::zeros({3, 0}, DType::float32, dev);
  expect_same<float>(l2({e}, {.axis = 1}), xp::zeros({3}, DType::float32, dev));
  // Floats: close to the array API's (another summation order).
  const Array f = data(dev, {4, 3000}, DType::float32, 0.001, -1);
  expect_close(l2({f}, {.axis = 1}), xp::sqrt(xp::sum(f * f, 1)), 1e-5);
  expect_close(l2({f}), xp::sqrt(xp::sum(f * f)), 1e-5);
  // max with an identity, a reduce type of its own, out=.
  const xp::ReductionKernel mx("T x", "T y", "x", "a > b ? a : b", "y = a", "-1e300", "mx", {.reduce_type = "float64"});
  const Array out = xp::zeros({4}, DType::float32, dev);
  mx.call(std::vector<xp::Operand>{f}, {.axis = 1, .out = {out}});
  expect_same<float>(out, xp::max(f, 1));
  // mean through _in_ind and _out_ind.
  const xp::ReductionKernel mean("T x", "float64 y", "x", "a + b", "y = a / (_in_ind.size() / _out_ind.size())", "0",
                                 "mean1", {.reduce_type = "float64"});
  expect_close(mean({i}, {.axis = 2}), xp::mean(i.astype(DType::float64), 2), 1e-12);
}

void a_body_that_does_not_compile_writes_nothing(const xp::Device& dev) {
  const xp::ElementwiseKernel bad("T x", "T z", "z = x +* undefined_thing", "broken");
  const Array a = data(dev, {4}, DType::float32);
  const Array out = xp::full({4}, 7.0, DType::float32, dev);
  EXPECT_THROW(bad({a}, {.out = {out}}), xp::CompileError);
  for (float v : out.to_vector<float>()) EXPECT_EQ(v, 7.0f);
}

void lazy_inputs_are_evaluated_first(const xp::Device& dev) {
  const xp::ElementwiseKernel k("T x", "T z", "z = x + 1", "inc");
  const Array a = data(dev, {50}, DType::float32);
  const Array lazy = a * 2;  // not evaluated yet (when lazy evaluation is on)
  expect_same<float>(k({lazy}), a * 2 + 1);
  // An output that is also an input, element for element: in place.
  const Array b = a.copy();
  k.call(std::vector<xp::Operand>{b, b});
  expect_same<float>(b, a + 1);
}

// Two kernels of one signature, in a process that finds both in the disk cache: each runs its own
// code (a loader that took the second for the first would give 1 + 1 for both).
TEST(UserKernels, DISABLED_TwoKernelsOfOneSignature) {
  XP_REQUIRE_CPU_KERNELS();
  const xp::ElementwiseKernel inc("T x", "T z", "z = x + 1", "bump");
  const xp::ElementwiseKernel dec("T x", "T z", "z = x - 1", "bump");
  const Array a = xp::ones({4}, DType::int32, xp::Device::cpu());
  expect_same<std::int32_t>(inc({a}), a + 1);
  expect_same<std::int32_t>(dec({a}), a - 1);
}

TEST(UserKernels, TwoKernelsFromAWarmDiskCacheAreEachTheirOwn) {
  XP_REQUIRE_CPU_KERNELS();
  const xp_test::TempDir dir;
  const std::map<std::string, std::string> env{{"XP_TEST_USER_KERNELS_CACHE", dir / "kernels"}};
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("UserKernels.DISABLED_TwoKernelsOfOneSignature", env));  // compiles
  EXPECT_CHILD_CASE_PASSED(xp_test::run_child_case("UserKernels.DISABLED_TwoKernelsOfOneSignature", env));  // loads
}

#define XP_ON_BOTH_DEVICES(name, check) \
  TEST(UserKernels, name) {             \
    XP_REQUIRE_CPU_KERNELS();           \
    check(xp::Device::cpu());           \
  }                                     \
  TEST(UserKernelsGpu, name) {          \
    XP_REQUIRE_GPU();                   \
    check(xp::Device::cuda(0));         \
  }

XP_ON_BOTH_DEVICES(ElementwiseMatchesTheArrayApiBitForBit, elementwise_matches_the_array_api)
XP_ON_BOTH_DEVICES(ScalarsIndicesRawArraysAndPreamble, scalars_indices_raw_arrays_and_preamble)
XP_ON_BOTH_DEVICES(OutIsWrittenInPlaceAndSeveralOutputsComeBack, out_in_place_and_several_outputs)
XP_ON_BOTH_DEVICES(ReductionsMatchTheArrayApi, reductions_match_the_array_api)
XP_ON_BOTH_DEVICES(ABodyThatDoesNotCompileIsACompileErrorAndWritesNothing, a_body_that_does_not_compile_writes_nothing)
XP_ON_BOTH_DEVICES(LazyInputsAreEvaluatedFirst, lazy_inputs_are_evaluated_first)

// ---- the same kernels on a GPU and on the CPU ------------------------------------------------

TEST(UserKernelsGpu, TheSameKernelsOnCuda0MatchTheCpu) {
  XP_REQUIRE_GPU();
  XP_REQUIRE_CPU_KERNELS();
  const xp::Device gpu = xp::Device::cuda(0);
  const xp::Device cpu = xp::Device::cpu();
  const xp::ElementwiseKernel fma1("T x, T y", "T z", "z = x * y + 1", "fma1");
  const Array a = cpu_data({1000, 37}, DType::float32, 0.37, -5), b = cpu_data({37}, DType::float32, -0.11, 3);
  expect_same<float>(fma1({a.to_device(gpu), b.to_device(gpu)}).to_device(cpu), fma1({a, b}));
  const Array t = a.T();
  expect_same<float>(fma1({t.to_device(gpu), 2.0f}).to_device(cpu), fma1({t, 2.0f}));
  const xp::ReductionKernel sum("T x", "T y", "x", "a + b", "y = a", "0", "isum");
  const Array i = cpu_data({300, 4000}, DType::int64, 3, -100);
  for (const xp::ReductionCall& how : {xp::ReductionCall{}, xp::ReductionCall{.axis = 0}, xp::ReductionCall{.axis = 1}})
    expect_same<std::int64_t>(sum({i.to_device(gpu)}, how).to_device(cpu), sum({i}, how));
  const xp::ReductionKernel l2("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm");
  const Array f = cpu_data({1 << 20}, DType::float32, 1e-6, -0.5);
  expect_close(l2({f.to_device(gpu)}).to_device(cpu), l2({f}), 1e-5);
}

TEST(UserKernelsGpu, ArraysOnTwoDevicesAreADeviceMismatch) {
  XP_REQUIRE_GPU();
  const xp::ElementwiseKernel fma1("T x, T y", "T z", "z = x * y + 1", "fma1");
  const Array a = cpu_data({4}, DType::float32);
  const Array out = xp::full({4}, 7.0, DType::float32, xp::Device::cpu());
  expect_error<xp::DeviceMismatch>(
      [&] {
        fma1({a, a.to_device(xp::Device::cuda(0))}, {.out = {out}});
      },
      {"fma1", "cpu", "cuda:0"});
  for (float v : out.to_vector<float>()) EXPECT_EQ(v, 7.0f);
}

}  // namespace
