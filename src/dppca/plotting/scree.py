"""Scree and PVE plots of a :class:`dppca.ScreeResult`, with bands for the privacy noise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.ticker import FixedLocator
from numpy.typing import NDArray

from ..core.lazy import isotonic_regression
from ..core.lazy import scipy_special as special
from ..core.scalar_checks import check_bool, check_choice, check_open_unit
from ..core.validation import check_compare
from ..releases.scree.result import INTERVAL_SDS
from ._caption import add_privacy_caption
from ._kwargs import check_artist_kwargs

if TYPE_CHECKING:
    from collections.abc import Sequence

    from matplotlib.axes import Axes

    from ..releases.scree.result import ScreeResult

__all__ = ["plot_scree"]

ScreeKind = Literal["pve", "pve_total", "scree"]

_LABELS = {"clipped": "Clipped", "pmwm": "PMWM", "huber": "Huber"}
_MARKERS = {"clipped": "o", "pmwm": "^", "huber": "s"}
_YLABELS = {
    "pve": "Proportion of variance (of the k components)",
    "pve_total": "Proportion of total variance",
    "scree": "Variance along the direction",
}
# The PVE bands come from simulating the known noise around the released values.
# The draws are post-processing of public values (released estimates and the
# noise's public standard deviations), so a fixed seed costs no privacy and
# keeps every figure reproducible; it is not the release's random_state.
_BAND_SEED = 20240601
_BAND_DRAWS = 2000
#: ``gid`` of the artists marking tied runs and values clipped to 0.
TIED_GID = "dppca-scree-tied"
BELOW_NOISE_GID = "dppca-scree-below-noise"
_TIED_NOTE = "bracket: tied after the monotone fit"
_BELOW_NOTE = "\u25bd: clipped to 0, below the noise level ({} sd)"
_ZERO_NOTE = "not drawn: values clipped to 0, below the noise level"


def _fit_marks(result: Any, kind: str) -> tuple[NDArray, NDArray, NDArray | None] | None:
    """Tie groups, zeros and the zeros' upper markers (in axis units) of ``result``.

    None when the result records neither ties nor zeros (or predates them).
    The marker of a value clipped to 0 is its public interval half-width,
    divided as the axis divides the values (by their sum, or by the larger of
    the sum and the private total variance), at most 1 on the PVE axes.
    """
    groups = getattr(result, "tie_groups", None)
    zeros = getattr(result, "clipped_to_zero", None)
    if groups is None or zeros is None or not (np.any(groups) or np.any(zeros)):
        return None
    halfwidth = getattr(result, "interval_halfwidth", None)
    if halfwidth is None:
        return np.asarray(groups), np.asarray(zeros), None
    values = np.asarray(result.values, dtype=np.float64)
    bound = np.array(halfwidth, dtype=np.float64)
    if kind != "scree":
        total = values.sum(axis=1, keepdims=True)
        if kind == "pve_total":
            total = np.maximum(total, float(getattr(result, "trace", 0.0)))
        with np.errstate(invalid="ignore", divide="ignore"):
            bound = np.minimum(
                np.where(total > 0, bound / np.where(total > 0, total, 1.0), 0.0), 1.0
            )
    return np.asarray(groups), np.asarray(zeros), bound


def _draw_fit_marks(
    ax: Axes,
    x: NDArray,
    series: NDArray[np.float64],
    marks: tuple[NDArray, NDArray, NDArray | None],
    colors: list[Any],
) -> list[str]:
    """Mark each method's tied runs and zeros on ``ax`` (after its limits); return the notes.

    A tied run gets a bracket over its points labelled "tied"; a value
    clipped to 0 gets an open downward triangle at its upper marker with a
    dotted line down to the axis (no marker without noise scales).
    """
    groups, zeros, bound = marks
    height = ax.get_ylim()[1]
    segments: list[list[tuple[float, float]]] = []
    for i, color in enumerate(colors):
        for g in range(1, int(groups[i].max(initial=0)) + 1):
            run = np.flatnonzero(groups[i] == g)
            left, right = x[run[0]] - 0.2, x[run[-1]] + 0.2
            low, top = (series[i][run[0]] + f * height for f in (0.02, 0.04))
            segments += [[(left, low), (left, top), (right, top), (right, low)]]
            ax.text(
                0.5 * (left + right),
                top,
                "tied",
                ha="center",
                va="bottom",
                fontsize=7,
                color=color,
                gid=TIED_GID,
                clip_on=False,
            )
        if bound is not None and np.any(zeros[i]):
            at = np.flatnonzero(zeros[i])
            ax.vlines(
                x[at],
                0.0,
                bound[i][at],
                colors=[color],
                linestyles="dotted",
                linewidths=1.0,
                gid=BELOW_NOISE_GID,
            )
            ax.scatter(
                x[at],
                bound[i][at],
                marker="v",
                facecolors="none",
                edgecolors=[color],
                zorder=3,
                gid=BELOW_NOISE_GID,
            )
    if segments:
        ax.add_collection(
            LineCollection(segments, colors="0.3", linewidths=0.8, clip_on=False, gid=TIED_GID)
        )
    notes = [_TIED_NOTE] if segments else []
    if np.any(zeros):
        notes.append(_ZERO_NOTE if bound is None else _BELOW_NOTE.format(f"{INTERVAL_SDS:g}"))
    return notes


def _noise_sd(result: Any) -> tuple[NDArray[np.float64] | None, float]:
    """The released noise scales, read defensively: (per value or None, of the trace)."""
    sd = getattr(result, "noise_sd", None)
    if sd is None:
        return None, 0.0
    sd = np.asarray(sd, dtype=np.float64)
    values = np.asarray(result.values)
    if sd.shape != values.shape:
        sd = np.broadcast_to(sd, values.shape)
    trace_sd = getattr(result, "trace_sd", None)
    trace_sd = 0.0 if trace_sd is None or not np.isfinite(trace_sd) else float(trace_sd)
    return sd, trace_sd


def _post_process(draws: NDArray[np.float64], mono: bool) -> NDArray[np.float64]:
    """The release's own post-processing of noisy variances, on rows of ``draws``."""
    if not mono:
        return draws
    out = np.maximum(draws, 0.0)
    for row in out:
        row[:] = isotonic_regression(row, increasing=False).x
    return np.maximum(out, 0.0)


def _bands(
    result: Any, kind: str, level: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """Lower and upper ends, shape (n_methods, k), of the central ``level`` noise interval.

    ``kind="scree"``: value -/+ z sd (normal noise), the lower end clipped at 0.
    PVE kinds: quantiles of the PVE recomputed from the released values plus
    fresh N(0, sd^2) noise on every value (and on the total variance), after
    the same post-processing as the release (monotone fit and clipping at 0
    when ``result.mono``; PVE of the total divides by max(trace, sum)).
    """
    sd, trace_sd = _noise_sd(result)
    if sd is None:
        return None
    values = np.asarray(result.values, dtype=np.float64)
    if kind == "scree":
        z = float(special.ndtri(0.5 + level / 2))
        return np.maximum(values - z * sd, 0.0), values + z * sd
    rng = np.random.default_rng(_BAND_SEED)  # fixed on purpose: see _BAND_SEED
    mono = bool(getattr(result, "mono", True))
    trace = float(getattr(result, "trace", np.nan))
    q = [0.5 - level / 2, 0.5 + level / 2]
    low, high = np.empty_like(values), np.empty_like(values)
    for i in range(values.shape[0]):
        noisy = values[i] + rng.standard_normal((_BAND_DRAWS, values.shape[1])) * sd[i]
        noisy = _post_process(noisy, mono)
        total = noisy.sum(axis=1, keepdims=True)
        if kind == "pve_total":
            t = trace + trace_sd * rng.standard_normal((_BAND_DRAWS, 1))
            total = np.maximum(total, t)
        with np.errstate(invalid="ignore", divide="ignore"):
            pve = np.where(total > 0, noisy / np.where(total > 0, total, 1.0), 0.0)
        low[i], high[i] = np.quantile(pve, q, axis=0)
    return low, high


def plot_scree(
    result: ScreeResult,
    *,
    kind: ScreeKind = "pve_total",
    ax: Axes | None = None,
    compare: bool = False,
    interval: float | None = 0.9,
    labels: dict[str, str] | None = None,
    legend_kws: dict[str, Any] | None = None,
    band_kws: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Axes:
    """Draw one line per method at components 1..k, with a band for the privacy noise.

    Parameters
    ----------
    result : ScreeResult
        From :func:`dppca.dp_scree`.
    kind : {"pve_total", "pve", "scree"}, default="pve_total"
        Proportion of the (privately estimated) total variance, proportion of
        the variance of the k components, or the variances themselves. The
        proportion of the total is the default: it shows how much of the data's
        variance the k components hold, which the shares of the k components
        alone (which always add up to 1) cannot.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.
    compare : bool, default=False
        Add the non-private curve (dashed, labelled "Non-private"). It needs a
        result made with ``dp_scree(..., compare=True)``; a figure showing it is
        not a private release.
    interval : float or None, default=0.9
        Level of the central noise interval drawn as a band around each
        method's line; None draws no band. Bands need the noise scales of the
        release (``result.noise_sd``); without them none is drawn.
    labels : dict, optional
        Legend labels by method name, e.g. ``{"pmwm": "winsorized"}``.
    legend_kws : dict, optional
        Passed to ``ax.legend``.
    band_kws : dict, optional
        Passed to ``ax.fill_between`` for the bands (default ``alpha=0.2``,
        the line's colour).
    **kwargs
        Passed to every ``ax.plot`` call (e.g. ``linewidth``).

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    The plot reads only released values and the public scales of the noise
    that was added to them (post-processing, no privacy cost). For
    ``kind="scree"`` the band is ``value -/+ z sd`` with ``z`` the normal
    quantile of the level, clipped at 0; ``sd`` is the noise before the
    monotone fit, which only shrinks it, so the band is conservative. For the
    PVE kinds the band holds the central ``interval`` of the PVE recomputed
    from the released values plus fresh noise of the same scales, after the
    release's own post-processing; the simulation uses a fixed seed (not the
    release's), so the same result always gives the same figure. The bands
    show how far the privacy noise alone moves each value; they do not
    include sampling variability.

    Clipping noisy variances at 0 and the monotone fit (``result.mono``)
    leave zeros and ties that are not estimates of zero or equal variances;
    the figure says so rather than drawing them as points. A run of values
    the fit pooled (``result.tie_groups``) gets a bracket labelled "tied"; a
    value clipped to 0 (``result.clipped_to_zero``) is left off the line and
    drawn as an open downward triangle at its upper marker,
    ``result.interval_halfwidth`` (2 noise sd, fixed by the plan and the clip
    level, no data) in the axis' units, with a dotted line down to 0. The
    caption explains both.

    PVE axes run over the public range [0, 1]; scree axes run from 0 to just
    above the largest plotted value (band included), so they depend on the
    released values only, unless ``compare=True`` adds the non-private ones.
    The panel states eps, delta and n under its title.

    Examples
    --------
    >>> from dppca import dp_scree
    >>> from dppca.datasets import load_iris
    >>> res = dp_scree(load_iris().iloc[:, :4], eps=1.0, delta=1e-6, random_state=0)
    >>> ax = plot_scree(res, kind="pve")
    >>> tuple(float(v) for v in ax.get_ylim())  # PVE runs over its public range
    (0.0, 1.0)
    """
    kind = check_choice(kind, "kind", ("pve", "pve_total", "scree"))
    compare = check_compare(
        check_bool(compare, "compare"),
        result.has_comparison,
        "non-private values in the result; compute it with dp_scree(..., compare=True)",
    )
    if interval is not None:
        interval = check_open_unit(interval, "interval")
    check_artist_kwargs(kwargs, "plot_scree", "plot")
    if ax is None:
        _, ax = plt.subplots()
    if getattr(result, "problems", ()):  # values that are not estimates are never drawn as such
        return _not_an_estimate(ax, result)
    names = {**_LABELS, **(labels or {})}
    legend_kws = {"frameon": False, **(legend_kws or {})}
    series = {
        "pve": result.pve_values,
        "pve_total": result.pve_total_values,
        "scree": np.asarray(result.values),
    }[kind]
    bands = None if interval is None else _bands(result, kind, interval)
    marks = _fit_marks(result, kind)
    x = np.arange(1, result.k + 1)
    plotted = [series]
    colors = []
    for i, method in enumerate(result.methods):
        shown = series[i] if marks is None else np.where(marks[1][i], np.nan, series[i])
        (line,) = ax.plot(
            x,
            shown,
            marker=_MARKERS.get(method, "o"),
            label=names.get(method, method),
            **kwargs,
        )
        colors.append(line.get_color())
        if marks is not None and marks[2] is not None:
            plotted.append(marks[2][i][None, :] * marks[1][i])
            plotted.append(1.1 * series[i][None, :] * (marks[0][i] > 0))
        if bands is not None:
            opts = {"alpha": 0.2, "color": line.get_color(), "linewidth": 0, **(band_kws or {})}
            ax.fill_between(x, bands[0][i], bands[1][i], **opts)
            plotted.append(bands[1][i][None, :])
    if compare:
        curve = {
            "pve": result.nonprivate_pve,
            "pve_total": result.nonprivate_pve_total,
            "scree": result.nonprivate_values,
        }[kind]
        assert curve is not None  # has_comparison was checked above
        curve = np.asarray(curve)
        plotted.append(curve[None, :])
        ax.plot(x, curve, marker="x", linestyle="--", color="black", label="Non-private", **kwargs)
    _set_axes(ax, kind, x, plotted)
    ax.legend(**legend_kws)
    notes = []
    if bands is not None:
        notes.append(f"shaded: central {interval:.0%} privacy-noise region (not confidence)")
    if compare:
        notes.append("dashed: non-private, do not publish")
    if getattr(result, "order_note", None) is not None:
        notes.append(_unpooled(ax, result, kind, interval))
    fit = [] if marks is None else _draw_fit_marks(ax, x, series, marks, colors)
    note = "\n".join(line for line in ("; ".join(notes), *fit) if line) or None
    add_privacy_caption(ax, result, private=True, note=note)
    return ax


def _set_axes(ax: Axes, kind: str, x: NDArray, plotted: list[NDArray]) -> None:
    """Ticks at the components, limits from the public range or the plotted values, labels.

    PVE axes run over [0, 1]; scree axes from 0 to 5 % above the largest
    finite value in ``plotted`` (released values, bands and markers).
    """
    ax.xaxis.set_major_locator(FixedLocator(cast("Sequence[float]", x)))
    ax.set_xlim(0.5, x.size + 0.5)
    if kind == "scree":
        every = np.concatenate([np.ravel(v) for v in plotted])
        every = every[np.isfinite(every)]
        top = float(every.max()) if every.size else 0.0
        ax.set_ylim(0.0, 1.05 * top if top > 0 else 1.0)
    else:
        ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("Component")
    ax.set_ylabel(_YLABELS[kind])
    ax.set_title("Private PVE" if kind != "scree" else "Private scree")


def _not_an_estimate(ax: Axes, result: ScreeResult) -> Axes:
    """An empty panel saying why the released values are not an estimate."""
    ax.text(
        0.5,
        0.5,
        "Not an estimate:\n" + "\n".join(result.problems),
        transform=ax.transAxes,
        ha="center",
        va="center",
        wrap=True,
        fontsize=8,
        color="tab:red",
    )
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title("Private scree: not an estimate")
    add_privacy_caption(ax, result, private=True)
    return ax


def _unpooled(ax: Axes, result: ScreeResult, kind: str, interval: float | None) -> str:
    """Draw the unpooled first-method variances with noise intervals; return the note.

    Only on the scree kind, where the released variances are on the axis; the
    PVE kinds get the note alone.
    """
    if kind != "scree" or result.unpooled_values is None or result.noise_sd is None:
        return "the variance order differs from the directions' order (see kind='scree')"
    z = float(special.ndtri(0.5 + 0.5 * (interval or 0.9)))
    raw = np.asarray(result.unpooled_values[0])
    x = np.arange(1, result.k + 1)
    ax.errorbar(
        x,
        raw,
        yerr=z * np.asarray(result.noise_sd[0]),
        fmt="o",
        mfc="none",
        color="tab:red",
        capsize=3,
        label="Unpooled",
    )
    ax.set_ylim(0.0, max(ax.get_ylim()[1], 1.05 * float(np.max(raw + z * result.noise_sd[0]))))
    ax.legend(frameon=False)
    return "red: unpooled, the variance order differs from the directions' order"
