#!/usr/bin/env python3
"""Reference answers for xp's CPU reductions, from NumPy 2 and ml_dtypes (tests/test_cpu_reduce.cpp runs this).

Usage:
  reduce_reference.py cases DIR      every reduction and cumulative sum of every dtype over strided
                                     views; writes DIR/data.bin (little-endian raw arrays, each at a
                                     multiple of 64 bytes) and DIR/cases.json, which describes them
  reduce_reference.py accuracy DIR   ill-conditioned float sums: DIR/acc_N.bin (raw inputs), and JSON
                                     on stdout with the exact sum of each (math.fsum) and NumPy's

Each case is a view of one of the base arrays in data.bin (shape, strides and start in elements), an
operation, its axes, and what to expect:
  exact   the output's bytes (integer sums and products, which wrap; min, max, argmin, argmax, any,
          all; cumulative sums, which are sequential in NumPy too). 16-bit floats: computed in float32
          and rounded, as xp does.
  float   float sums, means, variances, products: a float64 reference computed in long double from
          the exact inputs, and a scale: sum |x| for sums, sum |x| / N for means and variances, the
          count N for products; the test derives its error bound from these.
  error   a ValueError with NumPy's message.

Exit status 3 when NumPy 2 or ml_dtypes is missing: the test then skips (or fails under
XP_TEST_REQUIRE_NUMPY=1). Any other failure is a real error.
"""

import json
import math
import os
import sys
import warnings

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:
    print(f"reduce_reference.py: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"reduce_reference.py: NumPy {np.__version__} found, NumPy 2 needed", file=sys.stderr)
    sys.exit(3)

BF16 = np.dtype(ml_dtypes.bfloat16)
NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64"]
DTYPES = {n: (BF16 if n == "bfloat16" else np.dtype(n)) for n in NAMES}
LD = np.longdouble


def is_float(name):
    return name in ("float16", "bfloat16", "float32", "float64")


def sum_dtype(name):
    if is_float(name):
        return name
    return "uint64" if name.startswith("uint") else "int64"


def compute_dtype(name):
    """The float type xp computes a float dtype in: 16-bit floats in float32."""
    return np.float64 if name == "float64" else np.float32


def make_data(name, kind, n, rng):
    """n random values of dtype `name`. Float kinds: plain (magnitudes in [0.5, 2], both signs), zeros
    (plain with +-0 mixed in), special (NaN and +-inf mixed in), ties (small integers: repeated
    extremes). Integer kinds: full (the whole range: sums and products wrap), small (ties)."""
    dt = DTYPES[name]
    if name == "bool":
        return rng.random(n) < 0.85
    if not is_float(name):
        info = np.iinfo(dt)
        if kind == "small":
            lo = 0 if info.min == 0 else -3
            return rng.integers(lo, 4, size=n).astype(dt)
        return rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
    if kind == "ties":
        v = rng.integers(-3, 4, size=n).astype(np.float64)
    else:
        v = np.exp2(rng.uniform(-1, 1, size=n)) * rng.choice([-1.0, 1.0], size=n)
        if kind == "zeros":
            v[rng.random(n) < 0.15] = 0.0
            v[rng.random(n) < 0.05] = -0.0
        if kind == "special":
            v[rng.random(n) < 0.04] = np.nan
            v[rng.random(n) < 0.02] = np.inf
            v[rng.random(n) < 0.02] = -np.inf
    return v.astype(np.float32).astype(dt)


def ndim64_shape(rng):
    shape = [1] * 64
    for d in rng.choice(64, size=10, replace=False):
        shape[d] = 2
    return tuple(shape)


# Layouts: (name, base size, float kind, int kind, view of the base, axis sets). An axis set of
# None means every axis.
def layouts(rng):
    s64 = ndim64_shape(rng)
    big = [d for d in range(64) if s64[d] == 2]
    return [
        ("0d", 1, "plain", "full", lambda b: b.reshape(()), [(), None]),
        ("1d", 37, "plain", "full", lambda b: b, [(0,), ()]),
        ("1d_reversed", 41, "zeros", "small", lambda b: b[::-1], [(0,)]),
        ("1d_step3", 60, "special", "full", lambda b: b[1::3], [(0,)]),
        ("2d", 42, "plain", "full", lambda b: b.reshape(6, 7), [(0,), (1,), None, ()]),
        ("2d_transposed", 42, "ties", "small", lambda b: b.reshape(7, 6).T, [(0,), (1,), None]),
        ("2d_negative", 72, "special", "small", lambda b: b.reshape(8, 9)[::-2, ::-1], [(0,), (1,), None]),
        ("3d", 120, "zeros", "full", lambda b: b.reshape(4, 5, 6), [(0,), (1,), (2,), (0, 2), (1, 2), None]),
        ("3d_permuted", 120, "ties", "small", lambda b: b.reshape(5, 6, 4).transpose(2, 0, 1),
         [(0,), (1,), (2,), (0, 1), None]),
        ("3d_sliced", 315, "plain", "full", lambda b: b.reshape(5, 7, 9)[1:4, ::2, 2:8],
         [(0,), (1,), (2,), (0, 2), None]),
        ("4d_mixed", 360, "plain", "small", lambda b: b.reshape(3, 4, 5, 6)[:, ::-1].transpose(0, 2, 1, 3),
         [(1,), (3,), (0, 3), (1, 2), None]),
        ("broadcast", 5, "plain", "full", lambda b: np.broadcast_to(b.reshape(1, 5), (3, 5)), [(0,), (1,), None]),
        ("broadcast_scalar", 1, "plain", "full", lambda b: np.broadcast_to(b.reshape(1, 1, 1), (3, 4, 2)),
         [(1,), None]),
        ("size0", 12, "plain", "full", lambda b: b[:0].reshape(3, 0, 4), [(0,), (1,), (2,), None, ()]),
        ("size0_axis0", 5, "plain", "full", lambda b: b[:0].reshape(0, 5), [(0,), (1,)]),
        ("size1", 15, "ties", "small", lambda b: b.reshape(1, 5, 1, 3), [(0,), (1,), (2,), (0, 2), None]),
        # Axes of length 1 over contiguous outputs: one row, folded as columns.
        ("size1_row", 40, "special", "full", lambda b: b.reshape(40, 1), [(1,)]),
        ("size1_rows", 96, "plain", "small", lambda b: b.reshape(1, 8, 1, 12), [(0,), (2,), (0, 2)]),
        ("wide", 900, "zeros", "full", lambda b: b.reshape(3, 300), [(0,), (1,)]),
        ("long", 10000, "plain", "small", lambda b: b.reshape(2, 5000), [(1,), None]),
        ("tall", 27000, "ties", "full", lambda b: b.reshape(4500, 6), [(0,)]),
        ("tall_strided", 27000, "plain", "small", lambda b: b.reshape(4500, 6)[::-1, ::2], [(0,), None]),
        ("ndim64", 1024, "plain", "full", lambda b: b.reshape(s64),
         [(big[0],), (big[3],), (0, big[1], big[5], 63), tuple(big[::2]), None]),
    ]


class Writer:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.pos = 0

    def add(self, arr):
        """Writes arr's bytes (C order, little-endian) at the next multiple of 64; returns the offset."""
        pad = (-self.pos) % 64
        self.f.write(b"\0" * pad)
        self.pos += pad
        a = np.ascontiguousarray(arr)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        data = a.tobytes()
        off = self.pos
        self.f.write(data)
        self.pos += len(data)
        return off


def as_compute(x, name):
    """x in the type xp computes with (16-bit floats in float32), for NumPy's exact operations."""
    return x.astype(np.float32) if name in ("float16", "bfloat16") else x


def exact_long(x, name):
    """The values xp adds, exactly: floats as they are, integers converted to float64 first."""
    return x.astype(np.float64).astype(LD)


def reference(op, x, name, axes, ddof):
    """(check, value, scale or None) for one reduction; value is an ndarray or an error message."""
    ax = tuple(range(x.ndim)) if axes is None else tuple(axes)
    n = 1
    for a in ax:
        n *= x.shape[a]
    if op in ("min", "max", "argmin", "argmax"):
        if n == 0:
            verb = {"min": "minimum", "max": "maximum"}
            if op in verb:
                return "error", f"zero-size array to reduction operation {verb[op]} which has no identity", None
            return "error", f"attempt to get {op} of an empty sequence", None
        xc = as_compute(x, name)
        if op in ("min", "max"):
            r = (np.min if op == "min" else np.max)(xc, axis=ax)
            return "exact", np.asarray(r).astype(DTYPES[name]), None
        f = np.argmin if op == "argmin" else np.argmax
        if len(ax) == x.ndim:
            r = f(xc)  # the index into the C-order flattening
        else:
            r = f(xc, axis=ax[0])
        return "exact", np.asarray(r, dtype=np.int64), None
    if op in ("any", "all"):
        xc = as_compute(x, name)
        truth = xc != 0
        r = (np.any if op == "any" else np.all)(truth, axis=ax)
        return "exact", np.asarray(r, dtype=np.bool_), None
    if op in ("sum", "prod") and not is_float(name):
        f = np.sum if op == "sum" else np.prod
        return "exact", np.asarray(f(x, axis=ax, dtype=sum_dtype(name))), None
    # Float results: long double from the exact inputs.
    xl = exact_long(x, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if op == "sum":
            return "float", np.sum(xl, axis=ax), np.sum(np.abs(xl), axis=ax)
        if op == "prod":
            return "float", np.prod(xl, axis=ax), np.full(np.prod(xl, axis=ax).shape, float(n))
        mean_abs = np.sum(np.abs(xl), axis=ax) / LD(n) if n > 0 else np.full(
            np.sum(xl, axis=ax).shape, np.nan)
        if op == "mean":
            return "float", np.sum(xl, axis=ax) / LD(n) if n > 0 else mean_abs, mean_abs
        mean = np.sum(xl, axis=ax, keepdims=True) / LD(max(n, 1))
        ss = np.sum((xl - mean) ** 2, axis=ax)
        var = ss / LD(n - ddof) if n - ddof > 0 else np.full(ss.shape, np.nan, dtype=LD)
        if op == "var":
            return "float", var, mean_abs
        return "float", np.sqrt(var), mean_abs


def cumsum_reference(x, name, axis, include_initial):
    if is_float(name):
        xc = x.astype(compute_dtype(name))
        r = np.cumulative_sum(xc, axis=axis, dtype=xc.dtype, include_initial=include_initial)
        return r.astype(DTYPES[name])
    return np.cumulative_sum(x, axis=axis, dtype=sum_dtype(name), include_initial=include_initial)


def out_dtype(op, name):
    if op in ("sum", "prod", "cumulative_sum"):
        return sum_dtype(name)
    if op in ("mean", "var", "std"):
        return name if is_float(name) else "float64"
    if op in ("min", "max"):
        return name
    if op in ("any", "all"):
        return "bool"
    return "int64"


def cases(folder):
    rng = np.random.default_rng(20260502)
    w = Writer(os.path.join(folder, "data.bin"))
    inputs, out = [], []
    reductions = [("sum", 0), ("prod", 0), ("mean", 0), ("var", 0), ("var", 1), ("std", 0), ("std", 2),
                  ("min", 0), ("max", 0), ("argmin", 0), ("argmax", 0), ("any", 0), ("all", 0)]
    for layout, size, fkind, ikind, view, axis_sets in layouts(rng):
        for name in NAMES:
            base = make_data(name, fkind if is_float(name) else ikind, size, rng)
            if name == "bool":
                base = base.astype(np.bool_)
            inputs.append({"dtype": name, "offset": w.add(base), "count": size})
            x = view(base)
            item = x.dtype.itemsize
            start = (x.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
            desc = {"layout": layout, "input": len(inputs) - 1, "dtype": name, "shape": list(x.shape),
                    "strides": [s // item for s in x.strides], "start": int(start)}
            for axes in axis_sets:
                ax = list(range(x.ndim)) if axes is None else sorted(axes)
                for op, ddof in reductions:
                    if op in ("argmin", "argmax") and len(ax) not in (1, x.ndim):
                        continue
                    check, value, scale = reference(op, x, name, axes, ddof)
                    case = dict(desc, op=op, axes=ax, ddof=ddof, out_dtype=out_dtype(op, name), check=check)
                    if check == "error":
                        case["error"] = value
                    else:
                        value = np.asarray(value)
                        case["out_shape"] = list(value.shape)
                        if check == "float":
                            case["expect"] = w.add(value.astype(np.float64))
                            case["scale"] = w.add(np.asarray(scale).astype(np.float64))
                        else:
                            case["expect"] = w.add(value.astype(DTYPES[case["out_dtype"]]))
                    out.append(case)
            if size > 1000 and name not in ("int8", "uint64", "float16", "float32", "float64"):
                continue  # the long cumulative sums: a few dtypes are enough
            for axis in range(x.ndim):
                for inc in (False, True):
                    r = cumsum_reference(x, name, axis, inc)
                    out.append(dict(desc, op="cumulative_sum", axis=axis, include_initial=inc,
                                    out_dtype=out_dtype("cumulative_sum", name), check="exact",
                                    out_shape=list(r.shape), expect=w.add(r)))
    w.f.close()
    with open(os.path.join(folder, "cases.json"), "w") as f:
        json.dump({"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__, "inputs": inputs, "cases": out}, f)
    print(json.dumps({"numpy": np.__version__, "cases": len(out), "inputs": len(inputs)}))


def accuracy(folder):
    """Ill-conditioned sums: mixed magnitudes over 12 decades with heavy cancellation. For each, the
    exact sum of the values (math.fsum, correctly rounded to float64) and np.sum's, full reductions
    and, for (n, 4) arrays, per column along axis 0 (where NumPy adds row by row)."""
    rng = np.random.default_rng(7)
    entries = []
    for dt in (np.float32, np.float64):
        for n, kind in ((300_000, "mixed"), (1_000_003, "cancel"), (65_537, "cancel")):
            mag = 10.0 ** rng.uniform(-6, 6, size=n)
            v = rng.standard_normal(n) * mag
            if kind == "cancel":
                half = n // 2
                v[half:2 * half] = -v[:half] * (1 + rng.standard_normal(half) * 1e-3)
                rng.shuffle(v)
            x = v.astype(dt)
            fname = f"acc_{len(entries)}.bin"
            x.tofile(os.path.join(folder, fname))
            xd = x.astype(np.float64)
            entries.append({"dtype": np.dtype(dt).name, "file": fname, "shape": [n], "axis": None,
                            "exact": [math.fsum(xd.tolist())], "numpy": [float(np.sum(x))],
                            "abs_sum": [float(np.sum(np.abs(xd)))]})
        n = 200_000
        v = rng.standard_normal((n, 4)) * 10.0 ** rng.uniform(-6, 6, size=(n, 4))
        x = v.astype(dt)
        fname = f"acc_{len(entries)}.bin"
        x.tofile(os.path.join(folder, fname))
        xd = x.astype(np.float64)
        entries.append({"dtype": np.dtype(dt).name, "file": fname, "shape": [n, 4], "axis": 0,
                        "exact": [math.fsum(xd[:, c].tolist()) for c in range(4)],
                        "numpy": [float(s) for s in np.sum(x, axis=0)],
                        "abs_sum": [float(s) for s in np.sum(np.abs(xd), axis=0)]})
    print(json.dumps({"numpy": np.__version__, "entries": entries}))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "cases":
        cases(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "accuracy":
        accuracy(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
