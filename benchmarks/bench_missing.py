"""Missing values: the zero-term rule (``missing="zero"``) against dropping rows.

For a table, a share of missing cells (put at random, independently of the
values) and a seed, the top-2 private subspace is compared with the top-2
eigenvectors of the spherical Kendall matrix of the whole table before any
cell went missing, by the sine of the largest principal angle. Two rules:

- ``zero``: ``missing="zero"``, n = every row (private: no count released);
- ``drop``: the complete rows only, their count taken as n (the old
  ``dropna=True``; not private, since that count was published without
  noise), for reference;
- ``pairs``: the rule first proposed, equally private: every pair holding a
  missing cell adds a zero term (the complete rows' matrix times
  ``m (m - 1) / (n (n - 1))``, with the noise of n rows; emulated here);
- ``none``: the table before any cell went missing (the floor the noise sets).

Tables: wine (178 x 13) and breast cancer (569 x 30), each divided by its
column SDs first (public units stand-in: the truth is the standardised
picture), and the bundled ``gau`` (5000 x 20). The cells are 5 % missing.

Run: ``python benchmarks/bench_missing.py --seeds 10`` (about a minute).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from dppca import dp_pc_dir, plan_pc_dir, spherical_kendall
from dppca.datasets import load_breast_cancer, load_gau, load_wine
from dppca.privacy.mechanisms import symmetric_gaussian_noise


def _table(name: str) -> np.ndarray:
    loader = {"wine": load_wine, "breast_cancer": load_breast_cancer, "gau": load_gau}[name]
    frame = loader()
    x = frame.select_dtypes("number").to_numpy(dtype=float)
    return x / x.std(axis=0) if name != "gau" else x


def _sin(a: np.ndarray, b: np.ndarray) -> float:
    s = np.linalg.svd(a.T @ b, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - s.min() ** 2)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--eps", type=float, default=1.0)
    args = parser.parse_args()
    print(f"missing share {args.share}, eps {args.eps}, top-2 subspace, median sin (IQR)")
    for name in ("wine", "breast_cancer", "gau"):
        x = _table(name)
        n, p = x.shape
        truth = np.linalg.eigh(spherical_kendall(x, ties="zero"))[1][:, ::-1][:, :2]
        delta = min(1e-5, 0.1 / n)
        out: dict[str, list[float]] = {"zero": [], "pairs": [], "drop": [], "none": []}
        sigma = plan_pc_dir(n, p, 2, eps=args.eps, delta=delta, accuracy="ignore").sigma
        complete_share = []
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            y = x.copy()
            y[rng.random(y.shape) < args.share] = np.nan
            keep = ~np.isnan(y).any(axis=1)
            complete_share.append(keep.mean())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                zero = dp_pc_dir(
                    y, 2, eps=args.eps, delta=delta, missing="zero", random_state=seed
                )
                out["zero"].append(_sin(zero.directions, truth))
                m = int(keep.sum())
                whole = spherical_kendall(y[keep], ties="zero") * m * (m - 1) / (n * (n - 1))
                noisy = symmetric_gaussian_noise(p, sigma, rng, value=whole)
                top = np.linalg.eigh(0.5 * (noisy + noisy.T))[1][:, ::-1][:, :2]
                out["pairs"].append(_sin(top, truth))
                none = dp_pc_dir(x, 2, eps=args.eps, delta=delta, random_state=seed)
                out["none"].append(_sin(none.directions, truth))
                if keep.sum() >= 3:
                    drop = dp_pc_dir(y[keep], 2, eps=args.eps, delta=delta, random_state=seed)
                    out["drop"].append(_sin(drop.directions, truth))
        share = float(np.mean(complete_share))
        cells = []
        for rule, values in out.items():
            q = np.percentile(values, [25, 50, 75]) if values else [np.nan] * 3
            cells.append(f"{rule} {q[1]:.3f} ({q[0]:.3f}-{q[2]:.3f})")
        print(f"{name:14s} n={n:5d} p={p:2d} complete rows {share:.2f}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
