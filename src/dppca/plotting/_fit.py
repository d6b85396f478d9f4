"""The pictures of one fit that are drawn from one of its parts (scree, score, loading).

A fit (:class:`dppca.PCAResult`) spends one total (eps, delta) over its
parts. Every picture of the fit states that total first, as the correlation
circle and the biplot do; a picture drawn from one part whose own cost is
less than the total adds a line with that part's cost, "part of a fit of
eps X", so pictures of one fit side by side say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._caption import add_privacy_caption, find_caption, privacy_caption

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "fit_part_line",
    "plot_fit_loading",
    "plot_fit_placeholder",
    "plot_fit_score",
    "plot_fit_scree",
]


def fit_part_line(fit: Any, name: str, part: Any) -> str | None:
    """The caption line naming ``part``'s own cost inside ``fit``, or None when it is the total.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> fit = NS(eps=1.0, delta=1e-6)
    >>> fit_part_line(fit, "directions", NS(eps=0.468097, delta=4.375e-7))
    'directions: eps=0.468, delta=4.4e-07, part of a fit of eps=1'
    >>> fit_part_line(fit, "scree", NS(eps=1.0, delta=1e-6)) is None
    True
    """
    eps, delta = getattr(part, "eps", None), getattr(part, "delta", None)
    if (
        eps is None
        or delta is None
        or (f"{eps:.3g}", f"{delta:.2g}")
        == (
            f"{fit.eps:.3g}",
            f"{fit.delta:.2g}",
        )
    ):
        return None
    return f"{name}: eps={eps:.3g}, delta={delta:.2g}, part of a fit of eps={fit.eps:.3g}"


def _restate(drawn: Any, fit: Any, name: str, part: Any) -> None:
    """Caption every private panel drawn from ``part`` with the fit's total first."""
    figure = drawn if hasattr(drawn, "savefig") else drawn.figure
    own = privacy_caption(part, private=True)
    extra = fit_part_line(fit, name, part)
    for ax in figure.axes:
        caption = find_caption(ax)
        if caption is None:
            continue
        first, *rest = caption.get_text().split("\n")
        if first != own:  # a non-private panel, or a panel of another result
            continue
        # add_privacy_caption writes privacy_caption(fit) first; the part's
        # nonprivate line and note were already rendered, so they go as the note
        note = "\n".join(line for line in (extra, *rest) if line)
        add_privacy_caption(ax, fit, private=True, note=note or None)


def plot_fit_scree(fit: Any, *, ax: Any = None, **kwargs: Any) -> Axes:
    """``fit.scree.plot(...)`` with the fit's caption."""
    drawn = fit.scree.plot(ax=ax, **kwargs)
    _restate(drawn, fit, "scree", fit.scree)
    return drawn


def plot_fit_score(fit: Any, *, ax: Any = None, **kwargs: Any) -> Axes:
    """``fit.score.plot(...)`` with the fit's caption, or the note saying why it is left out."""
    if fit.score is None:  # left out by the default rule (fit.plot refuses the other case)
        return plot_fit_placeholder(fit, fit.score_note, ax=ax)
    drawn = fit.score.plot(ax=ax, **kwargs)
    _restate(drawn, fit, "score", fit.score)
    return drawn


def plot_fit_placeholder(fit: Any, note: str, *, ax: Any = None) -> Axes:
    """An empty score panel that states why the fit has no score plot (``note``).

    Drawn by ``fit.plot("score")`` when the default rule left the score plot
    out: the panel keeps its place in a row of pictures and says why, with
    the fit's caption; nothing about the data is drawn.
    """
    import textwrap

    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title("Score plot")
    text = note[:1].upper() + note[1:]
    ax.text(
        0.5,
        0.5,
        textwrap.fill(text, width=48),
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=8,
        wrap=True,
    )
    add_privacy_caption(ax, fit, private=True)
    return ax


def plot_fit_loading(fit: Any, *, ax: Any = None, **kwargs: Any) -> Axes:
    """``fit.loading.plot(...)`` with the fit's caption (the loadings cost the directions)."""
    loading = fit.loading
    drawn = loading.plot(ax=ax, **kwargs)
    _restate(drawn, fit, "directions", loading)
    return drawn
