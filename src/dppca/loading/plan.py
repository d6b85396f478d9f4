"""The data-free side of a loading release: :func:`plan_loading`.

A loading release spends only on its direction release (:func:`dp_pc_dir`);
the coordinates are post-processing. Its plan is that of the directions,
with the loading options (``k``, ``components``) checked against ``p``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._typing import Calibration, Design, Sensitivity
from .._validation import (
    check_components,
    check_design,
    check_design_m,
    check_k,
    check_positive_int,
)
from ..accounting import PrivacyCost
from ..directions import DirectionsPlan, plan_directions
from ..forecast import Forecast

__all__ = ["LoadingPlan", "plan_loading"]


@dataclass(frozen=True, eq=False)
class LoadingPlan:
    """The data-free side of a loading release: its direction release, cost and forecast.

    Built by :func:`plan_loading` from public quantities only; the cost is the
    one :func:`dp_loading` records, since only its directions cost anything.
    """

    directions: DirectionsPlan
    k: int
    components: tuple[int, int]

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
    def parts(self) -> tuple[PrivacyCost, ...]:
        """The elementary costs, in the order the release draws them."""
        return self.cost.leaves()


def plan_loading(
    n: int,
    p: int,
    *,
    eps: float,
    delta: float,
    k: int | None = None,
    components: tuple[int, int] = (1, 2),
    calibration: Calibration = "analytic",
    sensitivity: Sensitivity = "tight",
    design: Design = "exact",
    m: int | None = None,
) -> LoadingPlan:
    """Price and forecast a :func:`dp_loading` call without any data.

    The arguments are those of :func:`dp_loading` that the release's cost or
    its checks depend on; ``n`` and ``p`` are the table's shape (public). The
    balanced design's ``m`` defaults, as there, to a value from ``n`` alone.

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
    design = check_design(design)
    if design == "balanced":
        m = check_design_m(m, n)
    plan = plan_directions(
        n, p, eps=eps, delta=delta, calibration=calibration, sensitivity=sensitivity,
        design=design, m=m,
    )  # fmt: skip
    return LoadingPlan(plan, k, components)


# Pickles and release files name the public path, which stays the same.
LoadingPlan.__module__ = "dppca.loading"
