#!/usr/bin/env python3
"""Independent reference for xp's Philox random streams (src/backend/philox.hpp).

Written from the definitions, not from any library's code:
  - Philox4x32-10: Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3"
    (SC 2011), section 5: the round function, the multipliers and the Weyl key schedule;
  - the stream layout and the conversions documented in src/backend/philox.hpp.
Python's integers are unbounded, so every "high word", carry and widening multiply below is plain
arithmetic, not the 32-bit decomposition the C++ code uses. Normal samples are evaluated with the
decimal module at 50 digits (ln, sqrt, and sin/cos by Taylor series), so they are a reference for
the libm and CUDA math functions, not a copy of them. Needs only the standard library.

Usage (output on stdout, one value per line):
  philox_reference.py selftest
      checks the Random123 known-answer vectors; prints "ok"
  philox_reference.py block C0 C1 C2 C3 K0 K1
      one Philox4x32-10 block (hex or decimal inputs); prints the four output words in hex
  philox_reference.py draw KIND SEED STREAM FIRST N [LOW HIGH]
      elements FIRST .. FIRST+N-1 of one draw. KIND and what is printed:
        words        stream words (hex)
        uniform32    float32 bits (hex)      uniform64    float64 bits (hex)
        uniform16    float16 bits (hex)      uniformbf16  bfloat16 bits (hex)
        integers     decimal integers in [LOW, HIGH)
        normal32     the exact value of the float32 Box-Muller formula, 30 significant digits
        normal64     the same for the float64 formula
Exit status 0 on success, 2 on bad usage, 1 when the self-test fails.
"""

import decimal
import struct
import sys

MASK32 = 0xFFFFFFFF
MULT0, MULT1 = 0xD2511F53, 0xCD9E8D57  # round multipliers
WEYL0, WEYL1 = 0x9E3779B9, 0xBB67AE85  # key increments: golden ratio and sqrt(3) - 1, as 32-bit fractions
ROUNDS = 10


def philox4x32(counter, key, rounds=ROUNDS):
    """Philox4x32-R. counter: four 32-bit words, key: two. Round r uses key + r * Weyl."""
    x0, x1, x2, x3 = counter
    k0, k1 = key
    for r in range(rounds):
        rk0 = (k0 + r * WEYL0) & MASK32
        rk1 = (k1 + r * WEYL1) & MASK32
        p0 = MULT0 * x0  # 64-bit products: high and low halves
        p1 = MULT1 * x2
        x0, x1, x2, x3 = (p1 >> 32) ^ x1 ^ rk0, p1 & MASK32, (p0 >> 32) ^ x3 ^ rk1, p0 & MASK32
    return (x0, x1, x2, x3)


# Random123's published known answers for philox4x32-10 (kat_vectors): counter, key, output.
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK32,) * 4, (MASK32,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


def selftest():
    ok = True
    for counter, key, expected in KNOWN_ANSWERS:
        got = philox4x32(counter, key)
        if got != expected:
            ok = False
            print("KAT mismatch: counter %s key %s: got %s, expected %s" % (counter, key, got, expected), file=sys.stderr)
    return ok


# ---- the stream layout (philox.hpp) ----


class Stream:
    """Word j of stream `stream` under `seed`: block j // 4, output word j % 4, where block b is
    Philox4x32-10 of counter (b low, b high, stream low, stream high) under key (seed low, seed high)."""

    def __init__(self, seed, stream):
        self.key = (seed & MASK32, seed >> 32)
        self.stream = stream
        self.cache = {}

    def block(self, b):
        if b not in self.cache:
            counter = (b & MASK32, b >> 32, self.stream & MASK32, self.stream >> 32)
            self.cache = {b: philox4x32(counter, self.key)}
        return self.cache[b]

    def word(self, j):
        return self.block(j // 4)[j % 4]

    def u64(self, j):
        """Words j (low half) and j + 1 (high half) as one 64-bit integer."""
        return self.word(j) | (self.word(j + 1) << 32)


def f32_bits(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]


def f64_bits(value):
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def round_f32(value):
    """Rounds a Python float (double) to float32, to nearest, ties to even."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def uniform32(s, i):
    return (s.word(i) >> 8) / 2.0**24  # exact: 24 bits


def uniform64(s, i):
    return (s.u64(2 * i) >> 11) / 2.0**53  # exact: 53 bits


def uniform16_bits(s, i):
    value = (s.word(i) >> 21) / 2.0**11  # 11 bits: exact in float16
    return struct.unpack("<H", struct.pack("<e", value))[0]


def uniformbf16_bits(s, i):
    value = (s.word(i) >> 24) / 2.0**8  # 8 bits: exact in bfloat16, whose bits are float32's top half
    return f32_bits(value) >> 16


def integer(s, i, low, high):
    r = high - low
    if r <= 2**32:  # one 64-bit fraction: words 2i, 2i+1
        return low + ((s.u64(2 * i) * r) >> 64)
    v = s.u64(4 * i) | (s.u64(4 * i + 2) << 64)  # one 128-bit fraction: words 4i .. 4i+3
    return low + ((v * r) >> 128)


# ---- normals: Box-Muller in 50-digit decimal arithmetic ----

CTX = decimal.Context(prec=50)


def atan_inverse(n):
    """atan(1/n) by its Taylor series."""
    x = CTX.divide(1, n)
    n2 = n * n
    total, term, k, sign = x, x, 1, 1
    while True:
        term = CTX.divide(term, n2)
        k += 2
        sign = -sign
        step = CTX.divide(term, k)
        if step == 0 or abs(step) < decimal.Decimal(10) ** -60:
            break
        total = CTX.add(total, step if sign > 0 else -step)
    return total


PI = CTX.subtract(CTX.multiply(16, atan_inverse(5)), CTX.multiply(4, atan_inverse(239)))  # Machin
HALF_PI = CTX.divide(PI, 2)


def sin_cos_series(x):
    """(sin x, cos x) for |x| <= pi/4 by Taylor series."""
    x2 = CTX.multiply(x, x)
    s, c = x, decimal.Decimal(1)
    ts, tc = x, decimal.Decimal(1)
    k = 1
    while True:
        tc = CTX.divide(CTX.multiply(-tc, x2), (2 * k - 1) * (2 * k))
        ts = CTX.divide(CTX.multiply(-ts, x2), (2 * k) * (2 * k + 1))
        if tc == 0 or abs(tc) < decimal.Decimal(10) ** -60:
            break
        c = CTX.add(c, tc)
        s = CTX.add(s, ts)
        k += 1
    return s, c


def sin_cos(t):
    """(sin t, cos t) of a float t in [0, 7), reduced by multiples of pi/2 in 50 digits."""
    d = decimal.Decimal(t)  # exact
    q = int(CTX.divide(d, HALF_PI).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
    x = CTX.subtract(d, CTX.multiply(q, HALF_PI))
    s, c = sin_cos_series(x)
    return [(s, c), (c, -s), (-s, -c), (-c, s)][q % 4]


def box_muller(u1, t, second):
    """sqrt(-2 ln u1) * (sin t if second else cos t), exactly for the given floats u1 and t."""
    radius = CTX.sqrt(CTX.multiply(-2, CTX.ln(decimal.Decimal(u1))))
    s, c = sin_cos(t)
    return CTX.multiply(radius, s if second else c)


TWO_PI_F32 = round_f32(2 * float(PI))  # 0x40c90fdb
TWO_PI_F64 = float(CTX.multiply(2, PI))  # 0x401921fb54442d18


def normal32(s, i):
    """Pair p = i // 2 uses words 2p (radius) and 2p+1 (angle); even i takes cos, odd i sin."""
    p = i // 2
    u1 = ((s.word(2 * p) >> 8) + 1) / 2.0**24  # (0, 1]
    u2 = (s.word(2 * p + 1) >> 8) / 2.0**24  # [0, 1)
    t = round_f32(TWO_PI_F32 * u2)  # the product of two 24-bit values is exact in double
    return box_muller(u1, t, i % 2 == 1)


def normal64(s, i):
    """Pair p = i // 2 uses words 4p, 4p+1 (radius) and 4p+2, 4p+3 (angle)."""
    p = i // 2
    u1 = ((s.u64(4 * p) >> 11) + 1) / 2.0**53  # (0, 1]
    u2 = (s.u64(4 * p + 2) >> 11) / 2.0**53
    t = TWO_PI_F64 * u2  # one rounded double multiply, as in C++ and CUDA
    return box_muller(u1, t, i % 2 == 1)


def fmt_hex(width):
    return lambda v: "%0*x" % (width, v)


def fmt_decimal(v):
    return format(decimal.Context(prec=30).plus(v), "e")


KINDS = {
    "words": (lambda s, i: s.word(i), fmt_hex(8)),
    "uniform32": (lambda s, i: f32_bits(uniform32(s, i)), fmt_hex(8)),
    "uniform64": (lambda s, i: f64_bits(uniform64(s, i)), fmt_hex(16)),
    "uniform16": (uniform16_bits, fmt_hex(4)),
    "uniformbf16": (uniformbf16_bits, fmt_hex(4)),
    "normal32": (normal32, fmt_decimal),
    "normal64": (normal64, fmt_decimal),
}


def main(argv):
    if len(argv) == 1 and argv[0] == "selftest":
        if not selftest():
            return 1
        print("ok")
        return 0
    if len(argv) == 7 and argv[0] == "block":
        words = [int(a, 0) for a in argv[1:]]
        out = philox4x32(tuple(words[:4]), tuple(words[4:]))
        print("\n".join("%08x" % w for w in out))
        return 0
    if len(argv) in (6, 8) and argv[0] == "draw":
        kind = argv[1]
        seed, stream, first, n = (int(a, 0) for a in argv[2:6])
        s = Stream(seed, stream)
        if kind == "integers":
            if len(argv) != 8:
                return usage()
            low, high = int(argv[6], 0), int(argv[7], 0)
            lines = [str(integer(s, i, low, high)) for i in range(first, first + n)]
        elif kind in KINDS and len(argv) == 6:
            f, fmt = KINDS[kind]
            lines = [fmt(f(s, i)) for i in range(first, first + n)]
        else:
            return usage()
        sys.stdout.write("\n".join(lines) + "\n")
        return 0
    return usage()


def usage():
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    if not selftest():
        sys.exit(1)
    sys.exit(main(sys.argv[1:]))
