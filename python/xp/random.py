"""Random numbers: ``xp.random.default_rng(seed)`` gives a Generator of Philox-4x32-10 streams, the
same numbers for the same seed on every device (uniform, integers, poisson, binomial and choice
bit for bit; normal, exponential and gamma within the error bounds of docs/semantics.md). Its
methods take NumPy's names and arguments: uniform, normal, integers, exponential, gamma, poisson,
binomial, permutation, shuffle, choice (with or without p). Parameters are numbers (NumPy also
takes arrays of them)."""

import os

from ._xp import _random

Generator = _random.Generator


def default_rng(seed=None):
    """A Generator seeded with ``seed`` (an int; None takes 64 bits from the operating system)."""
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    return Generator(seed)


__all__ = ["Generator", "default_rng"]
