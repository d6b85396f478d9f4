"""The ledger's file: where it lives, and the SQLite store with its checks.

:func:`default_ledger_path` says where the file lives, and
:class:`_LedgerFile` opens the SQLite file, checks it (marks, integrity,
chained digests), creates its schema and reads and writes the stored rows (a
cost's fields, so that the accountant can compose the costs tightly later).
:mod:`dppca.privacy.ledger` builds the accountant on top of it and is the public
home of every public name here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .accounting import PrivacyCost

__all__ = ["LedgerError", "default_ledger_path"]

_SCHEMA_VERSION = 2
_TIMEOUT = 60.0  # seconds a writer waits for another one before giving up


class LedgerError(ValueError):
    """A ledger cannot do what was asked (no total set, a fixed total, a bad file)."""


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


# The file's marks: SQLite's application id (the bytes "dPPc") and schema version.
_APPLICATION_ID = 0x64505063
_SCHEMA = (
    "CREATE TABLE datasets ("
    " fp TEXT PRIMARY KEY, name TEXT, eps REAL NOT NULL,"
    " delta REAL NOT NULL, created TEXT NOT NULL, seal TEXT NOT NULL)",
    "CREATE TABLE charges ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, fp TEXT NOT NULL"
    " REFERENCES datasets(fp), time TEXT NOT NULL, name TEXT,"
    " kind TEXT NOT NULL, eps REAL NOT NULL, delta REAL NOT NULL,"
    " content TEXT, payload TEXT, digest TEXT NOT NULL)",
    "CREATE TABLE parts ("
    " charge INTEGER NOT NULL REFERENCES charges(id), released TEXT,"
    " mechanism TEXT, eps REAL NOT NULL, delta REAL NOT NULL, detail TEXT)",
    "CREATE INDEX charges_fp ON charges(fp)",
    "CREATE INDEX charges_content ON charges(fp, content)",
)
_TABLES = {"datasets", "charges", "parts"}

#: How to recover from a damaged or foreign ledger file (quoted in every such error).
RECOVERY = (
    "Nothing was released. Recovery: keep the file for inspection and restore the "
    "ledger from a backup; or, accepting that its record of what was spent is lost, "
    "move it away (a new ledger is then created) and set each dataset's total to what "
    "remains of its budget by your own records (Ledger.set_total, or --budget-eps/"
    "--budget-delta with the first release); or name another ledger file."
)


def _digest(*items: Any) -> str:
    """SHA-256 of a canonical JSON text of ``items`` (floats by their exact repr)."""
    text = json.dumps(items, ensure_ascii=False, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _LedgerFile:
    """The SQLite file of a ledger: opening and checking it, the schema, the stored rows.

    A file is used only if it carries the ledger's application id and a
    known schema version (or was written by the first dppca ledger schema),
    passes ``PRAGMA integrity_check`` and its records are intact: each
    charge's row holds a digest chained over the dataset's charges, and each
    dataset's row a seal over its total and the last digest, so a changed,
    removed or added record is seen, not only a broken page. A file that
    does not exist is created (atomically: the schema is written to a
    temporary file, then linked into place). An empty, foreign or damaged
    file is refused with :class:`LedgerError`, never re-initialised.
    """

    path: Path | str

    def _open(self, path: str | os.PathLike[str] | None) -> None:
        if path is None:
            path = default_ledger_path()
        self.path = ":memory:" if str(path) == ":memory:" else Path(path).expanduser()
        self._memory: sqlite3.Connection | None = None
        self._memory_lock = threading.RLock()  # one shared connection: one user at a time
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
            if not self.path.exists():
                self._create_file()
        else:
            with self._connect() as con:
                self._create_schema(con)
        with self._connect() as con:
            self._check_file(con, verify=True)

    # -- creating and checking ---------------------------------------------------------
    @staticmethod
    def _create_schema(con: sqlite3.Connection) -> None:
        con.execute("BEGIN IMMEDIATE")
        for statement in _SCHEMA:
            con.execute(statement)
        con.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
        con.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        con.execute("COMMIT")

    def _create_file(self) -> None:
        """Write a new ledger beside the target and link it into place (if still absent)."""
        assert isinstance(self.path, Path)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.new")
        try:
            con = sqlite3.connect(str(tmp), isolation_level=None)
            try:
                self._create_schema(con)
            finally:
                con.close()
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass  # another process created it first: use that one
            except OSError:  # no hard links here: create only if still absent
                with contextlib.suppress(FileExistsError):
                    fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
                    with os.fdopen(fd, "wb") as out:
                        out.write(tmp.read_bytes())
        except (OSError, sqlite3.Error) as exc:
            raise LedgerError(f"cannot create the ledger {str(self.path)!r}: {exc}.") from None
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _refuse(self, why: str) -> LedgerError:
        return LedgerError(f"the ledger {str(self.path)!r} {why}. {RECOVERY}")

    def _check_file(self, con: sqlite3.Connection, *, verify: bool = False) -> None:
        """Refuse a file that is empty, foreign, damaged or from a newer dppca.

        ``verify=True`` also checks every dataset's chain of charges.
        """
        if isinstance(self.path, Path) and self.path.stat().st_size == 0:
            raise self._refuse("is an empty file (zero bytes), not a dppca ledger")
        try:
            app_id = con.execute("PRAGMA application_id").fetchone()[0]
            version = con.execute("PRAGMA user_version").fetchone()[0]
            tables = {
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        except sqlite3.DatabaseError as exc:
            raise self._refuse(f"is not a dppca ledger, or is damaged ({exc})") from None
        if app_id == 0 and version == 1 and _TABLES <= tables:
            self._upgrade_v1(con)
        elif app_id != _APPLICATION_ID:
            raise self._refuse("is another program's SQLite file, not a dppca ledger")
        elif version > _SCHEMA_VERSION:
            raise LedgerError(
                f"the ledger {str(self.path)!r} was written by a newer dppca (schema "
                f"{version}); upgrade dppca to use it."
            )
        elif version != _SCHEMA_VERSION or not _TABLES <= tables:
            raise self._refuse(f"has an unknown layout (schema {version})")
        self._integrity(con)
        if verify:
            for (fp,) in con.execute("SELECT fp FROM datasets").fetchall():
                self._costs(con, fp)

    def _integrity(self, con: sqlite3.Connection) -> None:
        try:
            rows = con.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._refuse(f"is damaged ({exc})") from None
        if rows != [("ok",)]:
            raise self._refuse(f"is damaged (integrity check: {rows[0][0]})")

    def _upgrade_v1(self, con: sqlite3.Connection) -> None:
        """Add the marks, digests and seals to a ledger of the first schema, in place."""
        self._integrity(con)
        con.execute("BEGIN IMMEDIATE")
        try:
            con.execute("ALTER TABLE datasets ADD COLUMN seal TEXT NOT NULL DEFAULT ''")
            for column in ("content TEXT", "payload TEXT", "digest TEXT NOT NULL DEFAULT ''"):
                con.execute(f"ALTER TABLE charges ADD COLUMN {column}")
            con.execute("CREATE INDEX charges_content ON charges(fp, content)")
            for fp, eps, delta in con.execute("SELECT fp, eps, delta FROM datasets").fetchall():
                last = ""
                ids = con.execute("SELECT id FROM charges WHERE fp = ? ORDER BY id", (fp,))
                for (charge,) in ids.fetchall():
                    last = _digest(last, *self._charge_record(con, charge))
                    con.execute("UPDATE charges SET digest = ? WHERE id = ?", (last, charge))
                con.execute(
                    "UPDATE datasets SET seal = ? WHERE fp = ?",
                    (_digest(fp, float(eps), float(delta), last), fp),
                )
            con.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
            con.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise

    # -- connections -------------------------------------------------------------------
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
            uri = self.path.absolute().as_uri() + "?mode=rw"  # type: ignore[union-attr]
            con = sqlite3.connect(uri, uri=True, timeout=_TIMEOUT, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._refuse(f"cannot be opened ({exc})") from None
        try:
            yield con
        except sqlite3.DatabaseError as exc:
            raise self._failure(exc) from None
        finally:
            con.close()

    def _failure(self, exc: sqlite3.DatabaseError) -> LedgerError:
        text = str(exc)
        if "full" in text:
            return LedgerError(
                f"the disk under the ledger {str(self.path)!r} is full ({text}); nothing was "
                "recorded or released. Free some space and run the command again."
            )
        if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
            return LedgerError(
                f"the ledger {str(self.path)!r} is busy (another process held it for more "
                f"than {_TIMEOUT:g} s); nothing was recorded. Try again."
            )
        return self._refuse(f"cannot be used ({text})")

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction on a checked file: the lock is taken before any read."""
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                self._check_file(con)
                yield con
                con.execute("COMMIT")
            except BaseException:
                # SQLite may already have rolled back (a full disk, say).
                if con.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        con.execute("ROLLBACK")
                raise

    # -- rows --------------------------------------------------------------------------
    def _total(self, con: sqlite3.Connection, fp: str) -> tuple[float, float] | None:
        row = con.execute("SELECT eps, delta, seal FROM datasets WHERE fp = ?", (fp,)).fetchone()
        if row is None:
            return None
        last = con.execute(
            "SELECT digest FROM charges WHERE fp = ? ORDER BY id DESC LIMIT 1", (fp,)
        ).fetchone()
        total = (float(row[0]), float(row[1]))
        if row[2] != _digest(fp, *total, "" if last is None else last[0]):
            raise self._refuse("is damaged (a dataset's total or its last charge was changed)")
        return total

    @staticmethod
    def _charge_record(con: sqlite3.Connection, charge: int) -> list[Any]:
        """The fields of one charge that its digest covers.

        The release's content hash and payload are left out: they may be
        attached after the charge (when the release is saved), and a damaged
        hash can only make a reuse be charged again, never make one free
        that was not paid.
        """
        head = con.execute(
            "SELECT fp, time, name, kind, eps, delta FROM charges WHERE id = ?",
            (charge,),
        ).fetchone()
        parts = con.execute(
            "SELECT released, mechanism, eps, delta, detail FROM parts WHERE charge = ?"
            " ORDER BY rowid",
            (charge,),
        ).fetchall()
        return [list(head), [list(p) for p in parts]]

    def _costs(self, con: sqlite3.Connection, fp: str) -> list[PrivacyCost]:
        """The dataset's charges in order, each as the cost it was charged with.

        Every part comes back with the noise fields it was recorded with, so
        the accountant composes the charges as tightly as the releases did.
        The chain of digests is checked on the way (a damaged record raises).
        """
        rows = con.execute(
            "SELECT id, eps, delta, digest FROM charges WHERE fp = ? ORDER BY id", (fp,)
        ).fetchall()
        costs: list[PrivacyCost] = []
        last = ""
        for charge, c_eps, c_delta, digest in rows:
            record = self._charge_record(con, charge)
            last = _digest(last, *record)
            if digest != last or not record[1]:
                raise self._refuse("is damaged (a charge's record was changed)")
            leaves = [_leaf(p[2], p[3], p[1], p[0], p[4]) for p in record[1]]
            claim = (float(c_eps), float(c_delta))
            # A charge claims exactly the (eps, delta) it was charged: a release
            # composed tightly claims one valid pair, which mixing the smaller
            # eps and the smaller delta of two statements would not be.
            if len(leaves) == 1 and (leaves[0].eps, leaves[0].delta) == claim:
                costs.append(leaves[0])
            else:
                costs.append(
                    PrivacyCost(
                        *claim,
                        "composition",
                        "; ".join(c.released for c in leaves),
                        tuple(leaves),
                        kind="composed",
                    )
                )
        if rows:
            self._total(con, fp)  # the seal covers the last digest
        return costs

    @staticmethod
    def _last_digest(con: sqlite3.Connection, fp: str) -> str:
        row = con.execute(
            "SELECT digest FROM charges WHERE fp = ? ORDER BY id DESC LIMIT 1", (fp,)
        ).fetchone()
        return "" if row is None else str(row[0])

    def _put_total(
        self,
        con: sqlite3.Connection,
        fp: str,
        eps: float,
        delta: float,
        *,
        name: str | None = None,
        created: str | None = None,
    ) -> None:
        """Insert (with ``created``) or update a dataset's total, sealed."""
        seal = _digest(fp, eps, delta, self._last_digest(con, fp))
        if created is not None:
            con.execute(
                "INSERT INTO datasets (fp, name, eps, delta, created, seal)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (fp, name, eps, delta, created, seal),
            )
        else:
            con.execute(
                "UPDATE datasets SET eps = ?, delta = ?, seal = ? WHERE fp = ?",
                (eps, delta, seal, fp),
            )

    def _insert_charge(
        self,
        con: sqlite3.Connection,
        fp: str,
        cost: PrivacyCost,
        *,
        time: str,
        kind: str,
        name: str | None,
        content: str | None = None,
        payload: str | None = None,
    ) -> int:
        total = self._total(con, fp)
        assert total is not None  # the caller checked
        cur = con.execute(
            "INSERT INTO charges (fp, time, name, kind, eps, delta, content, payload, digest)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, '')",
            (fp, time, name, kind, cost.eps, cost.delta, content, payload),
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
        previous = con.execute(
            "SELECT digest FROM charges WHERE fp = ? AND id < ? ORDER BY id DESC LIMIT 1",
            (fp, charge_id),
        ).fetchone()
        digest = _digest(
            "" if previous is None else previous[0], *self._charge_record(con, charge_id)
        )
        con.execute("UPDATE charges SET digest = ? WHERE id = ?", (digest, charge_id))
        self._put_total(con, fp, *total)
        return charge_id
