// The CPU fused evaluator's fast paths (src/backend/cpu/fused.cpp, ew_exact.cpp, cpu_backend.cpp):
// - streaming (non-temporal) stores give the same bytes as plain stores, with every store width the
//   CPU has, for odd lengths, starts that are not 16-byte aligned, several outputs, converting
//   stores and strided outputs (which never stream), and the streaming path is really taken;
// - the float add/subtract/multiply/divide kernels (also compiled for AVX2 and AVX-512) give each
//   element one IEEE operation's bits, for every length and alignment, in place too;
// - small programs (one tile, on the calling thread) give the same results as a scalar loop;
// - the evaluator's remembered kernel lookups still follow a forced transcendental path;
// - the host block cache keeps exact statistics with several threads allocating at once;
// - a storage's list of lazy readers stays short when arrays are built and evaluated in a loop.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "array/array_impl.hpp"
#include "backend/cpu/fused.hpp"
#include "backend/cpu/tile_ops.hpp"
#include "backend/cpu/vmath.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const Device kCpu = Device::cpu();

// Sets the streaming threshold for a scope.
struct StreamThreshold {
  std::int64_t saved;
  explicit StreamThreshold(std::int64_t bytes) : saved(detail::cpu::set_stream_threshold(bytes)) {}
  ~StreamThreshold() { detail::cpu::set_stream_threshold(saved); }
};

// The bytes of a C-contiguous array (read directly: a copy would be another program).
std::vector<unsigned char> bytes_of(const Array& a) {
  EXPECT_TRUE(a.is_c_contiguous());
  const auto* p = static_cast<const unsigned char*>(a.data());
  return std::vector<unsigned char>(p, p + a.nbytes());
}

// Runs f and adds to `runs` the programs it ran with streaming stores.
template <class F>
void counting(std::uint64_t& runs, F f) {
  const std::uint64_t before = detail::cpu::streamed_runs();
  f();
  runs += detail::cpu::streamed_runs() - before;
}

// Sets the streaming store width for a scope.
struct StreamWidth {
  int saved;
  explicit StreamWidth(int bytes) : saved(detail::cpu::set_stream_width(bytes)) {}
  ~StreamWidth() { detail::cpu::set_stream_width(saved); }
};

// The store widths this CPU can stream with (16, 32, 64 bytes; none off x86-64).
std::vector<int> stream_widths() {
  std::vector<int> w;
  for (int b = 16; b <= detail::cpu::stream_width(); b *= 2) w.push_back(b);
  if (w.empty()) w.push_back(0);
  return w;
}

// Evaluates make(runs) (which builds fresh outputs, counts the programs under test with counting()
// and returns the outputs) once with plain stores and once with every contiguous output streamed,
// with each store width the CPU has, and compares the bytes.
template <class Make>
void expect_same_streamed(const std::string& what, Make make, bool expect_streamed = true) {
  std::vector<std::vector<unsigned char>> plain;
  std::uint64_t runs = 0;
  {
    StreamThreshold t(std::int64_t{1} << 62);
    for (const Array& a : make(runs)) plain.push_back(bytes_of(a));
  }
  EXPECT_EQ(runs, 0u) << what << ": streamed above the threshold";
  for (int width : stream_widths()) {
    SCOPED_TRACE("streaming stores of " + std::to_string(width) + " bytes");
    StreamWidth sw(width);
    StreamThreshold t(0);
    std::vector<std::vector<unsigned char>> streamed;
    runs = 0;
    for (const Array& a : make(runs)) streamed.push_back(bytes_of(a));
#if defined(__x86_64__)
    if (expect_streamed) {
      EXPECT_GT(runs, 0u) << what << ": the streaming path was not taken";
    } else {
      EXPECT_EQ(runs, 0u) << what << ": a strided output must not stream";
    }
#else
    EXPECT_EQ(runs, 0u) << what << ": streaming stores are x86-64 only";
#endif
    ASSERT_EQ(plain.size(), streamed.size()) << what;
    for (std::size_t i = 0; i < plain.size(); ++i) {
      ASSERT_EQ(plain[i].size(), streamed[i].size()) << what;
      for (std::size_t k = 0; k < plain[i].size(); ++k) {
        ASSERT_EQ(plain[i][k], streamed[i][k]) << what << ": output " << i << " differs first at byte " << k;
      }
    }
  }
}

}  // namespace

TEST(StreamingStores, WidthIsTheWidestTheCpuHasAndCanBeNarrowed) {
#if defined(__x86_64__)
  const int best = detail::cpu::stream_width();
  EXPECT_TRUE(best == 16 || best == 32 || best == 64) << best;
  EXPECT_EQ(detail::cpu::set_stream_width(16), best);
  EXPECT_EQ(detail::cpu::stream_width(), 16);
  EXPECT_EQ(detail::cpu::set_stream_width(1024), 16);
  EXPECT_EQ(detail::cpu::stream_width(), best);  // never wider than the CPU has
  detail::cpu::set_stream_width(0);
  EXPECT_EQ(detail::cpu::stream_width(), best);
#else
  EXPECT_EQ(detail::cpu::stream_width(), 0);
#endif
}

TEST(StreamingStores, ThresholdDefaultsTo32MiBAndCanBeRestored) {
  EXPECT_EQ(detail::cpu::stream_threshold(), std::int64_t{32} << 20);
  {
    StreamThreshold t(1000);
    EXPECT_EQ(detail::cpu::stream_threshold(), 1000);
  }
  EXPECT_EQ(detail::cpu::stream_threshold(), std::int64_t{32} << 20);
  const std::int64_t old = detail::cpu::set_stream_threshold(5);
  EXPECT_EQ(detail::cpu::set_stream_threshold(-1), 5);
  EXPECT_EQ(detail::cpu::stream_threshold(), std::int64_t{32} << 20);
  EXPECT_EQ(old, std::int64_t{32} << 20);
}

TEST(StreamingStores, GiveThePlainStoresBytes) {
  random::Generator g(11);
  // Lengths around tile and vector boundaries, odd ones, and enough for several threads' chunks. One
  // element is not a contiguous run (nothing to stream).
  for (std::int64_t n : {1, 3, 17, 511, 512, 513, 2047, 2049, 100003, 300007}) {
    Array a = g.uniform({n + 8}, DType::float32, -1, 1, kCpu);
    Array b = g.uniform({n + 8}, DType::float32, -1, 1, kCpu);
    Array c = g.uniform({n + 8}, DType::float32, -1, 1, kCpu);
    Array d = g.uniform({n + 8}, DType::float64, -1, 1, kCpu);
    eval({a, b, c, d});
    const std::string tag = "n=" + std::to_string(n);
    const bool streams = n > 1;
    auto part = [&](const Array& x, std::int64_t off) { return x.slice({Slice(off, off + n)}); };
    // A new array (16-byte aligned).
    expect_same_streamed(
        tag + " a*b+c",
        [&](std::uint64_t& runs) {
          Array r = part(a, 0) * part(b, 0) + part(c, 0);
          counting(runs, [&] { r.eval(); });
          return std::vector<Array>{r};
        },
        streams);
    // out= views starting 1, 2 and 3 elements in: no 16-byte aligned start.
    for (std::int64_t off : {1, 2, 3}) {
      expect_same_streamed(
          tag + " out=o[" + std::to_string(off) + ":]",
          [&](std::uint64_t& runs) {
            Array o = zeros({n + 8}, DType::float32, kCpu);
            counting(runs, [&] { add(part(a, off), part(b, 0), part(o, off)); });
            return std::vector<Array>{o};
          },
          streams);
    }
    // float64 from float32 inputs, converting stores (float32 -> int8, -> float16), a bool result.
    expect_same_streamed(
        tag + " mixed dtypes",
        [&](std::uint64_t& runs) {
          Array r = part(a, 1) * part(d, 0), m = part(a, 0) < part(b, 0), i8, h = zeros({n}, DType::float16, kCpu);
          counting(runs, [&] {
            r.eval();
            m.eval();
            i8 = (part(a, 0) * 100.0f + 0.5f).astype(DType::int8);
            subtract(part(a, 3), part(c, 0), h);
          });
          return std::vector<Array>{r, i8, h, m};
        },
        streams);
    // Two outputs of one program (evaluated together).
    expect_same_streamed(
        tag + " two outputs",
        [&](std::uint64_t& runs) {
          Array s = part(a, 0) + part(b, 0);
          Array p = s * part(c, 0);
          counting(runs, [&] { eval({s, p}); });
          return std::vector<Array>{s, p};
        },
        streams);
  }
}

TEST(StreamingStores, StridedOutputsAndInputsStayCorrect) {
  random::Generator g(12);
  Array a = g.uniform({300, 301}, DType::float32, -1, 1, kCpu);
  Array b = g.uniform({301}, DType::float32, -1, 1, kCpu);
  eval({a, b});
  // A transposed output: not contiguous, never streamed.
  expect_same_streamed(
      "transposed out",
      [&](std::uint64_t& runs) {
        Array o = zeros({300, 301}, DType::float32, kCpu);
        counting(runs, [&] { add(a.T(), 1.0f, o.T()); });
        return std::vector<Array>{o};
      },
      false);
  // Strided and broadcast inputs into contiguous outputs: streamed.
  expect_same_streamed("strided inputs", [&](std::uint64_t& runs) {
    Array r = a.T() * 2.0f, q = a + b, every_other = a.slice({Slice(), Slice(0, std::nullopt, 2)}) - 1.0f;
    counting(runs, [&] {
      r.eval();
      q.eval();
      every_other.eval();
    });
    return std::vector<Array>{r, q, every_other};
  });
}

TEST(FloatArithKernels, EveryLengthAndAlignmentGivesOneIeeeOperation) {
  using detail::Op;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-4, 4);
  for (DType t : {DType::float32, DType::float64}) {
    for (Op op : {Op::add, Op::subtract, Op::multiply, Op::divide}) {
      const detail::cpu::TileFn f = detail::cpu::tile_fn(op, t, t);
      ASSERT_NE(f, nullptr);
      for (int n = 0; n <= 80; ++n) {
        for (int shift = 0; shift < 3; ++shift) {
          std::vector<double> a(n + 3), b(n + 3), r(n + 3);
          std::vector<float> af(n + 3), bf(n + 3), rf(n + 3);
          for (int i = 0; i < n + 3; ++i) {
            a[i] = u(rng);
            b[i] = i % 7 == 3 ? 0.0 : u(rng);  // x / 0 too
            af[i] = static_cast<float>(a[i]);
            bf[i] = static_cast<float>(b[i]);
          }
          auto want = [&](auto x, auto y) {
            volatile auto vx = x, vy = y;  // one rounding, in the operands' type
            switch (op) {
              case Op::add:
                return vx + vy;
              case Op::subtract:
                return vx - vy;
              case Op::multiply:
                return vx * vy;
              default:
                return vx / vy;
            }
          };
          for (int inplace = 0; inplace < 2; ++inplace) {
            if (t == DType::float32) {
              std::vector<float> out = inplace ? af : rf;
              const void* in[2] = {inplace ? out.data() + shift : af.data() + shift, bf.data() + shift};
              f(in, out.data() + shift, n);
              for (int i = 0; i < n; ++i) {
                const float w = want(af[i + shift], bf[i + shift]);
                ASSERT_EQ(std::memcmp(&w, &out[i + shift], 4), 0)
                    << detail::op_name(op) << " float32 n=" << n << " shift=" << shift << " in place=" << inplace;
              }
            } else {
              std::vector<double> out = inplace ? a : r;
              const void* in[2] = {inplace ? out.data() + shift : a.data() + shift, b.data() + shift};
              f(in, out.data() + shift, n);
              for (int i = 0; i < n; ++i) {
                const double w = want(a[i + shift], b[i + shift]);
                ASSERT_EQ(std::memcmp(&w, &out[i + shift], 8), 0)
                    << detail::op_name(op) << " float64 n=" << n << " shift=" << shift << " in place=" << inplace;
              }
            }
          }
        }
      }
    }
  }
}

TEST(SmallPrograms, MatchAScalarLoop) {
  random::Generator g(13);
  for (std::int64_t n : {0, 1, 2, 15, 16, 17, 1023, 1024, 1025, 2048, 2049, 32767, 32768, 32769}) {
    Array s = g.uniform({n + 1}, DType::float32, -1, 1, kCpu);
    Array t = g.uniform({n + 1}, DType::float32, -1, 1, kCpu);
    eval({s, t});
    const auto vs = s.to_vector<float>(), vt = t.to_vector<float>();
    for (int off = 0; off < 2; ++off) {
      Array a = s.slice({Slice(off, off + n)}), b = t.slice({Slice(0, n)});
      const auto sum = (a + b).eval().to_vector<float>();
      const auto mix = ((a - b) * a / 3.0f).eval().to_vector<float>();
      ASSERT_EQ(sum.size(), static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        volatile float x = vs[off + i], y = vt[i];
        const float w_sum = x + y;
        volatile float d = x - y;
        volatile float p = d * x;
        const float w_mix = p / 3.0f;
        ASSERT_EQ(std::memcmp(&w_sum, &sum[i], 4), 0) << "n=" << n << " off=" << off << " i=" << i;
        ASSERT_EQ(std::memcmp(&w_mix, &mix[i], 4), 0) << "n=" << n << " off=" << off << " i=" << i;
      }
      // In place: out= one of the inputs.
      Array c = a.copy();
      add(c, b, c);
      const auto inplace = c.to_vector<float>();
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(std::memcmp(&inplace[i], &sum[i], 4), 0) << "in place, n=" << n;
    }
  }
}

TEST(KernelLookup, FollowsTheForcedTranscendentalPath) {
  random::Generator g(14);
  Array x = g.uniform({3001}, DType::float32, -20, 20, kCpu);
  x.eval();
  exp(x).eval();  // looked up once on the default path
  const auto* px = static_cast<const float*>(x.data());
  for (const std::string& isa : detail::cpu::math_isas_available()) {
    ASSERT_TRUE(detail::cpu::set_math_isa_for_testing(isa.c_str()));
    const detail::cpu::TileFn f = detail::cpu::math_tile_fn(detail::Op::exp, DType::float32, DType::float32);
    ASSERT_NE(f, nullptr);
    std::vector<float> want(3001);
    const void* in[1] = {px};
    f(in, want.data(), 3001);
    Array got = exp(x).eval();
    detail::cpu::set_math_isa_for_testing(nullptr);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0) << isa << ": not the forced path's bits";
  }
}

TEST(HostBlocks, StatisticsStayExactWithThreadsAllocatingAtOnce) {
  const MemoryStats before = memory_stats(kCpu);
  auto work = [] {
    for (int i = 0; i < 2000; ++i) {
      Array x = empty({1 + i % 300}, DType::float32, kCpu);
      Array y = empty({std::int64_t{1} << 20}, DType::uint8, kCpu);  // a big block (1 MiB + 0)
      Array z = empty({(std::int64_t{1} << 20) + 1}, DType::uint8, kCpu);
    }
  };
  std::thread t1(work), t2(work), t3(work);
  work();
  t1.join();
  t2.join();
  t3.join();
  const MemoryStats after = memory_stats(kCpu);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.allocations, before.allocations + 4 * 2000 * 3);
  EXPECT_GE(after.peak_bytes_in_use, before.bytes_in_use + (std::uint64_t{1} << 20));
  free_all(kCpu);
  EXPECT_EQ(memory_stats(kCpu).bytes_cached, 0u);
}

TEST(LazyReaders, StayFewWhenGraphsAreBuiltAndEvaluatedInALoop) {
  Array s = ones({1024}, DType::float32, kCpu);
  Array t = ones({1024}, DType::float32, kCpu);
  Array kept;
  for (int i = 0; i < 1000; ++i) kept = (s + t).eval();
  const detail::Storage& storage = *s.impl()->storage;
  EXPECT_LE(storage.readers.size(), 2u) << "entries of destroyed arrays must not pile up";
  // A graph still captures its inputs' values when they are written later.
  Array lazy = s + t;
  s.assign(5.0f);
  EXPECT_EQ(lazy.to_vector<float>()[7], 2.0f);
  EXPECT_EQ(kept.to_vector<float>()[7], 2.0f);
}
