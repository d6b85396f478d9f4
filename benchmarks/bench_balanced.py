"""Balanced-design Kendall at scale, its error against the exact matrix, and Dask.

Everything is printed in one run:

1. ``spherical_kendall(X, design="balanced", order=...)`` (default m = 20) on 10^7 x 20
   synthetic rows: wall time and peak resident memory, measured in a fresh
   subprocess (``resource.getrusage(...).ru_maxrss``), which also holds the
   1.6 GB data array itself. Goal: under 60 s and under 4 GiB.
2. Error of the balanced matrix against the exact one at n = 20000, p = 20,
   for m in {5, 20, 50}: the Frobenius norm of ``K_B - K`` over several seeds,
   next to the Frobenius norm of the privacy noise at eps = 0.5,
   delta = 1e-5 (about ``sigma * p``) and to the sampling error of the exact
   matrix itself (from a second, independent sample) for scale. The design's error
   should shrink roughly like 1/sqrt(m), so ``error * sqrt(m)`` is about flat.
3. Exact design at n = 50000, p = 20: in memory against a Dask LocalCluster
   (2 workers, 1 thread each, processes=False) on the same data.

Run:  python benchmarks/bench_balanced.py [--quick]
(--quick: 10^6 rows in part 1, n = 5000 in part 2, n = 10000 in part 3.)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

import numpy as np

from dppca import spherical_kendall
from dppca.privacy.mechanisms import kendall_sigma, random_pairing


def synthetic(n: int, p: int, seed: int) -> np.ndarray:
    """Gaussian rows with decreasing column scales (a gau-like table), built in place."""
    X = np.random.default_rng(seed).standard_normal((n, p))
    X *= np.linspace(3.0, 0.25, p)
    return X


def child_big(n: int, p: int) -> None:
    """Subprocess body of part 1: print one JSON line with times and memory."""
    X = synthetic(n, p, 1)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    start = time.perf_counter()
    K = spherical_kendall(X, design="balanced", order=random_pairing(len(X), 2))
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        json.dumps(
            {
                "seconds": elapsed,
                "peak_gib": peak,
                "data_gib": X.nbytes / 2**30,
                "rss_before_gib": base,
                "trace": float(np.trace(K)),
            }
        )
    )


def part_big(n: int, p: int) -> None:
    print(f"== 1. balanced design, n={n:.0e}, p={p}, m=20 (default), fresh subprocess ==")
    out = subprocess.run(
        [sys.executable, __file__, "--child-big", str(n), str(p)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    )
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"time {r['seconds']:.1f} s (goal < 60 s); peak RSS {r['peak_gib']:.2f} GiB "
        f"(goal < 4 GiB); data array {r['data_gib']:.2f} GiB; RSS before the call "
        f"{r['rss_before_gib']:.2f} GiB; trace {r['trace']:.12f}"
    )


def part_error(n: int, seeds: int) -> None:
    p = 20
    print(f"\n== 2. balanced vs exact, n={n}, p={p}, {seeds} design seeds per m ==")
    X = synthetic(n, p, 3)
    start = time.perf_counter()
    K = spherical_kendall(X)
    t_exact = time.perf_counter() - start
    noise = kendall_sigma(n, 0.5, 1e-5) * p  # E||E||_F ~ sigma * p for the symmetric noise
    # sampling error of the exact matrix itself: two independent samples differ by sqrt(2) x it
    sampling = float(np.linalg.norm(spherical_kendall(synthetic(n, p, 5)) - K)) / math.sqrt(2)
    print(
        f"exact: {t_exact:.1f} s; noise Frobenius norm at eps=0.5, delta=1e-5: {noise:.2e}; "
        f"sampling error of the exact K (||K(X) - K(X')||_F / sqrt 2): {sampling:.2e}"
    )
    print(f"{'m':>4} {'time s':>7} {'mean ||K_B-K||_F':>17} {'x sqrt(m)':>10} {'/ noise':>8}")
    for m in (5, 20, 50):
        errs, times = [], []
        for seed in range(seeds):
            start = time.perf_counter()
            KB = spherical_kendall(X, design="balanced", m=m, order=random_pairing(len(X), seed))
            times.append(time.perf_counter() - start)
            errs.append(float(np.linalg.norm(KB - K)))
        e = float(np.mean(errs))
        print(
            f"{m:>4} {np.mean(times):>7.2f} {e:>17.2e} {e * math.sqrt(m):>10.2e} {e / noise:>8.2f}"
        )


def part_dask(n: int) -> None:
    p = 20
    print(f"\n== 3. exact design, n={n}, p={p}: in memory vs Dask LocalCluster (2 workers) ==")
    try:
        import dask.array as da
        from distributed import Client, LocalCluster
    except ImportError:
        print("dask[distributed] not installed: skipped (pip install 'dppca[dask]')")
        return
    X = synthetic(n, p, 4)
    start = time.perf_counter()
    K = spherical_kendall(X)
    t_mem = time.perf_counter() - start
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        Client(cluster),
    ):
        XD = da.from_array(X, chunks=(8192, p))
        start = time.perf_counter()
        KD = spherical_kendall(XD)
        t_dask = time.perf_counter() - start
        start = time.perf_counter()
        KBD = spherical_kendall(XD, design="balanced", order=random_pairing(len(X), 0))
        t_dask_b = time.perf_counter() - start
    start = time.perf_counter()
    KB = spherical_kendall(X, design="balanced", order=random_pairing(len(X), 0))
    t_mem_b = time.perf_counter() - start
    print(
        f"exact:    in memory {t_mem:.1f} s, Dask {t_dask:.1f} s, ratio {t_dask / t_mem:.2f}; "
        f"max |diff| {np.max(np.abs(KD - K)):.1e}"
    )
    print(
        f"balanced: in memory {t_mem_b:.2f} s, Dask {t_dask_b:.2f} s; "
        f"max |diff| {np.max(np.abs(KBD - KB)):.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--child-big", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_big:
        child_big(*args.child_big)
        return
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    part_big(10**6 if args.quick else 10**7, 20)
    part_error(5000 if args.quick else 20000, 3 if args.quick else 5)
    part_dask(10000 if args.quick else 50000)


if __name__ == "__main__":
    main()
