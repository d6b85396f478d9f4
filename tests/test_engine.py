"""The release engine: plans of parts, one executor, streams kept apart."""

from __future__ import annotations

import numpy as np
import pytest

import dppca
from dppca import Budget, BudgetExceededError, dp_loading, dp_score, plan_loading
from dppca.core import validation
from dppca.core.data_checks import check_table
from dppca.datasets import load_gau
from dppca.releases.engine import CheckedData, Part, ReleasePlan, execute


@pytest.fixture
def table(rng: np.random.Generator) -> np.ndarray:
    return rng.normal(size=(400, 5)) * [3.0, 2.0, 1.0, 0.7, 0.5]


PLANS = {
    "directions": lambda: dppca.plan_pc_dir(400, 5, eps=0.8, delta=1e-6),
    "loading": lambda: dppca.plan_loading(400, 5, eps=0.8, delta=1e-6),
    "scree": lambda: dppca.plan_scree(400, 5, 3, eps=0.8, delta=1e-6, method=["clipped", "pmwm"]),
    "score": lambda: dppca.plan_score(400, 5, eps=0.8, delta=1e-6, method=["add", "sparse"]),
}


@pytest.mark.parametrize("name", sorted(PLANS))
def test_every_plan_runs_through_the_executor_and_records_its_own_cost(table, name):
    plan = PLANS[name]()
    assert isinstance(plan, ReleasePlan) and plan.kind == name
    assert all(isinstance(part, Part) for part in plan.parts)
    budget = Budget(10.0, 1e-3)
    result = execute(plan, table, budget=budget, random_state=3)
    assert budget.ledger == (plan.cost,)
    assert result.cost is plan.cost


@pytest.mark.parametrize("name", sorted(PLANS))
def test_the_executor_refuses_before_any_draw(table, name, monkeypatch):
    plan = PLANS[name]()
    drawn = []
    monkeypatch.setattr(type(plan), "draw", lambda self, data, rng: drawn.append(1))
    with pytest.raises(BudgetExceededError):
        execute(plan, table, budget=Budget(0.1, 1e-7), random_state=3)
    with pytest.raises(ValueError, match="priced for"):
        execute(plan, table[:300], random_state=3)
    assert drawn == []


@pytest.mark.parametrize("name", ["scree", "score"])
def test_a_composite_plan_holds_the_plan_of_its_directions(name):
    plan = PLANS[name]()
    assert plan.directions is not None
    assert plan.directions.cost == plan.cost.leaves()[0]


def test_the_executor_gives_what_the_entry_point_gives(table):
    plan = plan_loading(400, 5, eps=0.8, delta=1e-6)
    a = execute(plan, table, random_state=5)
    b = dp_loading(table, eps=0.8, delta=1e-6, random_state=5)
    np.testing.assert_array_equal(a.directions.noisy_matrix, b.directions.noisy_matrix)


def test_an_entry_point_checks_its_data_and_eps_once(monkeypatch):
    data = load_gau()
    calls = {"check_data": 0}
    original = check_table

    def counting(*args, **kwargs):
        calls["check_data"] += 1
        return original(*args, **kwargs)

    # check_data and check_grouped_data (dp_score's, which keeps the group labels
    # of the rows kept) both run the table's rule through check_table
    monkeypatch.setattr("dppca.core.data_checks.check_table", counting)
    dppca.dp_pc_dir(data, 2, eps=0.5, delta=1e-5, random_state=0)
    dppca.dp_scree(data, 3, eps=0.9, delta=1e-5, random_state=0)
    dppca.dp_score(data, eps=0.9, delta=1e-5, random_state=0, accuracy="ignore")
    assert calls["check_data"] == 3


def test_noise_sensitivity_with_the_release_seed_never_redraws_the_noise():
    data = load_gau()
    res = dp_loading(data, eps=0.5, delta=1e-5, random_state=11)
    view = res.noise_sensitivity(draws=3, random_state=11)
    # Re-adding the released noise would give exactly the eigenvectors of
    # 2 N - K (noisy matrix plus the same noise again); none of the views may.
    kendall = dppca.spherical_kendall(data)
    noise = res.directions.noisy_matrix - kendall
    twice = np.linalg.eigh(kendall + 2 * noise)[1][:, ::-1][:, : res.directions.k]
    for draw in view.samples:
        cosines = np.abs(np.sum(draw * twice, axis=0))
        assert cosines.min() < 1 - 1e-9


def test_synthetic_points_with_the_release_seed_use_another_stream():
    res = dp_score(load_gau(), eps=1.0, delta=1e-5, random_state=4)
    points = dppca.sample_points(res, size=50, kind="uniform", bandwidth=0, random_state=4)
    post = validation.post_processing_rng(4).random(5)
    assert not np.allclose(post, np.random.default_rng(4).random(5))
    assert points.shape == (50, 2)


def test_checked_data_is_not_checked_again(table, monkeypatch):
    plan = plan_loading(400, 5, eps=0.8, delta=1e-6)
    checked = CheckedData(table, ("a", "b", "c", "d", "e"))
    monkeypatch.setattr("dppca.kernels.kendall.check_data", lambda *a, **k: pytest.fail("checked"))
    execute(plan, checked, random_state=1)


def test_a_score_plan_takes_its_groups_and_directions_at_execution(table):
    labels = np.where(table[:, 0] > 0, "a", "b")
    directions = dppca.dp_pc_dir(table, 2, eps=0.5, delta=1e-6, random_state=1)
    plan = dppca.plan_score(400, 5, eps=0.8, delta=1e-6, groups=2, directions_given=True)
    a = execute(plan, table, random_state=6, groups=labels, directions=directions)
    b = dp_score(table, eps=0.8, delta=1e-6, groups=labels, directions=directions, random_state=6)
    np.testing.assert_array_equal(a.probs["add"], b.probs["add"])
    assert a.cost == b.cost == plan.cost
    with pytest.raises(ValueError, match="groups=2"):
        execute(plan, table, directions=directions, groups=np.repeat(list("abcd"), 100))
    with pytest.raises(ValueError, match="directions given"):
        execute(plan, table, random_state=6, groups=labels)


def test_a_scree_plan_takes_given_directions_at_execution(table):
    directions = dppca.dp_pc_dir(table, eps=0.5, delta=1e-6, random_state=1)
    plan = dppca.plan_scree(400, 5, 3, eps=0.8, delta=1e-6, directions_given=True)
    a = execute(plan, table, random_state=2, directions=directions)
    b = dppca.dp_scree(table, 3, eps=0.8, delta=1e-6, directions=directions, random_state=2)
    np.testing.assert_array_equal(a.values, b.values)
    with pytest.raises(ValueError, match="release them"):
        execute(dppca.plan_scree(400, 5, 3, eps=0.8, delta=1e-6), table, directions=directions)
