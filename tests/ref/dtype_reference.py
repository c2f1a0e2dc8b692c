#!/usr/bin/env python3
"""Reference answers for xp's dtypes, from NumPy 2 and ml_dtypes (tests/test_dtype.cpp runs this).

Usage:
  dtype_reference.py table          JSON on stdout: names, itemsizes, kinds, the 15x15 promotion
                                    table, weak-scalar promotion (NEP 50), integer-scalar overflow
  dtype_reference.py floats DIR     binary files in DIR (little-endian, raw), a JSON summary on stdout:
                                      f32_inputs.u32    float32 bit patterns (edge cases + random)
                                      f16_from_f32.u16  inputs.astype(float16)
                                      bf16_from_f32.u16 inputs.astype(ml_dtypes.bfloat16)
                                      f32_from_f16.u32  all 65,536 float16 patterns .astype(float32)
                                      f32_from_bf16.u32 all 65,536 bfloat16 patterns .astype(float32)
  dtype_reference.py markdown       the promotion table as Markdown (for docs/semantics.md)

Exit status 3 when NumPy 2 or ml_dtypes is missing: the test then skips (or fails under
XP_TEST_REQUIRE_NUMPY=1). Any other failure is a real error.
"""

import json
import os
import sys
import warnings

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # the test turns this into a skip with the reason
    print(f"dtype_reference.py: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"dtype_reference.py: NumPy {np.__version__} found, NumPy 2 needed (NEP 50 promotion)", file=sys.stderr)
    sys.exit(3)

BF16 = np.dtype(ml_dtypes.bfloat16)
# xp's DType order (include/xp/dtype.hpp).
NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
DTYPES = [BF16 if n == "bfloat16" else np.dtype(n) for n in NAMES]


def kind_of(dt):
    if dt == BF16:
        # NumPy reports ml_dtypes' bfloat16 as kind 'V'; it is a binary floating type.
        assert ml_dtypes.finfo(BF16).bits == 16
        return "f"
    return dt.kind


def weak_result(dt, scalar):
    """The dtype of array(dt) <op> Python scalar, checked three ways that must agree."""
    a = np.zeros(1, dt)
    answers = {np.result_type(dt, scalar), (a + scalar).dtype, (scalar * a).dtype}
    if len(answers) != 1:
        raise SystemExit(f"NumPy disagrees with itself on {dt} with {scalar!r}: {answers}")
    return answers.pop().name


def overflow_cases():
    """For each dtype, integer scalars around its limits: does NumPy accept array + value?"""
    probes = {0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536,
              2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32, 2**63 - 1, 2**63, -2**63, 2**64 - 1}
    cases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float16 + 65536 overflows to inf with a warning, not an error
        for name, dt in zip(NAMES, DTYPES):
            if name == "bool":
                continue  # a bool array with an int scalar becomes int64: no bool answer to compare
            for v in sorted(probes):
                try:
                    np.zeros(1, dt) + v
                    fits = True
                except OverflowError:
                    fits = False
                cases.append({"dtype": name, "value": str(v), "fits": fits})
    return cases


def table():
    promo = []
    for a in DTYPES:
        row = []
        for b in DTYPES:
            r = np.result_type(a, b)
            # Also through an actual operation, so the table is what arrays do, not only the API.
            r2 = (np.zeros(1, a) + np.zeros(1, b)).dtype
            if r != r2:
                raise SystemExit(f"result_type({a}, {b}) = {r} but addition gives {r2}")
            row.append(r.name)
        promo.append(row)
    weak = {}
    for name, dt in zip(NAMES, DTYPES):
        weak[name] = {"bool": weak_result(dt, True), "int": weak_result(dt, 1), "float": weak_result(dt, 1.0),
                      "complex": weak_result(dt, 1j)}
    out = {
        "numpy": np.__version__,
        "ml_dtypes": ml_dtypes.__version__,
        "names": NAMES,
        "numpy_names": [dt.name for dt in DTYPES],
        "itemsize": [dt.itemsize for dt in DTYPES],
        "kind": [kind_of(dt) for dt in DTYPES],
        "promotion": promo,
        "weak": weak,
        "overflow": overflow_cases(),
    }
    json.dump(out, sys.stdout)
    print()


def float_inputs():
    """float32 bit patterns: every rounding boundary of both 16-bit formats, specials, random."""
    u32, f32, f64 = np.uint32, np.float32, np.float64
    parts = []

    # float16: each finite non-negative pattern h, the midpoint to the next one up (65520 after the
    # max finite 65504), and the float32 neighbours of that midpoint.
    h = np.arange(0x7C00, dtype=np.uint16)
    lo = h.view(np.float16).astype(f64)
    hi = np.append(lo[1:], 65520.0 * 2 - 65504.0)  # the "next" after max: midpoint lands on 65520
    mid = ((lo + hi) / 2).astype(f32)  # exact: 12 significant bits
    assert np.all(mid.astype(f64) == (lo + hi) / 2)
    for v in (lo.astype(f32), mid, np.nextafter(mid, f32(np.inf)), np.nextafter(mid, f32(0))):
        parts.append(v.view(u32))

    # bfloat16: each finite non-negative pattern, its midpoint to the next, and the neighbours.
    b = np.arange(0x7F80, dtype=u32) << 16
    for off in (0, 0x8000, 0x7FFF, 0x8001):
        parts.append(b | u32(off))

    # float32 subnormals and the bottom of float16's subnormal range.
    parts.append(np.arange(0, 4096, dtype=u32))
    parts.append(np.array([0x007FFFFF, 0x00800000, 0x00400000, 0x00400001, 0x003FFFFF], dtype=u32))
    for center in (0x33000000, 0x33800000, 0x33C00000, 0x38800000, 0x387FC000, 0x387FE000):
        parts.append(np.arange(center - 64, center + 65, dtype=u32))

    # Overflow thresholds, max finite values, infinities, NaNs (quiet, signalling, with payloads).
    specials = [
        0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000,  # 65504 .. 65520 .. 65536
        0x7F7F0000, 0x7F7F7FFF, 0x7F7F8000, 0x7F7F8001, 0x7F7FFFFF,  # bfloat16 max .. float32 max
        0x7F800000, 0x7F800001, 0x7F801FFF, 0x7F802000, 0x7FA00000, 0x7FBFFFFF, 0x7FC00000,
        0x7FC00001, 0x7FFFFFFF, 0x3F800000, 0x3F800001, 0x3F801000, 0x3F801001, 0x3F802000,
        0x3F803000, 0x3F808000, 0x3F818000,
    ]
    parts.append(np.array(specials, dtype=u32))

    # Random: all of float32's bit patterns, and a set concentrated on float16's exponent range.
    rng = np.random.default_rng(20260412)
    parts.append(rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(u32))
    exp = rng.integers(100, 144, size=200_000, dtype=np.uint64).astype(u32)
    mant = rng.integers(0, 2**23, size=200_000, dtype=np.uint64).astype(u32)
    parts.append((exp << 23) | mant)

    pos = np.concatenate(parts)
    return np.concatenate([pos, pos | u32(0x80000000)])  # both signs of everything


def floats(folder):
    x = float_inputs()
    f = x.view(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow to inf is the point, not a problem
        f16 = f.astype(np.float16).view(np.uint16)
        bf16 = f.astype(BF16).view(np.uint16)
    all16 = np.arange(65536, dtype=np.uint16)
    from_f16 = all16.view(np.float16).astype(np.float32).view(np.uint32)
    from_bf16 = all16.view(BF16).astype(np.float32).view(np.uint32)
    files = {
        "f32_inputs.u32": x,
        "f16_from_f32.u16": f16,
        "bf16_from_f32.u16": bf16,
        "f32_from_f16.u32": from_f16,
        "f32_from_bf16.u32": from_bf16,
    }
    for name, arr in files.items():
        arr.astype(arr.dtype.newbyteorder("<")).tofile(os.path.join(folder, name))
    json.dump({"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__, "inputs": int(x.size)}, sys.stdout)
    print()


def markdown():
    short = {n: n for n in NAMES}
    print("| | " + " | ".join(short[n] for n in NAMES) + " |")
    print("| --- " * (len(NAMES) + 1) + "|")
    for name, a in zip(NAMES, DTYPES):
        print(f"| **{name}** | " + " | ".join(np.result_type(a, b).name for b in DTYPES) + " |")


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "table":
        table()
    elif len(sys.argv) == 3 and sys.argv[1] == "floats":
        floats(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "markdown":
        markdown()
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
