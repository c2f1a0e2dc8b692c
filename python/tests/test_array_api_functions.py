"""The Array API 2024.12 functions of the core, bound in Python, against NumPy 2."""

import math

import numpy as np
import pytest

import xp

FLOATS = ["float32", "float64"]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e30, -1e30, np.inf, -np.inf, np.nan, 1e-40, 3.0, -7.5]


def np_of(a):
    return np.asarray(xp.asnumpy(a))


def same(got, want):
    """Exactly NumPy's values and dtype (NaN as a class)."""
    g = np_of(got)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    assert g.shape == want.shape
    np.testing.assert_array_equal(g, want)


def close(got, want, ulp):
    g = np_of(got)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    np.testing.assert_array_max_ulp(g, want, maxulp=ulp)


def pairs(dt):
    v = np.array(SPECIAL, dtype=dt)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.ravel(), b.ravel()


# ---- elementwise ----

@pytest.mark.parametrize("dt", FLOATS + ["float16", "int8", "uint16", "int32", "bool"])
def test_exact_elementwise_functions_as_numpy(dt):
    with np.errstate(all="ignore"):
        a, b = pairs("float64")
        a, b = a.astype(dt), b.astype(dt)
        xa, xb = xp.asarray(a), xp.asarray(b)
        same(xp.copysign(xa, xb), np.copysign(a, b))
        same(xp.nextafter(xa, xb), np.nextafter(a, b))
        same(xp.signbit(xa), np.signbit(a))
        want = np.divide(1, a if a.dtype.kind == "f" else a.astype(np.sqrt(np.zeros((), a.dtype)).dtype))
        same(xp.reciprocal(xa), want)


def test_keyword_names_and_scalars():
    a = xp.asarray([1.0, -2.0], dtype=xp.float32)
    same(xp.copysign(x1=a, x2=-1.0), np.array([-1.0, -2.0], np.float32))
    same(xp.hypot(a, 2), np.hypot(np.array([1.0, -2.0], np.float32), 2))
    out = xp.empty((2,), dtype=xp.float32)
    xp.nextafter(a, 0.0, out=out)
    same(out, np.nextafter(np.array([1.0, -2.0], np.float32), np.float32(0)))
    with pytest.raises(TypeError):
        xp.copysign(1.0, 2.0)


@pytest.mark.parametrize("dt", FLOATS)
def test_transcendental_functions_within_their_bound(dt):
    rng = np.random.default_rng(5)
    with np.errstate(all="ignore"):
        x = np.concatenate([np.array(SPECIAL), rng.normal(0, 20, 500), rng.uniform(-1, 1, 500)]).astype(dt)
        y = np.concatenate([np.array(SPECIAL[::-1]), rng.normal(0, 20, 500), rng.uniform(-3, 3, 500)]).astype(dt)
        up = np.longdouble if dt == "float64" else np.float64
        for name, ref in [("acosh", np.arccosh), ("asinh", np.arcsinh), ("atanh", np.arctanh)]:
            want = ref(x.astype(up)).astype(dt)
            close(getattr(xp, name)(xp.asarray(x)), want, 4)
        close(xp.hypot(xp.asarray(x), xp.asarray(y)), np.hypot(x.astype(up), y.astype(up)).astype(dt), 4)
        # logaddexp: 2 ulp of the result plus 8 ulp of ln 2 (its terms' error is absolute).
        got = np_of(xp.logaddexp(xp.asarray(x), xp.asarray(y))).astype(np.float64)
        want = np.logaddexp(x.astype(up), y.astype(up)).astype(np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        fin = np.isfinite(want)
        assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
        eps = np.finfo(dt).eps
        assert np.all(np.abs(got[fin] - want[fin]) <= 2 * eps * np.abs(want[fin]) + 8 * eps * math.log(2))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_elementwise_dtypes_as_numpy():
    for dt in ["int8", "uint8", "int16", "int64", "bool", "float16"]:
        a = np.ones(3, dt)
        for name, ref in [("acosh", np.arccosh), ("asinh", np.arcsinh), ("atanh", np.arctanh)]:
            assert np_of(getattr(xp, name)(xp.asarray(a))).dtype == ref(a).dtype
        for name, ref in [("hypot", np.hypot), ("copysign", np.copysign), ("nextafter", np.nextafter),
                          ("logaddexp", np.logaddexp)]:
            assert np_of(getattr(xp, name)(xp.asarray(a), xp.asarray(a))).dtype == ref(a, a).dtype, (name, dt)


# ---- creation ----

@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    a, b, c = np.arange(3), np.arange(4.0), np.array([1, 2], np.int8)
    got = xp.meshgrid(xp.asarray(a), xp.asarray(b), xp.asarray(c), indexing=indexing)
    want = np.meshgrid(a, b, c, indexing=indexing)
    assert isinstance(got, list) and len(got) == 3
    for g, w in zip(got, want):
        same(g, w)
    assert xp.meshgrid() == []
    with pytest.raises(ValueError):
        xp.meshgrid(xp.asarray(a), indexing="xx")


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3, 10**30])
def test_tril_triu(k):
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    kk = max(min(k, 100), -100)
    same(xp.tril(xp.asarray(x), k=k), np.tril(x, kk))
    same(xp.triu(xp.asarray(x), k=k), np.triu(x, kk))
    same(xp.tril(xp.asarray(x[:, ::-1, ::2]), k=k), np.tril(x[:, ::-1, ::2], kk))
    with pytest.raises(ValueError):
        xp.tril(xp.asarray([1, 2]))


# ---- data types ----

ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
       "float64"]


def test_dtype_functions_as_numpy():
    for f in ALL:
        for t in ALL:
            assert xp.can_cast(getattr(xp, f), getattr(xp, t)) == np.can_cast(f, t), (f, t)
    for t in ["float16", "float32", "float64"]:
        fi, ni = xp.finfo(getattr(xp, t)), np.finfo(t)
        assert (fi.bits, fi.eps, fi.max, fi.min, fi.smallest_normal) == (
            ni.bits, float(ni.eps), float(ni.max), float(ni.min), float(ni.smallest_normal))
        assert fi.dtype == getattr(xp, t)
    assert xp.finfo(xp.asarray([1.0], dtype=xp.float32)).bits == 32
    for t in ALL[1:9]:
        ii, ni = xp.iinfo(getattr(xp, t)), np.iinfo(t)
        assert (ii.bits, ii.max, ii.min) == (ni.bits, int(ni.max), int(ni.min))
    with pytest.raises(ValueError):
        xp.finfo(xp.int8)
    with pytest.raises(ValueError):
        xp.iinfo(xp.float32)
    with pytest.raises(TypeError):
        xp.finfo("float32")


def test_isdtype():
    kinds = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu", "real floating": "f",
             "numeric": "iuf", "complex floating": "c"}
    for t in ALL:
        for kind, codes in kinds.items():
            assert xp.isdtype(getattr(xp, t), kind) == (np.dtype(t).kind in codes), (t, kind)
    assert xp.isdtype(xp.int8, ("bool", "signed integer"))
    assert xp.isdtype(xp.int8, xp.int8) and not xp.isdtype(xp.int8, (xp.int16, "bool"))
    with pytest.raises(ValueError):
        xp.isdtype(xp.int8, "integer")
    with pytest.raises(TypeError):
        xp.isdtype("int8", "integral")


def test_result_type_as_numpy():
    trios = [("int8", "uint8", "float16"), ("uint16", "int16", "float16"), ("int64", "uint64"), ("bool", "int8"),
             ("uint32", "int8", "float32")]
    for trio in trios:
        assert xp.result_type(*(getattr(xp, t) for t in trio)).name == np.result_type(*trio).name, trio
    a = xp.asarray([1], dtype=xp.uint8)
    assert xp.result_type(a, 1) == xp.uint8
    assert xp.result_type(a, 1.0) == xp.float64
    assert xp.result_type(a, xp.int8, True) == xp.int16
    with pytest.raises(ValueError):
        xp.result_type()
    with pytest.raises(TypeError):
        xp.result_type(1, 2.0)


# ---- manipulation ----

def test_broadcast_arrays_and_moveaxis():
    a, b = np.arange(3.0), np.arange(2).reshape(2, 1)
    got = xp.broadcast_arrays(xp.asarray(a), xp.asarray(b))
    for g, w in zip(got, np.broadcast_arrays(a, b)):
        same(g, w)
    x = np.arange(24).reshape(2, 3, 4)
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (2, 0)), ([0, 2], [1, 0])]:
        same(xp.moveaxis(xp.asarray(x), src, dst), np.moveaxis(x, src, dst))
    with pytest.raises(ValueError):
        xp.moveaxis(xp.asarray(x), (0, 0), (1, 2))
    with pytest.raises(ValueError):
        xp.broadcast_arrays(xp.asarray(a), xp.asarray(np.arange(2.0)))


def test_repeat():
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    same(xp.repeat(xp.asarray(x), 2), np.repeat(x, 2))
    same(xp.repeat(xp.asarray(x), 3, axis=1), np.repeat(x, 3, axis=1))
    same(xp.repeat(xp.asarray(x), xp.asarray([1, 0, 2]), axis=-1), np.repeat(x, [1, 0, 2], axis=-1))
    same(xp.repeat(xp.asarray(x), xp.asarray([2]), axis=0), np.repeat(x, [2], axis=0))
    same(xp.repeat(xp.asarray(x.T), 2, axis=0), np.repeat(x.T, 2, axis=0))
    with pytest.raises(ValueError):
        xp.repeat(xp.asarray(x), -1)
    with pytest.raises(ValueError):
        xp.repeat(xp.asarray(x), xp.asarray([1, 2]), axis=1)
    with pytest.raises(TypeError):
        xp.repeat(xp.asarray(x), 1.5)


def test_roll_and_tile():
    x = np.arange(12.0).reshape(3, 4)
    for shift, axis in [(1, None), (-5, None), (2, 0), (-1, 1), ((1, 2), (0, 1)), ((1, 1), (1, 1)), ((1, 2), None)]:
        same(xp.roll(xp.asarray(x), shift, axis=axis), np.roll(x, shift, axis=axis))
    same(xp.roll(xp.asarray(x[::-1]), 1, axis=0), np.roll(x[::-1], 1, axis=0))
    with pytest.raises(ValueError):
        xp.roll(xp.asarray(x), (1, 2, 3), axis=(0, 1))
    for reps in [(2,), (2, 1), (1, 2, 3), (0, 2)]:
        same(xp.tile(xp.asarray(x), reps), np.tile(x, reps))
    same(xp.tile(xp.asarray(np.float32(2.5)), (3,)), np.tile(np.float32(2.5), (3,)))
    with pytest.raises(ValueError):
        xp.tile(xp.asarray(x), (-1,))


def test_unstack():
    x = np.arange(24).reshape(2, 3, 4)
    for axis in [0, 1, -1]:
        got = xp.unstack(xp.asarray(x), axis=axis)
        assert isinstance(got, tuple) and len(got) == x.shape[axis]
        for i, g in enumerate(got):
            same(g, np.take(x, i, axis=axis))
    with pytest.raises(ValueError):
        xp.unstack(xp.asarray(np.float64(1.0)))


# ---- statistics ----

@pytest.mark.parametrize("dt", ["int8", "uint16", "int64", "bool", "float32", "float64"])
def test_cumulative_prod(dt):
    rng = np.random.default_rng(3)
    x = (rng.integers(-3, 4, (4, 5)) if dt[0] in "iub" else rng.uniform(0.5, 1.5, (4, 5))).astype(dt)
    for axis in [0, 1, -1]:
        for initial in [False, True]:
            want = np.cumulative_prod(x, axis=axis, include_initial=initial)
            got = xp.cumulative_prod(xp.asarray(x), axis=axis, include_initial=initial)
            if dt.startswith("float"):
                close(got, want, 8)
            else:
                same(got, want)
    if dt.startswith("int"):
        same(xp.cumulative_prod(xp.asarray(x), axis=1, dtype=xp.int8), np.cumulative_prod(x, axis=1, dtype=np.int8))
    same(xp.cumulative_prod(xp.asarray(x[0])), np.cumulative_prod(x[0]))
    with pytest.raises(ValueError):
        xp.cumulative_prod(xp.asarray(x))


def test_diff():
    x = np.array([[1, 4, 9, 16], [2, 3, 5, 7]], dtype=np.int32)
    for kw in [{}, {"n": 2}, {"n": 0}, {"axis": 0}, {"n": 5}, {"prepend": 0}, {"append": np.array([[0], [1]])},
               {"prepend": 1.5, "append": 2}]:
        args = {k: (xp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        same(xp.diff(xp.asarray(x), **args), np.diff(x, **kw))
    b = np.array([True, True, False, True])
    same(xp.diff(xp.asarray(b)), np.diff(b))
    u = np.array([3, 1], np.uint8)
    same(xp.diff(xp.asarray(u)), np.diff(u))
    with pytest.raises(ValueError):
        xp.diff(xp.asarray(x), n=-1)


# ---- tensordot ----

def test_tensordot():
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(60.0).reshape(3, 4, 5)
    same(xp.tensordot(xp.asarray(a), xp.asarray(b)), np.tensordot(a, b))
    same(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=([1, 2], [0, 1])), np.tensordot(a, b, axes=([1, 2], [0, 1])))
    same(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])))
    same(xp.tensordot(xp.asarray(a[0, 0]), xp.asarray(b[0, 0]), axes=0), np.tensordot(a[0, 0], b[0, 0], axes=0))
    i, j = np.arange(6, dtype=np.int8).reshape(2, 3), np.arange(6, dtype=np.int16).reshape(3, 2)
    same(xp.tensordot(xp.asarray(i), xp.asarray(j), axes=1), np.tensordot(i, j, axes=1))
    with pytest.raises(ValueError):
        xp.tensordot(xp.asarray(a), xp.asarray(b), axes=([0], [0]))
    with pytest.raises(ValueError):
        xp.tensordot(xp.asarray(a), xp.asarray(b), axes=4)
