// einsum (xp/numpy.hpp): NumPy's subscript grammar parsed on the host, each operand's repeated
// subscripts taken as diagonals, subscripts no other operand (nor the output) needs summed early,
// then the operands contracted two at a time in a greedy order, each contraction one batched matmul
// (or a broadcast multiply when nothing is summed). Composed of permute_dims, reshape, take, sum and
// matmul: no backend code of its own.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "array/array_impl.hpp"
#include "xp/error.hpp"
#include "xp/numpy.hpp"

namespace xp {

namespace {

using i64 = std::int64_t;
using Labels = std::vector<int>;

// Labels: 'A'..'Z' are 0..25 and 'a'..'z' 26..51 (NumPy's implicit output sorts by character code,
// upper case first); the broadcast (ellipsis) dimensions are kFirstBroadcast + j, j counted from
// the left of the broadcast shape.
constexpr int kFirstBroadcast = 52;

std::string label_text(int l) {
  if (l < 26) return std::string(1, static_cast<char>('A' + l));
  if (l < kFirstBroadcast) return std::string(1, static_cast<char>('a' + (l - 26)));
  return "(ellipsis dimension " + std::to_string(l - kFirstBroadcast) + ")";
}

[[noreturn]] void fail(const std::string& what) {
  throw ValueError("einsum: " + what);
}

// One term of the subscripts: its letters, and where "..." stands among them (-1: nowhere).
struct Term {
  Labels letters;
  int ellipsis = -1;
};

Term parse_term(const std::string& s, const std::string& where) {
  Term t;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (s.compare(i, 3, "...") != 0 || t.ellipsis >= 0)
        fail("the subscripts contain a '.' that is not part of an ellipsis ('...') in " + where);
      t.ellipsis = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    if (c >= 'A' && c <= 'Z') {
      t.letters.push_back(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      t.letters.push_back(26 + (c - 'a'));
    } else {
      fail(std::string("invalid subscript '") + c + "' in " + where + ": subscripts must be letters");
    }
  }
  return t;
}

struct Operand_ {
  Array x;
  Labels labels;  // one per axis of x
};

bool contains(const Labels& l, int v) {
  return std::find(l.begin(), l.end(), v) != l.end();
}

// x with axes p and q (same extent n) replaced by their diagonal, put last.
Operand_ take_diagonal(const Operand_& o, std::size_t p, std::size_t q) {
  std::vector<int> perm;
  Labels labels;
  Shape shape;
  for (std::size_t d = 0; d < o.labels.size(); ++d) {
    if (d == p || d == q) continue;
    perm.push_back(static_cast<int>(d));
    labels.push_back(o.labels[d]);
    shape.push_back(o.x.shape(static_cast<int>(d)));
  }
  const i64 n = o.x.shape(static_cast<int>(p));
  perm.push_back(static_cast<int>(p));
  perm.push_back(static_cast<int>(q));
  Shape merged = shape;
  merged.push_back(n * n);
  const Array flat = reshape(permute_dims(o.x, perm), merged);
  const Array ix = (arange(0, n, 1, DType::int64, o.x.device()) * (n + 1)).eval();
  labels.push_back(o.labels[p]);
  return {take(flat, ix, static_cast<int>(merged.size()) - 1), labels};
}

// The sum over the axes of o whose labels `keep` does not hold, in o's dtype (NumPy's einsum keeps
// the operands' dtype: int8 sums wrap, bool sums are `any`).
Operand_ sum_out(const Operand_& o, const std::vector<bool>& keep) {
  std::vector<int> axes;
  Labels labels;
  for (std::size_t d = 0; d < o.labels.size(); ++d) {
    if (keep[static_cast<std::size_t>(o.labels[d])])
      labels.push_back(o.labels[d]);
    else
      axes.push_back(static_cast<int>(d));
  }
  if (axes.empty()) return o;
  const DType t = o.x.dtype();
  const Array r = t == DType::bool_ ? any(o.x, Axes(axes)) : sum(o.x, Axes(axes), false, t);
  return {r, labels};
}

// Whether label l is needed by the output or by an operand other than those in `skip`.
std::vector<bool> needed_outside(const std::vector<Operand_>& ops, std::size_t skip1, std::size_t skip2,
                                 const Labels& output, int n_labels) {
  std::vector<bool> keep(static_cast<std::size_t>(n_labels), false);
  for (int l : output) keep[static_cast<std::size_t>(l)] = true;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (i == skip1 || i == skip2) continue;
    for (int l : ops[i].labels) keep[static_cast<std::size_t>(l)] = true;
  }
  return keep;
}

// The contraction of a and b keeping the labels `keep` holds: labels in both and kept are batch
// dimensions, labels in both and not kept are summed, the others (each in one operand, kept by
// the invariant that a label no one else needs was summed already) are free rows and columns.
Operand_ contract(const Operand_& a, const Operand_& b, const std::vector<bool>& keep, const std::vector<i64>& extent) {
  Labels batch, left, right, summed;
  for (int l : a.labels) {
    if (contains(b.labels, l))
      (keep[static_cast<std::size_t>(l)] ? batch : summed).push_back(l);
    else
      left.push_back(l);
  }
  for (int l : b.labels)
    if (!contains(a.labels, l)) right.push_back(l);
  auto axes_of = [](const Operand_& o, std::initializer_list<const Labels*> groups) {
    std::vector<int> perm;
    for (const Labels* g : groups)
      for (int l : *g)
        perm.push_back(static_cast<int>(std::find(o.labels.begin(), o.labels.end(), l) - o.labels.begin()));
    return perm;
  };
  auto size_of = [&](const Labels& g) {
    i64 s = 1;
    for (int l : g) s *= extent[static_cast<std::size_t>(l)];
    return s;
  };
  auto extents = [&](std::initializer_list<const Labels*> groups) {
    Shape s;
    for (const Labels* g : groups)
      for (int l : *g) s.push_back(extent[static_cast<std::size_t>(l)]);
    return s;
  };
  Labels out_labels = batch;
  out_labels.insert(out_labels.end(), left.begin(), left.end());
  out_labels.insert(out_labels.end(), right.begin(), right.end());
  const Shape out_shape = extents({&batch, &left, &right});
  if (summed.empty()) {
    // Nothing summed: a broadcast multiply, a as (batch, left, 1...) and b as (batch, 1..., right).
    Shape sa = extents({&batch, &left}), sb = extents({&batch});
    sa.insert(sa.end(), right.size(), 1);
    sb.insert(sb.end(), left.size(), 1);
    for (int l : right) sb.push_back(extent[static_cast<std::size_t>(l)]);
    const Array xa = reshape(permute_dims(a.x, axes_of(a, {&batch, &left})), sa);
    const Array xb = reshape(permute_dims(b.x, axes_of(b, {&batch, &right})), sb);
    return {multiply(xa, xb), out_labels};
  }
  const i64 nb = size_of(batch), m = size_of(left), k = size_of(summed), n = size_of(right);
  const Array xa = reshape(permute_dims(a.x, axes_of(a, {&batch, &left, &summed})), {nb, m, k});
  const Array xb = reshape(permute_dims(b.x, axes_of(b, {&batch, &summed, &right})), {nb, k, n});
  return {reshape(matmul(xa, xb), out_shape), out_labels};
}

}  // namespace

Array einsum(const std::string& subscripts, const std::vector<Array>& operands) {
  if (operands.empty()) fail("no operands given");
  for (const Array& a : operands)
    if (!a.valid()) fail("an operand is an empty Array handle");
  const Device dev = operands[0].device();
  for (const Array& a : operands)
    if (!(a.device() == dev)) throw DeviceMismatch("einsum", dev.str(), a.device().str());

  // ---- parse ----
  std::string inputs = subscripts, output_text;
  bool explicit_output = false;
  if (const auto arrow = subscripts.find("->"); arrow != std::string::npos) {
    if (subscripts.find("->", arrow + 2) != std::string::npos) fail("the subscripts contain '->' more than once");
    inputs = subscripts.substr(0, arrow);
    output_text = subscripts.substr(arrow + 2);
    explicit_output = true;
  }
  for (char c : inputs + output_text)
    if (c == '-' || c == '>') fail("the subscripts contain a '-' or '>' that is not part of '->'");
  std::vector<std::string> texts;
  for (std::size_t start = 0;;) {
    const auto comma = inputs.find(',', start);
    texts.push_back(inputs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (output_text.find(',') != std::string::npos) fail("the output subscripts contain a ','");
  if (texts.size() < operands.size())
    fail("more operands (" + std::to_string(operands.size()) + ") than terms in the subscripts (" +
         std::to_string(texts.size()) + ")");
  if (texts.size() > operands.size())
    fail("fewer operands (" + std::to_string(operands.size()) + ") than terms in the subscripts (" +
         std::to_string(texts.size()) + ")");

  // ---- labels of every axis; the broadcast dimensions right-aligned across operands ----
  const std::size_t n_ops = operands.size();
  std::vector<Term> terms;
  int n_broadcast = 0;
  for (std::size_t i = 0; i < n_ops; ++i) {
    const std::string where = "operand " + std::to_string(i);
    terms.push_back(parse_term(texts[i], where));
    const int nd = operands[i].ndim(), nl = static_cast<int>(terms[i].letters.size());
    if (nl > nd)
      fail("the subscripts of " + where + " name " + std::to_string(nl) + " dimensions, it has " + std::to_string(nd));
    if (terms[i].ellipsis < 0 && nl < nd)
      fail(where + " has " + std::to_string(nd) + " dimensions but its subscripts name " + std::to_string(nl) +
           " and hold no '...' for the others");
    n_broadcast = std::max(n_broadcast, nd - nl);
  }
  const int n_labels = kFirstBroadcast + n_broadcast;
  std::vector<i64> extent(static_cast<std::size_t>(n_labels), -1);  // -1: not seen; 1 broadcasts
  std::vector<int> count(static_cast<std::size_t>(n_labels), 0);
  std::vector<Operand_> ops;
  const DType common = [&] {
    std::vector<TypeArg> args(operands.begin(), operands.end());
    return result_type(args);
  }();
  for (std::size_t i = 0; i < n_ops; ++i) {
    const Term& t = terms[i];
    const Array& a = operands[i];
    Labels labels;
    const int nd = a.ndim(), e = nd - static_cast<int>(t.letters.size());
    for (int j = 0; j < static_cast<int>(t.letters.size()); ++j) {
      if (j == t.ellipsis)
        for (int b = 0; b < e; ++b) labels.push_back(kFirstBroadcast + n_broadcast - e + b);
      labels.push_back(t.letters[static_cast<std::size_t>(j)]);
    }
    if (t.ellipsis == static_cast<int>(t.letters.size()))
      for (int b = 0; b < e; ++b) labels.push_back(kFirstBroadcast + n_broadcast - e + b);
    for (int d = 0; d < nd; ++d) {
      const int l = labels[static_cast<std::size_t>(d)];
      const i64 n = a.shape(d);
      for (int d2 = 0; d2 < d; ++d2)
        if (labels[static_cast<std::size_t>(d2)] == l && a.shape(d2) != n)
          fail("dimensions in operand " + std::to_string(i) + " for collapsing index '" + label_text(l) +
               "' don't match (" + std::to_string(a.shape(d2)) + " != " + std::to_string(n) + ")");
      i64& ext = extent[static_cast<std::size_t>(l)];
      if (ext == -1 || ext == 1)
        ext = n;
      else if (n != 1 && n != ext)
        fail("subscript '" + label_text(l) + "' has extent " + std::to_string(ext) + " in one operand and " +
             std::to_string(n) + " in operand " + std::to_string(i) + ": they do not broadcast");
      ++count[static_cast<std::size_t>(l)];
    }
    ops.push_back({a.dtype() == common ? a : a.astype(common), labels});
  }

  Labels output;
  if (explicit_output) {
    const Term t = parse_term(output_text, "the output");
    for (std::size_t j = 0; j < t.letters.size(); ++j) {
      const int l = t.letters[j];
      if (std::find(t.letters.begin(), t.letters.begin() + static_cast<std::ptrdiff_t>(j), l) !=
          t.letters.begin() + static_cast<std::ptrdiff_t>(j))
        fail("the output subscript '" + label_text(l) + "' appears more than once");
      if (count[static_cast<std::size_t>(l)] == 0)
        fail("the output subscript '" + label_text(l) + "' never appears in an input");
    }
    if (t.ellipsis < 0 && n_broadcast > 0)
      fail("the inputs have " + std::to_string(n_broadcast) +
           " dimensions under '...' but the output has no '...' to put them in");
    for (int j = 0; j <= static_cast<int>(t.letters.size()); ++j) {
      if (j == t.ellipsis)
        for (int b = 0; b < n_broadcast; ++b) output.push_back(kFirstBroadcast + b);
      if (j < static_cast<int>(t.letters.size())) output.push_back(t.letters[static_cast<std::size_t>(j)]);
    }
  } else {
    // NumPy's implicit output: the broadcast dimensions, then every letter used once, sorted.
    for (int b = 0; b < n_broadcast; ++b) output.push_back(kFirstBroadcast + b);
    for (int l = 0; l < kFirstBroadcast; ++l)
      if (count[static_cast<std::size_t>(l)] == 1) output.push_back(l);
  }
  for (i64& e : extent)
    if (e == -1) e = 1;

  // ---- each operand alone: broadcast axes of extent 1 dropped, diagonals, early sums ----
  for (Operand_& o : ops) {
    Shape s;
    Labels kept;
    for (std::size_t d = 0; d < o.labels.size(); ++d) {
      const i64 n = o.x.shape(static_cast<int>(d));
      if (n == 1 && extent[static_cast<std::size_t>(o.labels[d])] != 1) continue;  // o is constant along it
      s.push_back(n);
      kept.push_back(o.labels[d]);
    }
    if (kept.size() != o.labels.size()) o = {reshape(o.x, s), kept};
    for (bool again = true; again;) {
      again = false;
      for (std::size_t p = 0; p < o.labels.size() && !again; ++p)
        for (std::size_t q = p + 1; q < o.labels.size() && !again; ++q)
          if (o.labels[p] == o.labels[q]) {
            o = take_diagonal(o, p, q);
            again = true;
          }
    }
  }
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  for (std::size_t i = 0; i < ops.size(); ++i) ops[i] = sum_out(ops[i], needed_outside(ops, i, none, output, n_labels));

  // ---- greedy pairwise contraction: the pair whose result is smallest, then the fewest
  // multiply-adds, then the first in order; the result joins the end of the list ----
  while (ops.size() > 1) {
    std::size_t best_i = 0, best_j = 1;
    i64 best_size = std::numeric_limits<i64>::max(), best_cost = std::numeric_limits<i64>::max();
    for (std::size_t i = 0; i < ops.size(); ++i)
      for (std::size_t j = i + 1; j < ops.size(); ++j) {
        const std::vector<bool> keep = needed_outside(ops, i, j, output, n_labels);
        i64 size = 1, cost = 1;
        std::vector<bool> seen(static_cast<std::size_t>(n_labels), false);
        for (const Labels* g : {&ops[i].labels, &ops[j].labels})
          for (int l : *g) {
            if (seen[static_cast<std::size_t>(l)]) continue;
            seen[static_cast<std::size_t>(l)] = true;
            const i64 e = std::max<i64>(extent[static_cast<std::size_t>(l)], 1);
            cost = cost > std::numeric_limits<i64>::max() / e ? std::numeric_limits<i64>::max() : cost * e;
            if (keep[static_cast<std::size_t>(l)])
              size = size > std::numeric_limits<i64>::max() / e ? std::numeric_limits<i64>::max() : size * e;
          }
        if (size < best_size || (size == best_size && cost < best_cost)) {
          best_size = size;
          best_cost = cost;
          best_i = i;
          best_j = j;
        }
      }
    const std::vector<bool> keep = needed_outside(ops, best_i, best_j, output, n_labels);
    Operand_ r = contract(ops[best_i], ops[best_j], keep, extent);
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(best_j));
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(best_i));
    ops.push_back(std::move(r));
  }

  // ---- the output's order ----
  const Operand_ last = sum_out(ops[0], needed_outside({}, none, none, output, n_labels));
  std::vector<int> perm;
  for (int l : output)
    perm.push_back(static_cast<int>(std::find(last.labels.begin(), last.labels.end(), l) - last.labels.begin()));
  Array r = permute_dims(last.x, perm);
  // A new array, never a view of an operand (NumPy returns views in some cases; xp never does).
  for (const Array& a : operands)
    if (r.impl() == a.impl() || (r.impl()->storage && r.impl()->storage == a.impl()->storage)) {
      r = r.copy();
      break;
    }
  return r.eval();
}

}  // namespace xp
