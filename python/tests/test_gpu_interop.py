"""Zero-copy interop with the GPU libraries where they are installed (CuPy, PyTorch): pointer
equality both ways, through DLPack and the CUDA array interface; values checked on the host."""

import numpy as np
import pytest

import xp


def ptr(a):
    return xp._xp._data_pointer(a)


def test_gpu_round_trip(xp_gpu):
    a = xp.asarray([1.0, 2.0], device=xp_gpu)
    assert a.device == xp_gpu
    assert xp.to_cpu(a * 2).tolist() == [2.0, 4.0]
    cai = a.__cuda_array_interface__
    assert cai["data"][0] == ptr(a)
    assert a.__dlpack_device__() == (2, 0)


def test_cupy_both_ways(xp_gpu):
    cp = pytest.importorskip("cupy")
    c = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    a = xp.asarray(c)  # DLPack (CuPy speaks both; DLPack is tried first)
    assert a.device == xp_gpu and ptr(a) == c.data.ptr
    b = xp.from_dlpack(c)
    assert ptr(b) == c.data.ptr
    np.testing.assert_array_equal(xp.to_cpu(a * 2), cp.asnumpy(c) * 2)
    back = cp.asarray(a)  # CuPy reads __cuda_array_interface__
    assert back.data.ptr == ptr(a)
    d = cp.from_dlpack(a)
    assert d.data.ptr == ptr(a)
    r = xp.sum(a)
    assert float(r) == float(c.sum())


def test_torch_both_ways(xp_gpu):
    torch = pytest.importorskip("torch")
    t = torch.arange(10, dtype=torch.float64, device="cuda:0")
    a = xp.from_dlpack(t)
    assert ptr(a) == t.data_ptr()
    np.testing.assert_array_equal(xp.to_cpu(a + 1), t.cpu().numpy() + 1)
    u = torch.from_dlpack(a)
    assert u.data_ptr() == ptr(a)
    s = torch.as_tensor(xp.arange(4, dtype=xp.int32, device=xp_gpu), device="cuda:0")
    assert s.tolist() == [0, 1, 2, 3]


def test_raw_kernel_runs(xp_gpu):
    k = xp.RawKernel(
        'extern "C" __global__ void scale(float* x, float a, int n) {'
        " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }",
        "scale",
    )
    x = xp.ones(1000, dtype=xp.float32, device=xp_gpu)
    k((4,), (256,), (x, np.float32(3), np.int32(1000)))
    assert xp.to_cpu(x).tolist() == [3.0] * 1000
    s = xp.Stream(xp_gpu)
    k((4,), (256,), (x, np.float32(2), np.int32(1000)), stream=s)
    s.synchronize()
    assert float(xp.sum(x)) == 6000.0
    with pytest.raises(xp.CompileError) as e:
        xp.RawKernel('extern "C" __global__ void f() { nope(); }', "f").compile(xp_gpu)
    assert "nope" in e.value.log


def test_gpu_arrays_and_numpy(xp_gpu):
    n = np.linspace(0, 1, 1000, dtype=np.float32)
    a = xp.asarray(n, device=xp_gpu)
    assert a.device == xp_gpu
    np.testing.assert_array_equal(np.asarray(a), n)
    np.testing.assert_array_equal(xp.to_cpu(a * 2 + 1), n * 2 + 1)
    with pytest.raises(xp.DeviceMismatch):
        a + xp.asarray(n)
