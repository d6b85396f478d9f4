"""Tests of ``dppca pca``: one private PCA, its tables and its pictures."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from dppca import dp_pca, plan_pca
from dppca.cli import main


def _units_csv(tmp_path, n: int = 300, seed: int = 2) -> str:
    """Four correlated columns in units 1e-2 to 1e4 apart, as a CSV file."""
    rng = np.random.default_rng(seed)
    cov = np.full((4, 4), 0.6) + 0.4 * np.eye(4)
    z = rng.multivariate_normal(np.zeros(4), cov, size=n) * np.array([1.0, 100.0, 0.01, 1e4])
    path = tmp_path / "units.csv"
    pd.DataFrame(z, columns=["mpg", "cc", "ratio", "lbs"]).to_csv(path, index=False)
    return str(path)


BASE = ["--eps", "2", "--delta", "1e-6", "--seed", "5"]
# A fit of eps 2 is more than a new table's default total (eps 1): the data holder
# declares one, in a ledger of each test's own (the same table recurs across tests).
BUDGET = ["--budget-eps", "8", "--budget-delta", "1e-5"]


@pytest.fixture(autouse=True)
def _own_ledger(tmp_path, monkeypatch):
    monkeypatch.setenv("DPPCA_LEDGER", str(tmp_path / "own-ledger.sqlite"))


def test_fit_prints_the_library_fit_and_its_budget(tmp_path, capsys):
    path = _units_csv(tmp_path)
    assert main(["pca", path, *BASE, *BUDGET]) == 0
    captured = capsys.readouterr()
    table = pd.read_csv(io.StringIO(captured.out), index_col="component")
    X = pd.read_csv(path)
    fit = dp_pca(X, eps=2.0, delta=1e-6, random_state=5)
    np.testing.assert_allclose(table["pve"], fit.pve, rtol=1e-12)
    assert "analysis: standardized" in captured.err
    assert "privacy cost: (eps=2, delta=1e-06)" in captured.err
    assert "directions" in captured.err and "scales" in captured.err  # the budget table
    assert f"what this means: {fit.privacy_sentence()}" in captured.err
    assert "seed" not in captured.out + captured.err


def test_dry_run_says_what_is_estimated_and_spends_nothing(tmp_path, capsys, monkeypatch):
    path = _units_csv(tmp_path)
    ledger = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPPCA_LEDGER", str(ledger))
    assert main(["pca", path, *BASE, "--no-standardize", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("analysis: units:") and "depends on the units" in out
    assert "privacy cost (not spent): (eps=2, delta=1e-06)" in out
    assert "what this would mean: An attacker testing" in out
    for part in ("directions", "scree", "score", "total"):
        assert part in out
    assert not ledger.exists()  # nothing opened, nothing charged


def test_dry_run_notes_a_score_plot_left_out_by_default(tmp_path, capsys):
    # 300 rows, eps 1: private scales would fail, so the default leaves the score
    # plot out; the dry run says so as a note, before anything is spent
    path = _units_csv(tmp_path)
    assert main(["pca", path, "--eps", "1", "--delta", "1e-6", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "note: no score plot:" in out


def test_release_is_charged_once_to_the_ledger(tmp_path, capsys, monkeypatch):
    path = _units_csv(tmp_path)
    ledger = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPPCA_LEDGER", str(ledger))
    argv = ["pca", path, *BASE, "--budget-eps", "2.5", "--budget-delta", "1e-5"]
    assert main(argv) == 0
    assert "ledger: spent" in capsys.readouterr().err
    assert main(argv) == 2  # two fits of (2, 1e-6) compose to eps 2.66 > 2.5 at 1e-5
    err = capsys.readouterr().err
    assert "dppca: error: this release costs" in err and "remains" in err


def test_pictures_go_to_one_figure_and_to_a_directory(tmp_path, capsys):
    path = _units_csv(tmp_path)
    figure = tmp_path / "all.png"
    folder = tmp_path / "pictures"
    folder.mkdir()
    argv = [
        "pca",
        path,
        *BASE,
        *BUDGET,
        "--out",
        str(figure),
        "--out-dir",
        str(folder),
        "--format",
        "pdf",
        "--score",
    ]
    assert main(argv) == 0
    assert figure.stat().st_size > 0
    written = sorted(p.name for p in folder.iterdir())
    assert {"pca_scree.pdf", "pca_score.pdf", "pca_loading.pdf"} <= set(written)
    assert not [p for p in written if p.startswith(".")]  # no temporary file left


def test_no_score_draws_no_score_picture(tmp_path, capsys):
    path = _units_csv(tmp_path)
    folder = tmp_path / "pictures"
    folder.mkdir()
    assert main(["pca", path, *BASE, *BUDGET, "--no-score", "--out-dir", str(folder)]) == 0
    names = {p.name for p in folder.iterdir()}
    assert "pca_scree.png" in names and "pca_score.png" not in names
    assert "score" not in capsys.readouterr().err.split("privacy cost")[1].split("total")[0]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--split", "directions=0.5,mean=0.5"], "--split"),
        (["--split", "directions=x"], "--split"),
        (["--scale", "private"], "--scale"),
        (["--scale", "1,2"], "--scale"),
        (["--components", "1,9"], "components"),
        (["--out", "fig.txt"], ".png"),
        (["--out-dir", "no/such/dir"], "--out-dir"),
    ],
)
def test_bad_options_give_one_line_errors_before_spending(tmp_path, capsys, extra, needle):
    path = _units_csv(tmp_path)
    assert main(["pca", path, *BASE, *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("dppca: error:") and needle in err and "\n" not in err
    assert "privacy cost" not in captured.out + captured.err


def test_public_scales_and_split_reach_the_fit(tmp_path, capsys):
    path = _units_csv(tmp_path)
    argv = [*BASE, *BUDGET, "--no-standardize", "--scale", "1,100,0.01,10000"]
    assert main(["pca", path, *argv, "--split", "directions=0.6,scree=0.2,score=0.2"]) == 0
    err = capsys.readouterr().err
    assert "analysis: scaled" in err
    split = {"directions": 0.6, "scree": 0.2, "score": 0.2}
    kw = {"standardize": False, "scales": [1, 100, 0.01, 1e4]}
    given = dict(plan_pca(300, 4, eps=2, delta=1e-6, split=split, **kw).steps)
    default = dict(plan_pca(300, 4, eps=2, delta=1e-6, **kw).steps)
    budget = err.split("one fit")[1]
    assert f"{given['directions'].cost.eps:.6f}" in budget
    assert f"{default['directions'].cost.eps:.6f}" not in budget
