"""Regenerate src/dppca/datasets/data/gau.csv.gz (the bundled simulated dataset).

Five groups of 1000 rows in 20 dimensions, following the design of the R
package dppca's ``gau`` data (the R random stream is not reproduced):

    group1: mean 0,                      covariance I
    group2: mean 5 on variables 1-5,     covariance I
    group3: mean -3 on variables 1-5,    covariance 5 I
    group4: mean -1 on variables 6-10,   covariance 5 I
    group5: mean 3 on variables 6-10,    covariance 8 I

Run from the repository root: ``python scripts/make_gau.py``.
"""

from pathlib import Path

import numpy as np
import pandas as pd

P = 20
N_PER_GROUP = 1000
SEED = 123

DESIGN = [  # (mean value, variables it applies to (0-based), variance)
    (0.0, slice(0, 0), 1.0),
    (5.0, slice(0, 5), 1.0),
    (-3.0, slice(0, 5), 5.0),
    (-1.0, slice(5, 10), 5.0),
    (3.0, slice(5, 10), 8.0),
]


def main() -> None:
    rng = np.random.default_rng(SEED)
    blocks, labels = [], []
    for g, (value, where, variance) in enumerate(DESIGN, start=1):
        mean = np.zeros(P)
        mean[where] = value
        blocks.append(mean + np.sqrt(variance) * rng.standard_normal((N_PER_GROUP, P)))
        labels += [f"group{g}"] * N_PER_GROUP
    frame = pd.DataFrame(np.vstack(blocks), columns=[f"V{j + 1}" for j in range(P)])
    frame["group"] = labels
    out = Path(__file__).resolve().parents[1] / "src/dppca/datasets/data/gau.csv.gz"
    frame.to_csv(out, index=False, float_format="%.8f", compression={"method": "gzip", "mtime": 0})
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
