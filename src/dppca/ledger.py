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
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import hashlib
import json
import math
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._lazy import pandas as pd
from .accounting import Budget, PrivacyCost
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


class LedgerError(ValueError):
    """A ledger cannot do what was asked (no total set, a fixed total, a bad file)."""


# ----------------------------------------------------------------------------- keys


def fingerprint(data: Any, columns: Sequence[str]) -> str:
    """A hex digest that identifies a dataset: its values, shape and column names.

    Parameters
    ----------
    data : array-like of shape (n, p)
        The numeric data, converted to float64 (``-0.0`` counts as ``0.0``).
    columns : sequence of str
        One name per column.

    Returns
    -------
    str
        64 hexadecimal digits (SHA-256).

    Notes
    -----
    The digest is stored on the data holder's machine only. It is not a
    private release: anyone who can guess the whole table can confirm the
    guess with it, so do not publish it.

    Examples
    --------
    >>> import numpy as np
    >>> a = fingerprint(np.eye(3), ["x", "y", "z"])
    >>> a == fingerprint(np.eye(3), ["x", "y", "w"]), len(a)
    (False, 64)
    """
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise ValueError(f"data must be two-dimensional; got {arr.ndim} dimension(s).")
    names = [str(c) for c in columns]
    if len(names) != arr.shape[1]:
        raise ValueError(
            f"columns must name every column of data ({arr.shape[1]}); got {len(names)}."
        )
    values = np.ascontiguousarray(arr, dtype="<f8") + 0.0  # one bit pattern for zero
    h = hashlib.sha256(b"dppca-fingerprint-v1\0")
    h.update(json.dumps(names, ensure_ascii=False).encode("utf-8") + b"\0")
    h.update(np.asarray(values.shape, dtype="<i8").tobytes())
    h.update(values.data.cast("B"))
    return h.hexdigest()


def frame_fingerprint(frame: pd.DataFrame) -> str:
    """The :func:`fingerprint` of a table's numeric columns (all of them).

    The app and the command line key their budgets with this: analysing other
    columns of the same table spends from the same budget, because the rows
    are the same people.
    """
    from ._validation import _is_numeric_dtype

    names = [c for c in frame.columns if _is_numeric_dtype(frame[c].dtype)]
    values = frame[names].to_numpy(dtype=np.float64, na_value=np.nan)
    return fingerprint(values, [str(c) for c in names])


def default_ledger_path() -> Path:
    """Where the ledger lives unless told otherwise.

    ``$DPPCA_LEDGER`` if set; else ``$XDG_STATE_HOME/dppca/ledger.sqlite``;
    else ``~/.local/state/dppca/ledger.sqlite`` (on Windows under
    ``%LOCALAPPDATA%``).
    """
    override = os.environ.get("DPPCA_LEDGER")
    if override:
        return Path(override).expanduser()
    state = os.environ.get("XDG_STATE_HOME")
    if not state and os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        state = os.environ["LOCALAPPDATA"]
    base = Path(state).expanduser() if state else Path.home() / ".local" / "state"
    return base / "dppca" / "ledger.sqlite"


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


_BASIC_FIELDS = ("eps", "delta", "mechanism", "released", "parts")


def _detail(leaf: PrivacyCost) -> str | None:
    """Fields of a cost beyond the basic ones (an accountant's parameters), as JSON."""
    extra = {
        f.name: getattr(leaf, f.name)
        for f in dataclasses.fields(leaf)
        if f.name not in _BASIC_FIELDS
    }
    if not extra:
        return None
    return json.dumps(extra, default=repr)


def _leaf(
    eps: float, delta: float, mechanism: str, released: str, detail: str | None
) -> PrivacyCost:
    known = {f.name for f in dataclasses.fields(PrivacyCost)}
    extra = {k: v for k, v in json.loads(detail).items() if k in known} if detail else {}
    try:
        return PrivacyCost(float(eps), float(delta), mechanism, released, **extra)
    except (TypeError, ValueError):  # a field of another version: keep the basic cost
        return PrivacyCost(float(eps), float(delta), mechanism, released)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _check_total(eps: object, delta: object) -> tuple[float, float]:
    from ._validation import check_delta, check_eps

    return check_eps(eps, "total eps"), check_delta(delta, "total delta")


def _check_fp(fp: object) -> str:
    if not isinstance(fp, str) or not fp:
        raise TypeError(f"fp must be a fingerprint string; got {type(fp).__name__}.")
    return fp


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
