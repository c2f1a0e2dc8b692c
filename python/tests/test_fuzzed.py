"""Cases that differential fuzzing against NumPy 2.4 found, each checked against NumPy."""

import numpy as np
import pytest

import xp


def test_huge_python_ints_in_indices():
    a = np.arange(12).reshape(3, 4)
    x = xp.asarray(a)
    # Slice bounds and steps past int64 clamp, as Python's and NumPy's do.
    for key in (slice(None, 2**63), slice(None, None, 2**63), slice(-(2**63) - 1, None), slice(None, None, -(2**70)),
                slice(2**70, None, -1)):
        np.testing.assert_array_equal(xp.to_cpu(x[key]), a[key])
    # An integer past int64 is out of bounds: IndexError, and a failed write writes nothing.
    for key in (2**63, (0, -(2**63) - 1)):
        with pytest.raises(IndexError):
            x[key]
        with pytest.raises(IndexError):
            x[key] = 1
    np.testing.assert_array_equal(xp.to_cpu(x), a)
    # Any other argument that does not convert is a TypeError naming the reason (was RuntimeError
    # "std::bad_cast").
    with pytest.raises(TypeError, match="64-bit"):
        xp.roll(x, 2**64)


def test_an_empty_ellipsis_separates_advanced_indices():
    a = np.arange(27).reshape(3, 3, 3)
    x = xp.asarray(a)
    for key in ((slice(None), [0, 1, 2], ..., [0, 1, 2]), (slice(None), 0, ..., [[-1]]), ([0, 1], ..., [1, 2])):
        np.testing.assert_array_equal(xp.to_cpu(x[key]), a[key])
        y, b = xp.asarray(a.copy()), a.copy()
        v = np.arange(a[key].size).reshape(a[key].shape) + 100
        y[key] = xp.asarray(v)
        b[key] = v
        np.testing.assert_array_equal(xp.to_cpu(y), b)


def test_nan_functions_and_array_equal_of_complex():
    c = np.array([1 + 1j, np.nan + 1j, 2 + 0j])
    assert complex(xp.nansum(xp.asarray(c))) == np.nansum(c)
    assert complex(xp.nanmean(xp.asarray(c))) == np.nanmean(c)
    n = xp.asarray(np.array([np.nan + 1j]))
    assert xp.array_equal(n, n, equal_nan=True)


def test_histogram_of_uint64_and_one_bin():
    u = np.array([2**63, 2**63 + 2**62, 2**64 - 2**11], np.uint64)
    counts, edges = xp.histogram(xp.asarray(u), bins=2)
    want_counts, want_edges = np.histogram(u, bins=2)
    np.testing.assert_array_equal(xp.to_cpu(counts), want_counts)
    np.testing.assert_array_equal(xp.to_cpu(edges), want_edges)
    with pytest.raises(ValueError, match="too many bins"):
        xp.histogram(xp.asarray(np.array([1e17])), bins=1)
    with pytest.raises(TypeError):
        xp.bincount(xp.asarray(np.array([0, 1])), weights=xp.asarray(np.array([1 + 2j, 3j])))


def test_complex_pow_of_a_zero_base():
    with np.errstate(all="ignore"):
        b = np.array([1 + 2j, 0.5, 1j, -1 + 1j, 0])
        got = xp.to_cpu(xp.pow(xp.asarray(np.zeros(5, complex)), xp.asarray(b)))
        np.testing.assert_array_equal(got, np.power(np.zeros(5, complex), b))


def test_out_is_returned_itself():
    a = xp.asarray(np.arange(3.0))
    o = xp.zeros(3, device=a.device)  # arrays from NumPy live on the CPU
    for r in (xp.add(a, 1, out=o), xp.sin(a, out=o), xp.clip(a, 0, 1, out=o), xp.clip(a, out=o),
              xp.where(a > 0, a, 0, out=o), xp.fma(a, a, a, out=o)):
        assert r is o
    np.testing.assert_array_equal(xp.to_cpu(o), np.arange(3.0) ** 2 + np.arange(3.0))
    assert xp.add(a, 1) is not a


@pytest.mark.parametrize("x", [np.array(5), np.array([1, 2], np.int8)])
def test_repeat_of_0d_and_diff_with_n_0(x):
    if x.ndim == 0:
        for axis in (0, -1):
            np.testing.assert_array_equal(xp.to_cpu(xp.repeat(xp.asarray(x), 2, axis=axis)), np.repeat(x, 2, axis=axis))
    else:
        r = xp.diff(xp.asarray(x), n=0, append=3)
        np.testing.assert_array_equal(xp.to_cpu(r), np.diff(x, n=0, append=3))
        assert r.dtype == xp.int8


def test_setitem_drops_leading_unit_axes_of_the_values():
    b = np.zeros((2, 3, 4))
    y = xp.asarray(b.copy())
    b[0] = np.ones((1, 1, 4))
    y[0] = xp.ones((1, 1, 4), device=y.device)  # y came from NumPy: the CPU
    b[:, [0, 2]] = np.full((1, 1, 2, 4), 5.0)
    y[:, [0, 2]] = xp.full((1, 1, 2, 4), 5.0, device=y.device)
    np.testing.assert_array_equal(xp.to_cpu(y), b)
    with pytest.raises(ValueError):
        y[0] = xp.ones((2, 1, 4), device=y.device)


def test_unique_of_complex_in_numpys_order():
    c = np.array([1 + 1j, complex(0, np.nan), 0j, complex(np.nan, -1), complex(2, np.nan), complex(np.nan, np.nan)])
    np.testing.assert_array_equal(xp.to_cpu(xp.unique_values(xp.asarray(c))), np.unique(c, equal_nan=False))


def test_norms_of_empty_inputs():
    assert float(xp.linalg.vector_norm(xp.zeros(0), ord=float("inf"))) == 0.0
    for shape in ((0, 0), (3, 0), (0, 3)):
        for ord in (2, 1, float("inf")):
            assert float(xp.linalg.matrix_norm(xp.zeros(shape), ord=ord)) == np.linalg.matrix_norm(np.zeros(shape), ord=ord)


@pytest.mark.parametrize("values,dtype", [([-2.5, 300.0], "uint8"), ([float("nan")], "int64"), ([float("inf")], "int64"),
                                          ([300], "uint8"), ([-1], "uint8"), ([2**63], "int64"), ([1j, 2], "float64"),
                                          ([1j, 2], "int32")])
def test_asarray_of_numbers_into_a_dtype_raises_as_numpy(values, dtype):
    with pytest.raises(Exception) as got:
        np.asarray(values, dtype=dtype)
    with pytest.raises(type(got.value)):
        xp.asarray(values, dtype=getattr(xp, dtype))


@pytest.mark.parametrize("values,dtype", [([2.5, -1.5], "int64"), ([3j, 0j], "bool"), ([True, 2], "int8"),
                                          ([1.5, 2], "bool"), ([1, 2], "complex64")])
def test_asarray_of_numbers_into_a_dtype_converts_as_numpy(values, dtype):
    want = np.asarray(values, dtype=dtype)
    got = xp.to_cpu(xp.asarray(values, dtype=getattr(xp, dtype)))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("values", [[2**63, 1], [2**63, -1], [2**63], [np.float32(1), np.float32(2)], [np.True_],
                                    [np.ones(2, np.float32)] * 2, [np.uint64(1), np.int64(1)], [np.int8(1), 2]])
def test_asarray_of_lists_takes_numpys_dtype(values):
    want = np.asarray(values)
    got = xp.to_cpu(xp.asarray(values))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_copy_false_iteration_and_dtype_types():
    for obj in ([1, 2], 5):
        with pytest.raises(ValueError):
            xp.asarray(obj, copy=False)
    with pytest.raises(TypeError):
        list(xp.asarray(5))
    assert [xp.to_cpu(r).tolist() for r in xp.asarray([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
    a = xp.asarray([1.7, 2.2])
    for t, want in ((np.float32, xp.float32), (np.bool_, xp.bool), (np.int8, xp.int8), (float, xp.float64),
                    (int, xp.int64), (complex, xp.complex128)):
        assert a.astype(t).dtype == want
        assert xp.asarray([1], dtype=t).dtype == want


def test_linspace_complex_and_rounding_methods():
    np.testing.assert_array_equal(xp.to_cpu(xp.linspace(0, 1, 5, dtype=xp.complex128)),
                                  np.linspace(0, 1, 5, dtype=np.complex128))
    v = np.array([15, 25, -15, 35, -25, 5, -5, 127, -128, 150, 250], np.int64)
    for t in (np.int64, np.int8, np.int16):
        w = v.astype(t)
        for d in (-1, -2, -3):
            got = xp.to_cpu(xp.asarray(w).round(d))
            assert got.dtype == t
            np.testing.assert_array_equal(got, np.round(w, d))
    assert xp.asarray([1.25 + 2.35j]).round(1).tolist() == np.round(np.array([1.25 + 2.35j]), 1).tolist()
    x = xp.asarray([1, 2])
    np.testing.assert_array_equal(xp.to_cpu(x.dot(3)), [3, 6])
    assert int(x.dot([3, 4])) == 11
    np.testing.assert_array_equal(xp.to_cpu(x.repeat([1, 2])), [1, 2, 2])
    assert x.take([]).shape == (0,)
    np.testing.assert_array_equal(xp.to_cpu(xp.asarray([[3, 1], [2, 0]]).argsort(axis=None)), [3, 1, 2, 0])


def test_save_load_paths_and_file_errors(tmp_path):
    xp.save(str(tmp_path / "a_noext"), xp.asarray([1, 2]))  # numpy.save appends .npy
    np.testing.assert_array_equal(np.load(tmp_path / "a_noext.npy"), [1, 2])
    xp.save(tmp_path / "b.npy", xp.asarray([3.0]))
    np.testing.assert_array_equal(xp.to_cpu(xp.load(tmp_path / "b.npy")), [3.0])
    with pytest.raises(xp.FileError) as e:
        xp.load(tmp_path / "missing.npy")
    assert "missing.npy" in str(e.value) and "None" not in str(e.value)
    caps = xp.__array_namespace_info__().capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]


def test_numpy_integers_as_axes():
    a = xp.asarray([[1, 2], [3, 4]])
    n = np.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(xp.to_cpu(a.sum(axis=np.int64(1))), n.sum(axis=1))
    np.testing.assert_array_equal(xp.to_cpu(xp.sum(a, axis=(np.int64(0), 1))), n.sum())
    np.testing.assert_array_equal(xp.to_cpu(xp.max(a, axis=np.int32(-1))), n.max(axis=-1))


@pytest.mark.parametrize("dt", [">i4", ">f8", ">c16", ">u2"])
def test_byte_swapped_numpy_arrays_come_in_as_native_copies(dt):
    n = np.arange(5, dtype=dt)[::2]
    got = xp.to_cpu(xp.asarray(n))
    assert got.dtype == n.dtype.newbyteorder("=")
    np.testing.assert_array_equal(got, n)
    with pytest.raises(ValueError):
        xp.asarray(n, copy=False)


def test_scalar_conversions_fill_and_swapaxes():
    for f in (int, float, complex):
        with pytest.raises(TypeError):
            f(xp.asarray([1]))  # only a 0-d array, as NumPy 2.4 and the standard
    assert bool(xp.asarray([1])) and int(xp.asarray(3)) == 3
    a = xp.zeros(3, dtype=xp.int32)
    a.fill(2.7)  # converted as astype converts, as NumPy's fill
    np.testing.assert_array_equal(xp.to_cpu(a), [2, 2, 2])
    with pytest.raises(ValueError):
        a.fill(xp.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError):
        xp.zeros((2, 3, 4)).swapaxes(0, 3)


def test_astype_copy_and_sort_kinds():
    a = xp.asarray([3.0, 1.0, 2.0])
    assert a.astype(xp.float64, copy=False) is a  # NumPy's: no conversion, the array itself
    assert a.astype(np.float32, copy=False).dtype == xp.float32
    assert a.astype(xp.float64) is not a
    for kind in (None, "quicksort", "mergesort", "heapsort", "stable"):
        np.testing.assert_array_equal(xp.to_cpu(a.argsort(kind=kind)), [1, 2, 0])
    b = a.copy()
    b.sort(kind="stable")
    np.testing.assert_array_equal(xp.to_cpu(b), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        a.argsort(kind="bogus")
    with pytest.raises(ValueError):
        a.astype(xp.int8, casting="safe")


def test_integers_that_do_not_fit_raise_overflowerror_as_numpy():
    # NumPy raises OverflowError where an integer does not fit the integer dtype it must take; xp's
    # xp.OverflowError is that and an xp.TypeError (what it raised before).
    u8 = xp.asarray([1, 2], dtype=xp.uint8)
    for f in (lambda: u8 + 300, lambda: xp.add(u8, 256), lambda: u8 - (-2**40), lambda: xp.full(3, 300, dtype=xp.uint8),
              lambda: xp.asarray(300, dtype=xp.uint8), lambda: xp.arange(-3, 5, dtype=xp.uint8),
              lambda: xp.copyto(u8, 256)):
        with pytest.raises(OverflowError) as e:
            f()
        assert isinstance(e.value, xp.TypeError) and isinstance(e.value, xp.OverflowError)
    for f in (lambda: np.asarray([1, 2], dtype=np.uint8) + 300, lambda: np.full(3, 300, dtype=np.uint8),
              lambda: np.arange(-3, 5, dtype=np.uint8)):
        with pytest.raises(OverflowError):  # NumPy's type for the same calls
            f()
    np.testing.assert_array_equal(xp.to_cpu(u8), [1, 2])  # nothing written
    with pytest.raises(xp.TypeError) as e:
        xp.asarray([1.0]) & 1
    assert not isinstance(e.value, OverflowError)


def test_python_ints_beyond_64_bits():
    # Beside a float or complex array, a float (NumPy converts it so); beside an integer or bool
    # array, OverflowError (NumPy's "Python int too large to convert to C long").
    a = np.array([1.0, 2.0], dtype=np.float32)
    x = xp.asarray(a)
    for big in (2**70, -2**70, 2**64):
        for r, ref in ((x + big, a + big), (big - x, big - a), (xp.maximum(x, big), np.maximum(a, big)),
                       (xp.where(x > 1, x, big), np.where(a > 1, a, big))):
            assert r.dtype == xp.float32
            np.testing.assert_array_equal(xp.to_cpu(r), ref)
    c = np.array([1 + 1j])
    np.testing.assert_array_equal(xp.to_cpu(xp.asarray(c) * 2**70), c * 2**70)
    with pytest.raises(OverflowError):
        x * 2**1024  # beyond float64, as NumPy
    for t in (xp.int64, xp.uint64, xp.bool):
        with pytest.raises(OverflowError):
            xp.asarray([1, 0], dtype=t) + 2**70
    with pytest.raises(OverflowError):
        xp.asarray([1], dtype=xp.uint64) + 2**64
    y = xp.zeros(2)
    y[0] = 2**70
    assert float(y[0]) == float(2**70)
    # clip drops a bound past an integer array's range on its own side, as NumPy.
    u8 = np.array([1, 2], dtype=np.uint8)
    for lo, hi in ((0, 2**70), (-2**70, 1), (-2**70, 2**70)):
        r = xp.clip(xp.asarray(u8), lo, hi)
        assert r.dtype == xp.uint8
        np.testing.assert_array_equal(xp.to_cpu(r), np.clip(u8, lo, hi))
    with pytest.raises(OverflowError):
        xp.clip(xp.asarray(u8), 2**70, None)


def test_asarray_and_pad_keep_the_items_a_sequence_makes():
    # range and sequence classes make their items as they are indexed: xp holds them while it
    # reads them (it read freed objects before: wrong values, or a crash).
    np.testing.assert_array_equal(xp.to_cpu(xp.asarray(range(1000, 1004))), np.arange(1000, 1004))

    class Made:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i >= 4:
                raise IndexError
            return [float(i) + 0.5 + 1e-9, float(2**40 + i)]

    for _ in range(3):
        np.testing.assert_array_equal(xp.to_cpu(xp.asarray(Made())), np.asarray(Made()))
    a = np.arange(4).reshape(2, 2)
    for width in (xp.asarray([[1, 0], [0, 1]]), np.array([1, 2]), [np.int64(1), np.int64(0)], range(1, 3),
                  ((1, 2), (0, 1))):
        ref = np.pad(a, np.asarray(xp.to_cpu(width)) if isinstance(width, xp.Array) else width)
        np.testing.assert_array_equal(xp.to_cpu(xp.pad(xp.asarray(a), width)), ref)


def test_writes_into_a_broadcast_view_are_refused():
    # NumPy's broadcast_to views are read-only; writing one element would write the source's.
    src = xp.asarray([1.0, 2.0, 3.0])
    b = xp.broadcast_to(src, (2, 3))
    for write in (lambda: b.__setitem__((1, 0), 100), lambda: b.__setitem__(0, 5.0),
                  lambda: b.__setitem__(xp.asarray([True, False]), 7.0), lambda: xp.copyto(b, 1.0)):
        with pytest.raises(ValueError):
            write()
    np.testing.assert_array_equal(xp.to_cpu(src), [1.0, 2.0, 3.0])
    one = xp.broadcast_to(src[:1], (1, 1))  # no axis repeats an element: writable
    one[0, 0] = 9.0
    assert float(src[0]) == 9.0


def test_operators_take_lists_and_tuples_as_numpy_does():
    a = np.array([1.0, 2.0, 3.0])
    x = xp.asarray(a)
    for r, ref in ((x == [1, 2, 4], a == [1, 2, 4]), (x != (1, 5, 3), a != (1, 5, 3)), (x + [1, 1, 1], a + [1, 1, 1]),
                   ([2, 2, 2] > x, np.array([2, 2, 2]) > a), (x * [[1], [2]], a * [[1], [2]])):
        assert isinstance(r, xp.Array)
        np.testing.assert_array_equal(xp.to_cpu(r), ref)


def test_dtypes_compare_with_what_names_them():
    x = xp.asarray(np.zeros(2, dtype=np.float32))
    assert x.dtype == np.float32 and x.dtype == np.dtype("float32") and x.dtype == "float32"
    assert x.dtype != np.float64 and x.dtype != "int32" and not (x.dtype == None)  # noqa: E711
    assert x.dtype != object() and x.dtype != "no such dtype"
    assert xp.float64 == float and xp.int64 == int and xp.bool == bool and xp.complex128 == complex
    assert x.dtype in (np.float16, np.float32)


def test_matmul_in_place_needs_the_shape_of_a():
    y = xp.ones((2, 2))
    with pytest.raises(ValueError):
        y @= xp.ones((2, 1))
    np.testing.assert_array_equal(xp.to_cpu(y), np.ones((2, 2)))
    z = xp.ones((3, 2))
    z @= xp.ones((2, 2))
    np.testing.assert_array_equal(xp.to_cpu(z), np.full((3, 2), 2.0))


def test_mean_in_an_integer_dtype_linspace_of_bool_and_choice_of_a_large_population():
    a = np.array([[1, 2, 4], [-1, -2, -4]])
    x = xp.asarray(a)
    for dt in (np.int64, np.int8, "int16"):
        for kw in ({}, {"axis": 1}, {"axis": 0, "keepdims": True}):
            r, ref = x.mean(dtype=dt, **kw), a.mean(dtype=dt, **kw)
            assert r.dtype == dt and r.shape == ref.shape
            np.testing.assert_array_equal(xp.to_cpu(r), ref)
    np.testing.assert_array_equal(xp.to_cpu(xp.linspace(0, 1, 5, dtype=xp.bool)), np.linspace(0, 1, 5, dtype=bool))
    np.testing.assert_array_equal(xp.to_cpu(xp.linspace(-1, 0, 3, dtype=xp.bool)), np.linspace(-1, 0, 3, dtype=bool))
    # choice(n) with replacement draws as choice(arange(n)) does, without making arange(n).
    g1, g2 = xp.random.default_rng(5), xp.random.default_rng(5)
    np.testing.assert_array_equal(xp.to_cpu(g1.choice(10, 6)), xp.to_cpu(g2.choice(xp.arange(10), 6)))
    big = xp.random.default_rng(1).choice(2**40, (2, 3))
    assert big.shape == (2, 3) and big.dtype == xp.int64
    v = xp.to_cpu(big)
    assert ((v >= 0) & (v < 2**40)).all() and len(set(v.ravel().tolist())) == 6


def test_numpy_forms_of_squeeze_sort_eye_searchsorted_and_python_protocols():
    import copy

    a = np.array([[3, 1], [2, 0]])
    x = xp.asarray(a)
    assert xp.squeeze(xp.zeros((1, 2, 1))).shape == np.squeeze(np.zeros((1, 2, 1))).shape
    np.testing.assert_array_equal(xp.to_cpu(xp.sort(x, axis=None)), np.sort(a, axis=None))
    np.testing.assert_array_equal(xp.to_cpu(xp.argsort(x, axis=None)), np.argsort(a, axis=None, stable=True))
    np.testing.assert_array_equal(xp.to_cpu(xp.eye(2, M=3)), np.eye(2, M=3))
    with pytest.raises(TypeError):
        xp.eye(2, 3, M=3)
    # searchsorted: complex values against a real array were cast (wrong answers): refused; an
    # integer beyond the dtype is below or above every element, as NumPy compares it.
    with pytest.raises(TypeError):
        xp.searchsorted(xp.asarray([0.0, 1.0, 1.0]), 1j)
    with pytest.raises(TypeError):
        xp.searchsorted(xp.asarray([0.0, 1.0]), xp.asarray([1j]))
    u8 = np.array([1, 2, 3], dtype=np.uint8)
    for v, side in ((-1, "left"), (300, "left"), (2**64 - 1, "right"), (-(2**63), "right")):
        assert int(xp.searchsorted(xp.asarray(u8), v, side=side)) == int(np.searchsorted(u8, v, side=side))
    # in, copy.copy, copy.deepcopy, format
    f = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert 3.0 in f and 5 not in f
    c = copy.copy(f)
    d = copy.deepcopy({"a": [f]})
    c[0, 0] = 9.0
    assert float(f[0, 0]) == 1.0 and d["a"][0].shape == (2, 2)
    assert f"{xp.asarray(3.14159):.2f}" == "3.14" and f"{f}" == str(f)
    with pytest.raises(TypeError):
        f"{f:.2f}"


def test_uniform_stays_below_high_in_every_float_dtype():
    # low + (high - low) u rounded to the dtype reached high (float16 [1, 2): one draw in 2000,
    # bfloat16 [100, 101): a quarter): those draws take the largest value below high.
    g = xp.random.default_rng(3)
    for lo, hi, dt in ((1, 2, xp.float16), (100, 101, xp.float32), (100, 101, xp.bfloat16), (-3, -2, xp.float16)):
        v = xp.to_cpu(g.uniform(lo, hi, size=200_000, dtype=dt).astype(xp.float64))
        assert v.min() >= lo and v.max() < hi, (dt, v.min(), v.max())
        assert (v > lo + 0.4 * (hi - lo)).any()  # the top of the range is still drawn (bfloat16: 100.5)


def test_fill_converts_as_numpy_converts_a_python_number():
    cases = [(np.int8, 300), (np.uint8, -1), (np.int32, 2**40), (np.int32, float("nan")), (np.float64, 2 + 1j),
             (np.int8, 2.7), (np.int8, -2.7), (np.int8, 1e10), (np.uint8, -1.5), (np.bool_, 5), (np.int8, np.int64(300)),
             (np.float16, 1e6), (np.uint64, 2**64 - 1), (np.int8, float("inf")), (np.complex64, 1 + 2j)]
    for dt, v in cases:
        ref = np.zeros(2, dt)
        x = xp.asarray(np.zeros(2, dt))
        try:
            ref.fill(v)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            with pytest.raises(type(e)):
                x.fill(v)
            np.testing.assert_array_equal(xp.to_cpu(x), np.zeros(2, dt))  # nothing written
            continue
        x.fill(v)
        np.testing.assert_array_equal(xp.to_cpu(x), ref)


def test_asarray_stacks_a_list_of_xp_arrays_as_numpy_does():
    a, b = np.array([1.0, 2.0]), np.array([3, 4])
    r = xp.asarray([xp.asarray(a), xp.asarray(b)])
    ref = np.asarray([a, b])
    assert r.dtype == ref.dtype and r.shape == ref.shape
    np.testing.assert_array_equal(xp.to_cpu(r), ref)
    assert xp.asarray((xp.asarray(a), xp.asarray(a)), dtype=xp.float32).dtype == xp.float32
    assert xp.asarray([[xp.asarray(a)] * 2] * 3).shape == (3, 2, 2)
    with pytest.raises(ValueError):  # ragged, as NumPy
        xp.asarray([xp.asarray(a), xp.asarray([1.0])])
    with pytest.raises(ValueError):
        xp.asarray([xp.asarray(a)], copy=False)


def test_numpy_dtype_codes_are_dtypes():
    x = xp.asarray([1.5, 2.5])
    for code in ["f4", "<f8", "=f2", "|b1", "?", "e", "d", "F", "D", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q",
                 "i1", "u8", "c8", "c16", "float", "int", "complex", "double", "single", "half", "longlong", "intp"]:
        assert x.astype(code).dtype == np.dtype(code), code
        assert xp.zeros(1, dtype=code).dtype == code
    for bad in [">f4", "g", "M8", "U"]:  # big-endian, long double, datetime, str: not xp's
        with pytest.raises(TypeError):
            x.astype(bad)


def test_integers_endpoint_and_dtype_in_numpy_order_and_trace_of_too_few_axes():
    g = xp.random.default_rng(1)
    v = xp.to_cpu(g.integers(0, 3, 20000, endpoint=True))
    assert set(v.tolist()) == {0, 1, 2, 3}
    assert g.integers(0, 5, 3, np.int32).dtype == xp.int32
    r = g.integers(0, 255, 4000, xp.uint8, True)
    assert r.dtype == xp.uint8 and int(xp.max(r)) <= 255
    with pytest.raises(ValueError):
        g.integers(0, 2**63 - 1, 2, endpoint=True)
    for x in (xp.asarray(1.0), xp.asarray([1.0])):
        with pytest.raises(ValueError):
            x.trace()
        with pytest.raises(ValueError):
            x.diagonal()


def test_numpy_scalars_as_integer_and_fill_arguments():
    a = np.array([[1, 2], [3, 4]])
    x = xp.asarray(a)
    np.testing.assert_array_equal(xp.to_cpu(xp.roll(x, 1, axis=np.int64(1))), np.roll(a, 1, axis=1))
    np.testing.assert_array_equal(xp.to_cpu(xp.roll(x, np.int64(1))), np.roll(a, 1))
    np.testing.assert_array_equal(xp.to_cpu(xp.roll(x, True)), np.roll(a, True))
    np.testing.assert_array_equal(xp.to_cpu(xp.repeat(x, np.int64(2))), np.repeat(a, 2))
    f = xp.full(3, np.float32(1))
    assert f.dtype == xp.float32 and f.dtype == np.full(3, np.float32(1)).dtype
    assert xp.full(3, np.float32(1), dtype=xp.float64).dtype == xp.float64
    np.testing.assert_array_equal(xp.to_cpu(xp.full_like(x, np.int8(3))), np.full_like(a, 3))
    np.testing.assert_array_equal(xp.to_cpu(xp.arange(np.int64(3))), np.arange(3))
    with pytest.raises(TypeError):
        xp.repeat(x, True)


def test_comparisons_with_none_and_numpy_reads_xp_dtypes():
    a = np.array([[1.0, 2.0]])
    x = xp.asarray(a)
    for r, ref in ((x == None, a == None), (x != None, a != None)):  # noqa: E711
        assert isinstance(r, xp.Array) and r.dtype == xp.bool and r.shape == ref.shape
        np.testing.assert_array_equal(xp.to_cpu(r), ref)
    for t in (xp.float32, xp.int8, xp.uint64, xp.bool, xp.complex64, xp.float16):
        assert np.dtype(t) == np.dtype(t.name)
    assert np.zeros(2, x.dtype).dtype == np.float64
    assert np.dtype(xp.bfloat16).name == "bfloat16"  # ml_dtypes' (a test requirement)


def test_flags_and_offsets_take_numpy_scalars_and_ints_as_numpy_does():
    a = np.arange(6.0).reshape(2, 3)
    x = xp.asarray(a)
    for flag in (np.True_, 1, True):
        assert xp.sum(x, axis=1, keepdims=flag).shape == np.sum(a, axis=1, keepdims=bool(flag)).shape == (2, 1)
        assert x.mean(axis=0, keepdims=flag).shape == (1, 3)
    for flag in (np.False_, 0):
        assert xp.max(x, keepdims=flag).shape == ()
    np.testing.assert_array_equal(xp.to_cpu(xp.sort(x, axis=1, descending=np.True_)), -np.sort(-a, axis=1))
    np.testing.assert_array_equal(xp.to_cpu(xp.argsort(x, stable=1)), np.argsort(a, stable=True))
    np.testing.assert_array_equal(xp.to_cpu(xp.linspace(0, 1, 5, endpoint=np.False_)), np.linspace(0, 1, 5, endpoint=False))
    np.testing.assert_array_equal(xp.to_cpu(xp.tril(x, k=np.int64(1))), np.tril(a, k=1))
    np.testing.assert_array_equal(xp.to_cpu(xp.triu(x, k=np.int32(-1))), np.triu(a, k=-1))
    # A float, None or a str is no flag (NumPy takes any object; xp refuses what is surely a mistake).
    for bad in (1.0, None, "yes"):
        with pytest.raises(TypeError):
            xp.sum(x, keepdims=bad)
    with pytest.raises(TypeError):
        xp.tril(x, k=1.0)
