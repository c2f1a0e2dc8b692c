// The lazy elementwise graph: building nodes, fusing a graph into one FusedProgram, evaluating it,
// and keeping graphs correct when their inputs are written later (Storage::readers).

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <utility>

#include "array/array_impl.hpp"
#include "runtime/foreign.hpp"
#include "runtime/thread_cache.hpp"
#include "xp/config.hpp"

namespace xp::detail {

namespace {

std::atomic<int> g_lazy{-1};  // -1: not read from XP_LAZY yet

bool lazy_enabled() {
  int v = g_lazy.load(std::memory_order_relaxed);
  if (v < 0) {
    v = xp::config().lazy ? 1 : 0;
    g_lazy.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

// Drops the entries of arrays destroyed or evaluated since. A reader may belong to another thread
// (two threads' graphs reading one input), hence the atomic flag rather than lazy().
void prune_readers(std::vector<std::weak_ptr<ArrayImpl>>& readers) {
  std::erase_if(readers, [](const std::weak_ptr<ArrayImpl>& w) {
    auto p = w.lock();
    return !p || p->evaluated.load(std::memory_order_relaxed);
  });
}

// Registers `reader` (a lazy array) with the storage of a materialized operand, or with a lazy
// operand's node (passed on to its storage when it is evaluated: materialize).
void register_reader(const ImplPtr& reader, const LazyArg& arg) {
  if (!arg.array) return;
  if (arg.array->lazy()) {
    Node& n = *arg.array->node;
    std::lock_guard<SpinLock> lock(n.mutex);
    if (n.readers.size() >= 16) prune_readers(n.readers);
    n.readers.push_back(reader);
    return;
  }
  Storage& s = *arg.array->storage;
  std::lock_guard<SpinLock> lock(s.mutex);
  if (s.readers.size() >= 16) {  // drop the expired and the evaluated before growing
    prune_readers(s.readers);
  } else {
    // Entries of arrays already destroyed go now (a load each, no atomic operation): their blocks
    // are then freed one or two at a time, which malloc's per-thread cache absorbs, not sixteen at
    // once, which would overflow it into the locked arena.
    std::erase_if(s.readers, [](const std::weak_ptr<ArrayImpl>& w) { return w.expired(); });
  }
  s.readers.push_back(reader);
}

// Broadcast strides of a materialized array to `shape` (right-aligned; zero where broadcast).
void broadcast_strides(const ArrayImpl& a, const Shape& shape, std::int64_t* out) {
  const int nd = static_cast<int>(shape.size());
  const int ad = static_cast<int>(a.shape.size());
  for (int i = 0; i < nd; ++i) {
    const int j = i - (nd - ad);
    out[i] = (j < 0 || a.shape[j] == 1) ? 0 : a.strides[j];
  }
}

// The vectors a Builder fills, reused from call to call (per thread, per nesting depth: building can
// nest when an overlapping input is copied first) so that evaluating a small graph allocates nothing.
struct BuildState {
  FusedProgram program;
  std::vector<std::int64_t> strides;                            // inputs x ndim
  std::vector<std::pair<const ArrayImpl*, std::int32_t>> memo;  // graphs are small: a list beats a map
  std::vector<ImplPtr> keep;
  void clear() {
    program.code.clear();
    program.inputs.clear();
    program.outputs.clear();
    program.output_instr.clear();
    strides.clear();
    memo.clear();
    keep.clear();
  }
};

struct BuildStates {
  std::vector<std::unique_ptr<BuildState>> states;
  std::size_t depth = 0;
};

// Turns a graph into a FusedProgram over `shape`.
class Builder {
 public:
  explicit Builder(const Shape& shape) : shape_(shape), all_(thread_cache<BuildStates>()) {
    if (all_.states.size() <= all_.depth) all_.states.push_back(std::make_unique<BuildState>());
    st_ = all_.states[all_.depth++].get();
    st_->clear();
  }
  ~Builder() {
    st_->keep.clear();
    --all_.depth;
  }
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // Materialized arrays of storage `avoid` read with a layout other than `same_as` are copied first
  // (an out= that overlaps an input differently: NumPy copies too).
  void avoid_overlap(const Storage* avoid, const ArrayImpl* same_as) {
    avoid_ = avoid;
    same_as_ = same_as;
  }

  std::int32_t emit(const ImplPtr& x) {
    for (const auto& [ptr, id] : st_->memo) {
      if (ptr == x.get()) return id;
    }
    std::int32_t id;
    if (x->lazy()) {
      const Node& n = *x->node;
      std::int32_t ids[3] = {-1, -1, -1};
      for (int k = 0; k < n.nargs; ++k) ids[k] = n.args[k].array ? emit(n.args[k].array) : emit_constant(n.args[k]);
      id = push({n.op, x->dtype, ids[0], ids[1], ids[2], 0});
    } else {
      const ArrayImpl* src = x.get();  // not an ImplPtr copy: two atomic operations fewer per input
      if (avoid_ != nullptr && x->storage.get() == avoid_ && !same_layout(*x)) {
        st_->keep.push_back(copy_of(x));
        src = st_->keep.back().get();
      }
      const std::size_t index = st_->program.inputs.size();
      const std::size_t nd = shape_.size();
      st_->strides.resize((index + 1) * nd);
      broadcast_strides(*src, shape_, st_->strides.data() + index * nd);
      use_on_work_stream(*src->storage);
      View v;
      v.data = src->storage->alloc.data + src->offset;
      v.dtype = src->dtype;
      v.ndim = static_cast<int>(nd);
      v.shape = shape_.data();
      st_->program.inputs.push_back(v);
      id = push({Op::load, src->dtype, -1, -1, -1, index});
    }
    st_->memo.emplace_back(x.get(), id);
    return id;
  }

  std::int32_t emit_constant(const LazyArg& c) { return push({Op::constant, c.dtype, -1, -1, -1, c.bits}); }

  // One more output of the program (before finish).
  void add_output(const View& output, std::int32_t output_instr) {
    st_->program.outputs.push_back(output);
    st_->program.output_instr.push_back(output_instr);
  }

  // The program, valid until this Builder is destroyed.
  const FusedProgram& finish(const View& output, std::int32_t output_instr) {
    add_output(output, output_instr);
    return finish();
  }
  // The program with no output views and `value` as its one output instruction (a reduced value).
  const FusedProgram& finish_value(std::int32_t value) {
    st_->program.output_instr.push_back(value);
    return finish();
  }
  const FusedProgram& finish() {
    FusedProgram& p = st_->program;
    const std::size_t nd = shape_.size();
    for (std::size_t i = 0; i < p.inputs.size(); ++i) p.inputs[i].strides = st_->strides.data() + i * nd;
    p.ndim = static_cast<int>(nd);
    p.shape = shape_.data();
    return p;
  }

 private:
  std::int32_t push(Instr i) {
    st_->program.code.push_back(i);
    return static_cast<std::int32_t>(st_->program.code.size() - 1);
  }
  bool same_layout(const ArrayImpl& x) const {
    if (same_as_ == nullptr || x.offset != same_as_->offset) return false;
    std::vector<std::int64_t> a(shape_.size()), b(shape_.size());
    broadcast_strides(x, shape_, a.data());
    broadcast_strides(*same_as_, shape_, b.data());
    return a == b;
  }
  static ImplPtr copy_of(const ImplPtr& x) {
    ImplPtr c = new_array(x->dtype, x->shape, x->device);
    evaluate_into(x, c);
    return c;
  }

  const Shape& shape_;
  BuildStates& all_;
  BuildState* st_;
  const Storage* avoid_ = nullptr;
  const ArrayImpl* same_as_ = nullptr;
};

}  // namespace

void set_lazy_mode(bool on) {
  g_lazy.store(on ? 1 : 0, std::memory_order_relaxed);
}
bool lazy_mode() {
  return lazy_enabled();
}

void use_on_work_stream(Storage& storage) {
  if (!storage.device.is_cuda() || storage.backend == nullptr || !storage.backend->uses_streams()) return;
  use_on_stream(storage, work_stream(storage.device));
}

void use_on_stream(Storage& storage, const Stream& current) {
  if (!storage.device.is_cuda() || storage.backend == nullptr || !storage.backend->uses_streams()) return;
  void* const h = current.handle();
  if (storage.stream_handle.load(std::memory_order_acquire) == h) return;
  std::optional<Stream> previous;
  {
    std::lock_guard<SpinLock> lock(storage.mutex);
    previous = storage.stream;
  }
  if (previous && previous->handle() != h) {
    activate_context(storage.device);
    stream_wait_stream(reinterpret_cast<std::uintptr_t>(h), reinterpret_cast<std::uintptr_t>(previous->handle()));
  }
  std::lock_guard<SpinLock> lock(storage.mutex);
  storage.stream = current;
  storage.stream_handle.store(h, std::memory_order_release);
}

View view_of(const ArrayImpl& a) {
  use_on_work_stream(*a.storage);
  View v;
  v.data = a.storage->alloc.data + a.offset;
  v.dtype = a.dtype;
  v.ndim = static_cast<int>(a.shape.size());
  v.shape = a.shape.data();
  v.strides = a.strides.data();
  return v;
}

void prepare_write(Storage& storage) {
  if (storage.read_only) throw ValueError("the array is read-only (it wraps memory given as read-only)");
  std::vector<std::weak_ptr<ArrayImpl>> readers;
  {
    std::lock_guard<SpinLock> lock(storage.mutex);
    readers.swap(storage.readers);
  }
  for (auto& w : readers) {
    if (ImplPtr r = w.lock(); r && r->lazy()) materialize(*r);
  }
}

// The readers of a's graph, about to be evaluated into `storage`, become readers of that storage.
static void pass_readers_on(ArrayImpl& a, Storage& storage) {
  std::vector<std::weak_ptr<ArrayImpl>> readers;
  {
    std::lock_guard<SpinLock> lock(a.node->mutex);
    readers.swap(a.node->readers);
  }
  prune_readers(readers);
  if (readers.empty()) return;
  std::lock_guard<SpinLock> lock(storage.mutex);
  for (auto& r : readers) storage.readers.push_back(std::move(r));
}

static bool c_contiguous(const ArrayImpl& x) {
  const View v{nullptr, x.dtype, static_cast<int>(x.shape.size()), x.shape.data(), x.strides.data()};
  return v.is_c_contiguous();
}

// The lazy `value` as one instruction over materialized C-contiguous operands of the output's shape
// and of one dtype, run by the backend's shortcut (Backend::run_flat) into `out`, a C-contiguous
// array of n elements of value's dtype; false, with nothing done, where it is anything else or the
// backend has no shortcut for it. An operand in `out`'s memory must be `out` itself (the same
// elements, read before each is written); any other overlap takes the general path, which copies it.
static bool run_flat_shortcut(const ArrayImpl& value, std::byte* out, std::int64_t n) {
  if (!value.lazy()) return false;
  const Node& node = *value.node;
  const std::byte* args[3] = {nullptr, nullptr, nullptr};
  DType operand = DType::bool_;
  const std::byte* out_end = out + n * static_cast<std::int64_t>(itemsize(value.dtype));
  for (int k = 0; k < node.nargs; ++k) {
    const ArrayImpl* x = node.args[k].array.get();
    if (x == nullptr || x->lazy() || x->shape != value.shape || !c_contiguous(*x)) return false;
    if (k == 0) {
      operand = x->dtype;
    } else if (x->dtype != operand) {
      return false;
    }
    args[k] = x->storage->alloc.data + x->offset;
    const std::byte* end = args[k] + n * static_cast<std::int64_t>(itemsize(x->dtype));
    if (args[k] < out_end && out < end && (args[k] != out || x->dtype != value.dtype)) return false;
  }
  return node.nargs > 0 && value.backend->run_flat(node.op, operand, value.dtype, args, node.nargs, out, n);
}

void materialize(ArrayImpl& a) {
  if (!a.lazy()) return;
  // The output is allocated first: an allocation failure leaves the array lazy and intact.
  const std::int64_t n = checked_size(a.shape);
  std::shared_ptr<Storage> storage = new_storage(a.device, *a.backend, static_cast<std::size_t>(n) * itemsize(a.dtype));
  Shape strides = c_strides(a.shape, a.dtype);
  View ov;
  ov.data = storage->alloc.data;
  ov.dtype = a.dtype;
  ov.ndim = static_cast<int>(a.shape.size());
  ov.shape = a.shape.data();
  ov.strides = strides.data();
  if (!run_flat_shortcut(a, storage->alloc.data, n)) {
    // A non-owning handle to `a` for the builder (it is kept alive by the caller).
    ImplPtr self(ImplPtr(), &a);
    Builder b(a.shape);
    const std::int32_t root = b.emit(self);
    a.backend->run_fused(b.finish(ov, root));
  }
  pass_readers_on(a, *storage);
  a.storage = std::move(storage);
  a.strides = std::move(strides);
  a.offset = 0;
  a.node.reset();
  a.evaluated.store(true, std::memory_order_relaxed);
}

bool reduce_lazy(ArrayImpl& a, ReduceOp op, std::span<const int> axes, const View& out, double correction) {
  if (!a.lazy()) return false;
  ImplPtr self(ImplPtr(), &a);  // non-owning: the caller keeps `a` alive
  Builder b(a.shape);
  const std::int32_t root = b.emit(self);
  return a.backend->reduce_fused(op, b.finish_value(root), axes, out, correction);
}

void materialize_together(std::span<ArrayImpl* const> arrays) {
  // Lazy arrays of one shape and device are evaluated by one program with several outputs, so
  // their common subexpressions are computed once; the rest one by one.
  std::vector<ArrayImpl*> todo;
  for (ArrayImpl* a : arrays) {
    if (a->lazy() && std::find(todo.begin(), todo.end(), a) == todo.end()) todo.push_back(a);
  }
  while (!todo.empty()) {
    ArrayImpl* first = todo.front();
    std::vector<ArrayImpl*> group;
    for (ArrayImpl* a : todo) {
      if (a->shape == first->shape && a->device == first->device) group.push_back(a);
    }
    std::erase_if(todo, [&](ArrayImpl* a) { return std::find(group.begin(), group.end(), a) != group.end(); });
    if (group.size() == 1) {
      materialize(*first);
      continue;
    }
    // Blocks first: a failed allocation leaves every array lazy and intact.
    std::vector<std::shared_ptr<Storage>> storages;
    std::vector<Shape> strides;
    for (ArrayImpl* a : group) {
      storages.push_back(
          new_storage(a->device, *a->backend, static_cast<std::size_t>(checked_size(a->shape)) * itemsize(a->dtype)));
      strides.push_back(c_strides(a->shape, a->dtype));
    }
    Builder b(first->shape);
    for (std::size_t i = 0; i < group.size(); ++i) {
      ArrayImpl* a = group[i];
      const std::int32_t root = b.emit(ImplPtr(ImplPtr(), a));
      View v;
      v.data = storages[i]->alloc.data;
      v.dtype = a->dtype;
      v.ndim = static_cast<int>(a->shape.size());
      v.shape = a->shape.data();
      v.strides = strides[i].data();
      b.add_output(v, root);
    }
    first->backend->run_fused(b.finish());
    for (std::size_t i = 0; i < group.size(); ++i) {
      pass_readers_on(*group[i], *storages[i]);
      group[i]->storage = std::move(storages[i]);
      group[i]->strides = std::move(strides[i]);
      group[i]->offset = 0;
    }
    for (ArrayImpl* a : group) {  // after all: a later root may share an earlier one's node
      a->node.reset();
      a->evaluated.store(true, std::memory_order_relaxed);
    }
  }
}

void check_writable(const ArrayImpl& dst) {
  if (dst.storage->read_only) throw ValueError("the array is read-only (it wraps memory given as read-only)");
  // A broadcast view (a step of 0 along an axis of more than one element) names one element several
  // times: which write lands would depend on the order. NumPy's broadcast_to views are read-only.
  // An empty array names no element, whatever its steps (an imported one may have 0 steps).
  const bool empty = dst.size() == 0;
  for (std::size_t i = 0; i < dst.shape.size() && !empty; ++i) {
    if (dst.strides[i] == 0 && dst.shape[i] > 1)
      throw ValueError("cannot write to a broadcast view: axis " + std::to_string(i) + " of shape " +
                       shape_str(dst.shape) + " repeats one element (copy it first)");
  }
}

void evaluate_into(const ImplPtr& value, const ImplPtr& dst) {
  materialize(*dst);
  check_writable(*dst);
  prepare_write(*dst->storage);
  if (value->dtype == dst->dtype && value->shape == dst->shape && c_contiguous(*dst) &&
      run_flat_shortcut(*value, dst->storage->alloc.data + dst->offset, dst->size())) {
    return;
  }
  Builder b(dst->shape);
  b.avoid_overlap(dst->storage.get(), dst.get());
  const std::int32_t root = b.emit(value);
  dst->backend->run_fused(b.finish(view_of(*dst), root));
}

ImplPtr make_node(Op op, DType dtype, const Shape& shape, const Device& device, Backend* backend, LazyArg a, LazyArg b,
                  LazyArg c, bool detached) {
  LazyArg* args[3] = {&a, &b, &c};
  const int nargs = op_arity(op);
  int ops = 1;
  for (int k = 0; k < nargs; ++k) {
    if (args[k]->array && args[k]->array->lazy()) ops += args[k]->array->node->ops;
  }
  // Past the cap, the biggest lazy operands are evaluated first.
  while (ops > kMaxFusedOps) {
    int best = -1;
    for (int k = 0; k < nargs; ++k) {
      const auto& x = args[k]->array;
      if (x && x->lazy() && (best < 0 || x->node->ops > args[best]->array->node->ops)) best = k;
    }
    ops -= args[best]->array->node->ops;
    materialize(*args[best]->array);
  }
  auto impl = std::make_shared<ArrayImpl>();
  impl->dtype = dtype;
  impl->shape = shape;
  impl->device = device;
  impl->backend = backend;
  impl->node.emplace(op, nargs, ops, std::move(a), std::move(b), std::move(c));
  if (detached) return impl;
  if (!lazy_enabled()) {
    materialize(*impl);
    return impl;
  }
  for (int k = 0; k < nargs; ++k) register_reader(impl, impl->node->args[k]);
  return impl;
}

LazyArg constant_arg(const Scalar& s) {
  LazyArg c;
  switch (s.kind()) {
    case ScalarKind::boolean:
      c.dtype = DType::bool_;
      c.bits = s.as_int() != 0 ? 1 : 0;
      break;
    case ScalarKind::integer:
      c.dtype = s.is_large_unsigned() ? DType::uint64 : DType::int64;
      c.bits = s.as_uint();
      break;
    case ScalarKind::floating: {
      c.dtype = DType::float64;
      const double d = s.as_double();
      std::memcpy(&c.bits, &d, sizeof d);
      break;
    }
    case ScalarKind::complex:
      // A constant holds one number; complex ones are built from two (elementwise.cpp's
      // complex_constant), and every path that takes a C++ number checks for them first.
      throw TypeError("a complex number cannot be used here");
  }
  return c;
}

}  // namespace xp::detail
