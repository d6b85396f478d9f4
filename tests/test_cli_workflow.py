"""The command line as a workflow: saved releases, CSV on stdout, shared options."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dppca
from dppca.cli import main, shell_syntax
from dppca.release_io import load_release, release_info

# Most tests here run several releases on one table; the privacy ledger (tested in
# test_ledger*.py and below) would rightly refuse the later ones.
LEDGERLESS = ["--eps", "0.8", "--delta", "1e-5", "--seed", "3", "--calibration", "analytic"]
PRIV = [*LEDGERLESS, "--no-ledger"]


@pytest.fixture
def table(tmp_path, rng):
    """A user's table: an ID, a text column, a group column and 6 measurements."""
    n = 400
    frame = pd.DataFrame(
        rng.normal(size=(n, 6)) * [3, 2, 1, 1, 0.5, 0.5], columns=[f"m{j}" for j in range(6)]
    )
    frame.insert(0, "id", np.arange(n))
    frame.insert(1, "note", [f"row {i}" for i in range(n)])
    frame["site"] = np.repeat(["north", "south"], n // 2)
    path = tmp_path / "table.csv"
    frame.to_csv(path, index=False)
    return path


def _direction_parts(cost) -> list:
    return [leaf for leaf in cost.leaves() if "Kendall" in leaf.released]


def test_saved_directions_are_paid_once(tmp_path, table, capsys):
    dirs = tmp_path / "dirs.json"
    base = [str(table), "--exclude", "id", "--ties", "zero"]
    total = ["--budget-eps", "3", "--budget-delta", "1e-4"]  # the ledger's total, set once
    assert main(["directions", *base, *LEDGERLESS, *total, "--save-release", str(dirs)]) == 0
    assert "privacy cost: (eps=0.8" in capsys.readouterr().err
    spent = [release_info(dirs)["new_cost"]]
    reuse = ["--directions", str(dirs)]
    saved = {name: tmp_path / f"{name}.json" for name in ("loading", "scree", "score")}
    assert main(["loading", *base, *reuse, "--save-release", str(saved["loading"])]) == 0
    assert "privacy cost: none" in capsys.readouterr().err
    assert main(["scree", *base, *LEDGERLESS, *reuse, "--save-release", str(saved["scree"])]) == 0
    assert (
        main(
            [
                "score",
                *base,
                *LEDGERLESS,
                *reuse,
                "--groups",
                "site",
                "--save-release",
                str(saved["score"]),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert err.count("no new direction cost") == 2
    for name, path in saved.items():
        info = release_info(path)
        assert _direction_parts(info["reuses"][0])  # built on the saved directions
        if info["new_cost"] is not None:
            assert _direction_parts(info["new_cost"]) == [], name
            spent.append(info["new_cost"])
    assert release_info(saved["loading"])["new_cost"] is None
    # one directions cost in total, however many pictures were drawn from it
    assert sum(len(_direction_parts(c)) for c in spent) == 1
    assert sum(c.eps for c in spent) == pytest.approx(0.8 * 3)
    # ... and the ledger shared by the commands shows one directions cost, not three
    from dppca.privacy.ledger import Ledger

    ledger = Ledger()  # the per-test file the suite's fixture names in DPPCA_LEDGER
    (fp,) = ledger.datasets()["fingerprint"]
    entries = ledger.entries(fp)
    assert entries["released"].str.contains("Kendall").sum() == 1
    assert ledger.spent(fp)[0] == pytest.approx(0.8 * 3)


def test_reuse_on_other_data_is_refused(tmp_path, table, capsys):
    dirs = tmp_path / "dirs.json"
    assert (
        main(["directions", str(table), "--exclude", "id", *PRIV, "--save-release", str(dirs)])
        == 0
    )
    capsys.readouterr()
    assert main(["scree", str(table), *PRIV, "--directions", str(dirs)]) == 2  # id included
    assert "other data" in capsys.readouterr().err
    assert (
        main(
            [
                "loading",
                str(table),
                "--exclude",
                "id",
                "--scale",
                "2,2,2,2,2,2",
                "--directions",
                str(dirs),
            ]
        )
        == 2
    )
    assert "other data" in capsys.readouterr().err
    assert main(["loading", str(table), "--exclude", "id", "--directions", str(table)]) == 2
    assert "not a dppca release" in capsys.readouterr().err
    assert main(["loading", str(table), "--exclude", "id"]) == 2
    assert "--eps and --delta are required" in capsys.readouterr().err


def test_save_release_refuses_inputs_and_drops_comparisons(tmp_path, table, capsys):
    assert main(["directions", str(table), *PRIV, "--save-release", str(table)]) == 2
    err = capsys.readouterr().err  # refused by the output-path check, before any work
    assert "--save-release" in err and "input" in err
    saved = tmp_path / "l.json"
    assert (
        main(
            [
                "loading",
                str(table),
                "--exclude",
                "id",
                *PRIV,
                "--compare",
                "--save-release",
                str(saved),
            ]
        )
        == 0
    )
    assert "without the non-private comparison" in capsys.readouterr().err
    assert load_release(saved).nonprivate is None and '"nonprivate": null' in saved.read_text()


def test_stdout_is_csv_and_messages_go_to_stderr(tmp_path, table, capsys):
    base = [str(table), "--columns", "m0,m1,m2,m3", *PRIV]
    for command, index in (
        ("directions", "variable"),
        ("loading", "variable"),
        ("scree", "component"),
        ("score", None),
    ):
        target = tmp_path / f"{command}.csv"
        assert main([command, *base, "--table", str(target)]) == 0
        captured = capsys.readouterr()
        printed = pd.read_csv(io.StringIO(captured.out))
        pd.testing.assert_frame_equal(printed, pd.read_csv(target))
        assert index is None or printed.columns[0] == index
        assert "privacy cost" in captured.err and "privacy cost" not in captured.out


def test_non_numeric_columns_are_left_out_with_a_note(table, capsys):
    assert main(["directions", str(table), "--exclude", "id", *PRIV, "-k", "2"]) == 0
    captured = capsys.readouterr()
    assert "left out non-numeric column(s) 'note', 'site'" in captured.err
    assert "m5" in captured.out and "id" not in captured.out
    assert main(["directions", str(table), "--columns", "m0,note", *PRIV]) == 2
    assert "non-numeric column(s) 'note'" in capsys.readouterr().err
    assert main(["directions", str(table), "--exclude", "nope", *PRIV]) == 2
    assert "--exclude names unknown column(s): nope" in capsys.readouterr().err


def test_bundled_grouped_data_work_in_every_command(tmp_path, capsys):
    common = ["--dataset", "gau_g", *PRIV]
    assert main(["loading", *common]) == 0
    assert "left out non-numeric column(s) 'group'" in capsys.readouterr().err
    assert main(["score", *common, "--groups", "group", "--bins", "4"]) == 0
    captured = capsys.readouterr()
    assert set(pd.read_csv(io.StringIO(captured.out))["group"]) == {
        f"group{i}" for i in range(1, 6)
    }
    assert "left out" not in captured.err
    assert main(["scree", *common, "-k", "3"]) == 0


@pytest.mark.parametrize("command", ["directions", "loading", "scree", "score"])
def test_scale_is_accepted_everywhere(command, small_frame, tmp_path, capsys):
    path = tmp_path / "d.csv"
    small_frame.to_csv(path, index=False)
    assert main([command, str(path), *PRIV, "--scale", "1,1,1,1,1"]) == 0
    plain = capsys.readouterr().out
    assert main([command, str(path), *PRIV]) == 0
    assert capsys.readouterr().out == plain
    assert main([command, str(path), *PRIV, "--scale", "1,1"]) == 2
    assert "--scale needs one value per analysed column" in capsys.readouterr().err


def test_warnings_use_shell_syntax(capsys):
    assert (
        main(
            ["directions", "--eps", "2", "--delta", "1e-5", "-k", "1", "--calibration", "classic"]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "--calibration analytic" in err and "calibration='analytic'" not in err
    options = {"--ties", "--calibration"}
    assert shell_syntax("pass ties='zero' or x='y'", options) == "pass --ties zero or x='y'"


def test_python_m_dppca_runs_the_command():
    src = str(Path(dppca.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run(
        [sys.executable, "-m", "dppca", "directions", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and "--save-release" in done.stdout


def test_a_saved_release_is_drawn_without_the_data(tmp_path, table, capsys):
    dirs, out = tmp_path / "dirs.json", tmp_path / "loading.svg"
    assert (
        main(["directions", str(table), "--exclude", "id", *PRIV, "--save-release", str(dirs)])
        == 0
    )
    printed = capsys.readouterr().out
    assert main(["loading", "--directions", str(dirs), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert out.read_text().startswith("<?xml") and "privacy cost: none" in captured.err
    loadings = pd.read_csv(io.StringIO(captured.out), index_col=0)
    directions = pd.read_csv(io.StringIO(printed), index_col=0)
    pd.testing.assert_frame_equal(loadings, directions[["PC1", "PC2"]])
    assert main(["loading", "--directions", str(dirs), "--compare"]) == 2
    assert "need the data" in capsys.readouterr().err
