"""A ledger written by an earlier dppca keeps counting what it recorded.

The fixtures in tests/data were written by the dppca of each released ledger
schema (tests/data/make_ledger_fixtures.py): 0.8 of a total eps of 1 spent on
tests/data/ledger_table.csv. Opened by this version, the spending must count
(issue 33 item 1): a second 0.8 release is refused, and the table appears once.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from dppca.cli import main
from dppca.core.reading import read_csv_checked
from dppca.privacy.fingerprint import fingerprint, legacy_fingerprints
from dppca.privacy.ledger import Ledger
from dppca.privacy.ledger_store import LedgerError

DATA = Path(__file__).parent / "data"
SCHEMAS = [1, 2, 3, 4]


@pytest.fixture(params=SCHEMAS)
def old(request, tmp_path: Path) -> tuple[int, Path, Path]:
    """(schema, ledger copy, table copy) of one earlier version."""
    path = tmp_path / "ledger.sqlite"
    shutil.copy(DATA / f"ledger_schema{request.param}.sqlite", path)
    table = tmp_path / "ledger_table.csv"
    shutil.copy(DATA / "ledger_table.csv", table)
    return request.param, path, table


def _directions(table: Path, ledger: Path, eps: str, *more: str) -> int:
    args = ["directions", str(table), "--eps", eps, "--delta", "1e-6", "--seed", "2"]
    return main([*args, "--ledger", str(ledger), "--accuracy", "ignore", *more])


def test_the_fixtures_are_what_their_versions_wrote() -> None:
    frame = read_csv_checked(DATA / "ledger_table.csv")
    keys = [(1, legacy_fingerprints(frame)[0])] + [(s, fingerprint(frame)) for s in (2, 3, 4)]
    for schema, key in keys:
        with sqlite3.connect(DATA / f"ledger_schema{schema}.sqlite") as con:
            assert con.execute("PRAGMA user_version").fetchone()[0] == schema
            assert con.execute("SELECT fp FROM datasets").fetchall() == [(key,)]


def test_an_earlier_ledger_still_counts_its_spending(old, capsys) -> None:
    _, ledger, table = old
    frame = read_csv_checked(table)
    assert _directions(table, ledger, "0.8") == 2  # 0.8 + 0.8 > 1: refused
    err = capsys.readouterr().err
    assert "remains of the budget (eps=1" in err
    led = Ledger(ledger)
    fp = fingerprint(frame)
    assert led.total(fp) == (1.0, 1e-5)
    assert led.spent(fp) == pytest.approx((0.8, 1e-6))
    assert len(led.datasets()) == 1  # the table once, not twice
    assert main(["ledger", str(table), "--ledger", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert "no budget" not in out and "1 release(s)" in out
    led.verify()
    with sqlite3.connect(ledger) as con:  # upgraded: this version's schema and tables
        assert con.execute("PRAGMA user_version").fetchone()[0] == 5
        assert con.execute("SELECT COUNT(*) FROM files").fetchone()[0] == 1


def test_a_small_release_still_fits_beside_the_old_one(old, capsys) -> None:
    _, ledger, table = old
    assert _directions(table, ledger, "0.1") == 0
    led = Ledger(ledger)
    assert led.releases(fingerprint(read_csv_checked(table)))["eps"].tolist() == [0.8, 0.1]


def test_a_changed_table_under_the_old_name_is_refused_until_adopted(tmp_path, capsys) -> None:
    ledger = tmp_path / "ledger.sqlite"
    shutil.copy(DATA / "ledger_schema1.sqlite", ledger)
    frame = read_csv_checked(DATA / "ledger_table.csv")
    table = tmp_path / "ledger_table.csv"
    frame.iloc[::-1].to_csv(table, index=False)  # reordered: the v1 key no longer matches
    assert _directions(table, ledger, "0.5") == 2
    err = capsys.readouterr().err
    assert "ledger schema 1" in err and "--adopt" in err
    prefix = legacy_fingerprints(frame)[0][:12]
    assert main(["ledger", str(table), "--ledger", str(ledger), "--adopt", prefix]) == 0
    capsys.readouterr()
    assert _directions(table, ledger, "0.9") == 2  # now the 0.8 counts
    assert "remains of the budget" in capsys.readouterr().err


def test_adopt_merges_two_records_under_the_smaller_total(tmp_path) -> None:
    from dppca import plan_pc_dir

    led = Ledger(tmp_path / "l.sqlite")
    cost = plan_pc_dir(1000, 5, eps=0.4, delta=1e-6).cost
    led.set_total("old", 1.0, 1e-5)
    led.charge("old", cost, kind="directions")
    led.set_total("new", 2.0, 1e-5)
    led.charge("new", cost, kind="directions")
    led.adopt("new", "ol")
    assert led.total("new") == (1.0, 1e-5) and led.total("old") is None
    assert led.spent("new") == pytest.approx((0.8, 2e-6))
    led.verify()
    with pytest.raises(LedgerError, match="names no dataset"):
        led.adopt("new", "zzz")
