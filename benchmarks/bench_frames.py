"""Per-axis width of the private score frame against the data's central 99 %.

For each table and eps, ``dp_score`` runs with its defaults (directions released
in the call, ``compare=True``) for ``--seeds`` seeds. Each axis of the frame is
compared with a NON-private reference computed here for evaluation only: the
width of the central 99 % (0.005 to 0.995 quantiles) of the true scores of the
rows on the directions the call released (``result.nonprivate.scores``). The
script prints, per axis, the median ratio of frame width to that width, the
share of seeds with a ratio of at most 2, the share of seeds with an axis off
by a factor 10 or more either way ("off10x"), the largest ratio, the share of
the rows inside the frame (median), and how many calls the forecast warned
about (an AccuracyWarning before any data are read).

Tables: gau_g (n = 5000, its group column as groups), the raw bundled wine
(178 rows), iris (150) and breast_cancer (569) tables without their labels, and
``raw333``, 333 rows of six Gaussian columns with unequal scales and offsets
(scores of size about 3 to 8, fixed seed).

Run:  python benchmarks/bench_frames.py [--seeds 10] [--eps 0.5 1 2]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from dppca import dp_score
from dppca.core.exceptions import AccuracyWarning
from dppca.datasets import load_breast_cancer, load_gau_g, load_iris, load_wine


def raw333() -> pd.DataFrame:
    rng = np.random.default_rng(333)
    scale = np.array([3.0, 2.0, 1.0, 1.0, 0.5, 0.5])
    shift = np.array([5.0, -2.0, 0.0, 1.0, 0.0, 3.0])
    values = rng.normal(size=(333, 6)) * scale + shift
    return pd.DataFrame(values, columns=[f"x{j + 1}" for j in range(6)])


def tables() -> list[tuple[str, pd.DataFrame, dict]]:
    numeric = {
        "wine": load_wine(),
        "iris": load_iris(),
        "breast_cancer": load_breast_cancer(),
        "raw333": raw333(),
    }
    out: list[tuple[str, pd.DataFrame, dict]] = [("gau_g", load_gau_g(), {"groups": "group"})]
    for name, frame in numeric.items():
        out.append((name, frame.select_dtypes("number"), {}))
    return out


def ratios(result) -> tuple[np.ndarray, float]:
    """(frame width / central 99 % width per axis, share of rows inside the frame)."""
    s = np.asarray(result.nonprivate.scores)
    out, inside = np.empty(2), np.ones(s.shape[0], dtype=bool)
    for a, lim in enumerate((result.xlim, result.ylim)):
        lo, hi = np.quantile(s[:, a], [0.005, 0.995])
        out[a] = (lim[1] - lim[0]) / (hi - lo)
        inside &= (s[:, a] >= lim[0]) & (s[:, a] <= lim[1])
    return out, float(inside.mean())


def run(X: pd.DataFrame, eps: float, seeds: int, **kwargs) -> tuple[np.ndarray, np.ndarray, int]:
    delta = min(1e-5, 0.1 / X.shape[0])
    ratio, cover, warned = np.empty((seeds, 2)), np.empty(seeds), 0
    for seed in range(seeds):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = dp_score(X, eps=eps, delta=delta, compare=True, random_state=seed, **kwargs)
        warned += any(issubclass(w.category, AccuracyWarning) for w in caught)
        ratio[seed], cover[seed] = ratios(res)
    return ratio, cover, warned


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    args = parser.parse_args()
    print(f"frame width / central-99% width of the true scores, {args.seeds} seeds")
    print(
        f"{'table':<14}{'n':>5} {'eps':>4}  {'med x':>6} {'med y':>6}  {'<=2x x':>6} "
        f"{'<=2x y':>6} {'<=2x both':>9} {'off10x':>6}  {'max':>8}  {'cover':>6}  warned"
    )
    for name, X, kwargs in tables():
        for eps in args.eps:
            ratio, cover, warned = run(X, eps, args.seeds, **kwargs)
            ok = ratio <= 2.0
            off = ((ratio >= 10.0) | (ratio <= 0.1)).any(axis=1)
            print(
                f"{name:<14}{X.shape[0]:>5} {eps:>4g}  {np.median(ratio[:, 0]):>6.2f} "
                f"{np.median(ratio[:, 1]):>6.2f}  {ok[:, 0].mean():>6.1f} {ok[:, 1].mean():>6.1f} "
                f"{ok.all(axis=1).mean():>9.1f} {off.mean():>6.1f}  {ratio.max():>8.3g}  "
                f"{np.median(cover):>6.3f}  {warned}/{args.seeds}"
            )


if __name__ == "__main__":
    main()
