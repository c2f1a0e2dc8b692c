#pragma once

// Arrays shared with other libraries without a copy, in the two conventions Python users meet:
// DLPack 1.x (DLManagedTensorVersioned, what `__dlpack__` hands over) and
// `__cuda_array_interface__` version 3 (CuPy, Numba, PyTorch). Both ways: xp wraps memory another
// library owns, and exports its own.
//
// Supported: CPU memory (DLPack kDLCPU) and CUDA device memory (kDLCUDA; the CUDA array interface
// is device memory only); dtypes bool, int8..int64, uint8..uint64, float16, bfloat16 (DLPack only:
// the array interface's type strings have none), float32, float64. Anything else (complex, vector
// lanes, sub-byte types, offsets or strides that are not whole elements, big-endian data) is an
// xp::TypeError or xp::ValueError, raised before anything is kept.
//
// Lazy evaluation and foreign writes: an export evaluates the array and every pending lazy array
// that reads its memory (unless it is read-only), as mutable_data() does, because the other library
// may write it. Writes the other library makes later are invisible to xp's lazy graphs: evaluate
// (xp::eval) before handing memory back and forth while graphs are pending.
//
// Streams (CUDA): "xp's stream" below is the calling thread's current stream of the device
// (current_stream(device): a StreamScope's, else Stream::default_for(device)), after it waited for
// the stream the array was last used on. Importing with a producer stream makes xp's stream wait for the
// work queued on it so far (an event, no host wait). Exporting either makes a consumer's stream
// wait for xp's (DLPack with a consumer stream; the array interface reports xp's stream for the
// consumer to wait on), or waits on the host until xp's stream is done (DLPack without a consumer
// stream; the array interface with synchronize = true, which reports no stream). Stream values are
// the protocols' integers: 1 is the legacy default stream, 2 the per-thread default stream, any
// other nonzero value a CUstream; 0 is "no stream" here (the protocols' None).
//
// Releasing imported device memory: when the last array using it goes, xp waits for its stream to
// finish the work queued on the memory (the owner may reuse it at once), then calls the DLPack
// deleter or drops the keep-alive reference.
//
// Releasing exported device memory is the consumer's to order: when the DLPack deleter has run (or
// the last reference to the array behind an array-interface export is gone) and no xp array uses
// the memory, its block goes back to xp's cache, and work queued on xp's stream may overwrite it at
// once. So a consumer releases the export only after its own work on the memory has finished, or has
// been ordered before xp's stream: for example after synchronizing the stream it used (xp, as a
// consumer, waits for its stream: above). xp cannot order this itself: the deleter carries no
// stream, and the consumer stream given to to_dlpack may be destroyed by then, so waiting on it is
// not safe; the DLPack and array API specifications leave release ordering to the libraries.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xp/array.hpp"
#include "xp/device.hpp"
#include "xp/export.hpp"

// ---- DLPack's C ABI ------------------------------------------------------------------------------
// The declarations of dlpack.h 1.1 (dmlc/dlpack, Apache-2.0): the same names, layouts and values,
// written here because xp depends on no DLPack package (Debian ships only 0.6, without the versioned
// struct). A program that includes a dlpack.h 1.x before this header uses that header's
// declarations instead; one included after this header is skipped (same include guard).
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#define DLPACK_DLL

#include <stdint.h>  // the C names (uint32_t, ...) in the global namespace, as dlpack.h has them

extern "C" {

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef enum : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL (older producers): C-contiguous
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

}  // extern "C"

#endif  // DLPACK_DLPACK_H_

#if DLPACK_MAJOR_VERSION < 1
#error "xp/interop.hpp needs DLPack 1.0 or newer (DLManagedTensorVersioned); an older dlpack.h was included first"
#endif

namespace xp {

// ---- DLPack --------------------------------------------------------------------------------------

// A new DLManagedTensorVersioned sharing a's memory (version 1.1; strides in elements, always
// given; data points at the first element, byte_offset 0; the read-only flag for read-only memory).
// Its deleter (callable from any thread, once) releases xp's reference: call it only once the
// consumer's work on the memory is done or ordered before xp's stream ("Releasing exported device
// memory" at the top of this file). a is evaluated first (see the top of this file). For a CUDA
// array: with a consumer stream, that stream waits for xp's stream on the device; without one, the
// host waits for xp's stream. A consumer stream for a CPU array is a ValueError; so are strides that
// are not whole elements (possible for wrap()ped memory).
XP_API DLManagedTensorVersioned* to_dlpack(const Array& a,
                                           std::optional<std::uintptr_t> consumer_stream = std::nullopt);

// An array over the tensor's memory, taking ownership: the deleter is called once, when the last
// array using the memory is gone, or before from_dlpack throws (so the caller never calls it).
// kDLCPU gives a CPU array, kDLCUDA an array on cuda:<device_id> (checked against the driver's
// record of the pointer). The read-only flag makes a read-only array (writes are ValueErrors).
// With a producer stream, xp's stream waits for it before using the memory. Throws TypeError for a
// dtype xp lacks, ValueError for any other malformed or unsupported tensor (DLPack major version
// other than 1, device type, negative shape, offsets or data that are not whole elements),
// DeviceUnavailable for kDLCUDA where CUDA or that device is not usable.
XP_API Array from_dlpack(DLManagedTensorVersioned* tensor, std::uintptr_t producer_stream = 0);

// ---- __cuda_array_interface__ (version 3) -------------------------------------------------------

// The dictionary, field for field (mask is not supported: xp has no masked arrays).
struct CudaArrayInterface {
  Shape shape;
  std::vector<std::int64_t> strides;  // bytes; empty: C-contiguous (the protocol's None)
  std::string typestr;                // the array protocol's type string: "<f4", "|b1", "<i8", "<f2"
  std::uintptr_t data = 0;            // the device pointer of the first element; 0 for an empty array
  bool read_only = false;
  int version = 3;
  std::uintptr_t stream = 0;  // 0: none (no synchronization needed); 1: legacy; 2: per-thread; else a CUstream
};

// The description of a CUDA array (a ValueError for a CPU array; bfloat16 a TypeError), evaluated
// first (see the top of this file). The stream is xp's stream of the device, on which the consumer
// must wait before using the memory; with synchronize, the host waits for xp's stream instead and
// the stream is 0. The description is valid while `a` (or a view of its memory) is alive, and the
// consumer's work on the memory must be done (or ordered before xp's stream) when the last of them
// goes (see the top of this file).
XP_API CudaArrayInterface to_cuda_array_interface(const Array& a, bool synchronize = false);

// An array over device memory described by `cai` (versions 1 to 3), holding keep_alive until the
// last array using the memory is gone. The device is the pointer's (the driver says); `device`, if
// given, must agree, and names it for an empty array (data 0; default: default_device()). With a
// stream, xp's stream waits for the work queued on it so far. Checks before anything else: the
// version, the type string (TypeError for complex or unknown kinds, ValueError for big-endian), the
// shape, strides (whole elements), alignment; then DeviceUnavailable where CUDA is not usable.
XP_API Array from_cuda_array_interface(const CudaArrayInterface& cai, std::shared_ptr<void> keep_alive,
                                       std::optional<Device> device = std::nullopt);

// The array protocol's type string of a dtype ("<f4", "|u1", "|b1"); TypeError for bfloat16, which
// has none. And back: TypeError or ValueError as from_cuda_array_interface says.
XP_API std::string typestr(DType dtype);
XP_API DType dtype_from_typestr(const std::string& typestr);

}  // namespace xp
