"""Less noise for the same guarantee: sigma, tight totals and the hardened samplers.

1. sigma_K of the Kendall release at the same (eps, delta), from the formulas:
   the classic calibration at the seed's sensitivity 4/n (version 0.1's
   default), the analytic calibration at 4/n, and the analytic calibration at
   the tight sensitivity 2 sqrt(2)/n; ratios to the classic one.
2. The total privacy cost of the app's default workflow (directions, scree,
   score at the app's suggested shares of its default budget, on gau) and of
   ``dp_score`` at its defaults, composed by basic composition and by the
   tight accountant (``dppca.tight_total`` at the budget's delta). Every
   part records its noise (``kind``) except parallel compositions and the
   sparse histogram, which count as generic (eps, delta) parts.
3. Accuracy of the private directions at the same (eps, delta): the noisy
   Kendall matrix of gau and wine with the old sigma (classic, 4/n) and the new
   one (analytic, 2 sqrt(2)/n), the same noise draws scaled; median over
   ``--seeds`` of the subspace error ``||P - P_hat||_F / sqrt(2)`` of the top 2
   eigenvectors (P of the noiseless Kendall matrix): 0 is exact, sqrt(2) means
   orthogonal planes, about 1 is what a random plane gives.
4. Time of one unseeded (OpenDP, hardened) and one seeded (numpy) draw of the
   noise of a p = 50 Kendall matrix and of a 1000-cell histogram, and their
   ratio, measured in this run (best of ``--repeat``).
5. Shares re-derived for the tight total: ``dp_scree`` (k = 3) and ``dp_score``
   at their defaults on gau and wine at (eps, 1e-6), with the basic split
   (every share as the weights give it; the accountant then proves less than
   eps) and with the re-derived one (every eps share times the factor t whose
   tight total is eps), the same seeds. The tight total of each, the factor
   t, the noise sd of the scree's joint release and of the score histogram
   (relative to the basic split), and medians over ``--gain-seeds`` of: the
   largest PVE error (PVE of the total along the released directions against
   the sample values along them), the subspace error of the scree's and the
   score's private top-2 directions (as in 3, against the noiseless Kendall
   matrix) and the total-variation error of the score histogram.

Run:  python benchmarks/bench_privacy_gain.py [--repeat 5] [--seeds 50] [--gain-seeds 30]
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

from dppca import dp_score, dp_scree, spherical_kendall
from dppca.app.state import AppState
from dppca.core.exceptions import AccuracyWarning
from dppca.core.validation import HardenedGenerator
from dppca.datasets import load_gau, load_wine
from dppca.privacy.composition import _tight_eps
from dppca.privacy.cost import basic_total
from dppca.privacy.mechanisms import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_noise,
    gaussian_sigma,
    laplace_noise,
    symmetric_gaussian_noise,
)
from dppca.privacy.totals import tight_total
from dppca.releases.scree.plan import plan_scree


def sigma_table(delta: float) -> None:
    print(f"1. sigma_K at delta={delta:g}: ratios to the classic calibration at 4/n")
    print(
        f"{'n':>6} {'eps':>5} {'classic 4/n':>12} {'analytic 4/n':>13} "
        f"{'analytic 2sqrt2/n':>18} {'ratio a':>8} {'ratio b':>8}"
    )
    for n in (200, 1000, 5000):
        for eps in (0.5, 1.0, 2.0, 8.0):
            old = classic_gaussian_sigma(4.0 / n, eps, delta)
            mid = analytic_gaussian_sigma(4.0 / n, eps, delta)
            new = analytic_gaussian_sigma(2.0 * math.sqrt(2.0) / n, eps, delta)
            print(
                f"{n:>6} {eps:>5g} {old:>12.4g} {mid:>13.4g} {new:>18.4g} "
                f"{mid / old:>8.3f} {new / old:>8.3f}"
            )
    print(
        "   (at the same calibration the sensitivity alone gives 2 sqrt(2)/4 = "
        f"{2 * math.sqrt(2) / 4:.4f})\n"
    )


def _row(name: str, costs, delta: float) -> None:
    leaves = [leaf for c in costs for leaf in c.leaves()]
    kinds = sum(leaf.kind is not None for leaf in leaves)
    eps_b, delta_b = basic_total(costs)
    _tight_eps.cache_clear()  # time the accountant, not the cache
    start = time.perf_counter()
    eps_t, _ = tight_total(costs, delta)
    took = time.perf_counter() - start
    print(
        f"{name:<34} {len(leaves):>5} {kinds:>6} {eps_b:>8.4f} {delta_b:>10.3g} "
        f"{eps_t:>8.4f} {delta:>10.3g} {eps_t / eps_b:>6.3f} {took:>7.3f}"
    )


def totals_table(seed: int) -> None:
    print("2. totals: basic composition vs tight accountant (at the budget's delta)")
    print(
        f"{'workflow':<34} {'parts':>5} {'kinds':>6} {'eps basic':>8} {'delta':>10} "
        f"{'eps tight':>8} {'delta':>10} {'ratio':>6} {'time s':>7}"
    )
    state = AppState(random_state=np.random.default_rng(seed))
    state.load_bundled("gau")
    for kind in ("directions", "scree", "score"):
        eps, delta = state.suggested(kind)
        state.release(kind, eps=eps, delta=delta)
    budget = state.budget
    ledger = budget.ledger
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        res = dp_score(load_gau(), eps=1.0, delta=1e-5, random_state=seed)
    app = [leaf for c in ledger for leaf in c.leaves()]
    _row("app defaults, gau", app, budget.delta)
    _row("dp_score defaults", list(res.cost.leaves()), 1e-5)
    charged = basic_total(ledger)
    print(
        f"   app: budget ({budget.eps:g}, {budget.delta:g}), shares of eps and delta "
        f"directions 0.4, scree 0.3, score 0.3 (charged {charged[0]:.4f}); dp_score at "
        "(1, 1e-5)."
    )
    print(
        "   eps basic = the parts' own claims added up (each release's parts are scaled so "
        "that its tight total is what it is charged);"
    )
    print(
        "   kinds = parts that record their noise (the others count as generic "
        "(eps, delta) parts).\n"
    )


def _projector(matrix, k: int):
    _, vectors = np.linalg.eigh(matrix)
    top = vectors[:, -k:]
    return top @ top.T


def accuracy_table(seeds: int, k: int = 2) -> None:
    print(f"3. directions: median subspace error of the top {k} over {seeds} draws")
    print(
        f"{'data':<6} {'n':>5} {'eps':>5} {'old sigma':>10} {'new sigma':>10} "
        f"{'old err':>8} {'new err':>8}"
    )
    for name, loader in (("gau", load_gau), ("wine", load_wine)):
        X = np.asarray(loader(), dtype=np.float64)
        n, p = X.shape
        K = spherical_kendall(X)
        P = _projector(K, k)
        for eps in (0.5, 1.0, 4.0):
            delta = 1e-5
            old = classic_gaussian_sigma(4.0 / n, eps, delta)
            new = analytic_gaussian_sigma(2.0 * math.sqrt(2.0) / n, eps, delta)
            errs = {old: [], new: []}
            rng = np.random.default_rng(0)
            for _ in range(seeds):
                unit = symmetric_gaussian_noise(p, 1.0, rng)
                for sigma in (old, new):
                    diff = _projector(K + sigma * unit, k) - P
                    errs[sigma].append(np.linalg.norm(diff) / math.sqrt(2.0))
            print(
                f"{name:<6} {n:>5} {eps:>5g} {old:>10.3g} {new:>10.3g} "
                f"{np.median(errs[old]):>8.3f} {np.median(errs[new]):>8.3f}"
            )
    print()


def best(fn, repeat: int) -> float:
    out = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - start)
    return out


def sampler_table(repeat: int) -> None:
    print("4. noise samplers: hardened (OpenDP, unseeded) vs numpy (seeded), best of", repeat)
    matrix = np.eye(50)
    counts = np.arange(1000.0)
    cases = {
        "Kendall p=50 (1275 Gaussians)": lambda g: symmetric_gaussian_noise(
            50, 1e-3, g, value=matrix
        ),
        "histogram 1000 cells, Gaussian": lambda g: gaussian_noise(counts, 3.0, g),
        "histogram 1000 cells, Laplace": lambda g: laplace_noise(counts, 3.0, g),
    }
    print(f"{'draw':<32} {'numpy s':>10} {'OpenDP s':>10} {'ratio':>8}")
    for name, fn in cases.items():
        t_np = best(lambda fn=fn: fn(np.random.default_rng(0)), repeat)
        t_od = best(lambda fn=fn: fn(HardenedGenerator()), repeat)
        print(f"{name:<32} {t_np:>10.2e} {t_od:>10.2e} {t_od / t_np:>8.0f}")


def _basic_split(build, eps, delta):
    """Stand-in for scale_to_tight that keeps the basic split (t = 1)."""
    return 1.0, tuple(build(1.0))


def _gain_runs(frame, eps: float, seeds: int, basic: bool):
    from dppca.releases.score import costs as score_costs  # where the score plan calls it
    from dppca.releases.score.plan import plan_score
    from dppca.releases.scree import budget as scree_budget  # where the scree plan calls it

    saved = scree_budget.scale_to_tight, score_costs.scale_to_tight
    if basic:
        scree_budget.scale_to_tight = score_costs.scale_to_tight = _basic_split
    try:
        x = np.asarray(frame, dtype=np.float64)
        cov = np.cov(x, rowvar=False)
        P = _projector(spherical_kendall(x), 2)
        rows = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AccuracyWarning)
            for seed in range(seeds):
                sc = dp_scree(frame, 3, eps=eps, delta=1e-6, random_state=seed)
                v = np.asarray(sc.directions)
                truth = np.einsum("jl,jk,kl->l", v, cov, v) / np.trace(cov)
                pve = float(np.max(np.abs(np.asarray(sc.pve_total) - truth)))
                sub = np.linalg.norm(v[:, :2] @ v[:, :2].T - P) / math.sqrt(2.0)
                so = dp_score(frame, eps=eps, delta=1e-6, random_state=seed, compare=True)
                w = np.asarray(so.directions)
                sub_s = np.linalg.norm(w @ w.T - P) / math.sqrt(2.0)
                tv = 0.5 * float(np.abs(so.probs["add"] - so.nonprivate.prob).sum())
                rows.append((pve, sub, sub_s, tv))
        n, p = x.shape
        plan_sc = plan_scree(n, p, 3, eps=eps, delta=1e-6)
        plan_so = plan_score(n, p, eps=eps, delta=1e-6)
        totals = (
            tight_total(plan_sc.cost.leaves(), 1e-6)[0],
            tight_total(plan_so.cost.leaves(), 1e-6)[0],
            plan_sc.eps_dir / (0.5 * eps),
            plan_sc.forecast.quantities["trace_noise_relative"],
            gaussian_sigma(math.sqrt(2.0), plan_so.eps_method, plan_so.delta_method),
        )
    finally:
        scree_budget.scale_to_tight, score_costs.scale_to_tight = saved
    return totals, np.median(np.array(rows), axis=0)


def gain_table(seeds: int) -> None:
    print(f"5. re-derived shares: basic vs tight split, same seeds, medians over {seeds}")
    print(
        f"{'data':<5} {'eps':>4} {'split':<6} {'scree tight':>11} {'score tight':>11} "
        f"{'t':>6} {'joint sd':>8} {'hist sd':>8} {'PVE err':>8} {'scree sub':>9} "
        f"{'score sub':>9} {'hist TV':>8}"
    )
    for name, loader in (("gau", load_gau), ("wine", load_wine)):
        frame = loader()
        for eps in (0.5, 1.0, 2.0):
            ref = None
            for label, basic in (("basic", True), ("tight", False)):
                (t_scree, t_score, t, joint_sd, hist_sd), med = _gain_runs(
                    frame, eps, seeds, basic
                )
                if ref is None:
                    ref = (joint_sd, hist_sd)
                print(
                    f"{name:<5} {eps:>4g} {label:<6} {t_scree:>11.4f} {t_score:>11.4f} "
                    f"{t:>6.3f} {joint_sd / ref[0]:>8.3f} {hist_sd / ref[1]:>8.3f} "
                    f"{med[0]:>8.4f} {med[1]:>9.4f} {med[2]:>9.4f} {med[3]:>8.4f}"
                )
    print("   t: eps of the scree's directions over their basic share; sd columns: noise sd")
    print("   of the scree's joint release (per unit clip level) and of each histogram count,")
    print("   relative to the basic split.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--gain-seeds", type=int, default=30)
    args = parser.parse_args()
    sigma_table(1e-5)
    totals_table(args.seed)
    accuracy_table(args.seeds)
    gain_table(args.gain_seeds)
    sampler_table(args.repeat)


if __name__ == "__main__":
    main()
