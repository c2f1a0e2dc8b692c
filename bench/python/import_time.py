#!/usr/bin/env python3
"""How long `import xp` takes beside `import numpy` and `import cupy`, in one run.

  import_time.py [--runs 15] [--python PYTHON] [MODULE ...]   (default modules: xp numpy cupy)

Each run starts a fresh interpreter per module (the modules take turns, so that a slow moment of the
machine falls on all of them) and times the import statement alone inside it, with
time.perf_counter() around `import MODULE`: the interpreter's own start is not counted. It also
reports, from the same child, whether the import created a CUDA context or opened a CUDA library
(libcuda, libnvrtc, libcudart, libcublas in /proc/self/maps). A module that does not import is
reported with its error, not timed. Prints one line per module (median, min, max in ms), then the
ratio of xp's median to NumPy's (the goal: at most 1).
"""
import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
def cuda_libs():
    try:
        with open("/proc/self/maps") as f:
            text = f.read()
    except OSError:
        return []
    names = ("libcuda.so", "libnvrtc", "libcudart", "libcublas")
    return sorted({n for n in names if n in text})
before = cuda_libs()
t0 = time.perf_counter()
try:
    __import__(sys.argv[1])
except Exception as e:
    print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
    sys.exit(0)
ms = (time.perf_counter() - t0) * 1e3
print(json.dumps({"ms": ms, "cuda_libs_opened": [n for n in cuda_libs() if n not in before]}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("modules", nargs="*", default=["xp", "numpy", "cupy"])
    args = ap.parse_args()
    times = {m: [] for m in args.modules}
    errors, opened = {}, {}
    for _ in range(args.runs):
        for m in args.modules:
            if m in errors:
                continue
            r = subprocess.run([args.python, "-c", CHILD, m], capture_output=True, text=True)
            try:
                doc = json.loads(r.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                errors[m] = f"exit {r.returncode}: {r.stderr.strip()[-300:]}"
                continue
            if "error" in doc:
                errors[m] = doc["error"]
                continue
            times[m].append(doc["ms"])
            opened[m] = sorted(set(opened.get(m, [])) | set(doc["cuda_libs_opened"]))
    print(f"# import time, {args.runs} fresh interpreters per module, taking turns ({args.python}, "
          f"Python {sys.version.split()[0]})")
    print("# module  median_ms  min_ms  max_ms  cuda_libraries_opened_by_the_import")
    for m in args.modules:
        if m in errors:
            print(f"{m}  not imported: {errors[m]}")
            continue
        t = times[m]
        print(f"{m}  {statistics.median(t):.2f}  {min(t):.2f}  {max(t):.2f}  {','.join(opened[m]) or 'none'}")
    if times.get("xp") and times.get("numpy") and "xp" not in errors and "numpy" not in errors:
        ratio = statistics.median(times["xp"]) / statistics.median(times["numpy"])
        print(f"xp / numpy (medians): {ratio:.3f} ({'goal met' if ratio <= 1 else 'goal NOT met'}: <= 1)")
    if times.get("xp") and times.get("cupy") and "cupy" not in errors:
        print(f"xp / cupy (medians): {statistics.median(times['xp']) / statistics.median(times['cupy']):.3f}")


if __name__ == "__main__":
    main()
