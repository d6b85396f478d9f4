"""Plots of dppca results (matplotlib).

Plot functions read result objects only, never data, and draw no random
numbers themselves. Each takes ``ax=None`` (a new figure) and returns the
Axes it drew on, or the Figure for a multi-panel display. Nothing is shown,
saved or printed here.
"""

from __future__ import annotations

from .loading import (
    plot_loading,
    plot_loading_heatmap,
    plot_loading_point,
    plot_loading_vector,
)

__all__ = [
    "plot_loading",
    "plot_loading_heatmap",
    "plot_loading_point",
    "plot_loading_vector",
]
