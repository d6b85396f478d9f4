"""What the app's page sends and shows, as plain functions: no Shiny.

The Shiny server (:mod:`dppca.app.server`) reads the page's inputs and calls
:class:`~dppca.app.state.AppState`; what lies between (the settings of a
release read from the page, the messages about a release or a refusal, the
options of a figure, the tables shown) is worked out here, from plain values,
so that it is tested without a browser. A page value is read through a
``value(name)`` callable: a Shiny reactive read in the server, a dictionary
lookup in the tests, so that every function reads only the inputs it needs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._kinds import load, release_kind
from ..core.exceptions import BudgetExceededError, TiedRowsError
from ..core.validation import MAX_BINS
from ..privacy.headroom import Headroom
from .data import DataError, Selection, parse_labels

if TYPE_CHECKING:
    from ..privacy.cost import PrivacyCost
    from .plans import Release
    from .state import AppState

__all__ = [
    "MAX_SAMPLE_SIZE",
    "MAX_UNCERTAINTY",
    "PCA_PARTS",
    "RELEASE_FAILURES",
    "directions_settings",
    "failure_message",
    "ledger_csv_frame",
    "load_message",
    "loading_options",
    "pca_settings",
    "positive_or_none",
    "readable_ledger",
    "refusal_message",
    "release_message",
    "release_settings",
    "required_number",
    "same_selection",
    "score_display",
    "score_settings",
    "scree_settings",
    "split_defaults",
    "split_weight",
    "summary_table",
    "table_notes",
]

Value = Callable[[str], Any]


#: Largest synthetic sample the score tab draws (8 bytes x 2 coordinates each).
MAX_SAMPLE_SIZE = 100_000


def _typed_number(value: Any, label: str) -> float | None:
    """What was typed in a number box, None when it is blank; text is refused by ``label``."""
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise DataError(f"{label} must be a number; got {value!r}.") from None


def positive_or_none(
    value: Any, *, label: str = "this count", most: int | None = None
) -> int | None:
    """A count typed into the page, None for 0 or blank (``0 = off`` fields).

    Raises
    ------
    DataError
        If the count is not a number or exceeds ``most`` (the message names ``label``).
    """
    number = _typed_number(value, label)
    if number is None:
        return None
    if math.isnan(number) or (most is None and math.isinf(number)):
        raise DataError(f"{label} must be a finite number; got {value!r}.")
    if number < 1:
        return None
    if most is not None and number > most:
        shown = f"{number:,.0f}" if number < 1e15 else f"{number:.3g}"
        raise DataError(f"{label} must be at most {most:,}; got {shown}.")
    return int(number)


def required_number(value: Any, label: str) -> Any:
    """A number the page must hold (eps, delta): a blank box gets a message, not a type error."""
    if value is None or value == "":
        raise DataError(f"{label} is required: type a number in its box.")
    return value


def release_settings(kind: str, value: Value) -> dict[str, Any]:
    """The keyword arguments of ``AppState.preview``/``release`` for ``kind``.

    Reads the eps, delta and calibration of the release and the settings of
    its tab only, so a preview is redrawn when they change and not otherwise.

    Raises
    ------
    DataError
        If the eps or delta box is empty.
    """
    tab = release_kind(kind).tab
    if tab is None:
        raise DataError(f"the app has no tab for {kind!r} releases.")
    return {
        "eps": required_number(value(f"{kind}_eps"), "eps"),
        "delta": required_number(value(f"{kind}_delta"), "delta"),
        "calibration": value(f"{kind}_calibration"),
        **load(tab.settings)(value),
    }


def directions_settings(value: Value) -> dict[str, Any]:
    """The directions tab's scales, pair design and estimator (see ``plan_request``)."""
    return {
        "scale": value("directions_scale") or None,
        "design": value("directions_design"),
        "estimator": value("directions_estimator"),
    }


def scree_settings(value: Value) -> dict[str, Any]:
    """The scree tab's scales, k, methods and their controls (see ``plan_request``)."""
    clip = value("scree_clip")
    return {
        "scale": value("scree_scale") or None,
        "k": value("scree_k"),
        "methods": tuple(value("scree_methods") or ()),
        "reuse_directions": value("scree_reuse"),
        "mono": value("scree_mono"),
        "clip": clip if clip else None,
        "pmwm_split": value("scree_pmwm_split"),
        "huber_m2_frac": value("scree_huber_m2"),
    }


def score_settings(value: Value) -> dict[str, Any]:
    """The score tab's scales, PCs, bins, methods and groups (see ``plan_request``)."""
    return {
        "scale": value("score_scale") or None,
        "components": (value("score_pc_x"), value("score_pc_y")),
        "bins": positive_or_none(value("score_bins"), label="bins per axis", most=MAX_BINS),
        "methods": tuple(value("score_methods") or ()),
        "use_groups": value("score_groups"),
        "reuse_directions": value("score_reuse"),
    }


#: The parts of a PCA fit whose weights the page sets (:class:`dppca.PCASplit`).
PCA_PARTS = ("directions", "scree", "frame", "score", "scales")


def split_weight(value: Any, part: str) -> float | None:
    """A weight of the PCA tab's budget split: None (the default) for 0 or blank.

    Raises
    ------
    DataError
        If the weight is not a finite number >= 0.
    """
    label = f"the weight of the {part} part"
    number = _typed_number(value, label)
    if number is None:
        return None
    if not math.isfinite(number) or number < 0:
        raise DataError(f"{label} must be a finite number >= 0 (0: the default); got {value!r}.")
    return number or None


def split_defaults(analysis: str) -> dict[str, float]:
    """The default weights of a fit's parts (:data:`dppca.releases.pca.split.DEFAULT_WEIGHTS`),
    shown in the PCA tab for ``"standardized"`` or ``"units"``; 0 marks a part the
    analysis does not use."""
    from ..releases.pca.split import DEFAULT_WEIGHTS

    weights = DEFAULT_WEIGHTS["units" if analysis == "units" else "standardized"]
    return {part: float(weights[part]) for part in PCA_PARTS}


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A table of a fit's summary for the page: numbers to four significant digits."""
    # Series.map: DataFrame.map needs pandas 2.1, and applymap is deprecated there
    return frame.apply(lambda col: col.map(lambda v: f"{v:.4g}" if isinstance(v, float) else v))


def pca_settings(value: Value) -> dict[str, Any]:
    """The PCA tab's analysis, PCs, score plot and budget split (see ``plan_request``)."""
    k = positive_or_none(value("pca_k"), label="the number of PCs k")
    return {
        "standardize": value("pca_standardize") != "units",
        "k": k,
        "components": (
            int(positive_or_none(value("pca_pc_x"), label="x: PC") or 1),
            int(positive_or_none(value("pca_pc_y"), label="y: PC") or 2),
        ),
        "score": value("pca_score") or "auto",
        "split": {part: split_weight(value(f"pca_w_{part}"), part) for part in PCA_PARTS},
    }


def same_selection(
    selection: Selection | None,
    columns: list[str],
    group: str | None,
    public: bool,
    labels: str | None,
    missing: str = "refuse",
) -> bool:
    """Whether the page's choice of columns and groups is the one in force.

    Updating a widget from the server sends its value back; that echo must
    not count as a new choice.
    """
    if selection is None:
        return False
    chosen = (tuple(columns), group, public and group is not None)
    if chosen != (selection.columns, selection.group_column, selection.groups_public):
        return False
    if missing != selection.missing:
        return False
    try:
        return parse_labels(labels) == selection.group_labels
    except DataError:
        return False


def table_notes(selection: Selection | None) -> str:
    """What the rule for messy tables did to the chosen columns, as sentences (or "")."""
    if selection is None or not selection.notes:
        return ""
    return " " + " ".join(note[:1].upper() + note[1:] for note in selection.notes)


def load_message(state: AppState, name: str) -> str:
    """What the page says about a table just loaded, and about its budget."""
    frame = state.frame
    assert frame is not None
    text = f"Loaded {name}: {frame.shape[0]} rows, {frame.shape[1]} columns. "
    releases = state.ledger_version()[0]
    if releases and state.budget is not None:
        room = state.budget.headroom()
        text += (
            f"The ledger already holds {releases} release(s) of these data "
            f"(eps = {room.spent_eps:.4g} spent at delta = {room.total_delta:.3g}, "
            f"{room.rule}); they count against its budget."
        )
        if state.releases:
            text += (
                f" {len(state.releases)} of them, stored with their values, are shown "
                "again in the tabs (re-drawn at no cost)."
            )
    else:
        text += "Its privacy budget is kept in the ledger, shared by every session."
    return text + table_notes(state.selection)


def refusal_message(cost: PrivacyCost, remaining: tuple[float, float] | Headroom) -> str:
    """Why a release the budget cannot afford is not run (and, given the budget's
    :class:`~dppca.privacy.headroom.Headroom`, what still fits)."""
    if isinstance(remaining, Headroom):
        return (
            f"Refused: this release would cost {cost}, more than remains: "
            f"{remaining.fits_text()} Nothing was computed or spent."
        )
    eps_left, delta_left = remaining
    return (
        f"Refused: this release would cost {cost}, but only "
        f"(eps={eps_left:.4g}, delta={delta_left:.3g}) remains. Nothing was "
        "computed or spent."
    )


# What ``failure_message`` explains on the page; anything else is a bug and is raised.
RELEASE_FAILURES: tuple[type[BaseException], ...] = (
    BudgetExceededError,
    DataError,
    TiedRowsError,
    TypeError,
    ValueError,
    MemoryError,
)


def failure_message(exc: BaseException) -> str:
    """The status line of a release that failed with ``exc`` (one of RELEASE_FAILURES)."""
    if isinstance(exc, BudgetExceededError):
        return f"Refused: {exc}"
    if isinstance(exc, MemoryError):
        return "Not released: not enough memory for these settings; nothing was spent."
    return f"Not released: {exc}"


def release_message(release: Release) -> tuple[str, str]:
    """The status line of a release just made, and its kind (success or warning)."""
    text = f"Release #{release.number} made; it cost eps = {release.cost.eps:.4g}, "
    text += f"delta = {release.cost.delta:.3g}."
    if release.warnings:
        text += " Notes: " + " ".join(release.warnings)
    ok = release.forecast is None or release.forecast.ok
    if not ok:
        text += " The forecast says this picture is likely wrong; see the note with the figure."
    return text, "success" if ok else "warning"


#: Most noise-sensitivity draws of a loading plot (each a p x p eigendecomposition).
MAX_UNCERTAINTY = 1000


def loading_options(p: int, value: Value) -> dict[str, Any]:
    """The options of :func:`dppca.app.figures.loading_figure` set on the page.

    Raises
    ------
    DataError
        If more than :data:`MAX_UNCERTAINTY` noise-sensitivity draws are asked for.
    """
    heat_k = max(1, min(int(value("loading_heat_k") or 4), p))
    return {
        "kind": value("loading_kind"),
        "components": (int(value("loading_pc_x") or 1), int(value("loading_pc_y") or 2)),
        "heatmap_components": list(range(1, heat_k + 1)),
        "uncertainty": positive_or_none(
            value("loading_uncertainty"), label="noise-sensitivity draws", most=MAX_UNCERTAINTY
        ),
        "top": positive_or_none(value("loading_top")),
        "color": value("loading_color"),
    }


def score_display(release: Release, kind: str, method: str) -> tuple[str, str]:
    """The score view and histogram method to draw, falling back to what was released."""
    if method not in release.result.methods:
        method = release.result.methods[0]
    if kind == "groups" and release.result.groups is None:
        kind = "histogram"
    return kind, method


def readable_ledger(frame: pd.DataFrame) -> pd.DataFrame:
    """A ledger table for the page: rounded costs, readable times."""
    if frame.empty:
        return pd.DataFrame({"ledger": ["nothing released yet"]})
    frame = frame.copy()
    for col in ("eps", "delta"):
        frame[col] = [f"{v:.4g}" for v in frame[col]]
    if "time" in frame:
        frame["time"] = [t.replace("T", " ").replace("+00:00", " UTC") for t in frame["time"]]
    return frame


def ledger_csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The ledger as downloaded: costs to six significant digits."""
    return frame.assign(
        eps=[float(f"{v:.6g}") for v in frame["eps"]],
        delta=[float(f"{v:.6g}") for v in frame["delta"]],
    )
