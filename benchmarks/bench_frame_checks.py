"""Do standalone ``dp_score`` frames warn when they are wrong, and only then?

Tables: n rows of four Gaussian columns with unequal sds (1, 3, 0.5, 2) and a
fixed correlation, then every cell shifted by ``shift`` (0, 1e3, 1e4, 1e5):
the scores sit far from zero, where the private frame's centre ladder is
coarse. Each call is ``dp_score`` with its defaults (private frame, directions
released in the call) and ``compare=True`` for the evaluation only.

Per axis, the frame's width is divided by the central 99 % range (0.005 to
0.995 quantiles) of the true scores on the released directions (NON-private,
computed here to judge the frame). A frame is "wrong" when an axis is more
than 10 times too wide or too narrow; "right" when both axes are within 3x.
The script prints, per (shift, n, eps): how many calls warned about the frame
(an AccuracyWarning, before or after the release, whose text names the
frame; at these n the directions' own warnings fire too, and they say
nothing about the frame), how many wrong frames warned so and how many were
silently wrong (no frame warning; "mute" counts those with no warning at
all), and how many right frames got a frame warning.

``--public`` passes fixed public directions instead (orthonormal, drawn once
from a fixed seed, not from the data): no directions are released, so no
directions' warning fires and the frame gets more of eps.

Run:  python benchmarks/bench_frame_checks.py [--seeds 20] [--n 150 300 500]
      [--eps 0.5 1] [--shift 0 1e3 1e4 1e5] [--public]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from dppca import dp_score
from dppca.core.exceptions import AccuracyWarning

SDS = np.array([1.0, 3.0, 0.5, 2.0])


def table(n: int, shift: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(1000 + seed)
    corr = np.array(
        [[1.0, 0.6, 0.3, 0.0], [0.6, 1.0, 0.2, 0.1], [0.3, 0.2, 1.0, 0.4], [0.0, 0.1, 0.4, 1.0]]
    )
    cov = corr * np.outer(SDS, SDS)
    return rng.multivariate_normal(np.zeros(4), cov, size=n) + shift


def ratios(result) -> np.ndarray:
    s = np.asarray(result.nonprivate.scores)
    out = np.empty(2)
    for a, lim in enumerate((result.xlim, result.ylim)):
        lo, hi = np.quantile(s[:, a], [0.005, 0.995])
        out[a] = (lim[1] - lim[0]) / max(hi - lo, 1e-300)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--n", type=int, nargs="+", default=[150, 300, 500])
    parser.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0])
    parser.add_argument("--shift", type=float, nargs="+", default=[0.0, 1e3, 1e4, 1e5])
    parser.add_argument("--public", action="store_true", help="fixed public directions")
    args = parser.parse_args()
    kwargs = {}
    if args.public:
        q = np.linalg.qr(np.random.default_rng(7).normal(size=(4, 2)))[0]
        kwargs = {"directions": q}
    route = "public directions" if args.public else "directions released in the call"
    print(f"dp_score frames, {args.seeds} seeds per row, delta 1e-6, {route}")
    print(
        f"{'shift':>6} {'n':>4} {'eps':>4}  {'warned':>6}  {'wrong':>5} {'wrong+warned':>12} "
        f"{'silent':>6} {'mute':>4}  {'right':>5} {'right+warned':>12}  {'max ratio':>9}"
    )
    totals = np.zeros(6, dtype=int)
    for shift in args.shift:
        for n in args.n:
            for eps in args.eps:
                warned = wrong = loud = mute = right = right_loud = 0
                top = 0.0
                for seed in range(args.seeds):
                    X = table(n, shift, seed)
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        res = dp_score(
                            X, eps=eps, delta=1e-6, compare=True, random_state=seed, **kwargs
                        )
                    acc = [str(c.message) for c in caught if c.category is AccuracyWarning]
                    w = any("frame" in text for text in acc)
                    r = ratios(res)
                    top = max(top, float(r.max()))
                    bad = bool(((r > 10.0) | (r < 0.1)).any())
                    good = bool(((r <= 3.0) & (r >= 1 / 3)).all())
                    warned += w
                    wrong += bad
                    loud += bad and w
                    mute += bad and not acc
                    right += good
                    right_loud += good and w
                totals += [wrong, wrong - loud, right, right_loud, warned, mute]
                print(
                    f"{shift:>6g} {n:>4} {eps:>4g}  {warned:>6}  {wrong:>5} {loud:>12} "
                    f"{wrong - loud:>6} {mute:>4}  {right:>5} {right_loud:>12}  {top:>9.3g}"
                )
    print(
        f"total: {totals[0]} wrong, {totals[1]} silently wrong; {totals[2]} right, "
        f"{totals[3]} of them warned; {totals[4]} frame warnings in all; "
        f"{totals[5]} wrong with no warning at all"
    )


if __name__ == "__main__":
    main()
