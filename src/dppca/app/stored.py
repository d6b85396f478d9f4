"""Releases kept in the ledger, so that a reload or a restart shows what was paid for.

A ledger that can store a release's values with its charge (``charge(...,
payload=text)`` and ``stored_releases(fp)``, rows of (number, kind,
payload)) receives, with each release the app makes, its release file as
JSON text (:mod:`dppca.release_io`): the released values, their cost, n and
the column names; never the data, never the seed. Loading a dataset then
brings its stored releases back into the session, re-drawn at no cost.

A ledger without that API works as before: the releases are charged by the
library through the ledger's budget and live only in the session.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..privacy.cost import PrivacyCost
from ..privacy.ledger import Ledger
from .plans import Release

__all__ = ["DeferredCharge", "payload_of", "restore_releases", "stores_releases"]

_KINDS = ("pca", "directions", "scree", "score")


def stores_releases(ledger: Ledger) -> bool:
    """Whether ``ledger`` keeps a release's values with its charge."""
    return callable(getattr(ledger, "stored_releases", None))


class DeferredCharge:
    """A budget for one release that checks with the ledger and charges later.

    The library calls ``check`` before reading the data and ``spend`` once
    the release is made; ``spend`` only keeps the cost, which the app then
    charges, in the same thread and before anything is shown, together with
    the released values (:meth:`charge`).
    """

    def __init__(self, ledger: Ledger, fp: str, *, kind: str, name: str | None) -> None:
        self.ledger, self.fp, self.kind, self.name = ledger, fp, kind, name
        self._check = ledger.budget(fp, kind=kind, name=name)
        self.cost: PrivacyCost | None = None

    def check(self, cost: PrivacyCost) -> None:
        self._check.check(cost)

    def spend(self, cost: PrivacyCost) -> None:
        self.cost = cost

    def charge(self, payload: str | None) -> int:
        """Charge the kept cost with ``payload``; the release's number in the ledger.

        Raises BudgetExceededError if another process spent the budget
        meanwhile: the release is then discarded, never shown.
        """
        assert self.cost is not None, "the release did not spend"
        charge: Any = self.ledger.charge
        return int(charge(self.fp, self.cost, kind=self.kind, name=self.name, payload=payload))


def payload_of(result: Any) -> str | None:
    """The release file of ``result`` as JSON text, or None if it cannot be written."""
    from ..release_io import save_release

    with tempfile.TemporaryDirectory(prefix="dppca-release-") as tmp:
        path = Path(tmp) / "release.json"
        try:
            save_release(result, path, drop_nonprivate=True)
        except Exception:
            return None
        return path.read_text(encoding="utf-8")


def _rows(rows: Any) -> Iterable[tuple[Any, Any, Any]]:
    if hasattr(rows, "itertuples"):  # a DataFrame
        rows = rows.itertuples(index=False)
    return ((r[0], r[1], r[2]) for r in rows)


def restore_releases(ledger: Ledger, fp: str) -> list[Release]:
    """The releases of dataset ``fp`` stored in ``ledger``, oldest first.

    A row without values (made by the command line, or by an older app) or
    one that cannot be read is skipped: its cost still counts in the budget.
    """
    from ..release_io import load_release

    stored = getattr(ledger, "stored_releases", None)
    if not callable(stored):
        return []
    out: list[Release] = []
    with tempfile.TemporaryDirectory(prefix="dppca-release-") as tmp:
        path = Path(tmp) / "release.json"
        for number, kind, payload in _rows(stored(fp)):
            if kind not in _KINDS or not isinstance(payload, str) or not payload:
                continue
            path.write_text(payload, encoding="utf-8")
            try:
                result = load_release(path)
            except (TypeError, ValueError, KeyError, AttributeError):
                continue
            columns = getattr(result, "variables", None) or ()
            if result.cost is None:  # not a private release: nothing paid to show again
                continue
            out.append(
                Release(
                    number=int(number),
                    kind=str(kind),
                    result=result,
                    cost=result.cost,
                    settings={"restored": True},
                    columns=tuple(str(c) for c in columns),
                )
            )
    return out
