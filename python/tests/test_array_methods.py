"""NumPy's and CuPy's array methods on xp arrays (python/xp/_methods.py), each against NumPy's."""

import numpy as np
import pytest

import xp


def same(got, want):
    got = xp.asnumpy(got) if isinstance(got, xp.Array) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64"])
def test_reductions_and_shapes_as_numpy(dtype):
    a = (np.arange(24) % 7 - 3).reshape(2, 3, 4).astype(dtype)
    x = xp.asarray(a)
    for name in ["sum", "prod", "min", "max", "argmin", "argmax", "any", "all"]:
        same(getattr(x, name)(), getattr(a, name)())
        for axis in [0, 1, -1]:
            same(getattr(x, name)(axis=axis), getattr(a, name)(axis=axis))
            same(getattr(x, name)(axis, keepdims=True), getattr(a, name)(axis, keepdims=True))
    if dtype == "float64":
        for name in ["mean", "std", "var"]:
            same(getattr(x, name)(), getattr(a, name)())
            same(getattr(x, name)(axis=1, keepdims=True), getattr(a, name)(axis=1, keepdims=True))
        same(x.std(ddof=1), a.std(ddof=1))
        same(x.var(axis=0, ddof=1), a.var(axis=0, ddof=1))
    same(x.sum(axis=(0, 2)), a.sum(axis=(0, 2)))
    same(x.cumsum(), a.cumsum())
    same(x.cumsum(axis=1), a.cumsum(axis=1))
    same(x.cumprod(axis=2), a.cumprod(axis=2))
    same(x.reshape(4, 6), a.reshape(4, 6))
    same(x.reshape((4, 6)), a.reshape((4, 6)))
    same(x.reshape(-1), a.reshape(-1))
    same(x.reshape(2, -1), a.reshape(2, -1))
    same(x.ravel(), a.ravel())
    same(x.flatten(), a.flatten())
    same(x.transpose(), a.transpose())
    same(x.transpose(1, 0, 2), a.transpose(1, 0, 2))
    same(x.transpose((2, 0, 1)), a.transpose((2, 0, 1)))
    same(x.swapaxes(0, 2), a.swapaxes(0, 2))
    same(x[:, :1].squeeze(), a[:, :1].squeeze())
    same(x[:1].squeeze(axis=0), a[:1].squeeze(axis=0))
    same(x.diagonal(), a.diagonal())
    same(x.diagonal(1, 1, 2), a.diagonal(1, 1, 2))
    same(x.trace(), a.trace())
    same(x.trace(offset=-1, axis1=2, axis2=1), a.trace(offset=-1, axis1=2, axis2=1))
    same(x.repeat(2), a.repeat(2))
    same(x.repeat(3, axis=1), a.repeat(3, axis=1))
    same(x.take([0, 5, 23]), a.take([0, 5, 23]))
    same(x.take([2, 0], axis=2), a.take([2, 0], axis=2))
    same(x.clip(-1, 2), a.clip(-1, 2))
    same(x.argsort(axis=1), a.argsort(axis=1, kind="stable"))
    for g, w in zip(x.nonzero(), a.nonzero()):
        same(g, w)
    assert x.tolist() == a.tolist()
    assert x.item(5) == a.item(5) and x.item(1, 2, 3) == a.item(1, 2, 3) and x.item((0, 1, 2)) == a.item((0, 1, 2))
    assert x[1, 2, 3].item() == a[1, 2, 3].item()
    got = x.get()
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, a)
    q, r = divmod(x, 3)
    same(q, a // 3)
    same(r, a % 3)
    q, r = divmod(7, x[x != 0]) if dtype != "float64" else divmod(7.5, x[x != 0])
    wq, wr = divmod(7 if dtype != "float64" else 7.5, a[a != 0])
    same(q, wq)
    same(r, wr)


def test_dot_round_and_in_place_methods():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    x, y = xp.asarray(a), xp.asarray(b)
    same(x.dot(y), a.dot(b))
    same(x.dot(y[:, 0]), a.dot(b[:, 0]))
    c = rng.standard_normal((2, 3, 4))
    d = rng.standard_normal((5, 4, 2))
    same(xp.asarray(c).dot(xp.asarray(d)), c.dot(d))  # N-d: last axis against the second-to-last
    same(x.dot(xp.asarray(np.float64(2.0), device=x.device)), a.dot(2.0))  # a scalar goes to the default device
    v = rng.standard_normal(50) * 1000
    for decimals in [0, 1, 2, -1, -2]:
        same(xp.asarray(v).round(decimals), v.round(decimals))
    same(xp.asarray(np.array([1, 25, 37])).round(1), np.array([1, 25, 37]).round(1))
    z = x.copy()
    z.fill(2.5)
    same(z, np.full((3, 4), 2.5))
    s = xp.asarray(a)
    s.sort()
    same(s, np.sort(a))
    s = xp.asarray(a)
    s.sort(axis=0)
    same(s, np.sort(a, axis=0))
    with pytest.raises(ValueError):
        x.diagonal(axis1=1, axis2=1)


def test_pickle_keeps_values_dtype_shape_and_device():
    import pickle

    cases = [
        xp.asarray([[1.0, 2.0], [3.0, -0.0]]),
        xp.asarray(3),
        xp.asarray([True, False]),
        xp.asarray([1 + 2j], dtype=xp.complex64),
        xp.asarray([1.5, float("nan"), -3.0], dtype=xp.bfloat16),
        xp.asarray([1.5, float("inf")], dtype=xp.float16),
        xp.asarray([[1, 2], [3, 4]], dtype=xp.int16)[:, ::-1],  # a view: its values, C order
        xp.zeros((0, 3)),
        xp.asarray([2**63 + 5], dtype=xp.uint64),
    ]
    for a in cases:
        for protocol in (2, pickle.HIGHEST_PROTOCOL):
            b = pickle.loads(pickle.dumps(a, protocol=protocol))
            assert isinstance(b, xp.Array)
            assert (b.dtype, b.shape, b.device) == (a.dtype, a.shape, a.device)
            assert xp.to_cpu(b).tobytes() == xp.to_cpu(a).tobytes()  # bit for bit, NaN and -0.0 included
    # Inside containers, and a copy: writing the loaded array leaves the original alone.
    x = xp.asarray([1, 2])
    y = pickle.loads(pickle.dumps({"k": [x]}))["k"][0]
    y[0] = 9
    assert xp.to_cpu(x).tolist() == [1, 2]
