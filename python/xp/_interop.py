"""Moving arrays to NumPy: ``to_cpu``/``asnumpy`` and ``Array.__array__`` (NumPy is imported only here)."""

from . import _xp


def _numpy_of(x):
    """A NumPy array of x's values: a view of a CPU array's memory, a copy of a GPU array's."""
    import numpy as np

    if x.device.kind != "cpu":
        x = x.to_device("cpu")
    if x.dtype == _xp.bfloat16:
        import ml_dtypes  # NumPy has no bfloat16: ml_dtypes' type, over the same bits

        return np.asarray(x.astype(_xp.float32)).astype(ml_dtypes.bfloat16)
    return np.asarray(memoryview(x))


def to_cpu(x, /):
    """x as a NumPy array (a view of a CPU array's memory, a copy of a GPU array's); other objects pass
    through numpy.asarray."""
    import numpy as np

    if isinstance(x, _xp.Array):
        return _numpy_of(x)
    return np.asarray(x)


asnumpy = to_cpu


def _array(self, dtype=None, copy=None):
    a = _numpy_of(self)
    if copy is False and self.device.kind != "cpu":
        raise ValueError("xp: __array__(copy=False) cannot give a GPU array's values without a copy")
    if dtype is not None and a.dtype != dtype:
        if copy is False:
            raise ValueError("xp: __array__(copy=False) with another dtype needs a copy")
        return a.astype(dtype)
    if copy:
        return a.copy()
    return a


_xp.Array.__array__ = _array
