"""Do the DP correlation circle and biplot arrows cover the non-private ones?

On the 392 complete rows of the ``cars`` table (vega_datasets; six numeric
columns in their own units: mpg, cylinders, displacement, horsepower,
weight, acceleration), one private PCA (:func:`dppca.dp_pca`, the
standardised analysis) per noise seed at eps = 1 and delta = 1e-6. For each
seed and each variable:

- correlation circle: is the non-private arrow (the correlation of the
  variable with PC1 and PC2 of the sample correlation matrix, sign-aligned
  with the private PCs) inside the drawn 95% privacy-noise region of the
  private arrow (the normal ellipse of the re-perturbed correlations, as
  drawn)?
- biplot: the same for the biplot's arrows at alpha = 1, ``v d`` with
  ``d = sqrt((n - 1) lambda)``: the private arrow and its region from the
  fit; the non-private arrow from the sample correlation PCA's directions and
  eigenvalues. (The display multiplier scales both and the region alike, so
  it cancels.)

A seed "matches" when every one of the six arrows is inside its region.
Prints per picture: the share of matching seeds and the share of arrows
inside. The harness reads the data to compute the non-private reference
only; the pictures read the fit.

Run: python benchmarks/bench_pictures.py [--seeds 50] [--eps 1]
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np

from dppca import AccuracyWarning, dp_pca
from dppca.plotting.variables import fit_correlations, reperturbed_correlations

COLUMNS = [
    "Miles_per_Gallon",
    "Cylinders",
    "Displacement",
    "Horsepower",
    "Weight_in_lbs",
    "Acceleration",
]
LEVEL = 0.95
DRAWS = 200


def cars():
    from vega_datasets import data

    return data.cars()[COLUMNS].dropna().reset_index(drop=True)


def inside(samples: np.ndarray, points: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """Per variable: is ``points[j]`` in the ``level`` normal ellipse of ``samples[:, j]``.

    The ellipse is the one the plots draw (_loading_panels._draw_uncertainty):
    centre the mean, shape the covariance, radius sqrt(-2 log(1 - level)).
    """
    r2 = -2.0 * math.log1p(-level)
    out = []
    for j in range(samples.shape[1]):
        pts = samples[:, j, :]
        mu = pts.mean(axis=0)
        cov = np.cov(pts, rowvar=False) + 1e-15 * np.eye(2)
        d = points[j] - mu
        out.append(float(d @ np.linalg.solve(cov, d)) <= r2)
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument(
        "--level", type=float, default=LEVEL, help="region level (the plots' default 0.95)"
    )
    parser.add_argument(
        "--per-arrow",
        action="store_true",
        help="regions of each arrow alone (joint=False); default: the plots' joint regions",
    )
    args = parser.parse_args()
    X = cars()
    n, p = X.shape
    if not args.per_arrow:  # the plots' default: Bonferroni over the p arrows drawn
        args.level = 1.0 - (1.0 - args.level) / p
    R = np.corrcoef(X.to_numpy(float), rowvar=False)
    w, V = np.linalg.eigh(R)
    w, V = w[::-1], V[:, ::-1]
    circle_hits, biplot_hits = [], []
    for seed in range(args.seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AccuracyWarning)
            fit = dp_pca(X, eps=args.eps, delta=args.delta, score=False, random_state=seed)
        vp = np.asarray(fit.directions.directions)[:, :2]
        signs = np.where(np.sum(vp * V[:, :2], axis=0) < 0, -1.0, 1.0)
        vnp = V[:, :2] * signs
        # correlation circle
        r = fit_correlations(fit)[:, :2]
        spread = reperturbed_correlations(fit, DRAWS, random_state=10_000 + seed)[:, :, :2]
        assert np.allclose(r, fit_correlations(fit)[:, :2])
        circle_hits.append(inside(spread, vnp * np.sqrt(w[:2]), args.level))
        # biplot arrows at alpha = 1
        d = np.sqrt((n - 1) * np.clip(np.asarray(fit.variances)[:2], 0, None))
        sens = fit.loading.noise_sensitivity(DRAWS, random_state=20_000 + seed)
        arrows = sens.coordinate_samples(1, 2) * d
        d_np = np.sqrt((n - 1) * w[:2])
        biplot_hits.append(inside(arrows, vnp * d_np, args.level))
    for name, hits in (("correlation circle", circle_hits), ("biplot", biplot_hits)):
        h = np.array(hits)
        print(
            f"{name}: n={n}, p={p}, eps={args.eps:g}, delta={args.delta:g}, "
            f"{args.seeds} seeds: all {p} arrows inside their {args.level:.3g} region in "
            f"{h.all(axis=1).mean():.0%} of seeds; arrows inside {h.mean():.1%}; "
            f"at least {p - 1} inside in {(h.sum(axis=1) >= p - 1).mean():.0%} of seeds; "
            f"per variable {np.round(h.mean(axis=0), 2).tolist()}"
        )


if __name__ == "__main__":
    main()
