// Interop of device memory (label gpu): DLPack (kDLCUDA) and the CUDA array interface both ways,
// contiguous and strided, read-only, the deleter or keep-alive released exactly once and only
// after xp's stream is done with the memory, producer streams waited for, consumer streams made to
// wait, and pointers that are not device memory refused. Without a GPU every case reports
// "skipped: no GPU"; with XP_TEST_REQUIRE_GPU=1 that fails.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const Device kCpu = Device::cpu();

// A kernel that spins for `spin` clock ticks before writing: work a producer stream is still doing.
const char* kSource = R"(
extern "C" __global__ void slow_fill(float* out, int n, float value, long long spin) {
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}
extern "C" __global__ void copy(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
)";
constexpr long long kSpin = 200'000'000;        // about 0.1 s at 2 GHz
constexpr long long kLongSpin = 2'000'000'000;  // about 1 s at 2 GHz

Kernel kernel(const char* name, const Device& d) {
  static Program p(kSource, {.name = "interop_test.cu"});
  return p.kernel(name, d);
}

// A DLPack tensor over a Buffer (device memory xp's arrays do not own), counting deleter calls.
struct Foreign {
  DLManagedTensorVersioned tensor{};
  Buffer buffer;
  std::vector<std::int64_t> shape, strides;
  int* deleted = nullptr;
  std::function<void()> on_delete;  // what the owner does when xp lets go, if anything
  static void deleter(DLManagedTensorVersioned* self) {
    auto* f = static_cast<Foreign*>(self->manager_ctx);
    if (f->on_delete) f->on_delete();
    ++*f->deleted;
    delete f;
  }
  static DLManagedTensorVersioned* make(int* deleted, const Buffer& b, std::vector<std::int64_t> shape,
                                        std::vector<std::int64_t> strides = {}, std::uint64_t flags = 0) {
    auto* f = new Foreign();
    f->buffer = b;
    f->shape = std::move(shape);
    f->strides = std::move(strides);
    f->deleted = deleted;
    auto& t = f->tensor;
    t.version = {1, 1};
    t.manager_ctx = f;
    t.deleter = &Foreign::deleter;
    t.flags = flags;
    t.dl_tensor.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(b.address()));
    t.dl_tensor.device = {kDLCUDA, b.device().index()};
    t.dl_tensor.ndim = static_cast<std::int32_t>(f->shape.size());
    t.dl_tensor.dtype = {kDLFloat, 32, 1};
    t.dl_tensor.shape = f->shape.data();
    t.dl_tensor.strides = f->strides.empty() ? nullptr : f->strides.data();
    return &t;
  }
};

std::vector<float> iota_host(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

}  // namespace

TEST(InteropGpu, DLPackExportDescribesDeviceMemory) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Array a = asarray(iota_host(12), Shape{3, 4}, gpu);
  DLManagedTensorVersioned* t = to_dlpack(a.T());
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(t->dl_tensor.device.device_id, 0);
  EXPECT_EQ(t->dl_tensor.strides[0], 1);
  EXPECT_EQ(t->dl_tensor.strides[1], 4);
  // The pointer is device memory holding the values (copied out through a Buffer-free path).
  std::vector<float> back(12);
  Buffer staging(gpu, 48);
  Kernel k = kernel("copy", gpu);
  k.launch({.grid = 1, .block = 32}, reinterpret_cast<float*>(t->dl_tensor.data),
           reinterpret_cast<float*>(static_cast<std::uintptr_t>(staging.address())), 12);
  staging.copy_to_host(back.data(), 48);
  EXPECT_EQ(back, iota_host(12));
  t->deleter(t);
}

TEST(InteropGpu, DLPackRoundTripContiguousAndStrided) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Array a = asarray(iota_host(24), Shape{4, 6}, gpu);
  for (const Array& v : {a, a.T(), a.slice({Slice(1, 4, 2), Slice(std::nullopt, std::nullopt, -2)})}) {
    Array b = from_dlpack(to_dlpack(v));
    EXPECT_EQ(b.device(), gpu);
    EXPECT_EQ(b.to_vector<float>(), v.to_vector<float>());
    EXPECT_EQ(std::vector<std::int64_t>(b.strides().begin(), b.strides().end()),
              std::vector<std::int64_t>(v.strides().begin(), v.strides().end()));
  }
  Array b = from_dlpack(to_dlpack(a));
  b += 1.0f;  // one memory
  EXPECT_EQ(a.to_vector<float>()[0], 1.0f);
}

TEST(InteropGpu, DLPackImportOfForeignDeviceMemory) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  int deleted = 0;
  {
    Buffer buf = Buffer::from(gpu, iota_host(6));
    Array a = from_dlpack(Foreign::make(&deleted, buf, {2, 3}, {1, 2}));  // column-major
    EXPECT_EQ(a.device(), gpu);
    EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 2, 4, 1, 3, 5}));
    Array y = a * 2.0f;
    y.eval();  // queued on xp's stream; releasing `a` waits for it before the deleter runs
    a = Array();
    EXPECT_EQ(deleted, 1);
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 4, 8, 2, 6, 10}));
  }
  EXPECT_EQ(deleted, 1);

  Buffer ro = Buffer::from(gpu, iota_host(3));
  Array r = from_dlpack(Foreign::make(&deleted, ro, {3}, {}, DLPACK_FLAG_BITMASK_READ_ONLY));
  EXPECT_TRUE(r.is_read_only());
  EXPECT_THROW(r += 1.0f, ValueError);
  r = Array();
  EXPECT_EQ(deleted, 2);
}

// Releasing imported memory waits for xp's stream, because the owner may reuse the memory at once.
// Here the owner does: when xp lets go (the DLPack deleter, the array interface's keep-alive), it
// overwrites the memory with -1 on a stream of its own, which does not wait for xp's. xp's stream is
// still busy then, without the wait: a slow kernel (about 1 s) and, queued after it, y = a * 2 reading
// the memory. With the wait, y holds twice the original values and the slow kernel had finished when
// the owner let go (a flag it writes last, read on the owner's stream); without it, y reads -1s.
TEST(InteropGpu, ReleasingImportedMemoryWaitsForXpsStream) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const int n = 1 << 16;
  Stream owner(gpu);
  Kernel slow_fill = kernel("slow_fill", gpu);
  {  // a * 2 compiled once beforehand, so that nothing slow runs on the host while the kernel spins
    Array warm = asarray(iota_host(n), std::nullopt, gpu) * 2.0f;
    warm.eval();
  }
  for (const bool dlpack : {true, false}) {
    SCOPED_TRACE(dlpack ? "DLPack" : "CUDA array interface");
    Buffer memory = Buffer::from(gpu, iota_host(n));
    Buffer flag(gpu, 4);
    flag.fill_bytes(0);
    float flag_at_release = -1.0f;
    int released = 0;
    const auto release = [&] {
      flag.copy_to_host_async(&flag_at_release, 4, owner);
      slow_fill.launch({.grid = n / 256, .block = 256, .stream = owner},
                       reinterpret_cast<float*>(static_cast<std::uintptr_t>(memory.address())), n, -1.0f, 0LL);
      owner.synchronize();
      ++released;
    };
    Array a;
    int deleted = 0;
    if (dlpack) {
      DLManagedTensorVersioned* t = Foreign::make(&deleted, memory, {n});
      static_cast<Foreign*>(t->manager_ctx)->on_delete = release;
      a = from_dlpack(t);
    } else {
      CudaArrayInterface c;
      c.shape = {n};
      c.typestr = "<f4";
      c.data = memory.address();
      a = from_cuda_array_interface(c, std::shared_ptr<void>(&released, [&release](void*) { release(); }));
    }
    // xp's stream: the slow kernel (raw pointers: nothing of `a` is held by the launch), then y.
    slow_fill.launch({.grid = 1, .block = 1}, reinterpret_cast<float*>(static_cast<std::uintptr_t>(flag.address())), 1,
                     1.0f, kLongSpin);
    Array y = a * 2.0f;
    y.eval();
    a = Array();  // the last array over the memory
    EXPECT_EQ(released, 1);
    EXPECT_EQ(deleted, dlpack ? 1 : 0);
    EXPECT_EQ(flag_at_release, 1.0f) << "the owner got the memory back while xp's stream was still running";
    const std::vector<float> v = y.to_vector<float>();
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      if (v[static_cast<std::size_t>(i)] != 2.0f * static_cast<float>(i) && bad++ < 3)
        ADD_FAILURE() << "y[" << i << "] = " << v[static_cast<std::size_t>(i)] << ", not " << 2.0f * i
                      << ": xp's work read the memory after the owner reused it";
    }
  }
}

TEST(InteropGpu, DLPackRefusesHostPointersAndWrongDevices) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  int deleted = 0;
  Buffer buf(gpu, 64);
  DLManagedTensorVersioned* t = Foreign::make(&deleted, buf, {4});
  static float host[4] = {1, 2, 3, 4};
  t->dl_tensor.data = host;  // plain host memory, labelled kDLCUDA
  EXPECT_THROW(from_dlpack(t), ValueError);
  EXPECT_EQ(deleted, 1);
  t = Foreign::make(&deleted, buf, {4});
  t->dl_tensor.device.device_id = 1000;
  EXPECT_THROW(from_dlpack(t), DeviceUnavailable);
  EXPECT_EQ(deleted, 2);
  if (devices().size() > 2) {  // a second GPU: memory of cuda:0 said to be on cuda:1
    t = Foreign::make(&deleted, buf, {4});
    t->dl_tensor.device.device_id = 1;
    EXPECT_THROW(from_dlpack(t), ValueError);
    EXPECT_EQ(deleted, 3);
  }
}

TEST(InteropGpu, DLPackImportWaitsForTheProducerStream) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const int n = 1 << 16;
  Buffer buf(gpu, n * 4);
  buf.fill_bytes(0);
  Stream producer(gpu);
  kernel("slow_fill", gpu)
      .launch({.grid = n / 256, .block = 256, .stream = producer},
              reinterpret_cast<float*>(static_cast<std::uintptr_t>(buf.address())), n, 7.0f, kSpin);
  int deleted = 0;
  Array a = from_dlpack(Foreign::make(&deleted, buf, {n}), reinterpret_cast<std::uintptr_t>(producer.handle()));
  const std::vector<float> v = (a + 0.0f).to_vector<float>();  // on xp's stream, after the producer
  EXPECT_EQ(v.front(), 7.0f);
  EXPECT_EQ(v.back(), 7.0f);
}

TEST(InteropGpu, DLPackExportMakesTheConsumerStreamWait) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const int n = 1 << 16;
  Buffer out(gpu, n * 4);
  out.fill_bytes(0);  // waits on the host: before xp's stream gets busy below
  Stream consumer(gpu);
  Array base = full({n}, 5.0f, DType::float32, gpu);
  // xp's stream is busy (a slow kernel, then the array) when the consumer stream starts.
  Buffer slow(gpu, n * 4);
  kernel("slow_fill", gpu)
      .launch({.grid = n / 256, .block = 256}, reinterpret_cast<float*>(static_cast<std::uintptr_t>(slow.address())), n,
              1.0f, kSpin);
  Array a = base + 1.0f;
  DLManagedTensorVersioned* t = to_dlpack(a, reinterpret_cast<std::uintptr_t>(consumer.handle()));
  kernel("copy", gpu)
      .launch({.grid = n / 256, .block = 256, .stream = consumer}, static_cast<const float*>(t->dl_tensor.data),
              reinterpret_cast<float*>(static_cast<std::uintptr_t>(out.address())), n);
  consumer.synchronize();
  const std::vector<float> v = out.to_vector<float>();
  EXPECT_EQ(v.front(), 6.0f);
  EXPECT_EQ(v.back(), 6.0f);
  t->deleter(t);
  EXPECT_THROW(to_dlpack(a, std::uintptr_t{0}), ValueError);  // ambiguous
  // The legacy and per-thread default streams are accepted as consumers.
  for (std::uintptr_t s : {std::uintptr_t{1}, std::uintptr_t{2}}) {
    t = to_dlpack(a, s);
    t->deleter(t);
  }
}

TEST(InteropGpu, CudaArrayInterfaceExport) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Array a = asarray(iota_host(12), Shape{3, 4}, gpu);
  CudaArrayInterface c = to_cuda_array_interface(a);
  EXPECT_EQ(c.version, 3);
  EXPECT_EQ(c.typestr, "<f4");
  EXPECT_EQ(c.shape, (Shape{3, 4}));
  EXPECT_TRUE(c.strides.empty());  // C-contiguous: None
  EXPECT_NE(c.data, 0u);
  EXPECT_FALSE(c.read_only);
  EXPECT_EQ(c.stream, reinterpret_cast<std::uintptr_t>(Stream::default_for(gpu).handle()));
  CudaArrayInterface t = to_cuda_array_interface(a.T(), true);
  EXPECT_EQ(t.strides, (std::vector<std::int64_t>{4, 16}));
  EXPECT_EQ(t.data, c.data);
  EXPECT_EQ(t.stream, 0u);  // synchronized
  EXPECT_THROW(to_cuda_array_interface(a.astype(DType::bfloat16)), TypeError);
  CudaArrayInterface e = to_cuda_array_interface(zeros({0, 3}, DType::int8, gpu));
  EXPECT_EQ(e.data, 0u);
  EXPECT_EQ(e.typestr, "|i1");
}

TEST(InteropGpu, CudaArrayInterfaceRoundTripAndKeepAlive) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Array a = asarray(iota_host(24), Shape{4, 6}, gpu);
  auto keep = std::make_shared<Array>(a);
  std::weak_ptr<Array> watch = keep;
  for (const Array& v : {a, a.T(), a.slice({Slice(1, 3), Slice(0, 6, 2)})}) {
    Array b = from_cuda_array_interface(to_cuda_array_interface(v), keep);
    EXPECT_EQ(b.device(), gpu);
    EXPECT_EQ(b.to_vector<float>(), v.to_vector<float>());
  }
  Array b = from_cuda_array_interface(to_cuda_array_interface(a), keep, gpu);
  keep.reset();
  EXPECT_FALSE(watch.expired());  // b holds it
  b = Array();
  EXPECT_TRUE(watch.expired());

  // A given device must agree with the pointer's.
  if (devices().size() > 2) {
    EXPECT_THROW(from_cuda_array_interface(to_cuda_array_interface(a), nullptr, Device::cuda(1)), ValueError);
  }
  // Streams: legacy and per-thread default streams are waited for without error.
  for (std::uintptr_t s : {std::uintptr_t{1}, std::uintptr_t{2}}) {
    CudaArrayInterface c = to_cuda_array_interface(a);
    c.stream = s;
    EXPECT_EQ(from_cuda_array_interface(c, nullptr).to_vector<float>(), a.to_vector<float>());
  }
  // Read-only.
  CudaArrayInterface c = to_cuda_array_interface(a);
  c.read_only = true;
  Array r = from_cuda_array_interface(c, nullptr);
  EXPECT_THROW(r += 1.0f, ValueError);
  // Empty: data 0, the default device.
  CudaArrayInterface e;
  e.shape = {0};
  e.typestr = "<f8";
  EXPECT_EQ(from_cuda_array_interface(e, nullptr).size(), 0);
  // Host memory is not a device pointer.
  static double host[2] = {1, 2};
  CudaArrayInterface h;
  h.shape = {2};
  h.typestr = "<f8";
  h.data = reinterpret_cast<std::uintptr_t>(host);
  EXPECT_THROW(from_cuda_array_interface(h, nullptr), ValueError);
}

// Read-only memory exported again says so: the array interface's read_only and DLPack's flag, for
// the array and its views; writable memory does not.
TEST(InteropGpu, ReadOnlyArraysExportAsReadOnly) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Buffer buf = Buffer::from(gpu, iota_host(12));
  int deleted = 0;
  CudaArrayInterface c;
  c.shape = {3, 4};
  c.typestr = "<f4";
  c.data = buf.address();
  c.read_only = true;
  const Array from_cai = from_cuda_array_interface(c, std::make_shared<Buffer>(buf));
  const Array from_dl = from_dlpack(Foreign::make(&deleted, buf, {3, 4}, {}, DLPACK_FLAG_BITMASK_READ_ONLY));
  for (const Array& ro : {from_cai, from_dl}) {
    ASSERT_TRUE(ro.is_read_only());
    for (const Array& v : {ro, ro.T(), ro.slice({Slice(1, 3), Slice(0, 4, 2)})}) {
      const CudaArrayInterface e = to_cuda_array_interface(v);
      EXPECT_TRUE(e.read_only);
      EXPECT_EQ(e.data, buf.address() + static_cast<std::uint64_t>(v.offset()));
      DLManagedTensorVersioned* t = to_dlpack(v);
      EXPECT_NE(t->flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0u);
      t->deleter(t);
    }
  }
  const Array writable = asarray(iota_host(12), Shape{3, 4}, gpu);
  EXPECT_FALSE(to_cuda_array_interface(writable).read_only);
  EXPECT_FALSE(to_cuda_array_interface(writable.T(), true).read_only);
  DLManagedTensorVersioned* t = to_dlpack(writable);
  EXPECT_EQ(t->flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0u);
  t->deleter(t);
}

// The array interface's round trip shares the memory, no copy: the same device address, and a write
// through either array is seen through the other.
TEST(InteropGpu, CudaArrayInterfaceRoundTripSharesTheMemory) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Array a = asarray(iota_host(24), Shape{4, 6}, gpu);
  const std::uintptr_t base = to_cuda_array_interface(a).data;
  for (const Array& v : {a, a.T(), a.slice({Slice(1, 3), Slice(0, 6, 2)})}) {
    const CudaArrayInterface cv = to_cuda_array_interface(v);
    Array b = from_cuda_array_interface(cv, nullptr);
    const CudaArrayInterface cb = to_cuda_array_interface(b);
    EXPECT_EQ(cb.data, cv.data);
    EXPECT_EQ(cv.data, base + static_cast<std::uintptr_t>(v.offset()));
    EXPECT_EQ(std::vector<std::int64_t>(b.strides().begin(), b.strides().end()),
              std::vector<std::int64_t>(v.strides().begin(), v.strides().end()));
  }
  Array b = from_cuda_array_interface(to_cuda_array_interface(a.T()), nullptr);  // b = a.T() over a's memory
  b += 100.0f;                                                                   // a write through b ...
  const std::vector<float> seen = a.to_vector<float>();
  for (int i = 0; i < 24; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], 100.0f + i) << i;  // ... seen through a
  a.slice({0}).assign(-1.0f);                            // a write through a (row 0) ...
  const std::vector<float> back = b.to_vector<float>();  // b is 6 x 4: a's row 0 is b's column 0
  for (int r = 0; r < 6; ++r) {
    EXPECT_EQ(back[static_cast<std::size_t>(r * 4)], -1.0f) << r;  // ... seen through b
    EXPECT_EQ(back[static_cast<std::size_t>(r * 4 + 1)], 100.0f + 6 + r) << r;
  }
}

TEST(InteropGpu, CudaArrayInterfaceImportWaitsForTheProducerStream) {
  XP_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const int n = 1 << 16;
  Buffer buf(gpu, n * 4);
  buf.fill_bytes(0);
  Stream producer(gpu);
  kernel("slow_fill", gpu)
      .launch({.grid = n / 256, .block = 256, .stream = producer},
              reinterpret_cast<float*>(static_cast<std::uintptr_t>(buf.address())), n, 3.0f, kSpin);
  CudaArrayInterface c;
  c.shape = {n};
  c.typestr = "<f4";
  c.data = buf.address();
  c.stream = reinterpret_cast<std::uintptr_t>(producer.handle());
  auto keep = std::make_shared<Buffer>(buf);
  Array a = from_cuda_array_interface(c, keep);
  const std::vector<float> v = (a * 1.0f).to_vector<float>();
  EXPECT_EQ(v.front(), 3.0f);
  EXPECT_EQ(v.back(), 3.0f);
}
