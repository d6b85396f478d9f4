"""Score plots: private histogram panels, synthetic sample panels, group colours.

Everything drawn here comes from a :class:`dppca.ScoreResult` (and samples drawn
from it); axis limits are the private frame. Non-private comparison panels are
drawn only when asked for and say so in their title. Every panel states eps,
delta and n; private panels also say that no individual data point is shown,
and histogram panels carry a colour bar of the bin probabilities.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.collections import PolyCollection
from matplotlib.colors import LinearSegmentedColormap, Normalize, to_rgba
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ._caption import add_privacy_caption, add_resolvability_note
from ._kwargs import check_artist_kwargs

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..releases.score.result import ScoreResult
    from ..releases.scree.result import ScreeResult

__all__ = ["group_color_map", "plot_score", "plot_score_groups", "plot_score_panels"]

_KINDS = ("histogram", "sample", "nonprivate", "scatter")
_TITLES = {"add": "Add DP histogram", "sparse": "Sparse DP histogram"}
_NOTES = {
    "histogram": "bins only; no data points are shown (privacy)",
    "sample": "synthetic points, not data rows (privacy)",
}
#: Label of the colour bar of a histogram panel.
COLORBAR_LABEL = "bin probability"
_BAR_COLOR = "0.15"  # the colour bar of a grouped panel: opacity only, in a neutral grey


def group_color_map(
    groups: Sequence[Any], group_colors: Mapping[Any, Any] | Sequence[Any] | None = None
) -> dict[Any, Any]:
    """Colour per group label: the caller's mapping or list, else the tab10/tab20 palette.

    Examples
    --------
    >>> group_color_map(["a", "b"], {"a": "red", "b": "blue"})
    {'a': 'red', 'b': 'blue'}
    >>> sorted(group_color_map(["x", "y", "z"]))  # the default palette, one colour each
    ['x', 'y', 'z']
    """
    groups = list(groups)
    if isinstance(group_colors, Mapping):
        palette = _default_palette(len(groups))
        return {g: group_colors.get(g, palette[i]) for i, g in enumerate(groups)}
    if group_colors is not None:
        colors = list(group_colors)
        if not colors:
            raise ValueError("group_colors must not be empty.")
        return {g: colors[i % len(colors)] for i, g in enumerate(groups)}
    palette = _default_palette(len(groups))
    return dict(zip(groups, palette, strict=True))


def _default_palette(k: int) -> list[Any]:
    cmap = plt.get_cmap("tab10" if k <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(k)]


def _label_parts(result: ScoreResult) -> tuple[str, ...]:
    """The non-private part a panel of released values shows: labels read from the data.

    Such a panel shows no comparison part, but a grouped panel shows the group
    labels; the caption states their eps, delta and n and, on its own line,
    that labels read from the data are not private.
    """
    return ("groups",) if "groups" in result.nonprivate_parts() else ()


def group_text(label: Any) -> str:
    """A group label as written: a whole float (read from a numeric column) without ``.0``."""
    if isinstance(label, (float, np.floating)) and float(label).is_integer():
        return str(int(label))
    return str(label)


def axis_labels(result: ScoreResult, variances: ScreeResult | None) -> tuple[str, str]:
    """``PC1``, ``PC2``, with the share of the private total variance when ``variances`` is given.

    ``variances`` is a scree released along the same directions (the report's
    scree, or ``dp_scree(..., directions=result.directions_release)``): its
    ``pve_total`` is post-processing of private outputs, so the labels add no
    cost. Components beyond the scree's ``k`` keep their plain label.
    """
    names = result.pc_labels[:2]
    if variances is None:
        return names[0], names[1]
    pve = np.asarray(variances.pve_total, dtype=np.float64)
    out = []
    for c, name in zip(result.components, names, strict=True):
        if 1 <= c <= pve.size and np.isfinite(pve[c - 1]):
            out.append(f"{name} ({100 * pve[c - 1]:.0f}% of private total variance)")
        else:
            out.append(name)
    return out[0], out[1]


def _frame_axes(
    ax: Axes, result: ScoreResult, title: str | None, variances: ScreeResult | None = None
) -> None:
    ax.set_xlim(*result.xlim)
    ax.set_ylim(*result.ylim)
    ax.set_aspect("equal", adjustable="box")
    xlabel, ylabel = axis_labels(result, variances)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)


def _rectangles(result: ScoreResult) -> np.ndarray:
    table = result.bins_frame()
    x0, x1 = table["xmin"].to_numpy(), table["xmax"].to_numpy()
    y0, y1 = table["ymin"].to_numpy(), table["ymax"].to_numpy()
    return np.stack([np.column_stack(c) for c in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))], axis=1)


def _histogram(
    ax: Axes,
    result: ScoreResult,
    prob: np.ndarray,
    colors: list[Any],
    alpha_range: tuple[float, float],
    **kwargs: Any,
) -> float:
    """Draw the bins with opacity following ``prob``; return the probability of full opacity."""
    verts = _rectangles(result)
    top = float(prob.max()) if prob.size else 0.0
    lo, hi = alpha_range
    faces, polys = [], []
    for g in range(prob.shape[0]):
        for j in np.flatnonzero(prob[g] > 0):
            alpha = lo + (hi - lo) * prob[g, j] / top if top > 0 else lo
            faces.append(to_rgba(colors[g], alpha))
            polys.append(verts[j])
    kwargs = {"edgecolors": "none", **kwargs}
    ax.add_collection(PolyCollection(polys, facecolors=faces, **kwargs))
    return top


def _colorbar(
    ax: Axes,
    top: float,
    color: Any,
    alpha_range: tuple[float, float],
    *,
    label: str = COLORBAR_LABEL,
    location: str = "right",
) -> Any:
    """A colour bar of bin probability on [0, top], in the opacities the bins use.

    ``top`` is the largest released probability of the panel (a public,
    released value; 1 when every bin was removed), so the scale never
    depends on the data beyond the release itself.
    """
    lo, hi = alpha_range
    ends = [to_rgba(color, lo), to_rgba(color, hi)]
    cmap = LinearSegmentedColormap.from_list("dppca_bins", ends)
    mappable = ScalarMappable(norm=Normalize(0.0, top if top > 0 else 1.0), cmap=cmap)
    opts: dict[str, Any] = {"ax": ax, "location": location, "label": label}
    opts.update({"fraction": 0.046, "pad": 0.04} if location == "right" else {"aspect": 30})
    bar = ax.figure.colorbar(mappable, **opts)
    bar.locator = MaxNLocator(nbins=4)
    bar.ax.tick_params(labelsize=7)
    return bar


def _grid(ax: Any, nrows: int, ncols: int, *, figsize: tuple[float, float]) -> tuple[Any, Any]:
    """The figure and the ``(nrows, ncols)`` array of panels: new, or the caller's ``ax``."""
    if ax is None:
        return plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, layout="constrained")
    flat = list(np.ravel(np.asarray(ax, dtype=object)))
    if len(flat) != nrows * ncols or not all(isinstance(a, Axes) for a in flat):
        raise ValueError(
            f"ax must be {nrows * ncols} matplotlib Axes here ({nrows} x {ncols} panels, "
            f"row by row); got {len(flat)} item(s)."
        )
    return flat[0].figure, np.array(flat, dtype=object).reshape(nrows, ncols)


def _legend(ax: Axes, cmap: Mapping[Any, Any]) -> None:
    handles = [Patch(facecolor=c, label=group_text(g)) for g, c in cmap.items()]
    ax.legend(handles=handles, title="group", loc="center left", bbox_to_anchor=(1.02, 0.5))


def _check_panel(
    result: ScoreResult, kind: str, method: str | None, sample: pd.DataFrame | None
) -> str:
    """Check :func:`plot_score`'s options before drawing; return the histogram method."""
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, _KINDS))}; got {kind!r}.")
    method = result.methods[0] if method is None else method
    if method not in result.probs:
        raise ValueError(f"method must be one of {list(result.methods)!r}; got {method!r}.")
    if kind in ("nonprivate", "scatter") and result.nonprivate is None:
        raise ValueError(
            f"kind={kind!r} needs the non-private comparison; call dp_score(..., "
            "compare=True) (never publish that part)."
        )
    if kind == "sample" and not isinstance(sample, pd.DataFrame):
        raise TypeError("kind='sample' needs sample=, a DataFrame from dppca.sample_points.")
    return method


def _scatter_points(
    result: ScoreResult, kind: str, sample: pd.DataFrame | None, labels: list[Any]
) -> tuple[np.ndarray, np.ndarray | None]:
    """A sample panel's synthetic points or a scatter panel's raw scores, and their groups."""
    if kind == "sample":
        assert sample is not None  # checked by _check_panel
        grp = sample["group"] if result.groups is not None and "group" in sample else None
        return sample[list(result.pc_labels)].to_numpy(), None if grp is None else grp.to_numpy()
    assert result.nonprivate is not None  # checked by _check_panel
    pts, codes = np.asarray(result.nonprivate.scores), result.nonprivate.group_codes
    if codes is None:
        return pts, None
    keep = codes >= 0  # rows outside the public labels (code -1) are not drawn
    return pts[keep], np.asarray(labels, dtype=object)[codes[keep]]


def plot_score(
    result: ScoreResult,
    *,
    kind: str = "histogram",
    method: str | None = None,
    sample: pd.DataFrame | None = None,
    ax: Axes | None = None,
    color: Any = "#6A5ACD",
    group_colors: Mapping[Any, Any] | Sequence[Any] | None = None,
    legend: bool = True,
    alpha_range: tuple[float, float] = (0.0, 1.0),
    title: str | None = None,
    colorbar: bool = True,
    variances: ScreeResult | None = None,
    **kwargs: Any,
) -> Axes:
    """Draw one score panel inside the private frame.

    Parameters
    ----------
    result : ScoreResult
    kind : {"histogram", "sample", "nonprivate", "scatter"}, default="histogram"
        ``"histogram"``: a released histogram, one rectangle per bin with
        opacity following its probability (groups in their colours, opacity
        scaled over all groups together). ``"sample"``: the points of
        ``sample`` (from :func:`dppca.sample_points`). ``"nonprivate"`` and
        ``"scatter"``: the exact histogram and the raw scores, available only
        for results made with ``compare=True``; titled as non-private.
    method : str, default=None
        Histogram method (first released by default).
    sample : pandas.DataFrame, default=None
        Required for ``kind="sample"``.
    ax : matplotlib Axes, default=None
        Drawn on; a new figure is made if None.
    color : colour, default="#6A5ACD"
        Fill colour without groups.
    group_colors : mapping or list, default=None
        Colours per group label; see :func:`group_color_map`.
    legend : bool, default=True
        A group legend beside the panel (grouped results only).
    alpha_range : (float, float), default=(0, 1)
        Opacity of the smallest and of the largest probability.
    title : str, default=None
        Panel title; a default naming the method (and "non-private") is used.
    colorbar : bool, default=True
        Histogram kinds: a colour bar of the bin probabilities, from 0 to the
        panel's largest released probability, in the opacities of the bins
        (grey for grouped results, whose groups share one opacity scale). It
        sits right of the panel, or below it when a group legend takes the
        right side.
    variances : ScreeResult, default=None
        A private scree along the same directions: the axis labels then give
        each PC's share of the private total variance (see :func:`axis_labels`).
    **kwargs
        Passed to the one main artist (PolyCollection or scatter).

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Under the title, a small grey caption states eps, delta and n (or
    "non-private" for the comparison kinds, and for group labels read from
    the data, ``result.nonprivate_parts()``) and, for the private kinds, that
    no individual data point is shown: a histogram panel draws only released
    bins, a sample panel only synthetic points. The colour bar's scale is
    released values only.

    Examples
    --------
    >>> from dppca import dp_score
    >>> from dppca.datasets import load_iris
    >>> res = dp_score(load_iris().iloc[:, :4], eps=1.0, delta=1e-6, random_state=0)
    >>> ax = plot_score(res)  # the released histogram; no data point is drawn
    >>> ax.get_xlim() == res.xlim and ax.get_ylim() == res.ylim
    True
    """
    method = _check_panel(result, kind, method, sample)
    check_artist_kwargs(
        kwargs, "plot_score", "polys" if kind in ("histogram", "nonprivate") else "scatter"
    )
    if ax is None:
        _, ax = plt.subplots()
    grouped = result.groups is not None
    labels: list[Any] = [None] if result.groups is None else list(result.groups)
    cmap = group_color_map(labels, group_colors) if grouped else {None: color}
    colors = [cmap[g] for g in labels]

    top = None
    if kind == "histogram":
        top = _histogram(
            ax, result, np.asarray(result.probs[method]), colors, alpha_range, **kwargs
        )
        default = _TITLES[method]
    elif kind == "nonprivate":
        assert result.nonprivate is not None  # checked above
        top = _histogram(
            ax, result, np.asarray(result.nonprivate.prob), colors, alpha_range, **kwargs
        )
        default = "NON-PRIVATE histogram"
    else:
        pts, grp = _scatter_points(result, kind, sample, labels)
        default = (
            f"Sample from {method} DP histogram" if kind == "sample" else "NON-PRIVATE scores"
        )
        point_colors = [color] * len(pts) if grp is None else [cmap[g] for g in grp]
        kwargs = {"s": 4, "alpha": 0.6, "linewidths": 0, **kwargs}
        ax.scatter(pts[:, 0], pts[:, 1], c=point_colors, **kwargs)
    _frame_axes(ax, result, default if title is None else title, variances)
    private = kind in ("histogram", "sample")
    add_privacy_caption(
        ax,
        result,
        private=private,
        note=_NOTES.get(kind),
        nonprivate=_label_parts(result) if private else (),
    )
    if private:
        add_resolvability_note(ax, result, result.components)
    if top is not None and colorbar:
        _colorbar(
            ax,
            top,
            _BAR_COLOR if grouped else color,
            alpha_range,
            label=COLORBAR_LABEL if private else "bin proportion (non-private)",
            location="bottom" if grouped and legend else "right",
        )
    if grouped and legend:
        _legend(ax, cmap)
    return ax


def plot_score_panels(
    result: ScoreResult,
    *,
    samples: Mapping[str, pd.DataFrame] | None = None,
    compare: bool = False,
    group_colors: Mapping[Any, Any] | Sequence[Any] | None = None,
    legend: bool = True,
    panel_size: float = 3.6,
    ax: Any = None,
    **kwargs: Any,
) -> Figure:
    """All panels of a score result in one figure.

    One histogram panel per released method; with ``samples`` (method ->
    DataFrame from :func:`dppca.sample_points`) a second row of sample
    panels; with ``compare=True`` (result made with ``compare=True``) a first
    column with the non-private scores and histogram, titled as such.

    Parameters
    ----------
    ax : sequence or array of matplotlib Axes, optional
        The panels to draw on, row by row: one row of ``len(methods)``
        columns (one more with ``compare``), two rows with ``samples`` or
        ``compare``. By default a new figure of that layout (``panel_size``
        inches a panel).

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (that of ``ax`` when given).

    Examples
    --------
    >>> from dppca import dp_score
    >>> from dppca.datasets import load_iris
    >>> res = dp_score(load_iris().iloc[:, :4], eps=1.0, delta=1e-6, random_state=0)
    >>> fig = plot_score_panels(res)
    >>> len(fig.axes) >= 1
    True
    """
    if compare and result.nonprivate is None:
        raise ValueError("compare=True needs a result made with dp_score(..., compare=True).")
    samples = dict(samples or {})
    unknown = [m for m in samples if m not in result.probs]
    if unknown:
        raise ValueError(f"samples keys must be among {list(result.methods)!r}; got {unknown!r}.")
    ncols = len(result.methods) + (1 if compare else 0)
    nrows = 2 if (samples or compare) else 1
    # Panel height follows the frame's aspect ratio (public: the frame is private output).
    ratio = (result.ylim[1] - result.ylim[0]) / (result.xlim[1] - result.xlim[0])
    height = (panel_size - 0.6) * min(max(ratio, 0.25), 4.0) + 1.3  # title, caption, axis labels
    extra = 1.5 if result.groups is not None and legend else 0.0
    width = (panel_size + 0.7) * ncols + extra  # 0.7 inch per panel for its colour bar
    fig, axes = _grid(ax, nrows, ncols, figsize=(width, height * nrows))
    opts = {"group_colors": group_colors, **kwargs}
    col0 = 0
    if compare:
        plot_score(result, kind="scatter", ax=axes[0, 0], legend=False, **opts)
        plot_score(result, kind="nonprivate", ax=axes[1, 0], legend=False, **opts)
        col0 = 1
    for c, m in enumerate(result.methods, start=col0):
        plot_score(result, kind="histogram", method=m, ax=axes[0, c], legend=False, **opts)
        if nrows == 2:
            if m in samples:
                plot_score(
                    result,
                    kind="sample",
                    method=m,
                    sample=samples[m],
                    ax=axes[1, c],
                    legend=False,
                    **opts,
                )
            else:
                axes[1, c].set_axis_off()
    if result.groups is not None and legend:
        cmap = group_color_map(list(result.groups), group_colors)
        handles = [Patch(facecolor=col, label=group_text(g)) for g, col in cmap.items()]
        fig.legend(handles=handles, title="group", loc="outside right center")
    return fig


def plot_score_groups(
    result: ScoreResult,
    *,
    method: str | None = None,
    overlay: bool = True,
    group_colors: Mapping[Any, Any] | Sequence[Any] | None = None,
    ncols: int = 3,
    panel_size: float = 3.2,
    alpha_range: tuple[float, float] = (0.0, 1.0),
    ax: Any = None,
    variances: ScreeResult | None = None,
    **kwargs: Any,
) -> Figure:
    """One histogram panel per group on the shared private frame.

    Each group's panel scales opacity to its own largest probability, so a
    spread-out group stays visible; its colour bar shows that scale. With
    ``overlay=True`` the first panel shows all groups together (opacity
    scaled jointly), as :func:`plot_score` does.

    Parameters
    ----------
    ax : sequence or array of matplotlib Axes, optional
        The panels to draw on, row by row: ``ncols`` columns and as many rows
        as the groups (plus the overlay) need; spare panels are switched off.
        By default a new figure of that layout.
    variances : ScreeResult, optional
        As in :func:`plot_score`: % of the private total variance on the axes.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (that of ``ax`` when given).

    Examples
    --------
    >>> from dppca import dp_score
    >>> from dppca.datasets import load_iris_g
    >>> labels = ["setosa", "versicolor", "virginica"]  # public: from the codebook
    >>> res = dp_score(load_iris_g(), eps=1.0, delta=1e-6, groups="species",
    ...                group_labels=labels, groups_public=True, random_state=0)
    >>> fig = plot_score_groups(res, overlay=False)
    >>> [ax.get_title() for ax in fig.axes[:3]]  # doctest: +ELLIPSIS
    [...setosa..., ...versicolor..., ...virginica...]
    """
    if result.groups is None:
        raise ValueError("plot_score_groups needs a grouped result (dp_score(..., groups=...)).")
    method = result.methods[0] if method is None else method
    if method not in result.probs:
        raise ValueError(f"method must be one of {list(result.methods)!r}; got {method!r}.")
    labels = list(result.groups)
    cmap = group_color_map(labels, group_colors)
    n_panels = len(labels) + (1 if overlay else 0)
    ncols = max(1, min(int(ncols), n_panels))
    nrows = -(-n_panels // ncols)
    ratio = (result.ylim[1] - result.ylim[0]) / (result.xlim[1] - result.xlim[0])
    height = (panel_size - 0.6) * min(max(ratio, 0.25), 4.0) + 1.3  # title, caption, axis labels
    fig, axes = _grid(ax, nrows, ncols, figsize=((panel_size + 0.7) * ncols, height * nrows))
    flat = list(axes.ravel())
    if overlay:
        plot_score(
            result,
            method=method,
            ax=flat.pop(0),
            group_colors=cmap,
            legend=False,
            alpha_range=alpha_range,
            title=f"{_TITLES[method]}, all groups",
            variances=variances,
            **kwargs,
        )
    prob = np.asarray(result.probs[method])
    for g, label in enumerate(labels):
        ax = flat.pop(0)
        top = _histogram(ax, result, prob[g : g + 1], [cmap[label]], alpha_range, **kwargs)
        empty = "" if prob[g].any() else " (all bins removed by noise)"
        _frame_axes(ax, result, f"{group_text(label)}{empty}", variances)
        add_privacy_caption(
            ax, result, private=True, note=_NOTES["histogram"], nonprivate=_label_parts(result)
        )
        _colorbar(ax, top, cmap[label], alpha_range)
    for ax in flat:
        ax.set_axis_off()
    return fig
