"""Post-release checks of one private PCA: wrong pictures warn, right ones stay quiet."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from dppca import AccuracyWarning, InaccurateReleaseError, PCAResult, dp_pca
from dppca.releases.pca.draw import edge_share_bound
from dppca.releases.score.frame_check import EDGE_SHARE

UNITS = np.array([1.0, 100.0, 0.01, 1e4])


def _distinct(rng: np.random.Generator, n: int) -> np.ndarray:
    """A Gaussian table with well separated correlation eigenvalues, in raw units."""
    q = np.linalg.qr(np.arange(1.0, 17.0).reshape(4, 4) ** 0.5)[0]
    cov = q @ np.diag([2.2, 1.1, 0.5, 0.2]) @ q.T
    return rng.multivariate_normal(np.zeros(4), cov, size=n) * UNITS


# ------------------------------------------------------------------ frame cut off


def test_a_scale_far_off_its_column_is_flagged_by_the_histogram(rng):
    # The frame follows from the tau variances, which assume a standardised score
    # table; a scale 1000 times too small blows one column up, the scores leave the
    # frame and pile up in its edge bins. The frame-vs-variance check cannot see it.
    X = _distinct(rng, 2000)
    off = UNITS * np.array([1.0, 1e-3, 1.0, 1.0])
    with pytest.warns(AccuracyWarning, match="outer bins"):
        fit = dp_pca(X, eps=2.0, delta=1e-6, scales=off, random_state=0)
    assert any("outer bins" in note for note in fit.notes)
    share = edge_share_bound(fit)
    assert share is not None and share >= EDGE_SHARE
    with pytest.raises(InaccurateReleaseError, match="outer bins") as info:
        dp_pca(X, eps=2.0, delta=1e-6, scales=off, random_state=0, accuracy="error")
    assert isinstance(info.value.result, PCAResult)


def test_right_frames_are_not_flagged(rng):
    X = _distinct(rng, 2000)
    for seed in range(5):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # any warning fails
            fit = dp_pca(X, eps=2.0, delta=1e-6, scales=UNITS, random_state=seed)
        share = edge_share_bound(fit)
        assert share is not None and share < EDGE_SHARE


def _released(counts: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """The "add" histogram as released: max(0, c + N(0, sigma^2)), normalised."""
    noisy = np.maximum(counts + rng.normal(0.0, sigma, counts.shape), 0.0)
    return noisy / noisy.sum()


@pytest.mark.parametrize("sigma", [5.0, 40.0])
def test_edge_bound_is_a_lower_bound(rng, sigma):
    # 7 x 7 grid, 2000 rows: 30 % in the ring, the rest in the inner 5 x 5.
    mx = my = 7
    grid = np.zeros((my, mx))
    grid[1:-1, 1:-1] = 1400 / 25
    grid[0, :] = 600 / 7
    counts = grid.ravel()
    truth = 600 / 2000
    above, draws = 0, 400
    for _ in range(draws):
        probs = _released(counts, sigma, rng)
        fake = SimpleNamespace(
            n=2000,
            score=SimpleNamespace(
                probs={"add": probs[None, :]},
                noise={"add": {"sigma": sigma}},
                bins=(mx, my),
                frame_source="fit",
            ),
        )
        bound = edge_share_bound(fake)  # type: ignore[arg-type]
        assert bound is not None
        above += bound > truth
    # each of the bound's two 2-sd steps fails with probability <= 0.023, so at most
    # 0.046 overall; accept the binomial(400, 0.046) count up to its 1 - 1e-6 quantile
    assert above <= stats.binom.ppf(1 - 1e-6, draws, 0.046)


def test_edge_bound_is_skipped_without_every_row_scored():
    fake = SimpleNamespace(
        n=100,
        score=SimpleNamespace(
            probs={"add": np.full((1, 49), 1 / 49)},
            noise={"add": {"sigma": 1.0}},
            bins=(7, 7),
            frame_source="fit",
        ),
    )
    assert edge_share_bound(fake, complete=False) is None  # type: ignore[arg-type]
    assert math.isfinite(edge_share_bound(fake))  # type: ignore[arg-type]


def test_a_frame_over_public_bounds_is_not_judged_by_its_edges(rng):
    # The frame is the range of the scores over the box: no row can fall outside it.
    X = _distinct(rng, 2000)
    box = np.array([[-5.0, 5.0], [-500.0, 500.0], [-0.05, 0.05], [-5e4, 5e4]])  # codebook
    fit = dp_pca(X, eps=2.0, delta=1e-6, bounds=box, random_state=0, accuracy="ignore")
    assert fit.score is not None and fit.score.frame_source == "bounds"
    assert edge_share_bound(fit) is None


# ------------------------------------------------------------------ the split


@pytest.mark.parametrize(("n", "p", "eps"), [(392, 6, 1.0), (500, 4, 2.0)])
def test_without_a_score_plot_the_directions_get_the_whole_budget(n, p, eps):
    # Where the score plot is left out, nothing else spends: the tau release runs at
    # the analytic sigma of its tight sensitivity 2 sqrt(2) / n at the fit's own
    # (eps, delta), the least noise the guarantee allows for it.
    from dppca.privacy.mechanisms import gaussian_sigma
    from dppca.releases.directions.tau import tau_sensitivity
    from dppca.releases.pca.plan import plan_pca

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        plan = plan_pca(n, p, eps=eps, delta=1e-6)
    assert [name for name, _ in plan.steps] == ["directions"]
    directions = dict(plan.steps)["directions"]
    assert (directions.cost.eps, directions.cost.delta) == (eps, 1e-6)
    least = gaussian_sigma(tau_sensitivity(n), eps, 1e-6, "analytic")
    assert directions.sigma == pytest.approx(least, rel=1e-12)
