"""The speed targets of a release against the Kendall kernel, measured in one run.

Prints, side by side, CPU-time ratios with BLAS held to one thread (the
kernels' own threads count too: CPU time is summed over threads):

* ``dp_scree(2000 x 50, k=3)`` / ``spherical_kendall(2000 x 50)`` (target <= 3);
* the same with ``k=None``, all 50 variances (target <= 6);
* unseeded ``dp_pc_dir(2000 x 1000, k=2)`` / ``spherical_kendall(2000 x 1000)``,
  hardened noise on when OpenDP is installed (target <= 10);

and the peak memory traced by ``tracemalloc`` (numpy reports its buffers to
it) of ``dp_scree(2000 x 200, k=None)`` (target <= 1 GiB). Each timing is the
best of ``--repeat`` runs after one warm-up call (which compiles numba's
kernels when the fast extra is installed).

Run:  python benchmarks/bench_speed.py [--repeat 3] [--skip-dir]

On machines where OPENBLAS_CORETYPE is set, unset it (and OPENBLAS_L2_SIZE)
in the benchmark's command alone to measure the current OpenBLAS kernels.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from dppca import dp_pc_dir, dp_scree, spherical_kendall

EPS, DELTA = 1.0, 1e-6


def cpu_time(fn: Callable[[], object], repeat: int) -> float:
    """Least CPU time (all threads) of ``repeat`` calls after one warm-up call."""
    fn()
    best = np.inf
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def peak_bytes(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-dir", action="store_true", help="skip the p = 1000 release")
    args = parser.parse_args()
    rng = np.random.default_rng(20240601)
    scales = np.linspace(3.0, 0.3, 1000)
    big = rng.standard_normal((2000, 1000)) * scales
    x50 = np.ascontiguousarray(big[:, :50])
    x200 = np.ascontiguousarray(big[:, :200])
    with threadpool_limits(limits=1, user_api="blas"):
        blas = [(i["internal_api"], i.get("architecture")) for i in threadpool_info()]
        print(f"BLAS: {blas}")
        kernel50 = cpu_time(lambda: spherical_kendall(x50), args.repeat)
        scree3 = cpu_time(
            lambda: dp_scree(x50, 3, eps=EPS, delta=DELTA, random_state=1), args.repeat
        )
        scree_all = cpu_time(
            lambda: dp_scree(x50, None, eps=EPS, delta=DELTA, random_state=1), args.repeat
        )
        print(f"spherical_kendall(2000 x 50): {kernel50:.4f} CPU-s")
        print(f"dp_scree(2000 x 50, k=3)    / kernel: {scree3 / kernel50:6.2f}  (target <= 3)")
        print(f"dp_scree(2000 x 50, k=None) / kernel: {scree_all / kernel50:6.2f}  (target <= 6)")
        if not args.skip_dir:
            kernel = cpu_time(lambda: spherical_kendall(big), 1)
            release = cpu_time(lambda: dp_pc_dir(big, 2, eps=EPS, delta=DELTA), 1)
            print(f"spherical_kendall(2000 x 1000): {kernel:.3f} CPU-s")
            print(
                f"unseeded dp_pc_dir(2000 x 1000, k=2) / kernel: {release / kernel:6.2f}"
                "  (target <= 10)"
            )
        peak = peak_bytes(lambda: dp_scree(x200, None, eps=EPS, delta=DELTA, random_state=1))
        print(
            f"peak traced memory of dp_scree(2000 x 200, k=None): {peak / 2**30:.3f} GiB"
            "  (target <= 1)"
        )


if __name__ == "__main__":
    main()
