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
import hashlib
import math
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring as _quote
from pathlib import Path
from typing import Any

from .cost import PrivacyCost
from .ledger_rows import (
    _APPLICATION_ID,
    _ENCODER,
    _SCHEMA,
    _SCHEMA_VERSION,
    _TABLES,
    RECOVERY,
    _busy,
    _detail,
    _digest,
    _leaf,
    _stored,
    _Upgrades,
)
from .tally import Tally

__all__ = ["LedgerError", "default_ledger_path", "ledger_timeout"]

_DEFAULT_TIMEOUT = 10.0
# Files up to this size get SQLite's full integrity check each time they are
# opened (about 0.1 s per 8 MB); larger ones the constant-time checks (size,
# marks, seals), and the full one through Ledger.verify / dppca ledger --verify.
_FULL_CHECK_BYTES = 8_000_000


def ledger_timeout() -> float:
    """Seconds a command waits for a ledger another process is writing: 10 by default.

    ``$DPPCA_LEDGER_TIMEOUT`` sets another wait (a number of seconds >= 0).
    After the wait the command stops with a message that the ledger is busy;
    nothing is recorded or released.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"DPPCA_LEDGER_TIMEOUT": "2.5"}):
    ...     ledger_timeout()
    2.5
    """
    text = os.environ.get("DPPCA_LEDGER_TIMEOUT", "")
    if not text:
        return _DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value >= 0 and value < 1e6):
        raise LedgerError(
            f"DPPCA_LEDGER_TIMEOUT must be a number of seconds in [0, 1e6); got {text!r}."
        )
    return value


class LedgerError(ValueError):
    """A ledger cannot do what was asked (no total set, a fixed total, a bad file).

    Examples
    --------
    >>> from dppca import PrivacyCost
    >>> from dppca.privacy.ledger import Ledger, LedgerError
    >>> try:  # a dataset without a total cannot be charged
    ...     Ledger(":memory:").charge("abc", PrivacyCost(0.4, 4e-6, "gaussian", "d"), kind="d")
    ... except LedgerError:
    ...     print("refused")
    refused
    """


def default_ledger_path() -> Path:
    """Where the ledger lives unless told otherwise.

    ``$DPPCA_LEDGER`` if set; else ``$XDG_STATE_HOME/dppca/ledger.sqlite``;
    else ``~/.local/state/dppca/ledger.sqlite`` (on Windows under
    ``%LOCALAPPDATA%``).

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"DPPCA_LEDGER": "/tmp/my-ledger.sqlite"}):
    ...     default_ledger_path().name
    'my-ledger.sqlite'
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


def _head_text(head: tuple[Any, ...], encode: Callable[[Any], str]) -> str:
    """JSON of a charge's ``time, name, kind, eps, delta`` as the digests' encoder writes it.

    Strings through the encoder's own escaping, finite floats by their repr
    (what the encoder writes for them); anything else through the encoder.
    """
    time, name, kind, eps, delta = head
    if (
        type(time) is str
        and type(kind) is str
        and (name is None or type(name) is str)
        and type(eps) is float
        and type(delta) is float
        and math.isfinite(eps)
        and math.isfinite(delta)
    ):
        shown = "null" if name is None else _quote(name)
        return f"{_quote(time)},{shown},{_quote(kind)},{eps!r},{delta!r}"
    return encode(list(head))[1:-1]


class _LedgerFile(_Upgrades):
    """The SQLite file of a ledger: opening and checking it, the schema, the stored rows.

    A file is used only if it carries the ledger's application id and a
    known schema version (older schemas are upgraded in place, in one
    transaction), passes SQLite's integrity check and its records are
    intact: each charge's row holds a digest chained over the dataset's
    charges, and each dataset's row its last digest, a composed summary of
    its charges (:class:`~dppca.privacy.tally.Tally`, what the accountant
    reads) and a seal over the total, the last digest and the summary. A
    changed total or summary, or a removed or added charge, is seen in
    constant time on every use; :meth:`verify` walks every chain and checks
    each summary against a full recomputation. A file that does not exist
    is created (atomically: the schema is written to a temporary file, then
    linked into place). An empty, foreign or damaged file is refused with
    :class:`LedgerError`, never re-initialised.
    """

    path: Path | str
    timeout: float

    def _open(self, path: str | os.PathLike[str] | None, timeout: float | None = None) -> None:
        if path is None:
            path = default_ledger_path()
        self.timeout = ledger_timeout() if timeout is None else float(timeout)
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

        A file of an older schema is upgraded in place. ``verify=True`` also
        checks every dataset's seal, last charge and count (constant time
        each; :meth:`verify` walks the chains).
        """
        if isinstance(self.path, Path) and self.path.stat().st_size == 0:
            raise self._refuse("is an empty file (zero bytes), not a dppca ledger")
        try:
            app_id = con.execute("PRAGMA application_id").fetchone()[0]
            version = con.execute("PRAGMA user_version").fetchone()[0]
            tables = {
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        except sqlite3.OperationalError as exc:
            if _busy(exc):
                raise self._failure(exc) from None
            raise self._refuse(f"is not a dppca ledger, or is damaged ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise self._refuse(f"is not a dppca ledger, or is damaged ({exc})") from None
        if app_id == 0 and version == 1 and _TABLES <= tables:
            self._upgrade(con, 1)
        elif app_id != _APPLICATION_ID:
            raise self._refuse("is another program's SQLite file, not a dppca ledger")
        elif version > _SCHEMA_VERSION:
            raise LedgerError(
                f"the ledger {str(self.path)!r} was written by a newer dppca (schema "
                f"{version}; this dppca reads schemas 1 to {_SCHEMA_VERSION}); upgrade dppca "
                "to use it. Nothing was recorded or released."
            )
        elif 2 <= version < _SCHEMA_VERSION and _TABLES <= tables:
            self._upgrade(con, version)
        elif version != _SCHEMA_VERSION or not _TABLES <= tables:
            raise self._refuse(f"has an unknown layout (schema {version})")
        if verify:
            self._pages(con)
            if not isinstance(self.path, Path) or self.path.stat().st_size <= _FULL_CHECK_BYTES:
                self._integrity(con)
            for (fp,) in con.execute("SELECT fp FROM datasets").fetchall():
                self._row(con, fp, count=True)

    def _pages(self, con: sqlite3.Connection) -> None:
        """A file cut short or grown by a few bytes is seen at once (size against pages)."""
        if not isinstance(self.path, Path):
            return
        size = con.execute("PRAGMA page_size").fetchone()[0]
        count = con.execute("PRAGMA page_count").fetchone()[0]
        if self.path.stat().st_size != size * count:
            raise self._refuse(
                f"is damaged (its size is not a whole number of its {size}-byte pages)"
            )

    def _integrity(self, con: sqlite3.Connection) -> None:
        try:
            rows = con.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.OperationalError as exc:
            if _busy(exc):
                raise self._failure(exc) from None
            raise self._refuse(f"is damaged ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise self._refuse(f"is damaged ({exc})") from None
        if rows != [("ok",)]:
            raise self._refuse(f"is damaged (integrity check: {rows[0][0]})")

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
            con = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)
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
        if _busy(exc):
            return LedgerError(
                f"the ledger {str(self.path)!r} is busy: another process has held it for "
                f"more than {self.timeout:g} s (the wait, set by DPPCA_LEDGER_TIMEOUT); "
                "nothing was recorded or released. Run the command again when the other "
                "one has finished."
            )
        return self._refuse(f"cannot be used ({text})")

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction on a checked file: the lock is taken before any read.

        Held for a few row reads and writes only: no release computes inside it.
        """
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
    def _row(
        self, con: sqlite3.Connection, fp: str, *, count: bool = False
    ) -> tuple[tuple[float, float], str, Tally] | None:
        """A dataset's total, last digest and summary, checked: None if it has no row.

        Constant time: the seal covers the total, last digest and summary,
        and the last charge's digest must match them. ``count=True`` (when a
        ledger is opened) also counts the dataset's charges against the
        summary (one index scan).
        """
        row = con.execute(
            "SELECT eps, delta, seal, last, tally FROM datasets WHERE fp = ?", (fp,)
        ).fetchone()
        if row is None:
            return None
        total = (float(row[0]), float(row[1]))
        damaged = self._refuse("is damaged (a dataset's total or its last charge was changed)")
        if row[2] != _digest(fp, *total, row[3], row[4]):
            raise damaged
        head = con.execute(
            "SELECT digest FROM charges WHERE fp = ? ORDER BY id DESC LIMIT 1", (fp,)
        ).fetchone()
        if ("" if head is None else head[0]) != row[3]:
            raise damaged
        try:
            tally = Tally.from_json(row[4]) if row[4] else Tally()
        except (ValueError, KeyError, TypeError):
            raise damaged from None
        if count and tally.charges:
            (held,) = con.execute("SELECT COUNT(*) FROM charges WHERE fp = ?", (fp,)).fetchone()
            if held != tally.charges:
                raise damaged
        return total, row[3], tally

    def _total(self, con: sqlite3.Connection, fp: str) -> tuple[float, float] | None:
        row = self._row(con, fp)
        return None if row is None else row[0]

    def _tally(self, con: sqlite3.Connection, fp: str) -> Tally:
        row = self._row(con, fp)
        return Tally() if row is None else row[2]

    def _seal(
        self,
        con: sqlite3.Connection,
        fp: str,
        total: tuple[float, float],
        last: str,
        tally: Tally,
    ) -> None:
        text = tally.to_json()
        con.execute(
            "UPDATE datasets SET eps = ?, delta = ?, last = ?, tally = ?, seal = ? WHERE fp = ?",
            (total[0], total[1], last, text, _digest(fp, *total, last, text), fp),
        )

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

    def _walk(self, con: sqlite3.Connection, fp: str) -> tuple[list[PrivacyCost], str]:
        """The dataset's charges in order, each as the cost it was charged with, and the
        last digest; the chain of digests is checked on the way (a damaged record raises).

        Every part comes back with the noise fields it was recorded with, so
        the accountant composes the charges as tightly as the releases did.
        One query in all, whatever the number of charges; identical records
        (a ledger of many releases of one plan) are decoded once and share
        one cost object, so the time is mostly the chain's hashing itself.
        """
        rows = con.execute(
            "SELECT c.id, c.time, c.name, c.kind, c.eps, c.delta, c.digest,"
            " p.released, p.mechanism, p.eps, p.delta, p.detail FROM charges c"
            " LEFT JOIN parts p ON p.charge = c.id WHERE c.fp = ? ORDER BY c.id, p.rowid",
            (fp,),
        ).fetchall()
        # One (charge's row, its parts) per charge; a charge without parts has one row
        # whose part fields are NULL (parts.eps is NOT NULL in a part).
        records: list[tuple[tuple[Any, ...], list[tuple[Any, ...]]]] = []
        charge = None
        current: list[tuple[Any, ...]] = []
        for row in rows:
            if row[0] != charge:
                charge, current = row[0], []
                records.append((row, current))
            if row[9] is not None:
                current.append(row[7:])
        damaged = "is damaged (a charge's record was changed)"
        encode, sha256 = _ENCODER.encode, hashlib.sha256
        leaves: dict[tuple[Any, ...], PrivacyCost] = {}
        charged: dict[tuple[Any, ...], PrivacyCost] = {}
        texts: dict[Any, str] = {}
        costs: list[PrivacyCost] = []
        key_text = encode(fp)
        last = ""
        for row, parts in records:
            # The text of _digest(last, [fp, time, name, kind, eps, delta], parts), each
            # distinct list of parts encoded once: '["last",[fp,time,...],[[part],...]]'.
            shared = tuple(parts)
            # 0.0 == -0.0 but they are written differently: such parts keyed by their repr
            seen = shared if all(p[2] and p[3] for p in parts) else repr(shared)
            parts_text = texts.get(seen)
            if parts_text is None:
                parts_text = texts[seen] = encode(parts)
            text = f'["{last}",[{key_text},{_head_text(row[1:6], encode)}],{parts_text}]'
            last = sha256(text.encode("utf-8")).hexdigest()
            digest = row[6]
            if digest != last or not parts:
                raise self._refuse(damaged)
            claim = (float(row[4]), float(row[5]))
            cost = charged.get((claim, shared))
            if cost is None:
                cost = charged[(claim, shared)] = self._charged(claim, parts, leaves)
            costs.append(cost)
        return costs, last

    @staticmethod
    def _charged(
        claim: tuple[float, float],
        parts: list[tuple[Any, ...]],
        leaves: dict[tuple[Any, ...], PrivacyCost],
    ) -> PrivacyCost:
        """A charge as the cost it was charged with, from its part rows."""
        costs = []
        for part in parts:
            leaf = leaves.get(part)
            if leaf is None:
                leaf = leaves[part] = _leaf(part[2], part[3], part[1], part[0], part[4])
            costs.append(leaf)
        # A charge claims exactly the (eps, delta) it was charged: a release
        # composed tightly claims one valid pair, which mixing the smaller
        # eps and the smaller delta of two statements would not be.
        if len(costs) == 1 and (costs[0].eps, costs[0].delta) == claim:
            return costs[0]
        return PrivacyCost(
            *claim,
            "composition",
            "; ".join(c.released for c in costs),
            tuple(costs),
            kind="composed",
        )

    def _costs(self, con: sqlite3.Connection, fp: str) -> list[PrivacyCost]:
        """The dataset's charges as costs, the chain and the summary checked (linear time)."""
        costs, last = self._walk(con, fp)
        row = self._row(con, fp)
        if row is not None and (row[1] != last or not row[2].agrees(Tally.counted(costs))):
            raise self._refuse("is damaged (a charge's record was changed)")
        return costs

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
        if created is not None:
            con.execute(
                "INSERT INTO datasets (fp, name, eps, delta, created, seal)"
                " VALUES (?, ?, ?, ?, ?, '')",
                (fp, name, eps, delta, created),
            )
            self._seal(con, fp, (eps, delta), "", Tally())
            return
        row = self._row(con, fp)
        assert row is not None  # the caller checked
        self._seal(con, fp, (eps, delta), row[1], row[2])

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
        row = self._row(con, fp)
        assert row is not None  # the caller checked
        total, last, tally = row
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
        digest = _digest(last, *self._charge_record(con, charge_id))
        con.execute("UPDATE charges SET digest = ? WHERE id = ?", (digest, charge_id))
        self._seal(con, fp, total, digest, tally.plus(_stored(con, charge_id, cost)))
        return charge_id
