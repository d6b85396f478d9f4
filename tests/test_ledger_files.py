"""A table file the ledger has keyed is keyed again from its bytes, without parsing.

``dppca ledger DATA.csv`` needs the table's fingerprint; the ledger remembers
it under a digest of the file's bytes, the reading options and the parsing
code (dppca.privacy.ledger_files), so a second look at the same file skips
pandas. Anything that could change the parse gives another digest.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dppca import plan_pc_dir
from dppca.cli import main
from dppca.core.reading import read_csv_checked
from dppca.privacy.fingerprint import fingerprint
from dppca.privacy.ledger import Ledger
from dppca.privacy.ledger_files import file_digest

HEAVY = ("pandas", "pyarrow", "scipy")


@pytest.fixture
def table(tmp_path: Path) -> Path:
    rng = np.random.default_rng(20240601)
    path = tmp_path / "t.csv"
    pd.DataFrame(rng.normal(size=(30, 3)).round(4), columns=list("abc")).to_csv(path, index=False)
    return path


@pytest.fixture
def ledger(tmp_path: Path, table: Path) -> Path:
    path = tmp_path / "l.sqlite"
    led = Ledger(path)
    fp = fingerprint(read_csv_checked(table))
    led.set_total(fp, 1.0, 1e-6, name=table.name)
    led.charge(fp, plan_pc_dir(30, 3, eps=0.2, delta=1e-8).cost, kind="directions")
    return path


def _reader(table: Path, calls: list[int]):
    def read():
        calls.append(1)
        return read_csv_checked(table)

    return read


def test_a_file_read_again_is_keyed_without_parsing(ledger, table):
    calls: list[int] = []
    fp = fingerprint(read_csv_checked(table))
    assert Ledger(ledger).file_key(table, _reader(table, calls), name="t.csv") == (fp, 30)
    assert Ledger(ledger).file_key(table, _reader(table, calls), name="t.csv") == (fp, 30)
    assert calls == [1]  # parsed once, then keyed from the ledger


def test_a_changed_byte_or_option_parses_again(ledger, table):
    calls: list[int] = []
    led = Ledger(ledger)
    first = led.file_key(table, _reader(table, calls), options={"sep": ","})
    led.file_key(table, _reader(table, calls), options={"sep": ";"})
    assert len(calls) == 2  # other options: another digest
    text = table.read_text()
    table.write_text(text.replace("a,b,c", "a,b,d"))
    second = led.file_key(table, _reader(table, calls), options={"sep": ","})
    assert len(calls) == 3 and second != first
    assert second[0] == fingerprint(read_csv_checked(table))


def test_a_damaged_entry_is_ignored_and_the_file_parsed(ledger, table):
    calls: list[int] = []
    Ledger(ledger).file_key(table, _reader(table, calls))
    with sqlite3.connect(ledger) as con:
        con.execute("UPDATE files SET fp = ?", ("f" * 64,))
    fp, _ = Ledger(ledger).file_key(table, _reader(table, calls))
    assert len(calls) == 2 and fp == fingerprint(read_csv_checked(table))


def test_a_file_changed_while_parsed_is_not_remembered(ledger, table):
    calls: list[int] = []

    def read():
        calls.append(1)
        frame = read_csv_checked(table)
        with open(table, "a") as fh:  # another program appends a row meanwhile
            fh.write("1,2,3\n")
        return frame

    Ledger(ledger).file_key(table, read)
    with sqlite3.connect(ledger) as con:
        assert con.execute("SELECT COUNT(*) FROM files").fetchone() == (0,)


def test_the_digest_covers_bytes_and_options(table, tmp_path):
    copy = tmp_path / "copy.csv"
    copy.write_bytes(table.read_bytes())
    assert file_digest(copy, {"sep": ","}) == file_digest(table, {"sep": ","})
    assert file_digest(table, {"sep": ","}) != file_digest(table, {"sep": ";"})
    copy.write_bytes(table.read_bytes() + b"\n")
    assert file_digest(copy, {"sep": ","}) != file_digest(table, {"sep": ","})


def test_the_ledger_command_shows_a_known_file_without_pandas(ledger, table, loaded_after):
    show = (
        "import contextlib, io\n"
        "from dppca.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    assert main(['ledger', {str(table)!r}, '--ledger', {str(ledger)!r}]) == 0\n"
        "assert '1 release(s)' in out.getvalue(), out.getvalue()\n"
    )
    assert "pandas" in loaded_after(show, HEAVY)  # the first look parses the file
    assert loaded_after(show, HEAVY) == set()  # the second keys it from the ledger


def test_a_release_command_and_the_ledger_command_agree(ledger, table, capsys, monkeypatch):
    args = ["--eps", "0.2", "--delta", "1e-8", "--seed", "1", "--accuracy", "ignore"]
    assert main(["directions", str(table), *args, "--ledger", str(ledger)]) == 0
    # the release remembered the file: the ledger command no longer reads it
    import dppca.cli._ledger as cli_ledger

    def refuse(*_: object) -> None:
        raise AssertionError("the table was parsed again")

    monkeypatch.setattr(cli_ledger, "read_table", refuse)
    capsys.readouterr()
    assert main(["ledger", str(table), "--ledger", str(ledger)]) == 0
    assert "2 release(s)" in capsys.readouterr().out
    os.utime(table, ns=(1, 1))  # same bytes, another time: still keyed from the ledger
    assert main(["ledger", str(table), "--ledger", str(ledger)]) == 0
