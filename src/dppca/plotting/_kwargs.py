"""Refuse unknown keyword arguments of a plot function before anything is drawn.

Plot functions pass ``**kwargs`` to one main artist call (``Axes.arrow``,
``Axes.scatter``, ``Axes.imshow``, ``Axes.plot``, ``Axes.fill_between``).
matplotlib only notices a bad name deep inside that call (``xlim=`` fails in
``FancyArrow.set()`` with a message about the artist, not the plot), after
part of the figure is drawn. :func:`check_artist_kwargs` checks the names
first, against the artist's properties and the call's own arguments, and
names the valid ones.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from typing import Any

__all__ = ["check_artist_kwargs", "valid_artist_kwargs"]

# The call's own arguments, beside the properties of the artist it makes.
_CALL_ARGS = {
    "arrow": (
        "width",
        "head_width",
        "head_length",
        "length_includes_head",
        "shape",
        "overhang",
        "head_starts_at_zero",
    ),
    "scatter": (
        "s",
        "c",
        "marker",
        "cmap",
        "norm",
        "vmin",
        "vmax",
        "plotnonfinite",
        "linewidths",
        "edgecolors",
        "colorizer",
    ),
    "imshow": (
        "cmap",
        "norm",
        "aspect",
        "interpolation",
        "vmin",
        "vmax",
        "origin",
        "extent",
        "interpolation_stage",
        "filternorm",
        "filterrad",
        "resample",
        "url",
        "colorizer",
    ),
    "plot": ("scalex", "scaley", "fmt"),
    "fill_between": ("where", "interpolate", "step"),
    "polys": (),
}


def _artist(call: str) -> type:
    from matplotlib.collections import PathCollection, PolyCollection
    from matplotlib.image import AxesImage
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrow

    return {
        "arrow": FancyArrow,
        "scatter": PathCollection,
        "imshow": AxesImage,
        "plot": Line2D,
        "fill_between": PolyCollection,
        "polys": PolyCollection,
    }[call]


@functools.cache
def valid_artist_kwargs(call: str) -> frozenset[str]:
    """Every keyword the main artist call ``call`` accepts (properties, aliases, arguments)."""
    from matplotlib.artist import ArtistInspector

    inspector = ArtistInspector(_artist(call))
    names = set(inspector.get_setters())
    for aliases in inspector.aliasd.values():
        names.update(aliases)
    names.update(_CALL_ARGS[call])
    return frozenset(names)


def check_artist_kwargs(kwargs: Mapping[str, Any], function: str, call: str) -> None:
    """Raise TypeError naming any key of ``kwargs`` that ``call`` would not accept.

    Parameters
    ----------
    kwargs : mapping
        The ``**kwargs`` a plot function received.
    function : str
        The plot function's name, for the message.
    call : {"arrow", "scatter", "imshow", "plot", "fill_between", "polys"}
        The Axes method the keywords are passed to (``"polys"``: a
        PolyCollection made directly).

    Examples
    --------
    >>> check_artist_kwargs({"alpha": 0.5}, "plot_loading", "arrow")
    >>> try:
    ...     check_artist_kwargs({"xlim": (0, 1)}, "plot_loading", "arrow")
    ... except TypeError as error:
    ...     print(str(error)[:54])
    plot_loading got an unexpected keyword argument 'xlim'
    """
    valid = valid_artist_kwargs(call)
    bad = sorted(k for k in kwargs if k not in valid)
    if not bad:
        return
    hints = []
    for key in bad:
        close = difflib.get_close_matches(key, valid, n=1)
        if close:
            hints.append(f"did you mean {close[0]!r} for {key!r}?")
    names = ", ".join(repr(k) for k in bad)
    listed = ", ".join(sorted(valid))
    raise TypeError(
        f"{function} got an unexpected keyword argument {names}; "
        + (" ".join(hints) + " " if hints else "")
        + f"set the axes afterwards on the returned Axes (for example ax.set_xlim), or pass "
        f"the plot function's own options or the keywords of Axes.{call}: {listed}."
    )
