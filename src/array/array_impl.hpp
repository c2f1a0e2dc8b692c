#pragma once

// The inside of an Array: a materialized array is (storage, offset, strides); a lazy one is an
// elementwise node over other arrays and constants, evaluated on demand (lazy.cpp).

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "array/shape_text.hpp"
#include "backend/backend.hpp"
#include "runtime/current.hpp"
#include "runtime/spin_lock.hpp"
#include "xp/array.hpp"
#include "xp/error.hpp"

namespace xp::detail {

struct ArrayImpl;

// A block of memory on one device, shared by an array and its views.
struct Storage {
  Device device;
  Backend* backend = nullptr;
  Allocation alloc;
  bool read_only = false;
  // Lazy arrays whose graphs read this memory: evaluated before anything writes to it, so that they
  // compute with the values they captured. Every new lazy node takes this lock once per operand,
  // hence a spin lock.
  SpinLock mutex;
  std::vector<std::weak_ptr<ArrayImpl>> readers;

  // CUDA memory: the stream of the last operation that used it (made, read or wrote it; null
  // handle: none yet). An operation on another stream first waits, on the device, for that one
  // (use_on_work_stream). `stream` is guarded by `mutex`; `stream_handle` mirrors it for the check
  // every operation makes without the lock.
  std::atomic<void*> stream_handle{nullptr};
  std::optional<Stream> stream;

  Storage() noexcept {}  // user-provided: make_shared then skips zero-filling the object first
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    // The block goes back to its pool as last used on `stream` (the CUDA pool then reuses it only
    // ordered after that stream's work).
    ReleasingOn releasing(stream ? &*stream : nullptr);
    if (alloc.release != nullptr) alloc.release(alloc.data, alloc.bytes);
    alloc.owner.reset();
  }
};

// The calling thread's current stream of the storage's device uses the memory now: it first waits
// (on the device, an event; never the host) for the stream the memory was last used on, when that
// is another, and becomes the storage's stream. A no-op for memory of a backend without streams
// (Backend::uses_streams: the CPU's) and, after the first
// operation, a compare for work that stays on one stream. Throws CudaError when the wait cannot be
// made (the storage is then unchanged).
void use_on_work_stream(Storage& storage);
// The same for a given stream of the storage's (CUDA) device: a launch's.
void use_on_stream(Storage& storage, const Stream& stream);

// One operand of a lazy node: an array (lazy or not) or a constant.
struct LazyArg {
  std::shared_ptr<ArrayImpl> array;  // null for a constant
  DType dtype = DType::int64;        // the constant's dtype
  std::uint64_t bits = 0;            // the constant's bytes
};

struct Node {
  Node() noexcept {}  // user-provided: no zero-filling before the members' initializers run
  // The operands moved in (unused ones empty): built in place, never default-built then assigned.
  Node(Op op_, int nargs_, int ops_, LazyArg&& a, LazyArg&& b, LazyArg&& c) noexcept
      : op(op_), nargs(nargs_), args{std::move(a), std::move(b), std::move(c)}, ops(ops_) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  Op op = Op::cast;
  int nargs = 0;
  LazyArg args[3];
  int ops = 1;  // operations in the lazy graph below and including this node
  // Lazy arrays whose graphs read this one: when it is evaluated they become readers of its new
  // storage (Storage::readers), so that a later write to it evaluates them first.
  SpinLock mutex;
  std::vector<std::weak_ptr<ArrayImpl>> readers;
};

struct ArrayImpl {
  ArrayImpl() noexcept {}  // user-provided: make_shared then skips zero-filling the object first
  DType dtype = DType::float64;
  Shape shape;
  Shape strides;  // bytes; empty until a lazy array is evaluated (or asked for its strides)
  std::int64_t offset = 0;
  Device device;
  Backend* backend = nullptr;
  std::shared_ptr<Storage> storage;  // null while lazy
  std::optional<Node> node;          // set while lazy (inline: one allocation fewer per operation)
  // Set once a lazy array is evaluated. Other threads read it (prune_readers, on an input two
  // threads share) where reading `node` would race with the owner's evaluation.
  std::atomic<bool> evaluated{false};
  // Made by reading through an array index (a copy): assigning to it as a temporary view
  // (a.slice({mask}) = v) would write nowhere, and is refused.
  bool index_copy = false;

  std::int64_t size() const noexcept {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  bool lazy() const noexcept { return node.has_value(); }
};

using ImplPtr = std::shared_ptr<ArrayImpl>;

// ---- helpers shared by the array layer's files ----
const ImplPtr& impl_of(const Array& a);  // ValueError for an empty handle
Shape c_strides(const Shape& shape, DType dtype);
int normalize_axis(int axis, int ndim,
                   const char* what);  // IndexError-free: ValueError "axis 3 is out of bounds for array of dimension 2"
Shape broadcast_shape(const Shape& a, const Shape& b);  // ValueError with both shapes
std::int64_t checked_size(const Shape& shape);          // ValueError for negative dims or overflow
// ValueError "<what>: negative dimensions are not allowed: (2, -3)" for a shape with a negative
// extent, and for one of more than kMaxDims dimensions; every shape the user gives passes here
// (checked_size does the same and also bounds the size).
void check_extents(const Shape& shape, const char* what);

// Checked arithmetic, the one place for every sum and product of sizes, extents, strides and
// offsets that user input reaches: false (and `out` unspecified) where the exact result does not
// fit int64, which the caller turns into a ValueError naming the shape. Never a wrap-around
// (undefined behaviour, and an index into the wrong memory).
[[nodiscard]] inline bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  return !__builtin_mul_overflow(a, b, &out);
}
[[nodiscard]] inline bool checked_add(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  return !__builtin_add_overflow(a, b, &out);
}
// Bytes from the lowest to past the highest element of a layout whose element (0, ..., 0) is at
// address `first` (0 when empty): a ValueError naming `what`, the shape and the strides when the
// elements would lie outside any address space (offsets that overflow, or past 2^57).
std::size_t layout_extent(const Shape& shape, const Shape& strides, std::size_t item, std::uint64_t first,
                          const char* what);
bool can_cast_same_kind(DType from, DType to) noexcept;

// Memory: a block on a device, and a new C-contiguous materialized array (uninitialized).
std::shared_ptr<Storage> new_storage(const Device& device, Backend& backend, std::size_t bytes);
ImplPtr new_array(DType dtype, const Shape& shape, const Device& device);
// A materialized array over existing memory.
ImplPtr view_of_storage(const std::shared_ptr<Storage>& storage, DType dtype, Shape shape, Shape strides,
                        std::int64_t offset);
// A view with a new layout over a's memory (a evaluated first).
ImplPtr make_view(const ImplPtr& a, Shape shape, Shape strides, std::int64_t offset);

// Evaluation.
void materialize(ArrayImpl& a);  // evaluates a lazy array in place
// Evaluates several lazy arrays, those of one shape and device in one pass with shared subexpressions.
void materialize_together(std::span<ArrayImpl* const> arrays);
View view_of(const ArrayImpl& a);  // a materialized array's view
// Reduces the lazy `a` into `out` without evaluating it, where a's backend fuses the graph into the
// reduction (Backend::reduce_fused); false, with nothing done and `a` still lazy, where it does not.
bool reduce_lazy(ArrayImpl& a, ReduceOp op, std::span<const int> axes, const View& out, double correction);
// Evaluates every pending lazy array that reads `storage` (before a write to it).
void prepare_write(Storage& storage);
// A lazy (or, when laziness is off, evaluated) elementwise node. A detached node is neither
// evaluated nor registered as a reader: it is about to be evaluated into an out= array.
ImplPtr make_node(Op op, DType dtype, const Shape& shape, const Device& device, Backend* backend, LazyArg a,
                  LazyArg b = {}, LazyArg c = {}, bool detached = false);
void set_lazy_mode(bool on);
bool lazy_mode();
// Evaluates the graph of `value` (lazy or not, broadcastable to dst's shape) into the materialized
// dst, converting to dst's dtype: the out= and copyto path.
void evaluate_into(const ImplPtr& value, const ImplPtr& dst);
// Throws where a materialized array cannot be written: read-only memory, or a broadcast view (an
// axis of more than one element with a step of 0, as broadcast_to makes: NumPy's are read-only),
// which every write path checks before indexing into it (a[1, 0] = v on such a view included).
void check_writable(const ArrayImpl& dst);
// NumPy's advanced indexing (indexing.cpp): a[index] and a[index] = values where index holds an
// array index.
Array advanced_get(const Array& a, std::span<const Index> index);
void advanced_set(const Array& a, std::span<const Index> index, const Operand& values);
// The positions (int64, 1-D) of the nonzero elements of x flattened in C order (sorting.cpp).
Array flatnonzero(const Array& x);
// x[m] for a bool m of x's shape: the selected elements in C order, in one pass (sorting.cpp).
Array masked(const Array& x, const Array& m);
// indices (integers) as int64 in [0, n), negative ones counted from the end: an IndexError naming
// the first out of range, the axis and n, its message prefixed by `what`.
Array checked_indices(const Array& indices, std::int64_t n, int axis, const std::string& what);
// take with int64 indices already checked and non-negative (the backend's gather, no host check).
Array take_unchecked(const Array& x, const Array& indices, int axis);
// A complex array as a real one with a last axis of 2 (its parts), over the same memory; and the
// inverse, for a C-contiguous real array whose last axis is 2. Operations that only move elements
// (take, scatter, a mask's selection) reach complex arrays through their parts, so that no backend
// needs 16-byte elements for them.
Array as_parts(const Array& z);
Array from_parts(const Array& r);
// A constant operand (a real number: complex ones are two, see scalar_node).
LazyArg constant_arg(const Scalar& s);
// A C++ number as a detached 0-d node of dtype t on a device, converted as cast converts (a complex
// t built from the number's two parts). A complex number with a real t is a TypeError naming `what`.
ImplPtr scalar_node(const Scalar& s, DType t, const Device& device, Backend* backend, const char* what);
// The dtype NumPy 2 promotes several array dtypes to, all at once (dtype.cpp; docs/semantics.md).
DType result_type_all(std::span<const DType> dtypes) noexcept;

}  // namespace xp::detail
