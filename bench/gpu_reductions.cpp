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
//
// --sweep runs the sweep instead: every case of --sweep-cases (or of the list in --cases FILE), one
// line each, "case <id> <median ms> <min> <max> ok|BAD <what>|unsupported <what>" (see the sweep's
// comment below); bench/python/gpu_reductions.py --sweep runs the same list in CuPy or PyTorch,
// bench/python/sweep_ratio.py joins the three, and bench/reduction_sweep.sh runs them all.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
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

// ---- the sweep ---------------------------------------------------------------------------------
// The cases (--sweep-cases prints them; bench/python/gpu_reductions.py --sweep reads that list, so
// that every library runs the same cases). One line each: "<id> <op> <dtype> <shape> <axis>", the
// shape "N" (a vector) or "RxC" (a matrix), the axis "all", "1" (each row reduced: the last axis) or
// "0" (each column: the first axis); the id is "<op>.<dtype>.<layout>.<size>", layout "all", "rowsLK"
// or "colsLK" (rows of L KiB: the matrix's last axis is L KiB long in either case), size the nominal
// total bytes (1M, 16M, 128M, 1G: a matrix has as many whole rows as fit, so 24, 40 and 96 KiB rows
// come up to 6% short; --quick divides the shapes, never the ids). Lines that start with '#' are
// comments.
//
// What is swept: ops sum, mean, max, min, argmax, argmin, var, std, prod of float32, float64,
// float16, bfloat16, int8, uint8, int32, int64, and any, all of bool; each over the whole array, over
// rows and over columns of a matrix whose rows are 1, 4, 16, 24, 40, 64, 96 and 256 KiB long (the
// kernel choice depends on the row's bytes: 16 and 64 KiB are thresholds, 24, 40 and 96 KiB lie
// between them), at total sizes 2^20, 2^24, 2^27 and 2^30 bytes. Not all of that product:
// - float32 sum, max and argmax: every layout at every size (the size axis: launch-bound at 1 MiB,
//   bandwidth-bound from 128 MiB on);
// - every (op, dtype): every layout at 16 MiB and at 128 MiB (128 MiB takes about 40 us a read on an
//   H100 or H200, ten times a launch: it measures bandwidth as 1 GiB does), and the whole array at
//   1 GiB.
// Why not every case at 1 GiB: each result is checked on the host (CuPy's and PyTorch's against
// NumPy, single-threaded), which at 1 GiB takes seconds for each input and would make a library's
// run last a quarter of an hour or more; 128 MiB checks eight times faster. The list above is about
// 2700 cases, each 3 warm-ups and 50 timed calls (under 30 ms of GPU time even at 1 GiB); the
// run's length is the checks' and the first calls' compiles (a few minutes a library on an H100).
// The list is built in a fixed order (size, dtype, matrix shape, layout, op) so that a runner makes
// each input once and reduces it by every op and over both axes.
struct SweepCase {
  std::string id, op;
  DType t;
  Shape shape;
  int axis;  // -1: the whole array
};

const std::vector<std::string> kNumericOps = {"sum", "mean", "max", "min", "argmax", "argmin", "var", "std", "prod"};
const std::vector<std::string> kBoolOps = {"any", "all"};
const std::vector<DType> kSweepTypes = {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int8,
                                        DType::uint8,   DType::int32,   DType::int64,   DType::bool_};
const std::vector<std::int64_t> kRowKiB = {1, 4, 16, 24, 40, 64, 96, 256};
const std::vector<int> kSizeLog2 = {20, 24, 27, 30};

std::string size_text(int log2) {
  return log2 >= 30 ? std::to_string(1 << (log2 - 30)) + "G" : std::to_string(1 << (log2 - 20)) + "M";
}

std::string shape_text(const Shape& s) {
  std::string text;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(s[i]);
  }
  return text;
}

// Whether the list has (op, t) at this size over this layout (row_kib 0: the whole array).
bool swept(const std::string& op, DType t, int log2, std::int64_t row_kib) {
  const bool every_size = t == DType::float32 && (op == "sum" || op == "max" || op == "argmax");
  return every_size || log2 == 24 || log2 == 27 || (log2 == 30 && row_kib == 0);
}

// --quick: every total size divided by 1024, but never below one row.
std::vector<SweepCase> sweep_cases(bool quick) {
  std::vector<SweepCase> cases;
  for (int log2 : kSizeLog2) {
    for (DType t : kSweepTypes) {
      const std::int64_t item = static_cast<std::int64_t>(itemsize(t));
      const std::vector<std::string>& ops = t == DType::bool_ ? kBoolOps : kNumericOps;
      for (std::int64_t row_kib : std::vector<std::int64_t>{0, 1, 4, 16, 24, 40, 64, 96, 256}) {
        const std::int64_t row_bytes = row_kib * 1024;
        const std::int64_t bytes =
            quick ? std::max((std::int64_t{1} << log2) >> 10, row_bytes) : std::int64_t{1} << log2;
        const std::string size = size_text(log2);
        for (int axis : row_kib == 0 ? std::vector<int>{-1} : std::vector<int>{1, 0}) {
          const std::string layout =
              row_kib == 0 ? "all" : (axis == 1 ? "rows" : "cols") + std::to_string(row_kib) + "K";
          const Shape shape = row_kib == 0 ? Shape{bytes / item} : Shape{bytes / row_bytes, row_bytes / item};
          for (const std::string& op : ops) {
            if (!swept(op, t, log2, row_kib)) continue;
            cases.push_back({op + "." + std::string(name(t)) + "." + layout + "." + size, op, t, shape, axis});
          }
        }
      }
    }
  }
  return cases;
}

void print_cases(const std::vector<SweepCase>& cases, bool quick) {
  std::printf("# xp_bench_gpu_reductions --sweep-cases%s: %zu cases, one a line: id op dtype shape axis\n",
              quick ? " --quick" : "", cases.size());
  for (const SweepCase& c : cases)
    std::printf("%s %s %s %s %s\n", c.id.c_str(), c.op.c_str(), std::string(name(c.t)).c_str(),
                shape_text(c.shape).c_str(), c.axis < 0 ? "all" : std::to_string(c.axis).c_str());
}

// The cases of a list file; throws std::runtime_error naming the line and what is wrong with it.
std::vector<SweepCase> read_cases(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<SweepCase> cases;
  std::map<std::string, int> seen;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
    std::istringstream words(line);
    std::string id, op, dtype, shape, axis, extra;
    if (!(words >> id) || id[0] == '#') continue;
    if (!(words >> op >> dtype >> shape >> axis) || (words >> extra))
      throw std::runtime_error(where + "expected 5 words (id op dtype shape axis), got '" + line + "'");
    SweepCase c{id, op, DType::float32, {}, -1};
    const std::optional<DType> t = parse_dtype(dtype);
    if (!t) throw std::runtime_error(where + "unknown dtype '" + dtype + "'");
    c.t = *t;
    if (std::find(kNumericOps.begin(), kNumericOps.end(), op) == kNumericOps.end() &&
        std::find(kBoolOps.begin(), kBoolOps.end(), op) == kBoolOps.end())
      throw std::runtime_error(where + "unknown op '" + op + "'");
    for (std::size_t start = 0; start <= shape.size();) {
      const std::size_t end = std::min(shape.find('x', start), shape.size());
      const std::string part = shape.substr(start, end - start);
      if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 15)
        throw std::runtime_error(where + "bad shape '" + shape + "' (expected N or RxC)");
      c.shape.push_back(std::stoll(part));
      start = end + 1;
    }
    if (axis != "all") {
      if (axis.size() != 1 || axis[0] < '0' || axis[0] - '0' >= static_cast<int>(c.shape.size()))
        throw std::runtime_error(where + "bad axis '" + axis + "' for shape " + shape + " (expected all or 0.." +
                                 std::to_string(c.shape.size() - 1) + ")");
      c.axis = axis[0] - '0';
    }
    if (seen.count(id)) throw std::runtime_error(where + "id '" + id + "' repeats line " + std::to_string(seen[id]));
    seen[id] = number;
    cases.push_back(c);
  }
  return cases;
}

Array apply_op(const std::string& op, const Array& x, int axis) {
  const Axes axes = axis < 0 ? Axes{} : Axes(axis);
  const std::optional<int> one = axis < 0 ? std::nullopt : std::optional<int>(axis);
  if (op == "sum") return sum(x, axes);
  if (op == "mean") return mean(x, axes);
  if (op == "max") return max(x, axes);
  if (op == "min") return min(x, axes);
  if (op == "argmax") return argmax(x, one);
  if (op == "argmin") return argmin(x, one);
  if (op == "var") return var(x, axes);
  if (op == "std") return xp::std(x, axes);
  if (op == "prod") return prod(x, axes);
  if (op == "any") return any(x, axes);
  return all(x, axes);
}

// As compare() above, for every op of the sweep: exactly for min, max, argmin, argmax, any, all and
// integer sums and products; within 1e-4 relative (1e-2 for 16-bit floats) otherwise.
std::string compare_case(const std::string& op, DType t, const Array& gpu, const Array& cpu) {
  const std::vector<double> g = gpu.astype(DType::float64).to_vector<double>();
  const std::vector<double> c = cpu.astype(DType::float64).to_vector<double>();
  if (g.size() != c.size()) return "sizes differ";
  const bool exact = op == "max" || op == "min" || op == "argmax" || op == "argmin" || op == "any" || op == "all" ||
                     ((op == "sum" || op == "prod") && kind(t) != DTypeKind::floating);
  const double tol = itemsize(t) == 2 ? 1e-2 : 1e-4;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool ok = exact ? g[i] == c[i] || (std::isnan(g[i]) && std::isnan(c[i]))
                          : std::fabs(g[i] - c[i]) <= tol * std::max(1.0, std::fabs(c[i]));
    if (!ok) {
      char text[160];
      std::snprintf(text, sizeof text, "index %zu: GPU %.9g, CPU %.9g", i, g[i], c[i]);
      return text;
    }
  }
  return {};
}

// Runs the cases in order, one line each; 1 when a check failed. The input of a case is made once
// for each (dtype, shape) in a row of cases (bool: all false for any, all true for all, so that
// neither answer is known before the last element), with its CPU copy for the checks.
int run_sweep(const std::vector<SweepCase>& cases, const Device& dev) {
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("# xp on %s: %zu cases; case <id> <median ms> <min ms> <max ms> <check>\n", dev.str().c_str(),
              cases.size());
  std::fflush(stdout);
  const Device cpu = Device::cpu();
  random::Generator g(7);
  std::string key;
  Array x, x_cpu;
  int failures = 0;
  for (const SweepCase& c : cases) {
    const std::string case_key = std::string(name(c.t)) + " " + shape_text(c.shape) + (c.op == "all" ? " true" : "");
    try {
      if (case_key != key) {
        key.clear();
        x = Array(), x_cpu = Array();  // the last input's memory goes first
        x = c.t == DType::bool_ && c.op == "all" ? ones(c.shape, DType::bool_, dev) : make(g, c.t, c.shape, dev);
        x.eval();
        x_cpu = x.to_device(cpu);
        key = case_key;
      }
      const Stat s = measure(dev, [&] { apply_op(c.op, x, c.axis).eval(); });
      const std::string diff = compare_case(c.op, c.t, apply_op(c.op, x, c.axis), apply_op(c.op, x_cpu, c.axis));
      failures += diff.empty() ? 0 : 1;
      std::printf("case %s %.6f %.6f %.6f %s\n", c.id.c_str(), s.median, s.lo, s.hi,
                  diff.empty() ? "ok" : ("BAD " + diff).c_str());
    } catch (const Error& e) {  // an (op, dtype) that xp does not have
      std::string what = e.what();
      std::replace(what.begin(), what.end(), '\n', ' ');
      std::printf("case %s - - - unsupported %s\n", c.id.c_str(), what.c_str());
    }
    std::fflush(stdout);
  }
  std::printf("# %zu cases in %.0f s, %d failed checks\n", cases.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // --quick: 1/64 of the sizes (the sweep: 1/1024); --cpu: the CPU backend against itself; --sweep,
  // --sweep-cases and --cases FILE: the sweep above.
  bool quick = false, on_cpu = false, sweep = false, list_cases = false;
  std::string cases_file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--cpu") {
      on_cpu = true;
    } else if (a == "--sweep") {
      sweep = true;
    } else if (a == "--sweep-cases") {
      list_cases = true;
    } else if (a == "--cases" && i + 1 < argc) {
      cases_file = argv[++i];
    } else {
      std::fprintf(stderr,
                   "%s: unknown argument '%s' (expected --quick, --cpu, --sweep, --sweep-cases, --cases FILE)\n",
                   argv[0], a.c_str());
      return 2;
    }
  }
  if (list_cases) {
    print_cases(sweep_cases(quick), quick);
    return 0;
  }
  std::vector<SweepCase> cases;
  if (sweep) {
    try {
      cases = cases_file.empty() ? sweep_cases(quick) : read_cases(cases_file);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
      return 2;
    }
  } else if (!cases_file.empty()) {
    std::fprintf(stderr, "%s: --cases goes with --sweep\n", argv[0]);
    return 2;
  }
  const Device gpu = on_cpu ? Device::cpu() : default_device();
  if (!gpu.is_cuda() && !on_cpu) {
    std::fprintf(stderr, "xp's default device is %s, not a GPU (--cpu runs the rows on the CPU)\n", gpu.str().c_str());
    return 2;
  }
  if (sweep) return run_sweep(cases, gpu);
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
