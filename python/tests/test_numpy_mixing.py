"""NumPy scalars and arrays beside xp arrays: NumPy's scalars keep their dtype (NEP 50: they are not
weak, as Python's numbers are), on the xp array's device, and a mixed operation gives an xp array
whichever side NumPy's object is on."""

import numpy as np
import pytest

import xp
import xp.testing


def same(got, want):
    assert isinstance(got, xp.Array), type(got)
    g = xp.to_cpu(got)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    np.testing.assert_array_equal(g, want)


SCALARS = [np.float32(2.5), np.float64(1.1), np.float16(3), np.int8(-3), np.int16(300), np.int64(7), np.uint8(200),
           np.uint64(2**63 + 1), np.bool_(True), np.complex64(1 - 2j), np.complex128(0.5j)]


@pytest.mark.parametrize("s", SCALARS, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("t", [np.float32, np.int8, np.uint16, np.float64])
def test_numpy_scalars_keep_their_dtype_on_either_side(s, t):
    a = np.array([1, 2, 3], t)
    x = xp.asarray(a)
    with np.errstate(all="ignore"):
        same(x + s, a + s)
        same(s + x, s + a)
        same(x * s, a * s)
        same(s * x, s * a)
        same(x == s, a == s)
        if not np.iscomplexobj(s):
            same(s < x, s < a)


def test_numpy_float64_and_complex128_are_not_weak_python_numbers():
    # Both subclass Python's float and complex: they used to be taken as weak scalars.
    x = xp.asarray(np.array([1.5], np.float32))
    assert (x * np.float64(1.1)).dtype == xp.float64
    assert (x * 1.1).dtype == xp.float32  # a Python float stays weak
    assert (x * np.complex128(1j)).dtype == xp.complex128
    assert (x * 1j).dtype == xp.complex64
    h = xp.asarray(np.array([1], np.float16))
    same(h + np.float64(1e6), np.array([1], np.float16) + np.float64(1e6))  # 1000001.0, not inf
    same(xp.add(x, np.float64(1)), np.add(np.array([1.5], np.float32), np.float64(1)))
    same(xp.where(x > 0, np.float32(1), 0), np.where(np.array([True]), np.float32(1), 0))
    same(xp.maximum(np.int16(3), xp.asarray(np.array([1, 5], np.int8))), np.array([3, 5], np.int16))


def test_numpy_arrays_beside_xp_arrays_give_xp_arrays():
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, 4.0, -1.0], np.float32)
    x = xp.asarray(a)
    same(x + b, a + b)
    same(b + x, b + a)
    same(b * x, b * a)
    same(b == x, b == a)
    same(b @ x, np.asarray(b @ a))
    # NumPy's ufuncs still take a CPU array through its buffer: a NumPy result.
    assert isinstance(np.sin(x), np.ndarray)
    np.testing.assert_array_equal(np.sin(x), np.sin(a))


def test_numpy_scalars_in_setitem_and_clip():
    x = xp.asarray(np.zeros(3, np.float32))
    x[1] = np.float64(2.5)
    same(x, np.array([0, 2.5, 0], np.float32))
    same(xp.clip(x, np.float32(1), None), np.clip(np.array([0, 2.5, 0], np.float32), np.float32(1), None))


@pytest.mark.parametrize("lo,hi", [(1, None), (True, None), (5, None), (None, 0), (None, False), (1.5, None),
                                   (None, -2), (False, True)])
def test_clip_of_bool_with_one_bound(lo, hi):
    b = np.array([False, True])
    same(xp.clip(xp.asarray(b), lo, hi), np.clip(b, lo, hi))


def test_clip_of_integers_with_one_bound():
    for t in (np.int8, np.int64, np.uint8, np.uint64):
        a = np.array([0, 3, np.iinfo(t).max], t)
        same(xp.clip(xp.asarray(a), 2, None), np.clip(a, 2, None))
        same(xp.clip(xp.asarray(a), None, 2), np.clip(a, None, 2))


def test_numpy_scalars_go_to_the_arrays_device():
    xp.testing.requires_gpu()
    x = xp.asarray(np.array([1.0, 2.0], np.float32), device="cuda:0")
    for r in (x * np.float32(2), np.float64(2) * x, xp.add(x, np.int64(1)), xp.where(x > 1, np.float32(0), x)):
        assert r.device == x.device
    x[0] = np.float64(5)
    same(x, np.array([5, 2], np.float32))
    # A NumPy array is on the CPU: beside a GPU array, a device mismatch (xp copies nothing silently).
    with pytest.raises(xp.DeviceMismatch):
        x + np.ones(2, np.float32)


@pytest.mark.parametrize("f", [np.sum, np.prod, np.mean, np.std, np.var, np.max, np.min, np.argmax, np.argmin, np.any,
                               np.all, np.cumsum, np.cumprod])
def test_numpy_functions_call_the_methods(f):
    # numpy.sum(x) and the like call x.sum(axis=, dtype=, out=, ...): the methods take NumPy's
    # keywords, so these give xp arrays with NumPy's values.
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])
    x = xp.asarray(a)
    for kw in ({}, {"axis": 1}, {"axis": 0, "keepdims": True}):
        if f in (np.cumsum, np.cumprod) and "keepdims" in kw:
            continue
        r = f(x, **kw)
        assert isinstance(r, xp.Array)
        np.testing.assert_allclose(xp.to_cpu(r), f(a, **kw), rtol=1e-12)
    # on x's device (the CPU: x came from NumPy), as out= must be
    o = xp.zeros(2, dtype=xp.int64 if f in (np.argmax, np.argmin) else None, device=x.device)
    if f not in (np.cumsum, np.cumprod, np.any, np.all):
        assert f(x, axis=1, out=o) is o
        np.testing.assert_allclose(xp.to_cpu(o), f(a, axis=1), rtol=1e-12)
    if f in (np.mean, np.std, np.var):
        assert f(x, dtype=np.float32).dtype == xp.float32


def test_clip_has_the_standards_signature():
    import inspect

    p = inspect.signature(xp.clip).parameters
    assert [(n, v.kind, v.default) for n, v in p.items()][:3] == [
        ("x", inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.empty),
        ("min", inspect.Parameter.POSITIONAL_OR_KEYWORD, None),
        ("max", inspect.Parameter.POSITIONAL_OR_KEYWORD, None),
    ]
    a = np.array([0.5, 3.0, 9.0])
    same(xp.clip(xp.asarray(a), min=1, max=4), np.clip(a, min=1, max=4))
    same(xp.clip(xp.asarray(a), max=4), np.clip(a, None, 4))
    out = xp.zeros_like(xp.asarray(a))
    assert xp.clip(xp.asarray(a), 1, 4, out=out) is out
    same(out, np.clip(a, 1, 4))


def test_permute_dims_takes_one_int_for_one_axis_as_numpy():
    a = np.arange(4.0)
    same(xp.permute_dims(xp.asarray(a), 0), np.permute_dims(a, 0))
    with pytest.raises(TypeError, match="permute_dims: expected an int or a tuple of ints"):
        xp.permute_dims(xp.asarray(a), 1.5)
    with pytest.raises(ValueError):
        xp.permute_dims(xp.asarray(np.ones((2, 3))), 0)
