"""The result of a score release, and synthetic points drawn from it.

:class:`ScoreResult` holds the frame, the grid and the noisy bin
probabilities; :func:`sample_points` turns a released histogram into points
(post-processing, no cost).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from ...core.lazy import pandas as pd
from ...core.score_checks import check_sample_options
from ...core.types import RandomStateLike
from ...core.validation import post_processing_rng
from ...privacy.cost import PrivacyCost
from ...privacy.mechanisms import sample_histogram
from ..directions.result import DirectionsResult
from ..forecast import Forecast
from ..protocol import FrozenPickle, ResultMixin, check_directions_source, drawer

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["NonPrivateScores", "ScoreResult", "sample_points"]

SampleKind = Literal["center", "uniform"]

_DEFAULT_BANDWIDTH = {"center": 0.5, "uniform": 0.25}


@dataclass(frozen=True, eq=False, repr=False)
class NonPrivateScores(FrozenPickle):
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
        :attr:`ScreeResult.directions_release`).
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
        (``groups_source="data"`` without ``groups_public``); not a
        constructor argument.
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
    scales, scale_note : ndarray of shape (p,) or None, str or None
        With ``scale="private"``: what the data were divided by (the released
        scales) and a note naming the columns left unscaled.
    notes : tuple of str
        Problems the post-release frame check found (a frame that probably
        cuts off, misses or dwarfs the scores), as warned or raised; empty
        when it found none or did not run (``accuracy="ignore"``).

    Examples
    --------
    >>> from dppca import dp_score
    >>> from dppca.datasets import load_iris
    >>> res = dp_score(load_iris().iloc[:, :4], eps=1.0, delta=1e-6, random_state=0)
    >>> res
    ScoreResult(n=150, components=(1, 2), bins=(3, 3), methods=('add',), eps=1, delta=1e-06)
    >>> res.probs["add"].shape  # one row of bin probabilities (no groups), 3 x 3 bins
    (1, 9)
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
    bounds: NDArray[np.float64] | None = None
    forecast: Forecast | None = None
    variables: tuple[str, ...] = ()
    groups_source: str | None = None
    scales: NDArray[np.float64] | None = None
    scale_note: str | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        source = check_directions_source(self.directions_source)
        object.__setattr__(self, "directions_source", source)
        if not self.variables and self.directions_release is not None:
            object.__setattr__(self, "variables", tuple(self.directions_release.variables))
        object.__setattr__(self, "variables", tuple(self.variables))
        arrays = (self.x_edges, self.y_edges, self.directions, self.group_sizes, self.bounds)
        for a in (*arrays, self.scales):
            if a is not None:
                a.setflags(write=False)
        for a in self.probs.values():
            a.setflags(write=False)

    @property
    def p(self) -> int:
        """Number of variables."""
        return int(self.directions.shape[0])

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
        return drawer(self)(self, kind=kind, ax=ax, **kwargs)

    def __repr__(self) -> str:
        groups = "" if self.groups is None else f", groups={len(self.groups)}"
        return (
            f"ScoreResult(n={self.n}, components={self.components}, bins={self.bins}, "
            f"methods={self.methods}{groups}, eps={self.cost.eps:.4g}, "
            f"delta={self.cost.delta:.3g})"
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


def _points_per_group(
    result: ScoreResult, alive: NDArray[np.bool_], size: int
) -> NDArray[np.int64]:
    """Points per group: by released size among groups with a non-zero histogram."""
    if result.groups is None:
        return np.array([size])
    weights = np.where(alive, np.maximum(np.asarray(result.group_sizes), 0.0), 0.0)
    if weights.sum() <= 0:
        weights = alive.astype(np.float64)
    return _allocate(size, weights)


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
        Source of the points' randomness: a stream derived apart from the
        release's noise (:func:`dppca.core.validation.post_processing_rng`), so
        even the release's own seed never re-draws the released noise.

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
    method, size, bandwidth = check_sample_options(
        method,
        size,
        kind,
        bandwidth,
        methods=result.methods,
        n=result.n,
        bandwidths=_DEFAULT_BANDWIDTH,
    )
    rng = post_processing_rng(random_state)  # never the noise stream
    prob = np.asarray(result.probs[method])
    alive = prob.sum(axis=1) > 0
    if not alive.any():
        raise ValueError(
            f"the {method!r} histogram is all zero (the noise removed every bin); nothing "
            "to sample. Try a larger eps, fewer bins or another method."
        )
    counts = _points_per_group(result, alive, size)
    pieces, labels = [], []
    for g, count in enumerate(counts):
        if count == 0:
            continue
        p = prob[g] / prob[g].sum()
        pieces.append(
            sample_histogram(
                p,
                np.asarray(result.x_edges),
                np.asarray(result.y_edges),
                size=int(count),
                kind=kind,
                bandwidth=float(bandwidth),
                rng=rng,
            )
        )
        if result.groups is not None:
            labels.extend([result.groups[g]] * int(count))
    frame = pd.DataFrame(np.vstack(pieces), columns=list(result.pc_labels))
    if result.groups is not None:
        frame["group"] = pd.Categorical(labels, categories=list(result.groups))
    return frame
