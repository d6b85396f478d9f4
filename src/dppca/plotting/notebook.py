"""How a result shows itself in a notebook: a picture, its cost, what eps means, warnings.

Every result's ``_repr_html_`` calls :func:`result_html`, so a result left as
the last expression of a Jupyter cell shows its default plot (an inline PNG),
its privacy cost, the attacker sentence of :func:`dppca.attacker_sentence`
and anything that qualifies it (an accuracy forecast that found problems,
components not separated from the privacy noise, non-private parts). It reads
the result only.
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["cost_html", "figure_png", "result_html"]


def figure_png(fig: Any, *, dpi: int = 90) -> str:
    """A matplotlib figure as base64 PNG text (the figure is closed afterwards)."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        fig.savefig(
            buffer, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None}
        )
    finally:
        plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _notes(result: Any) -> list[str]:
    """The plain sentences that qualify a result."""
    notes = []
    if not getattr(result, "private", True):
        parts = getattr(result, "nonprivate_parts", None)
        named = ", ".join(parts()) if callable(parts) else ""
        notes.append(
            "Not private" + (f" (non-private parts: {named})" if named else "") + ": do not "
            "publish it as a private release."
        )
    forecast = getattr(result, "forecast", None)
    if forecast is not None and not callable(forecast):
        notes.extend(f"Forecast: {p}" for p in getattr(forecast, "problems", ()))
    holders = (
        result,
        getattr(result, "directions", None),
        getattr(result, "directions_release", None),
    )
    for holder in holders:
        check = getattr(holder, "resolvability", None)
        problem = getattr(check, "problem", None)
        problem = problem() if callable(problem) else problem
        if problem:
            notes.append(str(problem))
            break
    note = getattr(result, "scale_note", None)
    if note:
        notes.append(str(note))
    extra = getattr(result, "notes", ())  # a fit's own remarks (tuple of str)
    if isinstance(extra, tuple):
        notes.extend(str(x) for x in extra)
    return notes


def cost_html(cost: Any) -> str:
    """The cost and what it means, as an HTML fragment (or "not private" for None)."""
    from ..privacy.tradeoff import attacker_sentence

    if cost is None:
        sentence = html.escape(attacker_sentence(None))
        return f"<p><b>Privacy cost:</b> none (not private). {sentence}</p>"
    return (
        f"<p><b>Privacy cost:</b> eps = {cost.eps:.3g}, delta = {cost.delta:.2g}. "
        f"{html.escape(attacker_sentence(cost))}</p>"
    )


def result_html(
    result: Any, *, draw: Callable[[], Any] | None = None, title: str | None = None
) -> str:
    """An HTML view of a result for notebooks.

    Parameters
    ----------
    result : object
        A dppca result with ``cost`` and ``plot()``.
    draw : callable, optional
        Draws the picture and returns an Axes or Figure; by default
        ``result.plot()``.
    title : str, optional
        The heading; by default the result's ``repr``.

    Returns
    -------
    str
        The picture as an inline PNG, the cost with the attacker sentence,
        and a list of warnings. A picture that cannot be drawn is replaced by
        a line saying why; warnings raised while drawing are listed.
    """
    heading = html.escape(title or repr(result))
    pieces = [f"<div class='dppca-result'><p><code>{heading}</code></p>"]
    caught: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            drawn = draw() if draw is not None else result.plot()
        caught = [str(w.message) for w in seen]
        fig = drawn if hasattr(drawn, "savefig") else drawn.figure
        png = figure_png(fig)
        pieces.append(f"<img alt='{heading}' src='data:image/png;base64,{png}'>")
    except Exception as exc:  # a view must never break the notebook's display
        pieces.append(f"<p><i>No picture: {html.escape(str(exc))}</i></p>")
    pieces.append(cost_html(getattr(result, "cost", None)))
    notes = [*_notes(result), *(c for c in caught if c not in _notes(result))]
    if notes:
        pieces.append("<p><b>Warnings</b></p><ul>")
        pieces.extend(f"<li>{html.escape(n)}</li>" for n in dict.fromkeys(notes))
        pieces.append("</ul>")
    pieces.append("</div>")
    return "\n".join(pieces)
