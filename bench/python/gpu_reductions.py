"""The rows of bench/gpu_reductions.cpp in CuPy: each (op, dtype) over 1 GiB (bfloat16 left out: CuPy
has no such dtype), against a device-to-device copy of the same 1 GiB in the same run. 3 warm-ups,
then 5 batches of 10 calls between CUDA events; the median batch and its min..max. Each result is
compared with NumPy's on the host copy (exactly for integers, max, argmax and any; within a
relative 1e-4 for float sums, means and variances, 1e-2 for float16 results)."""
import sys

import cupy as cp
import numpy as np

QUICK = "--quick" in sys.argv
BYTES = (1 << 30) // (64 if QUICK else 1)


def measure(f):
    for _ in range(3):
        f()
    times = []
    for _ in range(5):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        for _ in range(10):
            f()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) / 10)
    times.sort()
    return times[2], times[0], times[4]


def make(rng, dtype, shape):
    if dtype == np.bool_:
        return cp.zeros(shape, dtype=cp.bool_)
    if np.issubdtype(dtype, np.floating):
        x = rng.uniform(-1, 1, size=shape, dtype=cp.float64 if dtype == np.float64 else cp.float32)
        return x.astype(dtype)
    low = 0 if np.issubdtype(dtype, np.unsignedinteger) else -100
    return rng.integers(low, 100, size=shape, dtype=dtype)


def apply(xp, op, x, axis):
    return getattr(xp, op)(x, axis=axis)


def main():
    rng = cp.random.default_rng(7)
    x = make(rng, np.float32, (BYTES // 4,))
    y = cp.empty_like(x)
    m, lo, hi = measure(lambda: y.__setitem__(Ellipsis, x))
    copy_gbps = 2 * BYTES / (m * 1e-3) / 1e9
    print(f"CuPy {cp.__version__}; copy of {BYTES >> 20} MiB float32 (read plus written): "
          f"{m:.4f} ms [{lo:.4f}..{hi:.4f}], {copy_gbps:.0f} GB/s\n")
    rows = [("sum", t, None) for t in (np.float32, np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64)]
    rows += [("mean", np.float32, None), ("var", np.float32, None)]
    rows += [("max", t, None) for t in (np.float32, np.float64, np.float16, np.int8, np.int32)]
    rows += [("argmax", t, None) for t in (np.float32, np.float16, np.int8, np.int64)]
    rows += [("any", np.bool_, None)]
    rows += [("sum", np.float32, 1), ("max", np.float32, 1), ("sum", np.float32, 0), ("max", np.float32, 0)]
    rows += [("argmax", np.float32, 1)]
    rows += [("sum", np.float32, 1, rows_of) for rows_of in (1024, 4096)]  # shorter rows: 4 KiB, 16 KiB
    print("| op | dtype | axes | shape | ms (min..max) | GB/s read | of copy GB/s | matches NumPy |")
    print("|---|---|---|---|---:|---:|---:|---|")
    failures = 0
    for op, t, axis, *row_length in rows:
        n = BYTES // np.dtype(t).itemsize
        side = int(round(n ** 0.5))
        shape = (n,) if axis is None else (side, n // side)
        if row_length:
            shape = (n // row_length[0], row_length[0])
        x = make(rng, t, shape)
        m, lo, hi = measure(lambda: apply(cp, op, x, axis))
        got = cp.asnumpy(apply(cp, op, x, axis)).astype(np.float64)
        want = np.asarray(apply(np, op, cp.asnumpy(x), axis)).astype(np.float64)
        exact = op in ("max", "argmax", "any") or not np.issubdtype(t, np.floating)
        tol = 1e-2 if np.dtype(t).itemsize == 2 else 1e-4  # a 16-bit float result: within about an ulp
        ok = np.array_equal(got, want) if exact else np.allclose(got, want, rtol=tol, atol=tol)
        failures += 0 if ok else 1
        gbps = BYTES / (m * 1e-3) / 1e9
        shape_text = str(n) if axis is None else f"{shape[0]}x{shape[1]}"
        print(f"| {op} | {np.dtype(t).name} | {'all' if axis is None else axis} | {shape_text} | "
              f"{m:.4f} ({lo:.4f}..{hi:.4f}) | {gbps:.0f} | {gbps / copy_gbps:.3f} | {'yes' if ok else 'NO'} |",
              flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
