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


# -- --design on every command with directions: default None is the library's rule -------

DESIGN_COMMANDS = {
    "directions": [],
    "loading": [],
    "scree": [],
    "score": [],
    "report": ["--out", "page.html"],
    "pca": ["--no-standardize"],
}


@pytest.fixture
def small_table(tmp_path, rng) -> Path:
    path = tmp_path / "small.csv"
    pd.DataFrame(rng.normal(size=(60, 4)), columns=list("abcd")).to_csv(path, index=False)
    return path


def _dry_run(command, path, more, capsys, tmp_path):
    extra = [str(tmp_path / a) if a.endswith(".html") else a for a in DESIGN_COMMANDS[command]]
    argv = [command, str(path), "--eps", "1", "--delta", "1e-3", "--dry-run", *extra, *more]
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    return out


@pytest.mark.parametrize("command", list(DESIGN_COMMANDS))
def test_every_command_takes_a_design_and_says_which_the_rule_chose(
    command, small_table, capsys, monkeypatch, tmp_path
):
    from dppca.kernels import kendall

    ruled = _dry_run(command, small_table, [], capsys, tmp_path)
    named = _dry_run(command, small_table, ["--design", "balanced", "--m", "3"], capsys, tmp_path)
    assert "balanced" not in ruled  # 60 rows: the rule gives the exact design
    assert "balanced design, m=3" in named and "the default" not in named
    # the threshold lowered to this table: the rule now chooses the balanced design,
    # the dry-run says so, and an explicit --design exact keeps the exact one
    monkeypatch.setattr(kendall, "BALANCED_DEFAULT_WORK", 100.0)
    chosen = _dry_run(command, small_table, [], capsys, tmp_path)
    exact = _dry_run(command, small_table, ["--design", "exact"], capsys, tmp_path)
    asked = _dry_run(command, small_table, ["--design", "balanced"], capsys, tmp_path)
    assert "balanced design, m=" in chosen
    assert "the directions use the balanced design (the default" in chosen
    assert "balanced" not in exact
    # the same design named: the rule's choice, but not called the default
    assert "balanced design, m=" in asked and "the default" not in asked


@pytest.mark.parametrize("command", ["loading", "scree", "score", "report"])
def test_a_standardised_picture_refuses_an_explicit_design_only(
    command, small_table, capsys, tmp_path
):
    out = _dry_run(command, small_table, ["--standardize"], capsys, tmp_path)
    assert "tau" in out  # no --design given: the fit runs (the old default was refused)
    argv = [command, str(small_table), "--eps", "1", "--delta", "1e-3", "--dry-run"]
    extra = [str(tmp_path / a) if a.endswith(".html") else a for a in DESIGN_COMMANDS[command]]
    status = main([*argv, *extra, "--standardize", "--design", "exact"])
    _, err = capsys.readouterr()
    assert status == 2 and "--design" in err
