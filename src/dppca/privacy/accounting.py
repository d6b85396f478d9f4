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

This module holds the accountant, :class:`Accountant`, whose one rule (the
tight total, checked against the total's eps; basic composition reported as
the upper bound) holds whatever store keeps the costs: :class:`MemoryStore`
in memory, or one dataset's record in the SQLite ledger
(:class:`dppca.privacy.ledger.LedgerStore`). :class:`Budget` is the accountant
over a memory store; :class:`dppca.privacy.ledger.LedgerBudget` the one over a
ledger's. The rest lives in three modules: the cost record and basic
composition in :mod:`dppca.privacy.cost`, the tight accountant in
:mod:`dppca.privacy.composition`, and the calibration of several parts to a tight
total in :mod:`dppca.privacy.calibration`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..core.exceptions import BudgetExceededError
from ..core.lazy import pandas as pd
from ..core.validation import check_delta, check_eps
from .cost import PrivacyCost
from .headroom import Headroom, headroom
from .tally import Tally

__all__ = ["Accountant", "Budget", "MemoryStore", "Store"]


# Advice that ends every refusal of the in-memory budget.
_ADVICE = (
    "Reuse an existing release (drawing from it again is free), lower this release's "
    "cost, or start from a Budget with a larger total."
)


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


class Store(Protocol):
    """What the accountant needs of a store of costs (:class:`MemoryStore`, the ledger's).

    A store keeps one total and the costs spent against it. ``charge``
    checks and records in one step (a store shared between processes does
    both under one lock); ``check`` decides without recording. Both refuse
    with :class:`~dppca.core.exceptions.BudgetExceededError`, whose message
    ends with ``advice``.
    """

    @property
    def public(self) -> bool:
        """Whether the costs are practice on public data, never refused."""
        ...

    def total(self) -> tuple[float, float]:
        """The total (eps, delta)."""
        ...

    def tally(self) -> Tally:
        """The running summary of the costs spent (what the tight total is computed from)."""
        ...

    def costs(self) -> list[PrivacyCost]:
        """The costs spent, in order."""
        ...

    def last(self) -> PrivacyCost | None:
        """The last cost spent, if any."""
        ...

    def check(self, cost: PrivacyCost, advice: str) -> None:
        """Refuse ``cost`` if it does not fit (records nothing)."""
        ...

    def charge(self, cost: PrivacyCost, advice: str) -> None:
        """Check and record ``cost``, as one step."""
        ...

    def attach(self, content: str, payload: str | None) -> None:
        """Remember the content hash (and file text) of the release just charged."""
        ...

    def holds(self, content: str) -> bool:
        """Whether the release with this content hash was paid for here."""
        ...

    def entries(self) -> pd.DataFrame:
        """The costs spent as a table, one row per elementary release."""
        ...


class MemoryStore:
    """A store of costs in memory: one total, the costs spent, their running summary.

    Parameters
    ----------
    eps : float
        Total epsilon available, > 0.
    delta : float
        Total delta available, in (0, 1).

    Examples
    --------
    >>> from dppca import Accountant, MemoryStore, PrivacyCost
    >>> accountant = Accountant(MemoryStore(1.0, 1e-5))
    >>> accountant.spend(PrivacyCost(0.5, 5e-6, "gaussian (classic)", "directions"))
    >>> accountant.releases
    1
    """

    public = False

    def __init__(self, eps: float, delta: float) -> None:
        self._total = (check_eps(eps), check_delta(delta))
        self._costs: list[PrivacyCost] = []
        self._tally = Tally()  # updated with each cost, as Tally.of(costs) would be
        self._held: dict[str, str | None] = {}

    def total(self) -> tuple[float, float]:
        return self._total

    def tally(self) -> Tally:
        return self._tally

    def costs(self) -> list[PrivacyCost]:
        return list(self._costs)

    def last(self) -> PrivacyCost | None:
        return self._costs[-1] if self._costs else None

    def check(self, cost: PrivacyCost, advice: str) -> None:
        if not self._tally.fits(cost, self._total):
            raise BudgetExceededError(_refusal(cost, self._tally, self._total, advice))

    def charge(self, cost: PrivacyCost, advice: str) -> None:
        self.check(cost, advice)
        self._costs.append(cost)
        self._tally.add(cost)

    def attach(self, content: str, payload: str | None) -> None:
        self._held[str(content)] = payload

    def holds(self, content: str) -> bool:
        return str(content) in self._held

    def entries(self) -> pd.DataFrame:
        frames = [c.to_frame() for c in self._costs]
        if not frames:
            return pd.DataFrame(columns=["released", "mechanism", "eps", "delta"])
        return pd.concat(frames, ignore_index=True)


class Accountant:
    """The privacy accountant: one rule over a store of costs.

    Call :meth:`check` before a release touches the data and :meth:`spend`
    once it is made. The accountant decides by the tight total: everything
    spent composed by :func:`~dppca.tight_total` at the total's ``delta``,
    which must stay within its ``eps``. Where the costs live is the store's
    business: :class:`MemoryStore` (what :class:`Budget` uses) or one
    dataset's record in the SQLite ledger
    (:class:`dppca.privacy.ledger.LedgerStore`, what
    :class:`~dppca.privacy.ledger.LedgerBudget` uses); the checks, totals and
    messages are the same.

    Parameters
    ----------
    store : MemoryStore or LedgerStore
        Where the total and the costs are kept.
    advice : str, optional
        What a refusal suggests doing instead (default: the class's ``advice``).

    Notes
    -----
    Two totals are kept. :attr:`spent` is basic composition (the sums of the
    costs' eps and delta), the upper bound; :attr:`spent_tight` is the tight
    total, never larger where the records' claims hold. A cost is accepted
    when the tight total with it stays within ``eps``, so an accountant may
    hold more than basic composition would allow: two Gaussian releases at
    (0.5, 1e-6) under a total of (1, 1e-5) leave room for a third at eps 0.2.
    :meth:`headroom` says what still fits (the largest Gaussian release, and
    how many more releases like the last) and :meth:`describe` says it in
    words, the same on every face; :attr:`remaining` (eps left by the tight
    total, delta left by basic composition) is kept for compatibility but is
    not a plan: a cost over it may still fit.

    Examples
    --------
    >>> from dppca import Accountant, MemoryStore, PrivacyCost
    >>> accountant = Accountant(MemoryStore(1.0, 1e-5))
    >>> accountant.spend(PrivacyCost(0.4, 4e-6, "gaussian", "directions"))
    >>> accountant.releases, accountant.spent
    (1, (0.4, 4e-06))
    >>> accountant.headroom().repeats  # one more release like the last still fits
    1
    """

    #: What a refusal suggests doing instead.
    advice = _ADVICE

    def __init__(self, store: Store, *, advice: str | None = None) -> None:
        self.store = store
        if advice is not None:
            self.advice = advice

    @property
    def public(self) -> bool:
        """Whether the costs are practice on public data (never refused)."""
        return bool(self.store.public)

    @property
    def eps(self) -> float:
        """Total epsilon."""
        return self.store.total()[0]

    @property
    def delta(self) -> float:
        """Total delta."""
        return self.store.total()[1]

    @property
    def ledger(self) -> tuple[PrivacyCost, ...]:
        """The costs spent so far, in order."""
        return tuple(self.store.costs())

    @property
    def releases(self) -> int:
        """How many costs were spent."""
        return self.store.tally().charges

    @property
    def spent(self) -> tuple[float, float]:
        """Total (eps, delta) spent so far by basic composition (the upper bound)."""
        tally = self.store.tally()
        return tally.basic_eps, tally.basic_delta

    @property
    def spent_tight(self) -> tuple[float, float]:
        """Tight total (eps, delta) spent so far, at the total delta ((0, 0) when empty)."""
        tally, total = self.store.tally(), self.store.total()
        return (tally.tight_eps(total[1]), total[1]) if tally.charges else (0.0, 0.0)

    @property
    def remaining(self) -> tuple[float, float]:
        """Eps left by the tight total and delta left by basic composition (never negative).

        Not what can be planned with: under tight composition the next
        release's price depends on what was spent; see :meth:`headroom`.
        """
        return _left(self.store.tally(), self.store.total())

    def headroom(self, *, like: PrivacyCost | None = None, delta: float | None = None) -> Headroom:
        """What still fits, by the accountant's own rule (see :class:`~dppca.Headroom`).

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
            like = self.store.last()
        return headroom(self.store.tally(), self.store.total(), like=like, delta=delta)

    def describe(self) -> str:
        """What was spent and what still fits, in the words every face prints."""
        return self.headroom().describe()

    def history(self) -> pd.DataFrame:
        """The costs spent as a table, one row per elementary release (as :meth:`to_frame`)."""
        return self.to_frame()

    def can_afford(self, cost: PrivacyCost) -> bool:
        """Whether the tight total with ``cost`` added stays within the total."""
        return self.public or self.store.tally().fits(cost, self.store.total())

    def check(self, cost: PrivacyCost) -> None:
        """Raise ``BudgetExceededError`` if ``cost`` does not fit in what remains."""
        self.store.check(cost, self.advice)

    def spend(self, cost: PrivacyCost) -> None:
        """Record ``cost``, refusing it if it would overspend."""
        if not isinstance(cost, PrivacyCost):
            raise TypeError(f"cost must be a PrivacyCost; got {type(cost).__name__}.")
        self.store.charge(cost, self.advice)

    def record(self, content: str, payload: str | None = None) -> None:
        """Remember the content hash of the release just paid for (see :meth:`holds`).

        :func:`dppca.release_io.save_release` with ``budget=`` calls it; a
        release file read back with the same accountant is then free.
        """
        self.store.attach(content, payload)

    def holds(self, content: str) -> bool:
        """Whether the release with this content hash was paid for from this budget."""
        return self.store.holds(content)

    def to_frame(self) -> pd.DataFrame:
        """The costs spent as a table, one row per elementary release."""
        return self.store.entries()

    def __repr__(self) -> str:
        eps_spent, delta_spent = self.spent
        return (
            f"{type(self).__name__}(eps={self.eps:g}, delta={self.delta:g}, "
            f"spent_eps={eps_spent:.6g}, spent_delta={delta_spent:.6g}, "
            f"spent_eps_tight={self.spent_tight[0]:.6g}, releases={self.releases})"
        )


class Budget(Accountant):
    """A privacy budget for one dataset: the accountant, with its costs kept in memory.

    Call :meth:`check` before a release touches the data and :meth:`spend`
    once it is made. The budget decides by the tight total: everything spent
    composed by :func:`~dppca.tight_total` at the budget's own ``delta``,
    which must stay within ``eps``. It is the :class:`Accountant` over a
    :class:`MemoryStore`; :class:`dppca.privacy.ledger.LedgerBudget` is the
    same accountant with its costs in the SQLite ledger.

    Parameters
    ----------
    eps : float
        Total epsilon available, > 0.
    delta : float
        Total delta available, in (0, 1).

    Notes
    -----
    See :class:`Accountant`: :attr:`spent` is basic composition, the upper
    bound, and :attr:`spent_tight` the tight total that decides; a cost over
    :attr:`remaining` may still fit, :meth:`headroom` says what does.

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
        super().__init__(MemoryStore(eps, delta))
