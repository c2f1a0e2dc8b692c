// Interop without a GPU (include/xp/interop.hpp): DLPack round trips of CPU memory (contiguous,
// transposed, sliced, negative strides, byte offsets, every dtype), the read-only flag both ways,
// the deleter called exactly once (also when the import is refused), typed errors for what xp
// cannot represent; the CUDA array interface's type strings and the checks it makes before touching
// a device; and arrays as kernel arguments as far as the CPU can see them (kernel_arg).
// The CUDA halves are in test_interop_gpu.cpp and test_kernel_arrays.cpp (label gpu).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "test_util.hpp"
#include "xp/xp.hpp"

using namespace xp;

namespace {

const Device kCpu = Device::cpu();

Array iota(std::int64_t n, DType t = DType::float32) {
  return arange(0, n, 1, DType::float64, kCpu).astype(t);
}

// A DLPack tensor over host memory xp does not own, counting its deleter's calls.
struct Foreign {
  DLManagedTensorVersioned tensor{};
  std::vector<double> data;
  std::vector<std::int64_t> shape, strides;
  int* deleted = nullptr;

  static void deleter(DLManagedTensorVersioned* self) {
    auto* f = static_cast<Foreign*>(self->manager_ctx);
    ++*f->deleted;
    delete f;
  }
  // ndim = shape.size(); strides empty: NULL.
  static DLManagedTensorVersioned* make(int* deleted, std::vector<double> data, std::vector<std::int64_t> shape,
                                        std::vector<std::int64_t> strides = {}, std::uint64_t byte_offset = 0,
                                        std::uint64_t flags = 0) {
    auto* f = new Foreign();
    f->data = std::move(data);
    f->shape = std::move(shape);
    f->strides = std::move(strides);
    f->deleted = deleted;
    DLManagedTensorVersioned& t = f->tensor;
    t.version = {1, 0};
    t.manager_ctx = f;
    t.deleter = &Foreign::deleter;
    t.flags = flags;
    t.dl_tensor.data = f->data.data();
    t.dl_tensor.device = {kDLCPU, 0};
    t.dl_tensor.ndim = static_cast<std::int32_t>(f->shape.size());
    t.dl_tensor.dtype = {kDLFloat, 64, 1};
    t.dl_tensor.shape = f->shape.data();
    t.dl_tensor.strides = f->strides.empty() ? nullptr : f->strides.data();
    t.dl_tensor.byte_offset = byte_offset;
    return &t;
  }
};

std::vector<std::int64_t> span_vec(const std::int64_t* p, int n) {
  return std::vector<std::int64_t>(p, p + n);
}

}  // namespace

TEST(DLPack, AbiMatchesDlpackH) {
  // The layout of dlpack.h 1.x on LP64 (offsets the C struct gives).
  EXPECT_EQ(sizeof(DLTensor), 48u);
  EXPECT_EQ(offsetof(DLTensor, device), 8u);
  EXPECT_EQ(offsetof(DLTensor, ndim), 16u);
  EXPECT_EQ(offsetof(DLTensor, dtype), 20u);
  EXPECT_EQ(offsetof(DLTensor, shape), 24u);
  EXPECT_EQ(offsetof(DLTensor, byte_offset), 40u);
  EXPECT_EQ(sizeof(DLManagedTensorVersioned), 80u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, manager_ctx), 8u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, deleter), 16u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, flags), 24u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, dl_tensor), 32u);
  EXPECT_EQ(sizeof(DLDeviceType), 4u);
  EXPECT_EQ(kDLCUDA, 2);
  EXPECT_EQ(kDLBool, 6);
  EXPECT_EQ(kDLBfloat, 4);
  EXPECT_EQ(DLPACK_FLAG_BITMASK_READ_ONLY, 1u);
  EXPECT_EQ(DLPACK_FLAG_BITMASK_IS_COPIED, 2u);
}

TEST(DLPack, ExportsAContiguousCpuArray) {
  Array a = iota(12).reshape({3, 4});
  DLManagedTensorVersioned* t = to_dlpack(a);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->version.major, 1u);
  EXPECT_EQ(t->version.minor, 1u);
  EXPECT_EQ(t->flags, 0u);
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(t->dl_tensor.device.device_id, 0);
  EXPECT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(t->dl_tensor.dtype.lanes, 1);
  EXPECT_EQ(span_vec(t->dl_tensor.shape, 2), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(span_vec(t->dl_tensor.strides, 2), (std::vector<std::int64_t>{4, 1}));  // elements
  EXPECT_EQ(t->dl_tensor.byte_offset, 0u);
  EXPECT_EQ(t->dl_tensor.data, a.data());
  // The export keeps the memory: the array handle can go first.
  const void* data = t->dl_tensor.data;
  a = Array();
  EXPECT_EQ(static_cast<const float*>(data)[7], 7.0f);
  t->deleter(t);
}

TEST(DLPack, ExportsViewsWithElementStridesAndTheFirstElementsAddress) {
  Array a = iota(12).reshape({3, 4});
  DLManagedTensorVersioned* t = to_dlpack(a.T());
  EXPECT_EQ(span_vec(t->dl_tensor.shape, 2), (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(span_vec(t->dl_tensor.strides, 2), (std::vector<std::int64_t>{1, 4}));
  t->deleter(t);

  Array s = a.slice({Slice(), Slice(1, 4, 2)});  // columns 1 and 3
  t = to_dlpack(s);
  EXPECT_EQ(span_vec(t->dl_tensor.shape, 2), (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(span_vec(t->dl_tensor.strides, 2), (std::vector<std::int64_t>{4, 2}));
  EXPECT_EQ(t->dl_tensor.data, static_cast<const float*>(a.data()) + 1);
  t->deleter(t);

  Array f = flip(iota(5, DType::int16));
  t = to_dlpack(f);
  EXPECT_EQ(t->dl_tensor.strides[0], -1);
  EXPECT_EQ(*static_cast<const std::int16_t*>(t->dl_tensor.data), 4);
  t->deleter(t);

  t = to_dlpack(full({}, 2.5, std::nullopt, kCpu));  // 0-d
  EXPECT_EQ(t->dl_tensor.ndim, 0);
  EXPECT_EQ(*static_cast<const double*>(t->dl_tensor.data), 2.5);
  t->deleter(t);
}

TEST(DLPack, RoundTripSharesMemory) {
  for (bool transposed : {false, true}) {
    Array a = iota(12, DType::int32).reshape({3, 4});
    Array v = transposed ? a.T() : a.slice({Slice(1, 3), Slice(0, 4, 3)});
    Array b = from_dlpack(to_dlpack(v));
    EXPECT_EQ(b.device(), kCpu);
    EXPECT_EQ(b.dtype(), DType::int32);
    EXPECT_EQ(std::vector<std::int64_t>(b.shape().begin(), b.shape().end()),
              std::vector<std::int64_t>(v.shape().begin(), v.shape().end()));
    EXPECT_EQ(b.to_vector<std::int32_t>(), v.to_vector<std::int32_t>());
    // One memory: writes through either are seen by the other.
    b.slice({0, 0}) = 100;
    EXPECT_EQ(v.slice({0, 0}).item<int>(), 100);
    static_cast<std::int32_t*>(a.mutable_data())[11] = -7;
    EXPECT_EQ(b.to_vector<std::int32_t>(), v.to_vector<std::int32_t>());
  }
}

TEST(DLPack, EveryDtypeRoundTrips) {
  struct Case {
    DType t;
    int code, bits;
  };
  const Case cases[] = {
      {DType::bool_, kDLBool, 8},     {DType::int8, kDLInt, 8},         {DType::int16, kDLInt, 16},
      {DType::int32, kDLInt, 32},     {DType::int64, kDLInt, 64},       {DType::uint8, kDLUInt, 8},
      {DType::uint16, kDLUInt, 16},   {DType::uint32, kDLUInt, 32},     {DType::uint64, kDLUInt, 64},
      {DType::float16, kDLFloat, 16}, {DType::bfloat16, kDLBfloat, 16}, {DType::float32, kDLFloat, 32},
      {DType::float64, kDLFloat, 64}};
  for (const Case& c : cases) {
    Array a = iota(7, c.t);
    DLManagedTensorVersioned* t = to_dlpack(a);
    EXPECT_EQ(t->dl_tensor.dtype.code, c.code) << name(c.t);
    EXPECT_EQ(t->dl_tensor.dtype.bits, c.bits) << name(c.t);
    EXPECT_EQ(t->dl_tensor.dtype.lanes, 1) << name(c.t);
    Array b = from_dlpack(t);
    EXPECT_EQ(b.dtype(), c.t);
    EXPECT_EQ(b.to_vector<double>(), a.to_vector<double>()) << name(c.t);
  }
}

TEST(DLPack, ImportsForeignMemoryAndCallsTheDeleterOnceWhenTheLastViewGoes) {
  int deleted = 0;
  {
    // 2 x 3 doubles starting at element 2 of the buffer, row-major (NULL strides).
    Array a = from_dlpack(Foreign::make(&deleted, {-1, -1, 0, 1, 2, 3, 4, 5}, {2, 3}, {}, 2 * sizeof(double)));
    EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
    EXPECT_FALSE(a.is_read_only());
    Array row = a[1];
    a = Array();
    EXPECT_EQ(deleted, 0);  // the view still uses the memory
    EXPECT_EQ(row.to_vector<double>(), (std::vector<double>{3, 4, 5}));
    row += 1.0;  // writable: writes the foreign buffer
    EXPECT_EQ(row.to_vector<double>(), (std::vector<double>{4, 5, 6}));
  }
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, ImportsTransposedAndNegativeStrides) {
  int deleted = 0;
  // Column-major 2 x 3: element (i, j) at i + 2 j.
  Array a = from_dlpack(Foreign::make(&deleted, {0, 10, 1, 11, 2, 12}, {2, 3}, {1, 2}));
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{0, 1, 2, 10, 11, 12}));
  EXPECT_EQ(a.strides()[0], 8);
  EXPECT_EQ(a.strides()[1], 16);
  // Reversed: the first element is the buffer's last, strides -1.
  Array r = from_dlpack(Foreign::make(&deleted, {1, 2, 3, 4}, {4}, {-1}, 3 * sizeof(double)));
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{4, 3, 2, 1}));
  EXPECT_DOUBLE_EQ(sum(r).item<double>(), 10.0);
  a = Array();
  r = Array();
  EXPECT_EQ(deleted, 2);
}

TEST(DLPack, ReadOnlyFlagBothWays) {
  int deleted = 0;
  Array a = from_dlpack(Foreign::make(&deleted, {1, 2, 3}, {3}, {}, 0, DLPACK_FLAG_BITMASK_READ_ONLY));
  EXPECT_TRUE(a.is_read_only());
  EXPECT_THROW(a += 1.0, ValueError);
  EXPECT_THROW(a.mutable_data(), ValueError);
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{1, 2, 3}));  // unchanged
  // Exported again, it stays read-only.
  DLManagedTensorVersioned* t = to_dlpack(a);
  EXPECT_EQ(t->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  Array b = from_dlpack(t);
  EXPECT_TRUE(b.is_read_only());
  a = Array();
  EXPECT_EQ(deleted, 0);
  b = Array();
  EXPECT_EQ(deleted, 1);

  Array w = iota(3);
  t = to_dlpack(w);
  EXPECT_EQ(t->flags, 0u);
  t->deleter(t);
}

TEST(DLPack, ExportEvaluatesLazyArraysAndPendingReaders) {
  Array a = ones({4}, DType::float32, kCpu);
  Array lazy = a * 2.0;  // reads a's memory, not evaluated yet
  ASSERT_TRUE(lazy.is_lazy());
  Array c = a + 1.0;
  DLManagedTensorVersioned* t = to_dlpack(c);  // a lazy array: evaluated first
  EXPECT_FALSE(c.is_lazy());
  EXPECT_EQ(static_cast<const float*>(t->dl_tensor.data)[3], 2.0f);
  t->deleter(t);
  // Exporting a: the other library may write it, so `lazy` computes with a's values first.
  t = to_dlpack(a);
  EXPECT_FALSE(lazy.is_lazy());
  static_cast<float*>(t->dl_tensor.data)[0] = 50.0f;
  EXPECT_EQ(lazy.to_vector<float>(), (std::vector<float>{2, 2, 2, 2}));
  EXPECT_EQ(a.to_vector<float>()[0], 50.0f);
  t->deleter(t);
}

TEST(DLPack, RefusesWhatXpCannotRepresentAndStillCallsTheDeleterOnce) {
  struct Bad {
    const char* what;
    void (*edit)(DLManagedTensorVersioned&);
    bool type_error;
  };
  const Bad cases[] = {
      {"complex32",
       [](DLManagedTensorVersioned& t) {
         t.dl_tensor.dtype = {kDLComplex, 32, 1};
       },
       true},
      {"lanes", [](DLManagedTensorVersioned& t) { t.dl_tensor.dtype.lanes = 2; }, false},
      {"float8",
       [](DLManagedTensorVersioned& t) {
         t.dl_tensor.dtype = {kDLFloat8_e4m3fn, 8, 1};
       },
       true},
      {"float 8 bits",
       [](DLManagedTensorVersioned& t) {
         t.dl_tensor.dtype = {kDLFloat, 8, 1};
       },
       true},
      {"bool of 1 bit",
       [](DLManagedTensorVersioned& t) {
         t.dl_tensor.dtype = {kDLBool, 1, 1};
       },
       true},
      {"opaque",
       [](DLManagedTensorVersioned& t) {
         t.dl_tensor.dtype = {kDLOpaqueHandle, 64, 1};
       },
       true},
      {"byte_offset", [](DLManagedTensorVersioned& t) { t.dl_tensor.byte_offset = 3; }, false},
      {"version", [](DLManagedTensorVersioned& t) { t.version.major = 2; }, false},
      {"device", [](DLManagedTensorVersioned& t) { t.dl_tensor.device.device_type = kDLOpenCL; }, false},
      {"ndim", [](DLManagedTensorVersioned& t) { t.dl_tensor.ndim = -1; }, false},
      {"ndim 65", [](DLManagedTensorVersioned& t) { t.dl_tensor.ndim = 65; }, false},
      {"shape", [](DLManagedTensorVersioned& t) { t.dl_tensor.shape[0] = -2; }, false},
      {"null data", [](DLManagedTensorVersioned& t) { t.dl_tensor.data = nullptr; }, false},
      {"null shape", [](DLManagedTensorVersioned& t) { t.dl_tensor.shape = nullptr; }, false},
      {"stride overflow", [](DLManagedTensorVersioned& t) { t.dl_tensor.strides[0] = std::int64_t{1} << 61; }, false},
      // Strides, shapes and offsets that put elements outside any address space: refused, not read.
      {"span overflow",
       [](DLManagedTensorVersioned& t) { t.dl_tensor.strides[0] = std::numeric_limits<std::int64_t>::max() / 8; },
       false},
      {"span past 2^57",
       [](DLManagedTensorVersioned& t) {
         t.dl_tensor.shape[0] = 3;
         t.dl_tensor.strides[0] = std::int64_t{1} << 55;
       },
       false},
      {"span below address 0", [](DLManagedTensorVersioned& t) { t.dl_tensor.strides[0] = -(std::int64_t{1} << 56); },
       false},
      {"huge shape and stride",
       [](DLManagedTensorVersioned& t) {
         static std::int64_t shape = std::int64_t{1} << 40;
         t.dl_tensor.shape = &shape;
         t.dl_tensor.strides[0] = std::int64_t{1} << 40;
       },
       false},
      {"byte_offset 2^62", [](DLManagedTensorVersioned& t) { t.dl_tensor.byte_offset = std::uint64_t{1} << 62; },
       false},
  };
  for (const Bad& b : cases) {
    int deleted = 0;
    DLManagedTensorVersioned* t = Foreign::make(&deleted, {1, 2, 3, 4}, {4}, {1});
    b.edit(*t);
    if (b.type_error) {
      EXPECT_THROW(from_dlpack(t), TypeError) << b.what;
    } else {
      try {
        from_dlpack(t);
        ADD_FAILURE() << b.what << ": accepted";
      } catch (const TypeError& e) {
        ADD_FAILURE() << b.what << ": a TypeError, expected a ValueError: " << e.what();
      } catch (const ValueError&) {
      }
    }
    EXPECT_EQ(deleted, 1) << b.what;
  }
  EXPECT_THROW(from_dlpack(nullptr), ValueError);
  // A producer stream makes no sense for CPU memory.
  int deleted = 0;
  EXPECT_THROW(from_dlpack(Foreign::make(&deleted, {1}, {1}), 1), ValueError);
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, EmptyTensorsMayHaveNullData) {
  int deleted = 0;
  DLManagedTensorVersioned* t = Foreign::make(&deleted, {}, {0, 3});
  t->dl_tensor.data = nullptr;
  Array a = from_dlpack(t);
  EXPECT_EQ(a.size(), 0);
  EXPECT_EQ(a.shape(1), 3);
  a = Array();
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, ExportRefusesStridesThatAreNotWholeElementsAndStreamsForCpuArrays) {
  std::vector<unsigned char> bytes(64);
  Array odd = wrap(bytes.data(), DType::float32, {3}, nullptr, Shape{6});  // 6-byte steps
  EXPECT_THROW(to_dlpack(odd), ValueError);
  EXPECT_THROW(to_dlpack(iota(3), std::uintptr_t{1}), ValueError);
}

// ---- the CUDA array interface, without a device ----

TEST(CudaArrayInterface, TypeStrings) {
  const std::pair<DType, const char*> cases[] = {
      {DType::bool_, "|b1"},     {DType::int8, "|i1"},       {DType::int16, "<i2"},   {DType::int32, "<i4"},
      {DType::int64, "<i8"},     {DType::uint8, "|u1"},      {DType::uint16, "<u2"},  {DType::uint32, "<u4"},
      {DType::uint64, "<u8"},    {DType::float16, "<f2"},    {DType::float32, "<f4"}, {DType::float64, "<f8"},
      {DType::complex64, "<c8"}, {DType::complex128, "<c16"}};
  for (const auto& [t, s] : cases) {
    EXPECT_EQ(typestr(t), s);
    EXPECT_EQ(dtype_from_typestr(s), t) << s;
  }
  EXPECT_THROW(typestr(DType::bfloat16), TypeError);
  EXPECT_EQ(dtype_from_typestr("=f4"), DType::float32);
  EXPECT_EQ(dtype_from_typestr(">u1"), DType::uint8);  // one byte has no order
  EXPECT_THROW(dtype_from_typestr(">f4"), ValueError);
  EXPECT_THROW(dtype_from_typestr("<c4"), TypeError);
  EXPECT_THROW(dtype_from_typestr("<c32"), TypeError);
  EXPECT_THROW(dtype_from_typestr("<V2"), TypeError);
  EXPECT_THROW(dtype_from_typestr("<f3"), TypeError);
  EXPECT_THROW(dtype_from_typestr("<b2"), TypeError);
  EXPECT_THROW(dtype_from_typestr("f4"), ValueError);
  EXPECT_THROW(dtype_from_typestr("<f"), ValueError);
  EXPECT_THROW(dtype_from_typestr("!f4"), ValueError);
  EXPECT_THROW(dtype_from_typestr("<f4x"), ValueError);
}

TEST(CudaArrayInterface, ExportNeedsADeviceArray) {
  EXPECT_THROW(to_cuda_array_interface(iota(3)), ValueError);
}

TEST(CudaArrayInterface, ImportChecksTheDescriptionBeforeTheDevice) {
  auto keep = std::make_shared<int>(0);
  std::weak_ptr<int> watch = keep;
  CudaArrayInterface good;
  good.shape = {4, 2};
  good.typestr = "<f4";
  good.data = 0x10000;  // never dereferenced: every case below fails before the device
  struct Bad {
    const char* what;
    void (*edit)(CudaArrayInterface&);
    bool type_error;
  };
  const Bad cases[] = {
      {"version 4", [](CudaArrayInterface& c) { c.version = 4; }, false},
      {"version 0", [](CudaArrayInterface& c) { c.version = 0; }, false},
      {"complex32", [](CudaArrayInterface& c) { c.typestr = "<c4"; }, true},
      {"big-endian", [](CudaArrayInterface& c) { c.typestr = ">f4"; }, false},
      {"shape",
       [](CudaArrayInterface& c) {
         c.shape = {-1, 2};
       },
       false},
      {"strides count", [](CudaArrayInterface& c) { c.strides = {4}; }, false},
      {"stride not a whole element",
       [](CudaArrayInterface& c) {
         c.strides = {8, 2};
       },
       false},
      {"null data", [](CudaArrayInterface& c) { c.data = 0; }, false},
      {"misaligned", [](CudaArrayInterface& c) { c.data = 0x10002; }, false},
      {"span overflow",
       [](CudaArrayInterface& c) {
         c.strides = {std::numeric_limits<std::int64_t>::max() / 2 / 8 * 8, 4};
       },
       false},
      {"span below address 0",
       [](CudaArrayInterface& c) {
         c.strides = {-0x10000, 4};
       },
       false},
      {"data past 2^57", [](CudaArrayInterface& c) { c.data = std::uint64_t{1} << 60; }, false},
      {"cpu device", [](CudaArrayInterface&) {}, false},
  };
  for (const Bad& b : cases) {
    CudaArrayInterface c = good;
    b.edit(c);
    const std::optional<Device> device =
        std::string(b.what) == "cpu device" ? std::optional<Device>(kCpu) : std::nullopt;
    if (b.type_error) {
      EXPECT_THROW(from_cuda_array_interface(c, keep, device), TypeError) << b.what;
    } else {
      try {
        from_cuda_array_interface(c, keep, device);
        ADD_FAILURE() << b.what << ": accepted";
      } catch (const TypeError& e) {
        ADD_FAILURE() << b.what << ": a TypeError, expected a ValueError: " << e.what();
      } catch (const ValueError&) {
      }
    }
    EXPECT_EQ(keep.use_count(), 1) << b.what << ": the keep-alive reference was kept";
  }
  keep.reset();
  EXPECT_TRUE(watch.expired());
}

TEST(CudaArrayInterface, ImportWithoutCudaIsDeviceUnavailable) {
  if (cuda_status().available) GTEST_SKIP() << "CUDA is usable here: test_interop_gpu covers imports";
  CudaArrayInterface c;
  c.shape = {4};
  c.typestr = "<f4";
  c.data = 0x10000;
  auto keep = std::make_shared<int>(0);
  EXPECT_THROW(from_cuda_array_interface(c, keep), DeviceUnavailable);
  EXPECT_EQ(keep.use_count(), 1);
}

// ---- arrays as kernel arguments: what the launch packs, seen on the CPU ----

static_assert(detail::CustomKernelArg<Array>, "an Array argument goes through kernel_arg");
static_assert(!detail::CustomKernelArg<int> && !detail::CustomKernelArg<Buffer> && !detail::CustomKernelArg<float*>,
              "other arguments are packed as before");

TEST(KernelArg, PacksTheFirstElementsAddressAndHoldsTheMemory) {
  Array a = iota(12).reshape({3, 4});
  std::shared_ptr<const void> slot;
  KernelArgContext context(kCpu, &slot, 1);
  EXPECT_EQ(kernel_arg(a, context), reinterpret_cast<std::uintptr_t>(a.data()));
  EXPECT_EQ(context.kept(), 1u);
  EXPECT_THROW(context.keep_alive(nullptr), ValueError);  // one per argument

  // A view: the address includes its offset.
  std::shared_ptr<const void> slot2;
  KernelArgContext c2(kCpu, &slot2, 1);
  Array v = a.slice({1, Slice(2, std::nullopt)});
  EXPECT_EQ(kernel_arg(v, c2), reinterpret_cast<std::uintptr_t>(static_cast<const float*>(a.data()) + 6));

  // The held reference keeps the memory: the arrays can go before the kernel has run.
  bool released = false;
  std::vector<float> host(4, 1.0f);
  {
    Array w = wrap(host.data(), DType::float32, {4}, std::shared_ptr<void>(nullptr, [&](void*) { released = true; }));
    std::shared_ptr<const void> s;
    KernelArgContext c3(kCpu, &s, 1);
    kernel_arg(w, c3);
    w = Array();
    EXPECT_FALSE(released);
    s.reset();
  }
  EXPECT_TRUE(released);
}

TEST(KernelArg, EvaluatesLazyArraysAndPendingReadersFirst) {
  Array a = ones({3}, DType::float32, kCpu);
  Array reader = a * 3.0;
  Array lazy = a + 1.0;
  std::shared_ptr<const void> slots[2];
  KernelArgContext context(kCpu, slots, 2);
  const std::uint64_t p = kernel_arg(lazy, context);
  EXPECT_FALSE(lazy.is_lazy());
  EXPECT_EQ(p, reinterpret_cast<std::uintptr_t>(lazy.data()));
  kernel_arg(a, context);  // a kernel may write a: `reader` computes with its values first
  EXPECT_FALSE(reader.is_lazy());
  static_cast<float*>(a.mutable_data())[0] = 9.0f;
  EXPECT_EQ(reader.to_vector<float>(), (std::vector<float>{3, 3, 3}));
}

TEST(KernelArg, AnArrayOnAnotherDeviceIsADeviceMismatch) {
  // Checked by comparing devices: no GPU needed to see the error.
  Array a = iota(3);
  Array lazy = a + 1.0;
  std::shared_ptr<const void> slot;
  KernelArgContext context(Device::cuda(0), &slot, 1);
  EXPECT_THROW(kernel_arg(lazy, context), DeviceMismatch);
  EXPECT_TRUE(lazy.is_lazy());  // refused before anything was evaluated
  EXPECT_EQ(context.kept(), 0u);
}

TEST(KernelArg, AnEmptyKernelRefusesArrays) {
  Kernel k;
  EXPECT_THROW(k.launch({.grid = 1, .block = 1}, iota(3)), ValueError);
}
