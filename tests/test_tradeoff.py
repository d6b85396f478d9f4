"""The attacker's trade-off of a release, against computations that share no code with it."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import optimize, stats

from dppca.privacy.cost import PrivacyCost
from dppca.privacy.totals import compose_tight
from dppca.privacy.tradeoff import (
    attacker_power,
    attacker_sentence,
    privacy_profile,
    tradeoff_curve,
)

ALPHAS = np.array([1e-3, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95])


def gaussian(sensitivity: float, sigma: float) -> PrivacyCost:
    return PrivacyCost(
        1.0, 1e-6, "gaussian", "x", kind="gaussian", sensitivity=sensitivity, sigma=sigma
    )


def pure(eps: float) -> PrivacyCost:
    return PrivacyCost(eps, 0.0, "exponential", "q", kind="pure")


def laplace(eps: float) -> PrivacyCost:
    return PrivacyCost(eps, 0.0, "laplace", "h", kind="laplace", sensitivity=2.0, scale=2.0 / eps)


def pure_curve(eps: float, alpha: np.ndarray, delta: float = 0.0) -> np.ndarray:
    """Power bound of an (eps, delta)-DP release (Kairouz, Oh and Viswanath 2015)."""
    return np.minimum.reduce(
        [
            np.ones_like(alpha),
            np.exp(eps) * alpha + delta,
            1 - np.exp(-eps) * (1 - alpha - delta),
        ]
    )


def laplace_curve(eps: float, alpha: np.ndarray) -> np.ndarray:
    """Power of the best test against Laplace noise of scale 1/eps (Dong et al. 2022, eq. 3)."""
    beta = np.where(
        alpha < np.exp(-eps) / 2,
        1 - np.exp(eps) * alpha,
        np.where(alpha <= 0.5, np.exp(-eps) / (4 * alpha), np.exp(-eps) * (1 - alpha)),
    )
    return 1 - beta


def neyman_pearson_gauss_rr(mu: float, eps: float, alpha: float) -> float:
    """Most powerful test of N(0,1) x RR(eps) against N(mu,1) x RR(eps), by its threshold.

    The log-likelihood ratio is mu x - mu^2 / 2 + l with l = -eps or +eps; the
    test rejects above a threshold c set so that its false-alarm rate is alpha.
    """
    p_up = 1 / (1 + math.exp(eps))  # mass of l = +eps under the null
    masses_null = {eps: p_up, -eps: 1 - p_up}
    masses_alt = {eps: 1 - p_up, -eps: p_up}

    def rate(c: float, masses: dict[float, float], shift: float) -> float:
        return sum(
            m * stats.norm.sf((c + mu**2 / 2 - loss) / mu - shift) for loss, m in masses.items()
        )

    c = optimize.brentq(lambda c: rate(c, masses_null, 0.0) - alpha, -50, 50, xtol=1e-14)
    return rate(c, masses_alt, mu)


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_one_gaussian_is_the_gaussian_dp_curve(mu):
    expected = stats.norm.cdf(stats.norm.ppf(ALPHAS) + mu)
    got = tradeoff_curve(gaussian(2.0, 2.0 / mu), ALPHAS)
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_gaussians_compose_to_the_root_sum_of_squares():
    parts = [gaussian(1.0, 2.0), gaussian(3.0, 4.0), gaussian(0.5, 1.0)]
    mu = math.sqrt(0.5**2 + 0.75**2 + 0.5**2)  # Dong, Roth and Su (2022), Corollary 3.3
    total = compose_tight(parts, 1e-5)
    np.testing.assert_allclose(
        tradeoff_curve(total, ALPHAS), stats.norm.cdf(stats.norm.ppf(ALPHAS) + mu), atol=1e-6
    )
    # a list of costs is the same release as their composition
    np.testing.assert_allclose(tradeoff_curve(parts, ALPHAS), tradeoff_curve(total, ALPHAS))


@pytest.mark.parametrize("eps", [0.1, 0.7, 3.0])
def test_pure_eps_is_randomized_response(eps):
    np.testing.assert_allclose(
        tradeoff_curve(pure(eps), ALPHAS), pure_curve(eps, ALPHAS), atol=1e-6
    )


def test_a_generic_eps_delta_claim_keeps_its_delta():
    cost = PrivacyCost(0.5, 1e-3, "generic", "g")
    np.testing.assert_allclose(
        tradeoff_curve(cost, ALPHAS), pure_curve(0.5, ALPHAS, 1e-3), atol=1e-6
    )


@pytest.mark.parametrize("eps", [0.2, 1.0, 2.0])
def test_laplace_is_its_exact_curve(eps):
    np.testing.assert_allclose(
        tradeoff_curve(laplace(eps), ALPHAS), laplace_curve(eps, ALPHAS), atol=1e-6
    )


@pytest.mark.parametrize(("mu", "eps"), [(0.5, 0.3), (1.0, 1.0), (2.0, 0.2)])
def test_gaussian_with_a_pure_part_is_the_neyman_pearson_test(mu, eps):
    cost = compose_tight([gaussian(1.0, 1.0 / mu), pure(eps)], 1e-6)
    expected = [neyman_pearson_gauss_rr(mu, eps, a) for a in ALPHAS]
    np.testing.assert_allclose(tradeoff_curve(cost, ALPHAS), expected, atol=1e-6)


def test_many_parts_go_through_the_pld_accountant_and_stay_close():
    # Five parts (three Laplace) leave the closed form: the PLD accountant's
    # pessimistic rounding may only overstate the power, by little. The
    # Laplace parts' curve alone bounds it from below (dropping parts cannot
    # raise power), and the mu-GDP curve of the Gaussian too.
    parts = [gaussian(1.0, 2.0), pure(0.3), laplace(0.2), laplace(0.2), laplace(0.2)]
    got = tradeoff_curve(parts, ALPHAS)
    below = np.maximum(
        stats.norm.cdf(stats.norm.ppf(ALPHAS) + 0.5), tradeoff_curve(parts[2:], ALPHAS)
    )
    assert np.all(got >= below - 1e-6)
    # The non-Gaussian parts compose to a 0.9-DP release, which randomized
    # response at 0.9 dominates: the Gaussian beside RR(0.9) bounds it above.
    above = [neyman_pearson_gauss_rr(0.5, 0.9, a) for a in ALPHAS]
    assert np.all(got <= np.array(above) + 1e-6)
    assert np.all(np.diff(got) >= 0)


def test_power_is_at_least_alpha_and_grows_with_eps():
    lo = tradeoff_curve(gaussian(1.0, 4.0), ALPHAS)
    hi = tradeoff_curve(gaussian(1.0, 1.0), ALPHAS)
    assert np.all(lo >= ALPHAS - 1e-12)
    assert np.all(hi > lo)


def test_profile_matches_the_analytic_gaussian_delta():
    # Balle and Wang (2018), Theorem 8, written out here from the normal CDF
    mu = 0.8
    eps = np.array([0.0, 0.5, 1.0, 3.0])
    expected = stats.norm.cdf(mu / 2 - eps / mu) - np.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)
    np.testing.assert_allclose(privacy_profile(gaussian(1.0, 1.25))(eps), expected, atol=1e-12)


def test_sentence_states_the_power_to_three_digits():
    mu = 1.0
    cost = compose_tight([gaussian(1.0, 1.0 / mu), pure(0.5)], 1e-6)
    sentence = attacker_sentence(cost)
    shown = float(re.search(r"at most ([0-9.]+)%", sentence).group(1))
    independent = 100 * neyman_pearson_gauss_rr(mu, 0.5, 0.01)
    # rounded up to three significant digits: within one unit of the third digit
    assert 0 <= shown - independent < 10 ** (math.floor(math.log10(independent)) - 2)
    assert "1% false-alarm rate" in sentence
    assert attacker_power(cost) == pytest.approx(independent / 100, abs=1e-6)


def test_sentence_for_a_non_private_result_says_so():
    assert "not private" in attacker_sentence(None)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, float("nan")])
def test_sentence_refuses_a_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        attacker_sentence(pure(1.0), alpha=alpha)


def test_curve_refuses_rates_outside_the_unit_interval():
    with pytest.raises(ValueError, match="alphas"):
        tradeoff_curve(pure(1.0), [0.5, 1.5])
    with pytest.raises(TypeError, match="PrivacyCost"):
        tradeoff_curve([pure(1.0), 3.0], [0.5])


def test_the_drawn_curve_is_the_computed_one():
    import matplotlib.pyplot as plt

    from dppca.plotting import plot_tradeoff
    from dppca.plotting._caption import find_caption

    cost = gaussian(1.0, 1.0)
    _, ax = plt.subplots()
    assert plot_tradeoff(cost, ax=ax, n=100) is ax
    coin, curve, point = ax.lines
    np.testing.assert_allclose(curve.get_ydata(), tradeoff_curve(cost, curve.get_xdata()))
    np.testing.assert_allclose(coin.get_ydata(), coin.get_xdata())
    assert point.get_ydata()[0] == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.01) + 1.0))
    assert find_caption(ax).get_text() == "eps=1, delta=1e-06, n=100"
    with pytest.raises(TypeError, match="xlim"):
        plot_tradeoff(cost, ax=ax, xlim=(0, 1))
