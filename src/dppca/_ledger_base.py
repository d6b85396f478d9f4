"""The ledger's file: dataset keys, where the file lives, and the SQLite store.

:func:`fingerprint` names a dataset, :func:`default_ledger_path` says where
the file lives, and :class:`_LedgerFile` opens the SQLite file, creates its
schema and reads and writes the stored rows (a cost's fields, so that the
accountant can compose the costs tightly later). :mod:`dppca.ledger` builds
the accountant on top of it and is the public home of every public name here.
"""

from __future__ import annotations

import contextlib
import dataclasses
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
from .accounting import PrivacyCost

__all__ = ["LedgerError", "default_ledger_path", "fingerprint"]

_SCHEMA_VERSION = 1
_TIMEOUT = 60.0  # seconds a writer waits for another one before giving up


class LedgerError(ValueError):
    """A ledger cannot do what was asked (no total set, a fixed total, a bad file)."""


def fingerprint(data: Any, columns: Sequence[str] | None = None) -> str:
    """A hex digest that names a dataset: its rows, over all its numeric columns.

    Parameters
    ----------
    data : DataFrame or array-like of shape (n, p)
        The table as read, before any column choice or scaling. For a
        DataFrame every numeric column counts (other columns, such as group
        labels, do not); an array is converted to float64.
    columns : sequence of str, optional
        One name per column of an array; default the DataFrame's names, else
        ``V1..Vp``.

    Returns
    -------
    str
        64 hexadecimal digits (SHA-256).

    Notes
    -----
    The key of a dataset's budget in the ledger and the ``data_fingerprint``
    of a release file. It depends on the multiset of rows and the column
    names only: reordering the rows or the columns gives the same digest
    (the rows are the same people), any changed value (``-0.0`` counts as
    ``0.0``, every NaN as one NaN), row or name gives another. Which columns
    are analysed, and how they are scaled, does not matter: every analysis of
    the same rows spends from one budget.

    The digest is stored on the data holder's machine only. It is not a
    private release: anyone who can guess the whole table can confirm the
    guess with it, so do not publish it.

    Examples
    --------
    >>> import numpy as np
    >>> a = fingerprint(np.eye(3), ["x", "y", "z"])
    >>> a == fingerprint(np.eye(3)[::-1], ["x", "y", "z"]), len(a)
    (True, 64)
    """
    if isinstance(data, pd.DataFrame):
        from ._validation import is_numeric_dtype

        numeric = [c for c in data.columns if is_numeric_dtype(data[c].dtype)]
        if columns is None:
            columns = [str(c) for c in numeric]
        data = data[numeric].to_numpy(dtype=np.float64, na_value=np.nan)
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise ValueError(f"data must be two-dimensional; got {arr.ndim} dimension(s).")
    names = [f"V{j + 1}" for j in range(arr.shape[1])] if columns is None else list(columns)
    names = [str(c) for c in names]
    if len(names) != arr.shape[1]:
        raise ValueError(
            f"columns must name every column of data ({arr.shape[1]}); got {len(names)}."
        )
    order = sorted(range(len(names)), key=lambda j: names[j])
    values = np.array(arr, dtype="<f8")[:, order] + 0.0  # one bit pattern for zero
    values[np.isnan(values)] = np.nan  # one bit pattern for NaN
    if values.shape[0] > 1 and values.shape[1]:
        # Rows in a canonical order (lexicographic, NaN last): the digest
        # sees the multiset of rows, not their order.
        values = values[np.lexsort(values.T[::-1])]
    values = np.ascontiguousarray(values)
    h = hashlib.sha256(b"dppca-fingerprint-v2\0")
    h.update(json.dumps([names[j] for j in order], ensure_ascii=False).encode("utf-8") + b"\0")
    h.update(np.asarray(values.shape, dtype="<i8").tobytes())
    h.update(values.data.cast("B"))
    return h.hexdigest()


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


def _check_fp(fp: object) -> str:
    if not isinstance(fp, str) or not fp:
        raise TypeError(f"fp must be a fingerprint string; got {type(fp).__name__}.")
    return fp


_BASIC_FIELDS = ("eps", "delta", "mechanism", "released", "parts")


def _detail(leaf: PrivacyCost) -> str | None:
    """The noise fields of a cost (kind, sensitivity, sigma, scale, multiplier), as JSON."""
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


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS datasets ("
    " fp TEXT PRIMARY KEY, name TEXT, eps REAL NOT NULL,"
    " delta REAL NOT NULL, created TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS charges ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, fp TEXT NOT NULL"
    " REFERENCES datasets(fp), time TEXT NOT NULL, name TEXT,"
    " kind TEXT NOT NULL, eps REAL NOT NULL, delta REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS parts ("
    " charge INTEGER NOT NULL REFERENCES charges(id), released TEXT,"
    " mechanism TEXT, eps REAL NOT NULL, delta REAL NOT NULL, detail TEXT)",
    "CREATE INDEX IF NOT EXISTS charges_fp ON charges(fp)",
)


class _LedgerFile:
    """The SQLite file of a ledger: connections, schema, and the stored rows."""

    path: Path | str

    def _open(self, path: str | os.PathLike[str] | None) -> None:
        if path is None:
            path = default_ledger_path()
        self.path = ":memory:" if str(path) == ":memory:" else Path(path).expanduser()
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
                for statement in _SCHEMA:
                    con.execute(statement)
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

    # -- rows --------------------------------------------------------------------------
    @staticmethod
    def _total(con: sqlite3.Connection, fp: str) -> tuple[float, float] | None:
        row = con.execute("SELECT eps, delta FROM datasets WHERE fp = ?", (fp,)).fetchone()
        return None if row is None else (float(row[0]), float(row[1]))

    @staticmethod
    def _costs(con: sqlite3.Connection, fp: str) -> list[PrivacyCost]:
        """The dataset's charges in order, each as the cost it was charged with.

        Every part comes back with the noise fields it was recorded with, so
        the accountant composes the charges as tightly as the releases did.
        """
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
        # A charge claims what it was charged: a release composed tightly
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

    @staticmethod
    def _insert_charge(
        con: sqlite3.Connection,
        fp: str,
        cost: PrivacyCost,
        *,
        time: str,
        kind: str,
        name: str | None,
    ) -> int:
        cur = con.execute(
            "INSERT INTO charges (fp, time, name, kind, eps, delta) VALUES (?, ?, ?, ?, ?, ?)",
            (fp, time, name, kind, cost.eps, cost.delta),
        )
        charge_id = int(cur.lastrowid)  # type: ignore[arg-type]
        con.executemany(
            "INSERT INTO parts (charge, released, mechanism, eps, delta, detail)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (charge_id, c.released, c.mechanism, c.eps, c.delta, _detail(c))
                for c in cost.leaves()
            ],
        )
        return charge_id
