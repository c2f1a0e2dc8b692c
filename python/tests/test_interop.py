"""Zero-copy interop with NumPy both ways (pointer equality), DLPack, buffers, lifetimes."""

import array
import gc

import numpy as np
import pytest

import xp
import xp.testing


@pytest.fixture(autouse=True)
def _on_the_cpu():
    # These tests are about host memory shared with NumPy: arrays are made where a machine without a
    # GPU makes them, also on a GPU machine (test_gpu_interop.py covers device memory).
    with xp.testing.no_gpu():
        yield


def ptr(a):
    return xp._xp._data_pointer(a)


def test_numpy_to_xp_is_zero_copy():
    n = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = xp.asarray(n)
    assert ptr(a) == n.ctypes.data
    d = xp.from_dlpack(n)
    assert ptr(d) == n.ctypes.data
    n[0, 0] = 42
    assert float(a[0, 0]) == 42.0


def test_xp_to_numpy_is_zero_copy():
    a = xp.arange(10, dtype=xp.int32)
    n = np.asarray(a)
    assert n.ctypes.data == ptr(a)
    m = np.from_dlpack(a)
    assert m.ctypes.data == ptr(a)
    assert xp.to_cpu(a).ctypes.data == ptr(a)
    v = memoryview(a)
    assert v.format == "i" and v.shape == (10,)


def test_array_protocol_copy_and_dtype():
    a = xp.asarray([1.0, 2.0])
    c = a.__array__(copy=True)
    assert c.ctypes.data != ptr(a)
    assert a.__array__(dtype=np.float32).dtype == np.float32
    np.testing.assert_array_equal(np.add(a, 1), [2.0, 3.0])


def test_views_and_strides_survive():
    n = np.arange(20.0).reshape(4, 5)[::2, 1::2]
    a = xp.asarray(n)
    np.testing.assert_array_equal(xp.to_cpu(a), n)
    assert ptr(a) == n.ctypes.data


def test_export_outlives_the_producer():
    a = xp.arange(1000, dtype=xp.float64)
    n = np.from_dlpack(a)
    del a
    gc.collect()
    assert n[999] == 999.0
    m = np.arange(5.0)
    b = xp.asarray(m)
    del m
    gc.collect()
    assert xp.to_cpu(b).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_buffers_and_sequences():
    a = xp.asarray(array.array("h", [1, -2, 3]))
    assert a.dtype == xp.int16 and xp.to_cpu(a).tolist() == [1, -2, 3]
    b = xp.asarray(b"\x01\x02")
    assert b.dtype == xp.uint8
    assert xp.asarray([[1, 2], [3, 4]], dtype=xp.float32).shape == (2, 2)
    assert xp.asarray(3.5).shape == ()
    with pytest.raises(ValueError):
        xp.asarray([[1, 2], [3]])


def test_asarray_copy_rules():
    n = np.arange(3.0)
    assert ptr(xp.asarray(n, copy=True)) != n.ctypes.data
    with pytest.raises(ValueError):
        xp.asarray(n, dtype=xp.float32, copy=False)
    a = xp.asarray([1, 2])
    assert xp.asarray(a) is not None and ptr(xp.asarray(a)) == ptr(a)


def test_read_only_numpy_stays_read_only():
    n = np.arange(3.0)
    n.flags.writeable = False
    a = xp.asarray(n)
    with pytest.raises(ValueError):
        a[0] = 1.0


def test_dlpack_device_and_cuda_interface_on_cpu():
    a = xp.zeros(3)
    assert a.__dlpack_device__() == (1, 0)
    assert not hasattr(a, "__cuda_array_interface__")


def test_nested_sequence_edge_cases():
    assert xp.asarray([]).dtype == xp.float64 and xp.asarray([]).shape == (0,)
    with pytest.raises(ValueError):
        xp.asarray([1, [2]])
    assert xp.asarray([xp.asarray(1, dtype=xp.int8), xp.asarray(2, dtype=xp.int8)]).dtype == xp.int8
    assert xp.asarray([xp.asarray(1, dtype=xp.int8), 2.5]).dtype == xp.float64
    assert xp.asarray([[True, False]]).dtype == xp.bool
    assert xp.asarray([2**63]).dtype == xp.uint64
