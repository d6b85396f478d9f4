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
from dppca import DPPCA, PrivacyWarning, dp_pc_dir, dp_scree  # noqa: E402
from dppca.datasets import load_gau, load_gau_g  # noqa: E402


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
@pytest.mark.filterwarnings("ignore::dppca.AccuracyWarning")
@parametrize_with_checks(
    [
        DPPCA(n_components=2, random_state=0, public_transform=True),
        DPPCA(random_state=0, public_transform=True, variances=True),
    ]
)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_fit_releases_the_same_directions_as_the_library():
    X = load_gau()
    est = DPPCA(
        n_components=3, eps=0.5, delta=1e-5, random_state=4, calibration="analytic", ties="zero"
    ).fit(X)
    ref = dp_pc_dir(X, 3, eps=0.5, delta=1e-5, random_state=4, calibration="analytic", ties="zero")
    np.testing.assert_array_equal(est.components_, ref.directions.T)
    assert est.cost_ == ref.cost and est.n_features_in_ == 20
    assert list(est.feature_names_in_) == list(X.columns)
    assert est.directions_.variables == tuple(X.columns)
    assert list(est.get_feature_names_out()) == ["dppca0", "dppca1", "dppca2"]


def test_variances_share_the_budget_and_are_private():
    X = load_gau()
    est = DPPCA(
        n_components=4,
        eps=0.8,
        delta=1e-5,
        random_state=2,
        variances=True,
        calibration="analytic",
        ties="zero",
    ).fit(X)
    ref = dp_scree(X, 4, eps=0.8, delta=1e-5, random_state=2, calibration="analytic", ties="zero")
    np.testing.assert_array_equal(est.explained_variance_, ref.scree)
    np.testing.assert_array_equal(est.explained_variance_ratio_, ref.pve_total)
    np.testing.assert_array_equal(est.components_, ref.directions.T)
    assert est.cost_.eps == pytest.approx(0.8) and est.cost_ == ref.cost


def test_variances_are_absent_without_variances_true():
    est = DPPCA(n_components=2, random_state=0).fit(load_gau())
    with pytest.raises(AttributeError, match="variances=True"):
        _ = est.explained_variance_ratio_
    assert not hasattr(est, "explained_variance_")
    assert not hasattr(DPPCA(), "explained_variance_ratio_")


def test_transform_warns_unless_the_data_are_declared_public(small_data):
    est = DPPCA(n_components=2, random_state=0).fit(small_data)
    with pytest.warns(PrivacyWarning, match="public_transform=True"):
        scores = est.transform(small_data)
    np.testing.assert_allclose(scores, small_data @ est.components_.T)
    est.set_params(public_transform=True)
    back = est.inverse_transform(est.transform(small_data))
    assert back.shape == small_data.shape
    np.testing.assert_allclose(est.transform(back), est.transform(small_data), atol=1e-10)


def test_bounds_are_passed_to_the_release():
    X = np.random.default_rng(0).normal(size=(50, 3))
    est = DPPCA(eps=1.0, delta=1e-5, bounds=(-0.5, 0.5), random_state=0).fit(X)
    clipped = DPPCA(eps=1.0, delta=1e-5, random_state=0).fit(np.clip(X, -0.5, 0.5))
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
            ("pca", DPPCA(eps=1.0, delta=1e-5, random_state=0, public_transform=True)),
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
