"""``--dry-run`` of a plain CSV file reads its layout without pandas, and prints the same plan."""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dppca.cli.directions as directions_cli
from dppca.cli import main
from dppca.cli._layout import quick_layout

SRC = str(Path(__file__).resolve().parents[1] / "src")
IRIS = Path(SRC) / "dppca" / "datasets" / "data" / "iris.csv.gz"
HEAVY = ("pandas", "scipy", "matplotlib", "pyarrow", "dp_accounting", "opendp", "numba")


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def tables(tmp_path, rng) -> dict[str, Path]:
    frame = pd.DataFrame(rng.normal(size=(40, 3)).round(4), columns=["a", "b", "c"])
    frame["label"] = np.where(rng.random(40) < 0.5, "x y", "z")
    plain = tmp_path / "plain.csv"
    frame.to_csv(plain, index=False)
    zipped = tmp_path / "zipped.csv.gz"
    with gzip.open(zipped, "wt") as fh:
        frame[["a", "b", "c"]].to_csv(fh, index=False)
    blank = tmp_path / "blank.csv"  # blank lines are skipped by every reader
    blank.write_text(plain.read_text().replace("\n", "\n\n", 3))
    return {"plain": plain, "zipped": zipped, "blank": blank, "iris": IRIS}


@pytest.mark.parametrize("name", ["plain", "zipped", "blank", "iris"])
@pytest.mark.parametrize(
    "more", [[], ["--scale", "private"], ["--bounds", "-10:10", "-k", "2"], ["--estimator", "tau"]]
)
def test_the_quick_layout_prints_the_plan_of_the_full_read(
    tables, name, more, capsys, monkeypatch
):
    argv = ["directions", str(tables[name]), "--eps", "1", "--delta", "1e-6", "--dry-run", *more]
    args = argparse.Namespace(
        data=str(tables[name]), dataset=None, columns=None, exclude=None, scale=None
    )
    assert quick_layout(args) is not None  # the fast way is taken...
    capsys.readouterr()
    fast = _run(argv, capsys)
    monkeypatch.setattr(directions_cli, "quick_layout", lambda args: None)
    full = _run(argv, capsys)  # ...and the full read prints the very same
    assert fast == full and fast[0] == 0 and "privacy cost (not spent)" in fast[1]


@pytest.mark.parametrize(
    "cells",
    [
        "1,2,\n3,4,5",  # an empty cell
        "1,2,NA\n3,4,5",  # a missing-value token
        "1,2,True\n3,4,5",  # a boolean
        "1,2, 3\n3,4,5",  # a number with a space
        "1,2,1e400\n3,4,5",  # beyond float64
        "1,2,12345678901234567890\n3,4,5",  # beyond int64
        "1,2,x\n3,4,5",  # text among numbers
        "1,2,3\n3,4",  # a short row
        "1,2,inf\n3,4,5",
        "1,2,abc\n3,4,1.5",
    ],
)
def test_anything_unusual_is_left_to_the_full_reader(tmp_path, cells):
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\n" + cells + "\n")
    args = argparse.Namespace(data=str(path), dataset=None, columns=None, exclude=None)
    assert quick_layout(args) is None


@pytest.mark.parametrize("header", ["a,a,c", "a,,c", "a, b,c", "\ufeffa,b,c"])
def test_unusual_names_are_left_to_the_full_reader(tmp_path, header):
    path = tmp_path / "t.csv"
    path.write_text(header + "\n1,2,3\n4,5,6\n", encoding="utf-8")
    args = argparse.Namespace(data=str(path), dataset=None, columns=None, exclude=None)
    assert quick_layout(args) is None


def test_options_that_select_columns_take_the_full_read(tables):
    for extra in ({"columns": "a,b"}, {"exclude": "c"}, {"scale": "1,1,1"}, {"sep": ";"}):
        args = argparse.Namespace(
            **{"data": str(tables["plain"]), "dataset": None, "columns": None, "exclude": None}
            | extra
        )
        assert quick_layout(args) is None


def test_a_dry_run_imports_no_heavy_module(loaded_after):
    # sys.modules after the command in a fresh interpreter: robust, unlike a timing
    argv = ["directions", str(IRIS), "--eps", "1", "--delta", "1e-6", "--dry-run"]
    code = (
        "import contextlib, io\n"
        "from dppca.cli import main\n"
        "quiet = io.StringIO()\n"
        "with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):\n"
        f"    assert main({argv!r}) == 0\n"
    )
    assert loaded_after(code, HEAVY) == set()
