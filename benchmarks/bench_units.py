"""Raw units: private directions of tables whose columns are on unrelated scales.

For each raw-unit real table (scikit-learn's bundled copies, not shipped with
dppca), n, eps and seed, the top-2 private subspace is compared with the top-2
eigenvectors of the spherical Kendall matrix of the whole table divided by its
sample standard deviations (the standardised truth), by the sine of the
largest principal angle. Four ways to reach the standardised picture:

- ``raw``: the data as given (``scale=None``);
- ``private``: ``scale="private"``, the scales' cost included in eps;
- ``tau``: ``estimator="tau"``, Kendall's tau matrix over p, which is the same
  in any units (the whole eps buys the matrix);
- ``oracle``: divided by the sample SDs of the rows used (not private; the
  best any scale estimate can do, for reference only).

Tables: breast cancer's ten "mean" features (569 x 10, SDs from 0.007 to
352), diabetes in its original units (442 x 10, ``load_diabetes(scaled=False)``,
SDs from 0.5 to 34) and wine (178 x 13, SDs from 0.12 to 315), all from
scikit-learn; when statsmodels is installed, also three tables dppca has never
seen, from its bundled datasets: ``modechoice`` (840 x 6 travel times and costs,
SDs spanning 300x), ``star98`` (303 x 22 school statistics, 20000x) and
``anes96`` (944 x 11 coded survey answers with many ties, 2000x). Each seed
draws n rows without replacement (with replacement when n exceeds the table,
which adds tied rows, handled by ``ties="zero"``).

Each cell also counts the honesty of the release: a release is *accurate*
when its sine is under 0.5, *warned* when it raised an ``AccuracyWarning``
(the data-free forecast before any data are read, or the post-release check
of the released spectrum), and *silently wrong* when it is neither.

Also times the plan: the tight composition of p pure parts with the Gaussian.

Run: ``python benchmarks/bench_units.py --seeds 20`` (a few minutes on 2 cores;
``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from dppca import AccuracyWarning, spherical_kendall
from dppca.releases.directions.plan import plan_pc_dir
from dppca.releases.engine import execute


def tables() -> dict[str, np.ndarray]:
    """The raw-unit tables (scikit-learn's bundled copies, and statsmodels' if installed)."""
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

    out = {
        "cancer10": load_breast_cancer().data[:, :10],
        "diabetes": load_diabetes(scaled=False).data,
        "wine": load_wine().data,
    }
    try:
        import statsmodels.api as sm
    except ImportError:  # pragma: no cover - optional
        return out
    mode = sm.datasets.modechoice.load_pandas().data
    out["modechoice"] = mode.drop(columns=["individual", "mode", "choice"]).to_numpy(float)
    out["star98"] = sm.datasets.star98.load_pandas().data.to_numpy(float)
    out["anes96"] = sm.datasets.anes96.load_pandas().data.select_dtypes("number").to_numpy(float)
    return out


def run(plan, data, seed: int, truth: np.ndarray) -> tuple[float, bool]:
    """The release's sine to the truth, and whether it warned (forecast or post-release)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = execute(plan, data, random_state=seed)
    warned = any(issubclass(w.category, AccuracyWarning) for w in caught)
    return sin_theta(res.directions, truth), warned


def top2(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return vectors[:, np.argsort(values)[::-1][:2]]


def sin_theta(a: np.ndarray, b: np.ndarray) -> float:
    s = np.linalg.svd(a.T @ b, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - s.min() ** 2)))


def cell(errors: list[float], warned: list[bool]) -> str:
    """Median sine / accurate / warned / silently wrong, as shares of the seeds."""
    e, w = np.array(errors), np.array(warned)
    accurate = e < 0.5
    silent = ~accurate & ~w
    return f"{np.median(e):.2f} {accurate.mean():4.0%} {w.mean():4.0%} {silent.mean():4.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = (150, 500) if args.quick else (150, 350, 500, 2000)
    epsilons = (1.0,) if args.quick else (0.5, 1.0, 2.0)
    seeds = 3 if args.quick else args.seeds
    delta = 1e-6
    print(f"sinTheta of the top-2 subspace to the standardised Kendall truth, {seeds} seeds")
    print(
        "cell: median sinTheta / accurate (under 0.5) / warned / silently wrong, shares of seeds"
    )
    heads = " | ".join(f"{h:>20}" for h in ("raw", "private", "tau", "oracle"))
    print(f"{'table':10} {'n':>5} {'eps':>4} | {heads}")
    plan_seconds = []
    for name, X in tables().items():
        X = X[:, X.std(axis=0) > 0]
        truth = top2(spherical_kendall(X / X.std(axis=0, ddof=1), ties="zero"))
        N, p = X.shape
        for n in sizes:
            for eps in epsilons:
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # each release's warnings are counted
                    private = plan_pc_dir(n, p, 2, eps=eps, delta=delta, scale="private")
                    plan_seconds.append(time.perf_counter() - start)
                    plain = plan_pc_dir(n, p, 2, eps=eps, delta=delta)
                    tau = plan_pc_dir(n, p, 2, eps=eps, delta=delta, estimator="tau")
                errors: dict[str, list[float]] = {
                    m: [] for m in ("raw", "private", "tau", "oracle")
                }
                warned: dict[str, list[bool]] = {m: [] for m in errors}
                for seed in range(seeds):
                    rows = np.random.default_rng(10_000 + seed).choice(N, n, replace=n > N)
                    Y = X[rows]
                    sd = Y.std(axis=0, ddof=1)
                    sd = np.where(sd > 0, sd, 1.0)
                    for method, plan, data in (
                        ("raw", plain, Y),
                        ("private", private, Y),
                        ("tau", tau, Y),
                        ("oracle", plain, Y / sd),
                    ):
                        error, warn = run(plan, data, seed, truth)
                        errors[method].append(error)
                        warned[method].append(warn)
                cells = [cell(errors[m], warned[m]) for m in errors]
                print(f"{name:10} {n:5d} {eps:4g} | " + " | ".join(f"{c:>20}" for c in cells))
    print(
        f"plan with scale='private': median {np.median(plan_seconds):.2f} s "
        f"(tight composition of p pure parts and the Gaussian)"
    )


if __name__ == "__main__":
    main()
