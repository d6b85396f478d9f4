"""Drawing of dppca results with matplotlib (results only, never raw data)."""

from .score import group_color_map, plot_score, plot_score_groups, plot_score_panels
from .scree import plot_scree

__all__ = [
    "group_color_map",
    "plot_score",
    "plot_score_groups",
    "plot_score_panels",
    "plot_scree",
]
