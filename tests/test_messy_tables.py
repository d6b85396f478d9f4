"""One rule for messy tables on every face: the library, the command line, the app.

The same table (a boolean column, a text column, a numeric column with gaps
and a group column) must give the same n, the same analysed columns and the
same notes through :func:`dppca.dp_pc_dir` / :func:`dppca.dp_score`, through
``dppca directions`` / ``dppca score`` on a CSV file, and through the app's
:func:`dppca.app.data.select_data`. Missing values are refused, naming the
option of each face, or analysed with ``missing="zero"``: no row is dropped,
n stays the number of rows read, and nothing about the missing cells is
noted (which columns have one is a statistic of the data).
"""

from __future__ import annotations

import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dppca import Budget, DataWarning, dp_pc_dir, dp_score, plan_pc_dir
from dppca.cli import main
from dppca.core.tables import column_kind, left_out_note, tidy_table
from dppca.privacy.fingerprint import fingerprint
from dppca.privacy.ledger import Ledger

N = 240
GAPS = (3, 17, 40, 41, 99, 150, 201)  # rows with a missing x2
COMPLETE = N - len(GAPS)
FEATURES = ("x1", "x2", "x3", "flag")
PRIV = ["--eps", "1", "--delta", "1e-5"]


@pytest.fixture
def messy() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    z = rng.normal(size=(N, 2))
    frame = pd.DataFrame(
        {
            "x1": z[:, 0] + 0.3 * rng.normal(size=N),
            "x2": z[:, 0] - z[:, 1],
            "city": rng.choice(["Lyon", "Oslo", "Porto"], size=N),
            "x3": z[:, 1] + 0.3 * rng.normal(size=N),
            "flag": rng.random(N) < 0.4,
            "g": rng.choice(["a", "b"], size=N),
        }
    )
    frame.loc[list(GAPS), "x2"] = np.nan
    return frame


@pytest.fixture
def csv_file(messy, tmp_path):
    path = tmp_path / "messy.csv"
    messy.to_csv(path, index=False)
    return path


def _data_notes(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, DataWarning)]


def _api(call, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(*args, **kwargs)
    return result, _data_notes(caught)


def _cli(argv, capsys) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _cli_notes(err: str) -> list[str]:
    """The rule's notes on stderr: ``dppca: <note>`` lines (not warnings or errors)."""
    lines = [line.removeprefix("dppca: ") for line in err.splitlines()]
    return [line for line in lines if line.startswith(("left out", "column(s)"))]


def _app(frame, columns, **kwargs):
    from dppca.app.data import select_data

    return select_data(frame, columns, **kwargs)


# ------------------------------------------------------------------ the rule itself


def test_column_kinds_follow_one_rule():
    frame = pd.DataFrame(
        {
            "int": [1, 2, 3],
            "nullable": pd.array([1, None, 3], dtype="Int64"),
            "bool": [True, False, True],
            "boolean": pd.array([True, None, False], dtype="boolean"),
            "gappy_flag": [True, None, False],  # how a CSV column of flags with a gap reads
            "text": ["a", "b", "c"],
            "string": pd.array(["a", "b", None], dtype="string"),
            "category": pd.Categorical(["u", "v", "u"]),
            "when": pd.to_datetime(["2020-01-01"] * 3),
            "complex": [1j, 2j, 3j],
        }
    )
    kinds = {c: column_kind(frame[c]) for c in frame.columns}
    assert kinds == {
        "int": "number",
        "nullable": "number",
        "bool": "boolean",
        "boolean": "boolean",
        "gappy_flag": "boolean",
        "text": "other",
        "string": "other",
        "category": "other",
        "when": "other",
        "complex": "other",
    }
    table = tidy_table(frame, missing="zero")
    assert table.variables == ("int", "nullable", "bool", "boolean", "gappy_flag")
    # every row is kept: row 1's gaps stay NaN for the kernels, flags as 0/1
    np.testing.assert_array_equal(
        table.data, [[1, 1, 1, 1, 1], [2, np.nan, 0, np.nan, np.nan], [3, 3, 1, 0, 0]]
    )
    assert table.n == table.n_read == 3 and table.kept is None
    assert table.left_out == ("text", "string", "category", "when", "complex")
    assert table.notes == (left_out_note(table.left_out),)  # nothing about the gaps


def test_the_notes_say_nothing_about_missing_cells():
    frame = pd.DataFrame({"a": [1.5, np.nan, 2.25, 3.0], "b": [0.5, 0.75, 1.0, 2.0], "t": "x"})
    gappy = tidy_table(frame, missing="zero")
    full = tidy_table(frame.fillna(0.0), missing="zero")
    assert gappy.notes == full.notes == (left_out_note(("t",)),)


def test_the_old_spelling_dropna_is_missing_zero(messy):
    old, _ = _api(dp_pc_dir, messy, k=2, eps=1.0, delta=1e-5, dropna=True, random_state=0)
    new, _ = _api(dp_pc_dir, messy, k=2, eps=1.0, delta=1e-5, missing="zero", random_state=0)
    assert old.n == new.n == N
    np.testing.assert_array_equal(old.noisy_matrix, new.noisy_matrix)
    with pytest.raises(ValueError, match="missing must be 'refuse' or 'zero'"):
        dp_pc_dir(messy, eps=1.0, delta=1e-5, missing="drop")


def test_infinite_values_are_not_missing_values():
    frame = pd.DataFrame({"a": [1.0, np.inf, 2.0, 3.0], "b": [1.0, 2.0, np.nan, 4.0]})
    with pytest.raises(ValueError, match="infinite values \\(columns 'a'\\)"):
        _api(dp_pc_dir, frame, eps=1.0, delta=1e-3, missing="zero", random_state=0)


# ------------------------------------------------------------------ the same on every face


def test_directions_give_the_same_n_columns_and_notes_on_every_face(messy, csv_file, capsys):
    expected_notes = [left_out_note(("city", "g"))]
    res, api_notes = _api(
        dp_pc_dir,
        messy,
        k=2,
        eps=1.0,
        delta=1e-5,
        missing="zero",
        random_state=0,
        accuracy="ignore",
    )
    status, out, err = _cli(
        ["directions", str(csv_file), *PRIV, "--missing", "zero", "-k", "2", "--no-ledger"],
        capsys,
    )
    assert status == 0, err
    printed = pd.read_csv(io.StringIO(out))
    from dppca.app.data import numeric_columns

    sel = _app(messy, numeric_columns(messy), missing="zero")
    assert res.n == sel.n == N
    assert res.variables == tuple(printed["variable"]) == sel.columns == FEATURES
    assert api_notes == _cli_notes(err) == list(sel.notes) == expected_notes


def test_a_balanced_read_in_chunks_follows_the_same_rule(messy, csv_file, capsys):
    argv = ["directions", str(csv_file), *PRIV, "--missing", "zero", "-k", "2", "--no-ledger"]
    status, out, err = _cli([*argv, "--design", "balanced"], capsys)
    assert status == 0, err
    assert tuple(pd.read_csv(io.StringIO(out))["variable"]) == FEATURES
    assert _cli_notes(err) == [left_out_note(("city", "g"))]
    # the noise of n = N rows (every row read), not of the complete rows
    plan = plan_pc_dir(N, len(FEATURES), 2, eps=1.0, delta=1e-5, design="balanced")
    assert f"sigma={plan.sigma:.4g}" in err


def test_scores_with_groups_agree_on_every_face(messy, csv_file, capsys):
    expected_notes = [left_out_note(("city",))]
    res, api_notes = _api(
        dp_score,
        messy,
        eps=1.0,
        delta=1e-5,
        groups="g",
        groups_public=True,
        bins=4,
        missing="zero",
        random_state=0,
        accuracy="ignore",
    )
    status, _, err = _cli(
        [
            "score",
            str(csv_file),
            *PRIV,
            "--groups",
            "g",
            "--groups-public",
            "--bins",
            "4",
            "--missing",
            "zero",
            "--no-ledger",
        ],
        capsys,
    )
    assert status == 0, err
    sel = _app(messy, list(FEATURES), group="g", groups_public=True, missing="zero")
    assert res.n == sel.n == N
    assert res.variables == sel.columns == FEATURES
    assert api_notes == _cli_notes(err) == list(sel.notes) == expected_notes
    # Every row keeps its label: public group sizes are those of the table as read.
    sizes = messy["g"].value_counts()
    assert dict(zip(res.groups, res.group_sizes, strict=True)) == {
        "a": sizes["a"],
        "b": sizes["b"],
    }
    assert list(sel.groups) == list(messy["g"])
    assert f"a={sizes['a']}" in err


def test_a_missing_group_label_drops_no_row(messy):
    frame = messy.copy()
    frame.loc[[0, 1, 2], "g"] = None
    res, _ = _api(
        dp_score,
        frame,
        eps=1.0,
        delta=1e-5,
        groups="g",
        group_labels=["a", "b"],
        groups_public=True,
        bins=4,
        missing="zero",
        random_state=0,
        accuracy="ignore",
    )
    assert res.n == N  # the rows without a label are kept, in no group
    assert sum(res.group_sizes) == frame["g"].notna().sum()
    sel = _app(frame, list(FEATURES), group="g", group_labels="a,b", missing="zero")
    assert sel.n == N


def test_the_report_and_the_estimator_follow_the_rule(messy, tmp_path):
    from dppca import report

    rep, notes = _api(
        report,
        messy,
        eps=2.0,
        delta=1e-5,
        groups="g",
        groups_public=True,
        missing="zero",
        random_state=0,
        accuracy="ignore",
    )
    assert rep.directions.n == N and rep.directions.variables == FEATURES
    assert notes == [left_out_note(("city",))]
    assert all(note in rep.notes for note in notes)  # shown on the page as well
    pytest.importorskip("sklearn")
    from dppca import DPPCA

    est, est_notes = _api(
        DPPCA(n_components=2, eps=1.0, random_state=0, missing="zero").fit,
        messy.drop(columns="g"),
    )
    assert est.directions_.n == N
    assert tuple(est.feature_names_in_) == FEATURES
    assert est_notes == [left_out_note(("city",))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the transform's privacy warning
        scores = est.transform(messy.drop(columns="g").drop(index=list(GAPS)))
    assert scores.shape == (COMPLETE, 2)


# ------------------------------------------------------------------ refusal


def test_missing_values_are_refused_naming_each_face_option(messy, csv_file, capsys):
    budget = Budget(5.0, 1e-4)
    with pytest.raises(ValueError, match=r"'x2'.*pass missing='zero'"):
        _api(dp_pc_dir, messy, eps=1.0, delta=1e-5, budget=budget, random_state=0)
    assert budget.spent == (0.0, 0.0)  # refused before anything is spent
    status, _, err = _cli(["directions", str(csv_file), *PRIV, "--no-ledger"], capsys)
    assert status == 2
    assert "'x2'" in err and "pass --missing zero" in err
    from dppca.app.data import MISSING_BOX, DataError

    with pytest.raises(DataError, match=f"'x2'.*tick '{re.escape(MISSING_BOX)}'"):
        _app(messy, list(FEATURES))


def test_with_missing_zero_the_plan_prices_every_row_and_charges_once(messy):
    budget = Budget(5.0, 1e-4)
    res, _ = _api(
        dp_pc_dir,
        messy,
        k=2,
        eps=1.0,
        delta=1e-5,
        missing="zero",
        budget=budget,
        random_state=0,
        accuracy="ignore",
    )
    assert res.n == N
    plan = plan_pc_dir(N, len(FEATURES), 2, eps=1.0, delta=1e-5, accuracy="ignore")
    assert plan.cost == res.cost and plan.sigma == res.sigma
    assert len(budget.ledger) == 1 and budget.ledger[0] == res.cost  # charged once
    assert budget.spent == pytest.approx((res.cost.eps, res.cost.delta))


def test_the_ledger_keys_the_table_as_read(messy, csv_file, tmp_path, capsys):
    ledger_path = tmp_path / "ledger.sqlite"
    argv = ["directions", str(csv_file), *PRIV, "--missing", "zero", "--ledger", str(ledger_path)]
    argv += ["--budget-eps", "3", "--budget-delta", "1e-4"]  # room for both releases
    status, _, err = _cli(argv, capsys)
    assert status == 0, err
    fp = fingerprint(pd.read_csv(csv_file))  # all rows, the gaps included
    ledger = Ledger(ledger_path)
    assert ledger.spent(fp) == pytest.approx((1.0, 1e-5))  # charged once, on that key
    # Another column choice spends from the same budget; --dropna still works.
    again = ["directions", str(csv_file), *PRIV, "--dropna", "--ledger", str(ledger_path)]
    status, _, err = _cli([*again, "--columns", "x1,x3,flag"], capsys)
    assert status == 0, err
    assert ledger.spent(fp) == pytest.approx((2.0, 2e-5))


def test_a_flag_written_as_words_or_as_numbers_is_the_same_dataset(messy):
    as_numbers = messy.assign(flag=messy["flag"].astype(int))
    assert fingerprint(messy) == fingerprint(as_numbers)
    kw = {"eps": 1.0, "delta": 1e-5, "missing": "zero", "random_state": 3}
    res_words, _ = _api(dp_pc_dir, messy, **kw)
    res_numbers, _ = _api(dp_pc_dir, as_numbers, **kw)
    np.testing.assert_array_equal(res_words.noisy_matrix, res_numbers.noisy_matrix)


def test_a_parquet_round_trip_keeps_the_rule(messy, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    path = tmp_path / "messy.parquet"
    messy.to_parquet(path)
    back = pd.read_parquet(path)
    res, notes = _api(
        dp_pc_dir,
        back,
        k=2,
        eps=1.0,
        delta=1e-5,
        missing="zero",
        random_state=0,
        accuracy="ignore",
    )
    assert res.n == N and res.variables == FEATURES
    assert notes == [left_out_note(("city", "g"))]
    argv = ["directions", str(path), *PRIV, "-k", "2", "--no-ledger", "--design", "balanced"]
    status, _, err = _cli(argv, capsys)
    assert status == 2 and "pass --missing zero" in err
    status, out, err = _cli([*argv, "--missing", "zero"], capsys)
    assert status == 0, err
    assert tuple(pd.read_csv(io.StringIO(out))["variable"]) == FEATURES
    assert _cli_notes(err) == [left_out_note(("city", "g"))]


def test_the_app_session_refuses_gaps_then_analyses_them_when_asked(messy):
    from dppca.app.data import MISSING_BOX
    from dppca.app.state import AppState
    from dppca.app.views import load_message, same_selection

    state = AppState(random_state=np.random.default_rng(0))
    problem = state.load("messy.csv", messy)
    assert problem is not None and "'x2'" in problem and MISSING_BOX in problem
    assert state.selection is None and state.fingerprint == fingerprint(messy)
    sel = state.select(list(FEATURES), missing="zero")
    assert (sel.n, sel.columns, state.missing) == (N, FEATURES, "zero")
    state.load("messy.csv", messy)  # the checkbox stays ticked for the next table
    assert state.selection is not None and state.selection.n == N
    text = load_message(state, "messy.csv")
    assert "Left out non-numeric column(s) 'city', 'g'" in text
    assert "x2" not in text  # nothing about where the gaps are
    assert same_selection(state.selection, list(FEATURES), None, False, None, "zero")
    assert not same_selection(state.selection, list(FEATURES), None, False, None, "refuse")


def test_missing_zero_on_a_dask_collection_is_refused_with_the_way_out(messy):
    dd = pytest.importorskip("dask.dataframe")
    lazy = dd.from_pandas(messy[["x1", "x3"]], npartitions=2)
    with pytest.raises(ValueError, match=r"in-memory table.*compute the Dask collection"):
        dp_pc_dir(lazy, eps=1.0, delta=1e-5, missing="zero", random_state=0)


@pytest.mark.parametrize("blank", [slice(0, 9), slice(10, 19), slice(21, 29)])
def test_a_chunked_read_keeps_a_text_column_out_wherever_its_blanks_fall(tmp_path, blank):
    # pandas reads a column with no value in a chunk as numbers; the chunked
    # reader must still give the one-piece read's table, columns and notes.
    from dppca.core.reading import read_table_file

    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(30, 3)), columns=list("abc"))
    frame["note"] = "x"
    frame.loc[blank, "note"] = None
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    whole = read_table_file(path, None, chunksize=100)
    chunked = read_table_file(path, None, chunksize=7)
    assert chunked.variables == whole.variables == ("a", "b", "c")
    assert chunked.left_out == whole.left_out == ("note",)
    np.testing.assert_array_equal(chunked.data, whole.data)
    assert chunked.notes == whole.notes
