"""Pre-noise pair statistics of the private scree (deterministic, no randomness).

The scree's main release is the vector of second moments along k directions and
the total second moment, both computed from pairwise differences
``z = (x_a - x_b) / sqrt(2)`` whose norm is clipped at ``R``. For unclipped
pairs, ``E[(v' z)^2] = v' Sigma v`` whatever the mean, so nothing is centred;
averaged over all pairs the unclipped statistic is exactly the sample variance
along ``v`` and the sample total variance.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..core.tables import complete_rows
from .moments import moment_rows

__all__ = [
    "ALL_PAIRS_WORK",
    "all_pairs_pay",
    "clipped_moments_all_pairs",
    "clipped_moments_disjoint",
    "clipped_moments_pairings",
    "moment_sensitivity",
    "paired_differences",
]

#: Largest ``n (n - 1) / 2 * (p + 10)`` (pairs times the columns each one reads,
#: plus its fixed work) for which the scree averages over all pairs by default:
#: about 2 CPU-seconds of the compiled kernel (benchmarks/bench_speed.py
#: measures 0.35 ns per unit at p = 50), 5-10 times that in numpy.
ALL_PAIRS_WORK = 6e9


def all_pairs_pay(n: int, p: int) -> bool:
    """Whether the default scree pairing is all pairs (else random matchings).

    Set by the cost of the all-pairs moments, ``n (n - 1) / 2`` pairs of
    ``p + 10`` units of work each, against :data:`ALL_PAIRS_WORK`: all pairs
    up to n = 28000 at p = 5, 14100 at p = 50, 7500 at p = 200 and 3400 at
    p = 1000. Beyond, 16 random perfect matchings cost O(n (p + k)) and have
    the same sensitivity. A function of the public n and p only (not of k,
    nor of which backend is installed), so the same seed gives the same
    release everywhere.

    Examples
    --------
    >>> all_pairs_pay(4000, 50), all_pairs_pay(4000, 1000)
    (True, False)
    """
    return n * (n - 1) / 2.0 * (p + 10) <= ALL_PAIRS_WORK


def moment_sensitivity(n: int, clip: float, *, all_pairs: bool, norm: str) -> float:
    """Sensitivity of the ``(k + 1)``-vector of clipped pair moments.

    Parameters
    ----------
    n : int
        Number of rows (public).
    clip : float
        The clip level ``R^2`` of the squared pair norms.
    all_pairs : bool
        Averaged over all ``n (n - 1) / 2`` pairs, or over ``floor(n / 2)``
        disjoint pairs.
    norm : {"l1", "l2", "knorm"}
        ``"knorm"`` is the norm ``||.||_P`` of the sensitivity polytope
        (:mod:`dppca.privacy.knorm`), in which one pair moves by at most ``R^2``.

    Notes
    -----
    Each pair gives ``a = (c (v_1' z)^2, ..., c (v_k' z)^2, c ||z||^2)`` with
    ``c = min(1, R^2 / ||z||^2)``. For orthonormal ``v_l`` the entries are
    non-negative, the first k add up to at most the last, and the last is at
    most ``R^2``: ``a`` lies in the polytope with vertices ``0``,
    ``(0, R^2)`` and ``(R^2 e_l, R^2)``. A squared distance (and an L1
    distance) is convex, so its largest value over two points of the polytope
    is taken at two vertices: ``2 R^4`` for the squared L2 distance and
    ``2 R^2`` for the L1 distance. Replacing one row changes the ``n - 1`` pairs
    that hold it, each of weight ``2 / (n (n - 1))`` in the all-pairs average:
    ``2 sqrt(2) R^2 / n`` (L2) and ``4 R^2 / n`` (L1). With disjoint pairs a row
    is in one pair of weight ``1 / m``, ``m = floor(n / 2)``: ``sqrt(2) R^2 / m``
    and ``2 R^2 / m``. Averaging ``r`` independent pairings (each a perfect
    matching of the rows) keeps this: the row is in ``r`` pairs of weight
    ``1 / (r m)``. In ``||.||_P`` two points of the polytope are at most
    ``R^2`` apart (half the L1 distance of their barycentric coordinates), so
    the sensitivity is ``2 R^2 / n`` over all pairs and ``R^2 / m`` over
    disjoint ones: half the L1 figure.

    Examples
    --------
    >>> moment_sensitivity(100, 1.0, all_pairs=True, norm="l2")  # doctest: +ELLIPSIS
    0.0282842712...
    """
    factor = {"l2": math.sqrt(2.0), "l1": 2.0, "knorm": 1.0}[norm]
    if all_pairs:
        return factor * clip * 2.0 / n
    return factor * clip / (n // 2)


def clipped_moments_all_pairs(
    data: NDArray[np.float64],
    vectors: NDArray[np.float64],
    clip: float,
    shift: NDArray[np.float64] | None = None,
    *,
    n_jobs: int | None = None,
) -> tuple[NDArray[np.float64], float]:
    """Average over all pairs of the clipped moments along ``vectors`` and in total.

    Returns ``(w, s)``: ``w[l]`` is the mean over pairs ``a < b`` of
    ``c_ab (v_l' z_ab)^2`` and ``s`` the mean of ``min(||z_ab||^2, clip)``, with
    ``z_ab = (x_a - x_b) / sqrt(2)`` and ``c_ab = min(1, clip / ||z_ab||^2)``.

    Computed by :func:`dppca.kernels.moments.moment_rows` in O(n^2 (p + k)) time and
    O(threads n) memory: the squared norms from explicit differences of the
    rows, the projections from differences of ``(x - shift) V`` (``shift`` is
    a public vector such as the centre of public bounds; the statistic
    depends on differences only, so it changes the exact value not at all),
    row by row in threads (``n_jobs``, every core by default). The result is
    the same, bit for bit, for every ``n_jobs`` and with or without numba.

    Notes
    -----
    Each pair's contribution is computed from its own two rows only (no
    data-dependent shift or scaling, which would let one row change the
    rounding of every pair) and is put inside the polytope of
    :func:`moment_sensitivity` whatever the rounding: the squared norm used is
    at least the sum of the squared projections, overflow counts as an
    infinite norm (contribution ``(0, clip)``), and NaN as infinity. So the
    sensitivity bound holds for the computed statistic, not only for the exact
    one. Under ``missing="zero"`` a coordinate missing in either row of a pair
    is 0 in its difference: the term is formed from the present coordinates
    and lies in the same polytope (the zero vector, one of its vertices, when
    none is left); the complete rows' pairs take the kernel above, the
    others an explicit pass, and all are divided by the ``n (n - 1) / 2``
    pairs of all n rows. The statistic is in the data's units (the clip level is), so it is
    not rescaled to be scale invariant as the Kendall matrix is.
    """
    x = np.asarray(data, dtype=np.float64)
    n = x.shape[0]
    complete = complete_rows(x)
    full = x
    if complete is not None:  # missing="zero": the pairs with a gap are added below
        x = np.ascontiguousarray(x[complete])
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if shift is not None:
            x = x - shift
        y = x @ vectors
    rows = moment_rows(x, y, clip, n_jobs=n_jobs)
    count = n * (n - 1) / 2.0
    totals = rows.sum(axis=0)
    if complete is not None:
        totals = totals + _incomplete_pair_sums(full, complete, vectors, clip)
    return totals[:-1] / count, float(totals[-1]) / count


def _incomplete_pair_sums(
    data: NDArray[np.float64],
    complete: NDArray[np.bool_],
    vectors: NDArray[np.float64],
    clip: float,
) -> NDArray[np.float64]:
    """Summed moments of the pairs holding a missing cell, from their present coordinates.

    Each incomplete row ``a`` against every complete row and the incomplete
    rows after it (each pair once); a coordinate missing in either row is 0
    in ``z`` (:func:`clipped_moments_disjoint` does the polytope-safe rest).
    """
    whole = np.flatnonzero(complete)
    gaps = np.flatnonzero(~complete)
    total = np.zeros(vectors.shape[1] + 1)
    for t, a in enumerate(gaps):
        partners = np.concatenate([whole, gaps[t + 1 :]])
        if partners.size == 0:
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            z = (data[a] - data[partners]) / math.sqrt(2.0)
        w, s = clipped_moments_disjoint(z, vectors, clip)
        total += np.append(w, s) * partners.size
    return total


def clipped_moments_pairings(
    data: NDArray[np.float64],
    vectors: NDArray[np.float64],
    clip: float,
    orders: list[NDArray[np.int64]],
) -> tuple[NDArray[np.float64], float]:
    """The moments averaged over several pairings (consecutive entries of each order)."""
    parts = [clipped_moments_disjoint(paired_differences(data, o), vectors, clip) for o in orders]
    w = np.mean([part[0] for part in parts], axis=0)
    return w, float(np.mean([part[1] for part in parts]))


def paired_differences(data: NDArray[np.float64], order: NDArray[np.int64]) -> NDArray:
    """``(x_a - x_b) / sqrt(2)`` for consecutive entries ``a, b`` of ``order``."""
    m = data.shape[0] // 2
    first, second = order[0 : 2 * m : 2], order[1 : 2 * m : 2]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow must not announce a row
        return (data[first] - data[second]) / math.sqrt(2.0)


def clipped_moments_disjoint(
    z: NDArray[np.float64], vectors: NDArray[np.float64], clip: float
) -> tuple[NDArray[np.float64], float]:
    """The same moments averaged over given disjoint pair differences ``z`` (m x p).

    Each pair's contribution is put inside the polytope of
    :func:`moment_sensitivity` as in :func:`clipped_moments_all_pairs`; a
    coordinate missing in either row (NaN, under ``missing="zero"``; finite
    rows give inf, never NaN) is 0 in the difference, so the pair's term is
    formed from its present coordinates (the zero vector when none is left)
    and the pair still counts among the m.
    """
    z = np.where(np.isnan(z), 0.0, z)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        squares = _nan_to_inf((z @ vectors) ** 2)
        sq = _nan_to_inf(np.einsum("ij,ij->i", z, z))
        norm = np.maximum(sq, squares.sum(axis=1))
        scale = np.where(norm > clip, clip / np.where(norm > clip, norm, 1.0), 1.0)
        contrib = np.where(scale[:, None] > 0, scale[:, None] * squares, 0.0)
        contrib = np.nan_to_num(contrib, nan=0.0, posinf=0.0)
    return contrib.mean(axis=0), float(np.minimum(norm, clip).mean())


def _nan_to_inf(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """NaN (from inf - inf) as +inf, keeping inf infinite.

    ``numpy.nan_to_num`` would also turn inf into the largest finite float, so
    an overflowed pair would get a tiny positive clip factor and, times an
    equally clamped projection, a contribution of the whole clip level to every
    direction: outside the polytope of :func:`moment_sensitivity`.
    """
    return np.where(np.isnan(a), np.inf, a)
