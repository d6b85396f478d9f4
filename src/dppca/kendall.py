"""The sample spherical Kendall matrix: deterministic, no privacy, no randomness.

For rows ``x_1, ..., x_n`` of ``X`` the matrix is

    K = 2 / (n (n - 1)) * sum_{i < j} u_ij u_ij^T,   u_ij = (x_i - x_j) / ||x_i - x_j||.

Computation
-----------
A pair loop costs O(n^2 p^2). Writing ``w_ij = 1 / ||x_i - x_j||^2``, the sum
over pairs is ``Y^T (D - W) Y`` for any translate ``Y`` of ``X`` (``D`` holds
the row sums of the weights ``W``), which needs only matrix products and
O(n^2 p) arithmetic. It is evaluated tile by tile over the upper triangle of
pairs, so memory stays O(tile + p^2) and no n x n array is formed.

Squared distances from inner products, ``|y_i|^2 + |y_j|^2 - 2 y_i.y_j``, are
accurate only to about ``eps_machine * (|y_i|^2 + |y_j|^2)``, and the
Laplacian form amplifies that error by ``(|y_i|^2 + |y_j|^2) / d_ij^2``.
Two devices keep the result within about 1e-12 of the plain pairwise sum:

* ``Y`` is ``X`` minus, per column, one of that column's own values (a middle
  order statistic). Subtracting a nearby floating-point value is exact
  (Sterbenz's lemma), so an offset of 1e6 costs no precision. Because the
  matrix is translation invariant, this shift changes nothing but rounding;
  it is a numerical device, not a preprocessing step, and nothing computed
  from it is released.
* Every pair whose Gram-based squared distance is below ``1e-2`` times
  ``|y_i|^2 + |y_j|^2`` (or below ``4 eps_machine``, or not finite) is taken
  out of the Laplacian and added from its explicit difference ``x_i - x_j`` of
  the original data. The separation check is made on those explicit
  differences, so it decides exactly as the pairwise definition does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ._typing import Data, Ties
from ._validation import check_data, check_positive_int, check_ties
from .exceptions import TiedRowsError

__all__ = ["SEPARATION_THRESHOLD", "spherical_kendall"]

#: Pairs whose difference has norm at most this value are ties: sqrt(DBL_EPSILON).
SEPARATION_THRESHOLD = math.sqrt(np.finfo(np.float64).eps)

# A pair goes the explicit-difference route when its Gram-based squared distance is
# below _CLOSE_REL * (|y_i|^2 + |y_j|^2) + _CLOSE_ABS. The Laplacian's rounding error
# for a pair is about eps_machine * (|y_i|^2 + |y_j|^2) / d^2 <= 2.2e-16 / 1e-2 per unit
# weight, far below the 1e-10 accuracy target; _CLOSE_ABS = 4 eps_machine keeps every
# pair near the separation threshold (d^2 = eps_machine) on the exact route.
_CLOSE_REL = 1e-2
_CLOSE_ABS = 4.0 * float(np.finfo(np.float64).eps)
# Squared norms above this could overflow in differences: send the whole tile exact.
_HUGE = 1e300
_DEFAULT_BLOCK = 1024
_EXACT_CHUNK = 65536


@dataclass
class _PairSums:
    """Running sums over pairs: Laplacian pieces, explicit pairs, ties."""

    n: int
    p: int
    weight_sum: NDArray[np.float64] = field(init=False)
    cross: NDArray[np.float64] = field(init=False)
    exact: NDArray[np.float64] = field(init=False)
    n_ties: int = 0
    example: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.weight_sum = np.zeros(self.n)
        self.cross = np.zeros((self.p, self.p))
        self.exact = np.zeros((self.p, self.p))


def _shift_columns(data: NDArray[np.float64]) -> NDArray[np.float64]:
    """Subtract from each column one of its own middle values (exact for nearby values)."""
    mid = data.shape[0] // 2
    centre = np.partition(data, mid, axis=0)[mid]
    return data - centre


def _add_exact_pairs(
    sums: _PairSums,
    data: NDArray[np.float64],
    rows: NDArray[np.intp],
    cols: NDArray[np.intp],
    ties: str,
) -> None:
    """Add u u^T for explicit pairs (global row indices), counting ties."""
    for start in range(0, rows.size, _EXACT_CHUNK):
        r = rows[start : start + _EXACT_CHUNK]
        c = cols[start : start + _EXACT_CHUNK]
        diff = data[r] - data[c]
        with np.errstate(over="ignore", invalid="ignore"):
            norm = np.sqrt(np.sum(diff * diff, axis=1))
        ok = np.isfinite(norm) & (norm > SEPARATION_THRESHOLD)
        if not ok.all():
            bad = np.flatnonzero(~ok)
            sums.n_ties += bad.size
            if sums.example is None:
                sums.example = (int(r[bad[0]]), int(c[bad[0]]))
            if ties == "error":
                continue  # the error is raised once every pair has been counted
        unit = diff[ok] / norm[ok, None]
        sums.exact += unit.T @ unit


def _accumulate_tile(
    sums: _PairSums,
    data: NDArray[np.float64],
    shifted: NDArray[np.float64],
    sq_norms: NDArray[np.float64],
    rows: slice,
    cols: slice,
    ties: str,
) -> None:
    """Add the pairs (i, j), i in ``rows``, j in ``cols``, i < j, to ``sums``."""
    y_i, y_j = shifted[rows], shifted[cols]
    sq_i, sq_j = sq_norms[rows], sq_norms[cols]
    scale = np.add.outer(sq_i, sq_j)
    dist2 = y_i @ y_j.T
    dist2 *= -2.0
    dist2 += scale
    if rows.start == cols.start:  # diagonal tile: keep only j > i
        dist2[np.tril_indices(dist2.shape[0], m=dist2.shape[1])] = np.inf
    if sq_i.max() + sq_j.max() > _HUGE:
        close = np.isfinite(dist2)
    else:
        scale *= _CLOSE_REL
        scale += _CLOSE_ABS
        close = ~(dist2 > scale)
    del scale
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        weights = np.reciprocal(dist2, out=dist2)
    any_close = bool(close.any())
    if any_close:
        weights[close] = 0.0
    sums.weight_sum[rows] += weights.sum(axis=1)
    sums.weight_sum[cols] += weights.sum(axis=0)
    sums.cross += y_i.T @ (weights @ y_j)
    if any_close:
        r, c = np.nonzero(close)
        _add_exact_pairs(sums, data, r + rows.start, c + cols.start, ties)


def _pair_sum(
    data: NDArray[np.float64], *, ties: str, block_size: int | None
) -> tuple[NDArray[np.float64], int, tuple[int, int] | None]:
    """Sum of u_ij u_ij^T over all pairs i < j, the number of ties and one tied pair."""
    n, p = data.shape
    block = _DEFAULT_BLOCK if block_size is None else block_size
    shifted = _shift_columns(data)
    sq_norms = np.einsum("ij,ij->i", shifted, shifted)
    sums = _PairSums(n, p)
    for i0 in range(0, n, block):
        rows = slice(i0, min(i0 + block, n))
        for j0 in range(i0, n, block):
            cols = slice(j0, min(j0 + block, n))
            _accumulate_tile(sums, data, shifted, sq_norms, rows, cols, ties)
    weighted = shifted * sums.weight_sum[:, None]
    total = shifted.T @ weighted - sums.cross - sums.cross.T + sums.exact
    total = 0.5 * (total + total.T)
    return total, sums.n_ties, sums.example


def _tie_message(n_ties: int, example: tuple[int, int]) -> str:
    i, j = example
    return (
        f"{n_ties} pair(s) of rows are within {SEPARATION_THRESHOLD:.3g} of each other "
        f"(or too far apart for a finite distance), for example rows {i} and {j} "
        "(0-based); their difference cannot be normalised. Pass ties='zero' to let such "
        "pairs contribute nothing, which keeps the privacy guarantee and avoids this "
        "data-dependent error."
    )


def kendall_matrix(
    data: NDArray[np.float64], *, ties: str = "error", block_size: int | None = None
) -> NDArray[np.float64]:
    """Spherical Kendall matrix of an already validated float64 array (internal)."""
    n = data.shape[0]
    total, n_ties, example = _pair_sum(data, ties=ties, block_size=block_size)
    if n_ties and ties == "error":
        assert example is not None
        raise TiedRowsError(_tie_message(n_ties, example), n_pairs=n_ties, example=example)
    return total * (2.0 / (n * (n - 1.0)))


def spherical_kendall(
    X: Data, *, ties: Ties = "error", block_size: int | None = None
) -> NDArray[np.float64]:
    """Sample spherical Kendall matrix of the rows of ``X``.

    ``K = 2/(n(n-1)) * sum_{i<j} u_ij u_ij^T`` with
    ``u_ij = (x_i - x_j) / ||x_i - x_j||``: the average outer product of the unit
    pairwise differences. It is symmetric, positive semi-definite, has trace 1
    (without ties) and is unchanged by translating all rows.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        Numeric data with n >= 2 rows. Not modified.
    ties : {"error", "zero"}, default="error"
        What to do with a pair whose difference has norm at most
        ``sqrt(machine epsilon)`` (about 1.49e-8), or a non-finite norm.
        ``"error"`` raises :class:`~dppca.exceptions.TiedRowsError`;
        ``"zero"`` lets such pairs contribute a zero matrix (the trace is then
        below 1).
    block_size : int, optional
        Rows per tile of the blocked computation (default 1024). Memory is
        O(block_size^2 + p^2).

    Returns
    -------
    ndarray of shape (p, p)

    Raises
    ------
    TiedRowsError
        With ``ties="error"`` when a pair is too close; the message gives the
        number of such pairs and one example pair of (0-based) row indices.

    Notes
    -----
    This function is not private. When its output feeds a private release
    (see :func:`dppca.dp_pc_dir`), an error raised under ``ties="error"`` is
    itself data-dependent: it tells whoever sees it that two rows almost
    coincide, how many such pairs there are, and where one is. With
    ``ties="zero"`` there is no such error and the sensitivity bound ``4/n``
    still holds, because a zero term is as bounded as a unit one.

    The computation costs O(n^2 p) arithmetic in matrix products; see the
    module documentation for how it stays accurate on near-duplicate rows and
    on data far from the origin.

    Examples
    --------
    >>> import numpy as np
    >>> from dppca import spherical_kendall
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> K = spherical_kendall(X)
    >>> K.shape, round(float(np.trace(K)), 12)
    ((3, 3), 1.0)
    """
    data, _ = check_data(X)
    ties = check_ties(ties)
    if block_size is not None:
        block_size = check_positive_int(block_size, "block_size")
    return kendall_matrix(data, ties=ties, block_size=block_size)
