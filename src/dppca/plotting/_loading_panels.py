"""The panels of a loading plot: the plane of two PCs and the heatmap.

Limits come from a public fact only: PC directions are unit vectors, so every
coordinate lies in [-1, 1]. Nothing here reads data; the panels draw the
coordinates :func:`dppca.plotting.plot_loading` hands them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle, Ellipse
from numpy.typing import NDArray

from ..core.data_checks import check_variable_names
from ..core.scalar_checks import check_positive_int
from ..core.validation import check_pc_list
from ..releases.loading.result import LoadingResult
from ._caption import add_privacy_caption, add_resolvability_note
from ._labels import place_labels

__all__ = [
    "CLIM",
    "LIMITS",
    "arrow_style",
    "axes_for",
    "draw_plane",
    "draw_uncertainty",
    "plot_heatmaps",
    "privacy_tag",
    "select_rows",
]

#: Axis limits of every vector and point loading plot (coordinates of unit vectors).
LIMITS = (-1.0, 1.0)
#: Colour limits of every loading heatmap.
CLIM = (-1.0, 1.0)


def privacy_tag(private: bool) -> str:
    return "DP" if private else "non-private"


def select_rows(
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


def axes_for(
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


def draw_uncertainty(
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


def arrow_style(color: str, kwargs: dict[str, Any], scale: float = 1.0) -> dict[str, Any]:
    """Keywords of ``Axes.arrow`` for a variable's arrow; the caller's ``kwargs`` win.

    The default sizes suit the unit square of a loading plot; ``scale``
    multiplies them for a frame of another size (the biplot's).
    """
    return {
        "color": color,
        "width": 0.004 * scale,
        "head_width": 0.03 * scale,
        "head_length": 0.04 * scale,
        "length_includes_head": True,
        "zorder": 3,
        **kwargs,
    }


@dataclass(frozen=True)
class PlaneStyle:
    """How :func:`draw_plane` draws each panel: the plot's checked options.

    ``kind`` is ``"vector"`` or ``"point"``; ``spread_style`` and
    ``spread_level`` style an uncertainty cloud; ``kwargs`` go to the main
    artist call.
    """

    kind: str
    unit_circle: bool
    text_kws: dict[str, Any]
    spread_style: str
    spread_level: float
    kwargs: dict[str, Any]


def draw_plane(
    ax: Axes,
    coords: NDArray[np.float64],
    labels: Sequence[str],
    style: PlaneStyle,
    pcs: tuple[int, int],
    panel: tuple[bool, str, str],
    spread: NDArray[np.float64] | None,
) -> None:
    """One vector or point panel of PCs ``pcs``; ``panel`` is (private, color, title)."""
    (a, b), (private, color, title) = pcs, panel
    kind, kwargs = style.kind, style.kwargs
    ax.set_xlim(*LIMITS)
    ax.set_ylim(*LIMITS)
    ax.set_aspect("equal", adjustable="box")
    ax.axhline(0.0, color="0.75", lw=0.6, zorder=0)
    ax.axvline(0.0, color="0.75", lw=0.6, zorder=0)
    if style.unit_circle:
        ax.add_patch(Circle((0.0, 0.0), 1.0, fill=False, color="0.6", lw=0.7, ls="--", zorder=0))
    if spread is not None:
        draw_uncertainty(
            ax, spread, style=style.spread_style, level=style.spread_level, color=color
        )
    if kind == "vector":
        arrow_kws = arrow_style(color, kwargs)
        for x, y in coords:
            if math.hypot(x, y) < 1e-12:
                ax.plot([0.0], [0.0], marker=".", color=arrow_kws["color"], zorder=3)
                continue
            ax.arrow(0.0, 0.0, float(x), float(y), **arrow_kws)
    else:
        scatter_kws = {"color": color, "s": 22, "zorder": 3, **kwargs}
        ax.scatter(coords[:, 0], coords[:, 1], **scatter_kws)
    tag = privacy_tag(private)
    ax.set_xlabel(f"PC{a} ({tag})")
    ax.set_ylabel(f"PC{b} ({tag})")
    ax.set_title(title)
    text_kws = {"color": "0.1", **style.text_kws}
    place_labels(ax, coords, labels, text_kws=text_kws, leader_color=color)


def plot_heatmaps(
    result: LoadingResult,
    panels: list[tuple[np.ndarray, bool, str, str]],
    components: Sequence[int] | None,
    ax: Axes | Sequence[Axes] | None,
    picked: tuple[Sequence[str] | None, int | None],
    colours: tuple[str, bool],
    kwargs: dict[str, Any],
) -> Axes | Figure:
    """Heatmap panels of ``components`` (a list of PCs numbered from 1).

    ``picked`` are the ``variables`` and ``top`` options of the loading
    plot, ``colours`` its ``cmap`` and ``annotate``.
    """
    cmap, annotate = colours
    if components is None:
        last = max(4, *(result.components or (1,)))
        pcs = tuple(range(1, min(last, result.k) + 1))
    else:
        pcs = check_pc_list(components, result.k)
    cols = [c - 1 for c in pcs]
    rows = select_rows(result, panels[0][0], cols, *picked)
    names = [result.variables[j] for j in rows]
    width = max(3.2, 0.75 * len(pcs) + 2.2)
    height = max(2.5, 0.3 * len(rows) + 1.5)
    axes = axes_for(ax, len(panels), figsize=(width * len(panels) + 0.8, height))
    image = None
    for i, (matrix, private, _, ttl) in enumerate(panels):
        values = matrix[np.ix_(rows, cols)]
        axis = axes[i]
        image = axis.imshow(
            values, **{"cmap": cmap, "vmin": CLIM[0], "vmax": CLIM[1], "aspect": "auto", **kwargs}
        )
        tag = privacy_tag(private)
        axis.set_xticks(range(len(pcs)), [f"PC{c}\n({tag})" for c in pcs])
        axis.set_yticks(range(len(rows)), names)
        axis.tick_params(length=0)
        axis.set_title(ttl)
        add_privacy_caption(axis, result, private=private)
        if private:
            add_resolvability_note(axis, result, pcs)
        if annotate:
            for r in range(values.shape[0]):
                for c in range(values.shape[1]):
                    v = values[r, c]
                    v = 0.0 if round(v, 2) == 0 else v  # no "-0.00"
                    axis.text(
                        c,
                        r,
                        f"{v:.2f}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if abs(v) > 0.6 else "0.1",
                    )
    assert image is not None
    fig = axes[0].figure
    bar = fig.colorbar(image, ax=axes, fraction=0.05 if len(axes) == 1 else 0.03, pad=0.03)
    bar.set_label("signed loading (PC direction entry)")
    if len(axes) == 1:
        return axes[0]
    return cast(Figure, fig)
