"""``standardize=True`` / ``--standardize`` on the one-picture releases: the fit's pictures."""

from __future__ import annotations

import html
import io

import numpy as np
import pandas as pd
import pytest

from dppca import AccuracyWarning, dp_loading, dp_pca, dp_score, dp_scree, report
from dppca.cli import main

UNITS = np.array([1.0, 100.0, 0.01, 1e4])


def _table(n: int = 300, seed: int = 4) -> pd.DataFrame:
    """Four correlated Gaussian columns in units 1e-2 to 1e4 apart."""
    rng = np.random.default_rng(seed)
    cov = np.full((4, 4), 0.6) + 0.4 * np.eye(4)
    z = rng.multivariate_normal(np.zeros(4), cov, size=n) * UNITS
    return pd.DataFrame(z, columns=["a", "b", "c", "d"])


KW = {"eps": 1.5, "delta": 1e-6, "random_state": 7}


def test_scree_is_the_fits_scree_and_records_its_cost():
    X = _table()
    scree = dp_scree(X, standardize=True, **KW)
    fit = dp_pca(X, score=False, **KW)
    np.testing.assert_array_equal(scree.pve_total, fit.pve)
    np.testing.assert_array_equal(scree.directions, fit.scree.directions)
    assert (scree.cost.eps, scree.cost.delta) == (1.5, 1e-6)


def test_score_is_the_fits_score_plot_on_its_scales():
    X = _table()
    score = dp_score(X, standardize=True, **KW)
    fit = dp_pca(X, score=True, **KW)
    np.testing.assert_array_equal(score.probs["add"], fit.score.probs["add"])
    assert score.xlim == fit.score.xlim and score.ylim == fit.score.ylim
    np.testing.assert_array_equal(score.scales, fit.scales)  # the table's scaled scores
    assert score.cost.eps == 1.5  # the whole fit, not the score part alone


def test_loading_is_the_same_in_any_units():
    # tau directions depend on the ranks only; the spherical Kendall ones do not
    X = _table()
    rescaled = X * np.array([1e3, 1e-2, 50.0, 1e-4])
    a = dp_loading(X, standardize=True, **KW)
    b = dp_loading(rescaled, standardize=True, **KW)
    np.testing.assert_allclose(a.directions.directions, b.directions.directions, atol=1e-12)
    plain = dp_loading(X, **KW), dp_loading(rescaled, **KW)
    assert not np.allclose(plain[0].directions.directions, plain[1].directions.directions)


def test_loading_compares_with_the_correlation_pca():
    X = _table()
    result = dp_loading(X, standardize=True, compare=True, **KW)
    corr = np.linalg.eigh(np.corrcoef(X.to_numpy(), rowvar=False))[1][:, ::-1]
    pc1 = result.nonprivate.directions[:, 0]
    assert abs(pc1 @ corr[:, 0]) == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize(
    ("function", "option"),
    [
        (dp_scree, {"method": "huber"}),
        (dp_score, {"groups": [0, 1] * 150}),
        (dp_loading, {"design": "balanced"}),
    ],
)
def test_options_the_fit_decides_are_refused(function, option):
    with pytest.raises(ValueError, match="standardize=True"):
        function(_table(), standardize=True, **KW, **option)


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def table_csv(tmp_path) -> str:
    path = tmp_path / "units.csv"
    _table().to_csv(path, index=False)
    return str(path)


# The releases here are bigger than a new table's default total (eps 1): the data
# holder declares one (the ledger's first-use rule, which test_ledger_headroom tests).
CLI = ["--eps", "1.5", "--delta", "1e-6", "--seed", "7", "--standardize"]
CLI += ["--budget-eps", "8", "--budget-delta", "1e-5"]


def test_cli_scree_gives_the_fits_scree(table_csv, capsys):
    assert main(["scree", table_csv, *CLI]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col="component")
    fit = dp_pca(pd.read_csv(table_csv), score=False, **KW)
    np.testing.assert_allclose(table["pve_total_sin-tau"], fit.pve, rtol=1e-12)


def test_cli_score_gives_the_fits_score_plot(table_csv, capsys):
    assert main(["score", table_csv, *CLI]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    fit = dp_pca(pd.read_csv(table_csv), score=True, **KW)
    expected = fit.score.to_frame()
    np.testing.assert_allclose(table["prob"], expected["prob"], rtol=1e-12)


def test_cli_loading_gives_the_fits_directions(table_csv, capsys):
    assert main(["loading", table_csv, *CLI]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col="variable")
    fit = dp_pca(pd.read_csv(table_csv), score=False, **KW)
    np.testing.assert_allclose(table[["PC1", "PC2"]], fit.directions.directions[:, :2])


def test_cli_dry_run_says_what_is_estimated(table_csv, capsys):
    assert main(["scree", table_csv, *CLI, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("analysis: standardized:") and "privacy cost (not spent)" in out


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        ("scree", ["--method", "huber"]),
        ("score", ["--scale", "1,1,1,1"]),
        ("loading", ["--estimator", "tau"]),
        ("report", ["--shares", "1,1,1", "--out", "never.html"]),
        ("report", ["--design", "balanced", "--out", "never.html"]),
    ],
)
def test_cli_refuses_options_the_fit_decides(table_csv, capsys, command, extra):
    assert main([command, table_csv, *CLI, *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()[-1]
    assert err.startswith("dppca: error: --standardize") and extra[0] in err
    assert "privacy cost" not in captured.out + captured.err


def test_report_is_the_page_of_one_fit(tmp_path):
    X = _table()
    page = report(X, standardize=True, out=tmp_path / "page.html", **KW)
    fit = dp_pca(X, score=True, **KW)
    np.testing.assert_array_equal(page.scree.pve_total, fit.pve)
    np.testing.assert_array_equal(page.score.probs["add"], fit.score.probs["add"])
    assert page.cost.eps == 1.5 and len(page.budget.ledger) == len(fit.parts)
    assert (tmp_path / "page.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(ValueError, match="shares"):
        report(X, standardize=True, shares={"directions": 1, "scree": 1, "score": 1}, **KW)


def test_a_standardised_report_keeps_the_notes_its_page_lists():
    # Report.notes are the warnings listed on the page, for the fit's page as well
    with pytest.warns(AccuracyWarning):
        page = report(_table(), standardize=True, **{**KW, "eps": 0.2})
    assert page.notes
    notes = page.html.split("<h2>Notes</h2>", 1)[1].split("</ul>", 1)[0]
    assert notes.count("<li>") == len(page.notes)
    assert all(html.escape(note) in notes for note in page.notes)


def test_cli_report_standardize_writes_the_fits_page(table_csv, tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main(["report", table_csv, *CLI, "--out", str(out)]) == 0
    assert "one private PCA fit, standardised" in capsys.readouterr().err
    assert "sin-tau" in out.read_text(encoding="utf-8")
    assert main(["report", table_csv, *CLI, "--out", str(out), "--shares", "1,1,1"]) == 2
    assert "--shares" in capsys.readouterr().err


def test_a_standardised_report_says_which_analysis_and_missing_rule_it_used():
    # The Methods paragraph is written from the run: a standardised page names Kendall's
    # tau and the sin transform, not the spherical Kendall matrix of the table's units.
    X = _table()
    X.iloc[3, 1] = np.nan
    page = report(X, **KW, standardize=True, missing="zero")
    methods = page.html.split("<h2>Methods</h2>", 1)[1]
    assert "standardised (correlation) analysis" in methods
    assert "Kendall&#x27;s tau matrix" in methods and "spherical Kendall" not in methods
    assert "no row was dropped" in methods
