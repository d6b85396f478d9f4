"""The whole-ledger audit (``Ledger.verify``, ``dppca ledger --verify``) reads every record.

The fast walk of a dataset's charges (one query, each distinct list of parts
encoded and decoded once) must find the digests and costs that the plain
definition finds: every charge's record hashed by ``_digest`` in order, each
part decoded by ``_leaf``. The reference below is that definition, query by
query.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dppca import PrivacyCost, plan_pc_dir
from dppca.privacy.ledger import Ledger
from dppca.privacy.ledger_rows import _digest, _leaf
from dppca.privacy.ledger_store import LedgerError
from dppca.privacy.tally import Tally

FP = "c" * 64


def _reference(led: Ledger, fp: str) -> tuple[list[PrivacyCost], str]:
    """The charges and last digest by the definition: one record at a time."""
    costs, last = [], ""
    with led._connect() as con:
        ids = con.execute("SELECT id, digest FROM charges WHERE fp = ? ORDER BY id", (fp,))
        for charge, digest in ids.fetchall():
            record: list[Any] = led._charge_record(con, charge)
            last = _digest(last, *record)
            assert digest == last
            leaves = [_leaf(p[2], p[3], p[1], p[0], p[4]) for p in record[1]]
            claim = (float(record[0][4]), float(record[0][5]))
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
    return costs, last


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A ledger with repeated and distinct charges, odd names, zero deltas (SQLite keeps
    -0.0 as 0.0, so a record's text never depends on the sign of a zero)."""
    path = tmp_path / "l.sqlite"
    led = Ledger(path)
    led.set_total(FP, 100.0, 1e-3, name='tab "1" é')
    gauss = plan_pc_dir(50, 3, eps=0.1, delta=1e-8).cost
    pure = PrivacyCost(0.05, 0.0, "laplace", "a count", kind="laplace", sensitivity=1.0, scale=20)
    signed = PrivacyCost(
        0.05, -0.0, "laplace", "a count", kind="laplace", sensitivity=1.0, scale=20
    )
    both = PrivacyCost(0.15, 1e-8, "composition", "both", (gauss, pure), kind="composed")
    names = [None, "x\ny", "ünï", 'q"uote', None]
    for i, cost in enumerate([gauss, gauss, pure, signed, both, pure, gauss, signed]):
        led.charge(FP, cost, kind="directions", name=names[i % len(names)])
    return path


def test_the_walk_finds_what_the_definition_finds(mixed: Path) -> None:
    led = Ledger(mixed)
    want_costs, want_last = _reference(led, FP)
    with led._connect() as con:
        costs, last = led._walk(con, FP)
    assert last == want_last
    assert costs == want_costs
    assert Tally.counted(costs).agrees(Tally.of(want_costs))
    led.verify()


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE parts SET detail = replace(detail, '20', '2') WHERE rowid = 3",
        "UPDATE parts SET delta = 1e-300 WHERE rowid = 4",
        "UPDATE charges SET name = 'other' WHERE id = 2",
        "DELETE FROM parts WHERE rowid = 1",
    ],
)
def test_a_changed_record_is_found(mixed: Path, change: str) -> None:
    with sqlite3.connect(mixed) as con:
        con.execute(change)
    con.close()
    with pytest.raises(LedgerError, match="damaged"):
        Ledger(mixed).verify()
