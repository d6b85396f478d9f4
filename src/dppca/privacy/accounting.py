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
same methods. The rest lives in three modules: the cost record and basic
composition in :mod:`dppca.privacy.cost`, the tight accountant in
:mod:`dppca.privacy.composition`, and the calibration of several parts to a tight
total in :mod:`dppca.privacy.calibration`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.exceptions import BudgetExceededError
from ..core.lazy import pandas as pd
from ..core.validation import check_delta, check_eps
from .cost import PrivacyCost
from .headroom import Headroom, headroom
from .tally import Tally

__all__ = [
    "Budget",
]


# Advice that ends every refusal of the in-memory budget.
_ADVICE = (
    "Reuse an existing release (drawing from it again is free), lower this release's "
    "cost, or start from a Budget with a larger total."
)


def _fits(spent: Sequence[PrivacyCost], cost: PrivacyCost, total: tuple[float, float]) -> bool:
    """Whether the tight total of ``spent`` and ``cost`` at ``total[1]`` is within ``total[0]``.

    The one decision of every store: the composition of all releases of the
    data, by the tight accountant at the total's delta, must not exceed the
    total's eps. (The parts' own deltas are inside the tight total: where
    they exceed the total delta it is infinite.)
    """
    return Tally.of(spent).fits(cost, total)


def _spent_tight(spent: Sequence[PrivacyCost], delta: float) -> tuple[float, float]:
    return (Tally.of(spent).tight_eps(delta), delta) if spent else (0.0, 0.0)


def _remaining(spent: Sequence[PrivacyCost], total: tuple[float, float]) -> tuple[float, float]:
    """Eps left by the tight total and delta left by basic composition (never negative)."""
    tally = Tally.of(spent)
    return _left(tally, total)


def _left(tally: Tally, total: tuple[float, float]) -> tuple[float, float]:
    eps_spent = tally.tight_eps(total[1]) if tally.charges else 0.0
    return max(total[0] - eps_spent, 0.0), max(total[1] - tally.basic_delta, 0.0)


def _refusal(
    cost: PrivacyCost,
    spent: Sequence[PrivacyCost] | Tally,
    total: tuple[float, float],
    advice: str,
) -> str:
    """The one-line message of a refused release: what it costs, what still fits, how to go on."""
    tally = spent if isinstance(spent, Tally) else Tally.of(spent)
    eps_with = tally.plus(cost).tight_eps(total[1])
    room = headroom(tally, total)
    return (
        f"this release costs {cost}, more than remains of the budget (eps={total[0]:g}, "
        f"delta={total[1]:g}): with it the tight total of the {tally.charges + 1} releases "
        f"would be eps={eps_with:.6g} at delta={total[1]:g}; {room.fits_text()} {advice}"
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
    :meth:`headroom` says what still fits (the largest Gaussian release, and
    how many more releases like the last); :attr:`remaining` (eps left by the
    tight total, delta left by basic composition) is kept for compatibility
    but is not a plan: a cost over it may still fit.

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
        self._kept_tally: Tally | None = None

    # -- the store: what is spent and the total (a subclass keeps them elsewhere) -------
    def _totals(self) -> tuple[float, float]:
        return self._total_eps, self._total_delta

    def _spent_costs(self) -> list[PrivacyCost]:
        return list(self._ledger)

    def _tally(self) -> Tally:
        """What the accountant needs of the costs spent (a store may keep it ready)."""
        tally = self._kept_tally
        if tally is None or tally.charges != len(self._ledger):
            tally = self._kept_tally = Tally.of(self._ledger)
        return tally

    def _last_cost(self) -> PrivacyCost | None:
        return self._ledger[-1] if self._ledger else None

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
    def releases(self) -> int:
        """How many costs were spent."""
        return self._tally().charges

    @property
    def spent(self) -> tuple[float, float]:
        """Total (eps, delta) spent so far by basic composition (the upper bound)."""
        tally = self._tally()
        return tally.basic_eps, tally.basic_delta

    @property
    def spent_tight(self) -> tuple[float, float]:
        """Tight total (eps, delta) spent so far, at the budget's delta ((0, 0) when empty)."""
        tally, total = self._tally(), self._totals()
        return (tally.tight_eps(total[1]), total[1]) if tally.charges else (0.0, 0.0)

    @property
    def remaining(self) -> tuple[float, float]:
        """Eps left by the tight total and delta left by basic composition (never negative).

        Not what can be planned with: under tight composition the next
        release's price depends on what was spent; see :meth:`headroom`.
        """
        return _left(self._tally(), self._totals())

    def headroom(self, *, like: PrivacyCost | None = None, delta: float | None = None) -> Headroom:
        """What still fits, by the accountant's own rule (see :class:`Headroom`).

        Parameters
        ----------
        like : PrivacyCost, optional
            Count how many more releases of this cost fit; default the last
            release spent (none if nothing was spent).
        delta : float, optional
            The delta of the Gaussian release asked about; default that of
            ``like``, else the total delta.

        Returns
        -------
        Headroom
            The spent tight total, the basic bound, the largest Gaussian
            release that still fits and how many more like ``like`` fit;
            :meth:`Headroom.describe` says it in words, the same on every face.
        """
        if like is None:
            like = self._last_cost()
        return headroom(self._tally(), self._totals(), like=like, delta=delta)

    def can_afford(self, cost: PrivacyCost) -> bool:
        """Whether the tight total with ``cost`` added stays within the budget."""
        return self._tally().fits(cost, self._totals())

    def check(self, cost: PrivacyCost) -> None:
        """Raise ``BudgetExceededError`` if ``cost`` does not fit in what remains."""
        tally, total = self._tally(), self._totals()
        if not tally.fits(cost, total):
            raise BudgetExceededError(_refusal(cost, tally, total, self.advice))

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
            f"releases={self.releases})"
        )
