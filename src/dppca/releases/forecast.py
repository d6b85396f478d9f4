"""Data-free accuracy forecasts: will a private picture be mostly noise?

A forecast is computed from public quantities only (n, p, k, eps, delta, the
budget split, public bounds and options), before any data are read, so
computing, printing or acting on it costs no privacy. It predicts the size of
each part's noise and bounds the chance that a private range search fails, and
lists, in plain sentences, the problems that would make the picture wrong.

Where a prediction needs a property of the data (the ratio of a clip level to
the total variance, the gap between eigenvalues), it says which value it
assumes; the assumptions are the ones of well-behaved (roughly elliptical,
light-tailed) tables, and a heavier-tailed table does worse.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..core.exceptions import AccuracyWarning, InaccurateReleaseError
from ..core.warnings import _user_stacklevel
from .protocol import FrozenPickle

__all__ = [
    "CLIP_RATIO",
    "Findings",
    "Forecast",
    "default_design_lines",
    "direction_noise_norm",
    "direction_problem",
    "em_failure_bound",
    "enforce",
    "estimate_seconds",
    "time_lines",
]

# Assumed ratio of the scree's clip level R^2 to the total variance. The level
# is the upper edge of the factor-2 ladder bin holding the 0.9 quantile of the
# squared norms of pair differences; for Gaussian data that quantile is 1.3 to
# 2.7 times the total variance (p = 50 down to p = 1), so R^2 lies between 1.3
# and 5.4 times it. 3 is a middle value; say so wherever it is used.
CLIP_RATIO = 3.0
# A picture is called accurate when its error is at most these, with about
# 95 % probability (two predicted standard deviations).
PVE_TOLERANCE = 0.10
FAILURE_TOLERANCE = 0.05
# Directions separated by a Kendall eigenvalue gap g move by about (noise norm)
# / g. The eigenvalues add up to 1 and the gap around the plotted directions
# of a real table is seldom above 0.3, so a noise norm above 0.15 moves them by
# sin(theta) of about one half or more. Measured (bench_accuracy.py, 20 seeds,
# eps 0.5 to 2): releases above this limit had median sin(theta) 0.45 to 0.97
# (wine, iris, breast cancer, spiked n = 150 and 500); below it, 0.06 to 0.33,
# except breast cancer at eps 2 (norm 0.09, sin(theta) 0.57: a smaller gap).
DIRECTION_NOISE_LIMIT = 0.15


@dataclass(frozen=True, eq=False)
class Forecast(FrozenPickle):
    """Predicted accuracy of a private release, from public quantities only.

    Attributes
    ----------
    release : str
        ``"directions"``, ``"scree"`` or ``"score"``.
    n, p : int
        Rows and variables (public).
    eps, delta : float
        The release's budget.
    quantities : mapping of str to float
        Predicted noise sizes and failure bounds; see :meth:`to_frame` for a
        description of each.
    problems : tuple of str
        Sentences naming what would make the picture wrong; empty when the
        release is expected to be accurate.
    """

    release: str
    n: int
    p: int
    eps: float
    delta: float
    quantities: Mapping[str, float] = field(default_factory=dict)
    descriptions: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "quantities", MappingProxyType(dict(self.quantities)))
        object.__setattr__(self, "descriptions", MappingProxyType(dict(self.descriptions)))

    @property
    def ok(self) -> bool:
        """True when no problem is forecast."""
        return not self.problems

    def to_frame(self) -> Any:
        """A table: one row per quantity, with its value and what it means."""
        import pandas as pd

        rows = [
            {"quantity": k, "value": v, "meaning": self.descriptions.get(k, "")}
            for k, v in self.quantities.items()
        ]
        return pd.DataFrame(rows, columns=["quantity", "value", "meaning"])

    def summary(self) -> str:
        """A few lines of text for a terminal or a page."""
        head = (
            f"forecast for the {self.release} release (n={self.n}, p={self.p}, "
            f"eps={self.eps:g}, delta={self.delta:g}): "
        )
        lines = [head + ("looks accurate" if self.ok else "likely inaccurate")]
        for key, value in self.quantities.items():
            meaning = self.descriptions.get(key, "")
            lines.append(f"  {key} = {value:.3g}" + (f"  ({meaning})" if meaning else ""))
        lines.extend(f"  problem: {text}" for text in self.problems)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


@dataclass(eq=False)
class Findings:
    """A forecast's quantities, each with its description, and problems as found.

    Forecast functions gather them here and end with :meth:`forecast`.
    """

    quantities: dict[str, float] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, key: str, value: float, description: str) -> None:
        """Record a predicted quantity and what it means."""
        self.quantities[key] = value
        self.descriptions[key] = description

    def forecast(self, release: str, n: int, p: int, eps: float, delta: float) -> Forecast:
        """The forecast of ``release`` with what was found."""
        return Forecast(
            release,
            n,
            p,
            eps,
            delta,
            quantities=self.quantities,
            descriptions=self.descriptions,
            problems=tuple(self.problems),
        )


def direction_noise_norm(p: int, sigma: float) -> float:
    """Typical operator norm of the symmetric Kendall noise, ``sigma sqrt(2 p)``.

    The noise has N(0, sigma^2 / 2) entries off the diagonal; a symmetric
    matrix with such entries has largest eigenvalues near ``2 (sigma /
    sqrt(2)) sqrt(p)``. By the Davis-Kahan theorem, directions move by about
    this norm over the gap between the Kendall eigenvalues they separate, and
    those eigenvalues add up to 1.
    """
    return sigma * math.sqrt(2.0 * p)


def direction_problem(norm: float) -> str | None:
    """The forecast's sentence when the direction noise ``norm`` is above the limit."""
    if norm <= DIRECTION_NOISE_LIMIT:
        return None
    return (
        f"the Kendall noise has operator norm about {norm:.2g}, so directions whose "
        "Kendall eigenvalues differ by less than about twice that, as those of most real "
        "tables do, would be mostly noise; raise eps, use more rows, or reuse directions "
        "released with a larger share."
    )


def em_failure_bound(candidates: int, n: int, eps: float, margin: float = 0.25) -> float:
    """Bound on the chance that an exponential-mechanism quantile lands far off.

    A candidate whose rank is ``t`` further from the target than the best
    candidate's is chosen with probability at most ``exp(-eps t / 2)``; with
    ``candidates`` of them and a required margin of ``margin n`` ranks, the
    chance of any far candidate is at most ``candidates exp(-eps margin n / 2)``.
    """
    return min(1.0, candidates * math.exp(-eps * margin * n / 2.0))


def enforce(forecast: Forecast, accuracy: str) -> None:
    """Act on a forecast before any data are read: warn, raise or do nothing.

    Raises
    ------
    InaccurateReleaseError
        With ``accuracy="error"`` and a forecast problem.

    Warns
    -----
    AccuracyWarning
        With ``accuracy="warn"`` and a forecast problem.
    """
    if forecast.ok or accuracy == "ignore":
        return
    text = (
        f"the private {forecast.release} release is forecast to be inaccurate (n={forecast.n}, "
        f"eps={forecast.eps:g}): " + " ".join(forecast.problems)
    )
    if accuracy == "error":
        raise InaccurateReleaseError(
            text + " Nothing was spent. Pass accuracy='warn' to release anyway."
        )
    warnings.warn(text, AccuracyWarning, stacklevel=_user_stacklevel())


# --------------------------------------------------------------------------- time

#: CPU-seconds per unit of work, one thread, measured on a loaded 2-core
#: machine (Haswell, OpenBLAS) with benchmarks/bench_speed.py and the kernels'
#: own timings; a machine of its own is faster. The exact spherical Kendall
#: matrix: per n^2 p (the Gram tiles) and per p^2 (the p x p work around them).
_SECONDS = MappingProxyType(
    {
        "kendall_exact": 1.3e-10,
        "kendall_exact_p2": 7e-8,
        "kendall_balanced": 2.5e-8,  # per n m p (explicit differences)
        "tau_exact": 8e-9,  # per n log2(n) p (p - 1) / 2 (compiled counts)
        "tau_balanced": 1e-8,  # per n m p
        "moments": 6e-10,  # per n^2 / 2 (p + k): the scree's all-pairs moments
        "noise_vetted": 2.5e-5,  # per value of the vetted (unseeded) sampler
        "noise_numpy": 1e-7,  # per value of numpy's
        "eigen": 1e-10,  # per p^3 (partial solves; Lanczos is faster, not slower)
        "overhead": 0.3,  # imports, checks and the result
    }
)
#: Above this many estimated CPU-s a plan on the exact design is told about
#: the balanced one (``--design balanced``), where the release offers it.
SUGGEST_BALANCED_SECONDS = 60.0


def _directions_seconds(plan: Any, *, vetted: bool) -> float:
    """CPU-s of a direction release (kernel, noise, eigensolve, post-release check)."""
    from .resolvability import CHECK_MAX_P, replicates_for

    n, p = int(plan.n), int(plan.p)
    m = int(getattr(plan, "m", None) or 20)
    tau = getattr(plan, "estimator", "kendall") == "tau"
    if getattr(plan, "design", "exact") == "balanced":
        kernel = _SECONDS["tau_balanced" if tau else "kendall_balanced"] * n * m * p
        kernel += _SECONDS["kendall_exact_p2"] * p * p
    elif tau:
        kernel = _SECONDS["tau_exact"] * n * math.log2(max(2, n)) * p * (p - 1) / 2
    else:
        kernel = _SECONDS["kendall_exact"] * n * n * p + _SECONDS["kendall_exact_p2"] * p * p
    values = p * (p + 1) / 2
    noise = values * _SECONDS["noise_vetted" if vetted else "noise_numpy"]
    eigen = _SECONDS["eigen"] * p**3
    check = 0.0
    if p <= CHECK_MAX_P:
        check = replicates_for(p) * (eigen + values * _SECONDS["noise_numpy"])
    return kernel + noise + eigen + check


def estimate_seconds(plan: Any, *, vetted: bool | None = None) -> float:
    """A data-free estimate of the CPU-seconds a release plan will take (one thread).

    Reads the plan's public settings only (n, p, k, the design, the estimator,
    the pairing): a cost model fitted to the kernels' measured times (see
    ``_SECONDS``). ``vetted`` says whether the noise comes from the vetted
    sampler (an unseeded release with OpenDP installed; the default assumes it
    when OpenDP can be imported). It is an order of magnitude, not a promise:
    the machine's speed and load move it by a factor of two or more.
    """
    if vetted is None:
        import importlib.util

        vetted = importlib.util.find_spec("opendp") is not None
    inner = getattr(plan, "inner", None)  # a plan wrapped with private scales
    if inner is not None:
        plan = inner
    kind = getattr(plan, "kind", "")
    total = _SECONDS["overhead"]
    if kind in ("directions",):
        return total + _directions_seconds(plan, vetted=vetted)
    if kind == "report":
        for _, part in plan.plans:
            total += estimate_seconds(part, vetted=vetted) - _SECONDS["overhead"]
        return total + 2.0  # the figures and the page
    directions = getattr(plan, "directions", None)
    if directions is not None:
        total += _directions_seconds(directions, vetted=vetted)
    if kind == "scree" and getattr(plan, "pairing", "all") == "all":
        n, p = int(plan.n), int(plan.p)
        k = int(getattr(plan, "k", 0) or p)
        total += _SECONDS["moments"] * n * n / 2 * (p + k)
    return total


def _format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{max(seconds, 0.1):.2g} s"
    if seconds < 3600:
        return f"{seconds / 60:.2g} min"
    return f"{seconds / 3600:.2g} h"


def time_lines(plan: Any, *, vetted: bool | None = None, named: bool = False) -> tuple[str, ...]:
    """What a preview or ``--dry-run`` says about time: the estimate and, if long, a way out.

    ``named``: the caller chose the design (no line calls it the default).

    The balanced design is suggested when the plan (or its direction part)
    uses the exact design, the estimate exceeds :data:`SUGGEST_BALANCED_SECONDS`
    and the balanced design would take less than half as long.
    """
    seconds = estimate_seconds(plan, vetted=vetted)
    lines = [
        f"estimated time: about {_format_seconds(seconds)} of CPU (a data-free estimate "
        "from n, p and the settings; the machine's speed and load change it)"
    ]
    plan = getattr(plan, "inner", None) or plan
    lines += default_design_lines(plan, vetted=vetted, named=named)
    if seconds > SUGGEST_BALANCED_SECONDS and getattr(plan, "kind", "") in (
        "directions",
        "loading",
    ):
        part = plan if plan.kind == "directions" else plan.directions
        if getattr(part, "design", "exact") == "exact":
            balanced = part.with_design("balanced")
            faster = estimate_seconds(balanced, vetted=vetted)
            if faster < seconds / 2:
                lines.append(
                    f"the balanced design (--design balanced, design='balanced') would take "
                    f"about {_format_seconds(faster)}, at the same privacy cost"
                )
    return tuple(lines)


def default_design_lines(
    plan: Any, *, vetted: bool | None = None, named: bool = False
) -> list[str]:
    """The line saying the directions use the balanced design by default, and the exact price.

    Said when the plan's direction part uses the balanced design where the
    rule :func:`dppca.kernels.kendall.default_design` would pick it at this
    n and p, so that a caller who relied on the default learns the choice and
    the way back; never when the caller ``named`` the design.
    """
    if named:
        return []

    from ..kernels.kendall import BALANCED_DEFAULT_WORK, default_design

    kind = getattr(plan, "kind", "")
    if kind in ("report", "pca"):
        part = dict(plan.plans if kind == "report" else plan.steps).get("directions")
    else:
        part = plan if kind == "directions" else getattr(plan, "directions", None)
    part = getattr(part, "inner", None) or part
    if part is None or getattr(part, "design", "exact") != "balanced":
        return []
    n, p = int(part.n), int(part.p)
    if default_design(n, p) != "balanced":
        return []
    exact = estimate_seconds(part.with_design("exact"), vetted=vetted)
    return [
        f"the directions use the balanced design (the default above n (n - 1) / 2 * p = "
        f"{BALANCED_DEFAULT_WORK:.0e}; benchmarks/bench_design.py measures its cost in "
        f"accuracy); the exact one (--design exact, design='exact') would "
        f"take about {_format_seconds(exact)}"
    ]
