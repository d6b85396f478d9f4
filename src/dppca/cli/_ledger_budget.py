"""Charging a command's release to the ledger: the budget object the release spends from.

Its own module, apart from :mod:`dppca.cli._ledger` (which documents how totals
are set), so that a ``--dry-run`` or ``--help`` never imports the ledger's modules.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..privacy.ledger import Ledger, LedgerBudget
from ._ledger import ADVICE, _source_key, ledger_location
from ._safety import CLIError

__all__ = ["ledger_budget"]


def ledger_budget(args: argparse.Namespace, data: Any, variables: Any = None, *, kind: str) -> Any:
    """The dataset's budget in the ledger for ``budget=``, or None with ``--no-ledger``.

    Sets the dataset's total if it has none (see the module docstring) and
    refuses, before any computation, a total that contradicts the one in force.
    The budget is also kept as ``args.paid_by``, so that ``--save-release``
    records the release's content hash with its charge (a later
    ``--directions FILE`` is then free).
    """
    if getattr(args, "no_ledger", False):
        return None
    from ..core.defaults import default_delta
    from ..privacy.ledger import LedgerError

    ledger = Ledger(ledger_location(args))
    fp, name, n = _source_key(args, ledger)
    given_eps = getattr(args, "budget_eps", None)
    given_delta = getattr(args, "budget_delta", None)
    if (given_eps is None) != (given_delta is None):
        raise CLIError("give both --budget-eps and --budget-delta, or neither.")
    if given_eps is not None:
        assert given_delta is not None  # both or neither, checked above
        try:
            total = _check_total(given_eps, given_delta, n)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        budget = _CLIBudget(ledger, fp, kind=kind, name=name, total=total, declared=True)
    else:
        # The default total of a new table, written with its first charge (a
        # failed command leaves the ledger as it was); a release it cannot pay
        # is refused with the line that declares a total.
        # Its delta is the command's own where that is larger (a release's delta,
        # checked below 1/n, is the user's choice); its eps is never the command's.
        delta = max(default_delta(n), float(getattr(args, "delta", None) or 0.0))
        budget = _CLIBudget(ledger, fp, kind=kind, name=name, total=(1.0, delta))
    try:
        budget.check_total()
    except LedgerError as exc:
        raise CLIError(f"{exc} {ADVICE}") from None
    # --save-release records the release's content hash with the charge it paid.
    args.paid_by = budget
    return budget


def _check_total(eps: float, delta: float, n: int) -> tuple[float, float]:
    from ..core.validation import check_delta, check_delta_for_n, check_eps

    eps = check_eps(eps, "--budget-eps")
    delta = check_delta(delta, "--budget-delta")
    if delta >= 1.0 / n:
        check_delta_for_n(delta, n)
    return eps, delta


class _CLIBudget(LedgerBudget):
    """A dataset's budget in the ledger whose refusals say how to go on from the shell.

    A first release the default total cannot pay is refused with the line
    that declares a total (the release's eps never becomes the total).
    """

    advice = ADVICE

    def check_total(self) -> None:
        """Refuse, before any work, a declared total that contradicts the one in force."""
        from ..privacy.ledger import LedgerError

        store = self.store
        recorded, wanted = store.recorded_total(), store.first_total
        if store.declared and wanted and recorded not in (None, wanted) and self.releases:
            assert recorded is not None
            raise LedgerError(
                f"the total budget of {self.name} is already (eps={recorded[0]:g}, "
                f"delta={recorded[1]:g}); the total (eps={wanted[0]:g}, "
                f"delta={wanted[1]:g}) asked for was refused and nothing was "
                "released. Keep the recorded total (leave out --budget-eps/"
                "--budget-delta)."
            )

    def check(self, cost: Any) -> None:
        from ..core.exceptions import BudgetExceededError

        store = self.store
        if (
            not store.declared
            and store.first_total is not None
            and store.pending()
            and not self.public
            and not self.can_afford(cost)
        ):
            raise BudgetExceededError(_first_use_refusal(str(self.name), cost, store.first_total))
        super().check(cost)


def _first_use_refusal(name: str, cost: Any, total: tuple[float, float]) -> str:
    """A first release the default total cannot pay: the line that declares a total."""
    eps = max(1.0, float(cost.eps))
    delta = total[1]
    return (
        f"{name} has no total budget in the ledger yet, and this release's cost {cost} does "
        f"not fit in the default total of a new table (eps={total[0]:g}, delta={total[1]:g}: "
        "eps 1, and delta min(1e-6, 1/(10 n^1.5)) rounded down or the release's own if "
        "larger). The total is the data holder's "
        "decision, made once and never raised; to declare one, add to this command: "
        f"--budget-eps {eps:g} --budget-delta {delta:.3g}"
    )
