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

With ``--units`` it compares, for the fit of the table in its own units
(``standardize=False``), three ways to draw the correlation circle at the
same total (eps, delta), against the correlations of the variables with PC1
and PC2 of the sample covariance PCA in units:

- ``fit k=3``: the fit's directions and its private variances of PC1-PC3
  (the default k), the denominator ``sum_m v_jm^2 lambda_m`` over those;
- ``fit k=p``: the same with all p private variances (``k=p``);
- ``per-variable``: the fit with k=2 from ``1 - VARIANCE_SHARE`` of the
  budget, and each column's variance from a private clipped scree along the
  coordinate axes (public directions = the identity) from the rest, split by
  basic composition (looser than the tight accountant: a small handicap):
  ``r_jl = v_jl sqrt(lambda_l) / s_j``, clipped to [-1, 1].

Prints the median over seeds of the largest and the mean absolute error over
the 2 p correlations, and the share of seeds whose largest error is under 0.2,
against two references: the sample covariance PCA's correlations (end to
end), and the correlations along each route's own private directions with
the exact covariance ``S`` (``(S v_l)_j / (s_j sqrt(v_l' S v_l))``: the
variance step alone, what the choice between the routes changes).

Run: python benchmarks/bench_pictures.py [--seeds 50] [--eps 1] [--units]
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np

from dppca import AccuracyWarning, PrivacyWarning, dp_pca, dp_scree
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
VARIANCE_SHARE = 0.3  # of eps and delta, for the per-variable variances (--units)


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


def _aligned(r: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """``r`` with each column's sign turned towards ``truth``'s."""
    return r * np.where(np.sum(r * truth, axis=0) < 0, -1.0, 1.0)


def units_circle(X, seeds: int, eps: float, delta: float) -> None:
    """The correlation circle of a fit in units: three routes at the same (eps, delta)."""
    x = X.to_numpy(float)
    n, p = x.shape
    w, V = np.linalg.eigh(np.cov(x, rowvar=False))
    w, V = w[::-1], V[:, ::-1]
    truth = V[:, :2] * np.sqrt(w[:2]) / x.std(axis=0, ddof=1)[:, None]
    cov = np.cov(x, rowvar=False)
    sd = np.sqrt(np.diag(cov))

    def exact(v: np.ndarray) -> np.ndarray:  # NOT private: the same directions, exact variances
        # corr(x_j, x v_l) = (S v_l)_j / (s_j sqrt(v_l' S v_l)), for any unit v_l
        return cov @ v / sd[:, None] / np.sqrt(np.einsum("ij,ik,kj->j", v, cov, v))

    errors: dict[str, list[np.ndarray]] = {"fit k=3": [], "fit k=p": [], "per-variable": []}
    steps: dict[str, list[np.ndarray]] = {name: [] for name in errors}
    # for reference: the standardised fit's circle against the correlation PCA's
    wc, Vc = np.linalg.eigh(np.corrcoef(x, rowvar=False))
    std_truth = Vc[:, ::-1][:, :2] * np.sqrt(wc[::-1][:2])
    standardised: list[np.ndarray] = []
    for seed in range(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AccuracyWarning)
            warnings.simplefilter("ignore", PrivacyWarning)
            for name, k in (("fit k=3", 3), ("fit k=p", p)):
                fit = dp_pca(
                    X,
                    eps=eps,
                    delta=delta,
                    standardize=False,
                    k=k,
                    score=False,
                    random_state=seed,
                )
                r = fit_correlations(fit)[:, :2]
                errors[name].append(np.abs(_aligned(r, truth) - truth))
                steps[name].append(np.abs(r - exact(np.asarray(fit.directions.directions)[:, :2])))
            fit = dp_pca(X, eps=eps, delta=delta, score=False, random_state=seed)
            r = fit_correlations(fit)[:, :2]
            standardised.append(np.abs(_aligned(r, std_truth) - std_truth))
            rng = np.random.default_rng(seed)
            fit = dp_pca(
                X,
                eps=(1 - VARIANCE_SHARE) * eps,
                delta=(1 - VARIANCE_SHARE) * delta,
                standardize=False,
                k=2,
                score=False,
                random_state=rng,
            )
            scree = dp_scree(
                x,
                p,
                eps=VARIANCE_SHARE * eps,
                delta=VARIANCE_SHARE * delta,
                directions=np.eye(p),
                public_directions=True,
                random_state=rng,
            )
        s = np.sqrt(np.clip(np.asarray(scree.scree), 1e-300, None))
        lam = np.clip(np.asarray(fit.variances)[:2], 0.0, None)
        r = np.clip(
            np.asarray(fit.directions.directions)[:, :2] * np.sqrt(lam) / s[:, None], -1, 1
        )
        errors["per-variable"].append(np.abs(_aligned(r, truth) - truth))
        steps["per-variable"].append(
            np.abs(r - exact(np.asarray(fit.directions.directions)[:, :2]))
        )
    print(
        f"correlation circle of the fit in units: n={n}, p={p}, eps={eps:g}, "
        f"delta={delta:g}, {seeds} seeds"
    )
    e = np.array(standardised)
    print(
        f" for reference, the standardised fit against the correlation PCA: largest error "
        f"median {np.median(e.max(axis=(1, 2))):.3f}, mean error median "
        f"{np.median(e.mean(axis=(1, 2))):.3f}, largest under 0.2 in "
        f"{(e.max(axis=(1, 2)) < 0.2).mean():.0%} of seeds"
    )
    for title, table in (("end to end", errors), ("variance step alone", steps)):
        print(f" {title}:")
        for name, errs in table.items():
            e = np.array(errs)
            worst, mean = e.max(axis=(1, 2)), e.mean(axis=(1, 2))
            print(
                f"  {name:13s} largest error median {np.median(worst):.3f}, "
                f"mean error median {np.median(mean):.3f}, "
                f"largest under 0.2 in {(worst < 0.2).mean():.0%} of seeds"
            )


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
    parser.add_argument(
        "--units", action="store_true", help="the fit in units: three correlation circles"
    )
    args = parser.parse_args()
    X = cars()
    if args.units:
        units_circle(X, args.seeds, args.eps, args.delta)
        return
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
