"""Figures and tables of kept releases, for the app's pages and downloads.

Everything here reads a :class:`~dppca.app.state.Release` (released values
only) and never the data, so drawing, re-drawing and downloading cost no
privacy budget. No Shiny import: the functions return matplotlib figures,
bytes and pandas tables.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..directions import DirectionsResult
from .state import Release, _directions_of

__all__ = [
    "FIGURE_FORMATS",
    "figure_bytes",
    "loading_figure",
    "release_table",
    "score_figure",
    "scree_figure",
]

#: Download formats of figures and their media types.
FIGURE_FORMATS = {"png": "image/png", "svg": "image/svg+xml"}


def _new_axes(figsize: tuple[float, float]) -> tuple[Any, Any]:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    return fig, ax


def _figure_of(drawn: Any) -> Any:
    """The Figure of whatever a plot function returned (Axes or Figure)."""
    return drawn if hasattr(drawn, "savefig") else drawn.figure


def _loading_result(directions: DirectionsResult, components: tuple[int, int]) -> Any:
    from ..loading import LoadingResult

    return LoadingResult.from_directions(directions, components=components)


def loading_figure(
    release: Release,
    *,
    kind: str = "vector",
    components: tuple[int, int] = (1, 2),
    heatmap_components: Sequence[int] | None = None,
    uncertainty: int | None = None,
    top: int | None = None,
) -> Any:
    """A loading plot (vector, point or heatmap) of a directions release.

    ``uncertainty`` (vector and point plots) re-perturbs the released matrix
    that many times with noise of the released scale: post-processing.
    """
    directions = _directions_of(release.result)
    fig, ax = _new_axes((6.4, 5.6) if kind != "heatmap" else (6.4, 6.0))
    try:
        result = _loading_result(directions, tuple(components))
    except ImportError:  # a build without dppca.loading: a plain drawing
        return _plain_loading(directions, fig, ax, kind, tuple(components))
    opts: dict[str, Any] = {"kind": kind, "ax": ax, "top": top}
    if kind == "heatmap":
        opts["components"] = list(heatmap_components) if heatmap_components else None
    else:
        opts["components"] = tuple(components)
        if uncertainty:
            opts["uncertainty"] = int(uncertainty)
    return _figure_of(result.plot(**opts))


def _plain_loading(
    directions: DirectionsResult, fig: Any, ax: Any, kind: str, components: tuple[int, int]
) -> Any:
    import numpy as np

    v = np.asarray(directions.directions)
    if kind == "heatmap":
        ax.imshow(v, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        ax.set_yticks(range(directions.p), directions.variables)
        ax.set_xticks(range(directions.k), directions.pc_labels)
        return fig
    a, b = components[0] - 1, components[1] - 1
    for j, name in enumerate(directions.variables):
        if kind == "vector":
            ax.annotate("", (v[j, a], v[j, b]), (0, 0), arrowprops={"arrowstyle": "->"})
        else:
            ax.plot(v[j, a], v[j, b], "o")
        ax.text(v[j, a], v[j, b], name, fontsize=8)
    ax.set(xlim=(-1, 1), ylim=(-1, 1), xlabel=f"PC{a + 1}", ylabel=f"PC{b + 1}")
    return fig


def scree_figure(release: Release, *, kind: str = "pve") -> Any:
    """The scree or PVE curves of a scree release."""
    fig, ax = _new_axes((6.4, 4.4))
    release.result.plot(kind=kind, ax=ax)
    return fig


def score_figure(
    release: Release,
    *,
    kind: str = "histogram",
    method: str | None = None,
    sample: pd.DataFrame | None = None,
) -> Any:
    """A score plot of a score release: histogram, synthetic sample or group panels."""
    result = release.result
    if kind == "groups":
        return result.plot(kind="groups", method=method)
    fig, ax = _new_axes((6.4, 5.2))
    if kind == "sample":
        result.plot(kind="sample", method=method, sample=sample, ax=ax)
    else:
        result.plot(kind="histogram", method=method, ax=ax)
    return fig


def figure_bytes(fig: Any, fmt: str) -> bytes:
    """Render ``fig`` as PNG or SVG bytes and close it."""
    import matplotlib.pyplot as plt

    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FIGURE_FORMATS)}; got {fmt!r}.")
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format=fmt, bbox_inches="tight", dpi=150 if fmt == "png" else None)
    finally:
        plt.close(fig)
    return buffer.getvalue()


def release_table(release: Release) -> pd.DataFrame:
    """The released values of a release as one table (for the CSV download)."""
    result = release.result
    if release.kind == "directions":
        return _directions_of(result).to_frame()
    return result.to_frame()
