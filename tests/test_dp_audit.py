"""Empirical DP audit: a statistical lower bound on eps from many releases.

For a neighbour pair (D, D') and an output set S fixed in advance, (eps, delta)-DP
implies P[M(D') in S] <= e^eps P[M(D) in S] + delta. From N releases on each
side, Clopper-Pearson bounds (an upper one for P[M(D) in S], a lower one for
P[M(D') in S]) give with confidence 1 - alpha the lower bound

    eps_lb = ln((p1_lo - delta) / p0_hi),

which a correct mechanism exceeds only with probability alpha. The tests check
that the calibrated noise passes (eps_lb <= eps) and that noise reduced by a
further 2x is caught (eps_lb > eps). Draws are vectorised with a fixed seed.

For a Gaussian mechanism the likelihood ratio is monotone in the projection of
the output on the direction f(D') - f(D), so S = {projection > t} is the best
test; t sits between 2.5 and 3 standard deviations of the reduced noise above
f(D'), where the halved noise leaks the most (chosen from public sigma only).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dppca import spherical_kendall
from dppca.privacy.mechanisms import (
    analytic_gaussian_sigma,
    kendall_sigma,
    symmetric_gaussian_noise,
)

N = 2_000_000  # releases per side
ALPHA = 1e-6  # total false-alarm probability, split over the thresholds (Bonferroni)
TAUS = (2.5, 3.0)  # thresholds in units of the reduced sigma, above f(D')


def eps_lower_bound(y0, y1, threshold, delta, alpha):
    """Clopper-Pearson lower bound on eps from outputs y0 ~ M(D), y1 ~ M(D')."""
    k0 = int(np.count_nonzero(y0 > threshold))
    k1 = int(np.count_nonzero(y1 > threshold))
    p0_hi = stats.beta.ppf(1 - alpha, k0 + 1, y0.size - k0)
    p1_lo = stats.beta.ppf(alpha, k1, y1.size - k1 + 1) if k1 > 0 else 0.0
    if p1_lo <= delta:
        return -math.inf
    return math.log((p1_lo - delta) / p0_hi)


def audit(y0, y1, shift, sigma_reduced, delta):
    """Largest eps lower bound over the thresholds (alpha split between them)."""
    return max(
        eps_lower_bound(y0, y1, shift + tau * sigma_reduced, delta, ALPHA / len(TAUS))
        for tau in TAUS
    )


@pytest.mark.parametrize("eps, delta", [(1.0, 1e-5), (0.5, 1e-6)])
def test_scalar_gaussian_mechanism_passes_and_half_the_noise_is_caught(eps, delta):
    rng = np.random.default_rng(20240601)
    sensitivity = 1.0
    sigma = analytic_gaussian_sigma(sensitivity, eps, delta)
    z0, z1 = rng.standard_normal(N), rng.standard_normal(N)
    for factor, caught in ((1.0, False), (0.5, True)):
        s = factor * sigma
        y0, y1 = s * z0, sensitivity + s * z1  # f(D) = 0, f(D') = sensitivity
        eps_lb = audit(y0, y1, sensitivity, sigma / 2, delta)
        assert (eps_lb > eps) is caught, (factor, eps_lb)


def _kendall_pair():
    """Worst-case neighbours of n = 2 rows: the replaced row turns the pair by 90 degrees.

    ||K' - K||_F = ||e1 e1^T - e2 e2^T||_F = sqrt(2) = 2 sqrt(2) / n, the bound.
    """
    D = np.array([[0.0, 0.0], [1.0, 0.0]])
    D2 = np.array([[0.0, 0.0], [0.0, 1.0]])
    return spherical_kendall(D), spherical_kendall(D2)


def _bulk_triu_noise(rng, size, p, sigma):
    """Upper-triangle entries of ``size`` successive symmetric_gaussian_noise draws.

    Each call draws p (p + 1) / 2 standard normals in triu order and scales
    them, so one (size, p (p + 1) / 2) block is the same stream in the same order.
    """
    rows, cols = np.triu_indices(p)
    scale = np.where(rows == cols, sigma, sigma / math.sqrt(2.0))
    return rng.standard_normal((size, rows.size)) * scale


def test_bulk_noise_is_the_release_noise_bit_for_bit():
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    values = _bulk_triu_noise(a, 50, 3, 0.7)
    rows, cols = np.triu_indices(3)
    loop = np.stack([symmetric_gaussian_noise(3, 0.7, b) for _ in range(50)])
    np.testing.assert_array_equal(values, loop[:, rows, cols])
    np.testing.assert_array_equal(loop[:, rows, cols], loop[:, cols, rows])


def test_kendall_release_passes_on_worst_case_neighbours_and_half_noise_is_caught():
    eps, delta, n, p = 1.0, 1e-5, 2, 2
    K, K2 = _kendall_pair()
    diff = K2 - K
    gap = float(np.linalg.norm(diff))  # the sensitivity this pair attains
    assert gap == pytest.approx(2 * math.sqrt(2) / n, rel=1e-12)
    u = diff / gap
    # The least noise any sound calibration may use at this (n, eps, delta) is
    # the analytic sigma at the attained sensitivity; the default is never less.
    sigma = analytic_gaussian_sigma(gap, eps, delta)
    assert kendall_sigma(n, eps, delta, "analytic") >= sigma * (1 - 1e-12)
    rng = np.random.default_rng(7)
    # <E, u>_F = sum_i u_ii E_ii + sum_{i<j} 2 u_ij E_ij has variance
    # sigma^2 ||u||_F^2 = sigma^2 (diagonal sigma^2, off-diagonal (2 u_ij)^2
    # sigma^2 / 2), so the projection is the scalar Gaussian mechanism with
    # sensitivity gap (and the best test of this pair).
    rows, cols = np.triu_indices(p)
    weights = np.where(rows == cols, 1.0, 2.0) * u[rows, cols]
    proj0 = _bulk_triu_noise(rng, N, p, 1.0) @ weights
    proj1 = _bulk_triu_noise(rng, N, p, 1.0) @ weights
    base = float(np.sum(K * u))
    for factor, caught in ((1.0, False), (0.5, True)):
        s = factor * sigma
        y0, y1 = base + s * proj0, base + gap + s * proj1
        eps_lb = audit(y0 - base, y1 - base, gap, sigma / 2, delta)
        assert (eps_lb > eps) is caught, (factor, eps_lb)
