"""The rows of bench/gpu_reductions.cpp in CuPy, or with --torch in PyTorch: each (op, dtype) over
1 GiB (bfloat16 in PyTorch only: CuPy has no such dtype), against a device-to-device copy of the
same 1 GiB in the same run. 3 warm-ups, then 5 batches of 10 calls between CUDA events; the median
batch and its min..max. Each result is compared with NumPy's on the host copy (exactly for
integer sums, max, argmax and any; within a relative 1e-4 for float sums, means and variances, 1e-2 for
16-bit float results). var is the population variance (ddof / correction 0) everywhere.

--sweep CASES runs the sweep instead: the cases of CASES (the list that `xp_bench_gpu_reductions
--sweep-cases` prints; its comment says what is in it), one line each, "case <id> <median ms> <min>
<max> ok|BAD <what>|unsupported <what>", measured as above and checked against NumPy as above, with
16-bit floats widened to float32 on the host first (NumPy's own float16 var overflows on long
inputs). A case that the library lacks (CuPy has no bfloat16; torch.mean, var and std take no
integers) is printed as unsupported, with the library's reason. --numpy runs the sweep on NumPy
itself on the host (host clock), without a GPU: a test of this program, not a baseline.
bench/python/sweep_ratio.py joins the outputs. The module imports CuPy or PyTorch only when run."""
import sys
import time
from collections import namedtuple

import numpy as np

QUICK = "--quick" in sys.argv
BYTES = (1 << 30) // (64 if QUICK else 1)
LIB = "cupy"  # or "torch", or "numpy" (the sweep on the host, for tests); load() sets it
TORCH = False
cp = torch = None


def load(lib):
    """Imports the library that runs the rows ("cupy", "torch" or "numpy": NumPy needs nothing)."""
    global LIB, TORCH, cp, torch
    LIB, TORCH = lib, lib == "torch"
    if lib == "torch":
        import torch as module
        torch = module
    elif lib == "cupy":
        import cupy as module
        cp = module


ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1, "int32": 4,
            "int64": 8, "bool": 1}


def measure(f):
    for _ in range(3):
        f()
    times = []
    for _ in range(5):
        if LIB == "numpy":  # the host clock: every NumPy call is done when it returns
            t0 = time.perf_counter()
            for _ in range(10):
                f()
            times.append((time.perf_counter() - t0) * 1e3 / 10)
            continue
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
    if LIB == "numpy":
        if dtype == "bool":
            return np.zeros(shape, dtype=np.bool_)
        if dtype.startswith("float"):
            return rng.uniform(-1, 1, size=shape).astype(dtype)
        return rng.integers(0 if dtype == "uint8" else -100, 100, size=shape, dtype=dtype)
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
    if LIB == "numpy":
        return getattr(np, op)(x, axis=axis)
    if not TORCH:
        return getattr(cp, op)(x, axis=axis)
    dims = {} if axis is None else {"dim": axis}
    if op in ("var", "std"):
        return getattr(torch, op)(x, correction=0, **dims)
    if op in ("max", "min"):
        return getattr(torch, "a" + op)(x, **dims)
    return getattr(torch, op)(x, **dims)


def to_host(x):
    if LIB == "numpy":
        return x
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


# ---- the sweep ----------------------------------------------------------------------------------
Case = namedtuple("Case", "id op dtype shape axis")
OPS = ("sum", "mean", "max", "min", "argmax", "argmin", "var", "std", "prod", "any", "all")


def read_cases(lines, where="cases"):
    """The cases of a list (`xp_bench_gpu_reductions --sweep-cases`): "<id> <op> <dtype> <shape>
    <axis>" a line, '#' comments; a ValueError names the line that is wrong."""
    cases, seen = [], {}
    for number, line in enumerate(lines, 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        at = f"{where}:{number}: "
        if len(words) != 5:
            raise ValueError(f"{at}expected 5 words (id op dtype shape axis), got {line.strip()!r}")
        case_id, op, dtype, shape_text, axis_text = words
        if op not in OPS:
            raise ValueError(f"{at}unknown op {op!r}")
        if dtype not in ITEMSIZE:
            raise ValueError(f"{at}unknown dtype {dtype!r}")
        parts = shape_text.split("x")
        if not all(p.isdigit() for p in parts):
            raise ValueError(f"{at}bad shape {shape_text!r} (expected N or RxC)")
        shape = tuple(int(p) for p in parts)
        if axis_text == "all":
            axis = None
        elif axis_text.isdigit() and int(axis_text) < len(shape):
            axis = int(axis_text)
        else:
            raise ValueError(f"{at}bad axis {axis_text!r} for shape {shape_text}")
        if case_id in seen:
            raise ValueError(f"{at}id {case_id!r} repeats line {seen[case_id]}")
        seen[case_id] = number
        cases.append(Case(case_id, op, dtype, shape, axis))
    return cases


def is_float(dtype):
    return dtype.startswith("float") or dtype == "bfloat16"


class Reference:
    """NumPy's answers for one input (its host copy), with what several ops share made once: 16-bit
    floats widened to float32 (exactly; NumPy's own float16 var overflows on long inputs), a
    C-contiguous transpose for argmax and argmin over axis 0 of a matrix (NumPy's argmax over a
    strided axis is slow), and for var and std of integers the exact sums of the values and of their squares
    in int64 (Python integers for the whole array), taken a block at a time, instead of NumPy's
    float64 copies of the input."""

    BLOCK = 1 << 22  # elements per block of the integer moments

    def __init__(self, dtype, host):
        self.dtype = dtype
        self.host = host.astype(np.float32) if ITEMSIZE[dtype] == 2 and is_float(dtype) else host
        self.transposed = None
        self.variances = {}

    def __call__(self, op, axis):
        x, along = self.host, axis
        if op in ("argmax", "argmin") and axis == 0 and x.ndim == 2:
            if self.transposed is None:
                self.transposed = np.ascontiguousarray(x.T)
            x, along = self.transposed, 1
        if op in ("var", "std") and not is_float(self.dtype):
            if axis not in self.variances:
                self.variances[axis] = self.integer_variance(x, axis)
            v = self.variances[axis]
            return np.sqrt(v) if op == "std" else v
        return np.asarray(getattr(np, op)(x, axis=along))

    def integer_variance(self, x, axis):
        """The population variance of integers over the whole array (axis None), each column (axis
        0) or each row (axis 1): from exact sums S and Q of the values and of their squares,
        (Q - S^2 / n) / n."""
        # A square of an 8-bit integer fits 16 bits (int8: at most 2^14; uint8: below 2^16).
        square = {np.dtype(np.int8): np.int16, np.dtype(np.uint8): np.uint16}.get(x.dtype, np.int64)
        if axis is None:
            flat = x.reshape(-1)
            s = q = 0
            for i in range(0, flat.size, self.BLOCK):
                block = flat[i:i + self.BLOCK]
                s += int(block.sum(dtype=np.int64))
                q += int(np.multiply(block, block, dtype=square).sum(dtype=np.int64))
            n = flat.size
            return np.asarray((q * n - s * s) / (n * n))  # exact integers, rounded once
        rows = max(1, self.BLOCK // x.shape[1])
        s = np.zeros(x.shape[1 - axis], dtype=np.int64)
        q = np.zeros(x.shape[1 - axis], dtype=np.int64)
        for i in range(0, x.shape[0], rows):
            block = x[i:i + rows]
            if axis == 1:
                s[i:i + rows] = block.sum(axis=1, dtype=np.int64)
                q[i:i + rows] = np.multiply(block, block, dtype=square).sum(axis=1, dtype=np.int64)
            else:
                s += block.sum(axis=0, dtype=np.int64)
                q += np.multiply(block, block, dtype=square).sum(axis=0, dtype=np.int64)
        n = x.shape[axis]
        return (q - s.astype(np.float64) ** 2 / n) / n


def reference(op, dtype, host, axis):
    """NumPy's answer on the host copy (Reference, for one op)."""
    return Reference(dtype, host)(op, axis)


def check(op, dtype, got, want):
    """"" when the result agrees with NumPy's: exactly for min, max, argmin, argmax, any, all and
    integer sums and products; within a relative 1e-4 (1e-2 for 16-bit floats) otherwise."""
    got = np.asarray(got).astype(np.float64)
    want = np.asarray(want).astype(np.float64)
    if got.shape != want.shape:
        return f"shape {got.shape}, NumPy {want.shape}"
    exact = op in ("max", "min", "argmax", "argmin", "any", "all") or (op in ("sum", "prod") and not is_float(dtype))
    tol = 1e-2 if ITEMSIZE[dtype] == 2 else 1e-4
    close = (got == want) | (np.isnan(got) & np.isnan(want)) if exact else np.isclose(got, want, rtol=tol, atol=tol)
    if close.all():
        return ""
    i = int(np.flatnonzero(~np.atleast_1d(close))[0])
    return f"index {i}: {np.atleast_1d(got).flat[i]:.9g}, NumPy {np.atleast_1d(want).flat[i]:.9g}"


def lacks(case):
    """Why this library cannot run the case before trying it, or ""."""
    if case.dtype == "bfloat16" and LIB != "torch":
        return f"{'CuPy' if LIB == 'cupy' else 'NumPy'} has no bfloat16"
    return ""


def run_sweep(cases, out=sys.stdout):
    """Runs the cases in order, a line each; returns the number of failed checks. An input is made
    once for each (dtype, shape) in a row of cases, with its host copy and Reference (bool: all
    false for any, all true for all)."""
    t0 = time.perf_counter()
    if LIB == "torch":
        name = f"PyTorch {torch.__version__}"
    elif LIB == "cupy":
        name = f"CuPy {cp.__version__}"
    else:
        name = f"NumPy {np.__version__} (host)"
    print(f"# {name}: {len(cases)} cases; case <id> <median ms> <min ms> <max ms> <check>", file=out, flush=True)
    if LIB == "torch":
        rng = torch.Generator(device="cuda").manual_seed(7)
    elif LIB == "cupy":
        rng = cp.random.default_rng(7)
    else:
        rng = np.random.default_rng(7)
    key, x, ref, failures = None, None, None, 0
    for c in cases:
        why = lacks(c)
        if why:
            print(f"case {c.id} - - - unsupported {why}", file=out, flush=True)
            continue
        case_key = (c.dtype, c.shape, c.op == "all")
        if case_key != key:
            x = ref = None  # the last input's memory goes first
            if c.dtype == "bool" and c.op == "all":
                x = torch.ones(c.shape, dtype=torch.bool, device="cuda") if LIB == "torch" else (
                    cp.ones(c.shape, dtype=cp.bool_) if LIB == "cupy" else np.ones(c.shape, dtype=np.bool_))
            else:
                x = make(rng, c.dtype, c.shape)
            ref, key = Reference(c.dtype, to_host(x)), case_key
        try:
            apply(c.op, x, c.axis)
        except (RuntimeError, TypeError, NotImplementedError) as e:  # torch.var takes floats only, ...
            reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
            print(f"case {c.id} - - - unsupported {reason}", file=out, flush=True)
            continue
        m, lo, hi = measure(lambda: apply(c.op, x, c.axis))
        diff = check(c.op, c.dtype, to_host(apply(c.op, x, c.axis)), ref(c.op, c.axis))
        failures += 1 if diff else 0
        print(f"case {c.id} {m:.6f} {lo:.6f} {hi:.6f} {'BAD ' + diff if diff else 'ok'}", file=out, flush=True)
    print(f"# {len(cases)} cases in {time.perf_counter() - t0:.0f} s, {failures} failed checks", file=out, flush=True)
    return failures


def sweep_main(argv):
    i = argv.index("--sweep")
    if i + 1 >= len(argv) or argv[i + 1].startswith("--"):
        print("--sweep CASES: the list that `xp_bench_gpu_reductions --sweep-cases` prints", file=sys.stderr)
        return 2
    path = argv[i + 1]
    try:
        with open(path) as f:
            cases = read_cases(f, path)
    except (OSError, ValueError) as e:
        print(f"gpu_reductions.py: {e}", file=sys.stderr)
        return 2
    load("torch" if "--torch" in argv else "numpy" if "--numpy" in argv else "cupy")
    return 1 if run_sweep(cases) else 0


if __name__ == "__main__":
    if "--sweep" in sys.argv:
        sys.exit(sweep_main(sys.argv))
    load("torch" if "--torch" in sys.argv else "cupy")
    sys.exit(main())
