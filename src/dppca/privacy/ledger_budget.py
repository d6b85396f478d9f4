"""One dataset's budget in the ledger, for ``budget=`` parameters.

:class:`LedgerBudget` is the accountant of :class:`~dppca.privacy.accounting.Budget`
over one dataset's record in a :class:`dppca.privacy.ledger.Ledger`, which is its
public home.
"""

from __future__ import annotations

from typing import Any

from ..core.lazy import pandas as pd
from .accounting import Budget
from .cost import PrivacyCost
from .ledger_keys import _check_total, _same
from .ledger_store import LedgerError, _check_fp
from .tally import Tally

__all__ = ["LedgerBudget"]


#: Advice that ends every refusal of a ledger.
_ADVICE = (
    "Reuse an existing release (drawing from it again is free) or lower this release's "
    "cost; a dataset's total is fixed once it has releases, so a fresh budget needs "
    "another ledger file."
)


class LedgerBudget(Budget):
    """One dataset's budget in a :class:`~dppca.privacy.ledger.Ledger`, its costs on disk.

    The same accountant as :class:`~dppca.privacy.accounting.Budget` (the same
    checks, totals and messages), whose costs and total live in the ledger
    file: ``check`` asks the ledger; ``spend`` charges it (check and record
    in one transaction, so a release that passed ``check`` is still refused
    if another process spent the budget meanwhile). Every spend is recorded
    with ``kind`` and ``name``.

    ``total`` (eps, delta) is the total to write with the first charge if the
    dataset has none (until then the budget checks against it);
    ``declared=True`` marks it as the user's: a different total in force is
    then refused (:meth:`dppca.privacy.ledger.Ledger.charge`). ``new_total`` is the total the last
    spend wrote, if it wrote one.

    Examples
    --------
    >>> from dppca import PrivacyCost
    >>> from dppca.privacy.ledger import Ledger, LedgerBudget
    >>> led = Ledger(":memory:")
    >>> budget = LedgerBudget(led, "abc", name="demo", total=(1.0, 1e-5))
    >>> budget.spend(PrivacyCost(0.4, 4e-6, "gaussian", "directions"))
    >>> led.total("abc")
    (1.0, 1e-05)
    """

    advice = _ADVICE

    def __init__(
        self,
        ledger: Any,
        fp: str,
        *,
        kind: str = "release",
        name: str | None = None,
        total: tuple[float, float] | None = None,
        declared: bool = False,
    ):
        # Budget.__init__ is not called: the totals and costs live in the ledger.
        self._ledger_db = ledger
        self.fp = _check_fp(fp)
        self.kind = kind
        self.name = name
        self.first_total = None if total is None else _check_total(*total)
        self.declared = bool(declared) and total is not None
        self.new_total: tuple[float, float] | None = None
        self.last_release: int | None = None  # number of the latest release charged here

    def _pending(self) -> bool:
        """Whether the charge will write ``first_total`` (none recorded, or a declared
        one replacing a total recorded without releases)."""
        if self.first_total is None:
            return False
        recorded = self._ledger_db.total(self.fp)
        if recorded is None:
            return True
        return self.declared and not _same(recorded, self.first_total) and not self.releases

    @property
    def public(self) -> bool:
        """Whether the data are a bundled, public dataset (releases never refused)."""
        return self._ledger_db.is_public(self.fp)

    def _totals(self) -> tuple[float, float]:
        total = self._ledger_db.total(self.fp)
        if self.first_total is not None and self._pending():
            return self.first_total
        if total is None:
            raise LedgerError("this dataset has no total budget in the ledger; set one first.")
        return total

    def _spent_costs(self) -> list[PrivacyCost]:
        with self._ledger_db._connect() as con:
            return self._ledger_db._costs(con, self.fp)

    def _tally(self) -> Tally:
        with self._ledger_db._connect() as con:
            return self._ledger_db._tally(con, self.fp)

    def _last_cost(self) -> PrivacyCost | None:
        with self._ledger_db._connect() as con:
            return self._ledger_db._last_cost(con, self.fp)

    def _record(self, cost: PrivacyCost) -> None:
        db = self._ledger_db
        db._written_total = None
        self.last_release = db._charge(
            self.fp,
            cost,
            kind=self.kind,
            name=self.name,
            advice=self.advice,
            total=self.first_total,
            declared=self.declared,
        )
        self.new_total = db._written_total

    def can_afford(self, cost: PrivacyCost) -> bool:
        return self.public or super().can_afford(cost)

    def record(self, content: str, payload: str | None = None) -> None:
        """Attach a release's content hash (and file text) to the latest charge made here."""
        if self.last_release is None:
            raise ValueError("record follows a spend made through this budget; none was made.")
        self._ledger_db.attach(self.fp, self.last_release, content=content, payload=payload)

    def holds(self, content: str) -> bool:
        return self._ledger_db.holds(self.fp, content)

    def check(self, cost: PrivacyCost) -> None:
        if self.first_total is not None and self._pending():
            if not self.public:
                super().check(cost)  # against the total the charge will write
            return
        self._ledger_db._check(self.fp, cost, advice=self.advice)

    def to_frame(self) -> pd.DataFrame:
        """The dataset's ledger (see :meth:`dppca.privacy.ledger.Ledger.entries`)."""
        return self._ledger_db.entries(self.fp)

    def __repr__(self) -> str:
        total = self._ledger_db.total(self.fp)
        eps_spent, delta_spent = self.spent
        shown = "unset" if total is None else f"eps={total[0]:g}, delta={total[1]:g}"
        return (
            f"LedgerBudget({shown}, spent_eps={eps_spent:.6g}, spent_delta={delta_spent:.6g}, "
            f"fp={self.fp[:12]})"
        )
