"""The sample spherical Kendall matrix: deterministic, no privacy, no randomness.

(The balanced design needs a random order of the rows; it is drawn by the
caller through :func:`dppca.mechanisms.random_pairing` and passed in.)

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

One tile is one call of ``_tile_sums``, which returns the tile's own p x p
Laplacian sum (a ``_PairSums``); the in-memory loop and the Dask tasks
(``dppca._dask``) call the same function and merge the results in the same
order. The Dask path shifts by the first row instead of the middle order
statistics (one value per column is all the device needs; a distributed
selection would cost a pass over the data).

Balanced design
---------------
``K_B = 1/(n m) * sum_q sum_{k=1..m} u u^T`` over the rows at positions ``q``
and ``q + k`` (mod n) of a random order. Its ``n m`` differences are formed
explicitly, chunk by chunk (``_balanced_chunk``), in O(n m p^2) time and
O(chunk m p + p^2) memory beyond the data: no Gram trick is needed, and ties
follow the same rule as above.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import blas

from ._progress import ProgressCallback, ProgressLike, resolve_progress
from ._typing import Data, Design, RandomStateLike, Ties
from ._validation import (
    check_data,
    check_design,
    check_design_m,
    check_positive_int,
    check_random_state,
    check_ties,
)
from .exceptions import TiedRowsError
from .mechanisms import random_pairing

__all__ = ["SEPARATION_THRESHOLD", "default_m", "spherical_kendall"]

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
_DEFAULT_M = 20


@dataclass
class _PairSums:
    """A partial sum of u u^T over some pairs, with the ties met on the way.

    Every way of visiting pairs (tiles of the exact design, chunks of the
    balanced design, in memory or as Dask tasks) produces these and merges them
    in a fixed order, so the arithmetic is written once.
    """

    p: int
    matrix: NDArray[np.float64] = field(init=False)
    n_ties: int = 0
    example: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.matrix = np.zeros((self.p, self.p))

    def merge(self, other: _PairSums) -> None:
        """Add ``other`` into this sum (the first tie example is kept)."""
        self.matrix += other.matrix
        self.n_ties += other.n_ties
        if self.example is None:
            self.example = other.example


def _column_shift(data: NDArray[np.float64]) -> NDArray[np.float64]:
    """One middle value of each column (an order statistic, so a value of the data)."""
    mid = data.shape[0] // 2
    return np.partition(data, mid, axis=0)[mid]


def _add_unit_outer(
    sums: _PairSums,
    diff: NDArray[np.float64],
    ties: str,
    locate: Callable[[int], tuple[int, int]],
) -> None:
    """Add u u^T for the rows of ``diff`` (explicit differences, overwritten).

    The separation rule lives here and nowhere else: a difference whose norm is
    at most ``SEPARATION_THRESHOLD`` or not finite is a tie. ``locate(b)`` maps
    the position of a tied row of ``diff`` to its pair of row indices.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        norm = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    ok = np.isfinite(norm) & (norm > SEPARATION_THRESHOLD)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        sums.n_ties += bad.size
        if sums.example is None:
            sums.example = locate(int(bad[0]))
        if ties == "error":
            return  # the error is raised once every pair has been counted
        diff, norm = diff[ok], norm[ok]
    diff /= norm[:, None]
    # diff.T @ diff with half the work: BLAS syrk on the Fortran view diff.T (no copy)
    upper = blas.dsyrk(1.0, diff.T, trans=0, lower=0)
    sums.matrix += np.triu(upper) + np.triu(upper, 1).T


def _add_exact_pairs(
    sums: _PairSums,
    x_i: NDArray[np.float64],
    x_j: NDArray[np.float64],
    rows: NDArray[np.intp],
    cols: NDArray[np.intp],
    offsets: tuple[int, int],
    ties: str,
) -> None:
    """Add u u^T for the pairs (x_i[rows], x_j[cols]) from explicit differences."""
    for start in range(0, rows.size, _EXACT_CHUNK):
        r = rows[start : start + _EXACT_CHUNK]
        c = cols[start : start + _EXACT_CHUNK]
        with np.errstate(over="ignore", invalid="ignore"):
            diff = x_i[r] - x_j[c]  # may overflow to inf: then a tie (non-finite norm)
        _add_unit_outer(
            sums,
            diff,
            ties,
            lambda b, r=r, c=c: (int(r[b]) + offsets[0], int(c[b]) + offsets[1]),
        )


def _tile_sums(
    x_i: NDArray[np.float64],
    x_j: NDArray[np.float64],
    shift: NDArray[np.float64],
    i0: int,
    j0: int,
    ties: str,
) -> _PairSums:
    """Sum of u u^T over the pairs of one tile of the exact design.

    ``x_i`` and ``x_j`` are the row blocks starting at rows ``i0`` and ``j0``
    (``i0 <= j0``); on a diagonal tile (``i0 == j0``, the same block twice) only
    pairs with j > i count. ``shift`` is one data value per column, subtracted
    for accuracy only (the matrix is translation invariant). The tile's
    Laplacian ``sum w_ij (y_i - y_j)(y_i - y_j)^T`` is assembled from matrix
    products; close pairs go through :func:`_add_unit_outer` instead.
    """
    sums = _PairSums(x_i.shape[1])
    diagonal = i0 == j0
    with np.errstate(over="ignore", invalid="ignore"):
        y_i = x_i - shift
        y_j = y_i if diagonal else x_j - shift
        sq_i = np.einsum("ij,ij->i", y_i, y_i)
        sq_j = sq_i if diagonal else np.einsum("ij,ij->i", y_j, y_j)
    if not sq_i.max() + sq_j.max() <= _HUGE:
        # Values near the float64 limit (squares overflow, or NaN after overflow): the
        # Gram products are meaningless, so every pair of the tile goes the explicit
        # route, where an overflowing difference is a tie like any non-finite norm.
        close = np.ones((x_i.shape[0], x_j.shape[0]), dtype=bool)
        if diagonal:
            close[np.tril_indices(close.shape[0], m=close.shape[1])] = False
        r, c = np.nonzero(close)
        _add_exact_pairs(sums, x_i, x_j, r, c, (i0, j0), ties)
        return sums
    scale = np.add.outer(sq_i, sq_j)
    dist2 = y_i @ y_j.T
    dist2 *= -2.0
    dist2 += scale
    if diagonal:  # keep only j > i
        dist2[np.tril_indices(dist2.shape[0], m=dist2.shape[1])] = np.inf
    scale *= _CLOSE_REL
    scale += _CLOSE_ABS
    close = ~(dist2 > scale)
    del scale
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        weights = np.reciprocal(dist2, out=dist2)
    any_close = bool(close.any())
    if any_close:
        weights[close] = 0.0
    cross = y_i.T @ (weights @ y_j)
    sums.matrix = ((y_i.T * weights.sum(axis=1)) @ y_i + (y_j.T * weights.sum(axis=0)) @ y_j) - (
        cross + cross.T
    )
    if any_close:
        r, c = np.nonzero(close)
        _add_exact_pairs(sums, x_i, x_j, r, c, (i0, j0), ties)
    return sums


def _exact_tiles(n: int, block: int) -> list[tuple[int, int, int, int, int]]:
    """Tiles ``(i0, i1, j0, j1, n_pairs)`` of row blocks I <= J, in the order they are summed."""
    tiles = []
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        for j0 in range(i0, n, block):
            j1 = min(j0 + block, n)
            size = (i1 - i0) * (i1 - i0 - 1) // 2 if i0 == j0 else (i1 - i0) * (j1 - j0)
            tiles.append((i0, i1, j0, j1, size))
    return tiles


def _pair_sum(
    data: NDArray[np.float64],
    *,
    ties: str,
    block_size: int | None,
    progress: ProgressCallback | None = None,
) -> _PairSums:
    """Sum of u_ij u_ij^T over all pairs i < j, tile by tile (exact design)."""
    n, p = data.shape
    block = _DEFAULT_BLOCK if block_size is None else block_size
    shift = _column_shift(data)
    total = _PairSums(p)
    done, n_pairs = 0, n * (n - 1) // 2
    for i0, i1, j0, j1, size in _exact_tiles(n, block):
        total.merge(_tile_sums(data[i0:i1], data[j0:j1], shift, i0, j0, ties))
        done += size
        if progress is not None:
            progress(done, n_pairs)
    return total


def _balanced_chunk(
    block: NDArray[np.float64], m: int, ties: str, start: int, n: int
) -> _PairSums:
    """Sum of u u^T over the pairs (a, a + k), k = 1..m, of consecutive permuted rows.

    ``block`` holds the permuted rows at positions ``start, ..., start + c + m - 1``
    (mod n): its first ``c`` rows are paired with their next ``m`` neighbours.
    Differences are explicit, so ties are decided by the same rule as in the
    exact design. A tie example is reported as a pair of *positions* in the
    permuted order.
    """
    c = block.shape[0] - m
    diff = np.empty((m, c, block.shape[1]))
    with np.errstate(over="ignore", invalid="ignore"):  # overflow -> inf -> a tie
        for k in range(1, m + 1):
            np.subtract(block[:c], block[k : k + c], out=diff[k - 1])
    sums = _PairSums(block.shape[1])

    def locate(b: int) -> tuple[int, int]:
        k, a = divmod(b, c)
        return (start + a) % n, (start + a + k + 1) % n

    _add_unit_outer(sums, diff.reshape(m * c, -1), ties, locate)
    return sums


def _balanced_chunks(n: int, m: int, chunk: int) -> list[tuple[int, int]]:
    """Chunks ``(a, b)`` of positions whose pairs (a.., +1..+m) one task sums."""
    return [(a, min(a + chunk, n)) for a in range(0, n, chunk)]


def _balanced_pair_sum(
    data: NDArray[np.float64],
    order: NDArray[np.int64],
    m: int,
    *,
    ties: str,
    block_size: int | None,
    progress: ProgressCallback | None = None,
) -> _PairSums:
    """Sum of u u^T over the n m pairs of the balanced design, chunk by chunk.

    Position q of the random order ``order`` holds row ``order[q]``; it is paired
    with positions q + 1, ..., q + m (mod n). Only ``chunk + m`` rows are gathered
    at a time, so memory is O((chunk + m) m p + p^2) beyond the data.
    """
    n, p = data.shape
    chunk = default_balanced_chunk(m, p) if block_size is None else block_size
    total = _PairSums(p)
    for a, b in _balanced_chunks(n, m, chunk):
        positions = np.arange(a, b + m)
        positions[positions >= n] -= n
        total.merge(_balanced_chunk(data[order[positions]], m, ties, a, n))
        if progress is not None:
            progress(b * m, n * m)
    if total.example is not None:
        total.example = (int(order[total.example[0]]), int(order[total.example[1]]))
    return total


def default_balanced_chunk(m: int, p: int) -> int:
    """Positions per chunk of the balanced design: about 8 MiB of differences."""
    return max(64, (1 << 20) // (m * p))


def default_m(n: int) -> int:
    """Default number of partners per position in the balanced design: ``min(20, (n-1)//2)``.

    It depends on the public ``n`` only.
    """
    return min(_DEFAULT_M, (n - 1) // 2)


def _tie_message(n_ties: int, example: tuple[int, int]) -> str:
    i, j = example
    return (
        f"{n_ties} pair(s) of rows are within {SEPARATION_THRESHOLD:.3g} of each other "
        f"(or too far apart for a finite distance), for example rows {i} and {j} "
        "(0-based); their difference cannot be normalised. Pass ties='zero' to let such "
        "pairs contribute nothing, which keeps the privacy guarantee and avoids this "
        "data-dependent error."
    )


def is_dask_collection(X: object) -> bool:
    """True for a Dask array or DataFrame (checked without importing dask)."""
    return hasattr(X, "__dask_graph__") and type(X).__module__.startswith("dask")


def validate_kendall_input(X: object, design: str) -> tuple[Any, tuple[str, ...]]:
    """Validated data for the kernels: a float64 ndarray, or a Dask array.

    The balanced design only reads the data, so an array that is already
    C-contiguous float64 is used without a copy (large tables).
    """
    if is_dask_collection(X):
        from ._dask import check_dask_data

        return check_dask_data(X)
    return check_data(X, copy=design == "exact")


def kendall_matrix(
    data: Any,
    *,
    ties: str = "error",
    block_size: int | None = None,
    design: str = "exact",
    m: int | None = None,
    order: NDArray[np.int64] | None = None,
    progress: ProgressCallback | None = None,
) -> NDArray[np.float64]:
    """Spherical Kendall matrix of already validated data (internal).

    ``data`` is a float64 ndarray or a validated Dask array. The balanced design
    needs ``m`` and the random order ``order`` of ``range(n)``.
    """
    n = data.shape[0]
    dask = is_dask_collection(data)
    if design == "exact":
        if dask:
            from ._dask import dask_pair_sum

            sums = dask_pair_sum(data, ties=ties, block_size=block_size, progress=progress)
        else:
            sums = _pair_sum(data, ties=ties, block_size=block_size, progress=progress)
        factor = 2.0 / (n * (n - 1.0))
    else:
        assert m is not None and order is not None
        if dask:
            from ._dask import dask_balanced_pair_sum

            sums = dask_balanced_pair_sum(
                data, order, m, ties=ties, block_size=block_size, progress=progress
            )
        else:
            sums = _balanced_pair_sum(
                data, order, m, ties=ties, block_size=block_size, progress=progress
            )
        factor = 1.0 / (n * float(m))
    if sums.n_ties and ties == "error":
        assert sums.example is not None
        raise TiedRowsError(
            _tie_message(sums.n_ties, sums.example), n_pairs=sums.n_ties, example=sums.example
        )
    total = 0.5 * (sums.matrix + sums.matrix.T)
    return total * factor


def spherical_kendall(
    X: Data,
    *,
    ties: Ties = "error",
    block_size: int | None = None,
    design: Design = "exact",
    m: int | None = None,
    random_state: RandomStateLike = None,
    progress: ProgressLike = None,
) -> NDArray[np.float64]:
    """Sample spherical Kendall matrix of the rows of ``X``.

    With ``design="exact"`` (the default) this is
    ``K = 2/(n(n-1)) * sum_{i<j} u_ij u_ij^T`` with
    ``u_ij = (x_i - x_j) / ||x_i - x_j||``: the average outer product of the unit
    pairwise differences. It is symmetric, positive semi-definite, has trace 1
    (without ties) and is unchanged by translating all rows.
    ``design="balanced"`` averages over ``n m`` pairs of a random balanced
    design instead (see Notes), in O(n m p^2) time.

    Parameters
    ----------
    X : array-like of shape (n, p), pandas.DataFrame, dask.array.Array or dask.dataframe.DataFrame
        Numeric data with n >= 2 rows (n >= 3 for the balanced design). Not
        modified. A Dask collection is computed tile by tile on the active Dask
        scheduler (needs the ``dask`` extra).
    ties : {"error", "zero"}, default="error"
        What to do with a pair whose difference has norm at most
        ``sqrt(machine epsilon)`` (about 1.49e-8), or a non-finite norm.
        ``"error"`` raises :class:`~dppca.exceptions.TiedRowsError`;
        ``"zero"`` lets such pairs contribute a zero matrix (the trace is then
        below 1). The same rule applies to both designs.
    block_size : int, optional
        Rows per tile of the exact design (default 1024; 2048 for Dask), or
        positions per chunk of the balanced design (default about 8 MiB of
        differences; at least 4096 for Dask). Memory is O(block_size^2 + p^2)
        for the exact design and O(block_size m p + p^2) beyond the data for
        the balanced one.
    design : {"exact", "balanced"}, default="exact"
        ``"exact"``: all n(n-1)/2 pairs. ``"balanced"``: the rows are put in a
        random order and each position is paired with the next ``m`` positions
        (cyclically).
    m : int, optional
        Partners per position for the balanced design, in [1, (n - 1) // 2];
        default ``min(20, (n - 1) // 2)``, which depends on n only. Ignored by
        the exact design.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the random order of the balanced design (unused by the exact
        design, which involves no randomness).
    progress : None, bool or callable, default=None
        Progress reporting: None or False for none, True for a text bar on
        stderr, or a callable ``progress(done, total)`` called with counts of
        pairs as the computation advances.

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

    *Balanced design and its sensitivity.* Let ``pi`` be a uniformly random
    order of ``0, ..., n-1``, drawn from ``random_state`` alone (never from the
    data), and pair position ``q`` with positions ``q + 1, ..., q + m``
    (mod n). The estimate is ``K_B = 1/(n m) * sum_q sum_{k=1..m} u u^T`` for
    the rows ``pi[q]`` and ``pi[q + k]``. Because ``m <= (n - 1)/2``, two
    offsets satisfy ``k + k' <= 2m < n``, so no pair occurs twice, no row is
    paired with itself, and every position takes part in exactly ``2m`` pairs
    (``m`` as the first member, ``m`` as the second). Fix ``pi``: replacing
    one row changes exactly those ``2m`` terms, each by
    ``(1/(n m)) (u u^T - w w^T)`` whose Frobenius norm is at most
    ``(1/(n m)) (1 + 1) = 2/(n m)`` (a tie's zero term included). The change
    is therefore at most ``2m * 2/(n m) = 4/n``, the same bound as for the
    exact design, so the Gaussian calibration of :func:`dppca.dp_pc_dir`
    applies unchanged. Since ``pi`` does not depend on the data, the bound
    holds for every ``pi``: the release is (eps, delta)-DP conditionally on
    ``pi`` (so even someone who learned ``pi`` gains nothing), and hence also
    as a mixture over ``pi``. ``pi`` itself is never released.

    *Variance.* ``K_B`` is unbiased for the population matrix, like ``K``.
    For a U-statistic with kernel variance ``zeta_2`` and first-order
    variance ``zeta_1``, ``Var(K) ~ 4 zeta_1 / n`` and the balanced design adds
    about ``(zeta_2 - 2 zeta_1) / (n m)``: relative to the sampling error of
    ``K`` the excess shrinks like ``1/m`` and does not grow with n, while the
    cost is ``O(n m p^2)`` instead of ``O(n^2 p)``. ``m = 20`` keeps the excess
    to a few per cent of the sampling variance for typical data; see
    ``benchmarks/bench_balanced.py`` for measured errors against the exact
    matrix.

    The exact computation costs O(n^2 p) arithmetic in matrix products; see
    the module documentation for how it stays accurate on near-duplicate rows
    and on data far from the origin. The balanced design uses explicit
    differences only.

    Examples
    --------
    >>> import numpy as np
    >>> from dppca import spherical_kendall
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> K = spherical_kendall(X)
    >>> K.shape, round(float(np.trace(K)), 12)
    ((3, 3), 1.0)
    >>> KB = spherical_kendall(X, design="balanced", m=10, random_state=1)
    >>> round(float(np.trace(KB)), 12), bool(np.abs(KB - K).max() < 0.05)
    (1.0, True)
    """
    design = check_design(design)
    ties = check_ties(ties)
    if block_size is not None:
        block_size = check_positive_int(block_size, "block_size")
    callback = resolve_progress(progress)
    order = None
    rng = check_random_state(random_state)  # validated for both designs, used by one
    data, _ = validate_kendall_input(X, design)
    if design == "balanced":
        m = check_design_m(m, data.shape[0])
        order = random_pairing(data.shape[0], rng)
    return kendall_matrix(
        data, ties=ties, block_size=block_size, design=design, m=m, order=order,
        progress=callback,
    )  # fmt: skip
