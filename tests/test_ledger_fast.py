"""The ledger's commands answer without pandas or scipy where the data are not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from dppca import plan_pc_dir
from dppca.cli import main
from dppca.cli._ledger import text_table
from dppca.privacy.ledger import Ledger

HEAVY = ("pandas", "scipy", "matplotlib", "pyarrow", "dp_accounting")
A, B = "a" * 64, "b" * 64


@pytest.fixture
def ledger(tmp_path) -> Path:
    path = tmp_path / "l.sqlite"
    led = Ledger(path)
    led.set_total(A, 5.0, 1e-5, name="a.csv")
    led.set_total(B, 5.0, 1e-5, name="b.csv")
    for i, fp in enumerate([A, B, A, A, B]):  # interleaved: each table numbers its own
        cost = plan_pc_dir(100, 3, eps=0.1 * (i + 1), delta=1e-7).cost
        led.charge(fp, cost, kind="directions")
    return path


def test_entries_number_each_tables_releases(ledger):
    led = Ledger(ledger)
    assert led.entries()["release"].tolist() == [1, 1, 2, 3, 2]
    assert led.entries(A)["release"].tolist() == [1, 2, 3]
    last = led.entries(A, last=2)
    assert last["release"].tolist() == [2, 3]
    assert last["eps"].tolist() == pytest.approx([0.3, 0.4])


def test_the_ledger_command_lists_what_datasets_holds(ledger, capsys):
    assert main(["ledger", "--ledger", str(ledger)]) == 0
    lines = capsys.readouterr().out.splitlines()
    frame = Ledger(ledger).datasets()
    assert lines[0].split() == [c for c in frame.columns if c != "fingerprint"]
    for i, row in frame.iterrows():
        shown = lines[i + 1].split()
        assert shown[0] == f"#{i + 1}" and shown[1] == row["dataset"]
        assert shown[-1] == str(row["releases"])
        assert float(shown[5]) == pytest.approx(row["spent_eps"], rel=1e-5)


def test_text_table_aligns_columns():
    text = text_table(["name", "eps"], [["a", 0.123456789], ["longer", 2.0]], index=["#1", "#2"])
    assert text.splitlines() == [
        "      name      eps",
        "#1       a 0.123457",
        "#2  longer        2",
    ]


def test_listing_the_ledger_imports_no_heavy_module(ledger, loaded_after):
    code = (
        "import contextlib, io\n"
        "from dppca.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['ledger', '--ledger', {str(ledger)!r}]) == 0\n"
    )
    assert loaded_after(code, HEAVY) == set()
