"""Tests of ``dppca directions`` and the shared CLI machinery."""

from __future__ import annotations

import pandas as pd
import pytest

from dppca.cli import main


def test_directions_on_bundled_data(capsys):
    assert main(["directions", "--eps", "0.5", "--delta", "1e-5", "-k", "2", "--seed", "1"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert out.splitlines()[0] == "variable,PC1,PC2" and "V20" in out
    assert "eps=0.5" in captured.err and "privacy cost" not in out  # stdout is pure CSV
    assert "seed" not in out + captured.err


def test_directions_on_csv(tmp_path, capsys, small_frame):
    path = tmp_path / "data.csv"
    small_frame.to_csv(path, index=False)
    assert main(["directions", str(path), "--eps", "0.5", "--delta", "1e-5"]) == 0
    assert "PC5" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, word",
    [
        (None, "does not exist"),
        ("", "empty"),
        ("a,b\n", "no rows"),
        ("a,b\n1,x\n2,y\n", "non-numeric"),
        ("a,b\n1,\n2,3\n", "NaN"),
    ],
)
def test_bad_files_give_one_line_error(tmp_path, capsys, content, word):
    path = tmp_path / "data.csv"
    if content is not None:
        path.write_text(content)
    assert main(["directions", str(path), "--eps", "0.5", "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dppca: error:") and word in err
    assert len(err.splitlines()) == 1


def test_bad_eps_and_privacy_warning(capsys):
    assert main(["directions", "--eps", "-1", "--delta", "1e-5"]) == 2
    assert "eps must be finite and > 0" in capsys.readouterr().err
    args = ["directions", "--eps", "2", "--delta", "1e-5", "-k", "1"]
    assert main([*args, "--calibration", "classic"]) == 0
    assert "privacy warning" in capsys.readouterr().err


def test_columns_option(tmp_path, capsys):
    path = tmp_path / "mixed.csv"
    pd.DataFrame({"x": [1.0, 2.0, 4.0], "y": [0.5, 3.0, 1.0], "g": ["a", "b", "a"]}).to_csv(
        path, index=False
    )
    assert (
        main(["directions", str(path), "--columns", "x,y", "--eps", ".5", "--delta", "1e-5"]) == 0
    )
    assert (
        main(["directions", str(path), "--columns", "x,z", "--eps", ".5", "--delta", "1e-5"]) == 2
    )
    assert "unknown column" in capsys.readouterr().err
