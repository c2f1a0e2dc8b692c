"""Array arguments take array-likes as NumPy's functions do: a list, a tuple or a NumPy array is
converted as xp.asarray converts it, wherever an xp array is expected."""

import numpy as np
import pytest

import xp

CASES = [
    ("sum", lambda m, a: m.sum(a), [1, 2, 3]),
    ("mean", lambda m, a: m.mean(a), np.arange(6.0).reshape(2, 3)),
    ("std", lambda m, a: m.std(a), (1.0, 2.0, 4.0)),
    ("prod", lambda m, a: m.prod(a, axis=0), [[1, 2], [3, 4]]),
    ("argmax", lambda m, a: m.argmax(a), np.array([1, 3, 2])),
    ("reshape", lambda m, a: m.reshape(a, (2, 2)), [1, 2, 3, 4]),
    ("flip", lambda m, a: m.flip(a), [1, 2, 3]),
    ("expand_dims", lambda m, a: m.expand_dims(a, axis=0), [1, 2]),
    ("squeeze", lambda m, a: m.squeeze(a, axis=0), np.zeros((1, 3))),
    ("clip", lambda m, a: m.clip(a, 2, 6), [1, 5, 9]),
    ("broadcast_to", lambda m, a: m.broadcast_to(a, (2, 2)), [1, 2]),
    ("tile", lambda m, a: m.tile(a, (2,)), [1, 2]),
    ("roll", lambda m, a: m.roll(a, 1), [1, 2, 3]),
    ("repeat", lambda m, a: m.repeat(a, 2), [1, 2]),
    ("sort", lambda m, a: m.sort(a), [3, 1, 2]),
    ("argsort", lambda m, a: m.argsort(a), (3.0, 1.0, 2.0)),
    ("unique_values", lambda m, a: m.unique_values(a), [3, 1, 3]),
    ("count_nonzero", lambda m, a: m.count_nonzero(a), [0, 1, 1]),
    ("diff", lambda m, a: m.diff(a), [1, 4, 9]),
    ("cumulative_sum", lambda m, a: m.cumulative_sum(a), [1, 2, 3]),
    ("tril", lambda m, a: m.tril(a), [[1, 2], [3, 4]]),
    ("matrix_transpose", lambda m, a: m.matrix_transpose(a), [[1, 2], [3, 4]]),
    ("permute_dims", lambda m, a: m.permute_dims(a, (1, 0)), np.arange(6).reshape(2, 3)),
    ("moveaxis", lambda m, a: m.moveaxis(a, 0, 1), np.zeros((2, 3))),
    ("astype", lambda m, a: m.astype(a, m.float32), [1, 2]),
    ("median", lambda m, a: m.median(a), [5.0, 1.0, 3.0]),
]


@pytest.mark.parametrize("name,f,data", CASES, ids=[c[0] for c in CASES])
def test_functions_take_array_likes(name, f, data):
    want = f(np, np.asarray(data)) if name not in ("unique_values", "cumulative_sum", "matrix_transpose",
                                                    "permute_dims", "astype") else None
    got = f(xp, data)
    assert isinstance(got, xp.Array)
    # The same as the function of xp.asarray(data).
    np.testing.assert_array_equal(xp.to_cpu(got), xp.to_cpu(f(xp, xp.asarray(data))))
    if want is not None:
        np.testing.assert_array_equal(xp.to_cpu(got), want)


def test_two_array_likes_and_an_index_list():
    np.testing.assert_array_equal(xp.to_cpu(xp.matmul([[1.0, 2.0], [3.0, 4.0]], [[1.0], [1.0]])), [[3.0], [7.0]])
    assert float(xp.vecdot([1.0, 2.0], [3.0, 4.0])) == 11.0
    np.testing.assert_array_equal(xp.to_cpu(xp.take(xp.asarray([10, 20, 30]), [0, 2])), [10, 30])
    np.testing.assert_array_equal(xp.to_cpu(xp.searchsorted([1, 2, 3], [2, 3])), [1, 2])
    r = xp.nonzero([0, 1, 2])
    np.testing.assert_array_equal(xp.to_cpu(r[0]), [1, 2])
    np.testing.assert_allclose(xp.to_cpu(xp.linalg.vector_norm([3.0, 4.0])), 5.0)
    np.testing.assert_allclose(xp.to_cpu(xp.fft.fft([1.0, 0.0, 0.0, 0.0])), np.ones(4))


def test_xp_array_constructor_is_asarray():
    a = xp.Array([[1, 2], [3, 4]])
    assert a.dtype == xp.asarray([[1, 2], [3, 4]]).dtype and a.shape == (2, 2)
    np.testing.assert_array_equal(xp.to_cpu(a), [[1, 2], [3, 4]])


def test_what_is_not_array_like_stays_a_type_error(capfd):
    for bad in ("abc", b"abc", object(), {1: 2}, None):
        with pytest.raises(TypeError):
            xp.sum(bad)
        with pytest.raises(TypeError):
            xp.sort(bad)
    with pytest.raises(TypeError):
        xp.reshape([1, "a"], (2,))
    # A list that xp.asarray refuses (ragged) is refused here too, as a TypeError or ValueError.
    with pytest.raises((TypeError, ValueError)):
        xp.sum([[1, 2], [3]])
    # ... and nothing is printed beside the exception (nanobind's implicit-conversion warning).
    assert capfd.readouterr().err == ""


def test_in_place_functions_refuse_a_copy():
    # shuffle works in place: a converted list would be shuffled and lost.
    g = xp.random.default_rng(0)
    with pytest.raises(TypeError):
        g.shuffle([1, 2, 3])
