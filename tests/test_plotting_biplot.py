"""The DP biplot: Gabriel scaling, the score layer from released bins, one arrow multiplier."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.patches import Ellipse, FancyArrow

from dppca import AccuracyWarning, PrivacyCost, dp_pca
from dppca.datasets import load_iris
from dppca.plotting._caption import find_caption
from dppca.plotting.biplot import (
    arrow_multiplier,
    biplot_arrows,
    biplot_scale,
    histogram_layer,
    plot_biplot,
)


@pytest.fixture
def ax():
    return plt.subplots()[1]


def test_gabriel_scaling_factors():
    # d = sqrt((n - 1) lambda): n = 10, lambda = (4, 1) -> d = (6, 3)
    np.testing.assert_allclose(biplot_scale([4.0, 1.0], 10, 1.0), [6.0, 3.0])
    np.testing.assert_allclose(biplot_scale([4.0, 1.0], 10, 0.5), np.sqrt([6.0, 3.0]))
    np.testing.assert_allclose(biplot_scale([4.0, 1.0], 10, 0.0), [1.0, 1.0])
    V = np.array([[0.6, 0.8], [0.8, -0.6]])
    np.testing.assert_allclose(biplot_arrows(V, [6.0, 3.0]), [[3.6, 2.4], [4.8, -1.8]])


def test_gabriel_alpha_one_gives_the_svd_factors(rng):
    # On an exact (non-private) centred table, S / d = U and V d = V D:
    # the product of the two layers gives the table back (X = U D V').
    X = rng.normal(size=(40, 3)) @ rng.normal(size=(3, 3))
    X = X - X.mean(0)
    U, D, Vt = np.linalg.svd(X, full_matrices=False)
    lam = D**2 / (len(X) - 1)
    scale = biplot_scale(lam, len(X), 1.0)
    np.testing.assert_allclose(scale, D)
    rows = (X @ Vt.T) / scale
    np.testing.assert_allclose(rows, U, atol=1e-10)
    np.testing.assert_allclose(rows @ biplot_arrows(Vt.T, scale).T, X, atol=1e-10)


def test_histogram_layer_centres_at_the_released_mean():
    xe, ye = np.array([0.0, 1.0, 2.0]), np.array([10.0, 12.0])
    prob = np.array([[0.25, 0.75]])  # two bins, centres (0.5, 11) and (1.5, 11)
    x2, y2, centre = histogram_layer(xe, ye, prob, [2.0, 4.0])
    np.testing.assert_allclose(centre, [0.25 * 0.5 + 0.75 * 1.5, 11.0])
    np.testing.assert_allclose(x2, (xe - 1.25) / 2.0)
    np.testing.assert_allclose(y2, (ye - 11.0) / 4.0)


def test_one_multiplier_from_the_points_spread():
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(1000, 2))
    arrows = np.array([[0.1, 0.0], [0.0, 0.4], [0.3, 0.3]])
    m = arrow_multiplier(pts, arrows)
    dist = np.hypot(*(pts - pts.mean(0)).T)
    # the weighted quantile takes the first value whose cumulative weight reaches 90%
    expected = np.sort(dist)[int(np.ceil(0.9 * len(dist))) - 1] / 0.4242640687119285
    assert m == pytest.approx(expected)
    assert arrow_multiplier(np.zeros((0, 2)), arrows) == 1.0


def _stand_in(rng, groups=None):
    p = 4
    Q, _ = np.linalg.qr(rng.normal(size=(p, p)))
    edges = np.linspace(-3.0, 5.0, 5)
    g = 1 if groups is None else len(groups)
    prob = rng.random(size=(g, 16))
    prob /= prob.sum(axis=1, keepdims=True)
    cost = PrivacyCost(1.0, 1e-6, "gaussian", "x", kind="gaussian", sensitivity=0.1, sigma=0.3)
    score = SimpleNamespace(
        components=(1, 2),
        x_edges=edges,
        y_edges=edges - 1.0,
        probs={"add": prob},
        methods=("add",),
        directions=Q[:, :2],
        groups=groups,
        pc_labels=("PC1", "PC2"),
    )
    A = Q @ np.diag([3.0, 2.0, 1.0, 0.5]) @ Q.T
    directions = SimpleNamespace(directions=Q, noisy_matrix=A, sigma=0.01)

    class Loading:  # the fit's loading result: noise sensitivity of the directions
        def noise_sensitivity(self, draws, *, random_state=None):
            from dppca.releases.directions.result import DirectionsResult
            from dppca.releases.loading.result import LoadingResult

            res = DirectionsResult(
                directions=Q.copy(),
                eigenvalues=np.array([3.0, 2.0, 1.0, 0.5]),
                noisy_matrix=A.copy(),
                sigma=0.01,
                n=100,
                variables=tuple("abcd"),
                cost=cost,
            )
            return LoadingResult.from_directions(res).noise_sensitivity(
                draws, random_state=random_state
            )

    return SimpleNamespace(
        directions=directions,
        variances=np.array([3.0, 2.0, 1.0, 0.5]),
        pve=np.array([3.0, 2.0, 1.0, 0.5]) / 6.5,
        score=score,
        components=(1, 2),
        loading=Loading(),
        variables=tuple("abcd"),
        n=100,
        eps=1.0,
        delta=1e-6,
        cost=cost,
        private=True,
    )


def _arrow_tips(ax):
    # a FancyArrow from the origin: its tip is the vertex farthest from the origin
    tips = []
    for patch in ax.patches:
        if isinstance(patch, FancyArrow):
            xy = np.asarray(patch.get_xy())
            tips.append(xy[np.argmax(np.hypot(*xy.T))])
    return np.array(tips)


def test_biplot_draws_bins_arrows_and_regions_in_a_square_frame(rng, ax):
    fit = _stand_in(rng)
    out = plot_biplot(fit, ax=ax, random_state=0)
    assert out is ax
    tips = _arrow_tips(ax)
    assert len(tips) == 4
    assert sum(type(p) is Ellipse for p in ax.patches) == 4
    assert sum(isinstance(c, PolyCollection) for c in ax.collections) == 1
    lo, hi = ax.get_xlim()
    assert ax.get_ylim() == (lo, hi) and lo == -hi
    assert np.all(np.abs(tips) <= hi)
    # the layer's frame (centred, divided by d) lies inside the square as well
    scale = biplot_scale(fit.variances[:2], fit.n, 1.0)
    xe, ye, _ = histogram_layer(
        fit.score.x_edges, fit.score.y_edges, fit.score.probs["add"], scale
    )
    assert max(abs(xe).max(), abs(ye).max()) <= hi
    # the longest arrow reaches the 90% quantile of the bins' distances
    arrows = biplot_arrows(fit.directions.directions[:, :2], scale)
    longest = np.hypot(*tips.T).max()
    m = longest / np.hypot(*arrows.T).max()
    assert f"arrows x{m:.3g}" in find_caption(ax).get_text()
    assert "privacy-noise regions" in find_caption(ax).get_text()


def test_alpha_moves_weight_between_rows_and_arrows(rng):
    fit = _stand_in(rng)
    shapes = {}
    for alpha in (0.0, 1.0):
        _, ax = plt.subplots()
        plot_biplot(fit, ax=ax, alpha=alpha, noise_regions=False)
        tips = _arrow_tips(ax)
        shapes[alpha] = tips / np.hypot(*tips.T).max()
    # alpha = 0: arrows are the directions themselves (up to the multiplier);
    # alpha = 1: the columns are stretched by d = sqrt((n - 1) lambda)
    v = fit.directions.directions[:, :2]
    order = np.argsort(np.arctan2(v[:, 1], v[:, 0]))
    got0 = shapes[0.0][np.argsort(np.arctan2(shapes[0.0][:, 1], shapes[0.0][:, 0]))]
    np.testing.assert_allclose(got0, v[order] / np.hypot(*v.T).max(), atol=1e-3)
    d = biplot_scale(fit.variances[:2], fit.n, 1.0)
    vd = v * d
    got1 = shapes[1.0][np.argsort(np.arctan2(shapes[1.0][:, 1], shapes[1.0][:, 0]))]
    order1 = np.argsort(np.arctan2(vd[:, 1], vd[:, 0]))
    np.testing.assert_allclose(got1, vd[order1] / np.hypot(*vd.T).max(), atol=1e-3)


def test_groups_get_their_colours_and_a_legend(rng, ax):
    fit = _stand_in(rng, groups=("a", "b"))
    plot_biplot(fit, ax=ax, noise_regions=False)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]


def test_biplot_refuses_bad_options(rng, ax):
    fit = _stand_in(rng)
    with pytest.raises(ValueError, match="alpha"):
        plot_biplot(fit, ax=ax, alpha=2.0)
    with pytest.raises(ValueError, match="no score layer"):
        plot_biplot(fit, ax=ax, components=(1, 3))
    with pytest.raises(TypeError, match="xlim"):
        plot_biplot(fit, ax=ax, xlim=(0, 1))


def _picture(ax):
    arrows = [np.asarray(p.get_xy()) for p in ax.patches if isinstance(p, FancyArrow)]
    polys = [np.asarray(c.get_facecolors()) for c in ax.collections]
    return arrows, polys


@pytest.mark.parametrize("layer", ["histogram", "points"])
def test_a_fit_draws_from_released_values_only(layer):
    # Poison the table after the release: the picture must not change.
    X = load_iris()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        fit = dp_pca(X, eps=2.0, delta=1e-6, bounds=(0, 10), random_state=0)
    assert fit.score is not None
    _, ax = plt.subplots()
    before = _picture(fit.plot("biplot", ax=ax, layer=layer, random_state=1))
    X.loc[:, :] = np.nan
    _, ax2 = plt.subplots()
    after = _picture(fit.plot("biplot", ax=ax2, layer=layer, random_state=1))
    assert len(before[0]) == X.shape[1]
    for x, y in zip(before[0] + before[1], after[0] + after[1], strict=True):
        np.testing.assert_array_equal(x, y)


def test_joint_regions_widen_every_arrow_region(rng):
    fit = _stand_in(rng)
    widths = {}
    for joint in (False, True):
        _, ax = plt.subplots()
        plot_biplot(fit, ax=ax, joint=joint, random_state=0)
        widths[joint] = np.array([p.width for p in ax.patches if type(p) is Ellipse])
    # four arrows: level 1 - 0.05 / 4
    np.testing.assert_allclose(
        widths[True] / widths[False], np.sqrt(np.log(0.0125) / np.log(0.05)), rtol=1e-12
    )
