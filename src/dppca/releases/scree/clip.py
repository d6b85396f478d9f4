"""The clip level of the pair norms and the noise of the joint moment release."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ...kernels.pair_moments import moment_sensitivity
from ...privacy.knorm import moment_knorm_variance
from ...privacy.mechanisms import gaussian_sigma
from ...privacy.quantiles import (
    capped_quantile_level,
    ladder_failure_bound,
    quantile_overshoot_bound,
)
from ..forecast import CLIP_RATIO, FAILURE_TOLERANCE

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
# Relative clipping bias of the released shares at level q, as _CLIP_BIAS *
# sqrt(1 - q) (see _auto_scan_share): the PVE bias of the spiked Gaussian of the
# accuracy benchmark is about 0.07 sqrt(1 - q) at q = 0.5 to 0.9 (all pairs);
# 0.05 weighs it a little below that, which scored best on the small real tables.
_CLIP_BIAS = 0.05


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
    with np.errstate(over="ignore"):
        top = 0.5 * float(np.sum((box[1] - box[0]) ** 2))
    if not math.isfinite(top):  # public: refused before any data are read
        raise ValueError(
            "bounds are too wide for the scree: the squared diagonal of the bounds' box "
            "overflows a double (widths above about 1e153); pass narrower bounds or none."
        )
    return top * np.ldexp(1.0, np.arange(-_LADDER_BOUNDED, 1))


def _auto_scan_share(n: int, eps: float, bins: int) -> float:
    """Share of eps for the clip scan with the least forecast PVE error.

    A public function of n, eps and the ladder's length. For each share
    between 0.05 and 0.3 of eps whose scan the forecast does not flag
    (:func:`_scan_failure` at most :data:`dppca.releases.forecast.FAILURE_TOLERANCE`),
    the error of the release at the level the scan would aim at
    (:func:`_scan_level`) is modelled as the root sum of squares of

    * the noise: the all-pairs noise scale ``4 C / (n eps_m)`` relative to the
      total variance, with ``C`` the forecast's clip ratio, grown for levels
      above 0.9 as in :func:`dppca.releases.scree.forecast._forecast_scree`;
    * the clipping bias: ``_CLIP_BIAS sqrt(1 - level)``, the shape a tail of
      index 2 gives (the forecast's assumption).

    A larger share lets the scan aim higher (less bias) and leaves less for the
    moments (more noise). When every share is flagged, the largest is used. The
    moments' eps is taken as ``eps (1 - share) / 2`` here, the split of the
    defaults. On the accuracy benchmark (``benchmarks/bench_accuracy.py``) this
    rule cut the clipping bias of the PC1 variance at n = 2000 from -16 % to
    -5 % of the truth at eps = 0.5 (-6.5 % to -3.8 % at eps = 1, PVE error
    1.15 to 1.06 points) against the earlier rule (the smallest share not
    flagged), while the small real tables stayed within the noise of 20 seeds
    (accurate in 0.63 and 0.57 of releases without and with bounds, against
    0.63 and 0.60).
    """
    m = n // 2
    best = (math.inf, _SCAN_SHARE_MAX)
    for share in np.linspace(_SCAN_SHARE_MIN, _SCAN_SHARE_MAX, 26):
        eps_scan = eps * float(share)
        eps_m = eps * (1 - float(share)) / 2
        level = _scan_level(m, eps_scan, eps_m)
        if _scan_failure(bins, m, level, eps_scan) > FAILURE_TOLERANCE:
            continue
        noise = 4.0 / (n * eps_m) * CLIP_RATIO * math.sqrt(max(1.0, 0.1 / (1.0 - level)))
        bias = _CLIP_BIAS * math.sqrt(1.0 - level)
        best = min(best, (math.hypot(noise, bias), float(share)))
    return best[1]


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
    (:func:`dppca.privacy.mechanisms.capped_quantile_level`).
    """
    aim = min(max(1.0 - _CLIPPED_PAIRS / (eps_moments * m), _CLIP_QUANTILE), _CLIP_QUANTILE_MAX)
    return capped_quantile_level(aim, m, eps_scan / 2.0, _SCAN_MARGIN)


def _joint_noise(
    n: int, all_pairs: bool, eps: float, delta: float, calibration: str, k: int
) -> tuple[str, float]:
    """Mechanism and noise standard deviation per unit clip level of the moment release.

    The K-norm mechanism of the sensitivity polytope (:mod:`dppca.privacy.knorm`,
    pure DP) and Gaussian noise on the L2 sensitivity of
    :func:`dppca.kernels.pair_moments.moment_sensitivity` are both valid; the one with the
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
