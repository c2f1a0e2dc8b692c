#!/usr/bin/env python3
"""Instructions per call of `c = a + b` (or `c = a * 2.0`: --scalar; or `add(a, b, out=c)`:
--out) from Python (1,024 float32 elements, evaluated each call: xp is lazy) for xp and for NumPy,
counted by valgrind's callgrind: a measure of the host cost that a busy or shared machine does not
disturb (the clock's does: bench/python/launch_rows.py's host_us).

    host_instructions.py [--python PYTHON] [--n 1024] [--calls 20000] [--scalar | --out]

With --out, a third row calls the extension's function itself (`xp._xp.add`), without the object
that carries its Python signature (`xp.add`, python/src/signed.cpp): the difference is that
object's cost.

Each library runs in processes of its own under `valgrind --tool=callgrind`, once with 1,000 calls
and once with 1,000 + CALLS; the difference over CALLS is the cost of one call (the import and the
set-up cancel out). Prints both counts and xp's over NumPy's. Needs valgrind, NumPy and xp on
PYTHONPATH. An instruction is not a cycle (an atomic operation or a cache miss costs more): this
ranks changes to the same code; the goal is stated in time (xp bench launch).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

CHILD = """
import sys
import numpy as np
lib, n, calls, scalar = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
a0 = np.arange(n, dtype=np.float32)
b0 = np.ones(n, dtype=np.float32)
if lib in ("xp-out", "xp-ext-out"):
    import xp
    a, b, c = xp.asarray(a0), xp.asarray(b0), xp.empty((n,), dtype=xp.float32)
    add = xp.add if lib == "xp-out" else xp._xp.add
    assert xp.to_cpu(add(a, b, out=c)).tobytes() == (a0 + b0).tobytes()
    for _ in range(calls):
        add(a, b, out=c)
elif lib == "numpy-out":
    a, b, c = a0, b0, np.empty(n, dtype=np.float32)
    for _ in range(calls):
        np.add(a, b, out=c)
elif lib == "xp":
    import xp
    a, b = xp.asarray(a0), xp.asarray(b0)
    ref = a0 * 2.0 if scalar else a0 + b0
    assert xp.to_cpu((a * 2.0 if scalar else a + b).eval()).tobytes() == ref.tobytes()
    if scalar:
        for _ in range(calls):
            (a * 2.0).eval()
    else:
        for _ in range(calls):
            (a + b).eval()
else:
    a, b = a0, b0
    if scalar:
        for _ in range(calls):
            a * 2.0
    else:
        for _ in range(calls):
            a + b
"""


def count(python, lib, n, calls, scalar):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, "-c", CHILD, lib,
                            str(n), str(calls), "1" if scalar else "0"], capture_output=True, text=True, env=env)
        m = re.search(r"Collected : (\d+)", r.stderr)
        if r.returncode != 0 or m is None:
            sys.exit(f"{lib}: valgrind failed (exit {r.returncode}):\n{r.stderr[-2000:]}")
        return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--scalar", action="store_true", help="time a * 2.0 instead of a + b")
    ap.add_argument("--out", action="store_true", help="time add(a, b, out=c) instead of a + b")
    args = ap.parse_args()
    per_call = {}
    libs = ("xp-out", "numpy-out", "xp-ext-out") if args.out else ("xp", "numpy")
    for lib in libs:
        base = count(args.python, lib, args.n, 1000, args.scalar)
        more = count(args.python, lib, args.n, 1000 + args.calls, args.scalar)
        per_call[lib] = (more - base) / args.calls
        print(f"{lib:10s} {per_call[lib]:8.0f} instructions per call ({base} and {more} in all)")
    if args.out:
        print(f"xp / NumPy: {per_call['xp-out'] / per_call['numpy-out']:.3f} (add(a, b, out=c), n = {args.n}, "
              f"{args.calls} calls); xp.add over xp._xp.add: {per_call['xp-out'] - per_call['xp-ext-out']:+.0f} "
              "instructions a call")
        return
    expr = "a * 2.0" if args.scalar else "a + b"
    print(f"xp / NumPy: {per_call['xp'] / per_call['numpy']:.3f} (c = {expr}, n = {args.n}, {args.calls} calls)")


if __name__ == "__main__":
    main()
