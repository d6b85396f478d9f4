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


_DATASET_COLUMNS = [
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


class _LedgerTables(_LedgerFile):
    """Tables of what a ledger holds (every dataset, or one)."""

    def entries(self, fp: str | None = None, *, last: int | None = None) -> pd.DataFrame:
        """The releases charged, one row per elementary part, oldest first.

        Columns: ``release`` (its number in the dataset's ledger), ``time``
        (UTC, ISO 8601), ``dataset`` (name), ``kind``, ``released``,
        ``mechanism``, ``eps``, ``delta``. ``fp=None`` lists every dataset.
        ``last=N`` (with ``fp``) keeps the dataset's N latest releases only.
        """
        rows = self.entry_rows(fp, last=last)
        return pd.DataFrame(rows, columns=_ENTRY_COLUMNS).astype({"eps": float, "delta": float})

    def entry_rows(
        self, fp: str | None = None, *, last: int | None = None
    ) -> list[tuple[Any, ...]]:
        """The rows of :meth:`entries` as tuples, without pandas (what the command line prints)."""
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
        # Number the releases within each dataset: 1, 2, ... in charge order.
        numbers: dict[Any, int] = {}
        counts: dict[str, int] = {}
        out = []
        for charge, key, *rest in rows:
            if charge not in numbers:
                counts[key] = counts.get(key, skipped) + 1
                numbers[charge] = counts[key]
            time, name, kind, released, mechanism, eps, delta = rest
            out.append(
                (numbers[charge], time, name, kind, released, mechanism, float(eps), float(delta))
            )
        return out

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
        return pd.DataFrame(self.dataset_records(), columns=_DATASET_COLUMNS)

    def dataset_records(self) -> list[dict[str, Any]]:
        """The rows of :meth:`datasets` as dicts, without pandas (what the command line prints)."""
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
        return out
