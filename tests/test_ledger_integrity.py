"""A damaged, empty or foreign ledger file is refused, never re-initialised or trusted.

Replays the reliability run of issue 23: spend 0.9 of a total of 1, damage
the file one way or another, then try another 0.9 release: every time it is
refused (the file is refused, or what it records still counts), and the file
is left as it was. Also: a full disk, and outputs naming the ledger in use.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dppca import BudgetExceededError, PrivacyCost, plan_pc_dir
from dppca.cli import main
from dppca.privacy.fingerprint import fingerprint
from dppca.privacy.ledger import Ledger
from dppca.privacy.ledger_store import LedgerError


def _gaussian(eps: float) -> PrivacyCost:
    return plan_pc_dir(1000, 5, eps=eps, delta=1e-6).cost


@pytest.fixture
def spent(tmp_path: Path) -> Path:
    """A ledger where 0.9 of (1, 1e-5) is spent on dataset "fp" (and a little on "other")."""
    path = tmp_path / "ledger.sqlite"
    led = Ledger(path)
    led.set_total("other", 1.0, 1e-5, name="other")
    led.charge("other", _gaussian(0.1), kind="directions")
    led.set_total("fp", 1.0, 1e-5, name="data")
    led.charge("fp", _gaussian(0.9), kind="directions", name="data")
    return path


def _pages(path: Path) -> tuple[int, dict[str, int]]:
    with sqlite3.connect(path) as con:
        size = con.execute("PRAGMA page_size").fetchone()[0]
        roots = dict(con.execute("SELECT name, rootpage FROM sqlite_master").fetchall())
    return size, roots


def _flip_page(name: str, *, zero: bool = False) -> Callable[[bytes, Path], bytes]:
    def damage(data: bytes, path: Path) -> bytes:
        size, roots = _pages(path)
        start = (roots[name] - 1) * size
        page = bytearray(data[start : start + size])
        if zero:
            page[:] = bytes(size)
        else:  # the cell content sits at the end of a page; the header at its start
            for i in (*range(size - 120, size, 7), 1, 3, 5):
                page[i] ^= 0x5A
        return data[:start] + bytes(page) + data[start + size :]

    return damage


def _swap_pages(data: bytes, path: Path) -> bytes:
    size, roots = _pages(path)
    a, b = sorted((roots["charges"], roots["parts"]))
    pa, pb = ((x - 1) * size for x in (a, b))
    return (
        data[:pa]
        + data[pb : pb + size]
        + data[pa + size : pb]
        + data[pa : pa + size]
        + data[pb + size :]
    )


def _foreign(data: bytes, path: Path) -> bytes:
    other = path.with_name("foreign.sqlite")
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE notes (body TEXT)")
        con.execute("INSERT INTO notes VALUES ('not yours')")
    return other.read_bytes()


def _sql(*statements: str) -> Callable[[bytes, Path], bytes]:
    def damage(data: bytes, path: Path) -> bytes:
        con = sqlite3.connect(path)
        with con:
            for statement in statements:
                con.execute(statement)
        con.close()
        return path.read_bytes()

    return damage


_CORRUPTIONS: dict[str, Callable[[bytes, Path], bytes]] = {
    "zero-length": lambda data, path: b"",
    "truncated to half": lambda data, path: data[: len(data) // 2],
    "truncated to one page": lambda data, path: data[: _pages(path)[0]],
    "last byte dropped": lambda data, path: data[:-1],
    "one byte dropped": lambda data, path: data[:5000] + data[5001:],
    "header flipped": lambda data, path: bytes(b ^ 0xFF for b in data[:16]) + data[16:],
    "index page flipped": _flip_page("charges_fp"),
    "index page zeroed": _flip_page("charges_content", zero=True),
    "charges page flipped": _flip_page("charges"),
    "parts page flipped": _flip_page("parts"),
    "datasets page flipped": _flip_page("datasets"),
    "pages swapped": _swap_pages,
    "random bytes": lambda data, path: np.random.default_rng(7).bytes(len(data)),
    "another program's SQLite": _foreign,
    "charges deleted": _sql("DELETE FROM parts", "DELETE FROM charges"),
    "last charge deleted": _sql(
        "DELETE FROM parts WHERE charge = (SELECT MAX(id) FROM charges)",
        "DELETE FROM charges WHERE id = (SELECT MAX(id) FROM charges)",
    ),
    "total raised": _sql("UPDATE datasets SET eps = 10 WHERE fp = 'fp'"),
    "charge lowered": _sql("UPDATE parts SET eps = 0.01", "UPDATE charges SET eps = 0.01"),
}


@pytest.mark.parametrize("how", list(_CORRUPTIONS))
def test_a_damaged_ledger_never_lets_the_spend_exceed_the_total(spent: Path, how: str) -> None:
    damaged = _CORRUPTIONS[how](spent.read_bytes(), spent)
    spent.write_bytes(damaged)
    with pytest.raises((LedgerError, BudgetExceededError)) as refused:
        led = Ledger(spent)
        led.charge("fp", _gaussian(0.9), kind="directions")
    if isinstance(refused.value, LedgerError):
        assert "Recovery:" in str(refused.value) or "newer dppca" in str(refused.value)
    assert spent.read_bytes() == damaged  # never re-initialised or repaired silently


def test_an_empty_or_foreign_file_is_refused_by_name(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with pytest.raises(LedgerError, match="empty file"):
        Ledger(empty)
    assert empty.stat().st_size == 0
    foreign = tmp_path / "app.sqlite"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE t (x)")
    before = foreign.read_bytes()
    with pytest.raises(LedgerError, match="another program's SQLite file"):
        Ledger(foreign)
    assert foreign.read_bytes() == before  # no table added


def test_the_file_carries_its_marks(tmp_path: Path) -> None:
    Ledger(tmp_path / "l.sqlite")
    with sqlite3.connect(tmp_path / "l.sqlite") as con:
        assert con.execute("PRAGMA application_id").fetchone()[0] == 0x64505063
        assert con.execute("PRAGMA user_version").fetchone()[0] == 5


def test_a_ledger_of_the_first_schema_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(
            "CREATE TABLE datasets (fp TEXT PRIMARY KEY, name TEXT, eps REAL NOT NULL,"
            " delta REAL NOT NULL, created TEXT NOT NULL);"
            "CREATE TABLE charges (id INTEGER PRIMARY KEY AUTOINCREMENT, fp TEXT NOT NULL"
            " REFERENCES datasets(fp), time TEXT NOT NULL, name TEXT, kind TEXT NOT NULL,"
            " eps REAL NOT NULL, delta REAL NOT NULL);"
            "CREATE TABLE parts (charge INTEGER NOT NULL REFERENCES charges(id), released TEXT,"
            " mechanism TEXT, eps REAL NOT NULL, delta REAL NOT NULL, detail TEXT);"
            "INSERT INTO datasets VALUES ('fp', 'd', 1.0, 1e-5, 'then');"
            "INSERT INTO charges VALUES (1, 'fp', 'then', NULL, 'directions', 0.7, 1e-6);"
            "INSERT INTO parts VALUES (1, 'matrix', 'gaussian', 0.7, 1e-6, NULL);"
            "PRAGMA user_version = 1;"
        )
    led = Ledger(path)
    assert led.spent("fp") == pytest.approx((0.7, 1e-6))
    with pytest.raises(BudgetExceededError):
        led.charge("fp", _gaussian(0.9), kind="directions")


def test_a_full_disk_says_so(tmp_path: Path, monkeypatch) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    led.set_total("fp", 1.0, 1e-5)
    original = Ledger._insert_charge

    def no_room(self, con, *args, **kwargs):  # a real SQLITE_FULL: no page may be added
        pages = con.execute("PRAGMA page_count").fetchone()[0]
        con.execute(f"PRAGMA max_page_count = {pages}")
        return original(self, con, *args, **kwargs)

    monkeypatch.setattr(Ledger, "_insert_charge", no_room)
    big = PrivacyCost(0.1, 1e-6, "gaussian", "x" * 200_000)
    with pytest.raises(LedgerError, match=r"disk under the ledger .* is full") as full:
        led.charge("fp", big, kind="directions")
    assert "rollback" not in str(full.value)
    monkeypatch.undo()
    assert Ledger(tmp_path / "l.sqlite").spent("fp") == (0.0, 0.0)


# -------------------------------------------------------------------- the command line


@pytest.fixture
def csv(tmp_path: Path, small_frame: pd.DataFrame) -> Path:
    path = tmp_path / "data.csv"
    small_frame.to_csv(path, index=False)
    return path


def _directions(csv: Path, ledger: Path, eps: str, *extra: str) -> int:
    argv = ["directions", str(csv), "--eps", eps, "--delta", "1e-6", "--ledger", str(ledger)]
    return main([*argv, "--accuracy", "ignore", *extra])


@pytest.mark.parametrize("how", ["zero-length", "truncated to half", "last byte dropped"])
def test_the_command_line_refuses_a_damaged_ledger(tmp_path, csv, capsys, how) -> None:
    ledger = tmp_path / "ledger.sqlite"
    total = ("--budget-eps", "1", "--budget-delta", "1e-5")
    assert _directions(csv, ledger, "0.9", *total) == 0
    capsys.readouterr()
    ledger.write_bytes(_CORRUPTIONS[how](ledger.read_bytes(), ledger))
    assert _directions(csv, ledger, "0.9") == 2
    err = capsys.readouterr().err
    assert err.startswith("dppca: error: the ledger") and "Recovery:" in err
    assert err.count("\n") == 1
    assert main(["ledger", "--ledger", str(ledger)]) == 2


_WRITERS = {
    "--out": ["--out", "{L}"],
    "--table": ["--table", "{L}"],
    "--save-release": ["--save-release", "{L}"],
}


@pytest.mark.parametrize("named", ["--ledger", "DPPCA_LEDGER", "XDG_STATE_HOME"])
@pytest.mark.parametrize("option", list(_WRITERS))
def test_no_output_overwrites_the_ledger_in_use(tmp_path, csv, monkeypatch, capsys, named, option):
    ledger = tmp_path / "state" / "dppca" / "ledger.sqlite"
    monkeypatch.delenv("DPPCA_LEDGER", raising=False)
    extra: list[str] = []
    if named == "--ledger":
        extra = ["--ledger", str(ledger)]
    elif named == "DPPCA_LEDGER":
        monkeypatch.setenv("DPPCA_LEDGER", str(ledger))
    else:
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    base = ["loading", str(csv), "--eps", "0.4", "--delta", "1e-6", *extra]
    assert main(base) == 0
    before = ledger.read_bytes()
    capsys.readouterr()
    writer = [a.replace("{L}", str(ledger)) for a in _WRITERS[option]]
    assert main([*base, *writer]) == 2
    assert "privacy ledger in use" in capsys.readouterr().err
    assert ledger.read_bytes() == before


def test_report_out_does_not_overwrite_the_ledger(tmp_path, csv, monkeypatch, capsys):
    ledger = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPPCA_LEDGER", str(ledger))
    Ledger(ledger).set_total(fingerprint(pd.read_csv(csv)), 1.0, 1e-5)
    before = ledger.read_bytes()
    argv = ["report", str(csv), "--eps", "0.5", "--delta", "1e-6", "--out", str(ledger)]
    assert main(argv) == 2
    assert "privacy ledger in use" in capsys.readouterr().err
    assert ledger.read_bytes() == before
