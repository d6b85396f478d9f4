"""The score frame of a fit: private centres, widths from the fit's private variances.

A stand-alone score release spends part of its frame budget on private half
widths, a noisy scan that can stop far too early (a collapsed frame) or far
too late (a frame thousands of times the data's width) at a few hundred rows.
A fit already holds private variances along its directions, in the score's
units, so the half widths follow from them for free:
``h = z(0.9975) sqrt(v) (1 + inflate)``, the central 99.5 % of a normal score
widened as the score plot's private frame is. The frame budget goes to the
centres instead, per axis in two exponential-mechanism steps:

1. the bin holding the median on the public ladder of
   :func:`dppca.releases.score.frame._centre_ladder` (bins 20 % of their
   distance from zero wide), as the score plot's private frame does;
2. the bin holding the median on a uniform ladder of step ``sqrt(v) / 4``
   spanning the first bin widened by 4 ``sqrt(v)`` on each side (built from
   released values only), so the centre is exact to a quarter of a standard
   deviation wherever the scores sit, up to about 3000 sds from zero (the
   ladder has at most 4096 bins; beyond that its step grows).

When a variance was released as 0 there is no width to derive: that axis
spends its two parts as the score plot's private frame does (a centre and a
scanned half width), the same four pure parts in all.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...privacy.cost import PrivacyCost, compose
from ...privacy.quantiles import em_quantile, ladder_quantile
from ..engine import CheckedData
from ..forecast import Forecast, em_failure_bound
from ..score.frame import _centre_ladder, _stretch, _width_ladder, frame_distances, frame_level
from ..score.plan import ScorePlan

__all__ = ["FitFrameScore", "derived_frame", "fit_frame_cost"]

# Half width in standard deviations: the central 99.5 % of a normal score.
_Z = NormalDist().inv_cdf(0.9975)
# The fine ladder: its step and its margin around the coarse bin, in sds.
_FINE_STEP = 0.25
_FINE_MARGIN = 4.0
# At most this many fine bins: past about 3000 sds from zero the fine step grows
# beyond a quarter sd (a table shifted that far needs public bounds for its frame).
_FINE_BINS = 4096
# The coarse ladder: uniform out to this many sds, then bins growing by 20 %.
_UNIFORM_SDS = 4.0
_GROWTH = 1.5
# Each axis's half of the frame eps: this share to the coarse step, the rest to the fine.
_COARSE_SHARE = 0.6


#: A frame whose centres' failure bound exceeds this is a forecast problem.
FRAME_FAILURE_LIMIT = 0.1
# The score sd the forecast assumes (a standardised PC has sd near 1; the ladder's
# size grows only with log(bound / sd)).
_ASSUMED_SD = 1.0


def frame_centre_failure(n: int, eps: float, bound: float) -> float:
    """Data-free bound on the chance that a coarse centre lands 0.4 n ranks off the median.

    Per axis the coarse step chooses among the bins of :func:`coarse_ladder`
    (built for a score sd of ``_ASSUMED_SD``) with ``_COARSE_SHARE`` of its
    half of ``eps`` (:func:`dppca.releases.forecast.em_failure_bound`);
    summed over the two axes. n, eps and ``bound`` only.
    """
    bins = coarse_ladder(bound, _ASSUMED_SD).size - 1
    return min(1.0, 2.0 * em_failure_bound(bins, n, _COARSE_SHARE * eps / 2, 0.4))


def fit_frame_cost(eps: float, components: tuple[int, int]) -> PrivacyCost:
    """The four pure parts of a fit's frame (two per axis), composed (for the plan)."""
    parts = []
    coarse = _COARSE_SHARE * eps / 2
    for c in components:
        for step, part in (("coarse", coarse), ("fine", eps / 2 - coarse)):
            parts.append(
                PrivacyCost(
                    part,
                    0.0,
                    "exponential mechanism",
                    f"frame centre PC{c} ({step} median; width from the fit's variance)",
                    kind="pure",
                )
            )
    return compose(parts, released="private frame (centres)")


def coarse_ladder(bound: float, sd: float) -> NDArray[np.float64]:
    """Public bin edges for a coarse centre at the resolution a known spread needs.

    Uniform bins ``sd / 2`` wide within ``_UNIFORM_SDS`` sds of zero, then
    bins growing by 50 % of their distance from zero up to ``bound``: no
    finer than the frame needs, so far fewer bins than the score plot's own
    ladder (a function of ``bound`` and the released ``sd`` only).
    """
    step = 0.5 * sd
    inner = _UNIFORM_SDS * sd
    half = list(step * np.arange(1, int(_UNIFORM_SDS / 0.5) + 1, dtype=np.float64))
    edge = inner
    while edge < bound:
        edge = min(bound, edge * _GROWTH)
        half.append(edge)
    right = np.asarray(half)
    return np.concatenate([-right[::-1], [0.0], right])


def derived_frame(
    scores: NDArray[np.float64],
    sds: tuple[float, float],
    *,
    eps: float,
    bound: float,
    inflate: float,
    rng: np.random.Generator,
    present: NDArray[np.bool_] | None = None,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The frame of a fit's score plot (internal): see the module's description.

    Parameters
    ----------
    scores : ndarray of shape (n, 2)
        The scores of the two axes.
    sds : (float, float)
        The private standard deviations of the two axes (square roots of the
        fit's released variances): post-processing of earlier outputs.
    eps : float
        The frame's eps: ``eps / 4`` per part, two parts per axis.
    bound, inflate : float
        The score plot's public range and widening.
    rng : numpy.random.Generator
        The fit's noise stream.

    Notes
    -----
    Privacy: neighbouring tables differ in one row, which changes one score
    per axis; each exponential-mechanism choice of a median bin has rank
    utilities of sensitivity 1, so it is ``eps / 4``-DP. The fine ladder is a
    function of the first choice and of the released variance (adaptive
    composition), and the half width is post-processing of the variance.
    Without a positive variance the axis uses the score plot's own pair (a
    median bin and a noisy scan of ``|s - c|``), also ``eps / 4`` each.
    """
    coarse_eps = _COARSE_SHARE * eps / 2
    fine_eps = eps / 2 - coarse_eps
    limits = []
    n = scores.shape[0]
    for a in (0, 1):
        x = scores[:, a]
        sd = float(sds[a])
        usable = sd > 0 and math.isfinite(sd) and sd < bound
        ladder = coarse_ladder(bound, sd) if usable else _centre_ladder(bound)
        lo, hi = em_quantile(x, ladder, q=0.5, eps=coarse_eps, rng=rng, present=present)
        if usable:
            span = hi - lo + 2 * _FINE_MARGIN * sd
            step = max(_FINE_STEP * sd, span / _FINE_BINS)
            start = lo - _FINE_MARGIN * sd
            count = max(2, math.ceil(span / step))
            fine = start + step * np.arange(count + 1, dtype=np.float64)
            flo, fhi = em_quantile(x, fine, q=0.5, eps=fine_eps, rng=rng, present=present)
            centre = 0.5 * (flo + fhi)
            half = _Z * sd * (1.0 + inflate)
        else:
            centre = 0.5 * (lo + hi)
            level = frame_level(n, 2 * eps)  # the score plot's level at this width eps
            distances = frame_distances(x, centre)
            if present is not None:  # a row without a score counts at distance 0
                distances = np.where(present, distances, 0.0)
            width = ladder_quantile(
                distances,
                _width_ladder(bound),
                q=level,
                eps1=fine_eps / 2,
                eps2=fine_eps / 2,
                rng=rng,
            )
            half = width * _stretch(level) * (1.0 + inflate)
        limits.append((centre - half, centre + half))
    return limits[0], limits[1]


@dataclass(frozen=True, eq=False)
class FitFrameScore:
    """A fit's score step: the frame from :func:`derived_frame`, then the histogram.

    ``inner`` is the score plot's plan priced with a public frame (so without
    frame parts); ``frame_eps`` buys the four centre parts; ``cost`` is both.
    """

    inner: ScorePlan
    frame_eps: float
    cost: PrivacyCost

    @property
    def forecast(self) -> Forecast:
        """The histogram's forecast and the centres' failure bound (data-free)."""
        inner = self.inner.forecast
        settings = self.inner.settings
        assert settings is not None
        fail = frame_centre_failure(self.inner.n, self.frame_eps, settings.bound)
        problems = [p for p in inner.problems if "frame" not in p]
        if fail > FRAME_FAILURE_LIMIT:
            problems.append(
                f"the private frame's centres may land off the scores with probability up "
                f"to {fail:.2g} (frame eps {self.frame_eps:.3g} for n={self.inner.n}); give "
                "public bounds, a larger split.frame or a larger eps."
            )
        quantities = {k: v for k, v in inner.quantities.items() if k != "frame_failure"}
        quantities["frame_failure"] = fail
        descriptions = dict(inner.descriptions)
        descriptions["frame_failure"] = (
            "bound on the chance that a frame centre lands off the scores (widths come "
            "from the fit's variances)"
        )
        return dataclasses.replace(
            inner,
            eps=self.cost.eps,
            quantities=quantities,
            descriptions=descriptions,
            problems=tuple(problems),
        )

    def draw(self, data: CheckedData, rng: np.random.Generator, sds: Any = None) -> Any:
        """Release the frame's centres, then the score plot inside the frame."""
        settings = self.inner.settings
        assert settings is not None and sds is not None
        inputs = data.extra
        values = np.asarray(data.values)
        with np.errstate(over="ignore", invalid="ignore"):  # no data-dependent warning
            scores = values @ inputs.matrix
        frame = derived_frame(
            scores,
            sds,
            eps=self.frame_eps,
            bound=settings.bound,
            inflate=settings.inflate,
            rng=rng,
            present=~np.isnan(values).any(axis=1),  # rows with a missing cell have no score
        )
        plan = dataclasses.replace(
            self.inner, settings=dataclasses.replace(settings, public_frame=frame)
        )
        result = plan.draw(data, rng)
        return dataclasses.replace(result, cost=self.cost, frame_source="fit")

    def review(self, result: Any) -> Any:
        """Nothing beyond the fit's own frame check."""
        return result


def fit_frame_score(
    inner: ScorePlan, frame_eps: float, components: tuple[int, int]
) -> FitFrameScore:
    """``inner`` (priced with a public frame) preceded by the fit's frame parts."""
    frame = fit_frame_cost(frame_eps, components)
    cost = PrivacyCost(
        frame.eps + inner.cost.eps,
        inner.cost.delta,
        "composition",
        "private score plot (frame from the fit)",
        (frame, inner.cost),
        kind="composed",
    )
    return FitFrameScore(inner, frame_eps, cost)
