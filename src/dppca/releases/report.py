"""The plan of a report: a plan of the plans of its three releases, composed tightly.

:func:`plan_report` builds, from the settings and the public shape (n, p)
alone, the plans of the report's direction release, its scree and its score
plot (both reusing those directions), with every eps share scaled by the
largest factor whose tight total (:func:`dppca.privacy.accounting.tight_total` of
all their parts) is still the report's eps at its delta. The report's cost
is that tight total; :func:`dppca.releases.engine.execute` checks and charges it once.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np

from ..core.data_checks import check_data
from ..core.exceptions import InaccurateReleaseError
from ..core.options import (
    DESIGN_DEFAULTS,
    Boolean,
    Check,
    Constraint,
    DesignOptions,
    PrivacyOptions,
    _Checked,
    check_components_option,
    check_k_option,
    evolve,
    split_settings,
)
from ..core.scalar_checks import check_bool, check_positive_float, check_positive_int
from ..core.validation import check_components, check_delta_for_n
from ..privacy.cost import PrivacyCost
from .composite import joint_forecast, largest_stretch
from .directions.given import resolve_directions
from .directions.plan import DirectionsPlan, plan_directions
from .directions.result import DirectionsResult
from .directions.scales import scale_costs
from .engine import CheckedData, Part, parts_of
from .forecast import Forecast
from .loading.result import LoadingResult
from .resolvability import enforce_resolved, warn_dominant_column
from .scaled import check_scale_settings, scale_table
from .score.draw import ScoreInputs
from .score.frame_check import review_frame
from .score.options import ScoreOptions
from .score.plan import ScorePlan, plan_score_options
from .score.result import ScoreResult
from .score.settings import ScoreGiven
from .scree.checks import enforce_scree
from .scree.options import ScreeOptions
from .scree.plan import ScreePlan, plan_scree_options
from .scree.result import ScreeResult

__all__ = [
    "DEFAULT_SHARES",
    "ReportOptions",
    "ReportPlan",
    "ReportReleases",
    "plan_report",
    "plan_report_options",
]

#: Default split of (eps, delta) across the releases of a report.
DEFAULT_SHARES: Mapping[str, float] = {"directions": 0.4, "scree": 0.3, "score": 0.3}


@dataclass(frozen=True, eq=False)
class ReportReleases:
    """What a report plan draws: its directions, loading, scree and score results."""

    directions: DirectionsResult
    loading: LoadingResult
    scree: ScreeResult
    score: ScoreResult


@dataclass(frozen=True, eq=False)
class ReportPlan:
    """A priced report: the plans of its releases and their tight total.

    ``directions`` is None when the report reuses an earlier release (given
    to :func:`dppca.report`), which costs nothing here. ``scales`` are the p
    pure parts of the private scales drawn first with ``scale="private"``
    (empty otherwise); they lead ``cost``'s parts.
    """

    n: int
    p: int
    privacy: PrivacyOptions
    options: ReportOptions
    shares: Mapping[str, float]
    factor: float
    directions: DirectionsPlan | None
    scree: ScreePlan
    score: ScorePlan
    cost: PrivacyCost
    forecast: Forecast
    scales: tuple[PrivacyCost, ...] = ()
    kind: str = "report"

    # the settings, read through the checked options (``delta`` checked
    # against n, ``components`` against p)
    eps = property(lambda self: self.privacy.eps, doc="The eps asked for.")
    delta = property(lambda self: self.privacy.delta, doc="The delta asked for.")
    accuracy = property(lambda self: self.privacy.accuracy, doc="What a forecast does.")
    missing = property(lambda self: self.privacy.missing, doc="How missing cells are read.")
    components = property(lambda self: self.options.components, doc="The score's two PCs.")

    @property
    def scale_eps(self) -> float:
        """The eps of the p private scales together (basic sum; 0 without them)."""
        return math.fsum(cost.eps for cost in self.scales)

    @property
    def plans(self) -> tuple[tuple[str, Any], ...]:
        """(name, plan) of each release the report makes, in draw order."""
        named = (("directions", self.directions), ("scree", self.scree), ("score", self.score))
        return tuple((name, plan) for name, plan in named if plan is not None)

    @property
    def parts(self) -> tuple[Part, ...]:
        """The noise draws of all its releases, in order."""
        return parts_of(self.cost)

    def check_input(self, X: Any) -> CheckedData:
        """Check the table once (two columns at least); a CheckedData passes through.

        :func:`dppca.report` passes the groups and a reused release in the
        CheckedData's ``extra`` (a :class:`ReportInputs`).
        """
        if isinstance(X, CheckedData):
            return X
        return CheckedData(*check_data(X, min_cols=2, missing=self.missing))

    def screen(self, data: CheckedData) -> None:
        """Nothing to refuse after the budget check (its directions are private)."""

    def review(self, result: ReportReleases) -> ReportReleases:
        """The post-release checks of the directions (when drawn here), the scree and the frame.

        The score's frame is judged as a standalone score release's is
        (:func:`~dppca.releases.score.frame_check.review_frame`, released
        values only); a problem is recorded on the score result.
        """
        if self.directions is not None:
            enforce_resolved(result.directions.resolvability, self.accuracy, result)
            warn_dominant_column(result.directions, self.accuracy)
        enforce_scree(result.scree, self.accuracy)
        try:  # the parts run quietly (accuracy "ignore"): the report judges them itself
            score = review_frame(self.score, result.score, self.accuracy)
        except InaccurateReleaseError as exc:  # the spent report goes with the error
            spent = dataclasses.replace(result, score=cast("ScoreResult", exc.result))
            raise InaccurateReleaseError(str(exc), result=spent) from None
        return result if score is result.score else dataclasses.replace(result, score=score)

    def draw(self, data: CheckedData, rng: np.random.Generator) -> ReportReleases:
        """Draw the releases in order: directions, scree, score (sharing the directions)."""
        table = CheckedData(data.values, data.variables)
        inputs = data.extra if isinstance(data.extra, ReportInputs) else ReportInputs()
        scaled: dict[str, Any] = {}
        if self.scales:
            table, scaled = scale_table(table, self.scales[0].eps, rng)
        if self.directions is not None:
            directions = dataclasses.replace(self.directions.draw(table, rng), **scaled)
        else:
            assert inputs.directions is not None  # a plan without directions is given them
            directions = inputs.directions
        loading = LoadingResult(directions=directions, components=self.components)
        given, _ = resolve_directions(directions, p=self.p, k=self.scree.k)
        scree = self.scree.draw(
            CheckedData(table.values, table.variables, (given, directions)), rng
        )
        matrix, _ = resolve_directions(directions, p=self.p, k=max(self.components))
        assert matrix is not None  # resolved from a private release
        score_inputs = ScoreInputs(
            np.ascontiguousarray(matrix[:, [c - 1 for c in self.components]]),
            directions,
            inputs.public_levels,
            inputs.levels,
            inputs.codes,
        )
        score = self.score.draw(CheckedData(table.values, table.variables, score_inputs), rng)
        if scaled:
            scree = dataclasses.replace(scree, **scaled)
            score = dataclasses.replace(score, **scaled)
        return ReportReleases(directions, loading, scree, score)


@dataclass(frozen=True, eq=False)
class ReportInputs:
    """What a report reads besides the table: a reused release and the groups (internal)."""

    directions: DirectionsResult | None = None
    public_levels: tuple[Any, ...] | None = None
    levels: tuple[Any, ...] | None = None
    codes: Any = None


def check_shares(shares: Mapping[str, float] | None, keys: Sequence[str]) -> dict[str, float]:
    """The report's split over ``keys``, normalised to add up to 1."""
    if shares is None:
        values = {k: DEFAULT_SHARES[k] for k in keys}
    else:
        if not isinstance(shares, Mapping) or set(shares) != set(DEFAULT_SHARES):
            raise ValueError(
                "shares must be a mapping with the keys 'directions', 'scree' and 'score'; "
                f"got {shares!r}."
            )
        values = {k: float(shares[k]) for k in keys}
        if not all(math.isfinite(v) and v > 0 for v in values.values()):
            raise ValueError(f"shares must be finite and > 0; got {shares!r}.")
    top = max(values.values())  # scaled first: 1e308 three times would overflow the sum
    total = math.fsum(v / top for v in values.values())
    return {k: v / top / total for k, v in values.items()}


def _check_report_shares(value: Any, name: str) -> Any:
    check_shares(value, tuple(DEFAULT_SHARES))  # normalised by the plan, over its releases
    return value


@dataclass(frozen=True, eq=False)
class ReportOptions(_Checked):
    """The settings of a report besides the shared ones, checked once when built."""

    k: int | None = None
    components: tuple[int, int] = (1, 2)
    groups_public: bool = False
    shares: Any = None
    score_range: float = 1e6

    _parameter_constraints: ClassVar[Mapping[str, Constraint]] = {
        "k": Check(check_k_option, (0, 1.5)),
        "components": Check(check_components_option, ("12", 1)),
        "groups_public": Boolean(),
        "shares": Check(_check_report_shares, ({"directions": 1.0}, {"scree": -1.0})),
        "score_range": Check(check_positive_float, (0.0, math.inf)),
    }


#: The scree and score settings of a report's own releases (checked once, here).
SCREE_DEFAULTS = ScreeOptions()
SCORE_DEFAULTS = ScoreOptions()
#: A report that reuses no directions and has no groups.
NOTHING_GIVEN = ScoreGiven()


def plan_report(
    n: int,
    p: int,
    *,
    directions_given: bool = False,
    groups: int | None = None,
    variables: tuple[str, ...] | None = None,
    **settings: Any,
) -> ReportPlan:
    """Price and forecast a :func:`dppca.report` call without any data.

    Parameters
    ----------
    n, p : int
        The public shape of the table.
    directions_given : bool, default=False
        Whether an earlier private release is reused (it costs nothing here).
    groups : int, optional
        The number of group labels (None without groups).
    variables : tuple of str, optional
        The column names, for ``bounds`` given as a mapping.
    **settings
        The options of :func:`dppca.report`: ``eps`` and ``delta`` (the
        report's whole budget), ``shares`` (the basic split over
        ``"directions"``, ``"scree"`` and ``"score"``), ``accuracy``,
        ``missing`` and the rest; they become option objects (checked
        there, once) for :func:`plan_report_options`.

    Notes
    -----
    The shares give a basic split of (eps, delta) over the releases (and,
    with ``scale="private"``, of eps over the p scales first); every eps
    share is then multiplied by the largest factor for which the tight total
    of all the parts is at most eps at delta
    (:func:`dppca.releases.composite.largest_stretch`, the solver every
    composite uses). Each
    release composes its own parts tightly within its share.

    Examples
    --------
    >>> plan = plan_report(5000, 20, eps=1.0, delta=1e-5)
    >>> [name for name, _ in plan.plans], round(plan.cost.eps, 6)
    (['directions', 'scree', 'score'], 1.0)
    >>> plan.factor > 1  # tight composition leaves more than the basic split
    True
    """
    privacy, options, design = split_settings(
        "plan_report", settings, ReportOptions, DesignOptions
    )
    given = ScoreGiven(
        directions=check_bool(directions_given, "directions_given"),
        groups=None if groups is None else check_positive_int(groups, "groups"),
    )
    return plan_report_options(n, p, privacy, options, given, variables, design)


def plan_report_options(
    n: int,
    p: int,
    privacy: PrivacyOptions,
    options: ReportOptions,
    given: ScoreGiven = NOTHING_GIVEN,
    variables: tuple[str, ...] | None = None,
    design: DesignOptions = DESIGN_DEFAULTS,
) -> ReportPlan:
    """The plan of a report from checked option objects (see :func:`plan_report`).

    Checks only what needs the shape or the other settings: ``delta`` against 1/n,
    ``components`` against p and ``scale`` against the bounds and a reused release. The
    releases (the directions with ``design``) are planned from objects derived with
    :func:`~dppca.core.options.evolve` (nothing checked again).
    """
    n, p = check_positive_int(n, "n"), check_positive_int(p, "p")
    eps = privacy.eps
    # As every release: a delta of 1/n or more lets a mechanism publish a row.
    delta = check_delta_for_n(privacy.delta, n, privacy.allow_large_delta)
    check_scale_settings(
        privacy.scale, bounds=privacy.bounds, directions=True if given.directions else None
    )
    components = check_components(options.components, p)
    keys = ("scree", "score") if given.directions else ("directions", "scree", "score")
    weights = check_shares(options.shares, keys)
    scale_share = privacy.scale_share if privacy.scale == "private" else 0.0
    names = variables if variables is not None else tuple(f"V{j + 1}" for j in range(p))
    privacy.box(names)  # the bounds checked once, here; the releases reuse the result
    # the releases' own settings: nothing refused after the whole report is checked
    inner = evolve(privacy, accuracy="ignore", allow_large_delta=True, scale=None)
    score = evolve(
        SCORE_DEFAULTS,
        components=components,
        groups_public=options.groups_public,
        score_range=options.score_range,
    )
    score_given = ScoreGiven(directions=True, groups=given.groups)

    def release_plans(t: float) -> dict[str, Any]:
        """The plans of the releases (and the scales' part) at a total of ``t * eps``."""
        rest = t * eps * (1.0 - scale_share)
        budget = {key: (rest * w, delta * w) for key, w in weights.items()}
        plans: dict[str, Any] = {}
        if scale_share > 0:
            plans["scales"] = _ScalesPart(tuple(scale_costs(names, t * eps * scale_share / p)))
        if "directions" in budget:
            e, d = budget["directions"]
            sub = evolve(inner, eps=e, delta=d, missing="refuse")
            plans["directions"] = plan_directions(n, p, sub, design.directions(), names)
        e, d = budget["scree"]
        sub = evolve(inner, eps=e, delta=d, ties="zero", missing="refuse")
        scree = evolve(SCREE_DEFAULTS, k=options.k)
        plans["scree"] = plan_scree_options(n, p, sub, scree, True, names)
        e, d = budget["score"]
        sub = evolve(inner, eps=e, delta=d, missing="refuse")
        plans["score"] = plan_score_options(n, p, sub, score, score_given, names)
        return plans

    factor, plans = largest_stretch(release_plans, _costs, eps, delta)
    costs = tuple(_costs(plans))  # the scales' parts lead
    scales = plans.pop("scales", None)
    released = f"dppca report ({', '.join(plans)}; {n} rows)"
    return ReportPlan(
        n=n,
        p=p,
        privacy=evolve(privacy, delta=delta),
        options=evolve(options, components=components),
        shares=weights,
        factor=factor,
        directions=plans.get("directions"),
        scree=plans["scree"],
        score=plans["score"],
        cost=PrivacyCost(
            eps, delta, "tight composition (accountant)", released, costs, kind="composed"
        ),
        forecast=joint_forecast("report", n, p, eps, delta, plans),
        scales=() if scales is None else scales.costs,
    )


@dataclass(frozen=True)
class _ScalesPart:
    """The p private scales of a report (pure parts of ``eps / p`` each)."""

    costs: tuple[PrivacyCost, ...]


def _costs(plans: Mapping[str, Any]) -> list[PrivacyCost]:
    """The costs of a report's entries in draw order: the scales' parts, then each plan's."""
    costs: list[PrivacyCost] = []
    for entry in plans.values():
        costs += entry.costs if isinstance(entry, _ScalesPart) else [entry.cost]
    return costs
