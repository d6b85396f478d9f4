"""Sums of u u^T over sets of pairs, shared by the in-memory and Dask kernels.

Both backends of :mod:`dppca.kernels.kendall` visit the pairs of rows in pieces (tiles
of row blocks for the exact design, chunks of consecutive positions for the
balanced design) and add up the outer products of the normalised differences.
The pieces they share live here, so that neither backend imports the other's
private helpers: the partial sum :class:`PairSums` and its merge, the tie rule
(:func:`add_unit_outer`, the only place that decides what a tie is), the
explicit route for close pairs, one whole tile of the exact design
(:func:`tile_sums`, a Dask task; the in-memory loop hoists its p x p products
instead) and one chunk of the balanced design (:func:`balanced_chunk`).

Deterministic: no randomness, no privacy. What the sums are and why the
shifted Gram route is accurate is explained in :mod:`dppca.kernels.kendall`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..core.lazy import scipy_linalg
from . import tiles

__all__ = [
    "EXACT_CHUNK",
    "HUGE_SQ",
    "PairSums",
    "add_exact_pairs",
    "add_incomplete_pairs",
    "add_unit_outer",
    "balanced_chunk",
    "balanced_chunks",
    "exact_tiles",
    "fill_missing",
    "gram",
    "pairs_of_tile",
    "power_of_two_scale",
    "subtract_rows",
    "tile_sums",
]

# Rows whose squared norm (after the shift and the power-of-two scaling) exceeds
# this go the explicit route with every partner: their Gram products could
# overflow. Below it, |y_a|^2 + |y_b|^2 and the squared distances from the Gram
# tile stay finite.
HUGE_SQ = 5e299
#: Pairs per batch of explicit differences.
EXACT_CHUNK = 65536


@dataclass
class PairSums:
    """A partial sum of u u^T over some pairs, with the ties met on the way.

    Every way of visiting pairs (row blocks and tiles of the exact design,
    chunks of the balanced design, in memory, in threads or as Dask tasks)
    produces these and merges them in a fixed order, so the arithmetic is
    written once and the result does not depend on which task finishes first.
    """

    p: int
    matrix: NDArray[np.float64] = field(init=False)
    n_ties: int = 0
    example: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.matrix = np.zeros((self.p, self.p))

    def merge(self, other: PairSums) -> None:
        """Add ``other`` into this sum (the first tie example is kept)."""
        self.matrix += other.matrix
        self.n_ties += other.n_ties
        if self.example is None:
            self.example = other.example


def gram(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """``a.T @ a`` with half the work: BLAS syrk on the Fortran view ``a.T`` (no copy)."""
    upper = scipy_linalg.blas.dsyrk(1.0, a.T, trans=0, lower=0)
    return np.triu(upper) + np.triu(upper, 1).T


def add_unit_outer(
    sums: PairSums,
    diff: NDArray[np.float64],
    ties: str,
    locate: Callable[[int], tuple[int, int]],
) -> None:
    """Add u u^T for the rows of ``diff`` (explicit differences, overwritten).

    The tie rule lives here and nowhere else: a difference that cannot be
    normalised, because it is zero (or not finite, which
    :func:`subtract_rows` keeps finite data from giving), is a tie. Each
    difference is first divided by the power of two nearest above its
    largest absolute entry (exact: only the exponent changes), so its
    squared norm lies in [1/4, p] and never overflows or underflows; then
    ``u = d / ||d||``. In the range where ``||d||^2`` is a normal float the
    scaling changes no bit of ``u`` (both the norm and the quotient scale
    exactly), and outside it the pair is still normalised: the rule and the
    result have no unit, so multiplying the data by any factor (1e-160,
    1e155) changes nothing but the rounding of that product. ``locate(b)``
    maps the position of a tied row of ``diff`` to its pair of row indices.
    """
    top = np.max(np.abs(diff), axis=1) if diff.shape[1] else np.zeros(diff.shape[0])
    ok = (top > 0) & np.isfinite(top)  # NaN (from inf - inf) is not finite
    if not ok.all():
        bad = np.flatnonzero(~ok)
        sums.n_ties += bad.size
        if sums.example is None:
            sums.example = locate(int(bad[0]))
        if ties == "error":
            return  # the error is raised once every pair has been counted
        diff, top = diff[ok], top[ok]
    exponent = np.frexp(top)[1]  # top = f 2^e with f in [1/2, 1)
    diff = np.ldexp(diff, -exponent[:, None])
    sq = np.einsum("ij,ij->i", diff, diff)
    diff /= np.sqrt(sq)[:, None]
    sums.matrix += gram(diff)


def fill_missing(diff: NDArray[np.float64]) -> NDArray[np.float64]:
    """Differences with their missing coordinates (NaN) set to 0, the all-zero rows dropped.

    The rule of ``missing="zero"`` for a pair term: a coordinate missing in
    either row adds nothing, and the term is formed from the coordinates
    present in both (a unit vector among them; the zero term when none
    differs). Finite rows never give a NaN difference (:func:`subtract_rows`),
    so NaN marks a missing cell. A pair left without a non-zero coordinate is
    a zero term, not a tie: only rows that coincide in every coordinate are.
    """
    filled = np.where(np.isnan(diff), 0.0, diff)
    return filled[np.any(filled != 0.0, axis=1)]


def add_incomplete_pairs(
    sums: PairSums, data: NDArray[np.float64], complete: NDArray[np.bool_], ties: str
) -> None:
    """Add the terms of every pair that holds a row with a missing cell (exact design).

    Row by row over the incomplete rows ``a``: the partners are every
    complete row and the incomplete rows after ``a``, so each such pair is
    visited once. Each term is formed from the coordinates present in both
    rows (:func:`fill_missing`). O(n p^2) per incomplete row, explicit
    differences only.
    """
    whole = np.flatnonzero(complete)
    gaps = np.flatnonzero(~complete)
    with np.errstate(all="ignore"):
        for t, a in enumerate(gaps):
            partners = np.concatenate([whole, gaps[t + 1 :]])
            for start in range(0, partners.size, EXACT_CHUNK):
                rows = partners[start : start + EXACT_CHUNK]
                diff = fill_missing(
                    subtract_rows(np.broadcast_to(data[a], (rows.size, data.shape[1])), data[rows])
                )
                if diff.shape[0]:
                    add_unit_outer(sums, diff, ties, _no_tie)  # no all-zero row is left


def _no_tie(b: int) -> tuple[int, int]:  # pragma: no cover - never called
    """``locate`` for terms of present coordinates: fill_missing leaves no tie."""
    raise AssertionError("a pair with a missing cell is never a tie")


def subtract_rows(
    a: NDArray[np.float64], b: NDArray[np.float64], out: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """``a - b`` row by row, with the rows that overflow computed as ``a / 2 - b / 2``.

    Halving both rows is exact for them (they hold a value beyond 2^1023 / 2)
    but for their subnormal entries, which cannot matter beside it; the
    direction of the difference, all that the Kendall matrix uses, is kept.
    So for finite data no difference is infinite and only exact duplicates
    are ties, at any magnitude.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.subtract(a, b, out=out)
        if not np.isfinite(out).all():
            bad = ~np.isfinite(out).all(axis=1)
            out[bad] = 0.5 * a[bad] - 0.5 * b[bad]
    return out


def power_of_two_scale(y: NDArray[np.float64]) -> float:
    """A power of two ``s`` that brings the median row of ``y`` to ``max|s y_a|`` in [1/2, 1).

    The median is over the finite, non-zero rows' largest absolute entries,
    so that a few far rows (which then take the explicit route, as their
    squared norms exceed ``HUGE_SQ``) do not push the others towards
    underflow. Multiplying by ``s`` is exact (only exponents change), so the
    Gram route of the Kendall kernel gives the same bits as without it for
    data of ordinary size, while data of any magnitude (1e-160, 1e155) is
    brought to where its squared distances and weights are normal floats.
    1 when no row is finite and non-zero.
    """
    with np.errstate(all="ignore"):
        top = np.max(np.abs(y), axis=1) if y.size else np.zeros(0)
    top = top[np.isfinite(top) & (top > 0)]
    if top.size == 0:
        return 1.0
    middle = float(np.partition(top, top.size // 2)[top.size // 2])
    return float(np.ldexp(1.0, -int(np.frexp(middle)[1])))


def add_exact_pairs(
    sums: PairSums,
    x_i: NDArray[np.float64],
    x_j: NDArray[np.float64],
    rows: NDArray[np.intp],
    cols: NDArray[np.intp],
    offsets: tuple[int, int],
    ties: str,
) -> None:
    """Add u u^T for the pairs (x_i[rows], x_j[cols]) from explicit differences."""
    for start in range(0, rows.size, EXACT_CHUNK):
        r = rows[start : start + EXACT_CHUNK]
        c = cols[start : start + EXACT_CHUNK]
        diff = subtract_rows(x_i[r], x_j[c])

        def locate(b: int, r: NDArray[np.intp] = r, c: NDArray[np.intp] = c) -> tuple[int, int]:
            return int(r[b]) + offsets[0], int(c[b]) + offsets[1]

        add_unit_outer(sums, diff, ties, locate)


def pairs_of_tile(
    shape: tuple[int, int], diagonal: bool, weights: NDArray[np.float64] | None = None
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Row and column positions of a tile's pairs (j > i on a diagonal tile).

    With ``weights``, only the close pairs: those whose weight is 0.
    """
    mask = np.ones(shape, dtype=bool) if weights is None else weights == 0.0
    if diagonal:
        mask &= np.triu(np.ones(shape, dtype=bool), k=1)
    rows, cols = np.nonzero(mask)
    return rows, cols


def tile_sums(
    x_i: NDArray[np.float64],
    x_j: NDArray[np.float64],
    shift: NDArray[np.float64],
    i0: int,
    j0: int,
    ties: str,
) -> PairSums:
    """Sum of u u^T over the pairs of one tile of the exact design (one Dask task).

    ``x_i`` and ``x_j`` are the row blocks starting at rows ``i0`` and ``j0``
    (``i0 <= j0``); on a diagonal tile (``i0 == j0``, the same block twice) only
    pairs with j > i count. ``shift`` is one data value per column, subtracted
    for accuracy only (the matrix is translation invariant), and the tile
    multiplied by :func:`power_of_two_scale` of its rows (it is scale
    invariant too), so data of any magnitude keeps its squared distances
    normal. The tile's
    Laplacian ``sum w_ij (y_i - y_j)(y_i - y_j)^T`` is assembled from matrix
    products; close pairs go through :func:`add_unit_outer` instead. The
    in-memory path (:func:`_exact_row`) does the same with the p x p products
    hoisted out of the tile loop.
    """
    with np.errstate(all="ignore"):  # non-finite values are handled, not reported
        sums = PairSums(x_i.shape[1])
        diagonal = i0 == j0
        y_i = x_i - shift
        y_j = y_i if diagonal else x_j - shift
        scale = power_of_two_scale(y_i if diagonal else np.vstack([y_i, y_j]))
        y_i = y_i * scale  # exact; the tile's sum is scale invariant
        y_j = y_i if diagonal else y_j * scale
        sq_i = np.einsum("ij,ij->i", y_i, y_i)
        sq_j = sq_i if diagonal else np.einsum("ij,ij->i", y_j, y_j)
        shape = (x_i.shape[0], x_j.shape[0])
        if not (sq_i.max() <= HUGE_SQ and sq_j.max() <= HUGE_SQ):
            r, c = pairs_of_tile(shape, diagonal)
            add_exact_pairs(sums, x_i, x_j, r, c, (i0, j0), ties)
            return sums
        weights = y_i @ y_j.T
        colsum = np.zeros(shape[1])
        n_close = tiles.weights_tile(weights, sq_i, sq_j, diagonal, colsum)
        rowsum = weights.sum(axis=1)
        cross = y_i.T @ (weights @ y_j)
        sums.matrix = (y_i.T * rowsum) @ y_i + (y_j.T * colsum) @ y_j - (cross + cross.T)
        if n_close:
            r, c = pairs_of_tile(shape, diagonal, weights)
            add_exact_pairs(sums, x_i, x_j, r, c, (i0, j0), ties)
        return sums


def exact_tiles(n: int, block: int) -> list[tuple[int, int, int, int, int]]:
    """Tiles ``(i0, i1, j0, j1, n_pairs)`` of row blocks I <= J, in the order they are summed."""
    tiles = []
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        for j0 in range(i0, n, block):
            j1 = min(j0 + block, n)
            size = (i1 - i0) * (i1 - i0 - 1) // 2 if i0 == j0 else (i1 - i0) * (j1 - j0)
            tiles.append((i0, i1, j0, j1, size))
    return tiles


def balanced_chunk(block: NDArray[np.float64], m: int, ties: str, start: int, n: int) -> PairSums:
    """Sum of u u^T over the pairs (a, a + k), k = 1..m, of consecutive permuted rows.

    ``block`` holds the permuted rows at positions ``start, ..., start + c + m - 1``
    (mod n): its first ``c`` rows are paired with their next ``m`` neighbours.
    Differences are explicit, so ties are decided by the same rule as in the
    exact design. A tie example is reported as a pair of *positions* in the
    permuted order. A pair in which either row has a missing cell (NaN, kept
    by ``missing="zero"``) adds the term of its present coordinates
    (:func:`fill_missing`) and is never a tie.
    """
    with np.errstate(all="ignore"):  # overflow -> inf -> a tie; handled, not reported
        c = block.shape[0] - m
        diff = np.empty((m, c, block.shape[1]))
        for k in range(1, m + 1):
            subtract_rows(block[:c], block[k : k + c], out=diff[k - 1])
        sums = PairSums(block.shape[1])

        flat = diff.reshape(m * c, -1)
        gaps = np.isnan(flat).any(axis=1)
        if gaps.any():  # missing="zero": those pairs' terms from their present coordinates
            sums.merge(_gap_sums(flat[gaps], ties))
            flat = flat[~gaps]
            index = np.flatnonzero(~gaps)
        else:
            index = None

        def locate(b: int) -> tuple[int, int]:
            k, a = divmod(b if index is None else int(index[b]), c)
            return (start + a) % n, (start + a + k + 1) % n

        add_unit_outer(sums, flat, ties, locate)
        return sums


def _gap_sums(diff: NDArray[np.float64], ties: str) -> PairSums:
    """The terms of pairs with a missing coordinate (never a tie; see :func:`fill_missing`)."""
    sums = PairSums(diff.shape[1])
    filled = fill_missing(diff)
    if filled.shape[0]:
        add_unit_outer(sums, filled, ties, _no_tie)
    return sums


def balanced_chunks(n: int, m: int, chunk: int) -> list[tuple[int, int]]:
    """Chunks ``(a, b)`` of positions whose pairs (a.., +1..+m) one task sums."""
    return [(a, min(a + chunk, n)) for a in range(0, n, chunk)]
