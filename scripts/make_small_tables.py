"""Write the bundled iris and breast-cancer tables (run from the repository root).

    python scripts/make_small_tables.py

The values come unchanged from the copies that scikit-learn ships inside its
package (``sklearn/datasets/data/iris.csv`` and ``breast_cancer.csv``), read
with ``sklearn.datasets.load_iris`` / ``load_breast_cancer``, which need no
network. Only the column names and the class labels are rewritten. The gzip
header carries no time stamp, so running the script again gives identical
files. scikit-learn is needed to run this script only, not by dppca.
Sources and licences: ``src/dppca/datasets/data/README.md``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import sklearn
from sklearn import datasets

OUT = Path("src/dppca/datasets/data")
GZIP = {"method": "gzip", "mtime": 0}


def iris() -> pd.DataFrame:
    bunch = datasets.load_iris(as_frame=True)
    frame = bunch.data.copy()
    frame.columns = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    frame["species"] = [str(bunch.target_names[t]) for t in bunch.target]
    return frame


def breast_cancer() -> pd.DataFrame:
    bunch = datasets.load_breast_cancer(as_frame=True)
    names = []
    for name in bunch.feature_names:  # "mean radius", "radius error", "worst radius"
        words = str(name).split()
        if words[0] in ("mean", "worst"):
            names.append("_".join(words[1:] + words[:1]))
        else:
            assert words[-1] == "error", name
            names.append("_".join([*words[:-1], "se"]))
    frame = bunch.data.copy()
    frame.columns = names
    frame["diagnosis"] = [str(bunch.target_names[t]) for t in bunch.target]
    return frame


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, frame in (("iris", iris()), ("breast_cancer", breast_cancer())):
        frame.to_csv(OUT / f"{name}.csv.gz", index=False, compression=GZIP)
        print(f"{name}: {frame.shape[0]} x {frame.shape[1]} (scikit-learn {sklearn.__version__})")


if __name__ == "__main__":
    main()
