"""Speed and memory of the spherical Kendall matrix against the Gram-product floor.

For each (n, p) the script times, in the same run, ``spherical_kendall(X)`` and
one n x n Gram product ``X @ X.T`` (the floor of any exact O(n^2 p) method) and
prints their ratio and the peak memory of each (tracemalloc, which sees numpy's
allocations). It also times ``dp_pc_dir`` on the bundled gau data (n=5000, p=20).

Run:  python benchmarks/bench_kendall.py [--quick]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from dppca import dp_pc_dir, spherical_kendall
from dppca.datasets import load_gau


def measure(fn, repeat: int) -> tuple[float, float]:
    """Best wall time over ``repeat`` runs and peak traced memory (MiB) of one run."""
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    args = parser.parse_args()
    sizes = [2000, 5000] if args.quick else [2000, 5000, 20000]
    rng = np.random.default_rng(0)
    header = f"{'n':>6} {'p':>3} {'kendall s':>10} {'X@X.T s':>9} {'ratio':>6} "
    print(header + f"{'kendall MiB':>12} {'gram MiB':>9}")
    for n in sizes:
        for p in (20, 50):
            X = rng.normal(size=(n, p))
            repeat = 3 if n <= 5000 else 2
            t_k, m_k = measure(lambda X=X: spherical_kendall(X), repeat)
            t_g, m_g = measure(lambda X=X: X @ X.T, repeat)
            row = f"{n:>6} {p:>3} {t_k:>10.3f} {t_g:>9.3f} {t_k / t_g:>6.2f} "
            print(row + f"{m_k:>12.1f} {m_g:>9.1f}")
    gau = load_gau()
    t_dp, _ = measure(lambda: dp_pc_dir(gau, eps=0.5, delta=1e-5, random_state=0), 3)
    print(f"dp_pc_dir on gau (n=5000, p=20): {t_dp:.3f} s")


if __name__ == "__main__":
    main()
