"""The data-free side of a score release: budget split, cost and forecast.

:func:`plan_score` prices a :func:`~dppca.releases.score.dp_score` call from public
quantities only (n, p, the options, eps and delta); the release runs exactly
this plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...core.types import Accuracy, Calibration, Ties
from ...core.validation import (
    check_accuracy,
    check_bins,
    check_bool,
    check_bounds,
    check_calibration,
    check_components,
    check_delta,
    check_delta_for_n,
    check_eps,
    check_frame,
    check_methods,
    check_positive_float,
    check_positive_int,
    check_real,
    check_split,
    check_ties,
)
from ...privacy.accounting import PrivacyCost, compose, scale_to_tight
from ...privacy.mechanisms import gaussian_sigma, kendall_sensitivity, kendall_sigma
from ..directions import DirectionsPlan, plan_pc_dir
from ..engine import CheckedData, Part, parts_of
from ..forecast import FAILURE_TOLERANCE, Forecast, direction_noise_norm, direction_problem
from ..resolvability import enforce_released
from ..splits import ScoreSplit, resolve_score_split
from .draw import check_score_input, refuse_own_score_directions, run_score
from .frame import _SCALE_SHARE, frame_eps_needed, frame_failure_bound
from .histograms import HISTOGRAM_METHODS, ScoreMethod

__all__ = ["ScorePlan", "ScoreSettings", "plan_score"]

_SPLIT_KEYS = ("directions", "frame", "groups", "histogram")
# The default frame share is the smallest whose failure bound is _FRAME_TARGET,
# between _FRAME_SHARE_MIN and _FRAME_SHARE_MAX of eps.
_FRAME_TARGET = 0.01
_FRAME_SHARE_MIN, _FRAME_SHARE_MAX = 0.1, 0.4


def _with_frame_weight(
    defaults: dict[str, float], used: tuple[str, ...], n: int, eps: float, bound: float
) -> dict[str, float]:
    """Default weights with the frame's share set from its failure bound (public).

    The frame gets the smallest share of eps whose :func:`frame_failure_bound`
    is ``_FRAME_TARGET``, kept between ``_FRAME_SHARE_MIN`` and
    ``_FRAME_SHARE_MAX``; the other parts keep their relative weights.
    """
    share = frame_eps_needed(n, bound, _FRAME_TARGET) / eps
    share = min(max(share, _FRAME_SHARE_MIN), _FRAME_SHARE_MAX)
    others = [key for key in used if key != "frame"]
    total = math.fsum(defaults[key] for key in others)
    out = {key: defaults[key] * (1.0 - share) / total for key in others}
    out["frame"] = share
    return out


def _forecast_score(
    *, n: int, p: int, eps: float, delta: float, eps_f: float, bound: float,
    sigma_dir: float | None, sigma_add: float | None, cells: int, groups: int,
) -> Forecast:  # fmt: skip
    """Data-free forecast of a score release (see :mod:`dppca.releases.forecast`).

    ``frame_failure`` is :func:`frame_failure_bound` for a private frame.
    ``histogram_tv`` predicts the total-variation distance that the ``"add"``
    noise alone puts between released and exact bin probabilities, for rows
    spread evenly over the groups: about ``0.3 * cells * sigma / n_g`` (a
    normal error clipped at zero has mean absolute size about ``0.6 sigma``,
    and total variation is half the summed error).
    """
    quantities: dict[str, float] = {}
    descriptions: dict[str, str] = {}
    problems: list[str] = []
    if sigma_dir is not None:
        norm = direction_noise_norm(p, sigma_dir)
        quantities["direction_noise_norm"] = norm
        descriptions["direction_noise_norm"] = "typical operator norm of the Kendall noise"
        problem = direction_problem(norm)
        if problem is not None:
            problems.append(problem)
    if eps_f > 0:
        fail = frame_failure_bound(n, eps_f, bound)
        quantities["frame_failure"] = fail
        descriptions["frame_failure"] = (
            "bound on the chance that the private frame misses most rows"
        )
        if fail > FAILURE_TOLERANCE:
            problems.append(
                f"the private frame may miss most rows with probability up to {fail:.2g} "
                f"(frame eps {eps_f:.3g} for n={n}); give public bounds or frame=, or "
                "raise eps."
            )
    if sigma_add is not None:
        tv = min(1.0, 0.3 * cells * sigma_add * groups / n)
        quantities["histogram_tv"] = tv
        descriptions["histogram_tv"] = (
            "predicted total-variation error of the add histogram from noise alone"
        )
        if tv > 0.5:
            problems.append(
                f"the histogram noise alone would move about {tv:.0%} of the probability; "
                "use fewer bins, a larger eps or more rows."
            )
    return Forecast(
        "score", n, p, eps, delta, quantities=quantities, descriptions=descriptions,
        problems=tuple(problems),
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class ScoreSettings:
    """The checked options a score release draws with (no data, no budget)."""

    components: tuple[int, int]
    bins: tuple[int, int]
    methods: tuple[str, ...]
    groups_public: bool
    compare: bool
    bound: float
    inflate: float
    calibration: Calibration
    ties: Ties
    accuracy: str
    box: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
    public_frame: tuple[tuple[float, float], tuple[float, float]] | None = None


@dataclass(frozen=True, eq=False)
class ScorePlan:
    """A priced score release: budget split, cost, forecast and settings.

    Built by :func:`plan_score` from public quantities only and run by
    :func:`dppca.releases.engine.execute`; :func:`dp_score` runs exactly this plan.
    """

    shares: Mapping[str, float]
    eps_directions: float
    delta_directions: float
    eps_groups: float
    eps_frame: float
    eps_method: float
    delta_method: float
    cost: PrivacyCost
    forecast: Forecast
    n: int = 0
    p: int = 0
    settings: ScoreSettings | None = None
    directions: DirectionsPlan | None = None
    n_groups: int | None = None
    kind: str = "score"

    @property
    def accuracy(self) -> str:
        """What the executor does with a forecast problem."""
        return "warn" if self.settings is None else self.settings.accuracy

    @property
    def parts(self) -> tuple[Part, ...]:
        """The noise draws, in order: directions, group sizes, frame, histograms."""
        return parts_of(self.cost)

    def check_input(self, X: Any, **inputs: Any) -> CheckedData:
        """Check the table, ``directions`` and ``groups`` once, as :func:`dp_score` does.

        ``inputs`` are ``directions``, ``public_directions``, ``groups`` and
        ``group_labels`` of :func:`dp_score`; they must match the plan.
        """
        return check_score_input(self, X, **inputs)

    def screen(self, data: CheckedData) -> None:
        """Before any noise: refuse "public" directions that are the data's own."""
        refuse_own_score_directions(self, data)

    def review(self, result: Any) -> Any:
        """The check of the directions this release made itself (given ones were judged then)."""
        return enforce_released(result, self.accuracy, "score", own=self.directions is not None)

    def draw(self, data: CheckedData, rng: np.random.Generator) -> Any:
        """Draw the parts in order (see :func:`dppca.releases.score.draw.run_score`)."""
        return run_score(self, data, rng)


def plan_score(
    n: int,
    p: int,
    *,
    eps: float,
    delta: float,
    bins: int | str | tuple[int, int] | None = None,
    components: tuple[int, int] = (1, 2),
    method: ScoreMethod | Sequence[ScoreMethod] = "add",
    directions_given: bool = False,
    groups: int | None = None,
    groups_public: bool = False,
    frame_given: bool = False,
    bounds_given: bool = False,
    split: ScoreSplit | None = None,
    score_range: float = 1e6,
    calibration: Calibration = "analytic",
    inflate: float = 0.2,
    ties: Ties = "zero",
    compare: bool = False,
    frame: tuple[tuple[float, float], tuple[float, float]] | None = None,
    bounds: Any = None,
    variables: tuple[str, ...] | None = None,
    accuracy: Accuracy = "warn",
    allow_large_delta: bool = False,
) -> ScorePlan:
    """Price and forecast a :func:`dp_score` call without any data.

    Parameters are those of :func:`dp_score` that shape the release, with the
    data replaced by its public size ``n`` x ``p`` and the labels by the
    number of groups (None without groups). A public ``frame`` or ``bounds``
    may be given as values (``variables`` name the columns for bounds given
    as a mapping) or, for pricing alone, as ``frame_given``/``bounds_given``.

    Returns
    -------
    ScorePlan
        ``cost`` (what the call records), ``forecast``, ``parts``, ``settings``
        and the sub-plan of its ``directions``; :func:`dppca.releases.engine.execute`
        runs it.

    Examples
    --------
    >>> plan = plan_score(178, 13, eps=1.0, delta=1e-6)
    >>> plan.forecast.ok, round(plan.cost.eps, 6)
    (False, 1.0)
    """
    shares_given = resolve_score_split(split)
    n = check_positive_int(n, "n")
    p = check_positive_int(p, "p")
    eps = check_eps(eps)
    delta = check_delta_for_n(
        check_delta(delta), n, check_bool(allow_large_delta, "allow_large_delta")
    )
    components = check_components(components, p)
    mx, my = check_bins(bins, n)
    methods = check_methods(method, tuple(HISTOGRAM_METHODS))
    calibration = check_calibration(calibration)
    bound = check_positive_float(score_range, "score_range")
    settings = _settings(
        components=components, bins=(mx, my), methods=methods, groups_public=groups_public,
        compare=compare, bound=bound, inflate=inflate, calibration=calibration, ties=ties,
        accuracy=accuracy, bounds=bounds, frame=frame,
        variables=variables if variables is not None else tuple(f"V{j + 1}" for j in range(p)),
    )  # fmt: skip
    frame_given = frame_given or settings.public_frame is not None
    bounds_given = bounds_given or settings.box is not None
    n_groups = 1 if groups is None else check_positive_int(groups, "groups")
    private_groups = groups is not None and not settings.groups_public
    frame_private = not frame_given and not bounds_given
    shares = _shares(
        shares_given, n=n, eps=eps, bound=bound, directions_given=directions_given,
        frame_private=frame_private, private_groups=private_groups,
    )  # fmt: skip
    delta_share = _delta_split(shares, delta)
    parts = _ScoreParts(
        n=n, p=p, eps=eps, components=components, methods=methods, calibration=calibration,
        shares=shares, delta_d=delta_share.get("directions", 0.0),
        delta_m=delta_share["histogram"] / len(methods), n_groups=n_groups, bins=(mx, my),
        directions_given=directions_given, private_groups=private_groups,
        frame_private=frame_private,
    )  # fmt: skip
    t, cost = parts.price(delta)
    eps_d, eps_f, eps_m = parts.eps_of("directions", t), parts.eps_of("frame", t), parts.eps_m(t)
    forecast = _forecast_score(
        n=n, p=p, eps=eps, delta=delta, eps_f=eps_f if frame_private else 0.0, bound=bound,
        sigma_dir=None if directions_given
        else kendall_sigma(n, eps_d, parts.delta_d, calibration),
        sigma_add=gaussian_sigma(math.sqrt(2.0), eps_m, parts.delta_m, calibration)
        if "add" in methods else None,
        cells=mx * my, groups=n_groups,
    )  # fmt: skip
    directions = None if directions_given else plan_pc_dir(
        n, p, max(components), eps=eps_d, delta=parts.delta_d, calibration=calibration,
        ties=settings.ties, accuracy="ignore", allow_large_delta=True,
    )  # fmt: skip
    return ScorePlan(
        MappingProxyType(dict(shares)), eps_d, parts.delta_d, parts.eps_of("groups", t),
        eps_f, eps_m, parts.delta_m, cost, forecast, n, p, settings, directions,
        None if groups is None else n_groups,
    )  # fmt: skip


def _settings(
    *, groups_public: object, compare: object, inflate: object, ties: object,
    accuracy: object, bounds: Any, frame: Any, variables: tuple[str, ...], **checked: Any,
) -> ScoreSettings:  # fmt: skip
    """The draw settings of a score plan; ``checked`` are options already checked."""
    return ScoreSettings(
        groups_public=check_bool(groups_public, "groups_public"),
        compare=check_bool(compare, "compare"), inflate=check_real(inflate, "inflate", low=0.0),
        ties=check_ties(ties), accuracy=check_accuracy(accuracy),
        box=check_bounds(bounds, variables),
        public_frame=None if frame is None else check_frame(frame), **checked,
    )  # fmt: skip


def _shares(
    split: ScoreSplit,
    *,
    n: int,
    eps: float,
    bound: float,
    directions_given: bool,
    frame_private: bool,
    private_groups: bool,
) -> dict[str, float]:
    """The basic eps split over the parts used: defaults, or the caller's weights."""
    used = (
        *(("directions",) if not directions_given else ()),
        *(("frame",) if frame_private else ()),
        *(("groups",) if private_groups else ()),
        "histogram",
    )
    defaults = {"directions": 0.35, "groups": 0.1}
    defaults["histogram"] = 0.45 if private_groups else 0.55
    if frame_private:
        defaults = _with_frame_weight(defaults, used, n, eps, bound)
    return check_split(split.weights(), used, defaults, keys=_SPLIT_KEYS)


def _delta_split(shares: Mapping[str, float], delta: float) -> dict[str, float]:
    """Delta for the directions and the histograms, in proportion to their eps shares."""
    delta_users = [k for k in ("directions", "histogram") if k in shares]
    delta_total = math.fsum(shares[k] for k in delta_users)
    return {k: delta * shares[k] / delta_total for k in delta_users}


@dataclass(frozen=True, eq=False)
class _ScoreParts:
    """The parts of a score release and their costs at a given scaling (internal).

    ``costs(t)`` gives the parts with every eps share of the basic split
    times ``t``, in the release's order: directions, group sizes, frame,
    histograms (method order).
    """

    n: int
    p: int
    eps: float
    components: tuple[int, int]
    methods: tuple[str, ...]
    calibration: Calibration
    shares: Mapping[str, float]
    delta_d: float
    delta_m: float
    n_groups: int
    bins: tuple[int, int]
    directions_given: bool
    private_groups: bool
    frame_private: bool

    @property
    def grid(self) -> str:
        """The histogram grid in words, for the cost records."""
        return f"{self.n_groups} x {self.bins[0]} x {self.bins[1]} cells"

    def eps_of(self, part: str, t: float) -> float:
        """The eps of a part (0 for a part not used) at scaling ``t``."""
        return t * self.eps * self.shares.get(part, 0.0)

    def eps_m(self, t: float) -> float:
        """The eps of each histogram method at scaling ``t``."""
        return t * self.eps * self.shares["histogram"] / len(self.methods)

    def price(self, delta: float) -> tuple[float, PrivacyCost]:
        """The scaling ``t`` and the composed cost; tight with the analytic calibration.

        Analytic: every eps share is scaled by the largest ``t`` whose tight
        total is still (eps, delta). Classic: the basic split, ``t = 1``.
        """
        released = "private score plot"
        if self.calibration == "analytic":
            t, leaves = scale_to_tight(self.costs, self.eps, delta)
            cost = PrivacyCost(
                self.eps, delta, "tight composition (accountant)", released, leaves,
                kind="composed",
            )  # fmt: skip
            return t, cost
        return 1.0, compose(self.costs(1.0), released=released)

    def costs(self, t: float) -> list[PrivacyCost]:
        """Every part's cost with the eps shares times ``t``."""
        parts: list[PrivacyCost] = []
        if not self.directions_given:
            parts.append(self._directions(t))
        if self.private_groups:
            parts.append(self._groups(t))
        if self.frame_private:
            parts.append(self._frame(t))
        parts.extend(self._histograms(t))
        return parts

    def _directions(self, t: float) -> PrivacyCost:
        eps_d, delta_d, p = t * self.eps * self.shares["directions"], self.delta_d, self.p
        return PrivacyCost(
            eps_d, delta_d, mechanism=f"gaussian ({self.calibration})",
            released=f"noisy spherical Kendall matrix ({p} x {p})", kind="gaussian",
            sensitivity=kendall_sensitivity(self.n),
            sigma=kendall_sigma(self.n, eps_d, delta_d, self.calibration),
        )  # fmt: skip

    def _groups(self, t: float) -> PrivacyCost:
        eps_g = t * self.eps * self.shares["groups"]
        return PrivacyCost(
            eps_g, 0.0, "laplace", f"group sizes ({self.n_groups})", kind="laplace",
            sensitivity=2.0, scale=2.0 / eps_g,
        )  # fmt: skip

    def _frame(self, t: float) -> PrivacyCost:
        eps_f = t * self.eps * self.shares["frame"]
        return compose(
            [
                PrivacyCost(eps_f * _SCALE_SHARE, 0.0, "exponential mechanism",
                            "frame scale (median pair difference)", kind="pure"),
                *(
                    PrivacyCost(eps_f * (1 - _SCALE_SHARE) / 2, 0.0,
                                "exponential mechanism", f"frame centre PC{c} (median)",
                                kind="pure")
                    for c in self.components
                ),
            ],
            released="private frame",
        )  # fmt: skip

    def _histograms(self, t: float) -> list[PrivacyCost]:
        eps_m, delta_m, calibration = self.eps_m(t), self.delta_m, self.calibration
        parts: list[PrivacyCost] = []
        for m in self.methods:
            parts.append(
                HISTOGRAM_METHODS[m].cost(
                    m, self.grid, eps=eps_m, delta=delta_m, calibration=calibration
                )
            )
        return parts


# Release files and pickles name the public path, which stays the same.
ScorePlan.__module__ = "dppca.releases.score"
