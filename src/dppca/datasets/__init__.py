"""Bundled datasets.

``gau``
    5000 simulated rows in 20 variables ``V1..V20``: five Gaussian groups of
    1000 rows following the design of the R package dppca's ``gau`` data (see
    ``scripts/make_gau.py``). ``load_gau_g`` adds the ``group`` column.

``wine``
    178 Italian wines, 13 chemical measurements (UCI Wine recognition data,
    CC BY 4.0). ``load_wine_g`` adds the ``cultivar`` column. Source and
    licence are in ``data/README.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from .._lazy import pandas as pd

__all__ = [
    "DATASETS",
    "load_dataset",
    "load_gau",
    "load_gau_g",
    "load_wine",
    "load_wine_g",
]


def _read(name: str) -> pd.DataFrame:
    with resources.files(__package__).joinpath("data", name).open("rb") as fh:
        return pd.read_csv(fh, compression="gzip")


def load_gau_g() -> pd.DataFrame:
    """The simulated ``gau`` data with its group labels.

    Returns
    -------
    pandas.DataFrame of shape (5000, 21)
        Float columns ``V1..V20`` and a string column ``group`` with values
        ``group1..group5`` (1000 rows each, in row order).

    Examples
    --------
    >>> from dppca.datasets import load_gau_g
    >>> load_gau_g()["group"].value_counts().to_dict()["group3"]
    1000
    """
    return _read("gau.csv.gz")


def load_gau() -> pd.DataFrame:
    """The simulated ``gau`` data: 5000 rows, numeric columns ``V1..V20``.

    Group 1 is standard normal; group 2 has mean 5 on V1-V5; group 3 mean -3
    on V1-V5 and variance 5; group 4 mean -1 on V6-V10 and variance 5; group 5
    mean 3 on V6-V10 and variance 8.

    Examples
    --------
    >>> from dppca.datasets import load_gau
    >>> load_gau().shape
    (5000, 20)
    """
    return load_gau_g().drop(columns="group")


def load_wine_g() -> pd.DataFrame:
    """The UCI Wine recognition data with the cultivar of each wine.

    Returns
    -------
    pandas.DataFrame of shape (178, 14)
        Thirteen float columns of chemical measurements (``alcohol``,
        ``malic_acid``, ``ash``, ``alcalinity_of_ash``, ``magnesium``,
        ``total_phenols``, ``flavanoids``, ``nonflavanoid_phenols``,
        ``proanthocyanins``, ``color_intensity``, ``hue``, ``od280_od315``,
        ``proline``) and a string column ``cultivar`` (``cultivar1`` 59 rows,
        ``cultivar2`` 71, ``cultivar3`` 48).

    Notes
    -----
    Source: Aeberhard, S. and Forina, M. (1991). Wine [Dataset]. UCI Machine
    Learning Repository, https://doi.org/10.24432/C5PC7J, licensed under
    Creative Commons Attribution 4.0 (CC BY 4.0). The values were taken
    unchanged from the copy that scikit-learn 1.9.1 ships
    (``sklearn/datasets/data/wine_data.csv``, BSD 3-Clause licence); only
    the column names were shortened and the class codes 0, 1, 2 renamed
    ``cultivar1..cultivar3``. The rows are distinct, but the columns are on
    very different scales (proline in the hundreds, hue near 1), and the
    spherical Kendall matrix is not scale invariant: divide by public,
    user-chosen scales before a private analysis if every variable should
    count (never by sample standard deviations, which are data-dependent).

    Examples
    --------
    >>> from dppca.datasets import load_wine_g
    >>> load_wine_g()["cultivar"].value_counts().to_dict()["cultivar2"]
    71
    """
    frame = _read("wine.csv.gz")
    numeric = [c for c in frame.columns if c != "cultivar"]
    frame[numeric] = frame[numeric].astype("float64")
    return frame


def load_wine() -> pd.DataFrame:
    """The UCI Wine recognition data: 178 rows, 13 numeric columns.

    See :func:`load_wine_g` for the columns, source and licence.

    Examples
    --------
    >>> from dppca.datasets import load_wine
    >>> load_wine().shape
    (178, 13)
    """
    return load_wine_g().drop(columns="cultivar")


#: Loaders of the bundled datasets by name (used by the command line and the app).
DATASETS: dict[str, Callable[[], pd.DataFrame]] = {
    "gau": load_gau,
    "gau_g": load_gau_g,
    "wine": load_wine,
    "wine_g": load_wine_g,
}


def load_dataset(name: str) -> pd.DataFrame:
    """Load a bundled dataset by name (one of ``DATASETS``)."""
    if name not in DATASETS:
        options = ", ".join(sorted(DATASETS))
        raise ValueError(f"dataset must be one of {options}; got {name!r}.")
    return DATASETS[name]()
