// sum of 1 GiB (float16, bfloat16, float32) on cuda:0, 5 batches of 10 between events: median, min, max.
#include <algorithm>
#include <cstdio>
#include <vector>
#include "xp/xp.hpp"
using namespace xp;
int main() {
  const Device dev = default_device();
  random::Generator g(7);
  for (DType t : {DType::float16, DType::bfloat16, DType::float32}) {
    const std::int64_t n = (std::int64_t{1} << 30) / static_cast<std::int64_t>(itemsize(t));
    Array x = g.uniform({n}, DType::float32, -1, 1, dev);
    if (t != DType::float32) x = x.astype(t);
    x.eval();
    auto f = [&] { sum(x).eval(); };
    for (int i = 0; i < 3; ++i) f();
    std::vector<double> ms;
    const Stream st = Stream::default_for(dev);
    for (int r = 0; r < 5; ++r) {
      Event a(dev), b(dev);
      a.record(st);
      for (int i = 0; i < 10; ++i) f();
      b.record(st);
      b.synchronize();
      ms.push_back(Event::elapsed_ms(a, b) / 10);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("sum %s all %lld: %.4f ms (%.4f..%.4f) value %.6g\n", std::string(name(t)).c_str(), (long long)n, ms[2],
                ms[0], ms[4], sum(x).astype(DType::float64).to_vector<double>()[0]);
  }
}
