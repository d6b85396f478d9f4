"""The correlation circle (variable plot) of a private PCA fit.

Each variable is drawn at its correlations with two PCs. In a fit of the
table in its own units (or divided by public scales) the correlation of
variable j with PC l is

    r_jl = v_jl sqrt(lambda_l) / sqrt(sum_m v_jm^2 lambda_m)

from the private directions ``v`` and the private variances ``lambda``
along them (all the fit estimated). In a standardised fit it comes straight
from the released correlation estimate ``R``: ``r_jl = (R v_l)_j / sqrt(v_l' R
v_l)`` (``R`` has a unit diagonal), with ``R`` first made positive
semi-definite (negative eigenvalues set to 0, unit diagonal restored), so that
every ``|r_jl| <= 1``. Both are post-processing of released values.

The privacy-noise regions come from re-perturbing the released matrix with
fresh noise of its own scale (as the loading plots' regions do), recomputing
the directions and (standardised fit) the correlation estimate from each
copy, and then the correlations. They show how far the privacy noise can
move each variable, not sampling variability.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Circle
from numpy.typing import ArrayLike, NDArray

from ..core.scalar_checks import check_open_unit, check_positive_int
from ..core.types import RandomStateLike
from ..core.validation import check_components, post_processing_rng
from ..privacy.mechanisms import reperturbed_matrices
from ._caption import add_privacy_caption
from ._kwargs import check_artist_kwargs
from ._labels import place_labels
from ._loading_panels import LIMITS, arrow_style, draw_uncertainty

__all__ = [
    "correlation_coordinates",
    "correlations_from_matrix",
    "fit_correlations",
    "plot_correlation_circle",
    "reperturbed_correlations",
]

_COLOR = "#1f5fa8"
#: Re-perturbations behind the privacy-noise regions unless told otherwise.
DEFAULT_DRAWS = 200


def correlation_coordinates(directions: ArrayLike, variances: ArrayLike) -> NDArray[np.float64]:
    """Correlations of each variable with each PC from directions and variances.

    Parameters
    ----------
    directions : array_like of shape (p, k) or (draws, p, k)
        Orthonormal columns ``v_l``.
    variances : array_like of shape (k,)
        The variance along each direction (negative values count as 0).

    Returns
    -------
    ndarray of the shape of ``directions``
        ``v_jl sqrt(lambda_l) / sqrt(sum_m v_jm^2 lambda_m)``; a row whose
        denominator is 0 is 0.

    Examples
    --------
    >>> V = np.eye(2)
    >>> correlation_coordinates(V, [2.0, 1.0]).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    v = np.asarray(directions, dtype=np.float64)
    lam = np.clip(np.asarray(variances, dtype=np.float64), 0.0, None)
    scaled = v * np.sqrt(lam)
    norm = np.sqrt(np.sum(scaled**2, axis=-1, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(norm > 0, scaled / np.where(norm > 0, norm, 1.0), 0.0)
    return np.asarray(r, dtype=np.float64)


def _psd_correlation(correlation: NDArray[np.float64]) -> NDArray[np.float64]:
    """The nearest-by-eigenvalue-clipping PSD matrix with a unit diagonal (batched)."""
    r = 0.5 * (correlation + np.swapaxes(correlation, -1, -2))
    values, vectors = np.linalg.eigh(r)
    values = np.clip(values, 0.0, None)
    psd = (vectors * values[..., None, :]) @ np.swapaxes(vectors, -1, -2)
    d = np.sqrt(np.clip(np.diagonal(psd, axis1=-2, axis2=-1), 1e-300, None))
    return np.asarray(psd / (d[..., :, None] * d[..., None, :]), dtype=np.float64)


def correlations_from_matrix(correlation: ArrayLike, directions: ArrayLike) -> NDArray[np.float64]:
    """Correlations of each variable with each PC from a correlation matrix and directions.

    Parameters
    ----------
    correlation : array_like of shape (p, p) or (draws, p, p)
        A correlation estimate (unit diagonal); made positive semi-definite
        first.
    directions : array_like of shape (p, k) or (draws, p, k)

    Returns
    -------
    ndarray of the shape of ``directions``
        ``(R v_l)_j / sqrt(v_l' R v_l)``, in [-1, 1].

    Examples
    --------
    >>> R = np.array([[1.0, 0.6], [0.6, 1.0]])
    >>> V = np.array([[1.0, 1.0], [1.0, -1.0]]) / np.sqrt(2)
    >>> correlations_from_matrix(R, V).round(4).tolist()
    [[0.8944, 0.4472], [0.8944, -0.4472]]
    """
    r = _psd_correlation(np.asarray(correlation, dtype=np.float64))
    v = np.asarray(directions, dtype=np.float64)
    rv = r @ v
    var = np.sum(v * rv, axis=-2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(var > 0, rv / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
    return np.clip(out, -1.0, 1.0)


def fit_correlations(fit: Any) -> NDArray[np.float64]:
    """The correlations (p, k) of a fit's variables with its PCs, from released values only."""
    v = np.asarray(fit.directions.directions, dtype=np.float64)
    if getattr(fit, "correlation_matrix", None) is not None:
        return correlations_from_matrix(fit.correlation_matrix, v)
    k = min(v.shape[1], np.asarray(fit.variances).shape[0])
    return correlation_coordinates(v[:, :k], np.asarray(fit.variances)[:k])


def _tau_correlation(stack: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sin(pi tau / 2)`` of a stack of released tau matrices over p (unit diagonal)."""
    p = stack.shape[-1]
    r = np.sin(0.5 * math.pi * np.clip(p * stack, -1.0, 1.0))
    idx = np.arange(p)
    r[..., idx, idx] = 1.0
    return r


def reperturbed_correlations(
    fit: Any, draws: int = DEFAULT_DRAWS, *, random_state: RandomStateLike = None
) -> NDArray[np.float64]:
    """Correlations recomputed from ``draws`` re-perturbed copies of the released matrix.

    Returns
    -------
    ndarray of shape (draws, p, k)
        Each copy is the released matrix plus fresh symmetric noise of its
        released scale (its public diagonal kept for a tau release); the
        directions are its top eigenvectors, turned (sign only) towards the
        released ones; the correlations follow as for the fit itself
        (:func:`fit_correlations`), with the units analysis' variances held
        at their released values.

    Notes
    -----
    Post-processing of public values (the released matrix and its sigma) from
    a stream apart from the release's noise (:func:`post_processing_rng`).
    """
    d = fit.directions
    if d.noisy_matrix is None or d.sigma is None:
        raise ValueError("privacy-noise regions need a private release (noisy matrix, sigma).")
    draws = check_positive_int(draws, "draws")
    rng = post_processing_rng(random_state)
    released = np.asarray(d.noisy_matrix, dtype=np.float64)
    stack = reperturbed_matrices(released, float(d.sigma), draws, rng)
    tau = getattr(fit, "correlation_matrix", None) is not None
    if tau:  # the diagonal of a tau release is public, not noisy
        idx = np.arange(stack.shape[-1])
        stack[:, idx, idx] = released[idx, idx]
    v = np.asarray(d.directions, dtype=np.float64)
    k = v.shape[1]
    values, vectors = np.linalg.eigh(stack)
    order = np.argsort(values, axis=1)[:, ::-1][:, :k]
    samples = np.take_along_axis(vectors, order[:, None, :], axis=2)
    signs = np.where(np.einsum("bjl,jl->bl", samples, v) < 0, -1.0, 1.0)
    samples = samples * signs[:, None, :]
    if tau:
        return correlations_from_matrix(_tau_correlation(stack), samples)
    kv = min(k, np.asarray(fit.variances).shape[0])
    return correlation_coordinates(samples[:, :, :kv], np.asarray(fit.variances)[:kv])


def _level_text(level: float, joint: bool) -> str:
    return f"joint {level:.0%}" if joint else f"{level:.0%}"


def _axis_label(fit: Any, pc: int) -> str:
    pve = getattr(fit, "pve", None)
    if pve is not None and pc <= len(pve):
        return f"PC{pc} (DP, {100 * float(pve[pc - 1]):.1f}% of variance)"
    return f"PC{pc} (DP)"


def _unit_circle(ax: Axes) -> None:
    """The frame of a correlation circle: the unit square, both axes, the unit circle."""
    ax.set_xlim(*LIMITS)
    ax.set_ylim(*LIMITS)
    ax.set_aspect("equal", adjustable="box")
    ax.axhline(0.0, color="0.75", lw=0.6, zorder=0)
    ax.axvline(0.0, color="0.75", lw=0.6, zorder=0)
    ax.add_patch(Circle((0.0, 0.0), 1.0, fill=False, color="0.5", lw=0.8, zorder=0))


def _draw_variables(
    ax: Axes, coords: NDArray[np.float64], kind: str, color: str, kwargs: dict[str, Any]
) -> None:
    """One arrow from the origin (``kind="vector"``) or one point per variable."""
    if kind == "vector":
        arrow_kws = arrow_style(color, kwargs)
        for x, y in coords:
            if math.hypot(x, y) > 1e-12:
                ax.arrow(0.0, 0.0, float(x), float(y), **arrow_kws)
    else:
        ax.scatter(coords[:, 0], coords[:, 1], **{"color": color, "s": 22, "zorder": 3, **kwargs})


def plot_correlation_circle(
    fit: Any,
    *,
    components: Sequence[int] = (1, 2),
    ax: Axes | None = None,
    kind: str = "vector",
    noise_regions: bool = True,
    draws: int = DEFAULT_DRAWS,
    level: float = 0.95,
    joint: bool = True,
    random_state: RandomStateLike = None,
    variables: Sequence[str] | None = None,
    color: str = _COLOR,
    label_size: float = 8,
    title: str | None = None,
    text_kws: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Axes:
    """Draw the correlation circle of a private PCA fit.

    Parameters
    ----------
    fit : PCAResult
        From :func:`dppca.dp_pca` (any object with ``directions``,
        ``variances``, ``pve``, ``correlation_matrix``, ``variables``, ``n``
        and ``cost``).
    components : (int, int), default=(1, 2)
        The two PCs, numbered from 1.
    ax : matplotlib Axes, optional
        Where to draw; by default a new figure.
    kind : {"vector", "point"}, default="vector"
        Arrows from the origin, or labelled points.
    noise_regions : bool, default=True
        Draw each variable's privacy-noise region: a ``level`` ellipse of the
        correlations recomputed from ``draws`` re-perturbed copies of the
        released matrix (:func:`reperturbed_correlations`).
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
        Source of the re-perturbations (a post-processing stream; a fixed
        value makes the picture repeatable).
    variables : sequence of str, optional
        The variables to show (default all).
    color : str
    label_size : float, default=8
    title : str, optional
    text_kws : dict, optional
        Extra arguments of the label texts.
    **kwargs
        Passed to ``Axes.arrow`` (vector) or ``Axes.scatter`` (point);
        other names are refused with the list of valid ones.

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Privacy: reads the fit's released values only (directions, variances or
    the released correlation estimate, the released matrix and its sigma),
    so it costs nothing. In a standardised fit the correlations come from the
    released correlation estimate; otherwise from the directions and the
    private variances of the PCs the fit estimated (all of them when the fit
    estimated all p). Limits are the unit square: correlations lie in
    [-1, 1].

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import warnings
    >>> from dppca import dp_pca
    >>> from dppca.datasets import load_wine
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     fit = dp_pca(load_wine(), eps=2.0, delta=1e-6, score=False, random_state=0)
    >>> ax = plot_correlation_circle(fit, random_state=1)
    >>> [float(v) for v in ax.get_xlim()]
    [-1.0, 1.0]
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    if kind not in ("vector", "point"):
        raise ValueError(f"kind must be 'vector' or 'point'; got {kind!r}.")
    check_artist_kwargs(
        kwargs, "plot_correlation_circle", "arrow" if kind == "vector" else "scatter"
    )
    r_all = fit_correlations(fit)
    a, b = check_components(components, r_all.shape[1])
    names = list(fit.variables)
    rows = list(range(len(names)))
    if variables is not None:
        unknown = [v for v in variables if v not in names]
        if unknown:
            raise ValueError(f"variables must be among the fit's {names!r}; got {unknown!r}.")
        rows = [names.index(v) for v in variables]
    level = check_open_unit(level, "level")
    shown_level = level
    if joint:
        level = 1.0 - (1.0 - level) / len(rows)
    coords = r_all[np.ix_(rows, [a - 1, b - 1])]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 6.4))
    _unit_circle(ax)
    note = None
    if noise_regions:
        spread = reperturbed_correlations(fit, draws, random_state=random_state)
        draw_uncertainty(
            ax, spread[:, rows][:, :, [a - 1, b - 1]], style="ellipse", level=level, color=color
        )
        note = (
            f"shaded: {_level_text(shown_level, joint)} privacy-noise regions\n"
            f"({draws} re-perturbations), not confidence"
        )
    _draw_variables(ax, coords, kind, color, kwargs)
    ax.set_xlabel(_axis_label(fit, a))
    ax.set_ylabel(_axis_label(fit, b))
    ax.set_title(title or "DP correlation circle")
    add_privacy_caption(ax, fit, private=True, note=note)
    place_labels(
        ax,
        coords,
        [names[j] for j in rows],
        text_kws={"color": "0.1", "fontsize": label_size, **(text_kws or {})},
        leader_color=color,
    )
    return ax
