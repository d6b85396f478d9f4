"""Private scree and proportion-of-variance estimates along PC directions.

The eigenvalues of the (noisy) spherical Kendall matrix are not variances, so
the variance along each private direction is estimated in a separate private
step. The target is mean-free: rows are paired in a data-independent order and
``z_i = (x_a - x_b) / sqrt(2)`` has ``E[(v' z_i)^2] = v' Sigma v`` whatever the
mean, so no sample mean is ever subtracted.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from ._lazy import isotonic_regression
from ._lazy import pandas as pd
from ._typing import Calibration, Data, RandomStateLike, Ties
from ._validation import (
    check_bool,
    check_calibration,
    check_choice,
    check_data,
    check_delta,
    check_eps,
    check_k,
    check_open_unit,
    check_positive_int,
    check_random_state,
    check_real,
)
from .accounting import Budget, PrivacyCost, compose
from .directions import DirectionsResult, dp_pc_dir, resolve_directions
from .mechanisms import (
    capped_quantile_level,
    exponential_mechanism,
    gaussian_noise,
    gaussian_sigma,
    laplace_noise,
    random_pairing,
    unbounded_quantile,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "METHODS",
    "ClippedControl",
    "HuberControl",
    "PMWMControl",
    "ScreeResult",
    "dp_scree",
]

ScreeMethod = Literal["clipped", "pmwm", "huber"]
METHODS: tuple[str, ...] = ("clipped", "pmwm", "huber")

# Public constants of the total-variance (trace) step: the winsorizing level of
# the squared pair norms, the geometric bin ratio of the quantile search and
# a public cap that keeps every noise scale finite.
_TRACE_QUANTILE = 0.99
_TRACE_BETA = 1.01
_TRACE_CAP = 1e100
# The quantile search overshoots (in whole geometric bins, heavy-tailed) when
# its Exp(eps1)-noised target passes the number of values N. Keeping N - qN at
# least _TARGET_MARGIN / eps1 bounds that probability by exp(-margin). A larger
# margin lowers the level and biases the winsorized means down. On the bundled
# data (k=3, 100 noise seeds, eps 0.5 and 1, margins 0, 1, 2, 5 compared with
# the error measure of benchmarks/bench_scree.py) a margin of 1 removed the
# worst overshoots without moving the median errors; 5 biased PMWM by -20 %.
_TARGET_MARGIN = 1.0


# --------------------------------------------------------------------------
# Control objects
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ClippedControl:
    """Settings of the ``"clipped"`` estimator.

    Parameters
    ----------
    clip : float, optional
        Public clipping level ``C > 0`` for the squared projections
        ``(v' z_i)^2``. It should be a few times the largest variance you
        expect along a direction (in squared data units). None (default) uses
        the private upper quantile of the squared pair norms ``||z_i||^2``
        released by the total-variance step of the same call: since
        ``(v' z)^2 <= ||z||^2`` for a unit ``v``, clipping there changes only
        the rare pairs whose whole norm is large. It adapts to the data's scale
        at no extra privacy cost (post-processing).
    """

    clip: float | None = None

    def __post_init__(self) -> None:
        if self.clip is not None:
            check_real(self.clip, "ClippedControl.clip", low=0.0, low_open=True)


@dataclass(frozen=True)
class PMWMControl:
    """Settings of the ``"pmwm"`` (private modified winsorized mean) estimator.

    Parameters
    ----------
    lower, upper : float, default=0.0, 1e8
        Public range ``[a, b]`` of the squared projections. ``lower=0`` is exact
        (squares are never negative). ``upper`` caps the private upper
        quantile; the default assumes variances well below 1e7 (in squared data
        units): raise it for data on larger scales.
    trim_const, eta : float, default=10.0, 0.005
        The winsorizing proportion is ``min(max(trim_const / n_q, eta), 0.49)``
        where ``n_q`` is the number of pairs the quantiles are computed from.
        The quantile level ``1 - trim`` is further lowered to at most
        ``1 - 1 / (eps1 n_q)`` (``eps1`` the target noise's epsilon), so that the
        noisy target seldom passes the number of values, where the search
        would overshoot by many bins.
    beta : float, default=1.01
        Ratio of the geometric bins of the quantile search (> 1). Bins 1 %
        wide are ample for a winsorizing level and keep the search short.
    split : bool, default=True
        Compute the quantiles and the mean on disjoint halves of the pairs.
        A replaced row then touches only one half, so both steps get the whole
        budget of the method (parallel composition). With False both use
        every pair and the budget is divided (``quantile_share`` to the
        quantiles).
    quantile_share : float, default=0.5
        Share of the method's epsilon for the quantiles when ``split=False``.
    lower_quantile : bool, default=False
        Also winsorize from below at a private lower quantile (the original
        two-sided rule). Off by default: the squares are bounded below by
        ``lower`` already, and the lower search on ``-w`` starts from
        ``-upper``, so with a wide public range its bins are too coarse to
        help. When on, the quantile epsilon is split evenly between the two.
    """

    lower: float = 0.0
    upper: float = 1e8
    trim_const: float = 10.0
    eta: float = 0.005
    beta: float = 1.01
    split: bool = True
    quantile_share: float = 0.5
    lower_quantile: bool = False

    def __post_init__(self) -> None:
        lo = check_real(self.lower, "PMWMControl.lower")
        hi = check_real(self.upper, "PMWMControl.upper")
        if not lo < hi:
            raise ValueError(
                f"PMWMControl needs lower < upper; got lower={self.lower!r}, upper={self.upper!r}."
            )
        check_real(self.trim_const, "PMWMControl.trim_const", low=0.0, low_open=True)
        check_real(self.eta, "PMWMControl.eta", low=0.0, high=0.5, high_open=True)
        check_real(self.beta, "PMWMControl.beta", low=1.0, low_open=True)
        check_real(
            self.quantile_share, "PMWMControl.quantile_share", low=0.0, high=1.0,
            low_open=True, high_open=True,
        )  # fmt: skip
        for name in ("split", "lower_quantile"):
            check_bool(getattr(self, name), f"PMWMControl.{name}")


@dataclass(frozen=True)
class HuberControl:
    """Settings of the ``"huber"`` (noisy gradient descent) estimator.

    The descent converges to a Huber location of the squared projections,
    which lies below their mean (the variance) when the clipping level ``tau``
    is small; ``tau`` grows with ``sqrt(eps n)``, so at small budgets this
    estimator is biased down more than ``"clipped"`` (see
    ``benchmarks/bench_scree.py``).

    Parameters
    ----------
    k_min, k_max : int, default=-30, 60
        Range of the dyadic histogram ``2**k_min .. 2**k_max`` that locates
        the scale proxy ``m2``; the default covers any plausible scale.
    m2_frac : float, default=0.25
        Share of the method's epsilon spent on the scale proxy, in (0, 1).
    mu0 : float, default=0.0
        Public starting value of the descent.
    eta0 : float, default=1.0
        Step size, > 0.
    steps : int, optional
        Number of descent steps T; None uses ``max(1, ceil(ln m))`` for ``m``
        pairs.
    m2_rule : {"median", "mode"}, default="median"
        How the scale proxy is chosen among the dyadic bins of the values
        ``s_j = (w_{2j-1} - w_{2j})^2 / 2``. ``"median"``: the exponential
        mechanism picks the bin holding their median (utility minus the rank
        distance to the middle, sensitivity 1); every value votes, so it finds
        the right order of magnitude at small epsilon. ``"mode"``: the original
        rule, the noisy arg-max of a histogram of block medians with Laplace
        noise of scale ``2 / eps`` per count (a replaced row moves one median
        between two bins); it needs many blocks per bin to beat the noise.
    blocks : int, optional
        Number of blocks for ``m2_rule="mode"``; None uses
        ``max(1, floor(sqrt(m) / 2))`` for ``m`` pairs.
    """

    k_min: int = -30
    k_max: int = 60
    m2_frac: float = 0.25
    mu0: float = 0.0
    eta0: float = 1.0
    steps: int | None = None
    m2_rule: Literal["median", "mode"] = "median"
    blocks: int | None = None

    def __post_init__(self) -> None:
        check_choice(self.m2_rule, "HuberControl.m2_rule", ("median", "mode"))
        for name in ("k_min", "k_max"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"HuberControl.{name} must be an integer; got {value!r}.")
        if not self.k_min < self.k_max:
            raise ValueError(
                f"HuberControl needs k_min < k_max; got {self.k_min!r} and {self.k_max!r}."
            )
        if not (-1000 <= self.k_min and self.k_max <= 1000):
            raise ValueError("HuberControl.k_min and k_max must lie in [-1000, 1000].")
        check_real(
            self.m2_frac, "HuberControl.m2_frac", low=0.0, high=1.0, low_open=True, high_open=True
        )
        check_real(self.mu0, "HuberControl.mu0")
        check_real(self.eta0, "HuberControl.eta0", low=0.0, low_open=True)
        if self.steps is not None:
            check_positive_int(self.steps, "HuberControl.steps")
        if self.blocks is not None:
            check_positive_int(self.blocks, "HuberControl.blocks")


_CONTROLS: dict[str, type] = {
    "clipped": ClippedControl,
    "pmwm": PMWMControl,
    "huber": HuberControl,
}


# --------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------


def _pve(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each value over the sum (rowwise); zeros where the sum is not > 0."""
    total = values.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 0, values / np.where(total > 0, total, 1.0), 0.0)
    return out


def _pve_total(values: NDArray[np.float64], trace: float) -> NDArray[np.float64]:
    """Each value over the total variance, which is at least the sum of the values."""
    denom = np.maximum(values.sum(axis=-1, keepdims=True), trace)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, values / np.where(denom > 0, denom, 1.0), 0.0)


@dataclass(frozen=True, eq=False, repr=False)
class ScreeResult:
    """Private variance estimates along PC directions.

    Attributes
    ----------
    methods : tuple of str
        The estimators run, in the order asked for.
    values : ndarray of shape (n_methods, k)
        Private variance estimates, one row per method, PC1 first (after the
        optional monotone fit). ``scree`` is the first row.
    trace : float
        Private estimate of the total variance ``trace(Sigma)``, used for
        ``pve_total``.
    directions : ndarray of shape (p, k)
        The unit directions the variances refer to.
    directions_source : str
        ``"private (this call)"``, ``"private (earlier release)"`` or
        ``"public (caller)"``.
    directions_release : DirectionsResult or None
        The private direction release used, if any.
    n, n_pairs : int
        Number of rows and of paired differences ``floor(n / 2)``.
    variables : tuple of str
        Variable labels (rows of ``directions``).
    cost : PrivacyCost
        Everything this call released, composed; for directions taken from an
        earlier release their cost is not counted again.
    calibration : str
        ``"classic"`` or ``"analytic"``.
    mono : bool
        Whether the non-increasing fit was applied.
    nonprivate_values : ndarray of shape (k,) or None
        Only with ``compare=True``: the top-k eigenvalues of the sample
        covariance matrix, computed without noise (not private).
    nonprivate_trace : float or None
        Only with ``compare=True``: the sample total variance (not private).
    """

    methods: tuple[str, ...]
    values: NDArray[np.float64]
    trace: float
    directions: NDArray[np.float64]
    directions_source: str
    directions_release: DirectionsResult | None
    n: int
    n_pairs: int
    variables: tuple[str, ...]
    cost: PrivacyCost
    calibration: str
    mono: bool
    nonprivate_values: NDArray[np.float64] | None = None
    nonprivate_trace: float | None = None
    private: bool = True

    def __post_init__(self) -> None:
        for a in (self.values, self.directions, self.nonprivate_values):
            if a is not None:
                a.setflags(write=False)

    @property
    def k(self) -> int:
        """Number of components."""
        return int(self.values.shape[1])

    @property
    def p(self) -> int:
        """Number of variables."""
        return int(self.directions.shape[0])

    @property
    def eps(self) -> float:
        """Epsilon spent by this call."""
        return self.cost.eps

    @property
    def delta(self) -> float:
        """Delta spent by this call."""
        return self.cost.delta

    @property
    def pc_labels(self) -> tuple[str, ...]:
        """``PC1, ..., PCk``."""
        return tuple(f"PC{i + 1}" for i in range(self.k))

    @property
    def scree(self) -> NDArray[np.float64]:
        """Private variances of the first method, shape (k,)."""
        return self.values[0]

    @property
    def pve(self) -> NDArray[np.float64]:
        """Proportions of the variance of the k components (first method)."""
        return self.pve_values[0]

    @property
    def pve_total(self) -> NDArray[np.float64]:
        """Proportions of the total variance over all p components (first method)."""
        return self.pve_total_values[0]

    @property
    def pve_values(self) -> NDArray[np.float64]:
        """PVE over the k components, one row per method."""
        return _pve(np.asarray(self.values))

    @property
    def pve_total_values(self) -> NDArray[np.float64]:
        """PVE over all p components (private trace), one row per method."""
        return _pve_total(np.asarray(self.values), self.trace)

    def estimate(self, method: str) -> NDArray[np.float64]:
        """The variances estimated by one ``method``."""
        if method not in self.methods:
            raise ValueError(f"method must be one of {self.methods!r}; got {method!r}.")
        return self.values[self.methods.index(method)]

    @property
    def has_comparison(self) -> bool:
        """Whether non-private comparison values are attached."""
        return self.nonprivate_values is not None

    def to_frame(self) -> pd.DataFrame:
        """A table with PCs as index and columns ``scree_<m>``, ``pve_<m>``, ``pve_total_<m>``.

        With a non-private comparison the columns ``*_nonprivate`` follow.
        """
        columns: dict[str, NDArray[np.float64]] = {}
        pve, pve_total = self.pve_values, self.pve_total_values
        for i, m in enumerate(self.methods):
            columns[f"scree_{m}"] = np.array(self.values[i])
            columns[f"pve_{m}"] = pve[i]
            columns[f"pve_total_{m}"] = pve_total[i]
        if self.nonprivate_values is not None:
            np_values = np.array(self.nonprivate_values)
            columns["scree_nonprivate"] = np_values
            columns["pve_nonprivate"] = _pve(np_values)
            columns["pve_total_nonprivate"] = _pve_total(np_values, float(self.nonprivate_trace))
        return pd.DataFrame(columns, index=list(self.pc_labels))

    def plot(self, kind: str = "pve", **kwargs: Any) -> Axes:
        """Draw the scree or PVE curves; see :func:`dppca.plotting.plot_scree`."""
        from .plotting.scree import plot_scree

        return plot_scree(self, kind=kind, **kwargs)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        text = (
            f"ScreeResult(p={self.p}, k={self.k}, n={self.n}, methods={self.methods!r}, "
            f"eps={self.cost.eps:g}, delta={self.cost.delta:g}"
        )
        if self.has_comparison:
            text += ", with non-private comparison"
        return text + ")"


# --------------------------------------------------------------------------
# Pre-noise statistics (module-level so that tests can check sensitivities)
# --------------------------------------------------------------------------


def _paired_differences(data: NDArray[np.float64], order: NDArray[np.int64]) -> NDArray:
    """``(x_a - x_b) / sqrt(2)`` for consecutive entries ``a, b`` of ``order``."""
    m = data.shape[0] // 2
    first, second = order[0 : 2 * m : 2], order[1 : 2 * m : 2]
    with np.errstate(over="ignore"):  # an overflow must not announce a huge row
        return (data[first] - data[second]) / math.sqrt(2.0)


def _clipped_statistic(w: NDArray[np.float64], clip: float) -> NDArray[np.float64]:
    """Mean of ``min(w, clip)`` per column; L2 sensitivity ``sqrt(k) clip / m``."""
    return np.minimum(w, clip).mean(axis=0)


def _winsorized_statistic(
    w: NDArray[np.float64], lower: NDArray[np.float64], upper: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Mean of ``clamp(w, lower, upper)`` per column; L2 sensitivity ``||upper - lower|| / m``."""
    return np.clip(w, lower, upper).mean(axis=0)


def _huber_gradient(
    w: NDArray[np.float64], mu: NDArray[np.float64], tau: NDArray[np.float64], eta0: float
) -> NDArray[np.float64]:
    """One descent step's update ``eta0 * mean clamp(w - mu, -tau, tau)``.

    L2 sensitivity ``2 eta0 ||tau|| / m``.
    """
    return eta0 * np.clip(w - mu, -tau, tau).mean(axis=0)


def _m2_values(w: NDArray[np.float64]) -> NDArray[np.float64]:
    """``s_j = (w_{2j-1} - w_{2j})^2 / 2``: one changed ``w`` changes one ``s_j``."""
    half = w.size // 2
    with np.errstate(over="ignore", invalid="ignore"):  # inf/NaN are left out later
        return (w[0 : 2 * half : 2] - w[1 : 2 * half : 2]) ** 2 / 2.0


def _dyadic_bins(values: NDArray[np.float64], k_min: int, k_max: int) -> NDArray[np.int64]:
    """Bin ``clamp(floor(log2 u), k_min, k_max) - k_min``; 0 goes to the first bin.

    Non-finite or negative values get -1 (they are left out).
    """
    ok = np.isfinite(values) & (values >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.floor(np.log2(np.where(ok, values, 1.0)))
    idx = np.where(values == 0, k_min, np.clip(raw, k_min, k_max)).astype(np.int64) - k_min
    return np.where(ok, idx, -1)


def _m2_histogram(w: NDArray[np.float64], k_min: int, k_max: int, blocks: int) -> NDArray:
    """Dyadic histogram of block medians of the ``s_j`` (rule ``"mode"``).

    One changed ``w`` changes one ``s_j``, hence at most one block median,
    which moves from one bin to another: L1 sensitivity 2.
    """
    s = _m2_values(w)
    n_blocks = min(blocks, s.size)
    size = s.size // n_blocks
    medians = np.array(
        [
            np.median(s[t * size : (t + 1) * size if t < n_blocks - 1 else s.size])
            for t in range(n_blocks)
        ]
    )
    idx = _dyadic_bins(medians, k_min, k_max)
    return np.bincount(idx[idx >= 0], minlength=k_max - k_min + 1)


def _m2_median_utility(w: NDArray[np.float64], k_min: int, k_max: int) -> NDArray:
    """Utility of each dyadic bin as the bin of the median of the ``s_j`` (rule ``"median"``).

    ``-max(below - N/2, N/2 - upto, 0)`` with ``below``/``upto`` the numbers of
    values in lower bins and in bins up to this one. One changed ``s_j``
    moves every count by at most 1, so every utility by at most 1.
    """
    idx = _dyadic_bins(_m2_values(w), k_min, k_max)
    counts = np.bincount(idx[idx >= 0], minlength=k_max - k_min + 1).astype(np.float64)
    upto = np.cumsum(counts)
    below = upto - counts
    half = idx.size / 2.0
    return -np.maximum(np.maximum(below - half, half - upto), 0.0)


def _trace_statistic(sq: NDArray[np.float64], clip: float) -> float:
    """Mean of ``min(||z_i||^2, clip)``; sensitivity ``clip / m``."""
    return float(np.minimum(sq, clip).mean())


def _sigma(sensitivity: float, eps: float, delta: float, calibration: str) -> float:
    """Gaussian scale; zero when the statistic cannot move (sensitivity 0)."""
    if sensitivity == 0:
        return 0.0
    return gaussian_sigma(sensitivity, eps, delta, calibration)


# --------------------------------------------------------------------------
# Estimators
# --------------------------------------------------------------------------


def _halves(m: int) -> tuple[slice, slice]:
    half = m // 2
    return slice(0, half), slice(half, m)


def _trace_release(
    sq: NDArray[np.float64],
    *,
    eps: float,
    delta: float,
    calibration: str,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """Private total variance and the private upper quantile of ``||z||^2``."""
    first, second = _halves(sq.size)
    level = capped_quantile_level(_TRACE_QUANTILE, sq[first].size, eps / 2, _TARGET_MARGIN)
    upper = unbounded_quantile(
        sq[first], lower=0.0, upper=_TRACE_CAP, beta=_TRACE_BETA, q=level,
        eps1=eps / 2, eps2=eps / 2, rng=rng,
    )  # fmt: skip
    rest = sq[second]
    sigma = _sigma(upper / rest.size, eps, delta, calibration)
    value = float(gaussian_noise(_trace_statistic(rest, upper), sigma, rng))
    return max(value, 0.0), upper


def _clipped(
    w: NDArray[np.float64], clip: float, *, eps: float, delta: float, calibration: str,
    rng: np.random.Generator,
) -> NDArray[np.float64]:  # fmt: skip
    m, k = w.shape
    sigma = _sigma(math.sqrt(k) * clip / m, eps, delta, calibration)
    return np.maximum(gaussian_noise(_clipped_statistic(w, clip), sigma, rng), 0.0)


def _pmwm(
    w: NDArray[np.float64], control: PMWMControl, *, eps: float, delta: float,
    calibration: str, rng: np.random.Generator,
) -> NDArray[np.float64]:  # fmt: skip
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
    for j in range(k):
        hi = unbounded_quantile(
            wq[:, j], lower=control.lower, upper=control.upper, beta=control.beta, q=level,
            eps1=per_quantile / 2, eps2=per_quantile / 2, rng=rng,
        )  # fmt: skip
        lo = control.lower
        if control.lower_quantile:
            lo = unbounded_quantile(
                wq[:, j], lower=control.lower, upper=control.upper, beta=control.beta,
                q=trim, eps1=per_quantile / 2, eps2=per_quantile / 2, rng=rng,
            )  # fmt: skip
        if math.isfinite(lo) and math.isfinite(hi) and lo <= hi:
            lower[j], upper[j] = lo, hi
    sensitivity = float(np.linalg.norm(upper - lower)) / wm.shape[0]
    sigma = _sigma(sensitivity, eps_mean, delta, calibration)
    return np.maximum(gaussian_noise(_winsorized_statistic(wm, lower, upper), sigma, rng), 0.0)


def _huber_settings(m: int, control: HuberControl) -> tuple[int, int]:
    steps = control.steps if control.steps is not None else max(1, math.ceil(math.log(m)))
    blocks = control.blocks if control.blocks is not None else max(1, math.isqrt(m) // 2)
    return steps, blocks


def _huber(
    w: NDArray[np.float64], control: HuberControl, *, eps: float, delta: float,
    calibration: str, rng: np.random.Generator, tau_cap: float | None = None,
) -> NDArray[np.float64]:  # fmt: skip
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
    return np.maximum(mu, 0.0)


def _method_cost(
    method: str, control: Any, *, eps: float, delta: float, k: int, calibration: str
) -> PrivacyCost:
    gauss = f"gaussian ({calibration})"
    if method == "clipped":
        return PrivacyCost(eps, delta, gauss, f"clipped scree ({k} values)")
    if method == "pmwm":
        if control.split:
            return PrivacyCost(
                eps, delta,
                f"pure-DP quantiles and {gauss} mean on disjoint halves (parallel composition)",
                f"PMWM scree ({k} values) and its winsorizing levels",
            )  # fmt: skip
        eps_q = eps * control.quantile_share
        return compose(
            [
                PrivacyCost(eps_q, 0.0, "unbounded quantile (pure DP)",
                            "PMWM winsorizing levels"),
                PrivacyCost(eps - eps_q, delta, gauss, f"PMWM scree ({k} values)"),
            ],
            released=f"PMWM scree ({k} values)",
        )  # fmt: skip
    eps_m2 = eps * control.m2_frac
    m2_mechanism = (
        "exponential mechanism (median bin)"
        if control.m2_rule == "median"
        else "laplace (noisy arg-max)"
    )
    return compose(
        [
            PrivacyCost(eps_m2, 0.0, m2_mechanism, "Huber scale proxies"),
            PrivacyCost(eps - eps_m2, delta, f"{gauss}, gradient steps composed as one",
                        f"Huber scree ({k} values)"),
        ],
        released=f"Huber scree ({k} values)",
    )  # fmt: skip


def _mono(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Least-squares non-increasing fit of the non-negative part, clipped at 0."""
    fitted = isotonic_regression(np.maximum(values, 0.0), increasing=False).x
    return np.maximum(fitted, 0.0)


# --------------------------------------------------------------------------
# Public function
# --------------------------------------------------------------------------


def _resolve_methods(method: object) -> tuple[str, ...]:
    items = [method] if isinstance(method, str) else method
    if not isinstance(items, Sequence) or isinstance(items, bytes) or not items:
        raise TypeError(
            "method must be one of 'clipped', 'pmwm', 'huber' or a non-empty list of them; "
            f"got {method!r}."
        )
    out: list[str] = []
    for m in items:
        check_choice(m, "method", METHODS)
        if m in out:
            raise ValueError(f"method lists {m!r} twice; name each method once.")
        out.append(m)
    return tuple(out)


def _resolve_controls(control: object, methods: tuple[str, ...]) -> dict[str, Any]:
    given: dict[str, Any] = {}
    if control is None:
        pass
    elif isinstance(control, tuple(_CONTROLS.values())):
        name = next(m for m, cls in _CONTROLS.items() if isinstance(control, cls))
        given[name] = control
    elif isinstance(control, Mapping):
        for name, value in control.items():
            check_choice(name, "control key", METHODS)
            if not isinstance(value, _CONTROLS[name]):
                raise TypeError(
                    f"control[{name!r}] must be a {_CONTROLS[name].__name__}; "
                    f"got {type(value).__name__}."
                )
            given[name] = value
    else:
        raise TypeError(
            "control must be None, a ClippedControl, PMWMControl or HuberControl, or a dict "
            f"mapping method names to them; got {type(control).__name__}."
        )
    unused = [name for name in given if name not in methods]
    if unused:
        raise ValueError(
            f"control is given for {', '.join(unused)} but method={list(methods)!r}; "
            "add the method or drop its control."
        )
    return {m: given.get(m, _CONTROLS[m]()) for m in methods}


def dp_scree(
    X: Data,
    k: int | None = None,
    *,
    eps: float,
    delta: float,
    method: ScreeMethod | Sequence[ScreeMethod] = "clipped",
    control: Any = None,
    directions: DirectionsResult | Any = None,
    public_directions: bool = False,
    direction_share: float = 0.5,
    trace_share: float = 0.1,
    pairing: Literal["random", "consecutive"] = "random",
    mono: bool = True,
    compare: bool = False,
    random_state: RandomStateLike = None,
    calibration: Calibration = "classic",
    ties: Ties = "error",
    budget: Budget | None = None,
) -> ScreeResult:
    """Private variances (scree values) and PVE along PC directions.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        Numeric data, n >= 4. Not modified, centred or scaled.
    k : int, default=None
        Number of components, in [1, p]; None means p.
    eps : float
        Total epsilon of the call, > 0.
    delta : float
        Total delta of the call, in (0, 1).
    method : {"clipped", "pmwm", "huber"} or list of them, default="clipped"
        Estimator(s). Several methods share the budget left after the
        directions and the total variance in equal parts.
    control : control object or dict, optional
        A :class:`ClippedControl`, :class:`PMWMControl` or
        :class:`HuberControl` (matched to its method by type), or a dict
        ``{method: control}``. Missing ones take their defaults, which do not
        look at the data.
    directions : DirectionsResult or array of shape (p, >=k), optional
        None (default): private directions are released in this call by
        :func:`dppca.dp_pc_dir` with ``direction_share`` of the budget. A
        private ``DirectionsResult`` is reused at no new cost. A non-private
        ``DirectionsResult`` (from :func:`dppca.pc_dir`) is refused unless
        ``public_directions=True``. A matrix with orthonormal columns is taken
        as public: the caller vouches that it does not come from these data.
    public_directions : bool, default=False
        Confirms that a non-private ``DirectionsResult`` comes from public data.
    direction_share : float, default=0.5
        Share of (eps, delta) for the internal directions, in (0, 1); unused
        when ``directions`` is given.
    trace_share : float, default=0.1
        Share of (eps, delta) for the total variance, in (0, 1).
    pairing : {"random", "consecutive"}, default="random"
        How rows are paired for the differences: a uniformly random pairing
        drawn from ``random_state`` (its expectation over pairings is the
        sample covariance, whatever the row order), or rows (1, 2), (3, 4),
        ... (only sensible when the row order is unrelated to the data, since
        groups stored together would hide the between-group variance).
    mono : bool, default=True
        Replace each method's values by their non-increasing least-squares
        fit, clipped at 0 (post-processing).
    compare : bool, default=False
        Also attach the non-private top-k sample covariance eigenvalues and
        total variance, for comparison plots. These are NOT private: do not
        publish them.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise and of the pairing. Use fresh entropy (None) for
        a release you publish.
    calibration : {"classic", "analytic"}, default="classic"
        Gaussian calibration for every Gaussian step.
    ties : {"error", "zero"}, default="error"
        Passed to :func:`dppca.dp_pc_dir` for the internal directions.
    budget : Budget, optional
        Checked before the data are touched; the call's cost is spent after.

    Returns
    -------
    ScreeResult
        ``values`` (one row per method), ``scree``, ``pve``, ``pve_total``,
        ``trace``, ``directions`` and ``cost``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (checked before any computation).
    BudgetExceededError
        When ``budget`` cannot afford the call.
    TiedRowsError
        With ``ties="error"`` when the internal directions meet two (almost)
        coinciding rows; the error itself reveals that such rows exist.

    Warns
    -----
    PrivacyWarning
        With ``calibration="classic"`` when a Gaussian step gets eps >= 1.

    See Also
    --------
    dp_pc_dir : the private directions.
    dppca.plotting.plot_scree : draws the result.

    Notes
    -----
    Privacy: neighbouring datasets have the same ``n`` and differ in one row.
    Rows are paired in an order that depends only on ``n`` and the generator,
    giving ``m = floor(n / 2)`` differences ``z_i = (x_a - x_b) / sqrt(2)``;
    replacing a row changes exactly one ``z_i`` (none if it is the unpaired row
    of an odd ``n``). For a unit direction ``v``, ``E[(v' z_i)^2] = v' Sigma v``
    for any mean, so nothing is centred. With ``w_il = (v_l' z_i)^2`` and the
    directions fixed (a private release or public), the parts are:

    * directions (when computed here): :func:`dppca.dp_pc_dir` with
      ``direction_share * (eps, delta)``;
    * total variance, ``trace_share * (eps, delta)``: the pairs are split in
      halves A and B; a pure-DP quantile (level 0.99, or lower at small
      epsilon; geometric bins 1 % wide) of ``||z_i||^2`` on A gives a level
      ``U``, then the mean of
      ``min(||z_i||^2, U)`` on B (sensitivity ``U / |B|``) gets Gaussian noise.
      A row touches only one half, so the cost is the share itself (parallel
      composition);
    * each method gets an equal part ``(eps_m, delta_m)`` of the rest:

      - clipped: the k means of ``min(w_il, C)`` form a vector whose L2
        sensitivity is ``sqrt(k) C / m``; one Gaussian release. The default
        ``C`` is the released ``U`` above (post-processing).
      - pmwm: per component a pure-DP upper quantile (eps_m / k, split evenly
        between the two noise draws of the search) on half A, then the
        k-vector of winsorized means ``clamp(w_il, L_l, U_l)`` on half B with
        L2 sensitivity ``||U - L|| / |B|`` and ``(eps_m, delta_m)``; parallel
        composition again. With ``split=False`` both use all pairs and the
        budget is divided.
      - huber: per component, a scale proxy from the values
        ``s_j = (w_{2j-1} - w_{2j})^2 / 2`` (one replaced row changes one
        ``s_j``): by default the exponential mechanism picks the dyadic bin of
        their median (utility sensitivity 1, ``m2_frac eps_m / k`` each); with
        ``m2_rule="mode"`` the noisy arg-max of a histogram of block medians
        with Laplace noise of scale ``2 k / (m2_frac eps_m)`` (a replaced row
        moves one median between two bins, L1 sensitivity 2). The proxy sets
        the clipping level ``tau``, capped at the released ``U``
        (post-processing, so a wrong bin cannot inflate the noise). Then T
        steps of noisy gradient descent, each a k-vector with L2 sensitivity
        ``D = 2 eta0 ||tau|| / m`` and the same Gaussian scale. T adaptive
        Gaussian releases with sensitivity ``D`` compose exactly to one Gaussian
        mechanism with sensitivity ``sqrt(T) D`` (Gaussian differential
        privacy), so the scale is calibrated to ``sqrt(T) D`` and
        ``((1 - m2_frac) eps_m, delta_m)``: about ``sqrt(T)`` times less noise
        than dividing the budget into T equal parts.

    The monotone fit, the clipping at 0 and the PVE are post-processing. PVE
    over all p components divides by ``max(trace, sum of the k values)``. The
    recorded cost is the sum of the parts; when ``directions`` is an earlier
    private release its cost is not added again (count it once, in your
    budget). With ``compare=True`` the result also carries non-private values.

    References
    ----------
    Dong, J., Roth, A. and Su, W. J. (2022). Gaussian differential privacy.
    Journal of the Royal Statistical Society B, 84(1), 3-37.

    Durfee, D. (2023). Unbounded differentially private quantile and maximum
    estimation. NeurIPS.

    McSherry, F. and Talwar, K. (2007). Mechanism design via differential
    privacy. FOCS.

    Examples
    --------
    >>> from dppca import dp_scree
    >>> from dppca.datasets import load_gau
    >>> res = dp_scree(load_gau(), 3, eps=0.9, delta=1e-5, random_state=0)
    >>> res
    ScreeResult(p=20, k=3, n=5000, methods=('clipped',), eps=0.9, delta=1e-05)
    >>> res.to_frame().shape
    (3, 3)
    """
    data, variables = check_data(X, min_rows=4)
    n, p = data.shape
    k = check_k(k, p)
    eps = check_eps(eps)
    delta = check_delta(delta)
    methods = _resolve_methods(method)
    controls = _resolve_controls(control, methods)
    calibration = check_calibration(calibration)
    pairing = check_choice(pairing, "pairing", ("random", "consecutive"))
    trace_share = check_open_unit(trace_share, "trace_share")
    mono = check_bool(mono, "mono")
    compare = check_bool(compare, "compare")
    public_directions = check_bool(public_directions, "public_directions")
    given, release = resolve_directions(directions, p=p, k=k, public_directions=public_directions)
    if given is None:
        source = "private (this call)"
    else:
        source = "public (caller)" if release is None else "private (earlier release)"
    if given is None:
        direction_share = check_open_unit(direction_share, "direction_share")
        if direction_share + trace_share >= 1:
            raise ValueError(
                f"direction_share + trace_share must be < 1 to leave budget for the scree; "
                f"got {direction_share!r} + {trace_share!r}."
            )
    else:
        direction_share = 0.0
    rng = check_random_state(random_state)

    m = n // 2
    eps_dir, delta_dir = eps * direction_share, delta * direction_share
    eps_tr, delta_tr = eps * trace_share, delta * trace_share
    n_methods = len(methods)
    eps_m = (eps - eps_dir - eps_tr) / n_methods
    delta_m = (delta - delta_dir - delta_tr) / n_methods
    costs: list[PrivacyCost] = []
    if given is None:
        costs.append(
            PrivacyCost(eps_dir, delta_dir, f"gaussian ({calibration})",
                        f"noisy spherical Kendall matrix ({p} x {p})")
        )  # fmt: skip
    costs.append(
        PrivacyCost(
            eps_tr, delta_tr,
            f"pure-DP quantile and gaussian ({calibration}) mean on disjoint halves "
            "(parallel composition)",
            "total variance and its clipping level",
        )
    )  # fmt: skip
    for name in methods:
        costs.append(
            _method_cost(name, controls[name], eps=eps_m, delta=delta_m, k=k,
                         calibration=calibration)
        )  # fmt: skip
    cost = compose(costs, released=f"private scree ({', '.join(methods)}; {k} components)")
    if budget is not None:
        budget.check(cost)

    if given is None:
        release = dp_pc_dir(
            data, k, eps=eps_dir, delta=delta_dir, random_state=rng,
            calibration=calibration, ties=ties,
        )  # fmt: skip
        vectors = np.array(release.directions)
    else:
        vectors = given
    order = random_pairing(n, rng) if pairing == "random" else np.arange(n, dtype=np.int64)
    z = _paired_differences(data, order)
    # Squares of finite data can still overflow; inf (never NaN) keeps every
    # clipped or winsorized statistic bounded, so the sensitivities still hold.
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.nan_to_num(np.einsum("ij,ij->i", z, z), nan=np.inf)
        w = np.nan_to_num((z @ vectors) ** 2, nan=np.inf)
    trace, upper = _trace_release(sq, eps=eps_tr, delta=delta_tr, calibration=calibration, rng=rng)
    rows = []
    for name in methods:
        ctl = controls[name]
        kw = {"eps": eps_m, "delta": delta_m, "calibration": calibration, "rng": rng}
        if name == "clipped":
            est = _clipped(w, ctl.clip if ctl.clip is not None else upper, **kw)
        elif name == "pmwm":
            est = _pmwm(w, ctl, **kw)
        else:
            est = _huber(w, ctl, tau_cap=upper, **kw)
        rows.append(_mono(est) if mono else est)
    values = np.vstack(rows)

    nonprivate_values = nonprivate_trace = None
    if compare:
        cov = np.cov(data, rowvar=False).reshape(p, p)
        eig = np.linalg.eigvalsh(cov)[::-1]
        nonprivate_values = np.ascontiguousarray(eig[:k])
        nonprivate_trace = float(np.trace(cov))
    if budget is not None:
        budget.spend(cost)
    return ScreeResult(
        methods=methods,
        values=values,
        trace=trace,
        directions=np.ascontiguousarray(vectors),
        directions_source=source,
        directions_release=release,
        n=n,
        n_pairs=m,
        variables=variables,
        cost=cost,
        calibration=calibration,
        mono=mono,
        nonprivate_values=nonprivate_values,
        nonprivate_trace=nonprivate_trace,
    )
