"""The marginal Kendall's tau matrix: deterministic, no privacy, no randomness.

For rows ``x_1, ..., x_n`` of ``X`` write ``s_ij = sign(x_i - x_j)``, taken
coordinate by coordinate, in ``{-1, 0, 1}^p`` (a tie in a coordinate gives 0).
The matrix is

    T = 2 / (n (n - 1)) * sum_{i < j} s_ij s_ij^T,

whose entry ``(a, b)`` is Kendall's tau-a of columns ``a`` and ``b`` and whose
diagonal holds ``1`` minus the share of pairs tied in that column. It uses
only the order of the values within each column, so it does not change when
any column is multiplied by a positive factor (or moved, or passed through
any strictly increasing map).

Computation
-----------
The signs are formed by comparisons (``(x_i > x_j) - (x_i < x_j)``), never
by subtraction, so no value can overflow or lose precision. For a block
``I`` of consecutive rows the sign differences against the rows after the
block form one ``(|I| (n - b), p)`` array ``D`` and a product ``D^T D`` adds
their outer products; the pairs inside the block come from its own
``(|I|^2, p)`` array, each pair counted twice (``s_ji = -s_ij`` has the same
outer product), hence halved. The block size keeps each array near 8 MiB,
so memory is O(n p) beyond the data, and the work is O(n^2 p^2). Every sum
is a sum of integers far below 2^53, so the float64 result is exact: it
does not depend on the block size, the BLAS or the order of the blocks.

Balanced design
---------------
As for the spherical Kendall matrix (:mod:`dppca.kernels.kendall`), a random
order of the rows, drawn by the caller and passed in, pairs position ``q``
with positions ``q + 1, ..., q + m`` (mod n); the matrix averages the
``n m`` outer products with weight ``1 / (n m)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..core.progress import ProgressCallback

__all__ = ["kendall_tau_matrix"]

#: About 8 MiB of float64 signs per product.
_CHUNK_VALUES = 1 << 20


def _signs(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sign(a - b)`` by comparison (no subtraction, so nothing overflows)."""
    return np.greater(a, b).astype(np.float64) - np.less(a, b)


def _exact_sum(
    data: NDArray[np.float64], progress: ProgressCallback | None
) -> NDArray[np.float64]:
    """``sum_{i<j} s_ij s_ij^T`` over all pairs, block by block."""
    n, p = data.shape
    total = np.zeros((p, p))
    block = max(1, min(n, _CHUNK_VALUES // max(1, n * p)))
    pairs, done = n * (n - 1) // 2, 0
    for a in range(0, n, block):
        b = min(n, a + block)
        rows = data[a:b, None, :]
        inside = _signs(rows, data[None, a:b, :]).reshape(-1, p)
        total += 0.5 * (inside.T @ inside)
        if b < n:
            later = _signs(rows, data[None, b:, :]).reshape(-1, p)
            total += later.T @ later
        done += (b - a) * (b - a - 1) // 2 + (b - a) * (n - b)
        if progress is not None:
            progress(done, pairs)
    return total


def _balanced_sum(
    data: NDArray[np.float64],
    order: NDArray[np.int64],
    m: int,
    progress: ProgressCallback | None,
) -> NDArray[np.float64]:
    """Sum of ``s s^T`` over the ``n m`` pairs of the balanced design."""
    n, p = data.shape
    ordered = data[order]
    total = np.zeros((p, p))
    chunk = max(1, _CHUNK_VALUES // max(1, p))
    for step in range(1, m + 1):
        partner = np.roll(ordered, -step, axis=0)  # position q + step (mod n)
        for a in range(0, n, chunk):
            signs = _signs(ordered[a : a + chunk], partner[a : a + chunk])
            total += signs.T @ signs
        if progress is not None:
            progress(step * n, m * n)
    return total


def kendall_tau_matrix(
    data: NDArray[np.float64],
    *,
    design: str = "exact",
    m: int | None = None,
    order: NDArray[np.int64] | None = None,
    progress: ProgressCallback | None = None,
) -> NDArray[np.float64]:
    """Kendall's tau-a matrix of the columns of an (n, p) float64 array (internal).

    Parameters
    ----------
    data : ndarray of shape (n, p)
        Finite float64 values, n >= 2 (already validated; only read).
    design : {"exact", "balanced"}, default="exact"
        All ``n (n - 1) / 2`` pairs, or the ``n m`` pairs of the balanced design.
    m : int, optional
        Partners per position for the balanced design, in [1, (n - 1) // 2].
    order : ndarray of int, optional
        The balanced design's order of ``range(n)``, drawn by the caller.
    progress : callable, optional
        ``progress(done, total)`` in pairs, after each block.

    Returns
    -------
    ndarray of shape (p, p)
        ``T = 2 / (n (n - 1)) sum_{i<j} s_ij s_ij^T`` (exact design) or
        ``1 / (n m) sum s s^T`` over the design's pairs; symmetric, with unit
        diagonal when no column has ties.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 10.0], [2.0, 30.0], [3.0, 20.0]])
    >>> kendall_tau_matrix(x).round(3).tolist()
    [[1.0, 0.333], [0.333, 1.0]]
    """
    data = np.asarray(data, dtype=np.float64)
    n = data.shape[0]
    if design == "exact":
        total, factor = _exact_sum(data, progress), 2.0 / (n * (n - 1.0))
    else:
        if m is None or order is None:
            raise ValueError("the balanced design needs m and the order of the rows.")
        total, factor = _balanced_sum(data, np.asarray(order), m, progress), 1.0 / (n * m)
    return 0.5 * (total + total.T) * factor
