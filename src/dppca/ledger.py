"""A privacy ledger that outlives the process: one budget per dataset, in SQLite.

A :class:`Ledger` is a small SQLite database (standard library ``sqlite3``)
that keeps, for every dataset, its total budget and every release charged
against it. Datasets are identified by :func:`fingerprint`, a hash of their
numeric values, shape and column names; the data themselves are never stored.
The command line and the app use the same file (:func:`default_ledger_path`,
or ``DPPCA_LEDGER``), so spending in one is seen by the other.

Charging is one ``BEGIN IMMEDIATE`` transaction that reads what has been
spent, checks the new cost against the total and records it. SQLite lets one
writer in at a time, so processes and threads that charge the same ledger at
once are serialised and together can never spend more than the total.

How costs add up is decided by :func:`compose_costs` alone (basic composition
today), so a tighter accountant can replace it in one place.

The error type, the dataset keys, the file's default place and the stored
form of a cost are in :mod:`dppca._ledger_base`, and :class:`LedgerBudget` in
:mod:`dppca._ledger_budget`; both are re-exported here.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ._lazy import pandas as pd
from ._ledger_base import (
    LedgerError,
    _check_fp,
    _detail,
    _leaf,
    default_ledger_path,
    fingerprint,
    frame_fingerprint,
)
from ._ledger_budget import LedgerBudget
from .accounting import PrivacyCost
from .exceptions import BudgetExceededError

__all__ = [
    "Ledger",
    "LedgerBudget",
    "LedgerError",
    "compose_costs",
    "default_ledger_path",
    "fingerprint",
    "frame_fingerprint",
]

_SCHEMA_VERSION = 1
# Floating-point slack when comparing a sum of costs with the total, as in
# accounting.Budget: parts that add back up to the total are not refused.
_REL_SLACK = 1e-9
_TIMEOUT = 60.0  # seconds a writer waits for another one before giving up
_ENTRY_COLUMNS = [
    "release", "time", "dataset", "kind", "released", "mechanism", "eps", "delta",
]  # fmt: skip


# ---------------------------------------------------------------------- composition


def compose_costs(costs: Sequence[PrivacyCost]) -> tuple[float, float]:
    """Total (eps, delta) of several releases from one dataset: basic composition.

    The one place that decides how the ledger adds costs; swap it for a
    tighter accountant and every check follows. Each cost comes back from
    the ledger with its elementary parts and every field they were recorded
    with, so an accountant that needs more than (eps, delta) finds it.
    """
    return math.fsum(c.eps for c in costs), math.fsum(c.delta for c in costs)


def _spent_of(costs: Sequence[PrivacyCost]) -> tuple[float, float]:
    return compose_costs(costs) if costs else (0.0, 0.0)


def _fits(spent: Sequence[PrivacyCost], cost: PrivacyCost, total: tuple[float, float]) -> bool:
    eps, delta = compose_costs([*spent, cost])
    return eps <= total[0] * (1 + _REL_SLACK) and delta <= total[1] * (1 + _REL_SLACK)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _check_total(eps: object, delta: object) -> tuple[float, float]:
    from ._validation import check_delta, check_eps

    return check_eps(eps, "total eps"), check_delta(delta, "total delta")


# --------------------------------------------------------------------------- ledger


class Ledger:
    """A persistent privacy ledger: one total budget and a list of releases per dataset.

    Parameters
    ----------
    path : str or path-like, optional
        The SQLite file; default :func:`default_ledger_path`. Its directory is
        created if needed. ``":memory:"`` gives a ledger that dies with the object.

    Notes
    -----
    Privacy: the file holds fingerprints, dataset names, totals and the
    (eps, delta) of each release, never data values. :meth:`charge` checks
    and records in one transaction, so concurrent processes cannot overspend.
    A release refused for lack of budget leaves the ledger unchanged.

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
        if path is None:
            path = default_ledger_path()
        self.path = path if str(path) == ":memory:" else Path(path).expanduser()
        if isinstance(self.path, Path):
            if self.path.is_dir():
                raise LedgerError(f"ledger path {str(self.path)!r} is a directory; name a file.")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise LedgerError(
                    f"cannot create the ledger's directory {str(self.path.parent)!r}: "
                    f"{exc.strerror or exc}."
                ) from None
        self._memory: sqlite3.Connection | None = None
        self._memory_lock = threading.RLock()  # one shared connection: one user at a time
        with self._connect() as con:
            self._init_schema(con)

    # -- connection --------------------------------------------------------------------
    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if self.path == ":memory:":
            with self._memory_lock:
                if self._memory is None:
                    self._memory = sqlite3.connect(
                        ":memory:", isolation_level=None, check_same_thread=False
                    )
                yield self._memory
            return
        try:
            con = sqlite3.connect(str(self.path), timeout=_TIMEOUT, isolation_level=None)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open the ledger {str(self.path)!r}: {exc}.") from None
        try:
            yield con
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"the ledger {str(self.path)!r} cannot be used: {exc}.") from None
        finally:
            con.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: the write lock is taken before anything is read."""
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def _init_schema(self, con: sqlite3.Connection) -> None:
        try:
            con.execute("BEGIN IMMEDIATE")
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                con.execute(
                    "CREATE TABLE IF NOT EXISTS datasets ("
                    " fp TEXT PRIMARY KEY, name TEXT, eps REAL NOT NULL,"
                    " delta REAL NOT NULL, created TEXT NOT NULL)"
                )
                con.execute(
                    "CREATE TABLE IF NOT EXISTS charges ("
                    " id INTEGER PRIMARY KEY AUTOINCREMENT, fp TEXT NOT NULL"
                    " REFERENCES datasets(fp), time TEXT NOT NULL, name TEXT,"
                    " kind TEXT NOT NULL, eps REAL NOT NULL, delta REAL NOT NULL)"
                )
                con.execute(
                    "CREATE TABLE IF NOT EXISTS parts ("
                    " charge INTEGER NOT NULL REFERENCES charges(id), released TEXT,"
                    " mechanism TEXT, eps REAL NOT NULL, delta REAL NOT NULL, detail TEXT)"
                )
                con.execute("CREATE INDEX IF NOT EXISTS charges_fp ON charges(fp)")
                con.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            elif version > _SCHEMA_VERSION:
                con.execute("ROLLBACK")
                raise LedgerError(
                    f"the ledger {str(self.path)!r} was written by a newer dppca (schema "
                    f"{version}); upgrade dppca to use it."
                )
            con.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise LedgerError(
                f"{str(self.path)!r} is not a dppca ledger ({exc}); name another file."
            ) from None

    # -- reading -----------------------------------------------------------------------
    @staticmethod
    def _total(con: sqlite3.Connection, fp: str) -> tuple[float, float] | None:
        row = con.execute("SELECT eps, delta FROM datasets WHERE fp = ?", (fp,)).fetchone()
        return None if row is None else (float(row[0]), float(row[1]))

    @staticmethod
    def _costs(con: sqlite3.Connection, fp: str) -> list[PrivacyCost]:
        """The dataset's charges in order, each as the cost it was charged with."""
        rows = con.execute(
            "SELECT c.id, c.eps, c.delta, p.eps, p.delta, p.mechanism, p.released, p.detail"
            " FROM charges c JOIN parts p ON p.charge = c.id WHERE c.fp = ?"
            " ORDER BY c.id, p.rowid",
            (fp,),
        ).fetchall()
        grouped: dict[int, list[PrivacyCost]] = {}
        charged: dict[int, tuple[float, float]] = {}
        for charge, c_eps, c_delta, eps, delta, mechanism, released, detail in rows:
            grouped.setdefault(charge, []).append(_leaf(eps, delta, mechanism, released, detail))
            charged[charge] = (float(c_eps), float(c_delta))
        # A charge counts what it was charged: a release composed tightly
        # claims less than the basic sum of its parts.
        return [
            leaves[0]
            if len(leaves) == 1
            else PrivacyCost(
                min(charged[charge][0], math.fsum(c.eps for c in leaves)),
                min(charged[charge][1], math.fsum(c.delta for c in leaves)),
                "composition",
                "; ".join(c.released for c in leaves),
                tuple(leaves),
            )
            for charge, leaves in grouped.items()
        ]

    def total(self, fp: str) -> tuple[float, float] | None:
        """The dataset's total (eps, delta), or None if none is set."""
        with self._connect() as con:
            return self._total(con, _check_fp(fp))

    def spent(self, fp: str) -> tuple[float, float]:
        """What has been spent on the dataset so far (``(0.0, 0.0)`` if nothing)."""
        with self._connect() as con:
            costs = self._costs(con, _check_fp(fp))
        return _spent_of(costs)

    def remaining(self, fp: str) -> tuple[float, float]:
        """The (eps, delta) still available, never negative.

        Raises :class:`LedgerError` if the dataset has no total.
        """
        with self._connect() as con:
            total = self._total(con, _check_fp(fp))
            costs = self._costs(con, fp)
        if total is None:
            raise LedgerError("this dataset has no total budget in the ledger yet; set one.")
        eps, delta = _spent_of(costs)
        return max(total[0] - eps, 0.0), max(total[1] - delta, 0.0)

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
        """One row per dataset: fingerprint, name, totals, spent and number of releases."""
        with self._connect() as con:
            rows = con.execute(
                "SELECT fp, name, eps, delta, created FROM datasets ORDER BY created, fp"
            ).fetchall()
            out = []
            for fp, name, eps, delta, created in rows:
                costs = self._costs(con, fp)
                spent = _spent_of(costs)
                out.append({
                    "fingerprint": fp, "dataset": name, "created": created,
                    "total_eps": float(eps), "total_delta": float(delta),
                    "spent_eps": spent[0], "spent_delta": spent[1], "releases": len(costs),
                })  # fmt: skip
        columns = [
            "fingerprint", "dataset", "created", "total_eps", "total_delta",
            "spent_eps", "spent_delta", "releases",
        ]  # fmt: skip
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
                con.execute(
                    "INSERT INTO datasets (fp, name, eps, delta, created) VALUES (?, ?, ?, ?, ?)",
                    (fp, name, eps, delta, _now()),
                )
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
                    f"(eps={eps:g}, delta={delta:g}) was refused."
                )
            con.execute("UPDATE datasets SET eps = ?, delta = ? WHERE fp = ?", (eps, delta, fp))

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
            con.execute(
                "INSERT INTO datasets (fp, name, eps, delta, created) VALUES (?, ?, ?, ?, ?)",
                (fp, name, eps, delta, _now()),
            )
            return eps, delta

    def charge(self, fp: str, cost: PrivacyCost, *, kind: str, name: str | None = None) -> int:
        """Record a release's cost, refusing it if the budget cannot pay.

        Checking and recording happen in one IMMEDIATE transaction, so
        concurrent charges are serialised. Returns the release's number in the
        dataset's ledger.

        Raises
        ------
        BudgetExceededError
            If the cost does not fit in what remains (the ledger is unchanged).
        LedgerError
            If the dataset has no total budget.
        """
        fp = _check_fp(fp)
        if not isinstance(cost, PrivacyCost):
            raise TypeError(f"cost must be a PrivacyCost; got {type(cost).__name__}.")
        if not isinstance(kind, str) or not kind:
            raise TypeError("kind must be a non-empty string such as 'directions'.")
        with self._write() as con:
            total = self._total(con, fp)
            if total is None:
                raise LedgerError(
                    "this dataset has no total budget in the ledger; set one first "
                    "(Ledger.set_total, or --budget-eps/--budget-delta on the command line)."
                )
            costs = self._costs(con, fp)
            if not _fits(costs, cost, total):
                raise BudgetExceededError(_refusal(cost, total, costs))
            cur = con.execute(
                "INSERT INTO charges (fp, time, name, kind, eps, delta) VALUES (?, ?, ?, ?, ?, ?)",
                (fp, _now(), name, kind, cost.eps, cost.delta),
            )
            charge_id = cur.lastrowid
            con.executemany(
                "INSERT INTO parts (charge, released, mechanism, eps, delta, detail)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (charge_id, c.released, c.mechanism, c.eps, c.delta, _detail(c))
                    for c in cost.leaves()
                ],
            )
            return len(costs) + 1

    def check(self, fp: str, cost: PrivacyCost) -> None:
        """Raise :class:`BudgetExceededError` if ``cost`` does not fit now (records nothing)."""
        fp = _check_fp(fp)
        with self._connect() as con:
            total = self._total(con, fp)
            costs = self._costs(con, fp)
        if total is None:
            raise LedgerError("this dataset has no total budget in the ledger; set one first.")
        if not _fits(costs, cost, total):
            raise BudgetExceededError(_refusal(cost, total, costs))

    def budget(self, fp: str, *, kind: str = "release", name: str | None = None) -> LedgerBudget:
        """A :class:`~dppca.Budget`-like view of one dataset, for ``budget=`` parameters."""
        return LedgerBudget(self, fp, kind=kind, name=name)

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"


def _same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return math.isclose(a[0], b[0], rel_tol=1e-12) and math.isclose(a[1], b[1], rel_tol=1e-12)


def _refusal(cost: PrivacyCost, total: tuple[float, float], costs: Sequence[PrivacyCost]) -> str:
    spent = _spent_of(costs)
    eps_left, delta_left = max(total[0] - spent[0], 0.0), max(total[1] - spent[1], 0.0)
    return (
        f"this release costs {cost} but only (eps={eps_left:.6g}, delta={delta_left:.6g}) "
        f"remains of the dataset's budget (eps={total[0]:g}, delta={total[1]:g}); reuse an "
        "existing release or lower its cost."
    )
