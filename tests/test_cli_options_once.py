"""Every command (and every app tab) builds its option objects once.

The checks of :mod:`dppca.core.options` all run through ``validate``; a
command that planned through the keyword builders at every step of a solver
(the private-scale stretch of ``scree`` and ``score``) ran each check about
twenty times.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dppca
from dppca.cli import main
from dppca.core import options as options_module

BUDGET = ["table.csv", "--eps", "1", "--delta", "1e-6"]

COMMANDS = {
    "directions": ["directions", *BUDGET, "--bounds", "-10:10"],
    "loading": ["loading", *BUDGET, "--bounds", "-10:10"],
    "scree": ["scree", *BUDGET, "--method", "clipped,huber", "--bounds", "-10:10"],
    "scree private scales": ["scree", *BUDGET, "--scale", "private"],
    "score": ["score", *BUDGET, "--bounds", "-10:10"],
    "score private scales": ["score", *BUDGET, "--scale", "private"],
    "report": ["report", *BUDGET, "--out", "page.html"],
    "report private scales": ["report", *BUDGET, "--out", "page.html", "--scale", "private"],
    "pca": ["pca", *BUDGET, "--bounds", "-10:10"],
}


@pytest.fixture
def check_counts(monkeypatch, tmp_path) -> dict[str, int]:
    """How often each option (the bounds given included) is checked.

    Runs in ``tmp_path``, which holds ``table.csv`` (400 rows, 4 columns).
    """
    X = np.random.default_rng(7).uniform(-5.0, 5.0, size=(400, 4))
    pd.DataFrame(X, columns=["a", "b", "c", "d"]).to_csv(tmp_path / "table.csv", index=False)
    monkeypatch.chdir(tmp_path)
    for name in ("plan_loading", "plan_pca", "plan_report", "plan_score", "plan_scree"):
        getattr(dppca, name)  # their modules' default options are built on import, once
    counts: dict[str, int] = {}
    real_validate, real_bounds = options_module.validate, options_module.check_bounds

    def counting(name, value, constraint):
        counts[name] = counts.get(name, 0) + 1
        return real_validate(name, value, constraint)

    def counting_bounds(bounds, names):
        if bounds is not None:  # a sub-plan's derived "no bounds" re-checks nothing given
            counts["bounds"] = counts.get("bounds", 0) + 1
        return real_bounds(bounds, names)

    monkeypatch.setattr(options_module, "validate", counting)
    monkeypatch.setattr(options_module, "check_bounds", counting_bounds)
    return counts


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_dry_run_checks_each_option_once(command, check_counts, capsys):
    assert main([*COMMANDS[command], "--dry-run"]) == 0, capsys.readouterr()
    assert check_counts and set(check_counts.values()) == {1}, check_counts


def test_a_release_with_private_scales_checks_each_option_once(check_counts, capsys):
    # the stretch solver prices the scree about twenty times; the run adds no check
    argv = ["scree", *BUDGET, "--scale", "private", "--seed", "1", "--table", "scree.csv"]
    assert main(argv) == 0, capsys.readouterr()
    assert set(check_counts.values()) == {1}, check_counts


@pytest.mark.parametrize("kind", ["pca", "directions", "scree", "score"])
@pytest.mark.parametrize("scale", [None, "private"])
def test_an_app_plan_checks_each_option_once(kind, scale, check_counts):
    # the app's tabs build their option objects once from the page, as the commands do
    from dppca.app.data import Selection
    from dppca.app.plans import plan_request

    if kind == "pca" and scale is not None:
        pytest.skip("the PCA tab has no scale setting")
    X = np.random.default_rng(2).normal(size=(400, 4))
    sel = Selection(pd.DataFrame(X, columns=list("abcd")))
    settings = {"eps": 1.0, "delta": 1e-6, "calibration": "analytic"}
    if kind != "pca":
        settings["scale"] = scale
    plan_request(kind, settings, sel, None, None)
    assert check_counts and set(check_counts.values()) == {1}, check_counts


@pytest.mark.parametrize("command", ["report", "report private scales"])
def test_a_report_run_builds_its_options_once(command, check_counts, capsys, monkeypatch):
    # the page's real run goes on from the objects its dry run plans with:
    # it neither restates the settings as report()'s keywords nor checks them again
    import dppca.reporting

    def keywords_again(*args, **kwargs):
        raise AssertionError("the command restated its settings as report() keywords")

    monkeypatch.setattr(dppca.reporting, "report", keywords_again)
    argv = [*COMMANDS[command], "--seed", "1", "--accuracy", "ignore"]
    assert main(argv) == 0, capsys.readouterr()
    assert check_counts and set(check_counts.values()) == {1}, check_counts
