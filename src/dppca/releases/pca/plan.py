"""The plan of one private PCA: :func:`plan_pca` and :class:`PCAPlan`.

The fit is a :class:`~dppca.releases.composite.Composite` whose steps are the
existing release plans, priced once at the stretch where their tight total is
the fit's eps (:func:`~dppca.releases.composite.largest_stretch`):

- ``standardized``: (private scales, when a score plot needs them and no
  public scales are given), Kendall's tau directions, the score plot on the
  scaled table. The scree is computed from the tau release (no step).
- ``units``: spherical Kendall directions, a clipped scree along them, the
  score plot, all on the table as given.
- ``scaled``: the same on the table divided by public scales.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.data_checks import check_data
from ...core.options import (
    DESIGN_DEFAULTS,
    SCALE_SHARE,
    DesignOptions,
    PrivacyOptions,
    evolve,
    split_settings,
)
from ...core.scalar_checks import check_positive_int
from ...core.validation import check_delta_for_n
from ...privacy.cost import PrivacyCost, compose
from ...privacy.quantiles import ladder_failure_bound
from ..composite import Composite, composed_cost, joint_forecast, largest_stretch
from ..directions.plan import plan_directions
from ..directions.scales import SCALE_QUANTILE, scale_costs, scale_ladder
from ..engine import CheckedData
from ..forecast import Forecast
from ..scaled import scale_table
from ..score.options import ScoreOptions
from ..score.plan import plan_score_options
from ..score.settings import ScoreGiven
from ..scree.options import ScreeOptions
from ..scree.plan import plan_scree_options
from .draw import assemble_fit, axis_sds, feed_step, review_fit
from .frame import FitFrameScore, fit_frame_score
from .options import PCAOptions
from .result import ANALYSES, ESTIMATES
from .settings import PCASettings

__all__ = [
    "PCAPlan",
    "PrivateScalesStep",
    "plan_pca",
]


#: A fit's private scales whose failure bound exceeds this are a forecast problem.
SCALE_FAILURE_LIMIT = 0.1


def scale_failure(n: int, p: int, eps: float) -> float:
    """Data-free bound on the chance that a private scale stops far below its column.

    Each column's scale is a noisy scan up the public ladder
    (:func:`dppca.releases.directions.scales.scale_ladder`) with ``eps / p``
    (half for the target, half for the scan) over ``m = n // 2`` pair
    differences; each candidate below the differences stops it with
    probability at most ``exp(-eps_2 q m)``
    (:func:`dppca.privacy.quantiles.ladder_failure_bound`). Assumed: the
    column's scale is at least 1 in its own units, so the candidates below it
    are those below 1. Summed over the p columns.
    """
    below = int(np.sum(scale_ladder() < 1.0))
    eps2 = eps / p / 2
    return min(1.0, p * ladder_failure_bound(below, n // 2, SCALE_QUANTILE, eps2))


@dataclass(frozen=True, eq=False)
class PrivateScalesStep:
    """The p private scales of a fit: one pure part per column (a step of the plan)."""

    eps: float
    p: int
    cost: PrivacyCost
    n: int = 0

    @property
    def forecast(self) -> Forecast:
        """The scales' failure bound, and a problem when it is large (data-free)."""
        fail = scale_failure(self.n, self.p, self.eps)
        problems: tuple[str, ...] = ()
        if fail > SCALE_FAILURE_LIMIT:
            problems = (
                f"the {self.p} private scales may fail with probability up to {fail:.2g} "
                f"(eps {self.eps:.3g} for n={self.n}: a scale far below its column leaves "
                "the score plot in the wrong units); give public scales= or bounds= "
                "(a codebook's), or score=False.",
            )
        return Forecast(
            "scales",
            self.n,
            self.p,
            self.eps,
            0.0,
            quantities={"scale_failure": fail},
            descriptions={
                "scale_failure": "bound on the chance that a private scale stops far "
                "below its column (assuming scales of at least 1 unit)"
            },
            problems=problems,
        )

    def draw(self, data: CheckedData, rng: np.random.Generator) -> tuple[CheckedData, dict]:
        """Release the scales; the table divided by them (post-processing)."""
        return scale_table(data, self.eps / self.p, rng)

    def review(self, result: Any) -> Any:
        """The scales need no post-release check."""
        return result


def _scales_step(n: int, eps: float, variables: tuple[str, ...]) -> PrivateScalesStep:
    p = len(variables)
    costs = scale_costs(variables, eps / p)
    cost = compose(costs, released=f"private scales ({p})")
    return PrivateScalesStep(eps, p, cost, n)


@dataclass(frozen=True, eq=False)
class PCAPlan(Composite):
    """A priced private PCA: its steps, their tight total and what it estimates.

    Built by :func:`plan_pca` from public quantities only and run by
    :func:`dppca.releases.engine.execute`; :func:`dppca.dp_pca` is exactly that.
    """

    settings: PCASettings | None = None
    stretch: float = 1.0
    notes: tuple[str, ...] = ()
    kind: str = "pca"

    @property
    def analysis(self) -> str:
        """``"standardized"``, ``"units"`` or ``"scaled"``."""
        assert self.settings is not None
        return self.settings.analysis

    @property
    def shares(self) -> Mapping[str, float]:
        """The basic split of eps over the parts that spend (see :class:`PCASettings`)."""
        return {} if self.settings is None else self.settings.shares

    @property
    def estimates(self) -> str:
        """What the fit estimates, in one sentence (before any data are read)."""
        return ESTIMATES[self.analysis]

    def check_input(self, X: Any, **inputs: Any) -> CheckedData:
        """Check the table once (4 rows and 2 columns at least, in memory).

        A fit reads nothing but the table: any other input is refused.
        """
        if inputs:
            raise TypeError(f"a PCA fit reads only the table; got {sorted(inputs)!r}.")
        if isinstance(X, CheckedData):
            return X
        missing = "refuse" if self.settings is None else self.settings.missing
        return CheckedData(*check_data(X, min_rows=4, min_cols=2, missing=missing))

    def feed(self, name: str, data: CheckedData, drawn: Mapping[str, Any]) -> CheckedData:
        """The table each step reads: raw, divided by public or private scales."""
        return feed_step(self, name, data, drawn)

    def assemble(self, data: CheckedData, drawn: Mapping[str, Any]) -> Any:
        """The fit's result from its steps' results."""
        return assemble_fit(self, data, drawn)

    def draw_step(
        self,
        name: str,
        plan: Any,
        data: CheckedData,
        drawn: Mapping[str, Any],
        rng: np.random.Generator,
    ) -> Any:
        """Draw a step; a score step with a derived frame reads the fit's variances."""
        if isinstance(plan, FitFrameScore):
            return plan.draw(data, rng, sds=axis_sds(self, drawn))
        return plan.draw(data, rng)

    def review(self, result: Any) -> Any:
        """The steps' post-release checks, then the frame's check against the variances."""
        return review_fit(self, result)


def plan_pca(
    n: int, p: int, *, variables: tuple[str, ...] | None = None, **settings: Any
) -> PCAPlan:
    """Price and forecast a :func:`dppca.dp_pca` fit without any data.

    Parameters are those of :func:`dppca.dp_pca` with the data replaced by its
    public shape ``n`` x ``p`` (``variables`` name the columns, ``V1 .. Vp``
    by default). The plan's ``estimates`` says what the fit estimates and its
    ``cost`` is what the fit records: exactly ``(eps, delta)``. The settings
    become option objects (checked there, once) for :func:`plan_pca_options`.

    Examples
    --------
    >>> plan = plan_pca(392, 6, eps=1.0, delta=1e-6)
    >>> plan.analysis, [name for name, _ in plan.steps], round(plan.cost.eps, 6)
    ('standardized', ['directions'], 1.0)
    >>> plan.notes[0][:16]  # private scales would not serve at 392 rows
    'no score plot: t'
    >>> [name for name, _ in plan_pca(5000, 6, eps=1.0, delta=1e-6).steps]
    ['scales', 'directions', 'score']
    >>> plan_pca(392, 6, eps=1.0, delta=1e-6, standardize=False).estimates[:33]
    'the PCA of the table in the units'
    """
    privacy, options, design = split_settings("plan_pca", settings, PCAOptions, DesignOptions)
    return plan_pca_options(n, p, privacy, options, variables, design)


def plan_pca_options(
    n: int,
    p: int,
    privacy: PrivacyOptions,
    options: PCAOptions,
    variables: tuple[str, ...] | None = None,
    design: DesignOptions = DESIGN_DEFAULTS,
) -> PCAPlan:
    """The plan of a private PCA fit from checked option objects (see :func:`plan_pca`).

    ``design`` is the pair design of the fit's directions (the scree and
    the score reuse them).
    """
    n, p = check_positive_int(n, "n"), check_positive_int(p, "p")
    eps = privacy.eps
    delta = check_delta_for_n(privacy.delta, n, privacy.allow_large_delta)
    names = variables if variables is not None else tuple(f"V{j + 1}" for j in range(p))
    if len(names) != p:
        raise ValueError(f"variables must name p = {p} columns; got {len(names)}.")
    settings = PCASettings(options=options, privacy=privacy, variables=names)
    settings, notes = _auto_score(settings, n, eps, auto=options.score is None)
    shares = settings.shares
    gaussian = [name for name in settings.parts if name not in ("scales", "frame")]
    delta_of = {name: delta * shares[name] / sum(shares[g] for g in gaussian) for name in gaussian}

    # the steps' shared settings (the rest keep their defaults), checked once here
    common = evolve(
        privacy, allow_large_delta=True, ties="zero", scale=None, scale_share=SCALE_SHARE
    )
    both = (common, _in_units(common, settings))

    def build(t: float) -> dict[str, Any]:
        return _steps(n, p, t * eps, shares, delta_of, settings, both, design)

    def costs_of(steps: Mapping[str, Any]) -> list[PrivacyCost]:
        return [plan.cost for plan in steps.values()]

    stretch, steps = largest_stretch(build, costs_of, eps, delta)
    released = f"dppca private PCA ({settings.analysis}; {', '.join(steps)})"
    return PCAPlan(
        n=n,
        p=p,
        privacy=evolve(privacy, delta=delta),
        steps=tuple(steps.items()),
        cost=composed_cost(costs_of(steps), eps, delta, released),
        forecast=joint_forecast("pca", n, p, eps, delta, steps),
        accuracy=settings.accuracy,
        settings=settings,
        stretch=stretch,
        notes=notes,
    )


def _auto_score(
    settings: PCASettings, n: int, eps: float, *, auto: bool
) -> tuple[PCASettings, tuple[str, ...]]:
    """The settings without a score plot when its private scales are forecast to fail.

    Only with ``score=None`` (auto) and a standardised fit that would need
    private scales; data-free (n, p, eps and the split).
    """
    if not auto or settings.scale_source != "private":
        return settings, ()
    fail = scale_failure(n, len(settings.variables), eps * settings.shares["scales"])
    if fail <= SCALE_FAILURE_LIMIT:
        return settings, ()
    note = (
        "no score plot: the standardised score plot needs the columns on comparable "
        f"scales, and private scales at n={n} with this budget would fail with "
        f"probability up to {fail:.2g} (data-free bound). Give public scales= or "
        "bounds= (a codebook's) for a score plot, or score=True to release it "
        "with private scales anyway; the budget goes to the other parts."
    )
    no_score = evolve(settings.options, score=False)  # private scales serve nothing else
    return dataclasses.replace(settings, options=no_score), (note,)


def _in_units(privacy: PrivacyOptions, settings: PCASettings) -> PrivacyOptions:
    """The options with the public bounds in the units the score and scree read.

    Divided by the public scales when the fit is scaled (a derived value,
    checked once where it is made); otherwise the same bounds, whose check
    is reused.
    """
    if settings.box is None or settings.scales is None:
        return privacy
    lower, upper = (side / settings.scales for side in settings.box)
    return privacy.with_checked_box((lower, upper), settings.variables)


#: The scree and score settings of a fit's own releases (checked once, here).
_SCREE = ScreeOptions()
_SCORE = ScoreOptions()


def _steps(
    n: int,
    p: int,
    eps: float,
    shares: Mapping[str, float],
    delta_of: Mapping[str, float],
    s: PCASettings,
    privacy: tuple[PrivacyOptions, PrivacyOptions],
    design: DesignOptions = DESIGN_DEFAULTS,
) -> dict[str, Any]:
    """The steps' plans at a total eps (before the stretch is solved, ``t eps``).

    ``privacy`` holds the fit's checked settings twice: with the bounds as
    given and in the units the score and scree read (:func:`_in_units`).
    The steps' options are derived from checked ones with
    :func:`~dppca.core.options.evolve`, so nothing is checked again however
    often the stretch solver calls this.
    """
    raw = s.analysis == "standardized"  # the directions of tau read the table as given
    given, units = privacy
    steps: dict[str, Any] = {}
    if "scales" in shares:
        steps["scales"] = _scales_step(n, eps * shares["scales"], s.variables)
    steps["directions"] = plan_directions(
        n,
        p,
        evolve(
            given if raw else units, eps=eps * shares["directions"], delta=delta_of["directions"]
        ),
        design.directions(k=s.k, estimator="tau" if raw else "kendall"),
        s.variables,
    )
    if "scree" in shares:
        steps["scree"] = plan_scree_options(
            n,
            p,
            evolve(units, eps=eps * shares["scree"], delta=delta_of["scree"]),
            evolve(_SCREE, k=s.k, compare=s.compare),
            True,
            s.variables,
        )
    if "score" in shares:
        score = plan_score_options(
            n,
            p,
            evolve(units, eps=eps * shares["score"], delta=delta_of["score"]),
            evolve(_SCORE, bins=s.bins, components=s.components, compare=s.compare),
            ScoreGiven(directions=True, frame="frame" in shares),
            s.variables,
        )
        if "frame" in shares:
            steps["score"] = fit_frame_score(score, eps * shares["frame"], s.components)
        else:
            steps["score"] = score
    return steps


assert set(ANALYSES) == {"standardized", "units", "scaled"}
