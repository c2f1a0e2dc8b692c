"""NumPy functions beyond the Array API (isclose, the nan* reductions, diag, median, quantile,
partition, bincount, histogram, einsum, pad, random draws) from Python, against NumPy 2 run live (on the default device:
the GPU where there is one)."""

import re
import warnings

import numpy as np
import pytest

import xp


def same(x, ref, exact=True):
    got = xp.asnumpy(x) if isinstance(x, xp.Array) else np.asarray(x)
    ref = np.asarray(ref)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, got.shape, ref.dtype, ref.shape)
    if exact:
        assert np.array_equal(got, ref, equal_nan=ref.dtype.kind == "f"), (got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0, equal_nan=True)


def sample(dtype, shape, seed=0, nans=True):
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        a = (rng.normal(0, 10, shape) * 4).round() / 4
        a = a.astype(dtype)
        if nans:
            a.reshape(-1)[:: max(1, a.size // 5) + 1] = np.nan
        return a
    return rng.integers(0, 20, shape).astype(dtype)


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kwargs)


# ---- comparison ----


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "uint8"])
def test_isclose_matches_numpy(dtype):
    a = sample(dtype, (6, 7), 1)
    b = (a * (1 + np.random.default_rng(2).normal(0, 1e-5, a.shape))).astype(dtype)
    for kw in [{}, {"rtol": 1e-3}, {"atol": 0.5, "rtol": 0.0}, {"equal_nan": True}]:
        same(xp.isclose(xp.asarray(a), xp.asarray(b), **kw), np.isclose(a, b, **kw))
        assert xp.allclose(xp.asarray(a), xp.asarray(b), **kw) == np.allclose(a, b, **kw)
    # A Python number is weak: float32 against 1.0000001 compares in float32.
    same(xp.isclose(xp.asarray(a), 1.0000001, rtol=0, atol=0), np.isclose(a, 1.0000001, rtol=0, atol=0))
    same(xp.isclose(xp.asarray(a), float("nan"), equal_nan=True), np.isclose(a, np.nan, equal_nan=True))


def test_isclose_infinities_and_broadcasting():
    a = np.array([np.inf, -np.inf, np.nan, 1.0, 1e10])
    b = np.array([[np.inf], [1.0]])
    same(xp.isclose(xp.asarray(a), xp.asarray(b)), np.isclose(a, b))
    same(xp.isclose(xp.asarray(a), xp.asarray(b), equal_nan=True), np.isclose(a, b, equal_nan=True))
    with pytest.raises(ValueError):
        xp.isclose(xp.asarray(a), xp.asarray(np.ones(3)))


def test_array_equal():
    a = np.array([1.0, np.nan, 3.0])
    for x, y in [(a, a), (a, a[:2]), (a, np.ones((1, 3))), (np.arange(3), np.arange(3.0)), (np.zeros((0, 2)),) * 2]:
        for en in (False, True):
            assert xp.array_equal(xp.asarray(x), xp.asarray(y), equal_nan=en) == np.array_equal(x, y, equal_nan=en)


# ---- NaN reductions ----


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "int64"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nan_reductions_match_numpy(dtype, axis, keepdims):
    a = sample(dtype, (4, 5, 3), 3)
    a[0, :, 0] = np.nan if dtype.startswith("float") else a[0, :, 0]  # an all-NaN slice on axis 1
    x = xp.asarray(a)
    for name in ["nanmax", "nanmin"]:
        same(getattr(xp, name)(x, axis=axis, keepdims=keepdims), quiet(getattr(np, name), a, axis=axis, keepdims=keepdims))
    same(xp.nansum(x, axis=axis, keepdims=keepdims), np.nansum(a, axis=axis, keepdims=keepdims), exact=dtype != "float32")
    ref = quiet(np.nanmean, a, axis=axis, keepdims=keepdims)
    got = xp.asnumpy(xp.nanmean(x, axis=axis, keepdims=keepdims))
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-6 if dtype == "float32" else 1e-13, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_nanargmax_nanargmin(dtype):
    a = sample(dtype, (5, 6), 4)
    x = xp.asarray(a)
    for name in ["nanargmax", "nanargmin"]:
        for axis in [None, 0, 1, -1]:
            same(getattr(xp, name)(x, axis=axis), getattr(np, name)(a, axis=axis))
        same(getattr(xp, name)(x, axis=1, keepdims=True), getattr(np, name)(a, axis=1, keepdims=True))
    if dtype.startswith("float"):
        a[2, :] = np.nan
        with pytest.raises(ValueError, match="All-NaN"):
            xp.nanargmax(xp.asarray(a), axis=1)
        with pytest.raises(ValueError):
            np.nanargmax(a, axis=1)


# ---- shapes ----


def test_diag_and_ravel():
    m = np.arange(20.0).reshape(4, 5)
    for k in [-5, -4, -1, 0, 1, 3, 5, 7]:
        same(xp.diag(xp.asarray(m), k), np.diag(m, k).copy())
        same(xp.diag(xp.asarray(m.T), k=k), np.diag(m.T, k).copy())
        same(xp.diag(xp.asarray(m[1]), k), np.diag(m[1], k))
    same(xp.diag(xp.asarray(np.array([True, False]))), np.diag(np.array([True, False])))
    with pytest.raises(ValueError):
        xp.diag(xp.asarray(np.zeros((2, 2, 2))))
    same(xp.ravel(xp.asarray(m.T)), np.ravel(m.T))


# ---- order statistics ----


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int64", "uint16"])
def test_median_quantile_percentile_match_numpy(dtype):
    a = sample(dtype, (5, 8, 3), 5, nans=False)
    b = a.copy()
    if dtype.startswith("float"):
        b[1, 2, :] = np.nan
    for arr in (a, b):
        x = xp.asarray(arr)
        for axis in [None, 0, 1, -1, (0, 2)]:
            for keepdims in (False, True):
                same(xp.median(x, axis=axis, keepdims=keepdims), quiet(np.median, arr, axis=axis, keepdims=keepdims))
                for q in [0.0, 0.3, 0.5, 0.95, 1.0, 1]:
                    same(xp.quantile(x, q, axis=axis, keepdims=keepdims), np.quantile(arr, q, axis=axis, keepdims=keepdims))
                qs = np.array([0.0, 0.1, 0.25, 0.5, 2 / 3, 1.0])
                same(xp.quantile(x, xp.asarray(qs), axis=axis, keepdims=keepdims),
                     np.quantile(arr, qs, axis=axis, keepdims=keepdims))
                same(xp.percentile(x, 37.5, axis=axis, keepdims=keepdims),
                     np.percentile(arr, 37.5, axis=axis, keepdims=keepdims))
                same(xp.percentile(x, xp.asarray(qs * 100), axis=axis), np.percentile(arr, qs * 100, axis=axis))


@pytest.mark.parametrize("method", ["lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8"])
def test_quantile_methods_match_numpy(method, dtype):
    a = sample(dtype, (6, 7), 9, nans=False)
    b = a.copy()
    if dtype.startswith("float"):
        b[2, :] = np.nan
    qs = np.array([0.0, 0.125, 0.25, 0.5, 0.625, 2 / 3, 1.0])
    for arr in (a, b):
        x = xp.asarray(arr)
        for axis in [None, 0, -1]:
            for q in [0.0, 0.3, 0.5, 0.625, 1.0, 1]:
                same(xp.quantile(x, q, axis=axis, method=method), np.quantile(arr, q, axis=axis, method=method))
            same(xp.quantile(x, xp.asarray(qs), axis=axis, method=method),
                 np.quantile(arr, qs, axis=axis, method=method))
            same(xp.percentile(x, 37.5, axis=axis, keepdims=True, method=method),
                 np.percentile(arr, 37.5, axis=axis, keepdims=True, method=method))
    with pytest.raises(ValueError, match="'linear'"):
        xp.quantile(xp.asarray(a), 0.5, method="hazen")


def test_quantile_errors():
    x = xp.asarray(np.arange(5.0))
    for q in [1.5, -0.1, float("nan")]:
        with pytest.raises(ValueError):
            xp.quantile(x, q)
    with pytest.raises(ValueError):
        xp.percentile(x, 101)
    with pytest.raises(IndexError):
        xp.quantile(xp.asarray(np.zeros(0)), 0.5)
    with pytest.raises(TypeError):
        xp.quantile(xp.asarray(np.array([True])), 0.5)


# ---- partition, bincount, histogram ----


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_partition_meets_numpys_contract(dtype):
    a = sample(dtype, (6, 9), 6)
    for axis in [0, 1, -1]:
        for kth in [0, 3, -1, [1, 4]]:
            p = xp.asnumpy(xp.partition(xp.asarray(a), kth, axis=axis))
            ref = np.sort(a, axis=axis)
            for k in np.atleast_1d(kth):  # the kth elements are where a sort puts them
                np.testing.assert_array_equal(np.take(p, k, axis=axis), np.take(ref, k, axis=axis))
            ix = xp.asnumpy(xp.argpartition(xp.asarray(a), kth, axis=axis))
            np.testing.assert_array_equal(np.take_along_axis(a, ix, axis=axis), p)
    same(xp.partition(xp.asarray(a), 2, axis=None), np.sort(a, axis=None))
    with pytest.raises(ValueError):
        xp.partition(xp.asarray(a), 9)


def test_bincount_matches_numpy():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 50, 1000)
    w = rng.normal(size=1000)
    same(xp.bincount(xp.asarray(x)), np.bincount(x))
    same(xp.bincount(xp.asarray(x), minlength=80), np.bincount(x, minlength=80))
    same(xp.bincount(xp.asarray(x), weights=xp.asarray(w)), np.bincount(x, weights=w), exact=False)
    same(xp.bincount(xp.asarray(x.astype(np.uint8)), weights=xp.asarray(w.astype(np.float32))),
         np.bincount(x.astype(np.uint8), weights=w.astype(np.float32)), exact=False)
    same(xp.bincount(xp.asarray(np.zeros(0, np.int64))), np.bincount(np.zeros(0, np.int64)))
    with pytest.raises(ValueError):
        xp.bincount(xp.asarray(np.array([1, -1])))
    with pytest.raises(TypeError):
        xp.bincount(xp.asarray(np.array([1.0])))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "uint8"])
def test_histogram_matches_numpy(dtype):
    a = sample(dtype, (500,), 8, nans=False)
    for bins in [1, 3, 10, 37]:
        for rng_ in [None, (-5.0, 7.3), (0, 1), (2.0, 2.0)]:
            c, e = xp.histogram(xp.asarray(a), bins=bins, range=rng_)
            rc, re = np.histogram(a, bins=bins, range=rng_)
            same(c, rc)
            same(e, re)
    c, e = xp.histogram(xp.asarray(np.full(4, 3, dtype)), bins=4)
    rc, re = np.histogram(np.full(4, 3, dtype), bins=4)
    same(c, rc)
    same(e, re)


def test_histogram_errors_and_nan():
    with pytest.raises(ValueError):
        xp.histogram(xp.asarray(np.array([np.nan, 1.0])))
    c, _ = xp.histogram(xp.asarray(np.array([np.nan, 1.0])), bins=2, range=(0, 2))
    same(c, np.histogram(np.array([np.nan, 1.0]), bins=2, range=(0, 2))[0])
    with pytest.raises(ValueError):
        xp.histogram(xp.asarray(np.ones(3)), bins=0)
    with pytest.raises(ValueError):
        xp.histogram(xp.asarray(np.ones(3)), range=(2, 1))


def test_histogram_with_edges_and_density_match_numpy():
    a = sample("float64", (500,), 9)  # NaNs too: never counted
    for edges in [[-20.0, -3, 0, 0, 2.5, 9, 40], [0, 1], np.linspace(-30, 30, 17), [5.0]]:
        for density in [False, True]:
            c, e = xp.histogram(xp.asarray(a), bins=xp.asarray(np.asarray(edges)), density=density)
            rc, re = quiet(np.histogram, a, bins=np.asarray(edges), density=density)
            same(c, rc, exact=not density)
            same(e, re)
    i = sample("int32", (300,), 10)
    c, e = xp.histogram(xp.asarray(i), bins=[0, 2.5, 7, 19])  # a list of edges
    rc, re = np.histogram(i, bins=[0, 2.5, 7, 19])
    same(c, rc)
    same(e, re)
    for bins, r in [(10, None), (7, (-3.0, 5.0))]:
        c, e = xp.histogram(xp.asarray(i.astype(np.float32)), bins=bins, range=r, density=True)
        rc, re = np.histogram(i.astype(np.float32), bins=bins, range=r, density=True)
        same(c, rc, exact=False)
        same(e, re)
        same(xp.histogram_bin_edges(xp.asarray(i), bins=bins, range=r), np.histogram_bin_edges(i, bins=bins, range=r))
    with pytest.raises(ValueError, match="monotonically"):
        xp.histogram(xp.asarray(a), bins=xp.asarray(np.array([3.0, 1.0])))
    with pytest.raises(ValueError):
        xp.histogram(xp.asarray(a), bins="auto")


# ---- einsum ----

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij", [(3, 4), (3, 4)]),
    ("i,i", [(6,), (6,)]),
    ("i,j", [(3,), (4,)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd,da->", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("abc,cd,bd->ad", [(2, 3, 4), (4, 5), (3, 5)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 6)]),
    ("i...->...", [(3, 4, 2)]),
    ("...,...", [(3, 4), (4,)]),
    ("Ba,aA", [(2, 3), (3, 4)]),
    ("ij,jk->ik", [(3, 1), (4, 5)]),
    ("ij,jk->ik", [(3, 0), (0, 5)]),
    ("i,->i", [(4,), ()]),
    ("ij->...", [(3, 4)]),
]


@pytest.mark.parametrize("subs,shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_einsum_matches_numpy(subs, shapes, dtype):
    rng = np.random.default_rng(abs(hash(subs)) % 1000)
    if dtype.startswith("float"):
        ops = [rng.normal(size=s).astype(dtype) for s in shapes]
    else:
        ops = [rng.integers(-50, 50, size=s).astype(dtype) for s in shapes]
    got = xp.einsum(subs, *[xp.asarray(o) for o in ops])
    ref = np.einsum(subs, *ops)
    r = xp.asnumpy(got)
    assert r.dtype == ref.dtype and r.shape == ref.shape, (r.dtype, r.shape, ref.dtype, ref.shape)
    if dtype.startswith("int"):
        np.testing.assert_array_equal(r, ref)
    else:
        eps = np.finfo(dtype).eps
        # The bound of a sum of k products in any order: k eps (|a| |b| ...) summed the same way.
        mag = np.einsum(subs, *[np.abs(o).astype(np.float64) for o in ops])
        k = max(1, int(np.prod([s for sh in shapes for s in sh])) if shapes else 1)
        np.testing.assert_array_less(np.abs(r.astype(np.float64) - ref), (k * eps) * mag + 1e-300 + 4 * eps * np.abs(ref))


def test_einsum_dtypes_views_and_sublists():
    a8 = np.full((2, 3), 100, np.int8)
    same(xp.einsum("ij,jk->ik", xp.asarray(a8), xp.asarray(a8.T.copy())), np.einsum("ij,jk->ik", a8, a8.T))
    same(xp.einsum("ij->i", xp.asarray(a8)), np.einsum("ij->i", a8))
    b = np.array([[True, False], [False, False]])
    same(xp.einsum("ij,jk", xp.asarray(b), xp.asarray(b)), np.einsum("ij,jk", b, b))
    f32, i16 = np.ones((2, 3), np.float32), np.arange(3, dtype=np.int16)
    same(xp.einsum("ij,j", xp.asarray(f32), xp.asarray(i16)), np.einsum("ij,j", f32, i16))
    m = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(m)
    t = xp.einsum("ij->ji", x)
    t[0, 0] = 99.0  # a new array, not a view of x
    assert xp.asnumpy(x)[0, 0] == 0.0
    same(xp.einsum("ij,jk", x[:, ::2], xp.asarray(m.T)[::2]), np.einsum("ij,jk", m[:, ::2], m.T[::2]))
    # NumPy's interleaved form: operand, sublist, ..., [output sublist].
    same(xp.einsum(x, [0, 1], xp.asarray(m.T), [1, 2], [0, 2]), np.einsum(m, [0, 1], m.T, [1, 2], [0, 2]))
    same(xp.einsum(x, [Ellipsis, 1], [Ellipsis]), np.einsum(m, [Ellipsis, 1], [Ellipsis]))
    same(xp.einsum("ij,jk", x, xp.asarray(m.T), optimize=True), np.einsum("ij,jk", m, m.T, optimize=True))


@pytest.mark.parametrize(
    "subs,shapes,text",
    [
        ("ij->ii", [(2, 3)], "more than once"),
        ("ij->k", [(2, 3)], "never appears"),
        ("ijk", [(2, 3)], "name 3 dimensions"),
        ("i", [(2, 3)], "'...'"),
        ("i,j", [(2, 3)], "fewer operands"),
        ("ij", [(2, 3), (2, 3)], "more operands"),
        ("i.j", [(2, 3)], "ellipsis"),
        ("ij->i->j", [(2, 3)], "'->'"),
        ("0j", [(2, 3)], "invalid subscript '0'"),
        ("...i->i", [(2, 3)], "'...'"),
        ("ii", [(2, 3)], "don't match"),
        ("i,i", [(2,), (3,)], "broadcast"),
    ],
)
def test_einsum_errors(subs, shapes, text):
    ops = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subs, *ops)
    with pytest.raises(ValueError, match=re.escape(text)):
        xp.einsum(subs, *[xp.asarray(o) for o in ops])


# ---- pad ----


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_pad_matches_numpy(mode):
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    for pw in [0, 2, (1, 3), ((2, 0), (5, 9)), [[0, 0], [13, 2]], ((7, 7), (1, 1))]:
        same(xp.pad(xp.asarray(m), pw, mode=mode), np.pad(m, pw, mode=mode))
        same(xp.pad(xp.asarray(m.T), pw, mode=mode), np.pad(m.T, pw, mode=mode))
    one = np.array([5.0])
    same(xp.pad(xp.asarray(one), 3, mode=mode), np.pad(one, 3, mode=mode))


def test_pad_constant_values_and_errors():
    m = np.arange(6, dtype=np.uint8).reshape(2, 3)
    same(xp.pad(xp.asarray(m), 1, constant_values=9), np.pad(m, 1, constant_values=9))
    f = np.ones(2, np.float32)
    same(xp.pad(xp.asarray(f), (1, 2), constant_values=0.1), np.pad(f, (1, 2), constant_values=0.1))
    with pytest.raises(ValueError):
        xp.pad(xp.asarray(np.zeros(0)), 1, mode="edge")
    with pytest.raises(ValueError):
        xp.pad(xp.asarray(m), -1)
    with pytest.raises(ValueError):
        xp.pad(xp.asarray(m), 1, mode="median")


# ---- random numbers ----


def test_random_permutation_shuffle_choice():
    g, same_seed = xp.random.default_rng(11), xp.random.default_rng(11)
    p = xp.asnumpy(g.permutation(500))
    assert p.dtype == np.int64
    np.testing.assert_array_equal(np.sort(p), np.arange(500))
    np.testing.assert_array_equal(xp.asnumpy(same_seed.permutation(500)), p)
    assert not np.array_equal(xp.asnumpy(g.permutation(500)), p)
    m = np.arange(20.0).reshape(4, 5)
    pm = xp.asnumpy(g.permutation(xp.asarray(m)))  # rows moved whole
    np.testing.assert_array_equal(np.sort(pm[:, 0]), m[:, 0])
    np.testing.assert_array_equal(pm - pm[:, :1], m - m[:, :1])
    x = xp.asarray(np.arange(30))
    g.shuffle(x)
    np.testing.assert_array_equal(np.sort(xp.asnumpy(x)), np.arange(30))
    c = xp.asnumpy(g.choice(40, size=(4, 10), replace=False))
    np.testing.assert_array_equal(np.sort(c.reshape(-1)), np.arange(40))
    w = xp.asnumpy(g.choice(xp.asarray(np.array([2.5, 7.5])), size=300))
    assert set(w.tolist()) == {2.5, 7.5}
    assert g.choice(5).shape == ()
    with pytest.raises(ValueError):
        g.choice(3, size=4, replace=False)


def test_random_exponential():
    e = xp.asnumpy(xp.random.default_rng(3).exponential(3.0, size=100000))
    assert e.dtype == np.float64 and e.min() >= 0
    assert abs(e.mean() - 3.0) < 5 * 3.0 / np.sqrt(e.size)
    assert xp.random.default_rng(3).exponential(size=(2, 3), dtype=xp.float32).dtype == xp.float32
    with pytest.raises(ValueError):
        xp.random.default_rng(3).exponential(-1.0)


def _moments_close(x, mean, var, mu4):
    n = x.size
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / n) + 1e-12, (x.mean(), mean)
    assert abs(x.var(ddof=1) - var) < 5 * np.sqrt(max(mu4 - var * var, var * var) / n) + 1e-12, (x.var(), var)


def test_random_gamma():
    g = xp.random.default_rng(31)
    for k, scale in [(0.3, 1.0), (1.0, 2.0), (4.5, 0.5), (60.0, 1.0)]:
        x = xp.asnumpy(g.gamma(k, scale, size=100000))
        assert x.dtype == np.float64 and x.min() >= 0
        _moments_close(x, k * scale, k * scale**2, 3 * k * (k + 2) * scale**4)
    # The same distribution as NumPy's: a two-sample KS test against NumPy's own draws.
    ours = np.sort(xp.asnumpy(g.gamma(2.2, size=50000)))
    theirs = np.sort(np.random.default_rng(31).gamma(2.2, size=50000))
    both = np.concatenate([ours, theirs])
    d = np.abs(np.searchsorted(ours, both, "right") / ours.size - np.searchsorted(theirs, both, "right") / theirs.size)
    assert d.max() * np.sqrt(ours.size / 2) < 1.95
    assert g.gamma(2.0, size=(2, 3), dtype=xp.float32).dtype == xp.float32
    assert xp.asnumpy(g.gamma(0.0, size=5)).max() == 0
    assert g.gamma(1.0).shape == ()
    with pytest.raises(ValueError):
        g.gamma(-1.0)
    with pytest.raises(ValueError):
        g.gamma(1.0, -2.0)


def test_random_poisson_and_binomial():
    g = xp.random.default_rng(32)
    for lam in [0.7, 12.0, 4000.0]:
        x = xp.asnumpy(g.poisson(lam, size=100000))
        assert x.dtype == np.int64 and x.min() >= 0
        _moments_close(x, lam, lam, lam * (1 + 3 * lam))
    # A chi-square against NumPy's draws of the same distribution (two samples, cells 0..14+).
    ours = xp.asnumpy(g.poisson(5.0, size=100000))
    theirs = np.random.default_rng(32).poisson(5.0, size=100000)
    co = np.bincount(np.minimum(ours, 14), minlength=15)
    ct = np.bincount(np.minimum(theirs, 14), minlength=15)
    stat = (((co - ct) ** 2) / (co + ct)).sum()
    assert stat < 50  # chi-square with 14 degrees of freedom: 0.9999 quantile ~ 40
    assert xp.asnumpy(g.poisson(0.0, size=10)).max() == 0
    assert g.poisson(size=3).shape == (3,)
    for n, p in [(1, 0.5), (30, 0.2), (10**6, 0.5), (50, 0.999)]:
        x = xp.asnumpy(g.binomial(n, p, size=100000))
        assert x.dtype == np.int64 and x.min() >= 0 and x.max() <= n
        var = n * p * (1 - p)
        _moments_close(x, n * p, var, var * (1 + 3 * (n - 2) * p * (1 - p)))
    assert xp.asnumpy(g.binomial(0, 0.5, size=10)).max() == 0
    assert xp.asnumpy(g.binomial(9, 0.0, size=10)).max() == 0
    assert xp.asnumpy(g.binomial(9, 1.0, size=10)).min() == 9
    for bad in [lambda: g.poisson(-1.0), lambda: g.binomial(-1, 0.5), lambda: g.binomial(3, 1.5)]:
        with pytest.raises(ValueError):
            bad()


def test_random_choice_with_p():
    g = xp.random.default_rng(33)
    p = [0.1, 0.0, 0.4, 0.2, 0.3]
    c = xp.asnumpy(g.choice(5, size=100000, p=p))
    counts = np.bincount(c, minlength=5)
    assert counts[1] == 0
    expected = np.array(p) * c.size
    nz = expected > 0
    assert (((counts[nz] - expected[nz]) ** 2) / expected[nz]).sum() < 25  # 3 dof
    w = xp.asnumpy(g.choice(xp.asarray(np.array([2.5, 7.5, 9.0])), size=(3, 4), p=xp.asarray(np.array([0.5, 0.5, 0.0]))))
    assert w.shape == (3, 4) and set(w.ravel().tolist()) <= {2.5, 7.5}
    no = xp.asnumpy(g.choice(5, size=4, replace=False, p=p))
    np.testing.assert_array_equal(np.sort(no), [0, 2, 3, 4])
    for bad in [
        dict(p=[0.5, 0.5]),  # wrong length
        dict(p=[0.5, 0.6, 0.0, 0.0, 0.0]),  # sum
        dict(p=[1.5, -0.5, 0.0, 0.0, 0.0]),  # negative
        dict(p=[np.nan, 1.0, 0.0, 0.0, 0.0]),
        dict(p=p, size=5, replace=False),  # 4 positive weights
    ]:
        with pytest.raises(ValueError):
            np.random.default_rng(0).choice(5, **bad)
        with pytest.raises(ValueError):
            g.choice(5, **bad)


# ---- mixed cases: numbers, integer and bool dtypes, 0-d arrays ----


def test_mixed_cases_match_numpy():
    a, b = np.array([1, 2, 300], np.int64), np.array([1, 2, 301], np.uint64)
    same(xp.isclose(xp.asarray(a), xp.asarray(b)), np.isclose(a, b))
    same(xp.isclose(1.0, xp.asarray(a)), np.isclose(1.0, a))
    f = np.array([np.nan, 1.0, 2.0])
    same(xp.isclose(float("nan"), xp.asarray(f), equal_nan=True), np.isclose(np.nan, f, equal_nan=True))
    t = np.array([True, False])
    same(xp.isclose(xp.asarray(t), xp.asarray(np.array([True, True]))), np.isclose(t, np.array([True, True])))
    x = np.array([3.0, 1, 4, 1, 5, 9, 2, 6])
    same(xp.quantile(xp.asarray(x), xp.asarray(np.array(0.4))), np.quantile(x, np.array(0.4)))
    same(xp.percentile(xp.asarray(x), xp.asarray(np.array([10, 50]))), np.percentile(x, np.array([10, 50])))
    q32 = np.array([0.1, 0.7], np.float32)
    same(xp.quantile(xp.asarray(x.astype(np.float32)), xp.asarray(q32)), np.quantile(x.astype(np.float32), q32))
    same(xp.quantile(xp.asarray(np.array([3, 1, 2])), 1), np.quantile(np.array([3, 1, 2]), 1))
    same(xp.median(xp.asarray(np.array([1, 2, 3, 4], np.uint8))), np.median(np.array([1, 2, 3, 4], np.uint8)))
    same(xp.median(xp.asarray(np.array(2.0))), np.median(np.array(2.0)))
    same(xp.nanargmax(xp.asarray(np.array(2.0))), np.nanargmax(np.array(2.0)))
    same(xp.pad(xp.asarray(t), 3, mode="reflect"), np.pad(t, 3, mode="reflect"))
    same(xp.pad(xp.asarray(f), (1, 2), constant_values=np.pi), np.pad(f, (1, 2), constant_values=np.pi))
    same(xp.diag(xp.asarray(np.eye(3, dtype=bool))), np.diag(np.eye(3, dtype=bool)))
    same(xp.bincount(xp.asarray(np.array([True, False, True]))), np.bincount(np.array([True, False, True])))
    big = np.random.default_rng(1).integers(-(2**40), 2**40, 1000)
    for got, ref in zip(xp.histogram(xp.asarray(big), bins=13), np.histogram(big, bins=13)):
        same(got, ref)
    h = np.random.default_rng(2).normal(size=100001).astype(np.float32)
    for r in [None, (-1.1, 2.3)]:
        for got, ref in zip(xp.histogram(xp.asarray(h), bins=97, range=r), np.histogram(h, bins=97, range=r)):
            same(got, ref)
