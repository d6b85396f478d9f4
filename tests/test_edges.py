"""Edge cases end with one clear exception, before any work (issue 14 items 3 and 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dppca import dp_loading, dp_pc_dir, dp_score, dp_scree, pc_dir
from dppca.app import figures
from dppca.app.data import DataError, read_csv_upload
from dppca.core.reading import check_csv_layout, read_csv_checked, sniff_csv_layout
from dppca.core.validation import MAX_REPEL_LABELS, check_sensitivity_work, repel_iterations


@pytest.mark.parametrize(
    ("eps", "delta", "match"),
    [
        (1e10, 1e-5, "eps must be in"),
        (1e7, 1e-5, "eps must be in"),
        (1e-310, 1e-5, "eps must be in"),
        (0.5, 1e-320, "delta must be at least"),
    ],
)
@pytest.mark.parametrize("calibration", ["analytic", "classic"])
def test_extreme_privacy_parameters_are_refused_up_front(
    small_data, eps, delta, match, calibration
):
    with pytest.raises(ValueError, match=match):
        dp_pc_dir(small_data, eps=eps, delta=delta, calibration=calibration, random_state=0)


@pytest.mark.parametrize("eps", [1e-6, 1e6])
def test_the_ends_of_the_eps_range_give_finite_results(small_data, eps):
    res = dp_pc_dir(small_data, eps=eps, delta=1e-300, calibration="analytic", random_state=0)
    assert np.isfinite(res.sigma) and np.isfinite(res.directions).all()


def test_noise_beyond_the_samplers_proof_is_refused_before_any_work(small_data):
    # eps = 1e-12 at delta 1e-300 asks for sigma above 2^40 times the sensitivity,
    # past what the hardened grid's proof covers: refused when the plan is priced.
    with pytest.raises(ValueError, match="eps is too small"):
        dp_pc_dir(small_data, eps=1e-12, delta=1e-300, calibration="analytic", random_state=0)


def test_nonprivate_directions_refuse_an_overflowing_matrix(small_data):
    X = small_data.copy()
    X[3, 1] = 1e300
    with pytest.raises(ValueError, match="infinite or NaN entries"):
        pc_dir(X)


def test_masked_arrays_are_refused(small_data):
    masked = np.ma.masked_array(small_data, mask=np.zeros_like(small_data, dtype=bool))
    with pytest.raises(TypeError, match="masked array"):
        dp_pc_dir(masked, eps=0.5, delta=1e-5)


def test_repeated_column_names_are_refused(small_frame):
    dup = small_frame.set_axis(["a", "b", "a", "d", "e"], axis=1)
    with pytest.raises(ValueError, match="repeated column names"):
        dp_loading(dup, eps=0.5, delta=1e-5)


def test_one_column_loading_says_what_is_missing(small_frame):
    with pytest.raises(ValueError, match="at least 2 columns"):
        dp_loading(small_frame[["a"]], eps=0.5, delta=1e-5)


@pytest.mark.parametrize("fn", [dp_pc_dir, dp_scree, dp_score])
def test_a_budget_that_is_not_a_budget_is_named(small_data, fn):
    with pytest.raises(TypeError, match=r"budget must be a dppca\.Budget"):
        fn(small_data, eps=0.5, delta=1e-5, budget={"eps": 1})


@pytest.mark.parametrize("bins", [10**6, (8, 10**6)])
def test_bins_are_capped(small_data, bins):
    with pytest.raises(ValueError, match="at most 1000"):
        dp_score(small_data, eps=0.5, delta=1e-5, bins=bins)


def test_noise_sensitivity_draws_are_bounded_by_memory(small_data):
    res = dp_loading(small_data, eps=0.5, delta=1e-5, random_state=0)
    check_sensitivity_work(10**6, 5)  # 25e6 numbers: allowed
    with pytest.raises(ValueError, match="draws must be at most"):
        check_sensitivity_work(10**6, 400)
    assert res.noise_sensitivity(10, random_state=0) is not None


def test_many_labels_are_not_pushed_apart():
    assert repel_iterations(MAX_REPEL_LABELS, 300) == 300
    assert repel_iterations(MAX_REPEL_LABELS + 1, 300) == 0


def test_a_loading_plot_of_many_variables_still_labels_them(rng):
    X = rng.normal(size=(60, 90))
    res = dp_loading(X, eps=0.5, delta=1e-5, random_state=0, ties="zero")
    ax = res.plot()
    assert sum(t.get_text().startswith("V") for t in ax.texts) == 90


EURO = "a;b;c\n" + "".join(f"{i},5;{i % 7},25;{(i * 3) % 11},0\n" for i in range(30))


def test_csv_layout_sniffing(tmp_path):
    euro = tmp_path / "eu.csv"
    euro.write_text(EURO)
    semi = tmp_path / "semi.csv"
    semi.write_text("a;b\n1.5;2\n3;4.25\n")
    plain = tmp_path / "plain.csv"
    plain.write_text('a,b\n1.5,2\n"x;y",3\n')
    assert sniff_csv_layout(euro) == (";", ",")
    assert sniff_csv_layout(semi) == (";", ".")
    assert sniff_csv_layout(plain) == (",", ".")
    with pytest.raises(ValueError, match="semicolon-separated with decimal commas"):
        check_csv_layout(euro)
    frame = read_csv_checked(euro, sep=";", decimal=",")
    assert frame["a"].dtype == np.float64 and frame.loc[0, "a"] == 0.5


def test_the_app_reads_a_european_csv_and_refuses_repeated_names(tmp_path):
    euro = tmp_path / "eu.csv"
    euro.write_text(EURO)
    assert read_csv_upload(euro)["b"].iloc[1] == 1.25
    dup = tmp_path / "dup.csv"
    dup.write_text("x,y,x\n1,2,3\n4,5,6\n")
    with pytest.raises(DataError, match="repeated column names"):
        read_csv_upload(dup)


def test_csv_downloads_escape_formula_cells():
    frame = pd.DataFrame(
        {"=cmd|' /C calc'!A0": [-1.5, 2.0], "label": ["+SUM(A1)", "ok"]},
        index=["@x", "y"],
    )
    text = figures.csv_text(frame)
    assert "'=cmd|" in text and "'+SUM(A1)" in text and "'@x" in text
    assert ",-1.5," in text  # numbers stay numbers
