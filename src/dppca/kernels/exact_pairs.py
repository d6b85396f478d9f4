"""The exact design in memory: the Laplacian sum over all pairs, by row blocks of tiles.

The sum over pairs of ``u_ij u_ij^T`` is ``Y^T (D - W) Y`` for a translate
``Y`` of the data, accumulated tile by tile with the accuracy devices
described in :mod:`dppca.kernels.kendall` (a shift by one value per column, and the
explicit route for close pairs). Deterministic: no privacy, no randomness.
Used by :mod:`dppca.kernels.kendall`.
"""

from __future__ import annotations

import functools
import itertools
import os
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..core.progress import ProgressCallback
from . import tiles
from .pairsums import HUGE_SQ, PairSums, add_exact_pairs, pairs_of_tile, power_of_two_scale
from .threads import _runner

__all__ = ["default_block"]

_L2_FALLBACK = 1 << 20


def _column_shift(data: NDArray[np.float64]) -> NDArray[np.float64]:
    """One middle value of each column (an order statistic, so a value of the data).

    For large n, the middle of an evenly spaced sample of about 2048 rows (fixed
    positions, chosen from n alone): any value of the column near its centre
    serves the accuracy device, and a full selection would cost more than 10%
    of the kernel at p = 1000. Selected 64 columns at a time, so the copy that
    ``np.partition`` makes stays small.
    """
    sample = data[:: max(1, data.shape[0] // 2048)]
    mid = sample.shape[0] // 2
    step = 64
    return np.concatenate(
        [
            np.partition(sample[:, c : c + step], mid, axis=0)[mid]
            for c in range(0, data.shape[1], step)
        ]
    )


def _l2_bytes() -> int:
    """Size of one core's L2 cache (Linux sysfs), else 1 MiB."""
    try:
        base = "/sys/devices/system/cpu/cpu0/cache"
        for index in sorted(os.listdir(base)):
            with open(f"{base}/{index}/level") as f:
                if f.read().strip() != "2":
                    continue
            with open(f"{base}/{index}/size") as f:
                text = f.read().strip().upper()
            scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
            return int(text.rstrip("KM")) * scale
    except (OSError, ValueError):
        pass
    return _L2_FALLBACK


@functools.cache
def default_block(p: int) -> int:
    """Rows per tile of the exact design, chosen from ``p`` and the L2 cache.

    The b x b tile of weights is written once and read twice (elementwise pass,
    then the second product), so it should stay in one core's L2 cache: b is the
    largest power of two with ``8 b^2`` at most half of it (256 for 1 MiB), and
    at least 512 for p > 256, where the products dominate and larger tiles
    amortise the per-tile overhead. Depends on p and the machine only.
    """
    half = _l2_bytes() // 2
    b = 64
    while 8 * (2 * b) ** 2 <= half and b < 4096:
        b *= 2
    return max(b, 512) if p > 256 else b


@dataclass
class _Shifted:
    """The data shifted by one value per column, with a column of ones appended.

    ``yaug[:, :p]`` is ``Y``, the shifted data times a power of two
    (:func:`dppca.kernels.pairsums.power_of_two_scale`: exact, and the matrix is
    scale invariant) that brings its typical rows near 1, so that data of
    any magnitude keeps its squared distances and weights normal floats
    (rows whose squared norm still exceeds ``HUGE_SQ`` are set to 0: such
    rows take the explicit route with every partner). ``yaug[:, p]`` is 1 so
    that one product gives both ``W Y`` and the row sums of ``W``.
    """

    data: NDArray[np.float64]
    yaug: NDArray[np.float64]
    sq: NDArray[np.float64]
    huge: NDArray[np.bool_]

    @classmethod
    def of(cls, data: NDArray[np.float64]) -> _Shifted:
        n, p = data.shape
        shift = _column_shift(data)
        yaug = np.empty((n, p + 1))
        yaug[:, p] = 1.0
        with np.errstate(all="ignore"):
            np.subtract(data, shift, out=yaug[:, :p])
            yaug[:, :p] *= power_of_two_scale(yaug[:, :p])  # exact: exponents only
            sq = np.einsum("ij,ij->i", yaug[:, :p], yaug[:, :p])
        huge = ~(sq <= HUGE_SQ)
        if huge.any():
            yaug[huge, :p] = 0.0
            sq[huge] = 0.0
        return cls(data, yaug, sq, huge)


def _exact_row(
    s: _Shifted,
    i0: int,
    block: int,
    ties: str,
    weights_fn: tiles.WeightsFn,
    z_out: NDArray[np.float64],
) -> tuple[NDArray[np.float64], PairSums]:
    """All tiles (I, J >= I) of row block I, summed in order of J.

    Writes ``[Z_I, r_I] = sum_J W_IJ [Y_J, 1]`` (the block's rows of ``W Y``
    over partners j > i, and the weights' row sums) into ``z_out[i0:i1]``, rows
    no other task touches. Returns the weights' column sums over rows ``i0:``
    (the other half of each pair's degree) and the exact route's sums. No
    p x p product is formed per tile.
    """
    with np.errstate(all="ignore"):  # per thread: non-finite values are handled
        n, p = s.data.shape
        i1 = min(i0 + block, n)
        y = s.yaug[:, :p]
        y_i, sq_i = y[i0:i1], s.sq[i0:i1]
        z = np.zeros((i1 - i0, p + 1))
        colsum = np.zeros(n - i0)
        sums = PairSums(p)
        huge_i = bool(s.huge[i0:i1].any())
        buffers: dict[int, NDArray[np.float64]] = {}  # one tile of weights, reused
        for j0 in range(i0, n, block):
            j1 = min(j0 + block, n)
            diagonal = j0 == i0
            shape = (i1 - i0, j1 - j0)
            if huge_i or s.huge[j0:j1].any():
                r, c = pairs_of_tile(shape, diagonal)
                add_exact_pairs(sums, s.data[i0:i1], s.data[j0:j1], r, c, (i0, j0), ties)
                continue
            weights = buffers.get(j1 - j0)
            if weights is None:
                weights = buffers[j1 - j0] = np.empty(shape)
            np.matmul(y_i, y[j0:j1].T, out=weights)
            n_close = weights_fn(weights, sq_i, s.sq[j0:j1], diagonal, colsum[j0 - i0 : j1 - i0])
            z += weights @ s.yaug[j0:j1]
            if n_close:
                r, c = pairs_of_tile(shape, diagonal, weights)
                add_exact_pairs(sums, s.data[i0:i1], s.data[j0:j1], r, c, (i0, j0), ties)
        z_out[i0:i1] = z
        return colsum, sums


def _pair_sum(
    data: NDArray[np.float64],
    *,
    ties: str,
    block_size: int | None,
    progress: ProgressCallback | None = None,
    n_jobs: int | None = None,
) -> PairSums:
    """Sum of u_ij u_ij^T over all pairs i < j, by row blocks of tiles (exact design).

    With ``Z = sum_{j>i} w_ij y_j`` per row and degrees ``d_i = sum_j w_ij``, the
    Laplacian ``Y^T (D - W) Y`` is ``A + A^T`` with ``A = Y^T (D Y / 2 - Z)``:
    the tiles only accumulate ``Z`` and ``d`` (O(n p)), and the p x p product is
    formed once, after all tiles. Row blocks are paired, first with last (so
    that every task has about the same number of tiles), run in a thread pool
    and are merged in a fixed order, so the result does not depend on
    ``n_jobs``.
    """
    n, p = data.shape
    block = default_block(p) if block_size is None else block_size
    s = _Shifted.of(data)
    starts = list(range(0, n, block))
    total = PairSums(p)
    colsums = np.zeros(n)
    z = np.empty((n, p + 1))  # [W Y, row sums of W], written by the row tasks
    done, n_pairs = 0, n * (n - 1) // 2

    def half_laplacian(i0: int) -> NDArray[np.float64]:
        i1 = min(i0 + block, n)
        y_i = s.yaug[i0:i1, :p]
        degree = z[i0:i1, p] + colsums[i0:i1]
        with np.errstate(all="ignore"):
            return y_i.T @ (0.5 * degree[:, None] * y_i - z[i0:i1, :p])

    half_count = len(starts) // 2
    groups: list[tuple[int, ...]] = [(starts[t], starts[-1 - t]) for t in range(half_count)]
    if len(starts) % 2:
        groups.append((starts[half_count],))
    with _runner(n_jobs, len(groups)) as run:
        weights_fn = tiles.weights_fn(n_pairs)  # resolved (and compiled) once, here
        results = run(
            lambda group: [_exact_row(s, i0, block, ties, weights_fn, z) for i0 in group], groups
        )
        blocks = [i0 for group in groups for i0 in group]
        rows = itertools.chain.from_iterable(results)  # row blocks in the order of `blocks`
        for i0, (colsum, sums) in zip(blocks, rows, strict=True):
            i1 = min(i0 + block, n)
            colsums[i0:] += colsum
            total.merge(sums)
            if progress is not None:  # one call per tile, from this thread
                for j0 in range(i0, n, block):
                    j1 = min(j0 + block, n)
                    b = i1 - i0
                    done += b * (b - 1) // 2 if j0 == i0 else b * (j1 - j0)
                    progress(done, n_pairs)
        half = np.zeros((p, p))
        for part in run(half_laplacian, starts):
            half += part
    total.matrix += half + half.T
    return total
