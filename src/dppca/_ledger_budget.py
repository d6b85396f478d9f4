"""One dataset's budget in a privacy ledger, usable wherever a ``Budget`` is.

:class:`LedgerBudget` is what :meth:`dppca.ledger.Ledger.budget` returns: a
:class:`~dppca.accounting.Budget` whose checks and spends go to the ledger
file. Split out of :mod:`dppca.ledger`, which re-exports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import pandas as pd
from ._ledger_base import LedgerError, _check_fp
from .accounting import Budget, PrivacyCost
from .exceptions import BudgetExceededError

if TYPE_CHECKING:
    from .ledger import Ledger

__all__ = ["LedgerBudget"]


class LedgerBudget(Budget):
    """One dataset's budget in a :class:`Ledger`, usable wherever a ``Budget`` is.

    ``check`` asks the ledger; ``spend`` charges it (check and record in one
    transaction, so a release that passed ``check`` is still refused if
    another process spent the budget meanwhile). Every spend is recorded with
    ``kind`` and ``name``.
    """

    def __init__(self, ledger: Ledger, fp: str, *, kind: str = "release", name: str | None = None):
        # Budget.__init__ is not called: the totals live in the ledger.
        self._ledger_db = ledger
        self.fp = _check_fp(fp)
        self.kind = kind
        self.name = name
        self.last_release: int | None = None  # number of the latest release charged here

    @property
    def eps(self) -> float:  # type: ignore[override]
        """Total epsilon of the dataset."""
        return self._total()[0]

    @property
    def delta(self) -> float:  # type: ignore[override]
        """Total delta of the dataset."""
        return self._total()[1]

    def _total(self) -> tuple[float, float]:
        total = self._ledger_db.total(self.fp)
        if total is None:
            raise LedgerError("this dataset has no total budget in the ledger; set one first.")
        return total

    @property
    def ledger(self) -> tuple[PrivacyCost, ...]:
        """The charges so far, as costs (one per release, with every recorded field)."""
        with self._ledger_db._connect() as con:
            return tuple(self._ledger_db._costs(con, self.fp))

    @property
    def spent(self) -> tuple[float, float]:
        return self._ledger_db.spent(self.fp)

    @property
    def remaining(self) -> tuple[float, float]:
        return self._ledger_db.remaining(self.fp)

    def can_afford(self, cost: PrivacyCost) -> bool:
        try:
            self._ledger_db.check(self.fp, cost)
        except BudgetExceededError:
            return False
        return True

    def check(self, cost: PrivacyCost) -> None:
        self._ledger_db.check(self.fp, cost)

    def spend(self, cost: PrivacyCost) -> None:
        self.last_release = self._ledger_db.charge(self.fp, cost, kind=self.kind, name=self.name)

    def to_frame(self) -> pd.DataFrame:
        """The dataset's ledger (see :meth:`Ledger.entries`)."""
        return self._ledger_db.entries(self.fp)

    def __repr__(self) -> str:
        total = self._ledger_db.total(self.fp)
        eps_spent, delta_spent = self.spent
        shown = "unset" if total is None else f"eps={total[0]:g}, delta={total[1]:g}"
        return (
            f"LedgerBudget({shown}, spent_eps={eps_spent:.6g}, spent_delta={delta_spent:.6g}, "
            f"fp={self.fp[:12]})"
        )
