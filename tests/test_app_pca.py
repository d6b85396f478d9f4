"""The app's PCA tab without a browser: one private PCA fit, its preview and pictures."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dppca import BudgetExceededError
from dppca.app import figures, views
from dppca.app.data import DataError
from dppca.app.state import AppState
from dppca.cli import main
from dppca.privacy.tradeoff import attacker_sentence
from dppca.releases.pca.result import PCAResult
from dppca.releases.pca.split import DEFAULT_WEIGHTS

pytest.importorskip("shiny")  # the server module imports Shiny

EPS, DELTA = 0.8, 1e-7


@pytest.fixture
def frame(rng: np.random.Generator) -> pd.DataFrame:
    """300 rows of four correlated columns in very different units, and a label."""
    z = rng.normal(size=(300, 4))
    z[:, 1] += 0.8 * z[:, 0]
    data = z * np.array([1000.0, 3.0, 0.01, 1.0]) + np.array([5e4, 0.0, 2.0, -7.0])
    out = pd.DataFrame(data, columns=["income", "hours", "ratio", "score"])
    out["label"] = np.where(np.arange(300) % 3 == 0, "x", "y")
    return out


@pytest.fixture
def state(frame: pd.DataFrame, rng: np.random.Generator) -> AppState:
    st = AppState(random_state=rng)
    st.load("toy", frame)
    return st


def _page(**changes: object):
    """The PCA tab's inputs as the page sends them (the defaults the page shows)."""
    values: dict[str, object] = {
        "pca_eps": EPS,
        "pca_delta": DELTA,
        "pca_calibration": "analytic",
        "pca_standardize": "standardized",
        "pca_k": 0,
        "pca_pc_x": 1,
        "pca_pc_y": 2,
        "pca_score": "auto",
        **{f"pca_w_{part}": w for part, w in views.split_defaults("standardized").items()},
    }
    values.update(changes)
    read: set[str] = set()

    def value(name: str) -> object:
        read.add(name)
        return values[name]

    value.read = read  # type: ignore[attr-defined]
    return value


def _settings(**changes: object) -> dict:
    return views.release_settings("pca", _page(**changes))


def test_pca_settings_read_only_the_pca_tab_and_map_zero_weights_to_defaults() -> None:
    page = _page()
    settings = views.release_settings("pca", page)
    assert all(name.startswith("pca_") for name in page.read)  # type: ignore[attr-defined]
    assert settings["standardize"] is True and settings["k"] is None
    # the standardised scree costs nothing: its weight 0 stands for "the default"
    assert settings["split"]["scree"] is None
    assert settings["split"]["directions"] == DEFAULT_WEIGHTS["standardized"]["directions"]
    units = _settings(pca_standardize="units", pca_score="no")
    assert units["standardize"] is False and units["score"] == "no"


@pytest.mark.parametrize("typed", [-0.1, "x", float("inf")])
def test_a_bad_split_weight_is_refused_with_its_part_named(typed) -> None:
    with pytest.raises(DataError, match="weight of the score part"):
        _settings(pca_w_score=typed)


def test_the_split_defaults_shown_follow_the_analysis() -> None:
    assert views.split_defaults("units")["scree"] == DEFAULT_WEIGHTS["units"]["scree"] > 0
    assert views.split_defaults("standardized")["scree"] == 0.0


def test_the_preview_prints_the_dry_run_and_spends_nothing(state, frame, tmp_path, capsys):
    version = state.ledger_version()
    preview = state.preview("pca", **_settings())
    assert preview.cost is not None and preview.affordable
    assert preview.cost.eps == pytest.approx(EPS) and preview.cost.delta == pytest.approx(DELTA)
    assert "will cost eps = 0.8" in preview.message
    # The same lines as the command line's dry run on the same table and settings.
    path = tmp_path / "toy.csv"
    frame.to_csv(path, index=False)
    assert main(["pca", str(path), "--eps", str(EPS), "--delta", str(DELTA), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert preview.details and "\n".join(preview.details) in printed
    assert preview.details[0].startswith("analysis: standardized: the PCA of the standardised")
    assert attacker_sentence(preview.cost) in preview.details[2]
    assert any(note.startswith("estimated time: about") for note in preview.warnings)
    # Without public bounds at n = 300 the fit leaves its score plot out, and says so
    # in the page's words before anything is spent.
    assert any("public bounds for every analysed variable" in w for w in preview.warnings)
    assert state.ledger_version() == version
    assert state.ledger.spent(state.budget.fp) == (0.0, 0.0)
    assert state.releases == []


def test_the_split_changes_the_parts_not_the_price(state) -> None:
    state.set_bounds({c: (-1e6, 1e6) for c in state.selection.columns})
    even = state.preview("pca", **_settings(pca_w_directions=1, pca_w_score=1))
    usual = state.preview("pca", **_settings())
    assert even.cost.eps == pytest.approx(usual.cost.eps) == pytest.approx(EPS)
    assert even.details[3] != usual.details[3]  # the table of the parts' eps


def test_the_pca_tabs_charge_is_the_fits_eps(state) -> None:
    rel = state.release("pca", **_settings())
    assert isinstance(rel.result, PCAResult) and rel.kind == "pca"
    assert rel.cost.eps == pytest.approx(EPS) == pytest.approx(rel.result.eps)
    assert rel.cost.delta == pytest.approx(rel.result.delta)
    charged = state.release_summary()
    assert charged["kind"].tolist() == ["pca"]
    assert charged["eps"].iloc[0] == pytest.approx(rel.result.eps)
    assert state.ledger.spent(state.budget.fp)[0] == pytest.approx(EPS)
    assert "Releases so far: An attacker" in state.spent_meaning()


def test_a_fit_the_budget_cannot_pay_is_refused_before_any_data_work(state) -> None:
    state.set_budget(0.5, 1e-6)
    preview = state.preview("pca", **_settings())
    assert not preview.affordable and "will be refused" in preview.message
    with pytest.raises(BudgetExceededError):
        state.release("pca", **_settings())
    assert state.releases == [] and state.ledger_version()[0] == 0


@pytest.mark.slow  # six figures with their privacy-noise regions: about 5 s
def test_the_pictures_are_drawn_from_the_kept_fit_only(state) -> None:
    state.set_bounds({c: (-1e6, 1e6) for c in state.selection.columns})
    rel = state.release("pca", **_settings(pca_score="yes"))
    assert rel.result.score is not None
    # Poison the session's data: the pictures read the kept fit, never the table.
    state.frame = state.selection = None
    fig = figures.pca_figure(rel, kind="all")
    titles = [ax.get_title() for ax in fig.axes]
    assert {"DP correlation circle", "DP biplot", "Private PVE"} <= set(titles)
    assert len(fig.axes) >= 6
    for kind in figures.PCA_PICTURES:
        png = figures.render(lambda kind=kind: figures.pca_figure(rel, kind=kind), "png")
        assert png.startswith(b"\x89PNG")


def test_a_fit_without_a_score_plot_says_why_in_its_place(state) -> None:
    rel = state.release("pca", **_settings())
    assert rel.result.score is None
    fig = figures.pca_figure(rel, kind="all")
    texts = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert "No score plot" in texts and "public bounds" in texts
    assert "An attacker testing whether" in texts  # the last panel: what eps means
    single = figures.pca_figure(rel, kind="score")
    assert "No score plot" in " ".join(t.get_text() for t in single.axes[0].texts)


def test_the_fits_tables_and_release_file(state, tmp_path) -> None:
    from dppca.release_io import load_release

    rel = state.release("pca", **_settings())
    table = figures.release_table(rel)
    assert list(table.columns) == ["variance", "pve", "cumulative_pve"]
    budget = views.summary_table(rel.result.summary().budget)
    assert budget.loc["total", "eps"] == f"{EPS:.4g}"
    path = tmp_path / "fit.json"
    path.write_bytes(figures.release_file(rel))
    again = load_release(path)
    assert isinstance(again, PCAResult)
    np.testing.assert_allclose(again.variances, rel.result.variances)


def test_a_reload_shows_the_fit_paid_for_again(tmp_path, frame, rng) -> None:
    from dppca.privacy.ledger import Ledger

    ledger = Ledger(tmp_path / "ledger.sqlite")
    first = AppState(random_state=rng, ledger=ledger)
    first.load("toy", frame)
    made = first.release("pca", **_settings())
    if not callable(getattr(ledger, "stored_releases", None)):
        pytest.skip("this ledger does not store releases")
    again = AppState(random_state=rng, ledger=ledger)
    again.load("toy", frame)
    shown = again.latest("pca")
    assert shown is not None and shown.number == made.number
    np.testing.assert_allclose(shown.result.pve, made.result.pve)


def test_a_session_release_in_a_worker_thread_leaves_no_blas_hold(state) -> None:
    from dppca.app.server import Session
    from dppca.kernels import threads

    before = threads._held
    session = SimpleNamespace(state=state)  # release_in_thread reads only the state

    async def run() -> object:
        return await asyncio.to_thread(Session.release_in_thread, session, "pca", _settings())

    rel, message = asyncio.run(run())
    assert rel is not None and message[1] in ("success", "warning")
    assert threads._held == before


# The process-wide BLAS limit itself, checked in a fresh interpreter (another test's
# in-process app could hold it meanwhile): the caller's 2 threads come back after a
# release run as an app session runs it (a worker thread), and the hold was taken.
_APP_RELEASE_BLAS = """
import asyncio, numpy as np, pandas as pd, threadpoolctl
from types import SimpleNamespace
from dppca.app.server import Session
from dppca.app.state import AppState
from dppca.kernels import threads
def blas():
    return {i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}
seen = []
original = threads.hold_blas
def spy(*args, **kwargs):
    seen.append(1)
    return original(*args, **kwargs)
threads.hold_blas = spy
import dppca.releases.engine as engine
engine.hold_blas = spy
rng = np.random.default_rng(0)
frame = pd.DataFrame(rng.normal(size=(200, 4)), columns=list("abcd"))
with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
    state = AppState(random_state=rng)
    state.load("toy", frame)
    settings = dict(eps=1.0, delta=1e-7, calibration="analytic", standardize=True,
                    k=None, components=(1, 2), score="auto", split={})
    rel, _ = asyncio.run(asyncio.to_thread(
        Session.release_in_thread, SimpleNamespace(state=state), "pca", settings))
    assert rel is not None and seen, seen
    assert threads._held == 0, threads._held
    assert blas() == {2}, blas()
"""


@pytest.mark.slow  # a fresh interpreter importing Shiny and dppca: about 6 s
def test_an_app_release_gives_back_the_callers_blas_limit() -> None:
    pytest.importorskip("threadpoolctl")
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(name, None)  # the caller's limit is the test's own
    done = subprocess.run(
        [sys.executable, "-c", _APP_RELEASE_BLAS], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_fit_follows_the_data_panels_missing_values_rule(frame, rng) -> None:
    holes = frame.copy()
    holes.iloc[3, 1] = holes.iloc[7, 2] = np.nan
    state = AppState(random_state=rng)
    assert state.load("holes", holes) is not None  # refused until the box is ticked
    state.select(["income", "hours", "ratio", "score"], missing="zero")
    rel = state.release("pca", **_settings())
    assert rel.result.n == 300 and rel.result.eps == pytest.approx(EPS)


def test_a_fit_in_the_tables_units_buys_its_scree_as_a_part(state) -> None:
    rel = state.release("pca", **_settings(pca_standardize="units", pca_score="no"))
    assert rel.result.analysis == "units"
    assert list(rel.result.parts) == ["directions", "scree"]
    assert rel.cost.eps == pytest.approx(EPS)
    # the unit-dependent analysis says so before and after
    assert "depends on the units" in rel.result.estimates
