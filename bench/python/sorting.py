#!/usr/bin/env python3
"""Sorting, boolean masks and unique: xp against CuPy and PyTorch on a GPU, or against NumPy on the
CPU (--cpu), in the same run.

  sorting.py [--cpu] [--log2 N] [--threads T]

Rows (the goals of "Array API completeness", point 8): sort and argsort of 2^N float32 and of 2^N
int32 keys (N = 27 on a GPU, 24 on the CPU unless --log2), x[mask] with half the mask set on 2^N
float32, unique of 2^(N-1) int32 (unique_values; np/cupy.unique, torch.unique(sorted=True)). NumPy's
rows use its default (fastest) sort and argsort, and its stable argsort in a row of its own.
Each call runs once to warm up (compiles, allocator), then 5 timed calls, each from its start to the
device's completion (synchronize): the median and min..max in ms. Every library's result is checked
against xp's, bit for bit (argsort: stable on every side, so the positions are equal too). The
last column is baseline time / xp time: above 1, xp is faster. CPU: NumPy is single-threaded for
these, xp uses --threads (default 2, the CI machine's cores).
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
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--log2", type=int)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import xp

    n = 1 << (args.log2 or (24 if args.cpu else 27))
    rng = np.random.default_rng(0)
    host = {
        "f32": rng.standard_normal(n, dtype=np.float32),
        "i32": rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int32),
        "mask": rng.random(n) < 0.5,
        "u32": rng.integers(0, 1 << 24, n // 2, dtype=np.int32),
    }
    libs = {}
    if args.cpu:
        xp.set_num_threads(args.threads)
        dev = xp.Device("cpu")
        libs["numpy"] = (np, lambda a: a, lambda: None, np.asarray)
    else:
        dev = xp.Device("cuda:0")
        try:
            import cupy as cp

            libs["cupy"] = (cp, cp.asarray, cp.cuda.Device(0).synchronize, cp.asnumpy)
        except Exception as e:  # noqa: BLE001
            print(f"cupy: not available ({e})")
        try:
            import torch

            libs["torch"] = (torch, lambda a: torch.from_numpy(a).cuda(), torch.cuda.synchronize,
                             lambda t: t.cpu().numpy())
        except Exception as e:  # noqa: BLE001
            print(f"torch: not available ({e})")
    xs = {k: xp.asarray(v, device=dev) for k, v in host.items()}
    xsync = lambda: xp.synchronize(dev)  # noqa: E731

    def xp_rows():
        return {
            "sort f32": lambda: xp.sort(xs["f32"]),
            "sort i32": lambda: xp.sort(xs["i32"]),
            "argsort f32": lambda: xp.argsort(xs["f32"]),
            "argsort i32": lambda: xp.argsort(xs["i32"]),
            **({"argsort f32 stable": lambda: xp.argsort(xs["f32"])} if args.cpu else {}),
            "mask f32": lambda: xs["f32"][xs["mask"]],
            "unique i32": lambda: xp.unique_values(xs["u32"]),
        }

    def lib_rows(name, mod, put):
        d = {k: put(v) for k, v in host.items()}
        if name == "torch":
            return {
                "sort f32": lambda: mod.sort(d["f32"], stable=True).values,
                "sort i32": lambda: mod.sort(d["i32"], stable=True).values,
                "argsort f32": lambda: mod.argsort(d["f32"], stable=True),
                "argsort i32": lambda: mod.argsort(d["i32"], stable=True),
                "mask f32": lambda: d["f32"][d["mask"]],
                "unique i32": lambda: mod.unique(d["u32"], sorted=True),
            }
        # NumPy's default sorts (its fastest: vectorized quicksort where the CPU has AVX2/AVX-512),
        # and its stable argsort beside them; CuPy's sorts are CUB's radix sorts (stable).
        return {
            "sort f32": lambda: mod.sort(d["f32"]),
            "sort i32": lambda: mod.sort(d["i32"]),
            "argsort f32": lambda: mod.argsort(d["f32"]),
            "argsort i32": lambda: mod.argsort(d["i32"]),
            **({"argsort f32 stable": lambda: mod.argsort(d["f32"], kind="stable")} if name == "numpy" else {}),
            "mask f32": lambda: d["f32"][d["mask"]],
            "unique i32": lambda: mod.unique(d["u32"]),
        }

    print(f"n = 2^{n.bit_length() - 1} ({n}); device {dev}; xp {xp.__version__}"
          + (f", {args.threads} threads; NumPy {np.__version__}" if args.cpu else ""))
    bad = 0
    header = f"{'row':<19} {'xp ms (min..max)':>24}"
    for name in libs:
        header += f" {name + ' ms':>12} {name + '/xp':>9}"
    print(header)
    xr = xp_rows()
    lr = {name: lib_rows(name, mod, put) for name, (mod, put, _, _) in libs.items()}
    for row in xr:
        res, med, lo, hi = timed(xr[row], xsync)
        ref = xp.asnumpy(res)
        line = f"{row:<19} {med:>9.3f} ({lo:.3f}..{hi:.3f})"
        for name, (mod, put, sync, back) in libs.items():
            r, m, _, _ = timed(lr[name][row], sync)
            got = back(r)
            if name == "numpy" and row.startswith(("sort", "argsort")) and "stable" not in row:
                # NumPy's default sorts are not stable: equal elements (-0.0 and 0.0 among them) come
                # in an order of their own, so the values they sort by are compared with ==
                key = host["f32" if "f32" in row else "i32"]
                got, ref_cmp = (key[got], key[ref]) if row.startswith("argsort") else (got, ref)
                same = got.shape == ref_cmp.shape and np.array_equal(got, ref_cmp)
            else:
                same = got.shape == ref.shape and (np.array_equal(got.view(np.uint8), ref.view(np.uint8))
                                                   if got.dtype == ref.dtype else np.array_equal(got, ref))
            if not same:
                bad += 1
            line += f" {m:>12.3f} {m / med:>8.2f}x" + ("" if same else " DIFFERS")
        print(line, flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
