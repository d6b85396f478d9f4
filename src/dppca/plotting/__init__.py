"""Drawing of dppca results with matplotlib (results only, never raw data).

Plot functions read result objects only and draw no random numbers
themselves. Each takes ``ax=None`` (a new figure) and returns the Axes it
drew on, or the Figure for a multi-panel display. Nothing is shown, saved
or printed here.
"""

from .loading import (
    plot_loading,
    plot_loading_heatmap,
    plot_loading_point,
    plot_loading_vector,
)
from .score import group_color_map, plot_score, plot_score_groups, plot_score_panels
from .scree import plot_scree

__all__ = [
    "group_color_map",
    "plot_loading",
    "plot_loading_heatmap",
    "plot_loading_point",
    "plot_loading_vector",
    "plot_score",
    "plot_score_groups",
    "plot_score_panels",
    "plot_scree",
]
