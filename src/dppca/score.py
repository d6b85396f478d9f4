"""Private score plots: a private frame, DP two-dimensional histograms, groups.

The scores ``s_i = V^T x_i`` of the rows on two PC directions are not released.
What is released is a frame (a rectangle chosen with pure-DP quantiles of the
scores), a grid fixed by that frame before any histogram noise, and noisy bin
probabilities, per histogram method and per group.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._lazy import is_dataframe
from ._lazy import pandas as pd
from ._typing import Calibration, Data, RandomStateLike, Ties
from ._validation import (
    check_bool,
    check_calibration,
    check_components,
    check_data,
    check_delta,
    check_eps,
    check_open_unit,
    check_positive_float,
    check_positive_int,
    check_random_state,
    check_real,
    check_ties,
)
from ._warnings import _user_stacklevel
from .accounting import Budget, PrivacyCost, compose
from .directions import DirectionsResult, dp_pc_dir, resolve_directions
from .exceptions import AccuracyWarning
from .mechanisms import (
    capped_quantile_level,
    gaussian_noise,
    gaussian_sigma,
    laplace_noise,
    quantile_overshoot_bound,
    sample_histogram,
    signed_log_edges,
    signed_quantile,
    stability_threshold,
    unbounded_quantile_upper,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "NonPrivateScores",
    "ScoreResult",
    "bin_rule",
    "dp_score",
    "frame_risk",
    "sample_points",
]

ScoreMethod = Literal["add", "sparse"]
SampleKind = Literal["center", "uniform"]

_METHODS = ("add", "sparse")
_SPLIT_KEYS = ("directions", "frame", "groups", "histogram")
# Geometric growth of the quantile bins: 0.01 wide near zero (medians) and 1 %
# of the value elsewhere. Fewer bins than 1.001 (about 2800 instead of 27600
# over +-1e6), so the above-threshold scans need less budget to stay accurate.
_BETA = 1.01
# Warn when the public bound on a badly wrong frame quantile exceeds this.
_FRAME_RISK = 0.05
# The radius scans split their eps / 4 as eps1 : eps2 = 3 : 2 and aim at a
# level lowered to 1 - 1 / (eps1 n) at most (capped_quantile_level). With equal
# shares the target often passed n at small eps and the scan then overshot the
# data with a 1 / K tail in the number of bins K: 0.5 % to 2 % of the frames on
# gau_g at eps 0.3 and 1 were over 5x wider than needed (up to +-3e5). A larger
# eps1 share thins that tail to about K^(-eps1 / eps2), but the noisier scan
# stops early more often and the frame covers less: at eps 0.3 (1000 seeds,
# reused directions) 2 : 1 left no frame over 2x but 13 % of them covered < 90 %
# of the rows (1.2 % with equal shares); 3 : 2 left none over 5x and 5.4 %.
_RADIUS_EPS1_SHARE = 0.6
_RADIUS_MARGIN = 1.0
# An overshoot of this many geometric bins widens a radius 5-fold (1.01^162 > 5).
_ABSURD_BINS = math.ceil(math.log(5.0) / math.log(_BETA))
_DEFAULT_BANDWIDTH = {"center": 0.5, "uniform": 0.25}


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False, repr=False)
class NonPrivateScores:
    """Raw scores and exact histograms, for comparison only (NOT private).

    Present on a :class:`ScoreResult` only when ``dp_score(..., compare=True)``
    was asked for. Nothing here has noise; never publish it.

    Attributes
    ----------
    scores : ndarray of shape (n, 2)
        The projections of the rows on the two directions used.
    group_codes : ndarray of shape (n,) or None
        Index into ``ScoreResult.groups`` for each row; -1 for a row whose
        label is not among ``group_labels``.
    prob : ndarray of shape (G, m)
        Exact bin proportions on the private grid, per group (G = 1 without groups).
    group_sizes : ndarray of shape (G,)
        Exact group sizes.
    private : bool
        Always False.
    """

    scores: NDArray[np.float64]
    group_codes: NDArray[np.int64] | None
    prob: NDArray[np.float64]
    group_sizes: NDArray[np.int64]
    private: bool = False

    def __post_init__(self) -> None:
        for a in (self.scores, self.group_codes, self.prob, self.group_sizes):
            if a is not None:
                a.setflags(write=False)

    def __repr__(self) -> str:
        return f"NonPrivateScores(n={self.scores.shape[0]}, non-private)"


@dataclass(frozen=True, eq=False, repr=False)
class ScoreResult:
    """A private score plot: frame, grid and DP bin probabilities.

    Attributes
    ----------
    components : tuple of int
        The two PCs shown, numbered from 1.
    n : int
        Number of rows (public).
    xlim, ylim : tuple of float
        The private frame.
    x_edges, y_edges : ndarray
        ``bins[0] + 1`` and ``bins[1] + 1`` equally spaced edges over the frame.
    methods : tuple of str
        The histogram methods released, among ``"add"`` and ``"sparse"``.
    probs : mapping of str to ndarray of shape (G, m)
        Bin probabilities per method; row g belongs to group ``groups[g]`` (one
        row without groups), column ``j = jy * mx + jx`` (x varies fastest).
        Each row sums to 1, or is all zero when the noise removed every bin.
    groups : tuple or None
        The group labels: the caller's ``group_labels``, or else the labels
        found in the data, sorted (then not private).
    group_sizes : ndarray of shape (G,) or None
        Exact sizes if ``groups_public``; otherwise privately released sizes
        (Laplace noise, rounded and clipped at zero).
    groups_public : bool
        Whether the caller declared the group labels public.
    directions : ndarray of shape (p, 2)
        The two directions the scores were computed on.
    directions_source : str
        ``"private"`` (released in this call), ``"private release"`` (an existing
        private result was given) or ``"public"`` (vouched for by the caller).
    directions_result : DirectionsResult or None
        The private directions release, when there is one.
    noise : mapping
        Per method, the noise parameters on the count scale (``sigma`` for
        ``"add"``; ``scale`` and ``threshold`` for ``"sparse"``).
    cost : PrivacyCost
        Everything this call released, composed; a given private directions
        release is not counted again (its cost is ``directions_result.cost``).
    nonprivate : NonPrivateScores or None
        Only with ``compare=True``: raw scores and exact histograms, NOT private.
    frame_source : str
        ``"private"`` (estimated in this call) or ``"public"`` (given by the caller).
    private : bool
        True: every field except ``nonprivate`` is a DP release or
        post-processing of one.
    """

    components: tuple[int, int]
    n: int
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    x_edges: NDArray[np.float64]
    y_edges: NDArray[np.float64]
    methods: tuple[str, ...]
    probs: Mapping[str, NDArray[np.float64]]
    groups: tuple[Any, ...] | None
    group_sizes: NDArray[np.float64] | None
    groups_public: bool
    directions: NDArray[np.float64]
    directions_source: str
    directions_result: DirectionsResult | None
    noise: Mapping[str, Mapping[str, float]]
    cost: PrivacyCost
    nonprivate: NonPrivateScores | None = None
    frame_source: str = "private"
    private: bool = True

    def __post_init__(self) -> None:
        for a in (self.x_edges, self.y_edges, self.directions, self.group_sizes):
            if a is not None:
                a.setflags(write=False)
        for a in self.probs.values():
            a.setflags(write=False)

    @property
    def bins(self) -> tuple[int, int]:
        """Number of bins along x and y."""
        return self.x_edges.size - 1, self.y_edges.size - 1

    @property
    def pc_labels(self) -> tuple[str, str]:
        """Axis labels, for example ``("PC1", "PC2")``."""
        return f"PC{self.components[0]}", f"PC{self.components[1]}"

    @property
    def eps(self) -> float:
        """Epsilon spent by this call."""
        return self.cost.eps

    @property
    def delta(self) -> float:
        """Delta spent by this call."""
        return self.cost.delta

    def _group_row(self, group: Any) -> int:
        if self.groups is None:
            if group is not None:
                raise ValueError("group was given but this result has no groups.")
            return 0
        if group is None:
            raise ValueError(
                f"group must be one of the {len(self.groups)} group labels for a grouped result."
            )
        if group not in self.groups:
            raise ValueError(f"group must be one of {list(self.groups)!r}; got {group!r}.")
        return self.groups.index(group)

    def _bin_frame(self) -> pd.DataFrame:
        mx, my = self.bins
        jx = np.tile(np.arange(mx), my)
        jy = np.repeat(np.arange(my), mx)
        return pd.DataFrame(
            {
                "xmin": self.x_edges[jx],
                "xmax": self.x_edges[jx + 1],
                "ymin": self.y_edges[jy],
                "ymax": self.y_edges[jy + 1],
            }
        )

    def table(self, method: str | None = None, group: Any = None) -> pd.DataFrame:
        """Bin table of one method (and group): ``xmin, xmax, ymin, ymax, prob``.

        Rows follow the grid with x varying fastest. ``method`` defaults to the
        first method released.
        """
        method = self.methods[0] if method is None else method
        if method not in self.probs:
            raise ValueError(f"method must be one of {list(self.methods)!r}; got {method!r}.")
        frame = self._bin_frame()
        frame["prob"] = self.probs[method][self._group_row(group)]
        return frame

    def to_frame(self) -> pd.DataFrame:
        """All bin tables stacked: columns ``method``, (``group``), ``xmin`` ... ``prob``."""
        parts = []
        labels = [None] if self.groups is None else list(self.groups)
        for method in self.methods:
            for label in labels:
                frame = self.table(method, label)
                if self.groups is not None:
                    frame.insert(0, "group", label)
                frame.insert(0, "method", method)
                parts.append(frame)
        return pd.concat(parts, ignore_index=True)

    def sample(self, **kwargs: Any) -> pd.DataFrame:
        """Synthetic points from a released histogram; see :func:`sample_points`."""
        return sample_points(self, **kwargs)

    def plot(self, kind: str = "histogram", **kwargs: Any) -> Axes | Figure:
        """Draw the result (no new privacy cost).

        ``kind="panels"`` calls :func:`dppca.plotting.plot_score_panels` and
        ``kind="groups"`` :func:`dppca.plotting.plot_score_groups`, both returning
        a Figure; any other kind goes to :func:`dppca.plotting.plot_score`.
        """
        from .plotting.score import plot_score, plot_score_groups, plot_score_panels

        if kind == "panels":
            return plot_score_panels(self, **kwargs)
        if kind == "groups":
            return plot_score_groups(self, **kwargs)
        return plot_score(self, kind=kind, **kwargs)

    def __repr__(self) -> str:
        groups = "" if self.groups is None else f", groups={len(self.groups)}"
        return (
            f"ScoreResult(n={self.n}, components={self.components}, bins={self.bins}, "
            f"methods={self.methods}{groups}, eps={self.cost.eps:g}, "
            f"delta={self.cost.delta:g})"
        )


# --------------------------------------------------------------------------- helpers


def bin_rule(n: int, rule: str = "W") -> int:
    """Bins per axis from the number of rows only (public under replacement).

    ``"W"``: ``max(1, round(n ** (1/4)))``; ``"J"``: ``max(1, round((n / ln n) ** (1/3)))``.

    Examples
    --------
    >>> bin_rule(5000), bin_rule(5000, "J")
    (8, 8)
    """
    n = check_positive_int(n, "n")
    if rule == "W":
        return max(1, round(n**0.25))
    if rule == "J":
        return max(1, round((n / math.log(n)) ** (1 / 3))) if n > 1 else 1
    raise ValueError(f"bins rule must be 'W' or 'J'; got {rule!r}.")


def _check_bins(bins: object, n: int) -> tuple[int, int]:
    if bins is None or isinstance(bins, str):
        m = bin_rule(n, "W" if bins is None else bins)
        return m, m
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        m = check_positive_int(bins, "bins")
        return m, m
    if isinstance(bins, Sequence | np.ndarray) and len(bins) == 2:
        mx, my = (check_positive_int(b, "bins") for b in bins)
        return mx, my
    raise TypeError(
        f"bins must be None, 'W', 'J', an integer or a pair of integers; got {bins!r}."
    )


def _check_methods(method: object) -> tuple[str, ...]:
    items = [method] if isinstance(method, str) else method
    if not isinstance(items, Sequence) or not items:
        raise TypeError(f"method must be 'add', 'sparse' or a list of them; got {method!r}.")
    out: list[str] = []
    for m in items:
        if m not in _METHODS:
            raise ValueError(f"method must be among 'add', 'sparse'; got {m!r}.")
        if m not in out:
            out.append(m)
    return tuple(out)


def _check_split(split: object, used: tuple[str, ...], defaults: dict[str, float]) -> dict:
    """Epsilon fractions of the parts in ``used`` (weights, normalised to sum 1)."""
    weights = dict(defaults)
    if split is not None:
        if not isinstance(split, Mapping):
            raise TypeError(f"split must be a mapping such as {defaults!r}; got {split!r}.")
        for key, value in split.items():
            if key not in _SPLIT_KEYS:
                raise ValueError(f"split keys must be among {_SPLIT_KEYS!r}; got {key!r}.")
            weights[key] = check_positive_float(value, f"split[{key!r}]")
    total = math.fsum(weights[k] for k in used)
    return {k: weights[k] / total for k in used}


def _resolve_groups(X: Data, groups: object) -> tuple[Data, Any]:
    if groups is None:
        return X, None
    if isinstance(groups, str):
        if not is_dataframe(X):
            raise TypeError("groups can name a column only when X is a pandas DataFrame.")
        if groups not in X.columns:
            raise ValueError(f"groups names no column of X; got {groups!r}.")
        return X.drop(columns=groups), X[groups].to_numpy()
    labels = np.asarray(groups, dtype=object) if not isinstance(groups, np.ndarray) else groups
    if labels.ndim != 1:
        raise ValueError(f"groups must be one label per row (1-D); got {labels.ndim} dimensions.")
    return X, labels


def _check_group_labels(group_labels: object) -> tuple[Any, ...] | None:
    if group_labels is None:
        return None
    if isinstance(group_labels, str | bytes) or not isinstance(
        group_labels, Sequence | np.ndarray | pd.Index
    ):
        raise TypeError(
            "group_labels must be a list of the public group labels, such as ['a', 'b']; "
            f"got {type(group_labels).__name__}."
        )
    levels = tuple(group_labels)
    if not levels:
        raise ValueError("group_labels must name at least one group.")
    if pd.isna(pd.Series(levels, dtype=object)).any():
        raise ValueError("group_labels must not contain missing values.")
    if len(set(levels)) != len(levels):
        raise ValueError("group_labels must name each group once.")
    return levels


def _group_codes(
    labels: Any, n: int, public: tuple[Any, ...] | None = None
) -> tuple[tuple[Any, ...], NDArray[np.int64]]:
    """Levels and a code per row; with ``public`` levels, other labels get -1 (no group)."""
    if len(labels) != n:
        raise ValueError(f"groups must hold one label per row of X ({n}); got {len(labels)}.")
    if public is not None:
        index = pd.Index(list(public), dtype=object)
        codes = index.get_indexer(pd.Series(labels, dtype=object))
        return public, np.asarray(codes, dtype=np.int64)
    if pd.isna(pd.Series(labels, dtype=object)).any():
        raise ValueError("groups must not contain missing labels; drop or label those rows.")
    values = pd.unique(pd.Series(labels, dtype=object))
    try:
        levels = tuple(sorted(values))
    except TypeError:
        levels = tuple(sorted(values, key=str))
    codes = pd.Categorical(pd.Series(labels, dtype=object), categories=list(levels)).codes
    return levels, np.asarray(codes, dtype=np.int64)


def _bin_index(values: NDArray[np.float64], edges: NDArray[np.float64]) -> NDArray[np.int64]:
    """Bin of each value on right-closed intervals (the first closed); outside -> edge bins."""
    j = np.searchsorted(edges, values, side="left") - 1
    return np.clip(j, 0, edges.size - 2)


def bin_counts(
    scores: NDArray[np.float64],
    x_edges: NDArray[np.float64],
    y_edges: NDArray[np.float64],
    codes: NDArray[np.int64] | None = None,
    n_groups: int = 1,
) -> NDArray[np.int64]:
    """Counts of rows per group and bin, shape (G, m), x varying fastest (internal).

    Each row adds 1 to at most one cell (none when its group code is -1), so
    replacing a row changes at most two cells by one each: L1 sensitivity 2 and
    L2 sensitivity sqrt(2), jointly over all groups even when the row changes
    group.
    """
    mx, my = x_edges.size - 1, y_edges.size - 1
    cell = _bin_index(scores[:, 1], y_edges) * mx + _bin_index(scores[:, 0], x_edges)
    if codes is not None:
        cell = (cell + codes * (mx * my))[codes >= 0]
    return np.bincount(cell, minlength=n_groups * mx * my).reshape(n_groups, mx * my)


def add_counts(
    counts: NDArray[np.int64], sigma: float, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Gaussian noise on every cell, negative values set to zero (internal)."""
    return np.maximum(gaussian_noise(counts.astype(np.float64), sigma, rng), 0.0)


def sparse_counts(
    counts: NDArray[np.int64], scale: float, threshold: float, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Stability histogram (internal): Laplace noise on non-empty cells, then a threshold.

    Empty cells stay zero and draw no noise; noisy values below ``threshold``
    become zero. Cells are visited in flat order, so the draws are reproducible.
    """
    flat = counts.ravel()
    kept = np.zeros(flat.size)
    nonempty = np.flatnonzero(flat > 0)
    values = laplace_noise(flat[nonempty].astype(np.float64), scale, rng)
    kept[nonempty] = np.where(values >= threshold, values, 0.0)
    return kept.reshape(counts.shape)


def _normalise(values: NDArray[np.float64]) -> NDArray[np.float64]:
    totals = values.sum(axis=1, keepdims=True)
    safe = np.where(totals > 0, totals, 1.0)
    return np.where(totals > 0, values / safe, 0.0)


def _radius_eps(eps: float) -> tuple[float, float]:
    """(eps1, eps2) of each radius scan: ``eps / 4`` split 3 : 2 (public)."""
    part = eps / 4.0
    return part * _RADIUS_EPS1_SHARE, part * (1.0 - _RADIUS_EPS1_SHARE)


def frame_risk(n: int, eps: float, bound: float, level: float = 0.995) -> float:
    """Public bound on the chance that a private frame lands away from the data.

    Two failures are bounded and added. Stopping too low: at a bin below all
    the data the cumulative count is 0, so a scan stops there with
    probability at most ``exp(-eps2 t)``, ``t`` the target without noise. The
    medians have ``eps2 = eps / 8`` and ``t = n / 2``, the radii ``eps2 =
    eps / 10`` and ``t = q n`` with ``q`` the capped level; over the ``B``
    public bins this is ``2 B (exp(-eps n / 16) + exp(-eps q n / 10))``.
    Running far past the data: a radius scan passes
    162 bins beyond its largest value (a radius about 5 times too wide, for
    radii large compared with 1) with probability at most
    :func:`dppca.mechanisms.quantile_overshoot_bound` at its capped level,
    about ``exp(-1) Gamma(2.5) 162**-1.5 = 2.4e-4`` for each radius. It depends
    on n, eps, ``score_range`` and ``level`` only, never on the data.
    """
    n_bins = signed_log_edges(bound, _BETA).size
    eps1, eps2 = _radius_eps(eps)
    q = capped_quantile_level(level, n, eps1, _RADIUS_MARGIN)
    low = 2.0 * n_bins * (math.exp(-eps * n / 16.0) + math.exp(-eps2 * q * n))
    over = 2.0 * quantile_overshoot_bound(_ABSURD_BINS, n, q, eps1, eps2)
    return min(1.0, low + over)


def _check_frame(frame: object) -> tuple[tuple[float, float], tuple[float, float]]:
    try:
        (x0, x1), (y0, y1) = frame  # type: ignore[misc]
        values = [float(v) for v in (x0, x1, y0, y1)]
    except (TypeError, ValueError):
        raise TypeError(
            f"frame must be ((xmin, xmax), (ymin, ymax)) of public numbers; got {frame!r}."
        ) from None
    if (
        not all(math.isfinite(v) for v in values)
        or values[0] >= values[1]
        or (values[2] >= values[3])
    ):
        raise ValueError(f"frame limits must be finite with min < max; got {frame!r}.")
    return (values[0], values[1]), (values[2], values[3])


def private_frame(
    scores: NDArray[np.float64],
    *,
    eps: float,
    bound: float,
    level: float,
    inflate: float,
    rng: np.random.Generator,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Frame from four pure-DP quantiles, each costing ``eps / 4`` (internal).

    In this order: the median of x, the median of y (signed quantile on
    ``[-bound, bound]``, eps1 = eps2 = eps / 8), then the quantile of
    ``|x - c_x|`` and of ``|y - c_y|`` (upper routine from 0, eps1 = 3 eps / 20,
    eps2 = eps / 10) at ``level`` capped by
    :func:`dppca.mechanisms.capped_quantile_level`. Limits are
    ``c +- (1 + inflate) r``.

    Notes
    -----
    Privacy: each scan is (eps1 + eps2)-DP with eps1 + eps2 = eps / 4, so the
    frame is eps-DP by basic composition, as before. The radius level depends
    on ``level``, n and eps only (all public), and the uneven split is fixed,
    so neither reads the data.
    """
    part = eps / 8.0  # each median: eps1 = eps2 = eps / 8
    eps1, eps2 = _radius_eps(eps)
    q = capped_quantile_level(level, scores.shape[0], eps1, _RADIUS_MARGIN)
    centre = [
        signed_quantile(
            scores[:, a], bound=bound, beta=_BETA, q=0.5, eps1=part, eps2=part, rng=rng
        )
        for a in (0, 1)
    ]
    radius = [
        min(
            unbounded_quantile_upper(
                np.abs(scores[:, a] - centre[a]),
                lower=0.0,
                beta=_BETA,
                q=q,
                eps1=eps1,
                eps2=eps2,
                rng=rng,
            ),
            2.0 * bound,
        )
        for a in (0, 1)
    ]
    half = [(1.0 + inflate) * r for r in radius]
    return (
        (centre[0] - half[0], centre[0] + half[0]),
        (centre[1] - half[1], centre[1] + half[1]),
    )


# --------------------------------------------------------------------------- dp_score


def dp_score(
    X: Data,
    *,
    eps: float,
    delta: float,
    bins: int | str | tuple[int, int] | None = None,
    components: tuple[int, int] = (1, 2),
    method: ScoreMethod | Sequence[ScoreMethod] = "add",
    directions: DirectionsResult | ArrayLike | None = None,
    groups: ArrayLike | str | None = None,
    groups_public: bool = False,
    group_labels: Sequence[Any] | None = None,
    public_directions: bool = False,
    split: Mapping[str, float] | None = None,
    score_range: float = 1e6,
    frame_level: float = 0.995,
    inflate: float = 0.2,
    calibration: Calibration = "classic",
    ties: Ties = "error",
    compare: bool = False,
    frame: tuple[tuple[float, float], tuple[float, float]] | None = None,
    random_state: RandomStateLike = None,
    budget: Budget | None = None,
) -> ScoreResult:
    """A differentially private score plot: frame, grid and noisy 2-D histograms.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        Numeric data (plus the group column if ``groups`` names one). Not
        modified, centred or scaled.
    eps, delta : float
        Total privacy budget of the call, eps > 0 and 0 < delta < 1.
    bins : None, {"W", "J"}, int or (int, int), default=None
        Bins along x and y. None means the ``"W"`` rule ``round(n ** (1/4))``;
        ``"J"`` is ``round((n / ln n) ** (1/3))``. Both depend on n only.
    components : (int, int), default=(1, 2)
        The PCs on the x and y axes, numbered from 1.
    method : {"add", "sparse"} or a list of them, default="add"
        ``"add"``: Gaussian noise on every count. ``"sparse"``: stability
        histogram, Laplace noise on non-empty bins and a release threshold.
        Several methods share the histogram budget equally.
    directions : DirectionsResult, array of shape (p, k) or None, default=None
        None releases private directions in this call (:func:`dppca.dp_pc_dir`
        with a share of the budget). A private ``DirectionsResult`` (from an
        earlier release on the same data) costs nothing more. A non-private
        ``DirectionsResult`` (from :func:`dppca.pc_dir`) is refused unless
        ``public_directions=True``. An array with orthonormal columns is taken
        as public directions; the caller vouches that it does not depend on
        the data. Columns ``components`` are used.
    groups : array-like of shape (n,) or str, default=None
        Group label per row, or the name of a column of the DataFrame ``X``
        (then removed from the features). Without ``group_labels`` the set of
        labels found in the data is released as it is, sorted (not private:
        a label held by one row reveals that row).
    groups_public : bool, default=False
        False: the group sizes are released with Laplace noise (a share of the
        budget) and only those are used. True: the caller declares the labels,
        and so the group sizes, public; the exact sizes are used and shown.
    group_labels : sequence, default=None
        The public list of possible group labels, in the order to show them.
        The released label set is then this list, whatever the data hold
        (groups no row belongs to get a histogram of noise only); rows with
        other or missing labels belong to no group and count only for the
        frame. This is the DP-safe way to use groups whose label set is not
        public.
    public_directions : bool, default=False
        Confirms that a non-private ``DirectionsResult`` comes from public data.
    split : mapping, default=None
        Epsilon weights of the parts, normalised over the parts that are used:
        ``directions`` (0.2), ``frame`` (0.2), ``groups`` (0.1) and ``histogram``
        (0.6, or 0.5 when private group sizes are released). Delta goes to the
        directions and the histograms in proportion to their weights.
    score_range : float, default=1e6
        Public bound: scores are treated as lying in ``[-score_range,
        score_range]`` when the frame centre is estimated.
    frame_level : float, default=0.995
        Quantile level of the distances to the centre that sets the frame radius.
        At small ``n * eps`` it is lowered to ``1 - 20 / (3 n eps_f)`` (eps_f
        the frame's share), from public values only, so the noisy target
        rarely passes n.
    inflate : float, default=0.2
        The radius is multiplied by ``1 + inflate``.
    calibration : {"classic", "analytic"}, default="classic"
        Gaussian calibration for the directions and the ``"add"`` histogram.
    ties : {"error", "zero"}, default="error"
        Near-duplicate rows in the direction step; see :func:`dppca.dp_pc_dir`.
    frame : ((float, float), (float, float)), default=None
        A public frame ``((xmin, xmax), (ymin, ymax))`` the caller vouches for
        (for example from a known data domain). It costs nothing, and its
        budget share goes to the other parts. None estimates it privately.
    compare : bool, default=False
        Also attach the raw scores and exact histograms as ``nonprivate``
        (NOT private, for the analyst's own comparison; never publish them).
    random_state : None, int or numpy.random.Generator, default=None
        Source of all noise. None draws fresh OS entropy, which a release meant
        for publication should use.
    budget : Budget, optional
        Checked for the call's cost before the data are touched; charged after.

    Returns
    -------
    ScoreResult

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (checked before any computation).
    TiedRowsError
        From the direction step with ``ties="error"``.
    BudgetExceededError
        When ``budget`` cannot afford the call.

    Warns
    -----
    PrivacyWarning
        With ``calibration="classic"`` when a Gaussian part gets eps >= 1.
    AccuracyWarning
        When n and the frame's share of eps are too small for a reliable
        private frame (:func:`frame_risk` > 0.05; decided from public values).

    See Also
    --------
    sample_points : synthetic points from a released histogram.
    dppca.plotting.plot_score, dppca.plotting.plot_score_panels

    Notes
    -----
    Privacy: neighbouring datasets have the same n and differ in one row; n is
    public. The call releases, with basic composition over the parts:

    1. directions (unless given): the noisy spherical Kendall matrix,
       (eps_d, delta_d) as in :func:`dppca.dp_pc_dir`;
    2. group sizes (private groups only): counts per group with Laplace(2 /
       eps_g) noise; a row that changes group moves two counts by one (L1
       sensitivity 2), so this is eps_g-DP;
    3. the frame: four pure-DP quantile scans (:func:`dppca.mechanisms.
       signed_quantile` for the two medians, the upper routine for the two
       radii) with eps_f / 4 each; the cumulative counts they compare move by
       at most one under replacement, so the frame is eps_f-DP. The radius
       scans split their eps_f / 4 as 3 : 2 between target and scan noise and
       aim at ``frame_level`` lowered by
       :func:`dppca.mechanisms.capped_quantile_level` from n and eps_f only;
       both are fixed before the data are read. No sample mean, no
       smooth-sensitivity median;
    4. per method, on the grid fixed by the frame before any histogram noise,
       the counts of all groups together: one replaced row moves at most two
       cells by one (L1 2, L2 sqrt(2)), even across groups, so each group's
       histogram does not need its own budget. ``"add"`` adds N(0, sigma^2)
       with sigma for L2 sensitivity sqrt(2); ``"sparse"`` adds Laplace(2 /
       eps_m) to non-empty cells and keeps those above
       :func:`dppca.mechanisms.stability_threshold`, (eps_m, delta_m)-DP
       since, for an ordered pair of neighbours, only the cell the replaced
       row leaves can be non-empty in one and empty in the other.

    Probabilities (negative counts set to 0, then normalised per group) are
    post-processing. The scores depend on the directions, which are private
    or public, and on one row each. Without ``group_labels`` the label set
    found in the data is revealed, and a missing label raises an error; with
    it, the released labels are the caller's list and neither happens. With ``ties="error"`` the
    error reveals that near-duplicate rows exist. ``result.cost`` is what this
    call spent: a private directions release passed in was paid for earlier.

    The frame is in the scores' own coordinates (no centring), which is safe
    because its centre and radii are themselves private outputs; the number of
    bins depends on n only and the edges on the frame only, so the grid is
    fixed before any histogram noise. Noise is drawn in a fixed order
    (directions, group sizes, frame, then each method), so the same data and
    seed give the same result.

    Examples
    --------
    >>> from dppca import dp_score
    >>> from dppca.datasets import load_gau_g
    >>> res = dp_score(load_gau_g(), eps=1.0, delta=1e-5, groups="group", random_state=0)
    >>> res
    ScoreResult(n=5000, components=(1, 2), bins=(8, 8), methods=('add',), groups=5, eps=1, delta=1e-05)
    >>> res.table("add", "group1").shape
    (64, 5)
    """  # noqa: E501
    X, labels = _resolve_groups(X, groups)
    data, _variables = check_data(X, min_cols=2)
    n, p = data.shape
    eps = check_eps(eps)
    delta = check_delta(delta)
    components = check_components(components, p)
    mx, my = _check_bins(bins, n)
    methods = _check_methods(method)
    groups_public = check_bool(groups_public, "groups_public")
    compare = check_bool(compare, "compare")
    bound = check_positive_float(score_range, "score_range")
    frame_level = check_open_unit(frame_level, "frame_level")
    inflate = check_real(inflate, "inflate", low=0.0)
    calibration = check_calibration(calibration)
    ties = check_ties(ties)
    public_frame = None if frame is None else _check_frame(frame)
    given, dir_result = resolve_directions(
        directions, p=p, k=max(components), public_directions=public_directions
    )
    if given is None:
        matrix, dir_source = None, "private"
    else:
        matrix = np.ascontiguousarray(given[:, [c - 1 for c in components]])
        dir_source = "public" if dir_result is None else "private release"
    public_levels = _check_group_labels(group_labels)
    if public_levels is not None and labels is None:
        raise ValueError("group_labels needs groups; pass the group of each row as well.")
    levels, codes = (None, None) if labels is None else _group_codes(labels, n, public_levels)
    n_groups = 1 if levels is None else len(levels)
    rng = check_random_state(random_state)

    private_groups = levels is not None and not groups_public
    used = (
        *(("directions",) if matrix is None else ()),
        *(("frame",) if public_frame is None else ()),
        *(("groups",) if private_groups else ()),
        "histogram",
    )
    defaults = {"directions": 0.2, "frame": 0.2, "groups": 0.1}
    defaults["histogram"] = 0.5 if private_groups else 0.6
    shares = _check_split(split, used, defaults)
    delta_users = [k for k in ("directions", "histogram") if k in shares]
    delta_total = math.fsum(shares[k] for k in delta_users)
    delta_share = {k: delta * shares[k] / delta_total for k in delta_users}

    parts: list[PrivacyCost] = []
    if matrix is None:
        parts.append(
            PrivacyCost(
                eps * shares["directions"], delta_share["directions"],
                mechanism=f"gaussian ({calibration})",
                released=f"noisy spherical Kendall matrix ({p} x {p})",
            )
        )  # fmt: skip
    eps_g = eps * shares.get("groups", 0.0)
    if private_groups:
        parts.append(PrivacyCost(eps_g, 0.0, "laplace", f"group sizes ({n_groups})"))
    eps_f = eps * shares.get("frame", 0.0)
    if public_frame is None:
        risk = frame_risk(n, eps_f, bound, frame_level)
        if risk > _FRAME_RISK:
            warnings.warn(
                f"the private frame has eps={eps_f:.3g} for n={n} rows: it may land away "
                f"from the data with probability up to {risk:.2g}. Raise eps or "
                "split['frame'], narrow score_range, or pass a public frame=.",
                AccuracyWarning,
                stacklevel=_user_stacklevel(),
            )
        parts.append(
            compose(
                [
                    PrivacyCost(eps_f / 4, 0.0, "above-threshold quantile", what)
                    for what in (
                        f"frame centre PC{components[0]} (median)",
                        f"frame centre PC{components[1]} (median)",
                        f"frame radius PC{components[0]} ({frame_level:g} quantile)",
                        f"frame radius PC{components[1]} ({frame_level:g} quantile)",
                    )
                ],
                released="private frame",
            )
        )
    eps_m = eps * shares["histogram"] / len(methods)
    delta_m = delta_share["histogram"] / len(methods)
    grid = f"{n_groups} x {mx} x {my} cells"
    for m in methods:
        mech = f"gaussian ({calibration})" if m == "add" else "laplace + threshold"
        parts.append(PrivacyCost(eps_m, delta_m, mech, f"{m} histogram ({grid})"))
    cost = compose(parts, released="private score plot")
    if budget is not None:
        budget.check(cost)

    # Randomness order: directions, group sizes, frame, histograms (method order).
    if matrix is None:
        dir_result = dp_pc_dir(
            data, max(components), eps=eps * shares["directions"],
            delta=delta_share["directions"],
            random_state=rng, calibration=calibration, ties=ties,
        )  # fmt: skip
        matrix = np.ascontiguousarray(dir_result.directions[:, [c - 1 for c in components]])
    with np.errstate(over="ignore", invalid="ignore"):  # no warning may depend on the data
        scores = data @ matrix

    group_sizes = None
    exact_sizes = (
        np.bincount(codes[codes >= 0], minlength=n_groups) if codes is not None else np.array([n])
    )
    if levels is not None:
        if private_groups:
            noisy = laplace_noise(exact_sizes.astype(np.float64), 2.0 / eps_g, rng)
            group_sizes = np.maximum(np.round(noisy), 0.0)
        else:
            group_sizes = exact_sizes.astype(np.float64)

    if public_frame is None:
        xlim, ylim = private_frame(
            scores, eps=eps_f, bound=bound, level=frame_level, inflate=inflate, rng=rng
        )
    else:
        xlim, ylim = public_frame
    x_edges = np.linspace(xlim[0], xlim[1], mx + 1)
    y_edges = np.linspace(ylim[0], ylim[1], my + 1)
    counts = bin_counts(scores, x_edges, y_edges, codes, n_groups)

    probs: dict[str, NDArray[np.float64]] = {}
    noise: dict[str, Mapping[str, float]] = {}
    for m in methods:
        if m == "add":
            sigma = gaussian_sigma(math.sqrt(2.0), eps_m, delta_m, calibration)
            noisy = add_counts(counts, sigma, rng)
            noise[m] = MappingProxyType({"sigma": sigma})
        else:
            scale, threshold = 2.0 / eps_m, stability_threshold(eps_m, delta_m)
            noisy = sparse_counts(counts, scale, threshold, rng)
            noise[m] = MappingProxyType({"scale": scale, "threshold": threshold})
        probs[m] = _normalise(noisy)

    nonprivate = None
    if compare:
        nonprivate = NonPrivateScores(
            scores=scores,
            group_codes=codes,
            prob=_normalise(counts.astype(np.float64)),
            group_sizes=exact_sizes,
        )
    if budget is not None:
        budget.spend(cost)
    return ScoreResult(
        components=components,
        n=n,
        xlim=(float(xlim[0]), float(xlim[1])),
        ylim=(float(ylim[0]), float(ylim[1])),
        x_edges=x_edges,
        y_edges=y_edges,
        methods=methods,
        probs=MappingProxyType(probs),
        groups=levels,
        group_sizes=group_sizes,
        groups_public=groups_public,
        directions=matrix,
        directions_source=dir_source,
        directions_result=dir_result,
        noise=MappingProxyType(noise),
        cost=cost,
        nonprivate=nonprivate,
        frame_source="private" if public_frame is None else "public",
    )


# --------------------------------------------------------------------------- sampling


def _allocate(total: int, weights: NDArray[np.float64]) -> NDArray[np.int64]:
    """Largest-remainder allocation of ``total`` in proportion to ``weights`` (ties: first)."""
    share = total * weights / weights.sum()
    out = np.floor(share).astype(np.int64)
    rest = total - int(out.sum())
    order = np.argsort(-(share - out), kind="stable")
    out[order[:rest]] += 1
    return out


def sample_points(
    result: ScoreResult,
    *,
    method: str | None = None,
    size: int | None = None,
    kind: SampleKind = "uniform",
    bandwidth: float | None = None,
    random_state: RandomStateLike = None,
) -> pd.DataFrame:
    """Synthetic points drawn from a released histogram (post-processing, no cost).

    Parameters
    ----------
    result : ScoreResult
    method : str, default=None
        Which released histogram; the first method by default.
    size : int, default=None
        Number of points; None means n (public).
    kind : {"center", "uniform"}, default="uniform"
        Start each point at its bin's centre or at a uniform point in the bin.
    bandwidth : float, default=None
        Normal jitter, as a multiple of the bin width on each axis; default
        0.5 for ``"center"`` and 0.25 for ``"uniform"``. 0 means no jitter.
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    pandas.DataFrame
        Columns named after the PCs (for example ``PC1``, ``PC2``) and, for a
        grouped result, ``group``.

    Raises
    ------
    ValueError
        If the chosen histogram (or every group's histogram) is all zero.

    Notes
    -----
    Privacy: the points are a function of the released probabilities, the
    frame and, for groups, the released group sizes (exact ones only when the
    caller declared them public), plus fresh randomness: post-processing, so
    they cost nothing more. A group whose released histogram is all zero gets
    no points; the total is shared among the others.

    Examples
    --------
    >>> from dppca import dp_score, sample_points
    >>> from dppca.datasets import load_gau
    >>> res = dp_score(load_gau(), eps=0.5, delta=1e-5, random_state=0)
    >>> sample_points(res, size=100, random_state=1).shape
    (100, 2)
    """
    if not isinstance(result, ScoreResult):
        raise TypeError(f"result must be a ScoreResult; got {type(result).__name__}.")
    method = result.methods[0] if method is None else method
    if method not in result.probs:
        raise ValueError(f"method must be one of {list(result.methods)!r}; got {method!r}.")
    size = result.n if size is None else check_positive_int(size, "size")
    if kind not in _DEFAULT_BANDWIDTH:
        raise ValueError(f"kind must be 'center' or 'uniform'; got {kind!r}.")
    if bandwidth is None:
        bandwidth = _DEFAULT_BANDWIDTH[kind]
    else:
        bandwidth = check_real(bandwidth, "bandwidth", low=0.0)
    rng = check_random_state(random_state)
    prob = np.asarray(result.probs[method])
    alive = prob.sum(axis=1) > 0
    if not alive.any():
        raise ValueError(
            f"the {method!r} histogram is all zero (the noise removed every bin); nothing "
            "to sample. Try a larger eps, fewer bins or another method."
        )
    if result.groups is None:
        counts = np.array([size])
    else:
        weights = np.where(alive, np.maximum(np.asarray(result.group_sizes), 0.0), 0.0)
        if weights.sum() <= 0:
            weights = alive.astype(np.float64)
        counts = _allocate(size, weights)
    pieces, labels = [], []
    for g, count in enumerate(counts):
        if count == 0:
            continue
        p = prob[g] / prob[g].sum()
        pieces.append(
            sample_histogram(
                p, np.asarray(result.x_edges), np.asarray(result.y_edges),
                size=int(count), kind=kind, bandwidth=float(bandwidth), rng=rng,
            )
        )  # fmt: skip
        if result.groups is not None:
            labels.extend([result.groups[g]] * int(count))
    frame = pd.DataFrame(np.vstack(pieces), columns=list(result.pc_labels))
    if result.groups is not None:
        frame["group"] = pd.Categorical(labels, categories=list(result.groups))
    return frame
