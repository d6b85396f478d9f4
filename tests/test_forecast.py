"""Tests of the data-free plans and forecasts, public bounds and the guards (issue 10)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from dppca import (
    AccuracyWarning,
    Budget,
    ClippedControl,
    InaccurateReleaseError,
    ScoreSplit,
    ScreeSplit,
    dp_pc_dir,
    dp_score,
    dp_scree,
    plan_pc_dir,
    plan_score,
    plan_scree,
)
from dppca.datasets import load_gau, load_wine
from dppca.releases.forecast import CLIP_RATIO, Forecast, direction_noise_norm, em_failure_bound
from dppca.releases.score.frame import frame_failure_bound


def _leaves(cost):
    return [(leaf.released, leaf.mechanism, leaf.eps, leaf.delta) for leaf in cost.leaves()]


def _same_cost(a, b):
    assert len(a.leaves()) == len(b.leaves())
    for x, y in zip(_leaves(a), _leaves(b), strict=True):
        assert x[:2] == y[:2]
        assert x[2] == pytest.approx(y[2], rel=1e-12) and x[3] == pytest.approx(y[3], rel=1e-12)


@pytest.fixture
def table(rng):
    X = rng.normal(size=(600, 6)) * [4.0, 2.0, 1.0, 1.0, 0.5, 0.5] + 10.0
    return pd.DataFrame(X, columns=[f"V{j + 1}" for j in range(6)])


# --------------------------------------------------------------------------- plans


def test_directions_plan_is_what_the_release_records(table):
    plan = plan_pc_dir(600, 6, eps=0.7, delta=1e-6)
    res = dp_pc_dir(table, eps=0.7, delta=1e-6, random_state=0)
    _same_cost(plan.cost, res.cost)
    assert plan.sigma == res.sigma and plan.forecast.quantities == res.forecast.quantities


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"method": ["clipped", "pmwm", "huber"]},
        {"control": ClippedControl(clip=50.0)},
        {"split": ScreeSplit(directions=0.3, clip=0.2)},
        {"pairing": "random"},
        {"bounds": (-20.0, 40.0)},
    ],
)
def test_scree_plan_is_what_the_release_records(table, options):
    plan = plan_scree(600, 6, 3, eps=0.9, delta=1e-6, **options)
    res = dp_scree(table, 3, eps=0.9, delta=1e-6, random_state=0, **options)
    _same_cost(plan.cost, res.cost)
    assert dict(plan.forecast.quantities) == dict(res.forecast.quantities)


def test_scree_plan_with_given_directions_has_no_direction_part(table):
    V = np.linalg.qr(np.random.default_rng(1).normal(size=(6, 2)))[0]
    plan = plan_scree(600, 6, 2, eps=0.9, delta=1e-6, directions_given=True)
    res = dp_scree(table, 2, eps=0.9, delta=1e-6, directions=V, random_state=0)
    _same_cost(plan.cost, res.cost)
    assert not any("Kendall" in leaf.released for leaf in plan.cost.leaves())


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"method": ["add", "sparse"], "bins": 5},
        {"bounds_given": True},
        {"frame_given": True, "split": ScoreSplit(directions=1, histogram=3)},
    ],
)
def test_score_plan_is_what_the_release_records(table, options):
    kwargs = dict(options)
    run = {k: v for k, v in kwargs.items() if k not in ("bounds_given", "frame_given")}
    if kwargs.get("bounds_given"):
        run["bounds"] = (-20.0, 40.0)
    if kwargs.get("frame_given"):
        run["frame"] = ((-50.0, 50.0), (-50.0, 50.0))
    plan = plan_score(600, 6, eps=0.9, delta=1e-6, **kwargs)
    res = dp_score(table, eps=0.9, delta=1e-6, random_state=0, **run)
    _same_cost(plan.cost, res.cost)
    assert dict(plan.forecast.quantities) == pytest.approx(dict(res.forecast.quantities))


def test_score_plan_with_groups(table, rng):
    labels = rng.choice(["a", "b", "c"], size=600)
    plan = plan_score(600, 6, eps=1.0, delta=1e-6, groups=3)
    res = dp_score(table.assign(g=labels), eps=1.0, delta=1e-6, groups="g", random_state=0)
    _same_cost(plan.cost, res.cost)


# --------------------------------------------------------------------------- forecasts


def test_small_real_table_at_eps_one_is_forecast_inaccurate_and_gau_is_not():
    assert not plan_scree(178, 13, 3, eps=1.0, delta=1e-6).forecast.ok
    assert not plan_score(178, 13, eps=1.0, delta=1e-6).forecast.ok
    assert plan_scree(5000, 20, 3, eps=1.0, delta=1e-6).forecast.ok
    assert plan_score(5000, 20, eps=1.0, delta=1e-6).forecast.ok
    # public bounds make the frame free: no frame problem is left
    bounded = plan_score(5000, 20, eps=1.0, delta=1e-6, bounds_given=True).forecast
    assert "frame_failure" not in bounded.quantities


def test_forecast_quantities_follow_their_definitions():
    plan = plan_scree(2000, 10, 3, eps=1.0, delta=1e-6)
    q = plan.forecast.quantities
    # K-norm noise on the all-pairs moments: Laplace scale b = 4 C / (n eps_m)
    # conditioned on the polytope, sd b sqrt(d (2d + 1) / ((d + 1) (d + 2))) with
    # d = k + 1 = 4 values; C = CLIP_RATIO * trace at the level 0.9, grown by
    # sqrt(0.1 / (1 - level)) for a higher level
    leaf = next(leaf for leaf in plan.cost.leaves() if leaf.released.startswith("clipped"))
    assert leaf.mechanism.startswith("K-norm")
    ratio = CLIP_RATIO * math.sqrt(max(1.0, 0.1 / (1.0 - plan.scan_level)))
    expected = 4.0 / (2000 * leaf.eps) * math.sqrt(4 * 9 / (5 * 6)) * ratio
    assert q["trace_noise_relative"] == pytest.approx(expected)
    # PVE = w / s: the noise of w - PVE s, worst at PVE = 1, with the K-norm
    # noises correlated 1 / (k + 1) = 1 / 4: sd sqrt(2 - 2 / 4) times one value's
    assert q["pve_sd"] == pytest.approx(math.sqrt(1.5) * expected)
    d = plan_pc_dir(500, 8, eps=0.5, delta=1e-6)
    assert d.forecast.quantities["direction_noise_norm"] == pytest.approx(
        direction_noise_norm(8, d.sigma)
    )
    assert direction_noise_norm(8, 0.1) == pytest.approx(0.4)
    assert em_failure_bound(10, 100, 1.0, 0.4) == pytest.approx(10 * math.exp(-20))
    assert frame_failure_bound(10**6, 1.0, 1e6) < 1e-100


def test_forecast_is_frozen_pickles_and_tabulates():
    fc = plan_scree(178, 13, 3, eps=1.0, delta=1e-6).forecast
    assert isinstance(fc, Forecast) and not fc.ok and fc.problems
    with pytest.raises(TypeError):
        fc.quantities["pve_sd"] = 0.0  # read-only mapping
    again = pickle.loads(pickle.dumps(fc))
    assert dict(again.quantities) == dict(fc.quantities) and again.problems == fc.problems
    frame = fc.to_frame()
    assert list(frame.columns) == ["quantity", "value", "meaning"] and len(frame) >= 3
    assert "likely inaccurate" in str(fc)


def test_accuracy_error_refuses_before_spending_and_warn_warns():
    wine = load_wine()
    budget = Budget(eps=3.0, delta=1e-5)
    for call in (dp_scree, dp_score):
        with pytest.raises(InaccurateReleaseError, match="Nothing was spent"):
            call(wine, eps=1.0, delta=1e-6, accuracy="error", budget=budget)
    assert budget.ledger == ()
    with pytest.warns(AccuracyWarning, match="forecast"):
        res = dp_scree(wine, 3, eps=1.0, delta=1e-6, random_state=0)
    assert not res.forecast.ok


# --------------------------------------------------------------------------- bounds


def test_scree_with_bounds_clips_the_data_and_searches_below_the_box(table):
    box = np.array([[-20.0, 40.0]] * 6)
    clipped = table.clip(lower=0.0, upper=20.0)
    a = dp_scree(table, 2, eps=2.0, delta=1e-6, bounds=np.array([[0.0, 20.0]] * 6), random_state=4)
    b = dp_scree(
        clipped, 2, eps=2.0, delta=1e-6, bounds=np.array([[0.0, 20.0]] * 6), random_state=4
    )
    np.testing.assert_array_equal(a.values, b.values)
    res = dp_scree(table, 2, eps=2.0, delta=1e-6, bounds=box, random_state=4)
    top = 0.5 * 6 * 60.0**2  # the largest squared pair norm the box allows
    assert res.clip_level <= top and res.clip_level >= top * 2.0**-12
    np.testing.assert_array_equal(res.bounds, box)


def test_score_with_bounds_uses_the_exact_range_of_the_scores(table):
    box = np.array([[-20.0, 40.0]] * 6)
    res = dp_score(table, eps=1.0, delta=1e-6, bounds=box, random_state=0)
    assert res.frame_source == "bounds"
    assert not any(leaf.released.startswith("frame") for leaf in res.cost.leaves())
    for axis, lim in enumerate((res.xlim, res.ylim)):
        v = res.directions[:, axis]
        ends = np.stack([v * box[:, 0], v * box[:, 1]])
        assert lim == pytest.approx((ends.min(axis=0).sum(), ends.max(axis=0).sum()))
    s = table.clip(-20.0, 40.0).to_numpy() @ res.directions
    assert np.all((s[:, 0] >= res.xlim[0]) & (s[:, 0] <= res.xlim[1]))


# --------------------------------------------------------------------------- guards


def test_identifier_like_group_columns_are_refused(table):
    ids = np.arange(600)
    with pytest.raises(ValueError, match="identifier"):
        dp_score(table, eps=1.0, delta=1e-6, groups=ids)
    with pytest.raises(ValueError, match="identifier"):
        dp_score(table, eps=1.0, delta=1e-6, groups=ids % 31, group_labels=list(range(31)))


@pytest.mark.parametrize("call", [dp_scree, dp_score])
def test_delta_of_one_over_n_is_refused_unless_allowed(table, call):
    with pytest.raises(ValueError, match="1/n"):
        call(table, eps=1.0, delta=1 / 600)
    call(table, eps=1.0, delta=1 / 600, allow_large_delta=True, random_state=0)


def test_gau_at_eps_one_is_accurate_and_quiet():
    import warnings

    gau = load_gau()
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        res = dp_scree(gau, 3, eps=1.0, delta=1e-6, random_state=1)
    x = gau.to_numpy()
    cov = np.cov(x, rowvar=False)
    v = res.directions
    truth = np.einsum("jl,jk,kl->l", v, cov, v) / np.trace(cov)
    # forecast sd of a PVE is under 0.03 here; 5 sd
    assert np.max(np.abs(res.pve_total - truth)) <= 5 * res.forecast.quantities["pve_sd"]


def test_the_time_estimate_reads_the_plan_alone_and_suggests_the_balanced_design(capsys):
    from dppca import plan_loading, plan_pc_dir
    from dppca.cli._output import print_plan
    from dppca.releases.forecast import estimate_seconds, time_lines

    small = plan_pc_dir(20_000, 20, 2, eps=1.0, delta=1e-7, accuracy="ignore")
    big = plan_pc_dir(10**6, 20, 2, eps=1.0, delta=1e-8, design="exact", accuracy="ignore")
    balanced = plan_pc_dir(10**6, 20, 2, eps=1.0, delta=1e-8, accuracy="ignore")  # the default
    # the exact design is quadratic in n, the balanced one linear
    assert estimate_seconds(big) > 1000 * estimate_seconds(small) / 2
    assert estimate_seconds(balanced) < estimate_seconds(big) / 50
    assert len(time_lines(small)) == 1 and "estimated time" in time_lines(small)[0]
    assert "--design balanced" in time_lines(big)[1]
    assert balanced.design == "balanced"
    assert "--design exact" in time_lines(balanced)[1]  # the default named, the way back
    loading = plan_loading(10**6, 20, eps=1.0, delta=1e-8, design="exact", accuracy="ignore")
    assert any("--design balanced" in line for line in time_lines(loading))
    print_plan(big)  # what --dry-run prints
    out = capsys.readouterr().out
    assert "estimated time: about" in out and "min of CPU" in out
