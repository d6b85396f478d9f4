"""The DP correlation circle: its geometry against direct correlations, its picture."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.patches import Ellipse, FancyArrow

from dppca import AccuracyWarning, PrivacyCost, dp_pca
from dppca.datasets import load_wine
from dppca.plotting._caption import find_caption
from dppca.plotting.variables import (
    correlation_coordinates,
    correlations_from_matrix,
    fit_correlations,
    plot_correlation_circle,
    reperturbed_correlations,
)


def _direct(Z: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Correlation of each column of Z with each score Z v_l, by np.corrcoef."""
    p, k = V.shape
    S = Z @ V
    return np.array([[np.corrcoef(Z[:, j], S[:, c])[0, 1] for c in range(k)] for j in range(p)])


@pytest.fixture
def ax():
    import matplotlib.pyplot as plt

    return plt.subplots()[1]


@pytest.fixture
def table(rng):
    mix = rng.normal(size=(4, 4))
    return rng.normal(size=(300, 4)) @ mix * np.array([1.0, 10.0, 0.1, 3.0])


def test_units_formula_is_the_correlation_with_the_scores(table):
    # With every eigenpair of the covariance, r_jl = v_jl sqrt(l_l) / sd_j exactly.
    w, V = np.linalg.eigh(np.cov(table, rowvar=False))
    np.testing.assert_allclose(correlation_coordinates(V, w), _direct(table, V), atol=1e-10)


def test_standardised_formula_holds_for_any_orthonormal_directions(table, rng):
    Z = (table - table.mean(0)) / table.std(0, ddof=1)
    R = np.corrcoef(table, rowvar=False)
    Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))  # not eigenvectors of R
    np.testing.assert_allclose(correlations_from_matrix(R, Q), _direct(Z, Q), atol=1e-10)


def test_correlations_stay_in_the_unit_square_for_a_noisy_estimate(rng):
    R = np.array([[1.0, 0.95, -0.9], [0.95, 1.0, 0.9], [-0.9, 0.9, 1.0]])  # indefinite
    assert np.linalg.eigvalsh(R).min() < 0
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    r = correlations_from_matrix(R, Q)
    assert np.all(np.abs(r) <= 1.0)
    # and the units formula puts every variable on the unit circle with all p PCs
    np.testing.assert_allclose(
        np.sum(correlation_coordinates(Q, [3.0, 2.0, 1.0]) ** 2, axis=1), 1.0
    )


def _stand_in(rng, p=5, sigma=0.02, tau=False):
    """The fields of a PCAResult the circle reads, from a made-up release."""
    A = np.corrcoef(rng.normal(size=(60, p)) @ rng.normal(size=(p, p)), rowvar=False)
    A = A / p if tau else A
    w, V = np.linalg.eigh(A)
    V = V[:, ::-1]
    corr = np.sin(0.5 * np.pi * np.clip(p * A, -1, 1)) if tau else None
    cost = PrivacyCost(1.0, 1e-6, "gaussian", "x", kind="gaussian", sensitivity=0.1, sigma=0.3)
    return SimpleNamespace(
        directions=SimpleNamespace(directions=V, noisy_matrix=A, sigma=sigma),
        variances=np.sort(w)[::-1].clip(0) * 3,
        pve=np.sort(w)[::-1].clip(0) / w.clip(0).sum(),
        correlation_matrix=corr,
        variables=tuple(f"x{j}" for j in range(p)),
        n=60,
        eps=1.0,
        delta=1e-6,
        cost=cost,
        private=True,
    )


@pytest.mark.parametrize("tau", [False, True])
def test_reperturbations_shrink_to_the_released_correlations(rng, tau):
    # Re-perturbing with a vanishing sigma must give back the picture itself:
    # the regions and the arrows are computed the same way.
    fit = _stand_in(rng, sigma=1e-9, tau=tau)
    spread = reperturbed_correlations(fit, 5, random_state=0)
    assert spread.shape == (5, 5, 5)
    np.testing.assert_allclose(
        spread, np.broadcast_to(fit_correlations(fit), spread.shape), atol=1e-6
    )
    wide = reperturbed_correlations(_stand_in(rng, sigma=0.05, tau=tau), 50, random_state=0)
    assert wide.std(axis=0).max() > 1e-3


def test_circle_draws_arrows_regions_and_a_caption(rng, ax):
    fit = _stand_in(rng)
    out = plot_correlation_circle(fit, ax=ax, random_state=0)
    assert out is ax
    assert sum(isinstance(p, FancyArrow) for p in ax.patches) == 5
    assert sum(type(p) is Ellipse for p in ax.patches) == 5
    assert ax.get_xlim() == (-1.0, 1.0) and ax.get_ylim() == (-1.0, 1.0)
    caption = find_caption(ax).get_text()
    assert "eps=1, delta=1e-06, n=60" in caption and "privacy-noise regions" in caption
    assert {t.get_text() for t in ax.texts} >= set(fit.variables)
    assert "% of variance" in ax.get_xlabel()


def test_circle_without_regions_and_with_points(rng, ax):
    plot_correlation_circle(_stand_in(rng), ax=ax, kind="point", noise_regions=False)
    assert not any(type(p) is Ellipse for p in ax.patches)
    assert len(ax.collections) == 1


def test_circle_refuses_unknown_keywords_and_variables(rng, ax):
    fit = _stand_in(rng)
    with pytest.raises(TypeError, match="xlim"):
        plot_correlation_circle(fit, ax=ax, xlim=(0, 1))
    with pytest.raises(ValueError, match="variables"):
        plot_correlation_circle(fit, ax=ax, variables=["nope"])


def _picture(ax):
    arrows = [np.asarray(p.get_xy()) for p in ax.patches if isinstance(p, FancyArrow)]
    ellipses = [
        (*map(float, p.center), p.width, p.height, p.angle)
        for p in ax.patches
        if type(p) is Ellipse
    ]
    return arrows, ellipses


def test_a_fit_draws_from_released_values_only(ax):
    # Poison the table after the release: the picture must not change.
    X = load_wine()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        fit = dp_pca(X, eps=2.0, delta=1e-6, score=False, random_state=0)
    before = _picture(fit.plot("variable", ax=ax, random_state=1))
    X.loc[:, :] = np.nan
    X.iloc[0, 0] = 1e300
    import matplotlib.pyplot as plt

    _, ax2 = plt.subplots()
    after = _picture(fit.plot("variable", ax=ax2, random_state=1))
    assert len(before[0]) == X.shape[1]
    for x, y in zip(before[0], after[0], strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(np.array(before[1], float), np.array(after[1], float))
    assert len(before[1]) == X.shape[1]
    # standardised fit: the arrows are the released correlation estimate's
    r = fit_correlations(fit)
    V = np.asarray(fit.directions.directions)
    R = np.asarray(fit.correlation_matrix)
    assert fit.correlation_matrix is not None
    np.testing.assert_allclose(r, correlations_from_matrix(R, V))


def test_joint_regions_are_the_bonferroni_widening(rng):
    # Same draws, level 1 - 0.05 / 5 for five arrows: every ellipse grows by
    # sqrt(log(0.05 / 5) / log(0.05)) (radius sqrt(-2 log(1 - level))).
    import matplotlib.pyplot as plt

    fit = _stand_in(rng)
    sizes = {}
    for joint in (False, True):
        _, ax = plt.subplots()
        plot_correlation_circle(fit, ax=ax, joint=joint, random_state=0)
        sizes[joint] = np.array([p.width for p in ax.patches if type(p) is Ellipse])
        assert ("joint 95%" in find_caption(ax).get_text()) is joint
    np.testing.assert_allclose(
        sizes[True] / sizes[False], np.sqrt(np.log(0.01) / np.log(0.05)), rtol=1e-12
    )
