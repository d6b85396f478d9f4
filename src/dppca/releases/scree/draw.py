"""The draws of a scree release after its directions, in their fixed order.

:meth:`ScreePlan.draw` runs them: the pairings, the clip scan (unless the
clip level is public), the joint moments, then each extra method. They read
the plan through :class:`DrawSettings`, so this module does not import the
plan's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from ...core.data_checks import apply_bounds
from ...core.tables import complete_rows
from ...privacy.cost import PrivacyCost
from ...privacy.mechanisms import random_pairing
from ...privacy.quantiles import ladder_quantile
from ..directions.plan import DirectionsPlan
from ..engine import CheckedData
from ..forecast import Forecast
from .checks import scree_problems
from .estimators import _PAIRINGS, EXTRA_METHODS, _moment_release, _mono
from .result import ScreeResult
from .statistics import _paired_differences


class DrawSettings(Protocol):
    """The public settings the draws read: what :class:`ScreePlan` fixed before any data.

    The plan satisfies it; the draws depend on these settings only, not on
    how the plan priced them.
    """

    @property
    def n(self) -> int: ...
    @property
    def k(self) -> int: ...
    @property
    def methods(self) -> tuple[str, ...]: ...
    @property
    def controls(self) -> Mapping[str, Any]: ...
    @property
    def pairing(self) -> str: ...
    @property
    def calibration(self) -> str: ...
    @property
    def box(self) -> Any: ...
    @property
    def directions(self) -> DirectionsPlan | None: ...
    @property
    def mono(self) -> bool: ...
    @property
    def compare(self) -> bool: ...
    @property
    def noise(self) -> str: ...
    @property
    def eps_scan(self) -> float: ...
    @property
    def eps_m(self) -> float: ...
    @property
    def delta_m(self) -> float: ...
    @property
    def ladder(self) -> NDArray[np.float64]: ...
    @property
    def scan_level(self) -> float: ...
    @property
    def cost(self) -> PrivacyCost: ...
    @property
    def forecast(self) -> Forecast: ...


def run_scree(plan: DrawSettings, data: CheckedData, rng: np.random.Generator) -> ScreeResult:
    """Draw every part of a priced, paid-for scree plan; build the result.

    The directions first (unless given), then the pairings, the clip scan,
    the joint moments and each extra method, all from ``rng``.
    """
    given, release = data.extra if data.extra is not None else (None, None)
    values = data.values
    if plan.box is not None:
        values = apply_bounds(values, plan.box)
    vectors = given
    source = "private release" if release is not None else "public"
    if vectors is None:
        assert plan.directions is not None  # a plan without given directions releases them
        release = plan.directions.draw(CheckedData(values, data.variables), rng)
        vectors = np.array(release.directions)
        source = "private"
    shift = None if plan.box is None else 0.5 * (plan.box[0] + plan.box[1])
    draws = _draw(values, vectors, plan, shift, rng)
    nonprivate = _nonprivate(values, plan.k) if plan.compare else (None, None)
    return ScreeResult(
        methods=plan.methods,
        values=draws.values,
        trace=draws.trace,
        directions=np.ascontiguousarray(vectors),
        directions_source=source,
        directions_release=release,
        n=plan.n,
        n_pairs=plan.n // 2,
        variables=data.variables,
        cost=plan.cost,
        calibration=plan.calibration,
        mono=plan.mono,
        nonprivate_values=nonprivate[0],
        nonprivate_trace=nonprivate[1],
        noise_sd=draws.noise_sd,
        trace_sd=draws.trace_sd,
        clip_level=draws.clip,
        bounds=None if plan.box is None else np.column_stack(plan.box),
        forecast=plan.forecast,
        unpooled_values=draws.unpooled if plan.mono else None,
        problems=draws.problems,
    )


class _Draws(NamedTuple):
    """What :func:`_draw` releases: every method's variances and the total variance."""

    values: NDArray[np.float64]  # (n_methods, k), after the optional monotone fit
    noise_sd: NDArray[np.float64]  # (n_methods, k)
    trace: float
    trace_sd: float
    clip: float
    unpooled: NDArray[np.float64]  # (n_methods, k), before the monotone fit
    problems: tuple[str, ...]  # why the values are not estimates (scree/checks.py)


def _draw(
    data: NDArray[np.float64],
    vectors: NDArray[np.float64],
    plan: DrawSettings,
    shift: NDArray[np.float64] | None,
    rng: np.random.Generator,
) -> _Draws:
    """Run the plan's parts after the directions, in their fixed order.

    The pairings first, then the clip scan (unless the clip level is public),
    the joint moments, and each extra method in the order asked for. ``data``
    are already clipped to any public bounds, whose centre is ``shift``.
    """
    orders = _pairings(data.shape[0], plan.pairing, rng)
    z = _paired_differences(data, orders[0])
    # missing="zero": a coordinate missing in either row is 0 in the difference, for
    # the clip scan and the extra methods (finite rows never give NaN here)
    z = np.where(np.isnan(z), 0.0, z)
    clip = _clip_level(z, plan, rng)
    moments, trace, trace_sd = _moment_release(data, orders, vectors, clip, plan, shift, rng)
    with np.errstate(over="ignore", invalid="ignore"):
        w = np.nan_to_num((z @ vectors) ** 2, nan=np.inf)
    k = vectors.shape[1]
    rows, sds = [], []
    for name in plan.methods:
        if name == "clipped":
            est, sd = moments, trace_sd
        else:
            est, sd = EXTRA_METHODS[name].run(
                w,
                plan.controls[name],
                clip=clip,
                eps=plan.eps_m,
                delta=plan.delta_m,
                calibration=plan.calibration,
                rng=rng,
            )
        rows.append(est)
        sds.append(np.full(k, sd))
    raw = np.vstack(rows)
    values = np.vstack([_mono(r) for r in raw]) if plan.mono else raw
    scanned = "clipped" not in plan.controls or plan.controls["clipped"].clip is None
    problems = scree_problems(values[0], trace, trace_sd, clip, plan.ladder if scanned else None)
    return _Draws(values, np.vstack(sds), trace, trace_sd, clip, raw, problems)


def _pairings(n: int, rule: str, rng: np.random.Generator) -> list[NDArray[np.int64]]:
    """The row orders the pair moments average over (drawn for ``"all"`` and ``"random"``)."""
    if rule == "consecutive":
        return [np.arange(n, dtype=np.int64)]
    return [random_pairing(n, rng) for _ in range(1 if rule == "all" else _PAIRINGS)]


def _clip_level(z: NDArray[np.float64], plan: DrawSettings, rng: np.random.Generator) -> float:
    """The public clip level, or the pure-DP ladder scan of the squared pair norms."""
    public_clip = plan.controls["clipped"].clip if "clipped" in plan.controls else None
    if public_clip is not None:
        return float(public_clip)
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.nan_to_num(np.einsum("ij,ij->i", z, z), nan=np.inf)
    return ladder_quantile(
        sq,
        plan.ladder,
        q=plan.scan_level,
        eps1=plan.eps_scan / 2,
        eps2=plan.eps_scan / 2,
        rng=rng,
    )


def _nonprivate(data: NDArray[np.float64], k: int) -> tuple[NDArray[np.float64], float]:
    """The top-k sample covariance eigenvalues and the total variance (NOT private).

    From the complete rows only when some cells are missing (``missing="zero"``).
    """
    complete = complete_rows(data)
    if complete is not None:
        data = data[complete]
    p = data.shape[1]
    cov = np.cov(data, rowvar=False).reshape(p, p)
    eig = np.linalg.eigvalsh(cov)[::-1]
    return np.ascontiguousarray(eig[:k]), float(np.trace(cov))
