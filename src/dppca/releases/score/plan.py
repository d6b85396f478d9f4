"""The data-free side of a score release: the plan that prices and runs it.

:func:`plan_score` prices a :func:`~dppca.releases.score.dp_score` call from public
quantities only (n, p, the options, eps and delta): the checked settings
(:mod:`~dppca.releases.score.settings`), the split and the parts' costs
(:mod:`~dppca.releases.score.costs`) and the forecast
(:mod:`~dppca.releases.score.forecast`). The release runs exactly this plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from ...core.options import (
    DESIGN_DEFAULTS,
    DesignOptions,
    PrivacyOptions,
    evolve,
    split_settings,
)
from ...core.scalar_checks import check_bool, check_positive_int
from ...core.score_checks import check_bins
from ...core.validation import check_components, check_delta_for_n
from ...privacy.cost import PrivacyCost
from ...privacy.mechanisms import gaussian_sigma, kendall_sigma
from ..directions.plan import DirectionsPlan, plan_own_directions, resolve_design
from ..directions.tau import released_text
from ..engine import CheckedData, Part, parts_of
from ..forecast import Forecast
from ..resolvability import enforce_released
from .costs import ScoreParts
from .draw import check_score_input, refuse_own_score_directions, run_score
from .forecast import forecast_score
from .frame_check import review_frame
from .options import ScoreOptions
from .settings import ScoreGiven, ScoreSettings

__all__ = ["ScorePlan", "plan_score", "plan_score_options"]


#: A score release handed nothing (the directions, groups and frame are its own).
NOTHING_GIVEN = ScoreGiven()


@dataclass(frozen=True, eq=False)
class ScorePlan:
    """A priced score release: budget split, cost, forecast and settings.

    Built by :func:`plan_score` from public quantities only and run by
    :func:`dppca.releases.engine.execute`; :func:`dp_score` runs exactly this plan.
    """

    priced: ScoreParts
    t: float
    cost: PrivacyCost
    forecast: Forecast
    privacy: PrivacyOptions
    settings: ScoreSettings | None = None
    directions: DirectionsPlan | None = None
    kind: str = "score"

    # what the parts cost at the plan's scaling ``t`` (see ScoreParts.price)
    n = property(lambda self: self.priced.n, doc="Rows of the table (public).")
    p = property(lambda self: self.priced.p, doc="Columns of the table.")
    eps_directions = property(lambda self: self.priced.eps_of("directions", self.t))
    delta_directions = property(lambda self: self.priced.delta_d)
    eps_groups = property(lambda self: self.priced.eps_of("groups", self.t))
    eps_frame = property(lambda self: self.priced.eps_of("frame", self.t))
    eps_method = property(lambda self: self.priced.eps_m(self.t), doc="eps of each method.")
    delta_method = property(lambda self: self.priced.delta_m, doc="delta of each method.")
    n_groups = property(lambda self: self.priced.given.groups, doc="Groups priced (or None).")
    missing = property(lambda self: self.privacy.missing, doc="How missing cells are read.")

    @property
    def shares(self) -> Mapping[str, float]:
        """The basic eps split over the parts used (read-only)."""
        return MappingProxyType(dict(self.priced.shares))

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
    directions_given: bool = False,
    groups: int | None = None,
    frame_given: bool = False,
    bounds_given: bool = False,
    variables: tuple[str, ...] | None = None,
    **settings: Any,
) -> ScorePlan:
    """Price and forecast a :func:`dp_score` call without any data.

    Parameters are those of :func:`dp_score` that shape the release, with the
    data replaced by its public size ``n`` x ``p`` and the labels by the
    number of groups (None without groups). A public ``frame`` or ``bounds``
    may be given as values (``variables`` name the columns for bounds given
    as a mapping) or, for pricing alone, as ``frame_given``/``bounds_given``.
    The settings become option objects (checked there, once) for
    :func:`plan_score_options`.

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
    privacy, options, design = split_settings("plan_score", settings, ScoreOptions, DesignOptions)
    given = ScoreGiven(
        directions=check_bool(directions_given, "directions_given"),
        groups=None if groups is None else check_positive_int(groups, "groups"),
        frame=check_bool(frame_given, "frame_given") or check_bool(bounds_given, "bounds_given"),
    )
    return plan_score_options(n, p, privacy, options, given, variables, design)


def plan_score_options(
    n: int,
    p: int,
    privacy: PrivacyOptions,
    options: ScoreOptions,
    given: ScoreGiven = NOTHING_GIVEN,
    variables: tuple[str, ...] | None = None,
    design: DesignOptions = DESIGN_DEFAULTS,
) -> ScorePlan:
    """The plan of a score release from checked option objects.

    Checks only what needs the shape: ``delta`` against 1/n, ``components``
    against p, ``bins`` against n, the bounds against the column names and
    ``design.m`` against n.
    """
    n, p = check_positive_int(n, "n"), check_positive_int(p, "p")
    privacy = evolve(privacy, delta=check_delta_for_n(privacy.delta, n, privacy.allow_large_delta))
    names = variables if variables is not None else tuple(f"V{j + 1}" for j in range(p))
    parts = ScoreParts(
        n=n,
        p=p,
        eps=privacy.eps,
        delta=privacy.delta,
        settings=ScoreSettings(
            components=check_components(options.components, p),
            bins=check_bins(options.bins, n),
            methods=options.method,
            groups_public=options.groups_public,
            compare=options.compare,
            bound=options.score_range,
            inflate=options.inflate,
            calibration=privacy.calibration,  # type: ignore[arg-type]
            ties=privacy.ties,  # type: ignore[arg-type]
            accuracy=privacy.accuracy,
            box=privacy.box(names),
            public_frame=options.frame,
        ),
        given=given,
        split=options.split,
        directions_text=released_text(
            "kendall", p, *resolve_design(design.design, design.m, n, p)
        ),
    )
    t, cost = parts.price()
    return ScorePlan(
        priced=parts,
        t=t,
        cost=cost,
        forecast=_forecast(parts, t),
        privacy=privacy,
        settings=parts.settings,
        directions=None if given.directions else _directions_plan(parts, t, privacy, design),
    )


def _directions_plan(
    parts: ScoreParts, t: float, privacy: PrivacyOptions, design: DesignOptions
) -> DirectionsPlan:
    """The sub-plan of the directions this release makes, at scaling ``t``."""
    eps = parts.eps_of("directions", t)
    options = design.directions(k=max(parts.components))
    return plan_own_directions(parts.n, parts.p, privacy, eps, parts.delta_d, options)


def _forecast(parts: ScoreParts, t: float) -> Forecast:
    """The forecast of priced parts at scaling ``t`` (the noise scales they draw with)."""
    eps_d = parts.eps_of("directions", t)
    return forecast_score(
        n=parts.n,
        p=parts.p,
        eps=parts.eps,
        delta=parts.delta,
        eps_f=parts.eps_of("frame", t) if parts.frame_private else 0.0,
        bound=parts.settings.bound,
        sigma_dir=None
        if parts.directions_given
        else kendall_sigma(parts.n, eps_d, parts.delta_d, parts.calibration),
        sigma_add=gaussian_sigma(math.sqrt(2.0), parts.eps_m(t), parts.delta_m, parts.calibration)
        if "add" in parts.methods
        else None,
        cells=parts.bins[0] * parts.bins[1],
        groups=parts.n_groups,
    )
