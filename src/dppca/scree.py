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
from dataclasses import InitVar, dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from ._lazy import isotonic_regression
from ._lazy import pandas as pd
from ._pairs import (
    clipped_moments_all_pairs,
    clipped_moments_pairings,
    moment_sensitivity,
    paired_differences,
)
from ._results import ResultMixin, computed_private, directions_source_name
from ._typing import Accuracy, Calibration, Data, RandomStateLike, Ties
from ._validation import (
    apply_bounds,
    check_accuracy,
    check_bool,
    check_bounds,
    check_budget,
    check_calibration,
    check_choice,
    check_data,
    check_delta,
    check_delta_for_n,
    check_eps,
    check_k,
    check_open_unit,
    check_positive_int,
    check_random_state,
    check_real,
)
from .accounting import Budget, PrivacyCost, compose, scale_to_tight
from .directions import (
    DirectionsResult,
    dp_pc_dir,
    refuse_own_directions,
    resolve_directions,
)
from .forecast import (
    CLIP_RATIO,
    FAILURE_TOLERANCE,
    PVE_TOLERANCE,
    Forecast,
    direction_noise_norm,
    direction_problem,
    enforce,
)
from .mechanisms import (
    capped_quantile_level,
    exponential_mechanism,
    gaussian_noise,
    gaussian_sigma,
    kendall_sensitivity,
    kendall_sigma,
    ladder_failure_bound,
    ladder_quantile,
    laplace_noise,
    quantile_overshoot_bound,
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
    "ScreePlan",
    "ScreeResult",
    "dp_scree",
    "plan_scree",
]

ScreeMethod = Literal["clipped", "pmwm", "huber"]
METHODS: tuple[str, ...] = ("clipped", "pmwm", "huber")

# Public constants of the clip level: the quantile of the squared pair norms it
# aims at, and the factor-2 ladders it is chosen from (exponents of two without
# bounds; steps down from the largest possible value with bounds). A short
# ladder keeps the scan's chance of stopping below the data small at small n.
_CLIP_QUANTILE, _CLIP_QUANTILE_MAX, _CLIPPED_PAIRS = 0.9, 0.995, 5.0
_LADDER_LOW, _LADDER_HIGH = -30, 70
_LADDER_BOUNDED = 12
# The scan's target noise may pass the number of pairs, and the scan then runs
# past the data. A margin of 3 / eps1 below that number bounds the chance of
# passing two or more bins (a clip level 4 times too high) by about e^-3 / 3.
_SCAN_MARGIN = 3.0
_SCAN_SHARE_MIN, _SCAN_SHARE_MAX = 0.05, 0.3
# Above this many rows the moments are averaged over _PAIRINGS random perfect
# matchings of the rows instead of all pairs: the same sensitivity, O(n) instead
# of O(n^2) time, and a sampling error close to the all-pairs one.
_ALL_PAIRS_MAX_N = 4000
_PAIRINGS = 16
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

    The variances along the directions and the total variance are released
    together, from pair differences ``z`` whose squared norm is clipped at a
    level ``C`` (``z`` is scaled down to norm ``sqrt(C)`` when longer).

    Parameters
    ----------
    clip : float, optional
        Public clip level ``C > 0`` for the squared norm of the pair
        differences ``z = (x_a - x_b) / sqrt(2)`` (squared data units). It
        should be a few times the total variance you expect. None (default)
        chooses it privately with a pure-DP quantile scan on a short public
        ladder (``trace_share`` of the budget); with public ``bounds`` the
        ladder runs down from the largest value the bounds allow.
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


@computed_private
@dataclass(frozen=True, eq=False, repr=False)
class ScreeResult(ResultMixin):
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
    directions_source : {"private", "private release", "public"}
        Where the directions came from: released privately in this call, an
        earlier private release passed in, or public directions the caller
        vouched for (the same names as :attr:`ScoreResult.directions_source`).
        The old spellings ``"private (this call)"``, ``"private (earlier
        release)"`` and ``"public (caller)"`` are accepted and still compare
        equal, with a ``FutureWarning``.
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
    private : bool
        Computed: False when the non-private comparison is attached
        (``compare=True``), else True. Passing ``private=`` to the
        constructor is deprecated and has no effect.
    noise_sd : ndarray of shape (n_methods, k) or None
        Standard deviation of the noise added to each released variance
        (before the monotone fit); public, for intervals on the figure.
    trace_sd : float or None
        Standard deviation of the noise on the released total variance.
    clip_level : float or None
        The clip level ``C`` of the squared pair norms (public or released).
    bounds : ndarray of shape (p, 2) or None
        The public bounds the data were clipped to, if any.
    forecast : Forecast or None
        The data-free accuracy forecast made before the release.
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
    private: InitVar[bool | None] = None  # deprecated and ignored: computed
    noise_sd: NDArray[np.float64] | None = None
    trace_sd: float | None = None
    clip_level: float | None = None
    bounds: NDArray[np.float64] | None = None
    forecast: Forecast | None = None

    def __post_init__(self, private: bool | None) -> None:
        source = directions_source_name(self.directions_source)
        object.__setattr__(self, "directions_source", source)
        arrays = (self.values, self.directions, self.nonprivate_values, self.noise_sd, self.bounds)
        for a in arrays:
            if a is not None:
                a.setflags(write=False)

    def nonprivate_parts(self) -> tuple[str, ...]:
        """The comparison fields present (``nonprivate_values``, ``nonprivate_trace``)."""
        return tuple(
            name
            for name in ("nonprivate_values", "nonprivate_trace")
            if getattr(self, name) is not None
        )

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
        """Whether non-private comparison values are attached (``compare=True``)."""
        return self.nonprivate_values is not None

    @property
    def nonprivate_pve(self) -> NDArray[np.float64] | None:
        """PVE of the k sample-covariance eigenvalues (not private); None without comparison."""
        if self.nonprivate_values is None:
            return None
        return _pve(np.asarray(self.nonprivate_values))

    @property
    def nonprivate_pve_total(self) -> NDArray[np.float64] | None:
        """Proportions of the sample total variance (not private); None without comparison."""
        if self.nonprivate_values is None:
            return None
        trace = float(self.nonprivate_trace or 0.0)
        return _pve_total(np.asarray(self.nonprivate_values), trace)

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
            trace = self.nonprivate_trace
            columns["pve_total_nonprivate"] = _pve_total(np_values, float(trace or 0.0))
        return pd.DataFrame(columns, index=list(self.pc_labels))

    def plot(self, kind: str = "pve_total", *, ax: Any = None, **kwargs: Any) -> Axes:
        """Draw the scree or PVE curves (no new privacy cost).

        Parameters
        ----------
        kind : {"pve_total", "pve", "scree"}, default="pve_total"
            What to draw; see :func:`dppca.plotting.plot_scree`.
        ax : matplotlib Axes, optional
            Where to draw; a new figure by default.
        **kwargs
            Passed to :func:`dppca.plotting.plot_scree`.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on, as for every result's ``plot()``.
        """
        from .plotting.scree import plot_scree

        return plot_scree(self, kind=kind, ax=ax, **kwargs)  # type: ignore[arg-type]

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


_paired_differences = paired_differences  # the name the tests and earlier code use


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


def _clip_ladder(box: tuple[NDArray, NDArray] | None) -> NDArray[np.float64]:
    """Public candidate clip levels for the squared pair norms (factor-2 ladder).

    With public bounds the largest possible ``||z||^2`` is half the squared
    diagonal of the box, and the ladder runs 12 octaves down from there: data
    spread over less than an eighth of their bounds (in each variable) meet the
    lowest candidate, which then clips nothing and only adds noise, never bias.
    Without bounds it spans ``2**-30 .. 2**70`` (squared data units). Both are
    fixed before any data are read.
    """
    if box is None:
        return np.ldexp(1.0, np.arange(_LADDER_LOW, _LADDER_HIGH + 1))
    top = 0.5 * float(np.sum((box[1] - box[0]) ** 2))
    return top * np.ldexp(1.0, np.arange(-_LADDER_BOUNDED, 1))


def _auto_scan_share(n: int, eps: float, bins: int) -> float:
    """Smallest share of eps whose clip scan the forecast does not flag.

    The share is searched between 0.05 and 0.3 of eps on the public failure
    bound of :func:`_scan_failure` (the scan stops below the data, or runs
    two bins past them), at the level the scan would use, against the
    forecast's :data:`dppca.forecast.FAILURE_TOLERANCE`. A larger share buys
    a safer scan with budget the moments then lack; at 150 to 600 rows and
    eps near 1 the cap of 0.3 binds. On the accuracy benchmark's small tables
    (``benchmarks/bench_accuracy.py``) this rule scored better than a 1 %
    target, which spent up to 0.3 of eps on the scan at those sizes.
    """
    m = n // 2
    for share in np.linspace(_SCAN_SHARE_MIN, _SCAN_SHARE_MAX, 26):
        eps_scan = eps * float(share)
        level = _scan_level(m, eps_scan, eps * (1 - float(share)) / 2)
        if _scan_failure(bins, m, level, eps_scan) <= FAILURE_TOLERANCE:
            return float(share)
    return _SCAN_SHARE_MAX


def _scan_failure(bins: int, m: int, level: float, eps_scan: float) -> float:
    """Public bound on the chance that the clip scan lands below the data or 4x too high."""
    below = ladder_failure_bound(bins, m, level, eps_scan / 2)
    over = quantile_overshoot_bound(2, m, level, eps_scan / 2, eps_scan / 2)
    return min(1.0, below + over)


def _scan_level(m: int, eps_scan: float, eps_moments: float) -> float:
    """Quantile level of the clip scan (public: n and the epsilons only).

    Clipping trades bias (the pairs beyond the level) for noise (proportional
    to the level over ``eps m``). Aiming at ``1 - 5 / (eps_moments m)`` clips
    about ``5 / eps`` pairs, the usual balance for a private mean, kept between
    0.9 and 0.995; the scan's own noise may lower it further
    (:func:`dppca.mechanisms.capped_quantile_level`).
    """
    aim = min(max(1.0 - _CLIPPED_PAIRS / (eps_moments * m), _CLIP_QUANTILE), _CLIP_QUANTILE_MAX)
    return capped_quantile_level(aim, m, eps_scan / 2.0, _SCAN_MARGIN)


def _joint_noise(
    n: int, m: int, all_pairs: bool, eps: float, delta: float, calibration: str
) -> tuple[str, float]:
    """Mechanism and noise standard deviation per unit clip level of the moment release.

    Laplace noise on the L1 sensitivity and Gaussian noise on the L2
    sensitivity of :func:`dppca._pairs.moment_sensitivity` are both valid; the
    one with the smaller standard deviation is used. The choice depends on
    n, eps, delta and the calibration only, never on the data.
    """
    l1 = moment_sensitivity(n, 1.0, all_pairs=all_pairs, norm="l1")
    l2 = moment_sensitivity(n, 1.0, all_pairs=all_pairs, norm="l2")
    laplace_sd = math.sqrt(2.0) * l1 / eps
    gauss_sd = gaussian_sigma(l2, eps, delta, calibration)
    if laplace_sd <= gauss_sd:
        return "laplace", laplace_sd
    return "gaussian", gauss_sd


def _moment_release(
    data: NDArray[np.float64],
    orders: list[NDArray[np.int64]],
    vectors: NDArray[np.float64],
    clip: float,
    *,
    all_pairs: bool,
    shift: NDArray[np.float64] | None,
    kind: str,
    eps: float,
    delta: float,
    calibration: str,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], float, float]:
    """Private clipped moments along ``vectors`` and in total; and their noise sd.

    ``kind`` is the plan's choice of noise (:func:`_joint_noise`).
    """
    n = data.shape[0]
    if all_pairs:
        w, s = clipped_moments_all_pairs(data, vectors, clip, shift)
    else:
        w, s = clipped_moments_pairings(data, vectors, clip, orders)
    value = np.append(w, s)
    if kind == "laplace":
        scale = moment_sensitivity(n, clip, all_pairs=all_pairs, norm="l1") / eps
        noisy, sd = laplace_noise(value, scale, rng), math.sqrt(2.0) * scale
    else:
        l2 = moment_sensitivity(n, clip, all_pairs=all_pairs, norm="l2")
        sd = _sigma(l2, eps, delta, calibration)
        noisy = gaussian_noise(value, sd, rng)
    return np.maximum(noisy[:-1], 0.0), max(float(noisy[-1]), 0.0), sd


def _pmwm(
    w: NDArray[np.float64], control: PMWMControl, *, eps: float, delta: float,
    calibration: str, rng: np.random.Generator,
) -> tuple[NDArray[np.float64], float]:  # fmt: skip
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
    noisy = gaussian_noise(_winsorized_statistic(wm, lower, upper), sigma, rng)
    return np.maximum(noisy, 0.0), sigma


def _huber_settings(m: int, control: HuberControl) -> tuple[int, int]:
    steps = control.steps if control.steps is not None else max(1, math.ceil(math.log(m)))
    blocks = control.blocks if control.blocks is not None else max(1, math.isqrt(m) // 2)
    return steps, blocks


def _huber(
    w: NDArray[np.float64], control: HuberControl, *, eps: float, delta: float,
    calibration: str, rng: np.random.Generator, tau_cap: float | None = None,
) -> tuple[NDArray[np.float64], float]:  # fmt: skip
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


def _method_cost(
    method: str, control: Any, *, eps: float, delta: float, k: int, calibration: str
) -> PrivacyCost:
    """The record of one extra method at ``(eps, delta)``, each part with its noise.

    Gaussian parts whose sensitivity is set by an earlier private output (the
    winsorizing levels, the Huber clipping levels) record their noise
    multiplier; the split PMWM (parallel composition) stays a generic part.
    """
    gauss = f"gaussian ({calibration})"

    def multiplier(e: float) -> float:
        return gaussian_sigma(1.0, e, delta, calibration)

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
                            "PMWM winsorizing levels", kind="pure"),
                PrivacyCost(eps - eps_q, delta, gauss, f"PMWM scree ({k} values)",
                            kind="gaussian", multiplier=multiplier(eps - eps_q)),
            ],
            released=f"PMWM scree ({k} values)",
        )  # fmt: skip
    eps_m2 = eps * control.m2_frac
    if control.m2_rule == "median":
        m2 = PrivacyCost(eps_m2, 0.0, "exponential mechanism (median bin)",
                         "Huber scale proxies", kind="pure")  # fmt: skip
    else:  # k histograms, each with L1 sensitivity 2, Laplace scale 2 k / eps_m2
        m2 = PrivacyCost(eps_m2, 0.0, "laplace (noisy arg-max)", "Huber scale proxies",
                         kind="laplace", sensitivity=2.0 * k, scale=2.0 * k / eps_m2)  # fmt: skip
    return compose(
        [
            m2,
            PrivacyCost(eps - eps_m2, delta, f"{gauss}, gradient steps composed as one",
                        f"Huber scree ({k} values)", kind="gaussian",
                        multiplier=multiplier(eps - eps_m2)),
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
    direction_share: float = 0.35,
    trace_share: float | None = None,
    pairing: Literal["all", "random", "consecutive"] | None = None,
    mono: bool = True,
    compare: bool = False,
    random_state: RandomStateLike = None,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    budget: Budget | None = None,
    bounds: Any = None,
    accuracy: Accuracy = "warn",
    allow_large_delta: bool = False,
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
        Total delta of the call, in (0, 1/n).
    method : {"clipped", "pmwm", "huber"} or list of them, default="clipped"
        Estimator(s). ``"clipped"`` is the joint release of the variances and
        the total variance (always made, since it gives the total); the others
        are extra releases that share the budget left after the directions and
        the clip level equally with it.
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
    direction_share : float, default=0.35
        Share of (eps, delta) for the internal directions, in (0, 1), as a
        weight of the basic split (see Notes); unused when ``directions`` is
        given.
    trace_share : float, default=None
        Share of eps for choosing the clip level of the variance release, in
        (0, 1); unused with a public ``ClippedControl(clip=...)``. None takes
        the smallest share whose chance of a clip level below the data
        (:func:`dppca.mechanisms.ladder_failure_bound`) is 1 %, kept between
        0.05 and 0.3 (a function of n and eps only).
    pairing : {"all", "random", "consecutive"}, default=None
        Pairs of rows the moments are averaged over. ``"all"`` (the default
        up to 4000 rows) uses every pair: without clipping this is exactly
        the sample variance, so no sampling error is added. ``"random"`` (the
        default above 4000 rows) averages 16 uniformly random pairings (perfect
        matchings of the rows, drawn from ``random_state``); ``"consecutive"``
        pairs rows (1, 2), (3, 4), ... once (only sensible when the row order
        is unrelated to the data). The
        clip-level scan and the ``"pmwm"``/``"huber"`` estimators always use
        disjoint pairs (random unless ``"consecutive"``).
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
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration for every Gaussian step.
    ties : {"zero", "error"}, default="zero"
        Passed to :func:`dppca.dp_pc_dir` for the internal directions.
    budget : Budget, optional
        Checked before the data are touched; the call's cost is spent after.
    bounds : None, (lower, upper), array of shape (p, 2) or mapping, default=None
        Public data domain per variable (see :func:`dppca.dp_pc_dir`). The
        data are clipped to it, and the clip level is searched on a short
        ladder below the largest squared pair norm the bounds allow.
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What to do when the data-free forecast (``result.forecast``) says the
        release would be inaccurate: warn, refuse before reading any data, or
        nothing.
    allow_large_delta : bool, default=False
        Permit ``delta >= 1/n``.

    Returns
    -------
    ScreeResult
        ``values`` (one row per method), ``scree``, ``pve``, ``pve_total``,
        ``trace``, ``directions``, ``noise_sd``, ``forecast`` and ``cost``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (checked before any computation).
    InaccurateReleaseError
        With ``accuracy="error"`` when the forecast finds a problem.
    BudgetExceededError
        When ``budget`` cannot afford the call.
    TiedRowsError
        With ``ties="error"`` when the internal directions meet two coinciding
        rows; the error itself reveals that such rows exist.

    Warns
    -----
    AccuracyWarning
        With ``accuracy="warn"`` when the forecast finds a problem.
    PrivacyWarning
        With ``calibration="classic"`` when a Gaussian step gets eps >= 1.

    See Also
    --------
    dp_pc_dir : the private directions.
    dppca.plotting.plot_scree : draws the result.

    Notes
    -----
    Privacy: neighbouring datasets have the same ``n`` and differ in one row.
    For a pair of rows let ``z = (x_a - x_b) / sqrt(2)``; for a unit direction
    ``v``, ``E[(v' z)^2] = v' Sigma v`` for any mean, so nothing is centred.
    With the directions fixed (a private release or public), the parts are:

    * directions (when computed here): :func:`dppca.dp_pc_dir` with
      ``direction_share * (eps, delta)``;
    * the clip level ``C`` (``trace_share * eps``, pure DP): the pure-DP
      ladder scan :func:`dppca.mechanisms.ladder_quantile` at level 0.9
      (lowered at small ``n eps``) of ``||z||^2`` over disjoint pairs; a row
      is in one pair, so every cumulative count moves by at most one;
    * the joint release ("clipped"): each pair's ``z`` is scaled down to
      norm ``sqrt(C)`` if longer, and the k mean squares along the
      directions and the mean squared norm are released together; their
      L1 and L2 sensitivities (``4 C / n`` and ``2 sqrt(2) C / n`` over all
      pairs; proof in :func:`dppca._pairs.moment_sensitivity`) do not grow
      with k. Laplace or Gaussian noise, whichever is smaller at the
      (eps, delta) of this part (a public choice);
    * each other method gets an equal part ``(eps_m, delta_m)``:

      - pmwm: per component a pure-DP upper quantile (eps_m / k, split evenly
        between the two noise draws of the search) on half A of the disjoint
        pairs, then the k-vector of winsorized means ``clamp(w_il, L_l, U_l)``
        on half B with L2 sensitivity ``||U - L|| / |B|``; parallel
        composition. With ``split=False`` both use all pairs and the budget is
        divided.
      - huber: per component, a scale proxy from the values
        ``s_j = (w_{2j-1} - w_{2j})^2 / 2`` (one replaced row changes one
        ``s_j``): by default the exponential mechanism picks the dyadic bin of
        their median (utility sensitivity 1, ``m2_frac eps_m / k`` each); with
        ``m2_rule="mode"`` the noisy arg-max of a histogram of block medians
        with Laplace noise of scale ``2 k / (m2_frac eps_m)``. The proxy sets
        the clipping level ``tau``, capped at ``C`` (post-processing). Then T
        steps of noisy gradient descent, each a k-vector with L2 sensitivity
        ``D = 2 eta0 ||tau|| / m``; T adaptive Gaussian releases compose
        exactly to one Gaussian mechanism with sensitivity ``sqrt(T) D``
        (Gaussian differential privacy).

    With public ``bounds`` the data are clipped to them row by row first, so
    neighbours stay neighbours. The monotone fit, the clipping at 0 and the PVE
    are post-processing. PVE over all p components divides by
    ``max(trace, sum of the k values)``. Directions passed in as an earlier
    private release are not counted again. With ``compare=True`` the result
    also carries non-private values.

    Composition: the shares above are a basic split of (eps, delta). With
    the analytic calibration every eps share is then multiplied by one
    factor ``t >= 1``, the largest whose tight total
    (:func:`dppca.accounting.tight_total`, which reads each part's noise) is
    still eps at delta; deltas stay as split. ``result.cost`` is (eps, delta)
    with the parts as ``parts`` (their own eps add up to ``t`` eps): every
    part carries less noise than the basic split would give it. The clipped
    moments' sensitivity is ``c C`` with ``C`` chosen privately, so their part
    records the noise multiplier (noise over sensitivity), which is fixed
    before any data are read. The classic calibration keeps the basic split.

    A "public" directions array whose column equals (to 1e-8, up to sign) the
    data's own sample-covariance direction of the same PC is refused before
    anything is spent; see :func:`dppca.directions.refuse_own_directions` for
    why that data-dependent check leaks nothing the caller had not already
    given away.

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
    check_budget(budget)
    data, variables = check_data(X, min_rows=4)
    n, p = data.shape
    k = check_k(k, p)
    eps = check_eps(eps)
    delta = check_delta_for_n(
        check_delta(delta), n, check_bool(allow_large_delta, "allow_large_delta")
    )
    mono = check_bool(mono, "mono")
    compare = check_bool(compare, "compare")
    accuracy = check_accuracy(accuracy)
    box = check_bounds(bounds, variables)
    public_directions = check_bool(public_directions, "public_directions")
    given, release = resolve_directions(directions, p=p, k=k, public_directions=public_directions)
    if given is None:
        source = "private (this call)"
    else:
        source = "public (caller)" if release is None else "private (earlier release)"
    rng = check_random_state(random_state)
    plan = plan_scree(
        n, p, k, eps=eps, delta=delta, method=method, control=control,
        directions_given=given is not None, direction_share=direction_share,
        trace_share=trace_share, pairing=pairing, calibration=calibration,
        bounds=None if box is None else np.column_stack(box),
    )  # fmt: skip
    methods, controls, pairing_rule = plan.methods, plan.controls, plan.pairing
    calibration = check_calibration(calibration)
    public_clip = controls["clipped"].clip if "clipped" in controls else None
    enforce(plan.forecast, accuracy)
    if budget is not None:
        budget.check(plan.cost)
    if given is not None and release is None:
        refuse_own_directions(data, given, range(1, k + 1))

    if box is not None:
        data = apply_bounds(data, box)
    if given is None:
        release = dp_pc_dir(
            data, k, eps=plan.eps_dir, delta=plan.delta_dir, random_state=rng,
            calibration=calibration, ties=ties, accuracy="ignore", allow_large_delta=True,
        )  # fmt: skip
        vectors = np.array(release.directions)
    else:
        vectors = given
    if pairing_rule == "consecutive":
        orders = [np.arange(n, dtype=np.int64)]
    else:
        orders = [random_pairing(n, rng) for _ in range(1 if pairing_rule == "all" else _PAIRINGS)]
    z = _paired_differences(data, orders[0])
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.nan_to_num(np.einsum("ij,ij->i", z, z), nan=np.inf)
    if public_clip is None:
        clip = ladder_quantile(
            sq, plan.ladder, q=plan.scan_level, eps1=plan.eps_scan / 2,
            eps2=plan.eps_scan / 2, rng=rng,
        )  # fmt: skip
    else:
        clip = float(public_clip)
    moments, trace, trace_sd = _moment_release(
        data, orders, vectors, clip, all_pairs=pairing_rule == "all",
        shift=None if box is None else 0.5 * (box[0] + box[1]), kind=plan.noise, eps=plan.eps_m,
        delta=plan.delta_m, calibration=calibration, rng=rng,
    )  # fmt: skip
    with np.errstate(over="ignore", invalid="ignore"):
        w = np.nan_to_num((z @ vectors) ** 2, nan=np.inf)
    rows, sds = [], []
    for name in methods:
        if name == "clipped":
            est, sd = moments, trace_sd
        elif name == "pmwm":
            est, sd = _pmwm(w, controls[name], eps=plan.eps_m, delta=plan.delta_m,
                            calibration=calibration, rng=rng)  # fmt: skip
        else:
            est, sd = _huber(w, controls[name], tau_cap=clip, eps=plan.eps_m,
                             delta=plan.delta_m, calibration=calibration, rng=rng)  # fmt: skip
        rows.append(_mono(est) if mono else est)
        sds.append(np.full(k, sd))

    nonprivate_values = nonprivate_trace = None
    if compare:
        cov = np.cov(data, rowvar=False).reshape(p, p)
        eig = np.linalg.eigvalsh(cov)[::-1]
        nonprivate_values = np.ascontiguousarray(eig[:k])
        nonprivate_trace = float(np.trace(cov))
    if budget is not None:
        budget.spend(plan.cost)
    return ScreeResult(
        methods=methods,
        values=np.vstack(rows),
        trace=trace,
        directions=np.ascontiguousarray(vectors),
        directions_source=source,
        directions_release=release,
        n=n,
        n_pairs=n // 2,
        variables=variables,
        cost=plan.cost,
        calibration=calibration,
        mono=mono,
        nonprivate_values=nonprivate_values,
        nonprivate_trace=nonprivate_trace,
        noise_sd=np.vstack(sds),
        trace_sd=trace_sd,
        clip_level=clip,
        bounds=None if box is None else np.column_stack(box),
        forecast=plan.forecast,
    )


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
            f"direction_share + trace_share must be < 1 to leave budget for the scree; "
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
    direction_share: float = 0.35,
    trace_share: float | None = None,
    pairing: Literal["all", "random", "consecutive"] | None = None,
    calibration: Calibration = "analytic",
    bounds: Any = None,
) -> ScreePlan:
    """Price and forecast a :func:`dp_scree` call without any data.

    Parameters are those of :func:`dp_scree` that shape the release, with the
    data replaced by its public size ``n`` x ``p`` and ``directions`` by
    whether they are given. ``bounds`` take the forms of :func:`dp_scree`
    (mappings name the variables ``V1 .. Vp``).

    Returns
    -------
    ScreePlan
        ``cost`` (what the call would record) and ``forecast``.

    Examples
    --------
    >>> plan = plan_scree(5000, 20, 3, eps=1.0, delta=1e-6)
    >>> plan.forecast.ok, round(plan.cost.eps, 6)
    (True, 1.0)
    """
    n = check_positive_int(n, "n")
    p = check_positive_int(p, "p")
    k = check_k(k, p)
    eps, delta = check_eps(eps), check_delta(delta)
    methods = _resolve_methods(method)
    controls = _resolve_controls(control, methods)
    calibration = check_calibration(calibration)
    pairing_rule = pairing or ("all" if n <= _ALL_PAIRS_MAX_N else "random")
    pairing_rule = check_choice(pairing_rule, "pairing", ("all", "random", "consecutive"))
    if trace_share is not None:
        trace_share = check_open_unit(trace_share, "trace_share")
    if check_bool(directions_given, "directions_given"):
        direction_share = 0.0
    else:
        direction_share = check_open_unit(direction_share, "direction_share")
    box = check_bounds(bounds, tuple(f"V{j + 1}" for j in range(p)))
    return _make_plan(
        n, p, k, eps=eps, delta=delta, methods=methods, controls=controls,
        direction_share=direction_share, trace_share=trace_share, pairing=pairing_rule,
        calibration=calibration, box=box,
    )  # fmt: skip


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

    @classmethod
    def make(
        cls, *, n: int, p: int, k: int, eps: float, delta: float, methods: tuple[str, ...],
        controls: dict[str, Any], direction_share: float, trace_share: float, pairing: str,
        calibration: str, box: Any, public_clip: float | None,
    ) -> ScreePlan:  # fmt: skip
        """The plan for validated arguments.

        The shares give a basic split of ``(eps, delta)``. With the analytic
        calibration every eps share is then multiplied by the largest factor
        whose tight total (:func:`dppca.accounting.tight_total`) is still
        ``eps`` at ``delta`` (:func:`dppca.accounting.scale_to_tight`), and the
        noise of the joint release (Laplace or Gaussian) is the one with less
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
        kind = _joint_noise(n, m, all_pairs, basic[3], basic[4], calibration)[0]
        if calibration == "analytic":
            options = []
            for noise in ("laplace", "gaussian"):
                split = _basic_split(**args, noise=noise)

                def build(t: float, split: tuple = split) -> list[PrivacyCost]:
                    return _scree_costs(split, t, **args)

                t, costs = scale_to_tight(build, eps, delta)
                sd = _unit_sd(noise, n, all_pairs, t * split[3], split[4], calibration)
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
        unit_sd = _unit_sd(kind, n, all_pairs, eps_m, delta_m, calibration)
        level = _scan_level(m, eps_scan, eps_m) if public_clip is None else _CLIP_QUANTILE
        forecast = _forecast_scree(
            n=n, p=p, eps=eps, delta=delta, eps_dir=eps_dir, delta_dir=delta_dir,
            calibration=calibration, unit_sd=unit_sd, kind=kind, ladder_bins=ladder.size,
            eps_scan=eps_scan if public_clip is None else 0.0, level=level, m=m,
        )  # fmt: skip
        return cls(
            eps_dir, delta_dir, eps_scan, eps_m, delta_m, ladder, level, kind, cost, forecast,
            methods, MappingProxyType(dict(controls)), pairing,
        )  # fmt: skip


def _basic_split(
    *, n: int, eps: float, delta: float, extra: list[str], direction_share: float,
    trace_share: float, all_pairs: bool, calibration: str, noise: str | None, **_: Any,
) -> tuple[float, float, float, float, float, str]:  # fmt: skip
    """Basic split: eps and delta of directions, scan eps, each method's (eps, delta), noise.

    ``noise=None`` takes the joint release's noise with the smaller standard
    deviation at this split. A Laplace joint release needs no delta: then the
    other Gaussian parts share it in proportion to their eps.
    """
    eps_dir, delta_dir = eps * direction_share, delta * direction_share
    eps_scan = eps * trace_share
    eps_m = (eps - eps_dir - eps_scan) / (1 + len(extra))
    delta_m = (delta - delta_dir) / (1 + len(extra))
    if noise is None:
        noise = _joint_noise(n, n // 2, all_pairs, eps_m, delta_m, calibration)[0]
    if noise == "laplace" and (direction_share > 0 or extra):
        weights = [eps_dir] + [eps_m] * len(extra)
        delta_dir = delta * eps_dir / math.fsum(weights)
        delta_m = delta * eps_m / math.fsum(weights) if extra else delta_m
    return eps_dir, delta_dir, eps_scan, eps_m, delta_m, noise


def _unit_sd(
    kind: str, n: int, all_pairs: bool, eps: float, delta: float, calibration: str
) -> float:
    """Noise sd of the joint release per unit clip level."""
    if kind == "laplace":
        return math.sqrt(2.0) * moment_sensitivity(n, 1.0, all_pairs=all_pairs, norm="l1") / eps
    l2 = moment_sensitivity(n, 1.0, all_pairs=all_pairs, norm="l2")
    return gaussian_sigma(l2, eps, delta, calibration)


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
    if kind == "laplace":
        mult, delta_joint = 1.0 / eps_m, 0.0
    else:
        mult, delta_joint = gaussian_sigma(1.0, eps_m, delta_m, calibration), delta_m
    noise: dict[str, Any] = {}
    if public_clip is not None:
        norm = "l1" if kind == "laplace" else "l2"
        sens = moment_sensitivity(n, public_clip, all_pairs=all_pairs, norm=norm)
        noise = {"sensitivity": sens, "scale" if kind == "laplace" else "sigma": mult * sens}
    mech = "laplace" if kind == "laplace" else f"gaussian ({calibration})"
    costs.append(
        PrivacyCost(eps_m, delta_joint, mech, released, kind=kind, multiplier=mult, **noise)
    )
    for name in extra:
        costs.append(
            _method_cost(name, controls[name], eps=eps_m, delta=delta_m, k=k,
                         calibration=calibration)
        )  # fmt: skip
    return costs


def _forecast_scree(
    *, n: int, p: int, eps: float, delta: float, eps_dir: float, delta_dir: float,
    calibration: str, unit_sd: float, kind: str, ladder_bins: int, eps_scan: float,
    level: float, m: int,
) -> Forecast:  # fmt: skip
    """Data-free forecast of a scree release (see :mod:`dppca.forecast`).

    The noise on the total variance, relative to it, is ``unit_sd * C / trace``
    with the clip level ``C`` assumed to be :data:`dppca.forecast.CLIP_RATIO`
    times the total variance when the scan aims at the 0.9 quantile, and
    ``sqrt(0.1 / (1 - level))`` times more for a higher level: the quantiles
    of a tail with index 2 (heavy, with a finite mean, as real tables with a
    few dominant variables have) grow like that, so a higher aim is not
    assumed to cost nothing. A PVE is a ratio of two such noisy values, so its
    noise is about ``sqrt(2)`` times that. The clip scan fails when it
    stops below all the data (:func:`dppca.mechanisms.ladder_failure_bound`)
    or runs two bins or more (a factor 4) past the level
    (:func:`dppca.mechanisms.quantile_overshoot_bound`).
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
        f"noise sd over the total variance ({kind}), assuming a clip level "
        f"{ratio:.2g} times the total variance"
    )
    pve_sd = math.sqrt(2.0) * relative
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
            help_ = "raise eps or trace_share, or give a public ClippedControl(clip=...)"
            if ladder_bins > _LADDER_BOUNDED + 1:  # the unbounded ladder: bounds would help
                help_ = "give public bounds, " + help_
            problems.append(
                f"the clip level search may fail with probability up to {failure:.2g}; {help_}."
            )
    return Forecast(
        "scree", n, p, eps, delta, quantities=quantities, descriptions=descriptions,
        problems=tuple(problems),
    )  # fmt: skip
