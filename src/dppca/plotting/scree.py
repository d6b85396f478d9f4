"""Scree and PVE plots of a :class:`dppca.ScreeResult`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FixedLocator

from .._validation import check_choice

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..scree import ScreeResult

__all__ = ["plot_scree"]

ScreeKind = Literal["pve", "pve_total", "scree"]

_LABELS = {"clipped": "Clipped", "pmwm": "PMWM", "huber": "Huber"}
_MARKERS = {"clipped": "o", "pmwm": "^", "huber": "s"}
_YLABELS = {
    "pve": "Proportion of variance (of the k components)",
    "pve_total": "Proportion of total variance",
    "scree": "Variance along the direction",
}


def plot_scree(
    result: ScreeResult,
    *,
    kind: ScreeKind = "pve",
    ax: Axes | None = None,
    compare: bool = False,
    labels: dict[str, str] | None = None,
    legend_kws: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Axes:
    """Draw one line per method at components 1..k.

    Parameters
    ----------
    result : ScreeResult
        From :func:`dppca.dp_scree`.
    kind : {"pve", "pve_total", "scree"}, default="pve"
        Proportion of the variance of the k components, proportion of the
        (privately estimated) total variance, or the variances themselves.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.
    compare : bool, default=False
        Add the non-private curve (dashed, labelled "Non-private"). It needs a
        result made with ``dp_scree(..., compare=True)``; a figure showing it is
        not a private release.
    labels : dict, optional
        Legend labels by method name, e.g. ``{"pmwm": "winsorized"}``.
    legend_kws : dict, optional
        Passed to ``ax.legend``.
    **kwargs
        Passed to every ``ax.plot`` call (e.g. ``linewidth``).

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    The plot reads only released values (post-processing). PVE axes run over
    the public range [0, 1]; scree axes run from 0 to just above the largest
    plotted value, so they depend on the private values only, unless
    ``compare=True`` adds the non-private ones.
    """
    kind = check_choice(kind, "kind", ("pve", "pve_total", "scree"))
    if not isinstance(compare, bool):
        raise TypeError(f"compare must be True or False; got {compare!r}.")
    if compare and not result.has_comparison:
        raise ValueError(
            "compare=True needs non-private values in the result; "
            "compute it with dp_scree(..., compare=True)."
        )
    if ax is None:
        _, ax = plt.subplots()
    names = {**_LABELS, **(labels or {})}
    legend_kws = {"frameon": False, **(legend_kws or {})}
    series = {
        "pve": result.pve_values,
        "pve_total": result.pve_total_values,
        "scree": np.asarray(result.values),
    }[kind]
    x = np.arange(1, result.k + 1)
    plotted = [series]
    for i, method in enumerate(result.methods):
        ax.plot(x, series[i], marker=_MARKERS.get(method, "o"), label=names.get(method, method),
                **kwargs)  # fmt: skip
    if compare:
        from ..scree import _pve, _pve_total

        values = np.asarray(result.nonprivate_values)
        curve = {
            "pve": _pve(values),
            "pve_total": _pve_total(values, float(result.nonprivate_trace)),
            "scree": values,
        }[kind]
        plotted.append(curve[None, :])
        ax.plot(x, curve, marker="x", linestyle="--", color="black", label="Non-private",
                **kwargs)  # fmt: skip
    ax.xaxis.set_major_locator(FixedLocator(x))
    ax.set_xlim(0.5, result.k + 0.5)
    if kind == "scree":
        top = max(float(np.max(v)) for v in plotted)
        ax.set_ylim(0.0, 1.05 * top if np.isfinite(top) and top > 0 else 1.0)
    else:
        ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("Component")
    ax.set_ylabel(_YLABELS[kind])
    ax.set_title("Private PVE" if kind != "scree" else "Private scree")
    ax.legend(**legend_kws)
    return ax
