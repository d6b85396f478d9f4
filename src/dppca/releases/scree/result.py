"""The result of a private scree release and its proportions of variance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ...core.lazy import pandas as pd
from ...privacy.cost import PrivacyCost
from ..directions.result import DirectionsResult
from ..forecast import Forecast
from ..protocol import ResultMixin, check_directions_source, drawer
from .checks import misorder_note

if TYPE_CHECKING:
    from matplotlib.axes import Axes


#: Half-width of the public noise interval of a released variance, in noise sds.
INTERVAL_SDS = 2.0


def _tie_groups(values: NDArray[np.float64]) -> NDArray[np.int64]:
    """Number each run of two or more equal values above 0 in every row, from 1; 0 elsewhere."""
    groups = np.zeros(values.shape, dtype=np.int64)
    for row, out in zip(values, groups, strict=True):
        same = (row[1:] == row[:-1]) & (row[1:] > 0)
        group = 0
        for j in np.flatnonzero(same):
            if j == 0 or not same[j - 1]:
                group += 1
            out[j] = out[j + 1] = group
    return groups


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
        (``compare=True``), else True; not a constructor argument.
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
    unpooled_values : ndarray of shape (n_methods, k) or None
        With ``mono=True``: the released variances before the monotone fit
        (pooling is a display choice; these are the estimates).
    problems : tuple of str
        Why the released values are not estimates (a clip scan off its ladder,
        a total variance of 0 beside positive variances, values off the scale
        of their clip level); empty when none. The figure then draws no curve.
    scales, scale_note : ndarray of shape (p,) or None, str or None
        With ``scale="private"``: what the data were divided by (the released
        scales) and a note naming the columns left unscaled.
    tie_groups, clipped_to_zero, interval_halfwidth : ndarray
        Computed from the released values and the public noise scales, for
        honest figures: runs of values the monotone fit pooled, values
        clipped to 0 (below the noise level), and 2 noise sd per value.

    Examples
    --------
    >>> from dppca import dp_scree
    >>> from dppca.datasets import load_iris
    >>> res = dp_scree(load_iris().iloc[:, :4], eps=1.0, delta=1e-6, random_state=0)
    >>> res
    ScreeResult(p=4, k=4, n=150, methods=('clipped',), eps=1, delta=1e-06)
    >>> res.values.shape, res.to_frame().columns.tolist()[:2]
    ((1, 4), ['scree_clipped', 'pve_clipped'])
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
    noise_sd: NDArray[np.float64] | None = None
    trace_sd: float | None = None
    clip_level: float | None = None
    bounds: NDArray[np.float64] | None = None
    forecast: Forecast | None = None
    unpooled_values: NDArray[np.float64] | None = None
    problems: tuple[str, ...] = ()
    scales: NDArray[np.float64] | None = None
    scale_note: str | None = None

    def __post_init__(self) -> None:
        source = check_directions_source(self.directions_source)
        object.__setattr__(self, "directions_source", source)
        arrays = (
            self.values,
            self.directions,
            self.nonprivate_values,
            self.noise_sd,
            self.bounds,
            self.scales,
            self.unpooled_values,
        )
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
    def order_note(self) -> str | None:
        """Set when the monotone fit pooled PCs whose variances differ far beyond the noise."""
        if self.unpooled_values is None or self.noise_sd is None:
            return None
        return misorder_note(np.asarray(self.unpooled_values[0]), np.asarray(self.noise_sd[0]))

    @property
    def tie_groups(self) -> NDArray[np.int64]:
        """Runs of released values tied by the monotone fit, shape (n_methods, k).

        0 for a PC whose value is its own; otherwise the number (from 1, PC1
        first) of its run: two or more neighbouring PCs whose noisy
        estimates the non-increasing fit pooled into one shared value above 0.
        A run is one estimate of the run's mean variance, not evidence that the
        variances are equal. All 0 without the fit (``mono=False``). Derived
        from the released values alone (post-processing, no privacy cost).
        """
        values = np.asarray(self.values, dtype=np.float64)
        if not self.mono:
            return np.zeros(values.shape, dtype=np.int64)
        return _tie_groups(values)

    @property
    def clipped_to_zero(self) -> NDArray[np.bool_]:
        """Which released values are 0, shape (n_methods, k).

        Every estimator clips its noisy values at 0 (a variance is not
        negative) and the monotone fit keeps them there, so a 0 is not an
        estimate of a variance of 0: the noisy estimate was at or below 0,
        and the variance is below the noise level (about
        ``interval_halfwidth``); no finer statement can be made. With noise
        of a continuous law nothing else gives exactly 0. Derived from the
        released values alone.
        """
        return np.asarray(self.values, dtype=np.float64) == 0.0

    @property
    def interval_halfwidth(self) -> NDArray[np.float64] | None:
        """Half-width of the public noise interval of each value: ``INTERVAL_SDS * noise_sd``.

        ``INTERVAL_SDS`` is 2, so the interval ``value -/+ halfwidth`` holds
        95 % of Gaussian noise; the K-norm noise of the joint release is not
        Gaussian, and for it Chebyshev's bound guarantees at least 75 %. The
        noise sd is fixed by the plan (its noise multiplier or K-norm scale and
        the clip level, public or released); no data enter it. It is the sd
        before the monotone fit, which only pools values, so the interval is
        conservative. For a value clipped to 0 it is the level the variance is
        reported to be below. None when the result carries no noise scales.
        """
        if self.noise_sd is None:
            return None
        return INTERVAL_SDS * np.asarray(self.noise_sd, dtype=np.float64)

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
        return drawer(self)(self, kind=kind, ax=ax, **kwargs)

    def __repr__(self) -> str:
        text = (
            f"ScreeResult(p={self.p}, k={self.k}, n={self.n}, methods={self.methods!r}, "
            f"eps={self.cost.eps:.4g}, delta={self.cost.delta:.3g}"
        )
        if self.has_comparison:
            text += ", with non-private comparison"
        return text + ")"
