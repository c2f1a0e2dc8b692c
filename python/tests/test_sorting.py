"""Sorting, searching, sets and advanced indexing from Python, against NumPy 2 (on the default
device: the GPU where there is one)."""

import numpy as np
import pytest

import xp

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("float"):
        a = rng.integers(-4, 5, shape).astype(dtype) / 2
        flat = a.reshape(-1)
        if flat.size >= 6:
            flat[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan]
            rng.shuffle(flat)
        return a
    info = np.iinfo(dtype)
    a = rng.integers(-3 if info.min < 0 else 0, 4, shape).astype(dtype)
    flat = a.reshape(-1)
    if flat.size >= 2:  # the extremes of the dtype too
        flat[0], flat[-1] = info.max, info.min
        rng.shuffle(flat)
    return a


def same(x, ref):
    got = xp.asnumpy(x)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, got.shape, ref.dtype, ref.shape)
    assert np.array_equal(got, ref, equal_nan=ref.dtype.kind == "f"), (got, ref)
    if ref.dtype.kind == "f":  # the signs of zeros too
        assert np.array_equal(np.signbit(got), np.signbit(ref))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_and_argsort(dtype):
    a = sample(dtype, (6, 300), seed=1)
    x = xp.asarray(a)
    for axis in (-1, 0):
        same(xp.sort(x, axis=axis), np.sort(a, axis=axis, kind="stable"))
        same(xp.argsort(x, axis=axis), np.argsort(a, axis=axis, kind="stable"))
        # descending as the standard's reference: the reverse order, ties in input order
        rev = np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)
        same(xp.argsort(x, axis=axis, descending=True), a.shape[axis] - 1 - rev)
        same(xp.sort(x, axis=axis, descending=True), np.take_along_axis(a, a.shape[axis] - 1 - rev, axis=axis))


def test_sort_of_views_empty_and_0d():
    a = sample("float64", (4, 5, 6), seed=2)
    x = xp.asarray(a)
    same(xp.sort(x[:, ::-2, 1:], axis=1), np.sort(a[:, ::-2, 1:], axis=1, kind="stable"))
    same(xp.sort(xp.asarray(np.zeros((0, 3)))), np.zeros((0, 3)))
    with pytest.raises(ValueError):
        xp.sort(xp.asarray(1.0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_nonzero_count_nonzero_where(dtype):
    a = sample(dtype, (5, 7), seed=3)
    x = xp.asarray(a)
    for got, ref in zip(xp.nonzero(x), np.nonzero(a)):
        same(got, ref)
    for got, ref in zip(xp.where(x), np.nonzero(a)):
        same(got, ref)
    same(xp.count_nonzero(x), np.asarray(np.count_nonzero(a)))
    same(xp.count_nonzero(x, axis=1, keepdims=True), np.count_nonzero(a, axis=1, keepdims=True))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64", "int64"])
def test_searchsorted(dtype):
    s = np.sort(sample(dtype, (50,), seed=4), kind="stable")
    q = sample(dtype, (3, 7), seed=5)
    for side in ("left", "right"):
        same(xp.searchsorted(xp.asarray(s), xp.asarray(q), side=side), np.searchsorted(s, q, side=side))
    u = sample(dtype, (50,), seed=6)
    order = np.argsort(u, kind="stable")
    same(xp.searchsorted(xp.asarray(u), xp.asarray(q), sorter=xp.asarray(order)), np.searchsorted(u, q, sorter=order))
    with pytest.raises(ValueError):
        xp.searchsorted(xp.asarray(s), xp.asarray(q), side="middle")


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique(dtype):
    a = sample(dtype, (4, 9), seed=7)
    x = xp.asarray(a)
    # NumPy's np.unique: sorted values (NumPy 2.3's unique_values leaves its order unspecified, as
    # the standard permits; xp sorts), each NaN distinct.
    values, indices, inverse, counts = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                                                 equal_nan=False)
    u = xp.unique_all(x)
    same(u.values, values)
    same(u.indices, indices)
    same(u.inverse_indices, inverse.reshape(a.shape))
    same(u.counts, counts)
    same(xp.unique_counts(x).counts, counts)
    same(xp.unique_inverse(x).inverse_indices, inverse.reshape(a.shape))
    same(xp.unique_values(x), values)


def test_take_along_axis():
    a = sample("float32", (4, 6), seed=8)
    i = np.argsort(a, axis=0, kind="stable")
    same(xp.take_along_axis(xp.asarray(a), xp.asarray(i), axis=0), np.take_along_axis(a, i, axis=0))
    with pytest.raises(IndexError):
        xp.take_along_axis(xp.asarray(a), xp.asarray(np.full((1, 1), 6)), axis=1)


KEYS = [
    lambda a: a > 0,
    lambda a: (a > 0)[:, :, 0],
    lambda a: (slice(None), (a > 0)[0]),
    lambda a: np.array([0, 2, -1]),
    lambda a: (slice(None), np.array([[1], [3]])),
    lambda a: (np.array([0, 1]), slice(None), np.array([2, 0])),
    lambda a: (1, np.array([0, 3])),
    lambda a: (Ellipsis, np.array([1, 1, 0])),
    lambda a: (np.array([0, 2]), None, np.array([1, 1])),
    lambda a: [0, 1],
    lambda a: True,
]


@pytest.mark.parametrize("k", range(len(KEYS)))
def test_advanced_indexing_reads_and_writes_as_numpy(k):
    a = sample("float64", (3, 4, 5), seed=9)
    key = KEYS[k](a)
    xkey = tuple(xp.asarray(e) if isinstance(e, np.ndarray) else e for e in key) if isinstance(key, tuple) else key
    if isinstance(xkey, np.ndarray):
        xkey = xp.asarray(xkey)
    x = xp.asarray(a)
    same(x[xkey], a[key])
    b = a.copy()
    b[key] = -7.5
    x[xkey] = -7.5
    same(x, b)
    # a NumPy array or list as the index works too (moved to the array's device)
    same(xp.asarray(a)[key], a[key])


def test_repeated_indices_write_the_last_value():
    x = xp.zeros(4, dtype=xp.int32)
    x[xp.asarray([1, 2, 1])] = xp.asarray([5, 6, 7], dtype=xp.int32)
    same(x, np.array([0, 7, 6, 0], dtype=np.int32))


def test_index_errors_name_the_index_and_write_nothing():
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        x[:, xp.asarray([0, 3])]
    with pytest.raises(IndexError):
        x[:, xp.asarray([0, 3])] = 1.0
    with pytest.raises(IndexError):
        x[xp.asarray([True, False, True])]
    with pytest.raises(IndexError):
        x[xp.asarray([0.5])]
    same(x, np.arange(6.0).reshape(2, 3))
