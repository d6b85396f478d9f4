"""The data-free plan of a scree release: budget split, cost and accuracy forecast."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ...core.types import Calibration, Ties
from ...core.validation import (
    check_accuracy,
    check_bool,
    check_bounds,
    check_calibration,
    check_choice,
    check_data,
    check_delta,
    check_delta_for_n,
    check_eps,
    check_k,
    check_positive_int,
    check_ties,
)
from ...kernels.pair_moments import all_pairs_pay, moment_sensitivity
from ...privacy.accounting import PrivacyCost, compose, scale_to_tight
from ...privacy.mechanisms import gaussian_sigma, kendall_sensitivity, kendall_sigma
from ..directions import (
    DirectionsPlan,
    plan_pc_dir,
    refuse_own_directions,
    resolve_directions,
)
from ..engine import CheckedData, Part, parts_of
from ..forecast import (
    CLIP_RATIO,
    FAILURE_TOLERANCE,
    PVE_TOLERANCE,
    Forecast,
    direction_noise_norm,
    direction_problem,
)
from ..splits import ScreeSplit, resolve_scree_split
from ._checks import enforce_scree
from ._clip import (
    _CLIP_QUANTILE,
    _LADDER_BOUNDED,
    _auto_scan_share,
    _clip_ladder,
    _joint_noise,
    _scan_failure,
    _scan_level,
    _unit_sd,
)
from ._controls import ScreeMethod, _resolve_controls, _resolve_methods
from ._draw import run_scree
from ._estimators import _method_cost

# How the forecast names the joint release's noise.
_NOISE_NAMES = {"knorm": "K-norm", "gaussian": "Gaussian"}


def _make_plan(
    n: int, p: int, k: int, *, eps: float, delta: float, methods: tuple[str, ...],
    controls: dict[str, Any], direction_share: float, trace_share: float | None,
    pairing: str, calibration: str, box: Any,
) -> ScreePlan:  # fmt: skip
    """The plan of validated arguments: fills in the automatic scan share."""
    public_clip = controls["clipped"].clip if "clipped" in controls else None
    if public_clip is not None:
        trace_share = 0.0
    elif trace_share is None:
        trace_share = _auto_scan_share(n, eps, _clip_ladder(box).size)
    if direction_share + trace_share >= 1:
        raise ValueError(
            f"split.directions + split.clip must be < 1 to leave budget for the scree; "
            f"got {direction_share!r} + {trace_share!r}."
        )
    return ScreePlan.make(
        n=n, p=p, k=k, eps=eps, delta=delta, methods=methods, controls=controls,
        direction_share=direction_share, trace_share=trace_share, pairing=pairing,
        calibration=calibration, box=box, public_clip=public_clip,
    )  # fmt: skip


def plan_scree(
    n: int,
    p: int,
    k: int | None = None,
    *,
    eps: float,
    delta: float,
    method: ScreeMethod | Sequence[ScreeMethod] = "clipped",
    control: Any = None,
    directions_given: bool = False,
    split: ScreeSplit | None = None,
    pairing: Literal["all", "random", "consecutive"] | None = None,
    mono: bool = True,
    compare: bool = False,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    bounds: Any = None,
    variables: tuple[str, ...] | None = None,
    accuracy: str = "warn",
    allow_large_delta: bool = False,
) -> ScreePlan:
    """Price and forecast a :func:`dp_scree` call without any data.

    Parameters are those of :func:`dp_scree` that shape the release, with the
    data replaced by its public size ``n`` x ``p`` and ``directions`` by
    whether they are given. ``bounds`` take the forms of :func:`dp_scree`
    (mappings name the ``variables``, by default ``V1 .. Vp``).

    Returns
    -------
    ScreePlan
        ``cost`` (what the call records), ``forecast``, ``parts`` and the
        sub-plan of its ``directions``; :func:`dppca.releases.engine.execute` runs it.

    Examples
    --------
    >>> plan = plan_scree(5000, 20, 3, eps=1.0, delta=1e-6)
    >>> plan.forecast.ok, round(plan.cost.eps, 6)
    (True, 1.0)
    """
    n = check_positive_int(n, "n")
    p = check_positive_int(p, "p")
    k = check_k(k, p)
    eps = check_eps(eps)
    delta = check_delta_for_n(
        check_delta(delta), n, check_bool(allow_large_delta, "allow_large_delta")
    )
    methods = _resolve_methods(method)
    controls = _resolve_controls(control, methods)
    calibration = check_calibration(calibration)
    pairing_rule = pairing or ("all" if all_pairs_pay(n, p) else "random")
    pairing_rule = check_choice(pairing_rule, "pairing", ("all", "random", "consecutive"))
    shares = resolve_scree_split(split)
    given = check_bool(directions_given, "directions_given")
    mono, compare = check_bool(mono, "mono"), check_bool(compare, "compare")
    ties, accuracy = check_ties(ties), check_accuracy(accuracy)
    names = variables if variables is not None else tuple(f"V{j + 1}" for j in range(p))
    box = check_bounds(bounds, names)
    plan = _make_plan(
        n, p, k, eps=eps, delta=delta, methods=methods, controls=controls,
        direction_share=0.0 if given else shares.directions, trace_share=shares.clip,
        pairing=pairing_rule, calibration=calibration, box=box,
    )  # fmt: skip
    directions = None
    if plan.eps_dir > 0:
        directions = plan_pc_dir(
            n, p, k, eps=plan.eps_dir, delta=plan.delta_dir, calibration=calibration,
            ties=ties, accuracy="ignore", allow_large_delta=True,
        )  # fmt: skip
    return replace(
        plan, directions=directions, mono=mono, compare=compare, ties=ties, accuracy=accuracy
    )


@dataclass(frozen=True)
class ScreePlan:
    """The data-free side of a scree release: budget split, ladder, cost and forecast.

    Built by :func:`plan_scree` from public quantities only; :func:`dp_scree`
    runs exactly this plan.
    """

    eps_dir: float
    delta_dir: float
    eps_scan: float
    eps_m: float
    delta_m: float
    ladder: NDArray[np.float64]
    scan_level: float
    noise: str
    cost: PrivacyCost
    forecast: Forecast
    methods: tuple[str, ...] = ()
    controls: Mapping[str, Any] = field(default_factory=dict)
    pairing: str = "all"
    n: int = 0
    p: int = 0
    k: int = 0
    calibration: str = "analytic"
    box: Any = None
    directions: DirectionsPlan | None = None
    mono: bool = True
    compare: bool = False
    ties: str = "zero"
    accuracy: str = "warn"
    kind: str = "scree"

    @property
    def parts(self) -> tuple[Part, ...]:
        """The noise draws, in order: directions (if released here), clip, moments, methods."""
        return parts_of(self.cost)

    def check_input(
        self, X: Any, *, directions: Any = None, public_directions: bool = False
    ) -> CheckedData:
        """Check the table (n >= 4, in memory) and the given ``directions`` once.

        A CheckedData whose ``extra`` already holds the directions passes
        through. ``directions`` must match the plan: given exactly when it
        was priced with ``directions_given=True``.
        """
        if isinstance(X, CheckedData) and X.extra is not None:
            given, release = X.extra
        else:
            table = X if isinstance(X, CheckedData) else CheckedData(*check_data(X, min_rows=4))
            given, release = resolve_directions(
                directions, p=table.shape[1], k=self.k,
                public_directions=check_bool(public_directions, "public_directions"),
            )  # fmt: skip
            X = CheckedData(table.values, table.variables, (given, release))
        if (given is None) != (self.directions is not None):
            raise ValueError(
                "the plan was priced "
                + ("with directions given" if self.directions is None else "to release them")
                + "; build it with directions_given matching the directions passed."
            )
        return X

    def screen(self, data: CheckedData) -> None:
        """Before any noise: refuse "public" directions that are the data's own."""
        given, release = data.extra
        if given is not None and release is None:
            refuse_own_directions(data.values, given, range(1, self.k + 1))

    def review(self, result: Any) -> Any:
        """Refuse to present impossible values as estimates (see :mod:`._checks`).

        The directions' own check is kept on ``result.directions_release`` but
        not acted on: the variances are measured along whatever directions
        were released, so they stay right when a direction is one of several
        of equal variance.
        """
        return enforce_scree(result, self.accuracy)

    def draw(self, data: CheckedData, rng: np.random.Generator) -> Any:
        """Draw the parts in order (see :func:`dppca.releases.scree._draw.run_scree`)."""
        return run_scree(self, data, rng)

    @classmethod
    def make(
        cls, *, n: int, p: int, k: int, eps: float, delta: float, methods: tuple[str, ...],
        controls: dict[str, Any], direction_share: float, trace_share: float, pairing: str,
        calibration: str, box: Any, public_clip: float | None,
    ) -> ScreePlan:  # fmt: skip
        """The plan for validated arguments.

        The shares give a basic split of ``(eps, delta)``. With the analytic
        calibration every eps share is then multiplied by the largest factor
        whose tight total (:func:`dppca.privacy.accounting.tight_total`) is still
        ``eps`` at ``delta`` (:func:`dppca.privacy.accounting.scale_to_tight`), and the
        noise of the joint release (K-norm or Gaussian) is the one with less
        noise after that scaling. The classic calibration keeps the basic split.
        """
        extra = [name for name in methods if name != "clipped"]
        m = n // 2
        ladder = _clip_ladder(box)
        all_pairs = pairing == "all"
        args: dict[str, Any] = dict(
            n=n, p=p, k=k, eps=eps, delta=delta, extra=extra, controls=controls,
            direction_share=direction_share, trace_share=trace_share, all_pairs=all_pairs,
            calibration=calibration, public_clip=public_clip,
        )  # fmt: skip
        basic = _basic_split(**args, noise=None)
        kind = _joint_noise(n, all_pairs, basic[3], basic[4], calibration, k)[0]
        if calibration == "analytic":
            options = []
            for noise in ("knorm", "gaussian"):
                split = _basic_split(**args, noise=noise)

                def build(t: float, split: tuple = split) -> list[PrivacyCost]:
                    return _scree_costs(split, t, **args)

                t, costs = scale_to_tight(build, eps, delta)
                sd = _unit_sd(noise, n, all_pairs, t * split[3], split[4], calibration, k)
                options.append((sd, noise, t, split, costs))
            _, kind, t, split, costs = min(options, key=lambda o: (o[0], o[1] != kind))
            cost = PrivacyCost(
                eps, delta, "tight composition (accountant)",
                f"private scree ({', '.join(methods)}; {k} components)", costs, kind="composed",
            )  # fmt: skip
        else:
            t, split = 1.0, _basic_split(**args, noise=kind)
            cost = compose(
                _scree_costs(split, 1.0, **args),
                released=f"private scree ({', '.join(methods)}; {k} components)",
            )
        eps_dir, delta_dir, eps_scan, eps_m, delta_m, _ = split
        eps_dir, eps_scan, eps_m = t * eps_dir, t * eps_scan, t * eps_m
        unit_sd = _unit_sd(kind, n, all_pairs, eps_m, delta_m, calibration, k)
        level = _scan_level(m, eps_scan, eps_m) if public_clip is None else _CLIP_QUANTILE
        forecast = _forecast_scree(
            n=n, p=p, eps=eps, delta=delta, eps_dir=eps_dir, delta_dir=delta_dir,
            calibration=calibration, unit_sd=unit_sd, kind=kind, ladder_bins=ladder.size,
            eps_scan=eps_scan if public_clip is None else 0.0, level=level, m=m, k=k,
        )  # fmt: skip
        return cls(
            eps_dir, delta_dir, eps_scan, eps_m, delta_m, ladder, level, kind, cost, forecast,
            methods, MappingProxyType(dict(controls)), pairing, n, p, k, calibration, box,
        )  # fmt: skip


def _basic_split(
    *, n: int, k: int, eps: float, delta: float, extra: list[str], direction_share: float,
    trace_share: float, all_pairs: bool, calibration: str, noise: str | None, **_: Any,
) -> tuple[float, float, float, float, float, str]:  # fmt: skip
    """Basic split: eps and delta of directions, scan eps, each method's (eps, delta), noise.

    ``noise=None`` takes the joint release's noise with the smaller standard
    deviation at this split. A K-norm joint release needs no delta: then the
    other Gaussian parts share it in proportion to their eps.
    """
    eps_dir, delta_dir = eps * direction_share, delta * direction_share
    eps_scan = eps * trace_share
    eps_m = (eps - eps_dir - eps_scan) / (1 + len(extra))
    delta_m = (delta - delta_dir) / (1 + len(extra))
    if noise is None:
        noise = _joint_noise(n, all_pairs, eps_m, delta_m, calibration, k)[0]
    if noise == "knorm" and (direction_share > 0 or extra):
        weights = [eps_dir] + [eps_m] * len(extra)
        delta_dir = delta * eps_dir / math.fsum(weights)
        delta_m = delta * eps_m / math.fsum(weights) if extra else delta_m
    return eps_dir, delta_dir, eps_scan, eps_m, delta_m, noise


def _scree_costs(
    split: tuple[float, float, float, float, float, str], t: float, *, n: int, p: int, k: int,
    extra: list[str], controls: dict[str, Any], direction_share: float, all_pairs: bool,
    calibration: str, public_clip: float | None, **_: Any,
) -> list[PrivacyCost]:  # fmt: skip
    """The parts of a scree release with every eps share of ``split`` times ``t``."""
    eps_dir, delta_dir, eps_scan, eps_m, delta_m, kind = split
    eps_dir, eps_scan, eps_m = t * eps_dir, t * eps_scan, t * eps_m
    costs: list[PrivacyCost] = []
    if direction_share > 0:
        costs.append(
            PrivacyCost(eps_dir, delta_dir, f"gaussian ({calibration})",
                        f"noisy spherical Kendall matrix ({p} x {p})", kind="gaussian",
                        sensitivity=kendall_sensitivity(n),
                        sigma=kendall_sigma(n, eps_dir, delta_dir, calibration))
        )  # fmt: skip
    if public_clip is None:
        costs.append(
            PrivacyCost(eps_scan, 0.0, "ladder quantile scan (pure DP)",
                        "clip level of the squared pair norms", kind="pure")
        )  # fmt: skip
    released = f"clipped moments: {k} variances and the total variance"
    # The sensitivity is c C with the clip level C chosen privately above (or
    # public): the noise is a fixed multiple of it, known before any data.
    if kind == "knorm":
        costs.append(
            PrivacyCost(eps_m, 0.0, "K-norm (pure DP, moment polytope)", released, kind="pure")
        )
    else:
        mult = gaussian_sigma(1.0, eps_m, delta_m, calibration)
        noise: dict[str, Any] = {}
        if public_clip is not None:
            sens = moment_sensitivity(n, public_clip, all_pairs=all_pairs, norm="l2")
            noise = {"sensitivity": sens, "sigma": mult * sens}
        costs.append(
            PrivacyCost(eps_m, delta_m, f"gaussian ({calibration})", released, kind="gaussian",
                        multiplier=mult, **noise)
        )  # fmt: skip
    for name in extra:
        costs.append(
            _method_cost(name, controls[name], eps=eps_m, delta=delta_m, k=k,
                         calibration=calibration)
        )  # fmt: skip
    return costs


def _forecast_scree(
    *, n: int, p: int, eps: float, delta: float, eps_dir: float, delta_dir: float,
    calibration: str, unit_sd: float, kind: str, ladder_bins: int, eps_scan: float,
    level: float, m: int, k: int = 1,
) -> Forecast:  # fmt: skip
    """Data-free forecast of a scree release (see :mod:`dppca.releases.forecast`).

    The noise on the total variance, relative to it, is ``unit_sd * C / trace``
    with the clip level ``C`` assumed to be :data:`dppca.releases.forecast.CLIP_RATIO`
    times the total variance when the scan aims at the 0.9 quantile, and
    ``sqrt(0.1 / (1 - level))`` times more for a higher level: the quantiles
    of a tail with index 2 (heavy, with a finite mean, as real tables with a
    few dominant variables have) grow like that, so a higher aim is not
    assumed to cost nothing. A PVE is a ratio ``w / s`` of two such noisy
    values; its noise, ``e_w - PVE e_s`` over the total, has variance
    ``sd^2 (1 + PVE^2 - 2 rho PVE)``, at most ``2 - 2 rho`` times that of one
    value (at PVE = 1), where ``rho`` is the correlation of the two noises:
    ``1 / (k + 1)`` for K-norm noise, 0 for Gaussian. The clip scan fails when it
    stops below all the data (:func:`dppca.privacy.mechanisms.ladder_failure_bound`)
    or runs two bins or more (a factor 4) past the level
    (:func:`dppca.privacy.mechanisms.quantile_overshoot_bound`).
    """
    quantities: dict[str, float] = {}
    descriptions: dict[str, str] = {}
    problems: list[str] = []
    if eps_dir > 0:
        norm = direction_noise_norm(p, kendall_sigma(n, eps_dir, delta_dir, calibration))
        quantities["direction_noise_norm"] = norm
        descriptions["direction_noise_norm"] = "typical operator norm of the Kendall noise"
        problem = direction_problem(norm)
        if problem is not None:
            problems.append(problem)
    ratio = CLIP_RATIO * math.sqrt(max(1.0, (1.0 - _CLIP_QUANTILE) / (1.0 - level)))
    relative = unit_sd * ratio
    quantities["trace_noise_relative"] = relative
    descriptions["trace_noise_relative"] = (
        f"noise sd over the total variance ({_NOISE_NAMES.get(kind, kind)}), "
        f"assuming a clip level {ratio:.2g} times the total variance"
    )
    rho = 1.0 / (k + 1) if kind == "knorm" else 0.0
    pve_sd = math.sqrt(2.0 - 2.0 * rho) * relative
    quantities["pve_sd"] = pve_sd
    descriptions["pve_sd"] = "predicted noise sd of a PVE (share of the total variance)"
    if 2 * pve_sd > PVE_TOLERANCE:
        problems.append(
            f"each PVE would carry noise of about +-{2 * pve_sd:.2g} (95%), more than "
            f"{PVE_TOLERANCE:g}; raise eps, pass directions released earlier, or use more rows."
        )
    if eps_scan > 0:
        failure = _scan_failure(ladder_bins, m, level, eps_scan)
        quantities["clip_scan_failure"] = failure
        descriptions["clip_scan_failure"] = (
            "bound on the chance that the clip level lands below the data or 4x too high"
        )
        if failure > FAILURE_TOLERANCE:
            help_ = (
                "raise eps or split=ScreeSplit(clip=...), or give a public "
                "ClippedControl(clip=...)"
            )
            if ladder_bins > _LADDER_BOUNDED + 1:  # the unbounded ladder: bounds would help
                help_ = "give public bounds, " + help_
            problems.append(
                f"the clip level search may fail with probability up to {failure:.2g}; {help_}."
            )
    return Forecast(
        "scree", n, p, eps, delta, quantities=quantities, descriptions=descriptions,
        problems=tuple(problems),
    )  # fmt: skip
