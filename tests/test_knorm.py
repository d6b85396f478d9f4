"""The K-norm mechanism of the scree's joint moments: the norm, the sampler, the noise."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dppca.core.validation import HardenedGenerator
from dppca.privacy import mechanisms
from dppca.privacy.knorm import moment_knorm, moment_knorm_noise, moment_knorm_variance


def _in_difference_body(x: np.ndarray) -> bool:
    """Plain check: is there b in P with b + x in P, P = {w >= 0, sum w <= s <= 1}?"""
    k = x.size - 1
    u, t = x[:-1], x[-1]
    # variables b = (w, s); rows A b <= c for b in P and for b + x in P
    rows, rhs = [], []
    for shift_w, shift_s in ((np.zeros(k), 0.0), (u, t)):
        for j in range(k):  # -(w_j + shift) <= 0
            row = np.zeros(k + 1)
            row[j] = -1.0
            rows.append(row)
            rhs.append(shift_w[j])
        row = np.append(np.ones(k), -1.0)  # sum(w) - s <= shift_s - sum(shift_w)
        rows.append(row)
        rhs.append(shift_s - shift_w.sum())
        row = np.zeros(k + 1)  # s <= 1 - shift_s
        row[-1] = 1.0
        rows.append(row)
        rhs.append(1.0 - shift_s)
    res = optimize.linprog(
        np.zeros(k + 1), A_ub=np.array(rows), b_ub=np.array(rhs), bounds=[(None, None)] * (k + 1)
    )
    return res.status == 0


@pytest.mark.parametrize("k", [1, 3])
def test_the_norm_is_the_gauge_of_the_difference_body(k):
    # ||x||_P <= 1 exactly when x is the difference of two points of P, checked
    # by a linear programme on random points (away from the boundary itself).
    rng = np.random.default_rng(k)
    checked = 0
    for _ in range(400):
        x = rng.uniform(-1.2, 1.2, size=k + 1)
        norm = float(moment_knorm(x))
        if abs(norm - 1.0) < 1e-6:
            continue
        assert (norm <= 1.0) == _in_difference_body(x), x
        checked += 1
    assert checked > 300


def test_the_norm_dominates_half_the_l1_norm_and_is_homogeneous():
    # The Laplace proposal of the sampler is valid because ||x||_1 <= 2 ||x||_P.
    x = np.random.default_rng(0).standard_normal((1000, 5))
    norm = moment_knorm(x)
    assert np.all(np.abs(x).sum(axis=1) <= 2 * norm * (1 + 1e-12))
    np.testing.assert_allclose(moment_knorm(-3.0 * x), 3.0 * norm, rtol=1e-12)


def _draws(k: int, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    zero = np.zeros(k + 1)
    return np.array([moment_knorm_noise(zero, 1.0, rng) for _ in range(count)])


def test_the_noise_has_the_knorm_density():
    # Density proportional to exp(-2 ||x||_P / b) in d dimensions: the radius
    # 2 ||x||_P / b is Gamma(d, 1) distributed. At the right distribution a KS
    # p-value below 1e-3 happens with probability 1e-3; plain Laplace proposals
    # (the sampler without its acceptance step) fail the same check clearly.
    k, count = 3, 20_000
    x = _draws(k, count, seed=1)
    radius = 2.0 * moment_knorm(x)
    assert stats.kstest(radius, stats.gamma(k + 1).cdf).pvalue > 1e-3
    laplace = np.random.default_rng(2).laplace(size=(count, k + 1))
    assert stats.kstest(2.0 * moment_knorm(laplace), stats.gamma(k + 1).cdf).pvalue < 1e-6


def test_the_noise_variance_and_correlations_follow_the_formula():
    # Every coordinate: b^2 d (2d + 1) / ((d + 1) (d + 2)); the total is
    # correlated +1/d with each moment and the moments -1/d with each other.
    # With 20000 draws the sample variance has a relative sd of about
    # sqrt((kurtosis - 1) / N) <= 0.016 (kurtosis at most Laplace's 6) and a
    # sample correlation an sd of about 1 / sqrt(N) = 0.007: the tolerances are
    # over 4 sd.
    k, count = 3, 20_000
    d = k + 1
    x = _draws(k, count, seed=3)
    expected = moment_knorm_variance(d, 1.0)
    assert expected == pytest.approx(4 * 9 / (5 * 6))
    np.testing.assert_allclose(x.var(axis=0), expected, rtol=0.07)
    corr = np.corrcoef(x, rowvar=False)
    np.testing.assert_allclose(corr[:-1, -1], 1.0 / d, atol=0.03)
    off = corr[:-1, :-1][~np.eye(k, dtype=bool)]
    np.testing.assert_allclose(off, -1.0 / d, atol=0.03)
    # against Laplace on the same scale: 2 b^2, so 0.6 times the variance here
    assert expected / 2.0 == pytest.approx(0.6)


def test_the_variance_formula_at_one_dimension_pair():
    # d = 1 by hand: two Laplace(b) variables conditioned on summing to 0 are
    # L and -L with density proportional to exp(-2 |l| / b): variance b^2 / 2.
    assert moment_knorm_variance(1, 2.0) == pytest.approx(2.0)


def test_seeded_draws_reproduce_and_leave_the_value_alone():
    value = np.array([1.0, 0.5, 2.0])
    kept = value.copy()
    a = moment_knorm_noise(value, 0.1, np.random.default_rng(5))
    b = moment_knorm_noise(value, 0.1, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(value, kept)
    assert not np.array_equal(a, value)


def test_a_hardened_generator_draws_the_proposals_from_opendp(monkeypatch):
    pytest.importorskip("opendp")
    import dppca.privacy.knorm as knorm

    seen = []

    def spy(value, scale, rng):
        seen.append(np.array(value))
        return mechanisms.laplace_noise(value, scale, rng)

    monkeypatch.setattr(knorm, "laplace_noise", spy)
    value = np.array([1.0, 0.5, 2.0])
    out = moment_knorm_noise(value, 0.1, HardenedGenerator())
    assert mechanisms.noise_sampler(HardenedGenerator()) == "opendp"
    # OpenDP adds the noise to the value itself (no float addition after it)
    assert seen and all(np.array_equal(v, value) for v in seen)
    assert out.shape == value.shape and np.all(np.isfinite(out))


def test_bounds_too_wide_for_a_double_are_refused_before_any_work(monkeypatch):
    # +-1e300 bounds made the clip level inf and the K-norm sampler ran a
    # million proposals before a RuntimeError; now the plan refuses them.
    from dppca import dp_scree
    from dppca.releases.scree import clip

    X = np.random.default_rng(0).standard_normal((300, 3))
    with pytest.raises(ValueError, match="bounds are too wide"):
        dp_scree(X, 2, eps=1.0, delta=1e-6, random_state=0, bounds=(-1e300, 1e300))
    with pytest.raises(ValueError, match="bounds are too wide"):
        clip._clip_ladder((np.full(3, -1e300), np.full(3, 1e300)))


def test_knorm_refuses_a_scale_it_cannot_sample_before_any_proposal():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="K-norm scale"):
        moment_knorm_noise(np.zeros(3), math.inf, rng)
    assert rng.bit_generator.state == state  # nothing drawn
