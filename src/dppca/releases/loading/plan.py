"""The data-free side of a loading release: :func:`plan_loading`.

A loading release spends only on its direction release (:func:`dp_pc_dir`);
the coordinates are post-processing. Its plan is that of the directions,
with the loading options (``k``, ``components``) checked against ``p``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.progress import ProgressLike
from ...core.tables import MissingRule
from ...core.types import Calibration, Design, Sensitivity, SignReference, Ties
from ...core.validation import (
    check_bool,
    check_choice,
    check_components,
    check_design,
    check_design_m,
    check_k,
    check_positive_int,
)
from ...privacy.accounting import PrivacyCost
from ..directions import DirectionsPlan, pc_dir_checked, plan_pc_dir
from ..directions.plan import SCALE_SHARE
from ..directions.tau import Estimator
from ..engine import CheckedData, Part
from ..forecast import Forecast
from ..resolvability import enforce_resolved, warn_dominant_column
from .result import LoadingResult

__all__ = ["LoadingPlan", "plan_loading"]


@dataclass(frozen=True, eq=False)
class LoadingPlan:
    """A priced loading release: its direction release and the loading options.

    Built by :func:`plan_loading` from public quantities only and run by
    :func:`dppca.releases.engine.execute`; the cost is the one :func:`dp_loading`
    records, since only its directions cost anything.
    """

    directions: DirectionsPlan
    k: int
    components: tuple[int, int]
    compare: bool = False
    sign_reference: str = "private"
    kind: str = "loading"

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
    n: int,
    p: int,
    *,
    eps: float,
    delta: float,
    k: int | None = None,
    components: tuple[int, int] = (1, 2),
    compare: bool = False,
    sign_reference: SignReference = "private",
    calibration: Calibration = "analytic",
    sensitivity: Sensitivity = "tight",
    design: Design | None = None,
    m: int | None = None,
    ties: Ties = "zero",
    bounds: Any = None,
    variables: tuple[str, ...] | None = None,
    accuracy: str = "warn",
    allow_large_delta: bool = False,
    progress: ProgressLike = None,
    scale: str | None = None,
    scale_share: float = SCALE_SHARE,
    estimator: Estimator = "kendall",
    missing: MissingRule = "refuse",
) -> LoadingPlan:
    """Price and forecast a :func:`dp_loading` call without any data.

    The arguments are those of :func:`dp_loading` (without ``directions``,
    which makes no release); ``n`` and ``p`` are the table's shape (public).
    The balanced design's ``m`` defaults, as there, to a value from ``n`` alone.

    Examples
    --------
    >>> from dppca import plan_loading
    >>> plan = plan_loading(5000, 20, eps=0.5, delta=1e-5)
    >>> (plan.cost.eps, plan.cost.delta), plan.k, len(plan.parts)
    ((0.5, 1e-05), 20, 1)
    """
    n, p = check_positive_int(n, "n"), check_positive_int(p, "p")
    k = check_k(k, p)
    components = check_components(components, k)
    compare = check_bool(compare, "compare")
    sign_reference = check_choice(sign_reference, "sign_reference", ("private", "nonprivate"))
    if design is not None:  # None: plan_pc_dir's rule on n and p
        design = check_design(design)
        if design == "balanced":
            m = check_design_m(m, n)
    plan = plan_pc_dir(
        n,
        p,
        k,
        eps=eps,
        delta=delta,
        calibration=calibration,
        sensitivity=sensitivity,
        design=design,
        m=m,
        ties=ties,
        bounds=bounds,
        variables=variables,
        accuracy=accuracy,
        allow_large_delta=allow_large_delta,
        progress=progress,
        scale=scale,
        scale_share=scale_share,
        estimator=estimator,
        missing=missing,
    )
    first, second = components
    return LoadingPlan(plan, k, (int(first), int(second)), compare, sign_reference)


# Pickles and release files name the public path, which stays the same.
LoadingPlan.__module__ = "dppca.releases.loading"
