#!/usr/bin/env python3
"""Factorizations (cuSOLVER) and transforms (cuFFT) on a GPU: xp against CuPy in the same run.

  linalg_fft_gpu.py [--quick]

Rows: solve of a batch of 1024 systems of 64x64 float32 (one right-hand side each; the issue's goal
is xp at least as fast as CuPy); cholesky, qr and svd of one 4096x4096 float32 matrix; fft of 2^24
complex64; rfft of 2^25 float32. --quick divides the sizes (a smoke run, not a measurement).
Each call runs once to warm up (plans, work areas, kernels), then 5 timed calls, each from its start
to the device's completion (synchronize): the median and min..max in ms. Every result of xp is
checked against CuPy's (the same math in the same libraries: within 1e-3 relative for float32, on
what is unique: the solution, the Cholesky factor, |R| of QR, the singular values, the transforms).
The last column is CuPy's time / xp's: above 1, xp is faster.
"""

import argparse
import statistics
import sys
import time

import numpy as np


def timed(fn, sync):
    fn()
    sync()
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        r = fn()
        sync()
        ts.append((time.perf_counter() - t0) * 1e3)
    return r, statistics.median(ts), min(ts), max(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    import cupy as cp

    import xp

    q = 16 if args.quick else 1
    rng = np.random.default_rng(0)
    nb, ns, nbig = 1024 // q, 64, 4096 // q
    a = rng.standard_normal((nb, ns, ns), dtype=np.float32) + np.float32(ns) * np.eye(ns, dtype=np.float32)
    b = rng.standard_normal((nb, ns, 1), dtype=np.float32)
    m = rng.standard_normal((nbig, nbig), dtype=np.float32)
    spd = (m @ m.T + np.float32(nbig) * np.eye(nbig, dtype=np.float32)).astype(np.float32)
    z = (rng.standard_normal(1 << 24 - (4 if args.quick else 0)) +
         1j * rng.standard_normal(1 << 24 - (4 if args.quick else 0))).astype(np.complex64)
    r = rng.standard_normal(1 << 25 - (4 if args.quick else 0), dtype=np.float32)
    host = {"a": a, "b": b, "m": m, "spd": spd, "z": z, "r": r}

    dev = xp.Device("cuda:0")
    xs = {k: xp.asarray(v, device=dev) for k, v in host.items()}
    cs = {k: cp.asarray(v) for k, v in host.items()}
    xsync = lambda: xp.synchronize(dev)  # noqa: E731
    csync = cp.cuda.Device(0).synchronize
    rows = [
        (f"solve {nb} x {ns}x{ns} float32", lambda: xp.linalg.solve(xs["a"], xs["b"]),
         lambda: cp.linalg.solve(cs["a"], cs["b"]), lambda v: v),
        (f"cholesky {nbig}^2 float32", lambda: xp.linalg.cholesky(xs["spd"]), lambda: cp.linalg.cholesky(cs["spd"]),
         lambda v: v),
        (f"qr {nbig}^2 float32", lambda: xp.linalg.qr(xs["m"]), lambda: cp.linalg.qr(cs["m"]), lambda v: np.abs(v[1])),
        (f"svd {nbig}^2 float32", lambda: xp.linalg.svd(xs["m"]), lambda: cp.linalg.svd(cs["m"]), lambda v: v[1]),
        (f"fft 2^{int(np.log2(z.size))} complex64", lambda: xp.fft.fft(xs["z"]), lambda: cp.fft.fft(cs["z"]),
         lambda v: v),
        (f"rfft 2^{int(np.log2(r.size))} float32", lambda: xp.fft.rfft(xs["r"]), lambda: cp.fft.rfft(cs["r"]),
         lambda v: v),
    ]
    print(f"xp {xp.__version__}, CuPy {cp.__version__}, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print(f"{'row':34s} {'xp ms (min..max)':>26s} {'CuPy ms (min..max)':>26s} {'CuPy/xp':>8s}  check")
    bad = 0
    for name, fx, fc, unique in rows:
        rx, tx, lx, hx = timed(fx, xsync)
        rc, tc, lc, hc = timed(fc, csync)
        gx = unique(tuple(np.asarray(xp.asarray(v, device=xp.Device("cpu"))) for v in rx) if isinstance(rx, tuple)
                    else np.asarray(xp.asarray(rx, device=xp.Device("cpu"))))
        gc = unique(tuple(cp.asnumpy(v) for v in rc) if isinstance(rc, tuple) else cp.asnumpy(rc))
        scale = max(float(np.max(np.abs(gc))), 1e-30)
        ok = float(np.max(np.abs(gx - gc))) <= 1e-3 * scale
        bad += not ok
        print(f"{name:34s} {tx:10.3f} ({lx:.3f}..{hx:.3f}) {tc:10.3f} ({lc:.3f}..{hc:.3f}) {tc / tx:8.2f}  "
              f"{'ok' if ok else 'BAD'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
