"""NumPy's names composed of the namespace's functions (python/xp/_numpy_names.py), against NumPy 2 run
live (on the default device: the GPU where there is one)."""

import warnings

import numpy as np
import pytest

import xp


def same(x, ref, exact=True, rtol=1e-15):
    got = xp.to_cpu(x) if isinstance(x, xp.Array) else np.asarray(x)
    ref = np.asarray(ref)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, got.shape, ref.dtype, ref.shape)
    if exact:
        assert np.array_equal(got, ref, equal_nan=ref.dtype.kind in "fc"), (got, ref)
        if ref.dtype.kind == "f":  # signed zeros too
            assert np.array_equal(np.signbit(got), np.signbit(ref)), (got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=0, equal_nan=True)


def both(f, *args, exact=True, rtol=1e-15, **kwargs):
    """xp.f and np.f on the same arguments (NumPy arrays go to xp as xp arrays)."""
    xargs = [xp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = getattr(np, f)(*args, **kwargs)
    got = getattr(xp, f)(*xargs, **kwargs)
    if isinstance(ref, (tuple, list)):
        assert type(got) is type(ref) and len(got) == len(ref)
        for g, r in zip(got, ref):
            same(g, r, exact, rtol)
    else:
        same(got, ref, exact, rtol)
    return got


def sample(dtype, shape, seed=0, special=True):
    rng = np.random.default_rng(seed)
    if dtype.startswith(("float", "complex")):
        a = ((rng.normal(0, 10, shape) * 4).round() / 4).astype(dtype)
        if dtype.startswith("complex"):
            a = a + 1j * ((rng.normal(0, 10, shape) * 4).round() / 4)
        if special and a.size >= 4:
            a.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, -0.0]
        return a
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    lo = 0 if dtype.startswith("u") else -20
    return rng.integers(lo, 20, shape).astype(dtype)


NAMES = xp._numpy_names.__all__
DTYPES = ["int8", "int32", "int64", "uint8", "float16", "float32", "float64"]


def test_names_are_new_and_exported():
    import xp._xp as core

    for n in NAMES:
        assert getattr(xp, n) is getattr(xp._numpy_names, n)
        assert not hasattr(core, n), n  # nothing of the extension's is shadowed
    assert len(set(NAMES)) == len(NAMES) == 64


# ---- elementwise ----


@pytest.mark.parametrize("f", ["absolute", "bitwise_not", "conjugate"])
@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "bool", "float32", "float64", "complex128"])
def test_exact_unary_aliases(f, dtype):
    if f == "bitwise_not" and not dtype.startswith(("int", "uint", "bool")):
        with pytest.raises(TypeError):
            getattr(xp, f)(xp.asarray(sample(dtype, (3, 4))))
        return
    if f in ("absolute", "conjugate") and dtype == "bool":
        return  # NumPy's take bool; the standard's abs and conj take numbers only (a TypeError)
    both(f, sample(dtype, (3, 4)), exact=not (f == "absolute" and dtype == "complex128"))  # hypot: an ulp


@pytest.mark.parametrize("f", ["arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_inverse_trig(f, dtype):
    a = np.array([-2, -1, -0.5, -0.0, 0.0, 0.25, 0.5, 1, 1.5, 3, np.inf, np.nan])
    a = (a if dtype != "int16" else np.arange(-3, 4)).astype(dtype)
    both(f, a, exact=False, rtol=1e-6 if dtype != "float64" else 4e-16)


def test_arctan2_true_divide_mod():
    a, b = sample("float64", (4, 5), 1), sample("float64", (5,), 2, special=False)
    both("arctan2", a, b, exact=False)
    both("true_divide", a, b)
    both("true_divide", sample("int32", (4, 5)), 7)
    both("mod", a, b)
    both("mod", sample("int64", (4, 5)), np.array([3, -3, 5, -7, 2]))


def test_power():
    both("power", sample("float64", (3, 4), special=False), np.array([0.5, 2.0, -1.0, 3.0]), exact=False)
    both("power", sample("int32", (3, 4)), 3)
    both("power", sample("int64", (3, 4)), np.array([0, 1, 2, 3]))
    both("power", sample("float32", (5,), special=False), -2)
    base = xp.asarray([2, 3])
    for exponent in (-1, [2, -1], xp.asarray([1, -2], device=base.device)):
        with pytest.raises(ValueError, match="negative integer powers"):
            xp.power(base, exponent)
    # A NumPy array is a CPU array (another library's): beside a base on the CPU.
    with pytest.raises(ValueError, match="negative integer powers"):
        xp.power(xp.asarray(np.array([2, 3])), np.array([1, -2]))


@pytest.mark.parametrize("f", ["deg2rad", "rad2deg", "degrees", "radians"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int64", "bool", "float16", "float32", "float64"])
def test_angle_conversions(f, dtype):
    both(f, sample(dtype, (4, 6), 3))


@pytest.mark.parametrize("dtype", DTYPES + ["bool"])
def test_fabs_rint(dtype):
    a = sample(dtype, (3, 5), 4)
    if dtype.startswith("float"):
        a = a * np.asarray(1.37, dtype)  # not integers: rint rounds
        a.reshape(-1)[-3:] = [0.5, 1.5, -2.5]
    both("fabs", a)
    both("rint", a)
    with pytest.raises(TypeError):
        xp.fabs(xp.asarray([1 + 1j]))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int64", "float16", "float32", "float64"])
def test_exp2(dtype):
    a = sample(dtype, (4, 5), 5) / np.asarray(4, dtype) if dtype.startswith("float") else sample(dtype, (4, 5), 5)
    both("exp2", a, exact=dtype == "float16", rtol={"float32": 2e-7}.get(dtype, 4e-16))


@pytest.mark.parametrize("dtype", ["int16", "int64", "float16", "float32", "float64"])
def test_cbrt(dtype):
    a = sample(dtype, (6, 7), 6)
    if dtype == "float64":
        a = np.concatenate([a.ravel(), [27.0, -8.0, 1e300, -1.7976931348623157e308, 5e-324, -1e-310, 3.0, 1e-5]])
    # Against NumPy: within NumPy's own error. float32: NumPy's cbrtf misses by an ulp where this
    # (rounded from float64) does not; float64: NumPy's cbrt misses by up to two (1e-5: 1.58 ulp).
    got = both("cbrt", a, exact=False, rtol={"float16": 0, "float32": 1.2e-7, "int16": 1.2e-7}.get(dtype, 4.5e-16))
    if dtype == "float64":
        # Against the exact root: the Newton-refined root is within an ulp, whichever vector pow the
        # CPU's instruction set selects.
        from decimal import Decimal, getcontext

        getcontext().prec = 60
        for x, y in zip(a.tolist(), xp.to_cpu(got).tolist()):
            if np.isfinite(x) and x != 0:
                exact = abs(Decimal(x)) ** (Decimal(1) / 3) * (1 if x > 0 else -1)
                assert abs(Decimal(y) - exact) <= Decimal(np.spacing(abs(y))), (x, y, exact)
        # Exact roots (the smallest subnormal is 2^-1074, its root 2^-358, which NumPy's cbrt misses by
        # an ulp on some CPUs); the largest magnitude and a subnormal within an ulp, below.
        assert xp.to_cpu(got)[[-8, -7, -6, -4]].tolist() == [3.0, -2.0, 1e100, 2.0**-358]
    with pytest.raises(TypeError):
        xp.cbrt(xp.asarray([8j]))


@pytest.mark.parametrize("f", ["fmax", "fmin"])
def test_fmax_fmin(f):
    a = np.array([[1.0, np.nan, np.nan, -np.inf, 2.0, 0.5]])
    b = np.array([[np.nan], [3.0]])
    both(f, a, b)
    both(f, a, 1.5)
    both(f, a.astype("float32"), np.array([np.nan, 1, 2, 3, np.nan, -1], "float32"))
    both(f, sample("int32", (3, 4)), sample("int32", (4,), 1))
    both(f, sample("int64", (3,)), np.array([np.nan, 1.0, 2.0]))


def test_fmod():
    a = np.array([5.0, -5.0, 5.0, -5.0, -4.0, 4.0, 0.0, -0.0, 1e-20, -1e-20, np.inf, 3.0, 7.5, np.nan])
    b = np.array([3.0, 3.0, -3.0, -3.0, 2.0, -2.0, 1.0, 1.0, 1.0, 1.0, 2.0, np.inf, 0.0, 1.0])
    both("fmod", a, b)
    both("fmod", a.astype("float32"), b.astype("float32"))
    both("fmod", a, 0.7)
    both("fmod", sample("float64", (3, 4), special=False), sample("float64", (4,), 1, special=False))
    for dtype in ("int8", "int32", "int64", "uint8"):
        x = sample(dtype, (5, 4), 2)
        y = np.array([3, -3, 7, 0] if dtype != "uint8" else [3, 1, 7, 0], dtype)
        both("fmod", x, y)
        both("fmod", x, 4)
    both("fmod", np.array([-128, 127], "int8"), np.array([3, -3], "int8"))
    with pytest.raises(TypeError):
        xp.fmod(xp.asarray([1j]), 2)


def test_nan_to_num():
    for dtype in ("float16", "float32", "float64"):
        a = sample(dtype, (3, 4), 7)
        both("nan_to_num", a)
        both("nan_to_num", a, nan=-1.0, posinf=9.0, neginf=-9.0)
    c = np.array([complex(np.nan, np.inf), complex(-np.inf, 2), 1 + 1j])
    both("nan_to_num", c)
    both("nan_to_num", sample("int32", (5,)))
    x = xp.asarray([np.nan, 1.0])
    assert xp.nan_to_num(x, copy=False) is x and xp.to_cpu(x).tolist() == [0.0, 1.0]
    y = xp.asarray([np.nan, 1.0])
    xp.nan_to_num(y)
    assert np.isnan(xp.to_cpu(y)[0])  # copy=True leaves x alone


# ---- reductions ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_amax_amin_ptp(dtype):
    a = sample(dtype, (3, 4, 5), 8)
    for kw in [{}, {"axis": 1}, {"axis": (0, 2)}, {"axis": -1, "keepdims": True}]:
        both("amax", a, **kw)
        both("amin", a, **kw)
        both("ptp", a, **kw)
    both("ptp", np.array([-128, 127], "int8"))  # wraps, as NumPy's
    with pytest.raises(TypeError):
        xp.amax(xp.asarray([1, 2]), initial=0)


@pytest.mark.parametrize("f", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float32", "float64"])
def test_cumsum_cumprod(f, dtype):
    a = sample(dtype, (3, 4), 9, special=False)
    if f == "cumprod" and dtype.startswith(("int", "uint")):
        a = a % 3
    exact = not dtype.startswith("float")
    both(f, a, exact=exact, rtol=1e-6)
    both(f, a, axis=0, exact=exact, rtol=1e-6)
    both(f, a, axis=-1, exact=exact, rtol=1e-6)
    both(f, a, dtype=np.float64, exact=False)
    both(f, a.tolist() if dtype != "float32" else a)


def test_average():
    a = sample("float64", (3, 4), 10, special=False)
    both("average", a)
    both("average", a, axis=1)
    both("average", sample("int32", (3, 4)), axis=0, keepdims=True)
    w = np.abs(sample("float64", (3, 4), 11, special=False)) + 1
    both("average", a, weights=w, exact=False)
    both("average", a, axis=1, weights=w[0], exact=False)
    both("average", a, axis=0, weights=w[:, 0], returned=True, exact=False)
    both("average", a, axis=1, returned=True, exact=False)
    both("average", sample("int64", (3, 4)), axis=1, weights=[1, 2, 3, 4], exact=False)
    b = sample("float32", (2, 3, 4), 12, special=False)
    both("average", b, axis=(2, 0), weights=np.arange(1, 9, dtype="float32").reshape(4, 2), exact=False, rtol=1e-6)
    with pytest.raises(TypeError, match="Axis must be specified"):
        xp.average(xp.asarray(a), weights=xp.asarray(w[0]))
    with pytest.raises(ValueError, match="consistent"):
        xp.average(xp.asarray(a), axis=0, weights=xp.asarray(w[0]))
    with pytest.raises(ZeroDivisionError):
        xp.average(xp.asarray(a), axis=1, weights=[1, -1, 0, 0])


def test_diagonal_trace():
    a = sample("int32", (3, 4, 5), 13)
    for kw in [{}, {"offset": 1}, {"offset": -2}, {"axis1": 1, "axis2": 2}, {"axis1": 2, "axis2": 0, "offset": 1}]:
        both("diagonal", a, **kw)
        both("trace", a, **kw)
    both("trace", a, dtype=np.float32)
    both("trace", [[1, 2], [3, 4]])
    with pytest.raises(ValueError):
        xp.diagonal(xp.asarray([1, 2]))


# ---- shapes ----


def test_ndim_shape_size():
    for a in (np.zeros((2, 3, 4)), np.float32(3), [[1, 2, 3]]):
        assert xp.ndim(a) == np.ndim(a) and xp.shape(a) == np.shape(a) and xp.size(a) == np.size(a)
        x = xp.asarray(a)
        assert xp.ndim(x) == np.ndim(a) and xp.shape(x) == np.shape(a) and xp.size(x) == np.size(a)
    x = xp.zeros((2, 3, 4))
    assert [xp.size(x, 1), xp.size(x, -1), xp.size(x, (0, 2))] == [3, 4, 8]
    with pytest.raises(ValueError):
        xp.size(x, 3)


def test_transpose_swapaxes():
    a = sample("float64", (2, 3, 4), 14)
    both("transpose", a)
    both("transpose", a, (1, 0, 2))
    both("transpose", a, axes=[2, 0, 1])
    both("transpose", [[1, 2, 3]])
    both("swapaxes", a, 0, 2)
    both("swapaxes", a, -1, 1)
    with pytest.raises(ValueError):
        xp.swapaxes(xp.asarray(a), 0, 3)


def test_concatenate():
    a, b = sample("int32", (2, 3), 15), sample("float32", (4, 3), 16, special=False)
    both("concatenate", (a, b))
    both("concatenate", [a, a], axis=1)
    both("concatenate", [a, b.T], axis=None)
    both("concatenate", [a, a], axis=-1, dtype=np.float64)
    both("concatenate", [a, b], dtype=np.int16, casting="unsafe")
    both("concatenate", ([1, 2], [3]))
    with pytest.raises(TypeError, match="same_kind"):
        xp.concatenate([xp.asarray(b)], dtype=xp.int32)
    with pytest.raises(ValueError, match="casting"):
        xp.concatenate([xp.asarray(b)], casting="safe")
    out = xp.empty((6, 3), dtype=xp.float64, device=xp.asarray(a).device)  # NumPy's arrays come to the CPU
    assert xp.concatenate([xp.asarray(a), xp.asarray(b)], out=out) is out
    same(out, np.concatenate([a, b]).astype(np.float64))


def test_same_kind_rule_matches_numpy():
    from xp._numpy_names import _RANK, _kind

    names = ["bool", "int8", "int64", "uint8", "uint64", "float16", "float64", "complex64", "complex128"]
    for f in names:
        for t in names:
            ours = _RANK[_kind(getattr(xp, f))] <= _RANK[_kind(getattr(xp, t))]
            assert ours == np.can_cast(f, t, "same_kind"), (f, t)


@pytest.mark.parametrize("f", ["hstack", "vstack", "dstack", "column_stack"])
def test_stacks(f):
    for arrs in [
        (np.arange(3), np.arange(3, 6)),
        (np.arange(6).reshape(2, 3), np.arange(6, 12).reshape(2, 3)),
        (np.float64(1.5), np.float64(2.5)),
        (sample("float32", (2, 3, 2)), sample("float32", (2, 3, 2), 1)),
        ([1, 2], [3, 4]),
    ]:
        if f == "column_stack" and np.ndim(arrs[0]) == 3:
            continue
        ref = getattr(np, f)(arrs)
        same(getattr(xp, f)([xp.asarray(a) for a in arrs]), ref)
        same(getattr(xp, f)(list(arrs)), ref)
    if f in ("hstack", "vstack"):
        same(getattr(xp, f)([xp.asarray([1, 2]), xp.asarray([3, 4])], dtype=xp.float32),
             getattr(np, f)([[1, 2], [3, 4]], dtype=np.float32))


@pytest.mark.parametrize("f", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast(f):
    arrs = [np.float64(2.0), np.arange(3), np.arange(6).reshape(2, 3), np.arange(24).reshape(2, 3, 4),
            np.zeros((1, 2, 3, 4))]
    for a in arrs:
        both(f, a)
    got = getattr(xp, f)(*[xp.asarray(a) for a in arrs])
    ref = getattr(np, f)(*arrs)
    assert isinstance(got, tuple) and len(got) == len(ref)
    for g, r in zip(got, ref):
        same(g, r)
    assert getattr(xp, f)() == getattr(np, f)() == ()


def test_split_array_split():
    a = np.arange(24).reshape(4, 6)
    both("split", a, 2)
    both("split", a, 3, axis=1)
    both("split", a, [1, 3], axis=1)
    both("split", a, [2, -1, 10])
    both("split", a, np.array([4, 2]), axis=-1)  # decreasing: an empty part
    both("array_split", a, 4, axis=1)
    both("array_split", np.arange(10), 3)
    both("array_split", np.arange(3), 5)
    both("hsplit", a, 3)
    both("hsplit", np.arange(6), [2])
    both("vsplit", a, [1])
    with pytest.raises(ValueError, match="equal division"):
        xp.split(xp.asarray(a), 4, axis=1)
    with pytest.raises(ValueError):
        xp.array_split(xp.asarray(a), 0)
    with pytest.raises(ValueError):
        xp.hsplit(xp.asarray(3), 1)
    with pytest.raises(ValueError):
        xp.vsplit(xp.asarray([1, 2]), 1)


def test_flips_rot90():
    a = np.arange(24).reshape(2, 3, 4)
    both("fliplr", a)
    both("flipud", a)
    both("flipud", np.arange(4))
    for k in range(-5, 6):
        both("rot90", a, k)
        both("rot90", a, k, axes=(2, 0))
        both("rot90", a, k, axes=(-1, 1))
    for bad in [(0,), (1, 1), (0, -3), (0, 3)]:
        with pytest.raises(ValueError):
            xp.rot90(xp.asarray(a), 1, bad)
    with pytest.raises(ValueError):
        xp.fliplr(xp.asarray([1, 2]))
    with pytest.raises(ValueError):
        xp.flipud(xp.asarray(1))


def test_argwhere():
    for a in (np.array([[0, 1, 2], [3, 0, 0]]), sample("float64", (2, 3, 4), 17) > 0, np.zeros((2, 3)),
              np.array(5), np.array(0), np.arange(-2, 3)):
        both("argwhere", a)


# ---- products ----


def test_dot_inner_outer_vdot():
    a2, b2 = sample("float64", (3, 4), 18, special=False), sample("float64", (4, 2), 19, special=False)
    v, w = sample("float64", (4,), 20, special=False), sample("float64", (4,), 21, special=False)
    c = sample("complex128", (4,), 22, special=False)
    for f in ("dot", "inner"):
        both(f, v, w, exact=False)
        both(f, a2, np.float64(2.0), exact=False)
        both(f, np.array(3), v, exact=False)
    both("dot", a2, b2, exact=False)
    both("dot", a2, v, exact=False)
    both("dot", v, b2, exact=False)
    both("dot", sample("int32", (2, 3)), sample("int32", (3,)))
    both("dot", sample("float64", (2, 3, 4), 1, special=False), b2, exact=False)
    both("inner", a2, b2.T, exact=False)
    both("inner", sample("float64", (2, 3, 4), 1, special=False), a2, exact=False)
    both("inner", c, c, exact=False)  # no conjugation
    both("vdot", c, c[::-1], exact=False)
    both("vdot", a2, a2, exact=False)
    both("vdot", [1, 2, 3], [4, 5, 6])
    both("outer", v, w)
    both("outer", a2, sample("int64", (2, 2)))
    both("outer", [True, False], [True, True])
    with pytest.raises(ValueError):
        xp.vdot(xp.asarray(v), xp.asarray(a2))


def test_kron():
    for a, b in [(np.arange(4).reshape(2, 2), np.array([[1, 10], [100, 1000]])), (np.arange(3), np.ones((2, 2))),
                 (np.arange(6).reshape(1, 2, 3), np.arange(2) + 1), (np.array(3), np.arange(4)),
                 (sample("float32", (2, 3)), sample("float32", (3, 1), 1))]:
        both("kron", a, b)


# ---- sets ----


def test_isin():
    e = np.array([[1, 2, 3], [4, 5, 6]])
    both("isin", e, [2, 6, 9])
    both("isin", e, np.array([[5], [1]]), invert=True)
    both("isin", e, [])
    both("isin", 3, [1, 3])
    both("isin", np.array([1.0, np.nan, -0.0, np.inf]), [np.nan, 0.0, np.inf])
    both("isin", e, [2.0, 5.5])
    both("isin", np.array([1 + 1j, 2, 3j]), [3j, 2])
    both("isin", e, [3, 4], kind="table")
    with pytest.raises(ValueError, match="kind"):
        xp.isin(xp.asarray(e), [1], kind="hash")


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64", "bool"])
def test_unique(dtype):
    a = sample(dtype, (4, 5), 23)
    if dtype.startswith("float"):
        a.reshape(-1)[[7, 11, 19]] = np.nan
    both("unique", a)
    for ri in (False, True):
        for rv in (False, True):
            for rc in (False, True):
                both("unique", a, return_index=ri, return_inverse=rv, return_counts=rc)
    if dtype.startswith("float"):
        both("unique", a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    both("unique", a[:0])
    with pytest.raises(ValueError, match="axis"):
        xp.unique(xp.asarray(a), axis=0)


# ---- creation ----


def test_identity_logspace():
    for n, dtype in [(0, None), (3, None), (4, np.int32), (2, np.bool_)]:
        same(xp.identity(n, dtype), np.identity(n, dtype))
    for args, kw in [((0, 3), {}), ((0, 3, 4), {}), ((1, -2, 7), {"endpoint": False}), ((0, 5, 6), {"base": 2}),
                     ((0.5, 2.5, 5), {"base": 3.0, "dtype": np.float32}), ((0, 3, 4), {"dtype": np.int64}),
                     ((2, 2, 1), {})]:
        both("logspace", *args, exact=False, rtol=2e-15, **kw)
    with pytest.raises(TypeError):
        xp.logspace(xp.asarray([0.0, 1.0]), 2)
    with pytest.raises(ValueError):
        xp.logspace(0, 2, axis=1)


def test_around():
    a = np.array([0.5, 1.5, 2.5, -0.5, 1.2345, 123.456, np.nan, np.inf])
    both("around", a)
    both("around", a, 2, exact=False)
    both("around", a, -1)
    both("around", np.array([15, 25, 123, -15]), -1)
    out = xp.empty((8,), device=xp.asarray(a).device)
    assert xp.around(xp.asarray(a), out=out) is out
