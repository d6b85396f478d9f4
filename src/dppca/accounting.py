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

This module holds :class:`Budget` and is the public home of the rest, which
lives in three modules and is re-exported here: the cost record and basic
composition in :mod:`dppca._cost`, the tight accountant in
:mod:`dppca._composition`, and the calibration of several parts to a tight
total in :mod:`dppca._calibration`.
"""

from __future__ import annotations

from ._calibration import CalibratedPart, NoisePart, calibrate_noise, scale_to_tight, tight_factor
from ._composition import _exact_eps as _exact_eps  # tests and benchmarks import these
from ._composition import _tight_eps as _tight_eps
from ._composition import compose_tight, tight_total
from ._cost import _REL_SLACK, PrivacyCost, basic_total, compose
from ._lazy import pandas as pd
from ._validation import check_delta, check_eps
from .exceptions import BudgetExceededError

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


class Budget:
    """A privacy budget for one dataset, kept as a ledger.

    Call :meth:`check` before a release touches the data and :meth:`spend`
    once it is made. The budget decides by the tight total: everything in the
    ledger composed by :func:`tight_total` at the budget's own ``delta``.

    Parameters
    ----------
    eps : float
        Total epsilon available, > 0.
    delta : float
        Total delta available, in (0, 1).

    Notes
    -----
    Two totals are kept. :attr:`spent` is basic composition (the sums of the
    ledger's eps and delta), as before; :attr:`spent_tight` is the tight total,
    never larger where the records' claims hold. A cost is accepted when the
    tight total with it stays within ``eps``, so a ledger may hold more than
    basic composition would allow. :attr:`remaining` gives eps left by the
    tight total and delta left by basic composition: a cost within both
    always fits.

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

    def __init__(self, eps: float, delta: float) -> None:
        self.eps = check_eps(eps)
        self.delta = check_delta(delta)
        self._ledger: list[PrivacyCost] = []

    @property
    def ledger(self) -> tuple[PrivacyCost, ...]:
        """The costs spent so far, in order."""
        return tuple(self._ledger)

    @property
    def spent(self) -> tuple[float, float]:
        """Total (eps, delta) spent so far by basic composition (the upper bound)."""
        return basic_total(self._ledger)

    @property
    def spent_tight(self) -> tuple[float, float]:
        """Tight total (eps, delta) spent so far, at the budget's delta ((0, 0) when empty)."""
        if not self._ledger:
            return 0.0, 0.0
        return tight_total(self._ledger, self.delta)

    @property
    def remaining(self) -> tuple[float, float]:
        """Eps left by the tight total and delta left by basic composition (never negative)."""
        eps_spent = self.spent_tight[0]
        delta_spent = self.spent[1]
        return max(self.eps - eps_spent, 0.0), max(self.delta - delta_spent, 0.0)

    def can_afford(self, cost: PrivacyCost) -> bool:
        """Whether the tight total with ``cost`` added stays within the budget."""
        eps_total, _ = tight_total([*self._ledger, cost], self.delta)
        return eps_total <= self.eps * (1 + _REL_SLACK)

    def check(self, cost: PrivacyCost) -> None:
        """Raise ``BudgetExceededError`` if ``cost`` does not fit in what remains."""
        if not self.can_afford(cost):
            eps_left, delta_left = self.remaining
            eps_total, _ = tight_total([*self._ledger, cost], self.delta)
            raise BudgetExceededError(
                f"this release costs {cost} but only (eps={eps_left:.6g}, "
                f"delta={delta_left:.6g}) remains of the budget (eps={self.eps:g}, "
                f"delta={self.delta:g}); with it the tight total would be "
                f"eps={eps_total:.6g} at delta={self.delta:g}. Reuse an existing release "
                "or lower its cost."
            )

    def spend(self, cost: PrivacyCost) -> None:
        """Record ``cost`` in the ledger, refusing it if it would overspend."""
        if not isinstance(cost, PrivacyCost):
            raise TypeError(f"cost must be a PrivacyCost; got {type(cost).__name__}.")
        self.check(cost)
        self._ledger.append(cost)

    def to_frame(self) -> pd.DataFrame:
        """The ledger as a table, one row per elementary release."""
        frames = [c.to_frame() for c in self._ledger]
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
