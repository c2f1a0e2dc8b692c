#pragma once

// NumPy functions beyond the Array API, under NumPy's names and with NumPy 2's answers, composed of
// other array functions (elementwise operations, reductions, sort, take, concat, scatter through
// Array::set), so that they run on every device and give the same results on each wherever the
// operations they are made of do (docs/semantics.md, "NumPy functions beyond the Array API").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "xp/array.hpp"
#include "xp/export.hpp"

namespace xp {

// ---- comparison ----------------------------------------------------------------------------------
// abs(a - b) <= atol + rtol * abs(b) where b is finite, or a == b (so inf == inf), as np.isclose:
// b is first converted to the float dtype of result_type(b, 1.0) (an integer b to float64), and the
// arithmetic is done in the promoted dtype with rtol and atol weak. equal_nan: NaN is close to NaN.
// A bool array of the broadcast shape.
XP_API Array isclose(const Operand& a, const Operand& b, double rtol = 1e-05, double atol = 1e-08,
                     bool equal_nan = false);
// all(isclose(a, b, rtol, atol, equal_nan)).
XP_API bool allclose(const Operand& a, const Operand& b, double rtol = 1e-05, double atol = 1e-08,
                     bool equal_nan = false);
// Same shape (no broadcasting) and every element equal; equal_nan: NaN equals NaN.
XP_API bool array_equal(const Array& a1, const Array& a2, bool equal_nan = false);

// ---- reductions that ignore NaN ------------------------------------------------------------------
// As sum, mean, max, min with NaNs left out (integer arrays have none: the plain reduction). An
// all-NaN slice gives 0 (nansum) or NaN (nanmean, nanmax, nanmin; NumPy also warns).
XP_API Array nansum(const Array& a, const Axes& axes = {}, bool keepdims = false);
XP_API Array nanmean(const Array& a, const Axes& axes = {}, bool keepdims = false);
XP_API Array nanmax(const Array& a, const Axes& axes = {}, bool keepdims = false);
XP_API Array nanmin(const Array& a, const Axes& axes = {}, bool keepdims = false);
// argmax / argmin with NaNs left out; an all-NaN slice is a ValueError (as NumPy's).
XP_API Array nanargmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
XP_API Array nanargmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);

// ---- shapes --------------------------------------------------------------------------------------
// A 1-D v: the square matrix with v on its k-th diagonal (k > 0 above the main one). A 2-D v: its
// k-th diagonal, a new 1-D array (NumPy gives a read-only view). Another rank is a ValueError.
XP_API Array diag(const Array& v, std::int64_t k = 0);
// reshape(a, {-1}): a view where the layout allows, else a copy.
XP_API Array ravel(const Array& a);

// ---- order statistics ----------------------------------------------------------------------------
// The median over `axes` (all by default), as np.median: the mean of the middle one or two sorted
// values; a slice holding a NaN gives NaN; an empty slice gives NaN. Integer arrays give float64.
XP_API Array median(const Array& a, const Axes& axes = {}, bool keepdims = false);
// NumPy's default ("linear") quantiles, computed step by step as NumPy 2.4 computes them: q a
// number or a 0-d / 1-D array in [0, 1] (else a ValueError); with a 1-D q the result's first axis
// is q's. A number q is weak, as in NumPy: the interpolation weight is a float64 number that meets
// the array's values as a weak scalar, so a float32 array gives float32; an array q brings its
// dtype (a float64 q gives float64). An integer q takes the elements themselves (a's dtype). A
// slice holding a NaN gives NaN; an empty one is an IndexError. percentile is quantile of q / 100
// (q in [0, 100]). `method` as NumPy's: "linear" (the above), "lower", "higher", "nearest" (the
// element at (n - 1) q rounded down, up, or half to even: a's dtype) and "midpoint" (the mean of the
// two elements around (n - 1) q, or the element where that is whole: a float, also for an integer
// q); another name is a ValueError.
XP_API Array quantile(const Array& a, const Operand& q, const Axes& axes = {}, bool keepdims = false,
                      std::string_view method = "linear");
XP_API Array percentile(const Array& a, const Operand& q, const Axes& axes = {}, bool keepdims = false,
                        std::string_view method = "linear");

// ---- partial sorts, counts and histograms --------------------------------------------------------
// An array whose element at each kth position along axis is the one a sort would put there, smaller
// ones before it and larger ones after (NumPy's contract). xp gives the full stable sort, which
// satisfies it. kth out of range is a ValueError.
XP_API Array partition(const Array& a, const std::vector<std::int64_t>& kth, int axis = -1);
XP_API Array argpartition(const Array& a, const std::vector<std::int64_t>& kth, int axis = -1);
// The number of occurrences of each value 0..max(x) in a 1-D array of non-negative integers (int64),
// at least `minlength` bins; with weights (x's shape), the sum of the weights of each value
// (float64).
XP_API Array bincount(const Array& x, const std::optional<Array>& weights = std::nullopt, std::int64_t minlength = 0);
struct Histogram {
  Array counts;  // int64, `bins` values
  Array edges;   // bins + 1 edges, a's float dtype (float64 for integers)
};
// np.histogram with `bins` equal bins over `range` (default: a's minimum and maximum); every bin is
// half-open but the last, which holds its right edge; values outside the range are not counted.
//
// density: counts / (total count * bin width) instead of counts (float64 then, as NumPy's).
XP_API Histogram histogram(const Array& a, std::int64_t bins = 10,
                           const std::optional<std::pair<double, double>>& range = std::nullopt, bool density = false);
// np.histogram with the bin edges given: a 1-D array of at least two edges, monotonically
// increasing (else a ValueError), on a's device. Values outside [edges[0], edges[-1]] are not
// counted; the edges come back as given (NumPy returns them unchanged too).
XP_API Histogram histogram(const Array& a, const Array& bins, bool density = false);
// The edges histogram(a, bins, range) uses (np.histogram_bin_edges with a bin count).
XP_API Array histogram_bin_edges(const Array& a, std::int64_t bins = 10,
                                 const std::optional<std::pair<double, double>>& range = std::nullopt);

// ---- einsum -------------------------------------------------------------------------------------
// np.einsum's sum of products over the subscripts: "ij,jk->ik" (explicit output) or "ij,jk"
// (implicit: the broadcast dimensions, then the letters used once, sorted by character code),
// "..." for broadcast dimensions, a letter repeated in one operand for its diagonal, letters left
// out of the output summed. The operands are promoted to one dtype first (result_type) and every
// sum stays in it, as NumPy's (int8 wraps, bool is or-of-ands). Operands are contracted two at a
// time, greedily: the pair whose result is smallest next; each contraction is one batched matmul
// after permute_dims and reshape, or a broadcast multiply where nothing is summed. A malformed
// subscripts string, a count of terms other than the operands', or extents that do not match are
// ValueErrors naming the problem. A new array (never a view of an operand).
XP_API Array einsum(const std::string& subscripts, const std::vector<Array>& operands);
template <class... Rest>
requires(std::is_convertible_v<const Rest&, const Array&>&&...) Array
    einsum(const std::string& subscripts, const Array& first, const Rest&... rest) {
  return einsum(subscripts, std::vector<Array>{first, static_cast<const Array&>(rest)...});
}

// ---- padding -------------------------------------------------------------------------------------
// a padded by pad_width[axis] = (before, after) elements on each axis (one pair applies to every
// axis), with mode "constant" (constant_value converted to a's dtype), "edge" (the edge values
// repeated), "reflect" (mirrored about the edge, the edge not repeated), "symmetric" (mirrored, the
// edge repeated) or "wrap" (the other end's values). A new array.
XP_API Array pad(const Array& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& pad_width,
                 const std::string& mode = "constant", const Scalar& constant_value = 0);

}  // namespace xp
