"""Privacy audit of the scree and score releases.

Each test checks a property the privacy argument rests on: the noise drawn is
the noise the recorded cost pays for, an extreme neighbour moves the
pre-noise statistics by no more than their sensitivities, and nothing about
the data's values decides an error or a warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dppca import dp_score, dp_scree
from dppca.core.exceptions import AccuracyWarning
from dppca.privacy import mechanisms as mech
from dppca.privacy.quantiles import (
    em_quantile,
    ladder_bin,
    signed_log_bin,
    signed_log_edges,
    signed_quantile,
    unbounded_quantile,
    unbounded_quantile_upper,
)
from dppca.releases.score import groups as score_groups
from dppca.releases.score.histograms import bin_counts
from dppca.releases.scree.controls import HuberControl

_DBL_MAX = float(np.finfo(np.float64).max)


def _leaf(cost, word):
    (leaf,) = [c for c in cost.leaves() if word in c.released]
    return leaf


# --------------------------------------------------------------------------- score


@pytest.mark.parametrize("given_directions", [False, True])
@pytest.mark.parametrize("public_frame", [False, True])
def test_group_size_noise_is_the_one_the_cost_records(
    monkeypatch, rng, given_directions, public_frame
):
    # Replacing a row can move it between groups: two sizes move by one, L1
    # sensitivity 2, so the recorded eps_g must come with Laplace(2 / eps_g).
    X = rng.normal(size=(600, 3))
    groups = np.repeat(["a", "b", "c"], 200)
    scales = []

    def spy(value, scale, gen):
        scales.append(scale)
        return mech.laplace_noise(value, scale, gen)

    monkeypatch.setattr(score_groups, "laplace_noise", spy)
    kwargs = {}
    if given_directions:
        kwargs["directions"] = np.linalg.qr(rng.normal(size=(3, 2)))[0]
    if public_frame:
        kwargs["frame"] = ((-5.0, 5.0), (-5.0, 5.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        res = dp_score(X, eps=0.5, delta=1e-5, groups=groups, random_state=3, **kwargs)
    eps_g = _leaf(res.cost, "group sizes").eps
    assert scales == [pytest.approx(2.0 / eps_g, rel=1e-12)]


def test_replacing_a_row_empties_at_most_one_cell_and_fills_at_most_one(rng):
    # The stability histogram's delta is paid once per ordered pair of
    # neighbours: only the cell the row leaves can be non-empty in D and empty
    # in D' (and only the cell it enters the other way round).
    n, mx, my, g = 300, 6, 5, 3
    edges_x, edges_y = np.linspace(-2, 2, mx + 1), np.linspace(-2, 2, my + 1)
    for _ in range(200):
        s = rng.standard_t(2, size=(n, 2))
        codes = rng.integers(-1, g, size=n)  # -1: a label outside group_labels
        s2, codes2 = s.copy(), codes.copy()
        row = rng.integers(n)
        s2[row] = rng.standard_t(1, size=2) * 10
        codes2[row] = rng.integers(-1, g)
        c1 = bin_counts(s, edges_x, edges_y, codes, g).ravel()
        c2 = bin_counts(s2, edges_x, edges_y, codes2, g).ravel()
        assert np.sum((c1 > 0) & (c2 == 0)) <= 1
        assert np.sum((c1 == 0) & (c2 > 0)) <= 1
        assert np.abs(c1 - c2).sum() <= 2


def test_score_with_an_extreme_row_neither_fails_nor_warns(rng):
    # An error or a warning that appears only when some row is huge would
    # reveal that row; a value overflowing the scores must be handled like any other.
    X = rng.normal(size=(500, 3))
    X[0] = [_DBL_MAX, _DBL_MAX, -_DBL_MAX]  # scores overflow to +inf and -inf
    V = np.array([[0.6, 0.0], [0.8, 0.0], [0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = dp_score(
            X, eps=2.0, delta=1e-5, directions=V, calibration="analytic", random_state=0
        )
    assert np.all(np.isfinite(res.xlim + res.ylim))


# --------------------------------------------------------------------------- scree


@pytest.mark.parametrize("method", ["clipped", "pmwm", "huber"])
@pytest.mark.parametrize("pairing", ["all", "random", "consecutive"])
def test_scree_with_an_extreme_row_neither_fails_nor_warns(rng, method, pairing):
    X = rng.normal(size=(400, 4))
    X[0] = 1e160  # squares of the differences overflow
    X[4], X[5] = _DBL_MAX, -_DBL_MAX  # their difference overflows
    V = np.linalg.qr(rng.normal(size=(4, 2)))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = dp_scree(
            X,
            2,
            eps=0.5,
            delta=1e-5,
            directions=V,
            method=method,
            pairing=pairing,
            control={"huber": HuberControl(m2_rule="mode")} if method == "huber" else None,
            random_state=0,
            accuracy="ignore",  # the forecast's warning is data-free
        )
    assert np.all(np.isfinite(res.values)) and np.isfinite(res.trace)


@pytest.mark.parametrize("values", [[1.0, np.inf, 2.0], [1.0, np.nan, 2.0], [-np.inf, 0.5, 3.0]])
def test_quantile_scans_take_non_finite_values_silently(values):
    # Each value is mapped to a bin on its own, so sending non-finite values to
    # an end bin keeps the sensitivity; they must not raise or warn.
    x = np.array(values * 50)
    gen = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = unbounded_quantile_upper(x, lower=0.0, beta=1.01, q=0.5, eps1=1, eps2=1, rng=gen)
        b = unbounded_quantile(x, lower=0.0, upper=1e8, beta=1.01, q=0.2, eps1=1, eps2=1, rng=gen)
        c = signed_quantile(x, bound=1e6, beta=1.01, q=0.5, eps1=1, eps2=1, rng=gen)
        bins = signed_log_bin(x, 1e6, 1.01)
    assert np.isfinite([a, b, c]).all()
    assert bins.min() >= 0 and bins.max() < signed_log_edges(1e6, 1.01).size


@pytest.mark.parametrize("flag", ["no", 1, np.array([0])])
def test_groups_public_must_be_a_real_boolean(rng, flag):
    # bool("no") is True: a loose check would publish the exact group sizes.
    X = rng.normal(size=(100, 2))
    with pytest.raises(TypeError, match="groups_public"):
        dp_score(X, eps=0.5, delta=1e-5, groups=np.repeat(["a", "b"], 50), groups_public=flag)


def test_public_group_labels_make_the_released_label_set_data_independent(rng):
    # Without group_labels a label held by one row is released with the result;
    # with them, a neighbour that holds a new (or missing) label gives the same
    # label set, no error, and that row only counts for the frame.
    X = rng.normal(size=(400, 2))
    labels = np.repeat(np.array(["a", "b"], dtype=object), 200)
    rare = labels.copy()
    rare[7] = "rare"
    other = rare.copy()
    other[8] = None
    kwargs = {
        "eps": 1.0,
        "delta": 1e-5,
        "directions": np.eye(2),
        "random_state": 0,
        "frame": ((-4.0, 4.0), (-4.0, 4.0)),
    }
    assert "rare" in dp_score(X, groups=rare, **kwargs).groups  # the default leaks it
    res = dp_score(X, groups=labels, group_labels=["b", "a", "c"], **kwargs)
    res2 = dp_score(X, groups=other, group_labels=["b", "a", "c"], **kwargs)
    assert res.groups == res2.groups == ("b", "a", "c")
    assert res.probs["add"].shape == res2.probs["add"].shape == (3, res.bins[0] * res.bins[1])
    exact = dp_score(X, groups=other, group_labels=["b", "a", "c"], compare=True, **kwargs)
    assert exact.nonprivate.group_sizes.tolist() == [200, 198, 0]  # rows 7, 8 were "a"
    assert exact.nonprivate.group_codes[7] == exact.nonprivate.group_codes[8] == -1


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"group_labels": ["a", "a"]}, ValueError, "once"),
        ({"group_labels": []}, ValueError, "at least one"),
        ({"group_labels": "ab"}, TypeError, "list"),
        ({"group_labels": ["a", None]}, ValueError, "missing"),
        ({"group_labels": ["a"], "groups": None}, ValueError, "needs groups"),
    ],
)
def test_bad_group_labels_are_refused(rng, kwargs, exc, match):
    X = rng.normal(size=(50, 2))
    args = {"groups": np.repeat(["a", "b"], 25), **kwargs}
    with pytest.raises(exc, match=match):
        dp_score(X, eps=0.5, delta=1e-5, **args)


# --------------------------------------------------------------------------- issue 10 mechanisms


def _replace_one(rng, x, values):
    y = x.copy()
    y[int(rng.integers(x.size))] = values
    return y


@pytest.mark.parametrize("seed", range(5))
def test_ladder_scan_counts_move_by_at_most_one_in_one_direction(seed):
    # ladder_quantile compares cum[i] = #{x <= edges[i]}; its (eps1 + eps2)-DP argument
    # needs every cumulative count to move by at most 1, all the same way.
    rng = np.random.default_rng(seed)
    edges = np.ldexp(1.0, np.arange(-30, 71))
    x = np.abs(rng.standard_cauchy(301)) * 10.0 ** rng.integers(-3, 4)
    for new in (0.0, 1e-40, 3.7, 1e300, np.inf, np.nan):
        y = _replace_one(rng, x, new)
        cx = np.cumsum(np.bincount(ladder_bin(x, edges), minlength=edges.size))
        cy = np.cumsum(np.bincount(ladder_bin(y, edges), minlength=edges.size))
        d = cx - cy
        assert np.abs(d).max() <= 1 and (np.all(d >= 0) or np.all(d <= 0))


def _em_utilities(x, edges, q):
    # the utilities em_quantile gives the exponential mechanism
    xs = np.sort(np.where(np.isnan(x), np.inf, x))
    at = np.searchsorted(xs, edges, side="right").astype(float)
    below, upto, t = at[:-1], at[1:], q * x.size
    return -np.maximum(np.maximum(below - t, t - upto), 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_exponential_mechanism_bin_utilities_move_by_at_most_one(seed):
    rng = np.random.default_rng(seed)
    edges = np.concatenate([-np.geomspace(1e6, 1e-3, 60), [0.0], np.geomspace(1e-3, 1e6, 60)])
    x = rng.normal(size=257) * 10.0 ** rng.integers(-2, 3) + rng.normal() * 100
    for new in (-1e300, 0.0, 12.5, 1e300, np.inf):
        y = _replace_one(rng, x, new)
        for q in (0.1, 0.5, 0.9):
            move = np.abs(_em_utilities(x, edges, q) - _em_utilities(y, edges, q))
            assert move.max() <= 1.0
    # and em_quantile uses exactly these utilities: a huge eps picks the best bin
    lo, hi = em_quantile(x, edges, q=0.5, eps=1e6, rng=np.random.default_rng(0))
    assert lo < np.median(x) <= hi


@pytest.mark.parametrize("seed", range(4))
def test_frame_statistics_move_by_at_most_one_under_replacement(seed):
    # private_frame, per axis: the centre is em_quantile of the scores on the
    # public centre ladder (utilities: ranks), the half width ladder_quantile of
    # |s - c| on the public width ladder (cumulative counts), with c the released
    # centre. Replacing one row changes one score per axis, so every utility and
    # every cumulative count moves by at most one, the counts all the same way,
    # as the frame's cost (four pure parts) assumes; an extreme row attains 1.
    from dppca.releases.score import frame

    rng = np.random.default_rng(seed)
    s = rng.normal(size=(301, 2)) * [5.0, 1.0] * 10.0 ** rng.integers(-2, 3) + rng.normal() * 50
    centres, widths = frame._centre_ladder(1e6), frame._width_ladder(1e6)
    attained = False
    for new in ([1e200, -1e200], [0.0, 0.0], [np.inf, -np.inf], [-3.0, 7.0]):
        t = s.copy()
        t[int(rng.integers(301))] = new
        for a in (0, 1):
            for q in (0.5, 0.9):
                move = np.abs(
                    _em_utilities(s[:, a], centres, q) - _em_utilities(t[:, a], centres, q)
                )
                assert move.max() <= 1.0
            c = float(np.median(s[:, a]))  # any released centre: fixed for both tables
            cs, ct = (
                np.cumsum(
                    np.bincount(
                        ladder_bin(frame.frame_distances(v[:, a], c), widths),
                        minlength=widths.size,
                    )
                )
                for v in (s, t)
            )
            diff = ct - cs
            assert np.abs(diff).max() <= 1 and (np.all(diff >= 0) or np.all(diff <= 0))
            attained |= bool(np.abs(diff).max() == 1)
    assert attained
