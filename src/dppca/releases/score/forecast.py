"""The data-free forecast of a score release and the frame's default share of eps.

Both read public quantities only (n, p, eps, delta, the noise scales and the
grid): :func:`frame_share` picks the frame's share from its failure bound,
and :func:`forecast_score` says before any data are read whether the picture
is likely to be wrong (see :mod:`dppca.releases.forecast`).
"""

from __future__ import annotations

from ..forecast import (
    FAILURE_TOLERANCE,
    Findings,
    Forecast,
    direction_noise_norm,
    direction_problem,
)
from .frame import frame_eps_needed, frame_failure_bound

__all__ = ["FRAME_SHARE_MAX", "FRAME_SHARE_MIN", "FRAME_TARGET", "forecast_score", "frame_share"]

#: The default frame share is the smallest whose failure bound is FRAME_TARGET,
#: kept between FRAME_SHARE_MIN and FRAME_SHARE_MAX of eps.
FRAME_TARGET = 0.01
FRAME_SHARE_MIN, FRAME_SHARE_MAX = 0.1, 0.4


def frame_share(n: int, eps: float, bound: float) -> float:
    """The frame's default share of eps (public: n, eps and ``bound`` only).

    The smallest share whose :func:`frame_failure_bound` is ``FRAME_TARGET``,
    kept between ``FRAME_SHARE_MIN`` and ``FRAME_SHARE_MAX``.
    """
    share = frame_eps_needed(n, bound, FRAME_TARGET) / eps
    return min(max(share, FRAME_SHARE_MIN), FRAME_SHARE_MAX)


def forecast_score(
    *,
    n: int,
    p: int,
    eps: float,
    delta: float,
    eps_f: float,
    bound: float,
    sigma_dir: float | None,
    sigma_add: float | None,
    cells: int,
    groups: int,
) -> Forecast:
    """Data-free forecast of a score release (see :mod:`dppca.releases.forecast`).

    ``direction_noise_norm`` is the typical size of the Kendall noise (when
    the release makes its directions, ``sigma_dir``); ``frame_failure`` is
    :func:`frame_failure_bound` for a private frame (``eps_f > 0``).
    ``histogram_tv`` predicts the total-variation distance that the ``"add"``
    noise alone puts between released and exact bin probabilities, for rows
    spread evenly over the groups: about ``0.3 * cells * sigma / n_g`` (a
    normal error clipped at zero has mean absolute size about ``0.6 sigma``,
    and total variation is half the summed error).
    """
    found = Findings()
    if sigma_dir is not None:
        norm = direction_noise_norm(p, sigma_dir)
        found.add("direction_noise_norm", norm, "typical operator norm of the Kendall noise")
        problem = direction_problem(norm)
        if problem is not None:
            found.problems.append(problem)
    if eps_f > 0:
        fail = frame_failure_bound(n, eps_f, bound)
        found.add(
            "frame_failure",
            fail,
            "bound on the chance that the private frame misses most rows",
        )
        if fail > FAILURE_TOLERANCE:
            found.problems.append(
                "the private frame may miss most rows with probability "
                f"up to {fail:.2g} "
                f"(frame eps {eps_f:.3g} for n={n}); give public bounds or frame=, or "
                "raise eps."
            )
    if sigma_add is not None:
        tv = min(1.0, 0.3 * cells * sigma_add * groups / n)
        found.add(
            "histogram_tv",
            tv,
            "predicted total-variation error of the add histogram from noise alone",
        )
        if tv > 0.5:
            found.problems.append(
                f"the histogram noise alone would move about {tv:.0%} of the probability; "
                "use fewer bins, a larger eps or more rows."
            )
    return found.forecast("score", n, p, eps, delta)
