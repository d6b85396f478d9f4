"""Accuracy and cost of the private scree estimators on the bundled gau data.

Accuracy: private directions are released once (eps/2, analytic) and each
method estimates the variances along them with the other half of the budget
for ``--seeds`` noise draws; the script prints the median and the 5 % / 95 %
quantiles of the relative error against ``v' S v`` (S the sample covariance,
the quantity the paired differences target). Speed: the time of one
``dp_scree`` call per method (public directions, so no Kendall matrix) as a
ratio to one ``dp_pc_dir`` call, both measured in this run.

Run:  python benchmarks/bench_scree.py [--seeds 50] [--eps 0.5 1 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dppca import dp_pc_dir, dp_scree
from dppca.datasets import load_gau

METHODS = ("clipped", "pmwm", "huber")


def best_time(fn, repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("-k", type=int, default=3)
    args = parser.parse_args()

    X = load_gau().to_numpy()
    S = np.cov(X, rowvar=False)
    delta = 1e-5
    print(f"gau: n={X.shape[0]}, p={X.shape[1]}, k={args.k}, delta={delta:g}, seeds={args.seeds}")
    print("relative error of the private variance along each private direction")
    for eps in args.eps:
        dirs = dp_pc_dir(
            X, args.k, eps=eps / 2, delta=delta / 2, random_state=1000, calibration="analytic"
        )
        target = np.einsum("ij,ij->j", dirs.directions, S @ dirs.directions)
        for method in METHODS:
            errors = np.array(
                [
                    dp_scree(
                        X,
                        args.k,
                        eps=eps / 2,
                        delta=delta / 2,
                        method=method,
                        directions=dirs,
                        random_state=seed,
                        calibration="analytic",
                        mono=False,
                    ).scree
                    / target
                    - 1
                    for seed in range(args.seeds)
                ]
            )
            q05, q50, q95 = np.quantile(errors, [0.05, 0.5, 0.95], axis=0)
            print(
                f"  eps={eps:<4g} {method:8s} median {np.round(q50, 3)}  "
                f"5% {np.round(q05, 2)}  95% {np.round(q95, 2)}"
            )

    V = np.linalg.qr(np.random.default_rng(0).normal(size=(X.shape[1], args.k)))[0]
    t_dir = best_time(lambda: dp_pc_dir(X, args.k, eps=0.5, delta=delta, random_state=0))
    print(f"dp_pc_dir on gau: {t_dir:.3f} s")
    for method in METHODS:
        t = best_time(
            lambda method=method: dp_scree(
                X, args.k, eps=0.5, delta=delta, method=method, directions=V, random_state=0
            )
        )
        print(
            f"  dp_scree {method:8s} (public directions): {t:.4f} s = {t / t_dir:.3f} x dp_pc_dir"
        )


if __name__ == "__main__":
    main()
