"""Privacy cost records, tight composition and a budget ledger.

Every release records a :class:`PrivacyCost`. A cost that also says which
noise it carries (``kind`` with ``sensitivity`` and ``sigma`` or ``scale``)
can be composed tightly: Gaussian parts exactly (a composition of Gaussian
mechanisms is one Gaussian mechanism); with a few pure, (eps, delta) or
Laplace parts beside them, exactly as well, by mixing the Gaussian's privacy
profile over the other parts' privacy losses (their dominating pairs are known
in closed form); anything larger with the privacy loss distribution (PLD)
accountant of ``dp-accounting`` (Google's differential privacy library), which
also checks the closed form in the tests. Records without noise fields are
treated as generic (eps, delta)-DP events, so old records keep their
basic-composition meaning. Basic composition (adding eps and delta) stays
available as the upper bound.

This module holds the accountant, :class:`Budget`, whose one rule (the
tight total, checked against the total's eps; basic composition reported as
the upper bound) every store of costs uses: a ``Budget`` keeps its costs in
memory, :class:`dppca.privacy.ledger.LedgerBudget` in the SQLite ledger, through the
same methods. It is also the public home of the rest, which
lives in three modules and is re-exported here: the cost record and basic
composition in :mod:`dppca.privacy.cost`, the tight accountant in
:mod:`dppca.privacy.composition`, and the calibration of several parts to a tight
total in :mod:`dppca.privacy.calibration`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.exceptions import BudgetExceededError
from ..core.lazy import pandas as pd
from ..core.validation import check_delta, check_eps
from .calibration import CalibratedPart, NoisePart, calibrate_noise, scale_to_tight, tight_factor
from .composition import _exact_eps as _exact_eps  # tests and benchmarks import these
from .composition import _tight_eps as _tight_eps
from .composition import compose_tight, tight_total
from .cost import _REL_SLACK, PrivacyCost, basic_total, compose

__all__ = [
    "Budget",
    "CalibratedPart",
    "NoisePart",
    "PrivacyCost",
    "basic_total",
    "calibrate_noise",
    "compose",
    "compose_tight",
    "scale_to_tight",
    "tight_factor",
    "tight_total",
]


# Advice that ends every refusal of the in-memory budget.
_ADVICE = (
    "Reuse an existing release (drawing from it again is free), lower this release's "
    "cost, or start from a Budget with a larger total."
)


def _fits(spent: Sequence[PrivacyCost], cost: PrivacyCost, total: tuple[float, float]) -> bool:
    """Whether the tight total of ``spent`` and ``cost`` at ``total[1]`` is within ``total[0]``.

    The one decision of every store: the composition of all releases of the
    data, by :func:`tight_total` at the total's delta, must not exceed the
    total's eps. (The parts' own deltas are inside the tight total: where
    they exceed the total delta it is infinite.)
    """
    eps_total, _ = tight_total([*spent, cost], total[1])
    return eps_total <= total[0] * (1 + _REL_SLACK)


def _spent_tight(spent: Sequence[PrivacyCost], delta: float) -> tuple[float, float]:
    return tight_total(spent, delta) if spent else (0.0, 0.0)


def _remaining(spent: Sequence[PrivacyCost], total: tuple[float, float]) -> tuple[float, float]:
    """Eps left by the tight total and delta left by basic composition (never negative)."""
    eps_spent = _spent_tight(spent, total[1])[0]
    delta_spent = basic_total(spent)[1]
    return max(total[0] - eps_spent, 0.0), max(total[1] - delta_spent, 0.0)


def _refusal(
    cost: PrivacyCost, spent: Sequence[PrivacyCost], total: tuple[float, float], advice: str
) -> str:
    """The one-line message of a refused release: what it costs, what is left, how to go on."""
    eps_left, delta_left = _remaining(spent, total)
    eps_with, _ = tight_total([*spent, cost], total[1])
    return (
        f"this release costs {cost} but only (eps={eps_left:.6g}, delta={delta_left:.6g}) "
        f"remains of the budget (eps={total[0]:g}, delta={total[1]:g}); with it the tight "
        f"total of the {len(spent) + 1} releases would be eps={eps_with:.6g} at "
        f"delta={total[1]:g}. {advice}"
    )


class Budget:
    """A privacy budget for one dataset: the accountant, with its costs kept in memory.

    Call :meth:`check` before a release touches the data and :meth:`spend`
    once it is made. The budget decides by the tight total: everything spent
    composed by :func:`tight_total` at the budget's own ``delta``, which must
    stay within ``eps``. :class:`dppca.privacy.ledger.LedgerBudget` is the same
    accountant with its costs in the SQLite ledger.

    Parameters
    ----------
    eps : float
        Total epsilon available, > 0.
    delta : float
        Total delta available, in (0, 1).

    Notes
    -----
    Two totals are kept. :attr:`spent` is basic composition (the sums of the
    costs' eps and delta), the upper bound; :attr:`spent_tight` is the tight
    total, never larger where the records' claims hold. A cost is accepted
    when the tight total with it stays within ``eps``, so a budget may hold
    more than basic composition would allow: two Gaussian releases at (0.5,
    1e-6) under a total of (1, 1e-5) leave room for a third at eps 0.2.
    :attr:`remaining` gives eps left by the tight total and delta left by
    basic composition: a cost within both always fits.

    Examples
    --------
    >>> from dppca import Budget, PrivacyCost
    >>> budget = Budget(eps=1.0, delta=1e-5)
    >>> budget.spend(PrivacyCost(0.5, 5e-6, "gaussian (classic)", "directions"))
    >>> budget.spent
    (0.5, 5e-06)
    >>> [round(x, 6) for x in budget.remaining]  # the tight total uses the unspent delta
    [0.500008, 5e-06]
    """

    #: What a refusal suggests doing instead.
    advice = _ADVICE

    def __init__(self, eps: float, delta: float) -> None:
        self._total_eps = check_eps(eps)
        self._total_delta = check_delta(delta)
        self._ledger: list[PrivacyCost] = []
        self._held: dict[str, str | None] = {}

    # -- the store: what is spent and the total (a subclass keeps them elsewhere) -------
    def _totals(self) -> tuple[float, float]:
        return self._total_eps, self._total_delta

    def _spent_costs(self) -> list[PrivacyCost]:
        return list(self._ledger)

    def _record(self, cost: PrivacyCost) -> None:
        """Check ``cost`` and record it, as one step."""
        self.check(cost)
        self._ledger.append(cost)

    # -- the accountant ----------------------------------------------------------------
    @property
    def eps(self) -> float:
        """Total epsilon."""
        return self._totals()[0]

    @property
    def delta(self) -> float:
        """Total delta."""
        return self._totals()[1]

    @property
    def ledger(self) -> tuple[PrivacyCost, ...]:
        """The costs spent so far, in order."""
        return tuple(self._spent_costs())

    @property
    def spent(self) -> tuple[float, float]:
        """Total (eps, delta) spent so far by basic composition (the upper bound)."""
        return basic_total(self._spent_costs())

    @property
    def spent_tight(self) -> tuple[float, float]:
        """Tight total (eps, delta) spent so far, at the budget's delta ((0, 0) when empty)."""
        return _spent_tight(self._spent_costs(), self._totals()[1])

    @property
    def remaining(self) -> tuple[float, float]:
        """Eps left by the tight total and delta left by basic composition (never negative)."""
        return _remaining(self._spent_costs(), self._totals())

    def can_afford(self, cost: PrivacyCost) -> bool:
        """Whether the tight total with ``cost`` added stays within the budget."""
        return _fits(self._spent_costs(), cost, self._totals())

    def check(self, cost: PrivacyCost) -> None:
        """Raise ``BudgetExceededError`` if ``cost`` does not fit in what remains."""
        spent, total = self._spent_costs(), self._totals()
        if not _fits(spent, cost, total):
            raise BudgetExceededError(_refusal(cost, spent, total, self.advice))

    def spend(self, cost: PrivacyCost) -> None:
        """Record ``cost``, refusing it if it would overspend."""
        if not isinstance(cost, PrivacyCost):
            raise TypeError(f"cost must be a PrivacyCost; got {type(cost).__name__}.")
        self._record(cost)

    def record(self, content: str, payload: str | None = None) -> None:
        """Remember the content hash of the release just paid for (see :meth:`holds`).

        :func:`dppca.release_io.save_release` with ``budget=`` calls it; a
        release file read back with the same budget is then free.
        """
        self._held[str(content)] = payload

    def holds(self, content: str) -> bool:
        """Whether the release with this content hash was paid for from this budget."""
        return str(content) in self._held

    def to_frame(self) -> pd.DataFrame:
        """The costs spent as a table, one row per elementary release."""
        frames = [c.to_frame() for c in self._spent_costs()]
        if not frames:
            return pd.DataFrame(columns=["released", "mechanism", "eps", "delta"])
        return pd.concat(frames, ignore_index=True)

    def __repr__(self) -> str:
        eps_spent, delta_spent = self.spent
        return (
            f"Budget(eps={self.eps:g}, delta={self.delta:g}, spent_eps={eps_spent:.6g}, "
            f"spent_delta={delta_spent:.6g}, spent_eps_tight={self.spent_tight[0]:.6g}, "
            f"releases={len(self._ledger)})"
        )
