"""Loading plots: vector, point and heatmap displays of PC directions.

Limits come from a public fact only: PC directions are unit vectors, so every
coordinate lies in [-1, 1]. They never depend on the data. The panels are
drawn by :mod:`dppca.plotting._loading_panels` and the labels placed by
:mod:`dppca.plotting._labels`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import NDArray

from ..core.scalar_checks import check_choice, check_open_unit
from ..core.types import LoadingKind, RandomStateLike
from ..core.validation import check_compare, check_components
from ..releases.loading.result import LoadingResult
from ..releases.loading.sensitivity import NoiseSensitivity
from ._caption import add_privacy_caption, add_resolvability_note
from ._kwargs import check_artist_kwargs
from ._loading_panels import PlaneStyle, axes_for, draw_plane, plot_heatmaps, select_rows

__all__ = ["plot_loading", "plot_loading_heatmap", "plot_loading_point", "plot_loading_vector"]

_DP_COLOR = "#1f5fa8"
_NP_COLOR = "#b8572a"


def _privacy_title(result: LoadingResult) -> str:
    d = result.directions
    if d.private and d.cost is not None and not result.main_private:
        return "DP loadings with non-private signs (not DP)"
    if d.private and d.cost is not None:
        return "DP loadings"  # eps, delta and n are in the caption under the title
    return "Non-private loadings (not DP)"


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
        released matrix (or a precomputed :class:`~dppca.releases.loading.NoiseSensitivity`),
        drawn as each variable's privacy-noise region. See Notes.
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
        comparison panel alike (except the colour). Other names are refused
        with the list of valid ones, before anything is drawn.

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
    check_artist_kwargs(
        kwargs, "plot_loading", {"vector": "arrow", "point": "scatter", "heatmap": "imshow"}[kind]
    )
    if not isinstance(result, LoadingResult):
        raise TypeError(f"result must be a LoadingResult; got {type(result).__name__}.")
    show_compare = check_compare(
        compare,
        result.nonprivate is not None,
        "the non-private comparison; call dp_loading(..., compare=True)",
    )
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
        return plot_heatmaps(
            result, panels, components, ax, (variables, top), (cmap, annotate), kwargs
        )

    spread_style = check_choice(uncertainty_style, "uncertainty_style", ("ellipse", "cloud"))
    level = check_open_unit(uncertainty_level, "uncertainty_level")
    style = PlaneStyle(kind, unit_circle, text_kws, spread_style, level, kwargs)
    pcs = _plane(result, components)  # checked before any noise samples are drawn
    sens = _noise_samples(result, uncertainty, random_state)
    return _plot_planes(result, panels, pcs, ax, style, (variables, top), sens)


def _plane(result: LoadingResult, components: Sequence[int] | None) -> tuple[int, int]:
    """The pair of PCs of a vector or point plot (numbered from 1)."""
    if components is None:
        if result.components is None:
            raise ValueError("a loading plane needs two directions; this result keeps one.")
        return result.components
    return check_components(components, result.k)


def _plot_planes(
    result: LoadingResult,
    panels: list[tuple[np.ndarray, bool, str, str]],
    pcs: tuple[int, int],
    ax: Axes | Sequence[Axes] | None,
    style: PlaneStyle,
    rows: tuple[Sequence[str] | None, int | None],
    sens: NoiseSensitivity | None,
) -> Axes | Figure:
    """Vector or point panels of the plane ``pcs``: the DP one first, then any comparison.

    ``rows`` are the ``variables`` and ``top`` options of :func:`plot_loading`.
    """
    a, b = pcs
    main = panels[0][0]
    shown = select_rows(result, main, (a - 1, b - 1), *rows)
    labels = [result.variables[j] for j in shown]
    cloud = None if sens is None else _plane_spread(result, sens, main, shown, pcs)
    axes = axes_for(ax, len(panels), figsize=(6.4 * len(panels), 6.4))
    for i, (matrix, private, col, ttl) in enumerate(panels):
        coords = matrix[np.ix_(shown, [a - 1, b - 1])]
        spread = cloud if i == 0 else None
        draw_plane(axes[i], coords, labels, style, pcs, (private, col, ttl), spread)
    for axis, (_, private, _, _) in zip(axes, panels, strict=True):
        add_privacy_caption(axis, result, private=private)
    add_resolvability_note(axes[0], result, pcs)  # the private panel comes first
    if sens is not None:
        _note_uncertainty(axes[0], sens, style.spread_style, style.spread_level)
    if len(panels) == 1:
        return axes[0]
    return cast(Figure, axes[0].figure)


def _plane_spread(
    result: LoadingResult,
    sens: NoiseSensitivity,
    main: NDArray[np.float64],
    rows: list[int],
    pcs: tuple[int, int],
) -> NDArray[np.float64]:
    """Re-perturbed coordinates of the shown rows, flipped as the shown DP vectors are."""
    a, b = pcs
    spread = sens.coordinate_samples(a, b)[:, rows, :]
    # Follow any display flip of the private vectors (sign_reference="nonprivate").
    released = np.asarray(result.directions.directions)[:, [a - 1, b - 1]]
    shown = main[:, [a - 1, b - 1]]
    signs = np.where(np.sum(released * shown, axis=0) < 0, -1.0, 1.0)
    return spread * signs


def _note_uncertainty(ax: Axes, sens: NoiseSensitivity, style: str, level: float) -> None:
    """Say under the DP panel what the shaded regions are, and what they are not."""
    what = f"{level:.0%} privacy-noise regions" if style == "ellipse" else "privacy-noise clouds"
    ax.annotate(
        f"Shaded: {what}, the loadings recomputed after adding fresh noise of the\n"
        f"mechanism's size (sigma={sens.sigma:.3g}, B={sens.draws}) to the released "
        "matrix.\nNot confidence regions: they show the privacy noise, not sampling variability.",
        xy=(0.0, -0.11),
        xycoords="axes fraction",
        va="top",
        ha="left",
        fontsize=7,
        color="0.3",
        annotation_clip=False,
    )


def plot_loading_vector(result: LoadingResult, *, ax: Axes | None = None, **kwargs: Any) -> Any:
    """Vector loading plot: arrows from the origin; see :func:`plot_loading`.

    Examples
    --------
    >>> from dppca import dp_loading
    >>> from dppca.datasets import load_wine
    >>> res = dp_loading(load_wine(), eps=1.0, delta=1e-6, random_state=0)
    >>> ax = plot_loading_vector(res)
    >>> ax.get_xlabel()[:3], ax.get_ylabel()[:3]
    ('PC1', 'PC2')
    """
    return plot_loading(result, kind="vector", ax=ax, **kwargs)


def plot_loading_point(result: LoadingResult, *, ax: Axes | None = None, **kwargs: Any) -> Any:
    """Point loading plot: labelled points; see :func:`plot_loading`.

    Examples
    --------
    >>> from dppca import dp_loading
    >>> from dppca.datasets import load_wine
    >>> res = dp_loading(load_wine(), eps=1.0, delta=1e-6, random_state=0)
    >>> ax = plot_loading_point(res)
    >>> ax.get_xlabel()[:3], ax.get_ylabel()[:3]
    ('PC1', 'PC2')
    """
    return plot_loading(result, kind="point", ax=ax, **kwargs)


def plot_loading_heatmap(result: LoadingResult, *, ax: Axes | None = None, **kwargs: Any) -> Any:
    """Loading heatmap of signed entries, limits [-1, 1]; see :func:`plot_loading`.

    Examples
    --------
    >>> from dppca import dp_loading
    >>> from dppca.datasets import load_wine
    >>> res = dp_loading(load_wine(), eps=1.0, delta=1e-6, random_state=0)
    >>> ax = plot_loading_heatmap(res)
    >>> [t.get_text() for t in ax.get_yticklabels()][:2]
    ['alcohol', 'malic_acid']
    """
    return plot_loading(result, kind="heatmap", ax=ax, **kwargs)
