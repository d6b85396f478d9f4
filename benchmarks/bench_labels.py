"""Cost of drawing a loading plot as the number of labelled variables grows.

Labels are pushed apart in rounds that cost O(m^2) each, so they are pushed
only up to ``MAX_REPEL_LABELS`` labels; above it they are written where they
start. Printed in one run, as ratios to the plot at p = 20 (one figure drawn
to an Agg canvas per p, best of three):

    p    seconds   ratio to p=20   labels pushed

Run:  python benchmarks/bench_labels.py [p ...]   (default 20 40 60 61 150 400)
"""

from __future__ import annotations

import sys
import time

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from dppca import dp_loading
from dppca.core.validation import MAX_REPEL_LABELS


def _draw_seconds(p: int) -> float:
    X = np.random.default_rng(0).normal(size=(80, p))
    res = dp_loading(X, eps=0.5, delta=1e-5, random_state=1, ties="zero")
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        ax = res.plot()
        ax.figure.canvas.draw()
        best = min(best, time.perf_counter() - start)
        plt.close("all")
    return best


def main(sizes: list[int]) -> None:
    base = _draw_seconds(20)
    print(f"{'p':>5} {'seconds':>9} {'ratio':>7}  pushed")
    for p in sizes:
        t = _draw_seconds(p)
        print(f"{p:>5} {t:>9.3f} {t / base:>7.1f}  {'yes' if p <= MAX_REPEL_LABELS else 'no'}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [20, 40, 60, 61, 150, 400])
