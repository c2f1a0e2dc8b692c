// The lazy elementwise graph: building nodes, fusing a graph into one FusedProgram, evaluating it,
// and keeping graphs correct when their inputs are written later (Storage::readers).

#include <algorithm>
#include <atomic>
#include <cstring>
#include <unordered_map>

#include "array/array_impl.hpp"
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

// Registers `reader` (a lazy array) with the storage of every materialized operand.
void register_reader(const ImplPtr& reader, const LazyArg& arg) {
  if (!arg.array || arg.array->lazy()) return;
  Storage& s = *arg.array->storage;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.readers.size() >= 16) {  // drop the expired before growing
    std::erase_if(s.readers, [](const std::weak_ptr<ArrayImpl>& w) {
      auto p = w.lock();
      return !p || !p->lazy();
    });
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

// Turns a graph into a FusedProgram over `shape`.
class Builder {
 public:
  explicit Builder(const Shape& shape) : shape_(shape) {}

  // Materialized arrays of storage `avoid` read with a layout other than `same_as` are copied first
  // (an out= that overlaps an input differently: NumPy copies too).
  void avoid_overlap(const Storage* avoid, const ArrayImpl* same_as) {
    avoid_ = avoid;
    same_as_ = same_as;
  }

  std::int32_t emit(const ImplPtr& x) {
    auto it = memo_.find(x.get());
    if (it != memo_.end()) return it->second;
    std::int32_t id;
    if (x->lazy()) {
      const Node& n = *x->node;
      std::int32_t ids[3] = {-1, -1, -1};
      for (int k = 0; k < n.nargs; ++k) ids[k] = n.args[k].array ? emit(n.args[k].array) : emit_constant(n.args[k]);
      id = push({n.op, x->dtype, ids[0], ids[1], ids[2], 0});
    } else {
      ImplPtr src = x;
      if (avoid_ != nullptr && x->storage.get() == avoid_ && !same_layout(*x)) {
        src = copy_of(x);
        keep_.push_back(src);
      }
      const std::size_t index = inputs_.size();
      stride_store_.emplace_back(shape_.size());
      broadcast_strides(*src, shape_, stride_store_.back().data());
      View v;
      v.data = src->storage->alloc.data + src->offset;
      v.dtype = src->dtype;
      v.ndim = static_cast<int>(shape_.size());
      v.shape = shape_.data();
      v.strides = stride_store_.back().data();
      inputs_.push_back(v);
      id = push({Op::load, src->dtype, -1, -1, -1, index});
    }
    memo_.emplace(x.get(), id);
    return id;
  }

  std::int32_t emit_constant(const LazyArg& c) { return push({Op::constant, c.dtype, -1, -1, -1, c.bits}); }

  FusedProgram finish(std::vector<View> outputs, std::vector<std::int32_t> output_instr) {
    FusedProgram p;
    p.code = std::move(code_);
    p.inputs = std::move(inputs_);
    p.outputs = std::move(outputs);
    p.output_instr = std::move(output_instr);
    p.ndim = static_cast<int>(shape_.size());
    p.shape = shape_.data();
    return p;
  }

 private:
  std::int32_t push(Instr i) {
    code_.push_back(i);
    return static_cast<std::int32_t>(code_.size() - 1);
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
  std::vector<Instr> code_;
  std::vector<View> inputs_;
  std::vector<std::vector<std::int64_t>> stride_store_;
  std::unordered_map<const ArrayImpl*, std::int32_t> memo_;
  std::vector<ImplPtr> keep_;
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

View view_of(const ArrayImpl& a) {
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
    std::lock_guard<std::mutex> lock(storage.mutex);
    readers.swap(storage.readers);
  }
  for (auto& w : readers) {
    if (ImplPtr r = w.lock(); r && r->lazy()) materialize(*r);
  }
}

void materialize(ArrayImpl& a) {
  if (!a.lazy()) return;
  // The output is allocated first: an allocation failure leaves the array lazy and intact.
  ImplPtr out = new_array(a.dtype, a.shape, a.device);
  // A non-owning handle to `a` for the builder (it is kept alive by the caller).
  ImplPtr self(ImplPtr(), &a);
  Builder b(a.shape);
  const std::int32_t root = b.emit(self);
  View ov = view_of(*out);
  FusedProgram p = b.finish({ov}, {root});
  a.backend->run_fused(p);
  a.storage = out->storage;
  a.strides = out->strides;
  a.offset = 0;
  a.node.reset();
}

void evaluate_into(const ImplPtr& value, const ImplPtr& dst) {
  materialize(*dst);
  if (dst->storage->read_only) throw ValueError("the array is read-only (it wraps memory given as read-only)");
  prepare_write(*dst->storage);
  Builder b(dst->shape);
  b.avoid_overlap(dst->storage.get(), dst.get());
  const std::int32_t root = b.emit(value);
  FusedProgram p = b.finish({view_of(*dst)}, {root});
  dst->backend->run_fused(p);
}

ImplPtr make_node(Op op, DType dtype, const Shape& shape, const Device& device, Backend* backend, LazyArg a,
                  LazyArg b, LazyArg c, bool detached) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->dtype = dtype;
  impl->shape = shape;
  impl->strides = c_strides(shape, dtype);
  impl->device = device;
  impl->backend = backend;
  auto node = std::make_unique<Node>();
  node->op = op;
  LazyArg* args[3] = {&a, &b, &c};
  const int nargs = op_arity(op);
  node->nargs = nargs;
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
  node->ops = ops;
  for (int k = 0; k < nargs; ++k) node->args[k] = std::move(*args[k]);
  impl->node = std::move(node);
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
  }
  return c;
}

}  // namespace xp::detail
