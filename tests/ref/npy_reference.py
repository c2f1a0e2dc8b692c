"""NumPy 2's side of xp's .npy tests (tests/test_npy.cpp).

  npy_reference.py generate DIR   writes .npy files with NumPy (and ml_dtypes for bfloat16), the
                                  data of each as raw bytes (C order, little-endian) beside it, and
                                  DIR/manifest.json listing them; files xp must refuse are listed
                                  with the text their error must contain.
  npy_reference.py check DIR      loads the files xp wrote, listed in DIR/manifest.json, with
                                  np.load and checks dtype, shape, order and every byte; also that
                                  each file is byte for byte what NumPy writes for that header and
                                  data. Exits 1 on any mismatch, naming it.
  npy_reference.py bfloat16-descr prints the descr np.save gives an ml_dtypes bfloat16 array.

Exit status 3 when NumPy 2 or ml_dtypes is missing.
"""

import ast
import io
import json
import os
import sys

try:
    import ml_dtypes
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"npy_reference.py needs numpy 2 and ml_dtypes: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"npy_reference.py needs numpy 2, found {np.__version__}", file=sys.stderr)
    sys.exit(3)

BF16 = np.dtype(ml_dtypes.bfloat16)
# xp's dtypes (xp's names) as NumPy dtypes.
DTYPES = {
    "bool": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16),
    "bfloat16": BF16,
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "complex64": np.dtype(np.complex64),
    "complex128": np.dtype(np.complex128),
}
SHAPES = {"scalar": (), "vector": (7,), "cube": (2, 3, 4), "empty": (3, 0, 2)}


def values(name, shape, seed):
    """Deterministic data with the edge values of the type first."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dt = DTYPES[name]
    if name == "bool":
        a = rng.integers(0, 2, size=n).astype(np.bool_)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        a[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
    else:
        f = (rng.standard_normal(n) * 100).astype(np.float32)
        special = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-40, 65504.0], dtype=np.float32)
        f[: min(n, len(special))] = special[: min(n, len(special))]
        a = f.astype(dt)
        if dt.kind == "c":  # the imaginary parts: other values, the specials in another order
            g = (rng.standard_normal(n) * 100).astype(np.float32)
            g[: min(n, len(special))] = special[::-1][: min(n, len(special))]
            a.imag = g  # set by parts: 1j * inf would bring a NaN into the real part
    return a.reshape(shape)


def raw_bytes(a):
    """The elements in C order, little-endian."""
    c = np.ascontiguousarray(a)
    if c.dtype == BF16:
        return c.view(np.uint16).astype("<u2").tobytes()
    if c.dtype.byteorder == ">":
        c = c.astype(c.dtype.newbyteorder("<"))
    return c.tobytes()


def save_bfloat16_for_xp(path, a):
    """bfloat16 the way xp writes it: descr 'bfloat16', little-endian data."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "bfloat16", "fortran_order": False, "shape": a.shape}
        )
        f.write(raw_bytes(a))


def generate(out):
    manifest = []

    def add(fname, a, dtype_name, fortran=False):
        raw = fname[:-4] + ".bin"
        with open(os.path.join(out, raw), "wb") as f:
            f.write(raw_bytes(a))
        manifest.append(
            {"file": fname, "raw": raw, "dtype": dtype_name, "shape": list(a.shape), "fortran_order": fortran}
        )

    def refuse(fname, error):
        manifest.append({"file": fname, "error": error})

    seed = 0
    for name, dt in DTYPES.items():
        for sname, shape in SHAPES.items():
            seed += 1
            a = values(name, shape, seed)
            fname = f"{name}_{sname}.npy"
            if dt == BF16:
                save_bfloat16_for_xp(os.path.join(out, fname), a)
                b = np.load(os.path.join(out, fname))  # NumPy reads xp's bfloat16 descr back
                if b.dtype != BF16 or raw_bytes(b) != raw_bytes(a):
                    sys.exit(f"np.load does not read descr 'bfloat16' back as bfloat16: {b.dtype}")
            else:
                np.save(os.path.join(out, fname), a)
            add(fname, a, name)
        if dt.itemsize > 1 and dt != BF16:  # big-endian
            seed += 1
            a = values(name, (2, 3), seed).astype(dt.newbyteorder(">"))
            fname = f"{name}_big_endian.npy"
            np.save(os.path.join(out, fname), a)
            add(fname, a, name)

    # Fortran order: the file holds the data column major, the raw dump is C order.
    for name, shape, order in [("float32", (2, 3, 4), "<"), ("int16", (5, 3), "<"), ("float64", (3, 4), ">")]:
        seed += 1
        a = np.asfortranarray(values(name, shape, seed).astype(DTYPES[name].newbyteorder(order)))
        fname = f"{name}_fortran_{'big' if order == '>' else 'little'}.npy"
        np.save(os.path.join(out, fname), a)
        add(fname, a, name, fortran=True)

    # Format versions 2.0 and 3.0, written on request.
    for version, name, shape in [((2, 0), "int32", (2, 3)), ((3, 0), "float64", (5,)), ((2, 0), "uint16", ())]:
        seed += 1
        a = values(name, shape, seed)
        fname = f"{name}_v{version[0]}.npy"
        with open(os.path.join(out, fname), "wb") as f:
            np.lib.format.write_array(f, a, version=version)
        add(fname, a, name)

    # What np.save makes of ml_dtypes' bfloat16, and other arrays xp cannot hold.
    np.save(os.path.join(out, "bfloat16_ml_dtypes.npy"), np.array([1.0, 2.5, -3.0], dtype=BF16))
    refuse("bfloat16_ml_dtypes.npy", "'<V2' is a raw 2-byte void type")
    np.save(os.path.join(out, "clongdouble.npy"), np.zeros(2, dtype=np.clongdouble))
    refuse("clongdouble.npy", f"'{np.dtype(np.clongdouble).str}' (clongdouble) is not an xp dtype")
    np.save(os.path.join(out, "object.npy"), np.array([1, "two", None], dtype=object), allow_pickle=True)
    refuse("object.npy", "'|O' is an object array")
    np.save(os.path.join(out, "str.npy"), np.array(["ab", "cde"]))
    refuse("str.npy", "'<U3' (str, 3 characters) is not an xp dtype")
    np.save(os.path.join(out, "datetime.npy"), np.array(["2026-12-02"], dtype="datetime64[ns]"))
    refuse("datetime.npy", "'<M8[ns]' (datetime64[ns]) is not an xp dtype")
    np.save(os.path.join(out, "structured.npy"), np.zeros(2, dtype=[("x", "<f4"), ("y", "<i2")]))
    refuse("structured.npy", "structured array")
    np.save(os.path.join(out, "longdouble.npy"), np.zeros(2, dtype=np.longdouble))
    refuse("longdouble.npy", f"'{np.dtype(np.longdouble).str}' (longdouble) is not an xp dtype")
    np.savez(os.path.join(out, "archive.npz"), a=np.zeros(3))
    refuse("archive.npz", "zip archive")

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"wrote {len(manifest)} cases to {out}")


def check(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    failures = []
    for case in manifest:
        path = os.path.join(folder, case["file"])
        with open(os.path.join(folder, case["raw"]), "rb") as f:
            raw = f.read()  # the elements in the file's order (C, or Fortran when fortran_order)
        want_dtype = DTYPES[case["dtype"]]
        shape = tuple(case["shape"])
        fortran = case["fortran_order"]
        try:
            a = np.load(path, allow_pickle=False)
        except Exception as e:  # noqa: BLE001 (report every failure)
            failures.append(f"{case['file']}: np.load failed: {e}")
            continue
        with open(path, "rb") as f:
            np.lib.format.read_magic(f)
            h_shape, h_fortran, _ = np.lib.format.read_array_header_1_0(f)
        if a.dtype != want_dtype:
            failures.append(f"{case['file']}: dtype {a.dtype}, expected {want_dtype}")
        if a.shape != shape or h_shape != shape:
            failures.append(f"{case['file']}: shape {a.shape}, expected {shape}")
        if h_fortran != fortran:
            failures.append(f"{case['file']}: fortran_order {h_fortran}, expected {fortran}")
        got = a.view(np.uint16) if a.dtype == BF16 else a
        got = got.tobytes(order="F" if fortran else "C")
        if got != raw:
            diff = next((i for i in range(min(len(got), len(raw))) if got[i] != raw[i]), min(len(got), len(raw)))
            failures.append(f"{case['file']}: data differ from byte {diff} ({len(got)} bytes, expected {len(raw)})")
        # Byte for byte what NumPy writes for this header and data.
        buf = io.BytesIO()
        descr = "bfloat16" if want_dtype == BF16 else np.lib.format.dtype_to_descr(want_dtype)
        np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": fortran, "shape": shape})
        buf.write(raw)
        with open(path, "rb") as f:
            whole = f.read()
        if whole != buf.getvalue():
            failures.append(f"{case['file']}: the file differs from NumPy's bytes for it:\n"
                            f"  xp:    {whole[:200]!r}\n  numpy: {buf.getvalue()[:200]!r}")
        if want_dtype != BF16 and not fortran:
            buf = io.BytesIO()
            np.save(buf, a)
            if whole != buf.getvalue():
                failures.append(f"{case['file']}: the file differs from np.save's")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"checked {len(manifest)} files written by xp: {len(failures)} failures")
    return 1 if failures else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "bfloat16-descr":
        buf = io.BytesIO()
        np.save(buf, np.zeros(1, dtype=BF16))
        data = buf.getvalue()
        header = data[10 : 10 + int.from_bytes(data[8:10], "little")].decode("latin1")
        print(ast.literal_eval(header)["descr"])
        return 0
    if len(sys.argv) != 3 or sys.argv[1] not in ("generate", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[1] == "generate":
        generate(sys.argv[2])
        return 0
    return check(sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
