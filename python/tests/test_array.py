"""Arrays from Python: the namespace, operators, indexing, errors (results checked against NumPy)."""

import numpy as np
import pytest

import xp


def test_namespace():
    a = xp.asarray([1, 2, 3])
    assert a.__array_namespace__() is xp
    assert xp.__array_api_version__ == "2024.12"
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float64
    assert xp.Device("cpu") in info.devices()
    assert xp.newaxis is None and xp.pi == np.pi and np.isnan(xp.nan)


def test_dtypes_and_shapes():
    a = xp.zeros((2, 3), dtype=xp.float32)
    assert a.dtype == xp.float32 and a.dtype is xp.float32
    assert a.shape == (2, 3) and a.ndim == 2 and a.size == 6
    assert xp.asarray([1, 2]).dtype == xp.int64
    assert xp.asarray([True]).dtype == xp.bool
    assert xp.asarray([1, 2.5]).dtype == xp.float64


def test_weak_scalars():
    a = xp.asarray([1, 2], dtype=xp.float32)
    assert (a * 2.0).dtype == xp.float32
    assert (2 + a).dtype == xp.float32
    u = xp.asarray([1], dtype=xp.uint8)
    assert (u + 1).dtype == xp.uint8
    with pytest.raises(TypeError):
        u + 300


@pytest.mark.parametrize("op", ["__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__floordiv__", "__mod__"])
def test_operators_against_numpy(op):
    n1 = np.array([1.5, -2.0, 3.25], dtype=np.float64)
    n2 = np.array([0.5, 4.0, -1.5], dtype=np.float64)
    a1, a2 = xp.asarray(n1), xp.asarray(n2)
    # pow is not exactly rounded (docs/semantics.md): within an ulp; the others exactly NumPy's bits.
    check = (lambda x, y: np.testing.assert_allclose(x, y, rtol=4e-16)) if op == "__pow__" else np.testing.assert_array_equal
    check(xp.to_cpu(getattr(a1, op)(a2)), getattr(n1, op)(n2))
    rop = "__r" + op[2:]
    check(xp.to_cpu(getattr(a1, rop)(2.0)), getattr(n1, rop)(2.0))


def test_in_place_keeps_the_array():
    a = xp.asarray([1.0, 2.0])
    b = a
    a += 1
    a *= 3
    assert b is a
    assert xp.to_cpu(a).tolist() == [6.0, 9.0]
    i = xp.asarray([1, 2])
    with pytest.raises(TypeError):
        i += 1.5


def test_indexing():
    n = np.arange(24).reshape(2, 3, 4)
    a = xp.asarray(n)
    for key in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (slice(None, None, -1), slice(1, 3)),
                (0, Ellipsis, None)]:
        np.testing.assert_array_equal(xp.to_cpu(a[key]), n[key])
    a[0, 1] = 100
    n[0, 1] = 100
    np.testing.assert_array_equal(xp.to_cpu(a), n)
    np.testing.assert_array_equal(xp.to_cpu(a[xp.asarray([1, 0])]), n[[1, 0]])
    # An index array on another device than the array's is moved to the array's.
    np.testing.assert_array_equal(xp.to_cpu(a[xp.asarray([1, 0], device="cpu")]), n[[1, 0]])
    with pytest.raises(IndexError):
        a[5]


def test_conversions_and_printing():
    a = xp.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=xp.float32)
    assert repr(a) == repr(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32))
    assert str(a) == str(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32))
    one = xp.asarray(7)
    assert int(one) == 7 and float(one) == 7.0 and bool(one) and complex(one) == 7 and [0] * 8 == [0] * 8
    assert list(range(10))[one] == 7
    np.testing.assert_array_equal(xp.to_cpu(a.mT), np.array([[1, 3], [2, 4]], dtype=np.float32))
    with pytest.raises(ValueError):
        bool(a)


def test_functions():
    n = np.linspace(0.1, 2.0, 12).reshape(3, 4)
    a = xp.asarray(n)
    np.testing.assert_allclose(xp.to_cpu(xp.exp(a)), np.exp(n), rtol=1e-15)
    np.testing.assert_allclose(xp.to_cpu(xp.sum(a, axis=0)), n.sum(axis=0))
    np.testing.assert_allclose(xp.to_cpu(xp.mean(a, axis=1, keepdims=True)), n.mean(axis=1, keepdims=True))
    np.testing.assert_allclose(xp.to_cpu(xp.std(a, correction=1)), n.std(ddof=1))
    np.testing.assert_allclose(xp.to_cpu(xp.matmul(a, a.mT)), n @ n.T)
    np.testing.assert_array_equal(xp.to_cpu(xp.argmax(a, axis=1)), n.argmax(axis=1))
    np.testing.assert_array_equal(xp.to_cpu(xp.clip(a, max=1.0)), np.clip(n, None, 1.0))
    np.testing.assert_array_equal(xp.to_cpu(xp.where(a > 1, a, 0.0)), np.where(n > 1, n, 0.0))
    np.testing.assert_array_equal(xp.to_cpu(xp.concat([a, a], axis=None)), np.concatenate([n.ravel(), n.ravel()]))
    assert xp.result_type(xp.int8, xp.uint8) == xp.int16
    assert xp.isdtype(xp.float32, "real floating") and not xp.isdtype(xp.int8, "unsigned integer")
    assert xp.iinfo(xp.int8).max == 127 and xp.finfo(xp.float32).eps == np.finfo(np.float32).eps


def test_errors_derive_from_the_builtins():
    assert issubclass(xp.ValueError, ValueError) and issubclass(xp.ValueError, xp.Error)
    assert issubclass(xp.TypeError, TypeError) and issubclass(xp.IndexError, IndexError)
    assert issubclass(xp.OutOfMemoryError, MemoryError) and issubclass(xp.CudaError, RuntimeError)
    assert issubclass(xp.FileError, OSError) and issubclass(xp.DeviceUnavailable, RuntimeError)
    with pytest.raises(xp.TypeError) as e:
        xp.bitwise_and(xp.asarray([1.0]), xp.asarray([2.0]))
    assert "bitwise_and" in str(e.value)
    with pytest.raises(xp.FileError) as f:
        xp.load("/nonexistent/x.npy")
    assert f.value.filename == "/nonexistent/x.npy"
    with pytest.raises(xp.DeviceMismatch if xp.is_cuda_available() else xp.DeviceUnavailable):
        xp.zeros(2, device="cpu") + xp.zeros(2, device="cuda:0")


def test_lazy_is_invisible():
    a = xp.asarray([1.0, 2.0, 3.0])
    b = a * 2 + 1
    a[0] = 100.0  # the graph keeps a's value as it was
    assert xp.to_cpu(b).tolist() == [3.0, 5.0, 7.0]


def test_eye_takes_any_python_int_as_k():
    # NumPy gives zeros for a diagonal past either edge, however far; so does xp, past int64 too.
    for k in (2**63, -(2**70), 3, -3):
        got = xp.to_cpu(xp.eye(3, 4, k=k))
        assert np.array_equal(got, np.eye(3, 4, k=max(min(k, 10), -10)))
    assert np.array_equal(xp.to_cpu(xp.eye(3, k=1)), np.eye(3, k=1))


def test_writing_to_an_empty_array_does_nothing_whatever_its_steps():
    # An empty array from NumPy is imported with steps of 0; writing to it is a no-op, as in NumPy.
    x = xp.asarray(np.zeros((0, 0, 4), np.int32))
    x[...] = 3
    assert x.shape == (0, 0, 4)
    b = xp.broadcast_to(xp.zeros((0, 1)), (0, 4))
    b[...] = 1
    with pytest.raises(ValueError, match="broadcast view"):
        c = xp.broadcast_to(xp.zeros((1,)), (4,))
        c[...] = 1


def test_out_overlapping_an_operand_gives_numpy_values():
    # Small contiguous operands take the backend's one-instruction shortcut where an operand is the
    # output itself (the same elements) and the general path, which copies, where they overlap shifted.
    for n in (7, 1000, 5000):
        ref = np.arange(n, dtype=np.float32)
        x = xp.asarray(ref.copy())
        np.add(ref[1:], ref[:-1], out=ref[:-1])
        xp.add(x[1:], x[:-1], out=x[:-1])
        np.testing.assert_array_equal(xp.to_cpu(x), ref)
        x += x
        ref += ref
        np.testing.assert_array_equal(xp.to_cpu(x), ref)
        y = xp.asarray(np.arange(n, dtype=np.int32))
        xp.multiply(y, y, out=y)
        np.testing.assert_array_equal(xp.to_cpu(y), np.arange(n, dtype=np.int32) ** 2)


def test_a_broadcast_value_has_the_bits_of_the_same_value_in_every_element():
    # A value the same everywhere (a broadcast scalar, a constant) is computed once: exact
    # operations on one element, the vector math library's over a whole tile, as an array's are.
    funcs = [
        lambda x: xp.exp(x),
        lambda x: xp.sin(x) * 3.0,
        lambda x: x.astype(xp.float32) + 1,
        lambda x: xp.sqrt(xp.abs(x)) / 7.0,
        lambda x: xp.log1p(xp.abs(x)).astype(xp.float16),
    ]
    for n in (1, 7, 3000):
        for v in (0.1, -2.5, 1e-30, 3.0, 123.456):
            scalar = xp.broadcast_to(xp.asarray(np.float64(v)), (n,))
            full = xp.full((n,), v, dtype=xp.float64)
            for f in funcs:
                ref = xp.to_cpu(f(full))
                assert xp.to_cpu(f(scalar)).tobytes() == ref.tobytes()  # the value as the output
                mixed = xp.to_cpu(f(scalar) + xp.zeros(n, dtype=f(full).dtype))  # read by a tile
                assert mixed.tobytes() == (ref + np.zeros(n, dtype=ref.dtype)).tobytes()
