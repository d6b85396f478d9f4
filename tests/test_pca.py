"""Tests of one private PCA (dp_pca): cost, analysis, scree, frames, tables, files."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import warnings

import numpy as np
import pytest
from scipy import stats

import dppca
from dppca import (
    AccuracyWarning,
    Budget,
    BudgetExceededError,
    InaccurateReleaseError,
    PCAResult,
    PCASplit,
    dp_pca,
    plan_pca,
)
from dppca.privacy.cost import PrivacyCost
from dppca.releases.composite import largest_stretch
from dppca.releases.pca.correlation import (
    correlation_eigen,
    correlation_from_tau,
    entry_noise_var,
)
from dppca.releases.pca.draw import frame_ratio, review_fit, tau_variance_noise_sd
from dppca.releases.pca.frame import coarse_ladder, derived_frame
from dppca.releases.pca.result import SCORE_LEFT_OUT

UNITS = np.array([1.0, 100.0, 0.01, 1e4])
SHIFT = np.array([0.0, 5e3, 1.0, -2e5])


def _equicorrelated(rng: np.random.Generator, n: int, rho: float = 0.6) -> np.ndarray:
    """A Gaussian table whose correlation matrix has rho off the diagonal (4 columns)."""
    cov = np.full((4, 4), rho) + (1.0 - rho) * np.eye(4)
    return rng.multivariate_normal(np.zeros(4), cov, size=n)


def _distinct(rng: np.random.Generator, n: int) -> np.ndarray:
    """A Gaussian table with well separated correlation eigenvalues, in raw units."""
    q = np.linalg.qr(np.arange(1.0, 17.0).reshape(4, 4) ** 0.5)[0]
    cov = q @ np.diag([2.2, 1.1, 0.5, 0.2]) @ q.T
    return rng.multivariate_normal(np.zeros(4), cov, size=n) * UNITS + SHIFT


def _raw(rng: np.random.Generator, n: int = 400) -> np.ndarray:
    """The same table in very different units and locations."""
    return _equicorrelated(rng, n) * UNITS + SHIFT


def _fit(X: np.ndarray, **kw: object) -> PCAResult:
    kw = {"eps": 2.0, "delta": 1e-6, "random_state": 3, "accuracy": "ignore", **kw}
    return dp_pca(X, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- cost


@pytest.mark.parametrize(
    "options",
    [{}, {"standardize": False}, {"scales": UNITS}, {"standardize": False, "scales": UNITS}],
)
def test_fit_records_exactly_its_eps_and_spends_nearly_all(rng, options):
    fit = _fit(_raw(rng), **options)
    assert (fit.cost.eps, fit.cost.delta) == (2.0, 1e-6)
    # the parts compose tightly to at most eps, and the stretch leaves < 1e-5 unused
    eps, _ = dppca.tight_total(list(fit.parts.values()), 1e-6)
    assert 2.0 * (1 - 1e-5) <= eps <= 2.0 * (1 + 1e-9)
    assert math.fsum(c.delta for c in fit.parts.values()) <= 1e-6 * (1 + 1e-12)


def test_budget_is_checked_and_charged_once(rng):
    X = _raw(rng)
    budget = Budget(2.5, 1e-6)
    _fit(X, budget=budget)
    assert budget.spent[0] == pytest.approx(2.0)
    with pytest.raises(BudgetExceededError):
        _fit(X, budget=budget)
    assert budget.spent[0] == pytest.approx(2.0)  # the refused fit charged nothing


def test_largest_stretch_meets_eps_from_below():
    def build(t: float) -> list[PrivacyCost]:
        g = PrivacyCost(
            0.5 * t, 5e-7, "g", "a", kind="gaussian", sensitivity=1.0,
            sigma=dppca.privacy.mechanisms.gaussian_sigma(1.0, 0.5 * t, 5e-7, "analytic"),
        )  # fmt: skip
        return [g, PrivacyCost(0.5 * t, 0.0, "pure", "b", kind="pure")]

    t, parts = largest_stretch(build, lambda b: b, 1.0, 1e-6)
    total = dppca.tight_total(parts, 1e-6)[0]
    assert t > 1.0 and 1.0 - 1e-6 <= total <= 1.0


# --------------------------------------------------------------------------- analysis


def test_standardized_fit_is_the_same_in_any_units(rng):
    # Kendall's tau reads only signs of differences: the directions and the free scree
    # of a standardised fit do not change when columns are rescaled or shifted.
    Z = _equicorrelated(rng, 300)
    a = _fit(Z, score=False)
    b = _fit(Z * UNITS + SHIFT, score=False)
    np.testing.assert_array_equal(a.directions.directions, b.directions.directions)
    np.testing.assert_array_equal(a.variances, b.variances)


def test_the_analysis_reaches_every_part(rng):
    X = _raw(rng, 3000)
    fit = _fit(X, score=True)
    assert fit.analysis == "standardized"
    assert fit.directions.estimator == "tau"
    assert fit.scree.methods == ("sin-tau",) and "scree" not in fit.parts
    assert fit.correlation_matrix is not None
    assert fit.scale_source == "private" and fit.score is not None
    np.testing.assert_array_equal(fit.score.scales, fit.scales)
    assert fit.variances.sum() <= fit.p + 1e-12  # correlation units, never raw units

    units = _fit(X, standardize=False)
    assert units.analysis == "units" and units.directions.estimator == "kendall"
    assert units.scree.methods == ("clipped",) and units.correlation_matrix is None
    assert units.scales is None and "units" in units.estimates

    scaled = _fit(X, standardize=False, scales=UNITS)
    assert scaled.analysis == "scaled"
    np.testing.assert_array_equal(scaled.scales, UNITS)


def test_plan_says_what_it_estimates_without_data():
    plan = plan_pca(400, 4, eps=1.0, delta=1e-6, standardize=False)
    assert "depends on the units of the columns" in plan.estimates
    assert "correlation" in plan_pca(400, 4, eps=1.0, delta=1e-6).estimates


def test_score_plot_left_out_where_private_scales_fail(rng):
    plan = plan_pca(400, 4, eps=1.0, delta=1e-6)
    assert [name for name, _ in plan.steps] == ["directions"]
    assert plan.notes[0].startswith(SCORE_LEFT_OUT)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dp_pca(_raw(rng), eps=1.0, delta=1e-6, random_state=0)
    # the default rule at work is a note on the result, not a warning
    assert not [w for w in caught if SCORE_LEFT_OUT in str(w.message)]
    assert fit.score is None and fit.cost.eps == 1.0
    assert fit.score_note == plan.notes[0] and fit.score_note in str(fit.summary())
    # public scales or bounds serve at any n; score=True forces private scales
    assert [n for n, _ in plan_pca(400, 4, eps=1.0, delta=1e-6, scales=UNITS).steps] == [
        "directions",
        "score",
    ]
    forced = plan_pca(400, 4, eps=1.0, delta=1e-6, score=True)
    assert "scales" in forced.plans and "private scales may fail" in " ".join(
        forced.forecast.problems
    )


def test_score_left_out_by_default_draws_a_placeholder_that_says_why(rng):
    import matplotlib.pyplot as plt

    X = _raw(rng)
    fit = _fit(X, eps=1.0)
    assert fit.score is None and fit.score_note is not None
    _, ax = plt.subplots()
    assert fit.plot("score", ax=ax) is ax
    assert "score plot needs" in " ".join(t.get_text() for t in ax.texts).replace("\n", " ")
    # asked to leave it out: no note, and asking for the picture is an error
    off = _fit(X, eps=1.0, score=False)
    assert off.score_note is None and "Notes" not in str(off.summary())
    with pytest.raises(ValueError, match="no score plot"):
        off.plot("score")


def test_compare_is_the_matching_non_private_analysis(rng):
    X = _raw(rng, 600)
    fit = _fit(X, compare=True, score=False)
    corr = np.linalg.eigvalsh(np.corrcoef(X, rowvar=False))[::-1]
    np.testing.assert_allclose(fit.nonprivate_variances, corr)
    assert not fit.private and "nonprivate_variances" in fit.nonprivate_parts()
    np.testing.assert_allclose(fit.scree.nonprivate_values, corr)
    units = _fit(X, compare=True, standardize=False, score=False)
    cov = np.linalg.eigvalsh(np.cov(X, rowvar=False))[::-1][: units.k]
    np.testing.assert_allclose(units.nonprivate_variances, cov)


# --------------------------------------------------------------------------- the scree


def test_sin_transform_matches_a_plain_computation(rng):
    p = 5
    A = rng.uniform(-0.3, 0.3, size=(p, p))
    A = (A + A.T) / 2
    np.fill_diagonal(A, 1 / p)
    R = correlation_from_tau(A)
    for i in range(p):
        for j in range(p):
            want = 1.0 if i == j else math.sin(math.pi / 2 * max(-1.0, min(1.0, p * A[i, j])))
            assert R[i, j] == pytest.approx(want, abs=1e-15)
    values, vectors = correlation_eigen(R, 0.01, p, debias=False)
    np.testing.assert_allclose(values, np.clip(np.linalg.eigvalsh(R)[::-1], 0, None))
    np.testing.assert_allclose(vectors.T @ R @ vectors, np.diag(np.linalg.eigvalsh(R)[::-1]),
                               atol=1e-12)  # fmt: skip


def test_debias_subtracts_the_second_order_lift():
    R = np.full((4, 4), 0.6) + 0.4 * np.eye(4)
    sigma = 0.02
    plain, _ = correlation_eigen(R, sigma, 4, debias=False)
    debiased, _ = correlation_eigen(R, sigma, 4)
    s2 = entry_noise_var(R, sigma, 4).sum() / 12
    np.testing.assert_allclose(plain - debiased, 3 * s2 / np.maximum(plain, 1.0))


def test_pve_of_a_standardised_gaussian_table(rng):
    # Correlation rho = 0.6 over 4 columns: eigenvalues 2.8, 0.4, 0.4, 0.4, PVE1 = 0.7,
    # whatever the units. The sample top eigenvalue has sd about sqrt(2 / n) * 2.8 (0.07
    # at n = 3000, 0.018 in PVE); the noise's sd in PVE is the scree's public noise_sd / p.
    # Accept 4 of each (a chance below 1e-4 of a false failure).
    X = _raw(rng, 3000)
    fit = _fit(X, score=False)
    noise = float(fit.scree.noise_sd[0, 0]) / fit.p
    assert abs(fit.pve[0] - 0.7) <= 4 * (noise + math.sqrt(2 / 3000) * 2.8 / 4)
    assert fit.pve.sum() <= 1.0 + 1e-12 and np.all(fit.pve >= 0)


def test_noise_sd_of_the_scree_matches_the_noise(rng):
    # The first-order sd of v' R v against 400 draws of the release's noise on a fixed
    # matrix: the sample sd of 400 normals is within 15% of its sd with probability
    # above 0.997 (chi2 with 399 degrees of freedom).
    p, sigma = 4, 0.01
    tau = np.full((p, p), 0.4)
    np.fill_diagonal(tau, 1.0)
    v = np.linalg.eigh(np.sin(np.pi / 2 * tau))[1][:, ::-1][:, :2]
    draws = []
    for _ in range(400):
        e = rng.normal(scale=sigma / math.sqrt(2), size=(p, p))
        e = np.triu(e, 1) + np.triu(e, 1).T
        R = correlation_from_tau(tau / p + e)
        draws.append(np.einsum("ij,ik,kj->j", v, R, v))
    want = tau_variance_noise_sd(v, sigma, p, np.sin(np.pi / 2 * tau))
    lo, hi = np.sqrt(stats.chi2.ppf([0.0015, 0.9985], 399) / 399)
    ratio = np.std(draws, axis=0, ddof=1) / want
    assert np.all((ratio > lo * 0.97) & (ratio < hi * 1.03))  # 3% for the first order


# --------------------------------------------------------------------------- frames


def test_frame_centres_have_rank_utilities_of_sensitivity_one(rng):
    # The frame's centres are exponential-mechanism medians on public ladders (the fine
    # one is built from released values); replacing one score moves every count of
    # values at or below an edge, and so every utility, by at most one.
    x = rng.normal(size=300)
    ladder = coarse_ladder(1e6, 1.0)
    for _ in range(20):
        y = x.copy()
        y[rng.integers(300)] = rng.normal(scale=1e3)
        counts = [np.searchsorted(np.sort(z), ladder, side="right") for z in (x, y)]
        target = 150.0
        util = [-np.maximum(np.maximum(c[:-1] - target, target - c[1:]), 0.0) for c in counts]
        assert np.abs(util[0] - util[1]).max() <= 1.0


def test_derived_frame_covers_the_scores_wherever_they_sit(rng):
    # n = 500 normal scores with sd (2, 1), shifted far from 0; frame eps 2 gives each
    # centre bin a chance below 1e-6 of landing 0.4 n ranks off (em_failure_bound).
    for shift in (0.0, 1e3, -5e3):  # up to 2500 sds from 0 (the fine ladder's reach)
        s = rng.normal(size=(500, 2)) * [2.0, 1.0] + shift
        (x0, x1), (y0, y1) = derived_frame(s, (2.0, 1.0), eps=2.0, bound=1e6, inflate=0.2, rng=rng)
        inside = (s[:, 0] >= x0) & (s[:, 0] <= x1) & (s[:, 1] >= y0) & (s[:, 1] <= y1)
        assert inside.mean() > 0.97
        width = np.ptp(np.percentile(s, [0.5, 99.5], axis=0), axis=0)
        assert np.all(np.array([x1 - x0, y1 - y0]) / width < 3)


def test_fit_frames_within_three_times_the_data(rng):
    X = _distinct(rng, 500)
    good = 0
    for seed in range(5):
        fit = _fit(X, scales=UNITS, random_state=seed)
        s = (X / UNITS) @ fit.score.directions
        width = np.ptp(np.percentile(s, [0.5, 99.5], axis=0), axis=0)
        frame = np.array([np.ptp(fit.score.xlim), np.ptp(fit.score.ylim)])
        good += bool(np.all((frame / width < 3) & (frame / width > 1 / 3)))
        assert fit.score.frame_source == "fit"
    assert good == 5


def _widened(fit: PCAResult, factor: float) -> PCAResult:
    x0, x1 = fit.score.xlim
    c, h = (x0 + x1) / 2, (x1 - x0) / 2 * factor
    score = dataclasses.replace(fit.score, xlim=(c - h, c + h))
    return dataclasses.replace(fit, score=score, notes=())


@pytest.mark.parametrize("factor", [20.0, 1 / 20])
def test_a_frame_far_from_the_released_spread_is_flagged(rng, factor):
    X = _distinct(rng, 2000)
    plan = plan_pca(2000, 4, eps=2.0, delta=1e-6, scales=UNITS, variables=("V1", "V2", "V3", "V4"))
    fit = _fit(X, scales=UNITS)
    assert frame_ratio(fit) is not None and np.all(np.abs(frame_ratio(fit)) < 3)
    with pytest.warns(AccuracyWarning, match="score frame disagrees"):
        reviewed = review_fit(plan, _widened(fit, factor))
    # the problem is on the fit and on its score plot, which may be saved or drawn alone
    assert any("score frame disagrees" in note for note in reviewed.notes)
    assert reviewed.score is not None
    assert any("score frame disagrees" in note for note in reviewed.score.notes)
    strict = dataclasses.replace(plan, accuracy="error")
    with pytest.raises(InaccurateReleaseError) as info:
        review_fit(strict, _widened(fit, factor))
    assert isinstance(info.value.result, PCAResult)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        review_fit(plan, fit)  # the frame as drawn passes


def test_a_frame_the_variances_cannot_check_is_flagged(rng):
    # In units, PC2 of this table has variance 0.4 * 100^2 beside PC1's 1e8: the clipped
    # scree cannot tell it from its noise at n = 400, so its frame is not vouched for.
    with pytest.warns(AccuracyWarning, match="cannot be checked"):
        fit = dp_pca(_raw(rng), eps=1.0, delta=1e-6, standardize=False, random_state=0)
    assert any("cannot be checked" in note for note in fit.notes)


# --------------------------------------------------------------------------- tables, plots


def test_summary_tables(rng):
    fit = _fit(_raw(rng, 3000))
    summary = fit.summary()
    assert list(summary.importance.columns) == ["variance", "pve", "cumulative_pve"]
    assert list(summary.importance.index) == [f"PC{i}" for i in range(1, 5)]
    np.testing.assert_allclose(summary.importance["cumulative_pve"], np.cumsum(fit.pve))
    assert list(summary.budget.index) == [*fit.parts, "total"]
    assert summary.budget.loc["total", "eps"] == 2.0
    assert summary.budget["share"].drop("total").sum() == pytest.approx(1.0)
    text = str(summary)
    assert "Importance of components" in text and "Budget" in text
    assert repr(fit).startswith("PCAResult(analysis='standardized'")


@pytest.mark.parametrize("kind", ["scree", "score", "loading", "variable", "biplot"])
def test_plot_kinds(rng, kind):
    import matplotlib.pyplot as plt

    fit = _fit(_raw(rng, 3000))
    module = {"variable": "dppca.plotting.variables", "biplot": "dppca.plotting.biplot"}
    if kind in module and importlib.util.find_spec(module[kind]) is None:
        with pytest.raises(NotImplementedError, match=kind):
            fit.plot(kind)
        return
    _, ax = plt.subplots()
    assert fit.plot(kind, ax=ax) is ax


def test_plot_refuses_unknown_kinds_and_missing_scores(rng):
    fit = _fit(_raw(rng), score=False)
    with pytest.raises(ValueError, match="kind"):
        fit.plot("pie")
    with pytest.raises(ValueError, match="score=False"):
        fit.plot("score")


@pytest.mark.parametrize("options", [{}, {"standardize": False}])
def test_round_trip_through_a_release_file(rng, tmp_path, options):
    fit = _fit(_raw(rng, 3000), compare=True, **options)
    path = tmp_path / "fit.json"
    with pytest.raises(ValueError, match="non-private"):
        dppca.save_release(fit, path)
    dppca.save_release(fit, path, drop_nonprivate=True)
    back = dppca.load_release(path, kind=PCAResult)
    assert back.private and not back.has_comparison
    for name in ("variances", "pve", "scales"):
        a, b = getattr(fit, name), getattr(back, name)
        assert (a is None and b is None) or np.array_equal(a, b)
    np.testing.assert_array_equal(back.directions.directions, fit.directions.directions)
    np.testing.assert_array_equal(back.score.probs["add"], fit.score.probs["add"])
    assert dict(back.parts) == dict(fit.parts) and back.cost == fit.cost


# --------------------------------------------------------------------------- input errors


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"standardize": "yes"}, "standardize"),
        ({"split": {"loading": 0.5}}, "split"),
        ({"split": PCASplit}, "split"),
        ({"scales": [1.0, 2.0]}, "scales"),
        ({"scales": [1.0, 2.0, -1.0, 1.0]}, "scales"),
        ({"components": (1, 9)}, "components"),
        ({"k": 0}, "k"),
        ({"eps": -1.0}, "eps"),
        ({"score": "no"}, "score"),
    ],
)
def test_invalid_input_names_the_argument(rng, options, match):
    with pytest.raises((TypeError, ValueError), match=match):
        _fit(_raw(rng, 100), **options)


def test_split_weights_are_checked():
    with pytest.raises(ValueError, match=r"split\.frame"):
        PCASplit(frame=0.0)
    shares = PCASplit(directions=3.0, score=1.0).shares(("directions", "score"), "units")
    assert shares == {"directions": 0.75, "score": 0.25}


# --------------------------------------------------------------------------- the one solver


@pytest.mark.parametrize("release", ["dp_scree", "dp_score", "dp_pc_dir"])
def test_private_scales_releases_spend_their_eps(rng, release):
    # with scale="private" the scales and the release are stretched together by the
    # composites' solver: the recorded (tight) total is the eps asked (was 0.73-0.95)
    X = rng.normal(size=(500, 4))
    result = getattr(dppca, release)(
        X, eps=1.0, delta=1e-6, scale="private", random_state=0, accuracy="ignore"
    )
    assert 0.99 <= dppca.tight_total([result.cost], 1e-6)[0] <= 1.0 + 1e-9


def test_failed_private_scales_are_reported_after_the_release(rng):
    # score=True forces private scales at 150 rows, where the data-free forecast warns
    # first; columns whose scale came out as "about 0" are then named after the release.
    X = rng.normal(size=(150, 6)) * np.logspace(-2, 3, 6)
    with pytest.warns(AccuracyWarning) as record:
        fit = dp_pca(X, eps=1.0, delta=1e-6, score=True, random_state=0)
    messages = [str(w.message) for w in record]
    assert any("private scales may fail" in m for m in messages)  # before spending
    if np.any(fit.scales == 1.0):  # a column left unscaled
        assert any("own units" in m for m in messages)
        assert any("own units" in note for note in fit.notes)


@pytest.mark.parametrize("standardize", [True, False])
def test_a_missing_cell_changes_no_public_quantity_of_the_fit(standardize):
    # Replace-one: the neighbour's row 7 gains a missing cell. Under missing="zero"
    # n, every sigma and the cost are public and must not move; both fits run.
    rng = np.random.default_rng(5)
    X = rng.standard_normal((200, 4)) @ np.diag([1.0, 10.0, 100.0, 0.1])
    Y = X.copy()
    Y[7, 2] = np.nan
    fits = [
        dp_pca(
            Z,
            eps=1.0,
            delta=1e-6,
            standardize=standardize,
            missing="zero",
            accuracy="ignore",
            random_state=3,
        )
        for Z in (X, Y)
    ]
    a, b = fits
    assert a.n == b.n == 200
    assert a.directions.sigma == b.directions.sigma
    assert [(c.eps, c.delta) for c in a.cost.leaves()] == [
        (c.eps, c.delta) for c in b.cost.leaves()
    ]
    with pytest.raises(ValueError, match="missing='zero'"):
        dp_pca(Y, eps=1.0, delta=1e-6, standardize=standardize, random_state=3)
