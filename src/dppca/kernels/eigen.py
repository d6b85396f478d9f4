"""Top eigenpairs of a symmetric matrix, partially when few are asked for.

Deterministic linear algebra, no privacy: the matrix decomposed is already
released (or non-private by name).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..core.lazy import scipy_linalg

__all__ = ["PARTIAL_MIN_P", "top_eigh"]

#: Partial solves are used from this size on, for k at most p / 8: LAPACK's
#: ``syevr`` on a subset (tridiagonalisation, then bisection and inverse
#: iteration for k values) costs about a third of the full ``syevd`` at
#: p = 1000, k = 2; below p = 64 the difference is a few microseconds.
PARTIAL_MIN_P = 64


def top_eigh(matrix: NDArray[np.float64], k: int) -> tuple[NDArray, NDArray]:
    """The ``k`` largest eigenvalues (decreasing) and their eigenvectors (columns).

    For ``p >= PARTIAL_MIN_P`` and ``8 k <= p`` only the top ``k`` pairs are
    computed (``scipy.linalg.eigh`` with ``subset_by_index``, driver
    ``"evr"``); otherwise all of them (``numpy.linalg.eigh``). Both give the
    same eigenvectors up to sign, and to rounding (about 1e-13 for
    eigenvalue gaps of order 1e-3 at p = 1000); a caller applies its sign
    convention afterwards.
    """
    p = matrix.shape[0]
    if p >= PARTIAL_MIN_P and 8 * k <= p:
        values, vectors = scipy_linalg.eigh(
            matrix, subset_by_index=[p - k, p - 1], driver="evr", check_finite=False
        )
    else:
        values, vectors = np.linalg.eigh(matrix)
    order = np.argsort(values)[::-1][:k]
    return np.ascontiguousarray(values[order]), vectors[:, order]
