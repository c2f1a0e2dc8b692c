// NumPy's advanced indexing (xp/array.hpp, Index): reading and writing through bool and integer
// array indices, mixed with integers, slices, newaxis and ellipsis.
//
// Both directions first apply the basic indices as a view (every axis an array index covers kept
// whole), then turn the array indices into one position per element over the axes they cover
// (a bool index: its nonzero positions; several integer indices: broadcast, checked, combined in C
// order), and gather (Backend::take) or scatter (Backend::scatter) along those axes merged into one.
#include <algorithm>
#include <numeric>
#include <string>

#include "array/array_impl.hpp"
#include "xp/error.hpp"
#include "xp/sorting.hpp"

namespace xp {

using detail::ImplPtr;

Index::Index(const Array& a) : kind_(Kind::array), array_(detail::impl_of(a)) {}

Array Index::array() const {
  if (kind_ != Kind::array) throw ValueError("Index::array: this index is not an array index");
  return Array(array_);
}

namespace {

// The index after the basic part: `view` is a's view with every basic index applied and every axis
// an array index covers kept whole; each array index covers axes of it.
struct Plan {
  Array view;
  std::vector<int> axes;         // the covered axes of view, ascending
  std::vector<Array> positions;  // per covered axis, int64 positions (broadcast together)
  bool single_mask = false;      // one bool index: positions is its flat nonzero, over all its axes
  Array mask_positions;          // that case: positions into the covered axes flattened (C order)
  Shape index_shape;             // the shape the array indices broadcast to
  // A slice, ellipsis or newaxis stands between two advanced indices in the index (NumPy's rule:
  // the index dimensions then go first, even where an ellipsis covers no axis between them).
  bool separated = false;
};

std::string ordinal_axis(int axis) {
  return std::to_string(axis);
}

Plan plan_index(const Array& a, std::span<const Index> index) {
  const int nd = a.ndim();
  int consumed = 0, ellipses = 0, arrays = 0, masks = 0;
  for (const Index& ix : index) {
    switch (ix.kind()) {
      case Index::Kind::integer:
      case Index::Kind::slice:
        ++consumed;
        break;
      case Index::Kind::ellipsis:
        ++ellipses;
        break;
      case Index::Kind::array: {
        ++arrays;
        const Array arr = ix.array();
        if (!(arr.device() == a.device())) throw DeviceMismatch("indexing", a.device().str(), arr.device().str());
        if (arr.dtype() == DType::bool_) {
          ++masks;
          consumed += arr.ndim();
        } else {
          ++consumed;
        }
        break;
      }
      default:
        break;
    }
  }
  if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
  if (consumed > nd) {
    throw IndexError("too many indices for array: array is " + std::to_string(nd) + "-dimensional, but " +
                     std::to_string(consumed) + " were indexed");
  }
  // The basic index: array indices (and the integers beside them) become whole axes; a 0-d bool
  // becomes a new axis of length 1 indexed by [0] (true) or [] (false), as NumPy.
  std::vector<Index> basic;
  struct Pending {
    int first_axis;  // in the view
    Array array;     // bool (covering array.ndim() axes) or integer (one axis)
    bool integer_scalar = false;
    std::int64_t scalar = 0;
  };
  std::vector<Pending> pending;
  // A bool index (0-d as one element) checked against the view's axes it covers: each of its axes
  // is the view's size or 0 (an empty mask selects nothing; as NumPy, and the Array API's tests).
  const auto checked_mask = [](const Pending& q, const Array& view) {
    const Array mask = q.array.ndim() == 0 ? reshape(q.array, {1}) : q.array;
    for (int k = 0; k < mask.ndim(); ++k) {
      const int ax = q.first_axis + k;
      if (mask.shape(k) != view.shape(ax) && mask.shape(k) != 0) {
        throw IndexError("boolean index did not match indexed array along axis " + ordinal_axis(ax) +
                         "; size of axis is " + std::to_string(view.shape(ax)) +
                         " but size of corresponding boolean axis is " + std::to_string(mask.shape(k)));
      }
    }
    return mask;
  };
  int vaxis = 0;  // the view's axis the next index item produces
  bool seen_advanced = false, gap = false, separated = false;
  for (const Index& ix : index) {
    const bool advanced = ix.kind() == Index::Kind::integer || ix.kind() == Index::Kind::array;
    if (advanced) {
      separated = separated || (seen_advanced && gap);
      seen_advanced = true;
    } else if (seen_advanced) {
      gap = true;
    }
    switch (ix.kind()) {
      case Index::Kind::newaxis:
        basic.emplace_back(newaxis);
        ++vaxis;
        break;
      case Index::Kind::ellipsis:
        basic.emplace_back(ellipsis);
        vaxis += nd - consumed;
        break;
      case Index::Kind::slice:
        basic.push_back(ix);
        ++vaxis;
        break;
      case Index::Kind::integer:
        basic.emplace_back(Slice());
        pending.push_back({vaxis, Array(), true, ix.integer()});
        ++vaxis;
        break;
      case Index::Kind::array: {
        const Array arr = ix.array();
        if (arr.dtype() == DType::bool_ && arr.ndim() == 0) {
          basic.emplace_back(newaxis);
          pending.push_back({vaxis, arr, false, 0});
          ++vaxis;
        } else {
          const int covers = arr.dtype() == DType::bool_ ? arr.ndim() : 1;
          for (int k = 0; k < covers; ++k) basic.emplace_back(Slice());
          pending.push_back({vaxis, arr, false, 0});
          vaxis += covers;
        }
        break;
      }
    }
  }
  Plan p;
  p.separated = separated;
  p.view = a.slice(std::span<const Index>(basic.data(), basic.size()));
  const Array& v = p.view;
  // One bool index and nothing else advanced: its nonzero positions over its axes flattened.
  if (pending.size() == 1 && !pending[0].integer_scalar && pending[0].array.dtype() == DType::bool_) {
    const Pending& m = pending[0];
    const Array mask = checked_mask(m, v);
    for (int k = 0; k < mask.ndim(); ++k) p.axes.push_back(m.first_axis + k);
    p.single_mask = true;
    p.mask_positions = detail::flatnonzero(mask);
    p.index_shape = Shape{p.mask_positions.shape(0)};
    return p;
  }
  // Otherwise every array index becomes integer positions, one array per covered axis.
  std::vector<Array> raw;
  for (const Pending& q : pending) {
    if (q.integer_scalar) {
      p.axes.push_back(q.first_axis);
      raw.push_back(full({}, q.scalar, DType::int64, a.device()));
    } else if (q.array.dtype() == DType::bool_) {
      const Array mask = checked_mask(q, v);
      const std::vector<Array> nz = nonzero(mask);
      for (int k = 0; k < mask.ndim(); ++k) {
        p.axes.push_back(q.first_axis + k);
        raw.push_back(nz[static_cast<std::size_t>(k)]);
      }
    } else {
      p.axes.push_back(q.first_axis);
      raw.push_back(q.array);
    }
  }
  Shape b;
  for (const Array& r : raw) {
    try {
      b = detail::broadcast_shape(b, Shape(r.shape().begin(), r.shape().end()));
    } catch (const ValueError&) {
      std::string shapes;
      for (const Array& s : raw)
        shapes += (shapes.empty() ? "" : " ") + detail::shape_str(Shape(s.shape().begin(), s.shape().end()));
      throw IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes " + shapes);
    }
  }
  p.index_shape = b;
  for (std::size_t k = 0; k < raw.size(); ++k) {
    const int ax = p.axes[k];
    p.positions.push_back(detail::checked_indices(raw[k], v.shape(ax), ax, ""));
  }
  return p;
}

// True when the covered axes are next to each other (the result's index dimensions then stay in
// their place; else they go first).
bool adjacent(const std::vector<int>& axes) {
  for (std::size_t k = 1; k < axes.size(); ++k)
    if (axes[k] != axes[k - 1] + 1) return false;
  return true;
}

// The view with the covered axes first (in their order), then the others.
std::vector<int> covered_first(int nd, const std::vector<int>& axes) {
  std::vector<int> order = axes;
  for (int d = 0; d < nd; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) order.push_back(d);
  return order;
}

// One int64 position per element of the index shape, into the covered axes flattened in C order.
Array combined_positions(const Plan& p) {
  if (p.single_mask) return p.mask_positions;
  Array pos;
  std::int64_t mult = 1;
  for (std::size_t k = p.axes.size(); k-- > 0;) {
    const Array term = mult == 1 ? p.positions[k] : p.positions[k] * mult;
    pos = pos.valid() ? pos + term : term;
    mult *= p.view.shape(p.axes[k]);
  }
  return broadcast_to(pos, p.index_shape).copy();
}

// The result's shape and, for the covered axes moved first, the permutation from that layout
// (index dimensions, then the other axes) to the result's.
struct ResultLayout {
  Shape shape;                  // a[index]'s shape
  std::vector<int> from_first;  // permutation of the index-first layout giving the result
};

ResultLayout result_layout(const Plan& p) {
  const Array& v = p.view;
  const int nd = v.ndim();
  const int bi = static_cast<int>(p.index_shape.size());
  Shape rest;
  for (int d = 0; d < nd; ++d)
    if (std::find(p.axes.begin(), p.axes.end(), d) == p.axes.end()) rest.push_back(v.shape(d));
  const int before = !p.separated && adjacent(p.axes) ? p.axes.front() : 0;  // other axes before the index dims
  ResultLayout r;
  r.shape.assign(rest.begin(), rest.begin() + before);
  r.shape.insert(r.shape.end(), p.index_shape.begin(), p.index_shape.end());
  r.shape.insert(r.shape.end(), rest.begin() + before, rest.end());
  const int total = bi + static_cast<int>(rest.size());
  for (int k = 0; k < before; ++k) r.from_first.push_back(bi + k);
  for (int k = 0; k < bi; ++k) r.from_first.push_back(k);
  for (int k = bi + before; k < total; ++k) r.from_first.push_back(k);
  return r;
}

bool identity(const std::vector<int>& perm) {
  for (std::size_t k = 0; k < perm.size(); ++k)
    if (perm[k] != static_cast<int>(k)) return false;
  return true;
}

}  // namespace

namespace detail {

Array advanced_get(const Array& a, std::span<const Index> index) {
  // a[mask] with a mask of a's own shape: the selection in one pass.
  if (index.size() == 1 && index[0].kind() == Index::Kind::array) {
    const Array m = index[0].array();
    if (m.dtype() == DType::bool_ && m.ndim() == a.ndim() && m.ndim() > 0 && m.device() == a.device() &&
        std::equal(m.shape().begin(), m.shape().end(), a.shape().begin(), a.shape().end())) {
      Array out = masked(a, m);
      out.impl()->index_copy = true;
      return out;
    }
  }
  const Plan p = plan_index(a, index);
  const Array& v = p.view;
  const int nd = v.ndim();
  const int k = static_cast<int>(p.axes.size());
  const std::vector<int> order = covered_first(nd, p.axes);
  // The covered axes, first, merged into one (a copy where the view's layout does not allow).
  Shape merged{-1};
  for (int d = k; d < nd; ++d) merged.push_back(v.shape(order[static_cast<std::size_t>(d)]));
  std::int64_t covered = 1;
  for (int ax : p.axes) covered *= v.shape(ax);
  merged[0] = covered;
  const Array src = reshape(identity(order) ? v : permute_dims(v, order), merged);
  const Array pos = combined_positions(p);
  Array first = take_unchecked(src, pos, 0);  // index dims, then the other axes
  const ResultLayout r = result_layout(p);
  Array out = identity(r.from_first) ? first : permute_dims(first, r.from_first).copy();
  out.impl()->index_copy = true;
  return out;
}

void advanced_set(const Array& a, std::span<const Index> index, const Operand& values) {
  const ImplPtr& ai = impl_of(a);
  materialize(*ai);
  if (ai->storage->read_only) throw ValueError("the array is read-only (it wraps memory given as read-only)");
  const Plan p = plan_index(a, index);
  const Array& v = p.view;
  const int nd = v.ndim();
  const int k = static_cast<int>(p.axes.size());
  const ResultLayout r = result_layout(p);
  // The values, converted as copyto converts and broadcast to a[index]'s shape, then laid out with
  // the index dimensions first.
  Array vals = empty(r.shape, v.dtype(), v.device());
  copyto(vals, values);
  if (!identity(r.from_first)) {
    std::vector<int> inverse(r.from_first.size());
    for (std::size_t i = 0; i < r.from_first.size(); ++i)
      inverse[static_cast<std::size_t>(r.from_first[i])] = static_cast<int>(i);
    vals = permute_dims(vals, inverse);
  }
  const int bi = static_cast<int>(p.index_shape.size());
  Shape flat_vals{-1};
  std::int64_t nidx = 1;
  for (auto e : p.index_shape) nidx *= e;
  flat_vals[0] = nidx;
  for (int d = bi; d < vals.ndim(); ++d) flat_vals.push_back(vals.shape(d));
  vals = reshape(vals, flat_vals);
  const Array pos = reshape(combined_positions(p), {-1});
  // The destination: the view with the covered axes first, merged into one where its layout
  // allows; else a copy that is scattered into, then copied back.
  const std::vector<int> order = covered_first(nd, p.axes);
  const Array dst = identity(order) ? v : permute_dims(v, order);
  const ImplPtr& di = impl_of(dst);
  materialize(*di);
  // Mergeable when each covered axis longer than 1 strides as the next such one times its length.
  std::vector<int> long_axes;
  for (int d = 0; d < k; ++d)
    if (di->shape[d] != 1) long_axes.push_back(d);
  bool mergeable = true;
  for (std::size_t j = 0; j + 1 < long_axes.size(); ++j) {
    const int d = long_axes[j], e = long_axes[j + 1];
    if (di->strides[d] != di->strides[e] * di->shape[e]) mergeable = false;
  }
  std::int64_t covered = 1;
  for (int d = 0; d < k; ++d) covered *= di->shape[d];
  Shape mshape{covered};
  mshape.insert(mshape.end(), di->shape.begin() + k, di->shape.end());
  ImplPtr target;
  Array tmp;
  if (mergeable) {
    // The merged axis strides as its innermost covered axis longer than 1.
    const std::int64_t st = long_axes.empty() ? 0 : di->strides[long_axes.back()];
    Shape mstrides{st};
    mstrides.insert(mstrides.end(), di->strides.begin() + k, di->strides.end());
    target = make_view(di, mshape, mstrides, di->offset);
  } else {
    tmp = dst.copy();
    target = impl_of(reshape(tmp, mshape));
  }
  if (target->storage->read_only) throw ValueError("the array is read-only (it wraps memory given as read-only)");
  const ImplPtr& vi = impl_of(vals);
  materialize(*vi);
  const ImplPtr& pi = impl_of(pos);
  materialize(*pi);
  prepare_write(*target->storage);
  if (vi->size() > 0) {
    if (kind(target->dtype) == DTypeKind::complex_floating) {  // through the parts (as_parts)
      const Array tp = as_parts(Array(target)), vp = as_parts(vals);
      target->backend->scatter(view_of(*tp.impl()), view_of(*pi), 0, view_of(*vp.impl()), p.single_mask);
    } else {
      target->backend->scatter(view_of(*target), view_of(*pi), 0, view_of(*vi), p.single_mask);
    }
  }
  if (!mergeable) copyto(dst, tmp);
}

}  // namespace detail

const Array& Array::set(std::initializer_list<Index> index, const Operand& values) const {
  return set(std::span<const Index>(index.begin(), index.size()), values);
}

const Array& Array::set(std::span<const Index> index, const Operand& values) const {
  // The whole array's writability, not only the indexed part's: one element of a broadcast view
  // is every element along its broadcast axes (and the source array's).
  if (impl_ && !is_lazy()) detail::check_writable(*impl_);
  const bool advanced =
      std::any_of(index.begin(), index.end(), [](const Index& ix) { return ix.kind() == Index::Kind::array; });
  if (advanced)
    detail::advanced_set(*this, index, values);
  else
    copyto(slice(index), values);
  return *this;
}

}  // namespace xp
