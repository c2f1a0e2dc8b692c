// Arrays on a CUDA device against the same arrays on the CPU: exactly rounded operations bit for bit
// (NaN as a class), transcendental functions within the two backends' bounds, random streams equal,
// transfers exact, devices never mixed, out of memory typed. Label `gpu`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "array_bits.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const Device kCpu = Device::cpu();

std::vector<std::uint64_t> bits(const Array& a) {
  return xp_test::exact_bits(a);
}

// Inputs with special values first, then seeded random ones, in dtype t.
Array inputs(DType t, std::uint64_t seed, std::int64_t n = 4096) {
  random::Generator g(seed);
  Array r = g.normal({n}, DType::float64, 0, 100, kCpu);
  std::vector<double> v = r.to_vector<double>();
  const double special[] = {0.0,   -0.0,  1.0,   -1.0, 0.5,      -0.5,         1.5,           2.5,    -2.5,    1e30,
                            -1e30, 65504, 70000, 3e38, INFINITY, -INFINITY,    NAN,           1e-40,  127,     128,
                            255,   256,   -128,  -129, 32767,    2147483647.0, -2147483648.0, 9.3e18, -9.3e18, 1.8e19};
  for (std::size_t i = 0; i < std::size(special) && i < v.size(); ++i) v[i] = special[i];
  return asarray(v, std::nullopt, kCpu).astype(t);
}

}  // namespace

TEST(ArrayGpu, TransfersAreExactForEveryDtype) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : {DType::bool_, DType::int8, DType::uint16, DType::int32, DType::uint64, DType::float16,
                  DType::bfloat16, DType::float32, DType::float64}) {
    Array c = inputs(t, 1);
    Array g = c.to_device(gpu);
    EXPECT_EQ(g.device(), gpu);
    EXPECT_EQ(bits(g), bits(c)) << name(t);
  }
}

TEST(ArrayGpu, ExactOperationsMatchTheCpuBitForBit) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : {DType::bool_, DType::int8, DType::uint8, DType::int16, DType::int32, DType::uint32, DType::int64,
                  DType::uint64, DType::float16, DType::bfloat16, DType::float32, DType::float64}) {
    Array a = inputs(t, 2), b = inputs(t, 3);
    Array ga = a.to_device(gpu), gb = b.to_device(gpu);
    const bool is_float = kind(t) == DTypeKind::floating;
    const bool is_bool = t == DType::bool_;
    const bool is_unsigned = kind(t) == DTypeKind::unsigned_integer;
    auto check = [&](const char* what, auto f) {
      Array on_cpu, on_gpu;
      try {
        on_cpu = f(a, b);
      } catch (const TypeError& e) {
        // The one refusal of this list (NEP 50: -3 is no uint value); any other skips a check.
        EXPECT_TRUE(std::string(what) == "clip" && is_unsigned) << what << " " << name(t) << ": " << e.what();
        EXPECT_THROW(f(ga, gb), TypeError) << what;
        return;
      }
      on_gpu = f(ga, gb);
      EXPECT_EQ(on_gpu.dtype(), on_cpu.dtype()) << what << " " << name(t);
      EXPECT_EQ(bits(on_gpu), bits(on_cpu)) << what << " " << name(t);
    };
    check("add", [](const Array& x, const Array& y) { return x + y; });
    check("multiply", [](const Array& x, const Array& y) { return x * y; });
    check("a*b+a", [](const Array& x, const Array& y) { return x * y + x; });
    check("divide", [](const Array& x, const Array& y) { return x / y; });
    check("maximum", [](const Array& x, const Array& y) { return maximum(x, y); });
    check("minimum", [](const Array& x, const Array& y) { return minimum(x, y); });
    check("less", [](const Array& x, const Array& y) { return x < y; });
    check("equal", [](const Array& x, const Array& y) { return x == y; });
    check("where", [](const Array& x, const Array& y) { return where(x > y, x, y); });
    check("abs", [](const Array& x, const Array&) { return abs(x); });
    check("astype int32", [](const Array& x, const Array&) { return x.astype(DType::int32); });
    check("astype uint8", [](const Array& x, const Array&) { return x.astype(DType::uint8); });
    check("astype float16", [](const Array& x, const Array&) { return x.astype(DType::float16); });
    check("astype bfloat16", [](const Array& x, const Array&) { return x.astype(DType::bfloat16); });
    check("strided", [](const Array& x, const Array& y) {
      return x.slice({Slice(1, std::nullopt, 3)}) + flip(y).slice({Slice(0, 4095, 3)});
    });
    check("broadcast", [](const Array& x, const Array& y) { return reshape(x, {64, 64}) + y.slice({Slice(0, 64)}); });
    if (!is_bool) {
      check("subtract", [](const Array& x, const Array& y) { return x - y; });
      check("floor_divide", [](const Array& x, const Array& y) { return floor_divide(x, y); });
      check("remainder", [](const Array& x, const Array& y) { return remainder(x, y); });
      check("sign", [](const Array& x, const Array&) { return sign(x); });
      check("clip", [](const Array& x, const Array&) { return clip(x, -3, 100); });
      check("clip 3..100", [](const Array& x, const Array&) { return clip(x, 3, 100); });
    }
    if (is_float) {
      check("sqrt", [](const Array& x, const Array&) { return sqrt(x); });
      check("round", [](const Array& x, const Array&) { return round(x / 3); });
      check("floor", [](const Array& x, const Array&) { return floor(x / 7); });
      check("isnan", [](const Array& x, const Array&) { return isnan(x * 0); });
      check("fma", [](const Array& x, const Array& y) { return fma(x, y, x); });
    } else {
      check("bitwise_xor", [](const Array& x, const Array& y) { return x ^ y; });
      if (!is_bool) {
        check("shift", [](const Array& x, const Array& y) { return x << (y & 7); });
        check("pow", [](const Array& x, const Array& y) { return pow(x, y & 5); });
      }
    }
  }
}

// int64 against uint64 compares exact values (not through float64) on the GPU as on the CPU.
TEST(ArrayGpu, SignedAgainstUint64ComparisonsMatchTheCpu) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const Array s = asarray(std::vector<std::int64_t>{(std::int64_t{1} << 53) + 1, big, -1, 0, big, -big - 1});
  const Array u = asarray(std::vector<std::uint64_t>{std::uint64_t{1} << 53, std::uint64_t{1} << 63, ~std::uint64_t{0},
                                                     0, static_cast<std::uint64_t>(big), 0});
  const Array gs = s.to_device(gpu), gu = u.to_device(gpu);
  EXPECT_EQ(bits(gs == gu), bits(s == u));
  EXPECT_EQ(bits(gs < gu), bits(s < u));
  EXPECT_EQ(bits(gu <= gs), bits(u <= s));
  EXPECT_EQ(bits(gu > gs.astype(DType::int8)), bits(u > s.astype(DType::int8)));
  EXPECT_EQ(bits(s < u), (std::vector<std::uint64_t>{0, 1, 1, 0, 0, 1})) << "the CPU's exact answer";
}

TEST(ArrayGpu, TranscendentalFunctionsWithinTheBounds) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : {DType::float32, DType::float64}) {
    Array a = inputs(t, 4) / 50.0;
    Array ga = a.to_device(gpu);
    for (const char* fn : {"exp", "log", "sin", "cos", "tanh", "atan2", "pow"}) {
      auto f = [&](const Array& x) {
        const std::string s = fn;
        if (s == "exp") return exp(x);
        if (s == "log") return log(abs(x));
        if (s == "sin") return sin(x);
        if (s == "cos") return cos(x);
        if (s == "tanh") return tanh(x);
        if (s == "atan2") return atan2(x, x + 1);
        return pow(abs(x), 1.5);
      };
      const std::vector<double> c = f(a).astype(DType::float64).to_vector<double>();
      const std::vector<double> g = f(ga).to_device(kCpu).astype(DType::float64).to_vector<double>();
      const double eps = t == DType::float32 ? std::ldexp(1.0, -23) : std::ldexp(1.0, -52);
      double worst = 0;
      for (std::size_t i = 0; i < c.size(); ++i) {
        if (std::isnan(c[i]) || std::isnan(g[i])) {
          EXPECT_EQ(std::isnan(c[i]), std::isnan(g[i])) << fn << " at " << i;
          continue;
        }
        if (std::isinf(c[i]) || std::isinf(g[i])) {
          EXPECT_EQ(c[i], g[i]) << fn << " at " << i;
          continue;
        }
        const double scale = std::max(std::abs(c[i]), t == DType::float32 ? 1.17549435e-38 : 2.2250738585072014e-308);
        worst = std::max(worst, std::abs(c[i] - g[i]) / (scale * eps));
      }
      EXPECT_LE(worst, 12.0) << fn << " " << name(t) << ": CPU and GPU " << worst << " ulp apart";
    }
  }
}

TEST(ArrayGpu, RandomReductionsMatmulMatchTheCpu) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  random::Generator g1(77), g2(77);
  Array c = g1.uniform({256, 128}, DType::float32, -1, 1, kCpu);
  Array g = g2.uniform({256, 128}, DType::float32, -1, 1, gpu);
  EXPECT_EQ(bits(g), bits(c));
  Array ci = g1.integers(-9, 9, {1000}, DType::int16, kCpu), gi = g2.integers(-9, 9, {1000}, DType::int16, gpu);
  EXPECT_EQ(bits(gi), bits(ci));
  {
    // Float sums: another order on the GPU, within the bound of docs/semantics.md (4 ulp of the
    // result + 4 n u^2 sum|x|), checked against the CPU's.
    const std::vector<float> gs = sum(g, 0).to_vector<float>(), cs = sum(c, 0).to_vector<float>();
    const std::vector<float> abs_sum = sum(xp::abs(c), 0).to_vector<float>();
    for (std::size_t i = 0; i < cs.size(); ++i)
      EXPECT_LE(std::abs(gs[i] - cs[i]),
                4 * std::abs(std::nextafter(cs[i], INFINITY) - cs[i]) + 4 * 256 * 0x1p-48 * abs_sum[i])
          << "sum over axis 0, column " << i;
  }
  EXPECT_EQ(bits(max(g)), bits(max(c)));
  EXPECT_EQ(bits(argmax(g, 1)), bits(argmax(c, 1)));
  EXPECT_EQ(bits(cumulative_sum(gi)), bits(cumulative_sum(ci)));
  {
    // cuBLAS sums in its own order: within (k + 2) u (|a| @ |b|) of the exact product, k = 128.
    const Array c64 = c.astype(DType::float64);
    const std::vector<double> exact = matmul(c64, c64.T()).to_vector<double>();
    const std::vector<double> scale = matmul(xp::abs(c64), xp::abs(c64).T()).to_vector<double>();
    const std::vector<float> got = matmul(g, g.T()).to_vector<float>();
    ASSERT_EQ(got.size(), exact.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(std::abs(got[i] - exact[i]), 130 * 0x1p-24 * scale[i] + 0x1p-24 * std::abs(exact[i])) << i;
  }
  EXPECT_EQ(bits(take(g, asarray(std::vector<std::int64_t>{3, -1, 0}, std::nullopt, gpu), 0)),
            bits(take(c, asarray(std::vector<std::int64_t>{3, -1, 0}, std::nullopt, kCpu), 0)));
  Array gs = g.slice({Slice(0, 10), Slice(5, 7)});
  gs.assign(1.5f);
  EXPECT_EQ(sum(gs).item<float>(), 30.0f);
}

TEST(ArrayGpu, DevicesAreNeverMixedAndMemoryErrorsAreTyped) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Array g = ones({4}, DType::float32, gpu), c = ones({4}, DType::float32, kCpu);
  EXPECT_THROW((void)(g + c), DeviceMismatch);
  EXPECT_THROW(copyto(c, g), DeviceMismatch);
  try {
    (void)empty({std::int64_t{1} << 50}, DType::uint8, gpu);
    FAIL() << "no error";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.requested(), std::uint64_t{1} << 50);
    EXPECT_GT(e.free(), 0u);
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
  Array after = g + 1.0f;  // the device still works
  EXPECT_EQ(after.to_vector<float>(), std::vector<float>(4, 2.0f));
}

// take on the device against the CPU, byte for byte: every dtype, every axis and none; 1-d, 2-d,
// 0-d, negative, broadcast and empty indices; C-order, transposed, flipped-and-sliced and broadcast
// inputs.
TEST(ArrayGpu, TakeMatchesTheCpuByteForByte) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto raw = [](const Array& a) {
    const Array h = a.to_device(kCpu);
    std::vector<unsigned char> v(static_cast<std::size_t>(h.nbytes()));
    h.copy_to_host(h.dtype(), v.data(), static_cast<std::size_t>(h.size()));
    return v;
  };
  // In range for every axis of every view below (the smallest has 5 elements).
  const Array i1 = asarray(std::vector<std::int64_t>{3, -1, 0, 4, 4, 2}, std::nullopt, kCpu);
  const std::vector<Array> indices = {
      i1,
      reshape(asarray(std::vector<std::int64_t>{0, 4, -3, 1, 1, -5}, std::nullopt, kCpu), {2, 3}),
      full({}, 2, DType::int64, kCpu),
      broadcast_to(i1.slice({Slice(0, 3)}), {4, 3}),
      zeros({0}, DType::int64, kCpu),
  };
  const auto view = [](const Array& a, int k) {
    switch (k) {
      case 0:
        return a;
      case 1:
        return permute_dims(a, {2, 0, 1});
      case 2:
        return a.slice({Slice(std::nullopt, std::nullopt, -2), Slice(1, std::nullopt, 3)});  // (8, 5, 16)
      default:
        return broadcast_to(a.slice({Slice(2, 3)}), {8, 16, 16});
    }
  };
  for (DType t : {DType::bool_, DType::int8, DType::uint8, DType::int16, DType::int32, DType::uint32, DType::int64,
                  DType::uint64, DType::float16, DType::bfloat16, DType::float32, DType::float64}) {
    const Array c = reshape(inputs(t, 5), {16, 16, 16});
    const Array g = c.to_device(gpu);
    for (int k = 0; k < 4; ++k) {
      for (std::size_t n = 0; n < indices.size(); ++n) {
        for (std::optional<int> axis :
             {std::optional<int>(), std::optional<int>(0), std::optional<int>(1), std::optional<int>(2)}) {
          const std::string what = std::string(name(t)) + " view " + std::to_string(k) + " indices " +
                                   std::to_string(n) + " axis " + (axis ? std::to_string(*axis) : "none");
          const Array rc = take(view(c, k), indices[n], axis);
          const Array rg = take(view(g, k), indices[n].to_device(gpu), axis);
          EXPECT_EQ(rg.device(), gpu) << what;
          ASSERT_EQ(std::vector<std::int64_t>(rg.shape().begin(), rg.shape().end()),
                    std::vector<std::int64_t>(rc.shape().begin(), rc.shape().end()))
              << what;
          ASSERT_EQ(raw(rg), raw(rc)) << what;
        }
      }
    }
  }
}

// A kernel is chosen by the program's structure, and a size-1 input that is C-contiguous is read as
// an array while a broadcast one (zero strides) is read once as a scalar. The two once shared a
// kernel: after ceil of a one-element uint8 array, ceil of its broadcast read past the element.
TEST(ArrayGpu, ASizeOneArrayAndItsBroadcastGetTheirOwnKernels) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (DType t : {DType::uint8, DType::int64, DType::float32}) {
    const Array one = asarray(std::vector<double>{127}, std::nullopt, kCpu).astype(t).to_device(gpu);
    EXPECT_EQ(ceil(one).to_vector<double>(), std::vector<double>{127}) << name(t);
    EXPECT_EQ(ceil(broadcast_to(one, {3})).to_vector<double>(), std::vector<double>(3, 127)) << name(t);
    const Array zero_d = reshape(one, {});
    EXPECT_EQ(trunc(zero_d).to_vector<double>(), std::vector<double>{127}) << name(t);
    EXPECT_EQ(trunc(broadcast_to(zero_d, {3, 3})).to_vector<double>(), std::vector<double>(9, 127)) << name(t);
    // Two inputs, one of each kind, in both orders of first use.
    const Array row = arange(0, 64, 1, DType::float64).astype(t).to_device(gpu);
    const Array other = asarray(std::vector<double>{1}, std::nullopt, kCpu).astype(t).to_device(gpu);
    EXPECT_EQ((one * 2 + other).to_vector<double>(), std::vector<double>{255}) << name(t);
    const std::vector<double> got = (broadcast_to(one, {64}) * 2 + row).astype(DType::float64).to_vector<double>();
    for (int i = 0; i < 64; ++i) {
      const double want = t == DType::uint8 ? static_cast<double>((254 + i) % 256) : 254.0 + i;
      EXPECT_EQ(got[i], want) << name(t) << " at " << i;
    }
  }
}
