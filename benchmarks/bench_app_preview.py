"""How long the app takes to price and forecast a release before it runs.

The app shows a release's cost and accuracy forecast on every change of its
settings. Both come from the release's data-free plan (n, p and the
settings), so the time should not grow with n. This script loads a table of
n = 10^6 rows and p = 20 columns into :class:`dppca.app.state.AppState`,
times 50 previews of each release kind (median and largest), with and without
public bounds, and prints each against one float64 copy of the table: the
least any preview that validates the data would cost (the old preview, which
ran the release against a refusing budget, took about 870 ms here).

Run: ``python benchmarks/bench_app_preview.py`` (about 10 s; ``--n`` to change n).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from dppca.app.state import AppState

SETTINGS = {
    "directions": ("directions", {}),
    "directions (balanced)": ("directions", {"design": "balanced"}),
    "scree (3 methods)": ("scree", {"k": 5, "methods": ("clipped", "pmwm", "huber")}),
    "score (2 methods)": ("score", {"methods": ("add", "sparse")}),
}


def _times(fn, repeat: int) -> np.ndarray:
    fn()  # warm up
    out = np.empty(repeat)
    for i in range(repeat):
        start = time.perf_counter()
        fn()
        out[i] = time.perf_counter() - start
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    columns = [f"V{j + 1}" for j in range(20)]
    table = pd.DataFrame(rng.normal(size=(args.n, 20)), columns=columns)
    table["group"] = np.array(["a", "b", "c", "d"])[rng.integers(0, 4, args.n)]
    state = AppState(random_state=rng)
    state.load("bench", table)
    state.select(columns, group="group", group_labels="a,b,c,d")
    delta = state.budget.delta / 4
    copy = np.median(_times(lambda: np.array(table[columns], dtype=np.float64), 5))
    print(f"n = {args.n}, p = 20; one float64 copy of the table: {copy * 1e3:.1f} ms")
    print(f"{'release':34s} {'median ms':>10s} {'max ms':>8s} {'median / copy':>14s}")
    for bounds in (None, dict.fromkeys(columns, (-10.0, 10.0))):
        state.set_bounds(bounds)
        for name, (kind, options) in SETTINGS.items():

            def preview(kind: str = kind, options: dict = options) -> None:
                state.preview(kind, eps=0.3, delta=delta, **options)

            t = _times(preview, args.repeat)
            label = name + (" + bounds" if bounds else "")
            print(
                f"{label:34s} {np.median(t) * 1e3:10.3f} {t.max() * 1e3:8.3f} "
                f"{np.median(t) / copy:14.2g}"
            )


if __name__ == "__main__":
    main()
