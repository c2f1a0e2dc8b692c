// The current device and stream of a thread (DeviceScope, StreamScope, Device::activate), how
// arrays remember their stream and order their use across streams, xp's pool across streams,
// events, and external streams, on the fake driver's hollow devices (tests/fake_driver/fake_cuda.cpp:
// ctest sets XP_CUDA_DRIVER and XP_FAKE_CUDA=devices=2,hollow,...). The fake's trace tells which
// stream each launch, copy, event record and wait went to; no kernel runs. Each case in a process of
// its own.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fake_driver/fake_handle.hpp"
#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const xp_test::ProcessCache process_cache;

// The fake's trace: one line per call ("launch S", "copy S", "record E S", "wait S E P").
class Trace : public xp_test::FakeDriverHandle {
 public:
  void clear() const {
    if (const auto f = fn<void (*)()>("xp_fake_cuda_trace_clear")) f();
  }
  std::vector<std::string> lines() const {
    const auto f = fn<long (*)(char*, long)>("xp_fake_cuda_trace");
    if (f == nullptr) return {};
    std::string s(static_cast<std::size_t>(f(nullptr, 0)) + 1, '\0');
    f(s.data(), static_cast<long>(s.size()));
    s.resize(s.size() - 1);
    std::vector<std::string> out;
    std::size_t b = 0;
    for (std::size_t e; (e = s.find('\n', b)) != std::string::npos; b = e + 1) out.push_back(s.substr(b, e - b));
    return out;
  }
  // How many lines are `what` on `stream` ("launch", "copy", "memset").
  long on(const char* what, const Stream& stream) const {
    const std::string want = std::string(what) + " " + ptr(stream.handle());
    long n = 0;
    for (const auto& l : lines()) n += l == want;
    return n;
  }
  // Waits of `waiter` for an event last recorded on `producer`.
  long waits(const Stream& waiter, const Stream& producer) const {
    const std::string head = "wait " + ptr(waiter.handle()) + " ", tail = " " + ptr(producer.handle());
    long n = 0;
    for (const auto& l : lines())
      n +=
          l.rfind(head, 0) == 0 && l.size() >= tail.size() && l.compare(l.size() - tail.size(), tail.size(), tail) == 0;
    return n;
  }
  long calls(const char* entry) const {
    const auto f = fn<long (*)(const char*)>("xp_fake_cuda_calls");
    return f != nullptr ? f(entry) : -1;
  }
  long count(const char* what) const {
    long n = 0;
    for (const auto& l : lines()) n += l.rfind(std::string(what) + " ", 0) == 0;
    return n;
  }
  static std::string ptr(const void* p) {
    char b[32];
    std::snprintf(b, sizeof b, "%p", p);
    return b;
  }
};

class Streams : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* spec = std::getenv("XP_FAKE_CUDA");
    ASSERT_TRUE(spec != nullptr && std::string(spec).find("hollow") != std::string::npos)
        << "run through ctest, which sets XP_CUDA_DRIVER and XP_FAKE_CUDA=devices=2,hollow,...";
    const CudaStatus s = cuda_status();
    if (s.reason == CudaReason::no_usable_nvrtc)
      XP_SKIP_OR_FAIL("XP_TEST_REQUIRE_NVRTC", "no usable NVRTC, so CUDA is not available: " + s.detail);
    ASSERT_TRUE(s.available) << to_string(s.reason) << ": " << s.detail;
    ASSERT_TRUE(trace.ok());
  }
  const Device gpu0 = Device::cuda(0);
  const Device gpu1 = Device::cuda(1);
  Trace trace;
};

Array ramp(std::int64_t n, const Device& d) {
  return arange(0, n, 1, DType::float32, Device::cpu()).to_device(d);
}

}  // namespace

TEST_F(Streams, StreamScopesNestAndRestore) {
  const Stream dflt = Stream::default_for(gpu0);
  EXPECT_EQ(current_stream(gpu0), dflt);
  const Stream s1(gpu0), s2(gpu0), t1(gpu1);
  {
    StreamScope a(s1);
    EXPECT_EQ(current_stream(gpu0), s1);
    EXPECT_EQ(current_stream(), s1);
    EXPECT_EQ(current_stream(gpu1), Stream::default_for(gpu1)) << "a scope names one device's stream";
    {
      StreamScope b(s2);
      EXPECT_EQ(current_stream(gpu0), s2);
      {
        StreamScope c(t1);  // another device: it becomes the current device as well
        EXPECT_EQ(current_device(), gpu1);
        EXPECT_EQ(current_stream(), t1);
        EXPECT_EQ(current_stream(gpu0), s2);
      }
      EXPECT_EQ(current_device(), gpu0);
      EXPECT_EQ(current_stream(gpu1), Stream::default_for(gpu1));
    }
    EXPECT_EQ(current_stream(gpu0), s1);
  }
  EXPECT_EQ(current_stream(gpu0), dflt);
  EXPECT_FALSE(dflt == s1);
}

TEST_F(Streams, ScopesRestoreWhenAnExceptionLeavesThem) {
  const Stream s(gpu1);
  EXPECT_EQ(default_device(), gpu0);
  try {
    DeviceScope d(Device::cpu());
    EXPECT_EQ(default_device(), Device::cpu());
    StreamScope on(s);
    EXPECT_EQ(default_device(), gpu1);
    throw std::runtime_error("leaves both scopes");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(default_device(), gpu0);
  EXPECT_EQ(current_stream(gpu1), Stream::default_for(gpu1));
  // A scope whose device cannot be used throws and changes nothing.
  EXPECT_THROW(DeviceScope bad{Device::cuda(7)}, DeviceUnavailable);
  EXPECT_EQ(default_device(), gpu0);
}

TEST_F(Streams, DeviceScopeDecidesWhereNewArraysGo) {
  EXPECT_EQ(zeros({4}).device(), gpu0);
  {
    DeviceScope on1(gpu1);
    EXPECT_EQ(current_device(), gpu1);
    EXPECT_EQ(zeros({4}).device(), gpu1);
    EXPECT_EQ(asarray(std::vector<float>{1, 2}).device(), gpu1);
    {
      DeviceScope cpu(Device::cpu());
      EXPECT_EQ(ones({2}).device(), Device::cpu());
    }
    EXPECT_EQ(arange(0, 3).device(), gpu1);
    // An array named to a device still goes there.
    EXPECT_EQ(zeros({4}, DType::float32, gpu0).device(), gpu0);
  }
  EXPECT_EQ(zeros({4}).device(), gpu0);
}

TEST_F(Streams, ActivateMakesTheDeviceCurrentUntilAnEnclosingScopeEnds) {
  {
    DeviceScope scope(Device::cpu());
    gpu1.activate();
    EXPECT_EQ(zeros({2}).device(), gpu1);
  }
  EXPECT_EQ(zeros({2}).device(), gpu0) << "the scope restores what was current before it";
  gpu1.activate();
  EXPECT_EQ(zeros({2}).device(), gpu1);
  Device::cpu().activate();
  EXPECT_EQ(zeros({2}).device(), Device::cpu());
  // xp's own work on another device never changes the thread's current device.
  Array on0 = ramp(8, gpu0);
  (on0 * 2).eval();
  EXPECT_EQ(current_device(), Device::cpu());
}

TEST_F(Streams, EachThreadHasItsOwnScopes) {
  const Stream s(gpu0);
  StreamScope on(s);
  DeviceScope d(gpu1);
  Device seen;
  bool same_stream = true;
  std::thread t([&] {
    seen = current_device();
    same_stream = current_stream(gpu0) == s;
  });
  t.join();
  EXPECT_EQ(seen, gpu0);
  EXPECT_FALSE(same_stream);
}

TEST_F(Streams, TheCpuHasNoStreams) {
  EXPECT_THROW(current_stream(Device::cpu()), ValueError);
  EXPECT_THROW(Stream s{Device::cpu()}, ValueError);
  DeviceScope cpu(Device::cpu());
  EXPECT_THROW(current_stream(), ValueError);
  // CPU arrays inside a StreamScope run on the CPU as ever.
  const Stream s(gpu0);
  StreamScope on(s);
  Array a = asarray(std::vector<float>{1, 2, 3}, std::nullopt, Device::cpu());
  EXPECT_EQ((a + 1).to_vector<float>(), (std::vector<float>{2, 3, 4}));
}

TEST_F(Streams, AnArrayOperationInsideAStreamScopeRunsOnThatStream) {
  const Stream dflt = Stream::default_for(gpu0);
  const Stream s(gpu0);
  Array a = ramp(1000, gpu0);
  (a + 1).eval();  // compiled and loaded outside the trace
  {
    StreamScope on(s);
    trace.clear();
    Array b = (a * 3 + 1).eval();
    EXPECT_EQ(trace.on("launch", s), 1);
    EXPECT_EQ(trace.on("launch", dflt), 0);
    // Transfers go there too.
    trace.clear();
    (void)b.to_device(Device::cpu());
    EXPECT_GE(trace.on("copy", s), 1);
    EXPECT_EQ(trace.on("copy", dflt), 0);
  }
  trace.clear();
  (a + 1).eval();
  EXPECT_EQ(trace.on("launch", dflt), 1);
  EXPECT_EQ(trace.on("launch", s), 0);
}

TEST_F(Streams, UsingAnArrayOnAnotherStreamWaitsForItsStreamOnTheDevice) {
  const Stream dflt = Stream::default_for(gpu0);
  const Stream s(gpu0);
  Array a = ramp(1000, gpu0);  // made on the default stream
  (a + 1).eval();
  free_all(gpu0);  // no cached block whose reuse would add a wait of its own (the pool's, tested below)
  long syncs = trace.calls("cuStreamSynchronize") + trace.calls("cuCtxSynchronize");
  Array b;
  {
    StreamScope on(s);
    trace.clear();
    b = (a + 1).eval();
    EXPECT_EQ(trace.waits(s, dflt), 1) << "s waits for the stream that made a";
    EXPECT_EQ(trace.count("wait"), 1);
    // a is s's now, and b was made there: no further wait while the work stays on s.
    trace.clear();
    Array c = (a * b).eval();
    EXPECT_EQ(trace.count("wait"), 0);
    EXPECT_EQ(trace.on("launch", s), 1);
  }
  // Back on the default stream after the scope: it waits for s, where b was made.
  EXPECT_EQ(trace.calls("cuStreamSynchronize") + trace.calls("cuCtxSynchronize"), syncs) << "the host never waited";
  free_all(gpu0);  // (which waits on the host for the pool's blocks: counted before it)
  syncs = trace.calls("cuStreamSynchronize") + trace.calls("cuCtxSynchronize");
  trace.clear();
  Array e = (b * 2).eval();
  EXPECT_EQ(trace.waits(dflt, s), 1);
  EXPECT_EQ(trace.lines().front().rfind("record ", 0), 0u) << "an event on s, then the wait, then the launch";
  EXPECT_EQ(trace.on("launch", dflt), 1);
  EXPECT_EQ(trace.calls("cuStreamSynchronize") + trace.calls("cuCtxSynchronize"), syncs) << "the host never waited";
}

TEST_F(Streams, AReductionAndAKernelLaunchFollowTheCurrentStream) {
  const Stream dflt = Stream::default_for(gpu0);
  const Stream s(gpu0);
  Array a = ramp(4096, gpu0);
  (void)sum(a).eval();
  Program prog(
      "extern \"C\" __global__ void twice(float* x, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) x[i] *= 2;\n"
      "}\n");
  const Kernel k = prog.kernel("twice", gpu0);
  k.launch({.grid = 16, .block = 256}, a, 4096);
  StreamScope on(s);
  trace.clear();
  (void)sum(a).eval();
  EXPECT_GE(trace.on("launch", s), 1);
  EXPECT_EQ(trace.on("launch", dflt), 0);
  trace.clear();
  k.launch({.grid = 16, .block = 256}, a, 4096);  // no stream named: the current one
  EXPECT_EQ(trace.on("launch", s), 1);
  EXPECT_EQ(trace.count("wait"), 0) << "a was last used on s";
  // A launch on another stream orders the array's use: that stream waits for s.
  const Stream other(gpu0);
  trace.clear();
  k.launch({.grid = 16, .block = 256, .stream = other}, a, 4096);
  EXPECT_EQ(trace.on("launch", other), 1);
  EXPECT_EQ(trace.waits(other, s), 1);
}

TEST_F(Streams, ThePoolReusesABlockOnAnotherStreamOnlyAfterItsLastStream) {
  const Stream dflt = Stream::default_for(gpu0);
  const Stream s(gpu0);
  free_all(gpu0);
  {
    StreamScope on(s);
    Array a = zeros({1 << 16}, DType::float32, gpu0);
    (a + 1).eval();
    trace.clear();
  }  // a's block goes back to the pool as last used on s: an event recorded there
  EXPECT_EQ(trace.count("record"), 1);
  trace.clear();
  Array b = zeros({1 << 16}, DType::float32, gpu0);  // the same size class, on the default stream
  EXPECT_EQ(trace.waits(dflt, s), 1) << "the default stream waits for s's last use of the block";
  // A block freed on the default stream and reused there needs no wait.
  b = Array();
  trace.clear();
  Array c = zeros({1 << 16}, DType::float32, gpu0);
  EXPECT_EQ(trace.count("wait"), 0);
  EXPECT_EQ(trace.count("record"), 0);
  // Reused on s, a block of the default stream (a size class s never freed): s waits for the
  // default stream.
  Array big = zeros({1 << 18}, DType::float32, gpu0);
  big = Array();
  StreamScope on(s);
  trace.clear();
  Array d = zeros({1 << 18}, DType::float32, gpu0);
  EXPECT_EQ(trace.waits(s, dflt), 1);
}

TEST_F(Streams, AnExternalStreamTakesArrayWorkInsideAScope) {
  const Stream owner(gpu0);  // stands for another library's stream
  const Stream ext = Stream::external(gpu0, owner.handle());
  EXPECT_FALSE(ext.owned());
  EXPECT_EQ(ext, owner);
  Array a = ramp(1000, gpu0);
  (a + 1).eval();
  StreamScope on(ext);
  trace.clear();
  (a + 1).eval();
  EXPECT_EQ(trace.on("launch", owner), 1);
  EXPECT_EQ(Stream::wrap(gpu0, owner.handle()), ext) << "wrap is the older name";
}

TEST_F(Streams, EventsRecordOnTheCurrentStreamAndTime) {
  const Stream s(gpu0);
  Event start(gpu0), stop(gpu0);
  EXPECT_TRUE(start.flags().timing);
  {
    StreamScope on(s);
    trace.clear();
    start.record();
    (ramp(100, gpu0) + 1).eval();
    stop.record();
    EXPECT_EQ(trace.lines().front(), "record " + Trace::ptr(start.handle()) + " " + Trace::ptr(s.handle()));
  }
  stop.synchronize();
  EXPECT_TRUE(stop.query());
  EXPECT_GE(Event::elapsed(start, stop), 0.0f);
  EXPECT_EQ(Event::elapsed_ms(start, stop), Event::elapsed(start, stop));
  Event untimed(gpu0, {.timing = false});
  untimed.record(s);
  EXPECT_THROW(Event::elapsed(start, untimed), ValueError);
  Event blocking(gpu0, {.timing = true, .blocking = true});
  EXPECT_TRUE(blocking.flags().blocking);
  // A stream waits for an event on the device.
  const Stream t(gpu0);
  trace.clear();
  t.wait_event(stop);
  EXPECT_EQ(trace.waits(t, s), 1);
  EXPECT_THROW(Stream(gpu1).wait_event(stop), ValueError);
  EXPECT_THROW(Event e{Device::cpu()}, ValueError);
}

// Two threads, each on a stream of its own, read one array and make their own from it at once:
// each one's launches go to its own stream, and the array's stream (a field both threads update
// under the storage's lock) ends as one of the two. Under ThreadSanitizer (the tsan preset runs
// this program) a race on the array's stream, the pool's blocks or the scopes would be reported.
TEST_F(Streams, TwoThreadsOnStreamsOfTheirOwnShareAnInput) {
  Array a = ramp(4096, gpu0);
  (a + 1).eval();  // compiled and loaded before the threads
  (a * 2).eval();
  trace.clear();
  constexpr int kRounds = 40;
  std::vector<Stream> streams;
  for (int t = 0; t < 2; ++t) streams.emplace_back(gpu0);
  std::vector<std::string> failures(2);
  auto work = [&](int t) {
    try {
      StreamScope on(streams[static_cast<std::size_t>(t)]);
      for (int i = 0; i < kRounds; ++i) {
        Array b = (t == 0 ? a + 1 : a * 2).eval();
        if (b.size() != 4096) failures[static_cast<std::size_t>(t)] = "wrong size";
      }
    } catch (const std::exception& e) {
      failures[static_cast<std::size_t>(t)] = e.what();
    }
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(failures, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(trace.on("launch", streams[0]), kRounds);
  EXPECT_EQ(trace.on("launch", streams[1]), kRounds);
  EXPECT_EQ(trace.on("launch", Stream::default_for(gpu0)), 0);
}
