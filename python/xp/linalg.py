"""The Array API's ``linalg`` extension (2024.12): every function, batched over leading
dimensions. Factorizations run in LAPACK on the CPU (the one inside OpenBLAS) and in cuSOLVER on a
CUDA device. A matrix with no answer (singular for solve and inv, not positive definite for
cholesky, no convergence) raises ``xp.linalg.LinAlgError``, which names the batch entry
(``.batch_index``) and the library's info code (``.info``)."""

from collections import namedtuple

from . import _xp
from ._xp import LinAlgError, matmul, matrix_transpose, tensordot, vecdot

_l = _xp._linalg

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])

cholesky = _l.cholesky
cross = _l.cross
det = _l.det
diagonal = _l.diagonal
eigvalsh = _l.eigvalsh
inv = _l.inv
matrix_norm = _l.matrix_norm
matrix_power = _l.matrix_power
matrix_rank = _l.matrix_rank
outer = _l.outer
pinv = _l.pinv
solve = _l.solve
svdvals = _l.svdvals
trace = _l.trace
vector_norm = _l.vector_norm


def eigh(x, /):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices (lower triangle read)."""
    return EighResult(*_l.eigh(x))


def qr(x, /, *, mode="reduced"):
    """The QR factorization: ``mode`` "reduced" (Q is m x k) or "complete" (Q is m x m)."""
    return QRResult(*_l.qr(x, mode=mode))


def slogdet(x, /):
    """The sign and the natural log of the absolute value of the determinant."""
    return SlogdetResult(*_l.slogdet(x))


def svd(x, /, *, full_matrices=True):
    """The singular value decomposition U @ diag(S) @ Vh, S descending."""
    return SVDResult(*_l.svd(x, full_matrices=full_matrices))


__all__ = [
    "LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
    "tensordot", "trace", "vecdot", "vector_norm",
]

from . import _signatures  # noqa: E402

_signatures.wrap(globals(), __all__)  # inspect.signature reads the standard's parameters
