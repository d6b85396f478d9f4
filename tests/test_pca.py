"""Tests of one private PCA (dp_pca): cost, analysis, scree, frames, tables, files."""

from __future__ import annotations

import numpy as np
import pytest

import dppca
from dppca import PCAResult, dp_pca


def _table(rng: np.random.Generator, n: int = 400) -> np.ndarray:
    """A 4-column Gaussian table with one strong factor, in very different units."""
    cov = np.full((4, 4), 0.6) + 0.4 * np.eye(4)
    z = rng.multivariate_normal(np.zeros(4), cov, size=n)
    return z * np.array([1.0, 100.0, 0.01, 1e4]) + np.array([0.0, 5e3, 1.0, -2e5])


def _fit(X: np.ndarray, **kw: object) -> PCAResult:
    kw = {"eps": 2.0, "delta": 1e-6, "random_state": 3, "accuracy": "ignore", **kw}
    return dp_pca(X, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("standardize", [True, False])
def test_fit_records_exactly_its_eps(rng, standardize):
    fit = _fit(_table(rng), standardize=standardize)
    assert fit.cost.eps == 2.0 and fit.cost.delta == 1e-6
    # the parts compose tightly to at most eps, and use nearly all of it
    eps, _ = dppca.tight_total(list(fit.parts.values()), 1e-6)
    assert 0.999 * 2.0 <= eps <= 2.0 * (1 + 1e-9)
