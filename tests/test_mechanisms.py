"""Tests of noise calibration and the noise generators."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from dppca import PrivacyWarning
from dppca.mechanisms import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_sigma,
    kendall_sigma,
    laplace_noise,
    symmetric_gaussian_noise,
    unbounded_quantile,
    unbounded_quantile_upper,
)


def hockey_stick_delta(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """delta(sigma) = integral of max(0, p(x) - e^eps q(x)) dx, computed by quadrature.

    p = N(0, sigma^2), q = N(sensitivity, sigma^2): the definition of the privacy
    profile, independent of the closed form used by the package.
    """
    p = stats.norm(0.0, sigma).pdf
    q = stats.norm(sensitivity, sigma).pdf
    # p - e^eps q changes sign once; find the crossing from the density ratio.
    crossing = optimize.brentq(
        lambda x: (-(x**2) + (x - sensitivity) ** 2) / (2 * sigma**2) - eps,
        -1e3 * sigma - 1e3,
        1e3 * sigma + 1e3,
    )
    value, _ = integrate.quad(
        lambda x: p(x) - math.exp(eps) * q(x), -np.inf, crossing, epsabs=1e-14, epsrel=1e-10
    )
    return value


def test_classic_sigma_formula():
    assert classic_gaussian_sigma(2.0, 0.5, 1e-5) == pytest.approx(
        2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5, rel=1e-15
    )


def test_kendall_sigma_reproduces_the_reference_formula():
    n, eps, delta = 5000, 0.5, 1e-5
    expected = 4 * math.sqrt(2 * math.log(1.25 / delta)) / (n * eps)
    assert kendall_sigma(n, eps, delta, "classic", "seed") == pytest.approx(expected, rel=1e-15)
    # the default: the tight sensitivity with the analytic calibration
    tight = analytic_gaussian_sigma(2 * math.sqrt(2) / n, eps, delta)
    assert kendall_sigma(n, eps, delta) == pytest.approx(tight, rel=1e-15)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
def test_analytic_sigma_meets_delta_exactly(eps, delta):
    sigma = analytic_gaussian_sigma(1.0, eps, delta)
    # Valid: the independently integrated profile is at most delta (quadrature error
    # ~1e-10 relative) ...
    assert hockey_stick_delta(sigma, eps) <= delta * (1 + 1e-6)
    # ... and tight: 0.1% less noise already breaks delta.
    assert hockey_stick_delta(0.999 * sigma, eps) > delta


def test_analytic_sigma_scales_with_sensitivity():
    assert analytic_gaussian_sigma(0.004, 2.0, 1e-6) == pytest.approx(
        0.004 * analytic_gaussian_sigma(1.0, 2.0, 1e-6), rel=1e-12
    )


@pytest.mark.parametrize("eps", [0.05, 0.3, 0.9])
def test_analytic_never_needs_more_noise_than_classic(eps):
    assert analytic_gaussian_sigma(1.0, eps, 1e-5) < classic_gaussian_sigma(1.0, eps, 1e-5)


def test_classic_calibration_warns_from_eps_one():
    with pytest.warns(PrivacyWarning, match="analytic"):
        gaussian_sigma(1.0, 1.0, 1e-5, calibration="classic")
    with pytest.warns(PrivacyWarning, match="analytic") as record:
        gaussian_sigma(1.0, 5.0, 1e-5, calibration="classic")
    assert record[0].filename == __file__  # attributed to the caller's line


def test_analytic_calibration_and_small_eps_do_not_warn():
    gaussian_sigma(1.0, 5.0, 1e-5, calibration="analytic")
    gaussian_sigma(1.0, 0.99, 1e-5)


@pytest.mark.parametrize("calibration", ["gauss", None, "Classic"])
def test_bad_calibration_raises(calibration):
    with pytest.raises(ValueError, match="calibration"):
        gaussian_sigma(1.0, 0.5, 1e-5, calibration=calibration)


def test_symmetric_noise_is_exactly_symmetric_and_reproducible():
    a = symmetric_gaussian_noise(7, 0.3, np.random.default_rng(1))
    b = symmetric_gaussian_noise(7, 0.3, np.random.default_rng(1))
    np.testing.assert_array_equal(a, a.T)
    np.testing.assert_array_equal(a, b)


def test_symmetric_noise_moments():
    p, m, sigma = 4, 4000, 0.7
    rng = np.random.default_rng(2024)
    draws = np.stack([symmetric_gaussian_noise(p, sigma, rng) for _ in range(m)])
    rows, cols = np.triu_indices(p)
    entries = draws[:, rows, cols]  # (m, 10) independent coordinates
    variance = np.where(rows == cols, sigma**2, sigma**2 / 2)
    n_tests = 2 * entries.shape[1]
    alpha = 1e-6 / n_tests  # Bonferroni over all mean and variance checks
    # Mean: sqrt(m) * mean / sd ~ N(0, 1).
    z = np.sqrt(m) * entries.mean(axis=0) / np.sqrt(variance)
    assert np.all(np.abs(z) <= stats.norm.ppf(1 - alpha / 2))
    # Known mean 0: sum(e^2) / var ~ chi2(m); accept the central 1 - alpha interval.
    ss = (entries**2).sum(axis=0) / variance
    lo, hi = stats.chi2.ppf([alpha / 2, 1 - alpha / 2], df=m)
    assert np.all((lo <= ss) & (ss <= hi))
    # Off-diagonal entries are independent of each other: correlation ~ N(0, 1/m).
    corr = np.corrcoef(entries, rowvar=False)[np.triu_indices(entries.shape[1], 1)]
    assert np.all(np.abs(corr) * np.sqrt(m) <= stats.norm.ppf(1 - alpha / 2) + 0.5)


def test_laplace_noise_scale():
    rng = np.random.default_rng(9)
    m, b = 20000, 2.5
    draws = laplace_noise(np.zeros(m), b, rng)
    # |Z| ~ Exp(mean b), so 2 sum|Z| / b ~ chi2(2m); central 1 - 1e-6 interval.
    stat = 2 * np.abs(draws).sum() / b
    lo, hi = stats.chi2.ppf([5e-7, 1 - 5e-7], df=2 * m)
    assert lo <= stat <= hi


def test_unbounded_quantile_is_accurate_at_large_eps():
    rng = np.random.default_rng(12)
    x = rng.exponential(10.0, size=20000)
    est = unbounded_quantile_upper(x, lower=0.0, beta=1.01, q=0.5, eps1=50, eps2=50, rng=rng)
    true = np.quantile(x, 0.5)
    # Output is a bin edge beta^i - 1; with eps=50 the count noise is < 1 row,
    # so the answer is within a bin (factor beta) of the true quantile.
    assert (true + 1) / 1.01 - 1 - 0.05 <= est <= (true + 1) * 1.01**2 - 1


def test_unbounded_quantile_two_sided_respects_range_and_symmetry():
    rng = np.random.default_rng(1)
    x = rng.normal(size=5000)
    lo = unbounded_quantile(
        x, lower=-100.0, upper=100.0, beta=1.001, q=0.05, eps1=5, eps2=5, rng=rng
    )
    hi = unbounded_quantile(
        x, lower=-100.0, upper=100.0, beta=1.001, q=0.95, eps1=5, eps2=5, rng=rng
    )
    assert -2.2 < lo < -1.2 and 1.2 < hi < 2.2
    clipped = unbounded_quantile(
        x + 500, lower=-100.0, upper=100.0, beta=1.001, q=0.9, eps1=5, eps2=5, rng=rng
    )
    assert clipped == 100.0


def test_unbounded_quantile_values_below_range_land_in_first_bin():
    rng = np.random.default_rng(0)
    out = unbounded_quantile_upper(
        np.full(100, -5.0), lower=0.0, beta=1.5, q=0.5, eps1=10, eps2=10, rng=rng
    )
    # Every value is clamped into bin 1 = [lower + beta - 1, lower + beta^2 - 1); the
    # scan passes the target (50 + Exp noise of mean 0.1) at i = 2, whose edge is
    # beta^2 - 1. Stopping at i = 1 would need Exp(rate 10) > 50: probability e^-500.
    assert out == pytest.approx(1.5**2 - 1)


# --------------------------------------------------------------------------- level cap


def test_capped_quantile_level_keeps_the_target_margin_below_n() -> None:
    from dppca.mechanisms import capped_quantile_level

    assert capped_quantile_level(0.99, 10_000, 1.0) == 0.99  # 100 values above: no cap
    # 1 - 1 / (0.01 * 5000) = 0.98: eps1 N (1 - level) = 1 = margin
    assert capped_quantile_level(0.995, 5000, 0.01) == pytest.approx(0.98)
    assert capped_quantile_level(0.995, 5000, 0.01, margin=2.0) == pytest.approx(0.96)
    assert capped_quantile_level(0.995, 10, 0.01) == 0.5  # never below the median


@pytest.mark.parametrize("eps1", [0.1, 0.2])
def test_quantile_overshoot_bound_matches_the_scan(eps1: float) -> None:
    from dppca.mechanisms import quantile_overshoot_bound

    # 100 values in bin 1 (x = 0, lower = 0, beta = 1.5): H = 100 from bin 2 on. With
    # q = 0.99 the target 99 + Exp(eps1) passes 100 with probability exp(-eps1); then
    # the scan passes k = 20 more bins unstopped (output >= beta^(k + 2) - 1) with
    # probability exp(-eps1) r B(r, k + 1), r = eps1 / eps2. Stopping at bin 1 needs
    # Exp(eps2) > 99 (probability < e^-9.9). Binomial with 4000 draws: 4.5 sd.
    x, k, eps2, reps = np.zeros(100), 20, 0.1, 4000
    rng = np.random.default_rng(7)
    out = np.array(
        [
            unbounded_quantile_upper(x, lower=0.0, beta=1.5, q=0.99, eps1=eps1, eps2=eps2, rng=rng)
            for _ in range(reps)
        ]
    )
    p = quantile_overshoot_bound(k, 100, 0.99, eps1, eps2)
    r = eps1 / eps2
    assert p == pytest.approx(math.exp(-eps1) * r * math.gamma(r) * math.gamma(k + 1)
                              / math.gamma(r + k + 1))  # fmt: skip
    hits = np.count_nonzero(out >= 1.5 ** (k + 2) - 1 - 1e-9)
    assert abs(hits - reps * p) <= 4.5 * math.sqrt(reps * p * (1 - p))
