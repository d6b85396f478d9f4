"""The scree estimators: the joint clipped moments, PMWM and Huber, with their costs."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ...core.lazy import isotonic_regression
from ...kernels.pair_moments import (
    clipped_moments_all_pairs,
    clipped_moments_pairings,
    moment_sensitivity,
)
from ...privacy.cost import PrivacyCost, compose
from ...privacy.knorm import moment_knorm_noise, moment_knorm_variance
from ...privacy.mechanisms import gaussian_noise, gaussian_sigma, laplace_noise
from ...privacy.quantiles import capped_quantile_level, exponential_mechanism, unbounded_quantile
from .controls import HuberControl, PMWMControl
from .statistics import (
    _huber_gradient,
    _m2_histogram,
    _m2_median_utility,
    _sigma,
    _winsorized_statistic,
)


class MomentSettings(Protocol):
    """What the joint moments read of a scree plan (its draw settings, checked)."""

    @property
    def pairing(self) -> str: ...
    @property
    def noise(self) -> str: ...
    @property
    def eps_m(self) -> float: ...
    @property
    def delta_m(self) -> float: ...
    @property
    def calibration(self) -> str: ...


# Where all pairs cost too much (dppca.kernels.pair_moments.all_pairs_pay, a rule on n and p)
# the moments are averaged over _PAIRINGS random perfect matchings of the rows
# instead: the same sensitivity, O(n) instead of O(n^2) time, and a sampling
# error close to the all-pairs one.
_PAIRINGS = 16

# The quantile search overshoots (in whole geometric bins, heavy-tailed) when
# its Exp(eps1)-noised target passes the number of values N. Keeping N - qN at
# least _TARGET_MARGIN / eps1 bounds that probability by exp(-margin). A larger
# margin lowers the level and biases the winsorized means down. On the bundled
# data (k=3, 100 noise seeds, eps 0.5 and 1, margins 0, 1, 2, 5 compared with
# the error measure of benchmarks/bench_scree.py) a margin of 1 removed the
# worst overshoots without moving the median errors; 5 biased PMWM by -20 %.
_TARGET_MARGIN = 1.0


def _halves(m: int) -> tuple[slice, slice]:
    half = m // 2
    return slice(0, half), slice(half, m)


def _moment_release(
    data: NDArray[np.float64],
    orders: list[NDArray[np.int64]],
    vectors: NDArray[np.float64],
    clip: float,
    plan: MomentSettings,
    shift: NDArray[np.float64] | None,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], float, float]:
    """Private clipped moments along ``vectors`` and in total; and their noise sd.

    The checked ``plan`` fixes the pairing, the kind of noise
    (:func:`_joint_noise`), its (eps, delta) per method and the calibration.
    """
    all_pairs, kind = plan.pairing == "all", plan.noise
    eps, delta, calibration = plan.eps_m, plan.delta_m, plan.calibration
    n = data.shape[0]
    if all_pairs:
        w, s = clipped_moments_all_pairs(data, vectors, clip, shift)
    else:
        w, s = clipped_moments_pairings(data, vectors, clip, orders)
    value = np.append(w, s)
    if kind == "knorm":
        scale = 2.0 * moment_sensitivity(n, clip, all_pairs=all_pairs, norm="knorm") / eps
        noisy = moment_knorm_noise(value, scale, rng)
        sd = math.sqrt(moment_knorm_variance(value.size, scale))
    else:
        l2 = moment_sensitivity(n, clip, all_pairs=all_pairs, norm="l2")
        sd = _sigma(l2, eps, delta, calibration)
        noisy = gaussian_noise(value, sd, rng)
    return np.maximum(noisy[:-1], 0.0), max(float(noisy[-1]), 0.0), sd


def _pmwm(
    w: NDArray[np.float64],
    control: PMWMControl,
    *,
    eps: float,
    delta: float,
    calibration: str,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], float]:
    m, k = w.shape
    if control.split:
        first, second = _halves(m)
        wq, wm = w[first], w[second]
        eps_q, eps_mean = eps, eps
    else:
        wq = wm = w
        eps_q = eps * control.quantile_share
        eps_mean = eps - eps_q
    n_q = wq.shape[0]
    trim = min(max(control.trim_const / n_q, control.eta), 0.49)
    n_quantiles = 2 if control.lower_quantile else 1
    per_quantile = eps_q / (n_quantiles * k)
    lower = np.full(k, control.lower)
    upper = np.full(k, control.upper)
    level = capped_quantile_level(1.0 - trim, n_q, per_quantile / 2, _TARGET_MARGIN)
    half = per_quantile / 2  # each quantile's two steps

    def quantile(column: NDArray[np.float64], q: float) -> float:
        bounds = {"lower": control.lower, "upper": control.upper, "beta": control.beta}
        return unbounded_quantile(column, **bounds, q=q, eps1=half, eps2=half, rng=rng)

    for j in range(k):
        hi = quantile(wq[:, j], level)
        lo = quantile(wq[:, j], trim) if control.lower_quantile else control.lower
        if math.isfinite(lo) and math.isfinite(hi) and lo <= hi:
            lower[j], upper[j] = lo, hi
    sensitivity = float(np.linalg.norm(upper - lower)) / wm.shape[0]
    sigma = _sigma(sensitivity, eps_mean, delta, calibration)
    noisy = gaussian_noise(_winsorized_statistic(wm, lower, upper), sigma, rng)
    return np.maximum(noisy, 0.0), sigma


def _huber_settings(m: int, control: HuberControl) -> tuple[int, int]:
    steps = control.steps if control.steps is not None else max(1, math.ceil(math.log(m)))
    blocks = control.blocks if control.blocks is not None else max(1, math.isqrt(m) // 2)
    return steps, blocks


def _huber(
    w: NDArray[np.float64],
    control: HuberControl,
    *,
    eps: float,
    delta: float,
    calibration: str,
    rng: np.random.Generator,
    tau_cap: float | None = None,
) -> tuple[NDArray[np.float64], float]:
    m, k = w.shape
    steps, blocks = _huber_settings(m, control)
    eps_m2 = eps * control.m2_frac
    eps_gd = eps - eps_m2
    # Scale proxy: one dyadic histogram per component, each eps_m2 / k; replacing
    # a row moves one block median between two bins (L1 sensitivity 2).
    m2 = np.empty(k)
    for j in range(k):
        if control.m2_rule == "median":
            utility = _m2_median_utility(w[:, j], control.k_min, control.k_max)
            best = exponential_mechanism(utility, eps=eps_m2 / k, sensitivity=1.0, rng=rng)
        else:
            counts = _m2_histogram(w[:, j], control.k_min, control.k_max, blocks)
            noisy = np.maximum(laplace_noise(counts, 2.0 * k / eps_m2, rng), 0.0)
            best = int(np.argmax(noisy))
        m2[j] = 2.0 ** (control.k_min + best)
    log_m = math.log(m)
    denom = math.sqrt((1.0 + log_m) * log_m)
    if not (math.isfinite(denom) and denom > 0):
        denom = 1.0
    tau = np.sqrt(m2) * math.sqrt((eps_gd / k) * m / denom)
    tau = np.where(np.isfinite(tau) & (tau > 0), tau, 1.0)
    if tau_cap is not None:
        tau = np.minimum(tau, tau_cap)
    # T adaptive Gaussian steps of sensitivity D and scale sigma compose exactly
    # to one Gaussian mechanism of sensitivity sqrt(T) D (Gaussian differential
    # privacy, Dong, Roth and Su 2022), so the whole descent is calibrated at once.
    step_sensitivity = 2.0 * control.eta0 * float(np.linalg.norm(tau)) / m
    sigma = _sigma(math.sqrt(steps) * step_sensitivity, eps_gd, delta, calibration)
    mu = np.full(k, control.mu0)
    for _ in range(steps):
        mu = gaussian_noise(mu + _huber_gradient(w, mu, tau, control.eta0), sigma, rng)
    # near convergence each step moves mu to the clipped mean plus fresh noise,
    # so the noise on the estimate is about one step's sigma
    return np.maximum(mu, 0.0), sigma


def _multiplier(eps: float, delta: float, calibration: str) -> float:
    return gaussian_sigma(1.0, eps, delta, calibration)


def _pmwm_cost(
    control: PMWMControl, *, eps: float, delta: float, k: int, calibration: str
) -> PrivacyCost:
    """PMWM: pure-DP winsorizing levels, then a Gaussian mean (or both on disjoint halves)."""
    gauss = f"gaussian ({calibration})"
    if control.split:
        return PrivacyCost(
            eps,
            delta,
            f"pure-DP quantiles and {gauss} mean on disjoint halves (parallel composition)",
            f"PMWM scree ({k} values) and its winsorizing levels",
        )
    eps_q = eps * control.quantile_share
    return compose(
        [
            PrivacyCost(
                eps_q, 0.0, "unbounded quantile (pure DP)", "PMWM winsorizing levels", kind="pure"
            ),
            PrivacyCost(
                eps - eps_q,
                delta,
                gauss,
                f"PMWM scree ({k} values)",
                kind="gaussian",
                multiplier=_multiplier(eps - eps_q, delta, calibration),
            ),
        ],
        released=f"PMWM scree ({k} values)",
    )


def _huber_cost(
    control: HuberControl, *, eps: float, delta: float, k: int, calibration: str
) -> PrivacyCost:
    """Huber: pure-DP scale proxies, then Gaussian gradient steps composed as one."""
    eps_m2 = eps * control.m2_frac
    if control.m2_rule == "median":
        m2 = PrivacyCost(
            eps_m2, 0.0, "exponential mechanism (median bin)", "Huber scale proxies", kind="pure"
        )
    else:  # k histograms, each with L1 sensitivity 2, Laplace scale 2 k / eps_m2
        m2 = PrivacyCost(
            eps_m2,
            0.0,
            "laplace (noisy arg-max)",
            "Huber scale proxies",
            kind="laplace",
            sensitivity=2.0 * k,
            scale=2.0 * k / eps_m2,
        )
    return compose(
        [
            m2,
            PrivacyCost(
                eps - eps_m2,
                delta,
                f"gaussian ({calibration}), gradient steps composed as one",
                f"Huber scree ({k} values)",
                kind="gaussian",
                multiplier=_multiplier(eps - eps_m2, delta, calibration),
            ),
        ],
        released=f"Huber scree ({k} values)",
    )


def _run_pmwm(
    w: NDArray[np.float64], control: PMWMControl, *, clip: float, **kwargs: Any
) -> tuple[NDArray[np.float64], float]:
    """PMWM needs no clip level: it finds its own winsorizing levels."""
    return _pmwm(w, control, **kwargs)


def _run_huber(
    w: NDArray[np.float64], control: HuberControl, *, clip: float, **kwargs: Any
) -> tuple[NDArray[np.float64], float]:
    """Huber's clipping levels are capped at the clip level of the joint release."""
    return _huber(w, control, tau_cap=clip, **kwargs)


@dataclass(frozen=True)
class ExtraMethod:
    """One extra scree estimator, released beside the joint clipped moments.

    Adding an estimator is adding an entry to :data:`EXTRA_METHODS` (and its
    control class): the plan prices every entry with ``cost`` and the release
    runs it with ``run``, in the order the caller asked for.

    Attributes
    ----------
    cost : callable
        ``cost(control, *, eps, delta, k, calibration) -> PrivacyCost``; data-free.
    run : callable
        ``run(w, control, *, clip, eps, delta, calibration, rng) -> (values, noise_sd)``
        with ``w`` the squared projections of the paired differences.
    """

    cost: Callable[..., PrivacyCost]
    run: Callable[..., tuple[NDArray[np.float64], float]]


EXTRA_METHODS: Mapping[str, ExtraMethod] = MappingProxyType(
    {
        "pmwm": ExtraMethod(cost=_pmwm_cost, run=_run_pmwm),
        "huber": ExtraMethod(cost=_huber_cost, run=_run_huber),
    }
)


def _method_cost(
    method: str, control: Any, *, eps: float, delta: float, k: int, calibration: str
) -> PrivacyCost:
    """The record of one extra method at ``(eps, delta)``, each part with its noise.

    Gaussian parts whose sensitivity is set by an earlier private output (the
    winsorizing levels, the Huber clipping levels) record their noise
    multiplier; the split PMWM (parallel composition) stays a generic part.
    """
    return EXTRA_METHODS[method].cost(control, eps=eps, delta=delta, k=k, calibration=calibration)


def _mono(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Least-squares non-increasing fit of the non-negative part, clipped at 0."""
    fitted = isotonic_regression(np.maximum(values, 0.0), increasing=False).x
    return np.maximum(fitted, 0.0)
