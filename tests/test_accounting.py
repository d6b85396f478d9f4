"""Tests of privacy costs and the budget ledger."""

from __future__ import annotations

import pytest

from dppca import Budget, BudgetExceededError, PrivacyCost, compose


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
    assert budget.remaining[0] == pytest.approx(0.0, abs=1e-12)
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
