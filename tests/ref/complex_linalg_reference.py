#!/usr/bin/env python3
"""Reference answers for complex matmul and vecdot, from NumPy 2 (tests/test_complex_linalg.cpp runs this).

Usage:
  complex_linalg_reference.py DIR    writes DIR/data.bin (little-endian raw arrays, each at a multiple
                                     of 64 bytes) and DIR/cases.json, which describes them

Each case is an operation (matmul, or vecdot over an axis) of two operands in one dtype (complex64 or
complex128). An operand is a C-ordered base array (complex128 values in data.bin; for complex64 they
are complex64 values widened, so the test's narrowing is exact) and the views taken of it, in order:
  ["T"]                  matrix_transpose (the last two axes swapped)
  ["step", axis, s]      every s-th element along axis (s < 0: from the end, backwards)
The expected result is NumPy's matmul / vecdot (vecdot: sum(conj(x1) * x2), the standard's
definition) computed in clongdouble from those inputs and rounded to complex128, with a scale for
the error bound: the same operation on |x1| and |x2| (sum |x1| |x2| per output element), float64.

Exit status 3 when NumPy 2 is missing: the test then skips (or fails under XP_TEST_REQUIRE_NUMPY=1).
"""

import json
import os
import sys

try:
    import numpy as np
except ImportError as e:
    print(f"complex_linalg_reference.py: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"complex_linalg_reference.py: NumPy {np.__version__} found, NumPy 2 needed", file=sys.stderr)
    sys.exit(3)


def view(base, ops):
    v = base
    for op in ops:
        if op[0] == "T":
            v = np.swapaxes(v, -1, -2)
        elif op[0] == "step":
            idx = [slice(None)] * v.ndim
            idx[op[1]] = slice(None, None, op[2])
            v = v[tuple(idx)]
        else:
            raise ValueError(op)
    return v


# (name, op, a base shape, a views, b base shape, b views, vecdot axis)
MATMUL = [
    ("matrices", (4, 5), [], (5, 3), []),
    ("vector @ matrix", (5,), [], (5, 3), []),
    ("matrix @ vector", (4, 5), [], (5,), []),
    ("vector @ vector", (7,), [], (7,), []),
    ("broadcast batches", (2, 1, 4, 5), [], (3, 5, 6), []),
    ("one operand batched", (3, 4, 5), [], (5, 2), []),
    ("transposed views", (5, 4), [["T"]], (3, 5), [["T"]]),
    ("stepped views", (4, 10), [["step", 1, 2]], (10, 3), [["step", 0, 2]]),
    ("reversed views", (4, 5), [["step", 0, -1]], (5, 3), [["step", 1, -1]]),
    ("empty m", (0, 5), [], (5, 3), []),
    ("empty n", (4, 5), [], (5, 0), []),
    ("empty batch", (0, 3, 4), [], (4, 2), []),
    ("k = 0", (4, 0), [], (0, 3), []),
    ("larger", (40, 70), [], (70, 50), []),
    ("larger, transposed", (70, 40), [["T"]], (50, 70), [["T"]]),
    ("larger, batched and broadcast", (3, 1, 20, 30), [], (2, 30, 25), []),
    ("larger, stepped batch", (6, 20, 30), [["step", 0, 2]], (30, 24), [["step", 1, -2]]),
    ("larger, a transposed, b stepped", (3, 30, 20), [["T"]], (3, 30, 50), [["step", 2, 2]]),
]
VECDOT = [
    ("vectors", (7,), [], (7,), [], -1),
    ("rows against one vector", (3, 5), [], (5,), [], -1),
    ("broadcast batches", (2, 1, 6), [], (4, 6), [], -1),
    ("axis 0", (6, 3), [], (6, 3), [], 0),
    ("stepped", (3, 10), [["step", 1, 2]], (3, 10), [["step", 1, -2]], -1),
    ("transposed", (5, 3), [["T"]], (3, 5), [], -1),
    ("long", (1000,), [], (1000,), [], -1),
    ("long rows", (2, 300), [], (2, 300), [["step", 1, -1]], -1),
    ("empty rows", (0, 5), [], (0, 5), [], -1),
    ("k = 0", (3, 0), [], (3, 0), [], -1),
]


def main():
    out_dir = sys.argv[1]
    rng = np.random.default_rng(20261206)
    chunks, offset = [], 0

    def put(arr):
        nonlocal offset
        raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        at = offset
        chunks.append(raw)
        pad = (-len(raw)) % 64
        chunks.append(b"\0" * pad)
        offset += len(raw) + pad
        return at

    cases = []
    for dtype in ("complex64", "complex128"):
        rows = [("matmul",) + c + (None,) for c in MATMUL] + [("vecdot",) + c for c in VECDOT]
        for op, name, ash, aops, bsh, bops, axis in rows:
            bases = []
            for sh in (ash, bsh):
                n = int(np.prod(sh))
                z = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(dtype).astype(np.complex128)
                bases.append(z.reshape(sh))
            a, b = view(bases[0], aops), view(bases[1], bops)
            al, bl = a.astype(np.clongdouble), b.astype(np.clongdouble)
            if op == "matmul":
                want = np.matmul(al, bl)
                scale = np.matmul(np.abs(a), np.abs(b))
                k = a.shape[-1]
            else:
                want = np.vecdot(al, bl, axis=axis)
                scale = np.vecdot(np.abs(a), np.abs(b), axis=axis)
                k = np.broadcast_shapes(a.shape, b.shape)[axis]
                # NumPy's own complex vecdot agrees (conj of the first operand).
                assert np.allclose(np.vecdot(a, b, axis=axis), np.sum(np.conj(a) * b, axis=axis))
            want = np.asarray(want).astype(np.complex128)
            scale = np.asarray(scale, dtype=np.float64)
            cases.append({
                "name": f"{op} {dtype} {name}",
                "op": op,
                "dtype": dtype,
                "axis": axis,
                "k": int(k),
                "a": {"shape": list(ash), "views": aops, "offset": put(bases[0])},
                "b": {"shape": list(bsh), "views": bops, "offset": put(bases[1])},
                "want": {"shape": list(want.shape), "offset": put(want)},
                "scale": {"offset": put(scale)},
            })
    with open(os.path.join(out_dir, "data.bin"), "wb") as f:
        f.write(b"".join(chunks))
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
