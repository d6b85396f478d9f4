"""The draws of a score release, in their fixed order (run by :class:`ScorePlan`).

Directions (unless given), group sizes, frame, then the histograms in
method order, all from the release's noise stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from ...core.data_checks import apply_bounds, check_data
from ...core.scalar_checks import check_bool
from ...core.tables import complete_rows
from ...privacy.cost import PrivacyCost
from ..directions.given import refuse_own_directions, resolve_directions
from ..directions.plan import DirectionsPlan
from ..directions.result import DirectionsResult
from ..engine import CheckedData
from ..forecast import Forecast
from .frame import choose_frame
from .groups import _resolve_groups, release_group_sizes, resolve_group_codes
from .histograms import _normalise, bin_counts, release_histograms
from .result import NonPrivateScores, ScoreResult
from .settings import ScoreSettings

__all__ = [
    "PricedScore",
    "ScoreInputs",
    "check_score_input",
    "refuse_own_score_directions",
    "run_score",
]


class PricedScore(Protocol):
    """What the draws read of a priced score plan (:class:`~dppca.releases.score.ScorePlan`).

    The settings, the sub-plan of the directions (None when they are given),
    the number of groups priced for, and the eps and delta of each part.
    """

    @property
    def settings(self) -> ScoreSettings | None: ...
    @property
    def directions(self) -> DirectionsPlan | None: ...
    @property
    def n_groups(self) -> int | None: ...
    @property
    def n(self) -> int: ...
    @property
    def missing(self) -> str: ...
    @property
    def eps_groups(self) -> float: ...
    @property
    def eps_frame(self) -> float: ...
    @property
    def eps_method(self) -> float: ...
    @property
    def delta_method(self) -> float: ...
    @property
    def cost(self) -> PrivacyCost: ...
    @property
    def forecast(self) -> Forecast: ...


@dataclass(frozen=True, eq=False)
class ScoreInputs:
    """What a score release reads besides the table (internal, never returned).

    ``matrix`` holds the two given directions (None to release them) and
    ``dir_result`` the given private release they came from; ``levels`` and
    ``codes`` the groups (``public_levels`` when the caller listed them).
    """

    matrix: NDArray[np.float64] | None = None
    dir_result: DirectionsResult | None = None
    public_levels: tuple[Any, ...] | None = None
    levels: tuple[Any, ...] | None = None
    codes: NDArray[np.int64] | None = None

    @property
    def n_groups(self) -> int:
        return 1 if self.levels is None else len(self.levels)


def given_directions(
    directions: object, p: int, components: tuple[int, int], public_directions: object
) -> tuple[NDArray[np.float64] | None, DirectionsResult | None]:
    """The two given directions used (None to release them) and the given result."""
    given, dir_result = resolve_directions(
        directions,
        p=p,
        k=max(components),
        public_directions=check_bool(public_directions, "public_directions"),
    )
    if given is None:
        return None, dir_result
    return np.ascontiguousarray(given[:, [c - 1 for c in components]]), dir_result


def check_score_input(
    plan: PricedScore,
    X: Any,
    *,
    directions: object = None,
    public_directions: object = False,
    groups: object = None,
    group_labels: object = None,
) -> CheckedData:
    """The table, the given directions and the groups of a score release, checked once.

    A :class:`CheckedData` whose ``extra`` is already a :class:`ScoreInputs`
    passes through. Refuses inputs that do not match what the plan was
    priced for (directions given or not, the number of groups).
    """
    if isinstance(X, CheckedData) and isinstance(X.extra, ScoreInputs):
        inputs = X.extra
    else:
        if isinstance(X, CheckedData):
            if isinstance(groups, str):
                raise TypeError("groups can name a column only of a pandas DataFrame X.")
            labels = None if groups is None else _resolve_groups(X.values, groups)[1]
            table = X
        else:
            features, labels = _resolve_groups(X, groups)
            table = CheckedData(*check_data(features, min_cols=2, missing=plan.missing))
        assert plan.settings is not None  # every plan from plan_score has its settings
        n, p = table.shape
        matrix, dir_result = given_directions(
            directions, p, plan.settings.components, public_directions
        )
        public_levels, levels, codes = resolve_group_codes(labels, group_labels, n)
        inputs = ScoreInputs(matrix, dir_result, public_levels, levels, codes)
        X = CheckedData(table.values, table.variables, inputs)
    if (inputs.matrix is None) != (plan.directions is not None):
        raise ValueError(
            "the plan was priced "
            + ("with directions given" if plan.directions is None else "to release directions")
            + "; build it with directions_given matching the directions passed."
        )
    if (None if inputs.levels is None else len(inputs.levels)) != plan.n_groups:
        raise ValueError(
            f"the plan was priced for groups={plan.n_groups} but the labels give "
            f"{None if inputs.levels is None else len(inputs.levels)}; plan with that number."
        )
    assert plan.settings is not None
    if plan.eps_frame == 0 and plan.settings.public_frame is None and plan.settings.box is None:
        raise ValueError(
            "the plan was priced with a public frame or bounds (frame_given or "
            "bounds_given) but holds neither; plan with frame= or bounds= to run it."
        )
    return X


def refuse_own_score_directions(plan: PricedScore, data: CheckedData) -> None:
    """Refuse "public" directions that are the data's own (see ``refuse_own_directions``)."""
    inputs = data.extra
    if isinstance(inputs, ScoreInputs) and inputs.matrix is not None and inputs.dir_result is None:
        assert plan.settings is not None
        refuse_own_directions(data.values, inputs.matrix, plan.settings.components)


class Grid(NamedTuple):
    """A score release's frame and grid, and the exact counts per group and cell."""

    limits: Any  # ((x_lo, x_hi), (y_lo, y_hi))
    frame_source: str
    x_edges: NDArray[np.float64]
    y_edges: NDArray[np.float64]
    counts: NDArray[np.int64]


def _grid_counts(
    plan: PricedScore,
    scores: NDArray[np.float64],
    matrix: NDArray[np.float64],
    complete: NDArray[np.bool_] | None,
    inputs: ScoreInputs,
    rng: np.random.Generator,
) -> Grid:
    """The frame (drawn if private), the grid and the exact counts per group and cell.

    A row with a missing cell (``complete`` False, ``missing="zero"``) has no
    score: the frame's scans leave it out of their counts (ranks out of the
    public n) and it lands in no cell.
    """
    s = plan.settings
    assert s is not None
    limits, frame_source = choose_frame(scores, matrix, s, plan.eps_frame, rng, complete)
    (xlim, ylim), (mx, my) = limits, s.bins
    x_edges = np.linspace(xlim[0], xlim[1], mx + 1)
    y_edges = np.linspace(ylim[0], ylim[1], my + 1)
    codes = inputs.codes
    if complete is not None:
        codes = np.where(complete, 0 if codes is None else codes, -1)
    counts = bin_counts(scores, x_edges, y_edges, codes, inputs.n_groups)
    return Grid(limits, frame_source, x_edges, y_edges, counts)


def run_score(plan: PricedScore, data: CheckedData, rng: np.random.Generator) -> ScoreResult:
    """Draw every part of a priced, paid-for score plan; build the result.

    Randomness order: directions, group sizes, frame, histograms (method
    order), all from ``rng``.
    """
    s = plan.settings
    assert s is not None  # every plan from plan_score has its settings
    inputs = data.extra if isinstance(data.extra, ScoreInputs) else ScoreInputs()
    values = data.values if s.box is None else apply_bounds(data.values, s.box)
    matrix, dir_result, source = inputs.matrix, inputs.dir_result, "private"
    if matrix is None:
        assert plan.directions is not None  # a plan without given directions releases them
        dir_result = plan.directions.draw(CheckedData(values, data.variables), rng)
        matrix = np.ascontiguousarray(dir_result.directions[:, [c - 1 for c in s.components]])
    else:
        source = "public" if dir_result is None else "private release"
    with np.errstate(over="ignore", invalid="ignore"):  # no warning may depend on the data
        scores = values @ matrix
    # missing="zero": a row with a missing cell has no score; it lands in no bin
    complete = complete_rows(values)
    private_groups = inputs.levels is not None and not s.groups_public
    exact_sizes, group_sizes = release_group_sizes(
        inputs.codes,
        inputs.levels,
        plan.n,
        private=private_groups,
        eps_g=plan.eps_groups,
        rng=rng,
    )
    grid = _grid_counts(plan, scores, matrix, complete, inputs, rng)
    (xlim, ylim), counts = grid.limits, grid.counts
    probs, noise = release_histograms(
        counts,
        s.methods,
        eps_m=plan.eps_method,
        delta_m=plan.delta_method,
        calibration=s.calibration,
        rng=rng,
    )
    nonprivate = None
    if s.compare:
        nonprivate = NonPrivateScores(
            scores=scores,
            group_codes=inputs.codes,
            prob=_normalise(counts.astype(np.float64)),
            group_sizes=exact_sizes,
        )
    groups_source = None
    if inputs.levels is not None:
        groups_source = "data" if inputs.public_levels is None else "public"
    return ScoreResult(
        components=s.components,
        n=plan.n,
        xlim=(float(xlim[0]), float(xlim[1])),
        ylim=(float(ylim[0]), float(ylim[1])),
        x_edges=grid.x_edges,
        y_edges=grid.y_edges,
        methods=s.methods,
        probs=MappingProxyType(probs),
        groups=inputs.levels,
        group_sizes=group_sizes,
        groups_public=s.groups_public,
        directions=matrix,
        directions_source=source,
        directions_release=dir_result,
        noise=MappingProxyType(noise),
        cost=plan.cost,
        nonprivate=nonprivate,
        frame_source=grid.frame_source,
        bounds=None if s.box is None else np.column_stack(s.box),
        forecast=plan.forecast,
        variables=data.variables,
        groups_source=groups_source,
    )
