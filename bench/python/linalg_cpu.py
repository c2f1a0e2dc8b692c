#!/usr/bin/env python3
"""NumPy side of the CPU linear-algebra benchmark (bench/linalg_cpu.cpp is the xp side, and runs this).

  linalg_cpu.py [--threads N] [--reps 5]
      Times NumPy on the rows of xp_bench_linalg_cpu: solve of a 1024x1024 float64 system (one
      right-hand side), matmul 512^3 and 2048^3 float32; inputs of the same shapes and kind
      (uniform in [0, 1), the system's matrix plus 1024 on its diagonal), a warm-up, then `reps` timed
      calls. Prints one JSON object: {"numpy": version, "blas": NumPy's BLAS, "rows": {id: [ms, ...]}}.
      --threads N caps NumPy's BLAS threads (threadpoolctl when installed, else the OpenBLAS variables
      set before NumPy is imported).
"""

import argparse
import json
import os
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    if args.threads > 0:
        for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[v] = str(args.threads)
    import numpy as np

    rng = np.random.default_rng(1)
    n = 1024
    a = rng.random((n, n)) + n * np.eye(n)
    b = rng.random(n)
    m512 = [rng.random((512, 512), dtype=np.float32) for _ in range(2)]
    m2048 = [rng.random((2048, 2048), dtype=np.float32) for _ in range(2)]
    rows = {
        "solve_f64_1024": lambda: np.linalg.solve(a, b),
        "matmul_f32_512": lambda: m512[0] @ m512[1],
        "matmul_f32_2048": lambda: m2048[0] @ m2048[1],
    }
    out = {}
    for name, fn in rows.items():
        fn()
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        out[name] = times
    x = np.linalg.solve(a, b)
    residual = float(np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x)))
    blas = ""
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]["name"] + " " + cfg["Build Dependencies"]["blas"].get("version", "")
    except Exception:  # noqa: BLE001 - only reported
        pass
    json.dump({"numpy": np.__version__, "blas": blas, "solve_residual": residual, "rows": out}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
