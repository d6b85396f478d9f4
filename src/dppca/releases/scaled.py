"""Releases on privately scaled data: a plan of the scale parts and a release's plan.

:func:`scaled_plan` wraps the plan of a release (a scree, a score plot)
priced at its share of eps: run by :func:`dppca.releases.engine.execute`, the
wrapper first releases one scale per column
(:func:`dppca.releases.directions.scales.draw_private_scales`), then lets the inner
plan draw on the data divided by them (post-processing of the scales) and
returns the inner result with ``scales`` and ``scale_note`` filled in. Its
cost is the tight composition of the p pure scale parts and the inner
plan's parts. A direction release does the same inside its own plan
(:func:`dppca.plan_pc_dir` with ``scale="private"``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.options import SCALE_SHARE
from ..privacy.cost import PrivacyCost
from ..privacy.totals import compose_tight
from .composite import largest_stretch
from .directions.plan import check_scale_option, check_share
from .directions.scales import draw_private_scales, scale_costs
from .engine import CheckedData, Part, parts_of

if TYPE_CHECKING:
    from .engine import ReleasePlan
    from .forecast import Forecast

__all__ = [
    "ScaledPlan",
    "check_scale_settings",
    "scale_table",
    "scaled_plan",
    "with_private_scales",
]


@dataclass(frozen=True, eq=False)
class ScaledPlan:
    """A release's plan preceded by the private scales of its columns."""

    inner: ReleasePlan
    scale_eps: float
    cost: PrivacyCost

    @property
    def kind(self) -> str:
        """The inner release's kind."""
        return self.inner.kind

    @property
    def n(self) -> int:
        """Rows (public)."""
        return self.inner.n

    @property
    def p(self) -> int:
        """Columns (public)."""
        return self.inner.p

    @property
    def forecast(self) -> Forecast:
        """The inner release's forecast, at its own share of eps."""
        return self.inner.forecast

    @property
    def accuracy(self) -> str:
        """What the executor does with a forecast problem (the inner plan's setting)."""
        return self.inner.accuracy

    @property
    def parts(self) -> tuple[Part, ...]:
        """The p scale parts, then the inner release's parts."""
        return parts_of(self.cost)

    def check_input(self, X: Any, **inputs: Any) -> CheckedData:
        """The inner plan's check; the scales need the table in memory."""
        data = self.inner.check_input(X, **inputs)
        if not isinstance(data.values, np.ndarray):
            raise TypeError(
                "scale='private' is supported for in-memory data only; compute the "
                "Dask array first or pass scale=None."
            )
        return data

    def screen(self, data: CheckedData) -> None:
        """The inner plan's refusal, if any (before any noise)."""
        self.inner.screen(data)

    def review(self, result: Any) -> Any:
        """The inner release's post-release checks (the scales need none)."""
        return self.inner.review(result)

    def draw(self, data: CheckedData, rng: np.random.Generator) -> Any:
        """Release the scales, then the inner release on the scaled data."""
        scaled, fields = scale_table(data, self.scale_eps / self.p, rng)
        return dataclasses.replace(self.inner.draw(scaled, rng), cost=self.cost, **fields)


def scale_table(
    data: CheckedData, eps_each: float, rng: np.random.Generator
) -> tuple[CheckedData, dict[str, Any]]:
    """Release one private scale per column, and the table divided by them.

    Returns the scaled table (post-processing of the scales) and the result
    fields the scales fill: ``scales`` and ``scale_note``.
    """
    p = data.values.shape[1]
    scales = draw_private_scales(data.values, eps_each=eps_each, units=np.ones(p), rng=rng)
    scaled = CheckedData(scales.apply(data.values), data.variables, data.extra)
    return scaled, {"scales": scales.divisors, "scale_note": scales.note(data.variables)}


def scaled_plan(
    inner: ReleasePlan, scale_eps: float, delta: float, variables: tuple[str, ...]
) -> ScaledPlan:
    """``inner`` preceded by p private scales of ``scale_eps / p`` each (pure DP)."""
    costs = [*scale_costs(variables, scale_eps / inner.p), inner.cost]
    cost = compose_tight(
        costs, delta, released=f"private scales ({inner.p}); " + inner.cost.released
    )
    return ScaledPlan(inner, scale_eps, cost)


def check_scale_settings(scale: object, *, bounds: object, directions: object) -> str | None:
    """``scale`` of a scree or score release: None or ``"private"``, alone."""
    scale = check_scale_option(scale)
    if scale == "private" and bounds is not None:
        raise ValueError(
            "scale='private' with bounds is not supported here (the bounds are in the "
            "data's units); pass one of them."
        )
    if scale == "private" and directions is not None:
        raise ValueError(
            "scale='private' needs the release's own directions on the scaled data; pass "
            "directions=None (or release the directions with scale='private' and reuse "
            "their scales by dividing the data yourself)."
        )
    return scale


def with_private_scales(
    build: Callable[[float], ReleasePlan],
    eps: float,
    scale: str | None,
    variables: tuple[str, ...],
    share: float = SCALE_SHARE,
) -> ReleasePlan:
    """The plan ``build(eps)``; with ``scale="private"``, the scales come first.

    ``build`` makes the release's plan at a given eps. With ``scale="private"``
    the basic split gives the release ``(1 - share) * eps`` and the p private
    scales ``share * eps`` in all (:func:`scaled_plan`); both are then
    stretched by the largest factor whose tight total is still ``eps``
    (:func:`dppca.releases.composite.largest_stretch`), so the release records
    and uses all of its eps (the basic split alone left about a fifth unused).
    ``scale`` must already be checked (:func:`check_scale_settings`).
    """
    if scale != "private":
        return build(eps)
    share = check_share(share)
    delta = build(eps * (1.0 - share)).cost.delta

    def stretched(t: float) -> ScaledPlan:
        inner = build(t * eps * (1.0 - share))
        return scaled_plan(inner, t * eps * share, delta, variables)

    _, plan = largest_stretch(stretched, lambda plan: [plan.cost], eps, delta)
    return plan
