"""The directions' post-release check on real tables: silent misses and false alarms.

``dppca.dp_pca(standardize=True)`` releases Kendall's tau matrix over p with
noise off its diagonal, and judges the release afterwards from the released
matrix, sigma and p alone (:mod:`dppca.releases.resolvability`). This script
measures how often that check is wrong, on the raw-unit tables of
``bench_real_units.py`` (not bundled with dppca):

- *silent*: the released top-2 subspace is at least sinTheta 0.5 from the
  table's correlation PCA (the whole table's, as in ``bench_real_units``)
  and the check did not flag it;
- *false alarm*: the subspace is within 0.5 and the check flagged it.

Each cell (table, n, eps) draws ``--seeds`` row samples (the same samples as
``bench_real_units``) and ``--draws`` noise draws per sample. A release is
the exact tau matrix of the sample over p plus the noise of the fit's own
direction step (its sigma from :func:`dppca.releases.pca.plan.plan_pca`,
which reads no data), with the public diagonal 1/p: the direction part of
``dp_pca`` without the rest of the fit, so that many releases are cheap.
Both rules judge the same release: ``old``, the upper-quartile bootstrap of
the Kendall release (what tau releases used before), and ``new``, the
gap-corrected tau rule (``estimator="tau"``).

Run: ``python benchmarks/bench_direction_check.py --seeds 20 --draws 3``
(about 5 minutes on one core).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from bench_real_units import DELTA, correlation_truth, sizes_for, tables
from bench_units import sin_theta
from dppca.kernels.tau import kendall_tau_matrix
from dppca.privacy.mechanisms import symmetric_gaussian_noise
from dppca.releases.pca.plan import plan_pca
from dppca.releases.resolvability import assess_directions

EPSILONS = (0.5, 1.0, 2.0)


def releases(seeds: int, draws: int, start: int, names: list[str] | None) -> pd.DataFrame:
    """One row per simulated release: its error and both rules' estimates."""
    rng = np.random.default_rng(20_251_203 + start)
    rows = []
    for name, frame in tables().items():
        if names and name not in names:
            continue
        X = frame.to_numpy(float)
        N, p = X.shape
        truth = correlation_truth(X).directions
        for n in sizes_for(N, (150, 500, 2000)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sigmas = {
                    eps: dict(plan_pca(n, p, eps=eps, delta=DELTA).steps)["directions"].sigma
                    for eps in EPSILONS
                }
            for seed in range(start, start + seeds):
                pick = np.random.default_rng(20_000 + seed).choice(N, n, replace=False)
                T = kendall_tau_matrix(X[np.sort(pick)] if n < N else X) / p
                for eps, sigma in sigmas.items():
                    for _ in range(draws):
                        A = symmetric_gaussian_noise(p, sigma, rng, value=T)
                        A = 0.5 * (A + A.T)
                        np.fill_diagonal(A, 1.0 / p)
                        top = np.linalg.eigh(A)[1][:, ::-1][:, :2]
                        old, new = (
                            assess_directions(A, sigma, p, random_state=rng, estimator=e)
                            for e in ("kendall", "tau")
                        )
                        rows.append(
                            {
                                "table": name,
                                "n": n,
                                "eps": eps,
                                "sin": sin_theta(top, truth),
                                "old": not old.ok,
                                "new": not new.ok,
                            }
                        )
    return pd.DataFrame(rows)


def rates(df: pd.DataFrame) -> pd.Series:
    wrong = df["sin"] >= 0.5
    right = ~wrong
    out = {"releases": len(df), "wrong": int(wrong.sum())}
    for rule in ("old", "new"):
        out[f"{rule} silent"] = int((wrong & ~df[rule]).sum())
        alarms = int((right & df[rule]).sum())
        out[f"{rule} false alarms"] = f"{alarms}/{int(right.sum())}"
    return pd.Series(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--start", type=int, default=0, help="first row-sample seed")
    parser.add_argument("--tables", nargs="+", help="a subset of the tables, by name")
    args = parser.parse_args()
    start = time.perf_counter()
    df = releases(args.seeds, args.draws, args.start, args.tables)
    print(f"Direction check of dp_pca(standardize=True), delta={DELTA:g}, {args.seeds} row")
    print(f"samples x {args.draws} noise draws per cell; wrong: top-2 sinTheta >= 0.5\n")
    cells = df.groupby(["table", "n", "eps"]).apply(rates, include_groups=False)
    print(cells.to_string())
    print()
    for label, part in (("all cells", df), ("cells of 300 rows or more", df[df["n"] >= 300])):
        print(f"{label}: " + ", ".join(f"{k} {v}" for k, v in rates(part).items()))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
