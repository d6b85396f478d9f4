"""Bundled datasets.

``gau``
    5000 simulated rows in 20 variables ``V1..V20``: five Gaussian groups of
    1000 rows following the design of the R package dppca's ``gau`` data (see
    ``scripts/make_gau.py``). ``load_gau_g`` adds the ``group`` column.

``wine``
    178 Italian wines, 13 chemical measurements (UCI Wine recognition data,
    CC BY 4.0). ``load_wine_g`` adds the ``cultivar`` column. Source and
    licence are in ``data/README.md``.

``iris``
    Fisher's 150 iris flowers, 4 measurements in cm (UCI Iris data, CC BY 4.0).
    ``load_iris_g`` adds the ``species`` column. Two flowers share all four
    values (a tied pair of rows).

``breast_cancer``
    569 breast masses, 30 features of their cell nuclei (UCI Breast Cancer
    Wisconsin (Diagnostic) data, CC BY 4.0). ``load_breast_cancer_g`` adds the
    ``diagnosis`` column.

The real tables are written by ``scripts/make_small_tables.py`` (iris and
breast cancer) from the copies bundled with scikit-learn.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from ..core.lazy import pandas as pd

__all__ = [
    "DATASETS",
    "bundled_name",
    "load_breast_cancer",
    "load_breast_cancer_g",
    "load_dataset",
    "load_gau",
    "load_gau_g",
    "load_iris",
    "load_iris_g",
    "load_wine",
    "load_wine_g",
    "public_fingerprints",
]


def _read(name: str) -> pd.DataFrame:
    with resources.files(__package__).joinpath("data").joinpath(name).open("rb") as fh:
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


def _read_labelled(name: str, label: str) -> pd.DataFrame:
    frame = _read(name)
    numeric = [c for c in frame.columns if c != label]
    frame[numeric] = frame[numeric].astype("float64")
    frame[label] = frame[label].astype(str)
    return frame


def load_iris_g() -> pd.DataFrame:
    """Fisher's iris data with the species of each flower.

    Returns
    -------
    pandas.DataFrame of shape (150, 5)
        Float columns ``sepal_length``, ``sepal_width``, ``petal_length``,
        ``petal_width`` (cm) and a string column ``species`` (``setosa``,
        ``versicolor``, ``virginica``, 50 rows each, in row order).

    Notes
    -----
    Source: Fisher, R. A. (1936). Iris [Dataset]. UCI Machine Learning
    Repository, https://doi.org/10.24432/C56C76, licensed under Creative
    Commons Attribution 4.0 (CC BY 4.0). The values are those of the copy that
    scikit-learn 1.9.1 ships (``sklearn/datasets/data/iris.csv``, BSD 3-Clause
    licence), which follows Fisher's paper in rows 35 and 38 where the UCI
    file has two known errors. Only the column names and the species labels
    were rewritten.

    Rows 102 and 143 (``virginica``) are identical, and the measurements are
    rounded to 1 mm, so many pairs of rows agree in some columns: a small real
    table with a tied pair of rows, where the spherical Kendall matrix needs
    ``ties="zero"``.

    Examples
    --------
    >>> from dppca.datasets import load_iris_g
    >>> load_iris_g()["species"].value_counts().to_dict()["versicolor"]
    50
    """
    return _read_labelled("iris.csv.gz", "species")


def load_iris() -> pd.DataFrame:
    """Fisher's iris data: 150 rows, 4 numeric columns (cm).

    See :func:`load_iris_g` for the columns, source, licence and ties.

    Examples
    --------
    >>> from dppca.datasets import load_iris
    >>> load_iris().shape
    (150, 4)
    """
    return load_iris_g().drop(columns="species")


def load_breast_cancer_g() -> pd.DataFrame:
    """The Breast Cancer Wisconsin (Diagnostic) data with each diagnosis.

    Returns
    -------
    pandas.DataFrame of shape (569, 31)
        Thirty float columns describing the cell nuclei in a digitized image
        of a fine needle aspirate of a breast mass: for each of ``radius``,
        ``texture``, ``perimeter``, ``area``, ``smoothness``, ``compactness``,
        ``concavity``, ``concave_points``, ``symmetry`` and
        ``fractal_dimension``, the mean over the nuclei (``<feature>_mean``),
        its standard error (``<feature>_se``) and the mean of the three largest
        values (``<feature>_worst``), in that order (the ten means first); and
        a string column ``diagnosis`` (``malignant`` 212 rows, ``benign`` 357).

    Notes
    -----
    Source: Wolberg, W., Mangasarian, O., Street, N. and Street, W. (1993).
    Breast Cancer Wisconsin (Diagnostic) [Dataset]. UCI Machine Learning
    Repository, https://doi.org/10.24432/C5DW2B, licensed under Creative
    Commons Attribution 4.0 (CC BY 4.0). The values were taken unchanged from
    the copy that scikit-learn 1.9.1 ships
    (``sklearn/datasets/data/breast_cancer.csv``, BSD 3-Clause licence); only
    the column names and the labels were rewritten. The rows are distinct. As
    with the wine data, the columns are on very different scales (areas in the
    hundreds, fractal dimensions near 0.06): divide by public scales before a
    private analysis if every variable should count.

    Examples
    --------
    >>> from dppca.datasets import load_breast_cancer_g
    >>> load_breast_cancer_g()["diagnosis"].value_counts().to_dict()["malignant"]
    212
    """
    return _read_labelled("breast_cancer.csv.gz", "diagnosis")


def load_breast_cancer() -> pd.DataFrame:
    """The Breast Cancer Wisconsin (Diagnostic) data: 569 rows, 30 numeric columns.

    See :func:`load_breast_cancer_g` for the columns, source and licence.

    Examples
    --------
    >>> from dppca.datasets import load_breast_cancer
    >>> load_breast_cancer().shape
    (569, 30)
    """
    return load_breast_cancer_g().drop(columns="diagnosis")


#: Loaders of the bundled datasets by name (used by the command line and the app).
DATASETS: dict[str, Callable[[], pd.DataFrame]] = {
    "gau": load_gau,
    "gau_g": load_gau_g,
    "wine": load_wine,
    "wine_g": load_wine_g,
    "iris": load_iris,
    "iris_g": load_iris_g,
    "breast_cancer": load_breast_cancer,
    "breast_cancer_g": load_breast_cancer_g,
}


def load_dataset(name: str) -> pd.DataFrame:
    """Load a bundled dataset by name (one of ``DATASETS``).

    Examples
    --------
    >>> load_dataset("iris").shape
    (150, 4)
    """
    if name not in DATASETS:
        options = ", ".join(sorted(DATASETS))
        raise ValueError(f"dataset must be one of {options}; got {name!r}.")
    return DATASETS[name]()


#: The :func:`~dppca.privacy.ledger.fingerprint` (numeric columns) of the bundled
#: tables, and which tables share it (a ``_g`` table adds a text label column).
#: Kept as constants so that no command reads every bundled table to price a
#: release; tests/test_datasets.py recomputes them.
_KEYS: dict[str, tuple[str, ...]] = {
    "457bc1a94bc67b481544a1bb1bee399ec1c6f62954aa901c361f9f89f697d43e": ("gau", "gau_g"),
    "a68d7ce28820a11d59809d10137a4acb544f9872cbfbcedbf3eda3724bd472b7": ("wine", "wine_g"),
    "a2a9477731893754ffe57fd105a189468fd07eda76bd5823c4885c6e6bb7b2fa": ("iris", "iris_g"),
    "f03651406a3519f31606ec8a7d0b3654acfeecbad6bf47c5ce78ed8ffd4c0637": (
        "breast_cancer",
        "breast_cancer_g",
    ),
}


def public_fingerprints() -> frozenset[str]:
    """The :func:`~dppca.privacy.ledger.fingerprint` of every bundled dataset.

    A fingerprint covers the numeric columns only, so it does not decide
    what is public: :func:`bundled_name` does, on the whole table.

    Examples
    --------
    >>> from dppca.privacy.ledger import fingerprint
    >>> fingerprint(load_wine()) in public_fingerprints()
    True
    """
    return frozenset(_KEYS)


def bundled_name(data: object) -> str | None:
    """The bundled dataset that ``data`` is exactly, every column included, or None.

    The bundled tables are public: a release made from them protects no one,
    so the ledger records it as practice and never refuses it (the quick
    start of the README runs as often as one likes). A table read from a file
    is public only if it holds exactly a bundled table's rows (in any order)
    over exactly its columns, text and label columns included: a bundled
    table with a label changed or a text column added holds something private
    and is charged like any other table.

    Examples
    --------
    >>> bundled_name(load_iris())
    'iris'
    >>> bundled_name(load_iris().iloc[:-1]) is None  # one row less: not the public table
    True
    """
    if not isinstance(data, pd.DataFrame):
        return None
    from ..privacy.fingerprint import fingerprint, table_digest

    names = _KEYS.get(fingerprint(data), ())
    if not names:
        return None
    digest = table_digest(data)
    for name in names:
        if table_digest(load_dataset(name)) == digest:
            return name
    return None
