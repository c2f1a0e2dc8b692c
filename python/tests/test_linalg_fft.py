"""xp.linalg and xp.fft from Python, against numpy.linalg and numpy.fft (on the default device: the
GPU where there is one): every name of the two extensions, the standard's signatures (keyword-only
arguments, named tuples), results within stated bounds, and LinAlgError's evidence."""

import inspect

import numpy as np
import pytest

import xp

LINALG_NAMES = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot",
    "trace", "vecdot", "vector_norm",
]
FFT_NAMES = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq",
    "fftshift", "ifftshift",
]
FLOATS = ["float32", "float64", "complex64", "complex128"]


def rng_matrix(shape, dtype, seed=0, spd=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(dtype)
    if spd:
        n = shape[-1]
        a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=dtype)
    return a


def eps(dtype):
    return np.finfo(np.dtype(dtype)).eps


def check_close(got, ref, tol):
    got = xp.asnumpy(got)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    scale = max(np.max(np.abs(ref)) if ref.size else 0.0, 1.0)
    err = np.max(np.abs(got - ref)) if ref.size else 0.0
    assert err <= tol * scale, (err, tol * scale)


def test_every_name_is_there():
    for name in LINALG_NAMES:
        assert callable(getattr(xp.linalg, name)), name
    for name in FFT_NAMES:
        assert callable(getattr(xp.fft, name)), name
    assert set(LINALG_NAMES) <= set(xp.linalg.__all__) and set(FFT_NAMES) == set(xp.fft.__all__)
    assert issubclass(xp.linalg.LinAlgError, xp.ValueError) and issubclass(xp.linalg.LinAlgError, ValueError)
    assert xp.linalg.matmul is xp.matmul and xp.linalg.vecdot is xp.vecdot


def test_keyword_only_arguments():
    a = xp.asarray(rng_matrix((3, 3), "float64", spd=True))
    with pytest.raises(TypeError):
        xp.linalg.cholesky(a, True)  # upper is keyword-only
    assert inspect.signature(xp.linalg.qr).parameters["mode"].kind == inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(TypeError):
        xp.fft.fft(xp.asarray(np.ones(4)), 8)  # n is keyword-only


@pytest.mark.parametrize("dtype", FLOATS)
def test_factorizations_against_numpy(dtype):
    a = rng_matrix((2, 3, 5, 5), dtype, seed=1)
    s = rng_matrix((2, 5, 5), dtype, seed=2, spd=True)
    b = rng_matrix((2, 3, 5, 2), dtype, seed=3)
    tol = 200 * eps(dtype)
    check_close(xp.linalg.solve(xp.asarray(a), xp.asarray(b)), np.linalg.solve(a, b), tol)
    check_close(xp.linalg.inv(xp.asarray(a)), np.linalg.inv(a), tol)
    check_close(xp.linalg.det(xp.asarray(a)), np.linalg.det(a), tol)
    check_close(xp.linalg.cholesky(xp.asarray(s)), np.linalg.cholesky(s), tol)
    sign, logabs = xp.linalg.slogdet(xp.asarray(a))
    rs, rl = np.linalg.slogdet(a)
    check_close(sign, rs, tol)
    check_close(logabs, rl, tol)
    w, v = xp.linalg.eigh(xp.asarray(s))
    check_close(w, np.linalg.eigvalsh(s), tol)
    vn = xp.asnumpy(v)
    check_close(xp.asarray(s @ vn), vn * xp.asnumpy(w)[..., None, :], tol)
    q, r = xp.linalg.qr(xp.asarray(a[0]))
    check_close(xp.matmul(q, r), a[0], tol)
    u, sv, vh = xp.linalg.svd(xp.asarray(a[0]), full_matrices=False)
    check_close(sv, np.linalg.svd(a[0], compute_uv=False), tol)
    check_close(xp.matmul(u * sv[..., None, :], vh), a[0], tol)
    check_close(xp.linalg.svdvals(xp.asarray(a)), np.linalg.svd(a, compute_uv=False), tol)
    check_close(xp.linalg.pinv(xp.asarray(a)), np.linalg.pinv(a), 1000 * eps(dtype))
    assert xp.asnumpy(xp.linalg.matrix_rank(xp.asarray(a))).tolist() == np.linalg.matrix_rank(a).tolist()


def test_rtol_as_an_array_is_a_tolerance_per_matrix():
    # The standard's rtol may be an array broadcast with the batch shape (x.shape[:-2]).
    a = np.random.default_rng(3).standard_normal((4, 5, 3))
    a[1, :, 2] = a[1, :, 0]  # rank 2
    r = np.array([1e-12, 0.5, 0.9, 1e-3])
    assert xp.asnumpy(xp.linalg.matrix_rank(xp.asarray(a), rtol=xp.asarray(r))).tolist() == \
        np.linalg.matrix_rank(a, rtol=r).tolist()
    check_close(xp.linalg.pinv(xp.asarray(a), rtol=xp.asarray(r)), np.linalg.pinv(a, rtol=r), 1000 * eps("float64"))
    # a 0-d array is one tolerance; a float32 one compares with float64 singular values
    assert xp.asnumpy(xp.linalg.matrix_rank(xp.asarray(a), rtol=xp.asarray(np.float32(0.5)))).tolist() == \
        np.linalg.matrix_rank(a, rtol=0.5).tolist()
    # the batch broadcasts up: one matrix, two tolerances, two results
    two = xp.linalg.pinv(xp.asarray(a[0]), rtol=xp.asarray(np.array([1e-9, 0.7])))
    assert two.shape == (2, 3, 5)
    check_close(two[0], np.linalg.pinv(a[0], rtol=1e-9), 1000 * eps("float64"))
    check_close(two[1], np.linalg.pinv(a[0], rtol=0.7), 1000 * eps("float64"))
    # empty: as the conformance suite asks (rtol of shape (0,) against a batch of none)
    assert xp.linalg.matrix_rank(xp.asarray(a[:0]), rtol=xp.asarray(np.zeros(0, np.float32))).shape == (0,)
    assert xp.linalg.pinv(xp.asarray(a[0]), rtol=xp.asarray(np.zeros(0, np.float32))).shape == (0, 3, 5)
    with pytest.raises(ValueError, match="does not broadcast with the batch shape"):
        xp.linalg.matrix_rank(xp.asarray(a), rtol=xp.asarray(np.ones(3)))
    for bad in (xp.asarray(np.array([True])), xp.asarray(np.ones(4, np.complex64)), True):
        with pytest.raises(TypeError, match="rtol"):
            xp.linalg.pinv(xp.asarray(a), rtol=bad)


def test_named_tuples_and_result_dtypes():
    a = xp.asarray(rng_matrix((4, 4), "complex64", spd=True))
    r = xp.linalg.eigh(a)
    assert r._fields == ("eigenvalues", "eigenvectors") and r.eigenvalues.dtype == xp.float32
    assert xp.linalg.qr(a)._fields == ("Q", "R")
    assert xp.linalg.slogdet(a)._fields == ("sign", "logabsdet") and xp.linalg.slogdet(a).logabsdet.dtype == xp.float32
    s = xp.linalg.svd(a)
    assert s._fields == ("U", "S", "Vh") and s.S.dtype == xp.float32 and s.U.shape == (4, 4)


def test_norms_and_the_rest_against_numpy():
    a = rng_matrix((3, 4, 5), "float64", seed=4)
    for ord_ in ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]:
        check_close(xp.linalg.matrix_norm(xp.asarray(a), ord=ord_), np.linalg.norm(a, ord=ord_, axis=(-2, -1)), 1e-12)
    for ord_ in [2, 1, 0, np.inf, -np.inf, 3.5]:
        check_close(xp.linalg.vector_norm(xp.asarray(a), axis=-1, ord=ord_), np.linalg.norm(a, ord=ord_, axis=-1), 1e-12)
    check_close(xp.linalg.vector_norm(xp.asarray(a)), np.array(np.linalg.norm(a.ravel())), 1e-12)
    check_close(xp.linalg.trace(xp.asarray(a), offset=1), np.trace(a, offset=1, axis1=-2, axis2=-1), 1e-12)
    check_close(xp.linalg.diagonal(xp.asarray(a), offset=-1), np.diagonal(a, offset=-1, axis1=-2, axis2=-1), 0)
    x, y = rng_matrix((4, 3), "float64", 5), rng_matrix((4, 3), "float64", 6)
    check_close(xp.linalg.cross(xp.asarray(x), xp.asarray(y)), np.cross(x, y), 1e-14)
    check_close(xp.linalg.outer(xp.asarray(x[0]), xp.asarray(y[1])), np.outer(x[0], y[1]), 0)
    sq = rng_matrix((2, 4, 4), "float64", 7)
    for n in [0, 1, 3, -2]:
        check_close(xp.linalg.matrix_power(xp.asarray(sq), n), np.linalg.matrix_power(sq, n), 1e-10)


def test_linalg_error_names_the_batch_entry():
    a = np.stack([np.eye(3)] * 5)
    a[3] = 0.0
    with pytest.raises(xp.linalg.LinAlgError) as e:
        xp.linalg.solve(xp.asarray(a), xp.asarray(np.ones((5, 3, 1))))
    assert e.value.batch_index == 3 and e.value.info > 0 and "3" in str(e.value)
    with pytest.raises(xp.linalg.LinAlgError):
        xp.linalg.cholesky(xp.asarray(-np.eye(2)))
    with pytest.raises(xp.ValueError):
        xp.linalg.inv(xp.asarray(np.ones((2, 3))))  # not square
    with pytest.raises(ValueError):
        xp.linalg.matrix_norm(xp.asarray(np.eye(2)), ord="bad")
    assert float(xp.linalg.det(xp.asarray(np.zeros((2, 2))))) == 0.0  # singular: det 0, no error


@pytest.mark.parametrize("dtype", FLOATS)
def test_fft_against_numpy(dtype):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 30)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = (x + 1j * rng.standard_normal((3, 30))).astype(dtype)
    cdt = np.result_type(dtype, np.complex64)
    tol = 50 * eps(dtype) * np.log2(64)
    for norm in ["backward", "ortho", "forward"]:
        check_close(xp.fft.fft(xp.asarray(x), norm=norm), np.fft.fft(x, norm=norm).astype(cdt), tol)
        check_close(xp.fft.ifft(xp.asarray(x), n=17, norm=norm), np.fft.ifft(x, n=17, norm=norm).astype(cdt), tol)
        check_close(xp.fft.fftn(xp.asarray(x), norm=norm), np.fft.fftn(x, norm=norm).astype(cdt), tol)
    got = xp.fft.fft(xp.asarray(x))
    assert got.dtype == getattr(xp, np.dtype(cdt).name)
    if np.dtype(dtype).kind == "f":
        check_close(xp.fft.rfft(xp.asarray(x), n=41), np.fft.rfft(x, n=41).astype(cdt), tol)
        check_close(xp.fft.rfftn(xp.asarray(x)), np.fft.rfftn(x).astype(cdt), tol)
        check_close(xp.fft.ihfft(xp.asarray(x)), np.fft.ihfft(x).astype(cdt), tol)
    else:
        check_close(xp.fft.irfft(xp.asarray(x), n=58), np.fft.irfft(x, n=58).astype(np.real(x).dtype), tol)
        check_close(xp.fft.hfft(xp.asarray(x)), np.fft.hfft(x).astype(np.real(x).dtype), tol)
        check_close(xp.fft.irfftn(xp.asarray(x), s=(3, 20), axes=(0, 1)), np.fft.irfftn(x, s=(3, 20), axes=(0, 1)).astype(np.real(x).dtype), tol)


def test_fft_helpers_against_numpy():
    for n in [1, 2, 7, 8]:
        check_close(xp.fft.fftfreq(n, d=0.5), np.fft.fftfreq(n, d=0.5), 0)
        check_close(xp.fft.rfftfreq(n), np.fft.rfftfreq(n), 0)
    assert xp.fft.fftfreq(4, dtype=xp.float32).dtype == xp.float32
    a = np.arange(24.0).reshape(4, 6)
    check_close(xp.fft.fftshift(xp.asarray(a)), np.fft.fftshift(a), 0)
    check_close(xp.fft.ifftshift(xp.asarray(a), axes=(1,)), np.fft.ifftshift(a, axes=(1,)), 0)
    with pytest.raises(ValueError):
        xp.fft.fft(xp.asarray(np.ones(4)), norm="bad")
    with pytest.raises(ValueError):
        xp.fft.fft(xp.asarray(np.ones(4)), n=0)
