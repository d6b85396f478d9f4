"""One dataset's budget in the ledger, for ``budget=`` parameters.

:class:`LedgerStore` is one dataset's record in a
:class:`dppca.privacy.ledger.Ledger`, as a store of the accountant
(:class:`~dppca.privacy.accounting.Accountant`); :class:`LedgerBudget` is the
accountant over it. :mod:`dppca.privacy.ledger` is their public home.
"""

from __future__ import annotations

from typing import Any

from ..core.exceptions import BudgetExceededError
from ..core.lazy import pandas as pd
from .accounting import Accountant, _refusal
from .cost import PrivacyCost
from .ledger_keys import _check_total, _same
from .ledger_store import LedgerError, _check_fp
from .tally import Tally

__all__ = ["LedgerBudget", "LedgerStore"]


#: Advice that ends every refusal of a ledger.
_ADVICE = (
    "Reuse an existing release (drawing from it again is free) or lower this release's "
    "cost; a dataset's total is fixed once it has releases, so a fresh budget needs "
    "another ledger file."
)


class LedgerStore:
    """One dataset's record in a :class:`~dppca.privacy.ledger.Ledger`, as an accountant's store.

    The total and the costs live in the ledger file: ``check`` asks the
    ledger; ``charge`` checks and records in one transaction, so a release
    that passed ``check`` is still refused if another process spent the
    budget meanwhile. Every charge is recorded with ``kind`` and ``name``.

    ``total`` (eps, delta) is the total to write with the first charge if the
    dataset has none (until then the store checks against it);
    ``declared=True`` marks it as the user's: a different total in force is
    then refused (:meth:`dppca.privacy.ledger.Ledger.charge`). After a charge,
    ``new_total`` is the total it wrote, if it wrote one, and ``last_release``
    its number in the dataset's ledger.

    Examples
    --------
    >>> from dppca import Accountant, PrivacyCost
    >>> from dppca.privacy.ledger import Ledger, LedgerStore
    >>> led = Ledger(":memory:")
    >>> store = LedgerStore(led, "abc", kind="directions", total=(1.0, 1e-5))
    >>> Accountant(store).spend(PrivacyCost(0.4, 4e-6, "gaussian", "directions"))
    >>> store.new_total, store.last_release, led.releases("abc")["kind"].tolist()
    ((1.0, 1e-05), 1, ['directions'])
    """

    def __init__(
        self,
        ledger: Any,
        fp: str,
        *,
        kind: str = "release",
        name: str | None = None,
        total: tuple[float, float] | None = None,
        declared: bool = False,
    ) -> None:
        self.ledger = ledger
        self.fp = _check_fp(fp)
        self.kind = kind
        self.name = name
        self.first_total = None if total is None else _check_total(*total)
        self.declared = bool(declared) and total is not None
        self.new_total: tuple[float, float] | None = None
        self.last_release: int | None = None  # number of the latest release charged here

    @property
    def public(self) -> bool:
        """Whether the data are a bundled, public dataset (releases never refused)."""
        return bool(self.ledger.is_public(self.fp))

    def recorded_total(self) -> tuple[float, float] | None:
        """The total in the ledger, None if the dataset has none yet."""
        return self.ledger.total(self.fp)

    def pending(self) -> bool:
        """Whether the next charge will write ``first_total`` (none recorded, or a declared
        one replacing a total recorded without releases)."""
        if self.first_total is None:
            return False
        recorded = self.recorded_total()
        if recorded is None:
            return True
        return self.declared and not _same(recorded, self.first_total) and not self.tally().charges

    def total(self) -> tuple[float, float]:
        if self.first_total is not None and self.pending():
            return self.first_total
        total = self.recorded_total()
        if total is None:
            raise LedgerError("this dataset has no total budget in the ledger; set one first.")
        return total

    def tally(self) -> Tally:
        return self.ledger._tally_of(self.fp)

    def costs(self) -> list[PrivacyCost]:
        return self.ledger.costs(self.fp)

    def last(self) -> PrivacyCost | None:
        return self.ledger.last_cost(self.fp)

    def check(self, cost: PrivacyCost, advice: str) -> None:
        if self.first_total is not None and self.pending():
            if not self.public and not self.tally().fits(cost, self.first_total):
                # against the total the charge will write
                raise BudgetExceededError(_refusal(cost, self.tally(), self.first_total, advice))
            return
        self.ledger.check(self.fp, cost, advice=advice)

    def charge(self, cost: PrivacyCost, advice: str) -> None:
        self.last_release, self.new_total = self.ledger._charge(
            self.fp,
            cost,
            kind=self.kind,
            name=self.name,
            advice=advice,
            total=self.first_total,
            declared=self.declared,
        )

    def attach(self, content: str, payload: str | None) -> None:
        """Attach a release's content hash (and file text) to the latest charge made here."""
        if self.last_release is None:
            raise ValueError("record follows a spend made through this budget; none was made.")
        self.ledger.attach(self.fp, self.last_release, content=content, payload=payload)

    def holds(self, content: str) -> bool:
        return bool(self.ledger.holds(self.fp, content))

    def entries(self) -> pd.DataFrame:
        """The dataset's ledger (see :meth:`dppca.privacy.ledger.Ledger.entries`)."""
        return self.ledger.entries(self.fp)


class LedgerBudget(Accountant):
    """One dataset's budget in a :class:`~dppca.privacy.ledger.Ledger`, its costs on disk.

    The :class:`~dppca.privacy.accounting.Accountant` over a
    :class:`LedgerStore`: the same checks, totals and messages as
    :class:`~dppca.Budget`, with the total and costs in the ledger file
    (``check`` asks the ledger; ``spend`` checks and records in one
    transaction). The parameters are the store's; ``advice`` ends every
    refusal. The store's ``fp``, ``kind``, ``name``, ``new_total`` and
    ``last_release`` are readable here too.

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
    store: LedgerStore

    def __init__(
        self,
        ledger: Any,
        fp: str,
        *,
        kind: str = "release",
        name: str | None = None,
        total: tuple[float, float] | None = None,
        declared: bool = False,
        advice: str | None = None,
    ) -> None:
        store = LedgerStore(ledger, fp, kind=kind, name=name, total=total, declared=declared)
        super().__init__(store, advice=advice)

    @property
    def fp(self) -> str:
        """The dataset's key in the ledger."""
        return self.store.fp

    @property
    def kind(self) -> str:
        """The kind of release every spend is recorded as."""
        return self.store.kind

    @property
    def name(self) -> str | None:
        """The dataset's name, recorded with every spend."""
        return self.store.name

    @property
    def new_total(self) -> tuple[float, float] | None:
        """The total the last spend wrote, if it wrote one."""
        return self.store.new_total

    @property
    def last_release(self) -> int | None:
        """The number of the latest release charged through this budget."""
        return self.store.last_release

    def __repr__(self) -> str:
        total = self.store.recorded_total()
        eps_spent, delta_spent = self.spent
        shown = "unset" if total is None else f"eps={total[0]:g}, delta={total[1]:g}"
        return (
            f"LedgerBudget({shown}, spent_eps={eps_spent:.6g}, spent_delta={delta_spent:.6g}, "
            f"fp={self.fp[:12]})"
        )
