"""Width and coverage of the private score frame on the bundled gau_g data.

For each eps, private directions are released once (``dp_pc_dir``, seed 1000)
and reused by ``dp_score`` (as the app does) for ``--seeds`` frame seeds; the
default call (directions released inside each call) is run as well. Each frame
is compared with a NON-private reference computed here for evaluation only:
per axis, the 0.995 quantile of ``|s - median(s)|`` of the true scores on the
directions the call used. The script prints the median, 99th percentile and
maximum of the half-width ratio (the wider of the two axes per frame), the
fraction of frames wider than 5x the reference, the fractions covering fewer
than 90 % and 80 % of the rows, the median coverage, and how many calls
raised an AccuracyWarning.

Run:  python benchmarks/bench_frame.py [--seeds 200] [--eps 0.3 1]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from dppca import dp_pc_dir, dp_score
from dppca.core.exceptions import AccuracyWarning
from dppca.datasets import load_gau_g

DELTA = 1e-5


def evaluate(result) -> tuple[float, float]:
    """(worst half-width ratio over the two axes, fraction of rows inside the frame)."""
    s = np.asarray(result.nonprivate.scores)
    ratios, inside = [], np.ones(s.shape[0], dtype=bool)
    for a, lim in enumerate((result.xlim, result.ylim)):
        ref = np.quantile(np.abs(s[:, a] - np.median(s[:, a])), 0.995)
        ratios.append((lim[1] - lim[0]) / 2.0 / ref)
        inside &= (s[:, a] >= lim[0]) & (s[:, a] <= lim[1])
    return max(ratios), float(inside.mean())


def run(X, seeds: int, **kwargs) -> tuple[np.ndarray, np.ndarray, int]:
    ratio, cover, warned = np.empty(seeds), np.empty(seeds), 0
    for seed in range(seeds):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = dp_score(
                X, delta=DELTA, groups="group", compare=True, random_state=seed, **kwargs
            )
        warned += any(issubclass(w.category, AccuracyWarning) for w in caught)
        ratio[seed], cover[seed] = evaluate(res)
    return ratio, cover, warned


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--eps", type=float, nargs="+", default=[0.3, 1.0])
    args = parser.parse_args()

    X = load_gau_g()
    numeric = X.drop(columns="group")
    print(f"gau_g: n={X.shape[0]}, p={numeric.shape[1]}, delta={DELTA:g}, seeds={args.seeds}")
    print("half-width / reference (worst axis); coverage = share of rows inside the frame")
    header = (
        "eps   directions  median   p99      max        >5x     cover<0.9  cover<0.8  "
        "cover med  warned"
    )
    print(header)
    for eps in args.eps:
        dirs = dp_pc_dir(
            numeric, 2, eps=eps, delta=DELTA, random_state=1000, calibration="analytic"
        )
        for label, extra in (("reused", {"directions": dirs}), ("in call", {})):
            ratio, cover, warned = run(X, args.seeds, eps=eps, **extra)
            print(
                f"{eps:<5g} {label:<11} {np.median(ratio):<8.3g} "
                f"{np.quantile(ratio, 0.99):<8.3g} {ratio.max():<10.4g} "
                f"{np.mean(ratio > 5):<7.3f} {np.mean(cover < 0.9):<10.3f} "
                f"{np.mean(cover < 0.8):<10.3f} {np.median(cover):<10.4f} {warned}"
            )


if __name__ == "__main__":
    main()
