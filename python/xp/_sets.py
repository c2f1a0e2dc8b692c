"""The Array API's unique_* functions, returning the standard's named tuples."""

from typing import NamedTuple

from . import _xp


class UniqueAllResult(NamedTuple):
    values: _xp.Array
    indices: _xp.Array
    inverse_indices: _xp.Array
    counts: _xp.Array


class UniqueCountsResult(NamedTuple):
    values: _xp.Array
    counts: _xp.Array


class UniqueInverseResult(NamedTuple):
    values: _xp.Array
    inverse_indices: _xp.Array


def unique_all(x, /):
    """The distinct elements of x (sorted; each NaN distinct), where each first occurs, the position of
    each element's value, and how often each occurs."""
    return UniqueAllResult(*_xp._unique_all(x))


def unique_counts(x, /):
    """The distinct elements of x (sorted; each NaN distinct) and how often each occurs."""
    return UniqueCountsResult(*_xp._unique_counts(x))


def unique_inverse(x, /):
    """The distinct elements of x (sorted; each NaN distinct) and, in x's shape, the position of each
    element's value among them."""
    return UniqueInverseResult(*_xp._unique_inverse(x))
