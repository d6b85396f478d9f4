"""Cost of the exact spherical Kendall kernel against the tiled GEMM floor.

Any exact O(n^2 p) method must at least form the Gram products of all pairs.
The *floor* here is exactly that: ``Y_I @ Y_J.T`` over the same upper-triangle
tiles I <= J that the kernel visits (written into a preallocated tile, BLAS on
one thread), at its best tile size of 256, 512 and 1024. It is not
``X @ X.T``, which at large n mostly measures allocating an n x n result.

For each (n, p) the script prints, measured in one run and interleaved:

* the process CPU seconds of the floor and of ``spherical_kendall(X, n_jobs=1)``
  with the fused numba pass and with the numpy fallback, and their ratios;
* the wall time on one thread and on every core (``n_jobs=None``), and its ratio;
* the peak memory the kernel allocates beyond the data (tracemalloc).

CPU time of the process (``time.process_time``) is the main figure because
the machine may be shared: wall times are only meaningful on idle cores, and
the load average is printed with them. The exact kernel's reference figures
(Nov 2026, the 2-core EPYC of the issue) are in the commit that added this.

Run:  python benchmarks/bench_kendall.py [--quick] [--sizes 8000] [--p 20 50 1000]
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits

from dppca import dp_pc_dir, spherical_kendall
from dppca.datasets import load_gau
from dppca.kernels.tiles import kernel_backend


def gemm_floor(Y: np.ndarray, block: int) -> None:
    """``Y_I @ Y_J.T`` over the tiles I <= J, into one preallocated tile."""
    n = Y.shape[0]
    out = np.empty((block, block))
    for i0 in range(0, n, block):
        y_i = Y[i0 : i0 + block]
        for j0 in range(i0, n, block):
            y_j = Y[j0 : j0 + block]
            np.matmul(y_i, y_j.T, out=out[: y_i.shape[0], : y_j.shape[0]])


def cpu_seconds(fn, repeat: int) -> float:
    """Least process CPU time of ``repeat`` runs."""
    best = np.inf
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def wall_seconds(fn, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peak_mib(fn) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def kernel(X: np.ndarray, backend: str, n_jobs: int | None):
    def run() -> None:
        os.environ["DPPCA_KERNEL"] = backend
        try:
            spherical_kendall(X, n_jobs=n_jobs)
        finally:
            del os.environ["DPPCA_KERNEL"]

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 2000 and 8000, p = 20 and 50")
    parser.add_argument("--sizes", type=int, nargs="+", help="values of n")
    parser.add_argument("--p", type=int, nargs="+", help="values of p")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = args.sizes or ([2000, 8000] if args.quick else [2000, 8000, 20000])
    ps = args.p or ([20, 50] if args.quick else [20, 50, 200, 1000])
    numba = kernel_backend() == "numba"  # also loads numba before any timing
    print(
        f"fused pass: {'numba' if numba else 'numpy only (numba not installed)'}; "
        f"cores: {len(os.sched_getaffinity(0))}"
    )
    print("CPU = process CPU seconds, best of runs; ratios are against the floor. Wall")
    print("times depend on the machine's load (shown); on a shared, busy machine trust CPU.")
    head = (
        f"{'n':>6} {'p':>5} {'floor':>7} {'numba':>7} {'ratio':>5} {'numpy':>7} {'ratio':>5}"
        f" {'wall 1':>7} {'wall all':>8} {'ratio':>5} {'load':>5} {'MiB':>6} {'data':>6}"
    )
    print(head)
    rng = np.random.default_rng(0)
    for n in sizes:
        for p in ps:
            if n * n * p > 2e11:
                continue  # too long for one benchmark run
            X = rng.normal(size=(n, p))
            repeat = args.repeat if n * n * p <= 4e9 else 1
            with threadpool_limits(limits=1, user_api="blas"):
                floor = min(
                    cpu_seconds(lambda X=X, b=b: gemm_floor(X, b), repeat)
                    for b in (256, 512, 1024)
                )
            t_numba = cpu_seconds(kernel(X, "numba", 1), repeat) if numba else np.nan
            t_numpy = cpu_seconds(kernel(X, "numpy", 1), repeat)
            best = "numba" if numba else "numpy"
            load = os.getloadavg()[0]
            wall_1 = wall_seconds(kernel(X, best, 1), repeat)
            wall_all = wall_seconds(kernel(X, best, None), repeat)
            mem = peak_mib(kernel(X, best, None))
            print(
                f"{n:>6} {p:>5} {floor:>7.3f} {t_numba:>7.3f} {t_numba / floor:>5.2f} "
                f"{t_numpy:>7.3f} {t_numpy / floor:>5.2f} {wall_1:>7.3f} {wall_all:>8.3f} "
                f"{wall_all / wall_1:>5.2f} {load:>5.1f} {mem:>6.1f} {X.nbytes / 2**20:>6.1f}",
                flush=True,
            )
    gau = load_gau()
    t_dp = cpu_seconds(lambda: dp_pc_dir(gau, eps=0.5, delta=1e-5, random_state=0), 3)
    print(f"dp_pc_dir on gau (n=5000, p=20): {t_dp:.3f} CPU-s")


if __name__ == "__main__":
    main()
