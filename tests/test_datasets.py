"""Tests of the bundled datasets."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dppca import dp_pc_dir
from dppca.datasets import (
    DATASETS,
    load_breast_cancer,
    load_breast_cancer_g,
    load_dataset,
    load_gau,
    load_gau_g,
    load_iris,
    load_iris_g,
    load_wine,
    load_wine_g,
)


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
        "group1": (0, 0, 1),
        "group2": (5, 0, 1),
        "group3": (-3, 0, 5),
        "group4": (0, -1, 5),
        "group5": (0, 3, 8),
    }
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


def test_iris_shape_columns_species_and_its_tied_rows():
    X = load_iris()
    assert X.shape == (150, 4)
    assert list(X.columns) == ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    assert all(X[c].dtype == np.float64 for c in X.columns)
    counts = load_iris_g()["species"].value_counts().to_dict()
    assert counts == {"setosa": 50, "versicolor": 50, "virginica": 50}
    # The tie is kept on purpose: rows 102 and 143 (1-based) are identical.
    assert X.index[X.duplicated(keep=False)].tolist() == [101, 142]
    # Fisher's values in rows 35 and 38 (the UCI file has two known errors there).
    assert X.iloc[34].tolist() == [4.9, 3.1, 1.5, 0.2]
    assert X.iloc[37].tolist() == [4.9, 3.6, 1.4, 0.1]
    assert X.iloc[0].tolist() == [5.1, 3.5, 1.4, 0.2]
    # The tied pair is no obstacle with ties="zero".
    res = dp_pc_dir(X, 2, eps=0.5, delta=1e-5, ties="zero", random_state=0)
    assert res.directions.shape == (4, 2)


def test_breast_cancer_shape_columns_and_diagnosis():
    X = load_breast_cancer()
    assert X.shape == (569, 30)
    assert X.columns[0] == "radius_mean" and X.columns[10] == "radius_se"
    assert X.columns[20] == "radius_worst" and X.columns[-1] == "fractal_dimension_worst"
    assert "concave_points_mean" in X.columns
    assert all(X[c].dtype == np.float64 for c in X.columns)
    assert np.isfinite(X.to_numpy()).all()
    assert not X.duplicated().any()
    counts = load_breast_cancer_g()["diagnosis"].value_counts().to_dict()
    assert counts == {"malignant": 212, "benign": 357}
    # Spot values of the first case, as published by UCI.
    first = X.iloc[0][["radius_mean", "area_mean", "fractal_dimension_worst"]].tolist()
    assert first == [17.99, 1001.0, 0.1189]


@pytest.mark.parametrize("name", ["iris", "iris_g", "breast_cancer", "breast_cancer_g"])
def test_small_tables_load_by_name(name):
    frame = load_dataset(name)
    assert frame.shape[0] in (150, 569)
    assert frame.equals(DATASETS[name]())


def test_small_tables_are_available_to_the_command_line(capsys):
    from dppca.cli import main

    args = [
        "loading",
        "--dataset",
        "breast_cancer",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--calibration",
        "analytic",
        "--seed",
        "0",
    ]
    assert main(args) == 0
    assert "radius_mean" in capsys.readouterr().out
    args = [
        "loading",
        "--dataset",
        "iris",
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--calibration",
        "analytic",
        "--ties",
        "zero",
        "--seed",
        "0",
    ]
    assert main(args) == 0
    assert "petal_length" in capsys.readouterr().out


def test_the_bundled_keys_are_the_tables_fingerprints():
    from dppca.datasets import _KEYS, DATASETS, bundled_name
    from dppca.privacy.fingerprint import fingerprint

    found: dict[str, list[str]] = {}
    for name, loader in DATASETS.items():
        frame = loader()
        found.setdefault(fingerprint(frame), []).append(name)
        assert bundled_name(frame) == name
    assert {k: tuple(v) for k, v in found.items()} == _KEYS
