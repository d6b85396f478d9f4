"""The app's logic without a browser: uploads, one budget per dataset, kept releases."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dppca import BudgetExceededError, dp_pc_dir, plan_loading
from dppca.app import figures
from dppca.app.data import DataError, read_csv_upload, select_data
from dppca.app.plans import CLIPPED_NOTE, describe_forecast
from dppca.app.state import DEFAULT_EPS, AppState
from dppca.cli import main
from dppca.core.defaults import default_delta


@pytest.fixture
def frame(rng: np.random.Generator) -> pd.DataFrame:
    """300 rows: five numeric columns with distinct scales and a label column."""
    data = rng.normal(size=(300, 5)) * np.array([3.0, 2.0, 1.0, 0.5, 0.25])
    out = pd.DataFrame(data, columns=["a", "b", "c", "d", "e"])
    out["label"] = np.where(np.arange(300) % 3 == 0, "x", "y")
    return out


@pytest.fixture
def state(frame: pd.DataFrame, rng: np.random.Generator) -> AppState:
    st = AppState(random_state=rng)
    st.load("toy", frame)
    return st


# ----------------------------------------------------------------------------- data


@pytest.mark.parametrize("n", [2, 3, 10, 99, 100, 1000, 5000, 32561, 10**7])
def test_default_delta_is_far_below_one_over_n(n: int) -> None:
    value = default_delta(n)
    rule = min(1e-6, 1 / (10 * n**1.5))
    assert value <= rule and n * value <= 0.1 / n**0.5  # n delta far below 1
    assert value > rule / 10  # rounded down to one significant digit, not further


def test_csv_upload_reads_a_good_file(tmp_path, frame: pd.DataFrame) -> None:
    path = tmp_path / "good.csv"
    frame.to_csv(path, index=False)
    out = read_csv_upload(path)
    assert out.shape == frame.shape


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("data.txt", b"a,b\n1,2\n", "not a CSV file"),
        ("empty.csv", b"", "is empty"),
        ("blank.csv", b"\n\n", "is empty"),
        ("header.csv", b"a,b\n", "header but no rows"),
        ("binary.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
        ("words.csv", b"a,b\nx,y\nz,w\n", "no numeric columns"),
        ("ragged.csv", b"a,b\n1,2\n1,2,3,4\n", "could not be read as CSV"),
    ],
)
def test_csv_upload_refuses_bad_files_with_a_reason(tmp_path, name, content, match) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DataError, match=match):
        read_csv_upload(path)


def test_csv_upload_checks_the_size_before_parsing(tmp_path) -> None:
    path = tmp_path / "big.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 1000)
    with pytest.raises(DataError, match="too large"):
        read_csv_upload(path, limit=100)
    # The size reported by the browser counts, even if the stored file is small.
    with pytest.raises(DataError, match="too large"):
        read_csv_upload(path, size=10**9)


def test_select_data_names_columns_with_missing_values(frame: pd.DataFrame) -> None:
    bad = frame.copy()
    bad.loc[5, "b"] = np.nan
    with pytest.raises(DataError, match=r"missing values .* in column\(s\) 'b'; .* tick"):
        select_data(bad, ["a", "b", "c"])
    sel = select_data(bad, ["a", "c"])  # the other columns are fine
    assert sel.columns == ("a", "c")


@pytest.mark.parametrize(
    ("columns", "group", "match"),
    [
        (["a"], None, "at least two"),
        (["a", "label"], None, "not numeric"),
        (["a", "zz"], None, "unknown column"),
        (["a", "b"], "a", "also an analysed column"),
    ],
)
def test_select_data_refuses_bad_choices(frame, columns, group, match) -> None:
    with pytest.raises(DataError, match=match):
        select_data(frame, columns, group=group)


def test_select_data_keeps_group_labels_and_their_status(frame: pd.DataFrame) -> None:
    sel = select_data(frame, ["a", "b"], group="label", groups_public=True)
    assert sel.groups_public and sel.group_column == "label"
    assert sel.groups.tolist() == frame["label"].tolist()
    assert not select_data(frame, ["a", "b"], groups_public=True).groups_public


# ------------------------------------------------------------------------ budget


def test_a_loaded_dataset_gets_a_conservative_budget(state: AppState) -> None:
    assert (state.budget.eps, state.budget.delta) == (DEFAULT_EPS, default_delta(300))
    assert state.selection.columns == ("a", "b", "c", "d", "e")
    assert state.ledger_frame().empty


def test_preview_prices_a_release_exactly_and_spends_nothing(state: AppState) -> None:
    preview = state.preview("directions", eps=0.3, delta=1e-5)
    assert preview.affordable and "will cost eps = 0.3" in preview.message
    assert state.budget.spent == (0.0, 0.0)
    rel = state.release("directions", eps=0.3, delta=1e-5)
    assert (rel.cost.eps, rel.cost.delta) == (preview.cost.eps, preview.cost.delta)
    assert state.budget.spent == pytest.approx((0.3, 1e-5))
    ledger = state.ledger_frame()
    assert ledger["release"].tolist() == [1]
    assert state.release_summary().to_dict("records") == [
        {"release": 1, "kind": "directions", "eps": 0.3, "delta": 1e-5}
    ]
    assert "Kendall" in ledger.loc[0, "released"]


def test_directions_release_matches_dp_pc_dir_with_the_same_noise(frame: pd.DataFrame) -> None:
    # The app adds nothing to the mechanism: same generator, same released matrix.
    st = AppState(random_state=np.random.default_rng(7))
    st.load("toy", frame)
    rel = st.release("directions", eps=0.5, delta=1e-5, calibration="analytic")
    ref = dp_pc_dir(
        frame[list("abcde")],
        eps=0.5,
        delta=1e-5,
        calibration="analytic",
        random_state=np.random.default_rng(7),
    )
    got = figures.release_table(rel).to_numpy()
    np.testing.assert_array_equal(got, ref.directions)


def test_an_overspending_release_is_refused_before_running(state: AppState) -> None:
    state.release("directions", eps=0.8, delta=1e-5)
    # eps=0.9, not 0.5: the budget composes tightly at its delta (1e-3 here),
    # where directions (0.8) and a scree of 0.5 fit together.
    preview = state.preview("scree", eps=0.9, delta=1e-5, k=2)
    assert not preview.affordable and "refused" in preview.message
    before = state.ledger_frame()
    with pytest.raises(BudgetExceededError):
        state.release("scree", eps=0.9, delta=1e-5, k=2)
    pd.testing.assert_frame_equal(state.ledger_frame(), before)
    assert [r.kind for r in state.releases] == ["directions"]


def test_invalid_settings_give_a_message_not_a_cost(state: AppState) -> None:
    preview = state.preview("directions", eps=-1.0, delta=1e-5)
    assert preview.cost is None and "eps" in preview.message
    assert state.preview("scree", eps=0.1, delta=1e-6, methods=()).cost is None


def test_scree_and_score_reuse_the_directions_without_paying_twice(state: AppState) -> None:
    state.select(["a", "b", "c", "d", "e"], group="label", groups_public=False)
    state.release("directions", eps=0.3, delta=1e-7)
    scree = state.release("scree", eps=0.3, delta=1e-7, k=3, methods=("clipped", "pmwm"))
    score = state.release("score", eps=0.3, delta=1e-7, use_groups=True)
    for rel in (scree, score):
        assert not any("Kendall" in leaf.released for leaf in rel.cost.leaves())
    assert any("group sizes" in leaf.released for leaf in score.cost.leaves())
    assert score.result.groups == ("x", "y")
    # Without reuse the scree releases its own directions and pays for them.
    own = state.preview("scree", eps=0.2, delta=1e-6, k=3, reuse_directions=False)
    assert any("Kendall" in leaf.released for leaf in own.cost.leaves())
    assert state.budget.spent == pytest.approx((0.9, 3e-7))


def test_directions_of_other_columns_are_not_reused(state: AppState) -> None:
    state.release("directions", eps=0.3, delta=1e-5)
    state.select(["a", "b", "c"])
    assert state.reusable_directions() is None
    preview = state.preview("score", eps=0.3, delta=1e-5)
    assert any("Kendall" in leaf.released for leaf in preview.cost.leaves())


def test_budget_is_fixed_after_a_release_and_reset_by_a_new_dataset(
    state: AppState, frame: pd.DataFrame
) -> None:
    state.set_budget(0.5, 1e-6)  # allowed before any release
    assert (state.budget.eps, state.budget.delta) == (0.5, 1e-6)
    state.release("directions", eps=0.2, delta=1e-7)
    with pytest.raises(DataError, match="fixed"):
        state.set_budget(2.0, 1e-6)
    with pytest.raises(DataError, match="eps"):
        state.set_budget(float("nan"), 1e-6)
    state.load("another", frame.iloc[:200])
    assert state.releases == [] and state.budget.spent == (0.0, 0.0)
    assert state.budget.delta == default_delta(200)


def test_release_warnings_are_kept_for_the_page(state: AppState) -> None:
    # eps >= 1 with the classic calibration is qualified by a PrivacyWarning;
    # the app records its text instead of letting it escape.
    state.set_budget(2.0, 1e-5)
    rel = state.release("directions", eps=1.5, delta=1e-6, calibration="classic")
    assert any("analytic" in w for w in rel.warnings)
    quiet = state.preview("directions", eps=0.2, delta=1e-7, calibration="classic")
    # no privacy warning below eps = 1 (the forecast is shown apart, not as a warning)
    assert quiet.affordable and not any("analytic" in w for w in quiet.warnings)


# ----------------------------------------------------------------- post-processing


def test_figures_and_tables_of_a_release_cost_nothing(state: AppState) -> None:
    state.select(["a", "b", "c", "d", "e"], group="label", groups_public=True)
    state.release("directions", eps=0.3, delta=1e-7)
    state.release("scree", eps=0.3, delta=1e-7, k=3)
    state.release("score", eps=0.3, delta=1e-7, methods=("add", "sparse"))
    spent = state.budget.spent
    ledger = state.ledger_frame()
    d, s, c = (state.latest(k) for k in ("directions", "scree", "score"))
    figs = [
        figures.loading_figure(d, kind=kind, components=(2, 3)) for kind in ("vector", "point")
    ]
    figs.append(figures.loading_figure(d, kind="heatmap", heatmap_components=[1, 2, 3]))
    figs.append(figures.loading_figure(d, kind="point", uncertainty=20, top=3, color="#b2182b"))
    figs += [figures.scree_figure(s, kind=kind) for kind in ("pve", "pve_total", "scree")]
    sample = state.sample(c, method="add", size=50)
    figs += [
        figures.score_figure(c, kind="histogram"),
        figures.score_figure(c, kind="sample", method="add", sample=sample),
        figures.score_figure(c, kind="groups"),
    ]
    assert all(hasattr(f, "savefig") for f in figs)
    assert figures.figure_bytes(figs[0], "png").startswith(b"\x89PNG")
    assert b"<svg" in figures.figure_bytes(figs[1], "svg")
    assert figures.release_table(s).shape[0] == 3
    assert set(figures.release_table(c)["method"]) == {"add", "sparse"}
    assert sample.shape[0] == 50
    assert state.budget.spent == spent
    pd.testing.assert_frame_equal(state.ledger_frame(), ledger)


def test_figure_bytes_refuses_other_formats(state: AppState) -> None:
    rel = state.release("directions", eps=0.3, delta=1e-5)
    with pytest.raises(ValueError, match="png, svg"):
        figures.figure_bytes(figures.loading_figure(rel), "gif")


# ---------------------------------------------------------------- packaging, CLI


def test_import_dppca_does_not_import_shiny_or_the_app() -> None:
    code = (
        "import sys, dppca, dppca.cli\n"
        "bad = [m for m in ('shiny', 'dppca.app', 'matplotlib') if m in sys.modules]\n"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_app_command_without_shiny_says_how_to_install(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "shiny", None)  # makes `import shiny` fail
    assert main(["app", "--port", "8123"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dppca: error: the app needs Shiny") and "dppca[app]" in err


def test_app_command_refuses_a_bad_port_and_a_missing_file(capsys) -> None:
    pytest.importorskip("shiny")
    assert main(["app", "--port", "0"]) == 2
    assert "--port" in capsys.readouterr().err
    assert main(["app", "no-such-file.csv"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_create_app_accepts_a_frame_and_refuses_other_data(frame: pd.DataFrame) -> None:
    pytest.importorskip("shiny")
    from dppca.app import create_app

    assert create_app(frame, max_upload_mb=0.5) is not None
    with pytest.raises(TypeError, match="DataFrame or a CSV path"):
        create_app(42)
    for bad in (0, -1.0, float("inf"), True):
        with pytest.raises(ValueError, match="max_upload_mb"):
            create_app(frame, max_upload_mb=bad)


def test_duplicate_rows_do_not_stop_a_release(frame: pd.DataFrame) -> None:
    # Real tables often repeat rows; the app lets such pairs contribute nothing
    # (ties="zero") rather than fail with an error that depends on the data.
    doubled = pd.concat([frame.iloc[:100], frame.iloc[:100]], ignore_index=True)
    st = AppState(random_state=np.random.default_rng(3))
    st.load("doubled", doubled)
    for kind in ("directions", "scree", "score"):
        st.release(kind, eps=0.3, delta=1e-6, reuse_directions=False)
    assert [r.kind for r in st.releases] == ["directions", "scree", "score"]


def test_run_reads_a_csv_path_for_the_provided_source(tmp_path, frame: pd.DataFrame) -> None:
    from dppca.app import _read_data

    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    loaded, name = _read_data(path)
    assert name == "mine.csv" and loaded.shape == frame.shape
    with pytest.raises(FileNotFoundError, match="does not exist"):
        _read_data(tmp_path / "missing.csv")


def test_a_public_label_list_is_what_a_score_release_shows(state: AppState) -> None:
    # Without a public list the labels found in the data are released as they
    # are, and the preview says so; with one, the released set is that list.
    state.select(list("abcde"), group="label")
    preview = state.preview("score", eps=0.3, delta=1e-6)
    assert any("found in the data" in note for note in preview.warnings)
    state.select(list("abcde"), group="label", group_labels="x, y, z")
    preview = state.preview("score", eps=0.3, delta=1e-6)
    assert not any("found in the data" in note for note in preview.warnings)
    rel = state.release("score", eps=0.3, delta=1e-6)
    assert rel.result.groups == ("x", "y", "z")


def test_public_labels_allow_rows_without_a_label(frame: pd.DataFrame) -> None:
    gappy = frame.astype({"label": object})
    gappy.loc[3, "label"] = None
    with pytest.raises(DataError, match="missing labels"):
        select_data(gappy, ["a", "b"], group="label")
    sel = select_data(gappy, ["a", "b"], group="label", group_labels=["x", "y"])
    assert sel.group_labels == ("x", "y")
    with pytest.raises(DataError, match="twice"):
        select_data(frame, ["a", "b"], group="label", group_labels="x,x")
    assert select_data(frame, ["a", "b"], group="label", group_labels=" , ").group_labels is None


def test_the_balanced_design_costs_the_same(state: AppState) -> None:
    exact = state.preview("directions", eps=0.3, delta=1e-5)
    balanced = state.preview("directions", eps=0.3, delta=1e-5, design="balanced")
    assert (balanced.cost.eps, balanced.cost.delta) == (exact.cost.eps, exact.cost.delta)
    rel = state.release("directions", eps=0.3, delta=1e-5, design="balanced")
    assert rel.result.directions.p == 5


# ------------------------------------------------------------ public bounds, plans


BOX = {"a": (-12.0, 12.0), "b": (-8.0, 8.0), "c": (-4.0, 4.0), "d": (-2.0, 2.0), "e": (-1.0, 1.0)}


def test_the_bounds_table_starts_empty_and_a_partial_table_is_refused(state: AppState) -> None:
    assert state.bounds_entries == {} and state.public_bounds() is None
    assert state.bounds_status()[1] == "secondary"
    state.set_bounds({"a": (0, 10), "b": (None, 3.0)})
    with pytest.raises(DataError, match=r"partly filled .*a lower and an upper value"):
        state.public_bounds()
    text, kind = state.bounds_status()
    assert kind == "danger" and "leave the whole table empty" in text
    preview = state.preview("directions", eps=0.3, delta=1e-5)
    assert preview.cost is None and "partly filled" in preview.message
    with pytest.raises(DataError, match="partly filled"):
        state.release("directions", eps=0.3, delta=1e-5)
    assert state.budget.spent == (0.0, 0.0)
    state.set_bounds(None)  # emptied again: no bounds, releases run
    assert state.public_bounds() is None and state.preview("score", eps=0.3, delta=1e-5).cost


@pytest.mark.parametrize(
    ("cells", "match"),
    [
        ({"c": (4.0, -4.0)}, "lower < upper"),
        ({"c": (1.0, 1.0)}, "lower < upper"),
        ({"c": (-4.0, float("inf"))}, "finite"),
        ({"c": ("low", 4.0)}, "lower bound of 'c' must be a number"),
        ({"c": (True, 4.0)}, "must be a number"),
    ],
)
def test_bad_bounds_are_refused_with_the_reason(state: AppState, cells, match) -> None:
    with pytest.raises(DataError, match=match):
        state.set_bounds({**BOX, **cells})
        state.public_bounds()


def test_blank_cells_count_as_empty_and_other_columns_keep_theirs(state: AppState) -> None:
    state.set_bounds({"a": ("", " "), "b": (float("nan"), None)})
    assert state.public_bounds() is None
    state.set_bounds(BOX)
    state.select(["a", "b", "c"])  # bounds of d and e are kept but not used
    np.testing.assert_array_equal(state.public_bounds(), [BOX["a"], BOX["b"], BOX["c"]])
    assert state.bounds_status()[1] == "success"
    state.select(list("abcde"))
    assert state.public_bounds().shape == (5, 2)


def test_a_new_dataset_starts_with_an_empty_bounds_table(state: AppState, frame) -> None:
    state.set_bounds(BOX)
    state.load("other", frame.iloc[:100])
    assert state.bounds_entries == {} and state.public_bounds() is None


def test_bounds_reach_every_release_and_the_page_says_data_were_clipped(frame) -> None:
    # Narrow bounds clip most values; the app's release equals the library's
    # with the same bounds and seed, so the bounds were passed through.
    narrow = {c: (-0.5, 0.5) for c in "abcde"}
    st = AppState(random_state=np.random.default_rng(11))
    st.load("toy", frame)
    st.set_budget(2.0, 1e-3)
    st.set_bounds(narrow)
    rel = st.release("directions", eps=0.4, delta=1e-5)
    ref = dp_pc_dir(
        frame[list("abcde")],
        eps=0.4,
        delta=1e-5,
        bounds=narrow,
        random_state=np.random.default_rng(11),
    )
    np.testing.assert_array_equal(figures.release_table(rel).to_numpy(), ref.directions)
    for kind in ("scree", "score"):
        st.release(kind, eps=0.3, delta=1e-5, reuse_directions=False)
    for rel in st.releases:
        result = rel.result.directions if rel.kind == "directions" else rel.result
        np.testing.assert_array_equal(result.bounds, np.array(list(narrow.values())))
        np.testing.assert_array_equal(rel.bounds, result.bounds)
        assert CLIPPED_NOTE in rel.notes
        # a policy statement, never a count of clipped values
        assert not any(ch.isdigit() for ch in CLIPPED_NOTE)
    st.set_bounds(None)
    assert CLIPPED_NOTE not in st.release("scree", eps=0.1, delta=1e-6).notes


def _options() -> list[tuple[str, dict]]:
    return [
        ("directions", {}),
        ("directions", {"design": "balanced", "calibration": "classic"}),
        ("scree", {"k": 3}),
        ("scree", {"k": 2, "methods": ("clipped", "pmwm", "huber"), "reuse_directions": False}),
        ("scree", {"k": 4, "methods": ("pmwm",), "pmwm_split": False, "mono": False}),
        ("scree", {"k": 3, "clip": 20.0, "huber_m2_frac": 0.4, "methods": ("clipped", "huber")}),
        ("score", {}),
        ("score", {"methods": ("add", "sparse"), "bins": 6, "components": (2, 3)}),
        ("score", {"use_groups": False, "reuse_directions": False}),
        ("score", {"public": True}),
        ("score", {"labels": "x,y,z"}),
    ]


@pytest.mark.parametrize("bounded", [False, True], ids=["no-bounds", "bounds"])
@pytest.mark.parametrize(("kind", "options"), _options())
def test_the_preview_is_the_cost_the_release_records(frame, kind, options, bounded) -> None:
    options = dict(options)
    st = AppState(random_state=np.random.default_rng(5))
    st.load("toy", frame)
    st.set_budget(20.0, 1e-3)
    st.select(
        list("abcde"),
        group="label",
        groups_public=options.pop("public", False),
        group_labels=options.pop("labels", None),
    )
    if bounded:
        st.set_bounds(BOX)
    st.release("directions", eps=0.5, delta=1e-5)  # for the releases that reuse it
    preview = st.preview(kind, eps=0.7, delta=2e-5, **options)
    assert preview.affordable, preview.message
    rel = st.release(kind, eps=0.7, delta=2e-5, **options)
    result = rel.result.directions if kind == "directions" else rel.result
    assert preview.cost == rel.cost == result.cost  # every part, mechanism and noise
    assert preview.forecast.quantities == result.forecast.quantities
    assert preview.forecast.problems == rel.forecast.problems


class _Untouchable:
    """Stands in for a table of 10^6 rows: its shape and names, and nothing else."""

    shape = (10**6, 5)
    columns = pd.Index(list("abcde"))

    def __getattr__(self, name: str):
        raise AssertionError(f"the preview read the data ({name})")

    def __getitem__(self, key):
        raise AssertionError("the preview read the data")

    def __array__(self, *args, **kwargs):
        raise AssertionError("the preview read the data")


def test_the_preview_reads_no_data(state: AppState) -> None:
    from dataclasses import replace

    state.select(list("abcde"), group="label")
    state.selection = replace(state.selection, X=_Untouchable())
    assert state.selection.n == 10**6
    for bounds in (None, BOX):
        state.set_bounds(bounds)
        for kind, options in _options():
            options = {k: v for k, v in options.items() if k not in ("public", "labels")}
            preview = state.preview(kind, eps=0.3, delta=1e-7, **options)
            assert preview.cost is not None, preview.message
            assert preview.forecast.n == 10**6
            if kind == "directions":  # the loading release's own plan
                plan = plan_loading(10**6, 5, eps=0.3, delta=1e-7, **options)
                assert preview.cost == plan.cost
    with pytest.raises(AssertionError, match="read the data"):
        state.release("directions", eps=0.3, delta=1e-7)
    assert state.budget.spent == (0.0, 0.0)


def test_the_preview_refuses_what_the_release_would_refuse(state: AppState, frame) -> None:
    # delta above 1/n, too many bins, an identifier used as groups: the
    # message comes before the click, from the settings alone.
    assert "below 1/n" in state.preview("directions", eps=0.3, delta=0.01).message
    assert "at most" in state.preview("score", eps=0.3, delta=1e-5, bins=10**6).message
    ids = frame.assign(id=[f"row{i}" for i in range(300)])
    state.load("ids", ids)
    state.select(list("abcde"), group="id", group_labels=None)
    assert "identifier" in state.preview("score", eps=0.3, delta=1e-5).message
    assert state.preview("score", eps=0.3, delta=1e-5, use_groups=False).cost is not None


def test_the_forecast_is_shown_before_and_after_a_release(state: AppState) -> None:
    # 300 rows, eps 0.3 for a score plot: the private frame is unreliable.
    state.release("directions", eps=0.4, delta=1e-5)
    preview = state.preview("score", eps=0.3, delta=1e-5)
    assert preview.affordable and not preview.forecast.ok
    lines = preview.forecast_lines
    assert lines[0].startswith("Forecast: the picture would likely be wrong.")
    assert "public bounds" in lines[1] and "more eps" in lines[1]
    assert not any(name in " ".join(lines) for name in ("frame=", "Control(", "_share"))
    # Inaccurate releases are allowed; the result carries the forecast.
    rel = state.release("score", eps=0.3, delta=1e-5)
    assert not rel.forecast.ok and rel.notes[0].startswith("Forecast: this picture is likely")
    assert not any("inaccurate" in w for w in rel.warnings)  # said once, by the page
    # Public bounds make the frame free, and the forecast says so.
    state.set_bounds(BOX)
    bounded = state.preview("score", eps=0.3, delta=1e-5)
    assert bounded.forecast.ok and bounded.forecast_lines[0].startswith("Forecast: looks accurate")
    # directions alone, 300 rows and 5 columns: noise norm about 0.34 at eps = 0.3
    # (above the 0.15 limit), about 0.09 at eps = 1.2
    assert not state.preview("directions", eps=0.3, delta=1e-5).forecast.ok
    assert state.preview("directions", eps=1.2, delta=1e-5).forecast.ok


def test_describe_forecast_words_problems_for_the_page() -> None:
    from dppca.releases.forecast import Forecast

    bad = Forecast(
        "scree",
        150,
        4,
        0.3,
        1e-5,
        problems=(
            "the clip level search may fail with probability up to 0.2; give public bounds, "
            "raise eps or split=ScreeSplit(clip=...), or give a public ClippedControl(clip=...).",
        ),
    )
    before = describe_forecast(bad)
    assert "The clip level search may fail" in before[0]
    assert "a public clip level (method controls)." in before[0]
    assert "ClippedControl" not in before[0] and "ScreeSplit" not in before[0]
    assert "raise eps, or give a public clip level" in before[0]
    after = describe_forecast(bad, bounds_given=True, made=True)
    assert "public bounds for every" not in after[1] and "publishing" in after[2]
    good = Forecast("directions", 150, 4, 1.0, 1e-5)
    assert describe_forecast(good) == describe_forecast(good, made=True)


def test_the_scree_figure_shows_the_share_of_the_total_variance_by_default(state) -> None:
    import inspect

    assert inspect.signature(figures.scree_figure).parameters["kind"].default == "pve_total"


def test_figures_are_drawn_without_pyplot_in_parallel_threads(state: AppState) -> None:
    # No pyplot figure is opened (pyplot's global state would need a lock),
    # and eight figures drawn at once in threads all come out whole.
    import concurrent.futures

    import matplotlib.pyplot as plt

    from dppca.app import figures

    state.select(["a", "b", "c"], group="label")
    rel = state.release("directions", eps=0.3, delta=1e-6)
    score = state.release("score", eps=0.3, delta=1e-6)
    before = plt.get_fignums()
    jobs = [
        lambda: figures.loading_figure(rel, uncertainty=50),
        lambda: figures.loading_figure(rel, kind="heatmap"),
        lambda: figures.score_figure(score, kind="groups"),
        lambda: figures.score_figure(score, kind="histogram"),
    ] * 2
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        pngs = list(pool.map(lambda job: figures.render(job, "png"), jobs))
    assert all(png.startswith(b"\x89PNG") and len(png) > 10_000 for png in pngs)
    assert plt.get_fignums() == before


# ----------------------------------------------------------------------------- scales


@pytest.mark.parametrize("kind", ["directions", "scree", "score"])
def test_private_scales_are_priced_in_the_preview_and_held_by_the_release(
    state: AppState, kind: str
) -> None:
    # The page's "column scales" choice: each release buys its own p scales
    # (pure parts) from half of its eps, and reuses no directions made on
    # other units (they were released before on this table).
    state.release("directions", eps=0.3, delta=1e-5)
    preview = state.preview(kind, eps=0.6, delta=1e-5, scale="private")
    leaves = preview.cost.leaves()
    assert sum("private scale of" in leaf.released for leaf in leaves) == 5
    assert any("Kendall" in leaf.released for leaf in leaves)  # its own directions
    rel = state.release(kind, eps=0.6, delta=1e-5, scale="private")
    assert (rel.cost.eps, rel.cost.delta) == (preview.cost.eps, preview.cost.delta)
    assert rel.cost.eps <= 0.6 + 1e-12
    scales = rel.result.scales if kind != "directions" else rel.result.directions.scales
    assert scales is not None and scales.shape == (5,)


def test_private_scales_with_public_bounds_give_a_message(state: AppState) -> None:
    state.set_bounds({c: (-20.0, 20.0) for c in "abcde"})
    preview = state.preview("scree", eps=0.6, delta=1e-5, scale="private")
    assert preview.cost is None and "bounds" in preview.message


def test_the_tau_matrix_is_a_directions_choice(state: AppState, frame: pd.DataFrame) -> None:
    preview = state.preview("directions", eps=0.5, delta=1e-5, estimator="tau")
    assert "tau" in preview.cost.released
    rel = state.release("directions", eps=0.5, delta=1e-5, estimator="tau")
    assert rel.result.directions.estimator == "tau"
    # tau needs no scales: asking for both is a message, not a cost
    refused = state.preview("directions", eps=0.5, delta=1e-5, estimator="tau", scale="private")
    assert refused.cost is None and "tau" in refused.message


def test_private_scales_with_public_bounds_are_a_directions_choice(state: AppState) -> None:
    # The direction release scales within the bounds' widths, so the two go together
    # there (as in plan_pc_dir); only a scree or score refuses them.
    state.set_bounds({c: (-20.0, 20.0) for c in "abcde"})
    preview = state.preview("directions", eps=0.6, delta=1e-5, scale="private")
    assert preview.cost is not None
    assert sum("private scale of" in leaf.released for leaf in preview.cost.leaves()) == 5


def test_the_budget_panel_says_what_the_releases_so_far_mean(state: AppState) -> None:
    from dppca import attacker_sentence

    assert state.spent_meaning() == ""
    rel = state.release("directions", eps=0.3, delta=1e-5)
    assert state.spent_meaning() == "Releases so far: " + attacker_sentence(rel.cost)
