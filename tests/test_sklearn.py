"""Tests of the scikit-learn estimator ``dppca.DPPCA``.

Scikit-learn's estimator checks run on two configurations. Skipped, and why:

- ``check_array_api_input``: skipped by scikit-learn itself unless
  ``SCIPY_ARRAY_API`` is set; DPPCA computes with numpy only.

The checks run with ``public_transform=True`` (the checks transform their
training data and any warning fails this suite) and an integer
``random_state`` (the checks require repeatable fits).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import dppca  # noqa: E402
from dppca import (  # noqa: E402
    DPPCA,
    Budget,
    BudgetExceededError,
    PrivacyWarning,
    dp_pc_dir,
    dp_pca,
)
from dppca.datasets import load_gau, load_gau_g  # noqa: E402


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
@pytest.mark.filterwarnings("ignore::dppca.AccuracyWarning")
@parametrize_with_checks(
    [
        DPPCA(n_components=2, random_state=0, public_transform=True),
        DPPCA(n_components=2, random_state=0, public_transform=True, standardize=False),
        DPPCA(random_state=0, public_transform=True, standardize=False, variances=True),
    ]
)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_fit_releases_the_same_directions_as_the_library():
    X = load_gau()
    est = DPPCA(
        n_components=3,
        eps=0.5,
        delta=1e-5,
        standardize=False,
        random_state=4,
        calibration="analytic",
        ties="zero",
    ).fit(X)
    ref = dp_pc_dir(X, 3, eps=0.5, delta=1e-5, random_state=4, calibration="analytic", ties="zero")
    np.testing.assert_array_equal(est.components_, ref.directions.T)
    assert est.cost_ == ref.cost and est.n_features_in_ == 20
    assert list(est.feature_names_in_) == list(X.columns)
    assert est.directions_.variables == tuple(X.columns)
    assert list(est.get_feature_names_out()) == ["dppca0", "dppca1", "dppca2"]


def test_variances_in_units_come_from_a_fit_in_units():
    X = load_gau()
    est = DPPCA(
        n_components=4, eps=0.8, delta=1e-5, random_state=2, standardize=False, variances=True
    ).fit(X)
    ref = dp_pca(X, eps=0.8, delta=1e-5, standardize=False, k=4, score=False, random_state=2)
    np.testing.assert_array_equal(est.explained_variance_, ref.variances)
    np.testing.assert_array_equal(est.explained_variance_ratio_, ref.pve)
    np.testing.assert_array_equal(est.components_, ref.directions.directions.T)
    assert est.cost_.eps == pytest.approx(0.8) and est.cost_ == ref.cost
    assert est.analysis_ == "units" and est.scale_ is None


def test_variances_are_absent_from_the_directions_only_release():
    est = DPPCA(n_components=2, random_state=0, standardize=False).fit(load_gau())
    assert est.pca_ is None
    with pytest.raises(AttributeError, match="variances=True"):
        _ = est.explained_variance_ratio_
    assert not hasattr(est, "explained_variance_")
    assert not hasattr(DPPCA(), "explained_variance_ratio_")


def test_transform_warns_unless_the_data_are_declared_public(small_data):
    est = DPPCA(n_components=2, random_state=0, standardize=False).fit(small_data)
    with pytest.warns(PrivacyWarning, match="public_transform=True"):
        scores = est.transform(small_data)
    np.testing.assert_allclose(scores, small_data @ est.components_.T)
    est.set_params(public_transform=True)
    back = est.inverse_transform(est.transform(small_data))
    assert back.shape == small_data.shape
    np.testing.assert_allclose(est.transform(back), est.transform(small_data), atol=1e-10)


def test_bounds_are_passed_to_the_release():
    X = np.random.default_rng(0).normal(size=(50, 3))
    kw = {"eps": 1.0, "delta": 1e-5, "random_state": 0, "standardize": False}
    est = DPPCA(bounds=(-0.5, 0.5), **kw).fit(X)
    clipped = DPPCA(**kw).fit(np.clip(X, -0.5, 0.5))
    np.testing.assert_array_equal(est.components_, clipped.components_)


def test_pipeline_and_grid_search_fit_once_per_candidate_and_fold(monkeypatch):
    data = load_gau_g()
    X, y = data.drop(columns="group"), data["group"]
    X, y = X.iloc[::10], y.iloc[::10]
    calls = []
    real_fit = DPPCA.fit

    def counting_fit(self, X, y=None):
        calls.append(len(X))
        return real_fit(self, X, y)

    monkeypatch.setattr(DPPCA, "fit", counting_fit)
    pipe = Pipeline(
        [
            (
                "pca",
                DPPCA(
                    eps=1.0, delta=1e-5, random_state=0, public_transform=True, standardize=False
                ),
            ),
            ("clf", LogisticRegression(max_iter=500)),
        ]
    )
    pipe.fit(X, y)
    assert pipe.score(X, y) > 0.5 and calls == [len(X)]
    calls.clear()
    grid = GridSearchCV(pipe, {"pca__n_components": [2, 4]}, cv=3).fit(X, y)
    assert grid.best_params_["pca__n_components"] in (2, 4)
    assert len(calls) == 2 * 3 + 1  # each candidate and fold spends, and so does the refit


def test_estimator_pickles_without_a_generator(small_data):
    est = DPPCA(n_components=2, random_state=3, public_transform=True).fit(small_data)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.transform(small_data), est.transform(small_data))
    assert dppca.DPPCA is DPPCA


@pytest.mark.parametrize("bad", [0, 6, 2.5, True])
def test_bad_n_components_is_named(bad, small_data):
    with pytest.raises(ValueError, match="n_components"):
        DPPCA(n_components=bad, random_state=0).fit(small_data)


def _units_table(n: int = 300, seed: int = 5) -> np.ndarray:
    """Four correlated Gaussian columns written in units 1e-2 to 1e4 apart."""
    rng = np.random.default_rng(seed)
    cov = np.full((4, 4), 0.5) + 0.5 * np.eye(4)
    z = rng.multivariate_normal(np.zeros(4), cov, size=n)
    return z * np.array([1.0, 100.0, 0.01, 1e4])


def test_standardized_fit_is_the_library_fit():
    X = _units_table()
    est = DPPCA(eps=1.0, delta=1e-6, random_state=8, public_transform=True).fit(X)
    ref = dp_pca(X, eps=1.0, delta=1e-6, k=4, score=True, random_state=8)
    assert est.analysis_ == ref.analysis == "standardized"
    np.testing.assert_array_equal(est.components_, ref.directions.directions.T)
    np.testing.assert_array_equal(est.explained_variance_ratio_, ref.pve)
    np.testing.assert_array_equal(est.scale_, ref.scales)  # private scales, from the fit
    assert est.pca_.score is not None
    assert (est.cost_.eps, est.cost_.delta) == (ref.cost.eps, ref.cost.delta) == (1.0, 1e-6)
    np.testing.assert_allclose(est.transform(X), (X / ref.scales) @ est.components_.T)


def test_standardized_fit_with_public_scales_is_the_same_in_any_units():
    X = _units_table()
    units = np.array([3.0, 1e-3, 50.0, 7.0])
    sd = np.array([1.0, 100.0, 0.01, 1e4])  # a codebook's scales, not the data's
    kw = {"eps": 1.0, "delta": 1e-6, "random_state": 1, "public_transform": True}
    a = DPPCA(scales=sd, **kw).fit(X)
    b = DPPCA(scales=sd * units, **kw).fit(X * units)
    assert a.pca_.score is None  # public scales: nothing spent on a score plot
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-12)
    np.testing.assert_allclose(a.transform(X), b.transform(X * units), rtol=1e-9)
    back = b.inverse_transform(b.transform(X * units))
    np.testing.assert_allclose(b.transform(back), b.transform(X * units), rtol=1e-9)


def test_budget_charges_each_fit_and_refuses_when_spent():
    X = _units_table()
    # one fit of (0.5, 1e-6) fits a total of (0.5, 1e-5); two Gaussian fits compose to
    # more than eps 0.5 at delta 1e-5, so the second is refused before reading the data
    budget = Budget(eps=0.5, delta=1e-5)
    est = DPPCA(eps=0.5, delta=1e-6, budget=budget, random_state=0, scales=np.ones(4))
    est.fit(X)
    assert budget.ledger == (est.cost_,)
    with pytest.raises(BudgetExceededError):
        est.fit(X)
    assert len(budget.ledger) == 1  # the refused fit charged nothing


def test_a_ledger_budget_charges_each_fit_and_refuses_when_spent(tmp_path):
    from dppca.privacy.fingerprint import fingerprint
    from dppca.privacy.ledger import Ledger

    X = _units_table()
    led = Ledger(tmp_path / "ledger.sqlite")
    fp = fingerprint(X)
    led.set_total(fp, 0.5, 1e-5)
    # the same totals as with the in-memory Budget above: one fit fits, a second does not
    est = DPPCA(eps=0.5, delta=1e-6, budget=led.budget(fp, kind="fit"), random_state=0)
    est.set_params(scales=np.ones(4)).fit(X)
    (kept,) = Ledger(tmp_path / "ledger.sqlite").budget(fp).ledger  # on disk, reopened
    assert (kept.eps, kept.delta) == (est.cost_.eps, est.cost_.delta)
    with pytest.raises(BudgetExceededError):
        est.fit(X)
    assert led.releases(fp)["kind"].tolist() == ["fit"]  # the refused fit charged nothing


def test_clones_share_the_accountant_so_a_search_is_charged_per_fit():
    data = load_gau_g()
    X, y = data.drop(columns="group").iloc[::10], data["group"].iloc[::10]
    budget = Budget(eps=100.0, delta=1e-3)
    est = DPPCA(eps=1.0, delta=1e-6, budget=budget, public_transform=True, standardize=False)
    assert sklearn.base.clone(est).budget is budget
    pipe = Pipeline([("pca", est), ("clf", LogisticRegression(max_iter=500))])
    GridSearchCV(pipe, {"pca__n_components": [2, 4]}, cv=3).fit(X, y)
    assert len(budget.ledger) == 2 * 3 + 1  # each candidate and fold, and the refit
    # a smaller total: the accountant allows `allowed` fits of this cost, fewer than 7
    allowed, probe = 0, Budget(eps=2.0, delta=1e-5)
    while probe.can_afford(budget.ledger[0]):
        probe.spend(budget.ledger[0])
        allowed += 1
    small = Budget(eps=2.0, delta=1e-5)
    grid = {"pca__n_components": [2, 4]}
    search = GridSearchCV(pipe.set_params(pca__budget=small), grid, cv=3, error_score="raise")
    with pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert len(small.ledger) == allowed < 7  # refused once the total is spent


def test_standardized_fit_works_in_a_pipeline():
    data = load_gau_g()
    X, y = data.drop(columns="group").iloc[::5], data["group"].iloc[::5]
    pipe = Pipeline(
        [
            (
                "pca",
                # public bounds (a codebook's) give the scales transform divides by
                DPPCA(
                    n_components=2, eps=2.0, delta=1e-6, bounds=(-20, 20), public_transform=True
                ),
            ),
            ("clf", LogisticRegression(max_iter=500)),
        ]
    )
    pipe.fit(X, y)
    fitted = pipe.named_steps["pca"]
    assert fitted.explained_variance_ratio_.shape == (2,) and fitted.analysis_ == "standardized"
    np.testing.assert_array_equal(fitted.scale_, np.full(X.shape[1], 40.0))
    assert pipe.score(X, y) > 0.5
    assert pipe.get_params()["pca__standardize"] is True
    assert sklearn.base.clone(pipe).get_params()["pca__eps"] == 2.0
