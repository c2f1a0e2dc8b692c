#!/usr/bin/env python3
"""Reference answers for xp::fft, from NumPy 2's numpy.fft (tests/test_fft.cpp runs this).

Usage:
  fft_reference.py DIR    writes DIR/data.bin (little-endian raw arrays, each at a multiple of 64
                          bytes) and DIR/cases.json, which describes them

Each case is one call of a numpy.fft function (fft, ifft, rfft, irfft, hfft, ihfft, fftn, ifftn,
rfftn, irfftn) on an input of one dtype (float32, float64, complex64, complex128) with its arguments
(n, axis, s, axes, norm). The input is stored as complex128 (real inputs: their values in the real
parts) holding values of the input's dtype, so the test's narrowing is exact. The expected result is
NumPy's answer computed in long double (numpy.fft computes clongdouble inputs in that precision)
and rounded to complex128, with its 2-norm (the error bound's scale) and the length N of the whole
transform (the product of the lengths along the axes transformed). Its dtype is what NumPy gives
for the input's dtype.

Also fftfreq and rfftfreq (exact float64 values) for a few n and d.

Exit status 3 when NumPy 2 is missing: the test then skips (or fails under XP_TEST_REQUIRE_NUMPY=1).
"""

import json
import os
import sys

try:
    import numpy as np
except ImportError as e:
    print(f"fft_reference.py: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"fft_reference.py: NumPy {np.__version__} found, NumPy 2 needed", file=sys.stderr)
    sys.exit(3)

rng = np.random.default_rng(20261206)
blob = bytearray()


def put(a):
    a = np.ascontiguousarray(a)
    while len(blob) % 64:
        blob.append(0)
    off = len(blob)
    blob.extend(a.tobytes())
    return off


def make_input(dtype, shape):
    dt = np.dtype(dtype)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


COMPLEX_OUT = {"fft", "ifft", "rfft", "ihfft", "fftn", "ifftn", "rfftn"}
cases = []


def add(func, dtype, shape, **kw):
    x = make_input(dtype, shape)
    fn = getattr(np.fft, func)
    args = {k: (tuple(v) if isinstance(v, list) else v) for k, v in kw.items()}
    got = fn(x, **args)  # NumPy's own result in the input's precision: its dtype and shape
    wide = x.astype(np.clongdouble if x.dtype.kind == "c" else np.longdouble)
    exact = fn(wide, **args)
    out = exact.astype(np.complex128 if func in COMPLEX_OUT else np.float64)
    # The lengths transformed, as xp computes them (s, n, or the input's extents).
    if func in ("fft", "ifft", "rfft", "ihfft"):
        ax = kw.get("axis", -1)
        big_n = kw.get("n") or shape[ax]
    elif func in ("irfft", "hfft"):
        ax = kw.get("axis", -1)
        big_n = kw.get("n") or 2 * (shape[ax] - 1)
    else:
        big_n = int(np.prod([len_ for len_ in exact.shape])) if exact.size else 1
        if "s" in kw:
            big_n = int(np.prod([v if v != -1 else 1 for v in kw["s"]]))
    xin = x.astype(np.complex128)
    cases.append({
        "func": func, "dtype": str(x.dtype), "shape": list(shape),
        "kw": {k: v for k, v in kw.items()},
        "in": put(xin), "out": put(out), "out_shape": list(out.shape), "out_dtype": str(got.dtype),
        "norm2": float(np.sqrt(np.sum(np.abs(out.astype(np.complex128)) ** 2))), "N": int(max(big_n, 1)),
    })


LENGTHS = [1, 2, 3, 5, 7, 8, 12, 16, 97, 1000, 1009, 1024]
NORMS = ["backward", "ortho", "forward"]
for n in LENGTHS:
    for dt in ("complex64", "complex128"):
        add("fft", dt, (n,))
        add("ifft", dt, (n,))
        add("irfft", dt, (n // 2 + 1,), n=n)
        add("hfft", dt, (n // 2 + 1,), n=n)
    for dt in ("float32", "float64"):
        add("fft", dt, (n,))
        add("rfft", dt, (n,))
        add("ihfft", dt, (n,))
# Long lengths: powers of two (the four-step path), a product of small primes, a large prime factor
# (Bluestein), a prime above the generic radix's bound.
for n in (4096, 8192, 65536, 6000, 2 * 10007, 1 << 17, 3 * 211):
    for dt in ("complex64", "complex128"):
        add("fft", dt, (n,))
        add("ifft", dt, (n,))
    for dt in ("float32", "float64"):
        add("rfft", dt, (n,))
    add("irfft", "complex128", (n // 2 + 1,), n=n)
# n shorter and longer than the input, every norm.
for norm in NORMS:
    for dt in ("float32", "complex128"):
        add("fft", dt, (10,), n=7, norm=norm)
        add("fft", dt, (10,), n=16, norm=norm)
        add("ifft", dt, (10,), n=13, norm=norm)
        add("rfft", "float64" if dt == "complex128" else dt, (9,), n=12, norm=norm)
        add("rfft", "float64", (12,), n=5, norm=norm)
        add("irfft", dt, (6,), n=9, norm=norm)
        add("irfft", dt, (6,), n=16, norm=norm)
        add("irfft", dt, (6,), norm=norm)
        add("hfft", dt, (6,), n=11, norm=norm)
        add("ihfft", "float64", (10,), n=8, norm=norm)
        add("fftn", dt, (4, 6), norm=norm)
        add("ifftn", dt, (3, 4, 5), s=[4, 6], axes=[0, 2], norm=norm)
        add("rfftn", "float64", (6, 8), norm=norm)
        add("irfftn", "complex128", (6, 5), norm=norm)
# Batches and axes.
for dt in ("float32", "float64", "complex64", "complex128"):
    add("fft", dt, (5, 12))
    add("fft", dt, (12, 3), axis=0)
    add("ifft", dt, (3, 20, 4), axis=1)
    add("fft", dt, (40, 1000))
    add("fft", dt, (9, 97), axis=-1)
    add("fft", dt, (3, 5000))
    add("fft", dt, (2, 1009), n=1500)
for dt in ("float32", "float64"):
    add("rfft", dt, (7, 16), axis=0)
    add("rfft", dt, (20, 30))
    add("rfft", dt, (3, 1001))
    add("ihfft", dt, (4, 9), axis=0)
for dt in ("complex64", "complex128"):
    add("irfft", dt, (7, 9), axis=0)
    add("irfft", dt, (20, 16))
    add("hfft", dt, (4, 9), axis=1, n=15)
# fftn and friends over axes lists, s cutting and padding, -1 in s.
for dt in ("float32", "float64", "complex64", "complex128"):
    add("fftn", dt, (4, 5, 6))
    add("fftn", dt, (4, 5, 6), axes=[2, 0])
    add("fftn", dt, (4, 5, 6), s=[3, 8])
    add("ifftn", dt, (4, 5, 6), s=[7, -1, 2], axes=[0, 1, 2])
    add("fftn", dt, (8, 16), axes=[-1])
for dt in ("float32", "float64"):
    add("rfftn", dt, (4, 5, 6))
    add("rfftn", dt, (4, 5, 6), axes=[0, 1])
    add("rfftn", dt, (4, 5, 6), s=[6, 7], axes=[2, 0])
for dt in ("complex64", "complex128"):
    add("irfftn", dt, (4, 5, 4))
    add("irfftn", dt, (4, 5, 6), axes=[1, 0])
    add("irfftn", dt, (4, 5, 6), s=[3, 9], axes=[0, 2])
# Empty inputs: an empty batch, an empty axis padded.
for dt in ("float64", "complex64"):
    add("fft", dt, (0, 8))
    add("fft", dt, (3, 0), n=4)
    add("rfft", "float64", (0, 6))
    add("irfft", "complex128", (0, 5))
    add("fftn", dt, (0, 3, 4), axes=[1, 2])

freqs = []
for n in (1, 2, 5, 8, 11, 100):
    for d in (1.0, 0.3, 2.5):
        freqs.append({"n": n, "d": d, "fftfreq": put(np.fft.fftfreq(n, d)), "rfftfreq": put(np.fft.rfftfreq(n, d))})

out_dir = sys.argv[1]
with open(os.path.join(out_dir, "data.bin"), "wb") as f:
    f.write(bytes(blob))
with open(os.path.join(out_dir, "cases.json"), "w") as f:
    json.dump({"cases": cases, "freqs": freqs}, f)
print(len(cases), "cases")
