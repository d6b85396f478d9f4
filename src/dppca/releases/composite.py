"""Composite releases: plans made of sub-plans, priced once to the tight total.

A composite release (a one-fit PCA, a report) draws several sub-releases from
one table, one noise stream and one budget. Two pieces are shared here:

- :func:`largest_stretch`, the one solver for "the largest factor ``t`` by
  which every eps share of a basic split can be multiplied while the tight
  total of all the parts stays at most ``eps``". It works on whole sub-plans
  (built at ``t``), so a sub-plan is priced by its own ``plan_*`` function and
  never re-priced by hand.
- :class:`Composite`, a plan whose ``steps`` are named sub-plans drawn in
  order. A subclass says how each step reads the table and the earlier steps'
  results (:meth:`Composite.feed`) and how the results become the composite's
  result (:meth:`Composite.assemble`); the drawing, the reviews, the parts and
  the cost are the sub-plans' own, composed once.

Everything here reads public quantities only (settings, n, p, eps, delta).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..core.lazy import scipy_optimize as optimize
from ..privacy.cost import PrivacyCost
from ..privacy.totals import tight_total
from .engine import CheckedData, Part, parts_of
from .forecast import Findings, Forecast

if TYPE_CHECKING:
    from ..core.options import PrivacyOptions

__all__ = ["Composite", "composed_cost", "joint_forecast", "largest_stretch"]

_T = TypeVar("_T")

# Relative tolerance of the stretch (on log t): the recorded total is within
# about this fraction of eps below it.
_XTOL = 1e-7


def largest_stretch(
    build: Callable[[float], _T],
    costs: Callable[[_T], Sequence[PrivacyCost]],
    eps: float,
    delta: float,
) -> tuple[float, _T]:
    """The largest stretch ``t >= 1`` whose parts compose tightly to at most ``eps``.

    Parameters
    ----------
    build : callable
        ``build(t)`` returns the sub-plans (any object) with every eps share
        of a basic split multiplied by ``t`` and the deltas unchanged;
        ``build(1.0)`` must be a basic split of ``(eps, delta)`` (the parts'
        eps add up to at most ``eps``, their deltas to at most ``delta``).
    costs : callable
        ``costs(built)``: the costs of the built sub-plans, in draw order.
    eps, delta : float
        The total the composite is charged.

    Returns
    -------
    t : float
        The stretch, to a relative ``1e-7``; 1 when nothing can be gained.
    built : object
        ``build(t)``, whose tight total at ``delta`` is at most ``eps``.

    Notes
    -----
    Data-free. ``t = 1`` always fits: a basic split's claims add up to
    ``(eps, delta)`` and the tight total never exceeds the basic one. The
    tight total grows with ``t``, so a root finder on ``log t`` brackets the
    largest affordable stretch; a last step down makes sure the answer fits.

    Examples
    --------
    >>> from dppca.privacy.accounting import PrivacyCost
    >>> def build(t):
    ...     return [PrivacyCost(0.5 * t, 0.0, "pure", "a", kind="pure")] * 2
    >>> t, built = largest_stretch(build, lambda b: b, 1.0, 1e-6)
    >>> round(t, 3)  # two pure parts: tight composition is basic composition here
    1.0
    """
    cache: dict[float, tuple[float, _T]] = {}

    def gap(log_t: float) -> float:
        if log_t not in cache:
            built = build(math.exp(log_t))
            cache[log_t] = (tight_total(costs(built), delta)[0] - eps, built)
        return cache[log_t][0]

    if gap(0.0) > eps * 1e-9:
        raise RuntimeError("the basic split of the composite exceeds its eps.")
    if gap(0.0) >= -eps * 1e-9:
        return 1.0, cache[0.0][1]
    lo, hi = 0.0, math.log(1.5)
    while gap(hi) <= 0:
        lo, hi = hi, hi + math.log(1.5)
        if hi > 20:  # pragma: no cover - parts that cost nothing at any eps
            return math.exp(lo), cache[lo][1]
    root = optimize.brentq(gap, lo, hi, xtol=_XTOL)
    while gap(root) > 0:
        root -= _XTOL
    return math.exp(root), cache[root][1]


def composed_cost(
    costs: Sequence[PrivacyCost], eps: float, delta: float, released: str
) -> PrivacyCost:
    """The cost a composite records: ``(eps, delta)`` with its parts' costs inside.

    ``costs`` must compose tightly to at most ``eps`` at ``delta`` (as
    :func:`largest_stretch` ensures); the record is the composite's whole
    budget, so a fit records exactly the eps it was given.
    """
    return PrivacyCost(
        eps,
        delta,
        "tight composition (accountant)",
        released,
        tuple(costs),
        kind="composed",
    )


def joint_forecast(
    kind: str, n: int, p: int, eps: float, delta: float, plans: Mapping[str, Any]
) -> Forecast:
    """The sub-plans' forecasts in one: quantities and problems prefixed by the step."""
    found = Findings()
    for name, plan in plans.items():
        forecast = getattr(plan, "forecast", None)
        if forecast is None:
            continue
        for key, value in forecast.quantities.items():
            found.add(f"{name}: {key}", value, forecast.descriptions.get(key, ""))
        found.problems += [f"{name}: {problem}" for problem in forecast.problems]
    return found.forecast(kind, n, p, eps, delta)


@dataclass(frozen=True, eq=False)
class Composite:
    """A plan of named sub-plans, drawn in order from one stream and one budget.

    Subclasses fill in :meth:`check_input`, :meth:`feed` and
    :meth:`assemble` (and may extend :meth:`review`). ``steps`` are the
    sub-plans in draw order (a step may also be any object with ``draw`` and
    ``review``, such as the private scales); ``cost`` is the composite's
    record (:func:`composed_cost`), whose parts are the steps' costs.
    ``privacy`` is the composite's checked privacy settings (its delta the
    one checked against n); the budget reads through it.
    """

    n: int
    p: int
    privacy: PrivacyOptions
    steps: tuple[tuple[str, Any], ...]
    cost: PrivacyCost
    forecast: Forecast
    accuracy: str = "warn"
    kind: str = "composite"

    # The budget reads through the checked settings.
    eps = property(lambda self: self.privacy.eps, doc="The composite's total eps.")
    delta = property(lambda self: self.privacy.delta, doc="The composite's total delta.")

    @property
    def plans(self) -> dict[str, Any]:
        """The sub-plans by name, in draw order."""
        return dict(self.steps)

    @property
    def parts(self) -> tuple[Part, ...]:
        """The noise draws of all the steps, in order."""
        return parts_of(self.cost)

    def check_input(self, X: Any, **inputs: Any) -> CheckedData:  # pragma: no cover
        """Check the table once (the subclass's rule)."""
        raise NotImplementedError

    def screen(self, data: CheckedData) -> None:
        """Nothing to refuse after the budget check, by default."""

    def feed(self, name: str, data: CheckedData, drawn: Mapping[str, Any]) -> CheckedData:
        """What step ``name`` draws from: the table, by default."""
        return data

    def assemble(self, data: CheckedData, drawn: Mapping[str, Any]) -> Any:
        """The composite's result from the steps' results (by default, the mapping)."""
        return dict(drawn)

    def draw(self, data: CheckedData, rng: np.random.Generator) -> Any:
        """Draw every step in order from the one noise stream; assemble the result."""
        drawn: dict[str, Any] = {}
        for name, plan in self.steps:
            drawn[name] = self.draw_step(name, plan, self.feed(name, data, drawn), drawn, rng)
        return self.assemble(data, drawn)

    def draw_step(
        self,
        name: str,
        plan: Any,
        data: CheckedData,
        drawn: Mapping[str, Any],
        rng: np.random.Generator,
    ) -> Any:
        """Draw one step from what it reads (by default ``plan.draw(data, rng)``)."""
        return plan.draw(data, rng)

    def review(self, result: Any) -> Any:
        """Nothing to check, by default (a subclass runs its steps' reviews)."""
        return result
