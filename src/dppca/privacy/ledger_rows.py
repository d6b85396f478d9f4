"""The ledger file's layout and records: schema, marks, digests, stored costs, upgrades.

:mod:`dppca.privacy.ledger_store` opens and checks the file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from typing import Any

from .cost import PrivacyCost
from .tally import Tally

__all__: list[str] = []

# Schema 1: the first ledger (fingerprint rule v1); 2: marks, digests and seals;
# 3: a composed summary (tally) and the last digest per dataset, parts indexed;
# 4: the key that tags release files (table made when first needed); 5: the keys of
# table files already read (``files``: file digest -> fingerprint), see _FILES_TABLE.
_SCHEMA_VERSION = 5

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
# Schema 4: the ledger's public id and its secret key for the tags that bind release
# files to the ledger that paid them (one row). The table is made with that row, at
# the first tagged file, so a ledger that never tagged one keeps schema 3's layout.
_BINDING_TABLE = "CREATE TABLE IF NOT EXISTS binding (ledger TEXT NOT NULL, key BLOB NOT NULL)"

# Schema 5: the fingerprint of each table file read, under a digest of its bytes and of
# how it was parsed (dppca.privacy.ledger_files), so that a command that only shows a
# table's budget need not parse the table again. Derived data: a row that fails its
# seal is ignored and the file parsed again.
_FILES_TABLE = (
    "CREATE TABLE IF NOT EXISTS files ("
    " raw TEXT PRIMARY KEY, fp TEXT NOT NULL, rows INTEGER NOT NULL,"
    " public INTEGER NOT NULL, legacy TEXT NOT NULL, seal TEXT NOT NULL)"
)

_SCHEMA = (
    "CREATE TABLE datasets ("
    " fp TEXT PRIMARY KEY, name TEXT, eps REAL NOT NULL,"
    " delta REAL NOT NULL, created TEXT NOT NULL, seal TEXT NOT NULL,"
    " last TEXT NOT NULL DEFAULT '', tally TEXT NOT NULL DEFAULT '',"
    " keyrule INTEGER NOT NULL DEFAULT 2)",
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
    "CREATE INDEX parts_charge ON parts(charge)",
    _FILES_TABLE,
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


# The canonical JSON of the digests (floats by their exact repr), made once.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), default=repr, check_circular=False
)


def _digest(*items: Any) -> str:
    """SHA-256 of a canonical JSON text of ``items`` (floats by their exact repr)."""
    return hashlib.sha256(_ENCODER.encode(list(items)).encode("utf-8")).hexdigest()


def _stored(con: sqlite3.Connection, charge: int, cost: PrivacyCost) -> PrivacyCost:
    """The cost as it will read back from the ledger (floats through SQLite and JSON)."""
    leaves = [
        _leaf(*row)
        for row in con.execute(
            "SELECT eps, delta, mechanism, released, detail FROM parts WHERE charge = ?"
            " ORDER BY rowid",
            (charge,),
        )
    ]
    if len(leaves) == 1 and (leaves[0].eps, leaves[0].delta) == (cost.eps, cost.delta):
        return leaves[0]
    return PrivacyCost(
        cost.eps,
        cost.delta,
        "composition",
        "; ".join(c.released for c in leaves),
        tuple(leaves),
        kind="composed",
    )


def _busy(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


class _Upgrades:
    """Bringing a ledger file of an earlier schema to this one (mixed into the store)."""

    # Provided by the store (dppca.privacy.ledger_store._LedgerFile).
    _integrity: Any
    _walk: Any
    _refuse: Any
    _seal: Any
    _charge_record: Any

    def _upgrade(self, con: sqlite3.Connection, version: int) -> None:
        """Bring a ledger of schema 1 to 4 to this schema, in place, in one transaction.

        Schema 1 (the first ledger) gets the marks, digests and seals of
        schema 2; every dataset then gets its summary and last digest, after
        its chain was checked (schema 3). Nothing is dropped: each dataset keeps its
        key, total and charges (keys of the first fingerprint rule are
        matched when the data are next read, :meth:`Ledger.adopt`). Schema 4
        may hold the table of the key that tags release files, made when first
        needed (:meth:`Ledger._binding`); schema 5 adds the (empty) table of
        the keys of table files read (:mod:`dppca.privacy.ledger_files`).
        """
        self._integrity(con)
        in_txn = con.in_transaction
        if not in_txn:
            con.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have upgraded it meanwhile.
            now = con.execute("PRAGMA user_version").fetchone()[0]
            app_id = con.execute("PRAGMA application_id").fetchone()[0]
            if now == _SCHEMA_VERSION and app_id == _APPLICATION_ID:
                if not in_txn:
                    con.execute("COMMIT")
                return
            if version < 3:
                self._v2_to_v3(con, version)
            con.execute(_FILES_TABLE)
            con.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
            con.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            if not in_txn:
                con.execute("COMMIT")
        except BaseException:
            if con.in_transaction and not in_txn:
                con.execute("ROLLBACK")
            raise

    def _v2_to_v3(self, con: sqlite3.Connection, version: int) -> None:
        """The summaries and last digests of schema 3 on a ledger of schema 1 or 2."""
        if version == 1:
            self._v1_to_v2(con)
        con.execute("ALTER TABLE datasets ADD COLUMN last TEXT NOT NULL DEFAULT ''")
        con.execute("ALTER TABLE datasets ADD COLUMN tally TEXT NOT NULL DEFAULT ''")
        # The fingerprint rule of each key: 1 for the first ledger's keys; 0
        # (unknown: either rule) for a schema-2 file, which may hold both.
        rule = 1 if version == 1 else 0
        con.execute(f"ALTER TABLE datasets ADD COLUMN keyrule INTEGER NOT NULL DEFAULT {rule}")
        con.execute("CREATE INDEX IF NOT EXISTS parts_charge ON parts(charge)")
        for fp, eps, delta, seal in con.execute(
            "SELECT fp, eps, delta, seal FROM datasets"
        ).fetchall():
            costs, last = self._walk(con, fp)
            if seal != _digest(fp, float(eps), float(delta), last):
                raise self._refuse("is damaged (a dataset's total or its last charge was changed)")
            self._seal(con, fp, (float(eps), float(delta)), last, Tally.of(costs))

    def _v1_to_v2(self, con: sqlite3.Connection) -> None:
        """The marks, digests and seals of schema 2 on a ledger of the first schema."""
        con.execute("ALTER TABLE datasets ADD COLUMN seal TEXT NOT NULL DEFAULT ''")
        for column in ("content TEXT", "payload TEXT", "digest TEXT NOT NULL DEFAULT ''"):
            con.execute(f"ALTER TABLE charges ADD COLUMN {column}")
        con.execute("CREATE INDEX charges_content ON charges(fp, content)")
        con.execute("CREATE INDEX IF NOT EXISTS parts_charge ON parts(charge)")
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
