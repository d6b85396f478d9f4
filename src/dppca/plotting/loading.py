"""Loading plots: vector, point and heatmap displays of PC directions.

Limits come from a public fact only: PC directions are unit vectors, so every
coordinate lies in [-1, 1]. They never depend on the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle, Ellipse
from numpy.typing import NDArray

from .._typing import LoadingKind, RandomStateLike
from .._validation import (
    check_choice,
    check_components,
    check_open_unit,
    check_pc_list,
    check_positive_int,
    check_variable_names,
    repel_iterations,
)
from ..loading import LoadingResult, NoiseSensitivity
from ._caption import add_privacy_caption

__all__ = ["plot_loading", "plot_loading_heatmap", "plot_loading_point", "plot_loading_vector"]

#: Axis limits of every vector and point loading plot (coordinates of unit vectors).
LIMITS = (-1.0, 1.0)
#: Colour limits of every loading heatmap.
CLIM = (-1.0, 1.0)

_DP_COLOR = "#1f5fa8"
_NP_COLOR = "#b8572a"
_LABEL_OFFSET_PT = 4.0  # gap between an arrow tip (or point) and its label
_LABEL_PAD_PT = 1.5  # minimal gap kept between two labels
_LEADER_PT = 10.0  # draw a leader line when a label ends farther than this from its tip


def _tag(private: bool) -> str:
    return "DP" if private else "non-private"


def _privacy_title(result: LoadingResult) -> str:
    d = result.directions
    if d.private and d.cost is not None and not result.main_private:
        return "DP loadings with non-private signs (not DP)"
    if d.private and d.cost is not None:
        return "DP loadings"  # eps, delta and n are in the caption under the title
    return "Non-private loadings (not DP)"


def _resolve_compare(result: LoadingResult, compare: bool | None) -> bool:
    if compare is None:
        return result.nonprivate is not None
    if compare and result.nonprivate is None:
        raise ValueError(
            "compare=True needs the non-private comparison; call dp_loading(..., compare=True)."
        )
    return bool(compare)


def _select_rows(
    result: LoadingResult,
    main: NDArray[np.float64],
    cols: Sequence[int],
    variables: Sequence[str] | None,
    top: int | None,
) -> list[int]:
    """Row indices to show: named variables, else the ``top`` longest, else all."""
    if variables is not None and top is not None:
        raise ValueError("pass either variables or top, not both.")
    if variables is not None:
        names = check_variable_names(variables, result.variables)
        return [result.variables.index(v) for v in names]
    rows = list(range(result.p))
    if top is not None:
        top = check_positive_int(top, "top")
        length = np.sqrt(np.sum(main[:, list(cols)] ** 2, axis=1))
        # Stable sort: equal lengths keep the data's column order.
        order = np.argsort(-length, kind="stable")[: min(top, result.p)]
        rows = sorted(int(j) for j in order)
    return rows


def _new_axes(ncols: int, figsize: tuple[float, float]) -> tuple[Figure, list[Axes]]:
    fig, axes = plt.subplots(1, ncols, figsize=figsize, squeeze=False)
    return fig, list(axes[0])


def _renderer(fig: Any) -> Any:
    get = getattr(fig.canvas, "get_renderer", None)
    if get is not None:
        return get()
    return fig._get_renderer()  # pragma: no cover - non-Agg canvases


def _place_labels(
    ax: Axes,
    tips: NDArray[np.float64],
    labels: Sequence[str],
    *,
    text_kws: dict[str, Any],
    leader_color: str,
    max_iter: int = 300,
) -> list[Any]:
    """Write ``labels`` next to ``tips`` (data coordinates) and push overlapping ones apart.

    Each label starts just beyond its tip, on the ray from the origin, inside
    the axes box. Then, in display units, every pair of overlapping label
    boxes is separated along the axis of least overlap, and a label lying on
    an arrow shaft is moved across it, all at once, until nothing overlaps
    (or ``max_iter`` rounds). A label that ends far from its tip gets a thin
    leader line. The rule is deterministic: the same result gives the same
    picture.
    """
    max_iter = repel_iterations(len(labels), max_iter)  # issue 14: O(m^2) rounds capped
    fig = ax.figure
    ax.apply_aspect()
    renderer = _renderer(fig)
    trans = ax.transData
    px_per_pt = fig.dpi / 72.0
    texts = [
        ax.text(x, y, lab, ha="center", va="center", clip_on=False, **text_kws)
        for (x, y), lab in zip(tips, labels, strict=True)
    ]
    if not texts:
        return texts
    sizes = np.array(
        [
            [t.get_window_extent(renderer).width, t.get_window_extent(renderer).height]
            for t in texts
        ]
    )
    tip_px = trans.transform(tips)
    origin_px = trans.transform(np.zeros((1, 2)))[0]
    ray = tip_px - origin_px
    norm = np.hypot(ray[:, 0], ray[:, 1])
    unit = np.where(norm[:, None] > 1e-9, ray / np.maximum(norm, 1e-9)[:, None], [1.0, 0.0])
    reach = _LABEL_OFFSET_PT * px_per_pt + np.abs(unit[:, 0]) * sizes[:, 0] / 2
    reach += np.abs(unit[:, 1]) * sizes[:, 1] / 2
    centre = tip_px + unit * reach[:, None]
    # Labels stay inside the axes box, so they never spill onto a neighbouring panel.
    box = ax.get_window_extent(renderer)
    low = np.array([box.x0, box.y0]) + sizes / 2
    high = np.maximum(np.array([box.x1, box.y1]) - sizes / 2, low)
    centre = np.clip(centre, low, high)
    pad = _LABEL_PAD_PT * px_per_pt
    half = sizes / 2 + pad / 2
    # Fixed obstacles: points along each segment from the origin to a tip (arrow shafts).
    fractions = np.linspace(0.0, 1.0, 12)
    obstacles = (origin_px + fractions[:, None, None] * ray[None, :, :]).reshape(-1, 2)
    normals = np.tile(np.column_stack([-unit[:, 1], unit[:, 0]]), (fractions.size, 1))
    obstacle_half = np.full(2, 1.5 * px_per_pt)
    m = len(texts)
    index = np.arange(m)
    for _ in range(max_iter):
        diff = centre[:, None, :] - centre[None, :, :]  # (m, m, 2): i minus j
        overlap = half[:, None, :] + half[None, :, :] - np.abs(diff)
        clash = (overlap[..., 0] > 0) & (overlap[..., 1] > 0) & (index[:, None] != index[None, :])
        # Direction of the push on i, away from j; exact ties go by index order.
        tie = np.where(index[:, None] < index[None, :], -1.0, 1.0)[..., None]
        step = _pushes(diff, overlap, clash, tie, share=0.5)
        odiff = centre[:, None, :] - obstacles[None, :, :]
        ooverlap = half[:, None, :] + obstacle_half - np.abs(odiff)
        oclash = (ooverlap[..., 0] > 0) & (ooverlap[..., 1] > 0)
        if not clash.any() and not oclash.any():
            break
        # A label on an arrow shaft moves across the shaft, not along it.
        along_n = np.sum(odiff * normals[None, :, :], axis=2)  # (m, n_obstacles)
        reach_n = half[:, None, 0] * np.abs(normals[None, :, 0])
        reach_n = reach_n + half[:, None, 1] * np.abs(normals[None, :, 1]) + obstacle_half[0]
        need = np.where(oclash, reach_n - np.abs(along_n), 0.0).clip(min=0.0)
        direction = np.where(along_n < 0, -1.0, 1.0)
        ostep = (need * direction)[..., None] * normals[None, :, :]
        hits = np.maximum(oclash.sum(axis=1), 1)[:, None]
        centre = centre + 0.6 * step.sum(axis=1) + 0.8 * ostep.sum(axis=1) / hits
        centre = np.clip(centre, low, high)
    inverse = trans.inverted()
    leader = _LEADER_PT * px_per_pt
    for j, text in enumerate(texts):
        text.set_position(cast(tuple[float, float], inverse.transform(centre[j])))
        nearest = np.clip(tip_px[j], centre[j] - sizes[j] / 2, centre[j] + sizes[j] / 2)
        if np.hypot(*(nearest - tip_px[j])) > leader:
            xy = inverse.transform(np.vstack([tip_px[j], nearest]))
            ax.plot(xy[:, 0], xy[:, 1], color=leader_color, lw=0.5, alpha=0.7, zorder=1)
    return texts


def _pushes(
    diff: NDArray[np.float64],
    overlap: NDArray[np.float64],
    clash: NDArray[np.bool_],
    tie: NDArray[np.float64],
    *,
    share: float,
) -> NDArray[np.float64]:
    """Moves that separate clashing boxes along their axis of least overlap."""
    along_x = overlap[..., 0] <= overlap[..., 1]
    side = np.sign(diff)
    side = np.where(side == 0, tie, side)
    step = np.zeros_like(diff)
    step[..., 0] = np.where(clash & along_x, side[..., 0] * overlap[..., 0] * share, 0.0)
    step[..., 1] = np.where(clash & ~along_x, side[..., 1] * overlap[..., 1] * share, 0.0)
    return step


def _draw_uncertainty(
    ax: Axes,
    samples: NDArray[np.float64],
    *,
    style: str,
    level: float,
    color: str,
) -> None:
    """Draw the spread of re-perturbed coordinates, ``samples`` of shape (draws, m, 2)."""
    if style == "cloud":
        xy = samples.reshape(-1, 2)
        ax.scatter(xy[:, 0], xy[:, 1], s=2, color=color, alpha=0.12, linewidths=0, zorder=1)
        return
    # For a bivariate normal, P(Mahalanobis^2 <= r^2) = 1 - exp(-r^2 / 2).
    radius = math.sqrt(-2.0 * math.log1p(-level))
    for j in range(samples.shape[1]):
        pts = samples[:, j, :]
        centre = pts.mean(axis=0)
        cov = np.cov(pts, rowvar=False) if pts.shape[0] > 1 else np.zeros((2, 2))
        values, vectors = np.linalg.eigh(cov)
        values = np.clip(values, 0.0, None)
        angle = math.degrees(math.atan2(vectors[1, 1], vectors[0, 1]))
        ax.add_patch(
            Ellipse(
                centre,
                width=2 * radius * math.sqrt(values[1]),
                height=2 * radius * math.sqrt(values[0]),
                angle=angle,
                facecolor=color,
                edgecolor=color,
                alpha=0.18,
                lw=0.6,
                zorder=1,
            )
        )


def _draw_plane(
    ax: Axes,
    coords: NDArray[np.float64],
    labels: Sequence[str],
    *,
    kind: str,
    a: int,
    b: int,
    private: bool,
    color: str,
    title: str,
    unit_circle: bool,
    text_kws: dict[str, Any],
    spread: NDArray[np.float64] | None,
    spread_style: str,
    spread_level: float,
    kwargs: dict[str, Any],
) -> None:
    ax.set_xlim(*LIMITS)
    ax.set_ylim(*LIMITS)
    ax.set_aspect("equal", adjustable="box")
    ax.axhline(0.0, color="0.75", lw=0.6, zorder=0)
    ax.axvline(0.0, color="0.75", lw=0.6, zorder=0)
    if unit_circle:
        ax.add_patch(Circle((0.0, 0.0), 1.0, fill=False, color="0.6", lw=0.7, ls="--", zorder=0))
    if spread is not None:
        _draw_uncertainty(ax, spread, style=spread_style, level=spread_level, color=color)
    if kind == "vector":
        arrow_kws = {
            "color": color, "width": 0.004, "head_width": 0.03, "head_length": 0.04,
            "length_includes_head": True, "zorder": 3, **kwargs,
        }  # fmt: skip
        for x, y in coords:
            if math.hypot(x, y) < 1e-12:
                ax.plot([0.0], [0.0], marker=".", color=arrow_kws["color"], zorder=3)
                continue
            ax.arrow(0.0, 0.0, float(x), float(y), **arrow_kws)
    else:
        scatter_kws = {"color": color, "s": 22, "zorder": 3, **kwargs}
        ax.scatter(coords[:, 0], coords[:, 1], **scatter_kws)
    tag = _tag(private)
    ax.set_xlabel(f"PC{a} ({tag})")
    ax.set_ylabel(f"PC{b} ({tag})")
    ax.set_title(title)
    _place_labels(ax, coords, labels, text_kws={"color": "0.1", **text_kws}, leader_color=color)


def _noise_samples(
    result: LoadingResult,
    uncertainty: int | NoiseSensitivity | None,
    random_state: RandomStateLike,
) -> NoiseSensitivity | None:
    if uncertainty is None:
        return None
    if isinstance(uncertainty, NoiseSensitivity):
        if uncertainty.variables != result.variables:
            raise ValueError("uncertainty was computed for other variables than this result.")
        return uncertainty
    return result.noise_sensitivity(uncertainty, random_state=random_state)


def plot_loading(
    result: LoadingResult,
    *,
    kind: LoadingKind = "vector",
    components: Sequence[int] | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    compare: bool | None = None,
    variables: Sequence[str] | None = None,
    top: int | None = None,
    label_size: float = 8,
    color: str = _DP_COLOR,
    nonprivate_color: str = _NP_COLOR,
    cmap: str = "RdBu_r",
    annotate: bool = False,
    title: str | None = None,
    unit_circle: bool = True,
    uncertainty: int | NoiseSensitivity | None = None,
    uncertainty_style: str = "ellipse",
    uncertainty_level: float = 0.95,
    random_state: RandomStateLike = None,
    text_kws: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Axes | Figure:
    """Draw a loading plot of a :class:`~dppca.LoadingResult`.

    Parameters
    ----------
    result : LoadingResult
        From :func:`dppca.dp_loading` or ``LoadingResult.from_directions``.
    kind : {"vector", "point", "heatmap"}, default="vector"
        ``"vector"``: an arrow from the origin to each variable's coordinates
        ``(v_ja, v_jb)``; ``"point"``: the same coordinates as labelled points;
        ``"heatmap"``: the signed entries ``v_jl`` for variables x PCs on a
        diverging colour scale centred at 0 with limits [-1, 1].
    components : sequence of int, optional
        PCs numbered from 1. Vector and point plots take a pair (default
        ``result.components``); a heatmap takes any list (default PC1 up to
        the larger of PC4 and the result's pair, at most ``k``).
    ax : matplotlib Axes, optional
        Where to draw; by default a new figure. With a comparison, a pair of
        Axes (or None).
    compare : bool, optional
        Draw the DP and the non-private panels side by side, with the same
        limits. Default: True when the result holds a comparison.
    variables : sequence of str, optional
        Names of the variables to show (default all).
    top : int, optional
        Show only the ``top`` variables with the longest DP coordinates in
        the plotted plane (for a heatmap: the largest row norm over the shown
        PCs). The ranking uses the private coordinates only.
    label_size : float, default=8
        Font size of the variable labels.
    color, nonprivate_color : str
        Colours of the DP and the non-private arrows or points.
    cmap : str, default="RdBu_r"
        Diverging colormap of the heatmap.
    annotate : bool, default=False
        Write each heatmap entry in its cell.
    title : str, optional
        Title of the (DP) panel. Whatever the title, a small grey caption
        under it states eps, delta and n (or "non-private").
    unit_circle : bool, default=True
        Draw the unit circle (vector and point plots).
    uncertainty : int or NoiseSensitivity, optional
        Vector and point plots: the number B of re-perturbations of the
        released matrix (or a precomputed :class:`~dppca.loading.NoiseSensitivity`),
        drawn as the spread of each variable's coordinates. See Notes.
    uncertainty_style : {"ellipse", "cloud"}, default="ellipse"
        An ellipse covering ``uncertainty_level`` of a normal fit to the
        re-perturbed coordinates, or the points themselves.
    uncertainty_level : float, default=0.95
    random_state : None, int or numpy.random.Generator, default=None
        Source of the re-perturbation noise (used only with an integer
        ``uncertainty``).
    text_kws : dict, optional
        Extra arguments for the label texts (the caller's dict is not changed).
    **kwargs
        Passed to the main artist call: ``Axes.arrow`` (vector), ``Axes.scatter``
        (point) or ``Axes.imshow`` (heatmap), for the DP panel and the
        comparison panel alike (except the colour).

    Returns
    -------
    matplotlib.axes.Axes or matplotlib.figure.Figure
        The Axes drawn on; the Figure when two panels are drawn.

    Notes
    -----
    Privacy: drawing reads only the result, so a plot of a private release
    is post-processing and costs nothing more. A comparison panel shows
    non-private directions and is titled so. The uncertainty view adds fresh
    noise of the released scale sigma to the released noisy matrix B times
    and recomputes the directions (post-processing of public values, no
    cost). It shows how sensitive each loading is to noise of the
    mechanism's size; it says nothing about sampling variability.

    Label placement: each label starts just beyond its arrow tip, then
    overlapping labels are pushed apart and joined to their tips by thin
    lines. The positions are computed for the figure size at drawing time;
    resizing the figure afterwards can bring labels back together.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from dppca import dp_loading
    >>> from dppca.datasets import load_gau
    >>> from dppca.plotting import plot_loading
    >>> res = dp_loading(load_gau(), eps=0.5, delta=1e-5, random_state=0)
    >>> ax = plot_loading(res, kind="vector", top=10)
    >>> [float(v) for v in ax.get_xlim()], ax.get_xlabel(), ax.get_title()
    ([-1.0, 1.0], 'PC1 (DP)', 'DP loadings')
    >>> from dppca.plotting import privacy_caption
    >>> privacy_caption(res)
    'eps=0.5, delta=1e-05, n=5000'
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    kind = check_choice(kind, "kind", ("vector", "point", "heatmap"))
    if not isinstance(result, LoadingResult):
        raise TypeError(f"result must be a LoadingResult; got {type(result).__name__}.")
    show_compare = _resolve_compare(result, compare)
    text_kws = {"fontsize": label_size, **(text_kws or {})}
    main, other = result.display_vectors()
    panels: list[tuple[np.ndarray, bool, str, str]] = [
        (main, result.main_private, color, title or _privacy_title(result))
    ]
    if show_compare:
        assert other is not None
        panels.append((other, False, nonprivate_color, "Non-private loadings (not DP)"))

    if kind == "heatmap":
        if uncertainty is not None:
            raise ValueError("uncertainty applies to vector and point plots, not heatmaps.")
        return _plot_heatmaps(
            result, panels, components=components, ax=ax, variables=variables, top=top,
            cmap=cmap, annotate=annotate, kwargs=kwargs,
        )  # fmt: skip

    if components is None:
        if result.components is None:
            raise ValueError("a loading plane needs two directions; this result keeps one.")
        a, b = result.components
    else:
        a, b = check_components(components, result.k)
    style = check_choice(uncertainty_style, "uncertainty_style", ("ellipse", "cloud"))
    level = check_open_unit(uncertainty_level, "uncertainty_level")
    rows = _select_rows(result, main, (a - 1, b - 1), variables, top)
    labels = [result.variables[j] for j in rows]
    sens = _noise_samples(result, uncertainty, random_state)
    spread = None
    if sens is not None:
        spread = sens.coordinate_samples(a, b)[:, rows, :]
        # Follow any display flip of the private vectors (sign_reference="nonprivate").
        released = np.asarray(result.directions.directions)[:, [a - 1, b - 1]]
        shown = main[:, [a - 1, b - 1]]
        signs = np.where(np.sum(released * shown, axis=0) < 0, -1.0, 1.0)
        spread = spread * signs

    axes = _axes_for(ax, len(panels), figsize=(6.4 * len(panels), 6.4))
    for i, (matrix, private, col, ttl) in enumerate(panels):
        _draw_plane(
            axes[i], matrix[np.ix_(rows, [a - 1, b - 1])], labels, kind=kind, a=a, b=b,
            private=private, color=col, title=ttl, unit_circle=unit_circle, text_kws=text_kws,
            spread=spread if i == 0 else None, spread_style=style, spread_level=level,
            kwargs=kwargs,
        )  # fmt: skip
    for axis, (_, private, _, _) in zip(axes, panels, strict=True):
        add_privacy_caption(axis, result, private=private)
    if sens is not None:
        what = "ellipses" if style == "ellipse" else "clouds"
        extent = f"{level:.0%} regions of " if style == "ellipse" else ""
        axes[0].annotate(
            f"Shaded {what}: {extent}loadings recomputed after adding fresh noise of the\n"
            f"mechanism's size (sigma={sens.sigma:.3g}, B={sens.draws}) to the released "
            "matrix.\nThey show sensitivity to the privacy noise, not sampling variability.",
            xy=(0.0, -0.11), xycoords="axes fraction", va="top", ha="left", fontsize=7,
            color="0.3", annotation_clip=False,
        )  # fmt: skip
    if len(panels) == 1:
        return axes[0]
    return cast(Figure, axes[0].figure)


def _axes_for(
    ax: Axes | Sequence[Axes] | None, count: int, *, figsize: tuple[float, float]
) -> list[Axes]:
    if ax is None:
        _, axes = _new_axes(count, figsize)
        return axes
    if isinstance(ax, Axes):
        if count != 1:
            raise ValueError(
                "a comparison draws two panels: pass ax as a pair of Axes, or ax=None."
            )
        return [ax]
    axes = list(ax)
    if len(axes) != count or not all(isinstance(x, Axes) for x in axes):
        raise ValueError(f"ax must be {count} matplotlib Axes here; got {len(axes)} item(s).")
    return axes


def _plot_heatmaps(
    result: LoadingResult,
    panels: list[tuple[np.ndarray, bool, str, str]],
    *,
    components: Sequence[int] | None,
    ax: Axes | Sequence[Axes] | None,
    variables: Sequence[str] | None,
    top: int | None,
    cmap: str,
    annotate: bool,
    kwargs: dict[str, Any],
) -> Axes | Figure:
    if components is None:
        last = max(4, *(result.components or (1,)))
        pcs = tuple(range(1, min(last, result.k) + 1))
    else:
        pcs = check_pc_list(components, result.k)
    cols = [c - 1 for c in pcs]
    rows = _select_rows(result, panels[0][0], cols, variables, top)
    names = [result.variables[j] for j in rows]
    width = max(3.2, 0.75 * len(pcs) + 2.2)
    height = max(2.5, 0.3 * len(rows) + 1.5)
    axes = _axes_for(ax, len(panels), figsize=(width * len(panels) + 0.8, height))
    image = None
    for i, (matrix, private, _, ttl) in enumerate(panels):
        values = matrix[np.ix_(rows, cols)]
        axis = axes[i]
        image = axis.imshow(
            values, **{"cmap": cmap, "vmin": CLIM[0], "vmax": CLIM[1], "aspect": "auto", **kwargs}
        )
        tag = _tag(private)
        axis.set_xticks(range(len(pcs)), [f"PC{c}\n({tag})" for c in pcs])
        axis.set_yticks(range(len(rows)), names)
        axis.tick_params(length=0)
        axis.set_title(ttl)
        add_privacy_caption(axis, result, private=private)
        if annotate:
            for r in range(values.shape[0]):
                for c in range(values.shape[1]):
                    v = values[r, c]
                    v = 0.0 if round(v, 2) == 0 else v  # no "-0.00"
                    axis.text(
                        c, r, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(v) > 0.6 else "0.1",
                    )  # fmt: skip
    assert image is not None
    fig = axes[0].figure
    bar = fig.colorbar(image, ax=axes, fraction=0.05 if len(axes) == 1 else 0.03, pad=0.03)
    bar.set_label("signed loading (PC direction entry)")
    if len(axes) == 1:
        return axes[0]
    return cast(Figure, fig)


def plot_loading_vector(result: LoadingResult, *, ax: Axes | None = None, **kwargs: Any) -> Any:
    """Vector loading plot: arrows from the origin; see :func:`plot_loading`."""
    return plot_loading(result, kind="vector", ax=ax, **kwargs)


def plot_loading_point(result: LoadingResult, *, ax: Axes | None = None, **kwargs: Any) -> Any:
    """Point loading plot: labelled points; see :func:`plot_loading`."""
    return plot_loading(result, kind="point", ax=ax, **kwargs)


def plot_loading_heatmap(result: LoadingResult, *, ax: Axes | None = None, **kwargs: Any) -> Any:
    """Loading heatmap of signed entries, limits [-1, 1]; see :func:`plot_loading`."""
    return plot_loading(result, kind="heatmap", ax=ax, **kwargs)
