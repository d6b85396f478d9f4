"""A privacy ledger that outlives the process: one budget per dataset, in SQLite.

A :class:`Ledger` is a small SQLite database (standard library ``sqlite3``)
that keeps, for every dataset, its total budget and every release charged
against it. Datasets are identified by :func:`fingerprint`, a hash of the
multiset of their rows over all numeric columns; the data themselves are
never stored. The command line and the app use the same file
(:func:`default_ledger_path`, or ``DPPCA_LEDGER``), so spending in one is
seen by the other.

The ledger is a store of the one accountant of :mod:`dppca.accounting`: what
a dataset has spent is the tight total (:func:`~dppca.accounting.tight_total`)
of all its releases, across commands, sessions and restarts, checked against
its total exactly as a :class:`~dppca.accounting.Budget` checks; basic
composition is reported as the upper bound. For that every part of a cost is
stored with its noise (kind, sensitivity, sigma or scale, multiplier).

Charging is one ``BEGIN IMMEDIATE`` transaction that reads what has been
spent, checks the new cost against the total and records it. SQLite lets one
writer in at a time, so processes and threads that charge the same ledger at
once are serialised and together can never spend more than the total.

Bundled datasets (:mod:`dppca.datasets`) are public: their releases are
recorded as practice and never refused.

The dataset keys, the file's default place and the SQLite store are in
:mod:`dppca._ledger_base`; this module is their public home.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import os
from typing import Any

from ._lazy import pandas as pd
from ._ledger_base import (
    LedgerError,
    _check_fp,
    _LedgerFile,
    default_ledger_path,
    fingerprint,
)
from .accounting import Budget, PrivacyCost, _fits, _refusal, _remaining, _spent_tight
from .accounting import basic_total as _basic_total
from .exceptions import BudgetExceededError

__all__ = [
    "Ledger",
    "LedgerBudget",
    "LedgerError",
    "default_ledger_path",
    "fingerprint",
]

_ENTRY_COLUMNS = [
    "release",
    "time",
    "dataset",
    "kind",
    "released",
    "mechanism",
    "eps",
    "delta",
]

#: Advice that ends every refusal of a ledger.
_ADVICE = (
    "Reuse an existing release (drawing from it again is free) or lower this release's "
    "cost; a dataset's total is fixed once it has releases, so a fresh budget needs "
    "another ledger file."
)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _check_total(eps: object, delta: object) -> tuple[float, float]:
    from ._validation import check_delta, check_eps

    return check_eps(eps, "total eps"), check_delta(delta, "total delta")


@functools.lru_cache(maxsize=1)
def _public() -> frozenset[str]:
    from .datasets import public_fingerprints

    return public_fingerprints()


# --------------------------------------------------------------------------- ledger


class Ledger(_LedgerFile):
    """A persistent privacy ledger: one total budget and a list of releases per dataset.

    Parameters
    ----------
    path : str or path-like, optional
        The SQLite file; default :func:`default_ledger_path`. Its directory is
        created if needed. ``":memory:"`` gives a ledger that dies with the object.

    Notes
    -----
    Privacy: the file holds fingerprints, dataset names, totals and the
    cost of each release (its parts with their noise), never data values.
    :meth:`charge` checks and records in one transaction, so concurrent
    processes cannot overspend. A release refused for lack of budget leaves
    the ledger unchanged. The check is the accountant's
    (:class:`~dppca.accounting.Budget`): the tight total of every release of
    the dataset, at the total's delta, within the total's eps.

    Integrity: the file carries SQLite's ``application_id`` (``0x64505063``)
    and schema version (``user_version``, 2); each charge holds a digest
    chained over the dataset's charges, and each dataset a seal over its
    total and the last digest. The file is checked when opened (``PRAGMA
    integrity_check`` and every chain) and again inside each write's
    transaction. An empty (zero-length), foreign (another program's SQLite)
    or damaged file raises :class:`LedgerError` and is never re-initialised:
    a ledger that forgets what was spent would let the budget be spent
    again. Recovery: keep the file for inspection and restore the ledger
    from a backup (copy the file while no release runs); or, accepting that
    its record is lost, move it away (a new ledger is created on next use)
    and set each dataset's total to what remains of its budget by your own
    records (:meth:`set_total`, or ``--budget-eps``/``--budget-delta`` with
    the first release); or name another file. A full disk is reported as
    such and records nothing.

    Examples
    --------
    >>> from dppca import PrivacyCost
    >>> led = Ledger(":memory:")
    >>> led.set_total("abc", 1.0, 1e-5, name="demo")
    >>> led.charge("abc", PrivacyCost(0.4, 4e-6, "gaussian", "directions"), kind="directions")
    1
    >>> [round(v, 12) for v in led.remaining("abc")]
    [0.6, 6e-06]
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._open(path)

    def is_public(self, fp: str) -> bool:
        """Whether ``fp`` is a bundled, public dataset (its releases are never refused)."""
        return _check_fp(fp) in _public()

    # -- reading -----------------------------------------------------------------------
    def total(self, fp: str) -> tuple[float, float] | None:
        """The dataset's total (eps, delta), or None if none is set."""
        with self._connect() as con:
            return self._total(con, _check_fp(fp))

    def spent(self, fp: str) -> tuple[float, float]:
        """What has been spent on the dataset so far by basic composition, the upper bound
        (``(0.0, 0.0)`` if nothing); see :meth:`spent_tight` for the total that counts."""
        with self._connect() as con:
            costs = self._costs(con, _check_fp(fp))
        return _basic_total(costs)

    def spent_tight(self, fp: str) -> tuple[float, float]:
        """The tight total of the dataset's releases, at its total delta (``(0.0, 0.0)`` if
        nothing was spent or no total is set)."""
        with self._connect() as con:
            total = self._total(con, _check_fp(fp))
            costs = self._costs(con, fp)
        return (0.0, 0.0) if total is None else _spent_tight(costs, total[1])

    def remaining(self, fp: str) -> tuple[float, float]:
        """The (eps, delta) still available, never negative: eps left by the tight total,
        delta left by basic composition.

        Raises :class:`LedgerError` if the dataset has no total.
        """
        with self._connect() as con:
            total = self._total(con, _check_fp(fp))
            costs = self._costs(con, fp)
        if total is None:
            raise LedgerError("this dataset has no total budget in the ledger yet; set one.")
        return _remaining(costs, total)

    def name(self, fp: str) -> str | None:
        """The name the dataset was registered under, if any."""
        with self._connect() as con:
            row = con.execute("SELECT name FROM datasets WHERE fp = ?", (fp,)).fetchone()
        return None if row is None else row[0]

    def entries(self, fp: str | None = None) -> pd.DataFrame:
        """The releases charged, one row per elementary part, oldest first.

        Columns: ``release`` (its number in the dataset's ledger), ``time``
        (UTC, ISO 8601), ``dataset`` (name), ``kind``, ``released``,
        ``mechanism``, ``eps``, ``delta``. ``fp=None`` lists every dataset.
        """
        query = (
            "SELECT c.id, c.fp, c.time, COALESCE(c.name, d.name), c.kind, p.released,"
            " p.mechanism, p.eps, p.delta FROM charges c JOIN parts p ON p.charge = c.id"
            " LEFT JOIN datasets d ON d.fp = c.fp"
        )
        params: tuple[Any, ...] = ()
        if fp is not None:
            query += " WHERE c.fp = ?"
            params = (_check_fp(fp),)
        with self._connect() as con:
            rows = con.execute(query + " ORDER BY c.id, p.rowid", params).fetchall()
        frame = pd.DataFrame(rows, columns=["id", "fp", *_ENTRY_COLUMNS[1:]]).astype(
            {"eps": float, "delta": float}
        )
        # Number the releases within each dataset: 1, 2, ... in charge order.
        ids = frame[["fp", "id"]].drop_duplicates()
        ids["release"] = ids.groupby("fp").cumcount() + 1
        frame = frame.merge(ids, on=["fp", "id"], how="left")
        return frame[_ENTRY_COLUMNS].reset_index(drop=True)

    def releases(self, fp: str) -> pd.DataFrame:
        """One row per release of the dataset: ``release``, ``time``, ``dataset``, ``kind``,
        ``eps``, ``delta`` (the cost charged)."""
        with self._connect() as con:
            rows = con.execute(
                "SELECT c.time, COALESCE(c.name, d.name), c.kind, c.eps, c.delta FROM charges c"
                " LEFT JOIN datasets d ON d.fp = c.fp WHERE c.fp = ? ORDER BY c.id",
                (_check_fp(fp),),
            ).fetchall()
        frame = pd.DataFrame(rows, columns=["time", "dataset", "kind", "eps", "delta"])
        frame.insert(0, "release", range(1, len(frame) + 1))
        return frame.astype({"eps": float, "delta": float})

    def version(self, fp: str | None = None) -> tuple[int, int]:
        """A cheap token that changes whenever a release is charged (for polling)."""
        query = "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM charges"
        with self._connect() as con:
            if fp is None:
                row = con.execute(query).fetchone()
            else:
                row = con.execute(query + " WHERE fp = ?", (fp,)).fetchone()
        return int(row[0]), int(row[1])

    def datasets(self) -> pd.DataFrame:
        """One row per dataset: fingerprint, name, totals, spent and number of releases.

        ``spent_eps`` is the tight total at the total delta and ``spent_delta``
        the sum of the releases' deltas; ``basic_eps`` is the upper bound.
        """
        with self._connect() as con:
            rows = con.execute(
                "SELECT fp, name, eps, delta, created FROM datasets ORDER BY created, fp"
            ).fetchall()
            out = []
            for fp, name, eps, delta, created in rows:
                costs = self._costs(con, fp)
                basic = _basic_total(costs)
                out.append(
                    {
                        "fingerprint": fp,
                        "dataset": name,
                        "created": created,
                        "total_eps": float(eps),
                        "total_delta": float(delta),
                        "spent_eps": _spent_tight(costs, float(delta))[0],
                        "spent_delta": basic[1],
                        "basic_eps": basic[0],
                        "releases": len(costs),
                    }
                )
        columns = [
            "fingerprint",
            "dataset",
            "created",
            "total_eps",
            "total_delta",
            "spent_eps",
            "spent_delta",
            "basic_eps",
            "releases",
        ]
        return pd.DataFrame(out, columns=columns)

    # -- writing -----------------------------------------------------------------------
    def set_total(self, fp: str, eps: float, delta: float, *, name: str | None = None) -> None:
        """Fix the dataset's total budget.

        The first call sets it. A later call with the same total does nothing
        (except record ``name`` if none was known); a different total is
        accepted only while nothing has been spent, and otherwise refused with
        :class:`LedgerError`, since raising the total after releases would
        let the same people be charged twice.
        """
        fp = _check_fp(fp)
        eps, delta = _check_total(eps, delta)
        with self._write() as con:
            total = self._total(con, fp)
            if total is None:
                self._put_total(con, fp, eps, delta, name=name, created=_now())
                return
            if name is not None:
                con.execute(
                    "UPDATE datasets SET name = COALESCE(name, ?) WHERE fp = ?", (name, fp)
                )
            if _same(total, (eps, delta)):
                return
            if self._costs(con, fp):
                raise LedgerError(
                    f"the total budget of this dataset is fixed at (eps={total[0]:g}, "
                    f"delta={total[1]:g}) because releases have been made from it; "
                    f"(eps={eps:g}, delta={delta:g}) was refused. Keep the total in force, "
                    "or start a fresh budget in another ledger file."
                )
            self._put_total(con, fp, eps, delta)

    def ensure_total(
        self, fp: str, eps: float, delta: float, *, name: str | None = None
    ) -> tuple[float, float]:
        """Set the total only if the dataset has none; return the total in force."""
        fp = _check_fp(fp)
        eps, delta = _check_total(eps, delta)
        with self._write() as con:
            total = self._total(con, fp)
            if total is not None:
                if name is not None:
                    con.execute(
                        "UPDATE datasets SET name = COALESCE(name, ?) WHERE fp = ?", (name, fp)
                    )
                return total
            self._put_total(con, fp, eps, delta, name=name, created=_now())
            return eps, delta

    def charge(self, fp: str, cost: PrivacyCost, *, kind: str, name: str | None = None) -> int:
        """Record a release's cost, refusing it if the budget cannot pay.

        Checking and recording happen in one IMMEDIATE transaction, so
        concurrent charges are serialised. The check is the accountant's: the
        tight total of every release of the dataset with this one, at the
        total delta, within the total eps. A bundled, public dataset
        (:meth:`is_public`) is never refused: its releases are recorded as
        practice. Returns the release's number in the dataset's ledger.

        Raises
        ------
        BudgetExceededError
            If the cost does not fit in what remains (the ledger is unchanged).
        LedgerError
            If the dataset has no total budget.
        """
        return self._charge(fp, cost, kind=kind, name=name, advice=_ADVICE)

    def _charge(
        self, fp: str, cost: PrivacyCost, *, kind: str, name: str | None, advice: str
    ) -> int:
        fp = _check_fp(fp)
        if not isinstance(cost, PrivacyCost):
            raise TypeError(f"cost must be a PrivacyCost; got {type(cost).__name__}.")
        if not isinstance(kind, str) or not kind:
            raise TypeError("kind must be a non-empty string such as 'directions'.")
        public = self.is_public(fp)
        with self._write() as con:
            total = self._total(con, fp)
            if total is None:
                raise LedgerError(
                    "this dataset has no total budget in the ledger; set one first "
                    "(Ledger.set_total, or --budget-eps/--budget-delta on the command line)."
                )
            costs = self._costs(con, fp)
            if not public and not _fits(costs, cost, total):
                raise BudgetExceededError(_refusal(cost, costs, total, advice))
            self._insert_charge(con, fp, cost, time=_now(), kind=kind, name=name)
            return len(costs) + 1

    def check(self, fp: str, cost: PrivacyCost) -> None:
        """Raise :class:`BudgetExceededError` if ``cost`` does not fit now (records nothing)."""
        self._check(fp, cost, advice=_ADVICE)

    def _check(self, fp: str, cost: PrivacyCost, *, advice: str) -> None:
        fp = _check_fp(fp)
        with self._connect() as con:
            total = self._total(con, fp)
            costs = self._costs(con, fp)
        if total is None:
            raise LedgerError("this dataset has no total budget in the ledger; set one first.")
        if not self.is_public(fp) and not _fits(costs, cost, total):
            raise BudgetExceededError(_refusal(cost, costs, total, advice))

    def budget(self, fp: str, *, kind: str = "release", name: str | None = None) -> LedgerBudget:
        """A :class:`~dppca.Budget`-like view of one dataset, for ``budget=`` parameters."""
        return LedgerBudget(self, fp, kind=kind, name=name)

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"


def _same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return math.isclose(a[0], b[0], rel_tol=1e-12) and math.isclose(a[1], b[1], rel_tol=1e-12)


class LedgerBudget(Budget):
    """One dataset's budget in a :class:`Ledger`: the accountant with its costs on disk.

    The same accountant as :class:`~dppca.accounting.Budget` (the same
    checks, totals and messages), whose costs and total live in the ledger
    file: ``check`` asks the ledger; ``spend`` charges it (check and record
    in one transaction, so a release that passed ``check`` is still refused
    if another process spent the budget meanwhile). Every spend is recorded
    with ``kind`` and ``name``.
    """

    advice = _ADVICE

    def __init__(self, ledger: Ledger, fp: str, *, kind: str = "release", name: str | None = None):
        # Budget.__init__ is not called: the totals live in the ledger.
        self._ledger_db = ledger
        self.fp = _check_fp(fp)
        self.kind = kind
        self.name = name
        self.last_release: int | None = None  # number of the latest release charged here

    @property
    def public(self) -> bool:
        """Whether the data are a bundled, public dataset (releases never refused)."""
        return self._ledger_db.is_public(self.fp)

    def _totals(self) -> tuple[float, float]:
        total = self._ledger_db.total(self.fp)
        if total is None:
            raise LedgerError("this dataset has no total budget in the ledger; set one first.")
        return total

    def _spent_costs(self) -> list[PrivacyCost]:
        with self._ledger_db._connect() as con:
            return self._ledger_db._costs(con, self.fp)

    def _record(self, cost: PrivacyCost) -> None:
        self.last_release = self._ledger_db._charge(
            self.fp, cost, kind=self.kind, name=self.name, advice=self.advice
        )

    def can_afford(self, cost: PrivacyCost) -> bool:
        return self.public or super().can_afford(cost)

    def check(self, cost: PrivacyCost) -> None:
        self._ledger_db._check(self.fp, cost, advice=self.advice)

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
