#!/usr/bin/env python3
"""Reference answers for xp's complex elementwise operations (complex64 and complex128), from
NumPy 2 (tests/test_complex_elementwise.cpp runs this).

Usage:
  complex_reference.py DIR   writes DIR/data.bin (raw little-endian arrays, each at an offset that
                             is a multiple of 16) and DIR/cases.json, a list of cases:
                               {"op": xp's op name, "dtype": the complex dtype, "result": dtype,
                                "exact": bool, "n": elements, "inputs": [[dtype, offset], ...],
                                "expected": offset, "loose": offset or -1}
                             Exact operations (arithmetic, comparisons, round, the classifiers,
                             real / imag / conj, complex(re, im)) expect NumPy's bits in the same
                             dtype. The others expect the function computed in complex long double
                             (x87's 64-bit significand) and rounded once to the dtype: the test
                             measures xp's error in ulp against that. `loose` is a uint8 mask per
                             element: bit 0 / bit 1 = the sign of the real / imaginary part is left
                             unspecified by the standard.

Where NumPy departs from the Array API standard's special cases, the expected value is the
standard's (docs/semantics.md, "Complex numbers"): sign of a number with a NaN component is NaN;
expm1's infinities are exp's less one; and log1p and expm1 of finite values are computed here
accurately (NumPy's own formulas lose the digits near 0).

Exit status 3 when NumPy 2 is missing: the test then skips (or fails under
XP_TEST_REQUIRE_NUMPY=1).
"""

import json
import math
import os
import sys
import warnings

try:
    import numpy as np
except ImportError as e:
    print(f"complex_reference.py: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"complex_reference.py: NumPy {np.__version__} found, NumPy 2 needed", file=sys.stderr)
    sys.exit(3)

np.seterr(all="ignore")
warnings.simplefilter("ignore", RuntimeWarning)
if sys.byteorder != "little":
    raise SystemExit("complex_reference.py writes raw little-endian arrays")

CT = {"complex64": np.complex64, "complex128": np.complex128}
RT = {"complex64": np.float32, "complex128": np.float64}
LD = np.clongdouble
rng = np.random.default_rng(20261206)

UNARY_MATH = ["sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
              "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "abs", "sign"]
NP_NAME = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
           "atanh": "arctanh"}


def components(name):
    f = RT[name]
    fi = np.finfo(f)
    vals = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.7, -3.0, 1e-5, -1e-5, 30.0, -30.0,
            math.inf, -math.inf, math.nan, float(fi.smallest_subnormal), float(fi.tiny), float(fi.max),
            -float(fi.max), 1e18, math.pi / 2, 88.5 if f == np.float32 else 709.5]
    return np.array(vals, dtype=np.float64).astype(f)


def grid(name):
    c = components(name)
    re, im = np.meshgrid(c, c, indexing="ij")
    z = np.empty(re.size, dtype=CT[name])
    z.real = re.ravel()
    z.imag = im.ravel()
    return z


def random_values(name, n):
    f = RT[name]
    fi = np.finfo(f)
    emax = int(np.log2(float(fi.max)))
    parts = []
    # The unit square's neighbourhood, where most values live.
    parts.append((rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n)))
    # Magnitudes from 1e-8 to 1e8, and across the whole range.
    for lo, hi in ((-8, 8), (-emax + 2, emax - 2)):
        m = 2.0 ** rng.uniform(lo * (3.32 if hi == 8 else 1), hi * (3.32 if hi == 8 else 1), (2, n // 2))
        s = rng.choice([-1.0, 1.0], (2, n // 2))
        parts.append(m[0] * s[0] + 1j * m[1] * s[1])
    # Near the unit circle, near +-1 and +-i (branch points), and on and beside the branch cuts.
    t = rng.uniform(-math.pi, math.pi, n // 4)
    parts.append(np.exp(1j * t) * (1 + rng.choice([-1, 1], n // 4) * 2.0 ** rng.uniform(-50, -3, n // 4)))
    eps = 2.0 ** rng.uniform(-60, -2, (2, n // 4)) * rng.choice([-1.0, 1.0], (2, n // 4))
    for p in (1, -1, 1j, -1j):
        parts.append(p + eps[0] + 1j * eps[1])
    cut = rng.uniform(1, 8, n // 8) * rng.choice([-1.0, 1.0], n // 8)
    for side in (0.0, -0.0, 1e-30):
        z = np.empty(cut.size, dtype=np.complex128)
        z.real, z.imag = cut, side
        parts.append(z)
        z = np.empty(cut.size, dtype=np.complex128)
        z.real, z.imag = side, cut
        parts.append(z)
    return np.concatenate(parts).astype(CT[name])


def values(name):
    return np.concatenate([grid(name), random_values(name, 2000)])


def finite(z):
    return np.isfinite(z.real) & np.isfinite(z.imag)


def np_fn(op):
    return getattr(np, NP_NAME.get(op, op))


def accurate_log1p(z):
    x, y = z.real.astype(np.longdouble), z.imag.astype(np.longdouble)
    re = 0.5 * np.log1p(x * (2 + x) + y * y)
    far = np.hypot(1 + x, y)
    re = np.where((far < 0.5) | (far > 2), np.log(far), re)
    r = np.empty(z.shape, dtype=LD)
    r.real, r.imag = re, np.arctan2(y, 1 + x)
    return r


def accurate_expm1(z):
    x, y = z.real.astype(np.longdouble), z.imag.astype(np.longdouble)
    s = np.sin(y / 2)
    r = np.empty(z.shape, dtype=LD)
    r.real = np.expm1(x) * np.cos(y) - 2 * s * s
    r.imag = np.exp(x) * np.sin(y)
    big = x > 50
    e = np.exp(z.astype(LD))
    r.real = np.where(big, e.real - 1, r.real)
    r.imag = np.where(big, e.imag, r.imag)
    r.real = np.where((x == 0) & (y == 0), 0, r.real)  # the standard: expm1(+-0 + 0j) = +0 + 0j
    return r


def math_reference(op, z, name):
    """The expected values of op over z (complex dtype `name`) and the loose-sign mask."""
    ct = CT[name]
    loose = np.zeros(z.size, dtype=np.uint8)
    fin = finite(z)
    zl = z.astype(LD)
    if op == "abs":
        hi = np.abs(zl).astype(RT[name])
        return np.where(fin, hi, np.abs(z)), loose
    if op == "sign":
        a = np.abs(zl)
        d = np.where(a == 0, 1, a)
        hi = np.empty(z.shape, dtype=LD)
        hi.real, hi.imag = zl.real / d, zl.imag / d
        hi = np.where(a == 0, 0, hi).astype(ct)
        lo = np.sign(z)
        lo[np.isnan(z.real) | np.isnan(z.imag)] = complex(math.nan, math.nan)
        return np.where(fin, hi, lo), loose
    if op == "log1p":
        hi = accurate_log1p(z).astype(ct)
    elif op == "expm1":
        hi = accurate_expm1(z).astype(ct)
    else:
        hi = np_fn(op)(zl).astype(ct)
    lo = np_fn(op)(z)
    if op == "expm1":  # the standard: exp's special values less one
        e = np.exp(z)
        lo = np.empty(z.shape, dtype=ct)
        lo.real, lo.imag = e.real - 1, e.imag
    if op in ("tanh", "tan"):
        # The standard, not C99: tanh(+-infinity + bj) for a finite b is +-1 + 0j with the zero of
        # b's sign (C99 and glibc: the sign of sin(2b)); tan(z) = -i tanh(iz) follows.
        lo = lo.copy()
        if op == "tanh":
            sel = np.isinf(z.real) & np.isfinite(z.imag)
            lo.imag = np.where(sel, np.copysign(0.0, z.imag), lo.imag)
        else:
            sel = np.isinf(z.imag) & np.isfinite(z.real)
            lo.real = np.where(sel, np.copysign(0.0, z.real), lo.real)
    out = np.where(fin, hi, lo)
    # Signs the standard leaves unspecified (non-finite inputs only).
    x, y = z.real, z.imag
    inf_x, inf_y, nan_x, nan_y = np.isinf(x), np.isinf(y), np.isnan(x), np.isnan(y)
    if op in ("exp", "expm1"):
        loose |= np.where(inf_x & (x > 0) & (inf_y | nan_y), 1, 0).astype(np.uint8)
        loose |= np.where(inf_x & (x < 0) & (inf_y | nan_y), 3 if op == "exp" else 2, 0).astype(np.uint8)
    if op == "sinh":
        loose |= np.where((x == 0) & (inf_y | nan_y), 1, 0).astype(np.uint8)
        loose |= np.where(inf_x & (inf_y | nan_y), 1, 0).astype(np.uint8)
    if op == "cosh":
        loose |= np.where((x == 0) & (inf_y | nan_y), 2, 0).astype(np.uint8)
        loose |= np.where(nan_x & (y == 0), 2, 0).astype(np.uint8)
    if op == "tanh":
        loose |= np.where(inf_x & ~np.isfinite(y), 2, 0).astype(np.uint8)
    if op in ("sin", "tan"):  # -i f(iz): iz = -y + ix
        loose |= np.where((y == 0) & (inf_x | nan_x), 2, 0).astype(np.uint8)
        loose |= np.where(inf_y & (inf_x | nan_x), 2 if op == "sin" else 0, 0).astype(np.uint8)
        if op == "tan":
            loose |= np.where(inf_y & ~np.isfinite(x), 1, 0).astype(np.uint8)
    if op == "cos":
        loose |= np.where((y == 0) & (inf_x | nan_x), 2, 0).astype(np.uint8)
        loose |= np.where(nan_y & (x == 0), 2, 0).astype(np.uint8)
    if op == "sqrt":
        loose |= np.where(inf_x & (x < 0) & nan_y, 2, 0).astype(np.uint8)
    if op in ("acos", "acosh", "asinh", "asin", "atanh", "atan"):
        loose |= np.where((inf_x | inf_y) & (nan_x | nan_y), 3, 0).astype(np.uint8)
        loose |= np.where(nan_x & nan_y, 3, 0).astype(np.uint8)
        if op in ("acosh",):
            loose |= np.where((x == 0) & nan_y, 2, 0).astype(np.uint8)
        if op in ("atanh", "atan"):
            loose |= np.where(nan_x | nan_y, 3, 0).astype(np.uint8)
    return out, loose


class Writer:
    def __init__(self, folder):
        self.f = open(os.path.join(folder, "data.bin"), "wb")
        self.pos = 0
        self.cases = []

    def array(self, a):
        a = np.ascontiguousarray(a)
        off = self.pos
        b = a.tobytes()
        self.f.write(b)
        self.pos += len(b)
        pad = (-self.pos) % 16
        self.f.write(b"\0" * pad)
        self.pos += pad
        return off

    def case(self, op, name, result, exact, inputs, expected, loose=None):
        ins = [[str(a.dtype), self.array(a)] for a in inputs]
        self.cases.append({"op": op, "dtype": name, "result": result, "exact": exact, "n": int(expected.size),
                           "inputs": ins, "expected": self.array(expected),
                           "loose": -1 if loose is None else self.array(loose)})


def pairs(name, n=4000):
    s = grid(name)[::7]
    a, b = np.meshgrid(s, s, indexing="ij")
    r = random_values(name, 500)
    ra, rb = rng.choice(r, n), rng.choice(r, n)
    # Divisors and factors with components of very different sizes, for Smith's scaling.
    return np.concatenate([a.ravel(), ra]), np.concatenate([b.ravel(), rb])


def product(a, b):
    """(ac - bd) + (ad + bc)i with each product rounded: NumPy's formula without the fused
    multiply-adds its AVX2 / AVX-512 loops use (so NumPy's own last bit depends on the CPU)."""
    r = np.empty(a.shape, dtype=a.dtype)
    r.real = a.real * b.real - a.imag * b.imag
    r.imag = a.real * b.imag + a.imag * b.real
    return r


def main(folder):
    w = Writer(folder)
    for name in ("complex64", "complex128"):
        ct, rt = CT[name], RT[name]
        rname = "float32" if name == "complex64" else "float64"
        z = values(name)
        for op in UNARY_MATH:
            exp, loose = math_reference(op, z, name)
            w.case(op, name, rname if op == "abs" else name, False, [z], np.asarray(exp), loose)
        # Exact unary operations.
        w.case("negative", name, name, True, [z], -z)
        w.case("conj", name, name, True, [z], np.conj(z))
        w.case("square", name, name, True, [z], product(z, z))
        w.case("round", name, name, True, [z], np.round(z))
        w.case("real", name, rname, True, [z], np.ascontiguousarray(z.real))
        w.case("imag", name, rname, True, [z], np.ascontiguousarray(z.imag))
        w.case("isnan", name, "bool", True, [z], np.isnan(z))
        w.case("isinf", name, "bool", True, [z], np.isinf(z))
        w.case("isfinite", name, "bool", True, [z], np.isfinite(z))
        c = components(name)
        re, im = np.meshgrid(c, c, indexing="ij")
        re, im = re.ravel().astype(rt), im.ravel().astype(rt)
        cz = np.empty(re.size, dtype=ct)
        cz.real, cz.imag = re, im
        w.case("complex", name, name, True, [re, im], cz)
        # Binary operations.
        a, b = pairs(name)
        w.case("add", name, name, True, [a, b], a + b)
        w.case("subtract", name, name, True, [a, b], a - b)
        w.case("multiply", name, name, True, [a, b], product(a, b))
        w.case("divide", name, name, True, [a, b], a / b)
        w.case("equal", name, "bool", True, [a, b], a == b)
        w.case("not_equal", name, "bool", True, [a, b], a != b)
        eq = np.concatenate([a, a[:100]])
        w.case("equal", name, "bool", True, [eq, eq.copy()], eq == eq)
        # pow: finite bases and exponents (integer exponents take NumPy's repeated squaring).
        pa = rng.choice(random_values(name, 400), 3000)
        pa = pa[finite(pa) & (np.abs(pa) < 1e3) & (np.abs(pa) > 1e-3)]
        pb = np.concatenate([rng.uniform(-4, 4, pa.size // 2) + 1j * rng.uniform(-4, 4, pa.size // 2),
                             rng.integers(-6, 7, pa.size - pa.size // 2).astype(np.complex128)]).astype(ct)
        hi = np.power(pa.astype(LD), pb.astype(LD)).astype(ct)
        intexp = (pb.imag == 0) & (pb.real == np.round(pb.real))
        hi = np.where(intexp, np.power(pa, pb), hi)
        w.case("pow", name, name, False, [pa, pb], hi, np.zeros(pa.size, dtype=np.uint8))
        sp = np.array([0, 0, 0, 2 + 1j, 1 + 1j, 0], dtype=ct)
        se = np.array([0, 2, -1, 0, 3, 1j], dtype=ct)
        w.case("pow", name, name, False, [sp, se], np.power(sp, se), np.zeros(sp.size, dtype=np.uint8))
    w.f.close()
    with open(os.path.join(folder, "cases.json"), "w") as f:
        json.dump({"numpy": np.__version__, "cases": w.cases}, f)
    print(json.dumps({"numpy": np.__version__, "cases": len(w.cases), "bytes": w.pos}))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
