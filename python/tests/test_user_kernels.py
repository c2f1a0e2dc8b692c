"""xp.ElementwiseKernel and xp.ReductionKernel as CuPy users write them: parameter lists and their
errors, placeholders, broadcasting, scalars, out=, several outputs, axis and keepdims; results
against NumPy, on the CPU (xp.asarray(..., device="cpu")) and, where there is one, on cuda:0."""

import numpy as np
import pytest

import xp


def _cpu_kernels():
    """Whether CUDA C++ kernels run on the CPU here: they need the host C++ compiler."""
    try:
        xp.ElementwiseKernel("T x", "T z", "z = x", "probe")(xp.zeros(1, device="cpu"))
        return True, ""
    except xp.CompileError as e:
        if e.log:  # the compiler ran and rejected the code: a real failure
            raise
        return False, str(e)


def _devices():
    ok, why = _cpu_kernels()
    devs = [pytest.param("cpu", marks=pytest.mark.skipif(not ok, reason=f"no CUDA C++ kernels on the CPU: {why}"))]
    devs.append(
        pytest.param("cuda:0", marks=pytest.mark.skipif(not xp.is_cuda_available(), reason="skipped: no GPU"))
    )
    return devs


DEVICES = _devices()


def data(shape, dtype, scale=0.37, shift=-5.0):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64) * scale + shift).astype(dtype).reshape(shape)


# ---- construction and call errors (no kernel runs) ---------------------------------------------


def test_exported():
    assert xp.ElementwiseKernel is xp._xp.ElementwiseKernel
    assert xp.ReductionKernel is xp._xp.ReductionKernel
    k = xp.ElementwiseKernel("T x, T y", "T z", "z = x * y + 1", "fma1")
    assert (k.name, k.nin, k.nout) == ("fma1", 2, 1)


@pytest.mark.parametrize(
    "in_params, out_params, error, text",
    [
        ("T x y", "T z", xp.ValueError, "'T x y'"),
        ("T x,, T y", "T z", xp.ValueError, "in_params"),
        ("flaot32 x", "T z", xp.TypeError, "unknown type name 'flaot32'"),
        ("float16 x", "T z", xp.TypeError, "float16"),
        ("T x", "T x", xp.ValueError, "twice"),
        ("T i", "T z", xp.ValueError, "'i'"),
    ],
)
def test_bad_parameter_lists(in_params, out_params, error, text):
    with pytest.raises(error, match=text):
        xp.ElementwiseKernel(in_params, out_params, "z = 1", "k")


def test_python_type_errors_are_also_builtin_ones():
    with pytest.raises(TypeError):
        xp.ElementwiseKernel("notatype x", "T z", "z = x", "k")
    with pytest.raises(ValueError):
        xp.ElementwiseKernel("T x y", "T z", "z = x", "k")


def test_call_errors_name_the_problem():
    k = xp.ElementwiseKernel("T x, T y", "T z", "z = x * y + 1", "fma1")
    a = xp.asarray(data((2, 3), np.float32), device="cpu")
    b = xp.asarray(data((2, 3), np.int32), device="cpu")
    with pytest.raises(xp.TypeError, match=r"placeholder T is float32 from 'x' but int32 from 'y'"):
        k(a, b)
    with pytest.raises(xp.ValueError, match="takes 2 inputs"):
        k(a)
    out = xp.asarray(np.full((3, 2), 7, np.float32), device="cpu")
    with pytest.raises(xp.ValueError, match=r"output 'z' has shape \(3, 2\)"):
        k(a, a, out=out)
    out64 = xp.asarray(np.full((2, 3), 7, np.float64), device="cpu")
    with pytest.raises(xp.TypeError, match="'z'"):
        k(a, a, out64)
    assert (np.asarray(out) == 7).all() and (np.asarray(out64) == 7).all()
    r = xp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "total")
    with pytest.raises(xp.ValueError, match="axis 2"):
        r(a, axis=2)
    with pytest.raises(ValueError, match="identity"):
        xp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", None, "total")


def test_source_shows_the_generated_code():
    k = xp.ElementwiseKernel("T x, T y", "T z", "z = x * y + 1", "fma1")
    a = xp.asarray(data((4,), np.float64), device="cpu")
    src = k.source(a, 2.0)
    assert "typedef double T;" in src and 'extern "C" __global__ void xpk_fma1(' in src
    r = xp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm", reduce_type="float64")
    src = r.source(xp.asarray(data((3, 4), np.float32), device="cpu"), axis=1)
    assert "typedef double _type_reduce;" in src and "l2norm_final" in src


# ---- results against NumPy ------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_elementwise_against_numpy(device):
    k = xp.ElementwiseKernel("T x, T y", "T z", "z = x * y + 1", "fma1")
    a, b = data((5, 7), np.float32), data((7,), np.float32, -0.11, 3)
    z = k(xp.asarray(a, device=device), xp.asarray(b, device=device))
    assert z.dtype == xp.float32 and z.shape == (5, 7)
    np.testing.assert_array_equal(xp.asnumpy(z), a * b + np.float32(1))
    # A weak Python scalar, a transposed input, out= written in place.
    out = xp.zeros((7, 5), dtype=xp.float32, device=device)
    r = k(xp.asarray(a, device=device).T, 2.5, out=out)
    np.testing.assert_array_equal(xp.asnumpy(out), a.T * np.float32(2.5) + np.float32(1))
    np.testing.assert_array_equal(xp.asnumpy(r), xp.asnumpy(out))
    # Several outputs: a tuple; `i` and a raw parameter (which gives no shape: size does).
    two = xp.ElementwiseKernel("raw T w, T x", "T s, int64 j", "s = w[_ind.size() - 1 - i] + x; j = i", "two")
    v = data((6,), np.float64)
    with pytest.raises(xp.ValueError, match="size"):
        two(xp.asarray(v, device=device), 0.5)
    s, j = two(xp.asarray(v, device=device), 0.5, size=6)
    np.testing.assert_array_equal(xp.asnumpy(s), v[::-1] + 0.5)
    np.testing.assert_array_equal(xp.asnumpy(j), np.arange(6))


@pytest.mark.parametrize("device", DEVICES)
def test_reduction_against_numpy(device):
    l2 = xp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    a = data((4, 5, 600), np.float64, 1e-3, -1)
    x = xp.asarray(a, device=device)
    np.testing.assert_allclose(float(l2(x)), np.linalg.norm(a.ravel()), rtol=1e-12)
    np.testing.assert_allclose(xp.asnumpy(l2(x, axis=2)), np.linalg.norm(a, axis=2), rtol=1e-12)
    got = l2(x, axis=(0, 2), keepdims=True)
    assert got.shape == (1, 5, 1)
    np.testing.assert_allclose(xp.asnumpy(got), np.sqrt((a * a).sum(axis=(0, 2), keepdims=True)), rtol=1e-12)
    isum = xp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "isum")
    i = data((30, 7000), np.int64, 3, -100)
    np.testing.assert_array_equal(xp.asnumpy(isum(xp.asarray(i, device=device), axis=1)), i.sum(axis=1))
    np.testing.assert_array_equal(int(isum(xp.asarray(i, device=device))), i.sum())
    # An empty reduction gives the identity.
    e = xp.zeros((3, 0), dtype=xp.float32, device=device)
    np.testing.assert_array_equal(xp.asnumpy(l2(e, axis=1)), np.zeros(3, np.float32))
