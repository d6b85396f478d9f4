"""The command line's CSV output cannot be run as a spreadsheet formula."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from dppca.cli import main


@pytest.fixture
def hostile(tmp_path, rng: np.random.Generator):
    # Column names a spreadsheet would run: =cmd, +1, -x, @sum, a tab.
    names = ["=HYPERLINK(1)", "+1", "-x", "@sum", "\tz"]
    frame = pd.DataFrame(rng.normal(size=(300, 5)), columns=names)
    path = tmp_path / "hostile.csv"
    frame.to_csv(path, index=False)
    return path, names


def test_cli_tables_escape_formula_text_and_keep_negative_numbers(hostile, tmp_path, capsys):
    path, names = hostile
    table = tmp_path / "out.csv"
    args = ["directions", str(path), "--eps", "0.5", "--delta", "1e-6", "--seed", "1"]
    assert main([*args, "--no-ledger", "--table", str(table)]) == 0
    printed = capsys.readouterr().out
    for text in (printed, table.read_text()):
        frame = pd.read_csv(io.StringIO(text), index_col=0)
        assert list(frame.index) == ["'" + n for n in names]  # every label escaped
        assert frame.columns[0] == "PC1"
        values = frame.to_numpy()
        assert values.dtype == np.float64 and (values < 0).any()  # numbers stay numbers
        assert not any(line.startswith(("=", "+", "-", "@")) for line in text.splitlines())


def test_formula_safe_leaves_numbers_and_plain_text_alone():
    from dppca._csv import formula_safe

    frame = pd.DataFrame({"x": [-1.5, 2.0], "label": ["-bad", "ok"]}, index=["=a", "b"])
    out = formula_safe(frame)
    assert list(out["x"]) == [-1.5, 2.0] and list(out["label"]) == ["'-bad", "ok"]
    assert list(out.index) == ["'=a", "b"] and list(frame.index) == ["=a", "b"]  # a copy


def test_formula_safe_keeps_the_index_name():
    from dppca._csv import formula_safe

    frame = pd.DataFrame({"PC1": [0.5]}, index=pd.Index(["=a"], name="variable"))
    assert formula_safe(frame).to_csv().splitlines() == ["variable,PC1", "'=a,0.5"]
