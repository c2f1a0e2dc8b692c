// Reductions on a CUDA device (public API only), one row per (op, dtype): the whole reduction of
// 1 GiB of data, and a few axis reductions of float32 (a square matrix over either axis; rows of 4
// and 16 KiB), against a device-to-device copy of the same 1 GiB measured in the same run. Each
// row: 3 warm-ups, then 5 batches of 10 calls between CUDA
// events on xp's stream; the median batch, its min..max, and GB/s of the input read once (var reads
// it twice: it is reported as read once, as CuPy and PyTorch users count it). Every result is
// compared with the CPU backend's: exactly for integer sums, min/max, argmax and any; within a
// relative 1e-4 for float sums and for means and variances (1e-2 for 16-bit floats: about one ulp of the result;
// the two backends add in different orders).
// bench/python/gpu_reductions.py times the same rows in CuPy.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "xp/xp.hpp"

using namespace xp;

namespace {

struct Stat {
  double median, lo, hi;  // ms per call
};

Stat measure(const Device& dev, const std::function<void()>& f) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    if (dev.is_cuda()) {
      const Stream st = Stream::default_for(dev);
      Event a(dev), b(dev);
      a.record(st);
      for (int i = 0; i < 10; ++i) f();
      b.record(st);
      b.synchronize();
      t.push_back(Event::elapsed_ms(a, b) / 10);
    } else {  // --cpu: the host clock (every CPU call is done when it returns)
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 10; ++i) f();
      t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 10);
    }
  }
  std::sort(t.begin(), t.end());
  return {t[2], t[0], t[4]};
}

enum class Op { sum, mean, var, max, argmax, any };

const char* op_name(Op op) {
  switch (op) {
    case Op::sum:
      return "sum";
    case Op::mean:
      return "mean";
    case Op::var:
      return "var";
    case Op::max:
      return "max";
    case Op::argmax:
      return "argmax";
    case Op::any:
      return "any";
  }
  return "?";
}

Array apply(Op op, const Array& x, const Axes& axes) {
  switch (op) {
    case Op::sum:
      return sum(x, axes);
    case Op::mean:
      return mean(x, axes);
    case Op::var:
      return var(x, axes);
    case Op::max:
      return max(x, axes);
    case Op::argmax:
      return axes.all() ? argmax(x) : argmax(x, axes.list().front());
    case Op::any:
      return any(x, axes);
  }
  return {};
}

// 1 GiB (or `shape`) of `t`: uniform floats in [-1, 1), integers in [-100, 100) ([0, 100) unsigned),
// bool all false (so that `any` reads everything).
Array make(random::Generator& g, DType t, const Shape& shape, const Device& dev) {
  if (t == DType::bool_) return zeros(shape, DType::bool_, dev);
  if (kind(t) == DTypeKind::floating) {
    Array x = g.uniform(shape, t == DType::float64 ? DType::float64 : DType::float32, -1, 1, dev);
    return t == DType::float64 || t == DType::float32 ? x : x.astype(t);
  }
  const bool is_unsigned = t == DType::uint8 || t == DType::uint16 || t == DType::uint32 || t == DType::uint64;
  return g.integers(is_unsigned ? 0 : -100, 100, shape, t, dev);
}

// The GPU result against the CPU backend's; "" when they agree.
std::string compare(Op op, DType t, const Array& gpu, const Array& cpu) {
  const std::vector<double> g = gpu.astype(DType::float64).to_vector<double>();
  const std::vector<double> c = cpu.astype(DType::float64).to_vector<double>();
  if (g.size() != c.size()) return "sizes differ";
  const bool exact = op == Op::max || op == Op::argmax || op == Op::any ||
                     (op == Op::sum && kind(t) != DTypeKind::floating);  // means and variances are floats
  const double tol = itemsize(t) == 2 ? 1e-2 : 1e-4;                     // a 16-bit float result: within about an ulp
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool ok = exact ? g[i] == c[i] : std::fabs(g[i] - c[i]) <= tol * std::max(1.0, std::fabs(c[i]));
    if (!ok) {
      char text[160];
      std::snprintf(text, sizeof text, "index %zu: GPU %.9g, CPU %.9g", i, g[i], c[i]);
      return text;
    }
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, on_cpu = false;  // --quick: 1/64 of the sizes; --cpu: the CPU backend against itself
  for (int i = 1; i < argc; ++i) {
    quick = quick || std::strcmp(argv[i], "--quick") == 0;
    on_cpu = on_cpu || std::strcmp(argv[i], "--cpu") == 0;
  }
  const Device gpu = on_cpu ? Device::cpu() : default_device();
  if (!gpu.is_cuda() && !on_cpu) {
    std::fprintf(stderr, "xp's default device is %s, not a GPU (--cpu runs the rows on the CPU)\n", gpu.str().c_str());
    return 2;
  }
  const Device cpu = Device::cpu();
  std::printf("xp %s, source %s\n", std::string(xp::version()).c_str(), std::string(xp::source_hash()).c_str());
  const std::int64_t bytes = (std::int64_t{1} << 30) / (quick ? 64 : 1);
  random::Generator g(7);

  // The baseline: a device-to-device copy of 1 GiB of float32 (bytes read plus written).
  double copy_gbps = 0;
  {
    Array x = make(g, DType::float32, {bytes / 4}, gpu);
    Array y = empty({bytes / 4}, DType::float32, gpu);
    const Stat s = measure(gpu, [&] { copyto(y, x); });
    copy_gbps = 2.0 * static_cast<double>(bytes) / (s.median * 1e-3) / 1e9;
    std::printf("%s; copy of %lld MiB float32 (read plus written): %.4f ms [%.4f..%.4f], %.0f GB/s\n\n",
                gpu.str().c_str(), static_cast<long long>(bytes >> 20), s.median, s.lo, s.hi, copy_gbps);
  }

  struct Row {
    Op op;
    DType t;
    Axes axes;                // all: the whole array
    std::int64_t row_length;  // 0: a square matrix for an axis
  };
  std::vector<Row> rows;
  for (DType t : {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int8, DType::uint8,
                  DType::int32, DType::int64})
    rows.push_back({Op::sum, t, {}, 0});
  rows.push_back({Op::mean, DType::float32, {}, 0});
  rows.push_back({Op::var, DType::float32, {}, 0});
  for (DType t : {DType::float32, DType::float64, DType::float16, DType::int8, DType::int32})
    rows.push_back({Op::max, t, {}, 0});
  for (DType t : {DType::float32, DType::float16, DType::int8, DType::int64}) rows.push_back({Op::argmax, t, {}, 0});
  rows.push_back({Op::any, DType::bool_, {}, 0});
  for (int axis : {1, 0}) {
    rows.push_back({Op::sum, DType::float32, Axes(axis), 0});
    rows.push_back({Op::max, DType::float32, Axes(axis), 0});
  }
  rows.push_back({Op::argmax, DType::float32, Axes(1), 0});
  // More columns: 16-bit elements (eight adjacent outputs per 16-byte load), argmax, var's two passes.
  rows.push_back({Op::sum, DType::float16, Axes(0), 16384});  // 32768 x 16384
  rows.push_back({Op::argmax, DType::float32, Axes(0), 0});
  rows.push_back({Op::var, DType::float32, Axes(0), 0});
  for (std::int64_t length : {1024, 4096}) rows.push_back({Op::sum, DType::float32, Axes(1), length});  // 4, 16 KiB
  // int8 columns (sixteen adjacent outputs per 16-byte load): the sum, max's and argmax's SIMD
  // compares, var's float64 state per output.
  for (Op op : {Op::sum, Op::max, Op::argmax, Op::var}) rows.push_back({op, DType::int8, Axes(0), 0});

  std::printf("| op | dtype | axes | shape | ms (min..max) | GB/s read | of copy GB/s | matches CPU |\n");
  std::printf("|---|---|---|---|---:|---:|---:|---|\n");
  int failures = 0;
  for (const Row& r : rows) {
    const std::int64_t n = bytes / static_cast<std::int64_t>(itemsize(r.t));
    const std::int64_t side = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
    const Shape shape = r.axes.all()       ? Shape{n}
                        : r.row_length > 0 ? Shape{n / r.row_length, r.row_length}
                                           : Shape{side, n / side};
    Array x = make(g, r.t, shape, gpu);
    x.eval();
    const Stat s = measure(gpu, [&] { apply(r.op, x, r.axes).eval(); });
    const std::string diff = compare(r.op, r.t, apply(r.op, x, r.axes), apply(r.op, x.to_device(cpu), r.axes));
    failures += diff.empty() ? 0 : 1;
    const double gbps = static_cast<double>(bytes) / (s.median * 1e-3) / 1e9;
    const std::string axes_text = r.axes.all() ? "all" : std::to_string(r.axes.list().front());
    const std::string dtype_text(name(r.t));
    std::printf("| %s | %s | %s | %s | %.4f (%.4f..%.4f) | %.0f | %.3f | %s |\n", op_name(r.op), dtype_text.c_str(),
                axes_text.c_str(),
                shape.size() == 1 ? std::to_string(n).c_str()
                                  : (std::to_string(shape[0]) + "x" + std::to_string(shape[1])).c_str(),
                s.median, s.lo, s.hi, gbps, gbps / copy_gbps, diff.empty() ? "yes" : ("NO: " + diff).c_str());
    std::fflush(stdout);
  }
  std::printf("\nof copy GB/s: the input's bytes per second over the copy's bytes (read plus written) per second.\n");
  return failures == 0 ? 0 : 1;
}
