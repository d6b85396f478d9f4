"""Tests of the private scree / PVE estimates."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dppca import (
    Budget,
    BudgetExceededError,
    ClippedControl,
    HuberControl,
    PMWMControl,
    PrivacyWarning,
    ScreeResult,
    ScreeSplit,
    dp_pc_dir,
    dp_scree,
    pc_dir,
)
from dppca.privacy.mechanisms import gaussian_sigma, kendall_sigma
from dppca.privacy.quantiles import unbounded_quantile_upper
from dppca.privacy.totals import tight_total
from dppca.releases.forecast import CLIP_RATIO
from dppca.releases.scree.clip import (
    _SCAN_SHARE_MAX,
    _SCAN_SHARE_MIN,
    _auto_scan_share,
    _clip_ladder,
    _joint_noise,
    _scan_level,
    _unit_sd,
)
from dppca.releases.scree.controls import METHODS, _resolve_controls
from dppca.releases.scree.estimators import _TARGET_MARGIN, _mono
from dppca.releases.scree.plan import ScreePlan, plan_scree
from dppca.releases.scree.statistics import (
    _huber_gradient,
    _m2_histogram,
    _m2_median_utility,
    _paired_differences,
    _winsorized_statistic,
)

# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _neighbours(rng, n=201, p=5, row=7, extreme=1e6):
    """Random data and a copy with one row replaced by an extreme one."""
    X = rng.normal(size=(n, p)) * np.array([3.0, 2.0, 1.0, 0.5, 0.25])[:p]
    Y = X.copy()
    Y[row] = extreme * rng.choice([-1.0, 1.0], size=p)
    return X, Y


def _unit_directions(rng, p, k):
    q, _ = np.linalg.qr(rng.normal(size=(p, k)))
    return q


def _w(X, order, V):
    z = _paired_differences(X, order)
    return (z @ V) ** 2, z


def _gaussian_data(rng, n, eigenvalues):
    """Rows N(mu, Sigma) with Sigma = Q diag(eigenvalues) Q' and a large mean."""
    p = len(eigenvalues)
    Q = _unit_directions(rng, p, p)
    X = rng.normal(size=(n, p)) * np.sqrt(eigenvalues) @ Q.T + 50.0
    return X, Q


def _order(kind, n, rng):
    return np.arange(n) if kind == "consecutive" else rng.permutation(n)


def _neighbour_w(seed, k, *, kind="random", n=201, extreme=1e6):
    """Squared projections w of a random dataset and of a neighbour with one extreme row."""
    rng = np.random.default_rng(seed)
    X, Y = _neighbours(rng, n=n, row=int(rng.integers(n)), extreme=extreme)
    V = _unit_directions(rng, 5, k)
    order = _order(kind, n, rng)
    return _w(X, order, V)[0], _w(Y, order, V)[0]


ORDERS = ["consecutive", "random"]


# --------------------------------------------------------------------------
# pairing and sensitivity
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ORDERS)
@pytest.mark.parametrize("row", [0, 100, 200])
def test_replacing_a_row_changes_at_most_one_paired_difference(rng, kind, row):
    X, Y = _neighbours(rng, n=201, row=row)
    order = _order(kind, 201, rng)
    zx = _paired_differences(X, order)
    zy = _paired_differences(Y, order)
    assert zx.shape == (100, 5)
    changed = np.flatnonzero(np.any(zx != zy, axis=1))
    # 201 rows: exactly one row is left unpaired; every other row sits in one pair.
    unpaired = order[200]
    assert changed.size == (0 if row == unpaired else 1)


def test_paired_differences_have_the_covariance_as_second_moment(rng):
    # The sample mean of z z' over a random pairing, averaged over pairings, is
    # the sample covariance; for one pairing of 40000 N(mu, Sigma) rows it is
    # within sampling error of Sigma whatever mu (here 50 in every coordinate).
    X, Q = _gaussian_data(rng, 40000, [9.0, 4.0, 1.0])
    z = _paired_differences(X, rng.permutation(40000))
    second = (Q.T @ (z.T @ z) @ Q) / z.shape[0]
    # diag entries: mean of lambda chi2_1 over m = 20000 values; sd lambda sqrt(2/m)
    # = 0.01 lambda; accept 6 sd.
    np.testing.assert_allclose(np.diag(second), [9.0, 4.0, 1.0], rtol=0.06)


@pytest.mark.parametrize("seed", range(5))
def test_winsorized_statistic_moves_by_at_most_its_sensitivity(seed):
    wx, wy = _neighbour_w(seed, 3)
    half = slice(wx.shape[0] // 2, wx.shape[0])  # the mean half of split mode
    lower, upper = np.array([0.0, 0.1, 0.2]), np.array([5.0, 3.0, 1.0])
    move = np.linalg.norm(
        _winsorized_statistic(wx[half], lower, upper)
        - _winsorized_statistic(wy[half], lower, upper)
    )
    assert move <= np.linalg.norm(upper - lower) / wx[half].shape[0] * (1 + 1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_huber_steps_move_by_at_most_their_sensitivity(seed):
    wx, wy = _neighbour_w(seed, 2)
    tau, eta0 = np.array([2.0, 0.5]), 0.7
    for mu in (np.zeros(2), np.array([1.0, 3.0]), np.array([-5.0, 100.0])):
        move = np.linalg.norm(
            _huber_gradient(wx, mu, tau, eta0) - _huber_gradient(wy, mu, tau, eta0)
        )
        assert move <= 2 * eta0 * np.linalg.norm(tau) / wx.shape[0] * (1 + 1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_huber_scale_proxy_inputs_move_by_at_most_their_sensitivity(seed):
    wx, wy = _neighbour_w(seed, 1, n=400, extreme=1e3)
    wx, wy = wx[:, 0], wy[:, 0]
    # "mode": histogram of block medians, L1 sensitivity 2 (Laplace(2/eps)).
    for blocks in (1, 7, 10, 100):
        hx = _m2_histogram(wx, -30, 60, blocks)
        hy = _m2_histogram(wy, -30, 60, blocks)
        assert hx.sum() == hy.sum()
        assert np.abs(hx - hy).sum() <= 2
    # "median": every utility moves by at most 1 (exponential mechanism, sensitivity 1).
    ux = _m2_median_utility(wx, -30, 60)
    uy = _m2_median_utility(wy, -30, 60)
    assert np.max(np.abs(ux - uy)) <= 1.0


@pytest.mark.parametrize("seed", range(5))
def test_unbounded_quantile_cumulative_counts_move_by_one_in_one_direction(seed):
    # The pure-DP claim of the quantile search rests on this: with the bin rule
    # of unbounded_quantile_upper, replacing one value moves every cumulative
    # count H(i) by at most 1, and all in the same direction.
    rng = np.random.default_rng(seed)
    x = rng.exponential(3.0, size=300)
    y = x.copy()
    y[int(rng.integers(300))] = rng.choice([1e9, -1e9, 0.0])
    beta, lower = 1.01, 0.0

    def cumulative(values):
        bins = np.floor(np.log(np.maximum(values - lower + 1, beta)) / math.log(beta))
        return np.cumsum(np.bincount(bins.astype(np.int64), minlength=3000)[:3000])

    diff = cumulative(x) - cumulative(y)
    assert np.max(np.abs(diff)) <= 1
    assert np.all(diff >= 0) or np.all(diff <= 0)


def test_unbounded_quantile_output_distribution_respects_eps():
    # Empirical privacy check on two neighbouring datasets of 4 values with
    # coarse bins: every output with enough mass must have a probability ratio
    # of at most e^eps. 20000 draws each; for a cell of probability >= 0.05 the
    # relative standard error of a ratio is <= sqrt(2 / (0.05 * 20000)) = 0.045,
    # so allow a factor exp(5 * 0.045).
    eps1 = eps2 = 0.25
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([1.0, 2.0, 3.0, 1e6])
    draws = 20000

    def sample(data, seed):
        rng = np.random.default_rng(seed)
        out = [
            unbounded_quantile_upper(
                data, lower=0.0, beta=2.0, q=0.5, eps1=eps1, eps2=eps2, rng=rng, chunk=64
            )
            for _ in range(draws)
        ]
        return pd.Series(out).value_counts(normalize=True)

    px, py = sample(x, 1), sample(y, 2)
    both = px.index.intersection(py.index)
    big = [v for v in both if min(px[v], py[v]) >= 0.05]
    assert len(big) >= 2
    bound = math.exp(eps1 + eps2) * math.exp(5 * 0.045)
    for v in big:
        assert px[v] / py[v] <= bound and py[v] / px[v] <= bound


def test_noise_is_calibrated_to_the_documented_sensitivities(rng):
    from dppca.kernels.pair_moments import moment_sensitivity

    X = rng.normal(size=(401, 4))
    V = np.eye(4)[:, :2]
    res = dp_scree(
        X,
        2,
        eps=0.8,
        delta=1e-5,
        method=["clipped", "pmwm"],
        directions=V,
        control=ClippedControl(clip=3.0),
        random_state=0,
    )
    # public clip: no scan; the joint release and pmwm share eps = 0.8 equally
    eps_m, delta_m = 0.4, 0.5e-5
    l1 = moment_sensitivity(401, 3.0, all_pairs=True, norm="l1")
    l2 = moment_sensitivity(401, 3.0, all_pairs=True, norm="l2")
    assert l1 == pytest.approx(4 * 3.0 / 401) and l2 == pytest.approx(2 * math.sqrt(2) * 3.0 / 401)
    # K-norm noise: Laplace(l1 / eps) proposals conditioned on the polytope;
    # every value's variance is b^2 d (2d + 1) / ((d + 1) (d + 2)), d = k + 1 = 3
    d = 3
    knorm_sd = l1 / eps_m * math.sqrt(d * (2 * d + 1) / ((d + 1) * (d + 2)))
    gauss_sd = gaussian_sigma(l2, eps_m, delta_m, "analytic")
    assert res.trace_sd == pytest.approx(min(knorm_sd, gauss_sd))
    np.testing.assert_allclose(res.noise_sd[0], res.trace_sd)
    # pmwm's mean: L2 ||U - L|| / |B| with its own released levels; positive and finite
    assert np.all(np.isfinite(res.noise_sd[1])) and np.all(res.noise_sd[1] > 0)
    assert res.cost.eps == pytest.approx(0.8)
    assert res.clip_level == 3.0


# --------------------------------------------------------------------------
# accuracy
# --------------------------------------------------------------------------

LAMBDA = np.array([9.0, 4.0, 1.0, 0.25])


@pytest.fixture(scope="module")
def big_gaussian():
    rng = np.random.default_rng(77)
    return _gaussian_data(rng, 40000, LAMBDA)


@pytest.mark.parametrize("method", ["clipped", "pmwm", "huber"])
def test_each_method_recovers_known_eigenvalues(big_gaussian, method):
    X, Q = big_gaussian
    estimates = []
    for j in range(4):
        res = dp_scree(
            X,
            1,
            eps=40.0,
            delta=1e-5,
            method=method,
            directions=Q[:, [j]],
            random_state=5 + j,
            calibration="analytic",
        )
        estimates.append(res.scree[0])
    # One public direction per call, so every noise scale is proportional to its
    # own lambda. Sampling: the mean of lambda chi2_1 over m = 20000 pairs (10000
    # in the PMWM half) has sd lambda sqrt(2 / 10000) = 0.014 lambda: 5 sd = 0.071.
    # Bias: winsorizing at the 0.995 quantile of chi2_1 (7.88) costs <= 0.009
    # lambda; the default clip (a quantile of ||z||^2 >= lambda chi2_1) and the
    # Huber tau (about 50 lambda here) cost less. Noise at eps = 36 for the
    # method: clipped sd < 0.001 lambda; pmwm sd < 0.005 lambda; huber: last step
    # sd about 1.7 * 2 tau / m = 0.009 lambda, 5 sd = 0.045. Sum: 0.13 lambda.
    np.testing.assert_allclose(estimates, LAMBDA, rtol=0.13)


def test_several_components_and_total_variance(big_gaussian):
    X, Q = big_gaussian
    res = dp_scree(
        X,
        4,
        eps=40.0,
        delta=1e-5,
        method="clipped",
        directions=Q,
        random_state=5,
        calibration="analytic",
    )
    # The trace: mean of ||z||^2 (sum_j lambda_j chi2_1, sd sqrt(2 sum lambda_j^2)
    # = 14.1) over 10000 pairs: sd 0.14, i.e. 0.01 of 14.25; 5 sd plus the
    # winsorizing bias (< 0.01) gives 0.06. PC1's share: same argument, 0.02.
    assert res.trace == pytest.approx(LAMBDA.sum(), rel=0.06)
    assert res.pve_total[0] == pytest.approx(LAMBDA[0] / LAMBDA.sum(), abs=0.03)
    assert np.all(np.diff(res.scree) <= 0)


def test_private_directions_end_to_end_recover_the_spectrum():
    rng = np.random.default_rng(3)
    X, _ = _gaussian_data(rng, 3000, LAMBDA)
    res = dp_scree(X, 2, eps=20.0, delta=1e-5, random_state=1, calibration="analytic")
    assert res.directions_source == "private"
    # m = 1500 pairs: sd of the mean 0.037 lambda; the private directions at eps=10
    # are close to the true ones (v' Sigma v >= lambda_1 cos^2 ...); allow 0.2.
    np.testing.assert_allclose(res.scree, LAMBDA[:2], rtol=0.2)


@pytest.mark.parametrize("method", ["clipped", "pmwm", "huber"])
def test_tiny_eps_still_gives_finite_output(rng, method):
    X = rng.normal(size=(300, 4))
    res = dp_scree(X, 3, eps=1e-3, delta=1e-8, method=method, random_state=2)
    assert np.all(np.isfinite(res.values)) and np.all(res.values >= 0)
    assert np.isfinite(res.trace)
    assert np.all((0 <= res.pve_values) & (res.pve_values <= 1))
    assert np.all((0 <= res.pve_total_values) & (res.pve_total_values <= 1))


def test_default_call_is_sensible_on_bundled_data():
    from dppca.datasets import load_gau

    X = load_gau()
    res = dp_scree(X, 3, eps=0.9, delta=1e-5, random_state=0)
    truth = np.linalg.eigvalsh(np.cov(X.to_numpy(), rowvar=False))[::-1]
    # Default split: directions 0.45, trace 0.09, clipped 0.36 (classic).
    # PC1 (37.2): sampling sd of the mean of lambda chi2_1 over 2500 pairs is
    # 0.028 lambda; noise sd sqrt(3) U / 2500 * sqrt(2 ln(1.25 / 3.6e-6)) / 0.36
    # with U about 250 is 2.4 = 0.065 lambda; together 0.071. Clipping bias < 0.05.
    # 4 sd + bias: 0.33.
    assert res.scree[0] == pytest.approx(truth[0], rel=0.33)
    # Trace (122.4): noise sd (U / 1250) sqrt(2 ln(1.25 / 1e-6)) / 0.09 = 12, i.e.
    # 0.1 of the trace; winsorizing at the lowered level biases down by < 0.07.
    # 4 sd + bias: 0.47.
    assert res.trace == pytest.approx(truth.sum(), rel=0.47)
    # PC1 carries 0.68 of the first three eigenvalues.
    assert res.pve[0] > 0.5


def test_result_is_translation_invariant(rng):
    X = rng.normal(size=(300, 4))
    V = np.eye(4)[:, :2]
    kw = {"eps": 0.5, "delta": 1e-5, "directions": V, "method": ["clipped", "pmwm", "huber"]}
    a = dp_scree(X, 2, random_state=9, **kw)
    b = dp_scree(X + 1e3, 2, random_state=9, **kw)
    np.testing.assert_allclose(a.values, b.values, rtol=1e-6)
    assert a.trace == pytest.approx(b.trace, rel=1e-6)


# --------------------------------------------------------------------------
# budget and directions
# --------------------------------------------------------------------------


def test_cost_parts_are_a_basic_split_scaled_to_the_tight_total(rng):
    X = rng.normal(size=(200, 4))
    res = dp_scree(
        X,
        2,
        eps=0.9,
        delta=1e-5,
        method=["clipped", "pmwm", "huber"],
        random_state=0,
        split=ScreeSplit(directions=0.4, clip=0.2),
    )
    leaves = res.cost.leaves()
    assert res.cost.eps == 0.9 and res.cost.delta == 1e-5 and res.cost.kind == "composed"
    # the parts' deltas are a basic split (the joint release may use Laplace noise)
    assert math.fsum(c.delta for c in leaves) <= 1e-5 * (1 + 1e-12)
    # every eps share of the basic split (0.36, 0.18, ...) grows by one factor t
    t = leaves[0].eps / 0.36  # directions
    assert t > 1
    assert leaves[1].eps == pytest.approx(0.18 * t)  # clip-level scan (split.clip)
    assert math.fsum(c.eps for c in leaves) == pytest.approx(0.9 * t)
    assert res.directions_release.eps == pytest.approx(leaves[0].eps)
    assert tight_total(leaves, 1e-5)[0] == pytest.approx(0.9, rel=1e-6)


def test_budget_refuses_overspending_before_touching_data(rng):
    X = rng.normal(size=(200, 4))
    budget = Budget(eps=1.0, delta=1e-5)
    dp_scree(X, 2, eps=0.6, delta=5e-6, random_state=0, budget=budget)
    assert tight_total(budget.ledger, 5e-6)[0] == pytest.approx(0.6, rel=1e-6)
    with pytest.raises(BudgetExceededError):  # even tightly, 0.6 + 0.9 is above 1
        dp_scree(X, 2, eps=0.9, delta=5e-6, random_state=0, budget=budget)
    assert len(budget.ledger) == 1


def test_private_directions_are_reused_at_no_cost(rng):
    X = rng.normal(size=(200, 4))
    dirs = dp_pc_dir(X, 3, eps=0.5, delta=1e-5, random_state=1)
    res = dp_scree(X, 2, eps=0.5, delta=1e-5, directions=dirs, random_state=2)
    assert res.directions_source == "private release"
    assert res.directions_release is dirs
    np.testing.assert_array_equal(res.directions, dirs.directions[:, :2])
    assert res.cost.eps == pytest.approx(0.5)
    assert all("Kendall" not in c.released for c in res.cost.leaves())


def test_nonprivate_directions_are_refused_unless_declared_public(rng):
    X = rng.normal(size=(200, 4))
    with pytest.raises(ValueError, match="public_directions"):
        dp_scree(X, 2, eps=0.5, delta=1e-5, directions=pc_dir(X))
    public = pc_dir(rng.normal(size=(200, 4)))  # from other (public) data
    res = dp_scree(
        X, 2, eps=0.5, delta=1e-5, directions=public, public_directions=True, random_state=0
    )
    assert res.directions_source == "public"


@pytest.mark.parametrize("form", ["array", "flipped", "result"])
def test_the_datas_own_nonprivate_directions_are_refused_as_public(rng, form):
    X = rng.normal(size=(200, 4)) * [3.0, 2.0, 1.0, 0.5]
    own = pc_dir(X, 3)
    directions = {
        "array": np.array(own.directions),
        "flipped": np.array(own.directions) * [1.0, -1.0, 1.0],
        "result": own,
    }[form]
    budget = Budget(eps=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="non-private direction"):
        dp_scree(
            X, 2, eps=0.5, delta=1e-5, directions=directions, public_directions=True, budget=budget
        )
    assert budget.ledger == ()  # refused before spending
    # a direction a hair (above 1e-8) away, or of other data, is accepted as public
    other = np.linalg.qr(np.array(own.directions) + 1e-6)[0]
    assert dp_scree(X, 2, eps=0.5, delta=1e-5, directions=other, random_state=0).private


@pytest.mark.parametrize(
    "directions, match",
    [
        (np.ones((4, 2)), "orthonormal"),
        (np.eye(3)[:, :2], "shape"),
        (np.eye(4)[:, :1], "shape"),
        ("abc", "directions"),
    ],
)
def test_bad_public_directions_are_refused(rng, directions, match):
    X = rng.normal(size=(200, 4))
    with pytest.raises((ValueError, TypeError), match=match):
        dp_scree(X, 2, eps=0.5, delta=1e-5, directions=directions)


def test_classic_calibration_warns_when_a_part_reaches_eps_one(rng):
    X = rng.normal(size=(200, 4))
    with pytest.warns(PrivacyWarning, match="analytic"):
        dp_scree(X, 2, eps=4.0, delta=1e-5, random_state=0, calibration="classic")


# --------------------------------------------------------------------------
# result object, monotone fit, reproducibility
# --------------------------------------------------------------------------


def test_same_seed_gives_identical_results(small_frame):
    a = dp_scree(small_frame, 3, eps=0.5, delta=1e-5, method=["pmwm", "huber"], random_state=4)
    b = dp_scree(small_frame, 3, eps=0.5, delta=1e-5, method=["pmwm", "huber"], random_state=4)
    np.testing.assert_array_equal(a.values, b.values)
    assert a.trace == b.trace


def test_result_is_frozen_read_only_and_tabulates(small_frame):
    res = dp_scree(small_frame, 3, eps=0.5, delta=1e-5, method=["clipped", "pmwm"])
    assert isinstance(res, ScreeResult)
    assert repr(res) == (
        "ScreeResult(p=5, k=3, n=200, methods=('clipped', 'pmwm'), eps=0.5, delta=1e-05)"
    )
    with pytest.raises(ValueError):
        res.values[0, 0] = 1.0
    with pytest.raises(AttributeError):
        res.trace = 1.0
    frame = res.to_frame()
    assert list(frame.index) == ["PC1", "PC2", "PC3"]
    assert list(frame.columns) == [
        "scree_clipped",
        "pve_clipped",
        "pve_total_clipped",
        "scree_pmwm",
        "pve_pmwm",
        "pve_total_pmwm",
    ]
    assert res.variables == ("a", "b", "c", "d", "e")
    np.testing.assert_array_equal(res.estimate("pmwm"), res.values[1])
    assert res.pve.sum() == pytest.approx(1.0) or res.scree.sum() == 0
    assert res.nonprivate_values is None and not res.has_comparison
    assert not any("nonprivate" in c for c in frame.columns)


def test_comparison_is_attached_only_on_request(small_data):
    res = dp_scree(small_data, 2, eps=0.5, delta=1e-5, compare=True, random_state=0)
    assert "with non-private comparison" in repr(res)
    truth = np.linalg.eigvalsh(np.cov(small_data, rowvar=False))[::-1][:2]
    np.testing.assert_allclose(res.nonprivate_values, truth)
    assert "scree_nonprivate" in res.to_frame().columns


@pytest.mark.parametrize("seed", range(3))
def test_mono_gives_non_increasing_non_negative_values(small_data, seed):
    res = dp_scree(
        small_data, 5, eps=0.05, delta=1e-5, method=["clipped", "huber"], random_state=seed
    )
    assert np.all(np.diff(res.values, axis=1) <= 1e-12)
    assert np.all(res.values >= 0)


def test_mono_is_the_least_squares_non_increasing_fit():
    values = np.array([3.0, -1.0, 4.0, 2.0, 2.5, 0.5])
    # Reference: pool-adjacent-violators written out for this small case.
    pos = np.maximum(values, 0)
    blocks = [[v] for v in pos]
    merged = True
    while merged:
        merged = False
        for i in range(len(blocks) - 1):
            if np.mean(blocks[i]) < np.mean(blocks[i + 1]):
                blocks[i] = blocks[i] + blocks.pop(i + 1)
                merged = True
                break
    expected = np.concatenate([[np.mean(b)] * len(b) for b in blocks])
    np.testing.assert_allclose(_mono(values), expected)


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ClippedControl(clip=-1.0), "clip"),
        (lambda: ClippedControl(clip=float("nan")), "clip"),
        (lambda: PMWMControl(lower=1.0, upper=0.0), "lower < upper"),
        (lambda: PMWMControl(eta=0.5), "eta"),
        (lambda: PMWMControl(beta=1.0), "beta"),
        (lambda: PMWMControl(trim_const=0), "trim_const"),
        (lambda: PMWMControl(split="yes"), "split"),
        (lambda: HuberControl(k_min=5, k_max=5), "k_min < k_max"),
        (lambda: HuberControl(m2_frac=1.0), "m2_frac"),
        (lambda: HuberControl(eta0=0.0), "eta0"),
        (lambda: HuberControl(steps=0), "steps"),
        (lambda: HuberControl(k_min=1.5), "k_min"),
        (lambda: HuberControl(m2_rule="max"), "m2_rule"),
    ],
)
def test_bad_control_values_raise_clear_errors(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"method": "mean"}, "method"),
        ({"method": ["clipped", "clipped"]}, "twice"),
        ({"method": []}, "method"),
        ({"control": PMWMControl()}, "pmwm"),
        ({"control": {"clipped": PMWMControl()}}, "ClippedControl"),
        ({"control": {"median": ClippedControl()}}, "control key"),
        ({"control": 3}, "control"),
        ({"split": ScreeSplit(directions=0.95)}, "split.directions \\+ split.clip"),
        ({"split": {"directions": 0.3}}, "ScreeSplit"),
        ({"pairing": "sorted"}, "pairing"),
        ({"eps": -1.0}, "eps"),
        ({"delta": 1.0}, "delta"),
        ({"calibration": "exact"}, "calibration"),
        ({"mono": 1}, "mono"),
    ],
)
def test_bad_arguments_raise_clear_errors(small_data, kwargs, match):
    args = {"eps": 0.5, "delta": 1e-5, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        dp_scree(small_data, 2, **args)


def test_bad_data_and_k_raise(small_data):
    with pytest.raises(ValueError, match="at least 4 rows"):
        dp_scree(small_data[:3], 1, eps=0.5, delta=1e-5)
    with pytest.raises(ValueError, match="k must"):
        dp_scree(small_data, 6, eps=0.5, delta=1e-5)


def test_caller_data_is_not_modified(small_data):
    before = small_data.copy()
    dp_scree(small_data, 2, eps=0.5, delta=1e-5, method=["clipped", "pmwm", "huber"])
    np.testing.assert_array_equal(small_data, before)


def test_chi2_sanity_of_the_reference_bias_bound():
    # The accuracy tolerance above uses E[(chi2_1 - c)_+] at c = 7.88 (0.995 quantile).
    c = stats.chi2.ppf(0.995, 1)
    from scipy import integrate

    excess = integrate.quad(lambda t: stats.chi2.sf(t, 1), c, np.inf)[0]
    assert excess < 0.01


def test_huber_clipping_level_is_capped_by_the_released_quantile():
    # A scale-proxy range far above the data (2^40 .. 2^60) would give tau >= 2^20
    # and swamp the steps with noise; the cap at the released quantile U of
    # ||z||^2 (about the 0.99 quantile of chi2_4, 13) keeps the noise small.
    # n = 20000, k = 2: step sensitivity 2 sqrt(2) 13 / 10000 = 0.0038; the T = 10
    # steps share (0.75 * 9, 1e-5) at sensitivity sqrt(10) * 0.0038 = 0.012, an
    # analytic sd below 0.01, and only the last step's noise stays (eta0 = 1, no
    # clamping). Sampling sd sqrt(2 / 10000) = 0.014. 5 sd of each: 0.12.
    rng = np.random.default_rng(8)
    X = rng.normal(size=(20000, 4))
    res = dp_scree(
        X,
        2,
        eps=10.0,
        delta=1e-5,
        method="huber",
        directions=np.eye(4)[:, :2],
        control=HuberControl(k_min=40, k_max=60),
        random_state=0,
        calibration="analytic",
    )
    np.testing.assert_allclose(res.scree, [1.0, 1.0], atol=0.12)


def test_quantile_level_is_lowered_only_when_the_target_noise_is_large():
    from dppca.privacy.quantiles import capped_quantile_level

    margin = _TARGET_MARGIN
    assert capped_quantile_level(0.99, 10000, 10.0, margin) == 0.99
    assert capped_quantile_level(0.99, 1000, 1e-4, margin) == 0.5
    level = capped_quantile_level(0.99, 1000, 0.05, margin)
    assert level == pytest.approx(1 - margin / 50)


# --------------------------------------------------------------------------
# mechanisms added for the scree
# --------------------------------------------------------------------------


def test_exponential_mechanism_draws_with_the_right_probabilities():
    from dppca.privacy.quantiles import exponential_mechanism

    rng = np.random.default_rng(11)
    utility = np.array([0.0, -1.0, -2.0, -10.0])
    eps, draws = 2.0, 40000
    picks = np.array(
        [exponential_mechanism(utility, eps=eps, sensitivity=1.0, rng=rng) for _ in range(draws)]
    )
    expected = np.exp(eps * utility / 2)
    expected /= expected.sum()
    counts = np.bincount(picks, minlength=4)
    # Pearson chi-square over the three cells with real mass (the last has
    # probability 3e-5); accept below the 1 - 1e-6 quantile of chi2(2).
    stat = (((counts[:3] - draws * expected[:3]) ** 2) / (draws * expected[:3])).sum()
    assert stat < stats.chi2.ppf(1 - 1e-6, df=2)


def test_random_pairing_is_a_permutation_that_ignores_the_data():
    from dppca.privacy.mechanisms import random_pairing

    a = random_pairing(11, np.random.default_rng(5))
    b = random_pairing(11, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.sort(a), np.arange(11))


def test_pmwm_without_split_divides_its_budget_and_records_both_parts(rng):
    X = rng.normal(size=(400, 4))
    control = PMWMControl(split=False, quantile_share=0.25, lower_quantile=True, upper=100.0)
    res = dp_scree(
        X,
        2,
        eps=0.5,
        delta=1e-5,
        method="pmwm",
        control=control,
        directions=np.eye(4),
        random_state=0,
        split=ScreeSplit(clip=0.1),
    )
    leaves = res.cost.leaves()[1:]  # after the clip scan
    # basic split: scan 0.05 (split.clip given); the joint moments and pmwm
    # share 0.45: joint 0.225, pmwm 0.225 = quantiles 0.05625 (pure DP) + mean
    # 0.16875; the tight accountant scales every share by one factor t >= 1
    t = res.cost.leaves()[0].eps / 0.05
    assert t >= 1
    assert [c.eps for c in leaves[1:]] == pytest.approx([0.05625 * t, 0.16875 * t])
    assert leaves[0].eps == pytest.approx(0.225 * t)
    assert [c.kind for c in leaves] == ["pure", "pure", "gaussian"]
    assert leaves[0].mechanism.startswith("K-norm")
    # the joint release uses K-norm noise (pure DP), so pmwm's mean gets all of delta
    assert [c.delta for c in leaves] == pytest.approx([0.0, 0.0, 1e-5])
    assert np.all(np.isfinite(res.scree)) and np.all(res.scree >= 0)


def test_k_none_means_all_components(small_data):
    res = dp_scree(small_data, eps=0.5, delta=1e-5, random_state=0)
    assert res.k == 5 and res.directions.shape == (5, 5)


@pytest.mark.parametrize("n, eps", [(178, 1.0), (569, 0.5), (5000, 1.0), (5000, 3.0)])
def test_default_scree_meets_the_tight_total_with_no_more_noise(n, eps):
    delta = 1e-6
    plan = plan_scree(n, 13, 3, eps=eps, delta=delta)
    leaves = plan.cost.leaves()
    assert (plan.cost.eps, plan.cost.delta) == (eps, delta)
    assert tight_total(leaves, delta)[0] == pytest.approx(eps, rel=1e-6)
    assert math.fsum(c.delta for c in leaves) <= delta * (1 + 1e-12)
    # the basic split of the defaults: directions 0.35, the automatic scan share,
    # the joint release the rest; every part gets at least that much eps
    share = ScreeSplit().directions
    assert share == 0.35
    scan = _auto_scan_share(n, eps, _clip_ladder(None).size) * eps
    basic = [share * eps, scan, (1 - share) * eps - scan]
    assert [c.kind for c in leaves][:2] == ["gaussian", "pure"]
    assert all(c.eps >= b * (1 - 1e-12) for c, b in zip(leaves, basic, strict=True))
    # and no more noise: directions at their basic (eps, delta), the joint release
    # at the noise of the basic split (its choice of Laplace or Gaussian)
    assert leaves[0].sigma <= kendall_sigma(n, basic[0], leaves[0].delta) * (1 + 1e-12)
    pairs = n <= 4000
    before = _joint_noise(n, pairs, basic[2], delta / 2, "analytic", 3)[1]
    # the forecast's clip ratio: CLIP_RATIO at the 0.9 level, more for higher aims
    ratio = CLIP_RATIO * math.sqrt(max(1.0, 0.1 / (1.0 - plan.scan_level)))
    after = plan.forecast.quantities["trace_noise_relative"] / ratio
    assert after <= before * (1 + 1e-12)
    # K-norm (pure DP, its noise fixed by eps) or Gaussian with a recorded multiplier
    if leaves[2].kind == "pure":
        assert leaves[2].mechanism.startswith("K-norm") and leaves[2].delta == 0
    else:
        assert leaves[2].noise_multiplier is not None and leaves[2].sensitivity is None


def test_classic_scree_keeps_the_basic_split():
    plan = plan_scree(500, 5, 2, eps=0.8, delta=1e-6, calibration="classic")
    assert math.fsum(c.eps for c in plan.cost.leaves()) == pytest.approx(0.8)
    assert plan.cost.leaves()[0].eps == pytest.approx(0.35 * 0.8)  # split.directions


@pytest.mark.parametrize("n", [300, 5000])
def test_the_release_draws_exactly_the_recorded_noise(n):
    from dppca.kernels.pair_moments import moment_sensitivity

    X = np.random.default_rng(3).normal(size=(n, 4)) * [3.0, 2.0, 1.0, 0.5]
    res = dp_scree(X, 2, eps=1.0, delta=1e-6, random_state=0)
    directions, _, joint = res.cost.leaves()
    assert res.directions_release.sigma == pytest.approx(directions.sigma, rel=1e-12)
    all_pairs = n <= 4000
    if joint.kind == "pure":  # K-norm: Laplace scale 2 D / eps, conditioned (d = k + 1 = 3)
        sens = moment_sensitivity(n, res.clip_level, all_pairs=all_pairs, norm="knorm")
        expected = 2 * sens / joint.eps * math.sqrt(3 * 7 / (4 * 5))
    else:
        sens = moment_sensitivity(n, res.clip_level, all_pairs=all_pairs, norm="l2")
        expected = joint.multiplier * sens
    assert res.trace_sd == pytest.approx(expected, rel=1e-9)


def test_scree_classes_pickle_under_the_module_that_defines_them():
    # Pickles name a class by its module: each must be found there again.
    import importlib
    import pickle

    for cls in (ScreeResult, ClippedControl, PMWMControl, HuberControl, ScreePlan):
        assert getattr(importlib.import_module(cls.__module__), cls.__name__) is cls
    control = ClippedControl()
    assert pickle.loads(pickle.dumps(control)) == control


def test_every_extra_method_is_one_registered_part():
    # The plan prices and the release runs each method through its entry in
    # EXTRA_METHODS; a method named in METHODS without an entry could not run.
    from dppca.releases.scree.estimators import EXTRA_METHODS

    assert METHODS == ("clipped", *EXTRA_METHODS)
    for name, part in EXTRA_METHODS.items():
        control = _resolve_controls(None, (name,))[name]
        cost = part.cost(control, eps=0.4, delta=1e-6, k=3, calibration="analytic")
        assert cost.eps == pytest.approx(0.4) and cost.delta <= 1e-6


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_the_automatic_scan_share_buys_a_level_above_the_cap_at_large_n(eps):
    # At n = 2000 the smallest safe share (0.05) holds the scan below the 0.9
    # quantile (capped_quantile_level: 0.76 at eps = 0.5, 0.88 at eps = 1),
    # which biased PC1 by -16 % at eps = 0.5. The error-weighted share pays for
    # an aim of at least 0.9, and stays a public function of n, eps and the
    # ladder, inside [0.05, 0.3].
    n, bins = 2000, _clip_ladder(None).size
    share = _auto_scan_share(n, eps, bins)
    assert _SCAN_SHARE_MIN < share <= _SCAN_SHARE_MAX
    smallest = _scan_level(n // 2, 0.05 * eps, 0.475 * eps)
    chosen = _scan_level(n // 2, share * eps, (1 - share) / 2 * eps)
    assert smallest < 0.9 <= chosen
    assert _auto_scan_share(n, eps, bins) == share  # no randomness, no data


# --------------------------------------------------------------------------
# ties and zeros of the released values, and their public interval (issue 21)
# --------------------------------------------------------------------------


@pytest.fixture
def tied_and_zero(small_data):
    # seed 4: the monotone fit pools PC1 and PC2, and PC4 and PC5 are clipped to 0
    return dp_scree(small_data, 5, eps=0.5, delta=1e-5, random_state=4)


def test_ties_and_zeros_are_read_from_the_released_values(tied_and_zero):
    res = tied_and_zero
    np.testing.assert_array_equal(res.tie_groups, [[1, 1, 0, 0, 0]])
    np.testing.assert_array_equal(res.clipped_to_zero, [[False, False, False, True, True]])
    # the released values stay as the monotone fit left them
    np.testing.assert_array_equal(res.values[0], _mono(res.unpooled_values[0]))
    assert res.values[0, 0] == res.values[0, 1] > 0 and np.all(res.values[0, 3:] == 0)


def test_tie_groups_number_each_run_and_leave_zeros_out(tied_and_zero):
    values = np.array([[5.0, 5.0, 3.0, 3.0, 0.0], [4.0, 3.0, 3.0, 3.0, 0.0]])
    res = replace(tied_and_zero, methods=("clipped", "pmwm"), values=values)
    np.testing.assert_array_equal(res.tie_groups, [[1, 1, 2, 2, 0], [0, 1, 1, 1, 0]])
    np.testing.assert_array_equal(res.clipped_to_zero, values == 0)
    # without the fit nothing was pooled; a 0 is still an estimate clipped at 0
    raw = replace(res, mono=False)
    assert not np.any(raw.tie_groups)
    np.testing.assert_array_equal(raw.clipped_to_zero, values == 0)


def test_interval_halfwidth_is_two_noise_sds_fixed_by_the_plan(small_data):
    # With a public clip level the noise sd is a function of the plan alone:
    # the joint release's sd per unit clip level times the clip level.
    control = ClippedControl(clip=40.0)
    plan = plan_scree(200, 5, 5, eps=0.5, delta=1e-5, control=control)
    unit = _unit_sd(
        plan.noise, 200, plan.pairing == "all", plan.eps_m, plan.delta_m, plan.calibration, 5
    )
    for data in (small_data, 3.0 * small_data[::-1] + 1.0):  # other data, the same width
        res = dp_scree(data, 5, eps=0.5, delta=1e-5, control=control, random_state=4)
        np.testing.assert_allclose(res.interval_halfwidth, np.full((1, 5), 2 * 40.0 * unit))
    assert replace(res, noise_sd=None).interval_halfwidth is None
