"""NumPy's and CuPy's array methods on ``xp.Array`` (``a.sum()``, ``a.reshape(3, 2)``, ``a.get()``...).

The Array API's array object has operators and a few attributes only; code written for NumPy or
CuPy calls methods. Each method here is the namespace's function under NumPy's signature (axis
first, ``keepdims``, ``ddof``), with NumPy's defaults where they differ from the standard's:
``diagonal`` and ``trace`` over the first two axes, ``cumsum``, ``take`` and ``repeat`` of a flat
array when no axis is given, ``transpose()`` reversing the axes. ``fill`` and ``sort`` write in
place, as NumPy's do. Results are xp arrays on the array's device, as the functions' are.
"""

import operator as _operator

from . import _xp

_Array = _xp.Array
_reshape = _Array.reshape
_item = _Array.item


def _linalg():
    from . import linalg

    return linalg


def _axes_tuple(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _reshape_method(self, *shape, copy=None):
    shape = _axes_tuple(shape)
    if len(shape) == 1:
        shape = shape[0] if not isinstance(shape[0], (tuple, list)) else tuple(shape[0])
    if copy is None:
        return _reshape(self, shape)
    return _xp.reshape(self, shape if isinstance(shape, tuple) else (shape,), copy=copy)


def _item_method(self, *args):
    if not args:
        return _item(self)
    if len(args) == 1 and not isinstance(args[0], tuple):  # a flat index, as NumPy's item(i)
        return _item(_xp.reshape(self, (-1,))[args[0]])
    return _item(self[args[0] if len(args) == 1 else tuple(args)])


def _flat(self, axis):
    return (_xp.reshape(self, (-1,)), 0) if axis is None else (self, axis)


def _to_out(result, out):
    """NumPy's out=: the result written into `out` (an xp array), which is returned."""
    if out is None:
        return result
    if isinstance(out, tuple):  # NumPy's functions pass out as a tuple of one
        (out,) = out
    _xp.copyto(out, result)
    return out


def _in(self, dtype):  # mean, std, var: NumPy computes in dtype= when one is given
    return self if dtype is None else self.astype(dtype)


# NumPy's signatures, out= among them: numpy.sum(x), numpy.mean(x) and the like call these methods
# with the keywords they take.
def _sum(self, axis=None, dtype=None, out=None, keepdims=False):
    return _to_out(_xp.sum(self, axis=axis, dtype=dtype, keepdims=keepdims), out)


def _prod(self, axis=None, dtype=None, out=None, keepdims=False):
    return _to_out(_xp.prod(self, axis=axis, dtype=dtype, keepdims=keepdims), out)


def _mean(self, axis=None, dtype=None, out=None, keepdims=False):
    if dtype is not None and self.size > 0:
        d = _xp.empty(0, dtype=dtype).dtype  # xp's dtype object for whatever names one
        if _xp._isdtype(d, "integral"):
            # NumPy: the sum in that integer dtype (wrapping as it does), divided, then converted
            # back to it (toward zero): mean([1, 2, 4], dtype=int64) is int64 2.
            s = _xp.sum(self, axis=axis, dtype=d, keepdims=keepdims)
            return _to_out((s / (self.size // max(s.size, 1))).astype(d), out)
    return _to_out(_xp.mean(_in(self, dtype), axis=axis, keepdims=keepdims), out)


def _std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _to_out(_xp.std(_in(self, dtype), axis=axis, correction=ddof, keepdims=keepdims), out)


def _var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _to_out(_xp.var(_in(self, dtype), axis=axis, correction=ddof, keepdims=keepdims), out)


def _axis_keepdims(fn):  # min, max, argmin, argmax, any, all: the function as is
    def method(self, axis=None, out=None, keepdims=False):
        return _to_out(fn(self, axis=axis, keepdims=keepdims), out)

    return method


def _cumsum(self, axis=None, dtype=None, out=None):
    x, ax = _flat(self, axis)
    return _to_out(_xp.cumulative_sum(x, axis=ax, dtype=dtype), out)


def _cumprod(self, axis=None, dtype=None, out=None):
    x, ax = _flat(self, axis)
    return _to_out(_xp.cumulative_prod(x, axis=ax, dtype=dtype), out)


def _round(self, decimals=0):
    decimals = _operator.index(decimals)
    if self.dtype in (_xp.complex64, _xp.complex128):  # each part on its own, as NumPy
        return _round(_xp.real(self), decimals) + 1j * _round(_xp.imag(self), decimals)
    if decimals == 0:
        return _xp.round(self)
    if self.dtype not in (_xp.float16, _xp.bfloat16, _xp.float32, _xp.float64):
        if decimals > 0 or self.dtype == _xp.bool:
            return _xp.asarray(self, copy=True)
        # Integers to a multiple of 10**-decimals, half to even, as NumPy: exact integer steps.
        if -decimals >= 20:
            return _xp.zeros_like(self)
        q = 10**-decimals
        if q > _xp._iinfo(self.dtype)[1]:
            return _xp.zeros_like(self)
        w = self.astype(_xp.uint64 if self.dtype == _xp.uint64 else _xp.int64)  # no overflow in the steps
        r = _xp.remainder(w, q)  # floor remainder: 0 <= r < q
        base = w - r
        up = (r > q - r) | ((r == q - r) & (_xp.remainder(_xp.floor_divide(base, q), 2) == 1))
        return _xp.where(up, base + q, base).astype(self.dtype)  # wrapping as NumPy's result does
    # NumPy's steps: scale by a power of ten, round half to even, scale back.
    if decimals > 0:
        return _xp.round(self * 10.0**decimals) / 10.0**decimals
    return _xp.round(self / 10.0**-decimals) * 10.0**-decimals


def _clip(self, min=None, max=None):  # noqa: A002  (NumPy's names)
    return _xp.clip(self, min, max)


def _ravel(self):
    return _xp.reshape(self, (-1,))


def _flatten(self):
    return _xp.reshape(self, (-1,), copy=True)


def _transpose(self, *axes):
    axes = _axes_tuple(axes)
    if not axes or axes == (None,):
        axes = tuple(reversed(range(self.ndim)))
    return _xp.permute_dims(self, axes)


def _swapaxes(self, axis1, axis2):
    for a in (axis1, axis2):
        if not -self.ndim <= a < max(self.ndim, 1):
            raise _xp.ValueError(f"swapaxes: axis {a} is out of bounds for array of dimension {self.ndim}")
    axes = list(range(self.ndim))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return _xp.permute_dims(self, tuple(axes))


def _squeeze(self, axis=None):
    if axis is None:
        axis = tuple(i for i, n in enumerate(self.shape) if n == 1)
    return _xp.squeeze(self, axis)


def _last_two(self, axis1, axis2):
    n = self.ndim
    a, b = axis1 % n, axis2 % n
    if a == b:
        raise ValueError("axis1 and axis2 cannot be the same")
    rest = [i for i in range(n) if i not in (a, b)]
    return _xp.permute_dims(self, tuple(rest + [a, b]))


def _need_two_axes(self, what):
    if self.ndim < 2:  # NumPy's ValueError (it was a ZeroDivisionError for 0-d arrays)
        raise ValueError(f"{what} requires an array of at least two dimensions, got {self.ndim}")


def _diagonal(self, offset=0, axis1=0, axis2=1):
    _need_two_axes(self, "diagonal")
    return _linalg().diagonal(_last_two(self, axis1, axis2), offset=offset)


def _trace(self, offset=0, axis1=0, axis2=1, dtype=None):
    _need_two_axes(self, "trace")
    return _linalg().trace(_last_two(self, axis1, axis2), offset=offset, dtype=dtype)


def _repeat(self, repeats, axis=None):
    x, ax = _flat(self, axis)
    if not isinstance(repeats, _Array):
        repeats = _operator.index(repeats) if not isinstance(repeats, (list, tuple)) else _xp.asarray(
            repeats, dtype=_xp.int64, device=self.device)
    return _xp.repeat(x, repeats, axis=ax)


def _take(self, indices, axis=None):
    x, ax = _flat(self, axis)
    if not isinstance(indices, _Array):
        indices = _xp.asarray(indices, device=self.device)
        if indices.size == 0:  # [] holds no integers, but indexes nothing
            indices = indices.astype(_xp.int64)
    return _xp.take(x, indices, axis=ax)


def _dot(self, b):
    if not isinstance(b, _Array):
        b = _xp.asarray(b, device=self.device)
    if self.ndim == 0 or b.ndim == 0:
        return self * b
    if self.ndim <= 2 and b.ndim <= 2:
        return _xp.matmul(self, b)
    # NumPy's dot of N-d arrays: the last axis of a against the second-to-last of b.
    return _xp.tensordot(self, b, axes=([-1], [-2 if b.ndim > 1 else 0]))


def _nonzero(self):
    return _xp.nonzero(self)


_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_kind(kind, order):
    # xp's sorts are stable whatever the kind (NumPy's kinds give the same order for a stable one).
    if kind not in _KINDS:
        raise ValueError(f"sort kind must be one of 'quicksort', 'heapsort', 'mergesort' or 'stable', got {kind!r}")
    if order is not None:
        raise ValueError("xp arrays have no fields: order= must be None")


def _argsort(self, axis=-1, kind=None, order=None, *, stable=None):
    _check_kind(kind, order)
    if axis is None or self.ndim == 0:  # NumPy's: of the flattened array
        return _xp.argsort(_xp.reshape(self, (-1,)), axis=-1)
    return _xp.argsort(self, axis=axis)


def _sort(self, axis=-1, kind=None, order=None, *, stable=None):
    _check_kind(kind, order)
    self[...] = _xp.sort(self, axis=axis)


_astype_core = _Array.astype


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    # NumPy's signature: copy=False gives the array itself when no conversion is needed.
    if casting != "unsafe":
        raise ValueError("xp: astype converts as casting='unsafe' only (the standard's astype); use can_cast to check")
    if not copy:
        r = _xp.astype(self, dtype, copy=False)
        return self if r.dtype == self.dtype else r
    return _astype_core(self, dtype)


def _fill(self, value):
    # NumPy's: one value, converted to the array's dtype as NumPy converts a Python number there: into
    # an integer dtype, int(value) (2.7: 2), an OverflowError out of the dtype's range, a ValueError
    # for NaN; a complex number into a real dtype is a TypeError.
    if not isinstance(value, _Array) and self.dtype != _xp.bool:
        kind = "c" if isinstance(value, complex) else "f" if isinstance(value, float) else getattr(
            getattr(value, "dtype", None), "kind", "")  # Python numbers, then NumPy scalars
        if kind == "c" and not _xp._isdtype(self.dtype, "complex floating"):
            raise TypeError("fill: a complex value into " + str(self.dtype) + " (a real dtype)")
        if _xp._isdtype(self.dtype, "integral") and not isinstance(value, bool):
            if kind == "f":
                f = float(value)
                if f != f:
                    raise ValueError("fill: cannot convert float NaN to integer")
                value = int(f)  # OverflowError for inf, as int() raises
            else:
                value = _operator.index(value)
            _, hi, lo = _xp._iinfo(self.dtype)  # (bits, max, min)
            if not lo <= value <= hi:
                raise OverflowError(f"Python integer {value} out of bounds for {self.dtype}")
    v = value if isinstance(value, _Array) else _xp.asarray(value, device=self.device)
    if v.ndim != 0:
        raise ValueError("fill: the value must be a scalar (a 0-d array), not an array of shape " + str(v.shape))
    self[...] = v.astype(self.dtype)


def _tolist(self):
    from ._interop import to_cpu

    return to_cpu(self).tolist()


def _get(self, stream=None):  # CuPy's: the array in host memory, as a NumPy array
    from ._interop import to_cpu

    return to_cpu(self)


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    for i in range(self.shape[0]):
        yield self[i]


def _divmod(self, other):
    return _xp.floor_divide(self, other), _xp.remainder(self, other)


def _rdivmod(self, other):  # a Python number stays weak, as in NumPy 2
    return _xp.floor_divide(other, self), _xp.remainder(other, self)


def _contains(self, value):  # value in x: (x == value).any(), as NumPy
    return bool(_xp.any(self == value))


def _copy(self):  # copy.copy(x): a new array, as ndarray.__copy__
    return self.copy()


def _deepcopy(self, memo=None):  # copy.deepcopy(x), also of containers holding arrays
    return self.copy()


def _rebuild(data, device, dtype=None):  # pickle's loader: the values on the saved device
    x = _xp.asarray(data, device=device)
    return x if dtype is None else x.astype(getattr(_xp, dtype))


def _reduce(self):  # pickle.dumps(x): the values as a NumPy array (a copy), and the device's name
    import numpy

    from ._interop import to_cpu

    if self.dtype == _xp.bfloat16:  # NumPy has no bfloat16 of its own: float32 holds each value exactly
        return _rebuild, (numpy.array(to_cpu(self.astype(_xp.float32)), copy=True), str(self.device), "bfloat16")
    return _rebuild, (numpy.array(to_cpu(self), copy=True), str(self.device))


def _format(self, spec):  # f"{x:.2f}": a 0-d array formats as its Python number, as NumPy's
    if not spec:
        return str(self)
    if self.ndim == 0:
        return format(self.item(), spec)
    raise TypeError("unsupported format string passed to xp.Array.__format__")


_METHODS = {
    "reshape": _reshape_method,
    "item": _item_method,
    "sum": _sum,
    "prod": _prod,
    "mean": _mean,
    "std": _std,
    "var": _var,
    "min": _axis_keepdims(_xp.min),
    "max": _axis_keepdims(_xp.max),
    "argmin": _axis_keepdims(_xp.argmin),
    "argmax": _axis_keepdims(_xp.argmax),
    "any": _axis_keepdims(_xp.any),
    "all": _axis_keepdims(_xp.all),
    "cumsum": _cumsum,
    "cumprod": _cumprod,
    "round": _round,
    "clip": _clip,
    "ravel": _ravel,
    "flatten": _flatten,
    "transpose": _transpose,
    "swapaxes": _swapaxes,
    "squeeze": _squeeze,
    "diagonal": _diagonal,
    "trace": _trace,
    "repeat": _repeat,
    "take": _take,
    "dot": _dot,
    "nonzero": _nonzero,
    "argsort": _argsort,
    "sort": _sort,
    "fill": _fill,
    "tolist": _tolist,
    "get": _get,
    "astype": _astype,
    "__iter__": _iter,
    "__divmod__": _divmod,
    "__rdivmod__": _rdivmod,
    "__contains__": _contains,
    "__copy__": _copy,
    "__deepcopy__": _deepcopy,
    "__reduce__": _reduce,
    "__format__": _format,
}

# The standard's methods whose keyword-only parameters inspect.signature must see (a nanobind method
# shows none of them): Python functions over the extension's, with the standard's signatures.
_array_namespace = _Array.__array_namespace__
_dlpack = _Array.__dlpack__
_to_device = _Array.to_device


def _array_namespace_method(self, /, *, api_version=None):
    return _array_namespace(self, api_version=api_version)


def _dlpack_method(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    return _dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


def _to_device_method(self, device, /, *, stream=None):
    return _to_device(self, device, stream=stream)


for _name, _fn, _doc in (("__array_namespace__", _array_namespace_method, _array_namespace.__doc__),
                         ("__dlpack__", _dlpack_method, _dlpack.__doc__),
                         ("to_device", _to_device_method, _to_device.__doc__)):
    _fn.__doc__ = _doc
    _METHODS[_name] = _fn

for _name, _fn in _METHODS.items():
    _fn.__name__ = _name
    _fn.__qualname__ = "Array." + _name
    setattr(_Array, _name, _fn)
