"""Tests of private (dp_pc_dir) and ordinary (pc_dir) directions."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dppca import (
    Budget,
    BudgetExceededError,
    PrivacyWarning,
    TiedRowsError,
    dp_pc_dir,
    pc_dir,
    spherical_kendall,
)
from dppca.core.exceptions import AccuracyWarning, InaccurateReleaseError
from dppca.privacy.mechanisms import kendall_sensitivity, kendall_sigma, symmetric_gaussian_noise
from dppca.releases.directions.result import orient_signs


def test_directions_are_orthonormal_and_ordered(small_data):
    res = dp_pc_dir(small_data, eps=0.5, delta=1e-5, random_state=0)
    V = res.directions
    assert V.shape == (5, 5)
    np.testing.assert_allclose(V.T @ V, np.eye(5), atol=1e-12)
    assert np.all(np.diff(res.eigenvalues) <= 0)
    np.testing.assert_allclose(res.noisy_matrix @ V, V * res.eigenvalues, atol=1e-12)


def test_release_is_kendall_plus_the_seeded_noise(small_data):
    res = dp_pc_dir(small_data, 2, eps=0.5, delta=1e-5, random_state=42)
    n, p = small_data.shape
    sigma = kendall_sigma(n, 0.5, 1e-5)
    expected = spherical_kendall(small_data) + symmetric_gaussian_noise(
        p, sigma, np.random.default_rng(42)
    )
    np.testing.assert_allclose(res.noisy_matrix, expected, atol=1e-15)
    assert res.sigma == sigma
    assert (res.n, res.k, res.p) == (n, 2, p)


def test_same_seed_same_output_and_generator_accepted(small_data):
    a = dp_pc_dir(small_data, eps=0.5, delta=1e-5, random_state=3)
    b = dp_pc_dir(small_data, eps=0.5, delta=1e-5, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a.noisy_matrix, b.noisy_matrix)
    np.testing.assert_array_equal(a.directions, b.directions)
    c = dp_pc_dir(small_data, eps=0.5, delta=1e-5)  # fresh entropy
    assert not np.array_equal(a.noisy_matrix, c.noisy_matrix)


def test_sign_rule_largest_entry_positive(small_data):
    res = dp_pc_dir(small_data, eps=0.5, delta=1e-5, random_state=1)
    V = res.directions
    lead = V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])]
    assert np.all(lead > 0)
    flipped = orient_signs(-V)
    np.testing.assert_array_equal(flipped, V)


def test_recovers_leading_direction_with_large_n(rng):
    # Variances 9, 1, 1, 1: PC1 is e1 for covariance and Kendall alike.
    X = rng.normal(size=(3000, 4)) * np.array([3.0, 1.0, 1.0, 1.0])
    res = dp_pc_dir(X, 1, eps=0.5, delta=1e-5, random_state=0)
    assert abs(res.directions[0, 0]) > 0.99


def test_cost_is_recorded_and_repr(small_frame):
    res = dp_pc_dir(small_frame, 2, eps=0.25, delta=1e-6, random_state=0)
    assert (res.eps, res.delta) == (0.25, 1e-6)
    assert res.cost.mechanism == "gaussian (analytic)"  # the default calibration
    assert res.sensitivity == "tight" and res.bounds is None
    assert res.forecast is not None and res.forecast.release == "directions"
    assert "Kendall" in res.cost.released
    assert repr(res) == "DirectionsResult(p=5, k=2, n=200, eps=0.25, delta=1e-06)"
    assert res.variables == ("a", "b", "c", "d", "e")
    frame = res.to_frame()
    assert list(frame.columns) == ["PC1", "PC2"] and list(frame.index) == list("abcde")
    assert res.private


def test_result_is_frozen_and_read_only(small_data):
    res = dp_pc_dir(small_data, eps=0.5, delta=1e-5, random_state=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.sigma = 0.0
    with pytest.raises(ValueError):
        res.directions[0, 0] = 1.0
    assert not any("seed" in f.name or "random" in f.name for f in dataclasses.fields(res))


def test_large_eps_warns_classic_not_analytic(small_data):
    with pytest.warns(PrivacyWarning, match="analytic"):
        dp_pc_dir(small_data, eps=2.0, delta=1e-5, random_state=0, calibration="classic")
    res = dp_pc_dir(small_data, eps=2.0, delta=1e-5, random_state=0)
    assert res.cost.mechanism == "gaussian (analytic)"


def test_ties_error_and_zero(small_data):
    X = small_data.copy()
    X[7] = X[3]
    with pytest.raises(TiedRowsError):
        dp_pc_dir(X, eps=0.5, delta=1e-5, random_state=0, ties="error")
    res = dp_pc_dir(X, eps=0.5, delta=1e-5, random_state=0)  # ties="zero" is the default
    assert res.directions.shape == (5, 5)


def test_budget_is_checked_before_and_spent_after(small_data):
    budget = Budget(eps=1.0, delta=1e-5)
    dp_pc_dir(small_data, eps=0.6, delta=5e-6, random_state=0, budget=budget)
    assert budget.spent == pytest.approx((0.6, 5e-6))
    # The budget decides by the tight total (changed deliberately from basic
    # composition, which refused this second release): the two Gaussians
    # compose exactly to about eps 0.61 at delta 1e-5 (the classic sigma is
    # loose), and a third at 0.9 (analytic) takes the total to about 1.09.
    dp_pc_dir(small_data, eps=0.6, delta=5e-6, random_state=0, budget=budget)
    assert budget.spent_tight[0] < 1.0 < budget.spent[0]
    with pytest.raises(BudgetExceededError, match="remains"):
        dp_pc_dir(
            small_data, eps=0.9, delta=5e-6, random_state=0, budget=budget, calibration="analytic"
        )
    assert len(budget.ledger) == 2


def test_failed_release_spends_nothing(small_data):
    budget = Budget(eps=1.0, delta=1e-5)
    X = small_data.copy()
    X[1] = X[0]
    with pytest.raises(TiedRowsError):
        dp_pc_dir(X, eps=0.5, delta=1e-6, budget=budget, ties="error")
    assert budget.ledger == ()


@pytest.mark.parametrize(
    "kwargs, exc, word",
    [
        ({"eps": 0.0, "delta": 1e-5}, ValueError, "eps"),
        ({"eps": -1.0, "delta": 1e-5}, ValueError, "eps"),
        ({"eps": float("nan"), "delta": 1e-5}, ValueError, "eps"),
        ({"eps": float("inf"), "delta": 1e-5}, ValueError, "eps"),
        ({"eps": "1", "delta": 1e-5}, TypeError, "eps"),
        ({"eps": True, "delta": 1e-5}, TypeError, "eps"),
        ({"eps": None, "delta": 1e-5}, TypeError, "eps"),
        ({"eps": 0.5, "delta": 0.0}, ValueError, "delta"),
        ({"eps": 0.5, "delta": 1.0}, ValueError, "delta"),
        ({"eps": 0.5, "delta": "x"}, TypeError, "delta"),
        ({"eps": 0.5, "delta": 1e-5, "random_state": "seed"}, TypeError, "random_state"),
        ({"eps": 0.5, "delta": 1e-5, "random_state": -1}, ValueError, "random_state"),
        ({"eps": 0.5, "delta": 1e-5, "ties": "ignore"}, ValueError, "ties"),
    ],
)
def test_bad_privacy_arguments_raise(small_data, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        dp_pc_dir(small_data, **kwargs)


@pytest.mark.parametrize(
    "k, exc",
    [(0, ValueError), (6, ValueError), (2.0, TypeError), (True, TypeError), ("2", TypeError)],
)
def test_bad_k_raises(small_data, k, exc):
    with pytest.raises(exc, match=r"k must"):
        dp_pc_dir(small_data, k, eps=0.5, delta=1e-5)


def test_numpy_scalars_are_accepted(small_data):
    res = dp_pc_dir(
        small_data,
        np.int64(2),
        eps=np.float32(0.5),
        delta=np.float64(1e-5),
        random_state=np.int64(1),
    )
    assert res.k == 2


def test_input_is_not_modified(small_frame):
    before = small_frame.copy()
    dp_pc_dir(small_frame, eps=0.5, delta=1e-5, random_state=0)
    pd.testing.assert_frame_equal(small_frame, before)


def test_pc_dir_matches_covariance_eigenvectors(small_data):
    res = pc_dir(small_data, 3)
    values, vectors = np.linalg.eigh(np.cov(small_data, rowvar=False))
    order = np.argsort(values)[::-1][:3]
    np.testing.assert_allclose(res.eigenvalues, values[order], rtol=1e-12)
    np.testing.assert_allclose(np.abs(res.directions), np.abs(vectors[:, order]), atol=1e-10)
    assert not res.private and res.cost is None and res.noisy_matrix is None
    assert "non-private" in repr(res)


def test_tight_sensitivity_is_attained_exactly():
    # All rows but one at the origin (their pairs are ties and add nothing); the
    # last at e1 in X and at e2 in the neighbour X'. Each of its n - 1 pairs changes
    # from e1 e1' to e2 e2' with weight 2 / (n (n - 1)): the matrices differ by
    # (2 / n) (e1 e1' - e2 e2'), of Frobenius norm 2 sqrt(2) / n, the bound.
    n, p = 50, 3
    X = np.zeros((n, p))
    Y = X.copy()
    X[-1], Y[-1] = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    move = np.linalg.norm(spherical_kendall(X, ties="zero") - spherical_kendall(Y, ties="zero"))
    assert move == pytest.approx(kendall_sensitivity(n), rel=1e-12)
    assert kendall_sensitivity(n) == pytest.approx(2 * math.sqrt(2) / n, rel=1e-15)


@pytest.mark.parametrize("calibration", ["classic", "analytic"])
def test_tight_sigma_is_the_seed_sigma_times_the_sensitivity_ratio(calibration):
    # sigma is linear in the sensitivity for both calibrations
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        tight = kendall_sigma(500, 0.7, 1e-6, calibration, "tight")
        seed = kendall_sigma(500, 0.7, 1e-6, calibration, "seed")
    assert tight / seed == pytest.approx(2 * math.sqrt(2) / 4, rel=1e-12)


def test_seed_options_reproduce_the_reference_sigma(small_data):
    res = dp_pc_dir(
        small_data,
        eps=0.5,
        delta=1e-5,
        random_state=0,
        calibration="classic",
        sensitivity="seed",
    )
    n = small_data.shape[0]
    assert res.sigma == pytest.approx(4 * math.sqrt(2 * math.log(1.25 / 1e-5)) / (n * 0.5))


def test_bounds_clip_the_data_before_the_release(small_data):
    lower, upper = small_data.min(axis=0) + 0.5, small_data.max(axis=0) - 0.5
    res = dp_pc_dir(
        small_data, eps=0.5, delta=1e-5, random_state=3, bounds=np.column_stack([lower, upper])
    )
    ref = dp_pc_dir(np.clip(small_data, lower, upper), eps=0.5, delta=1e-5, random_state=3)
    np.testing.assert_array_equal(res.noisy_matrix, ref.noisy_matrix)
    np.testing.assert_array_equal(res.bounds, np.column_stack([lower, upper]))
    with pytest.raises(ValueError, match="lower < upper"):
        dp_pc_dir(small_data, eps=0.5, delta=1e-5, bounds=(1.0, 1.0))
    with pytest.raises(ValueError, match="every analysed variable"):
        dp_pc_dir(
            pd.DataFrame(small_data, columns=list("abcde")),
            eps=0.5,
            delta=1e-5,
            bounds={"a": (0, 1)},
        )


def test_large_delta_is_refused_unless_allowed(small_data):
    with pytest.raises(ValueError, match="1/n"):
        dp_pc_dir(small_data, eps=0.5, delta=0.01)
    dp_pc_dir(small_data, eps=0.5, delta=0.01, allow_large_delta=True, random_state=0)


def test_forecast_warns_or_refuses_before_reading_the_data():
    # n = 20, p = 10, eps = 0.1: sigma_K * sqrt(2 p) is far above the limit 0.15,
    # so the forecast refuses before the Kendall matrix is computed (which would
    # raise on these exact duplicate rows under ties="error").
    X = np.ones((20, 10))
    with pytest.raises(InaccurateReleaseError, match="mostly noise"):
        dp_pc_dir(X, eps=0.1, delta=1e-3, accuracy="error", ties="error")
    with pytest.warns(AccuracyWarning, match="mostly noise"):
        res = dp_pc_dir(np.arange(200.0).reshape(20, 10) ** 1.5, eps=0.1, delta=1e-3)
    assert not res.forecast.ok
    assert res.forecast.quantities["direction_noise_norm"] == pytest.approx(
        res.sigma * math.sqrt(20)
    )


def test_directions_cost_records_its_gaussian_noise():
    from dppca.privacy.mechanisms import kendall_sensitivity

    X = np.random.default_rng(5).normal(size=(60, 4))
    res = dp_pc_dir(X, 2, eps=0.5, delta=1e-5, random_state=0, calibration="analytic")
    cost = res.cost
    assert cost.kind == "gaussian" and cost.sigma == res.sigma
    assert cost.sensitivity == kendall_sensitivity(60)
    assert (cost.eps, cost.delta) == (0.5, 1e-5)
