"""The words of a release's preview in the app: its notes and its price.

A preview is made from the release's data-free plan (n, p, the settings and
the public bounds); this module turns that plan, the warnings its planning
raised and the budget's headroom into the lines the page shows before the
release runs. Nothing here reads the data, and no Shiny.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..privacy.cost import PrivacyCost
from ..privacy.headroom import Headroom
from ..releases.engine import ReleasePlan
from ..releases.forecast import time_lines
from .data import Selection
from .plans import page_sentence

if TYPE_CHECKING:
    from ..releases.pca.plan import PCAPlan

__all__ = ["plan_details", "preview_notes", "price_message"]


def _fmt_cost(cost: PrivacyCost) -> str:
    return f"eps = {cost.eps:.4g}, delta = {cost.delta:.3g}"


def preview_notes(
    kind: str,
    params: Mapping[str, Any],
    selection: Selection,
    caught: Sequence[warnings.WarningMessage],
    plan: ReleasePlan,
) -> tuple[str, ...]:
    """The notes under a preview: planning warnings, a non-private label set, timing.

    Each warning raised while planning appears once, in order. All of it is
    data-free: the group labels' note depends only on the settings, the
    timing lines only on n, p and the settings.
    """
    notes = tuple(dict.fromkeys(str(w.message) for w in caught))
    # a fit's own remarks (for example why it leaves its score plot out)
    notes += tuple(page_sentence(note) for note in getattr(plan, "notes", ()))
    if (
        kind == "score"
        and params.get("use_groups", True)
        and selection.groups is not None
        and selection.group_labels is None
        and not selection.groups_public
    ):
        notes += (
            "the set of group labels found in the data is released as it is (not "
            "private); give the public list of labels in the data panel to avoid that.",
        )
    return notes + time_lines(plan)


def plan_details(plan: ReleasePlan) -> tuple[str, ...]:
    """A PCA fit's plan in the words of ``dppca pca --dry-run`` (the same lines).

    What the analysis estimates, its cost, what that cost means to an
    attacker, the cost of each part and the forecast; all data-free.
    """
    from ..cli.pca import pca_plan_lines

    return pca_plan_lines(cast("PCAPlan", plan))


def price_message(cost: PrivacyCost, room: Headroom, affordable: bool, has_releases: bool) -> str:
    """The preview's sentence on the price: what it costs and whether it fits.

    A release the budget cannot pay for is refused; the sentence says so and
    suggests lowering its eps/delta, or re-drawing an existing release (free)
    when there is one.
    """
    if affordable:
        return f"This release will cost {_fmt_cost(cost)}. Before it, {room.fits_text()}"
    return (
        f"This release would cost {_fmt_cost(cost)}, more than remains: it will be "
        f"refused ({room.fits_text()}) Lower its eps/delta"
        + (" or re-draw an existing release (free)." if has_releases else ".")
    )
