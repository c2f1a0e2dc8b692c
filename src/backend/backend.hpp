#pragma once

// A backend: the table of operations the array layer asks of a device (the registry idea of
// ggml-backend). The array layer never names CPU or CUDA code; it calls backend_for(device).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "backend/ir.hpp"
#include "backend/reduce_ops.hpp"
#include "xp/device.hpp"
#include "xp/memory.hpp"
#include "xp/precision.hpp"

namespace xp::detail {

// A block of memory on a device; freed when the last owner lets go.
struct Allocation {
  std::byte* data = nullptr;  // host pointer, or device address for GPUs
  std::size_t bytes = 0;
  std::shared_ptr<void> owner;  // frees the memory (or keeps wrapped memory alive)
  // Or, without the shared_ptr's control block: called once by the last owner.
  void (*release)(std::byte* data, std::size_t bytes) = nullptr;
  // Freed memory goes back to a pool whose blocks are used again only by work ordered after the
  // device's own stream (the CUDA backend's): a kernel on that stream needs no hold on it.
  bool stream_ordered = false;
};

enum class RandomKind : std::uint8_t { uniform, normal, integers };
struct RandomRequest {
  RandomKind kind = RandomKind::uniform;
  std::uint64_t seed = 0, stream = 0;
  std::int64_t low = 0, high = 0;  // integers: [low, high)
};

// Dense factorizations (LAPACK on the CPU, cuSOLVER on CUDA): Backend::linalg.
enum class LinalgOp : std::uint8_t { cholesky, lu, solve, qr, eigh, svd };
struct LinalgCall {
  LinalgOp op = LinalgOp::cholesky;
  bool upper = false;     // cholesky: the upper factor (else the lower)
  bool complete = false;  // qr: mode "complete"; svd: full_matrices
  bool vectors = true;    // eigh, svd: the vectors wanted (else the values only)
};

// Discrete Fourier transforms: Backend::fft.
enum class FftKind : std::uint8_t { c2c, r2c, c2r };
struct FftCall {
  FftKind kind = FftKind::c2c;
  bool inverse = false;  // c2c: exp(+2 pi i jk / n) (c2r is always inverse, r2c always forward)
  std::int64_t n = 0;    // the transform's length (the real side's for r2c and c2r)
  double scale = 1.0;    // multiplies the unnormalized transform
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const noexcept = 0;
  // Whether the device's work runs on streams (the calling thread's current one, current.hpp): the
  // array layer then orders each array's use across streams (Storage::stream).
  virtual bool uses_streams() const noexcept { return false; }
  // Throws OutOfMemory (with the bytes asked) when the memory is not there.
  virtual Allocation allocate(std::size_t bytes) = 0;
  virtual void run_fused(const FusedProgram& program) = 0;
  // One elementwise instruction over `nargs` C-contiguous operands of dtype `operand` (n elements
  // each) into the C-contiguous `out` of dtype `result`: the same values as the one-instruction
  // program, without planning one. Returns false, having done nothing, where the backend has no
  // such shortcut for this case (the caller then runs the program through run_fused).
  virtual bool run_flat(Op op, DType operand, DType result, const std::byte* const* args, int nargs, std::byte* out,
                        std::int64_t n) {
    (void)op, (void)operand, (void)result, (void)args, (void)nargs, (void)out, (void)n;
    return false;
  }
  virtual void reduce(ReduceOp op, const View& in, std::span<const int> axes, const View& out, double correction) = 0;
  // The same reduction of a fused elementwise value, in one pass that never stores the value: the
  // program has no output views and one output_instr (the value; its dtype is the reduced input's),
  // over the shape of the value. Returns false, having done nothing, when the backend does not fuse
  // this program (the array layer then evaluates the value and calls reduce). Checks as reduce does.
  virtual bool reduce_fused(ReduceOp op, const FusedProgram& program, std::span<const int> axes, const View& out,
                            double correction) {
    (void)op, (void)program, (void)axes, (void)out, (void)correction;
    return false;
  }
  // A running sum (op sum) or product (op prod) along axis: cumulative_sum, cumulative_prod.
  virtual void cumulative(ReduceOp op, const View& in, int axis, const View& out, bool include_initial) = 0;
  // precision: what a float32 matmul may use (tf32 permits TF32, it does not require it); a backend
  // without a faster mode computes every precision as float32, and other dtypes ignore it.
  virtual void matmul(const View& a, const View& b, const View& out, MatmulPrecision precision) = 0;
  virtual void vecdot(const View& a, const View& b, const View& out) = 0;
  // out[...] = in taken at indices (int64, already checked in range and made non-negative) along
  // axis; out's shape is in's with axis replaced by indices' shape.
  virtual void take(const View& in, const View& indices, int axis, const View& out) = 0;
  // Sorts every row (the last axis) of the C-contiguous `keys` (ndim >= 1). `values` (keys' dtype
  // and shape, C-contiguous) receives the sorted elements with their own bits, `indices` (int64,
  // keys' shape, C-contiguous) each one's position in its row; either may have data == nullptr (not
  // wanted). The order is NumPy's: ascending with NaNs last (every NaN equal), -0.0 equal to +0.0;
  // descending is the reverse order (NaNs first). Always stable: equal keys keep their input order.
  virtual void sort(const View& keys, const View& values, const View& indices, bool descending) = 0;
  // The mirror of take: dst[..., indices[j], ...] = values[..., j, ...] along axis, values' shape
  // being dst's with axis replaced by the indices' shape and values of dst's dtype; indices int64,
  // already checked in range and made non-negative. Where an index repeats, the value of the last
  // such j (in C order) is written; `unique` promises that none repeats.
  virtual void scatter(const View& dst, const View& indices, int axis, const View& values, bool unique) = 0;
  // How many elements of the C-contiguous 1-D bool `mask` are true (the size of flatnonzero's out).
  virtual std::int64_t count_true(const View& mask) = 0;
  // The positions (int64, ascending) of the nonzero elements of the C-contiguous 1-D bool `mask`,
  // or, where values.data is not null, values' elements there (values: C-contiguous, the mask's size,
  // out's dtype): a boolean mask's selection in one pass. `out` (1-D, C-contiguous) has room for
  // exactly count_true(mask) elements.
  virtual void flatnonzero(const View& mask, const View& values, const View& out) = 0;
  // For each element of `queries` (any layout, sorted's dtype), the index into the 1-D `sorted`
  // (ascending in sort's order) where it would be inserted keeping the order: before every equal
  // element (right = false) or after them. `out`: int64, queries' shape.
  virtual void searchsorted(const View& sorted, const View& queries, bool right, const View& out) = 0;
  // Fills a C-contiguous view with draw (seed, stream) elements 0 .. n-1 (floats: uniform in
  // [0, 1) or standard normal; integers in [low, high)).
  virtual void fill_random(const RandomRequest& request, const View& out) = 0;
  // A batch of dense factorizations. Every view is C-contiguous; each holds one matrix (or vector)
  // per batch entry, the batch being the leading dimensions, equal in every view (the array layer
  // broadcasts and copies first). dtype float32, float64, complex64 or complex128, one for all
  // views but the eigenvalues and singular values (the real dtype) and the pivots (int64).
  //   cholesky  in {a (b.., n, n)}            out {factor (b.., n, n), the other triangle zero};
  //             only a's triangle named by call.upper is read
  //   lu        in {a (b.., n, n)}            out {lu (b.., n, n), pivots (b.., n): 0-based, row i
  //             was swapped with row pivots[i], as getrf's ipiv - 1}; info > 0 (U singular) is
  //             not an error here: det and slogdet use it
  //   solve     in {a (b.., n, n), rhs (b.., n, k)}  out {x (b.., n, k)}
  //   qr        in {a (b.., m, n)}            out {q (b.., m, k), r (b.., k, n)}, k = min(m, n), or
  //             with call.complete q (b.., m, m) and r (b.., m, n)
  //   eigh      in {a (b.., n, n)}, lower triangle read
  //                                           out {w (b.., n) ascending[, v (b.., n, n), columns]}
  //   svd       in {a (b.., m, n)}            out {s (b.., k) descending[, u (b.., m, m or k),
  //             vh (b.., n or k, n)]}
  // info (one per batch entry, C order) is set to 0 where the matrix had an answer and to the
  // library's positive info code where not (the array layer raises LinAlgError); an argument the
  // library refuses (a negative info) is thrown as Error. Empty batches and n = 0 do nothing.
  // Returns false, having done nothing, where this backend cannot compute it (its library is
  // missing): the array layer then computes on the CPU and copies the results back.
  virtual bool linalg(const LinalgCall& call, std::span<const View> in, std::span<const View> out,
                      std::span<std::int64_t> info) {
    (void)call, (void)in, (void)out, (void)info;
    return false;
  }
  // A batch of 1-D discrete Fourier transforms along the last axis of C-contiguous views (the array
  // layer moves the axis last): c2c in and out complex of one dtype, (b.., n); r2c in real (b.., n),
  // out complex (b.., n/2 + 1) of the matching dtype; c2r in complex (b.., n/2 + 1), out real
  // (b.., n), the imaginary parts of the first element and (n even) of the last ignored. The
  // unnormalized sum times call.scale, computed in the dtype's precision. in is not modified; in and
  // out do not overlap; n >= 1 and out holds at least one element (the array layer sees to both).
  // Returns false, having done nothing, where this backend cannot (its library is missing).
  virtual bool fft(const FftCall& call, const View& in, const View& out) {
    (void)call, (void)in, (void)out;
    return false;
  }
  // Host <-> device copies of contiguous bytes (the CPU backend: memcpy).
  virtual void copy_to_host(const std::byte* src, void* dst, std::size_t bytes) = 0;
  virtual void copy_from_host(const void* src, std::byte* dst, std::size_t bytes) = 0;
  // The allocator's statistics and controls (xp/memory.hpp); a backend without them reports zeros.
  virtual MemoryStats memory_stats() { return {}; }
  virtual void free_cached() {}
  virtual void reset_peak() {}
};

// The backend of a device (registry.cpp): the one registered for that device if any, else the one
// its kind's factory gives. Throws DeviceUnavailable when the device has none in this build or
// cannot be used.
Backend& backend_for(const Device& device);

// Gives the backend of a device of one kind (making it at first use); throws DeviceUnavailable
// when it cannot be had.
using BackendFactory = Backend& (*)(const Device& device);

// Sets the factory of a kind of device (nullptr removes it): how a backend joins without the
// registry or the array layer naming it. Each backend registers its kind's from its own source
// file while the library loads (BackendKindRegistration), before any other initializer of the
// library or of a program linked with its objects runs.
void register_backend_kind(DeviceKind kind, BackendFactory factory) noexcept;

// register_backend_kind at load time: a namespace-scope object in the backend's source file,
//   [[gnu::init_priority(101)]] const BackendKindRegistration r{DeviceKind::cuda, &factory};
// (the priority puts it ahead of every constructor without one, so that no other initializer can
// ask for a device before its backend is known).
struct BackendKindRegistration {
  BackendKindRegistration(DeviceKind kind, BackendFactory factory) noexcept { register_backend_kind(kind, factory); }
};

// Registers the backend that serves one non-CPU device ahead of its kind's factory (nullptr
// removes it): how tests stand a second device up.
void register_backend(const Device& device, Backend* backend);

Backend& cpu_backend();
// Blocks the CPU backend has allocated in this process (for tests of fusion: one per result).
std::uint64_t cpu_allocations() noexcept;

}  // namespace xp::detail
