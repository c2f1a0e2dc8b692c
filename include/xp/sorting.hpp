#pragma once

// Sorting, searching, sets and take_along_axis: the Array API 2024.12 functions, on every device
// with the same results (bit for bit: they only move and compare elements).
//
// The order is NumPy's: ascending, NaNs last (every NaN equal to the others), -0.0 equal to +0.0;
// descending is its reverse (NaNs first), equal elements keeping their input order whenever the
// sort is stable (xp's sorts always are: `stable = false` permits another order, it does not
// choose one).

#include <optional>
#include <vector>

#include "xp/array.hpp"
#include "xp/export.hpp"

namespace xp {

// Sorted along `axis` (negative counts from the end); a new C-contiguous array.
XP_API Array sort(const Array& x, int axis = -1, bool descending = false, bool stable = true);
// The positions (int64) that sort `x` along `axis`: take_along_axis(x, argsort(x), axis) == sort(x).
XP_API Array argsort(const Array& x, int axis = -1, bool descending = false, bool stable = true);

// The indices (int64) of the nonzero elements, one array per dimension, in C order. A 0-d array is
// a ValueError (as NumPy 2).
XP_API std::vector<Array> nonzero(const Array& x);
// where(condition) with one argument: nonzero(condition).
XP_API std::vector<Array> where(const Array& condition);
// The number of nonzero elements over `axes` (int64).
XP_API Array count_nonzero(const Array& x, const Axes& axes = {}, bool keepdims = false);

enum class Side { left, right };
// For each element of x2, where it goes into the 1-D x1, sorted ascending (or sorted by `sorter`,
// the positions that sort it: argsort(x1)): the first such index (Side::left) or the last
// (Side::right). x1 and x2 are compared in their promoted dtype; the result is int64, x2's shape.
XP_API Array searchsorted(const Array& x1, const Operand& x2, Side side = Side::left,
                          const std::optional<Array>& sorter = std::nullopt);

// The distinct elements of x, sorted ascending (NaNs last, each NaN distinct, as the standard
// says; -0.0 and +0.0 are one value, whichever comes first in x).
struct UniqueAll {
  Array values;           // 1-D, x's dtype
  Array indices;          // int64: where each value first occurs in x flattened
  Array inverse_indices;  // int64, x's shape: the position of each element's value in values
  Array counts;           // int64: how often each value occurs
};
struct UniqueCounts {
  Array values, counts;
};
struct UniqueInverse {
  Array values, inverse_indices;
};
XP_API UniqueAll unique_all(const Array& x);
XP_API UniqueCounts unique_counts(const Array& x);
XP_API UniqueInverse unique_inverse(const Array& x);
XP_API Array unique_values(const Array& x);

// result[..., j, ...] = x[..., indices[..., j, ...], ...] along axis: indices (integers) has x's
// number of dimensions and broadcasts with x on every other axis; negative indices count from the
// end; out of range is an IndexError.
XP_API Array take_along_axis(const Array& x, const Array& indices, int axis = -1);

}  // namespace xp
