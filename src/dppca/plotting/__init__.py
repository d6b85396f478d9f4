"""Drawing of dppca results with matplotlib (results only, never raw data).

Plot functions read public attributes of result objects only. Each takes
``ax=None`` (a new figure) and returns the Axes it drew on, or the Figure for a
multi-panel display; a result's own ``plot()`` always returns an Axes (of the
first panel, for several). Nothing is shown, saved or printed here. Every panel states the
eps, delta and n of what it shows (or says "non-private") in a small grey
caption under its title (:func:`privacy_caption`). The only random draws are
post-processing of released values: the loading uncertainty view (from the
caller's ``random_state``) and the scree/PVE noise bands (a fixed internal
seed, so a figure is reproducible).
"""

from . import drawers  # noqa: F401  (registers every result's plot() drawer)
from ._caption import add_privacy_caption, privacy_caption
from .biplot import plot_biplot
from .loading import (
    plot_loading,
    plot_loading_heatmap,
    plot_loading_point,
    plot_loading_vector,
)
from .score import group_color_map, plot_score, plot_score_groups, plot_score_panels
from .scree import plot_scree
from .tradeoff import plot_tradeoff
from .variables import plot_correlation_circle

__all__ = [
    "add_privacy_caption",
    "group_color_map",
    "plot_biplot",
    "plot_correlation_circle",
    "plot_loading",
    "plot_loading_heatmap",
    "plot_loading_point",
    "plot_loading_vector",
    "plot_score",
    "plot_score_groups",
    "plot_score_panels",
    "plot_scree",
    "plot_tradeoff",
    "privacy_caption",
]
