"""The ledger's keys across versions, its full check and a first total.

:class:`_LedgerKeys` gives :class:`dppca.privacy.ledger.Ledger` what ties a
table to its record: ``key`` (the current fingerprint, with the record of an
earlier version's key moved onto it), ``adopt``, the full check ``verify``
and the total written with a first charge.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .fingerprint import fingerprint, legacy_fingerprints
from .ledger_files import _KEPT, file_digest, file_state
from .ledger_rows import _digest
from .ledger_store import LedgerError, _check_fp
from .ledger_tables import _LedgerTables
from .tally import Tally

__all__: list[str] = []


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _check_total(eps: object, delta: object) -> tuple[float, float]:
    from ..core.validation import check_delta, check_eps

    return check_eps(eps, "total eps"), check_delta(delta, "total delta")


def _same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return math.isclose(a[0], b[0], rel_tol=1e-12) and math.isclose(a[1], b[1], rel_tol=1e-12)


class _LedgerKeys(_LedgerTables):
    """Keys of earlier versions, the full check and a first total (mixed into Ledger)."""

    _public_keys: set[str]

    def _tally_of(self, fp: str) -> Tally:
        with self._connect() as con:
            return self._tally(con, _check_fp(fp))

    def verify(self, fp: str | None = None) -> None:
        """Check the whole file: SQLite's full integrity check, every charge's digest
        chain, and each dataset's summary against a full recomputation (``fp=None``:
        every dataset). Raises :class:`LedgerError` if anything was changed. Linear in
        the size of the ledger, about 0.2 CPU-s per 10,000 charges (measured with
        ``benchmarks/bench_ledger.py``); opening a large ledger checks its size, marks
        and seals in constant time only (``dppca ledger --verify`` runs this)."""
        with self._connect() as con:
            self._integrity(con)
            fps = (
                [_check_fp(fp)]
                if fp is not None
                else [r[0] for r in con.execute("SELECT fp FROM datasets").fetchall()]
            )
            for key in fps:
                self._costs(con, key)

    # -- keys of earlier versions ------------------------------------------------------
    def key(self, data: Any, name: str | None = None) -> str:
        """The ledger key of a table, with the spending earlier versions recorded on it.

        Returns :func:`fingerprint` of ``data``; if ``data`` is exactly a bundled
        table (every column), the key is marked public (:meth:`is_public`) for
        this ledger object. A record an earlier dppca
        kept under the same table's old key (:func:`legacy_fingerprints`) is
        first moved onto it (:meth:`adopt`), so no spending is forgotten
        across versions. If the current key has no record and a record of the
        first ledger (schema 1) under the same ``name`` matches neither key
        (the table was changed or reordered since, or is another table with
        that name), :class:`LedgerError` is raised with the ways to go on:
        nothing is spent from a fresh budget while an older one may be this
        table's.
        """
        from ..datasets import bundled_name

        fp = fingerprint(data)
        public = bundled_name(data) is not None
        return self._keyed(fp, legacy_fingerprints(data), public=public, name=name)

    def _keyed(self, fp: str, legacy: Sequence[str], *, public: bool, name: str | None) -> str:
        """:meth:`key` once the table's keys are known: mark, adopt, refuse a stale name."""
        if public:
            self._public_keys.add(fp)
        old = [k for k in legacy if k != fp]
        with self._connect() as con:
            held = "SELECT 1 FROM datasets WHERE fp = ?"
            found = [k for k in old if con.execute(held, (k,)).fetchone()]
            mine = con.execute("SELECT 1 FROM datasets WHERE fp = ?", (fp,)).fetchone()
            stale = []
            if not found and mine is None and name is not None:
                stale = con.execute(
                    "SELECT fp FROM datasets WHERE keyrule = 1 AND name = ?", (str(name),)
                ).fetchall()
        for k in found:
            self.adopt(fp, k)
        if stale:
            prefix = stale[0][0][:12]
            raise LedgerError(
                f"the ledger {str(self.path)!r} holds spending on {name!r} recorded by an "
                "earlier dppca (ledger schema 1, which keyed a table by its rows in file "
                "order), and it does not match these data: the table was changed or "
                "reordered since, or it is another table with the same name. Nothing was "
                "released. If it is this table, move that record onto it with "
                f"'dppca ledger {name} --adopt {prefix}' (Ledger.adopt); if it is another "
                "table, give this file another name."
            )
        return fp

    def file_key(
        self,
        path: str | os.PathLike[str],
        read: Callable[[], Any],
        *,
        name: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, int]:
        """:meth:`key` of the table in a file, and its number of rows, remembered by its bytes.

        ``read()`` parses the file (with ``options``, which name how). A file
        this ledger keyed before, with the same bytes, options and parsing
        code, is keyed from the ledger without calling ``read``
        (:mod:`dppca.privacy.ledger_files` says why that is the same key and
        what the ledger learns); otherwise ``read()`` is called, the table
        keyed by :meth:`key` and the file remembered. Either way what an
        earlier dppca recorded under the table's old key is moved onto it, and
        a bundled table is marked public, as :meth:`key` does.
        """
        before = file_state(path)
        try:
            raw = file_digest(path, options) if before is not None else None
        except OSError:
            raw = None
        known = None if raw is None else self._known_file(raw)
        if known is not None:
            fp, rows, public, old = known
            return self._keyed(fp, old, public=public, name=name), rows
        from ..datasets import bundled_name

        data = read()
        fp, legacy = fingerprint(data), legacy_fingerprints(data)
        public = bundled_name(data) is not None
        rows = int(data.shape[0])
        if raw is not None and file_state(path) == before:
            self._remember_file(raw, fp, rows, public, legacy)
        return self._keyed(fp, legacy, public=public, name=name), rows

    def _known_file(self, raw: str) -> tuple[str, int, bool, list[str]] | None:
        """The entry of a file digest, if there is one and its seal holds."""
        with self._connect() as con:
            row = con.execute(
                "SELECT fp, rows, public, legacy, seal FROM files WHERE raw = ?", (raw,)
            ).fetchone()
        if row is None:
            return None
        fp, rows, public, legacy, seal = row
        if seal != _digest("file", raw, fp, rows, public, legacy):
            return None  # damaged: parse the file again
        try:
            keys = [str(k) for k in json.loads(legacy)]
        except (ValueError, TypeError):
            return None
        return str(fp), int(rows), bool(public), keys

    def _remember_file(
        self, raw: str, fp: str, rows: int, public: bool, legacy: Sequence[str]
    ) -> None:
        """Record a file's key (best effort: a ledger that cannot be written is left as is)."""
        text = json.dumps(list(legacy))
        seal = _digest("file", raw, fp, rows, int(public), text)
        with contextlib.suppress(LedgerError):
            with self._write() as con:
                con.execute(
                    "INSERT OR REPLACE INTO files (raw, fp, rows, public, legacy, seal)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (raw, fp, rows, int(public), text, seal),
                )
                con.execute(
                    "DELETE FROM files WHERE rowid <= (SELECT MAX(rowid) FROM files) - ?",
                    (_KEPT,),
                )

    def adopt(self, fp: str, old: str) -> None:
        """Move the record kept under key ``old`` onto key ``fp``: the same table's spending.

        ``old`` may be a unique prefix of a key. Every charge of ``old``
        becomes a charge of ``fp`` (in the order they were made, the chain of
        digests rebuilt), so all of them count against one total: ``fp``'s
        total if it has one (the smaller eps and the smaller delta of the two,
        if both had one), else ``old``'s. Raises :class:`LedgerError` for an
        unknown or ambiguous key.
        """
        fp = _check_fp(fp)
        with self._write() as con:
            keys = [
                r[0]
                for r in con.execute(
                    "SELECT fp FROM datasets WHERE substr(fp, 1, ?) = ?", (len(old), old)
                ).fetchall()
            ]
            if len(keys) != 1:
                raise LedgerError(
                    f"{old!r} names {'no' if not keys else 'more than one'} dataset in the "
                    "ledger; give the fingerprint prefix 'dppca ledger' prints."
                )
            (old,) = keys
            if old == fp:
                return
            was = self._row(con, old)
            now = self._row(con, fp)
            assert was is not None
            self._costs(con, old)  # the old chain must be intact
            if now is not None:
                self._costs(con, fp)
                total = (min(was[0][0], now[0][0]), min(was[0][1], now[0][1]))
                con.execute(
                    "UPDATE datasets SET name = COALESCE(name, (SELECT name FROM datasets"
                    " WHERE fp = ?)), created = min(created, (SELECT created FROM datasets"
                    " WHERE fp = ?)), keyrule = 2 WHERE fp = ?",
                    (old, old, fp),
                )
                con.execute("DELETE FROM datasets WHERE fp = ?", (old,))
            else:
                total = was[0]
                con.execute("UPDATE datasets SET fp = ?, keyrule = 2 WHERE fp = ?", (fp, old))
            con.execute("UPDATE charges SET fp = ? WHERE fp = ?", (fp, old))
            last = ""
            for (charge,) in con.execute(
                "SELECT id FROM charges WHERE fp = ? ORDER BY id", (fp,)
            ).fetchall():
                last = _digest(last, *self._charge_record(con, charge))
                con.execute("UPDATE charges SET digest = ? WHERE id = ?", (last, charge))
            costs, last = self._walk(con, fp)
            self._seal(con, fp, total, last, Tally.of(costs))

    def _first_total(
        self,
        con: Any,
        fp: str,
        row: tuple[tuple[float, float], str, Tally] | None,
        total: tuple[float, float],
        *,
        declared: bool,
        name: str | None,
    ) -> tuple[tuple[tuple[float, float], str, Tally] | None, tuple[float, float] | None]:
        """The dataset's row once ``total`` is written where it must be, and the total
        written (None if none was)."""
        eps, delta = _check_total(*total)
        written = None
        if row is None:
            self._put_total(con, fp, eps, delta, name=name, created=_now())
            written = (eps, delta)
        elif declared and not _same(row[0], (eps, delta)):
            if row[2].charges:
                raise LedgerError(
                    f"the total budget of this dataset is already (eps={row[0][0]:g}, "
                    f"delta={row[0][1]:g}), recorded with its {row[2].charges} release(s); "
                    f"the total (eps={eps:g}, delta={delta:g}) asked for was refused and "
                    "nothing was released. Keep the recorded total (leave out "
                    "--budget-eps/--budget-delta), or keep another budget in another ledger "
                    "file."
                )
            self._put_total(con, fp, eps, delta)
            written = (eps, delta)
        return self._row(con, fp), written
