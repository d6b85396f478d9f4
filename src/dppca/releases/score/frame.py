"""The frame of a score plot: the rectangle its grid covers.

The frame is public (given by the caller), the exact range of the scores over
public bounds (free), or private: three exponential-mechanism choices on
public ladders (:func:`private_frame`), eps-DP, with a data-free bound on the
chance that it misses most rows (:func:`frame_failure_bound`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ...privacy.mechanisms import em_quantile, random_pairing
from ..forecast import em_failure_bound

__all__ = ["bounds_frame", "frame_eps_needed", "frame_failure_bound", "private_frame"]

# The private frame: a scale bin among the powers of sqrt(2) in the _SCALE_OCTAVES
# octaves below twice score_range, then centres on a ladder with spacing
# unit / _CENTRE_STEPS near zero growing by _CENTRE_BETA, where the unit is
# _UNIT_PER_SCALE times the scale bin's geometric middle (the median of
# |N(0, s^2)| is 0.674 s, so the unit is one standard deviation for one axis and
# up to 1.7 for the larger of two equal ones), and half widths of _FRAME_SDS units.
# The scale gets _SCALE_SHARE of the frame's eps, the centres the rest equally.
_SCALE_OCTAVES = 40
_CENTRE_BETA = 1.2
_CENTRE_STEPS = 4.0
_UNIT_PER_SCALE = 1.4826
_FRAME_SDS = 3.0
_SCALE_SHARE = 0.4
# A choice fails when it lands this share of the values away from the median.
_MARGIN = 0.4


def _scale_ladder(bound: float) -> NDArray[np.float64]:
    """Public bin edges for the scale of the scores: powers of sqrt(2) up to ``2 bound``."""
    top = math.ceil(math.log2(2.0 * bound))
    return np.exp2(np.arange(2 * (top - _SCALE_OCTAVES), 2 * top + 1) / 2.0)


def _centre_ladder(unit: float, bound: float) -> NDArray[np.float64]:
    """Public bin edges for a centre: ``+-unit (beta**j - 1) / (beta - 1)`` within ``bound``.

    Bins ``unit`` wide near zero, growing by a fraction ``beta - 1`` of their
    distance from it, so there are ``O(log(bound / unit))`` of them.
    """
    top = math.ceil(math.log1p((_CENTRE_BETA - 1.0) * bound / unit) / math.log(_CENTRE_BETA))
    j = np.arange(1, top + 1, dtype=np.float64)
    half = unit * np.expm1(j * math.log(_CENTRE_BETA)) / (_CENTRE_BETA - 1.0)
    return np.concatenate([-half[::-1], [0.0], half])


def _frame_parts(eps: float) -> tuple[float, float]:
    """(eps of the scale choice, eps of each centre choice): ``0.4 eps`` and ``0.3 eps``."""
    return _SCALE_SHARE * eps, 0.5 * (1.0 - _SCALE_SHARE) * eps


def frame_failure_bound(n: int, eps: float, bound: float) -> float:
    """Public bound on the chance that a private frame misses most of the data.

    The frame makes three exponential-mechanism choices of a bin holding a
    median (:func:`dppca.privacy.mechanisms.em_quantile`): the scale, then the two
    centres. The bin holding the median has utility 0, and a bin with no
    value between it and the median scores ``-t`` for ``t`` ranks, so a
    choice lands ``0.4`` of the values away from the median (outside the 10 %
    to 90 % quantiles) with probability at most :func:`dppca.releases.forecast.
    em_failure_bound` with margin 0.4: ``G exp(-eps 0.4 N / 2)`` for ``G``
    bins and ``N`` values. The scale ranks ``floor(n / 2)`` pair differences
    among the bins of the scale ladder; each centre ranks ``n`` scores among at
    most the bins of a centre ladder with the smallest possible unit. Depends
    on n, eps and ``bound`` only, never on the data.
    """
    eps_scale, eps_centre = _frame_parts(eps)
    scale_bins = 2 * _SCALE_OCTAVES
    smallest_unit = float(_scale_ladder(bound)[0]) * _UNIT_PER_SCALE / _CENTRE_STEPS
    centre_bins = _centre_ladder(smallest_unit, bound).size - 1
    fail = em_failure_bound(scale_bins, n // 2, eps_scale, _MARGIN)
    fail += 2.0 * em_failure_bound(centre_bins, n, eps_centre, _MARGIN)
    return min(1.0, fail)


def frame_eps_needed(n: int, bound: float, target: float = 0.01) -> float:
    """Smallest frame epsilon whose :func:`frame_failure_bound` is at most ``target``."""
    lo, hi = 1e-6, 1e6
    if frame_failure_bound(n, hi, bound) > target:
        return math.inf
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        if frame_failure_bound(n, mid, bound) > target:
            lo = mid
        else:
            hi = mid
    return hi


def private_frame(
    scores: NDArray[np.float64],
    *,
    eps: float,
    bound: float,
    inflate: float,
    order: NDArray[np.int64],
    rng: np.random.Generator,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Frame from three exponential-mechanism choices on public ladders (internal).

    1. Scale: the factor-sqrt(2) bin (:func:`_scale_ladder`) holding the
       median of ``max(|dx|, |dy|) / sqrt(2)`` over disjoint pairs of rows
       (``order``, a random pairing), with ``0.4 eps``. Pair differences are
       mean-free, so no centre is needed first. ``u = 1.4826`` times the bin's
       geometric middle estimates a standard deviation (of the wider axis, or
       more).
    2. Centres: the bin of :func:`_centre_ladder` holding the median of each
       axis, with ``0.3 eps`` each; the ladder's unit is ``u / 4``.
    3. Limits per axis: the bin's middle +- ``(1 + inflate) * 3 u`` plus half
       the bin's width, which covers the ladder's resolution.

    Notes
    -----
    Privacy: each choice is :func:`dppca.privacy.mechanisms.em_quantile`, eps-DP for
    its share: replacing a row changes one pair difference and one score per
    axis, so every count moves by at most one. The ladders depend on
    ``bound`` and the released scale only, and the pairing on n and the
    generator, so the frame is eps-DP by basic composition. The
    exponential mechanism's error grows with the logarithm of the number of
    candidates, which keeps the frame usable at small ``n eps``
    (:func:`frame_failure_bound`).
    """
    eps_scale, eps_centre = _frame_parts(eps)
    m = scores.shape[0] // 2
    first, second = order[0 : 2 * m : 2], order[1 : 2 * m : 2]
    with np.errstate(over="ignore", invalid="ignore"):
        diff = np.max(np.abs(scores[first] - scores[second]), axis=1) / math.sqrt(2.0)
    lo, hi = em_quantile(diff, _scale_ladder(bound), q=0.5, eps=eps_scale, rng=rng)
    unit = _UNIT_PER_SCALE * math.sqrt(lo * hi)
    ladder = _centre_ladder(unit / _CENTRE_STEPS, bound)
    limits = []
    for a in (0, 1):
        lo, hi = em_quantile(scores[:, a], ladder, q=0.5, eps=eps_centre, rng=rng)
        half = (1.0 + inflate) * _FRAME_SDS * unit + 0.5 * (hi - lo)
        centre = 0.5 * (lo + hi)
        limits.append((centre - half, centre + half))
    return limits[0], limits[1]


def bounds_frame(
    matrix: NDArray[np.float64], box: tuple[NDArray[np.float64], NDArray[np.float64]]
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The exact range of the scores ``V' x`` over the public box (free, internal).

    For direction ``v`` the score ranges over ``[sum min(v_j l_j, v_j u_j),
    sum max(v_j l_j, v_j u_j)]``; a function of public bounds and the
    (private or public) directions only.
    """
    limits = []
    for a in (0, 1):
        v = matrix[:, a]
        ends = np.stack([v * box[0], v * box[1]])
        lo, hi = float(ends.min(axis=0).sum()), float(ends.max(axis=0).sum())
        if not hi > lo:
            hi = lo + 1.0
        limits.append((lo, hi))
    return limits[0], limits[1]


def choose_frame(
    scores: NDArray[np.float64],
    matrix: NDArray[np.float64],
    *,
    public_frame: tuple[tuple[float, float], tuple[float, float]] | None,
    box: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
    eps: float,
    bound: float,
    inflate: float,
    rng: np.random.Generator,
) -> tuple[tuple[tuple[float, float], tuple[float, float]], str]:
    """The frame of a score release and where it came from (internal).

    A public ``frame`` is used as given (``"public"``); else public bounds give
    the exact range of the scores over them (``"bounds"``, free); else
    :func:`private_frame` spends ``eps`` on it (``"private"``), drawing a
    random pairing of the rows and then its three choices from ``rng``.
    """
    if public_frame is not None:
        return public_frame, "public"
    if box is not None:
        return bounds_frame(matrix, box), "bounds"
    order = random_pairing(scores.shape[0], rng)
    limits = private_frame(scores, eps=eps, bound=bound, inflate=inflate, order=order, rng=rng)
    return limits, "private"
