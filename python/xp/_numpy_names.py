"""NumPy's names that the Array API spells differently or leaves out (``absolute``, ``concatenate``,
``hstack``, ``split``, ``fmax``, ``kron``, ``unique``...), each a composition of the namespace's
functions, so it runs on the array's device. NumPy 2's signatures and answers; an argument NumPy takes
and these do not is a TypeError (an unexpected keyword) or a ValueError naming it.

Names skipped for want of an honest composition: none so far (each here is exact, or as accurate as
the functions it is made of).
"""

import builtins
import math
import numbers
import operator
import struct

from . import _xp
from ._namespace import finfo
from ._methods import (
    _cumprod,
    _cumsum,
    _diagonal,
    _dot,
    _round,
    _swapaxes,
    _to_out,
    _trace,
    _transpose,
)

__all__ = [
    "absolute", "amax", "amin", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "around", "bitwise_not", "concatenate", "conjugate", "cumsum", "cumprod", "deg2rad", "rad2deg", "degrees",
    "radians", "power", "mod", "true_divide", "fabs", "transpose", "swapaxes", "hstack", "vstack", "dstack",
    "column_stack", "atleast_1d", "atleast_2d", "atleast_3d", "split", "array_split", "hsplit", "vsplit",
    "ndim", "shape", "size", "exp2", "cbrt", "rint", "fmax", "fmin", "fmod", "ptp", "outer", "inner", "dot",
    "vdot", "kron", "isin", "nan_to_num", "argwhere", "rot90", "fliplr", "flipud", "identity", "logspace",
    "average", "diagonal", "trace", "unique",
]

_Array = _xp.Array

# The same functions under NumPy's names (np.absolute is np.abs too).
absolute = _xp.abs
arccos, arccosh, arcsin, arcsinh = _xp.acos, _xp.acosh, _xp.asin, _xp.asinh
arctan, arctan2, arctanh = _xp.atan, _xp.atan2, _xp.atanh
bitwise_not = _xp.bitwise_invert
conjugate = _xp.conj
mod = _xp.remainder
true_divide = _xp.divide


def _arr(x, like=None):
    """x as an xp array (on `like`'s device when `like` is one)."""
    if isinstance(x, _Array):
        return x
    return _xp.asarray(x) if like is None else _xp.asarray(x, device=like.device)


def _kind(dtype):
    for k in ("bool", "unsigned integer", "signed integer", "real floating", "complex floating"):
        if _xp._isdtype(dtype, k):
            return k
    raise TypeError(f"unsupported dtype {dtype}")


# NumPy's "same_kind" casting: to a kind of this rank or higher.
_RANK = {"bool": 0, "unsigned integer": 1, "signed integer": 2, "real floating": 3, "complex floating": 4}

_FLOAT_OF = {_xp.bool: _xp.float16, _xp.int8: _xp.float16, _xp.uint8: _xp.float16,
             _xp.int16: _xp.float32, _xp.uint16: _xp.float32}


def _float(x):
    """x in the floating dtype NumPy's float-only ufuncs compute integers in (int8: float16, int16:
    float32, wider: float64); a complex array is a TypeError, as those ufuncs' loops have none."""
    x = _arr(x)
    k = _kind(x.dtype)
    if k == "complex floating":
        raise TypeError(f"ufunc not supported for the input type {x.dtype}")
    return x if k == "real floating" else x.astype(_FLOAT_OF.get(x.dtype, _xp.float64))


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise _xp.ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


# ---- reductions and elementwise ----


def amax(a, axis=None, out=None, keepdims=False):
    """NumPy's amax: max (NaN propagates)."""
    return _to_out(_xp.max(a, axis=axis, keepdims=keepdims), out)


def amin(a, axis=None, out=None, keepdims=False):
    """NumPy's amin: min (NaN propagates)."""
    return _to_out(_xp.min(a, axis=axis, keepdims=keepdims), out)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min along axis (integers wrap, as NumPy's)."""
    return _to_out(_xp.max(a, axis=axis, keepdims=keepdims) - _xp.min(a, axis=axis, keepdims=keepdims), out)


def around(a, decimals=0, out=None):
    """Round half to even to `decimals` digits (NumPy's scale, round, scale back)."""
    return _to_out(_round(_arr(a), decimals), out)


def cumsum(a, axis=None, dtype=None, out=None):
    """cumulative_sum; axis=None sums the flattened array."""
    return _cumsum(_arr(a), axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """cumulative_prod; axis=None multiplies along the flattened array."""
    return _cumprod(_arr(a), axis, dtype, out)


def power(x1, x2):
    """pow; integers to negative integer powers are a ValueError, as NumPy's."""
    r = _xp.pow(x1, x2)
    if _xp._isdtype(r.dtype, "integral"):
        neg = x2 < 0 if isinstance(x2, int) else _xp.any(_arr(x2, r) < 0)
        if neg:
            raise ValueError("Integers to negative integer powers are not allowed.")
    return r


def fabs(x):
    """The absolute value as a float (integers in NumPy's float dtype for them; complex: TypeError)."""
    return _xp.abs(_float(x))


def _halves_in_float32(fn, x):  # NumPy's float16 loops compute in float32 and round the result
    x = _float(x)
    if x.dtype in (_xp.float16, _xp.bfloat16):
        return fn(x.astype(_xp.float32)).astype(x.dtype)
    return fn(x)


def _f32(v):  # v rounded to float32
    return struct.unpack("f", struct.pack("f", v))[0]


def _scaled(x, c64, c32):  # NumPy's: float64 times c64; float32 (and halves, in float32) times c32
    return _halves_in_float32(lambda v: v * (c64 if v.dtype == _xp.float64 else c32), x)


def deg2rad(x):
    """Degrees to radians: x * (pi / 180), the constant in x's precision as NumPy's."""
    return _scaled(x, math.pi / 180.0, _f32(_f32(math.pi) / 180.0))


def rad2deg(x):
    """Radians to degrees: x * (180 / pi), the constant in x's precision as NumPy's."""
    return _scaled(x, 180.0 / math.pi, _f32(180.0 / _f32(math.pi)))


radians, degrees = deg2rad, rad2deg


def exp2(x):
    """2 ** x."""
    return _halves_in_float32(lambda v: _xp.pow(2.0, v), x)


def cbrt(x):
    """The real cube root, with x's sign (NaN, infinities and signed zeros as they are)."""
    x = _float(x)
    w = x.astype(_xp.float64)  # float16/32 rounded once from the float64 root
    y = _xp.copysign(_xp.pow(_xp.abs(w), 1.0 / 3.0), w)
    y = y - (y - w / (y * y)) / 3.0  # one Newton step (pow(x, 1/3) misses by an ulp or so), no overflow
    return _xp.where(_xp.isfinite(w) & (w != 0), y, w).astype(x.dtype)


def rint(x):
    """Round to the nearest integer, half to even, as a float."""
    return _xp.round(_float(x))


def _nan_other(m, x1, x2):  # m (NaN where either is) with the other operand where one is NaN
    if not _xp._isdtype(m.dtype, "real floating"):
        return m
    a, b = (x if isinstance(x, (int, float)) else _arr(x, m) for x in (x1, x2))
    m = _xp.where(_xp.isnan(_arr(a, m)), b, m)
    return _xp.where(_xp.isnan(_arr(b, m)), a, m)


def fmax(x1, x2):
    """maximum, but where one operand is NaN the other (NaN where both are)."""
    return _nan_other(_xp.maximum(x1, x2), x1, x2)


def fmin(x1, x2):
    """minimum, but where one operand is NaN the other (NaN where both are)."""
    return _nan_other(_xp.minimum(x1, x2), x1, x2)


def fmod(x1, x2):
    """The remainder of x1 / x2 truncated toward zero: the sign of x1 (C's fmod, integers' %)."""
    r = _xp.remainder(x1, x2)  # floor remainder: the sign of x2
    k = _kind(r.dtype)
    if k == "complex floating":
        raise TypeError("fmod: complex numbers are not supported")
    a, b = _arr(x1, r).astype(r.dtype), _arr(x2, r).astype(r.dtype)
    if k == "real floating":  # |x1| mod |x2| is exact; the sign then x1's
        m = _xp.remainder(_xp.abs(a), _xp.abs(b))
        return _xp.where(_xp.signbit(a), -m, m)
    # Integers: move a remainder whose sign is x2's (nonzero) to x1's side, exactly.
    return _xp.where((r != 0) & ((r < 0) != (a < 0)), r - b, r)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN to `nan`, infinities to `posinf`/`neginf` (the dtype's largest and lowest finite numbers by
    default); each part of a complex number on its own; integers as they are. copy=False writes into x."""
    a = _arr(x)
    k = _kind(a.dtype)
    if k == "complex floating":
        r = nan_to_num(_xp.real(a), True, nan, posinf, neginf) + 1j * nan_to_num(_xp.imag(a), True, nan, posinf, neginf)
    elif k == "real floating":
        fi = finfo(a.dtype)
        r = _xp.where(_xp.isnan(a), nan, a)
        r = _xp.where(r == math.inf, fi.max if posinf is None else posinf, r)
        r = _xp.where(r == -math.inf, fi.min if neginf is None else neginf, r)
    else:
        r = a
    if not copy and isinstance(x, _Array):
        if r is not x:
            x[...] = r
        return x
    return _xp.asarray(r, copy=True) if r is a else r


# ---- shapes ----


def ndim(a):
    """The number of dimensions of a."""
    return _arr(a).ndim


def shape(a):
    """The shape of a (a tuple)."""
    return tuple(_arr(a).shape)


def size(a, axis=None):
    """The number of elements of a, or along `axis` (an int or a tuple)."""
    a = _arr(a)
    if axis is None:
        return a.size
    axes = axis if isinstance(axis, tuple) else (axis,)
    return math.prod(a.shape[_axis(ax, a.ndim)] for ax in axes)


def transpose(a, axes=None):
    """permute_dims; axes=None reverses the axes."""
    return _transpose(_arr(a), axes)


def swapaxes(a, axis1, axis2):
    """a with axes axis1 and axis2 interchanged."""
    return _swapaxes(_arr(a), axis1, axis2)


def _atleast(n, arys):
    out = []
    for x in arys:
        x = _arr(x)
        if x.ndim < n:
            # NumPy's placement: 1-D (N,) is (1, N) in 2-D and (1, N, 1) in 3-D; 2-D (M, N) is (M, N, 1).
            s = tuple(x.shape)
            s = {0: (1,) * n, 1: (1,) + s + (1,) * (n - 2)}.get(x.ndim, s + (1,))
            x = _xp.reshape(x, s)
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """Each array with at least one dimension (one array, or a tuple of them)."""
    return _atleast(1, arys)


def atleast_2d(*arys):
    """Each array with at least two dimensions (a 1-D array is a row)."""
    return _atleast(2, arys)


def atleast_3d(*arys):
    """Each array with at least three dimensions ((N,) is (1, N, 1), (M, N) is (M, N, 1))."""
    return _atleast(3, arys)


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """concat under NumPy's name: axis=None flattens each array first; dtype= converts them
    (casting "same_kind", NumPy's default, or "unsafe")."""
    arrays = [_arr(x) for x in arrays]
    if casting not in ("same_kind", "unsafe"):
        raise ValueError(f"concatenate: casting={casting!r} is not supported (only 'same_kind' and 'unsafe')")
    if dtype is not None:
        to = _xp.empty(0, dtype=dtype).dtype
        for x in arrays:
            if casting == "same_kind" and _RANK[_kind(x.dtype)] > _RANK[_kind(to)]:
                raise TypeError(f"Cannot cast array data from {x.dtype} to {to} according to the rule 'same_kind'")
        arrays = [x.astype(to) for x in arrays]
    if axis is None:
        arrays = [_xp.reshape(x, (-1,)) for x in arrays]
        axis = 0
    return _to_out(_xp.concat(arrays, axis=axis), out)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Concatenated along the second axis (the first for 1-D arrays)."""
    arrs = [atleast_1d(x) for x in tup]
    return concatenate(arrs, axis=0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Concatenated along the first axis, after atleast_2d."""
    return concatenate([atleast_2d(x) for x in tup], axis=0, dtype=dtype, casting=casting)


def dstack(tup):
    """Concatenated along the third axis, after atleast_3d."""
    return concatenate([atleast_3d(x) for x in tup], axis=2)


def column_stack(tup):
    """1-D arrays as columns, 2-D arrays as they are, side by side."""
    arrs = [_arr(x) for x in tup]
    return concatenate([_xp.reshape(x, (-1, 1)) if x.ndim < 2 else x for x in arrs], axis=1)


def _split(ary, indices_or_sections, axis, equal):
    a = _arr(ary)
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    if hasattr(indices_or_sections, "__len__") and getattr(indices_or_sections, "ndim", 1):  # indices
        bounds = [0] + [operator.index(i) for i in indices_or_sections] + [n]
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if equal and n % sections:
            raise ValueError("array split does not result in an equal division")
        q, r = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + q + (i < r))
    pre = (slice(None),) * axis
    return [a[pre + (slice(s, e),)] for s, e in zip(bounds[:-1], bounds[1:])]


def split(ary, indices_or_sections, axis=0):
    """Views of ary: `indices_or_sections` equal parts (a ValueError if they are not) or the parts
    between the given indices."""
    return _split(ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """split, where n parts of an axis of length l are l % n of l // n + 1 elements, then l // n."""
    return _split(ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    """split along the second axis (the first for 1-D arrays)."""
    a = _arr(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """split along the first axis of an array of two or more dimensions."""
    a = _arr(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def fliplr(m):
    """m reversed along its second axis."""
    m = _arr(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return _xp.flip(m, axis=1)


def flipud(m):
    """m reversed along its first axis."""
    m = _arr(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return _xp.flip(m, axis=0)


def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times, from the first of `axes` toward the second."""
    m = _arr(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or builtins.abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    a0, a1 = (_axis(ax, m.ndim) for ax in axes)
    k = operator.index(k) % 4
    if k == 0:
        return m[...]
    if k == 2:
        return _xp.flip(_xp.flip(m, axis=a0), axis=a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _xp.permute_dims(_xp.flip(m, axis=a1), tuple(perm))
    return _xp.flip(_xp.permute_dims(m, tuple(perm)), axis=a1)


def argwhere(a):
    """The indices of a's nonzero elements, one row each: shape (N, a.ndim)."""
    a = _arr(a)
    if a.ndim == 0:  # NumPy's: one row of no indices if a is nonzero
        return _xp.zeros((int(builtins.bool(a)), 0), dtype=_xp.int64, device=a.device)
    return _xp.stack(_xp.nonzero(a), axis=-1)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of the axis1-axis2 planes (NumPy's; xp.linalg.diagonal takes the last two axes)."""
    return _diagonal(_arr(a), offset, axis1, axis2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum of diagonal(a, offset, axis1, axis2)."""
    return _to_out(_trace(_arr(a), offset, axis1, axis2, dtype), out)


# ---- products ----


def dot(a, b, out=None):
    """NumPy's dot: a * b when one is 0-d, matmul for 1-D and 2-D, else the last axis of a against the
    second-to-last of b."""
    return _to_out(_dot(_arr(a), b), out)


def vdot(a, b, /):
    """The dot product of the flattened arrays, the first conjugated."""
    a = _xp.reshape(_arr(a), (-1,))
    b = _xp.reshape(_arr(b, a), (-1,))
    if a.shape != b.shape:
        raise ValueError(f"vdot: the arrays have {a.shape[0]} and {b.shape[0]} elements")
    return _xp.matmul(_xp.conj(a) if _xp._isdtype(a.dtype, "complex floating") else a, b)


def inner(a, b, /):
    """The sum over the last axes of a and b (no conjugation); a * b when one is 0-d."""
    a = _arr(a)
    b = _arr(b, a)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return _xp.tensordot(a, b, axes=([-1], [-1]))


def outer(a, b, out=None):
    """a.ravel()[:, None] * b.ravel()[None, :]."""
    a = _xp.reshape(_arr(a), (-1, 1))
    return _to_out(a * _xp.reshape(_arr(b, a), (1, -1)), out)


def kron(a, b):
    """The Kronecker product: blocks a[i, j] * b (the smaller ndim padded with leading ones)."""
    a = _arr(a)
    b = _arr(b, a)
    n = builtins.max(a.ndim, b.ndim)
    sa = (1,) * (n - a.ndim) + tuple(a.shape)
    sb = (1,) * (n - b.ndim) + tuple(b.shape)
    r = _xp.reshape(a, tuple(d for s in sa for d in (s, 1))) * _xp.reshape(b, tuple(d for s in sb for d in (1, s)))
    return _xp.reshape(r, tuple(p * q for p, q in zip(sa, sb)))


# ---- sets, statistics, creation ----


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of `element` is in `test_elements` (NaN is in nothing); element's shape.
    `assume_unique` and `kind` choose NumPy's algorithm and give the same answer: taken, unused."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    e = _arr(element)
    t = _xp.reshape(_arr(test_elements, e), (-1,))
    dt = _xp._result_type(e, t)
    e, t = e.astype(dt), t.astype(dt)
    if t.size == 0:
        r = _xp.zeros(tuple(e.shape), dtype=_xp.bool, device=e.device)
    elif _xp._isdtype(dt, "complex floating"):  # no order: each against each
        r = _xp.any(_xp.expand_dims(e, axis=-1) == t, axis=-1)
    else:
        s = _xp.sort(t)
        i = _xp.clip(_xp.searchsorted(s, e), 0, t.size - 1)
        r = _xp.take(s, _xp.reshape(i, (-1,)), axis=0)
        r = _xp.reshape(r, tuple(e.shape)) == e
    return _xp.logical_not(r) if invert else r


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           sorted=True):  # noqa: A002  (NumPy's name)
    """The sorted distinct elements of the flattened array (NaNs as one when equal_nan), and optionally
    where each first occurs, the position of each element's value (in ar's shape) and the counts."""
    if axis is not None:
        raise ValueError("unique: axis= is not supported (only axis=None, the flattened array)")
    a = _arr(ar)
    values, index, inverse, counts = _xp._unique_all(_xp.reshape(a, (-1,)))  # sorted, each NaN its own
    if equal_nan and _RANK[_kind(values.dtype)] >= 3:
        k = int(_xp.sum(_xp.logical_not(_xp.isnan(values))))  # NaNs sort last
        if values.shape[0] - k > 1:
            index = _xp.concat([index[:k], _xp.min(index[k:], keepdims=True)])
            counts = _xp.concat([counts[:k], _xp.sum(counts[k:], keepdims=True)])
            values, inverse = values[: k + 1], _xp.minimum(inverse, k)
    extra = [x for x, want in ((index, return_index), (_xp.reshape(inverse, tuple(a.shape)), return_inverse),
                               (counts, return_counts)) if want]
    return (values, *extra) if extra else values


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """mean, or with `weights` sum(a * w) / sum(w) (weights of a's shape, or of a's shape along
    `axis`); returned=True gives (average, sum of weights)."""
    a = _arr(a)
    if isinstance(axis, int):
        axis = (axis,)
    if axis is not None:
        axis = tuple(_axis(ax, a.ndim) for ax in axis)
    if weights is None:
        avg = _xp.mean(a, axis=axis, keepdims=keepdims)
        scl = a.size / builtins.max(avg.size, 1)
    else:
        w = _arr(weights, a)
        if tuple(w.shape) != tuple(a.shape):
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if tuple(w.shape) != tuple(a.shape[ax] for ax in axis):
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            order = builtins.sorted(range(len(axis)), key=lambda i: axis[i])
            w = _xp.reshape(_xp.permute_dims(w, tuple(order)),
                            tuple(s if i in axis else 1 for i, s in enumerate(a.shape)))
        dt = _xp._result_type(a, w, *([_xp.float64] if _RANK[_kind(a.dtype)] < 3 else []))  # integers: float64
        scl = _xp.sum(w.astype(dt), axis=axis, keepdims=keepdims)
        if _xp.any(scl == 0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = _xp.sum(a.astype(dt) * w.astype(dt), axis=axis, keepdims=keepdims) / scl
    if not returned:
        return avg
    if isinstance(scl, _Array):
        return avg, _xp.asarray(_xp.broadcast_to(scl, tuple(avg.shape)), copy=True)
    return avg, _xp.full(tuple(avg.shape), scl, dtype=avg.dtype, device=avg.device)


def identity(n, dtype=None, *, device=None):
    """The n x n identity matrix (float64 by default)."""
    return _xp.eye(operator.index(n), dtype=_xp.float64 if dtype is None else dtype, device=device)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, *, device=None):
    """base ** linspace(start, stop, num, endpoint), then converted to dtype. start, stop and base are
    numbers (NumPy's arrays of them are a TypeError here)."""
    for name, v in (("start", start), ("stop", stop), ("base", base)):
        if not isinstance(v, numbers.Real) and getattr(v, "ndim", None) != 0:
            raise TypeError(f"logspace: {name} must be a real number (arrays of them are not supported)")
    if axis not in (0, -1):
        raise ValueError(f"logspace: axis {axis} is out of bounds for the 1-D result")
    y = _xp.pow(float(base), _xp.linspace(float(start), float(stop), operator.index(num), endpoint=endpoint,
                                          device=device))
    return y if dtype is None else y.astype(dtype)

from . import _signatures  # noqa: E402

_signatures.wrap(globals(), __all__)  # the extension's functions under NumPy's names: inspectable too
