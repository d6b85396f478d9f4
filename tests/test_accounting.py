"""Tests of privacy costs and the budget ledger."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dppca import (
    Budget,
    BudgetExceededError,
    PrivacyCost,
    calibrate_noise,
    compose,
    compose_tight,
    tight_total,
)
from dppca.privacy.calibration import NoisePart
from dppca.privacy.cost import basic_total
from dppca.privacy.mechanisms import analytic_gaussian_sigma, classic_gaussian_sigma


def test_compose_adds_eps_and_delta_and_keeps_parts():
    a = PrivacyCost(0.3, 1e-6, "gaussian (classic)", "directions")
    b = PrivacyCost(0.2, 0.0, "laplace", "counts")
    total = compose([a, b], released="scree")
    assert (total.eps, total.delta) == pytest.approx((0.5, 1e-6))
    assert total.leaves() == (a, b)
    assert (a + b).eps == pytest.approx(0.5)
    assert list(total.to_frame()["released"]) == ["directions", "counts"]


def test_budget_allows_exact_split_and_refuses_overspend():
    budget = Budget(eps=1.0, delta=1e-5)
    for _ in range(10):
        budget.spend(PrivacyCost(0.1, 1e-6, "m", "r"))  # sums to 1.0 up to rounding
    # The ten (0.1, 1e-6) records use 9.99955e-6 of the delta; the tight total
    # turns the unused 4.5e-11 into about 3e-8 of eps (changed deliberately
    # from abs=1e-12 when the budget began to decide by the tight total).
    assert budget.remaining[0] == pytest.approx(0.0, abs=1e-7)
    with pytest.raises(BudgetExceededError, match="remains"):
        budget.spend(PrivacyCost(0.01, 0.0, "m", "r"))
    assert len(budget.ledger) == 10
    assert len(budget.to_frame()) == 10


def test_budget_refuses_delta_overspend():
    budget = Budget(eps=5.0, delta=1e-6)
    with pytest.raises(BudgetExceededError):
        budget.check(PrivacyCost(0.1, 2e-6, "m", "r"))


@pytest.mark.parametrize("eps, delta", [(-0.1, 0.0), (0.1, 1.0), (float("nan"), 0.0)])
def test_invalid_cost_raises(eps, delta):
    with pytest.raises(ValueError):
        PrivacyCost(eps, delta, "m", "r")


def test_invalid_budget_raises():
    with pytest.raises(ValueError, match="eps"):
        Budget(eps=0, delta=1e-5)
    with pytest.raises(TypeError, match="cost"):
        Budget(eps=1, delta=1e-5).spend((0.1, 0.0))


# --------------------------------------------------------------------------- tight composition


def _gauss(eps, delta, sensitivity, sigma, released="g"):
    return PrivacyCost(
        eps, delta, "gaussian", released, kind="gaussian", sensitivity=sensitivity, sigma=sigma
    )


def _gaussian_profile(mu, eps):
    """Exact delta(eps) of N(0, 1) vs N(mu, 1), for any real eps (Balle and Wang 2018)."""
    return stats.norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def test_old_constructor_calls_keep_working_and_mean_approximate_dp():
    c = PrivacyCost(0.3, 1e-6, "gaussian (classic)", "directions")
    assert c.kind is None and c.sigma is None and c.noise_multiplier is None
    assert tight_total([c], 1e-6) == pytest.approx((0.3, 1e-6), rel=1e-12)
    # Two (0.5, 1e-5) events need delta 2e-5 (up to 1e-10): none is left at 1e-5.
    assert tight_total([c, c, PrivacyCost(0.5, 1e-5, "m", "r")], 1e-5)[0] == math.inf
    with pytest.raises(ValueError, match="deltas exceed"):
        compose_tight([PrivacyCost(0.5, 1e-5, "m", "r")] * 2, 1e-5)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kind": "gaussian", "sensitivity": 1.0}, "sigma"),
        ({"kind": "laplace", "sensitivity": 1.0, "sigma": 2.0}, "sigma"),
        ({"kind": "gaussian", "sensitivity": 0.0, "sigma": 1.0}, "sensitivity"),
        ({"kind": "exponential"}, "kind"),
        ({"kind": "composed"}, "parts"),
        ({"sigma": 1.0}, "sigma"),
    ],
)
def test_invalid_noise_fields_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivacyCost(0.1, 0.0, "m", "r", **kwargs)
    with pytest.raises(ValueError, match="delta = 0"):
        PrivacyCost(0.1, 1e-6, "m", "r", kind="pure")


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("eps0, delta", [(0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-8)])
def test_k_gaussians_compose_to_one_gaussian_exactly(k, eps0, delta):
    # k Gaussians with multiplier sqrt(k) z are one Gaussian with multiplier z,
    # whose exact eps at delta is eps0 when z is the analytic sigma for
    # (eps0, delta). Both sides are root searches to ~1e-14, hence 1e-9.
    z = analytic_gaussian_sigma(1.0, eps0, delta)
    costs = [_gauss(10.0, delta, 0.3, 0.3 * math.sqrt(k) * z) for _ in range(k)]
    assert tight_total(costs, delta)[0] == pytest.approx(eps0, rel=1e-9)


@pytest.mark.parametrize("eps_p", [0.1, 0.5, 2.0])
@pytest.mark.parametrize("mu", [0.2, 1.0])
def test_gaussian_and_pure_part_match_the_exact_composed_profile(eps_p, mu):
    # Pure eps_p-DP is dominated by randomized response: loss +eps_p with
    # probability q = e^eps_p / (1 + e^eps_p), -eps_p otherwise. Composed with a
    # Gaussian of mu, delta(eps) = q dG(eps - eps_p) + (1 - q) dG(eps + eps_p).
    delta = 1e-5
    pure = PrivacyCost(eps_p, 0.0, "exponential mechanism", "p", kind="pure")
    eps = tight_total([_gauss(50.0, delta, 1.0, 1.0 / mu), pure], delta)[0]
    q = 1.0 / (1.0 + math.exp(-eps_p))

    def profile(e):
        return q * _gaussian_profile(mu, e - eps_p) + (1 - q) * _gaussian_profile(mu, e + eps_p)

    exact = optimize.brentq(lambda e: profile(e) - delta, 0.0, 100.0, xtol=1e-13)
    # The PLD accountant rounds losses up on a 1e-4 grid: never below the exact
    # value (beyond root-search noise), and above it by a few grid steps at most.
    assert exact - 1e-9 <= eps <= exact + 5e-4


def test_laplace_parts_compose_below_basic_composition():
    lap = PrivacyCost(0.1, 0.0, "laplace", "c", kind="laplace", sensitivity=2.0, scale=20.0)
    eps, _ = tight_total([lap] * 50, 1e-6)
    # Basic: 5.0. Advanced composition (Dwork, Rothblum, Vadhan) gives
    # sqrt(2 k ln(1/delta)) eps + k eps (e^eps - 1) = 3.717 + 0.526 = 4.24 at
    # k=50, eps=0.1, delta=1e-6, and the PLD of the Laplace noise is tighter.
    assert eps < 4.24
    assert eps > 0.1  # more than one part alone


def test_a_claim_the_noise_does_not_support_is_not_trusted():
    # The classic calibration is no guarantee at eps = 10: its exact profile
    # exceeds the recorded delta, so the tight total (read from the noise)
    # must exceed the recorded eps instead of taking the smaller claim.
    sigma = classic_gaussian_sigma(1.0, 10.0, 1e-5)
    rec = _gauss(10.0, 1e-5, 1.0, sigma)
    assert tight_total([rec], 1e-5)[0] > 10.0
    ok = _gauss(0.5, 1e-5, 1.0, classic_gaussian_sigma(1.0, 0.5, 1e-5))
    # A true claim (eps < 1): never above it, here well below (classic is loose).
    assert tight_total([ok], 1e-5)[0] < 0.5


def test_compose_tight_keeps_parts_and_basic_bound():
    g = _gauss(0.5, 1e-6, 1.0, analytic_gaussian_sigma(1.0, 0.5, 1e-6))
    c = compose_tight([g, g, g, g], 1e-5, released="four")
    assert c.kind == "composed" and c.leaves() == (g, g, g, g)
    assert c.delta == 1e-5 and c.eps < 2.0
    assert basic_total(c.parts) == pytest.approx((2.0, 4e-6))
    # A composed record composes on: two of them equal eight parts.
    assert tight_total([c, c], 1e-5)[0] == pytest.approx(tight_total([g] * 8, 1e-5)[0])


def test_budget_decides_by_the_tight_total():
    budget = Budget(eps=1.0, delta=1e-5)
    sigma = analytic_gaussian_sigma(1.0, 0.5, 1e-5)
    for _ in range(3):  # basic: 1.5 > 1.0; tight: well under 1.0
        budget.spend(_gauss(0.5, 1e-5, 1.0, sigma))
    eps_basic, delta_basic = budget.spent
    eps_tight, delta_tight = budget.spent_tight
    assert (eps_basic, delta_basic) == pytest.approx((1.5, 3e-5))
    assert eps_tight < 1.0 and delta_tight == 1e-5
    assert budget.remaining == pytest.approx((1.0 - eps_tight, 0.0))
    with pytest.raises(BudgetExceededError, match="tight total"):
        budget.spend(_gauss(0.5, 1e-5, 1.0, sigma / 2))
    assert len(budget.ledger) == 3
    assert "spent_eps_tight" in repr(budget)
    assert Budget(1.0, 1e-5).spent_tight == (0.0, 0.0)


def test_calibrate_one_gaussian_is_the_analytic_sigma():
    (part,) = calibrate_noise([{"kind": "gaussian", "sensitivity": 0.02}], 0.7, 1e-6)
    assert part.sigma == analytic_gaussian_sigma(0.02, 0.7, 1e-6)
    assert (part.eps, part.delta) == (0.7, 1e-6)


@pytest.mark.parametrize("k", [2, 5])
def test_calibrate_k_equal_gaussians_splits_the_multiplier_by_sqrt_k(k):
    # The tight total of k Gaussians of multiplier z is one of z / sqrt(k), so
    # each must get sqrt(k) times the single analytic sigma; the scale factor is
    # found to a relative 1e-10 in log t, which moves sigma by less than 1e-6.
    parts = calibrate_noise([NoisePart("gaussian", sensitivity=3.0)] * k, 1.0, 1e-5)
    single = analytic_gaussian_sigma(3.0, 1.0, 1e-5)
    for part in parts:
        assert part.sigma == pytest.approx(math.sqrt(k) * single, rel=1e-6)
    assert tight_total([p.to_cost("g") for p in parts], 1e-5)[0] <= 1.0


def test_calibrate_mixed_parts_meets_the_total_from_below():
    specs = [
        {"kind": "gaussian", "sensitivity": 1e-3, "weight": 0.2},
        {"kind": "pure", "weight": 0.2},
        {"kind": "laplace", "sensitivity": 2.0, "weight": 0.1},
        {"kind": "gaussian", "sensitivity": math.sqrt(2), "weight": 0.5},
    ]
    parts = calibrate_noise(specs, 1.0, 1e-5)
    assert [p.kind for p in parts] == ["gaussian", "pure", "laplace", "gaussian"]
    costs = [p.to_cost(f"part {i}") for i, p in enumerate(parts)]
    eps = tight_total(costs, 1e-5)[0]
    # The PLD total moves in steps of its 1e-4 loss grid as t varies, so the
    # largest t that fits may stop up to a few steps short of eps = 1.
    assert 1.0 - 5e-4 <= eps <= 1.0
    # Each share grows over its basic-composition share (t > 1), in proportion.
    assert parts[1].eps > 0.2 and parts[0].eps == pytest.approx(parts[1].eps)
    assert parts[2].scale == pytest.approx(2.0 / parts[2].eps)
    assert parts[3].sigma == analytic_gaussian_sigma(math.sqrt(2), parts[3].eps, 1e-5)
    assert Budget(1.0, 1e-5).can_afford(compose(costs))


def test_calibrate_rejects_bad_parts():
    with pytest.raises(ValueError, match="sensitivity"):
        calibrate_noise([{"kind": "gaussian"}], 1.0, 1e-5)
    with pytest.raises(ValueError, match="kind"):
        calibrate_noise([{"kind": "exponential"}], 1.0, 1e-5)
    with pytest.raises(TypeError, match="NoisePart"):
        calibrate_noise([("gaussian", 1.0)], 1.0, 1e-5)
    with pytest.raises(ValueError, match="at least one"):
        calibrate_noise([], 1.0, 1e-5)
    with pytest.raises(ValueError, match="eps"):
        calibrate_noise([{"kind": "pure"}], -1.0, 1e-5)


@pytest.mark.parametrize(
    "mu, others",
    [
        (0.3, [("pure", 0.1)]),
        (0.3, [("pure", 0.1), ("laplace", 2.5)]),
        (0.5, [("pure", 0.2), ("pure", 0.1), ("pure", 0.1)]),
        (0.2, [("approx", 0.3, 1e-7), ("laplace", 2.0), ("laplace", 5.0)]),
        (2.0, [("pure", 1.0), ("laplace", 1.0)]),
        (0.0, [("pure", 0.1), ("laplace", 2.5)]),  # no Gaussian: Laplace in closed form
        (0.0, [("approx", 0.2, 1e-7), ("laplace", 1.0)]),
    ],
)
def test_exact_composition_agrees_with_the_pld_accountant(mu, others):
    # The closed form (mixture of shifted Gaussian profiles) against
    # dp-accounting's PLD with pessimistic rounding on a 1e-4 grid: the PLD is
    # never below it (beyond root-search noise) and within a few grid steps.
    pld_mod = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    from dp_accounting.pld import common

    from dppca.privacy.composition import _exact_eps

    total = None
    if mu > 0:
        total = pld_mod.from_gaussian_mechanism(
            standard_deviation=1 / mu, value_discretization_interval=1e-4
        )
    for e in others:
        if e[0] == "laplace":
            part = pld_mod.from_laplace_mechanism(
                parameter=e[1], value_discretization_interval=1e-4
            )
        else:
            params = common.DifferentialPrivacyParameters(e[1], e[2] if len(e) > 2 else 0.0)
            part = pld_mod.from_privacy_parameters(params, value_discretization_interval=1e-4)
        total = part if total is None else total.compose(part)
    exact = _exact_eps(mu, others, 1e-5)
    pld_eps = total.get_epsilon_for_delta(1e-5)
    assert exact is not None
    assert exact - 1e-8 <= pld_eps <= exact + 5e-4


def test_exact_total_is_continuous_so_a_split_meets_it():
    # the PLD's rounding makes its total jump with the eps of a pure part; the
    # closed form does not, so a scaled split meets the total to 1e-9
    from dppca.privacy.calibration import tight_factor

    shares = (("gaussian", 0.35, 4e-7), ("pure", 0.1, 0.0), ("gaussian", 0.55, 6e-7))
    t = tight_factor(shares, 1.0, 1e-6)
    z1 = analytic_gaussian_sigma(1.0, 0.35 * t, 4e-7)
    z2 = analytic_gaussian_sigma(1.0, 0.55 * t, 6e-7)
    costs = [
        PrivacyCost(0.35 * t, 4e-7, "g", "a", kind="gaussian", multiplier=z1),
        PrivacyCost(0.1 * t, 0.0, "p", "b", kind="pure"),
        PrivacyCost(0.55 * t, 6e-7, "g", "c", kind="gaussian", sensitivity=2.0, sigma=2 * z2),
    ]
    assert t > 1.3
    assert tight_total(costs, 1e-6)[0] == pytest.approx(1.0, rel=1e-9)


def test_multiplier_records_noise_relative_to_a_runtime_sensitivity():
    g = PrivacyCost(0.5, 1e-6, "gaussian", "m", kind="gaussian", multiplier=4.0)
    assert g.noise_multiplier == 4.0 and g.sensitivity is None
    same = PrivacyCost(0.5, 1e-6, "gaussian", "m", kind="gaussian", sensitivity=0.5, sigma=2.0)
    assert tight_total([g], 1e-5) == tight_total([same], 1e-5)
    lap = PrivacyCost(0.5, 0.0, "laplace", "m", kind="laplace", multiplier=2.0)
    assert lap.noise_multiplier == 2.0
    with pytest.raises(ValueError, match="multiplier"):
        PrivacyCost(0.5, 0.0, "pure", "m", kind="pure", multiplier=2.0)
    with pytest.raises(ValueError, match="multiplier"):
        PrivacyCost(0.5, 1e-6, "g", "m", kind="gaussian", multiplier=2.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="multiplier"):
        PrivacyCost(
            0.5, 1e-6, "g", "m", kind="gaussian", multiplier=2.0, sensitivity=1.0, sigma=3.0
        )
    with pytest.raises(ValueError, match="multiplier"):
        PrivacyCost(0.5, 1e-6, "g", "m", kind="gaussian", multiplier=-1.0)


def test_scale_to_tight_checks_what_it_builds():
    from dppca.privacy.calibration import scale_to_tight

    def build(t):
        return [
            PrivacyCost(
                0.5 * t,
                5e-6,
                "g",
                "a",
                kind="gaussian",
                multiplier=analytic_gaussian_sigma(1.0, 0.5 * t, 5e-6),
            ),
            PrivacyCost(0.5 * t, 0.0, "p", "b", kind="pure"),
        ]

    t, parts = scale_to_tight(build, 1.0, 1e-5)
    assert t > 1 and tight_total(parts, 1e-5)[0] == pytest.approx(1.0, rel=1e-9)

    def wrong(t):  # less noise than its claim: the accountant reads the noise
        return [
            PrivacyCost(
                0.5 * t,
                5e-6,
                "g",
                "a",
                kind="gaussian",
                multiplier=analytic_gaussian_sigma(1.0, t, 5e-6),
            ),
            PrivacyCost(0.5 * t, 0.0, "p", "b", kind="pure"),
        ]

    with pytest.raises(RuntimeError, match="exceeds"):
        scale_to_tight(wrong, 1.0, 1e-5)
