"""The frame of a score plot: the rectangle its grid covers.

The frame is public (given by the caller), the exact range of the scores over
public bounds (free), or private (:func:`private_frame`): per axis, a private
median of the scores as the centre and a private quantile of the distances
from it on a ladder with 2 % steps as the half width, four pure-DP parts in
all, with a data-free bound on the chance that it fails
(:func:`frame_failure_bound`).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ...privacy.cost import PrivacyCost, compose
from ...privacy.quantiles import capped_quantile_level, em_quantile, ladder_quantile
from ..forecast import em_failure_bound

if TYPE_CHECKING:
    from .settings import ScoreSettings

__all__ = [
    "bounds_frame",
    "frame_costs",
    "frame_eps_needed",
    "frame_failure_bound",
    "frame_level",
    "private_frame",
]

# The private frame, per axis. The centre: the exponential-mechanism bin holding the
# median on a public ladder with spacing _FLOOR near zero growing by _CENTRE_BETA
# (bins 20 % of their distance from zero wide). The half width: a noisy scan for the
# quantile ``level`` of |s - c| over the powers of _WIDTH_RATIO from _FLOOR to
# 4 score_range (2 % steps). ``level`` aims at _TARGET_LEVEL, capped for small
# n eps (capped_quantile_level with _LEVEL_MARGIN). _FLOOR is _FLOOR_OCTAVES
# octaves below twice score_range. Each axis gets half the frame's eps:
# _CENTRE_SHARE of it for the centre, the rest for the half width.
_FLOOR_OCTAVES = 40
_CENTRE_BETA = 1.2
_WIDTH_RATIO = 1.02
_TARGET_LEVEL = 0.995
_LEVEL_MARGIN = 2.0
_CENTRE_SHARE = 0.5
_TARGET_SHARE = 0.5
# A centre fails when it lands this share of the values away from the median.
_MARGIN = 0.4


def _floor(bound: float) -> float:
    """The ladders' finest resolution: ``_FLOOR_OCTAVES`` octaves below ``2 bound``."""
    return 2.0 * bound * 2.0**-_FLOOR_OCTAVES


def _centre_ladder(bound: float) -> NDArray[np.float64]:
    """Public bin edges for a centre: ``+-f (beta**j - 1) / (beta - 1)`` within ``bound``.

    Bins ``f`` (:func:`_floor`) wide near zero, growing by a fraction
    ``beta - 1`` of their distance from it, so there are ``O(log(bound / f))``.
    """
    unit = _floor(bound)
    top = math.ceil(math.log1p((_CENTRE_BETA - 1.0) * bound / unit) / math.log(_CENTRE_BETA))
    j = np.arange(1, top + 1, dtype=np.float64)
    half = unit * np.expm1(j * math.log(_CENTRE_BETA)) / (_CENTRE_BETA - 1.0)
    return np.concatenate([-half[::-1], [0.0], half])


def _width_ladder(bound: float) -> NDArray[np.float64]:
    """Public candidates for a half width: ``_WIDTH_RATIO`` steps from the floor to ``4 bound``."""
    floor = _floor(bound)
    steps = math.ceil(math.log(4.0 * bound / floor) / math.log(_WIDTH_RATIO))
    return floor * _WIDTH_RATIO ** np.arange(steps + 1, dtype=np.float64)


def _frame_parts(eps: float) -> tuple[float, float]:
    """(eps of each axis's centre, eps of each axis's half width)."""
    return 0.5 * _CENTRE_SHARE * eps, 0.5 * (1.0 - _CENTRE_SHARE) * eps


def frame_level(n: int, eps: float) -> float:
    """The public quantile level of the half-width scans, for frame eps ``eps``.

    ``_TARGET_LEVEL`` (0.995: the half width that holds 99.5 % of the rows)
    lowered by :func:`dppca.privacy.quantiles.capped_quantile_level` so that the
    scan's noisy target passes n with probability at most ``exp(-2)``; n and
    eps only.
    """
    eps1 = _TARGET_SHARE * _frame_parts(eps)[1]
    return capped_quantile_level(_TARGET_LEVEL, n, eps1, _LEVEL_MARGIN)


def _stretch(level: float) -> float:
    """``z(0.9975) / z((1 + level) / 2)``: a Gaussian's ``|s - c|`` at 0.995 over ``level``."""
    normal = NormalDist()
    return normal.inv_cdf(0.5 + 0.5 * _TARGET_LEVEL) / normal.inv_cdf(0.5 + 0.5 * level)


def frame_costs(eps: float, components: tuple[int, int]) -> PrivacyCost:
    """The four pure parts of a private frame with eps ``eps``, composed (for the plan)."""
    eps_centre, eps_width = _frame_parts(eps)
    parts = []
    for c in components:
        parts.append(
            PrivacyCost(
                eps_centre,
                0.0,
                "exponential mechanism",
                f"frame centre PC{c} (median)",
                kind="pure",
            )
        )
        parts.append(
            PrivacyCost(
                eps_width,
                0.0,
                f"noisy scan ({_WIDTH_RATIO:g}x ladder)",
                f"frame half width PC{c} (quantile of |score - centre|)",
                kind="pure",
            )
        )
    return compose(parts, released="private frame")


def frame_failure_bound(n: int, eps: float, bound: float) -> float:
    """Public bound on the chance that a private frame misses most rows (not that it is too wide).

    Per axis the frame makes one exponential-mechanism choice of a bin holding
    the median (:func:`dppca.privacy.quantiles.em_quantile`) and one noisy scan.
    The choice, among ``G`` bins of ``n`` scores, lands ``0.4`` of the values
    away from the median with probability at most ``G exp(-eps 0.4 n / 2)``
    (:func:`dppca.releases.forecast.em_failure_bound`); a centre within the 10 %
    to 90 % quantiles keeps the frame within the data's own spread. The scan
    aims at ``level n`` plus noise (:func:`frame_level`); it stops where at most
    ``n / 2`` distances lie below only if one of its bins' fresh ``Exp(rate
    eps2)`` draws exceeds ``(level - 1/2) n``: at most ``B exp(-eps2 (level -
    1/2) n)`` for its ``B`` candidates. Summed over the two axes; n, eps and
    ``bound`` only, never the data.
    """
    eps_centre, eps_width = _frame_parts(eps)
    centre_bins = _centre_ladder(bound).size - 1
    width_bins = _width_ladder(bound).size
    level = frame_level(n, eps)
    fail = em_failure_bound(centre_bins, n, eps_centre, _MARGIN)
    eps2 = (1.0 - _TARGET_SHARE) * eps_width
    fail += min(1.0, width_bins * math.exp(-eps2 * (level - 0.5) * n))
    return min(1.0, 2.0 * fail)


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


def frame_distances(scores: NDArray[np.float64], centre: float) -> NDArray[np.float64]:
    """``|s - c|`` of one axis's scores (each a function of its own score and ``c``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.abs(scores - centre)


def private_frame(
    scores: NDArray[np.float64],
    *,
    eps: float,
    bound: float,
    inflate: float,
    rng: np.random.Generator,
    present: NDArray[np.bool_] | None = None,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Frame from a private median and a private distance quantile per axis (internal).

    Per axis (x first), with half of ``eps``, drawing from ``rng`` in this order:

    1. Centre: the bin of :func:`_centre_ladder` holding the median of the
       axis's scores, by :func:`dppca.privacy.quantiles.em_quantile` with 0.5 of
       the axis's eps; ``c`` is its middle. The bins are 20 % of their distance
       from zero wide, down to a floor 40 octaves below ``2 bound``.
    2. Half width: :func:`dppca.privacy.quantiles.ladder_quantile` of
       ``|s - c|`` at level :func:`frame_level` (0.995, lower at small n eps),
       with 0.5 of the axis's eps (half for the target, half for the scan), on
       the candidates of :func:`_width_ladder` (2 % steps): ``h``, at or above
       the noisy quantile.
    3. Limits: ``c +- h z(0.9975) / z((1 + level) / 2) (1 + inflate)``; the
       factor is 1 at level 0.995, a Gaussian's extrapolation to 0.995 below.

    Notes
    -----
    Privacy: neighbouring tables have the same n and differ in one row, which
    changes one score per axis. The centre's utilities (ranks) then move by
    at most one, so it is DP for its eps (exponential mechanism). Given the
    released ``c`` (an earlier output: adaptive composition), ``|s - c|`` is a
    map of each score alone, so one distance changes and every cumulative
    count of the scan moves by at most one, all in the same direction: the
    scan is (eps1 + eps2)-DP (the argument of
    :func:`dppca.privacy.quantiles.ladder_quantile`). The ladders depend on
    ``bound`` only and the level on n and eps; the four parts compose (the
    plan records them for the tight accountant), and step 3 is
    post-processing.

    ``present`` (default: every row) marks the rows with a score; a row with a
    missing cell (``missing="zero"``) has none. The centre counts it as half
    a row below every edge (:func:`dppca.privacy.quantiles.em_quantile`), so
    it aims at the median of the present scores, and a row's change still
    moves every count by at most one. The half width counts it at distance 0
    (inside any frame), a map of that row alone, so the scan's argument is
    unchanged and the level among the present rows stays near 0.995 instead
    of out of reach.
    """
    eps_centre, eps_width = _frame_parts(eps)
    level = frame_level(scores.shape[0], eps)
    widen = _stretch(level) * (1.0 + inflate)
    centres, widths = _centre_ladder(bound), _width_ladder(bound)
    limits = []
    for a in (0, 1):
        lo, hi = em_quantile(
            scores[:, a], centres, q=0.5, eps=eps_centre, rng=rng, present=present
        )
        centre = 0.5 * (lo + hi)
        distances = frame_distances(scores[:, a], centre)
        if present is not None:
            distances = np.where(present, distances, 0.0)
        half = ladder_quantile(
            distances,
            widths,
            q=level,
            eps1=_TARGET_SHARE * eps_width,
            eps2=(1.0 - _TARGET_SHARE) * eps_width,
            rng=rng,
        )
        limits.append((centre - half * widen, centre + half * widen))
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
    settings: ScoreSettings,
    eps: float,
    rng: np.random.Generator,
    present: NDArray[np.bool_] | None = None,
) -> tuple[tuple[tuple[float, float], tuple[float, float]], str]:
    """The frame of a score release and where it came from (internal).

    The checked ``settings`` say which: a public ``frame`` is used as given
    (``"public"``); else public bounds give the exact range of the scores
    over them (``"bounds"``, free); else :func:`private_frame` spends ``eps``
    on it (``"private"``) with the settings' score bound and inflation,
    drawing, per axis, its centre and half width from ``rng``.
    """
    if settings.public_frame is not None:
        return settings.public_frame, "public"
    if settings.box is not None:
        return bounds_frame(matrix, settings.box), "bounds"
    bound, inflate = settings.bound, settings.inflate
    limits = private_frame(scores, eps=eps, bound=bound, inflate=inflate, rng=rng, present=present)
    return limits, "private"
