#!/usr/bin/env python3
"""Reference answers for xp::linalg, from NumPy 2 (tests/test_linalg.cpp runs this).

Usage:
  linalg_reference.py DIR    writes DIR/data.bin (little-endian complex128 arrays, each at a multiple
                             of 64 bytes) and DIR/cases.json, which describes them

Each case names a function of xp::linalg, a dtype, its arguments, its inputs and NumPy's outputs:
  {"name", "fn", "dtype", "args": {...}, "inputs": [{"shape", "offset"}],
   "outputs": [{"shape", "offset", "dtype"}], "n": the size the error bounds scale with}
Inputs hold values of the case's dtype (float32 values widened, so the test's narrowing is exact),
stored as complex128 whatever the dtype. Outputs are NumPy's answers computed from those inputs in
float64 or complex128 (so that they are more accurate than what is tested), their shapes and dtypes
those of NumPy's answer in the case's own dtype. Integer inputs (dtype int64) check the promotion to
float64.

Exit status 3 when NumPy 2 is missing: the test then skips (or fails under XP_TEST_REQUIRE_NUMPY=1).
"""

import json
import os
import sys

try:
    import numpy as np
except ImportError as e:
    print(f"linalg_reference.py: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"linalg_reference.py: NumPy {np.__version__} found, NumPy 2 needed", file=sys.stderr)
    sys.exit(3)

DTYPES = ("float32", "float64", "complex64", "complex128")
WIDE = {"float32": np.float64, "float64": np.float64, "complex64": np.complex128, "complex128": np.complex128,
        "int64": np.float64}

rng = np.random.default_rng(20261206)


def rand(shape, dtype):
    z = rng.uniform(-1, 1, shape)
    if dtype.startswith("complex"):
        z = z + 1j * rng.uniform(-1, 1, shape)
    return np.asarray(z).astype(dtype)


def conj_t(a):
    return np.conj(np.swapaxes(a, -1, -2))


def well_conditioned(shape, dtype):
    """Random matrices plus n on the diagonal: condition numbers near 1."""
    n = shape[-1]
    a = rand(shape, dtype).astype(WIDE[dtype]) + n * np.eye(n)
    return a.astype(dtype)


def positive_definite(shape, dtype):
    n = shape[-1]
    b = rand(shape, dtype).astype(WIDE[dtype])
    return (b @ conj_t(b) + n * np.eye(n)).astype(dtype)


def hermitian_lower(shape, dtype):
    """A Hermitian matrix's lower triangle with other numbers above it (eigh reads the lower one)."""
    a = rand(shape, dtype)
    h = np.tril(a) + conj_t(np.tril(a, -1))
    if dtype.startswith("complex"):
        h = h.real + 1j * (h.imag - np.diagonal(h.imag, axis1=-2, axis2=-1)[..., None] * np.eye(shape[-1]))
    return (np.tril(h) + np.triu(rand(shape, dtype) * 7, 1)).astype(dtype)


def low_rank(shape, rank, dtype):
    """Integer factors, so that the product is exact in every dtype and its rank is exactly `rank`."""
    m, n = shape[-2], shape[-1]
    b = rng.integers(-3, 4, shape[:-2] + (m, rank))
    c = rng.integers(-3, 4, shape[:-2] + (rank, n))
    return (b @ c).astype(dtype)


def kept_cond(a, rtol):
    """The largest ratio of the largest singular value to a kept one (pinv's error grows with it)."""
    if a.size == 0:
        return 1.0
    s = np.linalg.svd(a.astype(WIDE[str(a.dtype)]), compute_uv=False)
    tol = max(a.shape[-2:]) * np.finfo(a.dtype).eps if rtol is None else rtol
    top = s.max(axis=-1, keepdims=True)
    kept = np.where(s > tol * top, s, np.inf)
    worst = np.where(top[..., 0] > 0, top[..., 0] / kept.min(axis=-1), 1.0)
    return float(np.max(worst))


def main():
    out_dir = sys.argv[1]
    chunks, offset = [], 0

    def put(arr):
        nonlocal offset
        raw = np.ascontiguousarray(np.asarray(arr, dtype=np.complex128)).astype("<c16").tobytes()
        at = offset
        chunks.append(raw)
        pad = (-len(raw)) % 64
        chunks.append(b"\0" * pad)
        offset += len(raw) + pad
        return at

    cases = []

    def case(name, fn, dtype, inputs, compute, args=None, n=None):
        """compute(*arrays) -> an array or a tuple of them; run on the dtype's inputs for the shapes and
        dtypes, and on their widened values for the numbers."""
        inputs = [np.asarray(x) for x in inputs]
        native = compute(*inputs)
        wide = compute(*[x.astype(WIDE[dtype]) if x.dtype.kind in "fc" or dtype == "int64" else x for x in inputs])
        if not isinstance(native, tuple):
            native, wide = (native,), (wide,)
        outs = []
        for nat, w in zip(native, wide):
            nat, w = np.asarray(nat), np.asarray(w)
            assert nat.shape == w.shape, (name, nat.shape, w.shape)
            outs.append({"shape": list(nat.shape), "dtype": str(nat.dtype), "offset": put(w)})
        if n is None:
            n = max([max(x.shape[-2:]) if x.ndim >= 2 else 1 for x in inputs] + [1])
        cases.append({"name": f"{fn} {dtype} {name}", "fn": fn, "dtype": dtype, "args": args or {},
                      "inputs": [{"shape": list(x.shape), "offset": put(x)} for x in inputs],
                      "outputs": outs, "n": int(n)})

    square_shapes = [("4x4", (4, 4)), ("1x1", (1, 1)), ("batch", (3, 5, 5)), ("rank-2 batch", (2, 3, 4, 4)),
                     ("0x0", (0, 0)), ("empty batch", (0, 3, 3)), ("many small, in parallel", (64, 16, 16)),
                     ("large", (2, 90, 90))]
    rect_shapes = [("tall", (5, 3)), ("wide", (3, 5)), ("square", (4, 4)), ("1x1", (1, 1)),
                   ("rank-2 batch", (2, 3, 6, 4)), ("no columns", (3, 0)), ("no rows", (0, 4)),
                   ("empty batch", (0, 4, 3)), ("many small, in parallel", (64, 12, 9)),
                   ("large", (70, 100))]
    for dt in DTYPES:
        for label, sh in square_shapes:
            a = positive_definite(sh, dt)
            case(label, "cholesky", dt, [a], lambda x: np.linalg.cholesky(x), {"upper": False})
            case(label + ", upper", "cholesky", dt, [a], lambda x: np.linalg.cholesky(x, upper=True), {"upper": True})
            w = well_conditioned(sh, dt)
            if label != "large":  # its determinant is past float32's range
                case(label, "det", dt, [w], np.linalg.det)
            case(label, "slogdet", dt, [w], lambda x: tuple(np.linalg.slogdet(x)))
            case(label, "inv", dt, [w], np.linalg.inv)
            h = hermitian_lower(sh, dt)
            case(label, "eigh", dt, [h], lambda x: tuple(np.linalg.eigh(x)))
            case(label, "eigvalsh", dt, [h], np.linalg.eigvalsh)
            for p in (0, 1, 2, 3, 5, -1, -2):
                if label in ("4x4", "batch", "0x0", "1x1"):
                    case(f"{label}, n = {p}", "matrix_power", dt, [w], lambda x, p=p: np.linalg.matrix_power(x, p),
                         {"n": p})
        for label, sh in rect_shapes:
            a = rand(sh, dt)
            for mode in ("reduced", "complete"):
                case(f"{label}, {mode}", "qr", dt, [a], lambda x, mode=mode: tuple(np.linalg.qr(x, mode=mode)),
                     {"mode": mode})
            for full in (True, False):
                case(f"{label}, full_matrices={full}", "svd", dt, [a],
                     lambda x, full=full: tuple(np.linalg.svd(x, full_matrices=full)), {"full_matrices": full})
            case(label, "svdvals", dt, [a], np.linalg.svdvals)
            case(label, "pinv", dt, [a], lambda x: np.linalg.pinv(x, rtol=None), {"cond": kept_cond(a, None)})
            case(label, "matrix_rank", dt, [a], lambda x: np.linalg.matrix_rank(x, rtol=None))
            for ord_ in ("fro", "nuc", 1, -1, 2, -2, "inf", "-inf"):
                if label in ("large", "many small, in parallel") or a.size == 0 and ord_ not in ("fro", "nuc"):
                    continue  # NumPy's max and min of nothing are an error
                o = {"inf": np.inf, "-inf": -np.inf}.get(ord_, ord_)
                for keep in (False, True):
                    case(f"{label}, ord {ord_}, keepdims={keep}", "matrix_norm", dt, [a],
                         lambda x, o=o, keep=keep: np.linalg.matrix_norm(x, ord=o, keepdims=keep),
                         {"ord": str(ord_), "keepdims": keep})
        for label, sh, rank in [("6x5 of rank 3", (6, 5), 3), ("batch of rank 2", (3, 4, 7), 2),
                                ("rank 1", (5, 5), 1), ("zero", (3, 4), 0)]:
            a = low_rank(sh, rank, dt)
            case(label, "matrix_rank", dt, [a], lambda x: np.linalg.matrix_rank(x, rtol=None))
            case(label, "pinv", dt, [a], lambda x: np.linalg.pinv(x, rtol=None), {"cond": kept_cond(a, None)})
        a = low_rank((6, 5), 3, dt) + rand((6, 5), dt) * 1e-3
        case("rtol 1e-2", "matrix_rank", dt, [a], lambda x: np.linalg.matrix_rank(x, rtol=1e-2), {"rtol": 1e-2})
        case("rtol 1e-2", "pinv", dt, [a], lambda x: np.linalg.pinv(x, rtol=1e-2),
             {"rtol": 1e-2, "cond": kept_cond(a, 1e-2)})
        # solve: b a vector, b matrices, broadcast batches.
        for label, ash, bsh in [("vector", (4, 4), (4,)), ("matrix", (4, 4), (4, 3)), ("1x1", (1, 1), (1, 1)),
                                ("batch, one vector", (3, 5, 5), (5,)), ("batch", (3, 5, 5), (3, 5, 2)),
                                ("broadcast batches", (2, 1, 4, 4), (3, 4, 2)), ("b broadcast", (2, 3, 4, 4), (4, 1)),
                                ("k = 0", (3, 3), (3, 0)), ("n = 0", (0, 0), (0, 2)),
                                ("empty batch", (0, 3, 3), (3, 1)), ("many small, in parallel", (64, 16, 16), (64, 16, 3)),
                                ("large", (120, 120), (120, 7))]:
            case(label, "solve", dt, [well_conditioned(ash, dt), rand(bsh, dt)], np.linalg.solve)
        x = rand((2, 3, 4), dt)
        for ord_ in (2, 1, "inf", "-inf", 0, 3, 0.5, -1):
            o = {"inf": np.inf, "-inf": -np.inf}.get(ord_, ord_)
            for axes in (None, [0], [-1], [0, 2]):
                for keep in (False, True):
                    case(f"ord {ord_}, axes {axes}, keepdims={keep}", "vector_norm", dt, [x],
                         lambda v, o=o, axes=axes, keep=keep: np.linalg.vector_norm(
                             v, ord=o, axis=None if axes is None else tuple(axes), keepdims=keep),
                         {"ord": str(ord_), "axes": axes, "keepdims": keep}, n=x.size)
        z = rand((4, 3), dt)
        z[1, 2] = 0
        case("with a zero, ord 0", "vector_norm", dt, [z], lambda v: np.linalg.vector_norm(v, ord=0),
             {"ord": "0", "axes": None, "keepdims": False})
        for label, s1, s2, axis in [("vectors", (3,), (3,), -1), ("rows and one vector", (4, 3), (3,), -1),
                                    ("axis 0", (3, 5), (3, 5), 0), ("broadcast", (2, 1, 3), (4, 3), -1)]:
            case(label, "cross", dt, [rand(s1, dt), rand(s2, dt)], lambda p, q, axis=axis: np.linalg.cross(p, q, axis=axis),
                 {"axis": axis})
        case("vectors", "outer", dt, [rand((3,), dt), rand((4,), dt)], np.linalg.outer)
        y = rand((2, 4, 5), dt)
        for off in (0, 1, -2, 4, 5, -4, -9):
            case(f"offset {off}", "diagonal", dt, [y], lambda v, off=off: np.linalg.diagonal(v, offset=off),
                 {"offset": off})
            case(f"offset {off}", "trace", dt, [y], lambda v, off=off: np.linalg.trace(v, offset=off), {"offset": off})
    # Integer inputs: promoted to float64 by the factorizations, kept by the functions that need none.
    ai = rng.integers(-4, 5, (3, 4, 4)) + 9 * np.eye(4, dtype=np.int64)
    case("promoted to float64", "det", "int64", [ai], np.linalg.det)
    case("promoted to float64", "inv", "int64", [ai], np.linalg.inv)
    case("promoted to float64", "solve", "int64", [ai, rng.integers(-4, 5, (4,))], np.linalg.solve)
    case("promoted to float64", "eigvalsh", "int64", [ai], np.linalg.eigvalsh)
    case("promoted to float64", "svdvals", "int64", [ai], np.linalg.svdvals)
    case("promoted to float64", "matrix_norm", "int64", [ai], lambda x: np.linalg.matrix_norm(x),
         {"ord": "fro", "keepdims": False})
    case("promoted to float64", "vector_norm", "int64", [ai], lambda x: np.linalg.vector_norm(x),
         {"ord": "2", "axes": None, "keepdims": False})
    case("n = 3, exact", "matrix_power", "int64", [ai], lambda x: np.linalg.matrix_power(x, 3), {"n": 3})
    case("exact", "cross", "int64", [ai[..., :3], ai[0, :, 1:]], lambda p, q: np.linalg.cross(p, q), {"axis": -1})
    case("exact", "trace", "int64", [ai], lambda x: np.linalg.trace(x), {"offset": 0})
    # Singular matrices (exact in every dtype): det 0 and slogdet (0, -inf), no error.
    sing = np.array([[[1, 2], [2, 4]], [[2, 1], [1, 3]], [[0, 0], [0, 0]]])
    for dt in DTYPES:
        case("singular", "det", dt, [sing.astype(dt)], np.linalg.det)
        case("singular", "slogdet", dt, [sing.astype(dt)], lambda x: tuple(np.linalg.slogdet(x)))

    with open(os.path.join(out_dir, "data.bin"), "wb") as f:
        f.write(b"".join(chunks))
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
