"""Private score plots: a private frame, DP two-dimensional histograms, groups.

The scores ``s_i = V^T x_i`` of the rows on two PC directions are not released.
What is released is a frame (a rectangle chosen with pure-DP quantiles of the
scores), a grid fixed by that frame before any histogram noise, and noisy bin
probabilities, per histogram method and per group.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._lazy import is_dataframe
from ._lazy import pandas as pd
from ._results import (
    ResultMixin,
    computed_private,
    deprecated_name,
    directions_source_name,
    first_panel,
)
from ._typing import Accuracy, Calibration, Data, RandomStateLike, Ties
from ._validation import (
    apply_bounds,
    check_accuracy,
    check_bins_cap,
    check_bool,
    check_bounds,
    check_budget,
    check_calibration,
    check_components,
    check_data,
    check_delta,
    check_delta_for_n,
    check_eps,
    check_positive_float,
    check_positive_int,
    check_random_state,
    check_real,
    check_ties,
)
from .accounting import Budget, PrivacyCost, compose, scale_to_tight
from .directions import (
    DirectionsResult,
    dp_pc_dir,
    refuse_own_directions,
    resolve_directions,
)
from .forecast import (
    FAILURE_TOLERANCE,
    Forecast,
    direction_noise_norm,
    direction_problem,
    em_failure_bound,
    enforce,
)
from .mechanisms import (
    em_quantile,
    gaussian_noise,
    gaussian_sigma,
    kendall_sensitivity,
    kendall_sigma,
    laplace_noise,
    random_pairing,
    sample_histogram,
    stability_threshold,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "NonPrivateScores",
    "ScorePlan",
    "ScoreResult",
    "bin_rule",
    "bounds_frame",
    "dp_score",
    "frame_eps_needed",
    "frame_failure_bound",
    "plan_score",
    "sample_points",
]

ScoreMethod = Literal["add", "sparse"]
SampleKind = Literal["center", "uniform"]

_METHODS = ("add", "sparse")
_SPLIT_KEYS = ("directions", "frame", "groups", "histogram")
# The private frame: a scale bin among the powers of sqrt(2) in the _SCALE_OCTAVES
# octaves below twice score_range, then centres on a ladder with spacing
# unit / _CENTRE_STEPS near zero growing by _CENTRE_BETA, where the unit is
# _UNIT_PER_SCALE times the scale bin's geometric middle (the median of
# |N(0, s^2)| is 0.674 s, so the unit is one standard deviation for one axis and
# up to 1.7 for the larger of two equal ones), and half widths of _FRAME_SDS units.
# The scale gets _SCALE_SHARE of the frame's eps, the centres the rest equally.
_SCALE_OCTAVES = 40
_CENTRE_BETA = 1.2
_CENTRE_STEPS = 4.0
_UNIT_PER_SCALE = 1.4826
_FRAME_SDS = 3.0
_SCALE_SHARE = 0.4
# The default frame share is the smallest whose failure bound is _FRAME_TARGET,
# between _FRAME_SHARE_MIN and _FRAME_SHARE_MAX of eps.
_FRAME_TARGET = 0.01
_FRAME_SHARE_MIN, _FRAME_SHARE_MAX = 0.1, 0.4
# A choice fails when it lands this share of the values away from the median.
_MARGIN = 0.4
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


@computed_private
@dataclass(frozen=True, eq=False, repr=False)
class ScoreResult(ResultMixin):
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
        found in the data, sorted (then not private; see ``groups_source``).
    group_sizes : ndarray of shape (G,) or None
        Exact sizes if ``groups_public``; otherwise privately released sizes
        (Laplace noise, rounded and clipped at zero).
    groups_public : bool
        Whether the caller declared the group labels public.
    directions : ndarray of shape (p, 2)
        The two directions the scores were computed on.
    directions_source : {"private", "private release", "public"}
        ``"private"`` (released in this call), ``"private release"`` (an existing
        private result was given) or ``"public"`` (vouched for by the caller);
        the same names as :attr:`ScreeResult.directions_source`.
    directions_release : DirectionsResult or None
        The private directions release, when there is one (the same name as
        :attr:`ScreeResult.directions_release`; ``directions_result`` is a
        deprecated alias).
    noise : mapping
        Per method, the noise parameters on the count scale (``sigma`` for
        ``"add"``; ``scale`` and ``threshold`` for ``"sparse"``).
    cost : PrivacyCost
        Everything this call released, composed; a given private directions
        release is not counted again (its cost is ``directions_release.cost``).
    nonprivate : NonPrivateScores or None
        Only with ``compare=True``: raw scores and exact histograms, NOT private.
    frame_source : str
        ``"private"`` (estimated in this call), ``"public"`` (given by the
        caller) or ``"bounds"`` (the range of the scores over public bounds).
    private : bool
        Computed: True when every field is a DP release, post-processing of
        one, or public; False with the non-private comparison
        (``compare=True``) or with group labels read from the data
        (``groups_source="data"`` without ``groups_public``). Passing
        ``private=`` to the constructor is deprecated and has no effect.
    bounds : ndarray of shape (p, 2) or None
        The public bounds the data were clipped to, if any.
    forecast : Forecast or None
        The data-free accuracy forecast made before the release.
    variables : tuple of str
        The variable labels (rows of ``directions``).
    groups_source : {"public", "data"} or None
        Where the group labels came from: the caller's ``group_labels``
        (``"public"``) or the labels found in the data (``"data"``, not
        private unless ``groups_public``); None without groups or when not
        recorded (a release file from an earlier version, then not taken to
        be private).
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
    directions_release: DirectionsResult | None
    noise: Mapping[str, Mapping[str, float]]
    cost: PrivacyCost
    nonprivate: NonPrivateScores | None = None
    frame_source: str = "private"
    private: InitVar[bool | None] = None  # deprecated and ignored: computed
    bounds: NDArray[np.float64] | None = None
    forecast: Forecast | None = None
    variables: tuple[str, ...] = ()
    groups_source: str | None = None

    def __post_init__(self, private: bool | None) -> None:
        source = directions_source_name(self.directions_source)
        object.__setattr__(self, "directions_source", source)
        if not self.variables and self.directions_release is not None:
            object.__setattr__(self, "variables", tuple(self.directions_release.variables))
        object.__setattr__(self, "variables", tuple(self.variables))
        for a in (self.x_edges, self.y_edges, self.directions, self.group_sizes, self.bounds):
            if a is not None:
                a.setflags(write=False)
        for a in self.probs.values():
            a.setflags(write=False)

    @property
    def p(self) -> int:
        """Number of variables."""
        return int(self.directions.shape[0])

    @property
    def directions_result(self) -> DirectionsResult | None:
        """Deprecated alias of :attr:`directions_release`."""
        deprecated_name(self, "directions_result", "directions_release")
        return self.directions_release

    @property
    def has_comparison(self) -> bool:
        """Whether the non-private comparison is attached (``compare=True``)."""
        return self.nonprivate is not None

    def nonprivate_parts(self) -> tuple[str, ...]:
        """``"nonprivate"`` with a comparison; ``"groups"`` for labels read from the data.

        Labels count as read from the data unless the caller passed them
        (``group_labels``, ``groups_source="public"``) or declared them
        public (``groups_public=True``).
        """
        parts: tuple[str, ...] = ("nonprivate",) if self.nonprivate is not None else ()
        if self.groups is not None and self.groups_source != "public" and not self.groups_public:
            parts += ("groups",)
        return parts

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

    def bins_frame(self) -> pd.DataFrame:
        """The grid's bins, one row each (x varying fastest): ``xmin, xmax, ymin, ymax``.

        A function of the frame and the bin counts only (no probabilities),
        the rows in the order of the columns of ``probs``.
        """
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
        frame = self.bins_frame()
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

    def plot(self, kind: str = "histogram", *, ax: Any = None, **kwargs: Any) -> Axes:
        """Draw the result (no new privacy cost).

        Parameters
        ----------
        kind : {"histogram", "sample", "nonprivate", "scatter", "panels", "groups"}
            One panel by :func:`dppca.plotting.plot_score` (the default
            ``"histogram"`` and the other single-panel kinds), or a figure of
            several: ``"panels"`` (:func:`dppca.plotting.plot_score_panels`)
            or ``"groups"`` (:func:`dppca.plotting.plot_score_groups`).
        ax : matplotlib Axes, optional
            Where to draw; a new figure by default. The multi-panel kinds
            take their panels as a sequence or array of Axes (see
            :func:`~dppca.plotting.plot_score_panels`).
        **kwargs
            Passed to the plotting function.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on; for ``"panels"`` and ``"groups"`` that of the
            first panel, the others being in ``ax.figure.axes``. Every
            result's ``plot()`` returns an Axes (the two figure functions
            themselves return the Figure).
        """
        from .plotting.score import plot_score, plot_score_groups, plot_score_panels

        if kind in ("panels", "groups"):
            draw = plot_score_panels if kind == "panels" else plot_score_groups
            return first_panel(draw(self, ax=ax, **kwargs), ax)
        return plot_score(self, kind=kind, ax=ax, **kwargs)

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


def _scale_ladder(bound: float) -> NDArray[np.float64]:
    """Public bin edges for the scale of the scores: powers of sqrt(2) up to ``2 bound``."""
    top = math.ceil(math.log2(2.0 * bound))
    return np.exp2(np.arange(2 * (top - _SCALE_OCTAVES), 2 * top + 1) / 2.0)


def _centre_ladder(unit: float, bound: float) -> NDArray[np.float64]:
    """Public bin edges for a centre: ``+-unit (beta**j - 1) / (beta - 1)`` within ``bound``.

    Bins ``unit`` wide near zero, growing by a fraction ``beta - 1`` of their
    distance from it, so there are ``O(log(bound / unit))`` of them.
    """
    top = math.ceil(math.log1p((_CENTRE_BETA - 1.0) * bound / unit) / math.log(_CENTRE_BETA))
    j = np.arange(1, top + 1, dtype=np.float64)
    half = unit * np.expm1(j * math.log(_CENTRE_BETA)) / (_CENTRE_BETA - 1.0)
    return np.concatenate([-half[::-1], [0.0], half])


def _frame_parts(eps: float) -> tuple[float, float]:
    """(eps of the scale choice, eps of each centre choice): ``0.4 eps`` and ``0.3 eps``."""
    return _SCALE_SHARE * eps, 0.5 * (1.0 - _SCALE_SHARE) * eps


def frame_failure_bound(n: int, eps: float, bound: float) -> float:
    """Public bound on the chance that a private frame misses most of the data.

    The frame makes three exponential-mechanism choices of a bin holding a
    median (:func:`dppca.mechanisms.em_quantile`): the scale, then the two
    centres. The bin holding the median has utility 0, and a bin with no
    value between it and the median scores ``-t`` for ``t`` ranks, so a
    choice lands ``0.4`` of the values away from the median (outside the 10 %
    to 90 % quantiles) with probability at most :func:`dppca.forecast.
    em_failure_bound` with margin 0.4: ``G exp(-eps 0.4 N / 2)`` for ``G``
    bins and ``N`` values. The scale ranks ``floor(n / 2)`` pair differences
    among the bins of the scale ladder; each centre ranks ``n`` scores among at
    most the bins of a centre ladder with the smallest possible unit. Depends
    on n, eps and ``bound`` only, never on the data.
    """
    eps_scale, eps_centre = _frame_parts(eps)
    scale_bins = 2 * _SCALE_OCTAVES
    smallest_unit = float(_scale_ladder(bound)[0]) * _UNIT_PER_SCALE / _CENTRE_STEPS
    centre_bins = _centre_ladder(smallest_unit, bound).size - 1
    fail = em_failure_bound(scale_bins, n // 2, eps_scale, _MARGIN)
    fail += 2.0 * em_failure_bound(centre_bins, n, eps_centre, _MARGIN)
    return min(1.0, fail)


def frame_eps_needed(n: int, bound: float, target: float = 0.01) -> float:
    """Smallest frame epsilon whose :func:`frame_failure_bound` is at most ``target``."""
    lo, hi = 1e-6, 1e6
    if frame_failure_bound(n, hi, bound) > target:
        return math.inf
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        if frame_failure_bound(n, mid, bound) > target:
            lo = mid
        else:
            hi = mid
    return hi


def _check_frame(frame: object) -> tuple[tuple[float, float], tuple[float, float]]:
    try:
        (x0, x1), (y0, y1) = frame  # type: ignore[misc]
        values = [float(v) for v in (x0, x1, y0, y1)]  # type: ignore[has-type]
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
    inflate: float,
    order: NDArray[np.int64],
    rng: np.random.Generator,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Frame from three exponential-mechanism choices on public ladders (internal).

    1. Scale: the factor-sqrt(2) bin (:func:`_scale_ladder`) holding the
       median of ``max(|dx|, |dy|) / sqrt(2)`` over disjoint pairs of rows
       (``order``, a random pairing), with ``0.4 eps``. Pair differences are
       mean-free, so no centre is needed first. ``u = 1.4826`` times the bin's
       geometric middle estimates a standard deviation (of the wider axis, or
       more).
    2. Centres: the bin of :func:`_centre_ladder` holding the median of each
       axis, with ``0.3 eps`` each; the ladder's unit is ``u / 4``.
    3. Limits per axis: the bin's middle +- ``(1 + inflate) * 3 u`` plus half
       the bin's width, which covers the ladder's resolution.

    Notes
    -----
    Privacy: each choice is :func:`dppca.mechanisms.em_quantile`, eps-DP for
    its share: replacing a row changes one pair difference and one score per
    axis, so every count moves by at most one. The ladders depend on
    ``bound`` and the released scale only, and the pairing on n and the
    generator, so the frame is eps-DP by basic composition. The
    exponential mechanism's error grows with the logarithm of the number of
    candidates, which keeps the frame usable at small ``n eps``
    (:func:`frame_failure_bound`).
    """
    eps_scale, eps_centre = _frame_parts(eps)
    m = scores.shape[0] // 2
    first, second = order[0 : 2 * m : 2], order[1 : 2 * m : 2]
    with np.errstate(over="ignore", invalid="ignore"):
        diff = np.max(np.abs(scores[first] - scores[second]), axis=1) / math.sqrt(2.0)
    lo, hi = em_quantile(diff, _scale_ladder(bound), q=0.5, eps=eps_scale, rng=rng)
    unit = _UNIT_PER_SCALE * math.sqrt(lo * hi)
    ladder = _centre_ladder(unit / _CENTRE_STEPS, bound)
    limits = []
    for a in (0, 1):
        lo, hi = em_quantile(scores[:, a], ladder, q=0.5, eps=eps_centre, rng=rng)
        half = (1.0 + inflate) * _FRAME_SDS * unit + 0.5 * (hi - lo)
        centre = 0.5 * (lo + hi)
        limits.append((centre - half, centre + half))
    return limits[0], limits[1]


def bounds_frame(
    matrix: NDArray[np.float64], box: tuple[NDArray[np.float64], NDArray[np.float64]]
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The exact range of the scores ``V' x`` over the public box (free, internal).

    For direction ``v`` the score ranges over ``[sum min(v_j l_j, v_j u_j),
    sum max(v_j l_j, v_j u_j)]``; a function of public bounds and the
    (private or public) directions only.
    """
    limits = []
    for a in (0, 1):
        v = matrix[:, a]
        ends = np.stack([v * box[0], v * box[1]])
        lo, hi = float(ends.min(axis=0).sum()), float(ends.max(axis=0).sum())
        if not hi > lo:
            hi = lo + 1.0
        limits.append((lo, hi))
    return limits[0], limits[1]


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


def _check_group_count(labels: Any, public: tuple[Any, ...] | None, n: int) -> None:
    """Refuse a grouping with more than 5 labels per 100 rows (and more than 10).

    Such a column is usually an identifier, and a group of one row has a
    histogram that shows where that row lies. Without ``group_labels`` the label
    set is released anyway (see :func:`dp_score`), so counting it reveals
    nothing more; with them only the public list is counted.
    """
    if labels is None:
        return
    count = len(public) if public is not None else len(pd.unique(pd.Series(labels, dtype=object)))
    limit = max(10, n // 20)
    if count > limit:
        raise ValueError(
            f"groups has {count} labels for {n} rows (more than {limit}): it looks like an "
            "identifier column, and a group of a few rows would show where those rows lie. "
            "Group by a column with fewer labels."
        )


def _forecast_score(
    *, n: int, p: int, eps: float, delta: float, eps_f: float, bound: float,
    sigma_dir: float | None, sigma_add: float | None, cells: int, groups: int,
) -> Forecast:  # fmt: skip
    """Data-free forecast of a score release (see :mod:`dppca.forecast`).

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
class ScorePlan:
    """The data-free side of a score release: budget split, cost and forecast.

    Built by :func:`plan_score` from public quantities only; :func:`dp_score`
    runs exactly this plan.
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
    split: Mapping[str, float] | None = None,
    score_range: float = 1e6,
    calibration: Calibration = "analytic",
) -> ScorePlan:
    """Price and forecast a :func:`dp_score` call without any data.

    Parameters are those of :func:`dp_score` that shape the release, with the
    data replaced by its public size ``n`` x ``p``: whether directions, a
    public frame or public bounds are given, and the number of groups (None
    without groups).

    Returns
    -------
    ScorePlan
        ``cost`` (what the call would record) and ``forecast``.

    Examples
    --------
    >>> plan = plan_score(178, 13, eps=1.0, delta=1e-6)
    >>> plan.forecast.ok, round(plan.cost.eps, 6)
    (False, 1.0)
    """
    n = check_positive_int(n, "n")
    p = check_positive_int(p, "p")
    eps, delta = check_eps(eps), check_delta(delta)
    components = check_components(components, p)
    mx, my = _check_bins(bins, n)
    methods = _check_methods(method)
    calibration = check_calibration(calibration)
    bound = check_positive_float(score_range, "score_range")
    n_groups = 1 if groups is None else check_positive_int(groups, "groups")
    private_groups = groups is not None and not groups_public
    frame_private = not frame_given and not bounds_given
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
    shares = _check_split(split, used, defaults)
    delta_users = [k for k in ("directions", "histogram") if k in shares]
    delta_total = math.fsum(shares[k] for k in delta_users)
    delta_share = {k: delta * shares[k] / delta_total for k in delta_users}
    delta_d = delta_share.get("directions", 0.0)
    delta_m = delta_share["histogram"] / len(methods)
    grid = f"{n_groups} x {mx} x {my} cells"

    def build(t: float) -> list[PrivacyCost]:
        """The parts with every eps share of the basic split times ``t``."""
        parts: list[PrivacyCost] = []
        if not directions_given:
            eps_d = t * eps * shares["directions"]
            parts.append(
                PrivacyCost(eps_d, delta_d, mechanism=f"gaussian ({calibration})",
                            released=f"noisy spherical Kendall matrix ({p} x {p})",
                            kind="gaussian", sensitivity=kendall_sensitivity(n),
                            sigma=kendall_sigma(n, eps_d, delta_d, calibration))
            )  # fmt: skip
        if private_groups:
            eps_g = t * eps * shares["groups"]
            parts.append(
                PrivacyCost(eps_g, 0.0, "laplace", f"group sizes ({n_groups})",
                            kind="laplace", sensitivity=2.0, scale=2.0 / eps_g)
            )  # fmt: skip
        if frame_private:
            eps_f = t * eps * shares["frame"]
            parts.append(
                compose(
                    [
                        PrivacyCost(eps_f * _SCALE_SHARE, 0.0, "exponential mechanism",
                                    "frame scale (median pair difference)", kind="pure"),
                        *(
                            PrivacyCost(eps_f * (1 - _SCALE_SHARE) / 2, 0.0,
                                        "exponential mechanism", f"frame centre PC{c} (median)",
                                        kind="pure")
                            for c in components
                        ),
                    ],
                    released="private frame",
                )
            )  # fmt: skip
        eps_m = t * eps * shares["histogram"] / len(methods)
        for m in methods:
            if m == "add":  # L2 sensitivity sqrt(2): one row moves two cells by one
                sigma = gaussian_sigma(math.sqrt(2.0), eps_m, delta_m, calibration)
                parts.append(
                    PrivacyCost(eps_m, delta_m, f"gaussian ({calibration})",
                                f"{m} histogram ({grid})", kind="gaussian",
                                sensitivity=math.sqrt(2.0), sigma=sigma)
                )  # fmt: skip
            else:  # a release threshold: a generic (eps, delta) part
                parts.append(PrivacyCost(eps_m, delta_m, "laplace + threshold",
                                         f"{m} histogram ({grid})"))  # fmt: skip
        return parts

    released = "private score plot"
    if calibration == "analytic":
        t, parts = scale_to_tight(build, eps, delta)
        cost = PrivacyCost(
            eps, delta, "tight composition (accountant)", released, parts, kind="composed"
        )
    else:
        t = 1.0
        cost = compose(build(1.0), released=released)
    eps_d = t * eps * shares.get("directions", 0.0)
    eps_g = t * eps * shares.get("groups", 0.0)
    eps_f = t * eps * shares.get("frame", 0.0)
    eps_m = t * eps * shares["histogram"] / len(methods)
    forecast = _forecast_score(
        n=n, p=p, eps=eps, delta=delta, eps_f=eps_f if frame_private else 0.0, bound=bound,
        sigma_dir=None if directions_given else kendall_sigma(n, eps_d, delta_d, calibration),
        sigma_add=gaussian_sigma(math.sqrt(2.0), eps_m, delta_m, calibration)
        if "add" in methods else None,
        cells=mx * my, groups=n_groups,
    )  # fmt: skip
    return ScorePlan(
        MappingProxyType(dict(shares)),
        eps_d,
        delta_d,
        eps_g,
        eps_f,
        eps_m,
        delta_m,
        cost,
        forecast,
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
    inflate: float = 0.2,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    compare: bool = False,
    frame: tuple[tuple[float, float], tuple[float, float]] | None = None,
    random_state: RandomStateLike = None,
    budget: Budget | None = None,
    bounds: Any = None,
    accuracy: Accuracy = "warn",
    allow_large_delta: bool = False,
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
        a label held by one row reveals that row; ``result.private`` is then
        False).
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
        ``directions`` (0.35), ``frame``, ``groups`` (0.1) and ``histogram``
        (0.55, or 0.45 when private group sizes are released). The default frame
        weight is the smallest share of eps whose failure bound
        (:func:`frame_failure_bound`) is 1 %, kept between 0.1 and 0.4 of eps
        (a function of n and eps only); the other weights share the rest.
        Delta goes to the directions and the histograms in proportion to their
        weights. These shares are a basic split; with the analytic calibration
        every eps share is then scaled up until the tight total is eps (see
        Notes).
    score_range : float, default=1e6
        Public bound: scores are treated as lying in ``[-score_range,
        score_range]`` when the private frame is searched for.
    inflate : float, default=0.2
        The frame's half width of three scale units is multiplied by
        ``1 + inflate``.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration for the directions and the ``"add"`` histogram.
    ties : {"zero", "error"}, default="zero"
        Near-duplicate rows in the direction step; see :func:`dppca.dp_pc_dir`.
    frame : ((float, float), (float, float)), default=None
        A public frame ``((xmin, xmax), (ymin, ymax))`` the caller vouches for
        (for example from a known data domain). It costs nothing, and its
        budget share goes to the other parts. None estimates it privately.
    compare : bool, default=False
        Also attach the raw scores and exact histograms as ``nonprivate``
        (NOT private, for the analyst's own comparison; never publish them);
        ``result.private`` is then False.
    random_state : None, int or numpy.random.Generator, default=None
        Source of all noise. None draws fresh OS entropy, which a release meant
        for publication should use.
    budget : Budget, optional
        Checked for the call's cost before the data are touched; charged after.
    bounds : None, (lower, upper), array of shape (p, 2) or mapping, default=None
        Public data domain per variable (see :func:`dppca.dp_pc_dir`). The data
        are clipped to it, and the frame is the exact range of the scores over
        the bounded domain, at no privacy cost (unless ``frame=`` is given).
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What to do when the data-free forecast (``result.forecast``) says the
        picture would be wrong: warn, refuse before reading any data, or nothing.
    allow_large_delta : bool, default=False
        Permit ``delta >= 1/n``.

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
        With ``accuracy="warn"`` when the forecast finds a problem (for
        example n and the frame's share of eps too small for a reliable
        private frame, :func:`frame_failure_bound` > 0.05).

    See Also
    --------
    sample_points : synthetic points from a released histogram.
    dppca.plotting.plot_score, dppca.plotting.plot_score_panels

    Notes
    -----
    Privacy: neighbouring datasets have the same n and differ in one row; n is
    public. The call releases the parts below. Their shares of ``split`` are a
    basic split of (eps, delta); with the analytic calibration every eps share
    is then multiplied by the largest factor ``t >= 1`` whose tight total
    (:func:`dppca.accounting.tight_total`: Gaussian parts by their noise,
    Laplace and pure parts exactly) is still eps at delta, deltas unchanged.
    ``result.cost`` is (eps, delta) with these parts, whose own eps add up
    to ``t`` eps; each carries less noise than the basic split gives it. A
    "public" directions array equal to the data's own sample-covariance
    directions is refused (:func:`dppca.directions.refuse_own_directions`).

    1. directions (unless given): the noisy spherical Kendall matrix,
       (eps_d, delta_d) as in :func:`dppca.dp_pc_dir`;
    2. group sizes (private groups only): counts per group with Laplace(2 /
       eps_g) noise; a row that changes group moves two counts by one (L1
       sensitivity 2), so this is eps_g-DP;
    3. the frame (unless public bounds or a public ``frame`` give it): three
       exponential-mechanism choices on public ladders (:func:`private_frame`):
       a scale from disjoint pair differences, then the two medians; each
       count moves by at most one under replacement, so the frame is
       eps_f-DP. No sample mean, no smooth-sensitivity median;
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
    check_bins_cap(bins)  # before any work (issue 14)
    check_budget(budget)
    X, labels = _resolve_groups(X, groups)
    data, _variables = check_data(X, min_cols=2)
    n, p = data.shape
    eps = check_eps(eps)
    delta = check_delta_for_n(
        check_delta(delta), n, check_bool(allow_large_delta, "allow_large_delta")
    )
    components = check_components(components, p)
    mx, my = _check_bins(bins, n)
    methods = _check_methods(method)
    groups_public = check_bool(groups_public, "groups_public")
    compare = check_bool(compare, "compare")
    bound = check_positive_float(score_range, "score_range")
    inflate = check_real(inflate, "inflate", low=0.0)
    accuracy = check_accuracy(accuracy)
    box = check_bounds(bounds, _variables)
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
    _check_group_count(labels, public_levels, n)
    if public_levels is not None and labels is None:
        raise ValueError("group_labels needs groups; pass the group of each row as well.")
    levels, codes = (None, None) if labels is None else _group_codes(labels, n, public_levels)
    n_groups = 1 if levels is None else len(levels)
    rng = check_random_state(random_state)

    private_groups = levels is not None and not groups_public
    plan = plan_score(
        n, p, eps=eps, delta=delta, bins=(mx, my), components=components,
        method=cast("Sequence[ScoreMethod]", methods),
        directions_given=matrix is not None, groups=None if levels is None else n_groups,
        groups_public=groups_public, frame_given=public_frame is not None,
        bounds_given=box is not None, split=split, score_range=bound, calibration=calibration,
    )  # fmt: skip
    cost, forecast = plan.cost, plan.forecast
    eps_g, eps_f = plan.eps_groups, plan.eps_frame
    eps_m, delta_m = plan.eps_method, plan.delta_method
    enforce(forecast, accuracy)
    if budget is not None:
        budget.check(cost)
    if matrix is not None and dir_result is None:
        refuse_own_directions(data, matrix, components)
    if box is not None:
        data = apply_bounds(data, box)

    # Randomness order: directions, group sizes, frame, histograms (method order).
    if matrix is None:
        dir_result = dp_pc_dir(
            data, max(components), eps=plan.eps_directions, delta=plan.delta_directions,
            random_state=rng, calibration=calibration, ties=ties, accuracy="ignore",
            allow_large_delta=True,
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

    if public_frame is not None:
        xlim, ylim = public_frame
    elif box is not None:
        xlim, ylim = bounds_frame(matrix, box)
    else:
        order = random_pairing(n, rng)
        xlim, ylim = private_frame(
            scores, eps=eps_f, bound=bound, inflate=inflate, order=order, rng=rng
        )
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
        directions_release=dir_result,
        noise=MappingProxyType(noise),
        cost=cost,
        nonprivate=nonprivate,
        frame_source=(
            "public" if public_frame is not None else "bounds" if box is not None else "private"
        ),
        bounds=None if box is None else np.column_stack(box),
        forecast=forecast,
        variables=_variables,
        groups_source=None if levels is None else "data" if public_levels is None else "public",
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
