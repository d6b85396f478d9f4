"""Does the balanced design lose direction accuracy against the exact one at n >= 20,000?

The exact design averages the spherical Kendall terms over all n (n - 1) / 2
pairs; the balanced design over n m pairs of a random balanced design
(default m = 20). Both carry the same noise (the sensitivity, hence sigma, is
the same), so the comparison is paired: for each seed, one noise matrix N is
drawn and added to both the exact matrix K and a balanced matrix K_B (its own
random pairing from the same seed), and the top-2 subspaces of K + N and of
K_B + N are compared with the population eigenvectors (the accuracy
protocol's reference for synthetic tables). This is the release's own
distribution: ``dp_pc_dir`` releases the top eigenvectors of the matrix plus
symmetric Gaussian noise of the calibrated sigma, for either design.

Tables (the synthetic ones of benchmarks/bench_accuracy.py, at n >= 20,000):
the spiked Gaussian (p = 10, variances 20, 10, 5, 1...), a near tie (p = 8,
variances 6, 5, 4.5, 1...), the spiked Gaussian with t(3) rows, and with 2 %
gross outliers (rows moved 20 sds along a fixed random axis).

Printed per table and eps: mean sinTheta of each design, the mean paired
difference (balanced - exact) with its standard error, and the worst paired
difference over the seeds. The design default switches only where the mean
difference plus two standard errors stays below 0.01.

Run:  python benchmarks/bench_design.py [--seeds 10] [--quick] [--large]
(--quick: 3 seeds, n = 20,000 only; --large: only the near tie at
n = 160,000, just above the default's threshold.)
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from threadpoolctl import threadpool_limits

from dppca import spherical_kendall
from dppca.kernels.eigen import top_eigh
from dppca.privacy.mechanisms import kendall_sigma, random_pairing, symmetric_gaussian_noise

DELTA = 1e-6
EPS_GRID = (0.5, 1.0, 2.0)


def _basis(p: int, seed: int) -> np.ndarray:
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((p, p)))[0]


Table = tuple[np.ndarray, np.ndarray]


def spiked(n: int, rng: np.random.Generator, tails: str = "gauss") -> Table:
    """Rows and population eigenvectors: centre 3, variances 20, 10, 5 and seven 1s."""
    q = _basis(10, 7)
    sd = np.sqrt([20.0, 10.0, 5.0] + [1.0] * 7)
    if tails == "t3":  # unit-variance t(3) coordinates
        z = rng.standard_t(3, size=(n, 10)) / math.sqrt(3.0)
    else:
        z = rng.standard_normal((n, 10))
    x = 3.0 + (z * sd) @ q.T
    if tails == "outliers":  # 2 % of rows moved 20 sds along a fixed axis
        bad = rng.random(n) < 0.02
        x[bad] += 20.0 * math.sqrt(20.0) * _basis(10, 11)[:, 0]
    return x, q[:, :2]


def near_tie(n: int, rng: np.random.Generator) -> Table:
    """Variances 6, 5, 4.5 and five 1s (a small gap after PC2)."""
    q = _basis(8, 5)
    x = (rng.standard_normal((n, 8)) * np.sqrt([6.0, 5.0, 4.5] + [1.0] * 5)) @ q.T
    return x, q[:, :2]


def sin_theta(a: np.ndarray, b: np.ndarray) -> float:
    """Sine of the largest principal angle between the column spaces of a and b."""
    s = np.linalg.svd(a.T @ b, compute_uv=False)
    return float(math.sqrt(max(0.0, 1.0 - float(np.min(s)) ** 2)))


def compare(x: np.ndarray, truth: np.ndarray, seeds: int) -> dict[float, np.ndarray]:
    """Per eps, an array (seeds, 2) of sinTheta for (exact, balanced), paired by seed."""
    n, p = x.shape
    exact = spherical_kendall(x)
    out: dict[float, list[tuple[float, float]]] = {eps: [] for eps in EPS_GRID}
    for seed in range(seeds):
        rng = np.random.default_rng(1000 + seed)
        balanced = spherical_kendall(x, design="balanced", order=random_pairing(n, rng))
        unit = symmetric_gaussian_noise(p, 1.0, rng)  # scaled per eps: one draw per seed
        for eps in EPS_GRID:
            noise = kendall_sigma(n, eps, DELTA) * unit
            pair = tuple(
                sin_theta(top_eigh(0.5 * (k + noise + (k + noise).T), 2)[1], truth)
                for k in (exact, balanced)
            )
            out[eps].append(pair)  # type: ignore[arg-type]
    return {eps: np.array(v) for eps, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--large",
        action="store_true",
        help="only the near tie at n = 160,000, above the default's threshold (about 1 CPU-min)",
    )
    args = parser.parse_args()
    seeds = 3 if args.quick else args.seeds
    sizes = (20_000,) if args.quick else (20_000, 50_000)
    data = np.random.default_rng(20240601)
    tables = []
    for n in sizes:
        tables.append((f"spiked n={n}", *spiked(n, data)))
    tables += [
        ("spiked t(3) n=20000", *spiked(20_000, data, "t3")),
        ("spiked 2% outliers n=20000", *spiked(20_000, data, "outliers")),
        ("near tie n=20000", *near_tie(20_000, data)),
    ]
    if args.large:  # 160,000 x 8: 1.02e11 pair-columns, just above BALANCED_DEFAULT_WORK
        tables = [("near tie n=160000", *near_tie(160_000, data))]
    print(f"{seeds} seeds, delta = {DELTA:g}, balanced m = 20; sinTheta of the top-2 subspace")
    print(
        f"{'table':<28} {'eps':>4} {'exact':>7} {'balanced':>9} "
        f"{'mean diff':>10} {'(se)':>8} {'worst':>8}  verdict"
    )
    worst_bound = -math.inf
    with threadpool_limits(limits=1, user_api="blas"):
        for name, x, truth in tables:
            start = time.process_time()
            res = compare(x, truth, seeds)
            for eps, r in res.items():
                diff = r[:, 1] - r[:, 0]
                se = float(np.std(diff, ddof=1) / math.sqrt(len(diff)))
                bound = float(np.mean(diff)) + 2.0 * se
                worst_bound = max(worst_bound, bound)
                verdict = "no loss > 0.01" if bound <= 0.01 else "LOSS"
                print(
                    f"{name:<28} {eps:>4g} {r[:, 0].mean():7.4f} {r[:, 1].mean():9.4f} "
                    f"{diff.mean():+10.4f} {se:8.4f} {diff.max():+8.4f}  {verdict}"
                )
            print(f"  ({time.process_time() - start:.1f} CPU-s)")
    print(f"\nlargest mean difference + 2 se over all cells: {worst_bound:+.4f}")
    print("(the default may switch where this stays <= 0.01)")


if __name__ == "__main__":
    main()
