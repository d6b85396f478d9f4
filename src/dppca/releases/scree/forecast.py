"""The data-free accuracy forecast of a scree release.

It reads the plan's public numbers (size, budget split, noise scale, clip
scan) and predicts the noise of the released shares and the chance that the
clip scan fails, before any data are read (see :mod:`dppca.releases.forecast`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ...privacy.mechanisms import kendall_sigma
from ..forecast import (
    CLIP_RATIO,
    FAILURE_TOLERANCE,
    PVE_TOLERANCE,
    Findings,
    Forecast,
    direction_noise_norm,
    direction_problem,
)
from .budget import Split, SplitInputs
from .clip import _CLIP_QUANTILE, _LADDER_BOUNDED, _scan_failure, _unit_sd

# How the forecast names the joint release's noise.
_NOISE_NAMES = {"knorm": "K-norm", "gaussian": "Gaussian"}


def _forecast_scree(
    inputs: SplitInputs, split: Split, ladder: NDArray[np.float64], level: float
) -> Forecast:
    """Data-free forecast of a scree release (see :mod:`dppca.releases.forecast`).

    Read from the plan's priced arguments ``inputs``, its (scaled) ``split``,
    the clip scan's ``ladder`` and the scan's aim ``level``.

    The noise on the total variance, relative to it, is ``unit_sd * C / trace``
    with the clip level ``C`` assumed to be :data:`dppca.releases.forecast.CLIP_RATIO`
    times the total variance when the scan aims at the 0.9 quantile, and
    ``sqrt(0.1 / (1 - level))`` times more for a higher level: the quantiles
    of a tail with index 2 (heavy, with a finite mean, as real tables with a
    few dominant variables have) grow like that, so a higher aim is not
    assumed to cost nothing. A PVE is a ratio ``w / s`` of two such noisy
    values; its noise, ``e_w - PVE e_s`` over the total, has variance
    ``sd^2 (1 + PVE^2 - 2 rho PVE)``, at most ``2 - 2 rho`` times that of one
    value (at PVE = 1), where ``rho`` is the correlation of the two noises:
    ``1 / (k + 1)`` for K-norm noise, 0 for Gaussian. The clip scan fails when it
    stops below all the data (:func:`dppca.privacy.mechanisms.ladder_failure_bound`)
    or runs two bins or more (a factor 4) past the level
    (:func:`dppca.privacy.mechanisms.quantile_overshoot_bound`).
    """
    n, p, k, calibration = inputs.n, inputs.p, inputs.k, inputs.calibration
    eps_dir, kind, ladder_bins, m = split.eps_dir, split.noise, ladder.size, n // 2
    eps_scan = split.eps_scan if inputs.public_clip is None else 0.0
    unit_sd = _unit_sd(kind, n, inputs.all_pairs, split.eps_m, split.delta_m, calibration, k)
    found = Findings()
    if eps_dir > 0:
        norm = direction_noise_norm(p, kendall_sigma(n, eps_dir, split.delta_dir, calibration))
        found.add("direction_noise_norm", norm, "typical operator norm of the Kendall noise")
        problem = direction_problem(norm)
        if problem is not None:
            found.problems.append(problem)
    ratio = CLIP_RATIO * math.sqrt(max(1.0, (1.0 - _CLIP_QUANTILE) / (1.0 - level)))
    relative = unit_sd * ratio
    found.add(
        "trace_noise_relative",
        relative,
        f"noise sd over the total variance ({_NOISE_NAMES.get(kind, kind)}), "
        f"assuming a clip level {ratio:.2g} times the total variance",
    )
    rho = 1.0 / (k + 1) if kind == "knorm" else 0.0
    pve_sd = math.sqrt(2.0 - 2.0 * rho) * relative
    found.add("pve_sd", pve_sd, "predicted noise sd of a PVE (share of the total variance)")
    if 2 * pve_sd > PVE_TOLERANCE:
        found.problems.append(
            f"each PVE would carry noise of about +-{2 * pve_sd:.2g} (95%), more than "
            f"{PVE_TOLERANCE:g}; raise eps, pass directions released earlier, or use more rows."
        )
    if eps_scan > 0:
        failure = _scan_failure(ladder_bins, m, level, eps_scan)
        found.add(
            "clip_scan_failure",
            failure,
            "bound on the chance that the clip level lands below the data or 4x too high",
        )
        if failure > FAILURE_TOLERANCE:
            help_ = (
                "raise eps or split=ScreeSplit(clip=...), or give a public "
                "ClippedControl(clip=...)"
            )
            if ladder_bins > _LADDER_BOUNDED + 1:  # the unbounded ladder: bounds would help
                help_ = "give public bounds, " + help_
            found.problems.append(
                f"the clip level search may fail with probability up to {failure:.2g}; {help_}."
            )
    return found.forecast("scree", n, p, inputs.eps, inputs.delta)
