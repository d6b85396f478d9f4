"""The biplot of a private PCA fit: the score layer and the loading arrows in one frame.

Gabriel's biplot factors the centred table as ``U D V'``; the rows are drawn at
``U D^(1 - alpha)`` and the variables at ``V D^alpha``. With the private
scores ``S = U D`` only available as a released histogram, the score layer is
the histogram's bins (or synthetic points drawn from it), centred at the
histogram's own mean and divided by ``d^alpha`` per axis, and the arrows are
the private directions times ``d^alpha``, where ``d_l = sqrt((n - 1) lambda_l)``
comes from the fit's private variances. One multiplier, computed from these
released values only (the 90th percentile of the score layer's distances
from its mean over the longest arrow), brings the arrows to the scale of the
points. Every step reads released values: drawing costs no privacy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgba
from numpy.typing import ArrayLike, NDArray

from ..core.scalar_checks import check_open_unit, check_positive_int
from ..core.types import RandomStateLike
from ..core.validation import check_components
from ._caption import add_privacy_caption
from ._kwargs import check_artist_kwargs
from ._labels import place_labels
from ._loading_panels import arrow_style, draw_uncertainty

__all__ = [
    "arrow_multiplier",
    "biplot_arrows",
    "biplot_scale",
    "histogram_layer",
    "plot_biplot",
]

_ARROW_COLOR = "#b8572a"
_POINT_COLOR = "#1f5fa8"
#: The quantile of the points' distances from their mean that the longest arrow reaches.
ARROW_QUANTILE = 0.9


def biplot_scale(variances: ArrayLike, n: int, alpha: float) -> NDArray[np.float64]:
    """``d^alpha`` per axis, with ``d = sqrt((n - 1) lambda)`` from private variances.

    Examples
    --------
    >>> biplot_scale([4.0, 1.0], 5, 1.0).tolist()
    [4.0, 2.0]
    """
    lam = np.clip(np.asarray(variances, dtype=np.float64), 0.0, None)
    d = np.sqrt((n - 1) * lam)
    return np.asarray(d**alpha, dtype=np.float64)


def biplot_arrows(directions: ArrayLike, scale: ArrayLike) -> NDArray[np.float64]:
    """Arrow tips ``v_jl d_l^alpha`` (columns of ``directions`` times ``scale``)."""
    return np.asarray(directions, dtype=np.float64) * np.asarray(scale, dtype=np.float64)


def _weighted_quantile(
    values: NDArray[np.float64], weights: NDArray[np.float64], q: float
) -> float:
    order = np.argsort(values)
    v, w = values[order], weights[order]
    cum = np.cumsum(w)
    if cum[-1] <= 0:
        return 0.0
    return float(v[np.searchsorted(cum, q * cum[-1], side="left").clip(0, v.size - 1)])


def arrow_multiplier(
    points: ArrayLike,
    arrows: ArrayLike,
    weights: ArrayLike | None = None,
    *,
    quantile: float = ARROW_QUANTILE,
) -> float:
    """One multiplier for every arrow: the points' spread over the longest arrow.

    Parameters
    ----------
    points : array_like of shape (m, 2)
        The score layer (bin centres or synthetic points), already scaled.
    arrows : array_like of shape (p, 2)
        The arrow tips, already scaled.
    weights : array_like of shape (m,), optional
        Weights of the points (bin probabilities); equal by default.
    quantile : float, default=0.9

    Returns
    -------
    float
        The ``quantile`` of the points' distances from their (weighted) mean
        over the longest arrow's length; 1 when either is 0.

    Examples
    --------
    >>> pts = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 3.0], [0.0, -3.0]])
    >>> arrow_multiplier(pts, np.array([[0.5, 0.0]]), quantile=0.5)
    2.0
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    arr = np.asarray(arrows, dtype=np.float64).reshape(-1, 2)
    w = np.ones(len(pts)) if weights is None else np.clip(np.asarray(weights, float), 0, None)
    if pts.size == 0 or w.sum() <= 0 or arr.size == 0:
        return 1.0
    centre = (w[:, None] * pts).sum(axis=0) / w.sum()
    spread = _weighted_quantile(np.hypot(*(pts - centre).T), w, quantile)
    longest = float(np.max(np.hypot(arr[:, 0], arr[:, 1])))
    if spread <= 0 or longest <= 0:
        return 1.0
    return spread / longest


def histogram_layer(
    x_edges: ArrayLike, y_edges: ArrayLike, prob: ArrayLike, scale: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Bins of a released histogram, centred at its mean and divided by ``scale``.

    Parameters
    ----------
    x_edges, y_edges : array_like
        Bin edges of the released frame.
    prob : array_like of shape (G, mx * my)
        Released bin probabilities (x varying fastest), one row per group.
    scale : array_like of shape (2,)
        ``d^alpha`` of the two axes.

    Returns
    -------
    (x_edges, y_edges, centre)
        The transformed edges and the histogram's mean (in released units),
        a weighted mean of the bin centres with the released probabilities
        summed over groups: post-processing.
    """
    xe = np.asarray(x_edges, dtype=np.float64)
    ye = np.asarray(y_edges, dtype=np.float64)
    p = np.asarray(prob, dtype=np.float64).sum(axis=0)
    mx, my = xe.size - 1, ye.size - 1
    cx = 0.5 * (xe[:-1] + xe[1:])
    cy = 0.5 * (ye[:-1] + ye[1:])
    grid = p.reshape(my, mx)
    total = grid.sum()
    if total > 0:
        centre = np.array([(grid.sum(axis=0) * cx).sum(), (grid.sum(axis=1) * cy).sum()]) / total
    else:
        centre = np.array([0.5 * (xe[0] + xe[-1]), 0.5 * (ye[0] + ye[-1])])
    s = np.asarray(scale, dtype=np.float64)
    s = np.where(s > 0, s, 1.0)
    return (xe - centre[0]) / s[0], (ye - centre[1]) / s[1], centre


def _score_signs(
    score: Any, directions: NDArray[np.float64], cols: list[int]
) -> NDArray[np.float64]:
    """+-1 per axis turning the score release's directions to the fit's (same columns)."""
    used = np.asarray(score.directions, dtype=np.float64)
    dots = np.einsum("jl,jl->l", used, directions[:, cols])
    return np.where(dots < 0, -1.0, 1.0)


def _group_colors(score: Any, color: str) -> list[Any]:
    if score.groups is None:
        return [color]
    from .score import group_color_map

    cmap = group_color_map(list(score.groups), None)
    return [cmap[g] for g in score.groups]


def _draw_histogram(
    ax: Axes, xe: NDArray, ye: NDArray, prob: NDArray, colors: list[Any], signs: NDArray
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bins as rectangles, opacity following probability; return centres and weights."""
    mx, my = xe.size - 1, ye.size - 1
    xs, ys = signs[0] * xe, signs[1] * ye
    jx = np.tile(np.arange(mx), my)
    jy = np.repeat(np.arange(my), mx)
    top = float(prob.max()) if prob.size else 0.0
    faces, polys = [], []
    for g in range(prob.shape[0]):
        for j in np.flatnonzero(prob[g] > 0):
            x0, x1 = xs[jx[j]], xs[jx[j] + 1]
            y0, y1 = ys[jy[j]], ys[jy[j] + 1]
            polys.append([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
            faces.append(to_rgba(colors[g], 0.85 * prob[g, j] / top if top > 0 else 0.0))
    ax.add_collection(PolyCollection(polys, facecolors=faces, edgecolors="none", zorder=1))
    centres = np.column_stack([0.5 * (xs[jx] + xs[jx + 1]), 0.5 * (ys[jy] + ys[jy + 1])])
    return centres, prob.sum(axis=0)


def _check_biplot_options(alpha: float, layer: str) -> None:
    """Gabriel's alpha is a number in [0, 1]; the score layer is a known one."""
    if isinstance(alpha, bool) or not (isinstance(alpha, (int, float)) and 0 <= alpha <= 1):
        raise ValueError(f"alpha (Gabriel's) must be a number in [0, 1]; got {alpha!r}.")
    if layer not in ("histogram", "points"):
        raise ValueError(f"layer must be 'histogram' or 'points'; got {layer!r}.")


def _score_layer(
    ax: Axes,
    score: Any,
    v: NDArray[np.float64],
    cols: list[int],
    scale: NDArray[np.float64],
    layer: str,
    size: int | None,
    random_state: RandomStateLike,
    color: str,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], str]:
    """Draw the score plot in biplot units: released bins or synthetic points.

    Returns the points and their weights (they set the arrows' multiplier),
    the layer's corners (they set the limits) and its part of the caption.
    """
    signs = _score_signs(score, v, cols)
    method = score.methods[0]
    prob = np.asarray(score.probs[method], dtype=np.float64)
    xe, ye, _ = histogram_layer(score.x_edges, score.y_edges, prob, scale)
    colors = _group_colors(score, color)
    if layer == "histogram":
        pts, weights = _draw_histogram(ax, xe, ye, prob, colors, signs)
    else:
        from ..releases.score.result import sample_points

        sample = sample_points(score, size=size, random_state=random_state)
        _, _, centre = histogram_layer(score.x_edges, score.y_edges, prob, scale)
        raw = sample[list(score.pc_labels)].to_numpy()
        pts = signs * (raw - centre) / np.where(scale > 0, scale, 1.0)
        weights = np.ones(len(pts))
        if score.groups is not None and "group" in sample:
            cmap = dict(zip(score.groups, colors, strict=True))
            point_colors = [cmap[g] for g in sample["group"]]
        else:
            point_colors = [color] * len(pts)
        ax.scatter(pts[:, 0], pts[:, 1], s=4, c=point_colors, alpha=0.5, lw=0, zorder=1)
    box = np.array([[xe[0], ye[0]], [xe[-1], ye[-1]]]) * signs
    if score.groups is not None:
        from matplotlib.patches import Patch

        handles = [Patch(color=c, label=str(g)) for g, c in zip(score.groups, colors, strict=True)]
        ax.legend(
            handles=handles,
            frameon=False,
            fontsize=8,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
        )
    line = (
        "scores: released histogram"
        if layer == "histogram"
        else "scores: synthetic points from the released histogram"
    )
    return pts, weights, box, line


def _draw_arrows(
    ax: Axes, tips: NDArray[np.float64], half: float, arrow_color: str, kwargs: dict[str, Any]
) -> None:
    """One arrow per variable, its head scaled to the half-width ``half`` of the frame."""
    arrow_kws = arrow_style(arrow_color, kwargs, scale=half)
    for x, y in tips:
        if math.hypot(x, y) > 1e-12 * half:
            ax.arrow(0.0, 0.0, float(x), float(y), **arrow_kws)


def _frame(ax: Axes, fit: Any, a: int, b: int, half: float, title: str | None) -> None:
    """The square frame of half-width ``half``, both axes, the axis labels and the title."""
    ax.set_xlim(-half, half)
    ax.set_ylim(-half, half)
    ax.set_aspect("equal", adjustable="box")
    ax.axhline(0.0, color="0.75", lw=0.6, zorder=0)
    ax.axvline(0.0, color="0.75", lw=0.6, zorder=0)
    pve = getattr(fit, "pve", None)
    for setter, pc in ((ax.set_xlabel, a), (ax.set_ylabel, b)):
        share = "" if pve is None else f", {100 * float(pve[pc - 1]):.1f}% of variance"
        setter(f"PC{pc} (DP{share})")
    ax.set_title(title or "DP biplot")


def _checked_components(
    fit: Any,
    components: Sequence[int] | None,
    v: NDArray[np.float64],
    variances: NDArray[np.float64],
) -> tuple[int, int]:
    """The two PCs to draw; a fit's score plot must be on the same two."""
    a, b = check_components(
        tuple(fit.components) if components is None else components,
        min(v.shape[1], variances.size),
    )
    score = getattr(fit, "score", None)
    if score is not None and tuple(score.components) != (a, b):
        raise ValueError(
            f"the fit's score plot is on PCs {tuple(score.components)}; a biplot of PCs "
            f"{(a, b)} has no score layer. Pass components={tuple(score.components)}."
        )
    return a, b


def plot_biplot(
    fit: Any,
    *,
    components: Sequence[int] | None = None,
    alpha: float = 1.0,
    ax: Axes | None = None,
    layer: str = "histogram",
    size: int | None = None,
    noise_regions: bool = True,
    draws: int = 200,
    level: float = 0.95,
    joint: bool = True,
    random_state: RandomStateLike = None,
    multiplier: float | None = None,
    color: str = _POINT_COLOR,
    arrow_color: str = _ARROW_COLOR,
    label_size: float = 8,
    title: str | None = None,
    text_kws: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Axes:
    """Draw a DP biplot: the private score layer and the loading arrows in one frame.

    Parameters
    ----------
    fit : PCAResult
        From :func:`dppca.dp_pca`. Without a score plot (``fit.score`` None)
        only the arrows are drawn, and the caption says so.
    components : (int, int), optional
        The two PCs, numbered from 1; default the fit's ``components`` (the
        score plot's pair, the only one with a score layer).
    alpha : float, default=1.0
        Gabriel's alpha in [0, 1]: scores divided by ``d^alpha``, arrows
        multiplied by ``d^alpha`` with ``d = sqrt((n - 1) lambda)`` from the
        fit's private variances. 1 gives the correlation (column-metric)
        biplot, 0 the distance (row-metric) biplot.
    ax : matplotlib Axes, optional
        Where to draw; by default a new figure.
    layer : {"histogram", "points"}, default="histogram"
        The score layer: the released bins (opacity following probability)
        or ``size`` synthetic points drawn from them with
        :func:`dppca.sample_points` (a post-processing stream).
    size : int, optional
        Number of synthetic points (default n, public).
    noise_regions : bool, default=True
        Draw each arrow's ``level`` privacy-noise region, from ``draws``
        re-perturbations of the released matrix (as the loading plot's).
    draws : int, default=200
    level : float, default=0.95
        Coverage of each region (of a normal fit to the re-perturbations).
    joint : bool, default=True
        Widen every region to ``1 - (1 - level) / m`` for the m arrows drawn
        (Bonferroni), so that the regions hold all arrows at once with
        probability at least about ``level``, as a reader compares them; the
        caption says so. False: each region holds its own arrow with
        probability ``level`` (all m of them only about ``level ** m``).
    random_state : None, int or numpy.random.Generator, default=None
        Source of the synthetic points and the re-perturbations (kept apart
        from the release's noise stream).
    multiplier : float, optional
        The arrows' common multiplier; default from the released values (see
        Notes).
    color, arrow_color : str
        Colour of the score layer (without groups) and of the arrows.
    label_size : float, default=8
    title : str, optional
    text_kws : dict, optional
        Extra arguments of the arrow labels.
    **kwargs
        Passed to ``Axes.arrow``; other names are refused with the list of
        valid ones.

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Privacy: reads released values only (the fit's directions, private
    variances, the score histogram and its frame, the released matrix and its
    sigma): no new cost, and the data are never touched. The score layer is
    centred at the released histogram's mean, so no sample mean enters. The
    arrow multiplier is the 90th percentile of the score layer's distances
    from its mean (bins weighted by their released probabilities, or the
    synthetic points) over the longest arrow. The frame is square, contains
    the origin, every arrow tip and the score layer.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import warnings
    >>> from dppca import dp_pca
    >>> from dppca.datasets import load_iris
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     fit = dp_pca(load_iris(), eps=2.0, delta=1e-6, bounds=(0, 10), random_state=0)
    >>> ax = plot_biplot(fit, random_state=1)
    >>> ax.get_title()
    'DP biplot'
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    check_artist_kwargs(kwargs, "plot_biplot", "arrow")
    _check_biplot_options(alpha, layer)
    level = check_open_unit(level, "level")
    shown_level = f"joint {level:.0%}" if joint else f"{level:.0%}"
    v = np.asarray(fit.directions.directions, dtype=np.float64)
    variances = np.asarray(fit.variances, dtype=np.float64)
    a, b = _checked_components(fit, components, v, variances)
    score = getattr(fit, "score", None)
    cols = [a - 1, b - 1]
    if joint:
        level = 1.0 - (1.0 - level) / v.shape[0]
    scale = biplot_scale(variances[cols], int(fit.n), float(alpha))
    arrows = biplot_arrows(v[:, cols], scale)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 6.4))

    extent = [np.zeros((1, 2))]
    note = []
    if score is not None:
        pts, weights, box, line = _score_layer(
            ax, score, v, cols, scale, layer, size, random_state, color
        )
        extent.append(box)
        note.append(line)
    else:
        pts, weights = np.zeros((0, 2)), np.zeros(0)
        note.append("no score layer (the fit has no score plot)")
    m = arrow_multiplier(pts, arrows, weights) if multiplier is None else float(multiplier)
    if not (math.isfinite(m) and m > 0):
        raise ValueError(f"multiplier must be finite and > 0; got {multiplier!r}.")
    tips = m * arrows
    extent.append(tips)
    if noise_regions:
        sens = fit.loading.noise_sensitivity(
            check_positive_int(draws, "draws"), random_state=random_state
        )
        spread = m * sens.coordinate_samples(a, b) * scale
        draw_uncertainty(ax, spread, style="ellipse", level=level, color=arrow_color)
        extent.append(np.quantile(spread.reshape(-1, 2), [0.01, 0.99], axis=0))
        note.append(f"shaded: {shown_level} privacy-noise regions of the arrows")
    half = 1.08 * float(np.max(np.abs(np.vstack(extent))))
    half = half if half > 0 else 1.0
    _draw_arrows(ax, tips, half, arrow_color, kwargs)
    _frame(ax, fit, a, b, half, title)
    note.append(f"alpha={alpha:g}; arrows x{m:.3g}")
    add_privacy_caption(ax, fit, private=True, note="\n".join(note))  # a line each
    place_labels(
        ax,
        tips,
        list(fit.variables),
        text_kws={"color": "0.1", "fontsize": label_size, **(text_kws or {})},
        leader_color=arrow_color,
    )
    return ax
