#!/usr/bin/env python3
"""NumPy and numexpr side of the CPU array benchmark (bench/cpu_arrays.cpp is the xp side).

  cpu_arrays.py run --data DIR [--threads N] [--json FILE] [--min-ms MS] [--only ID,...]
      Times NumPy and numexpr on the inputs xp_bench_cpu_arrays wrote to DIR (in_*.npy), the same
      rows timed the same way (a warm-up that sizes a batch of calls to last >= MS, then 5 timed
      batches; median and min..max of the per-call times), and compares xp's results (out_*.npy)
      with NumPy's. numexpr gets N threads (numexpr.set_num_threads); NumPy is single-threaded for
      elementwise work, and its own BLAS gets N threads for matmul.

  cpu_arrays.py merge --xp XP.json --py PY.json --md OUT.md --json OUT.json [--threads N]
                      [--cpu-matmul TXT]
      One Markdown table and one JSON file from both sides, with the machine's facts.
"""

import argparse
import json
import os
import platform
import sys
import timeit

ROW_ORDER = ["add_out", "fma_new", "fma_out", "sum", "exp", "log", "sin",
             "matmul_f32_1024", "matmul_f32_2048", "matmul_f64_2048", "small_add"]

# The goals of the issue: (baseline, minimum speed-up of xp over it, i.e. baseline time / xp time).
GOALS = {
    "add_out": [("numpy", 1.0)],
    "fma_new": [("numpy", 2.5), ("numexpr", 1.0)],
    "fma_out": [("numexpr", 1.0)],
    "sum": [("numpy", 1.0)],
    "exp": [("numpy", 1.0)],
    "log": [("numpy", 1.0)],
    "sin": [("numpy", 1.0)],
    "matmul_f32_1024": [("openblas", 0.9)],
    "matmul_f32_2048": [("openblas", 0.9)],
    "matmul_f64_2048": [("openblas", 0.9)],
    "small_add": [("numpy", 1.0)],
}

# The figures the issue quotes (another machine, NumPy 1.24, 2026-12-02), for reference.
ISSUE_NUMPY_1_24 = {"add_out": 5.9e-3, "fma_new": 19.7e-3, "sum": 3.7e-3, "small_add": 0.46e-6}


# ---- run ------------------------------------------------------------------------------------------

def set_thread_env(threads):
    # Before NumPy is imported: its bundled OpenBLAS reads these when it loads.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "NUMEXPR_MAX_THREADS"):
        os.environ[var] = str(threads)


def numpy_blas_threads(np, threads):
    """Sets the thread count of NumPy's own OpenBLAS (already loaded) and reads it back."""
    try:
        import threadpoolctl  # optional
        with_blas = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
        threadpoolctl.threadpool_limits(threads, user_api="blas")
        if with_blas:
            return threads, with_blas[0].get("filepath", "")
    except ImportError:
        pass
    import ctypes
    import glob
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*.so*"))):
        lib = ctypes.CDLL(path)  # the instance NumPy loaded
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", "64_"),
                               ("openblas", "")):
            try:
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}")
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}")
            except AttributeError:
                continue
            setter(ctypes.c_int(threads))
            return int(getter()), os.path.basename(path)
    return None, ""


def time_row(stmt, min_s, runs=5, env=None):
    """Warm-up and batch sizing (doubling until a batch lasts min_s), then `runs` timed batches.

    stmt: a callable, or a statement (text) run with the names of env, looped without a call of
    our own around it (what a Python program pays for `s + t`). timeit turns the GC off meanwhile."""
    timer = timeit.Timer(stmt, globals=env or {})

    def batch(reps):
        return timer.timeit(reps)

    batch(1)
    reps = 1
    while True:
        s = batch(reps)
        if s >= min_s:
            break
        want = min_s / max(s, 1e-9) * 1.2
        reps = max(reps * 2, min(int(reps * want + 0.999), reps * 64))
    per_call = [batch(reps) / reps for _ in range(runs)]
    ordered = sorted(per_call)
    return {"reps": reps, "runs_s": per_call, "median_s": ordered[len(ordered) // 2],
            "min_s": ordered[0], "max_s": ordered[-1]}


def ulp_diff(np, x, y):
    """Largest distance in units in the last place between two float arrays of one dtype."""
    itype = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}[x.dtype]
    def ordered(v):
        i = v.view(itype).astype(np.int64)
        return np.where(i < 0, np.iinfo(itype).min - i, i)
    return int(np.max(np.abs(ordered(x) - ordered(y)))) if x.size else 0


def compare(np, kind, got, ref, inputs=None):
    """{"match": bool, "detail": str}: got (xp or numexpr) against NumPy's ref."""
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return {"match": False, "detail": f"shape/dtype {got.shape} {got.dtype} vs NumPy {ref.shape} {ref.dtype}"}
    both_nan = np.isnan(got) & np.isnan(ref)
    if kind == "exact":
        same = (got == ref) | both_nan
        if bool(np.all(same)):
            return {"match": True, "detail": "bit for bit"}
        bad = np.flatnonzero(~same)
        return {"match": False, "detail": f"{bad.size} differ, first at {int(bad[0])}: "
                                          f"{got.flat[bad[0]]!r} vs NumPy {ref.flat[bad[0]]!r}"}
    if kind == "ulp":
        # inputs: the float64 result rounded to float32 (correctly rounded but for rare double
        # roundings). Tolerance: 4 ulp from it (glibc's bound for its vector float32 functions), or
        # NumPy's own error when larger.
        if not bool(np.all(np.isfinite(got) == np.isfinite(ref))):
            return {"match": False, "detail": "finite/non-finite differ"}
        fin = np.isfinite(ref)
        err, np_err, u = (ulp_diff(np, v[fin], w[fin]) for v, w in ((got, inputs), (ref, inputs), (got, ref)))
        tol = max(4, np_err)
        return {"match": err <= tol, "max_ulp_vs_numpy": u, "max_ulp_error": err, "numpy_max_ulp_error": np_err,
                "detail": ("bit for bit" if u == 0 else f"max {u} ulp apart") +
                          f"; error {err} ulp, NumPy's {np_err} (tolerance {tol})"}
    if kind == "sum":
        scale = float(np.sum(np.abs(inputs, dtype=np.float64)))
        exact = float(np.sum(inputs, dtype=np.float64))
        rel = abs(float(got) - float(ref)) / max(scale, 1e-30)
        return {"match": rel <= 1e-6,
                "detail": f"{float(got):.9g} vs NumPy {float(ref):.9g} (float64 sum {exact:.9g}); "
                          f"|diff| / sum|a| = {rel:.2g} (tolerance 1e-6)"}
    if kind == "matmul":
        tol = 1e-5 if ref.dtype == np.float32 else 1e-12
        rel = float(np.max(np.abs(got.astype(np.float64) - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
        return {"match": rel <= tol, "detail": f"max |diff| / max |C| = {rel:.2g} (tolerance {tol:g})"}
    raise ValueError(kind)


def run(args):
    threads = args.threads or os.cpu_count() or 1
    set_thread_env(threads)
    import numpy as np
    try:
        import numexpr as ne
    except ImportError:
        ne = None
    if ne is not None:
        ne.set_num_threads(threads)
    blas_threads, blas_lib = numpy_blas_threads(np, threads)
    min_s = args.min_ms * 1e-3
    wanted = set(args.only.split(",")) if args.only else None

    d = args.data
    if not os.path.exists(os.path.join(d, "in_a.npy")):
        sys.exit(f"no inputs in {d}: run xp_bench_cpu_arrays --data {d} first")
    def load(name):
        return np.load(os.path.join(d, name + ".npy"))
    def xp_out(row):
        path = os.path.join(d, f"out_{row}.npy")
        return np.load(path) if os.path.exists(path) else None

    a, b, c, x, p, s, t = (load("in_" + k) for k in "abcxpst")
    n = a.size
    o = np.empty_like(a)
    env = {"a": a, "b": b, "c": c, "x": x, "p": p, "s": s, "t": t}
    def ev(expr, **kw):
        return ne.evaluate(expr, local_dict=env, **kw)
    rows = []
    print(f"NumPy {np.__version__}" + (f", numexpr {ne.__version__} ({ne.get_num_threads()} threads)" if ne else
                                       ", no numexpr")
          + f"; NumPy's BLAS threads: {blas_threads}; n = {n} float32; per call: median [min..max] of 5 batches"
          f" of >= {args.min_ms:g} ms", flush=True)

    def row(rid, np_text, np_fn, ne_text, ne_fn, kind, np_result, ne_result, xp_ref_inputs=None):
        if wanted is not None and rid not in wanted:
            return
        if callable(xp_ref_inputs):
            xp_ref_inputs = xp_ref_inputs()
        r = {"id": rid, "numpy_code": np_text, "numpy": time_row(np_fn, min_s, env=env)}
        ref = np_result()
        if ne is not None and ne_fn is not None:
            r["numexpr_code"] = ne_text
            r["numexpr"] = time_row(ne_fn, min_s)
            r["numexpr_check"] = compare(np, kind, ne_result(), ref, xp_ref_inputs)
        got = xp_out(rid)
        r["check"] = compare(np, kind, got, ref, xp_ref_inputs) if got is not None else \
            {"match": None, "detail": "no xp result in the data folder"}
        rows.append(r)
        line = f"{rid:<18} NumPy {fmt(r['numpy'])}"
        if "numexpr" in r:
            line += f"   numexpr {fmt(r['numexpr'])}"
        line += f"   xp vs NumPy: {'match' if r['check']['match'] else 'MISMATCH' if r['check']['match'] is False else '-'}"
        line += f" ({r['check']['detail']})"
        print(line, flush=True)

    row("add_out", "np.add(a, b, out=o)", lambda: np.add(a, b, out=o),
        "ne.evaluate('a + b', out=o)", lambda: ev("a + b", out=o),
        "exact", lambda: np.add(a, b, out=o).copy(), lambda: ev("a + b"))
    row("fma_new", "a * b + c", lambda: a * b + c,
        "ne.evaluate('a * b + c')", lambda: ev("a * b + c"),
        "exact", lambda: a * b + c, lambda: ev("a * b + c"))

    def np_fma_out():
        np.multiply(a, b, out=o)
        np.add(o, c, out=o)
    row("fma_out", "np.multiply(a, b, out=o); np.add(o, c, out=o)", np_fma_out,
        "ne.evaluate('a * b + c', out=o)", lambda: ev("a * b + c", out=o),
        "exact", lambda: a * b + c, lambda: ev("a * b + c"))
    row("sum", "np.sum(a)", lambda: np.sum(a),
        "ne.evaluate('sum(a)')", lambda: ev("sum(a)"),
        "sum", lambda: np.sum(a), lambda: ev("sum(a)"), a)
    for fn, arg, name in (("exp", x, "x"), ("log", p, "p"), ("sin", x, "x")):
        ufunc = getattr(np, fn)
        expr = f"{fn}({name})"
        row(fn, f"np.{fn}({name}, out=o)", lambda u=ufunc, v=arg: u(v, out=o),
            f"ne.evaluate('{expr}', out=o)", lambda e=expr: ev(e, out=o),
            "ulp", lambda u=ufunc, v=arg: u(v), lambda e=expr: ev(e),
            lambda u=ufunc, v=arg: u(v.astype(np.float64)).astype(np.float32))
    for mid in ("matmul_f32_1024", "matmul_f32_2048", "matmul_f64_2048"):
        pa = os.path.join(d, f"in_{mid}_A.npy")
        if not os.path.exists(pa):
            continue
        A, B = load(f"in_{mid}_A"), load(f"in_{mid}_B")
        row(mid, "A @ B", lambda A=A, B=B: A @ B, None, None, "matmul", lambda A=A, B=B: A @ B, None)
    row("small_add", "s + t (1,024 elements)", "s + t",
        "ne.evaluate('s + t')", lambda: ev("s + t"),
        "exact", lambda: s + t, lambda: ev("s + t"))

    blas = {}
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:  # older NumPy: no dicts
        pass
    result = {
        "python": platform.python_version(),
        "numpy_version": np.__version__,
        "numexpr_version": ne.__version__ if ne else None,
        "numexpr_threads": ne.get_num_threads() if ne else None,
        "numexpr_vml": bool(ne.use_vml) if ne else None,
        "threads": threads,
        "numpy_blas": {"name": blas.get("name"), "version": blas.get("version"),
                       "config": blas.get("openblas configuration"), "threads": blas_threads,
                       "library": blas_lib},
        "n": int(n),
        "min_ms": args.min_ms,
        "rows": rows,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if all(r["check"]["match"] is not False for r in rows) else 1


# ---- merge ----------------------------------------------------------------------------------------

def fmt(t, unit=None):
    if t is None:
        return "-"
    m = t["median_s"]
    scale, u = (1e3, "ms") if (unit or ("ms" if m >= 1e-3 else "us")) == "ms" else (1e6, "us")
    return f"{m * scale:.3f} [{t['min_s'] * scale:.3f}..{t['max_s'] * scale:.3f}] {u}"


def machine_facts():
    facts = {"cpu": None, "cores": os.cpu_count(), "kernel": platform.release(), "os": None}
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        for line in info.splitlines():
            if line.startswith("model name"):
                facts["cpu"] = line.split(":", 1)[1].strip()
                break
        facts["cpuinfo_processors"] = sum(1 for line in info.splitlines() if line.startswith("processor"))
        flags = next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), [])
        facts["simd"] = " ".join(f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl")
                                 if f in flags)
    except OSError:
        pass
    try:
        facts["cores_usable"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    facts["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return facts


def merge(args):
    with open(args.xp) as f:
        xpj = json.load(f)
    with open(args.py) as f:
        pyj = json.load(f)
    facts = machine_facts()
    xp_rows = {r["id"]: r for r in xpj["rows"]}
    py_rows = {r["id"]: r for r in pyj["rows"]}
    ids = [i for i in ROW_ORDER if i in xp_rows or i in py_rows]
    merged = []
    for rid in ids:
        xr, pr = xp_rows.get(rid, {}), py_rows.get(rid, {})
        xt = xr.get("xp")
        base = {"numpy": pr.get("numpy"), "numexpr": pr.get("numexpr"), "openblas": xr.get("openblas_direct")}
        speed = {k: (v["median_s"] / xt["median_s"] if v and xt else None) for k, v in base.items()}
        goals = []
        for k, need in GOALS.get(rid, []):
            goals.append({"baseline": k, "min_speedup": need, "speedup": speed[k],
                          "met": None if speed[k] is None else speed[k] >= need})
        merged.append({"id": rid, "label": xr.get("label", rid), "xp": xt, **base, "speedup": speed,
                       "goals": goals, "check": pr.get("check"), "numexpr_check": pr.get("numexpr_check"),
                       "numpy_code": pr.get("numpy_code"), "numexpr_code": pr.get("numexpr_code")})

    names = {"numpy": "NumPy", "numexpr": "numexpr", "openblas": "OpenBLAS"}
    n = xpj.get("n", 0)
    log2n = n.bit_length() - 1 if n and n & (n - 1) == 0 else None
    lines = []
    lines.append(f"# xp CPU arrays against NumPy and numexpr")
    lines.append("")
    lines.append(f"- CPU: {facts.get('cpu')} ({facts.get('simd', '')}); {facts.get('cores')} cores"
                 f" ({facts.get('cores_usable')} usable); {facts.get('os')}, kernel {facts.get('kernel')}")
    lines.append(f"- xp {xpj.get('xp_version')}, built with {xpj.get('compiler')}; {xpj.get('threads')} threads")
    ob = xpj.get("openblas", {})
    lines.append(f"- OpenBLAS that xp loads (and the `OpenBLAS` column calls directly, same instance and buffers):"
                 f" {ob.get('config') or ob.get('error')}; {ob.get('threads')} threads")
    nb = pyj.get("numpy_blas", {})
    lines.append(f"- NumPy {pyj.get('numpy_version')} (Python {pyj.get('python')}), its own BLAS for `A @ B`:"
                 f" {nb.get('name')} {nb.get('version')} ({nb.get('config')}), {nb.get('threads')} threads;"
                 f" single-threaded elementwise")
    lines.append(f"- numexpr {pyj.get('numexpr_version')}, {pyj.get('numexpr_threads')} threads"
                 f" (VML: {'yes' if pyj.get('numexpr_vml') else 'no'})")
    lines.append(f"- n = {'2^%d' % log2n if log2n is not None else n} float32 unless noted; the same inputs"
                 f" (xp's Philox generator, one seed) on every side")
    lines.append(f"- Times per call: median [min..max] of 5 batches, each batch of calls lasting >="
                 f" {xpj.get('min_ms', 50):g} ms, after a warm-up. `xp vs B` = B's median / xp's median (above 1:"
                 f" xp is faster). Goals on medians.")
    lines.append("")
    lines.append("| row | xp | NumPy | numexpr | OpenBLAS direct | xp vs NumPy | xp vs numexpr | xp vs OpenBLAS |"
                 " goal | met? | xp = NumPy? |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in merged:
        unit = "ms" if r["xp"] and r["xp"]["median_s"] >= 1e-3 else "us"
        sp = r["speedup"]
        goal = "; ".join(f">= {g['min_speedup']:g}x {names[g['baseline']]}" for g in r["goals"]) or "-"
        met = "; ".join("-" if g["met"] is None else ("yes" if g["met"] else "**no**") for g in r["goals"]) or "-"
        chk = r["check"] or {}
        match = "-" if chk.get("match") is None else ("match" if chk["match"] else "**MISMATCH**")
        if chk.get("detail"):
            match += f" ({chk['detail'].split(' (')[0] if r['id'] == 'sum' else chk['detail']})"
        lines.append(f"| {r['label']} | {fmt(r['xp'], unit)} | {fmt(r['numpy'], unit)} | {fmt(r['numexpr'], unit)} |"
                     f" {fmt(r['openblas'], unit)} |"
                     + "".join(f" {'-' if sp[k] is None else '%.2fx' % sp[k]} |" for k in ("numpy", "numexpr", "openblas"))
                     + f" {goal} | {met} | {match} |")
    lines.append("")
    lines.append("What each side runs:")
    lines.append("")
    xp_code = {"add_out": "xp::add(a, b, o)", "fma_new": "(a * b + c).eval()", "fma_out": "xp::add(a * b, c, o)",
               "sum": "xp::sum(a).item<float>()", "exp": "xp::exp(x, o)", "log": "xp::log(p, o)",
               "sin": "xp::sin(x, o)", "small_add": "(s + t).eval()"}
    for r in merged:
        lines.append(f"- {r['id']}: xp `{xp_code.get(r['id'], 'xp::matmul(A, B)')}`; NumPy `{r['numpy_code']}`"
                     + (f"; numexpr `{r['numexpr_code']}`" if r.get("numexpr_code") else "")
                     + (f"; OpenBLAS `cblas_{'s' if 'f32' in r['id'] else 'd'}gemm` into a preallocated C"
                        if r["openblas"] else ""))
    lines.append("")
    lines.append("Checks of xp against NumPy (`xp = NumPy?`): add, a * b + c and the small add bit for bit (both"
                 " round the product, then the sum); exp, log, sin: the largest distance from NumPy's result, and"
                 " each one's error from the float64 result rounded to float32, xp's within 4 ulp (glibc's bound"
                 " for its vector float32 functions) or NumPy's own error when larger; sum: |xp - NumPy| within"
                 " 1e-6 of sum|a|; matmul: max |xp - NumPy| / max |C| within 1e-5 (float32), 1e-12 (float64)."
                 " numexpr against NumPy, the same way:")
    for r in merged:
        nc = r.get("numexpr_check")
        if nc:
            lines.append(f"- {r['id']}: {'match' if nc['match'] else 'differs'} ({nc['detail']})")
    lines.append("")
    ref = ", ".join(f"{k} {v * 1e3:.1f} ms" if v >= 1e-3 else f"{k} {v * 1e6:.2f} us"
                    for k, v in ISSUE_NUMPY_1_24.items())
    lines.append(f"For reference, the issue's NumPy 1.24 figures (another machine, 2026-12-02): {ref}.")
    if args.cpu_matmul:
        lines.append("")
        if os.path.exists(args.cpu_matmul):
            lines.append(f"`xp_bench_cpu_matmul --threads {xpj.get('threads')}` (xp's matmul paths against"
                         f" OpenBLAS called directly) in the same run: `{os.path.basename(args.cpu_matmul)}`.")
        else:
            lines.append("`xp_bench_cpu_matmul` was not built, so only this program's own direct OpenBLAS calls"
                         " give the matmul baseline.")
    text = "\n".join(lines) + "\n"
    with open(args.md, "w") as f:
        f.write(text)
    with open(args.out_json, "w") as f:
        json.dump({"machine": facts, "xp": {k: v for k, v in xpj.items() if k != "rows"},
                   "python": {k: v for k, v in pyj.items() if k != "rows"}, "rows": merged}, f, indent=1)
    print(text)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--data", required=True)
    r.add_argument("--threads", type=int, default=0)
    r.add_argument("--json")
    r.add_argument("--min-ms", type=float, default=50)
    r.add_argument("--only")
    m = sub.add_parser("merge")
    m.add_argument("--xp", required=True)
    m.add_argument("--py", required=True)
    m.add_argument("--md", required=True)
    m.add_argument("--json", dest="out_json", required=True)
    m.add_argument("--cpu-matmul")
    args = ap.parse_args()
    return run(args) if args.cmd == "run" else merge(args)


if __name__ == "__main__":
    sys.exit(main())
