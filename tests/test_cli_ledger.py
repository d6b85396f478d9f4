"""The privacy ledger on the command line: one budget per dataset across commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dppca.app.state import AppState
from dppca.cli import main
from dppca.privacy.fingerprint import fingerprint
from dppca.privacy.ledger import Ledger

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def csv(tmp_path, small_frame):
    path = tmp_path / "data.csv"
    small_frame.to_csv(path, index=False)
    return path


@pytest.fixture
def ledger_path(tmp_path):
    return tmp_path / "ledger.sqlite"


def _directions(csv, ledger_path, eps="0.4", *extra):
    argv = ["directions", str(csv), "--eps", eps, "--delta", "1e-6", "--seed", "1"]
    return main([*argv, "--ledger", str(ledger_path), *extra])


def test_a_first_release_sets_the_default_total(csv, ledger_path, capsys):
    assert _directions(csv, ledger_path) == 0
    err = capsys.readouterr().err
    assert "first release from data.csv" in err and "(eps=1," in err


def test_commands_share_one_budget_and_the_last_one_is_refused(csv, ledger_path, capsys):
    assert _directions(csv, ledger_path, "0.4", "--budget-eps", "1", "--budget-delta", "1e-5") == 0
    argv = [
        "--eps",
        "0.9",
        "--delta",
        "1e-6",
        "--seed",
        "1",
        "--ledger",
        str(ledger_path),
        "--accuracy",
        "ignore",
    ]  # the forecast is not what this test is about
    assert main(["scree", str(csv), *argv[2:], "--eps", "0.4"]) == 0
    assert "still fits (tight composition" in capsys.readouterr().err
    before = Ledger(ledger_path).entries(fingerprint(pd.read_csv(csv)))
    assert main(["loading", str(csv), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dppca: error: this release costs") and "\n" not in err
    assert "--no-ledger" in err and "--directions FILE" in err and "--budget-eps" in err
    after = Ledger(ledger_path).entries(fingerprint(pd.read_csv(csv)))
    pd.testing.assert_frame_equal(after, before)
    assert list(dict.fromkeys(after["kind"])) == ["directions", "scree"]


_TOTAL = ("--budget-eps", "1", "--budget-delta", "1e-5")


def test_other_columns_of_the_same_table_spend_the_same_budget(csv, ledger_path, capsys):
    assert _directions(csv, ledger_path, "0.9", *_TOTAL) == 0
    assert _directions(csv, ledger_path, "0.9", "--columns", "a,b,c") == 2
    assert "remains" in capsys.readouterr().err


def test_a_balanced_design_on_a_subset_spends_the_full_tables_budget(csv, ledger_path, capsys):
    assert _directions(csv, ledger_path, "0.9", *_TOTAL) == 0
    extra = ("--design", "balanced", "--columns", "a,b,c")
    assert _directions(csv, ledger_path, "0.9", *extra) == 2
    assert "remains" in capsys.readouterr().err
    shuffled = csv.with_name("shuffled.csv")
    pd.read_csv(csv).sample(frac=1.0, random_state=3).to_csv(shuffled, index=False)
    assert _directions(shuffled, ledger_path, "0.9") == 2  # the same rows, reordered


def test_two_releases_leave_room_for_a_third_by_tight_composition(csv, ledger_path, capsys):
    # Basic composition: 0.5 + 0.5 + 0.2 > 1. The three Gaussians compose
    # exactly to eps 0.66 at delta 1e-5.
    assert _directions(csv, ledger_path, "0.5", *_TOTAL) == 0
    assert _directions(csv, ledger_path, "0.5") == 0
    assert _directions(csv, ledger_path, "0.2") == 0
    assert "spent eps=0.659" in capsys.readouterr().err
    assert _directions(csv, ledger_path, "0.9") == 2


def test_budget_total_is_set_once(csv, ledger_path, capsys):
    total = ["--budget-eps", "3", "--budget-delta", "1e-4"]
    assert _directions(csv, ledger_path, "2.5", "--calibration", "analytic", *total) == 0
    assert _directions(csv, ledger_path, "0.4", "--budget-eps", "5", "--budget-delta", "1e-4") == 2
    err = capsys.readouterr().err
    assert (
        "already (eps=3, delta=0.0001)" in err and "--ledger PATH" in err and "--no-ledger" in err
    )
    assert _directions(csv, ledger_path, "0.4", "--budget-eps", "5") == 2
    assert "both --budget-eps and --budget-delta" in capsys.readouterr().err
    assert Ledger(ledger_path).total(fingerprint(pd.read_csv(csv))) == (3.0, 1e-4)


def test_a_failed_command_leaves_no_trace(tmp_path, ledger_path, capsys):
    bad = tmp_path / "gaps.csv"
    bad.write_text("a,b\n1,\n2,3\n4,5\n")
    assert _directions(bad, ledger_path) == 2
    assert Ledger(ledger_path).datasets().empty


def test_no_ledger_records_nothing(csv, tmp_path, monkeypatch):
    monkeypatch.setenv("DPPCA_LEDGER", str(tmp_path / "env.sqlite"))
    argv = ["directions", str(csv), "--eps", "0.9", "--delta", "1e-6", "--no-ledger"]
    for _ in range(3):
        assert main(argv) == 0
    assert not (tmp_path / "env.sqlite").exists()


def test_ledger_command_shows_datasets_and_releases(csv, ledger_path, capsys):
    assert main(["ledger", "--ledger", str(ledger_path)]) == 0
    assert "does not exist yet" in capsys.readouterr().err
    assert _directions(csv, ledger_path) == 0
    capsys.readouterr()
    assert main(["ledger", "--ledger", str(ledger_path)]) == 0
    out = capsys.readouterr().out
    assert "data.csv" in out and "spent_eps" in out
    # no fingerprint (nor a prefix of one) identifies the table: a handle does
    fp = fingerprint(pd.read_csv(csv))
    assert fp[:8] not in out and "fingerprint" not in out and "#1" in out
    assert main(["ledger", str(csv), "--ledger", str(ledger_path)]) == 0
    out = capsys.readouterr().out
    assert "noisy spherical Kendall matrix" in out and "more release(s) like the last" in out
    assert main(["ledger", "--dataset", "wine", "--ledger", str(ledger_path)]) == 0
    assert "no budget in the ledger yet" in capsys.readouterr().out


def test_the_app_sees_what_the_command_line_spent(csv, ledger_path):
    assert _directions(csv, ledger_path) == 0
    state = AppState(ledger=Ledger(ledger_path))
    state.load("data.csv", pd.read_csv(csv))
    assert state.budget.spent == pytest.approx((0.4, 1e-6))
    assert state.ledger_frame()["kind"].tolist() == ["directions"]


def test_default_ledger_follows_the_environment(csv, tmp_path, monkeypatch):
    monkeypatch.setenv("DPPCA_LEDGER", str(tmp_path / "env.sqlite"))
    assert main(["directions", str(csv), "--eps", "0.5", "--delta", "1e-6"]) == 0
    assert Ledger(tmp_path / "env.sqlite").spent(fingerprint(pd.read_csv(csv)))[0] == 0.5


def test_two_concurrent_commands_cannot_both_spend_the_rest(csv, ledger_path):
    # After 0.3, one release of 0.9 fits (tight total 0.84), two do not (1.19).
    assert _directions(csv, ledger_path, "0.3", *_TOTAL) == 0
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    code = "import sys; from dppca.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [
        "directions",
        str(csv),
        "--eps",
        "0.9",
        "--delta",
        "1e-6",
        "--ledger",
        str(ledger_path),
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, *argv],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert sorted(p.returncode for p in procs) == [0, 2], outs
    assert Ledger(ledger_path).spent(fingerprint(pd.read_csv(csv)))[0] == pytest.approx(1.2)


def test_the_quick_start_runs_four_times_in_a_row(tmp_path, monkeypatch, capsys):
    # The README's first command, with the default ledger (here a fresh one):
    # the bundled gau data are public, so its releases are practice.
    monkeypatch.setenv("DPPCA_LEDGER", str(tmp_path / "state" / "ledger.sqlite"))
    monkeypatch.chdir(tmp_path)
    for _ in range(4):
        assert main(["loading", "--eps", "0.5", "--delta", "1e-5", "--out", "loading.png"]) == 0
    err = capsys.readouterr().err
    assert "public dataset" in err and "practice" in err
    from dppca.datasets import load_gau

    ledger = Ledger(tmp_path / "state" / "ledger.sqlite")
    assert len(ledger.releases(fingerprint(load_gau()))) == 4  # recorded all the same
    assert main(["ledger", "--dataset", "gau"]) == 0
    assert "practice" in capsys.readouterr().out


def test_a_bundled_table_read_from_a_file_is_public_too(tmp_path, ledger_path, capsys):
    from dppca.datasets import load_iris_g

    path = tmp_path / "iris.csv"
    load_iris_g().sample(frac=1.0, random_state=0).to_csv(path, index=False)
    for _ in range(3):
        assert _directions(path, ledger_path, "0.9", "--columns", "sepal_length,petal_width") == 0
    assert "never refused" in capsys.readouterr().err
