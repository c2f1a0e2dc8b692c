#!/usr/bin/env python3
"""NumPy 2's answers for the cases of tests/test_array_numpy.cpp (the array layer against NumPy).

Usage:
  array_reference.py DIR   reads DIR/request.json, writes DIR/response.json (and .npy files in DIR)

The request is {"cases": [...]}; each case has an "id", a "kind" and what that kind needs (see the
handlers below). Arrays travel as {"dtype", "shape", "hex"}: the little-endian bytes of the elements
in C order, in hexadecimal, then "views", a list of view steps applied in order (slice, permute,
reshape, expand_dims, squeeze, flip, broadcast_to, T, mT, index). Scalars travel as
{"scalar": "int" | "bool" | "float", "value"}: integers as decimal strings, floats as the decimal
string of their 64-bit pattern, so both sides hold the same number.

The response is {"answers": {id: answer}}: an answer is {"error": class name} when NumPy raises, or
arrays in the same form as the request's (without views). Results that cannot be bit-exact carry a
reference to check against with a tolerance:
  "ref"     the correctly rounded result (transcendental functions: computed one precision up,
            float64 in long double), to be met within the test's ulp bound
  "approx"  {"ref", "tol"}: float64 values and absolute tolerances (reductions, matmul), computed in
            long double from the exact inputs

Exit status 3 when NumPy 2 or ml_dtypes is missing: the test then skips (or fails under
XP_TEST_REQUIRE_NUMPY=1). Any other failure is a real error.
"""

import json
import math
import os
import struct
import sys
import warnings
from fractions import Fraction

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # the test turns this into a skip with the reason
    print(f"array_reference.py: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"array_reference.py: NumPy {np.__version__} found, NumPy 2 needed", file=sys.stderr)
    sys.exit(3)
# ml_dtypes 0.7 promotes bfloat16 with the other dtypes and with weak Python floats; before it,
# bfloat16 and int16 do not promote and bfloat16 + 2.5 gives float32, so the answers differ.
if tuple(int(x) for x in ml_dtypes.__version__.split(".")[:2]) < (0, 7):
    print(f"array_reference.py: ml_dtypes {ml_dtypes.__version__} found, 0.7 or later needed", file=sys.stderr)
    sys.exit(3)

BF16 = np.dtype(ml_dtypes.bfloat16)
LD = np.longdouble
if np.finfo(LD).nmant < 63:
    print("array_reference.py: long double is not x87 extended precision here", file=sys.stderr)
    sys.exit(3)


def dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def dtype_name(dt):
    return "bfloat16" if dt == BF16 else dt.name


def is_float(dt):
    return dt == BF16 or dt.kind == "f"


# ---- arrays and scalars in and out ----


def base_array(d):
    dt = dtype(d["dtype"])
    raw = bytes.fromhex(d["hex"])
    a = np.frombuffer(raw, dtype=dt.newbyteorder("<") if dt != BF16 else dt).astype(dt)
    return a.reshape(d["shape"]).copy()


def index_of(i):
    if isinstance(i, list):
        return slice(i[0], i[1], i[2])
    if i == "newaxis":
        return None
    if i == "...":
        return Ellipsis
    return int(i)


def apply_views(a, views):
    for v in views:
        ((k, arg),) = v.items()
        if k == "slice":
            a = a[tuple(index_of(i) for i in arg)]
        elif k == "index":
            a = a[int(arg)]
        elif k == "permute":
            a = np.permute_dims(a, tuple(arg))
        elif k == "T":
            a = a.T
        elif k == "mT":
            a = np.matrix_transpose(a)
        elif k == "reshape":
            a = np.reshape(a, tuple(arg))
        elif k == "expand_dims":
            a = np.expand_dims(a, arg)
        elif k == "squeeze":
            a = np.squeeze(a, axis=None if arg is None else tuple(arg))
        elif k == "flip":
            if a.ndim > 0:  # np.flip of a 0-d array gives a scalar, not a view
                a = np.flip(a, axis=None if arg is None else tuple(arg))
        elif k == "broadcast_to":
            a = np.broadcast_to(a, tuple(arg))
        else:
            raise SystemExit(f"unknown view step {k}")
    return a


def scalar(d):
    k = d["scalar"]
    if k == "bool":
        return bool(d["value"])
    if k == "int":
        return int(d["value"])
    return struct.unpack("<d", struct.pack("<Q", int(d["value"])))[0]


def operand(d, out_base=None):
    """An array (base + views), a scalar, or a view of the out= array's base (aliasing)."""
    if "scalar" in d:
        return scalar(d)
    if d.get("alias_out"):
        return apply_views(out_base, d.get("views", []))
    return apply_views(base_array(d), d.get("views", []))


def enc(a):
    a = np.asarray(a)
    return {"dtype": dtype_name(a.dtype), "shape": list(a.shape), "hex": np.ascontiguousarray(a).tobytes().hex()}


def hex64(a):
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes().hex()


def error_class(e):
    for cls in (IndexError, OverflowError, TypeError, ValueError):  # UFuncTypeError is a TypeError
        if isinstance(e, cls):
            return cls.__name__
    return type(e).__name__


# ---- elementwise ----

UFUNCS = {
    "negative": np.negative, "positive": np.positive, "abs": np.absolute, "sign": np.sign,
    "square": np.square, "sqrt": np.sqrt, "exp": np.exp, "expm1": np.expm1, "log": np.log,
    "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "isnan": np.isnan,
    "isinf": np.isinf, "isfinite": np.isfinite, "logical_not": np.logical_not,
    "bitwise_invert": np.bitwise_invert, "add": np.add, "subtract": np.subtract,
    "multiply": np.multiply, "divide": np.divide, "floor_divide": np.floor_divide,
    "remainder": np.remainder, "pow": np.power, "atan2": np.arctan2, "minimum": np.minimum,
    "maximum": np.maximum, "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
    "acosh": np.arccosh, "asinh": np.arcsinh, "atanh": np.arctanh, "hypot": np.hypot,
    "copysign": np.copysign, "nextafter": None, "signbit": np.signbit, "logaddexp": np.logaddexp,
}


def c_nextafter(a, b, out=None, casting="same_kind"):
    """C's nextafter: y where x == y (+0 and -0 too). NumPy's float16 loop gave x there before NumPy
    2.5; xp, C, ml_dtypes and NumPy 2.5 give y."""
    r = np.asarray(np.nextafter(a, b))
    r = np.where(np.asarray(a) == np.asarray(b), np.asarray(b).astype(r.dtype), r).astype(r.dtype)
    if out is None:
        return r[()] if r.ndim == 0 else r
    np.copyto(out, r, casting=casting)
    return out


UFUNCS["nextafter"] = c_nextafter
TRANSCENDENTAL = {"exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
                  "atan", "sinh", "cosh", "tanh", "atan2", "pow", "acosh", "asinh", "atanh", "hypot", "logaddexp"}


def has_bf16(args):
    # (a 0-d view comes here as a NumPy scalar: bfloat16 too)
    return any(isinstance(a, (np.ndarray, np.generic)) and a.dtype == BF16 for a in args)


def call_fn(fn, args, out):
    kw = {} if out is None else {"out": out}
    if has_bf16(args) and fn in ("clip", "where", "sign"):
        # ml_dtypes has no clip loop and np.where does not promote its bfloat16 with weak scalars:
        # NumPy answers in float32. Both select values, so the answer is NumPy's, cast to the
        # promoted dtype. ml_dtypes' sign keeps -0 where NumPy's float types give +0: computed as
        # NumPy's float32 sign and rounded back.
        rt = np.result_type(*args)
        wide = [a.astype(np.float32) if isinstance(a, (np.ndarray, np.generic)) and a.dtype == BF16 else a for a in args]
        r = np.asarray(call_fn(fn, wide, None)).astype(rt)
        if out is None:
            return r
        np.copyto(out, r, casting="same_kind")
        return out
    if fn in UFUNCS:
        return UFUNCS[fn](*args, **kw)
    if fn == "reciprocal":
        # xp's reciprocal is 1 / x in the float dtype sqrt would give (NumPy's integer reciprocal is an
        # integer division).
        x = args[0]
        dt = np.asarray(x).dtype
        if not is_float(dt):
            x = np.asarray(x).astype(np.sqrt(np.zeros((), dt)).dtype)
        return np.divide(1, x, **kw)
    if fn == "round":
        return np.round(args[0], **kw)
    if fn == "clip":
        return np.clip(args[0], args[1], args[2], **kw)
    if fn == "where":
        r = np.where(args[0], args[1], args[2])
        if out is None:
            return r
        np.copyto(out, r, casting="same_kind")
        return out
    if fn == "fma":
        r = fma(*args)
        if out is None:
            return r
        np.copyto(out, r, casting="same_kind")
        return out
    raise SystemExit(f"unknown function {fn}")


def round_fraction(f, dt):
    """The exact rational f rounded to nearest (ties to even) in float dtype dt."""
    try:
        d = float(f)  # correctly rounded
    except OverflowError:
        d = math.inf if f > 0 else -math.inf
    if dt == np.float64:
        return np.float64(d)
    maxexp = int(ml_dtypes.finfo(dt).maxexp) if dt == BF16 else int(np.finfo(dt).maxexp)
    big = Fraction(2) ** maxexp  # the next power of two past the largest finite value
    if abs(f) >= big:
        return np.asarray(math.inf if f > 0 else -math.inf).astype(dt)

    def val(c):
        c = float(c)
        return Fraction(c) if math.isfinite(c) else math.copysign(1, c) * big

    c = np.asarray(d).astype(dt)
    cands = [c, np.nextafter(c, np.asarray(np.inf, dt)), np.nextafter(c, np.asarray(-np.inf, dt))]
    best = None
    for x in cands:
        if math.isnan(float(x)):
            continue
        key = (abs(val(x) - f), int(np.asarray(x).view(np.uint16 if dt.itemsize == 2 else np.uint32)) & 1)
        if best is None or key < best[0]:
            best = (key, x)
    return best[1]


def fma(x, y, z):
    rt = np.result_type(x, y, z)
    if not is_float(rt):
        raise TypeError("fma is for floating types")
    xs, ys, zs = (np.asarray(v, dtype=rt) if not isinstance(v, np.ndarray) else v.astype(rt) for v in (x, y, z))
    xs, ys, zs = np.broadcast_arrays(xs, ys, zs)
    out = np.empty(xs.shape, rt)
    for idx in np.ndindex(xs.shape):
        a, b, c = float(xs[idx]), float(ys[idx]), float(zs[idx])
        if math.isfinite(a) and math.isfinite(b) and not math.isfinite(c):
            out[idx] = c  # a finite product (even one past the largest float) does not change c
            continue
        if not (math.isfinite(a) and math.isfinite(b)):
            out[idx] = a * b + c  # the class of the answer: NaN or an infinity
            continue
        f = Fraction(a) * Fraction(b) + Fraction(c)
        if f == 0:
            p_neg = (math.copysign(1, a) * math.copysign(1, b)) < 0
            neg = (a * b == 0) and p_neg and math.copysign(1, c) < 0
            out[idx] = -0.0 if neg else 0.0
        else:
            out[idx] = round_fraction(f, rt)
    return out


def higher_precision_ref(fn, args, result):
    """The correctly rounded float32 / float64 result, or None for other result dtypes."""
    rt = result.dtype
    if rt == np.float32:
        up = np.float64
    elif rt == np.float64:
        up = LD
    else:
        return None
    conv = [np.asarray(a).astype(rt).astype(up) for a in args]
    r = UFUNCS[fn](*conv)
    return np.asarray(r).astype(rt)


def spacing(a, dt):
    """The distance from |a| to the next value of dt up, as float64."""
    m = np.abs(np.asarray(a).astype(dt))
    return np.nextafter(m, np.asarray(np.inf, dt)).astype(np.float64) - m.astype(np.float64)


def logaddexp_approx(args, dt):
    """logaddexp's reference (long double) and tolerance: 2 ulp of the result plus 8 ulp of ln 2, the
    bound docs/semantics.md states (the error of the exp and log1p terms, at most ln 2, is absolute)."""
    conv = [np.asarray(a).astype(dt).astype(LD) for a in args]  # the operands as the function sees them
    ref = np.asarray(np.logaddexp(*conv)).astype(np.float64)
    tol = 2 * spacing(ref, dt) + 8 * spacing(np.log(2.0), dt)
    return ref, tol


def run_ew(c):
    fn = c["fn"]
    out_base = base_array(c["out"]) if "out" in c else None
    out = apply_views(out_base, c["out"].get("views", [])) if "out" in c else None
    args = [operand(a, out_base) for a in c["args"]]
    rounded = fn in TRANSCENDENTAL or fn == "fma"
    ref = None
    if rounded:  # before out= is written: an input may be a view of it
        plain = np.asarray(call_fn(fn, args, None))
        if is_float(plain.dtype):
            ref = higher_precision_ref(fn, args, plain) if fn != "fma" else None
            if out is not None:
                want = plain if ref is None else ref
                if fn == "fma":
                    tol = spacing(want, plain.dtype) * (1 if plain.dtype.itemsize == 2 else 0)
                else:
                    k = 2 if plain.dtype.itemsize == 2 else 8
                    tol = np.maximum(k * spacing(want, plain.dtype), spacing(want, out.dtype))
                    if fn == "logaddexp":
                        tol = tol + 8 * spacing(np.log(2.0), plain.dtype)
    r = call_fn(fn, args, out)
    ans = {"result": enc(r)}
    if out_base is not None:
        ans["base"] = enc(out_base)
        if rounded and is_float(plain.dtype):
            ref_base = out_base.astype(np.float64)
            tol_base = np.zeros(out_base.shape)
            apply_views(ref_base, c["out"].get("views", []))[...] = np.asarray(want).astype(out.dtype).astype(np.float64)
            apply_views(tol_base, c["out"].get("views", []))[...] = np.nan_to_num(tol, nan=0.0)
            ans["base_approx"] = {"ref": hex64(ref_base), "tol": hex64(tol_base)}
    if fn == "logaddexp" and is_float(np.asarray(r).dtype):
        approx_ref, approx_tol = logaddexp_approx(args, np.asarray(r).dtype)
        ans["approx"] = {"ref": hex64(approx_ref), "tol": hex64(np.broadcast_to(approx_tol, approx_ref.shape))}
        ref = None
    if ref is not None:
        ans["ref"] = enc(ref)
    return ans


def run_iop(c):
    """a <op>= b on a view of a base: the base afterwards."""
    base = base_array(c["target"])
    target = apply_views(base, c["target"].get("views", []))
    other = operand(c["other"], base)
    UFUNCS[c["fn"]](target, other, out=target, casting="same_kind")
    return {"base": enc(base)}


# ---- graphs: node i applies fn to earlier nodes, inputs or scalars ----


def run_graph(c):
    bases = [base_array(i) for i in c["inputs"]]
    inputs = [apply_views(b, i.get("views", [])) for b, i in zip(bases, c["inputs"])]
    nodes = []

    def arg(a):
        if "node" in a:
            return nodes[a["node"]]
        if "input" in a:
            return inputs[a["input"]]
        return scalar(a)

    for n in c["nodes"]:
        nodes.append(np.asarray(call_fn(n["fn"], [arg(a) for a in n["args"]], None)).copy())
    # Writes to the inputs after the graph was built must not change its answers.
    for m in c.get("mutations", []):
        t = apply_views(bases[m["input"]], m["views"])
        t[...] = scalar(m["value"])
    return {"outputs": [enc(nodes[i]) for i in c["outputs"]], "inputs": [enc(b) for b in bases]}


# ---- views, broadcasting, creation ----


def run_view(c):
    return {"result": enc(operand(c["x"]))}


def run_broadcast(c):
    ans = {"shape": list(np.broadcast_shapes(tuple(c["a"]["shape"]), tuple(c["b"]["shape"])))}
    ans["result"] = enc(np.add(operand(c["a"]), operand(c["b"])))
    return ans


def dtype_arg(c, key="dtype"):
    return None if c.get(key) is None else dtype(c[key])


def run_create(c):
    fn = c["fn"]
    dt = dtype_arg(c)
    if fn in ("zeros", "ones", "empty"):
        r = getattr(np, fn)(tuple(c["shape"]), dtype=dt)
        if fn == "empty":
            return {"dtype": dtype_name(r.dtype), "shape": list(r.shape)}
    elif fn == "full":
        r = np.full(tuple(c["shape"]), scalar(c["value"]), dtype=dt)
    elif fn in ("zeros_like", "ones_like", "empty_like"):
        r = getattr(np, fn)(operand(c["x"]), dtype=dt)
        if fn == "empty_like":
            return {"dtype": dtype_name(r.dtype), "shape": list(r.shape)}
    elif fn == "full_like":
        r = np.full_like(operand(c["x"]), scalar(c["value"]), dtype=dt)
    elif fn == "arange":
        if "start" in c:
            r = np.arange(scalar(c["start"]), scalar(c["stop"]), scalar(c["step"]), dtype=dt)
        else:
            r = np.arange(scalar(c["stop"]))
    elif fn == "linspace":
        r = np.linspace(c["start"], c["stop"], c["num"], endpoint=c["endpoint"], dtype=dt)
    elif fn == "eye":
        r = np.eye(c["n"], c.get("m"), k=c["k"], dtype=dt)
    elif fn == "asarray":
        r = operand(c["x"])
    elif fn == "concat":
        r = np.concat([operand(a) for a in c["arrays"]], axis=c["axis"])
    elif fn == "stack":
        r = np.stack([operand(a) for a in c["arrays"]], axis=c["axis"])
    elif fn == "take":
        r = np.take(operand(c["x"]), operand(c["indices"]), axis=c.get("axis"))
    elif fn == "astype":
        r = operand(c["x"]).astype(dt)
    elif fn == "copy":
        r = operand(c["x"]).copy()
    elif fn == "result_type":
        return {"dtype": dtype_name(np.result_type(operand(c["a"]), operand(c["b"])))}
    else:
        raise SystemExit(f"unknown creation {fn}")
    return {"result": enc(r)}


# ---- reductions ----


def eps(dt):
    return float(ml_dtypes.finfo(dt).eps) if dt == BF16 else float(np.finfo(dt).eps)


def run_reduce(c):
    fn = c["fn"]
    x = operand(c["x"])
    axes = c.get("axes")
    axis = tuple(axes) if isinstance(axes, list) else axes
    keep = c.get("keepdims", False)
    dt = dtype_arg(c)
    if fn in ("sum", "prod"):
        r = getattr(np, fn)(x, axis=axis, keepdims=keep, dtype=dt)
    elif fn == "mean":
        r = np.mean(x, axis=axis, keepdims=keep)
    elif fn in ("var", "std"):
        r = getattr(np, fn)(x, axis=axis, keepdims=keep, correction=c["correction"])
    elif fn in ("min", "max", "any", "all"):
        r = getattr(np, fn)(x, axis=axis, keepdims=keep)
    elif fn in ("argmin", "argmax"):
        r = getattr(np, fn)(x, axis=axis, keepdims=keep)
    elif fn == "cumulative_sum":
        r = np.cumulative_sum(x, axis=axis, dtype=dt, include_initial=c.get("include_initial", False))
    elif fn == "cumulative_prod":
        r = np.cumulative_prod(x, axis=axis, dtype=dt, include_initial=c.get("include_initial", False))
    else:
        raise SystemExit(f"unknown reduction {fn}")
    r = np.asarray(r)
    ans = {"result": enc(r)}
    if not is_float(r.dtype) or fn in ("min", "max"):
        return ans
    # Float results: a long double reference from the exact inputs, and a bound for any order of
    # summation: n eps of the sum of magnitudes (plus the final rounding).
    rt = r.dtype
    xl = np.asarray(x).astype(rt).astype(LD) if fn in ("sum", "prod", "cumulative_sum", "cumulative_prod") else np.asarray(x).astype(LD)
    e = eps(rt) if rt.itemsize > 2 else eps(np.dtype(np.float32))
    size = np.asarray(x).size
    n = size if axis is None else (math.prod(np.asarray(x).shape[a] for a in (axis if isinstance(axis, tuple) else (axis,))) if size else 0)
    n = max(int(n), 1)
    last = eps(rt) * 1.0
    with np.errstate(all="ignore"):
        if fn == "sum":
            ref = np.sum(xl, axis=axis, keepdims=keep)
            tol = (n + 1) * e * np.sum(np.abs(xl), axis=axis, keepdims=keep) + last * np.abs(ref)
        elif fn == "cumulative_sum":
            ref = np.cumulative_sum(xl, axis=axis, include_initial=c.get("include_initial", False))
            tol = (n + 1) * e * np.cumulative_sum(np.abs(xl), axis=axis, include_initial=c.get("include_initial", False)) + last * np.abs(ref)
        elif fn == "cumulative_prod":
            ref = np.cumulative_prod(xl, axis=axis, include_initial=c.get("include_initial", False))
            tol = (2 * n + 2) * e * np.abs(ref) + last * np.abs(ref)
        elif fn == "prod":
            ref = np.prod(xl, axis=axis, keepdims=keep)
            tol = (2 * n + 2) * e * np.abs(ref) + last * np.abs(ref)
        elif fn == "mean":
            ref = np.mean(xl, axis=axis, keepdims=keep)
            tol = (n + 3) * e * np.mean(np.abs(xl), axis=axis, keepdims=keep) + last * np.abs(ref)
        else:
            v = np.var(xl, axis=axis, keepdims=keep, correction=c["correction"])
            scale = np.mean(xl * xl, axis=axis, keepdims=keep) * n / max(n - c["correction"], 1)
            tv = 4 * (n + 4) * e * scale + last * np.abs(v)
            if fn == "var":
                ref, tol = v, tv
            else:
                ref = np.sqrt(v)
                tol = np.sqrt(tv) + 4 * last * ref
    ans["approx"] = {"ref": hex64(ref), "tol": hex64(tol)}
    return ans


# ---- linear algebra ----


def run_linalg(c):
    a, b = operand(c["a"]), operand(c["b"])
    if c["fn"] == "matmul":
        r = np.matmul(a, b)
        f = np.matmul
    else:
        r = np.vecdot(a, b, axis=c["axis"])
        f = lambda p, q: np.vecdot(p, q, axis=c["axis"])  # noqa: E731
    r = np.asarray(r)
    if BF16 in (a.dtype, b.dtype):
        r = r.astype(np.result_type(a, b))  # ml_dtypes has no matmul / vecdot loop: NumPy's float32
    ans = {"result": enc(r)}
    if is_float(r.dtype):
        al, bl = a.astype(r.dtype).astype(LD), b.astype(r.dtype).astype(LD)
        ref = f(al, bl)
        k = a.shape[-1] if c["fn"] == "matmul" else np.broadcast_shapes(a.shape, b.shape)[c["axis"]]
        e = eps(r.dtype) if r.dtype.itemsize > 2 else eps(np.dtype(np.float32))
        tol = (k + 2) * e * f(np.abs(al), np.abs(bl)) + eps(r.dtype) * np.abs(ref)
        ans["approx"] = {"ref": hex64(ref), "tol": hex64(tol)}
    return ans


# ---- printing and files ----


def run_repr(c):
    x = operand(c["x"])
    return {"repr": repr(x), "str": str(x)}


def run_npy_from_xp(c, folder):
    a = np.load(os.path.join(folder, c["file"]))
    return {"result": enc(a), "fortran": bool(a.flags.f_contiguous and not a.flags.c_contiguous)}


def run_npy_to_xp(c, folder):
    a = operand(c["x"])
    if c.get("fortran"):
        a = np.asfortranarray(a)
    if c.get("big_endian"):
        a = a.astype(a.dtype.newbyteorder(">"))
    np.save(os.path.join(folder, c["file"]), a)
    return {"fortran": bool(a.flags.f_contiguous and not a.flags.c_contiguous)}


HANDLERS = {
    "ew": run_ew,
    "iop": run_iop,
    "graph": run_graph,
    "view": run_view,
    "broadcast": run_broadcast,
    "create": run_create,
    "reduce": run_reduce,
    "linalg": run_linalg,
    "repr": run_repr,
}


def main(folder):
    with open(os.path.join(folder, "request.json")) as f:
        request = json.load(f)
    answers = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for c in request["cases"]:
            try:
                kind = c["kind"]
                if kind == "npy_from_xp":
                    a = run_npy_from_xp(c, folder)
                elif kind == "npy_to_xp":
                    a = run_npy_to_xp(c, folder)
                else:
                    a = HANDLERS[kind](c)
            except SystemExit:
                raise
            except Exception as e:  # noqa: BLE001: NumPy's refusal is an answer to compare
                a = {"error": error_class(e), "message": str(e)[:200]}
            answers[str(c["id"])] = a
    out = {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__, "answers": answers}
    with open(os.path.join(folder, "response.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
