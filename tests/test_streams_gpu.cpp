// Streams on a real GPU: array work on a user's stream inside a StreamScope gives the results it
// gives on xp's default stream, arrays handed between streams are ordered on the device, and
// events time the work. Label gpu: skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

std::vector<float> reference(std::int64_t n) {
  std::vector<float> r(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const float x = static_cast<float>(i % 1000) * 0.5f;
    r[static_cast<std::size_t>(i)] = x * 3.0f + 1.0f;
  }
  return r;
}

Array input(std::int64_t n, const Device& d) {
  return (arange(0, n, 1, DType::int64, d) % 1000).astype(DType::float32) * 0.5f;
}

}  // namespace

TEST(StreamsGpu, WorkOnAUserStreamGivesTheSameResultsAndEventsTimeIt) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const std::int64_t n = std::int64_t{1} << 24;
  const std::vector<float> ref = reference(n);
  const Array on_default = (input(n, gpu) * 3 + 1).eval();
  const Stream s(gpu);
  Event start(gpu), stop(gpu);
  Array on_user;
  {
    StreamScope scope(s);
    start.record();
    on_user = (input(n, gpu) * 3 + 1).eval();
    for (int i = 0; i < 20; ++i) on_user = (on_user * 1.0f).eval();  // exact: the same values
    stop.record();
  }
  stop.synchronize();
  const float ms = Event::elapsed(start, stop);
  EXPECT_GT(ms, 0.0f);
  EXPECT_EQ(on_default.to_vector<float>(), ref);
  EXPECT_EQ(on_user.to_vector<float>(), ref) << "read on the default stream, after waiting for s on the device";
}

TEST(StreamsGpu, AnArrayPassedBetweenStreamsIsOrderedOnTheDevice) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const std::int64_t n = std::int64_t{1} << 18;  // every partial sum below an integer under 2^24: exact
  const Stream producer(gpu), consumer(gpu);
  Array a;
  {
    StreamScope on(producer);
    a = zeros({n}, DType::float32, gpu);
    for (int i = 0; i < 50; ++i) a = (a + 1).eval();  // a long queue of work on producer
  }
  Array total;
  {
    StreamScope on(consumer);
    total = sum(a).eval();  // consumer waits for producer on the device
  }
  consumer.synchronize();  // the host waits for the consumer only
  Array host = total.to_device(Device::cpu());
  EXPECT_EQ(host.item<float>(), 50.0f * static_cast<float>(n));
  // Memory freed from one stream and reused on another: the pool orders the reuse.
  for (int round = 0; round < 4; ++round) {
    Array x;
    {
      StreamScope on(producer);
      x = full({n}, static_cast<double>(round), DType::float32, gpu);
      for (int i = 0; i < 10; ++i) x = (x + 1).eval();
    }
    Array y = (x * 2).eval();  // the default stream
    x = Array();
    Array z = full({n}, -1.0, DType::float32, gpu);  // may reuse x's block
    EXPECT_EQ(sum(y).item<float>(), 2.0f * static_cast<float>(round + 10) * static_cast<float>(n)) << round;
    (void)z;
  }
}

TEST(StreamsGpu, AKernelLaunchWithoutAStreamRunsOnTheCurrentStream) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Program prog(
      "extern \"C\" __global__ void add_one(float* x, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) x[i] += 1.0f;\n"
      "}\n");
  const Kernel k = prog.kernel("add_one", gpu);
  const int n = 1 << 20;
  const Stream s(gpu);
  Array a = zeros({n}, DType::float32, gpu);
  {
    StreamScope on(s);
    for (int i = 0; i < 10; ++i) k.launch({.grid = (n + 255) / 256, .block = 256}, a, n);
  }
  EXPECT_EQ(sum(a).item<float>(), 10.0f * n);
}
