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

_SIGNED = (_xp.int8, _xp.int16, _xp.int32, _xp.int64)
_UNSIGNED = (_xp.uint8, _xp.uint16, _xp.uint32, _xp.uint64)
_REAL_FLOATING = (_xp.float32, _xp.float64)  # float16 and bfloat16 are xp's own, beyond the standard
_FLOATING = (_xp.float16, _xp.bfloat16, _xp.float32, _xp.float64)


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


_FINFO = {
    "float16": (16, 2.0**-10, 65504.0, 2.0**-14),
    "bfloat16": (16, 2.0**-7, 3.3895313892515355e38, 2.0**-126),
    "float32": (32, 2.0**-23, 3.4028234663852886e38, 2.0**-126),
    "float64": (64, 2.0**-52, 1.7976931348623157e308, 2.0**-1022),
}


def _dtype_of(x):
    if isinstance(x, _xp.DType):
        return x
    if isinstance(x, _xp.Array):
        return x.dtype
    raise TypeError(f"expected an xp dtype or array, got {x!r}")


def finfo(type, /):
    t = _dtype_of(type)
    if t.name not in _FINFO:
        raise ValueError(f"finfo: {t.name} is not a floating dtype")
    bits, eps, mx, tiny = _FINFO[t.name]
    return finfo_object(bits, eps, mx, -mx, tiny, t)


def iinfo(type, /):
    t = _dtype_of(type)
    bits = t.itemsize * 8
    if t in _SIGNED:
        return iinfo_object(bits, 2 ** (bits - 1) - 1, -(2 ** (bits - 1)), t)
    if t in _UNSIGNED:
        return iinfo_object(bits, 2**bits - 1, 0, t)
    raise ValueError(f"iinfo: {t.name} is not an integer dtype")


_KINDS = {
    "bool": lambda t: t == _xp.bool,
    "signed integer": lambda t: t in _SIGNED,
    "unsigned integer": lambda t: t in _UNSIGNED,
    "integral": lambda t: t in _SIGNED or t in _UNSIGNED,
    "real floating": lambda t: t in _FLOATING,
    "complex floating": lambda t: False,
    "numeric": lambda t: t != _xp.bool,
}


def isdtype(dtype, kind):
    if not isinstance(dtype, _xp.DType):
        raise TypeError(f"isdtype: expected an xp dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, _xp.DType):
        return dtype == kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}")
        return _KINDS[kind](dtype)
    raise TypeError(f"isdtype: kind must be a dtype, a string or a tuple, got {kind!r}")


def result_type(*arrays_and_dtypes):
    """The dtype the core's promotion gives (NumPy 2's rules; Python scalars are weak)."""
    if not arrays_and_dtypes:
        raise ValueError("result_type needs at least one array or dtype")
    typed = [a for a in arrays_and_dtypes if isinstance(a, (_xp.DType, _xp.Array))]
    scalars = [a for a in arrays_and_dtypes if not isinstance(a, (_xp.DType, _xp.Array))]
    if not typed:
        raise TypeError("result_type needs at least one array or dtype beside Python scalars")
    out = _dtype_of(typed[0])
    for a in typed[1:]:
        out = _xp._result_type2(out, _dtype_of(a))
    for s in scalars:
        out = _xp._result_type2(out, s)
    return out


def can_cast(from_, to, /):
    """Whether from_ converts to `to` under the standard's promotion (safe casting)."""
    f = _dtype_of(from_)
    if not isinstance(to, _xp.DType):
        raise TypeError(f"can_cast: expected an xp dtype, got {to!r}")
    try:
        return _xp._result_type2(f, to) == to
    except Exception:
        return False


class _Info:
    """What ``__array_namespace_info__()`` returns: capabilities, devices and dtypes."""

    def capabilities(self):
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}

    def default_device(self):
        return _xp.default_device()

    def devices(self):
        return _xp.devices()

    def default_dtypes(self, *, device=None):
        return {"real floating": _xp.float64, "complex floating": None, "integral": _xp.int64, "indexing": _xp.int64}

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
        }
        if kind is None:
            return every
        return {n: t for n, t in every.items() if isdtype(t, kind)}


def __array_namespace_info__():
    return _Info()
