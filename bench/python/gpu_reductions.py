"""The rows of bench/gpu_reductions.cpp in CuPy, or with --torch in PyTorch: each (op, dtype) over
1 GiB (bfloat16 in PyTorch only: CuPy has no such dtype), against a device-to-device copy of the
same 1 GiB in the same run. 3 warm-ups, then 5 batches of 10 calls between CUDA events; the median
batch and its min..max. Each result is compared with NumPy's on the host copy (exactly for
integer sums, max, argmax and any; within a relative 1e-4 for float sums, means and variances, 1e-2 for
16-bit float results). var is the population variance (ddof / correction 0) everywhere."""
import sys

import numpy as np

QUICK = "--quick" in sys.argv
TORCH = "--torch" in sys.argv
BYTES = (1 << 30) // (64 if QUICK else 1)

if TORCH:
    import torch
else:
    import cupy as cp

ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1, "int32": 4,
            "int64": 8, "bool": 1}


def measure(f):
    for _ in range(3):
        f()
    times = []
    for _ in range(5):
        if TORCH:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        else:
            a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        for _ in range(10):
            f()
        b.record()
        b.synchronize()
        times.append((a.elapsed_time(b) if TORCH else cp.cuda.get_elapsed_time(a, b)) / 10)
    times.sort()
    return times[2], times[0], times[4]


def make(rng, dtype, shape):
    """Uniform floats in [-1, 1), integers in [-100, 100) ([0, 100) unsigned), bool all false."""
    if TORCH:
        t = getattr(torch, dtype)
        if dtype == "bool":
            return torch.zeros(shape, dtype=t, device="cuda")
        if dtype.startswith("float") or dtype == "bfloat16":
            wide = torch.float64 if dtype == "float64" else torch.float32
            return (torch.rand(shape, dtype=wide, device="cuda", generator=rng) * 2 - 1).to(t)
        return torch.randint(0 if dtype == "uint8" else -100, 100, shape, dtype=t, device="cuda", generator=rng)
    if dtype == "bool":
        return cp.zeros(shape, dtype=cp.bool_)
    if dtype.startswith("float"):
        x = rng.uniform(-1, 1, size=shape, dtype=cp.float64 if dtype == "float64" else cp.float32)
        return x.astype(dtype)
    return rng.integers(0 if dtype == "uint8" else -100, 100, size=shape, dtype=dtype)


def apply(op, x, axis):
    if not TORCH:
        return getattr(cp, op)(x, axis=axis)
    dims = {} if axis is None else {"dim": axis}
    if op == "var":
        return torch.var(x, correction=0, **dims)
    if op == "max":
        return torch.amax(x, **dims) if dims else torch.amax(x)
    return getattr(torch, op)(x, **dims)


def to_host(x):
    if TORCH:
        return (x.float() if x.dtype == torch.bfloat16 else x).cpu().numpy()
    return cp.asnumpy(x)


def main():
    rng = torch.Generator(device="cuda").manual_seed(7) if TORCH else cp.random.default_rng(7)
    x = make(rng, "float32", (BYTES // 4,))
    if TORCH:
        y = torch.empty_like(x)
        m, lo, hi = measure(lambda: y.copy_(x))
        name = f"PyTorch {torch.__version__}"
    else:
        y = cp.empty_like(x)
        m, lo, hi = measure(lambda: y.__setitem__(Ellipsis, x))
        name = f"CuPy {cp.__version__}"
    copy_gbps = 2 * BYTES / (m * 1e-3) / 1e9
    print(f"{name}; copy of {BYTES >> 20} MiB float32 (read plus written): "
          f"{m:.4f} ms [{lo:.4f}..{hi:.4f}], {copy_gbps:.0f} GB/s\n")
    sums = ["float32", "float64", "float16"] + (["bfloat16"] if TORCH else []) + ["int8", "uint8", "int32", "int64"]
    rows = [("sum", t, None) for t in sums]
    rows += [("mean", "float32", None), ("var", "float32", None)]
    rows += [("max", t, None) for t in ("float32", "float64", "float16", "int8", "int32")]
    rows += [("argmax", t, None) for t in ("float32", "float16", "int8", "int64")]
    rows += [("any", "bool", None)]
    rows += [("sum", "float32", 1), ("max", "float32", 1), ("sum", "float32", 0), ("max", "float32", 0)]
    rows += [("argmax", "float32", 1)]
    rows += [("sum", "float16", 0, 16384), ("argmax", "float32", 0), ("var", "float32", 0)]
    rows += [("sum", "float32", 1, rows_of) for rows_of in (1024, 4096)]  # shorter rows: 4 KiB, 16 KiB
    rows += [(op, "int8", 0) for op in ("sum", "max", "argmax", "var")]
    print("| op | dtype | axes | shape | ms (min..max) | GB/s read | of copy GB/s | matches NumPy |")
    print("|---|---|---|---|---:|---:|---:|---|")
    failures = 0
    for op, t, axis, *row_length in rows:
        n = BYTES // ITEMSIZE[t]
        side = int(round(n ** 0.5))
        shape = (n,) if axis is None else (side, n // side)
        if row_length:
            shape = (n // row_length[0], row_length[0])
        x = make(rng, t, shape)
        shape_text = str(n) if axis is None else f"{shape[0]}x{shape[1]}"
        try:
            apply(op, x, axis)
        except (RuntimeError, TypeError) as e:  # torch.var takes floats only
            print(f"| {op} | {t} | {'all' if axis is None else axis} | {shape_text} | "
                  f"not supported: {str(e).splitlines()[0]} | | | |", flush=True)
            continue
        m, lo, hi = measure(lambda: apply(op, x, axis))
        got = to_host(apply(op, x, axis)).astype(np.float64)
        want = np.asarray(getattr(np, op)(to_host(x), axis=axis)).astype(np.float64)
        exact = op in ("max", "argmax", "any") or (op == "sum" and not (t.startswith("float") or t == "bfloat16"))
        tol = 1e-2 if ITEMSIZE[t] == 2 else 1e-4  # a 16-bit float result: within about an ulp
        ok = np.array_equal(got, want) if exact else np.allclose(got, want, rtol=tol, atol=tol)
        failures += 0 if ok else 1
        gbps = BYTES / (m * 1e-3) / 1e9
        print(f"| {op} | {t} | {'all' if axis is None else axis} | {shape_text} | "
              f"{m:.4f} ({lo:.4f}..{hi:.4f}) | {gbps:.0f} | {gbps / copy_gbps:.3f} | {'yes' if ok else 'NO'} |",
              flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
