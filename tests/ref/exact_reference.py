#!/usr/bin/env python3
"""Reference answers for xp's exact elementwise kernels, from NumPy 2 and ml_dtypes
(tests/test_cpu_exact.cpp runs this).

Usage:
  exact_reference.py DIR     writes DIR/data.bin (raw little-endian arrays, each at an offset that
                             is a multiple of 8) and DIR/cases.json, a list of cases:
                               {"op": xp's op name, "operand": dtype, "result": dtype,
                                "n": elements, "inputs": [[dtype, offset], ...],
                                "expected": offset, "own": offset or -1}
                             `expected` is NumPy's answer, except where xp deliberately differs
                             (docs/semantics.md): there it is xp's documented answer, computed here
                             from the rule, and `own` is a uint8 mask marking those elements.
                             The cases are exactly the combinations xp defines (ir.hpp's rules).

Exit status 3 when NumPy 2 or ml_dtypes is missing: the test then skips (or fails under
XP_TEST_REQUIRE_NUMPY=1). Any other failure is a real error.
"""

import json
import math
import os
import sys
import warnings
from fractions import Fraction

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:
    print(f"exact_reference.py: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"exact_reference.py: NumPy {np.__version__} found, NumPy 2 needed", file=sys.stderr)
    sys.exit(3)

# Overflow, invalid and division by zero are what these cases are about, not problems.
np.seterr(all="ignore")
warnings.simplefilter("ignore", RuntimeWarning)
if sys.byteorder != "little":
    raise SystemExit("exact_reference.py writes raw little-endian arrays")

BF16 = np.dtype(ml_dtypes.bfloat16)
NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64"]
DT = {n: (BF16 if n == "bfloat16" else np.dtype(n)) for n in NAMES}
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]
B = ["bool"]
rng = np.random.default_rng(20260413)


# ---- inputs ----

def int_values(name):
    dt = DT[name]
    info = np.iinfo(dt)
    bits = info.bits
    vals = {0, 1, 2, 3, 5, 7, 10, bits - 1, bits, bits + 1, 2 * bits, info.max, info.max - 1, info.max // 2,
            info.max // 2 + 1}
    if info.min < 0:
        vals |= {-1, -2, -3, -5, -7, -10, info.min, info.min + 1, info.min // 2, -bits}
    v = np.array(sorted(vals), dtype=dt)
    full = rng.integers(info.min, info.max, size=300, dtype=dt, endpoint=True)
    small = rng.integers(max(info.min, -12), min(info.max, 12), size=200, dtype=dt, endpoint=True)
    # Magnitudes of every bit length, for the rounding of casts to floats (2^24, 2^53 and above).
    lengths = rng.integers(1, bits + 1 - (1 if info.min < 0 else 0), size=400)
    mags = [int(rng.integers(0, 2**62)) << 2 | (1 << 63) | int(rng.integers(0, 4)) for _ in lengths]
    spread = [m >> (64 - int(k)) for m, k in zip(mags, lengths)]
    if info.min < 0:
        spread = [s if i % 2 else -s for i, s in enumerate(spread)]
    # Exact halfway and near-halfway points of float32 and bfloat16 / float16 precision.
    halfway = []
    for top in range(11, bits - (1 if info.min < 0 else 0)):
        for keep in (8, 11, 24, 53):
            if top > keep:
                base = (1 << top) | (int(rng.integers(0, 1 << 20)) << max(0, top - 20)) & ((1 << top) - 1)
                lowbit = top - keep
                mid = (base >> lowbit << lowbit) | (1 << (lowbit - 1))
                for d in (-1, 0, 1):
                    halfway.append(mid + d)
    extra = np.array([x for x in spread + halfway if info.min <= x <= info.max], dtype=dt)
    return np.concatenate([v, full, small, extra])


def float_values(name):
    dt = DT[name]
    fi = np.finfo(dt)
    big = 2.0 ** (fi.nmant + 0)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 2.0, 3.0, -3.0, 0.25, 0.75, -0.75,
            float(fi.tiny), -float(fi.tiny), float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
            float(fi.tiny) - float(fi.smallest_subnormal), float(fi.max), -float(fi.max), math.inf, -math.inf,
            math.nan, -math.nan, float(np.nextafter(dt.type(0.5), dt.type(0))), big, big - 0.5, big + 1, -big + 0.5,
            big / 2 + 0.5, -(big / 2 + 0.5), 2.0 * big, 127.0, 127.5, 128.0, -128.0, -128.5, -129.0, 255.0, 255.5,
            256.0, 32767.5, 32768.0, -32768.0, -32769.0, 65535.0, 65536.0, 65504.0, 65519.0, 65520.0, 2.0**31,
            -2.0**31, 2.0**31 - 1, 2.0**32, 2.0**63, -2.0**63, 2.0**64, 1e10, -1e10, 1e30, -1e30, 0.1, -0.1, 7.0,
            -7.0, 10.0, 1e-3]
    v = np.array(vals, dtype=np.float64).astype(dt)
    width = np.uint32 if dt == np.float32 else np.uint64
    bits = rng.integers(0, np.iinfo(width).max, size=300, dtype=width, endpoint=True).view(dt)
    normal = (rng.standard_normal(300) * 10.0 ** rng.integers(-3, 6, size=300)).astype(dt)
    halves = (rng.integers(-40, 40, size=100) + 0.5).astype(dt)
    ints = rng.integers(-20, 20, size=100).astype(dt)
    parts = [v, bits, normal, halves, ints]
    if name == "float64":
        # Rounding to float32 / float16 / bfloat16: midpoints between neighbours, and a hair off.
        for narrow in (np.float32, np.float16, BF16):
            w = np.uint32 if narrow == np.float32 else np.uint16
            top = np.iinfo(w).max
            lo = rng.integers(0, top, size=150, dtype=w).view(narrow)
            lo = lo[np.isfinite(lo.astype(np.float64))]
            nxt = (lo.view(w) + w(1)).view(narrow).astype(np.float64)
            mid = (lo.astype(np.float64) + nxt) / 2
            mid = mid[np.isfinite(mid)]
            parts += [mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)]
        parts.append(np.array([1 + 2**-11 + 2**-40, 1 + 2**-8 + 2**-40, 65519.99999, 65520.0, 2.0**-25,
                               2.0**-25 + 2.0**-60, 2.0**-24 * 1.5, 2.0**-134, 2.0**-134 * 1.0000001,
                               3.3961e38, 3.3962e38, 3.4028235677973366e38, 3.4028235677973366e38 * (1 + 2**-30),
                               1e-46, 1e-45, 7e-46]))
    return np.concatenate(parts).astype(dt)


def values(name):
    if name == "bool":
        return np.concatenate([np.array([False, True], dtype=bool), rng.random(62) < 0.5])
    if name in ("float16", "bfloat16"):
        return np.arange(65536, dtype=np.uint16).view(DT[name])
    if name in INTS:
        return int_values(name)
    return float_values(name)


VALUES = {n: values(n) for n in NAMES}


def pairs(name, count=700):
    """All pairs of the first special values, plus random pairs of all values."""
    v = VALUES[name]
    s = v[:min(len(v), 40)]
    a, b = np.meshgrid(s, s, indexing="ij")
    ra = rng.choice(v, size=count)
    rb = rng.choice(v, size=count)
    return np.concatenate([a.ravel(), ra]), np.concatenate([b.ravel(), rb])


def triples(name, count=1500):
    v = VALUES[name]
    s = v[:min(len(v), 12)]
    a, b, c = np.meshgrid(s, s, s, indexing="ij")
    r = [rng.choice(v, size=count) for _ in range(3)]
    return [np.concatenate([x.ravel(), y]) for x, y in zip((a, b, c), r)]


# ---- xp's own answers where it deliberately differs from NumPy ----

def float_to_int_own(x, to):
    """NaN -> 0, beyond the range saturated, else truncated toward zero; returns (answer, mask)."""
    info = np.iinfo(DT[to])
    f = x.astype(np.float64)  # exact for every float format
    t = np.trunc(f)
    lo = float(info.min)  # 0 or -2^(bits-1): exact
    hi = 2.0 ** (info.bits - (1 if info.min < 0 else 0))  # exclusive
    nan = np.isnan(f)
    below = t < lo
    above = t >= hi
    mask = nan | below | above
    own = np.zeros(len(x), dtype=DT[to])
    own[above] = info.max
    own[below] = info.min
    return own, mask


def round_fraction(q, mant_bits, emin, emax):
    """Rounds the rational q to nearest even in a binary format: a Python float (or +-inf)."""
    if q == 0:
        return 0.0
    neg = q < 0
    q = -q if neg else q
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    elif Fraction(2) ** (e + 1) <= q:
        e += 1
    e = max(e, emin)
    scale = mant_bits - 1 - e
    m = q * Fraction(2) ** scale
    n = m.numerator // m.denominator
    rem = m - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    if Fraction(n) * Fraction(2) ** -scale >= Fraction(2) ** (emax + 1):
        return -math.inf if neg else math.inf
    val = math.ldexp(n, -scale)
    return -val if neg else val


def fma_ref(a, b, c, name):
    mant, emin, emax = (24, -126, 127) if name == "float32" else (53, -1022, 1023)
    out = np.empty(len(a), dtype=DT[name])
    for i, (x, y, z) in enumerate(zip(a.tolist(), b.tolist(), c.tolist())):
        if not (math.isfinite(x) and math.isfinite(y)):
            out[i] = x * y + z  # inf / NaN arithmetic is exact
        elif not math.isfinite(z):
            out[i] = z
        else:
            q = Fraction(x) * Fraction(y) + Fraction(z)
            if q == 0:
                prod_neg = (math.copysign(1, x) < 0) != (math.copysign(1, y) < 0)
                both_neg_zero = x * y == 0 and z == 0 and prod_neg and math.copysign(1, z) < 0
                out[i] = -0.0 if both_neg_zero else 0.0
            else:
                out[i] = round_fraction(q, mant, emin, emax)
    return out


# ---- the cases ----

UNARY = {
    "negative": (INTS + FLOATS, np.negative),
    "abs": (B + INTS + FLOATS, np.abs),
    "sign": (INTS + FLOATS, np.sign),
    "square": (INTS + FLOATS, np.square),
    "sqrt": (FLOATS, np.sqrt),
    "floor": (B + INTS + FLOATS, np.floor),
    "ceil": (B + INTS + FLOATS, np.ceil),
    "round": (INTS + FLOATS, np.round),
    "trunc": (B + INTS + FLOATS, np.trunc),
    "bitwise_invert": (B + INTS, np.invert),
}
PREDICATE1 = {
    "isnan": (B + INTS + FLOATS, np.isnan),
    "isinf": (B + INTS + FLOATS, np.isinf),
    "isfinite": (B + INTS + FLOATS, np.isfinite),
    "logical_not": (B, np.logical_not),
    "signbit": (FLOATS, np.signbit),
}
BINARY = {
    "add": (B + INTS + FLOATS, np.add),
    "subtract": (INTS + FLOATS, np.subtract),
    "multiply": (B + INTS + FLOATS, np.multiply),
    "divide": (FLOATS, np.divide),
    "floor_divide": (INTS + FLOATS, np.floor_divide),
    "remainder": (INTS + FLOATS, np.remainder),
    "pow": (INTS, np.power),
    "minimum": (B + INTS + FLOATS, np.minimum),
    "maximum": (B + INTS + FLOATS, np.maximum),
    "bitwise_and": (B + INTS, np.bitwise_and),
    "bitwise_or": (B + INTS, np.bitwise_or),
    "bitwise_xor": (B + INTS, np.bitwise_xor),
    "left_shift": (INTS, np.left_shift),
    "right_shift": (INTS, np.right_shift),
    "copysign": (FLOATS, np.copysign),
    # nextafter steps float16 and bfloat16 in their own formats (not through float32); y where x == y,
    # as C (NumPy's float16 loop gave x there before NumPy 2.5).
    "nextafter": (FLOATS + ["float16", "bfloat16"],
                  lambda a, b: np.where(a == b, np.asarray(b), np.nextafter(a, b)).astype(np.asarray(a).dtype)),
}
PREDICATE2 = {
    "equal": (B + INTS + FLOATS, np.equal),
    "not_equal": (B + INTS + FLOATS, np.not_equal),
    "less": (B + INTS + FLOATS, np.less),
    "less_equal": (B + INTS + FLOATS, np.less_equal),
    "greater": (B + INTS + FLOATS, np.greater),
    "greater_equal": (B + INTS + FLOATS, np.greater_equal),
    "logical_and": (B, np.logical_and),
    "logical_or": (B, np.logical_or),
    "logical_xor": (B, np.logical_xor),
}


class Writer:
    def __init__(self, folder):
        self.f = open(os.path.join(folder, "data.bin"), "wb")
        self.pos = 0
        self.cases = []

    def array(self, a):
        a = np.ascontiguousarray(a)
        if a.dtype == bool:
            a = a.view(np.uint8)
        raw = a.tobytes()  # little-endian: checked at the start
        off = self.pos
        pad = (-len(raw)) % 8
        self.f.write(raw + b"\0" * pad)
        self.pos += len(raw) + pad
        return off

    def case(self, op, operand, result, inputs, expected, own=None):
        if expected.dtype != DT[result]:
            raise SystemExit(f"{op}({operand}) gave {expected.dtype}, expected {result}")
        n = len(expected)
        entry = {
            "op": op, "operand": operand, "result": result, "n": n,
            "inputs": [[name, self.array(arr)] for name, arr in inputs],
            "expected": self.array(expected),
            "own": self.array(own.astype(np.uint8)) if own is not None and own.any() else -1,
        }
        for name, arr in inputs:
            if len(arr) != n or arr.dtype != DT[name]:
                raise SystemExit(f"{op}: input of {len(arr)} {arr.dtype}, expected {n} {name}")
        self.cases.append(entry)


def casts(w):
    for src in NAMES:
        x = VALUES[src]
        for dst in NAMES:
            expected = x.astype(DT[dst])
            own = None
            if dst in INTS and (src in FLOATS or src in ("float16", "bfloat16")):
                own_vals, own = float_to_int_own(x, dst)
                expected = np.where(own, own_vals, expected)
            w.case("cast", src, dst, [(src, x)], expected, own)


def unary_ops(w):
    for op, (types, fn) in UNARY.items():
        for t in types:
            x = VALUES[t]
            w.case(op, t, t, [(t, x)], fn(x))
    for op, (types, fn) in PREDICATE1.items():
        for t in types:
            x = VALUES[t]
            w.case(op, t, "bool", [(t, x)], fn(x))


def binary_ops(w):
    for table, bool_result in ((BINARY, False), (PREDICATE2, True)):
        for op, (types, fn) in table.items():
            for t in types:
                a, b = pairs(t)
                own = None
                if op == "pow":
                    # NumPy raises for negative exponents; xp's rule: 1 for base 1, (-1)^e for -1, else 0.
                    b = np.where(rng.random(len(b)) < 0.6, b % 24 if t in INTS else b, b).astype(DT[t])
                    neg = b < 0
                    expected = fn(a, np.where(neg, 0, b).astype(DT[t]))
                    if neg.any():
                        own_vals = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
                        expected = np.where(neg, own_vals.astype(DT[t]), expected)
                        own = neg
                elif op == "nextafter" and t in ("float16", "bfloat16"):
                    # Every pair of the special values too: zeros, the extremes, infinities, NaN.
                    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 65504.0, -65504.0, 3e38, 6e-8,
                                   1e-40, -1e-40, 2.0, 0.5], dtype=np.float64).astype(DT[t])
                    sa, sb = np.meshgrid(sp, sp, indexing="ij")
                    a = np.concatenate([a, sa.ravel()]).astype(DT[t])
                    b = np.concatenate([b, sb.ravel()]).astype(DT[t])
                    expected = fn(a, b)
                elif op in ("left_shift", "right_shift"):
                    bits = np.iinfo(DT[t]).bits
                    counts = rng.integers(-2, bits + 3, size=len(b)).astype(DT[t])
                    b = np.where(rng.random(len(b)) < 0.5, counts, b).astype(DT[t])
                    expected = fn(a, b)
                else:
                    expected = fn(a, b)
                w.case(op, t, "bool" if bool_result else t, [(t, a), (t, b)], expected, own)


def ternary_ops(w):
    for t in NAMES:
        v = VALUES[t]
        n = 2000
        c = rng.random(n) < 0.5
        a = rng.choice(v, size=n)
        b = rng.choice(v, size=n)
        w.case("where", t, t, [("bool", c), (t, a), (t, b)], np.where(c, a, b))
    for t in B + INTS + FLOATS:
        x, lo, hi = triples(t)
        w.case("clip", t, t, [(t, x), (t, lo), (t, hi)], np.clip(x, lo, hi))
    for t in FLOATS:
        a, b, c = triples(t, count=2500)
        w.case("fma", t, t, [(t, a), (t, b), (t, c)], fma_ref(a, b, c, t))


def main(folder):
    w = Writer(folder)
    casts(w)
    unary_ops(w)
    binary_ops(w)
    ternary_ops(w)
    w.f.close()
    with open(os.path.join(folder, "cases.json"), "w") as f:
        json.dump({"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__, "cases": w.cases}, f)
    print(json.dumps({"numpy": np.__version__, "cases": len(w.cases), "bytes": w.pos}))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
