"""The data-free side of a loading release: :func:`plan_loading`.

A loading release spends only on its direction release (:func:`dp_pc_dir`);
the coordinates are post-processing. Its plan is that of the directions,
with the loading options (``k``, ``components``) checked against ``p``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.options import (
    DirectionsOptions,
    LoadingOptions,
    PrivacyOptions,
    evolve,
    split_settings,
)
from ...core.scalar_checks import check_positive_int
from ...core.validation import check_components, check_k
from ...privacy.cost import PrivacyCost
from ..directions.plan import DirectionsPlan, plan_directions
from ..directions.release import pc_dir_checked
from ..engine import CheckedData, Part
from ..forecast import Forecast
from ..resolvability import enforce_resolved, warn_dominant_column
from .result import LoadingResult

__all__ = ["LoadingPlan", "plan_loading", "plan_loading_options"]


@dataclass(frozen=True, eq=False)
class LoadingPlan:
    """A priced loading release: its direction release and the loading options.

    Built by :func:`plan_loading` from public quantities only and run by
    :func:`dppca.releases.engine.execute`; the cost is the one :func:`dp_loading`
    records, since only its directions cost anything.
    """

    directions: DirectionsPlan
    options: LoadingOptions
    kind: str = "loading"

    # the loading settings, read through the checked options (``components``
    # checked against k by the plan)
    components = property(lambda self: self.options.components, doc="The plotted pair.")
    compare = property(lambda self: self.options.compare, doc="Non-private too.")
    sign_reference = property(lambda self: self.options.sign_reference, doc="Sign rule.")

    @property
    def k(self) -> int:
        """The number of directions released."""
        return self.directions.k

    @property
    def n(self) -> int:
        """Rows of the table (public)."""
        return self.directions.n

    @property
    def p(self) -> int:
        """Variables of the table."""
        return self.directions.p

    @property
    def accuracy(self) -> str:
        """What the executor does with a forecast problem of the directions."""
        return self.directions.accuracy

    @property
    def sigma(self) -> float:
        """The noise scale on each entry of the spherical Kendall matrix."""
        return self.directions.sigma

    @property
    def cost(self) -> PrivacyCost:
        """What the release will spend: that of its direction release."""
        return self.directions.cost

    @property
    def forecast(self) -> Forecast:
        """The data-free accuracy forecast of the directions."""
        return self.directions.forecast

    @property
    def parts(self) -> tuple[Part, ...]:
        """The noise draws, in order: those of the direction release."""
        return self.directions.parts

    def check_input(self, X: Any) -> CheckedData:
        """Check the table once; the non-private comparison needs it in memory."""
        data = self.directions.check_input(X)
        if self.compare and not isinstance(data.values, np.ndarray):
            raise TypeError(
                "compare=True needs X in memory (the non-private comparison is computed with "
                "numpy); pass X.compute() or compare=False."
            )
        return data

    def screen(self, data: CheckedData) -> None:
        """Nothing to refuse after the budget check."""

    def review(self, result: LoadingResult) -> LoadingResult:
        """The direction release's checks (see :meth:`DirectionsPlan.review`)."""
        enforce_resolved(result.directions.resolvability, self.accuracy, result)
        warn_dominant_column(result.directions, self.accuracy)
        return result

    def draw(self, data: CheckedData, rng: np.random.Generator) -> LoadingResult:
        """Release the directions; the coordinates are post-processing."""
        res = self.directions.draw(data, rng)
        nonprivate = None
        if self.compare:  # on the data the private directions saw (scaled by released scales)
            values = data.values if res.scales is None else data.values / res.scales
            nonprivate = pc_dir_checked(values, data.variables, self.k)
        return LoadingResult(
            directions=res,
            components=self.components,
            nonprivate=nonprivate,
            sign_reference=self.sign_reference,
        )


def plan_loading(
    n: int, p: int, *, variables: tuple[str, ...] | None = None, **settings: Any
) -> LoadingPlan:
    """Price and forecast a :func:`dp_loading` call without any data.

    The arguments are those of :func:`dp_loading` (without ``directions``,
    which makes no release); ``n`` and ``p`` are the table's shape (public).
    The balanced design's ``m`` defaults, as there, to a value from ``n`` alone.
    The settings become option objects (checked there, once) for
    :func:`plan_loading_options`.

    Examples
    --------
    >>> from dppca import plan_loading
    >>> plan = plan_loading(5000, 20, eps=0.5, delta=1e-5)
    >>> (plan.cost.eps, plan.cost.delta), plan.k, len(plan.parts)
    ((0.5, 1e-05), 20, 1)
    """
    privacy, directions, options = split_settings(
        "plan_loading", settings, DirectionsOptions, LoadingOptions
    )
    return plan_loading_options(n, p, privacy, directions, options, variables)


def plan_loading_options(
    n: int,
    p: int,
    privacy: PrivacyOptions,
    directions: DirectionsOptions,
    options: LoadingOptions,
    variables: tuple[str, ...] | None = None,
) -> LoadingPlan:
    """The plan of a loading release from checked option objects.

    Checks only what needs the shape: ``k`` against p and ``components``
    against ``k`` (the rest, in :func:`plan_directions`).
    """
    k = check_k(directions.k, check_positive_int(p, "p"))
    components = check_components(options.components, k)
    plan = plan_directions(n, p, privacy, evolve(directions, k=k), variables)
    first, second = components
    return LoadingPlan(plan, evolve(options, components=(int(first), int(second))))
