"""The ledger's contents as tables: releases, their parts, datasets, a change token.

:class:`_LedgerTables` reads the SQLite store of :mod:`dppca.privacy.ledger_store`
into pandas tables for the command line and the app;
:class:`dppca.privacy.ledger.Ledger` inherits them.
"""

from __future__ import annotations

from typing import Any

from ..core.lazy import pandas as pd
from .ledger_store import _check_fp, _LedgerFile

__all__: list[str] = []

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


class _LedgerTables(_LedgerFile):
    """Tables of what a ledger holds (every dataset, or one)."""

    def entries(self, fp: str | None = None, *, last: int | None = None) -> pd.DataFrame:
        """The releases charged, one row per elementary part, oldest first.

        Columns: ``release`` (its number in the dataset's ledger), ``time``
        (UTC, ISO 8601), ``dataset`` (name), ``kind``, ``released``,
        ``mechanism``, ``eps``, ``delta``. ``fp=None`` lists every dataset.
        ``last=N`` (with ``fp``) keeps the dataset's N latest releases only.
        """
        query = (
            "SELECT c.id, c.fp, c.time, COALESCE(c.name, d.name), c.kind, p.released,"
            " p.mechanism, p.eps, p.delta FROM charges c JOIN parts p ON p.charge = c.id"
            " LEFT JOIN datasets d ON d.fp = c.fp"
        )
        params: tuple[Any, ...] = ()
        skipped = 0
        with self._connect() as con:
            if fp is not None:
                params = (_check_fp(fp),)
                query += " WHERE c.fp = ?"
                if last is not None:
                    (count,) = con.execute(
                        "SELECT COUNT(*) FROM charges WHERE fp = ?", params
                    ).fetchone()
                    skipped = max(int(count) - int(last), 0)
                    query += (
                        " AND c.id IN (SELECT id FROM charges WHERE fp = ? ORDER BY id DESC"
                        " LIMIT ?)"
                    )
                    params = (*params, params[0], int(last))
            rows = con.execute(query + " ORDER BY c.id, p.rowid", params).fetchall()
        frame = pd.DataFrame(rows, columns=["id", "fp", *_ENTRY_COLUMNS[1:]]).astype(
            {"eps": float, "delta": float}
        )
        # Number the releases within each dataset: 1, 2, ... in charge order.
        ids = frame[["fp", "id"]].drop_duplicates()
        ids["release"] = ids.groupby("fp").cumcount() + 1 + skipped
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
                tally = self._tally(con, fp)
                out.append(
                    {
                        "fingerprint": fp,
                        "dataset": name,
                        "created": created,
                        "total_eps": float(eps),
                        "total_delta": float(delta),
                        "spent_eps": tally.tight_eps(float(delta)),
                        "spent_delta": tally.basic_delta,
                        "basic_eps": tally.basic_eps,
                        "releases": tally.charges,
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
