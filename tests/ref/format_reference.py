#!/usr/bin/env python3
"""Reference answers for xp's array printing, from NumPy 2 and ml_dtypes (tests/test_format.cpp runs this).

Usage:
  format_reference.py CASES.json    CASES.json is a JSON list of arrays, each
                                      {"dtype": "float32", "shape": [2, 3], "hex": "<C-order bytes, little-endian>"}
                                    prints a JSON list, one {"repr": repr(a), "str": str(a)} per array,
                                    with NumPy's default print options.

Exit status 3 when NumPy 2 or ml_dtypes is missing: the test then skips (or fails under
XP_TEST_REQUIRE_NUMPY=1). Any other failure is a real error.
"""

import json
import sys

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # the test turns this into a skip with the reason
    print(f"format_reference.py: {e}", file=sys.stderr)
    sys.exit(3)
if int(np.__version__.split(".")[0]) < 2:
    print(f"format_reference.py: NumPy {np.__version__} found, NumPy 2 needed", file=sys.stderr)
    sys.exit(3)


def array_of(case):
    data = bytes.fromhex(case["hex"])
    shape = tuple(case["shape"])
    if case["dtype"] == "bfloat16":  # ml_dtypes' type has no byte-order variants; xp is little-endian
        return np.frombuffer(data, dtype=ml_dtypes.bfloat16).reshape(shape).copy()
    native = np.dtype(case["dtype"])
    return np.frombuffer(data, dtype=native.newbyteorder("<")).astype(native).reshape(shape)


def main(path):
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)
    np.set_printoptions()  # the defaults, whatever the environment did
    out = []
    for case in cases:
        a = array_of(case)
        out.append({"repr": repr(a), "str": str(a)})
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
