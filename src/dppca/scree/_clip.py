"""The clip level of the pair norms and the noise of the joint moment release."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .._knorm import moment_knorm_variance
from .._pairs import moment_sensitivity
from ..forecast import FAILURE_TOLERANCE
from ..mechanisms import (
    capped_quantile_level,
    gaussian_sigma,
    ladder_failure_bound,
    quantile_overshoot_bound,
)

# Public constants of the clip level: the quantile of the squared pair norms it
# aims at, and the factor-2 ladders it is chosen from (exponents of two without
# bounds; steps down from the largest possible value with bounds). A short
# ladder keeps the scan's chance of stopping below the data small at small n.
_CLIP_QUANTILE, _CLIP_QUANTILE_MAX, _CLIPPED_PAIRS = 0.9, 0.995, 5.0
_LADDER_LOW, _LADDER_HIGH = -30, 70
_LADDER_BOUNDED = 12
# The scan's target noise may pass the number of pairs, and the scan then runs
# past the data. A margin of 3 / eps1 below that number bounds the chance of
# passing two or more bins (a clip level 4 times too high) by about e^-3 / 3.
_SCAN_MARGIN = 3.0
_SCAN_SHARE_MIN, _SCAN_SHARE_MAX = 0.05, 0.3


def _clip_ladder(box: tuple[NDArray, NDArray] | None) -> NDArray[np.float64]:
    """Public candidate clip levels for the squared pair norms (factor-2 ladder).

    With public bounds the largest possible ``||z||^2`` is half the squared
    diagonal of the box, and the ladder runs 12 octaves down from there: data
    spread over less than an eighth of their bounds (in each variable) meet the
    lowest candidate, which then clips nothing and only adds noise, never bias.
    Without bounds it spans ``2**-30 .. 2**70`` (squared data units). Both are
    fixed before any data are read.
    """
    if box is None:
        return np.ldexp(1.0, np.arange(_LADDER_LOW, _LADDER_HIGH + 1))
    top = 0.5 * float(np.sum((box[1] - box[0]) ** 2))
    return top * np.ldexp(1.0, np.arange(-_LADDER_BOUNDED, 1))


def _auto_scan_share(n: int, eps: float, bins: int) -> float:
    """Smallest share of eps whose clip scan the forecast does not flag.

    The share is searched between 0.05 and 0.3 of eps on the public failure
    bound of :func:`_scan_failure` (the scan stops below the data, or runs
    two bins past them), at the level the scan would use, against the
    forecast's :data:`dppca.forecast.FAILURE_TOLERANCE`. A larger share buys
    a safer scan with budget the moments then lack; at 150 to 600 rows and
    eps near 1 the cap of 0.3 binds. On the accuracy benchmark's small tables
    (``benchmarks/bench_accuracy.py``) this rule scored better than a 1 %
    target, which spent up to 0.3 of eps on the scan at those sizes.
    """
    m = n // 2
    for share in np.linspace(_SCAN_SHARE_MIN, _SCAN_SHARE_MAX, 26):
        eps_scan = eps * float(share)
        level = _scan_level(m, eps_scan, eps * (1 - float(share)) / 2)
        if _scan_failure(bins, m, level, eps_scan) <= FAILURE_TOLERANCE:
            return float(share)
    return _SCAN_SHARE_MAX


def _scan_failure(bins: int, m: int, level: float, eps_scan: float) -> float:
    """Public bound on the chance that the clip scan lands below the data or 4x too high."""
    below = ladder_failure_bound(bins, m, level, eps_scan / 2)
    over = quantile_overshoot_bound(2, m, level, eps_scan / 2, eps_scan / 2)
    return min(1.0, below + over)


def _scan_level(m: int, eps_scan: float, eps_moments: float) -> float:
    """Quantile level of the clip scan (public: n and the epsilons only).

    Clipping trades bias (the pairs beyond the level) for noise (proportional
    to the level over ``eps m``). Aiming at ``1 - 5 / (eps_moments m)`` clips
    about ``5 / eps`` pairs, the usual balance for a private mean, kept between
    0.9 and 0.995; the scan's own noise may lower it further
    (:func:`dppca.mechanisms.capped_quantile_level`).
    """
    aim = min(max(1.0 - _CLIPPED_PAIRS / (eps_moments * m), _CLIP_QUANTILE), _CLIP_QUANTILE_MAX)
    return capped_quantile_level(aim, m, eps_scan / 2.0, _SCAN_MARGIN)


def _joint_noise(
    n: int, all_pairs: bool, eps: float, delta: float, calibration: str, k: int
) -> tuple[str, float]:
    """Mechanism and noise standard deviation per unit clip level of the moment release.

    The K-norm mechanism of the sensitivity polytope (:mod:`dppca._knorm`,
    pure DP) and Gaussian noise on the L2 sensitivity of
    :func:`dppca._pairs.moment_sensitivity` are both valid; the one with the
    smaller standard deviation is used. (The K-norm noise is Laplace noise on
    the L1 sensitivity conditioned on a constraint, so it always has less
    noise than the Laplace mechanism.) The choice depends on n, k, eps, delta
    and the calibration only, never on the data.
    """
    options = [
        (_unit_sd(kind, n, all_pairs, eps, delta, calibration, k), kind)
        for kind in ("knorm", "gaussian")
    ]
    sd, kind = min(options)
    return kind, sd


def _unit_sd(
    kind: str, n: int, all_pairs: bool, eps: float, delta: float, calibration: str, k: int
) -> float:
    """Noise sd of each value of the joint release of ``k + 1`` values, per unit clip level."""
    if kind == "knorm":
        scale = 2.0 * moment_sensitivity(n, 1.0, all_pairs=all_pairs, norm="knorm") / eps
        return math.sqrt(moment_knorm_variance(k + 1, scale))
    l2 = moment_sensitivity(n, 1.0, all_pairs=all_pairs, norm="l2")
    return gaussian_sigma(l2, eps, delta, calibration)
