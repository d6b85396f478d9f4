"""The data-free side of a score release: the plan that prices and runs it.

:func:`plan_score` prices a :func:`~dppca.releases.score.dp_score` call from public
quantities only (n, p, the options, eps and delta): the checked settings
(:mod:`~dppca.releases.score.settings`), the split and the parts' costs
(:mod:`~dppca.releases.score.costs`) and the forecast
(:mod:`~dppca.releases.score.forecast`). The release runs exactly this plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from ...core.tables import MissingRule, check_missing
from ...core.types import Accuracy, Calibration, Ties
from ...core.validation import (
    check_bins,
    check_bool,
    check_calibration,
    check_components,
    check_delta,
    check_delta_for_n,
    check_eps,
    check_methods,
    check_positive_float,
    check_positive_int,
)
from ...privacy.accounting import PrivacyCost
from ...privacy.mechanisms import gaussian_sigma, kendall_sigma
from ..directions import DirectionsPlan, plan_pc_dir
from ..engine import CheckedData, Part, parts_of
from ..forecast import Forecast
from ..resolvability import enforce_released
from ..splits import ScoreSplit, resolve_score_split
from .costs import ScoreParts, score_parts
from .draw import check_score_input, refuse_own_score_directions, run_score
from .forecast import forecast_score
from .frame_check import review_frame
from .histograms import HISTOGRAM_METHODS, ScoreMethod
from .settings import ScoreSettings, check_score_settings

__all__ = ["ScorePlan", "plan_score"]


@dataclass(frozen=True, eq=False)
class ScorePlan:
    """A priced score release: budget split, cost, forecast and settings.

    Built by :func:`plan_score` from public quantities only and run by
    :func:`dppca.releases.engine.execute`; :func:`dp_score` runs exactly this plan.
    """

    shares: Mapping[str, float]
    eps_directions: float
    delta_directions: float
    eps_groups: float
    eps_frame: float
    eps_method: float
    delta_method: float
    cost: PrivacyCost
    forecast: Forecast
    n: int = 0
    p: int = 0
    settings: ScoreSettings | None = None
    directions: DirectionsPlan | None = None
    n_groups: int | None = None
    kind: str = "score"
    missing: str = "refuse"

    @property
    def accuracy(self) -> str:
        """What the executor does with a forecast problem."""
        return "warn" if self.settings is None else self.settings.accuracy

    @property
    def parts(self) -> tuple[Part, ...]:
        """The noise draws, in order: directions, group sizes, frame, histograms."""
        return parts_of(self.cost)

    def check_input(self, X: Any, **inputs: Any) -> CheckedData:
        """Check the table, ``directions`` and ``groups`` once, as :func:`dp_score` does.

        ``inputs`` are ``directions``, ``public_directions``, ``groups`` and
        ``group_labels`` of :func:`dp_score`; they must match the plan.
        """
        return check_score_input(self, X, **inputs)

    def screen(self, data: CheckedData) -> None:
        """Before any noise: refuse "public" directions that are the data's own."""
        refuse_own_score_directions(self, data)

    def review(self, result: Any) -> Any:
        """The checks of the directions this release made itself and of its frame.

        Directions given by the caller were judged when they were released; a
        private frame is judged from released values only
        (:func:`dppca.releases.score.frame_check.review_frame`).
        """
        enforce_released(result, self.accuracy, "score", own=self.directions is not None)
        return review_frame(self, result)

    def draw(self, data: CheckedData, rng: np.random.Generator) -> Any:
        """Draw the parts in order (see :func:`dppca.releases.score.draw.run_score`)."""
        return run_score(self, data, rng)


def plan_score(
    n: int,
    p: int,
    *,
    eps: float,
    delta: float,
    bins: int | str | tuple[int, int] | None = None,
    components: tuple[int, int] = (1, 2),
    method: ScoreMethod | Sequence[ScoreMethod] = "add",
    directions_given: bool = False,
    groups: int | None = None,
    groups_public: bool = False,
    frame_given: bool = False,
    bounds_given: bool = False,
    split: ScoreSplit | None = None,
    score_range: float = 1e6,
    calibration: Calibration = "analytic",
    inflate: float = 0.2,
    ties: Ties = "zero",
    compare: bool = False,
    frame: tuple[tuple[float, float], tuple[float, float]] | None = None,
    bounds: Any = None,
    variables: tuple[str, ...] | None = None,
    accuracy: Accuracy = "warn",
    allow_large_delta: bool = False,
    missing: MissingRule = "refuse",
) -> ScorePlan:
    """Price and forecast a :func:`dp_score` call without any data.

    Parameters are those of :func:`dp_score` that shape the release, with the
    data replaced by its public size ``n`` x ``p`` and the labels by the
    number of groups (None without groups). A public ``frame`` or ``bounds``
    may be given as values (``variables`` name the columns for bounds given
    as a mapping) or, for pricing alone, as ``frame_given``/``bounds_given``.

    Returns
    -------
    ScorePlan
        ``cost`` (what the call records), ``forecast``, ``parts``, ``settings``
        and the sub-plan of its ``directions``; :func:`dppca.releases.engine.execute`
        runs it.

    Examples
    --------
    >>> plan = plan_score(178, 13, eps=1.0, delta=1e-6)
    >>> plan.forecast.ok, round(plan.cost.eps, 6)
    (False, 1.0)
    """
    shares_given = resolve_score_split(split)
    n, p, eps = check_positive_int(n, "n"), check_positive_int(p, "p"), check_eps(eps)
    delta = check_delta_for_n(
        check_delta(delta), n, check_bool(allow_large_delta, "allow_large_delta")
    )
    settings = _settings(
        n,
        p,
        components=components,
        bins=bins,
        method=method,
        calibration=calibration,
        score_range=score_range,
        groups_public=groups_public,
        compare=compare,
        inflate=inflate,
        ties=ties,
        accuracy=accuracy,
        bounds=bounds,
        frame=frame,
        variables=variables,
    )
    n_groups = 1 if groups is None else check_positive_int(groups, "groups")
    parts = score_parts(
        shares_given,
        settings,
        n=n,
        p=p,
        eps=eps,
        delta=delta,
        n_groups=n_groups,
        directions_given=directions_given,
        private_groups=groups is not None and not settings.groups_public,
        frame_given=frame_given or bounds_given,
    )
    t, cost = parts.price(delta)
    return ScorePlan(
        MappingProxyType(dict(parts.shares)),
        parts.eps_of("directions", t),
        parts.delta_d,
        parts.eps_of("groups", t),
        parts.eps_of("frame", t),
        parts.eps_m(t),
        parts.delta_m,
        cost,
        _forecast(parts, t, delta, settings.bound),
        n,
        p,
        settings,
        None if directions_given else _directions_plan(parts, t, settings.ties),
        None if groups is None else n_groups,
        missing=check_missing(missing),
    )


def _settings(
    n: int,
    p: int,
    *,
    components: object,
    bins: object,
    method: object,
    calibration: object,
    score_range: object,
    variables: tuple[str, ...] | None,
    **options: Any,
) -> ScoreSettings:
    """The checked settings: components, bins, methods, calibration, range, the rest."""
    return check_score_settings(
        components=check_components(components, p),
        bins=check_bins(bins, n),
        methods=check_methods(method, tuple(HISTOGRAM_METHODS)),
        calibration=check_calibration(calibration),
        bound=check_positive_float(score_range, "score_range"),
        variables=variables if variables is not None else tuple(f"V{j + 1}" for j in range(p)),
        **options,
    )


def _directions_plan(parts: ScoreParts, t: float, ties: Ties) -> DirectionsPlan:
    """The sub-plan of the directions this release makes, at scaling ``t``."""
    return plan_pc_dir(
        parts.n,
        parts.p,
        max(parts.components),
        eps=parts.eps_of("directions", t),
        delta=parts.delta_d,
        calibration=parts.calibration,
        ties=ties,
        accuracy="ignore",
        allow_large_delta=True,
    )


def _forecast(parts: ScoreParts, t: float, delta: float, bound: float) -> Forecast:
    """The forecast of priced parts at scaling ``t`` (the noise scales they draw with)."""
    sigma_dir = None
    if not parts.directions_given:
        sigma_dir = kendall_sigma(
            parts.n, parts.eps_of("directions", t), parts.delta_d, parts.calibration
        )
    sigma_add = None
    if "add" in parts.methods:
        sigma_add = gaussian_sigma(
            math.sqrt(2.0), parts.eps_m(t), parts.delta_m, parts.calibration
        )
    return forecast_score(
        n=parts.n,
        p=parts.p,
        eps=parts.eps,
        delta=delta,
        eps_f=parts.eps_of("frame", t) if parts.frame_private else 0.0,
        bound=bound,
        sigma_dir=sigma_dir,
        sigma_add=sigma_add,
        cells=parts.bins[0] * parts.bins[1],
        groups=parts.n_groups,
    )


# Release files and pickles name the public path, which stays the same.
ScorePlan.__module__ = "dppca.releases.score"
