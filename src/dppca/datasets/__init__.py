"""Bundled datasets.

``gau``
    5000 simulated rows in 20 variables ``V1..V20``: five Gaussian groups of
    1000 rows following the design of the R package dppca's ``gau`` data (see
    ``scripts/make_gau.py``). ``load_gau_g`` adds the ``group`` column.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

import pandas as pd

__all__ = ["DATASETS", "load_dataset", "load_gau", "load_gau_g"]


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


#: Loaders of the bundled datasets by name (used by the command line and the app).
DATASETS: dict[str, Callable[[], pd.DataFrame]] = {
    "gau": load_gau,
    "gau_g": load_gau_g,
}


def load_dataset(name: str) -> pd.DataFrame:
    """Load a bundled dataset by name (one of ``DATASETS``)."""
    if name not in DATASETS:
        options = ", ".join(sorted(DATASETS))
        raise ValueError(f"dataset must be one of {options}; got {name!r}.")
    return DATASETS[name]()
