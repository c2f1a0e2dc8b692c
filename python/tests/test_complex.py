"""Complex arrays from Python, against NumPy 2 (on the default device: the GPU where there is one):
dtypes and promotion, Python and NumPy complex scalars, arithmetic and functions, reductions,
matmul, printing, and the ways in and out (NumPy, DLPack, the buffer protocol, .npy)."""

import warnings

import numpy as np
import pytest

import xp

CDTYPES = ["complex64", "complex128"]


def sample(dtype, n=40, seed=0):
    rng = np.random.default_rng(seed)
    a = np.empty(n, dtype)
    a.real = rng.integers(-8, 9, n) / 4
    a.imag = rng.integers(-8, 9, n) / 4
    return a


def close(x, ref, ulps=8):
    got = xp.asnumpy(x)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, got.shape, ref.dtype, ref.shape)
    eps = np.finfo(ref.dtype).eps
    np.testing.assert_allclose(got, ref, rtol=ulps * eps, atol=ulps * eps, equal_nan=True, err_msg=str(ref.dtype))


def exact(x, ref):
    got = xp.asnumpy(x)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, ref.dtype)
    assert got.tobytes() == ref.tobytes(), (got, ref)


def test_dtypes_and_the_namespace():
    assert xp.complex64.kind == "c" and xp.complex128.itemsize == 16
    assert xp.isdtype(xp.complex64, "complex floating") and not xp.isdtype(xp.complex64, "real floating")
    assert xp.finfo(xp.complex64).dtype == xp.float32 and xp.finfo(xp.complex128).eps == np.finfo(np.float64).eps
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["complex floating"] == xp.complex128
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}
    assert xp.result_type(xp.float32, xp.complex64) == xp.complex64
    assert xp.result_type(xp.float64, xp.complex64) == xp.complex128
    assert xp.can_cast(xp.float32, xp.complex64) and not xp.can_cast(xp.complex64, xp.float32)


def test_python_and_numpy_scalars_are_weak_or_converted():
    f32 = xp.asarray(np.arange(3, dtype=np.float32))
    assert (f32 * 1j).dtype == xp.complex64  # NEP 50
    assert (xp.asarray([1, 2]) + 1j).dtype == xp.complex128
    assert xp.asarray([1, 2j]).dtype == xp.complex128
    assert xp.asarray(np.complex64(1 + 2j)).dtype == xp.complex64
    assert complex(xp.asarray(np.complex64(1 + 2j))) == 1 + 2j
    assert xp.asarray([np.complex64(1 + 2j), 3]).dtype == xp.complex128
    z = xp.asarray([1 + 2j, 3 - 4j])
    assert z[1].item() == 3 - 4j
    with pytest.raises(TypeError):
        float(z[0])


@pytest.mark.parametrize("dtype", CDTYPES)
def test_arithmetic_matches_numpy(dtype):
    a, b = sample(dtype, seed=1), sample(dtype, seed=2)
    b[b == 0] = 1 + 1j
    x, y = xp.asarray(a), xp.asarray(b)
    exact(x + y, a + b)
    exact(x - y, a - b)
    exact(x * y, a * b)
    close(x / y, a / b, ulps=4)
    exact(-x, -a)
    exact(x * 2.5, a * 2.5)
    exact(1j * x, 1j * a)
    exact(xp.conj(x), np.conj(a))
    exact(xp.real(x), np.real(a))
    exact(xp.imag(x), np.imag(a))
    exact(x == y, a == b)
    exact(x != x, a != a)
    close(xp.abs(x), np.abs(a), ulps=2)
    exact(xp.square(x), np.square(a))


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize(
    "fn", ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "expm1", "log1p", "log2", "log10",
           "asin", "acos", "atan", "asinh", "acosh", "atanh", "sign", "reciprocal"]
)
def test_functions_match_numpy(dtype, fn):
    a = sample(dtype, seed=3)
    a = a[(a != 0) | (fn not in ("log", "log2", "log10", "reciprocal"))]
    np_fn = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
             "atanh": np.arctanh}.get(fn, getattr(np, fn, None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np_fn(a)
    close(getattr(xp, fn)(xp.asarray(a)), ref, ulps=8)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_reductions_and_matmul_match_numpy(dtype):
    a = sample(dtype, 24, seed=4).reshape(4, 6)
    x = xp.asarray(a)
    close(xp.sum(x), np.sum(a))
    close(xp.sum(x, axis=0), np.sum(a, axis=0))
    close(xp.mean(x, axis=1, keepdims=True), np.mean(a, axis=1, keepdims=True))
    close(xp.prod(x[:, :3], axis=1), np.prod(a[:, :3], axis=1))
    close(xp.cumulative_sum(x, axis=1), np.cumsum(a, axis=1))
    close(xp.cumulative_prod(x, axis=1), np.cumprod(a, axis=1), ulps=32)  # grouped otherwise than NumPy's
    close(xp.cumulative_prod(x[0], include_initial=True), np.cumulative_prod(a[0], include_initial=True), ulps=32)
    close(x @ xp.asarray(a.T), a @ a.T, ulps=32)
    close(xp.vecdot(x, x), np.vecdot(a, a), ulps=32)  # conj of the first operand, as the standard


def test_orderings_are_type_errors():
    z = xp.asarray([1 + 1j, 2])
    for f in (lambda: z < z, lambda: xp.maximum(z, z), lambda: xp.floor(z), lambda: xp.max(z),
              lambda: xp.sort(z), lambda: xp.clip(z, 0, 1)):
        with pytest.raises(TypeError):
            f()


def test_printing_matches_numpy():
    for values in ([1 + 2j, 3 - 4j, -0.5j], [1e10 + 1j, 1e-5j], [complex(np.nan, 1), complex(1, np.inf)]):
        for dtype in CDTYPES:
            a = np.array(values, dtype=dtype)
            x = xp.asarray(a)
            assert str(x) == str(a) and repr(x) == repr(a)
    assert str(xp.asarray(1 + 2j)) == str(np.array(1 + 2j))


def test_ways_in_and_out(tmp_path):
    a = sample("complex64", 12, seed=5).reshape(3, 4)
    x = xp.asarray(a)
    exact(x, a)
    assert np.asarray(x).dtype == np.complex64
    exact(xp.from_dlpack(a), a)
    assert xp.to_cpu(x).dtype == np.complex64
    p = str(tmp_path / "z.npy")
    np.save(p, a)
    exact(xp.load(p), a)
    xp.save(p, x.T)
    assert np.array_equal(np.load(p), a.T)
    m = memoryview(np.ascontiguousarray(a.astype(np.complex128)))
    assert xp.asarray(m).dtype == xp.complex128


def test_indexing_and_attributes():
    a = sample("complex128", 12, seed=6).reshape(3, 4)
    x = xp.asarray(a)
    exact(x[x.real > 0], a[a.real > 0])
    exact(x[:, [3, 0]], a[:, [3, 0]])
    exact(x.imag, a.imag)
    exact(x.conj(), a.conj())
    y, b = xp.asarray(a), a.copy()
    y[y.imag < 0] = 2j
    b[b.imag < 0] = 2j
    exact(y, b)
