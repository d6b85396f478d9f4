"""The privacy caption every figure carries: eps, delta and n, or "non-private".

The caption sits just under the panel's title, in small grey type. Its first
line states the private part a panel shows (eps, delta and n of the result's
release), or "non-private" for a panel of a non-private part; a plain line
then names any non-private part the panel also shows (labels read from the
data, say), and a last line may carry a note on what the panel shows. It
reads only public attributes of a result (``eps``, ``delta``, ``n``,
``private``, ``nonprivate_parts()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib as mpl

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.text import Annotation

__all__ = [
    "CAPTION_GID",
    "NONPRIVATE_STATEMENTS",
    "RESOLVABILITY_GID",
    "add_privacy_caption",
    "add_resolvability_note",
    "find_caption",
    "nonprivate_statement",
    "privacy_caption",
]

#: ``gid`` of the caption text, to find it among an Axes' texts.
CAPTION_GID = "dppca-privacy-caption"
_FONTSIZE = 9.0  # readable at print size (7 pt was too small)
_COLOR = "0.35"
_GAP_PT = 3.0  # between the top of the axes and the caption's last line

#: A plain statement per kind of non-private part a result names in
#: ``nonprivate_parts()``.
NONPRIVATE_STATEMENTS = {
    "groups": "group labels read from the data, not private",
    "nonprivate": "comparison computed from the data without noise, not private",
    "directions": "directions computed from the data without noise, not private",
    "nonprivate_values": "comparison variances computed without noise, not private",
    "nonprivate_trace": "comparison total variance computed without noise, not private",
}


def nonprivate_statement(parts: tuple[str, ...]) -> str | None:
    """The plain line naming the non-private ``parts`` a panel shows, or None for none.

    Examples
    --------
    >>> nonprivate_statement(("groups",))
    'group labels read from the data, not private'
    """
    lines = [NONPRIVATE_STATEMENTS.get(part, f"{part}: not private") for part in parts]
    return "; ".join(lines) or None


def privacy_caption(result: Any, *, private: bool | None = None) -> str:
    """One line stating a result's privacy parameters and its number of rows.

    Parameters
    ----------
    result : object
        Any dppca result; only its public attributes ``eps``, ``delta``, ``n``
        and ``private`` are read (missing ones are left out).
    private : bool, optional
        Override ``result.private``, for a panel that shows only the private
        part (or only the non-private comparison) of a result.

    Returns
    -------
    str
        ``"eps=0.5, delta=1e-05, n=200"``, or ``"non-private, n=200"`` for a
        non-private result or panel.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> privacy_caption(SimpleNamespace(eps=0.5, delta=1e-5, n=200, private=True))
    'eps=0.5, delta=1e-05, n=200'
    >>> privacy_caption(SimpleNamespace(eps=None, delta=None, n=200, private=False))
    'non-private, n=200'
    """
    if private is None:
        private = bool(getattr(result, "private", True))
    eps = getattr(result, "eps", None)
    delta = getattr(result, "delta", None)
    if private and eps is not None and delta is not None:
        # three significant digits of eps and two of delta: a tight total such
        # as 0.9999999 reads as 1, and a stretched share as 0.333, not 0.333333
        parts = [f"eps={float(eps):.3g}", f"delta={float(delta):.2g}"]
    else:
        parts = ["non-private"]
    n = getattr(result, "n", None)
    if n is not None:
        parts.append(f"n={int(n)}")
    return ", ".join(parts)


def add_privacy_caption(
    ax: Axes,
    result: Any,
    *,
    private: bool | None = None,
    note: str | None = None,
    nonprivate: tuple[str, ...] = (),
) -> Annotation:
    """Write :func:`privacy_caption` (and optional lines) under the title of ``ax``.

    ``nonprivate`` names non-private parts of ``result`` that the panel
    shows beside its private part (see :data:`NONPRIVATE_STATEMENTS`); their
    plain statement is the second line, ``note`` the last.

    The title is lifted to make room, so the caption sits between the title
    and the top of the axes, centred. Call it after the title is set; a later
    ``ax.set_title`` puts the title back at its usual height, over the caption.
    A second call replaces the first caption.

    Returns
    -------
    matplotlib.text.Annotation
        The caption, with ``gid`` :data:`CAPTION_GID`.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from types import SimpleNamespace
    >>> fig, ax = plt.subplots()
    >>> _ = ax.set_title("My panel")
    >>> result = SimpleNamespace(eps=0.5, delta=1e-5, n=200, private=True)
    >>> add_privacy_caption(ax, result, note="bins only").get_text().splitlines()
    ['eps=0.5, delta=1e-05, n=200', 'bins only']
    """
    old = find_caption(ax)
    if old is not None:
        old.remove()
    lines = [privacy_caption(result, private=private), nonprivate_statement(nonprivate), note]
    text = "\n".join(line for line in lines if line)
    n_lines = text.count("\n") + 1
    caption = ax.annotate(
        text,
        xy=(0.5, 1.0),
        xycoords="axes fraction",
        xytext=(0.0, _GAP_PT),
        textcoords="offset points",
        ha="center",
        va="bottom",
        fontsize=_FONTSIZE,
        color=_COLOR,
        annotation_clip=False,
        gid=CAPTION_GID,
    )
    # Lift the title above the caption: its usual pad plus the caption's height.
    pad = float(mpl.rcParams["axes.titlepad"]) + _GAP_PT + 1.2 * _FONTSIZE * n_lines
    title = ax.get_title()
    if title:
        ax.set_title(title, pad=pad)
    return caption


def find_caption(ax: Axes) -> Annotation | None:
    """The privacy caption of ``ax``, or None."""
    for t in ax.texts:
        if t.get_gid() == CAPTION_GID:
            return t  # type: ignore[return-value]
    return None


#: ``gid`` of the line saying a drawn component is not separated from the noise.
RESOLVABILITY_GID = "dppca-resolvability-note"


def add_resolvability_note(ax: Axes, result: Any, components: Any) -> Any:
    """Write, inside the bottom of ``ax``, which drawn ``components`` are not resolved.

    Reads the post-release check on the result's directions (``resolvability``
    of a DirectionsResult, of a LoadingResult's ``directions`` or of a
    ScoreResult's ``directions_release``; see :mod:`dppca.releases.resolvability`).
    The line is added with ``ax.add_artist`` (find it in ``ax.artists`` by
    ``gid`` :data:`RESOLVABILITY_GID`). Returns it, or None when every drawn
    component is resolved or the result carries no check.
    """
    holder = getattr(result, "directions_release", None) or getattr(result, "directions", None)
    check = getattr(result, "resolvability", None) or getattr(holder, "resolvability", None)
    note = None if check is None else check.note(tuple(int(c) for c in components))
    if note is None:
        return None
    from matplotlib.offsetbox import AnchoredText

    line = AnchoredText(
        note,
        loc="lower left",
        frameon=False,
        pad=0.2,
        borderpad=0.2,
        prop={"fontsize": _FONTSIZE, "color": "tab:red"},
    )
    line.set_gid(RESOLVABILITY_GID)
    return ax.add_artist(line)  # an artist of its own, apart from the data labels in ax.texts
