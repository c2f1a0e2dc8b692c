"""The Array API namespace's constants, dtype functions and inspection (``__array_namespace_info__``)."""

import builtins
import math

from . import _xp

__array_api_version__ = "2024.12"

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None


def clip(x, /, min=None, max=None, *, out=None):  # noqa: A002  (the standard's names)
    """Clamps each element of ``x`` to ``[min, max]``; a bound left ``None`` does not apply.

    A Python function over the extension's ``clip`` so that ``inspect.signature`` reads the
    standard's signature (``x`` positional, ``min`` and ``max`` by position or keyword).
    """
    return _xp.clip(x, min, max, out=out)


class finfo_object:
    def __init__(self, bits, eps, max, min, smallest_normal, dtype):
        self.bits, self.eps, self.max, self.min = bits, eps, max, min
        self.smallest_normal, self.dtype = smallest_normal, dtype

    def __repr__(self):
        return f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, dtype={self.dtype})"


class iinfo_object:
    def __init__(self, bits, max, min, dtype):
        self.bits, self.max, self.min, self.dtype = bits, max, min, dtype

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


def _dtype_of(x):
    if isinstance(x, _xp.DType):
        return x
    if isinstance(x, _xp.Array):
        return x.dtype
    raise TypeError(f"expected an xp dtype or array, got {x!r}")


def finfo(type, /):
    """The core's xp::finfo (a ValueError for a dtype that is not floating)."""
    t = _dtype_of(type)
    bits, eps, mx, mn, tiny = _xp._finfo(t)
    # A complex dtype's facts are its parts' (the standard: finfo(complex64).dtype is float32).
    t = {_xp.complex64: _xp.float32, _xp.complex128: _xp.float64}.get(t, t)
    return finfo_object(bits, eps, mx, mn, tiny, t)


def iinfo(type, /):
    """The core's xp::iinfo (a ValueError for a dtype that is not an integer)."""
    t = _dtype_of(type)
    bits, mx, mn = _xp._iinfo(t)
    return iinfo_object(bits, mx, mn, t)


def isdtype(dtype, kind):
    if not isinstance(dtype, _xp.DType):
        raise TypeError(f"isdtype: expected an xp dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, _xp.DType):
        return dtype == kind
    if isinstance(kind, str):
        return _xp._isdtype(dtype, kind)  # the core's xp::isdtype: a ValueError for an unknown kind
    raise TypeError(f"isdtype: kind must be a dtype, a string or a tuple, got {kind!r}")


def result_type(*arrays_and_dtypes):
    """The dtype the core's promotion gives (xp::result_type: NumPy 2's rules, every array and dtype
    promoted at once as np.result_type does; Python scalars are weak)."""
    return _xp._result_type(*arrays_and_dtypes)


def can_cast(from_, to, /):
    """Whether from_ converts to `to` under the standard's promotion (safe casting)."""
    f = _dtype_of(from_)
    if not isinstance(to, _xp.DType):
        raise TypeError(f"can_cast: expected an xp dtype, got {to!r}")
    return _xp._can_cast(f, to)


class _Info:
    """What ``__array_namespace_info__()`` returns: capabilities, devices and dtypes."""

    def capabilities(self):
        # Both are there: a[mask] and a[mask] = v, nonzero, unique_*, and the like.
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return _xp.default_device()

    def devices(self):
        return _xp.devices()

    def default_dtypes(self, *, device=None):
        return {
            "real floating": _xp.float64,
            "complex floating": _xp.complex128,
            "integral": _xp.int64,
            "indexing": _xp.int64,
        }

    def dtypes(self, *, device=None, kind=None):
        every = {
            "bool": _xp.bool,
            "int8": _xp.int8,
            "int16": _xp.int16,
            "int32": _xp.int32,
            "int64": _xp.int64,
            "uint8": _xp.uint8,
            "uint16": _xp.uint16,
            "uint32": _xp.uint32,
            "uint64": _xp.uint64,
            "float32": _xp.float32,
            "float64": _xp.float64,
            "complex64": _xp.complex64,
            "complex128": _xp.complex128,
        }
        if kind is None:
            return every
        return {n: t for n, t in every.items() if isdtype(t, kind)}


def __array_namespace_info__():
    return _Info()
