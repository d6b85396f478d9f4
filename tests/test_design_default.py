"""The default pair design: exact for ordinary tables, balanced above a public work threshold."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dppca import dp_pc_dir, dp_scree, plan_pc_dir, plan_report, plan_score, plan_scree
from dppca.kernels import kendall
from dppca.kernels.kendall import BALANCED_DEFAULT_WORK, default_design
from dppca.releases.forecast import time_lines
from dppca.releases.loading.plan import plan_loading

BIG = 200_000  # 200,000 x 20: 4e11 pair-columns, above the threshold


def test_the_default_design_is_a_rule_on_n_and_p():
    # n (n - 1) / 2 * p against 1e11: 100,000 rows at p = 20 are 9.9999e10
    assert BALANCED_DEFAULT_WORK == 1e11
    assert default_design(100_000, 20) == "exact"
    assert default_design(100_001, 20) == "balanced"
    assert default_design(141_422, 10) == "balanced" and default_design(141_421, 10) == "exact"
    assert default_design(20_000, 20) == "exact"


def test_every_plan_making_directions_takes_the_rule():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # forecasts about the tiny eps
        small = plan_pc_dir(20_000, 20, eps=1.0, delta=1e-7)
        big = plan_pc_dir(BIG, 20, eps=1.0, delta=1e-7)
        parts = [
            plan_scree(BIG, 20, 3, eps=1.0, delta=1e-7).directions,
            plan_loading(BIG, 20, eps=1.0, delta=1e-7).directions,
            plan_score(BIG, 20, eps=1.0, delta=1e-7).directions,
            dict(plan_report(BIG, 20, eps=1.0, delta=1e-7).plans)["directions"],
        ]
        named = plan_pc_dir(BIG, 20, eps=1.0, delta=1e-7, design="exact")
        tau = plan_pc_dir(BIG, 20, eps=1.0, delta=1e-7, estimator="tau")
    assert small.design == "exact"
    assert big.design == "balanced" and big.m == 20
    assert [part.design for part in parts] == ["balanced"] * 4
    assert named.design == "exact"  # a design given by name is kept
    assert tau.design == "exact"  # tau's exact counts cost O(n log n)
    assert big.cost.eps == named.cost.eps  # the same privacy cost


def test_plans_say_which_design_the_default_chose_and_what_the_other_costs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = time_lines(plan_scree(BIG, 20, 3, eps=1.0, delta=1e-7))
        named = time_lines(plan_pc_dir(BIG, 20, eps=1.0, delta=1e-7, design="exact"))
        small = time_lines(plan_pc_dir(2000, 20, eps=1.0, delta=1e-5))
    said = [line for line in chosen if "balanced design (the default" in line]
    assert len(said) == 1 and "--design exact" in said[0]
    assert any("--design balanced" in line for line in named)
    assert len(small) == 1 and "design" not in small[0]


@pytest.mark.parametrize("face", ["dp_pc_dir", "dp_scree"])
def test_releases_use_the_balanced_design_above_the_threshold(monkeypatch, face):
    # The threshold lowered to this small table: the default must then give the
    # balanced release bit for bit, and the exact one below it (seeded results
    # of ordinary tables are unchanged by the rule).
    rng = np.random.default_rng(20240601)
    X = rng.normal(size=(300, 4)) * [3.0, 2.0, 1.0, 0.5]

    def run(**kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if face == "dp_pc_dir":
                return dp_pc_dir(X, 2, eps=1.0, delta=1e-5, random_state=3, **kw).noisy_matrix
            res = dp_scree(X, 2, eps=1.0, delta=1e-5, random_state=3, **kw)
            return np.append(res.values, res.directions)

    exact = run() if face == "dp_scree" else run(design="exact")
    assert np.array_equal(run(), exact)
    monkeypatch.setattr(kendall, "BALANCED_DEFAULT_WORK", 100.0)
    balanced = run() if face == "dp_scree" else run(design="balanced")
    assert not np.array_equal(balanced, exact)
    if face == "dp_pc_dir":
        assert np.array_equal(run(), balanced)
    else:
        monkeypatch.setattr(kendall, "BALANCED_DEFAULT_WORK", 1e11)
        assert np.array_equal(run(), exact)


# -- design= on every face (scree, score, report, the PCA fit, DPPCA) ----------------------


def _designs(cost):
    """The pair designs named by the Kendall parts of a cost ("balanced" or "exact")."""
    texts = [leaf.released for leaf in cost.leaves() if "Kendall" in leaf.released]
    return ["balanced" if "balanced design" in text else "exact" for text in texts]


def _release(face, X, **kw):
    import dppca

    common = dict(eps=2.0, delta=1e-5, accuracy="ignore", random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if face == "dp_scree":
            res = dppca.dp_scree(X, 2, **common, **kw)
            return res.cost, np.append(res.values, res.directions)
        if face == "dp_score":
            res = dppca.dp_score(X, **common, **kw)
            return res.cost, np.asarray(res.directions)
        if face == "report":
            res = dppca.report(X, **common, **kw)
            return res.cost, res.directions.noisy_matrix
        if face == "dp_pca":
            res = dppca.dp_pca(X, standardize=False, **common, **kw)
            return res.cost, res.directions.noisy_matrix
        est = dppca.DPPCA(2, standardize=False, variances=True, **common, **kw).fit(X)
        return est.cost_, est.directions_.noisy_matrix


# a report renders its page three times here (about 6 s)
FACES = ["dp_scree", "dp_score", pytest.param("report", marks=pytest.mark.slow), "dp_pca", "DPPCA"]


@pytest.mark.parametrize("face", FACES)
def test_every_face_takes_a_design_and_the_rule_keeps_seeded_results(face):
    # 300 rows: far below the threshold, so the rule gives exact; the balanced
    # design must show in the cost and change the draws, and the default must
    # be the exact release bit for bit (seeded results are unchanged).
    X = np.random.default_rng(20240602).normal(size=(300, 4)) * [3.0, 2.0, 1.0, 0.5]
    cost, default = _release(face, X)
    exact_cost, exact = _release(face, X, design="exact")
    balanced_cost, balanced = _release(face, X, design="balanced", m=5)
    assert _designs(cost) == _designs(exact_cost) == ["exact"]
    assert np.array_equal(default, exact)
    assert _designs(balanced_cost) == ["balanced"]
    assert "m=5" in str([leaf.released for leaf in balanced_cost.leaves()])
    assert not np.array_equal(balanced, exact)
    assert balanced_cost.eps == exact_cost.eps  # the same privacy cost


def test_every_plan_keeps_a_named_exact_design_at_large_n():
    from dppca import plan_pca

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plans = [
            plan_scree(BIG, 20, 3, eps=1.0, delta=1e-7, design="exact"),
            plan_score(BIG, 20, eps=1.0, delta=1e-7, design="exact"),
            plan_report(BIG, 20, eps=1.0, delta=1e-7, design="exact"),
            plan_pca(BIG, 20, eps=1.0, delta=1e-7, standardize=False, design="exact"),
        ]
        ruled = plan_pca(BIG, 20, eps=1.0, delta=1e-7, standardize=False)
        small = plan_score(2000, 20, eps=1.0, delta=1e-5, design="balanced", m=3)
    assert [_designs(plan.cost) for plan in plans] == [["exact"]] * 4
    assert [dict(plan.plans)["directions"].design for plan in plans[2:3]] == ["exact"]
    assert _designs(ruled.cost) == ["balanced"]
    assert small.directions.design == "balanced" and small.directions.m == 3


def test_a_design_the_standardised_pictures_decide_is_refused():
    import dppca

    X = np.random.default_rng(1).normal(size=(50, 3))
    for function in (dppca.dp_scree, dppca.dp_score, dppca.report):
        with pytest.raises(ValueError, match="design"):
            function(X, eps=1.0, delta=1e-5, standardize=True, design="balanced")
