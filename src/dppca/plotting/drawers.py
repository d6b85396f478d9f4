"""The drawers behind every result's ``plot()``, registered with :mod:`dppca.releases.protocol`.

Each takes ``(result, kind=..., ax=None, **kwargs)`` and returns the Axes of
the (first) panel drawn, whatever the plotting function returns.
"""

from __future__ import annotations

from typing import Any

from matplotlib.axes import Axes

from ..releases.directions.result import DirectionsResult
from ..releases.loading.result import LoadingResult
from ..releases.protocol import first_panel, register_drawer
from ..releases.score.result import ScoreResult
from ..releases.scree.result import ScreeResult
from .loading import plot_loading
from .score import plot_score, plot_score_groups, plot_score_panels
from .scree import plot_scree

__all__: list[str] = []


@register_drawer("LoadingResult")
def _loading(result: LoadingResult, kind: Any = "vector", ax: Any = None, **kwargs: Any) -> Axes:
    return first_panel(plot_loading(result, kind=kind, ax=ax, **kwargs), ax)


@register_drawer("DirectionsResult")
def _directions(
    result: DirectionsResult, kind: Any = "vector", ax: Any = None, **kwargs: Any
) -> Axes:
    return _loading(LoadingResult.from_directions(result), kind=kind, ax=ax, **kwargs)


@register_drawer("ScreeResult")
def _scree(result: ScreeResult, kind: Any = "pve_total", ax: Any = None, **kwargs: Any) -> Axes:
    return plot_scree(result, kind=kind, ax=ax, **kwargs)


@register_drawer("ScoreResult")
def _score(result: ScoreResult, kind: Any = "histogram", ax: Any = None, **kwargs: Any) -> Axes:
    if kind in ("panels", "groups"):
        draw = plot_score_panels if kind == "panels" else plot_score_groups
        return first_panel(draw(result, ax=ax, **kwargs), ax)
    return plot_score(result, kind=kind, ax=ax, **kwargs)
