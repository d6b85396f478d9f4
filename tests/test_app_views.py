"""What the app's server works out from the page's values, without Shiny or a browser."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dppca import BudgetExceededError, PrivacyCost
from dppca.app import views
from dppca.app.data import DataError
from dppca.app.plans import Release
from dppca.app.state import AppState
from dppca.core.exceptions import TiedRowsError
from dppca.releases.forecast import Forecast


@pytest.fixture
def state(rng: np.random.Generator) -> AppState:
    frame = pd.DataFrame(rng.normal(size=(300, 4)), columns=["a", "b", "c", "d"])
    frame["label"] = np.where(np.arange(300) % 2 == 0, "x", "y")
    st = AppState(random_state=rng)
    st.load("toy", frame)
    return st


class Page:
    """Input values by name, remembering which were read."""

    def __init__(self, **values):
        self.values, self.read = values, set()

    def __call__(self, name):
        self.read.add(name)
        return self.values[name]


def _page() -> Page:
    values = {
        f"{kind}_{what}": value
        for kind in ("directions", "scree", "score")
        for what, value in (
            ("eps", 0.3),
            ("delta", 1e-6),
            ("calibration", "analytic"),
            ("scale", ""),
        )
    }
    values.update(
        directions_design="exact",
        directions_estimator="kendall",
        scree_clip=0,
        scree_k=3,
        scree_methods=["clipped", "pmwm"],
        scree_reuse=True,
        scree_mono=False,
        scree_pmwm_split=True,
        scree_huber_m2=0.25,
        score_pc_x=1,
        score_pc_y=2,
        score_bins=0,
        score_methods=None,
        score_groups=True,
        score_reuse=False,
        loading_heat_k=9,
        loading_kind="heatmap",
        loading_pc_x=None,
        loading_pc_y=3,
        loading_uncertainty="",
        loading_top=2,
        loading_color="#1f5fa8",
    )
    return Page(**values)


@pytest.mark.parametrize(
    "typed, expected", [(None, None), ("", None), (0, None), (-3, None), (5, 5), (2.0, 2)]
)
def test_zero_or_blank_counts_mean_off(typed, expected):
    assert views.positive_or_none(typed) == expected


@pytest.mark.parametrize("kind", ["directions", "scree", "score"])
def test_release_settings_read_only_their_own_tab(kind):
    page = _page()
    settings = views.release_settings(kind, page)
    assert {settings["eps"], settings["delta"], settings["calibration"]} == {0.3, 1e-6, "analytic"}
    assert all(name.startswith(kind) for name in page.read)


def test_release_settings_turn_zeros_and_blanks_into_defaults():
    scree = views.release_settings("scree", _page())
    assert scree["clip"] is None and scree["methods"] == ("clipped", "pmwm")
    assert scree["k"] == 3 and scree["mono"] is False
    score = views.release_settings("score", _page())
    assert score["bins"] is None and score["methods"] == () and score["components"] == (1, 2)


def test_a_widget_echo_is_not_a_new_selection(state):
    state.select(["a", "b"], group="label", groups_public=True, group_labels="x, y")
    sel = state.selection
    assert views.same_selection(sel, ["a", "b"], "label", True, "x,y")
    assert not views.same_selection(sel, ["a", "c"], "label", True, "x,y")
    assert not views.same_selection(sel, ["a", "b"], "label", False, "x,y")
    assert not views.same_selection(sel, ["a", "b"], "label", True, "x")
    assert not views.same_selection(sel, ["a", "b"], "label", True, "x,x")  # invalid list
    assert not views.same_selection(None, ["a", "b"], None, False, None)


def test_load_message_counts_earlier_releases_of_the_same_data(state):
    assert "shared by every session" in views.load_message(state, "toy")
    state.select(["a", "b", "c"])
    state.release("directions", eps=0.2, delta=1e-6, calibration="analytic")
    text = views.load_message(state, "toy")
    assert text.startswith("Loaded toy: 300 rows, 5 columns.")
    assert "already holds 1 release(s)" in text and "tight composition" in text


def test_refusal_says_what_remains_and_that_nothing_was_spent():
    cost = PrivacyCost(0.5, 1e-6, "gaussian", "matrix")
    text = views.refusal_message(cost, (0.125, 2e-7))
    assert text.startswith("Refused: this release would cost")
    assert "(eps=0.125, delta=2e-07) remains" in text and "Nothing was computed" in text


@pytest.mark.parametrize(
    "exc, start",
    [
        (BudgetExceededError("over"), "Refused: over"),
        (TiedRowsError("tied", n_pairs=1, example=(0, 1)), "Not released: tied"),
        (DataError("bad"), "Not released: bad"),
        (TypeError("type"), "Not released: type"),
        (MemoryError(), "Not released: not enough memory"),
    ],
)
def test_every_expected_failure_gets_a_status_line(exc, start):
    assert isinstance(exc, views.RELEASE_FAILURES)
    assert views.failure_message(exc).startswith(start)


def _release(forecast: Forecast | None, warnings: tuple[str, ...] = ()) -> Release:
    cost = PrivacyCost(0.25, 1e-6, "gaussian", "matrix")
    return Release(3, "directions", None, cost, {}, ("a",), warnings, forecast)


def test_release_message_warns_when_the_forecast_flagged_a_problem():
    ok = Forecast("directions", 100, 4, 0.25, 1e-6)
    text, kind = views.release_message(_release(ok, ("clipped",)))
    assert kind == "success"
    assert text == "Release #3 made; it cost eps = 0.25, delta = 1e-06. Notes: clipped"
    bad = Forecast("directions", 100, 4, 0.25, 1e-6, problems=("noise",))
    text, kind = views.release_message(_release(bad))
    assert kind == "warning" and "likely wrong" in text


def test_loading_options_keep_the_heatmap_within_the_released_pcs():
    opts = views.loading_options(4, _page())
    assert opts["heatmap_components"] == [1, 2, 3, 4]
    assert opts["components"] == (1, 3)  # a blank x falls back to PC1
    assert opts["uncertainty"] is None and opts["top"] == 2


def test_score_display_falls_back_to_what_was_released():
    class Result:
        methods, groups = ("add",), None

    rel = Release(1, "score", Result(), PrivacyCost(1, 0, "m", "r"), {}, ("a",))
    assert views.score_display(rel, "groups", "sparse") == ("histogram", "add")
    assert views.score_display(rel, "sample", "add") == ("sample", "add")


def test_ledger_tables_round_costs_for_reading_and_for_download():
    frame = pd.DataFrame(
        {"eps": [0.123456789], "delta": [1.23456789e-6], "time": ["2026-01-02T03:04:05+00:00"]}
    )
    shown = views.readable_ledger(frame)
    assert shown.loc[0, "eps"] == "0.1235" and shown.loc[0, "time"] == "2026-01-02 03:04:05 UTC"
    assert frame.loc[0, "eps"] == 0.123456789  # the caller's table is untouched
    assert views.ledger_csv_frame(frame).loc[0, "delta"] == 1.23457e-6
    assert list(views.readable_ledger(frame.iloc[:0])["ledger"]) == ["nothing released yet"]


def test_bounds_cells_have_stable_distinct_ids():
    widgets = pytest.importorskip("dppca.app.widgets")
    assert widgets.bound_ids("a") == widgets.bound_ids("a")
    assert len({*widgets.bound_ids("a"), *widgets.bound_ids("b")}) == 4
    assert "Choose the columns first" in str(widgets.bounds_table((), {}))
    assert "disabled" in str(widgets.download_buttons("scree", "Scree table", False))


@pytest.mark.parametrize("box", ["eps", "delta"])
@pytest.mark.parametrize("empty", [None, ""])
def test_an_empty_eps_or_delta_box_says_it_is_required(box, empty):
    page = _page()
    page.values[f"directions_{box}"] = empty
    with pytest.raises(DataError, match=f"^{box} is required: type a number"):
        views.release_settings("directions", page)


def test_an_empty_total_budget_box_says_it_is_required(state):
    with pytest.raises(DataError, match="the total eps is required"):
        state.set_budget(None, 1e-6)
    with pytest.raises(DataError, match="the total delta is required"):
        state.set_budget(0.5, "")


def test_counts_typed_into_the_page_are_bounded_with_a_message():
    limit = views.MAX_SAMPLE_SIZE
    assert views.positive_or_none(limit, label="the sample size", most=limit) == limit
    with pytest.raises(
        DataError, match=r"the sample size must be at most 100,000; got 1,000,000,000"
    ):
        views.positive_or_none(1e9, label="the sample size", most=limit)
    page = _page()
    page.values.update(loading_kind="vector", loading_uncertainty=views.MAX_UNCERTAINTY + 1)
    with pytest.raises(DataError, match="noise-sensitivity draws must be at most 1,000"):
        views.loading_options(4, page)


def test_the_sample_cache_keeps_only_the_latest_few():
    from dppca.app.outputs import SampleCache

    cache, made = SampleCache(size=3), []

    def make(i):
        made.append(i)
        return pd.DataFrame({"x": [i]})

    for i in range(5):
        cache.get((1, "add", i), lambda i=i: make(i))
    assert len(cache) == 3 and made == [0, 1, 2, 3, 4]
    cache.get((1, "add", 4), lambda: make(-1))  # kept: not drawn again
    cache.get((1, "add", 0), lambda: make(0))  # dropped: drawn again
    assert made == [0, 1, 2, 3, 4, 0]
