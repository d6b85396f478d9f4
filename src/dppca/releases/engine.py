"""The release engine: every private release is a plan of parts, run by one executor.

A *plan* is built from a release's settings and the public shape (n, p) of
the data alone, before any data are read. It knows its price (``cost``, the
tight composition of its parts), its data-free ``forecast`` and its
``parts``: one :class:`Part` per noise draw, in the order the release draws
them, each with its noise (kind, sensitivity, scale) and its cost. Composite
releases hold the plans of their sub-releases (a scree its directions, a
report its three releases); their parts are the sub-plans' parts in order.

:func:`execute` is the only code that runs a plan. It checks the data once
(through the plan's own ``check_input``), refuses a forecast problem or an
unaffordable cost before any data work, resolves the noise stream once,
lets the plan draw its parts in order, charges the budget once with
exactly ``plan.cost``, lets the plan review what it released (the free
post-release checks of :mod:`dppca.releases.resolvability` and the scree's own, which
read only released values and may warn, or raise with the spent result
attached) and returns the plan's frozen result. What a preview
or ``--dry-run`` shows, what the budget checks and what it records are
therefore one object.

The noise stream is ``check_random_state(random_state)``, resolved once per
release. Post-processing draws (noise-sensitivity views, synthetic points)
never use it: :func:`dppca.core.validation.post_processing_rng` derives a
separate stream from the same ``random_state``, and the post-release check
its own (:func:`dppca.releases.resolvability.resolvability_rng`), neither advancing
the noise stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ..core.types import RandomStateLike
from ..core.validation import check_budget, check_random_state
from ..kernels.threads import hold_blas
from .forecast import enforce

if TYPE_CHECKING:
    from ..privacy.accounting import Accountant
    from ..privacy.cost import PrivacyCost
    from .forecast import Forecast

__all__ = [
    "CheckedData",
    "Part",
    "ReleasePlan",
    "execute",
    "parts_of",
]


@dataclass(frozen=True, eq=False)
class Part:
    """One noise draw of a release: what it releases, its noise and its cost.

    Attributes
    ----------
    name : str
        What the draw releases (the cost's ``released``).
    cost : PrivacyCost
        Its elementary cost: ``kind`` (``"gaussian"``, ``"laplace"``,
        ``"pure"``), ``sensitivity`` and ``sigma``/``scale`` or the noise
        ``multiplier`` when the sensitivity is set by an earlier private part.
    """

    name: str
    cost: PrivacyCost

    @property
    def eps(self) -> float:
        """The part's own epsilon (its share of the plan's tight total)."""
        return self.cost.eps

    @property
    def delta(self) -> float:
        """The part's own delta."""
        return self.cost.delta

    @property
    def noise(self) -> str | None:
        """The noise kind: ``"gaussian"``, ``"laplace"``, ``"pure"`` or None (generic)."""
        return self.cost.kind

    @property
    def sensitivity(self) -> float | None:
        """The sensitivity the noise is calibrated to (None when set at run time)."""
        return self.cost.sensitivity

    @property
    def scale(self) -> float | None:
        """The Gaussian sigma or Laplace scale (None when set at run time or pure)."""
        return self.cost.sigma if self.cost.sigma is not None else self.cost.scale

    def __repr__(self) -> str:
        return f"Part({self.name!r}, {self.noise}, eps={self.eps:.4g}, delta={self.delta:.3g})"


def parts_of(cost: PrivacyCost) -> tuple[Part, ...]:
    """The parts of a plan whose price is ``cost``: one per elementary cost, in order."""
    return tuple(Part(leaf.released, leaf) for leaf in cost.leaves())


@dataclass(frozen=True, eq=False)
class CheckedData:
    """Data checked once for a release (internal; never part of a result).

    ``values`` is a float64 ndarray (only read, possibly the caller's own
    array) or a validated Dask array; ``variables`` its column labels;
    ``extra`` what the release's check read besides the table (group codes).
    """

    values: Any
    variables: tuple[str, ...]
    extra: Any = None

    @property
    def shape(self) -> tuple[int, int]:
        """(n, p) of the checked table."""
        n, p = self.values.shape
        return int(n), int(p)


@runtime_checkable
class ReleasePlan(Protocol):
    """What :func:`execute` needs of a plan (every ``plan_*`` function returns one).

    Attributes
    ----------
    kind : str
        ``"directions"``, ``"loading"``, ``"scree"``, ``"score"`` or ``"report"``.
    n, p : int
        The public shape the plan is priced for.
    cost : PrivacyCost
        Exactly what the release records.
    forecast : Forecast
        The data-free accuracy forecast.
    parts : tuple of Part
        The noise draws, in the order the release makes them.
    accuracy : {"warn", "error", "ignore"}
        What the executor does with a forecast problem.
    """

    @property
    def kind(self) -> str: ...  # pragma: no cover - protocol

    @property
    def n(self) -> int: ...  # pragma: no cover - protocol

    @property
    def p(self) -> int: ...  # pragma: no cover - protocol

    @property
    def cost(self) -> PrivacyCost: ...  # pragma: no cover - protocol

    @property
    def forecast(self) -> Forecast: ...  # pragma: no cover - protocol

    @property
    def parts(self) -> tuple[Part, ...]: ...  # pragma: no cover - protocol

    @property
    def accuracy(self) -> str: ...  # pragma: no cover - protocol

    def check_input(self, *args: Any, **kwargs: Any) -> CheckedData:  # pragma: no cover
        """``check_input(X, **inputs)``: the table and the release's other inputs, checked once.

        See :func:`execute`; a kind takes only its own inputs.
        """

    def screen(self, data: CheckedData) -> None:  # pragma: no cover - protocol
        """A data-dependent refusal after the budget check, before any noise (or nothing)."""

    def draw(self, data: CheckedData, rng: np.random.Generator) -> Any: ...  # pragma: no cover

    def review(self, result: Any) -> Any:  # pragma: no cover - protocol
        """The post-release checks: read only released values, warn or raise, return ``result``.

        Runs after the charge, so ``accuracy="error"`` raises an
        :class:`~dppca.core.exceptions.InaccurateReleaseError` carrying the spent result.
        """


def execute(
    plan: ReleasePlan,
    X: Any,
    *,
    budget: Accountant | None = None,
    random_state: RandomStateLike = None,
    **inputs: Any,
) -> Any:
    """Run a release plan on data: the one path every private release takes.

    Parameters
    ----------
    plan : ReleasePlan
        From a ``plan_*`` function (:func:`dppca.plan_pc_dir`,
        :func:`dppca.plan_loading`, :func:`dppca.plan_scree`,
        :func:`dppca.plan_score`, :func:`dppca.plan_report`).
    X : data or CheckedData
        The table, checked here by ``plan.check_input``; a :class:`CheckedData`
        (a table the caller already checked) is not checked again, only
        against the plan's own requirements.
    budget : Accountant, optional
        Anything with ``check(cost)`` and ``spend(cost)``: a
        :class:`dppca.Budget` or a ledger's budget. Checked with
        ``plan.cost`` before any data work, charged with it once afterwards.
    random_state : None, int or numpy.random.Generator, default=None
        The release's noise stream: None for fresh OS entropy (hardened
        samplers where available), an int seeds ``default_rng``, a Generator
        is used as it is.
    **inputs
        What the release reads besides the table, checked with it by
        ``plan.check_input``: ``directions`` (and ``public_directions``) for a
        scree, score or report, ``groups`` and ``group_labels`` for a score
        or report. After the budget check and before any noise,
        ``plan.screen`` may still refuse (public directions that are the
        data's own).

    Returns
    -------
    The plan's frozen result.

    Raises
    ------
    ValueError
        When the data's shape differs from the one the plan was priced for.
    BudgetExceededError
        When the budget cannot afford ``plan.cost`` (nothing is read or drawn).
    InaccurateReleaseError
        With ``accuracy="error"`` and a forecast problem (nothing is spent), or
        when the post-release review finds the released values unreliable (then
        the cost is recorded and the result is on the error's ``result``).
    """
    check_budget(budget)
    data = plan.check_input(X, **inputs)
    if data.shape != (plan.n, plan.p):
        raise ValueError(
            f"the data have shape {data.shape} but the plan was priced for "
            f"(n, p) = ({plan.n}, {plan.p}); build the plan from the data's shape."
        )
    enforce(plan.forecast, plan.accuracy)
    if budget is not None:
        budget.check(plan.cost)
    plan.screen(data)
    rng = check_random_state(random_state)
    with hold_blas():  # the kernels bring their own threads; BLAS's would only spin
        result = plan.draw(data, rng)
    if budget is not None:
        budget.spend(plan.cost)
    with hold_blas():
        return plan.review(result)
