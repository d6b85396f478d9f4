"""Real tables in their own units: does each route reach the standardised PCA?

Analysts bring tables whose columns carry unrelated units (miles per gallon
next to pounds, millimetres of rain next to degrees). The picture they mean is
almost always the standardised one: PCA of the correlation matrix. For each
table, n, eps and seed this script releases the pictures by several routes at
the same total (eps, delta) and measures them against the standardised PCA of
the WHOLE table (the truth, computed here without privacy):

- ``raw``: the spherical Kendall directions of the data as given, with the
  scree and the score plot on them (one report plan, default shares);
- ``tau``: Kendall's tau directions (unit-free) from 0.4 of eps, then the
  scree and the score plot on the raw data along them from the rest (the
  route the command line offered before the one-fit PCA: the directions are
  right, the scree and the frame are in raw units);
- ``private``: ``scale="private"`` (private scales per column first, then
  all three releases on the scaled table);
- ``oracle``: the table divided by its sample SDs (NOT private: the best a
  scale estimate can do, for reference only), then the raw route;
- ``pca-std`` and ``pca-units``: ``dppca.dp_pca`` with ``standardize=True``
  and ``standardize=False``, defaults otherwise (when the installed dppca has
  it; the plan, which reads no data, is made once per cell and run per seed,
  exactly what ``dp_pca`` does per call).

Per release:

- directions: sinTheta of the top-2 subspace to the top-2 eigenvectors of
  the whole table's correlation matrix; *right* when under 0.5;
- PVE: the largest absolute error of the released proportions of PC1-3
  against the eigenvalues of that correlation matrix over p; *right* within
  0.10;
- frame (when the release draws one; ``dp_pca`` leaves the score plot out,
  with a note on the fit, where its private scales would fail): the share of the
  released rows whose true scores (the rows as the release saw them, times
  the released directions, no centring) fall inside the private frame, and
  each axis's width over the central 99 % range (quantiles 0.005 and 0.995)
  of those scores; *right* when both axes are within 3x that range and at
  least 80 % of the rows are inside;
- honesty: a release *warned* when it raised an ``AccuracyWarning`` or a
  ``PrivacyWarning`` (recorded with ``warnings.catch_warnings``), or refused;
  it is *silently wrong* when one of its three pictures is wrong and it did
  not warn. The directions alone are counted too: *dirs silent* (sinTheta
  at least 0.5, no warning) and *dirs ok warned* (under 0.5, warned), the
  two error rates of the directions' post-release check.

Tables (not bundled with dppca, each skipped when its package is missing):
vega_datasets ``cars`` (392 complete rows: mpg, cylinders, displacement, hp,
weight, acceleration; SDs from 1.7 to 850) and ``seattle-weather`` (1461 x 4:
precipitation, two temperatures, wind; precipitation is zero on most days);
statsmodels ``macrodata`` (203 x 12 quarterly US series, year and quarter
left out; SDs from 0.8 to 3000, trending, far from elliptical) and ``fair``
(6366 x 9 survey answers, most of them coded on a few levels: heavy ties),
``modechoice`` (840 x 6 travel times, costs and household income, identifiers
and the chosen mode left out; skewed, many ties) and ``star98`` (303 x 22
school statistics: counts, percentages and spending; SDs over 4 orders of
magnitude, several columns skewed).
Each seed draws n rows without replacement; an n larger than the table is
skipped, and a table of fewer than 500 rows also runs at its own size (every
row; only the noise varies).

The rank route's estimand: Kendall's tau gives the correlation through
sin(pi tau / 2) only for elliptical columns (and tau-b for ties). The script
prints, per table, the distance between the standardised PCA and the PCA of
the whole table's sin(pi tau_b / 2) matrix; where that distance is large the
tau route aims at something other than the correlation PCA even without noise.

Run: ``python benchmarks/bench_real_units.py --seeds 20`` (about 10 to 15
minutes on 2 cores; ``--quick`` for a smoke run of a few cells and 3 seeds;
``--tables cars fair`` for a subset).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

import dppca
from bench_units import sin_theta
from dppca import AccuracyWarning, InaccurateReleaseError, PrivacyWarning, dp_pc_dir
from dppca.kernels.tau import kendall_tau_matrix
from dppca.releases.engine import CheckedData, execute
from dppca.releases.report import ReportInputs, plan_report

DELTA = 1e-6
SIZES = (150, 500, 2000)
EPSILONS = (0.5, 1.0, 2.0)
TAU_SHARE = 0.4  # the report's default share of the directions


# -- tables -------------------------------------------------------------------------------
def _vega() -> dict[str, pd.DataFrame]:
    try:
        from vega_datasets import local_data
    except ImportError:  # pragma: no cover - optional
        return {}
    cars = local_data.cars().select_dtypes("number").dropna()
    weather = local_data.seattle_weather().select_dtypes("number").dropna()
    return {"cars": cars, "seattle": weather}


def _statsmodels() -> dict[str, pd.DataFrame]:
    try:
        import statsmodels.api as sm
    except ImportError:  # pragma: no cover - optional
        return {}
    macro = sm.datasets.macrodata.load_pandas().data.drop(columns=["year", "quarter"])
    fair = sm.datasets.fair.load_pandas().data
    mode = sm.datasets.modechoice.load_pandas().data.drop(columns=["individual", "mode", "choice"])
    star = sm.datasets.star98.load_pandas().data
    return {
        "macro": macro.astype(float),
        "fair": fair.astype(float),
        "modechoice": mode.astype(float),
        "star98": star.astype(float),
    }


def tables() -> dict[str, pd.DataFrame]:
    """The raw-unit tables whose package is installed (complete rows, numeric columns)."""
    out = {**_vega(), **_statsmodels()}
    return {k: v.loc[:, v.std() > 0].reset_index(drop=True) for k, v in out.items()}


def sizes_for(rows: int, sizes: tuple[int, ...]) -> list[int]:
    """The n that fit in the table, and the table's own size when it is under 500 rows."""
    out = [n for n in sizes if n <= rows]
    if rows < 500 and rows not in out:
        out.append(rows)
    return out


# -- truth ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Truth:
    """The standardised PCA of the whole table (not private; the yardstick)."""

    directions: np.ndarray  # (p, 2)
    pve: np.ndarray  # (3,)


def eig_truth(matrix: np.ndarray) -> Truth:
    values, vectors = np.linalg.eigh(matrix)
    order = np.argsort(values)[::-1]
    pve = values[order] / np.trace(matrix)
    return Truth(vectors[:, order[:2]], pve[:3])


def correlation_truth(X: np.ndarray) -> Truth:
    return eig_truth(np.corrcoef(X, rowvar=False))


def tau_estimand(X: np.ndarray) -> Truth:
    """PCA of sin(pi tau_b / 2) of the whole table: what the rank route aims at."""
    tau = kendall_tau_matrix(X)
    d = np.sqrt(np.diag(tau))
    return eig_truth(np.sin(0.5 * np.pi * tau / np.outer(d, d)))


# -- one release per route ------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """What a route released, and the rows' true scores in the space its pictures show."""

    directions: np.ndarray  # (p, >= 2)
    pve: np.ndarray  # (3,)
    xlim: tuple[float, float] | None  # None: no score plot (left out by the release)
    ylim: tuple[float, float] | None
    scores: np.ndarray  # (n, 2), not private: for measuring the frame only


def _report_outcome(releases, table: np.ndarray) -> Outcome:
    directions = np.asarray(releases.directions.directions)
    scales = getattr(releases.score, "scales", None)
    seen = table if scales is None else table / np.asarray(scales)
    return Outcome(
        directions,
        np.asarray(releases.scree.pve_total)[:3],
        tuple(releases.score.xlim),
        tuple(releases.score.ylim),
        seen @ directions[:, :2],
    )


class Routes:
    """The routes of one (n, p, eps) cell; each plan is made once, without data."""

    def __init__(self, n: int, p: int, eps: float, names: tuple[str, ...]) -> None:
        self.n, self.p, self.eps = n, p, eps
        self.names = names
        self._plans: dict[str, object] = {}

    def _plan(self, key: str, make: Callable[[], object]) -> object:
        if key not in self._plans:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # each release's warnings are counted when run
                self._plans[key] = make()
        return self._plans[key]

    def _report(self, scale: str | None) -> object:
        return self._plan(
            f"report-{scale}",
            lambda: plan_report(self.n, self.p, eps=self.eps, delta=DELTA, k=3, scale=scale),
        )

    def run(self, name: str, Y: np.ndarray, seed: int) -> Outcome:
        if name in ("raw", "private"):
            plan = self._report("private" if name == "private" else None)
            return _report_outcome(execute(plan, Y, random_state=seed), Y)
        if name == "oracle":
            Z = Y / Y.std(axis=0, ddof=1)  # NOT private: the reference scaling
            return _report_outcome(execute(self._report(None), Z, random_state=seed), Z)
        if name == "tau":
            rng = np.random.default_rng(seed)
            tau = dp_pc_dir(
                Y, eps=TAU_SHARE * self.eps, delta=DELTA / 2, estimator="tau", random_state=rng
            )
            rest = self._plan(
                "tau-rest",
                lambda: plan_report(
                    self.n,
                    self.p,
                    eps=(1 - TAU_SHARE) * self.eps,
                    delta=DELTA / 2,
                    k=3,
                    directions_given=True,
                ),
            )
            data = CheckedData(Y, tuple(f"x{j}" for j in range(self.p)), ReportInputs(tau))
            return _report_outcome(execute(rest, data, random_state=rng), Y)
        if name in ("pca-std", "pca-units"):
            from dppca.releases.pca.plan import plan_pca

            plan = self._plan(
                name,
                lambda: plan_pca(
                    self.n, self.p, eps=self.eps, delta=DELTA, standardize=name == "pca-std"
                ),
            )
            return _pca_outcome(plan, Y, seed)
        raise ValueError(name)


def _pca_outcome(plan, Y: np.ndarray, seed: int) -> Outcome:
    """One ``dppca.dp_pca`` fit: its plan (made once per cell) run by the executor."""
    fit = execute(plan, CheckedData(Y, plan.settings.variables), random_state=seed)
    directions = np.asarray(fit.directions.directions)
    seen = Y if fit.scales is None else Y / np.asarray(fit.scales)  # public or private
    score = fit.score  # None: the fit left the score plot out, saying why
    return Outcome(
        directions,
        np.asarray(fit.pve)[:3],
        None if score is None else tuple(score.xlim),
        None if score is None else tuple(score.ylim),
        seen @ directions[:, :2],
    )


def available_routes() -> tuple[str, ...]:
    base = ("raw", "tau", "private", "oracle")
    return (*base, "pca-std", "pca-units") if hasattr(dppca, "dp_pca") else base


# -- measuring ------------------------------------------------------------------------------
@dataclass
class Tally:
    """One route's measurements over the seeds of a cell."""

    sin: list[float]
    pve: list[float]
    cover: list[float]
    width: list[float]
    warned: list[bool]
    wrong: list[bool]

    @classmethod
    def empty(cls) -> Tally:
        return cls([], [], [], [], [], [])

    def add(self, out: Outcome | None, truth: Truth, warned: bool) -> None:
        if out is None:  # refused before or after spending: counted as warned, nothing drawn
            for seq in (self.sin, self.pve, self.cover, self.width):
                seq.append(math.nan)
            self.warned.append(True)
            self.wrong.append(False)
            return
        sin = sin_theta(out.directions[:, :2], truth.directions)
        pve = float(np.max(np.abs(out.pve - truth.pve)))
        cover, width, frame_ok = math.nan, math.nan, True  # no frame drawn: nothing wrong
        if out.xlim is not None and out.ylim is not None:
            s = out.scores
            inside = np.ones(s.shape[0], dtype=bool)
            ratio = []
            for a, lim in enumerate((out.xlim, out.ylim)):
                lo, hi = np.quantile(s[:, a], [0.005, 0.995])
                ratio.append((lim[1] - lim[0]) / max(hi - lo, 1e-300))
                inside &= (s[:, a] >= lim[0]) & (s[:, a] <= lim[1])
            cover, width = float(inside.mean()), max(ratio)
            frame_ok = width <= 3.0 and cover >= 0.8
        self.sin.append(sin)
        self.pve.append(pve)
        self.cover.append(cover)
        self.width.append(width)
        self.warned.append(warned)
        self.wrong.append(sin >= 0.5 or pve > 0.1 or not frame_ok)

    def row(self) -> list[str]:
        sin, pve = np.array(self.sin), np.array(self.pve)
        cover, width = np.array(self.cover), np.array(self.width)
        warned, wrong = np.array(self.warned), np.array(self.wrong)
        drawn = ~np.isnan(sin)

        def share(mask: np.ndarray) -> str:
            return f"{mask.mean():.0%}" if mask.size else "-"

        def med(x: np.ndarray, fmt: str = ".2f") -> str:
            seen = x[~np.isnan(x)]
            return format(np.median(seen), fmt) if seen.size else "-"

        framed = ~np.isnan(cover)

        return [
            med(sin),
            share(drawn & (sin < 0.5)),
            med(pve),
            share(drawn & (pve <= 0.1)),
            med(cover),
            med(width, ".3g"),
            share(framed),
            share(warned),
            share(wrong & ~warned),
            share(drawn & (sin >= 0.5) & ~warned),
            share(drawn & (sin < 0.5) & warned),
        ]


HEAD = [
    "table",
    "n",
    "eps",
    "route",
    "sinT med",
    "dirs ok",
    "PVE err med",
    "PVE ok",
    "cover med",
    "width med",
    "framed",
    "warned",
    "silent wrong",
    "dirs silent",
    "dirs ok warned",
]


def release(routes: Routes, name: str, Y: np.ndarray, seed: int) -> tuple[Outcome | None, bool]:
    """One release of a route with its warnings recorded; a refusal counts as warned."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = routes.run(name, Y, seed)
        except InaccurateReleaseError:
            return None, True
    warned = any(issubclass(w.category, AccuracyWarning | PrivacyWarning) for w in caught)
    return out, warned


def markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 seeds, eps 1")
    parser.add_argument("--tables", nargs="+", help="a subset of the tables, by name")
    parser.add_argument("--routes", nargs="+", help="a subset of the routes, by name")
    args = parser.parse_args()
    seeds = 3 if args.quick else args.seeds
    epsilons = (1.0,) if args.quick else EPSILONS
    sizes = (150,) if args.quick else SIZES
    names = tuple(args.routes) if args.routes else available_routes()
    data = tables()
    if args.tables:
        data = {k: v for k, v in data.items() if k in args.tables}
    start = time.perf_counter()
    print(f"Real tables in their own units, delta={DELTA:g}, {seeds} seeds, routes {names}")
    print("Truth: the standardised (correlation) PCA of the whole table.\n")
    print("| table | rows x cols | SD max/min | rank estimand vs correlation: sinT, PVE gap |")
    print("|---|---|---|---|")
    for name, frame in data.items():
        X = frame.to_numpy(float)
        sd = X.std(axis=0, ddof=1)
        corr, rank = correlation_truth(X), tau_estimand(X)
        gap = np.max(np.abs(corr.pve - rank.pve))
        print(
            f"| {name} | {X.shape[0]} x {X.shape[1]} | {sd.max() / sd.min():.3g} | "
            f"{sin_theta(corr.directions, rank.directions):.2f}, {gap:.3f} |"
        )
    print()
    rows: list[list[str]] = []
    for name, frame in data.items():
        X = frame.to_numpy(float)
        truth = correlation_truth(X)
        N, p = X.shape
        for n in sizes_for(N, sizes):
            for eps in epsilons:
                routes = Routes(n, p, eps, names)
                tallies = {r: Tally.empty() for r in names}
                for seed in range(seeds):
                    pick = np.random.default_rng(20_000 + seed).choice(N, n, replace=False)
                    Y = X[np.sort(pick)] if n < N else X
                    for r in names:
                        out, warned = release(routes, r, Y, seed)
                        tallies[r].add(out, truth, warned)
                for r in names:
                    rows.append([name, str(n), f"{eps:g}", r, *tallies[r].row()])
    print(markdown(rows))
    print(
        "\nsinT med: median sinTheta of the top-2 subspace; dirs ok: share under 0.5; "
        "PVE err: largest |error| over PC1-3; PVE ok: share within 0.10; cover: share of "
        "rows inside the frame; width: the wider axis over the central 99% range; framed: "
        "share of releases with a score plot (a fit may leave it out, saying why); "
        "warned: AccuracyWarning/PrivacyWarning or refused; silent wrong: a picture "
        "wrong (direction, PVE or frame) and no warning; dirs silent: directions "
        "wrong (sinT >= 0.5) and no warning; dirs ok warned: directions right and "
        "warned (a false alarm as far as the directions go)."
    )
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
