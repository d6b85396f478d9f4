"""Tests of the bundled datasets."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dppca.datasets import DATASETS, load_dataset, load_gau, load_gau_g, load_wine, load_wine_g


def test_gau_shape_and_columns():
    X = load_gau()
    assert X.shape == (5000, 20)
    assert list(X.columns) == [f"V{j}" for j in range(1, 21)]
    assert np.isfinite(X.to_numpy()).all()


def test_gau_follows_the_group_design():
    frame = load_gau_g()
    groups = frame.pop("group")
    assert groups.value_counts().to_dict() == {f"group{g}": 1000 for g in range(1, 6)}
    design = {  # group: (mean on V1-5, mean on V6-10, variance)
        "group1": (0, 0, 1), "group2": (5, 0, 1), "group3": (-3, 0, 5),
        "group4": (0, -1, 5), "group5": (0, 3, 8),
    }  # fmt: skip
    for g, (m1, m2, var) in design.items():
        part = frame[groups == g].to_numpy()
        # Means of 1000 draws have sd sqrt(var/1000) <= 0.09: allow 6 sd (0.54).
        tol = 6 * np.sqrt(var / 1000)
        assert np.all(np.abs(part[:, :5].mean(axis=0) - m1) < tol)
        assert np.all(np.abs(part[:, 5:10].mean(axis=0) - m2) < tol)
        assert np.all(np.abs(part[:, 10:].mean(axis=0)) < tol)
        # 999 s^2 / var ~ chi2(999); central interval at level 1e-6 / 100 (Bonferroni
        # over 5 groups x 20 columns).
        lo, hi = stats.chi2.ppf([5e-9, 1 - 5e-9], df=999) / 999
        s2 = part.var(axis=0, ddof=1) / var
        assert np.all((s2 > lo) & (s2 < hi))


def test_load_dataset_by_name():
    assert set(DATASETS) >= {"gau", "gau_g"}
    assert load_dataset("gau").shape == (5000, 20)
    with pytest.raises(ValueError, match="dataset"):
        load_dataset("nope")


def test_wine_shape_columns_and_classes():
    X = load_wine()
    assert X.shape == (178, 13)
    assert X.columns[0] == "alcohol" and X.columns[-1] == "proline"
    assert all(X[c].dtype == np.float64 for c in X.columns)
    assert not X.duplicated().any()  # no tied rows for the spherical Kendall matrix
    counts = load_wine_g()["cultivar"].value_counts().to_dict()
    assert counts == {"cultivar1": 59, "cultivar2": 71, "cultivar3": 48}
    # Spot values of the first wine, as published by UCI.
    assert X.iloc[0][["alcohol", "magnesium", "proline"]].tolist() == [14.23, 127.0, 1065.0]
    assert set(DATASETS) >= {"wine", "wine_g"}
