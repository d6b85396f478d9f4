"""Figures and tables of kept releases, for the app's pages and downloads.

Everything here reads a :class:`~dppca.app.state.Release` (released values
only) and never the data, so drawing, re-drawing and downloading cost no
privacy budget. No Shiny import: the functions return matplotlib figures,
bytes and pandas tables.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from .._csv import formula_safe
from ..releases.loading.result import LoadingResult
from .plans import Release
from .state import directions_of
from .stored import payload_of

__all__ = [
    "FIGURE_FORMATS",
    "PCA_PICTURES",
    "csv_text",
    "figure_bytes",
    "loading_figure",
    "message_figure",
    "pca_figure",
    "release_file",
    "release_table",
    "render",
    "score_figure",
    "scree_figure",
]

#: Download formats of figures and their media types.
FIGURE_FORMATS = {"png": "image/png", "svg": "image/svg+xml"}

# Figures are made with matplotlib's object-oriented API (Figure(), no pyplot
# and its global state), so sessions draw at the same time, each in a worker
# thread, without a process-wide lock.


def _new_axes(figsize: tuple[float, float]) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.add_subplot()


def _group_panels(result: Any) -> Any:
    """The panels of a grouped score figure, laid out as ``plot_score_groups`` would."""
    from matplotlib.figure import Figure

    n_panels = len(result.groups) + 1  # the overlay, then one per group
    ncols = min(3, n_panels)
    nrows = -(-n_panels // ncols)
    ratio = (result.ylim[1] - result.ylim[0]) / (result.xlim[1] - result.xlim[0])
    height = 2.6 * min(max(ratio, 0.25), 4.0) + 1.3  # panel 3.2 in: title, caption, labels
    fig = Figure(figsize=(3.9 * ncols, height * nrows), layout="constrained")
    return fig.subplots(nrows, ncols, squeeze=False)


def _figure_of(drawn: Any) -> Any:
    """The Figure of whatever a plot function returned (Axes or Figure)."""
    return drawn if hasattr(drawn, "savefig") else drawn.figure


def loading_figure(
    release: Release,
    *,
    kind: str = "vector",
    components: tuple[int, int] = (1, 2),
    heatmap_components: Sequence[int] | None = None,
    uncertainty: int | None = None,
    top: int | None = None,
    color: str | None = None,
) -> Any:
    """A loading plot (vector, point or heatmap) of a directions release.

    ``uncertainty`` (vector and point plots) re-perturbs the released matrix
    that many times with noise of the released scale: post-processing.
    """
    directions = directions_of(release.result)
    _, ax = _new_axes((6.4, 5.6) if kind != "heatmap" else (6.4, 6.0))
    pair = (int(components[0]), int(components[1]))
    result = LoadingResult.from_directions(directions, components=pair)
    opts: dict[str, Any] = {"kind": kind, "ax": ax, "top": top}
    if color is not None and kind != "heatmap":
        opts["color"] = color
    if kind == "heatmap":
        opts["components"] = list(heatmap_components) if heatmap_components else None
    else:
        opts["components"] = tuple(components)
        if uncertainty:
            opts["uncertainty"] = int(uncertainty)
    return _figure_of(result.plot(**opts))


def scree_figure(release: Release, *, kind: str = "pve_total") -> Any:
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
        return result.plot(kind="groups", method=method, ax=_group_panels(result)).figure
    fig, ax = _new_axes((6.4, 5.2))
    if kind == "sample":
        result.plot(kind="sample", method=method, sample=sample, ax=ax)
    else:
        result.plot(kind="histogram", method=method, ax=ax)
    return fig


#: The pictures of a PCA fit on the page, in the order of the grid ("all").
PCA_PICTURES = {
    "scree": "scree / PVE",
    "score": "score plot",
    "loading": "loading plot",
    "variable": "correlation circle",
    "biplot": "biplot",
}


def _score_left_out(fit: Any) -> str:
    """Why a fit has no score plot: its own note, else the setting that left it out."""
    from .plans import page_sentence

    for note in fit.notes:
        if note.startswith("no score plot"):
            return page_sentence(note)
    return "This fit has no score plot: it was run with the score plot set to 'never'."


def _draw_pca(fit: Any, kind: str, ax: Any) -> None:
    """One picture of a fit on ``ax``; the score slot says why when there is none."""
    import textwrap

    if kind == "score" and fit.score is None:
        ax.axis("off")
        ax.set_title("score plot left out", fontsize=10)
        ax.text(
            0.5,
            0.5,
            textwrap.fill(_score_left_out(fit), 48),
            ha="center",
            va="center",
            fontsize=8,
            transform=ax.transAxes,
        )
        return
    fit.plot(kind, ax=ax)


def _about(fit: Any, ax: Any) -> None:
    """The grid's last panel: what the fit estimates, its cost and what that means."""
    import textwrap

    ax.axis("off")
    text = (
        f"{fit.analysis} analysis: {fit.estimates}.\n\n"
        f"One fit, eps = {fit.eps:.4g}, delta = {fit.delta:.3g}, n = {fit.n}: every "
        f"picture is drawn from it at no further cost.\n\n{fit.privacy_sentence()}"
    )
    wrapped = "\n".join(textwrap.fill(part, 48) for part in text.split("\n"))
    ax.text(0.0, 1.0, wrapped, ha="left", va="top", fontsize=8.5, transform=ax.transAxes)


def pca_figure(release: Release, *, kind: str = "all") -> Any:
    """A picture of a PCA fit (:func:`dppca.dp_pca`), or all five in one figure.

    Every picture is drawn from the kept fit (released values only): the
    scree from its private variances, the score plot from its private
    histogram, the loading plot, the correlation circle and the biplot from
    its private directions and variances. Without a score plot, its place
    says why the fit left it out.
    """
    from matplotlib.figure import Figure

    fit = release.result
    if kind == "all":
        fig = Figure(figsize=(15.0, 9.6), layout="constrained")
        axes = fig.subplots(2, 3).ravel()
        for ax, name in zip(axes, PCA_PICTURES, strict=False):
            _draw_pca(fit, name, ax)
        _about(fit, axes[-1])
        return fig
    if kind not in PCA_PICTURES:
        raise ValueError(f"kind must be 'all' or one of {', '.join(PCA_PICTURES)}; got {kind!r}.")
    if kind == "score" and fit.score is None:
        return message_figure(_score_left_out(fit))
    fig, ax = _new_axes((6.4, 5.6))
    fit.plot(kind, ax=ax)
    return fig


def message_figure(text: str) -> Any:
    """A small figure holding only ``text`` (shown where a plot cannot be drawn)."""
    import textwrap

    fig, ax = _new_axes((6.4, 1.2))
    ax.axis("off")
    ax.text(0.5, 0.5, textwrap.fill(text, 90), ha="center", va="center", fontsize=9)
    return fig


def figure_bytes(fig: Any, fmt: str) -> bytes:
    """Render ``fig`` as PNG or SVG bytes (and close it, if pyplot made it)."""
    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FIGURE_FORMATS)}; got {fmt!r}.")
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format=fmt, bbox_inches="tight", dpi=150 if fmt == "png" else None)
    finally:
        if getattr(fig, "number", None) is not None:  # a pyplot figure: release it
            import matplotlib.pyplot as plt

            plt.close(fig)
    return buffer.getvalue()


def render(draw: Callable[[], Any], fmt: str = "png") -> bytes:
    """Draw a figure with ``draw()`` and return its bytes; a drawing error becomes
    a figure holding the message (the app shows it instead of failing)."""
    try:
        fig = draw()
    except (TypeError, ValueError) as exc:
        fig = message_figure(f"Cannot draw: {exc}")
    return figure_bytes(fig, fmt)


def csv_text(frame: pd.DataFrame, *, index: bool = True) -> str:
    """``frame`` as CSV text, with text cells that a spreadsheet would run as a
    formula (starting with = + - @, tab or carriage return) prefixed by ``'``.

    Numbers are written as numbers; only text (labels, column names, index
    entries) is escaped (:func:`dppca._csv.formula_safe`).
    """
    return formula_safe(frame, index=index).to_csv(index=index)


def release_file(release: Release) -> bytes:
    """The release file of a kept release (:mod:`dppca.release_io`, JSON): the
    released values, their cost, n and the column names; never the data or a seed."""
    text = payload_of(release.result)
    if text is None:
        raise ValueError(f"release #{release.number} cannot be written as a release file.")
    return text.encode("utf-8")


def release_table(release: Release) -> pd.DataFrame:
    """The released values of a release as one table (for the CSV download)."""
    result = release.result
    if release.kind == "directions":
        return directions_of(result).to_frame()
    return result.to_frame()
