"""Raw units: private directions of tables whose columns are on unrelated scales.

For each raw-unit real table (scikit-learn's bundled copies, not shipped with
dppca), n, eps and seed, the top-2 private subspace is compared with the top-2
eigenvectors of the spherical Kendall matrix of the whole table divided by its
sample standard deviations (the standardised truth), by the sine of the
largest principal angle. Four ways to reach the standardised picture:

- ``raw``: the data as given (``scale=None``);
- ``private``: ``scale="private"``, the scales' cost included in eps;
- ``tau``: ``estimator="tau"``, Kendall's tau matrix over p, which is the same
  in any units (the whole eps buys the matrix);
- ``oracle``: divided by the sample SDs of the rows used (not private; the
  best any scale estimate can do, for reference only).

Tables: breast cancer's ten "mean" features (569 x 10, SDs from 0.007 to
352), diabetes in its original units (442 x 10, ``load_diabetes(scaled=False)``,
SDs from 0.5 to 34) and wine (178 x 13, SDs from 0.12 to 315). Each seed draws
n rows without replacement (with replacement when n exceeds the table, which
adds tied rows, handled by ``ties="zero"``).

Also times the plan: the tight composition of p pure parts with the Gaussian.

Run: ``python benchmarks/bench_units.py --seeds 20`` (a few minutes on 2 cores;
``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from dppca import spherical_kendall
from dppca.releases.directions import plan_pc_dir
from dppca.releases.engine import execute


def tables() -> dict[str, np.ndarray]:
    """The raw-unit tables (scikit-learn's bundled copies)."""
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

    return {
        "cancer10": load_breast_cancer().data[:, :10],
        "diabetes": load_diabetes(scaled=False).data,
        "wine": load_wine().data,
    }


def top2(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return vectors[:, np.argsort(values)[::-1][:2]]


def sin_theta(a: np.ndarray, b: np.ndarray) -> float:
    s = np.linalg.svd(a.T @ b, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - s.min() ** 2)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = (150, 500) if args.quick else (150, 350, 500, 2000)
    epsilons = (1.0,) if args.quick else (0.5, 1.0, 2.0)
    seeds = 3 if args.quick else args.seeds
    delta = 1e-6
    warnings.simplefilter("ignore")  # forecast warnings: the benchmark counts outcomes
    print(f"sinTheta of the top-2 subspace to the standardised Kendall truth, {seeds} seeds")
    print("cell: median sinTheta / share of seeds under 0.5")
    heads = " | ".join(f"{h:>11}" for h in ("raw", "private", "tau", "oracle"))
    print(f"{'table':9} {'n':>5} {'eps':>4} | {heads}")
    plan_seconds = []
    for name, X in tables().items():
        truth = top2(spherical_kendall(X / X.std(axis=0, ddof=1)))
        N, p = X.shape
        for n in sizes:
            for eps in epsilons:
                start = time.perf_counter()
                private = plan_pc_dir(
                    n, p, 2, eps=eps, delta=delta, scale="private", accuracy="ignore"
                )
                plan_seconds.append(time.perf_counter() - start)
                plain = plan_pc_dir(n, p, 2, eps=eps, delta=delta, accuracy="ignore")
                tau = plan_pc_dir(
                    n, p, 2, eps=eps, delta=delta, estimator="tau", accuracy="ignore"
                )
                errors: dict[str, list[float]] = {
                    "raw": [],
                    "private": [],
                    "tau": [],
                    "oracle": [],
                }
                for seed in range(seeds):
                    rows = np.random.default_rng(10_000 + seed).choice(N, n, replace=n > N)
                    Y = X[rows]
                    sd = Y.std(axis=0, ddof=1)
                    sd = np.where(sd > 0, sd, 1.0)
                    for method, plan, data in (
                        ("raw", plain, Y),
                        ("private", private, Y),
                        ("tau", tau, Y),
                        ("oracle", plain, Y / sd),
                    ):
                        res = execute(plan, data, random_state=seed)
                        errors[method].append(sin_theta(res.directions, truth))
                cells = [
                    f"{np.median(e):.2f} / {np.mean(np.array(e) < 0.5):4.0%}"
                    for e in errors.values()
                ]
                print(f"{name:9} {n:5d} {eps:4g} | " + " | ".join(f"{c:>11}" for c in cells))
    print(
        f"plan with scale='private': median {np.median(plan_seconds):.2f} s "
        f"(tight composition of p pure parts and the Gaussian)"
    )


if __name__ == "__main__":
    main()
