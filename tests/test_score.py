"""Tests for dppca.score: private frame, DP histograms, groups, sampling."""

from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dppca import (
    AccuracyWarning,
    Budget,
    BudgetExceededError,
    PrivacyWarning,
    ScoreResult,
    dp_pc_dir,
    dp_score,
    pc_dir,
    sample_points,
)
from dppca.datasets import load_gau_g
from dppca.mechanisms import (
    gaussian_sigma,
    signed_log_bin,
    signed_log_edges,
    signed_quantile,
    stability_threshold,
)
from dppca.score import add_counts, bin_counts, bin_rule, frame_risk, sparse_counts

PUBLIC = np.eye(2)  # public directions for 2-column data: the scores are the columns


@pytest.fixture
def gauss2(rng: np.random.Generator) -> np.ndarray:
    return rng.normal(size=(5000, 2))


@pytest.fixture
def medium(rng: np.random.Generator) -> pd.DataFrame:
    """2000 rows: enough for a reliable private frame at eps around 0.5."""
    X = rng.normal(size=(2000, 5)) * np.array([3.0, 2.0, 1.0, 0.5, 0.25])
    return pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])


@pytest.fixture
def grouped(rng: np.random.Generator) -> pd.DataFrame:
    centres = np.array([[-6.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    labels = np.repeat(["b", "a", "c"], [1500, 1000, 500])
    codes = pd.Categorical(labels, categories=["b", "a", "c"]).codes
    X = centres[codes] + rng.normal(size=(3000, 2))
    frame = pd.DataFrame(X, columns=["x", "y"])
    frame["g"] = labels
    return frame


# --------------------------------------------------------------------------- mechanisms


def test_signed_log_bins_hold_their_values(rng: np.random.Generator) -> None:
    edges = signed_log_edges(50.0, 1.01)
    x = np.concatenate([rng.normal(scale=5, size=2000), [0.0, -50.0, 50.0, 1e-9, -1e-9]])
    b = signed_log_bin(x, 50.0, 1.01)
    assert np.all(x <= edges[b])
    assert np.all((b == 0) | (edges[np.maximum(b - 1, 0)] < x))
    # edges are symmetric and strictly increasing; fine near zero
    assert np.allclose(edges, -edges[::-1])
    assert np.all(np.diff(edges) > 0)
    assert edges[edges.size // 2 + 1] == pytest.approx(0.01)


@pytest.mark.parametrize("new_value", [1e9, -1e9, 0.0, 3.7])
def test_signed_quantile_cumulative_counts_move_by_at_most_one(
    rng: np.random.Generator, new_value: float
) -> None:
    bound, beta = 1e6, 1.001
    x = rng.normal(size=500)
    y = x.copy()
    y[17] = new_value
    n_bins = signed_log_edges(bound, beta).size
    cx = np.cumsum(np.bincount(signed_log_bin(x, bound, beta), minlength=n_bins))
    cy = np.cumsum(np.bincount(signed_log_bin(y, bound, beta), minlength=n_bins))
    diff = cy - cx
    assert np.abs(diff).max() <= 1
    assert np.all(diff >= 0) or np.all(diff <= 0)  # all in the same direction


def test_radius_scan_counts_move_by_at_most_one(rng: np.random.Generator) -> None:
    # The radius scan bins |s - c| (c is an earlier private output, fixed here)
    # geometrically from 0, as unbounded_quantile_upper does; one replaced row
    # changes one distance, so every cumulative count moves by at most one.
    beta, centre = 1.01, 0.3
    s = rng.normal(size=800)
    s2 = s.copy()
    s2[3] = -1e7

    def cumulative(values: np.ndarray) -> np.ndarray:
        r = np.abs(values - centre)
        b = np.floor(np.log(np.maximum(r + 1.0, beta)) / np.log(beta)).astype(int)
        return np.cumsum(np.bincount(b, minlength=3000))

    diff = cumulative(s2) - cumulative(s)
    assert np.abs(diff).max() <= 1
    assert np.all(diff >= 0) or np.all(diff <= 0)


def test_signed_quantile_is_accurate_at_large_eps(rng: np.random.Generator) -> None:
    x = rng.normal(loc=2.0, size=4000)
    gen = np.random.default_rng(5)
    est = signed_quantile(x, bound=1e6, beta=1.001, q=0.5, eps1=5.0, eps2=5.0, rng=gen)
    # At eps 5 the rank error is a few counts: the estimate is within
    # the empirical 0.45..0.55 quantiles.
    lo, hi = np.quantile(x, [0.45, 0.55])
    assert lo <= est <= hi


def test_stability_threshold_leaks_exactly_delta() -> None:
    eps, delta = 0.7, 1e-6
    t = stability_threshold(eps, delta)
    # a one-record bin passes when 1 + Lap(2/eps) >= t
    assert stats.laplace.sf(t - 1, scale=2 / eps) == pytest.approx(delta, rel=1e-9)


# --------------------------------------------------------------------------- counts


@pytest.mark.parametrize("grouped_case", [False, True])
def test_bin_counts_replace_one_row_sensitivity(
    rng: np.random.Generator, grouped_case: bool
) -> None:
    scores = rng.normal(size=(400, 2)) * 3
    x_edges, y_edges = np.linspace(-4, 4, 7), np.linspace(-3, 5, 6)
    codes = rng.integers(0, 3, size=400) if grouped_case else None
    G = 3 if grouped_case else 1
    base = bin_counts(scores, x_edges, y_edges, codes, G)
    assert base.sum() == 400  # outside points are clamped, never dropped
    for i, new in [(0, (100.0, -100.0)), (5, (0.0, 0.0)), (9, (-4.0, 5.0))]:
        s2 = scores.copy()
        s2[i] = new
        c2 = None
        if grouped_case:
            c2 = codes.copy()
            c2[i] = (codes[i] + 1) % 3  # the row also changes group
        diff = (bin_counts(s2, x_edges, y_edges, c2, G) - base).ravel()
        assert np.abs(diff).sum() <= 2
        assert np.sqrt((diff**2).sum()) <= math.sqrt(2) + 1e-12


def test_bin_edges_are_right_closed_and_outside_points_clamped() -> None:
    edges = np.array([0.0, 1.0, 2.0])
    scores = np.array([[0.0, 0.0], [1.0, 1.0], [1.5, 2.0], [-9.0, 9.0], [9.0, -9.0]])
    counts = bin_counts(scores, edges, edges).reshape(2, 2)  # [y, x]
    assert counts[0, 0] == 2  # 0 (first bin closed) and 1 (right-closed)
    assert counts[1, 1] == 1
    assert counts[1, 0] == 1  # (-9, 9) -> first x bin, last y bin
    assert counts[0, 1] == 1  # (9, -9) -> last x bin, first y bin


def test_add_noise_matches_stated_sigma() -> None:
    counts = np.full((1, 4000), 10**6)  # far from zero: clipping never acts
    sigma = 3.5
    noise = add_counts(counts, sigma, np.random.default_rng(1)).ravel() - 10**6
    m = noise.size
    # sum(noise^2) / sigma^2 ~ chi2(m): accept the central 1 - 1e-6 interval
    lo, hi = stats.chi2.ppf([5e-7, 1 - 5e-7], df=m)
    assert lo <= (noise**2).sum() / sigma**2 <= hi


def test_sparse_noise_matches_stated_scale_and_threshold() -> None:
    counts = np.zeros((2, 3000), dtype=np.int64)
    counts[:, ::2] = 10**6
    scale, threshold = 4.0, 50.0
    out = sparse_counts(counts, scale, threshold, np.random.default_rng(2))
    assert np.all(out[:, 1::2] == 0)  # empty cells never appear
    noise = out[:, ::2].ravel() - 10**6
    m = noise.size
    # |Lap(b)| ~ Exp(b): sum |noise| ~ Gamma(m, b); central 1 - 1e-6 interval
    lo, hi = stats.gamma.ppf([5e-7, 1 - 5e-7], a=m, scale=scale)
    assert lo <= np.abs(noise).sum() <= hi
    small = np.array([[1, 2, 40, 60]])
    kept = sparse_counts(small, 1e-9, threshold, np.random.default_rng(3))
    assert np.array_equal(kept > 0, small >= threshold)


# --------------------------------------------------------------------------- dp_score


def test_dp_score_result_shape_and_probabilities(gauss2: np.ndarray) -> None:
    res = dp_score(
        gauss2, eps=0.8, delta=1e-5, bins=(6, 4), method=["add", "sparse"],
        directions=PUBLIC, random_state=0,
    )  # fmt: skip
    assert isinstance(res, ScoreResult)
    assert res.bins == (6, 4)
    assert res.methods == ("add", "sparse")
    for m in res.methods:
        prob = res.probs[m]
        assert prob.shape == (1, 24)
        assert np.all(prob >= 0)
        assert prob.sum() == pytest.approx(1.0)
        table = res.table(m)
        assert list(table.columns) == ["xmin", "xmax", "ymin", "ymax", "prob"]
        assert len(table) == 24
        # x varies fastest; the table follows the grid edges
        assert np.array_equal(table["xmin"].to_numpy()[:6], res.x_edges[:-1])
        assert np.array_equal(table["ymin"].to_numpy()[::6], res.y_edges[:-1])
        assert table["xmin"].min() == res.xlim[0] and table["xmax"].max() == res.xlim[1]
        assert table["ymin"].min() == res.ylim[0] and table["ymax"].max() == res.ylim[1]
    assert res.nonprivate is None
    assert res.private is True
    assert "ScoreResult(n=5000" in repr(res)
    with pytest.raises(ValueError):
        res.probs["add"][0, 0] = 1.0
    assert isinstance(res.probs, MappingProxyType)


def test_frame_covers_most_of_gaussian_mass(gauss2: np.ndarray) -> None:
    res = dp_score(
        gauss2, eps=2.0, delta=1e-5, directions=PUBLIC,
        split={"frame": 1.0, "histogram": 1.0}, calibration="analytic", random_state=3,
    )  # fmt: skip
    # eps_f = 1, so each scan has eps2 = 1/8. Over the B = 2777 public bins a
    # scan stops d ranks short with probability <= B exp(-d/8) < 1e-6 for
    # d = 174 (3.5 % of n). So the median is within the 0.465..0.535 quantiles
    # (|c| < 0.09) and the radius is at least the 0.96 quantile of |x - c|
    # (>= 1.96, minus 1 % for the bin width); inflated by 1.2 the frame covers
    # |x| <= 2.24 on each axis, mass >= 1 - 2 * 0.025 = 0.95 for both axes.
    s = gauss2
    inside = (
        (s[:, 0] >= res.xlim[0]) & (s[:, 0] <= res.xlim[1])
        & (s[:, 1] >= res.ylim[0]) & (s[:, 1] <= res.ylim[1])
    )  # fmt: skip
    assert inside.mean() >= 0.95
    # ... and is not absurdly wide. Past the largest |x - c| (< 4.5) the radius
    # scan goes on only while every fresh Exp noise stays below E0 - 25, with E0
    # the target noise (mean 8): P(E0 > 25) = exp(-25/8) = 0.044, and with
    # U = exp(-(E0 - 25)/8) uniform, 70 more bins (radius x 2) all fail with
    # probability E[(1 - U)^70] = 1/71; both axes: <= 2 * 0.044 / 71 = 1.2e-3.
    assert max(abs(v) for v in (*res.xlim, *res.ylim)) < 1.2 * 9 + 0.1


def test_frame_follows_translation(gauss2: np.ndarray) -> None:
    shifted = gauss2 + np.array([100.0, -40.0])
    a = dp_score(gauss2, eps=1.0, delta=1e-5, directions=PUBLIC, random_state=4)
    b = dp_score(shifted, eps=1.0, delta=1e-5, directions=PUBLIC, random_state=4)
    # No centering: the frame follows the data (the medians carry the shift).
    # The median bins are 1 % of the value wide (1.0 near 100, 0.4 near -40,
    # 0.01 near 0), plus a rank error of well under 0.1 in score units here.
    assert np.mean(b.xlim) == pytest.approx(np.mean(a.xlim) + 100.0, abs=1.2)
    assert np.mean(b.ylim) == pytest.approx(np.mean(a.ylim) - 40.0, abs=0.6)


def test_same_seed_same_output_and_different_seed_differs(medium: pd.DataFrame) -> None:
    kw = {"eps": 0.9, "delta": 1e-5, "method": ["add", "sparse"], "bins": 5}
    a = dp_score(medium, random_state=11, **kw)
    b = dp_score(medium, random_state=11, **kw)
    c = dp_score(medium, random_state=12, **kw)
    assert a.xlim == b.xlim and a.ylim == b.ylim
    for m in a.methods:
        assert np.array_equal(a.probs[m], b.probs[m])
    assert np.array_equal(a.directions, b.directions)
    assert not np.array_equal(a.probs["add"], c.probs["add"])


def test_cost_is_the_full_composed_total(medium: pd.DataFrame) -> None:
    res = dp_score(medium, eps=0.9, delta=1e-5, method=["add", "sparse"], random_state=0)
    assert res.cost.eps == pytest.approx(0.9)
    assert res.cost.delta == pytest.approx(1e-5)
    table = res.cost.to_frame()
    assert len(table) == 1 + 4 + 2  # directions, four quantiles, two histograms
    # default split 0.2 / 0.2 / 0.6; the histogram share is split between methods
    hist = table[table["released"].str.contains("histogram")]
    assert np.allclose(hist["eps"], 0.9 * 0.6 / 2)
    assert np.allclose(hist["delta"], 1e-5 * 0.75 / 2)  # delta shares in proportion 0.2:0.6
    frame = table[table["released"].str.startswith("frame")]
    assert np.allclose(frame["eps"], 0.9 * 0.2 / 4) and np.all(frame["delta"] == 0)
    assert res.noise["add"]["sigma"] == pytest.approx(
        gaussian_sigma(math.sqrt(2), 0.9 * 0.3, 1e-5 * 0.375)
    )
    assert res.noise["sparse"]["scale"] == pytest.approx(2 / 0.27)
    assert res.noise["sparse"]["threshold"] == pytest.approx(
        stability_threshold(0.27, 1e-5 * 0.375)
    )
    assert res.directions_source == "private"
    assert res.directions_result is not None and res.directions_result.private


def test_custom_split_is_normalised(medium: pd.DataFrame) -> None:
    res = dp_score(
        medium, eps=0.5, delta=1e-6,
        split={"directions": 1, "frame": 1, "histogram": 2}, random_state=0,
    )  # fmt: skip
    eps = res.cost.to_frame().groupby(lambda i: i < 1)["eps"].sum()
    assert eps[True] == pytest.approx(0.125)  # directions
    assert res.cost.eps == pytest.approx(0.5)
    with pytest.raises(ValueError, match="split keys"):
        dp_score(medium, eps=0.5, delta=1e-6, split={"scree": 1.0})
    with pytest.raises(ValueError, match="split"):
        dp_score(medium, eps=0.5, delta=1e-6, split={"frame": -1.0})


def test_budget_is_checked_before_and_spent_after(medium: pd.DataFrame) -> None:
    budget = Budget(eps=1.0, delta=1e-5)
    dp_score(medium, eps=0.6, delta=5e-6, random_state=0, budget=budget)
    assert budget.spent[0] == pytest.approx(0.6)
    with pytest.raises(BudgetExceededError):
        dp_score(medium, eps=0.6, delta=5e-6, random_state=0, budget=budget)
    assert len(budget.ledger) == 1  # the refused call spent nothing


def test_given_private_directions_cost_nothing_more(medium: pd.DataFrame) -> None:
    dirs = dp_pc_dir(medium, 3, eps=0.5, delta=1e-6, random_state=1)
    res = dp_score(medium, eps=0.4, delta=1e-6, components=(1, 3), directions=dirs, random_state=2)
    assert res.directions_source == "private release"
    assert res.directions_result is dirs
    assert np.array_equal(res.directions, dirs.directions[:, [0, 2]])
    assert not any("Kendall" in r for r in res.cost.to_frame()["released"])
    assert res.cost.eps == pytest.approx(0.4)
    assert res.pc_labels == ("PC1", "PC3")


def test_public_directions_and_refused_nonprivate_ones(medium: pd.DataFrame) -> None:
    res = dp_score(medium, eps=0.4, delta=1e-6, directions=np.eye(5), random_state=0)
    assert res.directions_source == "public" and res.directions_result is None
    with pytest.raises(ValueError, match="non-private"):
        dp_score(medium, eps=0.4, delta=1e-6, directions=pc_dir(medium))
    with pytest.raises(ValueError, match="one row per variable"):
        dp_score(medium, eps=0.4, delta=1e-6, directions=np.eye(4))
    with pytest.raises(ValueError, match="PC3"):
        dp_score(medium, eps=0.4, delta=1e-6, directions=np.eye(5)[:, :2],
                 components=(1, 3))  # fmt: skip


def test_private_result_holds_nothing_row_level(gauss2: np.ndarray) -> None:
    res = dp_score(
        gauss2, eps=1.0, delta=1e-5, directions=PUBLIC, method=["add", "sparse"],
        random_state=0,
    )  # fmt: skip
    for f in dataclasses.fields(res):
        value = getattr(res, f.name)
        values = value.values() if isinstance(value, MappingProxyType) else [value]
        for v in values:
            if isinstance(v, np.ndarray):
                assert gauss2.shape[0] not in v.shape, f.name  # no per-row array anywhere


def test_compare_adds_marked_nonprivate_part(gauss2: np.ndarray) -> None:
    res = dp_score(gauss2, eps=1.0, delta=1e-5, directions=PUBLIC, compare=True, random_state=0)
    np_part = res.nonprivate
    assert np_part is not None and np_part.private is False
    assert np.array_equal(np_part.scores, gauss2)
    assert np_part.prob.sum() == pytest.approx(1.0)
    assert "non-private" in repr(np_part)
    # the private part does not depend on compare
    plain = dp_score(gauss2, eps=1.0, delta=1e-5, directions=PUBLIC, random_state=0)
    assert np.array_equal(plain.probs["add"], res.probs["add"])


def test_bins_none_uses_the_n_rule(small_data: np.ndarray) -> None:
    box = ((-10.0, 10.0), (-10.0, 10.0))
    res = dp_score(small_data, eps=0.5, delta=1e-5, frame=box, random_state=0)
    assert res.bins == (bin_rule(200), bin_rule(200)) == (4, 4)
    assert bin_rule(5000, "J") == round((5000 / math.log(5000)) ** (1 / 3))
    res = dp_score(small_data, eps=0.5, delta=1e-5, bins="J", frame=box, random_state=0)
    assert res.bins == (bin_rule(200, "J"),) * 2


def test_all_zero_sparse_histogram_is_documented_case(small_data: np.ndarray) -> None:
    # 200 rows and a tiny budget: every noisy count is below the threshold
    box = ((-10.0, 10.0), (-10.0, 10.0))
    res = dp_score(
        small_data, eps=0.05, delta=1e-8, method="sparse", bins=20, frame=box, random_state=0
    )
    assert np.all(res.probs["sparse"] == 0)
    with pytest.raises(ValueError, match="all zero"):
        sample_points(res)


def test_classic_calibration_warns_above_one(medium: pd.DataFrame) -> None:
    with pytest.warns(PrivacyWarning, match="analytic"):
        dp_score(medium, eps=4.0, delta=1e-5, random_state=0)
    res = dp_score(medium, eps=4.0, delta=1e-5, calibration="analytic", random_state=0)
    assert res.noise["add"]["sigma"] < gaussian_sigma(math.sqrt(2), 2.4, 7.5e-6, "analytic") * 1.01


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"eps": -1.0}, ValueError, "eps"),
        ({"delta": 1.0}, ValueError, "delta"),
        ({"method": "kde"}, ValueError, "method"),
        ({"method": []}, TypeError, "method"),
        ({"bins": 0}, ValueError, "bins"),
        ({"bins": (3, 4, 5)}, TypeError, "bins"),
        ({"bins": "X"}, ValueError, "rule"),
        ({"components": (1, 1)}, ValueError, "components"),
        ({"components": (1, 9)}, ValueError, "components"),
        ({"score_range": 0.0}, ValueError, "score_range"),
        ({"frame_level": 1.0}, ValueError, "frame_level"),
        ({"inflate": -0.1}, ValueError, "inflate"),
        ({"groups": np.zeros(3)}, ValueError, "one label per row"),
        ({"groups": "g"}, TypeError, "DataFrame"),
    ],
)
def test_invalid_arguments_are_refused(small_data: np.ndarray, kwargs, exc, match) -> None:
    args = {"eps": 0.5, "delta": 1e-5, **kwargs}
    with pytest.raises(exc, match=match):
        dp_score(small_data, **args)


def test_public_frame_costs_nothing_and_is_used(medium: pd.DataFrame) -> None:
    box = ((-7.0, 9.0), (-3.0, 5.0))
    res = dp_score(medium, eps=0.5, delta=1e-5, frame=box, bins=(4, 2), random_state=0)
    assert (res.xlim, res.ylim) == box and res.frame_source == "public"
    assert np.array_equal(res.x_edges, [-7.0, -3.0, 1.0, 5.0, 9.0])
    assert not any(r.startswith("frame") for r in res.cost.to_frame()["released"])
    assert res.cost.eps == pytest.approx(0.5)
    with pytest.raises(ValueError, match="min < max"):
        dp_score(medium, eps=0.5, delta=1e-5, frame=((1.0, 0.0), (0.0, 1.0)))
    with pytest.raises(TypeError, match="frame"):
        dp_score(medium, eps=0.5, delta=1e-5, frame=(1.0, 2.0))


def test_small_n_and_eps_warn_that_the_frame_is_unreliable(small_data: np.ndarray) -> None:
    # n = 200, eps_frame = 0.1: 2 B exp(-eps n / 16) is far above 0.05
    assert frame_risk(200, 0.1, 1e6) == 1.0
    # n = 5000, eps_frame = 0.2: 4 B exp(-1000 / 16) < 1e-23, and each radius passes
    # 162 bins beyond the data with probability exp(-1) 1.5 B(1.5, 163) < 2.4e-4
    assert 2.0e-4 < frame_risk(5000, 0.2, 1e6) < 2 * 2.4e-4
    with pytest.warns(AccuracyWarning, match="frame"):
        dp_score(small_data, eps=0.5, delta=1e-5, random_state=0)


# --------------------------------------------------------------------------- groups


def test_groups_from_a_column_private_sizes(grouped: pd.DataFrame) -> None:
    res = dp_score(grouped, eps=1.0, delta=1e-5, groups="g", random_state=0, compare=True)
    assert res.groups == ("a", "b", "c")  # sorted, not first appearance
    assert res.directions.shape == (2, 2)  # the label column was removed
    assert res.groups_public is False
    assert res.probs["add"].shape == (3, res.bins[0] * res.bins[1])
    assert np.allclose(res.probs["add"].sum(axis=1), 1.0)
    sizes = res.cost.to_frame()
    row = sizes[sizes["released"].str.startswith("group sizes")]
    assert len(row) == 1 and row["eps"].iloc[0] == pytest.approx(0.1)
    # Laplace(2 / 0.1): |noise| <= 20 ln(1e6) = 276 with probability 1 - 1e-6 each
    assert np.all(np.abs(res.group_sizes - [1000, 1500, 500]) <= 20 * math.log(1e6))
    assert np.array_equal(res.nonprivate.group_sizes, [1000, 1500, 500])
    frame = res.to_frame()
    assert set(frame["group"]) == {"a", "b", "c"}
    assert len(frame) == 3 * res.bins[0] * res.bins[1]
    with pytest.raises(ValueError, match="group"):
        res.table("add")


def test_public_groups_use_exact_sizes_at_no_cost(grouped: pd.DataFrame) -> None:
    labels = grouped["g"].to_numpy()
    X = grouped[["x", "y"]]
    res = dp_score(X, eps=1.0, delta=1e-5, groups=labels, groups_public=True, random_state=0)
    assert np.array_equal(res.group_sizes, [1000, 1500, 500])
    assert not any(r.startswith("group sizes") for r in res.cost.to_frame()["released"])
    assert res.cost.eps == pytest.approx(1.0)


def test_groups_with_missing_labels_are_refused(grouped: pd.DataFrame) -> None:
    labels = grouped["g"].to_numpy().copy()
    labels[3] = None
    with pytest.raises(ValueError, match="missing"):
        dp_score(grouped[["x", "y"]], eps=1.0, delta=1e-5, groups=labels)


def test_gau_g_groups_separate_in_private_histogram() -> None:
    data = load_gau_g()
    res = dp_score(data, eps=1.0, delta=1e-5, groups="group", method="sparse", random_state=0)
    # group2 (mean 5 on V1-V5) sits away from group3 (mean -3 on V1-V5):
    # their private histogram means must be far apart on PC1.
    table = {g: res.table("sparse", g) for g in ("group2", "group3")}
    centre = {g: float(((t["xmin"] + t["xmax"]) / 2 * t["prob"]).sum()) for g, t in table.items()}
    assert abs(centre["group2"] - centre["group3"]) > 10


# --------------------------------------------------------------------------- sampling


def test_sample_points_shapes_and_group_allocation(grouped: pd.DataFrame) -> None:
    res = dp_score(grouped, eps=1.0, delta=1e-5, groups="g", groups_public=True, random_state=0)
    pts = sample_points(res, size=601, random_state=1)
    assert list(pts.columns) == ["PC1", "PC2", "group"]
    # largest remainder on 1000:1500:500 of 601 -> 200.33, 300.5, 100.17
    assert pts["group"].value_counts().to_dict() == {"a": 200, "b": 301, "c": 100}
    again = sample_points(res, size=601, random_state=1)
    assert pts.equals(again)


def test_sample_center_without_jitter_hits_bin_centres(gauss2: np.ndarray) -> None:
    res = dp_score(gauss2, eps=1.0, delta=1e-5, directions=PUBLIC, bins=4, random_state=0)
    pts = sample_points(res, size=500, kind="center", bandwidth=0.0, random_state=2)
    xc = (res.x_edges[:-1] + res.x_edges[1:]) / 2
    yc = (res.y_edges[:-1] + res.y_edges[1:]) / 2
    assert np.all(np.isin(pts["PC1"], xc)) and np.all(np.isin(pts["PC2"], yc))
    # bins with probability 0 are never drawn
    prob = res.probs["add"][0].reshape(4, 4)
    jx = np.searchsorted(xc, pts["PC1"])
    jy = np.searchsorted(yc, pts["PC2"])
    assert np.all(prob[jy, jx] > 0)


def test_sample_uniform_without_jitter_stays_in_frame(gauss2: np.ndarray) -> None:
    res = dp_score(gauss2, eps=1.0, delta=1e-5, directions=PUBLIC, random_state=0)
    pts = res.sample(size=300, bandwidth=0.0, random_state=3).to_numpy()
    assert np.all((pts[:, 0] >= res.xlim[0]) & (pts[:, 0] <= res.xlim[1]))
    assert np.all((pts[:, 1] >= res.ylim[0]) & (pts[:, 1] <= res.ylim[1]))
    assert len(res.sample(random_state=0)) == res.n


def test_sample_points_refuses_bad_arguments(gauss2: np.ndarray) -> None:
    res = dp_score(gauss2, eps=1.0, delta=1e-5, directions=PUBLIC, random_state=0)
    with pytest.raises(ValueError, match="kind"):
        sample_points(res, kind="kde")
    with pytest.raises(ValueError, match="method"):
        sample_points(res, method="sparse")
    with pytest.raises(ValueError, match="bandwidth"):
        sample_points(res, bandwidth=-1.0)
    with pytest.raises(TypeError, match="ScoreResult"):
        sample_points(gauss2)
    zero = dataclasses.replace(res, probs=MappingProxyType({"add": np.zeros((1, 64))}))
    with pytest.raises(ValueError, match="all zero"):
        zero.sample()


def test_private_frame_rarely_runs_far_past_the_data() -> None:
    from dppca.score import private_frame

    # n = 2000 Gaussian scores (sd 100), frame eps 0.2, inflate 0. A radius is absurd
    # when r + 1 > 5 (d + 1), d = max |s - c|: its scan passed >= 161 geometric bins
    # (1.01^161.7 = 5) beyond the data. That needs the noisy target above n, with
    # probability exp(-eps1 n (1 - level)) = exp(-1) at the capped level, and then 161
    # unstopped bins, probability r B(r, 162) with r = eps1 / eps2 = 1.5. Per frame
    # 2 exp(-1) 1.5 B(1.5, 162) = 4.7e-4; over 2000 frames the count is at most
    # Poisson(0.95) and P(count >= 7) < 1e-4. (Equal shares at the full level gave
    # 2 exp(-0.25) / 162 per frame: Poisson(19), P(count <= 6) < 5e-4.)
    rng = np.random.default_rng(11)
    s = rng.standard_normal((2000, 2)) * 100.0
    absurd = 0
    for _ in range(2000):
        xlim, ylim = private_frame(s, eps=0.2, bound=1e6, level=0.995, inflate=0.0, rng=rng)
        for a, lim in enumerate((xlim, ylim)):
            c, r = (lim[0] + lim[1]) / 2, (lim[1] - lim[0]) / 2
            absurd += r + 1 > 5 * (np.abs(s[:, a] - c).max() + 1)
    assert absurd <= 6
