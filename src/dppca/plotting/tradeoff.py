"""The trade-off curve of a release: the best membership test at each false-alarm rate."""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ..privacy.cost import PrivacyCost
from ..privacy.tradeoff import attacker_power, percent_text, tradeoff_curve
from ._caption import add_privacy_caption
from ._kwargs import check_artist_kwargs

__all__ = ["plot_tradeoff"]


def plot_tradeoff(
    cost: PrivacyCost | Iterable[PrivacyCost],
    *,
    ax: Axes | None = None,
    alpha: float = 0.01,
    n: int | None = None,
    total: tuple[float, float] | None = None,
    title: str | None = "What the privacy guarantee means",
    **kwargs: Any,
) -> Axes:
    """Draw the most power a membership test can have against a release, per false-alarm rate.

    Parameters
    ----------
    cost : PrivacyCost or iterable of PrivacyCost
        The release (several costs are composed).
    ax : matplotlib Axes, optional
        Where to draw; by default a new figure.
    alpha : float, default=0.01
        The false-alarm rate marked on the curve (the one of
        :func:`dppca.attacker_sentence`).
    n : int, optional
        The number of rows, for the caption.
    total : (float, float), optional
        The (eps, delta) of several costs composed, for the caption (one
        cost's own are used by default).
    title : str or None
        Title of the panel.
    **kwargs
        Passed to ``Axes.plot`` for the curve; unknown names are refused.

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    The curve is :func:`dppca.tradeoff_curve`: the exact bound of the
    release's noise, on a log-scaled false-alarm axis from 1e-4 to 1. The
    diagonal is a test that learns nothing (a coin); the top edge, an
    attacker who always wins. It reads the recorded costs only.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from dppca import PrivacyCost
    >>> g = PrivacyCost(1.0, 1e-6, "gaussian", "x", kind="gaussian", sensitivity=1.0, sigma=1.0)
    >>> ax = plot_tradeoff(g)
    >>> ax.get_xlabel()
    'false-alarm rate (type I error)'
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    check_artist_kwargs(kwargs, "plot_tradeoff", "plot")
    costs = [cost] if isinstance(cost, PrivacyCost) else list(cost)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 4.2))
    alphas = np.geomspace(1e-4, 1.0, 121)
    power = tradeoff_curve(costs, alphas)
    ax.plot(alphas, alphas, color="0.6", lw=0.8, ls="--", label="no information (a coin)")
    line_kws = {"color": "#1f5fa8", "lw": 1.8, "label": "most power of any test", **kwargs}
    ax.plot(alphas, power, **line_kws)
    at = attacker_power(costs, alpha)
    ax.plot([alpha], [at], marker="o", color=line_kws["color"], ms=5)
    ax.annotate(
        f"{percent_text(alpha, up=False)} false alarms:\n"
        f"at most {percent_text(at, up=True)} detected",
        xy=(alpha, at),
        xytext=(-4, 14),
        ha="right",
        textcoords="offset points",
        fontsize=8,
        color="0.2",
    )
    ax.set_xscale("log")
    ax.set_xlim(1e-4, 1.0)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("false-alarm rate (type I error)")
    ax.set_ylabel("detection rate (power)")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    if title:
        ax.set_title(title)
    if total is None and len(costs) == 1:
        total = (costs[0].eps, costs[0].delta)
    if total is not None:
        eps, delta = total
        add_privacy_caption(ax, SimpleNamespace(eps=eps, delta=delta, n=n, private=True))
    return ax
